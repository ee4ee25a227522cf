"""Wolo sub-agents in headless Chromium: the parent's task card opens the sub-agent's conversation
in place, its own session links back to the call that spawned it, and a sub-agent started while
the parent is open appears under its call without a reload. Golden files: mbos-wolo 0.13.3's own
task tool (tests/golden/make_wolo_golden.py)."""

import json
import os
import re
import shutil
import time

import pytest
from playwright.sync_api import expect

from conftest import indexed_list, stream_open
from test_wolo_subagents import EXPLORE, GENERAL, PARENT, SESSIONS, copy, swallowed

pytestmark = pytest.mark.browser


def test_task_card_opens_the_sub_agent_and_its_session_links_back(serve, watched_page, tmp_path):
    srv = serve(copy(tmp_path, PARENT, EXPLORE, GENERAL), WATCH=False)
    page = watched_page
    indexed_list(page, srv.url + "/")  # (drawn once indexed: the sub-agents under their parent)
    # the list: the sub-agents right under their parent, each saying whose it is
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_have_attribute("data-key", f"{PARENT}~session")
    expect(rows.nth(1).locator(".spawned-by a")).to_have_text(re.compile(PARENT))
    expect(rows.nth(2)).to_have_class(re.compile(r"\bsubagent\b.*\bdepth-1\b"))
    rows.nth(0).locator("td.title > a").click()
    expect(page).to_have_url(re.compile(rf"/s/{PARENT}~session"))
    card = page.locator("#tc-call_task_1")
    thread = card.locator("details.subthread")
    expect(thread.locator("summary")).to_contain_text("Sub-agent: explore · find divide() callers")
    expect(card.get_by_text("Looking for callers of divide().")).to_be_hidden()
    thread.locator("summary").click()  # loads the sub-agent's conversation in place
    expect(card.get_by_text("Looking for callers of divide().")).to_be_visible()
    expect(card.locator("#tc-call_grep_s1 .state")).to_have_text("completed")
    # the failed sub-agent's call: an error, its (short) conversation there too
    expect(page.locator("#tc-call_task_2 .state").first).to_have_text("error")
    card.locator("a.own-session").click()
    expect(page).to_have_url(re.compile(rf"/s/{EXPLORE}~session$"))
    back = page.locator("#spawned-by")
    expect(back).to_contain_text("explore")
    back.locator("a.spawning-call").click()
    # the parent, opened at the turn holding the call, that turn highlighted
    expect(page).to_have_url(re.compile(rf"/s/{PARENT}~session/m/msg_102$"))
    expect(page.locator("#m-msg_102")).to_have_class(re.compile(r"\btarget\b"))
    expect(page.locator("#m-msg_102 #tc-call_task_1")).to_be_in_viewport()
    page.go_back()
    page.locator("#spawned-by a.parent-session").click()
    expect(page).to_have_url(re.compile(rf"/s/{PARENT}~session$"))
    assert page.problems == []


def test_a_sub_agent_started_while_the_parent_is_open_appears_under_its_call(serve, watched_page,
                                                                            tmp_path):
    """As Wolo runs it: the turn is on disk with its task part pending (Wolo saves the turn again
    only when the tool returns); the sub-agent's session folder appears beside the parent's."""
    root = tmp_path / "sessions"
    parent = root / PARENT
    shutil.copytree(SESSIONS / PARENT, parent)
    (parent / "messages" / "msg_103.json").unlink()
    turn = json.loads((parent / "messages" / "msg_102.json").read_text())
    for part in turn["parts"][1:]:
        part.update(status="pending", output="", start_time=0.0, end_time=0.0)
    (parent / "messages" / "msg_102.json").write_text(json.dumps(turn, indent=2))
    meta = json.loads((parent / "session.json").read_text())
    meta.update(pid=os.getpid(), pid_updated_at=time.time())  # a Wolo process holds it: running
    (parent / "session.json").write_text(json.dumps(meta, indent=2))
    srv = serve(root)
    page = watched_page
    page.goto(srv.url + f"/s/{PARENT}~session")
    # Every wait below is on what the reader sees, bounded by a minute, not by a guess of how long
    # the server takes: on a loaded machine (two cores, three suites) the chain behind a new
    # sub-agent (the watcher's event or the feed's 1 s poll, the sessions folder listed again, the
    # child's folder read, its card rendered and streamed, then the click's request) can take
    # longer than the 15 s (and Playwright's default 5 s) this test used to allow; the stream is
    # waited for until the page says "live" (connected), not only until it was created.
    stream_open(page, "live", timeout=60)
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=60000)
    page.evaluate("window.drawnOnce = true")
    card = page.locator("#tc-call_task_1")
    expect(card.locator(".state")).to_have_text("pending")
    expect(card.locator("details.subthread")).to_have_count(0)
    tmp = tmp_path / f"{EXPLORE}.partial"  # (outside the sessions folder: a copy in it is a
    shutil.copytree(SESSIONS / EXPLORE, tmp)  # session of its own the watcher may see first)
    tmp.rename(root / EXPLORE)  # (whole at once: this test is not about half-written folders)
    thread = card.locator("details.subthread")
    expect(thread).to_have_count(1, timeout=60000)
    expect(thread.locator("summary")).to_contain_text("explore")
    thread.locator("summary").click()
    expect(card.get_by_text("Looking for callers of divide().")).to_be_visible(timeout=60000)
    expect(page.locator("#tc-call_task_2 details.subthread")).to_have_count(0)
    assert page.evaluate("window.drawnOnce === true")  # no reload
    assert page.problems == []


def _old(root):
    """Every file of the copy last written long ago (just after the golden runs, which a child's
    folder must postdate to be its parent's): the sessions have ended."""
    for p in [root, *root.rglob("*")]:
        os.utime(p, (1772449300, 1772449300))


def test_a_task_whose_sub_agent_failed_reads_failed_and_a_killed_run_never_answered(
        serve, watched_page, tmp_path):
    """Wolo 0.13's agent_loop catches a failed model call and returns; the task tool passes on the
    sub-agent's (empty) reply and the part is saved `completed`, while the sub-agent's own session
    keeps its reply unfinished. A parent killed while a task ran keeps that part `running` (what a
    last save wrote) and its pid: the session ended with the call never answered."""
    root = swallowed(tmp_path)
    killed = root / "Vega_260302_120000"  # the same audit, killed while its first task ran
    shutil.copytree(SESSIONS / PARENT, killed)
    (killed / "messages" / "msg_103.json").unlink()
    turn = json.loads((killed / "messages" / "msg_102.json").read_text())
    for part in turn["parts"][1:]:
        part.update(status="pending", output="", start_time=0.0, end_time=0.0)
    turn["parts"][1].update(status="running", start_time=1772449202.5)
    (killed / "messages" / "msg_102.json").write_text(json.dumps(turn, indent=2))
    meta = json.loads((killed / "session.json").read_text())
    meta.update(id=killed.name, pid=2 ** 22 + 7, pid_updated_at=1772449200.0)  # no such process
    (killed / "session.json").write_text(json.dumps(meta, indent=2))
    child = root / "7c1e9a02"  # its explore sub-agent, cut off after its grep
    shutil.copytree(SESSIONS / EXPLORE, child)
    meta = json.loads((child / "session.json").read_text())
    meta.update(id=child.name, parent_session_id=killed.name)
    (child / "session.json").write_text(json.dumps(meta, indent=2))
    last = max(child.glob("messages/*.json"), key=lambda p: json.loads(p.read_text())["timestamp"])
    last.unlink()
    _old(root)
    srv = serve(root, WATCH=False)
    page = watched_page
    page.goto(srv.url + f"/s/{PARENT}~session")
    failed = page.locator("#tc-call_task_2")
    expect(failed.locator(".call-state .state")).to_have_text("error")
    expect(failed.locator(".tool-result")).to_contain_text("Subagent (general) response:")
    expect(page.locator("#tc-call_task_1 .call-state .state").first).to_have_text("completed")
    failed.locator("details.subthread summary").click()  # why: its sub-agent's reply never came
    expect(failed.get_by_text("reply not saved: the turn has not finished")).to_be_visible()
    expect(page.locator("#session-facts dd.errors")).to_have_text("1")
    page.goto(srv.url + f"/s/{killed.name}~session")
    running = page.locator("#tc-call_task_1")
    expect(running.locator(".call-state .state").first).to_have_text("never answered")
    expect(running.locator(".call-state .state").first).to_have_attribute(
        "title", re.compile("it was running when the session ended"))
    expect(running.locator(".tool-result").first).to_have_text(
        "No result: the session moved on or ended without one (it was still running).")
    expect(running.locator("details.subthread summary")).to_contain_text("explore")  # its sub-agent
    expect(page.locator("#tc-call_task_2 .call-state .state")).to_have_text("never answered")
    expect(page.locator(".state.executing")).to_have_count(0)
    assert page.problems == []
