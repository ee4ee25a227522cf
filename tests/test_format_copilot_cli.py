"""copilot_cli adapter: GitHub Copilot CLI sessions, the folder form (`<id>/events.jsonl`) and the
first versions' single file (`<id>.jsonl`), from test_data/formats/copilot-cli (see its README),
read through the index as the page reads them."""

import json
import shutil
from pathlib import Path

import pytest

from viewer.formats import copilot_cli, detect
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.store import Store

from conftest import CORPUS, ROOT, built

STATE = ROOT / "test_data" / "formats" / "copilot-cli" / "session-state"
FOLDER = STATE / "7f3c2a10-5b8e-4c1d-9a2f-0e6d4b8c1a55"
EVENTS = FOLDER / "events.jsonl"
LEGACY = STATE / "1a2b3c4d-0000-4e5f-8a9b-0c1d2e3f4a5b.jsonl"
AGENTS = STATE / "c0ffee00-1d2e-4f30-8a41-52b6c7d8e9f0" / "events.jsonl"
R = Ref("main", 1, 0, 1)


def result_text(idx, evs, call_id) -> str:
    call = idx.calls.calls[call_id]
    res = evs[call.result[1]].tool_results()[0]
    return "\n".join(getattr(b, "text", "") for b in res.content)


@pytest.mark.parametrize("path", [EVENTS, LEGACY, AGENTS])
def test_both_layouts_are_detected_as_copilot_cli(path):
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("copilot-cli", "jsonl")


def test_no_other_bundled_or_corpus_session_is_taken_for_copilot_cli():
    others = [p for base in (ROOT / "test_data", CORPUS) for p in base.rglob("*.jsonl")
              if "copilot-cli" not in p.parts]
    assert len(others) > 20
    assert [p for p in others if detect.detect_file(p).format == "copilot-cli"] == []


def test_the_folder_is_listed_once_by_its_name_and_its_own_files_never():
    rows = Store([STATE.parent]).sessions()
    assert sorted(r.label for r in rows) == ["session-state/1a2b3c4d-0000-4e5f-8a9b-0c1d2e3f4a5b",
                                             "session-state/7f3c2a10-5b8e-4c1d-9a2f-0e6d4b8c1a55",
                                             "session-state/c0ffee00-1d2e-4f30-8a41-52b6c7d8e9f0"]
    assert {Path(r.path) for r in rows} == {EVENTS, LEGACY, AGENTS}  # not files/notes.jsonl
    # the session folder given itself is the one session, named after the folder
    only, = Store([FOLDER]).sessions()
    assert only.label == FOLDER.name and Path(only.path) == EVENTS


def test_title_model_and_each_call_with_its_own_input_and_state():
    idx, evs = built(EVENTS)
    assert idx.summary.title == "Fix cart discount"  # workspace.yaml's summary, as /resume lists it
    assert idx.summary.models == ["claude-sonnet-4.5", "gpt-5.1"]
    states = {cid: c.state for cid, c in idx.calls.calls.items()}
    assert states == {"toolu_view_1": "completed", "toolu_edit_2": "completed", "toolu_bash_3": "error",
                      "toolu_task_4": "completed", "toolu_grep_5": "completed", "toolu_rm_6": "denied",
                      "toolu_bash_7": "interrupted"}
    uses = {b.id: b for e in evs for b in e.tool_uses()}
    assert uses["toolu_edit_2"].input["new_str"].endswith("- discount")  # a JSON string, parsed
    assert uses["toolu_bash_3"].input == {"command": "pytest -q tests/test_cart.py",
                                          "description": "Run the cart tests"}
    # the full result the CLI shows (a diff) rather than the short line the model got
    assert result_text(idx, evs, "toolu_edit_2").startswith("diff --git a/cart.py")
    failed = result_text(idx, evs, "toolu_bash_3")
    assert "exit code 1" in failed and "1 failed, 1 passed" in failed
    call = idx.calls.calls["toolu_view_1"]
    assert call.finished_at - call.called_at == 2.0  # from the request to its completion


def test_a_refusal_names_who_refused_and_shows_what_the_person_said():
    idx, evs = built(EVENTS)
    answer = next(e for e in evs if e.kind == "permission_answer" and not e.hidden)
    assert answer.blocks[0].text == "denied by the user" and answer.text() == "keep the fixtures"
    assert idx.calls.calls["toolu_rm_6"].state == "denied"
    # an answer that let the call run is bookkeeping
    assert all(e.hidden for e in evs if e.kind == "permission_answer" and "approved" in e.blocks[0].text)


@pytest.mark.parametrize("kind,state", [("denied-by-rules", "denied_by_settings"),
                                        ("denied-no-approval-rule-and-could-not-request-from-user",
                                         "denied_by_settings"),
                                        ("denied-by-permission-request-hook", "blocked_by_hook"),
                                        ("cancelled", "cancelled")])
def test_other_refusals_keep_their_own_name(tmp_path, kind, state):
    path = tmp_path / "s.jsonl"
    rows = [{"type": "assistant.message", "data": {"messageId": "m", "content": "",
                                                   "toolRequests": [{"toolCallId": "c1", "name": "bash",
                                                                     "arguments": {"command": "ls"}}]}},
            {"type": "permission.completed", "data": {"requestId": "p", "toolCallId": "c1",
                                                      "result": {"kind": kind}}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": False,
                                                         "error": {"message": "not allowed"}}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    idx, _ = built(path)
    assert idx.calls.calls["c1"].state == state


def test_a_call_asked_about_and_not_yet_answered_awaits_permission(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = EVENTS.read_text().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if '"perm-2"' in ln)
    path.write_text("".join(lines[:cut + 1]))  # the CLI is waiting on the person
    idx, _ = built(path)
    assert idx.calls.calls["toolu_rm_6"].state == "awaiting_permission"


def test_thinking_context_attachments_and_the_sub_agent_under_its_call():
    idx, evs = built(EVENTS)
    thoughts = [b.text for e in evs for b in e.blocks if b.kind == "thinking"]
    assert thoughts == ["The total is computed before the discount is applied.",
                        "I will subtract the discount, then run the tests."]
    system = next(e for e in evs if e.kind == "context")
    assert system.blocks[0].kind == "context" and system.blocks[0].label == "system prompt"
    prompt = next(e for e in evs if e.role == "user")
    assert [b.text for b in prompt.blocks if b.kind == "notice"] == ["attached file: cart.py"]
    under = [e for e in evs if e.parent == "toolu_task_4"]
    assert [e.kind for e in under] == ["subagent.started", "message", "tool_result", "subagent.finished"]
    assert under[-1].text() == "" and "4.2s, 1 tool calls, 1,830 tokens" in under[-1].blocks[0].text
    assert idx.summary.agents == ["Explore"]


def test_parallel_sub_agents_named_only_by_agent_id_each_hang_under_their_own_task_call():
    # newer CLIs drop `data.parentToolCallId`: the envelope's `agentId` (the task call's id) says whose
    idx, evs = built(AGENTS)
    callers = [e.kind for e in evs if e.parent == "toolu_01TaskCallers"]
    tests = [e.kind for e in evs if e.parent == "toolu_01TaskTests"]
    assert callers == tests == ["subagent.started", "message", "tool_result", "subagent.finished"]
    grep = next(e for e in evs if any(u.id == "toolu_01Grep" for u in e.tool_uses()))
    assert grep.parent == "toolu_01TaskCallers"
    # the main agent's own events (its prompt, its task calls and their results) are not a sub-agent's
    main = [e for e in evs if e.message_id in ("n-1", "n-4") or e.role == "user"
            or e.tool_results() and e.tool_results()[0].tool_use_id.startswith("toolu_01Task")]
    assert len(main) == 5 and [e.parent for e in main] == [None] * 5
    assert idx.calls.calls["toolu_01Pytest"].state == "completed"
    assert {"Explore", "Task"} <= set(idx.summary.agents)


def test_abort_interrupts_the_open_call_and_the_session_end_card_has_the_totals():
    idx, evs = built(EVENTS)
    abort = next(e for e in evs if e.kind == "abort")
    assert abort.blocks[0].text == "turn aborted: user initiated" and not abort.hidden
    end = next(e for e in evs if e.kind == "shutdown")
    texts = [b.text for b in end.blocks]
    assert texts[0] == "session ended"
    assert "1 files changed, +1 −1 lines: /home/dev/shop/cart.py" in texts
    assert "claude-sonnet-4.5: 48,210 in, 495 out, 30,100 cache read, 5 requests, 5 premium requests" in texts
    # the messages' output counts alone are not priced as if they were the whole cost
    assert idx.summary.usage.get("tokens", 0) == 0 and not idx.summary.usage.get("cost")


def test_a_calls_full_usage_is_counted_once_per_api_call(tmp_path):
    path = tmp_path / "s.jsonl"
    usage = {"type": "assistant.usage", "data": {"model": "claude-sonnet-4.5", "apiCallId": "a1",
                                                 "inputTokens": 1000, "outputTokens": 50, "cacheReadTokens": 400}}
    rows = [{"type": "user.message", "data": {"content": "hi"}}, usage, usage,
            {"type": "assistant.message", "data": {"messageId": "m", "apiCallId": "a1", "content": "hello",
                                                   "outputTokens": 50}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    idx, _ = built(path)
    assert idx.summary.usage["calls"] == 1 and idx.summary.usage["tokens"] == 1450


def test_unknown_types_are_quiet_visible_cards_and_odd_shapes_never_crash():
    idx, evs = built(EVENTS)
    assert idx.summary.unparsed == 0
    future = next(e for e in evs if e.kind == "session.future_event")
    assert not future.hidden and future.blocks[0].kind == "data" and future.blocks[0].value == {"whatever": 1}
    turns = [e for e in evs if e.kind in ("assistant.turn_start", "assistant.turn_end")]
    assert turns and all(e.hidden for e in turns)
    for rec in ({"type": "user.message", "data": None}, {"type": "assistant.message", "data": {
            "toolRequests": [None, {"arguments": "{not json"}], "content": 3}},
            {"type": "tool.execution_complete", "data": {"result": [1], "error": 5}},
            {"type": "session.shutdown", "data": {"modelMetrics": {"m": None}, "codeChanges": 3}},
            {"type": "permission.completed", "data": {"result": "x"}}, [1], "x", None):
        copilot_cli.event(rec, R)


def test_bookkeeping_cards_behind_the_toggle_say_what_they_hold():
    """Shown with the hidden events, a turn's start, a tool starting and a streaming piece are not
    empty cards: their fields, the tool's name, what the piece is (not its words again)."""
    _, evs = built(EVENTS)
    turn = next(e for e in evs if e.kind == "assistant.turn_start")
    assert turn.hidden and [b.kind for b in turn.blocks] == ["data"]
    assert turn.blocks[0].value == {"turnId": "0", "model": "claude-sonnet-4.5"}
    started = next(e for e in evs if e.kind == "tool_progress" and e.running == ["toolu_view_1"])
    assert started.hidden and started.blocks[0].text == "view started running"
    delta = copilot_cli.event({"type": "assistant.message_delta", "data": {
        "messageId": "m1", "deltaContent": "the secret word zebrafish"}}, R)
    assert delta.hidden and len(delta.blocks) == 1 and "zebrafish" not in delta.blocks[0].text


def test_sniff_claims_its_events_and_nothing_else():
    assert copilot_cli.sniff({"type": "session.start", "data": {}, "id": "x"}) == 3
    assert copilot_cli.sniff({"type": "subagent.newly_added", "data": {}}) == 3
    assert copilot_cli.sniff({"type": "progress", "data": {"type": "hook_progress"}}) == 0  # Claude Code
    assert copilot_cli.sniff({"type": "user.message", "content": "x"}) == 0
    assert copilot_cli.sniff({"type": "response_item", "payload": {}}) == 0


def test_legacy_single_file_reads_model_call_and_result():
    idx, evs = built(LEGACY)
    assert idx.summary.title == "List the files here"
    assert idx.summary.models == ["claude-sonnet-4.5"]
    assert result_text(idx, evs, "tooluse_ls") == "README.md\nsrc"  # the exit line taken off
    assert idx.calls.calls["tooluse_ls"].state == "completed"


def test_a_command_that_exited_non_zero_is_an_error_though_the_tool_ran(tmp_path):
    path = tmp_path / "s.jsonl"
    rows = [{"type": "assistant.message", "data": {"messageId": "m", "content": "",
                                                   "toolRequests": [{"toolCallId": "c1", "name": "bash",
                                                                     "arguments": {"command": "make"}}]}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True, "result": {
                "content": "make: *** No rule to make target\n<exited with exit code 2>"}}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    idx, evs = built(path)
    assert idx.calls.calls["c1"].state == "error"
    assert result_text(idx, evs, "c1") == "make: *** No rule to make target\nexit code 2"


@pytest.mark.parametrize("kind", ["shell_exit", "terminal"])
def test_a_non_zero_exit_code_among_the_results_contents_is_an_error(tmp_path, kind):
    path = tmp_path / "s.jsonl"
    rows = [{"type": "assistant.message", "data": {"messageId": "m", "content": "",
                                                   "toolRequests": [{"toolCallId": "c1", "name": "bash",
                                                                     "arguments": {"command": "make"}}]}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True, "result": {
                "content": "make: *** No rule to make target\n<exited with exit code 2>",
                "contents": [{"type": kind, "exitCode": 2}]}}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    idx, evs = built(path)
    assert idx.calls.calls["c1"].state == "error"
    assert result_text(idx, evs, "c1") == "make: *** No rule to make target\nexit code 2"  # said once
    rows[1]["data"]["result"]["content"] = "make: *** No rule to make target"  # the contents alone
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    idx, evs = built(path)
    assert idx.calls.calls["c1"].state == "error"
    assert result_text(idx, evs, "c1") == "make: *** No rule to make target\nexit code 2"


def test_an_exit_line_with_a_number_too_long_to_be_a_code_stays_in_the_text(tmp_path):
    path = tmp_path / "s.jsonl"
    line = "<exited with exit code " + "9" * 5000 + ">"
    rows = [{"type": "assistant.message", "data": {"messageId": "m", "content": "",
                                                   "toolRequests": [{"toolCallId": "c1", "name": "bash",
                                                                     "arguments": {"command": "make"}}]}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True, "result": {
                "content": "done\n" + line}}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    idx, evs = built(path)
    assert idx.summary.unparsed == 0
    assert idx.calls.calls["c1"].state == "completed"
    assert result_text(idx, evs, "c1") == "done\n" + line


def test_appended_lines_extend_the_index(tmp_path):
    path = tmp_path / "s" / "events.jsonl"
    path.parent.mkdir()
    lines = EVENTS.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:10]))
    idx = SessionIndex(path).build()
    assert idx.calls.calls["toolu_bash_3"].state == "pending"
    with path.open("a") as f:
        f.write("".join(lines[10:17]))
    idx.refresh()
    assert idx.calls.calls["toolu_bash_3"].state == "error"
    assert len(idx.threads["main"]) == 17


def test_a_tool_request_of_a_shape_not_known_shows_what_it_holds():
    # found by the fuzzer's unknown-block mutation: an item of `toolRequests` with neither a name
    # nor arguments (a newer CLI's) was drawn 'Tool: ?' with nothing in it, its text lost
    ev = copilot_cli.event({"type": "assistant.message", "id": "e1", "timestamp": "2026-01-01T00:00:00Z",
                            "data": {"content": "Checking.", "toolRequests": [
                                {"toolCallId": "t1", "name": "bash", "arguments": {"command": "ls"}},
                                {"toolCallId": "t2", "type": "web_fetch_v2", "url": "https://example.com/notes"}]}}, R)
    calls = [b for b in ev.blocks if b.kind == "tool_use"]
    assert [(c.id, c.name) for c in calls] == [("t1", "bash"), ("t2", "web_fetch_v2")]
    assert calls[1].input == {"type": "web_fetch_v2", "url": "https://example.com/notes"}


def test_a_results_embedded_resource_and_an_item_of_a_type_not_known_are_shown():
    # a result's `contents` of MCP types: an embedded resource's text and an item of a type not
    # known here were dropped (only images, sounds and links were drawn) — the latter found by
    # the fuzzer's unknown-block mutation
    ev = copilot_cli.event({"type": "tool.execution_complete", "id": "e2", "timestamp": "2026-01-01T00:00:01Z",
                            "data": {"toolCallId": "t1", "success": True, "result": {
                                "content": "fetched 1 resource", "contents": [
                                    {"type": "text", "text": "fetched 1 resource"},
                                    {"type": "resource", "resource": {"uri": "file:///notes.md",
                                                                      "text": "# Notes\nship on Friday"}},
                                    {"type": "map_tile", "caption": "the office on a map"}]}}}, R)
    shown = json.dumps([b.__repr__() for b in ev.blocks[0].content])
    assert "ship on Friday" in shown and "the office on a map" in shown
    assert shown.count("fetched 1 resource") == 1


def _folder_session(tmp_path, workspace: str | None):
    folder = tmp_path / "session-state" / FOLDER.name
    folder.mkdir(parents=True)
    shutil.copy(EVENTS, folder / "events.jsonl")
    if workspace is not None:
        (folder / "workspace.yaml").write_text(workspace)
    return folder


def test_the_session_is_named_as_resume_lists_it(tmp_path):
    """The CLI keeps the session's name in workspace.yaml (github/copilot-cli#4244: a rename
    "syncs into ~/.copilot/session-state/UUID/workspace.yaml (`name:` + `user_named:`)";
    Arithmomaniac/copilot-session-tools#37 and #96: `summary:` is the generated title /resume
    shows, newer versions write `name:`); `session.title_changed` is ephemeral (copilot-sdk
    session-events.ts) and never in events.jsonl. The list and the page are titled by it."""
    head = "id: 7f3c2a10-5b8e-4c1d-9a2f-0e6d4b8c1a55\ncwd: /home/dev/shop\n"
    folder = _folder_session(tmp_path, head + "summary: Fix cart discount\nsummary_count: 1\n")
    st = Store([tmp_path / "session-state"])
    (ref,) = st.sessions()
    st.index(ref.key)
    assert st.summary_of(ref.key).title == "Fix cart discount"
    # /rename: the name the person gave wins, also over a generated summary beside it
    (folder / "workspace.yaml").write_text(
        head + "name: 'cart: discount before tax'\nuser_named: true\nsummary: Fix cart discount\n")
    assert SessionIndex(folder / "events.jsonl").build().summary.title == "cart: discount before tax"
    # no workspace.yaml (or one without a name): the first prompt, as before
    bare = _folder_session(tmp_path / "b", None)
    assert SessionIndex(bare / "events.jsonl").build().summary.title.startswith("Why does the cart total")
    (bare / "workspace.yaml").write_text("{not: [yaml")
    assert SessionIndex(bare / "events.jsonl").build().summary.title.startswith("Why does the cart total")


def test_a_rename_while_the_session_is_open_shows(tmp_path):
    folder = _folder_session(tmp_path, "summary: Fix cart discount\n")
    idx = SessionIndex(folder / "events.jsonl").build()
    assert idx.summary.title == "Fix cart discount" and idx.unchanged()
    (folder / "workspace.yaml").write_text("summary: Fix cart discount\nname: Cart totals\nuser_named: true\n")
    assert not idx.unchanged()
    idx.refresh()
    assert idx.summary.title == "Cart totals"


def test_what_the_session_became_reads_as_notices_not_raw_data(tmp_path):
    """Events the CLI persists that this reader showed as raw data cards (github/copilot-sdk
    nodejs/src/generated/session-events.ts: each `ephemeral?: boolean`, so written to
    events.jsonl): a mode and a permission-mode change, autopilot's task completion with the
    agent's summary, a handoff from a remote session, the context cleared, a scheduled prompt and
    its cancellation, the model auto mode chose; and the bookkeeping ones behind the toggle."""
    env = {"id": "e", "parentId": None, "timestamp": "2026-11-20T10:00:00.000Z"}
    rows = [
        {"type": "session.mode_changed", "data": {"previousMode": "interactive", "newMode": "plan"}},
        {"type": "session.permissions_changed", "data": {"previousMode": "manual", "mode": "allow-all"}},
        {"type": "session.task_complete", "data": {"success": True, "outcome": "completed",
                                                   "summary": "Fixed the **discount** bug; tests pass."}},
        {"type": "session.handoff", "data": {"sourceType": "remote", "remoteSessionId": "r-42",
                                             "handoffTime": "2026-11-20T10:00:00.000Z",
                                             "repository": {"owner": "dev", "name": "shop", "branch": "main"},
                                             "summary": "Started the cart refactor.",
                                             "context": "Open PR #12 is the base."}},
        {"type": "session.context_cleared", "data": {"messagesCleared": 14}},
        {"type": "session.schedule_created", "data": {"id": 1, "prompt": "/skill-triage --all",
                                                      "displayPrompt": "/skill-triage", "intervalMs": 3600000,
                                                      "recurring": True, "origin": "user"}},
        {"type": "session.schedule_cancelled", "data": {"id": 1}},
        {"type": "session.auto_mode_resolved", "data": {"chosenModel": "claude-sonnet-4.5",
                                                        "reasoningBucket": "medium"}},
        {"type": "session.plan_changed", "data": {"operation": "update"}},
        {"type": "session.workspace_file_changed", "data": {"operation": "create", "path": "notes.md"}},
        {"type": "session.mode_notice_delivered", "data": {"mode": "plan", "content": "You are in plan mode."}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({**env, "id": f"e{i}", **r}) + "\n" for i, r in enumerate(rows)))
    _, evs = built(path)
    assert not [e for e in evs if any(b.kind == "data" for b in e.blocks) and not e.hidden]
    shown = [(e.blocks[0].text, [b.kind for b in e.blocks[1:]]) for e in evs if not e.hidden]
    assert shown == [
        ("mode: interactive → plan", []),
        ("permissions: manual → allow-all", []),
        ("task complete", ["text"]),
        ("handed off from a remote session (r-42) of dev/shop on main", ["text", "context"]),
        ("context cleared: 14 messages", []),
        ("scheduled prompt #1 (every 1h): /skill-triage", []),
        ("scheduled prompt #1 cancelled", []),
        ("auto mode chose claude-sonnet-4.5 (medium reasoning)", []),
    ]
    assert evs[2].blocks[1].text == "Fixed the **discount** bug; tests pass."
    assert [e.hidden_reason for e in evs if e.hidden] == ["plan file", "workspace file", "mode notice"]


def test_sub_agent_configuration_and_cancellation(tmp_path):
    """`subagent.configured` {model, multiTurn} and `external_tool.requested` are persisted
    bookkeeping (copilot-sdk session-events.ts): behind the toggle, not raw data in sight; a
    `subagent.completed` with `cancelled: true` ("torn down by cancellation … the run still reports
    completion") says the sub-agent was cancelled."""
    rows = [{"type": "subagent.configured", "agentId": "call_9", "data": {"model": "gpt-5.1", "multiTurn": False}},
            {"type": "external_tool.requested", "data": {"requestId": "r1", "sessionId": "s", "toolCallId": "c1",
                                                         "toolName": "open_in_editor"}},
            {"type": "subagent.completed", "data": {"toolCallId": "call_9", "agentName": "explore",
                                                    "agentDisplayName": "Explore", "cancelled": True}}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "parentId": None, "timestamp": "2026-11-20T10:00:00.000Z",
                                        **r}) + "\n" for i, r in enumerate(rows)))
    _, evs = built(path)
    assert [(e.hidden, e.hidden_reason) for e in evs[:2]] == [(True, "sub-agent configuration"),
                                                              (True, "external tool request")]
    assert evs[2].blocks[0].text == "sub-agent Explore cancelled"
