"""Indexing in the background: one pass per session however many want it, and a walker that keeps
every session of the served roots indexed.

* `Build` is the pass that makes one session's index. Everyone who needs that index while there is no
  usable one — a page, a live stream, search, the walker — joins the same Build, so the file is read
  once. A Build says how far it got (bytes read of bytes to read) and can be waited on with a
  timeout. It runs on a thread of its own, or in the thread of whoever starts it by waiting.
* `Listeners` hear about every pass the store runs over a session, whoever asked for it. A listener
  is any object with some of these methods (a listener that raises is logged and skipped):
    sink(key, idx)            asked before each pass; returns None or a callable that receives every
                              event the pass adds, as sink(thread, seq, event) (the full-text index
                              feeds on it; a pass from scratch starts again at seq 0 of "main"; after
                              a restart a sink may see a (thread, seq) again: key rows by it)
    indexed(key, idx)         after a pass that built the index from scratch (new, or the file was
                              replaced or rewritten)
    extended(key, idx, change)  after a pass that appended events (`change.new`: thread → first seq)
    removed(key, path)        when a session's transcript is gone
    progress(key, read, total)  while a build reads: bytes read so far and bytes to read
    behind(key, path) -> bool   asked by the walker for every session: whether the listener's own
                              data of it lags (the full-text index after a restart with a warm
                              cache: no pass runs, so no sink sees the events); if so the walker
                              calls catch_up(key) in its turn, after the sessions missing a summary
    walked(refs)              after each walk, with every session found (to drop what went away)
* `Indexer` is the walker: one thread that goes through every session of the roots — sessions a page
  is showing first, then the most recently written — and brings the index of each one that has none,
  or an outdated one, into the cache (not into memory: only pages keep indexes there). It counts what
  is done ("indexing 412 of 2,000 sessions") and bumps `version` whenever a session's summary becomes
  known, so the session list can fill in its rows. The thread ends when there is nothing left to do
  and is started again when someone asks (a page wants sessions, files changed).

Nothing here knows about HTTP; the store (`viewer.store`) runs the passes, the web layer only asks.
"""

from __future__ import annotations

import logging
import threading
import time

from .formats.detect import NotTranscript

log = logging.getLogger(__name__)

REFRESH_EVERY = 30.0  # seconds between two walker passes over a big session that keeps growing
WALK_GAP = 2.0  # seconds between two walks (a live session's file changes many times a second)


class Build:
    """The pass that makes one session's index, shared by everyone who waits for it."""

    def __init__(self, key: str, run, total: int):
        self.key = key
        self._run = run  # run(build) -> SessionIndex
        self.total = max(1, total)  # bytes to read, as far as known when the pass starts
        self.read = 0
        self.keep = False  # a page or a stream wants the index: keep it in memory afterwards
        self.index = None
        self.error: BaseException | None = None
        self.started_at = self.finished_at = 0.0
        self._lock = threading.Lock()
        self._claimed = False
        self._done = threading.Event()

    def _claim(self) -> bool:
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    def start(self) -> "Build":
        """Run the pass on a thread of its own (nothing happens if it already runs)."""
        if self._claim():
            threading.Thread(target=self._go, name=f"index {self.key}", daemon=True).start()
        return self

    def _go(self) -> None:
        self.started_at = time.monotonic()
        try:
            self.index = self._run(self)
        except BaseException as e:  # handed to every waiter
            self.error = e
        finally:
            self.finished_at = time.monotonic()
            self._done.set()

    def wait(self, timeout: float | None = None):
        """The index once the pass is done (run here if nobody started it); None on timeout.
        Raises what the pass raised (OSError for an unreadable file)."""
        if self._claim():
            self._go()
        if not self._done.wait(timeout):
            return None
        if self.error is not None:
            raise self.error
        return self.index

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def started(self) -> bool:
        return self._claimed

    @property
    def fraction(self) -> float:
        return 1.0 if self.done else min(0.99, self.read / self.total)

    def add_read(self, n: int) -> None:
        self.read += n


class Listeners:
    def __init__(self) -> None:
        self._items: list = []

    def add(self, listener) -> None:
        self._items.append(listener)

    def remove(self, listener) -> None:
        self._items.remove(listener)

    def _each(self, name: str):
        for item in list(self._items):
            fn = getattr(item, name, None)
            if fn is not None:
                yield fn

    def _tell(self, name: str, *args) -> None:
        for fn in self._each(name):
            try:
                fn(*args)
            except Exception:
                log.exception("index listener %s failed", name)

    def sink(self, key: str, idx):
        """One callable for the sinks of every listener that wants this pass's events, or None."""
        sinks = []
        for fn in self._each("sink"):
            try:
                s = fn(key, idx)
            except Exception:
                log.exception("index listener sink failed")
                continue
            if s is not None:
                sinks.append(s)
        if not sinks:
            return None
        if len(sinks) == 1:
            return sinks[0]

        def all_of(thread, seq, ev):
            for s in sinks:
                s(thread, seq, ev)

        return all_of

    def indexed(self, key: str, idx) -> None:
        self._tell("indexed", key, idx)

    def extended(self, key: str, idx, change) -> None:
        self._tell("extended", key, idx, change)

    def removed(self, key: str, path: str) -> None:
        self._tell("removed", key, path)

    def progress(self, key: str, read: int, total: int) -> None:
        self._tell("progress", key, read, total)

    def behind(self, key: str, path: str) -> list:
        """The catch_up of every listener whose own data of this session lags."""
        out = []
        for fn in self._each("behind"):
            try:
                if fn(key, path):
                    out.append(fn.__self__.catch_up)
            except Exception:
                log.exception("index listener behind failed")
        return out

    def walked(self, refs) -> None:
        self._tell("walked", refs)


class Indexer:
    """The archive-wide walker over a store's sessions."""

    def __init__(self, store):
        self.store = store
        self.listeners = Listeners()
        self.total = 0  # sessions under the roots, at the last look
        self.done = 0  # of which have a current summary
        self.version = 0  # bumped whenever a session's summary becomes known or changes
        self.walking = False  # the whole archive, not only what pages want (the app turns it on)
        self._cond = threading.Condition()
        self._wanted: list[str] = []
        self._again = True  # files may have changed since the last walk
        self._walked = -WALK_GAP  # when the last walk began
        self._later: float | None = None  # when sessions put off by the last walk are due
        self._thread: threading.Thread | None = None
        self._resting = False  # the thread waits only for sessions put off: nothing due now
        self._stopped = False
        self._last: dict[str, float] = {}  # key → when the walker last ran a pass over it
        self._known: dict[str, str] = {}  # key → path, to tell listeners what went away
        self._todo: set[str] = set()  # sessions of this walk without a current summary yet
        # sessions noted while a walk looks at what is known: a page may index one meanwhile
        self._noted_meanwhile: set[str] | None = None

    def listen(self, listener) -> None:
        """Add a listener (see the module's docstring)."""
        self.listeners.add(listener)

    # --- asking ------------------------------------------------------------------------------

    def start(self) -> "Indexer":
        """Walk every session of the roots, now and whenever `poke()` says files changed."""
        self.walking = True
        self.poke()
        return self

    def poke(self) -> None:
        """Files changed (or may have): walk again."""
        if not self.walking:
            return
        with self._cond:
            self._again = True
            self._ensure_thread()
            self._cond.notify_all()

    def want(self, keys) -> None:
        """Index these sessions before any other (the page of the list someone is looking at)."""
        with self._cond:
            fresh = [k for k in keys if k not in self._wanted]
            if not fresh:
                return
            self._wanted[:0] = fresh
            self._ensure_thread()
            self._cond.notify_all()

    def stop(self, timeout: float = 30.0) -> None:
        """No more walking; waits up to `timeout` for the session being indexed."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def busy(self) -> bool:
        """Indexing now (or about to)."""
        return self._thread is not None and not self._resting

    def wait(self, seen: int, timeout: float) -> int:
        """Wait until `version` moves past `seen` (or the timeout); returns the version."""
        with self._cond:
            if self.version == seen:
                self._cond.wait(timeout)
            return self.version

    def wait_for(self, keys, timeout: float) -> None:
        """Wait until these sessions have summaries or the timeout passes."""
        deadline = time.monotonic() + timeout
        keys = set(keys)
        seen = self.version
        while keys:
            keys = {k for k in keys if self.store.summary_of(k) is None}
            left = deadline - time.monotonic()
            if not keys or left <= 0:
                return
            seen = self.wait(seen, left)

    def idle(self, timeout: float = 60.0) -> bool:
        """Wait until the walker has nothing left to do (tests, and shutdown)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._thread is not None and not (self._resting and not self._wanted):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def noted(self, key: str | None = None) -> int:
        """A session's summary became known (whoever ran the pass); returns the new version."""
        with self._cond:
            if key in self._todo:
                self._todo.discard(key)
                self.done += 1
            elif self._noted_meanwhile is not None:
                self._noted_meanwhile.add(key)
            self.version += 1
            self._cond.notify_all()
            return self.version

    # --- the walker --------------------------------------------------------------------------

    def _ensure_thread(self) -> None:  # under self._cond
        if self._thread is None and not self._stopped:
            self._thread = threading.Thread(target=self._loop, name="indexer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        try:
            while True:
                with self._cond:
                    now = time.monotonic()
                    due = self.walking and (
                        (self._again and now >= self._walked + WALK_GAP)
                        or (self._later is not None and now >= self._later))
                    if self._stopped or not (due or self._wanted):
                        if self._stopped:
                            wake = None
                        elif self.walking and self._again:
                            wake = self._walked + WALK_GAP  # a live file pokes at every write
                        else:
                            wake = self._later
                        if wake is None:  # nothing left to do: the thread ends
                            self._thread = None
                            self._cond.notify_all()
                            return
                        self._resting = not (self.walking and self._again)
                        self._cond.notify_all()
                        self._cond.wait(max(0.0, wake - now))
                        self._resting = False
                        continue
                    if due:
                        self._again, self._later, self._walked = False, None, now
                if due:
                    later = self._walk()
                    with self._cond:
                        self._later = later
                while (key := self._next_wanted()) is not None:
                    self._one(key)
        except BaseException:
            log.exception("the background indexer stopped")
            with self._cond:
                self._thread = None
                self._cond.notify_all()

    def _next_wanted(self) -> str | None:
        with self._cond:
            while self._wanted:
                key = self._wanted.pop(0)
                if self.store.summary_of(key) is None:
                    return key
        return None

    def _walk(self) -> float | None:
        """One walk over every session; returns when to walk again for sessions put off, if any."""
        store = self.store
        refs = store.sessions()
        keys = {r.key: r.path for r in refs}
        for key, path in list(self._known.items()):
            if keys.get(key) != path:
                self.listeners.removed(key, path)
                store.forget(key)
        self._known = keys
        with self._cond:
            self._noted_meanwhile = set()
        summaries = store.summaries(refs)
        with self._cond:
            # one a page indexed after the look is done: its note came before `_todo` knew it
            todo = [r for r in refs if summaries.get(r.key) is None
                    and r.key not in self._noted_meanwhile]
            self._noted_meanwhile = None
            self._todo = {r.key for r in todo}
            self.total, self.done = len(refs), len(refs) - len(todo)
            self.version += 1
            self._cond.notify_all()
        from .store import EARLY_ABOVE as big

        later = None
        now = time.monotonic()
        for ref in todo:
            while (key := self._next_wanted()) is not None:
                self._one(key)
            with self._cond:
                if self._stopped:
                    return None
            if store.summary_of(ref.key) is None:
                last = self._last.get(ref.key)
                # a big session that keeps being written is brought up to date now and then
                # (pages showing it keep their own index current)
                if last is not None and now - last < REFRESH_EVERY and ref.size > big:
                    later = min(later or 1e18, last + REFRESH_EVERY)
                    continue
                self._one(ref.key)
        # listeners with data of their own (the full-text index) catch up on what they lack
        for ref in refs:
            for catch_up in self.listeners.behind(ref.key, ref.path):
                while (key := self._next_wanted()) is not None:
                    self._one(key)
                with self._cond:
                    if self._stopped:
                        return None
                store.let_pages_first(0.25)  # (it loads the session's index from the cache)
                try:
                    catch_up(ref.key)
                except (OSError, LookupError, NotTranscript) as e:
                    # the file went, cannot be read or is not a transcript: the store says so
                    log.debug("catching up %s failed: %s", ref.key, e)
                except Exception:
                    log.exception("catching up %s failed", ref.key)
                time.sleep(0)
        self.listeners.walked(refs)
        return later

    def _one(self, key: str) -> None:
        self.store.let_pages_first(0.25)
        self._last[key] = time.monotonic()
        try:
            self.store.bring_up_to_date(key)
        except Exception as e:  # an unreadable file is the store's to report, never the walker's end
            log.debug("background index of %s failed: %s", key, e)
