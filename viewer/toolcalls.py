"""The tool-call state map: every call of a session, keyed by call id, with its state.

Seed 004 defines the life of a call: `pending` when the call is seen, `completed` or `error` when its
result arrives (`is_error` null counts as success), `executing` where the source says the tool is
running (a Claude Code progress line, a Wolo ToolPart with status running). A result whose call never
appears is an orphan, unless it names its call's place (`ToolResult.alt`, agentpress's non-streamed
XML calls, whose results name ids their call's row never kept): the call at that place
(`ToolUse.alt`) is its call, and the id it named an alias of that call's (`aliases`). Durations
run from the event holding the call to the one holding its result, unless the call carries its
own start / end times (`ToolUse.started` / `.ended`, or a result's `ToolResult.ended`), which win. The map is fed event by event in
file order, by the index pass and by the live tail alike, and it is plain data so the cache can
store and restore it.

Sources also name states of their own: legion's `awaiting_permission`, `denied` (the user refused)
and `interrupted` (the user stopped it), Wolo's cancelled parts, AgentScope's interrupted results,
Claude Code's calls refused by the person, a settings rule, a hook or auto mode (each named for who
refused it), its sibling-cancelled calls and its background Agent / Workflow calls (executing from
the launch note to the task notification that says the work ended; an Agent's call whose sub-agent's
own files say it finished with no notification is completed as `finished_unreported` by the index,
`SessionIndex._settle_background`, a Workflow's whose run's own file says it ended likewise, or as
`failed_unreported` (counted as an error) or `stopped_unreported` (a run that was killed), by
`SessionIndex._settle_runs`, and the notification that comes after all names its end). `SOURCE_STATES` maps each such word onto one of
the four states (a call awaiting permission is pending; a denied, interrupted or cancelled call has
ended without a result of its own: error) plus the named state shown on top (`ToolCall.named`,
`ToolCall.state`), counted under its own name and never as an error. Permission requests and answers
that name no call (legion's older records) are matched the way legion itself rebuilds a call's life:
a request belongs to the latest open call of its tool, an answer to the request with its id (else to
the call of its tool awaiting permission); "allow" lets the call run, "deny" ends it. A restart of
the agent (`Event.states["*"]`) interrupts every call still open. `Event.states["*"] = "answered"`
says instead that every open call of the event's thread got its result where the file cannot show
it (a Responses stream log: the next request carried the outputs to the model, the log holds only
the model's side): each is completed, its result placed at that event, which holds no block for
it; a call awaiting permission is left to its own answer, but is marked as answered (executing,
still named awaiting: the app's answer went with the request, which the log does not hold). Such a
call runs when the new response acts on its approval (a result naming it); when that response
ends without doing so (`Event.states["*"] = "unapproved"`), its approval was refused: denied.

An id used again. OpenAI-compatible servers (llama.cpp, vLLM, Ollama, some Gemini and Mistral
shims) and agent frameworks that number each response's calls give them ids from `call_0` again in
every response. A call whose id was already used by a call that got its result is a new call,
named `id~2`, `id~3`… (`again`: the scheme `formats.wrapped` names a conversation's reused ids
by, `id~<section>`), and what follows naming that id — results, running and state words, spawned
threads, permission answers — is the latest call's of that id: the agent answers its calls in
order, so a result names the call it just made. An id used again while its call still waits is
the same call written twice (a record repeated, a retry), as before, so two calls of one id are
never open at once. `ToolCallMap.again` decides this event by event as the map is fed, in file
order (a function of what came before, so a session that grows never renames a call it named);
the index keeps each event's renames (`ThreadIndex.renamed`, in the cache too) and every read of
the event applies them (`rename`), so pages, windows, the live feed, search and exports see one id.

Two calls of one id at once. The same servers, streaming, may give every call of one response the
same id (llama.cpp: one assistant message whose two tool_calls are both `call_0`, then two results
both naming `call_0`). A second call block of an id in one event is another call (`id~N` as
above; a hidden record's is not), and the results naming that id answer that response's calls in
the order they were made (`ToolCallMap.waiting`), one result each, as the agent returns them. The
event's rename of such an id is a tuple, one id per block naming it, in block order.
"""

from __future__ import annotations

import bisect
from array import array

from . import timestamps
from .model import (
    ANSWERED,
    AWAITING,
    BACKGROUND,
    BLOCKED_BY_HOOK,
    CANCELLED,
    COMPLETED,
    DENIED,
    DENIED_BY_AUTO,
    DENIED_BY_SETTINGS,
    ENDED,
    ERROR,
    EXECUTING,
    FAILED_UNREPORTED,
    INTERRUPTED,
    PENDING,
    STATES,
    UNAPPROVED,
    USER_WORDS,
    HOOK_WORDS,
    RUNNING_ON as _RUNNING_ON,
    Event,
    ToolCall,
)

# a source's word for a call's state → (the map's state, the named state shown on top)
SOURCE_STATES = {
    "pending": (PENDING, None),
    "queued": (PENDING, None),
    "awaiting_permission": (PENDING, AWAITING),
    "permission_required": (PENDING, AWAITING),
    "asking": (PENDING, AWAITING),
    "running": (EXECUTING, None),
    "executing": (EXECUTING, None),
    "in_progress": (EXECUTING, None),
    "completed": (COMPLETED, None),
    "success": (COMPLETED, None),
    "done": (COMPLETED, None),
    "failed": (ERROR, None),
    "error": (ERROR, None),
    "denied": (ERROR, DENIED),
    "rejected": (ERROR, DENIED),
    "denied_by_settings": (ERROR, DENIED_BY_SETTINGS),
    "blocked_by_hook": (ERROR, BLOCKED_BY_HOOK),
    "denied_by_auto_mode": (ERROR, DENIED_BY_AUTO),
    "background": (EXECUTING, BACKGROUND),
    "interrupted": (ERROR, INTERRUPTED),
    "orphaned": (ERROR, INTERRUPTED),  # legion's older word for a call a restart cut off
    "cancelled": (ERROR, CANCELLED),
    "canceled": (ERROR, CANCELLED),
}


def again(call_id: str, n: int) -> str:
    """The id of the `n`-th call (n ≥ 2) that uses `call_id`: `call_id~n`, the one scheme of ids
    used again across the product (a wrapper's conversation that reuses an earlier one's ids names
    them `id~<its section>`, formats.wrapped)."""
    return f"{call_id}~{n}"


def rename(ev, renames: dict[str, str | tuple]) -> None:
    """Give an event's calls and results, and the ids its running, state, spawn and permission
    words name, the ids `ToolCallMap.again` chose for them (the event is changed in place: an
    Event or a Digest, just made by its adapter). A tuple names each block naming that id in
    turn (one response's two calls of one id); the words name the last of them."""
    seen: dict[str, int] = {}  # raw id → how many blocks naming it came before

    def renamed(raw: str) -> str | None:
        new = renames.get(raw)
        if new.__class__ is tuple:
            i = seen[raw] = seen.get(raw, -1) + 1
            new = new[min(i, len(new) - 1)]
        return new

    for b in ev.blocks:
        k = b.kind
        if k == "tool_use":
            if (new := renamed(b.id)) is not None:
                b.id = new
        elif k == "tool_result":
            if (new := renamed(b.tool_use_id)) is not None:
                b.tool_use_id = new
    if ev.running or ev.states or ev.spawns or ev.permission is not None:
        last = {raw: new[-1] if new.__class__ is tuple else new for raw, new in renames.items()}
        if ev.running:
            ev.running = [last.get(c, c) for c in ev.running]
        if ev.states:
            ev.states = {last.get(c, c): w for c, w in ev.states.items()}
        if ev.spawns:
            ev.spawns = {last.get(c, c): t for c, t in ev.spawns.items()}
        p = ev.permission
        if p is not None and isinstance(p.get("call"), str) and p["call"] in last:
            ev.permission = {**p, "call": last[p["call"]]}


class Renamed:
    """The renames of one thread's events, by seq (`ToolCallMap.again` decides them, the index
    keeps them, every read of an event applies them), as columns: a session whose every response
    calls `call_0` has one for nearly every event, a million in a big one — as dicts, hundreds of
    megabytes and a second to load from the cache; as arrays, 20 bytes each, loaded at once.
    Each rename is (seq, the id as the record names it, n): the call's id is `again(id, n)`, or
    the id itself for n = 1 (an event whose blocks name one id for two calls has a rename per
    block naming it, in block order: `rename`'s tuple)."""

    def __init__(self) -> None:
        self.seqs = array("q")  # ascending: the pass adds events in order
        self.raws = array("q")  # codes into `table`
        self.ns = array("q")
        self.table: list[str] = []  # the ids used again (a few: call_0, call_1…)
        self._codes: dict[str, int] = {}

    def add(self, seq: int, renames: dict[str, str | tuple]) -> None:
        for raw, new in renames.items():
            code = self._codes.get(raw)
            if code is None:
                code = self._codes[raw] = len(self.table)
                self.table.append(raw)
            for one in new if new.__class__ is tuple else (new,):
                self.seqs.append(seq)
                self.raws.append(code)
                # (`again` made it: raw~n)
                self.ns.append(1 if one == raw else int(one.rpartition("~")[2]))

    def get(self, seq: int) -> dict[str, str] | None:
        """The renames of the event at `seq`, None when it has none."""
        seqs, n = self.seqs, len(self.ns)  # (`ns` is filled last: a pass may be adding one)
        i = bisect.bisect_left(seqs, seq, 0, n)
        if i == n or seqs[i] != seq:
            return None
        out = {}
        while i < n and seqs[i] == seq:
            raw = self.table[self.raws[i]]
            k = self.ns[i]
            new = raw if k == 1 else again(raw, k)
            had = out.get(raw)
            out[raw] = new if had is None else (*(had if had.__class__ is tuple else (had,)), new)
            i += 1
        return out

    def between(self, start: int, stop: int):
        """(seq, id as the record names it) of each rename of the events [start, stop)."""
        seqs, raws, table, n = self.seqs, self.raws, self.table, len(self.ns)
        i = bisect.bisect_left(seqs, start, 0, n)
        while i < n and seqs[i] < stop:
            yield seqs[i], table[raws[i]]
            i += 1

    def __bool__(self) -> bool:
        return bool(self.seqs)

    def __eq__(self, other) -> bool:
        return isinstance(other, Renamed) and (self.seqs, self.ns) == (other.seqs, other.ns) \
            and [self.table[c] for c in self.raws] == [other.table[c] for c in other.raws]

    def dump(self, blobs: list[bytes]) -> dict:
        blobs += [self.seqs.tobytes(), self.raws.tobytes(), self.ns.tobytes()]
        return {"table": self.table}

    @classmethod
    def load(cls, d: dict, blobs) -> "Renamed":
        r = cls()
        r.table = list(d["table"])
        r._codes = {raw: i for i, raw in enumerate(r.table)}
        for col in (r.seqs, r.raws, r.ns):
            col.frombytes(next(blobs))
        if not len(r.seqs) == len(r.raws) == len(r.ns) or any(c >= len(r.table) for c in r.raws):
            raise ValueError("renamed columns disagree")
        return r


def source_state(word) -> tuple[str, str | None] | None:
    """(state, named state) for a source's word; None for a word this map does not know."""
    return SOURCE_STATES.get(str(word).lower()) if word else None


class ToolCallMap:
    def __init__(self) -> None:
        self._calls: dict[str, ToolCall] = {}
        self._packed: _Packed | None = None  # calls loaded from the cache, not yet unpacked
        self.orphans: dict[str, ToolCall] = {}  # results seen with no call (yet)
        self.permits: dict[str, str] = {}  # permission request id → the call it is about
        # another id → the call it names: a call's place (`ToolUse.alt`), and the id a result
        # named that no call kept, once the result was matched to its call by that place
        self.aliases: dict[str, str] = {}
        # an id used again after its call's result → the latest call of that id (see `again`)
        self.latest: dict[str, str] = {}
        # an id one response gave two calls (see `again`) → those calls, answered in that order
        self.waiting: dict[str, list[str]] = {}

    def canon(self, call_id: str) -> str:
        """The id of the call `call_id` names: itself, unless it is an alias and no call's own id
        (a call's own id wins, whatever a transcript names its places)."""
        to = self.aliases.get(call_id)
        return call_id if to is None or self._own(call_id) is not None else to

    @property
    def calls(self) -> dict[str, ToolCall]:
        """Every call, by id (unpacks what the cache loaded, once)."""
        packed = self._packed
        if packed is not None:
            for cid in packed.ids:
                self._calls.setdefault(cid, packed.unpack(cid))
            self._packed = None
        return self._calls

    def call(self, call_id: str) -> ToolCall | None:
        """One call (not an orphan) by id or alias, unpacking only that one: the first screen of a
        big session needs a few dozen of its thousands of calls."""
        found = self._own(call_id)
        if found is None and (to := self.aliases.get(call_id)) is not None:
            found = self._own(to)
        return found

    def _own(self, call_id: str) -> ToolCall | None:
        found = self._calls.get(call_id)
        packed = self._packed  # another thread may unpack everything meanwhile
        if found is None and packed is not None and call_id in packed.pos:
            found = self._calls.setdefault(call_id, packed.unpack(call_id))
        return found

    def rows(self):
        """(name, status, named, call, result, subthread) of every call, read straight from the cache's
        columns when the map came from the cache: filters, the outline and the minimap look at
        thousands of calls and must not unpack each one."""
        packed = self._packed
        if packed is None:
            for c in list(self._calls.values()):
                yield c.name, c.status, c.named, c.call, c.result, c.subthread
            return
        own = self._calls  # calls unpacked one by one, and perhaps changed since (a sub-agent link)
        t, cols = packed.tables, packed.cols
        name, status, sub, named = cols["name"], cols["status"], cols["sub"], cols["named"]
        ct, cs, rt, rs = cols["call_thread"], cols["call_seq"], cols["result_thread"], cols["result_seq"]
        for i, cid in enumerate(packed.ids):
            c = own.get(cid)
            if c is not None:
                yield c.name, c.status, c.named, c.call, c.result, c.subthread
                continue
            yield (t[name[i]], t[status[i]], t[named[i]] if named[i] >= 0 else None,
                   (t[ct[i]], cs[i]) if ct[i] >= 0 else None,
                   (t[rt[i]], rs[i]) if rt[i] >= 0 else None, t[sub[i]] if sub[i] >= 0 else None)

    def named_rows(self) -> list[tuple[str, str, str | None]]:
        """(id, named state, subthread) of every call in a named state, read as `rows` reads them
        (the index looks for background calls whenever it asks whether a session changed)."""
        packed = self._packed
        if packed is None:
            return [(c.id, c.named, c.subthread) for c in list(self._calls.values()) if c.named]
        own, t, cols = self._calls, packed.tables, packed.cols
        named, sub = cols["named"], cols["sub"]
        out = []
        for i, cid in enumerate(packed.ids):
            c = own.get(cid)
            if c is not None:
                if c.named:
                    out.append((cid, c.named, c.subthread))
            elif named[i] >= 0:
                out.append((cid, t[named[i]], t[sub[i]] if sub[i] >= 0 else None))
        return out

    def __len__(self) -> int:
        packed = self._packed
        return len(self._calls) if packed is None else len(packed.ids)

    def get(self, call_id: str) -> ToolCall | None:
        return self.call(call_id) or self.orphans.get(call_id)

    def again(self, ev, where: tuple[str, int]) -> dict[str, str | tuple] | None:
        """The renames of an event about to be observed at `where` (see the module's "An id used
        again"): {id as the record names it: the call's id}, None when it names none again. A
        call whose id's latest call has its result is a new call (`again`), unless its record is
        hidden; anything else naming an id some call used again is the latest call's. Within one
        event an id is one call, unless the event makes two different calls of it (one response
        whose calls a server numbered alike, "Two calls of one id at once"): then the value is a
        tuple, the id of each block naming it in block order."""
        latest, out = self.latest, None
        if not latest and not self.waiting and not self._renames_any(ev, where):
            return None  # (no id used again so far, nor here: every call's event, in most files)
        made: dict[str, list] = {}  # raw → [(the call's block, its id)] of the calls made here
        given: dict[str, list[str]] = {}  # raw → the id of each block naming it, in order
        results: dict[str, int] = {}
        for b in ev.blocks:
            k = b.kind
            if k == "tool_use":
                raw = b.id
                if not raw:
                    continue
                here = made.get(raw)
                if here is None:
                    cur = latest.get(raw, raw)
                    c = self._own(cur)
                    # (a hidden record — a copy the format hides, bookkeeping — never starts a call)
                    if not ev.hidden and self._answered_elsewhere(c, where):
                        latest[raw] = cur = self._fresh(raw, cur)
                        self.waiting.pop(raw, None)  # a new response: its results are its calls'
                    made[raw] = [(b, cur)]
                elif not ev.hidden:  # another call, numbered alike
                    latest[raw] = cur = self._fresh(raw, latest.get(raw, raw))
                    here.append((b, cur))
                    self.waiting[raw] = [cid for _, cid in here]
                else:
                    cur = here[-1][1]
                given.setdefault(raw, []).append(cur)
            elif k == "tool_result":
                raw = b.tool_use_id
                if not raw:
                    continue
                j = results[raw] = results.get(raw, -1) + 1  # its place among this event's results of raw
                here = made.get(raw)
                if here is not None:  # a call and its result in one event
                    cur = here[min(j, len(here) - 1)][1]
                else:
                    cur = (self.waiting and self._waiting(raw, j)) or latest.get(raw, raw)
                given.setdefault(raw, []).append(cur)
        for raw, ids in given.items():
            if len(ids) > 1 and any(x != ids[0] for x in ids):
                out = out or {}
                out[raw] = tuple(ids)
            elif ids[0] != raw:
                out = out or {}
                out[raw] = ids[0]
        if latest:
            named = [*ev.running, *(ev.states or ()), *(ev.spawns or ())]
            p = ev.permission
            if p is not None and isinstance(p.get("call"), str):
                named.append(p["call"])
            for raw in named:
                cur = latest.get(raw)
                if cur is not None and (out is None or raw not in out):
                    out = out or {}
                    out[raw] = cur
        return out

    @staticmethod
    def _answered_elsewhere(c: ToolCall | None, where: tuple[str, int]) -> bool:
        """Whether a call made at `where` under this call's id is a new call: this one has its
        result, and was made by another record."""
        return c is not None and c.result is not None and c.call is not None and c.call != where

    def _renames_any(self, ev, where: tuple[str, int]) -> bool:
        """Whether `again` may rename anything of `ev` while no id has been used again: only a
        call of an id whose call is answered, or two calls of one id in it, start a new call."""
        if ev.hidden:  # (a hidden record never starts a call)
            return False
        made: list[str] = []
        for b in ev.blocks:
            if b.kind == "tool_use" and b.id:
                if b.id in made or self._answered_elsewhere(self._own(b.id), where):
                    return True
                made.append(b.id)
        return False

    def _fresh(self, raw: str, cur: str) -> str:
        """The id of a new call of `raw`, whose latest call is `cur`: the next `again` not taken."""
        n = int(cur.rpartition("~")[2]) + 1 if cur != raw else 2
        while self._own(new := again(raw, n)) is not None or new in self.orphans:
            n += 1
        return new

    def _waiting(self, raw: str, n: int) -> str | None:
        """The call of `raw` the `n`-th result of `raw` in this event answers while one response's
        calls of `raw` still wait (`waiting`): they are answered in the order they were made."""
        ids = self.waiting.get(raw)
        if not ids:
            return None
        open_ = [cid for cid in ids if (c := self._own(cid)) is None or c.result is None]
        if not open_:
            del self.waiting[raw]
            return None
        return open_[min(n, len(open_) - 1)]

    def plain(self, blocks, running) -> bool:
        """Whether an event's calls — its blocks and the calls it says are running, nothing more
        (no states, spawned threads nor permission) — are plain: new calls made under ids never
        seen, results of calls still waiting, neither an error nor with a state, time or place of
        their own, no id twice, while no id has been used again (`again` then renames nothing).
        Such an event is observed by `observe_plain`, which does what `observe` does with it in a
        fraction of the time (the index pass files most lines of a long session this way)."""
        if self.latest or self.waiting or self._packed is not None:
            return False
        own, first, seen = self._calls, None, None
        for b in blocks:
            k = b.kind
            if k == "tool_use":
                cid = b.id
                if not cid or cid in own or cid in self.orphans or b.alt is not None \
                        or b.started is not None or b.ended is not None or b.status is not None:
                    return False
            elif k == "tool_result":
                cid = b.tool_use_id
                c = own.get(cid)
                if c is None or c.result is not None or b.is_error or b.state is not None \
                        or b.ended is not None or b.alt is not None:
                    return False
            else:
                continue
            if first is None:  # (most events name one call: no set for it)
                first = cid
            elif cid == first or (seen is not None and cid in seen):
                return False
            elif seen is None:
                seen = {cid}
            else:
                seen.add(cid)
        if running:
            aliases = self.aliases
            for cid in running:
                if cid not in own and cid in aliases:
                    return False
        return True

    def observe_plain(self, blocks, running, where: tuple[str, int], ts: float | None) -> None:
        """`observe` of an event whose calls are `plain` (asked before anything of it was filed)."""
        own = self._calls
        for b in blocks:
            k = b.kind
            if k == "tool_use":
                call = own[b.id] = ToolCall(b.id)
                call.name, call.call, call.called_at = b.name, where, ts
            elif k == "tool_result":
                call = own[b.tool_use_id]
                call.result, call.is_error, call.named, call.status = where, False, None, COMPLETED
                call.finished_at = ts
        for cid in running:
            call = own.get(cid)
            if call is not None and call.status == PENDING:
                call.status, call.named = EXECUTING, None

    def observe(self, ev: Event, seq: int, ts: float | None, thread: str | None = None,
                refused_in_words=None) -> set[str]:
        """Feed one event (of `thread`, else the event's own); returns the ids of the calls whose
        state it changed. `refused_in_words(tool name)`, the event's format's hook of that name
        where it has one, says whether an error result of that tool that is only words
        (`model.USER_WORDS`) is the person's comment turning the call down: a tool whose own
        failures never read as free words (Claude Code's Bash and file edits). Without it such a
        result is a plain error."""
        changed: set[str] = set()
        where = (thread or ev.ref.thread, seq)
        calls = self._calls if self._packed is None else self.calls  # (the property, per line)
        for b in ev.blocks:
            kind = b.kind
            if kind == "tool_use":
                cid = b.id
                changed.add(cid)
                call = calls.get(cid)
                if call is None:
                    call = self.orphans.pop(cid, None) or ToolCall(cid)
                    calls[cid] = call
                call.name = b.name
                call.call = where
                if b.alt:
                    self.aliases[b.alt] = cid
                # a source that times the call itself (Wolo's ToolPart) is trusted over the event
                started, ended = b.started, b.ended
                started = None if started is None else _at(started)
                if started is not None:
                    call.called_at = started
                elif call.called_at is None:
                    call.called_at = ts
                if ended is not None and (ended := _at(ended)) is not None:
                    call.finished_at = ended
                source = b.status and source_state(b.status)
                if source and call.result is None:
                    call.status, call.named = source
                    call.is_error = call.status == ERROR
            elif kind == "tool_result":
                cid = b.tool_use_id
                call = calls.get(cid)
                if call is None and (to := self.aliases.get(cid)) is not None and to in calls:
                    cid, call = to, calls[to]  # an id matched to its call before (a live pass)
                if call is None and b.alt and (to := self.aliases.get(b.alt)) is not None \
                        and (found := calls.get(to)) is not None and found.result is None:
                    # an id no call kept: the call in the place the result names is its call
                    self.aliases[cid] = cid = to
                    call = found
                if call is None:
                    call = self.orphans.setdefault(cid, ToolCall(cid))
                changed.add(cid)
                if call.result is None or call.result == where:
                    call.result = where
                    call.is_error = bool(b.is_error)
                    # a denial reported before its result keeps its name: the result is its echo
                    if b.state == BACKGROUND and not call.is_error:  # the work goes on: no end yet
                        call.status, call.named = EXECUTING, BACKGROUND
                        continue
                    kept = call.named if call.named in ENDED and call.is_error else None
                    # a call its source named interrupted while it ran stays so when the result
                    # that follows is only the SDK's "The user doesn't want to proceed…", which an
                    # interrupt leaves as a refusal does (legion: ToolCallUpdate `interrupted`)
                    state = b.state
                    if state == USER_WORDS or state == HOOK_WORDS:
                        # the person's (or a hook's) words, if the call's own failures never are
                        state = (DENIED if state == USER_WORDS else BLOCKED_BY_HOOK) \
                            if refused_in_words is not None and call.name and refused_in_words(call.name) else None
                    interrupted = kept == INTERRUPTED and state == DENIED
                    call.named = state if state in ENDED and not interrupted else kept
                    call.status = ERROR if call.is_error or call.named else COMPLETED
                    if b.ended is not None and (own := _at(b.ended)) is not None:
                        call.finished_at = own  # the source timed the call apart from its record
                    elif not (call.call == where and call.finished_at is not None):
                        call.finished_at = ts  # unless the call's own end time came with it
        aliases = self.aliases
        for call_id in ev.running:
            call = calls.get(call_id)
            if call is None and call_id in aliases:
                call_id = aliases[call_id]
                call = calls.get(call_id)
            if call is not None and call.status == PENDING:
                call.status, call.named = EXECUTING, None
                changed.add(call_id)
        states, spawns = ev.states, ev.spawns
        for call_id, word in states.items() if states else ():
            if call_id == "*" and word == ANSWERED:
                at = ev.answered_at
                changed.update(self._answered(where, ts if at is None else at))
                continue
            if call_id == "*" and word == UNAPPROVED:
                changed.update(self._unapproved(where))
                continue
            source = source_state(word)
            if source is not None:
                targets = self._open() if call_id == "*" else [
                    calls.get(call_id) or calls.get(aliases.get(call_id, call_id))]
                for c in targets:
                    was = c.named if c is not None else None
                    if c is not None and _move(c, *source):
                        changed.add(c.id)
                        if was in _RUNNING_ON:  # its work ended now, not when it was launched
                            c.finished_at = ts
        if ev.permission is not None:
            call = self._permission(ev.permission)
            if call is not None:
                changed.add(call.id)
        for call_id, thread in spawns.items() if spawns else ():
            call = calls.get(call_id)
            if call is not None and call.subthread != thread:
                call.subthread = thread
                changed.add(call_id)
        return changed

    def _open(self) -> list[ToolCall]:
        """Calls still waiting for a result, oldest first."""
        return [c for c in self.calls.values()
                if c.result is None and c.status in (PENDING, EXECUTING)]

    def _answered(self, where: tuple[str, int], ts: float | None) -> list[str]:
        """Complete the open calls of `where`'s thread, their result placed at `where`."""
        done = []
        for c in self._open():
            # (a call held by `where` itself is not answered by it: a saved response both says
            # the calls before it were answered and makes its own)
            if c.call is None or c.call[0] != where[0] or c.call == where:
                continue
            if c.named != AWAITING:
                c.result, c.status, c.named, c.is_error = where, COMPLETED, None, False
                c.finished_at = ts
                done.append(c.id)
            elif c.status == PENDING:  # asked before this response: the request carried the answer
                c.status = EXECUTING
                done.append(c.id)
        return done

    def _unapproved(self, where: tuple[str, int]) -> list[str]:
        """Deny the calls of `where`'s thread whose approval went with the request of the response
        ending here (`_answered`), which never acted on it."""
        done = []
        for c in self._open():
            if c.named == AWAITING and c.status == EXECUTING and c.call is not None \
                    and c.call[0] == where[0] and _move(c, ERROR, DENIED):
                done.append(c.id)
        return done

    def _permission(self, p: dict) -> ToolCall | None:
        """A permission request or answer: find its call and move it; the call if it moved."""
        decision, request, tool = p.get("decision"), p.get("request"), p.get("tool")
        if isinstance(p.get("call"), str) and p["call"]:
            call = self.calls.get(p["call"])
        elif decision is None:  # a request: the latest open call of that tool
            call = next((c for c in reversed(self._open()) if not tool or c.name == tool), None)
        elif request and request in self.permits:
            call = self.calls.get(self.permits[request])
        else:  # an answer to no known request: the call of that tool awaiting permission
            call = next((c for c in reversed(self._open())
                         if c.named == AWAITING and (not tool or c.name == tool)), None)
        if call is None:
            return None
        if decision is None:
            if request:
                self.permits[str(request)] = call.id
            moved = _move(call, PENDING, AWAITING)
        elif decision == "deny":
            moved = _move(call, ERROR, DENIED)
        else:  # allowed: it runs, as legion reads an allow
            moved = call.named == AWAITING and _move(call, EXECUTING, None)
        return call if moved else None

    def by_state(self) -> dict[str, int]:
        """Calls per state: the four states always, a named state when a call has it."""
        counts = dict.fromkeys(STATES, 0)
        for call in self.calls.values():
            counts[call.state] = counts.get(call.state, 0) + 1
        return counts

    def errors(self) -> int:
        """Calls that failed: a denied, interrupted or cancelled call is not one; a background
        call whose work's own files say it failed (no notification came) is."""
        return sum(1 for c in self.calls.values()
                   if c.status == ERROR and (not c.named or c.named == FAILED_UNREPORTED))

    # --- persistence: columns of the cache blob, unpacked call by call on demand ---

    def dump(self, blobs: list[bytes]) -> dict:
        calls = list(self.calls.values())
        return {"calls": _Packed.pack(calls, blobs), "orphans": _Packed.pack(
            list(self.orphans.values()), blobs), "permits": self.permits, "aliases": self.aliases,
            "latest": self.latest, "waiting": self.waiting}

    @classmethod
    def load(cls, d: dict, blobs) -> "ToolCallMap":
        m = cls()
        m._packed = _Packed(d["calls"], blobs)
        orphans = _Packed(d["orphans"], blobs)
        m.orphans = {cid: orphans.unpack(cid) for cid in orphans.ids}
        m.permits = dict(d.get("permits") or {})
        m.aliases = dict(d.get("aliases") or {})
        m.latest = dict(d.get("latest") or {})
        m.waiting = {raw: list(ids) for raw, ids in (d.get("waiting") or {}).items()}
        return m


def _move(call: ToolCall, status: str, named: str | None) -> bool:
    """Put a call in a state its source reports without a result; whether it changed. A result
    stands, except that an error result may be named for what it was (legion reports `denied`
    or `interrupted` after the result that says so), and that a result with no error of its own
    turns out to be one when the source reports the call failed after it (agentpress saves a
    native tool's output, which has no success flag, then a `tool_failed` status row), and that
    a call running in the background (its result only said it started) ends when its work does
    (and one found finished without a word of it, `UNREPORTED`, takes the word that comes)."""
    if call.result is not None and call.named not in _RUNNING_ON and not (
            named in ENDED and call.status == ERROR) and not (
            status == ERROR and named is None and call.status == COMPLETED):
        return False
    if (call.status, call.named) == (status, named):
        return False
    call.status, call.named = status, named
    call.is_error = status == ERROR
    return True


_NAN = float("nan")


class _Packed:
    """Calls as columns: ids, codes into small tables, numbers in arrays."""

    _INTS = ("name", "status", "call_thread", "call_seq", "result_thread", "result_seq", "sub",
             "named")

    def __init__(self, head: dict, blobs) -> None:
        self.tables: list[str] = head["tables"]
        self.cols = {}
        for name in self._INTS:
            a = array("q")
            a.frombytes(next(blobs))
            self.cols[name] = a
        for name in ("called", "finished"):
            a = array("d")
            a.frombytes(next(blobs))
            self.cols[name] = a
        self.cols["is_error"] = bytes(next(blobs))  # (a copy: the blob may be a view of the cache's)
        sizes, at = array("q"), 0
        sizes.frombytes(next(blobs))
        text = bytes(next(blobs))
        self.ids: list[str] = []
        for n in sizes:
            self.ids.append(text[at:at + n].decode("utf-8", "surrogatepass"))
            at += n
        if len(self.ids) != head["ids"] or at != len(text):
            raise ValueError("tool-call ids disagree")
        self.pos = {cid: i for i, cid in enumerate(self.ids)}
        if any(len(c) != len(self.ids) for c in self.cols.values()):
            raise ValueError("tool-call columns disagree")

    def unpack(self, cid: str) -> ToolCall:
        i, c, t = self.pos[cid], self.cols, self.tables

        def where(thread, seq):
            return None if c[thread][i] < 0 else (t[c[thread][i]], c[seq][i])

        def at(name):
            v = c[name][i]
            return None if v != v else v

        return ToolCall(cid, t[c["name"][i]], t[c["status"][i]], where("call_thread", "call_seq"),
                        where("result_thread", "result_seq"), bool(c["is_error"][i]), at("called"),
                        at("finished"), t[c["sub"][i]] if c["sub"][i] >= 0 else None,
                        t[c["named"][i]] if c["named"][i] >= 0 else None)

    @classmethod
    def pack(cls, calls: list[ToolCall], blobs: list[bytes]) -> dict:
        tables: dict[str, int] = {}

        def code(text):
            return -1 if text is None else tables.setdefault(text, len(tables))

        cols = {name: array("q") for name in cls._INTS}
        called, finished = array("d"), array("d")
        for call in calls:
            cols["name"].append(code(call.name))
            cols["status"].append(code(call.status))
            for key, value in (("call", call.call), ("result", call.result)):
                cols[f"{key}_thread"].append(code(value[0]) if value else -1)
                cols[f"{key}_seq"].append(value[1] if value else -1)
            cols["sub"].append(code(call.subthread))
            cols["named"].append(code(call.named))
            called.append(_NAN if call.called_at is None else call.called_at)
            finished.append(_NAN if call.finished_at is None else call.finished_at)
        blobs.extend(cols[name].tobytes() for name in cls._INTS)
        blobs += [called.tobytes(), finished.tobytes(), bytes(bool(c.is_error) for c in calls)]
        # the ids as a blob (their UTF-8 bytes end to end, and their lengths), not as JSON:
        # orjson reserves many times the size of what it writes (see ThreadIndex.dump)
        ids = [c.id.encode("utf-8", "surrogatepass") for c in calls]
        blobs += [array("q", map(len, ids)).tobytes(), b"".join(ids)]
        return {"ids": len(ids), "tables": list(tables)}


def _at(raw) -> float | None:
    """Epoch seconds of a time a source put on the call itself (ToolUse.started / .ended)."""
    return None if raw is None else timestamps.to_epoch(raw)
