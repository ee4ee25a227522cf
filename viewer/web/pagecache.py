"""Pages drawn once, sent to everyone who asks for them in the same second.

Drawing a session page is nearly all template work (an event's card, its Markdown, its code): 10–30
ms of one core. When many people — or one team dashboard and a hundred tabs — ask for the same
pages, the server did that work once per request, and 200 concurrent requests queued behind each
other's rendering. A page is the same for everyone who asks for it with the same URL while the
session stays as it is, so it is drawn once and shared.

The key says everything a page depends on: the request's path and arguments (and whether htmx asked
for a fragment), the session's version — the state of its index and where every file of the session
ends (live.page_state; not the live notes' clock, which every session's notes move) — and the
second it is drawn in (a page shows how long a
session stays "live", and whether a quiet one is finished: both change with the clock, never by
more than a second's worth here). Entries live for their second only, so the cache never holds more
than the pages asked for in one second, and a page is never older than one second of the clock or
any change of its session. Requests that miss together wait for the one drawing the page
(single flight) instead of drawing it each.

Pages that depend on more than the URL and the session — a search (its marks run under a time
budget), a first screen drawn before the index — are not shared. The session list is shared the same
way, keyed by what its rows show (archive.py).

A page is kept as the bytes sent: encoding a 60 KB page to UTF-8 for every request that shares it
was a tenth of answering from the cache.
"""

from __future__ import annotations

import threading
import time


class _Drawing:
    __slots__ = ("done", "page")

    def __init__(self):
        self.done, self.page = threading.Event(), None


class PageCache:
    def __init__(self, max_bytes: int = 64 << 20):
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._second = 0
        self._pages: dict = {}  # key → the page (str or bytes), for the current second
        self._drawing: dict = {}  # key → _Drawing, while one request draws it
        self._bytes = 0
        self.draws = 0  # pages drawn (what sharing saves is tested on it)

    def page(self, key: tuple, draw):
        """The page for `key` (of this second): shared, or drawn by `draw()` and kept when it is
        text or bytes (a streamed response, or any other response, is not shared). Text is
        returned, and kept, as UTF-8 bytes."""
        second = int(time.time())
        key = (second, *key)
        with self._lock:
            if second != self._second:
                self._second, self._pages, self._bytes = second, {}, 0
            page = self._pages.get(key)
            if page is not None:
                return page
            drawing = self._drawing.get(key)
            mine = drawing is None
            if mine:
                drawing = self._drawing[key] = _Drawing()
        if not mine:
            drawing.done.wait(30.0)
            # (None: the one drawing it failed — an abort — or drew a stream: draw it here)
            return drawing.page if drawing.page is not None else draw()
        try:
            page = draw()
            self.draws += 1
            if isinstance(page, str):
                page = page.encode()  # as Werkzeug would, for every request
            if isinstance(page, bytes):
                drawing.page = page
                with self._lock:
                    if second == self._second and self._bytes + len(page) <= self.max_bytes:
                        self._pages[key] = page
                        self._bytes += len(page)
            return page
        finally:
            with self._lock:
                self._drawing.pop(key, None)
            drawing.done.set()
