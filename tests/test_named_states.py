"""States the source names beyond the four of the map: awaiting permission, denied by the user,
interrupted, cancelled. Shown with their own badges, counted under their own names, never as
errors; CSS classes come from a fixed table, never from the transcript."""

import json
import re

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from viewer.cli import main
from viewer.formats import agentscope, claude_code, legion, wolo
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events
from viewer.toolcalls import ToolCallMap
from viewer.web import create_app
from viewer.templating import state_badge

from conftest import CORPUS, ROOT, quiet_copy

TOOL_STATES = ROOT / "test_data" / "formats" / "legion" / "tool-states"
R = Ref("main", 1, 0, 1)
REFUSAL = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
           "was a file edit, the new_string was NOT written to the file).")


def check_json(path):
    r = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def states_of(records, adapter=legion):
    """Feed records through an adapter and the map, as the index pass does."""
    calls = ToolCallMap()
    for seq, rec in enumerate(records):
        calls.observe(adapter.event(rec, Ref("main", seq + 1, 0, 1)), seq, None)
    return calls


def test_legion_states_are_counted_under_their_own_names():
    data = check_json(TOOL_STATES)
    assert data["tool_calls"] == {"pending": 0, "executing": 0, "completed": 1, "error": 0,
                                  "denied": 1, "interrupted": 1, "awaiting_permission": 1}
    idx = SessionIndex(TOOL_STATES / "messages.jsonl").build()
    assert idx.summary.errors == 0  # a refusal or an interruption is not a failure
    rm = idx.calls.calls["toolu_rm"]
    assert (rm.status, rm.named, rm.state) == ("error", "denied", "denied")
    # the card shows the SDK's own result: the refusal the model saw, with the user's reason
    ev = load_events(idx, *rm.result, rm.result[1] + 1)[0]
    assert "it holds my notes" in ev.tool_results()[0].content[0].text


def test_each_named_state_has_its_own_badge_and_no_error_styling(tmp_path):
    root = quiet_copy(TOOL_STATES, tmp_path / "sessions" / "tool-states").parent
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get("/s/tool-states").get_data(as_text=True)
    assert '<span class="state denied" title="the user refused this call: the tool did not run">' \
           'denied by user</span>' in html
    assert '<span class="state interrupted" title="stopped before it finished">interrupted</span>' in html
    assert '>awaiting permission</span>' in html and 'class="state awaiting"' in html
    assert "Interrupted before it returned a result." in html
    assert "while this call waited for the user's permission" in html  # the session ended so
    assert 'class="tool-result is-error"' not in html
    assert html.count('class="tool-result ended"') == 3
    data = app.test_client().get("/s/tool-states.json").get_json()
    assert data["tool_calls"]["toolu_rm"]["state"] == "denied"
    assert data["tool_calls"]["toolu_rm"]["status"] == "error"


def g1_call(call="toolu_e", name="Edit"):
    return {"type": "assistant", "content": "Editing.", "session_id": "s", "timestamp": 1.0,
            "metadata": {"tool_uses": [{"id": call, "name": name, "input": {"file_path": "a.py"}}]}}


def g1_result(call="toolu_e", content="ok", is_error=False):
    return {"type": "user", "content": "Tool results: 1 results", "session_id": "s",
            "metadata": {"tool_results": [{"tool_use_id": call, "content": content,
                                           "is_error": is_error}]}}


def request(**md):
    return {"type": "permission_request", "session_id": "s",
            "metadata": {"tool_name": "Edit", "request_id": "r1", **md}}


def answer(decision, **md):
    return {"type": "permission_response", "session_id": "s",
            "metadata": {"decision": decision, "request_id": "r1", **md}}


def test_permission_records_without_a_call_id_find_their_call():
    """legion's older records name the tool and a request id, not the call (its own history
    rebuild matches them the same way)."""
    calls = states_of([g1_call(), request()])
    assert calls.calls["toolu_e"].state == "awaiting_permission"
    calls = states_of([g1_call(), request(), answer("deny"),
                       g1_result(content=REFUSAL, is_error=True)])
    assert calls.calls["toolu_e"].state == "denied" and calls.errors() == 0
    calls = states_of([g1_call(), request(), answer("allow")])
    assert calls.calls["toolu_e"].state == "executing"
    calls = states_of([g1_call(), request(), answer("allow"), g1_result()])
    assert calls.calls["toolu_e"].state == "completed"
    # the corpus shape: an answer with neither request id nor tool name
    calls = states_of([g1_call(), request(), {"type": "permission_response", "session_id": "s",
                                              "metadata": {"behavior": "deny"}}])
    assert calls.calls["toolu_e"].state == "denied"
    # a request for another tool leaves the call alone
    calls = states_of([g1_call(), request(tool_name="Bash")])
    assert calls.calls["toolu_e"].state == "pending"


def test_a_restart_interrupts_the_calls_left_open():
    launched = {"type": "system", "content": "Claude Code Launched", "session_id": "s",
                "metadata": {"subtype": "client_launched"}}
    calls = states_of([g1_call("a"), g1_result("a"), g1_call("b"), launched])
    assert calls.calls["a"].state == "completed" and calls.calls["b"].state == "interrupted"
    assert calls.by_state() == {"pending": 0, "executing": 0, "completed": 1, "error": 0,
                                "interrupted": 1}


def test_tool_call_updates_name_states():
    upd = [{"_type": "ToolCallUpdate", "data": {"tool_use_id": "t", "name": "Bash", "status": s}}
           for s in ("pending", "awaiting_permission", "running", "interrupted")]
    seen = []
    calls = ToolCallMap()
    calls.observe(legion.event(g1_call("t", "Bash"), R), 0, None)
    for i, rec in enumerate(upd):
        calls.observe(legion.event(rec, R), i + 1, None)
        seen.append(calls.calls["t"].state)
    assert seen == ["pending", "awaiting_permission", "executing", "interrupted"]


def test_claude_code_refusals_and_cancelled_siblings():
    data = check_json(CORPUS / "claude-code" / "log-sample-thinking-image")
    assert data["tool_calls"]["denied"] == 3 and data["tool_calls"]["error"] == 0
    data = check_json(CORPUS / "claude-code" / "spotter-progress-compact")
    assert data["tool_calls"]["cancelled"] == 7  # "Sibling tool call errored"
    ev = claude_code.event({"type": "user", "uuid": "u", "sessionId": "s", "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": True,
                                     "content": "Error: exit code 1"}]}}, R)
    assert ev.tool_results()[0].state is None  # a failure stays a failure


def test_wolo_parts_failed_is_an_error_cancelled_is_not():
    def part(status):
        return {"id": f"m-{status}", "role": "assistant", "timestamp": 1.0, "finished": True,
                "parts": [{"type": "tool", "id": f"c-{status}", "tool": "shell",
                           "input": {"command": "make"}, "output": "", "status": status}]}
    calls = states_of([part("failed"), part("cancelled"), part("interrupted")], wolo)
    assert {c: k.state for c, k in calls.calls.items()} == {
        "c-failed": "error", "c-cancelled": "cancelled", "c-interrupted": "interrupted"}
    assert calls.errors() == 1


def test_agentscope_interrupted_results_and_replies(tmp_path):
    use = {"id": "m1", "name": "Friday", "role": "assistant", "timestamp": "2026-01-26 17:30:12.811",
           "content": [{"type": "tool_use", "id": "c1", "name": "execute_shell_command",
                        "input": {"command": "sleep 100"}},
                       {"type": "tool_use", "id": "c2", "name": "view_text_file", "input": {}}]}
    result = {"id": "m2", "name": "system", "role": "system", "timestamp": "2026-01-26 17:30:14.000",
              "content": [{"type": "tool_result", "id": "c1", "name": "execute_shell_command",
                           "output": [{"type": "text", "text": "<system-info>The tool call has "
                                       "been interrupted by the user.</system-info>"}]},
                          {"type": "tool_result", "id": "c2", "name": "view_text_file",
                           "state": "denied", "output": "not allowed"}]}
    calls = states_of([use, result], agentscope)
    assert calls.calls["c1"].state == "interrupted" and calls.calls["c2"].state == "denied"
    reply = {"id": "m3", "name": "Friday", "role": "assistant", "timestamp": "2026-01-26 17:30:15.000",
             "content": "I noticed that you have interrupted me. What can I do for you?",
             "metadata": {"_is_interrupted": True}}
    ev = agentscope.event(reply, R)
    assert ev.state == "interrupted" and not [b for b in ev.blocks if b.kind == "data"]
    p = tmp_path / "s" / "memory.jsonl"
    p.parent.mkdir()
    p.write_text("".join(json.dumps(r) + "\n" for r in (use, result, reply)))
    app = create_app({"ROOTS": [str(p.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get("/s/memory").get_data(as_text=True)
    head = html[html.index('id="m-m3"'):]
    assert '<span class="state interrupted"' in head[:head.index("ev-body")]


@pytest.mark.parametrize("word", ['x" onmouseover="alert(1)', "paused", "<b>", "ERROR "])
def test_a_source_word_never_becomes_a_class(word, tmp_path):
    assert state_badge(word)[0] == "other"
    root = tmp_path / "sessions" / "odd"
    root.mkdir(parents=True)
    (root / "messages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        g1_call("t", "Bash"),
        {"_type": "ToolCallUpdate", "session_id": "s", "data": {"tool_use_id": "t", "status": word}},
        {"type": "assistant", "content": "x", "session_id": "s",
         "display": {"tool_states": {"t": {"state": word}}}},
        {"type": word, "kind": word, "content": "a record no rule knows", "session_id": "s"}]))
    app = create_app({"ROOTS": [str(root.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get("/s/odd").get_data(as_text=True)
    classes = set(re.findall(r'class="state ([^"]*)"', html))
    assert classes <= {"pending", "executing", "completed", "error", "awaiting", "denied",
                       "interrupted", "cancelled", "other", "unanswered", "orphan"}
    assert set(re.findall(r'<li class="ev role-([\w-]+) kind-([\w-]+)[ "]', html)) == {
        ("assistant", "message"), ("tool", "tool_state"), ("other", "unknown")}


@pytest.mark.browser
def test_a_denial_arriving_live_changes_the_badge(tmp_path, serve, watched_page):
    root = tmp_path / "sessions" / "ask"
    root.mkdir(parents=True)
    path = root / "messages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"type": "user", "content": "Tidy a.py", "session_id": "s", "message_id": "p1",
         "timestamp": 1772445600.0},
        {**g1_call(), "message_id": "call-1"}, {**request(), "message_id": "req-1"}]))
    srv = serve(root.parent)
    page = watched_page
    page.goto(f"{srv.url}/s/ask")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    badge = page.locator("#tc-toolu_e .call-state .state")
    expect(badge).to_have_text("awaiting permission")
    page.evaluate("window.__noReload = true")
    with open(path, "a") as f:
        f.write(json.dumps({**answer("deny"), "message_id": "res-1"}) + "\n")
    expect(badge).to_have_text("denied by user")
    expect(badge).to_have_class("state denied")
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []
