"""Sessions kept in database rows (Goose's sessions.db, AgentScope Studio's database.sqlite) are
searchable as they are written: the search box of the session finds a word of a row written since
the page was drawn, or of a message streamed further in its row, and so does the all-sessions
full-text index (FTS5), which takes the new rows and writes again only the row of a message that
changed in place — not the whole session on every write."""

import json
import time

import pytest

from viewer import fts
from viewer.cache import IndexCache
from viewer.formats import rowfold
from viewer.fts import FullText
from viewer.search import Query, search
from viewer.store import Store

from conftest import goose_make_db, studio_make_db

goose = goose_make_db()
studio = studio_make_db()
GOOSE_KEY = f"sessions.db~{goose.NEW_ID}"
RUN_KEY = f"database.sqlite~{studio.RUN}"


class Archive:
    """A store with its full-text index, wired as the app wires them."""

    def __init__(self, root, cache):
        rowfold.forget()
        self.store = Store([root], IndexCache(cache))
        self.fts = FullText(self.store, self.store.cache.path)
        self.store.indexer.listen(self.fts)
        self.store.indexer.start()
        self.settle()

    def settle(self):
        for _ in range(3):
            assert self.store.indexer.idle(60)
            assert self.fts.wait(60)

    def refreshed(self, key):
        """The session refreshed as an open page's live stream does, and the index's writer done."""
        idx, change = self.store.refresh(key)
        self.settle()
        return idx, change

    def ids(self, query):
        return [h.id for r in self.fts.search(query, snippets=50).sessions for h in r.hits]

    def close(self):
        self.store.indexer.stop()
        self.fts.close()


@pytest.fixture
def no_merge(monkeypatch):
    """The rows the writer writes, counted (`_written`) without merges resetting the count."""
    monkeypatch.setattr(fts, "MERGE_AFTER", 10**9)


def test_a_goose_row_written_live_is_found_by_both_searches_its_session_not_written_again(
        tmp_path, no_merge):
    folder = tmp_path / "sessions"
    folder.mkdir()
    con = goose.build(folder / "sessions.db", keep_open=True)
    archive = Archive(folder, tmp_path / "cache")
    try:
        idx = archive.store.index(GOOSE_KEY)
        archive.settle()
        # the session's own words are found in it (its "file" is its session row: the search box
        # found nothing in a database session before)
        assert [h.id for h in search(idx, Query("hang on CI"))] == ["msg_20251105_1_21"]
        assert archive.ids("zebrafish") == []
        written = archive.fts._written
        goose.write_message(con, goose.NEW_ID, {"id": "msg_live", "role": "assistant",
                                                "created": int(time.time()), "content": [
                                                    {"type": "text", "text": "The zebrafish test hangs."}]},
                            "2025-11-05 10:00:30")
        idx, change = archive.refreshed(GOOSE_KEY)
        assert not change.reset
        assert [h.id for h in search(idx, Query("zebrafish"))] == ["msg_live"]
        assert archive.ids("zebrafish") == ["msg_live"]
        # the new row and the session's own (its counts moved), not the session's every event
        assert archive.fts._written - written <= 2
    finally:
        archive.close()
        con.close()


def test_a_studio_message_streamed_further_is_found_by_its_new_words_in_its_one_row(tmp_path, no_merge):
    folder = tmp_path / "AgentScope-Studio"
    folder.mkdir()
    con = studio.build(folder / "database.sqlite", keep_open=True)
    con.execute("UPDATE run_table SET status = 'running' WHERE id = ?", (studio.RUN,))
    archive = Archive(folder, tmp_path / "cache")
    try:
        archive.store.index(RUN_KEY)
        archive.settle()
        words = {"id": "m_words", "name": "Friday", "role": "assistant", "metadata": None,
                 "timestamp": "2026-11-20 14:03:09.000", "content": [{"type": "text", "text": "Two files"}]}
        studio.push(con, studio.RUN, words, "r_more", "Friday", "assistant")
        archive.refreshed(RUN_KEY)
        assert archive.ids("files") .count("m_words") == 1
        written = archive.fts._written
        # AgentScope pushes the message again with the next chunk: the same row, more words
        studio.push(con, studio.RUN, {**words, "content": [{"type": "text", "text": "Two files: aardvark notes."}]},
                    "r_more", "Friday", "assistant")
        idx, change = archive.refreshed(RUN_KEY)
        assert not change.reset and change.events
        assert [h.id for h in search(idx, Query("aardvark"))] == ["m_words"]
        assert archive.ids("aardvark") == ["m_words"]
        assert archive.ids("files").count("m_words") == 1  # its row replaced, not a second one
        assert archive.fts._written - written <= 2
    finally:
        archive.close()
        con.close()


def test_a_sub_agent_s_message_changed_in_place_rewrites_its_own_row_not_its_parent_s_of_the_same_id(
        tmp_path, monkeypatch):
    """The full-text index writes a message changed in place again in its own row, found by its
    thread and place: a main-thread message and a sub-agent's that share an event id (here the
    index is made to let them, as a format's own ids would) keep their own words."""
    from viewer.index import SessionIndex

    assign = SessionIndex._assign_id
    monkeypatch.setattr(SessionIndex, "_assign_id", lambda self, th, ev, *a: (
        ev.source_id if ev.source_id == "msg_shared" else assign(self, th, ev, *a)))
    folder = tmp_path / "sessions"
    folder.mkdir()
    con = goose.build(folder / "sessions.db", keep_open=True)
    goose.write_message(con, goose.NEW_ID, {"id": "msg_shared", "role": "assistant", "created": goose.T + 10,
                                            "content": [{"type": "text", "text": "Main says aardvark."}]},
                        "2025-11-05 10:00:10")
    shared = {"id": "msg_shared", "role": "assistant", "created": goose.T + 9,
              "content": [{"type": "text", "text": "Sub says bison."}]}
    goose.write_message(con, goose.SUB_ID, shared, "2025-11-05 10:00:10")
    archive = Archive(folder, tmp_path / "cache")
    main = str(folder / "sessions.db" / goose.NEW_ID)

    def found(word):  # (the session's hits: the sub-agent's session is also listed alone)
        return [h.id for r in archive.fts.search(word, snippets=50).sessions if r.path == main for h in r.hits]
    try:
        idx = archive.store.index(GOOSE_KEY)
        archive.settle()
        assert [th.ids[-1] for th in idx.threads.values()] == ["msg_shared", "msg_shared"]
        assert found("aardvark") == ["msg_shared"] and found("bison") == ["msg_shared"]
        # the sub-agent's last message goes on: Goose saves its conversation again, that message
        # with more words (read on: taken in place)
        con.execute("UPDATE messages SET content_json = ? WHERE session_id = ? AND message_id = 'msg_shared'",
                    (json.dumps([{"type": "text", "text": "Sub says bison and caribou."}]), goose.SUB_ID))
        con.execute("UPDATE sessions SET updated_at = '2025-11-05 10:00:11' WHERE id = ?", (goose.SUB_ID,))
        idx, change = archive.refreshed(GOOSE_KEY)
        assert not change.reset and (goose.SUB_ID, len(idx.threads[goose.SUB_ID]) - 1) in change.events
        assert found("caribou") == ["msg_shared"]
        assert found("aardvark") == ["msg_shared"]  # the main thread's row is its own still
        assert found("bison") == ["msg_shared"]  # one row of the sub-agent's: replaced
        sid = archive.fts._state[main][0]
        db = archive.fts._reader()
        try:
            rows = db.execute(archive.fts._sql(
                "SELECT thread, seq FROM {text} WHERE eid = 'msg_shared' AND id >> ? = ? ORDER BY thread"),
                (fts.SHIFT, sid)).fetchall()
        finally:
            archive.fts._give_back(db)
        assert rows == [(None, len(idx.threads["main"]) - 1), (goose.SUB_ID, len(idx.threads[goose.SUB_ID]) - 1)]
    finally:
        archive.close()
        con.close()
