"""Claude Code tools whose calls the current CLI (2.1.331) writes, shown as a user reads them: the
questions the agent asked (AskUserQuestion) with the options the person picked, a task list tool's
task in the card's header, the tools a ToolSearch loaded in one line.

Where each shape comes from (the CLI's bundled JS in the linux-x64 binary of
`@anthropic-ai/claude-code@2.1.331`, the same one test_data/formats/claude-code records):
- AskUserQuestion: its input schema (`questions: [{question, header, options: [{label,
  description, preview?}], multiSelect}]`), its output `{questions, answers: {question: label, or
  the labels of a multiple choice joined by ", ", or the person's own words}, annotations?:
  {question: {notes}}}` and the result text it makes of them (`"question"="answer"`, joined by
  ", "; "Your questions have been answered: …", before 2.1 "User has answered your questions: …").
- TaskUpdate's input `{taskId, status…}` and output `{success, taskId, updatedFields,
  statusChange}` ("Updated task #1 status"); ToolSearch's result of `tool_reference` blocks.
"""

import json
import re
from html import unescape

from viewer import tools
from viewer.formats import detect

SESSION = "5e1f0000-0000-4000-8000-000000000001"
ENV = {"sessionId": SESSION, "cwd": "/home/u/p", "version": "2.1.331", "gitBranch": "main",
       "userType": "external", "entrypoint": "cli", "isSidechain": False}

DB = "Which database should the service use?"
CI = "Which checks should run in CI?"
QUESTIONS = {"questions": [
    {"question": DB, "header": "Database", "multiSelect": False, "options": [
        {"label": "Postgres (Recommended)", "description": "Matches the other services"},
        {"label": "SQLite", "description": "No server to run"}]},
    {"question": CI, "header": "CI", "multiSelect": True, "options": [
        {"label": "Lint", "description": "ruff"}, {"label": "Tests", "description": "pytest"},
        {"label": "Types", "description": "mypy"}]}]}
ANSWERED = (f'Your questions have been answered: "{DB}"="Postgres (Recommended)", "{CI}"="Lint, Tests". '
            "You can now continue with these answers in mind.")


class Lines:
    def __init__(self):
        self.out = []

    def add(self, **kw):
        n = len(self.out) + 1
        rec = {**ENV, "uuid": f"u{n:04d}", "parentUuid": f"u{n - 1:04d}" if n > 1 else None,
               "timestamp": f"2026-11-24T10:{n // 60:02d}:{n % 60:02d}.000Z", **kw}
        self.out.append(rec)
        return rec

    def prompt(self, text):
        return self.add(type="user", message={"role": "user", "content": text})

    def call(self, tid, name, inp):
        return self.add(type="assistant", requestId="req_1", message={
            "id": f"msg_{tid}", "type": "message", "role": "assistant", "model": "claude-opus-4-5",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}})

    def result(self, tid, content, structured=None, error=None):
        block = {"type": "tool_result", "tool_use_id": tid, "content": content}
        if error is not None:
            block["is_error"] = error
        extra = {} if structured is None else {"toolUseResult": structured}
        return self.add(type="user", message={"role": "user", "content": [block]}, **extra)

    def write(self, tmp_path):
        folder = tmp_path / "-home-u-p"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{SESSION}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in self.out), encoding="utf-8")
        return path


def page_of(tmp_path) -> str:
    from viewer.web import create_app

    app = create_app({"ROOTS": [str(tmp_path)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False})
    client = app.test_client()
    (link,) = set(re.findall(r'href="(/s/[^"/?#]+)"', client.get("/").get_data(as_text=True)))
    return client.get(link + "?at=start").get_data(as_text=True)


def visible_text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def card_of(html: str, words: str) -> str:
    """The opening tag of the event card that holds these words."""
    at = html.index(words)
    start = html.rindex('<li class="ev ', 0, at)
    return html[start:html.index(">", start) + 1]


def chosen(html: str) -> list[str]:
    """The options the page marks as picked, in order."""
    return [unescape(m) for m in re.findall(
        r'<li class="q-option chosen[^"]*">.*?<span class="q-label">(.*?)</span>', html, re.S)]


def test_questions_the_agent_asked_show_their_options_and_what_the_person_picked(tmp_path):
    s = Lines()
    s.prompt("Plan the migration.")
    s.call("t_ask", "AskUserQuestion", QUESTIONS)
    s.result("t_ask", ANSWERED, {**QUESTIONS, "answers": {DB: "Postgres (Recommended)", CI: "Lint, Tests"}})
    s.call("t_own", "AskUserQuestion", {"questions": [QUESTIONS["questions"][0]]})
    s.result("t_own", f'Your questions have been answered: "{DB}"="MySQL 8, we already run it". You can now '
                      "continue with these answers in mind.",
             {"questions": [QUESTIONS["questions"][0]], "answers": {DB: "MySQL 8, we already run it"},
              "annotations": {DB: {"notes": "ask ops first"}}})
    path = s.write(tmp_path)
    assert detect.detect_file(path).format == "claude-code"
    html = page_of(tmp_path)
    text = visible_text(html)
    # the header says what was asked; each question with its options and their descriptions
    assert "2 questions: Database, CI" in text
    for words in (DB, "Matches the other services", "No server to run", CI, "several answers allowed",
                  "Types", "mypy"):
        assert words in text, words
    # the picked options are marked (a multiple choice's labels, joined by ", ", each); an answer
    # in the person's own words is shown as theirs, with the notes they added
    assert chosen(html) == ["Postgres (Recommended)", "Lint", "Tests", "MySQL 8, we already run it"]
    assert "their own answer" in text and "notes: ask ops first" in text
    assert "input · " not in text  # never the folded JSON of the call's input


def test_answers_are_read_from_the_result_text_when_the_line_has_no_structured_result():
    # an Agent SDK transcript (or a line without `toolUseResult`) holds only the text; the older
    # CLI words it "User has answered your questions: …"
    said = f'User has answered your questions: "{DB}"="SQLite". You can now continue with the user\'s answers in mind.'
    qs = tools.questions(QUESTIONS, None, said)
    assert [[o.label for o in q.options if o.chosen] for q in qs] == [["SQLite"], []]
    assert [q.answered for q in qs] == [True, False]
    # a refusal answers nothing
    refused = tools.questions(QUESTIONS, None, "The user doesn't want to proceed with this tool use.")
    assert not any(o.chosen for q in refused for o in q.options)
    # a multiple choice given as a list, a number question's answer, odd values: no error
    qs = tools.questions({"questions": [QUESTIONS["questions"][1], {"question": "How many workers?",
                                                                   "kind": "number", "min": 1}]},
                         {"answers": {CI: ["Types", "Lint"], "How many workers?": 4}})
    assert [o.label for o in qs[0].options if o.chosen] == ["Lint", "Types"]
    assert qs[1].own == "4" and qs[1].options == []
    assert tools.questions({"questions": "x"}) == [] and tools.view_of("AskUserQuestion", {"questions": []}) != "questions"


def test_the_markdown_export_ticks_the_picked_options(tmp_path):
    from click.testing import CliRunner

    from viewer.cli import main

    s = Lines()
    s.prompt("Plan the migration.")
    s.call("t_ask", "AskUserQuestion", QUESTIONS)
    s.result("t_ask", ANSWERED, {**QUESTIONS, "answers": {DB: "Postgres (Recommended)", CI: "Lint, Tests"}})
    path = s.write(tmp_path)
    out = CliRunner().invoke(main, ["export", "-f", "md", "-o", "-", str(path)]).output
    assert "1. **Database** Which database should the service use?" in out
    assert "   - [x] Postgres (Recommended) — Matches the other services" in out
    assert "   - [ ] SQLite — No server to run" in out
    assert "   - [x] Lint — ruff\n   - [x] Tests — pytest\n   - [ ] Types — mypy" in out


def test_task_tools_and_tool_search_read_in_a_line(tmp_path):
    s = Lines()
    s.prompt("Track it")
    s.call("t_up", "TaskUpdate", {"taskId": "1", "status": "in_progress"})
    s.result("t_up", "Updated task #1 status", {"success": True, "taskId": "1", "updatedFields": ["status"],
                                                "statusChange": {"from": "pending", "to": "in_progress"}})
    s.call("t_ts", "ToolSearch", {"query": "select:TaskCreate,TaskUpdate", "max_results": 5})
    s.result("t_ts", [{"type": "tool_reference", "tool_name": "TaskCreate"},
                      {"type": "tool_reference", "tool_name": "TaskUpdate"}],
             {"matches": ["TaskCreate", "TaskUpdate"], "query": "select:TaskCreate,TaskUpdate",
              "total_deferred_tools": 30})
    s.write(tmp_path)
    text = visible_text(page_of(tmp_path))
    assert "TaskUpdate #1 → in_progress" in text
    assert "tools loaded: TaskCreate, TaskUpdate" in text and "tool reference" not in text


def test_a_message_sent_to_the_user_reads_as_prose_and_powershell_as_a_command(tmp_path):
    # SendUserMessage (alias Brief): `{message (Markdown), attachments?, status: normal | proactive}`,
    # answered "Message delivered to user."; PowerShell: Bash's `{command, description, timeout}`
    s = Lines()
    s.prompt("Tell me when the build is done")
    s.call("t_msg", "SendUserMessage", {"message": "The build **passed**.\n\n- 212 tests\n- 0 failures",
                                        "attachments": ["build.log"], "status": "proactive"})
    s.result("t_msg", "Message delivered to user. (1 attachment included)",
             {"message": "The build **passed**.", "attachments": [{"path": "build.log", "size": 10}]})
    s.call("t_ps", "PowerShell", {"command": "Get-ChildItem -Recurse *.py", "description": "List Python files"})
    s.result("t_ps", "a.py\nb.py", {"stdout": "a.py\nb.py", "stderr": "", "interrupted": False})
    s.write(tmp_path)
    html = page_of(tmp_path)
    text = visible_text(html)
    assert "SendUserMessage to the user · unasked · 1 attachment" in text
    assert "<strong>passed</strong>" in html and "<li>212 tests</li>" in html  # Markdown, not JSON
    assert '<span class="prompt">$ </span>Get-ChildItem -Recurse *.py' in html
    assert "List Python files" in text
