"""Goose's SQLite store (`sessions.db`): sessions that are rows, read as its JSONL files are.

Current Goose keeps every session in `~/.local/share/goose/sessions/sessions.db` (block/goose
crates/goose/src/session/session_manager.rs, migrations.rs; sqlx opens it in WAL mode) beside the
JSONL files of older versions, which it imported once when it made the database (a session's id is
its file's name). Its tables:

    sessions  id, name (description before schema 4), user_set_name, session_type (user,
              scheduled, sub_agent, hidden, acp…), working_dir, created_at, updated_at,
              extension_data (JSON), the token counts (total / input / output and accumulated_*),
              schedule_id, recipe_json, user_recipe_values_json, and later provider_name,
              model_config_json, goose_mode, thread_id, archived_at, project_id, accumulated_cost,
              the cached token counts (schema 14), parent_session_id (15), parent_delegation (17)
    messages  id (autoincrement), session_id, role, content_json (the Message's content list),
              created_timestamp (unix seconds), timestamp, tokens, metadata_json (userVisible /
              agentVisible, schema 3+), message_id (schema 7+)
    usage_ledger  (schema 15+) one row per model call, written with the session's totals
              (`record_usage_metrics`): created_timestamp (unix seconds, when Goose recorded it),
              model, input_tokens (cached input included), output_tokens, total_tokens,
              cache_read_tokens, cache_write_tokens, cost, cost_source (provider_reported /
              estimated; `carried_forward` for the one row standing for what the session used
              before the ledger, model NULL), is_compaction; it names no message

A session is named by a path below the database, `<folder>/sessions.db/<session id>` (rowdb.py;
its key `sessions.db~<id>`), and reached through the hooks files and the store already use:

* `row_bytes(path)`: the session row as JSON (what `files.open_file` reads: detection, the raw view
  of the session, its size);
* `document(path)`: `{"session": row, "messages": [Message…], "usage": [ledger row…]}`, each
  message as Goose's JSONL file holds it (`{id, role, created, content, metadata}`), read by
  `goose.folder_document` so the adapter reads a row-session with the JSONL file's rules; a row
  whose JSON does not parse is a BadLine in its place; `usage` only where the ledger is;
* `document_on(path, doc)`: `doc` with the rows Goose wrote since it was read (the messages and
  ledger rows past those read, the session row as it is now), or None when a row read before
  changed or went (rowfold.py reads the session on with it);
* `identity(path)`: (size of `row_bytes`, the session's newest write moved on by a digest of its
  messages' count, last id and summed metadata length, the database's inode), remembered while
  the database and its `-wal` file are unchanged;
* `list_sessions(db)` for discovery; `shadowed(paths)`: the JSONL files Goose imported into the
  database beside them (listed once, from the database);
* `children(path, depth)` / `parent(path)`: the sub-agent sessions naming a session as their
  `parent_session_id` (schema 15+), and a sub-agent's parent; `task_sessions(path)` /
  `task_parent(path)`: the same for Goose 1.x's sub-agents, named only by the subagent tool's
  result (the task ids it ran).

Read-only as rowdb.py reads any such database: never a `-wal` or `-shm` file made.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from .. import reader, timestamps
from ..reader import BadLine
from . import rowdb

DB_FILE = "sessions.db"
ID = rowdb.ID
Unreadable = rowdb.Unreadable
# the columns the queries below need; the rest are read as they are there
_NEEDED = {"sessions": {"id", "working_dir"},
           "messages": {"id", "session_id", "role", "content_json", "created_timestamp"}}
_JSON_COLUMNS = {"extension_data", "recipe_json", "user_recipe_values_json", "model_config_json"}


def is_store(name: str) -> bool:
    return name == DB_FILE


store_of, split, _, is_row = rowdb.paths(is_store)
row_path = rowdb.row_path


class _Reader(rowdb.Reader):
    PROGRAM = "Goose"
    NEEDED = _NEEDED
    OPTIONAL = ("usage_ledger",)


LEDGER = "usage_ledger"
# the ledger's columns the adapter reads (goose._ledger), in this order
LEDGER_COLUMNS = ("id", "created_timestamp", "model", "input_tokens", "output_tokens", "total_tokens",
                  "cache_read_tokens", "cache_write_tokens", "cost", "cost_source", "is_compaction")


def _gone(path: str) -> FileNotFoundError:
    return FileNotFoundError(2, "this session is no longer in Goose's database", path)


def _session_row(r: _Reader, sid: str) -> dict | None:
    cols = r.check()["sessions"]
    rows = r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)} FROM sessions WHERE id = ?", (sid,))
    return _info(dict(zip(cols, rows[0]))) if rows else None


def _info(row: dict) -> dict:
    """A session row with its JSON columns parsed (their text as it is where it does not parse)."""
    out = {}
    for col, value in row.items():
        if col in _JSON_COLUMNS and isinstance(value, (str, bytes)):
            parsed = reader.decode(value)
            value = value if isinstance(parsed, BadLine) else parsed
        out[col] = value
    return out


def _info_bytes(info: dict) -> bytes:
    return orjson.dumps(info, option=orjson.OPT_INDENT_2, default=str)


def row_bytes(path: str) -> bytes:
    """What opening a row-session's path reads: its session row as JSON."""
    db, sid = split(os.fspath(path)) or (None, None)
    if db is None:
        raise FileNotFoundError(2, "No such file", path)
    with _Reader(db) as r:
        row = _session_row(r, sid)
    if row is None:
        raise _gone(path)
    return _info_bytes(row)


def _seconds(value: Any) -> float:
    """A time column as epoch seconds (0 for what is not one: a damaged row)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e11:
        return float(value)
    if isinstance(value, str) and value:
        st = timestamps.parse(value)
        if st.utc is not None:
            return st.utc.timestamp()
    return 0.0


def identity(path: str) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) standing for a row-session as a whole, or None when `path` is not
    one: the newest of its `updated_at` and its messages' `created_timestamp`, moved on by less
    than a millisecond by a digest of its messages' count, newest row id and summed metadata
    length (a message added, a conversation replaced after a compaction, a message's visibility
    changed all read as a change). Raises OSError when it cannot be read."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, sid = found
    return rowdb.remembered(("goose identity", db, sid), db, lambda: rowdb.looked(
        ("goose identity", db), db, sid, _snapshot, _changes, _identity_in))


_snapshot = rowdb.snapshot(_Reader)


def _identity_in(r: _Reader, sid: str) -> tuple[int, int, int]:
    row = _session_row(r, sid)
    if row is None:
        raise _gone(row_path(r.db, sid))
    meta = "total(length(metadata_json))" if "metadata_json" in r.check()["messages"] else "0"
    count, last, newest, size = r.all(f"SELECT count(*), max(id), max(created_timestamp), {meta} "
                                      "FROM messages WHERE session_id = ?", (sid,))[0]
    ledger = r.all(f"SELECT count(*), max(id) FROM {LEDGER} WHERE session_id = ?", (sid,))[0] \
        if r.check().get(LEDGER) else ()
    when = max(_seconds(row.get("updated_at")), _seconds(newest))
    digest = hash((count, last, size, *ledger)) % 1_000_000
    return len(_info_bytes(row)), int(when * 1000) * 1_000_000 + digest, os.stat(r.db).st_ino


def _changes(r: _Reader, marks: dict | None) -> tuple[set[str], dict] | None:
    """(the sessions whose rows changed since `marks` — a session row that is new, went or reads
    otherwise, messages or ledger rows past the newest ids read then, a session with fewer
    messages than it had —, the marks of now); with no marks, every session. None when rows went
    back (a database replaced, a vacuum): read every session. Goose writes a message by
    appending its row and saves a conversation again under new row ids; a message's row changed
    in place is seen by the next look at every session (rowdb.looked)."""
    cols = r.check()["sessions"]
    rows = {values[0]: hash(values) for values in r.all(
        f"SELECT {', '.join(rowdb.quoted(c) for c in ['id'] + [c for c in cols if c != 'id'])} FROM sessions")}
    top = r.all("SELECT max(id) FROM messages")[0][0] or 0
    total = r.all("SELECT count(*) FROM messages")[0][0]  # (an index's count: no row read)
    ledger = (r.all(f"SELECT max(id) FROM {LEDGER}")[0][0] or 0) if r.check().get(LEDGER) else 0
    if marks is None or top < marks["top"] or ledger < marks["ledger"]:
        counts = dict(r.all("SELECT session_id, count(*) FROM messages GROUP BY session_id"))
        now = {"rows": rows, "top": top, "ledger": ledger, "counts": counts}
        return (set(rows), now) if marks is None else None
    before = marks["rows"]
    changed = {s for s, h in rows.items() if before.get(s) != h} | (set(before) - set(rows))
    counts = dict(marks["counts"])
    for s, n in r.all("SELECT session_id, count(*) FROM messages WHERE id > ? GROUP BY session_id", (marks["top"],)):
        changed.add(s)
        counts[s] = counts.get(s, 0) + n
    if total != sum(counts.values()):  # (rows went: which sessions', from the index)
        now_counts = dict(r.all("SELECT session_id, count(*) FROM messages GROUP BY session_id"))
        changed |= {s for s in set(counts) | set(now_counts) if counts.get(s) != now_counts.get(s)}
        counts = now_counts
    if ledger > marks["ledger"]:
        changed |= {s for (s,) in r.all(f"SELECT DISTINCT session_id FROM {LEDGER} WHERE id > ?", (marks["ledger"],))}
    now = {"rows": rows, "top": top, "ledger": ledger, "counts": counts}
    return {s for s in changed if isinstance(s, str)}, now


def list_sessions(db: str) -> list[tuple[str, str, float, int]]:
    """(row path, session id, last write as epoch seconds, size) of every session in a database;
    Unreadable (an OSError) when it is not a readable Goose database."""
    return rowdb.remembered(("goose list", db), db, lambda: _list(db))


def _list(db: str) -> list[tuple[str, str, float, int]]:
    with _Reader(db) as r:
        cols = r.check()["sessions"]
        rows = r.all(f"SELECT {', '.join(rowdb.quoted(c) for c in cols)}, (SELECT max(created_timestamp) "
                     "FROM messages WHERE messages.session_id = sessions.id) FROM sessions")
    out = []
    for values in rows:
        row = _info(dict(zip(cols, values[:-1])))
        sid = row.get("id")
        if not isinstance(sid, str) or not ID.fullmatch(sid):
            continue  # (an id no path can name)
        when = max(_seconds(row.get("updated_at")), _seconds(values[-1]))
        out.append((row_path(db, sid), sid, when, len(_info_bytes(row))))
    return out


def document(path: str) -> dict | None:
    """A row-session as `{"session": row, "messages": [Message…]}` in Goose's order (row id), or
    None when `path` is not one. When its messages cannot be read (a damaged page), they are one
    BadLine saying why; raises OSError when the session itself cannot be. `_read` marks the rows
    read, for `document_on`."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, sid = found
    with _Reader(db) as r:
        row = _session_row(r, sid)
        if row is None:
            raise _gone(path)
        cols = _message_columns(r)
        try:
            msgs = r.all(f"SELECT {', '.join(cols)} FROM messages WHERE session_id = ? ORDER BY id", (sid,))
            unread = None
            marks = _marks(r, sid, max((m[0] for m in msgs if isinstance(m[0], int)), default=0))
        except Unreadable as e:
            msgs, unread, marks = [], BadLine(f"this session's messages: {e}"), None
        ledger = _ledger(r, sid)
        stale = r.stale_wal
    messages: list = [unread] if unread else []
    for values in msgs:
        messages.append(_message(dict(zip(cols, values))))
    doc: dict = {"session": row, "messages": messages}
    if ledger is not None:
        doc["usage"] = ledger
    if stale:
        doc["stale_wal"] = stale
    elif marks is not None:
        doc["_read"] = {"messages": marks, "ledger": _ledger_mark(ledger)}
    return doc


def document_on(path: str, doc: dict) -> dict | None:
    """`doc` (a session as `document` read it) with the rows Goose wrote since: its session row as
    it is now, the messages and ledger rows past those read. None when a message read before
    changed or went (a conversation compacted or replaced, a message's visibility changed: the
    session is read whole again) or the database cannot be read now."""
    found = rowdb.located(path, is_store)
    marks = doc.get("_read")
    if found is None or not isinstance(marks, dict):
        return None
    db, sid = found
    try:
        with _Reader(db) as r:
            row = _session_row(r, sid)
            if row is None:
                raise _gone(path)
            last = marks["messages"][0]
            if _marks(r, sid, last) != marks["messages"] or r.stale_wal:
                return None
            cols = _message_columns(r)
            msgs = r.all(f"SELECT {', '.join(cols)} FROM messages WHERE session_id = ? AND id > ? ORDER BY id",
                         (sid, last))
            new_marks = _marks(r, sid, max((m[0] for m in msgs if isinstance(m[0], int)), default=last))
            ledger = _ledger(r, sid, after=marks["ledger"]) if marks["ledger"] is not None else None
    except FileNotFoundError:
        raise
    except OSError:
        return None
    if (ledger is None) != (marks["ledger"] is None):
        return None  # (the ledger came or went: a migration)
    out: dict = {"session": row, "messages": doc["messages"] + [reader.shallow(_message(dict(zip(cols, v))))
                                                                for v in msgs]}
    if ledger is not None:
        out["usage"] = doc.get("usage", []) + ledger
    out["_read"] = {"messages": new_marks, "ledger": _ledger_mark(out.get("usage"), marks["ledger"])}
    return out


def _message_columns(r: _Reader) -> list[str]:
    have = set(r.check()["messages"])
    return ["id", "role", "content_json", "created_timestamp"] + [
        c for c in ("metadata_json", "message_id") if c in have]


def _marks(r: _Reader, sid: str, last: int) -> list:
    """[last row id, count, summed length] of a session's messages up to row id `last`: what a
    message rewritten, removed or put back among them changes."""
    meta = " + total(length(metadata_json))" if "metadata_json" in r.check()["messages"] else ""
    count, size = r.all(f"SELECT count(*), total(length(content_json)){meta} FROM messages "
                        "WHERE session_id = ? AND id <= ?", (sid, last))[0]
    return [last, count, size]


def _ledger_mark(ledger: list | None, before: int | None = None) -> int | None:
    """The last ledger row id read (None without the ledger)."""
    if ledger is None:
        return None
    return max((row["id"] for row in ledger if isinstance(row.get("id"), int)), default=before or 0)


def _ledger(r: _Reader, sid: str, after: int = 0) -> list | None:
    """The session's rows of the usage ledger (schema 15+) in Goose's order, each a dict of
    LEDGER_COLUMNS (a column a later Goose dropped is None), past row id `after`; None without the
    ledger, or when its rows cannot be read (the session then reads with its totals)."""
    have = r.check().get(LEDGER) or []
    if "session_id" not in have or "id" not in have:
        return None
    cols = [c if c in have else "NULL" for c in LEDGER_COLUMNS]
    try:
        rows = r.all(f"SELECT {', '.join(cols)} FROM {LEDGER} WHERE session_id = ? AND id > ? ORDER BY id",
                     (sid, after))
    except Unreadable:
        return None
    return [dict(zip(LEDGER_COLUMNS, values)) for values in rows]


def _message(m: dict) -> Any:
    """A message row as Goose's Message (its `get_conversation`): the JSONL file's shape."""
    content = reader.decode(m["content_json"]) if isinstance(m["content_json"], (str, bytes)) else None
    if not isinstance(content, list):
        why = content.reason if isinstance(content, BadLine) else "not a list"
        return BadLine(f"message {m['id']}: its content_json is {why}")
    msg: dict = {"id": m.get("message_id"), "role": m["role"], "created": m["created_timestamp"],
                 "content": content}
    meta = m.get("metadata_json")
    if isinstance(meta, (str, bytes)) and meta:
        parsed = reader.decode(meta)
        msg["metadata"] = meta if isinstance(parsed, BadLine) else parsed
    return msg


def children(path: str, depth: int) -> list[tuple[str, str, dict]]:
    """(session id, row path, meta) of the sub-agent sessions of a row-session and of theirs,
    breadth first, `depth` levels down: the rows naming it as their `parent_session_id` (schema
    15+; Goose's summon extension sets it on the session its `delegate` tool makes). meta:
    `session_id`, `parent_session_id`, `name`, `created`. None before schema 15."""
    found = rowdb.located(path, is_store)
    if found is None:
        return []
    db, sid = found
    with _Reader(db) as r:
        if "parent_session_id" not in r.check()["sessions"]:
            return []
        rows = rowdb.descendants(r, sid, depth, "SELECT id, parent_session_id, name, created_at FROM "
                                                "sessions WHERE parent_session_id IN ({marks}) ORDER BY id")
    return [(cid, row_path(db, cid), {"session_id": cid, "parent_session_id": parent, "name": name,
                                      "created": created})
            for cid, parent, name, created in rows]


def task_sessions(path: str) -> list[tuple[str, str, dict]]:
    """(session id, row path, meta) of the sub-agent sessions a row-session's tool results name
    as the tasks they ran (task_ids), where no `parent_session_id` names it: Goose 1.x's subagent
    tools (`subagent`, `subagent__execute_task`) ran each task in a `sub_agent` session whose id
    was the task's, and answered `{"status", "results": [{"task_id", "status", "data"}…]}`
    (subagent_execution_tool/task_types.rs ExecutionResponse)."""
    found = rowdb.located(path, is_store)
    if found is None:
        return []
    db, sid = found
    with _Reader(db) as r:
        cols = r.check()["sessions"]
        if "session_type" not in cols:
            return []
        texts = r.all("SELECT content_json FROM messages WHERE session_id = ? AND role = 'user' "
                      "AND content_json LIKE '%task\\_id%' ESCAPE '\\'", (sid,))
        named = list(dict.fromkeys(t for (content,) in texts for t in task_ids(content) if t != sid))
        running = {t: call for t, (owner, call) in _running_tasks(r, db).items() if owner == sid}
        named += [t for t in running if t not in named]
        if not named:
            return []
        orphan = " AND (parent_session_id IS NULL OR parent_session_id = '')" \
            if "parent_session_id" in cols else ""
        rows = r.all(f"SELECT id, name, created_at FROM sessions WHERE session_type = 'sub_agent'{orphan} "
                     f"AND id IN ({', '.join('?' * len(named))})", tuple(named))
    order = {t: i for i, t in enumerate(named)}
    return [(cid, row_path(db, cid), {"session_id": cid, "parent_session_id": sid, "name": name,
                                      "created": created, **({"toolUseId": running[cid]} if cid in running else {})})
            for cid, name, created in sorted(rows, key=lambda row: order[row[0]])]


def task_ids(content: Any) -> list[str]:
    """The session ids a message's tool results name as the tasks they ran (`results[].task_id`
    of the JSON text a subagent tool answers with); [] for anything else."""
    items = reader.decode(content) if isinstance(content, (str, bytes)) else content
    out: list[str] = []
    for item in items if isinstance(items, list) else ():
        res = item.get("toolResult") if isinstance(item, dict) and item.get("type") == "toolResponse" else None
        value = res.get("value") if isinstance(res, dict) else None
        parts = value.get("content") if isinstance(value, dict) else value
        for part in parts if isinstance(parts, list) else ():
            text = part.get("text") if isinstance(part, dict) else None
            if not isinstance(text, str) or '"task_id"' not in text:
                continue
            data = reader.decode(text)
            results = data.get("results") if isinstance(data, dict) else None
            for r in results if isinstance(results, list) else ():
                t = r.get("task_id") if isinstance(r, dict) else None
                if isinstance(t, str) and ID.fullmatch(t) and t not in out:
                    out.append(t)
    return out


def task_parent(path: str) -> str | None:
    """The session that ran a Goose 1.x `sub_agent` session as a task (its subagent tool's result
    names it in `results[].task_id`; no `parent_session_id` does), or None. Remembered while the
    database is unchanged."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, sid = found
    return rowdb.remembered(("goose task parent", db, sid), db, lambda: _task_parent(db, sid))


def _task_parent(db: str, sid: str) -> str | None:
    with _Reader(db) as r:
        cols = r.check()["sessions"]
        if "session_type" not in cols:
            return None
        named = ", parent_session_id" if "parent_session_id" in cols else ""
        row = r.all(f"SELECT session_type{named} FROM sessions WHERE id = ?", (sid,))
        if not row or row[0][0] != "sub_agent" or any(row[0][1:]):
            return None
        found = _task_owners(r, db).get(sid)
        if found is not None and not _names_task(r, *found, sid):
            _owners.pop(db, None)  # (the row that named it went: read the messages again from the first)
            found = _task_owners(r, db).get(sid)
        if found is not None:
            return found[0]
        running = _running_tasks(r, db).get(sid)  # (its call's result not written yet)
        return running and running[0]


# database → {"ino", "last": the last message row id read, "owners": {task id: (the session whose
# tool result first named it, that message's row id)}}: `_task_owners` reads on past `last`, so a task's parent is found
# without reading every message of the database again on each write (a live database's memo is
# never kept long: rowdb.remembered)
_owners: dict[str, dict] = {}


def _task_owners(r: _Reader, db: str) -> dict[str, tuple[str, int]]:
    """{task id: (its parent session, the row naming it)} of the tasks Goose 1.x's subagent results name (`task_ids`),
    read on from the message rows read before (Goose appends them: a conversation replaced is
    written again under new row ids; a database whose rows went back is read from the first)."""
    ino = os.stat(db).st_ino
    known = _owners.get(db)
    top = r.all("SELECT max(id) FROM messages")[0][0] or 0
    if known is None or known["ino"] != ino or top < known["last"]:
        known = {"ino": ino, "last": 0, "owners": {}}
    if top > known["last"]:
        # (the result's text is a JSON string inside the content's JSON: its quotes escaped)
        rows = r.all("SELECT id, session_id, content_json FROM messages WHERE id > ? AND role = 'user' "
                     "AND instr(content_json, 'task_id') > 0 ORDER BY id", (known["last"],))
        owners = dict(known["owners"])
        for mid, owner, content in rows:
            if isinstance(owner, str) and ID.fullmatch(owner):
                for t in task_ids(content):
                    if t != owner:
                        owners.setdefault(t, (owner, mid))
        known = {"ino": ino, "last": top, "owners": owners}
    if len(_owners) > 64:
        _owners.clear()
    _owners[db] = known
    return known["owners"]


SUBAGENT_TOOL = "subagent"  # Goose 1.x's tool that ran a task in a session of its own
CALL_WINDOW = 1_000  # message rows before a task's session (or the newest) searched for its call
CALL_SLACK = 2.0  # seconds a task's session may seem older than its call (whole seconds both)
CALL_AGE = 600.0  # seconds after its call a task's session is still taken for that call's


def _running_tasks(r: _Reader, db: str) -> dict[str, tuple[str, str]]:
    """{task session id: (parent session, call id)} of Goose 1.x's sub-agent sessions still
    running: a `subagent` call makes a `sub_agent` session (subagent_tool.rs: "Subagent Task", no
    parent column) the moment it runs, and only its result names it — minutes later. Until then
    each such session that no result names is the one of the earliest call of that tool, in the
    same folder, that was made before it (by a second's slack, and not minutes before), that no result answers yet and no
    earlier such session took (calls made together run their tasks in order); a session whose
    candidate calls are in more than one session is left alone (two sessions running sub-agents
    at once). Remembered while the database is unchanged."""
    return rowdb.remembered(("goose running tasks", db), db, lambda: _find_running(r, db))


def _find_running(r: _Reader, db: str) -> dict[str, tuple[str, str]]:
    cols = r.check()["sessions"]
    orphan = " AND (parent_session_id IS NULL OR parent_session_id = '')" if "parent_session_id" in cols else ""
    named = _task_owners(r, db)
    waiting = [(_seconds(created), sid, folder) for sid, folder, created in r.all(
        f"SELECT id, working_dir, created_at FROM sessions WHERE session_type = 'sub_agent'{orphan}")
        if isinstance(sid, str) and ID.fullmatch(sid) and sid not in named]
    if not waiting:
        return {}
    # (a call is written just before its session is made: among the rows before the session's
    # first message, or before the newest row while it has none)
    firsts = dict(r.all(f"SELECT session_id, min(id) FROM messages WHERE session_id IN "
                        f"({', '.join('?' * len(waiting))}) GROUP BY session_id", tuple(w[1] for w in waiting)))
    top = (r.all("SELECT max(id) FROM messages")[0][0] or 0) + 1
    below = max(firsts.get(w[1], top) for w in waiting)
    rows = r.all("SELECT m.id, m.session_id, m.created_timestamp, m.content_json, s.working_dir FROM messages m "
                 "JOIN sessions s ON s.id = m.session_id WHERE m.id < ? AND m.id >= ? AND m.role = 'assistant' "
                 "AND instr(m.content_json, ?) > 0 ORDER BY m.id", (below, below - CALL_WINDOW, f'"{SUBAGENT_TOOL}"'))
    calls = []  # (made at, parent, call id, folder, row id) of the calls no result answers yet
    for mid, owner, made, content, folder in rows:
        items = reader.decode(content) if isinstance(content, (str, bytes)) else None
        for item in items if isinstance(items, list) else ():
            req = item.get("toolCall") if isinstance(item, dict) and item.get("type") == "toolRequest" else None
            value = req.get("value") if isinstance(req, dict) else None
            cid = item.get("id") if isinstance(item, dict) else None
            if isinstance(value, dict) and value.get("name") == SUBAGENT_TOOL and isinstance(cid, str) and cid \
                    and isinstance(owner, str) and isinstance(made, (int, float)) and not r.all(
                        "SELECT 1 FROM messages WHERE session_id = ? AND id > ? AND role = 'user' AND "
                        "instr(content_json, ?) > 0 LIMIT 1", (owner, mid, f'"{cid}"')):
                calls.append((made, owner, cid, folder, mid))
    out: dict[str, tuple[str, str]] = {}
    taken: set[str] = set()
    for made, sid, folder in sorted(waiting):
        if sid not in firsts and not made:
            continue
        fits = [c for c in calls if c[2] not in taken and c[3] == folder and made - CALL_AGE <= c[0] <= made + CALL_SLACK
                and c[4] < firsts.get(sid, top)]
        if fits and len({c[1] for c in fits}) == 1 and fits[0][1] != sid:
            taken.add(fits[0][2])
            out[sid] = (fits[0][1], fits[0][2])
    return out


def _names_task(r: _Reader, owner: str, mid: int, task: str) -> bool:
    """Whether the message row that named a task is still there, as it was (a session deleted, a
    conversation replaced since: its rows are gone)."""
    texts = r.all("SELECT content_json FROM messages WHERE id = ? AND session_id = ?", (mid, owner))
    return any(task in task_ids(content) for (content,) in texts)


def parent(path: str) -> str | None:
    """The session a row-session is a sub-agent of (`parent_session_id`, schema 15+), or None."""
    found = rowdb.located(path, is_store)
    if found is None:
        return None
    db, sid = found
    with _Reader(db) as r:
        row = _session_row(r, sid)
    value = (row or {}).get("parent_session_id")
    return value if isinstance(value, str) and ID.fullmatch(value) and value != sid else None


def shadowed(paths: list[str]) -> dict[str, str]:
    """Of the sessions discovery found, the JSONL files (`<folder>/<id>.jsonl`) whose session is
    also a row of the `sessions.db` beside them: Goose imported them there and left the files."""
    rows: dict[str, set[str]] = {}
    for p in paths:
        found = split(p)
        if found is not None:
            rows.setdefault(os.path.dirname(found[0]), set()).add(found[1])
    if not rows:
        return {}
    out = {}
    for p in paths:
        if p.endswith(".jsonl"):
            folder, name = os.path.split(p)
            if name[:-6] in rows.get(folder, ()):
                out[p] = (f"also in Goose's database ({DB_FILE}), where Goose imported it from this "
                          "file: listed from there")
    return out
