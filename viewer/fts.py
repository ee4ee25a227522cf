"""Full-text search across every session: SQLite FTS5 in the index cache's own database.

What is indexed is what a reader sees of each event, from `viewer.text` (the one extraction: message
text, thinking, tool names, inputs and results; never JSON syntax or base64), one row per event,
`rowid = session id << 40 | n`, so a session's rows are one rowid range (dropped at once, counted by
`rowid >> 40`). Texts are kept zlib-compressed in `fts_text` and the FTS5 table reads them through a
view (external content), so snippets come from SQLite while the stored text costs a fraction of its
size.

Kept in step with the files without a second reader: the index pass hands every event it adds to
`sink` (the store's listeners, `viewer.indexer`), so a page's build, the background walker and the
live tail's small extensions all feed it; `indexed` / `extended` / `removed` then queue the session
for the writer thread, which appends the new events, or drops the session's rows and starts again
when the file was replaced or cut (the thread's last indexed event is no longer where it was). A
session whose pass ran without us (a warm cache after a restart, a sink buffer that overflowed) is
`behind`, and the walker asks us to `catch_up`: read its events back from the file through the
index. Per thread we keep how many events are in, and the id and offset of the last one.

Queries use FTS5's syntax (words, "phrases", prefix*, AND / OR / NOT, NEAR); one that does not parse
is retried with each word taken literally, and if that fails too the reader gets a plain message.
Sessions are ranked by their best match (BM25) when there are not too many matching events to rank
in a blink, else by how many events match; each comes with its best snippets.
"""

from __future__ import annotations

import logging
import os
import queue
import re
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field

import orjson

from . import text
from .reader import CutStr

log = logging.getLogger(__name__)

SCHEMA = 1
SHIFT = 40  # rowid = sid << SHIFT | n
RANK_LIMIT = 20_000  # matching events ranked by BM25; beyond, sessions are ordered by hit count
SINK_CAP = 32 << 20  # characters a pass may hand over in memory; beyond, the writer reads the file
CHUNK = 500  # events read back from a file at a time
COMMIT_ROWS = 2_000  # rows per transaction (readers and the index cache's writer get their turn)
MARK = ("\x02", "\x03")  # snippet markers, removed from indexed text beforehand
_MARKERS = re.compile("[\x02\x03]")
_DDL = """
CREATE TABLE IF NOT EXISTS fts_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fts_sessions (
    sid INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, next INTEGER NOT NULL, state BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS fts_text (id INTEGER PRIMARY KEY, eid TEXT NOT NULL, z BLOB NOT NULL);
CREATE VIEW IF NOT EXISTS fts_content AS SELECT id, fts_unz(z) AS body, eid FROM fts_text;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    body, eid UNINDEXED, content='fts_content', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
"""
_TABLES = ("fts", "fts_content", "fts_text", "fts_sessions", "fts_meta")


class QueryError(ValueError):
    """A search the index cannot run; the message is for the reader."""


def _unz(blob: bytes) -> str:
    return zlib.decompress(blob).decode("utf-8", "replace")


def _connect(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, timeout=10)
    db.create_function("fts_unz", 1, _unz, deterministic=True)
    return db


@dataclass
class Hit:
    id: str
    snippet: str  # plain text, the matches between MARK[0] and MARK[1]

    @property
    def first_match(self) -> str:
        """The first marked words: what the session page searches for when the hit is opened."""
        m = re.search("\x02(.*?)\x03", self.snippet, re.S)
        return m.group(1) if m else ""

    def parts(self) -> list[tuple[str, bool]]:
        """The snippet as (text, is a match) pieces, for templates to escape and mark."""
        out = []
        for i, part in enumerate(re.split("[\x02\x03]", self.snippet)):
            if part:
                out.append((part, i % 2 == 1))
        return out

    @property
    def plain(self) -> str:
        return _MARKERS.sub("", self.snippet)


@dataclass
class Result:
    path: str
    hits_total: int  # matching events in the session
    best: float | None  # BM25 rank of the best match (lower is better), None when not ranked
    hits: list[Hit] = field(default_factory=list)


@dataclass
class Found:
    query: str  # as run (after a literal retry)
    sessions: list[Result]  # the page asked for
    total: int  # matching sessions
    events: int  # matching events
    ranked: bool  # by relevance (else by number of hits)
    literal: bool = False  # the query did not parse and was run word by word


class FullText:
    """The archive's full-text index: a listener of the store's indexer, a writer thread, queries."""

    def __init__(self, store, db_path: str | os.PathLike, transform=None, transform_id: str = ""):
        self.store = store
        self.path = str(db_path)
        self.transform = transform  # text → text applied before indexing (redaction)
        self.transform_id = transform_id
        self.enabled = True
        self._lock = threading.RLock()  # one writer at a time (the writer thread or the walker)
        self._db: sqlite3.Connection | None = None
        self._readers: queue.SimpleQueue = queue.SimpleQueue()
        self._state: dict[str, tuple[int, int, dict]] = {}  # path → (sid, next, threads' state)
        self._buffers: dict[str, dict] = {}  # key → {(thread, seq): (eid, text)} from sinks
        self._buffered = 0
        self._overflow: set[str] = set()
        self._block = threading.Lock()  # the buffers (passes add, the writer takes)
        self._queue: OrderedDict[str, tuple] = OrderedDict()
        self._qlock = threading.Condition()
        self._writer: threading.Thread | None = None
        self._busy = False
        self._open()

    # --- the database --------------------------------------------------------------------------

    def _open(self) -> None:
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            db = _connect(self.path)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            meta = {}
            try:
                meta = dict(db.execute("SELECT name, value FROM fts_meta"))
            except sqlite3.OperationalError:
                pass
            want = {"schema": str(SCHEMA), "transform": self.transform_id}
            if meta and meta != want:  # another layout, or text redacted differently: start over
                with db:
                    for t in _TABLES:
                        kind = "VIEW" if t == "fts_content" else "TABLE"
                        db.execute(f"DROP {kind} IF EXISTS {t}")
            with db:
                db.executescript(_DDL)
                db.executemany("INSERT OR REPLACE INTO fts_meta VALUES (?, ?)", want.items())
            self._state = {p: (sid, nxt, orjson.loads(st)) for sid, p, nxt, st in db.execute(
                "SELECT sid, path, next, state FROM fts_sessions")}
            self._db = db
        except (sqlite3.Error, OSError) as e:
            log.warning("full-text search disabled: cannot use %s: %s", self.path, e)
            self.enabled = False

    def _reader(self) -> sqlite3.Connection:
        try:
            return self._readers.get_nowait()
        except queue.Empty:
            return _connect(self.path)

    def _give_back(self, db: sqlite3.Connection) -> None:
        self._readers.put(db)

    def close(self) -> None:
        self.wait(30)
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
        while True:
            try:
                self._readers.get_nowait().close()
            except queue.Empty:
                break

    # --- listening to the index passes ----------------------------------------------------------

    def sink(self, key: str, idx):
        """A callable fed every event of a pass: its visible text, kept until the writer takes it."""
        if not self.enabled:
            return None
        def take(thread: str, seq: int, ev) -> None:
            if key in self._overflow:
                return
            words = self._text(ev, None)
            if words is None:  # a cut string: the writer reads the whole line back from the file
                return
            with self._block:
                buf = self._buffers.setdefault(key, {})
                buf[(thread, seq)] = (ev.id, words)
                self._buffered += len(words)
                if self._buffered > SINK_CAP:
                    self._overflow.add(key)  # the writer reads this session from the file instead
                    self._buffered -= sum(len(t) for _, t in buf.values())
                    buf.clear()

        return take

    def indexed(self, key: str, idx) -> None:
        self._enqueue(key, idx)

    def extended(self, key: str, idx, change) -> None:
        self._enqueue(key, idx)

    def removed(self, key: str, path: str) -> None:
        self._enqueue(key, None, path)

    def behind(self, key: str, path: str) -> bool:
        if not self.enabled:
            return False
        with self._qlock:
            if key in self._queue:
                return False
        st = self._state.get(path)
        if st is None:
            return True
        main = st[2].get("main")
        try:
            size = os.stat(path).st_size
        except OSError:
            return False
        return main is None or main[5] != size

    def catch_up(self, key: str) -> None:
        """Bring one session's rows up to date now (the walker's thread), reading what the passes
        did not hand over from the file."""
        idx = self.store.build(key, start=False, keep=False).wait()
        if idx is not None:
            self._sync(key, idx)

    def walked(self, refs) -> None:
        """Drop the rows of sessions no longer under the roots."""
        present = {r.path for r in refs}
        for path in [p for p in list(self._state) if p not in present]:
            self._enqueue(None, None, path)

    # --- the writer -----------------------------------------------------------------------------

    def _enqueue(self, key: str | None, idx, gone: str | None = None) -> None:
        if not self.enabled:
            return
        with self._qlock:
            name = key if key is not None else "\0" + gone
            self._queue[name] = (key, idx, gone)
            self._queue.move_to_end(name)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_all, name="fts-writer", daemon=True)
                self._writer.start()
            self._qlock.notify_all()

    def _write_all(self) -> None:
        while True:
            with self._qlock:
                if not self._queue:
                    self._writer = None
                    self._busy = False
                    self._qlock.notify_all()
                    return
                _, (key, idx, gone) = self._queue.popitem(last=False)
                self._busy = True
            try:
                if gone is not None:
                    self._drop(gone)
                elif idx is not None:
                    self._sync(key, idx)
            except Exception:
                log.exception("full-text index of %s failed", key or gone)

    def wait(self, timeout: float = 60.0) -> bool:
        """Wait until the writer has nothing left to do (tests, benchmarks, shutdown)."""
        deadline = time.monotonic() + timeout
        with self._qlock:
            while self._queue or self._writer is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._qlock.wait(left)
        return True

    def _text(self, ev, expand) -> str | None:
        """The visible text of an event, ready to index; None when a cut string needs the file."""
        parts = []
        for p in text.pieces(ev, expand):
            if expand is None and isinstance(p.text, CutStr):
                return None
            parts.append(p.text)
        words = "\n".join(parts)
        if self.transform is not None:
            words = self.transform(words)
        return _MARKERS.sub(" ", words)

    def _drop(self, path: str) -> None:
        with self._lock:
            st = self._state.pop(path, None)
            if st is None or self._db is None:
                return
            db = self._db
            with db:
                self._delete_rows(db, st[0])
                db.execute("DELETE FROM fts_sessions WHERE sid = ?", (st[0],))

    @staticmethod
    def _delete_rows(db, sid: int) -> None:
        lo, hi = sid << SHIFT, ((sid + 1) << SHIFT) - 1
        # external content: FTS5 forgets a row given the very values it indexed
        rows = db.execute("SELECT id, z, eid FROM fts_text WHERE id BETWEEN ? AND ?", (lo, hi))
        while batch := rows.fetchmany(CHUNK):
            db.executemany("INSERT INTO fts(fts, rowid, body, eid) VALUES ('delete', ?, ?, ?)",
                           [(rid, _unz(z), eid) for rid, z, eid in batch])
        db.execute("DELETE FROM fts_text WHERE id BETWEEN ? AND ?", (lo, hi))

    def _sync(self, key: str, idx) -> None:
        """Make the session's rows match its index: append what is new, or start over when the
        file no longer holds what was indexed."""
        with self._lock:
            if self._db is None:
                return
            with self._block:
                buf = self._buffers.pop(key, {})
                self._buffered -= sum(len(t) for _, t in buf.values())
                self._overflow.discard(key)
            db = self._db
            path = idx.main
            st = self._state.get(path)
            threads = dict(st[2]) if st else {}
            fresh = st is None
            for name, th in list(idx.threads.items()):
                if not _still(threads.get(name), th):
                    fresh = True
                    break
            if fresh and st is not None:
                with db:
                    self._delete_rows(db, st[0])
                threads = {}
            if st is None:
                with db:
                    cur = db.execute("INSERT OR REPLACE INTO fts_sessions (path, next, state) "
                                     "VALUES (?, 0, ?)", (path, b"{}"))
                sid, nxt = cur.lastrowid, 0
            else:
                sid, nxt = st[0], (0 if fresh else st[1])
            pending: list[tuple] = []

            def flush():
                nonlocal pending
                if not pending:
                    return
                with db:
                    db.executemany("INSERT INTO fts_text (id, eid, z) VALUES (?, ?, ?)",
                                   ((rid, eid, zlib.compress(t.encode("utf-8", "replace"), 1))
                                    for rid, eid, t in pending))
                    db.executemany("INSERT INTO fts (rowid, body, eid) VALUES (?, ?, ?)",
                                   ((rid, t, eid) for rid, eid, t in pending))
                    db.execute("UPDATE fts_sessions SET next = ?, state = ? WHERE sid = ?",
                               (nxt, orjson.dumps(threads), sid))
                self._state[path] = (sid, nxt, dict(threads))
                pending = []

            for name, th in list(idx.threads.items()):
                done = threads.get(name, [0])[0]
                stop = len(th)
                if done >= stop:
                    continue
                seq = done
                while seq < stop:
                    end = min(stop, seq + CHUNK)
                    need = [s for s in range(seq, end) if (name, s) not in buf]
                    read = {}
                    if need:
                        read = self._read(idx, name, need[0], need[-1] + 1)
                    for s in range(seq, end):
                        got = buf.get((name, s)) or read.get(s)
                        if got is None:
                            continue
                        eid, words = got
                        if words.strip():
                            pending.append(((sid << SHIFT) | nxt, eid, words))
                            nxt += 1
                    seq = end
                    threads[name] = _mark(th, seq)
                    if len(pending) >= COMMIT_ROWS:
                        flush()
                threads[name] = _mark(th, stop)
            flush()
            if path not in self._state or self._state[path][2] != threads:
                with db:
                    db.execute("UPDATE fts_sessions SET next = ?, state = ? WHERE sid = ?",
                               (nxt, orjson.dumps(threads), sid))
                self._state[path] = (sid, nxt, dict(threads))

    def _read(self, idx, thread: str, start: int, stop: int) -> dict[int, tuple[str, str]]:
        """Events [start, stop) of a thread read back from its file, as (id, text) by seq."""
        from .timeline import load_events

        th = idx.threads[thread]
        out = {}
        try:
            events = load_events(idx, thread, start, stop)
            with open(th.path, "rb") as f:
                expand = text.expander(f)
                for i, ev in enumerate(events):
                    out[start + i] = (ev.id, self._text(ev, expand))
        except OSError as e:
            log.warning("full-text index: cannot read %s: %s", th.path, e)
        return out

    # --- progress -----------------------------------------------------------------------------

    def coverage(self, refs) -> dict:
        """{"done", "total", "complete"}: sessions whose rows are current, of those served."""
        done = 0
        for r in refs:
            st = self._state.get(r.path)
            main = st[2].get("main") if st else None
            if main is not None and main[5] == r.size:
                done += 1
        with self._qlock:
            idle = not self._queue and self._writer is None
        return {"done": done, "total": len(refs), "complete": done == len(refs) and idle}

    # --- queries -------------------------------------------------------------------------------

    def search(self, query: str, paths: set[str] | None = None, page: int = 1, per_page: int = 20,
               snippets: int = 3, order: str = "relevance") -> Found:
        """Sessions matching `query` (only those in `paths` when given), best first."""
        query = (query or "").strip()
        if not query:
            raise QueryError("Type something to search for.")
        if not self.enabled:
            raise QueryError("Full-text search is off: the index cache is disabled or unusable.")
        db = self._reader()
        try:
            try:
                return self._search(db, query, paths, page, per_page, snippets, order)
            except sqlite3.OperationalError as e:
                if not _syntax(e):
                    raise
                literal = _literal(query)
                if literal is None or _SYNTAX.search(query):
                    raise QueryError(_plain(e, query)) from None
                try:
                    found = self._search(db, literal, paths, page, per_page, snippets, order)
                except sqlite3.OperationalError as e2:
                    if not _syntax(e2):
                        raise
                    raise QueryError(_plain(e, query)) from None
                found.literal = True
                return found
        except sqlite3.OperationalError as e:
            log.warning("full-text query %r failed: %s", query, e)
            raise QueryError("The search index is busy or unreadable right now; try again.") from None
        finally:
            self._give_back(db)

    def _search(self, db, query, paths, page, per_page, snippets, order) -> Found:
        by_sid = {st[0]: p for p, st in list(self._state.items())}
        counts = {}
        events = 0
        for sid, n in db.execute(f"SELECT rowid >> {SHIFT}, count(*) FROM fts WHERE fts MATCH ? "
                                 "GROUP BY 1", (query,)):
            path = by_sid.get(sid)
            if path is None or (paths is not None and path not in paths):
                continue
            counts[sid] = n
            events += n
        ranked = order == "relevance" and events <= RANK_LIMIT
        best: dict[int, float] = {}
        if ranked and counts:
            for rowid, rank in db.execute("SELECT rowid, rank FROM fts WHERE fts MATCH ? "
                                          "ORDER BY rank", (query,)):
                sid = rowid >> SHIFT
                if sid in counts and sid not in best:
                    best[sid] = rank
            order_key = lambda sid: (best.get(sid, 0.0), -counts[sid])  # noqa: E731
        elif order == "recent":
            mtime = {sid: _mtime(by_sid[sid]) for sid in counts}
            order_key = lambda sid: -mtime[sid]  # noqa: E731
        else:
            order_key = lambda sid: -counts[sid]  # noqa: E731
        sids = sorted(counts, key=order_key)
        start = (max(1, page) - 1) * per_page
        results = []
        for sid in sids[start : start + per_page]:
            lo, hi = sid << SHIFT, ((sid + 1) << SHIFT) - 1
            hits = [Hit(eid, snip) for eid, snip in db.execute(
                f"SELECT eid, snippet(fts, 0, '{MARK[0]}', '{MARK[1]}', '…', 24) FROM fts "
                "WHERE fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT ?",
                (query, lo, hi, snippets))]
            results.append(Result(by_sid[sid], counts[sid], best.get(sid), hits))
        return Found(query, results, len(counts), events, ranked)


def _mark(th, done: int) -> list:
    """What a thread's rows stand for: [events in, offset and id of the last, inode, path, size
    of the main file when read, mtime of a document]."""
    last = done - 1
    return [done, th.offsets[last] if done else -1, th.ids[last] if done else "", th.ino,
            th.path, th.size, th.mtime_ns if th.mode == "document" else 0]


def _still(mark: list | None, th) -> bool:
    """Whether a thread's file still holds what its rows were made from."""
    if mark is None:
        return True  # nothing indexed of it yet
    done, offset, eid, ino, path, size, doc_mtime = mark
    if path != th.path or ino != th.ino or done > len(th):
        return False
    if th.mode == "document" and doc_mtime != th.mtime_ns:
        return False  # a document is rewritten whole
    return done == 0 or (th.ids[done - 1] == eid and th.offsets[done - 1] == offset)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _syntax(e: sqlite3.Error) -> bool:
    msg = str(e)
    return "fts5" in msg or "syntax error" in msg or "no such column" in msg or \
        "unterminated string" in msg or "unknown special query" in msg


_WORD = re.compile(r'[^\s"]+')
# what only someone writing search syntax types: quotes, brackets, the operators in capitals
_SYNTAX = re.compile(r'["()]|(?:^|\s)(?:AND|OR|NOT|NEAR)(?:\s|\(|$)')


def _literal(query: str) -> str | None:
    """The query with every word taken literally (`foo-bar`, `a:b`, `src/app.py`): each a quoted
    phrase, its punctuation then only separating tokens, as in the text."""
    words = _WORD.findall(query)
    if not words:
        return None
    return " ".join('"' + w.replace('"', '""') + '"' for w in words)


def _plain(e: sqlite3.Error, query: str) -> str:
    msg = str(e)
    near = re.search(r'near "(.*)"', msg)
    if query.count('"') % 2:
        why = "a quote is not closed"
    elif query.count("(") != query.count(")"):
        why = "a bracket is not closed"
    elif "no such column" in msg:
        why = "a word followed by a colon names a column, and there is none by that name"
    elif near and not near.group(1):
        why = "it ends where more was expected"
    elif near:
        why = f"“{near.group(1)}” is not expected there"
    else:
        why = msg.replace("fts5: ", "")
    return (f"That search cannot be run ({why}). Search for words, \"a phrase\" in double quotes, "
            "a prefix* with a star, and combine them with AND, OR, NOT.")
