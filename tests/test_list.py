"""The session list: filters, sorts, grouping and pages over a root holding several formats, the
same in the page and in `/sessions.json`; and the archive's stats."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

import pytest

from viewer import catalog
from viewer.web import create_app
from conftest import CORPUS, SESSIONS, quiet_copy

OLD = 1_700_000_000


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """Two Claude Code projects, legion sessions, OpenAI and AgentScope documents, a Cline task."""
    root = tmp_path_factory.mktemp("archive")
    cc = CORPUS / "claude-code"
    for project, names in {"-work-web": ["log-sample-thinking-image", "me-next-image-errors"],
                           "-work-api": ["claude-p-subagent", "coderabbit-thinking"]}.items():
        for name in names:
            dst = root / project / name
            quiet_copy(cc / name, dst)
    quiet_copy(CORPUS / "legion" / "synthetic-fixture-tool_use", root / "legion" / "tool-use")
    quiet_copy(SESSIONS / "legion-feature-tour", root / "legion" / "feature-tour")
    quiet_copy(CORPUS / "openai-chat" / "mini-swe-astropy-12907-toolcalls", root / "swe" / "astropy")
    quiet_copy(CORPUS / "agentscope" / "a2ui-mbti-skill-short", root / "agentscope")
    quiet_copy(CORPUS / "anthropic-messages" / "cline-unity-card-game-task-1769053680585", root / "cline")
    for p in [root, *root.rglob("*")]:
        os.utime(p, (OLD, OLD))
    return root


@pytest.fixture(scope="module")
def client(root, tmp_path_factory):
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
                      "WATCH": False, "TESTING": True})
    c = app.test_client()
    st = app.extensions["viewer"].store
    for ref in st.sessions():  # everything indexed, as the background indexer leaves it
        st.index(ref.key)
    return c


def rows(client, query=""):
    body = client.get("/sessions.json" + query).get_json()
    return body, body["sessions"]


def test_every_session_is_listed_with_usage_columns(client):
    body, sessions = rows(client)
    assert body["total"] == body["all"] == 9
    formats = {s["format"] for s in sessions}
    assert formats == {"claude-code", "legion", "openai-chat", "agentscope", "anthropic-messages"}
    cc = next(s for s in sessions if s["key"].endswith("me-next-image-errors"))
    assert cc["cost_usd"] > 0 and cc["tokens"] > 0 and cc["project"] == "-work-web"


def test_filter_by_format(client):
    body, sessions = rows(client, "?format=legion")
    assert body["total"] == 2 and {s["format"] for s in sessions} == {"legion"}
    body, sessions = rows(client, "?format=legion,openai-chat")
    assert body["total"] == 3


def test_filter_by_folder(client):
    body, sessions = rows(client, "?project=legion")
    assert {s["label"] for s in sessions} == {"legion/tool-use", "legion/feature-tour"}


def test_filter_by_the_top_folder(tmp_path):
    # sessions right in the root have a folder of their own in the filter, and "only" finds them
    quiet_copy(SESSIONS / "legion-feature-tour", tmp_path / "root" / "tour")
    quiet_copy(CORPUS / "legion" / "synthetic-fixture-tool_use", tmp_path / "root" / "legion" / "tool-use")
    client = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "cache"),
                         "WATCH": False, "TESTING": True}).test_client()
    body, sessions = rows(client, "?project=.")
    assert [s["key"] for s in sessions] == ["tour"] and body["all"] == 2
    html = client.get("/?group=project").get_data(as_text=True)
    assert '<option value=".">(top folder)' in html and 'href="/?project=."' in html
    assert '<option value="." selected' in client.get("/?project=.").get_data(as_text=True)


def test_filter_by_model(client):
    body, sessions = rows(client, "?model=opus")
    assert body["total"] == 1 and "claude-p-subagent" in sessions[0]["key"]
    _, everyone = rows(client)
    body, sessions = rows(client, "?model=claude-sonnet-4-5-20250929")
    assert {s["key"] for s in sessions} == {
        s["key"] for s in everyone if "claude-sonnet-4-5-20250929" in s["models"]}
    assert 1 < body["total"] < 9


def test_filter_by_date_range(client):
    body, all_ = rows(client)
    days = {s["key"]: datetime.fromtimestamp(s["started"] if s["started"] is not None else s["mtime"]).date()
            for s in all_}
    pivot = sorted(days.values())[len(days) // 2]
    body, sessions = rows(client, f"?from={pivot.isoformat()}")
    assert {s["key"] for s in sessions} == {k for k, d in days.items() if d >= pivot}
    body, sessions = rows(client, f"?to={pivot.isoformat()}")
    assert {s["key"] for s in sessions} == {k for k, d in days.items() if d <= pivot}
    body, sessions = rows(client, f"?from={pivot.isoformat()}&to={pivot.isoformat()}")
    assert {s["key"] for s in sessions} == {k for k, d in days.items() if d == pivot}


def test_filter_has_errors(client):
    body, sessions = rows(client, "?errors=1")
    assert sessions and all(s["errors"] > 0 for s in sessions)
    _, everyone = rows(client)
    assert body["total"] == sum(1 for s in everyone if s["errors"])


def test_filter_live(client, root):
    body, sessions = rows(client, "?live=1")
    assert body["total"] == 0
    f = root / "legion" / "tool-use" / "messages.jsonl"
    os.utime(f, None)  # written just now
    try:
        client.application.extensions["viewer"].store.invalidate()
        body, sessions = rows(client, "?live=1")
        assert [s["label"] for s in sessions] == ["legion/tool-use"] and sessions[0]["live"]
    finally:
        os.utime(f, (OLD, OLD))
        client.application.extensions["viewer"].store.invalidate()


@pytest.mark.parametrize("sort,field", [("started", "started"), ("duration", None), ("messages", "messages"),
                                        ("tool_calls", "tool_calls"), ("errors", "errors"),
                                        ("cost", "cost_usd"), ("size", "size"), ("tokens", "tokens")])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sort_by_every_column(client, sort, field, order):
    body, sessions = rows(client, f"?sort={sort}&order={order}")
    assert body["sort"] == sort and body["order"] == order

    def value(s):
        if field is None:
            return None if s["started"] is None or s["ended"] is None else s["ended"] - s["started"]
        return s[field]

    values = [value(s) for s in sessions]
    present = [v for v in values if v is not None]
    assert present == sorted(present, reverse=order == "desc")
    # sessions without the value come last, whatever the order
    assert values[: len(present)] == present
    assert len(present) >= 2


def test_default_order_is_most_recently_written_first(client):
    _, sessions = rows(client)
    mtimes = [s["mtime"] for s in sessions]
    assert mtimes == sorted(mtimes, reverse=True)


def test_group_by_folder(client):
    body = client.get("/sessions.json?group=project&sort=cost").get_json()
    groups = body["groups"]
    names = [g["project"] for g in groups]
    assert len(names) == len(set(names))  # each folder once, its sessions together
    keys = [k for g in groups for k in g["keys"]]
    assert keys == [s["key"] for s in body["sessions"]]
    sizes = {g["project"]: g["sessions"] for g in groups}
    assert sizes == {"-work-web": 2, "-work-api": 2, "legion": 2, "swe/astropy": 1, "agentscope": 1,
                     "cline": 1}
    # groups come in the order of their costliest session
    _, by_cost = rows(client, "?sort=cost")
    first = list(dict.fromkeys(s["project"] for s in by_cost))
    assert names == first


def test_pages_of_the_list(client, monkeypatch):
    monkeypatch.setattr(catalog, "PAGE", 4)
    one = client.get("/sessions.json?sort=size").get_json()
    two = client.get("/sessions.json?sort=size&page=2").get_json()
    three = client.get("/sessions.json?sort=size&page=3").get_json()
    assert one["pages"] == 3 and one["total"] == 9
    assert [len(x["sessions"]) for x in (one, two, three)] == [4, 4, 1]
    keys = [s["key"] for x in (one, two, three) for s in x["sessions"]]
    assert len(set(keys)) == 9
    page = client.get("/?sort=size&page=2").get_data(as_text=True)
    assert "5–8 of 9 sessions" in page
    assert 'href="/?sort=size&amp;page=3"' in page and 'href="/?sort=size"' in page


def test_the_page_and_its_json_agree(client):
    for query in ("?sort=cost", "?format=claude-code&sort=tokens&order=asc", "?errors=1&group=project"):
        page = client.get("/" + query).get_data(as_text=True)
        keys = re.findall(r'<tr id="[^"]+" data-key="([^"]+)"', page)
        assert keys == [s["key"] for s in client.get("/sessions.json" + query).get_json()["sessions"]]


def test_column_heads_sort_and_flip(client):
    page = client.get("/?sort=cost").get_data(as_text=True)
    assert 'href="/?sort=cost&amp;order=asc">cost ↓</a>' in page
    assert 'href="/?sort=tokens">tokens</a>' in page


def test_bad_arguments_say_so(client):
    for query, words in (("?sort=colour", "Cannot sort by"), ("?from=yesterday", "must be a date"),
                         ("?page=two", "must be a number"), ("?order=up", "asc or desc")):
        resp = client.get("/" + query)
        assert resp.status_code == 400 and words in resp.get_data(as_text=True)
        assert client.get("/sessions.json" + query).status_code == 400


def test_hostile_arguments_are_escaped(client):
    page = client.get('/?model=<script>alert(1)</script>&project="><img src=x>').get_data(as_text=True)
    assert "<script>alert(1)" not in page and "<img src=x>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_stats_add_up_the_sessions(client):
    stats = client.get("/stats.json").get_json()
    _, sessions = rows(client)
    assert stats["totals"]["sessions"] == 9
    assert sum(d["sessions"] for d in stats["days"]) == 9
    assert stats["totals"]["cost"] == pytest.approx(sum(s["cost_usd"] or 0 for s in sessions), abs=1e-4)
    assert sum(d["cost"] for d in stats["days"]) == pytest.approx(stats["totals"]["cost"], abs=1e-6)
    assert stats["totals"]["tool_calls"] == sum(s["tool_calls"] for s in sessions)
    by_count = stats["tools"]["by_count"]
    assert [t["count"] for t in by_count] == sorted((t["count"] for t in by_count), reverse=True)
    rates = [t["error_rate"] for t in stats["tools"]["by_error_rate"]]
    assert rates == sorted(rates, reverse=True)
    page = client.get("/stats").get_data(as_text=True)
    assert "Top tools" in page and 'data-chart="days"' in page and "<table" in page
    filtered = client.get("/stats.json?format=legion").get_json()
    assert filtered["totals"]["sessions"] == 2


def test_a_sorted_page_has_its_own_stream(client):
    page = client.get("/?sort=cost&format=claude-code").get_data(as_text=True)
    url = re.search(r'hx-sse:connect="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert "sort=cost" in url and "format=claude-code" in url and "v=" in url
    resp = client.get(url, buffered=False)
    assert resp.status_code == 200
    first = next(resp.response)
    assert (first.decode() if isinstance(first, bytes) else first).startswith("retry:")
    resp.close()
