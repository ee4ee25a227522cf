"""OpenHands V1 conversations (the software-agent-sdk's store: base_state.json and one file per
event) in headless Chromium: the folder is one session in the list under its first prompt, its calls
show their observations and states (a failed run, a rejected command, a call that did not
validate), the status and the totals from base_state.json; followed live, a new event file shows its
result in place and the status the conversation ends with appears. Fixture:
test_data/formats/openhands_v1 (make_openhands_v1_fixtures.py)."""

import json
import re
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT, indexed_list, quiet_copy

pytestmark = pytest.mark.browser

FIXTURES = ROOT / "test_data" / "formats" / "openhands_v1"
CONV = "6b1c0e3f9a2d4c58b7e1f0a4d3c2b1a0"
KEY = f"cli-calc~{CONV}~base_state"


def test_a_conversation_folder_reads_as_calls_with_their_observations(serve, watched_page, tmp_path):
    root = quiet_copy(FIXTURES, tmp_path / "conversations")
    page = watched_page
    indexed_list(page, serve(root, WATCH=False).url + "/")
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(1)  # the folder, not its twenty event files
    expect(rows.locator("span.format")).to_have_text("openhands_v1")
    rows.locator("td.title > a", has_text="Fix the failing test in calc.py").click()
    expect(page).to_have_url(re.compile(rf"/s/{KEY}$"))
    cards = page.locator(".tool")
    expect(cards.locator(".tool-name")).to_have_text(
        ["file_editor", "terminal", "file_editor", "terminal", "terminal", "terminal"])
    expect(cards.locator(".call-state .state")).to_have_text(
        ["completed", "error", "completed", "denied by user", "error", "completed"])
    failed = page.locator("#tc-toolu_02Test")
    expect(failed.locator(".tool-input pre.cmd")).to_have_text("$ python -m pytest -q")
    expect(failed.locator(".tool-result")).to_have_class(re.compile(r"\bis-error\b"))
    expect(failed.locator(".tool-result")).to_contain_text("exit code 1")
    expect(failed.locator(".tool-result")).to_contain_text("1 failed, 1 passed")
    expect(page.locator("#tc-toolu_05Rm .tool-result")).to_contain_text("Don't delete anything, just run the tests.")
    expect(page.locator("#tc-toolu_06Bad .tool-result")).to_contain_text("Field required")
    expect(page.locator("#tc-toolu_04Edit .tool-input tr.add")).to_contain_text("return a / b if b else None")
    expect(page.get_by_text("context condensed: 4 events forgotten and summarized")).to_be_visible()
    expect(page.get_by_text("conversation status: finished")).to_be_visible()
    expect(page.get_by_text("usage · condenser: 1 call, 9,100 tokens in, 310 out · $0.0320")).to_be_visible()
    expect(page.locator("#session-facts")).to_contain_text("claude-sonnet-4-5")
    expect(page.get_by_text("orphan result")).to_have_count(0)
    assert page.problems == []


def test_a_conversation_followed_live_as_event_files_are_written(serve, watched_page, tmp_path):
    root = tmp_path / "conversations"
    shutil.copytree(FIXTURES, root)
    conv = root / "cli-calc" / CONV
    events = conv / "events"
    names = sorted(p.name for p in events.iterdir() if p.name.startswith("event-"))
    held = {n: (events / n).read_text() for n in names[16:]}  # mid-run: the last test run just started
    for n in held:
        (events / n).unlink()
    state_file = conv / "base_state.json"
    finished = state_file.read_text()
    state = json.loads(finished)
    state["execution_status"] = "running"
    state_file.write_text(json.dumps(state))
    page = watched_page
    page.goto(f"{serve(root).url}/s/{KEY}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
    run = page.locator("#tc-toolu_07Test")
    expect(run.locator(".state").first).to_have_text(re.compile("pending|executing"))
    expect(page.get_by_text("conversation status: running")).to_be_hidden()  # (said only when over)
    expect(page.get_by_text("conversation status: finished")).to_have_count(0)
    first = names[16]
    (events / first).write_text(held.pop(first))  # the command's observation: a new event file
    expect(run.locator(".state").first).to_have_text("completed", timeout=30_000)
    expect(run.locator(".tool-result")).to_contain_text("2 passed in 0.02s")
    for n, text in held.items():  # the condensation and the finish, then the status
        (events / n).write_text(text)
    state_file.write_text(finished)
    expect(page.get_by_text("conversation status: finished")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("the agent finished")).to_be_visible()
    expect(page.locator("#tc-toolu_07Test")).to_have_count(1)  # one card, updated
    assert page.problems == []
