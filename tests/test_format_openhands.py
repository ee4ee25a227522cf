"""openhands adapter: OpenHands (V0) event streams as a conversation's export holds them, read through
the index as the page reads them. `real-basic-interactions` is a real trajectory from OpenHands' own
runtime tests (MIT; see test_data/formats/openhands/README.md); `export-calc` is made by
tests/golden/make_openhands_fixtures.py from OpenHands' serializer."""

import json
import re
import shutil

import pytest

from viewer import tools
from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.web import create_app

from conftest import ROOT, built, notices, result_of, tool_uses

FIXTURES = ROOT / "test_data" / "formats" / "openhands"
REAL = FIXTURES / "real-basic-interactions" / "basic_interactions.json"
EXPORT = FIXTURES / "export-calc" / "trajectory-calc.json"
HOSTILE = FIXTURES / "hostile" / "hostile-openhands.json"


@pytest.mark.parametrize("path", [REAL, EXPORT, HOSTILE], ids=lambda p: p.parent.name)
def test_every_export_is_detected_as_openhands(path):
    assert detect.detect_file(path).format == "openhands"
    idx, _ = built(path)
    assert idx.calls.orphans == {} and idx.summary.unparsed == 0


def test_a_real_chat_reads_as_prompts_replies_and_the_finish():
    idx, evs = built(REAL)
    assert [(ev.role, ev.text()) for ev in evs[:3]] == [
        ("user", "what's 1+1?"), ("assistant", "1 + 1 equals 2."), ("user", "No, I mean by Goldbach's conjecture!")]
    finish = evs[-1]
    assert finish.text() == "All done! What's next on the agenda?" and notices(finish) == ["the agent finished"]
    assert not finish.tool_uses()  # a finish is no call left waiting for a result
    assert finish.model == "gpt-4o-2024-08-06"
    assert idx.summary.usage["tokens"] == 2473 + 10
    assert idx.summary.title == "what's 1+1?" and idx.summary.started is not None


def test_each_action_is_the_models_call_and_its_observation_the_result():
    idx, evs = built(EXPORT)
    calls = tool_uses(evs)
    assert [(u.name, u.input) for u in calls] == [
        ("str_replace_editor", {"command": "view", "path": "/workspace/calc.py"}),
        ("execute_bash", {"command": "python -m pytest -q"}),
        ("str_replace_editor", {"command": "str_replace", "path": "/workspace/calc.py", "old_str": "    return a / b",
                                "new_str": "    return a / b if b else None"}),
        ("execute_bash", {"command": "rm -rf /workspace/.git"}),
        ("delegate_to_browsing_agent", {"task": "Find pytest's -x flag docs"}),
        ("fetch", {"url": "https://docs.pytest.org/en/stable/how-to/failures.html"}),
        ("execute_bash", {"command": "python -m pytest -q -x"}),
        ("execute_bash", {"command": "cat missing.txt"})]
    states = [idx.calls.get(u.id).state for u in calls]
    assert states == ["completed", "error", "completed", "denied", "completed", "completed", "completed", "error"]
    # a non-zero exit code is said first; the edit's observation is a diff of the file
    failed = result_of(evs, calls[1].id)
    assert failed.is_error and failed.content[0].text == "exit code 1"
    diff = result_of(evs, calls[2].id).content[0].text
    assert tools.result_view("str_replace_editor", calls[2].input, diff).kind == "diff"
    assert [(e.path, e.new) for e in tools.unified_edits(diff)] == [
        ("/workspace/calc.py", "def divide(a, b):\n    return a / b if b else None")]
    assert result_of(evs, calls[7].id).content[0].text == "Runtime error: the sandbox did not answer in time"
    # the model's words before its calls, once
    first = next(ev for ev in evs if ev.tool_uses())
    assert first.text() == "Let me look at the code and run the tests."
    assert tools.view_of("execute_bash", calls[1].input) == "shell"


def test_one_response_is_one_api_call_with_its_cost():
    idx, evs = built(EXPORT)
    read, run = [ev for ev in evs if ev.tool_uses()][:2]
    assert read.message_id == run.message_id == "chatcmpl-1"
    assert read.usage["cost"] == 0.0123
    assert idx.summary.models == ["claude-sonnet-4-20250514"]
    calls = idx.usage.summary()["buckets"]
    assert sum(row[4] for row in calls) == 8  # chatcmpl-1 … 8, each counted once


def test_thinking_context_condensation_and_agent_states():
    idx, evs = built(EXPORT)
    think = next(ev for ev in evs if any(b.kind == "thinking" for b in ev.blocks))
    assert think.blocks[0].text == "Return None when b is zero."
    logged = next(ev for ev in evs if ev.kind == "think")
    assert logged.hidden  # "Your thought has been logged."
    system = evs[0]
    assert system.kind == "system_prompt" and system.blocks[0].kind == "context"
    assert notices(system) == ["5 tools: execute_bash, think, finish, browser, str_replace_editor"]
    context = next(ev for ev in evs if ev.kind == "context")
    assert [b.label for b in context.blocks] == ["workspace_context", "microagent python", "repo instructions"]
    condensed = next(ev for ev in evs if ev.kind == "compaction")
    assert notices(condensed) == ["context condensed: events 5–12 forgotten and summarized"]
    assert condensed.blocks[1].text.startswith("The agent read calc.py")
    states = [(notices(ev)[0], ev.hidden) for ev in evs if ev.kind == "state"]
    assert states == [("agent state: running", True), ("agent state: awaiting_user_confirmation", False),
                      ("agent state: finished", False)]


def test_a_delegates_events_are_its_agents():
    _, evs = built(EXPORT)
    browse = next(ev for ev in evs if any(u.name == "fetch" for u in ev.tool_uses()))
    assert browse.author == "BrowsingAgent"
    after = next(ev for ev in evs if any(u.input == {"command": "python -m pytest -q -x"} for u in ev.tool_uses()))
    assert after.author is None


def test_an_event_id_true_is_not_event_1(tmp_path):
    # JSON's true is no event id: it must not stand for id 1 (True == 1 as a dict key)
    events = [
        {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls", "thought": ""}},
        {"id": True, "source": "agent", "action": "message", "args": {"content": "a stray record"}},
        {"id": 2, "cause": True, "source": "environment", "observation": "run", "content": "not ls's",
         "extras": {"metadata": {"exit_code": 0}}},
        {"id": 3, "cause": 1, "source": "environment", "observation": "run", "content": "calc.py",
         "extras": {"metadata": {"exit_code": 0}}},
    ]
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(events))
    idx, evs = built(path)
    assert idx.calls.calls["oh-1"].state == "completed"
    assert [b.text for b in result_of(evs, "oh-1").content] == ["calc.py"]
    assert idx.calls.orphans == {}


def test_events_one_per_line_read_the_same(tmp_path):
    events = json.loads(EXPORT.read_text())["trajectory"]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("openhands", "jsonl")
    idx, evs = built(path)
    assert idx.summary.tool_calls == 8 and idx.calls.orphans == {}
    assert idx.calls.get("oh-23").state == "error"  # (the action's id names its call)


def test_the_session_store_is_one_session_under_its_title(tmp_path):
    from viewer.store import Store

    events = json.loads(EXPORT.read_text())["trajectory"]
    session = tmp_path / "sessions" / "abc123"
    (session / "events").mkdir(parents=True)
    (session / "event_cache").mkdir()
    for e in events[:3]:
        (session / "events" / f"{e['id']}.json").write_text(json.dumps(e))
    (session / "event_cache" / "0-25.json").write_text(json.dumps(events[:25]))
    (session / "metadata.json").write_text(json.dumps({"conversation_id": "abc123", "title": "calc"}))
    shutil.copy(EXPORT, tmp_path / "sessions")
    assert detect.detect_file(session / "events" / "1.json").format == "openhands"  # `check` reads one
    # the folder is one session, keyed by its metadata.json; its event files and cache pages are
    # never listed alone
    assert sorted(r.path for r in Store([tmp_path / "sessions"]).sessions()) == sorted(
        [str(tmp_path / "sessions" / EXPORT.name), str(session / "metadata.json")])
    idx, evs = built(session / "metadata.json")
    assert idx.summary.title == "calc" and idx.summary.format == "openhands"
    assert [ev.source_id for ev in evs if ev.source_id] == ["0", "1", "2"]
    # a new event file (OpenHands writes each once) is read live
    (session / "events" / "3.json").write_text(json.dumps(events[3]))
    assert idx.refresh()
    assert idx.threads["main"].ids[-1] == "3"


def test_a_stored_conversation_reads_as_its_export_does():
    store = FIXTURES / "store-calc" / "sessions" / "3f2a9c1e7b5d4e08a6c2f1b0d9e8c7a6" / "metadata.json"
    idx, evs = built(store)
    _, exported = built(EXPORT)
    assert [(ev.role, ev.text()) for ev in evs[1:]] == [(ev.role, ev.text()) for ev in exported]
    assert [(u.name, idx.calls.get(u.id).state) for u in tool_uses(evs)] == [
        (u.name, built(EXPORT)[0].calls.get(u.id).state) for u in tool_uses(exported)]
    assert idx.summary.title == "Fix divide by zero in calc"  # the title OpenHands gave it
    assert evs[0].hidden and "selected repository dev/calc" in evs[0].blocks[0].text


def test_a_cli_conversation_without_metadata_is_keyed_by_its_first_event(tmp_path):
    from viewer.store import Store

    cli = FIXTURES / "store-cli"
    first = cli / "sessions" / "9d8c7b6a5f4e4d3c2b1a0f9e8d7c6b5a" / "events" / "0.json"
    assert [r.path for r in Store([cli]).sessions()] == [str(first.resolve())]
    idx, evs = built(first)
    assert idx.summary.title == "Fix the failing test in calc.py"
    assert len(evs) == 9 and idx.summary.unparsed == 0
    # an event file that is no OpenHands event is read as the file it is, not as a conversation
    other = tmp_path / "x" / "events" / "0.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert detect.detect_file(other).format != "openhands"


def test_plain_lists_stay_with_their_formats(tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([{"role": "user", "content": "hi", "source": "user"}]))
    assert detect.detect_file(plain).format == "openai-chat"


def test_hostile_content_stays_text(tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copy(HOSTILE, root)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    html = app.test_client().get("/s/hostile-openhands").get_data(as_text=True)
    assert "agent state: &lt;img src=x onerror=" in html
    assert not re.search(r"<img[^>]*onerror|<script>alert|(?:href|src)=\"javascript:", html)
    assert '<span class="url">javascript:alert(3)</span>' in html  # an image address shown, never loaded


def test_a_delegates_events_hang_under_its_delegate_call():
    idx, evs = built(EXPORT)
    by_id = {ev.source_id: ev for ev in evs}
    delegate = next(u for u in tool_uses(evs) if u.name == "delegate_to_browsing_agent")
    # the BrowsingAgent's browse and its observation run under the delegate call, named for it
    assert [(i, by_id[i].parent, by_id[i].author) for i in ("17", "18")] == [
        ("17", delegate.id, "BrowsingAgent"), ("18", delegate.id, "BrowsingAgent")]
    # the delegate's answer is the call's own result, and what follows is the main agent's again
    assert by_id["19"].parent is None and by_id["16"].parent is None
    assert all(ev.parent is None for ev in evs if ev.source_id and int(ev.source_id) > 19)


def test_a_conversation_is_listed_from_its_metadata_before_its_first_event(tmp_path):
    from viewer.store import Store

    # OpenHands writes metadata.json as the conversation is created, its events as they come
    events = json.loads(EXPORT.read_text())["trajectory"]
    conv = tmp_path / "sessions" / "abc123"
    conv.mkdir(parents=True)
    (conv / "metadata.json").write_text(json.dumps(
        {"conversation_id": "abc123", "github_user_id": None, "selected_repository": None,
         "title": "Conversation abc12", "created_at": "2025-06-02T10:00:00Z"}))
    store = Store([tmp_path])
    assert [r.path for r in store.sessions()] == [str((conv / "metadata.json").resolve())]
    idx = SessionIndex(conv / "metadata.json").build()
    assert not idx.summary.title  # the default title gives way to the first prompt, when there is one
    (conv / "events").mkdir()
    for e in events[:3]:
        (conv / "events" / f"{e['id']}.json").write_text(json.dumps(e))
    assert idx.refresh()
    assert idx.summary.title == "Fix the failing test in calc.py"
    # a metadata.json of another tool, with no OpenHands event beside it, is not a conversation
    other = tmp_path / "other" / "metadata.json"
    other.parent.mkdir()
    other.write_text(json.dumps({"name": "x", "version": 1}))
    assert detect.detect_file(other).format != "openhands"
