"""URLs with an event id are built from a per-session template (url_for is too slow for every event
of every page): they must be exactly what url_for builds, whatever the id holds."""

import pytest
from flask import url_for

from viewer.web.urls import Urls

IDS = ["L12", "sub.L3~2", "toolu_01AbC", "a b", "ü/ö", "100%", "q?x=1#h", "~~odd", "a:b;c=d@e",
       "'quote'\"", "dot.", "..", "emoji-🙂", "tab\there", "+plus&and"]


@pytest.mark.parametrize("root", ["", "/viewer"])
def test_event_urls_are_what_url_for_builds(app, root):
    with app.test_request_context("/", base_url=f"http://localhost{root}"):
        assert url_for("pages.sessions") == root + "/"
        for key in ("legion-feature-tour", "project~sess-1"):
            for eid in IDS:
                assert Urls.message(key, eid) == url_for("pages.message", key=key, event_id=eid)
                assert Urls.raw(key, eid) == url_for("pages.raw", key=key, event_id=eid)
                assert Urls.raw(key, eid, download=True) == url_for("pages.raw", key=key,
                                                                   event_id=eid, download=1)


def test_remembered_urls_are_what_url_for_builds_under_any_mount(app):
    """Every URL the pages link to is built once and remembered (web/urls.py `_url`): the same
    call under another mount point, or with an argument that is equal but written differently
    (1 and True), is built for what it is."""
    calls = [("session", ("legion-feature-tour",), {}, "pages.session", {"key": "legion-feature-tour"}),
             ("session", ("k",), {"at": "end"}, "pages.session", {"key": "k", "at": "end"}),
             ("window", ("k", "main"), {"before": 1}, "pages.window",
              {"key": "k", "thread": "main", "before": 1}),
             ("window", ("k", "main"), {"before": True}, "pages.window",
              {"key": "k", "thread": "main", "before": True}),
             ("sessions", (), {"format": ["legion", "claude-code"]}, "pages.sessions",
              {"format": ["legion", "claude-code"]}),
             ("static", ("app.js",), {}, "static", {"filename": "app.js"}),
             ("full", ("k", "e1", "b0"), {"raw": True}, "pages.full",
              {"key": "k", "event_id": "e1", "path": "b0", "raw": 1})]
    for root in ("", "/viewer", "", "/other"):
        with app.test_request_context("/", base_url=f"http://localhost{root}"):
            for name, args, kwargs, endpoint, values in calls:
                for _ in range(2):
                    assert getattr(Urls, name)(*args, **kwargs) == url_for(endpoint, **values)
                assert getattr(Urls, name)(*args, **kwargs).startswith(root + "/")
