"""A Codex CLI rollout in headless Chromium, opened from the `~/.codex/sessions` tree as a user
points the viewer at it: what the person wrote, the model's thinking, each call with its output and
state, the patch as a diff, Codex's injected context folded away."""

import os
import re
import time

import pytest
from playwright.sync_api import expect

from conftest import ROOT, indexed_list, quiet_copy

pytestmark = pytest.mark.browser

SESSIONS = ROOT / "test_data" / "formats" / "codex" / "sessions"
CHILD_BEGAN = time.mktime((2026, 2, 10, 10, 0, 5, 0, 0, -1))  # its file's name, in local time
PROMPT = "The cart total ignores discounts. Fix it and run the tests."


def test_a_codex_session_reads_as_a_conversation_with_its_calls(serve, watched_page, tmp_path):
    root = quiet_copy(SESSIONS, tmp_path / "sessions")
    srv = serve(root, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    row = page.locator("table.sessions tbody tr", has_text=PROMPT)
    expect(row.locator("td.models, td", has_text="gpt-5-codex").first).to_be_visible()
    row.get_by_role("link", name=PROMPT).click()
    expect(page).to_have_url(re.compile(r"/s/2025~10~29~rollout-"))
    expect(page.locator("h1")).to_contain_text(PROMPT)

    # the person's words once (the event_msg copy stays behind the hidden toggle)
    expect(page.locator("#timeline > li.ev:not(.is-hidden)", has_text=PROMPT)).to_have_count(1)
    # Codex's injected context is folded chips, their text shown only when opened
    env = page.locator("details.context", has_text="environment")
    expect(env).to_have_count(1)
    expect(env.get_by_text("<sandbox_mode>workspace-write</sandbox_mode>")).to_be_hidden()
    env.locator("summary").click()
    expect(env.get_by_text(re.compile("workspace-write"))).to_be_visible()

    # thinking from the reasoning summary; the encrypted content is never shown
    thinking = page.locator("details.thinking").first
    thinking.locator("summary").click()
    expect(thinking).to_contain_text("I should read shop/cart.py and the tests first.")
    expect(page.locator("body")).not_to_contain_text("SECRET")

    # a call with its output, and a failed command with its exit code
    cat = page.locator("#tc-call_cat")
    expect(cat.locator(".state")).to_have_text("completed")
    expect(cat).to_contain_text("return sum(i.price for i in items)")
    expect(cat).not_to_contain_text("Wall time")
    failed = page.locator("#tc-call_pytest")
    expect(failed.locator(".state")).to_have_text("error")
    expect(failed).to_contain_text("exit code 1")
    expect(failed).to_contain_text("1 failed, 1 passed")

    # the patch as a diff per file; the call cut off by the aborted turn reads interrupted
    patch = page.locator("#tc-call_patch")
    expect(patch.locator(".diff-file code")).to_have_text(["shop/cart.py", "tests/test_discount.py"])
    expect(patch.locator("tr.del")).to_contain_text(["return sum(i.price for i in items)"])
    expect(page.locator("#tc-call_rerun .state")).to_have_text("interrupted")

    # usage and cost from the token counts
    expect(page.locator(".facts, header", has_text="20.7k").first).to_be_visible()
    assert page.problems == []


def test_a_spawned_thread_opens_under_its_call_and_its_session_links_back(serve, watched_page,
                                                                         tmp_path):
    day = tmp_path / "sessions" / "2026" / "02" / "10"
    day.mkdir(parents=True)
    for src in (SESSIONS / "2026" / "02" / "10").glob("rollout-*.jsonl"):
        (day / src.name).write_bytes(src.read_bytes())
        # written long ago, a minute after the threads began (the parent was still being written)
        os.utime(day / src.name, (CHILD_BEGAN + 60, CHILD_BEGAN + 60))
    srv = serve(tmp_path / "sessions", WATCH=False)
    page = watched_page
    indexed_list(page, srv.url + "/")  # (drawn once indexed: the thread under its parent)
    rows = page.locator("table.sessions tbody tr")
    expect(rows.nth(0)).to_contain_text("Who calls the cart module? Ask a helper to look.")
    expect(rows.nth(1).locator(".spawned-by a")).to_have_text(re.compile("019c4a10"))
    expect(rows).to_have_count(2)
    rows.nth(0).locator("td.title > a").click()
    card = page.locator("#tc-call_spawn")
    thread = card.locator("details.subthread")
    expect(thread.locator("summary")).to_contain_text("Sub-agent: Euclid · explorer")
    thread.locator("summary").click()  # the thread's conversation, in place under its call
    nested = card.locator("ol.timeline.nested")
    expect(nested.get_by_text("List the modules that import shop.cart.")).to_be_visible()
    expect(card.locator("#tc-call_x .state")).to_have_text("completed")
    expect(card.locator("#tc-call_x")).to_contain_text("shop/checkout.py")
    expect(card.locator("#tc-call_y .state")).to_have_text("never answered")
    card.locator("a.own-session").click()
    back = page.locator("#spawned-by")
    expect(back).to_contain_text("explorer")
    back.locator("a.spawning-call").click()  # the parent, at the turn holding the call
    expect(page.locator("h1")).to_contain_text("Who calls the cart module?")
    expect(page.locator("#tc-call_spawn")).to_be_in_viewport()
    assert page.problems == []


def test_multi_agent_v2_threads_open_under_the_calls_that_spawned_them(serve, watched_page, tmp_path):
    # a v2 spawn answers with the agent's path, no thread id: each thread is still under its call
    day = tmp_path / "sessions" / "2026" / "03" / "02"
    day.mkdir(parents=True)
    began = time.mktime((2026, 3, 2, 14, 0, 0, 0, 0, -1))
    for src in (SESSIONS / "2026" / "03" / "02").glob("rollout-*.jsonl"):
        (day / src.name).write_bytes(src.read_bytes())
        os.utime(day / src.name, (began + 60, began + 60))
    srv = serve(tmp_path / "sessions", WATCH=False)
    page = watched_page
    indexed_list(page, srv.url + "/")
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(3)
    rows.nth(0).locator("td.title > a").click()
    explorer = page.locator("#tc-call_v2_explorer details.subthread")
    expect(explorer.locator("summary")).to_contain_text("Sub-agent: Hubble · explorer")
    tester = page.locator("#tc-call_v2_tester details.subthread")
    expect(tester.locator("summary")).to_contain_text("000000000003")
    tester.locator("summary").click()
    expect(page.locator("#tc-call_v2_tester ol.timeline.nested").get_by_text(
        "Run tests/test_cart.py and report failures.")).to_be_visible()
    expect(page.locator("#tc-call_t1")).to_contain_text("4 passed")
    assert page.problems == []
