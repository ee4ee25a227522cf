"""The per-session index: one sequential pass over a session's files, nothing of their content kept.

For every event it keeps what pages and streams need without reading the file again: byte offset
and length, line, stable id, role, kind, author, timestamp, hidden flag, and which kinds of content it
holds (text, thinking; a real user prompt with its first words) so that filters and the outline
never re-read the file. Next to the columns sit the tool-call
state map and the session summary. Pages read windows of events by offset; the live tail extends
the index from the last offset; the cache stores it as plain data.

Stable ids: the source's own id when it is valid and unique within the session, else `L<line>`
(prefixed by the thread for sub-agent files). Ids are assigned in file order and never change when
the file grows, so a permalink stays valid while a session is live.

A session is a main transcript plus companion threads (Claude Code sub-agent files, the sessions of
a Wolo session's sub-agents). Each file is a `ThreadIndex`; the tool-call map spans them so a Task
call in the main file links to the sub-agent thread it spawned (named by the companion's metadata,
or matched by the format's `spawning_calls` when nothing names it).
"""

from __future__ import annotations

import bisect
import itertools
import logging
import os
import re
import secrets
import sys
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from . import compressed, docstream, files, formats, keys, reader
from .packed import IdMap, Strings, Texts
from .formats import detect, hook, rowfold, streamed, wrapped
from .formats.common import unparsed_event
from .model import BACKGROUND, COMPLETED, ENDED, ERROR, EXECUTING, FAILED_UNREPORTED, INTERRUPTED, RUNNING_ON, \
    STOPPED_UNREPORTED, UNREPORTED, Digest, Event, Ref, SessionSummary
from .toolcalls import Renamed, ToolCallMap, rename
from .usage import SESSION_TOTALS, Tally, compact_tools, current

log = logging.getLogger(__name__)

INDEX_VERSION = 50  # raised when what the index holds changes: its layout, or how a format is read
NAN = float("nan")
UNPARSED_PREVIEW = reader.UNPARSED_PREVIEW
TRUNCATED_GRACE = 30.0  # seconds a partial last line may wait for its newline before it is "bad"
PROGRESS_STEP = 1 << 20  # bytes between two progress reports of a pass
# a big document read a record at a time is checked, this many records at a time, to be read as
# its records themselves, with this many of the stretch before (`_stream_document`)
STREAM_WINDOW, STREAM_OVERLAP = 512, 32
HEAD_BYTES = 256 << 10  # of a file, read for a region's title and start time
AHEAD_BYTES = 4 << 20  # a pass over at least this much of a file reads it ahead (reader._Ahead)
_NEVER = 1 << 62
_ID_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:~-]{0,127}")
_SYNTHETIC = re.compile(r"(.+\.)?L\d+(~\d+)?")
_LINE = re.compile(r"L([1-9]\d*)")
_BOUNDARY_KINDS = {"result", "interrupt", "system:client_launched", "system:interrupt"}
# what an event holds, one bit each in `ThreadIndex.content` (filters read these, not the file)
TEXT, THINKING, PROMPT = 1, 2, 4
_SPEAKERS = {"assistant", "agent_call", "agent_response"}
# a message the summary counts: one of these roles with one of these kinds, not hidden
_MESSAGE_ROLES = {"user", "assistant", "agent_call", "agent_response"}
_MESSAGE_KINDS = {"message", "comm", "agent_call", "agent_response"}
PROMPT_PREVIEW = 160  # characters of a user prompt kept for the outline
# a sub-agent's last message is looked for among its last this many events (what follows it is
# bookkeeping: attachments, request records), and read only up to this size
LAST_MESSAGE_LOOK, LAST_MESSAGE_BYTES = 64, 4 << 20
_TURN_ROLES = {"user", "assistant", "tool", "error"}
# what a run's end (the format's `run_end`) names its call
_RUN_NAMED = {COMPLETED: UNREPORTED, ERROR: FAILED_UNREPORTED, INTERRUPTED: STOPPED_UNREPORTED}
REWIND_LOOK = 256  # records a prompt's rewind check looks through for a message it dropped


def _shared(append):
    """`append` of a column of few distinct strings, each kept once (the first object met)."""
    seen: dict = {}
    get = seen.setdefault
    return lambda v: append(get(v, v))


def epoch(dt) -> float | None:
    return None if dt is None else dt.timestamp()


@dataclass
class ThreadIndex:
    """The index of one file of a session."""

    name: str  # "main" or the sub-agent's id
    path: str
    format: str
    mode: str  # "jsonl" | "document"
    label: str = ""
    meta: dict = field(default_factory=dict)
    # identity of the file as last read
    size: int = 0
    mtime_ns: int = 0
    ino: int = 0
    # where the next read starts
    offset: int = 0
    line: int = 0
    seal: str = ""  # the bytes just before `offset`: a file rewritten in place no longer has them
    eol: str = "\n"  # the line end ("\r" for a file with CR-only line endings)
    pending: bool = False  # a partial last line waits for its newline (see TRUNCATED_GRACE)
    cut_tail: bool = False  # the last event is a last line the writer never finished
    # columns, one entry per event; numbers in compact arrays (a 4 GB session has a million events)
    ids: list = field(default_factory=list)
    offsets: array = field(default_factory=lambda: array("q"))
    lengths: array = field(default_factory=lambda: array("q"))
    lines: array = field(default_factory=lambda: array("q"))
    roles: list = field(default_factory=list)
    kinds: list = field(default_factory=list)
    ts: array = field(default_factory=lambda: array("d"))  # NaN where the event has no time
    authors: list = field(default_factory=list)  # agent / tool name, "" when none
    content: bytearray = field(default_factory=bytearray)  # TEXT | THINKING | PROMPT bits
    prompts: Texts = field(default_factory=Texts)  # seq of a real user prompt → its first words
    hidden: bytearray = field(default_factory=bytearray)
    paths: Strings = field(default_factory=Strings)  # JSON paths, documents only (packed.py)
    last_boundary: int = -1  # seq of the last turn boundary (a user prompt, a turn result)
    # what a JSONL format's lines say about the lines after them, kept between passes (the agent
    # an Agents SDK handoff gave the turn to: openai_chat.follow)
    carried: dict = field(default_factory=dict)
    # why each huge unparsed line (> reader.HUGE_LINE) is unparsed: finding out costs a pass over
    # megabytes, so it is done once per file version, not on every view
    bad: dict = field(default_factory=dict)
    # the records a rewind dropped: [first seq after the record the new prompt follows, the new
    # prompt's seq) for each prompt written under an earlier record than the last (Claude Code's
    # /rewind, Esc Esc), in file order. Found as the prompt is indexed (its parent's seq is one
    # look-up in the id map the pass holds), so a window knows what was dropped without the map
    rewinds: list = field(default_factory=list)
    # the renames of the events that name an id used again after its call's result (toolcalls:
    # "An id used again"; `get(seq)` → {the id as the record names it: the call's id}), decided
    # by the pass in file order; every read of the event applies them (`timeline`), so all see
    # the same ids. Columns, not dicts: a session that reuses ids has one for nearly every event
    renamed: Renamed = field(default_factory=Renamed)
    # a first screen of a log of API calls: the records it read, which its events are read from
    # (read_region; never in the cache: a region index is not kept)
    held: list | None = None
    # a JSONL file of wrappers read by the index itself (`SessionIndex._read_lean`): that reading,
    # its records let go, to read on as the file grows (never in the cache)
    reading: Any = None
    # a JSONL file of wrappers (`folded`): what its reading knew before each line and decided there
    # (rows of `formats.wrapped.PLAN` numbers: `_Unwrap.take`), so a window's lines are read alone
    # as that reading read them (`wrapped.replay`) — a new process draws a page of a 100 MB log
    # from the page's lines, not from a reading of the whole log. With it, in `carried`: the
    # call ids each section renamed (`renames`)
    plan: array = field(default_factory=lambda: array("q"))

    def __len__(self) -> int:
        # `hidden` is appended last for each event: a reader on another thread (a live stream) that
        # sees n events here finds all their columns filled
        return len(self.hidden)

    def is_message(self, seq: int) -> bool:
        """Whether event `seq` is a message the summary counts (shown, said by a speaker)."""
        return not self.hidden[seq] and self.roles[seq] in _MESSAGE_ROLES \
            and self.kinds[seq] in _MESSAGE_KINDS

    _ARRAYS = ("offsets", "lengths", "lines", "ts")
    _SCALARS = ("name", "path", "format", "mode", "label", "meta", "size", "mtime_ns", "ino",
                "offset", "line", "seal", "eol", "pending", "cut_tail", "last_boundary", "rewinds",
                "carried")

    def dump(self, blobs: list[bytes]) -> dict:
        """Scalars and strings as JSON; numeric columns appended to `blobs` as raw bytes (loading
        a 100 MB session's index must take milliseconds, not a JSON parse of a million numbers)."""
        d = {k: getattr(self, k) for k in self._SCALARS}
        made = self.carried.get("made")
        if made is not None:
            # (the notes of a document's made records as columns, not JSON in the header: orjson
            # held some 200 MB more while it wrote a Gemini CLI recording's 170,000 of them)
            d["carried"] = {k: v for k, v in self.carried.items() if k != "made"}
            d["made"] = len(made)
            notes = Strings(made.values())
            blobs += [array("q", map(int, made)).tobytes(), notes.ends.tobytes(), bytes(notes.data)]
            del notes
        # the ids as a blob, not a JSON string: orjson reserves some ten times a long string's
        # size while it writes it (60 MB at the end of a 1 GB session's pass: its peak memory)
        d["ids"] = len(self.ids)
        blobs.append("\n".join(self.ids).encode("utf-8", "surrogatepass"))
        d["paths"] = len(self.paths)
        blobs += [self.paths.ends.tobytes(), bytes(self.paths.data)]
        d["bad"] = sorted(self.bad.items())
        # (the prompts as their packed columns: as a JSON list of [seq, text], a dataset's 200,000
        # headings and prompts took some 100 MB more while they were dumped — the server's peak)
        d["prompts"] = self.prompts.dump(blobs)
        for name in ("roles", "kinds", "authors"):
            table = list(dict.fromkeys(getattr(self, name)))
            code = {v: i for i, v in enumerate(table)}
            d[name] = table
            blobs.append(array("H", map(code.__getitem__, getattr(self, name))).tobytes())
        for name in self._ARRAYS:
            blobs.append(getattr(self, name).tobytes())
        blobs.append(bytes(self.content))
        blobs.append(bytes(self.hidden))
        d["renamed"] = self.renamed.dump(blobs)
        blobs.append(self.plan.tobytes())
        return d

    @classmethod
    def load(cls, d: dict, blobs) -> "ThreadIndex":
        th = cls(**{k: d[k] for k in cls._SCALARS if k in d})
        if d.get("made") is not None:
            seqs = array("q")
            seqs.frombytes(next(blobs))
            notes = Strings.load(next(blobs), next(blobs))
            if not len(seqs) == len(notes) == d["made"]:
                raise ValueError("index notes disagree")
            # (interned, as `streamed.note` made them: a RunState's are a few, each repeated)
            th.carried["made"] = dict(zip(map(str, seqs), map(sys.intern, notes)))
        ids = next(blobs)
        th.ids = bytes(ids).decode("utf-8", "surrogatepass").split("\n") if d["ids"] else []
        th.paths = Strings.load(next(blobs), next(blobs))
        if len(th.paths) != d["paths"]:
            raise ValueError("index paths disagree")
        th.bad = {seq: reason for seq, reason in d["bad"]}
        th.prompts = Texts.load(d["prompts"], blobs)
        for name in ("roles", "kinds", "authors"):
            table = d[name]
            codes = array("H")
            codes.frombytes(next(blobs))
            setattr(th, name, [table[c] for c in codes])
        for name in cls._ARRAYS:
            getattr(th, name).frombytes(next(blobs))
        th.content = bytearray(next(blobs))
        th.hidden = bytearray(next(blobs))
        th.renamed = Renamed.load(d["renamed"], blobs)
        th.plan.frombytes(next(blobs))
        if not (len(th.offsets) == len(th.ts) == len(th.hidden) == len(th.roles) == len(th.ids)
                == len(th.authors) == len(th.content)):
            raise ValueError("index columns disagree")
        return th


@dataclass(frozen=True)
class Region:
    """The bytes a region index read: lines beginning in [lo, hi) of a file of `size` bytes;
    `counted`: whether its line numbers (and so its `L<line>` ids) are known."""

    lo: int
    hi: int
    size: int
    counted: bool

    @property
    def whole(self) -> bool:
        return self.lo == 0 and self.hi >= self.size


@dataclass
class Change:
    """What one refresh added: new events per thread (start seq), changed calls, a reset."""

    new: dict = field(default_factory=dict)  # thread → first new seq
    calls: set = field(default_factory=set)
    reset: bool = False
    removed: bool = False
    info: bool = False  # a file beside the transcript changed what the session says of itself
    # (thread, seq) of events whose record changed in place (a row-session's: rowfold.py)
    events: set = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.new or self.calls or self.reset or self.removed or self.info or self.events)


_STATES = itertools.count(1)


class SessionIndex:
    def __init__(self, main: str | Path, fmt: str | None = None,
                 confinement: files.Confinement | None = None):
        self.main = str(main)
        self.confinement = confinement  # which files this session may open (see files.py)
        self.threads: dict[str, ThreadIndex] = {}
        self.calls = ToolCallMap()
        self.usage = Tally()
        self.summary = SessionSummary()
        self._ids: IdMap | None = IdMap()  # (packed.py)
        self.info: dict = {}  # what a format says about the session beside the transcript
        self.forced_format = fmt
        self.built_at = 0.0
        self.generation = 0  # counts rebuilds of this object
        # counts refreshes that changed calls (a background call settled with no event of its own:
        # derived figures such as the minimap's marks depend on it, order.state)
        self.calls_moved = 0
        # a number no other state of any index of this process had: new for each object and after
        # each refresh that changed anything (what a page shows may differ then; the page cache
        # keys a session's pages by it, web/pagecache.py)
        self.state = next(_STATES)
        # names the build, in memory and in the cache alike: the offsets a live page's cursor holds
        # are good for this build of the index, whatever object holds it, and no other
        self.build_id = 0
        # Hooks for whoever runs a pass (the store); None costs nothing. `sink(thread, seq, event)`
        # receives every event the pass adds (the full-text index feeds on it; a build from
        # scratch starts again at seq 0 of "main"); `progress(n)` is told every PROGRESS_STEP bytes
        # read, with the bytes read since it was last told.
        self.sink = None
        self.progress = None
        self.region: Region | None = None  # set when only a region was read (read_region)
        self._whole = False  # a big document is read whole, not a record at a time (`_NotPlain`)
        self._reading: _Streaming | None = None  # a big document's region's, kept to read on (`read_on`)
        self.redactor = None  # a redact.Redactor: every event read through the timeline is redacted
        # the times of the folders companion files appear in, as the last listing found them, and
        # when it was made (a format with companions: see `_companions_settled`)
        self._companions_seen: tuple | None = None
        # the identities of the files `info` was read from (a format's `sidecars`: legion's
        # state.json names the agent and says when it is done, and may change while the transcript
        # does not), as `_finish` last read them; None: not read yet (or no such files)
        self._sidecars_seen: tuple | None = None
        # the background calls whose work is a run the format keeps a file of (a Claude Code
        # Workflow: `workflows/<run id>.json`, written when the run ends), as (call id, path), and
        # those files' identities as `_settle_runs` last read them (None: not listed yet)
        self._run_watch: list | None = None
        self._runs_seen: tuple = ()

    @property
    def ids(self) -> dict[str, tuple[str, int]]:
        """Event id → (thread, seq). Rebuilt on first use after loading from the cache: the first
        screen of a big session does not need it."""
        if self._ids is None:
            ids = IdMap()
            for name, th in self.threads.items():
                if name == "main":
                    ids.update((eid, seq) for seq, eid in enumerate(th.ids))
                else:
                    ids.update((eid, (name, seq)) for seq, eid in enumerate(th.ids))
            self._ids = ids
        return self._ids

    # --- building ----------------------------------------------------------------------------

    @property
    def format(self) -> str:
        return self.summary.format

    def adapter(self):
        return formats.get(self.summary.format)

    def build(self) -> "SessionIndex":
        """Index every file of the session from scratch. Raises OSError if the main file is
        unreadable, detect.NotTranscript if it is not a transcript."""
        with files.confined(self.confinement):
            return self._build()

    def _build(self) -> "SessionIndex":
        try:
            self._read_afresh()
        except BaseException:
            # a pass that failed half way holds lines that may not be this file's: nothing may
            # keep them (a save queued before, a later refresh): the next pass builds afresh
            if "main" in self.threads:
                self.threads["main"].ino = -1
            raise
        self._discover_companions(Change())
        self._finish()
        return self

    def _read_afresh(self) -> None:
        # Detection reads the file's head; a file written (or swapped for another) while it is
        # read can show detection a short or empty head and the pass much more. A format left
        # undecided by a head shorter than detection reads is decided again on what is there now.
        for _ in range(3):
            seen = reader.file_identity(self.main)[0]
            found = detect.detect_file(self.main)
            fmt = self.forced_format or found.format
            self.generation += 1
            self.build_id = secrets.randbits(48) or 1
            self.state = next(_STATES)
            # the companions are listed again: a listing still current says nothing of threads
            # this build has not read yet (they were dropped with the rest)
            self._companions_seen = None
            try:
                self._read_main(fmt, found)
            except _NotPlain:  # read whole after all (the progress told starts again)
                self._whole = True
                self._read_main(fmt, found)
            if fmt != formats.FALLBACK.NAME or seen >= detect.HEAD_BYTES \
                    or self.threads["main"].offset <= seen:
                return

    def _read_main(self, fmt: str, found) -> None:
        """Index the main file from its start into a summary, call map, usage and ids of its own."""
        self.summary = SessionSummary(format=fmt)
        self.calls = ToolCallMap()
        self.usage = Tally()
        self._ids = IdMap()
        self.threads = {"main": ThreadIndex("main", self.main, fmt, found.mode, eol=found.eol)}
        self._extend(self.threads["main"], Change())

    def unchanged(self) -> bool:
        """Whether a refresh would find nothing to do, told by a look at the files alone (a stat
        each): none grew, was replaced, or holds a partial last line past its grace — and the
        format's companion files (Claude Code's sub-agents, found by listing their folders) may
        have new ones: the folders' times changed since they were listed."""
        if getattr(self.adapter(), "companions", None) is not None and not self._companions_settled():
            return False
        return identity_matches(self.files()) and self._sidecars() == self._sidecars_seen \
            and self._runs_identity() == self._runs_seen

    def _sidecars(self) -> tuple | None:
        """(size, mtime_ns, inode) of each file the format reads `session_info` from, None where
        one is missing; None for a format without such files."""
        paths = hook(self.adapter(), "sidecars", Path(self.main), default=None)
        return _identities(paths) if paths else None

    def _companion_folders(self) -> tuple | None:
        """The modification times (None: absent) of the folders a new companion file would change
        (adding or removing a file changes its folder's time; appending to one does not)."""
        folders = hook(self.adapter(), "companion_folders", Path(self.main), default=None)
        if folders is None:
            return None
        times = []
        for folder in folders:
            try:
                times.append(os.stat(folder).st_mtime_ns)
            except OSError:
                times.append(None)
        return tuple(times)

    def _companions_settled(self) -> bool:
        """Whether listing the companions again would find what the last listing found: their
        folders' times are as they were then, and the newest is older than RACY_NS before that
        listing (a file added within the same tick of the clock as a listing made just before it
        leaves its folder's time as the listing saw it)."""
        seen = self._companions_seen
        if seen is None:
            return False
        times, listed_ns, metas = seen
        newest = max((t for t in (*times, *(m[1] for m in metas if m)) if t is not None), default=0)
        if listed_ns - newest < RACY_NS:
            return False
        return self._companion_folders() == times and self._companion_metas() == metas

    def _companion_metas(self) -> tuple:
        """(size, mtime_ns, inode) of each companion's metadata file (None: absent, or none in the
        format): written in place, a `.meta.json` changes no folder's time, and one read half
        written (or before the field an agent's end adds) must be read again when it changes."""
        adapter = self.adapter()
        if getattr(adapter, "companion_meta", None) is None:
            return ()
        return _identities(hook(adapter, "companion_meta", Path(th.path))
                           for name, th in list(self.threads.items()) if name != "main")

    def refresh(self) -> Change:
        """Bring the index up to date with the files: extend what grew, rebuild what was replaced."""
        with files.confined(self.confinement):
            return self._refresh()

    def _refresh(self) -> Change:
        change = Change()
        try:
            ident = reader.file_identity(self.main)
        except FileNotFoundError:
            change.removed = True
            return change
        for th in list(self.threads.values()):
            try:
                size, mtime_ns, ino = ident if th.name == "main" else reader.file_identity(th.path)
            except FileNotFoundError:
                if th.name == "main":
                    change.removed = True
                    return change
                continue
            if (size, mtime_ns, ino) == (th.size, th.mtime_ns, th.ino):
                if th.pending and _grace_over(th.mtime_ns):
                    # the writer never finished its last line: now shown cut (a document not
                    # read from lines is read whole again)
                    if (th.mode == "document" and not grows(th)) or not self._extend_or_stale(th, change):
                        self._build()
                        change.reset = True
                        return change
                continue
            # a file of a few records may read as another format once more are written (a
            # MARSYS agent's first line is a plain chat message): decided again on its head
            # (a format others' first lines do not look like is not: detection decodes the head)
            undecided = len(th) < detect.HEAD_RECORDS and th.name == "main" and (
                th.format == formats.FALLBACK.NAME
                or (th.format in detect.PLAIN and self._detected_otherwise(th)))
            # a last line shown as truncated that the writer now continues is read again whole;
            # a document too, unless it is a JSONL file of wrappers read on as it grows (`folded`)
            rows = "rows" in th.carried  # (a row-session: read on from its fold, no bytes to seal)
            if ino != th.ino or (th.mode == "document" and not grows(th) and not rows) \
                    or (not rows and (size < th.offset or not _sealed(th))) \
                    or undecided or th.cut_tail or _tail_went_on(th) \
                    or not self._extend_or_stale(th, change):
                self._build()
                change.reset = True
                return change
        self._discover_companions(change)
        if self._sidecars() != self._sidecars_seen:
            change.info = True
        if not change and self._runs_identity() != self._runs_seen:
            # a run's file came or changed, and nothing else did: only the runs are read (the
            # whole `_finish` would unpack every call of an index loaded from the cache)
            self._settle_runs(change)
        if change:
            self._finish(change)
        if change.calls:
            self.calls_moved += 1
        if change:
            self.state = next(_STATES)
        return change

    def _detected_otherwise(self, th: ThreadIndex) -> bool:
        """Whether detection now reads the main file as another format, mode or line end than
        the index did (a short head, read again: only while the file holds few records)."""
        if self.forced_format:
            return False
        try:
            found = detect.detect_file(th.path)
        except (OSError, detect.NotTranscript):
            return False  # (said by the pass that reads it)
        return (found.format, found.mode, found.eol) != (th.format, th.mode, th.eol)

    def _discover_companions(self, change: Change) -> None:
        if self._companions_settled():
            return  # (a listing of a big projects folder, on every request for the session)
        times, listed_ns = self._companion_folders(), time.time_ns()
        self._companions_seen = None
        unsure = False  # a companion too new to tell its format: the listing is made again
        for agent, path, meta in hook(self.adapter(), "companions", Path(self.main), default=[]):
            name = keys.thread_key(str(agent))  # the id from a file name: made safe for URLs
            if name in self.threads:
                self._new_meta(self.threads[name], agent, meta, change)
                continue
            try:
                fmt = detect.detect_file(path)
            except (OSError, detect.NotTranscript):
                unsure = unsure or _just_begun(path)
                continue
            if fmt.format == "unknown" and _just_begun(path):
                # (its first line not yet whole: read now, a document-mode companion — a Gemini
                # CLI sub-agent's log — would be read line by line for good)
                unsure = True
                continue
            self._add_companion(name, agent, path, meta, fmt, change)
        if getattr(self.adapter(), "spawning_calls", None) is not None:
            self._link_spawns(change)
        # (the metadata files as they are after the listing read them: one written meanwhile is
        # newer than the listing, which `_companions_settled` does not trust)
        if times is not None and not unsure:
            self._companions_seen = (times, listed_ns, self._companion_metas())

    def _add_companion(self, name: str, agent, path, meta, fmt, change: Change) -> ThreadIndex:
        """Read a companion file (`fmt`: as detected) into a thread of its own, linked to the call
        its metadata names (a Claude Code sub-agent's `.meta.json` `toolUseId`)."""
        label = hook(self.adapter(), "thread_label", agent, meta, default=agent)
        th = ThreadIndex(name, str(path), self.summary.format, fmt.mode, label, meta, eol=fmt.eol)
        self.threads[name] = th
        self._extend(th, change)
        parent = meta.get("toolUseId") if isinstance(meta, dict) else None
        if isinstance(parent, str) and (call := self.calls.call(parent)):
            call.subthread = name
            change.calls.add(parent)
        return th

    def read_companion(self, agent, path, meta, parent: str) -> ThreadIndex | None:
        """A region's (`read_region`) sub-agent: the companion file at `path` read whole into a
        thread linked to the call that spawned it (`parent`), which the region holds — as the
        full index reads and links it (a first screen around a sub-agent's event:
        viewer/partial.py). None when the region does not hold that call or the file is no
        transcript."""
        call = self.calls.call(parent)
        if call is None or call.call is None or call.call[0] != "main":
            return None
        with files.confined(self.confinement):
            try:
                fmt = detect.detect_file(path)
            except detect.NotTranscript:
                return None
            th = self._add_companion(keys.thread_key(str(agent)), agent, path, dict(meta), fmt, Change())
        call.subthread = th.name
        th.meta.setdefault("parent_call", parent)
        return th

    def _link_spawns(self, change: Change) -> None:
        """Companions whose metadata names no call (a Wolo sub-agent's session): the format's
        `spawning_calls` matches them to calls. A call that spawned several (a Wolo batch) gets
        them as a group, kept in each thread's meta (`spawn_group`) as a Workflow's run is."""
        threads = {n: th.meta for n, th in self.threads.items() if n != "main"}
        if not threads:
            return
        found = hook(self.adapter(), "spawning_calls", threads, self.calls.calls, default={}) or {}
        by_call: dict[str, list[str]] = {}
        for name, cid in found.items():
            by_call.setdefault(cid, []).append(name)
        for cid, names in by_call.items():
            call = self.calls.call(cid)
            if call is None:
                continue
            if len(names) == 1:
                sub = names[0]
            else:
                sub = keys.thread_key(f"spawn-{cid}")
                for name in names:
                    self.threads[name].meta["spawn_group"] = sub
            if call.subthread != sub:
                call.subthread = sub
                change.calls.add(cid)

    def _new_meta(self, th: ThreadIndex, agent, meta, change: Change) -> None:
        """A known companion's metadata as listed now: a sub-agent's `.meta.json` (its type, its
        task, the call that spawned it) may be written after its transcript was found."""
        own = {k: v for k, v in th.meta.items() if k not in ("parent_call", "spawn_group")} if isinstance(
            th.meta, dict) else th.meta
        if meta == own:
            return
        th.meta = dict(meta) if isinstance(meta, dict) else meta
        th.label = hook(self.adapter(), "thread_label", agent, meta, default=agent)
        parent = meta.get("toolUseId") if isinstance(meta, dict) else None
        if isinstance(parent, str) and (call := self.calls.call(parent)):
            call.subthread = th.name
            change.calls.add(parent)
        change.info = True

    def _extend_or_stale(self, th: ThreadIndex, change: Change) -> bool:
        """`_extend`; False when the thread must be read again whole instead (a JSONL file of
        wrappers whose reading, `formats.wrapped.Fold`, is not the one the index went on from)."""
        try:
            self._extend(th, change)
        except _Stale:
            return False
        return True

    def _extend(self, th: ThreadIndex, change: Change) -> None:
        try:
            size, mtime_ns, ino = reader.file_identity(th.path)
            with files.open_file(th.path) as f:
                start = len(th)
                torn, read = False, None
                if th.mode == "document":
                    read = self._read_document(th, f, change)
                else:
                    torn = self._read_lines(th, f, size, mtime_ns)
        except OSError as e:
            if th.name == "main":
                raise
            log.warning("cannot read %s: %s", th.path, e)
            return
        if read is not None:  # the file as the lines read were in it (it may have grown since)
            th.size, th.mtime_ns, th.ino, th.seal = read
        else:
            th.size, th.mtime_ns, th.ino = size, mtime_ns, ino
            # a file rewritten while it was read gets no seal: the next refresh rebuilds it
            th.seal = "" if torn else _seal_of(th.path, th.offset)
        if len(th) > start:
            change.new.setdefault(th.name, start)

    def _read_lines(self, th: ThreadIndex, f, size: int, mtime_ns: int) -> bool:
        """Index the lines past th.offset. Returns True when the file no longer holds the last line
        as it was read (rewritten in place during the pass)."""
        adapter = formats.get(th.format)
        if _open_tail(th):
            # the last line was taken whole before its line end was written: the end written
            # since is that line's (counted as an empty line, it moved every later line number
            # and `L<line>` id one past a fresh read's). Anything else there makes `refresh`
            # read the file again (`_tail_went_on`)
            f.seek(th.offset)
            head, eol = f.read(2), th.eol.encode()
            if head.startswith(eol) or (head == b"\r\n" and eol == b"\n"):
                th.offset += len(eol) if head.startswith(eol) else 2
        scanner = reader.LineScanner(f, th.offset, th.line, eol=th.eol.encode(), views=True,
                                     ahead=size - th.offset >= AHEAD_BYTES)
        told = th.offset
        mark = told + PROGRESS_STEP if self.progress else _NEVER
        raw = old = None  # the last line read, and the last that began inside the known size
        # a format's digest of plain records skips building their Events (not for a sink: the
        # full-text index reads the events)
        digest = getattr(adapter, "digest", None) if self.sink is None else None
        put = self._putter(th, adapter)
        file = self._filer(th, adapter, put) if digest is not None else None
        # (a digest is of a record no `follow` reads: only Events take the wrapped way, and a
        # format with both pays nothing per digested line)
        put_event = put if (follow := getattr(adapter, "follow", None)) is None \
            else _following(put, follow, th.carried)
        loads, JSONError = orjson.loads, orjson.JSONDecodeError
        # digests are filed a batch at a time (`_filer`): the index's maps (calls, usage, ids) stay
        # in the processor's cache through a batch instead of being pushed out by every line's
        # decoding; an Event's line files the batch before it (file order is kept)
        batch: list = []
        held = batch.append
        for raw in scanner.lines():
            line, offset, length, data = raw
            if offset < size:
                old = raw
            if offset >= mark:
                self.progress(offset - told)
                told, mark = offset, offset + PROGRESS_STEP
            if data is not None:
                try:
                    value = loads(data)
                except JSONError:
                    data = bytes(data)
                    value = reader.decode(data)  # (its reason, or a lenient retry)
                if digest is not None:  # (`digested`, inlined: it runs for every line)
                    try:
                        d = digest(value)
                    except Exception:
                        d = None
                    if d is not None:
                        held((d, line, offset, length))
                        if len(batch) >= BATCH:
                            file(batch)
                        continue
            else:
                value = reader.skim(f, offset, length)
            if batch:
                file(batch)
            self._add(put_event, th, adapter, value, line, offset, length, data, f)
        if batch:
            file(batch)
        th.offset, th.line = scanner.offset, scanner.line
        if self.progress:
            self.progress(max(0, scanner.offset - told))
        torn = any(r is not None and r[3] is not None and not _still_there(f, *r[1:])
                   for r in (old, raw))
        th.pending = False
        if scanner.tail is not None:
            off, length = scanner.tail
            # a last line without its newline: complete JSON is a record; anything else waits for
            # the writer, unless the file has been quiet long enough to call it truncated. The
            # wait is re-checked by `refresh` even if the file never changes again.
            data = reader.read_bytes(f, off, length) if length <= reader.HUGE_LINE else None
            if data is not None:
                if data.endswith(b"\r") and th.eol == "\n":  # half a CRLF: the line is without it
                    data, length = data[:-1], length - 1
                value = reader.decode(data)
            elif reader.read_bytes(f, off + length - 1, 1) in (b"}", b"]"):
                value = reader.skim(f, off, length)
            else:  # a huge line still being written: not skimmed again on every refresh
                value = reader.BadLine("the line does not end a JSON value")
            if not isinstance(value, reader.BadLine) or _grace_over(mtime_ns):
                if isinstance(value, reader.BadLine):
                    value = truncated(value)
                    th.cut_tail = True
                self._add(put_event, th, adapter, value, th.line + 1, off, length, data, f)
                th.line += 1
                th.offset = off + length
            else:
                th.pending = True
        return torn

    def _read_document(self, th: ThreadIndex, f, change: Change) -> tuple | None:
        """Index a document's records; for a JSONL file of wrappers (`formats.wrapped.Fold`), those
        past the ones indexed, and returns the file's (size, mtime_ns, inode, seal) as read."""
        adapter = formats.get(th.format)
        if folded(th):  # read on (not through every format's look at the file's head)
            fold, th.reading = th.reading, None
            if fold is not None and not wrapped.kept(th.path):
                # its own reading, lean: read on over what the file gained (else — the file is no
                # longer the one it read, or its last line, read without its line end, went on — a
                # whole reading tells whether the records read stand: `_read_fold`)
                with fold.lock:
                    read_on = fold.extend(f)
                if read_on:
                    read = self._read_fold(th, adapter, fold, f)
                    fold.let_go()
                    th.reading = fold
                    return read
            fold = wrapped.lines_fold(th.path)
            if fold is None:
                raise _Stale
            return self._read_fold(th, adapter, fold, f)
        # (a file written lately is read whole and kept, as a live log's page reads it too)
        if not len(th) and not wrapped.kept(th.path) and _quiet(th.path) \
                and (fold := wrapped.lean(th.path)) is not None:
            return self._read_lean(th, adapter, fold, f)
        if not len(th) and (fold := wrapped.items_fold(th.path)) is not None:
            # a big JSON array of wrappers: its elements read as a dataset's lines are
            return self._read_lean(th, adapter, fold, f)
        rows = rowfold.fold(th.path, adapter)
        if rows is not None:
            return self._read_rows(th, adapter, rows, f, change)
        if "rows" in th.carried:
            raise _Stale  # (gone from its database: read again, which says so)
        told = wrapped.PROGRESS.set(self.progress)  # (a dataset's lines: read whole, told as read)
        try:
            # a folder's session, or a JSONL file of wrappers (an API call log), read once here:
            # `stream_plan` and `read_document` each asked, and a log not written lately (its
            # reading not kept: `wrapped.lines_fold`) was read whole twice, half of its pass
            doc = detect.folder_document(th.path)
            if doc is None:
                plan = None if self._whole else detect.stream_plan(th.path, adapter, folder=False)
                if plan is not None:
                    if len(th):
                        raise _Stale
                    self._stream_document(th, adapter, plan, f)
                    return None
                doc = detect.read_document(th.path, folder=False)
        finally:
            wrapped.PROGRESS.reset(told)
        size = f.seek(0, 2)
        if isinstance(doc, reader.BadLine):
            if len(th):
                raise _Stale
            self._add(self._putter(th, adapter), th, adapter, doc, 1, 0, size, None, f)
            return None
        records = detect.records_read(adapter, doc)
        fold = doc.get(wrapped.LINES) if isinstance(doc, dict) else None
        if isinstance(fold, wrapped.Fold) and records is fold.records:
            return self._read_fold(th, adapter, fold, f)
        if len(th):
            raise _Stale
        put = self._putter(th, adapter)
        for i, (path, rec) in enumerate(records, 1):
            self._add(put, th, adapter, rec, i, 0, size, None, f, path)
        th.offset, th.line = size, len(records)

    def _stream_document(self, th: ThreadIndex, adapter, plan: detect.StreamPlan, f,
                         hi: int | None = None) -> "_Streaming":
        """Index a big document a record at a time (`docstream`): the elements of its list
        `plan.key` (`detect.stream_plan`), each with the bytes it lies in (the timeline reads it
        again from there: `th.carried["spans"]`). A format whose records are the elements
        themselves has every STREAM_WINDOW of them checked to read as themselves
        (`detect.plain_window`, with the last few before them: a format that pairs or links
        records reads the document whole, `_NotPlain`); one with a `stream` hook makes them
        (`_Made`). What cannot be read (a document cut short, malformed past some record) is one
        unparsed record after those before it. `hi`: only the records that begin less than that
        many bytes after the list's first (a first screen's region: what comes before the list,
        a RunState's model responses, is read through, not counted). Returns the reading, which
        a region's can go on with (`_Streaming.read`)."""
        reading = _Streaming(self, th, adapter, plan, f, region=hi is not None)
        reading.read(hi)
        return reading

    def _read_fold(self, th: ThreadIndex, adapter, fold, f) -> tuple:
        """Index the records of a JSONL file of wrappers past those the thread holds: all of them
        on a first read, else only those of the lines the file gained (the Fold the thread was
        read from, read on). An event's length is its line's end: the bytes it was read from."""
        with fold.lock:  # (a page may be reading the file on: what was read up to one place)
            n, read = fold.dropped + len(fold.records), (fold.size, fold.mtime_ns, fold.ino, fold.seal.hex())
            dropped = fold.dropped
            offset, waiting = fold.offset, fold.waiting
            # (rows of the lines past those the thread's plan holds: the rows of the lines before
            # are the same in any reading of these bytes)
            plan = fold.unwrap.plan[len(th.plan):]
            renames = wrapped.packed_renames(fold.unwrap.renames)
        start = len(th)
        records, ends = fold.records, fold.ends
        # the reading may be another than the one the index read (the index came from the cache,
        # or that reading was let go, and the file was read whole again): its first records are
        # the index's when its record `start` ends where the index's does — the bytes before there
        # unchanged (`refresh` checked the seal, as for a JSONL file's append)
        if start and not (n >= start and fold.ino == th.ino and ends[start - 1] == th.lengths[start - 1]) \
                or start < dropped:
            raise _Stale  # (replaced, or rewritten, or records it lacks let go: read whole again)
        # a log of API calls names its events by where their line begins (`formats.wrapped.
        # call_log`: a first screen read from the lines it shows names them alike); as it was
        # named on its first read, whatever its first record turned out to be since
        at = th.carried.get("at", fold.logged) if start else fold.logged
        th.carried = {"fold": True, "at": at, "renames": renames}
        if fold.items:
            th.carried["items"] = True  # (a JSON array's elements: `wrapped.items_fold`)
        th.plan.extend(plan)
        put = self._putter(th, adapter)
        starts = fold.starts
        for i in range(start, n):
            path, rec = records[i - dropped]
            self._add(put, th, adapter, rec, i + 1, starts[i], ends[i], None, f, path)
        th.offset, th.line, th.pending = offset, n, waiting
        return read

    def _read_lean(self, th: ThreadIndex, adapter, fold, f) -> tuple:
        """Index a JSONL file of wrappers (a dataset's or a batch's lines, a log of API calls) from
        a new reading of it (`wrapped.lean`) a stretch of records at a time, each stretch let go
        once indexed: what the pass holds is one stretch and the reading's state (the sections
        opened, the call ids each owns), never the file's records — a whole reading held four
        times the file's size. The records and their names are those of `_read_fold` over a whole
        reading (the same `_Unwrap`, in the same order). For a finished file (one written lately
        is read whole and kept: a live log's page reads its new lines from that reading too,
        `wrapped.lines_fold`, once for both). The reading stays with the thread
        (`th.reading`), to read on as the file grows; a page reads its lines alone (`th.plan`,
        `wrapped.replay`: the reading is kept nowhere else)."""

        def drain(fold) -> None:
            # (a stretch once the file's first wrapper is known: it names a log's events by place)
            if len(fold.records) < STREAM_WINDOW or fold.first is None:
                return
            if not len(th):
                th.carried = {"fold": True, "at": fold.logged, "renames": []}
                if fold.items:
                    th.carried["items"] = True
            th.plan.extend(fold.unwrap.plan[len(th.plan):])
            put = self._putter(th, adapter)
            starts, ends, base = fold.starts, fold.ends, fold.dropped
            for j, (path, rec) in enumerate(fold.records):
                i = base + j
                self._add(put, th, adapter, rec, i + 1, starts[i], ends[i], None, f, path)
            fold.let_go()

        told = wrapped.PROGRESS.set(self.progress)  # (the bar moves as the lines are read)
        try:
            if not fold.extend(f, drain=drain):
                raise _Stale
        finally:
            wrapped.PROGRESS.reset(told)
        th.ino = fold.ino
        read = self._read_fold(th, adapter, fold, f)
        fold.let_go()
        th.reading = None if fold.items else fold  # (a document is not read on: read again whole)
        return read

    def _read_rows(self, th: ThreadIndex, adapter, fold: rowfold.RowFold, f, change: Change) -> None:
        """Index the records of a row-session (rowfold.py) past those the thread holds: all of them
        on a first read, else those its database's new rows added — the records indexed before
        kept as they are, unless one changed in place in a way the index cannot take there (see
        `_changed_rows`): the session is then read again whole. An event's offset is the version
        of its record (a card drawn of an earlier one is not shown for it: web/cards.py)."""
        with fold.lock:
            records, gen, version = list(fold.records), fold.gen, fold.version
            start = len(th)
            changed = fold.changed_since(th.carried["rows"][1]) \
                if start and th.carried.get("rows", [None])[0] == gen else None
        if start and (changed is None or len(records) < start):
            raise _Stale  # (read whole since, or its changes are no longer known)
        size = f.seek(0, 2)
        if changed:
            self._changed_rows(th, adapter, records, changed, size, change)
        put = self._putter(th, adapter)
        for i in range(start, len(records)):
            path, rec = records[i]
            self._add(put, th, adapter, rec, i + 1, 0, size, None, f, path)
        th.offset, th.line, th.pending = 0, len(records), False
        th.carried = {"rows": [gen, version]}

    def _changed_rows(self, th: ThreadIndex, adapter, records: list, changed: dict, size: int,
                      change: Change) -> None:
        """Take the records of a row-session that changed in place since the index read them: the
        session's own row (its name may title the session now, its totals have moved on), and a
        record whose event the index holds as it was (its role, kind, author, time, what it holds
        and the calls it names are the same: `_row_view`) but for the model call it now names (a
        reply's ledger row or span came after it: its usage is counted now). Anything else raises
        _Stale. Each one taken is in `change.events`: an open page draws its card again."""
        for seq, old in sorted(changed.items()):
            if seq >= len(th):
                continue
            path, rec = records[seq]
            ref = Ref(th.name, seq + 1, 0, size, path)
            new_ev, old_ev = safe_event(adapter, rec, ref), safe_event(adapter, old, ref)
            if _row_view(new_ev) != _row_view(old_ev) or (old_ev.model and old_ev.model != new_ev.model):
                raise _Stale
            ts = epoch(new_ev.timestamp)
            if old_ev.usage != new_ev.usage:
                if seq == 0 and _totals(old_ev) and _totals(new_ev):
                    self.usage.retotal(th.name, old_ev, new_ev, ts)
                elif old_ev.usage is None:
                    self.usage.observe(th.name, seq, new_ev, ts)
                else:
                    raise _Stale  # (counted already, as it was)
            elif new_ev.model and not old_ev.model:
                self.usage.observe(th.name, seq, new_ev, ts)
            if new_ev.model and new_ev.model not in self.summary.models:
                self.summary.models.append(new_ev.model)
            if seq == 0 and th.name == "main" and new_ev.kind in getattr(adapter, "TITLE_KINDS", ()):
                named = hook(adapter, "named_title", new_ev)
                if named is not None and named[0] >= self.summary.title_rank:
                    self.summary.title_rank, self.summary.title = named[0], short_title(named[1])
            change.events.add((th.name, seq))

    def _add(self, put, th, adapter, value: Any, line: int, offset: int, length: int, data, f,
             path: str | None = None) -> None:
        """Index one record (or a BadLine) as an Event, through `put` (see `_putter`)."""
        ref = Ref(th.name, line, offset, length, path)
        if isinstance(value, reader.BadLine):
            if length > reader.HUGE_LINE and path is None:
                th.bad[len(th.ids)] = value.reason
            ev = unparsed_event(unparsed_text(value, data, f, ref), ref, value.reason, th.format)
        else:
            ev = safe_event(adapter, value, ref)
        put(ev, epoch(ev.timestamp), line, offset, length, path)

    def _putter(self, th: ThreadIndex, adapter):
        """The function that indexes one event — or a format's Digest of one record (see
        model.Digest) — into `th`: put(ev, ts, line, offset, length, path=None). It runs for every
        line of every pass, so it is a closure over the columns' appends and the summary (one
        lookup each per pass, not per line), and calls are observed only when the event names
        some."""
        ids = self.ids
        name = th.name
        main = name == "main"
        calls, usage, s, sink = self.calls, self.usage, self.summary, self.sink
        title_kinds, named_title = getattr(adapter, "TITLE_KINDS", ()), getattr(adapter, "named_title", None)
        refused_in_words = getattr(adapter, "refused_in_words", None)  # (ToolCallMap.observe)
        a_id, a_off, a_len, a_line = th.ids.append, th.offsets.append, th.lengths.append, th.lines.append
        a_role, a_kind, a_author = th.roles.append, th.kinds.append, th.authors.append
        if th.mode == "document":
            # a document's roles and authors are strings decoded from its records, a new object
            # for each event (a 200 MB dataset: 600,000 of them, 40 MB); one of each is kept
            a_role, a_kind, a_author = _shared(a_role), _shared(a_kind), _shared(a_author)
        a_content, a_ts, a_hidden, a_path = th.content.append, th.ts.append, th.hidden.append, th.paths.append
        hidden_col = th.hidden
        ok, synthetic, assign = _ID_OK.fullmatch, _SYNTHETIC.fullmatch, self._assign_id
        # a log of API calls: every event named by where its line begins, a response's id too (a
        # permalink is then found without searching the file for it: see partial.locate)
        at = th.carried.get("at")
        speakers, boundary = _SPEAKERS, _BOUNDARY_KINDS
        message_roles, message_kinds = _MESSAGE_ROLES, _MESSAGE_KINDS

        def put(ev, ts: float | None, line: int, offset: int, length: int,
                path: str | None = None) -> None:
            seq = len(hidden_col)
            sid = ev.source_id
            if sid and sid not in ids and ok(sid) and not ("L" in sid and synthetic(sid)) and not at:
                eid = sid
            else:
                eid = assign(th, ev, line, path, offset)
            if ev.__class__ is not Digest:
                ev.id = eid
            role, kind, author, hidden = ev.role, ev.kind, ev.author, ev.hidden
            a_id(eid)
            a_off(offset)
            a_len(length)
            a_line(line)
            a_role(role)
            a_kind(kind)
            a_author(author or "")
            # one look at the blocks: the kinds the filters read, and whether the call map has anything
            # to see (a line of text or thinking alone does not)
            bits, tools, uses = 0, False, False
            for b in ev.blocks:
                k = b.kind
                if k == "text":
                    bits |= TEXT
                elif k == "thinking":
                    bits |= THINKING
                elif k == "tool_use":
                    tools = uses = True
                elif k == "tool_result":
                    tools = True
            # calls named again are renamed before the event is counted in (`hidden`, below): a
            # reader on another thread that sees the event finds its renames. Only a call (a
            # tool_use) starts to use an id again: until one has, nothing else is asked
            on_calls = tools or ev.running or ev.spawns or ev.states or ev.permission is not None
            if on_calls and (uses or calls.latest or calls.waiting) \
                    and (renames := calls.again(ev, (name, seq))):
                rename(ev, renames)
                th.renamed.add(seq, renames)
            if role in speakers:
                a_content(bits)
            elif role == "user" and kind == "message":
                a_content(_content(adapter, th, seq, ev))
                if ev.follows is not None and not hidden:
                    _rewind(th, seq, ids.get(ev.follows))
            else:
                a_content(0)
            a_ts(NAN if ts is None else ts)
            if path is not None:
                a_path(path)
                if kind == "section":
                    # a conversation of a file of many (a dataset's, a batch's, an API log's: only
                    # documents have them) starts a turn of the outline, named by its heading
                    th.prompts[seq] = _heading(ev)
            # `hidden` is appended last: a reader of len(th) on another thread finds every column
            a_hidden(1 if hidden else 0)
            ids[eid] = seq if main else (name, seq)  # (packed.IdMap)
            if (role == "user" and kind == "message") or kind in boundary:
                th.last_boundary = seq
            if on_calls:
                calls.observe(ev, seq, ts, name, refused_in_words)
            # the summary
            s.events += 1
            if hidden:
                s.hidden += 1
            elif role in message_roles and kind in message_kinds:
                s.messages += 1
            if kind == "unparsed":
                s.unparsed += 1
            elif role == "error":
                s.errors += 1
            model = ev.model
            if model and model not in s.models:
                s.models.append(model)
            if model or ev.usage is not None:
                usage.observe(name, seq, ev, ts)
            if author and main and author not in s.agents:
                s.agents.append(author)
            if ts is not None:
                # (a digest is never of a zoneless time: its format leaves that record to its Event)
                if ev.__class__ is Event and ev.timestamp_assumed_utc:
                    s.zoneless = "all" if s.ended is None or s.zoneless == "all" else "some"
                elif s.zoneless == "all":
                    s.zoneless = "some"
                if main and s.started is None:
                    s.started = ts
                if s.ended is None or ts > s.ended:
                    s.ended = ts
            if main:
                if kind in title_kinds:  # a title the session was given (a /rename's)
                    named = named_title(ev)
                    if named is not None and named[0] >= s.title_rank:
                        s.title_rank, s.title = named[0], short_title(named[1])
                elif not s.title:
                    title = hook(adapter, "title_of", ev)
                    if title:
                        s.title = short_title(title)
            if sink is not None:
                sink(name, seq, ev)

        return put

    def _filer(self, th: ThreadIndex, adapter, put):
        """`file(batch)`: files a batch of digests (d, line, offset, length) in order, and empties
        it. Most lines of a long session are plain — bookkeeping the format hides, a message of
        the model, a line of tool results, a prompt: no error, no author, no state words, calls
        the map takes as they are (`ToolCallMap.plain`), an id of its own, a session that has its
        title — and such a digest is filed here, inline, as `put` would file it step by step: the
        same columns, ids, calls, usage and summary, for less per line (the pass is held to a
        share of plain JSON decoding, issue 13, and filing is most of what it spends past
        decoding). Anything else goes through `put`; `tests/test_digest.py` builds every corpus
        session both ways, and a session whose lines take every turn away from this one."""
        ids, name = self.ids, th.name
        main = name == "main"
        calls, count, s = self.calls, self.usage.count, self.summary
        plain, observe = calls.plain, calls.observe_plain
        title_kinds = getattr(adapter, "TITLE_KINDS", ())
        a_id, a_off, a_len, a_line = th.ids.append, th.offsets.append, th.lengths.append, th.lines.append
        a_role, a_kind, a_author = th.roles.append, th.kinds.append, th.authors.append
        a_content, a_ts, a_hidden = th.content.append, th.ts.append, th.hidden.append
        hidden_col = th.hidden
        ok, synthetic = _ID_OK.fullmatch, _SYNTHETIC.fullmatch
        speakers, boundary = _SPEAKERS, _BOUNDARY_KINDS
        message_roles, message_kinds = _MESSAGE_ROLES, _MESSAGE_KINDS
        inline = not th.carried.get("at")  # (a log of API calls names its events by offset)

        def file(batch: list) -> None:
            for d, line, offset, length in batch:
                sid, role, kind, ts = d.source_id, d.role, d.kind, d.ts
                blocks, running = d.blocks, d.running
                if not inline or (role == "user" and kind != "message") or role == "error" \
                        or kind == "unparsed" or d.author is not None or d.spawns or d.states \
                        or d.permission is not None or not sid \
                        or (main and (not s.title or kind in title_kinds)) or sid in ids \
                        or not ok(sid) or ("L" in sid and synthetic(sid)) \
                        or ((blocks or running) and not plain(blocks, running)):
                    if d.spawns:
                        d.spawns = _thread_keys(d.spawns)
                    put(d, ts, line, offset, length)
                    continue
                seq = len(hidden_col)
                hidden = d.hidden
                a_id(sid)
                a_off(offset)
                a_len(length)
                a_line(line)
                a_role(role)
                a_kind(kind)
                a_author("")
                bits, tools = 0, False
                for b in blocks:
                    k = b.kind
                    if k == "text":
                        bits |= TEXT
                    elif k == "thinking":
                        bits |= THINKING
                    elif k == "tool_use" or k == "tool_result":
                        tools = True
                if role == "user":  # a prompt: its first words for the outline, a rewind
                    a_content(_content(adapter, th, seq, d))
                    if d.follows is not None and not hidden:
                        _rewind(th, seq, ids.get(d.follows))
                else:
                    a_content(bits if role in speakers else 0)
                a_ts(NAN if ts is None else ts)
                a_hidden(1 if hidden else 0)
                ids[sid] = seq if main else (name, seq)  # (packed.IdMap)
                if role == "user" or kind in boundary:
                    th.last_boundary = seq
                if tools or running:
                    observe(blocks, running, (name, seq), ts)
                s.events += 1  # (no unparsed line, no error: those take `put`)
                if hidden:
                    s.hidden += 1
                elif role in message_roles and kind in message_kinds:
                    s.messages += 1
                model, usage = d.model, d.usage
                if model or usage is not None:
                    if model and model not in s.models:
                        s.models.append(model)
                    count(name, seq, model, usage, d.message_id, kind, ts)
                if ts is not None:  # (a digest's time is never zoneless: SessionSummary.zoneless)
                    if s.zoneless == "all":
                        s.zoneless = "some"
                    if s.ended is None or ts > s.ended:
                        s.ended = ts
                    if main and s.started is None:
                        s.started = ts
            batch.clear()

        return file

    def _assign_id(self, th: ThreadIndex, ev: Event, line: int, path: str | None,
                   offset: int) -> str:
        sid = ev.source_id
        if sid and sid not in self.ids and _ID_OK.fullmatch(sid) and not (
                ("L" in sid) and _SYNTHETIC.fullmatch(sid)) and not th.carried.get("at"):
            return sid
        # line 0: a region read without counting the lines before it (see read_region); a log of
        # API calls: where the record's line begins (its further records `~2`…, see `_read_fold`)
        base = f"L{line}" if line and not th.carried.get("at") else f"@{offset}"
        if th.name != "main":
            base = f"{th.name}.{base}"
        candidate, n = base, 1
        while candidate in self.ids:
            n += 1
            candidate = f"{base}~{n}"
        return candidate

    def _finish(self, change: Change | None = None) -> None:
        """Derived figures and links that need the whole session."""
        s = self.summary
        runs = self._runs()
        running_on = []
        for call in self.calls.calls.values():
            if call.subthread and call.subthread in self.threads:
                self.threads[call.subthread].meta.setdefault("parent_call", call.id)
                if call.named == BACKGROUND or call.named == UNREPORTED:
                    running_on.append(call)
            elif call.subthread in runs:
                for name in runs[call.subthread]:
                    self.threads[name].meta.setdefault("parent_call", call.id)
        if running_on:
            self._settle_background(running_on, change)
        self._settle_runs(change)
        self._settle_failed(change)
        step = getattr(self.adapter(), "STEP_KIND", None)  # a trace's agent steps (MARSYS)
        if step:  # (columns only, and only for a format that writes steps: traces are small)
            s.steps = sum(1 for th in self.threads.values()
                          for k, h in zip(th.kinds, th.hidden) if k == step and not h)
        s.tool_calls = len(self.calls.calls)
        s.orphans = len(self.calls.orphans)
        s.errors = sum(th.roles.count("error") for th in self.threads.values()) + self.calls.errors()
        s.usage = self.usage.summary()
        s.tools = compact_tools(self.calls.calls.values())
        s.tool_time = round(sum(t[2] for t in s.tools.values()), 3)
        self._sidecars_seen = self._sidecars()  # (before they are read: a change meanwhile shows)
        self.info = hook(self.adapter(), "session_info", Path(self.main), default={}) or {}
        if self.info.get("agent") and self.info["agent"] not in s.agents:
            s.agents.insert(0, self.info["agent"])
        model = self.info.get("model")  # a model the session's own files name beside it
        if isinstance(model, str) and model and model not in s.models:
            s.models.append(model)
        s.parent = self.info.get("parent_path") or ""
        self._info_title()
        status = self.info.get("status")
        s.status = status if isinstance(status, str) else ""
        self.built_at = time.time()

    def _info_title(self) -> None:
        """A name the format's files beside the transcript give the session (`session_info`'s
        `title`, of rank `title_rank`: Copilot CLI's workspace.yaml), over its first prompt and
        a title of a lower rank its records give."""
        title, rank = self.info.get("title"), self.info.get("title_rank", 1)
        if isinstance(title, str) and title.strip() and isinstance(rank, int) \
                and rank >= self.summary.title_rank:
            self.summary.title_rank, self.summary.title = rank, short_title(title)

    def _settle_background(self, calls: list, change: Change | None) -> None:
        """Background calls whose sub-agent is evidently done by its own files (the format's
        `agent_finished`: its metadata, the last message of its transcript), though no word of its
        end reached the session (the session ended or was killed first, or the word is still on its
        way), are completed, named UNREPORTED, at the time of the agent's last message; one whose
        agent writes on (someone wrote to it again) runs in the background again. A function of the
        files as they are now, so a live tail and one read agree; the word that comes later (a task
        notification) names the real end (`toolcalls._move`)."""
        judge = getattr(self.adapter(), "agent_finished", None)
        if judge is None:
            return
        for call in calls:
            done, at = self._agent_end(self.threads[call.subthread], judge)
            if done and call.named == BACKGROUND:
                call.status, call.named, call.is_error, call.finished_at = COMPLETED, UNREPORTED, False, at
            elif not done and call.named == UNREPORTED:
                call.status, call.named, call.finished_at = EXECUTING, BACKGROUND, None
            else:
                continue
            if change is not None:
                change.calls.add(call.id)

    def _watched_runs(self) -> list:
        """(call id, the run's file) of each call running in the background whose work is a run,
        not a thread (its `subthread` names the run: a Claude Code Workflow's)."""
        adapter = self.adapter()
        if getattr(adapter, "run_file", None) is None:
            return []
        out = []
        for cid, named, sub in self.calls.named_rows():
            if named in RUNNING_ON and sub and sub not in self.threads:
                p = hook(adapter, "run_file", Path(self.main), sub)
                if p is not None:
                    out.append((cid, p))
        return out

    def _runs_identity(self) -> tuple:
        """(size, mtime_ns, inode) of each watched run's file, None where there is none yet: the
        file is written in place of none when the run ends, a change no transcript shows."""
        if self._run_watch is None:  # (an index loaded from the cache)
            self._run_watch = self._watched_runs()
        return _identities(p for _, p in self._run_watch)

    def _settle_runs(self, change: Change | None) -> None:
        """Background calls whose run's own file says it ended (the format's `run_end`: a Workflow
        run's `workflows/<run id>.json` says completed, failed or killed) though no task
        notification reached the session are completed, named UNREPORTED, failed, named
        FAILED_UNREPORTED, or stopped (killed), named STOPPED_UNREPORTED, at the time the file gives; while the file says nothing of an end (absent,
        running, half written) they run in the background. As `_settle_background`, a function of
        the files as they are now; the notification that comes later names the real end."""
        self._run_watch = self._watched_runs()
        self._runs_seen = self._runs_identity()  # (before they are read: a change meanwhile shows)
        judge = getattr(self.adapter(), "run_end", None)
        if judge is None:
            return
        for cid, path in self._run_watch:
            call = self.calls.call(cid)
            if call is None:
                continue
            try:
                end = judge(path)
            except Exception:  # (an adapter's mistake must not stop the index)
                log.exception("run_end failed on %s", path)
                end = None
            if end is None:
                if call.named == BACKGROUND:
                    continue
                call.status, call.named, call.is_error, call.finished_at = EXECUTING, BACKGROUND, False, None
            else:
                how, at = end
                named = _RUN_NAMED.get(how, FAILED_UNREPORTED)
                if (call.named, call.finished_at) == (named, at):
                    continue
                status = COMPLETED if how == COMPLETED else ERROR
                call.status, call.named, call.is_error, call.finished_at = status, named, status == ERROR, at
            if change is not None:
                change.calls.add(cid)

    def _settle_failed(self, change: Change | None) -> None:
        """Calls whose result says they completed while their sub-agent's own session says its run
        failed (the format's `agent_failed`: a Wolo task whose sub-agent's model call failed) are
        errors. Asked only of returned calls (the sub-agent's run is over) and only upgrades: a
        result rebuilt from the files starts from what they say again."""
        judge = getattr(self.adapter(), "agent_failed", None)
        if judge is None:
            return
        threads = self.threads
        for call in self.calls.calls.values():
            if call.subthread is None or call.status != COMPLETED or call.named:
                continue
            # (a Wolo batch that ran several sub-agents: one of them failing fails the batch)
            subs = [threads[s] for s in self.subthreads(call) if s in threads]
            if not subs or any(th.pending for th in subs):
                continue
            try:
                failed = any(judge(th) for th in subs)
            except Exception:  # (an adapter's mistake must not stop the index)
                log.exception("agent_failed failed on %s", subs[0].path)
                failed = False
            if failed:
                call.status, call.is_error = ERROR, True
                if change is not None:
                    change.calls.add(call.id)

    def _agent_end(self, th: ThreadIndex, judge) -> tuple[bool, float | None]:
        """(whether the sub-agent of `th` is done, the time of its last message): one line read."""
        if th.pending:  # its last line is still being written
            return False, None
        n = len(th)
        roles, hidden = th.roles, th.hidden
        seq = next((i for i in range(n - 1, max(-1, n - 1 - LAST_MESSAGE_LOOK), -1)
                    if not hidden[i] and roles[i] in _TURN_ROLES), None)
        rec = None  # (a line that does not decode is a BadLine, no record: not done)
        if seq is not None and roles[seq] == "assistant" and th.mode == "jsonl" \
                and th.lengths[seq] <= LAST_MESSAGE_BYTES:
            try:
                with files.open_file(th.path) as f:
                    rec = reader.read_line(f, th.offsets[seq], th.lengths[seq])
            except OSError:
                rec = None
        try:
            done = bool(judge(th.meta, rec))
        except Exception:  # (an adapter's mistake must not stop the index)
            log.exception("agent_finished failed on %s", th.path)
            done = False
        if not done:
            return False, None
        at = seq if seq is not None else n - 1
        ts = th.ts[at] if at >= 0 else NAN
        return True, None if ts != ts else ts

    # --- reading -----------------------------------------------------------------------------

    def locate(self, event_id: str) -> tuple[str, int] | None:
        return self.ids.get(event_id)

    def written(self) -> float:
        """When any file of the session was last written (epoch seconds, as last read): what its
        page's "live" badge asks. A compressed archive's time is when it was compressed, not a
        write of the session: it counts for nothing (0 when all are archives: never live)."""
        return max((th.mtime_ns for th in self.threads.values()
                    if not compressed.is_compressed(th.path)), default=0) / 1e9

    def finished(self) -> bool:
        """Whether the agent is done: the files have been quiet a long while, or the source says so
        and nothing has been written for a minute (a stale "terminated" must not end a live run)."""
        quiet = time.time() - max((th.mtime_ns for th in self.threads.values()), default=0) / 1e9
        return quiet > QUIET_FINISHED or (bool(self.info.get("finished")) and quiet > 60.0)

    def subthreads(self, call) -> list[str]:
        """The threads a call spawned: its sub-agent, or the agents of the run it started (a
        Claude Code Workflow: its `subthread` is the run, and each agent's metadata names the run)."""
        sub = call.subthread
        if not sub:
            return []
        if sub in self.threads:
            return [sub]
        return self._runs().get(sub, [])

    def _runs(self) -> dict[str, list[str]]:
        """Run key → the threads of that run, in the order they were found."""
        runs: dict[str, list[str]] = {}
        for name, th in self.threads.items():
            run = th.meta.get("workflowRun") if isinstance(th.meta, dict) else None
            if isinstance(run, str):
                runs.setdefault(keys.thread_key(run), []).append(name)
            group = th.meta.get("spawn_group") if isinstance(th.meta, dict) else None
            if isinstance(group, str):
                runs.setdefault(group, []).append(name)
            # the name the spawning call's output gives the thread when it gives no id of it
            # (Codex's multi-agent v2: its agent path)
            spawned = th.meta.get("spawned_as") if isinstance(th.meta, dict) else None
            if isinstance(spawned, str):
                runs.setdefault(keys.thread_key(spawned), []).append(name)
        return runs

    def unanswered(self, call) -> bool:
        """A call with no result that will not get one: the session ended or moved past it. A call
        the source says was denied, interrupted or cancelled has ended already: it is not one."""
        if self.resolving(call):
            return False
        return self.moved_past(call.call, call.result, named=call.named)

    def moved_past(self, where, result, finished: bool | None = None, named: str | None = None) -> bool:
        """`unanswered` for a call given by where it sits, where its result is and its named state
        (filters read these from the cache's columns without building each call)."""
        if result is not None or where is None or named in ENDED:
            return False
        thread, seq = where
        th = self.threads.get(thread)
        if finished is None:
            finished = self.finished()
        return finished or (th is not None and th.last_boundary > seq)

    def resolving(self, call) -> bool:
        """A call of a region (see `read_region`) whose result may lie past what was read."""
        r = self.region
        return r is not None and call.result is None and call.call is not None and r.hi < r.size

    # --- a region alone: the first screen before the index ------------------------------------

    def read_region(self, lo: int, hi: int, line: int = 0, found=None) -> "SessionIndex":
        """Index only the lines of the main file that begin in [lo, hi); `lo` must begin a line.
        `line`: the number of lines before `lo` when known (always when lo is 0). Ids are those the
        full index will give, except that an event without a usable source id in a region whose
        lines were not counted is named `@<offset>`, and that a source id repeated before the
        region cannot be known here (see viewer/partial.py). Title and start time come from the
        head of the file. `found`: the file's detected format, when the caller has it. Raises
        OSError, detect.NotTranscript, or ValueError for a document."""
        with files.confined(self.confinement):
            found = found or detect.detect_file(self.main)
            if found.mode != "jsonl":
                if wrapped.call_log(self.main):
                    return self._read_call_log_region(lo, hi, found)
                if lo:
                    raise ValueError("a JSON document is read whole but from its start")
                if wrapped.lines_file(self.main):
                    return self._read_lines_region(hi, found)
                if (fold := wrapped.items_fold(self.main, stop=hi)) is not None:
                    return self._read_items_region(fold, found)
                return self._read_document_region(hi, found)
            fmt = self.forced_format or found.format
            size, mtime_ns, ino = reader.file_identity(self.main)
            counted = lo == 0 or line > 0
            with files.open_file(self.main) as f:
                head = _head(self.main, fmt, found.eol, f, min(lo, HEAD_BYTES)) if lo else None
                self.summary = SessionSummary(format=fmt)
                th = ThreadIndex("main", self.main, fmt, "jsonl", size=size, mtime_ns=mtime_ns,
                                 ino=ino, offset=lo, line=line, eol=found.eol)
                self.threads = {"main": th}
                adapter = formats.get(fmt)
                put = self._putter(th, adapter)
                if (follow := getattr(adapter, "follow", None)) is not None:
                    # as the full pass reads them (a region further on knows no handoff before
                    # it, nor legion's running cost: `from_middle` says so, and a format whose
                    # events then read otherwise than the full index's sets `needs_before`)
                    if lo:
                        th.carried["from_middle"] = True
                    put = _following(put, follow, th.carried)
                scanner = reader.LineScanner(f, lo, line, eol=th.eol.encode())
                for raw in scanner:
                    if raw.offset >= hi:
                        th.offset = raw.offset  # the region ends where this line begins
                        break
                    value = reader.decode(raw.data) if raw.data is not None else reader.skim(
                        f, raw.offset, raw.length)
                    self._add(put, th, adapter, value, raw.line if counted else 0, raw.offset,
                              raw.length, raw.data, f)
                    th.line = raw.line if counted else 0
                else:
                    th.offset = scanner.offset  # the end of the file's last whole line
            if head is not None:
                self.summary.title, self.summary.started = head.title, head.started
            self.region = Region(lo, th.offset, size, counted)
            self.info = hook(self.adapter(), "session_info", Path(self.main), default={}) or {}
            self._info_title()
        return self

    def _read_document_region(self, hi: int, found) -> "SessionIndex":
        """`read_region` of a big document read a record at a time (`detect.stream_plan`): its
        records that begin before `hi`, named as the full index names them (it reads them the
        same way, in the same order). Raises ValueError for a document read whole."""
        fmt = self.forced_format or found.format
        adapter = formats.get(fmt)
        plan = detect.stream_plan(self.main, adapter)
        if plan is None:
            raise ValueError("a JSON document is read whole")
        size, mtime_ns, ino = reader.file_identity(self.main)
        self.summary = SessionSummary(format=fmt)
        th = ThreadIndex("main", self.main, fmt, "document", size=size, mtime_ns=mtime_ns, ino=ino)
        self.threads = {"main": th}
        try:
            with files.open_file(self.main) as f:
                # (read through a handle: the reading goes on later through the file opened again)
                reading = self._stream_document(th, adapter, plan, reader.Handle(f), hi=hi)
        except _NotPlain:
            raise ValueError("a JSON document is read whole") from None
        self.region = Region(0, th.offset, size, True)
        self.info = hook(adapter, "session_info", Path(self.main), default={}) or {}
        self._reading = reading if reading.goes_on else None
        return self

    def read_on(self, hi: int) -> bool:
        """A big document's region (`_read_document_region`) read on from where it stopped: its
        records that begin less than `hi` bytes after its list's first. False when it cannot be
        (it read to the document's end, the file is no longer the one it read, or its records
        are found to read otherwise past where it stopped: a page then reads the region again
        from the document's start)."""
        reading = self._reading
        th = self.threads.get("main")
        if reading is None:
            return False
        with files.confined(self.confinement):
            if reader.file_identity(self.main) != (th.size, th.mtime_ns, th.ino):
                return False
            with files.open_file(self.main) as f:
                if isinstance(reading, wrapped.Fold):
                    return self._fold_on(reading, f, hi)
                reading.f.f = f
                try:
                    reading.read(hi)
                except _NotPlain:
                    self._reading = None
                    return False
        if not reading.goes_on:
            self._reading = None  # (read to the document's end: nothing to go on with)
        self.region = Region(0, th.offset, th.size, True)
        return True

    def _fold_on(self, fold: "wrapped.Fold", f, hi: int) -> bool:
        """`read_on` of a dataset's region (`_read_lines_region`, `_read_items_region`): its
        reading (`fold`) goes on with the lines, or elements, that begin before `hi`."""
        th = self.threads["main"]
        n = len(fold.records)
        with fold.lock:
            if not fold.extend(f, stop=hi):
                self._reading = None
                return False
        self._held(fold, n)
        th.offset, th.line = fold.offset, len(fold.records)
        if not fold.going:
            self._reading = None  # (read to the document's end: nothing to go on with)
        self.region = Region(0, fold.offset, th.size, True)
        return True

    def _read_lines_region(self, hi: int, found) -> "SessionIndex":
        """`read_region` from the start of a JSONL file of wrappers that is no log of API calls (a
        dataset's or a batch file's lines, one conversation each): the records of its lines that
        begin before `hi` (`formats.wrapped.head_fold`), named as the full index names them
        (`_read_fold`: by their number, in the same order)."""
        fold = self._hold(wrapped.head_fold(self.main, hi), found, at=False)
        self.threads["main"].line = len(fold.records)
        self.region = Region(0, fold.offset, self.threads["main"].size, True)
        self._reading = fold if fold.going else None
        return self

    def _read_items_region(self, fold, found) -> "SessionIndex":
        """`read_region` from the start of a big JSON array of wrappers (a dataset's
        conversations, a log of API calls kept as one document): the records of its elements that
        begin before the region's end (`fold`: `wrapped.items_fold`), named as the full index names
        them (`_read_fold`: by their number, or a log's by where their element begins)."""
        self._hold(fold, found, at=fold.logged)
        th = self.threads["main"]
        th.line = len(fold.records)
        th.carried["items"] = True
        self.region = Region(0, fold.offset, th.size, True)
        self._reading = fold if fold.going else None
        return self

    def _read_call_log_region(self, lo: int, hi: int, found) -> "SessionIndex":
        """`read_region` of a JSONL log of API calls (`formats.wrapped.region`): its records,
        named as the full index names them (`@<offset of their line>`, `~2`… for a line's
        further records)."""
        part = self._hold(wrapped.region(self.main, lo, hi), found, at=True)
        if lo:  # the title and start: the file's first call
            head = SessionIndex(self.main, self.summary.format)
            head._read_call_log_region(0, 1, found)
            self.summary.title, self.summary.started = head.summary.title, head.summary.started
        self.region = Region(lo, part.offset, self.threads["main"].size, False)
        return self

    def _hold(self, part, found, at: bool):
        """Index a region's wrapped records (`part`: a `wrapped` fold of some of the file's lines)
        into a main thread that holds them (`held`: the timeline reads them there); a log of API
        calls' (`at`) named by where their lines begin, others by their number. Returns `part`."""
        fmt = self.forced_format or found.format
        size, mtime_ns, ino = reader.file_identity(self.main)
        self.summary = SessionSummary(format=fmt)
        th = ThreadIndex("main", self.main, fmt, "document", size=size, mtime_ns=mtime_ns,
                         ino=ino, offset=part.offset, eol=found.eol)
        th.carried = {"fold": True, "at": at}
        th.held = part.records
        self.threads = {"main": th}
        self._held(part, 0)
        self.info = hook(self.adapter(), "session_info", Path(self.main), default={}) or {}
        return part

    def _held(self, part, start: int) -> None:
        """Index the records of `part` (`_hold`'s) from `start` on into the main thread (a
        dataset's region read on: `_fold_on`)."""
        th = self.threads["main"]
        adapter, at = formats.get(th.format), th.carried["at"]
        put = self._putter(th, adapter)
        for i in range(start, len(part.records)):
            path, rec = part.records[i]
            self._add(put, th, adapter, rec, 0 if at else i + 1, part.starts[i], part.ends[i], None,
                      None, path)

    def seq_at(self, offset: int, thread: str = "main") -> int:
        """The seq of the first event of a thread at or past a byte offset."""
        return bisect.bisect_left(self.threads[thread].offsets, offset)

    def at_record(self, event_id: str) -> str | None:
        """The id of a log of API calls' event that an older index named by its place, `L<n>`
        (before INDEX_VERSION 26: a permalink kept from then still opens its event), or None."""
        th = self.threads.get("main")
        m = _LINE.fullmatch(event_id)
        if th is None or not m or not th.carried.get("at") or int(m.group(1)) > len(th):
            return None
        return th.ids[int(m.group(1)) - 1]

    def at_offset(self, offset: int) -> str | None:
        """The id of the main file's event whose line begins at `offset` (links from a first
        screen name events by where they are), or None."""
        th = self.threads.get("main")
        if th is None or (th.mode != "jsonl" and not th.carried.get("at")):
            return None
        seq = self.seq_at(offset)
        return th.ids[seq] if seq < len(th) and th.offsets[seq] == offset else None

    # --- persistence -------------------------------------------------------------------------

    def files(self) -> list[tuple[str, int, int, int, bool]]:
        """(path, size, mtime_ns, inode, a partial last line waits) of every file: what
        `identity_matches` compares to tell whether the index is still current."""
        return [(th.path, th.size, th.mtime_ns, th.ino, th.pending) for th in self.threads.values()]

    def dump(self) -> bytes:
        """The index as bytes for the cache: a JSON header, then the raw columns."""
        return b"".join(self.dump_parts())

    def dump_parts(self) -> list[bytes]:
        """`dump()` in the pieces it joins."""
        blobs: list[bytes] = []
        head = self._header(blobs)
        return [len(head).to_bytes(8, "little"), head, *blobs]

    def dump_into(self, out) -> tuple[bytes, int]:
        """`dump()` with its columns written to the binary file `out` one after the other as they
        are made, none kept: (the dump's first bytes — its header —, the bytes written to `out`,
        which follow them). The cache saves a big session's index so (`IndexCache.save_index`):
        holding every part at once until it was written was the server's peak memory at the end
        of a big document's pass (some 85 MB for a 200 MB dataset, beside its index)."""
        blobs = _Spill(out)
        head = self._header(blobs)
        return len(head).to_bytes(8, "little") + head, blobs.written

    def _header(self, blobs) -> bytes:
        """The dump's header (JSON), each column appended to `blobs` (a list, or a `_Spill`)."""
        header = {
            "version": INDEX_VERSION,
            "main": self.main,
            "forced_format": self.forced_format,
            "threads": [th.dump(blobs) for th in self.threads.values()],
            "calls": self.calls.dump(blobs),
            "usage": self.usage.dump(blobs),
            "summary": summary_dump(self.summary),
            "info": self.info,
            "sidecars": self._sidecars_seen,
            "build_id": self.build_id,
            "blobs": blobs.sizes if isinstance(blobs, _Spill) else [len(b) for b in blobs],
        }
        return orjson.dumps(header)

    @classmethod
    def load(cls, data: bytes) -> "SessionIndex":
        n = int.from_bytes(data[:8], "little")
        d = orjson.loads(data[8 : 8 + n])
        if d.get("version") != INDEX_VERSION:
            raise ValueError("index format changed")
        # (views, not copies: the parts of a big session's index were all copied out of the blob
        # while it was held — twice its size at once; every loader copies what it keeps)
        pos, parts, view = 8 + n, [], memoryview(data)
        for size in d["blobs"]:
            parts.append(view[pos : pos + size])
            pos += size
        if pos != len(data):
            raise ValueError("index blob has the wrong size")
        blobs = iter(parts)
        idx = cls(d["main"], d.get("forced_format"))
        for td in d["threads"]:
            th = ThreadIndex.load(td, blobs)
            idx.threads[th.name] = th
        idx._ids = None
        idx.calls = ToolCallMap.load(d["calls"], blobs)
        idx.usage = Tally.load(d["usage"], blobs)
        idx.summary = summary_load(d["summary"])
        idx.usage.remember_costs(idx.summary.usage)
        idx.info = d.get("info") or {}
        # (the files `info` was read from, as then: without them a loaded index never looks
        # unchanged, and each new process would refresh and sum up a big session again)
        seen = d.get("sidecars")
        idx._sidecars_seen = None if seen is None else tuple(
            None if x is None else tuple(x) for x in seen)
        idx.build_id = d.get("build_id", 0)
        idx.built_at = time.time()
        return idx


class _Spill:
    """What the dumps append their columns to (`blobs.append`, `.extend`, `+=`) when the index is
    dumped into a file (`SessionIndex.dump_into`): each written at once and let go, its size kept."""

    def __init__(self, out) -> None:
        self.out, self.sizes, self.written = out, [], 0

    def append(self, blob) -> None:
        self.out.write(blob)
        self.sizes.append(len(blob))
        self.written += len(blob)

    def extend(self, blobs) -> None:
        for blob in blobs:
            self.append(blob)

    def __iadd__(self, blobs) -> "_Spill":
        self.extend(blobs)
        return self


RACY_NS = 2_000_000_000  # a folder changed this close before it was listed is listed again
QUIET_FINISHED = 600.0  # a transcript untouched this long is taken as finished


TITLE_CAP = 300


def short_title(text: str) -> str:
    """A prompt as a title: one line, at most TITLE_CAP characters, cut between words."""
    title = " ".join(text.split())
    if len(title) <= TITLE_CAP:
        return title
    cut = title[: TITLE_CAP - 1]
    space = cut.rfind(" ", TITLE_CAP // 2)
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:") + "…"


def truncated(bad: reader.BadLine) -> reader.BadLine:
    """The reason for a last line that never got its newline."""
    return reader.BadLine("truncated last line (no newline; the writer stopped mid-record): "
                          + bad.reason)
def _heading(ev) -> str:
    """A section's heading: its first notice (formats.wrapped)."""
    return next((b.text for b in ev.blocks if b.kind == "notice"), "")[:PROMPT_PREVIEW]


def _content(adapter, th: ThreadIndex, seq: int, ev: Event) -> int:
    """The TEXT / THINKING / PROMPT bits of one event. Only speakers' events are looked into (a
    Claude Code line holds one block), and only user messages are asked whether they are a real
    prompt: this runs for every line of the index pass."""
    role = ev.role
    if role in _SPEAKERS:
        bits = 0
        for b in ev.blocks:
            kind = b.kind
            if kind == "text":
                bits |= TEXT
            elif kind == "thinking":
                bits |= THINKING
        return bits
    if role == "user" and ev.kind == "message":
        prompt = hook(adapter, "title_of", ev)
        if prompt:
            th.prompts[seq] = " ".join(prompt[: PROMPT_PREVIEW * 2].split())[:PROMPT_PREVIEW]
            return TEXT | PROMPT
        return TEXT
    return 0


def _rewind(th: ThreadIndex, seq: int, parent: tuple[str, int] | None) -> None:
    """Note the range a prompt at `seq` dropped when the record it follows (`parent`: its thread
    and seq) is not the last one before it and messages lie between: the conversation went on
    from that record, and what was written after it is no longer part of it. Records written
    beside the conversation's chain (bookkeeping, local commands) are not messages: a prompt after
    them alone drops nothing. The look for a message stops after REWIND_LOOK records (a range that
    long is kept as is; a window counts its messages)."""
    if parent is None or parent[0] != th.name or parent[1] >= seq - 1:
        return
    lo = parent[1] + 1
    if seq - lo <= REWIND_LOOK and not any(th.is_message(s) for s in range(lo, seq)):
        return
    th.rewinds.append((lo, seq))


def _seal_of(path: str, offset: int) -> str:
    try:
        with files.open_file(path) as f:
            return reader.seal(f, offset).hex()
    except OSError:
        return ""


def _head(main: str, fmt: str, eol: str, f, limit: int) -> SessionSummary:
    """The summary of a file's first lines (up to `limit` bytes), for a region's title and start."""
    idx = SessionIndex(main, fmt)
    idx.summary = SessionSummary(format=fmt)
    th = idx.threads["main"] = ThreadIndex("main", main, fmt, "jsonl", eol=eol)
    adapter = formats.get(fmt)
    put = idx._putter(th, adapter)
    for raw in reader.LineScanner(f, 0, 0, eol=eol.encode()):
        if raw.offset >= limit or (idx.summary.title and idx.summary.started is not None):
            break
        if raw.data is not None:
            idx._add(put, th, adapter, reader.decode(raw.data), raw.line, raw.offset, raw.length,
                     raw.data, f)
    return idx.summary


# digests filed at a time by a JSONL pass (`SessionIndex._filer`). What a batch holds (digests, their
# blocks, its tuples) the garbage collector tracks: 256 digests (~1,000 objects) outgrew its
# youngest generation (700) once a batch, and collections of the young lead, ten to one, to those
# of the older generations, then to full ones, which walk every object of the process (four per
# 1 GB legion pass, 120–220 ms on a loaded host; two at 64)
BATCH = 64


def _still_there(f, offset: int, length: int, data) -> bool:
    """Whether the file still holds the line `data` read at `offset` (its ends, when it is long)."""
    n = 4096
    f.seek(offset)
    if length <= 2 * n:
        return f.read(length) == data
    if f.read(n) != data[:n]:
        return False
    f.seek(offset + length - n)
    return f.read(n) == data[-n:]


def _open_tail(th: ThreadIndex) -> bool:
    """Whether the last event of a JSONL thread is a last line read before its line end was
    written (complete JSON: see `_read_lines`); the offset of a line read with its end is past it."""
    n = len(th)
    return (n > 0 and th.mode == "jsonl" and not th.cut_tail
            and th.offsets[n - 1] + th.lengths[n - 1] == th.offset)


def _tail_went_on(th: ThreadIndex) -> bool:
    """Whether a last line read before its end was written has been continued by anything but its
    line end: the record read was only the start of the line (`{"a":1}` then `{"b":2}`)."""
    if not _open_tail(th):
        return False
    try:
        with files.open_file(th.path) as f:
            f.seek(th.offset)
            head = f.read(2)
    except OSError:
        return False
    eol = th.eol.encode()
    return bool(head) and not (head.startswith(eol) or (eol == b"\n" and head[:1] == b"\r"))


class _Stale(Exception):
    """A document the index cannot read on from where it stopped: it is read whole again."""


class _NotPlain(Exception):
    """A big document read a record at a time turned out to be one whose format makes its
    records otherwise than as its list's elements (`_stream_document`): it is read whole."""


SHELL_BYTES = 2 << 20  # of the elements of other lists before a streamed document's list, kept
_MISSING = object()


class _Streaming:
    """`SessionIndex._stream_document`'s reading of a big document, kept: a region's reading stops
    before the first record past its end (`hi`) and goes on from there when asked for more
    (`read` again: "Load later" next to a document's first screen reads the records past the
    window before, not the document again from its start — `SessionIndex.read_on`)."""

    def __init__(self, idx: "SessionIndex", th: ThreadIndex, adapter, plan: detect.StreamPlan, f,
                 region: bool):
        self.idx, self.th, self.adapter, self.plan, self.f = idx, th, adapter, plan, f
        start = reader.skip_bom(f)
        self.size = f.seek(0, 2)
        th.carried = {"spans": plan.key}
        self.put = idx._putter(th, adapter)
        self.shell: dict = {}
        self.window: list = []
        self.kept: list = []  # the last records of the window before (read with the next)
        self.made = _Made(idx, th, adapter, plan, self.put, f) if plan.hooked else None
        self.told = 0
        self.mark = PROGRESS_STEP if idx.progress else _NEVER
        self.n = 0
        self.begun = None  # where the list's first element begins (a region's bytes count from there)
        self.parts = _jumping(docstream.parts(f, start, self.size), f, self.size, plan, self.made,
                              0 if region else None)
        self.waiting = None  # the part a region stopped before (read first when it goes on)
        self.ended = False

    @property
    def goes_on(self) -> bool:
        """Whether the reading stopped before the document's end (a region's: it can go on). A
        format's hook (`_Made`) had the record read last indexed at the stop, as the next record
        would have had it indexed: read on, its records are those of a reading that did not stop."""
        return not self.ended

    def _flush(self) -> None:
        if not self.window:
            return
        idx, th, adapter, key = self.idx, self.th, self.adapter, self.plan.key
        values = [v for _, _, _, v in self.window]
        if not detect.plain_window(adapter, self.shell, key, self.kept + values):
            raise _NotPlain
        for n, at, length, value in self.window:
            idx._add(self.put, th, adapter, value, n + 1, at, length, None, self.f, f"{key}[{n}]")
        self.kept = values[-STREAM_OVERLAP:]
        self.window.clear()

    def read(self, hi: int | None) -> None:
        """Read on: the records that begin less than `hi` bytes after the list's first (all of
        them: None)."""
        idx, th, adapter, key, made, f = self.idx, self.th, self.adapter, self.plan.key, self.made, self.f
        size = self.size
        parts = itertools.chain([self.waiting], self.parts) if self.waiting is not None else self.parts
        self.waiting = None
        for p in parts:
            if hi is not None and self.begun is not None and p.offset - self.begun >= hi:
                self.waiting, hi = p, p.offset  # (the region ends where this record begins)
                if made is not None and self.n and not (p.item and p.key == key):
                    made.end(True)  # (the list ended before it)
                break
            if p.offset >= self.mark:
                idx.progress(p.offset - self.told)
                self.told, self.mark = p.offset, p.offset + PROGRESS_STEP
            if p.path is None:  # the rest could not be read: an unparsed record of its bytes
                self._flush()
                if made is not None:
                    made.end(False)
                th.bad[len(th.ids)] = p.value.reason
                idx._add(self.put, th, adapter, p.value, len(th) + 1, p.offset, p.length, None, f)
                self.n += 1
                break
            if p.item and p.key == key:
                if self.begun is None:
                    self.begun = p.offset
                if made is not None:
                    made.take(self.n, p)
                else:
                    self.window.append((self.n, p.offset, p.length, p.value))
                    if len(self.window) >= STREAM_WINDOW:
                        self._flush()
                self.n += 1
            elif made is not None:
                made.member(p)
            elif not p.item:
                self.shell[p.path] = p.value
            else:
                self.shell.setdefault(p.key, []).append(p.value)
        else:
            hi = None
        self._flush()
        if made is not None:
            made.end(hi is None)
            if hi is None:
                made.check()
        self.ended = hi is None or self.waiting is None
        if idx.progress:
            idx.progress(max(0, size - self.told))
        th.offset, th.line = size if hi is None else hi, len(th) if made is not None else self.n


class _Made:
    """The records a format's `stream` hook makes of a big document's list, as
    `SessionIndex._stream_document` reads its elements (formats/streamed.py): its records of the
    document's other members first (once the members before the list are read), then one per
    element. Each record that is not its element as it stands is noted in `th.carried["made"]`
    (seq → `streamed.how`, as `streamed.note`: what rebuilds it from the element's bytes). The last element's record
    is indexed once the next comes or the list ends (`end`): the format may mark the last one
    (`Streaming.last`).

    What is held of the document's other members: those before the list (the hook is given
    them), of their lists' elements no more than SHELL_BYTES (a RunState's `model_responses`,
    as long as its items: cut, and read whole only if the hook looks at them); after the list,
    only those the hook looked at (`check`: they must be what the document's end showed it)."""

    def __init__(self, idx: "SessionIndex", th: ThreadIndex, adapter, plan, put, f):
        self.idx, self.th, self.adapter, self.plan, self.put, self.f = idx, th, adapter, plan, put, f
        self.streaming: streamed.Streaming | None = None
        self.given: streamed.Watched | None = None
        self.notes: dict = th.carried.setdefault("made", {})
        self.pending: tuple | None = None  # (element index, part, path, record)
        self.shell: dict = {}  # the members before the list
        self.cut: set = set()  # lists before it whose elements were let go
        self.kept = 0  # bytes of those lists' elements held
        self.after: dict = {}  # the members after the list (of those the hook looked at)
        self.ended = False
        self.first = 0

    def member(self, p) -> None:
        """A part of the document other than an element of its list."""
        if self.streaming is None:  # before the list
            if not p.item:
                self.shell[p.path] = p.value
            elif p.key not in self.cut:
                self.kept += p.length
                if self.kept > SHELL_BYTES:
                    self.cut.add(p.key)
                    self.shell[p.key] = []
                else:
                    self.shell.setdefault(p.key, []).append(p.value)
            return
        self.end(True)  # (the list ended: its last record is known)
        if not p.item:
            self.after[p.path] = p.value
        elif self.given is None or self.given.looked_at(p.key):
            self.after.setdefault(p.key, []).append(p.value)

    def let_go(self, key: str) -> None:
        """Keep no more of the list `key` before the list read (cut: see `member`)."""
        self.cut.add(key)
        self.shell[key] = []

    def _start(self, offset: int) -> None:
        """The hook's reading, given the members before the list; its records of them."""
        try:
            self.streaming, self.given = self.plan.streaming(self.adapter, self.shell)
        except streamed.NotStreamed:
            raise _NotPlain from None
        if self.streaming is None or (self.given is not None and any(
                self.given.looked_at(k) for k in self.cut)):
            raise _NotPlain
        for path, rec in self.streaming.head:
            self._index(path, rec, offset, 0, streamed.head_how(rec))
        self.first = len(self.th)  # (the seq of the list's first element)

    def take(self, n: int, p) -> None:
        if self.streaming is None:
            self._start(p.offset)
        try:
            path, rec = self.streaming.take(n, p.value)
        except streamed.NotStreamed:
            raise _NotPlain from None
        self._flush()
        self.pending = (n, p, path, rec)
        for i, add in self.streaming.later():
            self._amend(i, add)

    def _amend(self, i: int, add: dict) -> None:
        """What element n's record says of element i's, read before (`Streaming.later`: a Gemini
        CLI rewind drops the messages before it): its note gains the links, so a page reads it
        marked (its card says it was dropped) — the index's columns are those of its event
        unmarked, the same (a notice block: no text, no call)."""
        seq = self.first + i
        key = str(seq)
        self.notes[key] = streamed.amended_note(self.notes.get(key), add)
        self.th.carried["amended"] = True  # (a first screen read before it is drawn again: web/early.py)

    def end(self, ended: bool) -> None:
        """Index the last record read; `ended`: it is the list's last."""
        if self.pending is not None and ended and not self.ended and self.streaming is not None:
            last = self.streaming.last()
            if last is not None:
                self.pending = (*self.pending[:2], *last)
        self.ended = self.ended or ended
        self._flush()

    def check(self) -> None:
        """Once the whole document is read: its records are those a whole read makes when the
        members after the list that the hook looked at are those the document's end showed it
        (else the document is read whole). A list with no element still has its head records."""
        if self.streaming is None:
            self._start(0)
        if self.given is None:
            return
        shown = self.plan.tail or {}
        for k in (set(self.after) | set(shown)) - set(self.shell) - {self.plan.key}:
            if self.given.looked_at(k) and self.after.get(k, _MISSING) != shown.get(k, _MISSING):
                raise _NotPlain

    def _flush(self) -> None:
        if self.pending is None:
            return
        n, p, path, rec = self.pending
        self.pending = None
        try:
            how = streamed.how(self.plan.key, n, p.value, path, rec)
        except ValueError:
            raise _NotPlain from None
        self._index(path, rec, p.offset, p.length, how)

    def _index(self, path: str, rec, offset: int, length: int, how) -> None:
        th = self.th
        if how is not None:
            self.notes[str(len(th))] = streamed.note(how)
        self.idx._add(self.put, th, self.adapter, rec, len(th) + 1, offset, length, None, self.f, path)


REGION_SKIP = 256 << 10  # bytes of another list a first screen reads before it looks past it


def _jumping(found, f, size: int, plan, made: "_Made | None", hi: int | None):
    """The parts of a document as a region reads them (`hi`: a first screen): when the list its
    format reads lies past another long list (a RunState's items, past its model responses, as
    long as they are), that list is read no further than REGION_SKIP bytes — cut, as the shell
    keeps a list too long (`_Made.cut`) — and the list is looked for past it
    (`docstream.find_list`) and read from there: what the first screen reads does not grow with
    the file. The index reads every part (`hi` None), as it must to know what lies between."""
    other = 0
    for p in found:
        yield p
        if hi is None or made is None or made.streaming is not None or not plan.key \
                or p.path is None or not p.item or p.key == plan.key:
            continue
        other += p.length
        if other <= REGION_SKIP:
            continue
        made.let_go(p.key)
        at = docstream.find_list(f, p.offset + p.length, size, plan.key)
        if at is not None:
            yield from docstream.list_at(f, at, size, plan.key)
        return


def _row_view(ev: Event) -> tuple:
    """What the index holds of an event of a row-session besides its usage: a record changed in
    place is taken there only when this is the same (`SessionIndex._changed_rows`)."""
    bits = tuple(sorted({b.kind for b in ev.blocks if b.kind in ("text", "thinking")}))
    calls = tuple((b.kind, getattr(b, "id", None), getattr(b, "tool_use_id", None), getattr(b, "is_error", None))
                  for b in ev.blocks if b.kind in ("tool_use", "tool_result"))
    prompt = tuple(b.text for b in ev.blocks if b.kind == "text") if ev.role == "user" else ()
    return (ev.role, ev.kind, ev.author, ev.hidden, ev.source_id, epoch(ev.timestamp), bits, calls,
            prompt, tuple(ev.running), tuple(ev.spawns), tuple(sorted(ev.states.items())),
            ev.permission is not None, ev.follows)


def _totals(ev: Event) -> bool:
    """Whether an event's usage is a session's own totals (usage.SESSION_TOTALS)."""
    return isinstance(ev.usage, dict) and SESSION_TOTALS in ev.usage


def folded(th: ThreadIndex) -> bool:
    """Whether a thread is a JSONL file of wrappers read as one document that the index reads on
    as it grows (`formats.wrapped.Fold`), not again whole."""
    return th.mode == "document" and "fold" in th.carried


def grows(th: ThreadIndex) -> bool:
    """Whether a document thread is read on as its file grows (a JSONL file of wrappers), not
    read again whole when it changes (a JSON array of them is one document: `wrapped.items_fold`)."""
    return folded(th) and not th.carried.get("items")


def _sealed(th: ThreadIndex) -> bool:
    """Whether the file still holds, before the resume offset, the bytes it held when indexed."""
    return _seal_of(th.path, th.offset) == th.seal


def _following(put, follow, carried: dict):
    """`put` for the Events of a JSONL format whose lines say something of the lines after them
    (`follow(ev, carried)` reads and marks each event before it is indexed; `carried` lasts between
    passes: an Agents SDK handoff's agent, legion's running cost). The timeline gives a line read
    again the author its index column holds. A format's digests never pass here."""

    def put_followed(ev, *args) -> None:
        follow(ev, carried)
        put(ev, *args)

    return put_followed


def unparsed_text(bad: reader.BadLine, data, f, ref: Ref) -> str:
    """What an unparsed card shows of a record that could not be read (its first UNPARSED_PREVIEW
    bytes): its line, or the file it came from (a record of a document has no bytes of its own in
    the main file)."""
    if bad.raw is not None:
        raw = bad.raw
    elif data is not None:
        raw = data
    elif f is None or ref.path is not None:
        raw = b""
    else:
        raw = reader.read_bytes(f, ref.offset, ref.length, UNPARSED_PREVIEW)
    return bytes(raw[:UNPARSED_PREVIEW]).decode("utf-8", "replace")


def safe_event(adapter, value: Any, ref: Ref) -> Event:
    """The adapter's event, or an unparsed card if the adapter itself fails on this record."""
    try:
        return _fold_empty(_checked(adapter.event(value, ref)))
    except Exception as e:  # an adapter bug must cost one card, not the session
        log.exception("adapter %s failed on %s line %s", adapter.NAME, ref.thread, ref.line)
        from .formats.common import as_text

        return unparsed_event(as_text(value)[:UNPARSED_PREVIEW], ref,
                              f"could not be read as {adapter.NAME}: {type(e).__name__}: {e}",
                              adapter.NAME)


NOT_RECORDED = "thinking not recorded"


def _fold_empty(ev: Event) -> Event:
    """A message whose blocks hold nothing to read (whitespace, thinking the provider did not
    record: a signature only) is hidden behind the toggle with its reason rather than drawn as an
    empty card; the next card of the same message says the thinking was not recorded."""
    if ev.hidden or ev.kind != "message" or ev.role not in ("assistant", "user"):
        return ev
    thinking = False
    for b in ev.blocks:
        if b.kind == "thinking" and not b.redacted and not (b.text or "").strip():
            thinking = True
        elif not (b.kind == "text" and not (b.text or "").strip()):
            return ev
    ev.hidden, ev.hidden_reason = True, NOT_RECORDED if thinking else "empty"
    return ev


_TEXT_FIELDS = ("author", "recipient", "model", "hidden_reason", "message_id", "parent")


def _checked(ev: Event) -> Event:
    """The model's promises, whatever the record held: names and labels are text."""
    if not (ev.author is None or type(ev.author) is str) or not (
            ev.recipient is None or type(ev.recipient) is str) or not (
            ev.model is None or type(ev.model) is str) or not (
            ev.message_id is None or type(ev.message_id) is str) or not (
            ev.parent is None or type(ev.parent) is str) or not (
            ev.hidden_reason is None or type(ev.hidden_reason) is str):
        for name in _TEXT_FIELDS:
            value = getattr(ev, name)
            if value is not None and type(value) is not str:  # a CutStr too: its preview, as text
                setattr(ev, name, str(value))  # (a model name keys the usage table orjson saves)
    if type(ev.role) is not str or type(ev.kind) is not str:
        ev.role, ev.kind = str(ev.role), str(ev.kind)
    if ev.source_id is not None and type(ev.source_id) is not str:
        ev.source_id = None
    if ev.spawns:
        ev.spawns = _thread_keys(ev.spawns)
    return ev


def digested(digest, value: Any) -> Digest | None:
    """A format's digest of a record (see model.Digest) made ready for the index as `safe_event`
    makes an Event ready; None when it has none (or fails on a shape it did not expect: the Event
    path then says everything, errors included)."""
    try:
        d = digest(value)
    except Exception:
        return None
    if d is not None and d.spawns:
        d.spawns = _thread_keys(d.spawns)
    return d


JUST_BEGUN = 64 << 10  # a companion file smaller than this that detection cannot tell yet is one being started


def _just_begun(path) -> bool:
    """Whether a companion file detection could not tell is small enough to be one just being
    written (its first record not yet whole): looked at again at the next listing."""
    try:
        return os.path.getsize(path) < JUST_BEGUN
    except OSError:
        return False


def _thread_keys(spawns: dict) -> dict:
    """Sub-agent threads are known by their keys (see keys.thread_key)."""
    return {cid: keys.thread_key(str(name)) for cid, name in spawns.items()}


_SUMMARY_FIELDS = ("format", "title", "started", "ended", "events", "messages", "steps",
                   "tool_calls", "errors", "hidden", "unparsed", "orphans", "models", "agents",
                   "finished", "usage", "tools", "tool_time", "parent", "title_rank", "zoneless", "status")


def summary_dump(s: SessionSummary) -> dict:
    return {k: getattr(s, k) for k in _SUMMARY_FIELDS}


def summary_load(d: dict) -> SessionSummary:
    s = SessionSummary(**{k: d[k] for k in _SUMMARY_FIELDS if k in d})
    s.usage = current(s.usage)  # priced again if the price table changed since
    return s


def _identities(paths) -> tuple:
    """(size, mtime_ns, inode) of each path, None where it is missing (or no path is given)."""
    out = []
    for p in paths:
        try:
            out.append(None if p is None else reader.file_identity(p))
        except OSError:
            out.append(None)
    return tuple(out)


def identity_matches(files: list) -> bool:
    """Whether an index built from `files` (`SessionIndex.files()`) is current: no file changed,
    and no partial last line has outlived its grace (it must now be shown as truncated)."""
    for path, size, mtime_ns, ino, *pending in files:
        try:
            now = reader.file_identity(path)  # (a session kept as a folder of files: the folder's)
        except OSError:
            return False
        if now != (size, mtime_ns, ino):
            return False
        if pending and pending[0] and _grace_over(mtime_ns):
            return False
    return True


def _quiet(path: str) -> bool:
    """Whether a file has not been written for QUIET_FINISHED: taken as finished."""
    return time.time() - reader.file_identity(path)[1] / 1e9 > QUIET_FINISHED


def _grace_over(mtime_ns: int) -> bool:
    """Whether a file last written at mtime_ns has been quiet longer than TRUNCATED_GRACE."""
    return time.time() - mtime_ns / 1e9 > TRUNCATED_GRACE
