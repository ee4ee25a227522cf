"""Real MARSYS and Wolo recordings: MARSYS 0.2.1's own auto_run (Coordinator invokes Researcher, which
runs two tools, one raising) saved by Agent.save_state; Wolo (mbos-wolo 0.13.3) run from its CLI,
its session folder as it wrote it. Both against a fake chat-completions model (tests/recorded/README.md)."""

import json

import pytest

from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.timeline import load_events

from conftest import ROOT

REC = ROOT / "tests" / "recorded"
MARSYS = REC / "marsys-0.2.1"
WOLO = REC / "mbos-wolo-0.13.3" / "880e8235"


def events(idx):
    return load_events(idx, "main", 0, len(idx.threads["main"]))


def test_marsys_agents_memories():
    coord = json.loads((MARSYS / "coordinator.memory.json").read_text())["messages"]
    res = json.loads((MARSYS / "researcher.memory.json").read_text())["messages"]
    idx = SessionIndex(MARSYS / "coordinator.memory.json").build()
    assert detect.detect_file(MARSYS / "coordinator.memory.json").format == "marsys"
    evs = events(idx)
    call = evs[-1]  # the Coordinator's action JSON: an agent call, not raw JSON text
    assert (call.author, call.recipient) == ("Coordinator", "Researcher")
    assert "next_action" not in call.text() and "Find weather in Lyon" in call.text()
    assert [b.text for b in call.blocks if b.kind == "thinking"] == ["Ask the Researcher."]
    idx = SessionIndex(MARSYS / "researcher.memory.json").build()
    evs = events(idx)
    assert len(evs) == len(res) and "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
    # the request arrives from the Coordinator (MARSYS prefixes "[Request from <caller>]")
    assert evs[0].author == "Coordinator" and not evs[0].text().startswith("[Request from")
    tools = {m["tool_call_id"]: m for m in res if m["role"] == "tool"}
    assert {c: idx.calls.calls[c].status for c in tools} == {
        c: "error" if str(m["content"]).startswith("{'error'") else "completed" for c, m in tools.items()}
    assert sorted(idx.calls.by_state().items()) == sorted(
        {"pending": 0, "executing": 0, "completed": 1, "error": 1}.items())
    final = evs[-1]
    assert final.author == "Researcher" and final.text().startswith("Weather lookup failed")
    assert len(coord) == 2


def test_wolo_session_folder():
    parts = []
    msgs = sorted((json.loads(p.read_text()) for p in (WOLO / "messages").glob("*.json")),
                  key=lambda m: m["timestamp"])
    for m in msgs:
        parts += [p for p in m["parts"] if p["type"] == "tool"]
    found = detect.detect_file(WOLO / "session.json")
    assert found.format == "wolo"
    idx = SessionIndex(WOLO / "session.json").build()
    evs = events(idx)
    assert "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
    assert idx.summary.title == msgs[0]["parts"][0]["text"]
    # Wolo saves every part of this run "completed", though its read of a missing file and its edit
    # with nothing to change failed: the tools' own failure texts make them read failed. The exit
    # code of a failing shell command is not saved, so that one stays completed, output visible.
    assert {p["status"] for p in parts} == {"completed"}
    failed = {p["id"] for p in parts if p["output"].startswith(("File not found: ", "old_string "))}
    assert len(failed) == 2
    assert {p["id"]: idx.calls.calls[p["id"]].status for p in parts} == {
        p["id"]: "error" if p["id"] in failed else "completed" for p in parts}
    assert idx.calls.errors() == 2
    outputs = [b for e in evs for b in e.blocks if b.kind == "tool_result"]
    assert [o.content[0].text for o in outputs] == [p["output"] for p in parts]
    # the times Wolo puts on each part are the call's own
    for p in parts:
        assert idx.calls.calls[p["id"]].duration == pytest.approx(p["end_time"] - p["start_time"], abs=1e-3)
    thinking = [b.text for e in evs for b in e.blocks if b.kind == "thinking"]
    assert thinking == [m["reasoning_content"] for m in msgs if m.get("reasoning_content")]
    assert not any(b.kind == "text" and not b.text.strip() for e in evs for b in e.blocks)  # empty parts


@pytest.mark.parametrize("tool,output,failed", [
    # the texts Wolo 0.13's tools return with `metadata.error` (the part is still saved completed)
    ("read", "File not found: /w/missing.txt\n\nDid you mean one of these?\n/w/mising.txt", True),
    ("read", "Cannot read binary file: /w/a.png", True),
    ("read", '<file path="/w/a.txt" lines="1">\n    1| File not found: no\n</file>', False),
    ("write", "Error writing file: [Errno 30] Read-only file system: '/x'", True),
    ("write", "Successfully wrote 15 bytes to /w/hello.py", False),
    ("edit", "Old text not found in file (tried multiple matching strategies).\nPreview: x...", True),
    ("edit", "Found multiple matches for old_string. Provide more surrounding lines", True),
    ("edit", "Successfully edited /w/a.py\nChanges: +1 -1 lines\n\n", False),
    ("grep", "Path not found: /nope", True),
    ("grep", "No matches found for pattern: TODO", False),
    ("ls", "Not a directory: /w/a.py", True),
    ("glob", "Error running glob: bad pattern", True),
    ("shell", "Command timed out after 30000ms", True),
    ("shell", "ls: cannot access '/nope': No such file or directory\n", False),
    ("multiedit", "Multi-edit completed: 1/2 files edited\n\n✓ a.py: Successfully edited", True),
    ("multiedit", "Multi-edit completed: 2/2 files edited\n", False),
    ("task", "Subagent error: model unavailable", True),
    ("memory_save", "File not found: x", False),  # only each tool's own texts count
])
def test_wolo_completed_parts_that_failed(tool, output, failed):
    from viewer.formats import wolo
    from viewer.model import Ref
    ev = wolo.event({"id": "m1", "role": "assistant", "timestamp": 1.0, "parts": [
        {"type": "tool", "id": "t1", "tool": tool, "input": {}, "output": output, "status": "completed",
         "start_time": 1.0, "end_time": 2.0}]}, Ref("main", 1, 0, 1))
    (result,) = ev.tool_results()
    assert bool(result.is_error) is failed and result.content[0].text == output


def test_wolo_refused_shell_command_reads_denied():
    """Wolo run in coop mode with stdin not a terminal (record: `fake_chat_for_wolo.py PORT WORK
    risky`, then `wolo --coop PROMPT < /dev/null`): its high-risk guard refuses `git reset --hard`
    without asking anyone and saves the part `error`; that reads denied by settings (not a failure),
    the harmless command beside it completed."""
    folder = REC / "mbos-wolo-0.13.3" / "b87857bb"
    parts = [p for f in (folder / "messages").glob("*.json")
             for p in json.loads(f.read_text())["parts"] if p["type"] == "tool"]
    (refused,) = [p for p in parts if p["status"] == "error"]
    assert refused["output"].startswith("Denied high-risk shell command in non-interactive mode. ")
    idx = SessionIndex(folder / "session.json").build()
    assert {p["id"]: idx.calls.calls[p["id"]].state for p in parts} == {
        p["id"]: "denied_by_settings" if p is refused else "completed" for p in parts}
    assert idx.calls.errors() == 0 and idx.summary.errors == 0


@pytest.mark.parametrize("output,state", [
    # the outputs Wolo 0.13 saves with status "error" for a call something refused before it ran
    ("Permission denied by user: /etc/hosts", "denied"),
    ("Permission denied: /etc/hosts is outside the allowed paths", "denied_by_settings"),
    ("Denied high-risk shell command: Destructive git reset", "denied"),
    ("Denied high-risk shell command in non-interactive mode. Pattern: Destructive git reset",
     "denied_by_settings"),
    ("Permission denied: shell is not allowed by plan agent", "denied_by_settings"),
    ("Permission required: write requires user confirmation for plan agent", "denied_by_settings"),
    ("Tool shell: Unexpected error - boom", "error"),
])
def test_wolo_error_parts_that_were_refused(output, state):
    from viewer.formats import wolo
    from viewer.model import Ref
    from viewer.toolcalls import ToolCallMap
    ev = wolo.event({"id": "m1", "role": "assistant", "timestamp": 1.0, "parts": [
        {"type": "tool", "id": "t1", "tool": "shell", "input": {}, "output": output, "status": "error",
         "start_time": 1.0, "end_time": 1.0}]}, Ref("main", 1, 0, 1))
    calls = ToolCallMap()
    calls.observe(ev, 0, 1.0)
    assert calls.calls["t1"].state == state and calls.calls["t1"].status == "error"
