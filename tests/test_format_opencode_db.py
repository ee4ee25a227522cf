"""OpenCode 1.2+'s SQLite store (opencode.db): each session row lists and reads as a session, the same
as the file storage it was migrated from; nothing is written beside the database; a database that is
locked, damaged, another program's or from a newer OpenCode says so plainly; a session OpenCode is
writing (a new part, a part rewritten in place) is seen as changed. Databases are built with
OpenCode's own DDL from the file-storage fixture (test_data/formats/opencode/make_db.py)."""

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewer import files
from viewer.cli import main
from viewer.formats import detect, opencode_db, rowdb
from viewer.index import SessionIndex, identity_matches
from viewer.store import Store
from viewer.timeline import raw_record
from viewer.web import create_app

from conftest import ROOT, opencode_make_db, quiet_copy

FIXTURES = ROOT / "test_data" / "formats" / "opencode"
DATA = FIXTURES / "data"
PROJECT = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"
STORED = DATA / "storage" / "session" / PROJECT
PARENT, CHILD, UNDONE = ("ses_53a1c2d3e001aAbBcCdDeEfFgG", "ses_53a1c2d3e00bhHiIjJkKlLmM",
                         "ses_53a1c2d3e020nNoOpPqQrRsS")
REPLY = "msg_a1c2d3e00102BBBBBBBBBBBBBB"

make_db = opencode_make_db()


def database(tmp_path: Path, **kw) -> Path:
    """An OpenCode data folder holding only opencode.db (built from the fixture's file storage)."""
    folder = tmp_path / "opencode"
    folder.mkdir(parents=True)
    make_db.build(folder / "opencode.db", **kw)
    return folder


def row(folder: Path, sid: str) -> Path:
    return folder / "opencode.db" / sid


def test_each_session_row_is_listed_under_its_title_with_a_stable_key(tmp_path):
    folder = database(tmp_path)
    refs = {r.key: r for r in Store([folder]).sessions()}
    assert set(refs) == {f"opencode.db~{s}" for s in (PARENT, CHILD, UNDONE)}
    parent = refs[f"opencode.db~{PARENT}"]
    assert parent.path == str(row(folder, PARENT)) and parent.label == f"opencode.db/{PARENT}"
    assert parent.mtime == pytest.approx(1764064860.0)  # its newest message, as OpenCode wrote it
    app = create_app({"ROOTS": [str(folder)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    # the page lists rows its 50 ms of indexing did not reach by what the file system says, filled
    # in later by its stream (a loaded machine missed them): the JSON list waits for the indexer
    assert client.get("/sessions.json").status_code == 200
    html = client.get("/").get_data(as_text=True)
    assert "Fix divide-by-zero in calc.py" in html and "Skipped" not in html
    page = client.get(f"/s/opencode.db~{CHILD}").get_data(as_text=True)
    assert f'href="/s/opencode.db~{PARENT}" class="parent-session"' in page  # nests under its parent


def test_a_row_session_reads_as_the_stored_session_it_was_migrated_from(tmp_path):
    folder = database(tmp_path)
    rows = SessionIndex(row(folder, PARENT)).build()
    stored = SessionIndex(STORED / f"{PARENT}.json").build()
    assert rows.summary.format == "opencode" and rows.summary.title == "Fix divide-by-zero in calc.py"
    assert rows.threads["main"].ids == stored.threads["main"].ids
    assert {c.id: c.state for c in rows.calls.calls.values()} == {
        c.id: c.state for c in stored.calls.calls.values()}
    assert rows.calls.calls["toolu_edit_1"].duration == pytest.approx(1.2)
    assert rows.summary.usage == stored.summary.usage
    # the sub-agent's session, a row naming it as parent, nested under the task call
    (name,) = [n for n in rows.threads if n != "main"]
    assert rows.calls.calls["toolu_task_1"].subthread == name
    assert rows.threads[name].label == "explore agent · Find divide() callers"
    assert rows.summary.parent == ""
    child = SessionIndex(row(folder, CHILD)).build()
    assert child.summary.parent == str(row(folder, PARENT))
    undone = SessionIndex(row(folder, UNDONE)).build()  # /undo's revert point, from its column
    assert undone.threads["main"].ids == SessionIndex(STORED / f"{UNDONE}.json").build().threads["main"].ids


def test_the_raw_view_the_json_twin_downloads_and_check(tmp_path):
    folder = database(tmp_path)
    idx = SessionIndex(row(folder, PARENT)).build()
    data, cut = raw_record(idx, REPLY)  # the message row with its part rows, ids put back
    rec = json.loads(data)
    assert not cut and rec["info"]["id"] == REPLY and rec["info"]["sessionID"] == PARENT
    assert all(p["messageID"] == REPLY for p in rec["parts"])
    app = create_app({"ROOTS": [str(folder)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    key = f"opencode.db~{PARENT}"
    twin = client.get(f"/s/{key}.json").get_json()
    assert twin["summary"]["title"] == "Fix divide-by-zero in calc.py"
    raw = client.get(f"/s/{key}/raw/{REPLY}").get_data(as_text=True)
    assert "msg_a1c2d3e00102BBBBBBBBBBBBBB" in raw
    md = client.get(f"/s/{key}/export?format=md")
    assert md.status_code == 200 and "Fix divide-by-zero in calc.py" in md.get_data(as_text=True)
    r = CliRunner().invoke(main, ["check", str(row(folder, PARENT)), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["format"] == "opencode" and report["unparsed"] == []
    r = CliRunner().invoke(main, ["check", str(folder / "opencode.db")])
    assert r.exit_code == 1 and "holds 3 sessions; name the one to check" in r.output


def test_migrated_files_beside_the_database_are_listed_once(tmp_path):
    """json-migration copies the file storage into the database and leaves the files: each
    session is listed from the database, its file among the skipped saying why."""
    folder = quiet_copy(DATA, tmp_path / "opencode")
    make_db.build(folder / "opencode.db")
    store = Store([folder])
    assert sorted(r.key for r in store.sessions()) == sorted(
        f"opencode.db~{s}" for s in (PARENT, CHILD, UNDONE))
    why = store.skipped[str(folder / "storage" / "session" / PROJECT / f"{PARENT}.json")]
    assert why.startswith("also in OpenCode's database (opencode.db)")


def test_reading_writes_nothing_beside_the_database(tmp_path):
    folder = database(tmp_path)
    before = sorted(os.listdir(folder))
    mtime = os.stat(folder / "opencode.db").st_mtime_ns
    Store([folder]).sessions()
    SessionIndex(row(folder, PARENT)).build()
    assert sorted(os.listdir(folder)) == before == ["opencode.db"]  # no -wal, no -shm made
    assert os.stat(folder / "opencode.db").st_mtime_ns == mtime


def test_a_running_opencode_s_writes_are_read_from_its_write_ahead_log(tmp_path):
    folder = tmp_path / "opencode"
    folder.mkdir()
    con = make_db.build(folder / "opencode.db", keep_open=True)  # its -wal and -shm stay
    try:
        assert (folder / "opencode.db-wal").exists()
        idx = SessionIndex(row(folder, PARENT)).build()
        assert REPLY in idx.threads["main"].ids
    finally:
        con.close()


def test_a_log_that_cannot_be_read_is_said_and_the_database_read(tmp_path, monkeypatch):
    """The -wal file is there but its -shm is missing and cannot be made (a read-only folder):
    the database file alone is read, and the session says what is not shown."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    con = make_db.build(folder / "opencode.db", keep_open=True)
    con.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the database file holds the session…
    later = "msg_a1c2d3e00109YYYYYYYYYYYYYY"  # …and the log a message written since
    make_db.write_message(con, PARENT, {"role": "user", "time": {"created": 1764064990000}}, later)
    real = rowdb.connect

    def refusing(path, immutable):
        if not immutable:
            raise sqlite3.OperationalError("unable to open database file")
        return real(path, immutable)

    monkeypatch.setattr(rowdb, "connect", refusing)
    try:
        idx = SessionIndex(row(folder, PARENT)).build()
        events = _events(idx)
    finally:
        con.close()
    assert REPLY in idx.threads["main"].ids and later not in idx.threads["main"].ids
    (note,) = [e for e in events if e.kind == "notice"
               and "opencode.db-wal could not be read" in e.blocks[0].text]
    assert "what OpenCode wrote since its last checkpoint is not shown" in note.blocks[0].text


def _events(idx):
    from viewer.timeline import load_events

    return load_events(idx, "main", 0, len(idx.threads["main"]))


def _skipped(tmp_path, folder: Path) -> str:
    store = Store([folder])
    assert store.sessions() == []
    app = create_app({"ROOTS": [str(folder)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get("/").get_data(as_text=True).replace("&#39;", "'")
    why = store.skipped[str(folder / "opencode.db")]
    assert why in html.replace("&amp;", "&")
    return why


def test_a_locked_database_is_skipped_saying_so(tmp_path):
    folder = tmp_path / "opencode"
    folder.mkdir()
    make_db.build(folder / "opencode.db")
    writer = sqlite3.connect(folder / "opencode.db", isolation_level=None)
    writer.execute("PRAGMA journal_mode = DELETE")  # (OpenCode's fallback where WAL fails)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        assert "locked by another program" in _skipped(tmp_path, folder)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert len(Store([folder]).sessions()) == 3  # read once the lock is gone


def test_a_damaged_or_foreign_database_is_skipped_saying_why(tmp_path):
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / "opencode.db").write_bytes(b"SQLite format 3\x00" + bytes(100) + os.urandom(3000))
    assert "OpenCode's SQLite database" in _skipped(tmp_path, folder)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    con = sqlite3.connect(foreign / "opencode.db")
    con.execute("CREATE TABLE notes (id text, body text)")
    con.commit()
    con.close()
    assert "without OpenCode's session, message, part tables" in _skipped(tmp_path / "f", foreign)


def test_a_newer_schema_and_rows_it_does_not_know_read_tolerantly(tmp_path):
    folder = database(tmp_path)
    con = sqlite3.connect(folder / "opencode.db", isolation_level=None)
    con.execute("ALTER TABLE session ADD `mood` text")
    con.execute("UPDATE session SET mood = 'calm' WHERE id = ?", (PARENT,))
    con.execute("UPDATE part SET data = '{\"type\": \"hologram\", \"beam\": 3}' WHERE id = "
                "(SELECT min(id) FROM part WHERE message_id = ?)", (REPLY,))
    con.execute("UPDATE message SET data = 'not json' WHERE id = 'msg_a1c2d3e00104DDDDDDDDDDDDDD'")
    con.execute("UPDATE part SET time_updated = 'soon' WHERE message_id = ?", (REPLY,))
    con.execute("UPDATE session SET time_updated = 'later' WHERE id = ?", (PARENT,))
    con.close()
    assert len(Store([folder]).sessions()) == 3
    idx = SessionIndex(row(folder, PARENT)).build()
    events = _events(idx)
    info = events[0].blocks[0].detail
    assert info["mood"] == "calm" and info["title"] == "Fix divide-by-zero in calc.py"
    reply = next(e for e in events if e.source_id == REPLY)
    assert any(b.kind == "data" and "hologram" in str(b.value) for b in reply.blocks)
    bad = [e for e in events if e.kind == "unparsed"]
    assert len(bad) == 1 and "message msg_a1c2d3e00104DDDDDDDDDDDDDD" in bad[0].blocks[0].reason


def test_todos_of_a_layout_this_viewer_does_not_know_are_left_out_the_messages_read(tmp_path, caplog):
    folder = database(tmp_path)
    con = sqlite3.connect(folder / "opencode.db", isolation_level=None)
    con.execute("ALTER TABLE todo DROP COLUMN priority")
    con.close()
    idx = SessionIndex(row(folder, PARENT)).build()
    assert REPLY in idx.threads["main"].ids and idx.summary.title == "Fix divide-by-zero in calc.py"
    assert not [e for e in _events(idx) if e.kind == "todos"]
    assert "Traceback" not in caplog.text and "failed" not in caplog.text


def test_messages_that_cannot_be_read_say_why_in_their_place(tmp_path, caplog):
    """A query that fails past the schema check (a damaged page): the session card and one
    unparsed card saying why, never the session card alone, and no traceback in the log."""
    folder = database(tmp_path)
    con = sqlite3.connect(folder / "opencode.db", isolation_level=None)
    con.execute("ALTER TABLE part RENAME TO part_rows")
    con.execute("CREATE VIEW part AS SELECT id, message_id, session_id, time_created, "
                "time_updated, json_extract('{', '$') AS data FROM part_rows")  # fails when read
    con.close()
    events = _events(SessionIndex(row(folder, PARENT)).build())
    assert events[0].kind == "session"
    (bad,) = [e for e in events if e.kind == "unparsed"]
    why = bad.blocks[0].reason
    assert why.startswith("this session's messages: OpenCode's SQLite database:") and "(malformed JSON)" in why
    assert "Traceback" not in caplog.text and "failed" not in caplog.text


def test_a_part_cut_in_the_middle_of_an_emoji_reads(tmp_path):
    folder = database(tmp_path)
    con = sqlite3.connect(folder / "opencode.db", isolation_level=None)
    con.execute("UPDATE part SET data = ? WHERE id = (SELECT min(id) FROM part WHERE message_id = ? "
                "AND data LIKE '%\"text\"%')",
                ('{"type": "text", "text": "nearly there \\ud83d"}', REPLY))
    con.close()
    events = _events(SessionIndex(row(folder, PARENT)).build())
    assert not [e for e in events if e.kind == "unparsed"]
    assert "nearly there \ufffd" in next(e for e in events if e.source_id == REPLY).text()


def test_a_sub_agent_session_whose_title_is_no_text_still_nests(tmp_path, caplog):
    folder = database(tmp_path)
    con = sqlite3.connect(folder / "opencode.db", isolation_level=None)
    con.execute("UPDATE session SET title = X'41' WHERE id = ?", (CHILD,))  # (a blob)
    con.close()
    assert SessionIndex(row(folder, CHILD)).build().summary.parent == str(row(folder, PARENT))
    assert "Traceback" not in caplog.text


def test_a_database_linked_from_outside_the_roots_is_refused(tmp_path):
    outside = database(tmp_path / "elsewhere")
    folder = tmp_path / "served"
    folder.mkdir()
    (folder / "opencode.db").symlink_to(outside / "opencode.db")
    store = Store([folder])
    assert store.sessions() == []
    assert "outside the served folders" in store.skipped[str(folder / "opencode.db")]


def test_a_session_being_written_is_seen_changing(tmp_path):
    """A new part, and a part rewritten in place (a running command that completes), as OpenCode's
    Session.updatePart writes them; the identity changes each time, nothing else is read for it."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    con = make_db.build(folder / "opencode.db", keep_open=True)
    try:
        store = Store([folder])
        key = f"opencode.db~{PARENT}"
        idx = store.index(key)
        assert identity_matches(idx.files())
        msg = "msg_a1c2d3e00108ZZZZZZZZZZZZZZ"
        make_db.write_message(con, PARENT, {"role": "assistant", "time": {"created": 1764064900000},
                                            "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
                                            "mode": "build", "path": {"cwd": "/home/dev/calc",
                                                                      "root": "/home/dev/calc"},
                                            "cost": 0, "tokens": {"input": 0, "output": 0,
                                                                  "reasoning": 0,
                                                                  "cache": {"read": 0, "write": 0}}},
                              msg, now=1764064900000)
        part = {"type": "tool", "callID": "toolu_live_1", "tool": "bash",
                "state": {"status": "running", "input": {"command": "make test"},
                          "time": {"start": 1764064900100}}}
        make_db.write_part(con, PARENT, msg, part, "prt_a1c2d3e0010801ZZZZZZZZZZZZ", now=1764064900100)
        assert not identity_matches(idx.files())
        idx, _ = store.refresh(key)
        assert msg in idx.threads["main"].ids
        assert idx.calls.calls["toolu_live_1"].state == "executing"
        done = {**part, "state": {**part["state"], "status": "completed", "output": "ok",
                                  "time": {"start": 1764064900100, "end": 1764064900100}}}
        # the command returned: its part rewritten in place, nothing else written
        make_db.write_part(con, PARENT, msg, done, "prt_a1c2d3e0010801ZZZZZZZZZZZZ", now=1764064900900)
        idx, _ = store.refresh(key)
        assert idx.calls.calls["toolu_live_1"].state == "completed"
        # a part added within the same millisecond as the last write: no newer time, one more row
        make_db.write_part(con, PARENT, msg, {"type": "text", "text": "Tests pass."},
                           "prt_a1c2d3e0010802ZZZZZZZZZZZZ", now=1764064900900)
        idx, _ = store.refresh(key)
        assert "Tests pass." in next(e for e in _events(idx) if e.source_id == msg).text()
        # the list hears of it from the watcher: a write to the database's log
        store.note_change(str(folder / "opencode.db-wal"), "modified")
        assert store.get(key).mtime == pytest.approx(1764064900.0)
    finally:
        con.close()


def test_a_row_path_is_opened_only_as_its_row(tmp_path):
    folder = database(tmp_path)
    assert files.row_store(row(folder, PARENT)) is opencode_db
    assert json.loads(files.read_file(row(folder, PARENT)))["id"] == PARENT
    assert detect.detect_file(row(folder, PARENT)).format == "opencode"
    with pytest.raises(FileNotFoundError, match="no longer in OpenCode's database"):
        files.open_file(row(folder, "ses_gone"))
    assert files.row_store(folder / "notadb.db" / PARENT) is None


def test_every_session_row_is_in_the_full_text_search(tmp_path):
    """The search index reads a row-session as every read does (through files.open_file), and
    its newest rows once OpenCode writes them."""
    from viewer.cache import IndexCache
    from viewer.fts import FullText

    folder = tmp_path / "opencode"
    folder.mkdir()
    con = make_db.build(folder / "opencode.db", keep_open=True)
    store = Store([folder], IndexCache(tmp_path / "cache"))
    search = FullText(store, store.cache.path)
    store.indexer.listen(search)
    store.indexer.start()
    try:
        assert store.indexer.idle(60) and search.wait(60)
        found = search.search("ZeroDivisionError").sessions
        assert [r.path for r in found] == [str(row(folder, PARENT))]
        assert search.coverage(store.sessions())["complete"]
        msg = "msg_a1c2d3e00108ZZZZZZZZZZZZZZ"
        make_db.write_message(con, PARENT, {"role": "user", "time": {"created": 1764064990000}},
                              msg, now=1764064990000)
        make_db.write_part(con, PARENT, msg, {"type": "text", "text": "what about a xylophone"},
                           "prt_a1c2d3e0010801ZZZZZZZZZZZZ", now=1764064990000)
        store.refresh(f"opencode.db~{PARENT}")  # what a live stream does on a file event
        assert search.wait(60)
        assert [h.id for r in search.search("xylophone").sessions for h in r.hits] == [msg]
    finally:
        store.indexer.stop()
        search.close()
        con.close()
    store.flush()
    # a restart whose index cache is current and whose search tables are gone: no index pass
    # runs, so the search index reads every session back by itself (the walker's catch-up)
    db = sqlite3.connect(tmp_path / "cache" / "index.sqlite")
    for t in ("fts", "fts_text", "fts_sessions", "fts_meta"):
        db.execute(f"DROP TABLE IF EXISTS {t}")
    db.execute("DROP VIEW IF EXISTS fts_content")
    db.commit()
    db.close()
    store = Store([folder], IndexCache(tmp_path / "cache"))
    search = FullText(store, store.cache.path)
    store.indexer.listen(search)
    store.indexer.start()
    try:
        for _ in range(3):
            assert store.indexer.idle(60) and search.wait(60)
        assert [r.path for r in search.search("xylophone").sessions] == [str(row(folder, PARENT))]
    finally:
        store.indexer.stop()
        search.close()


def test_a_write_to_the_database_lists_its_sessions_again_and_walks_nothing_else(tmp_path, monkeypatch):
    """OpenCode writes its database many times a second while it works: each write lists that
    database's sessions again (a new one appears, a deleted one goes), without walking the roots."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    elsewhere = tmp_path / "projects"
    elsewhere.mkdir()
    line = b'{"type": "user", "uuid": "u1", "sessionId": "s1", "message": {"role": "user", "content": "hi"}}\n'
    (elsewhere / "first.jsonl").write_bytes(line)
    con = make_db.build(folder / "opencode.db", keep_open=True)
    try:
        store = Store([folder, elsewhere])
        store.watched = True
        before = {r.key for r in store.sessions()}
        walks = []
        real_walk = Store._walk
        monkeypatch.setattr(Store, "_walk", lambda self, root: walks.append(root) or real_walk(self, root))
        new = "ses_53a1c2d3e099zZyYxXwWvVuU"
        con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                    "time_created, time_updated) SELECT ?, id, 'new', '/home/dev/calc', 'A new one', "
                    "'1.2.0', 1764065000000, 1764065000000 FROM project LIMIT 1", (new,))
        con.execute("DELETE FROM session WHERE id = ?", (UNDONE,))
        store.note_change(str(folder / "opencode.db-wal"), "modified")
        after = {r.key for r in store.sessions()}
        key = f"opencode~opencode.db~{{}}"  # (two roots: keys start with the root's name)
        assert after == before - {key.format(UNDONE)} | {key.format(new)}
        assert store.get(key.format(new)).label == f"opencode.db/{new}"
        assert walks == []
        # a file appearing elsewhere is found as before: the watcher says so, the roots are walked
        (elsewhere / "second.jsonl").write_bytes(line)
        store.note_change(str(elsewhere / "second.jsonl"), "created")
        assert {"projects~second"} <= {r.key for r in store.sessions()} and walks
    finally:
        con.close()


def test_the_list_asking_every_session_s_identity_after_a_write_opens_the_database_once(tmp_path, monkeypatch):
    """After each write the list and the walker ask every session whether it changed: the answers
    are the ones asked one by one, from one connection rather than one per session."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    con = make_db.build(folder / "opencode.db", keep_open=True)
    try:
        more = [f"ses_53a1c2d3e1{n:02d}aAbBcCdDeEfFgG" for n in range(10)]
        for sid in more:
            con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                        "time_created, time_updated) SELECT ?, id, 's', '/home/dev/calc', 'Another', "
                        "'1.2.0', 1764065000000, 1764065000000 FROM project LIMIT 1", (sid,))
        paths = [str(row(folder, s)) for s in [PARENT, CHILD, UNDONE] + more]
        opened = []
        real = rowdb.connect
        monkeypatch.setattr(rowdb, "connect", lambda *a: opened.append(a) or real(*a))
        for n in range(4):  # four writes, each followed by a list asking of every session
            make_db.write_part(con, PARENT, REPLY, {"type": "text", "text": str(n)}, f"prt_live{n}",
                               now=1764065000000 + n)
            opened.clear()
            asked = [opencode_db.identity(p) for p in paths]
            assert len(opened) <= opencode_db.BURST + 1
            assert asked == [opencode_db.identity(p) for p in paths]
            with opencode_db._Reader(str(folder / "opencode.db")) as r:  # as asked one by one
                assert asked == [opencode_db._identity(r, opencode_db.split(p)[1], p) for p in paths]
        assert asked[0] != asked[1]
    finally:
        con.close()
