"""What the real Claude Code CLI (2.1.331) writes for a rewind, a skill and an auto-compaction, read
in real Chromium: the rewind's notice leads to the first message it dropped, the skill's
instructions open from their chip, and the compaction's "kept verbatim" link goes up to the prompt
it kept — each link a permalink of the same page, the message highlighted."""

import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

FIXTURES = ROOT / "test_data" / "formats" / "claude-code"
REWIND = FIXTURES / "2.1.331-tty" / "-home-user-demo" / "4d437b15-d9f5-4d73-a016-749930ca89fa.jsonl"
SKILL = FIXTURES / "2.1.331" / "-home-user-demo" / "b2ddb9c6-cb59-4536-9a96-f6e738b7220e.jsonl"
AUTO = FIXTURES / "2.1.331" / "-home-user-demo" / "38390fa4-f92d-4ab5-b8a8-422140c047ca.jsonl"
SUM_FROM = FIXTURES / "2.1.331-tty" / "-home-user-demo" / "6bd9f5b0-d480-48fc-8144-b39c6c23b04f.jsonl"


@pytest.fixture
def srv(tmp_path, serve):
    root = tmp_path / "root"
    root.mkdir()
    for name, src in (("rewind", REWIND), ("skill", SKILL), ("auto", AUTO), ("sumfrom", SUM_FROM)):
        shutil.copy(src, root / f"{name}.jsonl")
    return serve(root)


def test_the_rewind_notice_leads_to_the_first_dropped_message(srv, watched_page):
    page = watched_page
    page.goto(f"{srv.url}/s/rewind")
    notice = page.locator(".rewound")
    expect(notice).to_have_count(1)
    expect(notice).to_contain_text("the 2 messages from there on were dropped from the conversation")
    prompt = page.locator("li.ev", has=notice)
    expect(prompt).to_contain_text("Name a fruit instead.")
    notice.get_by_role("link", name="this message").click()
    dropped = page.locator("li.ev.target")
    expect(dropped).to_contain_text("Name another colour.")
    expect(dropped).to_be_in_viewport()
    assert page.problems == []


def test_a_skills_instructions_open_from_their_chip(srv, watched_page):
    page = watched_page
    page.goto(f"{srv.url}/s/skill")
    chip = page.locator("li.ev.kind-tool_context details.context")
    expect(chip.locator("summary")).to_have_text("skill release-notes: its instructions, loaded for the model")
    body = chip.get_by_text("List every change since the last tag")
    expect(body).to_be_hidden()
    chip.locator("summary").click()
    expect(body).to_be_visible()
    assert page.problems == []


def test_the_compaction_links_up_to_the_prompt_it_kept(srv, watched_page):
    page = watched_page
    page.goto(f"{srv.url}/s/auto")
    boundary = page.locator("li.ev.kind-compaction")
    expect(boundary).to_contain_text("Conversation compacted (auto, 199,087 → 2,709 tokens)")
    boundary.get_by_role("link", name="this message").click()
    kept = page.locator("li.ev.target")
    expect(kept).to_contain_text("What was in the log?")
    expect(kept).to_be_in_viewport()
    assert page.problems == []


def test_the_messages_a_rewind_dropped_say_so_and_lead_to_the_prompt_after_it(srv, watched_page):
    page = watched_page
    page.goto(f"{srv.url}/s/rewind")
    marks = page.locator(".dropped")
    expect(marks).to_have_count(2)
    expect(marks.first).to_have_text("dropped by a rewind — the conversation went on from this prompt")
    marked = page.locator("li.ev:has(> .ev-body > .dropped)")
    expect(marked).to_have_count(2)
    expect(marked.first).to_contain_text("Name another colour.")
    expect(marked.last).to_contain_text("Green.")
    # dimmed, not hidden: the text is there to read, the mark itself is not dimmed
    expect(marked.last.get_by_text("Green.")).to_be_visible()
    assert float(marked.last.locator(".ev-body > :not(.dropped)").first
                 .evaluate("e => getComputedStyle(e).opacity")) < 1
    assert marks.last.evaluate("e => getComputedStyle(e).opacity") == "1"
    blue = page.locator("li.ev", has_text="Blue.").locator(".ev-body > *").last
    assert blue.evaluate("e => getComputedStyle(e).opacity") == "1"
    marks.last.get_by_role("link", name="this prompt").click()
    prompt = page.locator("li.ev.target")
    expect(prompt).to_contain_text("Name a fruit instead.")
    expect(prompt).to_be_in_viewport()
    assert page.problems == []


def test_a_rewind_written_while_the_page_is_open_marks_the_cards_it_dropped(tmp_path, serve, watched_page):
    root = tmp_path / "root"
    root.mkdir()
    rows = REWIND.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, r in enumerate(rows) if "Name a fruit instead." in r)
    path = root / "rewind.jsonl"
    path.write_text("".join(rows[:cut]), encoding="utf-8")
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/rewind")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    expect(page.locator("li.ev", has_text="Green.")).to_be_visible()
    expect(page.locator(".dropped")).to_have_count(0)
    with path.open("a", encoding="utf-8") as f:
        f.writelines(rows[cut:])
    expect(page.locator("li.ev", has_text="Apple.")).to_be_visible()
    marks = page.locator(".dropped")
    expect(marks).to_have_count(2)
    marked = page.locator("li.ev:has(> .ev-body > .dropped)")
    expect(marked).to_have_count(2)
    expect(marked.first).to_contain_text("Name another colour.")
    expect(marked.last).to_contain_text("Green.")
    expect(page.locator(".rewound")).to_contain_text("the 2 messages from there on were dropped")
    assert page.evaluate("window.__noReload") is True  # the same page, marked in place
    marks.first.get_by_role("link", name="this prompt").click()
    expect(page.locator("li.ev.target")).to_contain_text("Name a fruit instead.")
    assert page.problems == []


def test_summarize_from_here_links_to_what_it_summarized_and_what_it_kept(srv, watched_page):
    page = watched_page
    page.goto(f"{srv.url}/s/sumfrom")
    boundary = page.locator("li.ev.kind-compaction")
    expect(boundary).to_contain_text("Conversation partly summarized — “Summarize from here”")
    line = boundary.locator(".repeat-ref")
    expect(line).to_have_text("↳ summarized: the 4 messages from this message on; kept verbatim: what came before it, "
                              "from this message on")
    line.get_by_role("link", name="this message").first.click()
    expect(page.locator("li.ev.target")).to_contain_text("Name another colour.")
    expect(page.locator("li.ev.target")).to_be_in_viewport()
    line.get_by_role("link", name="this message").last.click()
    expect(page.locator("li.ev.target")).to_contain_text("Name a colour.")
    assert page.problems == []
