"""`session-viewer export`: one self-contained HTML file drawn by the page's own partials, Markdown
for an issue, the canonical events as JSON; ranges, snapshots of live sessions, redaction."""

import base64
import hashlib
import io
import json
import os
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.cli import main
from viewer.export import Export, ExportError, fence
from viewer.index import SessionIndex
from viewer.redact import Redactor

import planted
from conftest import ROOT, SESSIONS, quiet_copy

TOUR = SESSIONS / "legion-feature-tour" / "messages.jsonl"
CC = SESSIONS / "claude-project" / "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.jsonl"
HOSTILE = SESSIONS / "legion-hostile-content" / "messages.jsonl"


def all_sessions() -> list[Path]:
    """Every bundled session and every format fixture's main transcript."""
    from viewer.store import Store

    found = [Path(r.path) for r in Store([SESSIONS]).sessions()]
    found += [Path(r.path) for r in Store([ROOT / "test_data" / "formats"]).sessions()]
    return sorted(set(found))


def export(path, fmt="html", **kw) -> tuple[str, Export]:
    idx = SessionIndex(path).build()
    x = Export(idx, fmt, **kw)
    return "".join(x.chunks()), x


class Tags(HTMLParser):
    def __init__(self, html):
        super().__init__()
        self.tags, self.data = [], {"script": [], "style": []}
        self._in = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_data(self, data):
        if self._in:
            self.data[self._in].append(data)

    def handle_endtag(self, tag):
        self._in = None


def sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.mark.parametrize("path", all_sessions(), ids=lambda p: p.parent.name + "/" + p.name)
def test_html_has_every_event_as_an_anchor_and_loads_nothing(path):
    html, x = export(path)
    idx = x.idx
    ids = set(re.findall(r'<li class="ev [^"]*" id="m-([^"]+)"', html))
    wanted = {eid for th in idx.threads.values() for eid in th.ids}
    assert wanted <= {i.replace("&#34;", '"') for i in ids} or wanted <= ids
    t = Tags(html)
    csp = next(a["content"] for tag, a in t.tags if tag == "meta" and a.get("http-equiv")
               == "Content-Security-Policy")
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp
    # the one script and the one stylesheet are inline and allowed by their hashes
    assert [a for tag, a in t.tags if tag == "script"] == [{}]
    assert sha256("".join(t.data["script"])) in csp and sha256("".join(t.data["style"])) in csp
    assert not [a for tag, a in t.tags if tag == "link" and a.get("rel") != "icon"]
    urls = [a.get(k) for tag, a in t.tags for k in ("src", "href", "action") if a.get(k)]
    # nothing to fetch: anchors, data: URIs and links a reader may follow by hand
    assert not [u for u in urls if not u.startswith(("#", "data:", "http://", "https://", "mailto:"))]
    assert not [(tag, a) for tag, a in t.tags if tag in ("img", "audio", "video", "source")
                and not a.get("src", "").startswith("data:")]
    assert not [(tag, k) for tag, a in t.tags for k in a if k.startswith(("on", "hx-"))]
    assert x.events == sum(len(th) for th in idx.threads.values())
    assert "kind-broken" not in html  # every event drawn by the partial, none by the fallback


def test_html_draws_events_with_the_pages_partials(client):
    html, _ = export(TOUR)
    page = client.get("/s/legion-feature-tour").get_data(as_text=True)
    # the same card markup for a tool call with its state and duration
    card = re.search(r'<div class="tool [^"]*" id="tc-toolu_bash_1".*?<div class="call-thread"', page,
                     re.S)
    assert card and card.group(0) in html and 'class="state error"' in card.group(0)
    for piece in ('<span class="state error">error</span>', 'class="thinking"',
                  '<details class="thinking">', "Interrupted before it returned", "orphan result"):
        assert piece in html
    assert "copy link" not in html and "raw-slot" not in html  # what needs the server is left out


def test_a_sub_agent_is_nested_under_its_task_card():
    html, x = export(CC)
    sub = next(n for n in x.idx.threads if n != "main")
    first = x.idx.threads[sub].ids[0]
    card = re.search(r'class="tool [^"]*agent', html).start()
    nested = html.index('<ol class="timeline nested"', card)
    assert nested < html.index(f'id="m-{first}"') < html.index("</ol>", html.index(f'id="m-{first}"'))
    # …inside the event holding the Task call, before the event that follows it
    call = x.idx.calls.call(x.idx.threads[sub].meta["parent_call"])
    main_ids = x.idx.threads["main"].ids
    holder, after = main_ids[call.call[1]], main_ids[call.call[1] + 1]
    assert html.index(f'id="m-{holder}"') < card < html.index(f'id="m-{after}"')
    assert html.index(f'id="m-{first}"') < html.index(f'id="m-{after}"')


def test_hostile_content_stays_inert():
    html, _ = export(HOSTILE)
    t = Tags(html)
    assert [a for tag, a in t.tags if tag == "script"] == [{}]
    assert not [(tag, k) for tag, a in t.tags for k in a if k.startswith("on")]
    assert not [tag for tag, a in t.tags if tag in ("iframe", "form", "object", "embed", "base")]
    assert len([1 for tag, a in t.tags if tag == "style"]) == 1
    hrefs = [a.get("href", "") for tag, a in t.tags] + [a.get("src", "") for tag, a in t.tags]
    assert not [h for h in hrefs if h.lower().lstrip().startswith(("javascript:", "vbscript:"))]
    assert "alert('xss-script')" not in "".join(t.data["script"])


def test_images_are_inlined_up_to_the_limit(tmp_path):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + os.urandom(3000)).decode()
    rec = {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2025-10-21T18:59:50Z",
           "message": {"role": "user", "content": [
               {"type": "text", "text": "look"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    html, _ = export(path)
    assert f'src="data:image/png;base64,{png}"' in html
    html, _ = export(path, media_limit=1000)
    assert png not in html and "not included: larger than this export" in html


def test_short_code_is_highlighted_and_long_code_shown_whole_and_plain(tmp_path):
    def read(n, lines):
        return [{"type": "assistant", "uuid": f"a{n}", "sessionId": "s", "message": {
                    "role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "Read",
                                                      "input": {"file_path": f"/app/mod{n}.py"}}]}},
                {"type": "user", "uuid": f"r{n}", "sessionId": "s", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"t{n}",
                     "content": "".join(f"{i + 1:6d}\tdef f{i}(): return {i}\n" for i in range(lines))}]}}]

    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in read(1, 20) + read(2, 3000)))
    html, _ = export(path)
    short = html[html.index('id="m-a1"'):html.index('id="m-a2"')]  # a result shows in its call's card
    long = html[html.index('id="m-a2"'):]
    assert '<span class="k">def</span>' in short  # Pygments' keyword class
    assert '<span class="ln">3000</span>def f2999(): return 2999' in long  # every line, numbered
    assert '<span class="k">' not in long
    # the long result is folded behind its size, the short one shown as it is
    assert "result-fold" not in short
    assert re.search(r'<details class="result-fold"><summary>Output · 3,000 lines, [\d.]+ KB</summary>', long)


@settings(deadline=None)  # a shared machine can stall one example past hypothesis' 200 ms
@given(st.text(alphabet=st.sampled_from(list("ab <>&\"'\t\r\n\ufeff\x1bé")), max_size=60))
def test_plain_code_is_what_pygments_would_write(code):
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer

    from viewer.render import _plain

    assert _plain(code) == highlight(code, TextLexer(stripnl=False), HtmlFormatter(nowrap=True))


def test_strings_cut_out_of_huge_lines_are_exported_whole(tmp_path):
    text = "".join(f"{i:08d} a line of a long log\n" for i in range(250_000))  # 7.5 MB
    path = tmp_path / "big.jsonl"
    lines = [
        {"type": "user", "uuid": "u-1", "sessionId": "h", "message": {"role": "user", "content": "log:"}},
        {"type": "user", "uuid": "u-2", "sessionId": "h", "message": {"role": "user", "content": text}},
        {"type": "assistant", "uuid": "a-1", "sessionId": "h",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "A long log."}]}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for fmt in ("html", "md", "json"):
        out, _ = export(path, fmt)
        assert "00249999 a line of a long log" in out and "00000000 a line" in out


def test_markdown_has_turns_fenced_tools_and_quoted_thinking():
    md, _ = export(TOUR, "md")
    assert md.startswith("# Refactor \\`timeline.py\\`")
    assert re.search(r"^## Turn 1 · User · 2025-10-21 18:59:50 UTC$", md, re.M)
    assert re.search(r"^### Assistant · claude-sonnet-4-5-20250929", md, re.M)
    assert "> **Thinking**\n>\n> The user wants a refactor. First I need to **see**" in md
    assert "**Tool: Bash** · error · 2.7s" in md
    assert "```sh\n$ pytest -q tests/test_timeline.py\n```" in md
    assert "Error:\n\n```\nFAILED tests/test_timeline.py::test_window - AssertionError" in md
    assert "```diff\n" in md and "\n-" in md and "\n+" in md  # the Edit as a diff
    assert "**Tool: Grep** · interrupted" in md and "*No result: interrupted.*" in md
    assert "**Orphan result**" in md
    assert "**Unparsed line 17**" in md
    assert "Claude Code Launched" not in md  # hidden events are left out, and said so
    assert "2 hidden events (progress, snapshots…) left out" in md


def test_markdown_quotes_a_sub_agent_under_its_call():
    md, x = export(CC, "md")
    task = md.index("**Tool: Task**")
    sub = md.index("**Sub-agent:", task)
    assert re.search(r"^> #### ", md[sub:], re.M)


def test_a_markdown_heading_names_the_kind_as_the_page_does(tmp_path):
    """"### System (hook)", "### System (command output)": the kind spaced from the name, in words,
    and left out where it only repeats the role (it read "System(hook)", "System(system)")."""
    src = quiet_copy(ROOT / "test_data" / "sessions" / "claude-project", tmp_path / "cc")
    path = next(src.glob("*.jsonl"))
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    base = next(r for r in lines if r.get("type") == "user")
    extra = [{**base, "type": "system", "content": "plain notice", "uuid": "sys-1", "level": "info"},
             {**base, "type": "system", "subtype": "local_command", "uuid": "sys-2",
              "content": "<local-command-stdout>done</local-command-stdout>"}]
    for r in extra:
        r.pop("message", None)
    with open(path, "ab") as f:
        f.write(b"".join(orjson.dumps(r) + b"\n" for r in extra))
    md, _ = export(path, "md")
    heads = re.findall(r"^#+ (System|User)\b(.*?)(?: · |$)", md, re.M)
    assert ("System", "") in heads  # the plain notice: not "System (system)"
    assert ("System", " (command output)") in heads
    assert not re.search(r"^#+ \w+\(", md, re.M), "a kind glued to the name"


def test_fences_are_longer_than_any_backtick_run_inside():
    assert fence("a ``` b") == "````\na ``` b\n````\n"
    assert fence("plain", "sh") == "```sh\nplain\n```\n"


def test_json_is_the_twins_shape_with_every_event(client):
    text, x = export(TOUR, "json")
    data = json.loads(text)
    twin = client.get("/s/legion-feature-tour.json").get_json()
    assert set(twin) <= set(data) and {"exported", "redactions"} <= set(data)
    assert [e["id"] for e in data["events"]] == x.idx.threads["main"].ids
    by_id = {e["id"]: e for e in data["events"]}
    for ev in twin["events"]:
        assert by_id[ev["id"]] == ev
    assert data["tool_calls"] == twin["tool_calls"]
    assert data["redactions"] is None and data["path"] == "messages.jsonl"


def test_a_range_holds_the_messages_from_one_to_another():
    html, x = export(TOUR, first="tour-read", last="tour-bash-result")
    ids = x.idx.threads["main"].ids
    inside = ids[ids.index("tour-read"): ids.index("tour-bash-result") + 1]
    got = re.findall(r'<li class="ev [^"]*" id="m-([^"]+)"', html)
    assert got == inside
    assert 'Messages <a href="#m-tour-read">tour-read</a> to' in html
    data = json.loads(export(TOUR, "json", first="tour-bash")[0])
    assert data["events"][0]["id"] == "tour-bash" and data["events"][-1]["id"] == ids[-1]
    with pytest.raises(ExportError, match="no message “nope”"):
        export(TOUR, first="nope")
    with pytest.raises(ExportError, match="comes before"):
        export(TOUR, first="tour-bash", last="tour-read")


def test_an_export_of_a_live_session_is_a_snapshot(tmp_path):
    """A line being written at the end is left out, not half included; results that arrive while
    the export runs are not part of it."""
    folder = quiet_copy(SESSIONS / "legion-feature-tour", tmp_path / "live")
    path = folder / "messages.jsonl"
    call = {"type": "assistant", "content": "one more", "timestamp": 1761073300.0, "session_id": "s",
            "message_id": "late-call", "metadata": {"tool_uses": [
                {"id": "late-t", "name": "Bash", "input": {"command": "sleep 1"}}]}}
    with open(path, "a") as f:
        f.write(json.dumps(call) + "\n")
        f.write('{"type": "user", "content": "Tool results: 1 res')  # the writer is mid-line
    idx = SessionIndex(path).build()
    x = Export(idx, "html")
    chunks = x.chunks()
    head = next(chunks)
    # the line is finished and the result arrives while the export is being written
    result = {"type": "user", "content": "Tool results: 1 results", "timestamp": 1761073301.0,
              "session_id": "s", "message_id": "late-result", "metadata": {"tool_results": [
                  {"tool_use_id": "late-t", "content": "slept", "is_error": None}]}}
    with open(path, "a") as f:
        f.write('ults", "timestamp": 1761073300.5, "session_id": "s", "message_id": "late-mid"}\n')
        f.write(json.dumps(result) + "\n")
    idx.refresh()  # a server's live stream would do this meanwhile
    html = head + "".join(chunks)
    assert 'id="m-late-call"' in html
    assert "late-mid" not in html and "late-result" not in html and "Tool results: 1 res" not in html
    assert "unparsed" not in html.split('id="m-late-call"')[1]
    card = html[html.index('id="tc-late-t"'):]
    assert '<span class="state pending">pending</span>' in card[:2000] and "slept" not in html
    assert x.events == 20


def test_redacted_exports_hold_no_secret_and_count_them(tmp_path):
    path = planted.write_session(tmp_path / "planted")
    for fmt in ("html", "md", "json"):
        out, x = export(path, fmt, redactor=Redactor())
        for kind, secret in planted.secrets().items():
            assert secret not in out, (fmt, kind)
        assert planted.RAW_ONLY not in out
        for keep in (planted.SHA, planted.SHORT_SHA, planted.UUID):
            assert keep in out, (fmt, keep)
        rows = {k: (n, p) for k, n, p in x.tally.rows()}
        assert set(rows) == set(planted.secrets()), fmt
        assert rows["aws-access-key"] == (1, 2)  # one key, in two places, one number
        assert out.count("[redacted: aws-access-key #1]") >= 2
    data = json.loads(out)
    assert {r["kind"] for r in data["redactions"]} == set(planted.secrets())
    assert data["summary"]["title"].startswith("Deploy with key [redacted: aws-access-key #1]")


def test_redaction_table_ends_the_html(tmp_path):
    path = planted.write_session(tmp_path / "planted")
    html, _ = export(path, redactor=Redactor())
    table = html[html.index('id="redactions"'):]
    assert "<td>aws-access-key</td><td class=\"num\">1</td><td class=\"num\">2</td>" in table
    assert html.index('id="redactions"') > html.rindex('class="ev ')


# --- the command line ------------------------------------------------------------------------------


def run(*args, cwd=None):
    return CliRunner().invoke(main, ["export", *map(str, args)], catch_exceptions=False)


def test_cli_writes_a_file_named_after_the_session(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run(SESSIONS / "legion-feature-tour")
    assert r.exit_code == 0, r.output
    out = tmp_path / "legion-feature-tour.html"
    assert out.read_text().startswith("<!doctype html>")
    assert "wrote legion-feature-tour.html" in r.stderr and "19 events" in r.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def test_cli_format_from_the_extension_and_stdout(tmp_path):
    r = run(TOUR, "-o", tmp_path / "t.md")
    assert r.exit_code == 0 and (tmp_path / "t.md").read_text().startswith("# Refactor")
    r = run(TOUR, "-o", "-", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["events"]


def test_cli_redacts_and_reports_kinds_never_values(tmp_path):
    path = planted.write_session(tmp_path / "planted")
    r = run(path, "--redact", "-o", tmp_path / "out.html")
    assert r.exit_code == 0
    assert "redacted: 1 aws-access-key (2 places)" in r.stderr
    for secret in planted.secrets().values():
        assert secret not in r.output and secret not in (tmp_path / "out.html").read_text()


def test_cli_errors_are_one_plain_line(tmp_path):
    r = run(TOUR, "--from", "nope", "-o", tmp_path / "x.html")
    assert r.exit_code == 1 and "cannot export: no message “nope”" in r.stderr
    assert not (tmp_path / "x.html").exists()
    r = run(tmp_path / "missing")
    assert r.exit_code != 0 and "no such file" in r.stderr
    r = run(TOUR, "-o", tmp_path / "no-such-folder" / "x.html")  # nowhere to write: no traceback
    assert r.exit_code == 1 and r.stderr.startswith("session-viewer: cannot write ")
    assert "No such file or directory" in r.stderr and "Traceback" not in r.output


def test_check_redact_report_lists_places_not_values(tmp_path):
    path = planted.write_session(tmp_path / "planted")
    r = CliRunner().invoke(main, ["check", str(path), "--redact-report"])
    assert r.exit_code == 0
    assert "redact      16 secrets in 17 places" in r.output
    assert "line 1 (p-1, text b0): [redacted: aws-access-key #1]  AKIA… (20 chars)" in r.output
    assert "line 3 (r-1, raw): [redacted: github-token #2]" in r.output
    for secret in planted.secrets().values():
        assert secret not in r.output.replace(planted.secrets()["aws-access-key"][:4] + "…", "")
    data = json.loads(CliRunner().invoke(main, ["check", str(path), "--json",
                                                "--redact-report"]).output)
    assert {f["kind"] for f in data["redactions"]} == set(planted.secrets())


def test_the_exports_environment_draws_what_a_stock_jinja_environment_draws(monkeypatch):
    """The export's environment keeps its globals in a plain dict (speed); every bundled session
    must come out byte for byte as Jinja's own environment, with its ChainMap, draws it."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    from viewer import export as exporting
    from viewer.templating import configure, resource_dir

    def stock(media_limit):
        env = Environment(loader=FileSystemLoader(str(resource_dir("templates"))),
                          autoescape=select_autoescape(["html", "xml"], default=True),
                          auto_reload=False)
        return configure(env, exporting.Urls, caps=(exporting._NO_CAP, exporting._NO_CAP),
                         media_limit=media_limit, exporting=True,
                         highlight_cap=exporting.HIGHLIGHT_LIMIT)

    for path in all_sessions():
        fast, _ = export(path, now=0)
        with monkeypatch.context() as m:
            m.setattr(exporting, "_environment", stock)
            slow, _ = export(path, now=0)
        assert fast == slow, path
        assert type(exporting._environment(exporting.MEDIA_LIMIT)) is not Environment


def test_windows_drawn_by_forked_workers_make_the_same_file(monkeypatch):
    """The command line draws a long session's windows in forked processes: with windows of three
    events and no minimum length, every bundled session comes out byte for byte as one process
    draws it, sub-agents nested under their calls and the event count the same; a redacting export
    stays in one process (its markers are numbered in reading order)."""
    from viewer import export as exporting

    monkeypatch.setattr(exporting, "WINDOW", 3)
    monkeypatch.setattr(exporting, "PARALLEL_FROM", 0)
    drawn = 0
    for path in all_sessions():
        one, x1 = export(path, now=0)
        two, x2 = export(path, now=0, workers=2)
        assert one == two, path
        assert x1.events == x2.events and not x1.parallel
        drawn += x2.parallel
        # written to a file, the workers' bytes go out as they were sent: the same file
        written = io.BytesIO()
        Export(SessionIndex(path).build(), now=0, workers=2).write(written)
        assert written.getvalue() == one.encode("utf-8", "surrogatepass"), path
    assert drawn == len(all_sessions())
    _, x = export(TOUR, now=0, workers=2, redactor=Redactor())
    assert not x.parallel


def test_the_export_command_draws_in_several_processes(tmp_path, monkeypatch):
    from viewer import export as exporting

    monkeypatch.setattr(exporting, "WINDOW", 3)
    monkeypatch.setattr(exporting, "PARALLEL_FROM", 0)
    forks = []
    real = exporting.multiprocessing.get_context
    monkeypatch.setattr(exporting.multiprocessing, "get_context",
                        lambda how: forks.append(how) or real(how))
    one, two = tmp_path / "one.html", tmp_path / "two.html"
    for out, jobs in ((one, "1"), (two, "2")):
        got = CliRunner().invoke(main, ["export", str(TOUR), "-o", str(out), "-j", jobs])
        assert got.exit_code == 0, got.output
    assert forks == ["fork"]  # -j 1 drew in this process, -j 2 in forked ones
    stamp = re.compile(r'<span class="muted export-stamp">.*?</span>', re.S)
    assert stamp.sub("", one.read_text()) == stamp.sub("", two.read_text())


def _gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie waiting for whoever reaps it has ended too)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return True


def _wait_gone(pids, seconds=30.0) -> bool:
    end = time.monotonic() + seconds
    while not all(_gone(p) for p in pids):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_a_long_sessions_drawing_processes_start_before_it_is_read(tmp_path, monkeypatch):
    """The command line forks a long session's drawing processes before it reads the file (they
    compile the templates meanwhile) and hands them the export once it is read: every bundled
    session comes out byte for byte as one process draws it, sub-agents nested under their calls,
    and the processes end with the export. A session whose reading state cannot be sent to them
    is drawn by processes forked from the exporting one, the same; and where the drawing stays
    in one process (a redacting export) they end unused."""
    from viewer import export as exporting

    monkeypatch.setattr(exporting, "WINDOW", 3)
    monkeypatch.setattr(exporting, "PARALLEL_FROM", 0)
    monkeypatch.setattr(exporting, "PREFORK_FROM", 0)
    started, handed = [], []
    real_start, real_drawers = exporting.Prefork.start, exporting.Prefork.drawers

    def start(n, media_limit):
        pf = real_start(n, media_limit)
        started.append(pf)
        return pf

    def drawers(self, x, starts):
        got = real_drawers(self, x, starts)
        handed.append(got is not None)
        return got

    monkeypatch.setattr(exporting.Prefork, "start", staticmethod(start))
    monkeypatch.setattr(exporting.Prefork, "drawers", drawers)
    stamp = re.compile(r'<span class="muted export-stamp">.*?</span>', re.S)
    sessions = all_sessions()
    for path in sessions:
        one, two = tmp_path / "one.html", tmp_path / "two.html"
        for out, jobs in ((one, "1"), (two, "2")):
            got = CliRunner().invoke(main, ["export", str(path), "-o", str(out), "-j", jobs])
            assert got.exit_code == 0, got.output
        assert stamp.sub("", one.read_bytes().decode()) == stamp.sub("", two.read_bytes().decode()), path
        pf = started[-1]
        assert _wait_gone([pf.first, *pf.pids]), path
    assert len(started) == len(handed) == len(sessions)  # -j 1 forks none
    assert sum(handed) >= len(sessions) - 15  # (a few formats' reading state holds a lock)
    got = CliRunner().invoke(main, ["export", str(TOUR), "-o", str(tmp_path / "r.html"), "-j", "2",
                                    "--redact"])
    assert got.exit_code == 0, got.output
    assert len(started) == len(sessions)  # a redacting export forks none


def test_drawing_processes_forked_before_a_short_session_is_read_end_unused(tmp_path, monkeypatch):
    """A session that turns out to be short (fewer events than are worth several processes) is
    drawn in the exporting process; the processes forked for it before it was read end."""
    from viewer import export as exporting

    monkeypatch.setattr(exporting, "PREFORK_FROM", 0)
    started = []
    real_start = exporting.Prefork.start
    monkeypatch.setattr(exporting.Prefork, "start",
                        staticmethod(lambda n, ml: started.append(real_start(n, ml)) or started[-1]))
    got = CliRunner().invoke(main, ["export", str(TOUR), "-o", str(tmp_path / "t.html"), "-j", "2"])
    assert got.exit_code == 0, got.output
    assert started and started[0].first is not None and started[0].drawing is None
    assert _wait_gone([started[0].first])
    # processes that are ready draw a session from fewer events than are worth forking for
    monkeypatch.setattr(exporting, "PARALLEL_READY_FROM", 10)  # (the tour has 19)
    got = CliRunner().invoke(main, ["export", str(TOUR), "-o", str(tmp_path / "u.html"), "-j", "2"])
    assert got.exit_code == 0, got.output
    assert len(started) == 2 and started[1].drawing is not None and started[1].drawing.finished
    assert _wait_gone([started[1].first, *started[1].pids])
    stamp = re.compile(r'<span class="muted export-stamp">.*?</span>', re.S)
    assert stamp.sub("", (tmp_path / "t.html").read_text()) == \
        stamp.sub("", (tmp_path / "u.html").read_text())


def test_an_export_stopped_midway_leaves_no_drawing_processes(monkeypatch):
    """The forked processes drawing an export start with it and end with it: a write that stops
    partway (a full disk, a download cancelled) leaves none of them running."""
    import multiprocessing

    from viewer import export as exporting

    monkeypatch.setattr(exporting, "WINDOW", 3)
    monkeypatch.setattr(exporting, "PARALLEL_FROM", 0)
    drawn = Export._html_window

    def slow(self, a, tl, env):  # every window after the first takes long: still being drawn
        if a > 0:
            time.sleep(120)
        return drawn(self, a, tl, env)

    monkeypatch.setattr(Export, "_html_window", slow)
    before = set(multiprocessing.active_children())
    x = Export(SessionIndex(TOUR).build(), now=0, workers=2)
    pieces = x.chunks()
    assert next(pieces).startswith("<!doctype html>")
    assert '<li class="ev ' in next(pieces)
    assert x.parallel and len(set(multiprocessing.active_children()) - before) == 2
    pieces.close()
    assert not set(multiprocessing.active_children()) - before


def test_an_event_that_cannot_be_drawn_leaves_the_rest_of_its_window(monkeypatch):
    """A window's cards are drawn in one go; when one of them cannot be drawn, the window
    is drawn again event by event: that one says it could not be displayed (its anchor kept), the
    others are drawn as always."""
    from viewer import export as exporting
    from viewer import templating

    whole, _ = export(TOUR, now=0)
    env = templating.environment(exporting.Urls, caps=(exporting._NO_CAP, exporting._NO_CAP),
                                 media_limit=exporting.MEDIA_LIMIT, exporting=True,
                                 highlight_cap=exporting.HIGHLIGHT_LIMIT)

    drawn_class = templating.role_class

    def role_class(role):
        if role == "user":
            raise ValueError("a shape the template cannot draw")
        return drawn_class(role)

    monkeypatch.setattr(templating, "role_class", role_class)  # (what a card's head is drawn with)
    monkeypatch.setattr(exporting, "_environment", lambda media_limit: env)
    broken, _ = export(TOUR, now=0)
    users = whole.count('<li class="ev role-user ')
    assert users and broken.count("could not be displayed") == users
    assert '<li class="ev role-user ' not in broken
    assert broken.count('<li class="ev role-assistant ') == whole.count('<li class="ev role-assistant ')
    assert set(re.findall(r'id="(m-[^"]+)"', broken)) == set(re.findall(r'id="(m-[^"]+)"', whole))


def test_markdown_names_the_files_a_prompt_sent_by_name_or_id(tmp_path):
    # files sent without their bytes: OpenAI chat `file` parts `{file_id, filename}` (openai-python
    # types/chat/chat_completion_content_part_param.py), an Anthropic document from the Files API
    # (`source: {type: file, file_id}`, anthropic-sdk-python types/beta/beta_file_document_source_param.py)
    path = tmp_path / "files.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "Compare these."},
            {"type": "document", "source": {"type": "file", "file_id": "file_011Spec"}},
            {"type": "document", "source": {"type": "file", "file_id": "file_022"}, "title": "Q3 report"}]},
        {"role": "assistant", "content": "They agree."}], "system": "Be brief."}), encoding="utf-8")
    md, _ = export(path, "md")
    assert "*[document “file\\_011Spec”: unknown type, 0 B]*" in md
    assert "*[document “Q3 report”: unknown type, 0 B]*" in md
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": [
        {"type": "text", "text": "Summarise"},
        {"type": "file", "file": {"file_id": "file-abc", "filename": "notes_[draft].pdf"}}]}) + "\n",
        encoding="utf-8")
    md, _ = export(chat, "md")
    assert "*[document “notes\\_\\[draft\\].pdf”: unknown type, 0 B]*" in md  # escaped: untrusted


def test_a_result_written_again_with_a_small_change_is_exported_as_what_changed(tmp_path):
    """The Markdown and HTML exports show a rerun's output that changed in a line as its diff
    against the first (the whole output after it), as the page does; a result changed throughout
    is exported whole."""
    import json as _json

    from viewer.export import Export as _Export
    from viewer.index import SessionIndex as _Index

    first = "\n".join([f"tests/test_{n}.py PASSED" for n in ("a", "b", "c", "d")]
                      + ["tests/test_e.py FAILED", "1 failed, 4 passed"])
    rerun = first.replace("test_e.py FAILED", "test_e.py PASSED").replace("1 failed, 4 passed", "5 passed")
    path = tmp_path / "chat.json"
    path.write_text(_json.dumps([
        {"role": "user", "content": "Run the tests."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "shell", "arguments": _json.dumps({"command": "pytest"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": first},
        {"role": "tool", "tool_call_id": "c1", "content": rerun}]))
    idx = _Index(path).build()
    md = "".join(_Export(idx, "md").chunks())
    assert "what changed from the first" in md
    assert "```diff\n tests/test_b.py PASSED\n" in md
    assert "-tests/test_e.py FAILED\n-1 failed, 4 passed\n+tests/test_e.py PASSED\n+5 passed\n```" in md
    assert md.count("tests/test_a.py PASSED") == 2  # the call's and the whole output (not in the diff)
    html = "".join(_Export(idx, "html").chunks())
    assert 'class="tool again near"' in html and "what changed from the first" in html
    assert '<details class="again-whole">' in html and 'class="diff-file"' not in html  # (no file to name)
