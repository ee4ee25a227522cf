"""The on-disk index cache: one SQLite file in the user cache directory.

A row per session holds the index as one orjson blob, the summary on its own (so the session list
reads summaries only), and the identity (size, mtime, inode) of every file the index was built
from. A row is used only while its identity and `INDEX_VERSION` match; a grown file is extended from
the cached offsets by the index itself. The cache is an accelerator, never a source of truth: a
corrupt, locked or unwritable cache is logged and bypassed, never shown to the user.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sqlite3
import tempfile
import threading
from pathlib import Path

import orjson

from .index import INDEX_VERSION, SessionIndex, summary_dump

log = logging.getLogger(__name__)

COPY_CHUNK = 256 << 10  # bytes of a dumped index copied into its row at a time (`save_index`)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    path TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    files BLOB NOT NULL,
    summary BLOB NOT NULL,
    data BLOB NOT NULL
)
"""


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "session-viewer"


class IndexCache:
    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder else default_dir()
        self.path = self.folder / "index.sqlite"
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self.enabled = True
        self._open_timeout = 2.0  # seconds to wait for another process's lock
        # held by whoever else in this process writes to the database (the full-text index) for
        # as long as its transaction is open: a save waits here for its turn, where SQLite's busy
        # timeout would give up
        self.write_lock = threading.Lock()

    def open(self) -> None:
        """Open the database now: a server does it at start-up, so that its first page does not
        pay for it (a busy or broken cache is dealt with as on any use)."""
        with self._lock:
            self._conn()

    def _conn(self) -> sqlite3.Connection | None:
        if not self.enabled:
            return None
        if self._db is None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._db = self._open()
            except sqlite3.OperationalError as e:
                # busy or locked by another process: not broken, so try again next time
                log.warning("index cache %s is busy (%s); skipping it this time", self.path, e)
                return None
            except (OSError, sqlite3.Error) as e:
                log.warning("index cache disabled: cannot open %s: %s", self.path, e)
                self.enabled = False
                return None
        return self._db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=self._open_timeout)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # a cache may lose its last writes in a power cut, never its consistency: no fsync on
            # every commit (the walker writes thousands of small sessions in a row)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            db.execute("SELECT count(*) FROM sessions").fetchone()
            return db
        except sqlite3.OperationalError:
            db.close()
            raise  # locked or busy: another process is using a good cache, never delete it
        except sqlite3.DatabaseError as e:
            db.close()
            log.warning("index cache %s is corrupt (%s): discarding it", self.path, e)
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(str(self.path) + suffix)
                except FileNotFoundError:
                    pass
            db = sqlite3.connect(self.path, check_same_thread=False, timeout=2)
            db.execute(_SCHEMA)
            return db

    def _run(self, what: str, fn):
        with self._lock:
            db = self._conn()
            if db is None:
                return None
            try:
                return fn(db)
            except (sqlite3.Error, orjson.JSONDecodeError, ValueError, KeyError, TypeError) as e:
                log.warning("index cache: %s failed (%s); continuing without it", what, e)
                if isinstance(e, sqlite3.DatabaseError) and not isinstance(e, sqlite3.OperationalError):
                    self._reset(db)
                return None

    def _reset(self, db: sqlite3.Connection) -> None:
        try:
            db.close()
        except sqlite3.Error:
            pass
        self._db = None
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def load(self, main: str) -> tuple[SessionIndex, list] | None:
        """The cached index of a session and the file identities it was built from."""

        def q(db):
            row = db.execute("SELECT version, files, data FROM sessions WHERE path = ?",
                             (main,)).fetchone()
            if row is None or row[0] != INDEX_VERSION:
                return None
            return SessionIndex.load(row[2]), orjson.loads(row[1])

        return self._run("load", q)

    def summaries(self, mains: list[str]) -> dict[str, tuple[list, dict]]:
        """path → (files, summary) for every cached session among `mains`."""

        def q(db):
            out = {}
            for i in range(0, len(mains), 500):
                chunk = mains[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for path, version, files, summary in db.execute(
                        f"SELECT path, version, files, summary FROM sessions WHERE path IN ({marks})",
                        chunk):
                    if version == INDEX_VERSION:
                        out[path] = (orjson.loads(files), orjson.loads(summary))
            return out

        return self._run("list", q) or {}

    def save(self, main: str, blob: bytes | list[bytes], files: list, summary, *,
             size: int | None = None, more=()) -> None:
        """Store a session's dumped index (`SessionIndex.dump()`, or the parts of
        `SessionIndex.dump_parts()`) with its files' identities. Parts are written one after the
        other into the row (SQLite's incremental blob I/O): a big session's index is never held
        twice more, joined and then copied by SQLite as a bound value. `more`: parts made as they
        are written (`save_index`), `size` the bytes of all."""
        parts = [blob] if isinstance(blob, (bytes, bytearray)) else blob
        size = sum(map(len, parts)) if size is None else size

        def q(db):
            with db:
                row = db.execute("INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, zeroblob(?))",
                                 (main, INDEX_VERSION, orjson.dumps(files),
                                  orjson.dumps(summary_dump(summary)),
                                  size)).lastrowid
                with db.blobopen("sessions", "data", row) as out:
                    for part in itertools.chain(parts, more):
                        out.write(part)

        with self.write_lock:
            self._run("save", q)

    def save_index(self, idx: SessionIndex, hold=None) -> None:
        """Store a session's index: dumped (under `hold`, a context manager that keeps the index
        from growing meanwhile: its session's lock) into a file of the cache's folder a column at a
        time, then copied from there into its row a chunk at a time. What is held is one column
        and one chunk, never the whole dump (`save` holds its parts: at the end of a 200 MB
        document's pass, some 85 MB more than the index itself)."""
        if not self.enabled:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            spill = tempfile.TemporaryFile(dir=self.folder, prefix="dump-")
        except OSError as e:
            log.warning("index cache: cannot write beside %s (%s); continuing without it", self.path, e)
            return
        with spill:
            with hold if hold is not None else contextlib.nullcontext():
                head, size = idx.dump_into(spill)
                files, summary = idx.files(), idx.summary
            spill.seek(0)

            def rest():
                while chunk := spill.read(COPY_CHUNK):
                    yield chunk

            self.save(idx.main, [head], files, summary, size=len(head) + size, more=rest())

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
