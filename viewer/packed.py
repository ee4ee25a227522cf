"""Compact forms of the index's per-event maps, for sessions of a million events.

A dataset of 100,000 conversations kept as one 200 MB JSON array is 600,000 events: every Python
object the index keeps per event costs 50–100 bytes there, and the server must stay within 250 MB.
These hold the same things as the dicts they replace, in fewer objects:

- `Texts`: seq → text (a thread's prompts: a heading for each conversation of a dataset, the first
  words of each user prompt), kept as UTF-8 end to end in one buffer with the seqs and ends in
  arrays — 20 bytes plus the text's bytes each, against some 400 for a 160-character `str` holding a
  character outside Latin-1, its int key and its dict slot.
- `IdMap`: event id → (thread, seq), the seq alone kept for the main thread's events (an int, not
  a tuple of two: 64 bytes less each); read through `get` / `[]` it answers (thread, seq) as ever.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Mapping
from typing import Iterator


class Texts(Mapping):
    """seq → str, filled in ascending seq order (as an index pass adds events); a seq set out of
    order, set again or deleted costs a repacking (rare: never in a pass)."""

    __slots__ = ("seqs", "ends", "data")

    def __init__(self, items=()):
        self.seqs = array("q")
        self.ends = array("q")
        self.data = bytearray()
        for seq, text in (items.items() if isinstance(items, Mapping) else items):
            self[seq] = text

    def __setitem__(self, seq: int, text: str) -> None:
        seqs = self.seqs
        if seqs and seq <= seqs[-1]:
            d = dict(self.items())
            d[seq] = text
            self._repack(d)
            return
        self.data += text.encode("utf-8", "surrogatepass")
        self.ends.append(len(self.data))
        seqs.append(seq)  # (last: a reader on another thread that finds the seq finds its text)

    def __delitem__(self, seq: int) -> None:
        d = dict(self.items())
        del d[seq]
        self._repack(d)

    def _repack(self, d: dict) -> None:
        seqs, ends, data = array("q"), array("q"), bytearray()
        for seq in sorted(d):
            data += d[seq].encode("utf-8", "surrogatepass")
            ends.append(len(data))
            seqs.append(seq)
        self.seqs, self.ends, self.data = seqs, ends, data

    def dump(self, blobs: list) -> int:
        """Append the columns to `blobs` (the index's cache: three blobs, not a JSON list of
        [seq, text] made of every text at once); returns how many texts."""
        n = len(self.seqs)  # (the seq is appended last: its text and end are there)
        end = self.ends[n - 1] if n else 0
        data = bytes(self.data)  # (one copy: a slice of the bytearray first was two)
        blobs += [self.seqs[:n].tobytes(), self.ends[:n].tobytes(), data if len(data) == end else data[:end]]
        return n

    @classmethod
    def load(cls, n: int, blobs) -> "Texts":
        """The texts `dump` appended, `n` of them, read from the iterator `blobs`."""
        t = cls()
        t.seqs.frombytes(next(blobs))
        t.ends.frombytes(next(blobs))
        t.data = bytearray(next(blobs))
        if not len(t.seqs) == len(t.ends) == n or (t.ends[-1] if n else 0) != len(t.data):
            raise ValueError("packed texts disagree")
        return t

    def _find(self, seq) -> int:
        seqs, n = self.seqs, len(self.seqs)
        i = bisect.bisect_left(seqs, seq, 0, n) if isinstance(seq, int) else n
        return i if i < n and seqs[i] == seq else -1

    def __getitem__(self, seq: int) -> str:
        i = self._find(seq)
        if i < 0:
            raise KeyError(seq)
        return self.data[self.ends[i - 1] if i else 0:self.ends[i]].decode("utf-8", "surrogatepass")

    def __contains__(self, seq) -> bool:
        return self._find(seq) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self.seqs[:len(self.seqs)])

    def __len__(self) -> int:
        return len(self.seqs)

    def __repr__(self) -> str:
        return f"Texts({dict(self.items())!r})"


class IdMap(dict):
    """Event id → (thread, seq); see the module doc. Stored: the seq alone (an int) for an event of
    the main thread, (thread, seq) for another's — written so by whoever fills it (`put`)."""

    __slots__ = ()

    def get(self, eid, default=None):
        v = dict.get(self, eid, default)
        return ("main", v) if v.__class__ is int else v

    def __getitem__(self, eid):
        v = dict.__getitem__(self, eid)
        return ("main", v) if v.__class__ is int else v

    def where(self, thread: str, seq: int):
        """What the map stores for event `seq` of `thread`."""
        return seq if thread == "main" else (thread, seq)

    def items(self):
        for k, v in dict.items(self):
            yield k, (("main", v) if v.__class__ is int else v)

    def values(self):
        for v in dict.values(self):
            yield ("main", v) if v.__class__ is int else v


class Strings:
    """A column of strings appended one by one (a document's JSON paths: "[812].messages[3]" for
    each of a dataset's 600,000 events), kept as UTF-8 end to end with their ends in an array: 8
    bytes plus the text's each, against some 75 for a `str` and its slot in a list. Reads as a list
    of str: by index (an int or a slice), len, iteration, `==` a list."""

    __slots__ = ("ends", "data")

    def __init__(self, items=()):
        self.ends = array("q")
        self.data = bytearray()
        for text in items:
            self.append(text)

    @classmethod
    def load(cls, ends: bytes, data: bytes) -> "Strings":
        """The column `ends.tobytes()` and `data` dumped (the index's cache)."""
        s = cls()
        s.ends.frombytes(ends)
        s.data = bytearray(data)
        if (s.ends[-1] if s.ends else 0) != len(s.data):
            raise ValueError("packed strings disagree")
        return s

    def append(self, text: str) -> None:
        self.data += text.encode("utf-8", "surrogatepass")
        self.ends.append(len(self.data))  # (last: a reader that finds the entry finds its text)

    def _at(self, i: int) -> str:
        return self.data[self.ends[i - 1] if i else 0:self.ends[i]].decode("utf-8", "surrogatepass")

    def __getitem__(self, i):
        n = len(self.ends)
        if isinstance(i, slice):
            return [self._at(k) for k in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("Strings index out of range")
        return self._at(i)

    def __len__(self) -> int:
        return len(self.ends)

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self.ends)):
            yield self._at(i)

    def __eq__(self, other) -> bool:
        if isinstance(other, Strings):
            return self.ends == other.ends and self.data == other.data
        return isinstance(other, list) and len(other) == len(self) and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Strings({list(self)!r})"
