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
