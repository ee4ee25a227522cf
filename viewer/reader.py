"""Reading transcript files by byte offset: lines, partial last lines, huge lines, bad bytes.

Everything above this module works with (offset, length) pairs, so a page can read one window of a
100 MB file and a live tail can resume exactly where it stopped. Three rules shape it:

* Only complete lines are consumed. A trailing fragment without its newline is reported as the
  `tail`, never as a record: the writer may be in the middle of it.
* A line longer than `HUGE_LINE` is never held in memory whole. The scanner only measures it, and
  `skim()` decodes it with every string longer than `STRING_CAP` replaced by a `CutStr` that keeps a
  preview and the string's position in the file, so "show all" can fetch exactly those bytes later.
* Decoding never raises: a line that is not JSON (or not UTF-8, after a lenient retry) comes back as
  a `BadLine` with a plain reason.
* What is shown is never nested deeper than `MAX_DEPTH`: `shallow()` replaces deeper containers by
  a note (`DEEP`). orjson writes at most 255 levels and Python's own recursion stops near 1,000, so
  a record nested deeper would break every page, JSON twin and text extraction that meets it. The
  timeline applies it to the events of a window, `skim` and documents to what they return; the index
  pass does not pay for it on every line (nothing there walks a record's depth). The raw view still
  shows the line as written.

Lines end with `\n` (a `\r` before it is dropped), or with a lone `\r` in a file that has no `\n`
at all (old Mac line endings: `detect` decides). A UTF-8 byte order mark at the start of a file
is not part of its first line.
"""

from __future__ import annotations

import codecs
import concurrent.futures
import io
import os
import re
import threading
from dataclasses import dataclass
from json.decoder import scanstring
from typing import Any, BinaryIO, Iterator

import orjson

CHUNK = 1 << 20
HUGE_LINE = 4 << 20  # lines above this are skimmed, not decoded whole
STRING_CAP = 256 << 10  # in a skimmed line, strings above this are cut
PREVIEW = 16 << 10  # bytes of a cut string kept as its preview
TOKEN_MAX = 4 << 10  # a JSON number or literal longer than this is not one: the line is not JSON
MAX_DEPTH = 100  # containers nested deeper than this are cut (see the module doc)
DEEP = f"[nested deeper than {MAX_DEPTH} levels: cut here; the raw view shows the record as written]"
BOM = b"\xef\xbb\xbf"
_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.isspace counts as white space


def skip_bom(f: BinaryIO) -> int:
    """Where the content of a file starts (3 past a UTF-8 byte order mark, else 0); the file is
    left positioned there."""
    f.seek(0)
    start = len(BOM) if f.read(len(BOM)) == BOM else 0
    f.seek(start)
    return start


class CutStr(str):
    """The preview of a string too long to keep; `offset`/`raw_length` locate its raw JSON body."""

    offset: int
    raw_length: int

    def __new__(cls, preview: str, offset: int, raw_length: int):
        self = super().__new__(cls, preview)
        self.offset = offset
        self.raw_length = raw_length
        return self

    def __reduce__(self):
        return (CutStr, (str(self), self.offset, self.raw_length))


@dataclass(slots=True)
class RawLine:
    line: int  # 1-based line number
    offset: int
    length: int  # without the newline (and without a trailing \r)
    data: bytes | None  # None for a huge line: use skim(); a memoryview from a scanner of views


UNPARSED_PREVIEW = 64 << 10  # raw text kept on an unparsed card (the raw view has it all)


@dataclass(slots=True)
class BadLine:
    reason: str
    # the first bytes of what could not be read, where they are not the line's own: a file of a
    # session kept as a folder of files (its place in the session's main file holds no bytes of it)
    raw: bytes | None = None


class LineScanner:
    """Yields the complete, non-blank lines of `f` from `offset`; afterwards `offset`, `line` and
    `tail` say where the next scan starts and what partial line (offset, length) is left.
    `eol` is the line end: b"\n" (CRLF included), or b"\r" for a file with CR-only endings."""

    def __init__(self, f: BinaryIO, offset: int = 0, line: int = 0, *, chunk: int = CHUNK,
                 eol: bytes = b"\n", views: bool = False, ahead: bool = False):
        self.f = f
        self.offset = offset
        self.line = line
        self.tail: tuple[int, int] | None = None
        self._chunk = chunk
        self._eol = eol
        self._cr = 13 if eol == b"\n" else -1  # the byte dropped before a line end
        # views: a line's data may be a memoryview into the chunk read, not a copy of its bytes
        # (for a pass that only decodes each line once: orjson reads views, and a 100 MB pass
        # then copies no line)
        self._views = views
        # ahead: the next chunk is read on another thread while this one's lines are worked on
        # (`_Ahead`: for a pass over a big file)
        self._ahead = ahead

    def __iter__(self) -> Iterator[RawLine]:
        for line in self.lines():
            yield RawLine(*line)

    def lines(self) -> Iterator[tuple[int, int, int, bytes | None]]:
        """The lines as plain (line, offset, length, data) tuples, RawLine's fields: for the index
        pass, which reads every line of a file (making a RawLine each was a twentieth of it)."""
        f = self.f
        if self.offset == 0:
            self.offset = skip_bom(f)
        ahead = _Ahead.of(f, self._chunk) if self._ahead else None
        try:
            yield from self._lines(f, ahead)
        finally:
            if ahead is not None:
                ahead.close()

    def _lines(self, f: BinaryIO, ahead: "_Ahead | None") -> Iterator[tuple[int, int, int, bytes | None]]:
        eol, cr = self._eol, self._cr
        read_at = self.offset  # the consumer may seek f (to skim a huge line): never trust tell()
        buf = b""
        start = self.offset  # file offset of buf[0]
        huge_from = None  # start offset of a huge line being measured
        while True:
            if ahead is not None:
                chunk = ahead.read(read_at)
            else:
                f.seek(read_at)
                chunk = f.read(self._chunk)
            if not chunk:
                break
            read_at += len(chunk)
            if huge_from is not None:
                nl = chunk.find(eol)
                if nl < 0:
                    start += len(chunk)
                    continue
                end = start + nl
                self.line += 1
                length = end - huge_from
                if cr >= 0:
                    length = _strip_cr_len(f, huge_from, end)
                yield self.line, huge_from, length, None
                huge_from = None
                start = end + 1
                self.offset = start
                buf = chunk[nl + 1 :]
            elif buf:
                # finish the line the last chunk left open; the rest is scanned in place (copying
                # every chunk onto the leftover would copy the whole file once more)
                nl = chunk.find(eol)
                if nl < 0:
                    buf += chunk
                    if len(buf) > HUGE_LINE:
                        huge_from = start
                        start += len(buf)
                        buf = b""
                    continue
                whole = buf + chunk[:nl]
                self.line += 1
                end = len(whole) - 1 if cr >= 0 and whole.endswith(b"\r") else len(whole)
                if end and not whole[:end].isspace():
                    yield self.line, start, end, whole[:end]
                start += len(buf)  # now the offset of chunk[0]
                buf = chunk
                self.offset = start + nl + 1
                chunk = None
            else:
                buf = chunk
            pos = 0 if chunk is not None else nl + 1
            find = buf.find
            cut = memoryview(buf) if self._views else buf
            line = self.line  # (kept in self.line at every yield: a consumer may stop at any line)
            while True:
                nl = find(eol, pos)
                if nl < 0:
                    break
                line += 1
                end = nl - 1 if nl > pos and buf[nl - 1] == cr else nl
                # a line is blank when all of it is white space: a JSON line's first byte says no
                if end > pos and (buf[pos] not in _SPACE or not buf[pos:end].isspace()):
                    self.line = line
                    yield line, start + pos, end - pos, cut[pos:end]
                pos = nl + 1
            self.line = line
            start += pos
            self.offset = start
            buf = buf[pos:]
            if len(buf) > HUGE_LINE:
                huge_from = start
                start += len(buf)
                buf = b""
        if huge_from is not None:
            self.tail = (huge_from, start - huge_from)
        elif buf and not buf.isspace():
            self.tail = (self.offset, len(buf))


class _Ahead:
    """The chunks of a file read one ahead, on a thread of `_readers()`: a read lets go of the
    GIL, so while the index pass decodes a chunk's lines the next chunk is copied in (some 15 ms
    of a 100 MB pass, issue 13). Reads at an offset (`os.pread`), never moving the position the
    consumer seeks and reads by; the read ahead is waited for before the scan ends, so it never
    outlives the file it reads."""

    def __init__(self, fd: int, size: int):
        self.fd, self.size = fd, size
        self.pending: tuple | None = None  # (offset, future of the chunk there)

    @classmethod
    def of(cls, f: BinaryIO, size: int) -> "_Ahead | None":
        """For a file opened from the disk (not a copy in memory), where `os.pread` exists."""
        if not isinstance(f, io.BufferedReader) or not hasattr(os, "pread"):
            return None
        try:
            return cls(f.fileno(), size)
        except (OSError, ValueError):
            return None

    def read(self, at: int) -> bytes:
        pending, self.pending = self.pending, None
        if pending is not None and pending[0] == at:
            chunk = pending[1].result()
        else:
            if pending is not None:
                pending[1].result()
            chunk = _pread(self.fd, self.size, at)
        if chunk:
            self.pending = (at + len(chunk), _readers().submit(_pread, self.fd, self.size, at + len(chunk)))
        return chunk

    def close(self) -> None:
        pending, self.pending = self.pending, None
        if pending is not None:
            try:
                pending[1].result()
            except OSError:
                pass


def _pread(fd: int, size: int, at: int) -> bytes:
    """`size` bytes at `at` (fewer at the end of the file), as f.seek + f.read give them."""
    chunk = os.pread(fd, size, at)
    while 0 < len(chunk) < size:
        more = os.pread(fd, size - len(chunk), at + len(chunk))
        if not more:
            break
        chunk += more
    return chunk


_READERS: list = []
_READERS_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):  # a forked process has none of its parent's threads: its own pool
    os.register_at_fork(after_in_child=_READERS.clear)


def _readers() -> concurrent.futures.ThreadPoolExecutor:
    """The threads that read ahead (made on first use: most processes never read a big file)."""
    if not _READERS:
        with _READERS_LOCK:
            if not _READERS:
                _READERS.append(concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="read-ahead"))
    return _READERS[0]


def _strip_cr_len(f: BinaryIO, begin: int, end: int) -> int:
    """Length of a huge line from begin to its newline at end, without a trailing \\r."""
    f.seek(end - 1)
    return end - begin - (1 if f.read(1) == b"\r" else 0)


def decode(data: bytes | str) -> Any:
    """One JSON line → value, or BadLine. Invalid UTF-8 and lone surrogate escapes are retried
    with replacement characters. A text (JSON kept as a string inside a record) is read alike."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        reason = str(e)
    if "utf-8" in reason.lower() or "surrogate" in reason.lower():
        try:
            return orjson.loads(mend_surrogates(data.decode("utf-8", "replace")))
        except orjson.JSONDecodeError as e:
            reason = str(e)
    return BadLine(_plain(reason, data))


# \uXXXX escapes of a surrogate: a pair (kept) or a lone half, after an odd run of backslashes (an
# even run is escaped backslashes followed by the letters "ud…"). A run is matched from its first
# backslash only, and whole: tried from each of its backslashes, a long run cost its length squared
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(\\++)u(d[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}|d[89a-f][0-9a-f]{2})",
                               re.IGNORECASE)


def mend_surrogates(text: str) -> str:
    """JSON text with every escaped lone surrogate (`"\\ud83d"`: JSON allows it, and a JavaScript
    string cut in the middle of an emoji is written so) turned into U+FFFD. orjson refuses such a
    string, and so a whole record would become an unparsed line for one cut emoji."""
    def one(m: re.Match) -> str:
        slashes, code = m.group(1), m.group(2)
        if len(slashes) % 2 == 0:  # escaped backslashes, then the letters "ud…"; but the low half
            # of a "pair" after them is an escape of its own, and lone
            return m.group(0) if len(code) == 4 else f"{slashes}u{code[:4]}\\ufffd"
        return m.group(0) if len(code) > 4 else slashes[:-1] + "\\ufffd"

    return _SURROGATE_ESCAPE.sub(one, text)


def shallow(value: Any, data: bytes | None = None) -> Any:
    """`value` with containers deeper than MAX_DEPTH replaced by DEEP (the same object when none
    are). `data`, the JSON it was read from, makes the usual case free: a line with few brackets
    cannot be deep."""
    if data:
        brackets = (b"[", b"{") if isinstance(data, bytes) else ("[", "{")
        if data.count(brackets[0]) + data.count(brackets[1]) <= MAX_DEPTH:
            return value
    return cap_depth(value) if too_deep(value) else value


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a container sits `limit` levels down in `value` (iterative: any depth is fine)."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if children is None:
            continue
        if depth >= limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def json_text(value) -> str:
    """Any value as indented JSON (what JSON cannot hold as its str(); what is nested deeper than
    orjson writes, cut with `cap_depth`'s note — never Python's repr, which recurses without limit)."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(value, option=option, default=str).decode()
    except TypeError:  # orjson.JSONEncodeError: nested too deeply
        return orjson.dumps(cap_depth(value), option=option, default=str).decode()


def cap_depth(value: Any, limit: int = MAX_DEPTH, depth: int = 0) -> Any:
    """A copy of `value` whose containers `limit` levels down are replaced by DEEP."""
    if isinstance(value, dict):
        if depth >= limit:
            return DEEP
        return {k: cap_depth(v, limit, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth >= limit:
            return DEEP
        return [cap_depth(v, limit, depth + 1) for v in value]
    return value


def _plain(reason: str, data: bytes) -> str:
    text = data.lstrip()[:1]
    if text and text not in b"{[\"-0123456789tfn":
        return "not JSON: " + reason
    return "malformed JSON: " + reason


def read_line(f: BinaryIO, offset: int, length: int) -> Any:
    """Decode the line at (offset, length): whole when small, skimmed when huge."""
    if length > HUGE_LINE:
        return skim(f, offset, length)
    f.seek(offset)
    return decode(f.read(length))


def read_bytes(f: BinaryIO, offset: int, length: int, limit: int | None = None) -> bytes:
    f.seek(offset)
    return f.read(length if limit is None else min(length, limit))


class Handle:
    """An open file read through whichever file object of it is set (`f`): a reading kept to go
    on later (a big document's, a dataset's: "Load later" next to its first screen) goes on
    through the file opened again."""

    def __init__(self, f):
        self.f = f

    def __getattr__(self, name: str):
        return getattr(self.f, name)


SEAL = 64  # bytes before where a read stopped that must be there unchanged to read on from it


def seal(f: BinaryIO, offset: int) -> bytes:
    """The SEAL bytes before `offset`: a file that still holds them there only grew since it was
    read up to `offset` (one rewritten in place, or replaced by one of the same size, does not)."""
    return read_bytes(f, max(0, offset - SEAL), min(SEAL, offset))


def read_cut(f: BinaryIO, cut: CutStr) -> str:
    """The full value of a cut string: exactly the bytes the file holds, JSON-unescaped (invalid
    UTF-8 replaced). Whole in memory: `iter_cut` for anything that may be big."""
    return "".join(iter_cut(f, cut))


def iter_cut(f: BinaryIO, cut: CutStr, chunk: int | None = None) -> Iterator[str]:
    """The full value of a cut string in pieces, one chunk of the file in memory at a time: each
    piece JSON-unescaped as it is read. Invalid UTF-8 becomes U+FFFD; an escape the file got wrong
    is kept as written. Pieces never split an escape or a character."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    carry = ""
    for raw, last in _chunks(f, cut.offset, cut.raw_length, chunk or CHUNK):
        text = carry + decoder.decode(raw, final=last)
        n = len(text) if last else _escape_boundary(text)
        carry = text[n:]
        if n:
            yield _unescape(text[:n])
    if carry:
        yield _unescape(carry)


def iter_text(f: BinaryIO, offset: int, length: int, chunk: int | None = None) -> Iterator[str]:
    """The bytes at (offset, length) as text, in pieces, invalid UTF-8 replaced."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for raw, last in _chunks(f, offset, length, chunk or CHUNK):
        text = decoder.decode(raw, final=last)
        if text:
            yield text


def _chunks(f: BinaryIO, offset: int, length: int, chunk: int) -> Iterator[tuple[bytes, bool]]:
    pos, end = offset, offset + length
    while pos < end:
        f.seek(pos)
        raw = f.read(min(chunk, end - pos))
        if not raw:  # the file is shorter now than when it was indexed
            yield b"", True
            return
        pos += len(raw)
        yield raw, pos >= end


def _escape_boundary(text: str) -> int:
    """Where a piece of a JSON string body may end: not inside an escape, and not between the two
    halves of an escaped surrogate pair."""
    n = end = len(text)
    i = text.rfind("\\", max(0, n - 6))  # an escape is at most six characters long
    if i >= 0 and _opens_escape(text, i) and (i + 1 >= n or (text[i + 1] == "u" and n - i < 6)):
        end = i
    if end >= 6 and _HIGH_SURROGATE.fullmatch(text, end - 6, end) and _opens_escape(text, end - 6):
        end -= 6  # a high surrogate waits for its low half
    return end


_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")


def _opens_escape(text: str, i: int) -> bool:
    """Whether the backslash at i starts an escape (it is not the second of a pair)."""
    start = i
    while start > 0 and text[start - 1] == "\\":
        start -= 1
    return (i - start) % 2 == 0


_SURROGATE = re.compile("[\ud800-\udfff]")


def _unescape(body: str) -> str:
    try:
        text = scanstring('"' + body + '"', 1, False)[0]
    except ValueError:  # a bad escape: the text as written
        return body
    # scanstring joins the halves of a pair and keeps a lone one, which no encoder then takes:
    # U+FFFD, as mend_surrogates says (mending the escapes took a Python call each: minutes for a
    # hostile string of millions)
    return _SURROGATE.sub("\ufffd", text)


# Formats that keep one session in a folder of files (OpenCode: a file per message and per part,
# rewritten in place while they stream) name the whole folder's state by its main file's path:
# functions path -> (size, mtime_ns, inode) or None (not such a file). Filled by `viewer.formats`.
FOLDER_IDENTITIES: list = []


def file_identity(path: str | os.PathLike) -> tuple[int, int, int]:
    """(size, mtime_ns, inode) — what tells a grown file from a replaced one (for a session kept as
    a folder of files, what tells that any of its files changed)."""
    for folder_identity in FOLDER_IDENTITIES:
        found = folder_identity(os.fspath(path))
        if found is not None:
            return found
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino


# ---------------------------------------------------------------------------------------------
# Skimming: decode a huge JSON value without holding its long strings.

_NOT_SPACE = re.compile(rb"[^ \t\r\n]")
_TOKEN_END = re.compile(rb"[ \t\r\n,\]}]")


class _Window:
    """A forward-only view of file bytes [pos, end) with a sliding buffer."""

    def __init__(self, f: BinaryIO, start: int, end: int):
        self.f = f
        self.end = end
        self.buf = b""
        self.base = start  # file offset of buf[0]
        self.i = 0  # index into buf

    @property
    def pos(self) -> int:
        return self.base + self.i

    def fill(self, keep_from: int | None = None) -> bool:
        """Read more bytes; drop what is before keep_from (default: before i)."""
        keep = self.i if keep_from is None else keep_from
        remaining = self.end - (self.base + len(self.buf))
        if remaining <= 0:
            return False
        self.f.seek(self.base + len(self.buf))
        more = self.f.read(min(CHUNK, remaining))
        if not more:
            return False
        self.buf = self.buf[keep:] + more
        self.base += keep
        self.i -= keep
        return True

    def peek(self) -> int:
        """Next non-space byte (not consumed), or -1 at the end."""
        while True:
            m = _NOT_SPACE.search(self.buf, self.i)
            if m:
                self.i = m.start()
                return self.buf[self.i]
            self.i = len(self.buf)
            if not self.fill():
                return -1


class SkimError(ValueError):
    pass


def skim(f: BinaryIO, offset: int, length: int) -> Any:
    """Decode the JSON value at (offset, length), cutting strings longer than STRING_CAP."""
    w = _Window(f, offset, offset + length)
    try:
        value = _value(w, 0)
        if w.peek() != -1:
            raise SkimError("extra data after the JSON value")
        return shallow(value)
    except (SkimError, orjson.JSONDecodeError, RecursionError) as e:
        return BadLine(f"malformed JSON (huge line, {length} bytes): {e}")


def _value(w: _Window, depth: int) -> Any:
    if depth > 500:
        raise SkimError("nested too deeply")
    c = w.peek()
    if c == 0x22:  # "
        return _string(w)
    if c == 0x7B:  # {
        w.i += 1
        obj = {}
        if w.peek() == 0x7D:
            w.i += 1
            return obj
        while True:
            if w.peek() != 0x22:
                raise SkimError(f"expected a key at byte {w.pos}")
            key = _string(w)
            if w.peek() != 0x3A:
                raise SkimError(f"expected ':' at byte {w.pos}")
            w.i += 1
            obj[str(key)] = _value(w, depth + 1)
            c = w.peek()
            w.i += 1
            if c == 0x7D:
                return obj
            if c != 0x2C:
                raise SkimError(f"expected ',' or '}}' at byte {w.pos - 1}")
    if c == 0x5B:  # [
        w.i += 1
        arr = []
        if w.peek() == 0x5D:
            w.i += 1
            return arr
        while True:
            arr.append(_value(w, depth + 1))
            c = w.peek()
            w.i += 1
            if c == 0x5D:
                return arr
            if c != 0x2C:
                raise SkimError(f"expected ',' or ']' at byte {w.pos - 1}")
    if c == -1:
        raise SkimError("unexpected end of line")
    # number, true, false, null: short tokens. Each byte is searched once, and a "token" longer
    # than any number is refused at once: a huge line of plain text costs one chunk, not a pass
    # over its whole length (nor a copy of it).
    scan = w.i
    while True:
        m = _TOKEN_END.search(w.buf, scan)
        if m:
            break
        if len(w.buf) - w.i > TOKEN_MAX:
            raise SkimError(f"not JSON: no value starts at byte {w.pos}")
        scanned = len(w.buf) - w.i
        if not w.fill():
            break
        scan = w.i + scanned
    end = m.start() if m else len(w.buf)
    token = w.buf[w.i : end]
    w.i = end
    return orjson.loads(token)


def _string(w: _Window) -> str:
    """Read a JSON string starting at the opening quote under w.i."""
    w.i += 1
    body_start = w.pos
    kept = []  # raw pieces while the string is short enough to keep
    kept_len = 0
    preview = None
    scan = w.i
    while True:
        q = w.buf.find(b'"', scan)
        if q < 0:
            # keep the trailing backslash run so escape parity can still be counted
            k = len(w.buf)
            while k > w.i and w.buf[k - 1] == 0x5C:
                k -= 1
            piece = w.buf[w.i : k]
            if preview is None:
                kept.append(piece)
                kept_len += len(piece)
                if kept_len > STRING_CAP:
                    preview = b"".join(kept)[:PREVIEW]
                    kept = []
            w.i = k
            scanned = len(w.buf) - k  # bytes already searched, counted from the new buffer start
            if not w.fill(keep_from=k):
                raise SkimError("unterminated string")
            scan = scanned
            continue
        j = q
        while j > w.i and w.buf[j - 1] == 0x5C:
            j -= 1
        if (q - j) % 2 == 1:
            scan = q + 1
            continue
        piece = w.buf[w.i : q]
        w.i = q + 1
        raw_length = w.pos - 1 - body_start
        if preview is None and kept_len + len(piece) <= STRING_CAP:
            kept.append(piece)
            return _json_string(b"".join(kept))
        if preview is None:
            preview = (b"".join(kept) + piece[:PREVIEW])[:PREVIEW]
        return CutStr(_decode_prefix(preview), body_start, raw_length)


def _json_string(body: bytes) -> str:
    """A JSON string's body decoded as `decode` decodes a line (a lone surrogate escape, invalid
    UTF-8: replaced); a body that is not JSON raises JSONDecodeError."""
    try:
        return orjson.loads(b'"' + body + b'"')
    except orjson.JSONDecodeError:
        value = decode(b'"' + body + b'"')
        if isinstance(value, str):
            return value
        raise


def _decode_prefix(raw: bytes) -> str:
    """Decode a raw JSON string prefix that may end inside an escape or a UTF-8 sequence."""
    for cut in range(0, 13):
        try:
            return _json_string(raw[: len(raw) - cut])
        except orjson.JSONDecodeError:
            continue
    return raw.decode("utf-8", "replace")
