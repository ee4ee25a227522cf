"""The session event stream through Flask's test client: payloads, ids, and exact resumption."""

import json
import re
import shutil

import pytest

from viewer.web import create_app
from viewer.web import feed
from viewer.web.live import cursor_of, parse_cursor

from conftest import SESSIONS, bounded

KEY = "legion-feature-tour"


@pytest.fixture
def setup(tour, tmp_path):
    root, path = tour
    return create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False}), path


def append(path, *records):
    with open(path, "a") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def msg(i):
    return {"type": "assistant", "content": f"live {i}", "timestamp": 1761073300 + i, "session_id": "s",
            "message_id": f"live-{i}"}


class Stream:
    """Reads SSE messages from a streamed test-client response: (id, event, data). The session map
    that follows new events in a message of its own (`Feed._minimap`) is kept apart in `maps`,
    unless `maps=False` (then it is read as any message)."""

    def __init__(self, resp, maps: bool = True):
        self.resp, self.chunks, self.buf = resp, iter(resp.response), ""
        self.keep_maps, self.maps, self.pending = maps, [], []

    def next_map(self) -> str:
        """The next session map sent (after the events it follows)."""
        while not self.maps:
            self.next_block()
        return self.maps.pop(0)

    def next_block(self):
        got = self._read()
        if got is not None:
            self.pending.append(got)

    def next(self, n=1):
        out, self.pending = self.pending[:n], self.pending[n:]
        while len(out) < n:
            got = self._read()
            if got is not None:
                out.append(got)
        return out

    def _read(self):
        while True:
            while "\n\n" not in self.buf:
                chunk = next(self.chunks)
                self.buf += chunk.decode() if isinstance(chunk, bytes) else chunk
            block, self.buf = self.buf.split("\n\n", 1)
            fields = {"data": []}
            for line in block.split("\n"):
                name, _, value = line.partition(": ")
                if name == "data":
                    fields["data"].append(value)
                elif name in ("id", "event"):
                    fields[name] = value
            data = "\n".join(fields["data"])
            bare = data.strip()
            if self.keep_maps and "event" not in fields and bare.startswith('<nav id="minimap"') \
                    and bare.count("<nav") == 1 and bare.endswith("</nav>"):
                self.maps.append(data)
                return None
            if fields["data"] or "event" in fields:
                return fields.get("id"), fields.get("event"), data

    def close(self):
        self.resp.close()


def test_the_session_map_follows_the_events_it_changed(setup):
    # once new events are out, the stream sends the page's map out of band: a new prompt's mark,
    # and a call that failed marked as an error at its call
    app, path = setup
    c = app.test_client()
    start = cursor_of(app.extensions["viewer"].store.index(KEY))
    append(path, {"type": "user", "content": "Run the suite.", "session_id": "s", "timestamp": 1761073400,
                  "message_id": "live-prompt"},
           {**msg(1), "metadata": {"tool_uses": [{"id": "toolu_live", "name": "Bash", "input": {"command": "ls"}}]}},
           {"type": "user", "content": "Tool results: 1", "session_id": "s", "message_id": "live-r",
            "metadata": {"tool_results": [{"tool_use_id": "toolu_live", "content": "no", "is_error": True}]}})
    stream = Stream(c.get(f"/s/{KEY}/events?after={start}"))
    ((_, _, events),) = stream.next()
    assert ids_in(events) == ["live-prompt", "live-1", "live-r"] and "minimap" not in events
    shown = bounded(stream.next_map)
    stream.close()
    assert '<nav id="minimap" hx-swap-oob="innerHTML">' in shown
    assert re.search(r'data-jump="live-prompt" class="mm mm-prompt"', shown)
    assert re.search(r'data-jump="live-1" class="mm mm-error"[^>]*><title>Bash failed</title>', shown)


def read_messages(resp, n):
    s = Stream(resp)
    try:
        return s.next(n)
    finally:
        s.close()


def ids_in(data):
    return re.findall(r'<li class="ev [^"]*" id="m-([^"]+)"', data)


def test_stream_sends_new_events_and_tool_state(setup):
    app, path = setup
    c = app.test_client()
    start = cursor_of(app.extensions["viewer"].store.index(KEY))
    append(path, {**msg(1), "metadata": {"tool_uses": [{"id": "toolu_live", "name": "Bash",
                                                        "input": {"command": "ls"}}]}})
    resp = c.get(f"/s/{KEY}/events?after={start}")
    assert resp.mimetype == "text/event-stream"
    assert resp.headers["X-Accel-Buffering"] == "no" and resp.headers["Cache-Control"] == "no-cache"
    stream = Stream(resp)
    ((i1, _, d1),) = stream.next()
    assert ids_in(d1) == ["live-1"] and 'class="state pending"' in d1
    append(path, {"type": "user", "content": "Tool results: 1", "session_id": "s", "message_id": "live-r",
                  "metadata": {"tool_results": [{"tool_use_id": "toolu_live", "content": "a.txt"}]}})
    ((i2, _, d2),) = stream.next()
    stream.close()
    assert ids_in(d2) == ["live-r"]
    assert 'id="tc-toolu_live-state" hx-swap-oob="true"' in d2 and "completed" in d2
    assert 'id="tc-toolu_live-result" hx-swap-oob="true"' in d2 and "a.txt" in d2
    assert int(i1.split(";")[0]) < int(i2.split(";")[0]) == path.stat().st_size  # file positions


def test_resume_from_last_event_id_has_no_gap_and_no_duplicate(setup, monkeypatch):
    monkeypatch.setattr(feed, "MESSAGE_BYTES", 1)  # one event per message: resume mid-burst
    app, path = setup
    c = app.test_client()
    start = cursor_of(app.extensions["viewer"].store.index(KEY))
    append(path, *[msg(i) for i in range(1, 6)])
    first = read_messages(c.get(f"/s/{KEY}/events?after={start}"), 2)
    got = [x for m in first for x in ids_in(m[2])]
    resumed = read_messages(c.get(f"/s/{KEY}/events?after={start}",
                                  headers={"Last-Event-ID": first[-1][0]}), 3)
    got += [x for m in resumed for x in ids_in(m[2])]
    assert got == [f"live-{i}" for i in range(1, 6)]
    append(path, msg(6))
    again = read_messages(c.get(f"/s/{KEY}/events", headers={"Last-Event-ID": resumed[-1][0]}), 1)
    assert ids_in(again[0][2]) == ["live-6"]


def test_a_replaced_file_tells_the_page_to_reload(setup):
    app, path = setup
    c = app.test_client()
    app.extensions["viewer"].store.index(KEY)
    resp = c.get(f"/s/{KEY}/events")
    path.write_text(json.dumps(msg(1)) + "\n")
    (_, event, _), = read_messages(resp, 1)
    assert event == "reset"


def test_every_open_stream_learns_of_a_replaced_file(setup):
    """Only one stream's refresh rebuilds the index; the others must notice all the same."""
    import threading

    app, path = setup
    app.extensions["viewer"].store.index(KEY)
    got, connected = [], threading.Barrier(3)

    def tab():  # each open page streams on its own server thread
        stream = Stream(app.test_client().get(f"/s/{KEY}/events"))  # its cursor is taken here
        connected.wait()
        got.append(stream.next()[0][1])
        stream.close()

    tabs = [threading.Thread(target=tab) for _ in range(2)]
    for t in tabs:
        t.start()
    connected.wait()
    path.write_text(json.dumps(msg(1)) + "\n")
    for t in tabs:
        t.join(10)
    assert got == ["reset", "reset"]


def test_a_removed_file_says_so(setup):
    app, path = setup
    c = app.test_client()
    app.extensions["viewer"].store.index(KEY)
    resp = c.get(f"/s/{KEY}/events")
    path.unlink()
    (_, event, data), = read_messages(resp, 1)
    assert event == "removed"


def test_cursor_round_trip():
    assert parse_cursor("120;a1=5;b-2=0") == {"main": 120, "a1": 5, "b-2": 0}
    assert parse_cursor("120;a1=5;@3") == {"main": 120, "a1": 5, "@": 3}
    assert parse_cursor("garbage") is None and parse_cursor("") is None


def test_unknown_session_stream_is_404(setup):
    app, _ = setup
    assert app.test_client().get("/s/nope/events").status_code == 404


def test_closing_the_connection_releases_the_stream(tmp_path, serve):
    import socket
    import time

    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    srv = serve(root, HEARTBEAT=0.2)
    viewer = srv.app.extensions["viewer"]
    sock = socket.create_connection(("127.0.0.1", srv.server.server_port))
    sock.sendall(f"GET /s/{KEY}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert b"text/event-stream" in sock.recv(4096)
    deadline = time.monotonic() + 5
    while viewer.streams != 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert viewer.streams == 1
    sock.close()
    deadline = time.monotonic() + 5
    while viewer.streams and time.monotonic() < deadline:
        time.sleep(0.05)
    assert viewer.streams == 0  # the next heartbeat found the client gone and freed the thread


def test_app_settings_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SESSION_VIEWER_ROOTS", str(SESSIONS))
    monkeypatch.setenv("SESSION_VIEWER_TOKEN", "t0k")
    monkeypatch.setenv("SESSION_VIEWER_CACHE_DIR", str(tmp_path / "c"))
    app = create_app()
    try:
        c = app.test_client()
        assert c.get("/").status_code == 401
        assert c.get("/?token=t0k", follow_redirects=True).status_code == 200
    finally:
        app.extensions["viewer"].watcher.stop()


def test_watcher_falls_back_to_polling_when_inotify_is_exhausted(tmp_path, monkeypatch, caplog):
    import errno
    import logging
    import time

    from viewer.store import Store
    from viewer.web import live

    class Exhausted:
        daemon = True

        def schedule(self, *a, **k):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(live, "Observer", Exhausted)
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    with caplog.at_level(logging.WARNING, logger="viewer.web.live"):
        watcher = live.start_watcher(Store([root]))
    try:
        assert watcher.mode == "polling"
        assert any("polling" in r.message for r in caplog.records)
        seen = watcher.hub.version
        append(root / KEY / "messages.jsonl", msg(1))
        deadline = time.monotonic() + 10
        while watcher.hub.version == seen and time.monotonic() < deadline:
            watcher.hub.wait(seen, 0.5)
        assert watcher.hub.version > seen  # the poller saw the write
    finally:
        watcher.stop()


def test_many_streams_each_get_every_event_once_and_in_order(tmp_path, serve):
    """Streams share one index and one of them extends it while the others read: no stream may
    skip an event another stream's refresh indexed meanwhile, or send one twice."""
    import http.client
    import re
    import threading
    import time

    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    srv = serve(root)
    port = srv.server.server_port
    after = cursor_of(srv.app.extensions["viewer"].store.index(KEY))
    got = [[] for _ in range(12)]

    # each stream reads until it has all 40 events: a slow machine only makes that take longer. (A
    # read that timed out after a second was retried on a socket file that, once timed out, refuses
    # every later read: under load a stream quiet for a second lost the rest of its events.)
    deadline = time.monotonic() + 60

    def client(out):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=deadline - time.monotonic())
        conn.request("GET", f"/s/{KEY}/events?after={after}")
        resp = conn.getresponse()
        while len(out) < 40:
            try:
                line = resp.readline()
            except TimeoutError:
                break  # the deadline: the assertion says how many events each stream got
            if not line:
                break
            out.extend(re.findall(r'<li class="ev [^"]*" id="m-(live-\d+)"', line.decode()))
        conn.close()

    threads = [threading.Thread(target=client, args=(out,), daemon=True) for out in got]
    for t in threads:
        t.start()
    for i in range(1, 41):
        append(root / KEY / "messages.jsonl", msg(i))
        time.sleep(0.01)
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 1)
    assert all(out == [f"live-{i}" for i in range(1, 41)] for out in got), [len(o) for o in got]


def test_a_burst_travels_in_few_messages_with_each_card_update_once(setup):
    app, path = setup
    c = app.test_client()
    start = cursor_of(app.extensions["viewer"].store.index(KEY))
    calls = [{"id": f"toolu_b{i}", "name": "Bash", "input": {"command": f"echo {i}"}} for i in range(20)]
    append(path, {**msg(1), "metadata": {"tool_uses": calls}},
           *[{"type": "user", "content": f"Tool results: {i}", "session_id": "s", "message_id": f"res-{i}",
              "metadata": {"tool_results": [{"tool_use_id": f"toolu_b{i}", "content": f"out {i}"}]}}
             for i in range(20)], *[msg(i) for i in range(2, 40)])
    (cursor, _, data), = read_messages(c.get(f"/s/{KEY}/events?after={start}"), 1)
    assert ids_in(data) == ["live-1", *[f"res-{i}" for i in range(20)], *[f"live-{i}" for i in range(2, 40)]]
    assert int(cursor.split(";")[0]) == path.stat().st_size  # the id is the cursor after the last
    assert data.count('id="hidden-count"') == 1  # out-of-band updates once per message, after the events
    assert data.rindex('id="hidden-count"') > data.rindex('id="m-live-39"')
    for i in range(20):
        assert data.count(f'id="tc-toolu_b{i}-state" hx-swap-oob="true"') == 1


def test_a_carriage_return_in_a_transcript_cannot_forge_sse_fields(setup):
    app, path = setup
    c = app.test_client()
    start = cursor_of(app.extensions["viewer"].store.index(KEY))
    forged = "Bash\revent: reset\rid: 0\rdata: <b>x</b>"  # a tool name is shown as written
    append(path, {**msg(1), "metadata": {"tool_uses": [{"id": "toolu_cr", "name": forged, "input": {}}]}})
    resp = c.get(f"/s/{KEY}/events?after={start}")
    raw = b""
    for chunk in resp.response:
        raw += chunk
        if b"\n\n" in raw.split(b"live-1", 1)[-1]:
            break
    resp.close()
    assert b"\r" not in raw and b"\nevent:" not in raw and b"\nid: 0" not in raw
    (_, event, data), = read_messages(c.get(f"/s/{KEY}/events?after={start}"), 1)
    assert event is None and ids_in(data) == ["live-1"]
    assert "Bash&#13;event: reset&#13;id: 0&#13;data: &lt;b&gt;x&lt;/b&gt;" in data


def test_every_event_is_rendered_once_whatever_the_number_of_streams(tmp_path, serve):
    import http.client
    import threading
    import time

    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    srv = serve(root)
    viewer = srv.app.extensions["viewer"]
    after = cursor_of(viewer.store.index(KEY))
    got = [[] for _ in range(20)]
    deadline = time.monotonic() + 60  # waited for as long as it takes, up to here (see above)

    def client(out):
        conn = http.client.HTTPConnection("127.0.0.1", srv.server.server_port,
                                          timeout=deadline - time.monotonic())
        conn.request("GET", f"/s/{KEY}/events?after={after}")
        resp = conn.getresponse()
        while len(out) < 30:
            try:
                line = resp.readline()
            except TimeoutError:
                break
            if not line:
                break
            out.extend(re.findall(r'<li class="ev [^"]*" id="m-(live-\d+)"', line.decode()))
        conn.close()

    threads = [threading.Thread(target=client, args=(out,), daemon=True) for out in got]
    for t in threads:
        t.start()
    while viewer.streams < len(got) and time.monotonic() < deadline:
        time.sleep(0.02)
    for i in range(1, 31):
        append(root / KEY / "messages.jsonl", msg(i))
        if i % 10 == 0:
            time.sleep(0.2)
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 1)
    assert all(out == [f"live-{i}" for i in range(1, 31)] for out in got), [len(o) for o in got]
    assert viewer.feeds.renders == 30  # not 20 × 30


def test_streams_beyond_the_limit_are_told_so(setup):
    app, path = setup
    app.extensions["viewer"].max_streams = 1
    c = app.test_client()
    first = c.get(f"/s/{KEY}/events")
    (_, event, data), = read_messages(c.get(f"/s/{KEY}/events"), 1)
    assert event == "busy" and data == "too many live viewers — reload to retry"
    first.close()
    append(path, msg(1))
    (_, event, data), = read_messages(c.get(f"/s/{KEY}/events?after={cursor_of(app.extensions['viewer'].store.index(KEY), main=19)}"), 1)
    assert event is None and ids_in(data) == ["live-1"]  # a place freed is taken again


def test_broadcast_reaches_open_streams_and_later_ones_from_older_pages(setup):
    app, path = setup
    viewer = app.extensions["viewer"]
    c = app.test_client()
    page_cursor = cursor_of(viewer.store.index(KEY))  # a page drawn now
    stream = Stream(c.get(f"/s/{KEY}/events?after={page_cursor}"))
    viewer.feeds.broadcast(KEY, '<span id="count" hx-swap-oob="true">1</span>', name="count")
    ((_, _, data),) = stream.next()
    assert data == '<span id="count" hx-swap-oob="true">1</span>'
    viewer.feeds.broadcast(KEY, '<span id="count" hx-swap-oob="true">2</span>', name="count")
    ((resume, _, data),) = stream.next()
    stream.close()
    assert data.endswith(">2</span>")
    # a stream from the old page connecting only now gets the latest note of that name, once
    (_, _, data), = read_messages(c.get(f"/s/{KEY}/events?after={page_cursor}"), 1)
    assert data == '<span id="count" hx-swap-oob="true">2</span>'
    # resuming after it: nothing again
    append(path, msg(1))
    (_, _, data), = read_messages(c.get(f"/s/{KEY}/events", headers={"Last-Event-ID": resume}), 1)
    assert ids_in(data) == ["live-1"] and 'id="count"' not in data


def test_a_page_keeps_its_place_when_the_index_comes_back_from_the_cache(setup):
    """The cursor names the build of the index, not the object holding it: an index dropped from
    memory (many sessions opened since) and read back from the cache is the same build."""
    app, path = setup
    store = app.extensions["viewer"].store
    start = cursor_of(store.index(KEY))
    store.flush()
    store.forget(KEY)
    append(path, msg(1))
    (_, event, data), = read_messages(app.test_client().get(f"/s/{KEY}/events?after={start}"), 1)
    assert event is None and ids_in(data) == ["live-1"]


def _open_streams(port, path, n):
    import socket

    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
        socks.append(s)
    for s in socks:
        head = b""
        while b"retry:" not in head:
            head += s.recv(4096)
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
    return socks


def _read_until(sock, needle: bytes, limit=10.0) -> bytes:
    import time

    got, deadline = b"", time.monotonic() + limit
    while needle not in got and time.monotonic() < deadline:
        got += sock.recv(65536)
    return got


def _answering(srv) -> int:
    """Connections the built-in server's threads are answering now (a thread kept for the next
    connection, or whose stream the pump took, answers none)."""
    return srv.server.answering


def test_open_streams_hold_no_server_thread(tmp_path, serve):
    """The server hands each stream's connection to the pump: 40 viewers cost no thread each."""
    import threading
    import time

    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    srv = serve(root)
    viewer = srv.app.extensions["viewer"]
    socks = _open_streams(srv.server.server_port, f"/s/{KEY}/events", 40)
    assert viewer.streams == 40
    deadline = time.monotonic() + 5
    while _answering(srv) and time.monotonic() < deadline:  # each gave its stream away
        time.sleep(0.02)
    assert _answering(srv) == 0
    assert [t.name for t in threading.enumerate()].count("live-pump") == 1
    append(root / KEY / "messages.jsonl", msg(1))
    for s in socks:
        assert b'id="m-live-1"' in _read_until(s, b'id="m-live-1"')
    assert srv.app.test_client().get(f"/s/{KEY}").status_code == 200
    for s in socks:
        s.close()
    deadline = time.monotonic() + 10
    while viewer.streams and time.monotonic() < deadline:  # the pump sees each client go at once
        time.sleep(0.02)
    assert viewer.streams == 0


def test_streams_can_be_kept_on_threads(tmp_path, serve):
    """STREAM_THREADS: every stream on a thread of its own (servers without a socket work so)."""
    import threading

    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    srv = serve(root, STREAM_THREADS=True)
    socks = _open_streams(srv.server.server_port, f"/s/{KEY}/events", 5)
    assert _answering(srv) == 5
    assert "live-pump" not in [t.name for t in threading.enumerate()]
    append(root / KEY / "messages.jsonl", msg(1))
    for s in socks:
        assert b'id="m-live-1"' in _read_until(s, b'id="m-live-1"')
        s.close()


def test_a_client_on_a_descriptor_past_1023_is_still_there():
    """A busy server's sockets get descriptors past select()'s limit of 1023: a stream there must
    not read as hung up (it did, and a long test run ended streams that way)."""
    import os
    import socket

    from viewer.web.live import _hung_up

    server_end, client_end = socket.socketpair()
    high = socket.socket(fileno=os.dup2(server_end.fileno(), 1500))
    server_end.close()
    try:
        assert not _hung_up(high)  # open and silent
        client_end.close()
        assert _hung_up(high)  # gone
    finally:
        high.close()


def test_a_viewer_slower_than_a_burst_gets_every_event_once_and_in_order(tmp_path, serve):
    """A burst far bigger than the connection holds, to a tab that is not reading (busy, or on a
    slow link): the pump writes what the socket takes and the rest as it drains — it never blocks
    on that tab, and when the tab reads on it gets every line once, in order, none cut."""
    import socket
    import time

    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    srv = serve(root)
    viewer = srv.app.extensions["viewer"]
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the writes stall
    slow.settimeout(10)
    slow.connect(("127.0.0.1", srv.server.server_port))
    slow.sendall(f"GET /s/{KEY}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert b"retry:" in _read_until(slow, b"retry:")
    (fast,) = _open_streams(srv.server.server_port, f"/s/{KEY}/events", 1)
    for stream in list(viewer.pump._streams):  # small buffers on the server's side too
        stream.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    words = " ".join(f"word{j}" for j in range(600))  # ~5 KB a line: 2 MB in all
    n = 400
    append(root / KEY / "messages.jsonl", *({**msg(i), "content": f"live {i} {words}"}
                                            for i in range(1, n + 1)))
    last = f'id="m-live-{n}"'.encode()
    # the other stream is not held up by the stalled one
    assert last in _read_until(fast, last, limit=60)
    time.sleep(0.5)  # the slow one still is not reading
    got = _read_until(slow, last, limit=60)
    got += _read_until(slow, b"\n\n", limit=5) if not got.endswith(b"\n\n") else b""
    ids = re.findall(rb'<li class="ev [^"]*" id="m-(live-\d+)"', got)
    assert ids == [f"live-{i}".encode() for i in range(1, n + 1)]
    assert got.count(words.encode()) == n  # every line whole
    for s in (slow, fast):
        s.close()
    deadline = time.monotonic() + 10
    while viewer.streams and time.monotonic() < deadline:
        time.sleep(0.02)
    assert viewer.streams == 0


def test_reading_a_session_is_no_change_to_the_watcher(tmp_path, monkeypatch):
    """Every page, window and download opens and reads the session's files: the watcher is not
    told of those at all, only of writes and files coming and going. (It was told of every open
    and close and dropped them: under 200 concurrent pages, thousands a second kept its threads on
    a third of the interpreter, and an appended line's own event waited behind them.)"""
    import time

    from viewer.store import Store
    from viewer.web import live

    seen: list[str] = []
    handle = live._Handler.on_any_event
    monkeypatch.setattr(live._Handler, "on_any_event",
                        lambda self, event: (seen.append(event.event_type), handle(self, event)))
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    path = root / KEY / "messages.jsonl"
    watcher = live.start_watcher(Store([root]))
    try:
        assert watcher.mode == "inotify"
        for _ in range(20):
            path.read_bytes()
        append(path, msg(1))  # after the reads: once its event is here, theirs would be too
        deadline = time.monotonic() + 10
        while "modified" not in seen and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        assert "modified" in seen
        assert not {"opened", "closed_no_write"} & set(seen), seen
    finally:
        watcher.stop()


def test_page_drawing_gives_way_to_the_pump_only_while_streams_are_open(tmp_path, serve, monkeypatch):
    """While the pump has streams the interpreter switches threads every pump.SWITCH seconds, not
    every 5 ms (the pump, woken by an appended line, waits about that long behind each page thread
    drawing); once the last stream has gone and the pump's thread ended, page drawing has the
    interpreter's own interval back."""
    import sys
    import threading
    import time

    from viewer.web import pump

    def no_pump_left():
        deadline = time.monotonic() + 15
        while "live-pump" in [t.name for t in threading.enumerate()] and time.monotonic() < deadline:
            time.sleep(0.02)

    monkeypatch.setattr(pump, "IDLE_EXIT", 0.2)
    no_pump_left()  # (earlier tests' servers)
    before = sys.getswitchinterval()
    assert before > pump.SWITCH
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    srv = serve(root)
    (s,) = _open_streams(srv.server.server_port, f"/s/{KEY}/events", 1)
    try:
        assert sys.getswitchinterval() == pump.SWITCH
        append(root / KEY / "messages.jsonl", msg(1))
        assert b'id="m-live-1"' in _read_until(s, b'id="m-live-1"')
    finally:
        s.close()
    no_pump_left()
    assert sys.getswitchinterval() == before


def test_the_list_stream_adds_each_new_session_once_across_reconnects(tmp_path, monkeypatch):
    """The list's stream adds the sessions found after the page's own rows — also those that
    appeared before it opened — and a reconnect (Last-Event-ID) adds what appeared while it was
    away, and nothing it added before."""
    from viewer import store as store_mod

    monkeypatch.setattr(store_mod, "RESCAN_AFTER", 0.0)  # no watcher here: every look rescans
    root = tmp_path / "root"
    shutil.copytree(SESSIONS / "legion-feature-tour", root / KEY)
    c = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False}).test_client()
    events = re.search(r'hx-sse:connect="([^"]+)"', c.get("/").data.decode()).group(1).replace("&amp;", "&")

    def start(name):
        (root / name).mkdir()
        (root / name / "messages.jsonl").write_text(json.dumps(
            {"type": "user", "content": f"{name} starts", "session_id": name, "timestamp": 1761073500}) + "\n")

    def first(**headers):
        s = Stream(c.get(events, headers=headers), maps=False)
        try:
            (got,) = s.next()
        finally:
            s.close()
        return got[0], re.findall(r'<hx-partial[^>]*>\s*<tr id="row-([^"]+)"', got[2])

    start("opened-meanwhile")  # after the page was drawn, before its stream opened
    sent, added = first()
    assert added == ["opened-meanwhile"]
    assert first(**{"Last-Event-ID": sent})[1] == []  # a reconnect adds it no second time
    start("while-away")
    assert first(**{"Last-Event-ID": sent})[1] == ["while-away"]
