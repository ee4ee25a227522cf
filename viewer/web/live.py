"""Live tail: watching the served roots and streaming what is new to open pages (server-sent events).

The watcher (watchdog; a polling observer when inotify is unavailable or out of watches) only wakes
streams: it never reads files on its own thread. Each stream owns a cursor — the byte offset reached
in every file of its session — and on each wake asks the store to refresh the index (a stat when
nothing changed, a read of the new bytes otherwise) and sends the events past its cursor. The SSE id
of every message is that cursor, so a reconnect with `Last-Event-ID` resumes with no gap and no
duplicate. Messages carry the same `_message.html` partial the page uses, plus out-of-band updates of
the tool-call cards whose state the new events changed.
"""

from __future__ import annotations

import bisect
import errno
import logging
import os
import threading
import time

from flask import Blueprint, Response, current_app, render_template, request, stream_with_context
from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from ..index import SessionIndex
from ..store import NotFound, Store
from ..timeline import Timeline, load_events

log = logging.getLogger(__name__)
bp = Blueprint("live", __name__)

POLL = 1.0  # seconds between stat checks even without a watcher event (network filesystems)
LIVE_WINDOW = 60.0  # a session written this recently is "live" in the list


class Hub:
    """A version counter that file events bump; streams wait for it to move."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.version = 0

    def bump(self) -> None:
        with self._cond:
            self.version += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> int:
        with self._cond:
            if self.version == seen:
                self._cond.wait(timeout)
            return self.version


class _Handler(FileSystemEventHandler):
    def __init__(self, store: Store, hub: Hub):
        self.store, self.hub = store, hub

    def on_any_event(self, event) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        if event.is_directory:
            if kind != "modified":
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
                obs.schedule(handler, str(path), recursive=recursive)
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
                obs.schedule(handler, str(path), recursive=recursive)
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


# --- cursors -------------------------------------------------------------------------------------


def position_after(th, n: int) -> int:
    """The file position just past the thread's first n events (documents count records)."""
    if th.mode == "document" or n == 0:
        return n
    return th.offsets[n - 1] + th.lengths[n - 1] + 1


def positions(idx: SessionIndex, main: int | None = None) -> dict:
    """Where every file's events end now (the main thread's after its first `main` events, when
    a page showed only those), and which build of the index this is."""
    cursor = {name: position_after(th, len(th) if name != "main" or main is None else main)
              for name, th in idx.threads.items()}
    cursor["@"] = idx.generation
    return cursor


def encode_cursor(cursor: dict) -> str:
    """"main-offset;thread=offset;…;@generation": an SSE id, resumable by Last-Event-ID."""
    parts = [str(cursor.get("main", 0))]
    parts += [f"{n}={o}" for n, o in cursor.items() if n not in ("main", "@")]
    if "@" in cursor:
        parts.append(f"@{cursor['@']}")
    return ";".join(parts)


def cursor_of(idx: SessionIndex, main: int | None = None) -> str:
    return encode_cursor(positions(idx, main))


def parse_cursor(text: str | None) -> dict[str, int] | None:
    if not text:
        return None
    out: dict[str, int] = {}
    try:
        for i, part in enumerate(text.split(";")):
            if i == 0:
                out["main"] = int(part)
            elif part.startswith("@"):
                out["@"] = int(part[1:])
            else:
                name, _, off = part.partition("=")
                out[name] = int(off)
    except ValueError:
        return None
    return out


def _first_seq(th, offset: int) -> int:
    """Index of the first event at or past a byte offset (documents count records instead)."""
    if th.mode == "document":
        return min(offset, len(th))
    return bisect.bisect_left(th.offsets, offset)


def _sse(data: str, *, event: str | None = None, id: str | None = None) -> str:
    lines = []
    if event:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    lines.extend(f"data: {line}" for line in data.split("\n"))
    return "\n".join(lines) + "\n\n"


# --- the session stream --------------------------------------------------------------------------


def _updates(idx: SessionIndex, cursor: dict[str, int], key: str):
    """SSE messages for everything past `cursor` (advanced in place)."""
    tl = Timeline(idx)
    for name, th in list(idx.threads.items()):
        if name not in cursor:
            # a sub-agent file that appeared after the page was drawn: give its Task card the
            # thread (it loads its events when opened) instead of streaming them one by one
            cursor[name] = position_after(th, len(th))
            cv = tl.call_view(th.meta["parent_call"]) if th.meta.get("parent_call") else None
            if cv is not None:
                yield _sse(render_template("_live_event.html", v=None, calls=[cv], key=key,
                                           new_thread=True, hidden=idx.summary.hidden,
                                           written=idx.written()),
                           id=encode_cursor(cursor))
            continue
        # other streams may be extending this index right now: take the events that exist at this
        # instant, and move the cursor only past what was sent (never to the file's read offset)
        start = _first_seq(th, cursor[name])
        stop = len(th)
        if start >= stop:
            continue
        for i, ev in enumerate(load_events(idx, name, start, stop)):
            seq = start + i
            v = tl.event_view(ev, seq)
            changed = _calls_touched(ev, idx)
            html = render_template("_live_event.html", v=v, key=key, thread=name,
                                   hidden=idx.summary.hidden, written=idx.written(), calls=[
                                       c for c in (tl.call_view(cid) for cid in changed) if c
                                       and c.call.call != (name, seq)])
            cursor[name] = position_after(th, seq + 1)
            yield _sse(html, id=encode_cursor(cursor))


def _calls_touched(ev, idx: SessionIndex) -> set[str]:
    ids = {b.tool_use_id for b in ev.blocks if b.kind == "tool_result"}
    ids.update(ev.running)
    ids.update(ev.spawns)
    ids.update(k for k in ev.states if k != "*")
    if ev.permission is not None or "*" in ev.states:
        # the map found the calls these name no id for: the ones now in a named state
        ids.update(cid for cid, c in idx.calls.calls.items() if c.named)
    return ids


@bp.get("/s/<key>/events")
def session_events(key: str):
    app = current_app._get_current_object()
    viewer = app.extensions["viewer"]
    store: Store = viewer.store
    heartbeat = app.config["HEARTBEAT"]
    lifetime = app.config["STREAM_LIFETIME"]
    try:
        idx = store.index(key)
    except NotFound:
        return Response("no such session\n", status=404, mimetype="text/plain")
    cursor = parse_cursor(request.headers.get("Last-Event-ID")) or parse_cursor(
        request.args.get("after")) or positions(idx)
    hub = viewer.watcher.hub if viewer.watcher else None

    def follow():
        yield "retry: 1000\n\n"
        seen = hub.version if hub else 0
        last_beat = time.monotonic()
        gone = False
        while True:
            try:
                idx, change = store.refresh(key)
            except NotFound:
                idx = change = None
            if idx is None or (change is not None and change.removed):
                if not gone:
                    yield _sse("removed", event="removed")
                    gone = True
            elif gone or idx.generation != cursor.get("@", idx.generation):
                # the file was truncated, replaced or rewritten (or came back): the page reloads
                gone = False
                cursor.clear()
                cursor.update(positions(idx))
                yield _sse("reset", event="reset", id=encode_cursor(cursor))
            else:
                cursor["@"] = idx.generation
                for msg in _updates(idx, cursor, key):
                    yield msg
                    last_beat = time.monotonic()
            if time.monotonic() - last_beat >= heartbeat:
                yield ": ping\n\n"
                last_beat = time.monotonic()
            if hub:
                seen = hub.wait(seen, min(POLL, heartbeat))
            else:
                time.sleep(min(POLL, heartbeat))
            yield ""  # a tick: lets the response end on time even when nothing happens

    return _stream_response(viewer, follow(), lifetime)


def _stream_response(viewer, messages, lifetime: float) -> Response:
    """An SSE response that counts itself among the open streams and ends after `lifetime`
    seconds (the browser reconnects from its Last-Event-ID): threads held by tabs left open for
    days come back, and proxies see fresh requests."""

    def stream():
        viewer.stream_opened()
        born = time.monotonic()
        try:
            for msg in messages:
                if msg:
                    yield msg
                if time.monotonic() - born > lifetime:
                    return
        finally:  # the client left (a write failed: heartbeats make sure one does), or we ended
            messages.close()
            viewer.stream_closed()

    return Response(stream_with_context(stream()), mimetype="text/event-stream", headers={
        "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


# --- the session list stream ---------------------------------------------------------------------


@bp.get("/events")
def list_events():
    """For one page of the list (the page's own arguments): new sessions (on the first page in
    file-time order), rows whose files changed, and rows the background indexer filled in since the
    page's version `v`, with its progress. A filtered, sorted or grouped page keeps its rows."""
    app = current_app._get_current_object()
    viewer = app.extensions["viewer"]
    store: Store = viewer.store
    heartbeat = app.config["HEARTBEAT"]
    hub = viewer.watcher.hub if viewer.watcher else None
    from ..catalog import PAGE, BadQuery, ListQuery
    from .archive import _summaries, indexing, list_page

    try:
        q = ListQuery.from_args(request.args)
    except BadQuery:
        q = ListQuery()
    since = request.args.get("v", type=int)
    follows_files = q == ListQuery(page=q.page)  # the plain list: newest files first
    scope = None if follows_files else {r.ref.key for r in list_page(q)[1].rows}

    def shown():
        refs = store.sessions()
        if scope is None:
            return refs[(q.page - 1) * PAGE : q.page * PAGE]
        return [r for r in refs if r.key in scope]

    def signature(refs):
        return {r.key: (r.mtime, r.size) for r in refs}

    def follow():
        nonlocal since
        yield "retry: 2000\n\n"
        known = signature(shown())
        if since is None:
            since = store.indexer.version
        seen = hub.version if hub else 0
        last_beat = time.monotonic()
        progress = indexing(store)
        while True:
            # while the indexer works, rows fill in every fraction of a second
            wait = 0.3 if store.indexer.busy else min(5.0, heartbeat)
            if hub:
                seen = hub.wait(seen, wait)
            else:
                time.sleep(min(wait, 2.0))
            yield ""  # a tick (see session_events)
            version = store.indexer.version
            refs = shown()
            now_sig = signature(refs)
            changed = [r for r in refs if known.get(r.key) != now_sig[r.key]
                       or store.noted_since(r.key, since)]
            since = version
            was, progress = progress, indexing(store)
            if changed or was != progress:
                summaries = _summaries(changed)[1] if changed else {}
                rows = [(r, summaries.get(r.key), follows_files and q.page == 1 and r.key not in known)
                        for r in changed]
                yield _sse(render_template("_live_rows.html", rows=rows, now=time.time(),
                                           live_window=LIVE_WINDOW, indexing=progress))
                last_beat = time.monotonic()
            known = now_sig
            if time.monotonic() - last_beat >= heartbeat:
                yield ": ping\n\n"
                last_beat = time.monotonic()

    return _stream_response(viewer, follow(), app.config["STREAM_LIFETIME"])
