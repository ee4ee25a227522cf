"""OpenCode sessions (sst/opencode, now anomalyco/opencode): messages made of parts, one file each.

OpenCode's message model (`packages/opencode/src/session/message-v2.ts`) is the one Wolo's copies:
a message is its info (`User` / `Assistant`) plus an ordered list of parts. Three generations of
storage hold it; the first two are read here.

* File storage (`storage/storage.ts`, OpenCode up to 1.1.x), under `~/.local/share/opencode/storage/`:

      session/<projectID>/<sessionID>.json   Session.Info {id, slug, projectID, directory, parentID,
                                             title, version, time {created, updated, compacting,
                                             archived}, share {url}, summary {additions, deletions,
                                             files}, revert {messageID, partID, snapshot, diff}}
      message/<sessionID>/<messageID>.json   MessageV2.Info: user {role, time {created}, agent,
                                             model {providerID, modelID}, system, tools} or
                                             assistant {role, time {created, completed}, parentID,
                                             modelID, providerID, mode, agent, path {cwd, root},
                                             cost, tokens {input, output, reasoning, cache {read,
                                             write}}, error {name, data}, summary, finish}
      part/<messageID>/<partID>.json         MessageV2.Part: text, reasoning, tool, file,
                                             step-start, step-finish, snapshot, patch, agent,
                                             subtask, retry, compaction
      todo/<sessionID>.json                  [{content, status, priority, id}]

  Ids sort in creation order (`Identifier.ascending`), and OpenCode lists a session's messages and
  a message's parts sorted by id (`Storage.list` sorts), so file names give the order. Parts are
  written again in place while they stream (`Session.updatePart` on every text delta and tool
  state change), so a live session changes files in `part/` and `message/` and hardly ever its
  session file: `folder_identity` names the state of the files OpenCode writes to (its messages
  folder, its last messages and their parts) for the index and the live tail.
* Before the per-project move (storage.ts's first MIGRATION, OpenCode 0.1 / 0.2):
  `project/<dir>/storage/session/info/<sessionID>.json`, `…/session/message/<sessionID>/*.json`
  and `…/session/part/<sessionID>/<messageID>/*.json`; the oldest messages (`session/message.ts`,
  "MessageV1") hold their parts inline (`parts`, with `tool-invocation` parts: {state call |
  partial-call | result, toolCallId, toolName, args, result}) and their facts in `metadata` (time,
  error, tool {callID: {title, time}}, assistant {modelID, cost, tokens, summary}).
* SQLite (OpenCode 1.2.0, 2026-02, and later — and OpenCode 2.x's `session_v2` / `session_message`
  tables in the same file, read into the same shape: see opencode_db — `storage/db.ts`, `~/.local/share/opencode/opencode.db`
  in WAL mode, tables session / message / part / todo whose `data` column holds the same JSON).
  Each session row is listed as a session named by a path below the database file
  (`…/opencode.db/<session id>`): `opencode_db` owns those paths and reads a row-session into the
  same export-shaped document (`folder_document`), its identity (`folder_identity`), its
  sub-agents (`companions`) and its parent (`session_info`). (`storage/json-migration.ts`, up to
  1.15, copies the file storage into the database and leaves the files in place: a session found
  in both is listed once, from the database: `opencode_db.shadowed`.)

`opencode run --format json` (cli/cmd/run.ts) prints a JSONL log of a run: one line per part as it
ended (`{type: step_start | text | reasoning | tool_use | step_finish, timestamp, sessionID, part}`)
and `{type: "error", error}`; each line is an event (step starts and plain step ends hidden, a
step's tokens and cost its own model call), so CI and benchmark logs of OpenCode (and its forks,
Kilo's `user_message` line too) read as sessions.

`opencode export <sessionID>` (cli/cmd/export.ts) writes `{info, messages: [{info, parts}], todos}`;
`folder_document` reads a session of the file storage into that same shape (marked with
`FOLDER_KEY`), so both are read by one `records` / `event`: the session info is a hidden card
(its title is the session's title), each message one event, the todos a hidden card.

Parts: text → prose (`synthetic` text OpenCode added itself, such as a mentioned file's content, is
a context chip); reasoning → thinking; tool → a `ToolUse` with the state's status and start / end
times, then for `completed` / `error` a `ToolResult` (output and attachments — a bash command whose
`metadata.exit` is not 0 failed; error text; an error
"Tool execution aborted" or metadata.interrupted is interrupted, a permission refusal denied);
a `running` tool marks the call executing (bash's `metadata.output` streamed so far is shown); a
`task` tool's `metadata.sessionId` names the sub-agent session it spawned. file → media (inline
data) or a note of the file; step-finish → the step's tokens and cost (the message's usage is the
sum of its steps: one model call each); patch → the files the step changed; agent, subtask,
retry and compaction → notes. An assistant message with `summary: true` is a compaction summary;
an `error` is shown (MessageAbortedError: the person stopped the reply). Messages at and after the
session's `revert.messageID` (OpenCode's /undo, kept on disk until the next prompt) say so.

Sub-agents: the `task` tool (tool/task.ts) creates a session with `parentID` beside its parent's
(`session/<projectID>/`), titled "<description> (@<agent> subagent)", and records its id in the
part's `state.metadata.sessionId`. `companions` lists a session's children (and theirs) from the
session files of its project folder; the index nests each under its call.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from .. import files, keys
from ..reader import BadLine
from . import opencode_db
from ..model import DENIED, DENIED_BY_SETTINGS, INTERRUPTED, Context, Data, Event, \
    Media, Notice, Ref, Text, Thinking, ToolResult, ToolUse
from .common import as_text, generic_event, load_json_file, set_time

NAME = "opencode"
MODE = "document"

FOLDER_KEY = "opencode_session_folder"  # marks the document `folder_document` builds
INFO_LIMIT = 1 << 20  # a session file is a few hundred bytes (its summary diffs moved out in 0.5)
CHILD_DEPTH = 4  # levels of sub-agents of sub-agents listed under one session
ROW_STORE = opencode_db  # OpenCode 1.2+'s database: its session rows are sessions (formats/__init__)
_ID = opencode_db.ID  # the only ids joined into a path
# a tool part's error text when something refused the call before it ran (permission/next.ts:
# RejectedError, CorrectedError, DeniedError), or when the run was stopped (session/processor.ts)
_REFUSED = [
    (re.compile(r"The user rejected permission to use this specific tool call"), DENIED),
    (re.compile(r"The user has specified a rule which prevents you from using this specific tool"),
     DENIED_BY_SETTINGS),
]
_ABORTED = re.compile(r"Tool execution (?:was )?(?:aborted|interrupted)")
_STEP_ENDS = {"length": "the output hit its length limit", "content-filter": "the provider's "
              "content filter stopped it", "error": "the step failed"}
_MESSAGE_SKIP = {"id", "sessionID", "role", "time", "parts"}


# --- detection ------------------------------------------------------------------------------------


def _session_layout(path: Path) -> tuple[Path, Path] | None:
    """(messages folder, parts folder) of a session file in either file layout, else None:
    `storage/session/<projectID>/<id>.json` or the older `…/storage/session/info/<id>.json`."""
    if path.suffix != ".json" or not _ID.fullmatch(path.stem):
        return None
    folder = path.parent
    if folder.parent.name != "session":
        return None
    if folder.name == "info" and (folder.parent / "message").is_dir():
        return folder.parent / "message" / path.stem, folder.parent / "part" / path.stem
    storage = folder.parent.parent
    return storage / "message" / path.stem, storage / "part"


def _is_info(data: Any) -> bool:
    """Whether a decoded value is an OpenCode Session.Info."""
    return (isinstance(data, dict) and isinstance(data.get("id"), str)
            and isinstance(data.get("time"), dict) and isinstance(data.get("title"), str)
            and bool({"version", "projectID", "slug", "directory"} & data.keys()))


def claims_file(path: Path, head: bytes) -> bool:
    """Whether `path` is a session file of OpenCode's file storage, told from where it sits and its
    first bytes alone (discovery asks this of every `.json` file: reading the whole session to
    know would read every message and part of every session on a first listing); or a session
    row of OpenCode's database."""
    if opencode_db.is_row(str(path)):
        return True
    layout = _session_layout(path)
    if layout is None:
        return False
    try:
        if _is_info(orjson.loads(head)):
            return True
    except orjson.JSONDecodeError:
        pass
    return _has_messages(layout[0])  # a damaged session file: its messages are still there


def skip_folders(names: set) -> set:
    """The folders of an OpenCode data folder discovery must not walk into: storage's `message/`
    and `part/` (a file per message and per part, read with their session), and the rest beside
    `session/` (projects, diffs, todos, shares); the data folder's `snapshot/` (git objects)."""
    if "session" in names and "message" in names and "part" in names:
        return names - {"session"}
    if "info" in names and "message" in names and "part" in names:  # the older session/ folder
        return {"message", "part"}
    if "storage" in names and "snapshot" in names:
        return {"snapshot"}  # a git repository per project: thousands of folders of objects
    return set()


# the lines `opencode run --format json` prints (cli/cmd/run.ts: `emit(type, {part})` writes
# `{type, timestamp, sessionID, part}`; a session error `{type: "error", …, error}`)
_RUN_LINES = {"step_start", "step_finish", "text", "reasoning", "tool_use", "tool_running",
              "user_message", "error"}


def _run_line_kind(rec: dict) -> str | None:
    kind = rec.get("type")
    return kind if isinstance(kind, str) and kind in _RUN_LINES and isinstance(
        rec.get("sessionID"), str) else None


def sniff(rec: Any) -> int:
    """An exported message (`{info, parts}`), a session's info (the export's `info`), or a line of
    `opencode run --format json`."""
    if not isinstance(rec, dict):
        return 0
    if _run_line_kind(rec):
        part = rec.get("part")
        if isinstance(part, dict) and isinstance(part.get("type"), str) and "messageID" in part:
            return 3
        return 2 if rec["type"] == "error" and "error" in rec else 0
    info, parts = rec.get("info"), rec.get("parts")
    if isinstance(info, dict) and isinstance(parts, list) and info.get("role") in ("user", "assistant"):
        if isinstance(info.get("time"), dict) or any(isinstance(p, dict) and "messageID" in p
                                                     for p in parts[:5]):
            return 3
        return 1
    if _is_info(rec):
        return 2
    return 0


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """An export (`{info, messages: [{info, parts}], todos}`) or a session folder read as one."""
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return None
    msgs = doc["messages"]
    if doc.get(FOLDER_KEY) is not True and not (
            _is_info(doc.get("info")) or any(sniff(m) == 3 for m in msgs[:20])):
        return None
    out: list[tuple[str, Any]] = [("info", doc.get("info"))]
    revert = _revert_point(doc.get("info"))
    for i, m in enumerate(msgs):
        if revert and isinstance(m, dict) and isinstance(m.get("info"), dict) and \
                isinstance(m["info"].get("id"), str) and m["info"]["id"] >= revert:
            m = {**m, "reverted": True}
        out.append((f"messages[{i}]", m))
    if isinstance(doc.get("todos"), list) and doc["todos"]:
        out.append(("todos", doc["todos"]))
    if isinstance(doc.get("unreachable"), str):
        out.append(("unreachable", doc["unreachable"]))
    if isinstance(doc.get("stale_wal"), str):
        out.append(("stale_wal", doc["stale_wal"]))
    return out


def _revert_point(info: Any) -> str | None:
    revert = info.get("revert") if isinstance(info, dict) else None
    mid = revert.get("messageID") if isinstance(revert, dict) else None
    return mid if isinstance(mid, str) and mid else None


def document_bonus(doc: Any) -> int:
    if isinstance(doc, dict) and (doc.get(FOLDER_KEY) is True or _is_info(doc.get("info"))):
        return 10
    return 0


# --- events ---------------------------------------------------------------------------------------


def event(rec: Any, ref: Ref) -> Event:
    if ref.path == "info":
        return _session_card(rec, ref)
    if ref.path == "todos":
        return _todos_card(rec, ref)
    if ref.path == "unreachable":
        return Event(ref, "system", kind="notice", format=NAME, blocks=[Notice(
            f"This session's messages are not shown: they are in {as_text(rec)}/message and "
            f"{as_text(rec)}/part, outside the folders being served. Serve OpenCode's data folder "
            f"(~/.local/share/opencode) or its storage folder to read them.")])
    if ref.path == "stale_wal":
        return Event(ref, "system", kind="notice", format=NAME, blocks=[Notice(as_text(rec))])
    if not isinstance(rec, dict):
        return generic_event(rec, ref, NAME)
    if _run_line_kind(rec):
        return _run_line(rec, ref)
    info = rec.get("info") if isinstance(rec.get("info"), dict) else None
    if info is None and isinstance(rec.get("parts"), list) and isinstance(rec.get("metadata"), dict):
        return _v1_message(rec, ref)  # a MessageV1 file of the oldest layout: parts inline
    parts = rec.get("parts") if isinstance(rec.get("parts"), list) else None
    if info is None or parts is None:
        ev = generic_event(rec, ref, NAME)
        ev.format = NAME
        return ev
    role = info.get("role") if isinstance(info.get("role"), str) and info["role"] else "unknown"
    ev = Event(ref, role, format=NAME)
    if isinstance(info.get("id"), str) and info["id"]:
        ev.source_id = ev.message_id = info["id"]
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    set_time(ev, time.get("created"))
    for part in parts:
        _part(ev, part)
    if role == "assistant":
        _assistant(ev, info, parts)
    elif role == "user":
        model = info.get("model") if isinstance(info.get("model"), dict) else {}
        if isinstance(model.get("modelID"), str) and model["modelID"]:
            ev.meta["asked_model"] = model["modelID"]
    if rec.get("queued"):  # (a session_input row still waiting: opencode_db._queued)
        ev.blocks.insert(0, Notice(_QUEUED.get(rec["queued"], _QUEUED["queue"])))
    if rec.get("reverted"):
        ev.blocks.insert(0, Notice("undone with /undo: OpenCode no longer sends this message to the "
                                   "model (it stays on disk until the next prompt)"))
    if not ev.blocks:
        ev.blocks.append(Notice("empty message" if role != "assistant" or time.get("completed")
                                else "reply not written yet"))
    ev.meta.update({k: v for k, v in info.items() if k not in _MESSAGE_SKIP})
    return ev


# what a prompt still waiting in session_input says, by its delivery (input.ts `Delivery`)
_QUEUED = {"queue": "queued: not sent yet (OpenCode sends it when the agent's turn ends)",
           "steer": "queued to steer the agent: not taken in yet (at its next step)"}


def _assistant(ev: Event, info: dict, parts: list) -> None:
    model = info.get("modelID")
    if isinstance(model, str) and model:
        ev.model = model
    agent = info.get("agent") or info.get("mode")
    if isinstance(agent, str) and agent:
        ev.author = agent
    ev.usage = _usage(info, parts)
    if info.get("summary") is True:
        ev.kind = "compact_summary"
        ev.blocks.insert(0, Notice("Summary of the earlier conversation (compaction)"))
    err = info.get("error")
    if isinstance(err, dict) or (err not in (None, "", False)):
        name, text = _error_words(err)
        if name == "MessageAbortedError":
            ev.state = INTERRUPTED
            ev.blocks.append(Notice("stopped by the person before the reply ended", err))
        else:
            ev.role = "error"
            ev.blocks.append(Notice(f"{name}: {text}" if text else name, err))


def _error_words(err: Any) -> tuple[str, str]:
    if not isinstance(err, dict):
        return "error", as_text(err)
    name = err.get("name") if isinstance(err.get("name"), str) else "error"
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    text = data.get("message") if isinstance(data.get("message"), str) else ""
    return name, text


def _usage(info: dict, parts: list) -> dict | None:
    """The message's tokens and cost: the sum of its steps' (a step-finish part each: one model
    call), or the message's own where no step recorded them (MessageV2's `tokens` is the last
    step's, its `cost` the sum)."""
    steps = [p for p in parts if isinstance(p, dict) and p.get("type") == "step-finish"
             and isinstance(p.get("tokens"), dict)]
    sources = [p["tokens"] for p in steps] if steps else [info.get("tokens")]
    total = [0, 0, 0, 0]
    seen = False
    for t in sources:
        if not isinstance(t, dict):
            continue
        cache = t.get("cache") if isinstance(t.get("cache"), dict) else {}
        for i, v in enumerate((t.get("input"), _sum(t.get("output"), t.get("reasoning")),
                               cache.get("read"), cache.get("write"))):
            if _count(v):
                total[i] += int(v)
                seen = True
    cost = sum(p["cost"] for p in steps if _count(p.get("cost"))) if steps else info.get("cost")
    if not seen and not _count(cost):
        return None
    usage = dict(zip(("input_tokens", "output_tokens", "cache_read_input_tokens",
                      "cache_creation_input_tokens"), total))
    if _count(cost):
        usage["cost"] = float(cost)
    return usage


_count = opencode_db.is_count


def _sum(*vs: Any) -> float | None:
    got = [v for v in vs if _count(v)]
    return sum(got) if got else None


def _part(ev: Event, part: Any) -> None:
    if isinstance(part, BadLine):  # a part file that did not parse (being written, or damaged)
        ev.blocks.append(Notice(f"a part of this message could not be read: {part.reason}"))
        return
    if not isinstance(part, dict):
        ev.blocks.append(Data(part, "part"))
        return
    t = part.get("type")
    if t == "text":
        text = part.get("text")
        if not isinstance(text, str):
            if text is not None:
                ev.blocks.append(Text(as_text(text), markdown=False))
        elif part.get("synthetic") or part.get("ignored"):
            if text.strip():
                ev.blocks.append(Context("added by OpenCode" if part.get("synthetic")
                                         else "not sent to the model", text, "opencode"))
        elif text.strip():
            ev.blocks.append(Text(text))
    elif t == "reasoning":
        text = part.get("text")
        if isinstance(text, str) and text.strip():
            ev.blocks.append(Thinking(text))
    elif t == "tool":
        _tool(ev, part)
    elif t == "file":
        ev.blocks.append(_file(part))
    elif t in ("step-start", "snapshot"):
        pass  # a step's beginning and its git snapshot hash: nothing a reader needs
    elif t == "step-finish":
        reason = part.get("reason")
        if isinstance(reason, str) and reason in _STEP_ENDS:
            ev.blocks.append(Notice(f"step ended: {_STEP_ENDS[reason]}", part))
    elif t == "patch":
        changed = part.get("files") if isinstance(part.get("files"), list) else []
        names = [os.path.basename(f) for f in changed if isinstance(f, str)]
        if names:
            ev.blocks.append(Notice(f"files changed: {', '.join(names[:8])}"
                                    + (f" and {len(names) - 8} more" if len(names) > 8 else ""),
                                    changed))
    elif t == "agent":
        ev.blocks.append(Notice(f"@{as_text(part.get('name'))} mentioned", part))
    elif t == "subtask":
        ev.blocks.append(Notice(f"sub-task for @{as_text(part.get('agent'))}: "
                                f"{as_text(part.get('description'))}", part.get("prompt")))
    elif t == "retry":
        name, text = _error_words(part.get("error"))
        ev.blocks.append(Notice(f"retry {as_text(part.get('attempt'))} after {name}"
                                + (f": {text}" if text else ""), part.get("error")))
    elif t == "session-event":  # a 2.x message of a kind 1.x had no message for (opencode_db)
        _session_event(ev, part)
    elif t == "compaction":
        ev.kind = "compaction"
        ev.blocks.append(Notice("compaction asked for" + (" (automatic: the context was full)"
                                                          if part.get("auto") else ""), part))
    else:
        ev.blocks.append(Data(part, f"{t or 'unknown'} part"))


def _session_event(ev: Event, part: dict) -> None:
    """What OpenCode 2.x records as a message of its own (`session_message` rows read by
    opencode_db): an agent or model switch as a notice; any other kind its fields, as written."""
    what, data = as_text(part.get("event")), part.get("data")
    data = data if isinstance(data, dict) else {"value": data}
    if what == "agent-switched" and isinstance(data.get("agent"), str):
        ev.kind = "agent_switched"
        ev.blocks.append(Notice(f"agent: {data['agent']}"))
    elif what == "model-switched" and isinstance(data.get("model"), dict):
        model = data["model"]
        ev.kind = "model_switched"
        ev.blocks.append(Notice("model: " + "/".join(as_text(model.get(k)) for k in ("providerID", "id")
                                                      if model.get(k))))
    elif what == "system" and isinstance(data.get("text"), str):
        ev.kind = "context"  # SessionMessage.System: a context update OpenCode gave the model
        ev.blocks.append(Context("context update for the model", data["text"], "opencode"))
    else:
        ev.blocks.append(Data(data, what or "event"))


def _file(part: dict) -> Any:
    mime = part.get("mime") or part.get("mediaType")
    mime = mime if isinstance(mime, str) else None
    url = part.get("url") if isinstance(part.get("url"), str) else None
    name = part.get("filename") if isinstance(part.get("filename"), str) else None
    kind = "image" if mime and mime.startswith("image/") else "document"
    if url and url.startswith("data:") and ";base64," in url[:200]:
        head, _, data = url.partition(";base64,")
        return Media(kind, mime or head[5:] or None, data, None, name)
    src = part.get("source") if isinstance(part.get("source"), dict) else {}
    where = src.get("path") if isinstance(src.get("path"), str) else url
    return Notice(f"attached {name or 'a file'}" + (f" ({mime})" if mime else "")
                  + (f": {where}" if where else ""), part)


def _tool(ev: Event, part: dict) -> None:
    call = str(part.get("callID") or part.get("id") or "")
    name = str(part.get("tool") or "?")
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    status = state.get("status") if isinstance(state.get("status"), str) else None
    times = state.get("time") if isinstance(state.get("time"), dict) else {}
    ev.blocks.append(ToolUse(call, name, state.get("input"), status=status,
                             started=times.get("start"), ended=times.get("end")))
    md = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    child = md.get("sessionId")
    if name == "task" and isinstance(child, str) and _ID.fullmatch(child):
        ev.spawns[call] = keys.thread_key(child)
    if status == "completed":
        content: list = []
        output = state.get("output")
        if output not in (None, ""):
            content.append(Text(as_text(output), markdown=False))
        for a in state.get("attachments") or []:
            if isinstance(a, dict):
                content.append(_file(a))
        if times.get("compacted"):
            content.append(Notice("output cleared from the model's context by compaction"))
        if not content:
            content.append(Notice("completed, no output"))
        # bash (tool/bash.ts) saves its command's exit code in the metadata and the part
        # `completed` whatever it was: a command that failed is a failed call here, as elsewhere
        code = md.get("exit")
        failed = name == "bash" and isinstance(code, int) and not isinstance(code, bool) and code != 0
        if failed:
            content.append(Notice(f"exit code {code}"))
        ev.blocks.append(ToolResult(call, content, True if failed else None))
    elif status == "error":
        error = as_text(state.get("error"))
        content = [Text(error, markdown=False)] if error else [Notice("failed, no error text")]
        named = next((n for pattern, n in _REFUSED if pattern.match(error)), None)
        if named is None and (md.get("interrupted") is True or _ABORTED.match(error)):
            named = INTERRUPTED
            if isinstance(md.get("output"), str) and md["output"]:
                content.insert(0, Text(md["output"], markdown=False))
        ev.blocks.append(ToolResult(call, content, True, state=named))
    elif status == "running":
        ev.running.append(call)
        if isinstance(md.get("output"), str) and md["output"]:  # bash streams its output here
            ev.blocks.append(Notice("output so far", md["output"]))
    elif status != "pending":
        ev.blocks.append(Notice(f"tool state {status or 'unknown'}", state))


# --- the oldest messages: parts inline (MessageV1) ------------------------------------------------


def _v1_message(rec: dict, ref: Ref) -> Event:
    md = rec["metadata"]
    role = rec.get("role") if isinstance(rec.get("role"), str) and rec.get("role") else "unknown"
    ev = Event(ref, role, format=NAME)
    if isinstance(rec.get("id"), str) and rec["id"]:
        ev.source_id = ev.message_id = rec["id"]
    time = md.get("time") if isinstance(md.get("time"), dict) else {}
    set_time(ev, time.get("created"))
    tools = md.get("tool") if isinstance(md.get("tool"), dict) else {}
    for part in rec["parts"]:
        if isinstance(part, dict) and part.get("type") == "tool-invocation" and \
                isinstance(part.get("toolInvocation"), dict):
            _v1_tool(ev, part["toolInvocation"], tools)
        elif isinstance(part, dict) and part.get("type") == "source-url":
            ev.blocks.append(Notice(f"source: {as_text(part.get('title') or part.get('url'))}", part))
        else:
            _part(ev, part)
    assistant = md.get("assistant") if isinstance(md.get("assistant"), dict) else None
    if assistant is not None:
        _assistant(ev, {**assistant, "error": md.get("error")}, [])
    elif md.get("error") is not None:
        name, text = _error_words(md["error"])
        ev.role = "error"
        ev.blocks.append(Notice(f"{name}: {text}" if text else name, md["error"]))
    if not ev.blocks:
        ev.blocks.append(Notice("empty message"))
    ev.meta = {k: v for k, v in rec.items() if k != "parts"}
    return ev


def _v1_tool(ev: Event, inv: dict, tools: dict) -> None:
    call = str(inv.get("toolCallId") or "")
    meta = tools.get(call) if isinstance(tools.get(call), dict) else {}
    times = meta.get("time") if isinstance(meta.get("time"), dict) else {}
    state = inv.get("state") if isinstance(inv.get("state"), str) else None
    status = {"result": "completed", "call": "running", "partial-call": "pending"}.get(state)
    ev.blocks.append(ToolUse(call, str(inv.get("toolName") or "?"), inv.get("args"), status=status,
                             started=times.get("start"), ended=times.get("end")))
    if state == "result":
        ev.blocks.append(ToolResult(call, [Text(as_text(inv.get("result")), markdown=False)],
                                    True if meta.get("error") else None))
    elif state == "call":
        ev.running.append(call)


# --- `opencode run --format json` -----------------------------------------------------------------


def _run_line(rec: dict, ref: Ref) -> Event:
    """One line of `opencode run --format json`: a part as it ended (a tool `completed` / `error`,
    text and reasoning once written, a step's start and end), or the session's error. The person's
    prompt is not printed (a fork's `user_message` line is), nor the model's name."""
    kind = rec["type"]
    part = rec.get("part") if isinstance(rec.get("part"), dict) else None
    ev = Event(ref, "user" if kind == "user_message" else "assistant", format=NAME)
    set_time(ev, rec.get("timestamp"))
    ev.meta = {k: v for k, v in rec.items() if k != "part"}
    if kind == "error" or part is None:
        name, text = _error_words(rec.get("error"))
        ev.role = "error"
        ev.blocks.append(Notice(f"{name}: {text}" if text else name, rec.get("error")))
        return ev
    if isinstance(part.get("id"), str) and part["id"]:
        ev.source_id = part["id"]
    ev.message_id = part.get("messageID") if isinstance(part.get("messageID"), str) else None
    _part(ev, part)
    if kind == "step_start":
        ev.kind, ev.hidden, ev.hidden_reason = "step", True, "a model call began"
        ev.blocks.append(Notice("step started"))
    elif kind == "step_finish":
        # a step is one model call: its own usage (not merged with its message's other steps)
        ev.usage = _usage({}, [part])
        ev.message_id = ev.source_id
        if not ev.blocks:
            ev.kind, ev.hidden, ev.hidden_reason = "step", True, "a model call ended (its tokens and cost)"
            ev.blocks.append(Notice(f"step ended: {as_text(part.get('reason'))}"))
    if not ev.blocks:
        ev.blocks.append(Notice(f"empty {kind.replace('_', ' ')}"))
    return ev


# --- bookkeeping cards ----------------------------------------------------------------------------


def _session_card(info: Any, ref: Ref) -> Event:
    ev = Event(ref, "system", kind="session", format=NAME, hidden=True,
               hidden_reason="session metadata")
    if not isinstance(info, dict):
        why = info.reason if isinstance(info, BadLine) else f"not a session's info: {as_text(info)[:200]}"
        return Event(ref, "system", kind="notice", format=NAME, blocks=[
            Notice(f"the session file cannot be read ({why}): its messages are shown")])
    words = [f"OpenCode session {as_text(info.get('id'))}"]
    if isinstance(info.get("version"), str):
        words.append(f"version {info['version']}")
    if isinstance(info.get("directory"), str):
        words.append(f"in {info['directory']}")
    if isinstance(info.get("parentID"), str):
        words.append(f"sub-agent of {info['parentID']}")
    ev.blocks = [Notice(" · ".join(words), info)]
    summary = info.get("summary") if isinstance(info.get("summary"), dict) else {}
    if any(_count(summary.get(k)) for k in ("additions", "deletions", "files")):
        ev.blocks.append(Notice(f"changed {summary.get('files', '?')} files: "
                                f"+{summary.get('additions', 0)} −{summary.get('deletions', 0)}"))
    share = info.get("share") if isinstance(info.get("share"), dict) else {}
    if isinstance(share.get("url"), str):
        ev.blocks.append(Notice(f"shared at {share['url']}"))
    if _revert_point(info):
        ev.blocks.append(Notice(f"undone back to message {_revert_point(info)} (/undo)",
                                info.get("revert")))
    if isinstance(info.get("id"), str) and _ID.fullmatch(info["id"]):
        ev.source_id = f"session-{info['id']}"
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    set_time(ev, time.get("created"))
    return ev


def _todos_card(todos: Any, ref: Ref) -> Event:
    n = len(todos) if isinstance(todos, list) else 0
    return Event(ref, "system", kind="todos", format=NAME, hidden=True, hidden_reason="todos",
                 blocks=[Notice(f"todo list ({n} item{'s' if n != 1 else ''})"), Data(todos, "todos")])


_DEFAULT_TITLE = re.compile(r"(?:New|Child) session - \d{4}-\d\d-\d\dT")


def title_of(ev: Event) -> str | None:
    """The session's own title (OpenCode writes one from the first prompt), else the first prompt."""
    if ev.kind == "session" and ev.blocks and isinstance(ev.blocks[0].detail, dict):
        title = ev.blocks[0].detail.get("title")
        # (until a title is made from the first prompt, OpenCode's is "New session - <ISO time>")
        if isinstance(title, str) and title.strip() and not _DEFAULT_TITLE.match(title):
            return title
        return None
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return ev.text() or None
    return None


# --- the file storage -----------------------------------------------------------------------------


def folder_document(path: Path) -> dict | None:
    """A session of OpenCode's file storage read as one export-shaped document, when `path` is its
    session file; else None. Messages and parts are ordered by id, as OpenCode orders them; a file
    that does not parse stays in its place as a record the index shows as unparsed. A session row
    of OpenCode's database is read into the same shape (`opencode_db.document`)."""
    layout = _session_layout(path)
    if layout is None:
        try:
            doc = opencode_db.document(str(path))
        except FileNotFoundError:
            return None  # gone from the database: reading the path says so
        except OSError as e:  # the database cannot be read now (locked, damaged): the session says why
            return {FOLDER_KEY: True, "info": BadLine(str(e)), "messages": [], "todos": None}
        return {FOLDER_KEY: True, **doc} if doc is not None else None
    info = load_json_file(path)
    msg_dir, part_root = layout
    if not _is_info(info) and not _has_messages(msg_dir):
        return None  # another tool's file in a folder named session/
    conf = files.current()
    if conf is not None and not conf.follow_symlinks and msg_dir.is_dir() and \
            not conf.inside(files.real_path(msg_dir)):
        # served from below storage/ (its session/ folder): the messages sit outside the roots
        return {FOLDER_KEY: True, "info": info, "messages": [], "todos": None,
                "unreachable": str(msg_dir.parent.parent)}
    messages = []
    for name in _json_names(msg_dir):
        msg = load_json_file(msg_dir / name)
        if isinstance(msg, dict) and isinstance(msg.get("parts"), list):
            messages.append(msg)  # MessageV1: its parts inline
            continue
        parts = [load_json_file(part_root / name[:-5] / p) for p in _json_names(part_root / name[:-5])]
        messages.append({"info": msg, "parts": parts} if isinstance(msg, dict) else msg)
    todo = path.parent.parent.parent / "todo" / path.name
    todos = load_json_file(todo) if todo.is_file() else None
    return {FOLDER_KEY: True, "info": info, "messages": messages,
            "todos": todos if isinstance(todos, list) else None}


def session_files(main: Path) -> list[Path]:
    """The files of a stored session besides its session file, in the order OpenCode writes them:
    each message, then its parts (the live-path fuzzer writes a session from these)."""
    layout = _session_layout(main)
    if layout is None:
        return []
    msg_dir, part_root = layout
    out = []
    for name in _json_names(msg_dir):
        out.append(msg_dir / name)
        out += [part_root / name[:-5] / p for p in _json_names(part_root / name[:-5])]
    return out


def _has_messages(msg_dir: Path) -> bool:
    try:
        with os.scandir(msg_dir) as it:
            return any(e.name.startswith("msg_") and e.name.endswith(".json") for e in it)
    except OSError:
        return False


def _json_names(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return sorted(e.name for e in it if e.name.endswith(".json") and not e.name.startswith("."))
    except OSError:
        return []


TAIL_MESSAGES = opencode_db.TAIL_MESSAGES  # the last messages whose files and parts are looked at


def folder_identity(path: str) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) standing for a file-storage session as a whole, or None when `path`
    is no such session file. OpenCode writes a streaming part again in place (a text part on every
    delta, a tool part on each state), which changes neither the session file nor a folder's time,
    so the files themselves are looked at — but only where OpenCode writes: the messages folder
    (a message added or removed: /undo's cleanup, a new step) and the last TAIL_MESSAGES messages
    with their parts (the reply being written, its steps, the prompt's summary). A message is
    written again later only along with new ones (compaction's pruning marks old tool parts as it
    adds its summary), so the whole is read again then. The list asks this of every session it
    shows: a stat of every part of a long session (thousands) each time would cost it seconds.

    size and inode are the session file's own (readers take the size as the file's length);
    mtime_ns is the newest time among those files and folders, moved on by less than a
    millisecond by a digest of their count and sizes, so that a part written again within the
    clock's tick but to another length still reads as a change.

    A session row of OpenCode's database: `opencode_db.identity`."""
    if not path.endswith(".json") or _SESSION_DIR not in path:
        return opencode_db.identity(path)  # (None at once for any other path: told by its name)
    layout = _session_layout(Path(path))
    if layout is None:
        return None
    st = os.stat(path)
    total, newest = 0, st.st_mtime_ns
    msg_dir, part_root = str(layout[0]), str(layout[1])
    try:
        with os.scandir(msg_dir) as it:
            names = sorted(e.name for e in it if e.name.endswith(".json"))
        newest = max(newest, os.stat(msg_dir).st_mtime_ns)
    except OSError:
        return st.st_size, st.st_mtime_ns, st.st_ino
    for name in names[-TAIL_MESSAGES:]:
        try:
            s = os.stat(os.path.join(msg_dir, name))
            total += s.st_size + 1  # (+1 a file: one emptied still counts)
            newest = max(newest, s.st_mtime_ns)
            with os.scandir(os.path.join(part_root, name[:-5])) as parts:
                for p in parts:
                    s = p.stat()
                    total += s.st_size + 1
                    if s.st_mtime_ns > newest:
                        newest = s.st_mtime_ns
        except OSError:
            continue  # (a message with no parts yet, a file gone meanwhile)
    # (a hash of ints is the same in every process: the cache keeps identities across restarts)
    return st.st_size, newest + hash((len(names), total)) % 1_000_000, st.st_ino


_SESSION_DIR = os.sep + "session" + os.sep


# --- sub-agent sessions ---------------------------------------------------------------------------


def _small_info(p: Path) -> dict | None:
    try:
        data = orjson.loads(files.read_file(p, INFO_LIMIT))
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if _is_info(data) else None


def companions(main: Path) -> list[tuple[str, Path, dict]]:
    """(session id, its session file, meta) of each sub-agent session of the session at `main`, and
    of theirs, breadth first: the session files beside it (its project's folder) that name it as
    their `parentID`. meta: `session_id`, `parent_session_id`, `title`, `created`. (The task call
    that spawned one names it in its part, `metadata.sessionId`: `event` links them by `spawns`.)
    A session row's: the rows naming it as their `parent_id`."""
    if _session_layout(main) is None:
        try:
            found = opencode_db.children(str(main), CHILD_DEPTH)
        except opencode_db.Unreadable:  # a damaged page of the database where sub-agents are
            return []  # looked up: the session reads without them; each is still listed alone
        return [(cid, Path(p), meta) for cid, p, meta in found]
    own = _small_info(main)
    if own is None:
        return []
    by_parent: dict[str, list[tuple[Path, dict]]] = {}
    for name in _json_names(main.parent):
        if name == main.name:
            continue
        p = main.parent / name
        info = _small_info(p)
        parent = info.get("parentID") if info else None
        if isinstance(parent, str) and parent != p.stem:
            by_parent.setdefault(parent, []).append((p, info))
    out: list[tuple[str, Path, dict]] = []
    seen, frontier = {own["id"], main.stem}, [own["id"]]
    for _ in range(CHILD_DEPTH):
        below = []
        for parent in frontier:
            for p, info in sorted(by_parent.get(parent, []), key=lambda k: k[0].name):
                if p.stem in seen:
                    continue
                seen.add(p.stem)
                time = info.get("time") if isinstance(info.get("time"), dict) else {}
                out.append((p.stem, p, {"session_id": p.stem, "parent_session_id": parent,
                                        "title": info["title"], "created": time.get("created")}))
                below.append(p.stem)
        frontier = below
    return out


def companion_folders(main: Path) -> list[Path]:
    """The project's sessions folder: a new sub-agent session is a new file in it (a session row's:
    its database and write-ahead log, which change with every write)."""
    if _session_layout(main) is not None:
        return [main.parent]
    if opencode_db.is_row(str(main)):
        return [main.parent, Path(f"{main.parent}-wal")]
    return []


_SUBAGENT_TITLE = re.compile(r"^(.*) \(@([\w.-]+) subagent\)$")


def thread_label(agent: str, meta: dict) -> str:
    title = meta.get("title") if isinstance(meta, dict) else None
    m = _SUBAGENT_TITLE.match(title) if isinstance(title, str) else None
    if m:
        return f"{m[2]} agent · {m[1]}"
    return f"{title} · session {agent}" if title else f"session {agent}"


def session_info(main: Path) -> dict:
    """For a sub-agent's session: its parent (`parent_session`), the parent's session file beside
    it (`parent_path`), its thread in the parent's index, and its agent (from its title)."""
    row = _session_layout(main) is None
    if row:
        if not opencode_db.is_row(str(main)):
            return {}
        try:
            parent, title = opencode_db.parent(str(main))
        except OSError:
            return {}
        info = {"parentID": parent, "title": title}
    else:
        info = _small_info(main)
    if info is None:
        return {}
    out: dict = {}
    parent = info.get("parentID")
    if isinstance(parent, str) and _ID.fullmatch(parent) and parent != main.stem:
        out["parent_session"] = parent
        out["parent_path"] = str(main.parent / (parent if row else f"{parent}.json"))
        out["thread"] = keys.thread_key(main.stem)
        title = info.get("title")
        m = _SUBAGENT_TITLE.match(title) if isinstance(title, str) else None
        if m:
            out["agent_type"] = m[2]
    return out
