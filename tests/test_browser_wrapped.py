"""Conversations saved inside wrappers, in headless Chromium: a claude-trace API log reads as the
conversation once (each call's answer with its model and time, the failed call an error), and a
fine-tuning dataset reads one section per line, the outline jumping to each. Fixtures:
test_data/formats/{anthropic-messages/claude-trace, openai-chat/finetune-dataset} (their README)."""

import json
import re
import time

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


def test_a_claude_trace_log_followed_live_shows_each_new_call_without_reload(serve, watched_page, tmp_path):
    # claude-trace writes a line per API call while the agent works: the page open on the log shows
    # each call's new turn as it is written (read on from the last line, not the whole log again),
    # and the Bash call the agent made turns completed when the next call sends its result
    lines = (TRACE / "log-2025-11-25-06-00-00.jsonl").read_text().splitlines(keepends=True)
    root = tmp_path / "live"
    (root / "trace").mkdir(parents=True)
    log = root / "trace" / "log-2025-11-25-06-00-00.jsonl"
    log.write_text("".join(lines[:2]))
    srv = serve(root)
    page = watched_page
    page.goto(srv.url + "/s/trace~log-2025-11-25-06-00-00")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    card = page.locator("#tc-toolu_01A")
    expect(card.locator(".call-state .state")).to_have_text("pending")
    expect(page.locator(".ev.role-assistant")).to_have_count(2)
    # the next call: half its line written, then the rest (the half waits, nothing is shown cut)
    with open(log, "a") as f:
        f.write(lines[2][:len(lines[2]) // 2])
        f.flush()
        time.sleep(1.0)
        f.write(lines[2][len(lines[2]) // 2:])
    expect(card.locator(".call-state .state")).to_have_text("completed")
    expect(card.locator(".tool-result")).to_contain_text("Python 3.12.3")
    replies = page.locator(".ev.role-assistant")
    expect(replies).to_have_count(3)
    expect(replies.nth(2)).to_contain_text("Python 3.12.3 is installed.")
    expect(replies.nth(2)).to_contain_text("API call 3 · 2.5 s")
    expect(page.locator(".ev.kind-unparsed")).to_have_count(0)
    # the overloaded call and the one logged without an answer, in one write
    with open(log, "a") as f:
        f.write("".join(lines[3:]))
    expect(page.locator(".ev.role-error")).to_contain_text("API call 4 failed (529)")
    expect(page.locator(".ev").last).to_contain_text("API call 5: ORPHANED_REQUEST")
    expect(page.locator(".ev.role-user", has_text="Which Python version is installed?")).to_have_count(1)
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


def agent_calls(n):
    """A claude-trace log of an agent at work: each call sends the history again with the last
    call's Bash result (40 lines) and is answered with another Bash call."""
    history = [{"role": "user", "content": "Tidy the repository"}]
    out = []
    for i in range(n):
        answer = [{"type": "text", "text": f"Step {i}: the next file."},
                  {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"cat f{i}.py"}}]
        out.append({"request": {"timestamp": 1764050400 + 3 * i, "method": "POST",
                                "url": "https://api.anthropic.com/v1/messages", "headers": {},
                                "body": {"model": "claude-sonnet-4-5", "max_tokens": 8000,
                                         "messages": list(history)}},
                    "response": {"timestamp": 1764050402 + 3 * i, "status_code": 200, "headers": {},
                                 "body": {"id": f"msg_{i}", "type": "message", "role": "assistant",
                                          "model": "claude-sonnet-4-5", "content": answer,
                                          "stop_reason": "tool_use"}},
                    "logged_at": "2025-11-25T06:00:00Z"})
        history += [{"role": "assistant", "content": answer},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                                  "content": "\n".join(f"line {k} of f{i}.py" for k in range(40))}]}]
    return [json.dumps(x) + "\n" for x in out]


def test_following_a_live_api_log_keeps_the_latest_call_in_view(serve, watched_page, tmp_path):
    # each new call answers the Bash call of the one before: that card grows by its result as the
    # new turn comes in, and a reader following the log stays at its end (the card growing above
    # read as the reader scrolling away: the next calls waited behind "N new messages")
    lines = agent_calls(8)
    root = tmp_path / "live"
    (root / "agent").mkdir(parents=True)
    log = root / "agent" / "log.jsonl"
    log.write_text("".join(lines[:2]))
    srv = serve(root)
    page = watched_page
    page.set_viewport_size({"width": 900, "height": 500})
    page.goto(srv.url + "/s/agent~log")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    page.locator("#follow").check()
    for i, line in enumerate(lines[2:], 2):
        with open(log, "a") as f:
            f.write(line)
        # (a log of API calls names its events by where their line begins: no `m-msg_…` ids)
        expect(page.locator(".ev.role-assistant", has_text=f"Step {i}: the next file.")).to_be_in_viewport()
        expect(page.locator(f"#tc-toolu_{i - 1} .call-state .state")).to_have_text("completed")
        expect(page.locator("#new-pill")).to_be_hidden()
    expect(page.locator("#tc-toolu_7 .call-state .state")).to_have_text("pending")
    expect(page.locator(".ev.role-assistant")).to_have_count(8)
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []
