"""A two-agent AgentScope session (JSONSession written by the real library) in headless Chromium:
each agent speaks in its own lane, under its own name."""

import re

import pytest
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

GOLDEN = ROOT / "test_data" / "formats" / "agentscope" / "golden-py1.0.21"
PLANNER = "#m-msg0000000000000000007"  # Planner hands the work over (its own memory's copy)
RESEARCHER = "#m-msg0000000000000000013"  # Researcher answers


def lane(page, selector: str) -> str:
    classes = page.locator(selector).get_attribute("class") or ""
    found = re.findall(r"\blane-(\d+)\b", classes)
    assert len(found) == 1, classes
    return found[0]


def test_agents_of_a_session_have_their_own_lanes(serve, watched_page):
    srv = serve(GOLDEN, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    page.get_by_role("link", name=re.compile("^Plan a two-day trip")).and_(
        page.locator('[href$="trip-session"]')).click()
    expect(page).to_have_url(re.compile(r"/s/trip-session$"))
    planner, researcher = page.locator(PLANNER), page.locator(RESEARCHER)
    expect(planner).to_have_class(re.compile(r"\blane-\d+\b"))
    expect(researcher).to_have_class(re.compile(r"\blane-\d+\b"))
    expect(planner.locator(".ev-head .who")).to_have_text("Planner")
    expect(researcher.locator(".ev-head .who")).to_have_text("Researcher")
    assert lane(page, PLANNER) != lane(page, RESEARCHER)
    # the failed weather lookup and the train search carry their states
    expect(page.locator("#tc-call_weather_1 .state")).to_have_text("error")
    expect(page.locator("#tc-call_trains_1 .state")).to_have_text("completed")
    # the copies the broadcast left in the other agent's memory stay behind the toggle
    expect(page.locator("#timeline > li.ev.is-hidden")).to_have_count(4)
    expect(page.locator("#timeline > li.ev.is-hidden").first).to_be_hidden()
    assert page.problems == []


_PROMPT = """
    You are Planner. Split the user's request into tasks for Researcher.

    To plan, you MUST follow these rules:
    1.  **ALWAYS** ask Researcher for the weather first:
        - use `get_weather` for each day
    2.  Write the final plan as a `table`.
    """


def _zoneless_session(tmp_path):
    """The golden two-agent session (AgentScope writes its local times with no zone), the
    planner's system prompt an indented triple-quoted Markdown string as agents' code writes it."""
    import json

    doc = json.loads((GOLDEN / "trip-session.json").read_text())
    doc["planner"]["_sys_prompt"] = _PROMPT
    root = tmp_path / "agentscope"
    root.mkdir()
    (root / "trip-session.json").write_text(json.dumps(doc))
    return root


def test_zoneless_times_are_shown_as_written_and_the_header_says_so_once(serve, browser, tmp_path):
    # the reader is in Tokyo: a time with no zone must not be moved to theirs, nor called UTC,
    # and what it means is said in the header, readable on a phone without hovering
    srv = serve(_zoneless_session(tmp_path), WATCH=False)
    ctx = browser.new_context(timezone_id="Asia/Tokyo", viewport={"width": 420, "height": 900})
    page = ctx.new_page()
    page.goto(srv.url + "/s/trip-session")
    said = page.locator("#session-facts .zoneless")
    expect(said).to_have_text(re.compile(r"times\s*as written in the file, time zone unknown"))
    box = said.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 420
    expect(page.get_by_text("time zone unknown")).to_have_count(1)
    # written "2026-02-03 09:00:05.185": as written, not 18:00:05 JST, not "… UTC ?"
    expect(page.locator(PLANNER).locator(".ev-head time")).to_have_text("2026-02-03 09:00:05")
    expect(page.locator("#session-facts time")).to_have_text("2026-02-03 09:00:00")
    after = "e => getComputedStyle(e, '::after').content"
    assert page.locator(PLANNER).locator(".ev-head time").evaluate(after) == "none"  # said once, above
    ctx.close()


def test_a_lone_zoneless_time_says_so_on_its_card(serve, watched_page):
    # the legion tour's last prompt is the only time it wrote with no zone: not all times are as
    # written (the header does not say so), its card says it, readable without hovering
    from conftest import SESSIONS

    srv = serve(SESSIONS, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/s/legion-feature-tour")
    expect(page.locator("#session-facts")).to_be_visible()
    expect(page.locator("#session-facts")).not_to_contain_text("time zone unknown")
    when = page.locator("#m-tour-prompt-3 .ev-head time")
    expect(when).to_have_text("2025-10-21 19:01:45")
    assert when.evaluate("e => getComputedStyle(e, '::after').content") == '" · no zone"'
    zoned = page.locator("#m-tour-prompt-1 .ev-head time")
    assert zoned.evaluate("e => getComputedStyle(e, '::after').content") == "none"
    assert page.problems == []


def test_a_markdown_system_prompt_reads_as_markdown_and_its_raw_view_as_written(serve, watched_page, tmp_path):
    srv = serve(_zoneless_session(tmp_path), WATCH=False)
    page = watched_page
    page.goto(srv.url + "/s/trip-session")
    card = page.locator("li.ev").filter(has=page.locator(".kind", has_text="system prompt")).filter(
        has=page.locator(".who", has_text="Planner"))
    body = card.locator(".ev-body")
    expect(body.locator("ol > li")).to_have_count(2)
    expect(body.locator("strong")).to_have_text("ALWAYS")
    expect(body.locator("li code").first).to_have_text("get_weather")
    expect(body.locator("pre")).to_have_count(0)  # not one monospace block
    # the raw view keeps the prompt as the file holds it
    card.locator(".raw-link").click()
    expect(card.locator(".raw-slot")).to_contain_text("1.  **ALWAYS** ask Researcher")
    assert page.problems == []
