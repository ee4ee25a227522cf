"""Qwen Code's session files: `~/.qwen/projects/<project>/chats/<sessionId>.jsonl`.

Qwen Code is a fork of Gemini CLI whose ChatRecordingService (QwenLM/qwen-code
packages/core/src/services/chatRecordingService.ts) appends one self-contained ChatRecord per
line: `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version, gitBranch?,
message?: Content {role, parts}, usageMetadata?, model?, toolCallResult?, systemPayload?,
agentId?, agentName?, isSidechain?}`. One line → one event:

* `user`: the prompt's parts (text, images); `assistant`: the model's parts (text, thought parts →
  thinking, `functionCall` → calls), `model`, `usageMetadata` (the API's token counts, priced);
* `tool_result`: the `functionResponse` parts → the call's result (its id from the part or
  `toolCallResult.callId`); `toolCallResult.status` error (or an `error` it carries) → error,
  cancelled → cancelled; `resultDisplay` shown where the response holds no text;
* `system`: a notice per subtype — a compression's token counts, a slash command, an @-command's
  files, a notification's text, a title set by /rename, a rewind; the bookkeeping subtypes (UI
  telemetry, attribution and file-history snapshots, session model / source / approval mode,
  artifacts, goals, branch checkpoints…) hidden with their payload; an unknown subtype is hidden
  with its payload too;
* a sub-agent's records (`isSidechain`) carry its `agentName` as their author.

Newer versions (the recorder at 015346f1) write more through `type: "user"` than the person's
prompts, as Qwen's own UI restores them:

* a prompt's `systemPayload` (`UserPromptRecordPayload {displayText, hookContext}`) holds what the
  person typed; `message` what the model got (the prompt expanded: @-files read in, hook context):
  the card shows the typed words, the model's copy a folded context chip;
* `subtype: "notification"` / `"cron"` (a background agent's or a scheduled prompt's message,
  "restored as an info item, not a user turn") → a notice in sight with its `displayText`, the
  model's copy folded; `"goal_runtime"` (the Goal runtime talking to the model) → a context card;
  `"mid_turn_user_message"` is the person's (typed while tools ran): their `displayText`;
* `system` / `custom_title` (`{customTitle, titleSource: manual | auto}`, /rename or the title a fast
  model made; re-written unchanged every 32 KB so the picker's tail read finds it) names the
  session (`named_title`: a manual title over an auto one, both over the first prompt); its cards
  are state behind the toggle, so its re-writes never repeat in sight.

`sniff`: a ChatRecord (`uuid` + `sessionId` + one of the four types) whose `message` holds Gemini
`parts`, or a `system` record with a `subtype`, or a `tool_result` with `toolCallResult`, is
unmistakable (3): Claude Code's lines look alike but hold Anthropic `content`.
"""

from __future__ import annotations

from typing import Any

from ..model import CANCELLED, Context, Data, Event, Notice, Ref, Text
from .common import as_text, generic_event, model_and_usage, set_time, text_field
from .gemini import parts_blocks
from .openai_chat import prompt_title

NAME = "qwen-code"
MODE = "jsonl"

TYPES = ("user", "assistant", "tool_result", "system")
_ROLES = {"user": "user", "assistant": "assistant", "tool_result": "tool", "system": "system"}
# system subtypes a reader of the conversation wants to see, and how each reads
_SHOWN = {"chat_compression", "slash_command", "at_command", "notification", "rewind",
          "mid_turn_user_message", "background_task_completed", "cron", "turn_result"}
# user records that are no prompt of the person's: what Qwen's UI restores as an info item (a
# background agent's notification, a scheduled prompt), and the Goal runtime's words to the model
_NOTIFIED = {"notification": "notification", "cron": "scheduled prompt"}
_RUNTIME = {"goal_runtime": "goal runtime"}
# a title the session was given, by rank (`named_title`): a /rename's over a generated one
_TITLE_RANKS = {"manual": 2, "auto": 1}
TITLE_KINDS = frozenset({"system:custom_title"})
_META_KEYS = ("message", "type", "subtype", "systemPayload")


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict) or text_field(rec, "type") not in TYPES:
        return 0
    if "uuid" not in rec or "sessionId" not in rec:
        return 0
    msg = rec.get("message")
    if isinstance(msg, dict) and isinstance(msg.get("parts"), list) and "content" not in msg:
        return 3
    if rec["type"] == "system" and "systemPayload" not in rec:
        return 1  # every system record Qwen Code writes holds one: Claude Code's look-alike line
    if (rec["type"] == "system" and isinstance(rec.get("subtype"), str)) or (
            rec["type"] == "tool_result" and isinstance(rec.get("toolCallResult"), dict)):
        return 3
    return 1


def event(rec: Any, ref: Ref) -> Event:
    t = text_field(rec, "type") if isinstance(rec, dict) else None
    if t not in TYPES:
        return generic_event(rec, ref, NAME)
    msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
    ev = Event(ref, _ROLES[t], format=NAME)
    if t == "system":
        _system(ev, rec)
    else:
        ev.blocks = parts_blocks(msg.get("parts"), markdown=t != "tool_result", ids=_call_ids(rec))
    if t == "user":
        _user(ev, rec)
    if t == "tool_result":
        ev.kind = "tool_result"
        _tool_result(ev, rec)
    if isinstance(rec.get("uuid"), str):
        ev.source_id = rec["uuid"]
    set_time(ev, rec.get("timestamp"))
    model_and_usage(ev, rec.get("model"), rec.get("usageMetadata"))
    if rec.get("isSidechain") and isinstance(rec.get("agentName"), str):
        ev.author = rec["agentName"]
    ev.meta = {k: v for k, v in rec.items() if k not in _META_KEYS}
    return ev


def _user(ev: Event, rec: dict) -> None:
    """A user record as Qwen's UI restores it: the person's typed words (`displayText`) over the
    model's expanded copy of them; a notification or the Goal runtime's message not as a prompt."""
    sub = text_field(rec, "subtype")
    payload = rec.get("systemPayload") if isinstance(rec.get("systemPayload"), dict) else {}
    shown = payload.get("displayText")
    shown = shown if isinstance(shown, str) and shown.strip() else None
    sent = "\n\n".join(b.text for b in ev.blocks if b.kind == "text")
    others = [b for b in ev.blocks if b.kind != "text"]
    if sub in _NOTIFIED:
        ev.role, ev.kind = "system", sub
        ev.blocks = [Notice(shown or _NOTIFIED[sub], payload.get("backgroundTask"))]
        if sent.strip() and sent.strip() != (shown or "").strip():
            ev.blocks.append(Context(f"the {_NOTIFIED[sub]} as the model got it", sent, "qwen"))
        ev.blocks += others
    elif sub in _RUNTIME:
        ev.role, ev.kind = "system", "context"
        ev.blocks = ([Context(_RUNTIME[sub], sent, "qwen")] if sent.strip() else []) + others
        if not ev.blocks:
            ev.blocks = [Notice(_RUNTIME[sub])]
    elif shown is not None and shown.strip() != sent.strip():
        ev.blocks = [Text(shown)] + others
        if sent.strip():
            ev.blocks.append(Context("the prompt as the model got it", sent, "qwen"))


def _call_ids(rec: dict) -> dict | None:
    """A tool_result's call id (`toolCallResult.callId`) for its responses that name none."""
    info = rec.get("toolCallResult")
    cid = info.get("callId") if isinstance(info, dict) else None
    if not isinstance(cid, str) or not cid:
        return None
    parts = rec["message"].get("parts") if isinstance(rec.get("message"), dict) else None
    return {n: cid for n in range(len(parts))} if isinstance(parts, list) else None


def _tool_result(ev: Event, rec: dict) -> None:
    """The result's id, outcome and display text from `toolCallResult` (Qwen's UI record of it)."""
    info = rec.get("toolCallResult") if isinstance(rec.get("toolCallResult"), dict) else {}
    status = text_field(info, "status")
    failed = status == "error" or bool(info.get("error"))
    display = info.get("resultDisplay")
    for r in ev.tool_results():
        if status == "cancelled":
            r.is_error, r.state = True, CANCELLED
        elif failed:
            r.is_error = True
        elif status == "success" and r.is_error is None:
            r.is_error = False
        if not any(b.kind == "text" for b in r.content) and isinstance(display, str) and display.strip():
            r.content.append(Text(display, markdown=False))
    if not ev.tool_results():
        ev.blocks.append(Data(info, "tool result"))


def _system(ev: Event, rec: dict) -> None:
    sub = text_field(rec, "subtype") or "system"
    ev.kind = f"system:{sub}"
    payload = rec.get("systemPayload")
    words = _system_words(sub, payload if isinstance(payload, dict) else {})
    ev.blocks = [Notice(words or sub.replace("_", " "), payload)]
    if sub not in _SHOWN:
        ev.hidden, ev.hidden_reason = True, sub.replace("_", " ")


def _system_words(sub: str, p: dict) -> str | None:
    """What a system record says, in a line."""
    if sub == "chat_compression":
        info = p.get("info") if isinstance(p.get("info"), dict) else {}
        before, after = info.get("originalTokenCount"), info.get("newTokenCount")
        if isinstance(before, int) and isinstance(after, int):
            return f"conversation compressed: {before:,} → {after:,} tokens"
        return "conversation compressed"
    if sub == "slash_command" and isinstance(p.get("rawCommand"), str):
        return p["rawCommand"] if p.get("phase") != "result" else f"{p['rawCommand']} · its output"
    if sub == "at_command" and isinstance(p.get("filesRead"), list):
        return "read for the prompt: " + ", ".join(as_text(f) for f in p["filesRead"])
    if sub in ("notification", "mid_turn_user_message", "background_task_completed") \
            and isinstance(p.get("displayText"), str):
        return p["displayText"]
    if sub == "custom_title" and isinstance(p.get("customTitle"), str):
        made = "generated" if p.get("titleSource") == "auto" else "set"
        return f"title {made}: {p['customTitle']}"
    if sub == "rewind" and isinstance(p.get("truncatedCount"), int):
        return f"conversation rewound ({p['truncatedCount']} history items dropped)"
    return None


def named_title(ev: Event) -> tuple[int, str] | None:
    """(rank, title) of a `custom_title` record: a /rename's (`titleSource` manual, or none: older
    records) over one a model generated; the latest of a rank wins, as in Qwen's picker."""
    payload = next((b.detail for b in ev.blocks if b.kind == "notice"), None)  # (`_system`)
    title = payload.get("customTitle") if isinstance(payload, dict) else None
    if not isinstance(title, str) or not title.strip():
        return None
    return _TITLE_RANKS.get(payload.get("titleSource"), 2), title


def title_of(ev: Event) -> str | None:
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return prompt_title(ev.text())
    return None
