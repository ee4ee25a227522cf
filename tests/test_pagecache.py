"""Pages drawn once for the requests that ask for them together, and never staler than the session:
a change to the file shows on the next request, whatever was drawn before."""

import json
import threading

import pytest

from viewer import render
from viewer.web import create_app

KEY = "legion-feature-tour"


@pytest.fixture
def setup(tour, tmp_path):
    root, path = tour
    return create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False}), path


def append(path, i):
    with open(path, "a") as f:
        f.write(json.dumps({"type": "assistant", "content": f"fresh **line** {i}", "session_id": "s",
                            "timestamp": 1761073300 + i, "message_id": f"fresh-{i}"}) + "\n")


URLS = [f"/s/{KEY}", f"/s/{KEY}?at=start", f"/s/{KEY}.json", f"/s/{KEY}/m/tour-read",
        f"/s/{KEY}/w/main?after=0"]


def test_requests_that_come_together_share_one_drawing(setup):
    app, _ = setup
    pages = app.extensions["viewer"].pages
    app.test_client().get(f"/s/{KEY}")  # the index built, templates loaded
    for url in URLS:
        draws = pages.draws
        bodies, start = [], threading.Barrier(12)

        def get():
            start.wait()
            r = app.test_client().get(url)
            bodies.append((r.status_code, r.data))

        threads = [threading.Thread(target=get) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(bodies) == 12 and {s for s, _ in bodies} == {200}, url
        assert len({b for _, b in bodies}) == 1, url  # everyone got the same page
        # drawn once (twice when the clock's second turned meanwhile), not twelve times
        assert pages.draws - draws <= 2, url


def test_a_change_to_the_session_shows_on_the_next_request(setup):
    app, path = setup
    client = app.test_client()
    before = {url: client.get(url).data for url in URLS}
    for i in range(3):  # within the same second as the pages just drawn
        append(path, i)
        assert f"fresh-{i}".encode() in client.get(f"/s/{KEY}").data
        assert f"fresh-{i}" in [e["id"] for e in client.get(f"/s/{KEY}.json").get_json()["events"]]
    page = client.get(f"/s/{KEY}/m/tour-read").data
    assert page != before[f"/s/{KEY}/m/tour-read"]  # its live cursor moved on
    assert b"fresh-2" in client.get(f"/s/{KEY}/w/main?after=0&at=end").data


def test_a_search_page_is_drawn_for_its_own_request(setup):
    app, _ = setup
    client = app.test_client()
    pages = app.extensions["viewer"].pages
    draws = pages.draws
    for q in ("window", "diff"):
        r = client.get(f"/s/{KEY}?q={q}")
        assert r.status_code == 200 and b"<mark" in r.data
    assert pages.draws == draws


def test_kept_markdown_stays_within_its_budget(monkeypatch):
    monkeypatch.setattr(render, "MARKDOWN_KEPT", 64 << 10)
    monkeypatch.setattr(render, "_md_kept", type(render._md_kept)())
    monkeypatch.setattr(render, "_md_size", 0)
    first = render.markdown("**bold** and `code`")
    assert render.markdown("**bold** and `code`") == first == render._markdown_html("**bold** and `code`")
    for i in range(2000):
        render.markdown(f"message {i} with *emphasis*")
    assert 0 < render._md_size <= 64 << 10
    assert render.markdown("message 1999 with *emphasis*") == "<p>message 1999 with <em>emphasis</em></p>\n"
