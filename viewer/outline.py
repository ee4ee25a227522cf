"""The shape of a session at a glance: its turns (the outline) and where prompts, errors and
sub-agents sit along it (the minimap), from the index alone.

A turn starts at a real user prompt of the main thread (the adapter's own judgement, kept by the
index pass with the prompt's first words) and runs to the next one. Everything in reading order
between the two belongs to it, sub-agents included: their calls, their errors. Positions along the
session are reading-order ranks, so the minimap puts a sub-agent's error where the reader meets it.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from .index import SessionIndex
from .model import FAILED_UNREPORTED
from .order import derived, reading_order


@dataclass
class Turn:
    number: int
    seq: int  # the prompt's seq in the main thread (0 for the lead-in before the first prompt)
    id: str
    text: str  # the prompt's first words ("" for the lead-in)
    started: float | None = None
    ended: float | None = None
    events: int = 0
    steps: int = 0  # a run trace's agent steps (MARSYS), as the header counts them
    tool_calls: int = 0
    errors: int = 0
    subagents: list = field(default_factory=list)  # labels of the sub-agent threads it spawned

    @property
    def duration(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return max(0.0, self.ended - self.started)


def turns(idx: SessionIndex) -> list[Turn]:
    return derived(idx, "turns", _build_turns)


def _build_turns(idx: SessionIndex) -> list[Turn]:
    main = idx.threads.get("main")
    if main is None or not len(main):
        return []
    order = reading_order(idx)
    starts = sorted(main.prompts)
    out: list[Turn] = []
    if not starts or starts[0] > 0:
        out.append(Turn(0, 0, main.ids[0], ""))
    for seq in starts:
        out.append(Turn(len(out), seq, main.ids[seq], main.prompts[seq]))
    ranks = [order.rank("main", t.seq) for t in out]
    bounds = [t.seq for t in out] + [len(main)]
    for i, t in enumerate(out):
        ts = [x for x in main.ts[bounds[i]: bounds[i + 1]] if not math.isnan(x)]
        if ts:
            t.started, t.ended = ts[0], max(ts)
    end_ranks = ranks[1:] + [len(order)]
    for i, t in enumerate(out):
        t.events = end_ranks[i] - ranks[i]

    def turn_of(thread: str, seq: int) -> Turn | None:
        r = order.rank(thread, seq)
        i = bisect.bisect_right(ranks, r) - 1
        return out[i] if i >= 0 and r >= 0 else None

    for _, status, named, where, _, sub in idx.calls.rows():
        if where is None or where[0] not in idx.threads:
            continue
        t = turn_of(*where)
        if t is None:
            continue
        t.tool_calls += 1
        if status == "error" and (not named or named == FAILED_UNREPORTED):  # (as errors() counts)
            t.errors += 1
        if sub and sub in idx.threads:
            t.subagents.append(idx.threads[sub].label)
    for name, th in idx.threads.items():
        for seq, role in enumerate(th.roles):
            if role == "error" and (t := turn_of(name, seq)) is not None:
                t.errors += 1
        if "step" in th.kinds:
            hidden = th.hidden
            for seq, kind in enumerate(th.kinds):
                if kind == "step" and not hidden[seq] and (t := turn_of(name, seq)) is not None:
                    t.steps += 1
    if out and out[0].text == "" and not (out[0].tool_calls or out[0].errors) and len(out) > 1:
        out.pop(0)  # a lead-in of bookkeeping lines only is not worth a row
    return out


# --- the minimap ---------------------------------------------------------------------------------

PROMPT, SUBAGENT, ERROR = "prompt", "subagent", "error"
_WEIGHT = {PROMPT: 1, SUBAGENT: 2, ERROR: 3}


@dataclass
class Mark:
    kind: str  # prompt | subagent | error
    position: float  # 0..1 along the session in reading order
    id: str  # the event to open
    label: str


def marks(idx: SessionIndex, bins: int = 200) -> list[Mark]:
    """At most one mark per bin along the session: the most telling thing in it (an error over
    a sub-agent over a prompt), linked to the first such event."""
    return derived(idx, f"minimap:{bins}", lambda i: _build_marks(i, bins))


def _build_marks(idx: SessionIndex, bins: int) -> list[Mark]:
    order = reading_order(idx)
    total = len(order)
    if not total:
        return []
    found: dict[int, Mark] = {}

    def put(kind: str, thread: str, seq: int, label: str) -> None:
        r = order.rank(thread, seq)
        if r < 0:
            return
        b = min(bins - 1, r * bins // total)
        have = found.get(b)
        if have is None or _WEIGHT[kind] > _WEIGHT[have.kind] or (
                kind == have.kind and r / total < have.position):
            found[b] = Mark(kind, r / total, idx.threads[thread].ids[seq], label)

    main = idx.threads.get("main")
    if main is not None:
        for seq, text in main.prompts.items():
            put(PROMPT, "main", seq, text)
    for name, status, named, where, _, sub in idx.calls.rows():
        if where is None or where[0] not in idx.threads:
            continue
        if status == "error" and (not named or named == FAILED_UNREPORTED):
            put(ERROR, *where, f"{name or 'tool'} failed")
        elif sub and sub in idx.threads:
            put(SUBAGENT, *where, f"sub-agent: {idx.threads[sub].label}")
    for name, th in idx.threads.items():
        for seq, role in enumerate(th.roles):
            if role == "error":
                put(ERROR, name, seq, "error")
    return [found[b] for b in sorted(found)]
