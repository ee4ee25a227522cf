"""Wolo sub-agents: a `task` call's sub-agent runs in a session of its own beside its parent's
(`sessions/<id>/`, its session.json naming `parent_session_id`); the viewer nests it under the call
that spawned it, says on the sub-agent's own page whose it is, and lists it under its parent.

The golden parent (`Orion_260302_110000`) and its two sub-agents were written by Wolo 0.13.3's own
task tool (tests/golden/make_wolo_golden.py); the odd cases (a parent that is not there, a session
naming itself, two naming each other, a batch) are written here the way SessionStorage writes."""

import json
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from viewer import catalog
from viewer.formats import wolo
from viewer.index import SessionIndex
from viewer.model import SessionSummary
from viewer.timeline import Timeline, load_events
from viewer.web import create_app

from conftest import ROOT

SESSIONS = ROOT / "test_data" / "formats" / "wolo" / "golden-mbos-wolo-0.13.3" / "sessions"
PARENT, EXPLORE, GENERAL = "Orion_260302_110000", "424b1fee", "5108d45a"
T0 = 1772449200.0


def copy(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "sessions"
    for name in names:
        shutil.copytree(SESSIONS / name, root / name)
    return root


def write_session(root: Path, sid: str, parent=None, agent_type=None, created=T0, messages=()):
    """A session folder as SessionStorage writes it: session.json, then one file per message."""
    folder = root / sid
    (folder / "messages").mkdir(parents=True)
    meta = {"id": sid, "created_at": created, "updated_at": created, "parent_session_id": parent,
            "agent_type": agent_type, "title": None, "tags": [], "agent_display_name": None,
            "pid": None, "pid_updated_at": None, "workdir": "/w", "execution_mode": "solo"}
    (folder / "session.json").write_text(json.dumps(meta, indent=2))
    for i, msg in enumerate(messages):
        (folder / "messages" / f"{msg.get('id', i)}.json").write_text(json.dumps(msg, indent=2))
    return folder / "session.json"


def user(mid, text, ts):
    return {"id": mid, "role": "user", "timestamp": ts, "finished": True,
            "parts": [{"type": "text", "id": f"t-{mid}", "text": text}]}


def turn(mid, ts, *parts):
    return {"id": mid, "role": "assistant", "timestamp": ts, "finished": True,
            "finish_reason": "tool_calls", "parts": list(parts)}


def task(cid, agent, status="pending", start=0.0, end=0.0, output="", tool="task"):
    return {"type": "tool", "id": cid, "tool": tool, "status": status, "output": output,
            "input": {"agent": agent, "description": f"ask {agent}", "message": f"go, {agent}"},
            "start_time": start, "end_time": end}


# --- the index: threads nested under their calls --------------------------------------------------


def test_golden_sub_agents_are_threads_under_the_calls_that_spawned_them():
    idx = SessionIndex(SESSIONS / PARENT / "session.json").build()
    assert list(idx.threads) == ["main", EXPLORE, GENERAL]
    assert idx.calls.calls["call_task_1"].subthread == EXPLORE
    assert idx.calls.calls["call_task_2"].subthread == GENERAL
    assert idx.threads[EXPLORE].meta["parent_call"] == "call_task_1"
    assert idx.threads[EXPLORE].label == "explore agent · session 424b1fee"
    # the sub-agent's conversation: the task message, its grep, its answer (the parent's part
    # holds only the answer)
    evs = load_events(idx, EXPLORE, 0, len(idx.threads[EXPLORE]))
    shown = [e for e in evs if not e.hidden]
    assert shown[0].role == "user" and shown[0].text() == \
        "List every caller of divide() in this repository."
    assert idx.calls.calls["call_grep_s1"].call[0] == EXPLORE
    # the failed sub-agent's call is an error, its thread there all the same
    assert idx.calls.calls["call_task_2"].status == "error"
    # the card's thread is named for the agent and the call's description
    tl = Timeline(idx)
    assert tl.thread_view(EXPLORE).label == "explore · find divide() callers"
    # the parent's figures hold its sub-agents' (as a Claude Code session's hold its agents')
    # (the failed sub-agent's empty reply, never finished, is no message)
    assert idx.summary.messages == 7 and idx.summary.parent == ""


def test_a_sub_agents_own_session_names_its_parent():
    idx = SessionIndex(SESSIONS / EXPLORE / "session.json").build()
    assert list(idx.threads) == ["main"]
    assert idx.info["parent_session"] == PARENT and idx.info["agent_type"] == "explore"
    assert idx.summary.parent == str(SESSIONS / PARENT / "session.json")
    assert idx.info["thread"] == EXPLORE


def test_a_child_created_while_its_call_is_still_pending_on_disk(tmp_path):
    """Wolo saves the turn with its task parts pending, runs them one by one, and saves the turn
    again only after each: while the first sub-agent runs, no part has a time yet."""
    root = tmp_path / "sessions"
    main = write_session(root, "p1", messages=[
        user("u1", "audit", T0), turn("a1", T0 + 1, task("c1", "explore"), task("c2", "plan"))])
    idx = SessionIndex(main).build()
    assert list(idx.threads) == ["main"]
    write_session(root, "aaaa0001", parent="p1", agent_type="explore", created=T0 + 2,
                  messages=[user("s1", "go, explore", T0 + 2)])
    change = idx.refresh()  # a new folder beside it: listed again
    assert "aaaa0001" in change.new and "c1" in change.calls
    assert idx.calls.calls["c1"].subthread == "aaaa0001"
    assert idx.calls.calls["c2"].subthread is None


def test_children_match_their_calls_by_time_not_by_listing_order(tmp_path):
    root = tmp_path / "sessions"
    main = write_session(root, "p1", messages=[
        user("u1", "audit", T0),
        turn("a1", T0 + 1, task("c1", "explore", "completed", T0 + 2, T0 + 5, "Subagent (explore) response:\nok"),
             task("c2", "plan", "completed", T0 + 6, T0 + 9, "Subagent (plan) response:\nok"))])
    # the later child sorts first by name
    write_session(root, "0000late", parent="p1", agent_type="plan", created=T0 + 6.2)
    write_session(root, "ffffearly", parent="p1", agent_type="explore", created=T0 + 2.1)
    idx = SessionIndex(main).build()
    assert idx.calls.calls["c1"].subthread == "ffffearly"
    assert idx.calls.calls["c2"].subthread == "0000late"


def test_a_batch_of_tasks_holds_all_its_children(tmp_path):
    root = tmp_path / "sessions"
    main = write_session(root, "p1", messages=[
        user("u1", "audit", T0),
        turn("a1", T0 + 1, task("b1", "", "completed", T0 + 2, T0 + 9, "Batch execution results (2 tools):",
                                tool="batch"))])
    write_session(root, "kid1", parent="p1", agent_type="explore", created=T0 + 3)
    write_session(root, "kid2", parent="p1", agent_type="plan", created=T0 + 3.5)
    idx = SessionIndex(main).build()
    assert idx.subthreads(idx.calls.calls["b1"]) == ["kid1", "kid2"]
    assert {idx.threads[n].meta["parent_call"] for n in ("kid1", "kid2")} == {"b1"}


def test_sub_agents_of_sub_agents_nest_under_their_own_calls(tmp_path):
    root = tmp_path / "sessions"
    main = write_session(root, "p1", messages=[
        user("u1", "audit", T0), turn("a1", T0 + 1, task("c1", "general", "completed", T0 + 2, T0 + 9, "x"))])
    write_session(root, "kid", parent="p1", agent_type="general", created=T0 + 2.5, messages=[
        user("k1", "go", T0 + 2.5), turn("k2", T0 + 3, task("kc1", "explore", "completed", T0 + 3.5, T0 + 5, "y"))])
    write_session(root, "grandkid", parent="kid", agent_type="explore", created=T0 + 4)
    idx = SessionIndex(main).build()
    assert idx.calls.calls["c1"].subthread == "kid"
    assert idx.calls.calls["kc1"].subthread == "grandkid"
    assert idx.threads["grandkid"].meta["spawned_in"] == "kid"


def test_a_child_that_matches_no_call_is_still_shown(tmp_path):
    """A child created before any task call of its parent began (or by a parent with no task call)
    is a thread of the session with no call: the page lists it as such, nothing is lost, and its
    own page's link to "the call that spawned it" opens the parent's page."""
    root = tmp_path / "sessions"
    main = write_session(root, "p1", messages=[user("u1", "hello", T0)])
    write_session(root, "stray", parent="p1", agent_type="explore", created=T0 + 1,
                  messages=[user("s1", "a stray sub-agent", T0 + 1)])
    idx = SessionIndex(main).build()
    assert "stray" in idx.threads and "parent_call" not in idx.threads["stray"].meta
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    c = app.test_client()
    page = c.get("/s/p1~session").get_data(as_text=True)
    assert "a stray sub-agent" in c.get("/s/p1~session/t/stray", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert 'href="/s/p1~session/t/stray"' in page  # listed among the threads no call links
    r = c.get("/s/p1~session/t/stray/call")
    assert r.status_code == 302 and r.headers["Location"].endswith("/s/p1~session")


def test_a_session_naming_itself_its_parent_is_its_own(tmp_path):
    root = tmp_path / "sessions"
    main = write_session(root, "self1", parent="self1", agent_type="explore",
                         messages=[user("u1", "hi", T0)])
    idx = SessionIndex(main).build()
    assert list(idx.threads) == ["main"]
    assert "parent_session" not in idx.info and idx.summary.parent == ""


def test_two_sessions_naming_each_other_end_the_walk(tmp_path):
    root = tmp_path / "sessions"
    a = write_session(root, "aaa", parent="bbb", agent_type="explore", messages=[user("u1", "a", T0)])
    b = write_session(root, "bbb", parent="aaa", agent_type="plan", messages=[user("u2", "b", T0 + 1)])
    ia, ib = SessionIndex(a).build(), SessionIndex(b).build()
    assert list(ia.threads) == ["main", "bbb"] and list(ib.threads) == ["main", "aaa"]
    assert ia.info["parent_session"] == "bbb" and ib.info["parent_session"] == "aaa"


@pytest.mark.parametrize("parent", ["gone0001", "../../etc", "", None, 42])
def test_a_parent_that_is_not_there_or_not_an_id(tmp_path, parent):
    root = tmp_path / "sessions"
    main = write_session(root, "kid", parent=parent, agent_type="explore",
                         messages=[user("u1", "hi", T0)])
    idx = SessionIndex(main).build()
    assert len(idx.threads["main"]) == 2
    if parent == "gone0001":
        assert idx.info["parent_session"] == "gone0001"
        assert idx.info["parent_path"] == str(root / "gone0001" / "session.json")
    else:  # not a session id Wolo makes: never joined into a path
        assert "parent_session" not in idx.info and idx.summary.parent == ""


def test_spawning_calls_never_gives_a_task_two_children():
    calls = {"c1": SimpleNamespace(id="c1", name="task", call=("main", 1), called_at=None,
                                   finished_at=None)}
    threads = {"k1": {"created_at": T0 + 1, "spawned_in": "main"},
               "k2": {"created_at": T0 + 2, "spawned_in": "main"}}
    assert wolo.spawning_calls(threads, calls) == {"k1": "c1"}


# --- the list: sub-agents under their parents ------------------------------------------------------


def ref(key, path=None):
    return SimpleNamespace(key=key, path=path or f"/r/{key}/session.json", root="/r",
                           label=f"{key}/session", mtime=0.0, size=1)


def test_list_nests_sub_agents_under_their_parent_and_keeps_every_row():
    refs = [ref("kid1"), ref("other"), ref("top"), ref("grand"), ref("kid2"), ref("cyc1"),
            ref("cyc2"), ref("orphan")]
    parents = {"kid1": "top", "kid2": "top", "grand": "kid1", "cyc1": "cyc2", "cyc2": "cyc1",
               "orphan": "missing"}
    sums = {r.key: SessionSummary(format="wolo", parent=f"/r/{parents[r.key]}/session.json"
                                  if r.key in parents else "") for r in refs}
    rows = catalog.rows_of(refs, sums)
    out = catalog.nested(rows)
    assert [(r.ref.key, r.depth) for r in out] == [
        ("other", 0), ("top", 0), ("kid1", 1), ("grand", 2), ("kid2", 1), ("cyc1", 0),
        ("cyc2", 1), ("orphan", 0)]
    # a filter that leaves the parent out leaves its child where it is, flat
    alone = catalog.nested([r for r in catalog.rows_of(refs, sums) if r.ref.key != "top"])
    assert [(r.ref.key, r.depth) for r in alone][:4] == [("kid1", 0), ("grand", 1), ("other", 0),
                                                         ("kid2", 0)]


@pytest.fixture
def client(tmp_path):
    root = copy(tmp_path, PARENT, EXPLORE, GENERAL, "Nova_260302_100000")
    write_session(root, "lost0001", parent="gone0001", agent_type="plan",
                  messages=[user("u1", "a child whose parent is gone", T0)])
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    return app.test_client()


def indexed_list(client, timeout: float = 60.0) -> str:
    """The list page once it shows every session indexed. A list request indexes what it can in a
    short budget of its own (50 ms) and leaves the rest to the background indexer, their rows
    saying "indexing…" until it fills them in: on a loaded CPU that takes a while, and a sub-agent
    can only be put under its parent once both are indexed (a row filled in while its page was
    drawn keeps its place). So wait as the reader does: until no row says "indexing…", then open
    the list again."""
    deadline = time.monotonic() + timeout
    while 'class="title pending"' in client.get("/").get_data(as_text=True):
        assert time.monotonic() < deadline, "the list still says indexing… after a minute"
        time.sleep(0.05)
    return client.get("/").get_data(as_text=True)


def test_list_page_shows_sub_agents_under_their_parent(client):
    html = indexed_list(client)
    rows = html.split('<tr id="row-')[1:]
    order = [r.split('data-key="', 1)[1].split('"', 1)[0] for r in rows]
    at = [i for i, r in enumerate(order) if r.startswith(PARENT)][0]
    assert {order[at + 1].split("~")[0], order[at + 2].split("~")[0]} == {EXPLORE, GENERAL}
    kid = rows[at + 1]
    assert "subagent depth-1" in kid and f'href="/s/{PARENT}~session"' in kid
    lost = rows[order.index("lost0001~session")]
    assert "sub-agent of a session not listed" in lost and "depth-" not in lost.split(">", 1)[0]


def test_stats_count_a_sub_agent_once(client):
    listed = indexed_list(client).count('<tr id="row-')
    data = client.get("/stats.json").get_json()
    assert listed == 5
    # the two sub-agents are counted in their parent's figures, not again on their own
    assert data["totals"]["sessions"] == 3


def test_sub_agent_page_links_back_to_parent_and_call(client):
    html = client.get(f"/s/{EXPLORE}~session").get_data(as_text=True)
    assert 'id="spawned-by"' in html and "explore" in html
    assert f'href="/s/{PARENT}~session"' in html
    link = f"/s/{PARENT}~session/t/{EXPLORE}/call"
    assert f'href="{link}"' in html
    r = client.get(link)
    assert r.status_code == 302 and r.headers["Location"].endswith(f"/s/{PARENT}~session/m/msg_102")
    assert client.get(f"/s/{PARENT}~session/t/nothing/call").status_code == 404
    lost = client.get("/s/lost0001~session").get_data(as_text=True)
    assert "gone0001" in lost and "not among the served sessions" in lost


def test_parent_page_nests_the_sub_agent_and_links_its_session(client):
    html = client.get(f"/s/{PARENT}~session?at=start").get_data(as_text=True)
    card = html.split('id="tc-call_task_1"', 1)[1].split('id="tc-call_task_2"', 1)[0]
    assert "Sub-agent: explore · find divide() callers" in card
    assert f'href="/s/{PARENT}~session/t/{EXPLORE}"' in card
    assert f'href="/s/{EXPLORE}~session"' in card  # its own session
    thread = client.get(f"/s/{PARENT}~session/t/{EXPLORE}", headers={"HX-Request": "true"})
    assert "Looking for callers of divide()." in thread.get_data(as_text=True)


# --- how a sub-agent's run ended: what its own session says ---------------------------------------
# Wolo 0.13's agent_loop (wolo/agent.py) catches a failed model call and returns; the task tool
# (tools_pkg/task.py) then passes on what the sub-agent wrote, "Subagent (<agent>) response:\n…",
# and the executor saves the part `completed`. The sub-agent's own session keeps the truth: the
# reply Wolo saved (empty, unfinished) before the model call, never saved again — or, when the
# session saver flushed it, the reply with `finish_reason: "error"`.


def swallowed(tmp_path, last=None):
    """The golden parent with its general sub-agent's model call failing the way agent_loop ends
    it: the parent's part completed with an empty response."""
    root = copy(tmp_path, PARENT, EXPLORE, GENERAL)
    msg = root / PARENT / "messages" / "msg_102.json"
    turn_ = json.loads(msg.read_text())
    for part in turn_["parts"]:
        if part.get("id") == "call_task_2":
            part.update(status="completed", output="Subagent (general) response:\n")
    msg.write_text(json.dumps(turn_, indent=2))
    if last is not None:
        (f,) = [p for p in (root / GENERAL / "messages").glob("*.json")
                if json.loads(p.read_text())["role"] == "assistant"]
        f.write_text(json.dumps({**json.loads(f.read_text()), **last}, indent=2))
    return root


def test_a_task_whose_sub_agent_never_finished_its_reply_failed(tmp_path):
    root = swallowed(tmp_path)
    idx = SessionIndex(root / PARENT / "session.json").build()
    assert idx.calls.calls["call_task_2"].status == "error"  # its sub-agent's reply never came
    assert idx.calls.calls["call_task_1"].status == "completed"  # its sub-agent answered
    assert idx.summary.errors == 1
    evs = load_events(idx, GENERAL, 0, len(idx.threads[GENERAL]))
    assert [e.blocks[0].text for e in evs if e.kind == "unfinished"] == [
        "reply not saved: the turn has not finished"]


@pytest.mark.parametrize("reason,text,status,errors", [
    ("error", "Let me check", "error", 2),  # a model error ended its sub-agent: the task failed
    # (the errors: the sub-agent's error turn and the task call)
    ("stop", "No other callers.", "completed", 0),  # it finished its reply: the task completed
], ids=["model-error", "finished"])
def test_a_task_reads_how_its_sub_agents_last_turn_ended(tmp_path, reason, text, status, errors):
    root = swallowed(tmp_path, last={
        "finished": True, "finish_reason": reason,
        "parts": [{"type": "text", "id": "tp", "text": text}]})
    idx = SessionIndex(root / PARENT / "session.json").build()
    assert idx.calls.calls["call_task_2"].status == status
    assert idx.summary.errors == errors


# --- a batch of sub-agents: how it ended (tools_pkg/executor.py, 0.13: a batch is `completed` when
# every call's part says `completed`, else `partial`; a task passes a failed sub-agent on as
# completed, its output starting "Subagent error: " or holding whatever the sub-agent wrote) -------

BATCH_OUT = ("Batch execution results (2 tools):\n\n1. [✓] task\n   Subagent (explore) response:\nfound 3"
             "\n\n2. [✓] task\n   {second}\n\nSummary: 2/2 succeeded")


def batch_run(tmp_path, status="completed", second="Subagent (plan) response:\nplanned", plan_end="stop"):
    root = tmp_path / "sessions"
    main = write_session(root, "p1", messages=[
        user("u1", "audit", T0),
        turn("a1", T0 + 1, task("b1", "", status, T0 + 2, T0 + 9, BATCH_OUT.format(second=second),
                                tool="batch"))])
    write_session(root, "kid1", parent="p1", agent_type="explore", created=T0 + 3, messages=[
        user("k1", "go", T0 + 3), {**turn("k2", T0 + 4), "finish_reason": "stop",
                                   "parts": [{"type": "text", "id": "kt", "text": "found 3"}]}])
    write_session(root, "kid2", parent="p1", agent_type="plan", created=T0 + 3.5, messages=[
        user("m1", "go", T0 + 3.5), {**turn("m2", T0 + 5), "finish_reason": plan_end,
                                     "parts": [{"type": "text", "id": "mt", "text": "planned"}]}])
    return SessionIndex(main).build()


@pytest.mark.parametrize("case,status", [
    ({}, "completed"),  # both sub-agents answered
    ({"plan_end": "error"}, "error"),  # one sub-agent's model call failed: its session says so
    ({"second": "Subagent error: model unavailable"}, "error"),  # the task said so in its output
    ({"status": "partial"}, "error"),  # Wolo saw a call of the batch fail
], ids=["answered", "sub-agent-model-error", "subagent-error-output", "partial"])
def test_a_batch_reads_failed_when_one_of_its_sub_agents_failed(tmp_path, case, status):
    idx = batch_run(tmp_path, **case)
    call = idx.calls.calls["b1"]
    assert idx.subthreads(call) == ["kid1", "kid2"]
    assert call.status == status
