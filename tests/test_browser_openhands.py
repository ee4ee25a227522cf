"""OpenHands trajectories in headless Chromium: an exported conversation reads as the model's calls
with their observations (a failed command and a refused one said so, an edit's diff drawn as a
diff), the delegated agent's events under its name, agent states and a condensation as notices; a
real trajectory from OpenHands' own tests reads as its chat (see test_data/formats/openhands/README.md)."""

import re
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

FIXTURES = ROOT / "test_data" / "formats" / "openhands"
REAL = FIXTURES / "real-basic-interactions" / "basic_interactions.json"
EXPORT = FIXTURES / "export-calc" / "trajectory-calc.json"


@pytest.fixture
def exports(tmp_path):
    root = tmp_path / "exports"
    root.mkdir()
    shutil.copy(REAL, root)
    shutil.copy(EXPORT, root)
    return root


def test_an_export_reads_as_calls_with_their_observations(serve, watched_page, exports):
    srv = serve(exports, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    page.locator("table.sessions td.title > a", has_text="Fix the failing test in calc.py").click()
    expect(page).to_have_url(re.compile(r"/s/trajectory-calc$"))
    expect(page.locator("#session-facts")).to_contain_text("openhands")
    cards = page.locator(".tool")
    expect(cards).to_have_count(8)
    expect(cards.locator(".tool-name")).to_have_text(
        ["str_replace_editor", "execute_bash", "str_replace_editor", "execute_bash", "delegate_to_browsing_agent",
         "fetch", "execute_bash", "execute_bash"])
    expect(cards.locator(".call-state .state")).to_have_text(
        ["completed", "error", "completed", "denied by user", "completed", "completed", "completed", "error"])
    failed = cards.nth(1)
    expect(failed.locator(".tool-input pre.cmd")).to_have_text("$ python -m pytest -q")
    expect(failed.locator(".tool-result")).to_have_class(re.compile(r"\bis-error\b"))
    expect(failed.locator(".tool-result")).to_contain_text("exit code 1")
    edit = cards.nth(2)
    expect(edit.locator(".tool-input .diff-lines tr.add")).to_contain_text("return a / b if b else None")
    expect(edit.locator(".tool-result .result-diff .diff-file")).to_have_text("/workspace/calc.py")
    expect(cards.nth(3).locator(".tool-result")).to_contain_text("Action has been rejected by the user!")
    # the browsing agent's call is under its name
    browse = page.locator("li.ev", has=page.locator(".tool-name", has_text="fetch"))
    expect(browse.locator(".ev-head")).to_contain_text("BrowsingAgent")
    expect(browse).to_have_class(re.compile(r"\bsub\b"))  # under the delegate call, indented
    expect(page.get_by_text("context condensed: events 5–12 forgotten and summarized")).to_be_visible()
    expect(page.get_by_text("agent state: awaiting_user_confirmation")).to_be_visible()
    expect(page.get_by_text("agent state: running")).to_be_hidden()
    expect(page.get_by_text("the agent finished")).to_be_visible()
    expect(page.locator("details.thinking")).to_contain_text("Thinking")
    expect(page.get_by_text("orphan result")).to_have_count(0)
    assert page.problems == []


def test_a_real_chat_reads_as_its_prompts_and_replies(serve, watched_page, exports):
    srv = serve(exports, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/s/basic_interactions")
    expect(page.locator("li.ev.role-user .md")).to_have_text(
        ["what's 1+1?", "No, I mean by Goldbach's conjecture!", "Finish please"])
    expect(page.locator("li.ev.role-assistant").first).to_contain_text("1 + 1 equals 2.")
    expect(page.locator("li.ev.role-assistant").last).to_contain_text("All done! What's next on the agenda?")
    expect(page.locator(".tool")).to_have_count(0)
    expect(page.locator("#session-facts")).to_contain_text("gpt-4o-2024-08-06")
    assert page.problems == []
