"""Pages drawn once for the requests that ask for them together, and never staler than the session:
a change to the file shows on the next request, whatever was drawn before."""

import json
import os
import re
import threading
import time
import types

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
    # found by the next scan, two seconds on. No background indexer: its scans could take the
    # file's time between a write and the `utime` that dates it back, and draw it live)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
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


# --- the session list, drawn once while its rows stay the same -----------------------------------


def _row(page: bytes, key: str) -> str:
    from viewer.templating import dom_id

    m = re.search(rf'<tr id="{dom_id("row-", key)}".*?</tr>', page.decode(), re.S)
    return m.group(0) if m else ""


def _cell(row: str, label: str) -> int:
    return int(re.search(rf'data-label="{label}">(\d+)<', row).group(1))


CLAUDE = "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"


def _search_index_settled(app) -> None:
    """The full-text index catches up in the background, and a list drawn while it is behind says
    how far it is (drawn again, rightly, when that moves on). Wait until it stops moving (done, or
    with nothing more it was asked to index), so that a sharing test's requests ask for one page."""
    viewer = app.extensions["viewer"]
    if viewer.fts is None:
        return
    deadline = time.monotonic() + 30
    seen = None
    while (now := viewer.fts.coverage(viewer.store.sessions())) != seen or not now["complete"]:
        if now == seen:  # still for 0.3 s without being complete: nothing more is coming
            return
        assert time.monotonic() < deadline, "the search index kept moving for 30 s"
        seen = now
        time.sleep(0.3)


def test_the_list_is_drawn_once_and_shows_a_change_on_the_next_request(tmp_path, monkeypatch):
    """Many requests for the list share one drawing; a session whose summary changed (a sub-agent
    wrote: the session's own file did not change), a file the watcher saw written, and a new
    session all show on the very next request — within the same second of the page cache's clock,
    which is frozen here."""
    import shutil
    from conftest import SESSIONS
    from viewer.web import pagecache

    root = tmp_path / "root"
    shutil.copytree(SESSIONS / "claude-project", root / "claude-project")
    main = root / "claude-project" / f"{CLAUDE}.jsonl"
    agent = root / "claude-project" / CLAUDE / "subagents" / "agent-a7c4e2f91b3d5a6c8.jsonl"
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    client = app.test_client()
    pages, store = app.extensions["viewer"].pages, app.extensions["viewer"].store
    monkeypatch.setattr(pagecache, "time", types.SimpleNamespace(time=lambda: 1_800_000_000.0))
    client.get("/")  # the session is indexed for its row: that page is its request's own
    key = store.sessions()[0].key
    _search_index_settled(app)
    draws = pages.draws
    first = client.get("/").data
    for _ in range(5):
        assert client.get("/").data == first
    assert pages.draws == draws + 1  # drawn with every row known, then shared
    calls = _cell(_row(first, key), "tool calls")

    line = json.loads(agent.read_text().splitlines()[-1])
    line["uuid"], line["message"]["id"] = "00000000-0000-4000-8000-000000000199", "msg_s9"
    line["message"]["content"] = [{"type": "tool_use", "id": "toolu_sub_x", "name": "Bash",
                                   "input": {"command": "ls"}}]
    with open(agent, "a") as f:
        f.write(json.dumps(line) + "\n")
    assert client.get(f"/s/{key}?at=end").status_code == 200  # indexes it: the summary changes
    assert _cell(_row(client.get("/").data, key), "tool calls") == calls + 1

    with open(main, "a") as f:  # a write the watcher reports: the row's time follows at once
        f.write("\n")
    store.note_change(str(main), "modified")
    assert f'data-mtime="{os.path.getmtime(main)}"' in _row(client.get("/").data, key)

    shutil.copytree(SESSIONS / "legion-feature-tour", root / "another")  # a new session, reported
    store.invalidate()
    assert _row(client.get("/").data, "another")
    (root / "notes.jsonl").write_text("not a transcript\n")  # a file listed as skipped
    store.invalidate()
    assert b"notes.jsonl" in client.get("/").data
    # a sorted list is its own page, shared the same way
    _search_index_settled(app)
    draws = pages.draws
    sorted_ = {client.get("/?sort=messages&order=asc").data for _ in range(3)}
    assert len(sorted_) == 1 and pages.draws - draws == 1
    page = sorted_.pop()
    assert page.index(_row(page, "another").encode()) > page.index(_row(page, key).encode())


def test_events_read_again_are_shared_and_a_rewritten_file_is_read_anew(tmp_path, tour, monkeypatch):
    """A page drawn again (another URL, or after a line was written) takes the events it read
    before instead of decoding their lines again, and shows exactly what a new server shows; a
    file rewritten (to the same size) shows its new text, never the events kept."""
    from viewer import reader

    root, path = tour
    key = "legion-feature-tour"
    config = {"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
              "INDEX_ALL": False}
    client = create_app(config).test_client()
    decoded = []
    real = reader.decode
    monkeypatch.setattr(reader, "decode", lambda data: decoded.append(data) or real(data))
    first = client.get(f"/s/{key}.json").get_json()
    decoded.clear()
    assert client.get(f"/s/{key}.json?again=1").get_json() == first
    parsed = lambda: [d for d in decoded if not isinstance(real(d), reader.BadLine)]  # noqa: E731
    assert parsed() == []  # every event of the window was shared (an unparsable line is read again)
    with open(path, "a") as f:
        f.write(json.dumps({"type": "assistant", "content": "one more line", "message_id": "more",
                            "session_id": "s", "timestamp": 1761073999.0}) + "\n")
    page = client.get(f"/s/{key}?at=end").data
    assert b"one more line" in page
    assert len(parsed()) < 5  # the new line (and the few a page looks back at), not the window
    fresh = create_app({**config, "CACHE_DIR": str(tmp_path / "c2")}).test_client()
    assert client.get(f"/s/{key}.json").get_json() == fresh.get(f"/s/{key}.json").get_json()

    text = path.read_bytes()
    assert text.count(b"I'll start by reading the file.") == 1
    new = path.with_name("rewritten")  # rewritten as editors and log rotation do: a new file
    new.write_bytes(text.replace(b"I'll start by reading the file.", b"I'LL START BY READING THE FILE."))
    os.replace(new, path)
    page = client.get(f"/s/{key}?at=start").data
    assert b"LL START BY READING THE FILE." in page and b"start by reading" not in page


# --- what a page is keyed by: its session's state, not every session's live notes ------------------


def _frozen(monkeypatch):
    """The page cache's clock stopped within one second: what a test sees drawn again is drawn
    again for a change, never for the second turning."""
    from viewer.web import pagecache

    monkeypatch.setattr(pagecache, "time", types.SimpleNamespace(time=lambda: 1_800_000_000.0))


def test_live_notes_of_a_session_draw_no_page_again(tmp_path, monkeypatch):
    """Every line appended to a watched session sends its open pages notes (the header's counts,
    the session map). Those moved a clock that was part of every page's key, of every session: a
    server with one live session drew every page of every other session again ten times a second
    (and the live one's twice per line). A note draws nothing again; the next line does."""
    import shutil
    from conftest import SESSIONS

    root = tmp_path / "root"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    shutil.copytree(SESSIONS / "legion-hostile-content", root / "other")
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    client = app.test_client()
    viewer = app.extensions["viewer"]
    _frozen(monkeypatch)
    urls = ["/s/other", "/s/other.json", "/s/other/w/main?after=0", f"/s/{KEY}?at=end", f"/s/{KEY}.json"]
    first = {u: client.get(u).data for u in urls}
    draws = viewer.pages.draws
    for i in range(5):  # what a live session's feed sends after each line
        viewer.feeds.broadcast(KEY, f'<div id="live-head-{i}" hx-swap-oob="true"></div>', name="header")
        viewer.feeds.broadcast(KEY, f'<div id="live-map-{i}" hx-swap-oob="true"></div>', name="minimap")
        for u in urls:
            assert client.get(u).data == first[u], u
    assert viewer.pages.draws == draws
    append(root / KEY / "messages.jsonl", 0)  # a line: its session's pages are drawn again
    assert b"fresh-0" in client.get(f"/s/{KEY}?at=end").data
    assert client.get("/s/other").data == first["/s/other"]
    assert viewer.pages.draws == draws + 1


def test_a_call_that_settles_with_no_line_of_its_own_shows_on_the_next_request(tmp_path, monkeypatch):
    """A background sub-agent's `.meta.json` says it finished: no file of the session's events
    grew, yet the call's card changes — within the same second as the page drawn before."""
    from test_claude_code_background import AGENT, PROJECT, TOUR

    root = tmp_path / "-home-user-demo"
    (root / TOUR / "subagents").mkdir(parents=True)
    rows = (PROJECT / f"{TOUR}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, r in enumerate(rows) if "<task-notification>" in r)
    (root / f"{TOUR}.jsonl").write_text("".join(rows[:cut]), encoding="utf-8")
    src = PROJECT / TOUR / "subagents" / f"agent-{AGENT}.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    end = next(i for i, r in enumerate(lines) if '"end_turn"' in r)
    (root / TOUR / "subagents" / src.name).write_text("".join(lines[:end]), encoding="utf-8")
    meta = root / TOUR / "subagents" / f"agent-{AGENT}.meta.json"
    full = json.loads(src.with_suffix(".meta.json").read_text(encoding="utf-8"))
    full.pop("finished")
    meta.write_text(json.dumps(full), encoding="utf-8")
    app = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    client = app.test_client()
    key = f"-home-user-demo~{TOUR}"
    _frozen(monkeypatch)
    urls = [f"/s/{key}", f"/s/{key}.json"]
    assert "running in background" in client.get(urls[0]).get_data(as_text=True)
    before = {u: client.get(u).data for u in urls}
    meta.write_text(json.dumps({**full, "finished": True}), encoding="utf-8")
    page = client.get(urls[0]).get_data(as_text=True)
    assert "finished · no notification" in page and "running in background" not in page
    assert client.get(urls[1]).data != before[urls[1]]


def test_the_list_as_data_is_drawn_once_and_shows_a_write_on_the_next_request(tmp_path, monkeypatch):
    """`/sessions.json` is shared as the list page is (a dashboard polls it; it was built for each
    request): the same bytes for everyone while the rows stay the same, and a write the watcher
    reports is in the next answer, within the same second."""
    import shutil
    from conftest import SESSIONS

    root = tmp_path / "root"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    client = app.test_client()
    pages, store = app.extensions["viewer"].pages, app.extensions["viewer"].store
    _frozen(monkeypatch)
    client.get("/sessions.json")  # the session indexed for its row: that answer is its own
    _search_index_settled(app)
    draws = pages.draws
    first = client.get("/sessions.json").data
    for _ in range(5):
        assert client.get("/sessions.json").data == first
    assert pages.draws == draws + 1
    path = root / KEY / "messages.jsonl"
    append(path, 0)
    store.note_change(str(path), "modified")
    (row,) = client.get("/sessions.json").get_json()["sessions"]
    assert row["size"] == path.stat().st_size
