"""anthropic-messages adapter: Cline's real api_conversation_history.json and hand-made lists."""

import json
import os
import re

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import anthropic_messages, detect, openai_chat
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events, raw_record
from viewer.web import create_app

from conftest import ROOT, corpus_sessions, quiet_copy

FIXTURES = ROOT / "test_data" / "formats" / "anthropic-messages"
(CLINE_DIR,) = corpus_sessions("anthropic-messages")
CLINE = CLINE_DIR / "api_conversation_history.json"
R = Ref("main", 1, 0, 1)
HEADER = re.compile(r"\[(\w+)(?: for '.*?')?\] Result:", re.S)


def events(idx):
    return load_events(idx, "main", 0, len(idx.threads["main"]))


def test_cline_history_is_read_whole(tmp_path):
    doc = json.loads(CLINE.read_text(encoding="utf-8"))
    blocks = [(m["role"], b) for m in doc for b in m["content"]]
    uses = [b for r, b in blocks if b["type"] == "tool_use"]
    headers = [b for r, b in blocks if r == "user" and b["type"] == "text" and HEADER.match(b["text"])]
    envs = [b for r, b in blocks if b["type"] == "text" and b["text"].startswith("<environment_details>")]
    # figures from ../shared/corpus/SOURCES.md, recounted from the JSON
    assert (len(doc), len(uses), sum(b["type"] == "thinking" for _, b in blocks)) == (94, 47, 47)

    assert detect.detect_file(CLINE) == detect.Detected("anthropic-messages", "document")
    # a copy untouched for long: the session is over, so the last call will never be answered
    idx = SessionIndex(quiet_copy(CLINE_DIR, tmp_path / "cline") / CLINE.name).build()
    main = idx.threads["main"]
    assert len(main) == 94 and "unparsed" not in main.kinds
    assert len(idx.calls.calls) == len(uses) == 47
    assert not idx.calls.orphans
    # every text result is paired with its call; the final attempt_completion got none: it is the
    # task's end (Cline shows "Task Completed"), not a call left waiting
    by_state = idx.calls.by_state()
    assert by_state == {"pending": 0, "executing": 0, "completed": len(headers) + 1, "error": 0}
    last = idx.calls.calls[uses[-1]["id"]]
    assert last.name == "attempt_completion" and last.status == "completed"
    assert not idx.unanswered(last)
    evs = events(idx)
    assert sum(b.kind == "thinking" for e in evs for b in e.blocks) == 47
    env = [b for e in evs for b in e.blocks if b.kind == "data" and b.label == "environment details"]
    assert len(env) == len(envs)
    assert "Current Time" in env[1].value
    assert main.roles.count("tool") == len(headers)
    assert idx.summary.models == ["claude-sonnet-4-5-20250929"]
    assert evs[1].usage == {"prompt": 10, "completion": 595, "cached": 9573}
    assert idx.summary.title == ("You have been given a Dockerized codebase for an unfinished 3D "
                                 "multiplayer Unity deck building rogue like.")


def test_cline_result_text_lands_in_the_call_and_raw_stays_exact():
    idx = SessionIndex(CLINE).build()
    evs = events(idx)
    doc = json.loads(CLINE.read_text(encoding="utf-8"))
    first_call = doc[1]["content"][-1]
    assert first_call["type"] == "tool_use" and first_call["name"] == "read_file"
    result = evs[2].tool_results()[0]
    assert result.tool_use_id == first_call["id"]
    assert result.content[0].text.startswith("using System;")  # header cut off, body kept
    assert evs[2].role == "tool" and evs[2].kind == "tool_result"
    raw = json.loads(raw_record(idx, evs[2].id)[0])
    assert raw == doc[2]  # no pairing data leaks into the source view


def test_cline_fixture_errors_split_results_and_reminders():
    path = FIXTURES / "cline-text-results-errors" / "api_conversation_history.json"
    idx = SessionIndex(path).build()
    assert {c.name: c.status for c in idx.calls.calls.values()} == {
        "read_file": "completed", "execute_command": "error", "replace_in_file": "error",
        "attempt_completion": "completed"}
    evs = events(idx)
    split = next(e for e in evs if any(r.tool_use_id == "toolu_pytest" for r in e.tool_results()))
    assert split.tool_results()[0].content[0].text.startswith("The tool execution failed")
    denied = next(e for e in evs if any(r.tool_use_id == "toolu_fix" for r in e.tool_results()))
    labels = [b.label for b in denied.blocks if b.kind == "data"]
    assert labels == ["Cline reminder: TODO LIST UPDATE REQUIRED - You MUST include the "
                      "task_progress parameter in your NEXT tool call.", "environment details"]
    assert denied.role == "tool"
    thinking = next(b for e in evs for b in e.blocks if b.kind == "thinking")
    assert thinking.text == "Read utils.py before changing anything."  # from `summary`
    assert evs[1].usage["cost"] == 0.0031
    assert idx.summary.title == "Fix the failing test in utils.py"
    assert evs[0].blocks[0].text == "Fix the failing test in utils.py"  # <task> unwrapped


def test_text_results_stay_text_without_neighbours():
    """Record by record (JSONL) there is no preceding call to pair a Cline header with."""
    ev = anthropic_messages.event({"role": "user", "content": [
        {"type": "text", "text": "[read_file for 'a.py'] Result:\nprint(1)"}]}, R)
    assert [b.kind for b in ev.blocks] == ["text"] and ev.role == "user"


def test_jsonl_with_thinking_parallel_calls_errors_and_images():
    path = FIXTURES / "jsonl-tool-use-thinking" / "messages.jsonl"
    assert detect.detect_file(path) == detect.Detected("anthropic-messages", "jsonl")
    idx = SessionIndex(path).build()
    assert {k: c.status for k, c in idx.calls.calls.items()} == {
        "toolu_build": "completed", "toolu_test": "error", "toolu_shot": "completed"}
    evs = events(idx)
    thinking = [b for e in evs for b in e.blocks if b.kind == "thinking"]
    assert [(t.redacted, bool(t.signature)) for t in thinking] == [(False, True), (True, True)]
    shot = evs[4].tool_results()[0]
    assert shot.content[0].kind == "media" and shot.content[0].media_type == "image/png"
    assert evs[5].source_id == "msg_01FinalAnswer" and evs[5].usage["output_tokens"] == 31
    assert idx.threads["main"].ids[5] == "msg_01FinalAnswer"


def test_document_with_system_server_tools_and_a_pdf():
    path = FIXTURES / "system-and-server-tools" / "conversation.json"
    assert detect.detect_file(path) == detect.Detected("anthropic-messages", "document")
    idx = SessionIndex(path).build()
    evs = events(idx)
    assert evs[0].role == "system" and evs[0].text() == "You are a research assistant. Cite your sources."
    assert idx.threads["main"].paths[:2] == ["system", "messages[0]"]
    (call,) = idx.calls.calls.values()
    assert call.name == "web_search" and call.status == "completed"
    doc = [b for b in evs[3].blocks if b.kind == "media"]
    assert [(d.media, d.media_type, d.name) for d in doc] == [
        ("document", "application/pdf", "k2-18b-paper.pdf")]
    assert idx.summary.title == "What did the James Webb telescope find about K2-18b?"


def test_sniff_tells_anthropic_from_openai():
    tool_use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x",
                                                   "input": {}}]}
    openai = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"}}]}
    plain = {"role": "user", "content": "hello"}
    assert (anthropic_messages.sniff(tool_use), openai_chat.sniff(tool_use)) == (2, 0)
    assert (anthropic_messages.sniff(openai), openai_chat.sniff(openai)) == (0, 2)
    assert anthropic_messages.sniff({"role": "tool", "tool_call_id": "c", "content": "x"}) == 0
    assert anthropic_messages.sniff(plain) == openai_chat.sniff(plain) == 1
    # an AgentScope-like Msg with the same blocks is only plausible here
    assert anthropic_messages.sniff({**tool_use, "name": "Friday", "metadata": {}, "id": "m"}) == 1
    # so detection: a list of plain messages ties and the earlier generic (openai-chat) wins
    assert detect.detect_records([plain, plain])[0] == "openai-chat"
    assert detect.detect_records([plain, tool_use])[0] == "anthropic-messages"
    # …unless `system` sits beside the list, as only the Anthropic request shape has it
    assert detect.detect_document({"system": "Be brief.", "messages": [plain]}) == "anthropic-messages"
    assert detect.detect_document({"messages": [plain]}) == "openai-chat"


@pytest.mark.parametrize("path", [CLINE, *sorted(FIXTURES.glob("*/*"))], ids=lambda p: p.parent.name)
def test_check_json_names_the_format(path):
    r = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["format"] == "anthropic-messages" and data["unparsed"] == []
    assert data["orphans"] == []


def test_page_shows_paired_calls_and_quiet_environment(tmp_path):
    root = quiet_copy(CLINE_DIR, tmp_path / "cline")  # finished long ago
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    # a finished session opens at its start; what is checked here sits at its end
    html = client.get(link + "?at=end").get_data(as_text=True)
    assert html.count('class="tool ') >= 10
    assert '<span class="state completed">completed</span>' in html
    # attempt_completion, the last call, got no result: the task ended there
    assert "never answered" not in html and "task completed: the result was presented" in html
    assert '<details class="data"><summary>environment details</summary>' in html
    assert "↳ result of" in html  # the text results are shown with their calls
    assert "claude-sonnet-4-5-20250929" in html


# Server tools, documents and search results as the Messages API returns them today; the shapes
# come from anthropics/anthropic-sdk-python src/anthropic/types/beta/ (beta_web_search_result_block,
# beta_bash_code_execution_result_block, beta_code_execution_result_block,
# beta_text_editor_code_execution_view_result_block, beta_web_fetch_block, beta_search_result_block_param,
# beta_plain_text_source, beta_advisor_result_block; commits d688e03, 887ee67, 0c20cf4).
SERVER_TOOLS = [
    {"role": "user", "content": "When was Claude Shannon born? Run the numbers too."},
    {"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
         "input": {"query": "claude shannon birth date"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
            {"type": "web_search_result", "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
             "title": "Claude Shannon - Wikipedia", "page_age": "April 30, 2025",
             "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y"}]},
        {"type": "server_tool_use", "id": "srvtoolu_02", "name": "bash_code_execution",
         "input": {"command": "python -c 'print(2001-1916)'"}},
        {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_02", "content": {
            "type": "bash_code_execution_result", "stdout": "85\n", "stderr": "", "return_code": 0,
            "content": []}},
        {"type": "server_tool_use", "id": "srvtoolu_03", "name": "code_execution",
         "input": {"code": "print(1/0)"}},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_03", "content": {
            "type": "code_execution_result", "stdout": "", "return_code": 1, "content": [],
            "stderr": "ZeroDivisionError: division by zero"}},
        {"type": "server_tool_use", "id": "srvtoolu_04", "name": "text_editor_code_execution",
         "input": {"command": "view", "path": "/tmp/notes.py"}},
        {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_04", "content": {
            "type": "text_editor_code_execution_view_result", "file_type": "text",
            "content": "print('shannon')\n", "num_lines": 1, "start_line": 1, "total_lines": 1}},
        {"type": "server_tool_use", "id": "srvtoolu_05", "name": "web_fetch",
         "input": {"url": "https://example.com"}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_05", "content": {
            "type": "web_fetch_result", "url": "https://example.com",
            "retrieved_at": "2025-08-25T10:30:00Z", "content": {
                "type": "document", "title": "Example Domain",
                "source": {"type": "text", "media_type": "text/plain", "data": "Example Domain body"}}}},
        {"type": "server_tool_use", "id": "srvtoolu_06", "name": "web_search", "input": {"query": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_06",
         "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
        {"type": "text", "text": "He was born on April 30, 1916.", "citations": [
            {"type": "web_search_result_location", "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
             "title": "Claude Shannon - Wikipedia", "encrypted_index": "Eo8BCioIAhgBIiQy",
             "cited_text": "Claude Elwood Shannon (April 30, 1916 – February 24, 2001)"}]}]},
    {"role": "user", "content": [
        {"type": "search_result", "source": "https://docs.example/api", "title": "API Reference",
         "content": [{"type": "text", "text": "Use the auth endpoint."}], "citations": {"enabled": True}},
        {"type": "document", "title": "notes.txt",
         "source": {"type": "text", "media_type": "text/plain", "data": "Plain document text here"}},
        {"type": "text", "text": "Use these too."}]},
]


def test_server_tool_results_documents_and_search_results_read_as_text(tmp_path):
    path = tmp_path / "server" / "conversation.json"
    path.parent.mkdir()
    path.write_text(json.dumps(SERVER_TOOLS), encoding="utf-8")
    assert detect.detect_file(path) == detect.Detected("anthropic-messages", "document")
    idx = SessionIndex(path).build()
    calls = idx.calls.calls
    assert {k: c.status for k, c in calls.items()} == {
        "srvtoolu_01": "completed", "srvtoolu_02": "completed", "srvtoolu_03": "error",
        "srvtoolu_04": "completed", "srvtoolu_05": "completed", "srvtoolu_06": "error"}
    evs = events(idx)
    results = {b.tool_use_id: b for b in evs[1].blocks if b.kind == "tool_result"}

    def texts(cid):
        return [b.text for b in results[cid].content if b.kind in ("text", "notice")]

    assert texts("srvtoolu_01") == [
        "Claude Shannon - Wikipedia — https://en.wikipedia.org/wiki/Claude_Shannon (April 30, 2025)"]
    assert texts("srvtoolu_02") == ["stdout", "85\n", "exit code 0"]
    assert texts("srvtoolu_03") == ["stderr", "ZeroDivisionError: division by zero", "exit code 1"]
    assert texts("srvtoolu_04") == ["print('shannon')\n"]
    assert texts("srvtoolu_05") == ["fetched https://example.com", "document “Example Domain”",
                                    "Example Domain body"]
    assert texts("srvtoolu_06") == ["error: max_uses_exceeded"]
    # a plain-text document is its text, not a "document" download of base64 that is none
    assert [(b.kind, b.text) for b in evs[2].blocks] == [
        ("notice", "search result: API Reference · https://docs.example/api"),
        ("text", "Use the auth endpoint."), ("notice", "document “notes.txt”"),
        ("text", "Plain document text here"), ("text", "Use these too.")]
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert "ZeroDivisionError: division by zero" in html and "Use the auth endpoint." in html
    assert "EqgfCioIARgBIiQ3" not in html  # the encrypted content is for the model only
    assert '<span class="state error">error</span>' in html


def test_a_result_object_without_a_type_string_never_raises():
    ev = anthropic_messages.event({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "x", "input": {}},
        {"type": "tool_result", "tool_use_id": "t1", "content": {"type": None}}]}, R)
    assert [b.kind for b in ev.blocks] == ["tool_use", "tool_result"]


def test_an_answer_cut_at_its_citations_reads_as_one_text_with_its_sources():
    # the Messages API returns a cited answer as text blocks cut where each citation starts and
    # ends (anthropic-sdk-python types/beta: beta_text_block, beta_citation_web_search_result_location,
    # beta_citation_char_location)
    ev = anthropic_messages.event({"role": "assistant", "content": [
        {"type": "text", "text": "Based on the search, "},
        {"type": "text", "text": "Claude Shannon was born on April 30, 1916", "citations": [
            {"type": "web_search_result_location", "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
             "title": "Claude Shannon - Wikipedia", "encrypted_index": "Eo8B",
             "cited_text": "Claude Elwood Shannon (April 30, 1916 – February 24, 2001)"}]},
        {"type": "text", "text": " in Petoskey, "},
        {"type": "text", "text": "Michigan.", "citations": [
            {"type": "web_search_result_location", "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
             "title": "Claude Shannon - Wikipedia", "encrypted_index": "x", "cited_text": "Petoskey"},
            {"type": "char_location", "document_title": "bio.txt", "cited_text": "Michigan",
             "document_index": 0, "start_char_index": 0, "end_char_index": 8}]}]}, R)
    assert [(b.kind, b.text) for b in ev.blocks] == [
        ("text", "Based on the search, Claude Shannon was born on April 30, 1916 in Petoskey, Michigan."),
        ("notice", "sources: Claude Shannon - Wikipedia — https://en.wikipedia.org/wiki/Claude_Shannon; bio.txt")]
    plain = anthropic_messages.event({"role": "assistant", "content": [
        {"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}, R)
    assert [b.text for b in plain.blocks] == ["one", "two"]  # no citations: blocks stay as written


def test_container_uploads_and_output_files_are_named():
    # anthropic-sdk-python types/beta: beta_container_upload_block_param,
    # beta_bash_code_execution_output_block ({type, file_id})
    ev = anthropic_messages.event({"role": "user", "content": [
        {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
        {"type": "text", "text": "Plot this CSV."}]}, R)
    assert [b.text for b in ev.blocks] == [
        "file file_011CNha8iCJcU1wXNR6q4V8w uploaded to the code execution container", "Plot this CSV."]
    reply = anthropic_messages.event({"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_9", "name": "bash_code_execution",
         "input": {"command": "python plot.py"}},
        {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_9", "content": {
            "type": "bash_code_execution_result", "stdout": "saved", "stderr": "", "return_code": 0,
            "content": [{"type": "bash_code_execution_output", "file_id": "file_013plot"}]}}]}, R)
    (result,) = reply.tool_results()
    assert [b.text for b in result.content] == ["stdout", "saved", "exit code 0", "output file file_013plot"]


def _cline_task(last_call: str, feedback: bool) -> list:
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nAdd a README\n</task>"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Done."},
            {"type": "tool_use", "id": "toolu_end", "name": last_call, "input": {"result": "README added"}}],
         "modelInfo": {"modelId": "claude-sonnet-4-5-20250929", "providerId": "anthropic", "mode": "act"}},
    ]
    if feedback:
        msgs.append({"role": "user", "content": [{"type": "text", "text": (
            f"[{last_call}] Result:\n\nThe user has provided feedback on the results.\n"
            "<feedback>\nAlso add a licence\n</feedback>")}]})
    return msgs


@pytest.mark.parametrize("last_call,feedback,status,notice", [
    ("attempt_completion", False, "completed", True),   # the task's end, presented to the user
    ("attempt_completion", True, "completed", False),   # the user's feedback is its result
    ("ask_followup_question", False, "pending", False),  # a question still waits for its answer
])
def test_cline_final_attempt_completion_is_the_task_end(tmp_path, last_call, feedback, status, notice):
    path = tmp_path / "task" / "api_conversation_history.json"
    path.parent.mkdir()
    path.write_text(json.dumps(_cline_task(last_call, feedback)))
    idx = SessionIndex(quiet_copy(path.parent, tmp_path / "old") / path.name).build()
    call = idx.calls.calls["toolu_end"]
    assert call.status == status and bool(idx.unanswered(call)) == (status == "pending")
    said = [b for e in events(idx) for b in e.blocks if b.kind == "tool_result"
            for n in b.content if getattr(n, "kind", "") == "notice"]
    assert bool(said) == notice


def test_cline_parallel_calls_of_one_tool_pair_by_the_file_each_result_names():
    """Newer Cline (the second export in gmfstu/Online-Card-Architecture, Opus 4.5) reads four
    files in one turn; each result's header names its file. Paired by that name, not by position."""
    files = ["ActionSystem.cs", "GameAction.cs", "DrawCardGA.cs", "DrawCardSystem.cs"]
    doc = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nAdd a BeginTurn action\n</task>"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "read_file", "input": {"path": f}}
            for i, f in enumerate(files)]},
        {"role": "user", "content": [
            {"type": "text", "text": f"[read_file for '{f}'] Result:\ncontents of {f}"}
            for f in reversed(files)]},
    ]
    found = anthropic_messages.records(doc)
    evs = [anthropic_messages.event(rec, Ref("main", i + 1, 0, 1)) for i, (_, rec) in enumerate(found)]
    got = {b.tool_use_id: b.content[0].text for b in evs[2].tool_results()}
    assert got == {f"toolu_{i}": f"contents of {f}" for i, f in enumerate(files)}


def test_cline_interrupted_reply_and_task_resumption(tmp_path):
    """Cline appends "[Response interrupted by user]" to a reply it stopped and starts the next turn
    "[TASK RESUMPTION] …" (the second export in gmfstu/Online-Card-Architecture has one): the reply
    reads interrupted, and a call left without a result before the pause is interrupted, not
    "never answered"."""
    mi = {"modelId": "claude-opus-4-5-20251101", "providerId": "anthropic", "mode": "act"}
    doc = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nAdd ModifyCard\n</task>"}]},
        {"role": "assistant", "modelInfo": mi, "content": [
            {"type": "text", "text": "Now let me create ModifyCardSystem."},
            {"type": "tool_use", "id": "toolu_w", "name": "write_to_file",
             "input": {"absolutePath": "/w/ModifyCardSystem.cs", "content": "x"}}]},
        {"role": "user", "content": [{"type": "text", "text": (
            "[TASK RESUMPTION] This task was interrupted 10 minutes ago. It may or may not be complete.")}]},
        {"role": "assistant", "modelInfo": mi, "content": [
            {"type": "text", "text": "Let me check"}, {"type": "text", "text": "\n\n[Response interrupted by user]"}]},
        {"role": "user", "content": [{"type": "text", "text": "[TASK RESUMPTION] This task was interrupted 1 minute ago."}]},
        {"role": "assistant", "modelInfo": mi, "content": [
            {"type": "text", "text": "Partial answer\n\n[Response interrupted by API Error]"}]},
    ]
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(json.dumps(doc))
    idx = SessionIndex(quiet_copy(folder, tmp_path / "old") / "api_conversation_history.json").build()
    call = idx.calls.calls["toolu_w"]
    assert (call.status, call.named) == ("error", "interrupted") and not idx.unanswered(call)
    evs = events(idx)
    assert evs[3].state == "interrupted" and evs[3].text() == "Let me check"
    assert [b.text for b in evs[3].blocks if b.kind == "notice"] == ["response interrupted by the user"]
    assert evs[5].state is None and evs[5].text() == "Partial answer"
    assert [b.text for b in evs[5].blocks if b.kind == "notice"] == ["response interrupted by an API error"]
    app = create_app({"ROOTS": [str(tmp_path / "old")], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"?]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert "[Response interrupted by user]" not in html and "response interrupted by the user" in html
    assert "never answered" not in html


def test_cline_turns_take_their_time_from_the_environment_details():
    """Cline's file has no timestamps, but every turn it sends carries `# Current Time` in its
    environment details: the session's start is the task's creation (the task id is its epoch in
    ms: 1769053680585) and its end the last turn sent."""
    idx = SessionIndex(CLINE).build()
    assert idx.summary.started == pytest.approx(1769053680585 / 1000, abs=1)
    doc = json.loads(CLINE.read_text(encoding="utf-8"))
    stamps = [m for msg in doc for b in msg["content"] if b["type"] == "text"
              for m in re.findall(r"# Current Time\n([^\n]+)", b["text"])]
    assert stamps[0] == "1/22/2026, 3:48:00 AM (UTC, UTC+0:00)"
    evs = events(idx)
    timed = [e for e in evs if e.timestamp is not None]
    assert timed and all(e.role in ("user", "tool") for e in timed)
    assert idx.summary.ended == max(e.timestamp.timestamp() for e in timed)
    assert len(doc) == len(evs)


@pytest.mark.parametrize("line,iso", [
    ("1/22/2026, 6:47:34 AM (UTC, UTC+0:00)", "2026-01-22T06:47:34+00:00"),
    ("1/22/2026, 12:05:00 PM (America/Los_Angeles, UTC-8:00)", "2026-01-22T20:05:00+00:00"),
    ("12/1/2025, 12:00:01\u202fAM (Asia/Kolkata, UTC+5.5:00)", "2025-11-30T18:30:01+00:00"),
    # other locales, as Node's Intl.DateTimeFormat writes Cline's options (hour12: true) in them
    ("22/01/2026, 6:07:04 pm (Europe/London, UTC+0:00)", "2026-01-22T18:07:04+00:00"),  # en-GB
    ("05/03/2026, 6:07:04 PM (Europe/Rome, UTC+1:00)", "2026-03-05T17:07:04+00:00"),  # it: day first
    ("22.1.2026, 6:07:04 PM (Europe/Berlin, UTC+1:00)", "2026-01-22T17:07:04+00:00"),  # de
    ("22/1/2026, 6:07:04 p. m. (Europe/Madrid, UTC+1:00)", "2026-01-22T17:07:04+00:00"),  # es
    ("2026-01-22, 6:07:04 a.m. (America/Toronto, UTC-5:00)", "2026-01-22T11:07:04+00:00"),  # en-CA
    ("22-1-2026, 12:07:04 a.m. (Europe/Amsterdam, UTC+1:00)", "2026-01-21T23:07:04+00:00"),  # nl
    ("2026/1/22 午後6:07:04 (Asia/Tokyo, UTC+9:00)", "2026-01-22T09:07:04+00:00"),  # ja
    ("2026/1/22 上午9:07:04 (Asia/Shanghai, UTC+8:00)", "2026-01-22T01:07:04+00:00"),  # zh
    ("2026. 1. 22. PM 6:07:04 (Asia/Seoul, UTC+9:00)", "2026-01-22T09:07:04+00:00"),  # ko
    ("22.01.2026 ÖS 6:07:04 (Europe/Istanbul, UTC+3:00)", "2026-01-22T15:07:04+00:00"),  # tr
    ("6:07:04 CH 22/1/2026 (Asia/Ho_Chi_Minh, UTC+7:00)", "2026-01-22T11:07:04+00:00"),  # vi
    ("22.1.2026 klo 6.07.04 ip. (Europe/Helsinki, UTC+2:00)", "2026-01-22T16:07:04+00:00"),  # fi
    ("2026-01-22 6:07:04 fm (Europe/Stockholm, UTC+1:00)", "2026-01-22T05:07:04+00:00"),  # sv
    # a 24-hour form (toLocaleString without hour12) where nothing else is written
    ("22.1.2026, 06:47:34 (Europe/Berlin, UTC+1:00)", "2026-01-22T05:47:34+00:00"),
    ("2026/1/22 18:07:04 (Asia/Tokyo, UTC+9:00)", "2026-01-22T09:07:04+00:00"),
    # unread: other digits and calendars, a word for the half of the day not known, no offset
    ("٢٢\u200f/١\u200f/٢٠٢٦، ٦:٠٧:٠٤ م (Africa/Cairo, UTC+2:00)", None),  # ar: Arabic digits
    ("22/1/2569 6:07:04 PM (Asia/Bangkok, UTC+7:00)", None),  # th: the Buddhist year
    ("22.1.2026, 6:07:04 nachmittags (Europe/Berlin, UTC+1:00)", None),
    ("22.1.2026, 6:07:04 PM", None),
    ("22.1.2026, 13:07:04 PM (Europe/Berlin, UTC+1:00)", None),  # a 12-hour word on hour 13
])
def test_cline_current_time_forms(line, iso):
    doc = [{"role": "user", "content": [
        {"type": "text", "text": "<task>\nHi\n</task>"},
        {"type": "text", "text": f"<environment_details>\n# Current Time\n{line}\n\n# Current Mode\nACT MODE\n</environment_details>"}]}]
    (_, rec), = anthropic_messages.records(doc)
    ev = anthropic_messages.event(rec, Ref("main", 1, 0, 1))
    assert (ev.timestamp.isoformat() if ev.timestamp else None) == iso


def test_cline_resumed_task_answers_the_calls_it_never_ran_as_interrupted(tmp_path):
    """Resuming a task whose last reply held calls, Cline (and Roo Code) answers each with a
    tool_result "Task was interrupted before this tool call could be completed." (older versions
    without `is_error`): interrupted, not completed. Roo's environment details give the turn's time
    in ISO 8601."""
    doc = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nWrite noop.txt\n</task>"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_nt", "name": "new_task", "input": {"mode": "code"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_nt",
             "content": "Task was interrupted before this tool call could be completed."},
            {"type": "text", "text": "[TASK RESUMPTION] This task was interrupted 2 minutes ago."},
            {"type": "text", "text": "<environment_details>\n# Current Time\nCurrent time in ISO 8601 UTC format: "
                                     "2026-02-02T05:36:09.276Z\nUser time zone: UTC, UTC+0:00\n</environment_details>"}]},
    ]
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(json.dumps(doc))
    idx = SessionIndex(quiet_copy(folder, tmp_path / "old") / "api_conversation_history.json").build()
    call = idx.calls.calls["toolu_nt"]
    assert (call.status, call.named) == ("error", "interrupted")
    evs = events(idx)
    assert evs[2].timestamp.isoformat() == "2026-02-02T05:36:09.276000+00:00"


def test_a_cline_task_folder_lists_one_session_not_its_ui_messages(tmp_path):
    """Cline keeps a task as `tasks/<id>/`: `api_conversation_history.json` (what the model was
    sent, read here), `ui_messages.json` (the `ClineMessage[]` its chat panel draws: `ts`, `type`
    say / ask, `text`, `conversationHistoryIndex`) and `task_metadata.json`. The panel's list is the
    same task again, so it is never a session of its own — no second row, no "unknown" one."""
    task = tmp_path / "tasks" / "1769053680585"
    quiet_copy(CLINE_DIR, task)
    (task / "ui_messages.json").write_text(json.dumps([
        {"ts": 1769053680585, "type": "say", "say": "task", "text": "Build the card game"},
        {"ts": 1769053681000, "type": "say", "say": "api_req_started", "conversationHistoryIndex": -1,
         "text": json.dumps({"request": "…", "tokensIn": 10, "tokensOut": 5, "cost": 0.01})},
        {"ts": 1769053689000, "type": "say", "say": "text", "text": "I'll look.", "conversationHistoryIndex": 0},
    ]))
    (task / "task_metadata.json").write_text(json.dumps({"files_in_context": [], "model_usage": []}))
    app = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    home = app.test_client().get("/").get_data(as_text=True)
    rows = re.findall(r'<tr[^>]*data-key="([^"]+)"', home)
    assert len(rows) == 1 and "ui_messages" not in rows[0] and "task_metadata" not in rows[0]
    assert "ui_messages" not in home and "unknown" not in home


# The newest content blocks of a stored reply, from anthropics/anthropic-sdk-python
# src/anthropic/types/beta: beta_content_block.py (32169b41), beta_compaction_block.py (0aa2a0d4:
# `content` null when the compaction produced no summary), beta_advisor_tool_result_block.py,
# beta_advisor_result_block.py, beta_advisor_redacted_result_block.py (0c20cf40 / 887ee67f /
# 2b826760), ../tool_search_tool_result_block.py and tool_search_tool_result_error.py (0194a06e /
# 887ee67f: `error_message`), ../stop_reason.py: a Message the API returned, kept whole.
NEWEST_REPLY = [
    {"role": "user", "content": [
        {"type": "text", "text": "Plan the database migration."},
        {"type": "document", "title": "schema.sql", "citations": {"enabled": True},
         "source": {"type": "text", "media_type": "text/plain", "data": "CREATE TABLE orders (id int);"}},
        {"type": "search_result", "source": "https://wiki/db", "title": "DB runbook",
         "content": [{"type": "text", "text": "Back up first."}]}]},
    {"role": "assistant", "content": [
        {"type": "compaction", "content": "The user wants to move the orders table to Postgres; "
                                          "schema.sql holds 3 tables.", "encrypted_content": None},
        {"type": "compaction", "content": None},
        {"type": "server_tool_use", "id": "srvtoolu_adv1", "name": "advisor", "input": {}},
        {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_adv1",
         "content": {"type": "advisor_result", "text": "Migrate in two steps.", "stop_reason": "end_turn"}},
        {"type": "server_tool_use", "id": "srvtoolu_adv2", "name": "advisor", "input": {}},
        {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_adv2", "content": {
            "type": "advisor_redacted_result", "encrypted_content": "EuYBCkQIBxgCIkA", "stop_reason": "end_turn"}},
        {"type": "server_tool_use", "id": "srvtoolu_ts1", "name": "tool_search_tool_regex",
         "input": {"pattern": "db_.*"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_ts1", "content": {
            "type": "tool_search_tool_search_result", "tool_references": [
                {"type": "tool_reference", "tool_name": "db_query"},
                {"type": "tool_reference", "tool_name": "db_migrate"}]}},
        {"type": "server_tool_use", "id": "srvtoolu_ts2", "name": "tool_search_tool_bm25",
         "input": {"query": "backup"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_ts2", "content": {
            "type": "tool_search_tool_result_error", "error_code": "unavailable",
            "error_message": "The tool search service is down."}},
        {"type": "text", "text": "Two steps, then."}]},
    {"role": "user", "content": "And drop the old table?"},
    {"id": "msg_01Refuse", "type": "message", "role": "assistant", "model": "claude-opus-4-5",
     "content": [], "stop_reason": "refusal", "stop_sequence": None,
     "usage": {"input_tokens": 812, "output_tokens": 0}},
]


def test_newest_reply_blocks_read_in_words_not_json(tmp_path):
    path = tmp_path / "newest" / "conversation.json"
    path.parent.mkdir()
    path.write_text(json.dumps(NEWEST_REPLY), encoding="utf-8")
    assert detect.detect_file(path).format == "anthropic-messages"
    idx = SessionIndex(path).build()
    # the prompt's own words are the title, not the text of the documents sent with it
    assert idx.summary.title == "Plan the database migration."
    assert {k: c.status for k, c in idx.calls.calls.items()} == {
        "srvtoolu_adv1": "completed", "srvtoolu_adv2": "completed", "srvtoolu_ts1": "completed",
        "srvtoolu_ts2": "error"}
    evs = events(idx)
    reply = evs[1]
    assert [(b.kind, getattr(b, "text", None)) for b in reply.blocks[:3]] == [
        ("notice", "context compacted: the conversation before this point is replaced by this summary"),
        ("text", "The user wants to move the orders table to Postgres; schema.sql holds 3 tables."),
        ("notice", "context compaction failed: no summary was produced")]
    assert not any(b.kind == "data" for b in reply.blocks)  # no block left as raw JSON
    results = {r.tool_use_id: [b.text for b in r.content] for r in reply.tool_results()}
    assert results == {
        "srvtoolu_adv1": ["Migrate in two steps."],
        "srvtoolu_adv2": ["the advisor's answer is encrypted: only the model can read it"],
        "srvtoolu_ts1": ["tools found: db_query, db_migrate"],
        "srvtoolu_ts2": ["error: unavailable — The tool search service is down."]}
    # a refusal with no content was hidden as an empty message: it now says why it is empty
    refusal = evs[3]
    assert not refusal.hidden and refusal.model == "claude-opus-4-5"
    assert [b.text for b in refusal.blocks] == ["the model refused (stop reason: refusal)"]

    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert "schema.sql holds 3 tables." in html and "the model refused" in html
    assert "tools found: db_query, db_migrate" in html
    assert "EuYBCkQIBxgCIkA" not in html  # the advisor's encrypted answer is for the model only


def test_replies_logged_without_their_requests_answer_the_calls_before_them(tmp_path):
    # `Message.model_dump_json()` of each reply, one per line (anthropic-sdk-python types/message.py:
    # {id, type: "message", role, model, content, stop_reason, usage}); the requests, which carried
    # the tool results, are not kept
    path = tmp_path / "replies" / "replies.jsonl"
    path.parent.mkdir()
    replies = [
        {"id": "msg_01A", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
         "content": [{"type": "text", "text": "Let me look."},
                     {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "a.py"}}],
         "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 30}},
        {"id": "msg_01B", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
         "content": [{"type": "tool_use", "id": "toolu_02", "name": "read_file", "input": {"path": "b.py"}}],
         "stop_reason": "tool_use", "usage": {"input_tokens": 150, "output_tokens": 20}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
    os.utime(path, (1, 1))  # long quiet: the session has ended
    idx = SessionIndex(path).build()
    first, last = idx.calls.calls["toolu_01"], idx.calls.calls["toolu_02"]
    # the second reply could only be asked for with the first call's result: answered, not
    # "never answered"; the last call has nothing after it
    assert (first.status, first.result) == ("completed", ("main", 1))
    assert last.status == "pending" and idx.unanswered(last)


def test_a_call_made_by_code_execution_says_so():
    # programmatic tool calling: anthropic-sdk-python src/anthropic/types/beta/beta_tool_use_block.py
    # (1316de75): `caller` is `{type: direct}` or a server tool (`{type: code_execution_20250825,
    # tool_id}`) that made the call from the code it ran
    ev = anthropic_messages.event({"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_code", "name": "code_execution",
         "input": {"code": "rows = await query_db('select 1')"}},
        {"type": "tool_use", "id": "toolu_q", "name": "query_db", "input": {"sql": "select 1"},
         "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_code"}},
        {"type": "tool_use", "id": "toolu_d", "name": "left_click", "input": {"coordinate": [1, 2]},
         "caller": {"type": "direct"}, "toolset_name": "browser"}]}, R)
    assert [(b.kind, getattr(b, "text", None)) for b in ev.blocks] == [
        ("tool_use", None),
        ("notice", "called from code execution (srvtoolu_code), not by the model directly"),
        ("tool_use", None), ("tool_use", None)]


def test_an_empty_thinking_summary_part_of_a_kind_not_known_keeps_what_it_holds():
    # Cline keeps a thinking block empty with its summary beside it: a summary part of a newer
    # kind, with no `text`, was read as nothing (the thinking shown empty)
    content = [{"type": "thinking", "thinking": "", "signature": "Er1",
                "summary": [{"type": "summary_text", "text": "Read the config first."},
                            {"type": "summary_image_caption", "caption": "the config's diagram"}]},
               {"type": "text", "text": "Done."}]
    ev = anthropic_messages.event({"role": "assistant", "content": content}, Ref("main", 1, 0, 1))
    (thought,) = [b for b in ev.blocks if b.kind == "thinking"]
    assert thought.text.startswith("Read the config first.")
    assert "the config's diagram" in thought.text


def test_a_citation_without_a_title_or_of_a_kind_not_known_is_named_by_its_words():
    # an untitled document's citation, and one of a newer kind, were counted but not named: the
    # sources line left them out when another citation had a title
    ev = anthropic_messages.event({"role": "assistant", "content": [
        {"type": "text", "text": "It is 21 °C.", "citations": [
            {"type": "web_search_result_location", "url": "https://weather.example/paris", "title": "Paris weather",
             "cited_text": "21 °C"},
            {"type": "char_location", "document_title": None, "cited_text": "sunny all week", "document_index": 0},
            {"type": "map_location", "place": "Paris, France"}]}]}, R)
    assert ev.blocks[-1].text == ("sources: Paris weather — https://weather.example/paris; "
                                  "char location: “sunny all week”; map location: “Paris, France”")


# The code execution's file editor, code that called a server tool, the MCP connector and a refusal
# with its category, as the Messages API returns them today (anthropic-sdk-python 2.14.0
# src/anthropic/types/: text_editor_code_execution_create_result_block.py,
# text_editor_code_execution_str_replace_result_block.py, encrypted_code_execution_result_block.py,
# refusal_stop_details.py, message.py `stop_details`; beta/beta_mcp_tool_use_block.py `server_name`).
# The API docs' own example of an edit names its result `text_editor_code_execution_result` and
# writes the hunk's fields in camelCase: both are read.
NEWER_SERVER_TOOLS = [
    {"role": "user", "content": "Turn debug off in config.json and add a script."},
    {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-opus-4-7", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_e1", "name": "text_editor_code_execution",
         "input": {"command": "str_replace", "path": "/tmp/config.json",
                   "old_str": '"debug": true', "new_str": '"debug": false'}},
        {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_e1", "content": {
            "type": "text_editor_code_execution_str_replace_result", "old_start": 3, "old_lines": 1,
            "new_start": 3, "new_lines": 1, "lines": ['-  "debug": true', '+  "debug": false']}},
        {"type": "server_tool_use", "id": "srvtoolu_e2", "name": "text_editor_code_execution",
         "input": {"command": "str_replace", "path": "/tmp/run.sh", "old_str": "a", "new_str": "b\nc"}},
        {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_e2", "content": {
            "type": "text_editor_code_execution_result", "oldStart": 7, "oldLines": 1,
            "newStart": 7, "newLines": 2, "lines": ["-a", "+b", "+c"]}},
        {"type": "server_tool_use", "id": "srvtoolu_e3", "name": "text_editor_code_execution",
         "input": {"command": "create", "path": "/tmp/hello.py", "file_text": "print('hello')\n"}},
        {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_e3", "content": {
            "type": "text_editor_code_execution_create_result", "is_file_update": False}},
        {"type": "server_tool_use", "id": "srvtoolu_e4", "name": "text_editor_code_execution",
         "input": {"command": "create", "path": "/tmp/config.json", "file_text": "{}\n"}},
        {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_e4", "content": {
            "type": "text_editor_code_execution_result", "is_file_update": True}},
        {"type": "server_tool_use", "id": "srvtoolu_c1", "name": "code_execution",
         "input": {"code": "hits = await web_search(query='python 3.14 release')\nprint(hits[0])"}},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_c1", "content": {
            "type": "encrypted_code_execution_result", "encrypted_stdout": "EqQBCioIARgBIiQ0YjU5",
            "stderr": "", "return_code": 0, "content": []}},
        {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "create_issue", "server_name": "github",
         "input": {"title": "Debug left on"}},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": False,
         "content": [{"type": "text", "text": "Issue #42 created"}]},
        {"type": "text", "text": "Done. I can't help with the rest of the request."}],
     "stop_reason": "refusal",
     "stop_details": {"type": "refusal", "category": "cyber",
                      "explanation": "The request could enable malware development."},
     "usage": {"input_tokens": 900, "output_tokens": 120}},
]


def test_file_edits_hidden_output_mcp_servers_and_refusal_reasons_read_in_words(tmp_path):
    path = tmp_path / "newer" / "conversation.json"
    path.parent.mkdir()
    path.write_text(json.dumps(NEWER_SERVER_TOOLS), encoding="utf-8")
    idx = SessionIndex(path).build()
    assert {k: (c.name, c.status) for k, c in idx.calls.calls.items()} == {
        "srvtoolu_e1": ("text_editor_code_execution", "completed"),
        "srvtoolu_e2": ("text_editor_code_execution", "completed"),
        "srvtoolu_e3": ("text_editor_code_execution", "completed"),
        "srvtoolu_e4": ("text_editor_code_execution", "completed"),
        "srvtoolu_c1": ("code_execution", "completed"),
        # the connector's call names its server, as an MCP tool's call in Claude Code does
        "mcptoolu_01": ("mcp__github__create_issue", "completed")}
    reply = events(idx)[1]
    results = {r.tool_use_id: [b.text for b in r.content] for r in reply.tool_results()}
    assert results == {
        "srvtoolu_e1": ["file edited at line 3 (1 line → 1 line)"],
        "srvtoolu_e2": ["file edited at line 7 (1 line → 2 lines)"],
        "srvtoolu_e3": ["file created"], "srvtoolu_e4": ["file overwritten"],
        "srvtoolu_c1": ["stdout encrypted: only the model can read it", "exit code 0"],
        "mcptoolu_01": ["Issue #42 created"]}
    assert not any(b.kind == "data" for r in reply.tool_results() for b in r.content)
    assert reply.blocks[-1].text == ("the model refused (stop reason: refusal) — category: cyber. "
                                     "The request could enable malware development.")

    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert '<details class="data"' not in html and "EqQBCioIARgBIiQ0YjU5" not in html  # no raw JSON card
    assert "file edited at line 3" in html and "category: cyber" in html
    # the editor's calls read as what they do to the file: a diff of the edit, the file written
    for call, view in [("e1", "edit"), ("e2", "edit"), ("e3", "write"), ("e4", "write")]:
        assert f'<div class="tool tool-{view}" id="tc-srvtoolu_{call}"' in html
    assert html.count('class="diff') >= 2 and '<span class="s1">\'hello\'</span>' in html
    # the edit's diff is numbered as the file's lines, from the hunk its result gives
    edit = html[html.index('id="tc-srvtoolu_e2"'):html.index('id="tc-srvtoolu_e3"')]
    assert re.findall(r'<td class="no">(\d+)</td>', edit) == ["7", "7", "8"]
    assert '<span class="mcp-tag">MCP</span> github</span> <span class="mcp-tool">create_issue</span>' in html


def test_tools_added_and_withdrawn_and_an_mcp_listing_are_said_in_words(tmp_path):
    # mid-conversation tool changes and the MCP connector's listing, as anthropic-sdk-python 2.14.0
    # writes them (src/anthropic/types/beta/: beta_request_tool_addition_block_param.py,
    # beta_request_tool_removal_block_param.py, beta_tool_change_*_param.py,
    # beta_mcp_tool_listing_block.py, beta_compaction_block.py `tool_changes`,
    # beta_system_message_param.py `clear_at`): they were raw JSON cards
    doc = {"system": "You answer questions about repositories.", "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "How does flask register blueprints?"},
            {"type": "tool_addition", "tool": {"type": "mcp_toolset_reference", "server_name": "deepwiki"}}]},
        {"role": "assistant", "content": [
            {"type": "mcp_tool_listing", "mcp_server_name": "deepwiki", "tools": [
                {"name": "ask_question", "description": "Ask a question about a repository\nSlow.",
                 "input_schema": {}},
                {"name": "read_wiki_structure", "input_schema": {}}]},
            {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "ask_question", "server_name": "deepwiki",
             "input": {"repoName": "pallets/flask", "question": "blueprints?"}},
            {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": False,
             "content": [{"type": "text", "text": "With app.register_blueprint(bp)."}]},
            {"type": "text", "text": "With `app.register_blueprint(bp)`."}]},
        {"role": "system", "clear_at": "next_user_message", "content": [
            {"type": "text", "text": "Answer in French from now on."},
            {"type": "tool_removal", "tool": {"type": "mcp_tool_reference", "server_name": "deepwiki",
                                              "name": "read_wiki_structure"}},
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": {
                "name": "get_time", "description": "The time now", "input_schema": {}}}}]},
        {"role": "user", "content": "Et les vues ?"},
        {"role": "assistant", "content": [
            {"type": "compaction", "content": "The user asks about flask in French.", "tool_changes": [
                {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}}]},
            {"type": "text", "text": "Avec `add_url_rule`."}]}]}
    path = tmp_path / "tools" / "conversation.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc), encoding="utf-8")
    idx = SessionIndex(path).build()
    said = [[getattr(b, "text", b.kind) for b in e.blocks] for e in events(idx)]
    assert said[1] == ["How does flask register blueprints?",
                       "tool made available: every tool of MCP server deepwiki"]
    assert said[2][:2] == ["MCP server deepwiki lists 2 tools",
                           "ask_question — Ask a question about a repository\nread_wiki_structure"]
    assert said[3] == ["Answer in French from now on.",
                       "tool withdrawn: read_wiki_structure (MCP server deepwiki)",
                       "tool made available: get_time",
                       "shown to the model until the next user message only"]
    assert said[5][2] == "in the compacted part: tool withdrawn: get_weather"
    app = create_app({"ROOTS": [str(path.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', client.get("/").get_data(as_text=True)))
    html = client.get(link).get_data(as_text=True)
    assert '<details class="data"' not in html  # no block left a raw JSON card
    assert "tool made available: every tool of MCP server deepwiki" in html
