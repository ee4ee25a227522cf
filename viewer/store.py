"""Sessions under the served roots: discovery, stable keys, and their indexes (memory + disk cache).

A root is a folder of sessions (any depth: `~/.claude/projects` holds project folders of session
files), one session folder (holding `messages.jsonl`), or one transcript file. A database whose rows
are sessions (OpenCode's `opencode.db`, Goose's `sessions.db`, AgentScope Studio's `database.sqlite`,
see `files.ROW_STORES`) lists each row as a session named by
a path below the database file; a write to the database or its `-wal` lists them again. Keys are
derived from a session's path relative to its root alone (`keys.py`), so they are stable across
restarts, URL-safe and unambiguous; pages resolve keys only through the discovered set, never by
joining user input onto a path.

Files that are not sessions are skipped with a reason, in one place: `Store.skipped` (path → why),
which the list page shows. A path is first only stat'ed: a FIFO, a device, a folder named like a
transcript or a symlink out of the roots is skipped without being opened (see `files.py`). Then
discovery reads the first bytes of each transcript file it has not seen (`detect.not_a_transcript`:
a binary file, text that is not JSON records); a file that only turns out not to be a transcript
when it is indexed joins the same map.

Discovery runs outside the store lock, which guards only the in-memory maps: a slow or stuck file
system never holds up pages that can be answered from the last scan.

Indexes live in memory (a small LRU, for sessions pages show) and in the disk cache. `index(key)`
always returns an index that is current with the files: a cached or in-memory index is extended when
a file grew and rebuilt when it was replaced. A session that needs a long pass is indexed in the
background (`build(key)`, one `viewer.indexer.Build` shared by everyone who asks) while `usable(key)`
says so at once; the walker of `viewer.indexer` keeps every session's summary current for the list.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from . import compressed, files, formats, keys
from .cache import IndexCache
from .formats import detect
from .index import Change, SessionIndex, identity_matches, summary_load
from .indexer import Build, Indexer
from .model import SessionSummary

log = logging.getLogger(__name__)

SESSION_FILE = "messages.jsonl"
SKIP_DIRS = {"subagents", "node_modules", "__pycache__", "tool-results", "tool_results", "archives"}
NOT_SESSIONS = {"state.json", "package.json", "package-lock.json", "tsconfig.json", "settings.json",
                "ui_messages.json", "task_metadata.json", "disposal_metadata.json"}
MAX_DEPTH = 8
RESCAN_AFTER = 2.0  # seconds a discovery result is trusted when no watcher reports changes
MEMORY_SESSIONS = 32
EARLY_ABOVE = 4 << 20  # bytes: a session needing a longer pass is indexed in the background
SHARE_WAIT = 0.5  # seconds a list waits for a small session that another thread is indexing


@dataclass(slots=True)
class SessionRef:
    key: str
    path: str  # the main transcript file
    root: str
    label: str  # path relative to its root, for people
    mtime: float
    size: int
    # another session of its root has the same name (`x.json` beside `x.jsonl`, or beside a
    # session folder `x/`): its label then ends with its file's extension, and its page's title
    # names it too, so the two can be told apart
    clash: bool = False

    def live_at(self, now: float, window: float) -> bool:
        """Whether the session is being written (catalog.live_at: never a compressed archive)."""
        from .catalog import live_at

        return live_at(self, now, window)


class NotFound(LookupError):
    pass


class Skipped(NotFound):
    """The key names a file discovery skipped (see `Store.skipped`)."""

    def __init__(self, key: str, path: str, reason: str):
        super().__init__(key)
        self.path, self.reason = path, reason


class Store:
    def __init__(self, roots: list[str | Path], cache: IndexCache | None = None, *,
                 follow_symlinks: bool = False, redact: bool = False):
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        self.cache = cache
        if cache is not None:  # decompressed copies of `.jsonl.zst` transcripts live beside it
            compressed.use_folder(cache.folder)
        compressed.sweep()  # (the copies of compressed files gone or changed since)
        self.confinement = files.Confinement.of_roots(self.roots, follow_symlinks)
        self._prefixes = keys.root_prefixes([r.name for r in self.roots],
                                            [str(r) for r in self.roots]) \
            if len(self.roots) > 1 else [""]
        self.redact = redact  # every event, record and title leaves redacted (`serve --redact`)
        self._redactors: dict[str, object] = {}  # session path → its redact.Redactor
        # guards the maps below and nothing else: no file is ever read while holding it
        self._lock = threading.RLock()
        self._scan_lock = threading.Lock()  # one discovery pass at a time
        self._refs: dict[str, SessionRef] = {}
        self._scanned = 0.0
        self._scans = 0  # discovery passes so far: a list page says which one its rows are from
        self._found_in: dict[str, int] = {}  # key → the pass that found it
        self._dirty = True
        self._memory: OrderedDict[str, SessionIndex] = OrderedDict()
        self._builds: dict[str, Build] = {}
        self._summaries: dict[str, tuple[list, SessionSummary | Exception]] = {}
        self._noted_at: dict[str, int] = {}  # key → the indexer's version when its summary changed
        self._session_locks: dict[str, threading.Lock] = {}
        self._by_path: dict[str, SessionRef] = {}
        self._to_write: queue.Queue[str] = queue.Queue()  # keys of indexes to write to the cache
        self._unsaved: dict[str, SessionIndex] = {}
        self._writer: threading.Thread | None = None
        self.watched = False  # a watcher reports changes: no periodic rescans needed
        self._docs_seen: dict[str, tuple[float, bool]] = {}  # .json path → (mtime, is a transcript)
        self.skipped: dict[str, str] = {}  # path → why it is not listed as a session
        self._skipped_keys: dict[str, str] = {}  # the key it would have → path
        self._aliases: dict[str, str] = {}  # an older key of a session → its key (see `get`)
        self._verdicts: dict[str, tuple[int, int, str | None]] = {}  # path → (mtime_ns, size, why)
        self._rows_written: set[str] = set()  # databases of row-sessions written since the scan
        self.indexer = Indexer(self)  # builds and listeners; walks the whole archive once started
        self._pages = 0  # page requests being answered: background passes let them go first
        self._quiet = threading.Condition()
        self._page = threading.local()  # whether this thread answers a page

    # --- discovery ---------------------------------------------------------------------------

    def invalidate(self) -> None:
        """Files appeared or went away under a root: rescan on the next look."""
        self._dirty = True
        self.indexer.poke()

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
                self.indexer.poke()
            elif db := next(filter(None, (rows.store_of(path) for rows in formats.ROW_STORES)),
                            None):
                # a database whose rows are sessions (or its write-ahead log) was written: the
                # next listing asks it for its sessions again (one query), nothing else
                with self._lock:
                    self._rows_written.add(db)
                self.indexer.poke()
            return
        self._dirty = True
        self.indexer.poke()

    def at_path(self, path: str) -> SessionRef | None:
        """The discovered session whose main file is `path` (as the scan spelt it), if any: how a
        session names another (a Wolo sub-agent's parent) without joining a path from a link. From
        the last scan: a lookup, never a scan (cards ask it while they are drawn)."""
        with self._lock:
            return self._by_path.get(path)

    def sessions(self) -> list[SessionRef]:
        """Every discovered session, most recently written first."""
        return self.listing()[0]

    def listing(self) -> tuple[list[SessionRef], int]:
        """(every discovered session, most recently written first; the number of the discovery
        pass they are from — see `found_after`)."""
        self._discover()
        with self._lock:
            refs, scan = list(self._refs.values()), self._scans
        return sorted(refs, key=lambda r: r.mtime, reverse=True), scan

    def found_after(self, key: str, scan: int) -> bool:
        """Whether the session of `key` was found by a discovery pass later than `scan`: a list
        drawn from pass `scan` does not show it."""
        with self._lock:
            return self._found_in.get(key, 0) > scan

    def get(self, key: str) -> SessionRef:
        """The session of a key — or of its older key: a `.json` document that gave way to a
        namesake (see `_key_of`) is found by that marked key too, so its links outlive the
        namesake. The ref's own `key` says which key is current."""
        with self._lock:
            ref = self._refs.get(key) or self._refs.get(self._aliases.get(key, ""))
        if ref is None:
            self._discover()
            with self._lock:
                ref = self._refs.get(key) or self._refs.get(self._aliases.get(key, ""))
                if ref is None:
                    path = self._skipped_keys.get(key)
                    if path is not None and path in self.skipped:
                        raise Skipped(key, path, self.skipped[path])
        if ref is None:
            raise NotFound(key)
        return ref

    @property
    def scanned(self) -> float:
        """When the sessions were last discovered (a monotonic time): a new scan, new refs."""
        return self._scanned

    def _discover(self) -> None:
        """Rescan when the last scan is out of date. The scan reads the file system without the
        store lock; while one runs, other callers use the previous result (only the very first
        scan is waited for), so one slow or stuck file never holds up every page."""
        if not self._stale():
            return
        if not self._scan_lock.acquire(blocking=self._scanned == 0.0):
            return
        try:
            if self._stale():
                full = self._dirty or self._scanned == 0.0 or not self.watched
                self._dirty = False  # before the walk: a change seen during it rescans again
                with self._lock:
                    written, self._rows_written = self._rows_written, set()
                with files.confined(self.confinement):
                    scan = None if full else self._relist(written)
                    found, skipped, skipped_keys, aliases = scan or self._scan()
                with self._lock:
                    self._scans += 1
                    self._found_in = {k: self._found_in.get(k, self._scans) for k in found}
                    self._refs = found
                    self._aliases = aliases
                    self.skipped = skipped
                    self._skipped_keys = skipped_keys
                    self._by_path = {r.path: r for r in found.values()}
                    self._scanned = time.monotonic()
        finally:
            self._scan_lock.release()

    def _stale(self) -> bool:
        return self._dirty or self._scanned == 0.0 or bool(self._rows_written) or (
            not self.watched and time.monotonic() - self._scanned > RESCAN_AFTER)

    def _scan(self):
        """(sessions by key, skipped path → reason, skipped key → path, older key → key) under
        every root."""
        maps = {}, {}, {}, {}
        for root, prefix in zip(self.roots, self._prefixes):
            for entry in self._walk(root):
                self._place(root, prefix, entry, *maps)
        _tell_apart(maps[0].values())
        return self._settled(*maps)

    def _relist(self, dbs: set[str]):
        """`_scan`'s maps with only these databases' rows listed again (OpenCode writes its
        database many times a second while it works: walking every root for each write cost a
        walk of thousands of sessions each time); None when one of them was not listed before
        (a database just made: the roots are walked)."""
        with self._lock:
            maps = dict(self._refs), dict(self.skipped), dict(self._skipped_keys), dict(self._aliases)
        found, skipped, skipped_keys, _ = maps
        fresh = []
        for db in dbs:
            below = db + os.sep
            place = next(((r, p) for r, p in zip(self.roots, self._prefixes)
                          if db == str(r) or db.startswith(str(r) + os.sep)), None)
            gone = [k for k, r in found.items() if r.path.startswith(below)]
            were = [p for p in skipped if p == db or p.startswith(below)]
            if place is None or not (gone or were):
                return None
            for k in gone:
                del found[k]
            for p in were:
                del skipped[p]
            root, prefix = place
            cut = len(str(root if root.is_dir() else root.parent)) + 1
            fresh += [(root, prefix, entry) for entry in
                      _rows(formats.row_store_named(os.path.basename(db)), db, cut)]
        for root, prefix, entry in fresh:
            self._place(root, prefix, entry, *maps)
        return self._settled(*maps)

    def _place(self, root: Path, prefix: str, entry: tuple, found: dict, skipped: dict,
               skipped_keys: dict, aliases: dict) -> None:
        """One path the walk found, listed as a session or as skipped (with why)."""
        path, label, st, why = entry
        key, alias = _key_of(root, path, label)
        key = prefix + key
        if alias:
            aliases[prefix + alias] = key
        why = why or self._why_skipped(path, st)
        if why:
            skipped[path] = why
            skipped_keys.setdefault(key, path)
            return
        if key in found:  # two hashes alike: never seen, but never two sessions one key
            key = keys.marked(key, path)
        found[key] = SessionRef(key, path, str(root), label, st.st_mtime, st.st_size)

    @staticmethod
    def _settled(found: dict, skipped: dict, skipped_keys: dict, aliases: dict):
        for rows in formats.ROW_STORES:  # a session found both as a file and as a row: the row
            by_path = {r.path: r for r in found.values()}
            for path, why in rows.shadowed(list(by_path)).items():
                del found[by_path[path].key]
                skipped[path] = why
                skipped_keys.setdefault(by_path[path].key, path)
        skipped_keys = {k: p for k, p in skipped_keys.items() if k not in found}
        return found, skipped, skipped_keys, {a: k for a, k in aliases.items() if a not in found}

    def _walk(self, root: Path):
        """(main transcript path, label, stat, None) for every session under root, or (…, reason)
        for a path that looks like a transcript but must not be opened (a FIFO, a device, a
        symlink out of the roots…). Plain strings and one scandir per folder: a projects folder
        of thousands of sessions is listed in milliseconds."""
        if not root.is_dir():
            if rows := formats.row_store_named(root.name):
                yield from _rows(rows, str(root), len(str(root.parent)) + 1)
                return
            yield _candidate(str(root), main_label(root))
            return
        if os.path.lexists(root / SESSION_FILE):
            yield _candidate(str(root / SESSION_FILE), _label(root.name))
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
                yield _candidate(os.path.join(folder, SESSION_FILE), folder[cut:])
                continue
            stems = {n[:-6] for n in map(compressed.plain_name, names) if n.endswith(".jsonl")}
            # a format's folders that hold parts of sessions listed elsewhere (OpenCode's storage)
            skip = set().union(*(f(names) for f in formats.SKIPPING))
            for e in entries:
                name = e.name
                if name.startswith("."):
                    continue
                # x.jsonl.zst / x.jsonl.gz (Codex's older rollouts) is listed as x.jsonl would be;
                # a plain x.jsonl beside it wins, as Codex reads it
                plain = compressed.plain_name(name)
                if plain != name and plain in names:
                    continue
                if e.is_dir(follow_symlinks=False):
                    # Claude Code keeps a session's sub-agents in a folder named like the session
                    if depth < MAX_DEPTH and name not in SKIP_DIRS and name not in stems \
                            and name not in skip:
                        stack.append((e.path, depth + 1))
                elif plain.endswith(".jsonl"):
                    # a session kept as a folder: its name (a plain messages.jsonl is listed above)
                    if plain in formats.FOLDER_FILES or plain == SESSION_FILE != name:
                        yield _candidate(e.path, folder[cut:] or _label(os.path.basename(folder)))
                    elif not _is_companion(plain_path := os.path.join(folder, plain)):
                        yield _candidate(e.path, plain_path[cut:-6])
                elif plain.endswith(".ndjson"):  # JSON lines too: MARSYS writes its run traces so
                    yield _candidate(e.path, os.path.join(folder, plain)[cut:-7])
                elif name.endswith((".db", ".sqlite")) and (rows := formats.row_store_named(name)):
                    yield from _rows(rows, e.path, cut)  # its rows are sessions (opencode.db)
                elif plain.endswith((".json", ".traj")) and plain not in NOT_SESSIONS \
                        and not plain.endswith(".meta.json") and not _is_companion(e.path):
                    # (`.traj`: SWE-agent's trajectory, one JSON document like a `.json`)
                    found = _candidate(e.path, os.path.join(folder, plain)[cut:-5])
                    if found[3] or self._is_document(e.path, found[2]):
                        yield found

    def _why_skipped(self, path: str, st: os.stat_result) -> str | None:
        """Why a transcript file found by discovery is not a session (None: it is one). Its first
        bytes are read once per version of the file."""
        known = self._verdicts.get(path)
        if known is not None and known[:2] == (st.st_mtime_ns, st.st_size):
            return known[2]
        if compressed.plain_name(path).endswith((".json", ".traj")) or files.row_store(path) is not None:
            why = None  # documents were recognised by their content already
        else:
            try:
                head = files.read_file(path, detect.SNIFF_BYTES)
                why = detect.not_a_transcript(head, more=len(head) == detect.SNIFF_BYTES)
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

    def _reject_key(self, key: str, e: detect.NotTranscript) -> None:
        with self._lock:
            ref = self._refs.get(key)
        if ref is not None:
            self._reject(ref, e)

    def _is_document(self, path: str, st: os.stat_result) -> bool:
        """A .json file is a session only if its content is a known transcript format."""
        known = self._docs_seen.get(path)
        if known is not None and known[0] == st.st_mtime:
            return known[1]
        try:
            # (an archive is judged by the head of its stream: listing makes no decompressed copy)
            with compressed.prefix_only():
                ok = detect.detect_file(path).format != formats.FALLBACK.NAME
        except (OSError, detect.NotTranscript):
            ok = False
        self._docs_seen[path] = (st.st_mtime, ok)
        return ok

    # --- indexes -----------------------------------------------------------------------------
    #
    # Every pass over a session's files runs through `_pass`, which hands the listeners of the
    # indexer what they asked for. A session needing a long pass gets a background `Build` that
    # everyone shares; short ones (a small file, a little growth) run in the asking thread.

    def page_begins(self) -> None:
        with self._quiet:
            self._pages += 1
        self._page.active = True

    def page_ends(self) -> None:
        self._page.active = False
        with self._quiet:
            self._pages -= 1
            self._quiet.notify_all()

    def _wait(self, build: Build, timeout: float | None = None) -> SessionIndex | None:
        """Wait for a build; a page that waits for one is not a page it should step aside for."""
        if not getattr(self._page, "active", False):
            return build.wait(timeout)
        self.page_ends()
        try:
            return build.wait(timeout)
        finally:
            self.page_begins()

    def let_pages_first(self, most: float = 0.1, before=None) -> None:
        """Background passes call this between steps: while pages are being answered they wait
        (a little), so a first screen never shares the processor with an index being built.
        `before()` is called first when there is a page to wait for (to let go of a lock)."""
        if before is not None and self._pages > 0:
            before()
        with self._quiet:
            if self._pages:
                self._quiet.wait_for(lambda: self._pages <= 0, most)

    def _session_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._session_locks.setdefault(key, threading.Lock())

    def usable(self, key: str) -> SessionIndex | None:
        """The index of a session if it can be had without a long pass: from memory or the cache
        (extended when little was added), or built here when the session is small. None when a
        background build is needed or running (`build(key)`). Raises NotFound, OSError if it
        cannot be read, or detect.NotTranscript if it is not a transcript (skipped from then on)."""
        ref = self.get(key)
        if ref.size <= EARLY_ABOVE and self.running(key) is not None:
            # a short pass (the walker's) is under way: its index, not a page drawn from part of
            # the file, which knows no sub-agents and no later results
            return self._join(key, self.build(key))
        lock = self._session_lock(key)
        idx = self._memory.get(key)
        if idx is not None and idx.main == ref.path and not lock.locked() and idx.unchanged():
            # nothing to refresh: no queue behind the session's lock (every request for a session
            # read by many took it in turn, only to find the files as they were)
            self._remember(key, idx)
            return idx
        with lock:
            idx = self._memory.get(key)
            if idx is not None and idx.main != ref.path:
                # the key names another file now (a namesake that held it went away)
                del self._memory[key]
                idx = None
            if idx is not None:
                self._catch_up(key, idx)
                self._remember(key, idx)
                return idx
            with self._lock:
                if key in self._builds:
                    return None
            idx, fresh = self._load_cached(ref)
            if idx is None:
                if ref.size > EARLY_ABOVE:
                    return None
                idx = SessionIndex(ref.path)
                self._pass(key, idx, SessionIndex.build)
            if not fresh:
                self._save(key, idx)
            self._remember(key, idx)
            return idx

    def index(self, key: str) -> SessionIndex:
        """The current index of a session, waiting for its build if it needs one. Raises NotFound,
        or OSError if it cannot be read."""
        return self.usable(key) or self._join(key, self.build(key))

    def _join(self, key: str, build: Build) -> SessionIndex:
        """The index of a build, current with the files. A build is listed as running until it
        has handed its index over, after its last look at the files: one who joins it then gets
        what it read before a change made since (a file overwritten with a binary one would
        still show as the empty session it was), so that index is brought up to date here. It
        is redacted here too: a pass begun by the list's walker (not to keep its index) may have
        decided not to remember it — which is what redacts — before this request joined it."""
        idx = self._wait(build)
        if not idx.unchanged():
            with self._session_lock(key):
                if self._catch_up(key, idx).removed:
                    raise FileNotFoundError(2, "No such file", idx.main)
        return self.redacting(idx)

    def _catch_up(self, key: str, idx: SessionIndex) -> Change:
        """Refresh an index held under its session's lock. The cache is written quietly, at most
        every few seconds: a page of a live session asks after every line written, as the live
        tail does."""
        change = self._pass(key, idx, SessionIndex.refresh)
        if change and not change.removed:
            self._save(key, idx, quiet=True)
        return change

    def build(self, key: str, *, start: bool = True, keep: bool = True) -> Build:
        """The background build of a session: the one running, or a new one. `keep`: the index
        stays in memory when done (a page wants it). A build not started here starts when someone
        waits for it or calls `start()`."""
        ref = self.get(key)
        with self._lock:
            b = self._builds.get(key)
            if b is None:
                b = self._builds[key] = Build(key, self._run_build, ref.size)
            b.keep = b.keep or keep
        if start:
            b.start()
        return b

    def running(self, key: str) -> Build | None:
        with self._lock:
            return self._builds.get(key)

    def _run_build(self, b: Build) -> SessionIndex:
        key = b.key
        try:
            self.indexer.listeners.progress(key, 0, b.total)
            with self._session_lock(key):
                idx = self._memory.get(key)  # built meanwhile by a short pass
            if idx is not None:
                with self._session_lock(key):
                    if self._pass(key, idx, SessionIndex.refresh):
                        self._save(key, idx, quiet=True)
                return idx
            ref = self.get(key)
            hit = self.cache.load(ref.path) if self.cache is not None else None
            if hit is not None:
                idx = hit[0]
                b.total = max(1, ref.size - idx.threads["main"].offset)
                change = self._pass(key, idx, SessionIndex.refresh, b)
                if change.removed:
                    raise FileNotFoundError(2, "No such file", ref.path)
            else:
                idx = SessionIndex(ref.path)
                self._pass(key, idx, SessionIndex.build, b)
            # files written (or cut) while they were read: one more pass, short, catches up
            if not identity_matches(idx.files()) and self._pass(
                    key, idx, SessionIndex.refresh).removed:
                raise FileNotFoundError(2, "No such file", ref.path)
            with self._session_lock(key):
                if b.keep:
                    self._remember(key, idx)
            self._save(key, idx)
            return idx
        finally:
            with self._lock:
                if self._builds.get(key) is b:
                    del self._builds[key]

    def bring_up_to_date(self, key: str) -> None:
        """Make the cached index and summary of a session current without keeping the index in
        memory (the walker, and the list's own rows)."""
        with self._session_lock(key):
            idx = self._memory.get(key)
            if idx is not None:
                if self._pass(key, idx, SessionIndex.refresh):
                    self._save(key, idx)
                return
        try:
            self.build(key, start=False, keep=False).wait()
        except OSError as e:
            self._failed(key, e)
            raise

    def refresh(self, key: str):
        """Bring a session's index up to date; returns (index, Change). For the live tail."""
        with self._session_lock(key):
            idx = self._memory.get(key)
            if idx is not None:
                try:
                    change = self._catch_up(key, idx)
                except detect.NotTranscript as e:
                    raise NotFound(key) from e
                return idx, change
        return self.index(key), None

    def _pass(self, key: str, idx: SessionIndex, run, build: Build | None = None) -> Change:
        """Run one pass (`SessionIndex.build` or `.refresh`) with the listeners' sinks attached,
        then tell them what it did."""
        listeners = self.indexer.listeners
        idx.sink = listeners.sink(key, idx)
        if build is not None:
            def progress(n, b=build):
                b.add_read(n)
                listeners.progress(key, b.read, b.total)
                self.let_pages_first()
            idx.progress = progress
        generation = idx.generation
        idx.confinement = self.confinement
        try:
            change = run(idx)
        except detect.NotTranscript as e:
            self._reject_key(key, e)
            raise
        finally:
            idx.sink = idx.progress = None
        if not isinstance(change, Change):  # build() returns the index
            change = Change(reset=True)
        if change.removed:
            listeners.removed(key, idx.main)
        elif change.reset or idx.generation != generation:
            listeners.indexed(key, idx)
        elif change:
            listeners.extended(key, idx, change)
        # noted once per change, not once per look: a note wakes the indexer and the list's streams
        # (an index read from the cache has no rebuild to count: every request noted it again)
        if change or (self._summaries.get(key) or (None, None))[1] is not idx.summary:
            self._note(key, idx)
        return change

    def redactor_for(self, path: str):
        """The redactor of one session, kept for the server's life: a secret keeps its marker
        number on every page, window, stream and download."""
        from .redact import Redactor

        with self._lock:
            red = self._redactors.get(path)
            if red is None:
                red = self._redactors[path] = Redactor()
            return red

    def redacting(self, idx: SessionIndex) -> SessionIndex:
        """Give an index (a session's, or a first screen's region of it) its session's redactor
        when this store redacts."""
        if self.redact and idx.redactor is None:
            idx.redactor = self.redactor_for(idx.main)
        return idx

    def shown_summary(self, idx: SessionIndex) -> SessionSummary:
        """A session's summary as a page shows it (its title redacted on a redacting server)."""
        return self._shown(idx.summary, idx.main)

    def _shown(self, s, path: str):
        if not self.redact or not isinstance(s, SessionSummary) or not s.title:
            return s
        from dataclasses import replace

        return replace(s, title=self.redactor_for(path).text(s.title))

    def _load_cached(self, ref: SessionRef) -> tuple[SessionIndex | None, bool]:
        """(the cached index brought up to date, whether it was current as stored). An index that
        would need a long pass to catch up is left to a background build."""
        if self.cache is None:
            return None, False
        hit = self.cache.load(ref.path)
        if hit is None:
            return None, False
        idx, identities = hit
        idx.confinement = self.confinement
        if identity_matches(identities):
            self._note(ref.key, idx)
            return idx, True
        if _to_read(identities) > EARLY_ABOVE:
            return None, False
        self._pass(ref.key, idx, SessionIndex.refresh)  # extends grown files, rebuilds replaced ones
        return idx, False

    def warm_up(self, newest: int = 1) -> None:
        """At start-up: discover the sessions, read every cached summary (the list's rows) and the
        cached index of the `newest` most recently written sessions (the one being worked in is the
        one a restarted server is asked for first), so the first list and session pages cost what
        the tenth do. Nothing is indexed here: a session not cached as it is waits for its page."""
        refs = self.sessions()
        self.summaries(refs, stale=True)
        for ref in refs[:newest] if self.cache is not None else ():
            with self._session_lock(ref.key):
                if ref.key in self._memory:
                    continue
                hit = self.cache.load(ref.path)
                if hit is not None and identity_matches(hit[1]):
                    hit[0].confinement = self.confinement
                    self._note(ref.key, hit[0])
                    self._remember(ref.key, hit[0])

    def _save(self, key: str, idx: SessionIndex, quiet: bool = False) -> None:
        """Queue the index for the disk cache: one writer thread writes them in turn, so a page
        never waits for it and the walker's thousands of small sessions cost no thread each."""
        if self.cache is None:
            return
        # a live session grows line by line: write it back at most every few seconds
        now = time.monotonic()
        if quiet and now - getattr(idx, "_saved", 0.0) < 5.0:
            return
        idx._saved = now
        with self._lock:
            if key not in self._unsaved:
                self._to_write.put(key)
            self._unsaved[key] = idx  # saved again before it was written: written once
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_all, name="index-cache",
                                                daemon=True)
                self._writer.start()

    def _write_all(self) -> None:
        while True:
            with self._lock:
                if self._to_write.empty():  # nothing left: the thread ends until the next save
                    self._writer = None
                    return
                key = self._to_write.get()
            try:
                with self._lock:
                    idx = self._unsaved.pop(key, None)
                if idx is not None:  # (the index must not grow while it is dumped)
                    self.cache.save_index(idx, self._session_lock(key))
            except Exception:
                log.exception("writing the index of %s to the cache failed", key)
            finally:
                self._to_write.task_done()

    def flush(self) -> None:
        """Wait for pending cache writes (at shutdown, and in tests)."""
        self._to_write.join()

    def _remember(self, key: str, idx: SessionIndex) -> None:
        self.redacting(idx)
        with self._lock:
            self._memory[key] = idx
            self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_SESSIONS:
                self._memory.popitem(last=False)

    def forget(self, key: str) -> None:
        """A session that went away: drop what is held of it."""
        with self._lock:
            self._memory.pop(key, None)
            self._summaries.pop(key, None)

    # --- summaries (the session list) ----------------------------------------------------------

    def _note(self, key: str, idx: SessionIndex) -> None:
        """Remember a session's summary with the identity of the files it describes."""
        self._summaries[key] = (idx.files(), idx.summary)
        self._noted_at[key] = self.indexer.noted(key)

    def _failed(self, key: str, error: Exception) -> None:
        try:
            ref = self.get(key)
        except NotFound:
            return
        self._summaries[key] = ([(ref.path, ref.size, None, None)], error)
        self._noted_at[key] = self.indexer.noted(key)

    def noted_since(self, key: str, version: int) -> bool:
        """Whether the summary of a session changed after the indexer's `version`."""
        return self._noted_at.get(key, -1) > version

    def summary_of(self, key: str, stale: bool = False) -> SessionSummary | Exception | None:
        """The summary of a session if one is known and current (an error if it cannot be read);
        with `stale`, the last one known even if the files changed since."""
        known = self._summaries.get(key)
        if known is None:
            return None
        identities, summary = known
        summary = self._shown(summary, identities[0][0])
        if stale:
            return summary
        if isinstance(summary, Exception):
            try:
                ref = self.get(key)
            except NotFound:
                return None
            return summary if identities[0][1] == ref.size else None
        return summary if identity_matches(identities) else None

    def summaries(self, refs: list[SessionRef], inline: int = 0, stale: bool = False,
                  inline_for: float = 0.05) -> dict[str, SessionSummary | Exception | None]:
        """Summaries for rows of the session list: what memory and the cache know (None for a
        session never indexed; with `stale`, the last summary known of one that changed since).
        With `inline`, sessions without one are indexed here, in order, while their files add up
        to at most that many bytes and for `inline_for` seconds at most: cheap rows need not wait
        for the walker, and the page never waits long for them."""
        out: dict[str, SessionSummary | Exception | None] = {}
        missing = []
        for ref in refs:
            if stale and not inline and ref.key in self._summaries:
                # the last one known will do: no look at every file of every session (the whole
                # list, sorted or filtered, reads this for thousands of sessions per request)
                out[ref.key] = self.summary_of(ref.key, stale=True)
                continue
            out[ref.key] = self.summary_of(ref.key)
            if out[ref.key] is None:
                missing.append(ref)
        if missing and self.cache is not None:
            cached = self.cache.summaries([r.path for r in missing if r.key not in self._summaries])
            for ref in missing:
                hit = cached.get(ref.path)
                if hit is not None:
                    self._summaries[ref.key] = (hit[0], summary_load(hit[1]))
                    out[ref.key] = self.summary_of(ref.key)
        spent = 0.0  # in passes made here
        for ref in refs:
            if out[ref.key] is not None or ref.size > inline or spent > inline_for:
                continue
            inline -= ref.size
            try:
                if b := self.running(ref.key):  # indexed elsewhere right now: a moment at most
                    self._wait(b, SHARE_WAIT)
                else:
                    t = time.monotonic()
                    try:
                        self.bring_up_to_date(ref.key)
                    finally:
                        spent += time.monotonic() - t
            except (OSError, NotFound):
                pass
            except detect.NotTranscript as e:
                out[ref.key] = e
                continue
            out[ref.key] = self.summary_of(ref.key)
        if stale:
            for ref in refs:
                if out[ref.key] is None:
                    out[ref.key] = self.summary_of(ref.key, stale=True)
        return out


def _to_read(identities: list) -> int:
    """Bytes a pass must read to bring an index of these files up to date."""
    total = 0
    for path, size, mtime_ns, ino, *_ in identities:
        try:
            st = os.stat(path)
        except OSError:
            continue
        total += st.st_size - size if st.st_ino == ino and st.st_size >= size else st.st_size
    return total


def _candidate(path: str, label: str) -> tuple[str, str, os.stat_result | None, str | None]:
    """(path, label, stat, None) for a transcript path that may be opened, else (…, the reason).
    Only a stat: nothing is opened (a FIFO would block, a device never end)."""
    try:
        st = os.stat(path)
        reason = files.refusal(path, st)
    except OSError as e:
        return path, label, None, _os_reason(path, e)
    return path, label, st, reason


class _RowStat(NamedTuple):
    """What discovery reads of a session's stat, for a row-session: its own time and size."""
    st_mtime: float
    st_mtime_ns: int
    st_size: int


def _rows(rows: ModuleType, db: str, cut: int):
    """(row path, label, stat, None) for each session row of a database of `rows` (one of
    files.ROW_STORES), its stat the row's own time and size; or (the database, label, stat, why)
    when it cannot be read as one (locked, damaged, another program's)."""
    path, label, st, why = _candidate(db, db[cut:])
    if why or st is None:
        yield path, label, st, why
        return
    try:
        found = rows.list_sessions(db)
    except OSError as e:
        yield path, label, st, str(e)
        return
    for row, _sid, mtime, size in found:
        yield row, row[cut:], _RowStat(mtime, int(mtime * 1e9), size), None


def _os_reason(path: str, e: OSError) -> str:
    if isinstance(e, FileNotFoundError) and os.path.islink(path):
        return "a broken symlink"
    if e.errno == errno.ELOOP:
        return "a symlink loop"
    return f"cannot be read: {e.strerror or e}"


def _tell_apart(refs) -> None:
    """Sessions of one root with the same label (a `.json` document beside `x.jsonl`, both an
    OpenAI Agents SDK `to_input_list()` save, say; a file beside a session folder `x/`) show their
    file's extension: `x.json`, `x.jsonl`, while the folder keeps its name. Keys stay as they are
    (made from the names before, they must not move)."""
    seen: dict[tuple[str, str], list[SessionRef]] = {}
    for r in refs:
        seen.setdefault((r.root, r.label), []).append(r)
    for same in seen.values():
        if len(same) < 2:
            continue
        for r in same:
            r.clash = True
            name = os.path.basename(r.path)
            if name != SESSION_FILE:
                r.label += name[name.rindex("."):] if "." in name else ""


def _label(name: str) -> str:
    return name or "session"


def main_label(path: Path) -> str:
    """The name a session is known by from its main file: its folder's when the file stands for
    its folder (messages.jsonl, a format's events file: Copilot CLI's events.jsonl), else its stem."""
    name = compressed.plain_name(path.name)  # (x.jsonl.zst is known as x)
    return _label(path.parent.name if name == SESSION_FILE or name in formats.FOLDER_FILES
                  else Path(name).stem)


def _key_of(root: Path, path: str, label: str) -> tuple[str, str | None]:
    """A session's key within its root (see keys.py), and the older key it may also be found by.

    A `.json` document gives way to a transcript of the same name beside it (`x.jsonl`, or a
    session folder `x/`): it takes the marked form, which is a function of its own path alone.
    While it has the plain key, that marked form is kept as an alias, so a link made while the
    namesake existed still opens it after the namesake is gone."""
    top = str(root) + os.sep
    identity = path[len(top):] if path.startswith(top) else os.path.basename(path)
    parts = label.split("/")
    if not path.endswith(".json"):
        return keys.session_key(parts, identity), None
    base = path[:-5]
    gives_way = os.path.lexists(base + ".jsonl") or os.path.lexists(os.path.join(base, SESSION_FILE))
    marked = keys.session_key(parts, identity, plain_ok=False)
    if gives_way:
        return marked, None
    key = keys.session_key(parts, identity)
    return key, (marked if marked != key else None)


_COMPANION_TESTS = [a.is_companion for a in formats.ADAPTERS if hasattr(a, "is_companion")]


def _is_companion(path: str) -> bool:
    return any(test(path) for test in _COMPANION_TESTS)
