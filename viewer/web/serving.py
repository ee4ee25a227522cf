"""The built-in server (`session-viewer serve`): Werkzeug's threaded WSGI server, with a listen
queue deep enough for a burst of connections and request threads kept between requests.

Werkzeug starts a thread for every connection. Under 200 concurrent page requests, starting and
ending those threads was a fifteenth of the server's time (and a thread start waits for the new
thread to run: every connection paid a switch of the interpreter lock for it). Here a thread that
has answered its connection waits a moment for the next one; a connection that finds no thread
waiting gets a new one, so however many are open at once — a live stream on a thread of its own,
a slow download — none waits for another to finish.
"""

from __future__ import annotations

import queue
import threading

from werkzeug.serving import ThreadedWSGIServer

LISTEN_QUEUE = 1024  # connections the kernel holds for the server to accept (capped by somaxconn)
IDLE_FOR = 2.0  # seconds a request thread waits for another connection before it ends


class Server(ThreadedWSGIServer):
    """A listen queue of LISTEN_QUEUE: Werkzeug listens with 128, and past that the kernel drops a
    new connection's first packet and the client tries again only a second later (the slowest
    tenth of 200 concurrent page requests took over a second for that alone)."""

    request_queue_size = LISTEN_QUEUE

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._waiting = queue.SimpleQueue()  # connections handed to a waiting thread
        self._idle = 0  # threads waiting for a connection, less the connections handed to them
        self._idle_lock = threading.Lock()

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
            self.process_request_thread(request, client_address)
            with self._idle_lock:
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
