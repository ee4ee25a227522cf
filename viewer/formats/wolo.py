"""Wolo sessions (lzjever/wolo, PyPI `mbos-wolo`): messages made of parts, one file per message.

On disk (`wolo/session.py`, `SessionStorage`) a session is a folder:

    ~/.wolo/sessions/<session_id>/
        session.json          {id, created_at, updated_at, parent_session_id, agent_type, title,
                               tags, agent_display_name, pid, pid_updated_at, workdir,
                               execution_mode (0.13)}
        messages/<msg_id>.json  one message each, rewritten in place while it streams
        todos.json            {todos: [...]}

A message is `{id, role, parts, timestamp, finished, finish_reason, reasoning_content, metadata}`;
`timestamp` is unix float seconds and is what Wolo sorts the folder's messages by. Parts are
`{type: "text", id, text}` and `{type: "tool", id, tool, input, output, status, start_time,
end_time}`; `status` goes pending → running → completed | error | partial | interrupted (the design
note also names `failed`); unset times are `0.0`. `metadata.compaction.is_summary` marks the user
message a history compaction wrote in place of the turns it summarised. Older Wolo wrote a session
as one JSON file `{id, messages: [...], created_at, ...}`; that shape is read too.

Read here: (a) JSONL, one message per line; (b) a JSON document: a list of messages or the old
single-file session; (c) the real folder: `detect.read_document` asks `folder_document` first, which
turns a `session.json` with a `messages/` folder beside it into one document (session metadata,
todos and the messages ordered by their own `timestamp`), so discovery, the index and the raw view
all see the folder as one session keyed by its `session.json`. Wolo rewrites `session.json` each
time it saves a message, so a growing session is re-read when that file changes.

A ToolPart is the call and its result at once: each becomes a `ToolUse` (with the part's status and
start/end times) followed, when the status is final or output exists, by a `ToolResult` in the same
event; a `running` part marks the call executing. A `failed` / `error` part is a failed call; an
`interrupted` or `cancelled` one is named so (it did not fail, it was stopped). Wolo saves most
failures of its own tools as `completed` (see `_FAILED_OUTPUT`): those are read as failed from the
text the tool wrote; an `error` part that something refused before it ran (the person, a path or
shell guard, the agent's permissions: `_REFUSED`) reads denied. A shell command that exits non-zero
is saved `completed` and its exit code is not saved at all: shell.py returns it only in the
result's `metadata`, the executor copies it to the part's `_metadata` for its live display (which
shows such a command with ✓ too), and neither is written; the output is stdout then stderr, with
no "exit code" line (checked at lzjever/wolo 579d4cb / 014a88b). It reads completed, its output being
all there is; only a timeout ("Command timed out after …ms"), the high-risk guard's refusal and an
exception the executor caught (`error` "Error executing shell: …") say it failed. A `batch` is
`partial` when Wolo saw one of its calls fail, and its output lists each call ("N. [✓] tool" and the
start of its output): a call Wolo counted ✓ whose output is its tool's own failure report (a task's
"Subagent error: …") fails the batch too (`_failed_in_batch`), as does a sub-agent it ran whose
own session ended in a failed turn (`agent_failed`, for every sub-agent of the batch).
`reasoning_content` is a `Thinking` block. The
session metadata and todos are hidden bookkeeping cards; the agent's display name comes from
`session.json` (`session_info`, which also reports the session finished once `pid` is cleared).
A ToolPart's `metadata` (compaction pruning) becomes a note; `finished`, `finish_reason` (shown when
it is error / interrupted / doom_loop / max_steps / length) and message `metadata` stay in `meta` and
the raw view.

Sub-agents (wolo/tools_pkg/task.py, 0.13): the `task` tool (`{agent, message, description}`) calls
`create_subsession`, which writes a new session beside its parent, `sessions/<8 hex>/`, whose
session.json names `parent_session_id` and `agent_type`; the task message becomes that session's
first user message, the sub-agent runs there, and the parent learns only its last reply: the part's
output, "Subagent (<agent>) response:\n…" (or "Subagent error: …"). The part records nothing of the
child's id (the tool's `metadata.subsession_id` is dropped by the executor), so a child is matched to
its call by time: Wolo runs a turn's tools one after another, and the child is created while its call
runs (between the part's `start_time` and `end_time`; a part still `pending` on disk has no times
yet: the first such `task` part of the parent takes it). A `batch` call may run several tasks: all
its children go under it. `companions` lists a session's children (and theirs, a few levels down)
from the sessions folder's session.json files alone, read only for folders written since the parent
began; `spawning_calls` matches them to calls; the index nests each under its call. A child opened
on its own says whose sub-agent it is (`session_info`: `parent_path`).

How a sub-agent's run ended is read from its own session, not from the parent's part alone: Wolo's
agent_loop (0.13) catches a failed model call and returns, so the task tool passes on whatever the
sub-agent wrote ("Subagent (<agent>) response:\n…") and the part is saved `completed`; the
sub-agent's session keeps its last reply unfinished (saved empty before the model call, never again;
shown as "reply not saved", kind `unfinished`) or, when a last save flushed it, ended with
`finish_reason: "error"`. Such a task call is an error (`agent_failed`, asked by the index of a call
that returned). A parent killed while a task ran keeps that part `pending` or `running` (a last
flush) and its `pid`: once the session has ended (pid cleared, or its files quiet ten minutes) the
call reads "never answered", not executing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from .. import files, keys
from ..model import CANCELLED, DENIED, DENIED_BY_SETTINGS, INTERRUPTED, Data, Event, Notice, Ref, \
    Text, Thinking, ToolResult, ToolUse
from .common import as_text, generic_event, load_json_file, set_time

NAME = "wolo"
MODE = "jsonl"

SESSION_FILE = "session.json"
TODOS_FILE = "todos.json"
MESSAGES_DIR = "messages"
FOLDER_KEY = "wolo_session_folder"  # marks the document `folder_document` builds

# part status → is_error of the result it carries (None = success); other statuses have no result
_FINAL = {"completed": None, "partial": True, "success": None, "done": None,
          "error": True, "failed": True, "interrupted": True, "cancelled": True}
_UNFINISHED = {"pending", "running"}
# part statuses that say how a call ended without running to completion: not failures of the tool
_NAMED = {"interrupted": INTERRUPTED, "cancelled": CANCELLED, "canceled": CANCELLED}
_NOTED_ENDS = {"error", "interrupted", "doom_loop", "max_steps", "length", "content_filter"}
# Wolo's executor (wolo/tools_pkg/executor.py, 0.13) saves a part `error` only for a path-guard
# refusal or an exception; a tool that reports its own failure returns it as its output with
# `metadata.error` set, the executor keeps `status = "completed"`, and that metadata is never saved.
# The output texts of those failures, per tool, as the tools write them (file_read.py,
# file_write.py + smart_replace.py, search.py, shell.py, task.py, todo.py), so that such a part reads
# failed. A shell command's non-zero exit is not among them: its code is not saved anywhere.
_FAILED_OUTPUT = {
    "read": re.compile(r"(?:File not found|Not a file|Cannot read binary file|Error reading (?:file|"
                       r"image|PDF)): |Cannot read (?:image|PDF): \w+ library not installed"),
    "write": re.compile(r"Error writing file: "),
    "edit": re.compile(r"(?:File not found|Error editing file): |Old text not found in file|"
                       r"old_string (?:and new_string must be different|cannot be empty)$|"
                       r"Found multiple matches for old_string"),
    "grep": re.compile(r"(?:Path not found|Error running grep): |Search timed out after \d+ seconds$"),
    "glob": re.compile(r"(?:Path not found|Error running glob): "),
    "ls": re.compile(r"(?:Path not found|Not a directory|Error listing directory): "),
    "shell": re.compile(r"Command timed out after \d+ms$"),
    "task": re.compile(r"Subagent error: "),
    "todowrite": re.compile(r"TodoWrite requires session_id$"),
    "todoread": re.compile(r"TodoRead requires session_id$"),
}
# An `error` part that never ran because something refused it, by the output Wolo saves for it
# (0.13): the path guard (path_guard/middleware.py: the person answered no, or the path is not
# allowed), the shell's high-risk guard (tools_pkg/shell.py: the person answered no, or stdin is
# not a terminal so nobody was asked) and an agent's tool permissions (tools_pkg/executor.py:
# `deny`, or `ask`, which Wolo treats as deny). First match wins.
_REFUSED = [
    (re.compile(r"Permission denied by user: "), DENIED),
    (re.compile(r"Denied high-risk shell command in non-interactive mode\. "), DENIED_BY_SETTINGS),
    (re.compile(r"Denied high-risk shell command\b"), DENIED),
    (re.compile(r"Permission denied: "), DENIED_BY_SETTINGS),
    (re.compile(r"Permission required: .* requires user confirmation for "), DENIED_BY_SETTINGS),
]
_MULTIEDIT = re.compile(r"Multi-edit completed: (\d+)/(\d+) files edited")
_MESSAGE_KEYS = {"finished", "finish_reason", "reasoning_content"}
_SESSION_KEYS = {"agent_display_name", "workdir", "pid", "parent_session_id", "execution_mode"}


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict) or not isinstance(rec.get("parts"), list):
        return 0
    if not isinstance(rec.get("role"), str):
        return 0
    parts = [p for p in rec["parts"] if isinstance(p, dict)]
    if any(p.get("type") == "tool" and "tool" in p and "status" in p for p in parts):
        return 3
    if parts and not all(p.get("type") in ("text", "tool") for p in parts):
        return 0  # Gemini-style {text} parts, OpenCode's other part types
    if _MESSAGE_KEYS & rec.keys():
        return 3
    if "id" in rec and "timestamp" in rec:
        return 2
    return 0


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """Messages inside a document: a list, the old single-file session, or a session folder."""
    if isinstance(doc, list):
        if any(sniff(r) for r in doc[:50]):
            return [(f"[{i}]", r) for i, r in enumerate(doc)]
        return None
    if not isinstance(doc, dict):
        return None
    if doc.get(FOLDER_KEY) is True:
        out: list[tuple[str, Any]] = [(SESSION_FILE, doc.get("session"))]
        out.extend((f"{MESSAGES_DIR}/{name}", rec) for name, rec in doc.get("messages") or [])
        if doc.get("todos") is not None:
            out.append((TODOS_FILE, doc["todos"]))
        return out
    msgs = doc.get("messages")
    if isinstance(msgs, list) and any(sniff(r) for r in msgs[:50]):
        return [(f"messages[{i}]", r) for i, r in enumerate(msgs)]
    return None


def document_bonus(doc: Any) -> int:
    if isinstance(doc, dict) and doc.get(FOLDER_KEY) is True:
        return 10
    if isinstance(doc, dict) and "messages" in doc and "created_at" in doc and "id" in doc:
        return 1
    return 0


def event(rec: Any, ref: Ref) -> Event:
    # the folder document's two bookkeeping files, recognised by where they sit
    if ref.path == SESSION_FILE:
        return _session_card(rec, ref)
    if ref.path == TODOS_FILE:
        return _todos_card(rec, ref)
    if not isinstance(rec, dict):
        return generic_event(rec, ref, NAME)
    if not isinstance(rec.get("parts"), list):
        ev = generic_event(rec, ref, NAME)
        ev.format = NAME
        return ev
    role = rec.get("role") if isinstance(rec.get("role"), str) and rec.get("role") else "unknown"
    ev = Event(ref, role, format=NAME)
    reasoning = rec.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        ev.blocks.append(Thinking(reasoning))
    elif reasoning not in (None, ""):
        ev.blocks.append(Thinking(as_text(reasoning)))
    for part in rec["parts"]:
        _part(ev, part)
    md = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
    compaction = md.get("compaction") if isinstance(md.get("compaction"), dict) else None
    if compaction and compaction.get("is_summary"):
        n = compaction.get("compacted_message_ids")
        words = "Summary of the earlier conversation (compaction"
        words += f", {len(n)} messages)" if isinstance(n, list) else ")"
        ev.kind = "compact_summary"
        ev.blocks.insert(0, Notice(words, compaction))
    reason = rec.get("finish_reason")
    if isinstance(reason, str) and reason in _NOTED_ENDS:
        ev.blocks.append(Notice(f"turn ended: {reason.replace('_', ' ')}"))
        if reason == "error":
            ev.role = "error"
    if role == "assistant" and not ev.blocks:
        if rec.get("finished") is False:
            # saved before its model call and not since: the call is under way, or it raised
            # (agent_loop swallows the error: see `agent_failed`)
            ev.kind = "unfinished"
            ev.blocks.append(Notice("reply not saved: the turn has not finished"))
        else:
            ev.blocks.append(Notice("empty message"))
    if isinstance(rec.get("id"), str) and rec["id"]:
        ev.source_id = rec["id"]
    set_time(ev, rec.get("timestamp"))
    ev.meta = {k: v for k, v in rec.items() if k not in ("parts", "reasoning_content", "timestamp")}
    return ev


def _part(ev: Event, part: Any) -> None:
    if not isinstance(part, dict):
        ev.blocks.append(Data(part, "part"))
        return
    t = part.get("type")
    if t == "text":
        text = part.get("text")
        if isinstance(text, str):
            if text.strip():
                ev.blocks.append(Text(text))
        elif text is not None:
            ev.blocks.append(Text(as_text(text), markdown=False))
    elif t == "tool":
        _tool(ev, part)
    else:
        ev.blocks.append(Data(part, f"{t or 'unknown'} part"))


def _tool(ev: Event, part: dict) -> None:
    call = str(part.get("id") or "")
    status = part.get("status") if isinstance(part.get("status"), str) else None
    state = (status or "").lower()
    ev.blocks.append(ToolUse(call, str(part.get("tool") or "?"), part.get("input"), status=status,
                             started=_time(part.get("start_time")),
                             ended=_time(part.get("end_time"))))
    output, error = part.get("output"), part.get("error")
    md = part.get("metadata") if isinstance(part.get("metadata"), dict) else None
    has_output = output not in (None, "")
    if state in _FINAL or (state not in _UNFINISHED and (has_output or error)):
        is_error = _FINAL.get(state)
        if (error or (state == "completed" and (_failed_output(part.get("tool"), output)
                                                 or _failed_in_batch(part.get("tool"), output)))) \
                and is_error is None:
            is_error = True
        content = []
        if has_output:
            content.append(Text(as_text(output), markdown=False))
        if error:
            content.append(Text(as_text(error), markdown=False))
        if not content:
            content.append(Notice(f"{state or 'finished'}, no output"))
        if md:
            content.append(_part_note(md))
        named = _NAMED.get(state)
        if state == "error" and isinstance(output, str):
            named = next((n for pattern, n in _REFUSED if pattern.match(output)), None)
        ev.blocks.append(ToolResult(call, content, is_error, state=named))
        return
    if state == "running":
        ev.running.append(call)
        if has_output:  # output streamed so far
            ev.blocks.append(Notice("output so far", as_text(output)))
    if md:
        ev.blocks.append(_part_note(md))


def _failed_output(tool: Any, output: Any) -> bool:
    """Whether a `completed` part's output is its tool's own report of a failure."""
    if not isinstance(output, str):
        return False
    if tool == "multiedit":
        m = _MULTIEDIT.match(output)
        return m is not None and int(m[1]) < int(m[2])
    pattern = _FAILED_OUTPUT.get(tool) if isinstance(tool, str) else None
    return pattern is not None and pattern.match(output) is not None


# a `batch` part's output (tools_pkg/executor.py, 0.13): one entry per call, "N. [✓] tool" (✗ when
# the call's own part was not saved `completed`), then the first 200 characters of its output
_BATCH_ENTRY = re.compile(r"^\d+\. \[[✓✗]\] ([\w.-]+)\n {3}(.*?)(?=\n\n\d+\. \[|\n\nSummary: |\Z)",
                          re.MULTILINE | re.DOTALL)


def _failed_in_batch(tool: Any, output: Any) -> bool:
    """Whether a `batch` saved `completed` ran a call that failed all the same: Wolo counts a call
    whose part says `completed` a success (✓), so a tool's own failure report (a sub-agent's
    "Subagent error: …", a file not found) passes as one. Its output's previews say so."""
    if tool != "batch" or not isinstance(output, str) or not output.startswith("Batch execution results"):
        return False
    return any(_failed_output(m[1], m[2]) for m in _BATCH_ENTRY.finditer(output[:20_000]))


def _part_note(md: dict) -> Notice:
    """A ToolPart's metadata (compaction's pruning marks the output it replaced)."""
    if md.get("pruned"):
        n = md.get("original_output_tokens")
        return Notice("output pruned by compaction" + (f" (was ~{n} tokens)" if n else ""), md)
    return Notice("part metadata", md)


def _time(value: Any) -> Any:
    """Wolo writes 0.0 for a time that was never set."""
    if value in (None, 0, 0.0, "") or isinstance(value, bool):
        return None
    return value


def _session_card(meta: Any, ref: Ref) -> Event:
    ev = Event(ref, "system", kind="session", format=NAME, hidden=True,
               hidden_reason="session metadata")
    if not isinstance(meta, dict):
        ev.blocks = [Notice("session.json missing or unreadable"), Data(meta, "session.json")]
        return ev
    words = [f"Wolo session {meta.get('id') or ''}".strip()]
    if meta.get("agent_display_name"):
        words.append(f"agent {meta['agent_display_name']}")
    if meta.get("agent_type"):
        words.append(f"{meta['agent_type']} sub-agent of {meta.get('parent_session_id') or '?'}")
    if meta.get("workdir"):
        words.append(f"in {meta['workdir']}")
    ev.blocks = [Notice(" · ".join(words), meta)]
    if isinstance(meta.get("id"), str):
        ev.source_id = f"session-{meta['id']}"
    set_time(ev, meta.get("created_at"))
    name = meta.get("agent_display_name")
    ev.author = name if isinstance(name, str) and name else None
    return ev


def _todos_card(todos: Any, ref: Ref) -> Event:
    items = todos.get("todos") if isinstance(todos, dict) else None
    n = len(items) if isinstance(items, list) else 0
    return Event(ref, "system", kind="todos", format=NAME, hidden=True, hidden_reason="todos",
                 blocks=[Notice(f"todo list ({n} item{'s' if n != 1 else ''})"),
                         Data(todos, "todos.json")])


def title_of(ev: Event) -> str | None:
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return ev.text() or None
    return None


# --- the folder layout ---------------------------------------------------------------------------


def claims_file(path: Path, head: bytes) -> bool:
    """A `session.json` with a `messages/` folder beside it, when it is Wolo's (told from its first
    bytes) or its first messages are: the session is its folder, even when session.json is
    damaged past JSON records (its messages remain; it was refused as 'not a transcript')."""
    if path.name != SESSION_FILE or not (path.parent / MESSAGES_DIR).is_dir():
        return False
    try:
        meta = orjson.loads(head)
    except orjson.JSONDecodeError:
        meta = None
    return _is_meta(meta) or _messages_tell(sorted((path.parent / MESSAGES_DIR).glob("*.json"))[:3])


def _is_meta(meta: Any) -> bool:
    """Whether a decoded session.json is Wolo's."""
    return isinstance(meta, dict) and "id" in meta and bool(_SESSION_KEYS & meta.keys())


def _messages_tell(paths: list[Path]) -> bool:
    """Whether any of these message files is Wolo's."""
    return any(sniff(load_json_file(p)) for p in paths)


def folder_document(path: Path) -> dict | None:
    """A Wolo session folder read as one document, when `path` is its `session.json`; else None.

    Messages are ordered as Wolo orders them: by their own `timestamp`, then by file name; files
    that do not parse come last, as records the index shows as unparsed."""
    if path.name != SESSION_FILE:
        return None
    folder = path.parent
    msgs_dir = folder / MESSAGES_DIR
    if not msgs_dir.is_dir():
        return None
    meta = load_json_file(path)
    messages = [[p.name, load_json_file(p)] for p in msgs_dir.glob("*.json")]  # (lists, not tuples: a
    # record nested too deep is cut through lists and dicts only, reader.cap_depth)
    if not _is_meta(meta) and not any(sniff(rec) for _, rec in messages[:20]):
        return None  # another tool's session.json: read it as the file it is
    messages.sort(key=lambda m: _order(m[1], m[0]))
    todos = load_json_file(folder / TODOS_FILE) if (folder / TODOS_FILE).is_file() else None
    return {FOLDER_KEY: True, "session": meta, "messages": messages, "todos": todos}


def _order(rec: Any, name: str) -> tuple:
    ts = rec.get("timestamp") if isinstance(rec, dict) else None
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return (0, float(ts), name)
    return (1, 0.0, name)


def session_info(main: Path) -> dict:
    """The agent's display name, whether no Wolo process holds the session (pid cleared), and for
    a sub-agent's session its type and where its parent's session.json is (`parent_path`, beside
    it under sessions/, whether or not it is there)."""
    if main.name != SESSION_FILE:
        return {}
    meta = load_json_file(main)
    if not isinstance(meta, dict):
        return {}
    info: dict = {}
    if isinstance(meta.get("agent_display_name"), str) and meta["agent_display_name"]:
        info["agent"] = meta["agent_display_name"]
    if "pid" in meta and meta.get("pid") is None:
        info["finished"] = True
    parent = _parent_id(meta, main)
    if parent is not None:
        info["parent_session"] = parent
        info["parent_path"] = str(main.parent.parent / parent / SESSION_FILE)
        info["thread"] = keys.thread_key(main.parent.name)  # its thread in the parent's index
        if isinstance(meta.get("agent_type"), str) and meta["agent_type"]:
            info["agent_type"] = meta["agent_type"]
    return info


# --- sub-agent sessions --------------------------------------------------------------------------

SPAWNING = {"task", "batch"}  # the tools that start a sub-agent (a batch: through its task calls)
CHILD_DEPTH = 4  # levels of sub-agents of sub-agents listed under one session
META_LIMIT = 1 << 20  # a session.json is a few hundred bytes
SLACK = 2.0  # seconds a child's creation may sit outside its call's times (clock steps, rounding)
# a session id as Wolo makes one (8 hex) or accepts one from the person (session.py
# _validate_session_id: letters, digits, `_`, `-`): the only ids joined into a path
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def _parent_id(meta: dict, main: Path) -> str | None:
    """The parent session id a session.json names, when it is a usable one: not its own id."""
    parent = meta.get("parent_session_id")
    if not isinstance(parent, str) or not _SESSION_ID.fullmatch(parent):
        return None
    own = meta.get("id") if isinstance(meta.get("id"), str) else main.parent.name
    return None if parent in (own, main.parent.name) else parent


def _small_meta(p: Path) -> dict | None:
    try:
        data = orjson.loads(files.read_file(p, META_LIMIT))
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def companions(main: Path) -> list[tuple[str, Path, dict]]:
    """(session id, its session.json, meta) of each sub-agent session of the session at `main`,
    and of theirs, breadth first (a cycle of parents, or a session naming itself, ends the walk).
    meta: the child's `session_id`, `parent_session_id`, `agent_type`, `created_at`, and
    `spawned_in`, the thread of this session's index its call is in ("main" for a direct child)."""
    if main.name != SESSION_FILE:
        return []
    own = _small_meta(main)
    if own is None:
        return []
    sid = own["id"] if isinstance(own.get("id"), str) and own["id"] else main.parent.name
    since = _number(own.get("created_at"))
    by_parent: dict[str, list[tuple[Path, dict]]] = {}
    try:
        with os.scandir(main.parent.parent) as it:
            entries = [e for e in it if e.name != main.parent.name]
    except OSError:
        return []
    for e in entries:
        try:
            # a child's folder is written (its session.json replaced) after the parent began
            if not e.is_dir(follow_symlinks=False) or (
                    since is not None and e.stat(follow_symlinks=False).st_mtime < since - SLACK):
                continue
        except OSError:
            continue
        p = Path(e.path) / SESSION_FILE
        meta = _small_meta(p)
        parent = _parent_id(meta, p) if meta is not None else None
        if parent is not None:
            by_parent.setdefault(parent, []).append((p, meta))
    out: list[tuple[str, Path, dict]] = []
    seen, frontier = {sid, main.parent.name}, [(sid, "main")]
    for _ in range(CHILD_DEPTH):
        below = []
        for parent, thread in frontier:
            kids = by_parent.get(parent, [])
            kids.sort(key=lambda k: (_number(k[1].get("created_at")) or 0.0, k[0].parent.name))
            for p, meta in kids:
                cid = p.parent.name
                if cid in seen:
                    continue
                seen.add(cid)
                kind = meta.get("agent_type")
                out.append((cid, p, {"session_id": cid, "parent_session_id": parent,
                                     "agent_type": kind if isinstance(kind, str) else None,
                                     "created_at": _number(meta.get("created_at")),
                                     "spawned_in": thread}))
                below.append((cid, keys.thread_key(cid)))
        frontier = below
    return out


def companion_folders(main: Path) -> list[Path]:
    """The sessions folder: a new sub-agent session is a new folder in it."""
    return [main.parent.parent] if main.name == SESSION_FILE else []


def thread_label(agent: str, meta: dict) -> str:
    kind = meta.get("agent_type") if isinstance(meta, dict) else None
    return f"{kind} agent · session {agent}" if kind else f"session {agent}"


_TURN_ROLES = ("user", "assistant", "error")


def agent_failed(th) -> bool:
    """Whether the sub-agent of thread `th` (index columns) ended on a turn that failed, though the
    `task` call that ran it was saved `completed`: Wolo's agent_loop (0.13) catches a failed model
    call and returns, and the task tool passes on whatever the sub-agent wrote ("Subagent (<agent>)
    response:\n…"). The sub-agent's own session keeps the truth: its last turn ended with
    `finish_reason: "error"` (when it was saved again), or is the empty reply Wolo saved before the
    model call and never saved again. Asked only of a call that has returned, so its sub-agent's
    run is over."""
    roles, kinds, hidden = th.roles, th.kinds, th.hidden
    for i in range(len(hidden) - 1, -1, -1):
        if hidden[i] or roles[i] not in _TURN_ROLES:
            continue
        return roles[i] == "error" or kinds[i] == "unfinished"
    return False


def spawning_calls(threads: dict, calls: dict) -> dict[str, str]:
    """Thread name → id of the call that spawned it, for the sub-agent threads `companions` found
    (`threads`: name → meta) among `calls` (the session's ToolCalls). A child is matched, in order of
    creation, to a `task` (or `batch`) call of the thread it was spawned in: first one whose own
    times hold its creation, else the first such call with no end yet (still pending on disk) that
    began before it. A `task` spawns one child; a `batch` may spawn several."""
    by_thread: dict[str, list] = {}
    for c in calls.values():
        if c.name in SPAWNING and c.call is not None:
            by_thread.setdefault(c.call[0], []).append(c)
    for cands in by_thread.values():
        cands.sort(key=lambda c: c.call[1])  # file order: the order Wolo ran them in
    kids = sorted(((m.get("created_at") if isinstance(m.get("created_at"), (int, float)) else None,
                    name, m.get("spawned_in")) for name, m in threads.items() if isinstance(m, dict)
                   and "spawned_in" in m), key=lambda k: (k[0] is None, k[0] or 0.0, k[1]))
    taken: set[str] = set()
    out: dict[str, str] = {}
    for at, name, spawned_in in kids:
        free = [c for c in by_thread.get(spawned_in, []) if c.name != "task" or c.id not in taken]
        if at is None:
            pick = None
        else:
            pick = next((c for c in free if c.called_at is not None and c.finished_at is not None
                         and c.called_at - SLACK <= at <= c.finished_at + SLACK), None) or next(
                (c for c in free if c.finished_at is None
                 and (c.called_at is None or c.called_at - SLACK <= at)), None)
        if pick is not None:
            out[name] = pick.id
            taken.add(pick.id)
    return out
