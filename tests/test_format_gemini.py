"""The Gemini family: Gemini CLI's chat recordings (the JSON document and the JSONL log), its
`/chat save` checkpoints (Gemini API `Content[]`), and Qwen Code's JSONL sessions.
Fixtures: test_data/formats/{gemini-cli,gemini-api,qwen-code} (see their READMEs)."""

import json
import os
import shutil

import pytest

from viewer.formats import detect, gemini, gemini_cli, qwen_code
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.store import Store
from viewer.timeline import load_events, raw_record

from conftest import ROOT, sole_page

FIXTURES = ROOT / "test_data" / "formats"
LEGACY = FIXTURES / "gemini-cli" / "legacy-json" / "session-2025-10-18T14-57-f86f5318.json"
JSONL = FIXTURES / "gemini-cli" / "jsonl-recording" / "chats" / "session-2026-10-05T21-32-0f0e0d0c.jsonl"
FORK = FIXTURES / "gemini-cli" / "ibm-bob-fork" / "session-2026-05-17T14-10-a0b1c2d3.json"
CHECKPOINT = FIXTURES / "gemini-api" / "chat-save-checkpoint" / "checkpoint-docs.json"
HISTORY = FIXTURES / "gemini-api" / "chat-save-checkpoint-history" / "checkpoint-readme.json"
QWEN = FIXTURES / "qwen-code" / "chats" / "2c9b7a1e-4f3d-4e2a-9b8c-7d6e5f4a3b2c.jsonl"
R = Ref("main", 1, 0, 1)
OLD = 1_700_000_000


def events(idx):
    return load_events(idx, "main", 0, len(idx.threads["main"]))


def old_copy(src, tmp_path):
    """A copy written long ago: the session has ended."""
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    os.utime(dst, (OLD, OLD))
    return dst


def states(idx):
    return {c.id: c.state for c in idx.calls.calls.values()}


def test_legacy_document_calls_thoughts_notices_and_usage(tmp_path):
    assert detect.detect_file(LEGACY) == detect.Detected("gemini-cli", "document")
    idx = SessionIndex(old_copy(LEGACY, tmp_path)).build()
    evs = events(idx)
    doc = json.loads(LEGACY.read_text())
    assert len(evs) == len(doc["messages"]) + 1  # the session's metadata, hidden
    assert evs[0].hidden and evs[0].kind == "session"
    by_id = {e.source_id: e for e in evs}
    # every call paired with its result in its own card, each with the state its status names
    assert states(idx) == {
        "replace-1760799455410-2b173df6d077b": "completed",
        "read_file-1760799455411-9e0f1a2b3c4d5": "completed",
        "run_shell_command-1760799482772-1a2b3c4d5e6f7": "error",
        "write_file-1760799482773-7f6e5d4c3b2a1": "cancelled"}
    assert not idx.calls.orphans and not any(idx.unanswered(c) for c in idx.calls.calls.values())
    # from the message that asked for it to the time its outcome was recorded
    assert idx.calls.calls["replace-1760799455410-2b173df6d077b"].duration == pytest.approx(3.791)
    reply = by_id["0c7e2f4a-6d0b-4b6e-8a3c-2d5f1e9b7c02"]
    assert [b.kind for b in reply.blocks] == ["thinking", "text", "tool_use", "tool_result",
                                              "tool_use", "tool_result"]
    assert reply.blocks[0].text.startswith("**Spotting the bug**\nThe end index adds 1")
    assert "**Planning the edit**" in reply.blocks[0].text
    image = reply.blocks[5].content
    assert [b.kind for b in image] == ["text", "media"] and image[1].media_type == "image/png"
    failed = by_id["3b9d6c1e-7a2f-4e8b-9c0d-4e6f8a1b2c03"].tool_results()
    assert failed[0].is_error and failed[0].content[0].text.startswith("Command exited with code 1")
    # what the person typed, not the @-file expansion the model got
    prompt = by_id["91ff4a35-0f7b-492d-8a04-ee206be11ec6"]
    assert prompt.text() == "Fix the off-by-one in @src/pager.py and show me the logo"
    assert "def page" in raw_record(idx, prompt.id)[0].decode()
    # info / warning / error records are notices; an unknown record type a quiet generic card
    kinds = [(e.role, e.kind) for e in evs if e.kind in ("info", "warning", "error", "unknown")]
    assert kinds == [("status", "info"), ("status", "warning"), ("error", "error"),
                     ("compression", "unknown")]
    s = idx.summary
    assert s.title == "Fix the off-by-one in @src/pager.py and show me the logo"
    assert s.models == ["gemini-2.5-pro", "gemini-2.5-flash"]
    assert s.errors == 2  # the failed command and the API error, not the cancelled call
    assert reply.usage["promptTokenCount"] == 8123 and s.usage["tokens"] == 27730
    assert s.cost and s.cost > 0  # both models are in the price table


def test_jsonl_log_is_folded_one_card_per_message(tmp_path):
    found = detect.detect_file(JSONL)
    assert (found.format, found.mode) == ("gemini-cli", "document")
    lines = [json.loads(x) for x in JSONL.read_text().splitlines()]
    ids = [r["id"] for r in lines if "id" in r]
    assert len(ids) > len(set(ids))  # messages re-appended as they change
    idx = SessionIndex(old_copy(JSONL, tmp_path)).build()
    evs = events(idx)
    shown = [e.source_id for e in evs if e.source_id]
    assert shown == list(dict.fromkeys(ids))  # each message once, where it first appeared
    first = next(e for e in evs if e.source_id == "6a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c02")
    # its last version: the call succeeded and the tokens came
    assert first.tool_results()[0].content[0].text == "orders  users  sessions"
    assert first.usage["totalTokenCount"] == 5295
    # the rewind stays in place; what it dropped says so; the summary update is no card
    rewind = next(e for e in evs if e.kind == "rewind")
    assert "8c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e04" in rewind.blocks[0].text
    dropped = [e.source_id for e in evs if e.blocks and e.blocks[0].kind == "notice"
               and e.blocks[0].text.startswith("dropped by a /rewind")]
    assert dropped == ["8c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e04", "9d4e5f6a-7b8c-4d9e-8f0a-2b3c4d5e6f05"]
    assert evs[0].blocks[0].text == "session · summary: List and count the tables of app.db"
    st = states(idx)
    assert st["run_shell_command-1791322392500-dd44ee55ff66a"] == "awaiting_permission"
    assert st["run_shell_command-1791322369120-aa11bb22cc33d"] == "completed"
    # the session ended while the last call ran: it was never answered
    last = idx.calls.calls["run_shell_command-1791322422000-0a1b2c3d4e5f6"]
    assert last.status == "executing" and idx.unanswered(last)
    # titled as /resume names it: the summary the CLI wrote ($set), over the first prompt
    assert idx.summary.title == "List and count the tables of app.db"


def test_jsonl_log_read_as_it_grows(tmp_path):
    """A recording being written: the metadata line alone, then a prompt, then the reply whose
    call runs and then succeeds (the same message appended again). Each refresh shows it as it is."""
    lines = JSONL.read_text().splitlines(keepends=True)
    path = tmp_path / "chats" / JSONL.name
    path.parent.mkdir()
    path.write_text(lines[0])
    assert detect.detect_file(path).format == "gemini-cli"
    idx = SessionIndex(path).build()
    assert len(idx.threads["main"]) == 1
    with open(path, "a") as f:
        f.writelines(lines[1:6])  # the prompt, the reply, the reply with its call executing
        f.write(lines[6][:40])  # the next version, half written
    idx.refresh()
    evs = events(idx)
    assert [e.role for e in evs] == ["system", "user", "assistant"]
    call = "run_shell_command-1791322369120-aa11bb22cc33d"
    assert idx.calls.calls[call].status == "executing" and "unparsed" not in idx.threads["main"].kinds
    with open(path, "a") as f:
        f.write(lines[6][40:])
    idx.refresh()
    assert len(events(idx)) == 3 and idx.calls.calls[call].status == "completed"


def test_fork_model_messages_and_streamed_thoughts():
    idx = SessionIndex(FORK).build()
    reply = events(idx)[2]
    assert reply.role == "assistant" and reply.author == "bob-shell"
    assert reply.model == "ibm/granite-4-h-small"
    thinking = [b for b in reply.blocks if b.kind == "thinking"]
    assert [b.text for b in thinking] == ["The user wants a review of the routes."]
    assert states(idx) == {"tool-1": "completed"}


def test_checkpoint_pairs_calls_without_ids_by_name():
    assert detect.detect_file(CHECKPOINT) == detect.Detected("gemini-api", "document")
    idx = SessionIndex(CHECKPOINT).build()
    evs = events(idx)
    # the CLI's set-up turn is context, not the title
    assert [b.kind for b in evs[0].blocks] == ["context"]
    assert idx.summary.title == "What is in the docs folder? Also describe this diagram."
    assert [b.kind for b in evs[2].blocks] == ["text", "media"]
    assert [b.kind for b in evs[3].blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert states(idx) == {"list_directory#4.3": "completed", "read_file#4.4": "error"}
    results = evs[4].tool_results()
    assert evs[4].role == "tool" and results[1].content[0].text.startswith("File not found")
    assert not idx.calls.orphans
    # the source view shows the record as written, without the ids its place gave it
    assert json.loads(raw_record(idx, evs[4].id)[0]) == json.loads(CHECKPOINT.read_text())[4]


def test_checkpoint_history_object():
    idx = SessionIndex(HISTORY).build()
    assert states(idx) == {"read_file-1791000000000-1f2e3d4c5b6a7": "completed"}
    assert idx.summary.title == "Summarise README.md"


def test_qwen_records(tmp_path):
    assert detect.detect_file(QWEN) == detect.Detected("qwen-code", "jsonl")
    idx = SessionIndex(old_copy(QWEN, tmp_path)).build()
    evs = events(idx)
    assert states(idx) == {"call_7f1c2d": "completed", "call_8a2b3c": "completed",
                           "call_9d4e5f": "error", "call_a1b2c3": "cancelled"}
    assert not idx.calls.orphans
    first = evs[2]
    assert [b.kind for b in first.blocks] == ["thinking", "text", "tool_use"]
    assert first.usage["promptTokenCount"] == 4120 and first.model == "qwen3-coder-plus"
    notices = {e.kind: (e.hidden, e.blocks[0].text) for e in evs if e.role == "system"}
    assert notices["system:chat_compression"] == (False, "conversation compressed: 52,000 → 9,100 tokens")
    assert notices["system:slash_command"] == (False, "/stats")
    assert notices["system:ui_telemetry"][0] and notices["system:some_future_subtype"][0]
    assert idx.summary.title == "Why does add(2, 2) return 5?"
    assert idx.summary.usage["unpriced"] == ["qwen3-coder-plus"]


def test_sniffers_keep_to_their_own():
    cc = {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
    qw = {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "parts": [{"text": "hi"}]}}
    assert detect.detect_records([cc]) == ("claude-code", 3)
    assert detect.detect_records([qw]) == ("qwen-code", 3)
    assert gemini.sniff({"role": "model", "parts": [{"text": "x"}]}) == 2
    assert gemini.sniff({"role": "assistant", "parts": [{"type": "text", "text": "x"}]}) == 0  # Wolo
    assert gemini_cli.sniff({"sessionId": "s", "projectHash": "h"}) == 3
    assert gemini_cli.sniff({"id": "1", "type": "message", "content": "x"}) == 0
    assert qwen_code.sniff({"type": "system", "uuid": "u", "parentUuid": None}) == 0


@pytest.mark.parametrize("rec", [
    {"id": "x", "type": "gemini", "content": None, "toolCalls": "not a list", "thoughts": [3, None]},
    {"id": "x", "type": "gemini", "content": [7, {"weird": 1}], "toolCalls": [{"status": "success"}]},
    {"id": "x", "type": "user", "content": {"functionResponse": "nope"}},
    {"$rewindTo": "nowhere"},
])
def test_odd_gemini_records_never_crash(rec):
    ev = gemini_cli.event(rec, R)
    assert ev.format == "gemini-cli"


def test_gemini_home_lists_sessions_and_checkpoints(tmp_path):
    """The viewer pointed at ~/.gemini/tmp: each recording and checkpoint listed with its title,
    model and time; the prompt log beside them (logs.json) is not a session."""
    project = tmp_path / "tmp" / "79b6fa86e3c0"
    (project / "chats").mkdir(parents=True)
    shutil.copy(LEGACY, project / "chats" / LEGACY.name)
    shutil.copy(JSONL, project / "chats" / JSONL.name)
    shutil.copy(CHECKPOINT, project / CHECKPOINT.name)
    (project / "logs.json").write_text(json.dumps([{"sessionId": "s", "messageId": 0, "type": "user",
                                                    "message": "hi", "timestamp": "2025-10-18T14:57:28Z"}]))
    st = Store([tmp_path / "tmp"])
    rows = {}
    for ref in st.sessions():
        st.index(ref.key)
        rows[os.path.basename(ref.path)] = st.summary_of(ref.key)
    assert set(rows) == {LEGACY.name, JSONL.name, CHECKPOINT.name}
    legacy, log = rows[LEGACY.name], rows[JSONL.name]
    assert (legacy.format, legacy.title, legacy.models) == (
        "gemini-cli", "Fix the off-by-one in @src/pager.py and show me the logo",
        ["gemini-2.5-pro", "gemini-2.5-flash"])
    assert legacy.started == 1760799440.001
    assert (log.format, log.title, log.models) == ("gemini-cli", "List and count the tables of app.db",
                                                   ["gemini-3-pro-preview"])
    assert rows[CHECKPOINT.name].format == "gemini-api"


def test_qwen_home_lists_its_sessions(tmp_path):
    chats = tmp_path / "projects" / "-home-li-calc" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(QWEN, chats / QWEN.name)
    st = Store([tmp_path / "projects"])
    (ref,) = st.sessions()
    st.index(ref.key)
    row = st.summary_of(ref.key)
    assert (row.format, row.title, row.models, row.started) == (
        "qwen-code", "Why does add(2, 2) return 5?", ["qwen3-coder-plus"], 1772438400.0)


def test_the_summary_titles_the_session_as_resume_lists_it(tmp_path):
    """Gemini CLI's session browser names a session by its `summary` when it has one, else by its
    first prompt (google-gemini/gemini-cli packages/cli/src/utils/sessionUtils.ts, `displayName:
    content.summary ? … : firstUserMessage`); the summary is the document's field, or a `$set`
    line of the JSONL recording (chatRecordingService.ts `saveSummary` → `updateMetadata`)."""
    doc = json.loads(LEGACY.read_text())
    doc["summary"] = "Fix the pager's off-by-one"
    legacy = tmp_path / LEGACY.name
    legacy.write_text(json.dumps(doc))
    assert SessionIndex(legacy).build().summary.title == "Fix the pager's off-by-one"
    # a recording read as it grows: the first prompt, until the summary is written
    lines = JSONL.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"summary"' in line)
    path = tmp_path / JSONL.name
    path.write_bytes(b"".join(lines[:at]))
    idx = SessionIndex(path).build()
    assert idx.summary.title == "List the tables in app.db"
    with path.open("ab") as f:
        f.write(lines[at])
    idx.refresh()
    assert idx.summary.title == "List and count the tables of app.db"


def test_what_the_cli_showed_of_a_result_without_text_is_drawn_as_the_cli_drew_it(tmp_path):
    """A ToolCallRecord's `resultDisplay` is what the CLI showed (google-gemini/gemini-cli
    packages/core/src/tools/tools.ts: ToolResultDisplay = string | FileDiff | AnsiOutput |
    TodoList | SubagentProgress; packages/cli/src/ui/components/messages/ToolResultDisplay.tsx
    draws each; a FileDiff's `fileDiff` is jsdiff's createPatch, 'Current' / 'Proposed'; an
    AnsiOutput is lines of terminalSerializer.ts tokens). Where the result's Parts hold no text,
    only a string display was shown before: a diff, terminal output, a todo list or a sub-agent's
    progress left the call "(empty result)"."""
    def call(cid, name, args, display, result=None):
        return {"id": cid, "name": name, "args": args, "status": "success",
                "result": result if result is not None else [
                    {"functionResponse": {"id": cid, "name": name, "response": {"output": ""}}}],
                "timestamp": "2026-11-20T10:00:05.000Z", "displayName": name, "description": "",
                "resultDisplay": display, "renderOutputAsMarkdown": False}

    diff = ("Index: cart.py\n===================================================================\n"
            "--- cart.py\tCurrent\n+++ cart.py\tProposed\n@@ -1,2 +1,2 @@\n def total(items):\n"
            "-    return sum(items)\n+    return round(sum(items), 2)\n")
    calls = [
        call("replace-1", "replace", {"file_path": "/w/cart.py", "instruction": "round the total"},
             {"fileDiff": diff, "fileName": "cart.py", "filePath": "/w/cart.py",
              "originalContent": "def total(items):\n    return sum(items)\n",
              "newContent": "def total(items):\n    return round(sum(items), 2)\n",
              "diffStat": {"model_added_lines": 1, "model_removed_lines": 1}}, result=[]),
        call("run_shell_command-2", "run_shell_command", {"command": "pytest -q"},
             [[{"text": "3 passed", "bold": True, "italic": False, "underline": False, "dim": False,
                "inverse": False, "fg": "#00cd00", "bg": ""},
               {"text": ", 1 <script>failed</script>", "bold": False, "italic": False, "underline": False,
                "dim": False, "inverse": False, "fg": "#cd0000", "bg": ""}]]),
        call("write_todos-3", "write_todos", {"todos": []},
             {"todos": [{"description": "Round the cart total", "status": "completed"},
                        {"description": "Run the tests", "status": "in_progress"},
                        {"description": "Update the <changelog>", "status": "pending"}]}),
        call("codebase_investigator-4", "codebase_investigator", {"objective": "Find the retry policy"},
             {"isSubagentProgress": True, "agentName": "codebase_investigator", "state": "completed",
              "recentActivity": [{"id": "a1", "type": "tool_call", "content": "grep_search", "status": "completed"}],
              "result": "The retry policy lives in **src/net/retry.ts**."}, result=[])]
    chats = tmp_path / "tmp" / "4ea86ddd" / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-11-20T10-00-5e6f7a8b.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"sessionId": "5e6f7a8b-1111-4222-8333-444455556666", "projectHash": "4ea86ddd",
         "startTime": "2026-11-20T10:00:00.000Z", "lastUpdated": "2026-11-20T10:00:05.000Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-11-20T10:00:01.000Z", "type": "user", "content": [{"text": "Round the cart total"}]},
        {"id": "g1", "timestamp": "2026-11-20T10:00:02.000Z", "type": "gemini", "content": [{"text": "On it."}],
         "model": "gemini-3-pro-preview", "toolCalls": calls}]) + "\n")
    idx = SessionIndex(old_copy(path, tmp_path)).build()
    results = {r.tool_use_id: r for e in events(idx) for r in e.tool_results()}
    assert [(b.kind, b.text) for b in results["replace-1"].content] == [
        ("notice", "changed /w/cart.py"), ("text", diff.split("\n", 2)[2])]
    (shell,) = results["run_shell_command-2"].content
    assert shell.text == "\x1b[1;38;2;0;205;0m3 passed\x1b[0m\x1b[38;2;205;0;0m, 1 <script>failed</script>\x1b[0m"
    assert [b.text for b in results["write_todos-3"].content] == [
        "todo list", "☑ Round the cart total\n◐ Run the tests\n☐ Update the <changelog>"]
    assert [b.text for b in results["codebase_investigator-4"].content] == [
        "sub-agent codebase_investigator: completed", "[completed] grep_search",
        "The retry policy lives in **src/net/retry.ts**."]
    assert set(states(idx).values()) == {"completed"}

    html = sole_page(tmp_path / "tmp", tmp_path)

    def result(cid):
        start = html.index(f'id="tc-{cid}-result"')
        return html[start:html.index('<div class="call-thread"', start)]

    assert "(empty result)" not in html
    edit = result("replace-1")
    assert 'class="diff' in edit and "Index:" not in edit  # drawn as an edit's diff is: the change marked
    assert "return <mark>round(</mark>sum(items)<mark>, 2)</mark>" in edit
    out = result("run_shell_command-2")
    assert "a-bold" in out and "a-f" in out and "3 passed" in out
    assert "&lt;script&gt;failed&lt;/script&gt;" in out and "<script>failed" not in out and "\x1b" not in out
    todos = result("write_todos-3")
    assert "☑ Round the cart total" in todos and "Update the &lt;changelog&gt;" in todos
    agent = result("codebase_investigator-4")
    assert "sub-agent codebase_investigator: completed" in agent
    assert "[completed] grep_search" in agent and "The retry policy lives in **src/net/retry.ts**." in agent


def planned(tmp_path, call: dict):
    """A Gemini CLI chat of a prompt and one reply making a `write_todos` call (`call`: its fields
    besides id, name, status and time); the chat file's path."""
    chats = tmp_path / "tmp" / "4ea86ddd" / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-11-20T10-00-5e6f7a8b.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"sessionId": "5e6f7a8b-1111-4222-8333-444455556666", "projectHash": "4ea86ddd",
         "startTime": "2026-11-20T10:00:00.000Z", "lastUpdated": "2026-11-20T10:00:05.000Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-11-20T10:00:01.000Z", "type": "user", "content": [{"text": "Plan it"}]},
        {"id": "g1", "timestamp": "2026-11-20T10:00:02.000Z", "type": "gemini", "content": [{"text": "Planned."}],
         "model": "gemini-3-pro-preview", "toolCalls": [
             {"id": "write_todos-1", "name": "write_todos", "status": "success",
              "timestamp": "2026-11-20T10:00:03.000Z", **call}]}]) + "\n")
    return path


def test_a_write_todos_call_reads_as_the_checklist_it_sets(tmp_path):
    """Gemini CLI's write_todos takes `todos: [{description, status}]`, a status one of pending,
    in_progress, completed, cancelled (gemini-cli packages/core/src/tools/write-todos.ts): its
    input is the list drawn as a checklist, as Claude Code's TodoWrite is, not a JSON object."""
    todos = [{"description": "Round the cart total", "status": "completed"},
             {"description": "Run the <tests>", "status": "in_progress"},
             {"description": "Ship it", "status": "pending"},
             {"description": "Rewrite in Rust", "status": "cancelled"}]
    planned(tmp_path, {"args": {"todos": todos}, "displayName": "WriteTodos", "description": "",
                       "result": [{"functionResponse": {"id": "write_todos-1", "name": "write_todos",
                                                        "response": {"output": "Successfully updated the todo list."}}}],
                       "resultDisplay": {"todos": todos}, "renderOutputAsMarkdown": False})
    html = sole_page(tmp_path / "tmp", tmp_path)
    head = html[html.index('id="tc-write_todos-1"'):]
    assert "4 items, 1 done" in head[:2000]  # the call's head
    checklist = head[head.index('<ul class="todos">'):]
    checklist = checklist[:checklist.index("</ul>")]
    assert '<li class="todo completed"><span class="box">☑</span> Round the cart total' in checklist
    assert '<li class="todo in_progress"><span class="box">◐</span> Run the &lt;tests&gt;' in checklist
    assert '<li class="todo pending"><span class="box">☐</span> Ship it' in checklist
    assert '<li class="todo cancelled"><span class="box">☒</span> Rewrite in Rust' in checklist
    assert '&#34;todos&#34;' not in head[:head.index('id="tc-write_todos-1-result"')]  # not a JSON object


def test_a_todo_list_shown_with_an_odd_status_reads_its_items_unticked(tmp_path):
    """A TodoList resultDisplay whose item's status is not a word (a list, a number) or whose item
    is no object: its items read as write_todos's input does (tools.todo_items), such a status
    unticked, where a list as status made reading the line raise."""
    display = {"todos": [{"description": "Round the cart total", "status": ["completed"]},
                         {"description": "Run the tests", "status": 3}, "Ship it",
                         {"description": "Rewrite in Rust", "status": "cancelled"}]}
    idx = SessionIndex(planned(tmp_path, {"args": {}, "result": [], "resultDisplay": display})).build()
    (result,) = [r for e in events(idx) for r in e.tool_results()]
    assert [b.text for b in result.content] == [
        "todo list", "☐ Round the cart total\n☐ Run the tests\n☒ Rewrite in Rust"]
