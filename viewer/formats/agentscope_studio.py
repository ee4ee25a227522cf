"""AgentScope Studio: the runs an AgentScope program pushed to Studio, read from Studio's database.

A run of `database.sqlite` (studio_db.py) is one session: a head card for the run row (its project,
name, status, process), then its messages in the order Studio received them, each AgentScope's
`Msg` as the program printed it, read by the AgentScope adapter (agentscope.py: the same blocks,
authors and tool results as its JSONL and session files), then a card for what could not be read.

Model calls: when the program traced to Studio (`agentscope.init(tracing_url=…)`, Studio's
span_table), each `chat` span names the model and its tokens, and the `invoke_agent` span above it
the agent's reply that made the call. A ReAct agent prints one Msg per reasoning step, each the
answer of one model call: a reply's calls are put on that reply's own messages (not its tool
results), in order (`_pair`; nothing Studio keeps links a call to its message by id: a tool's
result, by contrast, names its call's id, and is paired by it as in AgentScope's files).

A tool's run traced as an `execute_tool` span times its call: the call's card shows the span's
duration (from the call's message, on the messages' clock: the trace's is UTC, theirs zoneless),
and a span that failed (its status ERROR, or an `exception` event: studio_db._failure) marks the
call's result an error and says why on it (`_timed`); a failed span with no result message gives the
call a result of its own. What else was traced is shown on the message it belongs to, as soon as its span is written (`_ride`):
a tool's run (`execute_tool`, which names its call's id) on the message that made the call, an
agent's reply (`invoke_agent`) on that reply's last message, and any other span below a reply (a
formatter, a traced function) with the reply. AgentScope exports a span when it ends, a few seconds
after the messages it concerns were pushed, so a span is never a record of its own while the run
runs (a record put among the messages read would move the ones after it; the index and an open page
read a run on by appending, rowfold.py): the message it rides on is drawn again, in place. What no
message can be found for — a model call left over (counted in the usage all the same), a span of
no reply — waits for the run's end (`LIVE`), and is then shown after its messages as compact hidden
cards; one that failed (a model call that raised leaves no message to say so) is an error card in
sight instead (`_failed`). An agent's open request for input (Studio's input_request_table) is a
card after the messages; a message's speech (the audio Studio keeps for it) an audio block of its
card. The list shows each run's status.

Times are AgentScope's, local and zoneless: shown as written, the zone said unknown
(SessionSummary.zoneless).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from .. import timestamps
from ..model import Data, Event, Notice, Ref, Text, ToolResult
from . import agentscope, rowdb, studio_db
from .common import as_text, generic_event, media_block, set_time

NAME = "agentscope-studio"
MODE = "jsonl"  # (its sessions are database rows, read as documents by `folder_document`)
ROW_STORE = studio_db  # Studio's database: its runs are sessions (formats/__init__)
EXTENDS = agentscope  # its messages are AgentScope's Msgs (detect.adapter_score)
TITLE_KINDS = frozenset({"session"})

_ROW = "__studio_run__"  # marks the run row among a document's records
_NOTE = "__studio_note__"  # …and a note on reading it (the database is locked, its log unread)
_CALL = "__studio_call__"  # …and a traced span no message was found for (a model call, a tool's run…)
_REQUEST = "__studio_request__"  # …and an agent's open request for input
LIVE = ("running", "pending")  # Studio's status words of a run still going


class _Traced(dict):
    """A Msg plus the model call that made it (`call`) and the other spans traced for it (`spans`:
    its calls' tool runs, the reply it ends; `_ride`); serialises as the plain Msg, so the raw view
    shows the row as Studio keeps it."""

    __slots__ = ("call", "spans", "outcomes")

    def __init__(self, *args):
        super().__init__(*args)
        self.call, self.spans = getattr(args[0], "call", None) if args else None, ()
        self.outcomes = ()  # the tool runs whose results it holds (their spans: `_timed`)


def sniff(rec: Any) -> int:
    """A run's row as `records` gives it, or a Msg Studio stored (it carries its `replyId`, which
    AgentScope's own files never do); a run of Studio's database itself is told by `claims_file`.
    Its other records are AgentScope's (`EXTENDS`: credited with its score once a mark is seen)."""
    if not isinstance(rec, dict):
        return 0
    if rec.get(_ROW) is True:
        return 3
    return 3 if isinstance(rec.get("replyId"), str) and agentscope.sniff(rec) else 0


# a run of Studio's database (a path below `database.sqlite`), read as one document
# (studio_db.document); a database that cannot be read now (damaged): the run says why
claims_file, folder_document, folder_identity = rowdb.session_hooks(
    studio_db, lambda why: {"run": {}, "messages": [], "spans": [], "unreadable": why})


def companion_folders(main: Path) -> list[Path]:
    return []  # (a run has no sub-sessions: its agents all speak in it)


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """A run read as a document: its row, its messages (each with the model call that made it and
    the other spans traced for it: `_pair`, `_ride`), then — once the run is no longer running
    (`LIVE`) — what was traced that no message was found for (the model calls left over, spans of
    no reply), the input its agents wait for, and the notes on reading it. While it runs, such a
    span may yet find its message, and new messages come after those read: it waits for the run's
    end, so what the run holds is appended to as it grows (rowfold.py)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("run"), dict) \
            or not isinstance(doc.get("messages"), list):
        return None
    messages = list(doc["messages"])
    spans = [s for s in doc.get("spans") or () if isinstance(s, dict)] \
        if isinstance(doc.get("spans"), list) else []
    left = {id(s) for _, s in _pair(messages, spans)}
    rode = _ride(messages, spans)
    out: list[tuple[str, Any]] = [("run", {_ROW: True, **doc["run"]})]
    out += [(f"messages[{i}]", m) for i, m in enumerate(messages)]
    if doc["run"].get("status") not in LIVE:
        out += [(f"spans[{i}]", {_CALL: True, **s}) for i, s in enumerate(spans)
                if id(s) in left or (s.get("kind") != "call" and id(s) not in rode)]
    requests = doc.get("requests") if isinstance(doc.get("requests"), list) else []
    out += [(f"requests[{i}]", {_REQUEST: True, **q}) for i, q in enumerate(requests) if isinstance(q, dict)]
    for key in ("unreadable", "stale_wal"):
        if isinstance(doc.get(key), str):
            out.append((key, {_NOTE: doc[key]}))
    return out


def _ride(messages: list, spans: list) -> set[int]:
    """Puts each span that is not a model call on the message it belongs to (that message made a
    _Traced, the span in its `spans`, in the order the spans started); returns the ids of the spans
    put. A tool's run goes on the message holding its call (`call_id`); an agent's reply on the
    last message of that reply that is not a tool's result (the k-th `invoke_agent` span of an agent is its k-th reply: its
    messages are told by their `replyId`, the agent by the first of them not the system's); any
    other span, and a tool's run whose call no message holds, on the message its reply went on."""
    calls: dict[str, int] = {}
    results: dict[str, int] = {}
    groups: dict[Any, list[int]] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        for b in m.get("content") if isinstance(m.get("content"), list) else ():
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                calls.setdefault(b["id"], i)
            elif isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("id"), str):
                results.setdefault(b["id"], i)
        if isinstance(m.get("replyId"), str) and m["replyId"]:
            groups.setdefault(m["replyId"], []).append(i)
    replies_of: dict[str, list[list[int]]] = {}  # agent → its replies' messages, in order
    for places in groups.values():
        speaker = next((messages[i].get("name") for i in places if messages[i].get("role") != "system"), None)
        if isinstance(speaker, str):
            replies_of.setdefault(speaker, []).append(places)
    at: dict[Any, int] = {}  # reply span → the place of its last message
    taken: dict[str, int] = {}
    for s in spans:
        if s.get("kind") == "reply" and isinstance(s.get("agent"), str):
            k = taken[s["agent"]] = taken.get(s["agent"], -1) + 1
            mine = replies_of.get(s["agent"], [])
            if k < len(mine):  # (its last message that is not a tool's result, when there is one)
                spoken = [i for i in mine[k] if messages[i].get("role") != "system"]
                at[s.get("span")] = (spoken or mine[k])[-1]
    riders: dict[int, list] = {}
    for s in spans:
        kind = s.get("kind")
        if kind == "call":
            continue
        if kind == "reply":
            place = at.get(s.get("span"))
        elif kind == "tool" and s.get("call_id") in calls:
            place = calls[s["call_id"]]
        else:
            place = at.get(s.get("reply"))
        if place is not None:
            riders.setdefault(place, []).append(s)
    # a tool's run also times the message holding its result (on the clock of its call's message)
    outcomes: dict[int, list] = {}
    for s in spans:
        cid = s.get("call_id") if s.get("kind") == "tool" else None
        if cid in results and results[cid] != calls.get(cid):
            at = messages[calls[cid]].get("timestamp") if cid in calls else None
            outcomes.setdefault(results[cid], []).append({**s, "call_at": at})
    rode = {id(s) for mine in riders.values() for s in mine}
    for place in set(riders) | set(outcomes):
        traced = messages[place] if isinstance(messages[place], _Traced) else _Traced(messages[place])
        traced.spans = tuple({**s, "answered": True} if s.get("kind") == "tool" and s.get("call_id") in results
                             else s for s in riders.get(place, ()))
        traced.outcomes = tuple(outcomes.get(place, ()))
        messages[place] = traced
    return rode


def _pair(messages: list, spans: list) -> list[tuple[int, dict]]:
    """Puts each model call on the message it made (replacing that Msg by a _Traced); returns the
    calls left over, with their place in `spans`.

    An agent's replies are told apart on both sides: its messages by `replyId` (what the agent's
    `_reply_id` was when it printed them), its `invoke_agent` spans by start. When an agent has
    as many of one as of the other, the k-th reply's calls go on the k-th reply's own messages,
    in order (a reply's last message may be one no call made: a ReAct agent prints its final
    answer again); else each agent's calls go on its own messages in order."""
    own: dict[str, list[int]] = {}
    for i, m in enumerate(messages):
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("name"), str) \
                and not _only_results(m.get("content")):
            own.setdefault(m["name"], []).append(i)
    replies: dict[str, list] = {}
    for s in spans:
        if s.get("kind") == "reply" and isinstance(s.get("agent"), str):
            replies.setdefault(s["agent"], []).append(s.get("span"))
    slots: dict[tuple, list[int]] = {}  # (agent, reply span or None) → its messages' places
    for agent, places in own.items():
        groups: dict[Any, list[int]] = {}
        for i in places:
            groups.setdefault(messages[i].get("replyId", messages[i].get("id")), []).append(i)
        spans_of = replies.get(agent, [])
        if len(groups) == len(spans_of) and all(messages[i].get("replyId") for i in places):
            for span, group in zip(spans_of, groups.values()):
                slots[(agent, span)] = group
        else:
            slots[(agent, None)] = places
    left = []
    for n, span in enumerate(spans):
        if span.get("kind") != "call":
            continue
        agent = span.get("agent")
        key = (agent, span.get("reply")) if (agent, span.get("reply")) in slots else (agent, None)
        free = slots.get(key) if isinstance(agent, str) else None
        if free:
            i = free.pop(0)
            traced = _Traced(messages[i])
            traced.call = span
            messages[i] = traced
        else:
            left.append((n, span))
    return left


def _only_results(content: Any) -> bool:
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def event(rec: Any, ref: Ref) -> Event:
    if isinstance(rec, dict) and rec.get(_ROW) is True:
        ev = _run(rec, ref)
    elif isinstance(rec, dict) and isinstance(rec.get(_NOTE), str):
        ev = Event(ref, "system", "notice", blocks=[Notice(rec[_NOTE])])
    elif isinstance(rec, dict) and rec.get(_CALL) is True:
        ev = _call(rec, ref) if rec.get("kind") == "call" else _span(rec, ref)
    elif isinstance(rec, dict) and rec.get(_REQUEST) is True:
        ev = _request(rec, ref)
    elif isinstance(rec, dict):
        ev = agentscope.event({k: v for k, v in rec.items() if k != "speech"} if "speech" in rec else rec, ref)
        call = getattr(rec, "call", None)
        if isinstance(call, dict):
            _usage(ev, call)
        if "speech" in rec:
            ev.blocks += _speech(rec["speech"])
        spans = getattr(rec, "spans", ())
        _timed(ev, rec.get("timestamp"), spans, getattr(rec, "outcomes", ()))
        ev.blocks += [Notice("traced: " + _span_words(s)) for s in spans]
    else:
        ev = generic_event(rec, ref, NAME)
    ev.format = NAME
    return ev


def _took(span: dict) -> float | None:
    start, end = span.get("start"), span.get("end")
    if isinstance(start, int) and isinstance(end, int) and start and end >= start:
        return (end - start) / 1e9
    return None


def _ends(at: Any, span: dict) -> float | None:
    """When a tool's run ended on the messages' clock: its call's message time plus the span's
    length (the trace's clock is UTC, the messages' zoneless local time)."""
    begun, took = timestamps.to_epoch(at) if isinstance(at, str) else None, _took(span)
    return None if begun is None or took is None else begun + took


def _timed(ev: Event, at: Any, spans: tuple, outcomes: tuple) -> None:
    """A message's tool calls and results as their traced runs say: a call whose `execute_tool`
    span rides on its message lasts as long as the span (`ToolUse.started` / `.ended`); a result
    whose run's span failed is an error that says why (its text first); a failed run of a call no
    message answers is answered here, with the span's words."""
    uses = {b.id: b for b in ev.blocks if b.kind == "tool_use"}
    answered = {b.tool_use_id for b in ev.blocks if b.kind == "tool_result"}
    for s in spans:
        use = uses.get(s.get("call_id")) if s.get("kind") == "tool" else None
        if use is None:
            continue
        if (end := _ends(at, s)) is not None:
            use.started, use.ended = at, end
        if s.get("error") and use.id not in answered and not s.get("answered"):
            ev.blocks.append(ToolResult(use.id, [Text(f"the trace says it failed: {s['error']}", markdown=False)],
                                        True, ended=use.ended))
    for s in outcomes:
        for r in ev.tool_results():
            if r.tool_use_id != s.get("call_id"):
                continue
            if (end := _ends(s.get("call_at"), s)) is not None:
                r.ended = end
            if s.get("error"):
                r.is_error = True
                r.content.insert(0, Text(f"the trace says it failed: {s['error']}", markdown=False))


def _run(rec: dict, ref: Ref) -> Event:
    """The run row: what Studio's run list shows of it."""
    row = {k: v for k, v in rec.items() if k != _ROW}
    name, project = as_text(row.get("name") or ""), as_text(row.get("project") or "")
    words = "AgentScope Studio run" + (f" “{name}”" if name else "") + (f" of project {project}" if project else "")
    blocks: list = [Notice(words)]
    status = row.get("status")
    if isinstance(status, str) and status:
        blocks.append(Notice(f"status: {status}"))  # (Studio's word: running, pending, done, unknown)
    pid = row.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
        blocks.append(Notice(f"process {pid}"))
    if isinstance(row.get("run_dir"), str) and row["run_dir"]:
        blocks.append(Notice(f"run folder: {row['run_dir']}"))
    ev = Event(ref, "system", "session", blocks=blocks, meta=row)
    set_time(ev, row.get("timestamp") if isinstance(row.get("timestamp"), str) else None)
    return ev


def _usage(ev: Event, call: dict) -> None:
    if isinstance(call.get("model"), str) and call["model"]:
        ev.model = call["model"]
    counts = {k: call[c] for k, c in (("input_tokens", "input"), ("output_tokens", "output"))
              if isinstance(call.get(c), int) and not isinstance(call.get(c), bool)}
    if counts:
        ev.usage = counts
        ev.message_id = f"span:{call.get('span')}"  # (one call, however its message is shown)


def _call(rec: dict, ref: Ref) -> Event:
    """A model call traced for the run that no message of its agent answers."""
    call = {k: v for k, v in rec.items() if k != _CALL}
    who = call.get("agent") if isinstance(call.get("agent"), str) else None
    words = "model call" + (f" of {who}" if who else "") + (f" ({call['model']})" if call.get("model") else "")
    if call.get("error"):
        ev = _failed(ref, f"traced: {words} — failed: {call['error']}", call)
    else:
        ev = Event(ref, "system", "notice", author=who, blocks=[Notice(words + " with no message of its own")],
                   meta=call)
        ev.hidden, ev.hidden_reason = True, "a traced model call no message of its agent shows"
    _usage(ev, call)
    return ev


def _failed(ref: Ref, words: str, span: dict) -> Event:
    """A span that failed with no message to say so (a model call that raised, an agent's reply
    or a traced function that did): an error in sight, counted with the run's errors — the run's
    messages may never say it (a failed call prints none)."""
    # (no author: its words name the agent, and the card reads as an error, not as the agent's)
    return Event(ref, "error", "notice", blocks=[Notice(words)], meta=span)


_SPAN_WORDS = {"reply": "reply", "tool": "tool run", "span": "span"}


def _seconds_between(span: dict) -> str:
    start, end = span.get("start"), span.get("end")
    if isinstance(start, int) and isinstance(end, int) and start and end >= start:
        took = (end - start) / 1e9
        return f" in {took:.1f} s" if took < 100 else f" in {took:.0f} s"
    return ""


def _span_words(span: dict) -> str:
    """What a span that is not a model call says: who replied, which tool ran, what else ran, and
    for how long."""
    kind = span.get("kind")
    who = span.get("agent") if isinstance(span.get("agent"), str) else None
    failed = f" — failed: {span['error']}" if span.get("error") else ""
    if kind == "reply":
        return f"{who or 'an agent'} replied{_seconds_between(span)}{failed}"
    if kind == "tool":
        return f"tool {span.get('tool') or '?'} ran{_seconds_between(span)}" + (
            f" (call {span['call_id']})" if span.get("call_id") else "") + failed
    return f"{span.get('op') or span.get('name') or 'span'}{_seconds_between(span)}{failed}"


def _span(rec: dict, ref: Ref) -> Event:
    """A span traced for the run that is not a model call: an agent's reply (`invoke_agent`), a
    tool's run (`execute_tool`), anything else its tracing recorded. A compact card, hidden with
    the trace's other bookkeeping (its messages say what happened)."""
    span = {k: v for k, v in rec.items() if k != _CALL}
    who = span.get("agent") if isinstance(span.get("agent"), str) else None
    words = _span_words(span)
    if span.get("error"):
        return _failed(ref, "traced: " + words, span)
    ev = Event(ref, "system", "notice", author=who, blocks=[Notice("traced: " + words)], meta=span)
    # (no time of its own on the page: the trace's clock is UTC, the run's messages AgentScope's
    # zoneless local time, and one page does not mix the two)
    ev.hidden, ev.hidden_reason = True, "a span of the run's trace"
    return ev


def _request(rec: dict, ref: Ref) -> Event:
    """An agent's open request for input (Studio's input_request_table): what the run waits for."""
    req = {k: v for k, v in rec.items() if k != _REQUEST}
    who = req.get("agentName") if isinstance(req.get("agentName"), str) and req["agentName"] else None
    blocks: list = [Notice(f"{who or 'an agent'} waits for input")]
    if req.get("structuredInput") not in (None, "", {}, []):
        blocks.append(Data(req["structuredInput"], "asked for"))
    return Event(ref, "system", "input_request", author=who, blocks=blocks, meta=req)


def _speech(speech: Any) -> list:
    """The audio Studio keeps for a message (`speech`: AudioBlocks, its text-to-speech): a media
    block each, a data card for anything else."""
    items = speech if isinstance(speech, list) else [speech]
    out: list = []
    for b in items:
        if isinstance(b, dict) and b.get("type") == "audio":
            out.append(media_block(b, "audio"))
        else:
            out.append(Data(b, "speech"))
    return out


def session_info(main: Path) -> dict:
    """A run's status as Studio keeps it (running, pending, done, unknown: the list shows it); one
    marked `done` is finished: its page stops following it once it is quiet."""
    if not studio_db.is_row(str(main)):
        return {}
    try:
        row = orjson.loads(studio_db.row_bytes(str(main)))
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(row, dict):
        return {}
    status = row.get("status") if isinstance(row.get("status"), str) else ""
    return {"finished": True, "status": status} if status == "done" else {"status": status} if status else {}


def named_title(ev: Event) -> tuple[int, str] | None:
    """(rank, title) of the run row: its project and name, as Studio lists it."""
    if ev.kind != "session" or not isinstance(ev.meta, dict):
        return None
    name, project = ev.meta.get("name"), ev.meta.get("project")
    parts = [p.strip() for p in (project, name) if isinstance(p, str) and p.strip()]
    return (1, " · ".join(parts)) if parts else None


def title_of(ev: Event) -> str | None:
    return agentscope.title_of(ev)
