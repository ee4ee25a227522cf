"""Qwen Code's sub-agents and sub-sessions linked to the session and the call that started them.

Fixture: test_data/formats/qwen-code/with-sub-agents (see the README: shapes from QwenLM/qwen-code
packages/core/src/agents/agent-transcript.ts at 015f2838 and
packages/core/src/services/chatRecordingService.ts at 015346f1)."""

import os
import shutil

from viewer.index import SessionIndex
from viewer.store import Store
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT

SRC = ROOT / "test_data" / "formats" / "qwen-code" / "with-sub-agents"
P = "5a1b2c3d-0e0f-4a4b-8c8d-1e2f3a4b5c6d"
C = "9f8e7d6c-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
OLD = 1_700_000_000


def project(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(SRC, root / "-home-li-calc")
    for dirpath, _, names in os.walk(root):
        for n in names:
            os.utime(os.path.join(dirpath, n), (OLD, OLD))
    return root, root / "-home-li-calc"


def test_the_agent_tool_s_transcript_is_nested_under_its_call(tmp_path):
    _, proj = project(tmp_path)
    idx = SessionIndex(proj / "chats" / f"{P}.jsonl").build()
    assert {"main", "explore-7f3c"} <= set(idx.threads)
    call = idx.calls.calls["call_ag1"]
    assert (call.name, call.status, call.subthread) == ("agent", "completed", "explore-7f3c")
    th = idx.threads["explore-7f3c"]
    assert th.label == "Explore · Find slow tests"
    evs = load_events(idx, "explore-7f3c", 0, len(th))
    assert evs[0].text() == "Find which tests take longest and why."
    assert idx.calls.calls["call_sg1"].call[0] == "explore-7f3c"


def test_a_sub_session_is_linked_from_its_call_and_listed_under_its_parent(tmp_path):
    root, proj = project(tmp_path)
    idx = SessionIndex(proj / "chats" / f"{P}.jsonl").build()
    assert idx.calls.calls["call_ss1"].subthread == C
    assert idx.threads[C].label == f"sub-session {C}"
    st = Store([root])
    refs = {os.path.basename(r.path): r for r in st.sessions()}
    assert set(refs) == {f"{P}.jsonl", f"{C}.jsonl"}  # (the subagents folder is no session)
    child = st.index(refs[f"{C}.jsonl"].key)
    assert child.info["parent_session"] == P and child.info["thread"] == C
    assert child.summary.parent == str(proj / "chats" / f"{P}.jsonl")
    # the list shows it as a sub-agent of its parent, and the call card links its own session
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    client = app.test_client()
    listing = client.get("/").get_data(as_text=True)
    row = listing[listing.index("Add a changelog entry"):]
    assert "sub-agent of" in row[:3000]
    keys = {os.path.basename(r.path): r.key for r in app.extensions["viewer"].store.sessions()}
    page = client.get(f"/s/{keys[f'{P}.jsonl']}").get_data(as_text=True)
    assert f"Sub-agent: sub-session {C}" in page
    assert f'href="/s/{keys[f"{C}.jsonl"]}"' in page
    assert "Sub-agent: Explore · Find slow tests" in page


def test_a_sub_session_whose_parent_record_follows_a_big_first_record_is_still_its_parent_s(tmp_path):
    """The parent_session record is written once, before any prompt, but not always first: the
    recorder writes it after whatever came before (chatRecordingService.parentSession.test.ts
    "maintains the parent chain when recorded after other records"), and Qwen's session list reads
    it from the first 10 records whatever their size (sessionService.ts
    extractCreationMetadataFromRecords, MAX_PROMPT_SCAN_LINES). A 40 KB record before it hid the
    parent from a 16 KB head read: the sub-session was listed as a session of its own."""
    import orjson
    root, proj = project(tmp_path)
    child = proj / "chats" / f"{C}.jsonl"
    lines = child.read_bytes().splitlines(keepends=True)
    big = {"uuid": "c0", "parentUuid": None, "sessionId": C, "timestamp": "2026-11-20T09:00:43.400Z",
           "type": "system", "cwd": "/home/li/calc", "version": "0.16.0", "subtype": "session_sources_snapshot",
           "systemPayload": {"sources": ["x" * 40_000]}}
    child.write_bytes(orjson.dumps(big) + b"\n" + b"".join(lines))
    os.utime(child, (OLD, OLD))
    st = Store([root])
    refs = {os.path.basename(r.path): r for r in st.sessions()}
    idx = st.index(refs[f"{C}.jsonl"].key)
    assert idx.info["parent_session"] == P
    assert idx.summary.parent == str(proj / "chats" / f"{P}.jsonl")


def test_a_sub_agent_s_task_is_not_said_by_the_sub_agent(tmp_path):
    """agent-transcript.ts writes every record of a sub-agent's transcript with its agentName and
    isSidechain, the task it was given (`initialUserPrompt`, a user record) included: that record
    is the task the launching agent wrote, so it is not shown as the sub-agent's words; the
    sub-agent's answers are. A fork's `agent_launch_prompt` (the task as the model got it) is a
    context chip in sight, not a hidden data card."""
    import orjson
    _, proj = project(tmp_path)
    agent = next((proj / "subagents").glob("*/agent-explore-7f3c.jsonl"))
    first = orjson.loads(agent.read_bytes().splitlines()[0])
    launch = dict(first, uuid="a1b", parentUuid="a1", type="system", subtype="agent_launch_prompt",
                  systemPayload={"displayText": "Begin. (Task: find which tests take longest.)"})
    launch.pop("message")
    lines = agent.read_bytes().splitlines(keepends=True)
    agent.write_bytes(lines[0] + orjson.dumps(launch) + b"\n" + b"".join(lines[1:]))
    idx = SessionIndex(proj / "chats" / f"{P}.jsonl").build()
    th = idx.threads["explore-7f3c"]
    evs = load_events(idx, "explore-7f3c", 0, len(th))
    assert evs[0].text() == "Find which tests take longest and why." and evs[0].author is None
    assert evs[1].kind == "context" and not evs[1].hidden
    assert "Begin. (Task" in evs[1].blocks[0].text
    assert evs[-1].role == "assistant" and evs[-1].author == "Explore"
