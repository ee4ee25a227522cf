"""Two sessions of one folder with the same name — an OpenAI Agents SDK run saved both as
`to_input_list.json` and as `to_input_list.jsonl` (openai-agents 0.24.0 fixtures) — are told apart
in headless Chromium: the list names each by its file, and each page's header and tab title do."""

import re
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT, indexed_list

pytestmark = pytest.mark.browser

FIX = ROOT / "test_data" / "formats" / "openai-chat" / "agents-sdk-0.24.0-handoff"
PROMPT = "My kettle (order A17) arrived broken. Can I get a refund?"


def test_a_json_and_a_jsonl_of_one_name_are_told_apart(serve, watched_page, tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    for name in ("to_input_list.json", "to_input_list.jsonl", "session_items.jsonl"):
        shutil.copy(FIX / name, root / name)
    srv = serve(root, WATCH=False)
    page = watched_page
    indexed_list(page, srv.url + "/")
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(3)
    labels = page.locator("table.sessions tbody tr td.title > div.label:first-of-type")
    # each row's name line: the two namesakes by their file, the third as before
    names = sorted(t.split(" · ")[0] for t in labels.all_inner_texts())
    assert names == ["session_items", "to_input_list.json", "to_input_list.jsonl"]
    for name in ("to_input_list.json", "to_input_list.jsonl"):
        page.goto(srv.url + "/")
        row = rows.filter(has=page.locator("div.label", has_text=re.compile(
            rf"^{re.escape(name)}( ·|$)")))
        expect(row).to_have_count(1)
        expect(row.locator("td.title > a")).to_have_text(PROMPT)
        row.locator("td.title > a").click()
        expect(page.locator("#session-title")).to_contain_text(PROMPT)
        expect(page.locator("a.crumb-session")).to_have_text(name)
        expect(page).to_have_title(f"{PROMPT} · {name} · session-viewer")
    # a session no other shares its name with keeps its plain title
    page.goto(srv.url + "/")
    rows.filter(has=page.locator("div.label", has_text="session_items")).locator(
        "td.title > a").click()
    expect(page).to_have_title(f"{PROMPT} · session-viewer")
    expect(page.locator("a.crumb-session")).to_have_text("session_items")
    assert page.problems == []
