"""Reading a big JSON document a record at a time, each with the bytes it lies in.

A transcript kept as one JSON document (an array of messages, or an object holding one: OpenAI and
Anthropic message lists, exported sessions) can be hundreds of megabytes. Decoded whole it takes
several times its size in memory, and discovery, which only needs to know what the file is, read
it all. This module reads such a document in chunks: the top-level array's elements, or the
members of the top-level object — a list member element by element — each decoded as soon as its
end is found and then let go, with the byte span it came from (`Part`), so that a page can read
one record again without the rest (timeline.py) and discovery can stop after the first ones
(`head`).

Where an element ends is found without a tokenizer in Python: an element opening with `{` (`[`)
can only end at one of its `}` (`]`) that is followed by `,`, `]` or `}`; orjson is tried on the
bytes up to each such candidate in turn, and the first that decodes is the end — a JSON object or
array is never a proper prefix of another valid one, so the first candidate that decodes is where
the whole document's parser ends it too. A candidate inside a string or inside a nested container
fails with "unexpected end of data" (cheap, and rare: a `}` followed by `,` inside a string); any
other failure is a malformed element. An element longer than `HUGE_LINE`, or with too many false
candidates, is read by `reader.skim`'s linear parser instead (which also cuts its long strings).

What could not be read ends the parts with one `Part` whose value is a `BadLine` spanning the rest
of the file: a document cut short (a writer still at it, a copy interrupted) shows every record
before the cut, and then an unparsed card — never nothing, never a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator

import orjson

from . import reader

CHUNK = 1 << 20
TRIES = 64  # false candidates an element may have before the linear parser reads it
_NOT_SPACE = re.compile(rb"[^ \t\r\n]")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TOKEN_END = re.compile(rb"[ \t\r\n,\]}]")
_OPEN = {0x7B: b"}", 0x5B: b"]"}
AHEAD_MIN = 1 << 10  # bytes `_Scan._ahead` reads a container from, at least
_NONE = object()


@dataclass(slots=True)
class Part:
    """One element of a list (`item`: a record; `path` "[3]" or "messages[3]") or one other
    member of the top-level object (`path` its key); `value` a BadLine for what could not be
    read (then `path` is None and the span runs to the end of the file)."""

    path: str | None
    offset: int
    length: int
    value: Any
    item: bool = True
    key: str = ""  # the member a list element belongs to ("" for a top-level array)


class _Stop(Exception):
    def __init__(self, reason: str, offset: int):
        super().__init__(reason)
        self.reason, self.offset = reason, offset


TRUNCATED = "the document ends inside a record (cut short, or still being written)"


class _Scan:
    """A forward reader of file bytes [start, end): `buf` holds them from file offset `base`, `i`
    is the position in it. Bytes before `i` are dropped at element boundaries (`settle`)."""

    def __init__(self, f: BinaryIO, start: int, end: int):
        self.f, self.end = f, end
        self.buf, self.base, self.i = b"", start, 0
        self.read_to = start  # file offset just past buf

    @property
    def pos(self) -> int:
        return self.base + self.i

    def more(self) -> bool:
        """Append a chunk to the buffer (indexes into it stay valid); False at the end."""
        n = min(CHUNK, self.end - self.read_to)
        if n <= 0:
            return False
        self.f.seek(self.read_to)
        data = self.f.read(n)
        if not data:
            return False
        self.read_to += len(data)
        self.buf = self.buf + data if self.buf else data
        return True

    def settle(self) -> None:
        """Let go of the bytes before `i` (once enough of them are there to be worth a copy)."""
        if self.i >= CHUNK:
            self.buf, self.base, self.i = self.buf[self.i:], self.base + self.i, 0

    def peek(self) -> int:
        """The next non-space byte (moving `i` to it), or -1 at the end of the file."""
        while True:
            m = _NOT_SPACE.search(self.buf, self.i)
            if m:
                self.i = m.start()
                return self.buf[self.i]
            self.i = len(self.buf)
            self.settle()
            if not self.more():
                return -1

    def value(self, then: bytes = b",]}") -> Any:
        """Decode the JSON value at `i` (after `peek`), moving `i` past it. `then`: the bytes that
        may follow it (`,` and the closer of what holds it)."""
        c = self.buf[self.i]
        if c in _OPEN:
            return self._container(_OPEN[c], frozenset(then))
        if c == 0x22:
            return self._string()
        start = self.i
        while True:
            m = _TOKEN_END.search(self.buf, start)
            if m or not self.more():
                break
        stop = m.start() if m else len(self.buf)
        if stop - start > reader.TOKEN_MAX:
            raise _Stop(f"not JSON: no value starts at byte {self.base + start}", self.base + start)
        value = reader.decode(self.buf[start:stop])
        if isinstance(value, reader.BadLine):
            raise _Stop(value.reason, self.base + start)
        self.i = stop
        return value

    def _container(self, closer: bytes, then: frozenset) -> Any:
        start, scan, tries = self.i, self.i + 1, 0
        while True:
            k = self.buf.find(closer, scan)
            if k < 0:
                scan = len(self.buf)
                if scan - start > reader.HUGE_LINE:
                    return self._skim(start)
                if not self.more():
                    raise _Stop(TRUNCATED, self.base + start)
                continue
            n = _NOT_SPACE.search(self.buf, k + 1)
            while n is None and self.more():
                n = _NOT_SPACE.search(self.buf, k + 1)
            if n is None or self.buf[n.start()] in then:
                data = memoryview(self.buf)[start:k + 1]
                try:
                    value = orjson.loads(data)
                except orjson.JSONDecodeError as e:
                    value = None if "end of data" in str(e) else reader.decode(bytes(data))
                    if isinstance(value, reader.BadLine) and "end of data" not in value.reason:
                        raise _Stop(value.reason, self.base + start) from None
                    if not isinstance(value, (dict, list)):
                        tries += 1
                        if tries > TRIES:
                            got = self._ahead(2 * (k - start))
                            return self._skim(start) if got is _NONE else got
                        scan = k + 1
                        continue
                self.i = k + 1
                if k - start > 2 * reader.MAX_DEPTH and \
                        self.buf.count(b"[", start, k) + self.buf.count(b"{", start, k) > reader.MAX_DEPTH:
                    value = reader.shallow(value)
                return value
            scan = k + 1

    def _ahead(self, n: int) -> Any:
        """The container at `i` with more than TRIES false candidates (an API call's history: a
        `},` per message) read by orjson from a window of the `n` bytes after it (or more), or
        _NONE when that does not tell (the linear parser reads it, and names what is wrong). orjson
        reads the window's first value and says where it ends ("unexpected content after
        document" at that character): the value's text is read again alone. A window that ends
        inside it ("unexpected end of data") grows ×4 up to HUGE_LINE. Two reads of its bytes by
        orjson, where the linear parser took some 50 times as long."""
        start = self.i
        n = max(AHEAD_MIN, n)
        while True:
            want = start + n
            while len(self.buf) < want and self.more():
                pass
            k = min(want, len(self.buf))
            cut = k < len(self.buf)
            while cut and k > start and 0x80 <= self.buf[k] < 0xC0:
                k -= 1  # (not inside a character: the window ends before it)
            try:
                text = str(memoryview(self.buf)[start:k], "utf-8")
            except UnicodeDecodeError:
                return _NONE
            try:
                value = orjson.loads(text)
                body = text.rstrip(" \t\r\n")
            except orjson.JSONDecodeError as e:
                if e.msg == "unexpected content after document":
                    body = text[:e.pos].rstrip(" \t\r\n")
                    try:
                        value = orjson.loads(body)
                    except orjson.JSONDecodeError:
                        return _NONE
                elif e.msg == "unexpected end of data" and cut and n < reader.HUGE_LINE:
                    n *= 4
                    continue
                else:
                    return _NONE
            if not isinstance(value, (dict, list)):
                return _NONE
            length = len(body.encode()) if not body.isascii() else len(body)
            self.i = start + length
            if length > 2 * reader.MAX_DEPTH and \
                    self.buf.count(b"[", start, self.i) + self.buf.count(b"{", start, self.i) > reader.MAX_DEPTH:
                value = reader.shallow(value)
            return value

    def _string(self) -> str:
        start = self.i
        while True:
            m = _STRING.match(self.buf, start)
            if m:
                break
            if len(self.buf) - start > reader.HUGE_LINE:
                return self._skim(start)
            if not self.more():
                raise _Stop(TRUNCATED, self.base + start)
        self.i = m.end()
        value = reader.decode(m.group())
        if isinstance(value, reader.BadLine):
            raise _Stop(value.reason, self.base + start)
        return value

    def _skim(self, start: int) -> Any:
        """A value too long (or too odd) for the buffer: read by the linear parser, its long
        strings cut; the buffer then starts past it."""
        w = reader._Window(self.f, self.base + start, self.end)
        try:
            value = reader._value(w, 0)
        except (reader.SkimError, orjson.JSONDecodeError, RecursionError) as e:
            text = str(e)
            reason = TRUNCATED if "end of line" in text or "unterminated" in text else \
                f"malformed JSON: {text}"
            raise _Stop(reason, self.base + start) from None
        self.buf, self.base, self.i = b"", w.pos, 0
        self.read_to = w.pos
        return reader.shallow(value)


def parts(f: BinaryIO, start: int, end: int) -> Iterator[Part]:
    """The parts of the JSON document in file bytes [start, end) (see the module doc), in file
    order. Raises ValueError when it opens with neither `[` nor `{` (no document of records)."""
    s = _Scan(f, start, end)
    c = s.peek()
    if c not in (0x5B, 0x7B):
        raise ValueError("not a JSON array or object")
    try:
        s.i += 1
        if c == 0x5B:
            yield from _items(s, "")
        else:
            yield from _members(s)
        if s.peek() != -1:
            raise _Stop("malformed JSON: extra data after the document", s.pos)
    except _Stop as e:
        yield Part(None, e.offset, max(0, end - e.offset), reader.BadLine(e.reason))


def list_at(f: BinaryIO, at: int, end: int, key: str) -> Iterator[Part]:
    """The elements of the list member `key` whose `[` is at byte `at` (`find_list`), as `parts`
    gives them, and nothing after the list: a first screen of a document whose list lies past
    other long ones (a RunState's items, after its model responses) reads it from there."""
    s = _Scan(f, at, end)
    if s.peek() != 0x5B:
        return
    s.i += 1
    yield Part(key, at, 0, [], False)
    try:
        yield from _items(s, key)
    except _Stop as e:
        yield Part(None, e.offset, max(0, end - e.offset), reader.BadLine(e.reason))


FIND_CHUNK = 16 << 20


def find_list(f: BinaryIO, start: int, end: int, key: str) -> int | None:
    """Where the `[` of the first member `key` holding a list lies past `start`, found by a search
    of the bytes (`bytes.find`, not a reading of what lies between): `"key"` followed by `:` and
    `[`, its quote not escaped — inside a JSON string a quote is always escaped, so what is found
    is a member of some object (the document's, unless an object nested before it has a member of
    that name: the index reads the whole document otherwise). None when there is none."""
    needle = b'"' + orjson.dumps(key)[1:-1] + b'"'
    after = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*\[")
    pos = start
    while pos < end:
        f.seek(pos)
        chunk = f.read(min(FIND_CHUNK, end - pos))
        if not chunk:
            return None
        k = chunk.find(needle, 1 if pos > start else 0)  # (one at 0: seen in the chunk before)
        while k >= 0:
            slashes = 0
            while k - slashes > 0 and chunk[k - slashes - 1] == 0x5C:
                slashes += 1
            m = after.match(chunk, k + len(needle))
            if m and slashes % 2 == 0 and m.end() < len(chunk):
                return pos + m.end() - 1
            k = chunk.find(needle, k + 1)
        if pos + len(chunk) >= end:
            return None
        pos += len(chunk) - len(needle) - 256  # (a match across the chunks' edge)
    return None


def _items(s: _Scan, key: str) -> Iterator[Part]:
    """The elements of the list whose `[` was just passed, up to and past its `]`."""
    c = s.peek()
    if c == 0x5D:
        s.i += 1
        return
    n = 0
    while True:
        if c == -1:
            raise _Stop(TRUNCATED, s.pos)
        at = s.pos
        value = s.value(b",]")
        yield Part(f"{key}[{n}]", at, s.pos - at, value, True, key)
        n += 1
        c = _after_value(s, 0x5D)
        if c is None:
            return


def _members(s: _Scan) -> Iterator[Part]:
    """The members of the object whose `{` was just passed: a list's elements one by one, any
    other value whole."""
    c = s.peek()
    if c == 0x7D:
        s.i += 1
        return
    while True:
        if c != 0x22:
            raise _Stop(TRUNCATED if c == -1 else f"malformed JSON: expected a key at byte {s.pos}", s.pos)
        key = s.value()
        if s.peek() != 0x3A:
            raise _Stop(TRUNCATED if s.peek() == -1 else f"malformed JSON: expected ':' at byte {s.pos}", s.pos)
        s.i += 1
        c = s.peek()
        if c == 0x5B:
            s.i += 1
            yield Part(key, s.pos - 1, 0, [], False)  # the list begins (its elements follow)
            yield from _items(s, key)
        elif c == -1:
            raise _Stop(TRUNCATED, s.pos)
        else:
            at = s.pos
            value = s.value(b",}")
            yield Part(key, at, s.pos - at, value, False)
        c = _after_value(s, 0x7D)
        if c is None:
            return


def _after_value(s: _Scan, close: int) -> int | None:
    """Past what follows a list's element or an object's member: a `,` (the next non-space byte
    is returned) or the list's or object's `close` (None: it ended)."""
    s.settle()
    c = s.peek()
    if c == 0x2C:
        s.i += 1
        return s.peek()
    if c == close:
        s.i += 1
        return None
    raise _Stop(TRUNCATED if c == -1 else f"malformed JSON: expected ',' or '{chr(close)}' at byte {s.pos}",
                s.pos)


def assemble(found: Iterator[Part], most: int | None = None, budget: int | None = None) -> tuple[Any, bool]:
    """The document `parts` describe, built back — or only its beginning: at most `most` elements
    of any list, and no part that begins past `budget` bytes from the first. Returns (document,
    whole): whole is False when parts were left out. A BadLine part ends it (what came before is
    the document, cut short: `whole` False)."""
    doc: Any = None
    first = None
    for p in found:
        if first is None:
            first = p.offset
        if p.path is None:
            return (doc if doc is not None else p.value), False
        if budget is not None and p.offset - first > budget:
            return doc, False
        if p.item:
            if doc is None:
                doc = [] if not p.key else {}
            target = doc if isinstance(doc, list) else doc.setdefault(p.key, [])
            if most is not None and len(target) >= most:
                return doc, False
            target.append(p.value)
        else:
            if doc is None:
                doc = {}
            doc[p.path] = p.value
    return (doc if doc is not None else []), True


TAIL = 256 << 10  # of a document's end, read for the members after its last list (`tail_members`)
TAIL_TRIES = 64
_LIST_END = re.compile(rb"\]\s*,")


def tail_members(f: BinaryIO, start: int, end: int) -> dict | None:
    """The members an object document holds after its last list, read from its last TAIL bytes
    alone (a key that decides how the document reads may follow its list: mini-swe-agent's
    `trajectory_format`, an Anthropic request's `system`): {} when the document ends with its
    list, None when they cannot be told from there (the list ends further back, or the document
    is no object). Each `],` there, from the first on, is tried as the end of the list: the
    members are what follows it when that is the rest of the object. A `],` inside a string of
    the list's last record could pass for it only by chance; whoever relies on these members
    checks them against what a reading through the list finds (SessionIndex._stream_document)."""
    lo = max(start, end - TAIL)
    f.seek(lo)
    data = f.read(end - lo).rstrip()
    if not data.endswith(b"}"):
        return None
    for n, m in enumerate(_LIST_END.finditer(data)):
        if n >= TAIL_TRIES:
            break
        try:
            value = orjson.loads(b"{" + data[m.end():])
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return reader.shallow(value)
    return {} if re.search(rb"\]\s*}$", data) else None
