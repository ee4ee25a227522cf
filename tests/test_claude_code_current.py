"""Lines the current Claude Code (2.1.331) writes that earlier readings showed raw or misread, read
as a user reads them.

Where each shape comes from (the CLI's bundled JS in the linux-x64 binary of
`@anthropic-ai/claude-code@2.1.331`, the same one test_data/formats/claude-code records):
- `system` lines: the message factories (`local_command` holding the command as typed or its
  `<command-name>` tags, then `<local-command-stdout|stderr>`; `away_summary {content}`;
  `scheduled_task_fire {content, taskId, cron, prompt}`; `model_fallback {content, trigger,
  originalModel, fallbackModel}`; `microcompact_boundary` with `tokensSaved`), each with the
  envelope the transcript writer adds (`parentUuid`, `isSidechain`, `userType`, `cwd`…).
- the transcript writer's `line-withheld {bytes}` and its table of line types (`custom-title`…).
"""

import re

from test_claude_code_questions import ENV, Lines, card_of, page_of, visible_text

from viewer import tools
from viewer.formats import claude_code, detect
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.timeline import load_events


def test_commands_the_cli_ran_itself_read_as_commands_without_their_tags(tmp_path):
    s = Lines()
    s.prompt("Hi")
    s.add(type="system", subtype="local_command", level="info", isMeta=False,
          content="<command-name>/cost</command-name>\n<command-message>cost</command-message>\n"
                  "<command-args></command-args>")
    s.add(type="system", subtype="local_command", level="info", isMeta=False,
          content="<local-command-stdout>Total cost: $0.12</local-command-stdout>")
    s.add(type="system", subtype="local_command", level="info", isMeta=False, content="/model opus")
    s.add(type="system", subtype="local_command", level="info", isMeta=False,
          content="<local-command-stderr>Unknown model: opus-9</local-command-stderr>",
          commandOutcome={"kind": "failed"})
    path = s.write(tmp_path)
    idx = SessionIndex(path).build()
    evs = [e for e in load_events(idx, "main", 0, len(idx.threads["main"])) if e.role == "system"]
    assert [(e.kind, e.hidden, [b.text for b in e.blocks]) for e in evs] == [
        ("command", False, ["command /cost"]),
        ("command_output", False, ["Total cost: $0.12"]),
        ("command", False, ["command /model opus"]),
        ("command_output", False, ["the command failed", "Unknown model: opus-9"])]
    text = visible_text(page_of(tmp_path))
    assert "command /cost" in text and "<command-message>" not in text


def test_recaps_scheduled_tasks_fallbacks_and_micro_compactions_say_what_they_are():
    def read(**kw):
        return claude_code.event({**ENV, "type": "system", "uuid": "s1", "parentUuid": "p1",
                                  "timestamp": "2026-11-24T10:00:00.000Z", "isMeta": False, **kw},
                                 Ref("main", 1, 0, 1))

    away = read(subtype="away_summary", content="The migration is written; tests pass.")
    assert [b.text for b in away.blocks] == ["recap while you were away", "The migration is written; tests pass."]
    fired = read(subtype="scheduled_task_fire", content="Running scheduled task: check the build",
                 taskId="j1", cron="*/5 * * * *", prompt="check the build")
    assert [b.text for b in fired.blocks] == ["scheduled task fired (*/5 * * * *)",
                                              "Running scheduled task: check the build"]
    assert fired.blocks[0].detail == {"taskId": "j1", "cron": "*/5 * * * *", "prompt": "check the build"}
    fell = read(subtype="model_fallback", content="Opus is overloaded; using Sonnet", level="warning",
                trigger="overloaded", originalModel="claude-opus-4-5", fallbackModel="claude-sonnet-4-5")
    assert [b.text for b in fell.blocks] == ["model fallback: claude-opus-4-5 → claude-sonnet-4-5",
                                             "Opus is overloaded; using Sonnet"]
    micro = read(subtype="microcompact_boundary", content="Context microcompacted", level="info",
                 microcompactMetadata={"trigger": "auto", "preTokens": 90000, "tokensSaved": 12000,
                                       "compactedToolIds": ["t1"]})
    assert micro.blocks[0].text == "Context micro-compacted (auto, 90,000 → 78,000 tokens)"
    assert not any(e.hidden for e in (away, fired, fell, micro))


def test_bookkeeping_of_newer_clis_waits_behind_the_toggle_with_its_payload(tmp_path):
    s = Lines()
    s.prompt("Hi")
    s.add(type="custom-title", customTitle="migration work")
    s.add(type="line-withheld", bytes=1234)
    s.add(type="zeta-ledger", zeta={"v": 1})  # a type of a CLI newer than this reader
    s.add(type="assistant", message={"id": "msg_1", "role": "assistant", "model": "claude-opus-4-5",
                                     "content": [{"type": "text", "text": "Hello."}]})
    path = s.write(tmp_path)
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    title, withheld, newer = evs[1:4]
    # what the line says, not the fields every line carries
    assert (title.hidden, title.blocks[0].text) == (True, "custom title: customTitle=migration work")
    assert (withheld.hidden, withheld.kind, withheld.blocks[0].text) == (True, "line-withheld", "line withheld: bytes=1234")
    assert (newer.hidden, newer.hidden_reason, newer.kind) == (True, "unknown line type", "unknown")
    assert newer.blocks[0].value["zeta"] == {"v": 1}
    assert idx.summary.hidden == 3
    html = page_of(tmp_path)
    assert "is-hidden" not in card_of(html, "Hello.")
    assert "is-hidden" in card_of(html, "zeta-ledger") and "is-hidden" in card_of(html, "line withheld")
    # a line of an unknown type that holds a message is not bookkeeping: it stays in sight
    odd = claude_code.event({"type": "assistant-v2", "uuid": "x", "message": {"content": "hi"}},
                            Ref("main", 1, 0, 1))
    assert odd.kind == "unknown" and not odd.hidden


def test_a_session_opening_with_slash_commands_is_claude_codes(tmp_path):
    # /model then /context before the first prompt: 2.1.331 writes each as two `local_command`
    # lines (the command, then its output) with its envelope (`userType` …). Qwen Code's system
    # records look alike but hold a `systemPayload`: these were read as Qwen Code's, every card empty
    s = Lines()
    for command, said in (("/model", "Set model to claude-opus-4-5"), ("/context", "12k / 200k tokens")):
        s.add(type="system", subtype="local_command", level="info", isMeta=False, content=command)
        s.add(type="system", subtype="local_command", level="info", isMeta=False,
              content=f"<local-command-stdout>{said}</local-command-stdout>")
    s.prompt("Now fix the bug.")
    path = s.write(tmp_path)
    assert detect.detect_file(path).format == "claude-code"
    idx = SessionIndex(path).build()
    assert idx.format == "claude-code" and idx.summary.title == "Now fix the bug."
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert [" ".join(b.text for b in e.blocks) for e in evs] == ["command /model", "Set model to claude-opus-4-5", "command /context",
                                       "12k / 200k tokens", "Now fix the bug."]
    # Qwen Code's own system records stay its own
    qwen = {"uuid": "q1", "parentUuid": None, "sessionId": "s", "timestamp": "2026-03-02T08:00:00.000Z",
            "type": "system", "cwd": "/w", "version": "0.2.1", "subtype": "slash_command",
            "systemPayload": {"phase": "invocation", "rawCommand": "/stats"}}
    assert detect.detect_records([qwen, {**qwen, "uuid": "q2"}])[0] == "qwen-code"


def test_what_a_prompt_brought_along_is_shown_under_it(tmp_path):
    # 2.1.331's attachment builders: an @-mentioned file (`file` with its text), a PDF
    # (`pdf_reference`), the IDE's selection, new diagnostics, an MCP resource; context the CLI adds
    # itself (a todo reminder) stays behind the toggle
    s = Lines()
    s.prompt("Why does @src/parse.py fail on @docs/spec.pdf?")
    s.add(type="attachment", attachment={
        "type": "file", "filename": "/home/u/p/src/parse.py", "displayPath": "src/parse.py", "content": {
            "type": "text", "file": {"filePath": "/home/u/p/src/parse.py", "content": "def parse(s):\n    return int(s)\n",
                                     "numLines": 2, "startLine": 1, "totalLines": 2}}})
    s.add(type="attachment", attachment={"type": "pdf_reference", "filename": "/home/u/p/docs/spec.pdf",
                                         "pageCount": 12, "fileSize": 99999, "displayPath": "docs/spec.pdf"})
    s.add(type="attachment", attachment={"type": "selected_lines_in_ide", "ideName": "VS Code", "lineStart": 1,
                                         "lineEnd": 2, "filename": "/home/u/p/src/parse.py",
                                         "content": "def parse(s):\n    return int(s)", "displayPath": "src/parse.py"})
    s.add(type="attachment", attachment={"type": "diagnostics", "isNew": True, "files": [
        {"uri": "file:///home/u/p/src/parse.py", "diagnostics": [
            {"message": "Missing return type", "severity": "Warning", "range": {"start": {"line": 0, "character": 4}}},
            {"message": "int() of str may raise", "severity": "Error", "range": {"start": {"line": 1, "character": 11}}}]},
        "not a file"]})
    s.add(type="attachment", attachment={"type": "mcp_resource", "server": "docs", "uri": "docs://spec", "name": "spec",
                                         "content": {"contents": [{"uri": "docs://spec", "text": "Numbers may hold _."}]}})
    s.add(type="attachment", attachment={"type": "todo_reminder", "content": [], "itemCount": 0})
    path = s.write(tmp_path)
    idx = SessionIndex(path).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))[1:]
    assert [(e.kind, e.hidden) for e in evs] == [("context", False)] * 5 + [("attachment", True)]
    shown = [(b.kind, getattr(b, "label", None) or b.text, getattr(b, "text", "")) for e in evs[:5] for b in e.blocks]
    assert shown == [
        ("context", "@src/parse.py attached (2 lines)", "def parse(s):\n    return int(s)\n"),
        ("notice", "@docs/spec.pdf attached (12 pages)", "@docs/spec.pdf attached (12 pages)"),
        ("context", "lines 1–2 of src/parse.py selected in VS Code", "def parse(s):\n    return int(s)"),
        ("context", "2 new diagnostics in 1 file", "/home/u/p/src/parse.py:1: Warning Missing return type\n"
                                                   "/home/u/p/src/parse.py:2: Error int() of str may raise"),
        ("context", "MCP resource spec from docs", "Numbers may hold _.")]
    text = visible_text(page_of(tmp_path))
    assert "@src/parse.py attached (2 lines)" in text and "2 new diagnostics in 1 file" in text


def test_odd_values_in_what_a_prompt_brought_cost_nothing():
    # a hand-edited or future line: lists that are not lists, numbers where text goes
    for att in ({"type": "at_mention_reference", "mentions": True, "unread": 3},
                {"type": "mcp_resource", "server": 1, "content": {"contents": "x"}},
                {"type": "diagnostics", "files": [{"uri": 5, "diagnostics": [{"range": [], "message": None}]}]},
                {"type": "file", "content": {"type": "text", "file": {"content": "x", "numLines": "2"}}}):
        ev = claude_code.event({**ENV, "type": "attachment", "uuid": "a", "attachment": att}, Ref("main", 1, 0, 1))
        assert ev.kind in ("context", "attachment") and all(isinstance(getattr(b, "text", ""), str) for b in ev.blocks)
    assert tools.questions({"questions": [{"question": "Q", "options": True}]}, {"answers": {"Q": "A"}})[0].own == "A"


def test_a_session_renamed_or_titled_by_the_cli_is_listed_under_that_title(tmp_path):
    # `custom-title {customTitle}` is what /rename writes, `ai-title {aiTitle}` the title the CLI
    # makes itself; /resume lists a session under the rename, else the CLI's latest title
    s = Lines()
    s.prompt("Hi, can you look at the flaky test in ci.yml?")
    path = s.write(tmp_path)
    idx = SessionIndex(path).build()
    assert idx.summary.title == "Hi, can you look at the flaky test in ci.yml?"
    s.add(type="ai-title", aiTitle="Investigate flaky CI test")
    s.write(tmp_path)
    assert idx.refresh() and idx.summary.title == "Investigate flaky CI test"
    s.add(type="custom-title", customTitle="ci flake hunt")
    s.add(type="ai-title", aiTitle="Fix retry logic in CI workflow")  # a rename outranks it
    s.write(tmp_path)
    assert idx.refresh() and idx.summary.title == "ci flake hunt"
    assert SessionIndex(path).build().summary.title == "ci flake hunt"  # read afresh alike
    from viewer.web import create_app
    client = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False}).test_client()
    assert "ci flake hunt" in client.get("/").get_data(as_text=True)


def test_what_a_prompt_brought_along_joins_the_prompt_s_card(tmp_path):
    s = Lines()
    s.prompt("Why does @src/parse.py fail?")
    s.add(type="attachment", attachment={"type": "pdf_reference", "filename": "/home/u/p/docs/spec.pdf",
                                         "pageCount": 12, "fileSize": 99999, "displayPath": "docs/spec.pdf"})
    s.add(type="attachment", attachment={"type": "todo_reminder", "content": [], "itemCount": 0})  # hidden
    s.add(type="attachment", attachment={"type": "selected_lines_in_ide", "ideName": "VS Code", "lineStart": 1,
                                         "lineEnd": 1, "filename": "/home/u/p/a.py", "content": "x = 1",
                                         "displayPath": "a.py"})
    s.add(type="assistant", message={"id": "msg_1", "role": "assistant", "model": "claude-opus-4-5",
                                     "content": [{"type": "text", "text": "Looking."}]})
    s.add(type="attachment", attachment={"type": "pdf_reference", "filename": "/home/u/p/b.pdf",
                                         "pageCount": 1, "fileSize": 9, "displayPath": "b.pdf"})
    s.write(tmp_path)
    html = page_of(tmp_path)
    cards = re.findall(r'<li class="ev ([^"]*)" id="m-[^"]*"', html)
    # the prompt, its two visible attachments (drawn as part of its card), the hidden reminder, the
    # reply, and an attachment after the reply (a card of its own: it came with no prompt)
    assert [("role-system" in c, " continued" in c) for c in cards if "is-hidden" not in c] == [
        (False, False), (True, True), (True, True), (False, False), (True, False)]


def test_an_old_system_line_says_its_message_and_a_dropped_prompt_with_an_image_is_shown():
    """Two shapes claude-session-mcp's record models (src/schemas/session/models.py: SystemRecord
    `{systemType, message: str}`, the system line of CLIs before subtypes; QueueOperationRecord
    `content: str | Sequence[MessageContent]`) have and this reader read wrong: the old system
    line was a bare "system event" card, its message unsaid; a queued prompt with a pasted image
    (its content blocks) taken off the queue unsent stayed a hidden queue card, so the person's
    words were nowhere in sight."""
    old = claude_code.event({**ENV, "type": "system", "uuid": "s1", "parentUuid": "p1",
                             "timestamp": "2025-06-24T10:00:00.000Z", "systemType": "info",
                             "message": "Claude Code was updated to 1.0.31"}, Ref("main", 1, 0, 1))
    assert [b.text for b in old.blocks] == ["Claude Code was updated to 1.0.31"] and not old.hidden
    content = [{"type": "text", "text": "and check this screenshot"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]
    dropped = claude_code.event({"type": "queue-operation", "operation": "remove", "sessionId": "s",
                                 "timestamp": "2026-11-24T10:00:04.000Z", "content": content},
                                Ref("main", 2, 0, 1))
    assert dropped.role == "user" and not dropped.hidden
    assert dropped.blocks[0].text.startswith("typed while the agent was working")
    assert [b.kind for b in dropped.blocks[1:]] == ["text", "media"]
