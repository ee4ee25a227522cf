"""A live page's header follows the session in real Chromium: its counts — messages, tool calls,
tokens — move as lines or rows are written, without a reload (a mark set in the page's window
survives), for a JSONL file as for a session kept in Goose's database; and a word written live into
a Goose row is found by the session's search box."""

import json
import time

import pytest
from playwright.sync_api import expect

from conftest import running_goose

pytestmark = pytest.mark.browser


def fact(page, name: str):
    return page.locator(f"#session-facts div:has(> dt:text-is('{name}')) > dd")


def test_a_jsonl_session_s_header_counts_what_is_appended(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/legion-feature-tour")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__sameDocument = 1")
    messages, calls = int(fact(page, "messages").inner_text()), int(fact(page, "tool calls").inner_text())
    with open(path, "a") as f:
        f.write(json.dumps({"type": "assistant", "content": "live message", "timestamp": 1761073400,
                            "session_id": "s", "message_id": "live-1", "metadata": {"tool_uses": [
                                {"id": "toolu_live", "name": "Bash", "input": {"command": "make"}}]}}) + "\n")
    expect(page.locator("#tc-toolu_live")).to_be_visible()
    expect(fact(page, "messages")).to_have_text(str(messages + 1))
    expect(fact(page, "tool calls")).to_have_text(str(calls + 1))
    assert page.evaluate("window.__sameDocument") == 1
    assert page.problems == []


def test_a_goose_row_moves_the_header_and_its_words_are_found_by_the_search_box(serve, watched_page,
                                                                               tmp_path):
    with running_goose(tmp_path, serve, watched_page) as (make_db, con, srv):
        page = watched_page
        messages = int(fact(page, "messages").inner_text())
        calls = int(fact(page, "tool calls").inner_text())
        tokens = fact(page, "tokens").inner_text()
        make_db.write_message(con, make_db.NEW_ID, {"id": "msg_live", "role": "assistant",
                                                    "created": int(time.time()), "content": [
            {"type": "text", "text": "The zebrafish fixture hangs."},
            {"type": "toolRequest", "id": "call_live", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "make test"}}}}]}, "2025-11-05 10:00:30")
        expect(page.locator("#m-msg_live")).to_be_visible(timeout=30_000)
        expect(fact(page, "messages")).to_have_text(str(messages + 1))
        expect(fact(page, "tool calls")).to_have_text(str(calls + 1))
        # Goose records the call's usage after the reply: the header's tokens move with it
        con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, "
                    "output_tokens, total_tokens, cost, cost_source, is_compaction) VALUES (?, ?, "
                    "'claude-sonnet-4-5', 210000, 4000, 214000, 0.7, 'estimated', 0)",
                    (make_db.NEW_ID, int(time.time())))
        con.execute("UPDATE sessions SET accumulated_total_tokens = accumulated_total_tokens + 214000, "
                    "total_tokens = total_tokens + 214000 WHERE id = ?", (make_db.NEW_ID,))
        expect(fact(page, "tokens")).not_to_have_text(tokens, timeout=30_000)
        # the word written live is found by the session's search box
        page.locator("#find-q").fill("zebrafish")
        page.locator("#find-q").press("Enter")
        expect(page.locator("#hits li.hit")).to_have_count(1)
        expect(page.locator("#hits li.hit")).to_have_attribute("data-id", "msg_live")
        assert page.evaluate("window.__sameDocument") == 1  # never reloaded
        assert page.problems == []
