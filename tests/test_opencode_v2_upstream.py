"""OpenCode 2.x's database in the exact layout upstream writes: the session row stays in `session`
(with 2.x's columns), messages are `session_message` rows read in `seq` order, the 1.x `message` /
`part` tables beside them. Shapes from anomalyco/opencode (formerly sst/opencode):
packages/core/src/session/sql.ts at 02ce4a330f33fee005fb5a18c0e3ec6e1143caee (SessionTable,
MessageTable, PartTable, SessionMessageTable, SessionInputTable), message.ts at
08e3e1f96710fd498f6b1f428ad0f250e9af96c4 (SessionMessage: user, synthetic, system, shell,
assistant with text / reasoning / tool {state pending | running | completed | error}, compaction
{reason, summary, recent}, agent-switched, model-switched), prompt.ts at
02973df1cca3df0a8b9e0c6d9739609c484a7d26 (a prompt's file is a FileAttachment {data (base64),
mime, source, name, description, mention})."""

import json
import sqlite3

from viewer.index import SessionIndex
from viewer.store import Store
from viewer.timeline import load_events

SESSION = """CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text,
 `parent_id` text, `fork_session_id` text, `fork_message_id` text, `slug` text NOT NULL, `directory` text NOT NULL,
 `path` text, `title` text NOT NULL, `version` text NOT NULL, `share_url` text, `summary_additions` integer,
 `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `metadata` text,
 `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL,
 `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL,
 `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text, `permission` text, `agent` text, `model` text,
 `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer)"""
MESSAGE = """CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
 `time_updated` integer NOT NULL, `data` text NOT NULL)"""
PART = """CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
 `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)"""
SESSION_MESSAGE = """CREATE TABLE `session_message` (`id` text PRIMARY KEY, `session_id` text NOT NULL,
 `type` text NOT NULL, `seq` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
 `data` text NOT NULL)"""
SESSION_INPUT = """CREATE TABLE `session_input` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL,
 `data` text NOT NULL, `delivery` text, `admitted_seq` integer NOT NULL, `promoted_seq` integer,
 `time_created` integer NOT NULL)"""

SID = "ses_7a0b1c2d3e4f5AaBbCcDdEeFfG"
T = 1_795_000_000_000
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="


def messages():
    """(id, type, seq, data): ids made so that their order is not the conversation's (`seq` is)."""
    return [
        ("msg_zz", "user", 0, {"text": "What is on this screenshot?", "files": [
            {"data": PNG, "mime": "image/png", "source": {"type": "uri", "uri": "file:///tmp/shot.png"},
             "name": "shot.png"}], "agents": [], "references": [], "time": {"created": T}}),
        ("msg_aa", "system", 1, {"text": "The working directory is now /srv/app.", "time": {"created": T + 100}}),
        ("msg_mm", "assistant", 2, {
            "agent": "build", "model": {"id": "gpt-5.1", "providerID": "openai"},
            "content": [{"type": "text", "id": "t1", "text": "Reading it."},
                        {"type": "tool", "id": "call_r", "name": "read", "state": {
                            "status": "error", "input": {"filePath": "/srv/app/missing.txt"}, "content": [],
                            "structured": {}, "error": {"message": "File not found: /srv/app/missing.txt"}},
                         "time": {"created": T + 1200, "ran": T + 1300, "completed": T + 1400}},
                        {"type": "tool", "id": "call_s", "name": "screenshot", "state": {
                            "status": "completed", "input": {}, "content": [{"type": "text", "text": "captured"}],
                            "structured": {}, "outputPaths": [], "result": {},
                            "attachments": [{"data": PNG, "mime": "image/png", "source": {"type": "inline"},
                                             "name": "screen.png"}]},
                         "time": {"created": T + 1500, "ran": T + 1600, "completed": T + 2600}}],
            "cost": 0.004, "finish": "tool-calls",
            "tokens": {"input": 900, "output": 50, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            "time": {"created": T + 1000, "completed": T + 2700}}),
        ("msg_bb", "compaction", 3, {"reason": "auto", "summary": "A screenshot of the login page was read.",
                                     "recent": "", "time": {"created": T + 3000}}),
    ]


def database(tmp_path):
    folder = tmp_path / "opencode"
    folder.mkdir()
    con = sqlite3.connect(folder / "opencode.db")
    for sql in (SESSION, MESSAGE, PART, SESSION_MESSAGE, SESSION_INPUT):
        con.execute(sql)
    con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, agent, model, "
                "time_created, time_updated) VALUES (?, 'prj', 'calm-otter', '/srv/app', ?, '2.1.4', 'build', ?, ?, ?)",
                (SID, "Screenshot question", json.dumps({"id": "gpt-5.1", "providerID": "openai"}), T, T + 3000))
    for mid, kind, seq, data in messages():
        con.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (mid, SID, kind, seq, data["time"]["created"], data["time"]["created"], json.dumps(data)))
    con.commit()
    con.close()
    return folder


def test_a_session_of_upstream_2x_layout_reads_in_seq_order_with_its_context_and_images(tmp_path):
    folder = database(tmp_path)
    st = Store([folder])
    assert [r.key for r in st.sessions()] == [f"opencode.db~{SID}"]
    idx = SessionIndex(folder / "opencode.db" / SID).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    order = [e.source_id for e in evs if e.source_id and e.source_id.startswith("msg_")]
    assert order == ["msg_zz", "msg_aa", "msg_mm", "msg_bb"]  # seq, not the ids' order
    by_id = {e.source_id: e for e in evs}
    # the person's screenshot is an image on the prompt, not a bare "attached" line
    prompt = by_id["msg_zz"]
    image = next(b for b in prompt.blocks if b.kind == "media")
    assert (image.media, image.media_type, image.name, image.data) == ("image", "image/png", "shot.png", PNG)
    # a context update (SessionMessage.System) is a context chip with its text, not a data card
    system = by_id["msg_aa"]
    assert [(b.kind, b.text) for b in system.blocks if b.kind == "context"] == [
        ("context", "The working directory is now /srv/app.")]
    assert not any(b.kind == "data" for b in system.blocks)
    # the failed read says why; the screenshot tool's attachment is an image on its result
    assert idx.calls.calls["call_r"].state == "error"
    results = {r.tool_use_id: r for e in evs for r in e.tool_results()}
    assert results["call_r"].content[0].text == "File not found: /srv/app/missing.txt"
    assert any(b.kind == "media" and b.name == "screen.png" for b in results["call_s"].content)
    assert idx.calls.calls["call_s"].duration == 1.0  # its run, ran → completed


def test_a_prompt_still_queued_in_session_input_is_shown_after_the_messages(tmp_path):
    """A prompt sent while the agent works is a session_input row until OpenCode takes it in
    (SessionInputTable in sql.ts at 02ce4a33: `type`, `data` UserData, `delivery`, `admitted_seq`,
    `promoted_seq` null while it waits; input.ts at 0550cd8e: delivery steer | queue, promoted
    rows become session_message rows with the same id). The waiting ones were not shown at all:
    the person's last words were missing from the page. A promoted row is its message, shown once."""
    folder = database(tmp_path)
    con = sqlite3.connect(folder / "opencode.db")
    con.execute("INSERT INTO session_input VALUES ('msg_q1', ?, 'user', ?, 'queue', 5, NULL, ?)",
                (SID, json.dumps({"text": "Then fix the login page too.", "files": [], "agents": [],
                                  "references": []}), T + 4000))
    con.execute("INSERT INTO session_input VALUES ('msg_q0', ?, 'user', ?, 'steer', 4, NULL, ?)",
                (SID, json.dumps({"text": "Use the staging server.", "files": [], "agents": [],
                                  "references": []}), T + 3500))
    con.execute("INSERT INTO session_input VALUES ('msg_zz', ?, 'user', ?, 'queue', 0, 0, ?)",
                (SID, json.dumps({"text": "What is on this screenshot?"}), T))
    con.commit()
    con.close()
    idx = SessionIndex(folder / "opencode.db" / SID).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    order = [e.source_id for e in evs if e.source_id and e.source_id.startswith("msg_")]
    assert order == ["msg_zz", "msg_aa", "msg_mm", "msg_bb", "msg_q0", "msg_q1"]
    by_id = {e.source_id: e for e in evs}
    steer, queued = by_id["msg_q0"], by_id["msg_q1"]
    assert steer.role == queued.role == "user" and not queued.hidden
    assert queued.blocks[0].kind == "notice" and "not sent yet" in queued.blocks[0].text
    assert "steer" in steer.blocks[0].text
    assert queued.text().endswith("Then fix the login page too.")
    assert evs[0].kind == "session" and evs[0].source_id == f"session-{SID}"  # (still the session's card)
