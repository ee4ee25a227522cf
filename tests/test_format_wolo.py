"""Wolo adapter: a session written by the real library (mbos-wolo 0.13.3) in its on-disk folder
layout and as JSONL / a JSON list, and files written by hand from Wolo's message documentation.

No real public Wolo session exists (see ../shared/corpus/SOURCES.md §5); the golden files come from
`tests/golden/make_wolo_golden.py`, which runs Wolo's own SessionStorage in a throwaway venv.
"""

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import detect, wolo
from viewer.index import SessionIndex
from viewer.model import Event, Ref, Text, ToolResult, ToolUse
from viewer.store import Store
from viewer.timeline import load_events, raw_record
from viewer.toolcalls import ToolCallMap
from viewer.web import create_app

from conftest import ROOT, quiet_copy

FIXTURES = ROOT / "test_data" / "formats" / "wolo"
GOLDEN = FIXTURES / "golden-mbos-wolo-0.13.3"
FOLDER = GOLDEN / "sessions" / "Nova_260302_100000"
SEED = FIXTURES / "seed-docs"
R = Ref("main", 1, 0, 1)
# a part's status → the state the call is counted under (an interrupted part is not a failure)
STATE = {"completed": "completed", "partial": "completed", "error": "error", "failed": "error",
         "interrupted": "interrupted", "running": "executing", "pending": "pending"}


def raw_messages(path: Path) -> list[dict]:
    """The messages of a fixture read straight from the JSON, in Wolo's own (timestamp) order."""
    if path.name == "session.json":
        msgs = [json.loads(p.read_text()) for p in (path.parent / "messages").glob("*.json")]
        return sorted(msgs, key=lambda m: m["timestamp"])
    if path.suffix == ".jsonl":
        return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    doc = json.loads(path.read_text())
    return doc if isinstance(doc, list) else doc["messages"]


def main_files() -> list[Path]:
    return sorted([*SEED.iterdir(), GOLDEN / "calc-session.jsonl", GOLDEN / "calc-session.json",
                   FOLDER / "session.json"])


@pytest.mark.parametrize("path", main_files(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_every_fixture_is_read_whole(path):
    d = detect.detect_file(path)
    assert d.format == "wolo"
    assert d.mode == ("jsonl" if path.suffix == ".jsonl" else "document")
    idx = SessionIndex(path).build()
    th = idx.threads["main"]
    msgs = raw_messages(path)
    cards = 2 if path.name == "session.json" else 0  # session.json and todos.json, hidden
    assert len(th) == len(msgs) + cards and idx.summary.hidden == cards
    ids = [i for i, k in zip(th.ids, th.kinds) if k not in ("session", "todos")]
    assert ids == [m["id"] for m in msgs]
    assert "unparsed" not in th.kinds
    parts = [p for m in msgs for p in m["parts"] if p["type"] == "tool"]
    want = {"pending": 0, "executing": 0, "completed": 0, "error": 0}
    for p in parts:
        want[STATE[p["status"]]] = want.get(STATE[p["status"]], 0) + 1
    assert idx.calls.by_state() == want and not idx.calls.orphans
    evs = load_events(idx, "main", 0, len(th))
    thinking = [b for e in evs for b in e.blocks if b.kind == "thinking"]
    assert [t.text for t in thinking] == [m["reasoning_content"] for m in msgs
                                          if m["reasoning_content"]]


def test_golden_session_figures_and_part_times():
    idx = SessionIndex(FOLDER / "session.json").build()
    calls = idx.calls.calls
    assert {k: c.status for k, c in calls.items()} == {
        "call_write_1": "completed", "call_shell_2": "error", "call_read_3": "completed",
        "call_edit_4": "completed", "call_shell_5": "executing", "call_read_6": "pending"}
    # durations come from the part's own start/end times, not from the message timestamp
    assert calls["call_write_1"].duration == pytest.approx(0.35, abs=1e-3)
    assert calls["call_shell_2"].duration == pytest.approx(1.8, abs=1e-3)
    assert calls["call_shell_5"].duration is None  # still running: no end time
    assert calls["call_shell_5"].called_at is not None
    assert idx.summary.agents == ["Nova"]
    assert idx.info == {"agent": "Nova"}  # pid set: no "finished" from the source
    assert idx.summary.title.startswith("Create calc.py")
    th = idx.threads["main"]
    assert th.ids[:2] == ["session-Nova_260302_100000", "msg_001"] and th.kinds[-1] == "todos"
    assert th.paths[1] == "messages/msg_001.json"
    # the raw view of a message is that message file's content
    raw, cut = raw_record(idx, "msg_004")
    assert json.loads(raw) == json.loads((FOLDER / "messages" / "msg_004.json").read_text())
    assert not cut


def test_seed_statuses_and_message_endings():
    idx = SessionIndex(SEED / "calculator-compacted.json").build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    summary, _, _, interrupted, errored = evs
    assert summary.kind == "compact_summary" and "3 messages" in summary.blocks[0].text
    assert idx.summary.title == "Now test the calculator and show me the output"  # not the summary
    assert idx.calls.calls["call_003"].status == "error"  # interrupted by the user
    assert interrupted.blocks[-1].text == "turn ended: interrupted"
    assert errored.role == "error"
    hello = SessionIndex(SEED / "hello-world.jsonl").build()
    assert hello.calls.calls["tool_abc123"].status == "error"  # the design note's "failed"
    assert hello.calls.calls["tool_001"].duration == pytest.approx(0.4)


def folder_copy(tmp_path) -> Path:
    dst = tmp_path / "sessions" / FOLDER.name
    shutil.copytree(FOLDER, dst)
    return dst


def save_like_wolo(folder: Path, msg: dict) -> None:
    """What SessionStorage.save_message does: write the message file, then rewrite session.json
    (atomic rename) with a new updated_at."""
    tmp = folder / "messages" / f"{msg['id']}.tmp"
    tmp.write_text(json.dumps(msg, indent=2))
    tmp.rename(folder / "messages" / f"{msg['id']}.json")
    meta = json.loads((folder / "session.json").read_text())
    meta["updated_at"] = msg["timestamp"]
    (folder / "session.tmp").write_text(json.dumps(meta, indent=2))
    (folder / "session.tmp").rename(folder / "session.json")


def test_folder_session_follows_wolo_writing_it(tmp_path):
    folder = folder_copy(tmp_path)
    idx = SessionIndex(folder / "session.json").build()
    assert len(idx.threads["main"]) == 6
    last = json.loads((folder / "messages" / "msg_004.json").read_text())
    shell = last["parts"][2]
    shell.update(status="completed", output="2 passed in 0.03s", end_time=shell["start_time"] + 0.9)
    last["finished"], last["finish_reason"] = True, "tool_calls"
    save_like_wolo(folder, last)
    reply = {"id": "msg_005", "role": "assistant", "timestamp": last["timestamp"] + 5,
             "parts": [{"type": "text", "id": "t5", "text": "All tests pass."}], "finished": True,
             "finish_reason": "stop", "reasoning_content": "", "metadata": {}}
    save_like_wolo(folder, reply)
    change = idx.refresh()
    assert change.reset
    assert idx.threads["main"].ids[-2:] == ["msg_005", "L7"]  # todos stay last
    assert idx.calls.calls["call_shell_5"].status == "completed"
    assert idx.calls.calls["call_shell_5"].duration == pytest.approx(0.9, abs=1e-3)


def test_folder_order_is_the_messages_own_time_and_bad_files_are_kept(tmp_path):
    folder = tmp_path / "s1"
    (folder / "messages").mkdir(parents=True)
    (folder / "session.json").write_text(json.dumps({"id": "s1", "pid": None,
                                                     "agent_display_name": "Ada"}))
    for name, ts, text in (("aaa", 30.0, "third"), ("zzz", 10.0, "first"), ("mmm", 20.0, "second")):
        (folder / "messages" / f"{name}.json").write_text(json.dumps(
            {"id": name, "role": "user", "timestamp": 1_700_000_000 + ts,
             "parts": [{"type": "text", "id": f"t-{name}", "text": text}]}))
    (folder / "messages" / "broken.json").write_text('{"id": "broken", "role": ')
    idx = SessionIndex(folder / "session.json").build()
    th = idx.threads["main"]
    assert th.ids[1:4] == ["zzz", "mmm", "aaa"]
    assert th.kinds[-1] == "unparsed"  # the broken file, shown last, not dropped
    assert idx.summary.unparsed == 1 and idx.info == {"agent": "Ada", "finished": True}


def test_another_tools_session_json_is_left_alone(tmp_path):
    (tmp_path / "messages").mkdir()
    (tmp_path / "messages" / "1.json").write_text(json.dumps({"role": "user", "content": "hi"}))
    (tmp_path / "session.json").write_text(json.dumps({"messages": [{"role": "user",
                                                                     "content": "hi"}]}))
    assert wolo.folder_document(tmp_path / "session.json") is None
    assert detect.detect_file(tmp_path / "session.json").format != "wolo"


def test_store_lists_a_session_folder_once(tmp_path):
    folder_copy(tmp_path)
    refs = Store([tmp_path / "sessions"]).sessions()
    assert [r.label for r in refs] == [f"{FOLDER.name}/session"]
    refs = Store([FIXTURES]).sessions()
    paths = {Path(r.path).relative_to(FIXTURES).as_posix() for r in refs}
    assert not any("/messages/" in p or p.endswith("todos.json") for p in paths)
    assert "golden-mbos-wolo-0.13.3/sessions/Nova_260302_100000/session.json" in paths


def test_tool_part_mapping():
    ev = wolo.event({"id": "m", "role": "assistant", "timestamp": 1.7e9, "parts": [
        {"type": "tool", "id": "a", "tool": "shell", "input": {}, "output": "partial out",
         "status": "running", "start_time": 1.7e9, "end_time": 0.0},
        {"type": "tool", "id": "b", "tool": "multiedit", "input": {}, "output": "1/2 files edited",
         "status": "partial", "start_time": 0.0, "end_time": 0.0},
        {"type": "tool", "id": "c", "tool": "read", "input": {}, "output": "", "status": "error"},
        {"type": "tool", "id": "d", "tool": "x", "input": {}, "output": "", "status": "pending"},
        {"type": "tool", "id": "e", "tool": "grep", "input": {"pattern": "x"}, "output": "[pruned]",
         "status": "completed", "metadata": {"pruned": True}},
        {"type": "file", "id": "f"}]}, R)
    uses = {b.id: b for b in ev.tool_uses()}
    results = {b.tool_use_id: b for b in ev.tool_results()}
    assert uses["a"].status == "running" and uses["a"].started == 1.7e9 and uses["a"].ended is None
    assert ev.running == ["a"] and "a" not in results
    # (`partial`: Wolo's word for a batch some of whose calls failed: it failed)
    assert results["b"].is_error is True and results["c"].is_error is True
    assert results["c"].content[0].text == "error, no output"
    assert "d" not in results
    assert [b.kind for b in ev.blocks][-1] == "data"  # an unknown part type is kept
    assert results["e"].content[-1].text == "output pruned by compaction"
    assert ev.source_id == "m" and ev.timestamp is not None


def test_sniff_claims_wolo_parts_only():
    assert wolo.sniff({"id": "m", "role": "user", "timestamp": 1.0,
                       "parts": [{"type": "text", "id": "t", "text": "x"}]}) == 2
    assert wolo.sniff({"role": "assistant", "parts": [{"type": "tool", "id": "t", "tool": "read",
                                                       "input": {}, "status": "pending"}]}) == 3
    assert wolo.sniff({"role": "user", "parts": [{"text": "hi"}]}) == 0  # Gemini contents
    assert wolo.sniff({"role": "user", "content": "hi"}) == 0
    assert wolo.records([{"role": "user", "content": "hi"}]) is None


def test_call_times_win_over_event_times():
    """The state map prefers a call's own start/end (ToolUse.started/.ended) when it has them."""
    m = ToolCallMap()
    e = Event(R, "assistant", blocks=[ToolUse("t", "shell", {}, status="completed", started=100.0,
                                              ended=102.5), ToolResult("t", [Text("ok")])])
    m.observe(e, 0, 110.0)
    c = m.calls["t"]
    assert (c.called_at, c.finished_at, c.duration) == (100.0, 102.5, 2.5)
    m2 = ToolCallMap()  # without them: from the event holding the call to the one with the result
    m2.observe(Event(R, "assistant", blocks=[ToolUse("t", "x", {})]), 0, 10.0)
    m2.observe(Event(Ref("main", 2, 0, 1), "tool", blocks=[ToolResult("t", [])]), 1, 12.0)
    assert m2.calls["t"].duration == 2.0


def test_check_json_names_the_format():
    r = CliRunner().invoke(main, ["check", str(FOLDER / "session.json"), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["format"] == "wolo" and data["mode"] == "document" and data["events"] == 6
    assert data["tool_calls"] == {"pending": 1, "executing": 1, "completed": 3, "error": 1}
    assert data["unparsed"] == []


def test_page_shows_tool_states_and_agent(tmp_path):
    quiet_copy(FOLDER, tmp_path / "sessions" / FOLDER.name)  # finished: the pending read is never answered
    app = create_app({"ROOTS": [str(tmp_path / "sessions")], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    client = app.test_client()
    listing = client.get("/").get_data(as_text=True)
    assert "Nova" in listing and "Create calc.py" in listing
    (href,) = set(re.findall(r'href="(/s/[^"]+)"', listing))
    html = client.get(href).get_data(as_text=True)
    assert html.count('class="ev ') == 6
    assert html.count('class="tool ') == 6
    for state in ("completed", "error"):
        assert f'<span class="state {state}">{state}</span>' in html
    # the session has ended: the pending read and the running shell never got their results
    assert html.count('never answered</span>') == 2
    assert '<span class="state executing">executing</span>' not in html
    assert "<details class=\"thinking\"" in html
    assert "division by zero" in html  # the failed shell's output
    assert "never answered" in html  # the pending read of a session gone quiet
