"""Big sessions: huge lines are cut and fetched back exactly, windows tile the session around a
permalink, and a 20 MB single-line session opens at once."""

import json
import re

import pytest
from playwright.sync_api import expect

from viewer import reader
from viewer.index import SessionIndex
from viewer.timeline import WINDOW, Timeline, bounds
from viewer.web import create_app

from conftest import CORPUS, SESSIONS


@pytest.fixture
def huge(tmp_path):
    """A session whose second line holds a 20 MB message."""
    text = "".join(f"{i:08d} log line with some words in it\n" for i in range(500_000))
    folder = tmp_path / "sessions" / "huge"
    folder.mkdir(parents=True)
    lines = [
        {"type": "user", "uuid": "u-1", "sessionId": "h", "message": {"role": "user", "content": "the log:"}},
        {"type": "user", "uuid": "u-2", "sessionId": "h", "message": {"role": "user", "content": text}},
        {"type": "assistant", "uuid": "a-1", "sessionId": "h",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "A long log."}]}},
    ]
    (folder / "messages.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder.parent, text


def test_a_huge_line_is_indexed_without_being_read_whole(huge):
    root, text = huge
    idx = SessionIndex(root / "huge" / "messages.jsonl").build()
    th = idx.threads["main"]
    assert th.ids == ["u-1", "u-2", "a-1"]
    assert th.lengths[1] > reader.HUGE_LINE


def test_show_all_returns_exactly_the_original_text(huge, tmp_path):
    root, text = huge
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    c = app.test_client()
    page = c.get("/s/huge").get_data(as_text=True)
    assert len(page) < 200_000  # the page carries a preview, not 20 MB
    link = re.search(r'href="(/s/huge/e/u-2/full/b0\?raw=1)"', page)
    assert link and "Show all" in page
    full = c.get(link.group(1))
    assert full.get_data(as_text=True) == text
    frag = c.get("/s/huge/e/u-2/full/b0", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "Open the whole text" in frag and len(frag) < 3_000_000


def test_show_all_of_an_ordinary_cut_block_is_exact(client):
    html = client.get("/s/legion-hostile-content").get_data(as_text=True)
    link = re.search(r'href="(/s/legion-hostile-content/e/h-big/full/b0\?raw=1)"', html).group(1)
    lines = (SESSIONS / "legion-hostile-content" / "messages.jsonl").read_text(encoding="utf-8")
    src = [json.loads(x) for x in lines.splitlines()]
    original = next(r for r in src if r.get("message_id") == "h-big")["content"]
    assert client.get(link).get_data(as_text=True) == original


def test_windows_around_a_permalink_tile_the_session():
    idx = SessionIndex(CORPUS / "claude-code" / "spotter-progress-compact" / "messages.jsonl").build()
    th = idx.threads["main"]
    for target_seq in (0, 1, len(th) // 3, len(th) - 1):
        start, stop = bounds(th, around=target_seq, size=20)
        assert start <= target_seq < stop
        seen = list(range(start, stop))
        lo, hi = start, stop
        while lo > 0:
            lo, s2 = bounds(th, before=lo, size=20)
            seen[:0] = range(lo, s2)
        while hi < len(th):
            s1, hi = bounds(th, after=hi, size=20)
            seen.extend(range(s1, hi))
        assert seen == list(range(len(th)))  # nothing lost, nothing twice


def test_window_counts_visible_events():
    idx = SessionIndex(CORPUS / "claude-code" / "spotter-progress-compact" / "messages.jsonl").build()
    win = Timeline(idx).window("main")
    visible = [v for v in win.events if not v.ev.hidden]
    assert len(visible) == WINDOW and len(win.events) > WINDOW  # progress noise rides along, hidden


@pytest.mark.browser
def test_a_20mb_single_line_session_opens_with_the_line_cut(huge, serve, watched_page):
    root, text = huge
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/huge")
    msg = page.locator("#m-u-2")
    expect(msg).to_contain_text("00000000 log line")
    expect(msg.locator("a.show-all")).to_contain_text("MB")
    assert len(msg.inner_text()) < 100_000
    expect(page.locator("#m-a-1")).to_contain_text("A long log.")
    assert page.problems == []


@pytest.fixture
def long_session(tmp_path):
    """A legion session of 600 visible messages, last written an hour ago (not live)."""
    import os
    import time

    folder = tmp_path / "sessions" / "long"
    folder.mkdir(parents=True)
    lines = [json.dumps({"type": "user" if i % 2 == 0 else "assistant", "content": f"message number {i}",
                         "timestamp": 1761073190 + i, "session_id": "l", "message_id": f"m{i}"})
             for i in range(600)]
    (folder / "messages.jsonl").write_text("\n".join(lines) + "\n")
    old = time.time() - 3600
    os.utime(folder / "messages.jsonl", (old, old))
    return folder.parent


@pytest.mark.browser
def test_a_finished_session_opens_at_its_start_with_the_header_in_view(long_session, serve,
                                                                        watched_page):
    srv = serve(long_session)
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 700})
    windows = []
    page.on("request", lambda r: windows.append(r.url) if "/w/main" in r.url else None)
    page.goto(f"{srv.url}/s/long")
    expect(page.locator(".session-head h1")).to_be_in_viewport()
    expect(page.locator("#m-m0")).to_be_in_viewport()
    page.wait_for_load_state("networkidle")
    assert windows == [] and page.evaluate("window.scrollY") == 0
    expect(page.locator("#timeline > li.ev")).to_have_count(WINDOW)
    # reading on: the next window comes in below, where nothing the reader sees moves
    page.locator("#timeline > li.more.after").scroll_into_view_if_needed()
    expect(page.locator("#timeline > li.ev")).to_have_count(2 * WINDOW)
    assert page.problems == []


@pytest.mark.browser
def test_earlier_windows_load_when_the_reader_goes_up_without_moving_the_reader(long_session, serve,
                                                                               watched_page):
    srv = serve(long_session)
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 700})
    windows = []
    page.on("request", lambda r: windows.append(r.url) if "/w/main" in r.url else None)
    # a window mid-session with its "earlier" link in view: it must not load by itself (it used
    # to, and the place-keeping then held the reader mid-session with the header scrolled away)
    page.goto(f"{srv.url}/s/long?before=300")
    expect(page.locator("#timeline > li.more.before")).to_be_in_viewport()
    expect(page.locator("#m-m260")).to_be_in_viewport()
    page.wait_for_load_state("networkidle")
    assert windows == [] and page.evaluate("window.scrollY") == 0
    where = "document.getElementById('m-m260').getBoundingClientRect().top"
    seen_at = page.evaluate(where)
    page.mouse.move(500, 400)
    page.mouse.wheel(0, -200)  # the reader goes up
    expect(page.locator("#timeline > li.ev")).to_have_count(2 * WINDOW)
    assert len(windows) == 1
    assert abs(page.evaluate(where) - seen_at) < 3  # the earlier events went in above
    assert page.problems == []
