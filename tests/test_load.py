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
                deadline = time.monotonic() + 5  # (its thread finishes with the connection)
                while server.answering and time.monotonic() < deadline:
                    time.sleep(0.001)
        finally:
            threading.Thread.start = started
        # thirty requests one after the other: one thread answers them all (the list's, kept
        # from before — or a new one, if that had ended meanwhile), not thirty
        assert len(starts) <= 1

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


def test_requests_waiting_for_a_turn_are_let_in_in_the_order_they_came():
    """A request that ends hands its turn to the one that has waited longest: neither a newcomer
    nor the same thread's next request (a kept-alive connection) gets in before requests already
    waiting — under load, that left the slowest pages waiting a second for nothing."""
    import threading
    import time

    from viewer.web.serving import Turns

    order, hold = [], threading.Event()

    def app(environ, start_response):
        order.append(environ["name"])
        if environ["name"] == "a":
            hold.wait(10)
        return [b""]

    turns = Turns(app, at_once=1)

    def first_then_next():
        turns({"name": "a"}, None)
        turns({"name": "a again"}, None)  # at once, on the same thread

    def wait_for(cond):
        deadline = time.monotonic() + 10
        while not cond() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert cond()

    threads = [threading.Thread(target=first_then_next)]
    threads[0].start()
    wait_for(lambda: order == ["a"])
    for n, name in enumerate(["b", "c", "d"], 1):
        threads.append(threading.Thread(target=turns, args=({"name": name}, None)))
        threads[-1].start()
        wait_for(lambda: len(turns._queue) == n)  # waiting, in this order
    hold.set()
    for t in threads:
        t.join(10)
    assert order == ["a", "b", "c", "d", "a again"]


def test_a_page_ends_for_its_client_as_soon_as_it_is_sent():
    """A client reading a response until the connection ends (a script, a proxy) gets that end
    when the last byte is sent, not once the server is done with the connection: here the server
    is held after the body until the client has seen the end — with Werkzeug's own close (after a
    10 ms wait for more from the client, on every request), the client would never see it."""
    import threading

    from viewer.web.security import RequestHandler
    from viewer.web.serving import Server

    seen_end = threading.Event()

    class Body:
        def __iter__(self):
            yield b"a page"

        def close(self):  # called after the body is sent, before the connection is closed
            seen_end.wait(10)

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "6")])
        return Body()

    server = Server("127.0.0.1", 0, app, RequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for _ in range(3):  # and again, on the threads kept for the next connection
            with socket.create_connection(("127.0.0.1", server.server_port), timeout=5) as s:
                s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                got = b""
                while chunk := s.recv(1 << 16):
                    got += chunk
                seen_end.set()
            assert got.startswith(b"HTTP/1.1 200") and got.endswith(b"\r\n\r\na page")
            seen_end.clear()
    finally:
        seen_end.set()
        server.shutdown()
        server.server_close()


def test_the_built_in_server_sends_what_the_app_answers(tmp_path, tour):
    """Through the built-in server's buffered writes and early ends, a response arrives as the app
    made it: a small page, a page larger than the write buffer, a search's streamed page, and a
    request with a body of its own."""
    import http.client
    import threading

    from viewer.cli import make_server
    from viewer.web.security import WRITE_BUFFER

    root, path = tour
    big = "x" * (WRITE_BUFFER + 12345)
    with open(path, "a") as f:
        f.write(json.dumps({"type": "assistant", "content": big, "message_id": "big",
                            "session_id": "s", "timestamp": 1700000000.0}) + "\n")
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    client = app.test_client()
    server = make_server("127.0.0.1", 0, app)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def get(url, method="GET", body=None):
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
        conn.request(method, url, body=body)
        resp = conn.getresponse()
        got = resp.status, resp.read()
        conn.close()
        return got

    try:
        key = "legion-feature-tour"
        for url in (f"/s/{key}.json", f"/s/{key}/raw/big?download=1"):
            status, body = get(url)
            assert status == 200 and body == client.get(url).data
        status, body = get("/")  # (the list's rows say how long ago: not compared byte for byte)
        assert status == 200 and body.rstrip().endswith(b"</html>") and b"legion-feature-tour" in body
        assert big.encode() in get(f"/s/{key}/raw/big?download=1")[1]
        status, body = get(f"/s/{key}?q=live+append&at=start")  # streamed as the hits come
        assert status == 200 and body.rstrip().endswith(b"</html>")
        status, body = get(f"/s/{key}", method="POST", body=b"x" * 1000)
        assert status == 405
    finally:
        server.shutdown()
        server.server_close()


def test_a_claude_code_session_lists_its_sub_agent_folders_only_when_they_change(tmp_path, monkeypatch):
    """Requests for a Claude Code session whose files and folders are as they were do not list its
    folders for new sub-agents (a projects folder holds every session's files); a sub-agent file
    added later is still in the next answer — also one added right after a listing."""
    import os
    import shutil
    import time

    from viewer.formats import claude_code

    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / "claude-project", root / "claude-project")
    main = next((root / "claude-project").glob("*.jsonl"))
    sid = main.stem
    sub = main.with_suffix("") / "subagents"
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "INDEX_ALL": False})
    client = app.test_client()
    url = f"/s/claude-project~{sid}.json"

    def threads():
        r = client.get(url)
        assert r.status_code == 200
        return set(r.get_json()["threads"])

    def settle():  # the folders as they are after a while
        old = time.time_ns() - 10_000_000_000
        for folder in claude_code.companion_folders(main):
            if folder.exists():
                os.utime(folder, ns=(old, old))

    def add_agent(name):
        (sub / f"agent-{name}.jsonl").write_text(json.dumps({
            "type": "user", "uuid": f"{name}-1", "isSidechain": True, "agentId": name,
            "sessionId": sid, "message": {"role": "user", "content": "Look."}}) + "\n")

    listings = []
    listed = claude_code.companions
    monkeypatch.setattr(claude_code, "companions", lambda main: listings.append(1) or listed(main))
    settle()
    before = threads()
    for _ in range(3):
        assert threads() == before
    assert len(listings) <= 1  # (the first answer's refresh lists them once)
    listings.clear()
    for _ in range(3):
        assert threads() == before
    assert listings == []
    add_agent("late")
    assert threads() == before | {"late"}
    add_agent("later")  # at once, in the same folder: its time may read as the listing saw it
    assert threads() == before | {"late", "later"}
    settle()
    listings.clear()
    assert threads() == before | {"late", "later"} and listings == [1]  # (a change: listed once)
    assert threads() == before | {"late", "later"} and listings == [1]


def test_a_client_gone_before_its_answer_is_sent_is_not_reported_as_a_server_error(tmp_path, capsys):
    """A client that goes away while its page is still being written (a tab closed, a reload) ends
    that request quietly: no traceback on the server's terminal, and the next request is answered."""
    import http.client
    import threading
    import time

    from viewer.web.security import RequestHandler, WRITE_BUFFER
    from viewer.web.serving import Server

    gone = threading.Event()

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain"),
                                  ("Content-Length", str(4 * WRITE_BUFFER))])
        if environ["PATH_INFO"] == "/big":
            gone.wait(10)  # the client has closed its end by now
            for _ in range(4):
                yield b"x" * WRITE_BUFFER
        else:
            yield b"x" * (4 * WRITE_BUFFER)

    server = Server("127.0.0.1", 0, app, RequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        s = socket.create_connection(("127.0.0.1", server.server_port), timeout=5)
        s.sendall(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # a reset
        s.close()
        gone.set()
        deadline = time.monotonic() + 5
        while server.answering and time.monotonic() < deadline:
            time.sleep(0.01)
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=5)
        conn.request("GET", "/")
        assert len(conn.getresponse().read()) == 4 * WRITE_BUFFER
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in capsys.readouterr().err


def test_a_client_that_resets_after_its_answer_leaves_no_file_open(tmp_path):
    """A client that resets its connection just after its answer (a tab closed while an icon or a
    download arrives): the body the answer was sent from is closed all the same. Werkzeug closes
    it after reading what the client may still send, and that read raised for a reset connection
    first: the file stayed open until the garbage collector found it (a ResourceWarning, seen as
    an error in a browser test)."""
    import struct
    import threading
    import time

    from viewer.web.security import RequestHandler
    from viewer.web.serving import Server

    closed = []

    class Body:
        def __iter__(self):
            yield b"icon"

        def close(self):
            closed.append(1)

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "image/svg+xml"), ("Content-Length", "4")])
        return Body()

    server = Server("127.0.0.1", 0, app, RequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for i in range(20):
            s = socket.create_connection(("127.0.0.1", server.server_port), timeout=5)
            s.sendall(b"GET /favicon.svg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert s.recv(4096).startswith(b"HTTP/1.1 200")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset
            s.close()
            deadline = time.monotonic() + 5
            while len(closed) <= i and time.monotonic() < deadline:
                time.sleep(0.005)
            assert len(closed) == i + 1
    finally:
        server.shutdown()
        server.server_close()
