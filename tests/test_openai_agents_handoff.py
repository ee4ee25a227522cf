"""An Agents SDK (openai-agents 0.24.0) run with a handoff, saved the ways a user saves one
(tests/golden/make_openai_agents_golden.py): `to_input_list()` as a JSON list, the same items one
per line, the SDK's SQLiteSession exported with `get_items()`, and the RunState
(`result.to_state().to_json()`). Each reads the same: the handoff notice, the agent that speaks
after it, its tool call completed with its output; the RunState, whose items name their agents,
also names the agent before the handoff."""

import json
import re

import pytest

from viewer.index import SessionIndex
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT

FIX = ROOT / "test_data" / "formats" / "openai-chat" / "agents-sdk-0.24.0-handoff"
SAVED = ["to_input_list.json", "to_input_list.jsonl", "session_items.jsonl", "run_state.json"]


def items(name):
    text = (FIX / name).read_text()
    if name.startswith("run_state"):  # the conversation as to_input_list() gives it
        doc = json.loads(text)
        return [{"role": "user", "content": doc["original_input"]}] + [
            i["raw_item"] for i in doc["generated_items"]]
    return json.loads(text) if name.endswith(".json") else [json.loads(x) for x in text.splitlines()]


def page(tmp_path, name):
    """The session's page, served from a folder holding that one file."""
    root = tmp_path / "root"
    root.mkdir()
    (root / name).write_bytes((FIX / name).read_bytes())
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    home = client.get("/").get_data(as_text=True)
    href = next(h for h in re.findall(r'href="(/s/[^"?]+)"', home))
    return client.get(href).get_data(as_text=True)


def cards(html):
    """(speaker shown, the card's html) for each message card on the page, in order."""
    body = html.split('class="timeline', 1)[1]
    return [(m.group(1) if (m := re.search(r'<span class="who">([^<]*)</span>', li)) else None, li)
            for li in body.split("<li ")[1:]]


@pytest.mark.parametrize("name", SAVED)
def test_handoff_speaker_change_and_tool_call(tmp_path, name):
    recs = items(name)
    handoff = next(i for i, r in enumerate(recs) if r.get("output") == '{"assistant": "Refunds"}')
    idx = SessionIndex(FIX / name).build()
    th = idx.threads["main"]
    assert th.mode == ("document" if name.endswith(".json") else "jsonl")
    assert idx.summary.format == "openai-chat" and not idx.calls.orphans
    evs = load_events(idx, "main", 0, len(th))
    # only the RunState names Triage: elsewhere what it says before the handoff stays unnamed;
    # after it, every item the model writes is Refunds'
    first = "Triage" if name == "run_state.json" else None
    spoken = [(i, e.author) for i, e in enumerate(evs) if e.role == "assistant"]
    assert spoken == [(1, first), (2, first), (4, "Refunds"), (6, "Refunds")]
    assert handoff == 3 and idx.summary.agents == [a for a in (first, "Refunds") if a]
    # the lookup is completed with its output; the handoff call answered in words
    lookup = next(r["call_id"] for r in recs if r.get("name") == "lookup_order")
    transfer = next(r["call_id"] for r in recs if r.get("name") == "transfer_to_refunds")
    assert idx.calls.calls[lookup].state == "completed"
    assert idx.calls.calls[transfer].state == "completed"
    html = page(tmp_path, name)
    assert "handed off to Refunds" in html and "{&#34;assistant&#34;" not in html
    shown = cards(html)
    said = next(who for who, li in shown if "pass you to our refunds team" in li)
    answer = next(who for who, li in shown if "I have filed a full refund" in li)
    assert said == first and answer == "Refunds"
    card = html.split(f'id="tc-{lookup}"', 1)[1].split('class="call-thread"', 1)[0]
    assert '<span class="tool-name">lookup_order</span>' in card
    assert '<span class="state completed">completed</span>' in card
    assert "<dt>order_id</dt><dd>A17</dd>" in card and '"delivered"' in card  # its output, shown
    # the card of the call carries Refunds' name too
    assert next(who for who, li in shown if f'id="tc-{lookup}"' in li) == "Refunds"


def test_jsonl_handoff_carried_across_a_live_append(tmp_path):
    """A session written as JSONL while the run goes on: the lines after the handoff, appended
    after the first read, are still Refunds' (what the handoff said is kept between passes, and
    through the index cache)."""
    lines = (FIX / "to_input_list.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_text("".join(lines[:4]))
    idx = SessionIndex(path).build()
    assert [e.author for e in load_events(idx, "main", 0, 4) if e.role == "assistant"] == [None, None]
    idx = SessionIndex.load(idx.dump())  # as the index cache keeps it between runs
    with path.open("a") as f:
        f.write("".join(lines[4:]))
    idx.refresh()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert [(e.role, e.author) for e in evs][4:] == [
        ("assistant", "Refunds"), ("tool", None), ("assistant", "Refunds")]


def test_run_state_stopped_for_approval(tmp_path):
    """A RunState kept while a `needs_approval` tool waits: the call shows once, by the agent the
    run handed off to, awaiting permission, with a word of why the run stopped."""
    name = "run_state_awaiting_approval.json"
    idx = SessionIndex(FIX / name).build()
    assert idx.summary.agents == ["Desk", "Cashier"] and not idx.calls.orphans
    assert idx.calls.calls["call_0012"].state == "awaiting_permission"
    assert idx.calls.calls["call_0011"].state == "completed"  # the handoff
    html = page(tmp_path, name)
    assert html.count('id="tc-call_0012"') == 1  # the approval item is not a second call
    shown = cards(html)
    assert next(who for who, li in shown if 'id="tc-call_0012"' in li) == "Cashier"
    assert next(who for who, li in shown if 'id="tc-call_0011"' in li) == "Desk"
    card = html.split('id="tc-call_0012"', 1)[1].split('class="call-thread"', 1)[0]
    assert "awaiting permission" in card and "<dt>amount</dt><dd>39.9</dd>" in card
    assert "the run waits for approval to run issue_refund" in html
    assert "handed off to Cashier" in html


def test_first_screen_before_the_index_names_the_agent_after_the_handoff():
    """The page drawn from the file's first lines while the index is still being built (partial.head)
    reads the handoff as the index will: the items after it are Refunds'."""
    from viewer import partial

    idx = partial.head(str(FIX / "to_input_list.jsonl"))
    assert idx.region is not None
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert [e.author for e in evs if e.role == "assistant"] == [None, None, "Refunds", "Refunds"]


def test_a_run_item_of_a_newer_type_shows_its_own_output(tmp_path):
    # a RunState item of a type this reader does not know keeps what it says beside its raw item
    # (its `output`): shown on the item's card and in the export, not only the raw item
    doc = json.loads((FIX / "run_state.json").read_text())
    doc["generated_items"].insert(5, {
        "type": "shell_output_item", "agent": {"name": "Refunds"}, "output": "refund R-88 filed",
        "raw_item": {"type": "function_call_output", "call_id": "call_0003", "output": "ok"}})
    doc["generated_items"].insert(6, {
        "type": "memory_item", "agent": {"name": "Refunds"}, "output": "remembered: prefers email",
        "raw_item": {"type": "memory_write", "id": "mem_1"}})
    doc["generated_items"].insert(7, {  # (a type that is not a name: read as the others, no failure)
        "type": {"kind": "x"}, "agent": {"name": "Refunds"}, "raw_item": {"type": "memory_write", "id": "mem_2"}})
    root = tmp_path / "root"
    root.mkdir()
    (root / "run_state.json").write_text(json.dumps(doc))
    idx = SessionIndex(root / "run_state.json").build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    shown = json.dumps([b.value for e in evs for b in e.blocks if b.kind == "data"])
    assert "refund R-88 filed" in shown and "remembered: prefers email" in shown
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    key = next(s["key"] for s in client.get("/sessions.json").get_json()["sessions"])
    md = client.get(f"/s/{key}/export?format=md").get_data(as_text=True)
    assert "refund R-88 filed" in md and "remembered: prefers email" in md
    html = client.get(f"/s/{key}").get_data(as_text=True)
    assert "refund R-88 filed" in html
