"""A Factory Droid session in headless Chromium, opened from `~/.factory/sessions` as a user points
the viewer at it: listed by its first prompt with the model its settings name, each call with its
result and state, the todo list as a checklist, and a line Droid appends appearing live."""

import json
import re

import pytest
from playwright.sync_api import expect

from conftest import ROOT, quiet_copy

pytestmark = pytest.mark.browser

SESSIONS = ROOT / "test_data" / "formats" / "factory-droid" / "sessions"
SID = "5b1f0c2e-7d43-4a9e-b0c1-2f6e8d9a4c37"
PROMPT = "After login the user lands on /home instead of the page they came from. Fix it."


def test_a_droid_session_reads_with_its_calls_and_grows_live(serve, watched_page, tmp_path):
    root = quiet_copy(SESSIONS, tmp_path / "sessions")
    srv = serve(root)
    page = watched_page
    page.goto(srv.url + "/")
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(2)  # the session and its sub-agent's; never a settings file
    expect(page.locator("table.sessions tbody tr", has_text="sub-agent task (code-reviewer): Review the redirect fix")).to_have_count(1)
    row = rows.filter(has_text=PROMPT)
    expect(row).to_contain_text("claude-sonnet-4-5-20250929")  # from its settings file
    row.get_by_role("link", name=PROMPT).click()
    expect(page).to_have_url(re.compile(r"/s/-home-dev-shop~5b1f0c2e"))
    expect(page.locator("h1")).to_contain_text(PROMPT)

    run = page.locator("#tc-toolu_exec_2")
    expect(run.locator(".state")).to_have_text("error")
    expect(run).to_contain_text("1 failed")
    task = page.locator("#tc-toolu_task_4")
    expect(task.locator(".state")).to_have_text("completed")
    expect(task).to_contain_text("must be a relative path")
    expect(page.locator("#timeline > li.ev", has_text="Keep the next parameter through login")).to_have_count(1)
    expect(page.locator("details.context", has_text="system reminder")).to_have_count(1)

    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    path = root / "-home-dev-shop" / f"{SID}.jsonl"
    with open(path, "a") as f:
        f.write(json.dumps({"type": "message", "id": "live-1", "timestamp": "2026-09-29T20:40:00.000Z",
                            "message": {"role": "assistant", "content": [
                                {"type": "text", "text": "Running the whole suite."},
                                {"type": "tool_use", "id": "toolu_live", "name": "Execute",
                                 "input": {"command": "pytest -q"}}]}}) + "\n")
    card = page.locator("#tc-toolu_live")
    expect(card.locator(".state")).to_have_text("pending")
    with open(path, "a") as f:
        f.write(json.dumps({"type": "message", "id": "live-2", "timestamp": "2026-09-29T20:40:05.000Z",
                            "message": {"role": "user", "content": [
                                {"type": "tool_result", "tool_use_id": "toolu_live", "content": "42 passed"}]}})
                + "\n")
    expect(card.locator(".state")).to_have_text("completed")
    expect(card).to_contain_text("42 passed")
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []
