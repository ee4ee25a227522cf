"""Pages drawn once for the requests that ask for them together, and never staler than the session:
a change to the file shows on the next request, whatever was drawn before."""

import json
import os
import threading

import pytest

from viewer import render
from viewer.web import create_app

KEY = "legion-feature-tour"


@pytest.fixture
def setup(tour, tmp_path):
    root, path = tour
    return create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False}), path


def append(path, i):
    with open(path, "a") as f:
        f.write(json.dumps({"type": "assistant", "content": f"fresh **line** {i}", "session_id": "s",
                            "timestamp": 1761073300 + i, "message_id": f"fresh-{i}"}) + "\n")


URLS = [f"/s/{KEY}", f"/s/{KEY}?at=start", f"/s/{KEY}.json", f"/s/{KEY}/m/tour-read",
        f"/s/{KEY}/w/main?after=0"]


def test_requests_that_come_together_share_one_drawing(setup):
    app, _ = setup
    pages = app.extensions["viewer"].pages
    app.test_client().get(f"/s/{KEY}")  # the index built, templates loaded
    for url in URLS:
        draws = pages.draws
        bodies, start = [], threading.Barrier(12)

        def get():
            start.wait()
            r = app.test_client().get(url)
            bodies.append((r.status_code, r.data))

        threads = [threading.Thread(target=get) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(bodies) == 12 and {s for s, _ in bodies} == {200}, url
        assert len({b for _, b in bodies}) == 1, url  # everyone got the same page
        # drawn once (twice when the clock's second turned meanwhile), not twelve times
        assert pages.draws - draws <= 2, url


def test_a_change_to_the_session_shows_on_the_next_request(setup):
    app, path = setup
    client = app.test_client()
    before = {url: client.get(url).data for url in URLS}
    for i in range(3):  # within the same second as the pages just drawn
        append(path, i)
        assert f"fresh-{i}".encode() in client.get(f"/s/{KEY}").data
        assert f"fresh-{i}" in [e["id"] for e in client.get(f"/s/{KEY}.json").get_json()["events"]]
    page = client.get(f"/s/{KEY}/m/tour-read").data
    assert page != before[f"/s/{KEY}/m/tour-read"]  # its live cursor moved on
    assert b"fresh-2" in client.get(f"/s/{KEY}/w/main?after=0&at=end").data


def test_a_search_page_is_drawn_for_its_own_request(setup):
    app, _ = setup
    client = app.test_client()
    pages = app.extensions["viewer"].pages
    draws = pages.draws
    for q in ("window", "diff"):
        r = client.get(f"/s/{KEY}?q={q}")
        assert r.status_code == 200 and b"<mark" in r.data
    assert pages.draws == draws


def test_kept_markdown_stays_within_its_budget(monkeypatch):
    monkeypatch.setattr(render, "_md_kept", type(render._md_kept)(64 << 10))
    first = render.markdown("**bold** and `code`")
    assert render.markdown("**bold** and `code`") == first == render._markdown_html("**bold** and `code`")
    for i in range(2000):
        render.markdown(f"message {i} with *emphasis*")
    assert 0 < render._md_kept.size <= 64 << 10
    assert render.markdown("message 1999 with *emphasis*") == "<p>message 1999 with <em>emphasis</em></p>\n"


# --- event cards drawn once (web/cards.py) ---------------------------------------------------------


def _fresh(app):
    """Forget every drawn page and card: the next request draws all of its page again."""
    from viewer.web.cards import Cards
    from viewer.web.pagecache import PageCache

    app.extensions["viewer"].pages = PageCache()
    app.jinja_env.cards = Cards()


def test_an_append_draws_the_new_card_not_the_page_again(setup):
    app, path = setup
    client = app.test_client()
    cards = app.jinja_env.cards
    earlier = f"/s/{KEY}/w/main?before=10"
    for url in (f"/s/{KEY}?at=end", f"/s/{KEY}/m/tour-read", earlier):
        client.get(url)
    for i in range(3):
        append(path, i)
        draws = cards.draws
        page = client.get(f"/s/{KEY}?at=end").data
        assert f"fresh-{i}".encode() in page
        # the new event's card, and the one before it perhaps (whether it continues): not the
        # dozens of cards of the page
        assert cards.draws - draws <= 2
        draws = cards.draws
        assert b"tour-read" in client.get(f"/s/{KEY}/m/tour-read").data
        assert client.get(earlier).status_code == 200
        assert cards.draws == draws  # nothing these show changed


def _claude_line(n, kind, call="toolu_1"):
    base = {"sessionId": "c", "timestamp": f"2025-10-21T10:00:{n:02d}.000Z", "uuid": f"c-{n}"}
    if kind == "prompt":
        return {**base, "type": "user", "message": {"role": "user", "content": f"prompt {n}"}}
    if kind == "call":
        return {**base, "type": "assistant", "message": {
            "id": f"msg_{n}", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "tool_use", "id": call, "name": "Bash",
                         "input": {"command": f"ls dir{n}"}}]}}
    if kind == "text":
        return {**base, "type": "assistant", "message": {
            "id": f"msg_{n}", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": f"reply {n}"}]}}
    return {**base, "type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call, "content": f"files of {n}",
         "is_error": kind == "error"}]}}


def test_shared_cards_are_the_cards_a_fresh_drawing_makes(tmp_path):
    """Every page, window and permalink drawn with the cards of earlier states and other pages is
    the page drawn from nothing — through a call's life (pending, answered, failed), a result far
    from its call, and a message that continues over several lines."""
    root = tmp_path / "root"
    root.mkdir()
    path = root / "c.jsonl"
    path.write_text(json.dumps(_claude_line(1, "prompt", "toolu_1")) + "\n")
    # (the server finds its sessions as it starts: without a watcher, a file made after that is
    # found by the next scan, two seconds on)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False})
    client = app.test_client()
    steps = [(2, "call", "toolu_1"), (3, "text", None), (4, "call", "toolu_2"),
             (5, "result", "toolu_1"), *[(n, "text", None) for n in range(6, 60)],
             (60, "error", "toolu_2"), (61, "prompt", None)]
    for n, kind, call in steps:
        with open(path, "a") as f:
            f.write(json.dumps(_claude_line(n, kind, call or "toolu_1")) + "\n")
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))  # not live: no clock in its pages
        if n not in (2, 4, 5, 30, 60, 61):
            continue
        key = json.loads(client.get("/sessions.json").data)["sessions"][0]["key"]
        urls = [f"/s/{key}?at=start", f"/s/{key}?at=end", f"/s/{key}/m/c-2", f"/s/{key}/m/c-5",
                f"/s/{key}/w/main?after=0", f"/s/{key}/w/main?before={n}", f"/s/{key}/m/c-2?part=event"]
        shared = {u: client.get(u).data for u in urls}
        for u in urls:
            _fresh(app)
            r = client.get(u)
            assert r.status_code in (200, 404), u
            assert r.data == shared[u], (n, u)
    assert b"error" in client.get(f"/s/{key}/m/c-4").data


def test_every_bundled_session_draws_the_same_with_shared_cards(tmp_path):
    from conftest import SESSIONS

    app = create_app({"ROOTS": [str(SESSIONS)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False})
    client = app.test_client()
    for s in json.loads(client.get("/sessions.json").data)["sessions"]:
        key = s["key"]
        ids = [e["id"] for e in client.get(f"/s/{key}.json").get_json()["events"]]
        urls = [f"/s/{key}?at=start", f"/s/{key}?at=end", f"/s/{key}/w/main?after=0",
                *[f"/s/{key}/m/{i}" for i in ids[:: max(1, len(ids) // 6)]]]
        shared = {u: client.get(u) for u in urls}
        for u in urls:
            _fresh(app)
            r = client.get(u)
            assert (r.status_code, r.data) == (shared[u].status_code, shared[u].data), u
