"""Cards inside a sub-agent's thread, nested under the call that ran it, follow the session live in
real Chromium as the main timeline's cards do, without a reload (a mark set in the page's window
survives): a call the sub-agent makes turns completed when its result is written, and a reply of
the sub-agent drawn again when a later row says what it cost — for a Claude Code sidechain (its own
JSONL file) and for a Goose sub-agent (its own session in the database)."""

import json
import shutil
import time

import pytest
from playwright.sync_api import expect

from conftest import SESSIONS, running_goose

pytestmark = pytest.mark.browser


def append(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def test_a_call_in_a_claude_code_sidechain_completes_in_its_nest(tmp_path, serve, watched_page):
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / "claude-project", root / "claude-project")
    folder = root / "claude-project"
    main = next(folder.glob("*.jsonl"))
    sid = main.stem
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/claude-project~{sid}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__sameDocument = 1")
    append(main, {"type": "assistant", "uuid": "task-2", "sessionId": sid, "message": {
        "role": "assistant", "model": "claude-opus-4-7", "content": [{"type": "tool_use", "id": "toolu_task_2",
        "name": "Task", "input": {"description": "Second look", "prompt": "Look again.",
                                  "subagent_type": "Explore"}}]}})
    card = page.locator("#tc-toolu_task_2")
    expect(card.locator(".state")).to_have_text("pending")
    sub = folder / sid / "subagents"
    (sub / "agent-b2.meta.json").write_text(json.dumps({"agentType": "Explore", "toolUseId": "toolu_task_2",
                                                        "description": "Second look"}))
    agent = sub / "agent-b2.jsonl"
    append(agent, {"type": "user", "uuid": "b2-1", "isSidechain": True, "agentId": "b2", "sessionId": sid,
                   "message": {"role": "user", "content": "Look again."}})
    thread = card.locator("details.subthread")
    thread.locator("summary").click()
    expect(thread.locator("#m-b2-1")).to_be_visible()
    expect(thread.locator("summary")).to_contain_text("1 event")
    append(agent, {"type": "assistant", "uuid": "b2-2", "isSidechain": True, "agentId": "b2", "sessionId": sid,
                   "message": {"role": "assistant", "content": [
                       {"type": "tool_use", "id": "toolu_b2_ls", "name": "Bash", "input": {"command": "ls"}}]}})
    nested = thread.locator("#tc-toolu_b2_ls")
    expect(nested.locator(".state")).to_have_text("pending")
    append(agent, {"type": "user", "uuid": "b2-3", "isSidechain": True, "agentId": "b2", "sessionId": sid,
                   "message": {"role": "user", "content": [
                       {"type": "tool_result", "tool_use_id": "toolu_b2_ls", "content": "README.md"}]}})
    expect(nested.locator(".state")).to_have_text("completed")
    expect(nested).to_contain_text("README.md")
    # the nest's count follows its events (it said "1 event" over three cards)
    expect(thread.locator("summary")).to_contain_text("3 events")
    assert page.evaluate("window.__sameDocument") == 1
    assert page.problems == []


def test_a_goose_sub_agent_s_cards_change_in_its_nest(serve, watched_page, tmp_path):
    with running_goose(tmp_path, serve, watched_page) as (make_db, con, srv):
        page = watched_page
        thread = page.locator("#tc-call_dl1-thread details.subthread")
        thread.locator("summary").click()
        expect(thread.locator("#tc-call_sub1 .state")).to_have_text("completed")
        now = int(time.time())
        make_db.write_message(con, make_db.SUB_ID, {"id": "msg_sub_ls", "role": "assistant", "created": now,
                                                    "content": [
            {"type": "toolRequest", "id": "call_sub2", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "ls"}}}}]}, "2025-11-05 10:00:30")
        nested = thread.locator("#tc-call_sub2")
        expect(nested.locator(".state")).to_have_text("pending", timeout=30_000)
        reply = thread.locator("#m-msg_sub_ls")
        expect(reply.locator(".ev-head .model")).to_have_count(0)
        # the sub-agent's usage comes after its reply: the reply's card in the nest is drawn again
        con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, "
                    "output_tokens, total_tokens, cost, cost_source, is_compaction) VALUES (?, ?, "
                    "'claude-haiku-4-5', 700, 20, 720, 0.001, 'estimated', 0)", (make_db.SUB_ID, now))
        expect(reply.locator(".ev-head .model")).to_have_text("claude-haiku-4-5", timeout=30_000)
        make_db.write_message(con, make_db.SUB_ID, {"id": "msg_sub_res", "role": "user", "created": now + 1,
                                                    "content": [
            {"type": "toolResponse", "id": "call_sub2", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": "Makefile"}], "isError": False}}}]}, "2025-11-05 10:00:31")
        nested = thread.locator("#tc-call_sub2")
        expect(nested.locator(".state")).to_have_text("completed", timeout=30_000)
        expect(nested).to_contain_text("Makefile")
        assert page.evaluate("window.__sameDocument") == 1  # never reloaded
        assert page.problems == []


def test_a_goose_1x_sub_agent_nests_under_its_call_while_it_runs(serve, watched_page, tmp_path):
    """Goose 1.x's `subagent` call makes its task's session at once, and only the call's result,
    when the task is done, names it: the session nests under the call as soon as it is made (as a
    Claude Code sub-agent's under its Task call), its messages appear there as they are written,
    and it stays there when the result comes — never at the page's top level, never a reload."""
    with running_goose(tmp_path, serve, watched_page) as (make_db, con, srv):
        page = watched_page
        now = int(time.time())
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now))
        make_db.write_message(con, make_db.NEW_ID, {"id": "msg_sa", "role": "assistant", "created": now,
                                                    "content": [
            {"type": "toolRequest", "id": "call_sa", "toolCall": {"status": "success", "value": {
                "name": "subagent", "arguments": {"instructions": "List the CI jobs.", "title": "CI jobs"}}}}]},
            stamp)
        card = page.locator("#tc-call_sa")
        expect(card.locator(".state")).to_have_text("pending", timeout=30_000)
        con.execute("INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at) VALUES "
                    "('20251105_9', 'Subagent Task', 'sub_agent', '/home/dev/api', ?, ?)", (stamp, stamp))
        make_db.write_message(con, "20251105_9", {"id": "msg_task1", "role": "user", "created": now, "content": [
            {"type": "text", "text": "List the CI jobs."}]}, stamp)
        thread = page.locator("#tc-call_sa-thread details.subthread")
        expect(thread).to_have_count(1, timeout=30_000)
        thread.locator("summary").click()
        expect(thread.locator("#m-msg_task1")).to_be_visible(timeout=30_000)
        expect(page.locator("#timeline > li.ev#m-msg_task1")).to_have_count(0)  # not at the top level
        make_db.write_message(con, "20251105_9", {"id": "msg_task2", "role": "assistant", "created": now + 1,
                                                  "content": [{"type": "text", "text": "CI runs build and test."}]},
                              stamp)
        expect(thread.locator("#m-msg_task2")).to_contain_text("CI runs build and test.", timeout=30_000)
        expect(card.locator(".state")).to_have_text("pending")
        answer = {"status": "completed", "results": [{"task_id": "20251105_9", "status": "Completed",
                                                      "data": "CI runs build and test."}]}
        make_db.write_message(con, make_db.NEW_ID, {"id": "msg_sa_res", "role": "user", "created": now + 2,
                                                    "content": [
            {"type": "toolResponse", "id": "call_sa", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": json.dumps(answer)}], "isError": False}}}]}, stamp)
        expect(card.locator(".state")).to_have_text("completed", timeout=30_000)
        thread = page.locator("#tc-call_sa-thread details.subthread")  # (the card drawn again with it)
        expect(thread).to_have_count(1)
        if thread.get_attribute("open") is None:
            thread.locator("summary").click()
        expect(thread.locator("#m-msg_task2")).to_be_visible(timeout=30_000)
        assert page.evaluate("window.__sameDocument") == 1  # never reloaded
        assert page.problems == []


def test_a_sub_agent_s_event_its_opened_thread_holds_already_is_not_put_in_twice(serve, watched_page, tmp_path):
    """A thread nested under its call is loaded when opened: an event written just before may come
    in that load and, a moment later, by the stream too (seen once with a Goose sub-agent's
    message): the page keeps one card of it, and still takes the stream's new ones."""
    with running_goose(tmp_path, serve, watched_page) as (make_db, con, srv):
        page = watched_page
        thread = page.locator("#tc-call_dl1-thread details.subthread")
        thread.locator("summary").click()
        events = thread.locator("ol.nested")
        expect(events.locator("li.ev").first).to_be_visible()
        held, ol = events.locator("li.ev").last.get_attribute("id"), events.get_attribute("id")
        data = (f'<hx-partial hx-target="#{ol}" hx-swap="beforeend"><li id="{held}" class="ev" data-seq="98">'
                f'again</li></hx-partial><hx-partial hx-target="#{ol}" hx-swap="beforeend">'
                '<li id="m-msg_sub_new" class="ev" data-seq="99">new</li></hx-partial>')
        page.evaluate("""data => document.getElementById("live").dispatchEvent(new CustomEvent(
            "htmx:sse:before:message", {detail: {message: {data: data}}}))""", data)
        expect(page.locator("#m-msg_sub_new")).to_have_count(1)
        expect(page.locator(f"#{held}")).to_have_count(1)
        expect(page.locator(f"#{held}")).not_to_contain_text("again")
        assert page.problems == []
