"""Windows of a session's timeline, ready for the templates.

The timeline is the file order of events (timestamps are shown, never used to reorder). A page never
renders a whole big session: it renders a window — the latest events, a permalink's surroundings,
or the window before / after one already shown — and reads only those byte ranges. Each window
resolves its tool calls against the state map, so a call card shows its result even when the result
sits in another window, and a Task card knows the sub-agent thread it spawned.

Counting a window in *visible* events keeps a screen useful when a session is mostly hidden noise
(Claude Code progress lines can outnumber messages ten to one).
"""

from __future__ import annotations

import bisect
import dataclasses
import threading
import zlib
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from . import files, formats, reader, render, timestamps, tools
from .formats import detect, rowfold, streamed, wrapped
from .index import NOT_RECORDED, Region, SessionIndex, ThreadIndex, \
    folded, safe_event, truncated, unparsed_text
from .formats.common import unparsed_event
from .model import Event, Ref, ToolCall, ToolResult, ToolUse
from .toolcalls import rename

WINDOW = 40  # visible events per window: a few screens, not the session
LOOK_BACK = 200  # events a turn result looks back for the text it may repeat
KEEP_READS = 256  # reads of at most this many events keep them to share (_Events)
STREAM_BACK = 4  # lines back a streamed message's card looks for the start of its message
_NEAR = 256  # records looked back through for one a record names, before the session's id map
LANES = 8


@dataclass
class CallView:
    call: ToolCall
    use: ToolUse | None
    result: ToolResult | None = None
    result_event: str | None = None  # id of the event holding the result
    result_path: str = ""  # block path of the result inside that event
    unanswered: bool = False
    threads: "list[ThreadView]" = field(default_factory=list)  # the sub-agent(s) it spawned
    call_event: str | None = None  # id of the event holding the call
    result_owner: "EventView | None" = None  # the event view the result block belongs to
    target: bool = False  # a permalink to the (folded) event holding the result lands here
    resolving: bool = False  # a first screen's call or result whose other half is not read yet
    fmt: str = ""  # the session's format: how its tool names read (tools.mcp_name)

    @property
    def duration(self) -> str:
        return timestamps.span(self.call.duration)

    @property
    def thread(self) -> "ThreadView | None":
        """The first thread the call spawned (most spawn one)."""
        return self.threads[0] if self.threads else None


@dataclass
class ThreadView:
    name: str  # the thread id (a sub-agent's hex id), shown on hover
    label: str  # what the agent is: its type and task ("Explore · Find window() callers")
    count: int
    window: "WindowView | None" = None  # rendered inline (permalink target inside), else lazy
    path: str = ""  # its file (a Wolo sub-agent's is a session of its own too: the card links it)


@dataclass
class EventView:
    ev: Event
    seq: int
    path: str = ""  # block path prefix inside the event ("" for the event itself)
    lane: int = 0
    since_start: str = ""
    calls: dict = field(default_factory=dict)  # tool_use id → CallView
    refs: dict = field(default_factory=dict)  # tool_use id → CallView of a result shown elsewhere
    # tool_use id → CallView of a call whose card shows another event's result: this one came
    # after it (a result written twice), and is shown here, linked to it
    again: dict = field(default_factory=dict)
    same: set = field(default_factory=set)  # of those, the ids whose result repeats the first's
    # of those, the ids whose result is the first's with a small change (`render.near`): its
    # diff against the first (a tools.EditPart: first → this), shown before the whole output
    near: dict = field(default_factory=dict)
    target: bool = False
    continued: bool = False
    agent: str | None = None  # the name of the agent whose transcript this is, when known
    repeats: str | None = None  # id of the message whose text this turn result repeats
    # a prompt sent after the conversation was rewound: (id of the first message it left out, how
    # many messages it left out)
    rewound: tuple | None = None
    kept_from: str | None = None  # a compaction: id of the first message it kept verbatim
    # a compaction that summarized the later messages ("Summarize from here"): (id of the first
    # message it summarized, how many)
    summarized: tuple | None = None
    # a message a rewind dropped: the id of the prompt the conversation went on from instead
    dropped: str | None = None
    thought: bool = False  # the model thought before this card; the provider kept no text
    refs_only: bool = False  # holds only results that are shown with their calls
    folded: bool = False  # ...and those calls are near: drawn as nothing, its id kept
    fold_into: list = field(default_factory=list)  # the call cards (CallViews) it folds into
    thread_label: str = ""  # set when shown outside its thread (a filtered view lists sub-agents')
    at: int | None = None  # on a first screen whose ids are not final: the offset links carry
    # which build of the index the event was read from, and how (a drawn card is shared by views
    # of the same source: web/cards.py); None when not shareable (a first screen's part)
    source: tuple | None = None


@dataclass
class WindowView:
    thread: str
    start: int
    stop: int
    total: int
    events: list
    args: dict = field(default_factory=dict)  # URL arguments of a filtered view, kept by its links
    region: "Region | None" = None  # of a first screen: its seqs count from the region's start
    offsets: tuple = ()  # (of a first screen) the offsets its links load from: before, after
    floor: int = 0  # where the page's events end above this window: it reaches no further back
    numbered: bool = False  # (of a first screen) its links load by seq all the same (`Timeline.window`)

    @property
    def filtered(self) -> bool:
        return bool(self.args)

    @property
    def has_before(self) -> bool:
        return self.start > self.floor or bool(self.region and self.region.lo > 0)

    @property
    def has_after(self) -> bool:
        return self.stop < self.total or bool(self.region and self.region.hi < self.region.size)

    @property
    def before(self) -> int | str:
        """Where the window before this one ends: a seq, or `@<offset>` on a first screen."""
        return f"@{self.offsets[0]}" if self.region and not self.numbered else self.start

    @property
    def after(self) -> int | str:
        return f"@{self.offsets[1]}" if self.region and not self.numbered else self.stop

    @property
    def count_before(self) -> int | None:
        """Events before the window (down to its floor), when known."""
        return None if self.region else self.start - self.floor

    @property
    def count_after(self) -> int | None:
        return None if self.region else self.total - self.stop


# --- reading events ------------------------------------------------------------------------------

_docs: OrderedDict = OrderedDict()
_docs_lock = threading.Lock()


def _document_records(th: ThreadIndex) -> list:
    if th.held is not None:  # a first screen's records, read with it (SessionIndex.read_region)
        return th.held
    if folded(th):
        # a JSONL file of wrappers: its Fold, read on over what the file gained (never again whole
        # on each line a live log gains); its records only grow, the index's are its first ones
        fold = wrapped.lines_fold(th.path)  # the caller set the session's confinement
        if fold is not None:
            return fold.records
    rows = th.carried.get("rows")
    if rows:
        # a row-session: its fold, read on over the rows its database gained (rowfold.py), when
        # it is the reading the index went on from; its records only grow
        fold = rowfold.fold(th.path, formats.get(th.format))
        if fold is not None and fold.gen == rows[0]:
            return fold.records
    key = (th.path, th.size, th.mtime_ns)
    with _docs_lock:
        if key in _docs:
            _docs.move_to_end(key)
            return _docs[key]
    doc = detect.read_document(th.path)  # the caller set the session's confinement
    adapter = formats.get(th.format)
    if isinstance(doc, reader.BadLine):
        records = [(None, doc)]
    else:
        records = detect.records_read(adapter, doc)
    with _docs_lock:
        _docs[key] = records
        while len(_docs) > 8:
            _docs.popitem(last=False)
    return records


def _records_at(th: ThreadIndex, seqs) -> "dict[int, tuple] | list":
    """The records of a document's events at `seqs` (their JSON path and record), by seq. A JSONL
    file of wrappers whose reading is not kept in this process (a new process, its index from the
    cache) is not read whole for them: the lines that hold them are read alone, as that reading
    read them (`wrapped.replay`, after the index's `plan`)."""
    if folded(th) and th.plan and not wrapped.kept(th.path):
        got = _replayed(th, seqs)
        if got is not None:
            return got
    return _Records(_document_records(th))


class _Records:
    """A document's records (a list) looked at by seq, as `_records_at` gives them."""

    def __init__(self, records: list):
        self.records = records

    def __contains__(self, seq: int) -> bool:
        return 0 <= seq < len(self.records)

    def __getitem__(self, seq: int) -> tuple:
        return self.records[seq]


def _replayed(th: ThreadIndex, seqs) -> dict[int, tuple] | None:
    """`_records_at` from the lines of the events alone (see `ThreadIndex.plan`); None when the
    lines do not give the records the index holds of them (the file changed since: the caller
    reads it whole, as it did)."""
    starts = _plan_starts(th)
    offsets, step = th.offsets, wrapped.PLAN
    lines, firsts = [], []
    for seq in seqs:
        start = offsets[seq]
        if firsts and offsets[firsts[-1]] == start:
            continue
        i = bisect.bisect_left(starts, start)
        if i == len(starts) or starts[i] != start:
            return None
        first = bisect.bisect_left(offsets, start)
        lines.append((th.plan[i * step:(i + 1) * step], th.lengths[first]))
        firsts.append(first)
    renames = _renames(th)
    try:
        read = wrapped.replay(th.path, lines, renames, items=bool(th.carried.get("items")))
    except OSError:
        return None
    out = {}
    for first, recs in zip(firsts, read):
        n = bisect.bisect_right(offsets, offsets[first], first) - first
        if len(recs) != n:
            return None
        for j, rec in enumerate(recs):
            out[first + j] = rec
    return out


def _renames(th: ThreadIndex) -> wrapped.Renames:
    """The thread's renamed call ids (`wrapped.packed_renames`) as a replay reads them, kept while
    the thread holds the same."""
    packed = th.carried.get("renames")
    got = getattr(th, "_renames", None)
    if got is None or got[0] is not packed:
        got = th._renames = (packed, wrapped.Renames(packed))
    return got[1]


def _plan_starts(th: ThreadIndex) -> array:
    """Where each line of a thread's plan begins (its rows' first numbers), kept while the plan
    holds as many rows."""
    got = getattr(th, "_starts", None)
    if got is None or len(got) * wrapped.PLAN != len(th.plan):
        got = th._starts = th.plan[0::wrapped.PLAN]
    return got


def _span_record(th: ThreadIndex, seq: int, f) -> Any:
    """One record of a big document read a record at a time (`SessionIndex._stream_document`),
    from its own bytes: decoded, or skimmed when huge; the unparsed rest of a document cut short
    as the BadLine it was."""
    offset, length = th.offsets[seq], th.lengths[seq]
    if seq in th.bad:  # (the last record: its path is None, past the end of `th.paths`)
        return reader.BadLine(th.bad[seq])
    made = th.carried.get("made")  # (the records its format made: formats/streamed.py)
    how = streamed.read_note(made.get(str(seq))) if made else None
    if how is not None and how[0] == streamed.HEAD:
        return streamed.rebuild(None, how)
    value = reader.read_line(f, offset, length)
    if isinstance(value, reader.BadLine):
        return reader.BadLine("document changed")
    return streamed.rebuild(value, how)


def _versions(th: ThreadIndex) -> dict | None:
    """{seq: version} of a row-session's records changed in place (rowfold.RowFold.versions)."""
    rows = th.carried.get("rows")
    fold = rowfold.kept(th.path, formats.get(th.format)) if rows else None
    return fold.versions if fold is not None and fold.gen == rows[0] else None


def load_events(idx: SessionIndex, thread: str, start: int, stop: int, *,
                expand: int = 0, share: bool = False) -> list[Event]:
    """The events [start, stop) of one thread, read from the file and given their index ids.

    This (with `load_picked`) is where every page, window, live message, search and export gets
    its events, so it is where redaction happens: when the index carries a redactor (`serve
    --redact`, `export --redact`), each event is redacted right after its adapter made it.
    `expand` reads back the strings cut out of huge lines, up to that many bytes each (an export
    shows everything). `share`: events read before are taken as they are, and those read now are
    kept for the next page (`_Events`: the pages' windows; a search or an index pass reads each
    line once and would only push those out)."""
    th = idx.threads[thread]
    return load_picked(idx, thread, range(start, min(stop, len(th))), expand=expand, share=share)


def load_picked(idx: SessionIndex, thread: str, seqs, *, expand: int = 0,
                share: bool = False) -> list[Event]:
    """The events at the given seqs (ascending) of one thread, read with one open of the file:
    search reads its candidate lines, and filtered views their scattered events, this way."""
    with files.confined(idx.confinement):
        return _load_picked(idx, thread, seqs, expand, share)


def _load_picked(idx: SessionIndex, thread: str, seqs, expand: int,
                 share: bool = False) -> list[Event]:
    th = idx.threads[thread]
    seqs = [s for s in seqs if 0 <= s < len(th)]
    if not seqs:
        return []
    adapter = formats.get(th.format)
    out = []
    if th.mode == "document" and "spans" in th.carried and th.held is None:
        with files.open_file(th.path) as f:
            for seq in seqs:
                ref = Ref(thread, th.lines[seq], th.offsets[seq], th.lengths[seq],
                          th.paths[seq] if seq < len(th.paths) else None)
                rec = _span_record(th, seq, f)
                ev = _event(adapter, rec, ref, th.ids[seq], b"", f, th.renamed.get(seq))
                if expand and th.lengths[seq] > reader.HUGE_LINE:  # (its strings cut: skimmed)
                    _expand(ev, f, expand)
                out.append(_finish(idx, ev))
        return out
    if th.mode == "document":
        records = _records_at(th, seqs)
        versions = _versions(th)
        for seq in seqs:
            # (offset: where a log of API calls' record's line begins; 0 for other documents — a
            # row-session's record changed in place is another card: its version is added)
            ref = Ref(thread, th.lines[seq], th.offsets[seq] + (versions.get(seq, 0) if versions else 0),
                      th.lengths[seq],
                      th.paths[seq] if th.paths else None)
            rec = records[seq][1] if seq in records else reader.BadLine("document changed")
            out.append(_finish(idx, _event(adapter, rec, ref, th.ids[seq], b"", None,
                                           th.renamed.get(seq))))
        return out
    # events read before are shared (see _events), unless they are redacted or expanded here
    kept = _kept(idx, th, thread) if share and not expand and idx.redactor is None \
        and len(seqs) <= KEEP_READS else None
    hits = _events.get_all(kept, th, seqs) if kept is not None else {}
    wanted = [s for s in seqs if s not in hits] if hits else seqs
    if wanted:
        with files.open_file(th.path) as f:
            i = 0
            while i < len(wanted):
                j = i + 1  # a run of consecutive seqs is read as one block when it is not huge
                while j < len(wanted) and wanted[j] == wanted[j - 1] + 1:
                    j += 1
                out.extend(_finish(idx, ev) for ev in _read_run(
                    f, adapter, th, thread, wanted[i], wanted[j - 1] + 1, expand, kept))
                i = j
    if not hits:
        return out
    read = iter(out)
    return [hits[s] if s in hits else next(read) for s in seqs]


def _kept(idx: SessionIndex, th: ThreadIndex, thread: str) -> tuple:
    """What the events of a thread read now share with those read before: the build of the index
    (a rewritten file is a new build), the file and the format that read it."""
    return (idx.build_id, th.path, th.ino, th.format, thread)


class _Events:
    """Events parsed from a file's lines, kept while their lines' bytes stay under `max_bytes`
    (the most recently used): a page, its permalinks, its JSON and its windows are drawn again
    for every line a live session gains, and decoding and mapping the same lines again each time
    was a quarter of drawing them. A line's event is the same while the build of the index that
    placed it is (offset, length, line number and id are in the key); unparsable, huge and
    skimmed lines are read each time, and so are reads of many events at once (a search's scan,
    an export: they would only push out what pages share)."""

    def __init__(self, max_bytes: int = 4 << 20):
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._events: OrderedDict = OrderedDict()
        self._bytes = 0

    @staticmethod
    def key(kept: tuple, th: ThreadIndex, seq: int) -> tuple:
        return (*kept, seq, th.offsets[seq], th.lengths[seq], th.lines[seq], th.ids[seq])

    def get_all(self, kept: tuple, th: ThreadIndex, seqs) -> dict[int, Event]:
        """The events kept of those at `seqs`, by seq."""
        out = {}
        with self._lock:
            for seq in seqs:
                key = self.key(kept, th, seq)
                ev = self._events.get(key)
                if ev is not None:
                    self._events.move_to_end(key)
                    out[seq] = ev
        return out

    def put(self, key: tuple, ev: Event, size: int) -> None:
        with self._lock:
            if key in self._events:
                return
            self._events[key] = ev
            self._bytes += size
            while self._bytes > self.max_bytes and self._events:
                old_key, _ = self._events.popitem(last=False)
                self._bytes -= old_key[-3]  # (the line's length)


_events = _Events()


def _read_run(f, adapter, th: ThreadIndex, thread: str, start: int, stop: int,
              expand: int = 0, kept: tuple | None = None) -> list[Event]:
    out = []
    # what the index's pass found of a line from the lines before it (legion: a turn's own cost)
    recall = getattr(adapter, "recall", None)
    first, last = th.offsets[start], th.offsets[stop - 1] + th.lengths[stop - 1]
    bulk = last - first <= 4 * reader.HUGE_LINE
    if bulk:
        f.seek(first)
        block = f.read(last - first)
    for seq in range(start, stop):
        off, length = th.offsets[seq], th.lengths[seq]
        ref = Ref(thread, th.lines[seq], off, length)
        if seq in th.bad:  # a huge line the index already found unparsable
            value, data = reader.BadLine(th.bad[seq]), None
        elif length > reader.HUGE_LINE:
            value, data = reader.skim(f, off, length), None
        else:
            data = block[off - first : off - first + length] if bulk else reader.read_bytes(
                f, off, length)
            value = reader.decode(data)
        if isinstance(value, reader.BadLine) and th.cut_tail and seq == len(th) - 1 \
                and seq not in th.bad:
            value = truncated(value)  # the unterminated last line
        ev = _event(adapter, value, ref, th.ids[seq], data, f, th.renamed.get(seq))
        if ev.author is None and th.authors[seq]:
            # what earlier lines said of this one (index.ThreadIndex.carried: a handoff's agent)
            ev.author = th.authors[seq]
        if recall is not None:
            recall(ev, th.carried)
        if expand and data is None:
            _expand(ev, f, expand)
        elif kept is not None and data is not None and not isinstance(value, reader.BadLine):
            _events.put(_Events.key(kept, th, seq), ev, length)
        out.append(ev)
    return out


def _finish(idx: SessionIndex, ev: Event) -> Event:
    redactor = idx.redactor
    return ev if redactor is None else redactor.event(ev)


def _expand(ev: Event, f, limit: int) -> None:
    """Replace the cut strings of a skimmed event by their whole text (those up to `limit` bytes)."""

    def whole(value):
        if isinstance(value, reader.CutStr):
            return reader.read_cut(f, value) if value.raw_length <= limit else value
        if isinstance(value, dict):
            return {k: whole(v) for k, v in value.items()}
        if isinstance(value, list):
            return [whole(v) for v in value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for fld in dataclasses.fields(value):
                setattr(value, fld.name, whole(getattr(value, fld.name)))
        return value

    for b in ev.blocks:
        whole(b)


def _event(adapter, value, ref: Ref, eid: str, data, f=None, renames: dict | None = None) -> Event:
    """The event of one record as the index placed it: its id, and the ids the index gave the
    calls it names used again (`ThreadIndex.renamed`)."""
    value = reader.shallow(value, data)  # what a page shows is never nested too deep to write
    if isinstance(value, reader.BadLine):
        ev = unparsed_event(unparsed_text(value, data, f, ref), ref, value.reason, adapter.NAME)
    else:
        ev = safe_event(adapter, value, ref)
        if renames:
            rename(ev, renames)
    ev.id = eid
    return ev


def load_event(idx: SessionIndex, event_id: str) -> Event | None:
    where = idx.locate(event_id)
    if where is None:
        return None
    thread, seq = where
    evs = load_events(idx, thread, seq, seq + 1)
    return evs[0] if evs else None


def raw_record(idx: SessionIndex, event_id: str) -> tuple[bytes, bool] | None:
    """The source of one event: its line's bytes (JSONL) or its record as JSON (documents).
    Returns (bytes, cut) — cut when only the head of a huge line is returned. Redacted when the
    index carries a redactor (the record is then written back as JSON)."""
    with files.confined(idx.confinement):
        return _raw_record(idx, event_id)


def _raw_record(idx: SessionIndex, event_id: str) -> tuple[bytes, bool] | None:
    where = idx.locate(event_id)
    if where is None:
        return None
    thread, seq = where
    th = idx.threads[thread]
    redactor = idx.redactor
    if th.mode == "document":
        if "spans" in th.carried and th.held is None:
            with files.open_file(th.path) as f:
                rec = _span_record(th, seq, f)
        else:
            rec = _records_at(th, [seq])[seq][1]
        if redactor is not None:
            rec = redactor.value(rec)
        return reader.json_text(rec).encode(), False
    limit = reader.HUGE_LINE
    with files.open_file(th.path) as f:
        data = reader.read_bytes(f, th.offsets[seq], th.lengths[seq], limit)
    cut = th.lengths[seq] > limit
    if redactor is not None:
        data = redactor.text(data.decode("utf-8", "replace")).encode() if cut else redactor.raw(data)
    return data, cut


# --- windows -------------------------------------------------------------------------------------


def bounds(th: ThreadIndex, *, around: int | None = None, before: int | None = None,
           after: int | None = None, size: int = WINDOW) -> tuple[int, int]:
    """[start, stop) holding `size` visible events: the latest, around a seq, or before/after one."""
    n = len(th)
    hidden = th.hidden
    if before is not None:
        return _back(hidden, min(before, n), size), min(before, n)
    if after is not None:
        start = max(0, min(after, n))
        return start, _forward(hidden, start, n, size)
    if around is not None:
        start = _back(hidden, around, size // 2)
        return start, _forward(hidden, around, n, size - size // 2)
    return _back(hidden, n, size), n


def _back(hidden: list, stop: int, want: int) -> int:
    i = stop
    while i > 0 and want > 0:
        i -= 1
        if not hidden[i]:
            want -= 1
    while i > 0 and hidden[i - 1] and want <= 0 and stop - i < 4 * WINDOW:
        i -= 1  # keep hidden events that lead into the window with it
    return i


def _forward(hidden: list, start: int, n: int, want: int) -> int:
    i = start
    while i < n and want > 0:
        if not hidden[i]:
            want -= 1
        i += 1
    while i < n and hidden[i] and i - start < 4 * WINDOW:
        i += 1
    return i


def _follow(before: list[Event], v: EventView) -> None:
    """What the events just before say about this one (streamed messages come a block per line):
    the same message goes on (its card joins the one above), and thinking before it in the same
    message was not recorded (its card says so). Folded empty lines in between do not count.
    What a prompt brought along (a context event: an @-mentioned file, the IDE's selection) joins
    the prompt's card, as the CLI lists it under the prompt."""
    if v.ev.kind == "context":
        prev = next((p for p in reversed(before) if not p.hidden), None)
        v.continued = prev is not None and (prev.kind == "context" or (
            prev.role == "user" and prev.kind == "message"))
        return
    mid = v.ev.message_id
    if not mid:
        return
    for prev in reversed(before):
        if prev.message_id != mid or prev.role != v.ev.role:
            return
        if not prev.hidden:
            v.continued = True
            return
        if prev.hidden_reason == NOT_RECORDED:
            v.thought = True
        elif prev.hidden_reason != "empty":
            return


def lane_of(author: str | None, agents: list[str] | tuple[str, ...] = ()) -> int:
    """An author's colour lane, 1..LANES (0: none). A name hashes to its lane, so a card needs only
    its author to be coloured the same in every window, stream and export; `agents`, the session's
    agents in order of first appearance, moves a later agent whose lane an earlier one holds to the
    next free lane, so that up to LANES agents of one session never share a colour."""
    if not author:
        return 0
    if author in agents:
        return _lanes(tuple(agents))[author]
    return _hashed_lane(author)


def _hashed_lane(author: str) -> int:
    return zlib.crc32(author.encode()) % LANES + 1


@lru_cache(maxsize=256)
def _lanes(agents: tuple[str, ...]) -> dict[str, int]:
    lanes: dict[str, int] = {}
    for a in agents:
        lane = _hashed_lane(a)
        while lane in lanes.values() and len(lanes) < LANES:
            lane = lane % LANES + 1
        lanes[a] = lane
    return lanes


class Timeline:
    """Builds windows of one session for the templates."""

    def __init__(self, idx: SessionIndex, target: str | None = None, expand: int = 0):
        self.idx = idx
        self.expand = expand  # see load_events
        self.started = idx.summary.started
        self.target = target
        self.target_view: EventView | None = None  # set once a window holds the target
        # the permalink target and every thread on the way to it open at the right place
        self.anchors: dict[str, int] = {}
        if target and (where := idx.locate(target)):
            thread, seq = where
            seen = set()
            while thread not in seen:
                seen.add(thread)
                self.anchors[thread] = seq
                parent = idx.threads[thread].meta.get("parent_call")
                call = idx.calls.call(parent) if parent else None
                if call is None or call.call is None:
                    break
                thread, seq = call.call

    def window(self, thread: str = "main", floor: int = 0, **where) -> WindowView:
        """A window of a thread: the latest events, or `where` says (around / before / after a
        seq); never starting before `floor`."""
        th = self.idx.threads[thread]
        if not where and thread in self.anchors:
            where = {"around": self.anchors[thread]}
        start, stop = bounds(th, **where)
        start = min(max(start, floor), stop)
        win = self.events(thread, start, stop, before=[])
        region = self.idx.region if thread == "main" else None
        if region is not None:  # a first screen's links load from offsets, not seqs
            win.region = region
            win.offsets = (th.offsets[start] if start < len(th) else region.hi,
                           th.offsets[stop] if stop < len(th) else region.hi)
            # … but a document's read from its start: its seqs are the index's, and the events of
            # one of its records (a dataset's conversation) share the record's offset
            win.numbered = th.mode == "document" and region.lo == 0 and not th.carried.get("at")
        win.floor = min(floor, start)
        return win

    def events(self, thread: str, start: int, stop: int,
               before: list[Event] | None = None) -> WindowView:
        """The events [start, stop) of a thread as a window (an export walks a session this way);
        `before` as for `views`."""
        events = load_events(self.idx, thread, start, stop, expand=self.expand, share=True)
        return WindowView(thread, start, stop, len(self.idx.threads[thread]),
                          self.views(events, start, before))

    def views(self, events: list[Event], start: int, before: list[Event] | None = None) -> list:
        """Views of consecutive events of one thread (the first at seq `start`), their calls
        resolved together, drawn as on a reload (the live stream renders a burst this way).
        `before`: the events just before them, when known; else read back from the file."""
        views = [self._view(ev, start + i) for i, ev in enumerate(events)]
        self._resolve(views)
        self._repeats(views)
        if before is None:
            before = load_events(self.idx, events[0].thread, max(0, start - STREAM_BACK), start,
                                 share=True) if events and start > 0 and events[0].message_id else []
        evs = list(before[-STREAM_BACK:]) + [v.ev for v in views]
        first = len(evs) - len(views)
        for i, v in enumerate(views):
            _follow(evs[max(0, first + i - STREAM_BACK) : first + i], v)
        return views

    def picked(self, items: list[tuple[str, int]]) -> list[EventView]:
        """Views of scattered events in the given order (a filtered view), calls resolved."""
        by_thread: dict[str, list[int]] = {}
        for thread, seq in items:
            by_thread.setdefault(thread, []).append(seq)
        loaded = {}
        for thread, seqs in by_thread.items():
            seqs.sort()
            for seq, ev in zip(seqs, load_picked(self.idx, thread, seqs)):
                loaded[(thread, seq)] = ev
        views = []
        for where in items:
            ev = loaded.get(where)
            if ev is not None:
                v = self._view(ev, where[1])
                if where[0] != "main":
                    v.thread_label = self.idx.threads[where[0]].label
                views.append(v)
        self._resolve(views)
        return views

    def event_view(self, ev: Event, seq: int) -> EventView:
        """One event alone (the live stream), with its calls resolved, and drawn as it will be on
        a reload: the event before it says whether it continues a message."""
        v = self._view(ev, seq)
        self._resolve([v])
        self._repeats([v])
        if seq > 0 and ev.message_id:
            _follow(load_events(self.idx, ev.thread, max(0, seq - STREAM_BACK), seq), v)
        return v

    def _repeats(self, views: list[EventView]) -> None:
        """A turn result (the Agent SDK's ResultMessage, a MARSYS branch result) repeats the turn's
        last assistant text in full under its stats line. When it does, the page shows the stats
        and a link to that text (`EventView.repeats`); a result that says something else keeps its
        text. The text compared is the latest assistant message with text before the result, in
        the window or read back from the file (a few columns looked at, one event read)."""
        loaded = {(v.ev.thread, v.seq): v.ev for v in views}
        for v in views:
            if v.ev.kind != "result":
                continue
            said = _norm(v.ev.text())
            if not said:
                continue
            before = self._last_text(v.ev.thread, v.seq, loaded)
            if before is not None and said in (_norm(before.text()), _norm(_last_text_of(before))):
                v.repeats = before.id

    def _last_text(self, thread: str, seq: int, loaded: dict) -> Event | None:
        th = self.idx.threads[thread]
        for s in range(seq - 1, max(-1, seq - 1 - LOOK_BACK), -1):
            role, kind = th.roles[s], th.kinds[s]
            if role == "user" and kind == "message":
                return None  # the turn began here: nothing of it was said before
            if role != "assistant" or th.hidden[s]:
                continue
            ev = loaded.get((thread, s))
            if ev is None:
                evs = load_events(self.idx, thread, s, s + 1)
                ev = evs[0] if evs else None
            if ev is not None and ev.text():
                return ev
        return None

    def _view(self, ev: Event, seq: int) -> EventView:
        since = ""
        if ev.timestamp is not None and self.started is not None:
            since = "+" + timestamps.span(max(0.0, ev.timestamp.timestamp() - self.started))
        v = EventView(ev, seq, lane=lane_of(ev.author, self.idx.summary.agents), since_start=since,
                      target=bool(self.target) and ev.id == self.target,
                      agent=self.idx.info.get("agent"),
                      thought=not ev.hidden and any(
                          b.kind == "thinking" and not b.redacted and not b.text.strip()
                          for b in ev.blocks),
                      at=ev.ref.offset if self.idx.region and not self.idx.region.counted else None,
                      source=(self.idx.build_id, self.expand)
                      if self.idx.region is None and self.idx.build_id else None)
        th = self.idx.threads[ev.thread]
        if th.rewinds and not ev.hidden:
            if ev.kind == "message" and ev.role == "user":
                v.rewound = rewound(th, seq)
            if droppable(ev.role, ev.kind):
                v.dropped = dropped_by(th, seq)
        if ev.kept_from is not None:  # (linked only where the link leads: this thread, read)
            v.kept_from = ev.kept_from if self._before(ev, seq, ev.kept_from) is not None else None
        if ev.summarized_after is not None:
            v.summarized = self._summarized(ev, seq, th)
        if v.target:
            self.target_view = v
        return v

    def _summarized(self, ev: Event, seq: int, th: ThreadIndex) -> tuple[str, int] | None:
        """(first message summarized, how many) of a compaction that kept the earlier messages
        verbatim and summarized those after the last record it kept (`Event.summarized_after`), up
        to itself."""
        at = self._before(ev, seq, ev.summarized_after)
        if at is None:
            return None
        left = [s for s in range(at + 1, seq) if th.is_message(s)]
        return (th.ids[left[0]], len(left)) if left else None

    def _before(self, ev: Event, seq: int, eid: str) -> int | None:
        """The seq of event `eid` in `ev`'s thread before `ev` (at `seq`), or None. It is nearly
        always a few records back: looking there first spares building the session's id map,
        which a warm first screen of a big session never needs (56 ms at 1 GB)."""
        ids = self.idx.threads[ev.thread].ids
        for s in range(seq - 1, max(-1, seq - 1 - _NEAR), -1):
            if ids[s] == eid:
                return s
        where = self.idx.locate(eid)
        return where[1] if where is not None and where[0] == ev.thread and where[1] < seq else None

    def thread_view(self, name: str, use: ToolUse | None = None) -> ThreadView:
        """A sub-agent thread named for what it is: the type and description its own metadata
        gives (`.meta.json`), else those of the call that spawned it (a Task's `subagent_type` and
        `description`), else its id."""
        th = self.idx.threads[name]
        label = th.label
        meta = th.meta if isinstance(th.meta, dict) else {}
        if not (meta.get("agentType") or meta.get("description")):
            if use is None and (parent := meta.get("parent_call")):
                call = self.idx.calls.call(parent)
                if call is not None and call.call is not None:
                    thread, seq = call.call
                    for ev in load_events(self.idx, thread, seq, seq + 1):
                        use = next((b for b in ev.tool_uses() if b.id == parent), None)
            label = (tools.agent_label(use.input) if use is not None else None) or label
        return ThreadView(name, label, len(th), path=th.path)

    def call_view(self, call_id: str) -> CallView | None:
        """A call card on its own (for live out-of-band updates)."""
        call = self.idx.calls.get(call_id)
        if call is None or call.call is None:
            return None
        thread, seq = call.call
        evs = load_events(self.idx, thread, seq, seq + 1, expand=self.expand)
        if not evs:
            return None
        v = self.event_view(evs[0], seq)
        return v.calls.get(call_id)

    def result_ref(self, call: ToolCall) -> CallView:
        """A result's link to its call shown elsewhere."""
        thread, seq = call.call
        return CallView(call, None, call_event=self.idx.threads[thread].ids[seq],
                        fmt=self.idx.summary.format)

    def _resolve(self, views: list[EventView]) -> None:
        idx = self.idx
        loaded = {(v.ev.thread, v.seq): v for v in views}
        wanted: dict[tuple[str, int], list[CallView]] = {}
        for v in views:
            for b in v.ev.blocks:
                if b.kind == "tool_use" and b.id:
                    call = idx.calls.call(b.id)
                    if call is None or call.call != (v.ev.thread, v.seq):
                        # a repeated id: the map follows the last occurrence; show this one as-is
                        call = ToolCall(b.id, b.name, call.status if call else "pending")
                    cv = CallView(call, b, unanswered=idx.unanswered(call),
                                  resolving=idx.resolving(call), fmt=idx.summary.format)
                    for name in idx.subthreads(call):
                        tv = self.thread_view(name, b)
                        if name in self.anchors:
                            tv.window = self.window(name)
                        cv.threads.append(tv)
                    v.calls[b.id] = cv
                    if call.result is not None:
                        wanted.setdefault(call.result, []).append(cv)
                elif b.kind == "tool_result":
                    call = idx.calls.get(b.tool_use_id)
                    if call is not None and call.call is not None:
                        # the call's card shows its first result; a later one (not a copy the
                        # format hides) is shown where it is, or it would be shown nowhere
                        again = call.result not in (None, (v.ev.thread, v.seq)) and not v.ev.hidden
                        (v.again if again else v.refs)[b.tool_use_id] = self.result_ref(call)
                    elif idx.region is not None and idx.region.lo > 0 and call is not None:
                        # a first screen's result whose call lies before what was read
                        v.refs[b.tool_use_id] = CallView(call, None, resolving=True,
                                                         fmt=idx.summary.format)
        canon = idx.calls.canon  # a result naming its call by an id no call kept (an alias)
        for where, cvs in wanted.items():
            v = loaded.get(where)
            if v is None:
                thread, seq = where
                evs = load_events(idx, thread, seq, seq + 1, expand=self.expand)
                if not evs:
                    continue
                v = EventView(evs[0], seq)
            for i, b in enumerate(v.ev.blocks):
                for cv in cvs:
                    if b.kind == "tool_result" and canon(b.tool_use_id) == cv.call.id \
                            and cv.result is None:
                        cv.result, cv.result_event, cv.result_path = b, v.ev.id, f"b{i}"
                        cv.result_owner = v
        self._same_again(views, loaded)
        # a call whose card is in the same event as its result shows the result there, once
        for v in views:
            for cid in list(v.refs):
                if cid in v.calls:
                    del v.refs[cid]
            self._fold(v, loaded)

    def _same_again(self, views: list[EventView], loaded: dict) -> None:
        """Note the results written again that repeat their call's first result word for word (a
        line written twice): said in one line, not drawn twice; and those that differ from it a
        little (a rerun whose output changed in a line): shown as what changed."""
        read: dict = {}
        for v in views:
            for b in v.ev.blocks:
                if b.kind != "tool_result" or b.tool_use_id not in v.again:
                    continue
                thread, seq = where = v.again[b.tool_use_id].call.result
                if where in loaded:
                    first = loaded[where].ev
                elif where not in read:
                    evs = load_events(self.idx, thread, seq, seq + 1, expand=self.expand)
                    first = read[where] = evs[0] if evs else None
                else:
                    first = read[where]
                if first is None:
                    continue
                was = next((f for f in first.blocks
                            if f.kind == "tool_result" and f.tool_use_id == b.tool_use_id), None)
                if was is None:
                    continue
                if was.content == b.content:
                    v.same.add(b.tool_use_id)
                elif (old := _plain(was.content)) is not None and (new := _plain(b.content)) is not None \
                        and render.near(old, new):
                    v.near[b.tool_use_id] = tools.EditPart(old, new)

    def _fold(self, v: EventView, loaded: dict) -> None:
        """An event holding only results shown with their calls carries nothing of its own. When
        the calls are near (same thread, at most a window back: on the page above it, or one
        "load earlier" away) it folds into them: drawn as nothing, its id kept for permalinks,
        which land on the call card showing the result. Far from its calls it stays one line."""
        blocks = v.ev.blocks
        v.refs_only = bool(v.refs) and all(
            b.kind == "tool_result" and b.tool_use_id in v.refs for b in blocks)
        if not v.refs_only:
            return
        near = []
        for rc in v.refs.values():
            if rc.call.call is None:  # (a first screen's result whose call is not read yet)
                return
            thread, seq = rc.call.call
            if thread != v.ev.thread or not 0 <= v.seq - seq <= WINDOW:
                return
            near.append(loaded.get((thread, seq)))
        v.folded = True
        v.fold_into = [cv.calls[rc.call.id] for cv, rc in zip(near, v.refs.values())
                       if cv is not None and rc.call.id in cv.calls]


def rewound(th: ThreadIndex, seq: int) -> tuple[str, int] | None:
    """(first message left out, how many) when the prompt at `seq` was sent after a rewind: it
    follows an earlier record than the last one, and messages were written after that record
    (Claude Code's /rewind and Esc Esc write the new prompt under an earlier record and leave the
    abandoned messages in the file). The index noted the range (`ThreadIndex.rewinds`). Local
    commands and bookkeeping written beside the conversation's chain are not messages, so they
    never count."""
    for lo, hi in th.rewinds:
        if hi == seq:
            left = [s for s in range(lo, seq) if th.is_message(s)]
            return (th.ids[left[0]], len(left)) if left else None
    return None


def droppable(role: str, kind: str) -> bool:
    """Whether an event a rewind passed over was part of the conversation it dropped: messages,
    tool results, errors, a compaction and its summary, what a call loaded; not what is written
    beside the conversation's chain (a local command's output, bookkeeping)."""
    return role != "system" or kind in ("compaction", "compact_summary", "tool_context")


def dropped_by(th: ThreadIndex, seq: int) -> str | None:
    """The id of the prompt the conversation went on from when a rewind dropped the record at
    `seq` (the first rewind after it that passed over it; a later one may have dropped that
    prompt in turn), else None."""
    for lo, hi in th.rewinds:
        if lo <= seq < hi:
            return th.ids[hi]
    return None


def dropped_cards(th: ThreadIndex, prompt: int, limit: int) -> list[tuple[int, str]]:
    """(seq, id) of the shown events the prompt at `prompt` dropped (the last `limit` of them),
    those an earlier rewind dropped already aside: a live page's cards drawn before the prompt
    came get their mark out of band."""
    out = []
    for lo, hi in th.rewinds:
        if hi == prompt:
            for s in range(hi - 1, lo - 1, -1):
                if len(out) >= limit:
                    break
                if not th.hidden[s] and droppable(th.roles[s], th.kinds[s]) \
                        and dropped_by(th, s) == th.ids[prompt]:
                    out.append((s, th.ids[s]))
    return out[::-1]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _last_text_of(ev: Event) -> str:
    texts = [b.text for b in ev.blocks if b.kind == "text"]
    return texts[-1] if texts else ""


def _plain(content: list) -> str | None:
    """A result's text when it is only text (whole: a cut string is not compared), else None."""
    out = []
    for c in content:
        if c.kind != "text" or c.text.__class__ is not str:
            return None
        out.append(c.text)
    return "\n".join(out)
