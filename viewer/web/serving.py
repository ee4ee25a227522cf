"""The built-in server (`session-viewer serve`): Werkzeug's threaded WSGI server, with a listen
queue deep enough for a burst of connections and request threads kept between requests.

Werkzeug starts a thread for every connection. Under 200 concurrent page requests, starting and
ending those threads was a fifteenth of the server's time (and a thread start waits for the new
thread to run: every connection paid a switch of the interpreter lock for it). Here a thread that
has answered its connection waits a moment for the next one; a connection that finds no thread
waiting gets a new one, so however many are open at once — a live stream on a thread of its own,
a slow download — none waits for another to finish.

Connections are taken from the listen queue all at once when it is found readable, and at most
AT_ONCE requests are inside the app at a time (`Turns`): two hundred requests working at once each
got a sliver of the interpreter lock, so the page one of them drew for twenty others, and the live
streams' pump, waited seconds. A request that waits inside the app (for an index being built, or
`/sessions.json` for the indexer) keeps its turn meanwhile, as a gunicorn thread of the team setup
keeps its thread.
"""

from __future__ import annotations

import queue
import socket
import threading
from collections import deque

from werkzeug.serving import ThreadedWSGIServer

LISTEN_QUEUE = 1024  # connections the kernel holds for the server to accept (capped by somaxconn)
IDLE_FOR = 2.0  # seconds a request thread waits for another connection before it ends
ACCEPT_AT_ONCE = 64  # connections taken from the listen queue each time it is found readable
AT_ONCE = 32  # requests the app works on at once (the rest wait their turn; sending is not counted)


class Turns:
    """WSGI middleware: at most AT_ONCE requests inside the app at a time, the others let in in the
    order they came. With two hundred requests in flight, each had a two-hundredth of the
    interpreter lock: a page drawn once for twenty waiting requests took a second of wall time to
    draw, and the live streams' pump waited as long to send. The count ends when the app has
    answered — a streamed body (a live stream, a search, a download) is sent outside it, and can
    never keep pages from their turn.

    A request that finds every turn taken waits on a lock of its own, in a queue; a request that
    ends hands its turn to the first in the queue directly. (A `threading.Semaphore` was an eighth
    of the server's time under that load — a Condition in Python, its waiters woken to race for the
    count — and let a newcomer take a turn before requests that had waited a second: the slowest
    twentieth of pages waited longest for nothing.)"""

    def __init__(self, app, at_once: int = AT_ONCE):
        self.app = app
        self._free = at_once
        self._lock = threading.Lock()
        self._queue: deque = deque()  # the locks of the requests waiting, in the order they came

    def __call__(self, environ, start_response):
        with self._lock:
            if self._free:
                self._free -= 1
                turn = None
            else:
                turn = threading.Lock()
                turn.acquire()
                self._queue.append(turn)
        if turn is not None:
            turn.acquire()  # released by the request whose turn this becomes
        try:
            return self.app(environ, start_response)
        finally:
            with self._lock:
                if self._queue:
                    self._queue.popleft().release()
                else:
                    self._free += 1


class EndAtOnce:
    """WSGI middleware: a response of known length ends for the client as soon as its last byte is
    sent (the connection is half-closed then). Werkzeug closes every connection, but only after
    waiting up to 10 ms for anything more the client might send, so a client that reads until the
    connection ends — a script, a proxy, a load test — waited those 10 ms on every request, and
    the request's thread with it. A request with a body of its own is left as it was (the wait
    lets such a client see an early error answer instead of a reset connection)."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        sock = environ.get("werkzeug.socket")
        if sock is None or environ.get("CONTENT_LENGTH") not in (None, "", "0") \
                or environ.get("HTTP_TRANSFER_ENCODING"):
            return self.app(environ, start_response)
        sized = [False]

        def starting(status, headers, exc_info=None):
            sized[0] = any(k.lower() == "content-length" for k, _ in headers)
            return start_response(status, headers, exc_info)

        return _Ending(self.app(environ, starting), sock, sized)


class _Ending:
    """The body, closed as soon as its last piece is sent (and the client told it ended). Werkzeug
    closes it only after reading what the client may still send, and that read raises first for a
    client that reset the connection meanwhile (a tab closed as an icon or a download arrived): the
    file the answer was sent from stayed open until the garbage collector found it."""

    __slots__ = ("body", "sock", "sized", "closed")

    def __init__(self, body, sock, sized):
        self.body, self.sock, self.sized = body, sock, sized
        self.closed = False

    def __iter__(self):
        sent = False
        for chunk in self.body:
            sent = sent or bool(chunk)
            yield chunk  # (written before the next one is asked for)
        if sent and self.sized[0]:
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:  # gone meanwhile
                pass
        self.close()

    def close(self):
        if self.closed:
            return
        self.closed = True
        close = getattr(self.body, "close", None)
        if close is not None:
            close()


class Server(ThreadedWSGIServer):
    """A listen queue of LISTEN_QUEUE: Werkzeug listens with 128, and past that the kernel drops a
    new connection's first packet and the client tries again only a second later (the slowest
    tenth of 200 concurrent page requests took over a second for that alone)."""

    request_queue_size = LISTEN_QUEUE

    def __init__(self, host, port, app, *args, **kwargs):
        super().__init__(host, port, EndAtOnce(Turns(app)), *args, **kwargs)
        self._waiting = queue.SimpleQueue()  # connections handed to a waiting thread
        self._idle = 0  # threads waiting for a connection, less the connections handed to them
        self._idle_lock = threading.Lock()
        self.answering = 0  # connections a thread is answering now (a stream handed over is not)
        self.socket.setblocking(False)  # (the loop below takes what is queued, then selects again)

    def _handle_request_noblock(self) -> None:
        """Take every connection waiting in the listen queue (up to ACCEPT_AT_ONCE), not one: the
        thread accepting them waits for the interpreter lock each time it wakes, behind the request
        threads. One connection per wake made the queue the slowest part of a busy server: most
        requests were answered in 40 ms, and a twentieth waited in the queue for over 2 s."""
        for _ in range(ACCEPT_AT_ONCE):
            try:
                request, client_address = self.get_request()
            except OSError:  # nothing more waiting (or the connection went away meanwhile)
                return
            request.setblocking(True)
            try:
                self.process_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
                self.shutdown_request(request)

    def process_request(self, request, client_address) -> None:
        with self._idle_lock:
            waiting = self._idle > 0
            if waiting:
                self._idle -= 1
        if waiting:
            self._waiting.put((request, client_address))
        else:
            threading.Thread(target=self._answer, args=(request, client_address),
                             daemon=True).start()

    def _answer(self, request, client_address) -> None:
        while True:
            with self._idle_lock:
                self.answering += 1
            self.process_request_thread(request, client_address)
            with self._idle_lock:
                self.answering -= 1
                self._idle += 1
            while True:
                try:
                    request, client_address = self._waiting.get(timeout=IDLE_FOR)
                    break
                except queue.Empty:
                    with self._idle_lock:
                        # more threads wait than connections were handed out: this one may go;
                        # otherwise one is on its way to it
                        if self._idle > 0:
                            self._idle -= 1
                            return
