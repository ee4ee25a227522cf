"""AgentScope Studio's database (database.sqlite): each run lists and reads as a session — its
agents' messages in order, calls paired with their results, the model and tokens of its traced
model calls — read without a lock while Studio writes it, nothing written beside it; a run being
pushed is seen growing; older layouts read; a database.sqlite of another program holds nothing.
Databases are built with Studio's own tables (test_data/formats/agentscope-studio/make_db.py)."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from viewer.formats import detect, studio_db
from viewer.index import SessionIndex, identity_matches
from viewer.store import Store

from conftest import built, notices, result_of, studio_make_db

make_db = studio_make_db()
KEY = f"database.sqlite~{make_db.RUN}"


def database(tmp_path: Path, **kw):
    folder = tmp_path / "AgentScope-Studio"
    folder.mkdir(parents=True)
    return folder, make_db.build(folder / "database.sqlite", **kw)


def run(folder: Path, run_id: str = make_db.RUN) -> Path:
    return folder / "database.sqlite" / run_id


def test_each_run_is_listed_by_its_project_and_name(tmp_path):
    folder, _ = database(tmp_path)
    store = Store([folder])
    refs = {r.key: r for r in store.sessions()}
    assert set(refs) == {KEY, f"database.sqlite~{make_db.OTHER}"}
    assert refs[KEY].label == f"database.sqlite/{make_db.RUN}"
    assert store.index(KEY).summary.title == "Demo · notes-check"
    assert store.index(f"database.sqlite~{make_db.OTHER}").summary.title == "Weather · forecast"
    # the database file itself as the root, as a user points the viewer at it
    assert {r.key for r in Store([folder / "database.sqlite"]).sessions()} == set(refs)


def test_a_run_reads_as_its_agents_messages_with_the_call_paired_and_its_model_calls(tmp_path):
    folder, _ = database(tmp_path)
    found = detect.detect_file(run(folder))
    assert (found.format, found.mode) == ("agentscope-studio", "document")
    idx, evs = built(run(folder))
    assert [(e.role, e.kind, e.author) for e in evs] == [
        ("system", "session", None), ("user", "message", "user"), ("assistant", "message", "Friday"),
        ("tool", "tool_result", None), ("assistant", "message", "Friday"),
        ("assistant", "message", "Critic")]
    # what else was traced: the tool's run on the message that made its call, each agent's reply
    # on the reply's last message (no card of its own: it would come after the messages)
    assert [notices(e) for e in evs[2:]] == [
        ["traced: tool view_text_file ran in 0.1 s (call call_view1)"], [],
        ["traced: Friday replied in 2.6 s"], ["traced: Critic replied in 0.8 s"]]
    assert notices(evs[0]) == ["AgentScope Studio run “notes-check” of project Demo",
                               "status: done", "process 4242"]
    assert [b.kind for b in evs[2].blocks] == ["thinking", "text", "tool_use", "notice"]
    assert evs[2].blocks[0].text == "I should read the file before answering."
    assert idx.calls.calls["call_view1"].status == "completed"
    assert "ship the v2 release" in result_of(evs, "call_view1").content[0].text
    assert [e.source_id for e in evs[1:]] == ["m_user", "m_think", "m_result", "m_answer", "m_critic"]
    # AgentScope's zoneless local time, shown as written
    assert evs[1].timestamp_raw == "2026-11-20 14:03:01.120" and idx.summary.zoneless == "all"
    # each agent's model calls on its own messages, in order
    assert [(e.model, e.usage) for e in evs[2:]] == [
        ("qwen-max", {"input_tokens": 812, "output_tokens": 64}), (None, None),
        ("qwen-max", {"input_tokens": 901, "output_tokens": 40}),
        ("qwen-turbo", {"input_tokens": 300, "output_tokens": 12})]
    u = idx.summary.usage
    assert u["calls"] == 3 and u["models"]["qwen-max"][:4] == [1713, 104, 0, 0]
    assert idx.summary.agents == ["user", "Friday", "Critic"]


def test_a_model_call_goes_on_its_own_reply_s_message_not_on_an_earlier_reply_s_last_one(tmp_path):
    """A ReAct agent may print its final answer again at the end of a reply, a message no model
    call made: the calls of its next reply (its next `invoke_agent` span) go on that reply's
    messages, not on the answer printed again."""
    folder, con = database(tmp_path, keep_open=True)
    again = {"id": "m_again", "name": "Friday", "role": "assistant", "metadata": None,
             "timestamp": "2026-11-20 14:03:04.500", "content": "notes.txt lists two tasks."}
    make_db.push(con, make_db.RUN, again, "r_friday", "Friday", "assistant")
    make_db.push(con, make_db.RUN, {**again, "id": "m_next", "timestamp": "2026-11-20 14:03:07.000",
                                    "content": "Anything else?"}, "r_friday2", "Friday", "assistant")
    make_db.trace(con, make_db.RUN, "s_fri2", None, "invoke_agent", "invoke_agent Friday", None, None,
                  None, "Friday", 7)
    make_db.trace(con, make_db.RUN, "s_c4", "s_fri2", "chat", "chat qwen-max", "qwen-max", 1000, 5, None, 7)
    con.close()
    idx, evs = built(run(folder))
    made = {e.source_id: e.usage for e in evs if e.author == "Friday" and e.kind == "message"}
    assert made == {"m_think": {"input_tokens": 812, "output_tokens": 64},
                    "m_answer": {"input_tokens": 901, "output_tokens": 40},
                    "m_again": None, "m_next": {"input_tokens": 1000, "output_tokens": 5}}
    assert not any(e.hidden for e in evs if e.kind != "notice") and idx.summary.usage["calls"] == 4


def test_reading_writes_nothing_beside_the_database(tmp_path):
    folder, _ = database(tmp_path)
    mtime = os.stat(folder / "database.sqlite").st_mtime_ns
    Store([folder]).sessions()
    SessionIndex(run(folder)).build()
    assert os.listdir(folder) == ["database.sqlite"]  # no -journal, -wal or -shm made
    assert os.stat(folder / "database.sqlite").st_mtime_ns == mtime


HOLDER = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0)
con.execute("BEGIN EXCLUSIVE")
con.execute("UPDATE run_table SET status = 'unknown'")
print("locked", flush=True)
sys.stdin.readline()  # until the test is done reading
con.execute("COMMIT")
print("committed", flush=True)
"""


def test_a_run_reads_while_another_process_holds_the_database_locked(tmp_path):
    """Studio writes in rollback-journal mode: a reader's shared lock would make its commit fail,
    and its write lock refuses a reader that takes one. The run is read without any lock (what was
    committed), and the writer commits after."""
    folder, _ = database(tmp_path)
    db = folder / "database.sqlite"
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline().strip() == "locked"
            with pytest.raises(sqlite3.OperationalError, match="locked"):  # a reader that locks
                probe = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0)
                try:
                    probe.execute("SELECT count(*) FROM run_table").fetchall()
                finally:
                    probe.close()
            assert {r.key for r in Store([folder]).sessions()} >= {KEY}
            idx, evs = built(run(folder))
            assert notices(evs[0])[1] == "status: done"  # (the uncommitted change is not read)
            assert idx.calls.calls["call_view1"].status == "completed"
            holder.stdin.write("\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "committed"
        finally:
            holder.kill()
    _, evs = built(run(folder))
    assert notices(evs[0])[1] == "status: unknown"


def test_a_run_being_pushed_is_seen_growing(tmp_path):
    folder, con = database(tmp_path, keep_open=True)
    try:
        store = Store([folder])
        idx = store.index(KEY)
        assert identity_matches(idx.files())
        msg = {"id": "m_more", "name": "Friday", "role": "assistant", "metadata": None,
               "timestamp": "2026-11-20 14:03:09.000", "content": [
                   {"type": "tool_use", "id": "call_live", "name": "execute_shell_command",
                    "input": {"command": "ls"}}]}
        make_db.push(con, make_db.RUN, msg, "r_more", "Friday", "assistant")
        assert not identity_matches(idx.files())
        idx, _ = store.refresh(KEY)
        assert idx.calls.calls["call_live"].status == "pending"
        make_db.push(con, make_db.RUN, {**msg, "id": "m_more_result", "name": "system", "role": "system",
                                        "content": [{"type": "tool_result", "id": "call_live", "name":
                                                     "execute_shell_command", "output": "notes.txt"}]},
                     "r_more", "Friday", "assistant")
        idx, _ = store.refresh(KEY)
        assert idx.calls.calls["call_live"].status == "completed"
        # a message streamed further: saved again under its id, in its place
        make_db.push(con, make_db.RUN, {**msg, "content": [{"type": "text", "text": "Listing."}, *msg["content"]]},
                     "r_more", "Friday", "assistant")
        idx, evs = store.refresh(KEY)
        shown = [e for e in built(run(folder))[1] if e.source_id == "m_more"]
        assert len(shown) == 1 and shown[0].text().startswith("Listing.")
        store.note_change(str(folder / "database.sqlite"), "modified")
        assert store.get(KEY).mtime == pytest.approx(1795183389.0)  # its newest message
    finally:
        con.close()


def test_an_older_layout_reads_and_a_bad_row_is_an_unparsed_card(tmp_path):
    """Before the reply table (a nullable replyId) and without spans the messages read the same; a
    span table naming the run `runId` (the entity's column) gives the model calls; a message whose
    JSON is damaged is an unparsed card in its place, a block Studio's UI does not know a data card."""
    folder, con = database(tmp_path, keep_open=True)
    con.execute('ALTER TABLE "span_table" RENAME COLUMN "conversationId" TO "runId"')
    con.execute("UPDATE message_table SET msg = '{\"name\": \"Friday\", \"ro' WHERE id = 'm_answer'")
    con.execute("""UPDATE message_table SET msg = json_set(msg, '$.content', json('[{"type": "text",
        "text": "Checked."}, {"type": "hologram", "frames": 3}]')) WHERE id = 'm_critic'""")
    con.close()
    idx, evs = built(run(folder))
    # (the spans that are not model calls ride on their messages: Friday's reply on its last one
    # that reads, the one left is Friday's second model call)
    assert [e.kind for e in evs][3:] == ["tool_result", "unparsed", "message", "notice"]
    assert "traced: Friday replied in 2.6 s" in notices(evs[2])
    assert [b.kind for b in evs[5].blocks] == ["text", "data", "notice"]
    assert idx.summary.usage["calls"] == 3  # (Friday's second call: no message left for it — hidden)
    hidden = [e for e in evs if e.hidden and e.usage]
    assert [(e.author, e.usage) for e in hidden] == [("Friday", {"input_tokens": 901, "output_tokens": 40})]
    folder, con = database(tmp_path / "old", keep_open=True)
    con.execute("DROP TABLE span_table")
    con.execute("PRAGMA foreign_keys = OFF")
    con.execute('CREATE TABLE "old" ("id" varchar PRIMARY KEY NOT NULL, "msg" json NOT NULL, '
                '"run_id" varchar NOT NULL)')  # (Studio's message table before replies)
    con.execute('INSERT INTO "old" SELECT "id", "msg", "run_id" FROM "message_table" ORDER BY rowid')
    con.execute("DROP TABLE message_table")
    con.execute("DROP TABLE reply_table")
    con.execute('ALTER TABLE "old" RENAME TO "message_table"')
    con.close()
    idx, evs = built(run(folder))
    assert [e.author for e in evs] == [None, "user", "Friday", None, "Friday", "Critic"]
    assert idx.calls.calls["call_view1"].status == "completed" and idx.summary.usage["calls"] == 0


def test_a_database_sqlite_of_another_program_holds_no_sessions(tmp_path):
    folder = tmp_path / "laravel"
    folder.mkdir()
    con = sqlite3.connect(folder / "database.sqlite")
    con.execute("CREATE TABLE users (id integer, name text)")
    con.commit()
    con.close()
    store = Store([folder])
    assert store.sessions() == [] and store.skipped == {}
    assert studio_db.list_sessions(str(folder / "database.sqlite")) == []


def test_a_database_being_written_is_looked_at_again_reading_only_the_runs_it_changed(tmp_path, monkeypatch):
    """While a program pushes to Studio, every run's identity is asked for again and again (the
    list, the walker; a database written within the last seconds is looked at every second): a
    look reads again the runs whose rows changed since the last — and the runs still going, whose
    last message streams in its row — not every run."""
    from viewer import reader
    from viewer.formats import rowdb

    folder, con = database(tmp_path, keep_open=True)
    try:
        for n in range(20):
            make_db.register_run(con, f"run{n:02d}", "Old", f"run {n}", "2026-11-19 10:00:00.000", 100 + n, "done")
            make_db.push(con, f"run{n:02d}", {"id": f"m_old{n}", "name": "user", "role": "user", "content": "hi",
                                              "metadata": None, "timestamp": "2026-11-19 10:00:01.000"},
                         f"r_old{n}", "user", "user")
        for n in range(studio_db.RECENT_ROWS):  # (the running run's, the last rows Studio received)
            make_db.push(con, make_db.OTHER, {"id": f"m_more{n}", "name": "user", "role": "user", "content": "more",
                                              "metadata": None, "timestamp": "2026-11-21 09:00:02.000"},
                         "r_w1", "user", "user")
        paths = [str(r.path) for r in Store([folder]).sessions()]
        assert len(paths) == 22
        monkeypatch.setattr(rowdb, "RECHECK_NS", 0)  # (every ask a new look, as a second later)
        read = []
        run_row = studio_db._run_row
        monkeypatch.setattr(studio_db, "_run_row", lambda r, rid: read.append(rid) or run_row(r, rid))

        def sweep():
            read.clear()
            return {p: reader.file_identity(p) for p in paths}

        first = sweep()
        make_db.push(con, "run05", {"id": "m_late", "name": "user", "role": "user", "content": "again",
                                    "metadata": None, "timestamp": "2026-11-19 10:05:00.000"}, "r_late", "user", "user")
        second = sweep()
        assert set(read) == {"run05", make_db.OTHER}  # (the Weather run is still running)
        assert {p.rsplit("/", 1)[1] for p in paths if first[p] != second[p]} == {"run05"}
        monkeypatch.setattr(rowdb, "SETTLED_NS", 0)  # (a look once the database is quiet: every run)
        rowdb.memo.clear()
        rowdb._looks.clear()
        assert sweep() == second and len(set(read)) == 22  # (each once)
    finally:
        con.close()
