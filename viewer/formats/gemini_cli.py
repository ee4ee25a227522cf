"""Gemini CLI's chat recordings: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.json[l]`.

Written by packages/core/src/services/chatRecordingService.ts (google-gemini/gemini-cli). Two
generations, both read as one document of `{sessionId, projectHash, startTime, lastUpdated,
summary?, kind?, directories?, messages: [MessageRecord]}`:

* up to 0.3x: that document itself, `session-<time>-<id8>.json`, rewritten whole on each change;
* since: `session-<time>-<id8>.jsonl`, append-only: a first line with the session's metadata, then
  each MessageRecord appended whole *every time it changes* (its tool calls, their status and
  results, its tokens are added after the text streamed: the last write of an id wins, at the
  place the id first appeared), `{"$set": {...}}` metadata updates (`lastUpdated`, `summary`,
  `directories`, `memoryScratchpad`, or `messages`: the history rewritten, e.g. tool output
  masked), and `{"$rewindTo": "<id>"}` (/rewind: that message and all after it were dropped).
  `folder_document` folds such a file into the document above, so a line that only updates an
  earlier message never shows as a card of its own; the rewind stays a record in its place and
  each message it dropped says so (they are kept, dimmed by nothing but their notice). A
  sub-agent's recording is the same (see "sub-agents" below).

Sub-agents (a local agent run as a tool: `codebase_investigator`, `generalist`, a user's own):
packages/core/src/agents/local-executor.ts runs each with a chat of its own whose session id is
the executor's random `agentId` and whose parent is the main session (`executionContext`:
`promptId: this.agentId, parentSessionId`), so chatRecordingService.ts `initialize(…, 'subagent')`
writes it to `chats/<parent session id>/<agentId>.jsonl` with `kind: "subagent"`. The call that
ran it names it: geminiChat.ts `recordCompletedToolCalls` saves the invocation's
`response.data.agentId` as the ToolCallRecord's `agentId` (chatRecordingTypes.ts). `companions`
lists that folder; a call's `agentId` links it to its thread (`Event.spawns`), and a recording from
before calls carried it is matched by time (`spawning_calls`: the call whose run holds the
sub-agent's `startTime`). The sub-agent's file is never listed alone (`is_companion`).

A MessageRecord is `{id, timestamp, type, content, displayContent?}` plus, for `type: "gemini"`,
`thoughts` ([{subject, description, timestamp}] → one Thinking block), `tokens` ({input, output,
cached, thoughts, tool, total} → usage under the API's names, priced by the usage module), `model`
and `toolCalls` ([{id, name, args, result (Parts, usually one functionResponse), status,
timestamp, displayName, description, resultDisplay, renderOutputAsMarkdown}]: what the CLI showed
of a result, drawn where the result holds no text, `_display`). Each tool call
becomes a ToolUse and, once it has an outcome, its ToolResult in the same event (as Wolo's parts):
`status` success → completed, error → error (the response's `error` text shown), cancelled →
cancelled; awaiting_approval → awaiting permission; validating / scheduled / executing → running.
`content` / `displayContent` are Gemini Parts (`gemini.parts_blocks`); a user message shows its
`displayContent` (what the person typed) when there is one, `content` (what the model got, with
@-file contents) in the raw view. A gemini message's `functionCall` parts duplicate its
`toolCalls` and are left to the raw view; a user message's `functionResponse` parts that a tool
call already holds (history synced back) are hidden. `info` / `warning` → notices, `error` →
error notices; any other `type`, or a record of no known shape, is a quiet generic card — but
a message with the model's own fields (`toolCalls`, `thoughts`, `tokens`) under another type is
the model's, named by that type (forks: IBM Bob writes `bob-shell`), and thoughts a fork saved
once per streamed chunk (each the one before it, grown) are read as the last of each run.

The session's title: its `summary` (the one-line summary the CLI has a model write, saved with
`$set`) where there is one, as `/resume` names a session (packages/cli/src/utils/sessionUtils.ts:
`displayName: summary ? summary : firstUserMessage`), else its first prompt.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from .. import files, reader, timestamps
from ..model import AWAITING, CANCELLED, Data, Event, Notice, Ref, Text, Thinking, ToolResult, ToolUse
from .. import tools  # (a module, not its names: viewer.tools imports the formats package)
from .common import as_text, generic_event, model_and_usage, set_time, text_field
from .gemini import gemini_usage, part_list, parts_blocks, setup_context
from . import streamed
from .openai_chat import Linked, prompt_title

NAME = "gemini-cli"
MODE = "document"
# a JSONL file of this format is read whole as one document: its lines update earlier ones
FOLDS_LINES = True
FOLDED = "gemini_cli_log"  # marks a document folded from a JSONL log (which may have lost its first line)
HEAD_BYTES, HEAD_LINES = 256 << 10, 50  # what detection reads of a file

TYPES = ("user", "gemini", "info", "error", "warning")
TITLE_KINDS = frozenset({"session"})  # its metadata's `summary` names the session (`named_title`)
# what only the model's messages carry: a fork that names them otherwise (IBM Bob's "bob-shell")
# is still read as the model speaking
_MODEL_KEYS = frozenset({"toolCalls", "thoughts", "tokens"})
_HEAD_KEYS = ("sessionId", "projectHash")
RUNNING = ("validating", "scheduled", "executing")
FINAL = {"success": False, "error": True, "cancelled": True}
# a user message that is no prompt of the person's (besides slash commands and a bare "?")
_NOT_PROMPTS = ("<hook_context>",)


def _is_head(rec: dict) -> bool:
    return isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str) \
        and "id" not in rec


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict):
        return 0
    if _is_head(rec):
        return 3
    if (isinstance(rec.get("$set"), dict) or isinstance(rec.get("$rewindTo"), str)) and len(rec) == 1:
        return 3
    t = text_field(rec, "type")
    if t is None or not isinstance(rec.get("id"), str) or "content" not in rec:
        return 0
    if t == "gemini" or _MODEL_KEYS & rec.keys():
        return 3
    if t not in TYPES:
        return 0
    return 2 if "timestamp" in rec else 1


def document_bonus(doc: Any) -> int:
    return 3 if isinstance(doc, dict) and _is_head(doc) and isinstance(doc.get("messages"), list) else 0


# --- the document ------------------------------------------------------------------------------


def folder_document(path: Path) -> dict | None:
    """A JSONL recording folded into the document the older versions wrote (see the module
    docstring); None when `path` is not one: no record of this format among the lines of its head
    (what detection reads; a file of another format costs no more than that head). A last line the
    writer has not finished is left for the next read."""
    if path.suffix != ".jsonl":
        return None
    with files.open_file(path) as f:
        reader.skip_bom(f)
        if not _ours(f.read(HEAD_BYTES)):
            return None
        # complete lines only (one being written is left for the next read); huge ones skimmed
        return fold([reader.decode(data) if data is not None else reader.skim(f, offset, length)
                     for _, offset, length, data in reader.LineScanner(f).lines()])


def _ours(head: bytes) -> bool:
    lines = head.split(b"\n")[:HEAD_LINES]
    return any(sniff(reader.decode(line)) for line in lines if line.strip()[:1] == b"{")


def fold(recs: list) -> dict:
    """Session metadata and messages, each message as last written, in first-written order;
    rewinds and records of no known shape kept in place."""
    meta: dict = {}
    latest: dict = {}  # message id → its last version
    order: list = []  # (message id, None) and (None, another record), in place
    for rec in recs:
        if isinstance(rec, dict) and _is_head(rec):
            meta.update(rec)
        elif isinstance(rec, dict) and isinstance(rec.get("$set"), dict) and len(rec) == 1:
            update = dict(rec["$set"])
            for m in update.pop("messages", None) or ():
                _keep(m, latest, order)
            meta.update(update)
        elif not _keep(rec, latest, order):
            order.append((None, rec))
    messages = [rec if mid is None else latest[mid] for mid, rec in order]
    return {FOLDED: True, **meta, "messages": messages}


def _keep(m: Any, latest: dict, order: list) -> bool:
    """Record a message's latest version; False when `m` is no message."""
    if not (isinstance(m, dict) and isinstance(m.get("id"), str) and "$rewindTo" not in m):
        return False
    if m["id"] not in latest:
        order.append((m["id"], None))
    latest[m["id"]] = m
    return True


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """The session's metadata (a hidden record) and its messages, each marked with what only its
    neighbours say: the rewind that dropped it, the results its tool calls hold already."""
    if not (isinstance(doc, dict) and isinstance(doc.get("messages"), list)
            and any(k in doc for k in (FOLDED, *_HEAD_KEYS))):
        return None
    msgs = doc["messages"]
    return streamed.whole(_Marks(doc).streaming(), "messages", msgs)


def stream(shell: Any, key: str) -> streamed.Streaming | None:
    """A big recording's records one message at a time (formats/streamed.py): its session head
    first, then its messages. A rewind (`$rewindTo`) marks the messages before it that it dropped
    once it is met (`Streaming.later`)."""
    if key != "messages" or records({**shell, "messages": []}) is None:
        return None
    return _Marks(shell).streaming()


class _Marks:
    """What marks each message: the rewind that dropped it, and the ids of its results that
    earlier messages' tool calls hold already (the calls' records show them). A rewind to message
    `x` drops the first message of that id not dropped yet and every message with an id after it
    (those dropped already keep their rewind): what it dropped is said once it is read
    (`later`), the messages before it read already. Kept of the messages read: where each id is,
    which have an id, which are dropped — not the messages."""

    def __init__(self, doc: dict):
        self.head = {k: v for k, v in doc.items() if k not in ("messages", FOLDED)}
        self.answered: set = set()  # ids of the calls whose results earlier messages hold
        # message id → the index of the message of that id, or the indexes of those (a list) when
        # more than one has it (an int each: a list each was 17 MB of a 200 MB recording's pass)
        self.where: dict = {}
        self.has_id = bytearray()  # 1 for a message with an id (a rewind drops only those)
        self.gone = bytearray()  # 1 for a message a rewind dropped
        self.dropped: list = []  # (index, links) a rewind just dropped, until `later` takes them

    def streaming(self) -> streamed.Streaming:
        return streamed.Streaming([("session", self.head)] if self.head else [], self.take,
                                  later=self.later)

    def later(self) -> list:
        out, self.dropped = self.dropped, []
        return out

    def take(self, i: int, m: Any) -> tuple[str, Any]:
        links: dict = {}
        ours = isinstance(m, dict)
        self.has_id.append(1 if ours and "id" in m else 0)
        self.gone.append(0)
        if ours and isinstance(m.get("id"), str):
            had = self.where.setdefault(m["id"], i)
            if had != i:
                self.where[m["id"]] = [*had, i] if had.__class__ is list else [had, i]
        target = m.get("$rewindTo") if ours else None
        if isinstance(target, str):
            at = self.where.get(target, ())
            start = next((j for j in ((at,) if at.__class__ is int else at)
                          if j < i and not self.gone[j]), None)
            for j in range(start if start is not None else i, i):
                if self.has_id[j] and not self.gone[j]:
                    self.gone[j] = 1
                    self.dropped.append((j, {"dropped": target}))
        if ours and m.get("type") == "user" and self.answered:
            # (only the ids the message's own results name: what its card needs)
            if own := self.answered & _named(m):
                links["answered"] = own
        if ours and isinstance(m.get("toolCalls"), list):
            self.answered.update(tc["id"] for tc in m["toolCalls"] if isinstance(tc, dict)
                                 and isinstance(tc.get("id"), str) and tc.get("result"))
        return f"messages[{i}]", Linked(m, links) if links and ours else m


def _named(m: dict) -> set:
    """The ids and names a user message's function responses give (what `_user` matches the calls
    answered before against)."""
    out = set()
    for key in ("displayContent", "content"):
        for part in part_list(m.get(key)):
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(fr, dict):
                out.update(v for v in (fr.get("id"), fr.get("name")) if isinstance(v, str))
    return out


# --- events --------------------------------------------------------------------------------------


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, dict):
        return generic_event(rec, ref, NAME)
    links = getattr(rec, "links", None) or {}
    if _is_head(rec):
        ev = _session(rec, ref)
    elif isinstance(rec.get("$rewindTo"), str):
        ev = Event(ref, "system", kind="rewind", format=NAME, blocks=[Notice(
            f"conversation rewound to before message {rec['$rewindTo']}: it and the messages "
            "after it were dropped")])
    elif isinstance(rec.get("$set"), dict):
        ev = Event(ref, "system", kind="metadata", format=NAME, hidden=True,
                   hidden_reason="session metadata update", blocks=[Data(rec["$set"], "metadata")])
    else:
        t = text_field(rec, "type")
        if t == "user":
            ev = _user(rec, ref, links.get("answered") or ())
        elif t == "gemini" or (t not in TYPES and _MODEL_KEYS & rec.keys()):
            ev = _gemini(rec, ref)
            if t != "gemini":
                ev.author = t
        elif t in ("info", "warning", "error"):
            ev = Event(ref, "error" if t == "error" else "status", kind=t, format=NAME,
                       blocks=[Notice(_plain(rec.get("content")) or t)])
        else:
            return generic_event(rec, ref, NAME)
        if isinstance(rec.get("id"), str):
            ev.source_id = rec["id"]
        set_time(ev, rec.get("timestamp"))
        ev.meta = {k: v for k, v in rec.items() if k not in ("content", "type", "toolCalls", "thoughts")}
    if "dropped" in links:
        ev.blocks.insert(0, Notice(f"dropped by a /rewind to before message {links['dropped']}"))
    return ev


def _session(rec: dict, ref: Ref) -> Event:
    words = "sub-agent session" if rec.get("kind") == "subagent" else "session"
    if isinstance(rec.get("summary"), str) and rec["summary"]:
        words += f" · summary: {rec['summary']}"
    ev = Event(ref, "system", kind="session", format=NAME, hidden=True, hidden_reason="session metadata",
               blocks=[Notice(words, rec)], source_id=None)
    set_time(ev, rec.get("startTime"))
    ev.meta = dict(rec)
    return ev


def _plain(content: Any) -> str:
    """The text of a Part list (or a string)."""
    return "".join(p if isinstance(p, str) else p.get("text", "") if isinstance(p, dict)
                   and isinstance(p.get("text"), str) else "" for p in part_list(content)).strip()


def _user(rec: dict, ref: Ref, answered) -> Event:
    shown = rec.get("displayContent") if rec.get("displayContent") else rec.get("content")
    blocks = parts_blocks(shown)
    ev = Event(ref, "user", format=NAME)
    kept = [b for b in blocks if not (b.kind == "tool_result" and b.tool_use_id in answered)]
    if blocks and not kept:  # the results the calls hold already, as the model got them
        ev.role, ev.kind, ev.hidden = "tool", "tool_result", True
        ev.hidden_reason = "tool results as sent to the model (shown with their calls)"
        ev.blocks = [Data(rec.get("content"), "function responses")]
        return ev
    ev.blocks = setup_context(kept)
    if kept and all(b.kind == "tool_result" for b in kept):
        ev.role, ev.kind = "tool", "tool_result"
    return ev


def _gemini(rec: dict, ref: Ref) -> Event:
    ev = Event(ref, "assistant", format=NAME)
    calls = [tc for tc in rec.get("toolCalls") or () if isinstance(tc, dict)] \
        if isinstance(rec.get("toolCalls"), list) else []
    thinking = _thoughts(rec.get("thoughts"))
    blocks = parts_blocks(rec.get("content"))
    if calls:  # the same calls as the API saw them: the toolCalls say more
        blocks = [b for b in blocks if b.kind != "tool_use"]
    ev.blocks = ([thinking] if thinking else []) + blocks
    for tc in calls:
        ev.blocks += _call(tc, ev)
    model_and_usage(ev, rec.get("model"), gemini_usage(rec.get("tokens")))
    return ev


def _thoughts(thoughts: Any) -> Thinking | None:
    """Gemini CLI's thought summaries ({subject, description}) as one thinking block."""
    if not isinstance(thoughts, list):
        return None
    paras: list[str] = []
    for t in thoughts:
        if not isinstance(t, dict):
            continue
        subject, desc = (as_text(t.get(k)).strip() for k in ("subject", "description"))
        para = f"**{subject}**\n{desc}" if subject and desc else subject or desc
        if paras and para.startswith(paras[-1]):
            paras[-1] = para  # a fork saves each streamed chunk: the thought so far, growing
        elif para:
            paras.append(para)
    text = "\n\n".join(paras)
    return Thinking(text) if text else None


def _call(tc: dict, ev: Event) -> list:
    """A ToolCallRecord: the call, and its result once its status says it has one."""
    cid = str(tc.get("id") or f"{tc.get('name') or '?'}@{ev.ref.line}")
    use = ToolUse(cid, str(tc.get("name") or "?"), tc.get("args"))
    status = text_field(tc, "status")
    if status == "awaiting_approval":
        ev.states[cid] = AWAITING
    if status in RUNNING or status == "awaiting_approval":
        if status != "awaiting_approval":
            ev.running.append(cid)
        return [use]
    if status not in FINAL and not tc.get("result"):
        return [use]  # a status no version writes, and nothing to show: left open
    agent = tc.get("agentId")
    if isinstance(agent, str) and _AGENT_ID.fullmatch(agent):
        ev.spawns[cid] = agent  # the sub-agent it ran: its recording is chats/<session>/<agentId>.jsonl
    use.ended = tc.get("timestamp")  # when its outcome was recorded (the message is when it was asked)
    content, failed = _result(tc)
    error = FINAL.get(status, True if failed else None)
    return [use, ToolResult(cid, content, error, state=CANCELLED if status == "cancelled" else None)]


def _result(tc: dict) -> tuple[list, bool]:
    """A call's result Parts as blocks (a functionResponse's output or error, images it
    returned), or its `resultDisplay` where those hold no text; and whether they report a failure."""
    out: list = []
    failed = False
    for b in parts_blocks(tc.get("result"), markdown=False):
        if b.kind == "tool_result":
            out += b.content
            failed = failed or bool(b.is_error)
        else:
            out.append(b)
    if not any(b.kind == "text" for b in out):
        out += _display(tc.get("resultDisplay"), bool(tc.get("renderOutputAsMarkdown")))
    return out, failed


def _display(display: Any, markdown: bool) -> list:
    """What the CLI showed the person of a result (`resultDisplay`, packages/core/src/tools/tools.ts
    ToolResultDisplay = string | FileDiff | AnsiOutput | TodoList | SubagentProgress, drawn by
    packages/cli/src/ui/components/messages/ToolResultDisplay.tsx), as the blocks the page draws
    alike elsewhere: a FileDiff's `fileDiff` (jsdiff's createPatch: an `Index:` and a `===` line
    before `---` / `+++`) as the unified diff it is (a diff per hunk), an AnsiOutput (lines of
    `{text, bold, italic, underline, dim, inverse, fg, bg}` tokens, colours `#rrggbb`) as terminal
    output with its colours, a TodoList's todos as a list, a sub-agent's progress as its state, its
    recent activity and its result; any other object as data."""
    if isinstance(display, str):
        return [Text(display, markdown=markdown)] if display.strip() else []
    if isinstance(display, list):
        text = _ansi_text(display)
        return [Text(text, markdown=False)] if text.strip() else []
    if not isinstance(display, dict) or not display:
        return []
    if isinstance(display.get("fileDiff"), str):
        diff, head = display["fileDiff"], display["fileDiff"].split("\n", 2)
        if len(head) == 3 and head[0].startswith("Index: ") and head[1].startswith("==="):
            diff = head[2]
        name = as_text(display.get("filePath") or display.get("fileName") or "the file")
        return [Notice(f"{'created' if display.get('isNewFile') else 'changed'} {name}"),
                Text(diff, markdown=False)]
    if isinstance(display.get("todos"), list):  # read as write_todos's input is (tools.todo_items)
        lines = [f"{tools.TODO_BOX[status]} {text}" for status, text in tools.todo_items(display)]
        return [Notice("todo list"), Text("\n".join(lines), markdown=False)] if lines else [Notice("todo list: empty")]
    if display.get("isSubagentProgress") is True:
        state = as_text(display.get("state") or "running")
        out: list = [Notice(f"sub-agent {as_text(display.get('agentName') or '?')}: {state}")]
        done = [f"[{as_text(a.get('status') or '?')}] {as_text(a.get('content') or '')}"
                for a in display.get("recentActivity") or () if isinstance(a, dict)] \
            if isinstance(display.get("recentActivity"), list) else []
        if done:
            out.append(Text("\n".join(done), markdown=False))
        if isinstance(display.get("result"), str) and display["result"].strip():
            out.append(Text(display["result"]))
        return out
    return [Data(display, "what the CLI showed")]


# an AnsiOutput token's colour as an SGR colour: `#rrggbb` (the xterm serializer's), or a name
_COLOURS = {name: i for i, name in enumerate(("black", "red", "green", "yellow", "blue", "magenta",
                                              "cyan", "white"))}


_HEX_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")


def _sgr(colour: Any, ground: int) -> str:
    if isinstance(colour, str) and _HEX_COLOUR.fullmatch(colour):
        return f"{ground + 8};2;{int(colour[1:3], 16)};{int(colour[3:5], 16)};{int(colour[5:], 16)}"
    if isinstance(colour, str) and colour.lower() in _COLOURS:
        return str(ground + _COLOURS[colour.lower()])
    return ""


def _ansi_text(lines: list) -> str:
    """An AnsiOutput as the terminal text it was: each token its SGR codes, then its text (control
    characters in a token's text are the renderer's to drop, as in any terminal output)."""
    out = []
    for line in lines:
        row = []
        for t in line if isinstance(line, list) else ():
            if not isinstance(t, dict) or not isinstance(t.get("text"), str):
                continue
            codes = [c for c, on in (("1", t.get("bold")), ("2", t.get("dim")), ("3", t.get("italic")),
                                     ("4", t.get("underline"))) if on is True]
            codes += [c for c in (_sgr(t.get("fg"), 30), _sgr(t.get("bg"), 40)) if c]
            row.append(f"\x1b[{';'.join(codes)}m{t['text']}\x1b[0m" if codes else t["text"])
        out.append("".join(row))
    return "\n".join(out).rstrip("\n")


def named_title(ev: Event) -> tuple[int, str] | None:
    """(rank, title): the summary the CLI wrote for the session, over its first prompt."""
    summary = ev.meta.get("summary") if isinstance(ev.meta, dict) else None
    return (1, summary) if isinstance(summary, str) and summary.strip() else None


def title_of(ev: Event) -> str | None:
    if ev.role != "user" or ev.kind != "message" or ev.hidden:
        return None
    text = ev.text()
    first = text.split(None, 1)[0] if text else ""
    if not text or text == "?" or text.startswith(_NOT_PROMPTS) or (
            first.startswith("/") and "/" not in first[1:]):
        return None  # a slash command, a bare "?", context the CLI attached
    return prompt_title(text)


# --- sub-agents: chats/<parent session id>/<agentId>.jsonl ----------------------------------------

# what sanitizeFilenamePart (packages/core/src/utils/fileUtils.ts) leaves of an id: a file name
_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_FIRST_LINE = 1 << 20
SLACK = 2.0  # seconds: a sub-agent's startTime is written a moment after its call was recorded
# the CLI's own tools: none of them runs a sub-agent (packages/core/src/tools/tool-names.ts)
_BUILTIN = frozenset({"read_file", "write_file", "replace", "edit", "run_shell_command", "glob",
                      "search_file_content", "grep_search", "list_directory", "read_many_files",
                      "web_fetch", "google_web_search", "save_memory", "write_todos",
                      "activate_skill", "complete_task", "ask_user", "enter_plan_mode",
                      "exit_plan_mode"})


def _first_record(p: Path) -> dict | None:
    """The first line of a JSONL recording (its session metadata), parsed; None when it is none."""
    try:
        with files.open_file(p) as f:
            line = f.readline(_FIRST_LINE)
        rec = orjson.loads(line)
    except (OSError, orjson.JSONDecodeError):
        return None
    return rec if isinstance(rec, dict) else None


def _agents_folder(main: Path) -> Path | None:
    """`chats/<session id>/`, where the session's sub-agents are recorded (the folder need not exist
    yet); None for a file that is no main recording of the JSONL log."""
    if main.suffix != ".jsonl" or not main.name.startswith("session-"):
        return None
    head = _first_record(main)
    sid = head.get("sessionId") if head is not None and _is_head(head) else None
    if not isinstance(sid, str) or not _AGENT_ID.fullmatch(sid) or head.get("kind") == "subagent":
        return None
    return main.parent / sid


def companions(main: Path) -> list[tuple[str, Path, dict]]:
    """(agent id, recording, meta) of each sub-agent the session at `main` ran: the recordings in
    `chats/<its session id>/` (see the module docstring). meta: the sub-agent's `kind` and
    `startTime` (epoch seconds: what `spawning_calls` matches) as its first line says them."""
    folder = _agents_folder(main)
    if folder is None or not folder.is_dir():
        return []
    out = []
    for p in sorted(folder.glob("*.jsonl")):
        head = _first_record(p) or {}
        meta: dict = {"kind": "subagent"}
        start = timestamps.to_epoch(head.get("startTime")) if isinstance(head.get("startTime"), str) else None
        if start is not None:
            meta["startTime"] = start
        out.append((p.stem, p, meta))
    return out


def companion_folders(main: Path) -> list[Path]:
    """The chats folder (where the sub-agents' folder appears) and that folder."""
    folder = _agents_folder(main)
    return [] if folder is None else [main.parent, folder]


def is_companion(path: str) -> bool:
    """A sub-agent's recording, `…/chats/<parent session id>/<agentId>.jsonl`: shown under the call
    that ran it in its parent's page, never listed alone."""
    folder, name = os.path.split(path)
    return name.endswith(".jsonl") and not name.startswith("session-") \
        and os.path.basename(os.path.dirname(folder)) == "chats" and bool(_AGENT_ID.fullmatch(os.path.basename(folder)))


def spawning_calls(threads: dict, calls: dict) -> dict[str, str]:
    """Thread name → id of the call that ran it, for sub-agents no call names (recordings from
    before a ToolCallRecord carried `agentId`): the call of the main thread whose run (its message's
    time to its outcome's) holds the sub-agent's `startTime`, a call of no built-in tool first."""
    taken = {c.subthread for c in calls.values() if c.subthread}
    free = [c for c in calls.values() if c.call is not None and c.call[0] == "main"
            and c.subthread is None and c.called_at is not None]
    out: dict[str, str] = {}
    for name, meta in sorted(threads.items(), key=lambda kv: (kv[1] or {}).get("startTime") or 0):
        at = meta.get("startTime") if isinstance(meta, dict) else None
        if name in taken or not isinstance(at, (int, float)) or meta.get("kind") != "subagent":
            continue
        held = [c for c in free if c.id not in out.values() and c.called_at - SLACK <= at
                and (c.finished_at is None or at <= c.finished_at + SLACK)]
        held.sort(key=lambda c: (c.name in _BUILTIN, -(c.called_at or 0)))
        if held:
            out[name] = held[0].id
    return out


def thread_label(agent: str, meta: dict) -> str:
    return f"agent {agent}"
