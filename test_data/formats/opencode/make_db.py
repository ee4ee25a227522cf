"""Build an OpenCode 1.2+ database (`opencode.db`) from the file storage in `data/storage`, as
OpenCode does on its first start after the upgrade: the tables made by OpenCode's own migrations
(DDL below, verbatim), the files copied in by `storage/json-migration.ts`'s rules (ids from the file
names, `data` = the JSON without the ids the columns hold, times from the JSON). WAL mode, as
`storage/db.ts` sets it.

    python test_data/formats/opencode/make_db.py       # writes db/opencode.db

Tests import `build(db_path, storage)` to make databases of their own (then grow them, lock them,
damage them); `write_message` / `write_part` add rows as a running OpenCode does.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# packages/opencode/migration/20260127222353_familiar_lady_ursula/migration.sql (OpenCode 1.2.0's
# first migration; drizzle's `--> statement-breakpoint` separators dropped)
FIRST_MIGRATION = """
CREATE TABLE `project` (
	`id` text PRIMARY KEY,
	`worktree` text NOT NULL,
	`vcs` text,
	`name` text,
	`icon_url` text,
	`icon_color` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_initialized` integer,
	`sandboxes` text NOT NULL
);
CREATE TABLE `message` (
	`id` text PRIMARY KEY,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `part` (
	`id` text PRIMARY KEY,
	`message_id` text NOT NULL,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
);
CREATE TABLE `permission` (
	`project_id` text PRIMARY KEY,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_permission_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE TABLE `session` (
	`id` text PRIMARY KEY,
	`project_id` text NOT NULL,
	`parent_id` text,
	`slug` text NOT NULL,
	`directory` text NOT NULL,
	`title` text NOT NULL,
	`version` text NOT NULL,
	`share_url` text,
	`summary_additions` integer,
	`summary_deletions` integer,
	`summary_files` integer,
	`summary_diffs` text,
	`revert` text,
	`permission` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_compacting` integer,
	`time_archived` integer,
	CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE TABLE `todo` (
	`session_id` text NOT NULL,
	`content` text NOT NULL,
	`status` text NOT NULL,
	`priority` text NOT NULL,
	`position` integer NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`),
	CONSTRAINT `fk_todo_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `session_share` (
	`session_id` text PRIMARY KEY,
	`id` text NOT NULL,
	`secret` text NOT NULL,
	`url` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	CONSTRAINT `fk_session_share_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE INDEX `message_session_idx` ON `message` (`session_id`);
CREATE INDEX `part_message_idx` ON `part` (`message_id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `todo_session_idx` ON `todo` (`session_id`);
"""

# the session columns later releases added (packages/opencode/src/session/session.sql.ts as of
# 2026: workspace_id, path, cost and tokens_*, agent, model), and its newer indexes
LATER_MIGRATIONS = """
ALTER TABLE `session` ADD `workspace_id` text;
ALTER TABLE `session` ADD `path` text;
ALTER TABLE `session` ADD `cost` real DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_input` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_output` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_reasoning` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_cache_read` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_cache_write` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `agent` text;
ALTER TABLE `session` ADD `model` text;
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
"""


def _json(path: Path):
    return json.loads(path.read_text())


def _dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def connect(db: Path) -> sqlite3.Connection:
    """A writer's connection, set up as storage/db.ts sets OpenCode's."""
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    con.execute("PRAGMA busy_timeout = 5000")
    con.execute("PRAGMA foreign_keys = ON")
    return con


def build(db: Path, storage: Path = HERE / "data" / "storage", *, current: bool = True,
          keep_open: bool = False):
    """Make `db` from a file storage folder; returns the open connection when `keep_open` (a
    running OpenCode: its -wal and -shm files stay), else closes it (they go)."""
    db = Path(db)
    con = connect(db)
    con.executescript(FIRST_MIGRATION + (LATER_MIGRATIONS if current else ""))
    con.execute("BEGIN")
    for f in sorted((storage / "project").glob("*.json")):
        data = _json(f)
        t = data.get("time") or {}
        con.execute("INSERT INTO project (id, worktree, vcs, name, time_created, time_updated, "
                    "time_initialized, sandboxes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (f.stem, data.get("worktree", "/"), data.get("vcs"), data.get("name"),
                     t.get("created", 0), t.get("updated", t.get("created", 0)),
                     t.get("initialized"), _dumps(data.get("sandboxes", []))))
    sessions = set()
    for f in sorted((storage / "session").glob("*/*.json")):
        data = _json(f)
        t, summary = data.get("time") or {}, data.get("summary") or {}
        sessions.add(f.stem)
        con.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, "
            "share_url, summary_additions, summary_deletions, summary_files, revert, permission, "
            "time_created, time_updated, time_compacting, time_archived) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (f.stem, f.parent.name, data.get("parentID"), data.get("slug", ""),
             data.get("directory", ""), data.get("title", ""), data.get("version", ""),
             (data.get("share") or {}).get("url"), summary.get("additions"),
             summary.get("deletions"), summary.get("files"),
             _dumps(data["revert"]) if data.get("revert") else None,
             _dumps(data["permission"]) if data.get("permission") else None,
             t.get("created", 0), t.get("updated", t.get("created", 0)), t.get("compacting"),
             t.get("archived")))
    for folder in sorted((storage / "message").iterdir()):
        if folder.name not in sessions:
            continue
        for f in sorted(folder.glob("*.json")):
            write_message(con, folder.name, _json(f), f.stem)
            for p in sorted((storage / "part" / f.stem).glob("*.json")):
                write_part(con, folder.name, f.stem, _json(p), p.stem)
    for f in sorted((storage / "todo").glob("*.json")):
        if f.stem in sessions:
            for position, todo in enumerate(_json(f)):
                con.execute("INSERT INTO todo VALUES (?, ?, ?, ?, ?, 0, 0)",
                            (f.stem, todo["content"], todo["status"], todo["priority"], position))
    con.execute("COMMIT")
    if keep_open:
        return con
    con.close()
    return None


def write_message(con, session: str, info: dict, mid: str | None = None, now: int | None = None):
    """Insert (or rewrite) a message row as Session.updateMessage does."""
    data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
    t = info.get("time") or {}
    mid = mid or info["id"]
    con.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data, "
                "time_updated = excluded.time_updated",
                (mid, session, t.get("created", 0),
                 now or t.get("completed") or t.get("created", 0), _dumps(data)))


def write_part(con, session: str, message: str, part: dict, pid: str | None = None,
               now: int | None = None):
    """Insert (or rewrite in place) a part row as Session.updatePart does."""
    data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
    t = part.get("time") if isinstance(part.get("time"), dict) else {}
    pid = pid or part["id"]
    con.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data, "
                "time_updated = excluded.time_updated",
                (pid, message, session, t.get("start", 0), now or t.get("end") or t.get("start", 0),
                 _dumps(data)))


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "db" / "opencode.db"
    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{out}{suffix}").unlink(missing_ok=True)
    build(out)
    print(out)
