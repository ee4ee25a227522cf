"""MARSYS adapter: golden files written by the real library (marsys 0.2.1), files written by hand
from the project's message documentation, and the shapes in between.

No real public MARSYS transcript exists (see ../shared/corpus/SOURCES.md §4); the golden files come
from `tests/golden/make_marsys_golden.py`, which runs MARSYS's own classes in a throwaway venv.
"""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewer import formats
from viewer.cli import main
from viewer.formats import detect, marsys
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT

FIXTURES = ROOT / "test_data" / "formats" / "marsys"
GOLDEN = FIXTURES / "golden-marsys-0.2.1"
SEED = FIXTURES / "seed-docs"
# the memory and snapshot files; the run traces (trace-*/) and the newer pause/resume snapshot
# are tests/test_marsys_trace.py's
FILES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl")
               and not p.parent.name.startswith("trace-") and "paused-snapshot" not in p.parts)
R = Ref("main", 1, 0, 1)


def raw_messages(path: Path) -> list[dict]:
    """Every message of a fixture, read straight from the JSON (repeats included)."""
    if path.suffix == ".jsonl":
        return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    doc = json.loads(path.read_text())
    if isinstance(doc, list):
        return doc
    if "memory_type" in doc:
        return doc["messages"]
    return [m for res in doc["branch_results"].values() for msgs in res["branch_memory"].values()
            for m in msgs]


def raw_counts(path: Path) -> dict:
    msgs = raw_messages(path)
    calls = {tc["id"] for m in msgs for tc in m.get("tool_calls") or []}
    results = {m["tool_call_id"]: m["content"] for m in msgs if m["role"] == "tool"}
    failed = {k for k, v in results.items() if v.startswith("{'error'") or v.startswith('{"error"')}
    extra = 0
    if path.name.startswith("session_"):  # snapshot: a session card, branch cards, result cards
        doc = json.loads(path.read_text())
        extra = 1 + len(doc["branches"]) + len(doc["branch_results"])
    return {"events": len(msgs) + extra, "calls": len(calls), "errors": len(failed),
            "completed": len(calls & results.keys()) - len(failed),
            "pending": len(calls - results.keys()),
            "error_messages": sum(m["role"] == "error" for m in msgs)}


def test_fixtures_are_the_expected_set():
    assert {p.relative_to(FIXTURES).as_posix() for p in FILES} == {
        "golden-marsys-0.2.1/coordinator.memory.json", "golden-marsys-0.2.1/researcher.memory.json",
        "golden-marsys-0.2.1/session_golden-run-1.json",
        "golden-marsys-0.2.1/messages.asdict.jsonl",
        "golden-marsys-0.2.1/coordinator.messages.jsonl",
        "golden-marsys-0.2.1/researcher.messages.jsonl",
        "seed-docs/orchestrator-weather-research.jsonl", "seed-docs/tool-usage-pattern.json"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_fixture_is_read_whole(path):
    d = detect.detect_file(path)
    assert d.format == "marsys"
    assert d.mode == ("jsonl" if path.suffix == ".jsonl" else "document")
    idx = SessionIndex(path).build()
    th = idx.threads["main"]
    raw = raw_counts(path)
    assert len(th) == raw["events"]
    assert "unparsed" not in th.kinds
    assert len(idx.calls.calls) == raw["calls"] and not idx.calls.orphans
    assert idx.calls.by_state() == {"pending": raw["pending"], "executing": 0,
                                    "completed": raw["completed"], "error": raw["errors"]}
    # error messages keep their role and are counted once (repeats in a snapshot are not)
    assert th.roles.count("error") == raw["error_messages"] - (
        raw["error_messages"] // 2 if path.name.startswith("session_") else 0)


# figures checked by reading the files (and the generator script) by hand
KNOWN = {
    "coordinator.memory.json": dict(events=6, calls={}, agents=["Coordinator", "Researcher"],
                                    hidden=0),
    "researcher.memory.json": dict(events=8, calls={"completed": 1, "error": 1},
                                   agents=["Researcher"]),
    "session_golden-run-1.json": dict(events=27, calls={"completed": 1, "error": 1}, hidden=12,
                                      agents=["Coordinator", "Researcher"], errors=2),
    "messages.asdict.jsonl": dict(events=14, calls={"completed": 1, "error": 1},
                                  agents=["Coordinator", "Researcher"]),
    "orchestrator-weather-research.jsonl": dict(events=11, calls={"completed": 2, "pending": 1},
                                                agents=["orchestrator_agent", "researcher_agent"],
                                                errors=1, thinking=0),
    "tool-usage-pattern.json": dict(events=6, calls={"completed": 1}, agents=["weather_agent"]),
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_figures(name):
    (path,) = [p for p in FILES if p.name == name]
    want = KNOWN[name]
    idx = SessionIndex(path).build()
    s = idx.summary
    assert s.events == want["events"]
    assert {k: v for k, v in idx.calls.by_state().items() if v} == want["calls"]
    assert s.agents == want["agents"]
    if "hidden" in want:
        assert s.hidden == want["hidden"]
    if "errors" in want:
        assert s.errors == want["errors"]
    if "thinking" in want:
        evs = load_events(idx, "main", 0, len(idx.threads["main"]))
        assert sum(b.kind == "thinking" for e in evs for b in e.blocks) == want["thinking"]


def events(path: Path):
    idx = SessionIndex(path).build()
    return idx, load_events(idx, "main", 0, len(idx.threads["main"]))


def test_agent_calls_are_threaded_caller_to_callee():
    _, evs = events(SEED / "orchestrator-weather-research.jsonl")
    call = next(e for e in evs if e.role == "agent_call")
    assert (call.kind, call.author, call.recipient) == ("agent_call", "orchestrator_agent",
                                                       "researcher_agent")
    assert call.blocks[0].text == "task task_123"
    resp = next(e for e in evs if e.role == "agent_response")
    assert (resp.kind, resp.author) == ("agent_response", "researcher_agent")
    assert "completed in 2.5s" in resp.blocks[0].text
    err = next(e for e in evs if e.role == "error")
    assert err.author == "researcher_agent" and "timed out" in err.text()
    assert evs[0].timestamp_assumed_utc  # naive isoformat() times are flagged, not shifted


def test_snapshot_threads_each_agents_memory_and_hides_resyncs():
    idx, evs = events(GOLDEN / "session_golden-run-1.json")
    visible = [e for e in evs if not e.hidden]
    # the action JSON of the coordinator: thought as thinking, the invocation as a call
    plan = visible[2]
    assert (plan.role, plan.kind, plan.author, plan.recipient) == (
        "assistant", "agent_call", "Coordinator", "Researcher")
    assert [b.kind for b in plan.blocks] == ["thinking", "notice", "text"]
    assert plan.blocks[1].text == "invoke Researcher"
    # the reply sits in the coordinator's memory: it goes back to the coordinator
    resp = next(e for e in visible if e.role == "agent_response")
    assert (resp.author, resp.recipient) == ("Researcher", "Coordinator")
    # a request in an agent's memory is addressed to that agent
    assert [e.recipient for e in visible if e.role == "user"] == ["Coordinator", "Researcher"]
    repeats = [e for e in evs if e.hidden_reason == "repeated by a later memory sync"]
    assert len(repeats) == 10 and not any(b.kind in ("tool_use", "tool_result")
                                          for e in repeats for b in e.blocks)
    assert repeats[0].ref.path.endswith("[4] (repeat of [0])")
    # each call holds its own result, not a repeat's
    search = idx.calls.calls["call_search_1"]
    assert search.call == ("main", 14) and search.result == ("main", 15)
    final = evs[-1]
    assert final.kind == "result" and "succeeded" in final.blocks[0].text


def test_memory_dump_beats_the_generic_openai_reading():
    """The memory file's messages are plain to_llm_dict() output; the wrapper is what names it."""
    doc = json.loads((GOLDEN / "researcher.memory.json").read_text())
    # its marks: the repr of the executor's failure dict, the error message, the action JSON
    assert [marsys.sniff(m) for m in doc["messages"]] == [0, 0, 0, 0, 0, 2, 3, 3]
    assert marsys.document_bonus(doc) > len(doc["messages"]) * 2
    assert detect.detect_document(doc) == "marsys"


def test_plain_openai_messages_are_not_marsys(tmp_path):
    plain = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"},
             {"role": "assistant", "content": "done", "name": "helper"}]
    assert [marsys.sniff(m) for m in plain] == [0] * 5
    for name, text in (("plain.json", json.dumps(plain)),
                       ("plain.jsonl", "\n".join(json.dumps(m) for m in plain) + "\n")):
        (tmp_path / name).write_text(text)
        fmt = detect.detect_file(tmp_path / name).format
        assert fmt != "marsys"
        if "openai-chat" in formats.BY_NAME:
            assert fmt == "openai-chat"


def test_distinctive_fields_score():
    assert marsys.sniff({"role": "agent_call", "content": "x"}) == 3
    assert marsys.sniff({"role": "user", "content": "x", "message_id": "m", "timestamp": 1.0}) == 3
    assert marsys.sniff({"role": "assistant", "content": "x", "metadata": {"caller": "a"}}) == 3
    assert marsys.sniff({"role": "error", "content": "boom", "name": "a"}) == 3
    assert marsys.sniff({"role": "assistant", "content": "x", "name": "a", "timestamp": 1.5}) == 2
    # AgentScope Msgs carry name + metadata + timestamp too, but an `id`, never `message_id`
    assert marsys.sniff({"id": "i", "name": "Friday", "role": "assistant", "content": "x",
                         "metadata": None, "timestamp": "2026-01-26 17:30:12.811"}) == 0
    assert marsys.sniff({"role": "user", "parts": [{"type": "text", "text": "x"}], "id": "w"}) == 0


def test_dataclass_shape_tool_calls_agent_calls_and_extras():
    ev = marsys.event({"role": "assistant", "content": None, "message_id": "m1", "name": "A",
                       "tool_calls": [{"id": "c1", "call_id": "c1", "type": "function",
                                       "name": "search", "arguments": '{"q": "x"}'}],
                       "agent_calls": [{"agent_name": "B", "request": {"topic": "y"}}],
                       "structured_data": {"k": 1}, "images": ["data:image/png;base64,iVBORw0KGgo=",
                                                              "./outputs/chart.png"],
                       "reasoning_details": [{"type": "reasoning.text", "text": "hmm"},
                                             {"type": "reasoning.encrypted", "data": "sig"}]}, R)
    kinds = [b.kind for b in ev.blocks]
    assert kinds == ["thinking", "thinking", "tool_use", "notice", "data", "media", "media", "data"]
    assert ev.blocks[1].redacted and ev.blocks[2].input == {"q": "x"}
    assert (ev.kind, ev.author, ev.recipient, ev.source_id) == ("agent_call", "A", "B", "m1")
    assert ev.blocks[5].data and ev.blocks[6].url == "./outputs/chart.png"


def test_snapshot_tool_call_reprs_are_read_back():
    ev = marsys.event({"role": "assistant", "content": None, "name": "A", "timestamp": 1.0,
                       "tool_calls": [
        "ToolCallMsg(id='call_9', call_id='call_9', type='function', name='fetch', "
        "arguments='{\"url\": \"https://x.test/it\\'s\"}')"]}, R)
    (use,) = ev.tool_uses()
    assert (use.id, use.name, use.input) == ("call_9", "fetch", {"url": "https://x.test/it's"})


def test_tool_failures_and_multimodal_tool_output():
    failed = marsys.event({"role": "tool", "tool_call_id": "c", "name": "t",
                           "content": "{'error': 'HTTP 404', 'type': 'HTTPError'}"}, R)
    assert failed.kind == "tool_result" and failed.tool_results()[0].is_error is True
    fine = marsys.event({"role": "tool", "tool_call_id": "c",
                         "content": '{"result": "ok", "error": null}'}, R)
    assert fine.tool_results()[0].is_error is None
    payload = marsys.event({"role": "user", "content": [
        {"type": "text", "text": "[Tool response content for tool_call_id: call_7]"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}, R)
    assert (payload.kind, payload.parent) == ("tool_output", "call_7")
    assert marsys.title_of(payload) is None


def test_check_json_names_the_format():
    r = CliRunner().invoke(main, ["check", str(GOLDEN / "session_golden-run-1.json"), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["format"] == "marsys" and data["mode"] == "document"
    assert data["events"] == 27 and data["hidden"] == 12 and data["unparsed"] == []
    assert data["tool_calls"] == {"pending": 0, "executing": 0, "completed": 1, "error": 1}


def test_page_shows_calls_states_and_agents(tmp_path):
    app = create_app({"ROOTS": [str(GOLDEN)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    listing = client.get("/").get_data(as_text=True)
    assert "Coordinator, Researcher" in listing
    href = next(h for h in re.findall(r'href="(/s/[^"]+)"', listing) if "session_golden" in h)
    html = client.get(href).get_data(as_text=True)
    assert html.count('class="ev ') == 27
    assert 'class="tool ' in html
    for state in ("completed", "error"):
        assert f'<span class="state {state}">{state}</span>' in html
    assert "Coordinator → Researcher" in html and "Researcher → Coordinator" in html
    assert re.search(r'class="ev role-error[^"]*lane-\d', html)  # the error, in its agent's lane
    assert re.search(r'class="ev role-agent_response kind-agent_response[^"]*lane-\d', html)


def memory_events(name: str):
    idx = SessionIndex(GOLDEN / f"{name}.messages.jsonl").build()
    return idx, load_events(idx, "main", 0, len(idx.threads["main"]))


def test_a_memory_as_the_library_writes_it_is_marsys():
    """Message.to_llm_dict() per line (golden, marsys 0.2.1): OpenAI-shaped, and still MARSYS by
    its marks: hand-offs, `[Request from …]` requests, `error` messages, failure dicts."""
    for name in ("coordinator", "researcher"):
        assert detect.detect_file(GOLDEN / f"{name}.messages.jsonl").format == "marsys"


def test_hand_offs_are_agent_to_agent_messages():
    idx, evs = memory_events("coordinator")
    _, user, hand_off, reply, final = evs
    assert idx.summary.title.startswith("Find out when Python 3.13 was released")
    # the model's fenced action JSON: an invocation from Coordinator to Researcher
    assert (hand_off.kind, hand_off.author, hand_off.recipient) == (
        "agent_call", "Coordinator", "Researcher")
    assert [b.kind for b in hand_off.blocks] == ["thinking", "notice", "text"]
    assert hand_off.blocks[2].text.startswith("Research the Python 3.13 release")
    # what Researcher handed back, as BranchExecutor passes it on: from Researcher
    assert (reply.role, reply.kind, reply.author) == ("user", "comm", "Researcher")
    assert reply.text().startswith("Python 3.13 was released on 7 October 2024")
    assert "[Request from" not in reply.text()
    assert [b.kind for b in final.blocks] == ["thinking", "notice", "text"]


def test_a_failed_tool_and_a_model_error_read_as_errors():
    idx, evs = memory_events("researcher")
    request = evs[1]
    assert (request.kind, request.author) == ("comm", "Coordinator")
    assert idx.summary.title == ("Research the Python 3.13 release: the release date and the three "
                                 "headline features.")
    calls = idx.calls.calls
    assert calls["call_search_1"].status == "completed"
    assert calls["call_fetch_2"].status == "error"  # {'error': …, 'type': 'ConnectionError'}
    error = next(e for e in evs if e.role == "error")
    assert error.author == "Researcher"
    assert error.blocks[0].text == "LLM call failed: [MODEL_API_RATE_LIMIT_ERROR] 429 Too Many Requests"
    assert error.blocks[1].label == "error details" and error.blocks[1].value["retry_after"] == 2
    assert idx.summary.errors == 2


def test_hand_off_pages_show_sender_and_recipient(tmp_path):
    app = create_app({"ROOTS": [str(GOLDEN)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get("/s/coordinator.messages").get_data(as_text=True)
    assert '<span class="who">Coordinator → Researcher</span>' in html
    assert '<span class="who">Researcher → this agent</span>' in html


def test_action_json_in_words_and_fences():
    action = {"thought": "t", "next_action": "invoke_agent",
              "action_input": [{"agent_name": "B", "request": "do it"}]}
    fenced = "I will ask B.\n```json\n" + json.dumps(action, indent=2) + "\n```\nThanks."
    assert marsys.action_of(fenced) == ("I will ask B.\n", action, "\nThanks.")
    assert marsys.action_of(json.dumps(action)) == ("", action, "")
    assert marsys.action_of("```json\n{\"next_action\": broken}\n```") is None
    ev = marsys.event({"role": "assistant", "name": "A", "content": fenced}, R)
    assert (ev.kind, ev.author, ev.recipient) == ("agent_call", "A", "B")
    assert [b.kind for b in ev.blocks] == ["text", "thinking", "notice", "text", "text"]


# ManagedConversationMemory's compaction (rezaho/MARSYS src/marsys/agents/memory_strategies.py,
# SummarizationProcessor.reduce, and memory.py's _forced_summarization_fallback) replaces the
# history with [system, "[User Requests Summary]…" (user), "[Compacted Context Summary]…"
# (assistant, name "compaction_<model>"), "[Retained image <id>]: …" + the image (user), the
# protected tail]: the Researcher's memory in the paused-snapshot fixture is such a memory.
PAUSED = FIXTURES / "paused-snapshot" / "sess-7f3a9c21" / "snapshot.json"


def test_compaction_summaries_are_shown_as_compaction_not_as_prompts_or_replies():
    idx, evs = events(PAUSED)
    first = next(i for i, e in enumerate(evs) if e.kind == "compaction")
    requests, summary, image = evs[first:first + 3]
    assert [e.kind for e in (requests, summary, image)] == ["compaction"] * 3
    assert requests.blocks[0].text == "context compacted: the user's requests so far"
    assert requests.text().startswith("Find the 2010 and latest populations")  # marker dropped
    assert summary.blocks[0].text == ("context compacted: summary of the earlier conversation "
                                      "(by anthropic/claude-haiku-4.5)")
    assert summary.author is None and summary.model == "anthropic/claude-haiku-4.5"
    assert summary.text().startswith("Searched INSEE for both cities.") and "[Key Facts]" in summary.text()
    assert image.blocks[0].text == "an image kept through context compaction"
    assert image.blocks[-1].kind == "media" and image.blocks[-1].media_type == "image/png"
    # the session's title is still its first real prompt, not the compaction's summary
    assert idx.summary.title == "Compare Lyon and Marseille's population growth since 2010."
    alone = marsys.event({"role": "user", "content": "[User Requests Summary]\nFind X."}, R)
    assert marsys.title_of(alone) == "Find X."  # a memory compacted from its start: still named
    placeholder = marsys.event({"role": "assistant", "content": "[Context was compacted. Previous "
                                "conversation history is no longer available.]"}, R)
    assert placeholder.kind == "compaction" and placeholder.blocks[0].text == (
        "context compacted: the earlier conversation was dropped, no summary kept")
    summary_rec = json.loads(PAUSED.read_text())["branches"]["br_0001"]["memory"][2]
    assert marsys.sniff(summary_rec) == 3
