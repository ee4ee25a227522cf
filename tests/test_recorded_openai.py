"""Real recordings of the OpenAI Responses API: written by openai-agents / openai-python's own
objects against a fake model (tests/recorded/README.md says how), read as a user would see them."""

import json
import os
import re

import orjson
import pytest

from viewer.formats import detect, openai_chat
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT

REC = ROOT / "tests" / "recorded" / "openai-agents"


def events(idx):
    return load_events(idx, "main", 0, len(idx.threads["main"]))


def lines(name):
    return [json.loads(x) for x in (REC / name).read_text().splitlines()]


def page(tmp_path, name):
    app = create_app({"ROOTS": [str(REC)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    home = client.get("/").get_data(as_text=True)
    href = next(h for h in re.findall(r'href="(/s/[^"?]+)"', home) if h.endswith("/" + name.split(".")[0]))
    return client.get(href).get_data(as_text=True)


def test_function_tools_sdk_failures_are_errors(tmp_path):
    doc = json.loads((REC / "agents-function-tools.json").read_text())
    outputs = {i["call_id"]: i["output"] for i in doc if i.get("type") == "function_call_output"}
    failed = {c for c, o in outputs.items() if o.startswith("An error occurred while running the tool")}
    assert len(outputs) == 4 and len(failed) == 2  # the recording: /etc/shadow and Atlantis raised
    idx = SessionIndex(REC / "agents-function-tools.json").build()
    assert detect.detect_file(REC / "agents-function-tools.json").format == "openai-chat"
    assert "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
    assert {c: idx.calls.calls[c].status for c in outputs} == {
        c: "error" if c in failed else "completed" for c in outputs}
    evs = events(idx)
    thinking = [b.text for e in evs for b in e.blocks if b.kind == "thinking"]
    assert thinking == [i["summary"][0]["text"] for i in doc if i.get("type") == "reasoning"]
    assert idx.summary.title == doc[0]["content"]
    html = page(tmp_path, "agents-function-tools")
    assert html.count('<span class="state error">error</span>') >= len(failed)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html


def test_sdk_failure_texts():
    assert openai_chat._sdk_failure("An error occurred while running the tool. Please try again. "
                                    "Error: boom") == "failed"
    assert openai_chat._sdk_failure("Tool 'get_weather' timed out after 5 seconds.") == "failed"
    assert openai_chat._sdk_failure("Tool execution was not approved.") == "denied"
    assert openai_chat._sdk_failure("sunny, 21 °C") is None and openai_chat._sdk_failure(None) is None
    # the same texts as a chat-completions tool message (the Agents SDK's chat model path)
    ev = openai_chat.event({"role": "tool", "tool_call_id": "c1",
                            "content": "Tool execution was not approved."}, Ref("main", 1, 0, 1))
    (result,) = ev.tool_results()
    assert result.is_error and result.state == "denied"


def test_mcp_approval_pairs(tmp_path):
    doc = json.loads((REC / "agents-mcp-approval.json").read_text())
    requests = {i["id"]: i for i in doc if i.get("type") == "mcp_approval_request"}
    answers = {i["approval_request_id"]: i for i in doc if i.get("type") == "mcp_approval_response"}
    assert set(requests) == set(answers) and len(requests) == 2
    idx = SessionIndex(REC / "agents-mcp-approval.json").build()
    assert "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
    for rid, answer in answers.items():
        call = idx.calls.calls[rid]
        # named with its server, as an MCP tool's call is: the card says "MCP deepwiki · ask_question"
        assert call.name == f"mcp__{requests[rid]['server_label']}__{requests[rid]['name']}"
        assert call.state == ("completed" if answer["approve"] else "denied")
    mcp_calls = [i for i in doc if i.get("type") == "mcp_call"]
    for c in mcp_calls:
        assert idx.calls.calls[c["id"]].status == ("error" if c["error"] else "completed")
    (listing,) = [i for i in doc if i.get("type") == "mcp_list_tools"]
    assert idx.calls.calls[listing["id"]].status == "completed"
    html = page(tmp_path, "agents-mcp-approval")
    assert "denied" in html and "deleting is not allowed" in html
    assert "asks to run a tool of MCP server deepwiki" in html
    for tool in listing["tools"]:
        assert f"{tool['name']} — {tool['description']}" in html
    failed = next(c for c in mcp_calls if c["error"])
    assert failed["error"]["message"] in html and "http error 404" in html
    assert '"type": "http_error"' not in html.split('class="raw')[0]  # not shown as raw JSON


@pytest.mark.parametrize("name", ["stream-events.jsonl", "stream-events-mcp.jsonl"])
def test_stream_event_logs(name):
    recs = lines(name)
    assert all(r["type"].startswith("response.") for r in recs)
    found = detect.detect_file(REC / name)
    assert (found.format, found.mode) == ("openai-chat", "jsonl")
    idx = SessionIndex(REC / name).build()
    evs = events(idx)
    assert len(evs) == len(recs) and "unparsed" not in idx.threads["main"].kinds
    done = [r["item"] for r in recs if r["type"] == "response.output_item.done"]
    shown = [e for e in evs if not e.hidden]
    assert len(shown) == len(done)  # one card per finished item; every delta is hidden
    texts = [r["text"] for r in recs if r["type"] == "response.output_text.done"]
    assert texts and [e.text() for e in shown if e.role == "assistant" and e.kind == "message"
                      and not e.tool_uses() and e.blocks[0].kind == "text"] == texts
    assert sum(1 for e in shown for b in e.blocks if b.kind == "thinking") == sum(
        1 for i in done if i["type"] == "reasoning")
    calls = [i for i in done if i["type"] in ("function_call", "mcp_call", "mcp_approval_request")]
    assert set(idx.calls.calls) >= {i.get("call_id") or i["id"] for i in calls}
    completed = [r["response"] for r in recs if r["type"] == "response.completed"]
    assert idx.summary.models == ["gpt-5-mini"]
    assert sum(e.usage["total_tokens"] for e in evs if e.usage) == sum(
        r["usage"]["total_tokens"] for r in completed)


def test_stream_mcp_call_answers_its_approval_request():
    recs = lines("stream-events-mcp.jsonl")
    done = [r["item"] for r in recs if r["type"] == "response.output_item.done"]
    approved = {i["approval_request_id"] for i in done
                if i["type"] == "mcp_call" and i.get("approval_request_id")}
    asked = {i["id"] for i in done if i["type"] == "mcp_approval_request"}
    assert approved and approved < asked
    idx = SessionIndex(REC / "stream-events-mcp.jsonl").build()
    for rid in asked:
        # the client's answer is not in a stream: only a call that ran says it was approved, and
        # one the next response completed without running was refused (the app's on_approval_request
        # answered approve=False)
        assert idx.calls.calls[rid].state == ("completed" if rid in approved else "denied")
    assert idx.summary.errors == 1  # the failed mcp_call; a refusal is not an error


def test_stream_refused_approval_reads_awaiting_until_the_next_response_ends(tmp_path):
    """Tailing the MCP stream: both requests await the app's answer until the next response has
    ended without running the refused one; the refusal is not decided while that response streams."""
    raw = (REC / "stream-events-mcp.jsonl").read_text().splitlines(keepends=True)
    recs = [json.loads(x) for x in raw]
    asked = [r["item"]["id"] for r in recs if r["type"] == "response.output_item.done"
             and r["item"]["type"] == "mcp_approval_request"]
    ends = [i for i, r in enumerate(recs) if r["type"] == "response.completed"]
    starts = [i for i, r in enumerate(recs) if r["type"] == "response.created"]
    assert len(ends) == len(starts) == 2 and len(asked) == 2
    path = tmp_path / "stream.jsonl"
    for cut, states in [(ends[0] + 1, ["awaiting_permission"] * 2),
                        (starts[1] + 1, ["awaiting_permission"] * 2),
                        (ends[1], ["completed", "awaiting_permission"]),
                        (len(raw), ["completed", "denied"])]:
        path.write_text("".join(raw[:cut]))
        idx = SessionIndex(path).build()
        assert [idx.calls.calls[rid].state for rid in asked] == states, cut


def test_stream_failures_are_shown():
    r = Ref("main", 1, 0, 1)
    failed = openai_chat.event({"type": "response.failed", "sequence_number": 9, "response": {
        "id": "resp_1", "model": "gpt-5", "status": "failed", "output": [],
        "error": {"code": "server_error", "message": "The model crashed"}}}, r)
    words = lambda ev: [b.text for b in ev.blocks]  # noqa: E731
    assert not failed.hidden and words(failed) == ["response failed", "server_error: The model crashed"]
    incomplete = openai_chat.event({"type": "response.incomplete", "sequence_number": 3, "response": {
        "id": "resp_2", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}}, r)
    assert not incomplete.hidden and words(incomplete) == ["response incomplete: max_output_tokens"]
    error = openai_chat.event({"type": "error", "sequence_number": 1, "code": "rate_limit_exceeded",
                               "message": "Slow down", "param": None}, r)
    assert not error.hidden and words(error) == ["stream error", "rate_limit_exceeded: Slow down"]
    delta = openai_chat.event({"type": "response.output_text.delta", "sequence_number": 5,
                               "item_id": "m", "output_index": 0, "content_index": 0, "delta": "Hi"}, r)
    assert delta.hidden and openai_chat.sniff(orjson.loads(b'{"type": "response.created", '
                                                           b'"sequence_number": 0, "response": {}}')) == 3


def test_stream_function_calls_answered_by_the_next_response(tmp_path):
    """The raw events hold no client input: the next response's start says the calls were answered
    (the API takes no request after a function call without its output)."""
    recs = lines("stream-events.jsonl")
    calls = [r["item"]["call_id"] for r in recs if r["type"] == "response.output_item.done"
             and r["item"]["type"] == "function_call"]
    starts = [i for i, r in enumerate(recs) if r["type"] == "response.created"]
    assert len(calls) == 3 and len(starts) == 2
    idx = SessionIndex(REC / "stream-events.jsonl").build()
    for cid in calls:
        call = idx.calls.calls[cid]
        assert (call.status, call.is_error, call.result) == ("completed", False, ("main", starts[1]))
        assert not idx.unanswered(call)
    html = page(tmp_path, "stream-events.jsonl")
    assert html.count("Answered, but its output is not in this file") == 3
    assert "never answered" not in html and "waiting for the result" not in html


def test_stream_with_tool_outputs_shows_each_result(tmp_path):
    """A log that keeps the run's tool outputs beside the raw events: each call gets its own."""
    recs = lines("stream-events-items.jsonl")
    outputs = {r["call_id"]: r["output"] for r in recs if r["type"] == "function_call_output"}
    assert len(outputs) == 3
    idx = SessionIndex(REC / "stream-events-items.jsonl").build()
    assert not idx.calls.orphans and "unparsed" not in idx.threads["main"].kinds
    for cid, output in outputs.items():
        failed = output.startswith("An error occurred while running the tool")
        assert idx.calls.calls[cid].status == ("error" if failed else "completed")
    html = page(tmp_path, "stream-events-items.jsonl")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert "Answered, but its output is not in this file" not in html


def test_stream_calls_never_answered(tmp_path):
    """A run stopped (max_turns) after the model asked for tools: no response follows, so its calls
    read as any writer's unanswered calls once the session has ended."""
    recs = lines("stream-events-max-turns.jsonl")
    calls = [r["item"]["call_id"] for r in recs if r["type"] == "response.output_item.done"
             and r["item"]["type"] == "function_call"]
    assert len(calls) == 3 and recs[-1]["type"] == "response.completed"
    ended = tmp_path / "s" / "stream-events-max-turns.jsonl"
    ended.parent.mkdir()
    ended.write_bytes((REC / ended.name).read_bytes())
    os.utime(ended, (1_700_000_000, 1_700_000_000))
    idx = SessionIndex(ended).build()
    assert all(idx.calls.calls[c].status == "pending" and idx.unanswered(idx.calls.calls[c])
               for c in calls)
    # the same calls as a chat-completions list that never got tool messages read the same way
    chat = tmp_path / "s" / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "weather?"}, {
        "role": "assistant", "content": None, "tool_calls": [
            {"id": c, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
            for c in calls]}]))
    os.utime(chat, (1_700_000_000, 1_700_000_000))
    other = SessionIndex(chat).build()
    assert [(c.status, other.unanswered(c)) for c in other.calls.calls.values()] == [
        (idx.calls.calls[c].status, idx.unanswered(idx.calls.calls[c])) for c in calls]
    app = create_app({"ROOTS": [str(ended.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    home = client.get("/").get_data(as_text=True)
    href = next(h for h in re.findall(r'href="(/s/[^"?]+)"', home) if h.endswith("/stream-events-max-turns"))
    html = client.get(href).get_data(as_text=True)
    assert html.count('<span class="state unanswered"') == 3


def test_handoff_and_approval_interruption(tmp_path):
    """A handoff, then a `needs_approval` tool the app approved once and rejected once (the run
    stopped with interruptions and resumed from its RunState)."""
    doc = json.loads((REC / "agents-handoff-approval.json").read_text())
    outputs = {i["call_id"]: i["output"] for i in doc if i.get("type") == "function_call_output"}
    names = {i["call_id"]: i["name"] for i in doc if i.get("type") == "function_call"}
    assert sorted(names.values()) == ["delete_file", "delete_file", "transfer_to_janitor"]
    idx = SessionIndex(REC / "agents-handoff-approval.json").build()
    assert not idx.calls.orphans and "unparsed" not in idx.threads["main"].kinds
    assert {c: idx.calls.calls[c].state for c in outputs} == {
        c: "denied" if o == "Tool execution was not approved." else "completed" for c, o in outputs.items()}
    html = page(tmp_path, "agents-handoff-approval.json")
    assert "denied by user" in html and "Tool execution was not approved." in html
    # a call without arguments has no empty input block
    handoff = next(c for c, n in names.items() if n == "transfer_to_janitor")
    card = html.split(f'id="tc-{handoff}"', 1)[1].split('class="tool-result', 1)[0]
    assert 'class="tool-input"' not in card
    # the handoff's output `{"assistant": "Janitor"}` says what happened in words
    assert "handed off to Janitor" in html and "{&#34;assistant&#34;" not in html
    assert '{&quot;assistant&quot;' not in html and '"assistant": "Janitor"' not in html.split('class="raw')[0]


def test_handoff_names_the_agent_that_speaks_after_it(tmp_path):
    """`to_input_list()` names no agent: only the handoff's output `{"assistant": "Janitor"}` says
    who speaks next. The Janitor's calls and its answer carry its name; what came before the
    handoff (Triage's transfer call, unnamed in the file) stays unnamed."""
    doc = json.loads((REC / "agents-handoff-approval.json").read_text())
    at = next(i for i, r in enumerate(doc) if r.get("output") == '{"assistant": "Janitor"}')
    idx = SessionIndex(REC / "agents-handoff-approval.json").build()
    evs = events(idx)
    spoken = [(i, e.author) for i, e in enumerate(evs) if e.role == "assistant"]
    assert spoken == [(i, "Janitor" if i > at else None) for i, r in enumerate(doc)
                      if r.get("role") == "assistant" or r.get("type") == "function_call"]
    assert [e.author for e in evs if e.role == "assistant"][-3:] == ["Janitor"] * 3
    assert idx.summary.agents == ["Janitor"]
    html = page(tmp_path, "agents-handoff-approval.json")
    final = html.split("I deleted notes.txt", 1)[0].rsplit("<li ", 1)[1]
    assert '<span class="who">Janitor</span>' in final


def test_stream_log_written_live_answers_its_calls_in_place(tmp_path):
    """Live tail of a stream log: the calls' cards turn from waiting to answered when the next
    response starts, without a reload."""
    from test_live_stream import Stream
    from viewer.web.live import cursor_of

    raw = (REC / "stream-events.jsonl").read_text().splitlines(keepends=True)
    recs = [json.loads(x) for x in raw]
    cut = next(i for i, r in enumerate(recs) if r["type"] == "response.completed") + 1
    calls = [r["item"]["call_id"] for r in recs[:cut] if r["type"] == "response.output_item.done"
             and r["item"]["type"] == "function_call"]
    path = tmp_path / "root" / "stream-events.jsonl"
    path.parent.mkdir()
    path.write_text("".join(raw[:cut]))
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    c = app.test_client()
    assert c.get("/s/stream-events").get_data(as_text=True).count("waiting for the result") == 3
    start = cursor_of(app.extensions["viewer"].store.index("stream-events"))
    with open(path, "a") as f:
        f.write("".join(raw[cut:]))
    stream = Stream(c.get(f"/s/stream-events/events?after={start}"))
    data = ""
    while "sunny in Paris" not in data:
        data += stream.next()[0][2]
    stream.close()
    for cid in calls:
        assert f'id="tc-{cid}-state" hx-swap-oob="true"' in data
        assert f'id="tc-{cid}-result" hx-swap-oob="true"' in data
    assert data.count("Answered, but its output is not in this file") == 3
