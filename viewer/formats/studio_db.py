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
"messages": [Msg…], "spans": [span…]}`; a message whose JSON does not parse is a BadLine in its
place), `identity(path)`, `list_sessions(db)` (a `database.sqlite` without Studio's tables holds no
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
_OPTIONAL = ("reply_table", "span_table")
_SPAN_COLUMNS = ("spanId", "parentSpanId", "name", "startTimeUnixNano", "attributes", "operationName",
                 "model", "inputTokens", "outputTokens")
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
    messages' count, newest rowid and summed length, its status and its spans' count (a message
    added or streamed further, the run finished, a model call traced all read as a change)."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, run_id = found
    return rowdb.remembered(("studio identity", db, run_id), db, lambda: _identity(db, run_id, path))


def _identity(db: str, run_id: str, path: str) -> tuple[int, int, int]:
    def read(r: _Reader):
        row = _run_row(r, run_id)
        if row is None:
            raise _gone(path)
        count, last, size, newest = r.all(
            "SELECT count(*), max(rowid), total(length(msg)), max(CASE WHEN json_valid(msg) THEN "
            "json_extract(msg, '$.timestamp') END) "
            "FROM message_table WHERE run_id = ?", (run_id,))[0]
        return row, (count, last, size, _spans_count(r, run_id)), newest
    row, counts, newest = _read(db, read)
    when = max(_seconds(row.get("timestamp")), _seconds(newest))
    digest = hash((*counts, row.get("status"))) % 1_000_000
    return len(_row_bytes(row)), int(when * 1000) * 1_000_000 + digest, os.stat(db).st_ino


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
    """A run as `{"run": row, "messages": [Msg…], "spans": [span…]}`, or None when `path` is not
    one. Each message is AgentScope's Msg as `Msg.to_dict()` wrote it (`id` from its column, the
    reply it belongs to as `replyId`); its spans are the agents' replies and model calls traced
    for the run (`_spans`). Raises OSError when the run cannot be
    read; when only its messages cannot (a damaged page), they are one BadLine saying why."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, run_id = found

    def read(r: _Reader):
        row = _run_row(r, run_id)
        if row is None:
            raise _gone(path)
        have = set(r.check()["message_table"])
        cols = ["rowid", "id", "msg"] + [c for c in ("replyId",) if c in have]
        try:
            msgs = r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)} FROM message_table "
                         "WHERE run_id = ? ORDER BY rowid", (run_id,))
            unread = None
        except Unreadable as e:
            msgs, unread = [], BadLine(f"this run's messages: {e}")
        try:
            spans = _spans(r, run_id)
        except Unreadable:
            spans = []
        return row, [dict(zip(cols, m)) for m in msgs], unread, spans, r.stale_wal
    row, msgs, unread, spans, stale = _read(db, read)
    messages: list = [unread] if unread else []
    messages += [_message(m) for m in msgs]
    doc: dict = {"run": row, "messages": messages, "spans": spans}
    if stale:
        doc["stale_wal"] = stale
    return doc


def _message(m: dict) -> Any:
    """A message row as the Msg AgentScope pushed: `{id, name, role, content, metadata, timestamp}`."""
    msg = reader.decode(m["msg"]) if isinstance(m["msg"], (str, bytes)) else None
    if not isinstance(msg, dict):
        why = msg.reason if isinstance(msg, BadLine) else "not a JSON object"
        return BadLine(f"message {m['id']}: its msg is {why}")
    out = {"id": m["id"], **{k: v for k, v in msg.items() if k != "id"}}
    if m.get("replyId") not in (None, ""):
        out["replyId"] = m["replyId"]
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


def _spans(r: _Reader, run_id: str) -> list[dict]:
    """The run's traced spans that say who called which model, in the order they started: each
    agent's reply (`invoke_agent`: `{kind: "reply", span, agent, start}`) and each model call
    (`chat`: `{kind: "call", span, model, input, output, agent, reply, start}`, `reply` the
    `invoke_agent` span above it, `agent` its agent's name; None when there is none)."""
    col = _span_run_column(r)
    if col is None:
        return []
    rows = r.all(f"SELECT spanId, parentSpanId, operationName, model, inputTokens, outputTokens, "
                 f"startTimeUnixNano, attributes, name FROM span_table WHERE {rowdb.quoted(col)} = ?",
                 (run_id,))
    by_id = {}
    for sid, parent, op, model, inp, out, start, attrs, name in rows:
        if not isinstance(sid, str):
            continue
        parsed = reader.decode(attrs) if isinstance(attrs, (str, bytes)) else None
        try:
            began = int(start)
        except (TypeError, ValueError):
            began = 0
        by_id[sid] = (parent, op, model, inp, out, began, parsed if isinstance(parsed, dict) else {}, name)

    def agent_of(sid: str) -> str | None:
        _, _, _, _, _, _, attrs, name = by_id[sid]
        agent = _attr(attrs, "gen_ai.agent.name")
        if not isinstance(agent, str) and isinstance(name, str) and name.startswith("invoke_agent "):
            agent = name[len("invoke_agent "):]
        return agent if isinstance(agent, str) else None

    out_spans = []
    for sid, (parent, op, model, inp, out, began, attrs, name) in by_id.items():
        if op == "invoke_agent":
            out_spans.append({"kind": "reply", "span": sid, "agent": agent_of(sid), "start": began})
        elif op == "chat":
            reply, seen, up = None, {sid}, parent
            while up in by_id and up not in seen:  # (a loop in the parents ends)
                seen.add(up)
                if by_id[up][1] == "invoke_agent":
                    reply = up
                    break
                up = by_id[up][0]
            out_spans.append({"kind": "call", "span": sid, "model": model if isinstance(model, str) else None,
                              "input": inp if isinstance(inp, int) else None,
                              "output": out if isinstance(out, int) else None,
                              "agent": agent_of(reply) if reply else None, "reply": reply, "start": began})
    out_spans.sort(key=lambda c: (c["start"], c["kind"] != "reply", c["span"]))
    return out_spans


def shadowed(paths: list[str]) -> dict[str, str]:
    """Studio imports no files: nothing discovery found is also one of its runs."""
    return {}
