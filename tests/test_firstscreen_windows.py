"""What a first screen holds is completed when the index is done — and only that.

A page drawn before its session's index (web/early.py) reads more of the file than it shows; once
the index is done its stream sends the updates of the cards the page holds, not of every card of
what it read (a permalink into 6 MB of calls of one reused id was sent 1.7 MB of cards for a page
of 140 KB). A window loaded next to it meanwhile ("Load earlier") is drawn at once from the lines
before the page's, not after the whole pass, and its cards are completed in place too.

The background build is held by a listener until the test releases it: nothing sleeps."""

import json
import os
import re

import pytest
from playwright.sync_api import Error as PlaywrightError, expect

from conftest import Hold, LiveServer, held_app, stream_open, write_claude_session

TURNS = 60  # calls near the end whose results all come in the file's last lines


def line(**rec):
    return json.dumps({"sessionId": "big", "timestamp": "2025-10-21T10:00:00.000Z", **rec}) + "\n"


@pytest.fixture(scope="module")
def tailcalls(tmp_path_factory):
    """8 MB of Claude Code (past the size indexed in the background) that ends with TURNS turns of
    a prompt, a call and a line without an id, whose results all come in the last line but one."""
    root = tmp_path_factory.mktemp("windows") / "sessions"
    path = root / "big.jsonl"
    write_claude_session(path, 8 << 20, old=False)
    with open(path, "a") as f:
        for i in range(TURNS):
            f.write(line(type="user", uuid=f"w-{i}-p", message={"role": "user", "content": f"Check {i}"}))
            f.write(line(type="assistant", uuid=f"w-{i}-c", message={
                "id": f"msg_w{i}", "role": "assistant", "model": "claude-opus-4-6", "content": [
                    {"type": "tool_use", "id": f"toolu_w{i}", "name": "Bash",
                     "input": {"command": f"check {i}"}}]}))
            f.write(line(type="system", subtype="informational", content=f"note {i}"))  # no uuid
        f.write(line(type="user", uuid="w-results", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_w{i}", "content": f"check {i} passed"}
            for i in range(TURNS)]}))
        f.write(line(type="assistant", uuid="w-end", message={
            "id": "msg_end", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "Every check passed."}]}))
    os.utime(path, (1_700_000_000, 1_700_000_000))  # a finished session
    return root, path


@pytest.fixture
def app(tailcalls, tmp_path):
    yield from held_app(tailcalls[0], tmp_path)


def get(client, url, **kw):
    r = client.get(url, **kw)
    r.close()  # (the background build starts once the page is sent)
    return r


def test_an_earlier_window_is_drawn_before_the_index_and_completed_once_it_is_done(app):
    c = app.test_client()
    page = get(c, "/s/big?at=end").get_data(as_text=True)
    assert app.hold.held.wait(30)
    earlier = re.search(r'class="more before" hx-get="([^"]+)"', page).group(1).replace("&amp;", "&")
    # drawn now, while the index waits: not after the whole pass
    win = get(c, earlier, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert not app.extensions["viewer"].store.running("big").done
    calls = re.findall(r'id="tc-(toolu_w\d+)-state"[^>]*>\s*<span class="state resolving"', win) or \
        [cid for cid in re.findall(r'id="tc-(toolu_w\d+)"', win) if f'tc-{cid}-state' in win]
    assert calls and "resolving" in win
    assert not set(re.findall(r'id="m-([^"]+)"', win)) & set(re.findall(r'id="m-([^"]+)"', page))
    done = re.search(r'class="early-window" hidden data-resolve="([^"]+)"', win).group(1).replace("&amp;", "&")
    app.hold.release.set()
    body = c.get(done).get_data(as_text=True)
    for cid in calls:
        assert f'id="tc-{cid}-state"' in body  # each resolving call of the window, completed
    assert "resolving" not in body
    # only the window's cards: none of the page's, no header (the page's stream sends those)
    assert 'id="session-facts"' not in body
    assert not set(re.findall(r'id="tc-(toolu_w\d+)-state"', body)) - set(calls)


@pytest.mark.browser
def test_an_earlier_window_loaded_while_indexing_resolves_in_place(app, watched_page):
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/big?at=end")
        expect(page.locator("#m-w-end")).to_contain_text("Every check passed.")
        expect(page.locator("#index-progress")).to_be_visible()
        stream_open(page, "live")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        first = page.locator("#timeline > li.ev").first.get_attribute("id")
        page.locator("#timeline > li.more.before a").click()
        # the window comes now, from the lines before the page's: its calls wait for their results
        resolving = page.locator("#timeline .tool .state.resolving")
        expect(resolving.first).to_be_visible()
        n = resolving.count()
        assert n >= 5
        ids = page.locator("#timeline > li.ev").evaluate_all("els => els.map(e => e.id)")
        window_ids = ids[:ids.index(first)]
        assert len(window_ids) >= 20
        call = page.locator(f"#{window_ids[-1]}").locator("xpath=preceding-sibling::li[.//div[contains(@class,'tool')]]").first
        cid = call.locator(".tool").get_attribute("data-call")
        assert cid.startswith("toolu_w")
        no_id = next(i for i in window_ids if i.startswith("m-@"))  # a line without a uuid
        link = page.locator(f'[id="{no_id}"] a.permalink').get_attribute("href")
        assert "pos=" in link
        app.hold.release.set()
        expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
        expect(resolving).to_have_count(0, timeout=30_000)
        card = page.locator(f'.tool[data-call="{cid}"]')
        expect(card.locator(".state")).to_have_text("completed")
        expect(card.locator(".tool-result")).to_contain_text(f"check {cid[len('toolu_w'):]} passed")
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert page.locator('[id^="m-"]').evaluate_all(
            "els => new Set(els.map(e => e.id)).size === els.length")  # no card twice
        # a permalink taken from the window opens its event now that the index names it otherwise
        page.goto(srv.url + link)
        target = page.locator("li.ev.target")
        expect(target).to_have_count(1)
        expect(target).to_contain_text("note")
        assert re.search(r"/m/L\d+", page.url)
        assert not page.problems


@pytest.fixture
def reused(tmp_path):
    """6 MB of OpenAI-style messages whose every call is `call_0` (the index names them
    `call_0~N`, which a first screen of the end cannot know: every card of it is drawn again),
    each call thought about first."""
    root = tmp_path / "sessions"
    root.mkdir()
    msgs = [{"role": "system", "content": "You are a helpful agent."},
            {"role": "user", "content": "Run the steps."}]
    for i in range(1500):
        msgs += [{"role": "assistant", "content": None, "reasoning_content": f"Step {i} comes next.",
                  "tool_calls": [{"id": "call_0", "type": "function", "function": {
                      "name": "run", "arguments": json.dumps({"cmd": f"step {i}"})}}]},
                 {"role": "tool", "tool_call_id": "call_0", "content": f"output of step {i:04d}\n" + "x" * 4000}]
    (root / "long.jsonl").write_text("".join(json.dumps(m) + "\n" for m in msgs))
    os.utime(root / "long.jsonl", (1_700_000_000, 1_700_000_000))
    yield from held_app(root, tmp_path)


@pytest.mark.browser
def test_cards_drawn_again_keep_the_details_opened_and_the_place_read(reused, watched_page):
    """Every card of the page is drawn again once the index is done (named `L<line>` and
    `call_0~N` as the index names them, where the region said `@<offset>` and `call_0`): a
    thinking block the reader opened stays open, and the card they read stays where it was."""
    app = reused
    with LiveServer(app) as srv:
        page = watched_page
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(srv.url + "/s/long?at=end")
        stream_open(page, "live")
        cards = page.locator("#timeline > li.ev:has(.tool)")
        step = cards.nth(cards.count() - 8).locator(".tool-summary").inner_text()
        card = page.locator("#timeline > li.ev").filter(has=page.get_by_text(step, exact=True))
        assert card.get_attribute("id").startswith("m-@")  # (as the region read it)
        named = card.locator(".tool").get_attribute("data-call")
        assert re.fullmatch(r"call_0(~\d{1,3})?", named)
        card.evaluate("el => el.scrollIntoView({block: 'center'})")
        card.locator("details.thinking > summary").click()
        expect(card.locator("details.thinking")).to_have_attribute("open", "")
        top = card.evaluate("el => el.getBoundingClientRect().top")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        app.hold.release.set()
        expect(card.locator(".tool")).to_have_attribute("data-call", re.compile(r"call_0~1\d{3}"), timeout=60_000)
        expect(card).to_have_id(re.compile(r"m-L\d+"))
        # the card drawn again is the index's, the thinking the reader opened still open, where it was
        expect(card.locator("details.thinking")).to_have_attribute("open", "")
        expect(page.locator("#index-progress")).to_be_hidden()
        now = card.evaluate("el => el.getBoundingClientRect().top")
        assert abs(now - top) < 2, (top, now)
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert not page.problems


LINE = 25_600  # bytes of every line of `costs`: a permalink's region holds 20 lines before it


@pytest.fixture
def costs(tmp_path):
    """A legion session of 6 MB whose lines are all LINE bytes long: a turn is a prompt, an answer
    and the SDK's result, whose `total_cost_usd` is the process's running total (0.25 more each
    turn). A permalink to an answer opens on a region whose first line is the result before it."""
    root = tmp_path / "sessions"
    folder = root / "costs"
    folder.mkdir(parents=True)

    def sized(rec, pad):
        text = json.dumps(rec)
        rec[pad[0]][pad[1]] = "x" * (LINE - 1 - len(text))
        text = json.dumps(rec)
        assert len(text) == LINE - 1
        return text + "\n"

    with open(folder / "messages.jsonl", "w") as f:
        f.write(sized({"type": "system", "content": "Claude Code Launched", "timestamp": "2025-10-21T09:00:00Z",
                       "metadata": {"subtype": "client_launched", "session_id": "s-1", "note": ""},
                       "session_id": "s-1", "message_id": "launch"}, ("metadata", "note")))
        for i in range(240):
            f.write(sized({"type": "user", "content": f"Question {i}", "timestamp": "2025-10-21T09:00:01Z",
                           "session_id": "s-1", "message_id": f"q-{i}", "metadata": {"note": ""}}, ("metadata", "note")))
            f.write(sized({"_type": "AssistantMessage", "timestamp": "2025-10-21T09:00:02Z", "session_id": "s-1",
                           "message_id": f"a-{i}", "data": {"content": [{"text": f"Answer {i}"}],
                                                             "model": "claude-sonnet-4-5", "note": ""}}, ("data", "note")))
            f.write(sized({"_type": "ResultMessage", "timestamp": "2025-10-21T09:00:03Z", "session_id": "s-1",
                           "message_id": f"r-{i}", "data": {"subtype": "success", "duration_ms": 3000, "is_error": False,
                                                             "num_turns": 1, "total_cost_usd": 0.25 * (i + 1), "note": ""}},
                           ("data", "note")))
    (folder / "state.json").write_text(json.dumps({"session_id": "s-1", "name": "costs", "state": "terminated"}))
    os.utime(folder / "messages.jsonl", (1_700_000_000, 1_700_000_000))
    yield from held_app(root, tmp_path)


@pytest.mark.browser
def test_a_legion_turn_s_cost_unknown_to_the_first_screen_fills_in_once_indexed(costs, watched_page):
    """A first screen read from the middle of a legion session cannot tell its first turn's own
    cost (the SDK writes the process's running total: the turn's is the rise since the one before,
    which lies before what was read); once the index is done the card says it, in place."""
    app = costs
    key = app.extensions["viewer"].store.sessions()[0].key
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + f"/s/{key}/m/a-120")
        first = page.locator("#timeline > li.ev").first
        expect(first).to_have_id("m-r-113")
        expect(first).to_contain_text("this turn's share not known")
        expect(page.locator("#m-r-114")).to_contain_text("$0.2500 this turn ($28.7500 so far this process)")
        stream_open(page, "early-stream")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        app.hold.release.set()
        expect(first).to_contain_text("$0.2500 this turn ($28.5000 so far this process)", timeout=60_000)
        expect(page.locator("#index-progress")).to_be_hidden()
        expect(page.locator("#m-a-120")).to_have_class(re.compile(r"\btarget\b"))
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert not page.problems


@pytest.fixture
def rewound(tmp_path):
    """8 MB of Claude Code whose last prompt was written after a rewind to its first answer: the
    whole conversation between them was dropped — what a first screen of its start shows, which
    the lines it read cannot tell."""
    root = tmp_path / "sessions"
    path = root / "big.jsonl"
    root.mkdir()
    with open(path, "w") as f:
        f.write(line(type="user", uuid="p-1", message={"role": "user", "content": "Tidy the repository"}))
        f.write(line(type="assistant", uuid="a-1", parentUuid="p-1", message={
            "id": "msg_a1", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "Where shall I start?"}]}))
    write_claude_session(path, 8 << 20)
    with open(path, "a") as f:
        f.write(line(type="user", uuid="p-2", parentUuid="a-1", message={
            "role": "user", "content": "Start again: only the docs"}))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    yield from held_app(root, tmp_path)


@pytest.mark.browser
def test_cards_a_later_rewind_dropped_say_so_once_indexed(rewound, watched_page):
    app = rewound
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/big?from=0")
        expect(page.locator("#m-a-1")).to_contain_text("Where shall I start?")
        expect(page.locator("#m-u-1-p")).to_contain_text("Prompt 1")
        expect(page.locator("#timeline")).not_to_contain_text("dropped by a rewind")  # (not read)
        stream_open(page, "early-stream")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        app.hold.release.set()
        expect(page.locator("#m-u-1-p")).to_contain_text("dropped by a rewind", timeout=60_000)
        expect(page.locator("#m-a-1")).not_to_contain_text("dropped by a rewind")
        expect(page.locator("#index-progress")).to_be_hidden()
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert not page.problems


def pause_soon(page) -> None:
    """Pause the page's clock a moment from now. The moment must still be ahead when the call
    reaches the page, which on a loaded host takes longer than any fixed margin: try further on."""
    for margin in (0.05, 0.2, 1, 4):
        try:
            page.clock.pause_at(page.evaluate("Date.now()") / 1000 + margin)
            return
        except PlaywrightError as e:
            if "to the past" not in str(e):
                raise
    raise AssertionError("the page's clock ran ahead of every pause asked for")


@pytest.mark.browser
def test_a_page_following_a_live_session_opened_before_its_index_stays_at_the_end(tmp_path, serve,
                                                                                   watched_page):
    """Lines appended to a live session while its index is built come in with the message that
    completes its first screen, in one batch; a following page shows them at its end, and the lines
    after them too. Keeping the reader's card in place while cards were redrawn undid the follow's
    scroll: the page went back up by the new lines' height, left "the end", and later lines went
    behind "N new messages" (the bench's 100 MB append → visible timed out).

    The index is held until the lines are written and the page draws no frame (its clock paused)
    until both the completion and the lines are in: the batch the bench's 100 MB pass gave by
    chance. The new cards are taller than the slack "at the end" allows (a test whose cards were
    shorter passed on the broken code: one card's height back up still counted as the end)."""
    root = tmp_path / "sessions"
    path = root / "big.jsonl"
    write_claude_session(path, 8 << 20)  # its times long ago: opened at its end by ?at=end
    srv = serve(root, INDEX_ALL=False)
    hold = Hold()
    srv.app.extensions["viewer"].store.indexer.listen(hold)
    page = watched_page
    page.set_viewport_size({"width": 1000, "height": 700})
    page.clock.install()
    try:
        page.goto(f"{srv.url}/s/big?at=end")
        expect(page.locator("#index-progress")).to_be_visible()
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
        assert hold.held.wait(30)
        page.locator("#follow").check()
        page.evaluate("""() => { window.__messages = [];
            document.getElementById('live').addEventListener('htmx:sse:before:message',
                e => window.__messages.push(e.detail.message.data || '')); }""")

        def tail(i):
            with open(path, "a") as f:
                f.write(line(type="assistant", uuid=f"tail-{i}", message={
                    "id": f"msg_tail{i}", "role": "assistant", "model": "claude-opus-4-6",
                    "content": [{"type": "text", "text": f"Appended line {i}\n\n" + "\n\n".join(
                        f"Paragraph {k} of line {i}." for k in range(6))}]}))

        for i in range(3):
            tail(i)
        pause_soon(page)  # no frame: the batch waits
        hold.release.set()
        page.wait_for_function("""() => window.__messages.some(m => m.includes('index-progress'))
            && window.__messages.some(m => m.includes('m-tail-2'))""", polling=50, timeout=60_000)
        page.clock.resume()
        expect(page.locator("#index-progress")).to_be_hidden()
        expect(page.locator("#m-tail-2")).to_be_in_viewport(timeout=20_000)
        assert page.locator("#m-tail-0").evaluate("e => e.getBoundingClientRect().height") > 150
        for i in range(3, 20):
            tail(i)
            expect(page.locator(f"#m-tail-{i}")).to_be_in_viewport(timeout=20_000)  # a loaded host
        expect(page.locator("#live-gap")).to_have_count(0)
        expect(page.locator("#new-pill")).to_be_hidden()
        assert page.problems == [], page.problems
    finally:
        hold.release.set()


@pytest.mark.browser
def test_a_sub_agent_no_call_links_to_is_listed_once_indexed(tmp_path, watched_page):
    """A Claude Code sub-agent whose spawning call is not in the transcript is listed under "Other
    threads" by a page drawn from the index; a first screen (a region of the main file) knows no
    sub-agent, and its page did not list it once its index was done — only a reload did."""
    root = tmp_path / "sessions"
    path = root / "big.jsonl"
    write_claude_session(path, 8 << 20)
    sub = root / "big" / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text("".join(line(type="user", uuid=f"a1-{i}", isSidechain=True, agentId="a1",
                                message={"role": "user", "content": f"Sub-agent step {i}"})
                           for i in range(3)))
    os.utime(sub, (1_700_000_000, 1_700_000_000))
    for app in held_app(root, tmp_path):
        with LiveServer(app) as srv:
            page = watched_page
            page.goto(srv.url + "/s/big?at=end")
            expect(page.locator("#index-progress")).to_be_visible()
            others = page.locator("#unlinked-threads")
            expect(others).to_be_hidden()
            page.evaluate("window.__kept = document.getElementById('timeline')")
            assert app.hold.held.wait(30)
            app.hold.release.set()
            expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
            expect(others).to_be_visible()
            expect(others).to_contain_text("not linked to a call")
            expect(others.locator('a[href="/s/big/t/a1"]')).to_have_count(1)
            expect(others).to_contain_text("3 events")
            assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
            fresh = page.context.new_page()
            fresh.goto(srv.url + "/s/big?at=end")
            assert fresh.locator("#unlinked-threads").inner_text() == others.inner_text()
            fresh.close()
            assert not page.problems
