"""Big documents whose format makes its records from more than the list's elements — an Anthropic
request's `system`, Gemini CLI's session head, mini-swe-agent's text commands paired with their
observations, an Agents SDK RunState's items and handoffs, Cline's text results — are read a
record at a time too (formats/streamed.py): the same records, ids and cards as a whole read, with
the whole read made to fail; a key after the list (mini-swe-agent's `trajectory_format`, a
`system` written after the messages) still decides how they read; a page reads each record again
from its own bytes, also from the cache. A dataset's lines are indexed a stretch at a time, never
held whole, and read on as the file grows."""

from __future__ import annotations

import json
import os

import pytest

from viewer import partial, reader
from viewer.formats import detect, wrapped
from viewer.index import SessionIndex, summary_dump
from viewer.timeline import load_events, raw_record

from conftest import ROOT, held_app

RUN_STATE = ROOT / "test_data" / "formats" / "openai-chat" / "agents-sdk-0.24.0-handoff" / "run_state.json"
PAD = "lorem [ipsum] {dolor} \"sit\" amet, \\ üñí 日本 " * 12


def anthropic(n: int, system_after: bool = False, huge_first: bool = False) -> dict:
    """An Anthropic request: tool calls and results, Cline's text results ("[tool] Result:"), and
    a last `attempt_completion` nothing answered (marked once known to be the last)."""
    msgs = [{"role": "user", "content": "Fix the build. " + ("x" * (5 << 20) if huge_first else "")}]
    for i in range(n):
        msgs += [{"role": "assistant", "content": [{"type": "text", "text": f"turn {i} {PAD}"},
                                                   {"type": "tool_use", "id": f"toolu_{i}", "name": "execute_command",
                                                    "input": {"command": f"ls {i}"}}]},
                 {"role": "user", "content": [{"type": "text", "text": f"[execute_command for 'ls {i}'] Result:\nfile{i}.py {PAD}"}]}]
    msgs.append({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_end", "name": "attempt_completion",
                                                   "input": {"result": "done"}}]})
    doc = {"model": "claude-sonnet-4", "max_tokens": 4096}
    if not system_after:
        doc["system"] = "You are Cline, a careful engineer."
    doc["messages"] = msgs
    if system_after:
        doc["system"] = "You are Cline, a careful engineer."
    return doc


def gemini(n: int) -> dict:
    msgs = []
    for i in range(n):
        cid = f"call-{i}"
        msgs += [{"id": f"u{i}", "timestamp": "2025-08-01T10:00:00Z", "type": "user", "content": f"prompt {i} {PAD}"},
                 {"id": f"g{i}", "timestamp": "2025-08-01T10:00:05Z", "type": "gemini", "content": f"answer {i}",
                  "model": "gemini-2.5-pro", "tokens": {"input": 100, "output": 50, "cached": 0, "thoughts": 0, "tool": 0, "total": 150},
                  "toolCalls": [{"id": cid, "name": "run_shell_command", "args": {"command": "ls"}, "status": "success",
                                 "result": [{"functionResponse": {"id": cid, "name": "run_shell_command",
                                                                  "response": {"output": PAD}}}]}]},
                 # the history synced back: results the call holds already (hidden)
                 {"id": f"r{i}", "timestamp": "2025-08-01T10:00:06Z", "type": "user", "content": [
                     {"functionResponse": {"id": cid, "name": "run_shell_command", "response": {"output": "ok"}}}]}]
    return {"sessionId": "3f0c", "projectHash": "ab12", "startTime": "2025-08-01T10:00:00Z", "messages": msgs,
            "lastUpdated": "2025-08-01T12:00:00Z", "summary": "Listing files"}


def mini_swe(n: int) -> dict:
    """A mini-swe-agent 1.x trajectory as `save_traj` writes it: `info`, the messages, and the
    key that names the format after them."""
    msgs = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Fix the bug."}]
    for i in range(n):
        msgs += [{"role": "assistant", "content": f"THOUGHT {i}: {PAD}\n\n```bash\nls -la dir{i}\n```"},
                 {"role": "user", "content": f"<returncode>{i % 2}</returncode>\n<output>\n{PAD}\n</output>"}]
    return {"info": {"exit_status": "Submitted", "config": {"agent": {"step_limit": 0}}}, "messages": msgs,
            "trajectory_format": "mini-swe-agent-1"}


def run_state(n: int) -> dict:
    """An Agents SDK RunState as `to_json()` writes it, its run repeated: `model_responses` (as long
    as the items) before `generated_items`, `session_items` after — a handoff in each repeat."""
    doc = json.loads(RUN_STATE.read_text())
    items, responses, session = [], [], []
    for k in range(n):
        text = json.dumps([doc["generated_items"], doc["model_responses"], doc["session_items"]])
        text = text.replace("call_000", f"call_{k}_").replace("fc_000", f"fc_{k}_").replace("msg_000", f"msg_{k}_")
        g, m, s = json.loads(text)
        g[0]["raw_item"]["content"][0]["text"] += f" ({k}) {PAD}"
        items += g
        responses += m
        session += s
    out = {}
    for key, value in doc.items():
        out[key] = {"generated_items": items, "model_responses": responses, "session_items": session}.get(key, value)
    return out


SHAPES = {
    "anthropic": lambda: anthropic(5000),
    "anthropic-system-after-a-huge-first-message": lambda: anthropic(4000, system_after=True, huge_first=True),
    "gemini": lambda: gemini(3000),
    "mini-swe-agent": lambda: mini_swe(5000),
    "run-state": lambda: run_state(1500),
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def big(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("bigdocs")
    path = root / f"{request.param}.json"
    path.write_text(json.dumps(SHAPES[request.param](), indent=1))
    assert path.stat().st_size > reader.HUGE_LINE and path.stat().st_size > detect.DOC_HEAD
    os.utime(path, (1_700_000_000, 1_700_000_000))
    whole = SessionIndex(str(path))
    whole._whole = True  # (as it was read before: whole)
    whole.build()
    return request.param, path, Whole(whole)


class Whole:
    """A whole read of a document, and what its pages show (read before the whole read is made
    to fail)."""

    def __init__(self, idx: SessionIndex):
        self.idx, self.threads, self.summary, self.calls = idx, idx.threads, idx.summary, idx.calls
        th = idx.threads["main"]
        n = len(th)
        self.windows = {lo: _view(load_events(idx, "main", lo, lo + 40)) for lo in (0, n // 3, n - 40)}
        self.raw = {seq: json.loads(raw_record(idx, th.ids[seq])[0]) for seq in (0, 1, 2, n // 2, n - 1)}


def _no_whole_read(monkeypatch):
    """A whole read fails: the document's, or a skim of more than one record (a first message of
    5 MB is skimmed alone, as any record longer than reader.HUGE_LINE)."""
    def whole(*_a, **_k):
        raise AssertionError("the whole document was read")
    skim = reader.skim

    def one_record(f, offset, length, *a, **k):
        if length > 6 << 20:
            whole()
        return skim(f, offset, length, *a, **k)
    monkeypatch.setattr(detect, "read_document", whole)
    monkeypatch.setattr(reader, "skim", one_record)


def _view(events):
    return [(e.id, e.kind, e.role, e.author, e.hidden, e.blocks) for e in events]


def _same(idx: SessionIndex, whole: Whole) -> None:
    th, wt = idx.threads["main"], whole.threads["main"]
    assert len(th) == len(wt) and th.ids == wt.ids and th.paths == wt.paths
    assert th.kinds == wt.kinds and th.roles == wt.roles and th.authors == wt.authors and th.hidden == wt.hidden
    assert summary_dump(idx.summary) == summary_dump(whole.summary)
    for lo, expected in whole.windows.items():
        assert _view(load_events(idx, "main", lo, lo + 40)) == expected
    for seq, expected in whole.raw.items():
        assert json.loads(raw_record(idx, th.ids[seq])[0]) == expected


def test_a_big_document_is_read_a_record_at_a_time_as_a_whole_read_reads_it(big, monkeypatch):
    name, path, whole = big
    _no_whole_read(monkeypatch)
    idx = SessionIndex(str(path)).build()
    assert "spans" in idx.threads["main"].carried
    _same(idx, whole)
    # and from the cache (what marks a record is kept as JSON: tuples, sets, keys that are numbers)
    _same(SessionIndex.load(idx.dump()), whole)


def test_what_only_the_rest_of_the_document_says_is_there(big, monkeypatch):
    """The records a format makes of the document beyond its list's elements are those of a whole
    read: a system prompt, a session head, the calls of text commands and their results, the
    agent a handoff passed the turn to, Cline's results and its last `attempt_completion`."""
    name, path, whole = big
    _no_whole_read(monkeypatch)
    idx = SessionIndex(str(path)).build()
    th = idx.threads["main"]
    s = idx.summary
    if name.startswith("anthropic"):
        first = load_events(idx, "main", 0, 1)[0]
        assert th.paths[0] == "system" and "You are Cline" in str(first.blocks)
        assert s.tool_calls == 4001 if "after" in name else s.tool_calls == 5001
        last = load_events(idx, "main", len(th) - 1, len(th))[0]
        assert idx.calls.get("toolu_end").status == "completed", last
        assert idx.calls.get("toolu_7").status == "completed"  # (a text result paired)
    elif name == "gemini":
        assert th.paths[0] == "session" and th.hidden[3] == 1  # (r0: results the call holds)
    elif name == "mini-swe-agent":
        assert s.tool_calls == 5000 and idx.calls.get("messages[2].action").status == "completed"
        assert idx.calls.get("messages[4].action").status == "error"  # (returncode 1)
    else:
        assert th.paths[0] == "original_input[0]" and th.paths[1] == "generated_items[0].raw_item"
        assert {"Triage", "Refunds"} <= set(th.authors) and s.tool_calls == whole.summary.tool_calls > 1500


def test_the_first_screen_of_a_big_document_of_such_a_format_comes_before_its_index(big, tmp_path, monkeypatch):
    name, path, whole = big
    for app in held_app(path.parent, tmp_path):
        c = app.test_client()
        r = c.get(f"/s/{path.stem}")
        r.close()
        html = r.get_data(as_text=True)
        store = app.extensions["viewer"].store
        build = store.running(path.stem)
        assert build is not None and not build.done and app.hold.held.wait(30)  # held, not done
        assert "reading-page" not in html and 'id="index-progress"' in html
        first = partial.head(str(path)).threads["main"]
        assert first.ids == whole.threads["main"].ids[:len(first)] and len(first) > 10
        assert first.paths == whole.threads["main"].paths[:len(first)]
        app.hold.release.set()
        idx = store.build(path.stem).wait(120)
        assert idx.threads["main"].ids == whole.threads["main"].ids


def test_the_first_screen_of_a_run_state_does_not_read_its_model_responses(tmp_path, monkeypatch):
    """A RunState's items lie past its model responses (as long as they are): its first screen
    reads a little of them, then looks for its items past them (`index._jumping`) — what it reads
    does not grow with the file — and shows the records the index then gives."""
    from viewer import docstream

    path = tmp_path / "run_state.json"
    path.write_text(json.dumps(run_state(1500)))
    whole = SessionIndex(str(path)).build()
    seen = []
    items = docstream._items

    def counted(s, key):
        for p in items(s, key):
            seen.append(key)
            yield p
    monkeypatch.setattr(docstream, "_items", counted)
    first = partial.head(str(path)).threads["main"]
    responses = len(json.loads(path.read_text())["model_responses"])
    assert seen.count("model_responses") < responses / 4  # (its first ones only)
    th = whole.threads["main"]
    assert len(first) > 100 and first.ids == th.ids[:len(first)] and first.paths == th.paths[:len(first)]
    assert first.authors == th.authors[:len(first)]


# --- a key the document holds after its list decides how it reads ----------------------------------


def test_a_key_after_the_list_decides_how_a_big_document_reads(tmp_path, monkeypatch):
    """mini-swe-agent names its trajectory format after the messages: its commands are calls;
    a `system` written after a first message longer than detection's look is the first record."""
    path = tmp_path / "traj.json"
    path.write_text(json.dumps(mini_swe(4000)))
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("openai-chat", "document")
    assert "trajectory_format" in detect.head_document(path)
    idx = SessionIndex(str(path)).build()
    assert idx.summary.tool_calls == 4000
    path = tmp_path / "req.json"
    path.write_text(json.dumps(anthropic(300, system_after=True, huge_first=True)))
    assert detect.detect_file(path).format == "anthropic-messages"
    idx = SessionIndex(str(path)).build()
    assert idx.threads["main"].paths[0] == "system" and idx.summary.tool_calls == 301


def test_a_big_run_state_is_told_by_its_first_members(tmp_path):
    """A RunState's items come after its model responses (as long as they are): it is a RunState
    by its `$schemaVersion` and `current_agent`, whatever detection's look at its start holds."""
    path = tmp_path / "state.json"
    path.write_text(json.dumps(run_state(1500)))
    doc = detect.head_document(path)
    assert "generated_items" not in doc  # (beyond the look)
    assert detect.detect_file(path).format == "openai-chat"
    idx = SessionIndex(str(path)).build()
    assert "Refunds" in idx.threads["main"].authors


def rewound(turns: int = 2000) -> dict:
    """A Gemini CLI recording with rewinds: one back to a prompt near its end, one further back
    over it (the messages the first dropped keep its rewind), and a last one to its fifth prompt
    — which drops messages a first screen shows."""
    doc = gemini(turns)
    msgs = doc["messages"]
    msgs.insert(3 * (turns - 300), {"$rewindTo": f"u{turns - 400}"})
    msgs.insert(3 * (turns - 200), {"$rewindTo": f"g{turns - 500}"})
    msgs.append({"$rewindTo": "u5"})
    return doc


def test_a_gemini_recording_with_rewinds_is_read_a_record_at_a_time(tmp_path, monkeypatch):
    """A rewind marks the messages before it that it dropped (formats/gemini_cli.py): met on the
    way, it marks those already indexed (their notes, `Streaming.later`), so the recording is read
    a record at a time and shows what a whole read shows — each dropped message says so."""
    path = tmp_path / "rewound.json"
    path.write_text(json.dumps(rewound()))
    whole = SessionIndex(str(path))
    whole._whole = True  # (as it was read before: whole)
    whole.build()
    n = len(whole.threads["main"])
    views = {lo: _view(load_events(whole, "main", lo, lo + 500)) for lo in range(0, n, 500)}
    _no_whole_read(monkeypatch)
    idx = SessionIndex(str(path)).build()
    th, wt = idx.threads["main"], whole.threads["main"]
    assert "spans" in th.carried and th.ids == wt.ids and th.paths == wt.paths and th.hidden == wt.hidden
    assert summary_dump(idx.summary) == summary_dump(whole.summary)
    cached = SessionIndex.load(idx.dump())
    for lo, expected in views.items():
        assert _view(load_events(idx, "main", lo, lo + 500)) == expected
        assert _view(load_events(cached, "main", lo, lo + 500)) == expected
    notices = [str(e.blocks[0]) for e in load_events(idx, "main", 0, n) if e.blocks]
    assert sum("dropped by a /rewind to before message u5" in x for x in notices) > 5000
    assert sum("dropped by a /rewind to before message u1600" in x for x in notices) == 300
    assert 500 < sum("before message g1500" in x for x in notices) < 700  # (beside the u1600 range)


@pytest.mark.browser
def test_messages_a_later_rewind_dropped_say_so_on_the_first_screen_once_indexed(tmp_path, watched_page):
    """The first screen is read before the rewind at the recording's end: its messages that the
    rewind dropped say so once the index is done, drawn again in place (no reload)."""
    from playwright.sync_api import expect

    from conftest import LiveServer, stream_open

    root = tmp_path / "chats"
    root.mkdir()
    path = root / "rewound.json"
    path.write_text(json.dumps(rewound()))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    for app in held_app(root, tmp_path):
        with LiveServer(app) as srv:
            page = watched_page
            page.goto(srv.url + "/s/rewound")
            card = page.locator('[id="m-u7"]')
            expect(card).to_contain_text("prompt 7")
            expect(page.locator('[id="m-u3"]')).to_contain_text("prompt 3")
            assert "dropped by a /rewind" not in card.inner_text()
            stream_open(page, "early-stream")
            page.evaluate("window.__kept = document.getElementById('timeline')")
            app.hold.release.set()
            expect(card).to_contain_text("dropped by a /rewind to before message u5", timeout=60_000)
            expect(page.locator("#index-progress")).to_be_hidden()
            assert "dropped by a /rewind" not in page.locator('[id="m-u3"]').inner_text()
            assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
            assert not page.problems


# --- datasets -----------------------------------------------------------------------------------


def _dataset(path, lines: int, start: int = 0):
    with open(path, "a") as f:
        for n in range(start, start + lines):
            f.write(json.dumps({"messages": [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": f"Question {n}: {PAD}"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
                 "function": {"name": "lookup", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": f"found {n}"},
                {"role": "assistant", "content": f"Answer {n}: {PAD}"}]}) + "\n")


def test_a_dataset_is_indexed_a_stretch_at_a_time_and_read_on_as_it_grows(tmp_path, monkeypatch):
    path = tmp_path / "train.jsonl"
    _dataset(path, 3000)
    os.utime(path, (1_700_000_000, 1_700_000_000))  # (finished: one written lately is kept whole)
    with monkeypatch.context() as m:  # (a whole reading, as before)
        m.setattr(wrapped, "lean", lambda _p: None)
        whole = SessionIndex(str(path)).build()
    wrapped._folds.clear()
    held = []
    real = wrapped.Fold.let_go

    def let_go(fold):
        held.append(len(fold.records))
        real(fold)
    monkeypatch.setattr(wrapped.Fold, "let_go", let_go)

    def whole_read(*_a, **_k):
        raise AssertionError("the whole dataset was read")
    monkeypatch.setattr(wrapped, "lines_fold", whole_read)
    monkeypatch.setattr(detect, "read_document", whole_read)
    idx = SessionIndex(str(path)).build()
    th, wt = idx.threads["main"], whole.threads["main"]
    assert len(th) == len(wt) == 3000 * 6 and th.ids == wt.ids and th.paths == wt.paths
    assert list(th.plan) == list(wt.plan) and th.carried == wt.carried
    assert summary_dump(idx.summary) == summary_dump(whole.summary)
    assert max(held) < 600  # (a stretch of records at a time, never the file's 18,000)
    n = len(th)
    for lo in (0, n // 2, n - 30):
        assert _view(load_events(idx, "main", lo, lo + 30)) == _view(load_events(whole, "main", lo, lo + 30))
    # the file grows: the new lines are read on, not the file again
    _dataset(path, 50, start=3000)
    idx.refresh()
    monkeypatch.undo()
    wrapped._folds.clear()
    again = SessionIndex(str(path)).build()
    assert idx.threads["main"].ids == again.threads["main"].ids and len(again.threads["main"]) == 3050 * 6
    assert summary_dump(idx.summary) == summary_dump(again.summary)


def test_a_json_array_of_conversations_is_read_an_element_at_a_time(tmp_path, monkeypatch):
    """A dataset kept as one JSON array (a `.json` file holding a list of conversations) is read
    as its JSONL twin is: an element at a time, a stretch of records held at a time, never the
    array whole; its records, ids and cards are those of a whole read, also from the cache (a
    page reads each conversation again from its own bytes); its first screen is its first
    conversations, named as the index names them."""
    lines = tmp_path / "lines.jsonl"
    _dataset(lines, 2500)
    path = tmp_path / "train.json"
    path.write_text("[\n" + ",\n".join(lines.read_text().splitlines()) + "\n]\n")
    lines.unlink()
    assert path.stat().st_size > reader.HUGE_LINE
    os.utime(path, (1_700_000_000, 1_700_000_000))
    with monkeypatch.context() as m:  # (a whole read, as before)
        m.setattr(wrapped, "items_fold", lambda *_a, **_k: None)
        whole = SessionIndex(str(path)).build()
        assert "fold" not in whole.threads["main"].carried
    n = len(whole.threads["main"])
    views = {lo: _view(load_events(whole, "main", lo, lo + 30)) for lo in (0, n // 2, n - 30)}
    held = []
    real = wrapped.Fold.let_go

    def let_go(fold):
        held.append(len(fold.records))
        real(fold)
    monkeypatch.setattr(wrapped.Fold, "let_go", let_go)
    _no_whole_read(monkeypatch)
    idx = SessionIndex(str(path)).build()
    th, wt = idx.threads["main"], whole.threads["main"]
    assert th.carried.get("items") and max(held) < 600  # (a stretch at a time, never 15,000)
    assert len(th) == len(wt) == 2500 * 6 and th.ids == wt.ids and th.paths == wt.paths
    assert th.kinds == wt.kinds and th.hidden == wt.hidden
    assert summary_dump(idx.summary) == summary_dump(whole.summary)
    cached = SessionIndex.load(idx.dump())
    for lo, expected in views.items():
        assert _view(load_events(idx, "main", lo, lo + 30)) == expected
        assert _view(load_events(cached, "main", lo, lo + 30)) == expected
    assert "Conversation 1 · item 1" in str(load_events(idx, "main", 0, 1)[0].blocks)
    first = partial.head(str(path)).threads["main"]
    assert 30 < len(first) < n and first.ids == th.ids[:len(first)] and first.paths == th.paths[:len(first)]
