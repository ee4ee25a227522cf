"""The first screen of a session before its index exists: the part of the file it shows, read alone.

A session with no usable index is indexed in the background (`viewer.indexer`); until that is done,
its page shows what it needs from the main file, read here in milliseconds whatever the file's size:

* `head()` — the first lines (the start of a finished session, "first events");
* `tail()` — the last lines: seek near the end, step to the next line boundary, read to the end (a
  live session, "latest");
* `around()` — the lines around one event (a permalink, a search hit), which `locate()` finds by
  searching the file's bytes for the event's id.
* `before()` / `after()` — a window's worth of lines before / from a line of the file ("Load
  earlier / later" next to a first screen while its index is being built); of a document read
  from its start (below), its records from the start through that window.
* `spawned()` — the lines around the call that spawned a sub-agent (found in the main file's bytes
  by the call id its metadata names, or the agent id the call's result names), with the sub-agent's file read whole into a thread linked
  to that call, as the full index reads and links it: a permalink or a search hit into a
  sub-agent's file opens there (`locate_sub`, search.sub_agent_hit).

Each returns a `SessionIndex` of that region alone (`idx.region` says which bytes), made by the same
code as the full index so its events look exactly as they will. A region grows (×4, up to `MOST`)
until it holds a screen of visible events. What a region cannot know it does not pretend to: a call
whose result lies past it is "resolving", counts come with the full index.

Event ids. The full index names an event by its source id when that is valid and unique, else
`L<line>`. A region read from the start of the file knows both, so its ids are final. A region
further on does not know the line numbers (counting them means reading everything before) nor
whether a source id appeared earlier in the file. Its events keep their source id, and one without
is named `@<offset>`: its byte offset, which never changes while the file is appended to. Links from
such a screen also carry the offset (`?pos=`), and the permalink route maps any of these to the final
id once the index exists (`SessionIndex.at_offset`): a link taken from the first screen always opens
the event it was taken from, before and after indexing. The page itself takes the final ids once
the index is done, its cards renamed in place (web/early.py `_renames`).

A JSONL log of API calls (a proxy's `{request, response}` lines, read as one document:
formats/wrapped.py) is read the same way: a region is the records of the lines it holds
(`wrapped.region`, which first reads a few lines before it, unshown, to know the conversation they
go on with), and the full index names these events by where their line begins too (`@<offset>`,
`@<offset>~2`… for a line's further records), so every id of its first screen is final; what only
the whole read knows (which call and conversation of the file a line is, the call ids an earlier
conversation used, a conversation a line goes on with that the region did not read) is drawn again
in place once the index is done (web/early.py: the page is not reloaded).

Three more kinds of document have a first screen from their start (`head`, and the windows after it:
`_document_window`; their latest events or a permalink's wait for the index): a big JSON document
whose records are its list's elements (an OpenAI message list: `SessionIndex._read_document_region`,
read a record at a time by viewer/docstream.py, each record named by its number as the whole read
names it; the region read last is kept, and a window past it reads on from where it stopped,
`_from_document_start`), a JSONL file of one conversation per line (a dataset, a batch file:
`formats.wrapped.head_fold`, its first lines read as the whole read reads them), and a JSON array of
such wrappers (a dataset's conversations, a log of API calls kept as one document:
`formats.wrapped.items_fold`, its first elements read as the whole read reads them) — these two
kept and read on alike (their reading, `wrapped.Fold.going`). Other documents
(one whose format pairs or numbers its records by what only the whole list says) are read whole,
behind a reading page.

Call ids likewise: a call id used again after its result is a new call, `id~2`… (toolcalls, "An id
used again"), which a region further on can tell only of the calls it read: it names each id it
reads first as the id itself (its cards show their own results), where the full index may name it
`id~N`; such a page reloads once the index is done (web/early.py), drawn from it.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path

import regex

from . import files, formats, keys, reader
from .formats import detect, wrapped
from .index import _ID_OK, _SYNTHETIC, SessionIndex, safe_event
from .model import Ref
from .reader import HUGE_LINE, decode
from .timeline import WINDOW, load_events

STEP = 1 << 20  # bytes a region starts with
DOCUMENT_STEP = 128 << 10  # … of a document read from its start (a JSON list, a dataset's lines)
MOST = 64 << 20  # a region grows no further: a screen shows what it found in that much
SCAN_CHUNK = 16 << 20  # bytes a thread of `_hits` reads and searches at a time
SCANNERS = 2  # threads of `_hits` (this machine's two cores: more only wait for the disk)
_LINE_ID = re.compile(r"L([1-9]\d*)")
_OFFSET_ID = re.compile(r"@(\d+)(?:~\d+)?")  # (`~N`: a log of API calls' further events of a line)


def _visible(idx: SessionIndex, start: int = 0, stop: int | None = None) -> int:
    hidden = idx.threads["main"].hidden
    return hidden[start:stop].count(0)


def _read(path: str, confinement, found, lo: int, hi: int, line: int = 0) -> SessionIndex:
    idx = SessionIndex(path, confinement=confinement)
    return idx.read_region(lo, hi, line, found=found)


KEPT = 2  # regions of big documents kept to read on (of the sessions scrolled before their index)
_kept: OrderedDict = OrderedDict()
_kept_lock = threading.Lock()


def _from_document_start(path: str, confinement, found, hi: int) -> SessionIndex:
    """A document's region from its start through `hi` (as `_read(…, 0, hi)`), read on from the
    region of it read last (kept, `SessionIndex.read_on`) when that can be: "Load later" next to
    a document's first screen then reads the records past the window before, not the document
    again from its start — each window costs what its own records cost, however deep it is
    (`found`, the file's detected format: detected only when it is read from its start, None
    given — the detection of a dataset's head cost a window more than its records). A
    kept region is taken out while it reads on (the lock is held for the taking alone: one
    document's reading on does not hold up another's window, and no two go on with one region at
    once); one that read to the document's end is not kept (it cannot go on)."""
    with files.confined(confinement):
        key = (path, reader.file_identity(path))
    with _kept_lock:
        idx = _kept.pop(key, None)
    if idx is None or idx.confinement != confinement or not idx.read_on(hi):
        idx = _read(path, confinement, found or _found_from_start(path, confinement), 0, hi)
    if idx._reading is not None:
        with _kept_lock:
            _kept[key] = idx
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
    return idx


def head(path: str, confinement=None) -> SessionIndex:
    """The first screen of a session from its start."""
    with files.confined(confinement):
        found = detect.detect_file(path)
        # (a document's records are each made of the whole conversation so far, or many to a line:
        # a screen of them lies in fewer bytes, and reading 1 MB of a dataset's lines took 250 ms.
        # Not a log of API calls: its lines, a whole request each, are some 100 KB to 1 MB, and
        # starting small read its head three times, 105 → 145 ms)
        small = found.mode == "document" and not wrapped.call_log(path)
        n = DOCUMENT_STEP if small else STEP
        while True:
            idx = _from_document_start(path, confinement, found, n) if small else \
                _read(path, confinement, found, 0, n)
            r = idx.region
            if _visible(idx) > WINDOW or r.hi >= r.size or n >= MOST:
                return idx
            n *= 4


def tail(path: str, confinement=None) -> SessionIndex:
    """The first screen of a session from its end."""
    with files.confined(confinement), files.open_file(path) as f:
        found = detect.detect_file(path)
        return _window_to(f, path, confinement, found, f.seek(0, 2))


def around(path: str, offset: int, line: int = 0, confinement=None) -> SessionIndex:
    """A screen of events around the line beginning at `offset` (whose line number is `line`,
    when known)."""
    with files.confined(confinement), files.open_file(path) as f:
        found = detect.detect_file(path)
        size = f.seek(0, 2)
        eol = found.eol.encode()
        half = WINDOW // 2
        n = STEP // 2
        while True:
            lo = line_start(f, max(0, offset - n), found.eol)
            before = lines_before(f, lo, offset, line, eol) if line else 0
            idx = _read(path, confinement, found, lo, offset + n, max(0, before))
            seq = idx.seq_at(offset)
            enough_before = lo == 0 or _visible(idx, 0, seq) >= half
            enough_after = idx.region.hi >= size or _visible(idx, seq) > half
            if (enough_before and enough_after) or n >= MOST:
                return idx
            n *= 4


def before(path: str, offset: int, confinement=None) -> SessionIndex:
    """A window's worth of events just before the line beginning at `offset` ("Load earlier" on a
    first screen whose index is not done): the lines that begin in [lo, offset), lo stepped back
    until they hold a window. Lines not counted unless read from the start. A document's: see
    `_document_window`."""
    with files.confined(confinement), files.open_file(path) as f:
        found = detect.detect_file(path)
        if _from_start(path, found):
            return _document_window(path, confinement, found, offset, f.seek(0, 2), later=False)
        offset = line_start(f, min(offset, f.seek(0, 2)), found.eol)
        return _window_to(f, path, confinement, found, offset)


def start_only(path: str, confinement=None) -> bool:
    """Whether a session's first screen can be read from its start but not from its end: a big
    JSON document read a record at a time (a JSON list, a dataset's lines or conversations),
    whose records are told apart, and numbered, only by reading it through from its start — its
    latest ones come with the index. Judged on its head (`detect.stream_plan`): a document whose
    records are found to read otherwise further on is read whole after all."""
    with files.confined(confinement):
        found = detect.detect_file(path)
        if not _from_start(path, found):
            return False
        return wrapped.lines_file(path) or wrapped.items_file(path) or \
            detect.stream_plan(path, formats.get(found.format)) is not None


def _found_from_start(path: str, confinement) -> detect.Detected:
    """The detected format of a file whose regions are read from its start (`_from_start`);
    ValueError for another."""
    with files.confined(confinement):
        found = detect.detect_file(path)
        if not _from_start(path, found):
            raise ValueError("a region read from the start of a document only")
    return found


def _from_start(path: str, found) -> bool:
    """Whether a file's region can only be read from its start (a JSON document, a dataset's
    lines: its records are named by their number, which only the records before tell), not from
    any of its lines (a JSONL transcript; a log of API calls, whose records are named by where
    their lines begin)."""
    return found.mode != "jsonl" and not wrapped.call_log(path)


def _document_window(path: str, confinement, found, offset: int, size: int,
                     later: bool) -> SessionIndex:
    """A window next to the record beginning at `offset` of a document read from its start
    ("Load later / earlier" next to a document's first screen while its index is built): the
    document's records from its start through a window's worth past `offset` (`later`), or up
    to it. Its records are named as the whole read names them — by their number, which only
    reading from the start tells — so the window's cards are final. A document read a record at
    a time is read on from the region read last (`_from_document_start`): a window costs what
    its own records cost, not those before it too. Raises ValueError for a document read whole
    (a page then waits for the index)."""
    if not later:
        return _from_document_start(path, confinement, found, offset)
    n = DOCUMENT_STEP  # (as `head`: a screen of a document's records lies in fewer bytes)
    while True:
        idx = _from_document_start(path, confinement, found, offset + n)
        if _visible(idx, idx.seq_at(offset)) > WINDOW or idx.region.hi >= size or n >= MOST:
            return idx
        n *= 4


def _window_to(f, path: str, confinement, found, hi: int) -> SessionIndex:
    """The events of the lines that begin in [lo, hi), lo stepped back from `hi` (a line start,
    or the file's end) until they hold a window, the file's start is reached or MOST is read."""
    n = STEP
    while True:
        lo = line_start(f, max(0, hi - n), found.eol)
        idx = _read(path, confinement, found, lo, hi)
        if _visible(idx) >= WINDOW or lo == 0 or n >= MOST:
            return idx
        n *= 4


def after(path: str, offset: int, confinement=None) -> SessionIndex:
    """A window's worth of events from the line beginning at `offset` on ("Load later" on a first
    screen whose index is not done). Lines not counted unless read from the start. A
    document's: see `_document_window`."""
    with files.confined(confinement), files.open_file(path) as f:
        found = detect.detect_file(path)
        size = f.seek(0, 2)
        if _from_start(path, found):
            return _document_window(path, confinement, found, offset, size, later=True)
        offset = line_start(f, min(offset, size), found.eol)
        n = STEP
        while True:
            idx = _read(path, confinement, found, offset, offset + n)
            if _visible(idx) > WINDOW or idx.region.hi >= size or n >= MOST:
                return idx
            n *= 4


def after_record(path: str, seq: int, confinement=None) -> SessionIndex:
    """A window's worth of a document's records from its record `seq` on ("Load later" next to a
    document's first screen: its links name records by number — the events of a dataset's
    conversation share the offset of the element they come from, which an offset cannot tell
    apart): the document from its start through them (`_from_document_start`). Raises
    ValueError for a session whose regions are not read from its start."""
    with files.confined(confinement), files.open_file(path) as f:
        size = f.seek(0, 2)
    hi = DOCUMENT_STEP
    while True:
        idx = _from_document_start(path, confinement, None, hi)
        if _visible(idx, seq) > WINDOW or idx.region.hi >= size or hi >= size:
            return idx
        hi *= 4


def lines_before(f, lo: int, offset: int, line: int, eol: bytes) -> int:
    """The number of lines before offset `lo` (a line's start), the line that begins at `offset`
    (at or after it) being number `line`: a region read from `lo` names its lines `L<n>` as the
    whole read does."""
    if offset == lo:
        return line - 1
    f.seek(lo)
    return line - 1 - f.read(offset - lo).count(eol)


def line_start(f, pos: int, eol: str = "\n") -> int:
    """The offset of the first line that begins at or after `pos` (the end of the file if none)."""
    if pos <= 0:
        return 0
    mark = eol.encode()
    at = pos - 1
    f.seek(at)
    while True:
        chunk = f.read(STEP)
        if not chunk:
            return at
        i = chunk.find(mark)
        if i >= 0:
            return at + i + 1
        at += len(chunk)


def locate(path: str, event_id: str, at: int | None = None, confinement=None) -> tuple[int, int] | None:
    """Where the line holding the event the full index names `event_id` begins, found without the
    index: (byte offset, line number or 0 when not counted). `at`, an offset a link carried, is
    taken when a line begins there. None when only the index can tell (an event of a sub-agent's
    file, an id repeated in the file, a record the bytes do not show as written)."""
    with files.confined(confinement), files.open_file(path) as f:
        found = detect.detect_file(path)
        size = f.seek(0, 2)
        eol = found.eol.encode()

        def begins_line(pos: int) -> bool:
            if pos == 0:
                return True
            if not 0 < pos < size:
                return False
            f.seek(pos - 1)
            return f.read(1) == eol

        if at is not None and begins_line(at):
            return at, 0
        if m := _OFFSET_ID.fullmatch(event_id):
            pos = int(m.group(1))
            return (pos, 0) if begins_line(pos) else None
        logged = found.mode == "document" and wrapped.call_log(path)
        if logged and not _OFFSET_ID.fullmatch(event_id) and not _ID_OK.fullmatch(event_id):
            return None
        if m := _LINE_ID.fullmatch(event_id):
            if logged:
                return None  # (a record's number, as a log of API calls was named once: the index)
            n = int(m.group(1))
            pos = _line_offset(f, n, eol)
            return None if pos is None else (pos, n)
        if not _ID_OK.fullmatch(event_id) or _SYNTHETIC.fullmatch(event_id):
            return None  # a sub-agent's `thread.L12`, a repeated line's `L12~2`: the index knows
        if logged:
            # a log of API calls: a response's id is in its own line alone (the requests after it
            # repeat its message, not its id); the region read around it says
            at = _line_with(f, found, event_id, None)
        else:  # (the first line with that id is the one the index names so)
            at = _line_with(f, found, event_id, lambda ev: ev.source_id == event_id)
        return None if at is None else (at[0], 0)


def _line_with(f, found, name: str, test) -> tuple[int, object] | None:
    """(offset, its event) of the first line of a file whose bytes hold `name` as a JSON string
    and whose event passes `test` (None: any line, its event not read), found by a search of its
    bytes (`_hits`); None when there is none."""
    size = f.seek(0, 2)
    if size == 0:
        return None
    adapter, eol = formats.get(found.format), found.eol.encode()
    end = 0
    for hit in _hits(f, b'"' + name.encode() + b'"', size):
        if hit < end:
            continue  # in the line just looked at
        start, end = _line_around(f, hit, size, eol)
        if test is None:
            return start, None
        if end - start <= HUGE_LINE:
            f.seek(start)
            value = decode(f.read(end - start).rstrip(b"\r"))
            ev = safe_event(adapter, value, Ref("main", 0, start, end - start))
            if test(ev):
                return start, ev
    return None


SUB_MOST = 32 << 20  # a sub-agent's file read whole for a first screen; a bigger one waits for the index


def companions(path: str, confinement=None) -> list[tuple[str, str, dict]]:
    """(agent, path, metadata) of each sub-agent file of the session at `path`, in the order the
    full index reads them (its format's `companions`: none for most formats)."""
    with files.confined(confinement):
        found = detect.detect_file(path)
        subs = formats.hook(formats.get(found.format), "companions", Path(path), default=[])
    return [(agent, str(sub), meta) for agent, sub, meta in subs]


def call_line(path: str, agent, meta: dict, confinement=None) -> tuple[int, str] | None:
    """(where its line begins, its id) of the call in the main file that spawned a sub-agent
    (`agent`, `meta`: one of `companions`), found in the file's bytes: by the call id the
    sub-agent's metadata names (`toolUseId`), else by the agent id the call's result or progress
    names (`toolUseResult.agentId`, an `agent_progress` line: the event's `spawns`), as the full
    index links them. None when the main file's bytes tell of no such call.

    Only a JSONL main file's bytes can tell it, and then only where the call's id, or the agent's
    id, is written as a JSON string of the line (Claude Code); other formats with sub-agents in
    files of their own wait for the index, which then takes the page to the hit without a reload:
    a Gemini CLI or Wolo sub-agent is matched to its call by time among all the session's calls
    (their `spawning_calls`), a Goose or OpenCode session's sub-agents are rows or files of a
    store read whole (no line of a file holds the call), and a Codex thread is named only in the
    text of the `spawn_agent` call's output (`{"agent_id": …}` written as a string inside the
    line, its quotes escaped), which the search for the id as a JSON string does not find — its
    escaped form could be looked for too (not done yet)."""
    call = meta.get("toolUseId") if isinstance(meta, dict) else None
    with files.confined(confinement):
        found = detect.detect_file(path)
        if found.mode != "jsonl":
            return None
        with files.open_file(path) as f:
            if not (isinstance(call, str) and _ID_OK.fullmatch(call)):
                name = str(agent)
                spawn = _line_with(f, found, name, lambda ev: name in ev.spawns.values())
                if spawn is None:
                    return None
                call = next(c for c, a in spawn[1].spawns.items() if a == name)
            at = _line_with(f, found, call, lambda ev: any(
                b.id == call for b in ev.blocks if b.kind == "tool_use"))
    return None if at is None else (at[0], call)


def spawned(path: str, agent, sub: str, meta: dict, confinement=None,
            at: tuple[int, str] | None = None) -> SessionIndex | None:
    """A first screen around the call that spawned a sub-agent (`sub`, its file, and `meta`: one
    of `companions`; `at`: that call, `call_line`, when known), the sub-agent's thread read whole
    into it and linked to that call as the full index links it, so that a page opens that thread
    at one of its events. None when the call cannot be found in the main file's bytes, or the
    sub-agent's file is too big to read at once (the index says where it is read)."""
    with files.confined(confinement):
        if os.path.getsize(sub) > SUB_MOST:
            return None
    at = call_line(path, agent, meta, confinement) if at is None else at
    if at is None:
        return None
    idx = around(path, at[0], 0, confinement)
    return idx if idx.read_companion(agent, sub, meta, at[1]) is not None else None


def locate_sub(path: str, event_id: str, confinement=None, checked: bool = False) -> SessionIndex | None:
    """A first screen (`spawned`) for a permalink to an event of a sub-agent's file, found
    without the index: in the first sub-agent's file whose bytes hold the id (a source id; or the
    index's `<thread>.L<line>` of an event without one), when that id is the index's — a source
    id the bytes of the main file and of the sub-agents' files read before do not hold (the main
    file's events were searched for it already, `locate`, when `checked`: not searched again).
    None when only the index can tell."""
    thread, dot, rest = event_id.rpartition(".")
    synthetic = bool(dot) and _LINE_ID.fullmatch(rest) is not None
    if not synthetic and (not _ID_OK.fullmatch(event_id) or _SYNTHETIC.fullmatch(event_id)):
        return None
    needle = b'"' + event_id.encode() + b'"'
    for agent, sub, meta in companions(path, confinement):
        if synthetic:
            if keys.thread_key(str(agent)) != thread:
                continue
        elif not holds(sub, needle, confinement):
            continue  # (the sub-agents' files before the first that holds it hold it not)
        idx = spawned(path, agent, sub, meta, confinement)
        if idx is None or idx.locate(event_id) is None or idx.locate(event_id)[0] == "main":
            return None
        if not synthetic and not checked and holds(path, needle, confinement):
            return None  # (an event of the main file may hold that id: the index names this one otherwise)
        return idx
    return None


def holds(path: str, needle: bytes | tuple[bytes, ...], confinement=None) -> bool:
    """Whether a file's bytes hold `needle` (or, given several, any of them)."""
    with files.confined(confinement), files.open_file(path) as f:
        return next(_hits(f, needle, f.seek(0, 2)), None) is not None


def by_source_id(idx: SessionIndex, event_id: str, confinement=None) -> str | None:
    """The id a log of API calls' index gives the event a source id names (a response's own id,
    `chatcmpl-…`, `msg_…`: its event's id before INDEX_VERSION 26, so a permalink kept from then
    still opens its event), or None. Its line is found in the file (`locate`), then the event of
    that line whose record carries the id."""
    th = idx.threads.get("main")
    if th is None or not th.carried.get("at") or _OFFSET_ID.fullmatch(event_id):
        return None
    found = locate(th.path, event_id, confinement=confinement)
    if found is None:
        return None
    lo = hi = idx.seq_at(found[0])
    while hi < len(th) and th.offsets[hi] == found[0]:
        hi += 1
    return next((ev.id for ev in load_events(idx, "main", lo, hi) if ev.source_id == event_id), None)


def _hits(f, needle: bytes | tuple[bytes, ...], size: int):
    """Offsets where `needle` (or any of several) occurs in the file, in order. Two threads each
    read a chunk into a buffer of their own (`os.preadv`) and search it (`regex`, `concurrent`):
    both let go of the GIL, so the two cores share the reading and the searching — an event in the
    middle of a 1 GB session is found in about a third of the time one thread took, reading and
    then searching. Chunks are read into the same two buffers again and again: a mapping of the
    whole file would count every page the search touched in the server's memory (half a gigabyte
    for an event in the middle of a 1 GB session), and a fresh chunk for every read costs an
    allocation and page faults each."""
    needles = (needle,) if isinstance(needle, bytes) else needle
    rx = regex.compile(b"|".join(regex.escape(n) for n in needles))
    reach = SCAN_CHUNK + max(map(len, needles)) - 1  # a chunk and what a match begun in it may need
    fd, mine = f.fileno(), threading.local()

    def search(pos: int) -> list[int]:
        buf = getattr(mine, "buf", None)
        if buf is None:
            buf = mine.buf = bytearray(reach)
        n = os.preadv(fd, [memoryview(buf)[:min(reach, size - pos)]], pos)
        # a match that begins past the chunk is the next chunk's
        return [pos + m.start() for m in rx.finditer(buf, 0, n, concurrent=True) if m.start() < SCAN_CHUNK]

    starts = iter(range(0, size, SCAN_CHUNK))
    with ThreadPoolExecutor(SCANNERS, thread_name_prefix="locate") as pool:
        ahead = deque(pool.submit(search, pos) for pos in islice(starts, SCANNERS + 1))
        try:
            while ahead:
                hits = ahead.popleft().result()
                if (pos := next(starts, None)) is not None:
                    ahead.append(pool.submit(search, pos))
                yield from hits
        finally:  # the caller found its line: chunks not begun are not read
            for job in ahead:
                job.cancel()


def start_of_line(f, pos: int, eol: bytes, step: int = STEP) -> int:
    """Where the line holding byte `pos` begins (just after the last line end before it)."""
    start = pos
    while start > 0:
        lo = max(0, start - step)
        f.seek(lo)
        i = f.read(start - lo).rfind(eol)
        if i >= 0:
            return lo + i + 1
        start = lo
    return 0


def _line_around(f, pos: int, size: int, eol: bytes) -> tuple[int, int]:
    """(start, end) of the line holding byte `pos`, its line end excluded."""
    start = start_of_line(f, pos, eol)
    end = pos
    while end < size:
        f.seek(end)
        block = f.read(STEP)
        i = block.find(eol)
        if i >= 0:
            end += i
            break
        end += len(block)
        if not block:
            break
    return start, min(end, size)


def _line_offset(f, n: int, eol: bytes) -> int | None:
    """Where line n (1-based) begins: after n - 1 line ends, counted chunk by chunk."""
    need = n - 1
    pos = 0
    f.seek(0)
    while need > 0:
        chunk = f.read(16 * STEP)
        if not chunk:
            return None
        k = chunk.count(eol)
        if k < need:
            need -= k
            pos += len(chunk)
            continue
        i = -1
        for _ in range(need):
            i = chunk.find(eol, i + 1)
        return pos + i + 1
    return 0
