"""Gemini CLI's sub-agents shown under the call that ran them, as Claude Code's sidechains are.

The fixture (test_data/formats/gemini-cli/subagent-recording, see its README) is in the shapes
google-gemini/gemini-cli writes: packages/core/src/services/chatRecordingService.ts (016443b5)
puts a sub-agent's recording in `chats/<parent session id>/<agentId>.jsonl`, `kind: "subagent"`;
packages/core/src/core/geminiChat.ts `recordCompletedToolCalls` saves the spawning call's
`agentId` (chatRecordingTypes.ts `ToolCallRecord.agentId`, 04741d1d)."""

import json
import os
import shutil

from viewer.formats import gemini_cli
from viewer.index import SessionIndex
from viewer.store import Store
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT

SRC = ROOT / "test_data" / "formats" / "gemini-cli" / "subagent-recording" / "chats"
SID = "7d1f3a2e-5b6c-4d8e-9f01-23456789abcd"
MAIN = f"session-2026-11-20T10-00-{SID[:8]}.jsonl"
CALL = "codebase_investigator-1763632808000-a1b2c3"
OLD = 1_700_000_000


def project(tmp_path, strip_agent_id=False):
    chats = tmp_path / "tmp" / "5e884898" / "chats"
    shutil.copytree(SRC, chats)
    if strip_agent_id:  # a recording from before ToolCallRecords carried the agent's id
        main = chats / MAIN
        recs = [json.loads(line) for line in main.read_text().splitlines()]
        for r in recs:
            for tc in r.get("toolCalls") or ():
                tc.pop("agentId", None)
        main.write_text("".join(json.dumps(r) + "\n" for r in recs))
    for p in chats.rglob("*.jsonl"):
        os.utime(p, (OLD, OLD))
    return chats


def test_the_sub_agent_s_recording_is_a_thread_under_the_call_that_ran_it(tmp_path):
    chats = project(tmp_path)
    idx = SessionIndex(chats / MAIN).build()
    assert set(idx.threads) == {"main", "k3x9q1"}
    call = idx.calls.calls[CALL]
    assert (call.status, call.subthread) == ("completed", "k3x9q1")
    th = idx.threads["k3x9q1"]
    assert th.label == "agent k3x9q1"
    evs = load_events(idx, "k3x9q1", 0, len(th))
    assert "Your task is to find where the HTTP retry policy is configured." in [e.text() for e in evs]
    assert idx.calls.calls["grep_search-1763632815000-0"].call[0] == "k3x9q1"
    assert idx.summary.models == ["gemini-3-pro-preview", "gemini-3-flash-preview"]


def test_a_recording_without_agent_ids_nests_the_sub_agent_by_time(tmp_path):
    chats = project(tmp_path, strip_agent_id=True)
    idx = SessionIndex(chats / MAIN).build()
    assert idx.calls.calls[CALL].subthread == "k3x9q1"


def test_the_sub_agent_is_not_listed_alone_and_the_page_nests_it(tmp_path):
    chats = project(tmp_path)
    root = chats.parent.parent
    st = Store([root])
    assert [os.path.basename(r.path) for r in st.sessions()] == [MAIN]
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    client = app.test_client()
    (ref,) = app.extensions["viewer"].store.sessions()
    html = client.get(f"/s/{ref.key}").get_data(as_text=True)
    card = html[html.index('id="tc-'):]
    thread = card[card.index('class="call-thread"'):]
    assert "Sub-agent: agent k3x9q1" in thread[:2000]
    assert gemini_cli.is_companion(str(chats / SID / "k3x9q1.jsonl"))
    assert not gemini_cli.is_companion(str(chats / MAIN))
