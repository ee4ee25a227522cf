"""Claude Code adapter, on every real session of the corpus and on the bundled one."""

import json
import os
import re
from pathlib import Path

import pytest

from viewer.formats import claude_code, detect
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import Timeline, load_events

from conftest import SESSIONS, corpus_sessions

CORPUS = corpus_sessions("claude-code")


def raw_counts(path: Path) -> dict:
    """Counts taken straight from the JSON, independently of the adapter."""
    c = {"lines": 0, "tool_use": 0, "errors": 0, "thinking": 0, "images": 0}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        c["lines"] += 1
        rec = json.loads(line)
        content = (rec.get("message") or {}).get("content")
        for b in content if isinstance(content, list) else []:
            t = b.get("type")
            c["tool_use"] += t == "tool_use"
            c["thinking"] += t == "thinking"
            c["images"] += t == "image"
            c["errors"] += t == "tool_result" and b.get("is_error") is True
    return c


@pytest.mark.parametrize("folder", CORPUS, ids=lambda p: p.name)
def test_every_corpus_file_is_read_whole(folder):
    idx = SessionIndex(folder / "messages.jsonl").build()
    assert idx.format == "claude-code"
    for name, th in idx.threads.items():
        raw = raw_counts(Path(th.path))
        assert len(th) == raw["lines"], name  # one event per line, none lost
        assert "unparsed" not in th.kinds
        calls = [c for c in idx.calls.calls.values() if c.call and c.call[0] == name]
        assert len(calls) == raw["tool_use"], name
        assert sum(c.status == "error" for c in calls) == raw["errors"], name
    assert not idx.calls.orphans
    assert all(c.status in ("completed", "error") for c in idx.calls.calls.values())


# figures from ../shared/corpus/SOURCES.md, checked against the adapter's reading
KNOWN = {
    "log-sample-thinking-image": dict(lines=68, calls=14, errors=3, thinking=9, images=1, threads=0),
    "coderabbit-thinking": dict(lines=292, calls=76, errors=7, thinking=80, threads=3),
    "deep-manifest-sidechain": dict(lines=316, calls=108, errors=4, threads=1),
    "me-next-image-errors": dict(lines=248, calls=92, errors=10, images=1, threads=0),
    "worktrees-subagents": dict(threads=6),
    "claude-p-subagent": dict(lines=6, calls=1, threads=1),
    "spotter-progress-compact": dict(lines=1512, calls=150, errors=5, thinking=14, threads=2),
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_figures(name):
    want = KNOWN[name]
    idx = SessionIndex(Path(CORPUS[0].parent / name / "messages.jsonl")).build()
    main = idx.threads["main"]
    evs = load_events(idx, "main", 0, len(main))
    main_calls = [c for c in idx.calls.calls.values() if c.call[0] == "main"]
    got = {
        "lines": main.line,
        "calls": len(main_calls),
        "errors": sum(c.status == "error" for c in main_calls),
        "thinking": sum(b.kind == "thinking" for e in evs for b in e.blocks),
        "images": sum(b.kind == "media" for e in evs for b in e.blocks)
        + sum(c.kind == "media" for e in evs for b in e.blocks if b.kind == "tool_result"
              for c in b.content),
        "threads": len(idx.threads) - 1,
    }
    assert {k: got[k] for k in want} == want


def test_subagents_link_to_the_call_that_spawned_them():
    links = {}
    for folder in CORPUS:
        idx = SessionIndex(folder / "messages.jsonl").build()
        for name, th in idx.threads.items():
            if name != "main":
                links[(folder.name, name)] = th.meta.get("parent_call")
                if th.meta.get("parent_call"):
                    call = idx.calls.calls[th.meta["parent_call"]]
                    assert call.name in ("Task", "Agent") and call.subthread == name
    assert links[("claude-p-subagent", "a2271d1")] == "toolu_01SXaWzD5YZ73zGwchbcxeWi"
    assert links[("coderabbit-thinking", "ea02459f")] == "toolu_01HD7PpSCWhP2gP8dXvJiyZN"
    assert links[("deep-manifest-sidechain", "c8d9b115")] == "toolu_01MmDqMXjZLvzbNFLGH2ZA3k"
    assert links[("spotter-progress-compact", "a2898e3")] == "toolu_017pLRuPHYTX5t99EnLyV53m"
    assert sum(1 for (f, _), v in links.items() if f == "worktrees-subagents" and v) == 6
    # warm-up and compaction agents have no spawning call: shown, but not nested
    assert links[("coderabbit-thinking", "2b93909d")] is None
    assert links[("spotter-progress-compact", "acompact-e1f845")] is None


def test_noise_is_hidden_and_counted():
    idx = SessionIndex(CORPUS[0].parent / "spotter-progress-compact" / "messages.jsonl").build()
    main = idx.threads["main"]
    kinds = [k for k, h in zip(main.kinds, main.hidden) if h]
    assert sum(k.startswith("progress") for k in kinds) == 1083
    assert kinds.count("file-history-snapshot") == 14
    # the compaction boundary and its summary stay visible
    assert "compaction" in main.kinds and "compact_summary" in main.kinds
    assert not main.hidden[main.kinds.index("compaction")]


def test_progress_lines_mark_a_call_executing_until_its_result(tmp_path):
    lines = [
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "sleep 5"}}]}},
        {"type": "progress", "uuid": "p1", "sessionId": "s", "parentToolUseID": "toolu_x",
         "toolUseID": "bash-progress-1", "data": {"type": "bash_progress", "output": "..."}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = SessionIndex(path).build()
    assert idx.calls.calls["toolu_x"].status == "executing"
    with open(path, "a") as f:
        f.write(json.dumps({"type": "user", "uuid": "u2", "sessionId": "s", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x",
                                         "content": "done"}]}}) + "\n")
    idx.refresh()
    assert idx.calls.calls["toolu_x"].status == "completed"


def test_unknown_line_types_are_quiet_generic_cards():
    ev = claude_code.event({"type": "zeta-latch", "zeta": "", "sessionId": "s"}, Ref("main", 1, 0, 10))
    ev2 = claude_code.event({"type": "brand-new-thing", "uuid": "x1", "foo": 1}, Ref("main", 2, 0, 10))
    assert ev.kind == "unknown" and not ev.role == "error"
    assert ev2.kind == "unknown" and ev2.blocks[0].kind == "data" and ev2.source_id == "x1"


def test_user_tags_become_readable_blocks():
    r = Ref("main", 1, 0, 1)
    cmd = claude_code.event({"type": "user", "uuid": "u", "message": {"role": "user", "content":
          "<command-name>/context</command-name>\n<command-message>context</command-message>\n"
          "<command-args>all</command-args>"}}, r)
    assert cmd.kind == "command" and cmd.blocks[0].text == "command /context all"
    out = claude_code.event({"type": "user", "uuid": "u", "message": {"role": "user", "content":
          "<local-command-stdout>See ya!</local-command-stdout>"}}, r)
    assert out.kind == "command_output" and out.blocks[0].text == "See ya!"
    meta = claude_code.event({"type": "user", "uuid": "u", "isMeta": True, "message": {
        "role": "user", "content": "Caveat: ..."}}, r)
    assert meta.hidden and meta.hidden_reason == "meta"
    interrupt = claude_code.event({"type": "user", "uuid": "u", "message": {"role": "user", "content": [
        {"type": "text", "text": "[Request interrupted by user for tool use]"}]}}, r)
    assert interrupt.kind == "interrupt"


def test_bundled_session_nests_its_subagent():
    main = next((SESSIONS / "claude-project").glob("*.jsonl"))
    assert detect.detect_file(main).format == "claude-code"
    idx = SessionIndex(main).build()
    (agent,) = [n for n in idx.threads if n != "main"]
    assert idx.threads[agent].meta["parent_call"] == "toolu_task_explore"
    tl = Timeline(idx)
    win = tl.window("main")
    task = next(v for v in win.events if "toolu_task_explore" in v.calls)
    cv = task.calls["toolu_task_explore"]
    assert cv.thread.count == 4 and cv.result is not None and cv.call.status == "completed"


# Lines of Claude Code 2.1.32–2.1.183 as chrisguillory/claude-session-mcp models them
# (src/schemas/session/models.py, commit 8c77ad1, schema v0.2.45): newer sidecar records, api_error
# lines, agents_killed, and the `fallback` content block of a model fallback.
NEWER_LINES = [
    {"type": "saved-hook-context", "sessionId": "s1", "hookEvent": "SessionStart", "context": "x"},
    {"type": "bridge-session", "sessionId": "s1", "bridgeSessionId": "b1", "lastSequenceNum": 7},
    {"type": "fork-context-ref", "agentId": "a1b2c3", "parentSessionId": "s0",
     "parentLastUuid": "u9", "contextLength": 42},
    {"type": "isolation-latch", "side": "normal", "sessionId": "s1"},
    {"type": "system", "subtype": "api_error", "level": "error", "uuid": "e1", "parentUuid": "p1",
     "sessionId": "s1", "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/w", "retryInMs": 5123.4,
     "retryAttempt": 3, "maxRetries": 10, "error": {
         "status": 529, "headers": {"retry-after": "5"}, "requestID": "req_011", "type": "overloaded_error",
         "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}}},
    {"type": "system", "subtype": "api_error", "level": "error", "uuid": "e2", "parentUuid": "p1",
     "sessionId": "s1", "timestamp": "2026-05-01T10:00:01.000Z", "cwd": "/w", "retryInMs": 1000,
     "retryAttempt": 1, "maxRetries": 10,
     "error": {"cause": {"code": "ECONNRESET", "path": "https://api.anthropic.com/v1/messages", "errno": 0}}},
    {"type": "system", "subtype": "agents_killed", "uuid": "k1", "parentUuid": "p1", "sessionId": "s1",
     "timestamp": "2026-05-01T10:00:02.000Z", "cwd": "/w", "isMeta": False},
    {"type": "assistant", "uuid": "a1", "parentUuid": "p1", "sessionId": "s1",
     "timestamp": "2026-05-01T10:00:03.000Z", "message": {
         "id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-6", "content": [
             {"type": "fallback", "from": {"model": "claude-fable-5"}, "to": {"model": "claude-sonnet-4-6"}},
             {"type": "text", "text": "Here is the answer."}]}},
]


def test_newer_lines_read_as_state_errors_and_notices():
    evs = [claude_code.event(rec, Ref("main", i, 0, 1)) for i, rec in enumerate(NEWER_LINES, 1)]
    assert [(e.kind, e.hidden) for e in evs[:4]] == [
        ("saved-hook-context", True), ("bridge-session", True), ("fork-context-ref", True),
        ("isolation-latch", True)]
    overloaded, reset, killed, answer = evs[4:]
    assert overloaded.role == reset.role == "error"
    assert overloaded.blocks[0].text == "API error 529: Overloaded · retry 3 of 10 in 5.1s"
    assert reset.blocks[0].text == "API error: ECONNRESET · retry 1 of 10 in 1.0s"
    assert killed.blocks[0].text == "running sub-agents stopped"
    assert [(b.kind, getattr(b, "text", "")) for b in answer.blocks] == [
        ("notice", "model fallback: claude-fable-5 → claude-sonnet-4-6"), ("text", "Here is the answer.")]


def test_newer_sidecars_in_a_session_are_hidden_state(tmp_path):
    path = tmp_path / "s1.jsonl"
    prompt = {"type": "user", "uuid": "p1", "parentUuid": None, "sessionId": "s1",
              "timestamp": "2026-05-01T09:59:59.000Z", "message": {"role": "user", "content": "Hi"}}
    path.write_text("".join(json.dumps(r) + "\n" for r in [prompt, *NEWER_LINES]), encoding="utf-8")
    assert detect.detect_file(path).format == "claude-code"
    idx = SessionIndex(path).build()
    assert "unknown" not in idx.threads["main"].kinds
    assert idx.summary.hidden == 4


# the bookkeeping and chat lines a current Claude Code (2.1.3xx) writes beside and among the
# messages, one of each (the shapes of real transcripts: title, name, colour, PR link, where a
# teleported session came from, queue, snapshot, progress, system subtypes and attachments, one
# of each of the last three of a kind not known here); the fuzzer mutates them as a seed
_S = "5b6c7d8e-0000-4000-8000-000000000001"
_E = {"sessionId": _S, "cwd": "/home/u/p", "version": "2.1.340", "gitBranch": "main", "userType": "external",
      "isSidechain": False, "entrypoint": "cli"}
_T = "2026-11-20T10:00:0%d.000Z"
CURRENT_TYPES = [
 {**_E, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": _T % 1, "message": {"role": "user", "content": "Open a PR for the fix"}},
 {"type": "ai-title", "aiTitle": "Open a PR for the fix", "sessionId": _S},
 {"type": "custom-title", "customTitle": "pr-fix", "sessionId": _S},
 {"type": "agent-name", "agentName": "pr-fix", "sessionId": _S},
 {"type": "agent-color", "agentColor": "green", "sessionId": _S},
 {"type": "last-prompt", "lastPrompt": "Open a PR for the fix", "leafUuid": "u1", "sessionId": _S},
 {"type": "pr-link", "sessionId": _S, "prNumber": 1042, "prUrl": "https://github.com/acme/widgets/pull/1042", "prRepository": "acme/widgets", "timestamp": _T % 2},
 {"type": "teleported-from", "remoteSessionId": "session_01ABC", "branch": "main", "messageCount": 0},
 {"type": "tag", "tag": "release", "sessionId": _S},
 {"type": "summary", "summary": "Opened PR 1042", "leafUuid": "u1"},
 {"type": "queue-operation", "operation": "enqueue", "timestamp": _T % 3, "sessionId": _S, "content": "also bump the version"},
 {"type": "queue-operation", "operation": "dequeue", "timestamp": _T % 3, "sessionId": _S},
 {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {"messageId": "u1", "trackedFileBackups": {"a.py": {"backupFileName": "x@v1", "version": 1, "backupTime": _T % 3}}, "timestamp": _T % 3}, "isSnapshotUpdate": False},
 {**_E, "type": "progress", "uuid": "p1", "parentUuid": "u1", "timestamp": _T % 4, "toolUseID": "toolu_9", "parentToolUseID": "toolu_9", "data": {"type": "mcp_progress", "status": "started", "serverName": "github", "toolName": "create_pr"}},
 {**_E, "type": "progress", "uuid": "p2", "parentUuid": "u1", "timestamp": _T % 4, "toolUseID": "toolu_9", "parentToolUseID": "toolu_9", "data": {"type": "query_update", "query": "widgets pr template"}},
 {**_E, "type": "system", "subtype": "informational", "uuid": "s1", "parentUuid": "u1", "timestamp": _T % 5, "content": "Model switched", "level": "info", "isMeta": False},
 {**_E, "type": "system", "subtype": "api_error", "uuid": "s2", "parentUuid": "s1", "timestamp": _T % 5, "level": "error", "error": {"status": 529, "error": {"type": "overloaded_error", "message": "Overloaded"}}, "retryInMs": 1200, "retryAttempt": 1, "maxRetries": 10},
 {**_E, "type": "system", "subtype": "compact_boundary", "uuid": "s3", "parentUuid": None, "logicalParentUuid": "s2", "timestamp": _T % 6, "content": "Conversation compacted", "level": "info", "compactMetadata": {"trigger": "auto", "preTokens": 160000}},
 {**_E, "type": "system", "subtype": "local_command", "uuid": "s4", "parentUuid": "s3", "timestamp": _T % 6, "content": "<command-name>/cost</command-name>\n<command-message>cost</command-message>\n<command-args></command-args>", "level": "info"},
 {**_E, "type": "system", "subtype": "future_subtype", "uuid": "s5", "parentUuid": "s4", "timestamp": _T % 6, "content": "A brand new system note", "level": "info"},
 {**_E, "type": "attachment", "uuid": "a1", "parentUuid": "s4", "timestamp": _T % 7, "attachment": {"type": "todo_reminder", "content": [{"content": "open PR", "status": "in_progress", "activeForm": "Opening PR"}], "itemCount": 1}},
 {**_E, "type": "attachment", "uuid": "a2", "parentUuid": "a1", "timestamp": _T % 7, "attachment": {"type": "brand_new_attachment", "content": "A new attachment body"}},
 {"type": "worktree-state", "sessionId": _S, "worktreeSession": {"originalCwd": "/home/u/p", "worktreePath": "/home/u/p/.claude/worktrees/x", "worktreeName": "x", "worktreeBranch": "x"}},
 {"type": "mode", "mode": "normal", "sessionId": _S},
 {"type": "permission-mode", "permissionMode": "acceptEdits", "sessionId": _S},
 {**_E, "type": "assistant", "uuid": "m1", "parentUuid": "a2", "timestamp": _T % 8, "requestId": "req_1", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-5", "content": [{"type": "text", "text": "Opened https://github.com/acme/widgets/pull/1042"}], "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}}},
]


def test_each_current_line_type_is_shown_or_waits_behind_the_toggle_with_its_reason(tmp_path):
    path = tmp_path / f"{_S}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in CURRENT_TYPES), encoding="utf-8")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert len(evs) == len(CURRENT_TYPES)  # none dropped
    assert idx.summary.title == "pr-fix"  # the /rename's over the CLI's own
    assert not [e.kind for e in evs if e.kind == "unknown" or (e.hidden and not e.hidden_reason)]
    # where a teleported session came from is said on the page, as where one went is
    (came,) = [e for e in evs if e.kind == "teleported-from"]
    assert not came.hidden
    assert came.blocks[0].text == "teleported from remote session session_01ABC (branch main)"
    # a system note and an attachment of kinds not known here keep their words
    assert [e.text() for e in evs if e.kind == "system:future_subtype"] == ["A brand new system note"]
    (new,) = [e for e in evs if e.kind == "attachment" and "brand_new_attachment" in e.blocks[0].text]
    assert "A new attachment body" in json.dumps(new.blocks[1].value)


def test_the_pull_request_a_session_opened_is_a_link_card_on_its_page(tmp_path):
    """`pr-link` (`/pr`, `gh pr create`): shown, not behind the toggle, as a link whose text is
    its address; hostile fields stay words, an address that is not a web address is not linked."""
    from viewer.web import create_app

    hostile = {"type": "pr-link", "sessionId": _S, "prNumber": "7<script>", "prUrl": "javascript:alert(1)",
               "prRepository": "<img src=x onerror=alert(2)>", "timestamp": _T % 3}
    path = tmp_path / "p" / f"{_S}.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in (*CURRENT_TYPES, hostile)), encoding="utf-8")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    pr, bad = [e for e in evs if e.kind == "pr-link"]
    assert not pr.hidden and not bad.hidden
    assert pr.blocks[0].text == \
        r"Pull request \#1042 of acme/widgets: <https://github.com/acme/widgets/pull/1042>"
    assert bad.blocks[0].text.endswith("its address is not a web address")
    assert bad.blocks[1].value == "javascript:alert(1)"
    app = create_app({"ROOTS": [str(tmp_path / "p")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "TESTING": True})
    html = app.test_client().get(f"/s/{_S}").get_data(as_text=True)
    card = re.search(rf'<li class="ev [^"]*" id="m-{pr.id}".*?</li>', html, re.S).group(0)
    assert ('<a href="https://github.com/acme/widgets/pull/1042" rel="noopener noreferrer nofollow">'
            "https://github.com/acme/widgets/pull/1042</a>") in card
    assert "is-hidden" not in card.split(">", 1)[0]
    bad_card = re.search(rf'<li class="ev [^"]*" id="m-{bad.id}".*?</li>', html, re.S).group(0)
    # the address that is not a web address is words in a data block, never a link
    assert "<a " not in bad_card.split('class="ev-body"', 1)[1]
    assert 'href="javascript' not in html and "<img src=x" not in html and "<script>" not in bad_card
    assert "&lt;img src=x onerror=alert(2)&gt;" in bad_card


def test_a_message_sent_mid_turn_is_shown_as_the_users(tmp_path):
    # Claude Code 2.1.90+ takes a message typed while the agent works into the running turn and
    # records it only as a `queued_command` attachment plus queue-operation lines, no user line
    # (claude-session-mcp models.py QueuedCommandAttachment / QueueOperationRecord).
    base = {"sessionId": "s1", "cwd": "/w", "userType": "external", "version": "2.1.120"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-05-01T10:00:00.000Z",
         "message": {"role": "user", "content": "Refactor the parser"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-05-01T10:00:05.000Z",
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-7", "content": [
             {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest -q"}}]}},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-05-01T10:00:07.000Z",
         "sessionId": "s1", "content": "also keep the old API working"},
        {**base, "type": "attachment", "uuid": "q1", "parentUuid": "a1", "timestamp": "2026-05-01T10:00:07.000Z",
         "attachment": {"type": "queued_command", "prompt": "also keep the old API working",
                        "commandMode": "prompt", "origin": {"kind": "human"}}},
        {"type": "queue-operation", "operation": "remove", "reason": "absorbed_mid_turn",
         "timestamp": "2026-05-01T10:00:08.000Z", "sessionId": "s1"},
        {**base, "type": "attachment", "uuid": "q2", "parentUuid": "q1", "timestamp": "2026-05-01T10:00:09.000Z",
         "attachment": {"type": "queued_command", "commandMode": "task-notification",
                        "prompt": "<task-notification><task-id>b1</task-id></task-notification>"}},
        {**base, "type": "user", "uuid": "r1", "parentUuid": "q2", "timestamp": "2026-05-01T10:00:10.000Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12 passed"}]}},
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    visible = [(e.role, e.text()) for e in evs if not e.hidden]
    assert ("user", "also keep the old API working") in visible
    assert idx.summary.title == "Refactor the parser"
    assert [e.hidden for e in evs] == [False, False, True, False, True, True, False]


# Lines of Claude Code 2.1.331 (npm @anthropic-ai/claude-code-linux-x64@2.1.331, the JS bundled in
# its binary): entry types from the transcript writer's table of entry types (file-history-delta,
# api-request / api-request-blob, tools-used, cost-state, memory-mode, repl-mode, relocated,
# derived-from, ended-by-model, continued-in), the attachments `queued_command` (a prompt typed
# while the agent worked; origin {kind}) and the hook ones as the hook runner builds them, and the
# system lines memory_saved ({writtenPaths}) and file_snapshot (isMeta).
_ENV = {"sessionId": "s1", "cwd": "/w", "version": "2.1.331", "gitBranch": "main",
        "isSidechain": False, "userType": "external", "entrypoint": "cli"}
LINES_2_1_331 = [
    {**_ENV, "type": "attachment", "uuid": "q1", "parentUuid": "p1", "timestamp": "2026-11-20T10:00:04.000Z",
     "attachment": {"type": "queued_command", "prompt": "also keep the old API working",
                    "source_uuid": "x1", "commandMode": "prompt", "origin": {"kind": "human"}}},
    {**_ENV, "type": "attachment", "uuid": "q2", "parentUuid": "q1", "timestamp": "2026-11-20T10:00:04.100Z",
     "attachment": {"type": "queued_command", "prompt": [{"type": "text", "text": "status?"}],
                    "origin": {"kind": "peer", "from": "team-lead"}}},
    {**_ENV, "type": "attachment", "uuid": "q3", "parentUuid": "q2", "timestamp": "2026-11-20T10:00:04.200Z",
     "attachment": {"type": "queued_command", "prompt": "carried over", "isMeta": True,
                    "origin": {"kind": "unclassified"}}},
    {**_ENV, "type": "attachment", "uuid": "h1", "parentUuid": "q3", "timestamp": "2026-11-20T10:00:05.000Z",
     "attachment": {"type": "hook_blocking_error", "hookName": "PreToolUse:Bash", "toolUseID": "toolu_1",
                    "hookEvent": "PreToolUse", "blockingError": {
                        "blockingError": "make is not allowed here; use just", "command": "guard.sh"}}},
    {**_ENV, "type": "attachment", "uuid": "h2", "parentUuid": "h1", "timestamp": "2026-11-20T10:00:05.100Z",
     "attachment": {"type": "hook_stopped_continuation", "message": "Tests must pass before stopping",
                    "hookName": "Stop", "toolUseID": "t-stop", "hookEvent": "Stop"}},
    {**_ENV, "type": "attachment", "uuid": "h3", "parentUuid": "h2", "timestamp": "2026-11-20T10:00:05.200Z",
     "attachment": {"type": "hook_non_blocking_error", "hookName": "PostToolUse:Edit", "toolUseID": "toolu_9",
                    "hookEvent": "PostToolUse", "stderr": "prettier: not found", "stdout": "",
                    "exitCode": 1, "command": "prettier --write"}},
    {**_ENV, "type": "attachment", "uuid": "h4", "parentUuid": "h3", "timestamp": "2026-11-20T10:00:05.300Z",
     "attachment": {"type": "hook_system_message", "content": "The staging DB is read-only today.",
                    "hookName": "SessionStart", "toolUseID": "t-ss", "hookEvent": "SessionStart"}},
    {**_ENV, "type": "attachment", "uuid": "h5", "parentUuid": "h4", "timestamp": "2026-11-20T10:00:05.400Z",
     "attachment": {"type": "hook_success", "hookName": "PostToolUse:Edit", "toolUseID": "toolu_9",
                    "hookEvent": "PostToolUse", "content": "", "stdout": "ok", "exitCode": 0}},
    {**_ENV, "type": "system", "subtype": "memory_saved", "uuid": "m1", "parentUuid": "h5",
     "timestamp": "2026-11-20T10:00:06.000Z", "writtenPaths": ["/home/u/.claude/memory/parser.md"],
     "isMeta": False},
    {**_ENV, "type": "system", "subtype": "file_snapshot", "uuid": "f1", "parentUuid": "m1",
     "timestamp": "2026-11-20T10:00:06.100Z", "content": "File snapshot", "level": "info", "isMeta": True,
     "snapshotFiles": [{"key": "plan", "path": "/w/plan.md", "content": "# plan"}]},
    {"type": "file-history-delta", "messageId": "p1", "snapshotMessageId": "p1", "trackingPath": "a.py",
     "backup": {"backupFileName": "x@v2", "version": 2, "backupTime": "2026-11-20T10:00:07.000Z"},
     "timestamp": "2026-11-20T10:00:07.000Z"},
    {"type": "tools-used", "tools": ["Bash", "Edit"], "sessionId": "s1"},
    {"type": "cost-state", "sessionId": "s1", "totalCostUSD": 0.42, "totalAPIDuration": 1200},
    {"type": "api-request", "sessionId": "s1", "id": "r1", "timestamp": "2026-11-20T10:00:07.000Z",
     "querySource": "repl_main_thread", "shapeHash": "h", "params": {"model": "claude-opus-4-7"},
     "keep": 0, "tail": []},
    {"type": "api-request-blob", "sessionId": "s1", "hash": "h",
     "message": {"role": "user", "content": "Refactor the parser."}},
    {"type": "memory-mode", "mode": "on", "afterUuid": "p1", "timestamp": "2026-11-20T10:00:07.000Z",
     "sessionId": "s1"},
    {"type": "repl-mode", "replMode": "default", "sessionId": "s1"},
    {"type": "relocated", "relocatedCwd": "/w2", "sessionId": "s1"},
    {"type": "derived-from", "v": 1, "sessionId": "s1", "sessions": ["s0"]},
    {"type": "ended-by-model", "timestamp": "2026-11-20T10:00:08.000Z", "sessionId": "s1"},
    {"type": "atis-latch", "atis": "", "sessionId": "s1"},
    {"type": "continued-in", "timestamp": "2026-11-20T10:00:09.000Z", "sessionId": "s1",
     "continuedInSessionId": "s2"},
]


def test_lines_of_2_1_331_read_as_prompts_hooks_notices_and_state():
    evs = [claude_code.event(rec, Ref("main", i, 0, 1)) for i, rec in enumerate(LINES_2_1_331, 1)]
    typed, peer, carried, blocked, stopped, failed, says, ok, memory, snap = evs[:10]
    # a prompt sent while the agent worked is the user's message; one carried over (isMeta) is not
    assert (typed.role, typed.kind, typed.hidden) == ("user", "message", False)
    assert typed.text() == "also keep the old API working"
    assert (peer.role, peer.hidden, peer.text()) == ("user", False, "status?")
    assert peer.blocks[0].text == "sent while the agent was working (from peer)"
    assert carried.hidden and carried.hidden_reason == "meta"
    # what hooks blocked, stopped, failed at or said is shown; a hook that just ran is not
    assert [(e.kind, e.hidden, e.blocks[0].text, e.blocks[1].text) for e in (blocked, stopped, failed, says)] == [
        ("hook", False, "hook PreToolUse:Bash blocked", "make is not allowed here; use just"),
        ("hook", False, "hook Stop stopped the agent", "Tests must pass before stopping"),
        ("hook", False, "hook PostToolUse:Edit failed (exit 1)", "prettier: not found"),
        ("hook", False, "hook SessionStart says", "The staging DB is read-only today.")]
    assert ok.hidden and ok.kind == "attachment"
    assert memory.blocks[0].text == "memory saved: /home/u/.claude/memory/parser.md"
    assert snap.hidden and snap.hidden_reason == "meta"
    *state, moved = evs[10:]
    assert all(e.hidden and e.kind != "unknown" for e in state), [e.kind for e in state]
    assert (moved.hidden, moved.blocks[0].text) == (False, "continued in session s2")
    refused = claude_code.event({**_ENV, "type": "system", "subtype": "model_refusal_no_fallback",
                                 "content": "", "level": "warning", "originalModel": "claude-opus-4-7",
                                 "requestId": "req_1", "apiRefusalCategory": "cyber",
                                 "apiRefusalExplanation": "Declined to write malware",
                                 "refusedUserMessageUuid": "p1", "isMeta": False, "uuid": "r9",
                                 "timestamp": "2026-11-20T10:00:09.000Z"}, Ref("main", 98, 0, 1))
    assert (refused.hidden, refused.blocks[0].text) == (
        False, "claude-opus-4-7 refused: cyber — Declined to write malware")
    odd = claude_code.event({"type": "attachment", "attachment": {"type": ["hook_blocking_error"]}},
                            Ref("main", 99, 0, 1))  # a type that is not a string does not raise
    assert odd.hidden and odd.kind == "attachment"


def test_a_session_of_2_1_331_through_the_index_and_page(tmp_path):
    path = tmp_path / "s1.jsonl"
    prompt = {**_ENV, "type": "user", "uuid": "p1", "parentUuid": None,
              "timestamp": "2026-11-20T09:59:59.000Z", "message": {"role": "user", "content": "Refactor it"}}
    path.write_text("".join(json.dumps(r) + "\n" for r in [prompt, *LINES_2_1_331]), encoding="utf-8")
    assert detect.detect_file(path).format == "claude-code"
    idx = SessionIndex(path).build()
    th = idx.threads["main"]
    assert "unknown" not in th.kinds
    assert idx.summary.hidden == 2 + 1 + 11  # meta (queued, snapshot), hook_success, state lines
    assert th.roles.count("user") == 4 and th.kinds.count("hook") == 4
    evs = load_events(idx, "main", 0, len(th))
    assert [e.text() for e in evs if e.role == "user" and not e.hidden] == [
        "Refactor it", "also keep the old API working", "status?"]
    from viewer.web import create_app

    app = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    for words in ("also keep the old API working", "from peer", "hook PreToolUse:Bash blocked",
                  "make is not allowed here; use just", "hook Stop stopped the agent",
                  "prettier: not found", "continued in session s2"):
        assert words in html, words


def test_a_workflows_agents_in_nested_folders_are_its_threads(tmp_path):
    import os
    import time

    # Claude Code 2.1.331 writes the agents a Workflow runs to
    # <session>/subagents/workflows/<run id>/agent-<id>.jsonl (+ .meta.json with agentType,
    # description, workflowPhase): they were neither listed (agent files) nor read as threads.
    main = tmp_path / "s1.jsonl"
    env = {**_ENV, "timestamp": "2026-11-20T10:00:00.000Z"}
    main.write_text("".join(json.dumps(r) + "\n" for r in [
        {**env, "type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "Run the review"}},
        {**env, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {
            "id": "m1", "role": "assistant", "model": "claude-opus-4-7", "content": [
                {"type": "tool_use", "id": "toolu_wf", "name": "Workflow", "input": {"name": "review"}}]}},
    ]), encoding="utf-8")

    def agent(run, agent_id, words):
        folder = tmp_path / "s1" / "subagents" / "workflows" / run
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"agent-{agent_id}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
            {**env, "type": "user", "uuid": f"{agent_id}-1", "parentUuid": None, "isSidechain": True,
             "agentId": agent_id, "message": {"role": "user", "content": words}},
            {**env, "type": "assistant", "uuid": f"{agent_id}-2", "parentUuid": f"{agent_id}-1",
             "isSidechain": True, "agentId": agent_id, "message": {
                 "id": f"m-{agent_id}", "role": "assistant", "model": "claude-sonnet-4-6",
                 "content": [{"type": "text", "text": "Looked at it."}]}},
        ]), encoding="utf-8")
        (folder / f"agent-{agent_id}.meta.json").write_text(json.dumps(
            {"agentType": "general-purpose", "description": words, "workflowPhase": "review"}))

    agent("wf_1", "a0123456789abcdef", "Review the parser")
    old = time.time() - 10  # folders settled before the listing (a listing trusts them then)
    for d in (tmp_path, tmp_path / "s1", *(tmp_path / "s1" / "subagents").rglob("*")):
        if d.is_dir():
            os.utime(d, (old, old))
    assert claude_code.is_companion(str(tmp_path / "s1/subagents/workflows/wf_1/agent-a0123456789abcdef.jsonl"))
    idx = SessionIndex(main).build()
    assert {n: th.label for n, th in idx.threads.items() if n != "main"} == {
        "a0123456789abcdef": "general-purpose · Review the parser"}
    assert len(idx.threads["a0123456789abcdef"]) == 2
    # a run started later (only the workflows folder's time changes) is found by a refresh
    agent("wf_2", "afedcba9876543210", "Review the tests")
    idx.refresh()
    assert "afedcba9876543210" in idx.threads


def test_user_lines_the_person_did_not_type_name_their_sender():
    # 2.1.331 marks who a prompt line came from (`origin.kind`, the sender's name in `from`);
    # they all read as "User" before: another agent's are its, the CLI's own are system lines
    def line(n, origin, content="carry on", **extra):
        return {**_ENV, "type": "user", "uuid": f"u{n}", "parentUuid": None, "promptId": "p",
                "timestamp": "2026-11-20T10:00:00.000Z", **({"origin": origin} if origin else {}),
                "message": {"role": "user", "content": content}, **extra}

    recs = [line(1, {"kind": "auto-continuation"}), line(2, {"kind": "peer", "from": "team-lead"}, "status?"),
            line(3, {"kind": "human"}, "typed"), line(4, None, "typed too"),
            line(5, {"kind": "coordinator"}), line(6, {"kind": "brand-new-kind"})]
    evs = [claude_code.event(r, Ref("main", i, 0, 1)) for i, r in enumerate(recs, 1)]
    assert [(e.role, e.kind, e.author) for e in evs] == [
        ("system", "auto_continuation", None), ("user", "message", "peer agent team-lead"),
        ("user", "message", None), ("user", "message", None), ("user", "message", "coordinator"),
        ("system", "brand_new_kind", None)]
    # none of them is the session's title, and the index pass agrees with the events
    assert [claude_code.title_of(e) for e in evs] == [None, None, "typed", "typed too", None, None]
    assert all(claude_code.digest(r) is None for r in recs[:2])
    # a queued prompt from a peer names it too
    (peer,) = [claude_code.event(LINES_2_1_331[1], Ref("main", 1, 0, 1))]
    assert peer.author == "peer agent team-lead"


def test_a_result_line_says_why_its_call_never_ran():
    # 2.1.331 writes toolDenialKind on the line of a refused / interrupted / cancelled call's result
    def result(kind, text):
        return {**_ENV, "type": "user", "uuid": "r", "parentUuid": "a", "timestamp": "2026-11-20T10:00:00.000Z",
                "toolDenialKind": kind, "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": text}]}}

    states = [claude_code.event(result(k, "Permission to use Bash has been denied."), Ref("main", 1, 0, 1)
                                ).blocks[0].state
              for k in ("permission-rule", "automode-blocked", "interrupted", "cancelled", "future-kind")]
    assert states == ["denied_by_settings", "denied_by_auto_mode", "interrupted", "cancelled", None]
    # older -p runs say it only in words
    old = result(None, "Claude requested permissions to use WebFetch, but you haven't granted it yet.")
    del old["toolDenialKind"]
    assert claude_code.event(old, Ref("main", 1, 0, 1)).blocks[0].state == "denied_by_settings"


def test_a_bookkeeping_line_with_an_integer_past_64_bits_is_read():
    # valid JSON that orjson will not write back: as_text raised and the line was lost
    rec = json.loads('{"type": "cost-state", "sessionId": "s1", "totalCostUSD": 123456789012345678901234567890}')
    ev = claude_code.event(rec, Ref("main", 1, 0, 1))
    assert ev.hidden and "123456789012345678901234567890" in ev.blocks[0].text


def test_a_queued_prompt_removed_unsent_is_shown():
    # typed while the agent worked, then taken off the queue unsent (the × on it, a cancel that
    # cleared the queue): the queue-operation line is the only one holding the person's words
    def op(operation, content=None, reason=None):
        return {"type": "queue-operation", "operation": operation, "sessionId": "s1",
                "timestamp": "2026-11-20T10:00:00.000Z", **({"content": content} if content else {}),
                **({"reason": reason} if reason else {})}

    evs = [claude_code.event(r, Ref("main", i, 0, 1)) for i, r in enumerate([
        op("enqueue", "also fix the docs"), op("remove", "also fix the docs"),
        op("remove", "and the tests", "cleared_on_cancel"),
        op("remove", "taken in mid-turn", "absorbed_mid_turn"),  # shown from its attachment
        op("remove", "<task-notification>\n<task-id>t1</task-id>"), op("remove"), op("dequeue")], 1)]
    shown = [(e.role, e.kind, [b.text for b in e.blocks]) for e in evs if not e.hidden]
    assert shown == [
        ("user", "queued_prompt", ["typed while the agent was working, removed from the queue before it was sent",
                                   "also fix the docs"]),
        ("user", "queued_prompt", ["typed while the agent was working, removed from the queue before it was sent"
                                   " (cleared on cancel)", "and the tests"])]
    assert all(claude_code.title_of(e) is None for e in evs)


def test_teammate_messages_read_as_the_teammates_not_the_person(tmp_path):
    """An agent team's lead gets its teammates' messages as user lines of `<teammate-message
    teammate_id=… summary=…>` (claude-code-log's teammates fixture, CLI 2.1.34): each is the
    teammate's, with its summary; not a prompt the person typed, nor raw tags."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": "s1",
            "version": "2.1.34", "teamName": "test-coverage"}
    lines = [
        {**base, "parentUuid": None, "uuid": "u1", "timestamp": "2026-04-19T10:01:00.000Z", "type": "user",
         "message": {"role": "user", "content": [{"type": "text", "text": "Start a test-coverage team."}]}},
        {**base, "parentUuid": "u1", "uuid": "u2", "timestamp": "2026-04-19T10:14:00.000Z", "type": "user",
         "message": {"role": "user", "content": (
             '<teammate-message teammate_id="alice" color="blue" summary="relay tests complete">\n'
             "Relay module coverage is now **96%**.\n</teammate-message>")}},
        {**base, "parentUuid": "u2", "uuid": "u3", "timestamp": "2026-04-19T10:15:00.000Z", "type": "user",
         "message": {"role": "user", "content": (
             '<teammate-message teammate_id="bob" color="green" summary="server tests passing">\n'
             "All server tests pass.\n</teammate-message>\n\n"
             '<teammate-message teammate_id="system">\nteammate_terminated: alice exited cleanly\n'
             "</teammate-message>")}},
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert idx.summary.title == "Start a test-coverage team."
    assert list(idx.threads["main"].prompts) == [0]  # the teammates' lines are no prompts
    alice, both = evs[1], evs[2]
    assert alice.author == "teammate alice"
    assert [(b.kind, b.text) for b in alice.blocks] == [
        ("notice", "relay tests complete"), ("text", "Relay module coverage is now **96%**.")]
    assert both.author == "teammates"  # several senders: each message says whose it is
    assert [b.text for b in both.blocks if b.kind == "notice"] == ["from bob: server tests passing", "from system"]
    assert not any("<teammate-message" in b.text for e in evs for b in e.blocks if b.kind == "text")
