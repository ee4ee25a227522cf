"""A search's hit link (`/s/<key>/m/<id>?q=`) on a big session not indexed yet opens at once.

A hit link is what a search shares: the session opened at one hit, the words marked. It waited
for the whole index pass (a plain permalink had a first screen of its own; one with `?q=` did
not). Now it is drawn as the permalink is, around its event, the matches marked; the page lists
the session's hits at once when the files tell them without the index (search.QuickScan), else once
its index is done, the hit it opened at the current one. And the cards
such a page (or a `?q=` page) has drawn again when its index is done keep their marks: the
message that completes the page draws them with the search, where it drew them without.

The background build is held by a listener until the test releases it: nothing sleeps."""

import os
import re

import pytest
from playwright.sync_api import expect

from conftest import LiveServer, early_target, held_app, held_page, write_claude_session
from test_firstscreen_search import WORD, line, prompt, walrus_root


@pytest.fixture(scope="module")
def walrus(tmp_path_factory):
    return walrus_root(tmp_path_factory.mktemp("hitlinks"))


@pytest.fixture
def app(walrus, tmp_path):
    yield from held_app(walrus, tmp_path)


def test_a_hit_link_opens_at_its_hit_before_the_index(app):
    page, card = early_target(app, f"/s/big/m/late-walrus-1?q={WORD}", "late-walrus-1")
    assert 'id="index-progress"' in page
    assert '<mark class="hit' in card
    # the region's hits are not the session's first ones: none listed until the whole search
    assert 'class="hit-link"' not in page and 'data-reading="1"' in page
    # its stream completes it with the search (the cards it draws again are marked)
    stream = re.search(r'id="live" hx-sse:connect="([^"]+)"', page).group(1)
    assert "early=" in stream and f"q={WORD}" in stream


def test_a_search_page_s_earlier_window_comes_before_the_index_marked(app):
    """"Load earlier" on a hit link's page (asked for with the search, to mark it: find.js) is
    read from the lines before the page's, at once, and completed with the search too."""
    c = app.test_client()
    page = held_page(c, f"/s/big/m/late-walrus-0?q={WORD}")
    earlier = re.search(r'<li class="more before" hx-get="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert "before=@" in earlier
    r = c.get(f"{earlier}&q={WORD}")
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and not app.extensions["viewer"].store.running("big").done
    assert 'class="early-window"' in html and "Prompt " in html and "Another walrus" not in html
    resolve = re.search(r'data-resolve="([^"]+)"', html).group(1)
    assert f"q={WORD}" in resolve


@pytest.mark.browser
def test_a_hit_link_s_first_screen_lists_the_session_s_hits_once_indexed(app, watched_page):
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(f"{srv.url}/s/big/m/late-walrus-1?q={WORD}")
        target = page.locator("#m-late-walrus-1")
        expect(target).to_be_in_viewport()
        expect(target.locator("mark.hit")).to_have_text(WORD)
        expect(page.locator("#index-progress")).to_be_visible()
        # the session's hits, before the index (the list waited for it, "Searching the whole session")
        expect(page.locator("#hits li.hit")).to_have_count(4)
        expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "late-walrus-1")
        expect(page.locator("#find-status")).to_have_text("4 matches in 4 messages.")
        assert app.hold.held.wait(30) and not app.extensions["viewer"].store.running("big").done
        app.hold.release.set()
        expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
        expect(page.locator("#hits li.hit")).to_have_count(4, timeout=30_000)
        # the hit the link opened at is the current one: n goes on to the next
        expect(page.locator("#hits li.hit.current")).to_have_attribute("data-id", "late-walrus-1")
        page.keyboard.press("n")
        expect(page.locator("#m-late-walrus-2 mark.hit.current")).to_be_in_viewport()
        assert page.problems == []


@pytest.fixture
def rewound(tmp_path):
    """8 MB of Claude Code whose last prompt was written after a rewind to its first answer: the
    whole conversation between them was dropped — the word's prompt in its middle with it, which
    a first screen around that prompt cannot tell (its card is drawn again once indexed)."""
    root = tmp_path / "sessions"
    path = root / "big.jsonl"
    root.mkdir()
    with open(path, "w") as f:
        f.write(prompt("p-1", "Tidy the repository"))
        f.write(line(type="assistant", uuid="a-1", parentUuid="p-1", message={
            "id": "msg_a1", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "Where shall I start?"}]}))
    write_claude_session(path, 4 << 20)
    with open(path, "a") as f:
        f.write(prompt("mid-walrus", f"Where did the {WORD} go?"))
    write_claude_session(path, 8 << 20, start=100_000)
    with open(path, "a") as f:
        f.write(line(type="user", uuid="p-2", parentUuid="a-1", message={
            "role": "user", "content": "Start again: only the docs"}))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    yield from held_app(root, tmp_path)


@pytest.mark.browser
@pytest.mark.parametrize("link", ["/s/big?q=", "/s/big/m/mid-walrus?q="])
def test_a_search_page_s_cards_drawn_again_keep_their_marks(rewound, watched_page, link):
    """A `?q=` page and a hit link, both drawn around the hit before the index: the hit's card,
    which a later rewind dropped, is drawn again once the index is done — with its marks."""
    app = rewound
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + link + WORD)
        card = page.locator("#m-mid-walrus")
        expect(card.locator("mark.hit")).to_have_text(WORD)
        expect(card).not_to_contain_text("dropped by a rewind")  # (the region did not read it)
        page.evaluate("window.__kept = document.getElementById('timeline')")
        assert app.hold.held.wait(30)
        app.hold.release.set()
        expect(card).to_contain_text("dropped by a rewind", timeout=60_000)  # drawn again
        expect(card.locator("mark.hit")).to_have_text(WORD)
        expect(page.locator("#hits li.hit")).to_have_count(1)
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert page.problems == []
