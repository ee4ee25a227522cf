"""Goose sessions in headless Chromium, opened from `~/.local/share/goose/sessions` as a user points
the viewer at it: listed by Goose's description (or the first prompt), each call with its result
and state (declined, failed, never answered), what Goose hides from the person behind the hidden
toggle, and a message Goose writes appearing live; a session of current Goose's database
(sessions.db, built by test_data/formats/goose/make_db.py) followed live too."""

import json
import re

import pytest
from playwright.sync_api import expect

from conftest import ROOT, goose_make_db, indexed_list, quiet_copy

pytestmark = pytest.mark.browser

SESSIONS = ROOT / "test_data" / "formats" / "goose" / "sessions"
PROMPT = "Is the logo on the home page the new one? Here is a screenshot."


def test_goose_sessions_read_with_their_calls_and_grow_live(serve, watched_page, tmp_path):
    root = quiet_copy(SESSIONS, tmp_path / "sessions", ended=False)
    srv = serve(root)
    page = watched_page
    page.goto(srv.url + "/")
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="Fix failing pagination test")).to_contain_text("goose")
    rows.filter(has_text=PROMPT).get_by_role("link", name=PROMPT).click()
    expect(page.locator("h1")).to_contain_text(PROMPT)

    expect(page.locator("#timeline")).to_contain_text("Goose session in /home/dev/site")
    grep = page.locator("#tc-toolu_01Grep")
    expect(grep.locator(".state")).to_have_text("completed")
    expect(grep).to_contain_text('<img src="/static/logo-old.png" alt="logo">')
    expect(grep.get_by_text("12:  <img src", exact=False)).to_have_count(1)  # not twice
    expect(page.locator("#tc-toolu_02Sed .state")).to_have_text(re.compile("denied", re.I))
    deploy = page.locator("#tc-toolu_03Deploy")
    expect(deploy.locator(".state")).to_have_text("error")
    expect(deploy).to_contain_text("No rule to make target 'deploy'")
    expect(page.locator("#timeline")).to_contain_text("permission requested for developer__shell")
    expect(page.locator("#timeline .thinking").first).to_contain_text("Thinking")

    summary = page.get_by_text("Summary of the conversation so far")
    expect(summary).to_be_hidden()  # Goose never showed it to the person
    toggle = page.locator("label.hidden-toggle")
    expect(toggle).to_contain_text("Show 1 hidden event (", use_inner_text=True)
    toggle.click()
    expect(summary).to_be_visible()
    toggle.click()

    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    path = root / "20250905_093012.jsonl"
    with open(path, "a") as f:
        f.write(json.dumps({"id": None, "role": "assistant", "created": 1757064700, "content": [
            {"type": "text", "text": "Listing the static folder."},
            {"type": "toolRequest", "id": "toolu_live", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "ls static"}}}}],
            "metadata": {"userVisible": True, "agentVisible": True}}) + "\n")
    card = page.locator("#tc-toolu_live")
    expect(card.locator(".state")).to_have_text("pending")
    with open(path, "a") as f:
        f.write(json.dumps({"id": None, "role": "user", "created": 1757064702, "content": [
            {"type": "toolResponse", "id": "toolu_live", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": "logo-2025.png\nlogo-old.png"}], "isError": False}}}],
            "metadata": {"userVisible": True, "agentVisible": True}}) + "\n")
    expect(card.locator(".state")).to_have_text("completed")
    expect(card).to_contain_text("logo-2025.png")
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


def test_a_session_of_goose_s_database_followed_live(serve, watched_page, tmp_path):
    """Current Goose keeps sessions as rows of sessions.db: each is listed under its name, opens,
    and a message Goose writes while the page is open appears in it."""
    make_db = goose_make_db()
    root = tmp_path / "sessions"
    root.mkdir()
    con = make_db.build(root / "sessions.db", keep_open=True)  # a running Goose's database
    try:
        page = watched_page
        srv = serve(root)
        indexed_list(page, srv.url + "/")
        rows = page.locator("table.sessions tbody tr")
        expect(rows).to_have_count(4)
        expect(rows.filter(has_text="Fix failing pagination test")).to_have_count(1)  # imported from its file
        rows.filter(has_text="CI test hang").locator("td.title > a").click()
        expect(page).to_have_url(re.compile(rf"/s/sessions.db~{make_db.NEW_ID}$"))
        expect(page.locator("#tc-call_mk1 .state")).to_have_text("completed")
        expect(page.locator("#tc-call_mk1")).to_contain_text("pytest --watch")
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
        words = "Dropped --watch from the CI target."
        make_db.write_message(con, make_db.NEW_ID, {"role": "assistant", "created": make_db.T + 30, "content": [
            {"type": "text", "text": words}]}, "2025-11-05 10:00:30")
        expect(page.locator("#timeline").get_by_text(words)).to_be_visible(timeout=30_000)
        assert page.problems == []
    finally:
        con.close()


def test_a_delegated_sub_agent_nests_under_its_call_and_an_extension_s_tool_says_its_extension(
        serve, watched_page, tmp_path):
    """Current Goose's `delegate` call runs a sub-agent in a session of its own that names its
    parent: the call's card holds the sub-agent's conversation, the sub-agent's session is listed
    as a sub-agent of its parent, and the tools read as extension + tool; the usage panel counts
    each model call of Goose's usage ledger, by model, with a cost, and draws them on its timeline."""
    make_db = goose_make_db()
    root = tmp_path / "sessions"
    root.mkdir()
    make_db.build(root / "sessions.db")
    page = watched_page
    srv = serve(root, WATCH=False)
    indexed_list(page, srv.url + "/")
    rows = page.locator("table.sessions tbody tr")
    child = rows.filter(has_text="Delegated task")
    expect(child).to_have_class(re.compile(r"\bsubagent\b"))
    expect(child.locator(".spawned-by a")).to_have_text("sessions.db/" + make_db.NEW_ID)
    parent = rows.filter(has_text="CI test hang")
    expect(parent.locator("td[data-label=cost]")).to_contain_text("$0.0")
    parent.locator("td.title > a").click()
    expect(page).to_have_url(re.compile(rf"/s/sessions.db~{make_db.NEW_ID}$"))
    shell = page.locator("#tc-call_mk1 .tool-name")
    expect(shell.locator(".mcp-server")).to_have_text("ext developer")
    expect(shell.locator(".mcp-tool")).to_have_text("shell")
    expect(shell).not_to_contain_text("__")
    card = page.locator("#tc-call_dl1")
    expect(card.locator(".state")).to_have_text("completed")
    thread = card.locator("details.subthread")
    expect(thread.locator("summary")).to_contain_text("Delegated task")
    thread.locator("summary").click()  # the sub-agent's conversation, loaded in place
    inner = card.locator("#tc-call_sub1")
    expect(inner.locator(".state")).to_have_text("completed")
    expect(inner.locator(".mcp-tool")).to_have_text("text_editor")
    expect(card.get_by_text("Targets: build, test (pytest --watch), lint.").first).to_be_visible()
    expect(page.locator("#timeline")).to_contain_text("Goose's title for this call: Delegate a Makefile summary")
    page.goto(f"{srv.url}/s/sessions.db~{make_db.NEW_ID}/usage")
    facts = page.locator(".usage-facts")
    expect(facts).to_contain_text("model calls5", use_inner_text=False)
    expect(facts).not_to_contain_text("own totals")
    sonnet = page.locator("tr", has=page.locator("td.model-name", has_text="claude-sonnet-4-5")).first
    expect(sonnet.locator("td[data-label='calls']")).to_have_text("3")
    expect(sonnet.locator("td[data-label='cache read']")).to_have_text("2,700")
    expect(sonnet.locator("td[data-label='cost']")).to_have_text("$0.012")
    haiku = page.locator("tr", has=page.locator("td.model-name", has_text="claude-haiku-4-5")).first
    expect(haiku.locator("td[data-label='calls']")).to_have_text("2")
    # the timeline's two rows (main, the sub-agent) are far enough apart for their names: the chart
    # was 120 px high whatever its rows, the axis and legend took most of it and the names overlapped
    timeline = page.locator("canvas[data-chart=timeline]")
    expect(timeline).to_have_attribute("data-drawn", "1")
    rows = timeline.evaluate("""c => { const y = Chart.getChart(c).scales.y;
        return [y.getPixelForValue(0), y.getPixelForValue(1)]; }""")
    assert rows[1] - rows[0] >= 24, rows
    # the model calls are bars of their own, each opening the reply it paid for
    calls = timeline.evaluate("""c => Chart.getChart(c).data.datasets[0].data.map(d => [d.y, d.bar.label])""")
    assert sorted(calls) == sorted([["main", "claude-sonnet-4-5"]] * 3 + [[
        f"Delegated task · session {make_db.SUB_ID}", "claude-haiku-4-5"]] * 2)
    assert page.problems == []


def _msg(role, created, *content):
    return {"id": None, "role": role, "created": created, "content": list(content),
            "metadata": {"userVisible": True, "agentVisible": True}}


def _call(cid, name, args):
    return {"type": "toolRequest", "id": cid, "toolCall": {"status": "success", "value": {
        "name": name, "arguments": args}}}


def _answer(cid, text):
    return {"type": "toolResponse", "id": cid, "toolResult": {"status": "success", "value": {
        "content": [{"type": "text", "text": text}], "isError": False}}}


APP = "/home/dev/site/app.py"
EDITOR_SESSION = [
    {"working_dir": "/home/dev/site", "description": "Rename the helper", "schedule_id": None,
     "message_count": 9, "total_tokens": None, "input_tokens": None, "output_tokens": None,
     "accumulated_total_tokens": None, "accumulated_input_tokens": None, "accumulated_output_tokens": None,
     "extension_data": {}, "recipe": None},
    _msg("user", 1757064612, {"type": "text", "text": "Rename old_name to new_name and note it in a changelog."}),
    _msg("assistant", 1757064614, _call("t_view", "developer__text_editor", {"command": "view", "path": APP})),
    _msg("user", 1757064615, _answer("t_view", "def old_name():\n    return 1\n")),
    _msg("assistant", 1757064616, _call("t_edit", "developer__text_editor", {
        "command": "str_replace", "path": APP, "old_str": "def old_name():", "new_str": "def new_name():"})),
    _msg("user", 1757064617, _answer("t_edit", f"The file {APP} has been edited.")),
    _msg("assistant", 1757064618, _call("t_write", "developer__text_editor", {
        "command": "write", "path": "/home/dev/site/CHANGELOG.md",
        "file_text": "# Changelog\n\n- Renamed old_name to new_name\n"})),
    _msg("user", 1757064619, _answer("t_write", "Successfully wrote to /home/dev/site/CHANGELOG.md")),
    _msg("assistant", 1757064620, _call("t_undo", "developer__text_editor", {"command": "undo_edit", "path": APP}),
         _call("t_odd", "developer__text_editor", {"command": "str_replace", "path": APP, "old_str": 5})),
    _msg("user", 1757064621, _answer("t_undo", "Undid the last edit."), _answer("t_odd", "old_str must be text")),
    _msg("assistant", 1757064622, _call("t_insert", "developer__text_editor", {
        "command": "insert", "path": APP, "insert_line": 2, "new_str": "\ndef helper():\n    return 2"})),
    _msg("user", 1757064623, _answer("t_insert", f"Text has been inserted at line 3 in {APP}")),
    _msg("assistant", 1757064624, _call("t_tasks", "dynamic_task__create_task", {"task_parameters": [
        {"title": "Check CI", "description": "the test job", "instructions": "Run the **test** suite and report failures.",
         "extensions": ["developer"]},
        {"text_instruction": "Summarise the changelog."}]})),
    _msg("user", 1757064625, _answer("t_tasks", '{"task_ids":["a1","b2"],"execution_mode":"parallel"}')),
]


def test_goose_s_text_editor_edits_read_as_diffs_and_a_recipe_names_the_model(serve, watched_page, tmp_path):
    """Goose's developer `text_editor`: a `str_replace` call is drawn as a diff (as Claude Code's
    Edit), a `write` as the new file, a `view` as a read named in its header; its other commands,
    and a call whose arguments are not an edit's, stay plain calls. A session file run from a
    recipe is listed with the recipe's model and a cost."""
    from test_format_goose import RECIPE_SESSION

    root = tmp_path / "sessions"
    root.mkdir()
    (root / "20250905_120000.jsonl").write_text("".join(json.dumps(x) + "\n" for x in RECIPE_SESSION))
    (root / "20250905_130000.jsonl").write_text("".join(json.dumps(x) + "\n" for x in EDITOR_SESSION))
    page = watched_page
    srv = serve(root, WATCH=False)
    indexed_list(page, srv.url + "/")
    recipe = page.locator("table.sessions tbody tr").filter(has_text="Weekly dependency bump")
    expect(recipe).to_contain_text("claude-sonnet-4-5")
    expect(recipe.locator("td[data-label=cost]")).to_contain_text("$0.0")
    page.goto(srv.url + "/s/20250905_130000")
    edit = page.locator("#tc-t_edit")
    expect(edit.locator(".diff .diff-file")).to_have_text(APP)
    expect(edit.locator(".diff tr.del .code")).to_have_text("def old_name():")
    expect(edit.locator(".diff tr.add .code")).to_have_text("def new_name():")
    expect(edit.locator(".diff tr.add mark")).to_have_text("new")  # the word that changed
    write = page.locator("#tc-t_write")
    expect(write.locator("details.file-content summary")).to_contain_text("CHANGELOG.md · 3 lines")
    expect(write.locator("details.file-content")).to_contain_text("- Renamed old_name to new_name")
    view = page.locator("#tc-t_view")
    expect(view.locator(".tool-summary")).to_contain_text(APP)
    expect(view.locator("dl.kv")).to_have_count(0)  # (the header says it all)
    odd = page.locator("#tc-t_odd")  # (arguments without an edit's shape: a plain call)
    expect(odd.locator("dl.kv")).to_contain_text("str_replace")
    expect(odd.locator(".diff")).to_have_count(0)
    # an undo says what it does, and to which file, in its header
    undo = page.locator("#tc-t_undo")
    expect(undo.locator(".tool-summary")).to_have_text(f"undo the last edit of {APP}")
    expect(undo.locator(".tool-input")).to_have_count(0)
    # an insert: the lines added after line 2, numbered as the file's
    insert = page.locator("#tc-t_insert")
    expect(insert.locator(".diff .diff-file")).to_contain_text("(inserted after line 2)")
    expect(insert.locator(".diff tr.add .code")).to_have_text(["", "def helper():", "    return 2"])
    expect(insert.locator(".diff tr.add td.no:nth-child(2)")).to_have_text(["3", "4", "5"])
    expect(insert.locator(".diff tr.del")).to_have_count(0)
    # the tasks a dynamic_task__create_task call makes: a list, not JSON
    tasks = page.locator("#tc-t_tasks")
    expect(tasks.locator(".tool-summary")).to_have_text("2 tasks: Check CI")  # (its title, where it has one)
    items = tasks.locator("ol.new-tasks > li")
    expect(items).to_have_count(2)
    expect(items.nth(0).locator(".task-title")).to_have_text("Check CI")
    expect(items.nth(0).locator(".task-head")).to_contain_text("the test job")
    expect(items.nth(0).locator(".task-said strong")).to_have_text("test")  # (its Markdown read)
    expect(items.nth(0).locator("dl.kv")).to_contain_text("extensions")
    expect(items.nth(1).locator(".task-said")).to_contain_text("text instruction")
    expect(items.nth(1).locator(".task-said")).to_contain_text("Summarise the changelog.")
    expect(tasks.locator(".tool-input")).not_to_contain_text("task_parameters")  # (no JSON)
    assert page.problems == []


def test_a_goose_1x_subagent_task_opens_under_its_call(serve, watched_page, tmp_path):
    """Goose 1.x's `subagent` tool named its task's session only in its result (no parent column
    yet): the call's card holds that sub-agent's conversation, opened in place."""
    from test_format_goose_db import TASK_ID, _goose_1x_subagent

    make_db = goose_make_db()
    root = tmp_path / "sessions"
    root.mkdir()
    con = make_db.build(root / "sessions.db", keep_open=True)
    _goose_1x_subagent(con)
    con.close()
    page = watched_page
    srv = serve(root, WATCH=False)
    indexed_list(page, srv.url + "/")
    # its own session is listed right under the session that ran it, as a sub-agent of it
    rows = page.locator("table.sessions tbody tr")
    child = rows.filter(has_text="Subagent Task")
    expect(child).to_have_class(re.compile(r"\bsubagent\b.*\bdepth-1\b"))
    expect(child.locator(".spawned-by a")).to_have_text("sessions.db/" + make_db.NEW_ID)
    keys = rows.evaluate_all("trs => trs.map(tr => tr.dataset.key)")
    assert keys.index(f"sessions.db~{TASK_ID}") > keys.index(f"sessions.db~{make_db.NEW_ID}")
    # its page names its parent and links the call that ran it
    child.locator("td.title > a").click()
    expect(page.locator("#spawned-by a.parent-session")).to_have_text(f"session {make_db.NEW_ID}")
    page.locator("#spawned-by a.spawning-call").click()
    expect(page).to_have_url(re.compile(rf"/s/sessions.db~{make_db.NEW_ID}"))
    card = page.locator("#tc-call_sa1")
    expect(card.locator(".state")).to_have_text("completed")
    thread = card.locator("details.subthread")
    expect(thread.locator("summary")).to_contain_text(f"Subagent Task · session {TASK_ID}")
    thread.locator("summary").click()
    expect(thread.get_by_text("List the CI jobs.").first).to_be_visible()
    expect(thread.get_by_text("CI runs build and test.").first).to_be_visible()
    assert page.problems == []


def test_the_usage_panel_says_which_calls_no_reply_holds_and_what_was_carried(serve, watched_page, tmp_path):
    """A Goose session whose usage ledger has a row tied to no reply (recorded before any), and the
    row Goose writes for what the session used before the ledger: the panel counts the row tied to
    no reply as a call and says so; the carried usage counts in the tokens and the cost as totals,
    not as a call (no bar on the timeline, not in the calls per model)."""
    from test_format_goose_db import TIE_ID, _tied_session

    make_db = goose_make_db()
    root = tmp_path / "sessions"
    root.mkdir()
    con = make_db.build(root / "sessions.db", keep_open=True)
    _tied_session(con)
    con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, "
                "total_tokens, cost_source, is_compaction) VALUES (?, ?, NULL, 90000, 4000, 94000, "
                "'carried_forward', 0)", (TIE_ID, make_db.T + 1000))
    con.close()
    page = watched_page
    srv = serve(root, WATCH=False)
    indexed_list(page, srv.url + "/")
    page.goto(f"{srv.url}/s/sessions.db~{TIE_ID}/usage")
    facts = page.locator(".usage-facts")
    expect(facts).to_contain_text("model calls8", use_inner_text=False)
    expect(facts.locator(".untied")).to_have_text(
        "1 of them not tied to a reply: Goose's record of it names no message, and no reply fits its time")
    expect(facts.locator(".carried")).to_contain_text("usage carried from before Goose recorded calls one by one")
    sonnet = page.locator("tr", has=page.locator("td.model-name", has_text=re.compile(r"^claude-sonnet-4-5$"))).first
    expect(sonnet.locator("td[data-label='calls']")).to_have_text("7")
    expect(sonnet.locator("td[data-label='input']")).to_have_text("92,800")  # (the carried 90,000 among them)
    timeline = page.locator("canvas[data-chart=timeline]")
    expect(timeline).to_have_attribute("data-drawn", "1")
    calls = timeline.evaluate("""c => Chart.getChart(c).data.datasets[0].data.map(d => d.bar.label)""")
    assert len(calls) == 8, calls
    assert page.problems == []
