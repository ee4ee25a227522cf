"""legion backend sessions (claudecode_webui): `data/sessions/<id>/messages.jsonl` + `state.json`.

Three writer generations, mixed freely inside one file, are read record by record:

* G1, the backend's own records `{type, content, timestamp, metadata, session_id}`: `type` system /
  user / assistant / result / permission_request / permission_response (rarely unknown / error),
  tool calls, results and thinking in `metadata` (`tool_uses`, `tool_results`, `thinking_content`,
  `thinking_blocks`, `subtype`). Assistant text is the placeholder "Assistant response" when a turn
  has none, and result-only user lines say "Tool results: N results"; neither is shown as prose.
* G2, raw Agent SDK records `{_type: AssistantMessage | UserMessage | SystemMessage | ResultMessage |
  Task*Message | HookEventMessage | ToolCallUpdate | …, data}`, `data` being the SDK dataclass as a
  dict, with content blocks that usually have no `type` key (`{text}`, `{id, name, input}`, …).
  `ToolCallUpdate` snapshots a call's state (pending, running, completed, failed, denied, …).
  The same messages dumped flat, `{_type, **dataclasses.asdict(message)}` (other SDK wrappers), are
  read alike. A ResultMessage's `permission_denials` name the calls the permission callback refused
  (their results only echo what it said): they are shown denied. `api_retry` says why and which try.
* G3, one canonical shape `{type, message_id, content, turn_id, sdk_uuid, subtype, metadata}` with
  flat `type: "tool_call"` state records.

User and system records of old files carry ISO timestamps, everything else unix float seconds; both go
through `timestamps.parse`. The top-level `message_id` (a uuid4 per line since 2025) is the stable id;
`data.message_id` is the model's turn id and is only used to group lines of one turn.

`init` and `client_launched` system events are launch noise and hidden. `mcp__legion__send_comm` calls
are messages from this agent (minion) to another; comms received arrive as user lines carrying
`metadata.comm`, or in older files only the text prefix `**📋 Task from Minion #name:**`. Sub-agent
frames carry `parent_tool_use_id` and hang under the Task call that started them. An Agent call run
in the background (`run_in_background`) gets a result that only says it started (`tool_use_result`
`status: async_launched`, and a ToolCallUpdate "completed" with that text): it reads "running in the
background" until the SDK's `TaskNotificationMessage` naming its `tool_use_id` ends it (completed,
failed, killed…). An `init`'s model drops the CLI's context-window tag ("claude-opus-5[1m]"), so it
is the model the replies name. An interrupt mid-tool (legion's `interrupt` line, a ToolCallUpdate
`interrupted`, then the SDK's "The user doesn't want to proceed…" result, as a refusal gets) stays
interrupted, and its ResultMessage (`error_during_execution`, `terminal_reason: aborted_tools`)
reads "turn interrupted", not an error. (Shapes checked against the one public real recording, claudecode_webui
`backend/tests/fixtures/raw/2026-09-23-primary/`, Claude Code 2.1.259; not bundled: CC BY-NC-SA.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from .. import files, timestamps
from ..model import (
    AWAITING,
    BACKGROUND,
    CANCELLED,
    DENIED,
    INTERRUPTED,
    Data,
    Digest,
    Event,
    Notice,
    Ref,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from .common import DIGEST_TEXT, DIGEST_THOUGHT, anthropic_blocks, as_text, digest_block, digest_result, \
    generic_event, model_and_usage, result_content, retry_words, set_time, text_field
from .claude_code import launched

NAME = "legion"
MODE = "jsonl"

COMM_TOOLS = ("mcp__legion__send_comm", "mcp__legion__send_comm_to_channel")
_LAUNCH = {"init", "client_launched"}
_QUIET = {"status", "thinking_tokens", "hook_started", "hook_response", "task_progress", "stderr",
          "agent_notification", "task_updated", "background_tasks_changed"}
# fields only the SDK message itself has at its top level: a record holding one of them besides
# `_type` is the flat dump `{_type, **dataclasses.asdict(message)}` (no legion `data` wrapper; a
# SystemMessage's own `data` is its raw payload then)
_FLAT = ("content", "subtype", "rate_limit_info", "event")
_OWN_TYPES = {"system", "user", "assistant", "result", "permission_request", "permission_response",
              "tool_call", "tool_use", "tool_result", "thinking", "error", "unknown"}
_PLACEHOLDERS = {"Assistant response", "Conversation success"}
_PLACEHOLDER_LEN = max(map(len, _PLACEHOLDERS))
_INBOUND = re.compile(
    r"^\*\*(?P<emoji>\S+)\s+(?P<type>[\w ]+?) from Minion #(?P<sender>.+?)(?: in channel #\S+)?:\*\*")
_TERMINAL = {"completed": False, "failed": True, "denied": True, "interrupted": True, "error": True,
             "orphaned": True, "cancelled": True}
# legion's ToolState words that name more than the four states of the map
_NAMED = {"denied": DENIED, "interrupted": INTERRUPTED, "orphaned": INTERRUPTED,
          "cancelled": CANCELLED, "awaiting_permission": AWAITING, "permission_required": AWAITING}
# a task notification's status → the state of the call whose work it reports ended
_TASK_ENDS = {"completed": "completed", "failed": "failed", "killed": "interrupted",
              "stopped": "interrupted", "cancelled": "cancelled"}
# how the CLI's result for an Agent call run in the background begins (ToolCallUpdate `result`)
_ASYNC_LAUNCH = "Async agent launched successfully"
# system events after which legion itself takes every open call as interrupted (a restart)
_RESTARTS = {"client_launched", "interrupt"}
_ALLOW = {"allow", "allowed", "approve", "approved", "accept", "accepted", "granted"}
_DENY = {"deny", "denied", "reject", "rejected", "refuse", "refused"}


def _payload(rec: dict) -> Any:
    """An SDK record's message fields: legion's `data`, or the flat dump's own top level (also a
    record with no `data` at all: what it holds besides its class is what there is to show)."""
    if "data" in rec:
        for key in _FLAT:
            if key in rec:
                break
        else:
            return rec["data"]
    return {k: v for k, v in rec.items() if k != "_type"}


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict):
        return 0
    if isinstance(rec.get("_type"), str) and ("data" in rec or any(k in rec for k in _FLAT)):
        return 3
    t = text_field(rec, "type")
    if t in ("permission_request", "permission_response", "tool_call") and "session_id" in rec:
        return 3
    if t in _OWN_TYPES and "content" in rec and "message" not in rec and "uuid" not in rec and (
            "session_id" in rec or isinstance(rec.get("metadata"), dict)):
        md = rec.get("metadata")
        if isinstance(md, dict) and ({"tool_uses", "tool_results", "has_thinking", "has_tool_uses",
                                      "subtype", "processed_at"} & md.keys()):
            return 3
        return 2 if "session_id" in rec else 1
    return 0


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, dict):
        return generic_event(rec, ref, NAME)
    sdk = text_field(rec, "_type")
    t = text_field(rec, "type")
    if isinstance(sdk, str):
        ev = _sdk(sdk, _payload(rec), ref)
    elif t in ("system", "user", "assistant", "result", "error", "thinking", "tool_use",
               "tool_result", "unknown"):
        ev = _own(t, rec, ref)
    elif t == "tool_call":
        ev = _tool_state(rec, ref)
    elif t in ("permission_request", "permission_response"):
        ev = _permission(t, rec, _md(rec), ref)
    else:
        ev = generic_event(rec, ref, NAME)
    ev.format = NAME
    ev.meta = rec
    if ev.timestamp_raw is None:
        set_time(ev, rec.get("timestamp"))
    for key in ("message_id", "sdk_uuid", "uuid"):
        if isinstance(rec.get(key), str) and rec[key]:
            ev.source_id = rec[key]
            break
    for b in ev.blocks:
        if b.kind == "tool_use" and b.name in COMM_TOOLS and isinstance(b.input, dict):
            ev.recipient = b.input.get("to_minion_name") or b.input.get("channel_name") or ev.recipient
    _display_states(ev, rec.get("display"))
    return ev


_SENT_MARK = "<!-- sender_attachments: "
_SENT_FILES = re.compile(r"<!-- sender_attachments: (\[.*?\]) -->\s*\Z", re.S)


def _attached(blocks: list) -> list:
    """A comm sent with files: legion appends `<!-- sender_attachments: [{name, size, …}] -->` to
    the tool's text for its own UI; shown as a line naming the files, not as a raw comment."""
    out = []
    for b in blocks:
        # (found from the end: a search through every tool output for a comment at its end
        # cost the pass of a 100 MB session half a second)
        at = b.text.rfind(_SENT_MARK) if b.kind == "text" else -1
        m = _SENT_FILES.match(b.text, at) if at >= 0 else None
        if m is None:
            out.append(b)
            continue
        try:
            files = orjson.loads(m[1])
        except orjson.JSONDecodeError:
            out.append(b)
            continue
        names = [f.get("name") for f in files if isinstance(f, dict) and isinstance(f.get("name"), str)]
        rest = b.text[:m.start()].rstrip()  # (the white space before the comment is its)
        if rest.strip():
            out.append(Text(rest, b.markdown))
        out.append(Notice("attached: " + ", ".join(names) if names else "attachments", files))
    return out


def follow(ev: Event, carried: dict) -> None:
    """A ResultMessage's `total_cost_usd` is what the SDK's CLI process has cost so far, not the
    turn (the Claude Agent SDK's client keeps one process for every turn, and its result restates
    the running total: anthropics/claude-code#83239; 0.23, 0.43, 0.64… in the real recording; back
    to a small figure after a restart, whose `client_launched` line starts a new process): the
    turn's own cost is the rise since the last one, so that adding the turns up gives what the
    session cost. Each result's own cost is kept (`carried["turns"]`, by the line's offset) for its
    card (`recall`). A region read from the middle of a file (`carried["from_middle"]`) does not
    know the running total before its first result: that turn's own cost is not known, and counts
    nothing rather than the whole running total."""
    rec = ev.meta
    if ev.kind == "system:client_launched":
        carried["paid"] = 0.0  # a new process: its first running total is all its own
        return
    if ev.kind != "result" or rec.__class__ is not dict or rec.get("_type") != "ResultMessage":
        return
    usage = ev.usage
    total = usage.get("cost") if usage.__class__ is dict else None
    if total.__class__ not in (int, float):
        return
    before = carried.get("paid")
    carried["paid"] = total
    # a running total only ever rises (every turn is billed); a figure that does not is a turn's
    # own (hand-written files) or a new process's first
    if before.__class__ in (int, float) and total > before:
        own = round(total - before, 10)
        ev.usage = {**usage, "cost": own}
    elif before is None and carried.get("from_middle"):
        own = None  # (the turns before it lie before what was read)
        ev.usage = {k: v for k, v in usage.items() if k != "cost"}
        carried["needs_before"] = True  # (this region reads otherwise than the full index)
    else:
        own = total
    turns = carried.get("turns")
    if turns is None:
        turns = carried["turns"] = {}
    turns[str(ev.ref.offset)] = own


_UNKNOWN = object()


def recall(ev: Event, carried: dict) -> None:
    """A result card as the index read it: its own cost (what `follow` found) first, the process's
    running total the source wrote after it."""
    if ev.kind != "result":
        return
    turns = carried.get("turns")
    own = turns.get(str(ev.ref.offset), _UNKNOWN) if turns else _UNKNOWN
    first = ev.blocks[0] if ev.blocks else None
    if own is _UNKNOWN or not isinstance(first, Notice) or not isinstance(first.detail, dict):
        return
    ev.blocks[0] = Notice(_result_words(first.detail, own), first.detail)
    usage = ev.usage if isinstance(ev.usage, dict) else None
    if usage is not None:
        ev.usage = {**usage, "cost": own} if own is not None else \
            {k: v for k, v in usage.items() if k != "cost"}


def _configured(model: str) -> str:
    """The model an SDK `init` names, without the CLI's context-window tag ("claude-opus-5[1m]"
    for the 1M-token window): the model the replies name ("claude-opus-5"), not a second one."""
    return model[:model.index("[")] if model.endswith("]") and "[" in model[1:] else model


# --- the index pass's digest of the plain shapes (see model.Digest) -----------------------------



def digest(rec: Any) -> Digest | None:
    """What the index keeps of the common lines — an SDK assistant message or a message of tool
    results, the SDK's init and a turn's result, the backend's own assistant line, line of results
    or plain prompt — exactly what `event` would say of it; None for every other shape."""
    if rec.__class__ is not dict or "display" in rec:
        return None
    sdk = rec.get("_type")
    if sdk is not None:
        data = _payload(rec)
        if data.__class__ is not dict:
            return None
        if sdk == "AssistantMessage":
            d = _digest_sdk_assistant(data)
        elif sdk == "UserMessage":
            d = _digest_sdk_results(data)
        elif sdk == "SystemMessage" and data.get("subtype") == "init":
            inner = data.get("data")
            model = inner.get("model") if inner.__class__ is dict else None
            d = Digest("system", "system:init", None, None, True,
                       model=_configured(model) if model.__class__ is str else None)
        elif sdk == "ResultMessage" and not data.get("is_error") and not data.get("permission_denials") \
                and data.get("total_cost_usd") is None:  # (a cost: `follow` makes it the turn's)
            d = Digest("status", "result", None, None)
            model_and_usage(d, None, data.get("usage"))
        else:
            return None
        if d is not None and d.source_id is None:
            uuid = data.get("uuid")
            d.source_id = uuid if uuid.__class__ is str else None
    elif rec.get("type") in ("assistant", "user") and rec.get("subtype") is None:
        d = _digest_own(rec)
    else:
        return None
    if d is not None:
        # the first of message_id, sdk_uuid, uuid that is a non-empty string (unrolled: every line)
        sid = rec.get("message_id")
        if sid.__class__ is not str or not sid:
            sid = rec.get("sdk_uuid")
            if sid.__class__ is not str or not sid:
                sid = rec.get("uuid")
        if sid.__class__ is str and sid:
            d.source_id = sid
        raw = rec.get("timestamp")
        if raw.__class__ is str and raw[-1:] != "Z" and timestamps.zoneless(raw):
            return None  # (a time with no zone: its Event says so, SessionSummary.zoneless)
        d.ts = timestamps.fast_epoch(raw)
    return d


def _digest_sdk_assistant(data: dict) -> Digest | None:
    content = data.get("content")
    if data.get("error") or content.__class__ is not list or not content:
        return None
    blocks = []
    for b in content:
        if b.__class__ is not dict:
            return None
        t = b.get("type")
        if t is None:
            if "tool_use_id" in b:
                return None
            t = "thinking" if "thinking" in b else "tool_use" if (
                "name" in b and "input" in b and "id" in b) else "text" if "text" in b else None
        d = digest_block(b, t)
        if d is None:
            return None
        blocks.append(d)
    model, usage, mid = data.get("model"), data.get("usage"), data.get("message_id")
    return Digest("assistant", "message", None, None, False, blocks,
                  model if model.__class__ is str else None,
                  usage if usage.__class__ is dict else None,
                  mid if mid.__class__ is str else None)


def _digest_sdk_results(data: dict) -> Digest | None:
    content = data.get("content")
    if content.__class__ is not list or not content:
        return None
    launched = data.get("tool_use_result")
    if launched.__class__ is dict and launched.get("status") == "async_launched":
        return None  # (the Event says the call runs on in the background)
    blocks = []
    for b in content:
        if b.__class__ is not dict or not _plain_result(b):
            return None
        t = b.get("type")
        if not (t == "tool_result" or (t is None and "tool_use_id" in b)):
            return None
        blocks.append(digest_result(b))
    return Digest("tool", "tool_result", None, None, False, blocks)


def _plain_result(r: dict) -> bool:
    """A result that is no error (nor names one)."""
    out = r.get("content")
    return not r.get("is_error") and (out is None or out.__class__ is str or out.__class__ is list)


def _digest_own(rec: dict) -> Digest | None:
    md = rec.get("metadata")
    md = md if md.__class__ is dict else {}
    content = rec.get("content")
    if content.__class__ is not str or md.get("subtype") is not None:
        return None
    blocks = []
    thinking = md.get("thinking_blocks")
    if thinking.__class__ is list and thinking:
        for tb in thinking:
            text = tb.get("content") if tb.__class__ is dict else tb
            if text.__class__ is not str or not text or text.isspace():  # (not copying it stripped)
                return None
            blocks.append(DIGEST_THOUGHT)
    elif md.get("thinking_content") or md.get("has_thinking"):
        return None
    uses = md.get("tool_uses")
    uses = uses if uses.__class__ is list else []
    results = md.get("tool_results")
    results = results if results.__class__ is list else []
    # (what the Event asks, without hashing or stripping a long content: a line of results holds
    # megabytes there)
    placeholder = len(content) <= _PLACEHOLDER_LEN and content in _PLACEHOLDERS and (uses or blocks)
    if content and not content.isspace() and not placeholder and not (
            results and content.startswith("Tool results:")):
        blocks.append(DIGEST_TEXT)
    for u in uses:
        if u.__class__ is dict:
            blocks.append(ToolUse(str(u.get("id") or ""), str(u.get("name") or "?"), None,
                                  started=u.get("timestamp")))
        elif isinstance(u, dict):
            return None
    said = len(blocks)  # (blocks other than results: the thinking, the text, the calls)
    for r in results:
        if r.__class__ is dict:
            if not _plain_result(r):
                return None
            blocks.append(digest_result(r))
        elif isinstance(r, dict):
            return None
    role = "assistant" if rec.get("type") == "assistant" else "user"
    kind = "message"
    if results and not said:  # (every block a result)
        role, kind = "tool", "tool_result"
    if role == "user":
        # a prompt of plain words; a message from another agent, anything more: the Event says
        if len(blocks) != 1 or blocks[0] is not DIGEST_TEXT or "comm" in md or _INBOUND.match(content):
            return None
        blocks = [Text(content)]  # (the outline and the title read its words)
    elif not blocks:
        return None  # an empty line: the Event says
    model, usage = md.get("model"), md.get("usage")
    turn = rec.get("turn_id") or md.get("turn_id")
    return Digest(role, kind, None, None, False, blocks, model if model.__class__ is str else None,
                  usage if usage.__class__ is dict else None, turn if turn.__class__ is str else None)


def _display_states(ev: Event, display: Any) -> None:
    """`display.tool_states` (legion's projection on a message): the states it names on top of
    the map's own (awaiting permission, denied, interrupted) count; the lifecycle comes from the
    records themselves."""
    states = display.get("tool_states") if isinstance(display, dict) else None
    if not isinstance(states, dict):
        return
    for call, info in states.items():
        word = info.get("state") if isinstance(info, dict) else None
        if isinstance(word, str) and word.lower() in _NAMED and isinstance(call, str):
            ev.states.setdefault(call, word.lower())


def _md(rec: dict) -> dict:
    md = rec.get("metadata")
    return md if isinstance(md, dict) else {}


def _own(t: str, rec: dict, ref: Ref) -> Event:
    md = _md(rec)
    content = rec.get("content")
    sub = text_field(rec, "subtype") or text_field(md, "subtype") or ""
    if t == "system":
        return _system(sub, content, md, ref)
    if t == "result":
        ev = Event(ref, "error" if md.get("is_error") else "status", kind="result",
                   blocks=[Notice(_result_words(md), md or None)])
        if isinstance(content, str) and content.strip() and content not in _PLACEHOLDERS:
            ev.blocks.append(Text(content))
        return ev
    if t in ("error", "unknown"):
        ev = Event(ref, "error" if t == "error" else "system", kind=t,
                   blocks=[Text(as_text(content), markdown=False)])
        if md:
            ev.blocks.append(Data(md, "metadata"))
        return ev
    ev = Event(ref, "assistant" if t in ("assistant", "thinking", "tool_use") else "user")
    thinking = md.get("thinking_blocks")
    if isinstance(thinking, list) and thinking:
        for tb in thinking:
            ev.blocks.append(Thinking(as_text(tb.get("content") if isinstance(tb, dict) else tb)))
    elif md.get("thinking_content") or md.get("has_thinking"):
        ev.blocks.append(Thinking(as_text(md.get("thinking_content"))))
    uses = md.get("tool_uses") if isinstance(md.get("tool_uses"), list) else []
    results = md.get("tool_results") if isinstance(md.get("tool_results"), list) else []
    if isinstance(content, list):
        ev.blocks.extend(anthropic_blocks(content))
    elif isinstance(content, str):
        placeholder = content in _PLACEHOLDERS and (uses or ev.blocks)
        if content.strip() and not placeholder and not (results and content.startswith("Tool results:")):
            ev.blocks.append(Text(content))
    elif content is not None:
        ev.blocks.append(Data(content))
    for u in uses:
        if isinstance(u, dict):
            ev.blocks.append(ToolUse(str(u.get("id") or ""), str(u.get("name") or "?"),
                                     u.get("input"), started=u.get("timestamp")))
    for r in results:
        if isinstance(r, dict):
            err = r.get("is_error")
            ev.blocks.append(ToolResult(str(r.get("tool_use_id") or ""),
                                        result_content(r.get("content")),
                                        None if err is None else bool(err)))
    if results and all(b.kind == "tool_result" for b in ev.blocks):
        ev.role, ev.kind = "tool", "tool_result"
    if isinstance(md.get("model"), str):
        ev.model = md["model"]
    if isinstance(md.get("usage"), dict):
        ev.usage = md["usage"]
    turn = rec.get("turn_id") or md.get("turn_id")
    ev.message_id = turn if isinstance(turn, str) else None
    parent = md.get("parent_tool_use_id")
    if isinstance(parent, str) and parent:
        ev.parent = parent
    if ev.role == "user":
        _inbound_comm(ev, content, md)
    if sub == "local_command_response":
        ev.kind = "command_output"
    return ev


def _inbound_comm(ev: Event, content: Any, md: dict) -> None:
    comm = md.get("comm") if isinstance(md.get("comm"), dict) else None
    if comm:
        ev.kind = "comm"
        ev.author = comm.get("from_display_name") or comm.get("from_name") or "another minion"
        return
    if isinstance(content, str):
        m = _INBOUND.match(content)
        if m:
            ev.kind = "comm"
            ev.author = m["sender"]


def _system(sub: str, content: Any, md: dict, ref: Ref) -> Event:
    ev = Event(ref, "system", kind=f"system:{sub}" if sub else "system")
    text = as_text(content) if content is not None else ""
    ev.blocks = [Notice(text or sub.replace("_", " ") or "system event")]
    if md.get("error_details"):
        ev.blocks.append(Data(md["error_details"], "error details"))
    if sub in _RESTARTS:
        ev.states["*"] = "interrupted"  # calls left open when the agent restarts never finish
    if sub in _LAUNCH:
        ev.hidden, ev.hidden_reason = True, "launch event"
    elif sub in _QUIET:
        ev.hidden, ev.hidden_reason = True, "bookkeeping"
    elif sub == "session_failed":
        ev.role = "error"
    if isinstance(md.get("model"), str):
        ev.model = md["model"]
    task = md.get("tool_use_id")
    if sub == "task_started" and isinstance(task, str):
        ev.running.append(task)
    return ev


def _sdk(cls: str, data: Any, ref: Ref) -> Event:
    d = data if isinstance(data, dict) else {}
    if cls == "AssistantMessage":
        ev = Event(ref, "assistant", blocks=anthropic_blocks(d.get("content")))
        ev.model = d.get("model") if isinstance(d.get("model"), str) else None
        ev.usage = d.get("usage") if isinstance(d.get("usage"), dict) else None
        ev.message_id = d.get("message_id") if isinstance(d.get("message_id"), str) else None
        if d.get("error"):
            ev.role = "error"
            ev.blocks.insert(0, Notice(f"API error: {as_text(d['error'])}"))
    elif cls == "UserMessage":
        ev = Event(ref, "user", blocks=anthropic_blocks(d.get("content")))
        results = [b for b in ev.blocks if b.kind == "tool_result"]
        for r in results:
            r.content = _attached(r.content)
        if results and len(results) == len(ev.blocks):
            ev.role, ev.kind = "tool", "tool_result"
            if len(results) == 1 and d.get("tool_use_result") is not None:
                results[0].structured = structured = d["tool_use_result"]
                if isinstance(structured, dict) and structured.get("status") == "async_launched":
                    # an Agent call run in the background: it only started; a task notification
                    # names its end (`_task`)
                    results[0].content = [launched(structured, results[0].content)]
                    results[0].state = BACKGROUND
        elif any(b.kind == "text" and b.text.startswith("[Request interrupted") for b in ev.blocks):
            ev.kind = "interrupt"
    elif cls == "SystemMessage":
        sub = text_field(d, "subtype") or ""
        inner = d.get("data") if isinstance(d.get("data"), dict) else {}
        ev = _system(sub, None, {}, ref)
        if sub == "api_retry":  # the CLI retries a failed API call: say why and which attempt
            r = inner or d  # {attempt, max_retries, retry_delay_ms, error_status, error}
            ev.blocks = [Notice(retry_words(r.get("error_status"), r.get("error"), r.get("attempt"),
                                            r.get("max_retries"), r.get("retry_delay_ms")))]
        if sub == "status" and isinstance(inner.get("permissionMode"), str):
            # the user switched the permission mode (the CLI says so in a status message)
            ev.blocks = [Notice(f"permission mode: {inner['permissionMode']}")]
        elif sub == "status" and isinstance(inner.get("status"), str):
            ev.blocks = [Notice(f"status: {inner['status']}")]
        if sub == "init":
            tools = inner.get("tools")
            ev.model = _configured(inner["model"]) if isinstance(inner.get("model"), str) else None
            ev.blocks = [Notice(f"session initialised: {len(tools)} tools" if isinstance(tools, list)
                                else "session initialised")]
        ev.blocks.append(Data(inner or d, sub or "system"))
    elif cls == "ResultMessage":
        # a turn the user stopped ends "error_during_execution" with `terminal_reason:
        # aborted_tools` (or aborted_streaming): an interruption, not a failure
        stopped = str(d.get("terminal_reason") or "").startswith("aborted")
        ev = Event(ref, "error" if d.get("is_error") and not stopped else "status", kind="result",
                   blocks=[Notice(_result_words(d), d)])
        if stopped:
            ev.state = INTERRUPTED
        # the turn's totals: counted only where the calls themselves recorded no usage
        model_and_usage(ev, None, d.get("usage"), d.get("total_cost_usd"))
        if isinstance(d.get("result"), str) and d["result"].strip():
            ev.blocks.append(Text(d["result"]))
        # calls the permission callback refused (their results only say what the callback said)
        for denial in d.get("permission_denials") if isinstance(d.get("permission_denials"), list) else ():
            if isinstance(denial, dict) and isinstance(denial.get("tool_use_id"), str):
                ev.states[denial["tool_use_id"]] = "denied"
    elif cls == "ToolCallUpdate":
        ev = _tool_state(d, ref)
    elif cls in ("PermissionRequestMessage", "PermissionResponseMessage"):
        ev = _permission("permission_request" if "Request" in cls else "permission_response", d, d, ref)
    elif cls.startswith("Task") and cls.endswith("Message"):
        ev = _task(cls, d, ref)
    elif cls == "RateLimitEvent":
        ev = _rate_limit(d, ref)
    elif cls == "StreamEvent":
        ev = Event(ref, "system", kind="stream", hidden=True, hidden_reason="stream event",
                   blocks=[Data(d, "stream event")])
    else:
        # a class this reader does not know: its name heads the card (the kind), once; its fields
        # are the card, open when short, as any record no adapter knows
        ev = Event(ref, "system", kind=cls, blocks=[Data(data if data is not None else {}, "unknown")])
        if cls == "HookEventMessage":
            ev.hidden, ev.hidden_reason = True, "bookkeeping"
    parent = d.get("parent_tool_use_id")
    if isinstance(parent, str) and parent and cls != "ToolCallUpdate":
        ev.parent = parent
    if isinstance(d.get("uuid"), str) and ev.source_id is None:
        ev.source_id = d["uuid"]
    return ev


def _rate_limit(d: dict, ref: Ref) -> Event:
    """The SDK's RateLimitEvent `{rate_limit_info: {status, resets_at, rate_limit_type,
    utilization, …}}` (claude-agent-sdk-python types.py): a warning or a refusal is shown, an
    "allowed" status change is bookkeeping."""
    info = d.get("rate_limit_info") if isinstance(d.get("rate_limit_info"), dict) else {}
    status = str(info.get("status") or "changed")
    words = f"rate limit {status.replace('_', ' ')}"
    if isinstance(info.get("rate_limit_type"), str):
        words += f" ({info['rate_limit_type'].replace('_', ' ')})"
    use = info.get("utilization")
    if isinstance(use, (int, float)) and not isinstance(use, bool):
        words += f" · {use:.0%} used"
    resets = info.get("resets_at")
    if isinstance(resets, (int, float)) and not isinstance(resets, bool):
        when = timestamps.parse(resets).utc
        if when is not None:
            words += f" · resets {when:%Y-%m-%d %H:%M} UTC"
    ev = Event(ref, "error" if status == "rejected" else "system", kind="rate_limit",
               blocks=[Notice(words, d)])
    if status == "allowed":
        ev.hidden, ev.hidden_reason = True, "bookkeeping"
    return ev


def _task(cls: str, d: dict, ref: Ref) -> Event:
    """Background tasks and sub-agents: started / progress / notification, linked by tool_use_id."""
    words = {"TaskStartedMessage": "task started", "TaskProgressMessage": "task progress",
             "TaskNotificationMessage": "task", "TaskUpdatedMessage": "task updated"}.get(cls, cls)
    status = d.get("status")
    desc = d.get("description") or d.get("summary") or d.get("task_id") or ""
    text = f"{words}{' ' + str(status) if status else ''}: {desc}" if desc else words
    ev = Event(ref, "system", kind=f"task:{cls}", blocks=[Notice(text, d)])
    if cls in ("TaskProgressMessage", "TaskUpdatedMessage"):
        ev.hidden, ev.hidden_reason = True, "progress"
    call = d.get("tool_use_id")
    if isinstance(call, str) and cls in ("TaskStartedMessage", "TaskProgressMessage"):
        ev.running.append(call)
    elif isinstance(call, str) and call and cls == "TaskNotificationMessage" \
            and (ended := _TASK_ENDS.get(str(status).lower())):
        ev.states[call] = ended  # a background agent's (or command's) work ended here
    return ev


def _tool_state(d: dict, ref: Ref) -> Event:
    """A ToolCallUpdate (G2) or flat tool_call record (G3): a snapshot of one call's state.

    A record that carries the tool's output (`result`, or the `error` of a failed call) is the
    call's result. A state the source names (awaiting permission, denied, interrupted) is reported
    as that state: the result, if any, is the SDK's own tool_result (the refusal the model saw,
    with the user's reason), and a call interrupted mid-run may never get one."""
    call = str(d.get("tool_use_id") or "")
    status = str(d.get("status") or "")
    word = status.lower()
    ev = Event(ref, "tool", kind="tool_state", hidden=True, hidden_reason="tool state",
               blocks=[Notice(f"{d.get('name') or 'tool'} {status.replace('_', ' ')}".strip())])
    if word in ("running", "executing"):
        ev.running.append(call)
    elif word in _TERMINAL and word not in _NAMED and ("result" in d or _TERMINAL[word]):
        payload = d.get("error") if d.get("error") is not None else d.get("result")
        content = _attached(result_content(payload)) or [Notice(word)]
        result = ToolResult(call, content, _TERMINAL[word])
        if word == "completed" and isinstance(payload, str) and payload.startswith(_ASYNC_LAUNCH):
            result.state = BACKGROUND  # legion says "completed": the agent only started
        ev.blocks.append(result)
    elif word and call:
        ev.states[call] = word  # pending, awaiting permission, denied, interrupted…
        if d.get("error") is not None:
            ev.blocks.append(Text(as_text(d["error"]), markdown=False))
    parent = d.get("parent_tool_use_id")
    if isinstance(parent, str) and parent:
        ev.parent = parent
    return ev


def _result_words(d: dict, own: Any = _UNKNOWN) -> str:
    """The turn's end: how it ended, its turns and time, and its cost — its own, when the index
    knows it (`own`; None: not known), and the running total the source wrote."""
    stopped = str(d.get("terminal_reason") or "").startswith("aborted")
    parts = ["turn interrupted" if stopped else f"turn {d.get('subtype') or 'finished'}".replace("_", " ")]
    if isinstance(d.get("num_turns"), int):
        parts.append(f"{d['num_turns']} turn{'s' if d['num_turns'] != 1 else ''}")
    if isinstance(d.get("duration_ms"), (int, float)):
        parts.append(f"{d['duration_ms'] / 1000:.1f}s")
    total = d.get("total_cost_usd")
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        if own is _UNKNOWN or own == total:
            parts.append(f"${total:.4f}")
        elif own is None:
            parts.append(f"${total:.4f} so far this process (this turn's share not known: the turns "
                         "before it were not read)")
        else:
            parts.append(f"${own:.4f} this turn (${total:.4f} so far this process)")
    return " · ".join(parts)


def _permission(t: str, rec: dict, md: dict, ref: Ref) -> Event:
    """A permission request or the user's answer. They name the tool and a request id, not the
    call: the state map finds the call (`Event.permission`)."""
    tool = md.get("tool_name") or "a tool"
    about = {"tool": text_field(md, "tool_name"), "request": text_field(md, "request_id"),
             "call": text_field(md, "tool_use_id"), "decision": None}
    if t == "permission_request":
        ev = Event(ref, "system", kind="permission", blocks=[Notice(f"permission requested for {tool}")])
        if md.get("input_params") is not None:
            ev.blocks.append(Data(md["input_params"], "input"))
        ev.permission = about
        return ev
    decision = md.get("behavior") or md.get("decision") or "answered"
    word = str(decision).lower()
    said = "denied" if word in _DENY else "granted" if word in _ALLOW else decision
    words = f"permission {said}" + (f" for {tool}" if md.get("tool_name") else "")
    reason = md.get("reasoning") or md.get("message") or md.get("clarification_message")
    if reason:
        words += f": {as_text(reason)}"
    ev = Event(ref, "system", kind="permission", blocks=[Notice(words)])
    if word in _ALLOW or word in _DENY:
        ev.permission = {**about, "decision": "deny" if word in _DENY else "allow"}
    return ev


def title_of(ev: Event) -> str | None:
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return ev.text() or None
    return None


STATE_LIMIT = 8 << 20  # a state.json is a few kilobytes; more is not one


def sidecars(main: Path) -> list[Path]:
    """The file `session_info` reads: the index reads it again when it changes (legion rewrites it
    when the minion's state moves, the transcript untouched: a session ends that way)."""
    return [main.parent / "state.json"]


def session_info(main: Path) -> dict:
    """state.json beside messages.jsonl: the minion's name, and whether it is still working."""
    try:
        data = orjson.loads(files.read_file(main.parent / "state.json", STATE_LIMIT))
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    state = data.get("state")
    return {  # a name that is not text (a list, a number) names no one: it keys chips and lanes
        "agent": text_field(data, "name") or text_field(data, "slug"),
        "finished": state in ("terminated", "error", "paused") or data.get("is_processing") is False,
    }
