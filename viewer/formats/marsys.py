"""MARSYS (rezaho/MARSYS, PyPI `marsys`) multi-agent transcripts: OpenAI messages plus agents.

Shapes, all read record by record:

* The documented `Message` (the project's `docs/concepts/messages.md`): an OpenAI message plus
  `name` (agent or tool), `message_id`, `metadata`, `timestamp`, and the roles `error`,
  `agent_call` (`name` = the callee, `metadata.caller`, `metadata.task_id`) and `agent_response`
  (`name` = the responder, `metadata.task_id`, `completion_time`).
* The library's own dataclass (marsys 0.2: `marsys.agents.memory.Message`) as `dataclasses.asdict`
  writes it: `{role, content, message_id, name, tool_calls: [{id, call_id, type, name, arguments}],
  agent_calls: [{agent_name, request}], structured_data, images, tool_call_id, reasoning_details}`.
* What MARSYS itself persists:
  - `MemoryManager.save_to_file` / `Agent.save_state`: `{memory_type, messages, timestamp,
    additional_state}`, each message as `Message.to_llm_dict()` writes it (no id, no time);
  - `StateManager.save_session` (`FileStorageBackend`: `sessions/session_<id>.json`): a snapshot
    whose `branch_results[<branch>].branch_memory` maps each agent to the messages of its memory,
    stamped with unix `timestamp`s; `tool_calls` kept as `ToolCallMsg` objects are written with
    `default=str`, i.e. as `"ToolCallMsg(id='…', …)"` strings, which are read back here.
  - ManagedConversationMemory's context compaction (memory_strategies.py) rewrites a memory as
    `[system, "[User Requests Summary]\n…" (user), "[Compacted Context Summary]\n…" (assistant,
    name `compaction_<model>`), "[Retained image <id>]: …" + image (user), the recent tail]`; those
    are shown as compaction notices with their text (kind `compaction`), not as prompts or replies.
  - the pause/resume snapshot of the newer orchestrator (coordination/state/snapshot.py, written as
    `<session_id>/snapshot.json`: `framework_version`, `paused_at`, `branches` each with the
    memory of the agent it runs at): a card saying what the run waits for (a user interaction's
    prompt) or the error it stopped on, a hidden card per branch, then each branch's memory.
  - coordination tool calls (coordination/formats/coordination_tools.py: agents route by native
    tool calls — `invoke_agent` with `invocations`, `terminate_workflow`, `ask_user`,
    `end_conversation`, `escalate_to_user` — which are never run as tools) are read as the
    hand-off, final answer or question they are, not as calls left pending.
  - run traces (`marsys.coordination.tracing`, off by default): NDJSONTraceWriter's
    `<trace_id>.ndjson` (one span per line as it closes, `schema_version`, a `stream_completed`
    marker) and JSONFileTraceWriter's `<session_id>.json` (`{trace_id, session_id, metadata,
    root_span}` with nested `children`, read parents first). Spans (`kind` execution | branch |
    step | generation | compaction | tool) become: the run (task, outcome, final response), hidden
    branch lines, each agent step (its request, chosen action, error), hidden model calls with
    model and tokens, and tool calls with their result summary (span status error → failed).
    A trace holds no messages: the session's summary counts its steps (kind `step`, STEP_KIND),
    which the list, the header and the outline show instead.
  JSONL (one message per line, e.g. an agent's memory as `to_llm_dict()` hands it to the model)
  and JSON lists of messages are read as well.

Detection: a trace span (`span_id`, a span `kind`, `start_time`, `name`) is MARSYS's alone. Most
of a memory's messages are plain OpenAI ones, so MARSYS is known by its marks — the roles
`agent_call` / `agent_response` / `error`, `message_id` beside `name` / `metadata`, the action JSON
(`{"thought", "next_action", "action_input"}`, bare or in a ```json fence), a request another
agent handed on (`[Request from <Agent>]\n…`, which BranchExecutor prepends), the str() of the tool
executor's failure dict, compaction's summary — and once one of them shows, its plain OpenAI
messages count for it too (`EXTENDS`, see `detect.adapter_score`).

Agents: `author` is the agent that wrote a message (`name`, or the branch-memory owner; for
`agent_call` the `metadata.caller`), `recipient` the callee of an `agent_call` and the caller of an
`agent_response` where known, so the page shows caller → callee. An assistant turn whose content is
MARSYS's action JSON (`{thought, next_action, action_input}`) shows the thought as thinking and an
`invoke_agent` action as an agent call to each named agent; `call_tool` actions become tool calls.
The model writes the action in a Markdown fence, often with words around it: they stay text. A user
message opening with `[Request from <Agent>]` is that agent's hand-off (a request, or the answer it
passes back): shown from that agent to this one, the marker itself only in the raw view.
`error` messages keep their role and stand out; Agent writes a failed model call as JSON, whose
`error` is shown as text and the rest as details. A tool message whose content is the executor's
failure dict (`{'error': …, 'type': …}`, str() of a Python dict) is a failed call (the format has no
error flag: `common.error_content`); a user message opening with
`[Tool response content for tool_call_id: X]` (the multimodal half of a tool result) hangs under X.

A snapshot reads as: a hidden session card (`$`), a hidden card per branch, each agent's memory,
then a result card per branch. The executor appends an agent's whole memory after every step, so its
list holds growing copies; messages an earlier copy holds are hidden ("repeated by a later memory
sync", JSON path suffixed `(repeat of [i])`) and their calls shown as data, so each call pairs once.
A memory file does not name its agent: assistant turns carry it in `name`, user turns do not.
`metadata`, `additional_state`, checksums and the branch topology stay in the raw view (and `meta`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

import orjson

from ..model import Data, Event, Notice, Ref, Text, Thinking, ToolResult, ToolUse
from . import openai_chat
from .common import as_text, error_content, generic_event, loads, media_block, model_and_usage, \
    openai_tool_calls, set_time

NAME = "marsys"
MODE = "jsonl"
STEP_KIND = "step"  # a trace's agent step: what the session's summary counts (index.py `steps`)
EXTENDS = openai_chat  # its messages are OpenAI messages; detection credits them once marks show

_ROLES = {"system", "user", "assistant", "tool", "error", "agent_call", "agent_response"}
_OWN_KEYS = {"agent_calls", "structured_data"}
_THREAD_KEYS = {"caller", "callee", "task_id"}
_SNAPSHOT_KEYS = {"session_id", "branch_results", "checksum"}
_BRANCH_AGENT = re.compile(r'branch_memory\[("(?:[^"\\]|\\.)*")\]')
_OF_AGENT = re.compile(r'\.memory\[\d+\] \(of ("(?:[^"\\]|\\.)*")\)$')  # a paused snapshot's
_TOOL_CALL_REPR = re.compile(r"^ToolCallMsg\((.*)\)$", re.S)
REPEAT = " (repeat of ["  # marks a branch-memory path whose message an earlier sync holds
_TOOL_PAYLOAD = re.compile(r"^\[Tool response content for tool_call_id: ([^\]]+)\]")
# what BranchExecutor puts before a request it passes from one agent to the next
_REQUEST_FROM = re.compile(r"^\[Request from ([^\]\n]{1,200})\][ \t]*\n?")
# an action as the model writes it: JSON in a Markdown fence, maybe with words around it
_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\n(\{.*\})\s*```", re.S)
# the coordination tools agents route with (coordination/formats/coordination_tools.py; the
# escalation one per the project's ADR-013): never run as tools, so they get no tool result
COORDINATION_TOOLS = {"invoke_agent", "terminate_workflow", "return_final_response", "ask_user",
                      "end_conversation", "escalate_to_user"}
_COORDINATION_WORDS = {
    "terminate_workflow": ("final response", "answer"),
    "return_final_response": ("final response", "answer"),
    "ask_user": ("asks the user", "question"),
    "escalate_to_user": ("escalates to the user", "prompt"),
    "end_conversation": ("ends the conversation", "summary"),
}
# what context compaction writes into an agent's memory (memory_strategies.py)
_USER_SUMMARY = "[User Requests Summary]\n"
_SUMMARY = "[Compacted Context Summary]\n"
_RETAINED = re.compile(r"^\[Retained image [^\]]+\]: ")
_PLACEHOLDER = "[Context was compacted. Previous conversation history is no longer available.]"
# tuples, not sets: a "kind" from a file may be a list, which a set cannot look up
_SPAN_KINDS = ("execution", "branch", "step", "generation", "compaction", "tool")
_TRACE_MARKS = ("stream_completed", "stream_event")
# (a name from its first letter, whole: tried from each letter of a long run, its length squared)
_KWARG = re.compile(r"(?<!\w)(\w++)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def sniff(rec: Any) -> int:
    if isinstance(rec, dict) and not isinstance(rec.get("role"), str):
        if is_span(rec):
            return 3  # a span of a run trace
        if rec.get("kind") in _TRACE_MARKS and "schema_version" in rec:
            return 2  # the trace writer's end marker or diagnostic line
        return 0
    if not isinstance(rec, dict):
        return 0
    role = rec["role"]
    if "parts" in rec or "message" in rec or "type" in rec:
        return 0  # Wolo, Claude Code, typed-block formats
    if role in ("agent_call", "agent_response"):
        return 3
    md = rec.get("metadata")
    if _OWN_KEYS & rec.keys() or (isinstance(md, dict) and _THREAD_KEYS & md.keys()):
        return 3
    if "message_id" in rec and ({"timestamp", "metadata", "name"} & rec.keys()):
        return 3
    if role == "error" and ("name" in rec or "message_id" in rec):
        return 3
    content = rec.get("content")
    if role == "user" and _request_from(content):
        return 3  # a request or reply another agent passed on
    if role == "assistant" and isinstance(content, str) and action_of(content):
        return 3  # the model's MARSYS action (invoke_agent, call_tool, final_response)
    if role == "assistant" and isinstance(content, str) and content.startswith(_SUMMARY) \
            and str(rec.get("name") or "").startswith("compaction_"):
        return 3  # the summary context compaction left in the memory
    if role == "user" and isinstance(content, str) and content.startswith(_USER_SUMMARY):
        return 2
    if role == "tool" and isinstance(content, str) and content.startswith("{'error': "):
        return 2  # the str() of the tool executor's failure dict
    calls = rec.get("tool_calls") if isinstance(rec.get("tool_calls"), list) else []
    if any(isinstance(c, dict) and "call_id" in c and "arguments" in c and "function" not in c
           for c in calls):
        return 2  # ToolCallMsg as dataclasses.asdict writes it
    if role == "assistant" and any(_invoke_call(c) for c in calls):
        return 3  # the invoke_agent coordination tool
    if role in _ROLES and "id" not in rec and "name" in rec \
            and isinstance(rec.get("timestamp"), float):
        return 2  # a branch-memory message: to_llm_dict() plus the executor's unix timestamp
    return 0


def _invoke_call(call: Any) -> bool:
    """An `invoke_agent` coordination tool call with its `invocations` argument."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or fn.get("name") != "invoke_agent":
        return False
    args = fn.get("arguments")
    return isinstance(args, str) and '"invocations"' in args or (
        isinstance(args, dict) and "invocations" in args)


def layout_mark(rec: Any) -> bool:
    """A mark of the memory layout, whose other records are plain OpenAI messages (see
    `detect.adapter_score`): a trace span is none (a trace file is all spans), so one span line
    among an Agents SDK item list does not take the items for MARSYS's."""
    return not is_span(rec)


def is_span(rec: Any) -> bool:
    """A span as the tracing writers write it: NDJSONTraceWriter's line or a node of
    JSONFileTraceWriter's tree (which leaves out `trace_id`)."""
    return isinstance(rec, dict) and isinstance(rec.get("span_id"), str) \
        and rec.get("kind") in _SPAN_KINDS and "start_time" in rec and "name" in rec


def _paused(doc: Any) -> bool:
    """Orchestra's pause/resume snapshot (coordination/state/snapshot.py StateSnapshot, written
    as `<session_id>/snapshot.json`)."""
    return isinstance(doc, dict) and isinstance(doc.get("framework_version"), str) \
        and isinstance(doc.get("branches"), dict) and "paused_at" in doc


def records(doc: Any) -> list[tuple[str, Any]] | None:
    if isinstance(doc, dict) and is_span(doc.get("root_span")) and "trace_id" in doc:
        return _trace_records(doc)
    if _paused(doc):
        return _paused_records(doc)
    if isinstance(doc, list):
        if not any(sniff(r) for r in doc[:50]):
            return None
        return [(f"[{i}]", r) for i, r in enumerate(doc)]
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("memory_type"), str) and isinstance(doc.get("messages"), list):
        return [(f"messages[{i}]", r) for i, r in enumerate(doc["messages"])]
    if isinstance(doc.get("branch_results"), dict) and "session_id" in doc:
        return _snapshot_records(doc)
    msgs = doc.get("messages")
    if isinstance(msgs, list) and any(sniff(r) for r in msgs[:50]):
        return [(f"messages[{i}]", r) for i, r in enumerate(msgs)]
    return None


def _snapshot_records(doc: dict) -> list[tuple[str, Any]]:
    """A StateManager snapshot: a session card, then per branch its agents' memories and result."""
    out: list[tuple[str, Any]] = [("$", {k: v for k, v in doc.items()
                                         if k not in ("branches", "branch_results")})]
    branches = doc.get("branches") if isinstance(doc.get("branches"), dict) else {}
    results = doc["branch_results"]
    for bid in [*branches, *(b for b in results if b not in branches)]:
        if bid in branches:
            out.append((f"branches[{_q(bid)}]", branches[bid]))
        res = results.get(bid)
        if not isinstance(res, dict):
            continue
        memory = res.get("branch_memory") if isinstance(res.get("branch_memory"), dict) else {}
        for agent, msgs in memory.items():
            msgs = msgs if isinstance(msgs, list) else [msgs]
            repeats = _repeats(msgs)
            for i, m in enumerate(msgs):
                path = f"branch_results[{_q(bid)}].branch_memory[{_q(agent)}][{i}]"
                out.append((path + (f"{REPEAT}{repeats[i]}])" if i in repeats else ""), m))
        summary = {k: v for k, v in res.items() if k != "branch_memory"}
        out.append((f"branch_results[{_q(bid)}]", summary))
    return out


def _trace_records(doc: dict) -> list[tuple[str, Any]]:
    """JSONFileTraceWriter's `{trace_id, session_id, metadata, root_span}`: a trace card, then the
    span tree depth first (each span without its children, which follow it)."""
    out: list[tuple[str, Any]] = [("$", {k: v for k, v in doc.items() if k != "root_span"})]
    stack = [("root_span", doc["root_span"])]
    while stack:
        path, span = stack.pop()
        if not isinstance(span, dict):
            out.append((path, span))
            continue
        out.append((path, {k: v for k, v in span.items() if k != "children"}))
        kids = span.get("children") if isinstance(span.get("children"), list) else []
        stack.extend((f"{path}.children[{i}]", kid) for i, kid in reversed(list(enumerate(kids))))
    return out


def _paused_records(doc: dict) -> list[tuple[str, Any]]:
    """A paused session: its card, then per branch its card and the memory it carries (the agent
    it runs at wrote it), each path ending in `(of "<agent>")` so the messages know their agent."""
    out: list[tuple[str, Any]] = [("$", {k: v for k, v in doc.items() if k != "branches"})]
    for bid, br in doc["branches"].items():
        path = f"branches[{_q(bid)}]"
        if not isinstance(br, dict):
            out.append((path, br))
            continue
        out.append((path, {k: v for k, v in br.items() if k != "memory"}))
        agent = _q(br.get("current_agent") or "")
        memory = br.get("memory") if isinstance(br.get("memory"), list) else []
        out += [(f"{path}.memory[{i}] (of {agent})", m) for i, m in enumerate(memory)]
    return out


def _repeats(msgs: list) -> dict[int, int]:
    """Messages a later sync appended again: index → index of the first copy.

    After every step BranchExecutor appends the agent's whole memory to its branch memory, so the
    list is a run of growing copies, each starting with the memory's first message. A message equal
    (but for its timestamp) to the one at the same place in the copy before is a repeat."""
    keys = [_key(m) for m in msgs]
    if not keys:
        return {}
    starts = [j for j, k in enumerate(keys) if k == keys[0]] + [len(keys)]
    first: dict[int, int] = {}
    for t in range(1, len(starts) - 1):
        prev, cur, end = starts[t - 1], starts[t], starts[t + 1]
        for k in range(min(cur - prev, end - cur)):
            if keys[cur + k] != keys[prev + k]:
                break
            first[cur + k] = first.get(prev + k, prev + k)
    return first


def _key(m: Any) -> bytes:
    if isinstance(m, dict):
        m = {k: v for k, v in m.items() if k != "timestamp"}
    return orjson.dumps(m, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)


def _q(key: Any) -> str:
    return orjson.dumps(str(key)).decode()


def document_bonus(doc: Any) -> int:
    """A memory file's messages look like plain OpenAI ones: its wrapper is what says MARSYS."""
    if isinstance(doc, dict):
        if isinstance(doc.get("memory_type"), str) and isinstance(doc.get("messages"), list):
            return 3 * min(len(doc["messages"]), 50) + 3
        if _SNAPSHOT_KEYS <= doc.keys() and isinstance(doc.get("branch_results"), dict):
            return 10
        if "trace_id" in doc and is_span(doc.get("root_span")):
            return 10
        if _paused(doc):
            return 10
    return 0


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, dict):
        return generic_event(rec, ref, NAME)
    path = ref.path or ""
    if is_span(rec) or (rec.get("kind") in _TRACE_MARKS and not isinstance(rec.get("role"), str)):
        return _span_event(rec, ref)
    if path == "$" and "trace_id" in rec and "checksum" not in rec:
        return _trace_card(rec, ref)
    if path == "$" and "framework_version" in rec and "paused_at" in rec:
        return _paused_card(rec, ref)
    if path.startswith("branches[") and ".memory[" not in path and "current_agent" in rec:
        return _paused_branch_card(rec, ref)
    if path == "$" and "session_id" in rec:
        return _snapshot_card(rec, ref)
    if path.startswith("branches[") and ".memory[" not in path:
        return _branch_card(rec, ref)
    if path.startswith("branch_results[") and "branch_memory" not in path:
        return _result_card(rec, ref)
    if not isinstance(rec.get("role"), str):
        ev = generic_event(rec, ref, NAME)
        ev.format = NAME
        return ev
    ev = _message(rec, ref, _branch_agent(path))
    ev.format = NAME
    if REPEAT in path:
        _as_repeat(ev, path)
    return ev


def _as_repeat(ev: Event, path: str) -> None:
    """A copy of an earlier message: hidden, and its calls and results kept out of the state map."""
    ev.hidden, ev.hidden_reason = True, "repeated by a later memory sync"
    ev.source_id = None
    ev.running = []
    if ev.role == "error":  # counted once, where it first appears
        ev.role = "system"
    blocks = []
    for b in ev.blocks:
        if b.kind == "tool_use":
            b = Data({"id": b.id, "name": b.name, "input": b.input}, "tool call (repeat)")
        elif b.kind == "tool_result":
            texts = [getattr(c, "text", None) for c in b.content]
            b = Data({"tool_call_id": b.tool_use_id, "content": texts}, "tool result (repeat)")
        blocks.append(b)
    ev.blocks = blocks
    first = path[path.index(REPEAT) + len(REPEAT):-2]
    ev.blocks.insert(0, Notice(f"the agent's memory synced again: a copy of its message [{first}]"))


def _branch_agent(path: str) -> str | None:
    m = _BRANCH_AGENT.search(path) or _OF_AGENT.search(path)
    if not m:
        return None
    try:
        return orjson.loads(m.group(1))
    except orjson.JSONDecodeError:
        return None


def _message(rec: dict, ref: Ref, owner: str | None) -> Event:
    role = rec["role"] or "unknown"
    md = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
    name = rec.get("name") if isinstance(rec.get("name"), str) and rec.get("name") else None
    ev = Event(ref, role)
    if isinstance(rec.get("message_id"), str) and rec["message_id"]:
        ev.source_id = rec["message_id"]
    set_time(ev, rec.get("timestamp") if rec.get("timestamp") is not None else md.get("timestamp"))
    ev.meta = {k: v for k, v in rec.items() if k not in ("content", "tool_calls", "timestamp")}
    ev.blocks.extend(_reasoning(rec.get("reasoning_details")))

    if role == "tool" and name in COORDINATION_TOOLS:
        # an answer to a coordination call, which is shown as the hand-off it is, not as a call
        ev.kind = "tool_output"
        ev.blocks += [Notice(f"{name.replace('_', ' ')}: acknowledged"),
                      *_result(rec.get("content"))]
        return ev
    if role == "tool":
        ev.kind = "tool_result"
        failed = md.get("error") or md.get("is_error") or error_content(rec.get("content"))
        is_error = True if failed else None
        ev.blocks.append(ToolResult(str(rec.get("tool_call_id") or ""), _result(rec.get("content")),
                                    is_error))
        ev.blocks.extend(_extras(rec))
        return ev

    if role in ("user", "assistant") and _compaction(ev, rec.get("content"), name):
        return ev
    _content(ev, rec.get("content"))
    for block in openai_tool_calls(_tool_calls(rec.get("tool_calls"))):
        if not (block.kind == "tool_use" and _coordination(ev, block)):
            ev.blocks.append(block)
    agent_calls = rec.get("agent_calls") if isinstance(rec.get("agent_calls"), list) else []
    for call in agent_calls:
        if isinstance(call, dict):
            _invoke(ev, call.get("agent_name"), call.get("request"), from_field=True)
    ev.blocks.extend(_extras(rec))

    if role == "agent_call":
        ev.kind = "agent_call"
        ev.author = _s(md.get("caller")) or _s(md.get("from")) or owner
        ev.recipient = _s(md.get("callee")) or name or ev.recipient
    elif role == "agent_response":
        ev.kind = "agent_response"
        ev.author = name or _s(md.get("callee")) or owner
        ev.recipient = _s(md.get("caller")) or _s(md.get("to")) or ev.recipient or (
            owner if owner != ev.author else None)  # it sits in the caller's memory
    elif role == "error":
        ev.kind = "error"
        ev.author = name or owner
    elif role == "system":
        ev.author = name
    elif role == "user":
        ev.author = name
        first = next((b for b in ev.blocks if b.kind == "text"), None)
        m = _TOOL_PAYLOAD.match(first.text) if first is not None else None
        asked = _REQUEST_FROM.match(first.text) if first is not None and not m else None
        if m:  # the multimodal half of a tool result, sent as a user message
            ev.kind, ev.parent = "tool_output", m.group(1).strip()
        elif asked:  # a hand-off from another agent: shown as sender → this agent
            ev.kind, ev.author = "comm", asked.group(1).strip()
            first.text = first.text[asked.end():]
            if not first.text.strip():
                ev.blocks.remove(first)
            if owner and owner != ev.author:
                ev.recipient = owner
        elif owner and ev.recipient is None:
            ev.recipient = owner  # a request in this agent's memory: from the user or its caller
    else:
        ev.author = name or owner
        if owner and name and name != owner:
            ev.author, ev.model = owner, name
    threaded = md.get("task_id") or md.get("completion_time")
    if role in ("agent_call", "agent_response") and threaded:
        words = f"task {md['task_id']}" if md.get("task_id") else "task"
        if isinstance(md.get("completion_time"), (int, float)):
            words += f" · completed in {md['completion_time']:g}s"
        ev.blocks.insert(0, Notice(words))
    return ev


def _coordination(ev: Event, use: ToolUse) -> bool:
    """A coordination tool call (marsys.coordination.formats.coordination_tools: agents route by
    native tool calls instead of the action JSON): shown as what it does — a hand-off to each
    invoked agent, the workflow's final answer, a question to the user — not as a tool call that
    never gets a result (these are never run as tools). False, so it stays a plain call, when its
    arguments are not the coordination tool's."""
    name, args = use.name, use.input
    if name not in COORDINATION_TOOLS or not isinstance(args, dict):
        return False
    if name == "invoke_agent":
        invs = args.get("invocations")
        invs = invs if isinstance(invs, list) else [args] if "agent_name" in args else None
        if not invs or not all(isinstance(i, dict) and i.get("agent_name") for i in invs):
            return False
        for inv in invs:
            _invoke(ev, inv.get("agent_name"), inv.get("request"))
        return True
    words, key = _COORDINATION_WORDS[name]
    ev.blocks.append(Notice(words))
    value = args.get(key) if key in args else args
    if isinstance(value, str):
        if value.strip():
            ev.blocks.append(Text(value))
    elif value:
        ev.blocks.append(Data(value, key))
    if name == "ask_user" or name == "escalate_to_user":
        ev.recipient = "User"
    return True


def _first_text(content: Any) -> str | None:
    if isinstance(content, list):
        content = next((p.get("text") for p in content if isinstance(p, dict)
                        and p.get("type") == "text"), None)
    return content if isinstance(content, str) else None


def _compaction(ev: Event, content: Any, name: str | None) -> bool:
    """The messages ManagedConversationMemory's compaction writes in place of the history it
    summarized (memory_strategies.SummarizationProcessor and the forced fallback): the user's
    requests so far (`[User Requests Summary]`), the summary (`[Compacted Context Summary]`, named
    `compaction_<model>`), an image kept through it (`[Retained image <id>]: …`), or the
    placeholder left when no model could summarize. Shown as the compaction they are: not as a
    prompt, not as the agent's own words (the requests, without their marker, still name the
    session when no prompt came before them)."""
    text = _first_text(content)
    if text is None:
        return False
    model = name[len("compaction_"):] if name and name.startswith("compaction_") else None
    if ev.role == "user" and text.startswith(_USER_SUMMARY):
        words, body = "context compacted: the user's requests so far", text[len(_USER_SUMMARY):]
    elif ev.role == "assistant" and text.startswith(_SUMMARY):
        words, body = "context compacted: summary of the earlier conversation", text[len(_SUMMARY):]
        if model:
            words += f" (by {model})"
    elif ev.role == "user" and isinstance(content, list) and _RETAINED.match(text):
        ev.kind = "compaction"
        ev.blocks += [Notice("an image kept through context compaction"), *_parts(content)]
        return True
    elif ev.role == "assistant" and text.strip() == _PLACEHOLDER:
        words, body = "context compacted: the earlier conversation was dropped, no summary kept", ""
    else:
        return False
    ev.kind = "compaction"
    ev.model = model or ev.model
    ev.blocks.append(Notice(words))
    if body.strip():
        ev.blocks.append(Text(body.strip()))
    return True


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _content(ev: Event, content: Any) -> None:
    """Message content: text, OpenAI typed parts, or MARSYS's action JSON (string or object)."""
    if content is None:
        return
    action = content if isinstance(content, dict) else None
    if isinstance(content, str):
        found = action_of(content) if ev.role != "error" else None
        if found is None:
            if ev.role == "error":
                ev.blocks.extend(_error_blocks(content))
            elif content.strip():
                ev.blocks.append(Text(content))
            return
        before, action, after = found
        if before.strip():
            ev.blocks.append(Text(before.strip()))
        _action(ev, action)
        if after.strip():
            ev.blocks.append(Text(after.strip()))
        return
    if isinstance(content, list):
        ev.blocks.extend(_parts(content))
        return
    if isinstance(action, dict) and ("next_action" in action or "thought" in action):
        _action(ev, action)
    elif isinstance(action, dict):
        ev.blocks.append(Data(action, "content"))


def action_of(text: str) -> tuple[str, dict, str] | None:
    """A MARSYS action in a message's text: (words before, the action, words after), or None.
    The model answers with `{"thought", "next_action", "action_input"}`, bare or in a ```json
    fence; MARSYS keeps the text as written and parses it when it acts."""
    if '"next_action"' not in text:
        return None
    stripped = text.strip()
    if stripped.startswith("{"):
        before, body, after = "", stripped, ""
    else:
        m = _FENCED.search(text)
        if m is None:
            return None
        before, body, after = text[:m.start()], m.group(1), text[m.end():]
    try:
        action = loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(action, dict) or "next_action" not in action:
        return None
    return before, action, after


def _request_from(content: Any) -> bool:
    if isinstance(content, list):
        content = next((p.get("text") for p in content if isinstance(p, dict)
                        and p.get("type") == "text"), None)
    return isinstance(content, str) and _REQUEST_FROM.match(content) is not None


def _error_blocks(content: str) -> list:
    """An `error` message: Agent writes a failed model call as JSON ({error, error_code,
    error_type, …}); its message is shown as text, the rest as details."""
    try:
        value = loads(content) if content.lstrip().startswith("{") else None
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("error"), str):
        rest = {k: v for k, v in value.items() if k != "error"}
        return [Text(value["error"], markdown=False), *([Data(rest, "error details")] if rest else [])]
    return [Text(content, markdown=False)] if content.strip() else []


def _action(ev: Event, action: dict) -> None:
    thought = action.get("thought")
    if thought:
        ev.blocks.append(Thinking(as_text(thought)))
    kind = action.get("next_action")
    inp = action.get("action_input")
    if kind == "invoke_agent":
        calls = inp if isinstance(inp, list) else [inp]
        for c in calls:
            if isinstance(c, dict):
                _invoke(ev, c.get("agent_name"), c.get("request"))
            else:
                ev.blocks.append(Data(c, "invocation"))
    elif kind == "final_response":
        resp = inp.get("response") if isinstance(inp, dict) and "response" in inp else inp
        ev.blocks.append(Notice("final response"))
        if isinstance(resp, str):
            ev.blocks.append(Text(resp))
        elif resp is not None:
            ev.blocks.append(Data(resp, "response"))
    elif kind == "call_tool" and isinstance(inp, dict) and "tool_calls" in inp:
        ev.blocks.extend(openai_tool_calls(inp["tool_calls"]))
    elif kind is not None or inp is not None:
        ev.blocks.append(Notice(f"next action: {kind}" if kind else "action"))
        if inp is not None:
            ev.blocks.append(Data(inp, "action input"))
    rest = {k: v for k, v in action.items() if k not in ("thought", "next_action", "action_input")}
    if rest:
        ev.blocks.append(Data(rest, "content"))


def _invoke(ev: Event, agent: Any, request: Any, from_field: bool = False) -> None:
    """One agent invocation: the message becomes a call from this agent to `agent`."""
    agent = agent if isinstance(agent, str) and agent else "?"
    names = [n for n in (ev.recipient or "").split(", ") if n]
    if agent not in names:
        names.append(agent)
    ev.recipient = ", ".join(names)
    ev.kind = "agent_call"
    if from_field and any(b.kind == "notice" and b.text == f"invoke {agent}" for b in ev.blocks):
        return
    ev.blocks.append(Notice(f"invoke {agent}"))
    if from_field and ev.text() and as_text(request).strip() == ev.text().strip():
        return  # the request is the message content already shown
    if isinstance(request, str):
        if request.strip():
            ev.blocks.append(Text(request))
    elif request is not None:
        ev.blocks.append(Data(request, "request"))


def _parts(content: list) -> list:
    out = []
    for item in content:
        if isinstance(item, str):
            out.append(Text(item))
        elif isinstance(item, dict) and item.get("type") == "text":
            out.append(Text(as_text(item.get("text"))))
        elif isinstance(item, dict) and item.get("type") in ("image_url", "image"):
            out.append(media_block(item, "image"))
        else:
            out.append(Data(item, item.get("type") if isinstance(item, dict) else None))
    return out


def _result(content: Any) -> list:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [Text(content, markdown=False)]
    if isinstance(content, list):
        return _parts(content)
    return [Data(content)]


def _extras(rec: dict) -> list:
    out = []
    images = rec.get("images")
    if isinstance(images, list):
        for img in images:
            if isinstance(img, str):
                out.append(media_block({"url": img, "name": img.rsplit("/", 1)[-1][:80]}, "image"))
    sd = rec.get("structured_data")
    if sd is not None:
        out.append(Data(sd, "structured data"))
    return out


def _reasoning(details: Any) -> list:
    """reasoning_details (OpenRouter / Gemini thought signatures) as thinking blocks."""
    if not isinstance(details, list):
        return []
    out = []
    for d in details:
        if not isinstance(d, dict):
            continue
        text = d.get("text") or d.get("summary")
        if isinstance(text, str) and text:
            sig = d.get("signature")
            out.append(Thinking(text, signature=sig if isinstance(sig, str) else None))
        else:
            sig = d.get("data") or d.get("signature")
            out.append(Thinking("", True, sig if isinstance(sig, str) else None))
    return out


def _tool_calls(calls: Any) -> Any:
    """Tool calls, with `ToolCallMsg(...)` reprs (a snapshot written with default=str) read back."""
    if not isinstance(calls, list):
        return calls
    out = []
    for c in calls:
        m = _TOOL_CALL_REPR.match(c) if isinstance(c, str) else None
        if m:
            fields = {}
            for key, lit in _KWARG.findall(m.group(1)):
                try:
                    fields[key] = ast.literal_eval(lit)
                except (ValueError, SyntaxError):
                    fields[key] = lit
            if fields.get("id"):
                out.append(fields)
                continue
        out.append(c)
    return out


def _paused_card(rec: dict, ref: Ref) -> Event:
    """The paused session: what it waits for (a user interaction's prompt is shown), or the error
    it stopped on."""
    words = f"MARSYS session {rec.get('session_id')} paused (framework {rec.get('framework_version')})"
    ev = Event(ref, "system", kind="paused", format=NAME, blocks=[Notice(words, rec)])
    pending = rec.get("pending_user_interaction")
    queued = rec.get("user_interactions") if isinstance(rec.get("user_interactions"), list) else []
    waits = [w for w in [pending, *queued] if isinstance(w, dict)]
    for w in waits:
        ev.blocks.append(Notice(f"waiting for the user's answer, then {w.get('resume_agent') or '?'}"
                                " goes on"))
        prompt = w.get("prompt")
        if isinstance(prompt, str) and prompt.strip():
            ev.blocks.append(Text(prompt))
        elif prompt is not None:
            ev.blocks.append(Data(prompt, "prompt"))
    if rec.get("workflow_error"):
        ev.role = "error"
        ev.blocks.append(Text(as_text(rec["workflow_error"]), markdown=False))
    elif not waits:
        ev.hidden, ev.hidden_reason = True, "session snapshot"
    set_time(ev, rec.get("paused_at"))
    ev.meta = dict(rec)
    return ev


def _paused_branch_card(rec: dict, ref: Ref) -> Event:
    status = str(rec.get("status") or "?")
    words = f"branch {rec.get('id') or '?'} at {rec.get('current_agent') or '?'} · {status.lower()}"
    if isinstance(rec.get("step_count"), int):
        words += f" · {rec['step_count']} steps"
    if rec.get("waiting_on"):
        words += f" · waiting on {rec['waiting_on']}"
    failed = status == "FAILED"
    ev = Event(ref, "error" if failed else "status", kind="branch", format=NAME,
               author=_s(rec.get("current_agent")), blocks=[Notice(words, rec)])
    if not failed:
        ev.hidden, ev.hidden_reason = True, "branch state"
    set_time(ev, rec.get("created_at"))
    ev.meta = dict(rec)
    return ev


def _snapshot_card(rec: dict, ref: Ref) -> Event:
    md = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
    words = f"MARSYS session {rec.get('session_id')}"
    if md.get("status"):
        words += f" · {md['status']}"
    if isinstance(md.get("total_steps"), int):
        words += f" · {md['total_steps']} steps"
    ev = Event(ref, "system", kind="session", format=NAME, hidden=True,
               hidden_reason="session snapshot", blocks=[Notice(words, rec)])
    set_time(ev, rec.get("timestamp"))
    ev.meta = dict(rec)
    return ev


def _branch_card(rec: dict, ref: Ref) -> Event:
    topo = rec.get("topology") if isinstance(rec.get("topology"), dict) else {}
    state = rec.get("state") if isinstance(rec.get("state"), dict) else {}
    agents = topo.get("agents") if isinstance(topo.get("agents"), list) else []
    words = f"branch {rec.get('name') or rec.get('id') or '?'}"
    if state.get("status"):
        words += f" · {state['status']}"
    if agents:
        words += " · agents " + ", ".join(map(str, agents))
    ev = Event(ref, "status", kind="branch", format=NAME, hidden=True, hidden_reason="branch state",
               blocks=[Notice(words, rec)])
    set_time(ev, state.get("start_time"))
    if state.get("error"):
        ev.role = "error"
        ev.hidden = False
        ev.blocks.append(Text(as_text(state["error"]), markdown=False))
    ev.meta = dict(rec)
    return ev


def _result_card(rec: dict, ref: Ref) -> Event:
    ok = rec.get("success")
    outcome = "succeeded" if ok else "failed" if ok is False else "ended"
    words = f"branch {rec.get('branch_id') or '?'} {outcome}"
    if isinstance(rec.get("total_steps"), int):
        words += f" · {rec['total_steps']} steps"
    role = "error" if ok is False or rec.get("error") else "status"
    ev = Event(ref, role, kind="result", format=NAME, blocks=[Notice(words)])
    final = rec.get("final_response")
    if isinstance(final, str) and final.strip():
        ev.blocks.append(Text(final))
    elif final is not None:
        ev.blocks.append(Data(final, "final response"))
    if rec.get("error"):
        ev.blocks.append(Text(as_text(rec["error"]), markdown=False))
    trace = rec.get("execution_trace")
    if isinstance(trace, list) and trace:
        ev.blocks.append(Data(trace, "execution trace"))
    ev.meta = dict(rec)
    return ev


# --- run traces (marsys.coordination.tracing) -----------------------------------------------------


def _trace_card(rec: dict, ref: Ref) -> Event:
    ev = Event(ref, "system", kind="session", format=NAME, hidden=True, hidden_reason="trace header",
               blocks=[Notice(f"MARSYS trace {rec.get('trace_id')} · session {rec.get('session_id')}",
                              rec)])
    ev.meta = dict(rec)
    return ev


def _secs(rec: dict) -> str | None:
    ms = rec.get("duration_ms")
    if isinstance(ms, (int, float)) and not isinstance(ms, bool):
        return f"{ms / 1000:.1f}s"
    return None


def _span_event(rec: dict, ref: Ref) -> Event:
    """One span of a run trace (NDJSONTraceWriter writes each as it closes, so children come before
    their parents; JSONFileTraceWriter's tree is read parents first):
    execution → the run (its task, outcome, final response), branch → a hidden status line, step →
    the agent's step (its request, the action it chose, its error), generation / compaction → a
    hidden model call with model and tokens, tool → the call and its result summary (a span with
    status error failed). The writer's end marker and diagnostics are status lines."""
    kind = rec.get("kind")
    a = rec.get("attributes") if isinstance(rec.get("attributes"), dict) else {}
    failed = rec.get("status") == "error"
    took = _secs(rec)
    agent = _s(a.get("agent_name"))
    if kind == "stream_completed":
        n = a.get("total_spans")
        words = f"trace file complete{f' · {n} spans' if isinstance(n, int) else ''}"
        lost = [f"{a[k]} {k.replace('_count', '').replace('_', ' ')}" for k in
                ("dropped_span_count", "disabled_dropped_count", "disk_error_count")
                if isinstance(a.get(k), int) and a[k]]
        ev = Event(ref, "status", kind="trace_end", blocks=[Notice(words, a or None)])
        if lost:  # spans the writer could not keep: say so on the page
            ev.blocks.append(Notice("the trace writer lost spans: " + ", ".join(lost)))
        else:
            ev.hidden, ev.hidden_reason = True, "trace marker"
    elif kind == "stream_event":
        what = as_text(a.get("event")) or "event"
        ev = Event(ref, "status", kind="trace_event",
                   blocks=[Notice(f"trace writer: {what.replace('_', ' ')}", a or None)])
    elif kind == "execution":
        parts = ["MARSYS run"]
        names = a.get("agent_names")
        if isinstance(names, list) and names:
            parts.append("agents " + ", ".join(map(str, names)))
        if a.get("success") is not None:
            parts.append("succeeded" if a.get("success") else "failed")
        if isinstance(a.get("total_steps"), int):
            parts.append(f"{a['total_steps']} steps")
        if took:
            parts.append(took)
        ev = Event(ref, "error" if failed or a.get("success") is False else "system",
                   kind="session", blocks=[Notice(" · ".join(parts))])
        if isinstance(a.get("task_summary"), str) and a["task_summary"].strip():
            ev.blocks.append(Text(a["task_summary"]))
        final = a.get("final_response_summary")
        if isinstance(final, str) and final.strip():
            ev.blocks += [Notice("final response"), Text(final)]
    elif kind == "branch":
        words = f"branch {a.get('branch_name') or rec.get('name') or '?'}"
        src, targets = _s(a.get("source_agent")), a.get("target_agents")
        if src or targets:
            words += f" · {src or '?'} → " + (", ".join(map(str, targets))
                                               if isinstance(targets, list) else as_text(targets))
        if isinstance(a.get("total_steps"), int):
            words += f" · {a['total_steps']} steps"
        if failed:
            words += " · failed"
        ev = Event(ref, "error" if failed else "status", kind="branch", blocks=[Notice(words)])
        if not failed:
            ev.hidden, ev.hidden_reason = True, "branch"
    elif kind == "step":
        words = f"step {a.get('step_number', '?')}"
        if a.get("action_type"):
            words += f" · {a['action_type']}"
        nxt = a.get("next_agents")
        if isinstance(nxt, list) and nxt:
            words += " → " + ", ".join(map(str, nxt))
        if took:
            words += f" · {took}"
        if failed:
            words += " · failed"
        ev = Event(ref, "error" if failed else "assistant", kind="step", author=agent,
                   blocks=[Notice(words)])
        if a.get("error"):
            ev.blocks.append(Text(as_text(a["error"]), markdown=False))
        req = a.get("request_summary")
        if isinstance(req, str) and req.strip():  # what the agent was asked, not what it said
            ev.blocks += [Notice("the request it was given"), Text(req, markdown=False)]
        elif req is not None:
            ev.blocks.append(Data(req, "the request it was given"))
    elif kind in ("generation", "compaction"):
        model = _s(a.get("model_name"))
        usage = {k: a[k] for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")
                 if isinstance(a.get(k), int) and not isinstance(a.get(k), bool)}
        parts = ["memory compaction" if kind == "compaction" else "model call"]
        if model:
            parts.append(model)
        if usage:
            parts.append(f"{usage.get('prompt_tokens', 0) + usage.get('completion_tokens', 0):,} tokens")
        if a.get("finish_reason"):
            parts.append(f"finish: {a['finish_reason']}")
        if took:
            parts.append(took)
        ev = Event(ref, "error" if failed else "status", kind=kind, author=agent,
                   blocks=[Notice(" · ".join(parts), a or None)])
        if not failed:
            ev.hidden, ev.hidden_reason = True, "model call"
        model_and_usage(ev, model, usage or None)
    else:  # tool
        cid = f"span:{rec['span_id']}"
        name = _s(a.get("tool_name")) or str(rec.get("name") or "tool")
        args = a.get("arguments")
        use = ToolUse(cid, name, args if args is not None else {},
                      started=rec.get("start_time"), ended=rec.get("end_time"))  # the span's times
        ev = Event(ref, "assistant", kind="tool", author=agent, blocks=[use])
        if rec.get("end_time") is not None or failed:
            summary = a.get("result_summary")
            body = [Text(summary, markdown=False)] if isinstance(summary, str) and summary \
                else [Data(summary, "result")] if summary is not None else []
            ev.blocks.append(ToolResult(cid, body, True if failed else None))
    ev.format = NAME
    ev.source_id = rec.get("span_id") if isinstance(rec.get("span_id"), str) else None
    set_time(ev, rec.get("start_time") if rec.get("start_time") is not None else rec.get("ts"))
    ev.meta = dict(rec)
    return ev


def title_of(ev: Event) -> str | None:
    """The first prompt: the user's, or the request another agent handed this one; a run trace's
    task."""
    if ev.role == "user" and ev.kind in ("message", "comm") and not ev.hidden:
        text = ev.text()
        return text or None
    if ev.role == "user" and ev.kind == "compaction" and ev.blocks[0].text.endswith("so far"):
        return ev.text() or None  # a compacted memory's summary of the user's requests
    if ev.kind == "session" and not ev.hidden:  # the task, not the final response after it
        return next((b.text for b in ev.blocks if b.kind == "text" and b.text.strip()), None)
    return None
