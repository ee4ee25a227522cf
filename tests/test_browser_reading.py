"""Reading a session in real Chromium: styles, toggles and states a reader sees (issue 10)."""

from __future__ import annotations

import json
import os
import re
import time

import pytest
from playwright.sync_api import expect

from conftest import SESSIONS, quiet_copy

pytestmark = pytest.mark.browser

TOUR = "legion-feature-tour"
CC = "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"


def test_a_subagent_card_and_its_thread_are_not_bold(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{CC}")
    card = page.locator("#tc-toolu_task_explore")
    result = card.locator(".tool-result")
    expect(result).to_contain_text("Two callers")
    assert result.evaluate("e => getComputedStyle(e).fontWeight") == "400"
    card.locator("details.subthread > summary").click()
    reply = card.locator("details.subthread li.ev").last.locator(".ev-body")
    expect(reply).to_contain_text("Two callers")
    assert reply.evaluate("e => getComputedStyle(e).fontWeight") == "400"
    assert page.problems == []


@pytest.mark.parametrize("javascript", [True, False])
def test_hidden_events_toggle_says_what_a_click_will_do(live_server, browser, javascript):
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.goto(f"{live_server.url}/s/{TOUR}")
    toggle = page.locator("label.hidden-toggle")
    expect(toggle).to_contain_text("Show 2 hidden events", use_inner_text=True)
    expect(page.locator("#m-L1")).to_be_hidden()
    toggle.click()
    expect(page.locator("#m-L1")).to_be_visible()
    expect(toggle).to_contain_text("Hide 2 hidden events", use_inner_text=True)
    expect(toggle).not_to_contain_text("Show", use_inner_text=True)
    toggle.click()
    expect(page.locator("#m-L1")).to_be_hidden()
    expect(toggle).to_contain_text("Show 2 hidden events", use_inner_text=True)
    context.close()


def test_a_session_with_nothing_hidden_has_no_hidden_events_toggle(tmp_path, serve, watched_page):
    root = tmp_path / "sessions"
    (root / "plain").mkdir(parents=True)
    (root / "plain" / "messages.jsonl").write_text(
        '{"role": "user", "content": "hello"}\n{"role": "assistant", "content": "hi"}\n')
    page = watched_page
    page.goto(f"{serve(root).url}/s/plain")
    expect(page.locator("#timeline li.ev")).to_have_count(2)
    expect(page.locator("label.hidden-toggle")).to_be_hidden()  # no "Show 0 hidden events"
    assert page.problems == []


def test_a_continued_card_joins_the_one_above_without_a_blank_head(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{CC}")
    card = page.locator("#m-00000000-0000-4000-8000-000000000003")  # the Task call after thinking
    expect(card).to_have_class(re.compile(r"\bcontinued\b"))
    gap = card.evaluate("e => e.querySelector('.ev-body').getBoundingClientRect().top"
                        " - e.getBoundingClientRect().top")
    assert gap < 12, f"{gap}px above the body: a blank head row"
    head = card.locator(":scope > .ev-head")
    assert head.evaluate("e => getComputedStyle(e).opacity") == "0"
    card.hover()
    expect(head).to_have_css("opacity", "1")
    expect(head.locator(".permalink")).to_be_visible()
    assert page.problems == []


def test_a_phone_s_permalink_to_a_continued_card_shows_its_head_without_covering_it(
        tmp_path, serve, watched_page):
    """The head a continued card shows when it is the link's target sits over its top edge: on a
    phone, a memory file's chip under a prompt ("context", its time, its links) wrapped onto a
    second line and covered the chip's words."""
    from test_claude_code_attachments_shown import RULE
    from test_claude_code_questions import SESSION, Lines

    s = Lines()
    s.prompt("Fix the parser")
    s.add(type="attachment", attachment=RULE)
    s.write(tmp_path / "root")
    page = watched_page
    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(f"{serve(tmp_path / 'root').url}/s/-home-u-p~{SESSION}/m/u0002")
    card = page.locator("#m-u0002")
    expect(card).to_have_class(re.compile(r"\bcontinued\b.*\btarget\b|\btarget\b.*\bcontinued\b"))
    expect(card).to_contain_text(".claude/rules/typescript.md loaded for the model")
    head = card.locator(":scope > .ev-head")
    expect(head).to_have_css("opacity", "1")
    expect(head.locator(".permalink")).to_be_visible()
    box = head.bounding_box()
    body = card.locator(":scope > .ev-body").bounding_box()
    assert box["height"] < 30, f"the head wrapped: {box['height']}px tall"
    assert box["y"] + box["height"] <= body["y"] + 6, (box, body)
    assert page.problems == []


def test_a_permalink_to_a_folded_result_lands_on_its_call(live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 500})
    page.goto(f"{live_server.url}/s/{CC}/m/00000000-0000-4000-8000-000000000005")
    expect(page.locator("#m-00000000-0000-4000-8000-000000000005")).to_be_hidden()  # folded
    result = page.locator("#tc-toolu_task_explore-result")
    expect(result).to_have_class(re.compile(r"\btarget\b"))
    expect(result).to_be_in_viewport()
    expect(result).to_contain_text("Two callers")
    assert page.problems == []


def test_live_means_being_written_and_the_stream_state_is_apart(tmp_path, serve, watched_page):
    root = tmp_path / "root"
    path = quiet_copy(SESSIONS / TOUR, root / TOUR) / "messages.jsonl"  # last written long ago
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/{TOUR}")
    state = page.locator("#live-state")
    expect(state).to_have_attribute("data-state", "live")  # the stream is connected…
    expect(state).to_have_text("connected")
    badge = page.locator("#session-live")
    expect(badge).to_be_hidden()  # …but the session is not being written
    assert page.get_by_text(re.compile(r"^\W*live$")).filter(visible=True).count() == 0
    with open(path, "a") as f:  # a write: now it is
        f.write(json.dumps({"type": "assistant", "content": "still going", "session_id": "s",
                            "timestamp": time.time(), "message_id": "live-now"}) + "\n")
    expect(page.locator("#m-live-now")).to_be_attached()
    expect(badge).to_be_visible()
    expect(badge).to_have_text("live")
    assert page.problems == []


def test_live_ends_when_the_writing_stops(tmp_path, serve, watched_page):
    root = tmp_path / "root"
    path = quiet_copy(SESSIONS / TOUR, root / TOUR) / "messages.jsonl"
    written = time.time() - 52  # eight seconds of "live" left
    os.utime(path, (written, written))
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/{TOUR}")
    badge = page.locator("#session-live")
    expect(badge).to_be_visible()
    expect(badge).to_be_hidden(timeout=20_000)  # nothing written for a minute: no longer live
    assert time.time() - written >= 59
    assert page.problems == []


def test_a_long_read_result_is_highlighted_when_the_reader_reaches_it(tmp_path, serve, watched_page):
    """A long file read comes plain with the page and turns highlighted once it is in view (the
    first screen does not wait for Pygments); one further down waits until it is scrolled to."""
    from test_reading import call_and_result, cc_line, write_session

    def code(name):
        return "".join(f"{i:>6}→def {name}{i}(): return '<b>{i}</b>'\n" for i in range(1, 400))

    records = [cc_line(1, "user", "Read both."),
               *call_and_result("Read", {"file_path": "/w/a.py"}, code("f"), n=2)]
    records += [cc_line(n, "user" if n % 2 else "assistant", [{"type": "text", "text": f"step {n}"}])
                for n in range(4, 34)]  # a screen or two further down, in the same window
    records += call_and_result("Read", {"file_path": "/w/b.py"}, code("g"), n=34)
    path = write_session(tmp_path / "root" / "s", records)
    os.utime(path, (time.time() - 3600,) * 2)  # finished: it opens at its start
    srv = serve(tmp_path / "root")
    page = watched_page
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{srv.url}/s/s")
    first = page.locator("#tc-toolu_Read_2-result")
    expect(first.locator("pre.hl .k").first).to_have_text("def")  # highlighted, in place
    expect(first.locator(".hl-later")).to_have_count(0)
    expect(first.locator("pre.hl .ln").first).to_have_text("1")
    assert first.locator("b").count() == 0  # the file's markup is text, never elements
    expect(first).to_contain_text("return '<b>1</b>'")
    second = page.locator("#tc-toolu_Read_34-result")
    expect(second.locator(".hl-later")).to_have_count(1)  # not reached yet: plain
    second.scroll_into_view_if_needed()
    expect(second.locator("pre.hl .k").first).to_have_text("def")
    expect(second.locator(".hl-later")).to_have_count(0)
    second.locator("a.show-all").click()  # "show all" of it: every line, highlighted
    expect(second.locator("pre.hl .ln").last).to_have_text("399")
    expect(second.locator("pre.hl .nf").last).to_have_text("g399")
    assert page.problems == []


def test_a_result_written_again_shows_where_it_is_and_links_to_its_call(tmp_path, serve, watched_page):
    """A call's result written twice, the second differing, then a word-for-word copy: the call's
    card shows the first; the second shows its own output under "another result of", linked to
    the call; the copy says so in one line, its output not drawn again."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "chat.json").write_text(json.dumps([
        {"role": "user", "content": "Run the tests."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "shell", "arguments": json.dumps({"command": "pytest -q"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "first run: 2 failed"},
        {"role": "tool", "tool_call_id": "call_1", "content": "second run: all passed"},
        {"role": "tool", "tool_call_id": "call_1", "content": "first run: 2 failed"},
        *({"role": "assistant", "content": f"Note {i}: " + "words " * 60} for i in range(30))]))
    os.utime(root / "chat.json", (1_700_000_000, 1_700_000_000))  # (a finished session)
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 700})
    page.goto(serve(root).url + "/s/chat")
    expect(page.locator("#m-L2 .tool")).to_contain_text("first run: 2 failed")
    second = page.locator("#m-L4 .tool.again")
    expect(second).to_contain_text("another result of shell")
    expect(second.locator(".tool-result")).to_contain_text("second run: all passed")
    copy = page.locator("#m-L5 .tool.again")
    expect(copy).to_contain_text("written again")
    expect(copy.locator(".tool-result")).to_have_count(0)
    expect(page.get_by_text("first run: 2 failed", exact=True)).to_have_count(1)
    page.locator("#m-L30").scroll_into_view_if_needed()
    second.get_by_role("link", name="shell").click()
    expect(page.locator("#m-L2")).to_be_in_viewport()
    assert page.problems == []


def _pytest_output(passed: int, failed: list[str], secs: str) -> str:
    lines = [f"tests/test_{n}.py::test_{n} PASSED" for n in ("api", "cli", "db", "models", "views")]
    lines += [f"tests/test_{n}.py::test_{n} FAILED" for n in failed]
    lines += ["", "=" * 20 + f" {len(failed)} failed, {passed} passed in {secs}s " + "=" * 20]
    return "\n".join(lines)


def test_a_result_written_again_with_a_small_change_shows_what_changed(tmp_path, serve, watched_page):
    """A rerun whose output changed in a line or two: the second result shows a diff against the
    first (what its call's card shows), not the whole output again; the whole output is a click
    away. A result that changed throughout is still drawn whole."""
    root = tmp_path / "root"
    root.mkdir()
    first = _pytest_output(5, ["cache"], "1.20")
    rerun = first.replace("test_cache FAILED", "test_cache PASSED").replace(
        " 1 failed, 5 passed in 1.20s ", " 6 passed in 1.31s ")
    (root / "chat.json").write_text(json.dumps([
        {"role": "user", "content": "Run the tests."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "shell", "arguments": json.dumps({"command": "pytest -v"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": first},
        {"role": "tool", "tool_call_id": "call_1", "content": rerun},
        {"role": "tool", "tool_call_id": "call_1", "content": "something else entirely\n" * 5}]))
    os.utime(root / "chat.json", (1_700_000_000, 1_700_000_000))
    for width, scheme in ((1400, "light"), (420, "dark")):
        page = watched_page
        page.set_viewport_size({"width": width, "height": 900})
        page.emulate_media(color_scheme=scheme)
        page.goto(serve(root).url + "/s/chat")
        again = page.locator("#m-L4 .tool.again")
        expect(again).to_contain_text("what changed from the first")
        expect(again.locator(".diff tr.del")).to_have_count(2)
        expect(again.locator(".diff tr.add")).to_have_count(2)
        expect(again.locator(".diff tr.del").first).to_contain_text("test_cache FAILED")
        expect(again.locator(".diff tr.add").first).to_contain_text("test_cache PASSED")
        expect(again.locator(".diff tr.add").last).to_contain_text("6 passed in 1.31s")
        # the unchanged lines far from a change are not drawn again; the whole output is folded
        expect(again.locator(".diff")).not_to_contain_text("test_api.py")
        whole = again.locator("details.again-whole")
        expect(whole.locator(".tool-result")).to_be_hidden()
        whole.locator("summary").click()
        expect(whole.locator(".tool-result")).to_contain_text("tests/test_api.py::test_api PASSED")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        other = page.locator("#m-L5 .tool.again")  # changed throughout: drawn whole, no diff
        expect(other.locator(".diff")).to_have_count(0)
        expect(other.locator(".tool-result")).to_contain_text("something else entirely")
    assert page.problems == []
