"""SWE-agent trajectories in headless Chromium: a folder of runs lists each `.traj` with its cost; a
run reads as its steps (thought, the command as a card with what it printed, the step's time and
state), the system prompt folded, the submitted patch drawn as a diff, and the run's end with its exit
status. The real 1.x trajectory comes from SWE-agent's own test data (see
test_data/formats/swe-agent/README.md)."""

import re
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

FIXTURES = ROOT / "test_data" / "formats" / "swe-agent"
REAL = FIXTURES / "real-1.x-test-repo" / "SWE-agent__test-repo-i1.traj"
COST = FIXTURES / "1.x-cost-limit" / "calc__divide-1.traj"


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "trajectories"
    for src in (REAL, COST):
        run = root / src.stem
        run.mkdir(parents=True)
        shutil.copy(src, run)
    return root


def test_a_run_reads_as_steps_with_its_patch_and_its_end(serve, watched_page, runs):
    srv = serve(runs, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    row = page.locator("table.sessions tr", has_text="SyntaxError: invalid syntax")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("$0.020")
    row.locator("td.title > a").click()
    expect(page).to_have_url(re.compile(r"/s/SWE-agent__test-repo-i1~SWE-agent__test-repo-i1$"))
    cards = page.locator(".tool")
    expect(cards).to_have_count(5)
    expect(cards.locator(".tool-name")).to_have_text(["find_file", "open", "edit", "bash", "bash"])
    expect(cards.locator(".call-state .state")).to_have_text(["completed"] * 5)
    expect(cards.nth(0).locator(".tool-result")).to_contain_text("/SWE-agent__test-repo/tests/missing_colon.py")
    # the edit's search / replace as a diff; the submit's output, the patch, as a diff of its file
    expect(cards.nth(2).locator(".tool-input .diff-lines tr.add")).to_contain_text("-> float:")
    patch = cards.nth(4).locator(".tool-result .result-diff")
    expect(patch.locator(".diff-file")).to_have_text("tests/missing_colon.py")
    expect(patch.locator("tr.del")).to_have_text(re.compile(r"def division\(a: float, b: float\) -> float$"))
    expect(patch.locator("tr.add")).to_contain_text("-> float:")
    expect(page.get_by_text("step 1 · ran 0.28 s · in /SWE-agent__test-repo")).to_be_visible()
    # the system prompt and the instructions are folded; the issue is what the prompt shows
    system = page.locator("details.context", has_text="system prompt · 1,658 characters")
    expect(system).to_have_count(1)
    expect(system).not_to_have_attribute("open", re.compile(".*"))
    expect(page.get_by_text("SETTING: You are an autonomous programmer")).to_be_hidden()
    expect(page.locator("li.ev.role-user .md").first).to_contain_text("I'm running missing_colon.py as follows")
    end = page.locator("li.ev.kind-result")
    expect(end).to_contain_text("Run ended · exit status: submitted · 5 API calls · 7,141 tokens sent, 243 received")
    expect(end).to_contain_text("submitted the patch shown above (1 file: tests/missing_colon.py)")
    facts = page.locator("#session-facts")
    expect(facts).to_contain_text("swe-agent")
    expect(facts).to_contain_text("gpt-4o")
    expect(facts).to_contain_text("$0.020")
    # the history's copies of the steps stay behind the hidden toggle
    expect(page.locator("li.ev.is-hidden").first).to_be_hidden()
    assert page.problems == []


def test_a_run_stopped_by_its_cost_limit_shows_the_step_it_did_not_run_and_its_patch(serve, watched_page, runs):
    srv = serve(runs, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/s/calc__divide-1~calc__divide-1")
    expect(page.get_by_text("no command in this answer: SWE-agent asked the model again")).to_be_visible()
    editor = page.locator(".tool", has_text="str_replace_editor").nth(1)
    expect(editor.locator(".tool-input .diff-lines tr.add")).to_contain_text("return a / b if b else None")
    end = page.locator("li.ev.kind-result")
    expect(end).to_contain_text("submitted automatically: the cost limit was reached")
    expect(end.locator(".result-diff .diff-file")).to_have_text("calc.py")
    expect(end.locator(".result-diff tr.add")).to_contain_text("return a / b if b else None")
    assert page.problems == []
