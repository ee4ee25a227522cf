"""openhands_v1 adapter: a conversation folder as the OpenHands software-agent-sdk (the current
OpenHands app, CLI and agent server) writes it — `base_state.json` and `events/event-<idx>-<id>.json`,
one file per event — read as one session through the index as the page reads it. The fixture is made
by tests/golden/make_openhands_v1_fixtures.py from the SDK's classes (see
test_data/formats/openhands_v1/README.md)."""

import json
import shutil

import pytest

from viewer import reader
from viewer.formats import detect, openhands_v1
from viewer.index import SessionIndex
from viewer.store import Store
from viewer.web import create_app

from conftest import ROOT, built, notices, quiet_copy, result_of, tool_uses

FIXTURES = ROOT / "test_data" / "formats" / "openhands_v1"
CONV = "6b1c0e3f9a2d4c58b7e1f0a4d3c2b1a0"
CALC = FIXTURES / "cli-calc" / CONV
KEY = f"cli-calc~{CONV}~base_state"


def test_a_conversation_folder_is_one_session_under_its_first_prompt(tmp_path):
    root = quiet_copy(FIXTURES, tmp_path / "conversations")
    main = root / "cli-calc" / CONV / "base_state.json"
    assert detect.detect_file(main).format == "openhands_v1"
    store = Store([root])
    refs = store.sessions()
    # the folder is one session; its event files are pieces of it, never listed alone
    assert [r.path for r in refs] == [str(main)]
    idx, evs = built(main)
    assert idx.summary.title == "Fix the failing test in calc.py and tell me what was wrong."
    assert idx.summary.unparsed == 0 and idx.calls.orphans == {}
    assert idx.summary.format == "openhands_v1"


def test_calls_pair_with_their_observations_by_tool_call_id():
    idx, evs = built(CALC / "base_state.json")
    calls = tool_uses(evs)
    assert [(u.name, u.input) for u in calls] == [
        ("file_editor", {"command": "view", "path": "/home/dev/calc/calc.py"}),
        ("terminal", {"command": "python -m pytest -q", "security_risk": "LOW"}),
        ("file_editor", {"command": "str_replace", "path": "/home/dev/calc/calc.py", "old_str": "    return a / b",
                         "new_str": "    return a / b if b else None"}),
        ("terminal", {"command": "rm -rf .pytest_cache build", "security_risk": "HIGH"}),
        ("terminal", {"comand": "pytest"}),
        ("terminal", {"command": "python -m pytest -q"})]
    states = [(idx.calls.get(u.id).state, idx.calls.get(u.id).named) for u in calls]
    assert states == [("completed", None), ("error", None), ("completed", None), ("denied", "denied"),
                      ("error", None), ("completed", None)]
    failed = result_of(evs, "toolu_02Test")
    assert failed.is_error and failed.content[0].text == "exit code 1"
    assert "1 failed, 1 passed" in failed.content[1].text
    refused = result_of(evs, "toolu_05Rm")
    assert refused.content[0].text == "Don't delete anything, just run the tests."
    bad = result_of(evs, "toolu_06Bad")
    assert bad.is_error and "Field required" in bad.content[0].text
    not_run = next(ev for ev in evs if any(b.kind == "tool_use" and b.id == "toolu_06Bad" for b in ev.blocks))
    assert "not run: OpenHands could not make an action of this call" in [b.text for b in not_run.blocks
                                                                          if b.kind == "notice"]
    # the model's thinking and words before its call, the action's summary said
    first = next(ev for ev in evs if ev.tool_uses())
    assert [b.kind for b in first.blocks] == ["thinking", "text", "tool_use"]
    assert first.blocks[0].text == "The test probably divides by zero."


def test_finish_and_think_are_the_agents_words_not_calls():
    idx, evs = built(CALC / "base_state.json")
    assert "finish" not in [u.name for u in tool_uses(evs)] and "think" not in [u.name for u in tool_uses(evs)]
    think = next(ev for ev in evs if any(b.kind == "thinking" and "return None" in b.text for b in ev.blocks))
    assert think.role == "assistant"
    finish = next(ev for ev in evs if "the agent finished" in [b.text for b in ev.blocks if b.kind == "notice"])
    assert finish.text() == "Fixed: `divide` now returns None when b is 0; both tests pass."
    # their observations ("Your thought has been logged.", the finish echoed) are bookkeeping
    assert all(ev.hidden for ev in evs if ev.kind == "bookkeeping")
    assert len([ev for ev in evs if ev.kind == "bookkeeping"]) == 2


def test_redacted_thinking_keeps_its_data_and_reasoning_content_reads(tmp_path):
    conv = tmp_path / CONV
    shutil.copytree(CALC, conv)
    action = sorted((conv / "events").glob("event-00004-*.json"))[0]
    rec = json.loads(action.read_text())
    rec["thinking_blocks"] = [{"type": "redacted_thinking", "data": "EqQBCkYIARgCKkA"}]
    action.write_text(json.dumps(rec))
    reply = sorted((conv / "events").glob("event-00006-*.json"))[0]
    rec = json.loads(reply.read_text())
    rec["reasoning_content"] = "the tests pass now"  # (its thinking_blocks empty)
    reply.write_text(json.dumps(rec))
    idx, evs = built(conv / "base_state.json")
    thinking = [b for ev in evs for b in ev.blocks if b.kind == "thinking"]
    assert ("", True, "EqQBCkYIARgCKkA") in [(b.text, b.redacted, b.signature) for b in thinking]
    assert "the tests pass now" in [b.text for b in thinking]


def test_status_condensation_and_usage_from_base_state():
    idx, evs = built(CALC / "base_state.json")
    said = [t for ev in evs if not ev.hidden for t in notices(ev)]
    assert "context condensed: 4 events forgotten and summarized" in said
    assert "conversation status: finished" in said
    assert "usage · agent: 8 calls, 56,400 tokens in (51,350 from cache), 960 out · $0.0488" in said
    # the session's totals are OpenHands' own: every LLM's tokens (the agent's and the condenser's)
    state = json.loads((CALC / "base_state.json").read_text())
    metrics = state["stats"]["usage_to_metrics"]
    prompt = sum(m["accumulated_token_usage"]["prompt_tokens"] for m in metrics.values())
    out = sum(m["accumulated_token_usage"]["completion_tokens"] for m in metrics.values())
    assert idx.summary.usage["tokens"] == prompt + out
    assert idx.summary.usage["source_cost"] == pytest.approx(sum(m["accumulated_cost"] for m in metrics.values()))
    assert list(idx.summary.usage["models"]) == ["litellm_proxy/claude-sonnet-4-5-20250929"]


@pytest.mark.parametrize("status, words, role", [
    ("stuck", "conversation status: stuck — OpenHands' stuck detector stopped the agent", "error"),
    ("error", "conversation status: stopped on an error", "error"),
    ("paused", "conversation status: paused by the user", "system"),
    ("waiting_for_confirmation", "conversation status: waiting for the user to confirm an action", "system"),
])
def test_how_the_conversation_stands_is_said_plainly(tmp_path, status, words, role):
    conv = tmp_path / CONV
    shutil.copytree(CALC, conv)
    state = json.loads((conv / "base_state.json").read_text())
    state["execution_status"] = status
    (conv / "base_state.json").write_text(json.dumps(state))
    idx, evs = built(conv / "base_state.json")
    ev = next(ev for ev in evs if ev.kind == "state" and not ev.hidden)
    assert ev.blocks[0].text.startswith(words) and ev.role == role
    assert idx.info.get("finished", False) == (status in ("stuck", "error"))


def test_a_long_conversations_base_state_past_4_mb_still_says_it_finished(tmp_path):
    conv = tmp_path / CONV
    shutil.copytree(CALC, conv)
    state = json.loads((conv / "base_state.json").read_text())
    state["stats"]["usage_to_metrics"]["agent"]["token_usages"] += [{"prompt_tokens": 1}] * 300_000
    (conv / "base_state.json").write_text(json.dumps(state))
    assert (conv / "base_state.json").stat().st_size > 4 << 20 and state["execution_status"] == "finished"
    idx, evs = built(conv / "base_state.json")
    assert idx.info.get("finished") is True


def test_a_running_conversation_says_no_status_and_is_not_finished(tmp_path):
    conv = tmp_path / CONV
    shutil.copytree(CALC, conv)
    state = json.loads((conv / "base_state.json").read_text())
    state["execution_status"] = "running"
    (conv / "base_state.json").write_text(json.dumps(state))
    idx, evs = built(conv / "base_state.json")
    assert not [ev for ev in evs if ev.kind == "state" and not ev.hidden]
    assert not idx.info.get("finished")


def test_a_new_event_file_updates_the_index(tmp_path):
    conv = tmp_path / CONV
    shutil.copytree(CALC, conv)
    events = conv / "events"
    names = sorted(p.name for p in events.iterdir() if p.name.startswith("event-"))
    held = {n: (events / n).read_text() for n in names[16:]}  # the session as it was mid-run
    for n in held:
        (events / n).unlink()
    idx = SessionIndex(conv / "base_state.json").build()
    assert idx.calls.calls["toolu_07Test"].state == "pending"
    before = reader.file_identity(conv / "base_state.json")
    (events / names[16]).write_text(held[names[16]])  # the command's observation
    assert reader.file_identity(conv / "base_state.json") != before
    assert idx.refresh()
    assert idx.calls.calls["toolu_07Test"].state == "completed"


def test_an_event_file_that_does_not_parse_is_one_unparsed_card(tmp_path):
    conv = tmp_path / CONV
    shutil.copytree(CALC, conv)
    victim = sorted((conv / "events").glob("event-00002-*.json"))[0]
    victim.write_text('{"kind": "ActionEvent", "thou')
    idx, evs = built(conv / "base_state.json")
    assert idx.summary.unparsed == 1
    assert idx.summary.title == "Fix the failing test in calc.py and tell me what was wrong."
    assert len(tool_uses(evs)) == 5  # the rest reads on
    # the card shows that file's bytes (not base_state.json's, nor nothing)
    (bad,) = [b for e in evs for b in e.blocks if b.kind == "unparsed"]
    assert bad.raw == '{"kind": "ActionEvent", "thou' and victim.name in bad.reason
    client = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False}).test_client()
    page = client.get(f"/s/{CONV}~base_state?at=start").get_data(as_text=True)
    assert "{&#34;kind&#34;: &#34;ActionEvent&#34;, &#34;thou" in page


def test_the_page_shows_the_conversation(tmp_path):
    root = quiet_copy(FIXTURES, tmp_path / "conversations")
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get(f"/s/{KEY}").get_data(as_text=True)
    assert "Fix the failing test in calc.py" in html and "conversation status: finished" in html


def test_detection_takes_nothing_from_other_formats(tmp_path):
    # V0 events stay V0's; a base_state.json of another tool is not claimed
    v0 = ROOT / "test_data" / "formats" / "openhands" / "export-calc" / "trajectory-calc.json"
    assert detect.detect_file(v0).format == "openhands"
    other = tmp_path / "base_state.json"
    other.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert detect.detect_file(other).format != "openhands_v1"
    assert openhands_v1.folder_document(other) is None
    assert openhands_v1.sniff({"kind": "ActionEvent", "tool_call_id": "x"}) == 0  # no source: not an event


def test_the_events_listed_alone_read_as_v1_events(tmp_path):
    # the agent server's event search answers {"items": [events]}
    events = sorted((CALC / "events").glob("event-*.json"))
    doc = tmp_path / "events.json"
    doc.write_text(json.dumps({"items": [json.loads(p.read_text()) for p in events]}))
    assert detect.detect_file(doc).format == "openhands_v1"
    idx, evs = built(doc)
    assert idx.calls.orphans == {} and len(tool_uses(evs)) == 6
    assert openhands_v1.is_companion(str(events[0]))


def test_what_a_delegated_sub_agent_sent_back_reads_as_from_it_not_as_a_prompt(tmp_path):
    # openhands-tools' delegate tool (its first, asynchronous form) hands each reply of a
    # sub-conversation to the parent as a user message "[Sub-agent <id[:8]>]: …", a failure as
    # "[Sub-agent <id[:8]> ERROR]: …"; the sub-conversation itself is not saved
    conv = tmp_path / CONV
    shutil.copytree(CALC, conv)

    def said(n: int, text: str) -> None:
        (conv / "events" / f"event-{n:05d}-sub{n}.json").write_text(json.dumps({
            "kind": "MessageEvent", "id": f"sub{n}", "timestamp": "2026-05-12T14:09:00",
            "source": "user", "llm_message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "activated_skills": [], "extended_content": []}))

    said(20, "[Sub-agent 1a2b3c4d]: The lodging options are **Camden** and Shoreditch.")
    said(21, "[Sub-agent 5e6f7a8b ERROR]: rate limit exceeded")
    idx, evs = built(conv / "base_state.json")
    ok, failed = (next(e for e in evs if e.source_id == f"sub{n}") for n in (20, 21))
    assert (ok.kind, ok.author, ok.text()) == ("comm", "sub-agent 1a2b3c4d",
                                              "The lodging options are **Camden** and Shoreditch.")
    assert failed.author == "sub-agent 5e6f7a8b" and notices(failed) == ["the sub-agent failed"]
    assert idx.summary.title == "Fix the failing test in calc.py and tell me what was wrong."
    client = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False}).test_client()
    page = client.get(f"/s/{CONV}~base_state").get_data(as_text=True)
    assert "sub-agent 1a2b3c4d → this agent" in page and "[Sub-agent" not in page
