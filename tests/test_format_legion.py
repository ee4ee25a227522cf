"""legion adapter: the corpus fixtures, the bundled sessions, and each writer generation."""

import json
import re

import pytest

from viewer.formats import detect, legion
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import Timeline, load_events
from viewer.web import create_app

from conftest import SESSIONS, corpus_sessions

R = Ref("main", 1, 0, 1)


@pytest.mark.parametrize("folder", corpus_sessions("legion"), ids=lambda p: p.name)
def test_corpus_fixtures(folder):
    path = folder / "messages.jsonl"
    assert detect.detect_file(path).format == "legion"
    idx = SessionIndex(path).build()
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert len(idx.threads["main"]) == len(lines)
    assert "unparsed" not in idx.threads["main"].kinds
    # launch events (client_launched and SDK init) are hidden, nothing else
    launch = sum(1 for r in lines if (r.get("metadata") or {}).get("subtype") == "client_launched"
                 or (r.get("data") or {}).get("subtype") == "init")
    assert idx.summary.hidden == launch
    uses = sum(1 for r in lines for b in (r.get("data") or {}).get("content") or []
               if isinstance(b, dict) and b.get("type") == "tool_use")
    assert len(idx.calls.calls) == uses
    assert all(c.status == "completed" for c in idx.calls.calls.values())
    assert idx.summary.agents == [json.loads((folder / "state.json").read_text())["name"]]


def test_feature_tour_reads_every_feature():
    idx = SessionIndex(SESSIONS / "legion-feature-tour" / "messages.jsonl").build()
    calls = idx.calls.calls
    assert {k: c.state for k, c in calls.items()} == {
        "toolu_read_1": "completed", "toolu_bash_1": "error", "toolu_edit_1": "completed",
        "toolu_grep_never": "interrupted"}  # open when the user interrupted (legion's own rule)
    assert not idx.unanswered(calls["toolu_grep_never"])  # it ended: interrupted
    assert list(idx.calls.orphans) == ["toolu_ghost_9"]
    main = idx.threads["main"]
    assert main.kinds.count("unparsed") == 1
    assert main.lines[main.kinds.index("unparsed")] == 17
    assert idx.summary.hidden == 2  # client_launched + SDK init
    # stable ids: message_id where the file has one, L<line> where it has none
    assert main.ids[0] == "L1" and main.ids[1] == "tour-prompt-1"
    evs = load_events(idx, "main", 0, len(main))
    thinking = [b for e in evs for b in e.blocks if b.kind == "thinking"]
    assert len(thinking) == 2 and thinking[1].text == "" and thinking[1].signature
    assert calls["toolu_read_1"].duration == pytest.approx(0.65)


def test_mixed_timestamps():
    idx = SessionIndex(SESSIONS / "legion-mixed-timestamps" / "messages.jsonl").build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    by_text = {e.text().split(":")[0]: e for e in evs if e.text()}
    assert by_text["Timestamp written as an unreadable value"].timestamp is None
    assert by_text["Timestamp written as an unreadable value"].timestamp_raw == "yesterday at noon"
    assert by_text["Timestamp written as ISO without zone (read as UTC)"].timestamp_assumed_utc
    seconds = [e.timestamp.timestamp() for e in evs[1:11]]
    assert seconds == sorted(seconds)  # every unit read on the same clock
    # file order is kept even where the clock went backwards
    assert evs[-1].timestamp < evs[-3].timestamp


def test_comms_name_both_agents():
    idx = SessionIndex(SESSIONS / "legion-multi-agent-comms" / "messages.jsonl").build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    outbound = [e for e in evs if e.recipient == "fred"]
    inbound = [e for e in evs if e.kind == "comm"]
    assert len(outbound) == 3
    assert [e.author for e in inbound] == ["fred", "fred"]  # metadata.comm, and the text prefix
    assert idx.summary.agents == ["alice", "fred"]
    sub = [e for e in evs if e.parent == "toolu_task_1"]
    assert len(sub) == 1 and sub[0].model == "claude-haiku-4-5-20251001"
    assert idx.calls.calls["toolu_comm_2"].status == "completed"


def test_tool_call_update_states():
    running = legion.event({"_type": "ToolCallUpdate", "data": {"tool_use_id": "t1", "status": "running"}}, R)
    assert running.running == ["t1"] and running.hidden
    denied = legion.event({"_type": "ToolCallUpdate", "data": {"tool_use_id": "t1", "status": "denied"}}, R)
    assert denied.states == {"t1": "denied"} and not denied.tool_results()  # the SDK's result says why
    flat = legion.event({"type": "tool_call", "session_id": "s", "message_id": "m", "tool_use_id": "t2",
                         "name": "Bash", "status": "completed", "result": "ok"}, R)
    assert flat.tool_results()[0].content[0].text == "ok" and flat.source_id == "m"


def test_g1_placeholders_and_captions_are_not_prose():
    ev = legion.event({"type": "assistant", "content": "Assistant response", "timestamp": 1.0,
                       "metadata": {"tool_uses": [{"id": "t", "name": "Read", "input": {}}]}}, R)
    assert [b.kind for b in ev.blocks] == ["tool_use"]
    res = legion.event({"type": "user", "content": "Tool results: 1 results", "metadata": {
        "tool_results": [{"tool_use_id": "t", "content": "x", "is_error": None}]}}, R)
    assert res.role == "tool" and [b.kind for b in res.blocks] == ["tool_result"]
    assert res.blocks[0].is_error is None


def test_sdk_blocks_without_type_keys():
    ev = legion.event({"_type": "AssistantMessage", "data": {"content": [
        {"text": "hi"}, {"thinking": "hmm", "signature": "s"}, {"id": "t", "name": "Bash", "input": {}}],
        "model": "m", "message_id": "msg_1", "uuid": "u-1"}}, R)
    assert [b.kind for b in ev.blocks] == ["text", "thinking", "tool_use"]
    assert ev.message_id == "msg_1" and ev.source_id == "u-1"
    unknown = legion.event({"_type": "MirrorErrorMessage", "data": {"x": 1}}, R)
    assert unknown.kind == "MirrorErrorMessage" and unknown.role == "system"


def test_subagent_frames_render_under_the_task():
    idx = SessionIndex(SESSIONS / "legion-multi-agent-comms" / "messages.jsonl").build()
    win = Timeline(idx).window("main")
    sub = [v for v in win.events if v.ev.parent == "toolu_task_1"]
    assert sub and all(v.ev.parent for v in sub)


# The Agent SDK's RateLimitEvent as legion saves raw SDK records (`_type` = the class name);
# fields from anthropics/claude-agent-sdk-python src/claude_agent_sdk/types.py (RateLimitEvent,
# RateLimitInfo; commit ae8f4d8) and its documentation.
@pytest.mark.parametrize("status, role, hidden, words", [
    ("allowed", "system", True, "rate limit allowed (five hour)"),
    ("allowed_warning", "system", False, "rate limit allowed warning (five hour) · 91% used"),
    ("rejected", "error", False, "rate limit rejected (five hour) · 100% used"),
])
def test_rate_limit_events_are_readable(status, role, hidden, words):
    info = {"status": status, "resets_at": 1767225600, "rate_limit_type": "five_hour"}
    if status != "allowed":
        info["utilization"] = 0.91 if status == "allowed_warning" else 1.0
    ev = legion.event({"_type": "RateLimitEvent", "data": {
        "rate_limit_info": info, "uuid": "r1", "session_id": "s1"}}, R)
    assert (ev.role, ev.kind, ev.hidden) == (role, "rate_limit", hidden)
    assert ev.blocks[0].text == words + " · resets 2026-01-01 00:00 UTC"


def _sdk(cls, ts, data, mid):
    return {"_type": cls, "timestamp": ts, "session_id": "s1", "data": data, "message_id": mid}


def _background_agent_lines():
    """The shapes of a real legion recording (claudecode_webui backend/tests/fixtures/raw/
    2026-09-23-primary, Claude Code 2.1.259 through the Agent SDK), hand-reduced: an Agent call
    run in the background, whose result only says it started, its frames, and the SDK's
    TaskNotificationMessage when its work is done."""
    launch = ("Async agent launched successfully.\nagentId: a1b5 (internal ID)\n"
              "The agent is working in the background. You will be notified automatically when it completes.")
    call = "toolu_AG"
    return [
        {"type": "user", "content": "Spawn a background agent.", "session_id": "s1", "timestamp": 1790131960.0,
         "message_id": "u1"},
        _sdk("SystemMessage", 1790131960.1, {"subtype": "init", "data": {
            "type": "system", "subtype": "init", "model": "claude-opus-5[1m]", "tools": ["Agent"]}}, "i1"),
        _sdk("AssistantMessage", 1790131970.38, {"content": [{"id": call, "name": "Agent", "input": {
            "description": "Sleep 45 then append haiku", "subagent_type": "general-purpose",
            "run_in_background": True}}], "model": "claude-opus-5", "parent_tool_use_id": None,
            "message_id": "msg_1"}, "a1"),
        _sdk("TaskStartedMessage", 1790131970.385, {"subtype": "task_started", "task_id": "a1b5",
             "description": "Sleep 45 then append haiku", "tool_use_id": call, "task_type": "local_agent"}, "t1"),
        _sdk("UserMessage", 1790131970.387, {"content": [{"tool_use_id": call, "content": [
            {"type": "text", "text": launch}], "is_error": None}], "parent_tool_use_id": None,
            "tool_use_result": {"isAsync": True, "status": "async_launched", "agentId": "a1b5",
                                "description": "Sleep 45 then append haiku"}}, "r1"),
        _sdk("ToolCallUpdate", 1790131970.388, {"tool_use_id": call, "name": "Agent", "status": "completed",
             "result": launch, "completed_at": 1790131970.388}, "c1"),
        _sdk("AssistantMessage", 1790131971.57, {"content": [{"text": "I'll run the sleep command first."}],
             "model": "claude-opus-5", "parent_tool_use_id": call, "message_id": "msg_2"}, "a2"),
        _sdk("TaskProgressMessage", 1790131972.18, {"subtype": "task_progress", "task_id": "a1b5",
             "description": "Running Sleep for 45 seconds", "tool_use_id": call}, "p1"),
        _sdk("TaskNotificationMessage", 1790132020.0, {"subtype": "task_notification", "task_id": "a1b5",
             "status": "completed", "summary": "Slept 45 seconds, then appended the haiku.",
             "tool_use_id": call}, "n1"),
    ]


def test_background_agent_runs_until_its_task_notification(tmp_path):
    lines = _background_agent_lines()
    path = tmp_path / "messages.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines[:-1]))
    idx = SessionIndex(path).build()
    call = idx.calls.calls["toolu_AG"]
    assert (call.status, call.named) == ("executing", "background")  # not "completed" at launch
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    (launch,) = [b for e in evs if e.role == "tool" and not e.hidden for b in e.tool_results()]
    assert launch.content[0].kind == "notice" and launch.content[0].text.startswith("started in the background")
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = SessionIndex(path).build()
    call = idx.calls.calls["toolu_AG"]
    assert (call.status, call.named) == ("completed", None)
    assert call.finished_at == 1790132020.0  # when its work ended, not when it was launched
    # the model the init names, with the CLI's context-window tag, is the model the replies name
    assert idx.summary.models == ["claude-opus-5"]


def test_interrupt_mid_tool_reads_interrupted_not_denied_nor_an_error(tmp_path):
    """The real recording's interrupt (hand-reduced): legion's `interrupt` system line and a
    ToolCallUpdate `interrupted`, then the SDK's result "The user doesn't want to proceed with this
    tool use…" (the same words a refusal gets) and a ResultMessage `error_during_execution` with
    `terminal_reason: aborted_tools`. The call was interrupted, not denied; the turn was stopped,
    which is no error of the session."""
    call = "toolu_SL"
    lines = [
        {"type": "user", "content": "Sleep; I'll interrupt it.", "session_id": "s1", "timestamp": 1790132110.49,
         "message_id": "u1"},
        _sdk("AssistantMessage", 1790132112.33, {"content": [{"id": call, "name": "Bash", "input": {
            "command": "sleep 30"}}], "model": "claude-opus-5", "parent_tool_use_id": None, "message_id": "m1"}, "a1"),
        _sdk("ToolCallUpdate", 1790132112.34, {"tool_use_id": call, "name": "Bash", "status": "pending"}, "c1"),
        {"type": "system", "content": "User Interrupted Processing", "timestamp": 1790132114.975,
         "metadata": {"subtype": "interrupt", "source": "system"}, "session_id": "s1", "message_id": "i1"},
        _sdk("ToolCallUpdate", 1790132114.9749, {"tool_use_id": call, "name": "Bash", "status": "interrupted",
             "completed_at": 1790132114.9749}, "c2"),
        _sdk("UserMessage", 1790132114.98, {"content": [{"tool_use_id": call, "is_error": True, "content": (
            "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was "
            "a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for "
            "the user to tell you how to proceed.")}], "parent_tool_use_id": None,
            "tool_use_result": "User rejected tool use"}, "r1"),
        _sdk("UserMessage", 1790132114.982, {"content": [{"text": "[Request interrupted by user for tool use]"}],
             "parent_tool_use_id": None}, "r2"),
        _sdk("ResultMessage", 1790132114.986, {"subtype": "error_during_execution", "is_error": True,
             "num_turns": 3, "duration_ms": 4474, "result": None, "permission_denials": [],
             "errors": ["[ede_diagnostic] result_type=user"], "terminal_reason": "aborted_tools"}, "e1"),
    ]
    path = tmp_path / "messages.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = SessionIndex(path).build()
    c = idx.calls.calls[call]
    assert (c.status, c.named) == ("error", "interrupted")
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    end = evs[-1]
    assert end.kind == "result" and end.role != "error" and end.state == "interrupted"
    assert end.blocks[0].text.startswith("turn interrupted")
    assert idx.summary.errors == 0  # an interruption is no failure: neither the call nor the turn


def test_result_costs_are_the_process_running_total_not_each_turns(tmp_path):
    """A ResultMessage's `total_cost_usd` is the SDK process's running total (the real recording:
    0.226425, 0.4281195, … and a small figure again after a restart's `client_launched`). The
    session's recorded cost is what the turns added, not the sum of the running totals."""
    path = _cost_session(tmp_path, (0.226425, 0.4281195))
    idx = SessionIndex(path).build()
    assert idx.summary.usage["source_cost"] == pytest.approx(0.4281195 + 0.044)
    # a turn appended later, read by the next pass of the same index (a live session): the
    # running total it starts from is the one the last pass ended with
    with open(path, "a") as f:
        f.write(json.dumps(_result(1790133500.0, 0.05, "r9")) + "\n")
    idx.refresh()
    assert idx.summary.usage["source_cost"] == pytest.approx(0.4281195 + 0.05)
    assert SessionIndex(path).build().summary.usage["source_cost"] == pytest.approx(0.4281195 + 0.05)


def _result(ts, total, mid):
    return _sdk("ResultMessage", ts, {"subtype": "success", "is_error": False, "num_turns": 1,
                                      "total_cost_usd": total, "usage": {"input_tokens": 2, "output_tokens": 23},
                                      "result": "ok", "permission_denials": []}, mid)


def _cost_session(tmp_path, totals=(0.226425, 0.4281195, 0.5)):
    """A legion session whose turns end with the given running totals (prompts u1…, results r1…),
    then a restarted client (`client_launched`) whose one turn costs 0.044."""
    lines = []
    for i, total in enumerate(totals, 1):
        lines += [{"type": "user", "content": f"Scenario {i}.", "session_id": "s1",
                   "timestamp": 1790131000.0 + 200 * i, "message_id": f"u{i}"},
                  _result(1790131100.0 + 200 * i, total, f"r{i}")]
    n = len(totals) + 1
    lines += [{"type": "system", "content": "Claude Code Launched", "timestamp": 1790133469.2,
               "metadata": {"subtype": "client_launched", "source": "system"}, "session_id": "s1",
               "message_id": "l2"},
              {"type": "user", "content": "Back online.", "session_id": "s1", "timestamp": 1790133481.7,
               "message_id": f"u{n}"},
              _result(1790133483.43, 0.044, f"r{n}")]
    path = tmp_path / "messages.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_turn_end_card_shows_the_turns_own_cost_and_the_running_total_after_it(tmp_path):
    path = _cost_session(tmp_path)
    idx = SessionIndex(path).build()
    ends = {e.id: e for e in load_events(idx, "main", 0, len(idx.threads["main"])) if e.kind == "result"}
    words = {mid: ev.blocks[0].text for mid, ev in ends.items()}
    assert words["r1"] == "turn success · 1 turn · $0.2264"  # the process's first turn: all its own
    assert words["r2"] == "turn success · 1 turn · $0.2017 this turn ($0.4281 so far this process)"
    assert words["r3"] == "turn success · 1 turn · $0.0719 this turn ($0.5000 so far this process)"
    assert words["r4"] == "turn success · 1 turn · $0.0440"  # a restarted client: a new running total
    assert ends["r2"].usage["cost"] == pytest.approx(0.4281195 - 0.226425)
    # the page says the same
    app = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert "$0.2017 this turn ($0.4281 so far this process)" in html


def test_a_first_screen_from_the_middle_does_not_count_a_running_total_whole(tmp_path):
    """A region read from the middle of a big file (a live session's latest lines, a permalink)
    has not read the turns before its first result: that turn's own cost is not known, and the
    region's cost is what the turns after it added, not the whole running total."""
    path = _cost_session(tmp_path)
    data = path.read_bytes()
    lo = data.index(b'"u2"')
    lo = data.rindex(b"\n", 0, lo) + 1  # the line of the second prompt
    region = SessionIndex(path).read_region(lo, len(data))
    ends = {e.id: e for e in load_events(region, "main", 0, len(region.threads["main"])) if e.kind == "result"}
    assert ends["r2"].blocks[0].text == ("turn success · 1 turn · $0.4281 so far this process (this turn's "
                                         "share not known: the turns before it were not read)")
    assert "cost" not in ends["r2"].usage
    assert ends["r3"].blocks[0].text.startswith("turn success · 1 turn · $0.0719 this turn")
    assert region.usage.summary()["source_cost"] == pytest.approx(0.5 - 0.4281195 + 0.044)
    # from the start it is known
    whole = SessionIndex(path).read_region(0, len(data))
    assert whole.usage.summary()["source_cost"] == pytest.approx(0.5 + 0.044)


@pytest.mark.parametrize("inner,words", [
    ({"status": None, "permissionMode": "acceptEdits"}, "permission mode: acceptEdits"),
    ({"status": "requesting"}, "status: requesting"),
])
def test_sdk_status_messages_say_what_changed(inner, words):
    rec = _sdk("SystemMessage", 1790131576.9, {"subtype": "status", "data": {
        "type": "system", "subtype": "status", **inner}}, "m1")
    ev = legion.event(rec, R)
    assert ev.hidden and ev.blocks[0].text == words  # bookkeeping, readable behind the toggle


def test_comm_attachments_read_as_the_files_sent_not_a_raw_comment():
    """legion appends `<!-- sender_attachments: [...] -->` to a send_comm result (the real
    recording's comm with test_file.md attached): the card names the file instead."""
    text = ('Message sent to Test Minion\n\n<!-- sender_attachments: [{"name": "test_file.md", '
            '"resource_id": "dd2a", "size": 337, "mime_type": "text/markdown"}] -->')
    for rec in (
        _sdk("UserMessage", 1790133027.03, {"content": [{"tool_use_id": "t1", "content": [
            {"type": "text", "text": text}], "is_error": None}], "parent_tool_use_id": None}, "r1"),
        _sdk("ToolCallUpdate", 1790133027.04, {"tool_use_id": "t1", "name": "mcp__legion__send_comm",
             "status": "completed", "result": text}, "c1"),
    ):
        ev = legion.event(rec, R)
        (result,) = [b for b in ev.blocks if b.kind == "tool_result"]
        assert [(b.kind, b.text) for b in result.content] == [
            ("text", "Message sent to Test Minion"), ("notice", "attached: test_file.md")]


def test_an_unknown_sdk_record_is_headed_by_its_type_name_once(tmp_path):
    # a `_type` this reader does not know: the card's heading names it, its fields are the card
    # (open), and the Markdown export names it once, not twice
    from viewer.export import Export

    folder = tmp_path / "legion-unknown"
    folder.mkdir()
    path = folder / "messages.jsonl"
    sid = "5b7d9e21-0000-4000-8000-00000000c001"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"type": "user", "content": "Mirror the repo.", "session_id": sid, "message_id": "p1",
         "timestamp": "2026-03-02T10:00:02.000000+00:00"},
        {"_type": "MirrorErrorMessage", "timestamp": 1772445603.0, "session_id": sid, "message_id": "x1",
         "data": {"mirror": "origin", "reason": "remote hung up"}}]) + "\n")
    app = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    html = app.test_client().get("/s/legion-unknown").get_data(as_text=True)
    card = html[html.index('id="m-x1"'):html.index('id="raw-x1"')]
    head, body = card.split('class="ev-body"')
    assert head.count("MirrorErrorMessage") == 1 and '<span class="kind">MirrorErrorMessage</span>' in head
    assert "MirrorErrorMessage" not in body
    assert '<details class="data" open>' in body and "remote hung up" in body
    md = "".join(Export(SessionIndex(path).build(), "md").chunks())
    assert md.count("MirrorErrorMessage") == 1
    assert re.search(r"^### System \(MirrorErrorMessage\) · 2026-03-02 10:00:03 UTC$", md, re.M)
    assert '"reason": "remote hung up"' in md
