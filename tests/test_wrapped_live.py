"""A JSONL file of wrappers (formats/wrapped.py: claude-trace and proxy API logs, LiteLLM payloads,
saved responses, datasets, batch files) followed live: each change reads only the lines the file
gained, in the index and in the pages alike, and what they add is what a whole read of the file
gives — the same events with the same ids, call states, sections and summary. A rewrite, a cut, a
half-written last line behave as before. Fixtures: test_data/formats/{openai-chat,
anthropic-messages} (their README)."""

import json
import os
import shutil

import pytest

from viewer import files, index as index_mod
from viewer.formats import wrapped
from viewer.index import SessionIndex, folded
from viewer.timeline import load_events, raw_record

from conftest import ROOT, back_and_forth_lines, notices

OPENAI = ROOT / "test_data" / "formats" / "openai-chat"
ANTHROPIC = ROOT / "test_data" / "formats" / "anthropic-messages"
TRACE = ANTHROPIC / "claude-trace" / "log-2025-11-25-06-00-00.jsonl"
FIXTURES = [TRACE, ANTHROPIC / "message-batches" / "requests.jsonl",
            ANTHROPIC / "message-batches" / "results.jsonl",
            OPENAI / "batch-api" / "batch_input.jsonl", OPENAI / "batch-api" / "batch_output.jsonl",
            OPENAI / "finetune-dataset" / "finetune.jsonl", OPENAI / "finetune-dataset" / "evals.jsonl",
            OPENAI / "finetune-dataset" / "trl_preference.jsonl",
            OPENAI / "request-response" / "litellm_payloads.jsonl",
            OPENAI / "saved-responses" / "responses.jsonl", OPENAI / "saved-responses" / "completions.jsonl"]


def snapshot(idx):
    """All a reader is shown of a session: every event as the pages read it (blocks, ids, call
    states, place), the index's columns, the calls and the summary."""
    th = idx.threads["main"]
    cols = {k: list(getattr(th, k)) for k in ("ids", "lines", "offsets", "lengths", "roles", "kinds",
                                               "authors", "paths")}
    cols.update(content=bytes(th.content), hidden=bytes(th.hidden), prompts=dict(th.prompts),
                ts=[None if t != t else t for t in th.ts])
    evs = load_events(idx, "main", 0, len(th))
    s = idx.summary
    return {"events": evs, "columns": cols, "calls": dict(idx.calls.calls),
            "states": {cid: c.state for cid, c in idx.calls.calls.items()},
            "sections": [(e.id, notices(e)) for e in evs if e.kind == "section"],
            "summary": (s.events, s.messages, s.errors, s.unparsed, s.title, list(s.models),
                        s.started, s.ended, json.dumps(s.usage, sort_keys=True, default=str))}


def whole(path, tmp_path):
    """The snapshot of a whole read of the file as it is now (a copy elsewhere: nothing kept of
    the live file's reading)."""
    other = tmp_path / f"whole-{len(list(tmp_path.glob('whole-*')))}"
    other.mkdir()
    shutil.copy2(path, other / path.name)
    return snapshot(SessionIndex(other / path.name).build())


def proxy_lines():
    """A proxy's log of streamed OpenAI calls: the second answers the first's call."""
    def chunks(*deltas):
        out = [{"id": "chatcmpl-S", "object": "chat.completion.chunk", "model": "gpt-4.1",
                "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        return "".join(f"data: {json.dumps(c)}\n\n" for c in out) + "data: [DONE]\n\n"

    ask = {"role": "user", "content": "Read setup.cfg"}
    call = {"id": "call_9", "type": "function", "function": {"name": "read", "arguments": '{"path": "setup.cfg"}'}}
    url = "https://api.openai.com/v1/chat/completions"
    first = chunks({"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]})
    return [{"request": {"timestamp": 1764050400, "method": "POST", "url": url, "body": {
                 "model": "gpt-4.1", "stream": True, "messages": [ask]}},
             "response": {"timestamp": 1764050401, "status_code": 200, "body_raw": first}},
            {"request": {"timestamp": 1764050402, "method": "POST", "url": url, "body": {
                "model": "gpt-4.1", "stream": True, "messages": [
                    ask, {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "call_9", "content": "[flake8]"}]}},
             "response": {"timestamp": 1764050403.5, "status_code": 200,
                          "body_raw": chunks({"role": "assistant", "content": "It sets flake8."})}}]


def cases():
    out = [(p.parent.name + "/" + p.name, p.read_bytes().splitlines(keepends=True)) for p in FIXTURES]
    # datasets reuse call ids across lines (`id~N`): two more lines of the fine-tuning file
    tune = (OPENAI / "finetune-dataset" / "finetune.jsonl").read_bytes().splitlines(keepends=True)
    out.append(("finetune-repeated", tune + tune[1:]))
    out.append(("proxy", [json.dumps(x).encode() + b"\n" for x in proxy_lines()]))
    out.append(("back-and-forth", [json.dumps(x).encode() + b"\n" for x in back_and_forth_lines()]))
    return out


@pytest.mark.parametrize("name,lines", cases(), ids=[c[0] for c in cases()])
def test_each_appended_line_adds_what_a_whole_read_gives_and_reads_only_that_line(name, lines, tmp_path):
    log = tmp_path / "live" / "log.jsonl"
    log.parent.mkdir()
    log.write_bytes(lines[0])
    idx = SessionIndex(log).build()
    th = idx.threads["main"]
    assert folded(th)
    assert snapshot(idx) == whole(log, tmp_path)
    fold = wrapped.lines_fold(log)
    build = idx.build_id
    for n, line in enumerate(lines[1:], 2):
        before, read_before = len(th), fold.lines_read
        if n % 2:  # the line written in two writes: the first half waits, then the rest
            with open(log, "ab") as f:
                f.write(line[:len(line) // 2])
            change = idx.refresh()
            assert not change.reset and len(th) == before and th.pending
            assert snapshot(idx) == whole(log, tmp_path)  # (a whole read waits for it too)
            line = line[len(line) // 2:]
        with open(log, "ab") as f:
            f.write(line)
        change = idx.refresh()
        assert not change.reset and idx.build_id == build, name  # read on, not again whole
        assert change.new == {"main": before} and len(th) > before
        assert not th.pending
        got = snapshot(idx)
        assert got == whole(log, tmp_path), f"{name}: line {n}"
        # the index and the pages decoded the new line, and no other, once (a half line: again)
        assert fold.lines_read - read_before == (2 if n % 2 else 1)
        assert wrapped.lines_fold(log) is fold


def test_a_new_line_turns_the_pending_call_completed_and_continues_the_conversation(tmp_path):
    lines = [json.dumps(x) + "\n" for x in back_and_forth_lines()]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(lines[:2]))
    idx = SessionIndex(log).build()
    assert idx.calls.calls["toolu_1"].state == "pending"
    with open(log, "a") as f:
        f.write(lines[2])
    change = idx.refresh()
    assert idx.calls.calls["toolu_1"].state == "completed"
    evs = load_events(idx, "main", change.new["main"], len(idx.threads["main"]))
    # the call went back to conversation 1: said once, then only what is new (the result, the answer)
    assert [(e.role, e.kind) for e in evs] == [("system", "notice"), ("tool", "tool_result"),
                                               ("assistant", "message")]
    assert notices(evs[0]) == ["API call 3 goes on with conversation 1 (line 3)"]
    with open(log, "a") as f:
        f.write(lines[3] + lines[4])
    change = idx.refresh()
    evs = load_events(idx, "main", change.new["main"], len(idx.threads["main"]))
    assert [e.text() for e in evs if e.role == "user"] == ["Thanks", "Run pwd"]
    # the new conversation's call reuses the id: it is its own call, pending
    assert idx.calls.calls["toolu_1~3"].state == "pending"
    assert json.loads(raw_record(idx, evs[-1].id)[0])["status_code"] == 200


@pytest.mark.parametrize("how", ["rewritten", "cut", "replaced"])
def test_a_rewritten_cut_or_replaced_log_is_read_again_whole(how, tmp_path):
    lines = TRACE.read_text().splitlines(keepends=True)
    log = tmp_path / "live" / "log.jsonl"
    log.parent.mkdir()
    log.write_text("".join(lines[:3]))
    idx = SessionIndex(log).build()
    old_fold = wrapped.lines_fold(log)
    if how == "rewritten":  # in place, longer: the first line's model named otherwise
        with open(log, "r+") as f:
            f.write("".join([lines[0].replace("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
                             *lines[1:4]]))
    elif how == "cut":
        with open(log, "r+") as f:
            f.truncate(len(lines[0]) + len(lines[1]))
    else:  # another file moved in its place
        (tmp_path / "new.jsonl").write_text("".join([lines[0], *lines[2:]]))
        os.replace(tmp_path / "new.jsonl", log)
    os.utime(log, ns=(1, 1))
    change = idx.refresh()
    assert change.reset
    assert snapshot(idx) == whole(log, tmp_path)
    assert wrapped.lines_fold(log) is not old_fold
    if how == "rewritten":
        assert "claude-haiku-4-5" in idx.summary.models


@pytest.mark.parametrize("then", ["its newline", "more on the line"])
def test_a_last_line_read_without_its_newline_then_written_on(then, tmp_path):
    # a last line of whole JSON is read before its newline is written; then the writer goes on:
    # with the newline and a new line (read on: the same records), or on the same line (the line
    # read was not the whole line: read again whole, the line now unparsed)
    lines = TRACE.read_text().splitlines(keepends=True)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(lines[:2]) + lines[2].rstrip("\n"))
    idx = SessionIndex(log).build()
    n = len(idx.threads["main"])
    with open(log, "a") as f:
        f.write("\n" + lines[3] if then == "its newline" else lines[3])
    change = idx.refresh()
    assert change.reset == (then != "its newline")
    assert snapshot(idx) == whole(log, tmp_path)
    if then == "its newline":
        assert change.new == {"main": n}
    else:
        assert idx.summary.unparsed == 1


def test_a_half_line_left_by_a_writer_that_died_is_shown_cut_without_a_whole_read(tmp_path, monkeypatch):
    lines = TRACE.read_text().splitlines(keepends=True)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(lines[:3]) + lines[3][:100])
    idx = SessionIndex(log).build()
    n, build = len(idx.threads["main"]), idx.build_id
    monkeypatch.setattr(index_mod, "TRUNCATED_GRACE", -1)  # the file has been quiet long enough
    change = idx.refresh()
    assert not change.reset and idx.build_id == build and change.new == {"main": n}
    (cut,) = load_events(idx, "main", n, n + 1)
    assert cut.kind == "unparsed" and "line 4 of the file" in cut.blocks[0].reason
    assert snapshot(idx) == whole(log, tmp_path)


class Counted:
    """A file object counting the bytes read from it."""

    def __init__(self, f, tally):
        self._f, self._tally = f, tally

    def read(self, *a):
        data = self._f.read(*a)
        self._tally[0] += len(data)
        return data

    def readinto(self, b):
        n = self._f.readinto(b)
        self._tally[0] += n or 0
        return n

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def test_what_a_change_reads_is_the_appended_line_not_the_log(tmp_path, monkeypatch):
    # a long claude-trace log (every call sending the whole history again), a page open on it: each
    # new line costs the index and the page about that line's bytes, not the log's
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in long_log(60)))
    idx = SessionIndex(log).build()
    load_events(idx, "main", 0, len(idx.threads["main"]))
    size = log.stat().st_size
    assert size > 1 << 20
    tally = [0]
    real = files.open_file
    monkeypatch.setattr(files, "open_file", lambda path: Counted(real(path), tally))
    for x in long_log(63)[60:]:
        line = json.dumps(x) + "\n"
        with open(log, "a") as f:
            f.write(line)
        tally[0] = 0
        start = len(idx.threads["main"])
        change = idx.refresh()
        evs = load_events(idx, "main", change.new["main"], len(idx.threads["main"]))
        assert evs and evs[-1].role == "assistant" and len(idx.threads["main"]) > start
        assert tally[0] < len(line) + 4096, (tally[0], len(line), size)
    assert snapshot(idx) == whole(log, tmp_path)


def long_log(calls):
    """A claude-trace log of `calls` calls of one conversation, each answering the last one's
    Bash call and sending the whole history (some 2 KB a message) again."""
    url = "https://api.anthropic.com/v1/messages"
    history = [{"role": "user", "content": "Tidy the repository"}]
    out = []
    for i in range(calls):
        answer = [{"type": "text", "text": f"step {i} " + "x" * 2000},
                  {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"ls {i}"}}]
        out.append({"request": {"timestamp": 1764050400 + i, "method": "POST", "url": url,
                                "headers": {}, "body": {"model": "claude-sonnet-4-5", "max_tokens": 8000,
                                                        "system": "You are Claude Code.",
                                                        "messages": list(history)}},
                    "response": {"timestamp": 1764050400.5 + i, "status_code": 200, "headers": {},
                                 "body": {"type": "message", "role": "assistant", "content": answer,
                                          "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                                          "usage": {"input_tokens": 10, "output_tokens": 10}}},
                    "logged_at": "2025-11-25T06:00:00Z"})
        history += [{"role": "assistant", "content": answer},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                                  "content": f"out {i}"}]}]
    return out


def test_an_index_from_the_cache_reads_on_with_a_new_reading_of_the_log(tmp_path):
    # the server restarted: the index comes from the cache, no reading of the file is kept. The
    # first change reads the file whole once, and the index goes on from that reading without a
    # rebuild (a rebuild reloads the page)
    from viewer.cache import IndexCache
    from viewer.store import Store

    lines = [json.dumps(x) + "\n" for x in back_and_forth_lines()]
    log = tmp_path / "logs" / "agent" / "log.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(lines[:3]))
    store = Store([tmp_path / "logs"], IndexCache(tmp_path / "cache"))
    store.index("agent~log")
    store.flush()
    wrapped._folds.clear()  # (what a restart leaves)
    idx = Store([tmp_path / "logs"], IndexCache(tmp_path / "cache")).index("agent~log")
    build = idx.build_id
    with open(log, "a") as f:
        f.write(lines[3])
    change = idx.refresh()
    assert not change.reset and idx.build_id == build and change.new
    assert snapshot(idx) == whole(log, tmp_path)
    with open(log, "a") as f:
        f.write(lines[4])
    assert not idx.refresh().reset
    assert snapshot(idx) == whole(log, tmp_path)
    assert idx.calls.calls["toolu_1~3"].state == "pending"
