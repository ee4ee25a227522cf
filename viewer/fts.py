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
from bisect import bisect_left
from collections import Counter, OrderedDict
from contextlib import ExitStack
from dataclasses import dataclass, field

import orjson

from . import files, reader, text
from .formats.detect import NotTranscript
from .index import grows
from .reader import CutStr

log = logging.getLogger(__name__)

SCHEMA = 2  # 2: each row names its event's thread and place (`_rewrite` finds a row by them)
SHIFT = 40  # rowid = sid << SHIFT | n
RANK_LIMIT = 2_000  # matching events ranked by BM25 (some 20 µs each); beyond, by number of hits
COUNT_BUDGET = 0.03  # seconds spent counting matches per session; beyond, the count is a floor
COUNT_BATCH = 4096  # matching rows read at a time while counting
SNIPPET_GAP = 1_000  # matching rows between two shown sessions read rather than start a statement
SINK_CAP = 16 << 20  # characters a pass may hand over in memory; beyond, the writer reads the file
CHUNK = 500  # events read back from a file at a time
STEP = 50  # events read back between two looks for pages being answered (`_step_aside`)
BACKLOG = 4  # sessions the walker may queue for the writer before it waits
HOLD = 16  # sessions queued for the writer with their index and texts; beyond, only their key
# (the walker indexes four times faster than FTS5 writes: at 10,000 sessions a queue of indexes
# and texts held the server at 500 MB), and the writer loads the index and reads the texts back
MERGE_AFTER = 2_000  # rows written before the idle writer merges the index's segments
MERGE_PAGES = 300  # pages per merge step (a step is a few tenths of a second at most)
COMMIT_ROWS = 2_000  # rows handed to SQLite at a time…
COMMIT_CHARS = 2 << 20  # …or characters of text (FTS5 tokenizes some 10 MB/s: a fifth of a second)
COMMIT_EVERY = 0.25  # seconds a write transaction stays open: the index cache's writer needs its turn,
# and committing every session alone made FTS5 write (and merge) a segment per session
MARK = ("\x02", "\x03")  # snippet markers, removed from indexed text beforehand
_MARKERS = re.compile("[\x02\x03]")
_DDL = """
CREATE TABLE IF NOT EXISTS {meta} (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {sessions} (
    sid INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, next INTEGER NOT NULL, state BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS {text} (
    id INTEGER PRIMARY KEY, eid TEXT NOT NULL, z BLOB NOT NULL, thread TEXT, seq INTEGER);
CREATE VIEW IF NOT EXISTS {content} AS SELECT id, fts_unz(z) AS body, eid FROM {text};
CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(
    body, eid UNINDEXED, content='{content}', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
"""


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
    whole: bool = True  # every match was counted (else `total` and `events` are floors)


class FullText:
    """The archive's full-text index: a listener of the store's indexer, a writer thread, queries."""

    def __init__(self, store, db_path: str | os.PathLike, transform=None, transform_id: str = "",
                 name: str = "fts"):
        self.store = store
        self.path = str(db_path)
        self.transform = transform  # text → text applied before indexing (redaction)
        self.transform_id = transform_id
        self._names = {"fts": name, "text": f"{name}_text", "sessions": f"{name}_sessions",
                       "meta": f"{name}_meta", "content": f"{name}_content"}
        self.enabled = True
        self._lock = threading.RLock()  # one writer at a time (the writer thread or the walker)
        self._db: sqlite3.Connection | None = None
        self._readers: queue.SimpleQueue = queue.SimpleQueue()
        self._state: dict[str, tuple[int, int, dict]] = {}  # path → (sid, next, threads' state)
        self._changes = 0  # bumped whenever `_state` changes: `_views` are made again
        self._seen: tuple = (-1, {}, {})  # (changes, path by sid, main file's size by path)
        self._buffers: dict[str, dict] = {}  # key → {(thread, seq): (eid, text)} from sinks
        # sessions whose index was built again since their rows were written (a file cut or
        # rewritten): their rows are made again, whatever their last event still looks like
        self._rebuilt: set[str] = set()
        # key → {(thread, seq)} of events indexed before whose record changed in place since (a
        # row-session's: a message streamed further, its session row's name): their rows are
        # written again (`_rewrite`)
        self._changed: dict[str, set] = {}
        self._buffered = 0
        self._overflow: set[str] = set()
        self._block = threading.Lock()  # the buffers (passes add, the writer takes)
        self._queue: OrderedDict[str, tuple] = OrderedDict()
        self._qlock = threading.Condition()
        self._writer: threading.Thread | None = None
        self._busy = False
        self._since: float | None = None  # when the open write transaction began
        cache = getattr(store, "cache", None)
        self._wlock = getattr(cache, "write_lock", None)
        self._written = MERGE_AFTER  # rows since the segments were last merged (a restart merges)
        self._open()

    # --- the database --------------------------------------------------------------------------

    def _sql(self, sql: str) -> str:
        return sql.format(**self._names)

    def _open(self) -> None:
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            db = _connect(self.path)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            meta = {}
            try:
                meta = dict(db.execute(self._sql("SELECT name, value FROM {meta}")))
            except sqlite3.OperationalError:
                pass
            want = {"schema": str(SCHEMA), "transform": self.transform_id}
            if meta and meta != want:  # another layout, or text redacted differently: start over
                with db:
                    for t in ("fts", "content", "text", "sessions", "meta"):
                        kind = "VIEW" if t == "content" else "TABLE"
                        db.execute(f"DROP {kind} IF EXISTS {self._names[t]}")
            with db:
                db.executescript(self._sql(_DDL))
                db.executemany(self._sql("INSERT OR REPLACE INTO {meta} VALUES (?, ?)"), want.items())
            self._db = db
            self._load_state()
        except (sqlite3.Error, OSError) as e:
            log.warning("full-text search disabled: cannot use %s: %s", self.path, e)
            self.enabled = False

    def _load_state(self) -> None:
        self._state = {p: (sid, nxt, orjson.loads(st)) for sid, p, nxt, st in self._db.execute(
            self._sql("SELECT sid, path, next, state FROM {sessions}"))}
        self._changes += 1

    def _views(self) -> tuple[dict[int, str], dict[str, int]]:
        """(path by sid, size of the main file indexed by path), made again only after `_state`
        changed: every query and progress check reads them for every session of the archive."""
        changes, by_sid, sizes = self._seen
        if changes != self._changes:
            changes = self._changes
            by_sid, sizes = {}, {}
            for path, (sid, _, threads) in list(self._state.items()):
                by_sid[sid] = path
                main = threads.get("main")
                sizes[path] = main[5] if main is not None else 0  # an empty file has no thread yet
            self._seen = (changes, by_sid, sizes)
        return by_sid, sizes

    def _begin(self) -> None:
        if self._since is None:
            # the index cache writes to the same database: let its pending writes in first, then
            # hold its write lock while the transaction is open (its saves wait for their turn
            # instead of giving up when SQLite's busy timeout runs out)
            flush = getattr(self.store, "flush", None)
            if flush is not None:
                flush()
            if self._wlock is not None:
                self._wlock.acquire()
            self._since = time.monotonic()

    def _end(self) -> None:
        """The transaction is over (committed or rolled back): the index cache may write."""
        if self._since is not None:
            self._since = None
            if self._wlock is not None:
                self._wlock.release()

    def _commit(self, force: bool = False) -> None:
        """Commit what is written once the transaction has been open long enough (or now)."""
        with self._lock:
            if self._since is not None and self._db is not None and (
                    force or time.monotonic() - self._since >= COMMIT_EVERY):
                try:
                    self._db.commit()
                finally:
                    self._end()

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
                self._commit(force=True)
                self._db.close()
                self._db = None
        while True:
            try:
                self._readers.get_nowait().close()
            except queue.Empty:
                break

    # --- listening to the index passes ----------------------------------------------------------

    def sink(self, key: str, idx):
        """A callable fed every event of a pass: its visible text, kept until the writer takes it
        (none while the writer is behind: it reads the file back when it gets there)."""
        if not self.enabled or len(self._queue) >= HOLD:
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
        with self._block:
            self._rebuilt.add(key)
        self._enqueue(key, idx)

    def extended(self, key: str, idx, change) -> None:
        if change.events:
            with self._block:
                self._changed.setdefault(key, set()).update(change.events)
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
            # (the identity the index keeps: a stat, or for a session kept in a folder of files or
            # as a database row, what its format says stands for it)
            size, mtime_ns, _ = reader.file_identity(path)
        except OSError:
            return False
        # a document's rows stand for its time too: a Wolo folder's session.json is saved again at
        # the same size (its updated_at) whenever a message changes, and only its time says so
        return main is None or main[5] != size or bool(main[6] and main[6] != mtime_ns)

    def catch_up(self, key: str) -> None:
        """Hand one session to the writer, which reads what the passes did not hand over from the
        file (the walker's turn; it waits while the writer has a few sessions queued already).
        Writes stay on the writer's thread: a transaction held open by this thread while it waits
        for the index cache would wait on the cache's writer, which waits on the transaction."""
        idx = self.store.build(key, start=False, keep=False).wait()
        if idx is None:
            return
        self._enqueue(key, idx)
        with self._qlock:
            while len(self._queue) >= BACKLOG and self._writer is not None:
                self._qlock.wait(1.0)

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
            if len(self._queue) >= HOLD and name not in self._queue:
                idx = None  # loaded again when its turn comes (`_write_all`)
            self._queue[name] = (key, idx, gone)
            self._queue.move_to_end(name)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_all, name="fts-writer", daemon=True)
                self._writer.start()
            self._qlock.notify_all()

    def _write_all(self) -> None:
        while True:
            with self._qlock:
                idle = not self._queue
            if idle:
                self._commit(force=True)
                self._merge()
            with self._qlock:
                if not self._queue:
                    self._writer = None
                    self._busy = False
                    self._qlock.notify_all()
                    return
                _, (key, idx, gone) = self._queue.popitem(last=False)
                self._busy = True
                self._qlock.notify_all()  # a walker waiting for room
            try:
                if gone is not None:
                    self._drop(gone)
                else:
                    if idx is None:  # queued while the writer was behind: from the cache
                        idx = self.store.build(key, start=False, keep=False).wait()
                    if idx is not None:
                        self._sync(key, idx)
            except (OSError, LookupError, NotTranscript) as e:  # gone, unreadable: the store says
                log.debug("full-text index of %s skipped: %s", key, e)
            except Exception:
                log.exception("full-text index of %s failed", key or gone)

    def _merge(self) -> None:
        """While nothing else is to be written, merge the index's segments a step at a time
        (each its own short transaction) until they are one: a query reads one b-tree per term
        instead of one per batch of writes, two to four times faster."""
        if self._written < MERGE_AFTER:
            return
        with self._lock:
            if self._db is None:
                return
            db = self._db
            while True:
                with self._qlock:
                    if self._queue:  # work came in: merge later
                        return
                self._begin()
                before = db.total_changes
                try:
                    db.execute(self._sql("INSERT INTO {fts}({fts}, rank) VALUES ('merge', ?)"),
                               (-MERGE_PAGES,))
                    db.commit()
                except sqlite3.Error as e:
                    db.rollback()
                    log.warning("merging the full-text index failed: %s", e)
                    return
                finally:
                    self._end()
                if db.total_changes - before < 2:
                    self._written = 0
                    return

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
            self._changes += 1
            if st is None or self._db is None:
                return
            self._writing(lambda db: (self._delete_rows(db, st[0]), db.execute(
                self._sql("DELETE FROM {sessions} WHERE sid = ?"), (st[0],))))

    def _writing(self, fn):
        """Run writes in the open transaction; on an error, roll it back and reload the state."""
        db = self._db
        self._begin()
        try:
            out = fn(db)
        except BaseException:
            db.rollback()
            self._end()
            self._load_state()
            raise
        self._commit()
        return out

    def _delete_rows(self, db, sid: int) -> None:
        lo, hi = sid << SHIFT, ((sid + 1) << SHIFT) - 1
        rows = db.execute(self._sql("SELECT id, z, eid FROM {text} WHERE id BETWEEN ? AND ?"), (lo, hi))
        while batch := rows.fetchmany(CHUNK):
            self._unindex(db, batch)
        db.execute(self._sql("DELETE FROM {text} WHERE id BETWEEN ? AND ?"), (lo, hi))

    def _unindex(self, db, rows) -> None:
        """Take rows (id, compressed words, event id) out of the full-text index (external
        content: FTS5 forgets a row given the very values it indexed); their stored text stays."""
        db.executemany(self._sql("INSERT INTO {fts}({fts}, rowid, body, eid) VALUES ('delete', ?, ?, ?)"),
                       [(rid, _unz(z), eid) for rid, z, eid in rows])

    def _insert(self, db, rows: list[tuple[int, str, str, str, int]]) -> None:
        """Write rows (id, event id, words, thread, seq): their stored text, with the event's thread
        (NULL for the main one) and place in it, and their full-text entries."""
        db.executemany(self._sql("INSERT INTO {text} (id, eid, z, thread, seq) VALUES (?, ?, ?, ?, ?)"),
                       ((rid, eid, zlib.compress(t.encode("utf-8", "replace"), 1), None if th == "main" else th, seq)
                        for rid, eid, t, th, seq in rows))
        db.executemany(self._sql("INSERT INTO {fts} (rowid, body, eid) VALUES (?, ?, ?)"),
                       ((rid, t, eid) for rid, eid, t, _, _ in rows))
        self._written += len(rows)

    def _sync(self, key: str, idx) -> None:
        """Make the session's rows match its index: append what is new, or start over when the
        file no longer holds what was indexed."""
        with self._lock:
            if self._db is None:
                return
            self._writing(lambda db: self._sync_in(db, key, idx))

    def _sync_in(self, db, key: str, idx) -> None:
        with self._block:
            buf = self._buffers.pop(key, {})
            self._buffered -= sum(len(t) for _, t in buf.values())
            self._overflow.discard(key)
            rebuilt = key in self._rebuilt
            self._rebuilt.discard(key)
            changed = self._changed.pop(key, set())
        path = idx.main
        st = self._state.get(path)
        threads = dict(st[2]) if st else {}
        # (a line rewritten in place to the same length leaves the last event as it was)
        fresh = st is None or rebuilt
        for name, th in list(idx.threads.items()):
            if not _still(threads.get(name), th):
                fresh = True
                break
        if fresh and st is not None:
            self._delete_rows(db, st[0])
            threads = {}
        if st is None:
            cur = db.execute(self._sql("INSERT OR REPLACE INTO {sessions} (path, next, state) "
                                       "VALUES (?, 0, ?)"), (path, b"{}"))
            sid, nxt = cur.lastrowid, 0
        else:
            sid, nxt = st[0], (0 if fresh else st[1])
        if changed and not fresh:
            nxt = self._rewrite(db, idx, sid, nxt, threads, changed)
        pending: list[tuple] = []
        size = 0

        def flush():
            nonlocal pending, size
            if not pending:
                return
            self._step_aside()
            self._begin()
            self._insert(db, pending)
            db.execute(self._sql("UPDATE {sessions} SET next = ?, state = ? WHERE sid = ?"),
                       (nxt, orjson.dumps(threads), sid))
            self._state[path] = (sid, nxt, dict(threads))
            self._changes += 1
            pending, size = [], 0
            self._commit()

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
                for lo in range(need[0], need[-1] + 1, STEP) if need else ():
                    self._step_aside()
                    read.update(self._read(idx, name, lo, min(need[-1] + 1, lo + STEP)))
                for s in range(seq, end):
                    got = buf.get((name, s)) or read.get(s)
                    if got is None:
                        continue
                    eid, words = got
                    if words.strip():
                        pending.append(((sid << SHIFT) | nxt, eid, words, name, s))
                        nxt += 1
                        size += len(words)
                        if len(pending) >= COMMIT_ROWS or size >= COMMIT_CHARS:
                            threads[name] = _mark(th, s + 1)
                            flush()
                seq = end
                threads[name] = _mark(th, seq)
            threads[name] = _mark(th, stop)
        flush()
        if path not in self._state or self._state[path][1:] != (nxt, threads):
            self._begin()
            db.execute(self._sql("UPDATE {sessions} SET next = ?, state = ? WHERE sid = ?"),
                       (nxt, orjson.dumps(threads), sid))
            self._state[path] = (sid, nxt, dict(threads))
            self._changes += 1

    def _step_aside(self) -> None:
        """Before reading events back from a file (a catch-up after a restart reads a whole
        session, a few milliseconds of the interpreter per 10 events) and before writing a batch
        of rows: while pages are being answered, wait a little for them, with what is written
        committed (the cache's writes are not held up meanwhile). A server started with a warm
        cache catches up at once, and its first page shared the processor with that pass; a
        session opened for the first time is written into the full-text index for seconds after
        its page, while its reader searches it."""
        let = getattr(self.store, "let_pages_first", None)
        if let is not None:
            let(before=lambda: self._commit(force=True))

    def _rewrite(self, db, idx, sid: int, nxt: int, threads: dict, changed: set) -> int:
        """Write again the rows of events indexed before whose record changed in place (`changed`:
        (thread, seq)), each in its row — found by its thread and place, which name one event
        whatever the ids say (an event's id names one event of the session only as long as the
        index keeps giving a repeated one another: `SessionIndex._assign_id`) —, a new row for an
        event that had no words before. Returns the session's next row number."""
        lo, hi = sid << SHIFT, ((sid + 1) << SHIFT) - 1
        for name, seq in sorted(changed):
            th = idx.threads.get(name)
            if th is None or seq >= min(len(th), threads.get(name, [0])[0]):
                continue  # (not indexed yet: written with the new events)
            got = self._read(idx, name, seq, seq + 1).get(seq)
            if got is None:
                continue
            eid, words = got
            self._begin()
            old = db.execute(self._sql("SELECT id, z, eid FROM {text} WHERE id BETWEEN ? AND ? AND thread IS ? "
                                       "AND seq = ?"), (lo, hi, None if name == "main" else name, seq)).fetchall()
            self._unindex(db, old)
            db.executemany(self._sql("DELETE FROM {text} WHERE id = ?"), [(rid,) for rid, _, _ in old])
            if words.strip():
                rid = old[0][0] if old else (sid << SHIFT) | nxt
                nxt += 0 if old else 1
                self._insert(db, [(rid, eid, words, name, seq)])
        return nxt

    def _read(self, idx, thread: str, start: int, stop: int) -> dict[int, tuple[str, str]]:
        """Events [start, stop) of a thread read back from its file, as (id, text) by seq."""
        from .timeline import load_events

        th = idx.threads[thread]
        out = {}
        try:
            events = load_events(idx, thread, start, stop)
            # the file is opened only for a string cut from a huge record (most sessions have
            # none; a session read as a folder document or a database row never has); through
            # files.open_file, as every read: a session row of OpenCode's database is no file
            with files.confined(idx.confinement), ExitStack() as opened:
                read = None

                def expand(cut: CutStr) -> str:
                    nonlocal read
                    if read is None:
                        read = text.expander(opened.enter_context(files.open_file(th.path)))
                    return read(cut)

                for i, ev in enumerate(events):
                    out[start + i] = (ev.id, self._text(ev, expand))
        except OSError as e:
            log.warning("full-text index: cannot read %s: %s", th.path, e)
        return out

    # --- progress -----------------------------------------------------------------------------

    def coverage(self, refs) -> dict:
        """{"done", "total", "complete"}: sessions whose rows are current, of those served."""
        sizes = self._views()[1]
        done = sum(1 for r in refs if sizes.get(r.path) == r.size)
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
        by_sid = self._views()[0]
        counts: dict[int, int] = {}
        firsts: dict[int, list[int]] = {}  # a session's first matching rows
        whole = True
        # matching events in rowid order, so a session's come together: counted per session until
        # the budget is spent (a word in every event of 10,000 sessions is half a million rows)
        began = time.monotonic()
        stop = began + COUNT_BUDGET
        cur = db.execute(self._sql("SELECT rowid FROM {fts} WHERE {fts} MATCH ?"), (query,))
        setup = time.monotonic() - began  # FTS5 set the query up and found the first row
        while rows := cur.fetchmany(COUNT_BATCH):
            ids = [r for (r,) in rows]
            sids = [r >> SHIFT for r in ids]  # ascending: a session's rows come together
            for sid, n in Counter(sids).items():
                had = counts.get(sid, 0)
                counts[sid] = had + n
                if had < snippets:
                    i = bisect_left(sids, sid)
                    firsts.setdefault(sid, []).extend(ids[i : i + min(n, snippets - had)])
            if len(rows) < COUNT_BATCH:
                break
            if time.monotonic() > stop:
                whole = cur.fetchone() is None
                break
        cur.close()
        # what one more statement costs (FTS5 setting the query up), in matching rows read
        per_row = (time.monotonic() - began - setup) / max(1, sum(counts.values()))
        setup_rows = setup / max(per_row, 1e-9)
        every = dict(counts)  # matching rows per session, shown or not (the snippets' gaps)
        for sid in list(counts):
            path = by_sid.get(sid)
            if path is None or (paths is not None and path not in paths):
                del counts[sid]
        events = sum(counts.values())  # past the budget a floor too: counting every match of a
        # word in every event of 10,000 sessions is a tenth of a second more
        ranked = order == "relevance" and whole and events <= RANK_LIMIT
        best: dict[int, float] = {}
        if ranked and counts:
            tops: dict[int, list[int]] = {}  # a session's best rows
            for rowid, rank in db.execute(self._sql("SELECT rowid, rank FROM {fts} WHERE {fts} MATCH ? "
                                                    "ORDER BY rank"), (query,)):
                sid = rowid >> SHIFT
                if sid in counts:
                    if sid not in best:
                        best[sid] = rank
                    top = tops.setdefault(sid, [])
                    if len(top) < snippets:
                        top.append(rowid)
            firsts = tops
            order_key = lambda sid: (best.get(sid, 0.0), -counts[sid])  # noqa: E731
        elif order == "recent":
            mtime = {sid: _mtime(by_sid[sid]) for sid in counts}
            order_key = lambda sid: -mtime[sid]  # noqa: E731
        else:
            order_key = lambda sid: -counts[sid]  # noqa: E731
        sids = sorted(counts, key=order_key)
        start = (max(1, page) - 1) * per_page
        shown = sids[start : start + per_page]
        snips = self._snippets(db, query, [firsts.get(sid, []) for sid in shown], every,
                               setup_rows)
        results = [Result(by_sid[sid], counts[sid], best.get(sid),
                          [snips[r] for r in firsts.get(sid, ()) if r in snips]) for sid in shown]
        return Found(query, results, len(counts), events, ranked, whole=whole)

    def _snippets(self, db, query: str, shown: list[list[int]], every: dict[int, int],
                  gap: float) -> dict[int, Hit]:
        """The snippets of the shown sessions' rows. A statement reads every matching row of a
        rowid range, so sessions whose rows are near one another share one, and a statement of its
        own starts only where more than `gap` matching rows (what setting up a statement costs, in
        rows: FTS5 expands a prefix query into the list of every matching row per statement, a
        tenth of a second for a common prefix) lie between two shown sessions."""
        rows = sorted(r for rs in shown for r in rs)
        if not rows:
            return {}
        sids = sorted(every)
        before, n = {}, 0  # matching rows in the sessions before each
        for sid in sids:
            before[sid] = n
            n += every[sid]
        gap = max(gap, SNIPPET_GAP)
        runs = [[rows[0]]]
        for r in rows[1:]:
            a, b = runs[-1][-1] >> SHIFT, r >> SHIFT
            if b != a and before[b] - before[a] - every[a] > gap:
                runs.append([r])
            else:
                runs[-1].append(r)
        out = {}
        for run in runs:
            wanted = ",".join(str(int(r)) for r in run)
            # `+rowid` keeps the list away from FTS5 (which would run the query once per value);
            # the range is what FTS5 sees
            sql = self._sql(f"SELECT rowid, eid, snippet({{fts}}, 0, '{MARK[0]}', '{MARK[1]}', '…', "
                            "24) FROM {fts} WHERE {fts} MATCH ? AND rowid BETWEEN ? AND ? "
                            f"AND +rowid IN ({wanted})")
            out.update((rowid, Hit(eid, snip))
                       for rowid, eid, snip in db.execute(sql, (query, run[0], run[-1])))
        return out


def _mark(th, done: int) -> list:
    """What a thread's rows stand for: [events in, offset and id of the last, inode, path, size
    of the main file when read, mtime of a document, length of the last]."""
    last = done - 1
    return [done, th.offsets[last] if done else -1, th.ids[last] if done else "", th.ino,
            th.path, th.size, th.mtime_ns if th.mode == "document" and not _read_on(th) else 0,
            th.lengths[last] if done else -1]


def _read_on(th) -> bool:
    """Whether a document thread is read on as it grows, its events before kept, rather than
    read again whole when it changes: a JSONL file of wrappers (`grows`), a session kept in a
    database's rows (index.py `_read_rows`: "rows" carried; a row of it changed in place is
    in the refresh's `change.events`, which `extended` keeps for the writer)."""
    return grows(th) or "rows" in th.carried


def _still(mark: list | None, th) -> bool:
    """Whether a thread's file still holds what its rows were made from."""
    if mark is None:
        return True  # nothing indexed of it yet
    done, offset, eid, ino, path, size, doc_mtime = mark[:7]
    if path != th.path or ino != th.ino or done > len(th):
        return False
    if th.mode == "document" and not _read_on(th) and doc_mtime != th.mtime_ns:
        return False  # a document is rewritten whole (one read on as it grows: `_read_on`)
    # the last event's length too: a last line shown cut (the writer paused mid-line) is the same
    # event, at the same offset, once the writer finished it — with its whole text now
    # (marks written before lengths were kept have none)
    return done == 0 or (th.ids[done - 1] == eid and th.offsets[done - 1] == offset and (
        len(mark) < 8 or th.lengths[done - 1] == mark[7]))


def _mtime(path: str) -> float:
    try:
        return reader.file_identity(path)[1] / 1e9  # (a database row's: its newest row's time)
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
