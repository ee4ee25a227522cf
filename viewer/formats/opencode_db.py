"""OpenCode 1.2+'s SQLite store (`opencode.db`): sessions that are rows, read as the file storage is.

Since OpenCode 1.2.0 (2026-02) every session lives in one database, `~/.local/share/opencode/
opencode.db` (`storage/db.ts`; another release channel's `opencode-<channel>.db`), in WAL mode. Its
tables (`session/session.sql.ts`, first created by the migration `20260127222353_familiar_lady_ursula`):

    session  id, project_id, workspace_id, parent_id, slug, directory, path, title, version,
             share_url, summary_additions / _deletions / _files, summary_diffs (JSON), revert (JSON),
             permission (JSON), time_created, time_updated, time_compacting, time_archived, and
             columns later releases add (cost, tokens_*, agent, model…)
    message  id, session_id, time_created, time_updated, data — MessageV2.Info without id, sessionID
    part     id, message_id, session_id, time_created, time_updated, data — MessageV2.Part without
             id, sessionID, messageID
    todo     session_id, content, status, priority, position, time_created, time_updated

The server's sessions are files, so a row-session is named by a path below its database file,
`<folder>/opencode.db/<session id>`, which no file system holds (`is_row`): its key is
`opencode.db~<session id>` (keys.py), stable and URL-safe. This module owns everything about that
path, and the rest of the server reaches it through the hooks files already use:

* `files.open_file(path)` reads `row_bytes(path)`: the session row as OpenCode's Session.Info JSON
  (what the file storage's session file held), so detection, the raw bytes and the index's pass
  need nothing new. The session's summary diffs (file contents before and after) are left out, as
  they left the session file in 0.5.
* `document(path)` is the session as `opencode export` writes it (`{info, messages: [{info,
  parts}], todos}`), read by `opencode.folder_document`, so `records` / `event` are the file
  storage's. A row whose `data` does not parse is a BadLine in its place (an unparsed card). The
  raw view of a message shows it as assembled here: its row's `data` with its parts', the ids
  OpenCode keeps in columns put back.
* `identity(path)`: (size of `row_bytes`, a time standing for the session's rows, the database's
  inode) for the cache, the list and the live tail — a few indexed aggregate queries (count and
  newest / summed `time_updated` of its messages, of the parts of its last messages and of its
  todos), remembered while the database and its `-wal` file are unchanged, never a read of the
  session's data.
* `list_sessions(db)`: the sessions discovery lists (store.py), or why the database is skipped;
  `shadowed(paths)`: the file storage's session files also found as rows (listed once).
* `children` / `parent`: the sub-agent sessions (`parent_id`) for `opencode.companions` and
  `opencode.session_info`.

OpenCode 2.x keeps writing to the same file, its messages in a new event-sourced table, the 1.x
`message` / `part` tables left beside it (anomalyco/opencode, formerly sst/opencode:
packages/core/src/session/sql.ts at 02ce4a33, message.ts at 08e3e1f9, prompt.ts at 02973df1):

    session          the session row, the same table with 2.x's columns (fork_session_id,
                     fork_message_id, metadata, cost, tokens_input / _output / _reasoning /
                     _cache_read / _cache_write, agent, model (JSON)…)
    session_message  id, session_id, type, seq, time_created, time_updated, data — one row per
                     message in the order of `seq` (ids are not chronological), its `type` a
                     column and its data SessionMessage without `type` and `id`: user {text, files,
                     agents, references}, assistant {agent, model {id, providerID}, content: [text |
                     reasoning | tool {id, name, state {status pending | running | completed |
                     error, input, content: [{type: text | file}], structured, attachments,
                     outputPaths, result, error}, time {created, ran, completed, pruned}}],
                     snapshot, cost, tokens, error, finish}, synthetic {sessionID, text}, system
                     {text} (a context update the model got), shell {callID, command, output,
                     time.completed}, compaction {reason, summary, recent}, agent-switched {agent},
                     model-switched {model}, and kinds newer than this reader. A file the person
                     attached is a FileAttachment {data (base64), mime, source, name, description}
    session_input    prompts admitted but not yet a message: id, session_id, delivery (steer: taken
                     in at the agent's next step, queue: when its turn ends), admitted_seq,
                     promoted_seq (set once the prompt became a message), time_created, and the
                     prompt itself — `data` (UserData {text, files…}, SyntheticData {text}) with
                     its `type` in sql.ts at 02ce4a33, `prompt` (Prompt {text, files, agents,
                     references}) in input.ts at 0550cd8e. Those still waiting (promoted_seq null,
                     `_queued`) follow the messages, each a user message saying it is not sent yet.

Readers of real 2.x databases reported a `session_v2` table (Tokdash#99, memex#195, casr#30); the
upstream schema has none, but a session row there is read as one of `session`. A session is listed
once (its `session_v2` row where it has one); its messages are its `session_message` rows where it
has any (each read into the 1.x message-and-parts shape the rest of the reader knows:
`_v2_message`), else its 1.x `message` / `part` rows.

Reading never writes: the database is read as rowdb.py reads any database whose rows are sessions
(`immutable` while no OpenCode has it open, else `mode=ro` in a short transaction; when the `-shm`
file cannot be made, the database file alone, and the session says that OpenCode's latest writes
are not shown). The database must be a regular file inside the served roots.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import orjson

from .. import reader
from ..reader import BadLine
from . import rowdb
from .common import as_text

DB_NAME = re.compile(r"opencode(?:-[A-Za-z0-9._-]{1,64})?\.db")
ID = rowdb.ID  # a session id (the only ids joined into a path)
TAIL_MESSAGES = 8  # the last messages whose parts a session's identity looks at (rows and files)
# every column the queries below read (the todo table's only when all of its are there: todos
# are left out otherwise, the session still reads)
_NEEDED = {"session": {"id", "parent_id", "title", "time_created", "time_updated"},
           "message": {"id", "session_id", "time_created", "time_updated", "data"},
           "part": {"id", "message_id", "session_id", "time_updated", "data"}}
_TODO = {"session_id", "content", "status", "priority", "position", "time_updated"}
# OpenCode 2.x's tables (any of them may be missing: a 1.x database, or a 2.x one with no 1.x past)
_V2_MESSAGES = {"id", "session_id", "type", "time_created", "time_updated", "data"}
_INPUTS = {"id", "session_id", "admitted_seq", "promoted_seq", "time_created"}  # and data or prompt
_SESSION_TABLES = ("session_v2", "session")  # where a session's row is, the first that has it
# session columns that hold JSON (`text({mode: "json"})`), and the one left out of a session's info
_JSON_COLUMNS = {"revert", "permission", "model", "goal", "metadata", "summary_diffs"}
_LEFT_OUT = {"summary_diffs"}
_NAMED = {"project_id": "projectID", "workspace_id": "workspaceID", "parent_id": "parentID"}


Unreadable = rowdb.Unreadable


# --- paths ----------------------------------------------------------------------------------------


def is_store(name: str) -> bool:
    """Whether a file name is OpenCode's database (`opencode.db`, `opencode-<channel>.db`)."""
    return name.endswith(".db") and bool(DB_NAME.fullmatch(name))


store_of, split, _located, is_row = rowdb.paths(is_store)
row_path = rowdb.row_path


# --- connections ----------------------------------------------------------------------------------


class _Reader(rowdb.Reader):
    """One short read transaction on OpenCode's database: `with _Reader(db) as r: r.all(sql, args)`.
    Either generation's tables make it OpenCode's: 1.x's session / message / part, or 2.x's
    session_message with a session table (`_check`)."""

    PROGRAM = "OpenCode"
    OPTIONAL = ("session", "message", "part", "todo", "session_v2", "session_message", "session_input")

    def _check(self) -> dict[str, list[str]]:
        tables = super()._check()
        if self._v1(tables) or self._v2(tables):
            return tables
        missing = [t for t in _NEEDED if not tables[t]]
        if missing and self.stale_wal:  # (its tables may all be in the log still)
            raise Unreadable(self.db, f"{self.PROGRAM}'s SQLite database: " + self.stale_wal)
        if missing:
            raise Unreadable(self.db, f"a SQLite database without {self.PROGRAM}'s "
                                      + ", ".join(missing) + " table" + "s" * (len(missing) > 1))
        for table, needed in _NEEDED.items():
            lacking = needed - set(tables[table])
            if lacking:
                raise Unreadable(self.db, f"{self.PROGRAM}'s {table} table lacks "
                                          f"{', '.join(sorted(lacking))}: a layout this viewer does not know")
        return tables

    @staticmethod
    def _v1(tables: dict) -> bool:
        return all(needed <= set(tables[t]) for t, needed in _NEEDED.items())

    @staticmethod
    def _v2(tables: dict) -> bool:
        return _V2_MESSAGES <= set(tables["session_message"]) and any(
            _NEEDED["session"] <= set(tables[t]) for t in _SESSION_TABLES)

    def has_todos(self) -> bool:
        return _TODO <= set(self.check()["todo"])

    def session_tables(self) -> list[str]:
        """The tables sessions are rows of, the one to prefer first (2.x's, then 1.x's)."""
        tables = self.check()
        return [t for t in _SESSION_TABLES if _NEEDED["session"] <= set(tables[t])]

    def has_v1_messages(self) -> bool:
        tables = self.check()
        return _NEEDED["message"] <= set(tables["message"]) and _NEEDED["part"] <= set(tables["part"])

    def has_v2_messages(self) -> bool:
        return _V2_MESSAGES <= set(self.check()["session_message"])

    def input_columns(self) -> list[str] | None:
        """The session_input columns read (`_queued`), or None when there is no such table."""
        cols = set(self.check()["session_input"])
        if not _INPUTS <= cols or not cols & {"data", "prompt"}:
            return None
        return [c for c in ("id", "type", "delivery", "time_created", "data", "prompt") if c in cols]

    def sessions_sql(self, cols: str = "id, parent_id, title, time_created") -> str:
        """A source of every session's `cols` (columns both tables have), each session once: its
        2.x row where it has one."""
        tables = self.session_tables()
        if len(tables) == 1:
            return f"(SELECT {cols} FROM {tables[0]})"
        return (f"(SELECT {cols} FROM session_v2 UNION ALL SELECT {cols} FROM session "
                "WHERE id NOT IN (SELECT id FROM session_v2))")


# --- sessions -------------------------------------------------------------------------------------


def _loads(text: Any) -> Any:
    """A JSON column's value; its text as it is when it does not parse."""
    value = reader.decode(text) if isinstance(text, (str, bytes)) else text
    return text if isinstance(value, BadLine) else value


def _session_columns(r: _Reader, table: str = "session") -> list[str]:
    return [c for c in r.check()[table] if c not in _LEFT_OUT]


def _info(row: dict) -> dict:
    """A session row as OpenCode's Session.Info (its `fromRow`); columns it does not know are kept
    under their own names."""
    info: dict = {}
    rest = dict(row)
    for col in ("id", "slug"):
        if col in rest:
            info[col] = rest.pop(col)
    for col, name in _NAMED.items():
        if col in rest:
            info[name] = rest.pop(col)
    for col in ("directory", "path", "title", "version"):
        if col in rest:
            info[col] = rest.pop(col)
    summary = {k: rest.pop(f"summary_{k}", None) for k in ("additions", "deletions", "files")}
    if any(v is not None for v in summary.values()):
        info["summary"] = summary
    if rest.get("share_url"):
        info["share"] = {"url": rest.pop("share_url")}
    rest.pop("share_url", None)
    time = {k: rest.pop(f"time_{k}", None) for k in ("created", "updated", "compacting", "archived")}
    for col, value in rest.items():
        info[col] = _loads(value) if col in _JSON_COLUMNS else value
    info["time"] = {k: v for k, v in time.items() if v is not None}
    return {k: v for k, v in info.items() if v is not None}


def _info_bytes(info: dict) -> bytes:
    return orjson.dumps(info, option=orjson.OPT_INDENT_2, default=str)


def _session_row(r: _Reader, sid: str) -> dict | None:
    for table in r.session_tables():
        cols = _session_columns(r, table)
        rows = r.all(f"SELECT {', '.join(_q(c) for c in cols)} FROM {table} WHERE id = ?", (sid,))
        if rows:
            return dict(zip(cols, rows[0]))
    return None


_q = rowdb.quoted


def _gone(path: str) -> FileNotFoundError:
    return FileNotFoundError(2, "this session is no longer in OpenCode's database", path)


def row_bytes(path: str) -> bytes:
    """What opening a row-session's path reads: its session row as Session.Info JSON."""
    db, sid = split(os.fspath(path)) or (None, None)
    if db is None:
        raise FileNotFoundError(2, "No such file", path)
    with _Reader(db) as r:
        row = _session_row(r, sid)
    if row is None:
        raise _gone(path)
    return _info_bytes(_info(row))


def identity(path: str) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) standing for a row-session as a whole, or None when `path` is not
    one. mtime_ns is the newest `time_updated` among its session row, its messages, the parts of
    its last TAIL_MESSAGES messages (where OpenCode writes; an older message's parts are written
    again only along with new messages — compaction's pruning marks old tool parts as it adds
    its summary — and then the whole is read again) and its todos (OpenCode sets it on every
    write: a part rewritten in place as it streams too), moved on by
    less than a millisecond by a digest of their counts and summed times, so a row added or
    removed within the same millisecond as the last write still reads as a change (a row
    rewritten in place within that millisecond is seen with the next write: telling it would
    mean reading every row's data). Raises OSError when the session or its database cannot be
    read."""
    found = _located(path)
    if found is None:
        return None
    db, sid = found
    return rowdb.remembered(("identity", db, sid), db, lambda: _fresh_identity(db, sid, path))


BURST = 3  # identities taken afresh in one state of a database before all of its sessions' are
_asked: dict[str, tuple[tuple, int]] = {}  # database → (its state, identities taken afresh in it)


def _fresh_identity(db: str, sid: str, path: str) -> tuple[int, int, int]:
    """One session's identity — or, when more than BURST are asked while the database stays as it
    is (the list and the walker ask of every session after each write), every session's at once,
    remembered: a connection each cost half a millisecond, seconds for thousands of sessions,
    while a page following one live session asks of that one alone."""
    state = rowdb.state(db)
    with rowdb.memo_lock:
        seen, asked = _asked.get(db, (None, 0))
        asked = asked + 1 if seen == state else 1
        _asked[db] = (state, asked)
    if asked <= BURST:
        with _Reader(db) as r:
            return _identity(r, sid, path)
    every = {}
    began = time.time_ns()
    with _Reader(db) as r:
        # (one snapshot: every session listed is there to be read)
        for (s,) in r.all(f"SELECT id FROM {r.sessions_sql('id')}"):
            if isinstance(s, str) and ID.fullmatch(s):
                try:
                    every[s] = _identity(r, s, row_path(db, s))
                except Unreadable:  # its rows on a damaged page: said when it is asked for, and
                    if s == sid:  # the others' still read
                        raise
    # (kept even just after a write: the list asks of every session again at once)
    rowdb.keep({("identity", db, s): ident for s, ident in every.items()}, state, began, racy=True)
    if sid not in every:
        raise _gone(path)
    return every[sid]


def _identity(r: _Reader, sid: str, path: str) -> tuple[int, int, int]:
    row = _session_row(r, sid)
    if row is None:
        raise _gone(path)
    each = "SELECT count(*), max(time_updated), total(time_updated) FROM "
    counts = []
    if r.has_v1_messages():
        counts += [r.all(each + "message WHERE session_id = ?", (sid,))[0],
                   r.all(each + "part WHERE message_id IN (SELECT id FROM message WHERE session_id "
                         "= ? ORDER BY time_created DESC, id DESC LIMIT ?)", (sid, TAIL_MESSAGES))[0]]
    if r.has_v2_messages():  # (a 2.x message is one row, rewritten in place as it streams)
        counts.append(r.all(each + "session_message WHERE session_id = ?", (sid,))[0])
    if r.has_todos():
        counts.append(r.all(each + "todo WHERE session_id = ?", (sid,))[0])
    if r.input_columns() is not None:  # (a prompt queued, or taken in: no time_updated there)
        counts.append(r.all("SELECT count(*), max(time_created), total(promoted_seq IS NULL) FROM "
                            "session_input WHERE session_id = ?", (sid,))[0])
    size = len(_info_bytes(_info(row)))
    newest = int(max([_ms(row.get("time_updated"))] + [_ms(c[1]) for c in counts])) * 1_000_000
    digest = hash(tuple((c[0], c[2]) for c in counts)) % 1_000_000
    return size, newest + digest, os.stat(r.db).st_ino


def is_count(value: Any) -> bool:
    """Whether a value is a number a count, cost or time in milliseconds can be (not a bool, NaN,
    negative or absurd: a damaged record's)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and 0 <= value < 1e15


def _ms(value: Any) -> float:
    """A time column's milliseconds (0 for what is not a number: a damaged row)."""
    return value if is_count(value) else 0


def list_sessions(db: str) -> list[tuple[str, str, float, int]]:
    """(row path, session id, last write as epoch seconds, size) of every session in a database;
    Unreadable (an OSError) when it is not a readable OpenCode database."""
    return rowdb.remembered(("list", db), db, lambda: _list(db))


def _list(db: str) -> list[tuple[str, str, float, int]]:
    out, seen = [], set()
    with _Reader(db) as r:
        newest = [f"coalesce((SELECT max(time_created) FROM {t} WHERE {t}.session_id = {{table}}.id), 0)"
                  for t, has in (("message", r.has_v1_messages()), ("session_message", r.has_v2_messages()))
                  if has]
        for table in r.session_tables():  # (2.x's first: a session in both is its 2.x row)
            cols = _session_columns(r, table)
            # a session's own time moves with its title and summary; its newest message with the work
            rows = r.all(f"SELECT {', '.join(_q(c) for c in cols)}, "
                         f"max(0, {', '.join(n.format(table=table) for n in newest) or '0'}, 0) "
                         f"FROM {table}")
            for values in rows:
                row = dict(zip(cols, values[:-1]))
                sid = row.get("id")
                if not isinstance(sid, str) or not ID.fullmatch(sid) or sid in seen:
                    continue  # (an id no path can name, or the session's 2.x row read already)
                seen.add(sid)
                out.append((row_path(db, sid), sid,
                            max(_ms(row.get("time_updated")), _ms(values[-1])) / 1000,
                            len(_info_bytes(_info(row)))))
    return out


def document(path: str) -> dict | None:
    """A row-session as `opencode export` writes it (`{info, messages: [{info, parts}], todos}`,
    marked with `key`), or None when `path` is not one. Messages in OpenCode's order (time
    created, then id), each with its parts by id. When its messages cannot be read (a damaged
    page of the database), they are one BadLine saying why; raises OSError when the session
    itself cannot be (Unreadable, or FileNotFoundError once it is gone)."""
    found = _located(path)
    if found is None:
        return None
    db, sid = found
    with _Reader(db) as r:
        row = _session_row(r, sid)
        if row is None:
            raise _gone(path)
        try:
            v2 = _v2_rows(r, sid)
            msgs = r.all("SELECT id, data FROM message WHERE session_id = ? ORDER BY "
                         "time_created, id", (sid,)) if not v2 and r.has_v1_messages() else []
            parts = r.all("SELECT message_id, id, data FROM part WHERE session_id = ? ORDER BY "
                          "message_id, id", (sid,)) if msgs else []
            todos = r.all("SELECT content, status, priority, position FROM todo WHERE "
                          "session_id = ? ORDER BY position", (sid,)) if r.has_todos() else []
            queued = _queued(r, sid)
            unread = None
        except Unreadable as e:
            v2, msgs, parts, todos, queued = [], [], [], [], []
            unread = BadLine(f"this session's messages: {e}")
        stale = r.stale_wal
    by_message: dict[str, list] = {}
    for mid, pid, data in parts:
        by_message.setdefault(mid, []).append(
            _row_value(data, f"part {pid}", {"id": pid, "sessionID": sid, "messageID": mid}))
    messages: list = [unread] if unread else []
    for mid, data in msgs:
        info = _row_value(data, f"message {mid}", {"id": mid, "sessionID": sid})
        messages.append({"info": info, "parts": by_message.get(mid, [])}
                        if isinstance(info, dict) else info)
    for mid, kind, created, data in v2:
        value = _row_value(data, f"message {mid}", {})
        messages.append(_v2_message(mid, sid, kind, created, value) if isinstance(value, dict) else value)
    for waiting in queued:
        value = _row_value(waiting.get("data", waiting.get("prompt")), f"queued prompt {waiting['id']}", {})
        if not isinstance(value, dict):
            messages.append(value)
            continue
        kind = "synthetic" if waiting.get("type") == "synthetic" else "user"
        msg = _v2_message(as_text(waiting["id"]), sid, kind, waiting.get("time_created"), value)
        msg["queued"] = waiting.get("delivery") if isinstance(waiting.get("delivery"), str) else "queue"
        messages.append(msg)
    doc: dict = {"info": _info(row), "messages": messages,
                 "todos": [{"content": c, "status": s, "priority": p} for c, s, p, _ in todos]
                 or None}
    if stale:
        doc["stale_wal"] = stale
    return doc


def _queued(r: _Reader, sid: str) -> list[dict]:
    """A session's prompts admitted but not yet messages (session_input rows with no
    `promoted_seq`), in the order they were admitted; [] when the table is not there."""
    cols = r.input_columns()
    if cols is None:
        return []
    rows = r.all(f"SELECT {', '.join(cols)} FROM session_input WHERE session_id = ? AND promoted_seq "
                 "IS NULL ORDER BY admitted_seq", (sid,))
    return [dict(zip(cols, row)) for row in rows]


def _v2_rows(r: _Reader, sid: str) -> list:
    """A session's 2.x message rows (id, type, time_created, data), in OpenCode's order (`seq`)."""
    if not r.has_v2_messages():
        return []
    order = "seq, id" if "seq" in r.check()["session_message"] else "time_created, id"
    return r.all("SELECT id, type, time_created, data FROM session_message WHERE session_id = ? "
                 f"ORDER BY {order}", (sid,))


def _v2_message(mid: str, sid: str, kind: Any, created: Any, data: dict) -> dict:
    """A 2.x message row (its `type` column and its data, SessionMessage without type and id) in
    the 1.x shape `{info, parts}` the reader knows: a user prompt's text, files and @agents as
    parts; an assistant message's content (text, reasoning, tool) as parts, its model, cost and
    tokens on its info; OpenCode's own text (`synthetic`) as a synthetic text part; a `!command`
    (`shell`) as the person's bash call; a compaction as the summary message it writes. Any other
    kind (an agent or model switch, newer kinds) is a `session-event` part of a system message."""
    time = data.get("time") if isinstance(data.get("time"), dict) else {}
    info: dict = {"id": mid, "sessionID": sid, "time": {"created": time.get("created", created)}}
    parts: list = []
    part = lambda **p: parts.append({"id": f"{mid}:{len(parts)}", "sessionID": sid, "messageID": mid, **p})
    if kind == "user":
        info["role"] = "user"
        if isinstance(data.get("text"), str):
            part(type="text", text=data["text"])
        for f in data.get("files") or []:
            if isinstance(f, dict):
                part(**_v2_file(f))
        for a in data.get("agents") or []:
            if isinstance(a, dict) and isinstance(a.get("name"), str):
                part(type="agent", name=a["name"])
        if data.get("references"):
            part(type="session-event", event="references", data=data["references"])
    elif kind == "synthetic":
        info["role"] = "user"
        part(type="text", text=as_text(data.get("text")), synthetic=True)
    elif kind == "shell":
        info["role"] = "user"
        done = time.get("completed")
        part(type="tool", callID=as_text(data.get("callID")) or f"{mid}:shell", tool="bash",
             state={"status": "completed" if done else "running", "input": {"command": data.get("command")},
                    "output": data.get("output"), "title": "", "metadata": {"output": data.get("output")},
                    "time": {"start": time.get("created", created), "end": done}})
    elif kind == "assistant":
        info["role"] = "assistant"
        model = data.get("model") if isinstance(data.get("model"), dict) else {}
        info.update({"modelID": model.get("id"), "providerID": model.get("providerID"),
                     "agent": data.get("agent"), "cost": data.get("cost"), "tokens": data.get("tokens"),
                     "finish": data.get("finish"), "error": _v2_error(data.get("error"))})
        info["time"]["completed"] = time.get("completed")
        for c in data.get("content") or []:
            t = c.get("type") if isinstance(c, dict) else None
            if t == "text":
                part(type="text", text=c.get("text"), synthetic=c.get("synthetic"), ignored=c.get("ignored"))
            elif t == "reasoning":
                part(type="reasoning", text=c.get("text"))
            elif t == "tool":
                part(type="tool", callID=as_text(c.get("id")), tool=c.get("name"), state=_v2_tool(c))
            else:
                part(type="session-event", event=f"{as_text(t)} content", data=c)
    elif kind == "system":  # SessionMessage.System {text}: a context update the model got
        info["role"] = "system"
        part(type="session-event", event="system", data={"text": data.get("text")})
    elif kind == "compaction":
        info.update({"role": "assistant", "summary": True})
        part(type="text", text=as_text(data.get("summary")))
    else:
        info["role"] = "system"
        part(type="session-event", event=as_text(kind) or "event",
             data={k: v for k, v in data.items() if k not in ("time", "metadata")})
    info = {k: v for k, v in info.items() if v is not None}
    return {"info": info, "parts": parts}


def _v2_tool(c: dict) -> dict:
    """A 2.x tool call's state in 1.x's shape: its output the text of its `content` items (files
    as attachments), `structured` as its metadata (bash's exit code), its times."""
    state = c.get("state") if isinstance(c.get("state"), dict) else {}
    times = c.get("time") if isinstance(c.get("time"), dict) else {}
    status = state.get("status")
    content = state.get("content") if isinstance(state.get("content"), list) else []
    text = "\n".join(as_text(i.get("text")) for i in content if isinstance(i, dict) and i.get("type") == "text")
    files = [_v2_file(i) for i in content if isinstance(i, dict) and i.get("type") == "file"]
    files += [_v2_file(a) for a in state.get("attachments") or [] if isinstance(a, dict)]
    md = state.get("structured") if isinstance(state.get("structured"), dict) else {}
    out: dict = {"status": status, "input": state.get("input"),
                 "time": {"start": times.get("ran") or times.get("created"), "end": times.get("completed"),
                          "compacted": times.get("pruned")}}
    if status == "pending":
        out["input"] = {}
        out["raw"] = state.get("input")
    elif status == "running":
        out["metadata"] = {**md, "output": text} if text else md
    elif status == "completed":
        out.update(output=text, title="", metadata=md, attachments=files or None)
    elif status == "error":
        out.update(error=_v2_error_text(state.get("error")) or text, metadata=md)
    return out


def _v2_file(f: dict) -> dict:
    """A 2.x file (FileAttachment {data: base64, mime, source {type: inline | uri, uri}, name,
    description}, or a tool's file content item) as 1.x's FilePart {type: file, mime, filename,
    url}: its bytes a data: URL, else the URI it came from."""
    mime = f.get("mime") or f.get("mediaType")
    mime = mime if isinstance(mime, str) and mime else None
    src = f.get("source") if isinstance(f.get("source"), dict) else {}
    url = f.get("url") or f.get("uri") or src.get("uri")
    if isinstance(f.get("data"), str) and f["data"]:
        url = f"data:{mime or 'application/octet-stream'};base64,{f['data']}"
    name = f.get("filename") or f.get("name")
    return {"type": "file", "mime": mime, "filename": name if isinstance(name, str) else None,
            "url": url if isinstance(url, str) else None, "source": src or None}


def _v2_error_text(err: Any) -> str:
    if isinstance(err, dict):
        data = err.get("data") if isinstance(err.get("data"), dict) else {}
        said = err.get("message") or data.get("message")
        return as_text(said) if said else as_text(err)
    return as_text(err) if err else ""


def _v2_error(err: Any) -> Any:
    """A 2.x step's error in 1.x's `{name, data: {message}}` shape."""
    if not isinstance(err, dict):
        return err or None
    name = err.get("name") or err.get("type") or err.get("_tag") or "error"
    return {"name": as_text(name), "data": {"message": _v2_error_text(err)}, **(
        {"detail": err} if set(err) - {"name", "type", "_tag", "message", "data"} else {})}


def _row_value(data: Any, what: str, ids: dict) -> Any:
    """A row's `data` with the ids OpenCode keeps in columns put back (its `fromRow`), or a
    BadLine saying why it cannot be read."""
    if not isinstance(data, (str, bytes)):
        return BadLine(f"{what}: its data is not JSON text")
    value = reader.decode(data)
    if isinstance(value, BadLine):
        return BadLine(f"{what}: its data is {value.reason}")
    return {**value, **ids} if isinstance(value, dict) else value


def children(path: str, depth: int) -> list[tuple[str, str, dict]]:
    """(session id, row path, meta) of the sub-agent sessions of a row-session and of theirs,
    breadth first, `depth` levels down (the `task` tool's sessions name it as `parent_id`)."""
    found = _located(path)
    if found is None:
        return []
    db, sid = found
    with _Reader(db) as r:
        r.check()
        rows = rowdb.descendants(r, sid, depth, "SELECT id, parent_id, title, time_created FROM "
                                 f"{r.sessions_sql()} WHERE parent_id IN ({{marks}}) ORDER BY id")
    return [(cid, row_path(db, cid), {"session_id": cid, "parent_session_id": parent,
                                      "title": title, "created": created})
            for cid, parent, title, created in rows]


def parent(path: str) -> tuple[str | None, str | None]:
    """(parent session id, title) of a row-session."""
    found = _located(path)
    if found is None:
        return None, None
    db, sid = found
    with _Reader(db) as r:
        r.check()
        rows = r.all(f"SELECT parent_id, title FROM {r.sessions_sql()} WHERE id = ?", (sid,))
    return rows[0] if rows else (None, None)


def shadowed(paths: list[str]) -> dict[str, str]:
    """Of the sessions discovery found, the file storage's session files (`<data>/storage/session/
    <project>/<id>.json`) whose session is also a row of a database in the same data folder, with
    why they are skipped: OpenCode 1.2's json-migration copied them there and left the files."""
    rows: dict[str, set[str]] = {}
    for p in paths:
        found = split(p)
        if found is not None:
            rows.setdefault(os.path.dirname(found[0]), set()).add(found[1])
    if not rows:
        return {}
    out = {}
    for p in paths:
        if not p.endswith(".json"):
            continue
        parts = p.rsplit(os.sep, 4)
        if len(parts) == 5 and parts[1:3] == ["storage", "session"] and \
                parts[4][:-5] in rows.get(parts[0], ()):
            out[p] = ("also in OpenCode's database (opencode.db), where OpenCode 1.2 copied it "
                      "from these files: listed from there")
    return out
