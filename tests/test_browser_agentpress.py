"""agentpress (Suna) in headless Chromium: a non-streamed XML response, whose assistant row keeps no
call ids while its tool rows name random ones (kortix-ai/suna response_processor.py 1da6622b,
process_non_streaming_response), shows each result in its call's card, also when the results
arrive while the page is open. Fixture: test_data/formats/agentpress/rows-xml-nonstream."""

import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

NONSTREAM = ROOT / "test_data" / "formats" / "agentpress" / "rows-xml-nonstream" / "messages.jsonl"


def test_non_streamed_xml_results_fill_their_call_cards_live(serve, watched_page, tmp_path):
    lines = NONSTREAM.read_bytes().splitlines(keepends=True)
    root = tmp_path / "suna"
    root.mkdir()
    path = root / "messages.jsonl"
    path.write_bytes(b"".join(lines[:4]))  # the prompt, the run's start, the calls, one started
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/suna")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    cards = page.locator("#m-n-03-assistant .tool")
    expect(cards).to_have_count(3)
    expect(cards.locator(".call-state .state")).to_have_text(["pending"] * 3)
    with path.open("ab") as f:  # the tools ran: their rows come
        f.write(b"".join(lines[4:]))
    expect(cards.locator(".call-state .state")).to_have_text(["completed", "completed", "error"])
    expect(cards.nth(0).locator(".tool-result")).to_contain_text("LICENSE")
    expect(cards.nth(1).locator(".tool-result")).to_contain_text("A small demo project.")
    expect(cards.nth(2).locator(".tool-result")).to_contain_text("File 'LICENSE' does not exist")
    expect(page.get_by_text("orphan result")).to_have_count(0)
    # opened afresh: the same, and no result stands apart from its call
    page.reload()
    expect(cards.locator(".call-state .state")).to_have_text(["completed", "completed", "error"])
    expect(page.get_by_text("orphan result")).to_have_count(0)
    expect(page.locator("#m-n-05-tool-0")).to_be_hidden()  # folded into its call, as any result
    assert page.problems == []
