"""Factory Droid sessions: `~/.factory/sessions/<project>/<session id>.jsonl`, beside
`<session id>.settings.json` (the project folder is the working directory with `/` written `-`).

Droid appends one record per line; the shapes, as the readers of real sessions find them (see
test_data/formats/factory-droid/README.md):

* `{"type": "session_start", "id", "title", "sessionTitle"?, "owner", "version", "cwd"}` → a quiet
  notice (title, folder); a session Droid's `Task` tool started for a sub-agent is titled
  "# Task Tool Invocation … Subagent type: <type>", said so;
* `{"type": "message", "id", "parentId"?, "timestamp", "message": {"role", "content", "model"?}}`
  with Anthropic content blocks (a string, or `text`, `thinking` with its signature,
  `tool_use`, `tool_result`, images): the person's prompt (with `<system-reminder>` and IDE tags at
  its ends as context chips), the model's reply with its calls, the calls' results (a user line
  that holds only results is a tool-result event; `is_error` decides an error, Claude's refusal
  text a denial), `model` where the line names one;
* `{"type": "todo_state", "todos": [...] | {"todos": [...] | "1. …"}}` → the todo list as a
  checklist;
* `{"type": "compaction_state", "summaryText"}` → a summary card;
* anything else → a quiet card with its JSON, never lost.

`<id>.settings.json` (`model`, `reasoningEffort`, `autonomyMode`, `assistantActiveTimeMs`,
`tokenUsage {inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens, thinkingTokens}`)
belongs to its session: never listed alone; its model names the session's model (`session_info`),
read again when it changes.

`sniff`: a `session_start` with a title, cwd or owner, a `todo_state` or `compaction_state` line
are unmistakable (3); a `message` line holding a `message` with a role and content scores 2.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from .. import files
from ..model import Data, Event, Notice, Ref, Text
from .common import anthropic_blocks, as_text, compaction_event, generic_event, model_and_usage, set_time, \
    text_field, with_context
from .openai_chat import prompt_title

NAME = "factory-droid"
MODE = "jsonl"

SETTINGS = ".settings.json"
SETTINGS_LIMIT = 1 << 20  # a settings file is a few hundred bytes; more is not one
_SUBAGENT = "# Task Tool Invocation"
_SUBAGENT_TYPE = re.compile(r"Subagent type: ([\w-]+)")
_TASK = re.compile(r"^Task: (.+)$", re.M)
_ROLES = ("user", "assistant", "system")
_MARKS = {"completed": "✓", "done": "✓", "in_progress": "▸", "pending": "○", "cancelled": "✗"}


def sniff(rec: Any) -> int:
    if rec.__class__ is not dict:
        return 0
    t = rec.get("type")
    if t == "session_start" and ("title" in rec or "sessionTitle" in rec or "cwd" in rec
                                 or "owner" in rec) and "payload" not in rec:
        return 3
    if t in ("todo_state", "compaction_state") and "payload" not in rec and "data" not in rec:
        return 3
    msg = rec.get("message")
    if t == "message" and isinstance(msg, dict) and msg.get("role") in _ROLES and "content" in msg:
        return 2
    return 0


def event(rec: Any, ref: Ref) -> Event:
    t = text_field(rec, "type") if isinstance(rec, dict) else None
    if t == "session_start":
        ev = _start(rec, ref)
    elif t == "message" and isinstance(rec.get("message"), dict):
        ev = _message(rec["message"], ref)
    elif t == "todo_state":
        ev = _todos(rec, ref)
    elif t == "compaction_state":
        ev = compaction_event(ref, rec.get("summaryText"), rec.get("summary"))
    else:
        return generic_event(rec, ref, NAME)
    ev.format = NAME
    if isinstance(rec.get("id"), str) and rec["id"]:
        ev.source_id = rec["id"]
    set_time(ev, rec.get("timestamp"))
    ev.meta = {k: v for k, v in rec.items() if k not in ("message", "type")}
    return ev


def _start(rec: dict, ref: Ref) -> Event:
    title = rec.get("sessionTitle") or rec.get("title")
    title = title if isinstance(title, str) else ""
    where = rec.get("cwd") if isinstance(rec.get("cwd"), str) else None
    if title.startswith(_SUBAGENT):
        kind = _SUBAGENT_TYPE.search(title)
        words = f"Droid sub-agent session ({kind.group(1)})" if kind else "Droid sub-agent session"
    else:
        words = f"Droid session: {title}" if title.strip() else "Droid session"
    if where:
        words += f" · {where}"
    return Event(ref, "system", "session", blocks=[Notice(words)])


def _message(msg: dict, ref: Ref) -> Event:
    if msg.get("role") not in _ROLES:  # a role this reader does not know: its message as it is
        ev = Event(ref, "unknown", blocks=[Data(msg, "message")])
    else:
        ev = Event(ref, msg["role"])
        blocks = anthropic_blocks(msg.get("content"), markdown=True)
        ev.blocks = with_context(blocks) if ev.role == "user" else blocks
        if any(b.kind == "tool_result" for b in ev.blocks) and all(b.kind in ("tool_result", "context")
                                                                  for b in ev.blocks):
            ev.role, ev.kind = "tool", "tool_result"  # a line that only answers calls
    model_and_usage(ev, msg.get("model"), None)
    return ev


def _todos(rec: dict, ref: Ref) -> Event:
    """Droid's todo list at this point (`TodoWrite`): a checklist."""
    todos = rec.get("todos")
    if isinstance(todos, dict):  # some versions wrap it: {"todos": [...] or "1. …"}
        todos = todos.get("todos")
    ev = Event(ref, "system", "todo_state")
    if isinstance(todos, str):
        ev.blocks = [Notice("todo list"), Text(todos)]
    elif isinstance(todos, list):
        lines = []
        for item in todos:
            if not isinstance(item, dict):
                lines.append(f"- {as_text(item)}")
                continue
            what = item.get("content") or item.get("description") or item.get("text") or "?"
            status = item.get("status") if isinstance(item.get("status"), str) else ""
            mark = _MARKS.get(status, "○")
            note = " *(in progress)*" if status == "in_progress" else ""
            lines.append(f"{mark} {as_text(what)}{note}")
        ev.blocks = [Notice(f"todo list ({len(todos)} items)" if todos else "todo list cleared")]
        if lines:
            ev.blocks.append(Text("  \n".join(lines)))  # (a Markdown line break each)
    else:
        ev.blocks = [Notice("todo list"), Data(todos, "todos")]
    return ev


# --- the settings file beside the session ---------------------------------------------------------


def _settings_of(main: Path) -> Path:
    return main.with_name(main.name[:-len(".jsonl")] + SETTINGS) if main.name.endswith(".jsonl") \
        else main.with_name(main.name + SETTINGS)


def is_companion(path: str) -> bool:
    """A session's `<id>.settings.json`: read with its `<id>.jsonl`, never listed alone."""
    if not path.endswith(SETTINGS):
        return False
    return os.path.exists(path[:-len(SETTINGS)] + ".jsonl")


def sidecars(main: Path) -> list[Path]:
    """The settings file `session_info` reads: read again when Droid rewrites it."""
    return [_settings_of(main)]


def session_info(main: Path) -> dict:
    """The model the settings name (a session's lines seldom do)."""
    try:
        data = orjson.loads(files.read_file(_settings_of(main), SETTINGS_LIMIT))
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    info: dict = {}
    if isinstance(data.get("model"), str) and data["model"]:
        info["model"] = data["model"]
    return info


def title_of(ev: Event) -> str | None:
    """The first prompt the person wrote (a sub-agent session's is its task)."""
    if ev.role != "user" or ev.kind != "message" or ev.hidden:
        return None
    text = ev.text()
    if text.startswith(_SUBAGENT):
        kind = _SUBAGENT_TYPE.search(text)
        task = _TASK.search(text)
        words = f"sub-agent task ({kind.group(1)})" if kind else "sub-agent task"
        return f"{words}: {task.group(1).strip()}" if task else words
    return prompt_title(text) if text else None
