"""A background Claude Code sub-agent whose end never reached the session, and its `.meta.json`
written while the viewer watches.

The Agent call of the recorded tour (2.1.331) runs its sub-agent in the background: the call reads
"running in background" until the task notification. Cut the session before that notification (it
ended, or was killed, first): the sub-agent's own files still tell whether it finished — its last
message ended its turn, or its `.meta.json` says `"finished": true` — and the call shows finished,
with "no notification" said; while the agent's transcript is still being written it runs on. A live
tail and one read of the same files agree, and a live page's card follows without a reload.
"""

import json
import shutil
from pathlib import Path

import pytest

from viewer.index import SessionIndex
from viewer.web import create_app
from viewer.web.live import cursor_of

from conftest import ROOT
from test_live_stream import read_messages

PROJECT = ROOT / "test_data" / "formats" / "claude-code" / "2.1.331" / "-home-user-demo"
TOUR = "253a41fe-30bb-43c5-b249-7990744c4070"
AGENT = "ae4ec7844d73bdd8f"
CALL = "toolu_0136e4777c000000000019"


def _rows(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.fixture
def tour(tmp_path):
    """The tour cut before its task notification, its sub-agent cut before its answer, with a
    metadata file that does not yet say it finished. Returns (main, agent file, meta file, the
    agent's lines still to come, the main file's lines still to come)."""
    root = tmp_path / "-home-user-demo"
    (root / TOUR / "subagents").mkdir(parents=True)
    main = root / f"{TOUR}.jsonl"
    rows = _rows(PROJECT / f"{TOUR}.jsonl")
    cut = next(i for i, r in enumerate(rows) if "<task-notification>" in r)
    main.write_text("".join(rows[:cut]), encoding="utf-8")
    src = PROJECT / TOUR / "subagents" / f"agent-{AGENT}.jsonl"
    agent = root / TOUR / "subagents" / src.name
    lines = _rows(src)
    end = next(i for i, r in enumerate(lines) if '"end_turn"' in r)
    agent.write_text("".join(lines[:end]), encoding="utf-8")
    meta = agent.with_suffix(".meta.json")
    full = json.loads(src.with_suffix(".meta.json").read_text(encoding="utf-8"))
    assert full.pop("finished") is True
    meta.write_text(json.dumps(full), encoding="utf-8")
    return main, agent, meta, lines[end:], rows[cut:]


def _call(idx):
    return idx.calls.call(CALL)


def _state(call):
    return call.status, call.named, call.finished_at


def test_a_background_agent_still_at_work_runs_on(tour):
    main, *_ = tour
    call = _call(SessionIndex(main).build())
    assert (call.status, call.named, call.state) == ("executing", "background", "background")
    assert call.finished_at is None and call.subthread == AGENT


def test_an_agent_that_ended_its_turn_finishes_its_call_without_a_notification(tour):
    main, agent, _, rest, _ = tour
    with agent.open("a", encoding="utf-8") as f:
        f.writelines(rest)
    idx = SessionIndex(main).build()
    call = _call(idx)
    assert (call.status, call.named, call.is_error) == ("completed", "finished_unreported", False)
    # finished when the agent gave its answer (its last message), not when it was launched
    th = idx.threads[AGENT]
    assert call.finished_at == th.ts[len(th) - 1] and call.finished_at > call.called_at
    assert idx.calls.by_state()["finished_unreported"] == 1 and "background" not in idx.calls.by_state()


def test_live_the_card_finishes_when_the_agent_does_and_takes_the_notification_after(tour):
    main, agent, meta, rest, notification = tour
    live = SessionIndex(main).build()
    assert _call(live).named == "background"
    with agent.open("a", encoding="utf-8") as f:
        f.writelines(rest)
    change = live.refresh()
    assert CALL in change.calls
    assert _state(_call(live)) == _state(_call(SessionIndex(main).build()))
    assert _call(live).named == "finished_unreported"
    # then the notification comes after all: the call completes as the notification says, as a
    # read of the whole session says
    with main.open("a", encoding="utf-8") as f:
        f.writelines(notification)
    live.refresh()
    once = _call(SessionIndex(main).build())
    assert (once.status, once.named) == ("completed", None)
    assert _state(_call(live)) == _state(once)


def test_an_agent_written_to_again_runs_again(tour):
    main, agent, _, rest, _ = tour
    with agent.open("a", encoding="utf-8") as f:
        f.writelines(rest)
    live = SessionIndex(main).build()
    assert _call(live).named == "finished_unreported"
    last = json.loads(rest[-1])
    again = {**last, "type": "user", "uuid": "u-again", "parentUuid": last["uuid"],
             "message": {"role": "user", "content": "One more thing: list the files too."}}
    with agent.open("a", encoding="utf-8") as f:
        f.write(json.dumps(again) + "\n")
    assert CALL in live.refresh().calls
    assert _state(_call(live)) == ("executing", "background", None)
    assert _state(_call(SessionIndex(main).build())) == ("executing", "background", None)


def test_the_meta_files_finished_mark_ends_it_and_is_read_when_written_in_two_steps(tour):
    main, agent, meta, _, _ = tour
    live = SessionIndex(main).build()
    assert live.unchanged() or live.refresh() is not None
    full = {**json.loads(meta.read_text(encoding="utf-8")), "finished": True}
    text = json.dumps(full)
    meta.write_text(text[: len(text) // 2], encoding="utf-8")  # written in place, half way
    live.refresh()
    assert live.threads[AGENT].meta.get("description") is None  # (half a file says nothing)
    assert _call(live).named == "background"
    # the rest is written: no folder changes, only the file itself
    with meta.open("a", encoding="utf-8") as f:
        f.write(text[len(text) // 2:])
    assert not live.unchanged()
    change = live.refresh()
    assert live.threads[AGENT].meta["description"] == "Check the working directory"
    assert CALL in change.calls and _call(live).named == "finished_unreported"
    assert _state(_call(live)) == _state(_call(SessionIndex(main).build()))


def test_a_half_written_meta_is_read_again_when_it_is_completed(tmp_path):
    # the sub-agent's metadata (its type, its task, the call that spawned it) written in two steps
    # while the session is watched: the second step changes the file, not its folder
    root = tmp_path / "-home-user-demo"
    shutil.copytree(PROJECT / TOUR, root / TOUR)
    shutil.copy(PROJECT / f"{TOUR}.jsonl", root)
    meta = root / TOUR / "subagents" / f"agent-{AGENT}.meta.json"
    text = meta.read_text(encoding="utf-8")
    meta.write_text(text[:40], encoding="utf-8")
    idx = SessionIndex(root / f"{TOUR}.jsonl").build()
    assert idx.threads[AGENT].meta.get("agentType") is None
    with meta.open("a", encoding="utf-8") as f:
        f.write(text[40:])
    assert not idx.unchanged()
    idx.refresh()
    th = idx.threads[AGENT]
    assert th.meta["agentType"] == "general-purpose" and th.meta["toolUseId"] == CALL
    assert th.label == "general-purpose · Check the working directory"
    assert idx.unchanged() or not idx.refresh()


def test_a_live_page_gets_the_finished_card_through_its_stream(tour, tmp_path):
    main, agent, meta, rest, _ = tour
    app = create_app({"ROOTS": [str(main.parent.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    key = f"-home-user-demo~{TOUR}"
    c = app.test_client()
    page = c.get(f"/s/{key}").get_data(as_text=True)
    assert "running in background" in page
    start = cursor_of(app.extensions["viewer"].store.index(key))
    with agent.open("a", encoding="utf-8") as f:
        f.writelines(rest)
    ((_, _, data),) = read_messages(c.get(f"/s/{key}/events?after={start}"), 1)
    assert f'id="tc-{CALL}-state" hx-swap-oob="true"' in data
    assert "finished · no notification" in data and "running in background" not in data
    page = c.get(f"/s/{key}").get_data(as_text=True)
    assert "finished · no notification" in page


def test_a_live_page_gets_the_card_the_meta_file_finishes(tour, tmp_path):
    main, agent, meta, rest, _ = tour
    app = create_app({"ROOTS": [str(main.parent.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    key = f"-home-user-demo~{TOUR}"
    c = app.test_client()
    start = cursor_of(app.extensions["viewer"].store.index(key))
    meta.write_text(json.dumps({**json.loads(meta.read_text(encoding="utf-8")), "finished": True}),
                    encoding="utf-8")
    ((_, _, data),) = read_messages(c.get(f"/s/{key}/events?after={start}"), 1)
    assert f'id="tc-{CALL}-state" hx-swap-oob="true"' in data and "finished · no notification" in data
