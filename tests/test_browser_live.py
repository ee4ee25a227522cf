"""Live tail in real Chromium: appended lines appear, tool cards change state, follow and the
"N new" pill behave, and a dropped stream reconnects without gaps or duplicates."""

import json
import re
import shutil
import time

import pytest
from playwright.sync_api import expect

from conftest import SESSIONS

pytestmark = pytest.mark.browser

KEY = "legion-feature-tour"


def append(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def say(i, **extra):
    return {"type": "assistant", "content": f"live message {i}", "timestamp": 1761073400 + i,
            "session_id": "s", "message_id": f"live-{i}", **extra}


def open_live(page, srv):
    page.goto(f"{srv.url}/s/{KEY}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")


def test_new_message_and_tool_state_appear_without_reload(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    open_live(page, srv)
    append(path, say(1, metadata={"tool_uses": [{"id": "toolu_live", "name": "Bash",
                                                 "input": {"command": "make test"}}]}))
    card = page.locator("#tc-toolu_live")
    expect(card.locator(".state")).to_have_text("pending")
    expect(card.locator(".tool-result")).to_contain_text("waiting for the result")
    append(path, {"type": "user", "content": "Tool results: 1", "session_id": "s", "message_id": "live-r",
                  "timestamp": 1761073403.5,
                  "metadata": {"tool_results": [{"tool_use_id": "toolu_live", "content": "42 passed"}]}})
    expect(card.locator(".state")).to_have_text("completed")
    expect(card.locator(".tool-result")).to_contain_text("42 passed")
    expect(page.locator("#m-live-r")).to_contain_text("result of Bash")
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


def test_open_details_stay_open_when_messages_arrive(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    open_live(page, srv)
    thinking = page.locator("#m-tour-read details.thinking")
    thinking.locator("summary").click()
    append(path, say(1))
    expect(page.locator("#m-live-1")).to_be_attached()
    expect(thinking).to_have_attribute("open", "")


def test_follow_keeps_the_bottom_in_view_and_the_pill_counts_otherwise(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    page.set_viewport_size({"width": 900, "height": 500})
    open_live(page, srv)
    follow = page.locator("#follow")
    follow.check()
    append(path, say(1))
    expect(page.locator("#m-live-1")).to_be_in_viewport()
    expect(page.locator("#new-pill")).to_be_hidden()
    follow.uncheck()
    page.evaluate("window.scrollTo(0, 0)")
    append(path, say(2))
    append(path, say(3))
    expect(page.locator("#m-live-3")).to_be_attached()
    pill = page.locator("#new-pill")
    expect(pill).to_have_text("2 new messages ↓")
    expect(page.locator("#m-live-3")).not_to_be_in_viewport()
    assert page.evaluate("window.scrollY") == 0  # nothing moved under the reader
    pill.click()
    expect(page.locator("#m-live-3")).to_be_in_viewport()
    expect(pill).to_be_hidden()


def test_reconnects_after_the_server_drops_the_stream(tour, serve, watched_page):
    root, path = tour
    srv = serve(root, STREAM_LIFETIME=1.5)
    page = watched_page
    requests = []
    page.on("request", lambda r: requests.append(r) if "/events" in r.url else None)
    open_live(page, srv)
    append(path, say(1))
    expect(page.locator("#m-live-1")).to_be_attached()
    # the server ends the stream after 1.5 s; the page reconnects with its Last-Event-ID
    page.wait_for_event("request", lambda r: "/events" in r.url, timeout=10_000)
    append(path, say(2))
    expect(page.locator("#m-live-2")).to_be_attached()
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    assert page.locator("#m-live-1").count() == 1 and page.locator("#m-live-2").count() == 1
    resumed = [r for r in requests if r.headers.get("last-event-id")]
    assert resumed, "the reconnect carried Last-Event-ID"
    assert page.evaluate("window.__noReload") is True


def test_replaced_file_reloads_the_page(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    open_live(page, srv)
    path.write_text(json.dumps(say(7)) + "\n")
    expect(page.locator("#m-live-7")).to_be_attached()
    expect(page.locator("#timeline > li.ev")).to_have_count(1)


def test_session_list_shows_new_sessions_live(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    page.goto(srv.url + "/")
    expect(page.locator("#sessions tbody tr")).to_have_count(1)
    page.evaluate("window.__noReload = true")
    new = root / "brand-new"
    new.mkdir()
    (new / "messages.jsonl").write_text(json.dumps({"type": "user", "content": "A new run starts",
                                                    "session_id": "n", "timestamp": 1761073500}) + "\n")
    row = page.locator("#sessions tbody tr", has_text="A new run starts")
    expect(row).to_be_visible(timeout=10_000)
    expect(row.locator(".live-badge")).to_have_text("live")
    append(path, say(1))  # an update to the existing row keeps it single
    expect(page.locator("#sessions tbody tr")).to_have_count(2)
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


def test_a_session_that_starts_while_the_list_opens_is_listed(tour, serve, watched_page):
    """A session whose file appears after the list page was drawn but before its stream connected
    (a slow or busy machine, a tab opened in the background) is added all the same: the stream
    adds what the page did not draw, not only what appears once it listens."""
    import urllib.request

    root, _ = tour
    srv = serve(root)
    page = watched_page

    def late_stream(route):
        new = root / "brand-new"
        new.mkdir()
        (new / "messages.jsonl").write_text(json.dumps(
            {"type": "user", "content": "Started while the page opened", "session_id": "n",
             "timestamp": 1761073500}) + "\n")
        deadline = time.monotonic() + 10
        while "brand-new" not in urllib.request.urlopen(srv.url + "/sessions.json?wait=0").read().decode():
            assert time.monotonic() < deadline, "the server never found the new session"
            time.sleep(0.05)
        route.continue_()

    page.route(re.compile(r".*/events\?.*"), late_stream, times=1)
    page.goto(srv.url + "/")
    expect(page.locator("#sessions tbody tr", has_text="Started while the page opened")).to_be_visible(
        timeout=10_000)
    expect(page.locator("#sessions tbody tr")).to_have_count(2)
    assert page.problems == []


def test_a_subagent_appears_under_its_task_while_it_runs(tmp_path, serve, watched_page):
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / "claude-project", root / "claude-project")
    folder = root / "claude-project"
    main = next(folder.glob("*.jsonl"))
    sid = main.stem
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/claude-project~{sid}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    append(main, {"type": "assistant", "uuid": "task-2", "sessionId": sid, "message": {
        "role": "assistant", "model": "claude-opus-4-7", "content": [{"type": "tool_use", "id": "toolu_task_2",
        "name": "Task", "input": {"description": "Second look", "prompt": "Look again.",
                                  "subagent_type": "Explore"}}]}})
    card = page.locator("#tc-toolu_task_2")
    expect(card.locator(".state")).to_have_text("pending")
    sub = folder / sid / "subagents"
    (sub / "agent-b2.meta.json").write_text(json.dumps({"agentType": "Explore", "toolUseId": "toolu_task_2",
                                                        "description": "Second look"}))
    append(sub / "agent-b2.jsonl", {"type": "user", "uuid": "b2-1", "isSidechain": True, "agentId": "b2",
                                    "sessionId": sid, "message": {"role": "user", "content": "Look again."}})
    thread = card.locator("details.subthread")
    expect(thread.locator("summary")).to_contain_text("Explore · Second look")
    thread.locator("summary").click()
    expect(thread.locator("#m-b2-1")).to_be_visible()
    append(sub / "agent-b2.jsonl", {"type": "assistant", "uuid": "b2-2", "isSidechain": True, "agentId": "b2",
                                    "sessionId": sid, "message": {"role": "assistant", "content": [
                                        {"type": "text", "text": "Found it."}]}})
    expect(thread.locator("#m-b2-2")).to_contain_text("Found it.")
    assert thread.locator("#m-b2-1").count() == 1
    assert page.problems == []


def test_a_stream_beyond_the_limit_says_so_and_a_reload_retries(tour, serve, browser):
    root, path = tour
    srv = serve(root, MAX_STREAMS=1)
    first = browser.new_page()
    open_live(first, srv)
    second = browser.new_page()
    second.goto(f"{srv.url}/s/{KEY}")
    state = second.locator("#live-state")
    expect(state).to_have_text("too many live viewers — reload to retry")
    expect(state).to_have_attribute("data-state", "busy")
    expect(second.locator("#m-tour-read")).to_be_visible()  # the page itself is all there
    first.close()
    viewer = srv.app.extensions["viewer"]
    deadline = time.monotonic() + 10
    while viewer.streams and time.monotonic() < deadline:  # the server sees the tab go
        time.sleep(0.05)
    second.reload()
    expect(state).to_have_attribute("data-state", "live")
    append(path, say(1))
    expect(second.locator("#m-live-1")).to_be_attached()
    second.close()


def burst(path, n, prefix="b"):
    """n lines in one write, as an agent that catches up writes them."""
    with open(path, "a") as f:
        f.write("".join(json.dumps({"type": "assistant", "content": f"burst line {i}",
                                    "timestamp": 1761073500 + i, "session_id": "s",
                                    "message_id": f"{prefix}-{i}"}) + "\n" for i in range(n)))


def ids_on_page(page, prefix="b"):
    return page.evaluate(f"Array.from(document.querySelectorAll('#timeline > li.ev[id^=\"m-{prefix}-\"]'),"
                         " e => e.id)")


def test_a_burst_reaches_a_following_page_in_order_each_once(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 700})
    open_live(page, srv)
    page.locator("#follow").check()
    burst(path, 2000)
    expect(page.locator("#timeline > li.ev[id^='m-b-']")).to_have_count(2000, timeout=120_000)
    assert ids_on_page(page) == [f"m-b-{i}" for i in range(2000)]
    expect(page.locator("#m-b-1999")).to_be_in_viewport()  # followed to the end
    expect(page.locator("#new-pill")).to_be_hidden()
    expect(page.locator("#live-gap")).to_have_count(0)
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


@pytest.mark.parametrize("idle_callbacks", [True, False], ids=["requestIdleCallback", "without"])
def test_the_links_of_burst_cards_work_once_the_browser_has_time(tour, serve, watched_page,
                                                                  idle_callbacks):
    """A burst's cards are wired by htmx in the browser's spare time, with or without
    requestIdleCallback: in the end every card is, and its raw view opens on a click alone."""
    root, path = tour
    srv = serve(root)
    page = watched_page
    if not idle_callbacks:
        page.add_init_script("delete window.requestIdleCallback")
    open_live(page, srv)
    page.locator("#follow").check()
    burst(path, 500)
    expect(page.locator("#timeline > li.ev[id^='m-b-']")).to_have_count(500, timeout=120_000)
    expect(page.locator("#timeline [data-wire]")).to_have_count(0, timeout=30_000)
    # a click from script: no pointer went over the card to wire it on the way
    page.evaluate("document.querySelector('#m-b-5 .raw-link').click()")
    expect(page.locator("#m-b-5 .raw-json")).to_contain_text("burst line 5")
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


def test_a_burst_while_scrolled_up_waits_behind_n_new_and_loads_on_demand(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 700})
    open_live(page, srv)
    page.locator("#follow").uncheck()
    page.evaluate("window.scrollTo(0, 0)")
    burst(path, 2000)
    pill = page.locator("#new-pill")
    expect(pill).to_have_text("2000 new messages ↓", timeout=120_000)
    shown = len(ids_on_page(page))
    assert 0 < shown < 100  # a screenful went in below the reader, the rest waits
    expect(page.locator("#live-gap")).to_have_text(f"{2000 - shown} new messages — show")
    assert page.evaluate("window.scrollY") == 0  # nothing moved under the reader
    # the pill jumps to the latest events; what lies between loads above them when asked for
    pill.click()
    expect(page.locator("#m-b-1999")).to_be_in_viewport()
    expect(pill).to_be_hidden()
    middle = page.locator("#timeline > li.more.before")
    expect(middle).to_have_text(re.compile(r"Load \d+ earlier events"))
    while middle.count():
        n = page.locator("#timeline > li.ev").count()
        middle.first.locator("a").click()
        expect(page.locator("#timeline > li.ev")).not_to_have_count(n)
    assert ids_on_page(page) == [f"m-b-{i}" for i in range(2000)]
    assert page.problems == []


def test_the_n_new_marker_loads_the_next_events_where_the_reader_is(tour, serve, watched_page):
    root, path = tour
    srv = serve(root)
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 700})
    open_live(page, srv)
    page.locator("#follow").uncheck()
    page.evaluate("window.scrollTo(0, 0)")
    burst(path, 300)
    expect(page.locator("#new-pill")).to_have_text("300 new messages ↓", timeout=60_000)
    # reading on: scrolling down to the marker loads the next window there, and so on to the end
    while page.locator("#live-gap").count():
        n = page.locator("#timeline > li.ev").count()
        page.locator("#live-gap").scroll_into_view_if_needed()
        expect(page.locator("#timeline > li.ev")).not_to_have_count(n)
    assert ids_on_page(page) == [f"m-b-{i}" for i in range(300)]
    # the gap closed: the next line comes in as usual
    append(path, say(1))
    expect(page.locator("#m-live-1")).to_be_attached()
    assert page.problems == []


def test_the_minimap_grows_with_the_live_tail(tour, serve, watched_page):
    # new prompts and a call that fails come through the stream: the session map gains their
    # marks (no reload, no second fetch of the map), the failed call's mark as an error
    root, path = tour
    srv = serve(root)
    page = watched_page
    fetches = []
    page.on("request", lambda r: fetches.append(r.url) if r.url.endswith("/minimap") else None)
    open_live(page, srv)
    marks = page.locator("#minimap a.mm")
    expect(marks.first).to_be_attached()
    before = {a.get_attribute("data-jump") for a in marks.all()}
    assert "live-prompt" not in before and "live-fail" not in before
    for i in range(3):
        append(path, say(10 + i))
        expect(page.locator(f"#m-live-{10 + i}")).to_be_attached()
    append(path, {"type": "user", "content": "Now run the whole suite.", "session_id": "s",
                  "timestamp": 1761073500, "message_id": "live-prompt"})
    expect(page.locator('#minimap a.mm-prompt[data-jump="live-prompt"]')).to_be_attached()
    append(path, say(60, metadata={"tool_uses": [{"id": "toolu_mm", "name": "Bash",
                                                  "input": {"command": "make suite"}}]}))
    expect(page.locator("#tc-toolu_mm .state")).to_have_text("pending")
    append(path, {"type": "user", "content": "Tool results: 1", "session_id": "s", "message_id": "live-fail",
                  "timestamp": 1761073503.5, "metadata": {"tool_results": [
                      {"tool_use_id": "toolu_mm", "content": "make: *** [suite] Error 2", "is_error": True}]}})
    expect(page.locator("#tc-toolu_mm .state")).to_have_text("error")
    # the failed call's mark, at its call's event, as an error
    expect(page.locator('#minimap a.mm-error[data-jump="live-60"]')).to_be_attached()
    expect(page.locator('#minimap a.mm-error[data-jump="live-60"] title')).to_have_text("Bash failed")
    # the marks that were there stay, moved up as the session grew
    after = {a.get_attribute("data-jump") for a in marks.all()}
    assert before <= after | {"live-60"}, before - after
    assert len(fetches) == 1  # the map came once with the page, then through the stream
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []
