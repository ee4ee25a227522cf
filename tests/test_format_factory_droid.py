"""factory_droid adapter: Factory Droid sessions (`~/.factory/sessions/<project>/<id>.jsonl` and
its `<id>.settings.json`) from test_data/formats/factory-droid (see its README), read through the
index as the page reads them."""

import json
import os
from pathlib import Path

import pytest

from viewer.formats import detect, factory_droid
from viewer.index import SessionIndex
from viewer.model import Ref
from viewer.store import Store

from conftest import CORPUS, ROOT, built

SESSIONS = ROOT / "test_data" / "formats" / "factory-droid" / "sessions"
PROJECT = SESSIONS / "-home-dev-shop"
MAIN = PROJECT / "5b1f0c2e-7d43-4a9e-b0c1-2f6e8d9a4c37.jsonl"
SUB = PROJECT / "9e8d7c6b-1a2b-4c3d-8e9f-0a1b2c3d4e5f.jsonl"
R = Ref("main", 1, 0, 1)


def result_text(idx, evs, call_id) -> str:
    call = idx.calls.calls[call_id]
    res = next(r for r in evs[call.result[1]].tool_results() if r.tool_use_id == call_id)
    return "\n".join(getattr(b, "text", "") for b in res.content)


@pytest.mark.parametrize("path", [MAIN, SUB])
def test_detected_as_factory_droid(path):
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("factory-droid", "jsonl")


def test_no_other_bundled_or_corpus_session_is_taken_for_factory_droid():
    others = [p for base in (ROOT / "test_data", CORPUS) for p in base.rglob("*.jsonl")
              if "factory-droid" not in p.parts]
    assert len(others) > 20
    assert [p for p in others if detect.detect_file(p).format == "factory-droid"] == []


def test_each_session_is_listed_once_and_its_settings_never():
    rows = Store([SESSIONS]).sessions()
    assert {Path(r.path) for r in rows} == {MAIN, SUB}


def test_title_model_calls_and_results():
    idx, evs = built(MAIN)
    assert idx.summary.title == ("After login the user lands on /home instead of the page they came "
                                 "from. Fix it.")
    assert idx.summary.models == ["claude-sonnet-4-5-20250929"]
    states = {cid: c.state for cid, c in idx.calls.calls.items()}
    assert states == {"toolu_read_1": "completed", "toolu_exec_2": "error", "toolu_edit_3": "completed",
                      "toolu_task_4": "completed"}
    uses = {b.id: b for e in evs for b in e.tool_uses()}
    assert uses["toolu_exec_2"].input["command"] == "pytest -q tests/test_auth.py"
    assert "1 failed" in result_text(idx, evs, "toolu_exec_2")
    assert result_text(idx, evs, "toolu_task_4") == "Open redirect: `next` must be a relative path."
    thinking = [b for e in evs for b in e.blocks if b.kind == "thinking"]
    assert thinking[0].text.startswith("The redirect target is probably dropped")


def test_the_reminder_is_a_chip_and_results_only_lines_are_tool_events():
    idx, evs = built(MAIN)
    prompt = next(e for e in evs if e.role == "user")
    assert [b.kind for b in prompt.blocks] == ["context", "text"]
    assert prompt.blocks[0].label == "system reminder"
    assert [e.kind for e in evs if e.role == "tool"] == ["tool_result", "tool_result"]


def test_todos_compaction_and_unknown_records():
    idx, evs = built(MAIN)
    todo = [e for e in evs if e.kind == "todo_state"]
    assert todo[0].blocks[0].text == "todo list (2 items)"
    assert todo[0].blocks[1].text.splitlines() == ["▸ Keep the `next` parameter through login *(in progress)*  ",
                                                  "○ Run the auth tests"]
    assert todo[1].blocks[1].text.startswith("1. [completed] Keep next")  # the wrapped text form
    summary = next(e for e in evs if e.kind == "compact_summary")
    assert summary.blocks[1].text.startswith("The user asked to keep the redirect target")
    odd = next(e for e in evs if e.kind == "unknown")
    assert not odd.hidden and odd.blocks[0].kind == "data"
    assert idx.summary.unparsed == 0
    for rec in ({"type": "message", "message": {"role": "x", "content": 3}}, {"type": "todo_state", "todos": 5},
                {"type": "session_start", "title": None}, {"type": "message", "message": None}, [1], None):
        factory_droid.event(rec, R)


def test_a_message_with_an_unknown_role_is_a_data_card_even_holding_only_results():
    rec = {"type": "message", "message": {"role": "reviewer", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}}
    ev = factory_droid.event(rec, R)
    assert (ev.role, ev.kind) == ("unknown", "message")
    assert [b.kind for b in ev.blocks] == ["data"] and ev.blocks[0].value == rec["message"]


def test_a_sub_agent_session_says_so():
    idx, evs = built(SUB)
    assert idx.summary.title == "sub-agent task (code-reviewer): Review the redirect fix"
    assert evs[0].blocks[0].text == "Droid sub-agent session (code-reviewer) · /home/dev/shop"


def test_the_settings_model_names_the_session_and_a_change_to_it_is_read(tmp_path):
    root = tmp_path / "-p"
    root.mkdir()
    main = root / "s.jsonl"
    main.write_text(SUB.read_text())
    settings = root / "s.settings.json"
    settings.write_text(json.dumps({"model": "gpt-5-codex"}))
    idx = SessionIndex(main).build()
    assert idx.summary.models == ["gpt-5-codex"]
    settings.write_text(json.dumps({"model": "claude-opus-4-1"}))
    os.utime(settings, (2_000_000_000, 2_000_000_000))
    idx.refresh()
    assert "claude-opus-4-1" in idx.summary.models


def test_sniff_claims_droid_records_and_nothing_else():
    assert factory_droid.sniff({"type": "session_start", "id": "x", "title": "t", "cwd": "/"}) == 3
    assert factory_droid.sniff({"type": "todo_state", "todos": []}) == 3
    assert factory_droid.sniff({"type": "message", "message": {"role": "user", "content": "hi"}}) == 2
    assert factory_droid.sniff({"type": "user", "message": {"role": "user", "content": "hi"}}) == 0
    assert factory_droid.sniff({"type": "session.start", "data": {}}) == 0
