"""A Codex rollout Codex has compressed (`rollout-….jsonl.zst`) in headless Chromium: listed among
the sessions by its first prompt, its page read as a plain rollout's, a permalink landing on its card."""

import re

import pytest
import zstandard
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

CURRENT = next((ROOT / "test_data" / "formats" / "codex" / "sessions").glob("2025/10/29/rollout-*.jsonl"))
PROMPT = "The cart total ignores discounts. Fix it and run the tests."


def test_a_compressed_codex_rollout_is_listed_and_read_in_the_browser(serve, watched_page, tmp_path):
    day = tmp_path / "sessions" / "2025" / "10" / "29"
    day.mkdir(parents=True)
    (day / (CURRENT.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(CURRENT.read_bytes()))
    srv = serve(tmp_path / "sessions", WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    row = page.locator("table.sessions tbody tr", has_text=PROMPT)
    row.get_by_role("link", name=PROMPT).click()
    expect(page).to_have_url(re.compile(r"/s/2025~10~29~rollout-"))
    expect(page.locator("h1")).to_contain_text(PROMPT)
    failed = page.locator("#tc-call_pytest")
    expect(failed.locator(".state")).to_have_text("error")
    expect(failed).to_contain_text("1 failed, 1 passed")
    # a permalink to a card opens on it
    link = page.url + "/m/" + failed.locator("xpath=ancestor::li[contains(@class,'ev')][1]") \
        .get_attribute("id").removeprefix("m-")
    page.goto(link)
    card = page.locator("#tc-call_pytest")
    expect(card).to_be_in_viewport()
    assert page.problems == []
