"""Indexing in the background: one pass per session however many ask, listeners and their sink,
files that change while they are read, and the walker over a whole root.

Builds are held back and released with events from a listener's `progress` hook: no test sleeps."""

import json
import os
import threading

import pytest

from viewer import index as index_module
from viewer import store as store_module
from viewer.cache import IndexCache
from viewer.index import SessionIndex
from viewer.store import Store

from conftest import write_claude_session


class Gate:
    """A listener that holds a build when it has read `at` bytes (0: before it reads anything)
    until released, and records what every listener method heard."""

    def __init__(self, at=None):
        self.at = at
        self.reached = threading.Event()
        self.release = threading.Event()
        self.heard = []
        self.sunk = []

    def progress(self, key, read, total):
        if self.at is not None and read >= self.at and not self.reached.is_set():
            self.reached.set()
            assert self.release.wait(30), "the test never released the build"

    def sink(self, key, idx):
        return lambda thread, seq, ev: self.sunk.append((key, thread, seq, ev.id))

    def indexed(self, key, idx):
        self.heard.append(("indexed", key))

    def extended(self, key, idx, change):
        self.heard.append(("extended", key, dict(change.new)))

    def removed(self, key, path):
        self.heard.append(("removed", key))


@pytest.fixture
def small_steps(monkeypatch):
    """Background builds for anything over 64 KB, progress every 16 KB: small files suffice."""
    monkeypatch.setattr(store_module, "EARLY_ABOVE", 64 << 10)
    monkeypatch.setattr(index_module, "PROGRESS_STEP", 16 << 10)


def session(tmp_path, name="big", size=400_000):
    path = tmp_path / "root" / f"{name}.jsonl"
    write_claude_session(path, size)
    return tmp_path / "root", path


def columns(idx):
    th = idx.threads["main"]
    return (list(th.ids), list(th.offsets), list(th.lines), list(th.kinds), bytes(th.hidden),
            idx.summary, {c: (v.status, v.call, v.result) for c, v in idx.calls.calls.items()})


def test_everyone_who_asks_shares_one_background_pass(tmp_path, small_steps):
    root, path = session(tmp_path)
    store = Store([root], IndexCache(tmp_path / "cache"))
    gate = Gate(at=0)
    store.indexer.listen(gate)
    assert store.usable("big") is None  # too big to index inside a request
    build = store.build("big")
    assert gate.reached.wait(30)
    got = []
    waiters = [threading.Thread(target=lambda: got.append(store.index("big"))) for _ in range(3)]
    for w in waiters:
        w.start()
    assert store.build("big") is build and store.running("big") is build
    assert not build.done
    gate.release.set()
    for w in waiters:
        w.join(30)
    assert len(got) == 3 and all(idx is got[0] for idx in got)
    assert [h for h in gate.heard if h[0] == "indexed"] == [("indexed", "big")]  # one pass
    assert store.running("big") is None and store.usable("big") is got[0]
    assert columns(got[0]) == columns(SessionIndex(path).build())


def test_the_sink_sees_every_event_once_in_order_then_what_is_appended(tmp_path):
    root, path = session(tmp_path, size=20_000)
    store = Store([root])
    gate = Gate()
    store.indexer.listen(gate)
    idx = store.index("big")
    n = len(idx.threads["main"])
    assert [(t, s) for _, t, s, _ in gate.sunk] == [("main", i) for i in range(n)]
    assert [e for _, _, _, e in gate.sunk] == idx.threads["main"].ids
    write_claude_session(path, path.stat().st_size + 1, start=1000, old=False)
    store.refresh("big")
    added = len(idx.threads["main"]) - n
    assert added == 5 and [s for _, _, s, _ in gate.sunk[n:]] == list(range(n, n + 5))
    assert gate.heard == [("indexed", "big"), ("extended", "big", {"main": n})]
    os.unlink(path)
    store.refresh("big")
    assert gate.heard[-1] == ("removed", "big")


def test_no_sink_no_cost_and_a_failing_listener_costs_nothing_else(tmp_path):
    root, path = session(tmp_path, size=20_000)

    class Broken:
        def sink(self, key, idx):
            raise RuntimeError("listener bug")

        def indexed(self, key, idx):
            raise RuntimeError("listener bug")

    store = Store([root])
    store.indexer.listen(Broken())
    assert columns(store.index("big")) == columns(SessionIndex(path).build())
    assert store.index("big").sink is None


@pytest.mark.parametrize("change", ["grows", "truncated", "rewritten"])
def test_a_file_that_changes_while_its_background_index_runs_is_indexed_right(tmp_path, small_steps, change):
    root, path = session(tmp_path)
    store = Store([root], IndexCache(tmp_path / "cache"))
    gate = Gate(at=path.stat().st_size // 2)
    store.indexer.listen(gate)
    build = store.build("big")
    assert gate.reached.wait(30)  # half of the file is read
    if change == "grows":
        write_claude_session(path, path.stat().st_size + 50_000, start=5000, old=False)
    elif change == "truncated":
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 4)
    else:  # cut and written again past where the pass is, in place (same inode)
        with open(path, "r+b") as f:
            f.truncate(0)
        write_claude_session(path, path.stat().st_size + 600_000, start=7000, old=False)
    gate.release.set()
    idx = build.wait(30)
    assert columns(idx) == columns(SessionIndex(path).build())
    store.flush()
    # and the cache holds the right index too
    again = Store([root], IndexCache(tmp_path / "cache")).index("big")
    assert columns(again) == columns(idx)


def test_an_unreadable_session_fails_every_waiter_plainly(tmp_path, small_steps, unreadable):
    root = tmp_path / "root"
    broken = root / "broken" / "messages.jsonl"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"type": "user", "content": "hi", "session_id": "s"}\n')
    unreadable(broken)
    store = Store([root])
    with pytest.raises(OSError):
        store.index("broken")
    assert store.running("broken") is None
    store.indexer.want(["broken"])
    assert store.indexer.idle(30)
    assert isinstance(store.summary_of("broken"), OSError)


def test_the_walker_indexes_a_whole_root_into_the_cache_pages_first(tmp_path):
    root = tmp_path / "root"
    for i in range(12):
        write_claude_session(root / f"p{i % 3}" / f"s{i:02d}.jsonl", 3000 + 500 * i)
    store = Store([root], IndexCache(tmp_path / "cache"))
    gate = Gate(at=0)
    order = []
    gate.indexed = lambda key, idx: order.append(key)
    store.indexer.listen(gate)
    store.indexer.start()
    assert gate.reached.wait(30)  # holding the first pass
    wanted = ["p2~s11", "p0~s00"]
    store.indexer.want(wanted)
    gate.release.set()
    assert store.indexer.idle(60)
    assert sorted(order) == sorted(r.key for r in store.sessions())  # each once
    assert order[1:3] == wanted  # right after the pass that was held
    assert store.indexer.done == store.indexer.total == 12
    assert not store._memory  # summaries for the list, not indexes in memory
    store.flush()
    fresh = Store([root], IndexCache(tmp_path / "cache"))
    sums = fresh.summaries(fresh.sessions())
    assert all(s is not None and s.tool_calls >= 1 for s in sums.values())


def test_the_walker_brings_grown_sessions_up_to_date_and_tells_of_removed_ones(tmp_path):
    root = tmp_path / "root"
    for i in range(3):
        write_claude_session(root / f"s{i}.jsonl", 5000)
    store = Store([root], IndexCache(tmp_path / "cache"))
    gate = Gate()
    store.indexer.listen(gate)
    store.indexer.start()
    assert store.indexer.idle(30)
    before = store.summary_of("s1").tool_calls
    write_claude_session(root / "s1.jsonl", 9000, start=100, old=False)
    os.unlink(root / "s2.jsonl")
    store.invalidate()  # what the watcher says
    assert store.indexer.idle(30)
    assert store.summary_of("s1").tool_calls > before
    assert ("removed", "s2") in gate.heard
    assert any(h[:2] == ("extended", "s1") for h in gate.heard)
    assert store.indexer.total == 2


def test_a_session_a_page_indexes_while_the_walker_looks_still_counts_as_done(tmp_path):
    """The list's "Indexing 2 of 3 sessions" must not stay up when a page indexed the third
    between the walker's look at what is known and its count of what is left."""
    root = tmp_path / "root"
    for i in range(3):
        write_claude_session(root / f"s{i}.jsonl", 5000)
    store = Store([root], IndexCache(tmp_path / "cache"))
    look = store.summaries

    def a_page_opens_s1_meanwhile(refs, *args, **kwargs):
        found = look(refs, *args, **kwargs)
        if found.get("s1") is None:
            store.index("s1")  # (on a request thread, in the app)
        return found

    store.summaries = a_page_opens_s1_meanwhile
    store.indexer.start()
    assert store.indexer.idle(30)
    assert store.indexer.done == store.indexer.total == 3
    assert all(store.summary_of(f"s{i}") is not None for i in range(3))
