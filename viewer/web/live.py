"""Live tail: watching the served roots and streaming what is new to open pages (server-sent events).

The watcher (watchdog; a polling observer when inotify is unavailable or out of watches) only wakes
the feeds: it never reads files on its own thread. A session's `Feed` (feed.py) refreshes its index
and renders each new event once, through the `_message.html` partial the page uses, with out-of-band
updates of the tool-call cards the event changed; every stream of the session sends those same
bytes. Each stream owns a cursor — the byte offset reached in every file of its session — that is
the SSE id of its messages, so a reconnect with `Last-Event-ID` resumes with no gap and no
duplicate. One message carries everything that is ready past the cursor, up to a size limit: a burst
of appended lines is a few messages, not one per line.

`broadcast(key, html)` sends out-of-band fragments that belong to no event to every stream of a
session. Streams beyond MAX_STREAMS get one "too many live viewers" message instead of a stream.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import socket
import ssl
import threading
import time

from flask import Blueprint, Response, current_app, g, render_template, request, stream_with_context
from watchdog.events import (DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileClosedEvent,
                             FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent,
                             FileSystemEventHandler)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from ..formats.detect import NotTranscript
from ..index import SessionIndex
from ..marks import Marker
from ..search import Matcher, Query, QueryError
from ..store import NotFound, Skipped, Store
from .feed import POLL, encode_cursor, parse_cursor, position_after, positions, sse, sse_data
from .pump import PING, Handover, take_over
from . import early

log = logging.getLogger(__name__)
bp = Blueprint("live", __name__)

LIVE_WINDOW = 60.0  # a session written this recently is "live" in the list


class Hub:
    """A version counter that file events bump; the list stream waits for it to move, and the
    listeners (the feeds) are told."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.version = 0
        self.listeners: list = []

    def bump(self) -> None:
        with self._cond:
            self.version += 1
            self._cond.notify_all()
        for listener in self.listeners:
            listener()

    def wait(self, seen: int, timeout: float) -> int:
        with self._cond:
            if self.version == seen:
                self._cond.wait(timeout)
            return self.version


# What the watcher asks the kernel for: writes, and files and folders coming and going. Not a file
# opened or closed unwritten — every page and window read opens the session's files, so under 200
# concurrent requests inotify reported thousands of those a second, which the watcher's threads
# parsed and queued only for the handler to drop: a third of the server's interpreter lock, and an
# appended line's own event waited in that queue behind them before any stream heard of it. A
# folder's "modified" (a file in it came or went) is left out too: the file's own event says it.
WATCHED = [FileModifiedEvent, FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileMovedEvent,
           DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


class _Handler(FileSystemEventHandler):
    def __init__(self, store: Store, hub: Hub):
        self.store, self.hub = store, hub

    def on_any_event(self, event) -> None:
        kind = event.event_type  # (only what WATCHED asks for: no opens, no folder "modified")
        if event.is_directory:
            self.store.invalidate()
        else:
            self.store.note_change(os.fsdecode(event.src_path), "modified" if kind in (
                "modified", "closed") else kind)
        self.hub.bump()


class Watcher:
    def __init__(self, store: Store):
        self.store = store
        self.hub = Hub()
        self.observer = None
        self.mode = "none"

    def start(self) -> "Watcher":
        handler = _Handler(self.store, self.hub)
        targets = []
        for root in self.store.roots:
            if root.is_file():
                targets.append((root.parent, False))
            elif root.is_dir():
                targets.append((root, True))
        try:
            obs = Observer()
            obs.daemon = True
            for path, recursive in targets:
                obs.schedule(handler, str(path), recursive=recursive, event_filter=WATCHED)
            obs.start()
            self.mode = "inotify"
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EMFILE, errno.ENOSYS, errno.EPERM):
                log.warning("file watcher failed (%s); polling instead", e)
            else:
                log.warning("inotify unavailable (%s); watching by polling every second", e)
            obs = PollingObserver(timeout=1.0)
            obs.daemon = True
            for path, recursive in targets:
                obs.schedule(handler, str(path), recursive=recursive, event_filter=WATCHED)
            obs.start()
            self.mode = "polling"
        self.observer = obs
        self.store.watched = True
        log.info("watching %d root(s) for changes (%s)", len(targets), self.mode)
        return self

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer.join(timeout=5)
            self.observer = None


def start_watcher(store: Store) -> Watcher:
    return Watcher(store).start()


# --- cursors (positions in the files; see feed.py) ------------------------------------------------


def cursor_of(idx: SessionIndex, main: int | None = None) -> str:
    """The cursor a page drawn now hands its stream (`main`: the page shows only that many of the
    main thread's events)."""
    return encode_cursor(positions(idx, main))


def page_state(idx: SessionIndex) -> tuple:
    """What a session's pages are drawn from, as a key for the pages drawn once for everyone
    (pagecache.py): the index's state (`SessionIndex.state`, new with every refresh that changed
    anything — an event added, a call that settled with no event of its own, a record changed in
    place — and every rebuild) and where every file's events end. Not the note clock of the
    cursor a page hands its stream (`cursor_of`): that clock moves with the notes of every
    session — each appended line sends a live session's header and map — and had every page of
    every session drawn again with each of them. A page drawn at any state keeps its own cursor,
    notes included, so a page shared later still hands its stream the notes sent after it."""
    return idx.state, idx.build_id, *(position_after(th, len(th)) for th in idx.threads.values())


def broadcast(key: str, html: str, name: str | None = None) -> None:
    """Send out-of-band HTML (elements with `hx-swap-oob`, `<hx-partial hx-target=…>`) to every open
    stream of session `key`, from inside a request or app context. See `Feeds.broadcast`."""
    current_app.extensions["viewer"].feeds.broadcast(key, html, name)


# --- the session stream --------------------------------------------------------------------------


@bp.get("/s/<key>/events")
def session_events(key: str):
    """What is new in a session, from the page's cursor (`?after=`) or the browser's Last-Event-ID."""
    app = current_app._get_current_object()
    viewer = app.extensions["viewer"]
    heartbeat = app.config["HEARTBEAT"]
    resumed = parse_cursor(request.headers.get("Last-Event-ID"))
    # a page drawn before its index (web/early.py): wait for the index, complete the page, then
    # tail from the page's end (a page not at the end has no tail: its stream ends there)
    region = early.parse_region(request.args.get("early"))
    if region is not None and resumed and "@" in resumed:
        region = None  # completed before the browser reconnected
    tails = region is None or request.args.get("after") is not None
    target = request.args.get("target")  # (a permalink's page: its event stays the target)
    shows = early.parse_shows(request.args.get("shows"), region) if region else None
    matcher = _matcher() if region else None  # (a search link's first screen: its marks)
    try:
        if region is None:
            idx = viewer.store.index(key)
        else:
            viewer.store.get(key)
            idx = None
    except NotFound:
        return Response("no such session\n", status=404, mimetype="text/plain")
    except (NotTranscript, Skipped) as e:  # (what was appended made it so: a binary file…)
        return Response(f"not a transcript: {getattr(e, 'reason', e)}\n", status=422,
                        mimetype="text/plain")
    except OSError as e:
        from .routes import _status_of

        return Response(f"cannot read the session: {e.strerror or e}\n", status=_status_of(e),
                        mimetype="text/plain")
    cursor = resumed or parse_cursor(request.args.get("after")) or (
        {} if region else positions(idx))
    if not viewer.stream_opened():
        return _busy()
    environ = request.environ
    lifetime = app.config["STREAM_LIFETIME"]
    if region is None:
        sub = viewer.feeds.subscribe(key, idx, cursor, environ)
        return LiveResponse(viewer, sub, _follow(sub, heartbeat, _socket_of(environ)), lifetime)
    # a page drawn before its index: its stream waits on the build, on a thread of its own
    subs = []

    def complete_then_follow():
        yield b"retry: 1000\n\n"
        idx = yield from early.resolve(app, viewer.store, key, region, cursor, environ, target,
                                        shows, matcher)
        if idx is None or not tails:
            yield sse("indexed", event="indexed")
            return
        subs.append(viewer.feeds.subscribe(key, idx, cursor, environ))
        yield from _follow(subs[0], heartbeat, _socket_of(environ), retry=False)

    return LiveResponse(viewer, None, complete_then_follow(), lifetime,
                        lambda: [sub.close() for sub in subs])


@bp.get("/s/<key>/early")
def early_window(key: str):
    """The out-of-band updates that complete a window drawn before the session's index was done
    (`early=` the region it read, `shows=` the lines it shows: routes._provisional_window), asked
    for by the page once the index is done (live.js); waits for the index if it is not. 205 when
    the window cannot be completed in place (the page reloads)."""
    region = early.parse_region(request.args.get("early"))
    if region is None or region == early.WHOLE:
        return Response("no region\n", status=400, mimetype="text/plain")
    store: Store = current_app.extensions["viewer"].store
    try:
        idx = store.index(key)
    except NotFound:
        return Response("no such session\n", status=404, mimetype="text/plain")
    except (NotTranscript, Skipped) as e:
        return Response(f"not a transcript: {getattr(e, 'reason', e)}\n", status=422,
                        mimetype="text/plain")
    except OSError as e:
        from .routes import _status_of

        return Response(f"cannot read the session: {e.strerror or e}\n", status=_status_of(e),
                        mimetype="text/plain")
    matcher = _matcher()
    if matcher is not None:  # (a window of a search's page: the cards drawn again marked)
        g.marker = Marker(matcher)
    html = early.completion(store, idx, key, region, early.parse_shows(request.args.get("shows"), region),
                            page=False)
    if html is None:
        return Response(status=205)
    return Response(html, mimetype="text/html")


def _matcher() -> Matcher | None:
    """The search a first screen was opened with (`?q=`, passed on to its stream and its windows'
    completions), or None (none, or one that does not compile: the page said so)."""
    query = Query.from_args(request.args)
    try:
        return Matcher(query) if query is not None else None
    except QueryError:
        return None


def _follow(source, heartbeat: float, sock, retry: bool = True):
    """A stream on the request's thread: `source`'s messages as they come, heartbeats between."""
    if retry:
        yield source.retry
    last_beat = time.monotonic()
    while True:
        seen = source.version
        source.work()
        msg = source.next_message()
        if msg:
            yield msg
            last_beat = time.monotonic()
            continue
        if time.monotonic() - last_beat >= heartbeat:
            yield PING
            last_beat = time.monotonic()
        source.wait(seen, min(POLL, heartbeat))
        if _hung_up(sock):
            return
        yield b""  # a tick: lets the response end on time even when nothing happens


def _socket_of(environ: dict):
    """The client's socket, where the server says (Werkzeug, gunicorn)."""
    sock = environ.get("werkzeug.socket") or environ.get("gunicorn.socket")
    return sock if isinstance(sock, socket.socket) and not isinstance(sock, ssl.SSLSocket) else None


def _hung_up(sock) -> bool:
    """Whether the client closed its end. A WSGI app learns it only when a write fails — up to a
    heartbeat later, with the stream's place held all that time — so look at the socket: readable
    with nothing to read is a closed connection (an SSE client sends nothing after its request).
    poll, not select: select refuses descriptors past 1023, and a busy server has such sockets."""
    if sock is None:
        return False
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        if not poller.poll(0):
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except (OSError, ValueError):
        return True


BUSY = "too many live viewers — reload to retry"


def _busy() -> Response:
    """Beyond MAX_STREAMS: one message that says so, then the end (the page stops reconnecting)."""
    return Response(sse(BUSY, event="busy"), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


class _Body:
    """The body of an SSE response on the request's thread. It counts among the open streams from
    its creation until it is closed — the client left (the socket read as closed, or a write
    failed), the server gave up, or it ended after `lifetime` seconds (the browser reconnects from
    its Last-Event-ID: threads held by tabs left open for days come back, proxies see fresh
    requests)."""

    def __init__(self, viewer, messages, lifetime: float, on_close=None):
        self.viewer, self.messages, self.lifetime, self.on_close = viewer, messages, lifetime, on_close
        self.born = time.monotonic()
        self.closed = False

    def __iter__(self):
        return self

    def __next__(self):
        while time.monotonic() - self.born <= self.lifetime:
            msg = next(self.messages)
            if msg:
                return msg
        raise StopIteration

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.messages.close()
            if self.on_close:
                self.on_close()
        finally:
            self.viewer.stream_closed()


class LiveResponse(Response):
    """An SSE response. With a `source` (a session's subscription) and a server that hands over its
    socket, the pump takes the stream (pump.py) and the request's thread is free at once; otherwise
    the stream runs on that thread (`messages`, closed like any response body)."""

    def __init__(self, viewer, source, messages, lifetime: float, on_close=None):
        on_close = on_close or (source.close if source is not None else None)
        super().__init__(_Body(viewer, messages, lifetime, on_close), mimetype="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.viewer, self.source = viewer, source

    def __call__(self, environ, start_response):
        pump = self.viewer.pump
        conn = take_over(environ) if pump is not None and self.source is not None else None
        if conn is None:
            return super().__call__(environ, start_response)
        self.response.closed = True  # the body is never iterated: the pump has the stream
        pump.add(conn, self.source, self._head(environ) + self.source.retry,
                 self.viewer.stream_closed)
        raise Handover()

    def _head(self, environ: dict) -> bytes:
        """The status line and headers, as the server would have written them (the body runs until
        the connection closes)."""
        proto = environ.get("SERVER_PROTOCOL")
        lines = [f"{proto if proto in ('HTTP/1.0', 'HTTP/1.1') else 'HTTP/1.1'} {self.status}"]
        lines += [f"{k}: {v}" for k, v in self.headers.items()
                  if k.lower() not in ("content-length", "transfer-encoding", "connection")]
        lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# --- the session list stream ---------------------------------------------------------------------


@bp.get("/events")
def list_events():
    """For one page of the list (the page's own arguments): new sessions (on the first page in
    file-time order), rows whose files changed, and rows the background indexer filled in since the
    page's version `v`, with its progress. A filtered, sorted or grouped page keeps its rows.

    New sessions are those found after the discovery pass the page's rows are from (`scan`), not
    only after the stream opened: a session that starts while the page loads is added too. Each
    message's SSE id is the pass it brings the page up to, so a reconnect (`Last-Event-ID`) adds
    what appeared while it was away and nothing twice."""
    app = current_app._get_current_object()
    viewer = app.extensions["viewer"]
    store: Store = viewer.store
    heartbeat = app.config["HEARTBEAT"]
    hub = viewer.watcher.hub if viewer.watcher else None
    from ..catalog import PAGE, BadQuery, ListQuery
    from .archive import _summaries, indexing, list_page, search_indexing

    try:
        q = ListQuery.from_args(request.args)
    except BadQuery:
        q = ListQuery()
    since = request.args.get("v", type=int)
    resumed = request.headers.get("Last-Event-ID", "")
    scan = int(resumed) if resumed.isdigit() else request.args.get("scan", type=int)
    follows_files = q == ListQuery(page=q.page)  # the plain list: newest files first
    adds = follows_files and q.page == 1  # new sessions come in at its top
    scope = None if follows_files else {r.ref.key for r in list_page(q)[1].rows}

    def shown():
        refs, now = store.listing()
        if scope is None:
            refs = refs[(q.page - 1) * PAGE : q.page * PAGE]
        else:
            refs = [r for r in refs if r.key in scope]
        return refs, now

    def signature(refs):
        return {r.key: (r.mtime, r.size) for r in refs}

    def follow():
        nonlocal since, scan
        yield b"retry: 2000\n\n"
        refs, now = shown()
        known = signature(refs)
        if scan is None:
            scan = now
        elif adds:  # the page shows the rows of its own pass: a session found since is not there
            known = {k: v for k, v in known.items() if not store.found_after(k, scan)}
        if since is None:
            since = store.indexer.version
        seen = hub.version if hub else 0
        last_beat = time.monotonic()
        # the first tick always sends the progress notes: the page drew them before its rows (and a
        # pass may have ended since), so what it shows is not known to be what holds now
        progress = None
        while True:
            # while the indexer works, rows fill in every fraction of a second
            if progress is None or store.indexer.busy:
                wait = 0.3
            else:
                wait = 1.0 if progress[1] else min(5.0, heartbeat)
            if hub:
                seen = hub.wait(seen, wait)
            else:
                time.sleep(min(wait, 2.0))
            yield b""  # a tick (see session_events)
            version = store.indexer.version
            refs, now = shown()
            now_sig = signature(refs)
            changed = [r for r in refs if known.get(r.key) != now_sig[r.key]
                       or store.noted_since(r.key, since)]
            since = version
            was, progress = progress, (indexing(store), search_indexing(store))
            if changed or was != progress:
                summaries = _summaries(changed)[1] if changed else {}
                rows = [(r, summaries.get(r.key), adds and r.key not in known) for r in changed]
                scan = now
                yield sse(sse_data(render_template("_live_rows.html", rows=rows, now=time.time(),
                                                   live_window=LIVE_WINDOW, indexing=progress[0],
                                                   search_indexing=progress[1])), id=str(scan))
                last_beat = time.monotonic()
            known = now_sig
            if time.monotonic() - last_beat >= heartbeat:
                yield PING
                last_beat = time.monotonic()

    if not viewer.stream_opened():
        return _busy()
    # (a thread of its own: what it does — discovery, indexing small sessions for their rows — is
    # no work for the pump, which must never wait on the file system)
    return LiveResponse(viewer, None, stream_with_context(follow()), app.config["STREAM_LIFETIME"])
