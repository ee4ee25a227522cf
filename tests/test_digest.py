"""A format's digest (model.Digest: what the index pass keeps of a plain record, told without
building its Event) must say exactly what the Event says — record by record over the corpus, the
fixtures, generated sessions and mutated records, and as whole indexes built both ways.

If this fails after a change to an adapter, the adapter's `digest` did not follow the change: make it
(or make it return None for the shape that changed)."""

import json
import math
import random
from contextlib import contextmanager
from pathlib import Path


from viewer import formats
from viewer.formats import detect
from viewer.index import SessionIndex, ThreadIndex, _content, digested, epoch, safe_event
from viewer.model import Digest, Ref
from viewer.store import Store

from conftest import CORPUS, ROOT, write_claude_session
from test_fuzz import mutate_record, samples

DIGESTING = [a for a in formats.ADAPTERS if hasattr(a, "digest")]


def facts(adapter, ev, ts):
    """Everything the index pass reads of an event (or a digest)."""
    th = ThreadIndex("main", "x", adapter.NAME, "jsonl")
    uses = [(b.id, b.name, b.status, b.started, b.ended) for b in ev.blocks if b.kind == "tool_use"]
    results = [(b.tool_use_id, bool(b.is_error), b.state) for b in ev.blocks
               if b.kind == "tool_result"]
    return {
        "role": ev.role, "kind": ev.kind, "source_id": ev.source_id, "hidden": bool(ev.hidden),
        "ts": None if ts is None or (isinstance(ts, float) and math.isnan(ts)) else ts,
        "author": ev.author, "model": ev.model, "usage": ev.usage, "message_id": ev.message_id,
        "content": _content(adapter, th, 0, ev), "prompts": dict(th.prompts),
        "title": formats.hook(adapter, "title_of", ev), "uses": uses, "results": results,
        "running": list(ev.running), "spawns": dict(ev.spawns), "states": dict(ev.states),
        "permission": ev.permission,
    }


def check(adapter, rec) -> bool:
    """Whether the adapter digested `rec`; fails if the digest and the Event disagree."""
    d = digested(adapter.digest, rec)
    if d is None:
        return False
    assert isinstance(d, Digest)
    ev = safe_event(adapter, rec, Ref("main", 1, 0, 10))
    assert facts(adapter, d, d.ts) == facts(adapter, ev, epoch(ev.timestamp)), rec
    return True


def records():
    """(adapter, record) of every digesting format: the corpus and fixtures' lines, every line of
    a generated Claude Code session, and mutations of them all."""
    by_format = samples()
    r = random.Random(13)
    for adapter in DIGESTING:
        recs = by_format.get(adapter.NAME, [])
        for rec in recs:
            yield adapter, rec
        for rec in recs * 6:
            yield adapter, mutate_record(rec, r, 0.15)


def test_digests_say_what_events_say():
    digested = {a.NAME: 0 for a in DIGESTING}
    for adapter, rec in records():
        digested[adapter.NAME] += check(adapter, rec)
    assert all(n > 20 for n in digested.values()), digested  # the plain shapes are digested


def test_generated_sessions_are_mostly_digested(tmp_path):
    path = tmp_path / "s.jsonl"
    write_claude_session(path, 300_000)
    adapter = formats.get("claude-code")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert sum(check(adapter, rec) for rec in lines) >= 0.9 * len(lines)


def every_session() -> list[Path]:
    """Every session of the corpus and of test_data, in every format and mode."""
    return [Path(ref.path) for base in (CORPUS, ROOT / "test_data") for ref in Store([base]).sessions()]


@contextmanager
def no_digests():
    """The index pass as it was before digests: every record becomes an Event."""
    saved = {a: a.digest for a in DIGESTING}
    for adapter in saved:
        del adapter.digest
    try:
        yield
    finally:
        for adapter, digest in saved.items():
            adapter.digest = digest


def cached(idx: SessionIndex) -> bytes:
    """What the cache keeps of an index, less the random id of its build."""
    idx.build_id = 0
    return idx.dump()


def columns(idx):
    out = {}
    for name, th in idx.threads.items():
        out[name] = (th.ids, list(th.offsets), list(th.lengths), list(th.lines), th.roles,
                     th.kinds, th.authors, bytes(th.content), th.ts.tobytes(), bytes(th.hidden),
                     th.prompts, th.last_boundary, th.bad, th.meta)
    return out


def same(a: SessionIndex, b: SessionIndex, what) -> None:
    """The two indexes agree on everything (columns first: a readable failure), down to the bytes
    the cache would keep."""
    assert columns(a) == columns(b), what
    assert a.calls.calls == b.calls.calls and a.calls.orphans == b.calls.orphans, what
    assert a.summary == b.summary, what
    assert a.usage.summary() == b.usage.summary(), what
    assert cached(a) == cached(b), what


def test_every_session_indexes_the_same_with_and_without_digests(tmp_path):
    """The oracle: every corpus file and test_data session, and a generated big one, indexed with
    the digests equals the index built from Events."""
    paths = every_session()
    write_claude_session(tmp_path / "gen.jsonl", 200_000)
    paths.append(tmp_path / "gen.jsonl")
    digesting = {a.NAME for a in DIGESTING}
    formats_seen = set()
    built = {}
    for path in paths:
        built[path] = SessionIndex(path).build()
        formats_seen.add(built[path].format)
    with no_digests():
        for path in paths:
            same(built[path], SessionIndex(path).build(), path)
    assert digesting <= formats_seen  # the digesting formats were among them
    assert len(paths) > 40


def test_a_session_grown_in_steps_indexes_the_same_with_and_without_digests(tmp_path):
    """Refreshes read through the digests too: a transcript written in steps (a line cut halfway
    included) gives the same index refreshed with digests, refreshed without, and built at once."""
    path = tmp_path / "grow.jsonl"
    lines = []
    for rec in (json.loads(x) for f in every_session() if detect.detect_file(f).format
                == "claude-code" and detect.detect_file(f).mode == "jsonl"
                for x in f.read_text(encoding="utf-8").splitlines() if x.strip()):
        lines.append(json.dumps(rec) + "\n")
    assert len(lines) > 100
    path.write_text("")
    with_d = SessionIndex(path).build()
    with no_digests():
        without = SessionIndex(path).build()
    step = len(lines) // 7 + 1
    for i in range(0, len(lines), step):
        chunk = "".join(lines[i:i + step])
        cut = len(chunk) - 40 if i + step < len(lines) else len(chunk)
        for part in (chunk[:cut], chunk[cut:]):  # the last line of a step arrives in two writes
            with open(path, "a", encoding="utf-8") as f:
                f.write(part)
            with_d.refresh()
            with no_digests():
                without.refresh()
            same(with_d, without, (i, len(part)))
    same(with_d, SessionIndex(path).build(), "refreshed vs built at once")


def test_a_sink_gets_events_not_digests(tmp_path):
    path = tmp_path / "s.jsonl"
    write_claude_session(path, 50_000)
    idx = SessionIndex(path)
    got = []
    idx.sink = lambda thread, seq, ev: got.append(ev)
    idx.build()
    assert got and not any(isinstance(ev, Digest) for ev in got)
    assert [ev.id for ev in got] == idx.threads["main"].ids


def test_legion_turn_records_are_digested():
    """Every legion turn begins with the SDK's init and a prompt and ends with the turn's result:
    those are digested too (a third of a long session's lines), and say what their Events say."""
    adapter = formats.get("legion")
    ids = {"session_id": "s1", "message_id": "m1", "timestamp": 1761073218.6987162}
    assert check(adapter, {"_type": "SystemMessage", **ids,
                           "data": {"subtype": "init", "data": {"model": "claude-sonnet-4-5"}}})
    assert check(adapter, {"_type": "ResultMessage", **ids, "data": {
        "subtype": "success", "duration_ms": 30000, "is_error": False, "num_turns": 3,
        "usage": {"input_tokens": 10, "output_tokens": 20}}})
    # a turn's cost is the rise of the process's running total: the Event's `follow` knows it
    assert not check(adapter, {"_type": "ResultMessage", **ids, "data": {
        "subtype": "success", "is_error": False, "usage": {"input_tokens": 10}, "total_cost_usd": 0.25}})
    assert check(adapter, {"type": "user", "content": "Fix the window cache.", **ids,
                           "timestamp": "2025-10-21T19:00:18.487Z"})
    # what only the Event can say stays with it: a message from another minion, a failed turn
    assert not check(adapter, {"type": "user", **ids,
                               "content": "**📨 Direct message from Minion #scout:** hi"})
    assert not check(adapter, {"_type": "ResultMessage", **ids, "data": {"is_error": True}})


def test_newer_claude_code_and_sdk_lines_digest_as_their_events():
    """The lines of newer writers that the adapters learnt (sidecar records, api errors, fallback
    blocks; the SDK's rate-limit events): whatever the digest says of them, the Event says too."""
    from test_format_claude_code import LINES_2_1_331, NEWER_LINES

    by_name = {a.NAME: a for a in DIGESTING}
    digested_any = [check(by_name["claude-code"], rec) for rec in NEWER_LINES + LINES_2_1_331]
    assert any(digested_any)  # the hidden sidecars are digested
    rate = {"_type": "RateLimitEvent", "data": {"rate_limit_info": {"status": "allowed"}, "uuid": "r1"}}
    check(by_name["legion"], rate)


# a result line's `toolUseResult` as Claude Code 2.x writes it for each tool (the corpus's
# shapes): the plain ones, which the index pass digests, and those it leaves to the Event — a
# sub-agent's report or a call sent to the background (a thread spawned, a call still running)
PLAIN_TOOL_RESULTS = {
    "Bash": {"stdout": "On branch main", "stderr": "", "interrupted": False, "isImage": False,
             "noOutputExpected": False},
    "Bash, interpreted": {"stdout": "", "stderr": "", "interrupted": False, "isImage": False,
                          "returnCodeInterpretation": "No matches found", "noOutputExpected": False},
    "Bash in the background": {"stdout": "", "stderr": "", "interrupted": False, "isImage": False,
                               "backgroundTaskId": "b7636e2"},
    "Read": {"type": "text", "file": {"filePath": "/src/mod.py", "content": "x = 1\n", "numLines": 1,
                                      "startLine": 1, "totalLines": 1}},
    "Edit": {"filePath": "/src/mod.py", "oldString": "x = 1", "newString": "x = 2",
             "originalFile": "x = 1\n", "replaceAll": False, "userModified": False,
             "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                  "lines": ["-x = 1", "+x = 2"]}]},
    "MultiEdit": {"filePath": "/src/mod.py", "edits": [{"old_string": "x", "new_string": "y"}],
                  "originalFileContents": "x\n", "structuredPatch": [], "userModified": False},
    "Write": {"type": "create", "filePath": "/src/new.py", "content": "y = 2\n", "structuredPatch": [],
              "originalFile": None},
    "Grep": {"mode": "content", "numFiles": 1, "filenames": [], "content": "mod.py:1:x = 1", "numLines": 1},
    "Glob": {"filenames": ["/src/mod.py"], "durationMs": 64, "numFiles": 1, "truncated": False},
    "TodoWrite": {"oldTodos": [], "newTodos": [{"content": "Fix the window", "status": "in_progress",
                                                "activeForm": "Fixing the window"}]},
    "TaskUpdate": {"success": True, "taskId": "1", "updatedFields": ["status"],
                   "statusChange": {"from": "pending", "to": "in_progress"}, "verificationNudgeNeeded": False},
    "AskUserQuestion": {"questions": [{"question": "Go on?", "header": "Go", "multiSelect": False,
                                       "options": [{"label": "Yes", "description": "go on"}]}],
                        "answers": {"Go on?": "Yes"}},
    "ExitPlanMode": {"plan": "## Plan\n1. fix it", "isAgent": False, "filePath": "/plans/p.md"},
}
NOT_PLAIN_TOOL_RESULTS = {
    "a sub-agent's report": {"status": "completed", "agentId": "a1b2c3", "prompt": "Look around",
                             "content": [{"type": "text", "text": "Done."}], "totalDurationMs": 900,
                             "totalTokens": 1200, "totalToolUseCount": 3, "usage": {"input_tokens": 3}},
    "a sub-agent started in the background": {"status": "async_launched", "agentId": "a1b2c3",
                                              "description": "Look around"},
    "a Workflow's run": {"runId": "wr-1", "workflowName": "review"},
    "a background shell's output": {"shellId": "7d95c5", "command": "make", "status": "running",
                                    "exitCode": None, "stdout": "", "stderr": ""},
}


def test_plain_tool_results_digest_as_their_events_and_reports_are_left_to_them():
    """A real session's result lines carry a `toolUseResult` nearly all (the bench's once did not):
    those of the plain shapes are digested, as their Events say; a sub-agent's report, a call sent
    to the background, a Workflow's run are not (their Events spawn a thread or keep a call running)."""
    adapter = formats.get("claude-code")

    def line(n, structured):
        return {"type": "user", "uuid": f"u-{n}", "sessionId": "s", "timestamp": "2025-10-21T10:00:00.000Z",
                "version": "2.1.114", "toolUseResult": structured, "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "done"}]}}

    digested = {name: check(adapter, line(n, shape)) for n, (name, shape) in enumerate(PLAIN_TOOL_RESULTS.items())}
    assert all(digested.values()), digested
    left = {name: check(adapter, line(n, shape)) for n, (name, shape) in enumerate(NOT_PLAIN_TOOL_RESULTS.items())}
    assert not any(left.values()), left
    report = safe_event(adapter, line(0, NOT_PLAIN_TOOL_RESULTS["a sub-agent's report"]), Ref("main", 1, 0, 10))
    assert report.spawns == {"toolu_0": "a1b2c3"}  # what the digest would have missed


def test_hook_runs_queue_marks_and_unwritten_thinking_digest_as_their_events():
    """A real Claude Code session's commonest lines beside messages and results: a hook's run the
    CLI keeps from the model (an attachment per PostToolUse hook), the queue's marks, a message of
    thinking the model did not write (its signature alone: hidden as not recorded) are digested
    and say what their Events say; a hook whose output is the model's context, words queued, stay
    with their Events."""
    adapter = formats.get("claude-code")
    common = {"uuid": "u-1", "sessionId": "s", "timestamp": "2025-10-21T10:00:00.000Z", "version": "2.1.114"}

    def hook(event):
        return {**common, "type": "attachment", "attachment": {
            "type": "hook_success", "hookName": f"{event}:Bash", "hookEvent": event, "content": "ok",
            "stdout": "ok", "stderr": "", "exitCode": 0, "command": "lint.sh"}}

    def assistant(*blocks):
        return {**common, "type": "assistant", "message": {
            "id": "msg_1", "model": "claude-opus-4-7", "role": "assistant", "content": list(blocks),
            "usage": {"input_tokens": 3, "output_tokens": 9, "cache_read_input_tokens": 0,
                      "cache_creation_input_tokens": 5}}}

    unwritten = {"type": "thinking", "thinking": "", "signature": "EpAxClkIDBgCKkCk"}
    assert check(adapter, hook("PostToolUse")) and check(adapter, hook("Stop"))
    assert not check(adapter, hook("UserPromptSubmit"))  # (its output is context: shown)
    assert check(adapter, {**common, "type": "queue-operation", "operation": "dequeue"})
    assert not check(adapter, {**common, "type": "queue-operation", "operation": "enqueue",
                               "content": "and the tests too"})
    assert check(adapter, assistant(unwritten))
    assert digested(adapter.digest, assistant(unwritten)).hidden  # (the Event's too: `check`)
    assert check(adapter, assistant(unwritten, {"type": "text", "text": "Done."}))
    assert not digested(adapter.digest, assistant(unwritten, {"type": "text", "text": "Done."})).hidden


def test_the_bench_sessions_lines_digest_as_their_events(tmp_path):
    """The bench's Claude Code session (its result lines with the `toolUseResult` of each tool, a
    sub-agent's report, images, errors): every line the digest takes says what its Event says, and
    nearly all are taken, as in a real session (the bench measures the pass they take)."""
    from bench import generate

    adapter = formats.get("claude-code")
    main = generate.claude_code(tmp_path, 3 << 20, name="s")
    lines = [json.loads(x) for x in main.read_text().splitlines()]
    lines += [json.loads(x) for p in tmp_path.glob("s/subagents/*.jsonl") for x in p.read_text().splitlines()]
    results = [r for r in lines if isinstance(r.get("toolUseResult"), dict)]
    assert len(results) > 50 and any("agentId" in r["toolUseResult"] for r in results)
    assert sum(check(adapter, rec) for rec in results) >= 0.95 * len(results)
    assert sum(check(adapter, rec) for rec in lines) >= 0.95 * len(lines)


def test_lines_the_index_files_inline_or_not_index_as_their_events_do(tmp_path):
    """Most digests are filed inline (`SessionIndex._filer`); a line it does not take as plain goes
    through the general filing: a session whose lines take every such turn — lines before any
    prompt (no title yet), a uuid used twice, one that looks like a synthetic id, none at all, a
    tool id used again after its result, a result before its call, a result of no call, an
    error, two results of one call in one line, two calls of one id, progress of a call never
    made and of a sub-agent — indexes as its Events do, in the main file and in a sub-agent's."""
    base = {"sessionId": "s", "isSidechain": False}
    n = iter(range(1, 10_000))

    def t():
        i = next(n)
        return f"2025-10-21T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z"

    def said(uuid, *blocks, mid=None):
        return {**base, "type": "assistant", "uuid": uuid, "timestamp": t(), "message": {
            "id": mid or f"msg_{uuid}", "role": "assistant", "model": "claude-opus-4-6",
            "content": list(blocks), "usage": {"input_tokens": 3, "output_tokens": 9,
                                               "cache_read_input_tokens": 100,
                                               "cache_creation_input_tokens": 20}}}

    def use(cid):
        return {"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": "ls"}}

    def results(uuid, *rs):
        return {**base, "type": "user", "uuid": uuid, "timestamp": t(), "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": "ok",
                                         **({"is_error": True} if err else {})} for cid, err in rs]}}

    def progress(uuid, parent, kind="bash_progress", **data):
        return {**base, "type": "progress", "uuid": uuid, "timestamp": t(), "parentToolUseID": parent,
                "data": {"type": kind, **data}}

    text = {"type": "text", "text": "Looking."}
    lines = [
        said("a0", text), progress("p0", "none-yet"), results("r0", ("ghost", False)),
        {**base, "type": "user", "uuid": "u1", "timestamp": t(),
         "message": {"role": "user", "content": "Fix the window code"}},
        said("a1", {"type": "thinking", "thinking": "hm"}, mid="m1"), said("a2", text, mid="m1"),
        said("a3", use("t1"), mid="m1"), progress("p1", "t1"), results("r1", ("t1", False)),
        said("a1", text), said("L12", text), said(None, text),
        results("r2", ("t2", False)), said("a4", use("t2"), use("t3")),
        results("r3", ("t3", False), ("t3", False)), results("r4", ("t2", True)),
        said("a5", use("t1")), progress("p2", "t1"), results("r5", ("t1", False)),
        said("a6", use("t4"), use("t4")), results("r6", ("t4", False), ("t4", False)),
        said("a7", {"type": "tool_use", "id": "t5", "name": "Task", "input": {"prompt": "go"}}),
        progress("p3", "t5", "agent_progress", agentId="abc1234"), results("r7", ("t5", False)),
        said("a8", use("t6")), results("r8", ("t6", False)),
    ]
    session = tmp_path / "sess.jsonl"
    session.write_text("".join(json.dumps({k: v for k, v in x.items() if v is not None}) + "\n"
                               for x in lines))
    agent = tmp_path / "sess" / "subagents" / "agent-abc1234.jsonl"
    agent.parent.mkdir(parents=True)
    agent.write_text("".join(json.dumps({**x, "isSidechain": True, "agentId": "abc1234",
                                         "uuid": f"s-{x['uuid']}" if x.get("uuid") else None}) + "\n"
                             for x in lines[4:]))
    built = SessionIndex(session).build()
    assert set(built.threads) == {"main", "abc1234"} and built.calls.latest and built.calls.waiting
    with no_digests():
        same(built, SessionIndex(session).build(), session)
