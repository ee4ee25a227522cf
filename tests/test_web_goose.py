"""Goose sessions through Flask's test client, read as completely as Claude Code's: the list's
tokens, cost and model from Goose's own totals (priced by the price table), the usage panel saying
whose totals they are, an extension's tool (`developer__shell`) named as its extension and the tool
in the card, the filter menu, the usage and stats tables and the Markdown export — and a name with
`__` in another format left as written. The database is built by test_data/formats/goose/make_db.py."""

import json
import os
import re

import pytest
from viewer import tools
from viewer.web import create_app

from conftest import goose_make_db

make_db = goose_make_db()
NEW = f"sessions.db~{make_db.NEW_ID}"
SUB = f"sessions.db~{make_db.SUB_ID}"


def _client(tmp_path, ledger: bool):
    folder = tmp_path / "sessions"
    folder.mkdir()
    make_db.build(folder / "sessions.db", ledger=ledger)
    app = create_app({"ROOTS": [str(folder)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    c = app.test_client()
    c.get("/sessions.json")  # (waits for the rows' summaries)
    return c


@pytest.fixture
def goose_client(tmp_path):
    """Current Goose's database: its usage ledger holds a row per model call."""
    return _client(tmp_path, ledger=True)


@pytest.fixture
def totals_client(tmp_path):
    """Sessions Goose ran before its usage ledger (schema 15): only their totals."""
    return _client(tmp_path, ledger=False)


def _row(html: str, key: str) -> str:
    m = re.search(rf'<tr id="[^"]*" data-key="{re.escape(key)}".*?</tr>', html, re.S)
    assert m, key
    return m.group(0)


def test_the_list_shows_goose_s_totals_its_model_and_a_cost_from_the_price_table(totals_client):
    goose_client = totals_client
    data = goose_client.get("/sessions.json").get_json()
    row = next(s for s in data["sessions"] if s["key"] == NEW)
    assert row["models"] == ["claude-sonnet-4-5", "claude-haiku-4-5"]
    assert row["tokens"] == 5210 + 1320
    assert row["cost_usd"] and row["cost_usd"] > 0
    html = goose_client.get("/").get_data(as_text=True)
    tr = _row(html, NEW)
    assert "claude-sonnet-4-5" in tr
    assert "6.5k" in tr or "6,530" in tr  # the tokens column
    assert "as the session's own totals (Goose kept no count per call)" in tr
    assert re.search(r'class="num cost"[^>]*><span>\$0\.0', tr)
    # the sub-agent's session: listed with its parent named
    assert "sub-agent of" in _row(html, SUB)


def test_the_usage_panel_says_the_tokens_are_goose_s_own_totals(totals_client):
    goose_client = totals_client
    html = goose_client.get(f"/s/{NEW}/usage").get_data(as_text=True)
    assert "not recorded one by one: the tokens are the session's own totals, as Goose kept them" in html
    assert "claude-sonnet-4-5" in html and "claude-haiku-4-5" in html
    assert re.search(r'<td class="model-name">claude-sonnet-4-5</td>.*?data-label="calls" class="num">'
                     r'<span class="muted" title="[^"]*">totals</span>', html, re.S)
    data = goose_client.get(f"/s/{NEW}.json").get_json()
    assert data["usage"]["session_totals"] is True
    assert data["usage"]["models"]["claude-sonnet-4-5"]["input"] == 4980
    # the stats page's models: their calls were not counted one by one either
    stats = goose_client.get("/stats.json").get_json()
    assert next(m for m in stats["models"] if m["model"] == "claude-sonnet-4-5")["session_totals"] is True
    assert re.search(r'claude-sonnet-4-5</a></td>.*?data-label="calls" class="num"><span class="muted" '
                     r'title="[^"]*">totals</span>', goose_client.get("/stats").get_data(as_text=True), re.S)


def test_the_usage_panel_and_the_list_count_each_call_of_goose_s_usage_ledger(goose_client):
    """Current Goose's ledger: the list's tokens and cost and the usage panel's calls per model come
    from its rows, one per model call, not the session's totals."""
    data = goose_client.get("/sessions.json").get_json()
    row = next(s for s in data["sessions"] if s["key"] == NEW)
    assert row["tokens"] == 5210 + 1320 and row["cost_usd"] == pytest.approx(0.0136)
    tr = _row(goose_client.get("/").get_data(as_text=True), NEW)
    assert "own totals" not in tr
    html = goose_client.get(f"/s/{NEW}/usage").get_data(as_text=True)
    assert "not recorded one by one" not in html
    assert re.search(r'<td class="model-name">claude-sonnet-4-5</td>.*?data-label="calls" class="num">3<', html, re.S)
    assert re.search(r'<td class="model-name">claude-haiku-4-5</td>.*?data-label="calls" class="num">2<', html, re.S)
    data = goose_client.get(f"/s/{NEW}.json").get_json()
    assert data["usage"]["session_totals"] is False and data["usage"]["calls"] == 5
    assert data["usage"]["models"]["claude-sonnet-4-5"]["cache_read"] == 2700
    stats = goose_client.get("/stats.json").get_json()
    assert next(m for m in stats["models"] if m["model"] == "claude-sonnet-4-5")["session_totals"] is False


def test_an_extension_s_tool_reads_as_the_extension_and_the_tool(goose_client):
    page = goose_client.get(f"/s/{NEW}").get_data(as_text=True)
    card = page[page.index('id="tc-call_mk1"'):]
    head = card[:card.index('class="tool-summary"')]
    assert '<span class="mcp-tag">ext</span> developer</span> <span class="mcp-tool">shell</span>' in head
    assert 'title="shell, a tool of the Goose extension developer (developer__shell)"' in head
    # an unprefixed tool (summon's `delegate`) stays as it is
    dl = page[page.index('id="tc-call_dl1"'):]
    assert '<span class="tool-name">delegate</span>' in dl[:dl.index('class="tool-summary"')]
    menu = goose_client.get(f"/s/{NEW}/filters").get_data(as_text=True)
    assert re.search(r'<code><span class="mcp-name"[^>]*><span class="mcp-server"><span class="mcp-tag">ext'
                     r'</span> developer</span> <span class="mcp-tool">shell</span>', menu)
    usage = goose_client.get(f"/s/{NEW}/usage").get_data(as_text=True)
    assert '<td class="tool-name"><span class="mcp-name"' in usage and ">text_editor<" in usage
    md = goose_client.get(f"/s/{NEW}/export?format=md").get_data(as_text=True)
    assert "**Tool: shell** (Goose extension developer)" in md
    assert "**Tool: delegate** ·" in md
    stats = goose_client.get("/stats.json").get_json()
    row = next(t for t in stats["tools"]["by_count"] if t["name"] == "developer__shell")
    assert row["fmt"] == "goose"
    stats_html = goose_client.get("/stats").get_data(as_text=True)
    assert '<span class="mcp-tool">shell</span>' in stats_html
    assert "shell (developer)" in stats_html  # the chart's axis label


def test_a_name_with_double_underscores_in_another_format_is_a_plain_name(tmp_path):
    assert tools.mcp_name("developer__shell", "goose").tool == "shell"
    assert tools.mcp_name("developer__shell", "claude-code") is None
    assert tools.mcp_name("get__weather", "openai-chat") is None
    assert tools.mcp_name("mcp__github__create_issue", "goose").server == "github"  # (an MCP name)
    # a Claude Code session calling a tool named `lookup__user`
    sid = "a1b2c3d4-0000-4000-8000-0000000000aa"
    base = {"sessionId": sid, "cwd": "/p", "version": "2.0.30", "isSidechain": False, "userType": "external"}
    lines = [{**base, "type": "user", "uuid": "u0", "parentUuid": None, "timestamp": "2026-05-01T10:00:00Z",
              "message": {"role": "user", "content": "Look up Ann."}},
             {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u0", "timestamp": "2026-05-01T10:00:01Z",
              "message": {"role": "assistant", "id": "m1", "model": "claude-sonnet-4-5", "content": [
                  {"type": "tool_use", "id": "toolu_1", "name": "lookup__user", "input": {"name": "Ann"}}]}}]
    folder = tmp_path / "root" / "p"
    folder.mkdir(parents=True)
    path = folder / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    app = create_app({"ROOTS": [str(tmp_path / "root")], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                      "TESTING": True})
    page = app.test_client().get(f"/s/p~{sid}").get_data(as_text=True)
    assert '<span class="tool-name">lookup__user</span>' in page
    assert "mcp-name" not in page
