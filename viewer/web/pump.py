"""Streams that hold no thread: every open live stream written by one thread.

A WSGI server runs a request on one of its threads until the response ends, so a live stream — a
response that never ends — holds a thread as long as its tab is open: 100 viewers, 100 threads, and
under gunicorn's gthread (a fixed pool) no thread left to answer pages. Where the server lets the app
reach the client's socket (Werkzeug's `werkzeug.socket`, gunicorn's `gunicorn.socket`), a stream is
taken over instead: its response head is written, the connection moves to the `Pump` — one thread
with a selector over every stream — and the request's thread goes back to the server at once. The
server's socket object is left holding a stand-in (the connection's descriptor is swapped for one end
of a socket pair whose other end is closed), so whatever the server does with it next — shut it down,
drain it, close it — touches nothing of the stream; the request ends as a client that went away
(`Handover`, a broken pipe both servers take quietly).

The pump does the streams' work: for each feed with streams it refreshes the index and renders the
next chunk of new events (feed.py), asks each stream for its next message, writes what each socket
takes without blocking and keeps the rest for when it is writable (a stream too far behind is asked
for nothing more until it catches up), sends heartbeats, ends streams after their lifetime (browsers
reconnect), and notices at once when a client goes (its socket reads as closed). Feeds and the
watcher wake it; with no stream left it stops, and starts again with the next one.

Where the server gives no socket (another WSGI server, the test client, TLS, gevent's sockets) a
stream keeps its thread: live.py's fallback, capped by MAX_STREAMS like the others.

The pump comes before page drawing. It needs little of the interpreter (a few milliseconds per
appended line for 100 streams) but needs it at once, while pages drawn on thirty-odd threads want it
all the time; and a thread that lets go of the interpreter lock — for a system call — gets it back
only after the one holding it has run out its switch interval (5 ms) and the others woken before it
have too. Under 200 concurrent page requests a round of the pump waited for the lock on each of its
hundred socket writes and each file read: 150–250 ms from an appended line to the streams (a
profile with py-spy --gil; the pump itself held the lock 2 % of the time). So, while streams are
open: the pump writes to its (non-blocking) sockets without letting go of the lock (`_send`: a write
that cannot block takes microseconds, a hand-over milliseconds), and the interpreter switches
threads every SWITCH seconds instead of every 5 ms, so the pump, the watcher that wakes it and any
request waits behind page drawing a millisecond at a time. When the pump's thread ends (no stream
for IDLE_EXIT seconds) the interpreter's own interval is back.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import selectors
import socket
import sys
import threading
import time
from collections import deque

log = logging.getLogger(__name__)

IDLE_EXIT = 5.0  # seconds with no stream before the pump's thread ends (it restarts on demand)
FILL = 256 << 10  # bytes queued for a stream before it is asked for more
PING = b": ping\n\n"
SWITCH = 0.001  # the interpreter's thread switch interval while the pump runs (see the docstring)


def _lock_holding_send():
    """`send(sock, data)` as a system call made without letting go of the interpreter lock (a
    function of `ctypes.PyDLL` keeps it), for non-blocking sockets only; or None where the C
    library cannot be reached that way (then sock.send is used)."""
    try:
        libc = ctypes.PyDLL(None, use_errno=True)
        call = libc.send
    except (OSError, AttributeError, TypeError):
        return None
    call.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int)
    call.restype = ctypes.c_ssize_t
    flags = getattr(socket, "MSG_DONTWAIT", 0) | getattr(socket, "MSG_NOSIGNAL", 0)

    def send(sock: socket.socket, data) -> int:
        if type(data) is not bytes:
            data = bytes(data)
        n = call(sock.fileno(), data, len(data), flags)
        if n >= 0:
            return n
        e = ctypes.get_errno()
        if e in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR):
            raise BlockingIOError(e, os.strerror(e))
        raise OSError(e, os.strerror(e))

    return send


_send = _lock_holding_send() or (lambda sock, data: sock.send(data))

_pumps = 0  # pump threads running (one per app; a new one may start while the last one ends)
_interval = 0.005  # the interpreter's switch interval before the first of them
_pumps_lock = threading.Lock()


def _pump_running(running: bool) -> None:
    """The interval is SWITCH while any pump thread runs, the interpreter's own once none does."""
    global _pumps, _interval
    with _pumps_lock:
        if running:
            if _pumps == 0:
                _interval = sys.getswitchinterval()
                sys.setswitchinterval(min(_interval, SWITCH))
            _pumps += 1
        else:
            _pumps -= 1
            if _pumps == 0:
                sys.setswitchinterval(_interval)


class Handover(BrokenPipeError):
    """Raised out of the WSGI app once the pump has the connection: for the server, a client gone."""

    def __init__(self):
        super().__init__(errno.EPIPE, "the live stream was handed to the pump")


def take_over(environ: dict) -> socket.socket | None:
    """The client's connection, taken from the WSGI server (see the module docstring), or None when
    the server does not offer a plain socket."""
    sock = environ.get("werkzeug.socket") or environ.get("gunicorn.socket")
    if type(sock) is not socket.socket:  # TLS, gevent's cooperative sockets, no socket at all
        return None
    try:
        conn = sock.dup()
        stand_in, peer = socket.socketpair()
        os.dup2(stand_in.fileno(), sock.fileno())
        stand_in.close()
        peer.close()
    except OSError as e:
        log.warning("cannot take a stream over from the server: %s", e)
        return None
    return conn


class _Stream:
    __slots__ = ("sock", "source", "out", "queued", "born", "last", "closing", "closed",
                 "on_close", "events")

    def __init__(self, sock: socket.socket, source, head: bytes, on_close):
        self.sock, self.source, self.on_close = sock, source, on_close
        self.out: deque = deque([head])
        self.queued = len(head)
        self.born = self.last = time.monotonic()
        self.closing = self.closed = False
        self.events = 0  # selector mask registered


class Pump:
    def __init__(self, heartbeat: float, lifetime: float):
        self.heartbeat, self.lifetime = heartbeat, lifetime
        self._lock = threading.Lock()
        self._new: list[_Stream] = []
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._stop = False

    @property
    def streams(self) -> int:
        return len(getattr(self, "_streams", ()))

    def add(self, sock: socket.socket, source, head: bytes, on_close) -> None:
        """Serve a stream: `head` first (the response head, retry), then `source`'s messages."""
        sock.setblocking(False)
        with self._lock:
            self._new.append(_Stream(sock, source, head, on_close))
            if self._thread is None:
                self._stop = False
                self._thread = threading.Thread(target=self._run, name="live-pump", daemon=True)
                self._thread.start()
        self.wake()

    def wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except OSError:  # full (a wake-up is pending anyway) or closed
            pass

    def stop(self) -> None:
        """End every stream (the server is stopping); the browsers reconnect to the next one."""
        with self._lock:
            self._stop = True
            thread = self._thread
        self.wake()
        if thread is not None:
            thread.join(5)

    # --- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        sel = self._sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ)
        _pump_running(True)
        self._streams: set[_Stream] = set()
        idle_since = time.monotonic()
        timeout = 0.0
        try:
            while True:
                for key, mask in sel.select(timeout):
                    if key.fileobj is self._wake_r:
                        self._drain_wake()
                        continue
                    s = key.data
                    if mask & selectors.EVENT_READ:
                        self._readable(s)
                    if mask & selectors.EVENT_WRITE and not s.closed:
                        self._flush(s)
                with self._lock:
                    new, self._new = self._new, []
                    stopping = self._stop
                for s in new:
                    self._streams.add(s)
                if stopping:
                    for s in list(self._streams):
                        self._close(s)
                    break
                more = self._work()
                for s in list(self._streams):
                    self._register(sel, s)
                now = time.monotonic()
                if self._streams:
                    idle_since = now
                elif now - idle_since > IDLE_EXIT:
                    with self._lock:
                        if not self._new:
                            self._thread = None
                            break
                timeout = 0.0 if more else self._timeout(now)
        except Exception:  # a bug must not leave streams hanging with no one to write them
            log.exception("the live pump stopped")
            with self._lock:
                self._thread = None
            for s in list(self._streams):
                self._close(s)
        finally:
            _pump_running(False)
            sel.close()

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _work(self) -> bool:
        """One round: each feed's next piece of work, then each stream's messages. Returns whether
        work remains (a burst still rendering)."""
        now = time.monotonic()
        more = False
        done = set()
        for s in list(self._streams):
            src = s.source
            feed = getattr(src, "feed", None)
            if feed is not None and feed not in done:
                done.add(feed)
                try:
                    more = feed.update() or more
                except Exception:
                    log.exception("live feed %s failed", getattr(feed, "key", "?"))
        for s in list(self._streams):
            if s.closed:
                continue
            if now - s.born > self.lifetime:
                s.closing = True
            while not s.closing and s.queued < FILL:
                try:
                    msg = s.source.next_message()
                except Exception:
                    log.exception("live stream failed")
                    s.closing = True
                    break
                if not msg:
                    break
                s.out.append(msg)
                s.queued += len(msg)
                s.last = now
            if not s.out and not s.closing and now - s.last >= self.heartbeat:
                s.out.append(PING)
                s.queued += len(PING)
                s.last = now
            self._flush(s)
            if s.closing and not s.out:
                self._close(s)
        return more

    def _timeout(self, now: float) -> float:
        """Seconds until something is due: a heartbeat, a lifetime's end, or the feeds' poll."""
        from .feed import POLL

        due = POLL if self._streams else IDLE_EXIT
        for s in self._streams:
            due = min(due, s.last + self.heartbeat - now, s.born + self.lifetime - now)
        return max(0.0, due)

    def _flush(self, s: _Stream) -> None:
        while s.out:
            buf = s.out[0]
            try:
                n = _send(s.sock, buf)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._close(s)
                return
            s.queued -= n
            if n < len(buf):
                s.out[0] = memoryview(buf)[n:]
                return
            s.out.popleft()

    def _readable(self, s: _Stream) -> None:
        """An SSE client sends nothing after its request: readable means it closed (or sent junk)."""
        try:
            data = s.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(s)

    def _register(self, sel: selectors.BaseSelector, s: _Stream) -> None:
        if s.closed:
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if s.out else 0)
        if events == s.events:
            return
        try:
            if s.events:
                sel.modify(s.sock, events, s)
            else:
                sel.register(s.sock, events, s)
            s.events = events
        except (OSError, ValueError, KeyError):
            self._close(s)

    def _close(self, s: _Stream) -> None:
        if s.closed:
            return
        s.closed = True
        self._streams.discard(s)
        if s.events:
            try:
                self._sel.unregister(s.sock)
            except (KeyError, ValueError, OSError):
                pass
        try:
            s.sock.close()
        except OSError:
            pass
        try:
            s.source.close()
        finally:
            s.on_close()
