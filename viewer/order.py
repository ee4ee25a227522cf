"""The reading order of a session across its threads, and figures derived from the index per state.

A session is a main transcript plus sub-agent threads. A reader meets a sub-agent's events under
the card of the call that spawned it, so "in order" means: the main thread's events, with each
sub-agent thread spliced in right after the event holding its call (recursively), and threads no
call links to at the end. Search hits, filtered views, next / previous error and the outline all
walk the session in this order, so `n` and `e` move the way the page reads.

`derived(idx, name, build)` keeps one computed figure per index state (the build generation and
every thread's length): a live session that grows recomputes it, a quiet one never does.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Iterator

from .index import SessionIndex


@dataclass(frozen=True, slots=True)
class Segment:
    thread: str
    start: int  # seq range [start, stop) of the thread
    stop: int
    base: int  # reading-order rank of `start`


class Order:
    """The session's events in reading order, as segments of threads."""

    def __init__(self, segments: list[Segment]):
        self.segments = segments
        self._by_thread: dict[str, list[Segment]] = {}
        for seg in segments:
            self._by_thread.setdefault(seg.thread, []).append(seg)
        self._starts = {t: [s.start for s in segs] for t, segs in self._by_thread.items()}

    def __len__(self) -> int:
        last = self.segments[-1] if self.segments else None
        return last.base + last.stop - last.start if last else 0

    def __iter__(self) -> Iterator[tuple[str, int]]:
        for seg in self.segments:
            for seq in range(seg.start, seg.stop):
                yield seg.thread, seq

    def rank(self, thread: str, seq: int) -> int:
        """Position of an event in reading order (-1 if the thread is unknown)."""
        segs = self._by_thread.get(thread)
        if not segs:
            return -1
        i = max(0, bisect.bisect_right(self._starts[thread], seq) - 1)
        seg = segs[i]
        return seg.base + min(seq, seg.stop) - seg.start


def reading_order(idx: SessionIndex) -> Order:
    return derived(idx, "order", _build_order)


def _build_order(idx: SessionIndex) -> Order:
    children: dict[tuple[str, int], list[str]] = {}
    loose: list[str] = []
    for name, th in idx.threads.items():
        if name == "main":
            continue
        parent = th.meta.get("parent_call")
        call = idx.calls.call(parent) if isinstance(parent, str) else None
        where = call.call if call is not None else None
        if where and where[0] in idx.threads and where[0] != name:
            children.setdefault(where, []).append(name)
        else:
            loose.append(name)
    spawns: dict[str, list[int]] = {}
    for thread, seq in children:
        spawns.setdefault(thread, []).append(seq)
    segments: list[Segment] = []
    seen: set[str] = set()
    base = 0

    def add(thread: str, start: int, stop: int) -> None:
        nonlocal base
        if stop > start:
            segments.append(Segment(thread, start, stop, base))
            base += stop - start

    def walk(thread: str) -> None:
        # an explicit stack: a deep chain of sub-agents must not hit the recursion limit
        stack = [(thread, 0, sorted(spawns.get(thread, ())))]
        seen.add(thread)
        while stack:
            name, pos, points = stack.pop()
            n = len(idx.threads[name])
            while points and points[0] < pos:
                points.pop(0)
            if not points or not n:
                add(name, pos, n)
                continue
            at = min(points.pop(0), n - 1)
            add(name, pos, at + 1)
            stack.append((name, at + 1, points))
            for child in reversed(children.get((name, at), ())):
                if child not in seen:
                    seen.add(child)
                    stack.append((child, 0, sorted(spawns.get(child, ()))))

    walk("main")
    for name in loose:
        if name not in seen:
            walk(name)
    for name in idx.threads:  # a cycle of parent calls leaves threads unreached: never lose one
        if name not in seen:
            walk(name)
    return Order(segments)


DERIVED_KEPT = 48


def state(idx: SessionIndex) -> tuple:
    """What a derived figure depends on: the build, how many events each thread has, and the
    calls' changes of state that came with no event (a background call found finished)."""
    return idx.generation, idx.calls_moved, tuple((name, len(th)) for name, th in idx.threads.items())


def derived(idx: SessionIndex, name: str, build: Callable[[SessionIndex], object],
            extra: object = None):
    """`build(idx)`, computed once per index state (and `extra`, for figures that also depend
    on something else, such as whether the session has finished)."""
    cache = idx.__dict__.setdefault("_derived", {})
    key = (state(idx), extra)
    hit = cache.get(name)
    if hit is not None and hit[0] == key:
        return hit[1]
    value = build(idx)
    cache.pop(name, None)
    cache[name] = (key, value)
    while len(cache) > DERIVED_KEPT:  # one per filter a reader tried: keep the recent ones
        cache.pop(next(iter(cache)))
    return value
