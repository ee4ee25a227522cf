"""Full-text search across sessions: kept in step with appends, truncation and deletion (through the
index passes and the walker), queries that cannot run, hostile text in snippets, the JSON twin."""

from __future__ import annotations

import json
import re
import shutil
import threading
from pathlib import Path

import pytest

from viewer import fts
from viewer.cache import IndexCache
from viewer.fts import FullText, QueryError
from viewer.store import Store
from viewer.web import create_app
from conftest import CORPUS, SESSIONS, quiet_copy


def line(i: int, text: str, **extra) -> str:
    return json.dumps({"type": "user" if i % 2 else "assistant", "content": text,
                       "timestamp": 1761073200.0 + i, "session_id": "s", "message_id": f"m{i}",
                       **extra}) + "\n"


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "root"
    quiet_copy(SESSIONS / "legion-feature-tour", root / "tour")
    quiet_copy(SESSIONS / "legion-hostile-content", root / "hostile")
    quiet_copy(CORPUS / "claude-code" / "claude-p-subagent", root / "cc" / "claude-p-subagent")
    live = root / "growing"
    live.mkdir()
    (live / "messages.jsonl").write_text(line(1, "the zephyr wind") + line(2, "a quiet answer"))
    return root


class Archive:
    """A store, its cache and its full-text index, the way the app wires them."""

    def __init__(self, root: Path, cache: Path):
        self.store = Store([root], IndexCache(cache))
        self.fts = FullText(self.store, self.store.cache.path)
        self.store.indexer.listen(self.fts)
        self.store.indexer.start()
        self.settle()

    def settle(self):
        for _ in range(3):
            assert self.store.indexer.idle(60)
            assert self.fts.wait(60)

    def keys(self, query: str) -> list[str]:
        by_path = {r.path: r.key for r in self.store.sessions()}
        return [by_path.get(r.path, r.path) for r in self.fts.search(query).sessions]

    def ids(self, query: str) -> list[str]:
        return [h.id for r in self.fts.search(query, snippets=50).sessions for h in r.hits]

    def close(self):
        self.store.indexer.stop()
        self.fts.close()


@pytest.fixture
def archive(root, tmp_path):
    a = Archive(root, tmp_path / "cache")
    yield a
    a.close()


def test_every_session_is_searchable(archive):
    assert archive.keys("zephyr") == ["growing"]
    assert archive.keys('"window logic"') == ["tour"]
    # a sub-agent's own file is indexed with its session (this word is only there)
    assert archive.keys("cachemanager") == ["cc~claude-p-subagent"]
    idx = archive.store.index("cc~claude-p-subagent")
    assert {idx.locate(i)[0] for i in archive.ids("cachemanager")} == {"a2271d1"}  # its thread
    # (the list the searches read may look again at files copied a moment ago and hand a session
    # to the writer once more, which coverage rightly calls incomplete until it is written)
    archive.settle()
    cov = archive.fts.coverage(archive.store.sessions())
    assert cov == {"done": 4, "total": 4, "complete": True}


def test_appends_are_indexed_through_the_live_tail(archive, root):
    f = root / "growing" / "messages.jsonl"
    with open(f, "a") as fh:
        fh.write(line(3, "a xylophone appears"))
    archive.store.refresh("growing")  # what a live stream does on a file event
    archive.fts.wait()
    assert archive.ids("xylophone") == ["m3"]
    assert archive.ids("zephyr") == ["m1"]  # earlier rows neither lost nor doubled
    with open(f, "a") as fh:
        fh.write(line(4, "and another xylophone"))
    archive.store.refresh("growing")
    archive.fts.wait()
    assert sorted(archive.ids("xylophone")) == ["m3", "m4"]


def test_a_truncated_or_rewritten_file_is_indexed_again(archive, root):
    f = root / "growing" / "messages.jsonl"
    f.write_text(line(1, "a brand new start"))  # cut and rewritten in place
    archive.store.refresh("growing")
    archive.fts.wait()
    assert archive.keys("zephyr") == []
    assert archive.ids("brand") == ["m1"]


def test_a_deleted_session_leaves_the_index(archive, root):
    shutil.rmtree(root / "growing")
    archive.store.invalidate()
    archive.store.indexer.poke()  # as the watcher does
    archive.settle()
    assert archive.keys("zephyr") == []
    assert archive.keys('"window logic"') == ["tour"]


def test_a_restart_with_a_warm_cache_catches_up(root, tmp_path):
    cache = tmp_path / "cache"
    first = Archive(root, cache)
    first.close()
    # the index cache stays, the full-text tables go: no index pass runs (the cache is current),
    # so the walker asks the full-text index to catch up by itself
    import sqlite3

    db = sqlite3.connect(cache / "index.sqlite")
    for t in ("fts", "fts_text", "fts_sessions", "fts_meta"):
        db.execute(f"DROP TABLE IF EXISTS {t}")
    db.execute("DROP VIEW IF EXISTS fts_content")
    db.commit()
    db.close()
    again = Archive(root, cache)
    try:
        assert again.keys("zephyr") == ["growing"]
        assert again.keys('"window logic"') == ["tour"]
    finally:
        again.close()


def test_a_restart_keeps_the_index_and_adds_what_grew(root, tmp_path):
    cache = tmp_path / "cache"
    first = Archive(root, cache)
    first.close()
    with open(root / "growing" / "messages.jsonl", "a") as fh:
        fh.write(line(3, "written while the server was down: quokka"))
    again = Archive(root, cache)
    try:
        assert again.ids("quokka") == ["m3"]
        assert again.ids("zephyr") == ["m1"]
    finally:
        again.close()


def test_a_writer_behind_the_walker_holds_keys_not_indexes(root, tmp_path, monkeypatch):
    # the walker indexes faster than FTS5 writes: past a few sessions the queue keeps only keys
    # (the writer loads each index and reads its texts back when it gets there), or a big archive
    # held every index and all its text in memory meanwhile
    monkeypatch.setattr(fts, "HOLD", 1)
    store = Store([root], IndexCache(tmp_path / "cache"))
    full = FullText(store, store.cache.path)
    store.indexer.listen(full)
    try:
        with full._lock:  # the writer is busy with the first session
            for ref in store.sessions():
                store.index(ref.key)
            queued = list(full._queue.values())
            assert len(queued) >= 2
            assert sum(1 for _, idx, _ in queued if idx is not None) <= 1
            assert not [k for k, idx, _ in queued if idx is None and full._buffers.get(k)]
        assert full.wait(60)
        by_path = {r.path: r.key for r in store.sessions()}
        for word, key in (("zephyr", "growing"), ('"window logic"', "tour"),
                          ("cachemanager", "cc~claude-p-subagent")):
            assert [by_path[r.path] for r in full.search(word).sessions] == [key]
        assert full.coverage(store.sessions())["complete"]
    finally:
        full.close()


def test_the_index_cache_waits_for_its_turn_while_the_search_index_writes(root, tmp_path):
    # both write to one database: a save that comes while the full-text index holds a write
    # transaction open waits for it, rather than give up when SQLite's busy timeout runs out
    a = Archive(root, tmp_path / "cache")
    try:
        a.store.flush()
        cache = a.store.cache
        cache._db.close()
        cache._db, cache._open_timeout = None, 0.05  # reopened with a short busy timeout
        ref = a.store.get("tour")
        idx, files = cache.load(ref.path)
        with a.fts._lock:
            a.fts._begin()
            a.fts._db.execute("INSERT OR REPLACE INTO fts_meta VALUES ('held', '1')")
            saved = threading.Thread(target=cache.save, args=("/elsewhere", idx.dump(), files,
                                                              idx.summary))
            saved.start()
            saved.join(0.5)
            assert saved.is_alive()  # waiting for its turn
            a.fts._commit(force=True)
        saved.join(10)
        assert not saved.is_alive() and cache.load("/elsewhere") is not None
    finally:
        a.close()


def test_text_inside_a_huge_line_is_found(root, tmp_path):
    big = "filler words " * 600_000 + " needle_in_the_haystack"  # a line far beyond a cut
    (root / "growing" / "messages.jsonl").write_text(line(1, "short") + line(2, big))
    a = Archive(root, tmp_path / "cache")
    try:
        assert a.ids("needle_in_the_haystack") == ["m2"]
    finally:
        a.close()


@pytest.mark.parametrize("query", ['"unbalanced quote', "NEAR(", "(a OR b", "foo AND", "AND"])
def test_queries_that_cannot_run_say_so(archive, query):
    with pytest.raises(QueryError) as e:
        archive.fts.search(query)
    assert "cannot be run" in str(e.value)


def test_punctuation_is_searched_literally(archive):
    found = archive.fts.search("window-logic:")  # not search syntax: the words as typed
    assert found.literal and found.total == 1


@pytest.fixture
def client(root, tmp_path):
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "webcache"), "WATCH": False,
                      "TESTING": True})
    v = app.extensions["viewer"]
    for _ in range(3):
        v.store.indexer.idle(60)
        v.fts.wait(60)
    yield app.test_client()
    v.store.indexer.stop()
    v.fts.close()


def test_search_json_has_the_shape(client):
    body = client.get("/search.json?q=window logic").get_json()
    assert {"query", "total", "complete", "results"} <= set(body)
    assert body["query"] == "window logic" and body["complete"] is True and body["total"] == 1
    (res,) = body["results"]
    assert res["key"] == "tour" and res["title"].startswith("Refactor")
    assert res["hits"] and all({"id", "snippet"} <= set(h) for h in res["hits"])
    assert all("window" in h["snippet"].lower() for h in res["hits"])
    assert all(h["url"].startswith("/s/tour/m/") and "q=" in h["url"] for h in res["hits"])


def test_search_errors_are_plain_messages(client):
    for q in ('"open', "NEAR(", "x OR"):
        page = client.get("/search", query_string={"q": q})
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        assert 'id="search-error"' in html and "cannot be run" in html
        body = client.get("/search.json", query_string={"q": q})
        assert body.status_code == 400 and "cannot be run" in body.get_json()["error"]


def test_hostile_text_in_snippets_is_escaped(client):
    html = client.get("/search?q=alert").get_data(as_text=True)
    results = html[html.index('id="search-results"'):]
    assert "<script>" not in results and "<img" not in results and "<iframe" not in results
    assert "&lt;script&gt;<mark>alert</mark>" in results or "&lt;script&gt;" in results
    assert re.search(r"<mark>alert</mark>", results)
    assert not re.search(r"<(?!/?(mark|a|li|ul|ol|div|span|time|code)\b)[a-z]", results)


def test_search_from_the_list_and_with_its_filters(client):
    page = client.get("/").get_data(as_text=True)
    assert 'action="/search"' in page and 'name="q"' in page
    both = client.get("/search.json?q=the").get_json()
    assert both["total"] >= 3
    only = client.get("/search.json?q=the&format=legion").get_json()
    assert {r["key"] for r in only["results"]} <= {"tour", "hostile", "growing"}
    assert only["total"] < both["total"]


def test_search_orders(client):
    by_hits = client.get("/search.json?q=the&rank=hits").get_json()["results"]
    counts = [r["matches"] for r in by_hits]
    assert counts == sorted(counts, reverse=True)
    ranked = client.get("/search.json?q=the").get_json()
    assert ranked["ranked"] is True and len(ranked["results"]) == len(by_hits)


def test_a_word_in_too_many_events_is_counted_within_a_budget(client, monkeypatch):
    # past the counting budget the sessions and events seen so far are floors
    whole = client.get("/search.json?q=the").get_json()
    monkeypatch.setattr(fts, "COUNT_BATCH", 1)
    monkeypatch.setattr(fts, "COUNT_BUDGET", 0.0)
    cut = client.get("/search.json?q=the").get_json()
    assert whole["total_exact"] is True and cut["total_exact"] is False
    assert 1 <= cut["total"] <= whole["total"] and 1 <= cut["events"] <= whole["events"]
    assert cut["ranked"] is False and cut["results"] and all(r["hits"] for r in cut["results"])
    html = client.get("/search?q=the").get_data(as_text=True)
    assert re.search(r"of at least \d+ session", html) and re.search(r"at least \d+ matching event", html)


def test_a_page_of_results_costs_a_few_statements_whatever_its_size(archive):
    # FTS5 expands a prefix into every matching row once per statement: snippets come in one
    db = archive.fts._reader()
    ran = []
    db.set_trace_callback(ran.append)
    archive.fts._give_back(db)
    found = archive.fts.search("th*")
    assert len(found.sessions) >= 3 and all(r.hits for r in found.sessions)
    assert all("\x02" in h.snippet for r in found.sessions for h in r.hits)
    assert len([s for s in ran if "MATCH" in s]) <= 3


def test_snippets_of_sessions_far_apart_come_from_statements_of_their_own(archive, monkeypatch):
    # a statement reads every matching row of its rowid range: sessions with many matching rows
    # between them get one each when that is cheaper than FTS5 setting the query up again
    db = archive.fts._reader()
    ran = []
    db.set_trace_callback(ran.append)
    try:
        rows = [r for (r,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH 'the'")]
        every = {}
        for r in rows:
            every[r >> fts.SHIFT] = every.get(r >> fts.SHIFT, 0) + 1
        sids = sorted(every)
        assert len(sids) >= 3
        shown = [[r for r in rows if r >> fts.SHIFT == sid][:2] for sid in (sids[0], sids[-1])]
        ran.clear()
        near = archive.fts._snippets(db, "the", shown, every, gap=1e9)
        assert len([s for s in ran if "MATCH" in s]) == 1
        ran.clear()
        monkeypatch.setattr(fts, "SNIPPET_GAP", 0)
        far = archive.fts._snippets(db, "the", shown, every, gap=0)
        assert len([s for s in ran if "MATCH" in s]) == 2  # the session between is not read
        assert {r: h.snippet for r, h in far.items()} == {r: h.snippet for r, h in near.items()}
        assert sorted(far) == sorted(r for rs in shown for r in rs)
        assert all("\x02" in h.snippet for h in far.values())
    finally:
        db.set_trace_callback(None)
        archive.fts._give_back(db)


def test_a_wolo_folder_changed_while_the_search_index_was_away_is_caught_up(tmp_path):
    # A Wolo folder session is one document keyed by its session.json, which Wolo saves again at
    # the same size (a new updated_at) whenever a message changes. The index cache learnt of a
    # change the full-text index did not (the server stopped before its writer got there): after
    # a restart no index pass runs, and the walker must still see that the rows are behind — by
    # the document's time, its size being the same
    root = tmp_path / "root"
    src = Path(__file__).resolve().parent.parent / "test_data" / "formats" / "wolo" / \
        "golden-mbos-wolo-0.13.3" / "sessions" / "Nova_260302_100000"
    folder = root / "sessions" / "Nova_260302_100000"
    shutil.copytree(src, folder)
    cache = tmp_path / "cache"
    Archive(root, cache).close()
    msg = folder / "messages" / "msg_001.json"
    msg.write_text(msg.read_text(encoding="utf-8").replace("divide()", "zorbal()"), encoding="utf-8")
    meta = folder / "session.json"
    size = meta.stat().st_size
    meta.write_text(meta.read_text(encoding="utf-8").replace("1772445610.2199993", "1772445699.2199993"),
                    encoding="utf-8")
    assert meta.stat().st_size == size
    # the index cache is brought up to date by a store with no full-text index listening
    quiet = Store([root], IndexCache(cache))
    (ref,) = quiet.sessions()
    quiet.bring_up_to_date(ref.key)
    quiet.indexer.stop()
    again = Archive(root, cache)
    try:
        assert again.keys("zorbal") == [ref.key]
        assert again.keys('"and divide then run"') == []  # (the words it had before)
    finally:
        again.close()
