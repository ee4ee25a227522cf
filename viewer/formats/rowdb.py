"""Databases whose rows are sessions, read without ever writing: what OpenCode's `opencode.db`
(opencode_db.py), Goose's `sessions.db` (goose_db.py) and AgentScope Studio's `database.sqlite`
(studio_db.py) share.

Each program keeps its sessions in one SQLite database (OpenCode and Goose in WAL mode, Studio in
rollback-journal mode). A session there is named by a path below its database file,
`<folder>/<name>.db/<session id>` (or `<name>.sqlite/…`), which no file system holds
(`split`); each program's module owns what its tables mean, and this one owns how they are read:

* `Reader`: one short read transaction. A WAL database without a `-wal` file (no program has it
  open) is opened `immutable` (a read-only open of a WAL database would otherwise create `-wal`
  and `-shm` files beside it, or fail in a read-only folder); with one, or in rollback mode,
  `mode=ro`, in a transaction closed at once (a WAL reader never blocks the writer). When the
  `-shm` file is missing and cannot be made (a read-only folder), the database file alone is read
  and `stale_wal` says that the program's latest writes are not shown. The database must be a
  regular file inside the served roots (a symlink out of them is refused as any file is). A
  subclass names its program (`PROGRAM`, for the reasons a user reads) and the tables and columns
  it reads (`NEEDED`, `OPTIONAL`); `check` gives their columns, or Unreadable saying why this is not
  the program's database, remembered while the schema is the same.
* `remembered(what, db, make)`: a value kept while the database and its `-wal` file are
  unchanged (a session's identity, a database's list of sessions).
* `looked(what, db, sid, reader, changes, read)`: one session's value (its identity) from a look
  at every session of the database, the sessions whose rows changed since the last look read
  again and the others' values carried (a database being written is looked at again every
  second: not every session read each time).
* `descendants(r, sid, depth, query)`: the sessions below one (its sub-agents', and theirs),
  breadth first, whatever the program calls its parent column.
* `session_hooks(module, unreadable)`: the format hooks (`claims_file`, `folder_document`,
  `folder_identity`) of a format whose sessions are all rows of one database (Goose's, Studio's).
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable

from .. import compressed, files

ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")  # a session id (the only ids joined into a path)
TIMEOUT = 0.5  # seconds a read waits for a lock (only a WAL recovery or a rollback-mode writer)


Unreadable = compressed.Unreadable  # the database cannot be read as its program's (str() says why)


def split(path: str, is_store: Callable[[str], bool]) -> tuple[str, str] | None:
    """(database, session id) of a row-session's path whose database name `is_store`, else None —
    told from the name alone (it is asked of every path whose identity is taken)."""
    if ".db" + os.sep not in path and ".sqlite" + os.sep not in path:
        return None
    db, sid = os.path.split(path)
    if not is_store(os.path.basename(db)) or not ID.fullmatch(sid):
        return None
    return db, sid


def located(path: str | os.PathLike, is_store: Callable[[str], bool]) -> tuple[str, str] | None:
    """(database, session id) of a row-session's path whose database is a file, else None."""
    found = split(os.fspath(path), is_store)
    return found if found is not None and os.path.isfile(found[0]) else None


def is_row(path: str | os.PathLike, is_store: Callable[[str], bool]) -> bool:
    """Whether a path names a row-session of a database file whose name `is_store`."""
    return located(path, is_store) is not None


def row_path(db: str, session_id: str) -> str:
    """The path that names one row-session of a database (no file system holds it)."""
    return os.path.join(db, session_id)


def paths(is_store: Callable[[str], bool]) -> tuple:
    """A database module's path functions for its own file name (what `formats.ROW_STORES`
    asks of each): (store_of, split, located, is_row), each taking the path alone."""
    return tuple(partial(f, is_store=is_store) for f in (store_of, split, located, is_row))


def session_hooks(module: Any, unreadable: Callable[[str], dict]) -> tuple:
    """The hooks a format whose sessions are all rows of its program's database offers
    (formats/__init__), bound to that database's module (`is_row`, `document`, `identity`):

    * `claims_file(path, head)`: a path below the database's file (nothing else is read);
    * `folder_document(path)`: the row read as one document (`module.document`), None when the
      path is no such row or the session is gone from the database (reading the path says so),
      and `unreadable(why)` — the format's empty document saying why — when the database cannot be
      read now (locked, damaged);
    * `folder_identity(path)`: `module.identity`."""
    def claims_file(path: Path, head: bytes) -> bool:
        return module.is_row(str(path))

    def folder_document(path: Path) -> dict | None:
        if not module.is_row(str(path)):
            return None
        try:
            return module.document(str(path))
        except FileNotFoundError:
            return None
        except OSError as e:
            return unreadable(str(e))

    return claims_file, folder_document, module.identity


def store_of(path: str, is_store: Callable[[str], bool]) -> str | None:
    """The database a watched file belongs to (the database itself or its `-wal`), else None."""
    name = os.path.basename(path)
    if name.endswith("-wal"):
        path, name = path[:-4], name[:-4]
    return path if is_store(name) else None


class Reader:
    """One short read transaction on a database: `with Reader(db) as r: r.all(sql, args)`."""

    PROGRAM = "the program"
    NEEDED: dict[str, set[str]] = {}  # the tables its sessions need, with the columns the queries read
    OPTIONAL: tuple[str, ...] = ()  # tables read when they are there

    def __init__(self, db: str):
        self.db = db
        self.stale_wal: str | None = None  # why the -wal file's writes could not be read

    def __enter__(self) -> "Reader":
        reason = files.refusal(self.db)  # a regular file, inside the served roots
        if reason:
            raise files.Refused(self.db, reason)
        real = files.real_path(self.db)
        wal = os.path.exists(real + "-wal")
        try:
            # (a WAL database no program has open is whole in its file; one in rollback mode,
            # a fallback on file systems without WAL, may be mid-write: read with locks)
            self._begin(real, immutable=not wal and wal_mode(self.db))
        except sqlite3.OperationalError as e:
            self.__exit__()
            if not wal or "unable to open" not in str(e):
                raise self.unreadable(e) from e
            # the -shm file is missing and cannot be made here (a read-only folder)
            self.stale_wal = (f"{os.path.basename(self.db)}-wal could not be read ({e}): what "
                              f"{self.PROGRAM} wrote since its last checkpoint is not shown")
            try:
                self._begin(real, immutable=True)
            except sqlite3.Error as e2:
                self.__exit__()
                raise self.unreadable(e2) from e2
        except sqlite3.Error as e:
            self.__exit__()
            raise self.unreadable(e) from e
        return self

    def _begin(self, real: str, immutable: bool) -> None:
        self.con = connect(real, immutable)
        self.con.execute("BEGIN")
        self.con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # the snapshot is taken

    def __exit__(self, *exc) -> None:
        con, self.con = getattr(self, "con", None), None
        if con is not None:
            con.close()  # (the transaction ends with it: nothing was written)

    def all(self, sql: str, args: tuple = ()) -> list:
        try:
            return self.con.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise self.unreadable(e) from e

    def columns(self, table: str) -> list[str]:
        return [r[1] for r in self.all(f"PRAGMA table_info({table})")]

    def check(self) -> dict[str, list[str]]:
        """The columns of the program's tables; Unreadable when this is not its database.
        (Remembered while the schema is the same: asked on every read.)"""
        version = self.all("PRAGMA schema_version")[0][0]
        key = (type(self), self.db, os.stat(self.db).st_ino, version)
        known = _schemas.get(key)
        if known is None:
            try:
                known = self._check()
            except Unreadable as e:
                known = e.reason
            if len(_schemas) > 64:
                _schemas.clear()
            _schemas[key] = known
        if isinstance(known, str):
            raise Unreadable(self.db, known)
        return known

    def _check(self) -> dict[str, list[str]]:
        """The columns of `NEEDED`'s and `OPTIONAL`'s tables (an optional one missing has none);
        Unreadable when a needed table or column is not there."""
        tables = {t: self.columns(t) for t in (*self.NEEDED, *self.OPTIONAL)}
        missing = [t for t in self.NEEDED if not tables[t]]
        if missing and self.stale_wal:  # (its tables may all be in the log still)
            raise Unreadable(self.db, f"{self.PROGRAM}'s SQLite database: " + self.stale_wal)
        if missing:
            raise Unreadable(self.db, f"a SQLite database without {self.PROGRAM}'s "
                                      + ", ".join(missing) + " table" + "s" * (len(missing) > 1))
        for table, needed in self.NEEDED.items():
            lacking = needed - set(tables[table])
            if lacking:
                raise Unreadable(self.db, f"{self.PROGRAM}'s {table} table lacks "
                                          f"{', '.join(sorted(lacking))}: a layout this viewer does not know")
        return tables

    def unreadable(self, e: sqlite3.Error) -> Unreadable:
        text = str(e)
        if "locked" in text or "busy" in text:
            why = "the database is locked by another program; try again in a moment"
        elif "not a database" in text or "malformed" in text or "corrupt" in text:
            why = f"not a readable SQLite database ({text}): damaged, or not a database"
        else:
            why = f"the database cannot be read ({text})"
        return Unreadable(self.db, f"{self.PROGRAM}'s SQLite database: " + why)


def wal_mode(db: str) -> bool:
    """Whether the database file's header says WAL mode (its read and write versions are 2)."""
    try:
        head = files.read_file(db, 20)
    except OSError:
        return False
    return head[:16] == b"SQLite format 3\x00" and head[18:20] == b"\x02\x02"


# (reader class, database, inode, schema_version) → its tables' columns, or why it is not the
# program's
_schemas: dict[tuple, dict | str] = {}


def connect(real: str, immutable: bool) -> sqlite3.Connection:
    uri = Path(real).as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    con = sqlite3.connect(uri, uri=True, timeout=TIMEOUT, isolation_level=None,
                          check_same_thread=False)
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    return con


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def descendants(r: Reader, sid: str, depth: int, query: str) -> list[tuple]:
    """The rows of the sessions below session `sid` (its sub-agents', and theirs), breadth first,
    `depth` levels down: `query` selects `(id, parent id, …)` of the sessions whose parent is one
    of `{marks}`. A row whose id no path can name, or seen already, is left out."""
    out: list[tuple] = []
    seen, frontier = {sid}, [sid]
    for _ in range(depth):
        if not frontier:
            break
        below = []
        for row in r.all(query.format(marks=", ".join("?" * len(frontier))), tuple(frontier)):
            cid = row[0]
            if not isinstance(cid, str) or not ID.fullmatch(cid) or cid in seen:
                continue
            seen.add(cid)
            out.append(tuple(row))
            below.append(cid)
        frontier = below
    return out


# --- remembered while the database is unchanged --------------------------------------------------


def state(db: str) -> tuple:
    """What changes whenever the program writes: the database file and its -wal file."""
    st = os.stat(db)
    try:
        w = os.stat(db + "-wal")
        wal = (w.st_size, w.st_mtime_ns, w.st_ino)
    except OSError:
        wal = None
    return st.st_size, st.st_mtime_ns, st.st_ino, wal


memo: dict[tuple, tuple[tuple, Any]] = {}
memo_lock = threading.Lock()


RACY_NS = 100_000_000  # a database written this close before it was read is read again next time
SETTLED_NS = 5_000_000_000  # a value made this long after the database's last write is kept…
RECHECK_NS = 1_000_000_000  # …one made sooner is made again when it is older than this


def remembered(what: tuple, db: str, make):
    """`make()`, kept under `what` (which names the database) while the database is unchanged.
    Not kept when the database (or its `-wal`) was written just before: a commit writes the log
    before it makes the write visible to readers, so a read in between sees the log's new size and
    time with the data of before — kept, that would stand for the new data until the next write
    (a live session's last row unseen). The file times are the clock's ticks, hence the margin;
    and a writer held up between the two (a loaded machine) may take longer than it, so a value
    made within SETTLED_NS of the last write is kept for RECHECK_NS at most: a row read late is
    seen a second later, not at the next write."""
    now = state(db)
    newest = max(now[1], now[3][1] if now[3] else 0)
    with memo_lock:
        hit = memo.get(what)
    began = time.time_ns()
    if hit is not None and hit[0] == now and (hit[2] - newest > SETTLED_NS or began - hit[2] < RECHECK_NS):
        return hit[1]
    value = make()
    keep({what: value}, now, began)
    return value


def keep(values: dict, now: tuple, began: int, racy: bool = False) -> None:
    """Keep values ({what: value}) made from the database in state `now` (`state`), their making
    begun at `began` (time.time_ns()), as `remembered` keeps its own: not when the database was
    written just before, unless `racy` (values the caller would otherwise make again at once, by
    the hundred: they are still made again a second later, `RECHECK_NS`)."""
    newest = max(now[1], now[3][1] if now[3] else 0)
    with memo_lock:
        if len(memo) > 20_000:
            memo.clear()
        if racy or began - newest > RACY_NS:
            memo.update({what: (now, value, began) for what, value in values.items()})
        else:
            for what in values:
                memo.pop(what, None)


# --- every session's value, read again only where rows changed -----------------------------------

_looks: dict[tuple, dict] = {}  # (what, database) → the last look: its state, marks and values


def snapshot(reader: type) -> Callable:
    """`within(db, fn)`: fn(r) over one read transaction of a database, with `reader` (a Reader)."""
    def within(db: str, fn: Callable):
        with reader(db) as r:
            return fn(r)
    return within


BURST = 3  # sessions asked for one by one in one state of a database before a look reads all


def looked(what: tuple, db: str, sid: str, within: Callable, changes: Callable, read: Callable):
    """The value `read(r, sid)` of one session (its identity), from a look at the database's
    sessions, kept (`keep`, with every value the look holds) for `remembered` to give while the
    database is unchanged. The list and the walker ask of every session, and a database written
    within the last seconds is looked at every second: a look reads again only the sessions it
    holds whose rows changed since the last one — `changes(r, marks)`: (those sessions' ids, the
    marks of now), or None when it cannot tell (rows went back); `changes(r, None)`: (every
    session's id, the marks), all over one snapshot (`within(db, fn)`: `snapshot`, or a format's
    own reading) — and carries the others' values. A session it does not hold is read when it is
    asked for; more than BURST asked one by one in one state of the database, and the look reads
    every session (the list asks of all: one connection, not one each). The first look made once
    the database has been quiet for SETTLED_NS reads every session it holds again (its values
    are kept for good: a row rewritten in place, which no mark tells, is seen then). A session the look cannot
    read is its exception, raised when it is asked for."""
    key = (what, db)
    now = state(db)
    newest = max(now[1], now[3][1] if now[3] else 0)
    began = time.time_ns()
    with memo_lock:
        last = _looks.get(key)
    if last is not None and last["state"] == now and began - last["made"] < RECHECK_NS:
        if sid in last["values"]:
            return _given(last["values"][sid])  # (the list asks of every session in one go)
        last["misses"] += 1
        every = last["misses"] > BURST
    else:
        every = False
    # (read again whole — what it holds — once the database has settled: not again while it stays so)
    fresh = last is None or last["ino"] != now[2] or (
        began - newest > SETTLED_NS and not last["made"] - newest > SETTLED_NS)

    def look(r):
        got = None if fresh or every else changes(r, last["marks"])
        held = dict(last["values"]) if last is not None and not every else {}
        if got is None:
            names, marks = changes(r, None)
            names = set(names) if every else set(held)
            values: dict = {}
        else:
            names, marks = got
            values = held
            names = set(names) & set(held)
        for name in names | ({sid} - set(values)):
            try:
                values[name] = read(r, name)
            except (OSError, Unreadable) as e:
                values[name] = e
        return marks, values
    marks, values = within(db, look)
    with memo_lock:
        if len(_looks) > 64:
            _looks.clear()
        misses = last["misses"] if last is not None and last["state"] == now and not every else 1
        _looks[key] = {"state": now, "ino": now[2], "made": began, "marks": marks, "values": values,
                       "misses": misses}
    keep({(*what, name): v for name, v in values.items() if not isinstance(v, BaseException)}, now, began,
         racy=True)
    return _given(values[sid])


def _given(value):
    if isinstance(value, BaseException):
        raise value
    return value
