"""Reading a session in real Chromium: styles, toggles and states a reader sees (issue 10)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

TOUR = "legion-feature-tour"
CC = "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"


def test_a_subagent_card_and_its_thread_are_not_bold(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{CC}")
    card = page.locator("#tc-toolu_task_explore")
    result = card.locator(".tool-result")
    expect(result).to_contain_text("Two callers")
    assert result.evaluate("e => getComputedStyle(e).fontWeight") == "400"
    card.locator("details.subthread > summary").click()
    reply = card.locator("details.subthread li.ev").last.locator(".ev-body")
    expect(reply).to_contain_text("Two callers")
    assert reply.evaluate("e => getComputedStyle(e).fontWeight") == "400"
    assert page.problems == []


@pytest.mark.parametrize("javascript", [True, False])
def test_hidden_events_toggle_says_what_a_click_will_do(live_server, browser, javascript):
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.goto(f"{live_server.url}/s/{TOUR}")
    toggle = page.locator("label.hidden-toggle")
    expect(toggle).to_contain_text("Show 2 hidden events", use_inner_text=True)
    expect(page.locator("#m-L1")).to_be_hidden()
    toggle.click()
    expect(page.locator("#m-L1")).to_be_visible()
    expect(toggle).to_contain_text("Hide 2 hidden events", use_inner_text=True)
    expect(toggle).not_to_contain_text("Show", use_inner_text=True)
    toggle.click()
    expect(page.locator("#m-L1")).to_be_hidden()
    expect(toggle).to_contain_text("Show 2 hidden events", use_inner_text=True)
    context.close()
