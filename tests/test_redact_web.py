"""`serve --redact`: no secret leaves the server by any path — list, page, windows, JSON twins, raw
view, show all, live stream, downloads — and a secret keeps its marker number across them."""

import json
import re

import pytest

from viewer.web import create_app
from viewer.web.live import cursor_of

import planted
from test_live_stream import Stream

KEY = "planted"
SECRETS = planted.secrets()


@pytest.fixture
def root(tmp_path):
    planted.write_session(tmp_path / "sessions" / KEY)
    return tmp_path / "sessions"


def app_for(root, tmp_path, redact):
    return create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                       "REDACT": redact, "TESTING": True})


PATHS = [
    "/", "/sessions.json", f"/s/{KEY}", f"/s/{KEY}.json", f"/s/{KEY}/w/main?after=0",
    f"/s/{KEY}/m/a-1", f"/s/{KEY}/raw/r-1", f"/s/{KEY}/raw/r-1?download=1", f"/s/{KEY}/raw/a-1",
    f"/s/{KEY}/e/r-1/full/b0.c0?raw=1", f"/s/{KEY}/e/r-1/full/b1.c0?raw=1",
    f"/s/{KEY}/e/a-1/full/b0?raw=1", f"/s/{KEY}/e/p-1/full/b0?raw=1",
    f"/s/{KEY}/export?format=html", f"/s/{KEY}/export?format=md", f"/s/{KEY}/export?format=json",
    f"/s/{KEY}/export?format=md&from=a-1&to=r-1",
]


def leaks(text: str) -> list[str]:
    found = [k for k, v in SECRETS.items() if v in text]
    found += [k for k, v in SECRETS.items() if json.dumps(v)[1:-1] in text and k not in found]
    return found + (["raw-only"] if planted.RAW_ONLY in text else [])


@pytest.mark.parametrize("path", PATHS)
def test_no_path_serves_a_secret(root, tmp_path, path):
    client = app_for(root, tmp_path, True).test_client()
    r = client.get(path, headers={"HX-Request": "true"} if "raw/r-1" in path and "download"
                   not in path else {})
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    text = r.get_data(as_text=True)
    assert leaks(text) == []
    assert "[redacted: " in text
    # identifiers that only look random stay
    if path.endswith(("/s/planted", "b0.c0?raw=1")) or "export" in path or "raw/r-1" in path:
        assert planted.SHA in text or planted.UUID in text


@pytest.mark.parametrize("path", PATHS)
def test_without_redact_the_same_paths_show_them(root, tmp_path, path):
    """The control: the redacting test would catch a leak."""
    client = app_for(root, tmp_path, False).test_client()
    text = client.get(path).get_data(as_text=True)
    assert leaks(text) and "[redacted: " not in text


def test_a_secret_keeps_its_number_across_pages_and_downloads(root, tmp_path):
    client = app_for(root, tmp_path, True).test_client()
    page = client.get(f"/s/{KEY}").get_data(as_text=True)
    raw = client.get(f"/s/{KEY}/raw/a-2?download=1").get_data(as_text=True)
    md = client.get(f"/s/{KEY}/export?format=md").get_data(as_text=True)
    for text in (page, raw, md):
        assert "[redacted: aws-access-key #1]" in text and "aws-access-key #2" not in text
    assert "| aws-access-key | 1 | 2 |" in md


def test_the_live_stream_redacts_new_lines(root, tmp_path):
    app = app_for(root, tmp_path, True)
    client = app.test_client()
    start = cursor_of(app.extensions["viewer"].store.index(KEY))
    token = "xoxp-" + "2222222222-3333333333-" + "LiveStreamTokenAbCdEf"
    with open(root / KEY / "messages.jsonl", "a") as f:
        f.write(json.dumps({"type": "assistant", "message_id": "live-1", "timestamp": 1761073300.0,
                            "session_id": "s", "content": f"new token {token}, commit {planted.SHA}"})
                + "\n")
    stream = Stream(client.get(f"/s/{KEY}/events?after={start}"))
    ((_, _, got),) = stream.next()
    stream.close()
    assert 'id="m-live-1"' in got
    assert token not in got and "[redacted: slack-token #" in got and planted.SHA in got


def test_the_export_menu_says_downloads_are_redacted(root, tmp_path):
    page = app_for(root, tmp_path, True).test_client().get(f"/s/{KEY}").get_data(as_text=True)
    assert "this server redacts" in page
    plain = app_for(root, tmp_path, False).test_client().get(f"/s/{KEY}").get_data(as_text=True)
    assert "this server redacts" not in plain
    assert re.search(r'href="/s/planted/export\?format=md"', plain)


def test_cross_session_search_keeps_only_redacted_text(root, tmp_path):
    """The full-text index of a redacting server is fed redacted text: no snippet shows a
    secret, and searching for one finds nothing."""
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "REDACT": True, "TESTING": True})
    viewer = app.extensions["viewer"]
    try:
        viewer.fts.catch_up(KEY)
        assert viewer.fts.wait(60)
        client = app.test_client()
        found = client.get("/search.json?q=Deploy").get_json()
        assert found["total"] == 1 and found["results"][0]["key"] == KEY
        text = json.dumps(found)
        assert leaks(text) == [] and "[redacted: aws-access-key]" in text
        assert leaks(client.get("/search?q=key").get_data(as_text=True)) == []
        token = SECRETS["github-token"]
        assert client.get(f"/search.json?q={token}").get_json()["total"] == 0
    finally:
        viewer.store.indexer.stop()
        viewer.fts.close()


def test_a_page_that_joins_the_list_walkers_pass_at_its_end_is_redacted(root, tmp_path):
    """A request that joins a background pass the list's walker started (one that was not to keep
    its index) just as that pass hands its index over still gets it redacted: under load a page
    once served the planted keys in the clear that way."""
    import threading

    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "REDACT": True, "TESTING": True, "INDEX_ALL": False})
    store = app.extensions["viewer"].store
    at_end, go_on = threading.Event(), threading.Event()
    save = store._save

    def held_save(key, idx, quiet=False):  # the pass is past its "keep it?" step here
        if not quiet and not at_end.is_set():
            at_end.set()
            assert go_on.wait(30)
        save(key, idx, quiet)

    store._save = held_save
    store.build(KEY, keep=False)
    assert at_end.wait(30)
    got = {}
    page = threading.Thread(target=lambda: got.update(
        text=app.test_client().get(f"/s/{KEY}/e/p-1/full/b0?raw=1").get_data(as_text=True)))
    page.start()
    while store.running(KEY) is not None and store.running(KEY).keep is False:
        threading.Event().wait(0.01)  # until the page has joined the pass
    go_on.set()
    page.join(30)
    assert leaks(got["text"]) == [] and "[redacted: aws-access-key #1]" in got["text"]
