"""A MARSYS run trace in headless Chromium: it holds agent steps and tool calls, not messages, and
the list, the session header and the outline count what it holds alike (no "messages 0"). Both
writers' fixtures (tests/test_marsys_trace.py says how they were made)."""

import re
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT, indexed_list

pytestmark = pytest.mark.browser

FIXTURES = ROOT / "test_data" / "formats" / "marsys"
NDJSON = FIXTURES / "trace-ndjson" / "01JV3K9Q4Z7W2M8N5P6R0S1T2U.ndjson"
TREE = FIXTURES / "trace-json" / "golden-trace-1.json"
TASK = "Compare the population of Lyon and Marseille and say which grew faster since 2010."


@pytest.mark.parametrize("trace", [NDJSON, TREE], ids=["ndjson", "json-tree"])
def test_a_trace_counts_its_agent_steps_in_the_list_header_and_outline(
        trace, serve, watched_page, tmp_path):
    root = tmp_path / "traces"
    root.mkdir()
    shutil.copy(trace, root / trace.name)
    srv = serve(root, WATCH=False)
    page = watched_page
    indexed_list(page, srv.url + "/")
    row = page.locator("table.sessions tbody tr")
    expect(row).to_have_count(1)
    # 4 agent steps (the failed one too), 2 tool calls, 2 errors (the failed step, the failed call)
    expect(row.locator('td[data-label="agent steps"]')).to_have_text("4 steps")
    expect(row.locator('td[data-label="messages"]')).to_have_count(0)
    expect(row.locator('td[data-label="tool calls"]')).to_have_text("2")
    row.locator("td.title > a").click()
    facts = page.locator("#session-facts")
    expect(facts.locator("dt")).not_to_contain_text(["messages"])
    step_fact = facts.locator("div", has=page.locator("dt", has_text="agent steps"))
    expect(step_fact.locator("dd")).to_have_text("4")
    expect(facts.locator("div", has=page.locator("dt", has_text="tool calls")).locator(
        "dd")).to_have_text("2")
    # the steps on the page are the four the header counts
    expect(page.locator("li.ev:not(.is-hidden) > .ev-head > .kind", has_text=re.compile(
        r"^step$"))).to_have_count(4)
    # the outline: the run as one part, with the same counts. A click's navigation does not wait
    # for the page's deferred scripts (a goto waits for "load"): the key is pressed once find.js
    # has started and shown the "?" button — before, "o" did nothing and the outline never came
    # (a loaded machine serves the scripts after the HTML the checks above read)
    expect(page.locator("#keys-button")).to_be_visible()
    page.keyboard.press("o")
    outline = page.locator("#outline-menu")
    expect(outline.locator(".outline-head")).to_have_text("No user prompt: the session is one part")
    turn = outline.locator("a.turn")
    expect(turn).to_have_count(1)
    expect(turn.locator(".turn-text")).to_have_text("The whole session (no user prompt)")
    expect(turn.locator(".turn-facts > span")).to_have_text(
        ["4 steps", "2 calls", "2 errors", re.compile(r"\d+s")])
    assert page.problems == []
