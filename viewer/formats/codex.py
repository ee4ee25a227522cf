"""OpenAI Codex CLI session files ("rollouts"): `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`.

Codex writes every session as it runs, one record per line (codex-rs `protocol.rs` `RolloutLine` /
`RolloutItem`, `core/src/rollout/recorder.rs`). Three layouts, all read here:

* the envelope (codex_cli_rs, Sept 2025 on): `{"timestamp", "type", "payload"}` with type
  - `session_meta`: id, cwd, originator, cli_version, instructions (later `base_instructions:
    {text}`), git, `source` (cli / exec / vscode, or `{"subagent": "review" | {"thread_spawn":
    {parent_thread_id, depth, agent_nickname, agent_role}}}` for a spawned thread) → a quiet notice
    with the base instructions as a folded context chip;
  - `turn_context`: the turn's model, cwd, approval / sandbox policy, effort → hidden, its model
    names the model of what follows (the usage tally carries it);
  - `response_item`: a Responses API item, read as `openai_chat` reads one (messages, reasoning,
    function / custom / local shell calls and their outputs, hosted calls), with what is Codex's own
    on top: the context Codex injects as user or developer messages (`<environment_context>`,
    `<user_instructions>`, AGENTS.md, `<permissions instructions>`…) is a folded context card, not
    the person's words; a command's output text `Exit code: N\nWall time: …\nOutput:\n…` (or the
    unified exec's `Process exited with code N`, or older versions' JSON `{"output", "metadata":
    {"exit_code", "duration_seconds"}}`) is unwrapped and a non-zero exit is an error;
  - `event_msg`: the UI's events. `user_message` / `agent_message` / `agent_reasoning` repeat
    response items and are hidden (raw view); `token_count` carries the usage of the model call
    just made (`last_token_usage`, recorded twice per call: both lines name the same running total,
    which serves as the call's message id so it is counted once); `turn_aborted` interrupts every
    call still open; review mode, errors, a rollback of turns (`thread_rolled_back`) and an undo's
    outcome are notices; a command's `item_completed` (`CommandExecution`) that says it failed
    fails its call (`_outcome`); the rest (`context_compacted` too, which the `compacted` record
    beside it says with its summary) is hidden, its fields a data block in its card (a plan item's text as
    prose); a type this reader does not know is hidden too, its fields open in its card;
  - `compacted`: the summary that replaced the history → a summary card;
  - `world_state` (`{full, state}`: the comparison state for the next turn's context) → hidden,
    its state a data block; `inter_agent_communication` (`{author, recipient, other_recipients,
    content, trigger_turn}`, agent paths) → a message card "author → recipient";
    `inter_agent_communication_metadata` → hidden (codex-rs/protocol/src/protocol.rs RolloutItem);
    the response items `agent_message` (the same message as the model's history holds it) and
    `context_compaction` read as those records and a compaction are;
  - codex-cli 0.147-0.153 also write `token_usage_record` (a response's usage, the numbers of the
    `token_count` beside it: hidden, never counted twice), `realtime_item` (voice transcript
    segments), `retained_context` (accepted answers), the response item `configuration_update`
    and the event `thread_settings_applied` (the model and effort from there on): hidden, said for
    what they are; every line's `ordinal`, and a spawned thread's copy of its parent's history
    before its `subagent_history_start_ordinal`, and a fork's boundary (`history_base`: its
    history before is the parent's, by reference; see `follow`); a user message's
    `content_item_kinds` say which of its items are the person's;
  - any other record type (newer than this reader) → a quiet data card of its payload.
  Among the events, a guardian's (the auto-reviewer's) verdict on an action is in sight and a dynamic tool's failed answer too (`_guardian`, `_dynamic`: shapes from
  approvals.rs GuardianAssessmentEvent and dynamic_tools.rs / protocol.rs).
* the bare layout (before Sept 2025): a first line `{"id", "timestamp", "instructions", "git"}`,
  then bare response items and `{"record_type": "state"}` bookkeeping lines (hidden).
* the TypeScript CLI's single document `rollout-*.json`: `{"session": {id, timestamp,
  instructions}, "items": [response items]}`.

A thread Codex spawns is a rollout of its own: see "spawned threads" below.

Detection: an envelope record, a bare header or a state line scores 3; the bare layout's items are
credited with `openai_chat`'s score through `EXTENDS` once one of that layout's marks is seen
(`layout_mark`), so a plain Responses item list without them stays `openai-chat`, even with an
envelope line among its items.

Kept only in the raw view: encrypted reasoning, and the `event_msg` copies of messages (their
cards say what they are). Hidden cards (turn contexts, token counts, exec / patch events) say what
they are, their fields in a data block or a notice's details.
"""

from __future__ import annotations

import re
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import orjson

from .. import compressed, files, keys
from ..model import INTERRUPTED, Context, Data, Event, Notice, Ref, Text, ToolResult
from . import openai_chat
from .common import as_text, compaction_event, first_time, generic_event, result_content, text_field

NAME = "codex"
MODE = "jsonl"
EXTENDS = openai_chat

_ENVELOPE = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted",
                       "world_state", "inter_agent_communication", "inter_agent_communication_metadata",
                       "token_usage_record", "realtime_item", "retained_context"})
_HEADER_KEYS = frozenset({"id", "timestamp", "instructions", "git"})
# event_msg types that repeat a response item (the conversation is read from those)
# (`context_compacted` says what the `compacted` record beside it says with its summary)
_COPIES = frozenset({"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
                     "agent_message_delta", "agent_reasoning_delta", "context_compacted"})
_NOTICES = {"entered_review_mode": "review started",
            "exited_review_mode": "review ended", "error": "error", "stream_error": "stream error",
            "warning": "warning"}
# event_msg types known here and kept behind the toggle (their fields in the card): a turn's or a
# task's bounds, and the UI's events of calls whose response items the page shows (codex-rs
# `rollout/policy.rs` persists these, some only in its "extended" mode). Any other type is one
# newer than this reader: behind the toggle too, its fields open in the card
_QUIET = frozenset({"task_started", "task_complete", "turn_started", "turn_complete",
                    "exec_command_begin", "exec_command_end", "patch_apply_begin", "patch_apply_end",
                    "mcp_tool_call_begin", "mcp_tool_call_end", "web_search_begin", "web_search_end",
                    "image_generation_end", "view_image_tool_call", "plan_update", "turn_diff",
                    "session_configured", "background_event", "undo_started", "item_started",
                    "item_completed", "thread_goal_updated", "thread_name_updated",
                    "collab_agent_spawn_begin", "collab_agent_spawn_end",
                    "collab_agent_interaction_begin", "collab_agent_interaction_end",
                    "collab_waiting_begin", "collab_waiting_end", "collab_close_begin",
                    "collab_close_end", "collab_resume_begin", "collab_resume_end",
                    # (rollout/policy.rs at 851c9d5: persisted always) a runtime-injected
                    # message's display text, whose response item the page shows as context
                    "injected_message"})
# what Codex injects as a user or developer message: (opening, label)
_INJECTED = (("<environment_context>", "environment"), ("<user_instructions>", "user instructions"),
             ("# AGENTS.md instructions", "AGENTS.md"), ("<INSTRUCTIONS>", "instructions"),
             ("<permissions instructions>", "permissions"), ("<user_shell_command>", "shell command"),
             ("<turn_aborted>", "turn aborted"), ("<skill>", "skill"),
             ("<collaboration_mode>", "collaboration mode"), ("<subagent_notification>", "sub-agent"),
             # (codex-cli 0.147-0.153: context-fragments/src/fragment.rs markers, as a reader of
             # those rollouts lists them: plugin suggestions, a goal, internal and external context,
             # a hook's prompt)
             ("<recommended_plugins>", "recommended plugins"), ("<goal_context>", "goal"),
             ("<codex_internal_context", "internal context"), ("<external_", "external context"),
             ("<hook_prompt", "hook prompt"))
# `internal_chat_message_metadata_passthrough.content_item_kinds` (one per content item, newer
# rollouts): the kinds that are the person's own input; any other kind is context Codex injected
_PERSONS_KINDS = ("", "unknown", "images.preparation_error", "images.unsupported", "audio.unsupported")
# response items that only Codex's undo reads (`ResponseItem::GhostSnapshot`: a git commit of the tree)
_BOOKKEEPING_ITEMS = frozenset({"ghost_snapshot"})
# the IDE extension's and the desktop app's wrapper around the person's prompt
_IDE_HEADS = ("# Context from my IDE setup:", "# Files mentioned by the user:")
_IDE_REQUEST = "## My request for Codex:"
_EXEC_HEAD = re.compile(
    r"(?:Chunk ID: [^\n]*\n)?(?:Exit code: (?P<exit>-?\d+)\n)?Wall time: [^\n]*\n"
    r"(?:Process exited with code (?P<code>-?\d+)\n|Process running with session ID (?P<session>\S+)\n)?"
    r"(?:Original token count: [^\n]*\n)?(?:Total output lines: [^\n]*\n)?Output:\n?")


def sniff(rec: Any) -> int:
    if rec.__class__ is not dict:
        return 0
    t = rec.get("type")
    if t.__class__ is str and t in _ENVELOPE and "payload" in rec:
        return 3
    if rec.get("record_type") == "state" or _header(rec):
        return 3
    return 0


def layout_mark(rec: Any) -> bool:
    """A mark of the bare layout, whose items are plain Responses items (see `detect.adapter_score`)."""
    return rec.get("record_type") == "state" or _header(rec)


def _header(rec: dict) -> bool:
    """The bare layout's first line: `{"id", "timestamp", "instructions", "git"}` and nothing else."""
    return "id" in rec and "timestamp" in rec and len(rec) > 2 and rec.keys() <= _HEADER_KEYS


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """The TypeScript CLI's `{"session": {...}, "items": [...]}`: the header, then the items."""
    if not (isinstance(doc, dict) and isinstance(doc.get("session"), dict)
            and isinstance(doc.get("items"), list)):
        return None
    head = {k: v for k, v in doc["session"].items() if k in _HEADER_KEYS}
    return [("session", head)] + [(f"items[{i}]", r) for i, r in enumerate(doc["items"])]


def event(rec: Any, ref: Ref) -> Event:
    if rec.__class__ is not dict:
        return generic_event(rec, ref, NAME)
    t = rec.get("type")
    payload = rec.get("payload")
    if t.__class__ is str and "payload" in rec:
        read = _BY_TYPE.get(t)
        if read is None or payload.__class__ is not dict:
            ev = generic_event(payload, ref, NAME, t)  # a record type newer than this reader
            ev.role = "system"
        else:
            ev = read(payload, ref)
        ev.format = NAME
        first_time(ev, rec.get("timestamp"))
        if (n := _ordinal(rec.get("ordinal"))) is not None:
            ev.meta = {**ev.meta, _ORDINAL: n}  # (the envelope's; `follow` reads it)
        return ev
    if rec.get("record_type") == "state":
        more = {k: v for k, v in rec.items() if k != "record_type"}
        return Event(ref, "system", "state", hidden=True, hidden_reason="bookkeeping", format=NAME,
                     meta=rec, blocks=[Notice("state of the session", more or None)])
    if _header(rec):
        return _session(rec, ref)
    return _item(rec, ref)


def _session(meta: dict, ref: Ref) -> Event:
    """`session_meta` (or the bare header): where and how the session started."""
    facts = [as_text(meta[k]) for k in ("originator", "cli_version") if meta.get(k)]
    words = f"Codex session in {meta['cwd']}" if isinstance(meta.get("cwd"), str) else "Codex session"
    if facts:
        words += f" ({' '.join(facts)})"
    source = _source(meta.get("source"))
    if source:
        words += f" · {source}"
    start, _ = _history_start(meta)
    if isinstance(meta.get("forked_from_id"), str) and meta["forked_from_id"]:
        # SessionMeta.forked_from_id (protocol.rs): a thread /fork made from another; a paginated
        # one names where (see "a thread's history before its own records" below)
        words += f" · forked from thread {meta['forked_from_id']}"
        if start:
            words += f" at record {start}: the conversation before it is that thread's"
    elif start and not meta.get("subagent_history_start_ordinal"):
        words += f" · goes on from record {start} of an earlier rollout of the thread"
    ev = Event(ref, "system", "session", format=NAME, blocks=[Notice(words)], meta=meta)
    text = meta.get("instructions")
    base = meta.get("base_instructions")
    if isinstance(base, dict):
        text = base.get("text")
    if isinstance(text, str) and text.strip():
        ev.blocks.append(Context("base instructions", text, "instructions"))
    if isinstance(meta.get("id"), str):
        ev.source_id = meta["id"]
    first_time(ev, meta.get("timestamp"))
    return ev


def _source(source: Any) -> str:
    """Who started the session, said when it is not the person: a sub-agent or a spawned thread."""
    sub = source.get("subagent") if isinstance(source, dict) else None
    if isinstance(sub, str):
        return f"{sub} sub-agent"
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    if isinstance(spawn, dict):
        who = spawn.get("agent_nickname") or spawn.get("agent_role")
        return f"sub-agent{f' {who}' if who else ''} spawned by thread {as_text(spawn.get('parent_thread_id'))}"
    if isinstance(sub, dict) and sub:
        return f"{next(iter(sub))} sub-agent"
    return ""


def _turn_context(ctx: dict, ref: Ref, kind: str = "turn_context") -> Event:
    ev = Event(ref, "system", kind, hidden=True, hidden_reason="turn context", meta=ctx)
    if isinstance(ctx.get("model"), str) and ctx["model"]:
        ev.model = ctx["model"]
    said = [f"{label} {ctx[k]}" for k, label in (("model", "model"), ("effort", "effort"),
                                                   ("approval_policy", "approval"))
            if isinstance(ctx.get(k), str) and ctx[k]]
    ev.blocks = [Notice(kind.replace("_", " ") + (": " + ", ".join(said) if said else ""), ctx)]
    return ev


def _item(item: dict, ref: Ref) -> Event:
    """A response item, read as `openai_chat` reads it, then Codex's own meanings on top."""
    t = text_field(item, "type")
    if t in _BOOKKEEPING_ITEMS:
        return Event(ref, "system", t, hidden=True, hidden_reason="snapshot", format=NAME, meta=item,
                     blocks=[Notice("a snapshot of the working tree, for an undo", _fields(item))])
    if t == "agent_message":
        return _agent_message(item, ref)
    if t == "configuration_update":
        # `{reasoning: {effort}}`: the effort the model is asked for from here on (a durable
        # control among the inputs, as a turn context's: behind the toggle)
        reasoning = item.get("reasoning")
        effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
        words = f"reasoning effort set to {effort}" if isinstance(effort, str) and effort else \
            "configuration update"
        return Event(ref, "system", t, hidden=True, hidden_reason="turn context", format=NAME, meta=item,
                     blocks=[Notice(words, _fields(item))])
    if t == "context_compaction":  # ResponseItem::ContextCompaction: the API's compaction item
        item = {**item, "type": "compaction"}
    ev = openai_chat.event(item, ref)
    ev.format = NAME
    if t == "function_call" and item.get("namespace") not in (None, "", "functions") \
            and isinstance(item["namespace"], str):
        # FunctionCall.namespace: a namespaced tool's name comes without it (protocol ToolName
        # shows as `namespace.name`, the default `functions` namespace unnamed)
        for use in ev.tool_uses():
            use.name = f"{item['namespace']}.{use.name}"
    if ev.role in ("user", "system") and ev.kind == "message":
        _mark_injected(ev, _item_kinds(item))
    elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        ev.blocks = [_exec_result(b, item.get("output")) if b.kind == "tool_result" else b
                     for b in ev.blocks]
        child = _spawned(item.get("output"))
        if child is not None and isinstance(item.get("call_id"), str):
            ev.spawns = {item["call_id"]: child}  # (made a thread key by the index)
    elif t == "web_search_call" and item.get("status") == "completed" and not ev.tool_results():
        # Codex keeps the search, not its results (they went to the model): done is all it says
        ev.blocks += [ToolResult(u.id, [Notice("searched; the results went to the model only")])
                      for u in ev.tool_uses()]
    return ev


def _item_kinds(item: dict) -> list | None:
    """The kind of each text item of a user message, where newer Codex annotates them
    (`internal_chat_message_metadata_passthrough.content_item_kinds`, one per content item:
    `user.*` the person's, e.g. `environment_context` injected); None where it does not."""
    meta = item.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
    content = item.get("content")
    if not isinstance(kinds, list) or not isinstance(content, list) or len(kinds) != len(content) or not kinds:
        return None
    return [k for k, c in zip(kinds, content) if isinstance(c, dict) and isinstance(c.get("text"), str)]


def _mark_injected(ev: Event, kinds: list | None = None) -> None:
    """A user message that is Codex's injected context (or any developer message) becomes a folded
    context card: its text is for the model, not written by the person; context beside a prompt is
    a chip before it (the IDE's too). Where Codex names each item's kind (`kinds`), the kind says
    which text is the person's; else the text's opening does."""
    if ev.role == "user" and kinds is None:
        ev.blocks = [part for b in ev.blocks for part in (_ide_split(b) if b.kind == "text" else (b,))]
    texts = [b for b in ev.blocks if b.kind == "text"]
    if not texts:
        return
    if kinds is not None and len(kinds) == len(texts):
        labels = [None if not isinstance(k, str) or k.startswith("user.") or k in _PERSONS_KINDS
                  else k.replace("_", " ") for k in kinds]
    else:
        labels = [_injected(b.text) for b in texts]
    if ev.role == "user" and not all(labels):
        if kinds is not None and any(labels):
            said = dict(zip(map(id, texts), labels))
            ev.blocks = [Context(said[id(b)], b.text, "codex") if said.get(id(b)) else b for b in ev.blocks]
        return
    ev.role, ev.kind = "system", "context"
    ev.blocks = [Context(label or "developer instructions", b.text, "codex") if b.kind == "text" else b
                 for b, label in zip(texts, labels)] + [b for b in ev.blocks if b.kind != "text"]


def _ide_split(block: Text) -> tuple:
    """`# Context from my IDE setup: … ## My request for Codex:\n<prompt>` → (context, prompt)."""
    text = block.text
    at = text.find(_IDE_REQUEST) if text.startswith(_IDE_HEADS) else -1
    if at < 0:
        return (block,)
    head, prompt = text[:at].strip(), text[at + len(_IDE_REQUEST):].strip()
    return (Context("IDE context", head, "ide"), Text(prompt, block.markdown))


def _injected(text: str) -> str | None:
    head = text.lstrip()[:40]
    return next((label for opening, label in _INJECTED if head.startswith(opening)), None)


def _exec_result(result: ToolResult, output: Any) -> ToolResult:
    """A command's output: Codex's `Exit code / Wall time / Output:` wrapper (or older versions'
    JSON `{"output", "metadata": {"exit_code"}}`) taken off, a non-zero exit an error."""
    if isinstance(output, str) and output[:1] == "{" and '"metadata"' in output:
        try:
            doc = orjson.loads(output)
        except orjson.JSONDecodeError:
            doc = None
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        if isinstance(meta, dict) and "output" in doc:
            return _exited(result, result_content(as_text(doc["output"])), meta.get("exit_code"))
    if isinstance(output, str) and (m := _EXEC_HEAD.match(output)):
        code = m["exit"] or m["code"]
        blocks = result_content(output[m.end():])
        if m["session"]:
            blocks.insert(0, Notice(f"still running (session {m['session']})"))
        return _exited(result, blocks, int(code) if code else None)
    return result


def _exited(result: ToolResult, blocks: list, code: Any) -> ToolResult:
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return ToolResult(result.tool_use_id, [Notice(f"exit code {code}"), *blocks], True,
                          state=result.state)
    return ToolResult(result.tool_use_id, blocks, result.is_error, state=result.state)


def _event_msg(msg: dict, ref: Ref) -> Event:
    t = text_field(msg, "type")
    if t == "token_count":
        return _token_count(msg, ref)
    if t == "turn_aborted":
        why = msg.get("reason")
        ev = Event(ref, "system", "turn_aborted", blocks=[Notice(
            f"turn aborted: {as_text(why)}" if why else "turn aborted")], meta=msg)
        ev.states = {"*": INTERRUPTED}
        return ev
    if t in _NOTICES:
        text = msg.get("message") if isinstance(msg.get("message"), str) else None
        ev = Event(ref, "error" if t in ("error", "stream_error") else "system", t, meta=msg,
                   blocks=[Notice(_NOTICES[t])] + ([Text(text, markdown=False)] if text else []))
        return ev
    if t == "thread_rolled_back":  # `/undo` of whole turns (ThreadRolledBackEvent)
        n = msg.get("num_turns")
        words = (f"rolled back: the last {n} turn{'s' if n != 1 else ''} left the conversation"
                 if isinstance(n, int) and not isinstance(n, bool) else "rolled back")
        more = {k: v for k, v in _fields(msg).items() if k != "num_turns"}
        return Event(ref, "system", t, blocks=[Notice(words, more or None)], meta=msg)
    if t == "thread_settings_applied" and isinstance(msg.get("thread_settings"), dict):
        # `{thread_settings: {model, model_provider_id, reasoning_effort, cwd, …}}`: what the
        # thread runs with from here on, a turn context's like (its model names what follows)
        return _turn_context({"model": msg["thread_settings"].get("model"),
                              "effort": msg["thread_settings"].get("reasoning_effort"),
                              **msg["thread_settings"]}, ref, t)
    if t == "undo_completed":  # UndoCompletedEvent {success, message}: the tree put back, or not
        ok, text = msg.get("success"), msg.get("message")
        blocks = [Notice("undo failed" if ok is False else "undo completed")]
        if isinstance(text, str) and text.strip():
            blocks.append(Text(text, markdown=False))
        return Event(ref, "error" if ok is False else "system", "undo", blocks=blocks, meta=msg)
    fields = _fields(msg)
    if t in _COPIES:  # said, not shown again: its words would be found twice by a search
        blocks = [Notice("the interface's copy of what a card beside it shows")]
    elif t == "item_completed" and isinstance(msg.get("item"), dict) and msg["item"].get("type") == "Plan" \
            and isinstance(msg["item"].get("text"), str):
        # a plan (plan mode's `<proposed_plan>`): the one record of it as Codex parsed it
        blocks = [Notice("plan"), Text(msg["item"]["text"])]
    elif t == "item_completed" and isinstance(msg.get("item"), dict) \
            and msg["item"].get("type") == "CommandExecution":
        return _command_ended(msg, msg["item"], ref)
    elif t == "injected_message" and isinstance(msg.get("content"), str):
        # InjectedMessageEvent {content, source}: "transcript-safe display text for a
        # runtime-injected message" (protocol.rs)
        source = msg.get("source")
        blocks = [Notice(f"injected message{f' from {source}' if isinstance(source, str) and source else ''}:"
                         " its display text"), Text(msg["content"], markdown=False)]
    elif t == "guardian_assessment":
        return _guardian(msg, ref)
    elif t in ("dynamic_tool_call_request", "dynamic_tool_call_response"):
        return _dynamic(msg, ref, t)
    elif t == "thread_name_updated" and isinstance(msg.get("thread_name"), str):
        blocks = [Notice(f"thread named “{msg['thread_name']}”", fields)]
    elif t in _QUIET:
        blocks = [Data(fields, f"{t.replace('_', ' ')}: its fields")] if fields else []
    else:  # a type newer than this reader: the record as written, open in its card (its type first)
        blocks = [Data(msg, "unknown")]
        return Event(ref, "system", t or "event", hidden=True, hidden_reason="unknown codex event",
                     blocks=blocks, meta=msg)
    return Event(ref, "system", t or "event", hidden=True,
                 hidden_reason="duplicate" if t in _COPIES else "codex event", blocks=blocks, meta=msg)


def _command_ended(msg: dict, item: dict, ref: Ref) -> Event:
    """`item_completed` of a `CommandExecution` (codex-rs protocol items.rs CommandExecutionItem,
    fields camelCase: `{id, command, status: inProgress | completed | failed | declined, exitCode,
    aggregatedOutput, …}`; its `id` is the call's `call_id`, as core's tool events give it): the
    command's last word, behind the toggle (its output is the call's result). A `failed` status or
    a non-zero exit fails the call, whatever its output said (see `_outcome`)."""
    status, code = item.get("status"), _exit_code(item)
    command = item.get("command")
    command = " ".join(map(as_text, command)) if isinstance(command, list) else as_text(command or "")
    failed = status == "failed" or bool(code)
    words = (f"command failed{f' with exit code {code}' if code is not None else ''}" if failed
             else f"command {as_text(status or 'ended')}") + (f": {command}" if command else "")
    ev = Event(ref, "system", "item_completed", hidden=True, hidden_reason="codex event", meta=msg,
               blocks=[Notice(words, _fields(msg))])
    if failed and isinstance(item.get("id"), str) and item["id"]:
        ev.states = {item["id"]: "failed"}
    return ev


def _exit_code(item: dict) -> int | None:
    code = item.get("exitCode", item.get("exit_code"))
    return code if isinstance(code, int) and not isinstance(code, bool) else None


# GuardianAssessmentStatus (codex-rs/protocol/src/approvals.rs, snake_case): what the card says
_GUARDIAN = {"approved": "auto-review approved", "denied": "auto-review denied",
             "timed_out": "auto-review timed out", "aborted": "auto-review aborted",
             "in_progress": "auto-review in progress"}


def _guardian(msg: dict, ref: Ref) -> Event:
    """GuardianAssessmentEvent {id, target_item_id?, turn_id, started_at_ms, completed_at_ms?,
    status, risk_level?, user_authorization?, rationale?, decision_source?, action: {type:
    command | execve | apply_patch | network_access | mcp_tool_call | request_permissions, …}}:
    the auto-reviewer's verdict on an action that needed approval. A verdict is in sight (a review
    that timed out as an error; a denial is the reviewer's answer, not a failure), with what was
    reviewed, its risk and the reviewer's reasons; a review still in
    progress (the same id is written again when it ends) is behind the toggle."""
    status = text_field(msg, "status") or ""
    words = _GUARDIAN.get(status, f"auto-review {status}".strip())
    action = _guardian_action(msg.get("action"))
    if action:
        words += f": {action}"
    facts = [f"{k.replace('_', ' ')} {msg[k]}" for k in ("risk_level", "user_authorization")
             if isinstance(msg.get(k), str) and msg[k]]
    if isinstance(msg.get("started_at_ms"), int) and isinstance(msg.get("completed_at_ms"), int) \
            and msg["completed_at_ms"] >= msg["started_at_ms"] > 0:
        facts.append(f"took {(msg['completed_at_ms'] - msg['started_at_ms']) / 1000:.1f} s")
    if facts:
        words += f" ({', '.join(facts)})"
    blocks: list = [Notice(words, _fields(msg))]
    if isinstance(msg.get("rationale"), str) and msg["rationale"].strip():
        blocks.append(Text(msg["rationale"], markdown=False))
    ev = Event(ref, "error" if status == "timed_out" else "system", "guardian_assessment",
               blocks=blocks, meta=msg)
    if status == "in_progress" or not status:
        ev.hidden, ev.hidden_reason = True, "codex event"
    return ev


def _guardian_action(action: Any) -> str:
    """What a guardian reviewed, in a few words (GuardianAssessmentAction, tagged by `type`)."""
    if not isinstance(action, dict):
        return ""
    kind = action.get("type")
    if kind == "command" and isinstance(action.get("command"), str):
        return action["command"]
    if kind == "execve" and isinstance(action.get("argv"), list):
        return " ".join(as_text(a) for a in action["argv"])
    if kind == "apply_patch" and isinstance(action.get("files"), list):
        return "patch " + ", ".join(as_text(f) for f in action["files"])
    if kind == "network_access":
        return f"network access to {as_text(action.get('target') or action.get('host') or '?')}"
    if kind == "mcp_tool_call":
        return f"{as_text(action.get('server') or '?')}.{as_text(action.get('tool_name') or '?')}"
    if kind == "request_permissions":
        return "more permissions" + (f": {action['reason']}" if isinstance(action.get("reason"), str) else "")
    return as_text(kind) if isinstance(kind, str) else ""


def _dynamic(msg: dict, ref: Ref, t: str) -> Event:
    """A dynamic tool's call, as the client that provides the tool was asked
    (DynamicToolCallRequest: `callId, turnId, tool, arguments`, camelCase: codex-rs/protocol/src/
    dynamic_tools.rs), and its answer (DynamicToolCallResponseEvent: `call_id, turn_id,
    completed_at_ms, namespace?, tool, arguments, content_items, success, error?, duration`,
    protocol.rs). The call and its output are the function call items beside them: these are
    behind the toggle, but an answer that failed is in sight with its error."""
    cid = msg.get("callId", msg.get("call_id"))
    tool = as_text(msg.get("tool") or "?")
    if isinstance(msg.get("namespace"), str) and msg["namespace"]:
        tool = f"{msg['namespace']}.{tool}"
    if t == "dynamic_tool_call_request":
        blocks = [Notice(f"dynamic tool {tool} asked for" + (f" (call {cid})" if cid else ""), _fields(msg))]
        return Event(ref, "system", t, hidden=True, hidden_reason="codex event", blocks=blocks, meta=msg)
    failed = msg.get("success") is False
    took = msg.get("duration")
    secs = took.get("secs") if isinstance(took, dict) else None
    words = f"dynamic tool {tool} " + ("failed" if failed else "answered") + (f" (call {cid})" if cid else "")
    if isinstance(secs, int) and not isinstance(secs, bool):
        words += f" in {secs + (took.get('nanos') or 0) / 1e9:.1f} s"
    blocks = [Notice(words, _fields(msg))]
    if failed and isinstance(msg.get("error"), str) and msg["error"]:
        blocks.append(Text(msg["error"], markdown=False))
    ev = Event(ref, "error" if failed else "system", t, blocks=blocks, meta=msg)
    if not failed:
        ev.hidden, ev.hidden_reason = True, "codex event"
    return ev


def _world_state(item: dict, ref: Ref) -> Event:
    """RolloutItem::WorldState `{full, state}`: the comparison state Codex keeps to tell the next
    turn's context what changed (a full copy or a patch): bookkeeping, behind the toggle."""
    kind = "full" if item.get("full") else "patch"
    return Event(ref, "system", "world_state", hidden=True, hidden_reason="bookkeeping", meta=item,
                 blocks=[Data(item.get("state", item), f"world state ({kind})")])


def _inter_agent(item: dict, ref: Ref) -> Event:
    """RolloutItem::InterAgentCommunication `{author, recipient, other_recipients, content,
    trigger_turn}` (protocol.rs; agent paths like `/root/researcher`): a message between the
    threads of a multi-agent run, in sight as who wrote to whom and what."""
    author, to = as_text(item.get("author") or "?"), as_text(item.get("recipient") or "?")
    others = [as_text(o) for o in item.get("other_recipients") or () if o] \
        if isinstance(item.get("other_recipients"), list) else []
    words = f"{author} → {', '.join([to, *others])}"
    blocks: list = [Notice(words, {k: v for k, v in item.items() if k != "content"})]
    if isinstance(item.get("content"), str) and item["content"]:
        blocks.append(Text(item["content"]))
    elif item.get("encrypted_content"):
        blocks.append(Notice("its content is encrypted"))
    return Event(ref, "agent_call", "inter_agent_communication", author=author, blocks=blocks, meta=item)


def _agent_message(item: dict, ref: Ref) -> Event:
    """ResponseItem::AgentMessage `{author, recipient, content: [{type: input_text, text} |
    {type: encrypted_content}]}` (codex-rs/protocol/src/models.rs; persisted by rollout policy.rs
    `should_persist_response_item`): a message between the agents of a multi-agent run as the
    model's history holds it, read as an inter-agent communication is."""
    content = item.get("content") if isinstance(item.get("content"), list) else []
    texts = [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
    hidden = any(isinstance(c, dict) and c.get("encrypted_content") for c in content)
    ev = _inter_agent({**item, "content": "\n\n".join(texts), "encrypted_content": hidden and not texts},
                      ref)
    ev.kind, ev.meta = "agent_message", item
    return ev


def _inter_agent_meta(item: dict, ref: Ref) -> Event:
    """RolloutItem::InterAgentCommunicationMetadata `{trigger_turn}`: bookkeeping."""
    return Event(ref, "system", "inter_agent_communication_metadata", hidden=True,
                 hidden_reason="bookkeeping", meta=item, blocks=[Data(item, "inter-agent message metadata")])


def _count(n: Any) -> str:
    """A token count as a reader reads it (4,200); whatever else was written, as written."""
    return f"{n:,}" if isinstance(n, int) and not isinstance(n, bool) else as_text(n or 0)


def _fields(msg: dict) -> dict:
    """An event_msg's fields but its type (said by its card's kind)."""
    return {k: v for k, v in msg.items() if k != "type"}


def _token_count(msg: dict, ref: Ref) -> Event:
    """The usage of the model call just made. Codex writes the same count twice per call (after the
    response and again after the next turn context): its running total names the call, as a message
    id, so the usage tally counts it once."""
    ev = Event(ref, "system", "usage", hidden=True, hidden_reason="token count", meta=msg)
    info = msg.get("info")
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    total = info.get("total_token_usage") if isinstance(info, dict) else None
    ev.blocks = [Notice("token count", _fields(msg))]
    if isinstance(last, dict):
        cached = last.get("cached_input_tokens") or 0
        ev.blocks[0].text = (f"token count of the call: {_count(last.get('input_tokens'))} in"
                             f" ({_count(cached)} cached), {_count(last.get('output_tokens'))} out")
        ev.usage = {"input_tokens": last.get("input_tokens") or 0,
                    "output_tokens": last.get("output_tokens") or 0,
                    "input_tokens_details": {"cached_tokens": cached},
                    "output_tokens_details": {"reasoning_tokens": last.get("reasoning_output_tokens") or 0}}
        if isinstance(total, dict):
            ev.message_id = f"tokens:{total.get('input_tokens')}:{total.get('output_tokens')}"
    return ev


def _compacted(item: dict, ref: Ref) -> Event:
    ev = compaction_event(ref, item.get("message"))
    ev.meta = {k: v for k, v in item.items() if k != "message"}
    return ev


def _usage_record(item: dict, ref: Ref) -> Event:
    """`token_usage_record` `{response_id, usage: {input_tokens, cached_input_tokens,
    output_tokens, reasoning_output_tokens, total_tokens}, thread_id, turn_id}` (codex-cli
    0.147-0.153): one model response's usage, the same numbers as the `token_count` beside it,
    which counts them: behind the toggle, not counted again."""
    usage = item.get("usage") if isinstance(item.get("usage"), dict) else {}
    words = (f"token usage of response {as_text(item.get('response_id') or '?')}: "
             f"{_count(usage.get('input_tokens'))} in ({_count(usage.get('cached_input_tokens'))} cached), "
             f"{_count(usage.get('output_tokens'))} out (counted by its token count)")
    return Event(ref, "system", "token_usage_record", hidden=True, hidden_reason="token count", meta=item,
                 blocks=[Notice(words, item)])


def _realtime(item: dict, ref: Ref) -> Event:
    """`realtime_item` (a voice session's speech, `{type: transcript_segment, role, text}`): what
    was said aloud, whose turns the response items hold too: behind the toggle, its words shown."""
    text = item.get("text") if isinstance(item.get("text"), str) else ""
    who = as_text(item.get("role") or "?")
    blocks: list = [Notice(f"spoken ({who}), transcript segment" if text else "realtime item", _fields(item))]
    if text:
        blocks.append(Text(text, markdown=False))
    return Event(ref, "system", "realtime_item", hidden=True, hidden_reason="voice transcript",
                 meta=item, blocks=blocks)


def _retained(item: dict, ref: Ref) -> Event:
    """`retained_context` (`{type: verified_answer, questions: [{question, answer}]}`: the person's
    accepted answers to a `request_user_input`, kept by the host for later turns): the answers,
    behind the toggle (the call's own result shows them)."""
    lines = [f"Q: {as_text(q.get('question'))}\nA: {as_text(q.get('answer'))}"
             for q in item.get("questions") or () if isinstance(q, dict)] \
        if isinstance(item.get("questions"), list) else []
    kind = as_text(item.get("type") or "context").replace("_", " ")
    blocks: list = [Notice(f"retained context: {kind}", _fields(item))]
    if lines:
        blocks.append(Text("\n\n".join(lines), markdown=False))
    return Event(ref, "system", "retained_context", hidden=True, hidden_reason="bookkeeping", meta=item,
                 blocks=blocks)


_BY_TYPE = {"session_meta": _session, "turn_context": _turn_context, "response_item": _item,
            "event_msg": _event_msg, "compacted": _compacted, "world_state": _world_state,
            "inter_agent_communication": _inter_agent,
            "inter_agent_communication_metadata": _inter_agent_meta,
            "token_usage_record": _usage_record, "realtime_item": _realtime,
            "retained_context": _retained}


# --- a thread's history before its own records ----------------------------------------------------
# Paginated rollouts (codex-cli 0.147+) number every line (`ordinal`). A thread Codex spawns opens
# its rollout with its own session_meta (`subagent_history_start_ordinal`: N), then the parent's
# session_meta and a copy of the parent's conversation, its token counts too; its own records are
# those from ordinal N on. A thread /fork made, or a thread's new rollout (thread/revert), inherits
# a prefix by reference instead (codex-rs rollout: SessionMeta `history_base` {thread_id,
# end_ordinal_exclusive, end_byte_offset}, "exclusive physical prefix inherited from another
# rollout segment", and a fork's `forked_from_ordinal_exclusive`, its logical boundary): the new
# rollout's own numbering starts at that boundary (RolloutOrdinalState::for_new_rollout), so its
# file holds no copy and every record of it is its own. A record before the boundary, where a file
# holds one, is a copy of history shown where it belongs: here it is hidden, its usage not counted
# again. (A fork of a legacy rollout, without ordinals, copies the parent's history with nothing to
# tell the copy by: it reads as the fork's own.)
_ORDINAL = "_ordinal"


def _ordinal(value: Any) -> int | None:
    """An ordinal as written: a number, or (some builds) a number in a string (decimal digits: a
    superscript passes isdigit and not int)."""
    if isinstance(value, str) and value.isdecimal():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def follow(ev: Event, carried: dict) -> None:
    """The first session_meta names where the thread's own records start; a record before it is
    the parent's copied history (`_inherited`). A failed command's output and its end meet
    (`_outcome`)."""
    if ev.kind == "session" and "history_from" not in carried:
        carried["history_from"], carried["history_of"] = _history_start(ev.meta)
        carried["own_meta"] = ev.ref.offset
        return
    _inherited(ev, carried)
    _outcome(ev, carried)


def recall(ev: Event, carried: dict) -> None:
    """A record read again for the page, as the index read it."""
    if ev.ref.offset != carried.get("own_meta"):
        _inherited(ev, carried)
    if ev.kind == "item_completed" and ev.ref.offset in carried.get("late_failures", ()):
        _late_failure(ev)
    elif (code := carried.get("failed_outputs", {}).get(str(ev.ref.offset), False)) is not False:
        _failed_output(ev, code)


# --- a command's end and its output ----------------------------------------------------------------
# A command's `item_completed` (`_command_ended`) and its output come in either order: core emits
# the end before the output goes to the model's history, but a unified exec's command that outlived
# its call (its output "Process running with session ID …") ends turns later. Whichever comes
# second learns of the other (the last `_KEPT` calls of each side are remembered, by call id): an
# output that read fine before its command failed turns failed (its exit code said); a failure
# after an output that read fine is the only word of it, so its card comes into sight with the
# output the call never showed. The lines so changed are kept by offset for `recall`.
_KEPT = 64


def _outcome(ev: Event, carried: dict) -> None:
    if ev.kind == "item_completed" and ev.states:
        (call_id,) = ev.states
        if carried.setdefault("fine_outputs", {}).pop(call_id, None) is not None:
            carried.setdefault("late_failures", []).append(ev.ref.offset)
            _late_failure(ev)
        else:
            _remember(carried.setdefault("failures", {}), call_id, _exit_code(ev.meta.get("item") or {}))
        return
    failures = carried.get("failures") or {}
    for result in ev.tool_results():
        if result.tool_use_id in failures:
            code = failures.pop(result.tool_use_id)
            if not result.is_error:
                carried.setdefault("failed_outputs", {})[str(ev.ref.offset)] = code
                _failed_output(ev, code)
        elif not result.is_error:
            _remember(carried.setdefault("fine_outputs", {}), result.tool_use_id, ev.ref.offset)


def _remember(kept: dict, call_id: str, value: Any) -> None:
    kept[call_id] = value
    if len(kept) > _KEPT:
        del kept[next(iter(kept))]


def _failed_output(ev: Event, code: int | None) -> None:
    """The output of a command whose end said it failed: an error, its exit code said."""
    ev.blocks = [_exited(b, b.content, code) if code else
                 ToolResult(b.tool_use_id, [Notice("the command failed"), *b.content], True, state=b.state)
                 if b.kind == "tool_result" else b for b in ev.blocks]


def _late_failure(ev: Event) -> None:
    """A command's failure told after its call's output read fine: in sight, with what it output
    (a system card: the failure is counted once, as its call's)."""
    item = ev.meta.get("item") or {}
    ev.hidden, ev.hidden_reason = False, None
    output = item.get("aggregatedOutput", item.get("aggregated_output"))
    if isinstance(output, str) and output.strip() and len(ev.blocks) == 1:
        ev.blocks = [*ev.blocks, *result_content(output)]


def _history_start(meta: dict) -> tuple[int, str]:
    """The ordinal a thread's own records start at (0: all of them), and whose the records before
    it are."""
    sub = _ordinal(meta.get("subagent_history_start_ordinal"))
    if sub:
        return sub, "the parent thread's history"
    base = meta.get("history_base")
    end = _ordinal(base.get("end_ordinal_exclusive")) if isinstance(base, dict) else None
    if meta.get("forked_from_id") and (cut := _ordinal(meta.get("forked_from_ordinal_exclusive")) or end):
        return cut, "the parent thread's history"
    return (end, "the thread's earlier rollout") if end else (0, "")


def _inherited(ev: Event, carried: dict) -> None:
    start, n = carried.get("history_from"), ev.meta.get(_ORDINAL)
    if not start or n is None or n >= start:
        return
    whose = carried.get("history_of") or "the parent thread's history"
    ev.hidden, ev.hidden_reason = True, whose
    ev.usage = None
    ev.blocks = [Notice(f"copied from {whose} (record {n}; this thread's own begin at {start})")] + [
        b for b in ev.blocks if b.kind in ("text", "thinking")]
    ev.states, ev.running, ev.spawns = {}, [], {}


# --- spawned threads -----------------------------------------------------------------------------
# A thread Codex spawns (`spawn_agent`, answered `{"agent_id": <thread id>, "nickname"}`) is a
# rollout of its own, beside its parent's in the day's folder, whose session_meta names the parent:
# `source: {"subagent": {"thread_spawn": {"parent_thread_id", "depth", "agent_nickname",
# "agent_role", "agent_path"}}}` (protocol.rs `SubAgentSource::ThreadSpawn`). The parent's page nests
# it under the call (its output names the thread: `Event.spawns`); the list puts it under its parent.
# A multi-agent v2 spawn (tools/handlers/multi_agents_v2/spawn.rs) answers with no id, only the new
# agent's path (`{"task_name": "/root/explorer", "nickname"}`, or `{"task_name"}` when the metadata
# is hidden): the call names that path, and the child, whose `agent_path` it is, says it is spawned
# as it (its thread meta's `spawned_as`, which the index matches to the call's `subthread`). The
# collab spawn events that pair the call with the thread id are not written to the rollout
# (rollout/policy.rs).

# an agent path (codex_protocol `AgentPath`): the root thread's is `/root`, a spawned one's its
# parent's joined with the `task_name` the spawn was given (`/root/explorer`)
_ROOT_PATH = "/root/"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HEAD_LIMIT = 256 << 10  # a session_meta line holds the base instructions: tens of KB
SNIFF_LIMIT = 8 << 10  # ...after its `source`
SLACK = 60.0  # seconds between a file's name time and its first write
DAYS_BACK = 7  # how many day folders before a spawned thread's own its parent's rollout may sit in


def _spawned(output: Any) -> str | None:
    """The thread a `spawn_agent` output names: its id (`{"agent_id": …, "nickname": …}`), or the
    agent path a multi-agent v2 spawn answers with (`{"task_name": "/root/explorer", …}`), which
    the child's session_meta names as its `agent_path` (see `spawned_as`)."""
    if not (isinstance(output, str) and output[:1] == "{"
            and ("agent_id" in output or "task_name" in output)):
        return None
    try:
        doc = orjson.loads(output)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict):
        return None
    child = doc.get("agent_id")
    if isinstance(child, str) and _UUID.fullmatch(child):
        return child
    return _path_key(doc.get("task_name"))


def _path_key(agent_path: Any) -> str | None:
    """The name a spawned thread is known by from its agent path, the same from the parent's
    spawn output and from the child's own session_meta; None for what is no agent path."""
    if isinstance(agent_path, str) and agent_path.startswith(_ROOT_PATH):
        return f"agent-path:{agent_path}"
    return None


def _own_id(path: Path) -> str | None:
    m = _UUID.search(path.name[-48:]) if path.name.startswith("rollout-") else None
    return m[0] if m else None


def _meta_of(path: Path, needs: bytes = b"") -> dict | None:
    """A rollout's session_meta payload, read from its first line alone; None at once when its
    first bytes lack `needs` (the meta names its `source` before its long instructions)."""
    try:
        head = files.read_file(path, SNIFF_LIMIT)
        if needs not in head:
            return None
        if b"\n" not in head:
            head = files.read_file(path, HEAD_LIMIT)
    except OSError:
        return None
    end = head.find(b"\n")
    try:
        rec = orjson.loads(head if end < 0 else head[:end])
    except orjson.JSONDecodeError:
        return None
    if isinstance(rec, dict) and rec.get("type") == "session_meta" and isinstance(rec.get("payload"), dict):
        return rec["payload"]
    return None


def _started(path: Path) -> float | None:
    """When a rollout began, from its name (`rollout-2026-02-10T10-00-05-<id>`, local time)."""
    try:
        return time.mktime(time.strptime(path.name[8:27], "%Y-%m-%dT%H-%M-%S"))
    except (ValueError, OverflowError):
        return None


def _spawn_of(meta: dict | None) -> dict | None:
    source = meta.get("source") if isinstance(meta, dict) else None
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return spawn if isinstance(parent, str) and _UUID.fullmatch(parent) else None


def _day(folder: Path) -> date | None:
    """The date of a `sessions/YYYY/MM/DD` folder."""
    try:
        return date(int(folder.parent.parent.name), int(folder.parent.name), int(folder.name))
    except ValueError:
        return None


def _day_folder(folder: Path, day: date) -> Path:
    return folder.parent.parent.parent / f"{day.year:04d}" / f"{day.month:02d}" / f"{day.day:02d}"


def session_info(main: Path) -> dict:
    """For a spawned thread: its parent (`parent_session`) and the parent's rollout (`parent_path`,
    looked for in its own day's folder and the days before), its name and role, and its thread in
    the parent's index."""
    spawn = _spawn_of(_meta_of(main, b'"thread_spawn"')) if main.name.startswith("rollout-") else None
    if spawn is None:
        return {}
    info: dict = {"thread": keys.thread_key(_own_id(main) or main.stem),
                  "parent_session": spawn["parent_thread_id"]}
    for key, field in (("agent", "agent_nickname"), ("agent_type", "agent_role")):
        if isinstance(spawn.get(field), str) and spawn[field]:
            info[key] = spawn[field]
    day = _day(main.parent)
    folders = [main.parent] if day is None else [_day_folder(main.parent, day - timedelta(n))
                                                for n in range(DAYS_BACK)]
    for folder in folders:
        found = _rollouts(folder, f"rollout-*-{spawn['parent_thread_id']}.jsonl")
        if found:
            info["parent_path"] = str(found[0])
            break
    return info


def companion_folders(main: Path) -> list[Path]:
    """The day's folder and the next: a thread spawned during the session is written in one."""
    day = _day(main.parent)
    return [main.parent] if day is None else [main.parent, _day_folder(main.parent, day + timedelta(1))]


def companions(main: Path) -> list[tuple[str, Path, dict]]:
    """(thread id, rollout, meta) of each thread this session spawned: the rollouts begun while it
    was being written (named after it, begun before its last write) whose session_meta names it as
    their parent. Only their first bytes are read."""
    own = _own_id(main)
    try:
        last = main.stat().st_mtime + SLACK
    except OSError:
        return []
    if own is None:
        return []
    out = []
    for folder in companion_folders(main):
        try:
            after = compressed.plain_name(main.name)
            names = [p for p in _rollouts(folder, "rollout-*.jsonl")
                     if compressed.plain_name(p.name) > after]
        except OSError:
            continue
        for path in names:
            begun, child = _started(path), _own_id(path)
            if child is None or (begun is not None and begun > last):
                continue
            spawn = _spawn_of(_meta_of(path, own.encode()))
            if spawn is not None and spawn["parent_thread_id"] == own:
                meta = {k: spawn[k] for k in ("agent_nickname", "agent_role", "depth") if k in spawn}
                if (key := _path_key(spawn.get("agent_path"))) is not None:
                    meta["spawned_as"] = key
                out.append((child, path, meta))
    return out


def _rollouts(folder: Path, pattern: str) -> list[Path]:
    """The rollouts of a day's folder named by `pattern` (a `….jsonl` glob), plain or compressed
    (Codex compresses those older than a few days to `….jsonl.zst`; a plain one hides its `.zst`),
    in name order."""
    plain = list(folder.glob(pattern))
    have = {p.name for p in plain}
    packed = [p for p in folder.glob(pattern + ".zst") if p.name[:-4] not in have]
    return sorted(plain + packed, key=lambda p: compressed.plain_name(p.name))


def thread_label(agent: str, meta: dict) -> str:
    name, role = meta.get("agent_nickname"), meta.get("agent_role")
    label = " · ".join(str(x) for x in (name, role) if isinstance(x, str) and x)
    return f"{label} (thread {agent})" if label else f"thread {agent}"


# a name the thread was given (`/rename`, or the name Codex gave it): the session's title, over its
# first prompt (`index.named_title`)
TITLE_KINDS = frozenset({"thread_name_updated"})


def named_title(ev: Event) -> tuple[int, str] | None:
    name = ev.meta.get("thread_name") if isinstance(ev.meta, dict) else None
    return (2, name) if isinstance(name, str) and name.strip() else None


def title_of(ev: Event) -> str | None:
    """The first prompt the person wrote (Codex's injected context is not one)."""
    return openai_chat.title_of(ev)
