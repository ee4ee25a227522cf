"""agentpress rows as Suna's newest writers save them (no real export is public; the fixtures are
built from the writer code, row by row):

* `rows-xml-ids/` — kortix-ai/suna backend/core/agentpress/response_processor.py (commit 1da6622b)
  with XML tool calling: every call gets an id from xml_tool_parser.parse_xml_tool_calls_with_ids
  (`xml_tool_index<N>_<assistant message id>`, or a uuid in place of the id when the call was parsed
  before the assistant row existed), listed in the assistant row's `metadata.tool_calls`
  (`source: "xml"`) and repeated in the tool row's `metadata.tool_call_id`; the tool row is
  `{role: user, content: <output>}` with `metadata.result {success, output, error}`, `return_format:
  "xml"`; `tool_error` status rows carry `error`, an `error` status row `{status_type, error}`.
* `rows-xml-nonstream/` — the same file's process_non_streaming_response: the XML calls are parsed
  before the assistant row exists (`xml_tool_index<N>_<uuid4>`) and, having ids, are left out of
  the row's `metadata.tool_calls`, so the row keeps none; each tool row names its random id and
  the assistant row (`assistant_message_id`), the status rows the same id and the call's
  `tool_index`.
* `rows-stateless/` — backend/core/agents/pipeline/stateless/coordinator/message_builder.py (commit
  106d6cd9) and tool_executor.py (commit 4396eeda): `content` / `metadata` as JSON strings, the
  assistant row's thinking in `metadata.reasoning_content`, `reasoning` rows streamed as
  `reasoning_chunk`, native tool rows whose failure is only in `metadata.result.error` (content ""),
  an `image_context` row (a user message with the screenshot) and `terminating_tool_completed`.
"""

import json
import re

import pytest

from viewer.formats import agentpress, detect
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT

FIXTURES = ROOT / "test_data" / "formats" / "agentpress"
XML = FIXTURES / "rows-xml-ids" / "messages.jsonl"
STATELESS = FIXTURES / "rows-stateless" / "messages.jsonl"
NONSTREAM = FIXTURES / "rows-xml-nonstream" / "messages.jsonl"
R = Ref("main", 1, 0, 1)


def by_id(path):
    idx = SessionIndex(path).build()
    return idx, {e.id: e for e in load_events(idx, "main", 0, len(idx.threads["main"]))}


def page(path, tmp_path):
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    return client.get(link).get_data(as_text=True)


def test_xml_calls_take_the_ids_the_row_recorded_and_pair_with_their_results():
    assert detect.detect_file(XML) == detect.Detected("agentpress", "jsonl")
    idx, evs = by_id(XML)
    first = "xml_tool_index0_5d2f8c1e-7a3b-4c9d-8e1f-2a3b4c5d6e7f"
    assert [u.id for u in evs["x-05-assistant"].tool_uses()] == [
        first, "xml_tool_index1_x-05-assistant", "xml_tool_index2_x-05-assistant"]
    assert [u.input for u in evs["x-05-assistant"].tool_uses()][:2] == [
        {"file_path": "notes.md", "file_contents": "# Notes"}, {"query": "kortix suna release"}]
    assert {k: (c.name, c.status) for k, c in idx.calls.calls.items()} == {
        first: ("create_file", "completed"),
        "xml_tool_index1_x-05-assistant": ("web_search", "error"),  # result.success false
        "xml_tool_index2_x-05-assistant": ("scrape_webpage", "error")}  # tool_error, no result row
    assert not idx.calls.orphans
    assert evs["x-04-started-0"].running == [first]  # the started row names the same id
    assert evs["x-06-tool-0"].tool_results()[0].content[0].text == "File 'notes.md' created successfully."
    tool_error = evs["x-12-error-2"]  # the tool raised: no result row, this is the only reason
    assert not tool_error.hidden and tool_error.role == "status"
    assert tool_error.blocks[0].text == "scrape_webpage error: Sandbox connection lost"
    assert evs["x-10-failed-1"].hidden  # a failure its result row already shows


def test_an_error_status_row_shows_its_error():
    _, evs = by_id(XML)
    err = evs["x-14-error"]
    assert err.role == "error" and not err.hidden
    assert err.blocks[0].text == "litellm.RateLimitError: AnthropicException - rate limit exceeded"


def test_a_non_streamed_responses_results_pair_with_its_calls_by_place():
    """Its row keeps no ids and its results name random ones: the N-th call of the row the result
    names is its call, as Suna numbered it (the status rows after a result follow it)."""
    idx, evs = by_id(NONSTREAM)
    uses = evs["n-03-assistant"].tool_uses()
    assert [(u.name, u.input) for u in uses] == [
        ("execute_command", {"command": "ls"}), ("read_file", {"file_path": "README.md"}),
        ("read_file", {"file_path": "LICENSE"})]
    assert {c.id: (c.name, c.status, c.result) for c in idx.calls.calls.values()} == {
        uses[0].id: ("execute_command", "completed", ("main", 4)),
        uses[1].id: ("read_file", "completed", ("main", 7)),
        uses[2].id: ("read_file", "error", ("main", 10))}  # result.success false
    assert not idx.calls.orphans and idx.summary.orphans == 0
    # the random id a result named finds its call afterwards (the raw view, a permalink)
    random = evs["n-11-tool-2"].tool_results()[0].tool_use_id
    assert random.startswith("xml_tool_index2_94d1") and idx.calls.get(random).id == uses[2].id
    # and the cache keeps that
    again = SessionIndex.load(idx.dump())
    assert again.calls.get(random).id == uses[2].id
    assert again.calls.get(evs["n-05-tool-0"].tool_results()[0].tool_use_id).id == uses[0].id


def test_a_result_naming_a_place_no_call_holds_stays_an_orphan():
    """A result whose assistant row holds fewer calls than its id counts is not given another's."""
    rows = [{"message_id": "a1", "thread_id": "t", "type": "assistant", "is_llm_message": True,
             "content": {"role": "assistant", "content": '<function_calls><invoke name="ls">'
                         '</invoke></function_calls>'}, "metadata": {}},
            {"message_id": "t1", "thread_id": "t", "type": "tool", "is_llm_message": True,
             "content": {"role": "user", "content": "x"},
             "metadata": {"assistant_message_id": "a1", "tool_call_id": "xml_tool_index0_u-1"}},
            {"message_id": "t2", "thread_id": "t", "type": "tool", "is_llm_message": True,
             "content": {"role": "user", "content": "y"},
             "metadata": {"assistant_message_id": "a1", "tool_call_id": "xml_tool_index1_u-2"}},
            {"message_id": "t3", "thread_id": "t", "type": "tool", "is_llm_message": True,
             "content": {"role": "user", "content": "z"},
             "metadata": {"assistant_message_id": "a1", "tool_call_id": "xml_tool_index0_u-3"}}]
    idx = _build_rows(rows)
    (call,) = idx.calls.calls.values()
    assert call.result == ("main", 1)  # the first result; a second for the same place is not its
    assert set(idx.calls.orphans) == {"xml_tool_index1_u-2", "xml_tool_index0_u-3"}


def test_a_calls_own_id_wins_over_another_calls_place():
    """A transcript may name a real call with the id another call's place would have: the real
    call keeps its results and its card."""
    rows = [{"message_id": "a1", "thread_id": "t", "type": "assistant", "is_llm_message": True,
             "content": {"role": "assistant", "content": '<function_calls><invoke name="ls">'
                         '</invoke></function_calls>'}, "metadata": {}},
            {"message_id": "a2", "thread_id": "t", "type": "assistant", "is_llm_message": True,
             "content": {"role": "assistant", "content": "", "tool_calls": [
                 {"id": "xml_tool_index0_a1", "type": "function",
                  "function": {"name": "web_search", "arguments": "{}"}}]}, "metadata": {}},
            {"message_id": "t1", "thread_id": "t", "type": "tool", "is_llm_message": True,
             "content": {"role": "tool", "tool_call_id": "xml_tool_index0_a1", "content": "x"},
             "metadata": {}}]
    idx = _build_rows(rows)
    real = idx.calls.get("xml_tool_index0_a1")
    assert real.name == "web_search" and real.result == ("main", 2)
    assert idx.calls.canon("xml_tool_index0_a1") == "xml_tool_index0_a1"
    (ls,) = [c for c in idx.calls.calls.values() if c.name == "ls"]
    assert ls.result is None and not idx.calls.orphans


def _build_rows(rows):
    import tempfile
    from pathlib import Path
    d = Path(tempfile.mkdtemp())
    (d / "messages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return SessionIndex(d / "messages.jsonl").build()


def test_rows_without_recorded_ids_keep_the_derived_ones():
    row = {"message_id": "m1", "type": "assistant", "content": {"role": "assistant", "content":
           '<function_calls><invoke name="ask"><parameter name="text">ok?</parameter></invoke>'
           '</function_calls>'}, "metadata": {"thread_run_id": "r"}}
    (use,) = agentpress.event(row, R).tool_uses()
    assert use.id == agentpress.xml_call_id("m1", "ask", {"text": "ok?"})


def test_stateless_rows_thinking_failure_text_and_screenshot():
    assert detect.detect_file(STATELESS) == detect.Detected("agentpress", "jsonl")
    idx, evs = by_id(STATELESS)
    reply = evs["3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"]
    assert [b.kind for b in reply.blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert reply.blocks[0].text.startswith("The user wants a screenshot first, then the page.")
    chunk = evs["s2-04-reasoning-chunk"]
    assert chunk.hidden and chunk.kind == "stream" and chunk.role == "assistant"
    assert {k: c.status for k, c in idx.calls.calls.items()} == {
        "toolu_01StatelessShot0000000": "completed", "toolu_01StatelessFetch000000": "error",
        "toolu_01StatelessDone0000000": "completed"}
    failed = evs["s2-11-tool-2"].tool_results()[0]
    assert failed.is_error and [b.text for b in failed.content] == [
        "Cannot connect to host status.example.invalid:443"]  # the error, though content is ""
    shot = evs["s2-09-image"]
    assert not shot.hidden and (shot.role, shot.kind) == ("tool", "tool_output")
    assert shot.blocks[0].text == "image put into the model's context (computer screenshot)"
    assert shot.blocks[-1].kind == "media" and shot.blocks[-1].media_type == "image/jpeg"
    assert evs["s2-19-terminating"].hidden
    assert evs["s2-19-terminating"].blocks[0].text == "complete completed: the agent stops"
    assert idx.summary.title == "take a screenshot of the app and fetch its status page"


def test_internal_tool_results_are_hidden_like_suna_hides_them():
    # response_processor._add_tool_result (1da6622b): output JSON with `_internal` → metadata
    # internal / hidden_from_user; the result still pairs with its call
    row = {"message_id": "t1", "type": "tool", "content": {"role": "tool", "tool_call_id": "c1",
           "name": "initialize_tools", "content": '{"_internal": true, "loaded": ["sb_files_tool"]}'},
           "metadata": {"tool_call_id": "c1", "function_name": "initialize_tools", "return_format":
                        "native", "result": {"success": True, "output": {"_internal": True},
                                             "error": None}, "internal": True,
                        "hidden_from_user": True}}
    ev = agentpress.event(row, R)
    assert ev.hidden and ev.hidden_reason == "internal tool result"
    assert ev.tool_results()[0].tool_use_id == "c1" and not ev.tool_results()[0].is_error


def test_old_image_context_rows_show_their_image():
    row = {"message_id": "i1", "type": "image_context", "content": json.dumps(
        {"base64": "iVBORw0KGgo=", "mime_type": "image/png", "file_path": "charts/q3.png"}),
        "metadata": {}}
    ev = agentpress.event(row, R)
    assert ev.blocks[0].text == "image put into the model's context: charts/q3.png"
    assert (ev.blocks[1].media_type, ev.blocks[1].data) == ("image/png", "iVBORw0KGgo=")


def test_pages_show_paired_states_errors_and_the_screenshot(tmp_path):
    html = page(XML, tmp_path / "x")
    states = dict(re.findall(r'id="tc-([^"]+)-state">\s*<span class="state (\w+)">', html))
    assert states == {"xml_tool_index0_5d2f8c1e-7a3b-4c9d-8e1f-2a3b4c5d6e7f": "completed",
                      "xml_tool_index1_x-05-assistant": "error",
                      "xml_tool_index2_x-05-assistant": "error"}
    # each result row says which call it answers
    assert re.search(r'id="m-x-06-tool-0".*?result of <a href="[^"]+/m/x-05-assistant">create_file</a>',
                     html, re.S)
    assert "rate limit exceeded" in html and "scrape_webpage error: Sandbox connection lost" in html
    html = page(STATELESS, tmp_path / "s")
    assert "Cannot connect to host status.example.invalid:443" in html
    assert "<img" in html and "computer screenshot" in html
    assert html.count('class="tool ') == 3


def _row(mid, t, content, ts):
    return json.dumps({"message_id": mid, "thread_id": "3f6e1a2b-7c8d-4e9f-a0b1-c2d3e4f5a6b7", "type": t,
                       "is_llm_message": t in ("user", "assistant"), "content": content, "metadata": {},
                       "created_at": f"2026-11-21T14:0{ts}.000000+00:00"})



@pytest.mark.parametrize("after,states", [
    # the run's end came with two of its calls unanswered: they were cut off
    ([_row("k-run-end", "status", {"status_type": "thread_run_end"}, "1:00")], ["completed", "interrupted", "interrupted"]),
    # the thread went on: a new prompt, a new run
    ([_row("k-user-2", "user", {"role": "user", "content": "go on"}, "2:00"),
      _row("k-run-2", "status", {"status_type": "thread_run_start"}, "2:01")], ["completed", "interrupted", "interrupted"]),
    # nothing after the first result (killed, or its tools still running): not known yet
    ([], ["completed", "pending", "pending"]),
], ids=["run-end", "next-run", "nothing-after"])
def test_a_non_streamed_run_cut_off_while_its_tools_ran_leaves_them_interrupted(tmp_path, after, states):
    lines = NONSTREAM.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "suna" / "messages.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines[:6] + after) + "\n")  # the first call's result came, no more
    idx, evs = by_id(path)
    uses = evs["n-03-assistant"].tool_uses()
    calls = [idx.calls.calls[u.id] for u in uses]
    assert [c.state for c in calls] == states
    assert idx.summary.errors == 0  # cut off is not a failure of the tool
    if after:
        html = page(path, tmp_path)
        assert html.count('<span class="state interrupted"') == 2
