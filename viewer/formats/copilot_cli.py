"""GitHub Copilot CLI sessions: `~/.copilot/session-state/<session id>/events.jsonl` (a folder per
session, beside `workspace.yaml`, `plan.md`, `checkpoints/`, `rewind-snapshots/`), or, from its
first versions, `~/.copilot/session-state/<session id>.jsonl`.

The CLI appends one session event per line (github/copilot-sdk `session-events.schema.json`,
generated as `nodejs/src/generated/session-events.ts`): `{type, data, id, timestamp, parentId}`,
plus `agentId` on a sub-agent's events (older versions put `parentToolCallId` in `data` instead).
Events marked `ephemeral` (streaming deltas, per-call usage, idle…) are not written to the file;
they are read the same way if one is. One line → one event:

* `session.start` / `session.resume`: where and with which CLI version and model → a quiet notice
  (its model names the model of what follows); `session.model_change` → "model: a → b";
  `session.info` / `session.warning` → status notices, `session.error` → an error card;
  `session.truncation` / `session.compaction_complete` / `session.snapshot_rewind` → notices of
  what the context lost; `session.shutdown` → a card with its code changes and each model's input,
  output and cached tokens, requests and premium requests (the CLI's own totals: the messages record
  only their output tokens, so the usage tally, which would price those alone, does not count them);
* `system.message` → a folded context chip (the system prompt); `system.notification` → a notice;
* `user.message` → the person's prompt (`content`; `transformedContent`, what the model got, stays
  in the raw view), its attachments named (a selection as a context chip); a message another
  source injected (`source`: a skill, another agent) or autopilot's continuation is not a title;
* `assistant.message` → its `reasoningText` as thinking, its text, and each of `toolRequests`
  as a call with its own arguments (a JSON string parsed; a request with neither a name nor
  arguments shows itself as its input, named by its type); `model`; `outputTokens` kept with it
  (not tallied: see `session.shutdown`); `assistant.reasoning` → thinking;
  `assistant.usage` (a call's full token counts, when a client saved it) → the usage tally;
* `tool.execution_start` / `…_progress` / `…_partial_result` → the call is executing;
  `tool.execution_complete` → its result: `result.detailedContent` (the full text the CLI shows,
  diffs included) or `result.content`, images, links, embedded resources, items of types not known
  here and a shell's exit code from `result.contents` or
  the `<exited with exit code N>` line that ends a shell's output (non-zero: an error, as is
  `success: false`, with `error.message`);
* `permission.requested` → the call awaits permission; `permission.completed` → the answer: denied
  by the user (with their feedback shown), by rules or for want of anyone to ask (denied by
  settings), by a hook, or cancelled;
* `abort` → "turn aborted", every call still open interrupted;
* `subagent.started` / `.completed` / `.failed` → notices under the call that spawned the sub-agent
  (`toolCallId`); a sub-agent's own events hang under that call too: older CLIs name it in
  `data.parentToolCallId`, newer ones only by the envelope's `agentId`, which is that call's id
  (measured on CLI 1.0.69, see the fixtures' README);
* `skill.invoked` → a notice with the skill's text as a context chip; `tool.user_requested` → a
  call the person made; turn boundaries, hooks, binary assets and other bookkeeping → hidden;
* what the session's state became, as notices (copilot-sdk `session-events.ts`, the events the
  CLI persists): `session.mode_changed` (interactive / plan / autopilot) and
  `session.permissions_changed` ("mode: a → b"), `session.task_complete` (autopilot's "task
  complete" and the agent's summary of it, as prose), `session.handoff` (a session brought over
  from a remote one, its summary as prose, its context folded), `session.context_cleared`,
  `session.schedule_created` / `_cancelled` (/every, /after), `session.auto_mode_resolved` (the
  model auto mode chose); the plan and workspace files written, the autopilot objective's state
  file, a schedule re-armed, a mode notice delivered to the model, session limits, HydraFusion's
  routing and phases, a sub-agent's resolved configuration, an external tool's request (its call's
  card shows it) → hidden, their fields in their cards; a sub-agent torn down by cancellation
  (`subagent.completed` with `cancelled`) says "cancelled", not "finished";
* any other type → a quiet card with its data, never lost.

The session's name is not in its events (`session.title_changed` is ephemeral): the CLI keeps it in
the folder's `workspace.yaml` (`summary:`, the title it generates, shown by `/resume`; newer versions
`name:`, with `user_named: true` once /rename or the app named it). `session_info` reads it as the
session's title (`title`, ranked: a name the person gave over a generated one), over its first
prompt; `sidecars` names the file, so a rename made while the session is open shows.

`sniff`: a record with a dotted event `type` this module knows (or one of the CLI's event
families) and a `data` object is unmistakable (3).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from .. import files

from ..model import (AWAITING, BLOCKED_BY_HOOK, CANCELLED, DENIED, DENIED_BY_SETTINGS, INTERRUPTED, Context, Data,
                     Event, Notice, Ref, Text, Thinking, ToolResult, ToolUse)
from .common import (as_text, compaction_event, generic_event, media_block, model_and_usage, parse_arguments, set_time,
                     text_field)
from .openai_chat import prompt_title

NAME = "copilot-cli"
MODE = "jsonl"
EVENTS_FILE = "events.jsonl"  # a session kept as a folder: its events, listed by the folder's name

# event types of the schema, by family; a known family with an unknown type is still this format
_FAMILIES = ("session.", "user.", "assistant.", "tool.", "subagent.", "skill.", "hook.", "system.",
             "permission.", "user_input.", "elicitation.", "sampling.", "mcp.", "command.",
             "external_tool.", "model.", "pending_messages.", "exit_plan_mode.", "auto_mode_switch.")
_KNOWN = frozenset({
    "session.start", "session.resume", "session.error", "session.idle", "session.title_changed",
    "session.info", "session.warning", "session.model_change", "session.mode_changed",
    "session.plan_changed", "session.workspace_file_changed", "session.handoff", "session.truncation",
    "session.snapshot_rewind", "session.shutdown", "session.usage_checkpoint",
    "session.context_changed", "session.usage_info", "session.compaction_start",
    "session.compaction_complete", "session.task_complete", "session.binary_asset",
    "user.message", "assistant.turn_start", "assistant.turn_end", "assistant.message",
    "assistant.reasoning", "assistant.intent", "assistant.usage", "assistant.message_delta",
    "assistant.reasoning_delta", "assistant.idle", "abort", "tool.user_requested",
    "tool.execution_start", "tool.execution_partial_result", "tool.execution_progress",
    "tool.execution_complete", "skill.invoked", "subagent.started", "subagent.completed",
    "subagent.failed", "subagent.selected", "subagent.deselected", "hook.start", "hook.end",
    "system.message", "system.notification", "permission.requested", "permission.completed"})
# bookkeeping: hidden, its fields in its card (`_quiet`) and the record in the raw view
_HIDDEN = {"assistant.turn_start": "turn start", "assistant.turn_end": "turn end",
           "session.idle": "idle", "assistant.idle": "idle", "session.usage_checkpoint": "usage checkpoint",
           "session.usage_info": "context usage", "session.context_changed": "working directory",
           "session.compaction_start": "compaction started", "hook.start": "hook", "hook.end": "hook",
           "session.binary_asset": "binary asset", "assistant.intent": "intent",
           "assistant.message_delta": "streaming delta", "assistant.reasoning_delta": "streaming delta",
           "assistant.streaming_delta": "streaming delta", "assistant.tool_call_delta": "streaming delta",
           "pending_messages.modified": "queue", "session.title_changed": "title",
           "tool_search.activated": "tool search", "model.call_failure": "model call telemetry",
           "model.call_finished": "model call telemetry", "session.remote_steerable_changed": "remote steering",
           "session.plan_changed": "plan file", "session.workspace_file_changed": "workspace file",
           "session.schedule_rearmed": "schedule", "session.autopilot_objective_changed": "autopilot objective",
           "session.mode_notice_delivered": "mode notice", "session.session_limits_changed": "session limits",
           "session.todos_changed": "todos", "hook.progress": "hook",
           "session.fusion_route_started": "model routing", "session.fusion_route_failed": "model routing",
           "session.fusion_resolved": "model routing", "session.fusion_completed": "model routing",
           "assistant.fusion_phase_started": "model routing", "assistant.fusion_phase_completed": "model routing",
           "assistant.fusion_phase_failed": "model routing", "assistant.message_start": "streaming delta",
           "assistant.server_tool_progress": "streaming delta",
           "subagent.configured": "sub-agent configuration", "external_tool.requested": "external tool request"}
# permission answers (`PermissionResult.kind`) that refuse the call → the map's word for it
_REFUSALS = {"denied-interactively-by-user": (DENIED, "denied by the user"),
             "denied-by-rules": (DENIED_BY_SETTINGS, "denied by the permission rules"),
             "denied-no-approval-rule-and-could-not-request-from-user": (
                 DENIED_BY_SETTINGS, "denied: no rule allows it and nobody could be asked"),
             "denied-by-content-exclusion-policy": (DENIED_BY_SETTINGS,
                                                    "denied by the content exclusion policy"),
             "denied-by-permission-request-hook": (BLOCKED_BY_HOOK, "denied by a permission hook"),
             "cancelled": (CANCELLED, "permission request cancelled")}
_RUNNING = ("tool.execution_start", "tool.execution_progress", "tool.execution_partial_result")
_NOTIFICATION = re.compile(r"^\s*<system_notification>\s*(.*?)\s*</system_notification>\s*$", re.S)
_EXIT = re.compile(r"\n?<exited with exit code (-?\d{1,9})>\s*\Z")
_EXIT_TAIL = 100  # the end of a shell's output the `<exited …>` line is looked for in
_META_SKIP = frozenset({"content", "toolRequests", "reasoningText", "encryptedContent",
                        "reasoningOpaque", "transformedContent"})


def sniff(rec: Any) -> int:
    if rec.__class__ is not dict:
        return 0
    t = rec.get("type")
    if t.__class__ is not str or not isinstance(rec.get("data"), dict):
        return 0
    if t in _KNOWN or t.startswith(_FAMILIES):
        return 3
    return 0


def event(rec: Any, ref: Ref) -> Event:
    t = text_field(rec, "type") if isinstance(rec, dict) else None
    d = rec.get("data") if t else None
    if not isinstance(d, dict):
        return generic_event(rec, ref, NAME)
    read = _BY_TYPE.get(t)
    if read is not None:
        ev = read(d, ref)
    elif t in _HIDDEN:
        ev = Event(ref, "system", t, hidden=True, hidden_reason=_HIDDEN[t], blocks=_quiet(_HIDDEN[t], d))
        model_and_usage(ev, d.get("model"), None)
    else:  # a type newer than this reader: a quiet card with its data
        ev = Event(ref, "system", t, blocks=[Data(d, t)])
    ev.format = NAME
    if isinstance(rec.get("id"), str):
        ev.source_id = rec["id"]
    set_time(ev, rec.get("timestamp"))
    parent = d.get("parentToolCallId")
    if isinstance(parent, str) and parent and t != "subagent.started":
        ev.parent = parent
    agent = rec.get("agentId")
    if isinstance(agent, str) and agent:
        if ev.author is None:
            ev.author = f"sub-agent {agent}"
        if ev.parent is None:  # the CLI names a sub-agent by the id of the `task` call that spawned it
            ev.parent = agent
    ev.meta = {k: v for k, v in d.items() if k not in _META_SKIP
               and not (k == "result" and t == "tool.execution_complete")}
    for k in ("agentId", "ephemeral", "parentId"):
        if k in rec:
            ev.meta[f"event.{k}"] = rec[k]
    return ev


# --- session --------------------------------------------------------------------------------------


def _start(d: dict, ref: Ref, resumed: bool = False) -> Event:
    ctx = d.get("context") if isinstance(d.get("context"), dict) else {}
    where = ctx.get("cwd") if isinstance(ctx.get("cwd"), str) else None
    words = "session resumed" if resumed else "Copilot CLI session"
    if where:
        words += f" in {where}"
    facts = [f"branch {ctx['branch']}" if isinstance(ctx.get("branch"), str) else "",
             f"copilot {d['copilotVersion']}" if isinstance(d.get("copilotVersion"), str) else ""]
    facts = [f for f in facts if f]
    if facts:
        words += f" ({', '.join(facts)})"
    ev = Event(ref, "system", "session", blocks=[Notice(words)])
    model = d.get("selectedModel")
    if isinstance(model, str) and model:
        ev.model = model
        ev.blocks[0].text += f" · {model}"
    return ev


def _resume(d: dict, ref: Ref) -> Event:
    return _start(d, ref, resumed=True)


def _status(d: dict, ref: Ref, kind: str) -> Event:
    text = as_text(d.get("message")) or kind
    label = d.get("infoType") or d.get("warningType")
    words = f"{label}: {text}" if isinstance(label, str) and label and kind == "warning" else text
    if kind == "warning" and not words.lower().startswith("warning"):
        words = "warning · " + words
    blocks: list = [Notice(words)]
    if isinstance(d.get("tip"), str) and d["tip"]:
        blocks.append(Notice(f"tip: {d['tip']}"))
    return Event(ref, "status", kind, blocks=blocks)


def _error(d: dict, ref: Ref) -> Event:
    kind = d.get("errorType")
    words = as_text(d.get("message")) or "error"
    if isinstance(kind, str) and kind:
        words = f"{kind} error: {words}"
    if isinstance(d.get("statusCode"), int):
        words += f" (HTTP {d['statusCode']})"
    return Event(ref, "error", "session.error", blocks=[Notice(words)])


def _model_change(d: dict, ref: Ref) -> Event:
    new, old = d.get("newModel"), d.get("previousModel")
    words = f"model: {old} → {new}" if isinstance(old, str) and old else f"model: {as_text(new) or '?'}"
    ev = Event(ref, "system", "model_change", blocks=[Notice(words)])
    model_and_usage(ev, new, None)
    return ev


def _changed(what: str, kind: str, old_key: str, new_key: str):
    """A reader of a `{previous…, new…}` change: "what: a → b" (the mode, the permission mode)."""
    def read(d: dict, ref: Ref) -> Event:
        new, old = as_text(d.get(new_key)) or "?", d.get(old_key)
        words = f"{what}: {old} → {new}" if isinstance(old, str) and old else f"{what}: {new}"
        return Event(ref, "system", kind, blocks=[Notice(words)])
    return read


def _task_complete(d: dict, ref: Ref) -> Event:
    """Autopilot's end of a task (`session.task_complete`): whether it was accepted, the agent's
    summary of what it did as prose."""
    outcome = d.get("outcome")
    if d.get("success") is False or outcome in ("continue", "blocked"):
        words = "task not accepted as complete" + (f" ({outcome})" if isinstance(outcome, str) else "")
    else:
        words = "task complete"
    blocks: list = [Notice(words + (f": {d['reason']}" if isinstance(d.get("reason"), str) and d["reason"]
                                    else ""))]
    if isinstance(d.get("summary"), str) and d["summary"].strip():
        blocks.append(Text(d["summary"]))
    return Event(ref, "system", "task_complete", blocks=blocks)


def _handoff(d: dict, ref: Ref) -> Event:
    """A session handed over to this one (`session.handoff`: from a remote session, or a local
    one): where from, the work's summary as prose, the context it came with folded."""
    source = "a remote session" if d.get("sourceType") == "remote" else "another session"
    if isinstance(d.get("remoteSessionId"), str) and d["remoteSessionId"]:
        source += f" ({d['remoteSessionId']})"
    repo = d.get("repository") if isinstance(d.get("repository"), dict) else {}
    if isinstance(repo.get("owner"), str) and isinstance(repo.get("name"), str):
        source += f" of {repo['owner']}/{repo['name']}"
        if isinstance(repo.get("branch"), str) and repo["branch"]:
            source += f" on {repo['branch']}"
    blocks: list = [Notice(f"handed off from {source}")]
    if isinstance(d.get("summary"), str) and d["summary"].strip():
        blocks.append(Text(d["summary"]))
    if isinstance(d.get("context"), str) and d["context"].strip():
        blocks.append(Context("the context it was handed with", d["context"], "handoff"))
    return Event(ref, "system", "handoff", blocks=blocks)


def _context_cleared(d: dict, ref: Ref) -> Event:
    n = d.get("messagesCleared")
    words = f"context cleared: {n} message{'s' if n != 1 else ''}" if isinstance(n, int) \
        and not isinstance(n, bool) else "context cleared"
    blocks: list = [Notice(words)]
    if isinstance(d.get("initialMessage"), str) and d["initialMessage"].strip():
        blocks.append(Context("the message it started again with", d["initialMessage"], "copilot"))
    return Event(ref, "system", "context_cleared", blocks=blocks)


def _schedule(d: dict, ref: Ref) -> Event:
    """A prompt scheduled with /every or /after (`session.schedule_created`): its text (the label
    the CLI shows, `displayPrompt`, where there is one) and when it runs."""
    what = d.get("displayPrompt") if isinstance(d.get("displayPrompt"), str) and d["displayPrompt"] \
        else as_text(d.get("prompt"))
    when = ""
    if isinstance(d.get("cron"), str) and d["cron"]:
        when = f"cron {d['cron']}" + (f" ({d['tz']})" if isinstance(d.get("tz"), str) and d["tz"] else "")
    elif isinstance(d.get("intervalMs"), (int, float)) and not isinstance(d["intervalMs"], bool):
        when = f"every {_duration(d['intervalMs'] / 1000)}"
    elif d.get("selfPaced") is True:
        when = "when the agent sets its next run"
    number = f" #{d['id']}" if isinstance(d.get("id"), int) else ""
    words = f"scheduled prompt{number}" + (f" ({when})" if when else "") + (f": {what}" if what else "")
    return Event(ref, "system", "schedule", blocks=[Notice(words)])


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _auto_model(d: dict, ref: Ref) -> Event:
    """`session.auto_mode_resolved`: the model auto mode settled on, and how hard it judged the
    request."""
    model = d.get("chosenModel")
    words = f"auto mode chose {as_text(model) or 'a model'}"
    if isinstance(d.get("reasoningBucket"), str):
        words += f" ({d['reasoningBucket']} reasoning)"
    if d.get("fallback") is True:
        words += " · fallback"
    return Event(ref, "system", "auto_model", blocks=[Notice(words)])


def _truncation(d: dict, ref: Ref) -> Event:
    n, tokens = d.get("messagesRemovedDuringTruncation"), d.get("tokensRemovedDuringTruncation")
    words = "context truncated"
    if isinstance(n, int) and isinstance(tokens, int):
        words += f": {n} messages, {tokens:,} tokens dropped"
    return Event(ref, "system", "truncation", blocks=[Notice(words)])


def _compacted(d: dict, ref: Ref) -> Event:
    return compaction_event(ref, d.get("summaryContent"), d.get("summary"))


def _rewind(d: dict, ref: Ref) -> Event:
    n = d.get("eventsRemoved")
    words = f"rewound: {n} events removed" if isinstance(n, int) else "rewound"
    return Event(ref, "system", "rewind", blocks=[Notice(words)])


def _shutdown(d: dict, ref: Ref) -> Event:
    """The session's end: code changes and what each model was asked (its totals stay here)."""
    words = "session ended"
    if d.get("shutdownType") == "error":
        words += f" with an error: {as_text(d.get('errorReason'))}" if d.get("errorReason") else " with an error"
    blocks: list = [Notice(words)]
    changes = d.get("codeChanges") if isinstance(d.get("codeChanges"), dict) else {}
    files = changes.get("filesModified")
    if isinstance(files, list) and files:
        blocks.append(Notice(f"{len(files)} files changed, +{changes.get('linesAdded', 0)} "
                             f"−{changes.get('linesRemoved', 0)} lines: " + ", ".join(as_text(f) for f in files[:20])
                             + (" …" if len(files) > 20 else "")))
    metrics = d.get("modelMetrics") if isinstance(d.get("modelMetrics"), dict) else {}
    for model, m in metrics.items():
        if not isinstance(m, dict):
            continue
        u = m.get("usage") if isinstance(m.get("usage"), dict) else {}
        req = m.get("requests") if isinstance(m.get("requests"), dict) else {}
        parts = [f"{_num(u.get('inputTokens'))} in", f"{_num(u.get('outputTokens'))} out"]
        if u.get("cacheReadTokens"):
            parts.append(f"{_num(u['cacheReadTokens'])} cache read")
        if isinstance(req.get("count"), int):
            parts.append(f"{req['count']} requests")
        if isinstance(req.get("cost"), (int, float)) and not isinstance(req.get("cost"), bool):
            parts.append(f"{req['cost']:g} premium requests")
        blocks.append(Notice(f"{model}: " + ", ".join(parts)))
    return Event(ref, "system", "shutdown", blocks=blocks)


def _num(n: Any) -> str:
    return f"{n:,}" if isinstance(n, int) and not isinstance(n, bool) else "?"


def _system_message(d: dict, ref: Ref) -> Event:
    role = d.get("role") if isinstance(d.get("role"), str) else "system"
    label = f"{role} prompt" if role in ("system", "developer") else role
    return Event(ref, "system", "context", blocks=[Context(label, as_text(d.get("content")), "copilot")])


def _notification(d: dict, ref: Ref) -> Event:
    text = as_text(d.get("content"))
    m = _NOTIFICATION.match(text)
    return Event(ref, "system", "notification", blocks=[Notice(m.group(1) if m else text)])


# --- the conversation -----------------------------------------------------------------------------


def _user(d: dict, ref: Ref) -> Event:
    ev = Event(ref, "user")
    text = d.get("content")
    if isinstance(text, str) and text.strip():
        ev.blocks.append(Text(text))
    for att in d.get("attachments") if isinstance(d.get("attachments"), list) else ():
        ev.blocks.append(_attachment(att))
    source = d.get("source")
    if isinstance(source, str) and source and source != "user":
        ev.author = source  # another source's words: a skill's, another agent's
    elif d.get("isAutopilotContinuation"):
        ev.author = "autopilot"
    return ev


def _attachment(att: Any) -> Any:
    if not isinstance(att, dict):
        return Data(att, "attachment")
    kind = att.get("type")
    name = att.get("displayName") or att.get("path") or att.get("filePath") or att.get("url") or kind
    if kind == "selection" and isinstance(att.get("text"), str):
        return Context(f"selection in {as_text(name)}", att["text"], "selection")
    if kind == "blob" and isinstance(att.get("data"), str) and str(att.get("mimeType", "")).startswith("image/"):
        image = media_block(att, "image")
        image.name = as_text(name)
        return image
    return Notice(f"attached {kind or 'file'}: {as_text(name)}", att)


def _assistant(d: dict, ref: Ref) -> Event:
    ev = Event(ref, "assistant")
    reasoning = d.get("reasoningText")
    if isinstance(reasoning, str) and reasoning.strip():
        ev.blocks.append(Thinking(reasoning))
    text = d.get("content")
    if isinstance(text, str) and text.strip():
        ev.blocks.append(Text(text))
    requests = d.get("toolRequests") if isinstance(d.get("toolRequests"), list) else ()
    for n, req in enumerate(requests):
        if not isinstance(req, dict):
            ev.blocks.append(Data(req, "tool request"))
            continue
        cid = req.get("toolCallId")
        cid = cid if isinstance(cid, str) and cid else f"{ref.line}.{n}"
        if not ({"name", "arguments"} & req.keys()):  # a request of a shape not known: it says
            kind = req.get("type")
            ev.blocks.append(ToolUse(cid, kind if isinstance(kind, str) and kind else "?",
                                     {k: v for k, v in req.items() if k != "toolCallId"}))
            continue
        args, raw = parse_arguments(req.get("arguments"))
        ev.blocks.append(ToolUse(cid, str(req.get("name") or "?"), args, input_raw=raw))
    model_and_usage(ev, d.get("model"), None)
    # (`outputTokens` alone is not counted: a tally of output tokens without the input the call
    # read would price the session at a fraction of its cost; the session-end card has both)
    call = d.get("apiCallId") or d.get("messageId")
    ev.message_id = call if isinstance(call, str) and call else None
    return ev


def _reasoning(d: dict, ref: Ref) -> Event:
    text = d.get("content")
    blocks = [Thinking(text)] if isinstance(text, str) and text.strip() else []
    return Event(ref, "assistant", "reasoning", blocks=blocks, hidden=not blocks,
                 hidden_reason=None if blocks else "empty reasoning")


def _usage(d: dict, ref: Ref) -> Event:
    """A model call's usage (ephemeral: only a client that saved the stream has it)."""
    ev = Event(ref, "system", "usage", hidden=True, hidden_reason="token count")
    ev.usage = {"input_tokens": d.get("inputTokens") or 0, "output_tokens": d.get("outputTokens") or 0,
                "cache_read_input_tokens": d.get("cacheReadTokens") or 0,
                "cache_creation_input_tokens": d.get("cacheWriteTokens") or 0}
    model_and_usage(ev, d.get("model"), None)
    if isinstance(d.get("apiCallId"), str) and d["apiCallId"]:
        ev.message_id = d["apiCallId"]
    return ev


def _abort(d: dict, ref: Ref) -> Event:
    why = d.get("reason")
    ev = Event(ref, "system", "abort", blocks=[Notice(f"turn aborted: {as_text(why)}" if why else "turn aborted")])
    ev.states = {"*": INTERRUPTED}
    return ev


# --- tool calls -----------------------------------------------------------------------------------


def _user_tool(d: dict, ref: Ref) -> Event:
    """A call the person asked for themselves (`!command`): theirs, not the model's."""
    cid = d.get("toolCallId") if isinstance(d.get("toolCallId"), str) else f"{ref.line}.0"
    args, raw = parse_arguments(d.get("arguments"))
    return Event(ref, "user", "tool_request", author="user",
                 blocks=[ToolUse(cid, str(d.get("toolName") or "?"), args, input_raw=raw)])


def _running(d: dict, ref: Ref) -> Event:
    ev = Event(ref, "system", "tool_progress", hidden=True, hidden_reason="tool started")
    cid = d.get("toolCallId")
    if isinstance(cid, str) and cid:
        ev.running.append(cid)
    text = d.get("progressMessage") or d.get("partialOutput")
    if isinstance(text, str) and text:
        ev.blocks.append(Notice(text[:300]))
    else:  # (its call's card shows the rest: what runs, with which arguments)
        name = d.get("toolName") if isinstance(d.get("toolName"), str) and d["toolName"] else "a tool"
        ev.blocks.append(Notice(f"{name} started running"))
    return ev


def _quiet(reason: str, d: dict) -> list:
    """What a bookkeeping event's card (behind the toggle) shows: its fields; a streaming piece of
    a message only says what it is (its words, in the message's own card, would be found twice by
    a search)."""
    if reason == "streaming delta":
        return [Notice("a streaming piece of a message its own card shows whole")]
    fields = {k: v for k, v in d.items() if k not in _META_SKIP}
    return [Data(fields, f"{reason}: its fields")] if fields else [Notice(reason)]


def _complete(d: dict, ref: Ref) -> Event:
    cid = d.get("toolCallId")
    cid = cid if isinstance(cid, str) and cid else f"?{ref.line}"
    ok = d.get("success")
    blocks: list = []
    result = d.get("result")
    exit_code = None
    if isinstance(result, dict):
        text = result.get("detailedContent") or result.get("content")
        if isinstance(text, str) and text:
            text, exit_code = _exited(text)
            blocks.append(Text(text, markdown=False))
        elif text is not None:
            blocks.append(Data(text))
        contents = result.get("contents") if isinstance(result.get("contents"), list) else ()
        for c in contents:
            block = _content(c)
            if block is not None:
                blocks.append(block)
        exit_code = exit_code or _exit_code(contents)
    elif isinstance(result, str):  # the first versions wrote the text itself
        text, exit_code = _exited(result)
        blocks.append(Text(text, markdown=False))
    elif result is not None:
        blocks.append(Data(result))
    if exit_code:
        blocks.append(Notice(f"exit code {exit_code}"))
    err = d.get("error")
    if isinstance(err, dict):
        msg = as_text(err.get("message"))
        code = err.get("code")
        blocks.insert(0, Notice(f"{code}: {msg}" if isinstance(code, str) and code else msg or "failed"))
    elif isinstance(err, str) and err:
        blocks.insert(0, Notice(err))
    # a command that exited non-zero failed, whatever the tool said of its own run
    failed = ok is False or (ok is None and err is not None) or bool(exit_code)
    structured = {"toolTelemetry": d["toolTelemetry"]} if d.get("toolTelemetry") else None
    res = ToolResult(cid, blocks, True if failed else (False if ok is True else None), structured)
    return Event(ref, "tool", "tool_result", blocks=[res])


def _exited(text: str) -> tuple[str, int | None]:
    """A shell result's text without the `<exited with exit code N>` line the CLI ends it with,
    and N."""
    at = max(0, len(text) - _EXIT_TAIL)
    m = _EXIT.search(text, at)
    if m is None:
        return text, None
    return text[:m.start()], int(m.group(1))


def _exit_code(contents: list | tuple) -> int | None:
    """The exit code a shell's `shell_exit` / `terminal` item of a result's `contents` names."""
    for c in contents:
        if isinstance(c, dict) and c.get("type") in ("shell_exit", "terminal") \
                and isinstance(c.get("exitCode"), int) and not isinstance(c["exitCode"], bool):
            return c["exitCode"]
    return None


def _content(c: Any):
    """One of a result's `contents` worth showing beside its text: an image, a sound, a link, an
    embedded resource's text (the SDK's content types, MCP's: text, terminal, image, audio,
    resource_link, resource), and an item of a type not known here as what it holds (a text item
    is the result's text again; a shell's exit code is said once with it, by `_complete`)."""
    if not isinstance(c, dict):
        return Data(c, "content") if c is not None else None
    t = c.get("type")
    if t in ("text", "terminal", "shell_exit"):
        return None
    if t in ("image", "audio") and isinstance(c.get("data"), str):
        return media_block(c, t)
    if t == "resource_link" and isinstance(c.get("uri"), str):
        return Notice(f"resource: {c.get('title') or c.get('name') or ''} {c['uri']}".replace("  ", " "))
    res = c.get("resource") if t == "resource" else None
    if isinstance(res, dict) and isinstance(res.get("text"), str):
        return Text(res["text"], markdown=False)
    if isinstance(res, dict) and isinstance(res.get("uri"), str):
        return Notice(f"resource: {res['uri']}", res)
    return Data(c, t if isinstance(t, str) and t else "content")


def _permission_asked(d: dict, ref: Ref) -> Event:
    req = d.get("permissionRequest") if isinstance(d.get("permissionRequest"), dict) else {}
    ev = Event(ref, "system", "permission_request", hidden=True, hidden_reason="permission request")
    cid = req.get("toolCallId") or d.get("toolCallId")
    what = req.get("intention") or req.get("fullCommandText") or req.get("kind")
    ev.blocks.append(Notice(f"permission asked: {as_text(what)}" if what else "permission asked", req))
    if isinstance(cid, str) and cid and not d.get("resolvedByHook"):
        ev.states[cid] = AWAITING
    return ev


def _permission_answered(d: dict, ref: Ref) -> Event:
    result = d.get("result") if isinstance(d.get("result"), dict) else {}
    kind = result.get("kind") if isinstance(result.get("kind"), str) else ""
    word, words = _REFUSALS.get(kind, (None, f"permission {kind.replace('-', ' ')}" if kind
                                       else "permission answered"))
    ev = Event(ref, "system", "permission_answer", hidden=True, hidden_reason="permission answer",
               blocks=[Notice(words)])
    cid = d.get("toolCallId")
    if isinstance(cid, str) and cid and word:
        ev.states[cid] = word
    elif isinstance(cid, str) and cid and kind.startswith("approved"):
        ev.running.append(cid)
    feedback = result.get("feedback") or result.get("message")
    if isinstance(feedback, str) and feedback.strip() and kind in _REFUSALS:
        ev.hidden, ev.hidden_reason = False, None  # what the person said when they refused
        ev.blocks.append(Text(feedback, markdown=False))
    return ev


# --- sub-agents and skills ------------------------------------------------------------------------


def _subagent(d: dict, ref: Ref, how: str) -> Event:
    name = d.get("agentDisplayName") or d.get("agentName") or "sub-agent"
    if how == "finished" and d.get("cancelled") is True:
        how = "cancelled"  # torn down by its own abort or its parent's: reported as completed
    words = f"sub-agent {as_text(name)} {how}"
    if how == "started" and isinstance(d.get("agentDescription"), str) and d["agentDescription"]:
        words += f": {d['agentDescription']}"
    facts = []
    if isinstance(d.get("durationMs"), (int, float)) and not isinstance(d.get("durationMs"), bool):
        facts.append(f"{d['durationMs'] / 1000:.1f}s")
    if isinstance(d.get("totalToolCalls"), int):
        facts.append(f"{d['totalToolCalls']} tool calls")
    if isinstance(d.get("totalTokens"), int):
        facts.append(f"{d['totalTokens']:,} tokens")
    if facts:
        words += f" ({', '.join(facts)})"
    if how == "failed" and d.get("error"):
        words += f": {as_text(d['error'])}"
    ev = Event(ref, "system", f"subagent.{how}", blocks=[Notice(words)], author=as_text(name))
    if isinstance(d.get("toolCallId"), str) and d["toolCallId"]:
        ev.parent = d["toolCallId"]
    model_and_usage(ev, d.get("model"), None)
    return ev


def _selected(d: dict, ref: Ref) -> Event:
    name = d.get("agentDisplayName") or d.get("agentName")
    return Event(ref, "system", "agent_selected", blocks=[Notice(f"agent selected: {as_text(name)}")])


def _skill(d: dict, ref: Ref) -> Event:
    name = as_text(d.get("name")) or "?"
    blocks: list = [Notice(f"skill {name} invoked")]
    if isinstance(d.get("content"), str) and d["content"]:
        blocks.append(Context(f"skill {name}", d["content"], "skill"))
    return Event(ref, "system", "skill", blocks=blocks)


_BY_TYPE = {
    "session.start": _start, "session.resume": _resume,
    "session.info": lambda d, ref: _status(d, ref, "info"),
    "session.warning": lambda d, ref: _status(d, ref, "warning"),
    "session.error": _error, "session.model_change": _model_change, "session.truncation": _truncation,
    "session.compaction_complete": _compacted, "session.snapshot_rewind": _rewind,
    "session.shutdown": _shutdown, "system.message": _system_message,
    "system.notification": _notification, "user.message": _user, "assistant.message": _assistant,
    "assistant.reasoning": _reasoning, "assistant.usage": _usage, "abort": _abort,
    "tool.user_requested": _user_tool, "tool.execution_complete": _complete,
    "permission.requested": _permission_asked, "permission.completed": _permission_answered,
    "subagent.started": lambda d, ref: _subagent(d, ref, "started"),
    "subagent.completed": lambda d, ref: _subagent(d, ref, "finished"),
    "subagent.failed": lambda d, ref: _subagent(d, ref, "failed"),
    "subagent.selected": _selected,
    "subagent.deselected": lambda d, ref: Event(ref, "system", "agent_selected",
                                                blocks=[Notice("agent deselected: back to the default agent")]),
    "skill.invoked": _skill,
    "session.mode_changed": _changed("mode", "mode_changed", "previousMode", "newMode"),
    "session.permissions_changed": _changed("permissions", "permissions_changed", "previousMode", "mode"),
    "session.task_complete": _task_complete, "session.handoff": _handoff,
    "session.context_cleared": _context_cleared, "session.schedule_created": _schedule,
    "session.schedule_cancelled": lambda d, ref: Event(ref, "system", "schedule", blocks=[Notice(
        f"scheduled prompt #{d['id']} cancelled" if isinstance(d.get("id"), int) else "scheduled prompt cancelled")]),
    "session.auto_mode_resolved": _auto_model,
    **{t: _running for t in _RUNNING},
}


# --- the session folder ---------------------------------------------------------------------------


def skip_folders(names: set) -> set:
    """A session folder's own folders (checkpoints, rewind snapshots, files the agent kept): never
    sessions of their own."""
    if EVENTS_FILE in names and ("workspace.yaml" in names or "checkpoints" in names
                                 or "rewind-snapshots" in names):
        return set(names)
    return set()


WORKSPACE = "workspace.yaml"
WORKSPACE_LIMIT = 64 << 10  # a few lines of the session's metadata


def sidecars(main: Path) -> list[Path]:
    """The folder's `workspace.yaml`, which `session_info` reads: read again when the CLI rewrites it."""
    return [main.parent / WORKSPACE] if main.name == EVENTS_FILE else []


def session_info(main: Path) -> dict:
    """The name `workspace.yaml` gives the session (`title`, with its `title_rank`: 2 for a name
    the person gave, `user_named`, 1 for one the CLI generated), as `/resume` lists it."""
    if main.name != EVENTS_FILE:
        return {}
    try:
        data = yaml.load(files.read_file(main.parent / WORKSPACE, WORKSPACE_LIMIT),
                         Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    for key, rank in (("name", 2 if data.get("user_named") is True else 1), ("summary", 1)):
        title = data.get(key)
        if isinstance(title, str) and title.strip():
            return {"title": title.strip(), "title_rank": rank}
    return {}


def title_of(ev: Event) -> str | None:
    """The first prompt the person wrote (not a skill's or another agent's, not autopilot's)."""
    if ev.role != "user" or ev.kind != "message" or ev.hidden or ev.author:
        return None
    return prompt_title(ev.text())
