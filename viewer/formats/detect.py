"""Which format a transcript file is, decided from its content and the folder around it.

File names are never trusted on their own (every legion and corpus session is `messages.jsonl`). The
first records are read and every adapter scores them; the folder layout (a `subagents/` folder,
a legion `state.json`) only breaks ties. A file may be JSONL (one record per line) or one JSON
document (a list of messages, or an object holding one); both are recognised here. A big document
is judged by its beginning (`head_document`: its first records, read by viewer/docstream.py), and
long head lines by their shape (`_sniffed`): what detection costs does not grow with the file.

Some files are not transcripts at all: a binary file, or text whose first lines are not JSON
records. `not_a_transcript(head)` says why from the first bytes alone, so discovery can skip such a
file (with the reason on the list page) and `check` can say so in one line instead of reporting
hundreds of "unparsed" lines of garbage. An empty file is not one of them: it is a session with no
events yet (a live agent may be about to write its first line).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import docstream, files, reader
from . import ADAPTERS, BY_NAME, CLAIMING, FALLBACK, hook, streamed, wrapped

HEAD_BYTES = 256 << 10
HEAD_RECORDS = 50
# how far detection reads on for the end of a first line longer than its head (a prompt with a
# file pasted in, an image's base64), and how many whole lines it then wants
LONG_HEAD = 16 << 20
LONG_HEAD_LINES = 8
# fewer whole lines than this in a head a long line cuts are too few to judge by (a prompt line,
# then a message with a screenshot: the prompt alone reads as any chat format's): read on as for
# a long first line
FEW_LINES = 3
# formats of plain chat messages: the first lines of many other formats read as one of these (a
# MARSYS agent's, AgentScope's), so a file detected as one while it holds few records is detected
# again as it grows (SessionIndex.refresh)
PLAIN = frozenset({"openai-chat", "anthropic-messages"})
# a JSON document bigger than this is decided by its beginning: its first DOC_HEAD_RECORDS
# records (of any list), within DOC_HEAD bytes (`head_document`), never by a whole read
DOC_HEAD = 4 << 20
DOC_HEAD_RECORDS = 2 * HEAD_RECORDS
SNIFF_BYTES = 16 << 10  # what discovery reads of a file to tell a transcript from anything else
_BOM = b"\xef\xbb\xbf"
# bytes that never occur in UTF-8 text (tab, newlines, form feed and escape aside)
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 12, 13, 27))
DOCUMENT_KEYS = ("messages", "history", "conversation", "trajectory", "memory", "content", "data",
                 "items", "events")


class NotTranscript(Exception):
    """The file is not a transcript: binary, or text whose first lines are not JSON records."""

    def __init__(self, path: str | Path, reason: str):
        super().__init__(f"{path} is not a transcript ({reason})")
        self.path, self.reason = str(path), reason


def not_a_transcript(head: bytes, more: bool = False) -> str | None:
    """Why a file that starts with `head` cannot be a transcript, or None when it may be one.

    A transcript is made of JSON objects or arrays: one per line, or one document. A file may be
    one when it opens like JSON text, or when any of its first lines is such a record (a stray
    log line before the records does not disqualify it); otherwise it is not, and the reason
    says whether it is binary (NUL or other control bytes) or text of another kind. `more`: the
    file goes on past `head` (discovery's quick look), so a text whose first line is longer than
    the head is not judged by it: detection, which reads more, says."""
    body = head[3:] if head.startswith(_BOM) else head
    stripped = body.lstrip()
    if not stripped:
        return None  # empty: a session with no events yet
    sample = body[:4096]
    binary = len(sample.translate(None, _CONTROL)) < len(sample) * 0.95 or b"\0" in sample
    if not binary and (stripped[:1] in (b"{", b"[") or more and b"\n" not in stripped):
        return None
    seen = 0
    lines = body.split(b"\n")
    for n, line in enumerate(lines):
        line = line.strip()
        if not line:
            continue
        if line[:1] in (b"{", b"[") and (n == len(lines) - 1  # a record longer than the head
                                        or isinstance(reader.decode(line), (dict, list))):
            return None
        seen += 1
        if seen >= HEAD_RECORDS:
            break
    return "a binary file" if binary else "its first lines are not JSON records"


@dataclass(slots=True)
class Detected:
    format: str
    mode: str  # "jsonl" | "document"
    reason: str = ""
    eol: str = "\n"  # the line end of a JSONL file: "\r" when it has CR-only line endings


def adapter_score(adapter, records: list) -> int:
    """How sure an adapter is that the records are its own: the sum of its per-record scores.

    A format that extends a generic one (MARSYS writes OpenAI messages plus marks of its own:
    `EXTENDS = openai_chat`) is credited, once the records show one of its unmistakable marks
    (a record scored 3), with the generic format's score for each record it does not claim more
    strongly itself: most of its records are plain OpenAI messages, and the marks decide. A record
    that wraps messages (a dataset's conversation, a logged API call: `wrapped`) is no message of
    its own, and earns it nothing: a dataset with one MARSYS message among its lines stays one.
    A format whose marks are not all of that layout names those that are (`layout_mark`): Codex's
    bare header and state lines are, its envelope lines are not (a file of envelopes is all
    envelopes), so one envelope line among Agents SDK items does not take the items for Codex's."""
    own = [hook(adapter, "sniff", r, default=0) or 0 for r in records]
    base = getattr(adapter, "EXTENDS", None)
    if base is not None and 3 in own and (
            not hasattr(adapter, "layout_mark")
            or any(o == 3 and hook(adapter, "layout_mark", r) for o, r in zip(own, records))):
        return sum(max(o, hook(base, "sniff", r, default=0) or 0) if wrapped.kind(r) is None else o
                   for o, r in zip(own, records))
    return sum(own)


def detect_records(records: list, folder: Path | None = None) -> tuple[str, int]:
    """The best-scoring adapter for a list of records (and its score)."""
    best, best_score = FALLBACK.NAME, 0
    for adapter in ADAPTERS:
        score = adapter_score(adapter, records)
        if folder is not None and score:
            score += _layout_bonus(adapter.NAME, folder)
        if score > best_score:
            best, best_score = adapter.NAME, score
    return best, best_score


def _layout_bonus(name: str, folder: Path) -> int:
    if name == "claude-code" and (folder / "subagents").is_dir():
        return 1
    if name == "legion" and (folder / "state.json").is_file():
        return 1
    return 0


def document_records(doc: Any) -> list[tuple[str, Any]]:
    """The message records inside a document that no adapter claims specially."""
    if isinstance(doc, list):
        return [(f"[{i}]", r) for i, r in enumerate(doc)]
    if isinstance(doc, dict):
        for key in DOCUMENT_KEYS:
            if isinstance(doc.get(key), list):
                return [(f"{key}[{i}]", r) for i, r in enumerate(doc[key])]
    return []


def records_for(adapter, doc: Any) -> list[tuple[str, Any]] | None:
    """The records an adapter reads from a document: its own `records` if it has one."""
    if hasattr(adapter, "records"):
        return hook(adapter, "records", doc)
    return document_records(doc) or None


def records_read(adapter, doc: Any) -> list[tuple[str, Any]]:
    """The records a session's document is read as: its format's; else, for a file of wrappers
    none of which holds that format's messages (one dataset line above a format's own lines,
    which detection named by the most of them), the file's lines as unwrapped — the wrappers'
    messages and every other line as written; else the document as one record no format knows."""
    recs = records_for(adapter, doc)
    if not recs and isinstance(doc, dict) and isinstance(fold := doc.get(wrapped.LINES), wrapped.Fold):
        recs = fold.records
    return recs or FALLBACK.records(doc)


def detect_document(doc: Any, folder: Path | None = None) -> str:
    return score_document(doc, folder)[0]


def score_document(doc: Any, folder: Path | None = None) -> tuple[str, int]:
    """The best-scoring adapter for a whole document (and its score)."""
    best, best_score = FALLBACK.NAME, 0
    for adapter in ADAPTERS:
        recs = records_for(adapter, doc)
        if not recs:
            continue
        score = adapter_score(adapter, [r for _, r in recs[:HEAD_RECORDS]])
        score += hook(adapter, "document_bonus", doc, default=0) or 0
        if folder is not None and score:
            score += _layout_bonus(adapter.NAME, folder)
        if score > best_score:
            best, best_score = adapter.NAME, score
    return best, best_score


def detect_file(path: str | Path) -> Detected:
    """Detect the format of one file. Raises OSError when it cannot be read, NotTranscript when
    it is not a transcript at all."""
    path = Path(path)
    with files.open_file(path) as f:
        start = reader.skip_bom(f)
        head = f.read(HEAD_BYTES)
        size = f.seek(0, 2) - start
    # a session kept as a folder of files, told by its main file and where it sits: even emptied
    # or damaged (not JSON records at all), its other files remain
    for adapter in CLAIMING:
        if hook(adapter, "claims_file", path, head):
            return Detected(adapter.NAME, "document", "its folder's layout")
    why = not_a_transcript(head)
    if why:
        raise NotTranscript(path, why)
    if not head.strip():
        return Detected(FALLBACK.NAME, "jsonl", "empty file")
    whole = size <= HEAD_BYTES
    told: dict = {}  # what `long_lines` found out of the file being one line (`_one_line`)
    eol = "\r" if b"\n" not in head and b"\r" in head.strip() else "\n"
    lines = [ln for ln in head.split(eol.encode()) if ln.strip()]
    if not whole:
        lines = lines[:-1]  # the head may cut the last line
        if len(lines) < FEW_LINES:  # a line longer than the rest of the head: not judged by no
            # record at all (its first line that long), nor by one or two
            lines, whole = long_lines(path, start, head, eol.encode(), told if eol == "\n" else None)
    single = whole and len(lines) == 1
    if single and len(lines[0]) > reader.HUGE_LINE and lines[0].lstrip()[:1] in (b"{", b"["):
        # a big document on one line: judged by its beginning, as any big document (skimmed
        # whole as a line, one of 16 MB took seconds)
        decoded = [reader.BadLine("a big document on one line")]
    else:
        decoded = [_sniffed(ln) for ln in lines[:HEAD_RECORDS]]
    first = decoded[0] if lines else reader.BadLine("first line longer than the head")
    if head.lstrip()[:1] in (b"{", b"[") and (isinstance(first, (reader.BadLine, list)) or single):
        # a pretty-printed or one-line document rather than one record per line (a big one
        # judged by its first records)
        doc = read_document(path) if size <= reader.HUGE_LINE else head_document(path)
        if not isinstance(doc, reader.BadLine):
            name, doc_score = score_document(doc, path.parent)
            if isinstance(doc, dict) and (told["one"] if "one" in told else _one_line(path)):
                # one object on one line may be a transcript of one record (a session that has
                # just begun) as much as a document: it is scored as a record like any other
                as_record, record_score = detect_records([doc], path.parent)
                if record_score > doc_score or name == FALLBACK.NAME:
                    return Detected(as_record, _lines_mode(as_record, [doc]))
            return Detected(name, "document")
    records = [r for r in decoded if not isinstance(r, reader.BadLine)]
    name, _ = detect_records(records, path.parent)
    return Detected(name, _lines_mode(name, records), eol=eol)


def _sniffed(line: bytes) -> Any:
    """A head line decoded for detection: a long one skimmed, its long strings cut (a prompt
    with a log pasted in: detection needs its record's shape, not its 8 MB of text; decoded
    whole, a few such lines cost a quarter of a second on every detection)."""
    if len(line) <= reader.STRING_CAP:
        return reader.decode(line)
    return reader.skim(io.BytesIO(line), 0, len(line))


def long_lines(path: Path, start: int, head: bytes, eol: bytes,
               told: dict | None = None) -> tuple[list[bytes], bool]:
    """The first whole lines of a file whose head holds none (or too few: `FEW_LINES`), and
    whether they are all of it:
    read on, within LONG_HEAD bytes, until LONG_HEAD_LINES lines end or the file does (its last
    line counts then, as in a file the head holds whole: one line is then a document or a
    record as `detect_file` judges a whole one). `told["one"]` is set when what was read says
    whether the file is one line (`_one_line`: a big one-line document is then not read again
    to know it)."""
    told = {} if told is None else told
    buf = bytearray(head)
    ended = False
    seen = head.count(eol)  # (counted chunk by chunk: counting the whole buffer again after each
    # chunk read cost its length squared, a quarter of a second for lines of 8 MB)
    with files.open_file(path) as f:
        f.seek(start + len(head))
        while len(buf) < LONG_HEAD:
            chunk = f.read(1 << 20)
            if not chunk:
                ended = True
                break
            buf += chunk
            seen += chunk.count(eol)
            if seen >= LONG_HEAD_LINES:
                break
        if not ended and eol not in buf:
            # a first line longer than even that: the lines after it are looked for past it
            # (its end found, its bytes not kept), up to LONG_SKIP
            buf, ended = _after_first_line(f, eol, told)
            skipped = True
        else:
            skipped = False
    lines = [ln for ln in bytes(buf).split(eol) if ln.strip()]
    if ended and not skipped:  # (the whole file after `start` is in `buf`)
        told["one"] = eol not in bytes(buf).rstrip()
    return (lines, True) if ended else (lines[:-1], False)


LONG_SKIP = 256 << 20


def _after_first_line(f, eol: bytes, told: dict) -> tuple[bytearray, bool]:
    """The bytes after the end of a file's first line (read on from where `f` is), up to
    LONG_HEAD of them or LONG_HEAD_LINES lines, and whether the file ends there; nothing when
    the line does not end within LONG_SKIP (one long line: a document). `told["one"]`: whether
    the file is that one line, when the look says (see `long_lines`). The bytes are read into one
    buffer, over and over (a new megabyte for each read cost as much as the search)."""
    seen = 0
    chunk = bytearray(1 << 20)
    view = memoryview(chunk)
    while seen < LONG_SKIP:
        n = f.readinto(chunk)
        if not n:
            told["one"] = True  # (no line end at all)
            return bytearray(), False
        seen += n
        at = chunk.find(eol, 0, n)
        if at >= 0:
            buf = bytearray(view[at + 1:n])
            lines = buf.count(eol)
            while len(buf) < LONG_HEAD and lines < LONG_HEAD_LINES:
                more = f.read(1 << 20)
                if not more:
                    told["one"] = not buf.strip()  # (a line end, then blank space: one line)
                    return buf, True
                buf += more
                lines += more.count(eol)
            if buf.strip():
                told["one"] = False  # (something after the first line)
            return buf, False
    return bytearray(), False


def _lines_mode(name: str, records: list = ()) -> str:
    """How a JSONL file of a format is read: line by line, or whole as one document when its
    lines rewrite earlier records (`FOLDS_LINES`; the format folds them in `folder_document`) or
    each hold many records (`folds_lines(records)`: a dataset's or an API log's lines)."""
    adapter = BY_NAME.get(name)
    if getattr(adapter, "FOLDS_LINES", False):
        return "document"
    return "document" if records and hook(adapter, "folds_lines", records) else "jsonl"


def _one_line(path: Path) -> bool:
    """Whether the file is one line (a trailing newline and blank space aside)."""
    with files.open_file(path) as f:
        while chunk := f.read(1 << 20):
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            rest = chunk[nl:]
            while True:
                if rest.strip():
                    return False
                rest = f.read(1 << 20)
                if not rest:
                    return True
    return True


def folder_document(path: str | Path) -> Any:
    """A folder's session read as one document (a format's `folder_document`: also a JSONL file
    of wrappers, `formats.wrapped.lines_document`, read whole), or None."""
    for adapter in ADAPTERS:
        doc = hook(adapter, "folder_document", Path(path))
        if doc is not None:
            return reader.shallow(doc)
    return None


def head_document(path: str | Path, folder: bool = True) -> Any:
    """The beginning of a JSON document, as a document: its top-level members and the first
    DOC_HEAD_RECORDS elements of its lists, within its first DOC_HEAD bytes (`docstream`), and the
    members after its last list, read from its end (`docstream.tail_members`: a key that decides
    how it reads may come after a list, or after a first message longer than DOC_HEAD); a
    folder's session, or a document that is no array or object, as `read_document` reads it.
    Discovery and detection decide a big document by this, in milliseconds whatever its size
    (read whole, a 200 MB one took seconds and half a gigabyte to be listed)."""
    doc = folder_document(path) if folder else None
    if doc is not None:
        return doc
    with files.open_file(path) as f:
        start = reader.skip_bom(f)
        size = f.seek(0, 2)
        try:
            doc, whole = docstream.assemble(docstream.parts(f, start, size), most=DOC_HEAD_RECORDS,
                                            budget=DOC_HEAD)
        except ValueError:
            return read_document(path, folder)
        if not whole and isinstance(doc, dict):
            tail = docstream.tail_members(f, start, size) or {}
            doc.update((k, v) for k, v in tail.items() if k not in doc)
    return doc


@dataclass(slots=True)
class StreamPlan:
    """How a big document is read a record at a time: the elements of its list `key` ("" for a
    top-level array); `tail`, its members after that list as its end shows them (None when the
    list is not its last: see `docstream.tail_members`); `hooked`: its format makes its records
    by its `stream` hook (formats/streamed.py), else they are the elements themselves."""

    key: str
    tail: dict | None
    hooked: bool

    def streaming(self, adapter, shell: Any) -> tuple:
        """The format's reading of the document whose members before the list are `shell` (with
        the members after it that its end shows), or None when it makes none of it; and those
        members as the format was given them (`streamed.Watched`: which it looked at)."""
        if not self.key:
            return hook(adapter, "stream", None, ""), None
        given = streamed.Watched(shell)
        given.update((k, v) for k, v in (self.tail or {}).items() if k not in shell)
        dict.__setitem__(given, self.key, [])
        return adapter.stream(given, self.key), given


def stream_plan(path: str | Path, adapter, folder: bool = True) -> StreamPlan | None:
    """How a big document can be read a record at a time as `adapter` reads it (`StreamPlan`):
    when its records are the elements of one list ("" for a top-level array, else the member's
    key), in order, one record each — each the element itself, a member of it, or it marked with
    what its neighbours say (`streamed.how`) — after any records of the document's other members
    (a format's `stream` hook says). Then the document is read a record at a time (`docstream`,
    the index) and each record read again from its own bytes (the timeline). None when the
    document is small (read whole: it costs little), is a folder's session, or the format makes
    its records otherwise (pairs records of two lists, makes many of one element): read whole,
    as before. Judged on the document's beginning (`head_document`): its records there must be
    those a whole read of that beginning gives; the index checks the rest as it reads them.
    `folder`: False when the caller found the file is no folder's session already
    (`folder_document` reads a JSONL file of wrappers whole: asked twice, such a log was read
    twice)."""
    try:
        if os.path.getsize(path) <= reader.HUGE_LINE or files.row_store(path) is not None:
            return None
    except OSError:
        return None
    if folder and folder_document(path) is not None:
        return None
    doc = head_document(path, folder)
    hooked = hasattr(adapter, "stream")
    if isinstance(doc, list):
        key, items = "", doc
    elif isinstance(doc, dict):
        recs = records_read(adapter, doc)
        lists = [p.split("[", 1)[0] for p, _ in recs if isinstance(p, str) and "[" in p]
        if hooked:  # (the records of other members' lists come first; the format may name its
            # list where the document's beginning does not show it: a RunState's long before it)
            key = hook(adapter, "stream_list", doc) or (lists[-1] if lists else None)
        else:
            key = lists[0] if len(set(lists)) == 1 else None
        items = doc.get(key, [] if hooked else None) if key else None
        if not isinstance(items, list):
            return None
    else:
        return None
    if not items and not hooked:
        return None
    if not hooked:
        return StreamPlan(key, None, False) if plain_window(adapter, doc, key, items) else None
    plan = StreamPlan(key, _tail(path) if key else None, True)
    shell = {k: v for k, v in doc.items() if k != key} if key else None
    try:
        streaming, _ = plan.streaming(adapter, shell)
        if streaming is None:
            return None
        mine = streamed.whole(streaming, key, items)
    except streamed.NotStreamed:
        return None
    return plan if _same_records(mine, records_read(adapter, doc), key, items) else None


def plain_window(adapter, shell: Any, key: str, items: list) -> bool:
    """Whether `adapter` reads the document `shell` with `items` as its list `key` as exactly
    those items, in order, each its own record (a format with no `stream` hook: its big document
    is read a record at a time only then; the index asks it of each stretch it reads)."""
    doc = items if not key else {**shell, key: items}
    try:
        recs = records_read(adapter, doc)
    except Exception:
        return False
    return len(recs) == len(items) and all(
        r is v and p == f"{key}[{i}]" for i, ((p, r), v) in enumerate(zip(recs, items)))


def _tail(path: str | Path) -> dict | None:
    with files.open_file(path) as f:
        start = reader.skip_bom(f)
        return docstream.tail_members(f, start, f.seek(0, 2))


def _same_records(mine: list, theirs: list, key: str, items: list) -> bool:
    """Whether a format's streamed records are those its whole reading gives, each one a record
    `streamed.how` rebuilds from its element (or one of the document's other members: before)."""
    if len(mine) != len(theirs):
        return False
    listed = False
    for (p, r), (q, s) in zip(mine, theirs):
        if p != q or type(r) is not type(s) or r != s \
                or getattr(r, "__dict__", None) != getattr(s, "__dict__", None):
            return False
        if isinstance(p, str) and p.startswith(f"{key}["):
            listed = True
        elif listed:
            return False  # (a record of another member after the list's: not streamed)
    for i, item in enumerate(items):
        path, rec = mine[len(mine) - len(items) + i]
        try:
            streamed.how(key, i, item, path, rec)
        except ValueError:
            return False
    return True


def read_document(path: str | Path, folder: bool = True) -> Any:
    """A whole-file JSON document; huge ones are skimmed (long strings cut) rather than loaded.

    A format that keeps one session in a folder of files (Wolo: `session.json` + `messages/*.json`)
    offers `folder_document(path)`: the folder read as one document, or None when `path` is not
    such a session's main file. Discovery, the index and the timeline all read documents here.
    `folder`: False when the caller asked `folder_document` already."""
    doc = folder_document(path) if folder else None
    if doc is not None:
        return doc
    with files.open_file(path) as f:
        start = reader.skip_bom(f)
        size = f.seek(0, 2) - start
        if size > reader.HUGE_LINE:
            return reader.skim(f, start, size)
        f.seek(start)
        data = f.read()
    doc = reader.decode(data)
    if isinstance(doc, reader.BadLine):
        return reader.BadLine(f"malformed JSON document: {doc.reason.split(': ', 1)[-1]}")
    return reader.shallow(doc, data)
