"""OpenCode adapter: a data folder of OpenCode's file storage (session, message and part files), the
same parent session as `opencode export` writes it, and the 0.1 layout whose messages hold their
parts inline. Fixtures are written by hand from OpenCode's schemas
(test_data/formats/opencode/make_fixtures.py; README.md there cites the source files)."""

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import detect, opencode
from viewer.index import SessionIndex, identity_matches
from viewer.store import Store
from viewer.web import create_app

from conftest import ROOT, quiet_copy

FIXTURES = ROOT / "test_data" / "formats" / "opencode"
DATA = FIXTURES / "data"
PROJECT = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"
SESSIONS = Path("storage") / "session" / PROJECT
PARENT, CHILD, UNDONE = ("ses_53a1c2d3e001aAbBcCdDeEfFgG", "ses_53a1c2d3e00bhHiIjJkKlLmM",
                         "ses_53a1c2d3e020nNoOpPqQrRsS")
EXPORT = FIXTURES / "export" / f"{PARENT}.json"
LEGACY = FIXTURES / "legacy" / "project" / "home-dev-calc" / "storage" / "session" / "info" / \
    "ses_7f3e2d1c0ffeAbCdEfGhIjKlMn.json"
REPLY = "msg_a1c2d3e00102BBBBBBBBBBBBBB"


def data_copy(tmp_path: Path, ended: bool = True) -> Path:
    return quiet_copy(DATA, tmp_path / "opencode", ended)


def check(path: Path) -> dict:
    r = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_a_stored_session_reads_whole_with_its_sub_agent():
    data = check(DATA / SESSIONS / f"{PARENT}.json")
    assert data["format"] == "opencode" and data["mode"] == "document"
    assert data["title"] == "Fix divide-by-zero in calc.py"  # the session's own title
    assert data["unparsed"] == [] and data["orphans"] == []
    assert data["tool_calls"] == {"pending": 0, "executing": 0, "completed": 6, "error": 0,
                                  "denied": 1, "interrupted": 1}
    (thread,) = data["threads"].values()
    assert thread["parent_call"] == "toolu_task_1"
    assert thread["label"] == "explore agent · Find divide() callers"
    assert data["models"] == ["claude-sonnet-4-5"]


def test_calls_states_times_usage_and_messages():
    idx = SessionIndex(DATA / SESSIONS / f"{PARENT}.json").build()
    calls = idx.calls.calls
    assert {c: calls[c].state for c in calls} == {
        "toolu_read_1": "completed", "toolu_task_1": "completed", "toolu_edit_1": "completed",
        "toolu_todo_1": "completed", "toolu_bash_1": "denied", "toolu_fetch_1": "interrupted",
        "toolu_bash_2": "completed", "toolu_grep_s1": "completed"}
    # each call's own start and end (state.time), not its message's time
    assert calls["toolu_edit_1"].duration == pytest.approx(1.2)
    assert calls["toolu_task_1"].subthread == opencode.keys.thread_key(CHILD)
    th = idx.threads["main"]
    assert th.ids[0] == f"session-{PARENT}" and th.hidden[0]  # the session file: a hidden card
    assert REPLY in th.ids
    assert idx.summary.errors == 1  # the reply that failed with APIError "Overloaded"
    usage = idx.summary.usage
    # the steps' own tokens add up (cache reads and writes apart); OpenCode's cost is kept
    inp, out, read, write = usage["models"]["claude-sonnet-4-5"][:4]
    assert (inp, read, write) == (500 + 400 + 60 + 2000 + 300, 6000 + 6000 + 15000, 3000)
    assert out == 200 + 120 + 210 + 80 + 150 + 60  # reasoning tokens are output tokens
    assert usage["source_cost"] == pytest.approx(0.0421 + 0.0051 + 0.0032 + 0.0011)


def test_the_export_reads_as_the_stored_session_does():
    stored = SessionIndex(DATA / SESSIONS / f"{PARENT}.json").build()
    exported = SessionIndex(EXPORT).build()
    assert detect.detect_file(EXPORT).format == "opencode"
    assert exported.threads["main"].ids == stored.threads["main"].ids
    assert {c.id: c.state for c in exported.calls.calls.values()} == {
        c.id: c.state for c in stored.calls.calls.values() if c.id != "toolu_grep_s1"}
    assert exported.summary.title == stored.summary.title


def test_the_oldest_layout_with_parts_inline():
    idx = SessionIndex(LEGACY).build()
    assert idx.summary.format == "opencode" and idx.summary.title == "Explain calc.py"
    (call,) = idx.calls.calls.values()
    assert (call.name, call.state) == ("read", "completed")
    assert call.duration == pytest.approx(0.2)  # metadata.tool's time
    assert idx.summary.models == ["claude-sonnet-4-20250514"]


def test_discovery_lists_each_session_once_and_nothing_of_its_parts(tmp_path):
    root = data_copy(tmp_path)
    refs = Store([root]).sessions()
    assert sorted(Path(r.path).name for r in refs) == sorted(f"{s}.json" for s in (PARENT, CHILD, UNDONE))
    # and over the whole fixtures folder: the export and the old layout, no message or part files
    paths = {Path(r.path).relative_to(FIXTURES.resolve()).as_posix() for r in Store([FIXTURES]).sessions()}
    assert len(paths) == 6  # (the data folder's three, the export, the 0.1 layout, the run log)
    assert not any(re.search(r"/storage/(message|part|project|todo|session_diff)/|/session/(message|part)/"
                             r"|/(log|snapshot)/", p) for p in paths)


def test_a_sub_agent_session_names_its_parent():
    child = DATA / SESSIONS / f"{CHILD}.json"
    info = opencode.session_info(child)
    assert info["parent_path"] == str(DATA / SESSIONS / f"{PARENT}.json")
    assert info["agent_type"] == "explore"
    assert SessionIndex(child).build().summary.parent == info["parent_path"]


def test_page_shows_parts_as_a_reader_expects(tmp_path):
    root = data_copy(tmp_path)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    key = f"storage~session~{PROJECT}~{PARENT}"
    html = client.get(f"/s/{key}").get_data(as_text=True)
    assert "Fix divide-by-zero in calc.py" in html
    assert "&lt;script&gt;alert(" in html and "<script>alert(" not in html  # a prompt is text
    assert 'class="thinking"' in html and "divide() has no zero check" in html
    assert re.search(r'<span class="state denied"[^>]*>denied by user</span>', html)
    assert re.search(r'<span class="state interrupted"[^>]*>interrupted</span>', html)
    assert "raise ZeroDivisionError" in html and 'class="diff' in html  # the edit as a diff
    assert "Add a test for divide(1, 0)" in html  # todowrite as a todo list
    assert "compaction asked for (automatic: the context was full)" in html
    assert "Summary of the earlier conversation (compaction)" in html
    assert "APIError: Overloaded" in html and "retry 1 after APIError" in html
    assert "added by OpenCode" in html  # the synthetic text of a mentioned file, as a chip
    assert 'alt="image traceback.png"' in html


def test_undone_messages_say_so(tmp_path):
    root = data_copy(tmp_path)
    idx = SessionIndex(root / SESSIONS / f"{UNDONE}.json").build()
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get(f"/s/storage~session~{PROJECT}~{UNDONE}").get_data(as_text=True)
    assert html.count("undone with /undo") == 2  # the last prompt and its reply, not the first two
    assert len(idx.threads["main"]) == 5


def _write(path: Path, value) -> None:
    """As OpenCode's Storage.write does (Bun.write: the file written again in place)."""
    with open(path, "r+" if path.exists() else "w") as f:
        f.truncate(0)
        f.write(json.dumps(value, indent=2))


def test_a_streaming_part_written_in_place_updates_the_index(tmp_path):
    root = data_copy(tmp_path, ended=False)
    storage = root / "storage"
    main = root / SESSIONS / f"{PARENT}.json"
    part_dir = storage / "part" / "msg_a1c2d3e00103CCCCCCCCCCCCCC"
    bash = next(p for p in part_dir.iterdir() if '"toolu_bash_2"' in p.read_text())
    done = json.loads(bash.read_text())
    running = json.loads(bash.read_text())
    running["state"] = {"status": "running", "input": done["state"]["input"], "title": "Run tests",
                        "metadata": {"output": "collecting ..."}, "time": {"start": done["state"]["time"]["start"]}}
    _write(bash, running)
    idx = SessionIndex(main).build()
    assert idx.calls.calls["toolu_bash_2"].state == "executing"
    files = idx.files()
    _write(bash, done)  # the tool returned: its part is written again in place, nothing else changes
    assert not identity_matches(files) and not idx.unchanged()
    change = idx.refresh()
    assert change
    assert idx.calls.calls["toolu_bash_2"].state == "completed"
    # a new prompt: a message file and its part appear
    mid = "msg_a1c2d3e00108ZZZZZZZZZZZZZZ"
    (storage / "message" / PARENT / f"{mid}.json").write_text(json.dumps(
        {"id": mid, "sessionID": PARENT, "role": "user", "time": {"created": 1764064900000},
         "agent": "build", "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}}))
    (storage / "part" / mid).mkdir()
    (storage / "part" / mid / "prt_1.json").write_text(json.dumps(
        {"id": "prt_1", "sessionID": PARENT, "messageID": mid, "type": "text", "text": "One more thing."}))
    assert idx.refresh()
    assert mid in idx.threads["main"].ids


def test_a_part_being_written_is_kept_as_a_note(tmp_path):
    root = data_copy(tmp_path)
    part_dir = root / "storage" / "part" / "msg_a1c2d3e00106FFFFFFFFFFFFFF"
    (part_dir / "prt_zz.json").write_text('{"id": "prt_zz", "type": "text", "te')
    idx = SessionIndex(root / SESSIONS / f"{PARENT}.json").build()
    assert idx.summary.unparsed == 0
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get(f"/s/storage~session~{PROJECT}~{PARENT}").get_data(as_text=True)
    assert "a part of this message could not be read" in html and "Now handle modulo too." in html


def test_detection_takes_nothing_from_other_formats(tmp_path):
    # a session.json-like file under a folder named session/ that is not OpenCode's is not claimed
    other = tmp_path / "session" / "p1" / "abc.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert detect.detect_file(other).format != "opencode"
    assert opencode.folder_document(other) is None
    # Wolo's messages (its ToolPart is flat: status on the part) stay Wolo's
    wolo = ROOT / "test_data" / "formats" / "wolo" / "golden-mbos-wolo-0.13.3" / "calc-session.jsonl"
    assert detect.detect_file(wolo).format == "wolo"
    assert opencode.sniff({"id": "m", "role": "assistant", "parts": [{"type": "tool", "tool": "x",
                                                                     "status": "completed"}]}) == 0


def test_a_sub_agent_session_written_later_goes_under_its_call(tmp_path):
    root = data_copy(tmp_path, ended=False)
    child = root / SESSIONS / f"{CHILD}.json"
    held = child.read_text()
    child.unlink()
    idx = SessionIndex(root / SESSIONS / f"{PARENT}.json").build()
    assert list(idx.threads) == ["main"]
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    page = app.test_client().get(f"/s/storage~session~{PROJECT}~{PARENT}")
    assert page.status_code == 200 and "Sub-agent:" not in page.get_data(as_text=True)
    child.write_text(held)
    assert idx.refresh()
    assert idx.calls.calls["toolu_task_1"].subthread in idx.threads
    assert len(idx.threads[idx.calls.calls["toolu_task_1"].subthread]) == 3


def test_a_command_that_exits_non_zero_fails():
    def bash(call, exit_code):
        return {"type": "tool", "callID": call, "tool": "bash", "state": {
            "status": "completed", "input": {"command": "pytest"}, "output": "1 failed", "title": "t",
            "metadata": {"output": "1 failed", "exit": exit_code}, "time": {"start": 1, "end": 2}}}
    rec = {"info": {"id": "m", "role": "assistant", "time": {"created": 1764064800000}},
           "parts": [bash("a", 1), bash("b", 0), bash("c", None)]}
    ev = opencode.event(rec, opencode.Ref("main", 1, 0, 1, "messages[0]"))
    results = {b.tool_use_id: b for b in ev.blocks if b.kind == "tool_result"}
    assert results["a"].is_error and "exit code 1" in [c.text for c in results["a"].content]
    assert not results["b"].is_error and not results["c"].is_error


def test_served_from_below_storage_it_says_where_the_messages_are(tmp_path):
    root = data_copy(tmp_path)
    app = create_app({"ROOTS": [str(root / "storage" / "session")], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    html = app.test_client().get(f"/s/{PROJECT}~{PARENT}").get_data(as_text=True)
    assert "Fix divide-by-zero in calc.py" in html
    text = html.replace("&#39;", "'")
    assert "This session's messages are not shown" in text
    assert "outside the folders being served. Serve OpenCode's data folder" in text


def test_a_damaged_sqlite_store_is_listed_as_skipped_saying_why(tmp_path):
    """(OpenCode 1.2+'s database is read: test_format_opencode_db.py.) One that cannot be read is
    named among the skipped files; the file storage beside it still lists."""
    root = data_copy(tmp_path)
    (root / "opencode.db").write_bytes(b"SQLite format 3\x00" + bytes(100))
    store = Store([root])
    assert len(store.sessions()) == 3
    why = store.skipped[str(root / "opencode.db")]
    assert why.startswith("OpenCode's SQLite database: ")
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get("/").get_data(as_text=True).replace("&#39;", "'")
    assert "opencode.db" in html and "OpenCode's SQLite database" in html


def test_the_per_project_layout_with_separate_parts(tmp_path):
    """OpenCode 0.2's layout (storage.ts's first migration copies it): per project,
    `session/info/<id>.json`, `session/message/<id>/`, `session/part/<id>/<message id>/`."""
    base = tmp_path / "project" / "home-dev-calc" / "storage" / "session"
    shutil.copytree(DATA / "storage" / "message" / PARENT, base / "message" / PARENT)
    for m in (base / "message" / PARENT).iterdir():
        shutil.copytree(DATA / "storage" / "part" / m.stem, base / "part" / PARENT / m.stem)
    (base / "info").mkdir()
    shutil.copy(DATA / SESSIONS / f"{PARENT}.json", base / "info" / f"{PARENT}.json")
    old = SessionIndex(base / "info" / f"{PARENT}.json").build()
    new = SessionIndex(DATA / SESSIONS / f"{PARENT}.json").build()
    assert old.threads["main"].ids == new.threads["main"].ids[:-1]  # (its todos lived elsewhere)
    assert {c.id: c.state for c in old.calls.calls.values()} == {
        c.id: c.state for c in new.calls.calls.values() if c.id != "toolu_grep_s1"}
    assert [Path(r.path).name for r in Store([tmp_path]).sessions()] == [f"{PARENT}.json"]


def test_a_run_log_reads_as_the_session_it_ran():
    """`opencode run --format json` (cli/cmd/run.ts): a line per part as it ended."""
    log = FIXTURES / "run" / "opencode-run.jsonl"
    found = detect.detect_file(log)
    assert (found.format, found.mode) == ("opencode", "jsonl")
    idx = SessionIndex(log).build()
    stored = SessionIndex(DATA / SESSIONS / f"{PARENT}.json").build()
    assert {c.id: c.state for c in idx.calls.calls.values()} == {
        c.id: c.state for c in stored.calls.calls.values() if c.id != "toolu_grep_s1"}
    assert idx.calls.calls["toolu_edit_1"].duration == pytest.approx(1.2)
    assert idx.summary.errors == 1  # the session's error line
    # each step its own model call, with its own tokens and cost
    assert idx.summary.usage["calls"] == 4  # two steps of the first reply, one of two others
    assert idx.summary.usage["source_cost"] == pytest.approx(0.0421 + 0.0051 + 0.0032)
    th = idx.threads["main"]
    shown = [k for k, h in zip(th.kinds, th.hidden) if not h]
    assert "step" not in shown and th.kinds.count("step") == 7


def test_a_damaged_session_file_still_shows_its_messages(tmp_path):
    root = data_copy(tmp_path)
    main = root / SESSIONS / f"{PARENT}.json"
    main.write_text('{"id": "ses_53a1c2d3e001aAbBcCdDeEfFgG", "title": "Fix div')  # cut short
    assert detect.detect_file(main).format == "opencode"
    idx = SessionIndex(main).build()
    assert REPLY in idx.threads["main"].ids and idx.summary.title.startswith("Fix the divide-by-zero")
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get(f"/s/storage~session~{PROJECT}~{PARENT}").get_data(as_text=True)
    assert "malformed JSON" in html and "Let me look at" in html  # its card says why, the rest reads
