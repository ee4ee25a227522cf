"""Compressed transcripts (`rollout-….jsonl.zst`, any `*.jsonl`, `*.ndjson` or `*.json` compressed with
zstd or gzip: `.zst` / `.gz`), read as plain ones.

Codex CLI compresses its rollouts older than a few days to `rollout-….jsonl.zst` (a plain `.jsonl`
beside one still wins: it is the one Codex reads), and people gzip transcripts to keep them. The
whole viewer reads a transcript by byte offset (the line scanner, the index, permalinks, windows),
which a compressed stream cannot seek; so a compressed transcript is decompressed once, streaming
(a megabyte at a time, never whole in memory), into a copy in the viewer's cache folder, and that
copy is what `files.open_file(path)` opens. The session keeps the compressed file's path, name,
list row and key: nothing is ever written beside the transcript.

A copy is named after the compressed file's path and identity (size, mtime_ns, inode): a changed
file is decompressed again, and `sweep` removes the copies whose file is gone or changed; past
`BUDGET` bytes of copies the oldest go (made again when read: Codex compresses to save the disk,
which a copy of every rollout would undo).
`identity(path)` (one of `reader.FOLDER_IDENTITIES`) is (the copy's size, the file's mtime_ns and
inode): the offsets an index keeps are offsets into the copy, and a new copy of the same file
keeps the identity (nothing is read again).

The first screen of an archive with no copy yet (a finished session opens at its start) is read
from the head of its stream (`prefix_only`, `prefix`: its first PREFIX bytes, decompressed in
memory); the background index makes the copy. An archive is never "live" (store.SessionRef.live_at):
its time is when it was compressed.

A damaged or cut-short archive raises `Unreadable` (an OSError whose message says so in words),
and so does one that would decompress past `MAX_BYTES` (a decompression bomb stops there).
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import os
import threading
import time
import zlib
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import orjson
import zstandard

SUFFIXES = tuple(f"{plain}{packed}" for plain in (".jsonl", ".ndjson", ".json") for packed in (".zst", ".gz"))
MAX_BYTES = 2 << 30  # decompressed bytes a transcript may have: a bomb stops here
BUDGET = 4 << 30  # bytes of decompressed copies kept in the cache folder (see _evict)
CHUNK = 1 << 20
PIECE = 2 << 10  # compressed bytes given to zstd at once (see _chunks)
_folder: str | None = None
_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()
_known: dict[str, tuple[tuple[int, int, int], str | Unreadable]] = {}  # path → (identity, copy | error)


class Unreadable(OSError):
    """A file the viewer cannot read as a transcript (a damaged archive here; a database that is
    not its program's in `formats.rowdb`; `files.Refused` for a path it will not open), with
    `reason` saying why in a user's words: `str()` is the reason alone."""

    ERRNO = errno.EIO

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(self.ERRNO, reason, os.fspath(path))
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def is_compressed(path: str | os.PathLike) -> bool:
    return os.fspath(path).endswith(SUFFIXES)


def plain_name(name: str) -> str:
    """`x.jsonl` for `x.jsonl.zst` / `x.jsonl.gz` (`x.json` for `x.json.gz`…): the name the
    transcript has uncompressed."""
    return name[: name.rindex(".")] if is_compressed(name) else name


def use_folder(folder: str | os.PathLike | None) -> None:
    """Keep copies under this cache folder (the server's `--cache-dir`); None: the default."""
    global _folder
    _folder = os.path.join(os.fspath(folder), "decompressed") if folder else None


def folder() -> str:
    if _folder:
        return _folder
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "session-viewer", "decompressed")


def _stem(path: str) -> str:
    return hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _copy_name(path: str, st: os.stat_result) -> str:
    return os.path.join(folder(), f"{_stem(path)}-{st.st_size}-{st.st_mtime_ns}-{st.st_ino}.jsonl")


def _note_path(path: str) -> str:
    return os.path.join(folder(), _stem(path) + ".source")


def _note(path: str) -> dict | None:
    """What the last decompression of `path` recorded: its path, identity and plain size."""
    try:
        with open(_note_path(path), "rb") as f:
            note = orjson.loads(f.read())
    except (OSError, orjson.JSONDecodeError):
        return None
    return note if isinstance(note, dict) else None


def _lock(path: str) -> threading.Lock:
    with _locks_lock:
        return _locks.setdefault(path, threading.Lock())


def copy_for(path: str, src_fd: int) -> str:
    """The decompressed copy of the compressed file open as `src_fd` (checked by `files`: a regular
    file inside the served folders), made now when there is none for this version of it. The
    descriptor is left open. Raises Unreadable for a damaged archive or one past MAX_BYTES."""
    st = os.fstat(src_fd)
    ident = (st.st_size, st.st_mtime_ns, st.st_ino)
    known = _known.get(path)
    if known is not None and known[0] == ident:
        if isinstance(known[1], Unreadable):  # (a fresh one: a raised error keeps its traceback)
            raise Unreadable(path, known[1].reason)
        if os.path.exists(known[1]):
            return known[1]
    with _lock(path):
        target = _copy_name(path, st)
        if not os.path.exists(target):
            try:
                _decompress(path, src_fd, target)
            except Unreadable as e:
                _known[path] = (ident, e)
                raise
            _drop_others(path, target)
            _evict(target)
        _known[path] = (ident, target)
        return target


def _decompress(path: str, src_fd: int, target: str) -> None:
    os.makedirs(folder(), mode=0o700, exist_ok=True)
    tmp = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"
    src = os.fdopen(os.dup(src_fd), "rb")
    try:
        src.seek(0)
        # the person's own only, as the index cache is: a transcript holds what they typed
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            written = 0
            for chunk in _chunks(path, src):
                written += len(chunk)
                if written > MAX_BYTES:
                    raise Unreadable(path, f"it decompresses to more than {MAX_BYTES >> 20} MB, "
                                           "the most the viewer reads of a compressed transcript")
                out.write(chunk)
        st = os.fstat(src_fd)
        note = {"path": os.path.abspath(path), "identity": [st.st_size, st.st_mtime_ns, st.st_ino],
                "plain_size": written}
        with os.fdopen(os.open(_note_path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                       "wb") as f:
            f.write(orjson.dumps(note))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        src.close()


def _chunks(path: str, src):
    """The decompressed bytes of `src`, a chunk at a time; Unreadable for a damaged archive."""
    damaged = "the compressed file is damaged or cut short"
    if path.endswith(".gz"):
        try:
            with gzip.GzipFile(fileobj=src) as g:
                while chunk := g.read(CHUNK):
                    yield chunk
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise Unreadable(path, f"{damaged} (gzip: {e})") from None
        return
    d = zstandard.ZstdDecompressor()
    obj, ended = d.decompressobj(), True
    try:
        while block := src.read(CHUNK):
            # fed a little at a time: zstd can expand a few bytes into a 128 KB block, so what one
            # call returns is bounded by its input (2 KB: at most some 64 MB) and a bomb is caught
            # by the caller's count before memory is
            for at in range(0, len(block), PIECE):
                data = block[at:at + PIECE]
                while data:
                    if obj.eof:  # another frame follows (a zstd file may hold several)
                        obj = d.decompressobj()
                    out = obj.decompress(data)
                    data = obj.unused_data if obj.eof else b""
                    ended = obj.eof
                    if out:
                        yield out
    except zstandard.ZstdError as e:
        raise Unreadable(path, f"{damaged} (zstd: {e})") from None
    if not ended:
        raise Unreadable(path, f"{damaged} (zstd: its last frame ends early)")


def head(path: str, src_fd: int, limit: int) -> bytes:
    """The first `limit` decompressed bytes (discovery sniffs thousands of files: only their heads
    are decompressed, never a whole archive); Unreadable when not even a first byte can be."""
    known = _known.get(path)
    st = os.fstat(src_fd)
    if known is not None and known[0] == (st.st_size, st.st_mtime_ns, st.st_ino) \
            and isinstance(known[1], str):
        try:
            with open(known[1], "rb") as f:
                return f.read(limit)
        except OSError:
            pass
    src = os.fdopen(os.dup(src_fd), "rb")
    parts, got = [], 0
    try:
        src.seek(0)
        for chunk in _chunks(path, _Small(src)):
            parts.append(chunk)
            got += len(chunk)
            if got >= limit:
                break
    except Unreadable:
        if not parts:
            raise
    finally:
        src.close()
    return b"".join(parts)[:limit]


class _Small:
    """A file read 64 KB at a time (a head needs little of the archive)."""

    def __init__(self, f):
        self.f = f

    def read(self, n: int = -1) -> bytes:
        return self.f.read(min(n, 64 << 10) if n and n > 0 else 64 << 10)


# --- a first screen before the copy: the head of the stream -----------------------------------

PREFIX = 8 << 20  # decompressed bytes a first screen reads of an archive with no copy yet
_prefix_mode: ContextVar[bool] = ContextVar("compressed_prefix", default=False)
_prefixes: dict[str, tuple[tuple[int, int, int], bytes]] = {}  # path → (identity, its first bytes)
_prefixes_lock = threading.Lock()


@contextmanager
def prefix_only():
    """While in force (in this context: a first screen's request), a compressed transcript with
    no decompressed copy yet is read as the first PREFIX bytes of its stream (`prefix`), not
    decompressed whole first — the first screen of a 200 MB archive waited 4.5 s for its copy.
    The background index, which starts once the page is sent, makes the copy; its offsets are
    those of the prefix (a prefix is the copy's beginning)."""
    token = _prefix_mode.set(True)
    try:
        yield
    finally:
        _prefix_mode.reset(token)


def has_copy(path: str) -> bool:
    """Whether the archive at `path` has its decompressed copy (of this version of it) already.
    Raises OSError when it cannot be looked at."""
    return _has_copy(path, os.stat(path))


def _has_copy(path: str, st: os.stat_result) -> bool:
    known = _known.get(path)
    ident = (st.st_size, st.st_mtime_ns, st.st_ino)
    if known is not None and known[0] == ident:
        return isinstance(known[1], str) and os.path.exists(known[1])
    return os.path.exists(_copy_name(path, st))


def prefix(path: str, src_fd: int) -> bytes | None:
    """The first PREFIX decompressed bytes of the archive open as `src_fd` when a first screen
    reads it (`prefix_only`) and it has no copy yet; else None (the copy is read). Unreadable
    when not even a first byte can be decompressed."""
    if not _prefix_mode.get():
        return None
    st = os.fstat(src_fd)
    if _has_copy(path, st):
        return None
    ident = (st.st_size, st.st_mtime_ns, st.st_ino)
    with _prefixes_lock:
        got = _prefixes.get(path)
    if got is not None and got[0] == ident:
        return got[1]
    data = head(path, src_fd, PREFIX)
    with _prefixes_lock:
        _prefixes.clear()  # (one kept: the first screen being drawn)
        _prefixes[path] = (ident, data)
    return data


def prefix_identity(path: str, st: os.stat_result) -> tuple[int, int, int] | None:
    """`identity` while a first screen reads the archive's prefix: its size is the prefix's, one
    more when the stream goes on past it (what lies past the prefix is not known yet: the calls
    whose results lie there are "resolving")."""
    if not _prefix_mode.get():
        return None
    ident = (st.st_size, st.st_mtime_ns, st.st_ino)
    with _prefixes_lock:
        got = _prefixes.get(path)
    if got is None or got[0] != ident or _has_copy(path, st):
        return None
    data = got[1]
    return len(data) + (len(data) >= PREFIX), st.st_mtime_ns, st.st_ino


def identity(path: str) -> tuple[int, int, int] | None:
    """(the copy's size, the file's mtime_ns, inode) of a compressed transcript; None for another
    path. Makes the copy when there is none (through `files`, which checks the file)."""
    if not is_compressed(path):
        return None
    from . import files  # (files imports this module)

    st = os.stat(path)
    if (early := prefix_identity(path, st)) is not None:
        return early
    ident = (st.st_size, st.st_mtime_ns, st.st_ino)
    known = _known.get(path)
    if known is not None and known[0] == ident and isinstance(known[1], Unreadable):
        raise Unreadable(path, known[1].reason)
    if not (known is not None and known[0] == ident and os.path.exists(known[1])):
        note = _note(path)  # a copy made before (evicted since, or by an earlier run): its size
        if note is not None and note.get("identity") == list(ident) \
                and isinstance(note.get("plain_size"), int):
            return note["plain_size"], st.st_mtime_ns, st.st_ino
        files.open_file(path).close()  # makes the copy, or raises why it cannot
        known = _known[path]
    if isinstance(known[1], Unreadable):
        raise Unreadable(path, known[1].reason)
    return os.stat(known[1]).st_size, st.st_mtime_ns, st.st_ino


def _evict(keep: str) -> None:
    """Keep the copies under BUDGET bytes: the oldest go first (each is made again when read, its
    identity the same, so no index is lost)."""
    try:
        copies = []
        for e in os.scandir(folder()):
            if e.name.endswith(".jsonl") and e.path != keep:
                st = e.stat()
                copies.append((st.st_mtime, st.st_size, e.path))
        total = sum(c[1] for c in copies) + os.stat(keep).st_size
    except OSError:
        return
    for _, size, path in sorted(copies):
        if total <= BUDGET:
            break
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass


def _drop_others(path: str, keep: str) -> None:
    """Remove the older copies of this file (it changed)."""
    stem = _stem(path) + "-"
    try:
        names = os.listdir(folder())
    except OSError:
        return
    for name in names:
        if name.startswith(stem) and name.endswith(".jsonl") and os.path.join(folder(), name) != keep:
            try:
                os.unlink(os.path.join(folder(), name))
            except OSError:
                pass


def sweep(older_tmp: float = 3600.0) -> int:
    """Remove the copies whose compressed file is gone or changed (and leftovers of a copy cut
    short more than `older_tmp` seconds ago); how many files were removed."""
    try:
        names = os.listdir(folder())
    except OSError:
        return 0
    sources: dict[str, str | None] = {}
    for name in names:
        if name.endswith(".source"):
            try:
                note = orjson.loads(Path(folder(), name).read_bytes())
                sources[name[:-7]] = note.get("path") if isinstance(note, dict) else None
            except (OSError, orjson.JSONDecodeError):
                sources[name[:-7]] = None
    removed = 0
    now = time.time()
    for name in names:
        full = os.path.join(folder(), name)
        stem = name.split("-", 1)[0].split(".", 1)[0]
        src = sources.get(stem)
        if name.endswith(".tmp"):
            stale = _age(full, now) > older_tmp
        elif name.endswith(".source"):
            stale = src is None or not os.path.exists(src)
        elif name.endswith(".jsonl"):
            try:
                st = os.stat(src) if src else None
            except OSError:
                st = None
            stale = st is None or full != _copy_name(src, st)
        else:
            continue
        if stale:
            try:
                os.unlink(full)
                removed += 1
            except OSError:
                pass
    return removed


def _age(path: str, now: float) -> float:
    try:
        return now - os.stat(path).st_mtime
    except OSError:
        return 0.0
