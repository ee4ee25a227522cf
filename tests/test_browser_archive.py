"""The archive's pages in real headless Chromium: the list's layout on a phone and on a wide screen,
the session's charts (a click on a bar opens its event), and the stats page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conftest import CORPUS, SESSIONS, quiet_copy

pytestmark = pytest.mark.browser


@pytest.fixture
def archive(tmp_path, serve):
    root = tmp_path / "root"
    for name in ("worktrees-subagents", "spotter-progress-compact", "claude-p-subagent"):
        quiet_copy(CORPUS / "claude-code" / name, root / "-home-dev-project" / name)
    quiet_copy(SESSIONS / "legion-feature-tour", root / "legion-feature-tour")
    quiet_copy(CORPUS / "openai-chat" / "mini-swe-deepseek-chat-astroid-1333", root / "swe")
    srv = serve(root, WATCH=False)
    st = srv.app.extensions["viewer"].store
    for ref in st.sessions():
        st.index(ref.key)
    return srv


def test_the_list_fits_a_phone(archive, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 420, "height": 800})
    for query in ("/", "/?sort=cost&group=project", "/stats"):
        page.goto(archive.url + query)
        expect(page.locator("main")).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, f"{query} scrolls sideways at 420 px ({width} px wide)"
    page.goto(archive.url + "/?sort=cost")
    first = page.locator("#sessions tr.row").first
    expect(first.locator("td.title a")).to_be_visible()
    expect(first.locator("td.cost")).to_contain_text("$")
    assert page.problems == []


def test_the_list_uses_a_wide_screen(archive, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1600, "height": 900})
    page.goto(archive.url + "/?sort=cost")
    table = page.locator("#sessions").bounding_box()
    assert table["width"] > 1400, "the list is capped far below the width of the screen"
    line = page.evaluate("parseFloat(getComputedStyle(document.querySelector('td.models')).lineHeight)")
    for cell in page.locator("td.models").all():
        names = cell.locator(".model")
        for name in names.all():
            assert name.bounding_box()["height"] < 1.5 * line, "a model name wraps"
        assert cell.evaluate("c => c.scrollWidth <= c.clientWidth"), "a model name overflows its cell"
    assert page.problems == []


def test_sort_and_filter_from_the_page(archive, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(archive.url + "/")
    page.get_by_role("link", name="cost").click()
    expect(page).to_have_url(re.compile(r"/\?sort=cost$"))
    page.wait_for_load_state()
    expect(page.locator("#list-count")).to_contain_text("sorted by cost")
    costs = [float(x.replace("$", "").replace(",", "")) for x in
             page.locator("#sessions td.cost span:not(.source-cost)").all_inner_texts() if x.strip()]
    assert len(costs) >= 3 and costs == sorted(costs, reverse=True)
    page.select_option("select[name=format]", "legion")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#sessions tr.row")).to_have_count(1)
    expect(page.locator("#list-count")).to_contain_text("1–1 of 1 session")
    page.get_by_role("link", name="clear").click()
    expect(page.locator("#sessions tr.row")).to_have_count(5)
    page.check("input[name=group]")
    page.get_by_role("button", name="Apply").click()
    group = page.locator("tbody.group", has=page.locator(".project", has_text="-home-dev-project"))
    expect(group.locator("tr.row")).to_have_count(3)
    group.locator(".group-toggle input").uncheck()  # folds the group
    expect(group.locator("tr.row").first).to_be_hidden()
    assert page.problems == []


def test_a_click_on_a_timeline_bar_opens_its_event(archive, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(archive.url + "/s/-home-dev-project~worktrees-subagents")
    page.locator("#usage-panel summary").click()
    canvas = page.locator("canvas[data-chart=timeline]")
    expect(canvas).to_have_attribute("data-drawn", "1")
    expect(page.locator("#usage-panel table.figures").first).to_contain_text("claude-opus-4-7")
    canvas.scroll_into_view_if_needed()
    # the first tool call of a sub-agent's row: where Chart.js drew it, and the event it stands for
    bar = page.evaluate("""() => {
        const c = document.querySelector('canvas[data-chart=timeline]');
        const chart = Chart.getChart(c);
        const ds = chart.data.datasets.findIndex(d => d.label === 'tool calls');
        const rows = chart.data.labels;
        const i = chart.data.datasets[ds].data.findIndex(d => d.y !== rows[0]);
        const el = chart.getDatasetMeta(ds).data[i];
        const r = c.getBoundingClientRect();
        const box = el.getProps(['x', 'base'], true);
        return {x: r.left + (box.x + box.base) / 2, y: r.top + el.y,
                event: chart.data.datasets[ds].data[i].bar.event};
    }""")
    page.mouse.click(bar["x"], bar["y"])
    target = page.locator(f"#m-{bar['event']}")
    expect(target).to_be_in_viewport()
    assert page.problems == []


def test_tokens_per_turn_and_stats_draw(archive, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1400, "height": 900})
    key = next(r.key for r in archive.app.extensions["viewer"].store.sessions() if r.label.startswith("swe/"))
    page.goto(f"{archive.url}/s/{key}/usage")
    expect(page.locator("canvas[data-chart=turns]")).to_have_attribute("data-drawn", "1")
    expect(page.locator("table.figures").first).to_contain_text("deepseek-chat")
    page.goto(archive.url + "/stats")
    for canvas in page.locator("canvas[data-chart]").all():
        expect(canvas).to_have_attribute("data-drawn", "1")
    expect(page.locator("dl.totals")).to_contain_text("5")
    assert page.problems == []


def test_search_from_the_list_and_open_a_hit(archive, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1400, "height": 900})
    v = archive.app.extensions["viewer"]
    for _ in range(3):
        v.store.indexer.idle(60)
        v.fts.wait(60)
    page.goto(archive.url + "/")
    page.fill("#search-q", "WebFetch")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"/search\?q=WebFetch"))
    results = page.locator("#search-results li.result")
    expect(results.first).to_be_visible()
    expect(page.locator("#search-count")).to_contain_text("matching event")
    hit = results.first.locator("a.snippet").first
    expect(hit.locator("mark").first).to_have_text(re.compile("webfetch", re.I))
    href = hit.get_attribute("href")
    event_id = re.search(r"/m/([^?]+)", href).group(1)
    hit.click()
    target = page.locator(f"#m-{event_id}")
    expect(target).to_have_class(re.compile(r"\btarget\b"))
    if "folded" in (target.get_attribute("class") or ""):
        # a result drawn in its call's card (the hit may be one, as a ToolSearch's "tools loaded:
        # …, WebFetch"): the permalink lands on that card's result
        target = page.locator(".tool-result.target")
    expect(target).to_be_in_viewport()
    # the words searched for are marked in the message (the in-session search took them over)
    expect(target.locator("mark.hit").first).to_have_text(re.compile("webfetch", re.I))
    assert page.problems == []
