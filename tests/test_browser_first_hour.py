"""What a new user trips over in the first hour, in real Chromium: pages that scroll sideways on a
phone or a laptop, words that disagree with their number, a message hidden under another."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conftest import CORPUS, ROOT, SESSIONS

pytestmark = pytest.mark.browser

# A real Claude Code session: one hidden event, and an Edit of a file whose path has no break in it
IMAGE = CORPUS / "claude-code" / "log-sample-thinking-image"


def sideways(page) -> int:
    """How far the page scrolls sideways (0 when everything fits the window)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


def test_one_hidden_event_is_one_event_not_events(serve, watched_page):
    page = watched_page
    page.goto(f"{serve(IMAGE).url}/s/log-sample-thinking-image")
    toggle = page.locator("label.hidden-toggle")
    expect(toggle).to_contain_text("Show 1 hidden event (", use_inner_text=True)
    toggle.click()
    expect(toggle).to_contain_text("Hide 1 hidden event (", use_inner_text=True)
    assert page.problems == []


def test_a_long_path_in_an_edit_does_not_widen_a_phone_page(serve, browser):
    context = browser.new_context(viewport={"width": 420, "height": 900})
    page = context.new_page()
    page.goto(f"{serve(IMAGE).url}/s/log-sample-thinking-image")
    page.locator("#timeline .diff-file").first.scroll_into_view_if_needed()
    expect(page.locator("#timeline .diff-file").first).to_contain_text("claude_code_log/templates")
    assert sideways(page) == 0
    context.close()


def test_the_session_list_fits_a_laptop_window_with_long_model_names(serve, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(serve(SESSIONS, ROOT / "test_data" / "formats", CORPUS).url + "/")  # every bundled format
    expect(page.locator("table.sessions td.models").first).to_contain_text("claude-")
    assert sideways(page) == 0
    context.close()


def test_the_no_more_errors_note_is_not_drawn_over_the_live_bar_on_a_phone(live_server, browser):
    context = browser.new_context(viewport={"width": 420, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    bar = page.locator(".live-bar")
    expect(bar).to_be_visible()
    page.keyboard.press("e")  # the session's only error
    expect(page.get_by_role("status")).to_contain_text("Error 1 of 1")
    page.keyboard.press("e")  # and past it
    toast = page.locator("#find-toast.shown")
    expect(toast).to_contain_text("No more errors after this point")
    t, b = toast.bounding_box(), bar.bounding_box()
    apart = (t["y"] + t["height"] <= b["y"] or b["y"] + b["height"] <= t["y"]
             or t["x"] + t["width"] <= b["x"] or b["x"] + b["width"] <= t["x"])
    assert apart, f"the note {t} covers the live bar {b}"
    context.close()
