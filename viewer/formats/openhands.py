"""OpenHands (V0) event streams: the trajectory a conversation exports, one event per record.

What OpenHands writes (openhands/events/serialization/event.py `event_to_dict` / `event_to_trajectory`):
every event is `{id, timestamp, source: agent | user | environment, message, cause?,
tool_call_metadata?, llm_metrics?}` plus either `action` + `args` (+ `timeout`) or `observation` +
`content` + `extras` (+ `success`). The UI's "Export trajectory" (`GET /api/conversations/<id>/
trajectory`) gives `{"trajectory": [events]}`; `save_trajectory_path` and the runtime's replay files
(tests/runtime/trajs/*.json) hold the bare list; events one per line read the same. The session
store (`sessions/<id>/events/<n>.json`, one event per file, and `metadata.json`) is read as one
session: see "the session store" below. (OpenHands V1, the software-agent-sdk's `kind`-typed
events, is `openhands_v1`.)

Mapping:
* `message` → the user's prompt or the agent's reply (its `image_urls` as images); `system` → the
  system prompt, folded; `recall` and its `recall` observation (workspace context, microagent
  knowledge) → a folded context chip.
* an agent action that runs something (`run`, `run_ipython`, `read`, `write`, `edit`, `browse`,
  `browse_interactive`, `mcp`, `delegate`, and any other the agent sends) → its `thought` as the
  agent's words and a call: named for the function the model called (`tool_call_metadata.
  function_name`: `execute_bash`, `str_replace_editor`, `browser`…), its input the arguments the
  model sent (from the response the metadata keeps), else the action's own `args`. The observation
  whose `cause` names the action is its result: a command's exit code (`extras.metadata.exit_code`,
  a non-zero one an error, said first), an `edit`'s diff drawn as a diff, `error` observations
  errors, `user_rejected` a call the user denied.
* `think` → thinking (its "Your thought has been logged." observation hidden); `finish` / `reject` →
  the agent's last words and a notice; `condensation` → a notice saying which events were
  forgotten, with the summary; `delegate` → a call to the named agent, the events until its
  `delegate` observation are that agent's (in a document): named for it and hanging under the call
  (`Event.parent`, drawn indented below it).
* `agent_state_changed` → a notice (running / loading ones hidden); `null` observations hidden.
* the model response each action came from (`tool_call_metadata.model_response`): its model and
  `usage` (one API call, however many actions it made: its id is the message id), the call's cost
  the last entry of `llm_metrics.costs` where the event carries metrics.

Kept only in the raw view: `model_response` beyond model and usage, `llm_metrics` totals,
`translated_ipython_code`, security risk and confirmation fields, browser page state.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from ..model import DENIED, Context, Data, Event, Notice, Ref, Text, Thinking, ToolResult, ToolUse
from .common import as_text, events_folder_identity, first_time, generic_event, load_json_file, \
    media_block, model_and_usage, parse_arguments, prompt_first_line, result_content, text_field

NAME = "openhands"
MODE = "document"

_SOURCES = frozenset({"agent", "user", "environment"})
# actions that are no call: nothing runs, no observation answers them as a result
_NOT_CALLS = frozenset({"message", "system", "finish", "reject", "think", "recall", "change_agent_state",
                        "condensation", "condensation_request", "null", "pause", "resume", "stop", "start",
                        "summarize", "push", "send_pr", "start_task"})
# observations that answer no call (their cause is a think, a recall, the controller)
_NOT_RESULTS = frozenset({"think", "recall", "agent_state_changed", "null", "microagent",
                          "workspace_context", "condense", "chat", "message"})
# action args that say nothing about what ran (kept in the raw view)
_NOISE = frozenset({"thought", "security_risk", "confirmation_state", "is_input", "blocking", "hidden",
                    "impl_source", "translated_ipython_code", "is_static", "include_extra",
                    "kernel_init_code", "wait_for_response", "timeout"})
_QUIET_STATES = frozenset({"loading", "running", "init", "awaiting_user_input"})
_NAMES = {"run": "execute_bash", "run_ipython": "execute_ipython_cell", "read": "str_replace_editor",
          "write": "str_replace_editor", "edit": "str_replace_editor", "browse": "fetch",
          "browse_interactive": "browser", "delegate": "delegate", "mcp": "mcp"}


class Linked(dict):
    """An event with what only the stream around it says (never serialised): the action an
    observation answers is a call or not, the agent a delegate runs and the delegate call it runs
    under."""

    answers: bool | None
    agent: str | None
    under: str | None

    def __init__(self, rec: dict, answers: bool | None = None, agent: str | None = None,
                 under: str | None = None):
        super().__init__(rec)
        self.answers, self.agent, self.under = answers, agent, under


def _kind(rec: Any) -> tuple[str, str] | None:
    """("action" | "observation", its type) for an OpenHands event, else None."""
    if not isinstance(rec, dict):
        return None
    if text_field(rec, "source") not in _SOURCES:
        return None
    for key in ("action", "observation"):
        t = rec.get(key)
        if isinstance(t, str) and t:
            return key, t
    return None


def sniff(rec: Any) -> int:
    k = _kind(rec)
    if k is None:
        return 0
    other = "extras" if k[0] == "observation" else "args"
    return 3 if isinstance(rec.get(other), dict) or "id" in rec or "cause" in rec else 2


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """A bare list of events, or `{"trajectory": [...]}` (the UI's export), `{"history": [...]}`."""
    found = None
    if isinstance(doc, dict) and doc.get(FOLDER_KEY) is True:  # the session store, as one document
        events = [(f"events/{name}", r) for name, r in doc.get("events") or ()]
        return [(METADATA, doc.get("metadata"))] + _link(events)
    if isinstance(doc, list):
        found = [(f"[{i}]", r) for i, r in enumerate(doc)]
    elif isinstance(doc, dict):
        for key in ("trajectory", "history", "events"):
            if isinstance(doc.get(key), list):
                found = [(f"{key}[{i}]", r) for i, r in enumerate(doc[key])]
                break
    if not found or not any(_kind(r) for _, r in found[:50]):
        return None
    return _link(found)


def document_bonus(doc: Any) -> int:
    return 10 if isinstance(doc, dict) and doc.get(FOLDER_KEY) is True else 0


def _link(found: list) -> list:
    """Observations learn whether the action they answer is a call; events after a `delegate`
    action, up to its observation, are the delegated agent's and hang under that call (OpenHands
    runs a delegate on the same event stream: nothing else in its events says whose they are)."""
    calls: dict[Any, bool] = {}
    delegates: dict[Any, str] = {}  # open delegate action id → agent
    out = []
    for path, rec in found:
        k = _kind(rec)
        if k is None:
            out.append((path, rec))
            continue
        agent, under = _innermost(delegates)
        if k[0] == "action":
            action_id = _event_id(rec.get("id"))
            if action_id is not None:
                calls[action_id] = _is_call(rec, k[1])
                args = rec.get("args") if isinstance(rec.get("args"), dict) else {}
                if k[1] == "delegate" and calls[action_id]:
                    delegates[action_id] = as_text(args.get("agent") or "delegate")
            out.append((path, Linked(rec, None, agent, under)))
        else:
            cause = _event_id(rec.get("cause"))
            answers = calls.get(cause) if cause is not None else None
            if k[1] == "delegate" and cause is not None:
                delegates.pop(cause, None)
                agent, under = _innermost(delegates)
            out.append((path, Linked(rec, answers if answers is not None else False, agent, under)))
    return out


def _event_id(v: Any) -> int | str | None:
    """An event id or cause (JSON's true is none: as a key it would be id 1)."""
    return v if isinstance(v, (int, str)) and not isinstance(v, bool) else None


def _innermost(delegates: dict) -> tuple[str | None, str | None]:
    """(agent, its delegate call's id) of the delegate running now, if any."""
    if not delegates:
        return None, None
    action_id = next(reversed(delegates))
    return delegates[action_id], _call_id(action_id)


def _is_call(rec: dict, t: str) -> bool:
    return t not in _NOT_CALLS and text_field(rec, "source") == "agent"


def _call_id(action_id: Any) -> str:
    return f"oh-{action_id}"


def event(rec: Any, ref: Ref) -> Event:
    if ref.path == METADATA:
        return _metadata_card(rec, ref)
    k = _kind(rec)
    if k is None:
        return generic_event(rec, ref, NAME)
    ev = _action(rec, k[1], ref) if k[0] == "action" else _observation(rec, k[1], ref)
    ev.format = NAME
    if rec.get("id") is not None and not isinstance(rec.get("id"), (dict, list, bool)):
        ev.source_id = str(rec["id"])
    first_time(ev, rec.get("timestamp"))
    agent = getattr(rec, "agent", None)
    if agent and ev.role in ("assistant", "tool", "system") and ev.author is None:
        ev.author = agent
    under = getattr(rec, "under", None)
    if under and ev.parent is None:
        ev.parent = under  # the delegate's own events: shown under its call
    ev.meta = {k2: v for k2, v in rec.items() if k2 not in ("args", "content", "tool_call_metadata")}
    return ev


def _args(rec: dict) -> dict:
    return rec["args"] if isinstance(rec.get("args"), dict) else {}


def _action(rec: dict, t: str, ref: Ref) -> Event:
    args = _args(rec)
    source = text_field(rec, "source")
    role = "user" if source == "user" else "assistant" if source == "agent" else "system"
    ev = Event(ref, role)
    _usage(ev, rec)
    thought = args.get("thought") if isinstance(args.get("thought"), str) else ""
    if t == "message":
        content = args.get("content") if isinstance(args.get("content"), str) else rec.get("message")
        ev.blocks = [Text(content)] if isinstance(content, str) and content.strip() else []
        for url in args.get("image_urls") or () if isinstance(args.get("image_urls"), list) else ():
            if isinstance(url, str):
                ev.blocks.append(media_block({"image_url": url}, "image"))
        return ev
    if t == "system":
        text = as_text(args.get("content") or rec.get("message") or "")
        ev.role, ev.kind = "system", "system_prompt"
        ev.blocks = [Context(f"system prompt · {len(text):,} characters", text, "system")]
        tools = args.get("tools")
        if isinstance(tools, list) and tools:
            names = [as_text(x.get("function", {}).get("name")) for x in tools
                     if isinstance(x, dict) and isinstance(x.get("function"), dict)]
            ev.blocks.append(Notice(f"{len(tools)} tools: {', '.join(n for n in names if n)}"))
        return ev
    if t == "think":
        ev.blocks = [Thinking(thought)] if thought.strip() else []
        return ev
    if t in ("finish", "reject"):
        final = args.get("final_thought") if isinstance(args.get("final_thought"), str) else ""
        said = final or thought or (rec.get("message") if isinstance(rec.get("message"), str) else "")
        ev.blocks = [Text(said)] if said.strip() else []
        outputs = args.get("outputs")
        if isinstance(outputs, dict) and outputs:
            ev.blocks.append(Text(as_text(outputs), False))
        ev.blocks.append(Notice("the agent finished" if t == "finish" else "the agent gave up (reject)"))
        return ev
    if t == "recall":
        ev.role, ev.kind, ev.hidden, ev.hidden_reason = "system", "recall", True, "context lookup"
        ev.blocks = [Notice(f"looks up {as_text(args.get('recall_type') or 'context')}")]
        return ev
    if t == "change_agent_state":
        ev.role, ev.kind, ev.hidden, ev.hidden_reason = "system", "state", True, "agent state"
        ev.blocks = [Notice(f"agent state set to {as_text(args.get('agent_state'))}")]
        return ev
    if t == "condensation":
        ev.role, ev.kind = "system", "compaction"
        ev.blocks = condensation_blocks(_forgotten(args), args.get("summary"))
        return ev
    if t == "condensation_request":
        ev.role, ev.kind = "system", "compaction"
        ev.blocks = [Notice("the agent asked to condense its context")]
        return ev
    if not _is_call(rec, t):
        ev.kind = t
        ev.blocks = [Text(thought)] if thought.strip() else []
        ev.blocks.append(Notice(f"{t}" + (f": {as_text(rec['message'])}" if isinstance(rec.get("message"), str)
                                          and rec["message"].strip() else "")))
        return ev
    if thought.strip():
        ev.blocks.append(Text(thought))
    name, inp, raw = _call(rec, t, args)
    ev.blocks.append(ToolUse(_call_id(rec.get("id") if rec.get("id") is not None else f"L{ref.line}"),
                             name, inp, raw))
    return ev


def _call(rec: dict, t: str, args: dict) -> tuple[str, Any, str | None]:
    """The call as the model made it: its function and arguments from the response the metadata
    keeps, else the action's type and args."""
    meta = rec.get("tool_call_metadata") if isinstance(rec.get("tool_call_metadata"), dict) else {}
    fn = meta.get("function_name") if isinstance(meta.get("function_name"), str) and meta["function_name"] else None
    call_id = meta.get("tool_call_id")
    response = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
    for choice in response.get("choices") or () if isinstance(response.get("choices"), list) else ():
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for c in calls if isinstance(calls, list) else ():
            if isinstance(c, dict) and c.get("id") == call_id and isinstance(c.get("function"), dict):
                parsed, raw = parse_arguments(c["function"].get("arguments"))
                return fn or as_text(c["function"].get("name") or t), parsed, raw
    inp = {k: v for k, v in args.items() if k not in _NOISE and v not in (None, "", [], {})}
    if t == "run" and isinstance(args.get("command"), str):
        inp = {"command": args["command"], **{k: v for k, v in inp.items() if k != "command"}}
    return fn or _NAMES.get(t, t), inp, None


def _forgotten(args: dict) -> str:
    ids = args.get("forgotten_event_ids")
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if isinstance(start, int) and isinstance(end, int):
        return f"events {start}–{end}"
    if isinstance(ids, list) and ids:
        return f"{len(ids):,} event{'s' if len(ids) != 1 else ''}"
    return "earlier events"


def condensation_blocks(forgotten: str | None, summary: Any) -> list:
    """An OpenHands condensation (V0's and V1's): which events it forgot (None: not said) and the
    summary that stands for them, folded."""
    summarized = isinstance(summary, str) and bool(summary.strip())
    words = "context condensed" + (f": {forgotten} forgotten" if forgotten else "")
    blocks: list = [Notice(words + (" and summarized" if summarized else ""))]
    if summarized:
        blocks.append(Context("summary of the forgotten events", summary, "condensation"))
    return blocks


def _usage(ev: Event, rec: dict) -> None:
    """The model response an action came from: its model, usage and id (parallel actions of one
    response carry the same, counted once), and the call's cost from the event's metrics."""
    meta = rec.get("tool_call_metadata") if isinstance(rec.get("tool_call_metadata"), dict) else {}
    response = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else None
    cost = None
    if usage is not None:  # (an event without a response of its own: its metrics' last cost is another's)
        if isinstance(response.get("id"), str) and response["id"]:
            ev.message_id = response["id"]
        metrics = rec.get("llm_metrics") if isinstance(rec.get("llm_metrics"), dict) else {}
        costs = metrics.get("costs")
        if isinstance(costs, list) and costs and isinstance(costs[-1], dict):
            cost = costs[-1].get("cost")
    model_and_usage(ev, response.get("model"), usage, cost)


def _observation(rec: dict, t: str, ref: Ref) -> Event:
    extras = rec["extras"] if isinstance(rec.get("extras"), dict) else {}
    content = rec.get("content")
    cause = rec.get("cause")
    answers = getattr(rec, "answers", None)
    if answers is None:  # read without its document (one per line): by its type alone
        answers = t not in _NOT_RESULTS and _event_id(cause) is not None
    if t == "agent_state_changed":
        state = as_text(extras.get("agent_state") or "?")
        reason = extras.get("reason")
        ev = Event(ref, "system", "state", blocks=[Notice(f"agent state: {state}" + (
            f" ({as_text(reason)})" if reason else ""))])
        if state in _QUIET_STATES:
            ev.hidden, ev.hidden_reason = True, "agent state"
        if state == "error":
            ev.role = "error"
        return ev
    if t == "think" or t == "null":
        return Event(ref, "system", t, hidden=True, hidden_reason="bookkeeping",
                     blocks=result_content(content))
    if t == "recall" or t in ("microagent", "workspace_context"):
        text = content if isinstance(content, str) else as_text(content)
        blocks: list = []
        if text.strip():
            blocks.append(Context(f"{as_text(extras.get('recall_type') or 'workspace context')}", text, "recall"))
        knowledge = extras.get("microagent_knowledge")
        for k in knowledge if isinstance(knowledge, list) else ():
            if isinstance(k, dict):
                blocks.append(Context(f"microagent {as_text(k.get('name') or '?')}", as_text(k.get("content") or ""),
                                      "microagent"))
        for key in ("repo_instructions", "additional_agent_instructions"):
            if isinstance(extras.get(key), str) and extras[key].strip():
                blocks.append(Context(key.replace("_", " "), extras[key], "recall"))
        return Event(ref, "system", "context", blocks=blocks or [Notice("no context found")])
    if not answers:
        role = "error" if t == "error" else "system"
        blocks = [Notice(t)] + result_content(content) if t != "error" else result_content(content)
        return Event(ref, role, t, blocks=blocks)
    blocks = []
    error: bool | None = None
    state = None
    code = _exit_code(extras)
    if t == "error":
        error = True
    elif t == "user_rejected":
        error, state = True, DENIED
    elif rec.get("success") is False:
        error = True
    if code is not None and code != 0:
        error = True
        blocks.append(Text(f"exit code {code}", False))
    blocks += result_content(content)
    urls = extras.get("image_urls")
    for url in urls if isinstance(urls, list) else ():
        if isinstance(url, str):
            blocks.append(media_block({"image_url": url}, "image"))
    shot = extras.get("screenshot")
    if isinstance(shot, str) and shot.startswith("data:image/"):
        blocks.append(media_block({"image_url": shot}, "image"))
    ev = Event(ref, "tool", "tool_result", blocks=[ToolResult(_call_id(cause), blocks, error, state=state)])
    return ev


def _exit_code(extras: dict) -> int | None:
    meta = extras.get("metadata")
    code = meta.get("exit_code") if isinstance(meta, dict) else extras.get("exit_code")
    return code if isinstance(code, int) and not isinstance(code, bool) and code != -1 else None


def title_of(ev: Event) -> str | None:
    """The conversation's own title (the session store's metadata.json), else its first prompt."""
    if ev.kind == "session":
        title = ev.meta.get("title")
        if isinstance(title, str) and title.strip() and not _DEFAULT_TITLE.fullmatch(title.strip()):
            return title.strip()
        return None
    return prompt_first_line(ev)


# --- the session store ----------------------------------------------------------------------------
#
# OpenHands (V0) keeps a conversation as a folder (openhands/storage/locations.py:
# `sessions/<sid>/`, or `users/<user id>/conversations/<sid>/`): `events/<id>.json`, one event
# each as event_to_dict writes it, written once; `event_cache/<start>-<end>.json`, pages of 25 of
# the same events; `metadata.json` (ConversationMetadata: conversation_id, title, selected
# repository, created_at, last_updated_at, accumulated_cost, prompt / completion / total tokens…),
# which the CLI's conversations do not have; `agent_state.pkl`, `conversation_stats.pkl`. It is
# read as one session keyed by its metadata.json, or by `events/0.json` where there is none.

METADATA = "metadata.json"
FOLDER_KEY = "openhands_session_folder"  # marks the document `folder_document` builds
_STORE_FILE = re.compile(r"\d+\.json|\d+-\d+\.json")
_EVENT_FILE = re.compile(r"(\d+)\.json")
_DEFAULT_TITLE = re.compile(r"Conversation [0-9a-f]{5}")  # get_default_conversation_title


def _store_events(folder: Path) -> list[str]:
    """The event files of a store's `events/` folder, in id order."""
    try:
        with os.scandir(folder) as it:
            names = [e.name for e in it if _EVENT_FILE.fullmatch(e.name)]
    except OSError:
        return []
    return sorted(names, key=lambda n: int(n[:-5]))


def _conversation(path: Path) -> Path | None:
    """The conversation folder `path` may be the main file of: its metadata.json, or `events/0.json`
    of a conversation without one (what they hold says whether they are: `claims_file`)."""
    if path.name == METADATA:
        return path.parent
    if path.name == "0.json" and path.parent.name == "events":
        conv = path.parent.parent
        return conv if not (conv / METADATA).exists() else None
    return None


def _is_metadata(d: Any) -> bool:
    """Whether a decoded value is OpenHands' ConversationMetadata."""
    return isinstance(d, dict) and isinstance(d.get("conversation_id"), str) and bool(
        {"selected_repository", "github_user_id", "last_updated_at", "trigger"} & d.keys())


def claims_file(path: Path, head: bytes) -> bool:
    """A metadata.json with `events/0.json` beside it, or one that is OpenHands' own (written as
    the conversation is created, before its first event); an `events/0.json` of a conversation
    without one when it is an OpenHands event, or the event after it is (else each is read as the
    file it is)."""
    if _conversation(path) is None:
        return False
    if path.name == METADATA and (path.parent / "events" / "0.json").is_file():
        return True
    try:
        head_value = orjson.loads(head)
    except orjson.JSONDecodeError:
        head_value = None
    if path.name == METADATA:
        return _is_metadata(head_value)
    return _kind(head_value) is not None or _next_event_tells(path.parent)


def _next_event_tells(events: Path) -> bool:
    """Whether the event after a conversation's `events/0.json` that is no OpenHands event (a
    damaged one) is one: the conversation is then OpenHands', its first event an unknown card,
    rather than lost whole (its other event files are never listed alone). One more small file
    read, only for a folder whose first event does not tell."""
    names = _store_events(events)
    return len(names) > 1 and _kind(load_json_file(events / names[1])) is not None


def skip_folders(names: set) -> set:
    """A stored conversation's pages of cached events (its `events/` is walked: its event files are
    companions, never listed alone, and a folder named so may hold another tool's sessions)."""
    return {"event_cache"} if "events" in names and "event_cache" in names else set()


def is_companion(path: str) -> bool:
    """OpenHands' own session store (`sessions/<id>/events/<n>.json`, one event per file, and its
    `event_cache/<a>-<b>.json` chunks): pieces of a conversation, never listed one by one — but for
    `events/0.json` of a conversation without a metadata.json, which stands for it."""
    folder, name = os.path.split(path)
    if os.path.basename(folder) not in ("events", "event_cache") or not _STORE_FILE.fullmatch(name):
        return False
    if name == "0.json" and os.path.basename(folder) == "events":
        return os.path.exists(os.path.join(os.path.dirname(folder), METADATA))
    return True


def folder_document(path: Path) -> dict | None:
    conv = _conversation(path)
    if conv is None:
        return None
    folder = conv / "events"
    names = _store_events(folder)
    meta = load_json_file(conv / METADATA) if path.name == METADATA else None
    first = load_json_file(folder / names[0]) if names else None
    # (as `claims_file` tells it, before the other events are read: else the file is read as the
    # file it is)
    if path.name == METADATA:
        if not (names and names[0] == "0.json") and not _is_metadata(meta):
            return None
    elif not _kind(first) and not _next_event_tells(folder):
        return None
    events = [[n, first if i == 0 else load_json_file(folder / n)] for i, n in enumerate(names)]  # (lists:
    # see reader.cap_depth)
    return {FOLDER_KEY: True, "metadata": meta, "events": events}


def folder_identity(path: str) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) standing for a stored conversation: its main file's, its newest event
    file's time and their number (`common.events_folder_identity`)."""
    if not path.endswith((METADATA, "0.json")):  # (asked of every listed session: told cheaply)
        return None
    name = os.path.basename(path)
    if name == METADATA:
        events = os.path.join(os.path.dirname(path), "events")
    elif name == "0.json" and os.path.basename(os.path.dirname(path)) == "events":
        events = os.path.dirname(path)
    else:
        return None
    return events_folder_identity(path, events, _event_order)


def _event_order(name: str) -> tuple:
    m = _EVENT_FILE.fullmatch(name)
    return (0, int(m[1])) if m else (-1, 0)


def _metadata_card(meta: Any, ref: Ref) -> Event:
    """The conversation's metadata.json: a hidden card (its title is the session's title)."""
    ev = Event(ref, "system", "session", format=NAME, hidden=True, hidden_reason="conversation metadata")
    if not isinstance(meta, dict):
        ev.blocks = [Notice("no metadata.json (a conversation the CLI started)")] if meta is None else \
            [Data(meta, METADATA)]
        return ev
    facts = [f"{k.replace('_', ' ')} {as_text(meta[k])}"
             for k in ("selected_repository", "selected_branch", "llm_model") if isinstance(meta.get(k), str) and meta[k]]
    ev.blocks = [Notice("OpenHands conversation" + (": " + ", ".join(facts) if facts else "")), Data(meta, METADATA)]
    ev.meta = {k: meta[k] for k in ("title", "conversation_id") if isinstance(meta.get(k), str)}
    first_time(ev, meta.get("created_at"))
    return ev
