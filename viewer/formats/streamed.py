"""A big document's records made one list element at a time, by formats whose records are more
than the list's elements themselves.

A format reads a document into records (`records(doc)`); for most, those are the elements of one
list, and a big document is read a record at a time (viewer/docstream.py, `detect.stream_plan`).
Some make their records from the whole document: a record of the document's other members first
(an Anthropic request's `system`, Gemini CLI's session head, a RunState's `original_input`), and
marks on records that only their neighbours give (`openai_chat.Linked`: the calls a result
answers, the agent a handoff passed the turn to, the commands of a text-based answer). Such a
format offers `stream(shell, key)`: its reading as a `Streaming` — the records of the document's
other members (`shell`, with its list `key` empty), and a function that makes the record of each
element in turn, keeping what it needs of the elements before (a few ids, the last speaker), never
the list. Its `records(doc)` is that same reading run over the whole list (`whole`), so both
readings give the same records.

The index keeps, for each record made otherwise than as its element (`how`), what rebuilds it from
its element's bytes alone (`rebuild`: the part of the element it is, and the marks of its `Linked`),
so a page reads one record again without the rest (viewer/timeline.py).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson



class Linked(dict):
    """A record as the file holds it, plus what only its neighbours say (never serialised)."""

    links: Any  # e.g. the calls this record answers, which the record itself does not name
    agent: str | None  # the agent that speaks it, where only an earlier handoff says which
    calls: list | None  # (call id, command) of the calls its text makes (openai_chat `_Actions`)
    action: Any  # the pattern that found them, when not the standard fences (a run's own)
    beside: dict | None  # a RunState item's own fields its raw item does not hold (openai_chat `_beside`)

    def __init__(self, rec: dict, links: Any = None, agent: str | None = None,
                 calls: list | None = None, action: Any = None, beside: dict | None = None):
        super().__init__(rec)
        self.links, self.agent, self.calls, self.action = links, agent, calls, action
        self.beside = beside


class NotStreamed(Exception):
    """The document's records cannot be made one element at a time after all: it is read
    whole."""


@dataclass
class Streaming:
    """A format's reading of a big document one element at a time (see the module doc). `head`:
    the records of the document's other members, before the list's; `take(i, element)`: the
    record of element i, as (JSON path, record); `last()`: what the last element's record becomes
    once it is known to be the last (an Anthropic `attempt_completion` nothing answered), or
    None."""

    head: list = field(default_factory=list)
    take: Callable[[int, Any], tuple] = lambda i, v: (None, v)
    last: Callable[[], tuple | None] = lambda: None
    # what an element says of elements before it (a Gemini CLI rewind: the messages it dropped),
    # asked after each `take`: [(element index, links to add to its record's)], each said once
    later: Callable[[], list] = lambda: []


def whole(streaming: Streaming, key: str, items: list) -> list:
    """A format's `records` of a whole document: its streaming reading over every element."""
    out = list(streaming.head)
    first = len(out)
    for i, item in enumerate(items):
        out.append(streaming.take(i, item))
        for j, add in streaming.later():
            path, rec = out[first + j]
            out[first + j] = (path, amended(rec, add))
    if out and len(out) > len(streaming.head) and (end := streaming.last()) is not None:
        out[-1] = end
    return out


def amended(rec: Any, add: dict) -> Any:
    """A record with `add` in its links (`Streaming.later`): a Linked one's kept, a plain one's
    made Linked."""
    if type(rec) is Linked:
        return Linked(rec, {**(rec.links or {}), **add}, rec.agent, rec.calls, rec.action, rec.beside)
    return Linked(rec, dict(add)) if isinstance(rec, dict) else rec


def amended_note(text: str | None, add: dict) -> str:
    """The index's note (`note`) of an element's record once `add` is in its links (`amended`):
    the element itself (None) becomes the element marked."""
    made = read_note(text)
    if made is None:
        return note(["", {"links": freeze(dict(add))}])
    part, marks = made
    marks = dict(marks or {})
    marks["links"] = freeze({**(thaw(marks["links"]) if marks.get("links") else {}), **add})
    return note([part, marks])


def path_of(key: str, i: int) -> str:
    return f"{key}[{i}]"


# --- what rebuilds a record from its element ------------------------------------------------------


def how(key: str, i: int, element: Any, path: str, rec: Any) -> Any:
    """What rebuilds `rec` (read at `path`) from element i of list `key`: None when it is the
    element itself; else [the element's member it is ("" for the element), its marks (a
    Linked's, frozen: `freeze`) or None]. Raises ValueError for a record no element rebuilds."""
    base = path_of(key, i)
    if path == base:
        part, value = "", element
    elif path.startswith(base + ".") and "." not in path[len(base) + 1:] and "[" not in path[len(base) + 1:]:
        part = path[len(base) + 1:]
        value = element.get(part) if isinstance(element, dict) else None
    else:
        raise ValueError(f"record {path} is no part of element {base}")
    part = sys.intern(part)  # (one string for every record's: a RunState's million `raw_item`)
    if rec is value:
        return None if not part else [part, None]
    if type(rec) is Linked and dict.__eq__(rec, value):
        return [part, marks(rec)]
    raise ValueError(f"record {path} is no element of the list, nor one marked")


HEAD = "\u0000head"


def head_how(rec: Any) -> list:
    """What the index keeps of a record of the document's other members (`Streaming.head`): the
    record itself, and its marks (these records are few and small: a `system` prompt, a session's
    head)."""
    return [HEAD, freeze(dict(rec) if type(rec) is Linked else rec), marks(rec) if type(rec) is Linked else None]


def marks(rec: Linked) -> dict:
    """A Linked record's marks, frozen (`freeze`); those it does not have (None) left out."""
    return {k: freeze(v) for k, v in vars(rec).items() if v is not None}


def rebuild(element: Any, made: Any) -> Any:
    """The record `how` (or `head_how`) described, from its element (None for a head record)."""
    if made is None:
        return element
    if made[0] == HEAD:
        _, element, marks = made
        element = thaw(element)
        part = ""
    else:
        part, marks = made
    value = element.get(part) if part and isinstance(element, dict) else element
    if marks is None or not isinstance(value, dict):
        return value
    rec = Linked(value)
    for k, v in thaw(marks).items():
        setattr(rec, k, v)
    return rec


def note(made: Any) -> str:
    """What `how` (or `head_how`) said, as the index keeps it: JSON text (a trajectory of 150,000
    marked records kept them as lists and dicts: 100 MB)."""
    return sys.intern(orjson.dumps(made).decode())  # (a RunState's are a few, each repeated)


def read_note(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


# marks hold tuples, sets, dicts keyed by numbers and patterns; the index keeps them as JSON
_T, _S, _D, _RE = "\u0000t", "\u0000s", "\u0000d", "\u0000re"


def freeze(value: Any) -> Any:
    """`value` as JSON the index can keep, every tuple, set, non-string key and pattern said."""
    if isinstance(value, tuple):
        return {_T: [freeze(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {_S: [freeze(v) for v in sorted(value, key=repr)]}
    if isinstance(value, list):
        return [freeze(v) for v in value]
    if isinstance(value, re.Pattern):
        return {_RE: [value.pattern, value.flags]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not (
                len(value) == 1 and next(iter(value)).startswith("\u0000")):
            return {k: freeze(v) for k, v in value.items()}
        return {_D: [[freeze(k), freeze(v)] for k, v in value.items()]}
    return value


def thaw(value: Any) -> Any:
    """What `freeze` kept, as it was."""
    if isinstance(value, list):
        return [thaw(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            (k, v), = value.items()
            if k == _T:
                return tuple(thaw(x) for x in v)
            if k == _S:
                return {thaw(x) for x in v}
            if k == _D:
                return {thaw(a): thaw(b) for a, b in v}
            if k == _RE:
                return re.compile(v[0], v[1])
        return {k: thaw(v) for k, v in value.items()}
    return value


class Watched(dict):
    """A document's other members as a format's `stream` hook is given them, noting which it
    looks at (`seen`; `every`: it went through them all): a member read after the list has been
    read (a key after it, which the document's end did not show) matters only if it is one of
    these (SessionIndex._stream_document checks them when the list ends)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.seen: set = set()
        self.every = False

    def get(self, key, default=None):
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.seen.add(key)
        return super().__contains__(key)

    def __iter__(self):
        self.every = True
        return super().__iter__()

    def keys(self):
        self.every = True
        return super().keys()

    def items(self):
        self.every = True
        return super().items()

    def values(self):
        self.every = True
        return super().values()

    def looked_at(self, key: str) -> bool:
        return self.every or key in self.seen
