"""Sessions kept in database rows (Goose's sessions.db, AgentScope Studio's database.sqlite) are read
on as the program writes, as a growing JSONL file is: a new row adds its events to the index, the
events before keep their ids and the index its build (an open page is not reloaded), the database is
not read whole again — and a row before them that changed (a message streamed further, a
conversation compacted) reads the session whole again, as before. What a later row says of an
earlier event (a reply's usage) is taken in place. Studio's run status, the spans it traced that
are not model calls, its agents' open input requests and a message's speech are shown."""

import json
import os
import sqlite3
import time
from pathlib import Path

from viewer.formats import rowdb, rowfold
from viewer.index import SessionIndex
from viewer.store import Store
from viewer.timeline import load_events

from conftest import goose_make_db, studio_make_db

studio = studio_make_db()
goose = goose_make_db()
RUN_KEY = f"database.sqlite~{studio.RUN}"
GOOSE_KEY = f"sessions.db~{goose.NEW_ID}"


def studio_db(tmp_path: Path, status: str = "running"):
    folder = tmp_path / "AgentScope-Studio"
    folder.mkdir(parents=True)
    con = studio.build(folder / "database.sqlite", keep_open=True)
    con.execute("UPDATE run_table SET status = ? WHERE id = ?", (status, studio.RUN))
    return folder, con


def goose_db(tmp_path: Path):
    folder = tmp_path / "sessions"
    folder.mkdir(parents=True)
    return folder, goose.build(folder / "sessions.db", keep_open=True)


def shape(idx) -> list:
    th = idx.threads["main"]
    return list(zip(th.ids, th.roles, th.kinds, th.hidden))


def same_usage(a, b) -> bool:
    """Whether two indexes count the same usage (their buckets in any order)."""
    ua, ub = dict(a.summary.usage), dict(b.summary.usage)
    return sorted(ua.pop("buckets")) == sorted(ub.pop("buckets")) and ua == ub


def whole(path: Path) -> SessionIndex:
    rowfold.forget()  # (a new process: nothing read before)
    return SessionIndex(path).build()


MSG = {"id": "m_more", "name": "Friday", "role": "assistant", "metadata": None,
       "timestamp": "2026-11-20 14:03:09.000", "content": [
           {"type": "tool_use", "id": "call_live", "name": "execute_shell_command", "input": {"command": "ls"}}]}


def test_a_message_pushed_to_a_running_studio_run_extends_its_index_keeping_every_id(tmp_path):
    folder, con = studio_db(tmp_path)
    try:
        store = Store([folder])
        idx = store.index(RUN_KEY)
        build, before = idx.build_id, shape(idx)
        studio.push(con, studio.RUN, MSG, "r_more", "Friday", "assistant")
        idx, change = store.refresh(RUN_KEY)
        assert not change.reset and change.new == {"main": len(before)}
        assert idx.build_id == build and shape(idx)[:len(before)] == before
        assert idx.threads["main"].ids[-1] == "m_more" and idx.calls.calls["call_live"].status == "pending"
        studio.push(con, studio.RUN, {**MSG, "id": "m_res", "name": "system", "role": "system", "content": [
            {"type": "tool_result", "id": "call_live", "name": "execute_shell_command", "output": "notes.txt"}]},
                    "r_more", "Friday", "assistant")
        idx, change = store.refresh(RUN_KEY)
        assert not change.reset and change.new == {"main": len(before) + 1}
        assert idx.calls.calls["call_live"].status == "completed"
        # read on: the run was read whole once, its new rows alone since
        fold = rowfold.kept(str(folder / "database.sqlite" / studio.RUN), idx.adapter())
        assert fold.whole_reads == 1
        # the page reads the same events, and what a fresh read of the database gives
        evs = load_events(idx, "main", 0, len(idx.threads["main"]))
        assert [e.id for e in evs] == idx.threads["main"].ids
        assert shape(whole(folder / "database.sqlite" / studio.RUN)) == shape(idx)
    finally:
        con.close()


def test_a_model_call_traced_after_its_message_is_counted_on_it_in_place(tmp_path):
    folder, con = studio_db(tmp_path)
    try:
        store = Store([folder])
        store.index(RUN_KEY)
        studio.push(con, studio.RUN, MSG, "r_more", "Friday", "assistant")
        idx, _ = store.refresh(RUN_KEY)
        calls, seq = idx.summary.usage["calls"], len(idx.threads["main"]) - 1
        studio.trace(con, studio.RUN, "s_more", None, "invoke_agent", "invoke_agent Friday", None, None, None,
                     "Friday", 9)
        studio.trace(con, studio.RUN, "s_c9", "s_more", "chat", "chat qwen-max", "qwen-max", 700, 20, None, 9)
        idx, change = store.refresh(RUN_KEY)
        assert not change.reset and not change.new and ("main", seq) in change.events
        assert idx.summary.usage["calls"] == calls + 1
        ev = load_events(idx, "main", seq, seq + 1)[0]
        assert (ev.model, ev.usage) == ("qwen-max", {"input_tokens": 700, "output_tokens": 20})
        assert ev.ref.offset > 0  # (another card than the one drawn before: web/cards.py)
        assert same_usage(idx, whole(folder / "database.sqlite" / studio.RUN))
    finally:
        con.close()


def test_a_studio_message_streaming_on_is_read_again_in_its_place(tmp_path):
    """AgentScope pushes a message again on each chunk it streams: the last message's text growing
    is taken in place (its card drawn again), a call appearing in it reads the run whole."""
    folder, con = studio_db(tmp_path)
    try:
        store = Store([folder])
        idx = store.index(RUN_KEY)
        speaking = {**MSG, "content": [{"type": "text", "text": "Listing"}]}
        studio.push(con, studio.RUN, speaking, "r_more", "Friday", "assistant")
        idx, _ = store.refresh(RUN_KEY)
        build, seq = idx.build_id, len(idx.threads["main"]) - 1
        studio.push(con, studio.RUN, {**speaking, "content": [{"type": "text", "text": "Listing the folder."}]},
                    "r_more", "Friday", "assistant")
        idx, change = store.refresh(RUN_KEY)
        assert not change.reset and idx.build_id == build and change.events == {("main", seq)}
        assert load_events(idx, "main", seq, seq + 1)[0].text() == "Listing the folder."
        studio.push(con, studio.RUN, {**speaking, "content": [{"type": "text", "text": "Listing the folder."},
                                                              *MSG["content"]]}, "r_more", "Friday", "assistant")
        idx, change = store.refresh(RUN_KEY)
        assert change.reset and idx.calls.calls["call_live"].status == "pending"
        assert shape(idx) == shape(whole(folder / "database.sqlite" / studio.RUN))
    finally:
        con.close()


def test_a_studio_message_pushed_again_or_a_run_that_ends_reads_as_a_fresh_read_does(tmp_path):
    folder, con = studio_db(tmp_path)
    try:
        store = Store([folder])
        idx = store.index(RUN_KEY)
        build = idx.build_id
        # a message streamed further: saved again under its id, in its place — read whole again
        studio.push(con, studio.RUN, {**studio.CONVERSATION[3][3], "content": "notes.txt lists two tasks. Done."},
                    "r_friday", "Friday", "assistant")
        idx, change = store.refresh(RUN_KEY)
        assert change.reset and idx.build_id != build
        assert load_events(idx, "main", 4, 5)[0].text().endswith("Done.")
        # the run ends: what was traced that no message belongs to (a function of no reply) comes
        # after its messages, read on
        studio.trace(con, studio.RUN, "s_fn", None, "invoke_generic_function",
                     "invoke_generic_function load_notes", None, None, None, None, 6)
        idx, change = store.refresh(RUN_KEY)
        assert not change.new and not change.reset  # (it waits while the run runs)
        build, n = idx.build_id, len(idx.threads["main"])
        con.execute("UPDATE run_table SET status = 'done' WHERE id = ?", (studio.RUN,))
        idx, change = store.refresh(RUN_KEY)
        assert not change.reset and idx.build_id == build and change.new == {"main": n}
        assert idx.summary.status == "done"
        assert shape(idx) == shape(whole(folder / "database.sqlite" / studio.RUN))
    finally:
        con.close()


def test_studio_s_run_status_input_requests_and_speech_are_shown(tmp_path):
    folder, con = studio_db(tmp_path)
    try:
        store = Store([folder])
        assert store.index(RUN_KEY).summary.status == "running"
        assert store.index(f"database.sqlite~{studio.OTHER}").summary.status == "running"
        con.execute('CREATE TABLE "input_request_table" ("requestId" varchar PRIMARY KEY NOT NULL, '
                    '"agentId" varchar NOT NULL, "agentName" varchar NOT NULL, "structuredInput" json, '
                    '"run_id" varchar NOT NULL)')
        con.execute('INSERT INTO "input_request_table" VALUES (?, ?, ?, ?, ?)',
                    ("req1", "a1", "Friday", '{"type": "object", "properties": {"ok": {"type": "boolean"}}}',
                     studio.RUN))
        con.execute("UPDATE message_table SET speech = ? WHERE id = 'm_critic'", (
            '[{"type": "audio", "source": {"type": "url", "url": "https://example.com/critic.wav", '
            '"media_type": "audio/wav"}}]',))
        idx, _ = store.refresh(RUN_KEY)
        evs = load_events(idx, "main", 0, len(idx.threads["main"]))
        asks = [e for e in evs if e.kind == "input_request"]
        assert len(asks) == 1 and asks[0].author == "Friday" and not asks[0].hidden
        assert asks[0].blocks[0].text == "Friday waits for input"
        assert [b.kind for b in asks[0].blocks] == ["notice", "data"]
        critic = next(e for e in evs if e.source_id == "m_critic")
        assert [b.kind for b in critic.blocks] == ["text", "media", "notice"]  # (its reply's span)
    finally:
        con.close()


def test_goose_rows_extend_the_index_and_a_ledger_row_counts_on_its_reply(tmp_path):
    folder, con = goose_db(tmp_path)
    try:
        store = Store([folder])
        idx = store.index(GOOSE_KEY)
        build, before = idx.build_id, shape(idx)
        now = int(time.time())
        goose.write_message(con, goose.NEW_ID, {"id": "msg_live", "role": "assistant", "created": now, "content": [
            {"type": "toolRequest", "id": "call_live", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "make test"}}}}]}, "2025-11-05 10:00:20")
        idx, change = store.refresh(GOOSE_KEY)
        assert not change.reset and change.new == {"main": len(before)} and idx.build_id == build
        assert shape(idx)[:len(before)] == before
        calls = idx.summary.usage["calls"]
        con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, "
                    "total_tokens, cost, cost_source, is_compaction) VALUES (?, ?, 'claude-sonnet-4-5', 2000, 50, "
                    "2050, 0.01, 'estimated', 0)", (goose.NEW_ID, now))
        idx, change = store.refresh(GOOSE_KEY)
        assert not change.reset and not change.new and ("main", len(before)) in change.events
        assert idx.summary.usage["calls"] == calls + 1
        assert load_events(idx, "main", len(before), len(before) + 1)[0].model == "claude-sonnet-4-5"
        goose.write_message(con, goose.NEW_ID, {"role": "user", "created": now + 1, "content": [
            {"type": "toolResponse", "id": "call_live", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": "3 passed"}], "isError": False}}}]}, "2025-11-05 10:00:21")
        idx, change = store.refresh(GOOSE_KEY)
        assert not change.reset and idx.calls.calls["call_live"].status == "completed"
        fresh = whole(folder / "sessions.db" / goose.NEW_ID)
        assert shape(fresh) == shape(idx) and same_usage(fresh, idx)
    finally:
        con.close()


def test_a_goose_conversation_replaced_reads_the_session_whole_again(tmp_path):
    """Goose replaces a conversation when it compacts it: the rows read before are gone."""
    folder, con = goose_db(tmp_path)
    try:
        store = Store([folder])
        idx = store.index(GOOSE_KEY)
        build, n = idx.build_id, len(idx.threads["main"])
        con.execute("DELETE FROM messages WHERE id = (SELECT min(id) FROM messages WHERE session_id = ?)",
                    (goose.NEW_ID,))
        idx, change = store.refresh(GOOSE_KEY)
        assert change.reset and idx.build_id != build and len(idx.threads["main"]) == n - 1
        assert shape(idx) == shape(whole(folder / "sessions.db" / goose.NEW_ID))
    finally:
        con.close()


def rewrite_conversation(con, sid: str) -> None:
    """Goose's replace_conversation: the session's messages deleted and inserted again (new row
    ids), here as they were."""
    rows = con.execute("SELECT role, content_json, created_timestamp, metadata_json, message_id FROM messages "
                       "WHERE session_id = ? ORDER BY id", (sid,)).fetchall()
    con.execute("BEGIN")
    con.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
    con.executemany("INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json, "
                    "message_id) VALUES (?, ?, ?, ?, ?, ?)", [(sid, *r) for r in rows])
    con.execute("COMMIT")


def test_a_goose_conversation_written_again_as_it_was_is_read_on(tmp_path):
    """Goose saves a conversation again whole (replace_conversation: new row ids) where its
    messages are what they were: the rows read before did not really change, so the session is read
    on — its index keeps its build (an open page is not reloaded) and takes a message written
    with it; a rewrite that changed a message still reads it anew."""
    folder, con = goose_db(tmp_path)
    try:
        store = Store([folder])
        idx = store.index(GOOSE_KEY)
        build, before = idx.build_id, shape(idx)
        rewrite_conversation(con, goose.NEW_ID)
        goose.write_message(con, goose.NEW_ID, {"id": "msg_after", "role": "assistant", "created": goose.T + 30,
                                                "content": [{"type": "text", "text": "Resumed."}]},
                            "2025-11-05 10:00:30")
        idx, change = store.refresh(GOOSE_KEY)
        assert not change.reset and idx.build_id == build and change.new == {"main": len(before)}
        assert shape(idx)[:len(before)] == before and idx.threads["main"].ids[-1] == "msg_after"
        assert shape(idx) == shape(whole(folder / "sessions.db" / goose.NEW_ID))
        con.execute("UPDATE messages SET content_json = ? WHERE message_id = (SELECT message_id FROM messages "
                    "WHERE session_id = ? ORDER BY id LIMIT 1 OFFSET 1)",
                    (json.dumps([{"type": "text", "text": "Another question."}]), goose.NEW_ID))
        rewrite_conversation(con, goose.NEW_ID)
        idx, change = store.refresh(GOOSE_KEY)
        assert change.reset and idx.build_id != build
    finally:
        con.close()


def test_a_session_s_own_row_moving_on_retotals_its_usage_in_place(tmp_path):
    """Before Goose's ledger the session row's totals are its usage: counted again as they grow."""
    folder, con = goose_db(tmp_path)
    try:
        con.execute("DROP TABLE usage_ledger")
        store = Store([folder])
        assert store.index(GOOSE_KEY).summary.usage["tokens"] == 5210 + 1320  # (its sub-agent's too)
        con.execute("UPDATE sessions SET accumulated_input_tokens = accumulated_input_tokens + 1000, "
                    "name = 'CI test hang, fixed' WHERE id = ?", (goose.NEW_ID,))
        idx, change = store.refresh(GOOSE_KEY)
        assert not change.reset and ("main", 0) in change.events
        assert idx.summary.usage["tokens"] == 6210 + 1320
        assert same_usage(idx, whole(folder / "sessions.db" / goose.NEW_ID))
        assert idx.summary.title == "CI test hang, fixed"
    finally:
        con.close()


def test_reading_on_still_writes_nothing_and_takes_no_lock(tmp_path):
    """Studio's database in rollback-journal mode is read immutable, as before: a writer commits
    while a page reads on (Studio sets no busy timeout)."""
    folder, con = studio_db(tmp_path)
    con.close()
    store = Store([folder])
    store.index(RUN_KEY)
    listed = sorted(p.name for p in folder.iterdir())
    writer = sqlite3.connect(folder / "database.sqlite", timeout=0, isolation_level=None)
    try:
        studio.push(writer, studio.RUN, MSG, "r_more", "Friday", "assistant")
        idx, change = store.refresh(RUN_KEY)
        assert change.new and idx.threads["main"].ids[-1] == "m_more"
        studio.push(writer, studio.RUN, {**MSG, "id": "m_after"}, "r_more", "Friday", "assistant")
    finally:
        writer.close()
    assert sorted(p.name for p in folder.iterdir()) == listed


def test_what_was_read_as_the_database_was_being_written_is_read_again(tmp_path):
    """A commit writes the log before readers see the write: a read in between gets the new file
    times with the old rows, which must not stand for the database until its next write (a live
    session's last row would stay unseen)."""
    db = tmp_path / "sessions.db"
    sqlite3.connect(db).close()
    reads = []

    def read():
        reads.append(1)
        return len(reads)

    assert rowdb.remembered(("t",), str(db), read) == 1
    assert rowdb.remembered(("t",), str(db), read) == 2  # written just before: read again
    settled = time.time() - 5
    os.utime(db, (settled, settled))
    assert rowdb.remembered(("t",), str(db), read) == 3
    assert rowdb.remembered(("t",), str(db), read) == 3  # quiet since: kept


def test_a_value_read_soon_after_a_write_is_read_again_a_moment_later(tmp_path, monkeypatch):
    """A writer held up between writing the log and making the write visible (a loaded machine)
    can outlast the margin: what was read soon after a write is read again after RECHECK_NS, so a
    live session's row read late is seen then, not only at the next write; a database quiet for
    long before is not read again."""
    db = tmp_path / "sessions.db"
    sqlite3.connect(db).close()
    reads = []

    def read():
        reads.append(1)
        return len(reads)

    written = time.time() - 0.5  # (past the margin: kept)
    os.utime(db, (written, written))
    assert rowdb.remembered(("s",), str(db), read) == 1
    assert rowdb.remembered(("s",), str(db), read) == 1  # (within RECHECK_NS: kept)
    monkeypatch.setattr(rowdb, "RECHECK_NS", 0)
    assert rowdb.remembered(("s",), str(db), read) == 2  # written a moment before it was read
    settled = time.time() - 120
    os.utime(db, (settled, settled))
    assert rowdb.remembered(("s",), str(db), read) == 3
    assert rowdb.remembered(("s",), str(db), read) == 3  # quiet long before: kept
