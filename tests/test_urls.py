"""URLs with an event id are built from a per-session template (url_for is too slow for every event
of every page): they must be exactly what url_for builds, whatever the id holds."""

import pytest
from flask import url_for

from viewer.web.urls import Urls

IDS = ["L12", "sub.L3~2", "toolu_01AbC", "a b", "ü/ö", "100%", "q?x=1#h", "~~odd", "a:b;c=d@e",
       "'quote'\"", "dot.", "..", "emoji-🙂", "tab\there", "+plus&and"]


@pytest.mark.parametrize("root", ["", "/viewer"])
def test_event_urls_are_what_url_for_builds(app, root):
    with app.test_request_context("/", environ_base={"SCRIPT_NAME": root}):
        for key in ("legion-feature-tour", "project~sess-1"):
            for eid in IDS:
                assert Urls.message(key, eid) == url_for("pages.message", key=key, event_id=eid)
                assert Urls.raw(key, eid) == url_for("pages.raw", key=key, event_id=eid)
                assert Urls.raw(key, eid, download=True) == url_for("pages.raw", key=key,
                                                                   event_id=eid, download=1)
