"""Real AgentScope recordings: the library's own agents (1.0.21 ReActAgent in a MsgHub and with a
UserAgent; 2.0.11 Agent with its OpenAIChatModel and permission engine) driven by a fake model, their
files written by the library's own savers (tests/recorded/README.md). Read as a user would see them."""

import json
import re

import pytest

from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT, corpus_sessions

REC = ROOT / "tests" / "recorded"
V1 = REC / "agentscope-1.0.21"
V2 = REC / "agentscope-2.0.11"


def events(idx):
    return load_events(idx, "main", 0, len(idx.threads["main"]))


def memory(path, agent):
    return [m for m, _marks in json.loads(path.read_text())[agent]["memory"]["content"]]


def page(tmp_path, folder, name):
    app = create_app({"ROOTS": [str(folder)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    home = client.get("/").get_data(as_text=True)
    href = next(h for h in re.findall(r'href="(/s/[^"?]+)"', home) if h.endswith("/" + name))
    return client.get(href).get_data(as_text=True)


def results(msgs):
    return {b["id"]: b for m in msgs if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}


def test_v1_react_agents_in_a_msghub():
    path = V1 / "trip.json"
    assert detect.detect_file(path).format == "agentscope"
    idx = SessionIndex(path).build()
    evs = events(idx)
    assert "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
    planner, researcher = memory(path, "planner"), memory(path, "researcher")
    # every Msg once, in the order it happened, under the name its sender wrote
    shown = [e for e in evs if not e.hidden and e.kind != "system_prompt"]
    ids = list(dict.fromkeys(m["id"] for m in researcher + planner))
    assert sorted(e.source_id for e in shown) == sorted(ids)
    names = {m["id"]: m["name"] for m in planner + researcher}
    assert all(e.author == names[e.source_id] for e in shown if e.kind == "message")
    assert [e.author for e in shown if e.kind == "message"] == [
        "user", "Planner", "Researcher", "Researcher", "Planner"]
    # the toolkit's failure text is an error, the other call completed
    res = results(researcher)
    assert {c: idx.calls.calls[c].status for c in res} == {
        c: "error" if r["output"][0]["text"].startswith("Error: ") else "completed" for c, r in res.items()}
    assert sorted(idx.calls.by_state().items()) == sorted({"pending": 0, "executing": 0, "completed": 1,
                                                           "error": 1}.items())
    thinking = [b.text for e in shown for b in e.blocks if b.kind == "thinking"]
    assert len(thinking) == 2 and all(thinking)
    assert idx.summary.title == "Plan a day trip from Paris to Lyon tomorrow."


def test_v1_user_agent_speaks_under_its_own_name(tmp_path):
    path = V1 / "friday.json"
    mem = memory(path, "friday")
    assert {m["name"] for m in mem if m["role"] == "user"} == {"Alice"}  # what UserAgent writes
    idx = SessionIndex(path).build()
    users = [e for e in events(idx) if e.role == "user"]
    assert [e.author for e in users] == ["Alice", "Alice"]
    missing = next(r for r in results(mem).values() if r["name"] == "no_such_tool")
    assert missing["output"][0]["text"].startswith("FunctionNotFoundError")
    assert idx.calls.calls[missing["id"]].status == "error"
    html = page(tmp_path, V1, "friday")
    assert html.count('<span class="who">Alice</span>') == 2
    assert "&lt;b&gt;TGV 6203&lt;/b&gt;" in html


def test_v2_agent_with_permissions_and_failures(tmp_path):
    lines = [json.loads(x) for x in (V2 / "coder.msgs.jsonl").read_text().splitlines()]
    state = json.loads((V2 / "coder.agent_state.json").read_text())
    assert [m["id"] for m in state["context"]] == [m["id"] for m in lines]
    res = results(lines)
    assert sorted(r["state"] for r in res.values()) == ["denied", "error", "error", "success"]
    want = {"success": "completed", "error": "error", "denied": "denied"}
    for path, fmt in [(V2 / "coder.msgs.jsonl", "jsonl"), (V2 / "coder.agent_state.json", "document")]:
        found = detect.detect_file(path)
        assert (found.format, found.mode) == ("agentscope", fmt)
        idx = SessionIndex(path).build()
        assert "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
        assert {c: idx.calls.calls[c].state for c in res} == {c: want[r["state"]] for c, r in res.items()}
        evs = events(idx)
        assert [e.author for e in evs if not e.hidden] == [m["name"] for m in lines]
        thinking = [b.text for e in evs for b in e.blocks if b.kind == "thinking"]
        assert thinking == [b["thinking"] for m in lines for b in m["content"] if b["type"] == "thinking"]
        hints = [b for e in evs for b in e.blocks if b.kind == "context"]
        assert len(hints) == 1 and hints[0].source == "system-reminder"
        assert hints[0].text.startswith("Treat the following as the ground truth")
    html = page(tmp_path, V2, "coder.agent_state")
    # the runtime-state hint names its source in words, not as the JSON string the file holds
    assert "hint from System · Runtime State" in html and "hint from {" not in html
    assert "is denied by user!" in html and "No such file or directory: &#39;README.md&#39;" in html
    assert "<img src=x" not in html


@pytest.mark.parametrize("session", [p.name for p in corpus_sessions("agentscope")])
def test_corpus_user_sent_under_the_agents_name_is_the_user(tmp_path, session):
    (path,) = (ROOT.parent / "shared" / "corpus" / "agentscope" / session).glob("*.json")
    mem = memory(path, "agent")
    agent = json.loads(path.read_text())["agent"]["name"]
    users = [m for m in mem if m["role"] == "user"]
    assert users and all(m["name"] == agent for m in users)  # the A2UI example's own labelling
    idx = SessionIndex(path).build()
    evs = [e for e in events(idx) if e.kind == "message"]
    assert [e.author for e in evs if e.role == "user"] == [None] * len(users)
    assert all(e.author == agent for e in evs if e.role == "assistant")
    html = page(tmp_path, path.parent.parent, session + "~test-a2ui-agent")
    who = re.findall(r'<span class="who(?: role-word)?">([^<]+)</span>', html)
    assert who.count("user") == len(users) and "Friday" in who
