"""Pages under load (issue 15): what a busy server does once per change rather than once per request."""

import json

from viewer.web import create_app

from conftest import SESSIONS


def test_looking_at_an_unchanged_session_notes_nothing(tmp_path, tour):
    """A session's summary is noted (which wakes the indexer and the list's streams) when it
    changes, not on every request — also for an index read back from the cache."""
    root, path = tour
    config = {"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
              "INDEX_ALL": False}
    create_app(config).test_client().get("/s/legion-feature-tour")  # indexed, in the cache
    app = create_app(config)  # a new process: the index comes from the cache
    client = app.test_client()
    indexer = app.extensions["viewer"].store.indexer
    client.get("/s/legion-feature-tour")
    seen = indexer.version
    for url in ("/s/legion-feature-tour", "/s/legion-feature-tour.json", "/s/legion-feature-tour",
                "/s/legion-feature-tour/w/main?after=0"):
        assert client.get(url).status_code == 200
    assert indexer.version == seen
    with open(path, "a") as f:
        f.write(json.dumps({"type": "assistant", "content": "one more", "session_id": "s",
                            "timestamp": 1761073399, "message_id": "one-more"}) + "\n")
    assert b"one-more" in client.get("/s/legion-feature-tour?at=end").data
    assert indexer.version > seen  # the change is noted
    seen = indexer.version
    client.get("/s/legion-feature-tour?at=end")
    client.get("/sessions.json")
    assert indexer.version == seen
