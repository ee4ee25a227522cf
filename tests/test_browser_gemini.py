"""Gemini CLI sessions in headless Chromium: what a user sees of a finished recording (messages,
thoughts, every call with its result and state, the image a tool read, notices, model and cost),
and a JSONL recording followed live while the CLI writes it (a message re-appended as its call
runs and ends updates its card, never adds one). Fixtures: test_data/formats/gemini-cli."""

import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT, quiet_copy

pytestmark = pytest.mark.browser

FIXTURES = ROOT / "test_data" / "formats" / "gemini-cli"
JSONL = FIXTURES / "jsonl-recording" / "chats" / "session-2026-10-05T21-32-0f0e0d0c.jsonl"
REPLY = "m-0c7e2f4a-6d0b-4b6e-8a3c-2d5f1e9b7c02"


def test_a_finished_recording_reads_whole(serve, watched_page, tmp_path):
    root = quiet_copy(FIXTURES / "legacy-json", tmp_path / "chats")
    page = watched_page
    timeline = page.locator("#timeline")
    page.goto(f"{serve(root).url}/s/session-2025-10-18T14-57-f86f5318")
    expect(page.locator("#session-title")).to_contain_text(
        "Fix the off-by-one in @src/pager.py and show me the logo")
    facts = page.locator("#session-facts")
    expect(facts.get_by_text("gemini-2.5-pro, gemini-2.5-flash")).to_be_visible()
    expect(facts.get_by_text("$0.010")).to_be_visible()
    # the prompt as typed (the @-file contents the model got only in its raw view)
    prompt = page.locator("#m-91ff4a35-0f7b-492d-8a04-ee206be11ec6")
    expect(prompt).to_contain_text("show me the logo")
    expect(prompt).not_to_contain_text("def page")
    reply = page.locator(f"#{REPLY}")
    expect(reply.locator("details.thinking summary")).to_contain_text("Thinking")
    reply.locator("details.thinking summary").click()
    expect(reply.locator("details.thinking")).to_contain_text("Spotting the bug")
    states = page.locator(".tool .call-state .state")
    expect(states).to_have_text(["completed", "completed", "error", "cancelled"])
    expect(reply.locator(".diff .add")).to_contain_text("(n + 1) * 10]")
    image = reply.locator(".tool-result img")
    expect(image).to_be_visible()
    assert image.evaluate("i => i.naturalWidth") == 24  # decoded, drawn inline
    expect(page.locator(".tool .tool-result").nth(2)).to_contain_text("Command exited with code 1")
    # the CLI's info / warning / error records as notices, an unknown record as a quiet card
    expect(timeline.get_by_text("Loaded cached credentials.")).to_be_visible()
    expect(timeline.get_by_text("Tool call cancelled by the user.")).to_be_visible()
    expect(timeline.get_by_text("429 Too Many Requests")).to_be_visible()
    expect(page.locator("#m-f7a8b9c0-3b45-4d6e-8f7a-8b9c0d1e2f08 .kind")).to_have_text("unknown")
    assert page.problems == []


def test_a_recording_followed_live(serve, watched_page, tmp_path):
    lines = JSONL.read_bytes().splitlines(keepends=True)
    root = tmp_path / "gemini"
    (root / "chats").mkdir(parents=True)
    path = root / "chats" / JSONL.name
    path.write_bytes(b"".join(lines[:6]))  # the prompt, the reply, its call executing
    page = watched_page
    timeline = page.locator("#timeline")
    page.goto(f"{serve(root).url}/s/chats~{JSONL.stem}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    expect(page.locator("#session-title")).to_contain_text("List the tables in app.db")
    state = page.locator("#tc-run_shell_command-1791322369120-aa11bb22cc33d-state .state")
    expect(state).to_have_text("executing")
    with path.open("ab") as f:  # the same message again: the call succeeded, the tokens came
        f.write(b"".join(lines[6:9]))
    expect(state).to_have_text("completed")
    expect(timeline.get_by_text("orders  users  sessions")).to_be_visible()
    expect(page.locator("li.ev", has_text="I'll ask sqlite.")).to_have_count(1)  # one card, updated
    with path.open("ab") as f:  # the rest: a rewind, a call awaiting approval, one running
        f.write(b"".join(lines[9:]))
    expect(timeline.get_by_text("how many rows does users have?")).to_be_visible()
    expect(timeline.get_by_text("awaiting permission").first).to_be_visible()
    expect(timeline.get_by_text("dropped by a /rewind").first).to_be_visible()
    assert page.problems == []
    shutil.rmtree(root)
