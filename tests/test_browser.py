"""The core pages in real headless Chromium against a live server."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

TOUR = "legion-feature-tour"
CC = "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"


def test_open_a_session_from_the_list(live_server, watched_page):
    page = watched_page
    page.goto(live_server.url + "/")
    page.get_by_role("link", name=re.compile("^Refactor `timeline.py`")).click()
    expect(page).to_have_url(re.compile(f"/s/{TOUR}$"))
    expect(page.locator("#timeline > li.ev:not(.is-hidden)").first).to_be_visible()
    expect(page.locator(".tool .state.error")).to_have_text("error")
    expect(page.locator(".tool .state.interrupted")).to_have_text("interrupted")
    # times are shown in the reader's zone, with the UTC value on hover
    first_time = page.locator("#m-tour-prompt-1 time")
    expect(first_time).to_have_attribute("data-local", "1")
    expect(first_time).to_have_attribute("title", "2025-10-21 18:59:50 UTC")
    assert page.problems == []


def test_thinking_is_collapsed_until_expanded(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{TOUR}")
    thinking = page.locator("#m-tour-read details.thinking")
    body = thinking.locator(".md")
    expect(body).to_be_hidden()
    thinking.locator("summary").click()
    expect(body).to_be_visible()
    expect(body).to_contain_text("First I need to see the current structure")
    assert page.problems == []


def test_hidden_events_are_revealed_by_the_toggle(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{TOUR}")
    launch = page.locator("#m-L1")
    expect(launch).to_be_hidden()
    toggle = page.locator("label.hidden-toggle")
    expect(toggle).to_contain_text("Show 2 hidden events", use_inner_text=True)
    toggle.click()
    expect(launch).to_be_visible()
    expect(launch).to_contain_text("launch event")
    toggle.click()
    expect(launch).to_be_hidden()


def test_permalink_scrolls_to_and_highlights_the_message(live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 500})
    page.goto(f"{live_server.url}/s/{TOUR}/m/tour-orphan")
    target = page.locator("#m-tour-orphan")
    expect(target).to_have_class(re.compile(r"\btarget\b"))
    expect(target).to_be_in_viewport()
    expect(page.locator("#m-tour-prompt-1")).not_to_be_in_viewport()
    assert page.problems == []


def test_copy_link_gives_a_permalink_that_opens_in_another_tab(live_server, watched_page, context):
    page = watched_page
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{live_server.url}/s/{TOUR}")
    button = page.locator("#m-tour-bash .copy-link")
    button.click()
    expect(button).to_have_text("copied")
    link = page.evaluate("navigator.clipboard.readText()")
    assert link == f"{live_server.url}/s/{TOUR}/m/tour-bash"
    other = context.new_page()
    other.set_viewport_size({"width": 1000, "height": 500})
    other.goto(link)
    expect(other.locator("#m-tour-bash")).to_be_in_viewport()
    expect(other.locator("#m-tour-bash")).to_have_class(re.compile(r"\btarget\b"))


def test_permalink_into_a_subagent_opens_the_nested_thread(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{CC}/m/00000000-0000-4000-8000-000000000104")
    target = page.locator("#m-00000000-0000-4000-8000-000000000104")
    expect(target).to_be_visible()
    expect(target).to_be_in_viewport()
    expect(page.locator("details.subthread")).to_have_attribute("open", "")


def test_subagent_thread_loads_when_opened(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{CC}")
    details = page.locator("details.subthread")
    expect(details.locator("li.ev")).to_have_count(0)
    details.locator("summary").click()
    expect(details.locator("li.ev")).to_have_count(4)
    expect(details.locator(".tool-name", has_text="Grep")).to_be_visible()
    assert page.problems == []


def test_raw_view_shows_the_source_record(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{TOUR}")
    page.locator("#m-tour-edit .raw-link").click()
    raw = page.locator("#m-tour-edit .raw-json")
    expect(raw).to_contain_text('"toolu_edit_1"')
    page.locator("#m-tour-edit .raw-close").click()
    expect(raw).to_have_count(0)


def test_show_all_expands_a_cut_message(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/legion-hostile-content")
    msg = page.locator("#m-h-big")
    link = msg.locator("a.show-all")
    expect(link).to_be_visible()
    before = len(msg.inner_text())
    link.click()
    expect(msg.locator("a.show-all")).to_have_count(0)
    assert len(msg.inner_text()) > before + 100_000


def test_hostile_session_runs_no_script(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/legion-hostile-content")
    expect(page.locator("#m-h-prompt")).to_contain_text("<script>alert('xss-script')</script>")
    page.locator("label.hidden-toggle").click()
    for ev in page.locator("li.ev details").all():
        ev.evaluate("d => d.open = true")
    page.locator("#m-h-answer").hover()
    assert page.evaluate("typeof window.alert") == "function"
    assert page.problems == []  # no dialog, no console error, no CSP violation
