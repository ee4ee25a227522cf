"""AgentScope adapter: the two real JSONSession files of the corpus, golden files written by the real
library (agentscope 1.0.21, 1.0.0, 2.0.10 via `tests/golden/make_agentscope_golden.py`), a Java
serialisation written by hand from agentscope-java's field names, and the shapes in between.
"""

import base64
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import agentscope, detect
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import lane_of, load_events
from viewer.web import create_app

from conftest import ROOT, corpus_sessions, quiet_copy

FIXTURES = ROOT / "test_data" / "formats" / "agentscope"
PY1 = FIXTURES / "golden-py1.0.21"
PY100 = FIXTURES / "golden-py1.0.0"
PY2 = FIXTURES / "golden-py2.0.10"
JAVA = FIXTURES / "java-hand-written" / "memory_messages.jsonl"
CORPUS = [p / "test-a2ui-agent.json" for p in corpus_sessions("agentscope")]
FILES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl"))
R = Ref("main", 1, 0, 1)
ERROR_TEXTS = ("Error: ", "[ERROR] ")


# --- reading the files independently of the adapter ---------------------------------------------


def raw_messages(path: Path) -> tuple[list[tuple[dict, str | None]], int]:
    """Every Msg of a file with the name of the agent whose memory holds it, and the number of
    system prompts / summaries a document carries besides."""
    if path.suffix == ".jsonl":
        return [(json.loads(x), None) for x in path.read_text().splitlines() if x.strip()], 0
    doc = json.loads(path.read_text())
    if "context" in doc:  # a 2.x AgentState
        return [(m, None) for m in doc["context"]], int(bool(doc.get("summary")))
    out, extra = [], 0
    for state in doc.values():  # a JSONSession file: one state dict per agent
        extra += bool(state.get("_sys_prompt")) + bool(state["memory"].get("_compressed_summary"))
        for item in state["memory"]["content"]:
            out.append((item[0] if isinstance(item, list) else item, state["name"]))
    return out, extra


def raw_counts(path: Path) -> dict:
    msgs, extra = raw_messages(path)
    ids = [m["id"] for m, _ in msgs]
    blocks = [b for m, _ in msgs if isinstance(m["content"], list) for b in m["content"]]
    calls = {b["id"] for b in blocks if b["type"] in ("tool_use", "tool_call")}
    results = {}
    for b in blocks:
        if b["type"] == "tool_result":
            out = b["output"]
            first = out if isinstance(out, str) else next(
                (o["text"] for o in out if o["type"] == "text"), "")
            if b.get("state") == "running" or b.get("suspended"):
                results[b["id"]] = "executing"
            elif b.get("state") == "error" or (not b.get("state") and first.startswith(ERROR_TEXTS)):
                results[b["id"]] = "error"
            else:
                results[b["id"]] = "completed"
    states = {"pending": len(calls - results.keys()), "executing": 0, "completed": 0, "error": 0}
    for state in results.values():
        states[state] += 1
    thinking = {}
    for m, _ in msgs:
        n = sum(isinstance(b, dict) and b["type"] == "thinking" for b in m["content"]) \
            if isinstance(m["content"], list) else 0
        thinking[m["id"]] = max(thinking.get(m["id"], 0), n)
    authors = {m["name"] for m, _ in msgs if m["name"] and not (
        isinstance(m["content"], list) and m["content"]
        and all(b["type"] == "tool_result" for b in m["content"]))}
    return {"events": len(msgs) + extra, "hidden": len(ids) - len(set(ids)), "calls": len(calls),
            "states": states, "thinking": sum(thinking.values()), "authors": authors - {"system"}}


def events(path: Path):
    idx = SessionIndex(path).build()
    return idx, load_events(idx, "main", 0, len(idx.threads["main"]))


def visible_thinking(evs) -> int:
    return sum(b.kind == "thinking" for e in evs if not e.hidden for b in e.blocks)


# --- every file, checked against its own JSON ----------------------------------------------------


def test_fixtures_are_the_expected_set():
    assert {p.relative_to(FIXTURES).as_posix() for p in FILES} == {
        "golden-py1.0.21/trip-session.json", "golden-py1.0.21/trip.msgs.jsonl",
        "golden-py1.0.0/trip-session.json", "golden-py1.0.0/trip.msgs.jsonl",
        "golden-py2.0.10/coder.agent_state.json", "golden-py2.0.10/review.msgs.jsonl",
        "golden-py2.0.10/streamed.msgs.jsonl", "golden-py2.0.11/coder.agent_state.json",
        "golden-py2.0.11/review.msgs.jsonl", "golden-py2.0.11/streamed.msgs.jsonl",
        "java-hand-written/memory_messages.jsonl"}


@pytest.mark.parametrize("path", CORPUS + FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_file_is_read_whole(path):
    d = detect.detect_file(path)
    assert d.format == "agentscope"
    assert d.mode == ("jsonl" if path.suffix == ".jsonl" else "document")
    idx, evs = events(path)
    raw = raw_counts(path)
    th = idx.threads["main"]
    assert len(th) == raw["events"]
    assert "unparsed" not in th.kinds and "unknown" not in th.kinds
    assert idx.summary.hidden == raw["hidden"]  # copies of broadcast messages, nothing else
    assert len(idx.calls.calls) == raw["calls"] and not idx.calls.orphans
    assert idx.calls.by_state() == raw["states"]
    assert visible_thinking(evs) == raw["thinking"]
    assert set(idx.summary.agents) == raw["authors"]
    # every visible message of a broadcast appears once, under its own id
    shown = [e.source_id for e in evs if e.source_id and not e.hidden]
    assert len(shown) == len(set(shown)) and all(e.id == e.source_id for e in evs
                                                 if e.source_id and not e.hidden)


# figures checked by reading the files (SOURCES.md §6, and the generator script) by hand
KNOWN = {
    "a2ui-mbti-skill-long": dict(msgs=13, calls={"completed": 6}, agents=["Friday"],
                                 tool_results=6, users=2, assistants=5),
    "a2ui-mbti-skill-short": dict(msgs=8, calls={"completed": 3}, agents=["Friday"],
                                  tool_results=3, users=2, assistants=3),
}


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.parent.name)
def test_corpus_known_figures(path):
    want = KNOWN[path.parent.name]
    idx, evs = events(path)
    assert idx.summary.events == want["msgs"] + 1  # + Friday's system prompt
    assert evs[0].kind == "system_prompt" and evs[0].author == "Friday"
    assert evs[0].text().lstrip().startswith("You are a helpful assistant specialized in")
    assert {k: v for k, v in idx.calls.by_state().items() if v} == want["calls"]
    assert idx.summary.agents == want["agents"]
    assert idx.summary.title == "Help me test my MBTI."
    msgs = evs[1:]
    assert [e.ref.path for e in msgs] == [f"agent.memory.content[{i}]" for i in range(want["msgs"])]
    results = [e for e in msgs if e.kind == "tool_result"]
    assert len(results) == want["tool_results"]
    # the "system" Msgs carrying results are tool results, not an agent called "system" speaking
    assert all(e.role == "tool" and e.author is None for e in results)
    assert sum(e.role == "user" for e in msgs) == want["users"]
    assert sum(e.role == "assistant" for e in msgs) == want["assistants"]
    first = msgs[0]
    assert first.source_id == first.id and first.timestamp_assumed_utc
    assert first.timestamp.isoformat().startswith(first.timestamp_raw.replace(" ", "T")[:19])
    # long tool output (the skill file) is kept whole
    assert any(len(b.content[0].text) > 5000 for e in results for b in e.blocks)


# --- the golden files of the real library --------------------------------------------------------


def test_two_agent_session_keeps_each_memory_and_shows_each_message_once():
    idx, evs = events(PY1 / "trip-session.json")
    assert [e.ref.path for e in evs[:2]] == ["planner._sys_prompt", "researcher._sys_prompt"]
    assert [e.author for e in evs[:2]] == ["Planner", "Researcher"]
    paths = {e.ref.path for e in evs}
    assert {f"planner.memory.content[{i}]" for i in range(4)} <= paths
    assert {f"researcher.memory.content[{i}]" for i in range(8)} <= paths
    visible = [e for e in evs[2:] if not e.hidden]
    # merged by time: the conversation reads in the order it happened
    assert [(e.author, e.kind) for e in visible] == [
        ("user", "message"), ("Planner", "message"), ("Researcher", "message"),
        (None, "tool_result"), (None, "tool_result"), ("user", "hint"), ("Researcher", "message"),
        ("Planner", "message")]
    stamps = [e.timestamp for e in visible]
    assert stamps == sorted(stamps)
    # the copy shown is the one in its author's own memory (with the thinking the broadcast strips)
    planner_first = next(e for e in visible if e.author == "Planner")
    assert planner_first.ref.path == "planner.memory.content[1]"
    assert planner_first.blocks[0].kind == "thinking"
    copies = [e for e in evs if e.hidden]
    assert len(copies) == 4 and all(e.hidden_reason == "copy in another agent's memory" for e in copies)
    assert {e.meta["shown_at"] for e in copies} >= {"planner.memory.content[1]",
                                                    "researcher.memory.content[6]"}
    # a hint added with a memory mark keeps it
    hint = next(e for e in visible if e.kind == "hint")
    assert hint.meta["marks"] == ["hint"] and hint.blocks[0].text == "memory marks: hint"
    # agents get different lanes
    assert len({lane_of(a) for a in ("Planner", "Researcher", "user")}) == 3


def test_toolkit_errors_images_and_raw_input_of_1x():
    idx, evs = events(PY1 / "trip.msgs.jsonl")
    calls = idx.calls.calls
    assert calls["call_weather_1"].status == "error"
    assert calls["call_trains_1"].status == "completed"
    assert calls["call_trains_1"].duration == pytest.approx(10.37)
    trains = next(b for e in evs for b in e.tool_results() if b.tool_use_id == "call_trains_1")
    assert [b.kind for b in trains.content] == ["text", "media"]
    assert trains.content[1].media_type == "image/png" and trains.content[1].size > 0
    use = next(b for e in evs for b in e.tool_uses() if b.id == "call_trains_1")
    assert use.input == {"origin": "Tokyo", "destination": "Kyoto"} and use.input_raw is None
    user = evs[0]
    assert user.blocks[1].kind == "media" and user.blocks[1].url.endswith("kinkaku-ji.jpg")
    final = evs[-1]
    assert final.blocks[-1].kind == "data" and final.blocks[-1].value == {"plan_days": 2}


def test_older_memory_state_of_1_0_0():
    doc = json.loads((PY100 / "trip-session.json").read_text())
    assert isinstance(doc["planner"]["memory"]["content"][0], dict)  # a bare Msg, no marks
    idx, evs = events(PY100 / "trip-session.json")
    assert idx.summary.events == 2 + 4 + 7 and idx.summary.hidden == 4
    assert all("marks" not in e.meta for e in evs)
    assert [e.author for e in evs if not e.hidden and e.kind == "message"] == [
        "user", "Planner", "Researcher", "Researcher", "Planner"]


def test_2x_calls_and_results_in_one_reply():
    idx, evs = events(PY2 / "coder.agent_state.json")
    summary, user, coder, reviewer = evs
    assert summary.kind == "summary" and "date-parsing fix" in summary.text()
    assert user.blocks[1].kind == "media" and user.blocks[1].name == "ci-failure.png"
    calls = idx.calls.calls
    assert {k: c.status for k, c in calls.items()} == {
        "call_read_1": "completed", "call_bash_1": "error", "call_edit_1": "completed",
        "call_suite_1": "executing"}
    assert calls["call_read_1"].call == calls["call_read_1"].result  # one Msg holds both
    assert calls["call_read_1"].duration == pytest.approx(9.0)  # from the blocks' own times
    bad = next(b for b in coder.tool_uses() if b.id == "call_bash_1")
    assert bad.input_raw == '{"command": "pytest -q tests/test_utils.py"'
    assert any(b.kind == "notice" and b.text == "hint from system" for b in coder.blocks)
    assert coder.usage == {"input_tokens": 1830, "output_tokens": 212, "cache_input_tokens": 0,
                           "cache_creation_input_tokens": 0}
    assert reviewer.role == "error" and reviewer.author == "Reviewer"
    assert reviewer.running == ["call_suite_1"]
    assert any("rate_limit" in b.text for b in reviewer.blocks if b.kind == "notice")
    assert idx.summary.errors == 2  # the failed call and the failed reply


@pytest.mark.parametrize("version", ["2.0.10", "2.0.11"])
def test_a_streamed_image_is_one_image_whichever_release_rebuilt_the_reply(version):
    """A reply rebuilt from its events (what the 2.x app stores): a tool streamed one PNG in two
    base64 chunks of one data block. 2.0.10 kept a DataBlock per chunk (neither an image on its
    own), 2.0.11 merges them: both read as the one whole image."""
    path = FIXTURES / f"golden-py{version}" / "streamed.msgs.jsonl"
    chunks = json.loads(path.read_text())["content"][2]["output"]
    assert len(chunks) == (2 if version == "2.0.10" else 1)
    whole = b"".join(base64.b64decode(c["source"]["data"]) for c in chunks)
    assert whole.startswith(b"\x89PNG") and whole.endswith(b"IEND\xaeB`\x82")
    idx, (reply,) = events(path)
    (result,) = [b for b in reply.blocks if b.kind == "tool_result"]
    (image,) = result.content
    assert image.kind == "media" and image.media == "image" and image.media_type == "image/png"
    assert base64.b64decode(image.data) == whole
    assert idx.calls.calls["call_chart_1"].status == "completed"


def test_chunks_that_are_not_one_streamed_block_stay_apart():
    def data(bid, payload, kind="base64"):
        src = {"type": kind, "media_type": "image/png"}
        src["data" if kind == "base64" else "url"] = payload
        return {"type": "data", "id": bid, "source": src}

    out = agentscope._joined_chunks([
        data("a", "iVBO"), data("b", "iVBO"),  # two blocks
        data("c", "iVBO"), data("c", "not base64!"),  # a chunk that is not base64: kept
        data("d", "https://x/1.png", "url"), data("d", "https://x/2.png", "url"),  # URLs
    ])
    assert [o["id"] for o in out] == ["a", "b", "c", "c", "d", "d"]


def test_java_serialisation():
    idx, evs = events(JAVA)
    assert [e.role for e in evs] == ["user", "assistant", "tool", "assistant", "tool", "assistant",
                                     "tool", "assistant"]
    assert [e.author for e in evs] == ["user", "Analyst", None, "Analyst", None, "Analyst", None,
                                       "Writer"]
    assert {k: c.status for k, c in idx.calls.calls.items()} == {
        "call_q3_sales": "completed", "call_chart": "error", "call_mail": "executing"}
    assert evs[1].usage == {"inputTokens": 812, "outputTokens": 64, "time": 1.42}
    assert evs[0].blocks[1].kind == "media" and evs[0].blocks[1].media_type == "image/png"
    assert evs[7].blocks[1].media == "video"
    assert "generate reason: tool suspended" in [b.text for b in evs[5].blocks if b.kind == "notice"]
    assert evs[6].blocks[0].text == "send_email awaiting external execution"
    assert evs[0].source_id == "5f0c7e2a-1b3d-4c8e-9a61-000000000001"


# --- shapes and scores --------------------------------------------------------------------------


def test_scores_claim_only_agentscope_records():
    py1 = {"id": "a", "name": "Bob", "role": "assistant", "content": "hi", "metadata": {},
           "timestamp": "2026-01-01 10:00:00.000"}
    assert agentscope.sniff(py1) == 3
    assert agentscope.sniff([py1, ["hint"]]) == 3  # a memory's [msg, marks] pair
    assert agentscope.sniff({"name": None, "role": "ASSISTANT", "content": [], "id": "x"}) == 3
    assert agentscope.sniff({"name": "a", "role": "user", "content": "x", "id": "1",
                             "created_at": "t", "finished_reason": None}) == 3
    assert agentscope.sniff({"name": "a", "role": "system", "content": [
        {"type": "tool_result", "id": "c", "name": "f", "output": "ok"}]}) == 3
    assert agentscope.sniff({"name": "a", "role": "user", "content": "x", "id": "1"}) == 2
    # plain chat messages and other formats are not ours
    assert agentscope.sniff({"role": "user", "content": "hi"}) == 0
    assert agentscope.sniff({"role": "user", "content": "hi", "name": "bob"}) == 0
    assert agentscope.sniff({"role": "user", "content": "hi", "name": "x", "message_id": "m",
                             "timestamp": 1.0}) == 0  # MARSYS
    assert agentscope.sniff({"type": "user", "message": {"role": "user", "content": "x"}}) == 0


def test_plain_chat_lists_are_left_to_the_generic_adapters(tmp_path):
    p = tmp_path / "chat.json"
    p.write_text(json.dumps([{"role": "user", "content": "hi"},
                             {"role": "assistant", "content": "hello"}]))
    assert detect.detect_file(p).format != "agentscope"
    assert agentscope.records([{"role": "user", "content": "hi"}]) is None
    assert agentscope.records({"config": {"a": [1, 2]}}) is None


def test_records_found_wherever_they_sit():
    msg = {"id": "m1", "name": "Ann", "role": "assistant", "content": "hi", "metadata": {},
           "timestamp": "2026-01-01 10:00:01.000"}
    other = {**msg, "id": "m2", "name": "Ben", "timestamp": "2026-01-01 10:00:00.000"}
    doc = {"run": {"agents": [{"name": "Ann", "memory": {"content": [[msg, []]]}},
                              {"name": "Ben", "memory": {"content": [[other, []], [msg, []]]}}]}}
    recs = agentscope.records(doc)
    assert [p for p, _ in recs] == ["run.agents[1].memory.content[0]",
                                    "run.agents[0].memory.content[0]",
                                    "run.agents[1].memory.content[1]"]
    evs = [agentscope.event(r, Ref("main", i, 0, 1, p)) for i, (p, r) in enumerate(recs, 1)]
    assert [(e.author, e.hidden) for e in evs] == [("Ben", False), ("Ann", False), ("Ann", True)]
    assert json.loads(json.dumps(recs[2][1])) == [msg, []]  # the raw view shows the source as is


def test_system_prompt_and_compressed_summary_come_first():
    msg = {"id": "m1", "name": "Ann", "role": "assistant", "content": "old news", "metadata": {},
           "timestamp": "2026-01-01 10:00:01.000"}
    doc = {"ann": {"name": "Ann", "_sys_prompt": "You are Ann.",
                   "memory": {"content": [[msg, ["compressed"]]], "_compressed_summary": "Ann met Ben."}}}
    recs = agentscope.records(doc)
    assert [p for p, _ in recs] == ["ann._sys_prompt", "ann.memory._compressed_summary",
                                    "ann.memory.content[0]"]
    prompt, summary, old = [agentscope.event(r, Ref("main", 1, 0, 1, p)) for p, r in recs]
    assert (prompt.kind, prompt.author, prompt.text()) == ("system_prompt", "Ann", "You are Ann.")
    assert summary.kind == "summary" and summary.text() == "Ann met Ben."
    assert old.blocks[0].text == "memory marks: compressed" and old.meta["marks"] == ["compressed"]


def test_odd_shapes_never_raise():
    odd = [None, 3, "text", [], {}, {"role": "USER", "content": None, "name": None},
           {"name": "a", "role": "assistant", "id": 1, "timestamp": "x", "content": [
               None, 5, "loose", {"type": "mystery"}, {"type": "tool_use"}, {"type": "tool_result"},
               {"type": "image", "source": "not-a-dict"}, {"type": "data"},
               {"type": "thinking", "thinking": None}, {"type": "hint", "hint": ["a", {"x": 1}]}]},
           {"name": "a", "role": "assistant", "content": {"type": "text", "text": "one block"},
            "id": "z", "metadata": "free text"}]
    for rec in odd:
        ev = agentscope.event(rec, R)
        assert ev.format == "agentscope"
    weird = agentscope.event(odd[6], R)
    assert [b.kind for b in weird.blocks][:5] == ["data", "data", "text", "data", "tool_use"]


def test_1x_error_texts_without_a_flag():
    def result(output):
        ev = agentscope.event({"name": "system", "role": "system", "id": "r", "content": [
            {"type": "tool_result", "id": "c", "name": "f", "output": output}]}, R)
        return ev.tool_results()[0].is_error

    assert result([{"type": "text", "text": "FunctionNotFoundError: Cannot find the function"}])
    assert result([{"type": "text", "text": "partial"}, {"type": "text", "text":
                   "<system-info>The tool call has been interrupted by the user.</system-info>"}])
    assert result("Error: boom")
    assert result([{"type": "text", "text": "No Error: here"}]) is None
    assert result([{"type": "text", "text": "fine"}]) is None


# --- the command line and the page ---------------------------------------------------------------


def test_check_json_names_the_format():
    r = CliRunner().invoke(main, ["check", str(PY1 / "trip-session.json"), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["format"] == "agentscope" and data["mode"] == "document"
    assert data["events"] == 14 and data["hidden"] == 4 and data["unparsed"] == []
    assert data["tool_calls"] == {"pending": 0, "executing": 0, "completed": 1, "error": 1}
    assert data["agents"] == ["Planner", "Researcher", "user"]


def test_page_shows_calls_states_and_agent_lanes(tmp_path):
    app = create_app({"ROOTS": [str(FIXTURES)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    client.get("/sessions.json")  # waits for the rows' summaries; the page itself never waits
    listing = client.get("/").get_data(as_text=True)
    assert "Planner, Researcher, user" in listing
    href = next(h for h in re.findall(r'href="(/s/[^"]+)"', listing)
                if "1.0.21" in h and "trip-session" in h)
    html = client.get(href).get_data(as_text=True)
    assert html.count('class="ev ') == 14
    assert 'class="tool ' in html
    for state in ("completed", "error"):
        assert f'<span class="state {state}">{state}</span>' in html
    lanes = {}
    for m in re.finditer(r'<li class="ev role-assistant kind-message[^"]*lane-(\d)[^"]*" '
                         r'id="m-[^"]+"[^>]*>\s*<div class="ev-head">\s*<span class="who">([^<]+)<', html):
        lanes.setdefault(m.group(2), set()).add(m.group(1))
    assert set(lanes) == {"Planner", "Researcher"}
    assert all(len(v) == 1 for v in lanes.values()) and lanes["Planner"] != lanes["Researcher"]
    # the two tool results fold into their calls' cards (the tool role kept on the folded line)
    assert len(re.findall(r'<li class="ev role-tool kind-tool_result[^"]*\bfolded\b', html)) == 2



@pytest.mark.parametrize("ended", [False, True], ids=["live", "ended"])
def test_java_memory_shows_its_agents_and_its_open_call(tmp_path, ended):
    """Its last call has no result: executing while the file is fresh, never answered (it was
    still running) once the session has ended."""
    root = tmp_path / "s"
    quiet_copy(JAVA.parent, root / JAVA.parent.name, ended)
    client = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"),
                         "WATCH": False}).test_client()
    (java,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(java).get_data(as_text=True)
    assert ('<span class="state executing">' in html) is not ended
    assert ("(it was still running)" in html) is ended
    assert "Analyst" in html and "Writer" in html


# A 2.x reply waiting on the user's permission: its ToolCallBlock has `state: "asking"`
# (agentscope-ai/agentscope src/agentscope/message/_block.py, ToolCallState; commit 0cce223).
def test_a_tool_call_asking_for_permission_awaits_it(tmp_path):
    path = tmp_path / "asking" / "memory_messages.jsonl"
    path.parent.mkdir()
    msgs = [
        {"id": "m0", "name": "user", "role": "user", "created_at": "2026-03-01T09:59:59.000Z",
         "content": [{"type": "text", "text": "Clean the build folder"}]},
        {"id": "m1", "name": "Friday", "role": "assistant", "created_at": "2026-03-01T10:00:00.000Z",
         "finished_at": None, "content": [
             {"type": "thinking", "thinking": "", "redacted_thinking_data": "EncRypt", "id": "b1"},
             {"type": "tool_call", "id": "tc1", "name": "execute_shell_command",
              "input": "{\"command\": \"rm -rf build\"}", "state": "asking", "suggested_rules": []}]},
    ]
    path.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    assert detect.detect_file(path).format == "agentscope"
    idx = SessionIndex(path).build()
    call = idx.calls.calls["tc1"]
    assert (call.status, call.named) == ("pending", "awaiting_permission")


def test_agents_whose_names_hash_alike_get_different_lanes(tmp_path):
    """'alice' and 'Coder' hash to the same colour lane; in one session the later one takes the
    next free lane, on the cards and on the agent chips of the header, while a name alone keeps its
    hashed lane (a card streamed or read alone is coloured without the session)."""
    assert lane_of("alice") == lane_of("Coder")
    assert lane_of("alice", ["alice", "Coder"]) == lane_of("alice")
    assert lane_of("Coder", ["alice", "Coder"]) != lane_of("alice", ["alice", "Coder"])
    eight = [f"agent-{i}" for i in range(8)]
    assert sorted(lane_of(a, eight) for a in eight) == list(range(1, 9))
    path = tmp_path / "pair" / "memory_messages.jsonl"
    path.parent.mkdir()
    msgs = [{"id": "m0", "name": "user", "role": "user", "content": "Plan, then code it"},
            {"id": "m1", "name": "alice", "role": "assistant", "content": "Here is the plan."},
            {"id": "m2", "name": "Coder", "role": "assistant", "content": "Here is the code."}]
    path.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    client = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"),
                         "WATCH": False}).test_client()
    href = next(h for h in re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True))
                if "pair" in h)
    html = client.get(href).get_data(as_text=True)
    cards = dict((who, lane) for lane, who in re.findall(
        r'<li class="ev role-assistant[^"]*lane-(\d)[^"]*" id="m-[^"]+"[^>]*>\s*'
        r'<div class="ev-head">\s*<span class="who">([^<]+)<', html))
    chips = dict((who, lane) for lane, who in re.findall(
        r'<span class="agent-chip lane-(\d)">([^<]+)</span>', html))
    assert cards.keys() == {"alice", "Coder"} and cards["alice"] != cards["Coder"]
    assert chips["alice"] == cards["alice"] and chips["Coder"] == cards["Coder"]


def test_a_reply_stopped_at_the_iteration_limit_says_so():
    # agentscope-ai/agentscope src/agentscope/message/_base.py (0d1ab5cd): `finished_reason` is a
    # ReplyFinishedReason (src/agentscope/types: completed / interrupted / exceed_max_iters / error),
    # `error` an ErrorInfo `{type, message}` only when it is "error"
    base = {"name": "Friday", "role": "assistant", "metadata": {}, "usage": None,
            "created_at": "2026-03-04T14:00:01", "finished_at": "2026-03-04T14:00:05",
            "structured_output": None, "error": None}
    stopped = agentscope.event({**base, "id": "m1", "finished_reason": "exceed_max_iters",
                                "content": [{"type": "text", "text": "Still working on it."}]}, R)
    assert [b.text for b in stopped.blocks] == [
        "Still working on it.", "reply stopped: the agent reached its maximum number of iterations"]
    failed = agentscope.event({**base, "id": "m2", "finished_reason": "error", "content": [],
                               "error": {"type": "rate_limit", "message": "429 too many requests"}}, R)
    assert failed.role == "error"
    assert [b.text for b in failed.blocks] == ["error (rate_limit): 429 too many requests"]


def test_its_times_are_said_to_name_no_zone_once():
    # AgentScope writes local times with no zone: the Markdown export shows them as written and
    # says so once, as the page's header does; a format that writes zones says nothing
    from viewer.export import Export

    assert SessionIndex(FIXTURES / "golden-py1.0.21" / "trip-session.json").build().summary.zoneless == "all"
    assert SessionIndex(JAVA).build().summary.zoneless == "all"
    md = "".join(Export(SessionIndex(FIXTURES / "golden-py1.0.21" / "trip-session.json").build(), "md").chunks())
    assert md.count("time zone unknown") == 1 and "- **times**: as written in the file, time zone unknown" in md
    assert "- **started**: 2026-02-03 09:00:00\n" in md
    assert re.search(r"^### .* · 2026-02-03 09:00:05$", md, re.M)  # a card's time, as written


def test_a_message_of_a_role_not_known_shows_its_other_fields():
    """A newer writer's Msg of a role the reader does not know: its content and the fields a Msg
    does not have are shown (they were only in the raw view); a known role's Msg is unchanged."""
    rec = {"id": "m1", "name": "Critic", "role": "reviewer", "content": "Looks fine.",
           "metadata": None, "timestamp": "2026-11-20 14:03:05.120", "verdict": {"score": 0.9}}
    ev = agentscope.event(rec, R)
    assert ev.role == "reviewer" and ev.author == "Critic"
    assert [b.kind for b in ev.blocks] == ["text", "data"]
    assert ev.blocks[1].value == {"verdict": {"score": 0.9}}
    known = agentscope.event({**rec, "role": "assistant"}, R)
    assert [b.kind for b in known.blocks] == ["text"]
