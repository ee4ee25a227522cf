"""Search inside one session: every thread, every event, loaded on the page or not.

A search matches what a reader sees — `text.pieces(ev)`: message text, thinking, tool names, tool
inputs and results, decoded, never JSON syntax, field names or base64 — so it cannot simply grep the
file. It cannot decode a 100 MB file per keystroke either. So it works in two steps:

1. **A byte prefilter** over each thread's file. The needle is turned into the forms its characters
   take inside a JSON string (`"` is `\\"`, a newline `\\n`, `/` may be `\\/`, `<` may be `\\u003c`, a
   non-ASCII character is raw UTF-8 or `\\uXXXX`; case-folded when the search ignores case) and the
   longest stretch of the needle with few forms is searched for with `bytes.find` (or one small
   alternation). Every line whose decoded text can hold the needle holds one of those forms, so the
   prefilter only ever drops lines that cannot match. A regular expression has no single needle:
   the literal runs it requires are pulled out of the pattern (conservatively: groups, classes and
   anything optional are skipped), and a pattern with none is matched against every event.
2. **Matching** decodes only the candidate lines, through the same loading path the pages use
   (`timeline.load_picked`: adapter, then whatever the app does to events after it), and runs the
   pattern over each visible piece. Strings cut out of huge lines are read back whole
   (`text.expander`), so a match deep inside a 20 MB tool output is found. Hidden events match too:
   opening a hit opens what hides it.

Hits come out of a generator in reading order (`order.reading_order`: sub-agent threads where their
call sits), so the web layer streams them as they are found. A scan stops at a hit limit or a time
budget and says so (`complete`, and a cursor to resume from). Regular expressions run on the
`regex` package with a timeout per piece and with the GIL released: a pathological pattern costs
its time budget, never the server.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
import time
from dataclasses import dataclass
from typing import Iterator

import regex

from . import files, keys, partial, timestamps
from .index import SessionIndex, ThreadIndex, epoch
from .order import reading_order
from .partial import start_of_line
from .render import strip_ansi
from .text import Piece, expander, pieces
from .timeline import load_picked

MAX_QUERY = 1000  # characters
CHUNK = 4 << 20  # bytes read at a time by the prefilter
MAX_ALTERNATIVES = 16  # byte forms the prefilter may look for at once
WINDOW_CHARS = 48  # longest stretch of the needle the prefilter uses
PIECE_TIME = 0.25  # seconds a regular expression may spend on one piece of text
MAX_MATCHES_PER_EVENT = 1000
DOCUMENT_BATCH = 200  # events of a single-document session matched between time checks
SNIPPET_BEFORE, SNIPPET_AFTER, SNIPPET_MATCH = 60, 110, 160


class QueryError(ValueError):
    """A query that cannot run, with a message for the person who typed it."""


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    regex: bool = False
    case: bool = False  # case-sensitive

    @classmethod
    def from_args(cls, args) -> "Query | None":
        """The query of a request's arguments (`q`, `regex`, `case`), or None when there is none."""
        text = args.get("q") or ""
        if not text.strip():
            return None
        return cls(text, _flag(args.get("regex")), _flag(args.get("case")))

    def args(self) -> dict:
        """The query as URL arguments (the inverse of `from_args`)."""
        return {"q": self.text, "regex": 1 if self.regex else None, "case": 1 if self.case else None}


def _flag(v) -> bool:
    return str(v or "").lower() in ("1", "true", "on", "yes")


# --- matching text -------------------------------------------------------------------------------


class Matcher:
    """A compiled query: spans in decoded text, and the byte prefilter for files."""

    def __init__(self, query: Query):
        self.query = query
        if len(query.text) > MAX_QUERY:
            raise QueryError(f"The search is too long ({len(query.text)} characters; at most {MAX_QUERY}).")
        if query.regex:
            flags = regex.V0 | (0 if query.case else regex.IGNORECASE)
            try:
                self.rx = regex.compile(query.text, flags)
            except regex.error as e:
                where = f" at position {e.pos}" if e.pos is not None else ""
                raise QueryError(f"Not a valid regular expression: {e.msg}{where}.") from None
            except (ValueError, OverflowError, RecursionError) as e:
                raise QueryError(f"Not a valid regular expression: {e}.") from None
            if self.rx.search("", timeout=PIECE_TIME) is not None:
                raise QueryError("This regular expression matches empty text, so it would match "
                                 "everywhere; make it require at least one character.")
        else:  # the regex package finds a case-folded literal many times faster than re
            self.rx = regex.compile(regex.escape(query.text), regex.V0 | (
                0 if query.case else regex.IGNORECASE))
        self.prefilter = Prefilter.of(query)
        self.timeouts = 0  # pieces a regular expression ran out of time on

    def spans(self, text: str, deadline: float | None = None, pos: int = 0,
              limit: int = MAX_MATCHES_PER_EVENT) -> list[tuple[int, int]]:
        """(start, end) of the matches in `text` from `pos`. A regular expression gets at most
        PIECE_TIME (and never past `deadline`); running out costs the rest of this text only."""
        out: list[tuple[int, int]] = []
        if not self.query.regex:
            for m in self.rx.finditer(text, pos):
                out.append(m.span())
                if len(out) >= limit:
                    break
            return out
        budget = PIECE_TIME
        if deadline is not None:
            budget = max(0.001, min(budget, deadline - time.monotonic()))
        try:
            for m in self.rx.finditer(text, pos, timeout=budget, concurrent=True):
                if m.end() > m.start():
                    out.append(m.span())
                    if len(out) >= limit:
                        break
        except TimeoutError:
            self.timeouts += 1
        return out


# --- the byte prefilter --------------------------------------------------------------------------

_SHORT_ESCAPES = {'"': b'\\"', "\\": b"\\\\", "\n": b"\\n", "\r": b"\\r", "\t": b"\\t",
                  "\b": b"\\b", "\f": b"\\f"}
_OFTEN_ESCAPED = set("/<>&'\x7f")  # JSON writers that escape for HTML or JavaScript


def _unicode_escapes(ch: str) -> set[bytes]:
    data = ch.encode("utf-16-be")
    units = [data[i : i + 2].hex() for i in range(0, len(data), 2)]
    lower = "".join(f"\\u{u}" for u in units).encode()
    return {lower, lower.upper().replace(b"\\U", b"\\u")}


def char_forms(ch: str, fold: bool) -> set[bytes]:
    """The byte forms a character of decoded text can take inside a JSON string in a file (ASCII
    lower-cased when `fold`, as the prefilter lower-cases what it reads)."""
    variants = {ch}
    if fold:
        variants |= {v for v in (ch.lower(), ch.upper()) if len(v) == 1}
    forms: set[bytes] = set()
    for c in variants:
        cp = ord(c)
        if c in _SHORT_ESCAPES:
            forms.add(_SHORT_ESCAPES[c])
        elif cp < 0x20:
            forms |= _unicode_escapes(c)
        elif cp <= 0x7F:
            forms.add(c.encode())
            if c == "/":
                forms.add(b"\\/")
            elif c in _OFTEN_ESCAPED:
                forms |= _unicode_escapes(c)
        else:
            if not 0xD800 <= cp <= 0xDFFF:
                forms.add(c.encode())
            forms |= _unicode_escapes(c)
    return {f.lower() for f in forms} if fold else forms


def _window(chars: list[set[bytes]]) -> tuple[int, int]:
    """The stretch [a, b) of a needle to look for: the most bytes for at most MAX_ALTERNATIVES."""
    best, best_len = (0, 0), -1
    for a in range(len(chars)):
        product, length = 1, 0
        for b in range(a, min(len(chars), a + WINDOW_CHARS)):
            product *= len(chars[b])
            if product > MAX_ALTERNATIVES:
                break
            length += min(len(f) for f in chars[b])
            if length > best_len:
                best, best_len = (a, b + 1), length
    return best


def needle_forms(needle: str, fold: bool) -> list[bytes]:
    """Byte strings one of which every JSON line holding `needle` (decoded) contains."""
    chars = [char_forms(c, fold) for c in needle]
    a, b = _window(chars)
    return sorted({b"".join(p) for p in itertools.product(*chars[a:b])}, key=len, reverse=True)


class Prefilter:
    """Finds the byte offsets in a file where a match may lie. `lower`: the bytes searched must be
    lower-cased first (several forms of a case-insensitive needle)."""

    def __init__(self, forms: list[bytes], fold: bool):
        self.forms = forms
        self.overlap = max(len(f) for f in forms) - 1
        self.lower = fold and len(forms) > 1
        if len(forms) == 1 and not fold:
            needle = forms[0]
            self.find = lambda hay, pos: hay.find(needle, pos)
            return
        if len(forms) == 1:  # the regex package folds ASCII case while it searches: no copy
            rx = regex.compile(regex.escape(forms[0]), regex.IGNORECASE)
        else:
            rx = re.compile(b"|".join(re.escape(f) for f in forms))

        def find(hay, pos):
            m = rx.search(hay, pos)
            return m.start() if m else -1

        self.find = find

    @classmethod
    def of(cls, query: Query) -> "Prefilter | None":
        if not query.regex:
            fold = not query.case
            return cls(needle_forms(query.text, fold), fold)
        found = required_literals(query.text)
        if not found:
            return None
        requirements, ignorecase = found
        fold = ignorecase or not query.case
        best, best_score = None, 0
        for options in requirements:
            forms = [needle_forms(o, fold) for o in options]
            score = min(min(len(x) for x in f) for f in forms)
            union = sorted({x for f in forms for x in f}, key=len, reverse=True)
            if score > best_score and len(union) <= 2 * MAX_ALTERNATIVES:
                best, best_score = union, score
        return cls(best, fold) if best else None


# --- literals a regular expression requires -------------------------------------------------------

_QUANT = set("*+?{")
_SAFE_FLAGS = set("imsauL-")
_ESCAPE_CHARS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f"}


def required_literals(pattern: str) -> tuple[list[list[str]], bool] | None:
    """Literal strings a match of `pattern` must contain: a list of requirements, each a list of
    alternatives (a top-level `a|b` gives one requirement with two), and whether any part of the
    pattern ignores case. None when the pattern changes how literals read (verbose mode, flags
    this scanner does not know). Conservative by design: it may find less than is required,
    never more."""
    ignorecase = False
    for m in re.finditer(r"\(\?([A-Za-z-]+)[:)]", pattern):
        flags = m.group(1)
        if not set(flags) <= _SAFE_FLAGS:
            return None
        ignorecase = ignorecase or "i" in flags.split("-")[0]
    try:
        branches = _top_level_branches(pattern)
        runs = [_literal_runs(b) for b in branches]
    except _Opaque:
        return None
    if len(branches) > 1:
        if not all(runs):
            return [], ignorecase
        return [[max(r, key=len) for r in runs]], ignorecase
    return [[r] for r in runs[0]], ignorecase


class _Opaque(Exception):
    pass


def _skip_class(p: str, i: int) -> int:
    """Index after the character class starting at p[i] == '['."""
    i += 1
    if i < len(p) and p[i] == "^":
        i += 1
    if i < len(p) and p[i] == "]":
        i += 1
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
        elif c == "[" and p.startswith("[:", i):
            end = p.find(":]", i + 2)
            i = end + 2 if end >= 0 else i + 1
        elif c == "]":
            return i + 1
        else:
            i += 1
    raise _Opaque


def _skip_group(p: str, i: int) -> int:
    """Index after the group starting at p[i] == '('."""
    depth = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _skip_class(p, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise _Opaque


def _top_level_branches(p: str) -> list[str]:
    out, start, i = [], 0, 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
        elif c == "[":
            i = _skip_class(p, i)
        elif c == "(":
            i = _skip_group(p, i)
        elif c == "|":
            out.append(p[start:i])
            start = i = i + 1
        else:
            i += 1
    out.append(p[start:])
    return out


def _skip_escape(p: str, i: int) -> int:
    """Index after an escape whose letter is p[i + 1] (an escape that is not a literal)."""
    c = p[i + 1] if i + 1 < len(p) else ""
    j = i + 2
    if c in "xuU":
        if c == "x" and p.startswith("{", j):
            return p.find("}", j) + 1 or len(p)
        return j + {"x": 2, "u": 4, "U": 8}[c]
    if c in "NpPgk" and j < len(p) and p[j] in "{<":
        close = p.find("}" if p[j] == "{" else ">", j)
        return close + 1 if close >= 0 else len(p)
    if c.isdigit():
        while j < len(p) and j < i + 4 and p[j].isdigit():
            j += 1
    return j


def _literal_runs(p: str) -> list[str]:
    """Runs of literal characters in a branch that every match contains."""
    runs: list[str] = []
    cur: list[str] = []

    def end_run():
        if cur:
            runs.append("".join(cur))
            cur.clear()

    i = 0
    while i < len(p):
        c = p[i]
        literal = None
        if c == "\\":
            nxt = p[i + 1] if i + 1 < len(p) else ""
            if nxt and not nxt.isalnum() and nxt.isascii():
                literal, i = nxt, i + 2
            elif nxt in _ESCAPE_CHARS:
                literal, i = _ESCAPE_CHARS[nxt], i + 2
            else:
                end_run()
                i = _skip_escape(p, i)
        elif c == "[":
            end_run()
            i = _skip_class(p, i)
        elif c == "(":
            end_run()
            i = _skip_group(p, i)
        elif c in ".^$)":
            end_run()
            i += 1
        elif c in _QUANT:
            end_run()  # a quantifier after something that was not a literal
            close = p.find("}", i) if c == "{" else -1
            i = close + 1 if close >= 0 else i + 1
        else:
            literal, i = c, i + 1
        if literal is None:
            continue
        quant = p[i] if i < len(p) else ""
        if quant in _QUANT:
            if quant == "+":
                cur.append(literal)  # required once, but what follows need not be adjacent
            end_run()
            if quant == "{":
                close = p.find("}", i)
                i = close + 1 if close >= 0 else i + 1
            else:
                i += 1
            if i < len(p) and p[i] in "?+":
                i += 1  # lazy / possessive
        else:
            cur.append(literal)
    end_run()
    return runs


# --- hits ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class Hit:
    id: str
    thread: str
    seq: int
    role: str
    kind: str
    time: float | None
    hidden: bool
    snippet: str
    mark: tuple[int, int]  # the match inside `snippet`
    matches: int  # matches in the whole event
    block: str  # block address of the first match ("b2.c0", "b1.i:command")
    field: str  # what the block is: text, thinking, tool, input, output…

    def as_dict(self) -> dict:
        return {"id": self.id, "thread": self.thread, "role": self.role,
                "snippet": self.snippet, "mark": list(self.mark),
                "time": timestamps.iso(timestamps.from_epoch(self.time)) if self.time else None,
                "matches": self.matches, "block": self.block, "field": self.field,
                "hidden": self.hidden}


def snippet(text: str, start: int, end: int) -> tuple[str, tuple[int, int]]:
    """The match with some text around it on one line, and where the match sits in it."""
    a = max(0, start - SNIPPET_BEFORE)
    if a:
        space = text.find(" ", a, start)
        if 0 <= space < a + 15:
            a = space + 1
    cut_end = min(end, start + SNIPPET_MATCH)
    b = min(len(text), cut_end + SNIPPET_AFTER)

    def flat(s: str) -> str:
        return _SPACES.sub(" ", strip_ansi(s))

    pre = ("…" if a else "") + flat(text[a:start]).lstrip()
    mid = flat(text[start:cut_end]) + ("…" if cut_end < end else "")
    post = flat(text[cut_end:b]).rstrip() + ("…" if b < len(text) else "")
    return pre + mid + post, (len(pre), len(pre) + len(mid))


_SPACES = re.compile(r"\s+")


# --- the scan ------------------------------------------------------------------------------------


class Scan:
    """One search over a session; iterate it for hits (reading order). Afterwards: `complete`,
    `stopped` ("limit" or "time"), `next` (a cursor to resume with) and a few figures."""

    def __init__(self, idx: SessionIndex, matcher: Matcher, *, cursor: str | None = None,
                 budget: float | None = None, limit: int | None = None):
        self.idx = idx
        self.matcher = matcher
        self.cursor = cursor
        self.budget = budget
        self.limit = limit
        self.complete = False
        self.stopped: str | None = None
        self.next: str | None = None
        self.hits = 0
        self.matches = 0
        self.candidates = 0
        self.scanned = 0  # bytes the prefilter read
        self.started = 0.0
        self.first_hit_after: float | None = None
        self.progress = 0.0

    def __iter__(self) -> Iterator[Hit]:
        return (step for step in self.steps() if step is not None)

    def steps(self) -> Iterator[Hit | None]:
        """The hits, and a None after each stretch of the file (a chance to send what came so far
        and to say how far the scan got: `progress`, 0..1)."""
        self.started = time.monotonic()
        deadline = self.started + self.budget if self.budget else None
        order = reading_order(self.idx)
        start_rank = self._resume_rank(order)
        for seg in order.segments:
            if seg.base + (seg.stop - seg.start) <= start_rank:
                continue
            lo = max(seg.start, seg.start + start_rank - seg.base)
            th = self.idx.threads[seg.thread]
            with files.confined(self.idx.confinement):  # only around the open: this generator yields
                handle = files.open_file(th.path)
            with handle as f:
                expand = expander(f)
                for batch, resume in self._candidates(th, f, lo, seg.stop):
                    self.candidates += len(batch)
                    for seq, ev in zip(batch, load_picked(self.idx, seg.thread, batch)):
                        if deadline and time.monotonic() > deadline:
                            return self._stop("time", order.rank(seg.thread, seq), order)
                        hit = self._match(ev, seq, expand, deadline)
                        if hit is None:
                            continue
                        self.hits += 1
                        self.matches += hit.matches
                        if self.first_hit_after is None:
                            self.first_hit_after = time.monotonic() - self.started
                        yield hit
                        if self.limit and self.hits >= self.limit:
                            return self._stop("limit", order.rank(seg.thread, seq) + 1, order)
                    if deadline and time.monotonic() > deadline and resume < seg.stop:
                        return self._stop("time", order.rank(seg.thread, resume), order)
                    self.progress = (seg.base + resume - seg.start) / max(1, len(order))
                    yield None
        self.progress = 1.0
        self.complete = True

    def _stop(self, why: str, rank: int, order) -> None:
        self.stopped = why
        if rank < len(order):
            self.next = str(rank)
        else:
            self.complete = True

    def _resume_rank(self, order) -> int:
        try:
            return max(0, int(self.cursor)) if self.cursor else 0
        except ValueError:
            return 0

    def _candidates(self, th: ThreadIndex, f, lo: int, hi: int):
        """Batches of candidate seqs in [lo, hi), each with the seq the scan has reached."""
        pre = self.matcher.prefilter
        if lo >= hi:
            return
        if th.mode == "document":
            if pre is not None and _file_is_document(th) and not self._file_has(f, pre, 0, th.size):
                return
            for a in range(lo, hi, DOCUMENT_BATCH):
                yield list(range(a, min(hi, a + DOCUMENT_BATCH))), min(hi, a + DOCUMENT_BATCH)
            return
        offsets, lengths = th.offsets, th.lengths
        if pre is None:
            a = lo
            while a < hi:  # every event, in batches of about a chunk of bytes
                b, size = a, 0
                while b < hi and (size < CHUNK or b == a):
                    size += lengths[b]
                    b += 1
                self.scanned += size
                yield list(range(a, b)), b
                a = b
            return
        start = offsets[lo]
        end = offsets[hi - 1] + lengths[hi - 1]
        pos = start
        last = lo - 1
        while pos < end:
            f.seek(pos)
            chunk = f.read(min(CHUNK, end - pos))
            if not chunk:
                break
            self.scanned += len(chunk)
            hay = chunk.lower() if pre.lower else chunk
            found: list[int] = []
            i = pre.find(hay, 0)
            while i >= 0:
                seq = bisect.bisect_right(offsets, pos + i, lo, hi) - 1
                if seq > last and pos + i < offsets[seq] + lengths[seq]:
                    found.append(seq)
                    last = seq
                nxt = offsets[seq] + lengths[seq] - pos if seq >= lo else i + 1
                i = pre.find(hay, max(i + 1, nxt))
            full = pos + len(chunk) >= end
            pos = end if full else pos + len(chunk) - pre.overlap
            if found and offsets[last] + lengths[last] > pos:
                pos = offsets[last] + lengths[last]  # the rest of a long candidate line: no need
                full = pos >= end
            reached = hi if full else max(lo, bisect.bisect_right(offsets, pos, lo, hi) - 1)
            if found:
                yield found, reached
            elif not full:
                yield [], reached

    def _file_has(self, f, pre: Prefilter, start: int, end: int) -> bool:
        pos = start
        while pos < end:
            f.seek(pos)
            chunk = f.read(min(CHUNK, end - pos))
            if not chunk:
                return False
            self.scanned += len(chunk)
            if pre.find(chunk.lower() if pre.lower else chunk, 0) >= 0:
                return True
            if pos + len(chunk) >= end:
                return False
            pos += len(chunk) - pre.overlap
        return False

    def _match(self, ev, seq: int, expand, deadline) -> Hit | None:
        first: tuple[Piece, int, int] | None = None
        count = 0
        for piece in pieces(ev, expand):
            found = self.matcher.spans(piece.text, deadline, limit=MAX_MATCHES_PER_EVENT - count)
            if found:
                if first is None:
                    first = (piece, *found[0])
                count += len(found)
                if count >= MAX_MATCHES_PER_EVENT:
                    break
        if first is None:
            return None
        piece, s, e = first
        text, mark = snippet(piece.text, s, e)
        return Hit(ev.id, ev.thread, seq, ev.role, ev.kind, epoch(ev.timestamp), ev.hidden,
                   text, mark, count, piece.path, piece.field)


def _file_is_document(th: ThreadIndex) -> bool:
    """Whether a document thread's records are all read from its file's bytes, so that a needle
    not in them is in none of its records: not a session kept in a folder of files (Wolo,
    OpenCode's storage: the format's `folder_document`) nor a database row (Goose, AgentScope
    Studio, OpenCode's database: the "file" is the session's row, its messages are other rows)."""
    from .formats import get

    return files.row_store(th.path) is None and getattr(get(th.format), "folder_document", None) is None


def search(idx: SessionIndex, query: Query, **kw) -> Scan:
    """A scan of `idx` for `query` (raises QueryError for a query that cannot run)."""
    return Scan(idx, Matcher(query), **kw)


# --- a search before the index exists -------------------------------------------------------------

QUICK_LINES = 16  # candidate lines a search without the index reads; with more it waits for one


class QuickScan(Scan):
    """A whole-session search while the session has no index yet (a cold start of a big one): the
    byte prefilter runs over the files themselves, and the few lines it keeps are read alone as
    regions (`SessionIndex.read_region`, the code of the full index), so an answer costs one read
    of the bytes instead of an index pass.

    A sub-agent's file that holds the search (`_may_hold`; at most SUB_AGENTS of them, SUB_MOST
    bytes together) is read whole into a thread linked to the call in the main file that spawned
    it (`partial.call_line`, `SessionIndex.read_companion`: as a first screen around a sub-agent's
    hit reads it), and its hits are placed where the full index reads them — right after the event
    holding that call (`order.reading_order`).

    It answers only what it can answer exactly as the indexed scan would, and says so with `ok`:
    a JSON document, a regular expression with no literal to look for, more than QUICK_LINES
    candidate lines in the main file, a last line with no end, an event whose source id also
    appears earlier in the file (the full index might name it otherwise), a sub-agent whose place
    the main file's bytes do not tell (its call not found there, named by a second sub-agent too,
    a run of several) or whose hit's source id the files read before it hold — in all these it
    gives up, and the caller waits for the index. Ids are the full index's: lines are counted
    while the bytes are read, so an event without a usable source id gets its `L<line>` id. `idx`
    afterwards holds every thread a hit is in (`_hit.html` names the sub-agent)."""

    def __init__(self, path: str, matcher: Matcher, *, confinement=None, limit: int | None = None):
        super().__init__(None, matcher, limit=limit)
        self.path = path
        self.confinement = confinement
        self.ok = False
        self._hits: list[Hit] = []

    def run(self) -> "QuickScan":
        """Do the scan; afterwards `ok` says whether it answered (its hits are then iterated)."""
        from .formats import detect

        self.started = time.monotonic()
        pre = self.matcher.prefilter
        if pre is None:
            return self
        with files.confined(self.confinement):
            try:
                found = detect.detect_file(self.path)
                if found.mode != "jsonl":
                    return self
                subs = self._sub_agents(found)
            except (OSError, detect.NotTranscript):
                return self
            if subs is None:
                return self
            with files.open_file(self.path) as f:
                eol = found.eol.encode()
                lines = raw_candidates(f, pre, eol, QUICK_LINES)
                if lines is None:
                    return self
                self.scanned += f.seek(0, 2)
                hits = []  # ((where in reading order), hit)
                expand = expander(f)
                for lo, before in lines:
                    self.candidates += 1
                    idx, th = _line_region(self.path, self.confinement, found, lo, before)
                    if len(th) == 0:
                        return self  # a last line with no end: the index decides what it is
                    if th.carried.get("needs_before"):
                        return self  # it reads as the lines before it say (legion: a turn's cost)
                    events = load_picked(idx, "main", range(len(th)))
                    for ev in events:
                        if ev.id == ev.source_id and _occurs_before(f, ev.id.encode(), lo):
                            return self
                    for seq, ev in enumerate(events):
                        hit = self._match(ev, seq, expand, None)
                        if hit is not None:
                            hits.append(((lo, seq, 0), hit))
                    self.idx = idx
        for where, region, hit in subs:
            hits.append((where, hit))
            self.idx = self.idx or region
            self.idx.threads.setdefault(hit.thread, region.threads[hit.thread])
        if self.limit and len(hits) > self.limit:
            return self
        self._hits = [hit for _, hit in sorted(hits, key=lambda h: h[0])]
        self.hits = len(hits)
        self.matches = sum(h.matches for h in self._hits)
        self.first_hit_after = time.monotonic() - self.started if hits else None
        self.ok = True
        return self

    def steps(self) -> Iterator[Hit | None]:
        yield from self._hits
        self.progress = 1.0
        self.complete = True

    def _sub_agents(self, found) -> list[tuple[tuple, SessionIndex, Hit]] | None:
        """(where in reading order, the region read, hit) of each hit in a sub-agent's file; None
        when only the index can tell (see the class)."""
        from .formats import get

        subs = partial.companions(self.path, self.confinement)
        holding = [(n, *s) for n, s in enumerate(subs) if _may_hold(s[1], self.matcher, self.confinement)]
        if not holding:
            return []
        if len(holding) > SUB_AGENTS or sum(os.path.getsize(s[2]) for s in holding) > partial.SUB_MOST \
                or getattr(get(found.format), "spawning_calls", None) is not None:
            return None  # (too much to read now; sub-agents matched to their calls by the whole session)
        named = [m.get("toolUseId") for _, _, m in subs if isinstance(m, dict)]
        out, ids = [], []
        for n, agent, sub, meta in holding:
            thread = keys.thread_key(str(agent))
            meta = meta if isinstance(meta, dict) else {}
            if _RUNS & meta.keys() or any(keys.thread_key(str(a)) == thread for a, _, _ in subs[:n]):
                return None  # (one of a run of sub-agents; a thread the index reads as another's)
            at = partial.call_line(self.path, agent, meta, self.confinement)
            if at is None or named.count(at[1]) > (meta.get("toolUseId") == at[1]):
                return None  # (not found; a call another sub-agent's metadata names too)
            region, _ = _line_region(self.path, self.confinement, found, at[0], 0)
            th = region.read_companion(agent, sub, meta, at[1])
            if th is None:
                return None
            call = region.calls.call(at[1]).call[1]  # (which event of the call's line holds it)
            with files.open_file(sub) as f:
                seqs = list(_candidate_seqs(f, self.matcher.prefilter, th))
                self.candidates += len(seqs)
                expand = expander(f)
                for seq, ev in zip(seqs, load_picked(region, thread, seqs)):
                    hit = self._match(ev, seq, expand, None)
                    if hit is not None:
                        out.append(((at[0], call, 1, n, seq), region, hit))
                        if ev.id == ev.source_id:
                            ids.append((n, b'"' + ev.id.encode() + b'"'))
            self.scanned += th.size
        # a hit's source id that the main file or a sub-agent's file read before holds: the index
        # may name its event otherwise
        for n, sub in [(-1, self.path), *((n, sub) for n, (_, sub, _) in enumerate(subs))]:
            later = tuple(needle for m, needle in ids if m > n)
            if not later:
                break
            if partial.holds(sub, later, self.confinement):
                return None
        return out


def _candidate_seqs(f, pre: "Prefilter", th: ThreadIndex) -> Iterator[int]:
    """The seqs of a thread read whole whose lines the prefilter keeps, in order."""
    for line in candidate_lines(f, pre, th.eol.encode()):
        if line is None:
            return
        lo = line[0]
        yield from range(bisect.bisect_left(th.offsets, lo), bisect.bisect_right(th.offsets, lo))


def raw_candidates(f, pre: "Prefilter", eol: bytes, most: int) -> list[tuple[int, int]] | None:
    """(offset, lines before it) of each line of a file the prefilter keeps, in file order; None
    when there are more than `most`, or when one is a last line with no end."""
    out: list[tuple[int, int]] = []
    for line in candidate_lines(f, pre, eol):
        if line is None:
            return None
        out.append(line)
        if len(out) > most:
            return None
    return out


def candidate_lines(f, pre: "Prefilter", eol: bytes,
                    deadline: float | None = None) -> Iterator[tuple[int, int] | None]:
    """(offset, lines before it) of each line of a file the prefilter keeps, in file order, read
    as they are asked for; a None (and no more) for a match on a last line with no end, or once
    `deadline` (time.monotonic()) has passed."""
    size = f.seek(0, 2)
    pos = 0  # file offset of the chunk
    lines = 0  # line ends in [0, pos)
    last = -1  # lines before the last candidate (a match on the same line is the same candidate)
    while pos < size:
        if deadline is not None and time.monotonic() > deadline:
            yield None
            return
        f.seek(pos)
        chunk = f.read(min(CHUNK, size - pos))
        if not chunk:
            break
        full = pos + len(chunk) >= size
        hay = chunk.lower() if pre.lower else chunk
        counted, seen = 0, lines  # line ends in [0, pos + counted), counted as matches come
        i = pre.find(hay, 0)
        while i >= 0:
            seen += chunk.count(eol, counted, i)
            counted = i
            if seen > last:
                nl = chunk.rfind(eol, 0, i)
                at = pos + nl + 1 if nl >= 0 else start_of_line(f, pos, eol, 1 << 16)
                yield at, seen
                last = seen
            end = chunk.find(eol, i)
            if end < 0:
                if full:
                    yield None  # the match is on a last line with no end
                    return
                break
            i = pre.find(hay, end + 1)
        if full:
            break
        keep = len(chunk) - pre.overlap
        lines += chunk.count(eol, 0, keep)
        pos += keep


FIRST_HIT_LINES = 200  # candidate lines `first_hit` reads before it leaves the search to the index
FIRST_HIT_TIME = 1.0  # … and seconds (the index pass of 100 MB takes about 5 here)
SUB_AGENTS = 8  # sub-agents' files holding a search whose calls `sub_agent_hit`, `QuickScan` look for
_RUNS = {"workflowRun", "spawned_as", "spawn_group"}  # a sub-agent one of several a call ran (index._runs)


def first_hit(path: str, matcher: Matcher, confinement=None) -> tuple[int, int, str] | None:
    """Where the main file's first hit of a search is, found without the index (a search link
    opened on a big session not indexed yet: its first screen is drawn around it, web/routes.py):
    (offset of its line, that line's number, the hit's event id); () when the main file holds
    none; None when the bytes cannot tell soon (no literal to look for, a JSON document, more than
    FIRST_HIT_LINES candidate lines or FIRST_HIT_TIME seconds before a hit). A sub-agent's hit
    that comes first in reading order is not looked for here (`sub_agent_hit`)."""
    from .formats import detect

    pre = matcher.prefilter
    if pre is None:
        return None
    deadline = time.monotonic() + FIRST_HIT_TIME
    scan = Scan(None, matcher)
    with files.confined(confinement):
        try:
            found = detect.detect_file(path)
        except (OSError, detect.NotTranscript):
            return None
        if found.mode != "jsonl":
            return None
        with files.open_file(path) as f:
            expand = expander(f)
            for n, line in enumerate(candidate_lines(f, pre, found.eol.encode(), deadline)):
                if line is None or n >= FIRST_HIT_LINES or time.monotonic() > deadline:
                    return None
                lo, before = line
                idx, th = _line_region(path, confinement, found, lo, before)
                for seq, ev in enumerate(load_picked(idx, "main", range(len(th)))):
                    if scan._match(ev, seq, expand, deadline) is not None:
                        return lo, before + 1, ev.id
    return ()


def sub_agent_hit(path: str, matcher: Matcher, before: int | None, confinement=None):
    """Where a search's first hit is when a sub-agent's file holds one read before the main
    file's first (`before`: where that hit's line begins, `first_hit`; None when the main file's
    bytes told of none), found without the index: a sub-agent's hit is read where the call that
    spawned it sits (`order.reading_order`). Returns None when no sub-agent's file holds the
    search (the main file's hit, if any, is the first, and its region's hits are the first ones);
    () when some hold it past the main file's hit (that hit is the first; theirs may come before
    the region's others); (a first screen around the call, the sub-agent's thread open in it —
    `partial.spawned` —, the hit's event id) for the first sub-agent whose call comes first;
    (None, None) when only the index can tell where the first hit is (a sub-agent's file holds
    the search but its call cannot be found in the main file's bytes, `partial.call_line`; no
    literal to look for; a hit too deep in a file to find soon; a file gone or no longer a
    transcript meanwhile)."""
    from .formats import detect

    holders = []  # ((where its call's line begins, its id), agent, file, metadata)
    try:
        for agent, sub, meta in _holding(path, matcher, confinement):
            at = None if matcher.prefilter is None or len(holders) >= SUB_AGENTS else \
                partial.call_line(path, agent, meta, confinement)
            if at is None:
                return None, None
            holders.append((at, agent, sub, meta))
        if not holders:
            return None
        holders = [h for h in holders if before is None or h[0][0] < before]
        if not holders:
            return ()
        at, agent, sub, meta = min(holders, key=lambda h: h[0][0])
        idx = partial.spawned(path, agent, sub, meta, confinement, at)
        target = _first_in(idx, keys.thread_key(str(agent)), matcher) if idx is not None else None
    except (OSError, detect.NotTranscript):
        return None, None
    return (idx, target) if target is not None else (None, None)


def _first_in(idx: SessionIndex, thread: str, matcher: Matcher) -> str | None:
    """The id of the first event of a thread (read whole into `idx`) the search matches, or None
    (the prefilter kept a line none of whose events match, or a deadline passed)."""
    deadline = time.monotonic() + FIRST_HIT_TIME
    scan = Scan(None, matcher)
    th = idx.threads[thread]
    with files.open_file(th.path) as f:
        expand = expander(f)
        for line in candidate_lines(f, matcher.prefilter, th.eol.encode(), deadline):
            if line is None:
                return None
            lo = line[0]
            seq = bisect.bisect_left(th.offsets, lo)
            stop = bisect.bisect_right(th.offsets, lo)
            for n, ev in zip(range(seq, stop), load_picked(idx, thread, range(seq, stop))):
                if scan._match(ev, n, expand, deadline) is not None:
                    return ev.id
    return None


def _line_region(path: str, confinement, found, lo: int, before: int):
    """(a region index of the one line that begins at `lo`, `before` lines into the file, its main
    thread): a candidate line read alone, by the code of the full index."""
    idx = SessionIndex(path, confinement=confinement)
    # (the file's first line may begin after a byte order mark)
    idx.read_region(lo, lo + 1 if lo else 4, before, found=found)
    return idx, idx.threads["main"]


def _holding(path: str, matcher: Matcher, confinement=None) -> Iterator[tuple]:
    """(agent, path, metadata) of each sub-agent's file of the session at `path` (`partial.companions`)
    that may hold a hit of the search (`_may_hold`)."""
    from .formats import detect

    try:
        subs = partial.companions(path, confinement)
    except (OSError, detect.NotTranscript):
        return
    for agent, sub, meta in subs:
        if _may_hold(sub, matcher, confinement):
            yield agent, sub, meta


def _may_hold(path: str, matcher: Matcher, confinement=None) -> bool:
    """Whether a file's bytes hold what the search's prefilter looks for (True when there is no
    literal to look for). A file that cannot be read holds none."""
    pre = matcher.prefilter
    if pre is None:
        return True
    try:
        with files.confined(confinement), files.open_file(path) as f:
            return Scan(None, matcher)._file_has(f, pre, 0, f.seek(0, 2))
    except OSError:
        return False


def _occurs_before(f, needle: bytes, end: int) -> bool:
    """Whether `needle` occurs in the file's bytes before offset `end`. (Read, not mapped: a map
    of a file another program cuts short kills the process that reads past its new end.)"""
    pos, overlap = 0, len(needle) - 1
    while pos < end:
        f.seek(pos)
        chunk = f.read(min(CHUNK, end - pos))
        if not chunk:
            return False
        if chunk.find(needle) >= 0:
            return True
        if pos + len(chunk) >= end:
            return False
        pos += len(chunk) - overlap
    return False
