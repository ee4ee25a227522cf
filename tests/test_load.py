"""Pages under load (issue 15): what a busy server does once per change rather than once per request,
and a burst of connections that waits its turn instead of being dropped."""

import json
import select
import socket

from viewer.web import create_app

from conftest import SESSIONS


def _connected(port: int, n: int) -> int:
    """Open n connections at once to a server that is not accepting yet: how many the kernel took."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            socks.append(s)
        poller = select.poll()
        for s in socks:
            poller.register(s, select.POLLOUT)
        done: set = set()
        for _ in range(20):  # a handshake on loopback takes microseconds; a dropped one, a second
            done.update(fd for fd, ev in poller.poll(100) if ev & select.POLLOUT)
            if len(done) == n:
                break
        return sum(1 for s in socks if s.fileno() in done
                   and s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0)
    finally:
        for s in socks:
            s.close()


def test_a_burst_of_connections_waits_in_the_listen_queue(tmp_path):
    """300 connections at once (beyond Werkzeug's own queue of 128) are all taken by the kernel
    while the server is busy, none dropped to be retried a second later."""
    from viewer.cli import make_server

    app = create_app({"ROOTS": [str(SESSIONS)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    server = make_server("127.0.0.1", 0, app)
    try:
        assert _connected(server.server_port, 300) == 300
    finally:
        server.server_close()


def test_looking_at_an_unchanged_session_notes_nothing(tmp_path, tour):
    """A session's summary is noted (which wakes the indexer and the list's streams) when it
    changes, not on every request — also for an index read back from the cache."""
    root, path = tour
    config = {"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
              "INDEX_ALL": False}
    create_app(config).test_client().get("/s/legion-feature-tour")  # indexed, in the cache
    app = create_app(config)  # a new process: the index comes from the cache
    client = app.test_client()
    indexer = app.extensions["viewer"].store.indexer
    client.get("/s/legion-feature-tour")
    seen = indexer.version
    for url in ("/s/legion-feature-tour", "/s/legion-feature-tour.json", "/s/legion-feature-tour",
                "/s/legion-feature-tour/w/main?after=0"):
        assert client.get(url).status_code == 200
    assert indexer.version == seen
    with open(path, "a") as f:
        f.write(json.dumps({"type": "assistant", "content": "one more", "session_id": "s",
                            "timestamp": 1761073399, "message_id": "one-more"}) + "\n")
    assert b"one-more" in client.get("/s/legion-feature-tour?at=end").data
    assert indexer.version > seen  # the change is noted
    seen = indexer.version
    client.get("/s/legion-feature-tour?at=end")
    client.get("/sessions.json")
    assert indexer.version == seen


def test_the_built_in_server_keeps_its_threads_and_never_makes_a_request_wait_for_another(tmp_path):
    """Request threads are kept for the next connection (not one started per request), yet a
    request that holds its thread — the list's live stream — never keeps a page waiting."""
    import http.client
    import threading
    import time

    from viewer.cli import make_server

    app = create_app({"ROOTS": [str(SESSIONS)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    server = make_server("127.0.0.1", 0, app)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_port

    def get(path: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        conn.close()
        return r.status

    try:
        assert get("/") == 200
        started = threading.Thread.start
        starts = []

        def counting(self):
            if self._target == server._answer:
                starts.append(self.name)
            started(self)

        threading.Thread.start = counting
        try:
            for _ in range(30):
                assert get("/sessions.json") == 200
        finally:
            threading.Thread.start = started
        # thirty requests one after the other: a few threads (each lingers 10 ms after its
        # response, as Werkzeug waits for anything more the client sends), not thirty
        assert 1 <= len(starts) <= 10

        stream = socket.create_connection(("127.0.0.1", port), timeout=10)
        stream.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        assert b"200" in stream.recv(200)  # the stream holds a thread as long as it is open
        t = time.monotonic()
        assert get("/") == 200 and get("/sessions.json") == 200
        assert time.monotonic() - t < 5
        stream.close()
    finally:
        server.shutdown()
        server.server_close()


def test_the_built_in_server_works_on_a_few_requests_at_once_and_streams_outside_that():
    """Turns: at most N requests inside the app at a time (the others wait their turn instead of
    sharing the interpreter with two hundred threads); a body still being sent — a live stream —
    holds no turn."""
    import threading
    import time

    from viewer.web.serving import Turns

    inside, most, release = [0], [0], threading.Event()
    lock = threading.Lock()

    def app(environ, start_response):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        release.wait(10)
        with lock:
            inside[0] -= 1
        if environ.get("stream"):
            def body():  # sent after the app answered: no turn held
                yield b"a"
                release.wait(10)
                yield b"b"
            return body()
        return [b"page"]

    turns = Turns(app, at_once=2)
    release.set()  # the streams' apps answer at once; their bodies then wait
    streams = [turns({"stream": True}, None) for _ in range(2)]
    release.clear()
    assert [next(s) for s in streams] == [b"a", b"a"]  # two streams open, neither holds a turn
    done = []
    threads = [threading.Thread(target=lambda: done.append(turns({}, None))) for _ in range(5)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    assert inside[0] == 2 and most[0] == 2  # two at a time, the others waiting their turn
    release.set()
    for t in threads:
        t.join(10)
    assert len(done) == 5 and most[0] == 2
    assert [b"".join(s) for s in streams] == [b"b", b"b"]
