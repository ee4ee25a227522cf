"""A background Claude Code sub-agent, live in real Chromium: its Agent call reads "running in
background" from the launch note on, "finished · no notification" in place when the sub-agent's own
transcript ends its turn, and "completed" when the task notification is written, without a reload;
the sub-agent stays nested under the call."""

import json
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

PROJECT = ROOT / "test_data" / "formats" / "claude-code" / "2.1.331" / "-home-user-demo"
TOUR = "253a41fe-30bb-43c5-b249-7990744c4070"
AGENT_CALL = "tc-toolu_0136e4777c000000000019"


def test_a_background_agent_runs_until_its_notification_then_completes(tmp_path, serve, watched_page):
    root = tmp_path / "-home-user-demo"
    root.mkdir()
    src = PROJECT / f"{TOUR}.jsonl"
    shutil.copytree(PROJECT / TOUR, root / TOUR)  # its sub-agent, still at work
    agent = root / TOUR / "subagents" / "agent-ae4ec7844d73bdd8f.jsonl"
    lines = agent.read_text(encoding="utf-8").splitlines(keepends=True)
    end = next(i for i, r in enumerate(lines) if '"end_turn"' in r)
    agent.write_text("".join(lines[:end]), encoding="utf-8")
    meta = agent.with_suffix(".meta.json")
    meta.write_text(json.dumps({k: v for k, v in json.loads(meta.read_text(encoding="utf-8")).items()
                                if k != "finished"}), encoding="utf-8")
    rows = src.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, r in enumerate(rows) if "<task-notification>" in r)
    path = root / f"{TOUR}.jsonl"
    path.write_text("".join(rows[:cut]), encoding="utf-8")
    srv = serve(tmp_path)
    page = watched_page
    page.goto(f"{srv.url}/s/-home-user-demo~{TOUR}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    state = page.locator(f"#{AGENT_CALL}-state .state")
    expect(state).to_have_text("running in background")
    expect(state).to_have_class("state executing")
    result = page.locator(f"#{AGENT_CALL}-result")
    expect(result).to_contain_text("started in the background")
    expect(result).not_to_have_class("tool-result ended")
    expect(page.locator(f"#{AGENT_CALL}-thread summary")).to_contain_text("Check the working directory")
    with agent.open("a", encoding="utf-8") as f:  # the agent answers; no notification yet
        f.writelines(lines[end:])
    expect(state).to_have_text("finished · no notification")
    expect(state).to_have_class("state completed")
    expect(result).not_to_have_class("tool-result ended")
    with path.open("a", encoding="utf-8") as f:
        f.writelines(rows[cut:])
    expect(state).to_have_text("completed")
    assert page.evaluate("window.__noReload") is True  # the same page, updated in place
    # the sub-agent is nested under its call before and after
    expect(page.locator(f"#{AGENT_CALL}-thread summary")).to_contain_text(
        "Sub-agent: general-purpose · Check the working directory")
