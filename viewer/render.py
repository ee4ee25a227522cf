"""Untrusted text → safe HTML pieces: Markdown, highlighted code, pretty JSON, ANSI, diffs, cuts.

Everything a transcript holds is hostile until proven otherwise. The rules:

* Markdown goes through markdown-it-py's `js-default` preset (raw HTML off, dangerous link schemes
  dropped, images off so nothing is fetched) and then through nh3 with an explicit allow-list.
* Code and JSON go through Pygments, which escapes and emits class-based spans (the CSP forbids
  inline styles).
* ANSI output and diffs are returned as data (segments with classes), not HTML; the templates render
  them, so autoescaping covers every character that came from the file.
* Only this module wraps anything in `Markup`, and only library output that has been sanitised.
"""

from __future__ import annotations

import difflib
import os
import re
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby

import nh3
import orjson
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight as _pygments
from pygments.formatters import HtmlFormatter
from pygments.lexers import (JsonLexer, TextLexer, find_lexer_class_by_name,
                             find_lexer_class_for_filename)
from pygments.util import ClassNotFound

from . import lexing
from .tools import NumberStrings
from .reader import json_text

MARKDOWN_CAP = 12_000  # characters rendered as Markdown before "show all"
TEXT_CAP = 10_000  # characters of tool output / plain text shown before "show all"
HIGHLIGHT_CAP = 200_000  # longer code is shown plain: Pygments is slow on megabytes
HIGHLIGHT_NOW = 2_000  # longer code on a page is highlighted once it is in view (a fragment)
DIFF_CAP = 4_000  # lines per side of an Edit diff

# Token spans only: `code_block` draws the one box around them (a Pygments `<div><pre>` inside
# Markdown's own `<pre><code>` was two boxes, invalid nesting and an empty last line).
_SPANS = HtmlFormatter(nowrap=True)
_JSON = JsonLexer()  # (its own loop: lexing.speed_up would leave it as it is)

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul",
}
_ALLOWED_ATTRS = {
    "a": {"href", "title"},
    "span": {"class"},
    "div": {"class"},
    "pre": {"class"},
    "code": {"class"},
    "ol": {"start"},
}


def _md_highlight(code: str, lang: str, _attrs) -> str:
    # starts with "<pre": markdown-it then uses it as the whole fence instead of wrapping it again
    return str(highlight(code, lang or None))


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("js-default", {"highlight": _md_highlight})
    md.disable("image")
    return md


class _Kept:
    """The latest results of a costly rendering, by what they were made from, within a budget of
    characters (keys and results). The same texts are drawn again and again: every page, window,
    permalink and fragment that shows them; every append redraws a live session's pages."""

    def __init__(self, budget: int):
        self.budget = budget
        self.size = 0
        self._kept: OrderedDict = OrderedDict()  # key → (result, its size)
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return None
            self._kept.move_to_end(key)
            return found[0]

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._kept

    def put(self, key, size: int, value) -> None:
        """Keep `value` (made from `size` characters): a result larger than a 64th of the budget
        is not kept, so one megabyte-long text never pushes out all the rest."""
        size += len(value)
        if size > self.budget // 64:
            return
        with self._lock:
            if key not in self._kept:
                self._kept[key] = (value, size)
                self.size += size
            while self.size > self.budget:
                self.size -= self._kept.popitem(last=False)[1][1]


_md_kept = _Kept(16 << 20)  # Markdown text → its HTML
_hl_kept = _Kept(16 << 20)  # (lexer, code) → Pygments' spans


def markdown(text: str) -> Markup:
    """Markdown prose → sanitised HTML (a third of drawing a page of messages: kept by text)."""
    text = str(text)
    html = _md_kept.get(text)
    if html is None:
        html = _markdown_html(text)
        _md_kept.put(text, len(text), html)
    return html


# Prose in which Markdown can mark nothing: lines that start with a letter, hold only letters,
# digits, spaces and plain punctuation (no `*_[]<>&#|~=+-`, backquotes or backslashes) and do not
# end with a space. A transcript's short sentences ("Let me read the tests first.") are mostly
# such; markdown-it and nh3 make `<p>` + the text + `</p>` of them (tests/test_render_fast.py).
_PLAIN_LINE = r"[^\W\d_](?:[\w ,.;:?!'\"()]*[\w.;:?!'\"()])?"  # and no "_" (see below)
_PLAIN_PROSE = re.compile(rf"{_PLAIN_LINE}(?:\n{_PLAIN_LINE})*")


def _markdown_html(text: str) -> Markup:
    if "_" not in text and _PLAIN_PROSE.fullmatch(text):
        return Markup(f"<p>{text}</p>\n")
    html = _markdown().render(text)
    clean = nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRS,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return Markup(clean)


def _lexer(lang: str | None, filename: str | None):
    if isinstance(lang, str) and lang.strip():
        return _lexer_for(lang.strip().split()[0].lower(), None)
    if isinstance(filename, str) and filename:
        return _lexer_for(None, os.path.basename(filename) or filename)
    return _made(TextLexer)


@lru_cache(maxsize=512)
def _lexer_for(name: str | None, basename: str | None):
    """The lexer of a language name or a file's name: Pygments finds a file's lexer by matching its
    name against every lexer's patterns (a millisecond a time, after half a second compiling them
    the first time)."""
    try:
        cls = find_lexer_class_by_name(name) if name is not None \
            else find_lexer_class_for_filename(basename)
    except (ClassNotFound, IndexError):
        cls = None
    return _made(cls or TextLexer)


# the kinds of file sessions most often show (read, written, diffed): web/__init__.py makes their
# lexers in the background after start-up, where a page's first file of a kind paid for compiling
# its lexer's patterns (10–220 ms: SQL, Kotlin, TypeScript, Swift, C and Ruby the slowest)
COMMON_FILES = ("a.ts", "a.tsx", "a.js", "README.md", "a.json", "a.yaml", "a.toml", "a.rs", "a.go",
                "a.sh", "a.html", "a.css", "Makefile", "a.java", "a.c", "a.cpp", "a.diff", "a.sql",
                "Dockerfile", "a.rb", "a.php", "a.kt", "a.swift", "a.cs", "a.xml", "a.lua")


def warm_lexer(filename: str) -> None:
    """Make (and keep) the lexer of files named like `filename`."""
    _lexer(None, filename)


def warm_file_names() -> None:
    """Compile Pygments' file-name patterns now (they are compiled on the first name looked up):
    a process about to fork workers that highlight files does it once for them all."""
    _lexer_for(None, "_")


@lru_cache(maxsize=None)
def _made(cls):
    """One lexer of each kind, shared (a lexer keeps no state between texts): highlighted code is
    kept by its lexer and text."""
    return lexing.speed_up(cls(stripnl=False))


def highlight(code: str, lang: str | None = None, filename: str | None = None,
              numbers: list[int] | None = None, cap: int = HIGHLIGHT_CAP) -> Markup:
    """Code → one `<pre class="hl"><code>` box of Pygments spans (plain but escaped when longer
    than `cap`).

    `numbers` gives each line its number in a gutter the reader does not copy (a file read from
    line 120 on is numbered from 120)."""
    lexer = _lexer(lang, filename) if len(code) <= cap else None
    return code_block(code, None if type(lexer) is TextLexer else lexer, numbers)


def highlights_later(code: str, lang: str | None = None, filename: str | None = None) -> bool:
    """Whether highlighting `code` should wait until the reader reaches it: it is long (Pygments
    takes 10–25 ms per 10,000 characters, and a first screen shows a dozen file reads), it would be
    highlighted at all, and it was not highlighted a moment ago."""
    if not HIGHLIGHT_NOW < len(code) <= HIGHLIGHT_CAP:
        return False
    lexer = _lexer(lang, filename)
    later = type(lexer) is not TextLexer and (lexer, code) not in _hl_kept
    if later:
        _waiting.count = deferred_highlights() + 1
    return later


_waiting = threading.local()


def deferred_highlights() -> int:
    """How many highlights this thread has left for later so far: what is drawn meanwhile is not
    to be kept as final (web/cards.py), it will be drawn highlighted once they are done."""
    return getattr(_waiting, "count", 0)


def code_block(code: str, lexer, numbers: list[int] | None = None) -> Markup:
    """`code` as highlighted by `lexer`, or plain (escaped) when the lexer is None."""
    # Pygments closes its spans at every line end, so each output line is balanced HTML on its own
    lines = (_spans(code, lexer) if lexer is not None else _plain(code)).split("\n")
    # as many lines as the source has: numbered lines each count, and elsewhere the newline that
    # ends the last line does not start another (Pygments adds one where it was missing)
    want = len(numbers) if numbers is not None else len(code.removesuffix("\n").split("\n"))
    lines = (lines + [""] * want)[:want]
    return Markup('<pre class="hl%s"><code>%s</code></pre>' % (
        " numbered" if numbers is not None else "",
        "\n".join(lines) if numbers is None else _numbered(lines, numbers)))


def _numbered(lines: list[str], numbers: list[int]) -> str:
    """Lines, each with its number in the gutter before it (`<span class="ln">12</span>`), one to
    a line. Numbers counting up by one (as a file is read) take their gutters from a list kept,
    interleaved with the lines in C: a file read is thousands of lines."""
    n = len(lines)
    if n and type(numbers[0]) is int and numbers[0] >= 0 and \
            numbers == list(range(numbers[0], numbers[0] + n)):
        out = [""] * (2 * n)
        out[0::2] = _gutters(numbers[0], n)
        out[1::2] = lines
        out[0] = out[0][1:]  # (no newline before the first)
        return "".join(out)
    return "\n".join([f'<span class="ln">{n}</span>{line}' for n, line in zip(numbers, lines)])


_gutters = NumberStrings('\n<span class="ln">{}</span>'.format).take  # line n's gutter, a newline before it


def _spans(code: str, lexer) -> str:
    key = (lexer, code)  # lexers are made once each (`_lexer_for`, `_JSON`)
    spans = _hl_kept.get(key)
    if spans is None:
        spans = _pygments(code, lexer, _SPANS)
        _hl_kept.put(key, len(code), spans)
    return spans


def _plain(code: str) -> str:
    """What Pygments' TextLexer and formatter make of a text (newlines normalised, `&<>` escaped),
    at the speed of a few string replacements instead of a token stream."""
    text = code.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text if text.endswith("\n") else text + "\n"


def pretty_json(value, cap: int = HIGHLIGHT_CAP) -> Markup:
    """Any JSON value, indented and highlighted (plain beyond `cap` characters)."""
    text = json_text(value)
    if len(text) > cap:
        return highlight(text, "text")
    return code_block(text, _JSON)


def pretty_json_text(text: str, cap: int = HIGHLIGHT_CAP) -> Markup:
    """JSON given as text, indented and highlighted (as written when it does not parse)."""
    try:
        return pretty_json(orjson.loads(text), cap)
    except orjson.JSONDecodeError:
        return highlight(text, "text")


@dataclass(slots=True)
class Cut:
    text: str  # what is shown
    hidden: int  # characters left out (0 when nothing was cut)
    total: int  # characters in all


def cut(text: str, limit: int = TEXT_CAP) -> Cut:
    """The head of a long text, cut on a line boundary when one is near."""
    total = getattr(text, "raw_length", None) or len(text)
    if len(text) <= limit and total == len(text):
        return Cut(text, 0, total)
    head = text[:limit]
    nl = head.rfind("\n", limit - 2000)
    if nl > 0:
        head = head[:nl]
    return Cut(head, max(0, total - len(head)), total)


def human_size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


# --- ANSI ----------------------------------------------------------------------------------------

_ESCAPES = re.compile(r"\x1b(?:\[([0-9;:?]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(slots=True)
class Segment:
    text: str
    classes: str  # space-separated CSS classes, "" for plain


def has_ansi(text: str) -> bool:
    """Whether a text needs the terminal's reading: escape sequences, or carriage returns and
    backspaces that write over what came before (progress bars)."""
    return "\x1b" in text or "\b" in text or ("\r" in text and "\r" in text.replace("\r\n", ""))


# cursor movement and erasing: the text is laid out on a grid as a terminal would show it
_MOVES = re.compile(r"\x1b\[[0-9;]*[A-HJKfd`]|[\r\b]")


def ansi_segments(text: str) -> list[Segment]:
    """Terminal output → segments with colour classes. Output that moves the cursor (columns laid
    out with `ESC[nC`, a progress line rewritten after `\r`, `ESC[K` erasing) is placed on a grid
    the way a terminal shows it; every other escape sequence is dropped."""
    text = text.replace("\r\n", "\n")
    if _MOVES.search(text):
        return _Screen(text).segments()
    out: list[Segment] = []
    style = _Style()
    pos = 0
    for m in _ESCAPES.finditer(text):
        if m.start() > pos:
            out.append(Segment(_CONTROL.sub("", text[pos : m.start()]), style.classes()))
        pos = m.end()
        if m.group(2) == "m":
            style.apply(m.group(1))
    if pos < len(text):
        out.append(Segment(_CONTROL.sub("", text[pos:]), style.classes()))
    return [s for s in out if s.text]


class _Style:
    """The current SGR attributes (colours, bold…)."""

    __slots__ = ("fg", "bg", "bold", "dim", "italic", "underline")

    def __init__(self) -> None:
        self.fg = self.bg = None
        self.bold = self.dim = self.italic = self.underline = False

    def classes(self) -> str:
        return _classes(self.fg, self.bg, self.bold, self.dim, self.italic, self.underline)

    def apply(self, params: str | None) -> None:
        codes = [int(c) if c.isdigit() else 0 for c in re.split("[;:]", params or "0")]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.__init__()
            elif c == 1:
                self.bold = True
            elif c == 2:
                self.dim = True
            elif c == 3:
                self.italic = True
            elif c == 4:
                self.underline = True
            elif c == 22:
                self.bold = self.dim = False
            elif c == 23:
                self.italic = False
            elif c == 24:
                self.underline = False
            elif 30 <= c <= 37:
                self.fg = c - 30
            elif 90 <= c <= 97:
                self.fg = c - 90 + 8
            elif c == 39:
                self.fg = None
            elif 40 <= c <= 47:
                self.bg = c - 40
            elif 100 <= c <= 107:
                self.bg = c - 100 + 8
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    color = _from_256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    color = _from_rgb(*codes[i + 2 : i + 5])
                    i += 4
                else:
                    color = None
                    i += 1
                if c == 38:
                    self.fg = color
                else:
                    self.bg = color
            i += 1


class _Screen:
    """Terminal output laid out on a grid of cells: rows of characters, each with its classes.

    Rows count from where the output starts (a transcript does not know where the cursor was).
    Wide characters (CJK, most emoji) take two columns. Erasing the whole screen (`ESC[2J`) is not
    done, so what a tool printed stays unless it wrote over it; erasing a line or its end is."""

    def __init__(self, text: str) -> None:
        self.chars: list[list[str]] = [[]]
        self.cls: list[list[str]] = [[]]
        self.r = self.c = 0
        self.style = _Style()
        pos = 0
        for m in _TOKENS.finditer(text):
            if m.start() > pos:
                self.write(text[pos : m.start()])
            pos = m.end()
            self.control(m)
        if pos < len(text):
            self.write(text[pos:])

    def _row(self, r: int) -> None:
        while len(self.chars) <= r:
            self.chars.append([])
            self.cls.append([])

    def write(self, run: str) -> None:
        run = _CONTROL.sub("", run)
        if not run:
            return
        self._row(self.r)
        row, cls = self.chars[self.r], self.cls[self.r]
        classes = self.style.classes()
        cells = list(run) if run.isascii() else _cells(run)
        end = self.c + len(cells)
        if len(row) < self.c:
            pad = self.c - len(row)
            row.extend(" " * pad)
            cls.extend([""] * pad)
        row[self.c : end] = cells
        cls[self.c : end] = [classes] * len(cells)
        self.c = end

    def control(self, m: re.Match) -> None:
        token = m.group(0)
        if token in ("\n", "\r\n"):
            self.r += 1
            self.c = 0
            self._row(self.r)
        elif token == "\r":
            self.c = 0
        elif token == "\b":
            self.c = max(0, self.c - 1)
        elif token == "\t":
            self.write(" " * (8 - self.c % 8))
        elif m.group("final"):
            final, params = m.group("final"), m.group("params") or ""
            nums = [int(x) if x.isdigit() else 0 for x in params.split(";")] if params else []
            n = max(1, nums[0]) if nums else 1
            if final == "m":
                self.style.apply(params)
            elif final == "A":
                self.r = max(0, self.r - n)
            elif final in "Be":
                self.r += n
            elif final in "Ca":
                self.c += n
            elif final == "D":
                self.c = max(0, self.c - n)
            elif final == "E":
                self.r, self.c = self.r + n, 0
            elif final == "F":
                self.r, self.c = max(0, self.r - n), 0
            elif final in "G`":
                self.c = n - 1
            elif final == "d":
                self.r = n - 1
            elif final in "Hf":
                self.r = max(1, nums[0] if nums else 1) - 1
                self.c = max(1, nums[1] if len(nums) > 1 else 1) - 1
            elif final == "K":
                self._erase_line(nums[0] if nums else 0)
            elif final == "J" and (nums[0] if nums else 0) == 0:
                self._erase_line(0)
                del self.chars[self.r + 1 :], self.cls[self.r + 1 :]

    def _erase_line(self, mode: int) -> None:
        self._row(self.r)
        row, cls = self.chars[self.r], self.cls[self.r]
        if mode == 0:
            del row[self.c :], cls[self.c :]
        elif mode == 1:
            for i in range(min(self.c + 1, len(row))):
                row[i], cls[i] = " ", ""
        else:
            row.clear()
            cls.clear()

    def segments(self) -> list[Segment]:
        out: list[Segment] = []
        while len(self.chars) > 1 and not self.chars[-1]:
            self.chars.pop()  # where the cursor was left, not a line anything was written on
        for i, (row, cls) in enumerate(zip(self.chars, self.cls)):
            if i:
                out.append(Segment("\n", ""))
            while row and row[-1] == " " and not cls[-1]:
                row.pop()
                cls.pop()
            start = 0
            for classes, run in groupby(cls):
                n = len(list(run))
                out.append(Segment("".join(row[start : start + n]), classes))
                start += n
        merged: list[Segment] = []
        for s in out:
            if merged and merged[-1].classes == s.classes:
                merged[-1].text += s.text
            elif s.text:
                merged.append(s)
        return merged


# a text's control tokens for the grid: escape sequences (CSI with its parameters and final
# byte, OSC, two-byte escapes), newlines, carriage returns, backspaces, tabs
_TOKENS = re.compile(r"\x1b\[(?P<params>[0-9;:?]*)(?P<final>[@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                     r"|\x1b[@-Z\\-_]|\r\n|[\n\r\b\t]")


def _cells(run: str) -> list[str]:
    """The grid cells of a run of text: a wide character fills its cell and an empty one after."""
    cells = []
    for ch in run:
        cells.append(ch)
        if ord(ch) > 0x1100 and unicodedata.east_asian_width(ch) in "WF":
            cells.append("")
    return cells


def ansi_html(text: str) -> Markup:
    """Terminal output as a <pre> of coloured spans (`ansi_segments`), its text escaped: a card's
    output box and its "show all" alike."""
    return Markup('<pre class="ansi">' + "".join(
        f'<span class="{escape(s.classes)}">{escape(s.text)}</span>' if s.classes else escape(s.text)
        for s in ansi_segments(text)) + "</pre>")


def strip_ansi(text: str) -> str:
    return _CONTROL.sub("", _ESCAPES.sub("", text) if "\x1b" in text else text)


def _classes(fg, bg, bold, dim, italic, underline) -> str:
    parts = []
    if fg is not None:
        parts.append(f"a-f{fg}")
    if bg is not None:
        parts.append(f"a-b{bg}")
    if bold:
        parts.append("a-bold")
    if dim:
        parts.append("a-dim")
    if italic:
        parts.append("a-it")
    if underline:
        parts.append("a-ul")
    return " ".join(parts)


_BASIC = [(0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16), (36, 114, 200), (188, 63, 188),
          (17, 168, 205), (229, 229, 229), (102, 102, 102), (241, 76, 76), (35, 209, 139),
          (245, 245, 67), (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255)]


def _from_rgb(r: int, g: int, b: int) -> int:
    return min(range(16), key=lambda i: (_BASIC[i][0] - r) ** 2 + (_BASIC[i][1] - g) ** 2
               + (_BASIC[i][2] - b) ** 2)


def _from_256(n: int) -> int:
    if n < 16:
        return n
    if n >= 232:
        v = 8 + (n - 232) * 10
        return _from_rgb(v, v, v)
    n -= 16
    levels = (0, 95, 135, 175, 215, 255)
    return _from_rgb(levels[n // 36], levels[(n // 6) % 6], levels[n % 6])


# --- diffs ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class DiffLine:
    op: str  # " " same, "-" removed, "+" added, "…" a skipped run of unchanged lines
    old_no: int | None
    new_no: int | None
    parts: list  # [(text, changed: bool)]


def diff(old: str, new: str, old_start: int = 1, new_start: int = 1,
         context: int = 3) -> list[DiffLine]:
    """A line diff of an edit, with the changed part of each changed line marked; lines are
    numbered from `old_start` / `new_start` (where the edit sits in its file, when known)."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) > DIFF_CAP or len(b) > DIFF_CAP:
        a, b = a[:DIFF_CAP], b[:DIFF_CAP]
    out: list[DiffLine] = []
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in sm.get_grouped_opcodes(context) if a != b else []:
        if out:
            out.append(DiffLine("…", None, None, [("", False)]))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(DiffLine(" ", i1 + k + old_start, j1 + k + new_start, [(a[i1 + k], False)])
                           for k in range(i2 - i1))
                continue
            olds, news = a[i1:i2], b[j1:j2]
            if tag == "replace" and len(olds) == len(news):
                pairs = [_intraline(x, y) for x, y in zip(olds, news)]
                out.extend(DiffLine("-", i1 + k + old_start, None, p[0]) for k, p in enumerate(pairs))
                out.extend(DiffLine("+", None, j1 + k + new_start, p[1]) for k, p in enumerate(pairs))
            else:
                out.extend(DiffLine("-", i1 + k + old_start, None, [(x, False)]) for k, x in enumerate(olds))
                out.extend(DiffLine("+", None, j1 + k + new_start, [(y, False)]) for k, y in enumerate(news))
    return out


def near(old: str, new: str) -> bool:
    """Whether `new` is `old` with a small change: a few of several lines changed (a result
    written again with a new time, count or line), which is better shown as what changed than
    whole. A short output, or one mostly changed, is not (it reads better whole)."""
    if old == new:
        return False
    a, b = old.splitlines(), new.splitlines()
    if min(len(a), len(b)) < 4 or max(len(a), len(b)) > DIFF_CAP:
        return False
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if sm.real_quick_ratio() < 0.6 or sm.quick_ratio() < 0.6:
        return False
    return sm.ratio() >= 0.6


def _intraline(x: str, y: str):
    sm = difflib.SequenceMatcher(None, x, y, autojunk=False)
    if sm.ratio() < 0.4:
        return [(x, True)], [(y, True)]
    left, right = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if i2 > i1:
            left.append((x[i1:i2], tag != "equal"))
        if j2 > j1:
            right.append((y[j1:j2], tag != "equal"))
    return left, right


def pygments_css() -> str:
    """The stylesheet for highlighted code, light and dark (written to static/ by `make css`)."""
    light = HtmlFormatter(style="default").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")
    dark = "\n".join("  " + line for line in dark.splitlines())
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"

