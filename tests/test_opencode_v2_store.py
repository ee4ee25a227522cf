"""OpenCode 2.x's store: sessions in `session_v2`, messages in `session_message`, the 1.x tables
frozen beside them (or absent in a database 2.x made).

The rows are built from anomalyco/opencode packages/core/src/session-message.ts (at
7d5e0bc00a0f5dbfb2caedb6d0704b351d4346c7: SessionMessage — user {text, files, agents,
references}, assistant {agent, model {id, providerID}, content: [text | reasoning | tool {id, name,
state {status, input, content, structured, error}, time}], cost, tokens, finish}, synthetic,
shell, compaction {reason, summary}, agent-switched, model-switched; the row holds the message
without its `type` and `id`, which are columns), tool-output.ts (a tool's content items
`{type: "text", text}` / `{type: "file"}`), session/session.sql.ts, and the tables readers of real
2.x databases report (`session_v2(id, project_id, …, title, version, …, time_created,
time_updated…)`, `session_message(id, session_id, type, seq, time_created, time_updated, data)`:
Dicklesworthstone/cross_agent_session_resumer#30, JingbiaoMei/Tokdash#99, nicosuave/memex#195:
"v1 tables in place but frozen", the 1.x messages copied into session_message with their ids)."""

import json
import sqlite3

from viewer.index import SessionIndex, identity_matches
from viewer.store import Store
from viewer.timeline import load_events

from conftest import opencode_make_db

SESSION_V2 = """CREATE TABLE `session_v2` (`id` text PRIMARY KEY, `project_id` text NOT NULL,
 `workspace_id` text, `parent_id` text, `fork_session_id` text, `fork_boundary` text, `slug` text NOT NULL,
 `directory` text NOT NULL, `path` text, `title` text, `version` text NOT NULL, `share_url` text,
 `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
 `metadata` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
 `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
 `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL,
 `revert` text, `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL,
 `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer, `time_suspended` integer)"""
SESSION_MESSAGE = """CREATE TABLE `session_message` (`id` text PRIMARY KEY, `session_id` text NOT NULL,
 `type` text NOT NULL, `seq` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
 `data` text NOT NULL)"""

SID, CHILD = "ses_6f0a1b2c3d4e5FfGgHhIiJjKkL", "ses_6f0a1b2c3d4f9MmNnOoPpQqRrS"
T = 1_790_000_000_000


def _messages():
    tool = lambda cid, name, status, inp, **more: {"type": "tool", "id": cid, "name": name, "state": {
        "status": status, "input": inp, **more}, "time": {"created": T + 4000, "ran": T + 4100, "completed": T + 5300}}
    return [
        ("msg_01", "user", {"text": "Why does total() double count refunds? @explore",
                            "agents": [{"name": "explore"}], "time": {"created": T}}),
        ("msg_02", "agent-switched", {"agent": "build", "time": {"created": T + 500}}),
        ("msg_03", "assistant", {
            "agent": "build", "model": {"id": "claude-sonnet-4-5", "providerID": "anthropic"},
            "content": [{"type": "reasoning", "id": "r1", "text": "Look at the refund branch first."},
                        {"type": "text", "text": "Running the tests."},
                        tool("call_bash_1", "bash", "completed", {"command": "pytest -q"},
                             content=[{"type": "text", "text": "1 failed, 9 passed"}],
                             structured={"exit": 1}),
                        tool("call_read_2", "read", "error", {"filePath": "/srv/shop/nope.py"},
                             content=[], structured={}, error={"message": "File not found: /srv/shop/nope.py"}),
                        tool("call_grep_3", "grep", "completed", {"pattern": "refund"},
                             content=[{"type": "text", "text": "cart.py:12: refund"}], structured={})],
            "cost": 0.0123, "finish": "tool-calls",
            "tokens": {"input": 1200, "output": 300, "reasoning": 40, "cache": {"read": 800, "write": 0}},
            "time": {"created": T + 1000, "completed": T + 6000}}),
        ("msg_04", "synthetic", {"sessionID": SID, "text": "Called the Read tool with {filePath: cart.py}",
                                 "time": {"created": T + 6500}}),
        ("msg_05", "compaction", {"reason": "auto", "summary": "We traced the double count to cart.py:12.",
                                  "time": {"created": T + 7000}}),
        ("msg_06", "location-switched", {"directory": "/srv/shop/api", "time": {"created": T + 8000}}),
    ]


def _v2_tables(con):
    con.execute(SESSION_V2)
    con.execute(SESSION_MESSAGE)


def _add_session(con, sid, title, messages, parent=None):
    con.execute("INSERT INTO session_v2 (id, project_id, parent_id, slug, directory, title, version, "
                "time_created, time_updated) VALUES (?, 'prj', ?, 'calm-otter', '/srv/shop', ?, '2.0.12', ?, ?)",
                (sid, parent, title, T, T + 9000))
    for seq, (mid, kind, data) in enumerate(messages):
        con.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (mid, sid, kind, seq, data["time"]["created"], data["time"]["created"], json.dumps(data)))


def _v2_database(tmp_path):
    folder = tmp_path / "opencode"
    folder.mkdir()
    con = sqlite3.connect(folder / "opencode.db")
    _v2_tables(con)
    _add_session(con, SID, "Refunds counted twice", _messages())
    _add_session(con, CHILD, "Find refund callers (@explore subagent)",
                 [("msg_c1", "user", {"text": "Find the callers of refund()", "time": {"created": T + 4200}})],
                 parent=SID)
    con.commit()
    con.close()
    return folder


def test_a_2x_database_lists_and_reads_its_sessions(tmp_path):
    folder = _v2_database(tmp_path)
    st = Store([folder])
    rows = {r.key: r for r in st.sessions()}
    assert set(rows) == {f"opencode.db~{SID}", f"opencode.db~{CHILD}"}
    st.index(f"opencode.db~{SID}")
    row = st.summary_of(f"opencode.db~{SID}")
    assert (row.format, row.title, row.models) == ("opencode", "Refunds counted twice", ["claude-sonnet-4-5"])

    idx = SessionIndex(folder / "opencode.db" / SID).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    shown = [e for e in evs if not e.hidden]
    prompt = next(e for e in shown if e.role == "user")
    assert prompt.text().startswith("Why does total() double count refunds?")
    reply = next(e for e in shown if e.role == "assistant" and e.tool_uses())
    assert [b.kind for b in reply.blocks][:2] == ["thinking", "text"]
    # each call matched to its result, in the state OpenCode gave it (bash's exit code decides)
    assert {c.id: c.state for c in idx.calls.calls.values()} == {
        "call_bash_1": "error", "call_read_2": "error", "call_grep_3": "completed"}
    assert not idx.calls.orphans
    read = next(r for e in evs for r in e.tool_results() if r.tool_use_id == "call_read_2")
    assert read.content[0].text == "File not found: /srv/shop/nope.py"
    assert reply.model == "claude-sonnet-4-5" and reply.usage["input_tokens"] == 1200
    assert reply.usage["cost"] == 0.0123
    # the agent switch a notice; OpenCode's own text a chip; the compaction its summary card; a
    # kind newer than this reader shown with its fields
    assert any(b.kind == "notice" and b.text == "agent: build" for e in shown for b in e.blocks)
    assert any(b.kind == "context" and "Called the Read tool" in b.text for e in evs for b in e.blocks)
    summary = next(e for e in evs if e.kind == "compact_summary")
    assert "traced the double count" in summary.text()
    future = next(e for e in evs if any(b.kind == "data" for b in e.blocks))
    assert future.blocks[-1].value == {"directory": "/srv/shop/api"}
    # the sub-agent's session (parent_id) nests under its parent
    child = SessionIndex(folder / "opencode.db" / CHILD).build()
    assert child.info.get("parent_session") == SID


def test_a_migrated_database_lists_each_session_once_and_reads_its_2x_messages(tmp_path):
    """A 1.x database OpenCode 2.x migrated: the 1.x tables stay (frozen) beside the 2.x ones; a 1.x
    session whose messages were copied into session_message is read from there, once; one 2.x
    never touched stays in 1.x's tables and reads from them; a new 2.x session lists too."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    make_db = opencode_make_db()
    make_db.build(folder / "opencode.db")
    con = sqlite3.connect(folder / "opencode.db")
    before = {r[0]: r[1] for r in con.execute("SELECT id, title FROM session")}
    _v2_tables(con)
    old = "ses_53a1c2d3e001aAbBcCdDeEfFgG"
    _add_session(con, old, before[old] + " (2.x)",
                 [("msg_a1c2d3e00101AAAAAAAAAAAAAA", "user", {"text": "the copied prompt", "time": {"created": T}})])
    _add_session(con, SID, "Refunds counted twice", _messages())
    con.commit()
    con.close()
    rows = Store([folder]).sessions()
    keys = sorted(r.key for r in rows)
    assert len(keys) == len(set(keys)) == len(before) + 1
    idx = SessionIndex(folder / "opencode.db" / old).build()
    assert idx.summary.title == before[old] + " (2.x)"
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert [e.text() for e in evs if e.role == "user"] == ["the copied prompt"]
    untouched = next(s for s in before if s != old)
    assert SessionIndex(folder / "opencode.db" / untouched).build().summary.title == before[untouched]


def test_a_2x_session_being_written_is_seen_changing(tmp_path):
    """OpenCode 2.x appends a message row and rewrites it in place as it streams: the session's
    identity changes each time and a refresh reads the message as last written."""
    folder = _v2_database(tmp_path)
    store = Store([folder])
    key = f"opencode.db~{SID}"
    idx = store.index(key)
    n = len(idx.threads["main"])
    assert identity_matches(idx.files())
    con = sqlite3.connect(folder / "opencode.db")
    reply = {"agent": "build", "model": {"id": "claude-sonnet-4-5", "providerID": "anthropic"},
             "content": [{"type": "text", "text": "Fixing cart.py"}], "time": {"created": T + 9500}}
    con.execute("INSERT INTO session_message VALUES ('msg_07', ?, 'assistant', 99, ?, ?, ?)",
                (SID, T + 9500, T + 9500, json.dumps(reply)))
    con.commit()
    assert not identity_matches(idx.files())
    idx, _ = store.refresh(key)
    assert len(idx.threads["main"]) == n + 1
    reply["content"][0]["text"] = "Fixing cart.py: refunds are now subtracted once."
    con.execute("UPDATE session_message SET data = ?, time_updated = ? WHERE id = 'msg_07'",
                (json.dumps(reply), T + 9900))
    con.commit()
    con.close()
    assert not identity_matches(idx.files())
    idx, _ = store.refresh(key)
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert evs[-1].text() == "Fixing cart.py: refunds are now subtracted once."
