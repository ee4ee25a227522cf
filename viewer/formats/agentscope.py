"""AgentScope: `Msg` objects of the Python library (0.x, 1.x, 2.x) and of agentscope-java.

A `Msg` is `{id, name, role, content, metadata, timestamp}`: `name` is the sender (an agent, "user",
or "system" for tool results), `content` a string or a list of typed blocks. The shapes met on disk:

* Python 1.x (the line the corpus comes from): `Msg.to_dict()`; blocks are TypedDicts — text,
  thinking, tool_use `{id, name, input, raw_input?}`, tool_result `{id, name, output: str | [text |
  image | audio | video]}`, image / audio / video `{source: {type: url, url} | {type: base64,
  media_type, data}}`. The ReAct agent records tool results as their own Msg, `name` and `role`
  "system". 1.x writes no error flag on results: the toolkit's own failure texts ("Error: …",
  "FunctionNotFoundError: …", the interrupted / cancelled `<system-info>`) are read as errors.
  `timestamp` is local time without a zone ("2026-01-26 17:30:12.811"), read as UTC and flagged so.
* Sessions: `JSONSession.save_session_state(id, **modules)` writes `{module: state_dict}` — an agent's
  state is `{memory: {content, _compressed_summary?}, toolkit, name, _sys_prompt}`. `memory.content`
  is a list of `[msg, marks]` pairs since 1.0.x (marks like "hint", "compressed"); 1.0.0 kept bare
  Msgs. A session may hold several agents, each with its own memory.
* Python 2.x: pydantic `Msg` with `created_at`, `finished_at`, `usage`, `finished_reason`, `error`,
  `structured_output`; blocks carry ids and times; `tool_call` (JSON-string `input`, call `state`),
  `tool_result` (`state` success / error / interrupted / denied / running) — both usually inside the
  agent's one reply Msg — `data` (media), `hint`. An `AgentState` (`{session_id, summary, context:
  [Msg], …}`) is what its app stores per agent.
* Java (agentscope-java, Jackson): upper-case roles USER / ASSISTANT / SYSTEM / TOOL / CONTROL,
  `name` may be null, blocks typed by `type`; tool_use `{id, name, title, input, content (raw
  streamed arguments), metadata, state}`, tool_result `{id, name, output, metadata, state,
  suspended}` (older: `pending`), media `source: {type: url, url} | {type: base64, media_type,
  data}`; usage and the generate reason in `metadata` (`_chat_usage`, `agentscope_generate_reason`).
  Its session store writes `<sessions>/<id>/memory_messages.jsonl`, one Msg per line, and 2.x an
  `agent_state.json` with `context`.

Mapping: every Msg is one event with `author` = `name` (this drives agent colours and lanes); tool
result Msgs (system / TOOL holding only results) become role "tool", kind "tool_result", with no
author. A user Msg sent under the name of one of the document's agents (the A2UI example writes its
user's input as `name: "Friday"`, its agent's name; a real UserAgent writes its own) is shown as the
user's. A 2.x hint's `source` is a name or a JSON string `{label, sublabel}`, shown in words. For
documents, `records` finds every message list wherever it sits (keeping each Msg's JSON path), puts
each agent's system prompt and compressed summary first, and merges several agents' memories by
time. A message broadcast to several agents sits in each memory with the same id: the
copy in its author's own memory (else the first) is shown, the others are hidden as copies.
Kept only in the raw view: block ids and times, `suggested_rules`, Java `title` / `executionDetails`,
the agent state's toolkit / permission / task contexts.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import re
from typing import Any

import orjson

from .. import timestamps
from ..model import CANCELLED, DENIED, INTERRUPTED, Data, Event, Media, Notice, Ref, Text, \
    Thinking, ToolResult, ToolUse
from .common import as_text, context_blocks, generic_event, media_block, parse_arguments, set_time, \
    text_field

NAME = "agentscope"
# every time AgentScope writes is the machine's local time with no zone (`timestamp` "2026-01-26
# 17:30:12.811", 2.x `created_at` "2026-03-04T14:00:06"): shown as written, and, all of a
# session's times being so, its header says once that the zone is unknown (SessionSummary.zoneless)
MODE = "jsonl"  # JSONL of Msgs, or a JSON document (a list, a session / agent state) via `records`

_JAVA_ROLES = {"USER", "ASSISTANT", "SYSTEM", "TOOL", "CONTROL"}
# a Msg's fields as AgentScope 0.x–2.x and Java write them: the others of a Msg whose role is none of
# _JAVA_ROLES (a newer writer's) are shown with it, as what the reader does not know
_MSG_KEYS = {"id", "name", "role", "content", "metadata", "timestamp", "created_at", "url", "echo",
             "invocation_id"}
_V2_KEYS = {"finished_at", "finished_reason", "structured_output", "usage", "error"}
_FOREIGN = {"message_id", "parts", "type", "uuid", "_type", "is_llm_message", "thread_id", "message"}
_OWN_BLOCKS = {"tool_call", "data", "hint"}
_LOCAL_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$")
_ERROR_STATES = {"error", "failed", "interrupted", "denied"}
# what the 1.x toolkit writes when a call fails (it has no error flag); Java's error results too
_TOOLKIT_ERRORS = ("Error: ", "Error occurred when calling MCP tool: ", "Error during async execution: ",
                   "FunctionNotFoundError: ", "FunctionInactiveError: ", "[ERROR] ")
_INTERRUPTED = ("<system-info>The tool call has been interrupted",
                "<system-info>The tool call has been cancelled")
_NAMED = {"interrupted": INTERRUPTED, "denied": DENIED, "cancelled": CANCELLED}
# 2.x ToolCallState (agentscope src/agentscope/message/_block.py): `asking` waits for the user's
# permission, which the map shows as its own named state
_CALL_STATUS = {"pending": "pending", "asking": "asking", "allowed": "pending",
                "submitted": "running", "parse_failed": "failed"}
_MAX_DEPTH = 8
# 2.x ReplyFinishedReason (agentscope src/agentscope/types: completed / interrupted / error, and
# this one), in words
_FINISHED = {"exceed_max_iters": "reply stopped: the agent reached its maximum number of iterations"}


class _Copy(dict):
    """A record plus what only the rest of the document says about it; serialises as the plain
    record, so the raw view shows the source unchanged. `primary`: the JSON path of the copy shown
    when this Msg's id already appeared in another agent's memory; `by_user`: a user Msg written
    under an agent's own name (the A2UI example records its user's input as `name: "Friday"`)."""

    __slots__ = ("primary", "by_user")


class _CopyPair(list):
    __slots__ = ("primary", "by_user")


# --- recognising records ----------------------------------------------------------------------


def _msg(rec: Any) -> dict | None:
    """The Msg in a record (a Msg dict, or a memory's `[msg, marks]` pair), or None."""
    if isinstance(rec, list) and len(rec) == 2 and isinstance(rec[1], list) \
            and all(isinstance(m, str) for m in rec[1]):
        rec = rec[0]
    if not isinstance(rec, dict) or not isinstance(rec.get("role"), str) or "content" not in rec:
        return None
    if _FOREIGN & rec.keys():
        return None
    if "name" not in rec and rec["role"] not in _JAVA_ROLES:
        return None
    return rec


def sniff(rec: Any) -> int:
    if isinstance(rec, dict) and len(rec) <= 2 and (
            "_sys_prompt" in rec or "_compressed_summary" in rec):
        return 2  # only `records` makes these
    m = _msg(rec)
    if m is None:
        return 0
    if m is not rec:
        return 3  # a memory's [msg, marks] pair
    keys = m.keys()
    if m["role"] in _JAVA_ROLES and isinstance(m.get("content"), list):
        return 3
    if str(m.get("__module__", "")).startswith("agentscope"):
        return 3
    if "created_at" in keys and _V2_KEYS & keys:
        return 3
    if _specific_blocks(m.get("content")):
        return 3
    ts = m.get("timestamp")
    if "id" in keys and isinstance(ts, str) and _LOCAL_TIME.match(ts):
        return 3
    if "id" in keys or "timestamp" in keys or "created_at" in keys:
        return 2
    return 0


def _specific_blocks(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    for b in content[:50]:
        if not isinstance(b, dict):
            continue
        t = text_field(b, "type")
        if t in _OWN_BLOCKS or (t == "tool_result" and "output" in b) or (
                t == "tool_use" and "raw_input" in b):
            return True
    return False


# --- documents --------------------------------------------------------------------------------


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """Every message list in a document (a bare list, a JSONSession file with one or several agents,
    an InMemoryMemory / AgentState dump), with each agent's system prompt and summary first and
    several memories merged by time."""
    if isinstance(doc, list):
        if not any(sniff(r) >= 2 for r in doc[:50]):
            return None
        return [(f"[{i}]", r) for i, r in enumerate(doc)]
    if not isinstance(doc, dict):
        return None
    sources: list[tuple[str, list, str | None]] = []  # (path, list, owning agent's name)
    extras: list[tuple[str, Any]] = []
    _walk(doc, "", 0, None, sources, extras)
    if not sources:
        return None
    if len(sources) == 1:
        path, items, _ = sources[0]
        return extras + _by_user(sources, [(f"{path}[{i}]", r) for i, r in enumerate(items)])
    return extras + _by_user(sources, _merge(sources))


def _by_user(sources: list, found: list) -> list:
    """Marks the user Msgs sent under the name of one of the document's agents (an agent state's
    owner, or a name that speaks as assistant): their speaker is the user, not that agent."""
    agents = {owner for _, _, owner in sources if owner}
    agents |= {m["name"] for _, items, _ in sources for m in map(_msg, items)
               if m is not None and m["role"] == "assistant" and isinstance(m.get("name"), str)}
    out = []
    for path, rec in found:
        m = _msg(rec)
        if m is not None and m["role"] == "user" and isinstance(m.get("name"), str) and m["name"] in agents:
            if not isinstance(rec, (_Copy, _CopyPair)):
                rec = _CopyPair(rec) if isinstance(rec, list) else _Copy(rec)
                rec.primary = None
            rec.by_user = True
        out.append((path, rec))
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_list_of_msgs(value: list) -> bool:
    return any(sniff(r) >= 2 for r in value[:50])


def _walk(node: Any, path: str, depth: int, owner: str | None, sources: list, extras: list) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, dict):
        if _msg(node) is not None:
            return
        if isinstance(node.get("name"), str) and ("memory" in node or "_sys_prompt" in node):
            owner = node["name"]
        prompt = node.get("_sys_prompt")
        if isinstance(prompt, str) and prompt.strip():
            extras.append((_join(path, "_sys_prompt"), {"name": node.get("name"), "_sys_prompt": prompt}))
        summary = node.get("_compressed_summary")
        if isinstance(summary, str) and summary.strip():
            extras.append((_join(path, "_compressed_summary"), {"_compressed_summary": summary}))
        for key, value in node.items():
            if isinstance(value, list) and value and _is_list_of_msgs(value):
                sources.append((_join(path, str(key)), value, owner))
                summary = node.get("summary")  # an AgentState's compressed context
                if key == "context" and summary and isinstance(summary, (str, list)):
                    extras.append((_join(path, "summary"), {"summary": summary}))
            elif isinstance(value, (dict, list)):
                _walk(value, _join(path, str(key)), depth + 1, owner, sources, extras)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if isinstance(value, (dict, list)):
                _walk(value, f"{path}[{i}]", depth + 1, owner, sources, extras)


def _merge(sources: list) -> list[tuple[str, Any]]:
    """Several agents' memories as one timeline: each list keeps its order, heads are taken by time
    (a Msg without a readable time keeps its predecessor's). Repeated ids become hidden copies."""
    keyed = []  # per source: [time, path, record, is the copy to show]
    seen: dict[str, list] = {}  # msg id → its rows
    for path, items, owner in sources:
        rows, last = [], float("-inf")
        for i, rec in enumerate(items):
            m = _msg(rec) or {}
            when = m.get("timestamp") or m.get("created_at")
            t = timestamps.to_epoch(when) if isinstance(when, str) else None
            last = t if t is not None else last
            row = [last, f"{path}[{i}]", rec, True]
            rows.append(row)
            if isinstance(m.get("id"), str):
                content = m.get("content")
                rank = (owner is not None and owner == m.get("name"),
                        len(content) if isinstance(content, list) else 1)
                seen.setdefault(m["id"], []).append((rank, row))
        keyed.append(rows)
    # the copy to show: the one in its author's own memory, else the fullest, else the first
    for copies in seen.values():
        if len(copies) > 1:
            best = max(range(len(copies)), key=lambda n: (copies[n][0], -n))
            for n, (_, row) in enumerate(copies):
                if n != best:
                    rec = row[2]
                    copy = _CopyPair(rec) if isinstance(rec, list) else _Copy(rec)
                    copy.primary = copies[best][1][1]
                    row[2], row[3] = copy, False
    merged, heads = [], [0] * len(keyed)
    while True:  # earliest head first; on equal times the copy to show goes first (it gets the id)
        best = None
        for s, rows in enumerate(keyed):
            if heads[s] < len(rows):
                t, _, _, shown = rows[heads[s]]
                if best is None or (t, not shown) < best[0]:
                    best = ((t, not shown), s)
        if best is None:
            break
        s = best[1]
        merged.append((keyed[s][heads[s]][1], keyed[s][heads[s]][2]))
        heads[s] += 1
    return merged


# --- events -----------------------------------------------------------------------------------


def event(rec: Any, ref: Ref) -> Event:
    try:
        ev = _event(rec, ref)
    except Exception:  # format drift must never break a session
        ev = generic_event(rec, ref, NAME)
    ev.format = NAME
    return ev


def _event(rec: Any, ref: Ref) -> Event:
    if isinstance(rec, dict) and "_sys_prompt" in rec:
        name = rec.get("name") if isinstance(rec.get("name"), str) else None
        # a prompt written as an indented triple-quoted string in the agent's code: Markdown once
        # the code's indentation is off (else every line reads as an indented code block); the
        # card's raw view keeps it as written
        return Event(ref, "system", kind="system_prompt", author=name,
                     blocks=[Text(inspect.cleandoc(as_text(rec["_sys_prompt"])))])
    if isinstance(rec, dict) and len(rec) == 1 and ("_compressed_summary" in rec or "summary" in rec):
        value = rec.get("_compressed_summary", rec.get("summary"))
        return Event(ref, "system", kind="summary",
                     blocks=[Notice("summary of earlier, compressed messages"), *_blocks(value, None)])
    m = _msg(rec)
    if m is None:
        return generic_event(rec, ref, NAME)
    marks = rec[1] if isinstance(rec, list) else []
    role = m["role"].lower()  # Java writes USER / ASSISTANT / SYSTEM / TOOL / CONTROL
    ev = Event(ref, role)
    ev.blocks = _blocks(m.get("content"), ev)
    name = m.get("name") if isinstance(m.get("name"), str) and m.get("name") else None
    content = m.get("content")
    if isinstance(content, list) and content and all(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        ev.role, ev.kind = "tool", "tool_result"  # the system / TOOL Msg a ReAct agent records
    elif role == "control":
        ev.role, ev.kind = "status", "control"
    if ev.kind != "tool_result" and not (role == "system" and name in (None, "system")) \
            and not getattr(rec, "by_user", False):
        ev.author = name
    if isinstance(m.get("id"), (str, int)) and not isinstance(m.get("id"), bool):
        ev.source_id = str(m["id"])
    set_time(ev, m.get("timestamp") if m.get("timestamp") is not None else m.get("created_at"))
    _metadata(ev, m)
    if role.upper() not in _JAVA_ROLES:
        more = {k: v for k, v in m.items() if k not in _MSG_KEYS and k not in _V2_KEYS}
        if more:
            ev.blocks.append(Data(more, f"fields of a {role} message"))
    if marks:
        if "hint" in marks and ev.kind == "message":
            ev.kind = "hint"
        ev.blocks.insert(0, Notice(f"memory marks: {', '.join(marks)}"))
    primary = getattr(rec, "primary", None)
    if primary:
        ev.hidden, ev.hidden_reason = True, "copy in another agent's memory"
    ev.meta = {k: v for k, v in m.items() if k != "content"}
    if marks:
        ev.meta["marks"] = marks
    if primary:
        ev.meta["shown_at"] = primary
    return ev


def _metadata(ev: Event, m: dict) -> None:
    md = m.get("metadata")
    if isinstance(md, dict):
        md = dict(md)
        usage = md.pop("_chat_usage", None)
        if isinstance(usage, dict):
            ev.usage = usage
        if md.pop("_is_interrupted", None) is True:
            ev.state = INTERRUPTED  # the reply handle_interrupt wrote when the user stopped it
        reason = md.pop("agentscope_generate_reason", None)
        if reason and str(reason) != "MODEL_STOP":
            ev.blocks.append(Notice(f"generate reason: {str(reason).lower().replace('_', ' ')}"))
        if md:
            ev.blocks.append(Data(md, "metadata"))
    elif md not in (None, "", [], {}):
        ev.blocks.append(Data(md, "metadata"))
    if isinstance(m.get("usage"), dict):
        ev.usage = m["usage"]
    reason = m.get("generate_reason")
    if reason and str(reason) not in ("normal_reply", "None"):
        ev.blocks.append(Notice(f"generate reason: {str(reason).replace('_', ' ')}"))
    reason = m.get("finished_reason")
    err = m.get("error")
    if str(reason).lower() in _NAMED:
        ev.state = _NAMED[str(reason).lower()]  # shown as the reply's badge
    elif reason and reason != "completed" and not (reason == "error" and err):
        ev.blocks.append(Notice(_FINISHED.get(str(reason)) or f"reply {str(reason).replace('_', ' ')}"))
    if err:
        if isinstance(err, dict):
            words = f"error ({err.get('type', 'unknown')}): {as_text(err.get('message'))}"
        else:
            words = f"error: {as_text(err)}"
        ev.blocks.append(Notice(words, err))
        ev.role = "error"
    if m.get("structured_output") is not None:
        ev.blocks.append(Data(m["structured_output"], "structured output"))


def _blocks(content: Any, ev: Event | None) -> list:
    """A Msg's content (a string or typed blocks) → canonical blocks. Fills `ev.running` for results
    the source still reports as running or awaiting external execution."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content.strip() else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [Data(content)]
    out: list = []
    ends: dict[str, Any] = {}  # call id → the result's end time, when call and result share a Msg
    for b in content:
        if isinstance(b, str):
            out.append(Text(b))
        elif not isinstance(b, dict):
            out.append(Data(b))
        else:
            out.extend(_block(b, ev, ends))
    for b in out:
        if b.kind == "tool_use" and b.id in ends and b.started is not None:
            b.ended = ends[b.id]
        elif b.kind == "tool_use":
            b.started = None
    return out


def _block(b: dict, ev: Event | None, ends: dict) -> list:
    t = b.get("type")
    if t == "text":
        return [Text(as_text(b.get("text")))]
    if t == "thinking":
        text = b.get("thinking") if isinstance(b.get("thinking"), str) else ""
        md = b.get("metadata") if isinstance(b.get("metadata"), dict) else {}
        sig = b.get("signature") or md.get("thoughtSignature")
        redacted = not text and bool(b.get("redacted_thinking_data") or b.get("data"))
        return [Thinking(text, redacted, sig if isinstance(sig, str) else None)]
    if t in ("tool_use", "tool_call"):
        return [_tool_use(b)]
    if t == "tool_result":
        return _tool_result(b, ev, ends)
    if t in ("image", "audio", "video"):
        return [media_block(b, t)]
    if t == "file":
        return [media_block(b, "document")]
    if t == "data":
        return [_data_block(b)]
    if t == "hint":
        source = _hint_source(b.get("source"))
        words = f"hint from {source}" if source else "hint"
        hint = b.get("hint")
        # 2.x's runtime-state hints wrap what they inject in <system-reminder>: a context chip
        body = context_blocks(hint) if isinstance(hint, str) else _blocks(hint, None)
        return [Notice(words), *body]
    return [Data(b, str(t))]


def _hint_source(source: Any) -> str | None:
    """Who a hint is from: a display name, or (2.x runtime-state hints) a JSON object
    `{"label": "System", "sublabel": "Runtime State"}`, shown as "System · Runtime State"."""
    if not isinstance(source, str) or not source.strip():
        return None
    if source.lstrip().startswith("{"):
        try:
            value = orjson.loads(source)
        except orjson.JSONDecodeError:
            return source
        if isinstance(value, dict) and isinstance(value.get("label"), str):
            return " · ".join(str(value[k]) for k in ("label", "sublabel")
                              if isinstance(value.get(k), str) and value[k])
    return source


def _tool_use(b: dict) -> ToolUse:
    call_id = str(b.get("id") or "")
    name = str(b.get("name") or "?")
    value = b.get("input")
    raw = b.get("raw_input") if isinstance(b.get("raw_input"), str) else None
    if raw is None and isinstance(b.get("content"), str):  # Java: the raw streamed arguments
        raw = b["content"]
    input_raw = None
    if isinstance(value, str):  # 2.x tool_call: the arguments as a JSON string
        value, input_raw = parse_arguments(value)
    elif raw and not value:
        value, input_raw = parse_arguments(raw)
    elif raw:
        _, input_raw = parse_arguments(raw)
    state = str(b.get("state") or "").lower()
    use = ToolUse(call_id, name, value if value is not None else {}, input_raw,
                  status=_CALL_STATUS.get(state))
    if b.get("type") == "tool_call":
        use.started = b.get("created_at")  # kept only if the result in the same Msg has an end time
    return use


def _tool_result(b: dict, ev: Event | None, ends: dict) -> list:
    call_id = str(b.get("id") or b.get("toolUseId") or b.get("tool_use_id") or "")
    output = b.get("output", b.get("content"))
    blocks = _output(output)
    state = str(b.get("state") or "").lower()
    md = b.get("metadata") if isinstance(b.get("metadata"), dict) else {}
    waiting = b.get("suspended") is True or b.get("pending") is True or md.get(
        "agentscope_suspended") is True or md.get("agentscope_pending") is True
    if state == "running" or waiting:
        if ev is not None and call_id:
            ev.running.append(call_id)
        words = "awaiting external execution" if waiting else "still running"
        return [Notice(f"{b.get('name') or 'tool'} {words}", b.get("id")), *blocks]
    named = _NAMED.get(state) or _stopped(output)
    if isinstance(b.get("is_error"), bool):
        err = b["is_error"] or None
    elif state in _ERROR_STATES:
        err = True
    elif state:
        err = None
    else:
        err = True if _toolkit_error(output) else None
    if call_id and isinstance(b.get("finished_at"), str):
        ends[call_id] = b["finished_at"]
    return [ToolResult(call_id, blocks, err, state=named if err else None)]


def _stopped(output: Any) -> str | None:
    """1.x has no state on a result: the toolkit's note says the call was interrupted or
    cancelled."""
    text = output if isinstance(output, str) else next(
        (o.get("text") for o in output if isinstance(o, dict) and o.get("type") == "text"),
        None) if isinstance(output, list) else None
    if isinstance(text, str) and text.startswith(_INTERRUPTED):
        return CANCELLED if text.startswith(_INTERRUPTED[1]) else INTERRUPTED
    return None


def _toolkit_error(output: Any) -> bool:
    texts = [output] if isinstance(output, str) else [
        o.get("text") for o in output if isinstance(o, dict) and o.get("type") == "text"
    ] if isinstance(output, list) else []
    texts = [t for t in texts if isinstance(t, str)]
    if texts and texts[0].startswith(_TOOLKIT_ERRORS):
        return True
    return any(t.startswith(_INTERRUPTED) for t in texts)


def _output(output: Any) -> list:
    """A tool result's output: a string, or a list of text / media blocks."""
    if output is None:
        return []
    if isinstance(output, str):
        return [Text(output, markdown=False)] if output else []
    if isinstance(output, dict):
        output = [output]
    if not isinstance(output, list):
        return [Data(output)]
    out: list = []
    for o in _joined_chunks(output):
        if isinstance(o, str):
            out.append(Text(o, markdown=False))
        elif isinstance(o, dict) and o.get("type") == "text":
            out.append(Text(as_text(o.get("text")), markdown=False))
        elif isinstance(o, dict) and o.get("type") in ("image", "audio", "video"):
            out.append(media_block(o, o["type"]))
        elif isinstance(o, dict) and o.get("type") == "data":
            out.append(_data_block(o))
        elif isinstance(o, dict) and o.get("type") == "file":
            out.append(media_block(o, "document"))
        else:
            out.append(Data(o, o.get("type") if isinstance(o, dict) else None))
    return out


def _joined_chunks(output: list) -> list:
    """A tool's streamed media as one block: a reply rebuilt from its events by 2.0.10 (the app's
    chat service stores that copy) holds one DataBlock per base64 chunk of a streamed image, all
    with the block's id; 2.0.11 (`Msg.append_event`) merges them as `ToolResponse.append_chunk`
    does. Consecutive base64 DataBlocks of one id are joined the same way (bytes, not text); a
    chunk that is not base64 is left as it is (the raw view has the record either way)."""
    out: list = []
    for o in output:
        prev = out[-1] if out else None
        if _chunk(o) and _chunk(prev) and o.get("id") == prev.get("id"):
            try:
                joined = base64.b64decode(prev["source"]["data"], validate=True) \
                    + base64.b64decode(o["source"]["data"], validate=True)
            except (binascii.Error, ValueError):
                out.append(o)
                continue
            src = {**prev["source"], "data": base64.b64encode(joined).decode("ascii"),
                   "media_type": o["source"].get("media_type") or prev["source"].get("media_type")}
            out[-1] = {**prev, "source": src}
            continue
        out.append(o)
    return out


def _chunk(o: Any) -> bool:
    """A DataBlock with an id and inline base64 data: what a streamed chunk of media is."""
    return isinstance(o, dict) and o.get("type") == "data" and isinstance(o.get("id"), str) \
        and o["id"] != "" and isinstance(o.get("source"), dict) \
        and o["source"].get("type") == "base64" and isinstance(o["source"].get("data"), str)


def _data_block(b: dict) -> Media:
    """A 2.x DataBlock: media of any kind, told apart by the source's media type."""
    src = b.get("source") if isinstance(b.get("source"), dict) else {}
    mt = str(src.get("media_type") or src.get("mediaType") or "")
    kind = mt.split("/", 1)[0] if mt.split("/", 1)[0] in ("image", "audio", "video") else "document"
    return media_block(b, kind)


def title_of(ev: Event) -> str | None:
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return ev.text() or None
    return None
