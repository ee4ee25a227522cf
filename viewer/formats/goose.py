"""Goose (block/goose) session files: `~/.local/share/goose/sessions/<id>.jsonl`.

Goose before its SQLite store (`sessions.db`, see below) kept each session as JSONL
(crates/goose/src/session/storage.rs, later legacy.rs): the first line is the session's
`SessionMetadata`, the rest one `Message` per line. Goose rewrites the whole file on each save
(the metadata line changes as the description and token counts are filled in); the index sees the
rewrite and reads the file again.

* the metadata line (snake_case): `working_dir`, `description` (the four-word name Goose's model
  writes after the first prompts: the session's title while it is there), `schedule_id`,
  `message_count`, the token counts (`total_tokens`, `input_tokens`, `output_tokens` of the last
  call, `accumulated_*` of the session), later `extension_data` and `recipe` → a quiet notice. It
  never names the model (storage.rs's SessionMetadata has no such field); a recipe's `settings`
  (`goose_model`, `goose_provider`, which Goose runs its session with) do, and are said so;
* a `Message` (camelCase): `id` (often null), `role` (user / assistant), `created` (unix seconds),
  `content` (a list of MessageContent tagged by `type`), later `metadata: {userVisible,
  agentVisible}`. Content:
  - `text` → Markdown; `image` (`data`, `mimeType`) → an image;
  - `toolRequest` / `frontendToolRequest` `{id, toolCall: {status: success, value: {name,
    arguments}} | {status: error, error}}` → a call (an error is a call the model made that
    Goose could not read: shown with its error);
  - `toolResponse` `{id, toolResult: {status: success, value} | {status: error, error}}` → that
    call's result; `value` is a list of MCP content (older Goose) or a `CallToolResult` `{content,
    isError, structuredContent}` (current). MCP tools often return each output twice, once for
    the model (`annotations.audience: ["assistant"]`) and once for the person (`["user"]`): Goose
    shows the person's, and a copy for the model that says the same is not shown again;
  - `toolConfirmationRequest` / `actionRequired` (`actionType: toolConfirmation`) → the call awaits
    the person's permission; an elicitation (a question a tool asks) and its answer → notices;
  - `thinking` (`thinking`, `signature`), `redactedThinking` (`data`) and older Goose's `reasoning`
    (`text`; current Goose reads it as thinking) → thinking; a request's `_meta` title and run
    summary (`goose.toolSummary.title`, `goose.toolChain.summary`) → notices before its card;
  - `contextLengthExceeded`, `summarizationRequested`, `conversationCompacted` (older Goose) and
    `systemNotification` (`notificationType`, `msg`) → notices;
  - anything else → a data card with its JSON.
  A user message holding only tool responses is a tool event. A message Goose does not show the
  person (`userVisible: false`: what it injects for the model, a compaction's summary) is hidden,
  with that said; one the model no longer sees (`agentVisible: false`: compacted away) is shown.

Current Goose keeps its sessions as rows of `sessions.db` beside those files (goose_db.py): a
session row is read as a document `{"session": row, "messages": [Message…]}` whose messages are the
JSONL file's, its row taking the metadata line's place (`name` its description; `model_config_json`'s
`model_name` its model, with `provider_name`; `session_type` said when it is not the person's).

Usage: Goose keeps none per message. Since schema 15 its database keeps one row per model call in
`usage_ledger` (goose_db.py), naming no message: each is the usage of the latest reply Goose had
written by the second it recorded the call (with the call's model, tokens and the cost Goose
worked out), or where no reply is left for it a hidden `usage` event of its own (as Codex's token
counts are); the usage panel, its charts and the list count those calls.
Before the ledger (and in a JSONL file) Goose kept only the session's totals (`accumulated_*`
tokens of the row or the metadata line, its own `accumulated_cost`): they are the header event's
usage, marked as the session's totals (usage.SESSION_TOTALS), priced by the price table for the
row's model, and counted only where no call of the ledger is (usage.Tally.rows).

Tool names: Goose names an extension's tools `<extension>__<tool>` (`developer__shell`); the
viewer shows them as the extension and the tool (tools.mcp_name with the format). Its built-in
extensions with unprefixed tools (summon's `delegate`, current developer's `shell`) read as named.

Sub-agents: the summon extension's `delegate` runs a sub-agent in a session of its own
(`session_type: sub_agent`) that names its parent (`parent_session_id`, schema 15+); the call's
result names it (`_meta.subagent_session_id`). `companions` lists a session's sub-agents from the
database, `event` links each to its call (`spawns`), and `session_info` names a sub-agent's
parent: the sub-agent nests under its call, and is listed as a sub-agent of its parent.

Goose 1.x before `delegate` had no parent column: its `subagent` tool (and `subagent__execute_task`,
running the tasks `dynamic_task__create_task` made) ran a task in a `sub_agent` session whose id was
the task's, and answered with `{"status", "results": [{"task_id", …}]}`: `companions` also lists the
sessions a session's results name so (goose_db.task_sessions) and `event` links the first to its
call. Tasks of older Goose ran in no session of their own: the call's header says how many tasks it
made or ran, and its card shows them.

`sniff`: the metadata line (`description` + `message_count` + a token count or `working_dir`), and
a message with an integer `created` and typed content, are unmistakable (3).
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any

from .. import keys
from ..model import CANCELLED, DENIED, Data, Event, Notice, Ref, Text, Thinking, ToolResult, ToolUse
from .common import as_text, generic_event, media_block, result_content, set_time, text_field
from . import goose_db, rowdb
from .openai_chat import prompt_title
from ..usage import CARRIED, SESSION_TOTALS, UNTIED

NAME = "goose"
MODE = "jsonl"
TITLE_KINDS = frozenset({"session"})
ROW_STORE = goose_db  # current Goose's database: its session rows are sessions (formats/__init__)

_META_MARKS = ("working_dir", "total_tokens", "accumulated_total_tokens", "schedule_id")
_CALLS = ("toolRequest", "frontendToolRequest")
_NOTICES = {"contextLengthExceeded": "context length exceeded",
            "summarizationRequested": "summarization requested",
            "conversationCompacted": "conversation compacted"}
_ROW = "__goose_row__"  # marks a database session row among a document's records
_NOTE = "__goose_note__"  # …and a note on reading it (the database is locked, its log unread)
_LEDGER = "__goose_ledger__"  # …and a row of its usage ledger (one model call)
_USAGE = "__goose_usage__"  # a reply's ledger row (the usage of the call that wrote it)
_FURTHER = "__goose_further__"  # …a ledger row of a further call of the reply before it
_UNTIED = "__goose_untied__"  # …a ledger row no reply could be tied to
_HIDDEN_WHY = "not shown to the person: Goose sent it to the model only"
# what Goose answers for a call it did not run (crates/goose/src/agents/tool_execution.rs)
_DECLINED = "The user has declined to run this tool."
_SKIPPED = "Let the user know the tool call was skipped in goose chat mode."


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict):
        return 0
    if _metadata(rec):
        return 3
    if rec.get("role") not in ("user", "assistant") or not isinstance(rec.get("content"), list):
        return 0
    created = rec.get("created")
    if isinstance(created, int) and not isinstance(created, bool) and all(
            isinstance(b, dict) and isinstance(b.get("type"), str) for b in rec["content"]):
        return 3
    return 0


def _metadata(rec: dict) -> bool:
    return isinstance(rec.get("description"), str) and isinstance(rec.get("message_count"), int) \
        and "role" not in rec and any(k in rec for k in _META_MARKS)


# a session row of Goose's database (a path below `sessions.db`), read as one document
# (goose_db.document); a database that cannot be read now (locked, damaged): the session says why
claims_file, folder_document, folder_identity = rowdb.session_hooks(
    goose_db, lambda why: {"session": {}, "messages": [], "unreadable": why})


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """A database session read as a document: its row as the metadata line, then its messages."""
    if not isinstance(doc, dict) or not isinstance(doc.get("session"), dict) \
            or not isinstance(doc.get("messages"), list):
        return None
    out: list[tuple[str, Any]] = [("session", {_ROW: True, **doc["session"]})]
    out += _with_ledger([(f"messages[{i}]", m) for i, m in enumerate(doc["messages"])], doc.get("usage"))
    for key in ("unreadable", "stale_wal"):
        if isinstance(doc.get(key), str):
            out.append((key, {_NOTE: doc[key]}))
    return out


def _with_ledger(messages: list[tuple[str, Any]], ledger: Any) -> list[tuple[str, Any]]:
    """The messages with the ledger's rows among them (`_tie_ledger` says which reply each row
    paid for): a reply's first row is its usage, a further row of the same reply an event right
    after it (another call of that reply: a tool loop's call whose reply Goose did not keep); a
    row tied to no reply (a compaction's call, the usage before the ledger, a call recorded before
    any reply or after a reply that holds its own call) an event of its own after the messages
    Goose had written by the second it recorded it, in the ledger's order."""
    if not isinstance(ledger, list) or not ledger:
        return messages
    rows = [(f"usage_ledger[{j}]", {_LEDGER: True, **row}) for j, row in enumerate(ledger)
            if isinstance(row, dict)]
    held, untied = _tie_ledger(messages, [r for _, r in rows])
    tied = {j for js in held.values() for j in js}
    free = [(key, {**r, _UNTIED: True} if j in untied else r) for j, (key, r) in enumerate(rows)
            if j not in tied]
    out: list[tuple[str, Any]] = []
    j = 0
    for i, (key, m) in enumerate(messages):
        created = _second(m.get("created")) if isinstance(m, dict) else None
        while j < len(free) and created is not None and (
                _second(free[j][1].get("created_timestamp")) or 0) < created:
            out.append(free[j])
            j += 1
        paid = held.get(i)
        if not paid:
            out.append((key, m))
            continue
        out.append((key, {**m, _USAGE: rows[paid[0]][1]}))
        out += [(rows[p][0], {**rows[p][1], _FURTHER: True}) for p in paid[1:]]
    return out + free[j:]


def _second(value: Any) -> float | None:
    """A time Goose wrote as unix seconds (or milliseconds, as Goose reads them) in seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return value / 1000 if value > 10_000_000_000 else float(value)
    return None


def _special(row: dict) -> bool:
    """A ledger row that paid for no reply: the usage before the ledger, a compaction's call."""
    return row.get("cost_source") == "carried_forward" or row.get("is_compaction") not in (None, 0, False)


_ROW_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_OWN_COUNTS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def _own_usage(m: Any) -> dict | None:
    """The usage newer Goose writes on the reply a model call made (`metadata.usage`, a
    MessageUsage: the same numbers as the call's ledger row), or None."""
    md = m.get("metadata") if isinstance(m, dict) else None
    u = md.get("usage") if isinstance(md, dict) else None
    return u if isinstance(u, dict) and any(k in u for k in _OWN_COUNTS) else None


def _tie_ledger(messages: list[tuple[str, Any]], rows: list[dict]) -> tuple[dict[int, list[int]], set[int]]:
    """Which reply each ledger row paid for: ({message index: its rows}, rows tied to none).

    The ledger names no message. Newer Goose writes each call's usage on the reply it made too
    (`metadata.usage`): a row is that reply's when their numbers are the same, in order — exact.
    Otherwise by time, as Goose writes a call's row once its reply is kept: the latest reply
    written by the row's second (of the replies of that second, the first not paid for yet, so
    calls a second apart keep their order), never one before the previous row's; several rows of
    one reply are several calls of it. A row recorded before any reply, or whose reply holds its
    own call already, is tied to none."""
    replies = [i for i, (_, m) in enumerate(messages) if _reply(m)]
    held: dict[int, list[int]] = {}
    own = [i for i in replies if _own_usage(messages[i][1])]
    p = 0
    for j, row in enumerate(rows):
        if _special(row) or p >= len(own):
            continue
        want = tuple(_count(row, k) or 0 for k in _ROW_COUNTS)
        t = _second(row.get("created_timestamp"))
        for q in range(p, len(own)):
            when = _second(messages[own[q]][1].get("created"))
            if t is not None and when is not None and when > t + 3600:
                break  # (a reply written an hour after the row did not make its call)
            u = _own_usage(messages[own[q]][1])
            if tuple(_count(u, k) or 0 for k in _OWN_COUNTS) == want:
                held[own[q]] = [j]
                p = q + 1
                break
    exact = {j for js in held.values() for j in js}
    times = [(i, _second(messages[i][1].get("created"))) for i in replies]
    stamps = [w for _, w in times]
    ordered = None not in stamps and all(a <= b for a, b in zip(stamps, stamps[1:]))
    untied: set[int] = set()
    last = -1
    for j, row in enumerate(rows):
        if j in exact or _special(row):
            continue
        t = _second(row.get("created_timestamp"))
        if ordered and t is not None:  # (the common case: the replies' times in order)
            end = bisect.bisect_right(stamps, t)
            start = bisect.bisect_left(stamps, stamps[end - 1]) if end else 0
            cands = [(i, w) for i, w in times[start:end] if i >= last]
        else:
            cands = [(i, w) for i, w in times if i >= last and w is not None and t is not None and w <= t]
        if not cands:
            untied.add(j)
            continue
        second = cands[-1][1]
        pick = next((i for i, w in cands if w == second and i not in held), cands[-1][0])
        if _own_usage(messages[pick][1]) is not None:
            untied.add(j)  # (its reply holds the call that made it, as Goose wrote it)
            continue
        held.setdefault(pick, []).append(j)
        last = pick
    return held, untied


def _reply(m: Any) -> bool:
    """A message of the model's that no ledger row holds the usage of yet."""
    return isinstance(m, dict) and m.get("role") == "assistant" and _USAGE not in m \
        and _LEDGER not in m and isinstance(m.get("content"), list)


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, dict):
        return generic_event(rec, ref, NAME)
    if rec.get(_ROW) is True:
        return _row(rec, ref)
    if isinstance(rec.get(_NOTE), str):
        return Event(ref, "system", "notice", format=NAME, blocks=[Notice(rec[_NOTE])])
    if rec.get(_LEDGER) is True:
        return _ledger(rec, ref)
    if _metadata(rec):
        return _session(rec, ref)
    if rec.get("role") not in ("user", "assistant") or not isinstance(rec.get("content"), list):
        return generic_event(rec, ref, NAME)
    ev = Event(ref, rec["role"], format=NAME)
    for item in rec["content"]:
        _content(ev, item)
    if ev.role == "user" and ev.tool_results() and not any(b.kind == "text" for b in ev.blocks):
        ev.role, ev.kind = "tool", "tool_result"
    if isinstance(rec.get("id"), str) and rec["id"]:
        ev.source_id = rec["id"]
    set_time(ev, rec.get("created"))
    md = rec.get("metadata")
    if isinstance(md, dict) and md.get("userVisible") is False:
        ev.hidden, ev.hidden_reason = True, _HIDDEN_WHY
    ev.meta = {k: v for k, v in rec.items() if k not in ("content", _USAGE)}
    own = _own_usage(rec) if ev.role == "assistant" else None
    if isinstance(rec.get(_USAGE), dict):
        row = {k: v for k, v in rec[_USAGE].items() if k != _LEDGER}
        ev.usage, model, _ = _ledger_usage(row)
        ev.model = model or ev.model
        if isinstance(row.get("id"), int):
            ev.message_id = f"ledger:{row['id']}"
        ev.meta["usage_ledger"] = row  # (the raw view shows the row it was given)
    elif own is not None:
        # newer Goose's own record of the call that made this reply (no ledger row tied to it:
        # a JSONL export, a database without the ledger)
        ev.usage, model, _ = _ledger_usage({c: own.get(k) for c, k in zip(_ROW_COUNTS, _OWN_COUNTS)}
                                           | {"cost": own.get("cost")})
        ev.model = _inference_model(rec.get("metadata")) or ev.model
    return ev


def _inference_model(md: Any) -> str | None:
    """The model newer Goose names on a reply (`metadata.inference`: resolved, else requested)."""
    inf = md.get("inference") if isinstance(md, dict) else None
    for key in ("resolvedModel", "requestedModel"):
        v = inf.get(key) if isinstance(inf, dict) else None
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


def _row(rec: dict, ref: Ref) -> Event:
    """A session row of Goose's database, read as the metadata line it replaced."""
    row = {k: v for k, v in rec.items() if k != _ROW}
    name = row.get("name") or row.get("description")
    meta = {**row, "description": name if isinstance(name, str) else "",
            "recipe": row.get("recipe_json")}
    ev = _session(meta, ref)
    kind = row.get("session_type")
    if isinstance(kind, str) and kind not in ("", "user"):
        ev.blocks.insert(1, Notice(f"session type: {kind.replace('_', ' ')}"))
    ev.meta = row
    ev.meta["description"] = meta["description"]
    set_time(ev, row.get("created_at") if isinstance(row.get("created_at"), str) else None)
    ev.timestamp_assumed_utc = False  # (SQLite's CURRENT_TIMESTAMP and sqlx's DateTime<Utc> are UTC)
    model = _model(row)
    provider = row.get("provider_name")
    provider = provider if isinstance(provider, str) and provider else None
    if model or provider:  # (the row's own model config, before its recipe's settings)
        ev.blocks = [b for b in ev.blocks if not (b.kind == "notice" and b.text.startswith("model: "))]
        ev.model = model or ev.model
        ev.blocks.insert(1, Notice("model: " + " · ".join(x for x in (model, provider) if x)))
    return ev


def _recipe_model(recipe: Any) -> tuple[str | None, str | None]:
    """(model, provider) a recipe's `settings` asked for (`goose_model`, `goose_provider`: Goose
    runs the recipe's session with them), or Nones."""
    settings = recipe.get("settings") if isinstance(recipe, dict) else None
    if not isinstance(settings, dict):
        return None, None
    model, provider = settings.get("goose_model"), settings.get("goose_provider")
    return (model if isinstance(model, str) and model.strip() else None,
            provider if isinstance(provider, str) and provider.strip() else None)


def _ledger(rec: dict, ref: Ref) -> Event:
    """A row of Goose's usage ledger: one model call's usage, a hidden event (its numbers said in a
    line for who shows it). Its input counts include the cached parts, as the session's totals do;
    its cost is Goose's own (reported by the provider or estimated by Goose). The row Goose writes
    for what a session used before the ledger (`carried_forward`, naming no model) and a call that
    compacted the conversation are said as such."""
    row = {k: v for k, v in rec.items() if k not in (_LEDGER, _FURTHER, _UNTIED)}
    u, model, (inp, out, read, write) = _ledger_usage(row)
    source = row.get("cost_source")
    if source == "carried_forward":
        # (the session's totals before the ledger: tokens counted, not a call, priced as totals)
        what = "usage before Goose kept it call by call (carried totals, not a model call)"
        u[CARRIED] = "Goose"
    elif row.get("is_compaction") not in (None, 0, False):
        what = "a model call that compacted the conversation"
    elif rec.get(_FURTHER):
        what = "a further model call of the reply above (Goose kept no reply of its own for it)"
    elif rec.get(_UNTIED):
        # (the ledger names no message: said in the usage panel too)
        what = "a model call not tied to a reply (recorded before any reply Goose kept for it)"
        u[UNTIED] = "Goose's usage ledger names no message"
    else:
        what = "a model call"
    parts = [f"{x:,} {w}" for x, w in ((inp, "in"), (out, "out"), (read, "cache read"),
                                        (write, "cache write")) if x]
    words = f"Goose's usage ledger: {what}" + (f" ({model})" if model else "") + \
        (": " + " · ".join(parts) if parts else "")
    if "cost_usd" in u:
        whose = {"provider_reported": "reported by the provider", "estimated": "Goose's estimate"}
        words += f" · ${u['cost_usd']:.4f}" + (f" ({whose[source]})" if source in whose else "")
    ev = Event(ref, "system", "usage", format=NAME, blocks=[Notice(words)], hidden=True,
               hidden_reason="usage of a model call (Goose's usage ledger)", usage=u, meta=row)
    if model:
        ev.model = model
    if isinstance(row.get("id"), int):
        ev.message_id = f"ledger:{row['id']}"
    set_time(ev, row.get("created_timestamp"))
    return ev


def _ledger_usage(row: dict) -> tuple[dict, str | None, tuple[int, int, int, int]]:
    """(usage record, model, (input, output, cache read, cache write)) of a ledger row: its input
    counts its cached parts (as the session's totals do); its cost is Goose's own."""
    inp, out = _count(row, "input_tokens") or 0, _count(row, "output_tokens") or 0
    read, write = _count(row, "cache_read_tokens") or 0, _count(row, "cache_write_tokens") or 0
    u: dict = {"prompt_tokens": max(inp, read + write), "completion_tokens": out}
    if read:
        u["cache_read_input_tokens"] = read
    if write:
        u["cache_creation_input_tokens"] = write
    cost = row.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost == cost and cost >= 0:
        u["cost_usd"] = float(cost)
    model = row.get("model") if isinstance(row.get("model"), str) and row["model"] else None
    return u, model, (inp, out, read, write)


def _model(row: dict) -> str | None:
    config = row.get("model_config_json")
    name = config.get("model_name") if isinstance(config, dict) else None
    return name if isinstance(name, str) and name else None


def _session(rec: dict, ref: Ref) -> Event:
    """The metadata line: where the session ran, its description and its token counts."""
    words = "Goose session"
    if isinstance(rec.get("working_dir"), str) and rec["working_dir"]:
        words += f" in {rec['working_dir']}"
    if isinstance(rec.get("schedule_id"), str) and rec["schedule_id"]:
        words += f" · scheduled ({rec['schedule_id']})"
    blocks: list = [Notice(words)]
    if rec["description"].strip():
        blocks.append(Notice(f"description: {rec['description'].strip()}"))
    tokens = _tokens(rec)
    if tokens:
        blocks.append(Notice(tokens))
    ev_usage = _totals(rec)
    model, provider = _recipe_model(rec.get("recipe"))
    if model or provider:  # (the metadata line names no model: a recipe's settings may)
        blocks.insert(1, Notice("model: " + " · ".join(x for x in (model, provider) if x)
                                + " (the recipe's settings)"))
    if isinstance(rec.get("recipe"), dict):
        recipe = rec["recipe"]
        blocks.append(Data(recipe, f"recipe: {as_text(recipe.get('title') or '')}".rstrip(": ")))
    ev = Event(ref, "system", "session", format=NAME, blocks=blocks, meta=rec, usage=ev_usage)
    if model:
        ev.model = model
    return ev


def _count(rec: dict, key: str) -> int | None:
    v = rec.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _totals(rec: dict) -> dict | None:
    """The session's usage as Goose keeps it, for the usage tally: the `accumulated_*` counts, the
    sums over its model calls (Goose counts cached input in the input, and keeps the cached parts
    apart since schema 14), and the cost Goose itself worked out (`accumulated_cost`, schema 13).
    They are the session's totals, not a call's (usage.SESSION_TOTALS). `total_tokens` and its
    kin are the latest call's (the context's size), not counted."""
    inp, out = _count(rec, "accumulated_input_tokens"), _count(rec, "accumulated_output_tokens")
    if inp is None and out is None:
        return None
    u: dict = {"prompt_tokens": inp or 0, "completion_tokens": out or 0, SESSION_TOTALS: "Goose"}
    for col, key in (("accumulated_cache_read_tokens", "cache_read_input_tokens"),
                     ("accumulated_cache_write_tokens", "cache_creation_input_tokens")):
        if _count(rec, col):
            u[key] = rec[col]
    cost = rec.get("accumulated_cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost == cost and cost > 0:
        u["cost_usd"] = float(cost)
    return u


def _tokens(rec: dict) -> str | None:
    """The session's token counts, in a line."""
    def n(key: str) -> int | None:
        v = rec.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    total, inp, out = n("accumulated_total_tokens"), n("accumulated_input_tokens"), n("accumulated_output_tokens")
    words = "tokens"
    if total is None:
        # (no session totals: the counts Goose kept are its last model call's, the context's size)
        total, inp, out = n("total_tokens"), n("input_tokens"), n("output_tokens")
        words = "tokens of the last model call"
    if total is None:
        return None
    parts = [f"{x:,} {w}" for x, w in ((inp, "in"), (out, "out"),
                                        (n("accumulated_cache_read_tokens"), "cache read"),
                                        (n("accumulated_cache_write_tokens"), "cache write")) if x]
    return f"{words}: {total:,}" + (f" ({' · '.join(parts)})" if parts else "")


def _content(ev: Event, item: Any) -> None:
    """One MessageContent as blocks of `ev` (or its permission request)."""
    if not isinstance(item, dict):
        ev.blocks.append(Data(item))
        return
    t = item.get("type")
    if not isinstance(t, str):
        ev.blocks.append(Data(item))
    elif t == "text" and isinstance(item.get("text"), str):
        ev.blocks.append(Text(item["text"]))
    elif t == "image":
        ev.blocks.append(media_block(item, "image"))
    elif t in _CALLS:
        _call(ev, item, t)
    elif t == "toolResponse":
        result = _response(item)
        ev.blocks.append(result)
        spawned = _spawned(item)
        if spawned and result.tool_use_id:
            ev.spawns[result.tool_use_id] = spawned
    elif t == "toolConfirmationRequest":
        _confirmation(ev, item)
    elif t == "actionRequired":
        _action(ev, item)
    elif t == "thinking":
        sig = item.get("signature")
        ev.blocks.append(Thinking(as_text(item.get("thinking") or ""), signature=sig if isinstance(sig, str) else None))
    elif t == "redactedThinking":
        ev.blocks.append(Thinking("", redacted=True))
    elif t == "reasoning" and isinstance(item.get("text"), str):
        # (older Goose's reasoning: current Goose reads it as thinking, message.rs)
        ev.blocks.append(Thinking(item["text"]))
    elif t in _NOTICES:
        msg = text_field(item, "msg")
        ev.blocks.append(Notice(f"{_NOTICES[t]}: {msg}" if msg else _NOTICES[t], item))
    elif t == "systemNotification":
        msg = text_field(item, "msg") or as_text(item.get("notificationType") or "notification")
        ev.blocks.append(Notice(msg, item))
    else:
        ev.blocks.append(Data(item, t))


def _call(ev: Event, item: dict, t: str) -> None:
    """A tool request: its name and arguments, or the error Goose met reading what the model
    asked for (the call is shown with it; its response says the same)."""
    cid = as_text(item.get("id") or "")
    _call_notes(ev, item.get("_meta"))  # (said before the call's card, as a heading would be)
    call = item.get("toolCall") if isinstance(item.get("toolCall"), dict) else {}
    value = call.get("value") if isinstance(call.get("value"), dict) else None
    if call.get("status") == "success" and value is not None:
        name = value.get("name") if isinstance(value.get("name"), str) and value["name"] else "?"
        args = value.get("arguments")
        ev.blocks.append(ToolUse(cid, name, args if args is not None else {}))
    else:
        # (the error is the call's result too: Goose answers such a call with it)
        ev.blocks.append(ToolUse(cid, "invalid tool call", {}))
        ev.blocks.append(Notice("Goose could not read this tool call", call))
    if t == "frontendToolRequest":
        ev.blocks.append(Notice("run by the app (a frontend tool)"))


def _call_notes(ev: Event, meta: Any) -> None:
    """What current Goose writes on a tool request besides the call (its `_meta`, message.rs's
    TOOL_META_* keys): the short title its model gave the call, and on the first call of a run of
    calls, its summary of the run."""
    if not isinstance(meta, dict):
        return
    title = meta.get("goose.toolSummary.title")
    if isinstance(title, str) and title.strip():
        ev.blocks.append(Notice(f"Goose's title for this call: {title.strip()}"))
    chain = meta.get("goose.toolChain.summary")
    summary = chain.get("summary") if isinstance(chain, dict) else None
    count = chain.get("count") if isinstance(chain, dict) else None
    if isinstance(summary, str) and summary.strip():
        runs = f" of these {count} calls" if isinstance(count, int) and count > 1 else ""
        ev.blocks.append(Notice(f"Goose's summary{runs}: {summary.strip()}"))


def _response(item: dict) -> ToolResult:
    cid = as_text(item.get("id") or "")
    res = item.get("toolResult") if isinstance(item.get("toolResult"), dict) else {}
    if res.get("status") == "error" or "error" in res and "value" not in res:
        return ToolResult(cid, [Text(as_text(res.get("error") or "error"), markdown=False)], is_error=True)
    value = res.get("value")
    structured = None
    if isinstance(value, dict):  # CallToolResult
        err = value.get("isError")
        structured = value.get("structuredContent")
        items, is_error = value.get("content"), err if isinstance(err, bool) else None
    else:  # older Goose: the content list itself
        items, is_error = value, None
    items = _for_the_person(items)
    content = result_content(items)
    if isinstance(items, list):  # a fenced block written for the person reads as Markdown
        for i, (it, b) in enumerate(zip(items, content)):
            if b.kind == "text" and _fenced(it):
                content[i] = Text(b.text)
    if not content and structured is not None:
        content = [Data(structured, "structured content")]
    result = ToolResult(cid, content, is_error=is_error, structured=structured)
    said = next((b.text.lstrip() for b in content if b.kind == "text"), "")
    if said.startswith(_DECLINED):
        result.is_error, result.state = True, DENIED
    elif said.startswith(_SKIPPED):
        result.is_error, result.state = True, CANCELLED
    return result


def _spawned(item: dict) -> str | None:
    """The sub-agent session a `delegate` call made, as its result names it: the CallToolResult's
    `_meta.subagent_session_id` (crates/goose/src/agents/platform_extensions/summon.rs,
    `handle_delegate`). A `load` of a background task names the same session with its
    `task_status`: it collects the sub-agent's result, it did not start it."""
    res = item.get("toolResult")
    value = res.get("value") if isinstance(res, dict) else None
    meta = value.get("_meta") if isinstance(value, dict) else None
    if not isinstance(meta, dict):
        # Goose 1.x's subagent tools: the first session their result names as a task it ran
        # (goose_db.task_ids; companions lists those sessions)
        named = goose_db.task_ids([item])
        return named[0] if named else None
    if "task_status" in meta:
        return None
    sid = meta.get("subagent_session_id")
    return sid if isinstance(sid, str) and goose_db.ID.fullmatch(sid) else None


def _for_the_person(items: Any) -> Any:
    """MCP content as Goose shows it: an item meant for the model only (`audience: ["assistant"]`)
    whose text an item for the person repeats is left out; every other item stays."""
    if not isinstance(items, list):
        return items
    def audience(it: Any) -> list:
        ann = it.get("annotations") if isinstance(it, dict) else None
        aud = ann.get("audience") if isinstance(ann, dict) else None
        return aud if isinstance(aud, list) else []

    shown = {_item_text(it) for it in items if "assistant" not in audience(it) or "user" in audience(it)}
    return [it for it in items
            if not (audience(it) == ["assistant"] and _item_text(it) in shown)]


def _item_text(it: Any) -> Any:
    """An item's text as the person reads it: a Markdown fence around it aside."""
    if isinstance(it, dict):
        if isinstance(it.get("text"), str):
            text = it["text"].strip()
            if _fenced(it):
                text = text.split("\n", 1)[1].rsplit("```", 1)[0] if "\n" in text else text
            return text.strip()
        res = it.get("resource")
        if isinstance(res, dict) and isinstance(res.get("text"), str):
            return res["text"].strip()
    return None


def _fenced(it: Any) -> bool:
    """A text item for the person that is one fenced code block (Goose's editor writes a file so)."""
    if not isinstance(it, dict) or it.get("type") != "text" or not isinstance(it.get("text"), str):
        return False
    ann = it.get("annotations")
    text = it["text"].strip()
    return isinstance(ann, dict) and ann.get("audience") == ["user"] and text.startswith("```") \
        and text.endswith("```") and text.count("\n") >= 1


def _confirmation(ev: Event, item: dict) -> None:
    tool = text_field(item, "toolName") or text_field(item, "tool_name")
    args = item.get("arguments")
    _ask(ev, text_field(item, "id"), tool, args, text_field(item, "prompt"), item)


def _ask(ev: Event, cid: str | None, tool: str | None, args: Any, prompt: str | None, item: dict) -> None:
    """A call that waits for the person's permission."""
    words = f"permission requested for {tool or 'a tool'}" + (f": {prompt}" if prompt else "")
    ev.blocks.append(Notice(words, item))
    if args:
        ev.blocks.append(Data(args, "arguments"))
    if ev.kind == "message" and ev.role == "assistant" and not ev.tool_uses():
        ev.kind = "permission"
    ev.permission = {"call": cid, "tool": tool, "request": None, "decision": None}


def _action(ev: Event, item: dict) -> None:
    data = item.get("data") if isinstance(item.get("data"), dict) else {}
    kind = data.get("actionType")
    if kind == "toolConfirmation":
        _ask(ev, text_field(data, "id"), text_field(data, "toolName"), data.get("arguments"),
             text_field(data, "prompt"), item)
    elif kind == "elicitation":
        ev.blocks.append(Notice(f"a tool asks: {as_text(data.get('message') or '')}".rstrip(": "), item))
    elif kind == "elicitationResponse":
        ev.blocks.append(Notice("the person's answer to a tool's question", item))
        if data.get("user_data") is not None or data.get("userData") is not None:
            ev.blocks.append(Data(data.get("user_data", data.get("userData")), "answer"))
    else:
        ev.blocks.append(Data(item, "action required"))


# --- sub-agents: sessions of Goose's database that name their parent ---------------------------

CHILD_DEPTH = 2  # (Goose refuses a delegation from a sub-agent: one level is all it makes)


def companions(main: Path) -> list[tuple[str, Path, dict]]:
    """(session id, row path, meta) of the sub-agent sessions of a session of Goose's database:
    the rows naming it as their `parent_session_id` (goose_db.children). The `delegate` call that
    made one names it in its result (`_meta.subagent_session_id`): `event` links them by `spawns`."""
    if not goose_db.is_row(str(main)):
        return []
    try:
        found = goose_db.children(str(main), CHILD_DEPTH)
        seen = {cid for cid, _, _ in found}
        # Goose 1.x's subagent tools named no parent: the sessions their results name as tasks
        found += [c for c in goose_db.task_sessions(str(main)) if c[0] not in seen]
        return [(cid, Path(p), meta) for cid, p, meta in found]
    except OSError:  # the database cannot be read now: the session reads without its sub-agents
        return []


def companion_folders(main: Path) -> list[Path]:
    """A new sub-agent session is a write to the database (or its write-ahead log)."""
    if goose_db.is_row(str(main)):
        return [main.parent, Path(f"{main.parent}-wal")]
    return []


def thread_label(agent: str, meta: dict) -> str:
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{name} · session {agent}" if isinstance(name, str) and name else f"session {agent}"


def session_info(main: Path) -> dict:
    """For a sub-agent's session (a row naming its `parent_session_id`, or a Goose 1.x task's
    session named by its parent's subagent result): its parent, the parent's row path, and its
    thread in the parent's index — the list shows it as a sub-agent of that session."""
    if not goose_db.is_row(str(main)):
        return {}
    try:
        parent = goose_db.parent(str(main)) or goose_db.task_parent(str(main))
    except OSError:
        return {}
    if parent is None:
        return {}
    return {"parent_session": parent, "parent_path": str(main.parent / parent),
            "thread": keys.thread_key(main.name)}


def named_title(ev: Event) -> tuple[int, str] | None:
    """(rank, title) of the metadata line: the description Goose wrote for the session."""
    text = ev.meta.get("description")
    return (1, text.strip()) if isinstance(text, str) and text.strip() else None


def title_of(ev: Event) -> str | None:
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return prompt_title(ev.text())
    return None
