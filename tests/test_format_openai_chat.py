"""openai-chat adapter: the mini-swe-agent and AgentPress v0 corpus files, and the hand-made lists."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import agentpress, detect, openai_chat
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events, raw_record
from viewer.toolcalls import ToolCallMap
from viewer.web import create_app

from conftest import ROOT, corpus_sessions

FIXTURES = ROOT / "test_data" / "formats" / "openai-chat"
CORPUS = {p.name: next(p.glob("*.json")) for p in corpus_sessions("openai-chat")}
R = Ref("main", 1, 0, 1)


def raw_counts(path: Path) -> dict:
    """Figures taken straight from the JSON, independently of the adapter."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    msgs = doc["messages"] if isinstance(doc, dict) else doc
    answered = {m.get("tool_call_id") for m in msgs if m.get("role") == "tool"}
    calls = [c["id"] for m in msgs for c in m.get("tool_calls") or []]
    errors = 0
    for m in msgs:
        extra = m.get("extra") or {}
        if m.get("role") == "tool" and (
                extra.get("returncode") not in (None, 0) or extra.get("exception_info")
                or str(m.get("content")).startswith("ToolResult(success=False")):
            errors += 1
    return {"messages": len(msgs), "calls": len(calls), "errors": errors,
            "unanswered_by_tool": [c for c in calls if c not in answered],
            "exit": [m for m in msgs if m.get("role") == "exit"]}


def events(idx):
    return load_events(idx, "main", 0, len(idx.threads["main"]))


# figures from ../shared/corpus/SOURCES.md
KNOWN = {
    "mini-swe-astropy-12907-toolcalls": dict(messages=130, calls=64, model="deepseek-v4-flash"),
    "mini-swe-deepseek-chat-astroid-1333": dict(messages=354, calls=176, model="deepseek-chat"),
    "agentpress-v0-thread-parallel-tools": dict(messages=32, calls=21, model=None),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_files_are_read_whole(name):
    path = CORPUS[name]
    raw = raw_counts(path)
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("openai-chat", "document")
    idx = SessionIndex(path).build()
    main = idx.threads["main"]
    assert len(main) == raw["messages"] == KNOWN[name]["messages"]
    assert "unparsed" not in main.kinds and idx.summary.hidden == 0
    assert len(idx.calls.calls) == raw["calls"] == KNOWN[name]["calls"]
    assert not idx.calls.orphans
    by_state = idx.calls.by_state()
    assert by_state["error"] == raw["errors"]
    # every call is answered: by its tool message, or (the submit command) by the exit message
    assert by_state["completed"] + by_state["error"] == raw["calls"]
    assert idx.summary.models == ([KNOWN[name]["model"]] if KNOWN[name]["model"] else [])


def test_mini_swe_exit_answers_the_submit_command():
    path = CORPUS["mini-swe-astropy-12907-toolcalls"]
    raw = raw_counts(path)
    (submit,) = raw["unanswered_by_tool"]  # the COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT call
    idx = SessionIndex(path).build()
    call = idx.calls.calls[submit]
    assert call.status == "completed"
    evs = events(idx)
    exit_ev = evs[call.result[1]]
    assert exit_ev.role == "exit" and exit_ev.kind == "exit"
    assert exit_ev.blocks[0].text == "run ended: Submitted"
    patch = exit_ev.tool_results()[0].content[0].text
    assert patch == raw["exit"][0]["content"] and patch.startswith("diff --git")
    # the raw view shows the record exactly as the file holds it
    source = json.loads(raw_record(idx, exit_ev.id)[0])
    assert source == raw["exit"][0]


def test_mini_swe_extra_gives_time_model_and_cost():
    path = CORPUS["mini-swe-astropy-12907-toolcalls"]
    doc = json.loads(path.read_text())
    idx = SessionIndex(path).build()
    evs = events(idx)
    first = next(e for e in evs if e.role == "assistant")
    raw_first = next(m for m in doc["messages"] if m["role"] == "assistant")
    assert first.timestamp.timestamp() == pytest.approx(raw_first["extra"]["timestamp"])
    assert first.usage["cost"] == raw_first["extra"]["cost"]
    assert first.usage["prompt_tokens"] == 1689
    tool = next(e for e in evs if e.role == "tool")
    assert tool.timestamp is not None and tool.kind == "tool_result"
    assert idx.summary.title == ("Modeling's `separability_matrix` does not compute separability "
                                 "correctly for nested CompoundModels")
    assert evs[0].role == "system" and evs[-1].role == "exit"


def test_agentpress_v0_thread_is_openai_chat_not_agentpress():
    path = CORPUS["agentpress-v0-thread-parallel-tools"]
    doc = json.loads(path.read_text())
    assert agentpress.records(doc) is None
    assert detect.detect_file(path).format == "openai-chat"
    idx = SessionIndex(path).build()
    parallel = [len(m["tool_calls"]) for m in doc["messages"] if m.get("tool_calls")]
    assert max(parallel) > 1 and sum(parallel) == 21
    assert idx.summary.title == "Please create a file with a random name with the content 'Hello, world!'"
    failed = [m["tool_call_id"] for m in doc["messages"]
              if m["role"] == "tool" and m["content"].startswith("ToolResult(success=False")]
    assert failed and all(idx.calls.calls[c].status == "error" for c in failed)


def test_jsonl_of_messages_with_parallel_calls_and_bad_arguments():
    path = FIXTURES / "parallel-calls-jsonl" / "messages.jsonl"
    assert detect.detect_file(path) == detect.Detected("openai-chat", "jsonl")
    idx = SessionIndex(path).build()
    assert len(idx.threads["main"]) == 7
    assert {k: c.status for k, c in idx.calls.calls.items()} == {
        "call_paris": "completed", "call_tokyo": "completed", "call_convert": "completed"}
    evs = events(idx)
    uses = {u.id: u for u in evs[2].tool_uses()}
    assert uses["call_paris"].input == {"city": "Paris"} and uses["call_paris"].input_raw is None
    assert uses["call_convert"].input_raw == '{"celsius": 20, "to": "F"'
    assert idx.summary.agents == ["weather_agent"]
    assert idx.summary.title.startswith("What's the weather in Paris and Tokyo?")


def test_bare_array_with_content_parts_refusal_and_legacy_function_call():
    path = FIXTURES / "content-parts-legacy-function-call" / "conversation.json"
    assert detect.detect_file(path) == detect.Detected("openai-chat", "document")
    idx = SessionIndex(path).build()
    evs = events(idx)
    media = [(b.media, b.media_type) for b in evs[0].blocks if b.kind == "media"]
    assert media == [("image", "image/png"), ("audio", "audio/wav")]
    assert [b.kind for b in evs[1].blocks] == ["notice", "text"]
    assert evs[1].blocks[0].text == "the model refused"
    (call,) = idx.calls.calls.values()
    assert call.name == "get_current_weather" and call.status == "completed"
    assert evs[3].tool_uses()[0].input == {"location": "Boston, MA", "unit": "celsius"}
    assert evs[4].role == "tool" and evs[4].tool_results()[0].tool_use_id == call.id


def test_reasoning_content_custom_role_and_exit_error():
    path = FIXTURES / "mini-swe-reasoning-exit-error" / "run.traj.json"
    idx = SessionIndex(path).build()
    evs = events(idx)
    thinking = [b for e in evs for b in e.blocks if b.kind == "thinking"]
    assert len(thinking) == 1 and "trailing Z" in thinking[0].text  # the empty one adds none
    critic = next(e for e in evs if e.role == "critic")
    assert critic.text() == "Reviewer note: remember to keep Python 3.8 support."
    assert idx.calls.calls["call_00_grep"].status == "completed"
    # the run stopped inside the pytest call: the exit message answers it as an error
    assert idx.calls.calls["call_00_pytest"].status == "error"
    assert evs[-1].blocks[0].text == "run ended: ExecutionTimeoutError"
    assert idx.summary.models == ["deepseek-reasoner"]
    assert evs[2].usage == {"completion_tokens": 95, "prompt_tokens": 1200, "total_tokens": 1295,
                            "cost": 0.0009}
    assert idx.summary.title.startswith("parse_date() rejects ISO dates with a trailing Z")
    assert "</pr_description>" not in idx.summary.title


def test_sniff_stays_generic():
    assert openai_chat.sniff({"role": "user", "content": "hi"}) == 1
    assert openai_chat.sniff({"role": "assistant", "content": None, "tool_calls": []}) == 2
    assert openai_chat.sniff({"role": "tool", "tool_call_id": "x", "content": "ok"}) == 2
    # fields of specific formats cap it at 1, Anthropic block lists and non-messages are not its own
    assert openai_chat.sniff({"role": "assistant", "content": "x", "tool_calls": [],
                              "message_id": "m", "metadata": {}}) == 1
    assert openai_chat.sniff({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "x", "input": {}}]}) == 0
    assert openai_chat.sniff({"type": "user", "content": "x", "is_llm_message": True}) == 0


def test_event_never_raises_on_odd_shapes():
    for rec in ({"role": "assistant", "content": 5, "tool_calls": "nope"},
                {"role": "user", "content": [None, 3, {"type": "mystery"}]},
                {"role": "tool"}, {"role": "exit", "extra": "x"}, ["not", "a", "dict"]):
        ev = openai_chat.event(rec, R)
        assert ev.format == "openai-chat" or ev.kind == "unknown"


@pytest.mark.parametrize("path", [*CORPUS.values(), *sorted(FIXTURES.glob("*/*"))],
                         ids=lambda p: p.parent.name)
def test_check_json_names_the_format(path):
    r = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["format"] == "openai-chat" and data["unparsed"] == [] and data["orphans"] == []


def test_page_shows_tool_cards_states_and_the_exit(tmp_path):
    folder = CORPUS["mini-swe-astropy-12907-toolcalls"].parent
    app = create_app({"ROOTS": [str(folder)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    home = client.get("/").get_data(as_text=True)
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', home))
    # a finished session opens at its start; what is checked here sits at its end
    html = client.get(link + "?at=end").get_data(as_text=True)
    assert html.count('class="tool ') >= 10
    assert '<span class="state completed">completed</span>' in html
    assert '<span class="state error">error</span>' in html
    assert 'class="ev role-exit kind-exit' in html and "run ended: Submitted" in html
    assert "deepseek-v4-flash" in html


def test_page_names_the_agent(tmp_path):
    app = create_app({"ROOTS": [str(FIXTURES / "parallel-calls-jsonl")],
                      "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert '<span class="who">weather_agent</span>' in html
    assert html.count('class="tool ') == 3
    assert "arguments are not valid JSON" in html


@pytest.mark.parametrize("content,failed", [
    ("{'error': 'Cannot connect to host example.com:443', 'type': 'ConnectionError'}", True),
    ('{"error": "HTTP 404 Not Found", "status": 404}', True),
    ({"error": "quota exceeded"}, True),
    ('{"error": null, "result": "ok"}', False),
    ('{"results": [], "error": ""}', False),
    ('{"error": "stale", "result": "the tool answered anyway"}', False),
    ("error: this is prose, not a report", False),
    ("{'not': 'an error'}", False),
])
def test_a_result_that_is_an_error_report_is_an_error(content, failed):
    """OpenAI tool messages have no error flag: the content itself may be the error report."""
    ev = openai_chat.event({"role": "tool", "tool_call_id": "c1", "content": content}, R)
    assert bool(ev.tool_results()[0].is_error) is failed
    row = {"message_id": "m", "thread_id": "t", "type": "tool", "is_llm_message": True,
           "content": json.dumps({"role": "tool", "tool_call_id": "c1", "content": content})}
    assert bool(agentpress.event(row, R).tool_results()[0].is_error) is failed


def test_an_explicit_flag_wins_over_the_content():
    ok = {"role": "tool", "tool_call_id": "c1", "content": '{"error": "x"}',
          "extra": {"returncode": 0}}
    assert not openai_chat.event(ok, R).tool_results()[0].is_error
    row = {"message_id": "m", "thread_id": "t", "type": "tool", "is_llm_message": True,
           "content": json.dumps({"role": "tool", "tool_call_id": "c1", "content": '{"error": "x"}'}),
           "metadata": {"result": {"success": True}}}
    assert not agentpress.event(row, R).tool_results()[0].is_error


# A Responses API conversation as an app keeps it (the Agents SDK's `to_input_list()`, or `input` +
# `output` items appended): messages mixed with role-less items. Shapes from openai/openai-python
# src/openai/types/responses/ (response_function_tool_call.py, response_input_item_param.py,
# response_reasoning_item.py, response_custom_tool_call.py, response_custom_tool_call_output.py,
# response_function_web_search.py, response_code_interpreter_tool_call.py; commits 49a85c4,
# 3e19420, c0f4ff0) and types/chat/chat_completion_message_custom_tool_call.py.
RESPONSES = [
    {"role": "user", "content": "What's the weather in Paris, and patch the README?"},
    {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB",
     "summary": [{"type": "summary_text", "text": "I need the weather tool first."}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_w", "name": "get_weather",
     "arguments": "{\"city\": \"Paris\"}", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_w", "output": "{\"temp\": 21}"},
    {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch",
     "input": "*** Begin Patch\n*** Update File: README.md\n*** End Patch"},
    {"type": "custom_tool_call_output", "call_id": "call_p",
     "output": [{"type": "input_text", "text": "patch applied"}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "paris weather tomorrow"}},
    {"type": "code_interpreter_call", "id": "ci_1", "code": "print(21 * 9 / 5 + 32)",
     "container_id": "cntr_1", "status": "completed", "outputs": [{"type": "logs", "logs": "69.8\n"}]},
    {"type": "shell_call", "id": "sh_1", "call_id": "call_s", "status": "completed",
     "action": {"commands": ["cat MISSING.md"], "timeout_ms": 10000}},
    {"type": "shell_call_output", "call_id": "call_s", "output": [
        {"stdout": "", "stderr": "cat: MISSING.md: No such file or directory",
         "outcome": {"type": "exit", "exit_code": 1}}]},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "21 °C (69.8 °F); README patched.", "annotations": []}]},
]


def test_responses_items_are_calls_results_and_thinking(tmp_path):
    path = tmp_path / "responses" / "conversation.json"
    path.parent.mkdir()
    path.write_text(json.dumps(RESPONSES), encoding="utf-8")
    assert detect.detect_file(path) == detect.Detected("openai-chat", "document")
    idx = SessionIndex(path).build()
    assert "unknown" not in idx.threads["main"].kinds
    assert {k: (c.name, c.status) for k, c in idx.calls.calls.items()} == {
        "call_w": ("get_weather", "completed"), "call_p": ("apply_patch", "completed"),
        "ws_1": ("web_search", "completed"), "ci_1": ("code_interpreter", "completed"),
        "call_s": ("shell", "error")}
    assert not idx.calls.orphans
    evs = events(idx)
    assert [b.text for b in evs[1].blocks] == ["I need the weather tool first."]
    (patch,) = evs[4].blocks
    assert patch.input == "*** Begin Patch\n*** Update File: README.md\n*** End Patch"
    assert patch.input_raw is None  # free-form input by design, not "arguments that did not parse"
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert "cat: MISSING.md: No such file or directory" in html and "69.8" in html
    assert '"type": "function_call"' not in html  # no item shown as raw JSON
    # a free-form input is shown as written, not as a quoted JSON string with \n escapes
    assert "*** Begin Patch\n*** Update File: README.md" in html
    assert "<dt>query</dt><dd>paris weather tomorrow</dd>" in html  # the search action, unwrapped


def test_hosted_call_that_failed_with_outputs_reads_failed():
    """A code interpreter run that raised keeps its logs beside `status: failed` (openai-python
    types/responses/response_code_interpreter_tool_call.py): the call failed though it has output
    and no `error`; a completed one with logs completed."""
    item = {"type": "code_interpreter_call", "id": "ci_2", "code": "1 / 0", "container_id": "c",
            "status": "failed", "outputs": [{"type": "logs", "logs": "ZeroDivisionError: division by zero"}]}
    for status, state in [("failed", "error"), ("completed", "completed")]:
        calls = ToolCallMap()
        calls.observe(openai_chat.event({**item, "status": status}, R), 0, None)
        assert calls.calls["ci_2"].status == state


def test_custom_tool_calls_and_reasoning_details_in_chat_messages():
    ev = openai_chat.event({"role": "assistant", "content": None, "reasoning_details": [
        {"type": "reasoning.text", "text": "Patch the file.", "format": "anthropic-claude-v1"}],
        "tool_calls": [{"id": "call_c1", "type": "custom",
                        "custom": {"name": "apply_patch", "input": "*** Begin Patch"}}]}, R)
    assert [(b.kind, getattr(b, "text", None)) for b in ev.blocks] == [
        ("thinking", "Patch the file."), ("tool_use", None)]
    assert (ev.blocks[1].id, ev.blocks[1].name, ev.blocks[1].input) == (
        "call_c1", "apply_patch", "*** Begin Patch")


def test_a_tool_call_of_a_type_not_known_here_shows_what_it_holds():
    # a newer API's call type (found by the fuzzer's unknown-block mutation): it was drawn as
    # "Tool: ?" with no input, its content lost; the `{type: T, T: {name, …}}` shape `custom`
    # set is read as that, anything else shows the item itself as the input
    ev = openai_chat.event({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_m1", "type": "mcp", "mcp": {"server": "docs", "name": "lookup", "arguments": '{"q": "x"}'}},
        {"id": "call_f1", "type": "future_call", "payload": {"what": "new"}}]}, R)
    mcp, future = ev.blocks
    assert (mcp.id, mcp.name, mcp.input) == ("call_m1", "lookup", {"q": "x"})
    assert (future.id, future.name, future.input) == (
        "call_f1", "future_call", {"type": "future_call", "payload": {"what": "new"}})


def test_streamed_call_pieces_join_only_onto_a_call():
    # an item that is no call among a writer's unmerged deltas (found by the fuzzer): the piece
    # after it was joined onto it as its arguments, and what the item held was drawn as "}"
    ev = openai_chat.event({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "create_file", "arguments": '{"a": '}},
        {"id": None, "type": "function", "function": {"name": None, "arguments": "1"}},
        {"type": "future_note", "note": "kept"},
        {"id": None, "type": "function", "function": {"name": None, "arguments": "}"}}]}, R)
    calls = [(b.name, b.input) for b in ev.blocks]
    assert calls[0] == ("create_file", {"a": 1})
    assert ("future_note", {"type": "future_note", "note": "kept"}) in calls


def test_the_sources_an_answer_cites_are_named():
    # chat: message.annotations url_citation (openai-python types/chat/chat_completion_message.py);
    # Responses: output_text annotations (types/responses/response_output_text.py)
    chat = openai_chat.event({"role": "assistant", "content": "Paris is 21 °C today.", "annotations": [
        {"type": "url_citation", "url_citation": {"url": "https://weather.example/paris",
                                                  "title": "Paris weather", "start_index": 0, "end_index": 5}}]}, R)
    item = openai_chat.event({"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "It is 21 °C.", "annotations": [
            {"type": "url_citation", "url": "https://weather.example/paris", "title": "Paris weather",
             "start_index": 0, "end_index": 3},
            {"type": "file_citation", "file_id": "file_1", "filename": "notes.pdf", "index": 2}]}]}, R)
    assert [b.text for b in chat.blocks] == [
        "Paris is 21 °C today.", "sources: Paris weather — https://weather.example/paris"]
    assert [b.text for b in item.blocks] == [
        "It is 21 °C.", "sources: Paris weather — https://weather.example/paris; notes.pdf"]


def test_a_saved_responses_request_and_response_is_one_conversation(tmp_path):
    # `client.responses.create(input=[…])` and its Response (`object: "response"`, `output`
    # items) saved together (openai-python types/responses/response.py, response_create_params.py)
    doc = {"model": "gpt-5", "input": RESPONSES[:4],
           "response": {"id": "resp_1", "object": "response"},
           "output": RESPONSES[4:6] + [RESPONSES[-1]]}
    path = tmp_path / "call" / "response.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert detect.detect_file(path) == detect.Detected("openai-chat", "document")
    idx = SessionIndex(path).build()
    assert idx.threads["main"].paths[:1] == ["input[0]"] and idx.threads["main"].paths[-1] == "output[2]"
    assert {k: c.status for k, c in idx.calls.calls.items()} == {"call_w": "completed", "call_p": "completed"}
    assert idx.summary.title == "What's the weather in Paris, and patch the README?"


def test_streamed_call_deltas_saved_unmerged_read_as_one_call(tmp_path):
    """An early AgentPress thread kept a streamed response's `tool_calls` deltas as they came: the
    first with the id and name, 21 more with `id: null`, `name: null` and a piece of the arguments
    each. That is one create_file call, not 22 (21 of them nameless)."""
    path = FIXTURES / "agentpress-v0-streamed-call-deltas" / "0019ba22-c77c-450c-89c3-61444d157a20.json"
    doc = json.loads(path.read_text())
    deltas = doc["messages"][1]["tool_calls"]
    assert len(deltas) == 22 and all(d["id"] is None for d in deltas[1:])
    idx = SessionIndex(path).build()
    (call,) = idx.calls.calls.values()
    assert call.name == "create_file" and call.id == deltas[0]["id"]
    (use,) = [b for e in events(idx) for b in e.blocks if b.kind == "tool_use"]
    assert use.input == json.loads("".join(d["function"]["arguments"] for d in deltas))
    assert use.input == {"file_path": "file_4e7e3c.txt", "content": "Hello, world!"}
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"?]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert html.count('class="tool ') == 1 and "file_4e7e3c.txt" in html


def test_deltas_join_only_onto_a_call_and_a_named_call_stays_its_own():
    calls = openai_chat.openai_tool_calls([
        {"id": "a", "function": {"name": "f", "arguments": '{"x"'}},
        {"id": None, "function": {"name": None, "arguments": ": 1}"}},
        {"id": None, "function": {"name": "g", "arguments": "{}"}},  # a name: a call of its own
    ])
    assert [(c.name, c.input) for c in calls] == [("f", {"x": 1}), ("g", {})]
    lone = openai_chat.openai_tool_calls([{"id": None, "function": {"name": None, "arguments": "{}"}}])
    assert len(lone) == 1  # nothing before it to join: kept as the call it is


def test_mini_swe_format_error_answers_the_calls_it_refused(tmp_path):
    """mini-swe-agent runs none of a turn's calls when one is malformed: it writes a user turn
    "Tool call error: …" (`extra.interrupt_type: FormatError`) and no tool message. Those calls
    failed with that text; they are not left "never answered"."""
    path = FIXTURES / "mini-swe-format-error" / "dates__dates-1.traj.json"
    doc = json.loads(path.read_text())
    refused = [c["id"] for c in doc["messages"][2]["tool_calls"]]
    idx = SessionIndex(path).build()
    assert {c: idx.calls.calls[c].status for c in refused} == {c: "error" for c in refused}
    assert idx.calls.calls["call_02_ok"].status == "completed"
    r = CliRunner().invoke(main, ["check", str(path), "--json"])
    data = json.loads(r.output)
    assert data["unanswered"] == [] and data["tool_calls"]["error"] == 2
    evs = events(idx)
    answer = evs[3]
    assert answer.kind == "tool_result" and [b.tool_use_id for b in answer.tool_results()] == refused
    assert all(b.is_error and "Expecting ',' delimiter" in b.content[0].text for b in answer.tool_results())
    # a format error after a turn with no call answers nothing: it stays the message it is
    assert evs[5].kind == "message" and evs[5].role == "user" and "No tool calls found" in evs[5].text()
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"?]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    card = html[html.index('id="tc-call_00_badjson"'):html.index('id="tc-call_01_sibling"')]
    assert '<span class="state error">error</span>' in card and "Expecting &#39;,&#39; delimiter" in card


@pytest.mark.parametrize("text,title", [
    ("Let's develop a simple web application. Start by:\n  1. Creating a basic project structure\n"
     "  2. Setting up main application files", "Let's develop a simple web application. Start by:"),
    ("Consider the following PR description:\nparse_date() drops the time zone\n",
     "parse_date() drops the time zone"),
    ("Please solve this issue: parse_date() drops the time zone\n\nYou can execute bash commands",
     "parse_date() drops the time zone"),
])
def test_a_lead_in_to_a_list_is_the_prompt(text, title):
    """A "…:" lead-in line is dropped from a title when what follows is the real task (mini-swe's
    "Consider the following PR description:", its "Please solve this issue: <task>"), not when it
    introduces a list of steps: the title of "Start by:\\n1. …" is not its first step."""
    got = openai_chat.prompt_title(text)
    assert got.splitlines()[0] == title


def test_a_tool_search_output_names_the_tools_it_loaded():
    # openai/openai-python src/openai/types/responses/response_tool_search_output_item.py
    # (1db4657d): `{type: tool_search_output, call_id, execution, status, tools: [Tool]}`
    call = openai_chat.event({"type": "tool_search_call", "id": "ts_1", "call_id": "call_ts",
                              "arguments": {"query": "weather"}, "execution": "server",
                              "status": "completed"}, R)
    out = openai_chat.event({"type": "tool_search_output", "id": "tso_1", "call_id": "call_ts",
                             "execution": "server", "status": "completed", "tools": [
                                 {"type": "function", "name": "get_weather",
                                  "description": "Current weather for a city.\nUses the API.",
                                  "parameters": {}},
                                 {"type": "function", "name": "get_forecast", "parameters": {}}]}, R)
    (use,) = call.tool_uses()
    (result,) = out.tool_results()
    assert result.tool_use_id == use.id == "call_ts" and not result.is_error
    assert [b.text for b in result.content] == [
        "tools loaded", "get_weather — Current weather for a city.\nget_forecast"]


def test_a_thinking_block_of_a_type_not_known_shows_what_it_holds():
    # LiteLLM's `thinking_blocks` (and OpenHands' events that keep them): a block of a type not
    # known here was read as thinking with no text, its words lost — found by the fuzzer's
    # unknown-block mutation in an OpenHands event
    blocks = openai_chat.thinking_blocks({"thinking_blocks": [
        {"type": "thinking", "thinking": "check the tests first", "signature": "s"},
        {"type": "thinking_summary", "text": "the plan, in short"}]})
    assert [b.kind for b in blocks] == ["thinking", "data"]
    assert blocks[0].text == "check the tests first" and blocks[1].value["text"] == "the plan, in short"


# Items the Responses API writes today that earlier readers did not know (openai-python 3.57.0
# src/openai/types/responses/: response_output_item.py Program / ProgramOutput / AdditionalTools,
# response_function_tool_call.py `caller: {type: program, caller_id}`, response_input_item.py
# CompactionTrigger, response_configuration_update_item.py, and ImageGenerationCall's
# `output_format`)
NEWER_ITEMS = [
    {"role": "user", "content": "What is the weather in Paris and Rome? Draw it too."},
    {"type": "additional_tools", "id": "at_1", "role": "developer", "tools": [
        {"type": "function", "name": "get_weather", "description": "The weather in a city\nin °C",
         "parameters": {}}]},
    {"type": "configuration_update", "id": "cfg_1", "reasoning": {"effort": "high"},
     "text": {"format": {"type": "json_schema", "name": "forecast", "schema": {}}}},
    {"type": "program", "id": "prog_1", "call_id": "call_prog",
     "code": "const a = await tools.get_weather({city: 'Paris'});\nreturn a;", "fingerprint": "fp_9Xk2"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_w1", "name": "get_weather",
     "arguments": "{\"city\": \"Paris\"}", "caller": {"type": "program", "caller_id": "call_prog"}},
    {"type": "function_call_output", "call_id": "call_w1", "output": "21 °C"},
    {"type": "program_output", "id": "po_1", "call_id": "call_prog", "result": "Paris: 21 °C",
     "status": "completed"},
    {"type": "program", "id": "prog_2", "call_id": "call_prog2", "code": "while (true) {}",
     "fingerprint": "fp_2"},
    {"type": "program_output", "id": "po_2", "call_id": "call_prog2", "result": "", "status": "incomplete"},
    {"type": "image_generation_call", "id": "ig_1", "status": "completed", "output_format": "webp",
     "revised_prompt": "A sunny Paris skyline", "result": "UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAQAcJaQAA3AA/v3AgAA="},
    {"type": "compaction_trigger", "id": "ct_1"},
]


def test_programs_settings_and_tools_made_available_read_as_what_they_are(tmp_path):
    path = tmp_path / "newer" / "conversation.json"
    path.parent.mkdir()
    path.write_text(json.dumps(NEWER_ITEMS), encoding="utf-8")
    idx = SessionIndex(path).build()
    assert "unknown" not in idx.threads["main"].kinds
    # the program is a call, answered by its output (whose `result` was lost, the call an orphan)
    assert {k: (c.name, c.status) for k, c in idx.calls.calls.items()} == {
        "call_prog": ("program", "completed"), "call_w1": ("get_weather", "completed"),
        "call_prog2": ("program", "error"), "ig_1": ("image_generation", "completed")}
    assert not idx.calls.orphans
    evs = {e.id: e for e in events(idx)}
    said = [[getattr(b, "text", None) for b in e.blocks] for e in events(idx)]
    assert said[1] == ["1 more tool made available", "get_weather — The weather in a city"]
    assert said[2] == ["settings from here on: reasoning effort high; text format json_schema (forecast)"]
    assert said[4][0] == "called by a program (call_prog), not by the model directly"
    (program,) = [b for e in evs.values() for b in e.blocks if b.kind == "tool_use" and b.id == "call_prog"]
    assert program.input == {"code": "const a = await tools.get_weather({city: 'Paris'});\nreturn a;"}
    answers = {r.tool_use_id: [getattr(b, "text", b.kind) for b in r.content]
               for e in evs.values() for r in e.tool_results()}
    assert answers["call_prog"] == ["Paris: 21 °C"]
    assert answers["call_prog2"] == ["the program did not complete"]
    (image,) = [b for r in evs["ig_1"].tool_results() for b in r.content]
    assert image.media_type == "image/webp"  # (not png: the browser is told what the bytes are)
    assert said[-1] == ["compaction asked for: the context is compacted here"]

    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert '<details class="data"' not in html and "fp_9Xk2" not in html  # no item a raw JSON card
    assert "Paris: 21 °C" in html and "reasoning effort high" in html
    assert 'src="data:image/webp;base64,UklGR' in html


def test_a_spoken_reply_kept_only_by_its_id_says_so():
    # a conversation sent back to the API keeps an earlier spoken reply as its id only
    # (openai-python types/chat/chat_completion_assistant_message_param.py `Audio: {id}`): it was a
    # raw JSON card
    ev = openai_chat.event({"role": "assistant", "content": None, "audio": {"id": "audio_abc123"}}, R)
    assert [(b.kind, b.text) for b in ev.blocks] == [
        ("notice", "spoken reply audio_abc123: its sound and words are kept by OpenAI, not in this file")]
