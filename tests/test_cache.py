"""The disk cache of indexes: hits, extension on append, rebuild on truncation, corrupt files."""

import json
import logging
import shutil

from viewer.cache import IndexCache
from viewer.index import SessionIndex
from viewer.store import Store

from conftest import SESSIONS


def copy_tour(tmp_path):
    dst = tmp_path / "sessions" / "tour"
    shutil.copytree(SESSIONS / "legion-feature-tour", dst)
    return dst.parent, dst / "messages.jsonl"


def indexed(root, folder, key="tour"):
    """Index a session through a store and wait until its cache write has landed."""
    store = Store([root], IndexCache(folder))
    idx = store.index(key)
    store.flush()
    return idx


def test_a_new_store_reads_the_cached_index_without_reindexing(tmp_path, monkeypatch):
    root, main = copy_tour(tmp_path)
    first = indexed(root, tmp_path / "cache")
    builds = []
    monkeypatch.setattr(SessionIndex, "build", lambda self: builds.append(1) or self)
    again = Store([root], IndexCache(tmp_path / "cache")).index("tour")
    assert builds == []
    assert again.threads["main"].ids == first.threads["main"].ids
    assert again.calls.call("toolu_bash_1") == first.calls.call("toolu_bash_1")  # unpacked alone
    assert again.calls.calls == first.calls.calls and again.calls.orphans == first.calls.orphans
    assert again.summary == first.summary


def test_a_grown_file_extends_the_cached_index(tmp_path, monkeypatch):
    root, main = copy_tour(tmp_path)
    n = len(indexed(root, tmp_path / "cache").threads["main"])
    with open(main, "a") as f:
        f.write(json.dumps({"type": "user", "content": "one more", "message_id": "more"}) + "\n")
    builds = []
    real = SessionIndex.build
    monkeypatch.setattr(SessionIndex, "build", lambda self: builds.append(1) or real(self))
    idx = Store([root], IndexCache(tmp_path / "cache")).index("tour")
    assert builds == []  # extended from the cached offset, not rebuilt
    assert len(idx.threads["main"]) == n + 1 and idx.locate("more") == ("main", n)


def test_a_truncated_file_rebuilds(tmp_path):
    root, main = copy_tour(tmp_path)
    indexed(root, tmp_path / "cache")
    main.write_text(json.dumps({"type": "user", "content": "fresh start", "message_id": "x",
                                "session_id": "s"}) + "\n")
    idx = Store([root], IndexCache(tmp_path / "cache")).index("tour")
    assert idx.threads["main"].ids == ["x"] and idx.summary.title == "fresh start"


def test_a_corrupt_cache_is_discarded_with_a_log_line(tmp_path, caplog):
    root, main = copy_tour(tmp_path)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "index.sqlite").write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING, logger="viewer.cache"):
        idx = indexed(root, tmp_path / "cache")
    assert len(idx.threads["main"]) == 19
    assert any("corrupt" in r.message for r in caplog.records)
    # and it works as a cache again afterwards
    indexed(root, tmp_path / "cache")
    assert IndexCache(tmp_path / "cache").load(str(main)) is not None


def test_an_unwritable_cache_folder_only_disables_the_cache(tmp_path, caplog):
    root, main = copy_tour(tmp_path)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING, logger="viewer.cache"):
        idx = Store([root], IndexCache(blocker / "cache")).index("tour")
    assert len(idx.threads["main"]) == 19
    assert any("disabled" in r.message for r in caplog.records)


def test_list_summaries_come_from_the_cache(tmp_path, monkeypatch):
    root, main = copy_tour(tmp_path)
    indexed(root, tmp_path / "cache")
    store = Store([root], IndexCache(tmp_path / "cache"))
    monkeypatch.setattr(SessionIndex, "build", lambda self: (_ for _ in ()).throw(AssertionError))
    (s,) = store.summaries(store.sessions()).values()
    assert s.title.startswith("Refactor") and s.tool_calls == 4


def test_a_locked_cache_is_skipped_never_deleted(tmp_path):
    """Another process holding the cache's write lock must not make us discard its database."""
    import sqlite3

    root, main = copy_tour(tmp_path)
    store = Store([root], IndexCache(tmp_path / "cache"))
    store.index("tour")
    store.flush()
    # the indexing store's connection closed: its writer thread holds the store, so a collection
    # did not always close it, and switching the journal mode below then met "database is locked"
    store.cache.close()
    other = sqlite3.connect(tmp_path / "cache" / "index.sqlite", isolation_level=None)
    other.execute("PRAGMA journal_mode=DELETE")  # so that an exclusive lock also keeps readers out
    other.execute("BEGIN EXCLUSIVE")
    try:
        cache = IndexCache(tmp_path / "cache")
        cache._open_timeout = 0.1
        assert cache.load(str(main)) is None  # busy: no answer this time
    finally:
        other.rollback()
        other.close()
    assert cache.load(str(main)) is not None  # the data survived, and the cache works again


def test_a_new_server_reads_its_cache_at_start_up(tmp_path, monkeypatch):
    """Warm start: the sessions, their cached summaries and the newest session's index are read
    while the server starts, so its first list and session pages read nothing from the cache."""
    import os
    import time

    from viewer.web import create_app

    root, main = copy_tour(tmp_path)
    os.utime(main)  # the newest (copied, it keeps the checkout's time: maybe older than an hour)
    other = shutil.copytree(main.parent, root / "older")
    os.utime(other / "messages.jsonl", (time.time() - 3600,) * 2)
    indexed(root, tmp_path / "cache")
    indexed(root, tmp_path / "cache", "older")
    config = {"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
              "INDEX_ALL": False}
    store = create_app(config).extensions["viewer"].store
    assert store.summary_of("tour") is not None and store.summary_of("older") is not None
    app = create_app(config)
    reads = []
    for name in ("load", "summaries"):
        real = getattr(IndexCache, name)
        monkeypatch.setattr(IndexCache, name, lambda self, *a, _r=real, _n=name: reads.append(_n) or _r(self, *a))
    client = app.test_client()
    assert client.get("/").status_code == 200
    r = client.get("/s/tour")
    assert r.status_code == 200 and b"tour" in r.data
    assert reads == []  # the newest session: in memory since start-up
    assert client.get("/s/older").status_code == 200
    assert reads == ["load"]  # an older one is read when it is asked for


def test_ids_of_any_kind_come_back_from_the_cache_written_in_parts(tmp_path, monkeypatch):
    """Event and call ids travel as blobs beside the JSON header (orjson reserves ten times a long
    string's size while writing it: the peak memory of a 1 GB session's pass), and the cache writes
    the index's parts one after the other: call ids with a newline, quotes or non-ASCII
    characters come back as they were, and no id is left in the header."""
    root = tmp_path / "sessions"
    root.mkdir()
    odd = ["toolu_plain", 'toolu_"quoted"', "toolu_ünï\u2028code", "toolu_new\nline"]
    lines = [{"type": "user", "uuid": "u-1", "sessionId": "s", "timestamp": "2025-10-21T09:00:00Z",
              "message": {"role": "user", "content": "Run them"}},
             {"type": "assistant", "uuid": "a-1", "sessionId": "s", "timestamp": "2025-10-21T09:00:01Z",
              "message": {"id": "m1", "role": "assistant", "model": "claude-opus-4-6", "content": [
                  {"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": "true"}}
                  for cid in odd]}},
             {"type": "user", "uuid": "u-2", "sessionId": "s", "timestamp": "2025-10-21T09:00:02Z",
              "message": {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": cid, "content": "ok"} for cid in odd]}}]
    (root / "odd.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    joined = []
    monkeypatch.setattr(SessionIndex, "dump", lambda self: joined.append(1) or b"")
    first = indexed(root, tmp_path / "cache", key="odd")
    assert joined == []  # the store hands the cache the parts, never one joined copy
    parts = first.dump_parts()
    header = parts[1].decode("utf-8", "surrogatepass")
    assert "toolu_plain" not in header and "u-1" not in header
    again = Store([root], IndexCache(tmp_path / "cache")).index("odd")
    assert again.threads["main"].ids == first.threads["main"].ids
    for cid in odd:
        assert cid in first.calls.calls
        assert again.calls.call(cid) == first.calls.call(cid)
        assert again.calls.call(cid).result is not None


def test_a_session_read_after_every_line_is_written_to_the_cache_every_few_seconds(tmp_path,
                                                                                  monkeypatch):
    """A page of a live session asks for its index after every line written: the cache is written
    at most every few seconds (not ten times a second), and a new server started meanwhile shows
    every line (it extends the index it finds in the cache)."""
    root, main = copy_tour(tmp_path)
    store = Store([root], IndexCache(tmp_path / "cache"))
    n = len(store.index("tour").threads["main"])
    store.flush()
    saves = []
    real = IndexCache.save
    monkeypatch.setattr(IndexCache, "save", lambda self, *a: saves.append(1) or real(self, *a))
    for i in range(10):
        with open(main, "a") as f:
            f.write(json.dumps({"type": "user", "content": f"line {i}", "message_id": f"l{i}"}) + "\n")
        assert store.index("tour").locate(f"l{i}") == ("main", n + i)
    store.flush()
    assert len(saves) <= 1
    again = Store([root], IndexCache(tmp_path / "cache")).index("tour")
    assert [again.locate(f"l{i}") for i in range(10)] == [("main", n + i) for i in range(10)]
