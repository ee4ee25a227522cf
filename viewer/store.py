"""Sessions under the served roots: discovery, stable keys, and their indexes (memory + disk cache).

A root is a folder of sessions (any depth: `~/.claude/projects` holds project folders of session
files), one session folder (holding `messages.jsonl`), or one transcript file. Keys are derived from
a session's path relative to its root, so they are stable across restarts and URL-safe; pages resolve
keys only through the discovered set, never by joining user input onto a path.

Files that are not sessions are skipped with a reason, in one place: `Store.skipped` (path → why),
which the list page shows. Discovery reads the first bytes of each transcript file it has not seen
(`detect.not_a_transcript`: a binary file, text that is not JSON records); a file that only turns
out not to be a transcript when it is indexed joins the same map.

Indexes live in memory (a small LRU) and in the disk cache. `index(key)` always returns an index
that is current with the files: a cached or in-memory index is extended when a file grew and rebuilt
when it was replaced.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from . import formats
from .cache import IndexCache
from .formats import detect
from .index import SessionIndex, identity_matches, summary_load
from .model import SessionSummary

log = logging.getLogger(__name__)

SESSION_FILE = "messages.jsonl"
SKIP_DIRS = {"subagents", "node_modules", "__pycache__", "tool-results", "tool_results", "archives"}
NOT_SESSIONS = {"state.json", "package.json", "package-lock.json", "tsconfig.json", "settings.json",
                "ui_messages.json", "task_metadata.json", "disposal_metadata.json"}
MAX_DEPTH = 8
RESCAN_AFTER = 2.0  # seconds a discovery result is trusted when no watcher reports changes
MEMORY_SESSIONS = 32
_KEY_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(slots=True)
class SessionRef:
    key: str
    path: str  # the main transcript file
    root: str
    label: str  # path relative to its root, for people
    mtime: float
    size: int


class NotFound(LookupError):
    pass


class Skipped(NotFound):
    """The key names a file discovery skipped (see `Store.skipped`)."""

    def __init__(self, key: str, path: str, reason: str):
        super().__init__(key)
        self.path, self.reason = path, reason


class Store:
    def __init__(self, roots: list[str | Path], cache: IndexCache | None = None):
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        self.cache = cache
        self._lock = threading.RLock()
        self._refs: dict[str, SessionRef] = {}
        self._scanned = 0.0
        self._dirty = True
        self._memory: OrderedDict[str, SessionIndex] = OrderedDict()
        self._session_locks: dict[str, threading.Lock] = {}
        self._by_path: dict[str, SessionRef] = {}
        self._writers: list[threading.Thread] = []
        self.watched = False  # a watcher reports changes: no periodic rescans needed
        self._docs_seen: dict[str, tuple[float, bool]] = {}  # .json path → (mtime, is a transcript)
        self.skipped: dict[str, str] = {}  # path → why it is not listed as a session
        self._skipped_keys: dict[str, str] = {}  # the key it would have → path
        self._verdicts: dict[str, tuple[int, int, str | None]] = {}  # path → (mtime_ns, size, why)

    # --- discovery ---------------------------------------------------------------------------

    def invalidate(self) -> None:
        """Files appeared or went away under a root: rescan on the next look."""
        self._dirty = True

    def note_change(self, path: str, kind: str) -> None:
        """A file event from the watcher. A write to a known transcript only updates its entry
        (so the list stays sorted by activity without a rescan); anything else rescans lazily."""
        if kind == "modified":
            ref = self._by_path.get(path)
            if ref is not None:
                try:
                    st = os.stat(path)
                except OSError:
                    self._dirty = True
                    return
                ref.mtime, ref.size = st.st_mtime, st.st_size
            return
        self._dirty = True

    def sessions(self) -> list[SessionRef]:
        """Every discovered session, most recently written first."""
        with self._lock:
            stale = not self.watched and time.monotonic() - self._scanned > RESCAN_AFTER
            if self._dirty or stale:
                self._scan()
            return sorted(self._refs.values(), key=lambda r: r.mtime, reverse=True)

    def get(self, key: str) -> SessionRef:
        with self._lock:
            ref = self._refs.get(key)
            if ref is None:
                self.sessions()
                ref = self._refs.get(key)
            if ref is None:
                path = self._skipped_keys.get(key)
                if path is not None and path in self.skipped:
                    raise Skipped(key, path, self.skipped[path])
                raise NotFound(key)
            return ref

    def _scan(self) -> None:
        found: dict[str, SessionRef] = {}
        skipped: dict[str, str] = {}
        skipped_keys: dict[str, str] = {}
        multi = len(self.roots) > 1
        for root in self.roots:
            prefix = _key_part(root.name) + "~" if multi else ""
            for path, label in self._walk(root):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                key = prefix + _key_of(label)
                why = self._why_skipped(path, st)
                if why:
                    skipped[path] = why
                    skipped_keys.setdefault(key, path)
                    continue
                n = 2
                base = key
                while key in found and found[key].path != path:
                    key = f"{base}-{n}"
                    n += 1
                found[key] = SessionRef(key, path, str(root), label, st.st_mtime, st.st_size)
        self._refs = found
        self.skipped = skipped
        self._skipped_keys = {k: p for k, p in skipped_keys.items() if k not in found}
        self._by_path = {r.path: r for r in found.values()}
        self._scanned = time.monotonic()
        self._dirty = False

    def _walk(self, root: Path):
        """(main transcript path, label) for every session under root. Plain strings and one
        scandir per folder: a projects folder of thousands of sessions is listed in milliseconds."""
        if root.is_file():
            yield str(root), _label(root.parent.name if root.name == SESSION_FILE else root.stem)
            return
        if (root / SESSION_FILE).is_file():
            yield str(root / SESSION_FILE), _label(root.name)
            return
        top = str(root)
        cut = len(top) + 1
        stack = [(top, 0)]
        while stack:
            folder, depth = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError as e:
                log.warning("cannot list %s: %s", folder, e)
                continue
            names = {e.name for e in entries}
            if SESSION_FILE in names and folder != top:
                yield os.path.join(folder, SESSION_FILE), folder[cut:]
                continue
            stems = {n[:-6] for n in names if n.endswith(".jsonl")}
            for e in entries:
                name = e.name
                if name.startswith("."):
                    continue
                if e.is_dir(follow_symlinks=False):
                    # Claude Code keeps a session's sub-agents in a folder named like the session
                    if depth < MAX_DEPTH and name not in SKIP_DIRS and name not in stems:
                        stack.append((e.path, depth + 1))
                elif name.endswith(".jsonl"):
                    if not _is_companion(e.path):
                        yield e.path, e.path[cut:-6]
                elif name.endswith(".json") and self._maybe_document(e):
                    yield e.path, e.path[cut:-5]

    def _why_skipped(self, path: str, st: os.stat_result) -> str | None:
        """Why a transcript file found by discovery is not a session (None: it is one). Its first
        bytes are read once per version of the file."""
        if not stat.S_ISREG(st.st_mode):
            return None  # never read here: reading a FIFO or a device may block or never end
        known = self._verdicts.get(path)
        if known is not None and known[:2] == (st.st_mtime_ns, st.st_size):
            return known[2]
        if path.endswith(".json"):
            why = None  # documents were recognised by their content already
        else:
            try:
                with open(path, "rb") as f:
                    why = detect.not_a_transcript(f.read(detect.SNIFF_BYTES))
            except OSError:
                why = None  # listed; its page says why it cannot be read
            why = f"not a transcript ({why})" if why else None
        self._verdicts[path] = (st.st_mtime_ns, st.st_size, why)
        return why

    def _reject(self, ref: SessionRef, e: detect.NotTranscript) -> None:
        """A listed file turned out not to be a transcript when indexed: skip it from now on."""
        try:
            st = os.stat(ref.path)
        except OSError:
            return
        with self._lock:
            why = f"not a transcript ({e.reason})"
            self._verdicts[ref.path] = (st.st_mtime_ns, st.st_size, why)
            self.skipped[ref.path] = why
            self._skipped_keys[ref.key] = ref.path
            self._refs.pop(ref.key, None)
            self._by_path.pop(ref.path, None)
            self._memory.pop(ref.key, None)
            self._dirty = True

    def _maybe_document(self, entry: os.DirEntry) -> bool:
        """A .json file is a session only if its content is a known transcript format."""
        name = entry.name
        if name in NOT_SESSIONS or name.endswith(".meta.json"):
            return False
        try:
            mtime = entry.stat().st_mtime
        except OSError:
            return False
        known = self._docs_seen.get(entry.path)
        if known is not None and known[0] == mtime:
            return known[1]
        try:
            ok = detect.detect_file(entry.path).format != formats.FALLBACK.NAME
        except (OSError, detect.NotTranscript):
            ok = False
        self._docs_seen[entry.path] = (mtime, ok)
        return ok

    # --- indexes -----------------------------------------------------------------------------

    def _session_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._session_locks.setdefault(key, threading.Lock())

    def index(self, key: str) -> SessionIndex:
        """The current index of a session. Raises NotFound, OSError if it cannot be read, or
        detect.NotTranscript if it is not a transcript (it is skipped from then on)."""
        ref = self.get(key)
        try:
            return self._index(key, ref)
        except detect.NotTranscript as e:
            self._reject(ref, e)
            raise

    def _index(self, key: str, ref: SessionRef) -> SessionIndex:
        with self._session_lock(key):
            idx = self._memory.get(key)
            if idx is None:
                idx, fresh = self._load_cached(ref)
                if idx is None:
                    idx = SessionIndex(ref.path).build()
                if not fresh:
                    self._save(key, idx)
            elif idx.refresh():
                self._save(key, idx)
            self._remember(key, idx)
            return idx

    def refresh(self, key: str):
        """Bring a session's index up to date; returns (index, Change). For the live tail."""
        with self._session_lock(key):
            idx = self._memory.get(key)
        if idx is None:
            return self.index(key), None
        with self._session_lock(key):
            try:
                change = idx.refresh()
            except detect.NotTranscript as e:
                self._reject(self.get(key), e)
                raise NotFound(key) from e
            if change and not change.removed:
                self._save(key, idx, quiet=True)
            return idx, change

    def _load_cached(self, ref: SessionRef) -> tuple[SessionIndex | None, bool]:
        """(the cached index brought up to date, whether it was current as stored)."""
        if self.cache is None:
            return None, False
        hit = self.cache.load(ref.path)
        if hit is None:
            return None, False
        idx, files = hit
        if identity_matches(files):
            return idx, True
        idx.refresh()  # extends grown files, rebuilds replaced ones
        return idx, False

    def _save(self, key: str, idx: SessionIndex, quiet: bool = False) -> None:
        """Write the index to the disk cache on a background thread: a page never waits for it."""
        if self.cache is None:
            return
        # a live session grows line by line: write it back at most every few seconds
        now = time.monotonic()
        if quiet and now - getattr(idx, "_saved", 0.0) < 5.0:
            return
        idx._saved = now
        writer = threading.Thread(target=self._write, args=(key, idx), name="index-cache",
                                  daemon=True)
        with self._lock:
            self._writers = [w for w in self._writers if w.is_alive()] + [writer]
        writer.start()

    def _write(self, key: str, idx: SessionIndex) -> None:
        with self._session_lock(key):  # the index must not grow while it is being dumped
            blob = idx.dump()
            files, summary = idx.files(), idx.summary
        self.cache.save(idx.main, blob, files, summary)

    def flush(self) -> None:
        """Wait for pending cache writes (at shutdown, and in tests)."""
        with self._lock:
            writers = list(self._writers)
        for w in writers:
            w.join()

    def _remember(self, key: str, idx: SessionIndex) -> None:
        with self._lock:
            self._memory[key] = idx
            self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_SESSIONS:
                self._memory.popitem(last=False)

    def summaries(self, refs: list[SessionRef]) -> dict[str, SessionSummary | Exception]:
        """Summaries for a page of the session list: from memory, the cache, or a fresh index."""
        out: dict[str, SessionSummary | Exception] = {}
        cached = self.cache.summaries([r.path for r in refs]) if self.cache else {}
        for ref in refs:
            idx = self._memory.get(ref.key)
            if idx is not None and identity_matches(idx.files()):
                out[ref.key] = idx.summary
                continue
            hit = cached.get(ref.path)
            if hit is not None and identity_matches(hit[0]):
                out[ref.key] = summary_load(hit[1])
                continue
            try:
                out[ref.key] = self.index(ref.key).summary
            except (OSError, NotFound, detect.NotTranscript) as e:
                out[ref.key] = e
        return out


def _label(name: str) -> str:
    return name or "session"


def _key_part(text: str) -> str:
    return _KEY_CHARS.sub("_", text).strip("_.") or "_"


def _key_of(label: str) -> str:
    return "~".join(_key_part(p) for p in label.split("/") if p) or "session"


_COMPANION_TESTS = [a.is_companion for a in formats.ADAPTERS if hasattr(a, "is_companion")]


def _is_companion(path: str) -> bool:
    return any(test(path) for test in _COMPANION_TESTS)
