"""A big session with no index opens at once: its first screen is read from the part of the file it
shows while the index is built in the background (one pass, shared), cards whose other half was not
read say "resolving…" and complete in place when the index is done, and links taken from that first
screen open the same events before and after indexing.

The background build is held by a listener until the test releases it: nothing sleeps."""

import json
import os
import re
import threading

import pytest
from playwright.sync_api import expect

from viewer import partial
from viewer.index import SessionIndex

from conftest import LiveServer, held_app, stream_open, write_claude_session

SIZE = 50 << 20
CALLS = ("toolu_slow_a", "toolu_slow_b", "toolu_slow_c")


def line(**rec):
    return json.dumps({"sessionId": "big", "timestamp": "2025-10-21T09:00:00.000Z", **rec}) + "\n"


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """50 MB of Claude Code: three calls at the start whose results come at the very end, a line
    without an id and a line repeating an earlier uuid near the end."""
    root = tmp_path_factory.mktemp("firstscreen") / "sessions"
    path = root / "big.jsonl"
    root.mkdir(parents=True)
    with open(path, "w") as f:
        f.write(line(type="user", uuid="h-1", message={"role": "user", "content": "Run the three slow checks"}))
        f.write(line(type="assistant", uuid="h-2", message={
            "id": "msg_h", "role": "assistant", "model": "claude-opus-4-6", "content": [
                {"type": "tool_use", "id": c, "name": "Bash", "input": {"command": f"slow-check {c[-1]}"}}
                for c in CALLS]}))
    write_claude_session(path, SIZE, start=10, result_size=5000, old=False)
    with open(path) as f:
        repeated = f.read(200_000).splitlines()[7]  # an ordinary line of the first turns
    assert '"uuid": "u-12-p"' in repeated
    with open(path, "a") as f:
        f.write(line(type="system", subtype="turn_duration", durationMs=1200))  # no uuid
        f.write(repeated + "\n")
        f.write(line(type="user", uuid="t-1", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c, "content": f"check {c[-1]} passed"} for c in CALLS]}))
        f.write(line(type="assistant", uuid="t-2", message={
            "id": "msg_t", "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "All three checks passed."}]}))
    os.utime(path, (1_700_000_000, 1_700_000_000))  # a finished session
    return root, path


@pytest.fixture
def app(big, tmp_path):
    yield from held_app(big[0], tmp_path)


def get(client, url):
    """A page through the test client, closed as a server closes it (the background build starts
    once the page is sent)."""
    r = client.get(url)
    r.close()
    return r


def html_of(client, url):
    return get(client, url).get_data(as_text=True)


def index_of(app):
    store = app.extensions["viewer"].store
    return store.build("big").wait(60)


def test_the_first_screen_is_served_before_the_index(app):
    c = app.test_client()
    html = html_of(c, "/s/big?at=end")  # the latest events
    store = app.extensions["viewer"].store
    build = store.running("big")
    assert build is not None and not build.done and app.hold.held.wait(30)  # held, not done
    assert 'id="m-t-2"' in html and "All three checks passed." in html
    assert 'id="index-progress"' in html and "Reading the whole session" in html
    assert html.count('class="counting"') == 2  # messages and tool calls come with the index
    # the results at the end whose calls are at the start
    assert html.count("result of a call further up") == 3
    assert len(html) < 2_000_000
    app.hold.release.set()
    idx = index_of(app)
    assert idx.summary.tool_calls > 8000
    html = html_of(c, "/s/big?at=end")
    assert "resolving" not in html and 'class="counting"' not in html
    assert html.count("shown with the call") >= 3


def test_the_start_shows_calls_resolving_until_the_index_is_done(app):
    c = app.test_client()
    html = html_of(c, "/s/big")  # a finished session opens at its start
    assert app.hold.held.wait(30)
    assert 'id="m-h-2"' in html and "Run the three slow checks" in html
    for call in CALLS:
        card = html[html.index(f'id="tc-{call}"'):]
        assert "resolving…" in card[:3000] and "Result further down — resolving…" in card[:6000]
    assert 'id="early-stream"' in html and "early=0-" in html  # a stream only to complete the page


def test_background_passes_step_aside_while_a_first_screen_is_drawn(app, monkeypatch):
    """The walker begins indexing a big session as the server starts; the first screen a user opens
    meanwhile must not share the processor with that pass: passes wait (Store.let_pages_first)
    while a page is being answered, and go on once it is sent."""
    from viewer.web import early

    store = app.extensions["viewer"].store
    passes = []

    def a_pass_step():  # what a background pass does between two steps of its reading
        store.let_pages_first(60)
        passes.append("stepped")

    real = early.first_screen

    def drawing(*args, **kwargs):
        step = threading.Thread(target=a_pass_step)
        step.start()
        step.join(0.5)
        assert step.is_alive() and not passes  # it waits for the page
        passes.append(step)
        return real(*args, **kwargs)

    monkeypatch.setattr(early, "first_screen", drawing)
    page = get(app.test_client(), "/s/big")
    assert page.status_code == 200 and 'id="m-h-2"' in page.get_data(as_text=True)
    step = passes[0]
    step.join(30)  # the page is sent: the pass goes on
    assert not step.is_alive() and passes[1:] == ["stepped"]


def test_two_pages_of_an_unindexed_session_share_one_background_pass(app):
    store = app.extensions["viewer"].store
    pages = [get(app.test_client(), "/s/big?at=end"), get(app.test_client(), "/s/big?from=0")]
    assert all(p.status_code == 200 for p in pages)
    assert app.hold.held.wait(30)
    first = store.running("big")
    assert store.build("big") is first
    app.hold.release.set()
    both = []
    waiters = [threading.Thread(target=lambda: both.append(store.index("big"))) for _ in range(2)]
    for w in waiters:
        w.start()
    for w in waiters:
        w.join(60)
    assert len(both) == 2 and both[0] is both[1]
    assert app.hold.builds == ["big"]  # one pass over the file


def test_links_from_the_first_screen_open_the_same_events_after_indexing(app, big):
    root, path = big
    c = app.test_client()
    html = html_of(c, "/s/big?at=end")
    links = dict(re.findall(r'<li class="ev [^"]*" id="m-([^"]+)".*?class="permalink" href="([^"]+)"', html, re.S))
    links = {k: v.replace("&amp;", "&") for k, v in links.items()}
    no_id = next(k for k in links if k.startswith("@"))  # the line without a uuid
    repeated = next(k for k in links if k.startswith("u-12-"))  # its uuid appeared at the start
    assert "?pos=" in links["t-2"] and "?pos=" in links[no_id]
    # before the index: each link opens its own event (found in the file)
    for eid in (no_id, repeated, "t-2"):
        page = get(c, links[eid])
        assert page.status_code == 200, eid
        assert f'data-target="m-{eid}"' in page.get_data(as_text=True)
    app.hold.release.set()
    full = index_of(app)
    th = full.threads["main"]
    for eid in (no_id, repeated, "t-2"):
        offset = int(re.search(r"pos=(\d+)", links[eid]).group(1))
        final = th.ids[full.seq_at(offset)]
        r = get(c, links[eid])
        if final == eid:
            assert r.status_code == 200 and f'data-target="m-{eid}"' in r.get_data(as_text=True)
        else:  # the index names it otherwise: the link leads there
            assert r.status_code == 302 and r.headers["Location"].endswith(f"/s/big/m/{final}")
            page = html_of(c, r.headers["Location"])
            assert f'data-target="m-{final}"' in page
    assert th.ids[full.seq_at(int(no_id[1:]))].startswith("L")
    assert th.ids[full.seq_at(int(re.search(r"pos=(\d+)", links[repeated]).group(1)))] != repeated


def test_a_cold_permalink_opens_around_its_event_before_the_index(app, big):
    root, path = big
    full = SessionIndex(path).build()
    th = full.threads["main"]
    middle = next(th.ids[i] for i in range(len(th) // 2, len(th)) if th.ids[i].startswith("u-"))
    line_id = next(th.ids[i] for i in range(len(th) // 3, len(th)) if th.ids[i].startswith("L"))
    c = app.test_client()
    for eid in (middle, line_id):
        html = html_of(c, f"/s/big/m/{eid}")
        assert f'data-target="m-{eid}"' in html and 'class="ev ' in html
        assert re.search(rf'<li class="ev [^"]*target[^"]*" id="m-{re.escape(eid)}"', html)
    assert app.hold.held.wait(30) and not app.extensions["viewer"].store.running("big").done


def test_locate_finds_what_the_index_names(big):
    root, path = big
    full = SessionIndex(path).build()
    th = full.threads["main"]
    for seq in (0, 1, 2, len(th) // 2, len(th) - 3, len(th) - 1):
        eid = th.ids[seq]
        got = partial.locate(str(path), eid)
        if eid.startswith("L") or eid == th.ids[-3]:
            assert got is None or got[0] == th.offsets[seq]
        else:
            assert got is not None and got[0] == th.offsets[seq], eid


def test_locate_reads_the_file_in_chunks_and_finds_ids_across_their_edges(tmp_path, monkeypatch):
    """The search for an id reads chunk by chunk, two chunks at a time on two threads (no mapping
    of the whole file: its pages would count in the server's memory); an id cut by a chunk's edge, a line longer than a chunk and a
    quoted id inside another record's text are all told right."""
    path = tmp_path / "s.jsonl"
    write_claude_session(path, 60_000, result_size=700)
    with open(path, "a") as f:  # an id quoted in a result before the line that holds it
        f.write(json.dumps({"type": "user", "uuid": "mention", "timestamp": "2025-10-21T09:00:00Z",
                            "message": {"role": "user", "content": 'see "late-1" below'}}) + "\n")
        f.write(json.dumps({"type": "user", "uuid": "late-1", "timestamp": "2025-10-21T09:00:01Z",
                            "message": {"role": "user", "content": "x" * 5000}}) + "\n")
    th = SessionIndex(path).build().threads["main"]
    for step in (5, 64, 1000):  # chunks of 16 × step bytes
        monkeypatch.setattr(partial, "STEP", step)
        monkeypatch.setattr(partial, "SCAN_CHUNK", 16 * step)
        for seq in range(0, len(th), 7):
            eid = th.ids[seq]
            if not eid.startswith("L"):
                assert partial.locate(str(path), eid) == (th.offsets[seq], 0), (step, eid)
        assert partial.locate(str(path), "late-1") == (th.offsets[th.ids.index("late-1")], 0)
        assert partial.locate(str(path), "nowhere") is None


def test_region_ids_are_the_index_ids_where_they_can_be_known(big):
    root, path = big
    full = SessionIndex(path).build()
    th = full.threads["main"]
    head = partial.head(str(path))
    n = len(head.threads["main"])
    assert head.threads["main"].ids == th.ids[:n]  # from the start: final
    tail = partial.tail(str(path))
    t = tail.threads["main"]
    first = full.seq_at(tail.region.lo)
    assert list(t.offsets) == list(th.offsets[first:])
    for eid, off, final in zip(t.ids, t.offsets, th.ids[first:]):
        assert eid == final or eid == f"@{off}" or full.at_offset(off) == final


@pytest.mark.browser
def test_resolving_cards_complete_in_place_without_a_reload(app, watched_page):
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/big?from=0")
        for call in CALLS:
            expect(page.locator(f"#tc-{call}-state")).to_contain_text("resolving")
        expect(page.locator("#index-progress")).to_be_visible()
        expect(page.locator("#session-facts .counting").first).to_be_visible()
        stream_open(page, "early-stream")
        page.evaluate("window.__kept = document.getElementById('m-h-2')")
        app.hold.release.set()
        for call in CALLS:
            expect(page.locator(f"#tc-{call}-state")).to_contain_text("completed", timeout=60_000)
            expect(page.locator(f"#tc-{call}-result")).to_contain_text(f"check {call[-1]} passed")
        expect(page.locator("#index-progress")).to_be_hidden()
        expect(page.locator("#session-facts .counting")).to_have_count(0)
        expect(page.locator("#session-facts")).to_contain_text("tool calls")
        assert page.evaluate("window.__kept === document.getElementById('m-h-2')")  # no reload
        assert not page.problems


@pytest.mark.browser
def test_the_latest_events_resolve_in_place(app, big, watched_page):
    root, path = big
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/big?at=end")
        expect(page.locator(".result-ref .state.resolving")).to_have_count(3)
        stream_open(page, "live")
        app.hold.release.set()
        expect(page.locator(".result-ref .state.resolving")).to_have_count(0, timeout=60_000)
        for call in CALLS:
            expect(page.locator(f"#rr-{call}")).to_contain_text("result of Bash")
            expect(page.locator(f"#rr-{call}")).to_contain_text("shown with the call")
        # (a page whose cards the index draws otherwise, some of them — a line without an id, a
        # uuid used again — is read again and compared: the others take the index's numbers too)
        idx = index_of(app)
        expect(page.locator("#m-t-2")).to_have_attribute("data-seq", str(idx.locate("t-2")[1]))
        assert not page.problems
