"""codex adapter: Codex CLI rollouts of every layout Codex has written (the fixtures in
test_data/formats/codex/, see its README), read through the index as the page reads them."""

import json
import re
from pathlib import Path

import pytest

from viewer import tools
from viewer.formats import codex, detect, openai_chat
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.order import reading_order
from viewer.store import Store
from viewer.timeline import raw_record

from conftest import ROOT, built, sole_page

SESSIONS = ROOT / "test_data" / "formats" / "codex" / "sessions"
CURRENT = next(SESSIONS.glob("2025/10/29/rollout-*.jsonl"))
BARE = next(SESSIONS.glob("2025/08/14/rollout-*.jsonl"))
DOCUMENT = next(SESSIONS.glob("2025/04/18/rollout-*.json"))
PARENT = next(SESSIONS.glob("2026/02/10/rollout-*-019c4a10-*.jsonl"))
CHILD = next(SESSIONS.glob("2026/02/10/rollout-*-019c4a11-*.jsonl"))
V2_PARENT = next(SESSIONS.glob("2026/03/02/rollout-*-000000000001.jsonl"))
R = Ref("main", 1, 0, 1)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def call_of(idx, evs, call_id):
    call = idx.calls.calls[call_id]
    result = evs[call.result[1]].tool_results()[0] if call.result else None
    return call, result


@pytest.mark.parametrize("path,mode", [(CURRENT, "jsonl"), (BARE, "jsonl"), (DOCUMENT, "document"),
                                       (PARENT, "jsonl"), (CHILD, "jsonl")])
def test_every_layout_is_detected_as_codex(path, mode):
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("codex", mode)


def test_a_plain_responses_item_list_stays_openai_chat(tmp_path):
    """Without a Codex mark (an envelope, the bare header, a state line) Responses items are
    openai-chat's: the bare layout's items alone must not pull such files over."""
    items = [r for r in records(BARE) if codex.sniff(r) == 0]
    plain = tmp_path / "items.jsonl"
    plain.write_text("\n".join(json.dumps(r) for r in items) + "\n")
    assert detect.detect_file(plain).format == "openai-chat"
    assert all(codex.sniff(r) == 0 for r in items)


def test_calls_are_paired_with_their_outputs_and_states():
    idx, evs = built(CURRENT)
    states = {cid: c.state for cid, c in idx.calls.calls.items()}
    assert states == {"call_cat": "completed", "call_patch": "completed", "call_pytest": "error",
                      "web_search_call@28": "completed", "call_local": "completed",
                      "call_rerun": "interrupted"}
    assert not idx.calls.orphans
    # the output's wrapper (Exit code / Wall time / Output:) is taken off; a non-zero exit says so
    _, cat = call_of(idx, evs, "call_cat")
    assert cat.content[0].text.startswith("def total(items, discount=0):")
    _, pytest_run = call_of(idx, evs, "call_pytest")
    assert pytest_run.is_error and pytest_run.content[0].text == "exit code 1"
    assert pytest_run.content[1].text.startswith("F.\n=== FAILURES ===")
    # older versions' JSON output {"output", "metadata": {"exit_code"}}: the output alone
    _, patch = call_of(idx, evs, "call_patch")
    assert patch.content[0].text.startswith("Success. Updated the following files:")
    assert idx.calls.calls["call_pytest"].duration == pytest.approx(3.0, abs=0.01)


def test_the_bare_layout_reads_its_exit_codes_and_hides_state_lines():
    idx, evs = built(BARE)
    assert idx.summary.format == "codex" and idx.summary.title == "Count the TODOs in this repo"
    assert idx.calls.calls["call_rg"].state == "completed"
    call, missing = call_of(idx, evs, "call_missing")
    assert call.state == "error" and missing.content[0].text == "exit code 1"
    states = [e for e in evs if e.kind == "state"]
    assert len(states) == 3 and all(e.hidden for e in states)
    assert evs[0].kind == "session" and evs[0].source_id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert any(b.kind == "thinking" and b.text == "**Searching for TODO markers**"
               for e in evs for b in e.blocks)


def test_the_typescript_cli_document_reads_as_a_session():
    idx, evs = built(DOCUMENT)
    assert idx.summary.title == "What does this repo do?"
    assert [e.kind for e in evs][:2] == ["session", "message"]
    assert idx.calls.calls["call_ls"].state == "completed"
    assert evs[-1].text() == "A small CLI; its README explains the commands."


def test_injected_context_is_folded_and_the_title_is_the_first_prompt():
    idx, evs = built(CURRENT)
    assert idx.summary.title == "The cart total ignores discounts. Fix it and run the tests."
    context = [e for e in evs if e.kind == "context"]
    labels = [b.label for e in context for b in e.blocks]
    assert labels == ["permissions", "AGENTS.md", "environment", "turn aborted"]
    assert all(e.role == "system" and not e.text() for e in context)
    assert evs[0].kind == "session" and evs[0].blocks[1].label == "base instructions"
    assert "Codex session in /home/dev/shop (codex_cli_rs 0.46.0)" == evs[0].blocks[0].text
    # the IDE's wrapper around a prompt: a chip, then the prompt (which titles the session)
    pidx, pevs = built(PARENT)
    assert pidx.summary.title == "Who calls the cart module? Ask a helper to look."
    first = next(e for e in pevs if e.role == "user")
    assert [b.kind for b in first.blocks] == ["context", "text"]
    assert first.blocks[0].label == "IDE context"


def test_event_msg_copies_are_hidden_but_kept_in_the_raw_view():
    idx, evs = built(CURRENT)
    src = records(CURRENT)
    copies = [e for e in evs if e.hidden_reason == "duplicate"]
    kinds = {e.kind for e in copies}
    assert kinds == {"user_message", "agent_message", "agent_reasoning", "context_compacted"}
    shown = [e.text() for e in evs if e.role == "user" and not e.hidden]
    assert shown.count("The cart total ignores discounts. Fix it and run the tests.") == 1
    copy = copies[0]
    assert json.loads(raw_record(idx, copy.id)[0]) == src[copy.line - 1]


def test_thinking_comes_from_the_summary_and_encrypted_content_is_never_text():
    idx, evs = built(CURRENT)
    thoughts = [b for e in evs for b in e.blocks if b.kind == "thinking"]
    assert thoughts[0].text.startswith("**Looking at the cart code**")
    assert thoughts[1].redacted and thoughts[1].text == ""
    assert not any("SECRET" in (getattr(b, "text", "") or "") for e in evs for b in e.blocks)


def test_usage_is_counted_once_per_model_call_and_priced():
    idx, _ = built(CURRENT)
    u = idx.summary.usage
    # four calls' last_token_usage (each written twice by Codex, once counted); input includes cache
    assert u["calls"] == 4
    assert u["tokens"] == 4200 + 120 + 4900 + 300 + 5200 + 190 + 5700 + 90
    assert idx.summary.models == ["gpt-5-codex"]
    assert u.get("cost")  # gpt-5-codex is in the price table


def test_turn_aborted_interrupts_the_open_call_and_compaction_is_a_summary():
    idx, evs = built(CURRENT)
    aborted = next(e for e in evs if e.kind == "turn_aborted")
    assert aborted.blocks[0].text == "turn aborted: interrupted" and not aborted.hidden
    summary = next(e for e in evs if e.kind == "compact_summary")
    assert summary.blocks[1].text.startswith("The user asked to fix the cart discount.")


def test_unknown_records_are_quiet_cards_never_unparsed():
    idx, evs = built(CURRENT)
    assert idx.summary.unparsed == 0
    # (world_state is RolloutItem::WorldState of the current protocol: bookkeeping, a data card)
    world = next(e for e in evs if e.kind == "world_state")
    assert world.role == "system" and world.hidden and world.blocks[0].kind == "data"
    future = next(e for e in evs if e.kind == "future_event_kind")
    assert future.hidden
    # nothing crashes on odd shapes
    for rec in ({"type": "response_item", "payload": None}, {"type": "event_msg", "payload": {}},
                {"type": "session_meta", "payload": {"source": {"subagent": 3}}}, [1, 2], "x",
                {"type": "response_item", "payload": {"type": "function_call_output",
                                                      "output": "Exit code: x\n"}}):
        codex.event(rec, R)


def test_ghost_snapshots_are_hidden_and_a_spawned_thread_says_whose_it_is():
    _, pevs = built(PARENT)
    ghost = next(e for e in pevs if e.kind == "ghost_snapshot")
    assert ghost.hidden
    cidx, cevs = built(CHILD)
    assert cevs[0].blocks[0].text.endswith(
        "sub-agent Euclid spawned by thread 019c4a10-1111-7222-8333-444455556666")
    # its last call never got an output: open while live, never answered once the session ended
    assert cidx.calls.calls["call_y"].status == "pending"


def test_a_spawned_thread_nests_under_its_call_and_lists_under_its_parent():
    idx, _ = built(PARENT)
    child = "019c4a11-2222-7333-8444-555566667777"
    assert list(idx.threads) == ["main", child]
    assert idx.calls.calls["call_spawn"].subthread == child
    assert idx.threads[child].label == "Euclid · explorer (thread 019c4a11-2222-7333-8444-555566667777)"
    # the child's own calls are in the parent's map, in its thread
    assert idx.calls.calls["call_x"].call[0] == child
    info = codex.session_info(CHILD)
    assert info == {"parent_path": str(PARENT), "parent_session": "019c4a10-1111-7222-8333-444455556666",
                    "agent": "Euclid", "agent_type": "explorer", "thread": child}
    assert codex.session_info(PARENT) == {} and codex.companions(CHILD) == []
    # a rollout begun after the parent's last write is not its child, whatever it names
    assert codex.companions(PARENT) and SessionIndex(CHILD).build().summary.parent == str(PARENT)


def test_a_multi_agent_v2_spawn_nests_its_thread_by_the_agent_path_it_answered():
    # multi-agent v2 answers a spawn with the new agent's path, no thread id; the child's
    # session_meta names that path (`agent_path`): each thread goes under its own call
    idx, _ = built(V2_PARENT)
    explorer, tester = "019cb2a0-aaaa-7bbb-8ccc-000000000002", "019cb2a0-aaaa-7bbb-8ccc-000000000003"
    assert list(idx.threads) == ["main", explorer, tester]
    assert idx.subthreads(idx.calls.calls["call_v2_explorer"]) == [explorer]
    assert idx.subthreads(idx.calls.calls["call_v2_tester"]) == [tester]  # (`{"task_name"}` alone)
    assert idx.threads[explorer].meta["parent_call"] == "call_v2_explorer"
    assert idx.threads[tester].meta["parent_call"] == "call_v2_tester"
    assert idx.threads[explorer].label == f"Hubble · explorer (thread {explorer})"
    # the page shows each child's events right after its own call, the tester's after the explorer's
    assert [(seg.thread, seg.start, seg.stop) for seg in reading_order(idx).segments] == [
        ("main", 0, 4), (explorer, 0, 6), ("main", 4, 5), (tester, 0, 6), ("main", 5, 9)]
    # an output naming no agent path is no spawn (another tool's `task_name`)
    assert codex._spawned('{"task_name": "explorer"}') is None
    assert codex._spawned('{"task_name": 3}') is None


def test_a_spawned_thread_begun_after_its_parent_ended_is_not_nested(tmp_path):
    day = tmp_path / "2026" / "02" / "10"
    day.mkdir(parents=True)
    parent, child = day / PARENT.name, day / CHILD.name
    parent.write_bytes(PARENT.read_bytes())
    child.write_bytes(CHILD.read_bytes())
    import os
    import time
    began = time.mktime(time.strptime(CHILD.name[8:27], "%Y-%m-%dT%H-%M-%S"))
    os.utime(parent, (began - 3600, began - 3600))  # the parent was last written an hour before
    assert codex.companions(parent) == []
    os.utime(parent, (began + 30, began + 30))
    assert [c[0] for c in codex.companions(parent)] == ["019c4a11-2222-7333-8444-555566667777"]


def test_update_plan_is_a_todo_list():
    plan = {"explanation": "x", "plan": [{"step": "Spawn", "status": "completed"},
                                         {"step": "Summarize", "status": "in_progress"}]}
    assert tools.view_of("update_plan", plan) == "todos"
    assert tools.todo_items(plan) == [("completed", "Spawn"), ("in_progress", "Summarize")]
    assert tools.summary("update_plan", plan) == "2 items, 1 done"


def test_apply_patch_is_read_as_a_diff_per_file():
    patch = ("*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n keep\n@@ def f():\n-  pass\n"
             "+  return 1\n*** Add File: b.py\n+hello\n*** Delete File: c.py\n"
             "*** Update File: d.py\n*** Move to: e.py\n@@\n-old\n+new\n*** End Patch")
    parts = tools.edits(patch)
    assert [(p.path, p.action, p.old, p.new) for p in parts] == [
        ("a.py", None, "x = 1\nkeep", "x = 2\nkeep"), ("a.py", None, "  pass", "  return 1"),
        ("b.py", "added", "", "hello"), ("c.py", "deleted", "", ""),
        ("d.py", "moved to e.py", "old", "new")]
    assert tools.view_of("apply_patch", patch) == "edit"
    assert tools.summary("apply_patch", patch) == "a.py, b.py, c.py, d.py"
    assert tools.edits({"input": patch}) == parts  # the function-call form's arguments
    assert tools.view_of("apply_patch", "not a patch") == "json"


def test_sessions_tree_lists_every_rollout_with_title_model_and_size():
    rows = {Path(r.path).name: r for r in Store([SESSIONS]).sessions()}
    assert set(rows) == {p.name for p in SESSIONS.rglob("rollout-*")}
    idx = SessionIndex(CURRENT).build()
    assert idx.summary.models == ["gpt-5-codex"] and idx.summary.started is not None


@pytest.mark.parametrize("text,label", [
    ("<environment_context>\n<cwd>/x</cwd>\n</environment_context>", "environment"),
    ("<user_instructions>\nbe brief\n</user_instructions>", "user instructions"),
    ("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>…", "AGENTS.md"),
])
def test_each_kind_of_injected_user_message_is_context(text, label):
    ev = codex.event({"type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}, R)
    assert (ev.role, ev.kind, ev.blocks[0].label) == ("system", "context", label)
    assert codex.title_of(ev) is None


def test_a_prompt_that_mentions_a_tag_stays_the_persons():
    ev = codex.event({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Why does <environment_context> show up?"}]}, R)
    assert ev.role == "user" and codex.title_of(ev) == "Why does <environment_context> show up?"


def test_unified_exec_still_running_is_not_an_error():
    ev = codex.event({"type": "response_item", "payload": {
        "type": "function_call_output", "call_id": "c",
        "output": "Chunk ID: ab\nWall time: 10.0 seconds\nProcess running with session ID 48\n"
                  "Original token count: 2\nOutput:\nstarting\n"}}, R)
    (result,) = ev.tool_results()
    assert not result.is_error
    assert [b.text for b in result.content] == ["still running (session 48)", "starting\n"]
    assert re.match(r"^starting", result.content[1].text)
    assert openai_chat.sniff({"type": "response_item", "payload": {}}) == 0


def test_a_reasoning_summary_item_of_an_unknown_type_is_shown_never_dropped(tmp_path):
    # a summary list may hold items other than summary_text: one with text reads as thoughts,
    # one without as its data under its type; none is lost
    lines = CURRENT.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if '"summary_text"' in x)
    rec = json.loads(lines[at])
    rec["payload"]["summary"] += [{"type": "summary_note", "text": "Checked the discount path too."},
                                  {"type": "summary_citation", "url": "https://example.test/cart", "title": "Cart"}]
    lines[at] = json.dumps(rec)
    path = tmp_path / CURRENT.name
    path.write_text("\n".join(lines) + "\n")
    idx, evs = built(path)
    (ev,) = [e for e in evs if e.line == at + 1]
    assert [(b.kind, getattr(b, "text", None) or getattr(b, "label", None)) for b in ev.blocks] == [
        ("thinking", rec["payload"]["summary"][0]["text"]),
        ("thinking", "Checked the discount path too."),
        ("data", "reasoning summary: summary_citation")]
    assert ev.blocks[2].value["url"] == "https://example.test/cart"


def test_a_call_and_an_output_of_newer_item_types_pair_and_keep_their_output(tmp_path):
    # the Responses API adds a `…_call` and its `…_call_output` with each new client tool: a
    # rollout holding types newer than the reader still pairs each output with its call (the call
    # was left running, its output a data card), and a call that holds its own output shows it
    T = "2026-11-20T10:00:00.000Z"
    newer = [
        {"timestamp": T, "type": "response_item", "payload": {
            "type": "function_call", "call_id": "cf2", "name": "shell", "arguments": '{"command": ["ls"]}'}},
        {"timestamp": T, "type": "response_item", "payload": {
            "type": "sandbox_exec_call_output", "call_id": "cf2", "output": "README.md\nsrc"}},
        {"timestamp": T, "type": "response_item", "payload": {
            "type": "sandbox_exec_call", "call_id": "cf3", "command": ["git", "status"],
            "output": "nothing to commit"}},
        {"timestamp": T, "type": "response_item", "payload": {
            "type": "sandbox_exec_call", "call_id": "cf4", "arguments": '{"command": ["make"]}',
            "sandbox": {"profile": "workspace-write"}}},
    ]
    path = tmp_path / CURRENT.name
    path.write_text(CURRENT.read_text() + "".join(json.dumps(r) + "\n" for r in newer))
    idx, evs = built(path)
    ls, status = idx.calls.calls["cf2"], idx.calls.calls["cf3"]
    assert (ls.name, ls.status) == ("shell", "completed")
    assert (status.name, status.status) == ("sandbox_exec", "completed")
    answers = {b.tool_use_id: b for e in evs for b in e.tool_results()}
    assert "README.md" in answers["cf2"].content[0].text
    assert answers["cf3"].content[0].text == "nothing to commit"
    (use,) = [b for e in evs for b in e.tool_uses() if b.id == "cf3"]
    assert use.input == {"command": ["git", "status"]}
    # a call naming its arguments shows them, and what else it holds beside its card
    (make,) = [e for e in evs if any(b.id == "cf4" for b in e.tool_uses())]
    assert make.tool_uses()[0].input == {"command": ["make"]}
    assert [b.value for b in make.blocks if b.kind == "data"] == [{"sandbox": {"profile": "workspace-write"}}]


# --- cards of the UI's events (event_msg): none empty, a newer type's fields open in its card ---

def _rollout(tmp_path, payloads: list[dict]) -> Path:
    """A current rollout: its session_meta, a prompt, then these event_msg payloads."""
    lines = [{"type": "session_meta", "payload": {"id": "019d0000-0000-7000-8000-000000000001",
                                                  "cwd": "/w", "originator": "codex_cli_rs",
                                                  "cli_version": "0.140.0"}},
             {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                   "content": [{"type": "input_text", "text": "Tidy the docs"}]}},
             *({"type": "event_msg", "payload": p} for p in payloads)]
    day = tmp_path / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    path = day / "rollout-2026-11-20T10-00-00-019d0000-0000-7000-8000-000000000001.jsonl"
    path.write_text("".join(json.dumps({"timestamp": f"2026-11-20T10:00:{i:02d}.000Z", **r}) + "\n"
                            for i, r in enumerate(lines)))
    return path


@pytest.mark.parametrize("path", [CURRENT, BARE, PARENT, CHILD, V2_PARENT], ids=lambda p: p.name[-14:])
def test_no_card_of_a_rollout_is_empty(path):
    """Shown with the hidden events, every card says something: turn contexts, token counts,
    snapshots, the UI's copies of messages, an event type this reader does not know."""
    _, evs = built(path)
    empty = [(e.kind, e.hidden_reason) for e in evs if not e.blocks]
    assert empty == []


def test_an_event_type_this_reader_does_not_know_shows_its_fields(tmp_path, client):
    future = {"type": "sandbox_escalation_granted", "scope": "network",
              "hosts": ["pypi.org"], "note": "<img src=x onerror=alert(1)>"}
    _, evs = built(_rollout(tmp_path, [future]))
    ev = evs[-1]
    assert ev.kind == "sandbox_escalation_granted" and ev.hidden
    assert ev.hidden_reason == "unknown codex event"
    (data,) = ev.blocks
    assert data.kind == "data" and data.label == "unknown"  # "the record as written", open
    assert data.value == future  # its type first
    # known quiet events show their fields too, under their own name
    _, evs = built(_rollout(tmp_path / "b", [{"type": "exec_command_end", "call_id": "c1",
                                             "exit_code": 0, "duration": {"secs": 1, "nanos": 0}}]))
    (data,) = evs[-1].blocks
    assert data.label == "exec command end: its fields" and data.value["exit_code"] == 0


def test_the_fields_of_an_unknown_event_are_in_its_card_on_the_page_escaped(tmp_path):
    from viewer.web import create_app

    _rollout(tmp_path, [{"type": "sandbox_escalation_granted", "scope": "network",
                         "note": "<img src=x onerror=alert(1)>"}])
    app = create_app({"ROOTS": [str(tmp_path / "sessions")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "TESTING": True})
    c = app.test_client()
    key = c.get("/sessions.json").get_json()["sessions"][0]["key"]
    html = c.get(f"/s/{key}").get_data(as_text=True)
    card = re.search(r'<li class="ev [^"]*is-hidden[^"]*" id="m-L3".*?</li>', html, re.S)
    assert card, "the event's card is on the page, hidden"
    assert "unknown codex event" in card.group(0)
    assert '<details class="data" open><summary>the record as written</summary>' in card.group(0)
    assert "sandbox_escalation_granted" in card.group(0) and "network" in card.group(0)
    assert "&lt;img src=x onerror=alert(1)&gt;" in card.group(0) and "<img src=x" not in card.group(0)


def test_a_rollback_an_undo_a_plan_and_a_thread_name_say_what_they_are(tmp_path):
    _, evs = built(_rollout(tmp_path, [
        {"type": "thread_rolled_back", "num_turns": 2},
        {"type": "undo_completed", "success": False, "message": "the tree has changes of its own"},
        {"type": "item_completed", "thread_id": "t", "turn_id": "1",
         "item": {"type": "Plan", "id": "1-plan", "text": "1. Read the docs\n2. Fix the links"}},
        {"type": "thread_name_updated", "thread_id": "t", "thread_name": "docs tidy"}]))
    rolled, undo, plan, named = evs[-4:]
    assert not rolled.hidden and rolled.blocks[0].text == \
        "rolled back: the last 2 turns left the conversation"
    assert not undo.hidden and undo.role == "error"
    assert [b.text for b in undo.blocks] == ["undo failed", "the tree has changes of its own"]
    assert plan.hidden and [b.kind for b in plan.blocks] == ["notice", "text"]
    assert plan.blocks[1].text.startswith("1. Read the docs")
    assert named.blocks[0].text == "thread named “docs tidy”"


def test_a_thread_s_name_is_the_session_s_title(tmp_path):
    idx, _ = built(_rollout(tmp_path, [
        {"type": "thread_name_updated", "thread_id": "t", "thread_name": "first name"},
        {"type": "thread_name_updated", "thread_id": "t", "thread_name": "docs tidy"}]))
    assert idx.summary.title == "docs tidy"  # the last name given, over the first prompt


def test_events_current_codex_persists_are_known_by_name(tmp_path):
    """The event_msg types codex-rs persists (rollout/policy.rs at 851c9d5: `injected_message`
    always, `guardian_assessment` and the dynamic tool events in its extended mode), in the shapes
    openai/codex writes them: InjectedMessageEvent {content, source} (protocol.rs);
    GuardianAssessmentEvent {id, target_item_id, turn_id, started_at_ms, completed_at_ms, status
    (snake_case GuardianAssessmentStatus), risk_level (lowercase), user_authorization, rationale,
    decision_source, action (tagged by `type`)} (codex-rs/protocol/src/approvals.rs);
    DynamicToolCallRequest {callId, turnId, tool, arguments} (dynamic_tools.rs, camelCase) and
    DynamicToolCallResponseEvent {call_id, turn_id, completed_at_ms, namespace, tool, arguments,
    content_items, success, error, duration} (protocol.rs). What a reader must see is in sight:
    the auto-reviewer's verdicts (with its reasons) and a dynamic tool that
    failed; the rest is behind the toggle, its fields in its card."""
    command = {"type": "command", "source": "shell", "command": "rm -rf build/", "cwd": "/w"}
    lines = [{"type": "injected_message", "content": "Sub-agent explorer finished: 3 callers found",
              "source": "subagent"},
             {"type": "guardian_assessment", "id": "g1", "target_item_id": "call_rm", "turn_id": "t1",
              "started_at_ms": 1795701600000, "status": "in_progress", "action": command},
             {"type": "guardian_assessment", "id": "g1", "target_item_id": "call_rm", "turn_id": "t1",
              "started_at_ms": 1795701600000, "completed_at_ms": 1795701602500, "status": "denied",
              "risk_level": "high", "user_authorization": "low", "decision_source": "agent",
              "rationale": "Deletes a directory the user did not mention.", "action": command},
             {"type": "guardian_assessment", "id": "g2", "turn_id": "t1", "started_at_ms": 1795701603000,
              "completed_at_ms": 1795701604000, "status": "approved", "risk_level": "low",
              "rationale": "Read-only.", "action": {"type": "execve", "source": "unified_exec",
                                                   "program": "/bin/ls", "argv": ["ls", "-la"], "cwd": "/w"}},
             {"type": "dynamic_tool_call_request", "callId": "d1", "turnId": "t1", "tool": "lookup_ticket",
              "arguments": {"id": "OPS-12"}},
             {"type": "dynamic_tool_call_response", "call_id": "d1", "turn_id": "t1",
              "completed_at_ms": 1795701605000, "namespace": None, "tool": "lookup_ticket",
              "arguments": {"id": "OPS-12"}, "content_items": [], "success": False,
              "error": "ticket service unreachable", "duration": {"secs": 3, "nanos": 200000000}}]
    _, evs = built(_rollout(tmp_path, lines))
    evs = evs[-len(lines):]
    assert [e.kind for e in evs] == [r["type"] for r in lines]
    injected, reviewing, denied, approved, asked, failed = evs
    assert injected.blocks[0].text == "injected message from subagent: its display text"
    assert injected.blocks[1].kind == "text" and injected.blocks[1].text.startswith("Sub-agent explorer")
    assert reviewing.hidden
    assert (denied.hidden, denied.role) == (False, "system")  # the reviewer's answer, in sight
    assert denied.blocks[0].text == ("auto-review denied: rm -rf build/ (risk level high, "
                                     "user authorization low, took 2.5 s)")
    assert denied.blocks[1].text == "Deletes a directory the user did not mention."
    assert (approved.hidden, approved.role) == (False, "system")
    assert approved.blocks[0].text == "auto-review approved: ls -la (risk level low, took 1.0 s)"
    assert asked.hidden and asked.blocks[0].text == "dynamic tool lookup_ticket asked for (call d1)"
    assert (failed.hidden, failed.role) == (False, "error")
    assert failed.blocks[0].text == "dynamic tool lookup_ticket failed (call d1) in 3.2 s"
    assert failed.blocks[1].text == "ticket service unreachable"


def test_rollout_items_of_the_current_protocol_are_read_and_an_unknown_one_is_a_data_card(tmp_path):
    """RolloutItem at openai/codex main (codex-rs/protocol/src/protocol.rs): besides session_meta,
    response_item, compacted, turn_context and event_msg, `world_state` ({full, state}),
    `inter_agent_communication` ({author, recipient, other_recipients, content, trigger_turn}) and
    `inter_agent_communication_metadata` ({trigger_turn}). A record type or event no version known
    here writes is kept as a data card of what it holds, never dropped."""
    path = _rollout(tmp_path, [{"type": "some_event_from_the_future", "detail": "x"}])
    extra = [{"type": "world_state", "payload": {"full": True, "state": {"agents_md": "# Rules"}}},
             {"type": "inter_agent_communication", "payload": {
                 "author": "/root/researcher", "recipient": "/root", "other_recipients": [],
                 "content": "Found 3 callers of parse_args.", "trigger_turn": True}},
             {"type": "inter_agent_communication_metadata", "payload": {"trigger_turn": True}},
             {"type": "record_from_the_future", "payload": {"id": "r1", "role": "user", "text": "hello"}}]
    with path.open("a") as f:
        for i, r in enumerate(extra):
            f.write(json.dumps({"timestamp": f"2026-11-20T10:01:{i:02d}.000Z", **r}) + "\n")
    _, evs = built(path)
    future, world, said, meta, unknown = evs[-5:]
    assert future.hidden and future.blocks[0].kind == "data" and future.blocks[0].value["detail"] == "x"
    assert world.hidden and world.blocks[0].label == "world state (full)"
    assert world.blocks[0].value == {"agents_md": "# Rules"}
    assert (said.hidden, said.role, said.author) == (False, "agent_call", "/root/researcher")
    assert said.blocks[0].text == "/root/researcher → /root"
    assert said.blocks[1].text == "Found 3 callers of parse_args."
    assert meta.hidden
    assert unknown.kind == "unknown" and unknown.blocks[0].kind == "data"
    assert unknown.blocks[0].value == {"id": "r1", "role": "user", "text": "hello"}


def test_a_forked_thread_says_what_it_was_forked_from(tmp_path):
    """SessionMeta.forked_from_id (codex-rs protocol.rs at 851c9d5): a thread /fork made."""
    path = tmp_path / "rollout-2026-11-20T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    meta = {"id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "forked_from_id": "0199a000-0000-7000-8000-000000000001",
            "timestamp": "2026-11-20T10:00:00.000Z", "cwd": "/home/li/calc", "originator": "codex_cli_rs",
            "cli_version": "0.130.0", "source": "cli"}
    path.write_text(json.dumps({"timestamp": "2026-11-20T10:00:00.000Z", "type": "session_meta",
                                "payload": meta}) + "\n")
    _, evs = built(path)
    assert evs[0].blocks[0].text.endswith("· forked from thread 0199a000-0000-7000-8000-000000000001")


def test_response_items_the_current_codex_persists_read_as_what_they_are(tmp_path):
    """The ResponseItem variants of codex-rs/protocol/src/models.rs that rollout policy.rs
    (`should_persist_response_item`) writes beside the older ones: `agent_message` ({author,
    recipient, content: [{type: input_text, text} | {type: encrypted_content}]}, a message between
    the agents of a multi-agent run as the model's history holds it; the rollout tests write
    `{author: "worker", recipient: "root", …}`), `context_compaction` ({encrypted_content}) and a
    `function_call` with its tool's `namespace`. Before, the agent message and the compaction were
    cards of roles no reader knows ("agent_message", "context_compaction") and the namespaced call
    lost its namespace."""
    path = _rollout(tmp_path, [])
    items = [{"type": "agent_message", "author": "worker", "recipient": "root",
              "content": [{"type": "input_text", "text": "Found 3 callers of parse_args."}]},
             {"type": "agent_message", "author": "/root", "recipient": "/root/explorer",
              "content": [{"type": "encrypted_content", "encrypted_content": "gAAAAB..."}]},
             {"type": "context_compaction", "encrypted_content": "gAAAAB..."},
             {"type": "function_call", "name": "search", "namespace": "docs", "arguments": '{"q": "X"}',
              "call_id": "call_ns"},
             {"type": "function_call_output", "call_id": "call_ns", "output": "X is a thing"}]
    with path.open("a") as f:
        for i, r in enumerate(items):
            f.write(json.dumps({"timestamp": f"2026-11-20T10:02:{i:02d}.000Z", "type": "response_item",
                                "payload": r}) + "\n")
    idx, evs = built(path)
    said, sealed, compacted, call, _ = evs[-5:]
    assert (said.hidden, said.role, said.author) == (False, "agent_call", "worker")
    assert [b.text for b in said.blocks] == ["worker → root", "Found 3 callers of parse_args."]
    assert [b.text for b in sealed.blocks] == ["/root → /root/explorer", "its content is encrypted"]
    assert (compacted.role, compacted.blocks[0].text) == ("system", "context compacted")
    assert call.tool_uses()[0].name == "docs.search" and idx.calls.calls["call_ns"].state == "completed"


def _lines_at(day, name: str, records: list[dict]) -> Path:
    """A rollout of these envelope records, each with its `ordinal` as codex-cli 0.147+ writes it."""
    day.mkdir(parents=True, exist_ok=True)
    path = day / name
    path.write_text("".join(json.dumps({"timestamp": f"2026-11-20T10:00:{i:02d}.000Z", "ordinal": i, **r}) + "\n"
                            for i, r in enumerate(records)))
    return path


def _token_count(inp: int, out: int, total_in: int, total_out: int) -> dict:
    return {"type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": inp, "cached_input_tokens": 0, "output_tokens": out},
        "total_token_usage": {"input_tokens": total_in, "cached_input_tokens": 0, "output_tokens": total_out}}}}


def _said(role: str, text: str, **more) -> dict:
    return {"type": "response_item", "payload": {"type": "message", "role": role, "content": [
        {"type": "input_text" if role == "user" else "output_text", "text": text}], **more}}


def test_a_sub_agent_s_copy_of_its_parent_s_history_is_the_parent_s(tmp_path):
    """codex-cli 0.147-0.153 (as readers of those rollouts describe them: every line has its
    `ordinal`; a spawned thread's file opens with its own session_meta naming
    `subagent_history_start_ordinal`, then the parent's session_meta and a copy of the parent's
    conversation, its token counts too). Before, the copy read as the sub-agent's own prompt and
    replies and its tokens were counted again (one machine's sub-agents carried 18-143 M tokens of
    such copies)."""
    child = "019e0000-0000-7000-8000-0000000000c1"
    path = _lines_at(tmp_path / "sessions" / "2026" / "11" / "20", f"rollout-2026-11-20T10-00-00-{child}.jsonl", [
        {"type": "session_meta", "payload": {"id": child, "cwd": "/w", "originator": "codex_cli_rs",
                                             "cli_version": "0.150.0", "subagent_history_start_ordinal": 4,
                                             "source": {"subagent": {"thread_spawn": {
                                                 "parent_thread_id": "019e0000-0000-7000-8000-0000000000a1",
                                                 "depth": 1, "agent_path": "/root/explorer"}}}}},
        {"type": "session_meta", "payload": {"id": "019e0000-0000-7000-8000-0000000000a1", "cwd": "/w",
                                             "originator": "codex_cli_rs", "cli_version": "0.150.0"}},
        _said("user", "Refactor the cart module."),
        _token_count(5_000_000, 2_000, 5_000_000, 2_000),
        _said("user", "List the modules that import shop.cart."),
        _said("assistant", "Three modules import it."),
        _token_count(3_000, 40, 3_000, 40)])
    idx, evs = built(path)
    own = [e for e in evs if not e.hidden]
    assert [(e.role, e.text()) for e in own if e.kind == "message"] == [
        ("user", "List the modules that import shop.cart."), ("assistant", "Three modules import it.")]
    copied = [e for e in evs if e.hidden_reason == "the parent thread's history"]
    assert len(copied) == 3 and copied[1].blocks[0].text.startswith("copied from the parent thread's history")
    assert idx.summary.usage["tokens"] == 3_040  # the parent's 5 M are the parent's
    assert idx.summary.title == "List the modules that import shop.cart."
    from viewer.web import create_app

    app = create_app({"ROOTS": [str(tmp_path / "sessions")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "TESTING": True})
    c = app.test_client()
    key = c.get("/sessions.json").get_json()["sessions"][0]["key"]
    html = c.get(f"/s/{key}").get_data(as_text=True)
    # on the page as in the index: the copy's cards behind the toggle, the thread's own in sight
    copy = re.search(r'<li class="ev [^"]*" id="m-L3".*?</li>', html, re.S).group(0)
    assert "is-hidden" in copy and "copied from the parent thread" in copy
    own = re.search(r'<li class="ev [^"]*" id="m-L6".*?</li>', html, re.S).group(0)
    assert "is-hidden" not in own.split(">", 1)[0] and "Three modules import it." in own


def test_an_odd_ordinal_is_no_ordinal_and_the_lines_read_all_the_same(tmp_path):
    """An `ordinal` (or a start ordinal) that is no number — a superscript digit, which passes
    str.isdigit and not int, a list, null — is read as none: the thread's records are its own, each
    line the card it is. A superscript made every line an unparsed card."""
    day = tmp_path / "sessions" / "2026" / "11" / "20"
    path = _lines_at(day, "rollout-2026-11-20T10-00-00-019e0000-0000-7000-8000-0000000000d1.jsonl", [
        {"type": "session_meta", "payload": {"id": "019e0000-0000-7000-8000-0000000000d1", "cwd": "/w",
                                             "cli_version": "0.150.0", "subagent_history_start_ordinal": "³"}},
        _said("user", "Rename the cart module."),
        _said("assistant", "Renamed it to basket.")])
    lines = path.read_text().splitlines()
    odd = ["²", [1], None]
    path.write_text("".join(json.dumps({**json.loads(line), "ordinal": odd[i % 3]}) + "\n"
                            for i, line in enumerate(lines)))
    idx, evs = built(path)
    assert not [e for e in evs if e.kind == "unparsed"]
    assert [(e.role, e.text()) for e in evs if e.kind == "message" and not e.hidden] == [
        ("user", "Rename the cart module."), ("assistant", "Renamed it to basket.")]
    assert idx.summary.title == "Rename the cart module."


def test_what_codex_0_150_writes_beside_the_conversation_is_bookkeeping_said_for_what_it_is(tmp_path):
    """codex-cli 0.147-0.153 rollouts (a trajectory adapter verified against them, and the
    rollouts' readers' notes): `token_usage_record` (one response's usage, the numbers of the
    token_count beside it: never counted twice), `realtime_item` (a voice session's transcript
    segment), `retained_context` (the person's accepted answers), the response item
    `configuration_update` ({reasoning: {effort}}) and the event `thread_settings_applied`
    ({thread_settings: {model, reasoning_effort, cwd}}, the model of what follows). Before, each
    was a data card of an unknown type in sight (one per model call for the usage records), and a
    model switched by the settings priced the calls after it as the old model's."""
    path = _lines_at(tmp_path / "sessions" / "2026" / "11" / "20",
                     "rollout-2026-11-20T10-00-00-019e0000-0000-7000-8000-0000000000b1.jsonl", [
        {"type": "session_meta", "payload": {"id": "019e0000-0000-7000-8000-0000000000b1", "cwd": "/w",
                                             "originator": "codex_cli_rs", "cli_version": "0.150.0"}},
        {"type": "turn_context", "payload": {"cwd": "/w", "model": "gpt-5-codex", "approval_policy": "on-request"}},
        _said("user", "Tidy the docs"),
        {"type": "event_msg", "payload": {"type": "thread_settings_applied", "thread_settings": {
            "model": "gpt-5.5", "model_provider_id": "openai", "reasoning_effort": "high", "cwd": "/w"}}},
        {"type": "response_item", "payload": {"type": "configuration_update", "reasoning": {"effort": "high"}}},
        _said("assistant", "Done."),
        _token_count(1_200, 80, 1_200, 80),
        {"type": "token_usage_record", "payload": {"thread_id": "019e0000-0000-7000-8000-0000000000b1",
                                                   "turn_id": "t1", "response_id": "resp_1", "usage": {
            "input_tokens": 1_200, "cached_input_tokens": 0, "output_tokens": 80, "total_tokens": 1_280}}},
        {"type": "realtime_item", "payload": {"type": "transcript_segment", "role": "user", "text": "tidy the docs"}},
        {"type": "retained_context", "payload": {"type": "verified_answer", "questions": [
            {"question": "Keep the changelog?", "answer": "Yes"}]}}])
    idx, evs = built(path)
    settings, config, _, _, usage, spoken, kept = evs[3:]
    assert all(e.hidden for e in (settings, config, usage, spoken, kept))
    assert settings.model == "gpt-5.5" and settings.blocks[0].text.startswith("thread settings applied: model gpt-5.5")
    assert config.blocks[0].text == "reasoning effort set to high"
    assert usage.blocks[0].text.startswith("token usage of response resp_1: 1,200 in")
    assert [b.text for b in spoken.blocks][1] == "tidy the docs"
    assert kept.blocks[1].text == "Q: Keep the changelog?\nA: Yes"
    assert idx.summary.usage["tokens"] == 1_280 and idx.summary.usage["calls"] == 1
    assert list(idx.summary.usage["models"]) == ["gpt-5.5"]  # the call came after the switch


def test_context_codex_injects_as_the_user_is_never_the_person_s_prompt(tmp_path):
    """Newer Codex names each user-message item's kind
    (`internal_chat_message_metadata_passthrough.content_item_kinds`: `user.*` the person's) and
    injects context under new openings (`<goal_context>`, `<recommended_plugins>`,
    `<codex_internal_context source=…>`, `<external_…>`, `<hook_prompt …>`). Before, such a message
    read as the person's prompt, and could title the session."""
    path = _lines_at(tmp_path / "sessions" / "2026" / "11" / "20",
                     "rollout-2026-11-20T10-00-00-019e0000-0000-7000-8000-0000000000d1.jsonl", [
        {"type": "session_meta", "payload": {"id": "019e0000-0000-7000-8000-0000000000d1", "cwd": "/w",
                                             "originator": "codex_cli_rs", "cli_version": "0.150.0"}},
        _said("user", "<goal_context>\nShip the docs by Friday.\n</goal_context>"),
        _said("user", '<codex_internal_context source="memory">\nprefers pnpm\n</codex_internal_context>'),
        {"type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "cwd is /w, shell zsh"},
                {"type": "input_text", "text": "Tidy the docs"}],
            "internal_chat_message_metadata_passthrough": {
                "turn_id": "t1", "content_item_kinds": ["environment_context", "user.text"]}}}])
    idx, evs = built(path)
    goal, memory, prompt = evs[1:]
    assert (goal.role, goal.blocks[0].kind, goal.blocks[0].label) == ("system", "context", "goal")
    assert (memory.role, memory.blocks[0].label) == ("system", "internal context")
    assert prompt.role == "user" and [(b.kind, getattr(b, "label", None)) for b in prompt.blocks] == [
        ("context", "environment context"), ("text", None)]
    assert prompt.blocks[1].text == "Tidy the docs" and idx.summary.title == "Tidy the docs"


def test_a_command_s_failed_end_fails_its_call_even_when_its_output_read_fine(tmp_path):
    """`item_completed` of a `CommandExecution` (codex-rs protocol items.rs: CommandExecutionItem,
    camelCase `{id, processId, command: [argv], cwd, parsedCmd, source, status: failed, exitCode,
    aggregatedOutput, duration}`, its `id` the call's call_id as core's tool events emit it) is the
    command's terminal word. A unified exec whose call answered "Process running with session ID 7"
    ends, failed, turns later: before, the call stayed completed and its failure hidden. A command
    whose end comes first (core emits it before the output reaches the history) and whose output
    shows no exit code fails too."""
    tid = "019d0000-0000-7000-8000-0000000000f1"

    def ended(call_id, argv, code, output):
        return {"type": "event_msg", "payload": {
            "type": "item_completed", "thread_id": tid, "turn_id": "1", "completed_at_ms": 1763632810000,
            "item": {"type": "CommandExecution", "id": call_id, "processId": "7", "command": argv,
                     "cwd": "/home/li/shop", "parsedCmd": [{"type": "unknown", "cmd": argv[-1]}],
                     "source": "unifiedExecStartup", "status": "failed", "aggregatedOutput": output,
                     "exitCode": code, "duration": {"secs": 14, "nanos": 0}}}}

    def call(call_id, cmd):
        return {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                     "arguments": json.dumps({"cmd": cmd}), "call_id": call_id}}

    def output(call_id, text):
        return {"type": "response_item", "payload": {"type": "function_call_output", "call_id": call_id,
                                                     "output": text}}

    path = _lines_at(tmp_path / "sessions" / "2026" / "11" / "20", f"rollout-2026-11-20T10-00-00-{tid}.jsonl", [
        {"type": "session_meta", "payload": {"id": tid, "cwd": "/home/li/shop", "originator": "codex_cli_rs",
                                             "cli_version": "0.153.0"}},
        _said("user", "Run the test suite"),
        call("call_Tq9", "cargo test --workspace"),
        output("call_Tq9", "Chunk ID: 3f2a\nWall time: 10.0 seconds\nProcess running with session ID 7\n"
                           "Original token count: 9\nOutput:\n   Compiling shop v0.1.0\nrunning 12 tests\n"),
        ended("call_Tq9", ["/bin/bash", "-lc", "cargo test --workspace"], 101,
              "running 12 tests\ntest cart::totals ... <b>FAILED</b>\n"),
        call("call_fmt", "cargo fmt --check"),
        ended("call_fmt", ["/bin/bash", "-lc", "cargo fmt --check"], 1, "Diff in src/cart.rs\n"),
        output("call_fmt", "Diff in src/cart.rs\n"),
        call("call_ok", "ls"),
        output("call_ok", "Cargo.toml\nsrc\n"),
        _said("assistant", "The suite is running.")])
    idx, evs = built(path)
    assert {c.id: c.state for c in idx.calls.calls.values()} == {
        "call_Tq9": "error", "call_fmt": "error", "call_ok": "completed"}
    assert idx.calls.errors() == 2 and idx.summary.errors == 2  # each failure counted once
    late = evs[4]
    assert (late.hidden, late.role) == (False, "system")
    assert [b.text for b in late.blocks] == [
        "command failed with exit code 101: /bin/bash -lc cargo test --workspace",
        "running 12 tests\ntest cart::totals ... <b>FAILED</b>\n"]
    assert evs[6].hidden  # an end before its output: the output says it
    fmt = evs[7].tool_results()[0]
    assert fmt.is_error and [b.text for b in fmt.content] == ["exit code 1", "Diff in src/cart.rs\n"]
    html = sole_page(tmp_path / "sessions", tmp_path)

    def card(cid):
        start = html.index(f'id="tc-{cid}"')
        return html[start:html.index("</li>", start)]

    assert '<span class="state error">error</span>' in card("call_Tq9")
    assert '<span class="state error">error</span>' in card("call_fmt") and "exit code 1" in card("call_fmt")
    assert '<span class="state completed">completed</span>' in card("call_ok")
    failure = re.search(r'<li class="ev [^"]*" id="m-L5".*?</li>', html, re.S).group(0)
    assert "is-hidden" not in failure.split(">", 1)[0]
    assert "command failed with exit code 101" in failure
    assert "&lt;b&gt;FAILED&lt;/b&gt;" in failure and "<b>FAILED" not in failure


def test_a_fork_s_history_before_its_boundary_is_the_parent_s_and_its_own_records_read_as_its_own(tmp_path):
    """codex-rs rollout: a /fork's SessionMeta names `forked_from_id`, `forked_from_ordinal_exclusive`
    (the logical boundary) and `history_base` {thread_id, end_ordinal_exclusive, end_byte_offset}
    ("exclusive physical prefix inherited from another rollout segment"); the new rollout's own
    ordinals start at that boundary (RolloutOrdinalState::for_new_rollout), so its file holds no
    copy: its page says where the conversation before it is, and reads all its own records, its
    usage counted. A record before the boundary in such a file (a rewrite keeps the boundary) is a
    copy of the parent's, hidden and not counted, as a sub-agent's copy is."""
    parent, fork = "019e0000-0000-7000-8000-0000000000a1", "019e0000-0000-7000-8000-0000000000f2"
    meta = {"id": fork, "forked_from_id": parent, "forked_from_ordinal_exclusive": 6, "cwd": "/w",
            "originator": "codex_cli_rs", "cli_version": "0.158.0", "source": "cli", "history_mode": "paginated",
            "history_base": {"thread_id": parent, "end_ordinal_exclusive": 6, "end_byte_offset": 9120}}
    day = tmp_path / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)

    def rollout(name, records, first):
        path = day / name
        path.write_text("".join(json.dumps({"timestamp": f"2026-11-20T10:00:{i:02d}.000Z", "ordinal": first + i, **r})
                                + "\n" for i, r in enumerate(records)))
        return path

    own = [{"type": "session_meta", "payload": meta},
           _said("user", "Try the other approach: a dict of handlers."),
           _said("assistant", "Switched to a dict of handlers."),
           _token_count(4_000, 60, 9_000_000, 3_000)]  # the running total goes on from the parent's
    path = rollout(f"rollout-2026-11-20T10-00-00-{fork}.jsonl", own, 6)
    idx, evs = built(path)
    assert evs[0].blocks[0].text.endswith(
        f"· forked from thread {parent} at record 6: the conversation before it is that thread's")
    assert [e.hidden for e in evs] == [False, False, False, True]
    assert idx.summary.title == "Try the other approach: a dict of handlers."
    assert idx.summary.usage["tokens"] == 4_060
    # the same fork's file holding a copy of the parent's conversation before its boundary
    copy = [{"type": "session_meta", "payload": meta}, _said("user", "Refactor the dispatcher."),
            _token_count(5_000_000, 2_000, 5_000_000, 2_000)]
    path.write_text("".join(json.dumps({"timestamp": f"2026-11-20T10:00:{i:02d}.000Z", "ordinal": n, **r}) + "\n"
                            for i, (n, r) in enumerate(zip([6, 1, 2, 7, 8, 9], copy + own[1:]))))
    idx, evs = built(path)
    copied = [e for e in evs if e.hidden_reason == "the parent thread's history"]
    assert len(copied) == 2 and copied[0].blocks[0].text == \
        "copied from the parent thread's history (record 1; this thread's own begin at 6)"
    assert idx.summary.usage["tokens"] == 4_060 and idx.summary.title == "Try the other approach: a dict of handlers."
    # a thread's new rollout (thread/revert) goes on from its earlier one
    again = {**meta, "forked_from_id": None, "forked_from_ordinal_exclusive": None,
             "history_base": {"thread_id": "019e0000-0000-7000-8000-0000000000b3", "end_ordinal_exclusive": 12,
                              "end_byte_offset": 20480}}
    _, evs = built(rollout(f"rollout-2026-11-20T10-00-00-{fork}_019e0000-0000-7000-8000-0000000000b4.jsonl",
                           [{"type": "session_meta", "payload": again}, own[1]], 12))
    assert evs[0].blocks[0].text.endswith("· goes on from record 12 of an earlier rollout of the thread")
    assert not evs[1].hidden
