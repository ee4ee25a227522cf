"""Real Claude Agent SDK message streams (claude-agent-sdk 0.2.188 and its bundled claude CLI against a
fake Anthropic API; tests/recorded/README.md): legion's `{_type, data}` lines and the flat
`{_type, **asdict(message)}` dump, read as a user would see them."""

import json
import re

import pytest

from viewer.formats import detect, legion
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT
from test_digest import check

REC = ROOT / "tests" / "recorded" / "claude-agent-sdk-0.2.188"
FILES = ["legion.messages.jsonl", "sdk-flat.jsonl"]


def lines(name):
    out = []
    for x in (REC / name).read_text().splitlines():
        rec = json.loads(x)
        if "_type" in rec:  # legion's wrapper or the flat dump: the SDK message's own fields
            rec = {"_type": rec["_type"], **(rec["data"] if name.startswith("legion") else rec)}
        out.append(rec)
    return out


def blocks(recs, key):
    return [b for r in recs if isinstance(r.get("content"), list) for b in r["content"]
            if isinstance(b, dict) and key in b]


@pytest.mark.parametrize("name", FILES)
def test_sdk_streams_read_whole(name):
    recs = lines(name)
    found = detect.detect_file(REC / name)
    assert (found.format, found.mode) == ("legion", "jsonl")
    idx = SessionIndex(REC / name).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
    uses = blocks(recs, "input")
    results = {b["tool_use_id"]: b for b in blocks(recs, "tool_use_id")}
    assert len(uses) == len(idx.calls.calls) >= 10 and set(results) == {u["id"] for u in uses}
    denied = {d["tool_use_id"] for r in recs for d in r.get("permission_denials") or []}
    assert len(denied) == 1
    for u in uses:
        want = "denied" if u["id"] in denied else "error" if results[u["id"]]["is_error"] else "completed"
        assert idx.calls.calls[u["id"]].state == want, u["name"]
    # every thinking and text block the model wrote is on the page, in the order written
    shown = [b for e in evs if not e.hidden for b in e.blocks]
    thinking = [b["thinking"] for b in blocks(recs, "thinking")]
    assert [b.text for b in shown if b.kind == "thinking"] == thinking
    texts = [b.text for b in shown if b.kind == "text"]
    assert all(b["text"] in texts for b in blocks(recs, "text") if "tool_use_id" not in b)
    # the sub-agent's frames hang under the Agent call that started it
    agent = next(u for u in uses if u["name"] == "Agent")
    assert [e.parent for e in evs if e.role == "assistant" and e.parent] and all(
        e.parent == agent["id"] for e in evs if e.parent)
    retry = next(e for e in evs if e.kind == "system:api_retry")
    assert retry.blocks[0].text == "API error 529: overloaded · retry 1 of 10 in 0.5s"
    assert idx.summary.models == ["claude-sonnet-4-5"]
    bookkeeping = [e for e in evs if e.kind == "system:background_tasks_changed"]
    assert bookkeeping and all(e.hidden for e in bookkeeping)


def test_flat_dump_is_digested_like_its_events():
    adapter = legion
    raw = [json.loads(x) for x in (REC / "sdk-flat.jsonl").read_text().splitlines()]
    assert sum(check(adapter, rec) for rec in raw) >= len(raw) // 2
    flat = next(r for r in raw if r["_type"] == "SystemMessage")
    assert legion.sniff(flat) == 3 and legion.sniff({"_type": "AssistantMessage", "content": []}) == 3
    # a legion line's SystemMessage keeps its own `data`; the flat one is its own payload
    init = {"_type": "SystemMessage", "subtype": "init", "data": {"tools": ["Bash"], "model": "m"}}
    ev = legion.event(init, Ref("main", 1, 0, 1))
    assert ev.hidden and ev.model == "m"


def test_page_names_the_denial_and_the_retry(tmp_path):
    app = create_app({"ROOTS": [str(REC)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    home = client.get("/").get_data(as_text=True)
    href = next(h for h in re.findall(r'href="(/s/[^"?]+)"', home) if h.endswith("sdk-flat"))
    html = client.get(href + "?at=start").get_data(as_text=True)
    assert "Fetching web pages is not allowed here." in html
    assert '<span class="state denied"' in html
    assert "API error 529: overloaded · retry 1 of 10" in html
