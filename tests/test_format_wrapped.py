"""Conversations saved inside wrappers (formats/wrapped.py): fine-tuning and eval datasets, ShareGPT,
OpenAI and Anthropic batch files, request/response logs (a proxy's pair, LiteLLM's payloads,
claude-trace's log). Each reads as its messages' format, one section per conversation, the
growing history of an API log shown once. Fixtures: test_data/formats/{openai-chat,
anthropic-messages}/ (their README says where each shape comes from)."""

import json
import os

from click.testing import CliRunner

from viewer import outline
from viewer.cli import main
from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.timeline import load_events, raw_record
from viewer.web import create_app

from conftest import ROOT, back_and_forth_lines, notices, quiet_copy

OPENAI = ROOT / "test_data" / "formats" / "openai-chat"
ANTHROPIC = ROOT / "test_data" / "formats" / "anthropic-messages"
TRACE = ANTHROPIC / "claude-trace" / "log-2025-11-25-06-00-00.jsonl"


def read(path, tmp_path):
    """The index and every event of a finished copy of one fixture file."""
    copy = quiet_copy(path.parent, tmp_path / path.parent.name) / path.name
    idx = SessionIndex(copy).build()
    return idx, load_events(idx, "main", 0, len(idx.threads["main"]))


def texts(evs, role=None, kind="message"):
    return [e.text() for e in evs if (role is None or e.role == role) and e.kind == kind]


def sections(evs):
    return [(e.id, notices(e)[0]) for e in evs if e.kind == "section"]


def test_a_fine_tuning_file_reads_one_section_per_line_with_its_calls_paired(tmp_path):
    path = OPENAI / "finetune-dataset" / "finetune.jsonl"
    assert detect.detect_file(path) == detect.Detected("openai-chat", "document")
    idx, evs = read(path, tmp_path)
    assert idx.summary.title == "What's the capital of France?"
    assert sections(evs) == [("L1", "Conversation 1 · line 1"), ("L5", "Conversation 2 · line 2"),
                             ("L10", "Conversation 3 · line 3")]
    assert texts(evs, "assistant") == ["Paris, as if everyone doesn't know that already.", "",
                                       "It is 18 °C in San Francisco.", "", "Oslo: -3 °C."]
    # both lines call their tool `call_id`: each result goes with its own line's call
    assert idx.calls.by_state()["completed"] == 2 and not idx.calls.orphans
    results = [b for e in evs for b in e.tool_results()]
    assert [r.content[0].text for r in results] == ['{"temperature": 18, "unit": "C"}',
                                                    '{"temperature": -3, "unit": "C"}']
    assert len({r.tool_use_id for r in results}) == 2
    # the tool definitions are folded on the section; the line's other keys beside them
    second = next(e for e in evs if e.id == "L5")
    assert [(b.kind, b.label) for b in second.blocks[1:]] == [("data", "tool definitions (1)"),
                                                              ("data", "details")]
    assert second.blocks[2].value == {"parallel_tool_calls": False}
    # the outline has a turn for each conversation, named by its heading, and its prompts
    assert [t.text for t in outline.turns(idx)] == [
        "Conversation 1 · line 1", "What's the capital of France?", "Conversation 2 · line 2",
        "What is the weather in San Francisco?", "Conversation 3 · line 3", "And in Oslo?"]
    # the raw view shows a message as the line holds it
    assert json.loads(raw_record(idx, "L4")[0]) == {
        "role": "assistant", "content": "Paris, as if everyone doesn't know that already."}


def test_preference_and_eval_lines_say_which_output_is_which(tmp_path):
    _, evs = read(OPENAI / "finetune-dataset" / "preference.jsonl", tmp_path / "p")
    answers = [e for e in evs if e.role == "assistant"]
    assert [notices(e) for e in answers] == [["preferred output"], ["non-preferred output"]]
    assert answers[1].text() == "It is not particularly cold in San Francisco today."
    _, evs = read(OPENAI / "finetune-dataset" / "evals.jsonl", tmp_path / "e")
    heads = [e for e in evs if e.kind == "section"]
    assert [h.blocks[-1].value for h in heads] == [{"ideal": "Tokyo"}, {"ideal": ["Lima"]}]
    assert texts(evs, "user") == ["Capital of Japan?", "Capital of Peru?"]
    _, evs = read(OPENAI / "finetune-dataset" / "trl_preference.jsonl", tmp_path / "t")
    assert [(e.role, notices(e), e.text()) for e in evs if e.kind == "message"] == [
        ("user", [], "What color is the sky?"), ("assistant", ["chosen"], "It is blue."),
        ("assistant", ["rejected"], "It is green."), ("user", ["chosen"], "Name a prime."),
        ("assistant", ["chosen"], "7"), ("user", ["rejected"], "Name a prime."),
        ("assistant", ["rejected"], "8")]


def test_sharegpt_turns_read_as_messages_and_function_calls_pair(tmp_path):
    path = OPENAI / "sharegpt" / "sharegpt.json"
    idx, evs = read(path, tmp_path)
    assert idx.threads["main"].format == "openai-chat"
    assert sections(evs) == [("conv-1", "Conversation 1 · conv-1 · item 1"),
                             ("conv-2", "Conversation 2 · conv-2 · item 2"),
                             ("conv-3", "Conversation 3 · conv-3 · item 3")]
    assert [(e.role, e.text()) for e in evs if e.kind == "message"] == [
        ("user", "Summarise the plot of Hamlet in one sentence."),
        ("assistant", "A Danish prince avenges his father's murder and nearly everyone dies."),
        ("system", "You can call tools."), ("user", "What is 17 * 23?"), ("assistant", ""),
        ("assistant", "17 × 23 = 391."), ("user", "Is 2 + 2 = 4?"), ("assistant", "Yes."),
        ("assistant", "No, it is 5.")]
    # a preference item's chosen and rejected answers say which is which
    assert [notices(e) for e in evs[-2:]] == [["chosen"], ["rejected"]]
    (call,) = idx.calls.calls.values()
    assert (call.name, call.status) == ("calculator", "completed")
    use = next(b for e in evs for b in e.tool_uses())
    assert use.input == {"expr": "17 * 23"}
    # the tools LLaMA-Factory keeps as JSON text are shown as the list they are
    assert next(e for e in evs if e.id == "conv-2").blocks[1].value[0]["name"] == "calculator"
    # the raw view shows the turn as written
    turn = next(e for e in evs if e.role == "tool")
    assert json.loads(raw_record(idx, turn.id)[0]) == {"from": "observation", "value": '{"result": 391}'}


def test_openai_batch_files_read_each_request_and_result_by_its_custom_id(tmp_path):
    idx, evs = read(OPENAI / "batch-api" / "batch_input.jsonl", tmp_path / "in")
    assert sections(evs) == [("request-1", "Request request-1 · line 1"),
                             ("request-2", "Request request-2 · line 2")]
    assert next(e for e in evs if e.id == "request-1").blocks[-1].value["model"] == "gpt-4o-mini"
    assert texts(evs, "system") == ["You are a helpful assistant.", "You are an unhelpful assistant."]

    idx, evs = read(OPENAI / "batch-api" / "batch_output.jsonl", tmp_path / "out")
    assert [s[1] for s in sections(evs)] == ["Result request-2 · line 1", "Result request-1 · line 2",
                                             "Result request-3 · line 3"]
    reply = next(e for e in evs if e.role == "assistant")
    assert (reply.id, reply.text(), reply.model) == ("chatcmpl-123", "Hello. Leave me alone.",
                                                     "gpt-4o-mini-2024-07-18")
    assert reply.usage["prompt_tokens"] == 22 and idx.summary.usage["cost"] > 0
    errors = [e for e in evs if e.role == "error"]
    assert [(notices(e)[0], e.text()) for e in errors] == [
        ("request failed (400)", "invalid_request_error context_length_exceeded: "
                                 "This model's maximum context length is 128000 tokens."),
        ("request failed", "batch_expired: This request could not be executed before the "
                           "completion window expired.")]
    assert idx.summary.errors == 2


def test_anthropic_message_batches_read_requests_results_and_their_outcomes(tmp_path):
    idx, evs = read(ANTHROPIC / "message-batches" / "requests.jsonl", tmp_path / "in")
    assert idx.threads["main"].format == "anthropic-messages"
    assert [s[0] for s in sections(evs)] == ["my-first-request", "my-second-request"]
    assert [(e.role, e.text()) for e in evs if e.kind == "message"] == [
        ("user", "Hello, world"), ("system", "Answer in French."), ("user", "Hi again, friend")]

    idx, evs = read(ANTHROPIC / "message-batches" / "results.jsonl", tmp_path / "out")
    reply = next(e for e in evs if e.role == "assistant")
    assert (reply.id, reply.model, reply.usage) == (
        "msg_014VwiXbi91y3JMjcpyGBHX5", "claude-sonnet-4-5-20250929",
        {"input_tokens": 11, "output_tokens": 36})
    (error,) = [e for e in evs if e.role == "error"]
    assert error.text() == "invalid_request_error: max_tokens: 100000 > 64000, which is the maximum allowed"
    assert [notices(e) for e in evs if e.kind == "notice"] == [["request canceled"], ["request expired"]]
    assert idx.summary.errors == 1


def test_a_request_response_pair_reads_as_the_prompt_and_the_answer(tmp_path):
    idx, evs = read(OPENAI / "request-response" / "request_response.json", tmp_path)
    assert idx.summary.title == "List the files here."
    (head,) = [e for e in evs if e.kind == "section"]
    assert notices(head) == ["Conversation 1 · API call 1"]
    assert head.blocks[1].label == "tool definitions (1)"
    reply = evs[-1]
    assert (reply.role, reply.id, reply.model) == ("assistant", "chatcmpl-AB1", "gpt-4o-2024-08-06")
    assert [b.name for b in reply.tool_uses()] == ["shell"]
    assert reply.usage["completion_tokens"] == 14


def test_a_litellm_log_shows_the_history_once_with_cost_duration_and_the_failed_call(tmp_path):
    idx, evs = read(OPENAI / "request-response" / "litellm_payloads.jsonl", tmp_path)
    # three calls, each sending the whole history: every message is shown once
    assert [(e.role, e.text()) for e in evs if e.kind in ("message", "tool_result")] == [
        ("system", "You are a coding assistant."), ("user", "How many lines does main.py have?"),
        ("assistant", ""), ("tool", ""), ("assistant", "main.py has 42 lines."),
        ("user", "Thanks. Now count tests/.")]
    assert len(sections(evs)) == 1
    replies = [e for e in evs if e.role == "assistant"]
    assert [notices(e) for e in replies] == [["API call 1 · 1.2 s"], ["API call 2 · 1.2 s"]]
    assert [e.usage["cost"] for e in replies] == [0.00038, 0.000365]
    assert idx.summary.usage["cost"] == 0.000745
    assert idx.calls.by_state()["completed"] == 1
    (error,) = [e for e in evs if e.role == "error"]
    assert notices(error) == ["API call 3 failed"]
    assert "Rate limit reached for gpt-4o" in error.text()


def test_a_claude_trace_log_reads_as_the_conversation_once(tmp_path):
    assert detect.detect_file(TRACE) == detect.Detected("anthropic-messages", "document")
    idx, evs = read(TRACE, tmp_path)
    # the quota probe is its own section and never the title
    assert idx.summary.title == "Which Python version is installed?"
    assert [s[1] for s in sections(evs)] == ["Conversation 1 · API call 1 · line 1",
                                            "Conversation 2 · API call 2 · line 2"]
    probe = evs[1]
    assert (probe.kind, notices(probe)) == ("probe", ["a probe call (max_tokens 1)"])
    # the prompt is sent again with every call (its cache mark moving): shown once
    assert texts(evs, "user") == ["Which Python version is installed?", "And pip?"]
    assert texts(evs, "system") == ["You are Claude Code, Anthropic's official CLI for Claude."]
    replies = [e for e in evs if e.role == "assistant"]
    assert [notices(e) for e in replies] == [["API call 1 · 0.4 s", "cut off: the reply reached its max_tokens limit"],
                                             ["API call 2 · 2.2 s"], ["API call 3 · 2.5 s"]]
    # the streamed answer put back together from its events: thinking, text, final usage
    streamed = replies[2]
    assert [b.kind for b in streamed.blocks] == ["notice", "thinking", "text"]
    assert streamed.text() == "Python 3.12.3 is installed."
    assert streamed.usage["output_tokens"] == 24 and streamed.usage["cache_read_input_tokens"] == 2100
    (call,) = idx.calls.calls.values()
    assert (call.name, call.status, round(call.duration, 2)) == ("Bash", "completed", 0.85)
    # the overloaded call is an error, the call with no response a notice
    (error,) = [e for e in evs if e.role == "error"]
    assert (notices(error), error.text()) == (["API call 4 failed (529)"], "overloaded_error: Overloaded")
    assert notices(evs[-1]) == ["API call 5: ORPHANED_REQUEST - No matching response received"]
    assert idx.summary.models == ["claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"]
    assert idx.summary.errors == 1 and idx.summary.usage["cost"] > 0


def test_a_growing_log_keeps_its_ids(tmp_path):
    lines = TRACE.read_text().splitlines()
    folder = tmp_path / "trace"
    folder.mkdir()
    log = folder / TRACE.name
    log.write_text("\n".join(lines[:3]) + "\n")
    first = SessionIndex(log).build()
    before = list(first.threads["main"].ids)
    log.write_text("\n".join(lines) + "\n")
    after = SessionIndex(log).build().threads["main"].ids
    assert after[:len(before)] == before and len(after) > len(before)


def test_plain_message_files_are_read_as_before(tmp_path):
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(m) + "\n" for m in msgs))
    assert detect.detect_file(tmp_path / "m.jsonl") == detect.Detected("openai-chat", "jsonl")
    (tmp_path / "d.json").write_text(json.dumps({"messages": msgs}))
    idx = SessionIndex(tmp_path / "d.json").build()
    assert idx.threads["main"].kinds == ["message", "message"]


def test_check_reports_a_dataset_and_hostile_wrapper_fields_stay_inert(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    evil = '<img src=x onerror="alert(1)">'
    lines = [{"custom_id": evil, "method": "POST", "url": "/v1/chat/completions",
              "body": {"model": evil, "messages": [{"role": "user", "content": evil}]}},
             {"custom_id": "ok-1", "method": "POST", "url": "/v1/chat/completions",
              "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": "fine"}]}}]
    (folder / "batch.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = CliRunner().invoke(main, ["check", str(folder / "batch.jsonl"), "--json"])
    data = json.loads(r.output)
    assert (data["format"], data["events"], data["unparsed"]) == ("openai-chat", 4, [])
    app = create_app({"ROOTS": [str(folder)], "CACHE_DIR": str(tmp_path / "cache")})
    html = app.test_client().get("/s/batch").get_data(as_text=True)
    assert "Request ok-1" in html and 'id="m-ok-1"' in html
    # the custom_id is no id (not one an id may be), and shown as text, never as markup
    assert evil not in html and "<img src=x" not in html
    assert "Request &lt;img src=x onerror=" in html


def test_nothing_of_a_batch_file_is_lost(tmp_path):
    lines = (OPENAI / "batch-api" / "batch_input.jsonl").read_text().splitlines()
    # written without a final newline: the last request is read all the same
    (tmp_path / "a.jsonl").write_text("\n".join(lines))
    idx = SessionIndex(tmp_path / "a.jsonl").build()
    assert [e.id for e in load_events(idx, "main", 0, 99) if e.kind == "section"] == ["request-1", "request-2"]
    # a line of no known shape is a card of its own; a last line cut off (its writer stopped long
    # ago) is an unparsed line that says where it is in the file
    (tmp_path / "b.jsonl").write_text(lines[0] + '\n{"note": "kept"}\n' + lines[1] + '\n{"custom_id": "r9", "bo')
    old = (tmp_path / "b.jsonl").stat().st_mtime - 3600
    os.utime(tmp_path / "b.jsonl", (old, old))
    evs = load_events(idx := SessionIndex(tmp_path / "b.jsonl").build(), "main", 0, 99)
    assert [e.kind for e in evs] == ["section", "message", "message", "unknown", "section", "message",
                                     "message", "unparsed"]
    assert "line 4 of the file: malformed JSON" in evs[-1].blocks[0].reason
    assert json.loads(raw_record(idx, evs[3].id)[0]) == {"note": "kept"}


def test_a_proxy_log_of_streamed_openai_calls_reads_the_answers_put_back_together(tmp_path):
    def chunks(*deltas, usage=None):
        out = [{"id": "chatcmpl-S", "object": "chat.completion.chunk", "model": "gpt-4.1-2025-04-14",
                "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        if usage:
            out.append({"id": "chatcmpl-S", "object": "chat.completion.chunk", "choices": [], "usage": usage})
        return "".join(f"data: {json.dumps(c)}\n\n" for c in out) + "data: [DONE]\n\n"

    ask = {"role": "user", "content": "Read setup.cfg"}
    call = {"id": "call_9", "type": "function", "function": {"name": "read", "arguments": '{"path": "setup.cfg"}'}}
    first = chunks({"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call, "function": {
        "name": "read", "arguments": ""}}]}, {"tool_calls": [{"index": 0, "function": {"arguments": '{"path": '}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '"setup.cfg"}'}}]},
        usage={"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42})
    second = chunks({"role": "assistant", "content": "It sets "}, {"content": "flake8 options."})
    url = "https://api.openai.com/v1/chat/completions"
    lines = [{"request": {"timestamp": 1764050400, "method": "POST", "url": url, "body": {
                 "model": "gpt-4.1", "stream": True, "messages": [ask]}},
              "response": {"timestamp": 1764050401, "status_code": 200, "body_raw": first}},
             {"request": {"timestamp": 1764050402, "method": "POST", "url": url, "body": {
                 "model": "gpt-4.1", "stream": True, "messages": [
                     ask, {"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": "call_9", "content": "[flake8]\nmax-line-length = 100"}]}},
              "response": {"timestamp": 1764050403.5, "status_code": 200, "body_raw": second}}]
    (tmp_path / "proxy.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert detect.detect_file(tmp_path / "proxy.jsonl") == detect.Detected("openai-chat", "document")
    idx = SessionIndex(tmp_path / "proxy.jsonl").build()
    evs = load_events(idx, "main", 0, 99)
    assert [(e.role, e.kind) for e in evs] == [("system", "section"), ("user", "message"),
                                               ("assistant", "message"), ("tool", "tool_result"),
                                               ("assistant", "message")]
    (use,) = evs[2].tool_uses()
    assert (use.id, use.name, use.input) == ("call_9", "read", {"path": "setup.cfg"})
    assert evs[2].usage["completion_tokens"] == 12 and evs[2].model == "gpt-4.1-2025-04-14"
    assert evs[4].text() == "It sets flake8 options." and notices(evs[4]) == ["API call 2 · 1.5 s"]
    assert idx.calls.calls["call_9"].status == "completed"


def test_a_call_going_back_to_an_earlier_conversation_pairs_its_results_and_says_so_once(tmp_path):
    lines = back_and_forth_lines()[:4]  # (the fifth starts a conversation of its own)
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = SessionIndex(tmp_path / "log.jsonl").build()
    evs = load_events(idx, "main", 0, 99)
    # the result after the probe is the first call's: paired with it, under its own id
    assert idx.calls.by_state()["completed"] == 1 and not idx.calls.orphans
    assert [b.tool_use_id for e in evs for b in e.tool_results()] == ["toolu_1"]
    # the return to conversation 1 is said once, not again with every later call
    assert [notices(e)[0] for e in evs if e.kind == "notice"] == [
        "API call 3 goes on with conversation 1 (line 3)"]
    assert texts(evs, "user") == ["Run ls", "Thanks"]


def test_a_call_card_shows_neither_the_request_headers_nor_the_response(tmp_path):
    # a proxy's record of a call without a body: its auth header stays out of the card
    lines = [{"request": {"timestamp": 1764050400, "method": "GET", "url": "https://api.openai.com/v1/models",
                          "headers": {"authorization": "Bearer sk-secret"}},
              "response": {"timestamp": 1764050401, "status_code": 200, "body": {"object": "list"}}}]
    (tmp_path / "proxy.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    head = load_events(SessionIndex(tmp_path / "proxy.jsonl").build(), "main", 0, 1)[0]
    assert head.kind == "section"
    assert head.blocks[1].value == {"request.timestamp": 1764050400, "request.method": "GET",
                                    "request.url": "https://api.openai.com/v1/models"}
    # LiteLLM keeps the call's settings beside its messages and response: the response is the
    # answer, not a detail of the card
    _, evs = read(OPENAI / "request-response" / "litellm_payloads.jsonl", tmp_path / "l")
    details = evs[0].blocks[-1].value
    assert details["response_cost"] == 0.00038 and "response" not in details


def test_a_request_body_kept_as_text_reads_like_a_line_however_deep(tmp_path):
    # a proxy that could not parse the body keeps it as JSON text: read once, nested no deeper
    # than any record (a value 400 levels down made the whole call one unknown card)
    deep = "x"
    for _ in range(400):
        deep = [deep]
    body = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok", "extra": deep}]}
    line = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                        "body": json.dumps(body)},
            "response": {"status_code": 200, "body": {"choices": [
                {"message": {"role": "assistant", "content": "done"}}]}}}
    (tmp_path / "p.jsonl").write_text(json.dumps(line) + "\n")
    idx = SessionIndex(tmp_path / "p.jsonl").build()
    evs = load_events(idx, "main", 0, 99)
    assert [(e.kind, e.role) for e in evs] == [("section", "system"), ("message", "user"),
                                               ("message", "assistant"), ("tool_result", "tool"),
                                               ("message", "assistant")]
    assert idx.calls.by_state()["completed"] == 1 and evs[-1].text() == "done"


def test_a_huge_last_line_without_its_newline_is_read_when_whole(tmp_path):
    from viewer import reader
    lines = (OPENAI / "batch-api" / "batch_input.jsonl").read_text().splitlines()
    big = {"custom_id": "request-big", "method": "POST", "url": "/v1/chat/completions",
           "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": "y" * reader.HUGE_LINE}]}}
    (tmp_path / "a.jsonl").write_text(lines[0] + "\n" + json.dumps(big))
    evs = load_events(SessionIndex(tmp_path / "a.jsonl").build(), "main", 0, 99)
    assert [e.id for e in evs if e.kind == "section"] == ["request-1", "request-big"]
    assert evs[-1].role == "user" and evs[-1].text().startswith("yyyy")


def test_a_last_line_its_writer_left_unfinished_is_shown_cut_once_the_grace_is_over(tmp_path, monkeypatch):
    # the log's last line, cut while the writer was at it, waits for its end; the writer dies:
    # the file never changes again, and the index built meanwhile (cached, or the server's) kept
    # waiting for ever — the cut line never showed. It waits as a JSONL file's last line does
    from viewer import index as index_mod

    lines = (OPENAI / "batch-api" / "batch_input.jsonl").read_text().splitlines()
    (tmp_path / "a.jsonl").write_text(lines[0] + '\n{"custom_id": "r9", "bo')
    idx = SessionIndex(tmp_path / "a.jsonl").build()
    assert [e.kind for e in load_events(idx, "main", 0, 99)] == ["section", "message", "message"]
    assert index_mod.identity_matches(idx.files())
    monkeypatch.setattr(index_mod, "TRUNCATED_GRACE", -1)  # …and now the grace is over
    assert not index_mod.identity_matches(idx.files())  # a cached index is built again
    assert idx.refresh()
    evs = load_events(idx, "main", 0, 99)
    assert [e.kind for e in evs] == ["section", "message", "message", "unparsed"]
    assert "line 2 of the file" in evs[-1].blocks[0].reason


def test_responses_logged_without_their_requests_read_as_the_models_turns(tmp_path):
    # a log of `Response` objects, one per line (test_data/formats/openai-chat/saved-responses, the
    # shapes of openai-python types/responses/response.py 001707b8): read as unknown before
    path = OPENAI / "saved-responses" / "responses.jsonl"
    assert detect.detect_file(path).format == "openai-chat"
    idx, evs = read(path, tmp_path)
    assert [e.role for e in evs] == ["system", "system", "assistant", "assistant", "error"]
    assert evs[0].blocks[0].text == "API responses, kept without their requests · line 1"
    assert evs[1].text() == "You fix bugs in the user's repository. Be brief."  # shown once
    first, cut, failed = evs[2:]
    assert [b.kind for b in first.blocks] == ["notice", "thinking", "tool_use"]
    assert first.blocks[0].text == "response 1" and first.model == "gpt-5-2025-08-07"
    assert first.usage["output_tokens"] == 96 and first.source_id == "resp_01fix"
    # the next response could only be asked for with the call's output: answered, output unseen
    call = idx.calls.calls["call_read_utils"]
    assert call.status == "completed" and call.result == ("main", 3)
    assert [b.text for b in cut.blocks if b.kind in ("text", "notice")] == [
        "response 2",
        "The date parser compares a naive datetime with an aware one; the fix is to",
        "response incomplete: max_output_tokens"]
    assert [b.text for b in failed.blocks] == [
        "response 3 failed", "server_error: The server had an error while processing your request."]
    assert idx.summary.models == ["gpt-5-2025-08-07"]

    completions, evs = read(OPENAI / "saved-responses" / "completions.jsonl", tmp_path / "c")
    assert [e.role for e in evs] == ["system", "assistant", "assistant"]
    assert [b.kind for b in evs[1].blocks] == ["notice", "tool_use"]
    assert completions.calls.calls["call_grep"].status == "completed"
    assert evs[2].text() == "`parse_date` is defined in utils.py and called from two tests."
    # the last response's call has nothing after it to say it was answered: never answered
    (only,) = [r for r in [json.loads(line) for line in path.read_text().splitlines()][:1]]
    cut_short = tmp_path / "short" / "responses.jsonl"
    cut_short.parent.mkdir()
    cut_short.write_text(json.dumps(only) + "\n", encoding="utf-8")
    os.utime(cut_short, (1, 1))  # long quiet: the session has ended
    short = SessionIndex(cut_short).build()
    call = short.calls.calls["call_read_utils"]
    assert call.status == "pending" and short.unanswered(call)


def test_a_saved_responses_call_is_timed_from_its_response_to_the_next_request(tmp_path):
    # a Response is timed when it completed; the call it made ran until the client sent its
    # output with the next request, which the next Response was created at — not until that
    # response completed (the model's time on it is no part of the call's)
    def response(rid, created, completed, output):
        return {"id": rid, "object": "response", "created_at": created, "completed_at": completed,
                "status": "completed", "model": "gpt-5", "output": output}

    call = {"type": "function_call", "id": "fc_1", "call_id": "call_ls", "name": "ls", "arguments": "{}"}
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two files."}]}
    lines = [response("resp_1", 1764060000, 1764060004, [call]),
             response("resp_2", 1764060010, 1764060018, [said])]
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = SessionIndex(tmp_path / "responses.jsonl").build()
    ls = idx.calls.calls["call_ls"]
    assert ls.status == "completed" and ls.duration == 6.0  # (14.0 when it ran to the completion)
    evs = load_events(idx, "main", 0, 99)
    assert notices(evs[-1]) == ["response 2 · 8.0 s"]


def test_a_claude_trace_log_whose_first_call_is_longer_than_detections_head_reads_as_the_log(tmp_path):
    # the first call of a log sends the system prompt and the tools: past the 256 KB detection
    # looks at first, detection reads on to the line's end (and says the file is an API log); the
    # reading must too, or the whole log was one unparsed card
    lines = TRACE.read_text().splitlines()
    first = json.loads(lines[0])
    first["request"]["body"]["system"] = "You are Claude Code. " + "Be brief. " * 30000
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(first) + "\n" + "\n".join(lines[1:]) + "\n")
    assert detect.detect_file(log) == detect.Detected("anthropic-messages", "document")
    idx = SessionIndex(log).build()
    assert idx.summary.unparsed == 0 and idx.summary.title == "Which Python version is installed?"
    evs = load_events(idx, "main", 0, 99)
    assert [s[1] for s in sections(evs)] == ["Conversation 1 · API call 1 · line 1",
                                            "Conversation 2 · API call 2 · line 2"]


def test_a_batch_result_of_a_type_not_known_shows_its_message(tmp_path):
    # an Anthropic batch result of a type other than succeeded / errored / canceled / expired
    # that holds a message: it was one notice 'request <type>', the model's answer dropped —
    # found by the fuzzer
    src = ROOT / "test_data/formats/anthropic-messages/message-batches/results.jsonl"
    lines = src.read_text().splitlines()
    first = json.loads(lines[0])
    first["result"]["type"] = "succeeded_with_warnings"
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    idx = SessionIndex(path).build()
    texts = json.dumps([e.blocks.__repr__() for e in load_events(idx, "main", 0, len(idx.threads["main"]))])
    assert "request succeeded_with_warnings" in texts and "Bonjour" in texts


def test_a_preference_lines_prompt_with_an_item_of_a_type_not_known_first_keeps_its_prompt(tmp_path):
    # a TRL preference line whose `prompt` begins with an item of a type not known here (no role):
    # the whole prompt was dropped, the user's question with it — found by the fuzzer
    path = tmp_path / "prefs.jsonl"
    path.write_text(json.dumps({"prompt": [{"type": "context_note", "text": "from the style guide"},
                                           {"role": "user", "content": "What color is the sky?"}],
                                "chosen": [{"role": "assistant", "content": "It is blue."}],
                                "rejected": [{"role": "assistant", "content": "It is green."}]}) + "\n")
    idx = SessionIndex(path).build()
    texts = json.dumps([e.blocks.__repr__() for e in load_events(idx, "main", 0, len(idx.threads["main"]))])
    assert "What color is the sky?" in texts and "from the style guide" in texts and "It is blue." in texts


def _proxy_call(url, started, messages, body):
    return {"request": {"timestamp": started, "method": "POST", "url": url,
                        "body": {"model": body["model"], "messages": messages}},
            "response": {"timestamp": started + 1, "status_code": 200, "body": body}}


# one proxy's log: an OpenAI agent's two calls, then Claude's two (the fuzzer mutates it as a seed)
_ask = {"role": "user", "content": "List files"}
_ls = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_ls", "type": "function", "function": {"name": "shell", "arguments": '{"cmd": "ls"}'}}]}
_listed = {"role": "tool", "tool_call_id": "call_ls", "content": "a.py"}
_chat = "https://api.openai.com/v1/chat/completions"
OPENAI_CALLS = [
    _proxy_call(_chat, 1764050390, [_ask], {"id": "chatcmpl-2", "object": "chat.completion", "model": "gpt-4o",
                                            "choices": [{"index": 0, "message": _ls, "finish_reason": "tool_calls"}]}),
    _proxy_call(_chat, 1764050392, [_ask, _ls, _listed], {
        "id": "chatcmpl-3", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "a.py"}, "finish_reason": "stop"}]})]
_which = {"role": "user", "content": [{"type": "text", "text": "Which Python is installed?"}]}
_use = [{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "python3 -V"}}]
_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "Python 3.12.3"}]}
_claude = "https://api.anthropic.com/v1/messages"
ANTHROPIC_CALLS = [
    _proxy_call(_claude, 1764050402, [_which], {"id": "msg_1", "type": "message", "role": "assistant",
                                                "model": "claude-sonnet-4-5", "content": _use, "stop_reason": "tool_use"}),
    _proxy_call(_claude, 1764050404, [_which, {"role": "assistant", "content": _use}, _result], {
        "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Python 3.12.3."}], "stop_reason": "end_turn"})]
MIXED_PROXY_LOG = OPENAI_CALLS + ANTHROPIC_CALLS


def test_a_log_of_anthropic_and_openai_calls_pairs_each_apis_calls_with_their_results(tmp_path):
    # one proxy's log: an OpenAI agent's two calls, then Claude's two (and, read the other way,
    # claude-trace's own log with the OpenAI calls after it): each API's tool call is a call card
    # paired with its result, whichever API the file is read as
    mixed = tmp_path / "mixed" / "proxy.jsonl"
    mixed.parent.mkdir()
    mixed.write_text("".join(json.dumps(x) + "\n" for x in MIXED_PROXY_LOG))
    traced = tmp_path / "traced" / "log.jsonl"
    traced.parent.mkdir()
    traced.write_text(TRACE.read_text() + "".join(json.dumps(x) + "\n" for x in OPENAI_CALLS))
    for path, fmt in ((mixed, "openai-chat"), (traced, "anthropic-messages")):
        os.utime(path, (1_700_000_000, 1_700_000_000))
        assert detect.detect_file(path).format == fmt
        idx = SessionIndex(path).build()
        evs = load_events(idx, "main", 0, len(idx.threads["main"]))
        assert not [b for e in evs if e.role == "assistant" for b in e.blocks if b.kind == "data"]
        calls = {cid: (c.name, c.status) for cid, c in idx.calls.calls.items()}
        assert calls["call_ls"] == ("shell", "completed")
        want = ("toolu_01", "Bash") if path == mixed else ("toolu_01A", "Bash")
        assert calls[want[0]] == (want[1], "completed")
        assert not idx.calls.orphans
