"""Every route through Flask's test client: status, content, security headers, 404s, JSON twins."""

import re
import shutil
from html.parser import HTMLParser

import orjson
import pytest
from viewer.web import create_app

from conftest import CORPUS, SESSIONS

TOUR = "legion-feature-tour"
CC = "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"


def test_list_shows_every_bundled_session_most_recent_first(client):
    client.get("/sessions.json")  # waits for the rows' summaries; the page itself never waits
    r = client.get("/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    keys = re.findall(r'data-key="([^"]+)"', html)
    assert set(keys) == {TOUR, CC, "legion-multi-agent-comms", "legion-hostile-content",
                         "legion-mixed-timestamps"}
    assert "Refactor <code>" not in html  # titles are text, not markup
    assert "Refactor `timeline.py`" in html
    assert re.search(r'class="format"[^>]*>claude-code<', html)


def test_list_json(client):
    data = client.get("/sessions.json").get_json()
    assert data["total"] == 5
    row = next(s for s in data["sessions"] if s["key"] == TOUR)
    assert row["format"] == "legion" and row["tool_calls"] == 4 and row["unparsed"] == 1
    assert row["title"].startswith("Refactor")


def test_session_page_renders_timeline_with_calls_and_states(client):
    html = client.get(f"/s/{TOUR}").get_data(as_text=True)
    assert html.count('class="ev ') == 19  # every line, hidden ones included
    assert 'id="m-tour-prompt-1"' in html and 'id="m-L1"' in html
    for state in ("completed", "error"):
        assert f'<span class="state {state}">{state}</span>' in html
    assert '<span class="state interrupted" title="stopped before it finished">interrupted</span>' in html
    assert "orphan result" in html and "toolu_ghost_9" in html
    assert "Unparsed line 17" in html
    assert 'class="ev role-system kind-system is-hidden' in html
    assert re.search(r'</span> <span id="hidden-count" data-n="2">2 hidden events</span>', html)
    assert '<table class="diff-lines">' in html  # the Edit call as a diff
    assert 'class="a-f1"' in html  # ANSI red in the Bash output
    assert "<details class=\"thinking\"" in html


def test_permalink_opens_at_the_message(client):
    r = client.get(f"/s/{TOUR}/m/tour-bash")
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert 'data-target="m-tour-bash"' in html
    assert re.search(r'<li class="ev [^"]*target[^"]*" id="m-tour-bash"', html)


def test_permalink_to_a_hidden_event_reveals_hidden_events(client):
    html = client.get(f"/s/{TOUR}/m/L1").get_data(as_text=True)
    assert 'id="show-hidden" class="toggle-input" checked' in html


def test_permalink_into_a_subagent_opens_its_thread(client):
    html = client.get(f"/s/{CC}/m/00000000-0000-4000-8000-000000000103").get_data(as_text=True)
    assert 'id="m-00000000-0000-4000-8000-000000000103"' in html
    assert re.search(r'<details class="subthread" open>', html)


def test_unknown_session_and_event_are_404_pages(client):
    r = client.get("/s/no-such-session")
    assert r.status_code == 404 and "No session" in r.get_data(as_text=True)
    r = client.get(f"/s/{TOUR}/m/no-such-event")
    assert r.status_code == 404 and "No message" in r.get_data(as_text=True)
    assert client.get(f"/s/{TOUR}/raw/nope").status_code == 404
    assert client.get(f"/s/{TOUR}/t/nope").status_code == 404
    assert client.get(f"/s/{TOUR}/e/tour-read/full/b9").status_code == 404
    assert "Traceback" not in client.get("/s/x/y/z").get_data(as_text=True)


def test_session_json_twin(client):
    data = client.get(f"/s/{TOUR}.json").get_json()
    assert data["summary"]["format"] == "legion"
    assert data["tool_calls"]["toolu_bash_1"]["status"] == "error"
    grep = data["tool_calls"]["toolu_grep_never"]
    assert (grep["state"], grep["unanswered"]) == ("interrupted", False)  # over, not unanswered
    assert data["orphans"] == ["toolu_ghost_9"]
    assert [e["id"] for e in data["events"]][:2] == ["L1", "tour-prompt-1"]


def test_raw_view(client):
    r = client.get(f"/s/{TOUR}/raw/tour-bash", headers={"HX-Request": "true"})
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "toolu_bash_1" in html and "line 6" in html
    text = client.get(f"/s/{TOUR}/raw/tour-bash?download=1")
    assert text.mimetype == "text/plain"
    assert orjson.loads(text.data)["message_id"] == "tour-bash"


def test_window_and_thread_fragments(client):
    r = client.get(f"/s/{CC}/t/a7c4e2f91b3d5a6c8", headers={"HX-Request": "true"})
    html = r.get_data(as_text=True)
    assert html.count('class="ev ') == 4 and "<html" not in html
    page = client.get(f"/s/{CC}/t/a7c4e2f91b3d5a6c8").get_data(as_text=True)
    assert "<html" in page and "Sub-agent" not in page.split("<main>")[0]
    r = client.get(f"/s/{TOUR}/w/main?after=5")
    assert r.status_code == 200 and 'data-seq="5"' in r.get_data(as_text=True)


def test_show_all_returns_the_whole_block(client):
    html = client.get("/s/legion-hostile-content").get_data(as_text=True)
    m = re.search(r'href="(/s/legion-hostile-content/e/h-big/full/b0\?raw=1)"', html)
    assert m, "the long message is cut with a show-all link"
    full = client.get(m.group(1)).get_data(as_text=True)
    assert full.endswith("0123456789abcdef" * 3) and len(full) > 128_000


def test_security_headers(client):
    r = client.get("/")
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["X-Frame-Options"] == "DENY"


def test_foreign_host_header_is_refused(client):
    r = client.get("/", headers={"Host": "evil.example:5000"})
    assert r.status_code == 400
    assert client.get("/", headers={"Host": "localhost:5000"}).status_code == 200
    assert client.get("/", headers={"Host": "[::1]:5000"}).status_code == 200


def test_token_is_required_when_set(tmp_path):
    app = create_app({"ROOTS": [str(SESSIONS)], "CACHE_DIR": str(tmp_path), "WATCH": False,
                      "TOKEN": "s3cret"})
    c = app.test_client()
    assert c.get("/", headers={"Host": "10.0.0.5:5000"}).status_code == 401
    r = c.get("/?token=s3cret", headers={"Host": "10.0.0.5:5000"})
    assert r.status_code == 302 and "token" not in r.headers["Location"]
    assert c.get("/", headers={"Host": "10.0.0.5:5000"}).status_code == 200  # cookie kept
    assert c.get("/?token=wrong").status_code == 401


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def elements(html: str):
    p = _Elements()
    p.feed(html)
    return p.tags


def test_hostile_content_is_inert(client):
    html = client.get("/s/legion-hostile-content").get_data(as_text=True)
    tags = elements(html)
    scripts = [a.get("src") for t, a in tags if t == "script"]
    assert all(src and src.startswith("/static/") for src in scripts)  # only our own files
    assert not [(t, k) for t, a in tags for k in a if k.startswith("on")]  # no event handlers
    assert not [t for t, a in tags if t in ("iframe", "style", "object", "embed", "base")]
    # the only forms are the page's own: the search box, the Export menu's range and the
    # keyboard help's close button
    assert [a.get("id") or a.get("method") for t, a in tags if t == "form"] == \
        ["find", "export-range", "dialog"]
    hrefs = [a["href"] for t, a in tags if a.get("href")]
    srcs = [a["src"] for t, a in tags if a.get("src")]
    assert not [u for u in hrefs + srcs if u.lower().lstrip().startswith(("javascript:", "vbscript:"))]
    # nothing is loaded from elsewhere: every src is our own route or a safe inline image
    assert not [u for u in srcs if not u.startswith(("/", "data:image/png;base64,"))]
    assert any(u.startswith("data:image/png;base64,") for u in srcs)  # a safe inline image shows
    assert "alert(&#39;xss-script&#39;)" in html  # the payload is shown as text


def test_a_folder_named_like_a_transcript_is_skipped_with_a_reason(tmp_path):
    (tmp_path / "broken" / "messages.jsonl").mkdir(parents=True)  # cannot be read as a file
    app = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    c = app.test_client()
    r = c.get("/s/broken")
    assert r.status_code == 422 and "a folder, not a regular file" in r.get_data(as_text=True)
    html = c.get("/").get_data(as_text=True)
    assert "broken/messages.jsonl" in html and "a folder, not a regular file" in html


def test_a_claude_code_projects_folder_works_as_a_root(tmp_path):
    """~/.claude/projects: project folders of <session>.jsonl, sub-agents beside them (old layout)
    or in <session>/subagents/ (new layout); only sessions are listed, sub-agents nest."""
    projects = tmp_path / "projects"
    old = projects / "-Users-dain-workspace-coderabbit-review-helper"
    new = projects / "-experiments-worktrees"
    old.mkdir(parents=True)
    src = CORPUS / "claude-code" / "coderabbit-thinking"
    shutil.copy(src / "messages.jsonl", old / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl")
    for agent in src.glob("agent-*.jsonl"):
        shutil.copy(agent, old / agent.name)
    (old / "agent-deadbeef.jsonl").write_text(  # another session's sub-agent in the same folder
        '{"type": "user", "sessionId": "someone-else", "isSidechain": true, "uuid": "x",'
        ' "message": {"role": "user", "content": "hi"}}\n')
    src = CORPUS / "claude-code" / "worktrees-subagents"
    new.mkdir()
    shutil.copy(src / "messages.jsonl", new / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
    shutil.copytree(src / "subagents", new / "ef958aa1-0e93-49f0-bb71-150f63befcd1" / "subagents")
    app = create_app({"ROOTS": [str(projects)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    c = app.test_client()
    data = c.get("/sessions.json").get_json()
    keys = sorted(s["key"] for s in data["sessions"])
    assert keys == ["-Users-dain-workspace-coderabbit-review-helper~cb2e607c-c758-415a-8b45-c49e4631906a",
                    "-experiments-worktrees~ef958aa1-0e93-49f0-bb71-150f63befcd1"]
    old_s = c.get(f"/s/{keys[0]}.json").get_json()
    assert set(old_s["threads"]) == {"main", "2b93909d", "645808c9", "ea02459f"}  # not deadbeef
    new_s = c.get(f"/s/{keys[1]}.json").get_json()
    assert len(new_s["threads"]) == 7
    assert all(t["parent_call"] for n, t in new_s["threads"].items() if n != "main")


@pytest.mark.parametrize("fmt, media", [("html", "text/html"), ("md", "text/markdown"),
                                        ("json", "application/json")])
def test_a_download_names_its_charset_once(client, fmt, media):
    r = client.get(f"/s/legion-feature-tour/export?format={fmt}")
    assert r.status_code == 200
    assert r.headers["Content-Type"] in (f"{media}; charset=utf-8", media)


def test_a_session_page_opened_with_a_search_names_its_charset_once(client):
    r = client.get("/s/legion-feature-tour?q=window")
    assert r.status_code == 200 and "window" in r.get_data(as_text=True)
    assert r.headers["Content-Type"] == "text/html; charset=utf-8"
