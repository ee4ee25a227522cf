"""What the mutation fuzzer (tests/fuzzer.py) found, each as the smallest file that showed it: the
session reads, every page of it answers, and nothing is logged at ERROR (the safety nets' log)."""

import io
import json
import logging
import os
import re
import sqlite3
import time

import pytest

from viewer.index import SessionIndex
from viewer.web import create_app

from conftest import ROOT, opencode_make_db
from test_fuzz import Errors

SESSIONS = ROOT / "test_data" / "sessions"


@pytest.fixture
def errors():
    handler = Errors()
    logging.getLogger().addHandler(handler)
    yield handler.records
    logging.getLogger().removeHandler(handler)


def pages(root, tmp_path, key: str) -> dict[str, int]:
    """The status of the session's page, its twin, its first window, the list and each event's
    permalink and raw view."""
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    c = app.test_client()
    out = {u: c.get(u).status_code for u in ("/", f"/s/{key}", f"/s/{key}.json", f"/s/{key}/w/main?after=0")}
    for ev in (c.get(f"/s/{key}.json?hidden=1").get_json() or {}).get("events", []):
        for u in (f"/s/{key}/m/{ev['id']}", f"/s/{key}/raw/{ev['id']}"):
            out[u] = c.get(u).status_code
    for fmt in ("html", "md", "json"):
        out[f"export {fmt}"] = c.get(f"/s/{key}/export?format={fmt}").status_code
    app.extensions["viewer"].fts.close()
    return out


def legion(folder, *records) -> None:
    folder.mkdir(parents=True)
    (folder / "messages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


LEGION_USER = {"type": "user", "content": "hi", "timestamp": "2025-10-21T10:00:00Z", "session_id": "s"}


@pytest.mark.parametrize("name", [["a", "b"], 7, True, {"x": 1}])
def test_a_legion_state_name_that_is_not_text_names_no_agent(name, tmp_path, errors):
    legion(tmp_path / "root" / "s", LEGION_USER)
    (tmp_path / "root" / "s" / "state.json").write_text(json.dumps({"name": name, "slug": "minion"}))
    assert SessionIndex(tmp_path / "root" / "s" / "messages.jsonl").build().summary.agents == ["minion"]
    assert set(pages(tmp_path / "root", tmp_path, "s").values()) == {200}
    assert [e.getMessage() for e in errors] == []


@pytest.mark.parametrize("field", ["contents", "file_text", "text"])
def test_markdown_export_of_a_write_whose_text_is_not_called_content(field, tmp_path, errors):
    # Wolo's `write` says `contents` (the bundled hello-world.jsonl): the page drew it, the
    # Markdown export raised KeyError: 'content'
    from viewer.export import Export

    line = {"id": "m1", "role": "assistant", "timestamp": 1704067201.5, "parts": [
        {"type": "tool", "id": "t1", "tool": "write", "input": {"path": "hello.py", field: "print(1)"},
         "output": "ok", "status": "completed", "start_time": 1704067202.0, "end_time": 1704067202.4}]}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(line) + "\n")
    idx = SessionIndex(path, "wolo").build()
    md = "".join(Export(idx, "md", label="s").chunks())
    assert "`hello.py`\n\n```\nprint(1)\n```" in md
    assert [e.getMessage() for e in errors] == []


def test_a_lone_surrogate_escape_costs_one_character_not_the_record(tmp_path, errors):
    # JSON allows "\ud83d" alone (a JavaScript string cut inside an emoji is written so); orjson
    # refuses it, and the whole record was an unparsed line (a whole document: an unknown format)
    from viewer import reader
    from viewer.formats import detect

    assert reader.decode(rb'{"a": "cut \ud83d", "b": "\\ud800 \ud83d\ude00"}') == {
        "a": "cut \ufffd", "b": "\\ud800 \U0001f600"}  # an escaped backslash and a pair stay
    line = {"type": "assistant", "content": "cut \ud83d emoji", "timestamp": 1761073200.0,
            "session_id": "s", "message_id": "m1"}
    legion(tmp_path / "root" / "s", LEGION_USER, line)
    idx = SessionIndex(tmp_path / "root" / "s" / "messages.jsonl").build()
    assert idx.summary.unparsed == 0 and idx.summary.messages == 2
    doc = tmp_path / "conversation.json"
    doc.write_text(json.dumps([{"role": "user", "content": "hi \udfff"},
                               {"role": "assistant", "content": "hello"}]))
    assert detect.detect_file(doc).format == "openai-chat"
    assert SessionIndex(doc).build().summary.unparsed == 0
    assert set(pages(tmp_path / "root", tmp_path, "s").values()) == {200}
    assert [e.getMessage() for e in errors] == []


def test_a_sub_agent_meta_nested_deep_still_lets_the_index_be_cached(tmp_path, errors):
    # a .meta.json whose description was nested 300 levels deep went into the index's header:
    # "writing the index … to the cache failed" (orjson: Recursion limit reached) on every visit
    folder = tmp_path / "root" / "s"
    (folder / "subagents").mkdir(parents=True)
    (folder / "messages.jsonl").write_text(json.dumps(
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "timestamp": "2025-10-21T10:00:00Z", "message": {"role": "user", "content": "hi"}}) + "\n")
    (folder / "subagents" / "agent-a1.jsonl").write_text(json.dumps(
        {"type": "user", "uuid": "u2", "parentUuid": None, "sessionId": "s", "isSidechain": True,
         "timestamp": "2025-10-21T10:00:01Z", "message": {"role": "user", "content": "task"}}) + "\n")
    deep = "x"
    for _ in range(300):
        deep = [deep]
    (folder / "subagents" / "agent-a1.meta.json").write_text(json.dumps(
        {"agentType": "Explore", "description": deep}))
    idx = SessionIndex(folder / "messages.jsonl").build()
    assert idx.threads["a1"].label == "Explore"
    assert SessionIndex.load(idx.dump()).threads["a1"].label == "Explore"
    assert set(pages(tmp_path / "root", tmp_path, "s").values()) == {200}
    assert [e.getMessage() for e in errors] == []


def test_lone_surrogates_in_a_huge_line_are_replaced_in_its_strings_cut_or_not(tmp_path, errors):
    # A line above reader.HUGE_LINE is skimmed: a short string with a lone surrogate escape made
    # the whole line unparsed, and a cut string's full text (read back for search, export and
    # redaction) kept the surrogates, which no encoder takes: the export and the full-text index
    # failed with UnicodeEncodeError
    from viewer import reader
    from viewer.export import Export
    from viewer.redact import Redactor

    big = "\ud83d" + "ab" * (reader.HUGE_LINE // 2) + "\udfff"
    line = {"type": "assistant", "content": big, "timestamp": 1761073200.0, "session_id": "s",
            "message_id": "m1", "metadata": {"note": "cut \ud800"}}
    legion(tmp_path / "root" / "s", LEGION_USER, line)
    path = tmp_path / "root" / "s" / "messages.jsonl"
    idx = SessionIndex(path).build()
    assert idx.summary.unparsed == 0
    with open(path, "rb") as f:
        rec = reader.read_line(f, idx.threads["main"].offsets[1], idx.threads["main"].lengths[1])
        assert rec["metadata"]["note"] == "cut \ufffd"
        whole = reader.read_cut(f, rec["content"])
    assert whole == "\ufffd" + "ab" * (reader.HUGE_LINE // 2) + "\ufffd"
    for fmt in ("html", "md", "json"):
        Export(idx, fmt, label="s", redactor=Redactor()).write(io.BytesIO())
    assert set(pages(tmp_path / "root", tmp_path, "s").values()) == {200}
    assert [e.getMessage() for e in errors] == []


def test_a_cut_string_of_millions_of_lone_surrogates_reads_back_whole(tmp_path):
    # A 31 MB line of five million lone surrogate escapes made the export of its cut string call
    # Python once per escape, twice per read: the fuzzer's one-minute alarm rang. The escapes
    # are now decoded first and the lone halves mended in one pass. And a low half after an escaped
    # backslash and the letters "ud83d" was taken for the second half of a pair and left lone:
    # orjson refused the line, which read as unparsed
    from viewer import reader
    from viewer.export import Export

    body = r"\ud83d" * (reader.HUGE_LINE // 6 + 1000) + r"\\ud83d\ude00" + r"\ud83d\ude00"
    raw = ('{"type": "assistant", "content": "' + body + '", "timestamp": 1761073200.0, '
           '"session_id": "s", "message_id": "m1"}')
    legion(tmp_path / "root" / "s", LEGION_USER)
    path = tmp_path / "root" / "s" / "messages.jsonl"
    with open(path, "a", encoding="utf-8") as f:
        f.write(raw + "\n")
    idx = SessionIndex(path).build()
    assert idx.summary.unparsed == 0
    with open(path, "rb") as f:
        rec = reader.read_line(f, idx.threads["main"].offsets[1], idx.threads["main"].lengths[1])
        whole = reader.read_cut(f, rec["content"])
    assert whole == "\ufffd" * (reader.HUGE_LINE // 6 + 1000) + "\\ud83d\ufffd" + "\U0001f600"
    for fmt in ("md", "json"):
        out = io.BytesIO()
        Export(idx, fmt, label="s").write(out)
        out.getvalue().decode("utf-8")  # strict: no surrogate was passed through


def test_a_model_name_cut_out_of_a_huge_line_is_text_the_cache_can_save(errors):
    # A line above reader.HUGE_LINE keeps long strings as CutStr (a str subclass): such a model
    # name passed the index's "names are text" check and keyed the usage table, which orjson
    # would not write ("Dict key must be str"): the index of the session was never cached
    from viewer.formats import claude_code
    from viewer.index import safe_event
    from viewer.model import Ref
    from viewer.reader import CutStr

    model = CutStr("claude-" + "x" * 100, 10, 5 << 20)
    rec = {"type": "assistant", "uuid": "a1", "parentUuid": None, "sessionId": "s",
           "timestamp": "2025-10-21T10:00:00Z",
           "message": {"role": "assistant", "model": model, "content": [{"type": "text", "text": "hi"}],
                       "usage": {"input_tokens": 5, "output_tokens": 2}}}
    ev = safe_event(claude_code, rec, Ref("main", 1, 0, 5 << 20))
    assert type(ev.model) is str and ev.model == model
    assert [e.getMessage() for e in errors] == []


def test_a_stream_asked_for_a_file_that_became_binary_says_so(tmp_path, errors):
    # A page drawn, then a write that makes the file binary (NUL bytes at its start): the page's
    # event stream re-detected the file and failed with NotTranscript (a 500, logged)
    from viewer.web.live import cursor_of

    legion(tmp_path / "root" / "s", LEGION_USER)
    path = tmp_path / "root" / "s" / "messages.jsonl"
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "INDEX_ALL": False})
    c = app.test_client()
    assert c.get("/s/s").status_code == 200
    cursor = cursor_of(app.extensions["viewer"].store.index("s"))
    path.write_bytes(b"\x00" * 4096 + b"\n")
    resp = c.get(f"/s/s/events?after={cursor}")
    assert resp.status_code == 422 and "not a transcript" in resp.get_data(as_text=True)
    app.extensions["viewer"].fts.close()
    assert [e.getMessage() for e in errors] == []


def test_a_page_filtered_to_a_sub_agent_longer_than_the_main_thread(tmp_path, errors):
    # The filtered window counts picked events, and the page's stream cursor took that count as a
    # number of main-thread events: with a sub-agent picked (?thread=…) that has more events than
    # the main thread, IndexError and a 500. And such a page's "earlier" / "later" links passed
    # the filter's `thread` and the window's own to one URL builder: TypeError, a 500
    folder = tmp_path / "root" / "s"
    (folder / "subagents").mkdir(parents=True)

    (folder / "messages.jsonl").write_text(_prompt_line(0))
    (folder / "subagents" / "agent-a1.jsonl").write_text("".join(_prompt_line(i, True) for i in range(1, 99)))
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "INDEX_ALL": False})
    c = app.test_client()
    for url in ("/s/s?thread=a1", "/s/s?only=prompts", "/s/s?thread=a1&from=50"):
        resp = c.get(url)
        assert resp.status_code == 200, url
    page = c.get("/s/s?thread=a1&from=50").get_data(as_text=True)
    assert "line 51" in page and "line 1<" not in page
    more = re.search(r'hx-get="(/s/s/w/main\?[^"]*before=[^"]*)"', page).group(1).replace("&amp;", "&")
    assert "thread=a1" in more
    earlier = c.get(more)
    assert earlier.status_code == 200 and "line 49<" in earlier.get_data(as_text=True)
    app.extensions["viewer"].fts.close()
    assert [e.getMessage() for e in errors] == []


# --- found by the live-path fuzzer (tests/livefuzz.py): a session read while it is written must
# read as one fresh read of its final files ------------------------------------------------------

DEMO = ROOT / "test_data" / "formats" / "claude-code" / "2.1.331" / "-home-user-demo"


def _columns(idx):
    return {name: (list(th.ids), list(th.lines), list(th.offsets), list(th.lengths), th.roles,
                   th.kinds, th.label, {k: v for k, v in th.meta.items()})
            for name, th in idx.threads.items()}


def _touch(path, step=[0]):
    # a later time for each write (two writes in one tick of the file system's clock and of the
    # same size look unchanged)
    import os
    import time

    step[0] += 1
    t = time.time_ns() + step[0] * 1_000_000
    os.utime(path, ns=(t, t))


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_last_line_read_before_its_line_end_keeps_the_line_numbers_after_it(tmp_path, eol):
    # A whole JSON last line without its line end is read as a record; its line end, written
    # next, was then counted as an empty line of its own: every later line number and `L<n>` id
    # one past what a fresh read gives (a permalink made while live broke after a restart)
    p = tmp_path / "messages.jsonl"
    a, b, c = (json.dumps({"role": r, "content": t}) for r, t in
               (("user", "hi"), ("assistant", "yo"), ("user", "again")))
    p.write_bytes((a + eol + b + eol[:-1]).encode())  # (with CRLF: its CR written, not its LF)
    idx = SessionIndex(p).build()
    assert idx.threads["main"].ids == ["L1", "L2"]
    with open(p, "ab") as f:
        f.write(("\n" + c + eol).encode())
    _touch(p)
    assert idx.refresh()
    assert _columns(idx) == _columns(SessionIndex(p).build())
    assert idx.threads["main"].ids == ["L1", "L2", "L3"]


def test_a_last_line_read_before_its_end_that_goes_on_is_read_again(tmp_path):
    # what followed was not its line end: the record read was only the start of the line
    p = tmp_path / "messages.jsonl"
    p.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n" + '{"role": "assistant"}')
    idx = SessionIndex(p).build()
    with open(p, "a") as f:
        f.write(', "content": "yo"}\n')
    _touch(p)
    assert idx.refresh().reset
    assert _columns(idx) == _columns(SessionIndex(p).build())


def test_a_file_read_at_its_first_line_is_detected_again_as_it_grows(tmp_path):
    # MARSYS's first line is a plain chat message: read then, the session stayed OpenAI chat for
    # good (its agent calls plain messages) though a fresh read says MARSYS
    src = ROOT / "test_data" / "formats" / "marsys" / "golden-marsys-0.2.1" / "coordinator.messages.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    p = tmp_path / "coordinator.messages.jsonl"
    p.write_bytes(lines[0])
    idx = SessionIndex(p).build()
    assert idx.format != "marsys"  # (what one line says)
    p.write_bytes(b"".join(lines))
    _touch(p)
    assert idx.refresh().reset
    assert idx.format == "marsys" and _columns(idx) == _columns(SessionIndex(p).build())
    assert "agent_call" in idx.threads["main"].kinds


def test_legion_state_written_after_the_transcript_is_read(tmp_path):
    # state.json (the minion's name; terminated) is written while messages.jsonl is not touched:
    # the index kept saying what it said without it (no name; still running)
    folder = tmp_path / "s"
    folder.mkdir()
    src = SESSIONS / "legion-mixed-timestamps"
    (folder / "messages.jsonl").write_bytes((src / "messages.jsonl").read_bytes())
    idx = SessionIndex(folder / "messages.jsonl").build()
    assert "timestamps" not in idx.summary.agents and not idx.info.get("finished")
    assert idx.unchanged()
    (folder / "state.json").write_bytes((src / "state.json").read_bytes())
    assert not idx.unchanged()
    change = idx.refresh()
    assert change.info and not change.new
    assert idx.info == {"agent": "timestamps", "finished": True}
    assert idx.summary.agents[0] == "timestamps"
    assert idx.unchanged()


def test_a_sub_agent_whose_meta_is_written_after_its_transcript(tmp_path):
    # Claude Code writes agent-<id>.meta.json beside the sub-agent's transcript; found before it,
    # the thread kept 'agent <id>' for a label and no link to the call that spawned it
    import shutil

    main = tmp_path / "p" / "253a41fe-30bb-43c5-b249-7990744c4070.jsonl"
    main.parent.mkdir()
    shutil.copy(DEMO / main.name, main)
    sub = main.with_suffix("") / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(DEMO / main.stem / "subagents" / "agent-ae4ec7844d73bdd8f.jsonl", sub)
    idx = SessionIndex(main).build()
    assert idx.threads["ae4ec7844d73bdd8f"].label == "agent ae4ec7844d73bdd8f"
    shutil.copy(DEMO / main.stem / "subagents" / "agent-ae4ec7844d73bdd8f.meta.json", sub)
    assert idx.refresh()
    fresh = SessionIndex(main).build()
    assert _columns(idx) == _columns(fresh)
    assert idx.threads["ae4ec7844d73bdd8f"].label.startswith("general-purpose")
    assert idx.calls.call("toolu_0136e4777c000000000019").subthread == "ae4ec7844d73bdd8f"


def test_a_session_cost_does_not_depend_on_the_order_of_its_buckets():
    # a session read while it grows lists its sub-agents' buckets in the order they appeared; the
    # cost summed in that order differed from a fresh read's in the last digit
    import random

    from viewer.usage import priced

    r = random.Random(3)
    rows = [[f"t{i}", "claude-sonnet-4-5", 480000 + i, 0, 1, r.randrange(10**6), r.randrange(10**5),
             r.randrange(10**6), r.randrange(10**5)] for i in range(40)]
    costs = {priced({"buckets": order})["cost"] for order in (rows, rows[::-1], sorted(rows, key=str))}
    assert len(costs) == 1 and costs.pop() > 0


def test_full_text_rows_of_a_cut_last_line_are_made_again_when_it_is_finished(tmp_path):
    # A writer paused mid-line past the grace: the line is shown (and indexed for search) as a cut
    # line; once finished, the index reads it again and the event keeps its id and offset: the
    # full-text index took it for the same event and kept the cut line's raw text
    import os
    import time

    folder = tmp_path / "root" / "s"
    folder.mkdir(parents=True)
    p = folder / "messages.jsonl"
    first = json.dumps({"role": "user", "content": "question"}) + "\n"
    last = json.dumps({"role": "assistant", "content": "zebracorn answer"}) + "\n"
    p.write_text(first + last[:20])
    os.utime(p, (time.time() - 3600,) * 2)  # quiet past the grace: the cut line is a card
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "INDEX_ALL": False})
    viewer = app.extensions["viewer"]
    idx = viewer.store.index("s")
    assert idx.threads["main"].kinds[-1] == "unparsed"
    viewer.fts.wait(30)  # (the cut line's row written)
    p.write_text(first + last)
    viewer.store.refresh("s")
    viewer.fts.wait(30)
    texts = _fts_texts(viewer)
    assert any("zebracorn answer" in t for t in texts) and not any('"role"' in t for t in texts)


def test_sub_agents_stay_after_the_main_file_is_read_again(tmp_path, monkeypatch):
    # A rebuild (the main file cut, rewritten, or its cut last line finished) starts the threads
    # afresh, then lists the companions — unless the last listing was still current (their folders
    # unchanged: every session older than a few seconds), and the sub-agents were gone for good
    import shutil

    from viewer import index

    monkeypatch.setattr(index, "RACY_NS", 0)  # (a listing made long after its folders changed)
    main = tmp_path / "p" / "253a41fe-30bb-43c5-b249-7990744c4070.jsonl"
    main.parent.mkdir()
    shutil.copy(DEMO / main.name, main)
    shutil.copytree(DEMO / main.stem, main.with_suffix(""))
    idx = SessionIndex(main).build()
    assert "ae4ec7844d73bdd8f" in idx.threads
    data = main.read_bytes()
    with open(main, "r+b") as f:
        f.truncate(data.index(b"\n", len(data) // 2) + 1)
    assert idx.refresh().reset
    assert list(idx.threads) == ["main", "ae4ec7844d73bdd8f"]
    main.write_bytes(data)
    _touch(main)
    idx.refresh()
    assert _columns(idx) == _columns(SessionIndex(main).build())


def test_a_thread_no_call_links_to_appears_on_a_live_page(tmp_path):
    # A sub-agent file whose spawning call is not in the transcript is listed under "Other
    # threads" when the page is drawn; one that appeared while the page was open was sent as a card
    # for a call that does not exist — nothing — and its events went to a list not on the page
    from viewer.web.feed import positions

    folder = tmp_path / "root" / "s"
    folder.mkdir(parents=True)

    (folder / "messages.jsonl").write_text(_prompt_line(0))
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "INDEX_ALL": False})
    viewer = app.extensions["viewer"]
    page = app.test_client().get("/s/s").get_data(as_text=True)
    assert '<section class="unlinked" id="unlinked-threads" hidden>' in page  # (none yet)
    idx = viewer.store.index("s")
    sub = viewer.feeds.subscribe("s", idx, positions(idx), {
        "SERVER_NAME": "localhost", "SERVER_PORT": "80", "wsgi.url_scheme": "http"})
    (folder / "subagents").mkdir()
    (folder / "subagents" / "agent-a1.jsonl").write_text(_prompt_line(1, True) + _prompt_line(2, True))
    sub.feed.poke()
    sent = b""
    for _ in range(10):
        sub.work()
        while (msg := sub.next_message()):
            sent += msg
    sent = sent.decode()
    assert 'id="unlinked-threads" hx-swap-oob="true">' in sent and 'href="/s/s/t/a1"' in sent
    assert "2 events" in sent
    again = app.test_client().get("/s/s").get_data(as_text=True)  # as a reload shows it
    assert 'href="/s/s/t/a1"' in again and "Other threads" in again
    sub.close()
    viewer.fts.close()


def test_full_text_rows_follow_a_line_rewritten_in_place(tmp_path):
    # The last line rewritten to the same length (one letter changed): the index sees the bytes
    # before its resume offset changed and reads the file again, but the full-text index found the
    # last event where it was, with the same id and length, and kept the old words
    folder = tmp_path / "root" / "s"
    folder.mkdir(parents=True)
    p = folder / "messages.jsonl"
    first = json.dumps({"role": "user", "content": "question"}) + "\n"
    p.write_text(first + json.dumps({"role": "assistant", "content": "zebracorn answer"}) + "\n")
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "INDEX_ALL": False})
    viewer = app.extensions["viewer"]
    viewer.store.index("s")
    viewer.fts.wait(30)
    p.write_text(first + json.dumps({"role": "assistant", "content": "zebracorn answex"}) + "\n")
    _touch(p)
    assert viewer.store.refresh("s")[1].reset
    viewer.fts.wait(30)
    texts = _fts_texts(viewer)
    assert "zebracorn answex" in texts and "zebracorn answer" not in texts


def _fts_texts(viewer) -> list[str]:
    """The text of every full-text row the server's index holds (its search is then closed)."""
    from viewer import fts as ftsmod

    db = viewer.fts._reader()
    try:
        return [ftsmod._unz(z) for (z,) in db.execute(viewer.fts._sql("SELECT z FROM {text}"))]
    finally:
        viewer.fts._give_back(db)
        viewer.fts.close()


def _prompt_line(i: int, sidechain: bool = False) -> str:
    """A Claude Code prompt line numbered i (of a sub-agent's file when `sidechain`)."""
    return json.dumps({"type": "user", "uuid": f"u{i}{sidechain}", "parentUuid": None,
                       "sessionId": "s", "isSidechain": sidechain,
                       "timestamp": f"2025-10-21T10:00:{i:02}Z",
                       "message": {"role": "user", "content": f"line {i}"}}) + "\n"


def agents_sdk_items(odd_type, handoff_output: str) -> list:
    return [{"role": "user", "content": "Refund order A17."},
            {"type": "function_call", "call_id": "c1", "name": "transfer_to_refunds", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": handoff_output},
            {"type": odd_type, "call_id": "c2", "name": "refund", "arguments": "{}"},
            {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": "Done."}]}]


@pytest.mark.parametrize("odd_type", [["function_call"], {"t": 1}])
def test_an_agents_sdk_item_whose_type_is_not_text_is_a_card_of_its_own(odd_type, tmp_path, errors):
    # "unhashable type: 'list'" when the handoffs were linked: the whole document (and in a
    # RunState, its generated items) read as an unknown format
    root = tmp_path / "root"
    root.mkdir()
    (root / "items.json").write_text(json.dumps(agents_sdk_items(odd_type, '{"assistant": "Refunds"}')))
    (root / "run_state.json").write_text(json.dumps({
        "$schemaVersion": "1.0", "current_turn": 1, "current_agent": {"name": "Refunds"},
        "original_input": "Refund order A17.", "model_responses": [],
        "generated_items": [{"type": "message_output_item", "agent": {"name": "Triage"},
                             "raw_item": item} for item in agents_sdk_items(odd_type, "ok")[1:]]}))
    for name in ("items", "run_state"):
        idx = SessionIndex(root / f"{name}.json").build()
        assert idx.format == "openai-chat" and idx.summary.unparsed == 0
        status = pages(root, tmp_path, name)
        assert [u for u, code in status.items() if code != 200] == []
    assert [e.getMessage() for e in errors] == []


def test_a_handoff_output_holding_a_raw_control_character_is_an_output(tmp_path, errors):
    # the handoff pattern let a raw tab through and orjson refused it: the result's event was lost
    # to the safety net, whether read as a document or one item per line
    items = agents_sdk_items("function_call", '{"assistant": "Refunds\tTeam"}')
    root = tmp_path / "root"
    root.mkdir()
    (root / "items.json").write_text(json.dumps(items))
    (root / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    for name in ("items.json", "items.jsonl"):
        idx = SessionIndex(root / name).build()
        assert idx.summary.unparsed == 0 and idx.summary.messages >= 2
    assert [e.getMessage() for e in errors] == []


def test_the_raw_view_of_a_document_record_nested_past_orjsons_depth_is_cut_not_an_error(tmp_path, errors):
    # a record of a JSONL file read as a document (a preference dataset) nested 300 levels deep:
    # its raw view and `check --redact-report` raised "Recursion limit reached"
    from click.testing import CliRunner
    from viewer.cli import main

    deep: object = "assistant"
    for _ in range(300):
        deep = [deep]
    root = tmp_path / "root"
    root.mkdir()
    (root / "prefs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"prompt": [{"role": "user", "content": "What color is the sky?"}],
         "chosen": [{"role": "assistant", "content": "It is blue."}],
         "rejected": [{"role": deep, "content": "It is green."}]}]))
    status = pages(root, tmp_path, "prefs")
    assert [u for u, code in status.items() if code != 200] == []
    assert any("/raw/" in u for u in status)
    r = CliRunner().invoke(main, ["check", "--json", "--redact-report", str(root / "prefs.jsonl")])
    assert r.exit_code == 0, r.output
    assert [e.getMessage() for e in errors] == []


def test_a_logged_call_whose_request_body_is_text_that_is_not_json_is_read_on(tmp_path, errors):
    # a logger keeps a body it could not parse as text: sniffing that record raised ("a bytes-like
    # object is required") on every line, so the call was lost to the safety net
    src = ROOT / "test_data" / "formats" / "anthropic-messages" / "claude-trace" / "log-2025-11-25-06-00-00.jsonl"
    lines = src.read_text().splitlines()
    odd = json.loads(lines[1])
    odd["request"]["body"] = "{not json: cut by the logger"
    root = tmp_path / "root"
    root.mkdir()
    (root / "log.jsonl").write_text("\n".join([lines[0], json.dumps(odd), *lines[2:]]) + "\n")
    idx = SessionIndex(root / "log.jsonl").build()
    assert idx.format == "anthropic-messages" and idx.summary.messages >= 4
    assert [u for u, code in pages(root, tmp_path, "log").items() if code != 200] == []
    assert [e.getMessage() for e in errors] == []


def test_a_dataset_line_whose_tools_are_cut_json_text_is_read_on(tmp_path, errors):
    # LLaMA-Factory keeps `tools` as JSON text: text that began like JSON and did not parse raised
    root = tmp_path / "root"
    root.mkdir()
    (root / "data.jsonl").write_text(json.dumps({"tools": '[{"name": "get_weather", cut', "conversations": [
        {"from": "human", "value": "Weather in Paris?"}, {"from": "gpt", "value": "Sunny."}]}) + "\n")
    idx = SessionIndex(root / "data.jsonl").build()
    assert idx.summary.messages == 2 and idx.summary.unparsed == 0
    assert [u for u, code in pages(root, tmp_path, "data").items() if code != 200] == []


def _nested(depth: int):
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("fmt", ["openhands_v1", "openhands", "wolo"])
def test_a_file_of_a_folder_session_nested_too_deep_is_cut_and_its_raw_view_answers(fmt, tmp_path, errors):
    # a session kept as a folder of files read its files into (name, record) pairs: a tuple, which
    # the depth cap does not go through, so a record nested 300 deep reached the index, the pages
    # and the raw view whole (its raw view could not be written back as JSON: orjson stops at 255)
    import shutil

    root = tmp_path / "root"
    if fmt == "openhands_v1":
        src = ROOT / "test_data" / "formats" / "openhands_v1" / "cli-calc"
        shutil.copytree(src, root / "c")
        victim = sorted((root / "c").glob("*/events/event-00002-*.json"))[0]
        main = victim.parent.parent / "base_state.json"
    elif fmt == "openhands":
        src = ROOT / "test_data" / "formats" / "openhands" / "store-calc"
        shutil.copytree(src, root / "c")
        victim = sorted((root / "c").glob("sessions/*/events/3.json"))[0]
        main = victim.parent.parent / "metadata.json"
    else:
        src = ROOT / "test_data" / "formats" / "wolo"
        main = next(p for p in sorted(src.rglob("session.json")) if (p.parent / "messages").is_dir())
        shutil.copytree(main.parent, root / "w")
        victim = sorted((root / "w" / "messages").glob("*.json"))[0]
        main = root / "w" / "session.json"
    rec = json.loads(victim.read_text())
    rec["deep"] = _nested(300)
    victim.write_text(json.dumps(rec))
    from viewer.store import Store

    from viewer import reader
    from viewer.formats import detect

    def depth(value) -> int:  # (through tuples too)
        deepest, stack = 0, [(value, 0)]
        while stack:
            v, d = stack.pop()
            deepest = max(deepest, d)
            if isinstance(v, dict):
                stack += [(c, d + 1) for c in v.values()]
            elif isinstance(v, (list, tuple)):
                stack += [(c, d + 1) for c in v]
        return deepest

    assert depth(detect.read_document(main)) <= reader.MAX_DEPTH + 1  # cut, as any record is
    key = next(r.key for r in Store([root]).sessions() if r.path == str(main.resolve()))
    statuses = pages(root, tmp_path, key)
    assert set(statuses.values()) == {200}, {u: s for u, s in statuses.items() if s != 200}
    assert [e.getMessage() for e in errors] == []


def test_a_folder_sessions_file_with_a_lone_surrogate_escape_reads(tmp_path, errors):
    # a Wolo message file holding a JavaScript string cut inside an emoji ("\ud83d" alone): the
    # whole message was an unparsed card, where a line of the same bytes reads with one character
    # replaced
    from viewer.formats import common

    path = tmp_path / "m1.json"
    path.write_bytes(rb'{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "cut \ud83d here"}]}')
    assert common.load_json_file(path)["parts"][0]["text"] == "cut \ufffd here"
    path.write_bytes(b'{"id": ')
    assert common.load_json_file(path).reason.startswith("m1.json: malformed JSON: ")
    assert [e.getMessage() for e in errors] == []


def test_a_copilot_image_whose_mime_type_is_not_text_draws_its_card(tmp_path, errors):
    # A Copilot CLI result's image with an object for `mimeType`: the page lowered it to pick the
    # image's type, and the card was drawn as "could not be displayed"
    root = tmp_path / "root"
    root.mkdir()
    rows = [{"type": "user.message", "data": {"content": "look"}},
            {"type": "assistant.message", "data": {"messageId": "m", "content": "", "toolRequests": [
                {"toolCallId": "c1", "name": "view", "arguments": {"path": "a.png"}}]}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True, "result": {
                "content": "an image", "contents": [{"type": "image", "data": "iVBORw0KGgo=",
                                                     "mimeType": {"x": 1}}]}}},
            {"type": "user.message", "data": {"content": "again", "attachments": [
                {"type": "blob", "data": "iVBORw0KGgo=", "mimeType": "image/png", "displayName": "shot"}]}}]
    (root / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from viewer.store import Store

    key = next(r.key for r in Store([root]).sessions())
    statuses = pages(root, tmp_path, key)
    assert set(statuses.values()) == {200}, {u: s for u, s in statuses.items() if s != 200}
    assert [e.getMessage() for e in errors] == []


# --- found by the fuzzer at stop 31 --------------------------------------------------------------

OPENHANDS_CLI = ROOT / "test_data" / "formats" / "openhands" / "store-cli" / "sessions"


@pytest.mark.parametrize("first, kind", [
    (b'{"id": 0, "timestamp": "2025-06-02T10:00:01", "source": "agent<b>", "action": "system"}', "unknown"),
    (b'{"id": 0, "timestamp": "2025-06-02T10:00:01", "source": "agent", "action": "sys', "unparsed"),
], ids=["a source it does not know", "cut short"])
def test_an_openhands_cli_conversation_whose_first_event_is_damaged_is_still_listed(first, kind, tmp_path,
                                                                                       errors):
    # A CLI conversation (no metadata.json) is told from its events/0.json; the other event files
    # are never listed alone. A first event that was no OpenHands event (a source it does not
    # know, a file cut short) made the whole conversation vanish from the list
    import shutil

    root = tmp_path / "root"
    shutil.copytree(OPENHANDS_CLI, root / "sessions")
    conv = next((root / "sessions").iterdir())
    (conv / "events" / "0.json").write_bytes(first)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    c = app.test_client()
    listed = c.get("/sessions.json").get_json()
    keys = [s["key"] for s in (listed["sessions"] if isinstance(listed, dict) else listed)]
    assert len(keys) == 1
    page = c.get(f"/s/{keys[0]}").get_data(as_text=True)
    assert "Fix the failing test in calc.py" in page  # the events after the damaged one
    events = c.get(f"/s/{keys[0]}.json?hidden=1").get_json()["events"]
    assert [e["kind"] for e in events[1:3]] == [kind, "message"]  # the damaged event is a card
    app.extensions["viewer"].fts.close()
    assert set(pages(root, tmp_path, keys[0]).values()) == {200}
    assert [e.getMessage() for e in errors] == []


FORMATS = ROOT / "test_data" / "formats"


@pytest.mark.parametrize("main", ["openhands/store-calc/sessions/3f2a9c1e7b5d4e08a6c2f1b0d9e8c7a6/metadata.json",
                                  "openhands_v1/cli-calc/6b1c0e3f9a2d4c58b7e1f0a4d3c2b1a0/base_state.json",
                                  "opencode/data/storage/session/4b0ea68d7af9a6031a7ffda7ad66e0cb83315750/"
                                  "ses_53a1c2d3e020nNoOpPqQrRsS.json",
                                  "wolo/golden-mbos-wolo-0.13.3/sessions/424b1fee/session.json"],
                         ids=["OpenHands metadata.json", "OpenHands V1 base_state.json", "OpenCode session file",
                              "Wolo session.json"])
@pytest.mark.parametrize("damage", [b'"text"', b"42", b"\x00\x01\x02 binary"], ids=["a string", "a number", "binary"])
def test_a_folder_session_whose_main_file_is_not_json_records_is_still_listed(main, damage, tmp_path, errors):
    # A session kept as a folder of files is claimed by its layout, its main file damaged or not
    # ("its other files remain"), but a main file that did not open like JSON records (a JSON
    # string or number, binary bytes) was refused first: the whole conversation was left out of
    # the list, its events and messages with it
    import os
    import shutil
    import time

    from viewer.formats import detect

    top = main.split("/")[0]
    shutil.copytree(FORMATS / top, tmp_path / "root" / top)
    path = tmp_path / "root" / main
    path.write_bytes(damage)
    os.utime(path, (time.time() - 3600,) * 2)  # (quiet: not a file being written)
    assert detect.detect_file(path).format == top
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    c = app.test_client()
    listed = c.get("/sessions.json").get_json()["sessions"]
    key = next(s["key"] for s in listed if s["path"] == str(path))
    events = c.get(f"/s/{key}.json").get_json()["events"]
    assert sum(e["kind"] == "message" for e in events) >= 2  # its prompts and replies are shown
    app.extensions["viewer"].fts.close()
    assert set(pages(tmp_path / "root", tmp_path, key).values()) == {200}
    assert [e.getMessage() for e in errors] == []


def test_calls_whose_input_was_all_cached_are_priced():
    # A bucket of calls with no uncached input: its per-call average input ((input + cache read
    # + cache write) / calls) could round below the cache read and write averaged apart, which
    # genai-prices refuses ("exceeds input_tokens"): the model was listed as unpriced and the
    # session's cost left it out
    from viewer.usage import priced

    import random

    r = random.Random(5)
    for calls, read, write in [(3, 547263, 548872)] + [
            (r.randrange(1, 40), r.randrange(10**7), r.randrange(10**7)) for _ in range(300)]:
        found = priced({"buckets": [["t0", "claude-sonnet-4-5", 480000, 0, calls, 0, 100, read, write]]})
        assert found["unpriced"] == [] and found["cost"] > 0, (calls, read, write)


def test_a_line_with_a_long_run_of_backslashes_and_a_cut_emoji_reads(tmp_path):
    # A line orjson refuses for a lone surrogate escape is mended by a pattern that took a run of
    # backslashes as the start of an escape from each of its backslashes in turn: quadratic, a
    # line with a million of them (JSON kept as text, escaped again and again) never finished
    # reading (the fuzzer's case hung, uninterruptibly, in the regular expression). Read in a
    # child process, so that a hang fails the test instead of stopping the suite
    import subprocess
    import sys

    line = {"type": "assistant", "content": "\\" * 1_000_000 + " cut \ud83d", "timestamp": 1761073200.0,
            "session_id": "s", "message_id": "m1"}
    legion(tmp_path / "s", LEGION_USER, line)
    code = ("import sys; from viewer.index import SessionIndex; from viewer import reader\n"
            "idx = SessionIndex(sys.argv[1]).build()\n"
            "with open(sys.argv[1], 'rb') as f:\n"
            "    th = idx.threads['main']\n"
            "    rec = reader.read_line(f, th.offsets[1], th.lengths[1])\n"
            "    text = rec['content']\n"
            "    text = reader.read_cut(f, text) if isinstance(text, reader.CutStr) else text\n"
            "    print(idx.summary.unparsed, idx.summary.messages, len(text), text[-7:])")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s" / "messages.jsonl")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split(None, 3) == ["0", "2", "1000006", "\\ cut \ufffd\n"], done.stderr


def _in_child(code: str, *args: str) -> str:
    """What `code` prints, run in a child process: a reader that never finishes (a pattern
    backtracking in C, which no alarm interrupts) fails the test instead of stopping the suite."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


_RUN = ("import sys; from viewer.index import SessionIndex; from viewer.timeline import load_events\n"
        "idx = SessionIndex(sys.argv[1], *sys.argv[2:]).build()\n"
        "for ev in load_events(idx, 'main', 0, len(idx.threads['main'])):\n"
        "    print(ev.author or ev.role, ev.state, [b.text[-40:] for b in ev.blocks if b.kind in ('text', 'notice')])\n")


def test_a_cline_reply_with_a_long_run_of_blanks_reads(tmp_path):
    # Cline's "[Response interrupted by user]" was searched for with a pattern that began with
    # blanks: from each of a reply's million spaces (a model's degenerate output) in turn
    doc = [{"role": "user", "content": [{"type": "text", "text": "<task>\nhi\n</task>"}]},
           {"role": "assistant", "content": [{"type": "text", "text": "ok" + " " * 1_000_000 + "x"},
                                             {"type": "text", "text": "\n\n[Response interrupted by user]"}]}]
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "api_conversation_history.json").write_text(json.dumps(doc))
    out = _in_child(_RUN, str(tmp_path / "task" / "api_conversation_history.json"), "anthropic-messages").splitlines()
    assert out[-1] == "assistant interrupted ['" + " " * 39 + "x', 'response interrupted by the user']"


def test_a_teammate_message_with_a_long_attribute_name_reads(tmp_path):
    # a teammate message's attributes were read by a pattern that took a run of letters as a
    # name from each of its letters in turn: a million of them never finished
    line = {"parentUuid": None, "uuid": "u2", "sessionId": "s1", "timestamp": "2026-04-19T10:14:00.000Z",
            "type": "user", "message": {"role": "user", "content": (
                '<teammate-message teammate_id="alice" ' + "a" * 1_000_000 + ' summary="done">\n'
                "All pass.\n</teammate-message>")}}
    (tmp_path / "s1.jsonl").write_text(json.dumps(line) + "\n")
    assert _in_child(_RUN, str(tmp_path / "s1.jsonl")).splitlines() == [
        "teammate alice None ['done', 'All pass.']"]


def test_a_marsys_tool_call_repr_with_a_long_word_reads(tmp_path):
    # a snapshot's `ToolCallMsg(...)` repr was read by a pattern that took a run of letters as an
    # argument's name from each of its letters in turn (a long base64 value, unquoted by damage)
    code = ("from viewer.formats import marsys; from viewer.model import Ref\n"
            "ev = marsys.event({'role': 'assistant', 'content': None, 'name': 'A', 'timestamp': 1.0,"
            " 'tool_calls': [\"ToolCallMsg(id='c9', name='fetch', data=\" + 'Q' * 1_000_000 + \")\"]},"
            " Ref('main', 1, 0, 1))\n"
            "print([(u.id, u.name) for u in ev.tool_uses()])")
    assert _in_child(code).strip() == "[('c9', 'fetch')]"


def _damage_page(db, which: str) -> None:
    """Overwrite the page of a (closed) SQLite database that the query `which` names (its
    `dbstat` page number), and date the file an hour back: a damaged database at rest."""
    with sqlite3.connect(db) as con:
        (page,) = con.execute(which).fetchone()
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(db, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\xff" * page_size)
    os.utime(db, (time.time() - 3600,) * 2)


def test_a_damaged_session_of_an_opencode_database_leaves_its_other_sessions_readable(tmp_path, errors):
    # After a few asks, the identities of all of a database's sessions are taken at once; one
    # session whose rows sit on a damaged page made that whole pass fail, and every session of
    # the database answered 'Cannot read … damaged' from then on
    make_db = opencode_make_db()
    db = tmp_path / "root" / "opencode.db"
    db.parent.mkdir()
    con = make_db.build(db, keep_open=True)
    damaged, healthy = "ses_53a1c2d3e020nNoOpPqQrRsS", "ses_53a1c2d3e001aAbBcCdDeEfFgG"
    (mid,) = con.execute("SELECT id FROM message WHERE session_id = ? ORDER BY time_created DESC LIMIT 1",
                         (damaged,)).fetchone()
    for i in range(40):  # parts of its own, on pages of their own
        make_db.write_part(con, damaged, mid, {"type": "text", "text": "x" * 3000, "time": {"start": 1}},
                           f"prt_zz{i:04d}")
    cols = [r[1] for r in con.execute("PRAGMA table_info(session)")]
    for n in range(4):  # more sessions than are asked one by one
        con.execute(f"INSERT INTO session ({', '.join(cols)}) SELECT "
                    + ", ".join("?" if c in ("id", "title") else c for c in cols)
                    + " FROM session WHERE id = ?", (f"ses_extra{n}", f"Extra session {n}", healthy))
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    # the last leaf page of the part table: the new parts' alone
    _damage_page(db, "SELECT max(pageno) FROM dbstat WHERE name = 'part' AND pagetype = 'leaf'")
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    c = app.test_client()
    for _ in range(3):
        assert c.get("/").status_code == 200
    page = c.get(f"/s/opencode.db~{damaged}")
    assert page.status_code == 503 and "damaged" in page.get_data(as_text=True)  # said plainly
    for _ in range(3):
        assert c.get("/").status_code == 200
    for n in range(4):
        page = c.get(f"/s/opencode.db~ses_extra{n}")
        assert page.status_code == 200 and f"Extra session {n}" in page.get_data(as_text=True)
    page = c.get(f"/s/opencode.db~{healthy}")
    assert page.status_code == 200 and "Fix divide-by-zero in calc.py" in page.get_data(as_text=True)
    app.extensions["viewer"].fts.close()


def test_a_jsonl_session_whose_first_line_is_a_long_text_is_listed(tmp_path, errors):
    # Discovery judges a JSONL file from its first 16 KB: a first line longer than that which is
    # no record (a long JSON string, a banner) was all it saw, and the session was skipped as
    # 'not a transcript' though its records follow (the page, which reads more, showed them)
    legion(tmp_path / "root" / "s", LEGION_USER)
    path = tmp_path / "root" / "s" / "messages.jsonl"
    path.write_text(json.dumps("long " * 10_000) + "\n" + path.read_text())
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    c = app.test_client()
    assert [s["key"] for s in c.get("/sessions.json").get_json()["sessions"]] == ["s"]
    kinds = [e["kind"] for e in c.get("/s/s.json").get_json()["events"]]
    assert kinds == ["unknown", "message"]  # the long line is a card of its own, the prompt follows
    app.extensions["viewer"].fts.close()
    assert [e.getMessage() for e in errors] == []


def test_an_opencode_database_whose_sub_agent_index_is_damaged_still_shows_its_sessions(tmp_path, errors):
    # A damaged page of the index OpenCode's database looks sub-agents up by (session_parent_idx):
    # the sessions still read, but the search for their sub-agents raised, which the adapter's
    # safety net logged as a failure of the viewer's on every read
    db = tmp_path / "root" / "opencode.db"
    db.parent.mkdir()
    opencode_make_db().build(db)
    _damage_page(db, "SELECT pageno FROM dbstat WHERE name = 'session_parent_idx'")
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    c = app.test_client()
    assert c.get("/").status_code == 200
    page = c.get("/s/opencode.db~ses_53a1c2d3e001aAbBcCdDeEfFgG")
    assert page.status_code == 200 and "Fix divide-by-zero in calc.py" in page.get_data(as_text=True)
    listed = [s["key"] for s in c.get("/sessions.json").get_json()["sessions"]]
    assert "opencode.db~ses_53a1c2d3e00bhHiIjJkKlLmM" in listed  # its sub-agent, listed on its own
    app.extensions["viewer"].fts.close()
    assert [e.getMessage() for e in errors] == []


def test_a_session_whose_first_record_is_longer_than_detections_head_is_still_its_format(tmp_path):
    # A first record of more than detection's 256 KB look (a prompt with a file pasted in, an
    # image's base64): detection saw no whole line, found no record and called the file 'unknown',
    # so every record of a legion session showed as a generic JSON card
    from viewer.formats import detect

    src = (ROOT.parent / "shared" / "corpus" / "legion" / "synthetic-fixture-tool_use" / "messages.jsonl")
    lines = src.read_text().splitlines()
    first = json.loads(lines[0])
    first["content"] = "pasted " * 60_000  # 420 KB
    path = tmp_path / "s" / "messages.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    assert detect.detect_file(path).format == "legion"
    idx = SessionIndex(path).build()
    assert idx.format == "legion" and "unknown" not in idx.threads["main"].kinds
    # a first record longer than all detection reads on for: the lines after it are looked at
    first["content"] = "pasted " * 400_000  # 2.8 MB, past a LONG_HEAD of 1 MB
    path.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    monkey = pytest.MonkeyPatch()
    monkey.setattr(detect, "LONG_HEAD", 1 << 20)
    try:
        assert detect.detect_file(path).format == "legion"
    finally:
        monkey.undo()
    # a one-line document longer than the head is still read as one
    doc = tmp_path / "d" / "conversation.json"
    doc.parent.mkdir()
    doc.write_text(json.dumps([{"role": "user", "content": "x" * 300_000}, {"role": "assistant", "content": "y"}]))
    assert detect.detect_file(doc) == detect.Detected("openai-chat", "document")
    traj = tmp_path / "t" / "run.traj.json"
    traj.parent.mkdir()
    traj.write_text(json.dumps({"info": {"x": "z" * 300_000}, "trajectory_format": "mini-swe-agent-1.1",
                                "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert detect.detect_file(traj) == detect.Detected("openai-chat", "document")


def test_a_record_with_no_type_among_claude_code_lines_is_shown_not_hidden(tmp_path):
    # A file of mixed formats (found by the fuzzer's other-format-line mutation): a Claude Code
    # bookkeeping line and another format's message (an AgentScope Msg: no `type`) — the message
    # was hidden as a Claude Code "unknown line type", which is for a newer CLI's line types
    from viewer.formats import claude_code
    from viewer.model import Ref

    msg = {"name": "Coder", "role": "assistant", "content": [{"type": "text", "text": "Here is the chart."}],
           "timestamp": "2026-03-04 14:01:18"}
    ev = claude_code.event(msg, Ref("main", 2, 0, 1))
    assert ev.kind == "unknown" and not ev.hidden
    newer = claude_code.event({"type": "brand-new-bookkeeping", "sessionId": "s", "uuid": "u"}, Ref("main", 3, 0, 1))
    assert newer.hidden and newer.hidden_reason == "unknown line type"
    path = tmp_path / "s" / "messages.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"type": "mode", "mode": "normal", "sessionId": "26d8d51d"}) + "\n"
                    + json.dumps(msg) + "\n")
    idx = SessionIndex(path).build()
    assert idx.format == "claude-code" and list(idx.threads["main"].hidden) == [1, 0]


def test_a_dataset_with_one_marsys_message_among_its_lines_stays_a_dataset(tmp_path):
    # A fine-tuning dataset (a conversation per line) with another format's message among its
    # lines (found by the fuzzer's other-format-line mutation): MARSYS's one mark made it MARSYS's,
    # credited with each dataset line's OpenAI score as if the lines were its messages — but they
    # are whole conversations MARSYS cannot read: every conversation showed as a JSON card
    src = (ROOT / "test_data" / "formats" / "openai-chat" / "finetune-dataset" / "finetune.jsonl")
    lines = src.read_text().splitlines()
    lines.insert(1, json.dumps({"role": "user", "content": "Find out when Python 3.13 was released.",
                                "message_id": "m-c-user", "name": None, "tool_calls": None,
                                "agent_calls": None, "structured_data": None, "images": None,
                                "tool_call_id": None, "reasoning_details": None}))
    path = tmp_path / "s" / "finetune.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    from viewer.formats import detect

    assert detect.detect_file(path).format == "openai-chat"
    from viewer.timeline import load_events

    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert any(e.role == "assistant" and "Paris, as if everyone" in e.text() for e in evs)
    assert any("Python 3.13" in json.dumps(e.blocks, default=repr) for e in evs)  # (shown too)


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z", "0001-01-01 00:00:00",
                                   "9999-12-31T23:59:59Z", "1900-01-01T00:00:00+05:00"])
def test_a_time_no_transcript_was_written_at_is_no_time(stamp, tmp_path):
    # Go's zero time (0001-01-01T00:00:00Z, what a Go writer leaves in an unset time field) and
    # other years no transcript was written in (found by the fuzzer's timestamp mutation): read
    # as times, they made the archive's statistics fail ("year 0 is out of range": 500 on /stats)
    from viewer import timestamps

    assert timestamps.to_epoch(stamp) is None and timestamps.fast_epoch(stamp) is None
    assert timestamps.parse(stamp).raw == stamp
    src = ROOT / "test_data" / "formats" / "agentscope" / "golden-py1.0.21" / "trip.msgs.jsonl"
    recs = [json.loads(ln) for ln in src.read_text().splitlines()]
    recs[0]["timestamp"] = stamp
    path = tmp_path / "root" / "s" / "trip.msgs.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    os.utime(path, (time.time() - 3600,) * 2)
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False})
    c = app.test_client()
    for url in ("/stats", "/stats.json", "/", "/s/s~trip.msgs", "/s/s~trip.msgs/usage"):
        assert c.get(url).status_code == 200, url
    app.extensions["viewer"].fts.close()


def test_one_codex_line_among_agents_sdk_items_keeps_them_the_sdk_s(tmp_path):
    # An Agents SDK items file (`to_input_list()`, one item per line) with one Codex envelope line
    # among its items (the fuzzer's other-format-line mutation): Codex's envelope mark credited it
    # with every item's OpenAI score, as the bare Codex layout's marks do, and the file read as
    # Codex's: the handoff was lost and the agent after it went unnamed
    src = ROOT / "test_data" / "formats" / "openai-chat" / "agents-sdk-0.24.0-handoff" / "session_items.jsonl"
    lines = src.read_text().splitlines()
    lines.insert(3, json.dumps({"timestamp": "2026-03-02T14:00:03.020Z", "type": "response_item",
                                "payload": {"type": "message", "role": "user", "content": [
                                    {"type": "input_text", "text": "List the modules that import shop.cart."}]}}))
    path = tmp_path / "s" / "items.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    from viewer.formats import detect
    from viewer.timeline import load_events

    assert detect.detect_file(path).format == "openai-chat"
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert [e.author for e in evs if e.role == "assistant"][-1] == "Refunds"
    assert any("shop.cart" in json.dumps(e.blocks, default=repr) for e in evs)  # (shown too)


def _shell_results(tmp_path, *outputs):
    """A test client over an OpenAI chat whose one shell call (call_1) got these results, in order."""
    path = tmp_path / "s" / "chat.json"
    path.parent.mkdir()
    path.write_text(json.dumps([
        {"role": "user", "content": "Run the tests."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "shell", "arguments": json.dumps({"command": "pytest -q"})}}]},
        *({"role": "tool", "tool_call_id": "call_1", "content": out} for out in outputs)]))
    return create_app({"ROOTS": [str(path)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                       "INDEX_ALL": False}).test_client()


def test_a_second_differing_result_of_a_call_is_shown_where_it_is(tmp_path):
    # A call's result written twice, the second differing (a line duplicated and changed: found by
    # the fuzzer in a Goose session, a new item in the copy): the call's card shows the first, and
    # the second said "result of shell · shown with the call" — shown nowhere, only in the raw view
    c = _shell_results(tmp_path, "first run: 2 failed", "second run: all passed")
    html = c.get("/s/chat").get_data(as_text=True)
    assert html.count("first run: 2 failed") == 1 and "second run: all passed" in html
    second = html[html.index('id="m-L4"'):]
    assert "another result of" in second and second.index("second run: all passed") < second.index("</li>")
    md = c.get("/s/chat/export?format=md").get_data(as_text=True)
    assert "first run: 2 failed" in md and "second run: all passed" in md
    assert "**Another result** of [shell](#m-" in md


def test_a_result_written_twice_word_for_word_is_said_once(tmp_path):
    # the same line written twice: the copy says so in one line, its output not drawn again
    c = _shell_results(tmp_path, "3 passed in 0.2s", "3 passed in 0.2s")
    html = c.get("/s/chat").get_data(as_text=True)
    assert html.count("3 passed in 0.2s") == 1
    copy = html[html.index('id="m-L4"'):]
    assert "written again" in copy[:copy.index("</li>")]
    md = c.get("/s/chat/export?format=md").get_data(as_text=True)
    assert md.count("3 passed in 0.2s") == 1 and "*The result of [shell](#m-" in md


@pytest.mark.parametrize("record, shown", [
    # an SDK class not known here whose `data` is no object: its value was dropped, the card '{}'
    ({"_type": "FutureNoteMessage", "timestamp": 1761073234.0, "session_id": "s", "message_id": "m2",
      "data": "a note only a newer SDK writes"}, "a note only a newer SDK writes"),
    # one with no `data` at all, its fields on the record itself (a flat dump of a class whose
    # fields are none of those the flat dumps are known by)
    ({"_type": "FutureNoteMessage", "timestamp": 1761073234.0, "session_id": "s", "message_id": "m2",
      "note": "a field only a newer SDK writes"}, "a field only a newer SDK writes"),
])
def test_a_legion_record_of_an_unknown_class_shows_what_it_holds(record, shown, tmp_path, errors):
    # found by the fuzzer's newer-writer mutation: an unknown class is a card of its fields
    legion(tmp_path / "root" / "s", LEGION_USER, record)
    c = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                    "WATCH": False, "INDEX_ALL": False}).test_client()
    assert shown in c.get("/s/s").get_data(as_text=True)
    assert shown in c.get("/s/s/export?format=md").get_data(as_text=True)
    assert [e.getMessage() for e in errors] == []


def test_an_api_log_of_both_apis_calls_shows_every_call(tmp_path, errors):
    # a log whose first call is an Anthropic one (claude-trace's line) and whose other calls are
    # OpenAI ones (LiteLLM's): detection calls it OpenAI's by most of its calls, the reading
    # took it for the first call's API and no reader claimed it — the page was one card of the
    # reader's inner state ('<viewer.formats.wrapped.Fold object at 0x…>'), every call lost
    trace = (ROOT / "test_data/formats/anthropic-messages/claude-trace/log-2025-11-25-06-00-00.jsonl")
    litellm = ROOT / "test_data/formats/openai-chat/request-response/litellm_payloads.jsonl"
    (tmp_path / "root").mkdir()
    log = tmp_path / "root" / "proxy.jsonl"
    log.write_bytes(trace.read_bytes().splitlines(keepends=True)[1] + litellm.read_bytes())
    c = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                    "WATCH": False, "INDEX_ALL": False}).test_client()
    for url in ("/s/proxy", "/s/proxy/export?format=md"):
        page = c.get(url).get_data(as_text=True)
        assert "Which Python version is installed?" in page and "How many lines does main.py have?" in page
        assert "Fold object" not in page
    assert [e.getMessage() for e in errors] == []


def test_a_wolo_session_whose_files_begin_with_a_byte_order_mark_reads(tmp_path, errors):
    # a session.json (and a message file) saved with a UTF-8 byte order mark, as a Windows editor
    # saves it: the session's metadata was an unparsed card — found by the fuzzer ('BOM on the file')
    import shutil

    src = ROOT / "test_data/formats/wolo/golden-mbos-wolo-0.13.3/sessions/5108d45a"
    folder = tmp_path / "root" / "5108d45a"
    shutil.copytree(src, folder)
    for f in [folder / "session.json", *sorted((folder / "messages").glob("*.json"))[:1]]:
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    idx = SessionIndex(folder / "session.json").build()
    assert idx.summary.format == "wolo" and idx.summary.unparsed == 0
    assert "Double-check the callers of divide()." in pages_text(tmp_path, "5108d45a~session")
    assert [e.getMessage() for e in errors] == []


def pages_text(tmp_path, key: str) -> str:
    c = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                    "WATCH": False, "INDEX_ALL": False}).test_client()
    return c.get(f"/s/{key}").get_data(as_text=True) + c.get(f"/s/{key}/export?format=md").get_data(as_text=True)


def test_one_marsys_trace_span_among_agents_sdk_items_keeps_them_the_sdk_s(tmp_path):
    # An Agents SDK items file with one MARSYS trace span line first (the fuzzer's other-format-
    # line mutation): the span, a MARSYS mark, credited MARSYS with every item's OpenAI score, as
    # its memory files' marks do, and the file read as MARSYS's: the handoff lost
    src = ROOT / "test_data" / "formats" / "openai-chat" / "agents-sdk-0.24.0-handoff" / "session_items.jsonl"
    span = (ROOT / "test_data" / "formats" / "marsys" / "trace-ndjson"
            / "01JV3K9Q4Z7W2M8N5P6R0S1T2U.ndjson").read_text().splitlines()[0]
    path = tmp_path / "s" / "items.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join([span, *src.read_text().splitlines()]) + "\n")
    from viewer.formats import detect
    from viewer.timeline import load_events

    assert detect.detect_file(path).format == "openai-chat"
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert [e.author for e in evs if e.role == "assistant"][-1] == "Refunds"


def test_plain_messages_under_one_dataset_line_are_all_read(tmp_path, errors):
    # Anthropic message lines under one fine-tuning dataset line (the fuzzer's other-format-line
    # mutation): detection names the file by most of its lines (Anthropic's), whose reader holds
    # no dataset wrappers — the page was one card of the reading's inner state
    # ('<viewer.formats.wrapped.Fold object at 0x…>'), every message lost
    data = ROOT / "test_data/formats"
    (tmp_path / "root").mkdir()
    mixed = tmp_path / "root" / "mixed.jsonl"
    mixed.write_bytes(
        (data / "openai-chat/finetune-dataset/finetune.jsonl").read_bytes().splitlines(keepends=True)[0]
        + (data / "anthropic-messages/jsonl-tool-use-thinking/messages.jsonl").read_bytes())
    idx = SessionIndex(mixed).build()
    assert idx.summary.format == "anthropic-messages" and idx.summary.unparsed == 0
    assert idx.summary.tool_calls == 3
    text = pages_text(tmp_path, "mixed")
    assert "What's the capital of France?" in text  # the dataset line's
    assert "Check whether the build passes" in text and "make build" in text  # the messages'
    assert "Fold object" not in text
    assert [e.getMessage() for e in errors] == []


def test_a_message_of_a_new_role_holding_only_new_fields_shows_them(tmp_path, errors):
    # a role this reader does not know (a critic's verdict) with neither content nor calls: the
    # card was an empty message, the record's fields lost to the page and the export
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
        {"role": "user", "content": "Is 2+2 four?"}, {"role": "assistant", "content": "Yes."},
        {"role": "critic", "verdict": "correct-and-brief", "score": 3,
         "timestamp": "2025-10-21T10:00:00Z"})))
    text = pages_text(tmp_path, "judged")
    assert "correct-and-brief" in text and text.count("correct-and-brief") >= 2  # page and export
    assert [e.getMessage() for e in errors] == []
