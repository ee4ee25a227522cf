"""agentpress adapter: Suna `messages` rows. No real export is public; the fixtures are written by
hand from the seed's own examples (and the row shapes Suna's response processor writes)."""

import json
import re

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import agentpress, detect, legion, openai_chat
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT, quiet_copy

FIXTURES = ROOT / "test_data" / "formats" / "agentpress"
BASIC = FIXTURES / "rows-basic" / "messages.jsonl"
SHAPES = FIXTURES / "rows-content-shapes" / "messages.jsonl"
EXPORT = FIXTURES / "supabase-export" / "messages_rows.json"
R = Ref("main", 1, 0, 1)


def rows(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def decoded(value):
    return json.loads(value) if isinstance(value, str) and value[:1] in "{[" else value


def events(idx):
    return load_events(idx, "main", 0, len(idx.threads["main"]))


@pytest.mark.parametrize("path", [BASIC, SHAPES], ids=lambda p: p.parent.name)
def test_rows_are_read_whole(path):
    raw = rows(path)
    assert detect.detect_file(path) == detect.Detected("agentpress", "jsonl")
    idx = SessionIndex(path).build()
    main = idx.threads["main"]
    assert len(main) == len(raw) and "unparsed" not in main.kinds
    assert main.ids == [r["message_id"] for r in raw]  # ids are the rows' message_id
    quiet = sum(r["type"] in ("status", "llm_response_end", "assistant_response_end", "browser_state")
                and (decoded(r["content"]) or {}).get("status_type") != "error" for r in raw)
    assert idx.summary.hidden == quiet
    native = sum(len(decoded(r["content"]).get("tool_calls") or []) for r in raw
                 if r["type"] == "assistant")
    xml = sum(str(decoded(r["content"]).get("content")).count("<invoke ") for r in raw
              if r["type"] == "assistant")
    assert len(idx.calls.calls) == native + xml
    assert not idx.calls.orphans


def test_basic_rows_states_statuses_and_usage():
    idx = SessionIndex(BASIC).build()
    assert {k: c.status for k, c in idx.calls.calls.items()} == {
        "tooluse_FLTrjOjmSQmzWZCwoun-IA": "completed", "tooluse_5ZHGh5jGQLq0xSREXP7yWw": "completed",
        "tooluse_Qm3xBadArgs0000000000": "error",
        "tooluse_Nav1gate0000000000000": "executing"}  # tool_started, and no result yet
    evs = events(idx)
    by_id = {e.id: e for e in evs}
    parallel = by_id["m-005-assistant"].tool_uses()
    assert [u.input_raw is not None for u in parallel] == [False, False, True]
    assert parallel[0].input == {"query": "Larry Ellison biography", "num_results": 10}
    start = by_id["m-003-run-start"]
    assert start.hidden and start.role == "status" and start.blocks[0].text == "run started"
    assert by_id["m-013-failed-c"].blocks[0].text == "web_search failed: Tool web_search failed"
    assert by_id["m-022-started-nav"].running == ["tooluse_Nav1gate0000000000000"]
    end = by_id["m-015-llm-end"]
    assert end.hidden and end.model == "claude-sonnet-4-20250514" and end.usage["total_tokens"] == 10620
    assert end.blocks[0].text == ("model response · claude-sonnet-4-20250514 · 10,620 tokens · "
                                  "finish: tool_calls · 2.0s")
    assert idx.summary.models == ["claude-sonnet-4-20250514"]
    assert idx.summary.title == "research about larry ellison"
    assert by_id["m-002-user"].timestamp.isoformat() == "2025-06-07T21:28:18.865613+00:00"


def test_cached_block_is_one_collapsed_block_not_tool_results():
    idx = SessionIndex(BASIC).build()
    cached = next(e for e in events(idx) if e.id == "m-018-cached")
    assert cached.kind == "cached" and [b.kind for b in cached.blocks] == ["cached"]
    assert "Tool: {" in cached.blocks[0].text and not cached.tool_results()
    assert idx.summary.messages == 5  # the cached block is no prompt


def test_compressed_message_says_so_and_keeps_both_texts():
    idx = SessionIndex(BASIC).build()
    ev = next(e for e in events(idx) if e.id == "m-017-assistant-summary")
    raw = next(r for r in rows(BASIC) if r["message_id"] == "m-017-assistant-summary")
    full = decoded(raw["content"])["content"]
    short = raw["metadata"]["compressed_content"]
    assert ev.blocks[0].text == f"compressed for the model: it saw {len(short):,} of {len(full):,} characters"
    assert ev.blocks[1].kind == "data" and ev.blocks[1].value == short
    assert ev.text() == full
    plain = next(e for e in events(SessionIndex(SHAPES).build()) if e.id == "s-09-user-plain-compressed")
    assert plain.blocks[0].text == "stored compressed: only the shortened text the model saw was kept"
    assert plain.text() == "Hello! (truncated)..."


def test_content_and_metadata_in_every_shape():
    idx = SessionIndex(SHAPES).build()
    evs = {e.id: e for e in events(idx)}
    assert evs["s-01-user-json-string"].text().startswith("provide a mock report")
    assert evs["s-02-run-start-string"].hidden and evs["s-02-run-start-string"].kind == "status:thread_run_start"
    assert evs["s-10-assistant-blocks"].text() == "Let me check the workspace."
    assert evs["s-10-assistant-blocks"].tool_uses()[0].input == {"command": "ls -la"}
    # XML tool calls get derived ids that the structured results repeat
    calls = idx.calls.calls
    xml = [c for c in calls.values() if c.id.startswith("s-03-assistant-xml:")]
    assert sorted(c.status for c in xml) == ["completed", "error"]
    uses = evs["s-03-assistant-xml"].tool_uses()
    assert [u.input["file_path"] for u in uses] == ["todo.md", "/etc/passwd"]
    assert evs["s-03-assistant-xml"].text() == "I'll create the report. Let me start with a todo list."
    err = evs["s-05-tool-xml-error"].tool_results()[0]
    assert err.is_error and err.content[-1].text == "Path '/etc/passwd' is outside the workspace"
    assert calls["toolu_ls_0001"].status == "error"  # ToolResult(success=False, …)
    old = evs["s-12-tool-old-xml"]
    assert old.kind == "tool_output" and not old.tool_results()  # names no call: no orphan
    assert old.blocks[0].text == "ask succeeded (no call id recorded)"
    assert evs["s-07-error-status"].role == "error" and not evs["s-07-error-status"].hidden
    assert evs["s-13-browser-state"].hidden
    assert evs["s-08-resp-end"].model == "claude-sonnet-4-20250514"
    assert idx.summary.errors >= 3


def test_supabase_json_array_export_is_a_document():
    doc = json.loads(EXPORT.read_text())
    assert [r for _, r in agentpress.records(doc)] == doc
    assert agentpress.records({"data": doc})[0][0] == "data[0]"
    assert openai_chat.records(doc) is None  # rows are not chat messages
    assert detect.detect_file(EXPORT) == detect.Detected("agentpress", "document")
    idx = SessionIndex(EXPORT).build()
    assert len(idx.threads["main"]) == len(doc) == 7
    assert idx.calls.calls["call_weather_01"].status == "completed"
    assert idx.summary.models == ["gpt-4o-2024-08-06"] and idx.summary.hidden == 3


def test_sniff_wins_over_legion_and_the_generic_lists():
    row = rows(BASIC)[1]
    assert agentpress.sniff(row) == 3
    assert legion.sniff(row) < 3 and openai_chat.sniff(row) == 0
    assert agentpress.sniff({"role": "user", "content": "hi"}) == 0
    assert agentpress.sniff({"type": "user", "content": "x", "session_id": "s", "metadata": {}}) == 0
    assert agentpress.sniff({"type": "status", "content": '{"status_type": "finish"}'}) == 2


def test_event_never_raises_on_odd_rows():
    for rec in ({"type": "assistant", "content": "{not json", "metadata": "{also not"},
                {"type": "tool", "content": None, "metadata": None},
                {"type": "status", "content": 7}, {"type": "llm_response_end", "content": "x"},
                {"type": "brand_new", "content": {"a": 1}}, "not a row"):
        ev = agentpress.event(rec, R)
        assert ev.blocks
    bad = agentpress.event({"type": "assistant", "content": "{not json"}, R)
    assert bad.text() == "{not json"


@pytest.mark.parametrize("path", [BASIC, SHAPES, EXPORT], ids=lambda p: p.parent.name)
def test_check_json_names_the_format(path):
    r = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["format"] == "agentpress" and data["unparsed"] == [] and data["orphans"] == []


@pytest.mark.parametrize("ended", [False, True], ids=["live", "ended"])
def test_page_shows_calls_states_cached_block_and_hidden_statuses(tmp_path, ended):
    """The thread ends on a `tool_started` row: while the file is fresh its call is executing;
    once the session has ended (its file quiet) it was never answered."""
    root = tmp_path / "s"
    quiet_copy(BASIC.parent, root / BASIC.parent.name, ended)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert html.count('class="tool ') == 4
    for state in ("completed", "error"):
        assert f'<span class="state {state}">{state}</span>' in html
    running = '<span class="state executing">executing</span>' in html
    never = "No result: the session moved on or ended without one (it was still running)." in html
    assert (running, never) == ((False, True) if ended else (True, False))
    assert "arguments are not valid JSON" in html
    assert '<details class="cached"><summary>Cached history' in html
    assert re.search(r'</span> <span id="hidden-count" data-n="12">12 hidden events</span>', html)
    assert "compressed for the model" in html


def _row(n, t, content, metadata=None, llm=False):
    return {"message_id": f"5b2d0c1e-0000-4000-8000-{n:012d}", "thread_id": "9f0e8d7c-6b5a-4938-8271-605f4e3d2c1b",
            "type": t, "is_llm_message": llm, "content": json.dumps(content),
            "metadata": json.dumps(metadata or {"thread_run_id": "run-1"}),
            "created_at": f"2025-11-03T10:00:{n:02d}.000000+00:00"}


# One model call as kortix-ai/suna backend/core/agentpress/response_processor.py (commit 790c95c)
# saves it: an llm_response_start row per call; a native tool's result row is `{role: tool,
# tool_call_id, name, content: str(result.output)}` with no success flag, and the failure is only
# said by the `tool_failed` status row saved after it.
CURRENT_WRITER = [
    _row(1, "user", {"role": "user", "content": "Check the disk usage"}, llm=True),
    _row(2, "status", {"status_type": "thread_run_start", "thread_run_id": "run-1"}),
    _row(3, "llm_response_start", {"llm_response_id": "resp-1", "auto_continue_count": 0,
                                   "model": "anthropic/claude-sonnet-4-5",
                                   "timestamp": "2025-11-03T10:00:03+00:00"},
         {"thread_run_id": "run-1", "llm_response_id": "resp-1"}),
    _row(4, "assistant", {"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": "toolu_01Disk", "type": "function",
         "function": {"name": "execute_command", "arguments": "{\"command\": \"df -h /workspace\"}"}},
        {"id": "toolu_02Ok", "type": "function",
         "function": {"name": "list_files", "arguments": "{\"path\": \"/workspace\"}"}}]}, llm=True),
    _row(5, "status", {"role": "assistant", "status_type": "tool_started",
                       "function_name": "execute_command", "xml_tag_name": None,
                       "message": "Starting execution of execute_command", "tool_index": 0,
                       "tool_call_id": "toolu_01Disk", "arguments": "{\"command\": \"df -h /workspace\"}"}),
    _row(6, "tool", {"role": "tool", "tool_call_id": "toolu_01Disk", "name": "execute_command",
                     "content": "Error executing command: sandbox is not running"},
         {"assistant_message_id": "5b2d0c1e-0000-4000-8000-000000000004"}, llm=True),
    _row(7, "status", {"role": "assistant", "status_type": "tool_failed",
                       "function_name": "execute_command", "xml_tag_name": None,
                       "message": "Tool execute_command failed", "tool_index": 0,
                       "tool_call_id": "toolu_01Disk"}),
    _row(8, "tool", {"role": "tool", "tool_call_id": "toolu_02Ok", "name": "list_files",
                     "content": "README.md\nsrc/"},
         {"assistant_message_id": "5b2d0c1e-0000-4000-8000-000000000004"}, llm=True),
    _row(9, "status", {"role": "assistant", "status_type": "tool_completed",
                       "function_name": "list_files", "xml_tag_name": None,
                       "message": "Tool list_files completed successfully", "tool_index": 1,
                       "tool_call_id": "toolu_02Ok"},
         {"thread_run_id": "run-1", "linked_tool_result_message_id": "5b2d0c1e-0000-4000-8000-000000000008"}),
    _row(10, "status", {"status_type": "finish", "finish_reason": "tool_calls", "tools_executed": True}),
]


def test_current_writer_start_rows_are_quiet_and_a_failed_status_fails_its_call(tmp_path):
    path = tmp_path / "run" / "messages.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in CURRENT_WRITER), encoding="utf-8")
    assert detect.detect_file(path) == detect.Detected("agentpress", "jsonl")
    idx = SessionIndex(path).build()
    assert {k: c.status for k, c in idx.calls.calls.items()} == {
        "toolu_01Disk": "error", "toolu_02Ok": "completed"}
    evs = events(idx)
    start = evs[2]
    assert (start.kind, start.hidden, start.blocks[0].text) == (
        "llm_response_start", True, "model call started · anthropic/claude-sonnet-4-5")
    assert [e.kind for e in evs if not e.hidden] == ["message", "message", "tool_result", "tool_result"]
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert '<span class="state error">error</span>' in html
    # the start row is a hidden status line (shown by the toggle), not a visible JSON card
    assert 'kind-other is-hidden" id="m-5b2d0c1e-0000-4000-8000-000000000003"' in html


def test_a_row_of_a_type_not_known_here_shows_its_metadata_too():
    # a newer writer's row type whose content is empty and whose payload is in `metadata` (found
    # by the fuzzer's unknown-record mutation): the card showed "null", the metadata nowhere
    ev = agentpress.event({"message_id": "m-9", "type": "agent_handoff", "is_llm_message": False,
                           "content": None, "metadata": json.dumps({"url": "https://example.com",
                                                                    "screenshot_url": "s.png"})}, R)
    assert ev.kind == "agent_handoff" and not ev.hidden
    assert [(b.kind, b.label, b.value) for b in ev.blocks] == [
        ("data", "agent_handoff · metadata", {"url": "https://example.com", "screenshot_url": "s.png"})]
    # with content: both
    ev = agentpress.event({"type": "agent_handoff", "content": {"a": 1}, "metadata": {"b": 2}}, R)
    assert [(b.label, b.value) for b in ev.blocks] == [("agent_handoff", {"a": 1}),
                                                       ("agent_handoff · metadata", {"b": 2})]
    # with neither: the row
    row = {"type": "agent_handoff", "text": "to the researcher"}
    assert [(b.label, b.value) for b in agentpress.event(row, R).blocks] == [("agent_handoff", row)]


def test_a_cached_context_message_keeps_a_block_of_a_type_not_known():
    # a user message of cached context (blocks marked cache_control) is shown as one cached text:
    # a block with no text (a newer type's) added '' to it, its words lost — found by the fuzzer
    ev = agentpress._message("user", {"role": "user", "content": [
        {"type": "text", "text": "User: research about larry ellison", "cache_control": {"type": "ephemeral"}},
        {"type": "document_note", "content": "Oracle was founded in 1977"}]}, {}, "m1", Ref("main", 1, 0, 1))
    assert ev.kind == "cached"
    assert "larry ellison" in ev.blocks[0].text and "Oracle was founded in 1977" in ev.blocks[0].text
