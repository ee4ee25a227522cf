"""A GitHub Copilot CLI session in headless Chromium, opened from `~/.copilot/session-state` as a
user points the viewer at it: the folder listed once under its name and titled as the CLI's
/resume names it (its workspace.yaml's summary), each call with its result and state, the sub-agent under its task call, and a line the CLI
appends appearing live."""

import json
import re

import pytest
from playwright.sync_api import expect

from conftest import ROOT, quiet_copy

pytestmark = pytest.mark.browser

STATE = ROOT / "test_data" / "formats" / "copilot-cli"
SID = "7f3c2a10-5b8e-4c1d-9a2f-0e6d4b8c1a55"
TITLE = "Fix cart discount"  # the folder's workspace.yaml


def append(path, rec):
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def test_a_copilot_cli_session_reads_with_its_calls_and_grows_live(serve, watched_page, tmp_path):
    root = quiet_copy(STATE, tmp_path / "copilot")
    srv = serve(root)
    page = watched_page
    page.goto(srv.url + "/")
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(3)  # each folder once (its own files never), the single-file session
    row = rows.filter(has_text=TITLE)
    expect(row.locator(".label").first).to_contain_text(f"session-state/{SID}")
    expect(row).not_to_contain_text("events")
    row.get_by_role("link", name=TITLE).click()
    expect(page).to_have_url(re.compile(rf"/s/session-state~{SID}"))
    expect(page.locator("h1")).to_contain_text(TITLE)

    # a call with its result (the full diff the CLI shows), a failed test run with its exit code
    edit = page.locator("#tc-toolu_edit_2")
    expect(edit.locator(".state")).to_have_text("completed")
    expect(edit).to_contain_text("- discount")
    run = page.locator("#tc-toolu_bash_3")
    expect(run.locator(".state")).to_have_text("error")
    expect(run).to_contain_text("exit code 1")
    expect(run).to_contain_text("1 failed, 1 passed")
    # refused by the person, who said why; the call the abort cut off
    expect(page.locator("#tc-toolu_rm_6 .state")).to_have_text("denied by user")
    expect(page.locator("#timeline > li.ev", has_text="keep the fixtures")).to_have_count(1)
    expect(page.locator("#tc-toolu_bash_7 .state")).to_have_text("interrupted")
    # the sub-agent's own call sits under the task call, indented
    expect(page.locator("#timeline > li.ev.sub", has_text="sub-agent Explore started")).to_have_count(1)
    expect(page.locator("#tc-toolu_grep_5")).to_contain_text("checkout.py:12")
    # the session-end card with the CLI's totals; a type no version writes is a quiet card
    expect(page.locator("#timeline > li.ev", has_text="48,210 in, 495 out")).to_have_count(1)
    expect(page.locator("#timeline > li.ev", has_text="whatever")).to_have_count(1)

    # the CLI appends: a new call appears pending, then completes, without a reload
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    events = root / "session-state" / SID / "events.jsonl"
    append(events, {"type": "user.message", "data": {"content": "Now list the tests"},
                    "id": "live-1", "timestamp": "2026-03-02T11:00:00.000Z", "parentId": None})
    append(events, {"type": "assistant.message", "data": {
        "messageId": "m-live", "content": "Listing them.",
        "toolRequests": [{"toolCallId": "toolu_live", "name": "bash", "arguments": {"command": "ls tests"}}]},
        "id": "live-2", "timestamp": "2026-03-02T11:00:01.000Z", "parentId": "live-1"})
    card = page.locator("#tc-toolu_live")
    expect(card.locator(".state")).to_have_text("pending")
    expect(card).to_contain_text("ls tests")
    append(events, {"type": "tool.execution_complete", "data": {
        "toolCallId": "toolu_live", "success": True, "result": {"content": "test_cart.py\ntest_checkout.py"}},
        "id": "live-3", "timestamp": "2026-03-02T11:00:02.000Z", "parentId": "live-2"})
    expect(card.locator(".state")).to_have_text("completed")
    expect(card).to_contain_text("test_checkout.py")
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


def test_sub_agents_named_only_by_agent_id_read_indented_under_their_task_calls(serve, watched_page,
                                                                               tmp_path):
    root = quiet_copy(STATE, tmp_path / "copilot")
    srv = serve(root, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    page.get_by_role("link", name="Find who calls cart.total and run its tests, in parallel.").click()
    # both helpers' work, interleaved as they ran, is indented as a sub-agent's; the main agent's is not
    sub = page.locator("#timeline > li.ev.sub")
    expect(sub.filter(has_text="sub-agent Explore started")).to_have_count(1)
    expect(sub.filter(has_text="sub-agent Task started")).to_have_count(1)
    expect(sub.filter(has=page.locator("#tc-toolu_01Grep"))).to_have_count(1)
    expect(sub.filter(has=page.locator("#tc-toolu_01Pytest"))).to_have_count(1)
    expect(page.locator("#tc-toolu_01Pytest")).to_contain_text("4 passed")
    expect(page.locator("#timeline > li.ev:not(.sub)", has_text="Starting two helpers.")).to_have_count(1)
    assert page.problems == []
