"""Sessions kept in database rows followed live in headless Chromium as a growing JSONL file is: a
row the program writes while the page is open adds its card through the live stream — the page is
not reloaded (a mark set in the page's window survives) — a call's card turns completed when its
result's row comes, a reply's card is drawn again when its usage comes in a later row, and Studio's
run list says each run's status. Databases built as the programs write them
(test_data/formats/agentscope-studio/make_db.py, test_data/formats/goose/make_db.py)."""

import re
import time
from datetime import datetime, timezone

import pytest
from playwright.sync_api import expect

from conftest import indexed_list, running_goose, stream_open, studio_make_db

pytestmark = pytest.mark.browser


def now(later: float = 0.0) -> str:
    """A time as AgentScope writes it (zoneless; the viewer reads it as UTC): a run written now."""
    return datetime.fromtimestamp(time.time() + later, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.000")


def test_a_running_studio_run_grows_card_by_card_without_a_reload(serve, watched_page, tmp_path):
    make_db = studio_make_db()
    root = tmp_path / "AgentScope-Studio"
    root.mkdir()
    con = make_db.build(root / "database.sqlite", keep_open=True)  # a running Studio's database
    try:
        con.execute("UPDATE run_table SET status = 'running' WHERE id = ?", (make_db.RUN,))
        page = watched_page
        srv = serve(root)
        indexed_list(page, srv.url + "/")
        rows = page.locator("table.sessions tbody tr")
        expect(rows.filter(has_text="Demo · notes-check").locator(".status-badge")).to_have_text("running")
        expect(rows.filter(has_text="Weather · forecast").locator(".status-badge")).to_have_text("running")
        rows.filter(has_text="Demo · notes-check").locator("td.title > a").click()
        expect(page).to_have_url(re.compile(rf"/s/database.sqlite~{make_db.RUN}$"))
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
        stream_open(page, "live")
        page.evaluate("window.__sameDocument = 1")

        call = {"id": "m_ls", "name": "Friday", "role": "assistant", "metadata": None,
                "timestamp": now(), "content": [
                    {"type": "text", "text": "Listing the folder."},
                    {"type": "tool_use", "id": "call_ls", "name": "execute_shell_command",
                     "input": {"command": "ls"}}]}
        make_db.push(con, make_db.RUN, call, "r_more", "Friday", "assistant")
        card = page.locator("#tc-call_ls")
        expect(card.locator(".state")).to_have_text("pending", timeout=30_000)
        expect(page.locator("#m-m_ls .ev-head .who")).to_have_text("Friday")
        assert page.evaluate("window.__sameDocument") == 1  # the card came by the stream: no reload
        make_db.push(con, make_db.RUN, {**call, "id": "m_ls_result", "name": "system", "role": "system",
                                        "timestamp": now(1), "content": [
                                            {"type": "tool_result", "id": "call_ls", "name": "execute_shell_command",
                                             "output": [{"type": "text", "text": "notes.txt\nplan.md"}]}]},
                     "r_more", "Friday", "assistant")
        expect(card.locator(".state")).to_have_text("completed", timeout=30_000)
        expect(card).to_contain_text("plan.md")
        # the model call that made the message, traced after it: its card is drawn again with it
        make_db.trace(con, make_db.RUN, "s_more", None, "invoke_agent", "invoke_agent Friday", None, None,
                      None, "Friday", 10)
        make_db.trace(con, make_db.RUN, "s_c9", "s_more", "chat", "chat qwen-max", "qwen-max", 700, 20, None, 10)
        expect(page.locator("#m-m_ls .ev-head .model")).to_have_text("qwen-max", timeout=30_000)
        # a message streaming on: pushed again with each chunk, its card drawn again in place
        words = {"id": "m_words", "name": "Friday", "role": "assistant", "metadata": None,
                 "timestamp": now(2), "content": [{"type": "text", "text": "Two files"}]}
        make_db.push(con, make_db.RUN, words, "r_more", "Friday", "assistant")
        expect(page.locator("#m-m_words")).to_contain_text("Two files", timeout=30_000)
        make_db.push(con, make_db.RUN, {**words, "content": [{"type": "text", "text": "Two files: notes and plan."}]},
                     "r_more", "Friday", "assistant")
        expect(page.locator("#m-m_words")).to_contain_text("Two files: notes and plan.", timeout=30_000)
        expect(page.locator("#m-m_words")).to_have_count(1)
        # the run ends: what was traced that no message belongs to joins the page's hidden events
        make_db.trace(con, make_db.RUN, "s_fn", None, "invoke_generic_function",
                      "invoke_generic_function load_notes", None, None, None, None, 11)
        hidden = int(page.locator("#hidden-count").get_attribute("data-n"))
        con.execute("UPDATE run_table SET status = 'done' WHERE id = ?", (make_db.RUN,))
        expect(page.locator("#hidden-count")).not_to_have_attribute("data-n", str(hidden), timeout=30_000)
        assert page.evaluate("window.__sameDocument") == 1  # never reloaded
        assert [page.locator("#timeline > li.ev").nth(i).get_attribute("id") for i in range(1, 3)] == [
            "m-m_user", "m-m_think"]
        assert page.problems == []
        page.goto(srv.url + "/")
        expect(rows.filter(has_text="Demo · notes-check").locator(".status-badge")).to_have_text("done")
    finally:
        con.close()


def test_a_running_studio_run_shows_its_tool_runs_and_replies_as_their_spans_are_written(
        serve, watched_page, tmp_path):
    """AgentScope exports a span when it ends, seconds after the messages it concerns: a tool's run
    shows on the card of the message that made the call, an agent's reply on the reply's last
    message, while the run runs, drawn again in place (no reload, no card moved)."""
    make_db = studio_make_db()
    root = tmp_path / "AgentScope-Studio"
    root.mkdir()
    con = make_db.build(root / "database.sqlite", keep_open=True)
    try:
        con.execute("UPDATE run_table SET status = 'running' WHERE id = ?", (make_db.RUN,))
        page = watched_page
        srv = serve(root)
        page.goto(f"{srv.url}/s/database.sqlite~{make_db.RUN}")
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
        stream_open(page, "live")
        page.evaluate("window.__sameDocument = 1")
        expect(page.locator("#m-m_think")).to_contain_text("traced: tool view_text_file ran in 0.1 s")

        call = {"id": "m_grep", "name": "Friday", "role": "assistant", "metadata": None,
                "timestamp": now(), "content": [
                    {"type": "tool_use", "id": "call_grep", "name": "execute_shell_command",
                     "input": {"command": "grep -c milk notes.txt"}}]}
        make_db.push(con, make_db.RUN, call, "r_grep", "Friday", "assistant")
        card = page.locator("#tc-call_grep")
        expect(card.locator(".state")).to_have_text("pending", timeout=30_000)
        make_db.push(con, make_db.RUN, {**call, "id": "m_grep_result", "name": "system", "role": "system",
                                        "timestamp": now(1), "content": [
                                            {"type": "tool_result", "id": "call_grep", "name": "execute_shell_command",
                                             "output": [{"type": "text", "text": "1"}]}]},
                     "r_grep", "Friday", "assistant")
        expect(card.locator(".state")).to_have_text("completed", timeout=30_000)
        answer = {"id": "m_count", "name": "Friday", "role": "assistant", "metadata": None,
                  "timestamp": now(2), "content": "Milk is on the list once."}
        make_db.push(con, make_db.RUN, answer, "r_grep", "Friday", "assistant")
        expect(page.locator("#m-m_count")).to_contain_text("Milk is on the list once.", timeout=30_000)
        order = page.locator("#timeline > li.ev").evaluate_all("els => els.map(e => e.id)")
        # the spans come seconds later (a batch of ended spans): the tool's run, then the reply
        make_db.trace(con, make_db.RUN, "s_grep", "s_fri3", "execute_tool", "execute_tool execute_shell_command",
                      None, None, None, None, 12, attrs={"gen_ai.tool.call.id": "call_grep",
                                                         "gen_ai.tool.name": "execute_shell_command"}, took=1.4)
        ran = page.locator("#m-m_grep .notice", has_text="traced: tool execute_shell_command ran in 1.4 s")
        expect(ran).to_be_visible(timeout=30_000)
        make_db.trace(con, make_db.RUN, "s_fri3", None, "invoke_agent", "invoke_agent Friday", None, None,
                      None, "Friday", 11, took=3.2)
        replied = page.locator("#m-m_count .notice", has_text="traced: Friday replied in 3.2 s")
        expect(replied).to_be_visible(timeout=30_000)
        assert page.locator("#timeline > li.ev").evaluate_all("els => els.map(e => e.id)") == order
        assert page.evaluate("window.__sameDocument") == 1  # drawn again in place: never reloaded
        assert page.problems == []
    finally:
        con.close()


def test_a_goose_session_row_grows_and_its_call_completes_without_a_reload(serve, watched_page, tmp_path):
    with running_goose(tmp_path, serve, watched_page) as (make_db, con, srv):
        page = watched_page
        expect(page.locator("#tc-call_mk1 .state")).to_have_text("completed")
        first = page.locator("#timeline > li.ev").nth(1).get_attribute("id")

        make_db.write_message(con, make_db.NEW_ID, {"id": "msg_live_call", "role": "assistant",
                                                    "created": int(time.time()), "content": [
            {"type": "text", "text": "Running the tests again."},
            {"type": "toolRequest", "id": "call_live", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "make test"}}}}]}, "2025-11-05 10:00:30")
        card = page.locator("#tc-call_live")
        expect(card.locator(".state")).to_have_text("pending", timeout=30_000)
        assert page.evaluate("window.__sameDocument") == 1  # the card came by the stream: no reload
        reply = page.locator("#m-msg_live_call")
        expect(reply.locator(".ev-head .model")).to_have_count(0)
        # Goose records the call's usage after the reply: the reply's card is drawn again with it
        con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, "
                    "output_tokens, total_tokens, cost, cost_source, is_compaction) VALUES (?, ?, "
                    "'claude-sonnet-4-5', 2100, 40, 2140, 0.007, 'estimated', 0)", (make_db.NEW_ID, int(time.time())))
        expect(reply.locator(".ev-head .model")).to_have_text("claude-sonnet-4-5", timeout=30_000)
        make_db.write_message(con, make_db.NEW_ID, {"id": "msg_live_result", "role": "user",
                                                    "created": int(time.time()) + 1, "content": [
            {"type": "toolResponse", "id": "call_live", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": "12 passed"}], "isError": False}}}]}, "2025-11-05 10:00:31")
        expect(card.locator(".state")).to_have_text("completed", timeout=30_000)
        expect(card).to_contain_text("12 passed")
        assert page.evaluate("window.__sameDocument") == 1  # never reloaded
        assert page.locator("#timeline > li.ev").nth(1).get_attribute("id") == first
        assert page.problems == []


def test_a_goose_conversation_saved_again_as_it_was_goes_on_without_a_reload(serve, watched_page, tmp_path):
    """Goose saves a conversation again whole (replace_conversation: new row ids), here with the
    same messages: the page goes on with the message written after, not reloaded."""
    with running_goose(tmp_path, serve, watched_page) as (make_db, con, srv):
        page = watched_page
        rows = con.execute("SELECT role, content_json, created_timestamp, metadata_json, message_id FROM messages "
                           "WHERE session_id = ? ORDER BY id", (make_db.NEW_ID,)).fetchall()
        con.execute("BEGIN")
        con.execute("DELETE FROM messages WHERE session_id = ?", (make_db.NEW_ID,))
        con.executemany("INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json, "
                        "message_id) VALUES (?, ?, ?, ?, ?, ?)", [(make_db.NEW_ID, *r) for r in rows])
        con.execute("COMMIT")
        make_db.write_message(con, make_db.NEW_ID, {"id": "msg_resumed", "role": "assistant",
                                                    "created": int(time.time()), "content": [
            {"type": "text", "text": "Resumed: dropping --watch from the CI target."}]}, "2025-11-05 10:00:30")
        expect(page.locator("#m-msg_resumed")).to_contain_text("Resumed", timeout=30_000)
        expect(page.locator("#tc-call_mk1 .state")).to_have_text("completed")
        assert page.evaluate("window.__sameDocument") == 1  # not reloaded
        assert page.problems == []
