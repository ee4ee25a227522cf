"""What a user sees at the window widths people really use (1400, 1024, 768, 420 px), light and
dark, in real Chromium: pages that never scroll sideways, tables that read on a phone, an empty
archive that says what to do, words readable in both themes, a linked message not under the bar,
a keyboard focus ring on every control."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from conftest import CORPUS, quiet_copy

pytestmark = pytest.mark.browser

LONG_MODEL = "accounts/fireworks/models/llama-v3p1-405b-instruct-long-context-preview"
LONG_FOLDER = "a-project-folder-with-a-really-long-name-that-has-no-spaces-in-it-at-all-2025"


def sideways(page) -> int:
    """How far the page scrolls sideways (0 when everything fits the window)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


def box_now(page, selector: str, text: str) -> dict:
    """The box of the one visible element matching `selector` that holds `text`, found and measured
    in one step in the page. The list's stream sends again, once, the rows the page indexed as it
    was drawn (the page's version is taken before, so a note made meanwhile is never missed): an
    element found, then measured (Playwright's `bounding_box`), can be swapped out in between and
    measure as None."""
    boxes = page.evaluate("""([sel, text]) => [...document.querySelectorAll(sel)]
        .filter(e => e.checkVisibility() && e.textContent.includes(text))
        .map(e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; })""",
                          [selector, text])
    assert len(boxes) == 1, f"{len(boxes)} visible elements {selector} hold {text!r}"
    return boxes[0]


def long_names(root):
    """A Claude Code session whose model name, title and folder are each longer than a column."""
    folder = root / LONG_FOLDER
    folder.mkdir(parents=True)
    base = {"sessionId": "s1", "isSidechain": False, "timestamp": "2025-10-21T10:00:00.000Z"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content":
            "Rename_every_occurrence_of_the_old_configuration_key_in_the_whole_repository_please"}},
        {**base, "type": "assistant", "uuid": "u2", "message": {
            "id": "m1", "role": "assistant", "model": LONG_MODEL,
            "content": [{"type": "text", "text": "Done."}],
            "usage": {"input_tokens": 1200, "output_tokens": 80}}},
    ]
    (folder / "session-one.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    quiet_copy(CORPUS / "claude-code" / "worktrees-subagents", root / "worktrees-subagents")
    return root


@pytest.mark.parametrize("width", [1400, 1250, 1024, 960, 768, 420])
def test_the_session_list_never_scrolls_sideways_with_long_names(tmp_path, serve, browser, width):
    root = long_names(tmp_path / "root")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(serve(root).url + "/")
    model = page.locator("table.sessions .model:visible", has_text=LONG_MODEL)
    expect(model).to_have_count(1)  # shown, in its column or under the title
    box = box_now(page, "table.sessions .model", LONG_MODEL)
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"the model name runs out: {box}"
    assert sideways(page) == 0
    context.close()


@pytest.mark.parametrize("width", [1400, 420])
def test_an_empty_archive_says_what_to_point_the_viewer_at_instead_of_offering_search(
        tmp_path, serve, browser, width):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    (empty / "notes.jsonl").write_text("just some words, not a transcript\n")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    srv = serve(empty)
    page.goto(srv.url + "/")
    state = page.locator("#empty-archive")
    expect(state).to_contain_text("No sessions here yet")
    expect(state).to_contain_text("1 file looked like a transcript but is not")
    expect(state.locator("pre.cmd")).to_contain_text("session-viewer serve ~/.claude/projects")
    for name in ("Claude Code", "legion", "agentpress", "MARSYS", "Wolo", "AgentScope", "OpenAI chat",
                 "Anthropic Messages"):
        expect(state.locator("dl.formats dt", has_text=name)).to_be_visible()
    # a search box and filters over nothing can do nothing
    expect(page.locator("#search-q")).to_have_count(0)
    expect(page.locator("form#filters")).to_have_count(0)
    expect(page.locator("#skipped")).to_contain_text("notes.jsonl")  # why the one file is not one
    assert sideways(page) == 0
    page.goto(srv.url + "/stats")
    expect(page.locator("form#filters")).to_have_count(0)
    page.get_by_role("link", name="the session list").click()
    expect(page.locator("#empty-archive")).to_be_visible()
    context.close()


@pytest.mark.parametrize("path", ["/s/worktrees-subagents/usage", "/stats"])
def test_usage_and_cost_tables_read_down_a_phone_instead_of_scrolling_in_their_boxes(
        serve, browser, path):
    context = browser.new_context(viewport={"width": 420, "height": 900})
    page = context.new_page()
    srv = serve(CORPUS / "claude-code" / "worktrees-subagents", WATCH=False)
    st = srv.app.extensions["viewer"].store
    for ref in st.sessions():
        st.index(ref.key)  # the stats count indexed sessions only
    page.goto(srv.url + path)
    for d in page.locator("details.table-details").all():
        d.evaluate("e => { e.open = true; }")
    boxes = page.locator(".table-scroll")
    assert boxes.count() >= 2
    for box in boxes.all():
        inner = box.evaluate("e => e.scrollWidth - e.clientWidth")
        assert inner <= 0, f"a table scrolls {inner} px sideways inside its box"
    # every figure is on screen, under its own label
    cost = page.locator("table.figures td[data-label='cost']").first
    expect(cost).to_be_visible()
    assert cost.evaluate("e => getComputedStyle(e, '::before').content") == '"cost"'
    b = cost.bounding_box()
    assert b["x"] >= 0 and b["x"] + b["width"] <= 420
    assert sideways(page) == 0
    context.close()


CONTRAST = r"""e => {
  const rgb = s => s.match(/[\d.]+/g).map(Number);
  const lum = c => { const a = c.slice(0, 3).map(v => { v /= 255; return v <= .03928 ? v / 12.92 : ((v + .055) / 1.055) ** 2.4; });
                     return .2126 * a[0] + .7152 * a[1] + .0722 * a[2]; };
  let b = e, bg;
  while (b) { const c = rgb(getComputedStyle(b).backgroundColor); if (c.length < 4 || c[3] > .5) { bg = c; break; } b = b.parentElement; }
  const f = lum(rgb(getComputedStyle(e).color)), k = lum(bg || [255, 255, 255]);
  return (Math.max(f, k) + .05) / (Math.min(f, k) + .05);
}"""


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_filled_buttons_agent_names_and_terminal_colours_are_readable_in_both_themes(
        live_server, browser, scheme):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    page.locator("#filter-menu > summary").click()  # an open menu's button is filled
    words = {
        "the Search button": page.locator("button.find-go"),
        "an open menu's button": page.locator("#filter-menu[open] > summary"),
        "an agent's name": page.locator(".agent-chip").first,
        "red terminal output": page.locator(".ansi .a-f1, .a-f1").first,
        "green terminal output": page.locator(".ansi .a-f2, .a-f2").first,
    }
    words["a quiet word on a grey chip"] = page.locator(".hidden-toggle .muted")
    for what, el in words.items():
        expect(el).to_be_visible()
        ratio = el.evaluate(CONTRAST)
        assert ratio >= 4.5, f"{what} reads at {ratio:.2f}:1 in the {scheme} theme"
    page.goto(f"{live_server.url}/s/legion-feature-tour/m/tour-prompt-1")  # a highlighted message
    for what, el in {"the linked message's time": page.locator(".ev.target > .ev-head .when"),
                     "the linked message's links": page.locator(".ev.target > .ev-head .copy-link")}.items():
        expect(el).to_be_visible()
        ratio = el.evaluate(CONTRAST)
        assert ratio >= 4.5, f"{what} reads at {ratio:.2f}:1 in the {scheme} theme"
    context.close()


@pytest.mark.parametrize("width", [1400, 768, 420])
def test_a_link_to_a_message_taller_than_the_window_opens_at_its_head_below_the_bars(
        live_server, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    page.goto(f"{live_server.url}/s/legion-hostile-content/m/h-big")
    target = page.locator("#m-h-big")
    expect(target).to_have_class(re.compile(r"\btarget\b"))
    assert target.bounding_box()["height"] > 800  # the case: it cannot be centred whole
    page.wait_for_function("() => scrollY > 0")
    bar = page.locator("header.top").bounding_box()
    head = target.locator(".ev-head").first.bounding_box()
    assert head["y"] >= bar["y"] + bar["height"], f"the message's head {head} is under the bar {bar}"
    assert head["y"] + head["height"] <= 800
    context.close()


FOCUS_SHOWN = """() => {
  const e = document.activeElement;
  const ring = x => { const c = getComputedStyle(x); return c.outlineStyle !== 'none' && parseFloat(c.outlineWidth) > 0; };
  if (getComputedStyle(e).opacity !== '0') return ring(e);
  // a visually hidden checkbox shows its focus on what stands for it: its label or the box after it
  const label = e.id && document.querySelector(`label[for="${e.id}"]`);
  return [label, e.nextElementSibling].some(x => x && ring(x));
}"""


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_every_control_a_tab_reaches_shows_where_the_focus_is(live_server, browser, scheme):
    context = browser.new_context(viewport={"width": 1024, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    for path in ("/", "/s/legion-feature-tour", "/s/legion-feature-tour/usage"):
        page.goto(live_server.url + path)
        page.locator("header.top").wait_for()
        for _ in range(30):
            page.keyboard.press("Tab")
            what = page.evaluate("() => document.activeElement.outerHTML.slice(0, 120)")
            if page.evaluate("() => document.activeElement === document.body"):
                break
            assert page.evaluate(FOCUS_SHOWN), f"no focus ring on {what} ({path}, {scheme})"
    context.close()


@pytest.mark.parametrize("width", [1280, 1400, 1450, 1500])
def test_the_time_a_session_started_takes_one_line_in_a_laptop_s_window(serve, browser, width):
    from conftest import ROOT, SESSIONS, list_settled

    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(serve(SESSIONS, ROOT / "test_data" / "formats").url + "/")
    list_settled(page)
    started = page.locator("table.sessions td.when:not(.num) time")
    expect(started.first).to_have_attribute("data-local", "1")  # in the reader's zone
    lines = started.evaluate_all("""ts => ts.map(t => Math.round(t.getBoundingClientRect().height
                                                   / parseFloat(getComputedStyle(t.parentNode).lineHeight)))""")
    assert lines and max(lines) == 1, f"a start time takes {max(lines)} lines at {width} px"
    shown = started.first.inner_text()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d \S+)?", shown), shown
    assert (":" in shown[16:]) == (width >= 1500)  # the seconds and the zone when there is room
    assert started.first.get_attribute("title").endswith(" UTC")  # and always in the tooltip
    assert sideways(page) == 0
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_long_format_name_is_one_box_inside_its_column_at_1024_px(serve, browser, scheme):
    from conftest import ROOT, list_settled

    context = browser.new_context(viewport={"width": 1024, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    url = serve(ROOT / "test_data" / "formats").url
    page.goto(url + "/")
    list_settled(page)  # (a filter leaves out the sessions not indexed yet)
    page.goto(url + "/?format=anthropic-messages")
    badges = page.locator("table.sessions td[data-label=format] .format")
    expect(badges.first).to_have_text("anthropic-messages")
    for i in range(badges.count()):
        badge = badges.nth(i)
        expect(badge).to_have_attribute("title", re.compile("anthropic-messages"))
        box = badge.evaluate("""b => { const r = b.getBoundingClientRect(), c = b.parentNode.getBoundingClientRect();
            return {boxes: b.getClientRects().length, inside: r.left >= c.left && r.right <= c.right,
                    cut: b.scrollWidth > b.clientWidth, text: b.innerText}; }""")
        assert box["boxes"] == 1, "the badge is broken into one box per line"
        assert box["inside"], "the badge runs out of its column"
        # whole: on one line, or broken at its hyphen only, never inside a word
        assert not box["cut"] and box["text"].replace("\n", "") == "anthropic-messages", box["text"]
        assert box["text"] in ("anthropic-messages", "anthropic-\nmessages"), box["text"]
    title = page.locator("table.sessions td.title > a").first
    assert title.bounding_box()["width"] >= 180, "the title is squeezed to make room for the badge"
    assert sideways(page) == 0
    context.close()


@pytest.mark.parametrize("width", [1400, 420])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_live_session_s_search_box_keeps_its_width_beside_the_live_controls(
        tmp_path, serve, browser, width, scheme):
    """At 420 px the live tail's state and "follow" go up beside the session's name: the search
    has its line to itself, its placeholder whole ("Search this session", not "Search this ses…"),
    and a long session name gives up its room (its ellipsis) rather than push "?" onto a line of its
    own; at 1400 px everything is one line."""
    root = tmp_path / "live"
    root.mkdir()
    name = "refactor-the-timeline-window-logic"
    (root / f"{name}.jsonl").write_text("".join(json.dumps(m) + "\n" for m in [
        {"role": "user", "content": "Run the tests."}, {"role": "assistant", "content": "All pass."}]))
    srv = serve(root)
    context = browser.new_context(viewport={"width": width, "height": 800}, color_scheme=scheme)
    page = context.new_page()
    page.goto(f"{srv.url}/s/{name}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    box = page.locator("#find-q")
    fits = box.evaluate("""e => {
        const c = document.createElement('canvas').getContext('2d');
        const s = getComputedStyle(e);
        c.font = s.fontSize + ' ' + s.fontFamily;
        const inner = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
        return c.measureText(e.placeholder).width <= inner; }""")
    assert fits, "the search box cuts its own placeholder"
    find, live, follow = (page.locator(s).bounding_box() for s in ("#find-q", "#live-state", "label.follow"))
    brand = page.locator("header.top .brand").bounding_box()
    if width == 420:
        assert find["width"] >= 0.5 * width
        assert abs(live["y"] - brand["y"]) < brand["height"]  # on the name's line, not the search's
        expect(page.locator("#keys-button")).to_be_visible()
        keys = page.locator("#keys-button").bounding_box()
        assert keys["y"] < brand["y"] + brand["height"] and keys["x"] + keys["width"] <= width
        assert follow["y"] + follow["height"] <= find["y"]
    else:
        assert abs(live["y"] - find["y"]) < find["height"] and find["width"] >= 200
    assert sideways(page) == 0
    context.close()
