"""A big session kept as one JSON document (an OpenAI message list, an object holding one) opens
like a JSONL session: discovery decides it by its beginning, its first screen is read from the
records it shows while the rest is indexed in the background, the index reads it a record at a
time (memory stays flat) and a page reads each record again from its own bytes (docstream.py)."""

from __future__ import annotations

import json
import os
import random

import orjson
import pytest

from viewer import docstream, partial, reader
from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.timeline import load_events, raw_record

from conftest import held_app

# strings a naive reader of JSON would stumble on: brackets, a record's end and a comma, quotes,
# escapes and backslashes before quotes, unicode (escaped and not), a lone surrogate escape
TRICKY = ['a [bracket] and {brace}', 'she said "}," and left', 'back\\slash \\"quoted\\" ]},{',
          'üñíçødé — 日本語 🙂', 'line\nbreak\ttab', '"]},{"role": "fake", "content": "x"}', "}}]]", ""]


def messages(count: int, seed: int = 7, pad: int = 0):
    """An OpenAI chat conversation: prompts, tool calls and their results, tricky strings."""
    r = random.Random(seed)
    out = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(count):
        text = f"step {n}: " + r.choice(TRICKY) + " " + "word " * r.randint(5, 60) + "x" * pad
        cid = f"call_{n:06d}"
        out += [{"role": "user", "content": text},
                {"role": "assistant", "content": None, "tool_calls": [{"id": cid, "type": "function",
                 "function": {"name": "shell", "arguments": json.dumps({"cmd": 'ls "[x]"'})}}]},
                {"role": "tool", "tool_call_id": cid, "content": f"output of step {n} " + r.choice(TRICKY)},
                {"role": "assistant", "content": [{"type": "text", "text": "Done {" + str(n) + "}"}]}]
    return out


def write(path, msgs, shape="array", pretty=True):
    """The messages as one JSON document: a bare array, or an object holding it beside others."""
    sep = ",\n  " if pretty else ","
    body = "[" + ("\n  " if pretty else "") + sep.join(
        json.dumps(m, ensure_ascii=i % 2 == 0) for i, m in enumerate(msgs)) + "]"
    if shape == "object":
        body = '{"model": "gpt-4o", "note": "a [tricky] \\"member\\"", "messages": ' + body + ', "tail": {"k": [1, 2]}}'
    path.write_text(body + "\n", encoding="utf-8")
    return path


# --- reading a document a record at a time ---------------------------------------------------------


@pytest.mark.parametrize("shape", ["array", "object"])
@pytest.mark.parametrize("pretty", [True, False])
def test_streamed_parts_are_the_document_read_whole(tmp_path, shape, pretty):
    path = write(tmp_path / "doc.json", messages(300), shape, pretty)
    data = path.read_bytes()
    with open(path, "rb") as f:
        parts = list(docstream.parts(f, 0, len(data)))
        f.seek(0)
        doc, whole = docstream.assemble(docstream.parts(f, 0, len(data)))
    assert whole and doc == orjson.loads(data)
    items = [p for p in parts if p.item]
    for p in items:  # each record's bytes are exactly the record
        assert orjson.loads(data[p.offset:p.offset + p.length]) == p.value
    assert [p.path for p in items][:2] == (["[0]", "[1]"] if shape == "array" else ["messages[0]", "messages[1]"])


def test_a_record_longer_than_a_huge_line_is_skimmed_in_place(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "HUGE_LINE", 64 << 10)
    monkeypatch.setattr(reader, "STRING_CAP", 16 << 10)
    monkeypatch.setattr(reader, "PREVIEW", 1 << 10)
    msgs = messages(5)
    msgs[3]["content"] = "long [\"}]," * 20000
    path = write(tmp_path / "doc.json", msgs)
    with open(path, "rb") as f:
        items = list(docstream.parts(f, 0, path.stat().st_size))
    assert [p.path for p in items] == [f"[{i}]" for i in range(len(msgs))]
    cut = items[3].value["content"]
    assert isinstance(cut, reader.CutStr) and cut.startswith('long ["}],')
    assert items[4].value == msgs[4]


@pytest.mark.parametrize("cut", [0.5, 0.999])
def test_a_document_cut_short_gives_its_records_then_what_could_not_be_read(tmp_path, cut):
    path = write(tmp_path / "doc.json", messages(40), "object")
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * cut)])
    with open(path, "rb") as f:
        parts = list(docstream.parts(f, 0, path.stat().st_size))
    assert parts[-1].path is None and isinstance(parts[-1].value, reader.BadLine)
    assert "ends inside a record" in parts[-1].value.reason
    assert parts[-1].offset + parts[-1].length == path.stat().st_size
    assert sum(p.item for p in parts) > 20 * cut


def test_a_malformed_record_stops_the_reading_with_its_reason(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text('[{"role": "user", "content": "a"},\n {"role": "user", "content": tru},\n {"role": "x"}]')
    with open(path, "rb") as f:
        parts = list(docstream.parts(f, 0, path.stat().st_size))
    assert parts[0].value == {"role": "user", "content": "a"}
    assert parts[1].path is None and "malformed JSON" in parts[1].value.reason
    assert len(parts) == 2


# --- discovery and the index ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A 24 MB OpenAI message list, as an object holding it, above the size read whole."""
    root = tmp_path_factory.mktemp("bigdoc")
    path = write(root / "chat.json", messages(6000, pad=3000), "object")
    assert path.stat().st_size > 20 << 20
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return root, path


def _no_whole_read(monkeypatch):
    def whole(*_a, **_k):
        raise AssertionError("the whole document was read")
    monkeypatch.setattr(detect, "read_document", whole)
    monkeypatch.setattr(reader, "skim", whole)


def test_a_big_document_is_detected_from_its_beginning(big, monkeypatch):
    _no_whole_read(monkeypatch)
    found = detect.detect_file(big[1])
    assert (found.format, found.mode) == ("openai-chat", "document")


def test_a_big_document_is_indexed_and_shown_a_record_at_a_time(big, monkeypatch):
    path = big[1]
    whole = SessionIndex(str(path))
    whole._whole = True  # (as it was read before: whole)
    whole.build()
    wt = whole.threads["main"]
    view = lambda evs: [(e.id, e.kind, e.role, e.blocks) for e in evs]  # noqa: E731
    windows = {lo: view(load_events(whole, "main", lo, lo + 50)) for lo in (0, 12000, 23950)}
    raw = json.loads(raw_record(whole, wt.ids[5])[0])
    _no_whole_read(monkeypatch)
    idx = SessionIndex(str(path)).build()
    th = idx.threads["main"]
    assert th.carried.get("spans") == "messages" and len(th) == len(wt) == 24001
    assert th.ids == wt.ids and th.kinds == wt.kinds and th.hidden == wt.hidden
    assert idx.summary.tool_calls == whole.summary.tool_calls == 6000
    assert idx.summary.title == whole.summary.title
    for lo, expected in windows.items():
        assert view(load_events(idx, "main", lo, lo + 50)) == expected
    assert json.loads(raw_record(idx, th.ids[5])[0]) == raw


def test_a_big_document_cut_short_shows_its_records_and_an_unparsed_card(tmp_path):
    path = write(tmp_path / "chat.json", messages(1500, pad=3000))
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - 5000])
    idx = SessionIndex(str(path)).build()
    th = idx.threads["main"]
    assert th.carried.get("spans") == "" and len(th) > 5900
    last = load_events(idx, "main", len(th) - 2, len(th))
    assert last[0].kind != "unparsed" and last[1].kind == "unparsed"
    assert "ends inside a record" in last[1].blocks[0].reason


def test_a_request_with_a_system_prompt_is_read_a_record_at_a_time_too(tmp_path, monkeypatch):
    """An Anthropic request (`system` beside `messages`: a record of its own, first) is read a
    record at a time as well (formats/streamed.py; tests/test_big_document_formats.py)."""
    msgs = []
    for i in range(4500):
        msgs += [{"role": "assistant", "content": [
                     {"type": "text", "text": f"turn {i} " + "w " * 400},
                     {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "ok"}]}]
    path = tmp_path / "req.json"
    path.write_text(json.dumps({"model": "claude", "system": "Be brief.", "messages": msgs}))
    assert path.stat().st_size > reader.HUGE_LINE
    _no_whole_read(monkeypatch)
    idx = SessionIndex(str(path)).build()
    th = idx.threads["main"]
    assert idx.summary.format == "anthropic-messages" and th.carried.get("spans") == "messages"
    assert len(th) == 9001 and th.paths[0] == "system" and idx.summary.tool_calls == 4500
    assert "Be brief." in str(load_events(idx, "main", 0, 1)[0].blocks)


# --- the first screen ----------------------------------------------------------------------------


def test_the_first_screen_of_a_big_document_comes_before_its_index(big, tmp_path, monkeypatch):
    root, path = big
    for app in held_app(root, tmp_path):
        c = app.test_client()
        r = c.get("/s/chat")
        r.close()
        html = r.get_data(as_text=True)
        store = app.extensions["viewer"].store
        build = store.running("chat")
        assert build is not None and not build.done and app.hold.held.wait(30)  # held, not done
        assert "reading-page" not in html and "step 0: " in html and "output of step 0 " in html
        assert 'id="index-progress"' in html and "Reading the whole session" in html
        first = partial.head(str(path))
        ids = first.threads["main"].ids
        app.hold.release.set()
        idx = store.build("chat").wait(60)
        assert idx.threads["main"].ids[:len(ids)] == ids  # links from the first screen still hold
        html = c.get("/s/chat").get_data(as_text=True)
        assert "Reading the whole session" not in html and "step 0: " in html


def test_the_first_screen_of_a_big_dataset_comes_from_its_first_lines(tmp_path):
    """A JSONL file of one conversation per line (an OpenAI fine-tuning file), read as one
    document: its first screen is read from its first lines, named as the whole read names them."""
    root = tmp_path / "ds"
    root.mkdir()
    path = root / "train.jsonl"
    with open(path, "w") as f:
        for n in range(9000):
            f.write(json.dumps({"messages": [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": f"Question {n}: " + TRICKY[n % len(TRICKY)] + " q" * 300},
                {"role": "assistant", "content": f"Answer {n}: " + "a " * 300}]}) + "\n")
    assert path.stat().st_size > 10 << 20
    os.utime(path, (1_700_000_000, 1_700_000_000))
    for app in held_app(root, tmp_path):
        c = app.test_client()
        r = c.get("/s/train")
        r.close()
        html = r.get_data(as_text=True)
        store = app.extensions["viewer"].store
        assert app.hold.held.wait(30) and not store.running("train").done
        assert "reading-page" not in html and "Question 0: " in html and "Answer 1: " in html
        assert "Reading the whole session" in html
        head = partial.head(str(path))
        first = head.threads["main"]
        assert head.region.hi <= 256 << 10  # a screen's lines, not a megabyte of them
        app.hold.release.set()
        idx = store.build("train").wait(60)
        th = idx.threads["main"]
        assert th.ids[:len(first)] == first.ids and list(th.offsets[:len(first)]) == list(first.offsets)
        html = c.get("/s/train").get_data(as_text=True)
        assert "Reading the whole session" not in html and "Question 0: " in html


def test_detection_reads_few_long_lines_by_their_shape(tmp_path, monkeypatch):
    """A session whose first lines are 8 MB prompts (a log pasted in): detection skims them (their
    shape decides), never decodes one whole."""
    path = tmp_path / "s.jsonl"
    with open(path, "w") as f:
        for i in range(3):
            f.write(json.dumps({"type": "user", "uuid": f"u-{i}", "sessionId": "s", "timestamp":
                                "2025-01-01T00:00:00Z", "message": {"role": "user", "content": "x" * (8 << 20)}}) + "\n")
    decoded = []
    real = reader.decode
    monkeypatch.setattr(reader, "decode", lambda data: decoded.append(len(data)) or real(data))
    found = detect.detect_file(path)
    assert found.format == "claude-code" and found.mode == "jsonl"
    assert all(n <= reader.STRING_CAP for n in decoded)
