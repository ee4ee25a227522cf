"""Opening the files under the served roots: regular files only, never blocking, never elsewhere.

A served folder is written by agents and by whoever else can write there, so a path in it may be a
FIFO (opening it blocks until a writer comes; reading it blocks forever), a device (`/dev/zero`
never ends), or a symlink to any file on the machine. Every file the viewer reads goes through
`open_file`, which

* stats first and refuses anything but a regular file, then opens with `O_NONBLOCK` (so a file
  swapped for a FIFO between the two cannot block the open) and checks the opened descriptor again;
* follows a symlink only while it resolves inside a served root (a `Confinement`), unless the
  server was started with `--follow-symlinks`. The check is made on the descriptor actually
  opened, so a link swapped between the check and the open is still caught.

The confinement in force is a context variable: the store and the index set it around their work,
so the format adapters (which open companion files: sub-agents, `state.json`, `.meta.json`) need
no extra argument. With none set (`session-viewer check`, unit tests), any regular file opens.

A session kept as a row of a database (OpenCode 1.2+'s `opencode.db`, Goose's `sessions.db`) is named by a path below the
database file (`…/opencode.db/<session id>`), which no file system holds. `ROW_STORES` (filled by
`viewer.formats`) are the modules that own such paths: `is_row(path)` and `row_bytes(path)`, what
opening the path reads (checked as the database file itself is: a regular file inside the roots).

A compressed transcript (`x.jsonl.zst`, `x.jsonl.gz`) is checked as any file is, and opening it
opens its decompressed copy in the cache folder (`viewer.compressed`).
"""

from __future__ import annotations

import errno
import io
import os
import stat
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from . import compressed

ROW_STORES: list = []  # modules with is_row(path) and row_bytes(path): see the module docstring

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class Refused(compressed.Unreadable):
    """A path the viewer will not read (a FIFO, a device, a symlink out of the served folders);
    `reason` says why in words a user understands."""

    ERRNO = errno.EPERM


def kind_of(mode: int) -> str:
    """What a non-regular file is, for messages."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


@dataclass(frozen=True)
class Confinement:
    """The folders whose files may be opened (resolved), and whether symlinks out of them are
    followed anyway."""

    areas: tuple[str, ...]
    follow_symlinks: bool = False

    @classmethod
    def of_roots(cls, roots, follow_symlinks: bool = False) -> "Confinement":
        """A root that is a file confines to its folder (its sub-agent files live beside it)."""
        areas = []
        for r in roots:
            real = os.path.realpath(r)
            areas.append(os.path.dirname(real) if os.path.isfile(real) else real)
        return cls(tuple(areas), follow_symlinks)

    def inside(self, real: str) -> bool:
        return any(real == a or real.startswith(a.rstrip(os.sep) + os.sep) for a in self.areas)

    def check(self, path: str | os.PathLike) -> None:
        """Raise Refused when `path` resolves outside every area."""
        if self.follow_symlinks:
            return
        if not self.inside(real_path(path)):
            raise Refused(path, "a symlink to a file outside the served folders "
                                "(serve --follow-symlinks follows it)")


DIR_MEMO_TTL = 2.0  # seconds a folder's real path is remembered (see real_path)
_real_dirs: dict[str, tuple[str, float]] = {}


def real_path(path: str | os.PathLike) -> str:
    """os.path.realpath(path), with the real paths of folders remembered for a moment: listing a
    root checks thousands of files in the same few folders, and resolving each file's every
    component again (an lstat each) was most of a cold list. A file that is itself a symlink is
    always resolved whole; what a moment's memory could miss (a folder swapped for a symlink just
    now) `open_file` still refuses, as it checks the path of what it actually opened."""
    path = os.path.abspath(path)
    head, tail = os.path.split(path)
    if tail in ("", ".", "..") or os.path.islink(path):
        return os.path.realpath(path)
    now = time.monotonic()
    known = _real_dirs.get(head)
    if known is None or now - known[1] > DIR_MEMO_TTL:
        if len(_real_dirs) > 10_000:
            _real_dirs.clear()
        known = _real_dirs[head] = (os.path.realpath(head), now)
    return os.path.join(known[0], tail)


_current: ContextVar[Confinement | None] = ContextVar("session_viewer_confinement", default=None)


@contextmanager
def confined(confinement: Confinement | None) -> Iterator[None]:
    """Run a block with `confinement` in force for every `open_file` it makes (this thread)."""
    token = _current.set(confinement)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Confinement | None:
    return _current.get()


def refusal(path: str | os.PathLike, st: os.stat_result | None = None) -> str | None:
    """Why `path` would not be opened (not a regular file, a symlink out of the roots), or None.
    Raises OSError when it cannot even be stat'ed (gone, no permission on its folder)."""
    if st is None:
        st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        return kind_of(st.st_mode) + ", not a regular file"
    conf = _current.get()
    if conf is not None:
        try:
            conf.check(path)
        except Refused as e:
            return e.reason
    return None


def row_store(path: str | os.PathLike):
    """The module owning `path` when it names a database row rather than a file, else None."""
    for store in ROW_STORES:
        if store.is_row(os.fspath(path)):
            return store
    return None


def open_file(path: str | os.PathLike) -> BinaryIO:
    """Open a regular file for reading, within the confinement in force. Raises Refused (an
    OSError) for anything else, and OSError when it cannot be read."""
    if (store := row_store(path)) is not None:
        return io.BytesIO(store.row_bytes(os.fspath(path)))
    if compressed.is_compressed(path):
        plain = _plain_copy(path)
        return io.BytesIO(plain) if isinstance(plain, bytes) else open(plain, "rb")
    return os.fdopen(_open_fd(path), "rb")


def _plain_copy(path: str | os.PathLike) -> str | bytes:
    """The decompressed copy of a compressed transcript (see `viewer.compressed`), the compressed
    file itself checked and opened as any transcript is — or, for a first screen drawn before
    there is one (`compressed.prefix_only`), the first bytes of its stream."""
    fd = _open_fd(path)
    try:
        early = compressed.prefix(os.fspath(path), fd)
        return early if early is not None else compressed.copy_for(os.fspath(path), fd)
    finally:
        os.close(fd)


def read_file(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of a small file (a `.meta.json`, a `state.json`), or its first `limit` bytes,
    checked as `open_file` checks (discovery reads the head of thousands of files: no file
    object is made for that)."""
    if (store := row_store(path)) is not None:
        data = store.row_bytes(os.fspath(path))
        return data if limit is None else data[:limit]
    fd = _open_fd(path)
    if compressed.is_compressed(path):
        try:
            if limit is not None:
                return compressed.head(os.fspath(path), fd, limit)
            with open(compressed.copy_for(os.fspath(path), fd), "rb") as f:
                return f.read()
        finally:
            os.close(fd)
    try:
        parts, left = [], limit if limit is not None else -1
        while left:
            part = os.read(fd, left if left > 0 else 1 << 20)
            if not part:
                break
            parts.append(part)
            left = max(0, left - len(part)) if left > 0 else left
        return b"".join(parts)
    finally:
        os.close(fd)


def _open_fd(path: str | os.PathLike) -> int:
    reason = refusal(path)
    if reason:
        raise Refused(path, reason)
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped since the stat
            raise Refused(path, kind_of(st.st_mode) + ", not a regular file")
        conf = _current.get()
        if conf is not None and not conf.follow_symlinks:
            real = _opened_path(fd)
            if real is not None and not conf.inside(real):
                raise Refused(path, "a symlink to a file outside the served folders "
                                    "(serve --follow-symlinks follows it)")
        return fd
    except BaseException:
        os.close(fd)
        raise


def _opened_path(fd: int) -> str | None:
    """The real path of an open descriptor, where the system says (Linux /proc)."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return real[: -len(" (deleted)")] if real.endswith(" (deleted)") else real
