"""Render once, send many: what the open live streams of one session are sent.

A `Feed` holds a session's new events rendered once — through `_message.html`, the partial the page
uses — with the out-of-band updates each one brings (the tool-call cards it changed, the hidden
count), and every stream of that session reads from it: 100 open tabs cost one render per appended
event, not 100. What differs between streams — where each one is, its cursor, which is also its SSE
id — stays outside the rendered bytes.

Work is done by whichever stream gets to it first (`update`, never blocking the others): a refresh of
the index when the watcher reported a change (or every POLL seconds without one), then the new
events rendered CHUNK at a time, each chunk published as soon as it is ready, so the first lines of a
10,000-line burst are on their way while the rest renders. A stream asks its `Subscription` for its
next message: everything past its cursor, up to MESSAGE_BYTES, in one SSE message, with the
out-of-band updates of that batch deduplicated (a card changed ten times in a burst is sent once, in
its last state). A stream that is behind what the feed keeps (a reconnect after a long pause) has
the missing events rendered for it alone.

Notes (`Feeds.broadcast`) are fragments that belong to no event — "the index is complete, here are
the real counts" — sent to every stream of the session with its next message. A named note replaces
the previous one of that name; a stream whose page is older than a note (the page's cursor carries
the note clock, `!n`) gets it too, even if it connects after the note was sent.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from bisect import bisect_left
from dataclasses import dataclass

from flask import Flask

from .. import outline
from ..index import SessionIndex
from ..model import ANSWERED, RUNNING_ON
from ..store import NotFound, Store
from ..timeline import STREAM_BACK, Timeline, dropped_cards, load_events
from ..templating import css_id, dom_id
from .templating import render_event

log = logging.getLogger(__name__)

POLL = 1.0  # seconds between index refreshes when no watcher event arrives (network filesystems)
MAP_EVERY = 1.0  # seconds at least between two sendings of a session's map (`Feed._minimap`)
CHUNK = 100  # events rendered per step of a burst
MESSAGE_BYTES = 256 << 10  # one SSE message carries events up to about this size
KEEP_EVENTS = 5000  # rendered events kept per thread for streams that are behind
KEEP_NOTES = 64  # unnamed notes kept per session
# a rewind's prompt marks at most this many cards of what it dropped, the latest (a live page holds
# few more; the windows it loads later are drawn with the mark)
DROPPED_MARKS = 512

_note_numbers = itertools.count(time.time_ns())  # grows across restarts too: pages keep their place
_last_note = 0


def note_clock() -> int:
    """The number of the latest note sent (a page rendered now has seen every note up to it)."""
    return _last_note


def _next_note() -> int:
    global _last_note
    _last_note = next(_note_numbers)
    return _last_note


# --- cursors -------------------------------------------------------------------------------------


def position_after(th, n: int) -> int:
    """The file position just past the thread's first n events (documents count records)."""
    if th.mode == "document" or n == 0:
        return n
    return th.offsets[n - 1] + th.lengths[n - 1] + 1


def first_seq(th, position: int) -> int:
    """Index of the first event at or past a file position (documents count records instead)."""
    if th.mode == "document":
        return min(position, len(th))
    return bisect_left(th.offsets, position)


def positions(idx: SessionIndex, main: int | None = None) -> dict:
    """Where every file's events end now (the main thread's after its first `main` events, when a
    page showed only those), which build of the index they belong to, and the latest note."""
    cursor = {name: position_after(th, len(th) if name != "main" or main is None else main)
              for name, th in idx.threads.items()}
    cursor["@"] = idx.build_id
    cursor["!"] = note_clock()
    return cursor


def encode_cursor(cursor: dict) -> str:
    """"main-offset;thread=offset;…;@build;!note": an SSE id, resumable by Last-Event-ID."""
    parts = [str(cursor.get("main", 0))]
    parts += [f"{n}={o}" for n, o in cursor.items() if n not in ("main", "@", "!")]
    if "@" in cursor:
        parts.append(f"@{cursor['@']}")
    if "!" in cursor:
        parts.append(f"!{cursor['!']}")
    return ";".join(parts)


def parse_cursor(text: str | None) -> dict[str, int] | None:
    if not text:
        return None
    out: dict[str, int] = {}
    try:
        for i, part in enumerate(text.split(";")):
            if i == 0:
                out["main"] = int(part)
            elif part[:1] in ("@", "!"):
                out[part[0]] = int(part[1:])
            else:
                name, _, off = part.partition("=")
                out[name] = int(off)
    except ValueError:
        return None
    return out


# --- SSE encoding --------------------------------------------------------------------------------


def sse_data(html: str) -> bytes:
    """The data lines of an SSE message holding an HTML fragment. A carriage return would end a
    line for the SSE parser (and let a transcript forge `id:` or `event:` lines), so it travels as
    a character reference, which HTML reads back as the same character."""
    html = str(html).strip()  # a plain string: Markup.replace would escape the reference
    return ("data: " + html.replace("\r", "&#13;").replace("\n", "\ndata: ")).encode()


def sse(data: str | bytes = b"", *, event: str | None = None, id: str | None = None) -> bytes:
    head = (f"event: {event}\n" if event else "") + (f"id: {id}\n" if id is not None else "")
    body = data if isinstance(data, bytes) else ("data: " + data.replace("\n", "\ndata: ")).encode()
    return head.encode() + body + b"\n\n"


# --- the feed ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Piece:
    """One rendered event (or a new sub-agent thread's card) as SSE data lines."""

    seq: int
    end: int  # the thread's cursor just past it
    body: bytes  # the event itself (b"" for a card, which travels out of band)
    oob: tuple  # ((element id, data lines), …): out-of-band updates it brings


class _Rendered:
    __slots__ = ("start", "pieces")

    def __init__(self, start: int):
        self.start, self.pieces = start, []

    @property
    def stop(self) -> int:
        return self.start + len(self.pieces)


class Feed:
    def __init__(self, feeds: "Feeds", key: str, idx: SessionIndex, cursor: dict, environ: dict):
        self.feeds, self.key = feeds, key
        self._environ = environ
        self._work = threading.Lock()  # held while refreshing or rendering
        self._cond = threading.Condition()
        self.version = 0  # moves when something was published or the files changed
        self._dirty = True
        self._refreshed = 0.0
        self.idx = idx
        self.build = idx.build_id
        self.removed = False
        # thread → events rendered (or skipped) so far. The feed starts where its first stream is:
        # a page drawn just before a burst has the burst rendered once for everyone
        if cursor.get("@", idx.build_id) == idx.build_id:
            self._done = {name: first_seq(th, cursor[name]) for name, th in idx.threads.items()
                          if name in cursor}
        else:
            self._done = {name: len(th) for name, th in idx.threads.items()}
        self._rendered: dict[str, _Rendered] = {}
        self._cards: dict[str, Piece] = {}  # threads that appeared after a page was drawn
        self._last: dict[str, list] = {}  # thread → the last events rendered (a message goes on)
        self.subscribers = 0
        self._map_due = False  # events went out since the session map was last sent
        self._mapped = 0.0
        # the index changed since the header was last looked at (whoever refreshed it), and the
        # header as last sent: its counts go out as a named note when they moved (`_header`)
        self._head_due = False
        self._head: str | None = None

    # --- waking and waiting ------------------------------------------------------------------

    def poke(self) -> None:
        """Files changed: the next `update` refreshes the index."""
        self._dirty = True
        self._publish()

    def _publish(self) -> None:
        with self._cond:
            self.version += 1
            self._cond.notify_all()
        if self.feeds.on_publish is not None:
            self.feeds.on_publish()

    def wait(self, seen: int, timeout: float) -> None:
        with self._cond:
            if self.version == seen:
                self._cond.wait(timeout)

    # --- work ----------------------------------------------------------------------------------

    def update(self) -> bool:
        """Refresh the index if it is due, then render the next chunk of new events — unless
        another stream is doing that right now. Returns whether rendering work remains."""
        if not self._work.acquire(blocking=False):
            return False
        try:
            changed = False
            now = time.monotonic()
            if self._dirty or now - self._refreshed >= POLL:
                self._dirty = False
                self._refreshed = now
                changed = self._refresh()
            more = False
            mapped = None
            head = None
            if not self.removed:
                rendered, more = self._render_new()
                changed = changed or rendered
                if rendered:
                    self._map_due = True
                elif self._map_due and not more and now - self._mapped >= MAP_EVERY:
                    self._map_due, self._mapped = False, now
                    mapped = self._minimap()
                if (changed or self._head_due) and not more:
                    self._head_due = False
                    head = self._header()
        finally:
            self._work.release()
        if changed:
            self._publish()
        if mapped is not None:
            self.feeds.broadcast(self.key, mapped, name="minimap")
        if head is not None:
            self.feeds.broadcast(self.key, head, name="header")
        return more

    def _header(self) -> str | None:
        """The session header's title and facts — its messages, tool calls, errors, tokens, cost,
        duration, models — as they stand now, when they differ from what was last sent (a page
        drawn before counted fewer); None when they do not. Sent once a burst is rendered."""
        store = self.feeds.store
        try:
            ref = store.get(self.key)
        except (NotFound, OSError):
            return None
        idx = self.idx
        with self._context():
            html = self.feeds.app.jinja_env.get_template("_live_event.html").render(
                part="header", key=self.key, idx=idx, s=store.shown_summary(idx), ref=ref)
        if html == self._head:
            return None
        self._head = html
        return html

    def _minimap(self) -> str:
        """The session map as it stands now (every mark moves as the session grows; a call's mark
        is its state now), for the page's map out of band. Sent once the new events are out, on
        the next turn of the streams' loop, and at most every MAP_EVERY: marking a 100 MB session
        takes about 50 ms, which the events do not wait for."""
        with self._context():
            return self.feeds.app.jinja_env.get_template("_live_event.html").render(
                part="minimap", key=self.key, marks=outline.marks(self.idx))

    def _refresh(self) -> bool:
        try:
            idx, change = self.feeds.store.refresh(self.key)
        except NotFound:
            idx, change = None, None
        except OSError as e:
            log.warning("cannot refresh %s: %s", self.key, e)
            return False
        if idx is None or (change is not None and change.removed):
            was, self.removed = self.removed, True
            return not was
        came_back = self.removed
        self.removed = False
        self.idx = idx
        if self.build != idx.build_id:
            # rebuilt (truncated, replaced, rewritten): pages reload, nothing old is sent
            self._done = {name: len(th) for name, th in idx.threads.items()}
            self._rendered, self._cards, self._last = {}, {}, {}
            self.build = idx.build_id
            self._head = None
            return True
        return came_back or bool(change)

    def _render_new(self) -> tuple[bool, bool]:
        """Render up to CHUNK new events (in thread order). Returns (rendered any, more left)."""
        idx = self.idx
        budget = CHUNK
        rendered = False
        for name, th in list(idx.threads.items()):
            n = len(th)
            if name not in self._done:  # a sub-agent thread that appeared: its card, once
                self._card(name)
                rendered = True
                continue
            start = self._done[name]
            if start >= n:
                continue
            if budget <= 0:
                return rendered, True
            stop = min(n, start + budget)
            pieces = self._render(name, start, stop)
            box = self._rendered.get(name)
            if box is None or box.stop != start:
                box = _Rendered(start)
            elif len(box.pieces) + len(pieces) > KEEP_EVENTS:
                # a new box, not a cut in place: a stream reading the old one sees it whole
                cut = len(box.pieces) + len(pieces) - KEEP_EVENTS
                old, box = box, _Rendered(box.start + cut)
                box.pieces = old.pieces[cut:]
            box.pieces.extend(pieces)
            self._rendered[name] = box
            self._done[name] = stop
            budget -= stop - start
            rendered = True
        return rendered, False

    def _card(self, name: str) -> Piece:
        """A thread that appeared after a page was drawn: its Task card gets the thread (which loads
        its events when opened) — a thread no call links to joins the page's list of those; its
        later events stream as usual."""
        card = self._cards.get(name)
        if card is None:
            idx = self.idx
            th = idx.threads[name]
            n = len(th)
            parent = th.meta.get("parent_call")
            cv = Timeline(idx).call_view(parent) if parent else None
            with self._context():
                if cv is not None:
                    oob = (*self._call_parts(cv, thread=True),)
                    self.feeds.renders += 1
                else:  # no call links to it: the page's list of such threads, with it
                    unlinked = [t for n, t in idx.threads.items()
                                if n != "main" and not t.meta.get("parent_call")]
                    oob = (("unlinked-threads", self._part("unlinked", unlinked=unlinked)),)
                oob += (("session-live", self._part("written", written=idx.written())),)
            card = self._cards[name] = Piece(-1, position_after(th, n), b"", oob)
            self._done.setdefault(name, n)
        return card

    def _render(self, name: str, start: int, stop: int) -> list[Piece]:
        idx = self.idx
        th = idx.threads[name]
        tl = Timeline(idx)
        events = load_events(idx, name, start, stop)
        before = self._last.get(name) if self._done.get(name) == start else None
        views = tl.views(events, start, before)
        at = {(name, v.seq): v for v in views}
        pieces = []
        with self._context():
            hidden = self._part("hidden", hidden=idx.summary.hidden)
            written = self._part("written", written=idx.written())
            for v in views:
                oob = []
                for cid in sorted(_calls_touched(v.ev, idx, (name, v.seq))):
                    call = idx.calls.call(cid)
                    if call is None or call.call is None or call.call == (name, v.seq):
                        continue  # the card is in this very event
                    owner = at.get(call.call)
                    cv = owner.calls.get(cid) if owner else tl.call_view(cid)
                    if cv is not None:
                        oob.extend(self._call_parts(cv, thread=cid in v.ev.spawns))
                if v.rewound:  # the cards drawn before it of what it dropped say so now
                    for s, eid in dropped_cards(th, v.seq, DROPPED_MARKS):
                        if s < start:
                            oob.append(("dropped-" + eid, self._part(
                                "dropped", target=f"#{css_id('m-' + eid)} > .ev-body", prompt=v.ev.id)))
                oob.append(("hidden-count", hidden))
                oob.append(("session-live", written))
                # the main thread's events straight through the page's partial; a sub-agent's
                # wrapped for its thread
                body = sse_data(render_event(v, self.key)) if name == "main" else self._part(
                    "event", v=v, thread=name)
                pieces.append(Piece(v.seq, position_after(th, v.seq + 1), body, tuple(oob)))
        if views and self._done.get(name) == start:
            self._last[name] = [v.ev for v in views[-STREAM_BACK:]]
        self.feeds.renders += len(views)
        return pieces

    def _call_parts(self, cv, thread: bool) -> list:
        tid = dom_id("tc-", cv.call.id)
        parts = [(tid + "-state", self._part("state", cv=cv)),
                 (tid + "-result", self._part("result", cv=cv))]
        if thread:
            parts.append((tid + "-thread", self._part("thread", cv=cv)))
        return parts

    def _context(self):
        return self.feeds.app.request_context(self._environ)

    def _part(self, part: str, **ctx) -> bytes:
        template = self.feeds.app.jinja_env.get_template("_live_event.html")
        return sse_data(template.render(part=part, key=self.key, **ctx))

    # --- reading -------------------------------------------------------------------------------

    def take(self, cursor: dict, limit: int | None = None) -> list[tuple[str, Piece]]:
        """What is ready past `cursor`, up to about `limit` bytes, as (thread, piece) in order."""
        limit = MESSAGE_BYTES if limit is None else limit
        idx = self.idx
        if idx.build_id != self.build:
            return []
        out: list[tuple[str, Piece]] = []
        size = 0
        for name, th in list(idx.threads.items()):
            if name not in cursor:
                if name in self._cards or name in self._done:
                    with self._work:
                        card = self._card(name)
                    out.append((name, card))
                continue
            seq = first_seq(th, cursor[name])
            done = self._done.get(name, seq)
            while seq < done and size < limit:
                box = self._rendered.get(name)
                if box is not None and box.start <= seq < box.stop:
                    pieces = box.pieces[seq - box.start : done - box.start]
                else:  # behind what the feed keeps: rendered for this stream alone
                    stop = min(done, seq + CHUNK, box.start if box and box.start > seq else done)
                    with self._work:
                        pieces = self._render(name, seq, stop)
                for p in pieces:
                    out.append((name, p))
                    size += len(p.body) + sum(len(d) for _, d in p.oob)
                    seq = p.seq + 1
                    if size >= limit:
                        break
            if size >= limit:
                break
        return out


def _calls_touched(ev, idx: SessionIndex, where: tuple[str, int]) -> set[str]:
    ids = {b.tool_use_id for b in ev.blocks if b.kind == "tool_result"}
    ids.update(ev.running)
    ids.update(ev.spawns)
    ids.update(k for k in ev.states if k != "*")
    star = ev.states.get("*")
    if ev.permission is not None or star not in (None, ANSWERED):
        # the map found the calls these name no id for: the ones now in a named state
        ids.update(cid for cid, c in idx.calls.calls.items() if c.named)
    if star == ANSWERED:  # the calls it answered out of sight hold their result here
        ids.update(cid for cid, c in idx.calls.calls.items() if c.result == where)
    if where[0] != "main":  # a background agent's line may say its work is done (or goes on)
        parent = idx.threads[where[0]].meta.get("parent_call") if where[0] in idx.threads else None
        call = idx.calls.call(parent) if isinstance(parent, str) else None
        if call is not None and call.named in RUNNING_ON:
            ids.add(parent)
    canon = idx.calls.canon  # a result may name its call by an id the call's record did not keep
    return {canon(cid) for cid in ids}


class Subscription:
    """One stream's place in its session's feed: what live.py's thread loop and the pump (pump.py)
    drive — `work`, `next_message`, `wait`, `close`."""

    retry = b"retry: 1000\n\n"

    def __init__(self, feed: Feed, cursor: dict):
        self.feed = feed
        self.cursor = cursor
        self.gone = False
        self.closed = False

    @property
    def version(self) -> int:
        return self.feed.version

    def work(self) -> bool:
        return self.feed.update()

    def wait(self, seen: int, timeout: float) -> None:
        self.feed.wait(seen, timeout)

    def close(self) -> None:
        self.feed.feeds.unsubscribe(self)

    def next_message(self) -> bytes | None:
        """The next SSE message for this stream, or None when it has everything ready."""
        feed = self.feed
        idx = feed.idx
        cursor = self.cursor
        if feed.removed:
            if self.gone:
                return None
            self.gone = True
            return sse("removed", event="removed")
        if self.gone or idx.build_id != cursor.get("@", idx.build_id):
            # the file was truncated, replaced or rewritten (or came back): the page reloads
            self.gone = False
            self.cursor = positions(idx)
            return sse("reset", event="reset", id=encode_cursor(self.cursor))
        if feed.build != idx.build_id:
            return None  # the feed has not caught up with a rebuild yet
        cursor["@"] = idx.build_id
        pieces = feed.take(cursor)
        notes = feed.feeds.notes_after(feed.key, cursor.get("!", 0))
        if not pieces and not notes:
            return None
        bodies = []
        oob: dict[str, bytes] = {}
        for name, p in pieces:
            if p.body:
                bodies.append(p.body)
            for key, data in p.oob:
                oob.pop(key, None)  # the latest state of each element, after the events
                oob[key] = data
            cursor[name] = p.end
        for number, data in notes:
            bodies.append(data)
            cursor["!"] = number
        data = b"\n".join(bodies + list(oob.values())) or b"data: "
        return sse(data, id=encode_cursor(cursor))


class Feeds:
    """Every session's feed, shared by its open streams, and the notes sent to them."""

    def __init__(self, app: Flask, store: Store):
        self.app, self.store = app, store
        self._feeds: dict[str, Feed] = {}
        self._notes: dict[str, dict[str, tuple[int, bytes]]] = {}
        self._lock = threading.Lock()
        self.renders = 0  # events rendered for streams, all sessions (render-once is tested on it)
        self.on_publish = None  # called when any feed has something new (the pump's wake-up)

    def subscribe(self, key: str, idx: SessionIndex, cursor: dict, environ: dict) -> Subscription:
        """A stream of session `key` starting at `cursor` (`idx` is its current index)."""
        with self._lock:
            feed = self._feeds.get(key)
            if feed is None:
                feed = self._feeds[key] = Feed(self, key, idx, cursor, _url_environ(environ))
            feed.subscribers += 1
        if "!" not in cursor:
            cursor["!"] = note_clock()
        return Subscription(feed, cursor)

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub.closed:
                return
            sub.closed = True
            feed = sub.feed
            feed.subscribers -= 1
            if feed.subscribers <= 0 and self._feeds.get(feed.key) is feed:
                del self._feeds[feed.key]

    def poke_all(self) -> None:
        for feed in list(self._feeds.values()):
            feed.poke()

    def extended(self, key: str, idx: SessionIndex, change) -> None:
        """(An index listener: told of every refresh, whoever ran it — a page drawn, a stream, the
        indexer.) Background calls whose state changed with no event of theirs to carry it (a
        sub-agent's `.meta.json` now says it finished) go out as named notes, the latest state of
        each card replacing the one before; a page drawn since has it already. The session map
        goes out after them (its marks show the calls' states): the feed's next turn sends it."""
        if (feed := self._feeds.get(key)) is not None:
            feed._head_due = True  # (the header's counts may have moved: the feed's next turn)
            feed._publish()
        sent = self._changed_events(key, idx, change)
        for cid in sorted(change.calls):
            call = idx.calls.call(cid)
            if call is None or call.named not in RUNNING_ON or call.subthread in change.new:
                continue  # (a new event of its agent's thread carries the card)
            cv = Timeline(idx).call_view(cid)
            if cv is None:
                continue
            feed = self._feeds.get(key)  # (none open: the note waits for a stream from an older page)
            template = self.app.jinja_env.get_template("_live_event.html")
            with feed._context() if feed is not None else self.app.test_request_context("/"):
                html = "\n".join(template.render(part=part, key=key, cv=cv) for part in ("state", "result"))
            self.broadcast(key, html, name=f"call:{cid}")
            sent = True
        if sent and (feed := self._feeds.get(key)) is not None:
            feed._map_due = True
            feed._publish()

    def _changed_events(self, key: str, idx: SessionIndex, change) -> bool:
        """Events drawn already whose record changed in place (a row-session's: its row's name and
        counts, a reply whose usage came after it, a message streamed further) go out as named
        notes, each card drawn again replacing the one the page holds — in the main timeline or in
        a sub-agent's thread nested under its call (a page that has not opened that thread holds no
        such card: the note changes nothing there). Only while a stream of the session is open and
        its feed drew the event (a page drawn later has the card as it is)."""
        feed = self._feeds.get(key)
        if feed is None or not change.events:
            return False
        drawn = sorted((thread, seq) for thread, seq in change.events
                       if thread in idx.threads and seq < feed._done.get(thread, 0))
        if not drawn:
            return False
        tl = Timeline(idx)
        template = self.app.jinja_env.get_template("_live_event.html")
        with feed._context():
            for thread, seq in drawn:
                views = tl.views(load_events(idx, thread, seq, seq + 1), seq)
                if not views:
                    continue
                v = views[0]
                html = template.render(part="changed", key=key, v=v, target="#" + css_id("m-" + v.ev.id))
                self.broadcast(key, html, name=f"event:{v.ev.id}")
        return True

    def broadcast(self, key: str, html: str, name: str | None = None) -> None:
        """Send an HTML fragment (out-of-band updates: elements with `hx-swap-oob`, or
        `<hx-partial hx-target=…>`) to every open stream of session `key`. A `name`d note replaces
        the earlier one of that name, and reaches streams that connect later from an older page."""
        with self._lock:
            notes = self._notes.setdefault(key, {})
            number = _next_note()
            notes[name if name is not None else f"#{number}"] = (number, sse_data(html))
            unnamed = [k for k in notes if k.startswith("#")]
            for k in unnamed[:-KEEP_NOTES]:
                del notes[k]
            feed = self._feeds.get(key)
        if feed is not None:
            feed._publish()

    def notes_after(self, key: str, seen: int) -> list[tuple[int, bytes]]:
        notes = self._notes.get(key)
        if not notes:
            return []
        return sorted(v for v in list(notes.values()) if v[0] > seen)


def _url_environ(environ: dict) -> dict:
    """What building URLs needs from the request that opened a feed (renders happen outside it)."""
    keep = ("SERVER_NAME", "SERVER_PORT", "HTTP_HOST", "SCRIPT_NAME", "wsgi.url_scheme")
    env = {k: environ[k] for k in keep if k in environ}
    env.update(REQUEST_METHOD="GET", PATH_INFO="/", QUERY_STRING="")
    return env
