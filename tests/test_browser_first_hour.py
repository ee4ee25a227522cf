"""What a new user trips over in the first hour, in real Chromium: pages that scroll sideways on a
phone or a laptop, words that disagree with their number, a message hidden under another."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conftest import CORPUS, ROOT, SESSIONS, list_settled

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


@pytest.mark.parametrize("width", [1280, 1400])
def test_the_session_list_fits_a_laptop_window_with_long_model_names(serve, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(serve(SESSIONS, ROOT / "test_data" / "formats", CORPUS).url + "/")  # every bundled format
    list_settled(page)  # measured while rows still said "indexing…", the columns were others
    # its own column on a wide screen, under the title below 1400 px: wherever it is shown
    # (a router's provider prefix, "anthropic/" in mini-swe-agent's names, may take a line of its own)
    name = page.locator("table.sessions .model:visible .model-id", has_text="claude-sonnet-4-5-20250929").first
    size = name.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert name.bounding_box()["height"] < 2 * size, "a model name is broken over two lines"
    # the first row that has a start (a session whose records carry no time, such as the Agents
    # SDK's saved items, shows none, and the newest file comes first)
    day = page.locator("table.sessions td.when").filter(has_text=re.compile(r"\d")).first
    expect(day).to_contain_text(re.compile(r"^\d{4}-\d\d-\d\d\s"))
    assert day.bounding_box()["width"] >= 90, "the date is broken at its hyphens"
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


def test_a_phone_shows_each_message_s_links_without_a_hover(live_server, browser):
    for touch, shown in ((False, "0.35"), (True, "1")):  # a mouse brings them up on hover
        context = browser.new_context(viewport={"width": 420, "height": 900}, has_touch=touch)
        page = context.new_page()
        page.goto(f"{live_server.url}/s/legion-feature-tour")
        links = page.locator("#m-tour-prompt-1 .ev-head .actions")
        expect(links.get_by_text("copy link")).to_be_visible()
        assert links.get_by_text("copy link").evaluate("e => getComputedStyle(e).opacity") == shown
        context.close()


def test_a_whole_prompt_as_a_title_does_not_fill_the_usage_page(serve, browser):
    root = CORPUS / "claude-code" / "worktrees-subagents"
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{serve(root).url}/s/worktrees-subagents/usage")
    title = page.locator("h1.page-title")
    expect(title).to_contain_text("Usage and cost")
    assert "research how" in title.get_attribute("title")  # the whole prompt, on hover
    line = title.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)")
    assert title.bounding_box()["height"] <= 3.2 * line, "the title runs on for more than 3 lines"
    context.close()


def test_a_file_the_server_cannot_read_says_so_in_words_on_the_list(tmp_path, serve, browser,
                                                                   unreadable):
    root = tmp_path / "root"
    (root / "locked").mkdir(parents=True)
    locked = root / "locked" / "messages.jsonl"
    locked.write_text('{"type": "user", "content": "hi", "session_id": "s"}\n')
    unreadable(locked)
    page = browser.new_page()
    page.goto(serve(root).url + "/")
    row = page.locator("#sessions tr.row")
    expect(row).to_contain_text("locked cannot be read: Permission denied")
    expect(row).not_to_contain_text("Errno")
    page.close()


@pytest.mark.parametrize("width", [420, 360])
def test_a_long_mcp_tool_name_and_a_written_file_s_path_fit_a_phone(tmp_path, serve, browser, width):
    import json

    name = "mcp__plugin_playwright_playwright__browser_take_screenshot"
    path = "/home/USER/projects/spotter-worktrees/spotter-dov/lib/spotter_web/components/x.ex"
    lines = [{"role": "user", "content": "Look at the page, then write the component."},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}},
                 {"id": "c2", "type": "function", "function": {
                     "name": "Write", "arguments": json.dumps({"file_path": path, "content": "ok"})}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "saved"},
             {"role": "tool", "tool_call_id": "c2", "content": "written"}]
    root = tmp_path / "root"
    (root / "phone").mkdir(parents=True)
    (root / "phone" / "messages.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(f"{serve(root).url}/s/phone")
    card = page.locator(".tool").first
    expect(card.locator(".tool-name .mcp-server")).to_have_text("MCP playwright")
    expect(card.locator(".tool-name .mcp-tool")).to_have_text("browser_take_screenshot")
    state = card.locator(".state")
    expect(state).to_be_visible()
    assert state.bounding_box()["x"] + state.bounding_box()["width"] <= width  # on screen
    short = page.locator(".tool").nth(1).locator(".tool-name")
    expect(short).to_have_text("Write")
    size = short.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert short.bounding_box()["height"] < 2 * size, "a short tool name is broken over two lines"
    expect(page.locator(".tool").nth(1)).to_contain_text("spotter_web/components")
    assert sideways(page) == 0
    context.close()


def test_a_file_in_no_known_format_says_so_above_its_cards(tmp_path, serve, watched_page):
    root = tmp_path / "root"
    (root / "odd").mkdir(parents=True)
    (root / "odd" / "messages.jsonl").write_text('{"foo": 1, "bar": [2]}\n')
    page = watched_page
    page.goto(f"{serve(root).url}/s/odd")
    note = page.get_by_role("note")
    expect(note).to_contain_text("Format not recognised.")
    expect(note).to_contain_text("Claude Code")
    expect(page.locator("#timeline li.ev")).to_have_count(1)  # the record is still shown
    page.goto(f"{serve(SESSIONS).url}/s/legion-feature-tour")
    expect(page.locator("#timeline li.ev").first).to_be_attached()
    expect(page.locator(".format-unknown")).to_have_count(0)
    assert page.problems == []


def test_slash_on_the_list_goes_to_the_search_of_every_session(live_server, watched_page):
    page = watched_page
    page.goto(live_server.url + "/")
    box = page.get_by_role("searchbox", name="Search every session")
    expect(box).not_to_be_focused()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    page.keyboard.type("window")
    expect(box).to_have_value("window")  # the "/" itself is not typed into the box
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/search\?q=window"))
    expect(page.locator("main")).to_contain_text("Find out how the window function is used")
    model = page.locator("input[name=model]")
    model.fill("claude")
    model.press("/")  # a "/" typed in another field stays there
    expect(model).to_have_value("claude/")
    assert page.problems == []
