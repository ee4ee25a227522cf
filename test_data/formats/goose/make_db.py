"""Build a Goose `sessions.db` as Goose does, for the tests (nothing here is shipped).

The tables are made with Goose's own statements (block/goose crates/goose/src/session/
session_manager.rs `create()` at schema 5, commit 0164300649cf5e4ab327105d9155779ab8bfde4b, then
migrations.rs's 6–13 at 865e4a030a67eb0c51869874b9c758cb1eb10595 and 14–17 of session_manager.rs at
aaif-goose/goose 017176d06077b119ade382d3bb710e56c8c04e90: cached token counts, `parent_session_id`
and the `usage_ledger`, `parent_delegation`), in WAL mode as sqlx opens it.
`build(db)` imports the JSONL sessions of sessions/ as Goose's `import_legacy` does (each file's
name its id, its metadata line's description its name, its messages' rows in order) and adds a
session begun since, written by `add_message` as current Goose writes: its `message_id`, its
`metadata_json`, a `delegate` call (the summon extension's, platform_extensions/summon.rs at
block/goose 00435618ea26700fe940a823728964bd6525b85a) whose result names the sub-agent session it
made (`_meta.subagent_session_id`), and that session, naming its parent (`parent_session_id`). `write_message(con, …)` appends a message
as a running Goose does (and moves the session's `updated_at`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEGACY = sorted((HERE / "sessions").glob("*.jsonl"))
NEW_ID = "20251105_1"
SUB_ID = "20251105_2"

CREATE = [
    """CREATE TABLE schema_version (
        version INTEGER PRIMARY KEY,
        applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
    )""",
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        user_set_name BOOLEAN DEFAULT FALSE,
        session_type TEXT NOT NULL DEFAULT 'user',
        working_dir TEXT NOT NULL,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        extension_data TEXT DEFAULT '{}',
        total_tokens INTEGER,
        input_tokens INTEGER,
        output_tokens INTEGER,
        accumulated_total_tokens INTEGER,
        accumulated_input_tokens INTEGER,
        accumulated_output_tokens INTEGER,
        schedule_id TEXT,
        recipe_json TEXT,
        user_recipe_values_json TEXT
    )""",
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        role TEXT NOT NULL,
        content_json TEXT NOT NULL,
        created_timestamp INTEGER NOT NULL,
        timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        tokens INTEGER,
        metadata_json TEXT
    )""",
    "CREATE INDEX idx_messages_session ON messages(session_id)",
    "CREATE INDEX idx_messages_timestamp ON messages(timestamp)",
    "CREATE INDEX idx_sessions_updated ON sessions(updated_at DESC)",
    "CREATE INDEX idx_sessions_type ON sessions(session_type)",
]
MIGRATIONS = {
    6: ["ALTER TABLE sessions ADD COLUMN provider_name TEXT",
        "ALTER TABLE sessions ADD COLUMN model_config_json TEXT"],
    7: ["ALTER TABLE messages ADD COLUMN message_id TEXT",
        "UPDATE messages SET message_id = 'msg_' || session_id || '_' || id",
        "CREATE INDEX idx_messages_message_id ON messages(message_id)"],
    8: ["ALTER TABLE sessions ADD COLUMN goose_mode TEXT NOT NULL DEFAULT 'auto'"],
    10: ["ALTER TABLE sessions ADD COLUMN thread_id TEXT",
         "CREATE INDEX IF NOT EXISTS idx_sessions_thread ON sessions(thread_id)"],
    12: ["ALTER TABLE sessions ADD COLUMN archived_at TIMESTAMP",
         "ALTER TABLE sessions ADD COLUMN project_id TEXT"],
    13: ["ALTER TABLE sessions ADD COLUMN accumulated_cost REAL"],
    14: [f"ALTER TABLE sessions ADD COLUMN {c} INTEGER" for c in (
        "cache_read_tokens", "cache_write_tokens", "accumulated_cache_read_tokens",
        "accumulated_cache_write_tokens")],
    15: ["ALTER TABLE sessions ADD COLUMN parent_session_id TEXT",
         "CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id)",
         """CREATE TABLE IF NOT EXISTS usage_ledger (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            created_timestamp INTEGER NOT NULL,
            model TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            total_tokens INTEGER,
            cache_read_tokens INTEGER,
            cache_write_tokens INTEGER,
            cost REAL,
            cost_source TEXT,
            is_compaction INTEGER DEFAULT 0
        )""",
         "CREATE INDEX IF NOT EXISTS idx_usage_ledger_session ON usage_ledger(session_id)"],
    16: ["CREATE INDEX IF NOT EXISTS idx_messages_session_created ON messages(session_id, created_timestamp, id)"],
    17: ["ALTER TABLE sessions ADD COLUMN parent_delegation TEXT"],
}


def _create(con: sqlite3.Connection) -> None:
    con.execute("PRAGMA journal_mode=WAL")
    for sql in CREATE:
        con.execute(sql)
    con.execute("INSERT INTO schema_version (version) VALUES (5)")
    for version, statements in sorted(MIGRATIONS.items()):
        for sql in statements:
            con.execute(sql)
    for version in range(6, 18):
        con.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))


def _import_legacy(con: sqlite3.Connection, path: Path) -> None:
    lines = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    meta, messages = lines[0], lines[1:]
    sid = path.stem
    started = messages[0]["created"]
    con.execute(
        "INSERT INTO sessions (id, name, user_set_name, session_type, working_dir, created_at, "
        "updated_at, extension_data, total_tokens, input_tokens, output_tokens, "
        "accumulated_total_tokens, accumulated_input_tokens, accumulated_output_tokens, schedule_id, "
        "recipe_json, user_recipe_values_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (sid, meta["description"], False, "user", meta["working_dir"], _rfc3339(started),
         _rfc3339(messages[-1]["created"]), json.dumps(meta.get("extension_data") or {}),
         meta.get("total_tokens"), meta.get("input_tokens"), meta.get("output_tokens"),
         meta.get("accumulated_total_tokens"), meta.get("accumulated_input_tokens"),
         meta.get("accumulated_output_tokens"), meta.get("schedule_id"), None, None))
    for m in messages:
        _insert(con, sid, m)


def _rfc3339(seconds: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat()  # sqlx's DateTime<Utc>


def _insert(con: sqlite3.Connection, sid: str, m: dict) -> int:
    cur = con.execute(
        "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json, message_id) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (sid, m["role"], json.dumps(m["content"]), m["created"],
         json.dumps(m.get("metadata") or {"userVisible": True, "agentVisible": True}), m.get("id")))
    if m.get("id") is None:  # add_message: a message with no id gets the one migration 7 gives
        con.execute("UPDATE messages SET message_id = 'msg_' || session_id || '_' || id WHERE id = ?",
                    (cur.lastrowid,))
    return cur.lastrowid


T = 1762336800  # 2025-11-05 10:00:00 UTC
NEW_MESSAGES = [
    {"role": "user", "created": T, "content": [{"type": "text", "text": "Why does `make test` hang on CI?"}]},
    {"role": "assistant", "created": T + 4, "content": [
        {"type": "text", "text": "Let me look at the test target."},
        {"type": "toolRequest", "id": "call_mk1", "toolCall": {"status": "success", "value": {
            "name": "developer__shell", "arguments": {"command": "grep -n '^test' -A3 Makefile"}}}}]},
    {"role": "user", "created": T + 5, "content": [
        {"type": "toolResponse", "id": "call_mk1", "toolResult": {"status": "success", "value": {
            "content": [{"type": "text", "text": "14:test:\n15:\tpytest --watch"}], "isError": False}}}]},
    {"role": "assistant", "created": T + 6, "content": [
        {"type": "reasoning", "text": "The other targets may hang the same way: worth a look."},
        {"type": "text", "text": "I'll have a sub-agent list the other targets."},
        {"type": "toolRequest", "id": "call_dl1", "toolCall": {"status": "success", "value": {
            "name": "delegate", "arguments": {"instructions": "Summarize the Makefile's targets."}}},
         "_meta": {"goose.toolSummary.title": "Delegate a Makefile summary",
                   "goose.toolChain.summary": {"summary": "Asked a sub-agent for the Makefile's targets",
                                               "count": 1}}}]},
    {"role": "user", "created": T + 8, "content": [
        {"type": "toolResponse", "id": "call_dl1", "toolResult": {"status": "success", "value": {
            "content": [{"type": "text", "text": "Targets: build, test (pytest --watch), lint."}],
            "isError": False, "_meta": {"subagent_session_id": SUB_ID}}}}]},
    {"role": "assistant", "created": T + 9, "content": [
        {"type": "text", "text": "`pytest --watch` never exits: CI waits forever. Drop `--watch` there."}]},
]
SUB_MESSAGES = [  # what the sub-agent's session holds (summon's run_subagent_task)
    {"role": "user", "created": T + 6, "content": [{"type": "text", "text": "Summarize the Makefile's targets."}]},
    {"role": "assistant", "created": T + 7, "content": [
        {"type": "toolRequest", "id": "call_sub1", "toolCall": {"status": "success", "value": {
            "name": "developer__text_editor", "arguments": {"command": "view", "path": "/home/dev/api/Makefile"}}}}]},
    {"role": "user", "created": T + 7, "content": [
        {"type": "toolResponse", "id": "call_sub1", "toolResult": {"status": "success", "value": {
            "content": [{"type": "text", "text": "build:\n\tgo build\ntest:\n\tpytest --watch\nlint:\n\truff ."}],
            "isError": False}}}]},
    {"role": "assistant", "created": T + 8, "content": [
        {"type": "text", "text": "Targets: build, test (pytest --watch), lint."}]},
]


# the usage ledger's rows of the session and its sub-agent's (`record_usage_metrics` →
# `insert_usage_ledger_row`, session_manager.rs at aaif-goose/goose 017176d): one per model call,
# recorded the second the reply came (created_timestamp), the input counting its cached parts, the
# cost Goose estimated from its price list; they add up to the sessions' accumulated_* totals
LEDGER = {
    NEW_ID: [  # (created, model, input, output, cache read, cache write, cost)
        (T + 4, "claude-sonnet-4-5", 1500, 60, 0, 1200, 0.0063),
        (T + 6, "claude-sonnet-4-5", 1620, 90, 1200, 0, 0.00297),
        (T + 9, "claude-sonnet-4-5", 1860, 80, 1500, 0, 0.00273),
    ],
    SUB_ID: [
        (T + 7, "claude-haiku-4-5", 600, 30, 0, 0, 0.00075),
        (T + 8, "claude-haiku-4-5", 650, 40, 0, 0, 0.00085),
    ],
}


def _write_ledger(con: sqlite3.Connection) -> None:
    """The ledger rows, and the session rows' cached counts and cost that Goose adds up with them."""
    for sid, rows in LEDGER.items():
        for created, model, inp, out, read, write, cost in rows:
            con.execute(
                "INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, "
                "total_tokens, cache_read_tokens, cache_write_tokens, cost, cost_source, is_compaction) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'estimated', 0)",
                (sid, created, model, inp, out, inp + out, read, write, cost))
        con.execute("UPDATE sessions SET accumulated_cache_read_tokens = ?, accumulated_cache_write_tokens = ?, "
                    "accumulated_cost = ? WHERE id = ?",
                    (sum(r[4] for r in rows), sum(r[5] for r in rows), round(sum(r[6] for r in rows), 6), sid))


def build(db: Path, keep_open: bool = False, ledger: bool = True) -> sqlite3.Connection | None:
    """A Goose database at `db`: the legacy sessions imported, and one session (with a sub-agent's)
    begun since, with the usage ledger's rows of their model calls (`ledger=False`: as a session
    Goose ran before schema 15 holds, only its totals)."""
    con = sqlite3.connect(db, isolation_level=None)
    _create(con)
    for path in LEGACY:
        _import_legacy(con, path)
    con.execute(
        "INSERT INTO sessions (id, name, user_set_name, session_type, working_dir, extension_data, "
        "provider_name, model_config_json, goose_mode, created_at, updated_at, accumulated_total_tokens, "
        "accumulated_input_tokens, accumulated_output_tokens) VALUES (?, ?, FALSE, 'user', ?, '{}', ?, ?, "
        "'auto', ?, ?, ?, ?, ?)",
        (NEW_ID, "CI test hang", "/home/dev/api", "anthropic",
         json.dumps({"model_name": "claude-sonnet-4-5", "context_limit": 200000, "temperature": None,
                     "max_tokens": None, "toolshim": False, "toolshim_model": None}),
         "2025-11-05 10:00:00", "2025-11-05 10:00:09", 5210, 4980, 230))
    for m in NEW_MESSAGES:
        _insert(con, NEW_ID, m)
    con.execute("INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at, "
                "parent_session_id, provider_name, model_config_json, accumulated_total_tokens, "
                "accumulated_input_tokens, accumulated_output_tokens) VALUES (?, 'Delegated task', "
                "'sub_agent', '/home/dev/api', '2025-11-05 10:00:06', '2025-11-05 10:00:08', ?, ?, ?, ?, ?, ?)",
                (SUB_ID, NEW_ID, "anthropic", json.dumps({"model_name": "claude-haiku-4-5"}), 1320, 1250, 70))
    for m in SUB_MESSAGES:
        _insert(con, SUB_ID, m)
    if ledger:
        _write_ledger(con)
    if keep_open:
        return con
    con.close()
    return None


def write_message(con: sqlite3.Connection, sid: str, message: dict, now: str) -> int:
    """Append a message as a running Goose does (`add_message`), the session's `updated_at` moved."""
    rowid = _insert(con, sid, message)
    con.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, sid))
    return rowid
