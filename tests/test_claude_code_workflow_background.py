"""A background Claude Code Workflow whose end never reached the session, and its run's file
written while the viewer watches.

The Workflow call of the recorded session (2.1.331) runs its agents as a run in the background: the
call reads "running in background" until the task notification. Cut the session before that
notification (it ended, or was killed, first): the run's own file, `workflows/<run id>.json`, which
the CLI writes when the run ends, still tells how it ended — completed, failed (an error the session
counts) or killed (stopped, not a failure) — and the call shows so, with "no notification" said; while the file is absent (or says running, or is half
written) the call runs on. A live tail and one read agree, and a live page's card follows.
"""

import json
import shutil

import pytest

from viewer.index import SessionIndex
from viewer.web import create_app
from viewer.web.live import cursor_of

from conftest import ROOT
from test_live_stream import read_messages

PROJECT = ROOT / "test_data" / "formats" / "claude-code" / "2.1.331" / "-home-user-demo"
SESSION = "ab33391c-226f-4b4a-97f0-5a426bf7c8e4"
RUN = "wf_0c4c9834-9c0"
CALL = "toolu_0136e4777c000000000040"


@pytest.fixture
def cut(tmp_path):
    """The session cut before its task notification, its run's agents all there, no run file yet.
    Returns (main, the run file to write, the run file as the CLI wrote it, the rest of main)."""
    root = tmp_path / "-home-user-demo"
    shutil.copytree(PROJECT / SESSION, root / SESSION)
    run = root / SESSION / "workflows" / f"{RUN}.json"
    written = json.loads(run.read_text(encoding="utf-8"))
    run.unlink()
    rows = (PROJECT / f"{SESSION}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, r in enumerate(rows) if "<task-notification>" in r)
    main = root / f"{SESSION}.jsonl"
    main.write_text("".join(rows[:at]), encoding="utf-8")
    return main, run, written, rows[at:]


def _state(idx):
    call = idx.calls.call(CALL)
    return call.status, call.named, call.is_error, call.finished_at


def test_the_recorded_workflow_ends_with_its_notification():
    call = SessionIndex(PROJECT / f"{SESSION}.jsonl").build().calls.call(CALL)
    assert (call.status, call.named) == ("completed", None)


def test_a_run_with_no_file_runs_on_and_one_that_completed_finishes_its_call(cut):
    main, run, written, _ = cut
    idx = SessionIndex(main).build()
    assert _state(idx) == ("executing", "background", False, None)
    assert idx.calls.call(CALL).subthread == RUN
    run.write_text(json.dumps({**written, "status": "running"}), encoding="utf-8")
    assert _state(SessionIndex(main).build())[:2] == ("executing", "background")
    run.write_text(json.dumps(written), encoding="utf-8")
    idx = SessionIndex(main).build()
    call = idx.calls.call(CALL)
    assert (call.status, call.named, call.state, call.is_error) == (
        "completed", "finished_unreported", "finished_unreported", False)
    # it ended when the run did (its start and duration), not when it was launched
    assert call.finished_at == (written["startTime"] + written["durationMs"]) / 1000
    assert call.finished_at > call.called_at
    assert idx.calls.by_state()["finished_unreported"] == 1


def test_a_run_that_failed_fails_its_call_and_counts_as_an_error(cut):
    main, run, written, _ = cut
    before = SessionIndex(main).build().summary.errors
    run.write_text(json.dumps({**written, "status": "failed", "error": "boom"}), encoding="utf-8")
    idx = SessionIndex(main).build()
    call = idx.calls.call(CALL)
    assert (call.status, call.named, call.is_error) == ("error", "failed_unreported", True)
    assert idx.summary.errors == before + 1  # the work failed: the session's error count says so
    assert idx.calls.by_state()["failed_unreported"] == 1


def test_a_run_that_was_stopped_reads_stopped_not_failed(cut, tmp_path):
    # "killed": someone stopped the run. It ended without a result (error, as an interrupted call),
    # but it did not fail: its own words, and no error counted
    main, run, written, _ = cut
    before = SessionIndex(main).build().summary.errors
    run.write_text(json.dumps({**written, "status": "killed"}), encoding="utf-8")
    idx = SessionIndex(main).build()
    call = idx.calls.call(CALL)
    assert (call.status, call.named, call.is_error) == ("error", "stopped_unreported", True)
    assert call.finished_at == (written["startTime"] + written["durationMs"]) / 1000
    assert idx.summary.errors == before
    assert idx.calls.by_state()["stopped_unreported"] == 1
    app = create_app({"ROOTS": [str(main.parent.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    page = app.test_client().get(f"/s/-home-user-demo~{SESSION}").get_data(as_text=True)
    assert 'class="state interrupted"' in page and "stopped · no notification" in page
    assert "failed · no notification" not in page and "running in background" not in page


def test_a_stopped_run_takes_the_notification_that_comes_after(cut):
    main, run, written, rest = cut
    run.write_text(json.dumps({**written, "status": "killed"}), encoding="utf-8")
    live = SessionIndex(main).build()
    assert _state(live)[1] == "stopped_unreported"
    with main.open("a", encoding="utf-8") as f:
        f.writelines(rest)
    live.refresh()
    assert _state(live)[:2] == _state(SessionIndex(main).build())[:2] == ("completed", None)


@pytest.mark.parametrize("text", ['{"status": "compl', "[1, 2]", '{"status": 3}', '{"status": "later"}',
                                  "\x00" * 10, '{"status": "completed", "startTime": 1e300, "durationMs": -1}'])
def test_a_malformed_run_file_says_nothing_or_no_time(cut, text):
    main, run, _, _ = cut
    run.write_text(text, encoding="utf-8")
    state = _state(SessionIndex(main).build())
    assert state in (("executing", "background", False, None),
                     ("completed", "finished_unreported", False, None))


def test_a_huge_run_file_is_not_read(cut, monkeypatch):
    from viewer.formats import claude_code

    main, run, written, _ = cut
    monkeypatch.setattr(claude_code, "RUN_LIMIT", 1000)
    run.write_text(json.dumps({**written, "logs": ["x" * 2000]}), encoding="utf-8")
    assert _state(SessionIndex(main).build())[:2] == ("executing", "background")


def test_live_the_run_file_finishes_the_card_and_the_notification_comes_after(cut):
    main, run, written, rest = cut
    live = SessionIndex(main).build()
    assert live.unchanged() or CALL not in live.refresh().calls  # (files just written: racy)
    run.write_text(json.dumps(written)[:50], encoding="utf-8")  # half written
    assert not live.unchanged()
    live.refresh()
    assert _state(live)[:2] == ("executing", "background")
    run.write_text(json.dumps(written), encoding="utf-8")
    assert not live.unchanged()
    change = live.refresh()
    assert CALL in change.calls and _state(live)[1] == "finished_unreported"
    assert _state(live) == _state(SessionIndex(main).build())
    assert live.unchanged() or CALL not in live.refresh().calls
    # the notification comes after all: the call completes as it says
    with main.open("a", encoding="utf-8") as f:
        f.writelines(rest)
    live.refresh()
    once = SessionIndex(main).build()
    assert _state(once)[:2] == ("completed", None)
    assert _state(live) == _state(once)


def test_a_run_file_removed_runs_the_call_again(cut):
    main, run, written, _ = cut
    run.write_text(json.dumps(written), encoding="utf-8")
    live = SessionIndex(main).build()
    assert _state(live)[1] == "finished_unreported"
    run.unlink()
    assert CALL in live.refresh().calls
    assert _state(live) == ("executing", "background", False, None)


def test_a_live_page_gets_the_card_the_run_file_finishes(cut, tmp_path):
    main, run, written, _ = cut
    app = create_app({"ROOTS": [str(main.parent.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    key = f"-home-user-demo~{SESSION}"
    c = app.test_client()
    page = c.get(f"/s/{key}").get_data(as_text=True)
    assert "running in background" in page
    start = cursor_of(app.extensions["viewer"].store.index(key))
    run.write_text(json.dumps(written), encoding="utf-8")
    ((_, _, data),) = read_messages(c.get(f"/s/{key}/events?after={start}"), 1)
    assert f'id="tc-{CALL}-state" hx-swap-oob="true"' in data
    assert "finished · no notification" in data and "running in background" not in data
    page = c.get(f"/s/{key}").get_data(as_text=True)
    assert "finished · no notification" in page


def test_a_failed_run_reads_failed_on_the_page(cut, tmp_path):
    main, run, written, _ = cut
    run.write_text(json.dumps({**written, "status": "failed"}), encoding="utf-8")
    app = create_app({"ROOTS": [str(main.parent.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    page = app.test_client().get(f"/s/-home-user-demo~{SESSION}").get_data(as_text=True)
    assert "failed · no notification" in page and "running in background" not in page


def test_an_index_from_the_cache_watches_the_run_file_without_unpacking_its_calls(cut):
    main, run, written, _ = cut
    idx = SessionIndex(main).build()
    loaded = SessionIndex.load(idx.dump())
    assert loaded.unchanged() or CALL not in loaded.refresh().calls
    assert loaded.calls._packed is not None  # (asking found the background call in the columns)
    run.write_text(json.dumps(written), encoding="utf-8")
    assert not loaded.unchanged()
    assert CALL in loaded.refresh().calls
    assert _state(loaded)[1] == "finished_unreported"


@pytest.mark.browser
def test_a_live_page_s_map_marks_the_run_that_failed_with_no_event_of_its_own(cut, serve, watched_page):
    """The run's file says it failed; no line comes to the session. The card says so through the
    stream, and the session map beside the page marks the failure without a reload."""
    from playwright.sync_api import expect

    main, run, written, _ = cut
    srv = serve(main.parent.parent)
    page = watched_page
    page.goto(f"{srv.url}/s/-home-user-demo~{SESSION}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    state = page.locator(f"#tc-{CALL}-state")
    expect(state).to_contain_text("running in background")
    expect(page.locator("#minimap a.mm").first).to_be_attached()
    expect(page.locator("#minimap a.mm-error")).to_have_count(0)
    run.write_text(json.dumps({**written, "status": "failed"}), encoding="utf-8")
    expect(state).to_contain_text("failed · no notification")
    mark = page.locator("#minimap a.mm-error")
    expect(mark).to_have_count(1)
    expect(mark.locator("title")).to_have_text("Workflow failed")
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []
