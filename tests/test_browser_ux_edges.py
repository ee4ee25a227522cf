"""Rough edges a demanding new user hit, in real Chromium against a live server: an MCP tool's card
saying which server the tool comes from; a Claude Code hook's output shown as the terminal printed
it; counts whose noun agrees with them; the stats page's tool charts and tables at a laptop's width;
the live bar beside the timeline, not over its cards; a record no format knows shown, not folded
behind three "unknown"s; Tab not stopping on "Go to the results" before there are any; a raw view's head on one line of a
phone; a tool card's head on a phone with its name whole and its summary readable; an empty
session's filter menu and usage panel saying so instead of headings over nothing; a folder's
group in the list saying what its link does."""

from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SID = "a1b2c3d4-0000-4000-8000-000000000001"


def _claude_line(kind: str, content, uuid: str, parent: str | None, second: int) -> dict:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message |= {"model": "claude-sonnet-4-5-20250929", "id": f"msg_{uuid}",
                    "usage": {"input_tokens": 10, "output_tokens": 20}}
    return {"type": kind, "message": message, "uuid": uuid, "parentUuid": parent, "sessionId": SID,
            "timestamp": f"2026-05-01T10:00:{second:02d}.000Z", "cwd": "/home/u/proj",
            "version": "2.0.30", "isSidechain": False, "userType": "external"}


def mcp_session(root):
    """A Claude Code session calling two MCP servers' tools (one of them a plugin's), written long
    ago (a finished session: no live tail to wait for)."""
    calls = [("mcp__github__create_issue", {"owner": "acme", "repo": "web", "title": "Flaky test"},
              '{"number": 412}'),
             ("mcp__plugin_playwright_playwright__browser_take_screenshot", {"filename": "d.png"},
              "Took the screenshot")]
    lines = [_claude_line("user", "Open an issue, then take a screenshot.", "u0", None, 0)]
    parent = "u0"
    for i, (name, inp, out) in enumerate(calls, 1):
        lines.append(_claude_line("assistant", [{"type": "tool_use", "id": f"toolu_{i}", "name": name,
                                                 "input": inp}], f"a{i}", parent, 2 * i))
        lines.append(_claude_line("user", [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                            "content": out}], f"u{i}", f"a{i}", 2 * i + 1))
        parent = f"u{i}"
    folder = root / "mcp"
    folder.mkdir(parents=True)
    path = folder / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return root


def test_an_mcp_tool_s_card_names_its_server_and_the_tool(tmp_path, serve, watched_page):
    page = watched_page
    srv = serve(mcp_session(tmp_path / "root"))
    page.goto(f"{srv.url}/s/mcp~{SID}")
    names = page.locator(".tool .tool-name")
    expect(names).to_have_count(2)
    github, shot = names.nth(0), names.nth(1)
    expect(github.locator(".mcp-server")).to_have_text("MCP github")
    expect(github.locator(".mcp-tool")).to_have_text("create_issue")
    expect(github).not_to_contain_text("mcp__")  # the prefix and the double underscores are gone
    assert "mcp__github__create_issue" in github.locator(".mcp-name").get_attribute("title")
    # a plugin's server: named once, not plugin_playwright_playwright
    expect(shot.locator(".mcp-server")).to_have_text("MCP playwright")
    expect(shot.locator(".mcp-tool")).to_have_text("browser_take_screenshot")
    # the filter menu's tool values say the same
    page.locator("#filter-menu summary").click()
    tools = page.locator("#filter-menu ul.tools a.fv")
    expect(tools).to_have_count(2)
    expect(tools.filter(has_text="create_issue").locator(".mcp-server")).to_have_text("MCP github")
    tools.filter(has_text="create_issue").click()
    expect(page).to_have_url(re.compile(r"tool=mcp__github__create_issue"))
    expect(page.locator(".tool")).to_have_count(1)
    # and the Markdown export, for pasting into an issue
    md = page.request.get(f"{srv.url}/s/mcp~{SID}/export?format=md").text()
    assert "**Tool: create\\_issue** (MCP server github)" in md
    assert page.problems == []


def test_a_hook_s_terminal_output_reads_as_the_terminal_printed_it(tmp_path, serve, watched_page):
    """Claude Code 1.0.x writes each hook's run as a system line in the terminal's colours; read as
    Markdown it showed the escape characters as boxes and ran pytest's lines into one paragraph."""
    out = ("\x1b[1mStop\x1b[22m [uv run pytest] completed successfully: ===== test session starts =====\n"
           "collected 138 items\n\ntest/test_a.py ....   [ 50%]\ntest/test_b.py ....   [100%]")
    rec = _claude_line("user", "Run the tests.", "u0", None, 0)
    hook = {**rec, "type": "system", "content": out, "uuid": "s1", "parentUuid": "u0", "level": "info",
            "isMeta": False, "timestamp": "2026-05-01T10:00:05.000Z"}
    del hook["message"]
    folder = tmp_path / "root" / "hooks"
    folder.mkdir(parents=True)
    path = folder / f"{SID}.jsonl"
    path.write_text(json.dumps(rec) + "\n" + json.dumps(hook) + "\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    page = watched_page
    page.goto(f"{serve(tmp_path / 'root').url}/s/hooks~{SID}")
    card = page.locator("#m-s1")
    pre = card.locator("pre")
    expect(pre).to_have_count(1)
    text = pre.inner_text()
    assert "\x1b" not in text and "[1m" not in text and "[22m" not in text
    assert text.startswith("Stop [uv run pytest] completed successfully")
    assert "collected 138 items\n\ntest/test_a.py" in text  # the lines as printed
    expect(pre.locator(".a-bold")).to_have_text("Stop")  # the terminal's bold, drawn
    expect(card.locator(".ev-head .who")).to_have_text("system")
    expect(card.locator(".ev-head .kind")).to_have_count(0)  # not "System system"
    assert page.problems == []


def test_a_one_line_file_written_says_1_line(tmp_path, serve, watched_page):
    calls = [{"id": f"c{n}", "type": "function", "function": {"name": "Write", "arguments": json.dumps(
        {"file_path": f"/w/{n}.txt", "content": "hello\n" * n})}} for n in (1, 3)]
    lines = [{"role": "user", "content": "Write two files."},
             {"role": "assistant", "content": None, "tool_calls": calls},
             {"role": "tool", "tool_call_id": "c1", "content": "written"},
             {"role": "tool", "tool_call_id": "c3", "content": "written"}]
    root = tmp_path / "root"
    (root / "writes").mkdir(parents=True)
    (root / "writes" / "messages.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    page = watched_page
    page.goto(f"{serve(root).url}/s/writes")
    heads = page.locator(".tool .file-content > summary")
    expect(heads).to_have_count(2)
    expect(heads.nth(0)).to_have_text("/w/1.txt · 1 line")
    expect(heads.nth(1)).to_have_text("/w/3.txt · 3 lines")
    assert page.problems == []


def test_the_stats_page_s_tool_charts_and_tables_read_whole_at_1400_px(tmp_path, serve, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    srv = serve(mcp_session(tmp_path / "root"))
    srv.app.extensions["viewer"].store.indexer.idle(60)  # the stats count indexed sessions
    page.goto(f"{srv.url}/stats")
    charts = page.locator("canvas[data-chart='tools'][data-drawn='1']")
    expect(charts).to_have_count(2)  # by calls, by time (no tool failed 5 times)
    labels = charts.first.evaluate("c => Chart.getChart(c).data.labels")
    # an MCP tool by its own name, then its server; a long one cut at its end, not at its start
    assert "create_issue (github)" in labels
    shot = next(x for x in labels if x.startswith("browser_take_screenshot"))
    assert shot.endswith("…") and len(shot) <= 28
    ticks = charts.first.evaluate("c => Chart.getChart(c).scales.x.ticks.map(t => t.label)")
    assert len(ticks) == len(set(ticks)), f"the calls axis repeats its numbers: {ticks}"
    cost = page.locator("canvas[data-chart='days'][data-field='cost']")
    expect(cost).to_have_attribute("data-drawn", "1")
    ticks = cost.evaluate("c => Chart.getChart(c).scales.y.ticks.map(t => t.label)")
    assert len(ticks) == len(set(ticks)), f"the cost axis repeats its amounts: {ticks}"
    # the tables under the charts fit their column: no header cut at the right
    for box in page.locator(".charts.three .table-scroll").all():
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth"), "a table runs past its column"
    expect(page.locator(".charts.three table").first.locator("th").last).to_have_text("sessions")
    context.close()


def _meet(a, b) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.parametrize("width", [420, 800, 1024, 1400])
def test_the_live_bar_covers_no_content_at_any_width(live_server, browser, width):
    # the live tail's state and "follow" sit in the page's top bar, which takes its own room: no
    # card, link or header fact is ever under them (a bar floating over the timeline covered the
    # cards' "raw" links below about 1,250 px)
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    state = page.locator("#live-state")
    expect(state).to_have_attribute("data-state", "live")
    expect(state).to_have_text("connected")  # said to a screen reader; a green dot to the eye
    expect(page.locator("#follow")).to_be_visible()
    content = "#timeline > li.ev:visible, #timeline li.ev a:visible, .session-head:visible, .session-tools:visible"
    for scroll in (0, 1200, 10**6):
        page.evaluate(f"window.scrollTo(0, {scroll})")
        page.wait_for_function(f"Math.abs(window.scrollY - Math.min({scroll}, document.documentElement.scrollHeight - innerHeight)) < 2")
        bar = page.locator(".live-bar").bounding_box()
        head = page.locator("header.top").bounding_box()
        assert head["y"] <= bar["y"] and bar["y"] + bar["height"] <= head["y"] + head["height"] + 0.5, \
            f"the live bar {bar} is out of the page's top bar {head}"
        assert bar["x"] >= 0 and bar["x"] + bar["width"] <= width, f"the live bar {bar} runs off the page"
        below = head["y"] + head["height"]  # what scrolled under the top bar is not shown
        for el in page.locator(content).all():
            box = el.bounding_box()
            if box and box["y"] >= below - 0.5:
                assert not _meet(box, bar), f"at {width} px the live bar {bar} covers {box}"
    context.close()


def test_a_file_in_no_known_format_shows_its_records_json_at_once(tmp_path, serve, watched_page):
    root = tmp_path / "root"
    (root / "odd").mkdir(parents=True)
    (root / "odd" / "messages.jsonl").write_text('{"foo": 1, "bar": [2]}\n')
    page = watched_page
    page.goto(f"{serve(root).url}/s/odd")
    card = page.locator("#timeline li.ev")
    expect(card).to_have_count(1)
    expect(card.locator(".ev-body")).to_contain_text('"foo": 1')  # open, no click needed
    expect(card.locator(".ev-body")).to_be_visible()
    expect(card.locator("details.data > summary")).to_have_text("the record as written")
    expect(card.locator(".ev-head .kind")).to_have_count(0)  # not "Unknown unknown"
    assert page.problems == []


def test_tab_stops_at_go_to_the_results_only_when_there_are_results(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    skip = page.get_by_role("link", name="Go to the results")
    page.locator("#find-q").focus()
    stops = []
    for _ in range(4):  # Aa, .*, Search, then on out of the search form
        page.keyboard.press("Tab")
        stops.append(page.evaluate("document.activeElement.textContent.trim() || document.activeElement.name"))
    assert "Go to the results" not in stops, stops
    page.locator("#find-q").fill("timeline")
    page.keyboard.press("Enter")
    expect(page.locator("#hits li.hit").first).to_be_visible()
    page.locator("#find-q").focus()
    for _ in range(3):
        page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile("#hits$"))
    assert page.problems == []


def test_a_raw_view_names_its_file_on_one_line_of_a_phone(live_server, browser):
    context = browser.new_context(viewport={"width": 420, "height": 850})
    page = context.new_page()
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    card = page.locator("#timeline > li.ev:visible").first
    card.locator(".raw-link").click()
    head = card.locator(".raw-head")
    expect(head).to_contain_text("line 2 of messages.jsonl")
    assert head.locator("code").get_attribute("title").endswith("/legion-feature-tour/messages.jsonl")
    line = head.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 1.5 * parseFloat(getComputedStyle(e).fontSize)")
    assert head.bounding_box()["height"] < 2 * line, "the raw view's head takes several lines"
    expect(card.locator(".raw-json")).to_contain_text('"message_id": "tour-prompt-1"')
    context.close()


def test_a_phone_shows_a_long_tool_name_whole_and_its_summary_readable(tmp_path, serve, browser):
    context = browser.new_context(viewport={"width": 420, "height": 850})
    page = context.new_page()
    page.goto(f"{serve(mcp_session(tmp_path / 'root')).url}/s/mcp~{SID}")
    heads = page.locator(".tool .tool-head")
    expect(heads).to_have_count(2)
    for head in heads.all():
        tool = head.locator(".mcp-tool")
        size = tool.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert tool.bounding_box()["height"] < 2 * size, "the tool's name is broken over two lines"
        summary = head.locator(".tool-summary").bounding_box()
        assert summary["width"] >= 80, "the summary is squeezed to a letter or two"
        state = head.locator(".state").bounding_box()
        assert state["x"] + state["width"] <= 420
    # a short name and its summary still share one line with the state
    assert heads.nth(0).locator(".tool-summary").bounding_box()["width"] >= 80
    context.close()


def test_a_phone_keeps_a_common_tool_head_on_one_line(live_server, browser):
    context = browser.new_context(viewport={"width": 420, "height": 850})
    page = context.new_page()
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    head = page.locator(".tool-read .tool-head").first  # Read /home/dev/app/timeline.py
    expect(head).to_be_visible()
    name, state = head.locator(".tool-name").bounding_box(), head.locator(".state").bounding_box()
    assert abs(name["y"] - state["y"]) < name["height"], "the state went under the name"
    assert head.locator(".tool-summary").bounding_box()["width"] > 40
    context.close()


def test_an_empty_session_s_menus_say_there_is_nothing_yet(tmp_path, serve, watched_page):
    root = tmp_path / "root"
    (root / "empty").mkdir(parents=True)
    (root / "empty" / "messages.jsonl").write_text("")
    page = watched_page
    page.goto(f"{serve(root).url}/s/empty")
    page.locator("#filter-menu summary").click()
    menu = page.locator("#filter-menu")
    expect(menu).to_contain_text("Nothing to filter by: no messages, tool calls or errors")
    expect(menu.locator("h3")).to_have_count(0)  # not a "Show only" heading over nothing
    page.keyboard.press("Escape")
    page.locator(".session-head details summary", has_text="Usage, cost and charts").click()
    expect(page.locator(".session-head")).to_contain_text("no usage recorded")
    for canvas in page.locator("canvas[data-chart]").all():  # nothing to draw: no caption either
        figure = canvas.locator("xpath=ancestor::figure")
        expect(figure).to_be_hidden()
    assert page.locator("figcaption:visible").count() == 0
    assert page.problems == []


def test_a_folder_s_group_says_its_link_shows_only_that_folder(live_server, watched_page):
    page = watched_page
    page.goto(live_server.url + "/?group=project")
    head = page.locator("#sessions tr.group-head", has_text="claude-project")
    link = head.get_by_role("link", name="only this folder")  # it read "only"
    expect(link).to_be_visible()
    link.click()
    expect(page.locator("#sessions tr.row")).to_have_count(1)
    expect(page.locator("#sessions tr.row")).to_contain_text("claude-project")
    assert page.problems == []
