"""MARSYS run traces (marsys.coordination.tracing, newer than the 0.2.1 golden files): no real trace
is public, so both fixtures are written by hand from rezaho/MARSYS's writer code:

* `trace-ndjson/<trace_id>.ndjson` — NDJSONTraceWriter (src/marsys/coordination/tracing/writers/
  ndjson_writer.py, commit a6b995bc): one line per span as it closes (so a step's generation and
  tool spans come before the step, the execution span last) with `schema_version`, `ts`, and the
  `stream_completed` marker on close;
* `trace-json/<session_id>.json` — JSONFileTraceWriter (writers/json_writer.py, commit ca22d5d7,
  detail_level "standard"): `{trace_id, session_id, metadata, root_span}`, spans nested in
  `children`, without `trace_id`, `parent_span_id` only when set.
Span attributes are the ones TraceCollector (tracing/collector.py, commits 1272871b / bde64c00)
sets: execution {task_summary, agent_names, success, total_steps, final_response_summary}, branch
{branch_name, source_agent, target_agents, total_steps, success}, step {agent_name, step_number,
request_summary, success, error, action_type, next_agents}, generation / compaction {model_name,
prompt_tokens, completion_tokens, reasoning_tokens, finish_reason}, tool {tool_name, arguments,
result_summary}; a failed span has status "error".
"""

import json
import re

from viewer.formats import detect, marsys, openai_chat
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.store import Store
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT

FIXTURES = ROOT / "test_data" / "formats" / "marsys"
NDJSON = FIXTURES / "trace-ndjson" / "01JV3K9Q4Z7W2M8N5P6R0S1T2U.ndjson"
TREE = FIXTURES / "trace-json" / "golden-trace-1.json"
TASK = "Compare the population of Lyon and Marseille and say which grew faster since 2010."
R = Ref("main", 1, 0, 1)


def read(path):
    idx = SessionIndex(path).build()
    return idx, load_events(idx, "main", 0, len(idx.threads["main"]))


def test_ndjson_trace_is_found_detected_and_read_whole():
    assert [s.path for s in Store([NDJSON.parent]).sessions()] == [str(NDJSON)]
    assert detect.detect_file(NDJSON) == detect.Detected("marsys", "jsonl")
    lines = [json.loads(x) for x in NDJSON.read_text().splitlines()]
    idx, evs = read(NDJSON)
    assert len(evs) == len(lines) and "unparsed" not in idx.threads["main"].kinds
    assert [e.id for e in evs[:-1]] == [x["span_id"] for x in lines[:-1]]  # ids are the span ids
    assert idx.summary.title == TASK
    assert idx.summary.models == ["anthropic/claude-sonnet-4.5", "anthropic/claude-haiku-4.5"]


def test_tool_spans_are_calls_with_their_outcome():
    idx, evs = read(NDJSON)
    assert {c.name: (c.status, round(c.duration, 1)) for c in idx.calls.calls.values()} == {
        "web_search": ("completed", 0.8), "fetch_url": ("error", 4.0)}  # the spans' own times
    assert not idx.calls.orphans
    fetch = next(e for e in evs if e.tool_uses() and e.tool_uses()[0].name == "fetch_url")
    assert fetch.author == "Researcher"
    assert fetch.tool_uses()[0].input == {"url": "https://www.insee.fr/fr/statistiques/marseille"}
    (res,) = fetch.tool_results()
    assert res.is_error and res.content[0].text == "ConnectionError: timed out after 4.0s"


def test_steps_model_calls_branch_and_run():
    _, evs = read(NDJSON)
    steps = [e for e in evs if e.kind == "step"]
    assert [(e.author, e.role) for e in steps] == [
        ("Coordinator", "assistant"), ("Researcher", "assistant"), ("Researcher", "error"),
        ("Coordinator", "assistant")]
    failed = steps[2]
    assert [b.text for b in failed.blocks[:2]] == [
        "step 3 · 2.8s · failed",
        "ModelAPIError: 429 Too Many Requests (openrouter): rate limit exceeded"]
    assert steps[0].blocks[1].text == "the request it was given" and steps[0].blocks[2].text == TASK
    gens = [e for e in evs if e.kind in ("generation", "compaction")]
    assert all(e.hidden for e in gens) and len(gens) == 4
    assert gens[0].blocks[0].text == ("model call · anthropic/claude-sonnet-4.5 · 2,052 tokens · "
                                      "finish: stop · 2.2s")
    assert gens[0].usage == {"prompt_tokens": 1840, "completion_tokens": 212, "reasoning_tokens": 0}
    assert next(e for e in evs if e.kind == "compaction").blocks[0].text.startswith(
        "memory compaction · anthropic/claude-haiku-4.5")
    branch = next(e for e in evs if e.kind == "branch")
    assert branch.hidden and branch.blocks[0].text == "branch main · User → Coordinator · 4 steps"
    run = next(e for e in evs if e.kind == "session")
    assert not run.hidden and run.role == "system"
    assert run.blocks[0].text == ("MARSYS run · agents Coordinator, Researcher · succeeded · "
                                  "4 steps · 15.1s")
    assert run.blocks[-1].text.startswith("Lyon grew faster")
    assert evs[-1].kind == "trace_end" and evs[-1].hidden
    assert evs[-1].timestamp is not None and run.timestamp.isoformat() == "2026-05-21T08:00:00.500000+00:00"


def test_json_trace_tree_reads_parents_before_children():
    assert detect.detect_file(TREE) == detect.Detected("marsys", "document")
    doc = json.loads(TREE.read_text())
    recs = marsys.records(doc)
    assert [p for p, _ in recs[:4]] == ["$", "root_span", "root_span.children[0]",
                                        "root_span.children[0].children[0]"]
    assert all("children" not in r for _, r in recs)
    idx, evs = read(TREE)
    assert len(evs) == 1 + 12
    assert [e.kind for e in evs[:4]] == ["session", "session", "branch", "step"]
    assert evs[0].hidden and not evs[1].hidden  # the trace header, then the run
    assert evs[3].blocks[0].text == "step 1 · invoke_agent → Researcher · 2.6s"
    assert {c.name: c.status for c in idx.calls.calls.values()} == {
        "web_search": "completed", "fetch_url": "error"}
    assert idx.summary.title == TASK


def test_trace_records_are_marsys_and_only_marsys():
    line = json.loads(NDJSON.read_text().splitlines()[0])
    assert marsys.sniff(line) == 3 and openai_chat.sniff(line) == 0
    end = json.loads(NDJSON.read_text().splitlines()[-1])
    assert marsys.sniff(end) == 2
    assert marsys.sniff({"kind": "tool", "span_id": "x"}) == 0  # no start_time, no name
    assert marsys.sniff({"role": "user", "content": "hi"}) == 0


def test_a_writer_that_lost_spans_says_so():
    ev = marsys.event({"schema_version": 1, "ts": 1779350416.0, "kind": "stream_completed",
                       "attributes": {"total_spans": 40, "disk_error_count": 0,
                                      "dropped_span_count": 3, "disabled_dropped_count": 0,
                                      "disabled": False}}, R)
    assert not ev.hidden
    assert [b.text for b in ev.blocks] == ["trace file complete · 40 spans",
                                           "the trace writer lost spans: 3 dropped span"]
    diag = marsys.event({"schema_version": 1, "ts": 1.0, "kind": "stream_event",
                         "attributes": {"event": "writer_disabled", "consecutive_failures": 100}}, R)
    assert not diag.hidden and diag.blocks[0].text == "trace writer: writer disabled"


def test_trace_page_shows_calls_states_and_the_failed_step(tmp_path):
    app = create_app({"ROOTS": [str(NDJSON.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    states = re.findall(r'id="tc-[^"]+-state">\s*<span class="state (\w+)">', html)
    assert sorted(states) == ["completed", "error"]
    assert "429 Too Many Requests" in html and "ConnectionError: timed out after 4.0s" in html
    assert TASK in html


# Orchestra's pause/resume snapshot (src/marsys/coordination/state/snapshot.py StateSnapshot,
# commit 603761a7; FileStorageBackend writes it as <session_id>/snapshot.json, state/storage.py
# commit ddcc9685): branches carry their agent's memory. Agents route with coordination tool
# calls (coordination/formats/coordination_tools.py, commit 2689a390): invoke_agent with
# `invocations`, terminate_workflow with `answer`, ask_user with `question` — never run as tools.
PAUSED = FIXTURES / "paused-snapshot" / "sess-7f3a9c21" / "snapshot.json"


def test_paused_snapshot_shows_what_it_waits_for_and_each_branch_memory():
    assert [s.path for s in Store([PAUSED.parent.parent]).sessions()] == [str(PAUSED)]
    assert detect.detect_file(PAUSED) == detect.Detected("marsys", "document")
    idx, evs = read(PAUSED)
    doc = json.loads(PAUSED.read_text())
    assert len(evs) == 1 + sum(1 + len(b["memory"]) for b in doc["branches"].values())
    card = evs[0]
    assert not card.hidden and [b.text for b in card.blocks] == [
        "MARSYS session sess-7f3a9c21 paused (framework 0.3.0)",
        "waiting for the user's answer, then Coordinator goes on",
        "Do you want the city proper or the metropolitan area?"]
    branches = [e for e in evs if e.kind == "branch"]
    assert [(e.hidden, e.blocks[0].text) for e in branches] == [
        (True, "branch br_0000 at Coordinator · waiting · 3 steps · waiting on user"),
        (True, "branch br_0001 at Researcher · terminated · 2 steps")]
    assert idx.summary.title == "Compare Lyon and Marseille's population growth since 2010."
    assert idx.summary.agents == ["Coordinator", "Researcher"]
    # memory messages know their agent: hand-offs read sender → this agent
    hand_back = next(e for e in evs if e.kind == "comm" and e.author == "Researcher")
    assert hand_back.recipient == "Coordinator"


def test_coordination_tool_calls_read_as_hand_offs_not_pending_calls():
    idx, evs = read(PAUSED)
    assert {c.name for c in idx.calls.calls.values()} == {"web_search"}  # the only real tool
    assert idx.calls.by_state()["pending"] == 0
    invoke = next(e for e in evs if e.kind == "agent_call")
    assert (invoke.author, invoke.recipient) == ("Coordinator", "Researcher")
    assert [b.text for b in invoke.blocks] == [
        "I'll have Researcher collect the figures.", "invoke Researcher",
        "Find the 2010 and 2021 INSEE populations of Lyon and Marseille."]
    ask = next(e for e in evs if any(b.kind == "notice" and b.text == "asks the user"
                                     for b in e.blocks))
    assert ask.recipient == "User" and ask.text() == "Do you want the city proper or the metropolitan area?"
    final = evs[-1]
    assert [b.text for b in final.blocks] == [
        "final response", "Lyon: 484,344 → 522,250; Marseille: 850,726 → 873,076 (INSEE)."]
    # an answer to a coordination call is a note, not an orphan result
    ack = marsys.event({"role": "tool", "content": "Invoked Researcher.", "tool_call_id": "call_x",
                        "name": "invoke_agent"}, R)
    assert ack.kind == "tool_output" and not ack.tool_results()
    # arguments that are not the coordination tool's keep the call a plain call
    odd = marsys.event({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c9", "type": "function", "function": {"name": "invoke_agent",
                                                      "arguments": "{\"who\": 1}"}}]}, R)
    assert [u.name for u in odd.tool_uses()] == ["invoke_agent"]


def test_a_trace_counts_agent_steps_not_messages():
    """A trace holds the agents' steps (the failed one too) and tool calls, no messages: the
    summary the list and the header show counts the steps; the outline's one part holds them."""
    from viewer.outline import turns
    for path in (NDJSON, TREE):
        idx, _ = read(path)
        s = idx.summary
        assert (s.messages, s.steps, s.tool_calls, s.errors) == (0, 4, 2, 2), path
        (part,) = turns(idx)
        assert (part.text, part.steps, part.tool_calls, part.errors) == ("", 4, 2, 2)
    from click.testing import CliRunner
    from viewer.cli import main
    r = CliRunner().invoke(main, ["check", str(NDJSON), "--json"])
    assert (json.loads(r.output)["messages"], json.loads(r.output)["steps"]) == (0, 4)
    assert "0 messages, 4 agent steps" in CliRunner().invoke(main, ["check", str(TREE)]).output
    memory, _ = read(FIXTURES / "golden-marsys-0.2.1" / "coordinator.messages.jsonl")
    assert memory.summary.messages > 0 and memory.summary.steps == 0  # a memory: messages
