"""Times written with no zone are a trait of the session, not of its format.

A file may write every time with no zone (AgentScope always does; a Claude Code or legion file
converted by a tool that drops the `Z`): each time is shown as written, and the header, the list's
row and the Markdown export say once that the zone is unknown, no card repeating it. A lone
zoneless time among zoned ones (the legion tour's last prompt) keeps its card's mark.
"""

import re
import shutil

import pytest
from playwright.sync_api import expect

from viewer.export import Export
from viewer.index import SessionIndex
from viewer.web import create_app

from conftest import SESSIONS

CLAUDE = SESSIONS / "claude-project" / "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.jsonl"


@pytest.fixture
def unzoned(tmp_path):
    """The Claude Code sample session with the `Z` taken off every time it wrote."""
    root = tmp_path / "sessions" / "proj"
    root.mkdir(parents=True)
    text = re.sub(r'("timestamp": ?"[^"]*?)Z"', r'\1"', CLAUDE.read_text())
    assert '"timestamp": "2026-04-18T13:10:51.000"' in text
    (root / "local.jsonl").write_text(text)
    return root / "local.jsonl"


def test_a_claude_code_session_whose_times_name_no_zone_says_so_once(unzoned, tmp_path):
    idx = SessionIndex(unzoned).build()
    assert idx.summary.format == "claude-code" and idx.summary.zoneless == "all"
    app = create_app({"ROOTS": [str(unzoned.parent.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    client = app.test_client()
    page = client.get("/s/proj~local").get_data(as_text=True)
    assert page.count("time zone unknown") == 1
    assert re.search(r'<body class="session-page zoneless', page)  # no card says "no zone"
    assert "<dd><time datetime=\"2026-04-18T13:10:51.000Z\" title=\"2026-04-18 13:10:51, as written" in page
    listing = client.get("/").get_data(as_text=True)
    row = listing[listing.index("proj~local"):]
    assert re.search(r'data-local="as written" class="assumed split">2026-04-18 13:10', row)
    md = "".join(Export(idx, "md").chunks())
    assert md.count("time zone unknown") == 1 and "no zone" not in md
    assert "- **started**: 2026-04-18 13:10:51\n" in md and "## Turn 1 · User · 2026-04-18 13:10:51\n" in md


def test_a_lone_zoneless_time_among_zoned_ones_keeps_its_mark():
    idx = SessionIndex(SESSIONS / "legion-feature-tour" / "messages.jsonl").build()
    assert idx.summary.zoneless == "some"
    md = "".join(Export(idx, "md").chunks())
    assert "time zone unknown" not in md and md.count(", no zone") == 1
    assert re.search(r"^#+ .* · 2025-10-21 19:01:45, no zone$", md, re.M)
    assert SessionIndex(SESSIONS / "legion-multi-agent-comms" / "messages.jsonl").build().summary.zoneless == ""


def test_the_digested_index_says_what_the_events_say_of_zoneless_times(unzoned):
    """Claude Code's digests skip building Events; a zoneless time is left to its Event."""
    from test_digest import no_digests

    with no_digests():
        slow = SessionIndex(unzoned).build().summary
    assert SessionIndex(unzoned).build().summary == slow


@pytest.mark.browser
def test_zoneless_claude_code_times_are_said_once_in_the_header_in_chromium(unzoned, serve, browser):
    srv = serve(unzoned.parent.parent, WATCH=False)
    ctx = browser.new_context(timezone_id="Asia/Tokyo", viewport={"width": 420, "height": 900})
    page = ctx.new_page()
    page.goto(srv.url + "/s/proj~local")
    expect(page.locator("#session-facts .zoneless")).to_have_text(
        re.compile(r"times\s*as written in the file, time zone unknown"))
    expect(page.get_by_text("time zone unknown")).to_have_count(1)
    first = page.locator("li.ev .ev-head time").first
    expect(first).to_have_text(re.compile(r"^2026-04-18 13:1\d:\d\d$"))  # as written, not moved to Tokyo
    assert first.evaluate("e => getComputedStyle(e, '::after').content") == "none"
    ctx.close()
