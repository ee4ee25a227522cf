"""Finding things in real Chromium: search and `n` into windows that are not loaded, filters, the
outline, every key of the help overlay, and where a session opens."""

import json
import os
import re
import time

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

TOUR = "legion-feature-tour"
N = 600  # messages: far more than one window


def write(folder, records, *, age=3600):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "messages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    if age:
        old = time.time() - age
        os.utime(path, (old, old))
    return path


def rec(i, content, **extra):
    return {"type": "user" if i % 2 == 0 else "assistant", "content": content,
            "timestamp": 1761073190.0 + i * 10, "session_id": "s", "message_id": f"m{i}", **extra}


@pytest.fixture
def big(tmp_path):
    """A finished legion session of 600 messages with a few failing tool calls in it, and one
    rare word ("zanzibar") only in messages 300 and 450."""
    records = []
    for i in range(N):
        text = f"message number {i}"
        if i in (300, 450):
            text += " about zanzibar"
        if i % 2 == 0:
            records.append(rec(i, f"prompt {i}: " + text))
        elif i in (101, 301, 501):
            records.append(rec(i, text, metadata={"tool_uses": [
                {"id": f"t{i}", "name": "Bash", "input": {"command": f"make step{i}"}}]}))
            records.append({"type": "user", "content": "Tool results: 1", "session_id": "s",
                            "message_id": f"r{i}", "timestamp": 1761073190.0 + i * 10 + 5,
                            "metadata": {"tool_results": [{"tool_use_id": f"t{i}", "is_error": True,
                                                           "content": f"step{i} failed"}]}})
        else:
            records.append(rec(i, text))
    records.insert(1, {"type": "system", "content": "Claude Code Launched", "session_id": "s",
                       "timestamp": 1761073190.5, "message_id": "launch",
                       "metadata": {"subtype": "client_launched"}})
    write(tmp_path / "sessions" / "big", records)
    return tmp_path / "sessions"


def open_big(serve, page, big, path="/s/big"):
    srv = serve(big)
    page.set_viewport_size({"width": 1300, "height": 800})
    page.goto(srv.url + path)
    expect(page.locator("#keys-button")).to_be_visible()  # find.js is running
    return srv


def test_n_jumps_to_a_hit_in_a_window_that_is_not_loaded(big, serve, watched_page):
    page = watched_page
    open_big(serve, page, big)
    expect(page.locator("#m-m300")).to_have_count(0)  # not on the page: the session opened at its start
    page.keyboard.press("/")
    expect(page.locator("#find-q")).to_be_focused()
    page.keyboard.type("Zanzibar")
    page.keyboard.press("Enter")
    expect(page.locator("#hits li.hit")).to_have_count(2)
    expect(page.locator("#find-status")).to_contain_text("2 matches in 2 messages")
    page.keyboard.press("Escape")  # leave the field; keys work again
    page.keyboard.press("n")
    target = page.locator("#m-m300")
    expect(target).to_be_in_viewport()
    expect(target).to_have_class(re.compile(r"\btarget\b"))
    expect(target.locator("mark.hit")).to_have_text("zanzibar")
    expect(page).to_have_url(re.compile(r"/s/big/m/m300\?q=Zanzibar$"))
    page.keyboard.press("n")
    expect(page.locator("#m-m450 mark.hit")).to_have_text("zanzibar")
    expect(page.locator("#m-m450")).to_be_in_viewport()
    page.keyboard.press("N")
    expect(page.locator("#m-m300")).to_be_in_viewport()
    expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "m300")
    assert page.problems == []


def test_a_hit_link_opens_at_the_hit_with_the_match_marked(big, serve, watched_page):
    page = watched_page
    open_big(serve, page, big, "/s/big/m/m450?q=zanzibar")
    expect(page.locator("#m-m450")).to_be_in_viewport()
    expect(page.locator("#m-m450 mark.hit.current")).to_have_text("zanzibar")
    expect(page.locator("#hits li.hit")).to_have_count(2)
    expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "m450")
    assert page.problems == []


def test_search_without_javascript_is_a_form_and_a_list_of_links(big, serve, browser):
    srv = serve(big)
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(srv.url + "/s/big")
    page.locator("#find-q").fill("zanzibar")
    page.locator("#find-q").press("Enter")
    expect(page).to_have_url(re.compile(r"\?q=zanzibar"))
    links = page.locator("#hits a.hit-link")
    expect(links).to_have_count(2)
    links.nth(1).click()
    expect(page).to_have_url(re.compile(r"/s/big/m/m450\?q=zanzibar"))
    expect(page.locator("#m-m450 mark.hit")).to_have_text("zanzibar")
    ctx.close()


def test_errors_only(big, serve, watched_page):
    page = watched_page
    open_big(serve, page, big)
    page.locator(".session-head dd.errors a").click()
    expect(page).to_have_url(re.compile(r"\?only=errors$"))
    events = page.locator("#timeline > li.ev")
    expect(events).to_have_count(3)
    expect(events.locator(".state.error")).to_have_count(3)
    expect(page.locator(".filter-bar")).to_contain_text("Showing 3 events")
    # the filter menu: add a second group, remove the first
    page.locator("#filter-menu summary").click()
    expect(page.locator("#filter-menu a.fv.on")).to_have_text(re.compile("errors"))
    page.locator("#filter-menu a.fv", has_text="Bash").click()
    expect(page).to_have_url(re.compile(r"only=errors&tool=Bash"))
    expect(events).to_have_count(3)
    page.locator(".filter-bar a.chip", has_text="errors").click()
    expect(page).to_have_url(re.compile(r"\?tool=Bash$"))
    assert page.problems == []


def test_the_outline_jumps_to_a_turn(big, serve, watched_page):
    page = watched_page
    open_big(serve, page, big)
    page.locator("#outline-menu summary").click()
    turns = page.locator("#outline-menu a.turn")
    expect(turns).to_have_count(N // 2)
    expect(turns.nth(0)).to_contain_text("prompt 0: message number 0")
    expect(turns.nth(50)).to_contain_text("1 call")
    expect(turns.nth(50)).to_contain_text("1 error")
    turns.nth(200).click()
    expect(page.locator("#m-m400")).to_be_in_viewport()
    expect(page.locator("#m-m400")).to_have_class(re.compile(r"\btarget\b"))
    assert page.problems == []


def test_the_minimap_marks_errors_and_opens_them(big, serve, watched_page):
    page = watched_page
    open_big(serve, page, big)
    errors = page.locator("#minimap a.mm-error")
    expect(errors).to_have_count(3)
    errors.nth(1).locator("rect").click()
    expect(page.locator("#m-m301")).to_be_in_viewport()
    assert page.problems == []


# the key of each row of the help overlay, and what pressing it must do
def test_every_key_in_the_help_overlay_does_what_it_says(big, serve, watched_page):
    page = watched_page
    open_big(serve, page, big)
    listed = set(" ".join(page.locator("#keys-help tr[data-keys]").evaluate_all(
        "rows => rows.map(r => r.dataset.keys)")).split())
    assert listed == {"j", "k", "/", "n", "N", "e", "E", "g", "G", "t", "o", "?", "Escape"}

    # ? opens the help, Escape closes it
    page.keyboard.press("?")
    expect(page.locator("#keys-help")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#keys-help")).to_be_hidden()

    # j / k move a visible focus from message to message
    page.keyboard.press("j")
    first = page.locator("#timeline li.ev.current")
    expect(first).to_have_id("m-m0")
    expect(first).to_be_focused()
    page.keyboard.press("j")
    expect(page.locator("#timeline li.ev.current")).to_have_id("m-m1")
    page.keyboard.press("k")
    expect(page.locator("#timeline li.ev.current")).to_have_id("m-m0")

    # t shows and hides the hidden events
    launch = page.locator("#m-launch")
    expect(launch).to_be_hidden()
    page.keyboard.press("t")
    expect(launch).to_be_visible()
    page.keyboard.press("t")
    expect(launch).to_be_hidden()

    # o opens and closes the outline
    page.keyboard.press("o")
    expect(page.locator("#outline-menu a.turn").first).to_be_visible()
    page.keyboard.press("o")
    expect(page.locator("#outline-menu .menu-body")).to_be_hidden()

    # e / E step through the errors, loading their windows
    page.keyboard.press("e")
    expect(page.locator("#m-m101")).to_be_in_viewport()
    page.keyboard.press("e")
    expect(page.locator("#m-m301")).to_be_in_viewport()
    page.keyboard.press("E")
    expect(page.locator("#m-m101")).to_be_in_viewport()

    # G goes to the end of the session, g back to its start with the header in view
    page.keyboard.press("G")
    expect(page.locator(f"#m-m{N - 1}")).to_be_in_viewport()
    page.keyboard.press("g")
    expect(page.locator(".session-head h1")).to_be_in_viewport()
    expect(page.locator("#m-m0")).to_be_attached()

    # / goes to the search field; n and N step through the matches
    page.keyboard.press("/")
    expect(page.locator("#find-q")).to_be_focused()
    page.keyboard.type("zanzibar")
    page.keyboard.press("Enter")
    expect(page.locator("#hits li.hit")).to_have_count(2)
    page.keyboard.press("Escape")  # Escape leaves the field…
    expect(page.locator("#find-q")).not_to_be_focused()
    page.keyboard.press("n")
    expect(page.locator("#m-m300 mark.hit")).to_be_in_viewport()
    page.keyboard.press("n")
    expect(page.locator("#m-m450 mark.hit")).to_be_in_viewport()
    page.keyboard.press("N")
    expect(page.locator("#m-m300 mark.hit")).to_be_in_viewport()
    page.keyboard.press("Escape")  # …and then closes the search
    expect(page.locator("#find-results")).to_be_hidden()
    expect(page.locator("mark.hit")).to_have_count(0)

    # never while typing: in the field, letters are text
    page.keyboard.press("/")
    page.keyboard.type("jkneg")
    expect(page.locator("#find-q")).to_have_value("jkneg")
    assert page.problems == []


def test_a_finished_session_opens_at_its_header(big, serve, watched_page):
    page = watched_page
    open_big(serve, page, big)
    expect(page.locator(".session-head h1")).to_be_in_viewport()
    expect(page.locator("#m-m0")).to_be_in_viewport()
    assert page.evaluate("window.scrollY") == 0
    expect(page.locator("#follow")).to_have_count(0)  # nothing to follow at the start


def test_a_live_session_opens_at_its_end_following(tmp_path, serve, watched_page):
    write(tmp_path / "sessions" / "live", [rec(i, f"message number {i}") for i in range(200)], age=0)
    page = watched_page
    srv = serve(tmp_path / "sessions")
    page.set_viewport_size({"width": 1300, "height": 800})
    page.goto(srv.url + "/s/live")
    expect(page.locator("#m-m199")).to_be_in_viewport()
    expect(page.locator("#follow")).to_be_checked()
    expect(page.locator(".session-head h1")).not_to_be_in_viewport()


CC = "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"


def test_n_opens_the_collapsed_subagent_thread_that_holds_the_hit(live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1300, "height": 800})
    page.goto(f"{live_server.url}/s/{CC}")
    expect(page.locator("#keys-button")).to_be_visible()
    details = page.locator("details.subthread")
    expect(details).not_to_have_attribute("open", "")
    page.locator("#find-q").fill("rows = window")
    page.locator("#find-q").press("Enter")
    hits = page.locator("#hits li.hit")
    expect(hits.first).to_be_visible()
    sub_hit = page.locator("#hits li.hit", has=page.locator(".hit-thread"))
    expect(sub_hit.first).to_be_visible()
    sub_hit.first.locator("a").click()
    target_id = sub_hit.first.get_attribute("data-id")
    # the hit is a Grep result: it is read in the card of its call, inside the sub-agent thread
    shown = page.locator(f'.tool-result[data-result-event="{target_id}"]')
    expect(details).to_have_attribute("open", "")
    expect(shown.locator("mark.hit").first).to_be_in_viewport()
    expect(shown.locator("mark.hit").first).to_have_text(re.compile("rows = window", re.I))
    expect(shown).to_have_class(re.compile(r"\btarget\b"))
    assert page.problems == []


def test_expand_all_and_collapse_all(live_server, watched_page):
    page = watched_page
    page.goto(f"{live_server.url}/s/{TOUR}")
    thinking = page.locator("#m-tour-read details.thinking")
    output = page.locator("#m-tour-bash .tool-result pre").first
    expect(thinking).not_to_have_attribute("open", "")
    page.locator("#expand-all").click()
    expect(thinking).to_have_attribute("open", "")
    page.locator("#collapse-all").click()
    expect(thinking).not_to_have_attribute("open", "")
    expect(output).to_be_hidden()  # outputs fold to one quiet line
    page.locator("#expand-all").click()
    expect(output).to_be_visible()
    assert page.problems == []


def test_escape_leaves_the_search_field_without_clearing_it(big, serve, watched_page):
    """The search as you type lists the hits while the focus stays in the field (no Enter: once
    the hits of what the field says are listed, Enter goes to the first and leaves the field, and
    Escape would then close them — on a loaded host the typing's search could come back before
    an Enter pressed at once)."""
    page = watched_page
    open_big(serve, page, big)
    page.locator("#find-q").fill("zanzibar")
    expect(page.locator("#hits li.hit")).to_have_count(2)
    expect(page.locator("#find-q")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#find-q")).to_have_value("zanzibar")  # so no input event closes them
    expect(page.locator("#find-q")).not_to_be_focused()
    expect(page.locator("#find-results")).to_be_visible()
    page.keyboard.press("n")
    expect(page.locator("#m-m300 mark.hit")).to_be_in_viewport()


def test_n_marks_a_result_read_in_the_card_of_its_call(big, serve, watched_page):
    """The call card is on the page, drawn before the search: `n` redraws it with the match marked
    in the result folded into it."""
    page = watched_page
    open_big(serve, page, big, "/s/big/m/m101")
    expect(page.locator("#m-r101")).to_have_class(re.compile(r"\bfolded\b"))
    result = page.locator('.tool-result[data-result-event="r101"]')
    expect(result).to_be_visible()
    page.locator("#find-q").fill("step101 failed")
    page.locator("#find-q").press("Enter")
    expect(page.locator("#hits li.hit")).to_have_count(1)
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    mark = result.locator("mark.hit.current")
    expect(mark).to_have_text("step101 failed")
    expect(mark).to_be_in_viewport()
    expect(result).to_have_class(re.compile(r"\btarget\b"))
    expect(page).to_have_url(re.compile(r"/s/big/m/r101\?q=step101\+failed$"))
    assert page.problems == []


def write_cut(folder, n=120):
    """Session "cut": a Bash call whose result holds 3,000 lines, "quokka" only on the last one
    (past the cut the card draws), then messages up to number n."""
    records = [rec(0, "prompt 0: run the tests"),
               rec(1, "running them", metadata={"tool_uses": [
                   {"id": "t1", "name": "Bash", "input": {"command": "make test"}}]}),
               {"type": "user", "content": "Tool results: 1", "session_id": "s", "message_id": "r1",
                "timestamp": 1761073190.0 + 15, "metadata": {"tool_results": [
                    {"tool_use_id": "t1", "content": "ok line\n" * 3000 + "one quokka failed\n"}]}}]
    records += [rec(i, f"message number {i}") for i in range(2, n)]
    write(folder / "cut", records)


def test_n_to_a_match_past_the_cut_of_a_long_result_shows_its_note(tmp_path, serve, watched_page):
    write_cut(tmp_path / "sessions")
    page = watched_page
    open_big(serve, page, tmp_path / "sessions", "/s/cut")
    page.locator("#find-q").fill("quokka")
    page.locator("#find-q").press("Enter")
    expect(page.locator("#hits li.hit")).to_have_count(1)
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    result = page.locator('.tool-result[data-result-event="r1"]')
    expect(result).to_have_class(re.compile(r"\btarget\b"))
    note = result.locator(".hit-note")
    expect(note).to_have_text("The search matches in the part not shown.")
    expect(note).to_be_in_viewport()
    result.locator("a.show-all").focus()
    page.keyboard.press("Enter")  # show all, by keyboard: the match is there, marked, in view
    mark = result.locator("mark.hit")
    expect(mark).to_have_text("quokka")
    expect(mark).to_have_class(re.compile(r"\bcurrent\b"))
    expect(mark).to_be_in_viewport()  # not 3,000 lines below
    expect(result.locator(".cuttable")).to_be_focused()  # not lost to the page
    assert page.problems == []


def cc(i, kind, content, agent=None, **extra):
    r = {"type": kind, "uuid": f"00000000-0000-4000-8000-{i:012d}", "sessionId": "c0ffee",
         "timestamp": f"2026-04-18T13:{i // 60:02d}:{i % 60:02d}.000Z", "isSidechain": bool(agent),
         "message": {"role": kind, "content": content}, **extra}
    if agent:
        r["agentId"] = agent
    return r


def test_n_opens_a_thread_no_call_links_to(tmp_path, serve, watched_page):
    """A compaction agent's transcript hangs from no call: a hit in it shows its window in the
    page, said to be apart, with the way back."""
    folder = tmp_path / "sessions" / "proj"
    folder.mkdir(parents=True)
    main = [cc(i, "user" if i % 2 == 0 else "assistant",
               f"main message {i}" if i % 2 == 0 else [{"type": "text", "text": f"reply {i}"}])
            for i in range(1, 120)]
    (folder / "c0ffee.jsonl").write_text("".join(json.dumps(r) + "\n" for r in main))
    sub = folder / "c0ffee" / "subagents"
    sub.mkdir(parents=True)
    comp = [cc(500 + i, "user" if i % 2 == 0 else "assistant",
               f"summarise step {i}" + (" with the walrus detail" if i == 30 else ""), agent="acompact-1f2e")
            for i in range(60)]
    (sub / "agent-acompact-1f2e.jsonl").write_text("".join(json.dumps(r) + "\n" for r in comp))
    old = time.time() - 3600
    for p in (folder / "c0ffee.jsonl", sub / "agent-acompact-1f2e.jsonl"):
        os.utime(p, (old, old))
    page = watched_page
    open_big(serve, page, tmp_path / "sessions", "/s/proj~c0ffee")
    page.locator("#find-q").fill("walrus")
    page.locator("#find-q").press("Enter")
    expect(page.locator("#hits li.hit")).to_have_count(1)
    expect(page.locator("#hits .hit-thread")).to_contain_text("compaction")
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    mark = page.locator("#timeline mark.hit.current")
    expect(mark).to_have_text("walrus")
    expect(mark).to_be_in_viewport()
    apart = page.locator("#thread-apart")
    expect(apart).to_contain_text("compaction")
    expect(apart).to_contain_text("not linked to a call")
    expect(page.locator("#live")).to_have_count(0)  # the main thread's stream is not appended here
    apart.locator("a", has_text="back to the main thread").click()
    expect(page.locator("#thread-apart")).to_have_count(0)
    expect(page.locator("#timeline li.ev").first).to_contain_text("reply 1")
    assert page.problems == []


def test_the_open_outline_sits_beside_the_timeline_on_a_wide_screen(live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1400, "height": 800})
    page.goto(f"{live_server.url}/s/legion-feature-tour")
    main = page.locator("main")
    left = main.bounding_box()["x"]
    page.locator("#outline-menu summary").click()
    body = page.locator("#outline-menu .menu-body")
    expect(page.locator("#outline-menu a.turn").first).to_be_visible()
    # the timeline moved over to make room: nothing of it is under the outline
    expect(page.locator("body")).to_have_class(re.compile(r"\boutline-menu-open\b"))
    assert main.bounding_box()["x"] >= body.bounding_box()["x"] + body.bounding_box()["width"] > left
    page.locator("#outline-menu summary").click()
    expect(body).to_be_hidden()
    expect(page.locator("body")).not_to_have_class(re.compile(r"\boutline-menu-open\b"))
    assert main.bounding_box()["x"] == left
