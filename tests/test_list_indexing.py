"""The session list does not wait for indexing: a root of sessions nobody indexed yet lists its
first page from the file system at once, and rows fill in as the background indexer reaches them
(in the browser through the list's stream, without a reload).

The indexer's thread is held back by a listener until the test releases it; nothing sleeps."""

import re
import threading

import pytest
from playwright.sync_api import expect

from viewer.web import create_app

from conftest import LiveServer, stream_open, write_claude_session


class HoldWalker:
    """Holds the background walker (not request threads) before its first pass."""

    def __init__(self):
        self.held = threading.Event()
        self.release = threading.Event()

    def progress(self, key, read, total):
        if threading.current_thread().name == "indexer" and not self.release.is_set():
            self.held.set()
            assert self.release.wait(60)


@pytest.fixture
def root(tmp_path):
    """30 Claude Code sessions of ~20 KB in 3 projects: more than a list page indexes itself."""
    root = tmp_path / "projects"
    for i in range(30):
        write_claude_session(root / f"proj-{i % 3}" / f"s{i:02d}.jsonl", 20_000, start=i * 100)
    return root


def held_app(root, tmp_path, **config):
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False, **config})
    hold = HoldWalker()
    indexer = app.extensions["viewer"].store.indexer
    indexer.listen(hold)
    indexer.start()
    assert hold.held.wait(30)
    return app, hold, indexer


def titles(html):
    """The titles the rows show (each link's text, not its tooltip)."""
    return re.findall(r">Prompt \d+: look at the window code", html)


def test_the_first_page_comes_from_the_file_system_and_fills_in_after(root, tmp_path):
    app, hold, indexer = held_app(root, tmp_path)
    c = app.test_client()
    html = c.get("/").get_data(as_text=True)
    assert html.count('<tr id="row-') == 30
    pending = html.count('class="title pending"')
    assert 10 <= pending < 30  # a few small ones were indexed inline, the rest wait
    assert len(titles(html)) == 30 - pending
    # sizes and times from the file system
    assert re.search(r'data-label="size">2\d\.\d KB</td>', html) and "written <time" in html
    assert "indexing…" in html and re.search(r"Indexing \d+ of 30 sessions", html)
    rows = c.get("/sessions.json?wait=0").get_json()["sessions"]
    still = [r for r in rows if r.get("pending")]
    assert 0 < len(still) < pending  # each request indexes a few more small ones itself
    assert all("title" not in r and r["size"] > 20_000 for r in still)
    waited = c.get("/sessions.json?wait=0.2").get_json()["sessions"]  # the walker is held: in vain
    left = {r["key"] for r in waited if r.get("pending")}
    assert left and left <= {r["key"] for r in still}
    hold.release.set()
    assert indexer.idle(60)
    html = c.get("/").get_data(as_text=True)
    assert len(titles(html)) == 30 and "indexing…" not in html
    assert 'id="list-indexing" hidden' in html.replace("\n", " ") or 'hidden>' in html
    assert not [r for r in c.get("/sessions.json").get_json()["sessions"] if r.get("pending")]


def test_the_list_stream_fills_rows_in_as_they_are_indexed(root, tmp_path):
    from test_live_stream import Stream

    app, hold, indexer = held_app(root, tmp_path, HEARTBEAT=0.5)
    c = app.test_client()
    html = c.get("/").get_data(as_text=True)
    url = re.search(r'hx-sse:connect="([^"]+)"', html).group(1).replace("&amp;", "&")
    assert "v=" in url
    pending = set(re.findall(r'<tr id="row-([^"]+)" data-key="[^"]+" data-mtime="[^"]+"[^>]*>\s*'
                             r'\{?#?[^<]*<td class="title pending"', html))
    stream = Stream(c.get(url, buffered=False))
    hold.release.set()
    filled = set()
    seen = 0
    while seen < 400 and not pending <= filled:
        for _, _, data in stream.next():
            seen += 1
            for key, row in re.findall(r'<tr id="row-([^"]+)"[^>]*hx-swap-oob="true">(.*?)</tr>', data, re.S):
                if "Prompt" in row:
                    filled.add(key)
    stream.close()
    assert pending and pending <= filled


@pytest.mark.browser
def test_rows_fill_in_without_a_reload(root, tmp_path, watched_page):
    app, hold, indexer = held_app(root, tmp_path)
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/")
        expect(page.locator("td.pending").first).to_be_visible()
        expect(page.locator("#list-indexing")).to_contain_text("of 30 sessions")
        stream_open(page, "list-live")
        hold.release.set()
        expect(page.locator("td.pending")).to_have_count(0, timeout=30_000)
        expect(page.locator("td.title a", has_text="Prompt")).to_have_count(30)
        expect(page.locator("#list-indexing")).to_be_hidden()
        assert not page.problems


def test_the_list_says_how_far_the_search_index_is(root, tmp_path):
    app, hold, indexer = held_app(root, tmp_path)
    c = app.test_client()
    html = c.get("/").get_data(as_text=True)
    m = re.search(r"Search index: (\d+) of 30 sessions", html)
    assert m and int(m.group(1)) < 30
    assert c.get("/sessions.json?wait=0").get_json()["search_indexing"]["total"] == 30
    hold.release.set()
    fts = app.extensions["viewer"].fts
    for _ in range(3):
        assert indexer.idle(60) and fts.wait(60)
    html = c.get("/").get_data(as_text=True)
    assert "Search index:" not in html and 'id="search-indexing" hidden' in html
    assert c.get("/sessions.json").get_json()["search_indexing"] is None
    indexer.stop()
    fts.close()


def test_the_search_index_note_goes_once_all_that_can_be_read_is_in(tmp_path, unreadable):
    """An empty session has no rows to index and a file the server cannot read never will: the
    note saying a search finds only part of the archive must not stay up for good because of them."""
    root = tmp_path / "root"
    for name in ("empty", "locked", "plain"):
        (root / name).mkdir(parents=True)
    (root / "empty" / "messages.jsonl").write_text("")
    locked = root / "locked" / "messages.jsonl"
    for p in (locked, root / "plain" / "messages.jsonl"):
        p.write_text('{"role": "user", "content": "hello"}\n{"role": "assistant", "content": "hi"}\n')
    unreadable(locked)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False})
    c = app.test_client()
    c.get("/")
    viewer = app.extensions["viewer"]
    for _ in range(3):
        assert viewer.store.indexer.idle(60) and viewer.fts.wait(60)
    html = c.get("/").get_data(as_text=True)
    assert "cannot be read: Permission denied" in html and "empty session" in html
    assert "Search index:" not in html and 'id="search-indexing" hidden' in html
    assert c.get("/sessions.json").get_json()["search_indexing"] is None
    assert "hello" in c.get("/search?q=hello").get_data(as_text=True)
    viewer.store.indexer.stop()


def test_a_progress_note_drawn_before_the_indexer_finished_is_taken_down(root, tmp_path):
    """A page draws its progress note before its rows; when the indexer finishes in between, the
    rows are current (nothing for the stream to fill in) but the note is not: the stream's first
    message takes it down, or it says "Indexing 0 of 1" for good."""
    app, hold, indexer = held_app(root, tmp_path, HEARTBEAT=0.5)
    c = app.test_client()
    html = c.get("/").get_data(as_text=True)
    assert re.search(r"Indexing \d+ of 30 sessions", html)
    hold.release.set()
    assert indexer.idle(60)
    # the page's rows as of now: only its note is behind
    url = re.search(r'hx-sse:connect="([^"]+)"', html).group(1).replace("&amp;", "&")
    url = re.sub(r"\bv=\d+", f"v={indexer.version}", url)
    resp = c.get(url, buffered=False)
    data = ""
    try:
        for chunk in resp.response:  # up to the first message, or three seconds of heartbeats
            data += chunk.decode() if isinstance(chunk, bytes) else chunk
            if "data:" in data or data.count(": ping") >= 6:
                break
    finally:
        resp.close()
    note = re.search(r'<p class="list-indexing muted" id="list-indexing"[^>]*>', data)
    assert note and "hx-swap-oob" in note.group(0) and "hidden" in note.group(0)
    assert "<tr" not in data  # no row changed
