"""What the mutation fuzzer (tests/fuzzer.py) found, each as the smallest file that showed it: the
session reads, every page of it answers, and nothing is logged at ERROR (the safety nets' log)."""

import io
import json
import logging
import re

import pytest

from viewer.index import SessionIndex
from viewer.web import create_app

from test_fuzz import Errors


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

    def line(i, sidechain=False):
        return json.dumps({"type": "user", "uuid": f"u{i}{sidechain}", "parentUuid": None,
                           "sessionId": "s", "isSidechain": sidechain,
                           "timestamp": f"2025-10-21T10:00:{i:02}Z",
                           "message": {"role": "user", "content": f"line {i}"}}) + "\n"

    (folder / "messages.jsonl").write_text(line(0))
    (folder / "subagents" / "agent-a1.jsonl").write_text("".join(line(i, True) for i in range(1, 99)))
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
