"""What a reader sees of an event, as plain text: the one extraction behind in-session search, the
full-text index, usage, export and redaction.

A reader sees message text, thinking, the names of tools, their inputs and their results. Never JSON
syntax, field names or base64 payloads: a search for `file_path` must not find every Read call, and
a screenshot's base64 must not match three-letter words. Strings arrive decoded (the reader parsed
the JSON), so a `\\"` or `\\n` in the file is a quote or a newline here, as on the page.

Each piece keeps the address of the block it came from, the same addresses "show all" uses (`b2`,
`b2.c0`, `b3.i:command`), so a hit can say where it lies and the page can open and mark it.

Strings cut out of huge lines (`reader.CutStr`) hold only a preview. `expand` turns one back into
its whole text when the caller has the file at hand (search must see all of it; a snippet need not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterator

from . import reader
from .model import Event

# A long run of the base64 alphabet with no spaces is a payload, not prose (screenshots, file
# bodies). MIME-style payloads break their lines every 64-76 characters; a listing of short names
# one per line is not a payload.
BASE64_MIN = 200
MIME_LINE = 60
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")

Expand = Callable[[reader.CutStr], str]


@dataclass(slots=True)
class Piece:
    path: str  # block address inside the event ("b1", "b1.c0", "b2.i:command")
    field: str  # text | thinking | tool | input | output | notice | data | unparsed | cached | media
    #             | context (what a client attached to a prompt: IDE selection, system reminder)
    text: str


def looks_like_base64(text: str) -> bool:
    """Whether a string is an encoded payload rather than something a person would read."""
    if len(text) < BASE64_MIN:
        return False
    body = text.strip()
    if body.startswith("data:"):
        head, comma, body = body.partition(",")
        if not comma or not head.endswith(";base64"):
            return False
    lines = body.split("\n")
    return all(len(line) >= MIME_LINE for line in lines[:-1]) and all(
        _BASE64_LINE.fullmatch(line.rstrip("\r")) for line in lines)


def pieces(ev: Event, expand: Expand | None = None) -> Iterator[Piece]:
    """Every piece of visible text of an event, in the order the page shows it."""
    for i, b in enumerate(ev.blocks):
        yield from _block(b, f"b{i}", expand, "text")


def block_pieces(block, path: str, expand: Expand | None = None) -> Iterator[Piece]:
    """The visible text of one block at its address (a tool result the page draws inside the card
    of its call, away from the event that holds it)."""
    yield from _block(block, path, expand, "text")


def event_text(ev: Event, expand: Expand | None = None) -> str:
    """All the visible text of an event as one string (pieces joined by newlines)."""
    return "\n".join(p.text for p in pieces(ev, expand))


def expander(f: BinaryIO) -> Expand:
    """An `expand` that reads cut strings back from an open transcript file. A string whose bytes
    no longer decode (a file rewritten under us) keeps its preview."""

    def expand(cut: reader.CutStr) -> str:
        try:
            return reader.read_cut(f, cut)
        except (ValueError, OSError):
            return str(cut)

    return expand


def _str(text: str, expand: Expand | None) -> str:
    if expand is not None and isinstance(text, reader.CutStr):
        return expand(text)
    return text


def _block(b, path: str, expand: Expand | None, prose: str) -> Iterator[Piece]:
    kind = getattr(b, "kind", None)
    if kind == "text" or kind == "cached":
        if isinstance(b.text, str) and b.text.strip() and not looks_like_base64(b.text):
            yield Piece(path, prose if kind == "text" else kind, _str(b.text, expand))
    elif kind == "thinking":
        if not b.redacted and isinstance(b.text, str) and b.text.strip():
            yield Piece(path, "thinking", _str(b.text, expand))
    elif kind == "tool_use":
        if isinstance(b.name, str) and b.name:
            yield Piece(path, "tool", b.name)
        if isinstance(b.input_raw, str) and b.input_raw:
            yield Piece(f"{path}.i:raw", "input", _str(b.input_raw, expand))
        else:
            yield from _leaves(b.input, path, "input", expand, top=True)
    elif kind == "tool_result":
        for j, c in enumerate(b.content or ()):
            yield from _block(c, f"{path}.c{j}", expand, "output")
    elif kind == "media":
        label = " ".join(x for x in (b.name, b.url) if isinstance(x, str) and x)
        if label:
            yield Piece(path, "media", label)
    elif kind == "notice":
        if isinstance(b.text, str) and b.text.strip():
            yield Piece(path, "notice", b.text)
        if isinstance(b.detail, str) and b.detail.strip():
            yield Piece(path, "notice", b.detail)
    elif kind == "data":
        yield from _leaves(b.value, path, "data", expand)
    elif kind == "context":
        if isinstance(b.text, str) and b.text.strip():
            yield Piece(path, "context", _str(b.text, expand))
    elif kind == "unparsed":
        yield Piece(path, "unparsed", b.raw)


def _leaves(value: Any, path: str, field: str, expand: Expand | None,
            top: bool = False, depth: int = 0) -> Iterator[Piece]:
    """The scalar values inside a JSON value (no keys, no syntax), each with its address: a tool
    input's top-level fields are addressable (`i:command`), deeper ones belong to the block.
    Nothing below reader.MAX_DEPTH levels is read (as on the page, where it is cut)."""
    if depth > reader.MAX_DEPTH:
        return
    if isinstance(value, str):
        if value.strip() and not looks_like_base64(value):
            yield Piece(path, field, _str(value, expand))
    elif isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}.i:{k}" if top and isinstance(k, str) and "." not in k else path
            yield from _leaves(v, sub, field, expand, depth=depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v, path, field, expand, depth=depth + 1)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield Piece(path, field, str(value))
