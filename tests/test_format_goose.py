"""goose adapter: Goose's JSONL sessions (`~/.local/share/goose/sessions/<id>.jsonl`, a metadata
line then one Message per line) from test_data/formats/goose (see its README), read through the
index as the page reads them: an early-2025 session (mcp_core shapes) and a late-2025 one (rmcp
shapes, visibility metadata)."""

import json
import os

import pytest

from viewer.formats import detect, goose
from viewer.index import SessionIndex
from viewer.model import Ref

from conftest import CORPUS, ROOT, built, notices, result_of

SESSIONS = ROOT / "test_data" / "formats" / "goose" / "sessions"
OLD = SESSIONS / "20250310_142501.jsonl"
NEW = SESSIONS / "20250905_093012.jsonl"
R = Ref("main", 1, 0, 1)


def texts(result) -> list[str]:
    return [b.text for b in result.content if b.kind == "text"]


@pytest.mark.parametrize("path", [OLD, NEW])
def test_detected_as_goose(path):
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("goose", "jsonl")


def test_no_other_bundled_or_corpus_session_is_taken_for_goose():
    others = [p for base in (ROOT / "test_data", CORPUS) for p in base.rglob("*.jsonl")
              if SESSIONS not in p.parents]
    assert len(others) > 20
    assert [p for p in others if detect.detect_file(p).format == "goose"] == []


def test_the_description_names_the_session_and_the_metadata_line_says_where_and_how_much():
    idx, evs = built(OLD)
    assert idx.summary.title == "Fix failing pagination test"
    head = evs[0]
    assert (head.role, head.kind, head.hidden) == ("system", "session", False)
    assert notices(head) == ["Goose session in /home/dev/todo-api", "description: Fix failing pagination test",
                             "tokens: 24,510 (23,160 in · 1,350 out)"]
    # a session Goose has not described yet is named by its first prompt
    idx, _ = built(NEW)
    assert idx.summary.title == "Is the logo on the home page the new one? Here is a screenshot."


def test_calls_pair_with_their_responses_and_an_output_for_the_model_is_not_shown_twice():
    idx, evs = built(OLD)
    states = {cid: c.state for cid, c in idx.calls.calls.items()}
    assert states == {"toolu_01PyTestRun": "completed", "toolu_02ViewFile": "completed",
                      "toolu_03BadCall": "error"}
    assert not idx.calls.orphans
    run = result_of(evs, "toolu_01PyTestRun")
    assert texts(run) == ["F.\nFAILED tests/test_list.py::test_second_page - assert 10 == 5\n1 failed, 1 passed in 0.41s"]
    # the editor's file, for the model as a resource and for the person as a fenced block: the
    # person's, read as Markdown
    view = result_of(evs, "toolu_02ViewFile")
    assert [(b.kind, b.markdown) for b in view.content] == [("text", True)]
    assert view.content[0].text.startswith("```python\ndef page(items, n, size=5):")
    # results-only messages are tool events, not the person's words
    assert [e.role for e in evs if e.tool_results()] == ["tool", "tool", "tool"]


def test_a_tool_call_goose_could_not_read_is_an_error_with_its_reason():
    idx, evs = built(OLD)
    call = next(b for e in evs for b in e.tool_uses() if b.id == "toolu_03BadCall")
    assert call.name == "invalid tool call"
    holder = next(e for e in evs if call in e.blocks)
    assert "Goose could not read this tool call" in notices(holder)
    bad = result_of(evs, "toolu_03BadCall")
    assert bad.is_error is True
    assert texts(bad)[0].startswith("Could not interpret tool use parameters")
    assert idx.summary.errors == 1


def test_current_goose_content_kinds():
    idx, evs = built(NEW)
    prompt = evs[1]
    assert [b.kind for b in prompt.blocks] == ["text", "media"]
    assert (prompt.blocks[1].media_type, prompt.blocks[1].data[:8]) == ("image/png", "iVBORw0K")
    reply = evs[2]
    assert reply.source_id == "chatcmpl-9f2c7a" and reply.id == "chatcmpl-9f2c7a"
    thinking = [b for b in reply.blocks if b.kind == "thinking"]
    assert thinking[0].text.startswith("The screenshot shows an orange duck")
    assert thinking[0].signature == "EqQBCkYIBxgCKkB3"
    assert thinking[1].redacted is True
    assert reply.timestamp.isoformat() == "2025-09-05T09:30:15+00:00"
    # a notification is a notice; a kind no Goose writes is kept as a data card
    assert notices(evs[9]) == ["Context is 82% full: compacting the conversation"]
    last = evs[-1]
    assert [b.kind for b in last.blocks] == ["tool_use", "notice", "data"]
    assert last.blocks[2].label == "futureKind" and last.blocks[2].value["payload"] == {"x": 1}


def test_tool_states_declined_failed_and_unanswered():
    idx, evs = built(NEW)
    calls = idx.calls.calls
    assert {cid: (c.status, c.named) for cid, c in calls.items()} == {
        "toolu_01Grep": ("completed", None), "toolu_02Sed": ("error", "denied"),
        "toolu_03Deploy": ("error", None), "fe_01Open": ("pending", None)}
    assert texts(result_of(evs, "toolu_03Deploy")) == ["make: *** No rule to make target 'deploy'.  Stop."]
    assert result_of(evs, "toolu_03Deploy").is_error is True
    assert idx.summary.errors == 1  # a declined call is no failure
    ask = next(e for e in evs if e.permission)
    assert ask.kind == "permission"
    assert ask.permission["call"] == "toolu_02Sed"
    assert notices(ask)[0] == ("permission requested for developer__shell: Goose would like to call "
                               "the above tool. Allow?")


def test_what_goose_does_not_show_the_person_is_hidden_and_what_the_model_forgot_is_shown():
    idx, evs = built(NEW)
    hidden = [e for e in evs if e.hidden]
    assert len(hidden) == 1 and hidden[0].text().startswith("Summary of the conversation so far")
    assert "not shown to the person" in hidden[0].hidden_reason
    assert idx.summary.hidden == 1
    forgotten = [e for e in evs if e.meta.get("metadata", {}).get("agentVisible") is False]
    assert forgotten and not any(e.hidden for e in forgotten)


def test_a_line_goose_writes_is_read_live_and_a_rewrite_with_a_description_renames_it(tmp_path):
    path = tmp_path / "20250905_093012.jsonl"
    path.write_bytes(NEW.read_bytes())
    idx = SessionIndex(path).build()
    with open(path, "a") as f:
        f.write(json.dumps({"id": None, "role": "assistant", "created": 1757064700, "content": [
            {"type": "toolRequest", "id": "toolu_live", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "ls static"}}}}],
            "metadata": {"userVisible": True, "agentVisible": True}}) + "\n")
    idx.refresh()
    assert idx.calls.calls["toolu_live"].state == "pending"
    with open(path, "a") as f:
        f.write(json.dumps({"id": None, "role": "user", "created": 1757064702, "content": [
            {"type": "toolResponse", "id": "toolu_live", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": "logo-2025.png\nlogo-old.png"}], "isError": False}}}],
            "metadata": {"userVisible": True, "agentVisible": True}}) + "\n")
    idx.refresh()
    assert idx.calls.calls["toolu_live"].state == "completed"
    # Goose saves by writing the whole file again, its metadata line now with a description
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    head["description"] = "Check home page logo"
    path.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    os.utime(path, (2_000_000_000, 2_000_000_000))
    idx.refresh()
    assert idx.summary.title == "Check home page logo"
    assert idx.calls.calls["toolu_live"].state == "completed"


def test_sniff_claims_goose_lines_and_not_plain_messages():
    assert goose.sniff({"working_dir": "/w", "description": "", "schedule_id": None, "message_count": 0}) == 3
    assert goose.sniff({"description": "x", "message_count": 2, "total_tokens": None}) == 3
    assert goose.sniff({"role": "user", "created": 1, "content": [{"type": "text", "text": "hi"}]}) == 3
    assert goose.sniff({"role": "user", "content": [{"type": "text", "text": "hi"}]}) == 0
    assert goose.sniff({"role": "user", "created": "2025", "content": [{"type": "text", "text": "hi"}]}) == 0
    assert goose.sniff({"role": "user", "created": 1, "content": "hi"}) == 0
    assert goose.sniff({"description": "a task", "message_count": 3}) == 0


@pytest.mark.parametrize("rec", [
    {"role": "assistant", "created": 1, "content": [None, 3, "x", {"type": "toolRequest"},
                                                    {"type": "toolRequest", "id": 5, "toolCall": {"status": "success", "value": "x"}},
                                                    {"type": "toolResponse", "toolResult": None},
                                                    {"type": "toolResponse", "id": "a", "toolResult": {"status": "success", "value": 7}},
                                                    {"type": "toolResponse", "id": "a", "toolResult": {"status": "success", "value": {"content": "x", "isError": "yes"}}},
                                                    {"type": "actionRequired", "data": None},
                                                    {"type": "actionRequired", "data": {"actionType": "elicitation", "message": None}},
                                                    {"type": "thinking"}, {"type": "image"}, {"type": "systemNotification"},
                                                    {"type": ["text"], "text": "x"}, {"type": {"a": 1}}]},
    {"role": "user", "created": 1, "content": [], "metadata": "hidden"},
    {"description": 3, "message_count": "x"},
    [1, 2],
])
def test_odd_shapes_never_crash_and_lose_nothing(rec):
    ev = goose.event(rec, R)
    assert ev.blocks or ev.meta or rec == {"role": "user", "created": 1, "content": [], "metadata": "hidden"}


RECIPE_SESSION = [
    # late-2025 Goose ran a recipe (storage.rs at e3e6f126: `recipe`, a Recipe whose `settings`
    # name the model and provider Goose runs it with); its metadata line names no model otherwise
    {"working_dir": "/home/dev/site", "description": "Weekly dependency bump", "schedule_id": "weekly-deps",
     "message_count": 2, "total_tokens": 3100, "input_tokens": 3000, "output_tokens": 100,
     "accumulated_total_tokens": 8200, "accumulated_input_tokens": 7900, "accumulated_output_tokens": 300,
     "extension_data": {}, "recipe": {"version": "1.0.0", "title": "Bump dependencies",
                                      "description": "Bump the project's dependencies",
                                      "instructions": "Run the updater and the tests.",
                                      "settings": {"goose_provider": "anthropic",
                                                   "goose_model": "claude-sonnet-4-5", "temperature": 0.2}}},
    {"id": None, "role": "user", "created": 1757064612, "content": [{"type": "text", "text": "Bump them."}],
     "metadata": {"userVisible": True, "agentVisible": True}},
    {"id": None, "role": "assistant", "created": 1757064650, "content": [{"type": "text", "text": "Done."}],
     "metadata": {"userVisible": True, "agentVisible": True}},
]


def test_a_recipe_s_settings_name_the_model_of_a_session_file_and_price_its_totals(tmp_path):
    """A JSONL metadata line names no model, but a recipe's settings do: the header says it, the
    session lists it and its totals are priced for it."""
    path = tmp_path / "20250905_120000.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in RECIPE_SESSION))
    idx, evs = built(path)
    assert notices(evs[0])[:3] == ["Goose session in /home/dev/site · scheduled (weekly-deps)",
                                   "model: claude-sonnet-4-5 · anthropic (the recipe's settings)",
                                   "description: Weekly dependency bump"]
    assert idx.summary.models == ["claude-sonnet-4-5"]
    u = idx.summary.usage
    assert u["tokens"] == 8200 and u["session_totals"] is True and u["unpriced"] == []
    assert u["cost"] and u["cost"] > 0
    # a line from before the session totals: its counts are the last call's, and said so
    early = dict(RECIPE_SESSION[0], recipe=None)
    for key in ("accumulated_total_tokens", "accumulated_input_tokens", "accumulated_output_tokens"):
        early.pop(key)
    path.write_text("".join(json.dumps(x) + "\n" for x in [early, *RECIPE_SESSION[1:]]))
    idx, evs = built(path)
    assert "tokens of the last model call: 3,100 (3,000 in · 100 out)" in notices(evs[0])
    assert idx.summary.models == [] and idx.summary.usage.get("tokens", 0) == 0


@pytest.mark.parametrize("name,args,view,summary", [
    ("developer__text_editor", {"command": "str_replace", "path": "/a.py", "old_str": "x", "new_str": "y"},
     "edit", "/a.py"),
    ("developer__text_editor", {"command": "write", "path": "/a.md", "file_text": "# A\n"}, "write", "/a.md"),
    ("developer__text_editor", {"command": "view", "path": "/a.py", "view_range": [3, 9]}, "read",
     "/a.py  lines 3–9"),
    ("mcp__files__str_replace_based_edit_tool", {"command": "create", "path": "/b.py", "file_text": "b = 1\n"},
     "write", "/b.py"),
    ("str_replace_based_edit_tool", {"command": "str_replace", "path": "/b.py", "old_str": "1", "new_str": "2"},
     "edit", "/b.py"),
    # an insert is lines added after `insert_line` (Goose's `new_str`, Anthropic's newer `insert_text`)
    ("developer__text_editor", {"command": "insert", "path": "/a.py", "insert_line": 2, "new_str": "z = 3"},
     "edit", "/a.py"),
    ("str_replace_based_edit_tool", {"command": "insert", "path": "/b.py", "insert_line": 0, "insert_text": "#!"},
     "edit", "/b.py"),
    # undo_edit says what it does, the file in its header
    ("developer__text_editor", {"command": "undo_edit", "path": "/a.py"}, "undo", "undo the last edit of /a.py"),
    # other commands, and arguments without an edit's shape: plain calls
    ("developer__text_editor", {"command": "insert", "path": "/a.py", "insert_line": "2", "new_str": "z"}, "kv",
     "insert  /a.py"),
    ("developer__text_editor", {"command": "str_replace", "path": "/a.py", "old_str": 5}, "kv",
     "str_replace  /a.py"),
    ("developer__text_editor", {"command": "write", "path": "/a.md", "content": "# A"}, "kv", "write  /a.md"),
    ("text_editor", {"query": "colour theme"}, "kv", "colour theme"),
])
def test_a_file_editor_s_command_decides_how_its_call_reads(name, args, view, summary):
    from viewer import tools
    assert tools.view_of(name, args) == view
    assert tools.summary(name, args) == summary


def test_an_insert_is_lines_added_after_its_line_of_the_file():
    from viewer import tools
    after = tools.edits({"command": "insert", "path": "/a.py", "insert_line": 12, "new_str": "x = 1\ny = 2"})
    assert [(e.old, e.new, e.old_start, e.new_start, e.action) for e in after] == [
        ("", "x = 1\ny = 2", 13, 13, "inserted after line 12")]
    top = tools.edits({"command": "insert", "path": "/a.py", "insert_line": 0, "insert_text": "#!"})
    assert [(e.new_start, e.action) for e in top] == [(1, "inserted before line 1")]


def test_the_tasks_a_dynamic_task_call_makes_read_as_a_list():
    """Goose's `dynamic_task__create_task` (recipe_tools/dynamic_task_tools.rs): each task's title
    and description, what its sub-agent is told, and its other fields as lines."""
    from viewer import tools
    inp = {"task_parameters": [
        {"title": "Weather", "description": "one city", "instructions": "Get weather for Perth.",
         "extensions": ["developer", "memory"], "settings": {"goose_model": "gpt-4o"}, "context": ["a", "b"]},
        {"text_instruction": "Get weather for Melbourne."}]}
    assert tools.view_of("dynamic_task__create_task", inp) == "tasks"
    tasks = tools.new_tasks("dynamic_task__create_task", inp)
    assert [(t.title, t.description, t.said, t.fields) for t in tasks] == [
        ("Weather", "one city", [("instructions", "Get weather for Perth.")],
         [("extensions", "developer, memory"), ("settings", '{"goose_model":"gpt-4o"}'), ("context", "a, b")]),
        (None, None, [("text_instruction", "Get weather for Melbourne.")], [])]
    # not a list of tasks: JSON, as before
    assert tools.new_tasks("dynamic_task__create_task", {"task_parameters": "x"}) is None
    assert tools.new_tasks("other", inp) is None


def test_the_markdown_export_lists_the_tasks_and_the_insert(tmp_path):
    from test_browser_goose import EDITOR_SESSION
    from viewer.export import Export

    path = tmp_path / "20250905_130000.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in EDITOR_SESSION))
    idx, _ = built(path)
    md = "".join(Export(idx, "md").chunks())
    assert "1. **Check CI** — the test job\n   - instructions: Run the \\*\\*test\\*\\* suite and report failures.\n" \
           "   - extensions: developer\n2. task\n   - text instruction: Summarise the changelog.\n" in md
    assert "`/home/dev/site/app.py` (inserted after line 2)" in md
    assert "undo the last edit of /home/dev/site/app.py" in md and '"undo_edit"' not in md
