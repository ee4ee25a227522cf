"""Files that are not sessions are skipped with a reason the list page shows (`Store.skipped`); an
empty session says so, and while it may still be written it waits for its first line."""

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from viewer.store import Store
from viewer.web import create_app

from conftest import SESSIONS

BINARY = "/bin/ls"
OLD = 1_700_000_000


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / "legion-feature-tour", root / "tour")
    (root / "garbage").mkdir()
    shutil.copyfile(BINARY, root / "garbage" / "messages.jsonl")
    (root / "notes.jsonl").write_text("Meeting notes\n- ship it\n")
    return root


def client_for(root, tmp_path):
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False})
    return app.test_client()


def test_discovery_skips_what_is_not_a_transcript_with_the_reason(root):
    store = Store([root])
    assert [r.key for r in store.sessions()] == ["tour"]
    assert store.skipped == {
        str(root / "garbage" / "messages.jsonl"): "not a transcript (a binary file)",
        str(root / "notes.jsonl"): "not a transcript (its first lines are not JSON records)",
    }


def test_the_list_says_why_a_file_is_skipped(root, tmp_path):
    c = client_for(root, tmp_path)
    html = c.get("/").get_data(as_text=True)
    assert "Sessions <span class=\"muted\">· 1</span>" in html
    skipped = html[html.index('id="skipped"'):]
    assert "2 files that are not a session" in skipped
    assert f"{root / 'garbage' / 'messages.jsonl'}</code> <span class=\"why\">not a transcript " \
           "(a binary file)" in skipped
    data = json.loads(c.get("/sessions.json").get_data())
    assert [s["key"] for s in data["sessions"]] == ["tour"]
    assert {s["reason"] for s in data["skipped"]} == {
        "not a transcript (a binary file)",
        "not a transcript (its first lines are not JSON records)"}


def test_a_skipped_file_has_one_clear_message_in_the_page(root, tmp_path):
    r = client_for(root, tmp_path).get("/s/garbage")
    assert r.status_code == 422
    html = r.get_data(as_text=True)
    assert "Not a session" in html
    assert f"{root / 'garbage' / 'messages.jsonl'} is skipped: not a transcript (a binary file)" in html
    assert "unparsed" not in html.lower()


def test_a_first_record_longer_than_what_discovery_reads_is_listed(tmp_path):
    """Discovery reads 16 KB of a file: a stray line, then a first record longer than that (a big
    pasted prompt), is a session, not "text that is not JSON records"."""
    root = tmp_path / "sessions"
    (root / "s").mkdir(parents=True)
    big = {"role": "user", "content": "x" * (40 << 10)}
    (root / "s" / "messages.jsonl").write_text(
        "starting agent…\n" + json.dumps(big) + "\n" + json.dumps({"role": "assistant",
                                                                    "content": "ok"}) + "\n")
    store = Store([root])
    assert [r.key for r in store.sessions()] == ["s"] and store.skipped == {}


def test_a_file_that_turns_into_garbage_is_skipped_then(tmp_path):
    root = tmp_path / "sessions"
    (root / "s").mkdir(parents=True)
    path = root / "s" / "messages.jsonl"
    path.write_bytes(b"")  # listed: an empty session may be about to be written
    c = client_for(root, tmp_path)
    assert c.get("/s/s").status_code == 200
    shutil.copyfile(BINARY, path)
    r = c.get("/s/s")
    assert r.status_code == 422 and "not a transcript (a binary file)" in r.get_data(as_text=True)
    html = c.get("/").get_data(as_text=True)
    assert 'id="skipped"' in html and "/s/s\"" not in html


def _page_joining_a_held_build(tmp_path, monkeypatch, first: bytes, change):
    """A build (the walker's) of a session holding `first` reads it and is held before it hands
    its index over, still listed as running; `change(path)` changes the file; then the session's
    page is asked for and joins that build. (the page's answer, the build's own index)"""
    root = tmp_path / "sessions"
    (root / "s").mkdir(parents=True)
    path = root / "s" / "messages.jsonl"
    path.write_bytes(first)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    store = app.extensions["viewer"].store
    store.flush()
    store.forget("s")  # what start-up kept of the session: the build reads it itself
    read, go = threading.Event(), threading.Event()
    save, build = store._save, store.build

    def held_save(key, idx, quiet=False):  # the build, done reading, stops before it ends
        if threading.current_thread().name == "index s":
            read.set()
            assert go.wait(30)
        save(key, idx, quiet)

    def joined(key, **kw):  # the page joins the held build: it may end now
        b = build(key, **kw)
        if threading.current_thread() is me:
            go.set()
        return b

    me = threading.current_thread()  # (the test client answers on it)
    monkeypatch.setattr(store, "_save", held_save)
    monkeypatch.setattr(store, "build", joined)
    running = build("s", keep=False)  # as the walker's pass over the session
    assert read.wait(30) and store.running("s") is running
    change(path)
    r = app.test_client().get("/s/s")
    assert go.is_set()  # (the page did join the build)
    return r, running.wait(30)


def test_a_file_changed_as_a_background_build_ends_is_judged_on_what_it_holds(tmp_path,
                                                                               monkeypatch):
    """A build that has read the file and found it as it read it is still listed as running
    while it hands its index over: a page asked for after the file was overwritten with a binary
    file joins that build, and must not show what the build read before (the empty session, with
    a 200) but what the file holds now."""
    r, idx = _page_joining_a_held_build(tmp_path, monkeypatch, b"",
                                        lambda path: shutil.copyfile(BINARY, path))
    assert r.status_code == 422 and "not a transcript (a binary file)" in r.get_data(as_text=True)
    assert idx.summary.events == 0  # what the build itself read: the empty file


def test_a_file_deleted_as_a_background_build_ends_is_not_found(tmp_path, monkeypatch):
    """The same, for a file deleted meanwhile: the page says it is gone (it was a server error)."""
    r, idx = _page_joining_a_held_build(tmp_path, monkeypatch,
                                        b'{"role": "user", "content": "hello"}\n', Path.unlink)
    assert r.status_code == 404 and "messages.jsonl" in r.get_data(as_text=True)
    assert idx.summary.events == 1


def test_a_file_swapped_while_it_is_read_is_judged_on_what_it_holds(tmp_path, monkeypatch):
    """Detection may see the file empty (just truncated by its writer) and the pass read what was
    written since: a binary file must not become hundreds of "unparsed lines" that way."""
    from viewer.formats import detect
    from viewer.index import SessionIndex

    path = tmp_path / "messages.jsonl"
    path.write_bytes(b"")
    real = detect.detect_file

    def then_swapped(p):
        found = real(p)
        if not path.stat().st_size:
            shutil.copyfile(BINARY, path)
        return found

    monkeypatch.setattr(detect, "detect_file", then_swapped)
    with pytest.raises(detect.NotTranscript, match="binary"):
        SessionIndex(str(path)).build()


def test_a_page_asked_for_while_a_binary_file_is_indexed_says_it_is_skipped(tmp_path, monkeypatch):
    """A page drawn from part of the file while its index is built (the early first screen) meets
    the binary file first: the same plain 422, not a server error."""
    from viewer.store import Store

    root = tmp_path / "sessions"
    (root / "s").mkdir(parents=True)
    (root / "s" / "messages.jsonl").write_bytes(b"")
    c = client_for(root, tmp_path)
    assert c.get("/s/s").status_code == 200
    shutil.copyfile(BINARY, root / "s" / "messages.jsonl")
    monkeypatch.setattr(Store, "usable", lambda self, key: None)  # as while a build runs
    r = c.get("/s/s")
    assert r.status_code == 422 and "not a transcript (a binary file)" in r.get_data(as_text=True)


def test_an_empty_session_says_so(tmp_path):
    root = tmp_path / "sessions"
    (root / "done").mkdir(parents=True)
    (root / "done" / "messages.jsonl").write_bytes(b"")
    os.utime(root / "done" / "messages.jsonl", (OLD, OLD))
    (root / "fresh").mkdir()
    (root / "fresh" / "messages.jsonl").write_bytes(b"")
    c = client_for(root, tmp_path)
    done = c.get("/s/done").get_data(as_text=True)
    assert "Empty session" in done and "the file holds no records" in done
    fresh = c.get("/s/fresh").get_data(as_text=True)
    assert "No events yet" in fresh and "waiting for the first line" in fresh
    listing = c.get("/").get_data(as_text=True)
    assert listing.count('class="empty-badge">empty session<') == 2


@pytest.mark.browser
def test_the_first_line_of_an_empty_session_replaces_the_wait(tmp_path, serve, watched_page):
    root = tmp_path / "sessions"
    (root / "fresh").mkdir(parents=True)
    path = root / "fresh" / "messages.jsonl"
    path.write_bytes(b"")
    srv = serve(root)
    page = watched_page
    page.goto(f"{srv.url}/s/fresh")
    wait = page.locator("#empty-session")
    expect(wait).to_contain_text("No events yet")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    with open(path, "a") as f:
        f.write(json.dumps({"type": "user", "content": "first words", "session_id": "s",
                            "message_id": "first", "timestamp": 1761073400}) + "\n")
    expect(page.locator("#m-first")).to_contain_text("first words")
    expect(page.locator("#empty-session")).to_be_hidden()
    assert page.problems == []
