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
* a sub-agent's records (`isSidechain`, written only to its own transcript: agent-transcript.ts)
  carry its `agentName` as their author, but for its user records (the task it was given, a
  message sent to it while it ran); a fork's `agent_launch_prompt` (the task as its model got it)
  is a context chip.

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

Sub-agents and sub-sessions (how the list and a call card link them):

* the `agent` tool (formerly `task`) runs a sub-agent whose transcript is its own file,
  `<project>/subagents/<session id>/agent-<agentId>.jsonl` (ChatRecords with the parent's
  `sessionId`, `agentId`, `agentName`, `isSidechain: true`), beside `agent-<agentId>.meta.json`
  (`{agentId, agentType, description, parentSessionId, toolUseId, parentAgentId, createdAt,
  status, …}`: QwenLM/qwen-code packages/core/src/agents/agent-transcript.ts at 015f2838). The
  `subagents` folder is never listed; `companions` reads it, and the meta's `toolUseId` nests the
  transcript under the call that launched it, as Claude Code's sub-agents are;
* a `create_sub_session` call (the daemon's tool) starts a session of its own in `chats/`, whose
  first records include `system` / `parent_session` `{parentSessionId}` (chatRecordingService.ts
  `ParentSessionRecordPayload` at 015346f1; read, as Qwen's session list reads it, from the
  first 10 records, `_read_parent`); the call's output names it as a link
  `[🧵 <id8>](qwen-session://<id>) started|completed` (the daemon's workers read it so). The child
  is listed under its parent ("sub-agent of", `session_info`), the parent lists it among its
  companions, and the call's output links the call to it (`Event.spawns`).

`sniff`: a ChatRecord (`uuid` + `sessionId` + one of the four types) whose `message` holds Gemini
`parts`, or a `system` record with a `subtype`, or a `tool_result` with `toolCallResult`, is
unmistakable (3): Claude Code's lines look alike but hold Anthropic `content`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from .. import files, keys
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
    if rec.get("isSidechain") and isinstance(rec.get("agentName"), str) and t != "user":
        # (a user record of a sub-agent's transcript is the task it was given, or a message sent
        # to it while it ran (`externalInputKind`): not the agent's own words)
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
    for r in ev.tool_results():
        if (child := _sub_session(r.content, display)) is not None:
            ev.spawns[r.tool_use_id] = child


def _sub_session(content: list, display: Any) -> str | None:
    """The session a `create_sub_session` call started, as its output links it
    (`qwen-session://<id>`), else None."""
    texts = [b.text for b in content if b.kind == "text"] + ([display] if isinstance(display, str) else [])
    for text in texts:
        if (m := _SESSION_LINK.search(text)) is not None:
            return m[1]
    return None


def _system(ev: Event, rec: dict) -> None:
    sub = text_field(rec, "subtype") or "system"
    ev.kind = f"system:{sub}"
    payload = rec.get("systemPayload")
    words = _system_words(sub, payload if isinstance(payload, dict) else {})
    ev.blocks = [Notice(words or sub.replace("_", " "), payload)]
    if sub == "agent_launch_prompt" and isinstance(payload, dict) and isinstance(payload.get("displayText"), str):
        # a forked sub-agent's task as the model got it (agent-transcript.ts; its visible
        # directive is the user record before it)
        ev.kind = "context"
        ev.blocks = [Context("the task as the sub-agent's model got it", payload["displayText"], "qwen")]
        return
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


# --- sub-agents (<project>/subagents/<session id>/) and sub-sessions (chats/, parent_session) ---

_SESSION_LINK = re.compile(r"qwen-session://([A-Za-z0-9._:-]{1,128})")
_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
# a session's parent_session record is written once, before any prompt: Qwen's session list reads
# it from the first MAX_PROMPT_SCAN_LINES (10) records (sessionService.ts
# extractCreationMetadataFromRecords), whatever their size; so is it read here, up to HEAD bytes
HEAD_LINES = 10
HEAD = 1 << 20
META_LIMIT = 1 << 20


def _chats(main: Path) -> bool:
    return main.suffix == ".jsonl" and main.parent.name == "chats" and bool(_ID.fullmatch(main.stem))


def _agents_dir(main: Path) -> Path:
    """`<project>/subagents/<session id, sanitized>/` (agent-transcript.ts getSubagentSessionDir)."""
    return main.parent.parent / "subagents" / re.sub(r"[^a-zA-Z0-9_-]", "_", main.stem)


def companion_meta(p: Path) -> Path:
    """A sub-agent transcript's sidecar (written at launch, patched as its status changes)."""
    return p.with_name(p.name[:-len(".jsonl")] + ".meta.json")


def _meta(p: Path) -> dict:
    """A sidecar's flat fields (agentType, description, toolUseId, status…)."""
    try:
        data = orjson.loads(files.read_file(companion_meta(p), META_LIMIT))
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if v is None or isinstance(v, (str, int, float, bool))}


# path → (whole, size, mtime_ns, the parent its head names): a head read once it is whole (its
# HEAD_LINES lines, or HEAD bytes) is final; a shorter one is read again when the file changes.
# Every session's page lists its siblings' heads (`companions`): without this, a folder of N
# sessions costs N² reads.
_HEADS: dict[str, tuple[bool, int, int, str | None]] = {}
_HEADS_MAX = 20_000


def _parent_of(p: Path) -> str | None:
    """The session a session's `parent_session` record names, from its first records."""
    key = str(p)
    try:
        st = os.stat(key)
    except OSError:
        return None
    known = _HEADS.get(key)
    if known is not None and (known[0] or known[1:3] == (st.st_size, st.st_mtime_ns)):
        return known[3]
    whole, parent = _read_parent(p)
    if len(_HEADS) >= _HEADS_MAX:
        _HEADS.clear()
    _HEADS[key] = (whole, st.st_size, st.st_mtime_ns, parent)
    return parent


def _read_parent(p: Path) -> tuple[bool, str | None]:
    """(whether the head is whole, the parent its `parent_session` record names) from the first
    HEAD_LINES lines (as much of them as HEAD bytes hold)."""
    lines: list[bytes] = []
    try:
        with files.open_file(p) as f:
            budget = HEAD
            while len(lines) < HEAD_LINES and budget > 0:
                line = f.readline(budget)
                budget -= len(line)
                if not line.endswith(b"\n"):
                    break  # (the end of the file so far, or of the bytes read)
                lines.append(line)
    except OSError:
        return False, None
    whole = len(lines) >= HEAD_LINES or budget <= 0
    for line in lines:
        if b'"parent_session"' not in line:
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        payload = rec.get("systemPayload") if isinstance(rec, dict) and rec.get("subtype") == "parent_session" else None
        parent = payload.get("parentSessionId") if isinstance(payload, dict) else None
        if isinstance(parent, str) and _ID.fullmatch(parent):
            return True, parent  # (written once: final)
    return whole, None


def companions(main: Path) -> list[tuple[str, Path, dict]]:
    """(thread id, path, meta) of the session's sub-agent transcripts (their sidecar's `toolUseId`
    names the call that launched each) and of the sessions its `create_sub_session` calls started
    (each naming this one in its `parent_session` record; the call's output names it back).
    There is no `companion_folders`: a sub-session's file appears before the record naming its
    parent is written to it (no folder changes then), so the listing is made at every refresh —
    a stat per sibling, their heads read once whole (`_parent_of`)."""
    if not _chats(main):
        return []
    out: list[tuple[str, Path, dict]] = []
    sub = _agents_dir(main)
    if sub.is_dir():
        for p in sorted(sub.glob("agent-*.jsonl")):
            out.append((p.name[len("agent-"):-len(".jsonl")], p, _meta(p)))
    try:
        with os.scandir(main.parent) as it:
            siblings = sorted(e.path for e in it if e.name.endswith(".jsonl") and e.path != str(main))
    except OSError:
        siblings = []
    for path in siblings:
        p = Path(path)
        if _parent_of(p) == main.stem:
            out.append((p.stem, p, {"sub_session": True}))
    return out


def thread_label(agent: str, meta: dict) -> str:
    if isinstance(meta, dict) and meta.get("sub_session"):
        return f"sub-session {agent}"
    kind = meta.get("agentType") if isinstance(meta, dict) else None
    desc = meta.get("description") if isinstance(meta, dict) else None
    return " · ".join(str(x) for x in (kind, desc) if isinstance(x, str) and x) or f"agent {agent}"


def session_info(main: Path) -> dict:
    """For a session a `create_sub_session` call started: its parent, the parent's file beside it,
    and its thread in the parent's index (the list shows it as a sub-agent of that session)."""
    if not _chats(main):
        return {}
    parent = _parent_of(main)
    if parent is None or parent == main.stem:
        return {}
    return {"parent_session": parent, "parent_path": str(main.parent / f"{parent}.jsonl"),
            "thread": keys.thread_key(main.stem)}
