"""Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl` and its sub-agents.

Every line carries a `type`. `user` / `assistant` lines hold an Anthropic message (one content block
per line for streamed assistant turns, grouped by `message.id`); everything else is bookkeeping that
newer CLI versions keep adding (progress, snapshots, queue operations, attachments, modes, titles…).
A line type this reader does not know is a generic card hidden behind the toggle (the CLI's new
types are bookkeeping; one holding a `message` stays in sight): format drift must never break a
session.

Sub-agents live either beside the session (`agent-<id>.jsonl`, old layout) or in
`<session>/subagents/agent-<id>.jsonl` with an `agent-<id>.meta.json`. They are linked to the Task /
Agent call that spawned them through, in order of trust: the meta file's `toolUseId`, the
`toolUseResult.agentId` of the call's result, and `agent_progress` lines' `parentToolUseID`.

User lines the person did not type are named for their sender: `origin.kind` (task notifications,
peers…), and in an agent team's lead the `<teammate-message teammate_id=… summary=…>` lines the
CLI delivers for its teammates (author "teammate <id>", each message's summary as a notice).
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path
from typing import Any

import orjson

from .. import files
from .. import timestamps
from ..model import BACKGROUND, BLOCKED_BY_HOOK, CANCELLED, COMPLETED, DENIED, DENIED_BY_AUTO, DENIED_BY_SETTINGS, \
    ERROR, HOOK_WORDS, INTERRUPTED, USER_WORDS, Context, Data, Digest, Event, Notice, Ref, Text
from .common import DIGEST_THOUGHT, anthropic_blocks, as_text, context_blocks, digest_block, digest_result, \
    generic_event, HOOK_BLOCK, md_escape, retry_words, set_time, text_field, url_escape, with_context

NAME = "claude-code"
MODE = "jsonl"

# Line types that are bookkeeping: hidden by default behind the toggle, with the reason shown.
_NOISE = {
    "progress": "progress",
    "file-history-snapshot": "snapshot",
    "queue-operation": "queue operation",
    "last-prompt": "state",
    "permission-mode": "state",
    "custom-title": "state",
    "ai-title": "state",
    "agent-name": "state",
    "agent-color": "state",
    "agent-setting": "state",
    "tag": "state",
    "mode": "state",
    "worktree-state": "state",
    "content-replacement": "state",
    "attachment": "attachment",
    "summary": "summary",
    "marble-origami-commit": "state",
    "marble-origami-snapshot": "state",
    "speculation-accept": "state",
    # sidecars of newer CLIs (2.1.32–2.1.163; chrisguillory/claude-session-mcp
    # src/schemas/session/models.py, schema v0.2.45): hook context, remote-control bridge,
    # a forked sub-agent's pointer to its parent, coordinator isolation, attribution
    "saved-hook-context": "state",
    "bridge-session": "state",
    "fork-context-ref": "state",
    "isolation-latch": "state",
    "attribution-snapshot": "state",
    "marble-origami-reset": "state",
    # the entry types of Claude Code 2.1.331 (the transcript writer's table of entry types and
    # how a resume keeps each, in the linux-x64 binary's bundled JS): backups, API request
    # records and their message blobs, cost / tool / mode / owner state written beside the chat
    "file-history-delta": "snapshot",
    "resume-head-vouch": "state",
    "data-flow-records": "state",
    "data-flow-incomplete": "state",
    "derived-from": "state",
    "api-request-shape": "state",
    "api-request-blob": "state",
    "api-request": "state",
    "api-request-resumed": "state",
    "frame-link": "state",
    "ended-by-model": "state",
    "relocated": "state",
    "artifact-comment-monitor": "state",
    "artifact-autoreact-ledger": "state",
    "history-suppression": "state",
    "session-owner": "state",
    "dev-mods": "state",
    "memory-mode": "state",
    "atis-latch": "state",
    "tools-used": "state",
    "cost-state": "state",
    "observer-ref": "state",
    "host-row": "state",
    "repl-mode": "state",
    "hybrid-organization": "state",
    # what 2.1.331 writes in place of a line it keeps back from a transcript it hands on (a line
    # of no known type): `{type: line-withheld, bytes}`
    "line-withheld": "state",
}
# lines a reader wants to see, though the CLI writes them beside the chat: where the session went
# (and where it came from: `teleported-from`, the first line of a session the CLI brought over
# from a remote one, `{remoteSessionId, branch, messageCount}`), and the pull request it opened
# (`pr-link`: `{prNumber, prUrl, prRepository}`, a link card)
_SHOWN = {"continued-in", "teleported-from", "pr-link"}
_KNOWN = {"user", "assistant", "system", *_NOISE, *_SHOWN}
_QUIET_SYSTEM = {"stop_hook_summary", "turn_duration", "hook_progress", "init", "bridge_status"}
_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_STDOUT = re.compile(r"<local-command-(stdout|stderr)>(.*?)</local-command-\1>", re.S)
_BASH_IN = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
_BASH_OUT = re.compile(r"<bash-(stdout|stderr)>(.*?)</bash-\1>", re.S)
_INTERRUPT = "[Request interrupted by user"
_HARNESS, _HARNESS_END = "[Workflow harness — computed task]", "The computed task text follows:\n"
_AGENT_ID = re.compile(r"[\w-]+")
_USAGE = re.compile(r"<usage>(.*?)</usage>", re.S)
_TEAMMATE = re.compile(r"<teammate-message\b([^>]*)>(.*?)</teammate-message>", re.S)
_ATTR = re.compile(r'(?<!\w)(\w++)="([^"]*)"')  # (a name from its first letter, whole: linear)
_TASK_NOTE = re.compile(r"<(task-id|status|summary)>(.*?)</\1>", re.S)
_TASK_CALL = re.compile(r"<(tool-use-id|status)>([^<]{1,200})</\1>")
# a task notification's status → the state of the background call it reports on
_TASK_ENDS = {"completed": "completed", "failed": "failed", "killed": "interrupted", "stopped": "interrupted",
              "cancelled": "cancelled"}


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict):
        return 0
    t = text_field(rec, "type")
    if t in ("user", "assistant") and isinstance(rec.get("message"), dict) and (
        "uuid" in rec or "sessionId" in rec or "parentUuid" in rec
    ):
        # Qwen Code's records look alike but hold a Gemini Content (`parts`, no `content`)
        return 0 if "parts" in rec["message"] and "content" not in rec["message"] else 3
    if (t in _NOISE or t in _SHOWN) and ("sessionId" in rec or "leafUuid" in rec or "messageId" in rec
                        or "uuid" in rec or "snapshot" in rec or "operation" in rec):
        return 2
    if t == "system" and "uuid" in rec and "parentUuid" in rec:
        # the CLI's envelope (`userType` on every line it writes) or a system line's own fields
        # tell its system lines from Qwen Code's look-alikes (which hold a `systemPayload`): a
        # session that opens with a few slash commands (two `local_command` lines each) is still
        # Claude Code's, and so is one whose lines were copied without their envelope
        return 3 if "systemPayload" not in rec and (
            "userType" in rec or "level" in rec or "isMeta" in rec) else 2
    return 0


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, dict) or text_field(rec, "type") not in _KNOWN:
        ev = generic_event(rec, ref, NAME)
        if isinstance(rec, dict):
            _common(ev, rec)
            if "message" not in rec and isinstance(rec.get("type"), str):
                # a line type of a CLI newer than this reader: the CLI adds bookkeeping types with
                # nearly every release (the chat is always user / assistant / system /
                # attachment), so it waits behind the toggle, its payload in the card; a record
                # with no type at all (another format's, a damaged line) is not one, and shows
                ev.hidden, ev.hidden_reason = True, "unknown line type"
        return ev
    t = rec["type"]
    if t == "assistant":
        ev = _assistant(rec, ref)
    elif t == "user":
        ev = _user(rec, ref)
    elif t == "system":
        ev = _system(rec, ref)
    elif t == "attachment":
        ev = _attachment(rec, ref)
    elif t == "continued-in":
        other = rec.get("continuedInSessionId")
        ev = Event(ref, "system", kind=t, blocks=[Notice(
            f"continued in session {other}" if isinstance(other, str) else "continued in another session")])
    elif t == "teleported-from":
        remote, branch = rec.get("remoteSessionId"), rec.get("branch")
        words = f"teleported from remote session {remote}" if isinstance(remote, str) and remote \
            else "teleported from a remote session"
        if isinstance(branch, str) and branch:
            words += f" (branch {branch})"
        ev = Event(ref, "system", kind=t, blocks=[Notice(words, {
            k: v for k, v in rec.items() if k not in _ENVELOPE})])
    elif t == "pr-link":
        ev = _pr_link(rec, ref)
    else:
        ev = _noise(rec, ref, t)
    _common(ev, rec)
    return ev


# a pull request's address as a link: a web address, whole, with nothing in it a page could misread
_WEB_ADDRESS = re.compile(r"https?://[^\s<>\x00-\x1f\x7f]{1,2000}", re.A)


def _pr_link(rec: dict, ref: Ref) -> Event:
    """The pull request the session opened (`/pr`, `gh pr create`…) as a link card: its number, its
    repository and its address, which is the link's text (a reader sees where it goes; the link is
    never followed by the page, opened with rel=noopener by the Markdown renderer). An address that
    is not a web address is shown as written, not linked; fields beside these as data."""
    number, url, repo = rec.get("prNumber"), rec.get("prUrl"), rec.get("prRepository")
    name = "pull request"
    if isinstance(number, (int, str)) and not isinstance(number, bool) and str(number).strip():
        name += f" #{str(number).strip().lstrip('#')}"
    if isinstance(repo, str) and repo.strip():
        name += f" of {repo.strip()}"
    blocks: list = []
    if isinstance(url, str) and _WEB_ADDRESS.fullmatch(url.strip()):
        blocks.append(Text(f"{md_escape(name[0].upper() + name[1:])}: <{url_escape(url.strip())}>"))
    else:
        blocks.append(Notice(name + (": its address is not a web address" if url is not None else "")))
        if url is not None:
            blocks.append(Data(url, "the address as written"))
    more = {k: v for k, v in rec.items() if k not in _ENVELOPE and k not in ("prNumber", "prUrl", "prRepository")}
    if more:
        blocks.append(Data(more, "other fields"))
    return Event(ref, "system", "pr-link", blocks=blocks)


# --- the index pass's digest of the plain shapes (see model.Digest) -----------------------------

# titles the session was given, by rank: a /rename's over the one the CLI makes itself; both over
# the first prompt (the index's `named_title` hook; the latest of a rank wins, as in /resume)
_TITLES = {"custom-title": ("customTitle", 2), "ai-title": ("aiTitle", 1)}
TITLE_KINDS = frozenset(_TITLES)
_DIGESTED_NOISE = set(_NOISE) - {"queue-operation", "attachment", "summary"} - TITLE_KINDS
# the kinds of digested bookkeeping, one string each for the whole process: the index keeps a kind
# per event, and a new "progress:hook_progress" for each of a session's hundreds of thousands of
# progress lines held 70 bytes apiece (a progress line's own type is the file's: kept for at most
# so many types)
_QUIET_KINDS = {sub: "system:" + sub for sub in _QUIET_SYSTEM}
_PROGRESS_KINDS: dict[str, str] = {}


# its tools whose own failures never read as free words (an exit code, a wrapped
# `<tool_use_error>`, an errno): an error result of theirs that is only words (2.0.5's bare
# comment, `model.USER_WORDS`) is the person's comment turning the call down. An MCP tool's
# failures may be any words: its results stay plain errors
REFUSED_IN_WORDS = frozenset(("Bash", "Edit", "Write", "MultiEdit", "NotebookEdit"))


def refused_in_words(name: str) -> bool:
    """Whether a words-only error result of a call of this tool is the person refusing it (the
    call map asks, `ToolCallMap.observe`)."""
    return name in REFUSED_IN_WORDS


def digest(rec: Any) -> Digest | None:
    """What the index keeps of a plain assistant line, a line of tool results, or bookkeeping —
    exactly what `event` would say of it; None for every other shape."""
    if rec.__class__ is not dict:
        return None
    t, ts = rec.get("type"), rec.get("timestamp")
    if t.__class__ is not str or (ts.__class__ is str and ts[-1:] != "Z" and timestamps.zoneless(ts)):
        return None  # (a time with no zone: its Event says so, SessionSummary.zoneless)
    if t == "assistant":
        return _digest_assistant(rec, ts)
    if t == "user":
        return _digest_results(rec, ts)
    if t == "system":
        sub = rec.get("subtype")
        kind = _QUIET_KINDS.get(sub) if sub.__class__ is str else None
        if kind is None or rec.get("level") == "error":
            return None
        uuid = rec.get("uuid")
        return Digest("system", kind, uuid if uuid.__class__ is str else None, timestamps.fast_epoch(ts), True)
    if t == "attachment":
        # a hook's output the CLI keeps from the model (a hook of another event than those whose
        # output is context, `_CONTEXT_HOOKS`): hidden, as `_attachment` ends. Nearly every
        # attachment line of a real session is one (one per PostToolUse hook run)
        att = rec.get("attachment")
        if att.__class__ is not dict or att.get("type") != "hook_success" \
                or att.get("hookEvent") in _CONTEXT_HOOKS:
            return None
        uuid = rec.get("uuid")
        return Digest("system", "attachment", uuid if uuid.__class__ is str else None,
                      timestamps.fast_epoch(ts), True)
    if t == "queue-operation":
        if rec.get("content"):  # (words queued: a prompt, a task's end, the Event says)
            return None
        uuid = rec.get("uuid")
        return Digest("system", t, uuid if uuid.__class__ is str else None,
                      timestamps.fast_epoch(ts), True)
    if t in _DIGESTED_NOISE:
        uuid = rec.get("uuid")
        d = Digest("system", t, uuid if uuid.__class__ is str else None, timestamps.fast_epoch(ts), True)
        if t == "progress":
            data = rec.get("data")
            data = data if data.__class__ is dict else {}
            dt = data.get("type") or "progress"
            if dt.__class__ is not str:
                return None
            kind = _PROGRESS_KINDS.get(dt)
            if kind is None:
                kind = "progress:" + dt
                if len(_PROGRESS_KINDS) < 256:
                    _PROGRESS_KINDS[dt] = kind
            d.kind = kind
            parent = rec.get("parentToolUseID") or rec.get("toolUseID")
            if parent.__class__ is str and dt != "hook_progress":
                d.running = [parent]
                if dt == "agent_progress":
                    agent = data.get("agentId")
                    if agent.__class__ is str:
                        d.spawns = {parent: agent}
        return d
    return None


def _digest_assistant(rec: dict, ts: Any) -> Digest | None:
    msg = rec.get("message")
    if msg.__class__ is not dict or rec.get("isApiErrorMessage") or rec.get("error"):
        return None
    content = msg.get("content")
    model = msg.get("model")
    if content.__class__ is not list or not content or model == "<synthetic>":
        return None
    blocks, blank = [], 0
    for b in content:
        if b.__class__ is not dict:
            return None
        t = b.get("type")
        d = digest_block(b, t)
        if d is None:
            if t != "thinking":
                return None
            # a thinking block whatever it holds: `anthropic_blocks` keeps a blank one (its
            # signature alone: a model whose thinking is not written), and a message of nothing
            # else is hidden as thinking not recorded (`index._fold_empty`)
            d, blank = DIGEST_THOUGHT, blank + 1
        blocks.append(d)
    uuid, usage, mid = rec.get("uuid"), msg.get("usage"), msg.get("id")
    return Digest("assistant", "message", uuid if uuid.__class__ is str else None,
                  timestamps.fast_epoch(ts), blank == len(blocks), blocks,
                  model if model.__class__ is str else None,
                  usage if usage.__class__ is dict else None,
                  mid if mid.__class__ is str else None)


# what `_user` reads of a result's `toolUseResult` to say more of it than a plain result: its
# `status` (async_launched: a call that goes on in the background; any status is left to the Event,
# a sub-agent's report and a background shell's have one), a sub-agent's or a Workflow run's id (a
# thread it spawned). A result whose toolUseResult holds none of these is plain however else it is
# shaped (a Bash call's streams, a Read's file, an Edit's or a Write's patch, a Grep's or a Glob's
# matches, a TodoWrite's todos…: nearly every result line of a real session)
_NOT_PLAIN_RESULT = frozenset(("status", "agentId", "runId"))


def _digest_results(rec: dict, ts: Any) -> Digest | None:
    """A user line that holds only tool results, none an error nor a sub-agent's report nor a call
    sent to the background; or a prompt of plain words (no tags, not an interruption)."""
    msg = rec.get("message")
    if msg.__class__ is not dict or rec.get("isCompactSummary") or rec.get("isMeta"):
        return None
    content = msg.get("content")
    structured = rec.get("toolUseResult")
    if structured.__class__ is dict and (content.__class__ is not list
                                         or not _NOT_PLAIN_RESULT.isdisjoint(structured)):
        return None
    if content.__class__ is str:
        return _digest_prompt(rec, content, ts)
    if content.__class__ is not list or not content:
        return None
    blocks = []
    for b in content:
        if b.__class__ is not dict or b.get("type") != "tool_result" or b.get("is_error"):
            return None
        out = b.get("content")
        if out.__class__ is str:
            if _may_name_agent(out):
                return None
        elif out.__class__ is list:
            for c in out:
                if c.__class__ is not dict or c.get("type") != "text" or \
                        c.get("text").__class__ is not str or _may_name_agent(c["text"]):
                    return None
        elif out is not None:
            return None
        blocks.append(digest_result(b))
    uuid = rec.get("uuid")
    return Digest("tool", "tool_result", uuid if uuid.__class__ is str else None,
                  timestamps.fast_epoch(ts), False, blocks)


def _digest_prompt(rec: dict, text: str, ts: Any) -> Digest | None:
    if "<" in text or not text or text.isspace() or text.startswith((_INTERRUPT, _HARNESS)) \
            or "origin" in rec or _FEEDBACK.match(text):
        return None
    uuid = rec.get("uuid")
    d = Digest("user", "message", uuid if uuid.__class__ is str else None, timestamps.fast_epoch(ts),
               False, [Text(text)])
    d.meta = rec  # (title_of asks whether it is a sub-agent's)
    parent = rec.get("parentUuid")
    if parent.__class__ is str:  # (the index notes a rewind by it)
        d.follows = parent
    return d


def _may_name_agent(text: str) -> bool:
    """Whether `_agent_tail` could find a spawned agent in this result's text. It looks at the
    last 500 characters of each text block once context tags are taken off the end: so only the
    tail matters, unless the text ends with a tag (then all of it, to be sure)."""
    tail = text[-600:]
    if (tail.rstrip() or text.rstrip())[-1:] == ">":  # (its last visible character, not copying it)
        return "agentId: " in text
    return "agentId: " in tail


def _common(ev: Event, rec: dict) -> None:
    ev.format = NAME
    uuid = rec.get("uuid")
    if isinstance(uuid, str):
        ev.source_id = uuid
    set_time(ev, rec.get("timestamp"))
    ev.meta = rec  # a sub-agent's lines keep their roles: its thread names the agent


def _assistant(rec: dict, ref: Ref) -> Event:
    msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
    blocks = anthropic_blocks(msg.get("content"))
    ev = Event(ref, "assistant", blocks=blocks)
    model = msg.get("model")
    ev.model = model if isinstance(model, str) and model != "<synthetic>" else None
    ev.usage = msg.get("usage") if isinstance(msg.get("usage"), dict) else None
    ev.message_id = msg.get("id") if isinstance(msg.get("id"), str) else None
    if rec.get("isApiErrorMessage") or rec.get("error"):
        ev.role = "error"
    elif model == "<synthetic>" and ev.text() == "No response requested.":
        ev.hidden, ev.hidden_reason = True, "bookkeeping"
    return ev


# what the CLI sends the model when a hook keeps the agent going (a Stop or SubagentStop hook's
# block, 2.1's TeammateIdle / TaskCompleted): "Stop hook feedback:\n" + the hook's blocking
# output, a user line the CLI writes itself (`isMeta`; its formatter for each hook event, and
# transcripts of 2.1.197 and 2.1.261 as others measured them: "Stop hook feedback:\nBLOCKED_ONCE\n")
_FEEDBACK = re.compile(r"([A-Z]\w{1,40}) hook feedback:\n")
# what the hooks that can keep the agent going kept it from
_KEPT_FROM = {"Stop": "stopping", "SubagentStop": "stopping", "TeammateIdle": "going idle",
              "TaskCompleted": "completing the task"}


def _hook_feedback(rec: dict, ref: Ref, content: Any) -> Event | None:
    """A hook's feedback that kept the agent going, as the hook's card: the hook and what it kept
    the agent from, then its words. Hidden as one of the CLI's own lines (`isMeta`), the reason
    the agent went on after it had finished was out of sight; now it is where it happened. (2.1
    also writes a `hook_blocking_error` attachment for it, hidden behind the toggle: `_attachment`.)"""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
            and content[0].get("type") == "text":
        content = content[0].get("text")
    m = _FEEDBACK.match(content) if isinstance(content, str) else None
    if m is None or rec.get("toolUseResult") is not None:
        return None
    hook, said = m.group(1), content[m.end():].strip()
    from_ = _KEPT_FROM.get(hook)
    words = f"hook {hook} kept the agent from {from_}" if from_ else f"hook {hook} gave feedback"
    return Event(ref, "system", kind="hook", blocks=[Notice(words + (" and said:" if said else ""))]
                 + ([Text(said, markdown=False)] if said else []))


def _user(rec: dict, ref: Ref) -> Event:
    msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
    content = msg.get("content")
    if (fed := _hook_feedback(rec, ref, content)) is not None:
        if isinstance(rec.get("parentUuid"), str):
            fed.follows = rec["parentUuid"]
        return fed
    ev = Event(ref, "user")
    if isinstance(content, str):
        ev.blocks = _prompt_blocks(content, ev)
    else:
        for b in anthropic_blocks(content):
            ev.blocks.extend(_prompt_blocks(b.text, ev) if b.kind == "text" else [b])
    results = [b for b in ev.blocks if b.kind == "tool_result"]
    # (a failure the CLI wrapped in <tool_use_error> is its own, never the person's words: told
    # before the tags go)
    wrapped = {r.tool_use_id for r in results if r.is_error and r.content and r.content[0].kind == "text"
               and r.content[0].text.startswith(_ERROR_TAGS[0])}
    for r in results:  # the CLI appends system reminders to what a tool returned
        r.content = with_context(_unwrapped(r.content) if r.is_error else r.content)
    if results:
        structured = rec.get("toolUseResult")
        if len(results) == 1 and structured is not None:
            results[0].structured = structured
        denial = _DENIALS.get(rec.get("toolDenialKind")) if isinstance(rec.get("toolDenialKind"), str) else None
        if denial == DENIED and _stopped_while_running(rec):
            denial = INTERRUPTED
        if denial and len(results) == 1 and results[0].is_error:
            results[0].state = _refuser(denial, results[0], rec)
        elif denial is None and len(results) == 1 and results[0].tool_use_id not in wrapped \
                and _bare_words(rec, results[0]):
            results[0].state = USER_WORDS if _bare_is_persons(rec) else HOOK_WORDS
        if len(results) == 1 and results[0].state == DENIED:
            results[0].content = _advice(results[0].content)
        elif len(results) == 1 and results[0].state == BLOCKED_BY_HOOK:
            results[0].content = _hook_said(results[0].content)
        if isinstance(structured, dict) and structured.get("status") == "async_launched":
            results[0].content = [launched(structured, results[0].content)]
            results[0].state = BACKGROUND
        if isinstance(structured, dict) and isinstance(structured.get("agentId"), str):
            ev.spawns[results[0].tool_use_id] = structured["agentId"]
        elif isinstance(structured, dict) and isinstance(structured.get("runId"), str):
            ev.spawns[results[0].tool_use_id] = structured["runId"]  # a Workflow's run: its agents
        for r in results:  # nested spawns say it only in the text tail: "agentId: a1b2c3 (…)"
            if r.tool_use_id not in ev.spawns:
                for b in r.content[-2:]:
                    agent = _agent_tail(b.text) if b.kind == "text" else None
                    if agent:
                        ev.spawns[r.tool_use_id] = agent
        for r in results:
            r.content = [_trailer(b.text) if b.kind == "text" and b.text.startswith("agentId: ")
                         else b for b in r.content]
        if len(results) == len(ev.blocks):
            ev.role, ev.kind = "tool", "tool_result"
    if not results:
        who, sent_by = _sender(rec)
        if who:
            ev.author = who
        elif sent_by:
            ev.role = "system"
            ev.kind = sent_by if ev.kind == "message" else ev.kind
    if rec.get("isCompactSummary"):
        ev.kind = "compact_summary"
        ev.role = "system"
        how = rec.get("summarizeMetadata")
        how = how.get("direction") if how.__class__ is dict else None
        ev.blocks = [Notice(_SUMMARY_OF.get(how, "Summary of the conversation before compaction")),
                     *_summary_blocks(ev.blocks)]
    elif rec.get("isMeta"):
        source = rec.get("sourceToolUseID")
        if isinstance(source, str) and source:
            # what a call loaded for the model (a Skill's instructions): the CLI shows only
            # "loaded", but it steered what came next; shown folded, right after the call's result
            ev.parent = source
            ev.role, ev.kind = "system", "tool_context"
            ev.blocks = [_loaded(b.text) if b.kind == "text" else b for b in ev.blocks]
        else:
            ev.hidden, ev.hidden_reason = True, "meta"
    if isinstance(rec.get("parentUuid"), str):
        ev.follows = rec["parentUuid"]
    return ev


_SKILL_DIR = "Base directory for this skill: "
# what a summary made in the rewind dialog covers (`summarizeMetadata.direction`)
_SUMMARY_OF = {"from": "Summary of the conversation from the picked message on (“Summarize from here”)",
               "up_to": "Summary of the conversation up to the picked message (“Summarize up to here”)"}


def _loaded(text: str) -> Context:
    first = text.split("\n", 1)[0]
    if first.startswith(_SKILL_DIR):
        name = first[len(_SKILL_DIR):].rstrip("/").rsplit("/", 1)[-1]
        return Context(f"skill {name}: its instructions, loaded for the model", text, "skill")
    return Context("loaded for the model by the call", text, "tool")


# how 2.1.331 says a call never ran (`toolDenialKind` on the line of its result): the person, a
# permission rule (or a PreToolUse hook: the CLI files both as "permission-rule") or auto mode
# refused it, or the person interrupted it / the CLI cancelled it
_DENIALS = {"user-rejected": DENIED, "permission-rule": DENIED_BY_SETTINGS, "automode-blocked": DENIED_BY_AUTO,
            "automode-unavailable": DENIED_BY_AUTO, "automode-parsing-error": DENIED_BY_AUTO,
            "interrupted": INTERRUPTED, "cancelled": CANCELLED}
# the result texts that tell a PreToolUse hook's refusal from a rule's
_HOOK_SAID = ("PreToolUse:", "hook error", "blocked by hook", "Hook PreToolUse")


# what comes before the person's words in a refusal they typed advice into: 2.1's, 2.0's
_SAID = ("the user said:\n", "The user provided the following reason for the rejection:")
# how a tool's own failure opens, never the person's words (`_bare_words`): the shell's exit code,
# the CLI's wrapped errors, its timeouts and notes, an errno, a rule's or a hook's refusal
_MACHINE = re.compile(r"(Exit code \d|<|\[|Error\b|Command |E[A-Z]{2,}\b|Shell |Sibling |Permission |Claude requested |"
                      r"The user doesn't want |PreToolUse|Hook |Blocked|Interrupted|Request |InputValidationError)")


def _stopped_while_running(rec: dict) -> bool:
    """A call the person stopped while it ran (Esc in the TUI, Ctrl-C): 2.1.331 files it as
    "user-rejected", as it files a refusal in the permission dialog, and sends the model the same
    words. What tells them apart is the line: a refusal is a decision, recorded on it
    (`permissionDecision` {decision: reject, source: user_reject}, as every refusal of the
    recordings has it — the person's, a rule's, a hook's, the mode's), while a stopped call's line
    has no decision and only the bare `toolUseResult` "User rejected tool use" (then comes
    "[Request interrupted by user for tool use]")."""
    return not isinstance(rec.get("permissionDecision"), dict) \
        and rec.get("toolUseResult") == "User rejected tool use"


def _advice(content: list) -> list:
    """A refusal the person typed advice into ("No, and tell Claude what to do differently"): the
    CLI's words to the model fold into one line, the person's words stay as the result's text.
    2.1 puts them after "the user said:", 2.0 after "The user provided the following reason…"."""
    text = content[0].text if len(content) == 1 and content[0].kind == "text" else ""
    for said_at in _SAID:
        head, sep, said = text.partition(said_at)
        if sep and said.strip() and head.startswith("The user doesn't want to proceed"):
            return [Notice("the user refused it and said:", text), Text(said.strip(), markdown=False)]
    return content


def _bare_words(rec: dict, result) -> bool:
    """Whether an error result is only words that may be the person's or a PreToolUse hook's: 2.0
    turns a call down with the comment typed in the permission dialog as the whole result,
    `is_error`, and `toolUseResult` "Error: " + the comment, the very shape of a tool's thrown
    failure; and every version sends a hook's JSON refusal (`permissionDecision: deny`) as its
    reason, in that same shape (3 Bash calls of the corpus's spotter-progress-compact, 2.1.39:
    "Pre-commit validation failed: …", right after the PreToolUse hooks' `hook_progress` lines).
    Free words that open as no failure of the CLI's own does are one of those two, if the call is
    one whose failures never read so; the state map knows its name (`model.USER_WORDS`,
    `model.HOOK_WORDS`). A line that names its denial kind (2.1) or decision says so itself."""
    if not result.is_error or result.state is not None or len(result.content) != 1 \
            or "permissionDecision" in rec:
        return False
    b = result.content[0]
    if b.kind != "text" or rec.get("toolUseResult") != "Error: " + b.text:
        return False
    text = b.text.strip()
    return bool(text) and not _MACHINE.match(text)


def _bare_is_persons(rec: dict) -> bool:
    """A line of a CLI that sent the person's comment as the bare result: 2.0.5 did (the corpus's
    me-next-image-errors); 2.0.57 puts it after "To tell you how to proceed, the user said:\n"
    (its bundle's REJECT_MESSAGE_WITH_FEEDBACK_PREFIX; `_SAID`), as 2.1 does, so a bare error of
    a line from 2.0.57 on is a hook's. (Which release between them changed it no recording or
    bundle at hand says: those stay the person's.)"""
    version = rec.get("version")
    if not isinstance(version, str) or version.startswith(("0.", "1.")):
        return True
    if not version.startswith("2.0."):
        return False
    patch = version[4:].split("-", 1)[0]
    return not patch.isdecimal() or int(patch) < 57


def _hook_said(content: list) -> list:
    """A PreToolUse hook's refusal as the hook's own words under one line naming the hook: the
    CLI's "PreToolUse:Bash hook error: [<command>]: <stderr>" folds its prefix and the hook's
    command into the line (`common.HOOK_BLOCK`); a JSON refusal's reason is all words."""
    text = content[0].text if len(content) == 1 and content[0].kind == "text" else ""
    m = HOOK_BLOCK.match(text[:2000]) if text.startswith(("PreToolUse:", "Hook ", "Error: ")) else None
    if m is None:
        return [Notice("a PreToolUse hook blocked the call and said:"), Text(text, markdown=False)] \
            if text.strip() else content
    hook, command, said = m.group(1) or m.group(3), m.group(2), text[m.end():].strip()
    detail = {"hook": hook, **({"command": command} if command else {}), "result": text}
    if not said:
        return [Notice(f"hook {hook} blocked the call and gave no reason", detail)]
    return [Notice(f"hook {hook} blocked the call and said:", detail), Text(said, markdown=False)]


def _refuser(denial: str, result, rec: dict) -> str:
    """The named state of a refused call: who refused it, as far as its line and result tell. A
    `-p` run's permission mode asks nobody, though the CLI files it as "user-rejected": its text
    says so (`common.refused_state` read it already). A hook's refusal is filed as a rule's
    ("permission-rule"); its decision's source (2.1.331: `permissionDecision` {source: hook}) or
    its text tells it apart."""
    if denial == DENIED and result.state == DENIED_BY_SETTINGS:
        return DENIED_BY_SETTINGS
    if denial == DENIED_BY_SETTINGS:
        decision = rec.get("permissionDecision")
        if result.state == BLOCKED_BY_HOOK or (
                isinstance(decision, dict) and "hook" in (decision.get("source"), decision.get("reasonType"))):
            return BLOCKED_BY_HOOK
        text = next((b.text for b in result.content if b.kind == "text"), "")[:400]
        if any(w in text for w in _HOOK_SAID):
            return BLOCKED_BY_HOOK
    return denial


# who sent a user line that the person did not type (2.1.331 `origin.kind`; "human" and "person"
# are the person): another agent is its author; the CLI's own prompts (a task's notification, an
# auto-continuation, a plugin's or a channel's) are system lines of that kind
_AGENT_SENDERS = {"peer": "peer agent", "coordinator": "coordinator"}
_PERSON = ("human", "person", "voice-call")


def _sender(rec: dict) -> tuple[str | None, str | None]:
    """(author, kind) of a prompt line by its `origin`: an agent's name, or the kind of prompt the
    CLI sent itself; (None, None) for the person's."""
    origin = rec.get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    if not isinstance(kind, str) or kind in _PERSON:
        return None, None
    if kind in _AGENT_SENDERS:
        name = origin.get("from")
        who = _AGENT_SENDERS[kind]
        return (f"{who} {name}" if isinstance(name, str) and name else who), None
    return None, kind.replace("-", "_")


def launched(structured: dict, content: list) -> Notice:
    """An Agent or Workflow call that only started work in the background: the CLI's long note to
    the model (ids, where the output goes, what not to do) as one line; the note in its details.
    (legion's SDK records carry the same result: `legion` uses this too.)"""
    what = structured.get("workflowName") or structured.get("description")
    words = ["started in the background"]
    if isinstance(what, str) and what:
        words.append(what)
    for key, label in (("agentId", "agent"), ("runId", "run"), ("taskId", "task")):
        if isinstance(structured.get(key), str):
            words.append(f"{label} {structured[key]}")
            break
    text = "\n".join(b.text for b in content if b.kind == "text")
    return Notice(" · ".join(words), {**structured, "text": text})


_ERROR_TAGS = ("<tool_use_error>", "</tool_use_error>")


def _unwrapped(blocks: list) -> list:
    """An error result's text without the `<tool_use_error>` tags the CLI wraps it in for the model
    (the card's error state says it already)."""
    out = []
    for b in blocks:
        t = b.text if b.kind == "text" else ""
        if t.startswith(_ERROR_TAGS[0]) and _ERROR_TAGS[1] in t:
            inner, _, rest = t[len(_ERROR_TAGS[0]):].partition(_ERROR_TAGS[1])
            b = Text(inner + rest, b.markdown)
        out.append(b)
    return out


_REMINDER = re.compile(r"\n?<system-reminder>.*?</system-reminder>\n?", re.S)


def _summary_blocks(blocks: list) -> list:
    """A compaction summary's text with the reminder the CLI puts between its opening sentence and
    the summary (2.1.331: the tools used before it) made a context chip: the CLI wrote it there,
    not the model."""
    out = []
    for b in blocks:
        if b.kind != "text" or "<system-reminder>" not in b.text:
            out.append(b)
            continue
        at = 0
        for m in _REMINDER.finditer(b.text):
            out += context_blocks(b.text[at:m.start()], b.markdown) + context_blocks(m.group(0).strip())
            at = m.end()
        out += context_blocks(b.text[at:], b.markdown)
    return out


def _trailer(text: str) -> Notice:
    """The lines the CLI appends to a sub-agent's report for the model ("agentId: … (use
    SendMessage…)", a worktree, `<usage>` figures) as one quiet line; the fields in its details."""
    fields: dict = {}
    for line in _USAGE.sub("\n\\1", text).splitlines():
        name, sep, value = line.partition(": ")
        if sep and re.fullmatch(r"\w+", name):
            fields[name] = value.split(" (", 1)[0].strip() if name == "agentId" else value.strip()
    words = [f"agent {fields.get('agentId', '?')}"]
    for key, unit in (("total_tokens", "tokens"), ("tool_uses", "tool uses")):
        if fields.get(key, "").isdigit():
            words.append(f"{int(fields[key]):,} {unit}")
    if fields.get("duration_ms", "").isdigit():
        words.append(timestamps.span(int(fields["duration_ms"]) / 1000))
    if fields.get("worktreeBranch"):
        words.append(f"worktree {fields['worktreeBranch']}")
    return Notice(" · ".join(words), {**fields, "text": text})


def _task_ended(text: str, ev: Event) -> None:
    """A task notification names the background call whose work ended (`<tool-use-id>`) and how
    (`<status>`): that call stops running in the background there. Only the head is read: the
    `<result>` after it is the agent's own words."""
    head = text[:text.find("<result>")] if "<result>" in text else text[:2000]
    fields = dict(_TASK_CALL.findall(head))
    state = _TASK_ENDS.get(fields.get("status", "").strip())
    if state and fields.get("tool-use-id"):
        ev.states = {**ev.states, fields["tool-use-id"].strip(): state}


def _agent_tail(text: str) -> str | None:
    """The agent id in a Task result's last line, "agentId: a1b2c3 (…)" (searched from the end:
    results can be megabytes)."""
    i = text.rfind("agentId: ", max(0, len(text) - 500))
    if i < 0 or (i > 0 and text[i - 1] != "\n"):
        return None
    m = _AGENT_ID.match(text, i + 9)
    return m.group(0) if m else None


def _prompt_blocks(text: str, ev: Event) -> list:
    """A user prompt's text, with the CLI's tag conventions turned into readable blocks."""
    if "<command-name>" in text:
        name = _COMMAND.search(text)
        args = _COMMAND_ARGS.search(text)
        command = (name.group(1).strip() if name else "") + (
            " " + args.group(1).strip() if args and args.group(1).strip() else "")
        ev.kind = "command"
        return [Notice(f"command {command}".strip())]
    if "<local-command-" in text:
        outs = _STDOUT.findall(text)
        if outs:
            ev.kind = "command_output"
            return [Text(body, markdown=False) for _, body in outs if body.strip()] or [
                Notice("command produced no output")]
        if "<local-command-caveat>" in text:
            ev.hidden, ev.hidden_reason = True, "meta"
            return [Text(text, markdown=False)]
    if "<bash-input>" in text or "<bash-stdout>" in text or "<bash-stderr>" in text:
        blocks = [Notice(f"$ {m.strip()}") for m in _BASH_IN.findall(text)]
        blocks += [Text(body, markdown=False) for _, body in _BASH_OUT.findall(text) if body.strip()]
        ev.kind = "shell"
        return blocks or [Text(text, markdown=False)]
    if text.lstrip().startswith("<task-notification>"):
        fields = dict(_TASK_NOTE.findall(text))
        ev.kind = "task_notification"
        _task_ended(text, ev)
        words = fields.get("summary") or f"task {fields.get('task-id', '')} {fields.get('status', '')}"
        return [Notice(words.strip(), text)]
    if text.startswith(_INTERRUPT):
        ev.kind = "interrupt"
        return [Notice(text.strip("[]"))]
    if text.lstrip().startswith("<teammate-message") and (notes := _TEAMMATE.findall(text)):
        return _teammates(notes, ev)
    if text.startswith(_HARNESS):  # a workflow agent's task: the CLI's frame, then the task indented
        frame, sep, task = text.partition(_HARNESS_END)
        if sep:
            return [Notice("task computed by the workflow script", frame), *context_blocks(textwrap.dedent(task))]
    return context_blocks(text)


def _teammates(notes: list, ev: Event) -> list:
    """What an agent team's teammates sent the lead (the CLI delivers it as a user line of
    `<teammate-message teammate_id=… color=… summary=…>body</teammate-message>`, several at once
    when several came): the teammate is its author, each message its summary and its words."""
    out: list = []
    names = []
    for attrs, body in notes:
        fields = dict(_ATTR.findall(attrs))
        who = fields.get("teammate_id") or "teammate"
        names.append(who)
        head = f"from {who}" if len(notes) > 1 else ""
        if fields.get("summary"):
            head = f"{head}: {fields['summary']}" if head else fields["summary"]
        if head:
            out.append(Notice(head))
        if body.strip():
            out.append(Text(body.strip()))
    unique = list(dict.fromkeys(names))
    ev.author = f"teammate {unique[0]}" if len(unique) == 1 else "teammates"  # (each "from …")
    return out


def _system(rec: dict, ref: Ref) -> Event:
    sub = text_field(rec, "subtype") or ""
    content = rec.get("content")
    if content is None and not sub and isinstance(rec.get("message"), str):
        # the system lines of CLIs before subtypes: `{systemType, message}` (claude-session-mcp
        # models.py SystemRecord: "message: str  # Always string")
        content = rec["message"]
    ev = Event(ref, "system", kind=f"system:{sub}" if sub else "system")
    if sub == "compact_boundary" or sub == "microcompact_boundary":
        md = rec.get("compactMetadata") or rec.get("microcompactMetadata") or {}
        get = md.get if isinstance(md, dict) else {}.get
        words = "Conversation compacted" if sub == "compact_boundary" else "Context micro-compacted"
        trigger, pre, post = get("trigger"), get("preTokens"), get("postTokens")
        kept = get("preservedSegment")
        kept = kept if kept.__class__ is dict else {}
        # the rewind dialog's "Summarize from here" keeps what came before the picked message (the
        # kept segment hangs off the boundary itself) and summarizes the rest; "Summarize up to
        # here" keeps the picked message and what follows. Both say how many of the CLI's messages
        # they summarized (messagesSummarized), which a compaction never does
        if sub == "compact_boundary" and isinstance(get("messagesSummarized"), int):
            before = kept.get("anchorUuid") == rec.get("uuid") and isinstance(kept.get("tailUuid"), str)
            words = ("Conversation partly summarized — “Summarize from here”" if before else
                     "Conversation partly summarized — “Summarize up to here”")
            if before:
                ev.summarized_after = kept["tailUuid"]
        saved = get("tokensSaved")  # (a micro-compaction says what it cleared, not what was left)
        if isinstance(pre, int) and isinstance(saved, int) and not isinstance(post, int):
            post = pre - saved
        if trigger:
            words += f" ({trigger}"
            if isinstance(pre, int) and isinstance(post, int):  # (2.1.x also says what was left)
                words += f", {pre:,} → {post:,} tokens)"
            else:
                words += f", {pre:,} tokens before)" if isinstance(pre, int) else ")"
        ev.kind = "compaction"
        ev.blocks = [Notice(words, md or None)]
        if isinstance(kept.get("headUuid"), str):
            ev.kept_from = kept["headUuid"]
    elif sub == "api_error":
        ev.role = "error"
        ev.blocks = [Notice(_api_error_words(rec), rec.get("error") or None)]
        if isinstance(content, str) and content.strip():
            ev.blocks.append(Text(content, markdown=False))
    elif rec.get("level") == "error":
        ev.role = "error"
        ev.blocks = [Text(as_text(content or rec.get("error") or sub), markdown=False)]
    elif sub.startswith("model_refusal") and not (isinstance(content, str) and content.strip()):
        # 2.1.331 writes model_refusal_no_fallback with an empty content and the refusal in
        # apiRefusalCategory / apiRefusalExplanation
        why = [x for x in (rec.get("apiRefusalCategory"), rec.get("apiRefusalExplanation"))
               if isinstance(x, str) and x]
        model = rec.get("originalModel")
        ev.blocks = [Notice(f"{model if isinstance(model, str) and model else 'the model'} refused"
                            + (": " + " — ".join(why) if why else ""))]
    elif sub == "memory_saved":  # 2.1.331: {writtenPaths} and no content
        paths = rec.get("writtenPaths") if isinstance(rec.get("writtenPaths"), list) else []
        ev.blocks = [Notice("memory saved" + (": " + ", ".join(map(str, paths)) if paths else ""))]
    elif sub == "agents_killed":
        ev.blocks = [Notice("running sub-agents stopped")]
    elif sub == "local_command":
        # 2.1.x writes a slash command the CLI ran itself as two of these: the command (its
        # `<command-name>` tags, or "/name args" as typed), then its output in
        # `<local-command-stdout>` (or `-stderr`: the command failed)
        text = as_text(content)
        outs = _STDOUT.findall(text)
        if outs:
            ev.kind = "command_output"
            ev.blocks = [Text(b, markdown=False) for _, b in outs if b.strip()] or [
                Notice("command produced no output")]
            if any(stream == "stderr" for stream, _ in outs):
                ev.blocks.insert(0, Notice("the command failed"))
        else:
            ev.kind = "command"
            ev.blocks = _prompt_blocks(text, ev) if "<command-name>" in text else [
                Notice(f"command {text.strip()}" if text.strip() else "local command")]
    elif sub == "away_summary" and isinstance(content, str) and content.strip():
        # the recap the CLI writes for someone coming back to the terminal
        ev.blocks = [Notice("recap while you were away"), Text(content)]
    elif sub == "scheduled_task_fire":
        # a /loop or CronCreate job firing: its prompt is sent as the next turn
        cron = rec.get("cron")
        words = "scheduled task fired" + (f" ({cron})" if isinstance(cron, str) and cron else "")
        ev.blocks = [Notice(words, {k: rec[k] for k in ("taskId", "cron", "prompt", "taskKind") if k in rec})]
        if isinstance(content, str) and content.strip():
            ev.blocks.append(Text(content, markdown=False))
    elif sub in ("model_fallback", "model_consent_fallback") and isinstance(rec.get("fallbackModel"), str):
        was = rec.get("originalModel")
        words = f"model fallback: {was if isinstance(was, str) and was else '?'} → {rec['fallbackModel']}"
        ev.blocks = [Notice(words)]
        if isinstance(content, str) and content.strip():
            ev.blocks.append(Text(content, markdown=False))
    elif sub == "turn_duration":
        ms = rec.get("durationMs")
        ev.blocks = [Notice(f"turn took {ms / 1000:.1f}s" if isinstance(ms, (int, float)) else "turn")]
    elif sub == "stop_hook_summary":
        n = rec.get("hookCount")
        ev.blocks = [Notice(f"stop hooks ran ({n})" if n else "stop hooks ran",
                            {k: rec[k] for k in ("hookInfos", "hookErrors") if k in rec})]
    elif isinstance(content, str) and content.strip():
        # a hook's run and its output (1.0.x: "\x1b[1mStop\x1b[22m [uv run pytest] completed
        # successfully: …") are terminal output: kept as written, its colours drawn, never Markdown
        ev.blocks = [Text(content, markdown="\x1b[" not in content)]
    else:
        ev.blocks = [Notice(sub or "system event")]
    if sub in _QUIET_SYSTEM:
        ev.hidden, ev.hidden_reason = True, "bookkeeping"
    elif rec.get("isMeta") is True and ev.role != "error":  # file_snapshot, voice_call_talk (2.1.331)
        ev.hidden, ev.hidden_reason = True, "meta"
    return ev


def _api_error_words(rec: dict) -> str:
    """An api_error line in one sentence: what failed and the retry the CLI scheduled. The error
    is an HTTP error `{status, error: {error: {type, message}}, type}`, a network one `{cause:
    {code}}` / `{connection: {code}, formatted}`, or empty (claude-session-mcp models.py:
    ApiError, NetworkError, NetworkDownError, RetryableHttpError, EmptyError)."""
    err = rec.get("error") if isinstance(rec.get("error"), dict) else {}
    body = err.get("error") if isinstance(err.get("error"), dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else body
    cause = next((c for c in (err.get("cause"), err.get("connection"), rec.get("cause"))
                  if isinstance(c, dict)), {})
    what = detail.get("message") or detail.get("type") or err.get("type") or cause.get("code") \
        or err.get("formatted") or err.get("message")
    return retry_words(err.get("status"), what, rec.get("retryAttempt"), rec.get("maxRetries"),
                       rec.get("retryInMs"))


def _queued_prompt(rec: dict, ref: Ref) -> Event | None:
    """A message the person (or a peer agent) sent while the agent was working, which the agent
    took in mid-turn: the CLI records it only as a `queued_command` attachment (and hidden
    queue-operation lines), never as a user line, so it is shown as the user's message. Task
    notifications queued the same way stay bookkeeping. (claude-session-mcp models.py:
    QueuedCommandAttachment {prompt: str | blocks, commandMode, origin: {kind}}.)"""
    att = rec.get("attachment")
    if not isinstance(att, dict) or att.get("type") != "queued_command" \
            or att.get("commandMode") not in (None, "prompt", "plan"):
        return None
    prompt = att.get("prompt")
    blocks = context_blocks(prompt) if isinstance(prompt, str) else anthropic_blocks(prompt)
    if not blocks:
        return None
    origin = att.get("origin") if isinstance(att.get("origin"), dict) else {}
    kind = origin.get("kind") if isinstance(origin.get("kind"), str) else None
    note = "sent while the agent was working"
    if kind and kind != "human":
        note += f" (from {kind.replace('-', ' ')})"
    ev = Event(ref, "user", blocks=[Notice(note, att), *blocks])
    ev.author = _sender(att)[0]
    if att.get("isMeta") is True:  # a forwarded or carried-over prompt (2.1.331), not sent now
        ev.hidden, ev.hidden_reason = True, "meta"
    return ev


def _never_sent(rec: dict) -> bool:
    """A queue `remove` holding a prompt the person typed that was taken off the queue unsent: the
    × on a queued message, a cancel that cleared the queue, a hook or a limit that dropped it.
    (A prompt the agent took in mid-turn is removed with reason absorbed_mid_turn and shown from
    its queued_command attachment or its tool result; task notifications are the CLI's.)"""
    content = rec.get("content")
    if isinstance(content, list):  # (a prompt with a pasted image: its blocks; models.py
        # QueueOperationRecord `content: str | Sequence[MessageContent]`)
        content = next((b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
    return rec.get("operation") == "remove" and isinstance(content, str) and bool(content.strip()) \
        and rec.get("reason") != "absorbed_mid_turn" and not content.lstrip().startswith("<")


def _attachment(rec: dict, ref: Ref) -> Event:
    """What the CLI attached to the conversation. Most are context for the model (hidden), but a
    prompt sent while the agent worked is the user's message (`_queued_prompt`), and what a hook
    blocked, stopped, failed at or said to the user is shown as the CLI shows it, and so is the
    context a hook added for the model (a UserPromptSubmit hook's output, `additionalContext`) (Claude Code
    2.1.331: the attachment types hook_blocking_error, hook_stopped_continuation,
    hook_non_blocking_error and hook_system_message as its hook runner builds them;
    claude-code-log 1.7.0 factories/attachment_factory.py shows the first three too)."""
    if (queued := _queued_prompt(rec, ref)) is not None:
        return queued
    att = rec.get("attachment") if isinstance(rec.get("attachment"), dict) else {}
    kind = att.get("type") if isinstance(att.get("type"), str) else None
    hook = att.get("hookName") or att.get("hookEvent") or "hook"
    if kind in _HOOK_SHOWN:
        what, fields = _HOOK_SHOWN[kind]
        body = next((att[f] for f in fields if att.get(f)), None)
        if isinstance(body, dict):  # {blockingError, command}
            body = body.get("blockingError") or body.get("command")
        words = f"hook {hook} {what}"
        code = att.get("exitCode")
        if kind == "hook_non_blocking_error" and isinstance(code, int):
            words += f" (exit {code})"
        ev = Event(ref, "system", kind="hook", blocks=[Notice(words, att)])
        if body:
            ev.blocks.append(Text(as_text(body), markdown=False))
        if kind == "hook_blocking_error" and (att.get("hookEvent") or att.get("hookName")) in _KEPT_FROM:
            # the feedback line the CLI sends the model says it where it happened (`_hook_feedback`)
            ev.hidden, ev.hidden_reason = True, "hook feedback, shown as sent"
        return ev
    if kind == "hook_error_during_execution":  # (its TUI: "<hook> hook warning", the error on ctrl+o)
        body = att.get("content")
        ev = Event(ref, "system", kind="hook",
                   blocks=[Notice(f"hook {hook} failed while running (nothing was blocked)", att)])
        if isinstance(body, str) and body.strip():
            ev.blocks.append(Text(body, markdown=False))
        return ev
    if kind == "hook_permission_decision" and att.get("decision") in ("allow", "deny"):
        # a PreToolUse hook answered the permission question itself (its TUI: "Allowed by
        # PreToolUse hook"): no dialog. Hidden: one per call a hook lets through, and a refusal
        # says so on the call's result
        what = "allowed the call" if att["decision"] == "allow" else "refused the call"
        return Event(ref, "system", kind="hook", hidden=True, hidden_reason="hook decision",
                     blocks=[Notice(f"hook {att.get('hookEvent') or hook} {what}", att)])
    if kind == "plan_mode_exit":  # the person approved the plan: the agent may act from here on
        return Event(ref, "system", kind="mode", blocks=[Notice("left plan mode", att)])
    told_model = kind == "hook_additional_context" or (
        kind == "hook_success" and att.get("hookEvent") in _CONTEXT_HOOKS)
    context = att.get("content") if told_model else None
    if isinstance(context, list):
        context = "\n".join(map(as_text, context))
    if isinstance(context, str) and context.strip():  # what the hook told the model
        return Event(ref, "system", kind="hook", blocks=[Notice(f"hook {hook} added context", att),
                                                         Text(context, markdown=False)])
    if (brought := _brought(kind, att)) is not None:
        return Event(ref, "system", kind="context", blocks=[brought])
    ev = Event(ref, "system", kind="attachment", hidden=True, hidden_reason="attachment")
    ev.blocks = [Notice(f"attachment: {kind or '?'}"), Data(att, "attachment")]
    return ev


def _list(x: Any) -> list:
    return x if isinstance(x, list) else []


def _brought(kind: str | None, att: dict) -> Context | Notice | None:
    """What the person's prompt brought along, as the CLI lists it under the prompt: a file,
    folder or PDF they @-mentioned, the IDE's selection or open file, new diagnostics, an MCP
    resource (2.1.331's attachment builders: `file {filename, content: {type: text, file:
    {content, numLines, startLine, totalLines}} | image | notebook, truncated?, displayPath}`,
    `directory {path, content}`, `pdf_reference {filename, pageCount}`, `at_mention_reference
    {mentions, unread}`, `selected_lines_in_ide {ideName, lineStart, lineEnd, filename, content}`,
    `opened_file_in_ide {filename}`, `diagnostics {files: [{uri, diagnostics}]}`, `mcp_resource
    {server, uri, name, content: {contents}}`). None for the rest: context the CLI adds itself."""
    where = next((att[k] for k in ("displayPath", "filename", "path", "name", "uri")
                  if isinstance(att.get(k), str) and att[k]), "?")
    if kind == "file":
        content = att.get("content") if isinstance(att.get("content"), dict) else {}
        file = content.get("file") if isinstance(content.get("file"), dict) else {}
        if content.get("type") == "text" and isinstance(file.get("content"), str):
            n, total = file.get("numLines"), file.get("totalLines")
            size = f"{n} of {total} lines" if isinstance(n, int) and isinstance(total, int) and n < total \
                else f"{n} line{'s' if n != 1 else ''}" if isinstance(n, int) else ""
            return Context(f"@{where} attached" + (f" ({size})" if size else ""), file["content"], "file")
        what = content.get("type") if isinstance(content.get("type"), str) else ""
        return Notice(f"@{where} attached" + (f" ({what})" if what else ""))
    if kind == "directory" and isinstance(att.get("content"), str):
        return Context(f"@{where} attached: its listing", att["content"], "directory")
    if kind == "pdf_reference":
        pages = att.get("pageCount")
        return Notice(f"@{where} attached" + (f" ({pages} pages)" if isinstance(pages, int) else " (PDF)"))
    if kind == "at_mention_reference":
        names = [m for m in _list(att.get("mentions")) if isinstance(m, str)] or [where]
        why = att.get("unread")
        return Notice("@" + ", @".join(names) + " mentioned, not read" + (
            f" ({why.replace('_', ' ')})" if isinstance(why, str) else ""))
    if kind == "selected_lines_in_ide" and isinstance(att.get("content"), str):
        a, b = att.get("lineStart"), att.get("lineEnd")
        lines = (f"line {a}" if a == b else f"lines {a}–{b}") if isinstance(a, int) and isinstance(b, int) else "lines"
        ide = att.get("ideName") if isinstance(att.get("ideName"), str) else "the IDE"
        return Context(f"{lines} of {where} selected in {ide}", att["content"], "ide_selection")
    if kind == "opened_file_in_ide":
        return Notice(f"{where} open in the IDE")
    if kind == "diagnostics" and isinstance(att.get("files"), list):
        out, files = [], 0
        for f in att["files"]:
            found = f.get("diagnostics") if isinstance(f, dict) and isinstance(f.get("diagnostics"), list) else []
            if not found:
                continue
            files += 1
            path = f.get("uri", "?").removeprefix("file://") if isinstance(f.get("uri"), str) else "?"
            for d in found:
                if isinstance(d, dict):
                    start = (d.get("range") or {}).get("start") if isinstance(d.get("range"), dict) else None
                    line = start.get("line") if isinstance(start, dict) else None
                    at = f"{path}:{line + 1}" if isinstance(line, int) else path
                    level = d.get("severity") if isinstance(d.get("severity"), str) else ""
                    out.append(" ".join(w for w in (f"{at}:", level, as_text(d.get("message"))) if w))
        if not out:
            return None
        return Context(f"{len(out)} new diagnostic{'s' if len(out) != 1 else ''} in {files} "
                       f"file{'s' if files != 1 else ''}", "\n".join(out), "diagnostics")
    if kind == "nested_memory":  # a CLAUDE.md (or a rule file) below the project, loaded on a read there
        memory = att.get("content") if isinstance(att.get("content"), dict) else {}
        text = memory.get("content")
        return Context(f"{where} loaded for the model (memory file)", text, "memory") \
            if isinstance(text, str) and text.strip() else Notice(f"{where} loaded for the model (memory file)")
    if kind == "plan_file_reference":  # the plan carried over a compaction
        path = att.get("planFilePath") if isinstance(att.get("planFilePath"), str) else "?"
        text = att.get("planContent")
        return Context(f"plan file {path} referenced", text, "plan") \
            if isinstance(text, str) and text.strip() else Notice(f"plan file {path} referenced")
    if kind == "invoked_skills":  # the skills a compaction kept loaded
        names = [s["name"] for s in _list(att.get("skills")) if isinstance(s, dict) and isinstance(s.get("name"), str)]
        return Notice("skills restored: " + ", ".join(names)) if names else None
    if kind == "mcp_resource":
        body = att.get("content") if isinstance(att.get("content"), dict) else {}
        texts = [c["text"] for c in _list(body.get("contents")) if isinstance(c, dict) and isinstance(c.get("text"), str)]
        server = att.get("server") if isinstance(att.get("server"), str) else "?"
        words = f"MCP resource {where} from {server}"
        return Context(words, "\n\n".join(texts), "mcp_resource") if texts else Notice(words)
    return None


# the hook attachments shown: what the hook did, and the fields that hold what it said
_HOOK_SHOWN = {"hook_blocking_error": ("blocked", ("blockingError",)),
               "hook_stopped_continuation": ("stopped the agent", ("message",)),
               "hook_non_blocking_error": ("failed", ("stderr", "stdout")),
               "hook_system_message": ("says", ("content",))}
# hooks whose plain output the CLI hands the model as context (a hook_success attachment's content);
# any hook may add context explicitly (hook_additional_context, from its JSON output)
_CONTEXT_HOOKS = ("UserPromptSubmit", "SessionStart")


def _noise(rec: dict, ref: Ref, t: str) -> Event:
    ev = Event(ref, "system", kind=t, hidden=True, hidden_reason=_NOISE[t])
    if t in TITLE_KINDS:
        ev.meta = rec  # (named_title reads it)
    if t == "progress":
        data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
        dt = data.get("type") or "progress"
        parent = rec.get("parentToolUseID") or rec.get("toolUseID")
        if isinstance(parent, str) and dt != "hook_progress":
            ev.running.append(parent)
            ev.parent = parent
        if dt == "agent_progress" and isinstance(data.get("agentId"), str) and isinstance(parent, str):
            ev.spawns[parent] = data["agentId"]
        text = data.get("output") or data.get("fullOutput") or data.get("hookName") or data.get(
            "prompt") or data.get("taskDescription") or ""
        ev.blocks = [Notice(f"{dt}: {as_text(text)[:300]}" if text else dt)]
        ev.kind = f"progress:{dt}"
    elif t == "summary":
        ev.blocks = [Notice(f"summary: {as_text(rec.get('summary'))}")]
    elif t == "queue-operation":
        content = rec.get("content")
        words = f"queue {rec.get('operation', '')}".strip()
        ev.blocks = [Notice(words), *with_context(anthropic_blocks(content))] if content else [
            Notice(words)]
        if isinstance(content, str) and content.lstrip().startswith("<task-notification>"):
            _task_ended(content, ev)  # the work ended when it was queued, even if never delivered
        if _never_sent(rec):  # the person's words, which no other line holds
            reason = rec.get("reason")
            note = "typed while the agent was working, removed from the queue before it was sent"
            ev.role, ev.kind, ev.hidden, ev.hidden_reason = "user", "queued_prompt", False, None
            ev.blocks = [Notice(note + (f" ({reason.replace('_', ' ')})" if isinstance(reason, str) else ""),
                                rec), *(context_blocks(content) if isinstance(content, str)
                                        else with_context(anthropic_blocks(content)))]
    elif t == "file-history-snapshot":
        snap = rec.get("snapshot") if isinstance(rec.get("snapshot"), dict) else {}
        files = snap.get("trackedFileBackups") if isinstance(snap, dict) else None
        n = len(files) if isinstance(files, dict) else 0
        ev.blocks = [Notice(f"file history snapshot ({n} file{'s' if n != 1 else ''})")]
    else:
        fields = {k: v for k, v in rec.items() if k not in _ENVELOPE}
        ev.blocks = [Notice(t.replace("-", " ") + ": " + ", ".join(
            f"{k}={as_text(v)[:80]}" for k, v in fields.items()) if fields else t)]
    return ev


# the fields every line may carry: not what a bookkeeping line says
_ENVELOPE = frozenset(("type", "sessionId", "uuid", "timestamp", "parentUuid", "cwd", "version", "gitBranch",
                       "userType", "entrypoint", "isSidechain", "slug", "logicalParentUuid"))


def named_title(ev: Event) -> tuple[int, str] | None:
    """(rank, title) of a title line (`TITLE_KINDS`): the name /rename gave the session, or the
    title the CLI wrote for it."""
    field, rank = _TITLES[ev.kind]
    text = ev.meta.get(field)
    return (rank, text) if isinstance(text, str) and text.strip() else None


def title_of(ev: Event) -> str | None:
    """The first real user prompt makes the title; commands, meta and results do not."""
    if ev.role == "user" and ev.kind == "message" and not ev.hidden and ev.author is None and not (
        ev.meta.get("isSidechain")):
        text = ev.text()
        if text and not text.startswith("<"):
            return text
    return None


# --- companions: the sub-agent files of a session ----------------------------------------------


def agent_finished(meta: dict, last: Any) -> bool:
    """Whether a sub-agent is evidently done, by what its own files say: its `.meta.json` marks it
    `finished` (2.1.331 adds `"finished": true` when the agent's run ends), or `last` — the record
    of the last message of its transcript — is the model's answer that ended its turn
    (`stop_reason` end_turn, no tool call in it): nothing more is coming unless someone writes to
    the agent again. Asked only of the agents of calls still running in the background."""
    if isinstance(meta, dict) and meta.get("finished") is True:
        return True
    if not isinstance(last, dict) or last.get("type") != "assistant" or last.get("isApiErrorMessage"):
        return False
    msg = last.get("message")
    if not isinstance(msg, dict) or msg.get("stop_reason") != "end_turn":
        return False
    content = msg.get("content")
    return not (isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_use" for b in content))


# a Workflow run's id as the CLI makes it (its input schema's resumeFromRunId pattern, loosened):
# the only run names joined into a path
_RUN_ID = re.compile(r"wf_[A-Za-z0-9_-]{1,64}")
RUN_LIMIT = 8 << 20  # of a run's file: its script, its logs and the run's result; a bigger one is not read
# what a run's file says of its end (2.1.331 writes it once, when the run ends): completed, or an
# error for a run that failed or was stopped (its "killed")
_RUN_ENDS = {"completed": COMPLETED, "failed": ERROR, "killed": INTERRUPTED}


def run_file(main: Path, run: str) -> Path | None:
    """Where the CLI writes what a Workflow run came to: `<session>/workflows/<run id>.json`
    (2.1.331 writes it when the run ends, with its status, result and duration). None for a name
    that is not a run id (it comes from the transcript)."""
    if not isinstance(run, str) or not _RUN_ID.fullmatch(run) or main.name == "messages.jsonl":
        return None
    return main.with_suffix("") / "workflows" / f"{run}.json"


def run_end(path: Path) -> tuple[str, float | None] | None:
    """(how it ended — completed, error, or interrupted: stopped —, when it ended, epoch seconds or None) as a Workflow run's
    file says, or None while it says nothing of an end: absent, running, half written, too big,
    not an object. Its time: the run's start and duration, else the time it was written."""
    try:
        raw = files.read_file(path, RUN_LIMIT + 1)
    except OSError:
        return None
    if len(raw) > RUN_LIMIT:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        return None
    status = _RUN_ENDS.get(data["status"])
    if status is None:
        return None
    start, took = data.get("startTime"), data.get("durationMs")
    at = None
    if _number(start) and _number(took) and start > 0 and took >= 0:
        at = (start + took) / 1000.0
    elif isinstance(data.get("timestamp"), str):
        at = timestamps.to_epoch(data["timestamp"])
    return status, at


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x and abs(x) < 1e15


def companions(main: Path) -> list[tuple[str, Path, dict]]:
    """(thread id, path, meta) for each sub-agent transcript belonging to the session at `main`."""
    found: dict[str, tuple[Path, dict]] = {}
    folder = main.parent
    session_dir = main.with_suffix("") if main.name != "messages.jsonl" else folder
    for sub in (session_dir / "subagents", folder / "subagents"):
        if sub.is_dir():
            for d in (sub, *_nested(sub)):
                run = d.name if d.parent.name == "workflows" else None
                for p in sorted(d.glob("agent-*.jsonl")):
                    meta = _meta(p)
                    if run and not isinstance(meta.get("toolUseId"), str):
                        meta["workflowRun"] = run  # the Workflow call's result names the run
                    found.setdefault(p.stem[len("agent-"):], (p, meta))
    session_id = None if main.name == "messages.jsonl" else main.stem
    for p in sorted(folder.glob("agent-*.jsonl")):
        agent = p.stem[len("agent-"):]
        if agent in found:
            continue
        if session_id is None or _first_session_id(p) == session_id:
            found[agent] = (p, {})
    return [(agent, p, meta) for agent, (p, meta) in found.items()]


def companion_folders(main: Path) -> list[Path]:
    """The folders whose listing `companions` reads, and the session's folder in which a
    `subagents` folder would appear: while none of their times changes, there is no new one."""
    folder = main.parent
    session_dir = main.with_suffix("") if main.name != "messages.jsonl" else folder
    subs = (session_dir / "subagents", folder / "subagents")
    return list(dict.fromkeys((folder, session_dir, *subs, *(d for sub in subs for d in _nested(sub)))))


def _nested(sub: Path, depth: int = 3) -> list[Path]:
    """The folders below a `subagents` folder, where newer CLIs keep the agents a workflow ran:
    `subagents/workflows/<run id>/agent-<id>.jsonl` (Claude Code 2.1.331: an agent's transcript
    path is subagents/ + its transcript subdir, `workflows/<run id>` for a Workflow's agents).
    Symbolic links are not followed."""
    out, level = [], [sub]
    for _ in range(depth):
        below = []
        for d in level:
            try:
                with os.scandir(d) as it:
                    below += sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
            except OSError:
                pass
        out += below
        level = below
    return out


META_LIMIT = 1 << 20  # a .meta.json is a few hundred bytes


def companion_meta(p: Path) -> Path:
    """The metadata file of the sub-agent transcript at `p` (its identity is watched: the CLI
    writes it in place, after the transcript, and again when the agent ends)."""
    return p.with_suffix(".meta.json")


def _meta(p: Path) -> dict:
    """A sub-agent's .meta.json: its flat fields (agentType, description, toolUseId…). A nested
    value means nothing here, and the thread's meta goes into the index's cached header, which
    orjson cannot write 255 levels down."""
    m = companion_meta(p)
    try:
        data = orjson.loads(files.read_file(m, META_LIMIT))
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if v is None or isinstance(v, (str, int, float, bool))}


def _first_session_id(p: Path) -> str | None:
    try:
        with files.open_file(p) as f:
            line = f.readline(1 << 20)
        rec = orjson.loads(line)
        return rec.get("sessionId") if isinstance(rec, dict) else None
    except (OSError, orjson.JSONDecodeError):
        return None


def is_companion(path: str) -> bool:
    """Files that belong to another session and are never listed on their own."""
    folder, name = os.path.split(path)
    return (name.startswith("agent-") and name.endswith(".jsonl")) or \
        os.path.basename(folder) == "subagents"


def thread_label(agent: str, meta: dict) -> str:
    desc = meta.get("description")
    kind = meta.get("agentType")
    if agent.startswith("acompact"):
        return "compaction agent"
    if agent.startswith("aprompt_suggestion"):
        return "prompt suggestion agent"
    if kind == "workflow-subagent":  # (2.1.331: every agent a Workflow runs)
        kind = "workflow agent"
    return " · ".join(str(x) for x in (kind, desc) if x) or f"agent {agent}"
