"""OpenHands V1 conversations (OpenHands/software-agent-sdk, `openhands-sdk`): the store the current
OpenHands app, its CLI and the agent server write, one JSON file per event.

On disk (`conversation/state.py` `ConversationState`, `conversation/event_store.py` `EventLog`,
`conversation/persistence_const.py`) a conversation is a folder, `<persistence_dir>/<id>/`
(the CLI's `~/.openhands/conversations/<id>/`, the agent server's `workspace/conversations/<id>/`):

    base_state.json                 ConversationState without its events: id, agent {llm {model,
                                    usage_id…}, tools…}, workspace {working_dir}, max_iterations,
                                    execution_status (idle | running | paused |
                                    waiting_for_confirmation | finished | error | stuck | deleting),
                                    stats {usage_to_metrics {usage_id: Metrics}}, …; written again
                                    whenever a field is set (a status change, above all)
    events/event-<idx:05d>-<event id>.json   one event each, written once (`model_dump_json(
                                    exclude_none=True)`), idx counting from 0 with no gaps
    events/.eventlog.lock, .eventlog-count-<n>.marker   the writers' bookkeeping

Every event is `{kind: <class name>, id, timestamp, source: agent | user | environment, …}`
(`event/base.py`; `kind` is the pydantic discriminator). Mapping:

* `MessageEvent` {llm_message {role, content [{type: text, text} | {type: image, image_urls}],
  reasoning_content, thinking_blocks}, activated_skills, extended_content, sender} → the user's
  prompt (its extended content as context chips), the agent's reply with its thinking, or a
  message from the environment.
* `SystemPromptEvent` {system_prompt {text}, tools [ToolDefinition], dynamic_context} → the system
  prompt, folded, its tools named.
* `ActionEvent` {thought [TextContent], reasoning_content, thinking_blocks, action {kind, …} | null,
  tool_name, tool_call_id, tool_call {id, name, arguments, origin}, llm_response_id, summary,
  security_risk} → the agent's words and thinking, then a call named `tool_name` with the arguments
  the model sent (`tool_call.arguments`, else the action's fields). `finish` (FinishAction
  {message}) is the agent's last words and a notice, `think` (ThinkAction {thought}) thinking:
  their observations are bookkeeping, hidden.
* `ObservationEvent` {tool_call_id, tool_name, action_id, observation {kind, content (a string or
  text / image blocks), is_error, exit_code, timeout…}} → the result of the call with that
  `tool_call_id`: `is_error` or a non-zero `exit_code` an error (the code said first), an exit code
  of -1 a command still running when the soft timeout came (said so).
* `UserRejectObservation` {rejection_reason, rejection_source: user | hook} → the call denied by
  the user, or blocked by a hook; `AgentErrorEvent` {tool_call_id, error} → the call failed with
  that error (an error card when no call has the id); `ConversationErrorEvent` {code, detail} → an
  error.
* `Condensation` {forgotten_event_ids, summary} → "context condensed: N events forgotten" with the
  summary folded; `CondensationRequest` and `CondensationSummaryEvent` → a notice, a folded summary.
* `PauseEvent`, `InterruptEvent` → notices; `ConversationStateUpdateEvent` {key, value} (the agent
  server's) → a notice for an execution status, else hidden; `TokenEvent` hidden.
* the conversation as `base_state.json` keeps it → a hidden card (its model and workspace), then
  each LLM's totals from `stats.usage_to_metrics` (one per usage id: calls, tokens, cache, the
  cost OpenHands computed) as the session's usage — the events themselves carry none; they come
  first, as the totals of the whole conversation so far (a turn result further on would end the
  calls still waiting for their observations) — and at the end its `execution_status` said
  plainly (finished, stopped on an error, stuck, paused, waiting for confirmation).

`folder_document` reads the folder as one document, keyed by its `base_state.json`; discovery does
not walk into `events/` (`skip_folders`), and `folder_identity` names the folder's state (the
events folder's time and its number of files) so a new event file shows live. Events are ordered
by their index; a file that does not parse stays in its place as an unparsed card.

Kept only in the raw view: `security_risk`, `critic_result`, `responses_reasoning_item`,
`reasoning_details`, per-call latencies, the agent's full configuration.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from ..model import BLOCKED_BY_HOOK, DENIED, Context, Data, Event, Notice, Ref, Text, Thinking, \
    ToolResult, ToolUse
from . import openai_chat
from .openhands import condensation_blocks
from .common import as_text, events_folder_identity, first_time, generic_event, load_json_file, \
    media_block, parse_arguments, prompt_first_line, text_field

NAME = "openhands_v1"
MODE = "document"

BASE_STATE = "base_state.json"
EVENTS_DIR = "events"
FOLDER_KEY = "openhands_v1_conversation"  # marks the document `folder_document` builds
_EVENT_NAME = re.compile(r"event-(\d{5,})-([0-9a-fA-F-]{8,})\.json")
_SOURCES = frozenset({"agent", "user", "environment"})
_SUB_AGENT = re.compile(r"\[Sub-agent ([0-9a-f]{1,8})( ERROR)?\]: ")
KINDS = frozenset({
    "MessageEvent", "ActionEvent", "ObservationEvent", "UserRejectObservation", "AgentErrorEvent",
    "SystemPromptEvent", "Condensation", "CondensationRequest", "CondensationSummaryEvent",
    "PauseEvent", "InterruptEvent", "ConversationStateUpdateEvent", "ConversationErrorEvent",
    "TokenEvent"})
# calls that are no call: what they say is the agent's own (their observations are bookkeeping)
_NOT_CALLS = frozenset({"finish", "think"})
_STATUS_WORDS = {
    "finished": ("finished", "system"),
    "error": ("stopped on an error", "error"),
    "stuck": ("stuck — OpenHands' stuck detector stopped the agent (the same steps over and over)", "error"),
    "paused": ("paused by the user", "system"),
    "waiting_for_confirmation": ("waiting for the user to confirm an action", "system"),
    "deleting": ("being deleted", "system"),
}
_QUIET_STATUSES = frozenset({"idle", "running"})
TERMINAL = frozenset({"finished", "error", "stuck"})


def _kind(rec: Any) -> str | None:
    if not isinstance(rec, dict):
        return None
    k = rec.get("kind")
    return k if isinstance(k, str) and k in KINDS and text_field(rec, "source") in _SOURCES else None


def sniff(rec: Any) -> int:
    k = _kind(rec)
    if k is None:
        return 0
    if k in ("MessageEvent",) and isinstance(rec.get("llm_message"), dict):
        return 3
    if k == "ActionEvent" and "tool_call_id" in rec:
        return 3
    if k in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent") and "tool_call_id" in rec:
        return 3
    return 2


def _is_state(d: Any) -> bool:
    """Whether a decoded value is a ConversationState (base_state.json)."""
    return isinstance(d, dict) and isinstance(d.get("agent"), dict) and "id" in d and (
        "execution_status" in d or "workspace" in d or "stats" in d)


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """A conversation folder read as one document, or a list of V1 events (`{"items": [...]}`, as
    the agent server's event search answers, or a bare list)."""
    if isinstance(doc, dict) and doc.get(FOLDER_KEY) is True:
        state = doc.get("state")
        out: list[tuple[str, Any]] = [(BASE_STATE, state)]
        # the totals come first: a turn result (`kind` "result") marks the calls before it as
        # answered or never to be, and these hold for the whole conversation, however far it is
        stats = state.get("stats") if _is_state(state) and isinstance(state.get("stats"), dict) else {}
        metrics = stats.get("usage_to_metrics")
        for usage_id, m in metrics.items() if isinstance(metrics, dict) else ():
            if isinstance(m, dict):
                out.append((f"stats.usage_to_metrics.{usage_id}", _Ending(m, "usage", str(usage_id))))
        out += _link([(f"{EVENTS_DIR}/{name}", rec) for name, rec in doc.get("events") or ()])
        if _is_state(state):
            out.append(("status", _Ending(state, "status")))
        return out
    found = None
    if isinstance(doc, list):
        found = [(f"[{i}]", r) for i, r in enumerate(doc)]
    elif isinstance(doc, dict):
        for key in ("items", "events"):
            if isinstance(doc.get(key), list):
                found = [(f"{key}[{i}]", r) for i, r in enumerate(doc[key])]
                break
    if not found or not any(sniff(r) == 3 for _, r in found[:50]):
        return None
    return _link(found)


def document_bonus(doc: Any) -> int:
    return 10 if isinstance(doc, dict) and doc.get(FOLDER_KEY) is True else 0


class Linked(dict):
    """An event with what only the stream around it says (never serialised): whether the call an
    observation answers is one the viewer shows as a call."""

    answers: bool | None

    def __init__(self, rec: dict, answers: bool | None):
        super().__init__(rec)
        self.answers = answers


class _Ending(dict):
    """A record the folder's base_state.json adds at the end: its status, or one LLM's totals."""

    what: str
    usage_id: str

    def __init__(self, rec: dict, what: str, usage_id: str = ""):
        super().__init__(rec)
        self.what, self.usage_id = what, usage_id


def _link(found: list) -> list:
    calls: dict[str, bool] = {}
    out = []
    for path, rec in found:
        k = _kind(rec)
        cid = rec.get("tool_call_id") if k else None
        if k == "ActionEvent" and isinstance(cid, str):
            calls[cid] = text_field(rec, "tool_name") not in _NOT_CALLS
            out.append((path, rec))
        elif k in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            out.append((path, Linked(rec, calls.get(cid) if isinstance(cid, str) else None)))
        else:
            out.append((path, rec))
    return out


# --- events ---------------------------------------------------------------------------------------


def event(rec: Any, ref: Ref) -> Event:
    if isinstance(rec, _Ending):
        return _status(rec, ref) if rec.what == "status" else _totals(rec, ref)
    if ref.path == BASE_STATE:
        return _state_card(rec, ref)
    k = _kind(rec)
    if k is None:
        return generic_event(rec, ref, NAME)
    ev = _HANDLERS[k](rec, ref)
    ev.format = NAME
    if isinstance(rec.get("id"), str):
        ev.source_id = rec["id"]
    first_time(ev, rec.get("timestamp"))
    ev.meta = {key: v for key, v in rec.items() if key not in ("llm_message", "observation", "tool_call", "action")}
    return ev


def _texts(content: Any) -> str:
    """The text of a list of TextContent (or a plain string)."""
    if isinstance(content, str):
        return content
    parts = []
    for c in content if isinstance(content, list) else ():
        if isinstance(c, dict) and isinstance(c.get("text"), str):
            parts.append(c["text"])
    return "\n".join(parts)


def _content_blocks(content: Any, markdown: bool) -> list:
    """Message or observation content: a string, or text and image blocks."""
    if isinstance(content, str):
        return [Text(content, markdown)] if content.strip() else []
    out: list = []
    for c in content if isinstance(content, list) else ():
        if not isinstance(c, dict):
            out.append(Data(c))
        elif isinstance(c.get("text"), str):
            if c["text"].strip():
                out.append(Text(c["text"], markdown))
        elif isinstance(c.get("image_urls"), list):
            out += [media_block({"image_url": u}, "image") for u in c["image_urls"] if isinstance(u, str)]
        else:
            out.append(Data(c, as_text(c.get("type") or "content")))
    return out


def _message(rec: dict, ref: Ref) -> Event:
    source = text_field(rec, "source")
    msg = rec["llm_message"] if isinstance(rec.get("llm_message"), dict) else {}
    role = "user" if source == "user" else "assistant" if source == "agent" else "system"
    ev = Event(ref, role)
    if role == "assistant":
        ev.blocks += openai_chat.thinking_blocks(msg)
        if isinstance(rec.get("llm_response_id"), str):
            ev.message_id = rec["llm_response_id"]
    ev.blocks += _content_blocks(msg.get("content"), markdown=True)
    if role == "system":
        ev.kind = "environment"
        ev.blocks.insert(0, Notice("message from the environment"))
    sender = rec.get("sender")
    if isinstance(sender, str) and sender:
        ev.author = sender
    if role == "user":
        _from_sub_agent(ev)
    skills = rec.get("activated_skills")
    if isinstance(skills, list) and skills:
        ev.blocks.append(Notice("skills activated: " + ", ".join(as_text(s) for s in skills)))
    extended = _texts(rec.get("extended_content"))
    if extended.strip():
        ev.blocks.append(Context("context OpenHands added", extended, "extended_content"))
    return ev


def _from_sub_agent(ev: Event) -> None:
    """A message the delegate tool's sub-agent sent back (openhands-tools delegate, its first
    form: each reply of a sub-conversation reaches the parent as a user message
    `[Sub-agent <id[:8]>]: <text>`, a failure as `[Sub-agent <id[:8]> ERROR]: <error>`) reads as
    from that sub-agent, not as the person's prompt. The sub-conversation itself is not saved (a
    LocalConversation without a persistence folder): its words here are all there is of it."""
    first = next((b for b in ev.blocks if b.kind == "text"), None)
    m = _SUB_AGENT.match(first.text) if first is not None else None
    if m is None:
        return
    ev.kind, ev.author = "comm", f"sub-agent {m[1]}"
    first.text = first.text[m.end():]
    if m[2]:
        ev.blocks.insert(0, Notice("the sub-agent failed"))


def _system(rec: dict, ref: Ref) -> Event:
    prompt = rec.get("system_prompt")
    text = _texts([prompt]) if isinstance(prompt, dict) else as_text(prompt or "")
    ev = Event(ref, "system", "system_prompt")
    ev.blocks = [Context(f"system prompt · {len(text):,} characters", text, "system")]
    dynamic = rec.get("dynamic_context")
    if isinstance(dynamic, dict) and isinstance(dynamic.get("text"), str) and dynamic["text"].strip():
        ev.blocks.append(Context("conversation context", dynamic["text"], "system"))
    tools = rec.get("tools")
    if isinstance(tools, list) and tools:
        names = [_tool_name(t) for t in tools]
        ev.blocks.append(Notice(f"{len(tools)} tools: {', '.join(n for n in names if n)}"))
    return ev


def _tool_name(t: Any) -> str:
    if not isinstance(t, dict):
        return ""
    for v in (t.get("name"), (t.get("function") or {}).get("name") if isinstance(t.get("function"), dict) else None,
              (t.get("annotations") or {}).get("title") if isinstance(t.get("annotations"), dict) else None):
        if isinstance(v, str) and v:
            return v
    kind = t.get("kind")
    return kind if isinstance(kind, str) else ""


def _action(rec: dict, ref: Ref) -> Event:
    ev = Event(ref, "assistant")
    if isinstance(rec.get("llm_response_id"), str):
        ev.message_id = rec["llm_response_id"]
    ev.blocks += openai_chat.thinking_blocks(rec)
    thought = _texts(rec.get("thought"))
    name = text_field(rec, "tool_name") or ""
    action = rec["action"] if isinstance(rec.get("action"), dict) else None
    call = rec["tool_call"] if isinstance(rec.get("tool_call"), dict) else {}
    if name == "finish":
        said = action.get("message") if action and isinstance(action.get("message"), str) else ""
        ev.blocks += [Text(t) for t in (thought, said) if t.strip()]
        ev.blocks.append(Notice("the agent finished"))
        return ev
    if name == "think":
        said = action.get("thought") if action and isinstance(action.get("thought"), str) else ""
        if thought.strip():
            ev.blocks.append(Text(thought))
        ev.blocks.append(Thinking(said))
        return ev
    if thought.strip():
        ev.blocks.append(Text(thought))
    summary = rec.get("summary")
    if isinstance(summary, str) and summary.strip():
        ev.blocks.append(Notice(summary))
    if "arguments" in call:
        inp, raw = parse_arguments(call.get("arguments"))
    else:
        inp = {k: v for k, v in (action or {}).items() if k != "kind"}
        raw = None
    cid = rec.get("tool_call_id")
    ev.blocks.append(ToolUse(cid if isinstance(cid, str) and cid else f"ohv1-L{ref.line}",
                             name or as_text(call.get("name") or "tool"), inp, raw))
    if action is None and name:  # (None is not written: exclude_none)
        ev.blocks.append(Notice("not run: OpenHands could not make an action of this call"))
    return ev


def _result_event(rec: dict, ref: Ref, blocks: list, error: bool | None, state: str | None = None) -> Event:
    answers = getattr(rec, "answers", None)
    cid = rec.get("tool_call_id")
    if answers is False:  # a finish's or a think's observation: bookkeeping
        return Event(ref, "system", "bookkeeping", hidden=True, hidden_reason="bookkeeping", blocks=blocks)
    if not isinstance(cid, str) or not cid or (answers is None and isinstance(rec, Linked)):
        role = "error" if error else "system"
        return Event(ref, role, "tool_result_unlinked",
                     blocks=[Notice(f"result of {as_text(rec.get('tool_name') or 'a call')}")] + blocks)
    return Event(ref, "tool", "tool_result", blocks=[ToolResult(cid, blocks, error, state=state)])


def _observation(rec: dict, ref: Ref) -> Event:
    obs = rec["observation"] if isinstance(rec.get("observation"), dict) else {}
    blocks: list = []
    error = obs.get("is_error") is True
    code = obs.get("exit_code")
    if code is None and isinstance(obs.get("metadata"), dict):
        code = obs["metadata"].get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        if code == -1:
            blocks.append(Notice("still running when the soft timeout came (exit code -1)"))
        elif code != 0:
            error = True
            blocks.append(Text(f"exit code {code}", False))
    if obs.get("timeout") is True:
        blocks.append(Notice("the command timed out"))
    blocks += _content_blocks(obs.get("content"), markdown=False)
    extended = _texts(rec.get("extended_content"))
    if extended.strip():
        blocks.append(Context("context OpenHands added", extended, "extended_content"))
    return _result_event(rec, ref, blocks, error or None)


def _rejected(rec: dict, ref: Ref) -> Event:
    reason = rec.get("rejection_reason")
    hook = rec.get("rejection_source") == "hook"
    words = reason if isinstance(reason, str) and reason.strip() else "rejected"
    return _result_event(rec, ref, [Text(words, False)], True, BLOCKED_BY_HOOK if hook else DENIED)


def _agent_error(rec: dict, ref: Ref) -> Event:
    err = rec.get("error")
    blocks = [Text(err if isinstance(err, str) else as_text(err), False)]
    ev = _result_event(rec, ref, blocks, True)
    if ev.kind == "tool_result_unlinked":
        ev.role, ev.kind = "error", "agent_error"
    return ev


def _conversation_error(rec: dict, ref: Ref) -> Event:
    code, detail = rec.get("code"), rec.get("detail")
    blocks: list = [Notice(f"conversation error: {as_text(code or '?')}")]
    if isinstance(detail, str) and detail.strip():
        blocks.append(Text(detail, False))
    return Event(ref, "error", "conversation_error", blocks=blocks)


def _condensation(rec: dict, ref: Ref) -> Event:
    ids = rec.get("forgotten_event_ids")
    n = len(ids) if isinstance(ids, list) else 0
    forgotten = f"{n:,} event{'s' if n != 1 else ''}" if n else None
    return Event(ref, "system", "compaction", blocks=condensation_blocks(forgotten, rec.get("summary")))


def _condensation_request(rec: dict, ref: Ref) -> Event:
    reason = rec.get("reason")
    why = {"manual": "asked for", "context_limit": "the context window was full",
           "unrecoverable": "after an error it could not recover from"}.get(reason if isinstance(reason, str) else "")
    return Event(ref, "system", "compaction_request",
                 blocks=[Notice("condensation requested" + (f" ({why})" if why else ""))])


def _condensation_summary(rec: dict, ref: Ref) -> Event:
    summary = rec.get("summary")
    return Event(ref, "system", "compaction", blocks=[
        Context("summary of the condensed conversation", summary if isinstance(summary, str) else as_text(summary),
                "condensation")])


def _pause(rec: dict, ref: Ref) -> Event:
    return Event(ref, "system", "pause", blocks=[Notice("paused by the user")])


def _interrupt(rec: dict, ref: Ref) -> Event:
    reason = rec.get("reason")
    words = "interrupted by the user"
    if isinstance(reason, str) and reason.strip() and reason != "User requested interrupt":
        words += f": {reason}"
    return Event(ref, "system", "interrupt", blocks=[Notice(words)])


def _state_update(rec: dict, ref: Ref) -> Event:
    key, value = rec.get("key"), rec.get("value")
    if key == "execution_status" and isinstance(value, str):
        words, role = _STATUS_WORDS.get(value, (value, "system"))
        ev = Event(ref, role, "state", blocks=[Notice(f"status: {words}")])
        if value in _QUIET_STATUSES:
            ev.hidden, ev.hidden_reason = True, "agent state"
        return ev
    return Event(ref, "system", "state", hidden=True, hidden_reason="state update",
                 blocks=[Notice(f"state update: {as_text(key)}")])


def _token(rec: dict, ref: Ref) -> Event:
    return Event(ref, "system", "tokens", hidden=True, hidden_reason="token ids", blocks=[Notice("token ids")])


_HANDLERS = {
    "MessageEvent": _message, "SystemPromptEvent": _system, "ActionEvent": _action,
    "ObservationEvent": _observation, "UserRejectObservation": _rejected, "AgentErrorEvent": _agent_error,
    "ConversationErrorEvent": _conversation_error, "Condensation": _condensation,
    "CondensationRequest": _condensation_request, "CondensationSummaryEvent": _condensation_summary,
    "PauseEvent": _pause, "InterruptEvent": _interrupt, "ConversationStateUpdateEvent": _state_update,
    "TokenEvent": _token,
}


# --- base_state.json -------------------------------------------------------------------------------


def _model_of(state: dict) -> str | None:
    agent = state.get("agent") if isinstance(state.get("agent"), dict) else {}
    llm = agent.get("llm") if isinstance(agent.get("llm"), dict) else {}
    model = llm.get("model")
    return model if isinstance(model, str) and model else None


def _state_card(state: Any, ref: Ref) -> Event:
    if not isinstance(state, dict):
        return generic_event(state, ref, NAME)
    ev = Event(ref, "system", "session", format=NAME, hidden=True, hidden_reason="conversation state")
    facts = []
    model = _model_of(state)
    if model:
        ev.model = model
        facts.append(f"model {model}")
    ws = state.get("workspace") if isinstance(state.get("workspace"), dict) else {}
    if isinstance(ws.get("working_dir"), str):
        facts.append(f"workspace {ws['working_dir']}")
    status = state.get("execution_status")
    if isinstance(status, str):
        facts.append(f"status {status}")
    ev.blocks = [Notice("OpenHands conversation" + (": " + ", ".join(facts) if facts else "")),
                 Data({k: v for k, v in state.items() if k not in ("stats",)}, BASE_STATE)]
    if isinstance(state.get("id"), str):
        ev.source_id = state["id"]
    ev.meta = {"execution_status": status} if isinstance(status, str) else {}
    return ev


def _status(state: dict, ref: Ref) -> Event:
    status = state.get("execution_status")
    if not isinstance(status, str) or status in _QUIET_STATUSES:
        words = {"running": "running", "idle": "idle (waiting for a message)"}.get(
            status if isinstance(status, str) else "", "not recorded")
        return Event(ref, "system", "state", format=NAME, hidden=True, hidden_reason="agent state",
                     blocks=[Notice(f"conversation status: {words}")])
    words, role = _STATUS_WORDS.get(status, (status, "system"))
    return Event(ref, role, "state", format=NAME, blocks=[Notice(f"conversation status: {words}")])


def _count(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def _totals(m: dict, ref: Ref) -> Event:
    """One LLM's totals (a usage id: the agent's, the condenser's, the title maker's…): a result
    holding its tokens and the cost OpenHands computed, counted as the session's usage."""
    tokens = m.get("accumulated_token_usage") if isinstance(m.get("accumulated_token_usage"), dict) else {}
    prompt, out = _count(tokens.get("prompt_tokens")), _count(tokens.get("completion_tokens"))
    read, write = _count(tokens.get("cache_read_tokens")), _count(tokens.get("cache_write_tokens"))
    cost = m.get("accumulated_cost")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 else None
    calls = len(m["token_usages"]) if isinstance(m.get("token_usages"), list) else None
    model = m.get("model_name") if isinstance(m.get("model_name"), str) and m["model_name"] else None
    ev = Event(ref, "system", "result", format=NAME, model=model)
    # litellm's prompt_tokens count the cached and cache-written input too (usage.tokens_of)
    ev.usage = {"prompt_tokens": prompt, "completion_tokens": out,
                "prompt_tokens_details": {"cached_tokens": read}, "cache_creation_input_tokens": write}
    if cost is not None:
        ev.usage["cost"] = cost
    words = f"usage · {ref.path.rsplit('.', 1)[-1] if ref.path else 'llm'}"  # (its model: the card's)
    if calls is not None:
        words += f": {calls:,} call{'s' if calls != 1 else ''}"
    words += f", {prompt:,} tokens in" + (f" ({read:,} from cache)" if read else "") + f", {out:,} out"
    if cost is not None:
        words += f" · ${cost:,.4f}"
    ev.blocks = [Notice(words)]
    return ev


def title_of(ev: Event) -> str | None:
    """The first prompt's first line."""
    return prompt_first_line(ev)


# --- the folder -----------------------------------------------------------------------------------


def _events_dir(path: Path) -> Path | None:
    if path.name != BASE_STATE:
        return None
    d = path.parent / EVENTS_DIR
    return d if d.is_dir() else None


def claims_file(path: Path, head: bytes) -> bool:
    """A `base_state.json` with an `events/` folder beside it (or, before the first event, one that
    reads as a ConversationState)."""
    if path.name != BASE_STATE:
        return False
    if _events_dir(path) is not None:
        return True
    try:
        return _is_state(orjson.loads(head))
    except orjson.JSONDecodeError:
        return False


def skip_folders(names: set) -> set:
    """A conversation's `events/` (read with its base_state.json) and `observations/` (full
    command outputs the terminal saved)."""
    if BASE_STATE in names:
        return names & {EVENTS_DIR, "observations"}
    return set()


def is_companion(path: str) -> bool:
    """An event file of a conversation: a piece of it, never listed alone."""
    folder, name = os.path.split(path)
    return os.path.basename(folder) == EVENTS_DIR and bool(_EVENT_NAME.fullmatch(name))


def _event_names(folder: Path) -> list[str]:
    """The event files in the order OpenHands reads them (by index); other `.json` files after."""
    try:
        with os.scandir(folder) as it:
            names = [e.name for e in it if e.name.endswith(".json") and not e.name.startswith(".")]
    except OSError:
        return []

    def order(n: str) -> tuple:
        m = _EVENT_NAME.fullmatch(n)
        return (0, int(m[1]), n) if m else (1, 0, n)

    return sorted(names, key=order)


def folder_document(path: Path) -> dict | None:
    """The conversation whose base_state.json is `path`, read as one document; else None."""
    if path.name != BASE_STATE:
        return None
    state = load_json_file(path)
    events_dir = path.parent / EVENTS_DIR
    if not events_dir.is_dir() and not _is_state(state):
        return None
    events = [[n, load_json_file(events_dir / n)] for n in _event_names(events_dir)]  # (lists: depth is capped
    # through lists and dicts only, reader.cap_depth)
    return {FOLDER_KEY: True, "state": state, "events": events}


def folder_identity(path: str) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) standing for a conversation folder: base_state.json's, the newest
    event file's time and their number (`common.events_folder_identity`: an event file is written
    once, so a new one is what changes)."""
    if not path.endswith(os.sep + BASE_STATE):
        return None
    return events_folder_identity(path, os.path.join(os.path.dirname(path), EVENTS_DIR), _event_order)


def _event_order(name: str) -> tuple:
    m = _EVENT_NAME.fullmatch(name)
    return (0, int(m[1])) if m else (-1, 0)


def session_info(main: Path) -> dict:
    """Whether the conversation has ended (its status finished, error or stuck)."""
    if main.name != BASE_STATE:
        return {}
    state = load_json_file(main)  # (whole: a long conversation's stats grow it past any head)
    status = state.get("execution_status") if isinstance(state, dict) else None
    return {"finished": True} if isinstance(status, str) and status in TERMINAL else {}
