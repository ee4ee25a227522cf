"""Reading a session: what a reader sees of each kind of content, checked on the rendered pages
and on the corpus's real transcripts (issue 10, "Reading")."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from viewer import render

from conftest import CORPUS


class _Nesting(HTMLParser):
    """Records, for every element, the tags it sits inside."""

    VOID = {"br", "hr", "img", "input", "meta", "link"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.seen: list[tuple[str, tuple[str, ...]]] = []

    def handle_starttag(self, tag, attrs):
        self.seen.append((tag, tuple(self.stack)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()


def nesting(html: str) -> list[tuple[str, tuple[str, ...]]]:
    p = _Nesting()
    p.feed(html)
    p.close()
    assert p.stack == [], "every element is closed"
    return p.seen


# --- 3. fenced code in Markdown: one box -----------------------------------------------------------


def test_fenced_code_is_one_box_with_valid_nesting_and_no_empty_last_line():
    for source in ("Run:\n\n```python\nx = 1\ny = 2\n```\n", "```\nplain text\n```\n",
                   "```nosuchlanguage\na < b\n```"):
        html = str(render.markdown(source))
        tags = nesting(html)
        assert [t for t, _ in tags].count("pre") == 1, html
        for tag, inside in tags:
            assert tag != "div" or "pre" not in inside, f"a block inside <pre>: {html}"
            assert tag != "pre" or "pre" not in inside and "code" not in inside, html
        body = re.search(r"<pre[^>]*><code[^>]*>(.*)</code></pre>", html, re.S).group(1)
        assert not body.endswith("\n"), "the block ends with its last line, not an empty one"
    assert "a &lt; b" in str(render.markdown("```nosuchlanguage\na < b\n```"))


def test_highlighted_file_content_is_one_box_too():
    html = str(render.highlight("def f():\n    return 1\n", filename="x.py"))
    tags = [t for t, _ in nesting(html)]
    assert tags.count("pre") == 1 and "div" not in tags
    assert html.startswith('<pre class="hl"') and not html.endswith("\n</code></pre>")


# --- helpers: a session written for a test, served through the app -------------------------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from viewer import tools  # noqa: E402
from viewer.index import SessionIndex  # noqa: E402
from viewer.timeline import load_events  # noqa: E402
from viewer.web import create_app  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import SESSIONS, quiet_copy  # noqa: E402

SID = "5e55e55e-0000-4000-8000-000000000000"


def cc_line(n: int, kind: str, content, **extra) -> dict:
    """One Claude Code transcript line."""
    rec = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/w",
           "sessionId": SID, "version": "2.0.50", "type": kind, "uuid": f"u-{n}",
           "timestamp": f"2025-11-17T10:00:{n:02d}.000Z",
           "message": {"role": kind, "content": content}, **extra}
    if kind == "assistant":
        rec["message"].update(id=f"msg-{n}", model="claude-sonnet-4-5")
    return rec


def write_session(folder: Path, records: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "messages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def page(tmp_path, root: Path, url: str) -> str:
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    r = app.test_client().get(url)
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    return r.get_data(as_text=True)


def call_and_result(name: str, inp: dict, result, n: int = 1, **extra) -> list:
    cid = f"toolu_{name}_{n}"
    return [cc_line(n, "assistant", [{"type": "tool_use", "id": cid, "name": name, "input": inp}]),
            cc_line(n + 1, "user", [{"type": "tool_result", "tool_use_id": cid,
                                     "content": result, **extra}])]


def card(html: str, call_id: str) -> str:
    """The HTML of one tool card."""
    start = html.index(f'id="tc-{call_id}"')
    end = html.find('<div class="call-thread"', start)
    return html[start:end]


# --- 2. prose results as Markdown, output as written ----------------------------------------------


def test_a_subagent_report_is_markdown_and_command_output_is_not(tmp_path):
    report = "## Report\n\n- found **two** callers\n- see [the docs](https://example.org/d)\n"
    shell = "# not a heading\n- not a list\n**not bold**"
    root = tmp_path / "root"
    write_session(root / "s", [
        cc_line(1, "user", "Look around."),
        *call_and_result("Task", {"description": "Look", "subagent_type": "Explore", "prompt": "go"},
                         [{"type": "text", "text": report}], n=2),
        *call_and_result("Bash", {"command": "cat notes.md"}, shell, n=4),
        *call_and_result("WebFetch", {"url": "https://example.org", "prompt": "sum up"},
                         "The page says:\n\n1. one\n2. two", n=6),
        *call_and_result("mcp__db__query", {"sql": "select 1"}, '{"rows": [[1]], "ok": true}', n=8),
    ])
    html = page(tmp_path, root, "/s/s")
    task = card(html, "toolu_Task_2")
    assert "<h2>Report</h2>" in task and "<strong>two</strong>" in task
    assert '<a href="https://example.org/d"' in task
    bash = card(html, "toolu_Bash_4")
    assert "<pre># not a heading\n- not a list\n**not bold**</pre>" in bash and "<h1>" not in bash
    fetch = card(html, "toolu_WebFetch_6")
    assert "<ol>" in fetch and "<li>one</li>" in fetch
    query = card(html, "toolu_mcp__db__query_8")
    assert '<span class="nt">"rows"</span>' in query  # JSON, highlighted


@pytest.mark.parametrize("name, text, kind", [
    ("Task", "## Done\n\nAll good.", "prose"),
    ("Agent", "plain words", "prose"),
    ("WebSearch", "Results:\n- [a](https://a.example)", "prose"),
    ("ExitPlanMode", "User has approved your plan.", "prose"),
    ("Task", '{"status": "ok"}', "json"),
    ("Bash", "## not a heading", "output"),
    ("Grep", "- a.py:1: **x**\n- [y](z)", "output"),
    ("Bash", "\x1b[31m# red\x1b[0m", "output"),
    ("WebFetch", "\x1b[1mbold\x1b[0m", "output"),
    ("some_mcp_tool", "# Title\n\nbody", "prose"),
    ("some_mcp_tool", "- one\n- two and **bold**", "prose"),
    ("some_mcp_tool", "- one\n- two", "output"),
    ("some_mcp_tool", "[1, 2, 3]", "json"),
    ("some_mcp_tool", "Message sent", "output"),
])
def test_result_view_decides_by_tool_then_by_content(name, text, kind):
    assert tools.result_view(name, {}, text).kind == kind


def test_a_failed_call_s_message_reads_as_written():
    text = "{'error': 'HTTP 404 Not Found for https://peps.python.org/x'}"
    assert tools.result_view("fetch_page", {"url": "https://x"}, text).kind == "prose"
    assert tools.result_view("fetch_page", {"url": "https://x"}, text, error=True).kind == "output"


# --- 8. tool summaries under every format's field names -------------------------------------------

_FIXTURES = Path(__file__).resolve().parent.parent / "test_data" / "formats"


def _transcripts() -> list[Path]:
    found = []
    for base in (CORPUS, _FIXTURES, SESSIONS):
        for p in sorted(base.rglob("*")):
            if p.suffix in (".json", ".jsonl") and not p.name.endswith(".meta.json") \
                    and not p.name.startswith("agent-") and p.name != "state.json":
                found.append(p)
    return found


def _calls(path: Path):
    try:
        idx = SessionIndex(path).build()
    except OSError:
        return
    for name, th in idx.threads.items():
        for ev in load_events(idx, name, 0, len(th)):
            for b in ev.blocks:
                if b.kind == "tool_use" and isinstance(b.input, dict):
                    yield b


def test_every_tool_summary_names_its_file_or_command():
    """Over every call in the corpus and the format fixtures: a call that works on a file shows the
    file, a shell call its command; never the first line of a file's content."""
    checked = 0
    for path in _transcripts():
        for b in _calls(path):
            s = tools.summary(b.name, b.input)
            fam = tools.family(b.name)
            file = tools.path_of(b.input)
            content = tools.content_of(b.input)
            if fam in ("read", "write", "edit") and file:
                assert s.startswith(file.strip().split("\n")[0][:100]), (path.name, b.name, b.input, s)
                checked += 1
            elif fam == "shell" and tools.command_of(b.input):
                assert s == tools._line(tools.command_of(b.input)), (path.name, b.name, s)
                checked += 1
            if file and content and content.strip() and content.strip().split("\n")[0] not in file:
                assert s != tools._line(content), (path.name, b.name, "summary is the content", s)
    assert checked > 300


def test_cline_file_tools_show_the_path(tmp_path):
    folder = quiet_copy(CORPUS / "anthropic-messages" / "cline-unity-card-game-task-1769053680585",
                        tmp_path / "root" / "cline")
    html = page(tmp_path, tmp_path / "root", "/s/cline~api_conversation_history?from=0")
    summaries = re.findall(r'<span class="tool-name">(write_to_file|replace_in_file|read_file)'
                           r'</span>\s*<span class="tool-summary">([^<]*)</span>', html)
    assert summaries, "the first window holds Cline file calls"
    for name, s in summaries:
        assert re.fullmatch(r"[\w./ -]+\.\w+", s), (name, s)
    assert folder.is_dir()


@pytest.mark.parametrize("name, inp, expected", [
    ("write_to_file", {"absolutePath": "/w/a.cs", "content": "using System;\n"}, "/w/a.cs"),
    ("replace_in_file", {"absolutePath": "/w/a.cs", "diff": "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE"},
     "/w/a.cs"),
    ("write", {"path": "hello.py", "contents": "def hello():\n"}, "hello.py"),
    ("edit", {"filePath": "/w/x.ts", "oldString": "a", "newString": "b"}, "/w/x.ts"),
    ("read_file", {"absolute_path": "/w/r.md"}, "/w/r.md"),
    ("NotebookEdit", {"notebook_path": "/w/n.ipynb", "new_source": "print(1)"}, "/w/n.ipynb"),
    ("create_file", {"file": "c.txt", "content": "body"}, "c.txt"),
    ("Read", {"file_path": "/w/a.py", "offset": 40, "limit": 10}, "/w/a.py  lines 40–49"),
    ("shell", {"command": ["bash", "-lc", "ls -la"]}, "bash -lc ls -la"),
    ("Grep", {"pattern": "TODO", "path": "/w/src"}, "TODO  in /w/src"),
    ("Task", {"description": "Find callers", "subagent_type": "Explore", "prompt": "…"},
     "Explore · Find callers"),
])
def test_summary_field_names(name, inp, expected):
    assert tools.summary(name, inp) == expected


def test_cline_replace_in_file_is_a_diff(tmp_path):
    diff = "------- SEARCH\nint a = 1;\n=======\nint a = 2;\n+++++++ REPLACE\n"
    parts = tools.edits({"absolutePath": "/w/a.cs", "diff": diff})
    assert [(p.old, p.new) for p in parts] == [("int a = 1;\n", "int a = 2;\n")]
    assert tools.view_of("replace_in_file", {"absolutePath": "/w/a.cs", "diff": diff}) == "edit"


def numbers(html: str) -> list[tuple[str, str]]:
    """A diff table's line numbers (old, new) as the page shows them."""
    return re.findall(r'<td class="no">(\d*)</td><td class="no">(\d*)</td>', html)


def test_an_edit_diff_is_numbered_by_the_file_lines_its_result_names(tmp_path):
    # Claude Code's Edit result carries the hunk it made (`structuredPatch`): the old_string
    # starts mid-line at file line 41, and the new text adds a line before line 42 stays
    inp = {"file_path": "/w/calc.py", "old_string": "divide(a, b):\n    return a / b",
           "new_string": "divide(a, b):\n    if b == 0:\n        return None\n    return a / b"}
    patch = [{"oldStart": 38, "oldLines": 6, "newStart": 38, "newLines": 8, "lines": [
        " # 38", " # 39", " ", " def divide(a, b):", "+    if b == 0:", "+        return None",
        "     return a / b", " "]}]
    root = tmp_path / "root"
    result = call_and_result("Edit", inp, "The file /w/calc.py has been updated.", n=2)
    result[1]["toolUseResult"] = {"filePath": "/w/calc.py", "oldString": inp["old_string"],
                                  "newString": inp["new_string"], "structuredPatch": patch}
    write_session(root / "s", [cc_line(1, "user", "Guard it."), *result,
                               *call_and_result("Edit", {**inp, "file_path": "/w/b.py"}, "ok", n=4)])
    html = page(tmp_path, root, "/s/s")
    assert numbers(card(html, "toolu_Edit_2")) == [("41", "41"), ("", "42"), ("", "43"), ("42", "44")]
    # without its result's hunks, an edit's lines count from its own first line
    assert numbers(card(html, "toolu_Edit_4")) == [("1", "1"), ("", "2"), ("", "3"), ("2", "4")]


def test_a_unified_diff_is_numbered_from_its_hunk_headers():
    patch = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n"
             "@@ -10,3 +12,4 @@ def divide(a, b):\n a\n-b\n+c\n+d\n e\n"
             "@@ -0,0 +1 @@\n+new\n")
    first, second = tools.unified_edits(patch)
    lines = render.diff(first.old, first.new, first.old_start, first.new_start)
    assert [(d.op, d.old_no, d.new_no) for d in lines] == [
        (" ", 10, 12), ("-", 11, None), ("+", None, 13), ("+", None, 14), (" ", 12, 15)]
    assert (second.old_start, second.new_start) == (1, 1)


# --- 11. Read results: numbered, highlighted code -------------------------------------------------


def test_a_read_result_is_numbered_highlighted_code(tmp_path):
    lines = "    40→def window(events):\n    41→    return events[:40]\n    42→"
    reminder = "<system-reminder>\nWhenever you read a file, check it.\n</system-reminder>\n"
    root = tmp_path / "root"
    write_session(root / "s", [cc_line(1, "user", "Read it."), *call_and_result(
        "Read", {"file_path": "/w/timeline.py", "offset": 40, "limit": 3},
        f"{lines}\n\n{reminder}", n=2)])
    html = page(tmp_path, root, "/s/s")
    read = card(html, "toolu_Read_2")
    assert "→" not in read
    assert '<pre class="hl numbered"><code><span class="ln">40</span><span class="k">def</span>' in read
    assert '<span class="ln">42</span></code></pre>' in read
    assert "&lt;system-reminder&gt;" not in read and 'summary title="attached for the model' in read
    assert ">system reminder</summary>" in read


def long_read(tmp_path, lines: int = 400):
    """A session whose Read result is a long Python file with a script tag in it."""
    code = "".join(f"{i:>6}→def f{i}(): return '<script>alert({i})</script>'\n" for i in range(1, lines + 1))
    root = tmp_path / "root"
    write_session(root / "s", [cc_line(1, "user", "Read it."), *call_and_result(
        "Read", {"file_path": "/w/big.py"}, code, n=2)])
    return root


def test_a_long_read_result_is_sent_plain_and_highlighted_when_reached(tmp_path):
    from html import unescape

    root = long_read(tmp_path)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    client = app.test_client()
    read = card(client.get("/s/s").get_data(as_text=True), "toolu_Read_2")
    # the page: the file plain (numbered, escaped), with where its highlighted card comes from
    later = re.search(r'<div class="hl-later" hx-get="([^"]+)" hx-trigger="intersect once" '
                      r'hx-target="closest .cuttable" hx-swap="outerHTML"><pre class="hl numbered">'
                      r"<code><span class=\"ln\">1</span>def f1\(\): return '&lt;script&gt;", read)
    assert later, read[:2000]
    assert '<span class="k">' not in read and "<script>" not in read
    assert "Show all" in read  # 10,000 characters shown, the rest behind "show all"
    # the fragment: the same card, highlighted, still escaped, with the same "show all"
    r = client.get(unescape(later.group(1)), headers={"HX-Request": "true"})
    assert r.status_code == 200
    frag = r.get_data(as_text=True)
    assert frag.lstrip().startswith('<div class="cuttable out file">')
    assert '<span class="ln">1</span><span class="k">def</span>' in frag and '<span class="nf">f1</span>' in frag
    assert "<script>" not in frag and "&lt;script&gt;" in frag
    assert "hl-later" not in frag and "Show all" in frag
    shown = re.findall(r'<span class="ln">(\d+)</span>', frag)
    assert shown == re.findall(r'<span class="ln">(\d+)</span>', read)  # the same lines
    # highlighted once, it is drawn highlighted at once in the pages that show it next
    again = card(client.get("/s/s?from=0").get_data(as_text=True), "toolu_Read_2")
    assert "hl-later" not in again and '<span class="k">def</span>' in again


def test_only_long_code_that_would_be_highlighted_waits():
    code = "def f(): pass\n" * 400
    assert render.highlights_later(code, filename="a.py")
    assert not render.highlights_later(code[: render.HIGHLIGHT_NOW], filename="a.py")  # short: now
    assert not render.highlights_later(code, filename="notes.unknown-ext")  # plain anyway
    assert not render.highlights_later("x" * (render.HIGHLIGHT_CAP + 1), filename="a.py")
    render.highlight(code, filename="b.py")
    assert not render.highlights_later(code, filename="a.py")  # highlighted a moment ago


def test_numbered_lines_keep_what_surrounds_them():
    text = ("The file /w/a.py has been updated. Here's the result of running `cat -n`:\n"
            "     7→x = 1\n     8→y = 2\n     9→\n")
    rv = tools.numbered(text, "/w/a.py")
    assert rv.numbers == [7, 8, 9] and rv.code == "x = 1\ny = 2\n"
    assert rv.before.startswith("The file /w/a.py has been updated")
    assert tools.numbered("no numbers here", None) is None
    # a jump in the numbers ends the run: what follows is not made into code
    rv = tools.numbered("   1→a\n   2→b\n   9→c", None)
    assert rv.numbers == [1, 2] and rv.after == "9→c"


def _numbered_line_by_line(text, filename):
    """The definition `tools.numbered` follows (its first, line-by-line version, kept as the
    reference: the regex-engine version must find the same run in any text)."""
    one = re.compile(r"^ *(\d+)(?:→|\t)(.*)$")
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if one.match(ln)), None)
    if start is None:
        return None
    numbers, code = [], []
    for ln in lines[start:]:
        m = one.match(ln)
        if not m or (numbers and int(m.group(1)) != numbers[-1] + 1):
            break
        numbers.append(int(m.group(1)))
        code.append(m.group(2))
    end = start + len(numbers)
    return ("\n".join(code), numbers, "\n".join(lines[:start]).strip(),
            "\n".join(lines[end:]).strip())


_NUMBERED_PARTS = st.lists(st.one_of(
    st.builds(lambda n, sep, pad, rest: f"{' ' * pad}{n}{sep}{rest}", st.integers(0, 12),
              st.sampled_from(["→", "\t", " ", ""]), st.integers(0, 6),
              st.text(alphabet=" ab→\t\r1٣", max_size=6)),
    st.text(alphabet=" xy1\t→\r", max_size=8)), max_size=12)


@given(_NUMBERED_PARTS, st.booleans())
@settings(deadline=None)  # a shared machine can stall one example past hypothesis' 200 ms
def test_numbered_finds_the_same_run_as_reading_line_by_line(lines, newline_at_end):
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    rv = tools.numbered(text, "a.py")
    want = _numbered_line_by_line(text, "a.py")
    assert (None if rv is None else (rv.code, rv.numbers, rv.before, rv.after)) == want


# --- 7. titles and IDE context ---------------------------------------------------------------------


def test_ide_tags_are_chips_and_the_title_is_the_first_real_words(tmp_path):
    folder = quiet_copy(CORPUS / "claude-code" / "coderabbit-thinking", tmp_path / "root" / "cr")
    idx = SessionIndex(folder / "messages.jsonl").build()
    assert idx.summary.title.startswith("How can I make this possible to install as a library")
    html = page(tmp_path, tmp_path / "root", "/s/cr?from=0")
    assert "&lt;ide_selection&gt;" not in html and "&lt;/ide_selection&gt;" not in html
    assert re.search(r'<details class="context"><summary [^>]*>selected line 508 of '
                     r'extract-coderabbit-feedback.py</summary>', html)
    listing = page(tmp_path, tmp_path / "root", "/")
    assert "How can I make this possible to install as a library" in listing


def test_ide_opened_file_and_reminders_around_a_prompt(tmp_path):
    root = tmp_path / "root"
    prompt = [{"type": "text", "text": "<ide_opened_file>The user opened the file /w/src/app.py in "
                                       "the IDE. This may or may not be related to the current task."
                                       "</ide_opened_file>"},
              {"type": "text", "text": "Why does <b>this</b> fail?\n\n<system-reminder>Be brief."
                                       "</system-reminder>"}]
    write_session(root / "s", [cc_line(1, "user", prompt)])
    idx = SessionIndex(root / "s" / "messages.jsonl").build()
    assert idx.summary.title == "Why does <b>this</b> fail?"
    html = page(tmp_path, root, "/s/s")
    assert ">opened app.py</summary>" in html and ">system reminder</summary>" in html
    assert "Why does &lt;b&gt;this&lt;/b&gt; fail?" in html


# --- 9. roles inside sub-agent threads --------------------------------------------------------------

CC_KEY = "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"


def test_a_subagent_thread_keeps_its_roles_and_is_named_by_type_and_task(client):
    frag = client.get(f"/s/{CC_KEY}/t/a7c4e2f91b3d5a6c8", headers={"HX-Request": "true"}).get_data(
        as_text=True)
    whos = re.findall(r'<li class="ev role-(\w+)[^"]*"[^>]*>\s*<div class="ev-head">\s*'
                      r'<span class="who role-word">(\w[\w ]*)</span>', frag)
    assert whos == [("user", "user"), ("assistant", "assistant"), ("assistant", "assistant")]
    assert "agent a7c4e2f91b3d5a6c8" not in re.sub(r'title="[^"]*"', "", frag)
    html = client.get(f"/s/{CC_KEY}").get_data(as_text=True)
    assert '<summary title="agent a7c4e2f91b3d5a6c8">Sub-agent: Explore · Find window() callers' in html
    page_ = client.get(f"/s/{CC_KEY}/t/a7c4e2f91b3d5a6c8").get_data(as_text=True)
    assert '<span title="agent a7c4e2f91b3d5a6c8">Explore · Find window() callers</span>' in page_


def test_an_old_style_subagent_is_named_by_the_task_that_spawned_it(tmp_path):
    """coderabbit-thinking's agent files have no .meta.json: the Task call's type and description
    name them."""
    quiet_copy(CORPUS / "claude-code" / "coderabbit-thinking", tmp_path / "root" / "cr")
    html = page(tmp_path, tmp_path / "root", "/s/cr?from=0")
    assert '<summary title="agent ea02459f">Sub-agent: Plan · Explore project structure for ' \
           'packaging' in html
    thread = page(tmp_path, tmp_path / "root", "/s/cr/t/ea02459f")
    assert ">Plan · Explore project structure for packaging</span>" in thread
    assert 'class="who role-word">user<' in thread and 'class="who role-word">assistant<' in thread


# --- 11. terminal output that moves the cursor -------------------------------------------------------


def _screen(text: str) -> str:
    return "".join(s.text for s in render.ansi_segments(text))


def test_cursor_movement_places_text_in_its_columns():
    # /context lays its grid out with cursor-forward instead of spaces
    grid = ("\x1b[1mContext Usage\x1b[22m\n"
            "\x1b[38;2;153;153;153m⛁\x1b[1C⛁\x1b[1C⛶\x1b[39m\x1b[3C\x1b[38;2;153;153;153mSystem prompt\x1b[39m\n"
            "\x1b[38;2;153;153;153m⛶\x1b[1C⛶\x1b[1C⛶\x1b[39m\x1b[3CFree space\n")
    lines = _screen(grid).split("\n")
    assert lines[1] == "⛁ ⛁ ⛶   System prompt"
    assert lines[2].index("Free space") == lines[1].index("System prompt")
    assert "\x1b" not in _screen(grid) and "[1C" not in _screen(grid)
    assert [s.classes for s in render.ansi_segments(grid)][0] == "a-bold"


@pytest.mark.parametrize("text, shown", [
    ("progress 10%\rprogress 100%\n", "progress 100%"),  # a rewritten line shows its last state
    ("50%\r\x1b[Kdone", "done"),  # erase to the end of the line
    ("name\x1b[20Gsize\nlonger name\x1b[20G12 KB", "name               size\nlonger name        12 KB"),
    ("abc\x1b[2Dx", "axc"),  # back two, write one
    ("漢字\x1b[2Cz", "漢字  z"),  # wide characters take two columns
    ("top\n\x1b[1Aright", "right"),  # up one line, overwrite
    ("keep\r\n\x1b[31mred\x1b[0m", "keep\nred"),  # CRLF is a line end, not an overwrite
])
def test_terminal_control_is_laid_out_as_a_terminal_shows_it(text, shown):
    assert _screen(text) == shown


def test_command_output_with_cursor_moves_renders_aligned(tmp_path):
    root = tmp_path / "root"
    out = "PID\x1b[8GNAME\n1\x1b[8Ginit\n4242\x1b[8Gpython"
    write_session(root / "s", [cc_line(1, "user", "ps"), *call_and_result("Bash", {"command": "ps"}, out, n=2)])
    html = page(tmp_path, root, "/s/s")
    bash = card(html, "toolu_Bash_2")
    assert "<pre class=\"ansi\">PID    NAME\n1      init\n4242   python</pre>" in bash


# --- 6. noise folded into its neighbours ------------------------------------------------------------

from viewer.timeline import WINDOW, Timeline  # noqa: E402


def streamed(n: int, block: dict, mid: str = "msg-a") -> dict:
    """One line of a streamed assistant message (Claude Code writes a content block per line)."""
    rec = cc_line(n, "assistant", [block])
    rec["message"]["id"] = mid
    return rec


def noisy_session(folder: Path) -> Path:
    return write_session(folder, [
        cc_line(1, "user", "Fix it."),
        streamed(2, {"type": "thinking", "thinking": "", "signature": "EqQBCkYIBxgCKkB..."}),
        streamed(3, {"type": "text", "text": "Looking at the file."}),
        streamed(4, {"type": "text", "text": "\n\n"}),
        streamed(5, {"type": "tool_use", "id": "toolu_ls", "name": "Bash", "input": {"command": "ls"}}),
        cc_line(6, "user", [{"type": "tool_result", "tool_use_id": "toolu_ls", "content": "a.py"}]),
        streamed(7, {"type": "text", "text": "Done."}, mid="msg-b"),
    ])


def test_empty_lines_and_unrecorded_thinking_are_hidden_and_said_once(tmp_path):
    path = noisy_session(tmp_path / "root" / "s")
    idx = SessionIndex(path).build()
    th = idx.threads["main"]
    evs = load_events(idx, "main", 0, len(th))
    reasons = {ev.id: ev.hidden_reason for ev in evs if ev.hidden}
    assert reasons == {"u-2": "thinking not recorded", "u-4": "empty"}
    win = Timeline(idx).window("main")
    views = {v.ev.id: v for v in win.events}
    assert views["u-3"].thought and not views["u-3"].continued  # first card shows role and chip
    assert views["u-5"].continued and not views["u-5"].thought  # the empty line between is folded
    assert not views["u-7"].continued
    html = page(tmp_path, tmp_path / "root", "/s/s")
    assert html.count('class="kind thought"') == 1
    assert "Thinking not recorded (empty" not in html
    # the streamed view agrees with the page: a live card is drawn as it will be on a reload
    live = Timeline(idx).event_view(evs[4], 4)
    assert live.continued
    assert Timeline(idx).event_view(evs[2], 2).thought


def test_a_result_shown_with_its_call_folds_and_its_permalink_lands_on_the_call(tmp_path):
    noisy_session(tmp_path / "root" / "s")
    html = page(tmp_path, tmp_path / "root", "/s/s")
    assert re.search(r'<li class="ev role-tool kind-tool_result[^"]* refs-only folded[^"]*" id="m-u-6"',
                     html)
    linked = page(tmp_path, tmp_path / "root", "/s/s/m/u-6")
    assert 'data-target="tc-toolu_ls-result"' in linked
    assert 'class="tool-result target" id="tc-toolu_ls-result"' in linked


def test_a_result_far_from_its_call_is_one_line(tmp_path):
    filler = [cc_line(10 + i, "user" if i % 2 else "assistant", f"step {i}") for i in range(WINDOW + 5)]
    for i, rec in enumerate(filler):
        rec["uuid"] = f"f-{i}"
    write_session(tmp_path / "root" / "s", [
        cc_line(1, "user", "Run the long job."),
        cc_line(2, "assistant", [{"type": "tool_use", "id": "toolu_job", "name": "Task",
                                  "input": {"description": "job", "prompt": "go"}}]),
        *filler,
        cc_line(99, "user", [{"type": "tool_result", "tool_use_id": "toolu_job", "content": "ok"}]),
    ])
    html = page(tmp_path, tmp_path / "root", "/s/s")
    m = re.search(r'<li class="ev role-tool[^"]*" id="m-u-99"[^>]*>(.*?)</li>', html, re.S)
    assert m and "folded" not in m.group(0).split(">")[0] and "refs-only" in m.group(0).split(">")[0]
    assert re.search(r'<span class="result-ref"[^>]*>↳ result of <a href="/s/s/m/u-2">Task</a>', m.group(1))
    assert "ev-body" not in m.group(1) and "role-word" not in m.group(1)


def test_web_search_links_are_a_list_of_links():
    text = ('Web search results for query: "plan mode"\n\n'
            'Links: [{"title":"Plan [mode] *docs*","url":"https://a.example/p q"},'
            '{"title":"bad","url":"javascript:alert(1)"}]\n\nPlan mode is…')
    rv = tools.result_view("WebSearch", {"query": "plan mode"}, text)
    html = str(render.markdown(rv.code))
    assert '<li><a href="https://a.example/p%20q" rel="noopener noreferrer nofollow">' \
           'Plan [mode] *docs*</a></li>' in html
    assert 'href="javascript' not in html and "Plan mode is…" in html


def test_a_subagent_reports_trailer_is_one_quiet_line(client):
    html = client.get(f"/s/{CC_KEY}").get_data(as_text=True)
    task = card(html, "toolu_task_explore")
    assert '<div class="notice">agent a7c4e2f91b3d5a6c8 <details class="detail">' in task
    assert "use SendMessage" not in re.sub(r'<details class="detail">.*?</details>', "", task,
                                           flags=re.S)


def test_a_long_first_prompt_makes_a_title_cut_between_words():
    from viewer.index import TITLE_CAP, short_title

    prompt = "Pretend we have a list of tasks,\n\n" + "research the capacity for agents " * 20
    title = short_title(prompt)
    assert len(title) <= TITLE_CAP and title.endswith("…") and "\n" not in title
    assert title[:-1] == title[:-1].rstrip() and prompt.replace("\n\n", " ").startswith(title[:-1])
    assert (title[:-1] + " ").split()[-1] in prompt.split()  # the last word is whole
    assert short_title("Fix   the\nbug") == "Fix the bug"


def test_a_unified_diff_keeps_its_changes_whatever_its_lines_hold_and_names_files_without_hunks():
    # a form feed inside a context line: `splitlines` split the line there, the hunk's counts ran
    # out a line early and its change was lost; a binary file, a rename and a mode change have no
    # hunk and were left out of the drawn diff though the text named them
    patch = ("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1,3 +1,3 @@\n a\x0cpage\n-b\n+c\n d\n"
             "diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n"
             "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n"
             "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n")
    parts = tools.diff_of(patch)
    assert [(p.path, p.old, p.new, p.action) for p in parts] == [
        ("a.c", "a\x0cpage\nb\nd", "a\x0cpage\nc\nd", None),
        ("logo.png", "", "", "binary file changed"),
        ("new.py", "", "", "moved from old.py"),
        ("run.sh", "", "", "mode changed")]


_FILE_LINE = st.text(alphabet=" ab→\t\r1٣#", max_size=8)


@given(st.integers(0, 9_999), st.lists(_FILE_LINE, min_size=1, max_size=12),
       st.sampled_from(["→", "\t"]), st.integers(0, 6), st.sampled_from(["", "Here's the file:\n"]),
       st.sampled_from(["", "\n", "\n\nmore", "\n  12→x"]), st.integers(-1, 11))
@settings(deadline=None)
def test_a_whole_numbered_file_is_split_as_reading_line_by_line(start, code, sep, pad, before,
                                                                 after, jump):
    """A Read result is numbered from its first line to its last: `tools.numbered` splits such a
    text in one pass (no line skipped, the numbers counting up by one), and anything else (a
    jump in the numbers, a line without one, text after the run) the way it splits any text —
    both as the line-by-line reading does."""
    numbers = [start + i + (5 if 0 < jump <= i else 0) for i in range(len(code))]
    text = before + "\n".join(f"{' ' * pad}{n}{sep}{c}" for n, c in zip(numbers, code)) + after
    rv = tools.numbered(text, "a.py")
    assert (rv.code, rv.numbers, rv.before, rv.after) == _numbered_line_by_line(text, "a.py")
