"""The find features as a demanding user meets them, in real Chromium against a live server: a
message's link seen at rest and tapped on a touch screen (a continued block's after a tap), the list's long titles at laptop widths,
the outline and the filter menu by keyboard, `n` and `e` through more matches than one stream
holds and in a filtered view, the focus kept when the search closes, and a phone's jumps clear
of the results."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from conftest import CORPUS, quiet_copy
from test_browser_find import big, open_big, rec, write  # noqa: F401  (big is a fixture)

pytestmark = pytest.mark.browser

SUBAGENTS = "worktrees-subagents"  # a real Claude Code session with streamed (continued) blocks

# the product of the opacities of an element and its ancestors: what the eye gets of it
SEEN = """el => { let o = 1; for (let e = el; e; e = e.parentElement) o *= +getComputedStyle(e).opacity;
                  return o; }"""


@pytest.fixture
def subagents(tmp_path):
    return quiet_copy(CORPUS / "claude-code" / SUBAGENTS, tmp_path / "root" / SUBAGENTS).parent


def test_a_message_link_shows_at_rest_without_hovering(subagents, serve, browser):
    srv = serve(subagents)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{srv.url}/s/{SUBAGENTS}")
    page.mouse.move(0, 0)  # over no card
    card = page.locator("#timeline > li.ev:not(.continued):visible").first
    link = card.locator(".ev-head .permalink")
    expect(link).to_be_visible()
    assert link.evaluate(SEEN) == 1, "the message's link is faded until the card is hovered"
    context.close()


def test_a_touch_screen_shows_and_opens_the_link_of_every_message(subagents, serve, browser):
    srv = serve(subagents)
    context = browser.new_context(viewport={"width": 420, "height": 850}, has_touch=True,
                                  is_mobile=True)
    page = context.new_page()
    page.goto(f"{srv.url}/s/{SUBAGENTS}")
    assert page.evaluate("matchMedia('(hover: none) and (pointer: coarse)').matches")
    # a message's own head: its link seen at rest, as there is no hover to bring it up
    first = page.locator("#timeline > li.ev:not(.continued):visible").first.locator(".ev-head .permalink")
    assert first.evaluate(SEEN) == 1, "a message's link cannot be seen"
    # the next block of a streamed message: its head hidden at rest, as on a desktop (a head on
    # every block cluttered the phone's screen), brought up by a tap on the block
    continued = page.locator("#timeline > li.ev.continued:visible")
    expect(continued.first).to_be_attached()
    assert continued.count() >= 3
    for i in range(3):
        link = continued.nth(i).locator(".ev-head .permalink")
        link.scroll_into_view_if_needed()
        assert link.evaluate(SEEN) == 0, f"continued block {i}: its head shows at rest"
    card = continued.nth(1)
    target_id = card.get_attribute("id")
    card.locator(".ev-body").tap(position={"x": 5, "y": 5})
    expect(card).to_have_class(re.compile(r"\bhead-shown\b"))
    assert card.locator(".ev-head .permalink").evaluate(SEEN) == 1, "a tap does not show the head"
    assert continued.nth(0).locator(".ev-head .permalink").evaluate(SEEN) == 0  # only that block's
    continued.nth(0).locator(".ev-body").tap(position={"x": 5, "y": 5})  # another block: its head
    assert continued.nth(0).locator(".ev-head .permalink").evaluate(SEEN) == 1
    assert card.locator(".ev-head .permalink").evaluate(SEEN) == 0  # and the first one goes
    card.locator(".ev-body").tap(position={"x": 5, "y": 5})
    card.locator(".ev-head .permalink").tap()
    expect(page).to_have_url(re.compile(f"/s/{SUBAGENTS}/m/{target_id[2:]}"))
    expect(page.locator(f"#{target_id}")).to_have_class(re.compile(r"\btarget\b"))
    expect(page.locator(f"#{target_id}")).to_be_in_viewport()
    context.close()


LONG_TITLE = ("Please go through every module of the service and rename the old configuration key "
              "to the new one, update the documentation, the changelog and the tests, then run them")


@pytest.mark.parametrize("width", [1400, 1250, 1024, 960])
def test_long_titles_in_the_list_take_two_lines_at_most(tmp_path, serve, browser, width):
    root = tmp_path / "root"
    for n in range(3):
        folder = root / f"project-{n}"
        folder.mkdir(parents=True)
        base = {"sessionId": f"s{n}", "isSidechain": False, "timestamp": "2025-10-21T10:00:00.000Z"}
        lines = [{**base, "type": "user", "uuid": "u1",
                  "message": {"role": "user", "content": f"{LONG_TITLE} ({n})"}},
                 {**base, "type": "assistant", "uuid": "u2", "message": {
                     "id": "m1", "role": "assistant", "model": "claude-opus-4-6",
                     "content": [{"type": "text", "text": "Done."}],
                     "usage": {"input_tokens": 1200, "output_tokens": 80}}}]
        (folder / "session.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(serve(root).url + "/")
    titles = page.locator("table.sessions td.title > a")
    expect(titles).to_have_count(3)
    for i in range(3):
        link = titles.nth(i)
        expect(link).to_have_attribute("title", re.compile(re.escape(LONG_TITLE)))  # the whole of it
        expect(link).to_have_text(re.compile(r" \w+…$"))  # cut between words, and saying so
    # measured in one script turn over the rows as they are then: the list swaps its rows in when
    # an index finishes, and a row measured while it is swapped away has no line height (NaN)
    heights = page.evaluate("""() => [...document.querySelectorAll("table.sessions td.title > a")]
        .map(a => a.getBoundingClientRect().height / parseFloat(getComputedStyle(a).lineHeight))""")
    assert len(heights) == 3 and all(round(n) <= 2 for n in heights), f"lines per title at {width} px: {heights}"
    context.close()


def test_a_long_title_in_the_search_results_is_cut_between_words_and_says_so(tmp_path, serve, page):
    folder = tmp_path / "root" / "project"
    folder.mkdir(parents=True)
    base = {"sessionId": "s", "isSidechain": False, "timestamp": "2025-10-21T10:00:00.000Z"}
    (folder / "session.jsonl").write_text(json.dumps(
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": LONG_TITLE}}) + "\n")
    srv = serve(tmp_path / "root")
    for _ in range(600):  # the full-text index is built in the background: wait for it to be done
        if page.request.get(srv.url + "/search.json?q=changelog").json()["total"]:
            break
    page.goto(srv.url + "/search?q=changelog")
    title = page.locator("a.result-title")
    expect(title).to_have_text(re.compile(r" \w+…$"))
    expect(title).to_have_attribute("title", LONG_TITLE)


def test_o_puts_the_focus_on_a_turn_arrows_walk_the_outline_and_escape_gives_it_back(
        big, serve, watched_page):  # noqa: F811
    page = watched_page
    open_big(serve, page, big)
    page.keyboard.press("o")  # the outline loads now: the focus waits for its turns
    turns = page.locator("#outline-menu a.turn")
    expect(turns.first).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(turns.nth(2)).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(turns.nth(1)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#m-m2")).to_have_class(re.compile(r"\btarget\b"))
    expect(page.locator("#m-m2")).to_be_in_viewport()
    # closed and opened again, the focus is on the turn the reader is in
    expect(page.locator("#m-m2")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#outline-menu .menu-body")).to_be_hidden()
    page.keyboard.press("o")
    expect(turns.nth(1)).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#outline-menu .menu-body")).to_be_hidden()
    expect(page.locator("#outline-menu summary")).to_be_focused()  # not lost to the page
    assert page.problems == []


def test_n_past_the_matches_found_so_far_searches_on_and_says_where_it_is(
        big, serve, watched_page, monkeypatch):  # noqa: F811
    from viewer.web import find
    monkeypatch.setattr(find, "STREAM_HITS", 40)  # one stream stops at 40 hits: the session has 600
    page = watched_page
    open_big(serve, page, big)
    page.keyboard.press("/")
    page.keyboard.type("message number")
    page.keyboard.press("Enter")
    hits = page.locator("#hits li.hit")
    expect(hits).to_have_count(40)
    status = page.locator("#find-status")
    expect(status).to_contain_text("so far")  # the list says it stops, and offers to go on
    expect(status).to_contain_text("The list stops here")
    expect(status.locator("a.find-more")).to_have_text("Search on")
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    expect(page.locator("#find-toast")).to_have_text("Match 1 of 40 so far")
    expect(page.locator("#m-m0 mark.hit").first).to_be_in_viewport()
    page.keyboard.press("N")  # back past the first: not to the last found, which is not the last
    expect(page.locator("#find-toast")).to_have_text(
        "First match: the last is not found yet (40 so far)")
    expect(page.locator("#m-m0")).to_have_class(re.compile(r"\btarget\b"))  # it stays there
    for _ in range(39):
        page.keyboard.press("n")
    expect(page.locator("#find-toast")).to_have_text("Match 40 of 40 so far")
    last = hits.nth(39).get_attribute("data-id")
    expect(page.locator(f"#m-{last}")).to_have_class(re.compile(r"\btarget\b"))
    page.keyboard.press("n")  # on past the last found: the search goes on, not back to the first
    expect(hits).to_have_count(80)
    expect(page.locator("#find-toast")).to_have_text(re.compile(r"^Match 41 of (4[1-9]|[5-7]\d|80) so far$"))
    nxt = hits.nth(40).get_attribute("data-id")
    assert nxt != hits.nth(0).get_attribute("data-id")
    expect(page.locator(f"#m-{nxt}")).to_have_class(re.compile(r"\btarget\b"))
    expect(page.locator(f"#m-{nxt} mark.hit").first).to_be_in_viewport()
    assert page.problems == []


def test_e_in_a_filtered_view_steps_through_that_view_s_errors(tmp_path, serve, watched_page):
    records = []
    for i in range(300):
        failing = {51: "Bash", 151: "Read", 251: "Bash"}.get(i)
        records.append(rec(i, f"message number {i}", **({"metadata": {"tool_uses": [
            {"id": f"t{i}", "name": failing, "input": {"command": f"step {i}"}}]}} if failing else {})))
        if failing:
            records.append({"type": "user", "content": "Tool results: 1", "session_id": "s",
                            "message_id": f"r{i}", "timestamp": 1761073190.0 + i * 10 + 5,
                            "metadata": {"tool_results": [{"tool_use_id": f"t{i}", "is_error": True,
                                                           "content": f"step {i} failed"}]}})
    write(tmp_path / "sessions" / "mixed", records)
    page = watched_page
    open_big(serve, page, tmp_path / "sessions", "/s/mixed?tool=Bash")
    page.keyboard.press("e")
    expect(page.locator("#find-toast")).to_have_text("Error 1 of 2 in this view")
    expect(page.locator("#m-m51")).to_have_class(re.compile(r"\btarget\b"))
    page.keyboard.press("e")  # past the failed Read, which this view does not show
    expect(page.locator("#find-toast")).to_have_text("Error 2 of 2 in this view")
    expect(page.locator("#m-m251")).to_have_class(re.compile(r"\btarget\b"))
    expect(page.locator("#m-m251")).to_be_in_viewport()
    expect(page).to_have_url(re.compile(r"tool=Bash"))
    page.keyboard.press("e")
    expect(page.locator("#find-toast")).to_have_text("No more errors after this point")
    page.keyboard.press("E")
    expect(page.locator("#find-toast")).to_have_text("Error 1 of 2 in this view")
    assert page.problems == []


def test_closing_the_search_results_gives_the_focus_to_the_search_field(big, serve, watched_page):  # noqa: F811
    page = watched_page
    open_big(serve, page, big)
    page.keyboard.press("/")
    page.keyboard.type("zanzibar")
    page.keyboard.press("Enter")
    expect(page.locator("#hits li.hit")).to_have_count(2)
    page.locator("#find-close").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#find-results")).to_be_hidden()
    expect(page.locator("#find-q")).to_be_focused()  # not the page's start, where Tab began again
    expect(page.locator("#find-q")).to_have_value("")
    assert page.problems == []


def test_j_and_k_on_a_page_opened_at_a_message_go_on_from_that_message(big, serve, watched_page):  # noqa: F811
    page = watched_page
    open_big(serve, page, big, "/s/big/m/m200")
    expect(page.locator("#m-m200")).to_be_in_viewport()
    page.keyboard.press("j")
    expect(page.locator("#timeline li.ev.current")).to_have_id("m-m201")
    page.goto(page.url)
    expect(page.locator("#m-m200")).to_have_class(re.compile(r"\btarget\b"))
    page.keyboard.press("k")
    expect(page.locator("#timeline li.ev.current")).to_have_id("m-m199")
    assert page.problems == []


@pytest.mark.parametrize("cut", [False, True])
def test_on_a_phone_the_match_sits_in_the_middle_of_the_room_above_the_results(
        tmp_path, serve, browser, cut):
    """The results cover the lower half of a phone's screen: a match (or, past the cut of a long
    result, the note and its "show all") is put in the middle of what is left above them."""
    # twenty more matches further on: the results fill the lower half of the screen
    records = [rec(i, f"message number {i}" + (" quokka" if (i == 30 and not cut) or i >= 40 else ""))
               for i in range(60)]
    records[31:31] = [rec(31, "running them", metadata={"tool_uses": [
        {"id": "t1", "name": "Bash", "input": {"command": "make test"}}]}),
        {"type": "user", "content": "Tool results: 1", "session_id": "s", "message_id": "r1",
         "timestamp": 1761073190.0 + 315, "metadata": {"tool_results": [
             {"tool_use_id": "t1", "content": "ok line\n" * 3000 + ("one quokka failed\n" if cut else "")}]}}]
    write(tmp_path / "sessions" / "s", records)
    srv = serve(tmp_path / "sessions")
    context = browser.new_context(viewport={"width": 420, "height": 850}, has_touch=True,
                                  is_mobile=True)
    page = context.new_page()
    page.goto(srv.url + "/s/s")
    page.locator("#find-q").tap()
    page.keyboard.type("quokka")
    page.keyboard.press("Enter")
    expect(page.locator("#hits li.hit")).to_have_count(21)
    page.locator("#hit-next").tap()
    spot = page.locator(".tool-result.target a.show-all" if cut else "#m-m30 mark.hit.current")
    expect(spot).to_be_in_viewport()
    panel = page.locator("#find-results").bounding_box()
    head = page.locator("header.top").bounding_box()
    top, bottom = head["y"] + head["height"], panel["y"]
    box = spot.bounding_box()
    middle = box["y"] + box["height"] / 2
    assert abs(middle - (top + bottom) / 2) < (bottom - top) / 4, \
        f"the spot's middle {middle} is far from the middle of the room {top}–{bottom}"
    context.close()


def test_the_filter_menu_by_keyboard_down_into_it_and_along_its_values(big, serve, watched_page):  # noqa: F811
    page = watched_page
    open_big(serve, page, big)
    summary = page.locator("#filter-menu summary")
    summary.focus()
    page.keyboard.press("Enter")
    values = page.locator("#filter-menu a.fv")
    expect(values.first).to_be_visible()
    page.keyboard.press("ArrowDown")
    expect(values.first).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(values.nth(1)).to_be_focused()
    page.keyboard.press("Escape")
    expect(summary).to_be_focused()
    assert page.problems == []


def test_a_jump_out_of_a_filtered_view_drops_the_filter_from_the_address(big, serve, watched_page):  # noqa: F811
    page = watched_page
    open_big(serve, page, big, "/s/big?tool=Bash")
    page.locator("#outline-menu summary").click()
    page.locator("#outline-menu a.turn").nth(200).click()  # a prompt: not a Bash call
    expect(page.locator("#m-m400")).to_have_class(re.compile(r"\btarget\b"))
    expect(page).to_have_url(re.compile(r"/s/big/m/m400$"))  # the whole session, as shown
    assert page.problems == []


def test_the_search_page_keeps_the_focus_in_its_box_and_walks_the_matches_by_keyboard(
        tmp_path, serve, watched_page):
    root = tmp_path / "root"
    for n in range(2):
        folder = root / f"project-{n}"
        folder.mkdir(parents=True)
        base = {"sessionId": f"s{n}", "isSidechain": False, "timestamp": "2025-10-21T10:00:00.000Z"}
        lines = [{**base, "type": "user", "uuid": f"u{i}",
                  "message": {"role": "user", "content": f"the wombat number {i} of session {n}"}}
                 for i in range(2)]
        (folder / "session.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    srv = serve(root)
    page = watched_page
    for _ in range(600):  # the full-text index is built in the background: wait for it to be done
        if page.request.get(srv.url + "/search.json?q=wombat").json()["total"] == 2:
            break
    page.goto(srv.url + "/")
    box = page.locator("#search-q")
    box.fill("wombat")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"/search\?q=wombat"))
    snippets = page.locator("#search-results a.snippet")
    expect(snippets).to_have_count(4)
    expect(box).to_be_focused()  # not the page's body: the reader can type on
    page.keyboard.press("Enter")  # the same words: to the first match, as in a session's search
    expect(snippets.nth(0)).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # into the next session's matches
    expect(snippets.nth(2)).to_be_focused()
    page.keyboard.press("n")
    expect(snippets.nth(3)).to_be_focused()
    page.keyboard.press("N")
    page.keyboard.press("ArrowUp")
    expect(snippets.nth(1)).to_be_focused()
    page.keyboard.press("Escape")
    expect(box).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(snippets.nth(0)).to_be_focused()
    page.keyboard.press("ArrowUp")  # up from the first: back to the box
    expect(box).to_be_focused()
    page.keyboard.press("End")
    page.keyboard.type(" number")  # other words: Enter searches them
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"q=wombat\+number"))
    expect(box).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(snippets.nth(0)).to_be_focused()
    page.keyboard.press("Enter")  # a match opens its session at that event
    expect(page).to_have_url(re.compile(r"/s/[^/]+/m/"))
    assert page.problems == []
