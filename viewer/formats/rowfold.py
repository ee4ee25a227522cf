"""Row-sessions read on as their database grows, not read again whole on every write.

A session kept in the rows of a database (goose_db.py, studio_db.py) is read as one document (its
format's `folder_document`) that the format makes records of (`records`). While the program
writes, rows are appended: a message, a tool's result, a traced model call. A `RowFold` is such a
session as read so far — its document, holding its database module's marks of the rows read
(`_read`), and its records — and `fold(path)` brings it up to the database as it is now, much as
`wrapped.Fold` reads a growing JSONL file of wrappers on:

* the database module's `document_on(path, doc)` reads only the rows past the marks, or says None
  when a row before them changed or went (a conversation compacted, a message streamed further):
  the session is then read whole — a new `gen`, unless the records read before are all still
  there as they were, but for the session's row and the last (`_kept`: Goose saved a
  conversation again whole, its messages under new row ids): then it is read on from there;
* the records are made again from the document (Python over what is held: no row read again) and
  compared with those held. They keep their places; the first (the session's own row: its name,
  status and counts move with every write) may change, and so may others, in place (a reply's
  usage, known once its ledger row or span came): such a record's `versions` entry moves on with
  the fold's `version`, and `changed_since(v)` gives the records as they were at version v, for
  a reader that went on from there (the index: it tells a change it can take in place from one
  it must read the session again for). Fewer records than before is a read anew.

The index (index.py) and the pages (timeline.py) read the same fold, so a page draws the records the
index counted; either falls back to reading the session whole when its fold was let go (FOLDS_KEPT).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .. import reader

FOLDS_KEPT = 32  # row-sessions whose fold is kept (the ones open, or written lately)
HISTORY = 512  # changes in place remembered for readers that went on from an earlier version


class RowFold:
    """A row-session as read so far: `doc`, `records`, `gen` (a whole read), `version` (moved by
    every read on that changed a record in place), and the records as they were before each such
    change (`_before`: (version, seq, record as it was))."""

    def __init__(self, path: str, adapter, doc: dict, ident: tuple):
        self.path, self.adapter = path, adapter
        self.lock = threading.Lock()  # held by whoever reads on (the index's pass, a page)
        self._whole(doc, ident)

    def _whole(self, doc: dict, ident: tuple, records: list | None = None) -> None:
        from . import detect  # (at call time: detect imports the formats)

        self.doc, self.ident = doc, ident
        self.records: list = detect.records_read(self.adapter, doc) if records is None else records
        self.gen = secrets.randbits(48) or 1
        self.version = 0
        self.versions: dict[int, int] = {}
        self._before: list[tuple[int, int, Any]] = []
        self._forgot = 0  # the latest version whose changes are no longer in `_before`
        if records is None:  # (what reading costs, for tests: `read_on` counts its own)
            self.whole_reads = getattr(self, "whole_reads", 0) + 1

    def changed_since(self, version: int) -> dict[int, Any] | None:
        """{seq: the record as it was at `version`} of the records changed in place since then;
        None when those changes are no longer all remembered (HISTORY)."""
        if version > self.version or version < self._forgot:
            return None
        out: dict[int, Any] = {}
        for v, seq, rec in self._before:
            if v > version and seq not in out:
                out[seq] = rec
        return out

    def read_on(self) -> None:
        """Bring the fold up to the database as it is now (`lock` held)."""
        ident = reader.file_identity(self.path)
        if ident == self.ident:
            return
        doc = self.adapter.ROW_STORE.document_on(self.path, self.doc) if _clean(self.doc) else None
        from . import detect

        if doc is None:
            doc = _whole_document(self.path)
            if doc is None:
                raise FileNotFoundError(2, "this session is no longer in its database", self.path)
            self.whole_reads += 1
            records = detect.records_read(self.adapter, doc)
            if not _kept(self.records, records):
                self._whole(doc, ident, records)
                return
            # read whole, its records before as they were (the program wrote its rows again as
            # they were: a Goose conversation saved again whole, the same messages): read on
        else:
            records = detect.records_read(self.adapter, doc)
        old = self.records
        if len(records) < len(old):
            self._whole(doc, ident, records)
            return
        changed = [i for i in range(len(old)) if not _same(old[i], records[i])]
        if changed:
            self.version += 1
            for i in changed:
                self.versions[i] = self.version
                self._before.append((self.version, i, old[i][1]))
            if len(self._before) > HISTORY:
                self._forgot = self._before[-HISTORY - 1][0]
                del self._before[:-HISTORY]
        self.doc, self.records, self.ident = doc, records, ident


def _kept(old: list, new: list) -> bool:
    """Whether a session read whole again holds the records read before, in their places, but for
    its first (the session's own row, which moves with every write) and its last (a message that
    went on; the index tells whether it can take such a change in place): then what was read is
    read on, not read anew (no new `gen`: an open page is not reloaded)."""
    if len(new) < len(old):
        return False
    return all(_same(old[i], new[i]) for i in range(1, len(old) - 1))


def _same(a: tuple, b: tuple) -> bool:
    """Whether two records (path, value) are the same, what rides on a value too (a Studio Msg's
    model call and the other spans traced for it, agentscope_studio: `_Traced`)."""
    if a is b:
        return True
    return a[0] == b[0] and a[1] == b[1] and getattr(a[1], "call", None) == getattr(b[1], "call", None) \
        and getattr(a[1], "spans", ()) == getattr(b[1], "spans", ())


def _clean(doc: dict) -> bool:
    """Whether a document can be read on: read whole, with nothing said of reading it (a locked or
    damaged database, a log left unread are read whole again)."""
    return isinstance(doc.get("_read"), dict) and not any(
        isinstance(doc.get(k), str) for k in ("unreadable", "stale_wal"))


def _whole_document(path: str) -> dict | None:
    from . import detect

    doc = detect.read_document(path)
    return doc if isinstance(doc, dict) else None


_folds: OrderedDict = OrderedDict()
_folds_lock = threading.Lock()


def row_adapter(adapter, path: str | Path) -> bool:
    """Whether `path` is a row-session of the database `adapter` reads (its ROW_STORE)."""
    store = getattr(adapter, "ROW_STORE", None)
    return store is not None and hasattr(store, "document_on") and store.is_row(str(path))


def fold(path: str | Path, adapter) -> RowFold | None:
    """The fold of a row-session, brought up to its database as it is now: the one kept, read on,
    or a new one read whole. None when `path` is not a row-session of `adapter`'s database or the
    session cannot be read as one (gone: reading its path says why). Raises OSError as reading
    the database does."""
    if not row_adapter(adapter, path):
        return None
    key = (str(path), adapter.NAME)
    with _folds_lock:
        found = _folds.get(key)
        if found is not None:
            _folds.move_to_end(key)
    if found is not None:
        with found.lock:
            try:
                found.read_on()
                return found
            except OSError:  # (gone, or its identity cannot be read now: read as any document)
                with _folds_lock:
                    _folds.pop(key, None)
                return None
    try:
        ident = reader.file_identity(str(path))
    except OSError:
        return None
    doc = _whole_document(str(path))
    if doc is None:
        return None
    made = RowFold(str(path), adapter, doc, ident)
    with _folds_lock:
        _folds[key] = made
        while len(_folds) > FOLDS_KEPT:
            _folds.popitem(last=False)
    return made


def kept(path: str | Path, adapter) -> RowFold | None:
    """The fold kept for a row-session, as it is (not read on), or None."""
    with _folds_lock:
        return _folds.get((str(path), getattr(adapter, "NAME", None)))


def forget() -> None:
    """Let every fold go (tests: a new process)."""
    with _folds_lock:
        _folds.clear()

