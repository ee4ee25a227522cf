"""The tool-call state map: every call of a session, keyed by call id, with its state.

Seed 004 defines the life of a call: `pending` when the call is seen, `completed` or `error` when its
result arrives (`is_error` null counts as success), `executing` where the source says the tool is
running (a Claude Code progress line, a Wolo ToolPart with status running). A result whose call never
appears is an orphan. Durations run from the event holding the call to the one holding its result,
unless the call carries its own start / end times (`ToolUse.started` / `.ended`), which win. The map
is fed event by event in file order, by the index pass and by the live tail alike, and it is plain
data so the cache can store and restore it.
"""

from __future__ import annotations

from . import timestamps
from .model import COMPLETED, ERROR, EXECUTING, PENDING, Event, ToolCall

_SOURCE_STATUS = {
    "pending": PENDING,
    "running": EXECUTING,
    "executing": EXECUTING,
    "in_progress": EXECUTING,
    "completed": COMPLETED,
    "success": COMPLETED,
    "done": COMPLETED,
    "failed": ERROR,
    "error": ERROR,
}


class ToolCallMap:
    def __init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        self.orphans: dict[str, ToolCall] = {}  # results seen with no call (yet)

    def __len__(self) -> int:
        return len(self.calls)

    def get(self, call_id: str) -> ToolCall | None:
        return self.calls.get(call_id) or self.orphans.get(call_id)

    def observe(self, ev: Event, seq: int, ts: float | None) -> set[str]:
        """Feed one event; returns the ids of the calls whose state it changed."""
        changed: set[str] = set()
        where = (ev.ref.thread, seq)
        for b in ev.blocks:
            kind = b.kind
            if kind == "tool_use":
                changed.add(b.id)
                call = self.calls.get(b.id)
                if call is None:
                    call = self.orphans.pop(b.id, None) or ToolCall(b.id)
                    self.calls[b.id] = call
                call.name = b.name
                call.call = where
                # a source that times the call itself (Wolo's ToolPart) is trusted over the event
                started, ended = _at(b.started), _at(b.ended)
                if started is not None:
                    call.called_at = started
                elif call.called_at is None:
                    call.called_at = ts
                if ended is not None:
                    call.finished_at = ended
                source = _SOURCE_STATUS.get(str(b.status).lower()) if b.status else None
                if source and call.result is None:
                    call.status = source
                    call.is_error = source == ERROR
            elif kind == "tool_result":
                call = self.calls.get(b.tool_use_id)
                if call is None:
                    call = self.orphans.setdefault(b.tool_use_id, ToolCall(b.tool_use_id))
                changed.add(b.tool_use_id)
                if call.result is None or call.result == where:
                    call.result = where
                    call.is_error = bool(b.is_error)
                    call.status = ERROR if call.is_error else COMPLETED
                    if not (call.call == where and call.finished_at is not None):
                        call.finished_at = ts  # unless the call's own end time came with it
        for call_id in ev.running:
            call = self.calls.get(call_id)
            if call is not None and call.status == PENDING:
                call.status = EXECUTING
                changed.add(call_id)
        for call_id, thread in ev.spawns.items():
            call = self.calls.get(call_id)
            if call is not None and call.subthread != thread:
                call.subthread = thread
                changed.add(call_id)
        return changed

    def by_state(self) -> dict[str, int]:
        counts = {PENDING: 0, EXECUTING: 0, COMPLETED: 0, ERROR: 0}
        for call in self.calls.values():
            counts[call.status] = counts.get(call.status, 0) + 1
        return counts

    def errors(self) -> int:
        return sum(1 for c in self.calls.values() if c.status == ERROR)

    # --- persistence (the index cache stores the map as plain lists) ---

    _FIELDS = ("id", "name", "status", "call", "result", "is_error", "called_at", "finished_at",
               "subthread")

    def dump(self) -> dict:
        def row(c: ToolCall):
            return [getattr(c, f) for f in self._FIELDS]

        return {"calls": [row(c) for c in self.calls.values()],
                "orphans": [row(c) for c in self.orphans.values()]}

    @classmethod
    def load(cls, data: dict) -> "ToolCallMap":
        m = cls()
        for target, rows in ((m.calls, data["calls"]), (m.orphans, data["orphans"])):
            for cid, name, status, call, result, is_error, called, finished, sub in rows:
                target[cid] = ToolCall(cid, name, status, tuple(call) if call else None,
                                       tuple(result) if result else None, is_error, called,
                                       finished, sub)
        return m


def _at(raw) -> float | None:
    """Epoch seconds of a time a source put on the call itself (ToolUse.started / .ended)."""
    return None if raw is None else timestamps.to_epoch(raw)
