"""Session and thread keys: readable for ordinary names (existing permalinks keep working),
unambiguous, URL-safe and stable whatever the names are — and never dependent on scan order or on
which other sessions exist. Odd names give distinct links that open the right session."""

import json
import os
import re
from urllib.parse import quote

import pytest

from viewer.store import Store
from viewer.web import create_app

from conftest import SESSIONS

# a key is one URL path segment of unreserved characters, never a dot segment
URL_SAFE = re.compile(r"[A-Za-z0-9._~-]+")


def legion_lines(text):
    return "".join(json.dumps({"type": t, "content": f"{text} {i}", "timestamp": 1761073190.0 + i,
                               "session_id": "s"}) + "\n"
                   for i, t in enumerate(["user", "assistant"]))


def make(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if rel.endswith(".json"):
        p.write_text(json.dumps([{"role": "user", "content": text},
                                 {"role": "assistant", "content": "ok"}]))
    else:
        p.write_text(legion_lines(text))
    return p


ODD = ["plain", "a b", "a_b", "a%b", "a#b", "a?b", "ünïcödé", "日本語", "events", "x.json",
       "x", "y.jsonl", "dot.", "_under", "-dash", "~tilde", "semi;colon", "sessions.json"]


@pytest.fixture
def odd_root(tmp_path):
    root = tmp_path / "root"
    for i, name in enumerate(ODD):
        make(root, f"{name}/messages.jsonl", f"folder {i}")
    make(root, "files/a b.jsonl", "file a b")
    make(root, "files/a_b.jsonl", "file a_b")
    make(root, "docs/x.json", "doc x")  # beside a transcript of the same name
    make(root, "docs/x.jsonl", "jsonl x")
    make(root, "docs/alone.json", "doc alone")
    return root


def test_ordinary_names_keep_their_keys():
    keys_ = {r.key for r in Store([SESSIONS]).sessions()}
    assert keys_ == {"legion-feature-tour", "legion-hostile-content", "legion-mixed-timestamps",
                     "legion-multi-agent-comms",
                     "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"}


def test_every_odd_name_gets_a_distinct_url_safe_key_that_opens_it(tmp_path, odd_root):
    app = create_app({"ROOTS": [str(odd_root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    c = app.test_client()
    refs = Store([odd_root]).sessions()
    assert len(refs) == len(ODD) + 5
    assert len({r.key for r in refs}) == len(refs)
    for r in refs:
        assert URL_SAFE.fullmatch(r.key) and r.key not in (".", ".."), r.key
        assert not r.key.endswith(".json"), r.key
        page = c.get(f"/s/{r.key}")
        assert page.status_code == 200, r.key
        data = c.get(f"/s/{r.key}.json").get_json()
        assert data["path"] == r.path, r.key  # the JSON twin of this session, not another's
    plain = {r.label: r.key for r in refs}
    assert plain["plain"] == "plain" and plain["events"] == "events" and plain["x"] == "x"
    assert plain["-dash"] == "-dash" and plain["docs/alone"] == "docs~alone"
    # the namesakes x.json and x.jsonl are named by their files; the document gave way
    assert plain["docs/x.jsonl"] == "docs~x" and plain["docs/x.json"].startswith("docs~x~~")
    # the list links to each, under its own key
    html = c.get("/").get_data(as_text=True)
    for r in refs:
        assert f'href="/s/{r.key}"' in html


def test_keys_do_not_depend_on_scan_order_or_on_other_sessions(tmp_path, odd_root):
    before = {r.path: r.key for r in Store([odd_root]).sessions()}
    # remove half of the sessions (every other one, colliding names included): the rest keep keys
    for i, path in enumerate(sorted(before)):
        if i % 2:
            os.unlink(path)
    store = Store([odd_root])
    after = {r.path: r.key for r in store.sessions()}
    assert after
    for path, key in after.items():
        # the same key; or, for a .json document that gave way to a namesake now gone, its plain
        # key back — and the old link still opens it
        assert key == before[path] or path.endswith(".json"), path
        assert store.get(before[path]).path == path


def test_a_document_that_gave_way_to_its_namesake_keeps_its_old_link(tmp_path):
    root = tmp_path / "root"
    make(root, "x.json", "doc x")
    jsonl = make(root, "x.jsonl", "jsonl x")
    c = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"),
                    "WATCH": False}).test_client()
    rows = {s["path"]: s["key"] for s in c.get("/sessions.json").get_json()["sessions"]}
    assert rows[str(jsonl)] == "x"
    assert "jsonl x" in c.get("/s/x").get_data(as_text=True)  # its index is in memory now
    doc_key = rows[str(root / "x.json")]
    assert doc_key.startswith("x~~")
    jsonl.unlink()
    c.application.extensions["viewer"].store.invalidate()
    assert {s["key"] for s in c.get("/sessions.json").get_json()["sessions"]} == {"x"}
    r = c.get(f"/s/{doc_key}/m/L1")
    assert r.status_code in (301, 302, 308) and r.headers["Location"].endswith("/s/x/m/L1")
    assert "doc x" in c.get(r.headers["Location"]).get_data(as_text=True)


def test_a_key_ending_like_a_route_is_never_read_as_that_route(tmp_path):
    root = tmp_path / "root"
    make(root, "foo/messages.jsonl", "foo")
    make(root, "foo.json/messages.jsonl", "foo.json")
    make(root, "bar.json/messages.jsonl", "bar.json")
    c = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"),
                    "WATCH": False}).test_client()
    data = c.get("/sessions.json").get_json()["sessions"]
    by_label = {s["label"]: s["key"] for s in data}
    assert by_label["foo"] == "foo"
    for label in ("foo.json", "bar.json"):
        key = by_label[label]
        assert not key.endswith(".json")
        assert "foo.json 0" in c.get(f"/s/{by_label['foo.json']}").get_data(as_text=True)
        assert c.get(f"/s/{key}.json").get_json()["path"].endswith(f"/{label}/messages.jsonl")
    assert c.get("/s/foo.json").get_json()["path"].endswith("/foo/messages.jsonl")


def test_two_roots_of_the_same_name_get_distinct_prefixes(tmp_path):
    a, b = tmp_path / "a" / "runs", tmp_path / "b" / "runs"
    make(a, "s/messages.jsonl", "in a")
    make(b, "s/messages.jsonl", "in b")
    keys_ = {r.path: r.key for r in Store([a, b]).sessions()}
    assert keys_[str(a / "s" / "messages.jsonl")] == "runs~s"
    assert len(set(keys_.values())) == 2
    assert keys_ == {r.path: r.key for r in Store([a, b]).sessions()}


SUBAGENTS = [".", "..", "a b", "a%b", "a#b", "a?b", "ünï", "events", "main", "x.json",
             "semi;colon=1", "plain1"]


def test_sub_agent_threads_with_odd_names_get_distinct_working_links(tmp_path):
    project = tmp_path / "root" / "project"
    project.mkdir(parents=True)
    rec = {"type": "user", "uuid": "u1", "sessionId": "s1", "parentUuid": None,
           "timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": "hi"}}
    (project / "s1.jsonl").write_text(json.dumps(rec) + "\n")
    sub = project / "s1" / "subagents"
    sub.mkdir(parents=True)
    for i, name in enumerate(SUBAGENTS):
        r = dict(rec, uuid=f"sub-{i}", isSidechain=True, agentId=name,
                 message={"role": "user", "content": f"thread {i}"})
        (sub / f"agent-{name}.jsonl").write_text(json.dumps(r) + "\n")
    c = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "c"),
                    "WATCH": False}).test_client()
    threads = c.get("/s/project~s1.json").get_json()["threads"]
    names = [n for n in threads if n != "main"]
    assert len(names) == len(SUBAGENTS)
    assert "plain1" in names and "events" in names
    for name in names:
        assert URL_SAFE.fullmatch(name) and name not in (".", ".."), name
        assert ";" not in name and "=" not in name  # live cursors separate threads with them
        page = c.get(f"/s/project~s1/t/{name}")
        assert page.status_code == 200, name
        i = SUBAGENTS.index(next(s for s in SUBAGENTS
                                 if threads[name]["path"].endswith(f"/agent-{s}.jsonl")))
        assert f"thread {i}" in page.get_data(as_text=True), name
    html = c.get("/s/project~s1").get_data(as_text=True)
    for name in names:  # every thread is linked from the session page, under its own name
        assert f'href="/s/project~s1/t/{quote(name, safe="~")}"' in html, name


def test_thread_keys_are_plain_for_plain_names():
    from viewer import keys

    assert keys.thread_key("a7c4e2f91b3d5a6c8") == "a7c4e2f91b3d5a6c8"
    assert keys.thread_key("acompact-1") == "acompact-1"
    assert keys.thread_key("..") != keys.thread_key(".")
    assert keys.thread_key("main") != "main"
