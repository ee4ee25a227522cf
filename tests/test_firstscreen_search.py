"""A search link (`?q=`) on a big session not indexed yet opens at once, around its first hit.

It waited for the whole index pass. Now the main file's bytes are searched for the first hit
(`search.first_hit`, the prefilter the in-session search uses, then the candidate lines read alone),
the first screen is drawn around it — the hit its target, its matches marked, the region's hits
listed as the first ones — and the page searches the whole session once the index is done.

The background build is held by a listener until the test releases it: nothing sleeps."""

import json
import re

import pytest
from playwright.sync_api import expect

from conftest import LiveServer, early_target, held_app, held_page, write_claude_session

WORD = "walrus"


def line(**rec):
    return json.dumps({"sessionId": "big", "timestamp": "2025-10-21T10:00:00.000Z", **rec}) + "\n"


def prompt(uuid: str, text: str) -> str:
    return line(type="user", uuid=uuid, message={"role": "user", "content": text})


@pytest.fixture(scope="module")
def walrus(tmp_path_factory):
    return walrus_root(tmp_path_factory.mktemp("search"))


def walrus_root(folder):
    """A root holding 8 MB of Claude Code (`big`) with the word in the middle of the file once,
    and in three prompts near its end."""
    root = folder / "sessions"
    path = root / "big.jsonl"
    write_claude_session(path, 4 << 20)
    with open(path, "a") as f:
        f.write(prompt("first-walrus", f"Where did the {WORD} go?"))
    write_claude_session(path, 8 << 20, start=100_000)
    with open(path, "a") as f:
        for i in range(3):
            f.write(prompt(f"late-walrus-{i}", f"Another {WORD}, number {i}"))
    return root


@pytest.fixture
def app(walrus, tmp_path):
    yield from held_app(walrus, tmp_path)


def test_a_search_link_opens_at_its_first_hit_before_the_index(app):
    page, card = early_target(app, f"/s/big?q={WORD}", "first-walrus")
    assert '<mark class="hit' in card and WORD in card
    hits = re.findall(r'class="hit-link" href="([^"]+)"', page)
    assert hits and "/m/first-walrus?" in hits[0]
    assert 'data-reading="1"' in page and "the rest come once the whole session is read" in page
    assert 'id="index-progress"' in page


def test_a_search_link_whose_hit_the_bytes_do_not_show_soon_opens_where_the_session_opens(app):
    c = app.test_client()
    page = held_page(c, "/s/big?q=nowhere+in+this+file")
    assert not app.extensions["viewer"].store.running("big").done
    assert 'data-reading="1"' in page and 'data-seek="1"' in page
    assert "Finding the first hit: searching the whole session as it is read" in page
    assert 'class="hit-link"' not in page


@pytest.mark.browser
def test_a_search_link_s_first_screen_fills_in_its_hits_once_indexed(app, watched_page):
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(f"{srv.url}/s/big?q={WORD}")
        target = page.locator("#m-first-walrus")
        expect(target).to_be_in_viewport()
        expect(target.locator("mark.hit")).to_have_text(WORD)
        expect(page.locator("#index-progress")).to_be_visible()
        expect(page.locator("#hits li.hit")).to_have_count(1)  # the first one, in the region read
        expect(page.locator("#find-status")).to_contain_text("once the whole session is read")
        assert app.hold.held.wait(30)
        app.hold.release.set()
        expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
        expect(page.locator("#hits li.hit")).to_have_count(4, timeout=30_000)
        expect(page.locator("#find-status")).to_contain_text("4 messages")
        expect(page.locator("#find-status")).not_to_contain_text("so far")
        # the hit opened is still the current one; the next is one of the later ones, loaded
        expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "first-walrus")
        page.keyboard.press("n")
        expect(page.locator("#m-late-walrus-0 mark.hit.current")).to_be_in_viewport()
        assert page.problems == []


@pytest.fixture
def delegated(tmp_path):
    """6 MB of Claude Code with the word in the middle of the main file and in a sub-agent's."""
    root = tmp_path / "sessions"
    path = root / "big.jsonl"
    write_claude_session(path, 3 << 20)
    with open(path, "a") as f:
        f.write(prompt("main-walrus", f"Where did the {WORD} go?"))
    write_claude_session(path, 6 << 20, start=100_000)
    sub = root / "big" / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(line(type="user", uuid="sub-walrus", isSidechain=True, agentId="a1",
                        message={"role": "user", "content": f"Find the {WORD}"}))
    yield from held_app(root, tmp_path)


def test_a_search_link_whose_sub_agent_holds_a_hit_does_not_say_its_region_s_are_the_first(delegated):
    """The main file's first hit is found in its bytes and the page drawn around it; a sub-agent's
    hit may come before it in reading order (where its call is: only the index knows), so the
    region's hits are not listed as the session's first ones — the list comes with the index."""
    app = delegated
    c = app.test_client()
    page = held_page(c, f"/s/big?q={WORD}")
    assert not app.extensions["viewer"].store.running("big").done
    assert 'data-target-id="main-walrus"' in page
    assert 'class="hit-link"' not in page and "Searching the whole session as it is read" in page
