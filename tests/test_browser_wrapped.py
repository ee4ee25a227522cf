"""Conversations saved inside wrappers, in headless Chromium: a claude-trace API log reads as the
conversation once (each call's answer with its model and time, the failed call an error), and a
fine-tuning dataset reads one section per line, the outline jumping to each. Fixtures:
test_data/formats/{anthropic-messages/claude-trace, openai-chat/finetune-dataset} (their README)."""

import re

import pytest
from playwright.sync_api import expect

from conftest import ROOT, quiet_copy

pytestmark = pytest.mark.browser

TRACE = ROOT / "test_data" / "formats" / "anthropic-messages" / "claude-trace"
DATASET = ROOT / "test_data" / "formats" / "openai-chat" / "finetune-dataset"


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "logs"
    quiet_copy(TRACE, root / "trace")
    quiet_copy(DATASET, root / "dataset")
    for extra in ("preference.jsonl", "evals.jsonl", "trl_preference.jsonl"):
        (root / "dataset" / extra).unlink()
    return root


def test_a_claude_trace_log_reads_as_one_conversation(serve, watched_page, root):
    srv = serve(root, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    page.locator("table.sessions td.title > a", has_text="Which Python version is installed?").click()
    expect(page).to_have_url(re.compile(r"/s/trace~log-2025-11-25-06-00-00$"))
    sections = page.locator(".ev.kind-section")
    expect(sections.locator(".notice")).to_have_text(["Conversation 1 · API call 1 · line 1",
                                                      "Conversation 2 · API call 2 · line 2"])
    expect(sections.nth(1)).to_contain_text("tool definitions (1)")
    # five calls sent the prompt: it is shown once, the answers after it in order
    expect(page.locator(".ev.role-user", has_text="Which Python version is installed?")).to_have_count(1)
    replies = page.locator(".ev.role-assistant")
    expect(replies).to_have_count(3)
    expect(replies.nth(1)).to_contain_text("API call 2 · 2.2 s")
    expect(replies.nth(1)).to_contain_text("claude-sonnet-4-5-20250929")
    card = replies.nth(1).locator(".tool")
    expect(card.locator(".tool-name")).to_have_text("Bash")
    expect(card.locator(".call-state .state")).to_have_text("completed")
    expect(card.locator(".tool-result")).to_contain_text("Python 3.12.3")
    # the streamed answer, put back together: its thinking folded, its text
    expect(replies.nth(2)).to_contain_text("Python 3.12.3 is installed.")
    expect(replies.nth(2).locator("details.thinking")).to_have_count(1)
    error = page.locator(".ev.role-error")
    expect(error).to_contain_text("API call 4 failed (529)")
    expect(error).to_contain_text("overloaded_error: Overloaded")
    expect(page.locator(".ev.role-user").first).to_contain_text("a probe call (max_tokens 1)")
    assert page.problems == []


def test_a_dataset_reads_one_section_per_line_and_the_outline_goes_to_each(serve, watched_page, root):
    srv = serve(root, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/s/dataset~finetune")
    sections = page.locator(".ev.kind-section .notice")
    expect(sections).to_have_text(["Conversation 1 · line 1", "Conversation 2 · line 2",
                                   "Conversation 3 · line 3"])
    # both lines call their tool `call_id`: each call has its own result
    cards = page.locator(".tool")
    expect(cards.locator(".call-state .state")).to_have_text(["completed", "completed"])
    expect(cards.nth(0).locator(".tool-result")).to_contain_text("18")
    expect(cards.nth(1).locator(".tool-result")).to_contain_text("-3")
    expect(page.get_by_text("orphan result")).to_have_count(0)
    page.locator("#outline-menu summary").click()
    turns = page.locator("#outline-menu a.turn")
    expect(turns).to_have_count(6)
    expect(turns.nth(4)).to_contain_text("Conversation 3 · line 3")
    turns.nth(4).click()
    expect(page.locator("#m-L10")).to_be_in_viewport()
    expect(page.locator("#m-L10")).to_have_class(re.compile(r"\btarget\b"))
    assert page.problems == []
