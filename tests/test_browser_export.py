"""Exported HTML in real Chromium with the network blocked, and the Export menu of the page."""

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from viewer.export import Export
from viewer.index import SessionIndex
from viewer.redact import Redactor

import planted
from conftest import SESSIONS

pytestmark = pytest.mark.browser

TOUR = SESSIONS / "legion-feature-tour" / "messages.jsonl"
CC = SESSIONS / "claude-project" / "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.jsonl"
HOSTILE = SESSIONS / "legion-hostile-content" / "messages.jsonl"


def exported(path, out, **kw):
    idx = SessionIndex(path).build()
    with open(out, "wb") as f:
        Export(idx, "html", **kw).write(f)
    return idx, out.as_uri()


@pytest.fixture
def offline(watched_page):
    """A page that may load only the file it is given: every other request is recorded and
    refused."""
    page = watched_page
    page.requests = []

    def refuse(route):
        page.requests.append(route.request.url)
        route.abort()

    page.context.route(re.compile(r"^(?!file:|data:).*"), refuse)
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:"))
            else page.requests.append(r.url))
    return page


@pytest.mark.parametrize("path", [TOUR, CC, HOSTILE], ids=["legion", "claude-code", "hostile"])
def test_an_export_opens_offline_with_every_message(tmp_path, offline, path):
    idx, url = exported(path, tmp_path / "export.html")
    offline.goto(url)
    shown = offline.eval_on_selector_all("li.ev", "els => els.map(e => e.id)")
    assert sorted(shown) == sorted(f"m-{eid}" for th in idx.threads.values() for eid in th.ids)
    # the inlined script ran (its hash is in the CSP): times are in the reader's zone
    expect(offline.locator("time[data-local]").first).to_be_attached()
    assert offline.requests == []
    assert offline.problems == []


def test_a_thinking_block_expands(tmp_path, offline):
    _, url = exported(TOUR, tmp_path / "tour.html")
    offline.goto(url)
    thinking = offline.locator("#m-tour-read details.thinking")
    body = thinking.locator(".md")
    expect(body).to_be_hidden()
    thinking.locator("summary").click()
    expect(body).to_be_visible()
    expect(body).to_contain_text("The user wants a refactor")
    assert offline.problems == [] and offline.requests == []


def test_an_export_reads_without_javascript(tmp_path, browser):
    _, url = exported(TOUR, tmp_path / "tour.html")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(url)
    expect(page.locator("#m-tour-read")).to_contain_text("I'll start by reading the file.")
    thinking = page.locator("#m-tour-read details.thinking")
    thinking.locator("summary").click()
    expect(thinking.locator(".md")).to_contain_text("The user wants a refactor")
    expect(page.locator("#m-tour-edit")).to_contain_text("COMPLETED", ignore_case=True)
    hidden = page.locator("li.ev.is-hidden").first
    expect(hidden).to_be_hidden()
    page.locator("label[for=show-hidden]").click()  # a checkbox and CSS, no script
    expect(hidden).to_be_visible()
    context.close()


def test_a_long_result_opens_from_its_fold(tmp_path, offline):
    path = tmp_path / "s.jsonl"
    log = "".join(f"step {i}: ok\n" for i in range(400))
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]}},
        {"type": "user", "uuid": "r1", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": log}]}}]))
    _, url = exported(path, tmp_path / "fold.html")
    offline.goto(url)
    fold = offline.locator("#m-a1 details.result-fold")
    expect(fold.locator("summary")).to_have_text(re.compile(r"Output · 400 lines, [\d.]+ KB"))
    expect(fold.get_by_text("step 399: ok")).to_be_hidden()
    fold.locator("summary").click()
    expect(fold.get_by_text("step 399: ok")).to_be_visible()
    assert offline.problems == [] and offline.requests == []


def test_a_link_into_a_sub_agent_opens_it(tmp_path, offline):
    idx, url = exported(CC, tmp_path / "cc.html")
    sub = next(n for n in idx.threads if n != "main")
    target = idx.threads[sub].ids[-1]
    offline.set_viewport_size({"width": 1000, "height": 600})
    offline.goto(f"{url}#m-{target}")
    expect(offline.locator(f"#m-{target}")).to_be_visible()
    expect(offline.locator(f"#m-{target}")).to_be_in_viewport()
    hidden = idx.threads["main"].ids[next(i for i, h in enumerate(idx.threads["main"].hidden) if h)]
    offline.goto(f"{url}#m-{hidden}")
    expect(offline.locator(f"#m-{hidden}")).to_be_visible()
    assert offline.problems == []


def test_hostile_content_does_nothing_in_an_export(tmp_path, offline):
    _, url = exported(HOSTILE, tmp_path / "hostile.html")
    offline.goto(url)
    offline.wait_for_timeout(300)
    for summary in offline.locator("summary").all():
        if summary.is_visible():
            summary.click()
    offline.wait_for_timeout(300)
    assert offline.problems == []  # no dialog, no CSP violation, no error
    assert offline.requests == []


def test_a_redacted_export_shows_markers_and_the_table(tmp_path, offline):
    path = planted.write_session(tmp_path / "planted")
    _, url = exported(path, tmp_path / "redacted.html", redactor=Redactor())
    offline.goto(url)
    body = offline.locator("body").inner_text()
    assert not [k for k, v in planted.secrets().items() if v in body]
    expect(offline.locator("#redactions tbody tr")).to_have_count(len(planted.secrets()))
    offline.locator("a.redacted-note").click()
    expect(offline.locator("#redactions")).to_be_in_viewport()


def test_the_export_menu_downloads_a_range(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    menu = page.locator("#export-menu")
    expect(page.locator("#m-tour-read .range-pick").first).to_be_hidden()
    menu.locator("summary").click()
    page.locator("#m-tour-read .range-pick[data-end=from]").click()
    page.locator("#m-tour-edit .range-pick[data-end=to]").click()
    expect(page.locator("#export-from")).to_have_value("tour-read")
    expect(page.locator("#export-to")).to_have_value("tour-edit")
    menu.locator("select[name=format]").select_option("md")
    with page.expect_download() as info:
        menu.locator("button[type=submit]").click()
    download = info.value
    assert download.suggested_filename == "legion-feature-tour.md"
    text = Path(download.path()).read_text()
    assert '<a id="m-tour-read"></a>' in text and '<a id="m-tour-edit"></a>' in text
    assert "m-tour-prompt-1" not in text and "**Tool: Edit**" in text
    with page.expect_download() as info:
        menu.locator("a", has_text="JSON").click()
    assert info.value.suggested_filename == "legion-feature-tour.json"
    assert page.problems == []
