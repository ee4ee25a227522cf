"""Event cards drawn once, shared by every page, window and stream that shows them unchanged.

A session page is nearly all event cards (`_message.html`), and a card is the same wherever its
event appears while nothing it shows changes. The page cache (pagecache.py) shares whole pages, but
a page's key holds its session's cursor: a session written ten times a second has its page, its
permalinks, its JSON and its earlier windows drawn again ten times a second, every card of them —
for one new event at the end. Profiled under 200 concurrent page requests, 100 streams and 10
appends a second, drawing the same cards again was two thirds of the server's time.

A card is a pure function of its event view and the session key (the templates see nothing else but
constant helpers, and — only while a page with a search is drawn — the search's marks, which are
never shared). The key of a card is therefore the view itself, reduced to what can change: which
build of the index the event was read from (a build reads a file's bytes once; a rewritten file is
a new build) and how it was read, the event's place, every flag of the view, and for each tool call
it shows its state in the call map, its result's place, the sub-agent thread it spawned and how long
that thread is. A view that holds a whole window of a sub-agent (a permalink into one) is drawn
each time, and so is a card whose long code waits for its highlighting (render.highlights_later):
once highlighted, it is drawn with the highlighting and kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .. import render


def _call(cv) -> tuple:
    c = cv.call
    return (c.id, c.name, c.status, c.named, c.call, c.result, c.is_error, c.called_at,
            c.finished_at, c.subthread, cv.use.id if cv.use is not None else None,
            cv.use is None, cv.result_event, cv.result_path, cv.unanswered, cv.call_event,
            cv.target, cv.resolving, cv.result is None,
            tuple((th.name, th.label, th.count) for th in cv.threads),
            None if cv.result_owner is None else (cv.result_owner.ev.id, cv.result_owner.seq))


def card_key(v, key) -> tuple | None:
    """What a drawn card depends on, or None when it is not to be shared."""
    if v.source is None or v.path or v.at is not None:
        return None
    for cv in v.calls.values():
        if any(th.window is not None for th in cv.threads):
            return None
    ev = v.ev
    return (key, v.source, ev.thread, v.seq, ev.id, ev.ref.offset, ev.ref.length, v.lane,
            v.since_start, v.target, v.continued, v.agent, v.repeats, v.thought, v.refs_only,
            v.folded, v.thread_label,
            tuple((cid, _call(cv)) for cid, cv in v.calls.items()),
            tuple((cid, _call(cv)) for cid, cv in v.refs.items()),
            tuple(_call(cv) for cv in v.fold_into))


class Cards:
    """Drawn cards, the most recently used kept up to `max_bytes` of HTML."""

    def __init__(self, max_bytes: int = 32 << 20):
        self.max_bytes = max_bytes
        self._cards: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.draws = 0  # cards drawn (what sharing saves is tested on it)

    def card(self, v, key, draw):
        """The card of view `v` (`key`: the session's, and what else the card depends on): shared,
        or drawn by `draw()` and kept."""
        k = card_key(v, key)
        if k is None:
            return draw()
        with self._lock:
            html = self._cards.get(k)
            if html is not None:
                self._cards.move_to_end(k)
                return html
        waiting = render.deferred_highlights()
        html = draw()
        self.draws += 1
        if render.deferred_highlights() != waiting:
            return html  # plain code that waits for its highlighting: drawn highlighted next time
        with self._lock:
            if k not in self._cards:
                self._cards[k] = html
                self._bytes += len(html)
                while self._bytes > self.max_bytes and self._cards:
                    self._bytes -= len(self._cards.popitem(last=False)[1])
        return html
