"""Filtered views of a session, answered from the index alone (never by reading the file again).

A filter picks events by what the index already knows of each one: its role and kind, the content
bits of the index pass (text, thinking, a real user prompt), its author, its thread, and the
tool-call map (a call's name and state, and which event holds it). Groups combine with AND, values
inside a group with OR: `?tool=Bash&state=error` is every failed Bash call, `?tool=Bash&tool=Read`
every Bash or Read call. The picked events come in reading order (`order.reading_order`), so a
filtered view lists sub-agents' events where their calls sit, and it is windowed like the full
timeline.

Every URL names its filter (`?only=errors`, `?tool=Bash`, `?state=unanswered`, `?thread=<id>`,
`?agent=<name>`), so a filtered view can be shared and reloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .index import PROMPT, TEXT, THINKING, SessionIndex
from .order import derived, reading_order

# kinds a reader filters by, in the order the menu shows them
KINDS = {
    "prompts": "user prompts",
    "text": "assistant text",
    "thinking": "thinking",
    "tools": "tool calls",
    "system": "system",
    "errors": "errors",
    "unparsed": "unparsed lines",
}
# tool-call states as the cards show them (a source's named state over the map's own); "unanswered"
# is a pending call the session moved past or ended without
STATES = {
    "error": "error",
    "unanswered": "never answered",
    "executing": "executing",
    "pending": "waiting",
    "awaiting_permission": "awaiting permission",
    "denied": "denied",
    "denied_by_settings": "denied by settings",
    "blocked_by_hook": "blocked by hook",
    "denied_by_auto_mode": "denied by auto mode",
    "background": "running in background",
    "finished_unreported": "finished, no notification",
    "failed_unreported": "failed, no notification",
    "stopped_unreported": "stopped, no notification",
    "interrupted": "interrupted",
    "cancelled": "cancelled",
    "completed": "completed",
    "orphan": "orphan results",
}
_SPEAKERS = {"assistant", "agent_call", "agent_response"}
_SYSTEM = {"system", "status"}
GROUPS = ("only", "tool", "state", "thread", "agent")

Where = tuple[str, int]  # (thread, seq)


class FilterError(ValueError):
    pass


@dataclass(frozen=True)
class Filter:
    only: tuple[str, ...] = ()
    tool: tuple[str, ...] = ()
    state: tuple[str, ...] = ()
    thread: tuple[str, ...] = ()
    agent: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args) -> "Filter":
        """The filter named by a request's arguments (repeated or comma-separated values)."""
        values = {}
        for name in GROUPS:
            got: list[str] = []
            for raw in args.getlist(name) if hasattr(args, "getlist") else args.get(name, []):
                for v in raw.split(",") if name in ("only", "state") else [raw]:
                    v = v.strip()
                    if v and v not in got:
                        got.append(v)
            values[name] = tuple(got)
        for v in values["only"]:
            if v not in KINDS:
                raise FilterError(f"Unknown filter “only={v}”: use one of {', '.join(KINDS)}.")
        for v in values["state"]:
            if v not in STATES:
                raise FilterError(f"Unknown filter “state={v}”: use one of {', '.join(STATES)}.")
        return cls(**values)

    def __bool__(self) -> bool:
        return any(getattr(self, g) for g in GROUPS)

    def args(self) -> dict:
        """The filter as URL arguments."""
        return {g: list(getattr(self, g)) for g in GROUPS if getattr(self, g)}

    def toggled(self, group: str, value: str) -> "Filter":
        """This filter with one value added, or removed if it is there."""
        have = getattr(self, group)
        new = tuple(v for v in have if v != value) if value in have else have + (value,)
        return Filter(**{**{g: getattr(self, g) for g in GROUPS}, group: new})

    def has(self, group: str, value: str) -> bool:
        return value in getattr(self, group)

    def chips(self, idx: SessionIndex) -> list[tuple[str, "Filter"]]:
        """(label, the filter without it) for each value, to show and remove one by one."""
        out = []
        for g in GROUPS:
            for v in getattr(self, g):
                if g == "only":
                    label = KINDS[v]
                elif g == "state":
                    label = f"calls: {STATES[v]}"
                elif g == "tool":
                    label = f"tool {v}"
                elif g == "thread":
                    th = idx.threads.get(v)
                    label = f"thread {th.label if th else v}"
                else:
                    label = f"agent {v}"
                out.append((label, self.toggled(g, v)))
        return out


@dataclass
class Counts:
    """How many events (kinds, threads, agents) or calls (tools, states) each value picks: the
    filter menu. Computed once per index state, from column counts wherever possible."""

    kinds: dict[str, int] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)  # most used first
    states: dict[str, int] = field(default_factory=dict)
    threads: dict[str, int] = field(default_factory=dict)
    agents: dict[str, int] = field(default_factory=dict)


def counts(idx: SessionIndex) -> Counts:
    # "never answered" depends on whether the session has finished, not only on its events
    return derived(idx, "filter-counts", _build_counts, extra=idx.finished())


def _build_counts(idx: SessionIndex) -> Counts:
    c = Counts()
    kinds = dict.fromkeys(KINDS, 0)
    for name, th in idx.threads.items():
        roles = th.roles
        kinds["prompts"] += len(th.prompts)
        kinds["system"] += sum(roles.count(r) for r in _SYSTEM)
        kinds["errors"] += roles.count("error")
        kinds["unparsed"] += roles.count("unparsed")
        kinds["thinking"] += sum(1 for b in th.content if b & THINKING)
        kinds["text"] += sum(1 for r, b in zip(roles, th.content) if b & TEXT and r in _SPEAKERS
                             and not b & PROMPT)
        c.threads[name] = len(th)
        for author in th.authors:
            if author:
                c.agents[author] = c.agents.get(author, 0) + 1
    c.states = dict.fromkeys(STATES, 0)
    finished = idx.finished()
    tools: dict[str, int] = {}
    for name, status, named, where, result, _ in idx.calls.rows():
        if where is None or where[0] not in idx.threads:
            continue
        kinds["tools"] += 1
        tools[name or "?"] = tools.get(name or "?", 0) + 1
        state = _state(idx, status, named, where, result, finished)
        if state in c.states:
            c.states[state] += 1
        if status == "error" and not named:
            kinds["errors"] += 1
    c.states["orphan"] = sum(1 for o in idx.calls.orphans.values() if o.result is not None)
    c.kinds = kinds
    c.tools = dict(sorted(tools.items(), key=lambda kv: (-kv[1], kv[0])))
    c.agents = dict(sorted(c.agents.items(), key=lambda kv: (-kv[1], kv[0])))
    return c


def picks(idx: SessionIndex, group: str, value: str) -> set[Where]:
    """The events one filter value picks (unordered)."""
    return derived(idx, f"pick:{group}:{value}", lambda i: _pick(i, group, value),
                   extra=idx.finished() if group == "state" else None)


def _pick(idx: SessionIndex, group: str, value: str) -> set[Where]:
    out: set[Where] = set()
    if group == "thread":
        th = idx.threads.get(value)
        return {(value, seq) for seq in range(len(th))} if th is not None else out
    if group == "agent":
        for name, th in idx.threads.items():
            out.update((name, seq) for seq, a in enumerate(th.authors) if a == value)
        return out
    if group == "only" and value not in ("tools", "errors"):
        for name, th in idx.threads.items():
            roles, bits = th.roles, th.content
            if value == "prompts":
                seqs = th.prompts
            elif value == "text":
                seqs = [i for i, b in enumerate(bits) if b & TEXT and not b & PROMPT
                        and roles[i] in _SPEAKERS]
            elif value == "thinking":
                seqs = [i for i, b in enumerate(bits) if b & THINKING]
            elif value == "system":
                seqs = [i for i, r in enumerate(roles) if r in _SYSTEM]
            else:  # unparsed
                seqs = [i for i, r in enumerate(roles) if r == "unparsed"]
            out.update((name, seq) for seq in seqs)
        return out
    if group == "only" and value == "errors":
        for name, th in idx.threads.items():
            out.update((name, i) for i, r in enumerate(th.roles) if r == "error")
    if group == "state" and value == "orphan":
        return {o.result for o in idx.calls.orphans.values()
                if o.result is not None and o.result[0] in idx.threads}
    finished = idx.finished()
    for name, status, named, where, result, _ in idx.calls.rows():
        if where is None or where[0] not in idx.threads:
            continue
        if group == "only":
            if value == "tools" or (status == "error" and not named):
                out.add(where)
        elif group == "tool":
            if (name or "?") == value:
                out.add(where)
        elif group == "state":
            if _state(idx, status, named, where, result, finished) == value:
                out.add(where)
    return out


def _state(idx: SessionIndex, status: str, named, where, result, finished: bool) -> str:
    """A call's state as its card shows it."""
    if idx.moved_past(where, result, finished, named):
        return "unanswered"
    return named or status


def select(idx: SessionIndex, flt: Filter) -> list[Where]:
    """The events a filter picks, in reading order."""
    return derived(idx, f"select:{flt!r}", lambda i: _select(i, flt), extra=idx.finished())


def _select(idx: SessionIndex, flt: Filter) -> list[Where]:
    picked: set | None = None
    for g in GROUPS:
        values = getattr(flt, g)
        if not values:
            continue
        union: set = set()
        for v in values:
            union |= picks(idx, g, v)
        picked = union if picked is None else picked & union
    if picked is None:
        return []
    order = reading_order(idx)
    return sorted(picked, key=lambda w: order.rank(*w))


def bounds(total: int, *, before: int | None = None, after: int | None = None,
           around: int | None = None, size: int) -> tuple[int, int]:
    """[start, stop) positions of a window of a filtered list."""
    if before is not None:
        before = min(before, total)
        return max(0, before - size), before
    if around is not None:
        start = max(0, min(around - size // 2, total - size))
        return start, min(total, start + size)
    if after is not None:
        start = max(0, min(after, total))
        return start, min(total, start + size)
    return max(0, total - size), total
