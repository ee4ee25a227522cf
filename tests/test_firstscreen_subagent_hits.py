"""A search link or a hit link whose hit is in a sub-agent's file, on a big session not indexed yet.

Such a hit is read where the sub-agent's call sits (`order.reading_order`), which the main file's
bytes alone do not show: the page opened where the session opens, the hit nowhere on it, and
stayed there once the index was done (a hit link waited for the whole pass with nothing on the
screen). Now the sub-agent's file is searched too, its call found in the main file by the id its
`.meta.json` names, and the first screen drawn around that call, the sub-agent's thread open at
the hit: its card in view, marked, under the id the index gives it. Where that cannot be told
(no metadata naming the call), the page says it is finding the hit while the session is read and
goes there once it is, without a reload.

The background build is held by a listener until the test releases it: nothing sleeps."""

import json

import pytest
from playwright.sync_api import expect

from viewer import partial

from conftest import LiveServer, early_target, held_app, held_page, write_claude_session
from test_firstscreen_search import WORD, line, prompt

CALL = "toolu_agent_1"


def spawn(path, agent: str, named: bool = True) -> None:
    """A Task call spawning sub-agent `agent`, and its result (`named`: which says the agent's id,
    as the CLI writes it)."""
    with open(path, "a") as f:
        f.write(prompt("ask-agent", "Ask a helper to look"))
        f.write(line(type="assistant", uuid="call-agent", message={
            "id": "msg_agent", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "tool_use", "id": CALL, "name": "Task", "input": {
                "description": "Look around", "prompt": "Look around the zoo",
                "subagent_type": "general-purpose"}}]}))
        said = {"toolUseResult": {"agentId": agent, "status": "completed"}} if named else {}
        f.write(line(type="user", uuid="agent-done", **said, message={"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": CALL, "content": "It is by the pond."}]}))


def sub_agent(root, agent: str, meta: bool = True) -> None:
    """The sub-agent's transcript (its third line holds the word), and its metadata."""
    folder = root / "big" / "subagents"
    folder.mkdir(parents=True)
    base = {"isSidechain": True, "agentId": agent}
    lines = [line(type="user", uuid="sub-1", **base, message={"role": "user", "content": "Look around the zoo"})]
    for i in range(2, 30):
        text = f"Here is the {WORD} by the pond" if i == 12 else f"Looked at pen {i}"
        lines.append(line(type="assistant", uuid=f"sub-{i}", **base, message={
            "id": f"msg_sub_{i}", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}]}))
    (folder / f"agent-{agent}.jsonl").write_text("".join(lines))
    if meta:
        (folder / f"agent-{agent}.meta.json").write_text(json.dumps(
            {"agentType": "general-purpose", "description": "Look around", "toolUseId": CALL}))


def zoo(tmp_path, meta: bool = True, named: bool = True):
    """8 MB of Claude Code whose only hit of the word is in a sub-agent's file, spawned in the
    middle of the main file (`meta`, `named`: whether the sub-agent's metadata, and the call's
    result, say which call spawned it)."""
    root = tmp_path / "sessions"
    path = root / "big.jsonl"
    write_claude_session(path, 4 << 20, old=False)
    spawn(path, "a1", named)
    write_claude_session(path, 8 << 20, start=100_000)
    sub_agent(root, "a1", meta)
    return root


@pytest.fixture(params=["meta", "result"])
def app(tmp_path, request):
    """The call named by the sub-agent's metadata (`toolUseId`), or only by the call's result
    (`toolUseResult.agentId`: an older CLI writes no metadata)."""
    yield from held_app(zoo(tmp_path, meta=request.param == "meta"), tmp_path)


def test_a_search_link_opens_at_a_sub_agent_s_hit_before_the_index(app):
    page, card = early_target(app, f"/s/big?q={WORD}", "sub-12")
    assert '<mark class="hit' in card
    assert 'id="m-call-agent"' in page  # in the thread of the call that spawned it


def test_a_hit_link_into_a_sub_agent_opens_at_once(app):
    page, card = early_target(app, f"/s/big/m/sub-12?q={WORD}", "sub-12")
    assert 'id="index-progress"' in page
    assert '<mark class="hit' in card


@pytest.mark.browser
@pytest.mark.parametrize("link", [f"/s/big?q={WORD}", f"/s/big/m/sub-12?q={WORD}", "/s/big/m/sub-12"])
def test_a_sub_agent_s_hit_is_in_view_before_and_after_the_index(app, watched_page, link):
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + link)
        card = page.locator("#m-sub-12")
        expect(card).to_be_in_viewport()
        expect(page.locator("#index-progress")).to_be_visible()
        if "q=" in link:
            expect(card.locator("mark.hit")).to_have_text(WORD)
        if "q=" in link:  # the hit listed before the index, the search said to be done
            expect(page.locator("#hits li.hit")).to_have_count(1)
            expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "sub-12")
            expect(page.locator("#find-status")).to_have_text("1 match in 1 message.")
            assert not app.extensions["viewer"].store.running("big").done
        permalink = card.locator("a.permalink").get_attribute("href")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        assert app.hold.held.wait(30)
        app.hold.release.set()
        expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
        if "q=" in link:
            expect(page.locator("#hits li.hit")).to_have_count(1, timeout=30_000)
            expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "sub-12")
            expect(card.locator("mark.hit")).to_have_text(WORD)
        expect(card).to_be_in_viewport()
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        # the permalink taken before the index opens the same card after it
        page.goto(srv.url + permalink)
        expect(page.locator("li.ev.target")).to_contain_text(f"the {WORD} by the pond")
        assert page.problems == []


@pytest.mark.browser
def test_a_search_typed_before_the_index_lists_a_sub_agent_s_hit_at_once(app, watched_page):
    """It waited for the whole index pass, "Searching…" and nothing else on the screen."""
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/big")
        expect(page.locator("#index-progress")).to_be_visible()
        page.fill("#find-q", WORD)
        page.press("#find-q", "Enter")
        hit = page.locator("#hits li.hit")
        expect(hit).to_have_count(1)
        expect(hit).to_have_attribute("data-id", "sub-12")
        expect(hit).to_contain_text(f"the {WORD} by the pond")
        expect(page.locator("#find-status")).to_have_text("1 match in 1 message.")
        hit.locator("a.hit-link").click()  # (the page drawn around it: its window waits for the index)
        card = page.locator("#m-sub-12")
        expect(card).to_be_in_viewport()
        expect(card.locator("mark.hit")).to_have_text(WORD)
        expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "sub-12")
        expect(page.locator("#index-progress")).to_be_visible()  # all of it before the index
        assert not app.extensions["viewer"].store.running("big").done
        assert page.problems == []


@pytest.fixture
def vanishing(tmp_path, monkeypatch):
    """As `app`, but the sub-agent's file is gone once its bytes were searched, before it is read
    (deleted meanwhile: a session cleaned up while its page opens)."""
    root = zoo(tmp_path)
    found = partial.call_line

    def call_line(*args, **kwargs):
        at = found(*args, **kwargs)
        (root / "big" / "subagents" / "agent-a1.jsonl").unlink()
        return at

    monkeypatch.setattr(partial, "call_line", call_line)
    yield from held_app(root, tmp_path)


def test_a_sub_agent_s_file_gone_meanwhile_leaves_the_first_hit_to_the_index(vanishing):
    page = held_page(vanishing.test_client(), f"/s/big?q={WORD}")  # (200, not a traceback)
    assert "Finding the first hit: searching the whole session as it is read" in page


@pytest.fixture
def unnamed(tmp_path):
    """As `app`, but neither the sub-agent's metadata nor the call's result say which call spawned
    it: only the index can tell where it is read (it links them by their progress lines, or not
    at all)."""
    yield from held_app(zoo(tmp_path, meta=False, named=False), tmp_path)


@pytest.mark.browser
def test_a_search_link_whose_hit_needs_the_index_says_so_and_goes_there(unnamed, watched_page):
    app = unnamed
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(f"{srv.url}/s/big?q={WORD}")
        expect(page.locator("#index-progress")).to_be_visible()
        expect(page.locator("#find-status")).to_contain_text("Finding the first hit")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        assert app.hold.held.wait(30)
        app.hold.release.set()
        expect(page.locator("#hits li.hit")).to_have_count(1, timeout=60_000)
        card = page.locator("#m-sub-12")
        expect(card).to_be_in_viewport(timeout=30_000)
        expect(card.locator("mark.hit.current")).to_have_text(WORD)
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert page.problems == []


@pytest.mark.parametrize("where, first", [("before", "main-walrus"), ("after", "sub-12")])
def test_a_search_link_opens_at_whichever_hit_is_read_first(tmp_path, where, first):
    """The main file holds the word too: before the sub-agent's call, its hit is the first; after
    it, the sub-agent's (read where its call sits) is."""
    root = tmp_path / "sessions"
    path = root / "big.jsonl"
    write_claude_session(path, 3 << 20, old=False)
    if where == "before":
        with open(path, "a") as f:
            f.write(prompt("main-walrus", f"Where did the {WORD} go?"))
    spawn(path, "a1")
    write_claude_session(path, 5 << 20, start=100_000, old=False)
    if where == "after":
        with open(path, "a") as f:
            f.write(prompt("main-walrus", f"Where did the {WORD} go?"))
    write_claude_session(path, 8 << 20, start=200_000)
    sub_agent(root, "a1")
    for app in held_app(root, tmp_path):
        page = held_page(app.test_client(), f"/s/big?q={WORD}")
        assert f'data-target-id="{first}"' in page
        assert 'class="hit-link"' not in page  # (a sub-agent holds the search: the page's script lists them)
