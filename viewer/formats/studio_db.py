"""AgentScope Studio's SQLite database (`database.sqlite`): its runs are sessions, read without a lock.

An AgentScope program run with `agentscope.init(studio_url=…)` registers a run with AgentScope
Studio and pushes every message it prints there; Studio keeps them in one SQLite database,
`~/AgentScope-Studio/database.sqlite` on Linux (`~/Library/Application Support/AgentScope-Studio/`
on macOS, `%APPDATA%\\AgentScope-Studio\\` on Windows; agentscope-studio packages/shared/src/config/
server.ts). TypeORM makes its tables from Studio's entities (`synchronize`), each named after its
class (packages/server/src/models, migrations/):

    run_table      id, project, name, timestamp (AgentScope's zoneless local time), run_dir, pid,
                   status (running / pending / done / unknown)
    message_table  id (the Msg's id), run_id, replyId (since the reply table; nullable before),
                   msg (JSON: {name, role, content, metadata, timestamp}), speech (JSON, later)
    reply_table    replyId, replyRole, replyName, run_id, createdAt, finishedAt (optional here)
    input_request_table  requestId, agentId, agentName, structuredInput (JSON), run_id: the input
                   an agent waits for (optional)
    span_table     OpenTelemetry spans (optional): spanId, parentSpanId, name, startTimeUnixNano,
                   attributes (JSON, gen_ai.* keys, flat since 1750000000000, nested before),
                   operationName, model, inputTokens, outputTokens, and the run as `runId` (the
                   entity) or `conversationId` (the 1740000000000 migration's table)

A run is named by a path below the database, `<folder>/database.sqlite/<run id>` (rowdb.py; its
key `database.sqlite~<id>`). A message pushed again while it streams replaces its row (same id,
same rowid): a run's messages are read in rowid order, the order Studio first received them.

TypeORM opens the database in rollback-journal mode (no `enableWAL`), where even a reader's shared
lock makes a commit of Studio's fail (it sets no busy timeout). So a database without a `-wal`
file is read `immutable` (no lock at all) and the read is kept only when the database did not
change under it and no `-journal` file (a write in progress) was there; else it is read again,
a few times (`_read`). One in WAL mode is read as rowdb.py reads any (a WAL reader blocks nobody).

Hooks, as goose_db.py's: `row_bytes(path)` (the run row as JSON), `document(path)` (`{"run": row,
"messages": [Msg…], "spans": [span…], "requests": [input request…]}`; a message whose JSON does not
parse is a BadLine in its place), `document_on(path, doc)` (the rows written since `doc` was read:
rowfold.py), `identity(path)`, `list_sessions(db)` (a `database.sqlite` without Studio's tables holds no
sessions: many programs name their database so), `shadowed` (nothing: Studio imports no files).
"""

from __future__ import annotations

import os
import time
from typing import Any

import orjson

from .. import reader, timestamps
from ..reader import BadLine
from . import rowdb

DB_FILE = "database.sqlite"
ID = rowdb.ID
Unreadable = rowdb.Unreadable
_NEEDED = {"run_table": {"id", "project", "name", "timestamp", "status"},
           "message_table": {"id", "run_id", "msg"}}
_OPTIONAL = ("reply_table", "span_table", "input_request_table")
_SPAN_COLUMNS = ("spanId", "parentSpanId", "name", "startTimeUnixNano", "attributes", "operationName",
                 "model", "inputTokens", "outputTokens")
RECENT_ROWS = 64  # the last message rows whose runs a look reads again (a message streams in its row)
_ATTEMPTS = 5  # reads of a database being written before the last one is kept as it is
_PAUSE = 0.02  # seconds between them (a commit of Studio's takes milliseconds)


def is_store(name: str) -> bool:
    return name == DB_FILE


store_of, split, _, is_row = rowdb.paths(is_store)
row_path = rowdb.row_path


class _Reader(rowdb.Reader):
    PROGRAM = "AgentScope Studio"
    NEEDED = _NEEDED
    OPTIONAL = _OPTIONAL

    def _begin(self, real: str, immutable: bool) -> None:
        # without a -wal file: never a lock (see the module's docstring); `_read` checks the file
        # did not change under the read
        super()._begin(real, immutable or not os.path.exists(real + "-wal"))


def _mark(db: str) -> tuple:
    """What a write of Studio's changes: the database, its -wal, and whether a -journal is there."""
    return rowdb.state(db), os.path.exists(db + "-journal")


def _read(db: str, fn):
    """`fn(reader)` over a snapshot of the database: read again when it changed during the read
    or a write was in progress; the last read is kept after `_ATTEMPTS` (a `-journal` left by a
    crashed writer stays until Studio opens the database again)."""
    for attempt in range(_ATTEMPTS):
        before = _mark(db)
        try:
            with _Reader(db) as r:
                out = fn(r)
        except Unreadable:
            if attempt == _ATTEMPTS - 1 or not before[1] and _mark(db) == before:
                raise  # (not a torn read: the database is what it is)
        else:
            if not before[1] and _mark(db) == before or attempt == _ATTEMPTS - 1:
                return out
        time.sleep(_PAUSE)
    raise AssertionError("unreachable")


def _gone(path: str) -> FileNotFoundError:
    return FileNotFoundError(2, "this run is no longer in AgentScope Studio's database", path)


def _run_row(r: _Reader, run_id: str) -> dict | None:
    cols = r.check()["run_table"]
    rows = r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)} FROM run_table WHERE id = ?", (run_id,))
    return dict(zip(cols, rows[0])) if rows else None


def _row_bytes(row: dict) -> bytes:
    return orjson.dumps(row, option=orjson.OPT_INDENT_2, default=str)


def row_bytes(path: str) -> bytes:
    """What opening a run's path reads: its run row as JSON."""
    db, run_id = split(os.fspath(path)) or (None, None)
    if db is None:
        raise FileNotFoundError(2, "No such file", path)
    row = _read(db, lambda r: _run_row(r, run_id))
    if row is None:
        raise _gone(path)
    return _row_bytes(row)


def _seconds(value: Any) -> float:
    """A time Studio keeps (AgentScope's zoneless local time, read as UTC as the pages read it)
    as epoch seconds; 0 for what is not one."""
    if isinstance(value, str) and value:
        t = timestamps.to_epoch(value)
        if t is not None:
            return t
    return 0.0


def identity(path: str) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) standing for a run, or None when `path` is not one: the newest of
    its start and its messages' times, moved on by less than a millisecond by a digest of its
    messages' count, newest rowid and summed length, its status, its spans' count and its open
    input requests (a message added or streamed further, the run finished, a model call traced,
    an agent asking for input all read as a change)."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, run_id = found
    return rowdb.remembered(("studio identity", db, run_id), db, lambda: rowdb.looked(
        ("studio identity", db), db, run_id, _read, _changes, _identity_in))


def _identity_in(r: _Reader, run_id: str) -> tuple[int, int, int]:
    row = _run_row(r, run_id)
    if row is None:
        raise _gone(row_path(r.db, run_id))
    count, last, size, newest = r.all(
        f"SELECT count(*), max(rowid), {_lengths(r)}, max(CASE WHEN json_valid(msg) THEN "
        "json_extract(msg, '$.timestamp') END) "
        "FROM message_table WHERE run_id = ?", (run_id,))[0]
    requests = tuple(q["requestId"] for q in _requests(r, run_id))
    when = max(_seconds(row.get("timestamp")), _seconds(newest))
    digest = hash((count, last, size, _spans_count(r, run_id), requests, row.get("status"))) % 1_000_000
    return len(_row_bytes(row)), int(when * 1000) * 1_000_000 + digest, os.stat(r.db).st_ino


def _changes(r: _Reader, marks: dict | None) -> tuple[set[str], dict] | None:
    """(the runs whose rows changed since `marks`, the marks of now; every run with no marks;
    None when rows went back): a run row that is new, went or reads otherwise, messages and
    spans past the newest rowids read, a run with fewer messages (by count), input requests
    asked or answered — and, as AgentScope pushes a message again in its row with each chunk it
    streams, a run still going (`running`, `pending`) and the runs of the last RECENT_ROWS
    messages. A message older than those rewritten in place is seen by the next look at every
    run (rowdb.looked)."""
    cols = r.check()["run_table"]
    rows = {}
    live = set()
    for values in r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)} FROM run_table"):
        run = dict(zip(cols, values))
        rows[run.get("id")] = hash(values)
        if run.get("status") in ("running", "pending"):
            live.add(run.get("id"))
    top, total = r.all("SELECT max(rowid), count(*) FROM message_table")[0]
    col = _span_run_column(r)
    spans = (r.all("SELECT max(rowid) FROM span_table")[0][0] or 0) if col else 0
    asked = {}
    if {"run_id", "requestId"} <= set(r.check().get("input_request_table") or ()):
        for run_id, req in r.all('SELECT run_id, "requestId" FROM input_request_table'):
            asked.setdefault(run_id, set()).add(req)
    top = top or 0
    if marks is None or top < marks["top"] or spans < marks["spans"]:
        counts = dict(r.all("SELECT run_id, count(*) FROM message_table GROUP BY run_id"))
        now = {"rows": rows, "top": top, "spans": spans, "counts": counts, "asked": asked}
        return (set(rows), now) if marks is None else None
    before = marks["rows"]
    changed = live | {s for s, h in rows.items() if before.get(s) != h} | (set(before) - set(rows))
    changed |= {s for s in set(asked) | set(marks["asked"]) if asked.get(s) != marks["asked"].get(s)}
    counts = dict(marks["counts"])
    for s, n in r.all("SELECT run_id, count(*) FROM message_table WHERE rowid > ? GROUP BY run_id", (marks["top"],)):
        changed.add(s)
        counts[s] = counts.get(s, 0) + n
    # (a message pushed again as it streams is saved in its row: one of the last Studio received)
    changed |= {s for (s,) in r.all("SELECT DISTINCT run_id FROM message_table WHERE rowid > ?",
                                    (marks["top"] - RECENT_ROWS,))}
    if total != sum(counts.values()):  # (rows went: which runs')
        now_counts = dict(r.all("SELECT run_id, count(*) FROM message_table GROUP BY run_id"))
        changed |= {s for s in set(counts) | set(now_counts) if counts.get(s) != now_counts.get(s)}
        counts = now_counts
    if spans > marks["spans"]:
        changed |= {s for (s,) in r.all(f"SELECT DISTINCT {rowdb.quoted(col)} FROM span_table WHERE rowid > ?",
                                        (marks["spans"],))}
    now = {"rows": rows, "top": top, "spans": spans, "counts": counts, "asked": asked}
    return {s for s in changed if isinstance(s, str)}, now


def _span_run_column(r: _Reader) -> str | None:
    cols = set(r.check()["span_table"])
    if not cols.issuperset(_SPAN_COLUMNS):
        return None  # no spans, or the layout before the 1740000000000 migration
    return next((c for c in ("runId", "conversationId") if c in cols), None)


def _spans_count(r: _Reader, run_id: str) -> int:
    col = _span_run_column(r)
    if col is None:
        return 0
    return r.all(f"SELECT count(*) FROM span_table WHERE {rowdb.quoted(col)} = ?", (run_id,))[0][0]


def list_sessions(db: str) -> list[tuple[str, str, float, int]]:
    """(row path, run id, last write as epoch seconds, size) of every run in a database; none for
    a `database.sqlite` without Studio's run table; Unreadable (an OSError) when it is Studio's
    and cannot be read."""
    return rowdb.remembered(("studio list", db), db, lambda: _list(db))


def _list(db: str) -> list[tuple[str, str, float, int]]:
    def read(r: _Reader):
        if not r.columns("run_table"):
            return None  # another program's database.sqlite
        cols = r.check()["run_table"]
        return cols, r.all(f"SELECT {', '.join('r.' + rowdb.quoted(c) for c in cols)}, (SELECT "
                           "max(CASE WHEN json_valid(m.msg) THEN json_extract(m.msg, '$.timestamp') END) "
                           "FROM message_table m WHERE "
                           "m.run_id = r.id) FROM run_table r")
    found = _read(db, read)
    if found is None:
        return []
    cols, rows = found
    out = []
    for values in rows:
        row = dict(zip(cols, values[:-1]))
        run_id = row.get("id")
        if not isinstance(run_id, str) or not ID.fullmatch(run_id):
            continue  # (an id no path can name)
        when = max(_seconds(row.get("timestamp")), _seconds(values[-1]))
        out.append((row_path(db, run_id), run_id, when, len(_row_bytes(row))))
    return out


def document(path: str) -> dict | None:
    """A run as `{"run": row, "messages": [Msg…], "spans": [span…], "requests": [input request…]}`,
    or None when `path` is not one. Each message is AgentScope's Msg as `Msg.to_dict()` wrote it
    (`id` from its column, the reply it belongs to as `replyId`, its `speech` where Studio kept
    one); its spans are what was traced for the run (`_spans`); its requests the input its agents
    wait for (`input_request_table`). `_read` marks the rows read, for `document_on`. Raises
    OSError when the run cannot be read; when only its messages cannot (a damaged page), they are
    one BadLine saying why."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, run_id = found

    def read(r: _Reader):
        row = _run_row(r, run_id)
        if row is None:
            raise _gone(path)
        cols = _message_columns(r)
        marks: dict | None = {}
        try:
            msgs = r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)} FROM message_table "
                         "WHERE run_id = ? ORDER BY rowid", (run_id,))
            unread = None
            last = max((m[0] for m in msgs), default=0)
            marks["messages"], marks["before"] = _marks(r, run_id, last), _marks(r, run_id, last - 1)
        except Unreadable as e:
            msgs, unread, marks = [], BadLine(f"this run's messages: {e}"), None
        try:
            spans = _span_rows(r, run_id, 0)
        except Unreadable:
            spans, marks = [], None
        if marks is not None:
            marks["spans"] = max((s[0] for s in spans), default=0)
        return row, [dict(zip(cols, m)) for m in msgs], unread, spans, _requests(r, run_id), \
            r.stale_wal, marks
    row, msgs, unread, spans, requests, stale, marks = _read(db, read)
    messages: list = [unread] if unread else []
    messages += [_message(m) for m in msgs]
    doc: dict = {"run": row, "messages": messages, "spans": _spans(spans), "requests": requests}
    if stale:
        doc["stale_wal"] = stale
    elif marks is not None:
        doc["_read"] = {**marks, "span_rows": spans}
    return doc


def document_on(path: str, doc: dict) -> dict | None:
    """`doc` (a run as `document` read it) with the rows written since: the run row and its input
    requests as they are now, the messages and spans past those read, and the last message read
    again when it was pushed again since (AgentScope pushes a message on each chunk it streams).
    None when a message before the last changed or went (the run is read whole again), or the
    database cannot be read now."""
    found = rowdb.located(path, is_store)
    marks = doc.get("_read")
    if found is None or not isinstance(marks, dict):
        return None
    db, run_id = found

    def read(r: _Reader):
        row = _run_row(r, run_id)
        if row is None:
            raise _gone(path)
        last = marks["messages"][0]
        cols = _message_columns(r)
        again = None  # the last message read, pushed again since (it streams on)
        if _marks(r, run_id, last) != marks["messages"]:
            if not last or _marks(r, run_id, last - 1) != marks.get("before"):
                return None  # (a message before the last changed or went)
            again = r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)} FROM message_table "
                          "WHERE run_id = ? AND rowid = ?", (run_id, last))
            if len(again) != 1:
                return None
            again = dict(zip(cols, again[0]))
        msgs = r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)} FROM message_table "
                     "WHERE run_id = ? AND rowid > ? ORDER BY rowid", (run_id, last))
        now_last = max((m[0] for m in msgs), default=last)
        new_marks = [_marks(r, run_id, now_last), _marks(r, run_id, now_last - 1)]
        spans = _span_rows(r, run_id, marks["spans"])
        return row, again, [dict(zip(cols, m)) for m in msgs], new_marks, spans, _requests(r, run_id), \
            r.stale_wal
    try:
        got = _read(db, read)
    except FileNotFoundError:
        raise
    except OSError:
        return None
    if got is None or got[-1]:
        return None
    row, again, msgs, new_marks, spans, requests, _ = got
    span_rows = marks["span_rows"] + spans
    messages = doc["messages"]
    if again is not None:  # (in its place: the message the last record was read from)
        messages = messages[:-1] + [reader.shallow(_message(again))]
    return {"run": row, "messages": messages + [reader.shallow(_message(m)) for m in msgs],
            "spans": _spans(span_rows) if spans else doc["spans"], "requests": requests,
            "_read": {"messages": new_marks[0], "before": new_marks[1],
                      "spans": max((s[0] for s in spans), default=marks["spans"]), "span_rows": span_rows}}


def _message_columns(r: _Reader) -> list[str]:
    have = set(r.check()["message_table"])
    return ["rowid", "id", "msg"] + [c for c in ("replyId", "speech") if c in have]


def _marks(r: _Reader, run_id: str, last: int) -> list:
    """[last rowid, count, summed length] of a run's messages up to rowid `last`: what a message
    pushed again (or removed) among them changes."""
    count, size = r.all(f"SELECT count(*), {_lengths(r)} FROM message_table WHERE run_id = ? "
                        "AND rowid <= ?", (run_id, last))[0]
    return [last, count, size]


def _lengths(r: _Reader) -> str:
    """SQL summing the lengths of what a message row holds (its Msg, and its speech since Studio
    keeps one)."""
    speech = " + total(length(speech))" if "speech" in r.check()["message_table"] else ""
    return "total(length(msg))" + speech


def _requests(r: _Reader, run_id: str) -> list[dict]:
    """The input a run's agents wait for (`input_request_table`: Studio keeps a request while it is
    open), each `{requestId, agentId, agentName, structuredInput}`; [] without the table."""
    cols = set(r.check().get("input_request_table") or ())
    wanted = ("requestId", "agentId", "agentName", "structuredInput")
    if "run_id" not in cols or "requestId" not in cols:
        return []
    picked = [c if c in cols else "NULL" for c in wanted]
    try:
        rows = r.all(f"SELECT {', '.join(rowdb.quoted(c) if c != 'NULL' else c for c in picked)} "
                     "FROM input_request_table WHERE run_id = ? ORDER BY rowid", (run_id,))
    except Unreadable:
        return []
    out = []
    for values in rows:
        req = dict(zip(wanted, values))
        if isinstance(req["structuredInput"], (str, bytes)):
            parsed = reader.decode(req["structuredInput"])
            req["structuredInput"] = req["structuredInput"] if isinstance(parsed, BadLine) else parsed
        out.append(req)
    return out


def _message(m: dict) -> Any:
    """A message row as the Msg AgentScope pushed: `{id, name, role, content, metadata, timestamp}`."""
    msg = reader.decode(m["msg"]) if isinstance(m["msg"], (str, bytes)) else None
    if not isinstance(msg, dict):
        why = msg.reason if isinstance(msg, BadLine) else "not a JSON object"
        return BadLine(f"message {m['id']}: its msg is {why}")
    out = {"id": m["id"], **{k: v for k, v in msg.items() if k != "id"}}
    if m.get("replyId") not in (None, ""):
        out["replyId"] = m["replyId"]
    speech = m.get("speech")
    if isinstance(speech, (str, bytes)) and speech:
        parsed = reader.decode(speech)
        if not isinstance(parsed, BadLine) and parsed not in (None, [], {}):
            out["speech"] = parsed  # (the audio Studio plays for it, TTS)
    return out


def _attr(attrs: Any, key: str) -> Any:
    """A span attribute, flat (`{"gen_ai.agent.name": …}`) or nested as before the flattening."""
    if not isinstance(attrs, dict):
        return None
    if key in attrs:
        return attrs[key]
    node: Any = attrs
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _span_rows(r: _Reader, run_id: str, after: int) -> list[tuple]:
    """The run's span rows past rowid `after`, in the order Studio stored them: (rowid, spanId,
    parentSpanId, operationName, model, inputTokens, outputTokens, startTimeUnixNano, attributes,
    name, endTimeUnixNano, status, events): `status` and `events` are the span's OpenTelemetry
    status `{code: 0 unset | 1 ok | 2 error, message}` and events `[{name, time, attributes}]` as
    Studio saves them (agentscope-ai/agentscope-studio packages/server/src/models/Trace.ts
    SpanTable, dao/Trace.ts saveSpans)."""
    col = _span_run_column(r)
    if col is None:
        return []
    have = r.check()["span_table"]
    end, status, events = (c if c in have else "NULL" for c in ("endTimeUnixNano", "status", "events"))
    return [tuple(row) for row in r.all(
        f"SELECT rowid, spanId, parentSpanId, operationName, model, inputTokens, outputTokens, "
        f"startTimeUnixNano, attributes, name, {end}, {status}, {events} FROM span_table "
        f"WHERE {rowdb.quoted(col)} = ? AND rowid > ? ORDER BY rowid", (run_id, after))]


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _spans(rows: list[tuple]) -> list[dict]:
    """What was traced for the run, in the order it started: each agent's reply (`invoke_agent`:
    `{kind: "reply", span, agent, start, end}`), each model call (`chat`: `{kind: "call", span,
    model, input, output, agent, reply, start, end}`, `reply` the `invoke_agent` span above it,
    `agent` its agent's name; None when there is none), each tool run (`execute_tool`: `{kind:
    "tool", span, tool, call_id, agent, reply, start, end}`, `call_id` the tool call's id as the
    span names it, `gen_ai.tool.call.id`) and any other span (`{kind: "span", op, name, agent,
    reply, start, end}`). A span that failed also has `error`: what its status message or its
    `exception` event says (`_failure`)."""
    by_id = {}
    failed: dict[str, str] = {}
    for _, sid, parent, op, model, inp, out, start, attrs, name, end, *more in rows:
        if not isinstance(sid, str):
            continue
        parsed = reader.decode(attrs) if isinstance(attrs, (str, bytes)) else None
        by_id[sid] = (parent, op, model, inp, out, _nanos(start), parsed if isinstance(parsed, dict) else {},
                      name, _nanos(end))
        if (why := _failure(*(more + [None, None])[:2])) is not None:
            failed[sid] = why

    def agent_of(sid: str) -> str | None:
        attrs, name = by_id[sid][6], by_id[sid][7]
        agent = _attr(attrs, "gen_ai.agent.name")
        if not isinstance(agent, str) and isinstance(name, str) and name.startswith("invoke_agent "):
            agent = name[len("invoke_agent "):]
        return agent if isinstance(agent, str) else None

    def reply_of(sid: str) -> str | None:
        seen, up = {sid}, by_id[sid][0]
        while up in by_id and up not in seen:  # (a loop in the parents ends)
            seen.add(up)
            if by_id[up][1] == "invoke_agent":
                return up
            up = by_id[up][0]
        return None

    out_spans = []
    for sid, (parent, op, model, inp, out, began, attrs, name, ended) in by_id.items():
        times = {"start": began, "end": ended}
        if op == "invoke_agent":
            out_spans.append({"kind": "reply", "span": sid, "agent": agent_of(sid), **times})
            continue
        reply = reply_of(sid)
        agent = agent_of(reply) if reply else None
        if op == "chat":
            out_spans.append({"kind": "call", "span": sid, "model": model if isinstance(model, str) else None,
                              "input": inp if isinstance(inp, int) else None,
                              "output": out if isinstance(out, int) else None,
                              "agent": agent, "reply": reply, **times})
        elif op == "execute_tool":
            tool, call_id = _attr(attrs, "gen_ai.tool.name"), _attr(attrs, "gen_ai.tool.call.id")
            if not isinstance(tool, str) and isinstance(name, str) and name.startswith("execute_tool "):
                tool = name[len("execute_tool "):]
            out_spans.append({"kind": "tool", "span": sid, "tool": tool if isinstance(tool, str) else None,
                              "call_id": call_id if isinstance(call_id, str) else None,
                              "agent": agent, "reply": reply, **times})
        else:
            out_spans.append({"kind": "span", "span": sid, "op": op if isinstance(op, str) else None,
                              "name": name if isinstance(name, str) else None,
                              "agent": agent, "reply": reply, **times})
    for span in out_spans:
        if span["span"] in failed:
            span["error"] = failed[span["span"]]
    out_spans.sort(key=lambda c: (c["start"], c["kind"] != "reply", c["span"]))
    return out_spans


ERROR_CODES = (2, "2", "ERROR", "STATUS_CODE_ERROR")  # OpenTelemetry's SpanStatusCode.ERROR, as written


def _failure(status: Any, events: Any) -> str | None:
    """What a span says of its failure, or None when it did not fail: the message of its
    `exception` event (`exception.type: exception.message`, OpenTelemetry's semantic conventions,
    flat or nested as Studio unflattened it), else its status message when its status code is
    ERROR (an error with no words: "error")."""
    status = reader.decode(status) if isinstance(status, (str, bytes)) else status
    events = reader.decode(events) if isinstance(events, (str, bytes)) else events
    for e in events if isinstance(events, list) else ():
        if isinstance(e, dict) and e.get("name") == "exception":
            attrs = e.get("attributes")
            kind, said = _attr(attrs, "exception.type"), _attr(attrs, "exception.message")
            words = ": ".join(str(x) for x in (kind, said) if isinstance(x, str) and x)
            return words or "exception"
    if isinstance(status, dict) and status.get("code") in ERROR_CODES:
        said = status.get("message")
        return said if isinstance(said, str) and said else "error"
    return None


def shadowed(paths: list[str]) -> dict[str, str]:
    """Studio imports no files: nothing discovery found is also one of its runs."""
    return {}
