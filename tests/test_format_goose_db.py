"""Current Goose's SQLite store (sessions.db): each session row lists and reads as a session, the
same as the JSONL file Goose imported it from; the imported files are listed once; nothing is
written beside the database; a session Goose is writing is seen growing; a database that is not
Goose's says so. Databases are built with Goose's own DDL (test_data/formats/goose/make_db.py)."""

import json
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from viewer import usage
from viewer.formats import detect, goose
from viewer.index import SessionIndex, identity_matches
from viewer.store import Store
from viewer.timeline import load_events

from conftest import ROOT, built, goose_make_db, quiet_copy, result_of

FIXTURES = ROOT / "test_data" / "formats" / "goose"
OLD, NEW = "20250310_142501", "20250905_093012"

make_db = goose_make_db()


def database(tmp_path: Path, **kw):
    folder = tmp_path / "sessions"
    folder.mkdir(parents=True)
    return folder, make_db.build(folder / "sessions.db", **kw)


def row(folder: Path, sid: str) -> Path:
    return folder / "sessions.db" / sid


def test_each_session_row_is_listed_under_its_name_with_a_stable_key(tmp_path):
    folder, _ = database(tmp_path)
    store = Store([folder])
    refs = {r.key: r for r in store.sessions()}
    assert set(refs) == {f"sessions.db~{s}" for s in (OLD, NEW, make_db.NEW_ID, make_db.SUB_ID)}
    new = refs[f"sessions.db~{make_db.NEW_ID}"]
    assert new.label == f"sessions.db/{make_db.NEW_ID}"
    assert new.mtime == pytest.approx(make_db.T + 9)  # its newest message
    assert store.index(f"sessions.db~{make_db.NEW_ID}").summary.title == "CI test hang"
    assert store.index(f"sessions.db~{OLD}").summary.title == "Fix failing pagination test"


@pytest.mark.parametrize("sid", [OLD, NEW])
def test_an_imported_session_reads_as_the_file_it_came_from(tmp_path, sid):
    folder, _ = database(tmp_path)
    found = detect.detect_file(row(folder, sid))
    assert (found.format, found.mode) == ("goose", "document")
    idx, evs = built(row(folder, sid))
    fidx, fevs = built(FIXTURES / "sessions" / f"{sid}.jsonl")
    assert [(e.role, e.kind, e.hidden, e.text()) for e in evs[1:]] == \
        [(e.role, e.kind, e.hidden, e.text()) for e in fevs[1:]]
    assert {c: (x.status, x.named) for c, x in idx.calls.calls.items()} == \
        {c: (x.status, x.named) for c, x in fidx.calls.calls.items()}
    assert idx.summary.title == fidx.summary.title


def test_a_session_begun_in_the_database_names_its_model_tokens_and_type(tmp_path):
    folder, _ = database(tmp_path)
    idx, evs = built(row(folder, make_db.NEW_ID))
    assert idx.summary.title == "CI test hang"
    assert idx.summary.models == ["claude-sonnet-4-5", "claude-haiku-4-5"]  # (its sub-agent's too)
    head = evs[0]
    assert [b.text for b in head.blocks if b.kind == "notice"] == [
        "Goose session in /home/dev/api", "model: claude-sonnet-4-5 · anthropic", "description: CI test hang",
        "tokens: 5,210 (4,980 in · 230 out · 2,700 cache read · 1,200 cache write)"]
    assert idx.calls.calls["call_mk1"].status == "completed"
    assert "pytest --watch" in result_of(evs, "call_mk1").content[0].text
    assert evs[1].source_id == f"msg_{make_db.NEW_ID}_{evs[1].source_id.rsplit('_', 1)[1]}"
    _, sub = built(row(folder, make_db.SUB_ID))
    assert "session type: sub agent" in [b.text for b in sub[0].blocks if b.kind == "notice"]


def test_imported_files_beside_the_database_are_listed_once(tmp_path):
    folder = quiet_copy(FIXTURES / "sessions", tmp_path / "sessions")
    make_db.build(folder / "sessions.db")
    store = Store([folder])
    assert sorted(r.key for r in store.sessions()) == sorted(
        f"sessions.db~{s}" for s in (OLD, NEW, make_db.NEW_ID, make_db.SUB_ID))
    why = store.skipped[str(folder / f"{OLD}.jsonl")]
    assert why.startswith("also in Goose's database (sessions.db)")


def test_reading_writes_nothing_beside_the_database(tmp_path):
    folder, _ = database(tmp_path)
    before = sorted(os.listdir(folder))
    mtime = os.stat(folder / "sessions.db").st_mtime_ns
    Store([folder]).sessions()
    SessionIndex(row(folder, NEW)).build()
    assert sorted(os.listdir(folder)) == before == ["sessions.db"]  # no -wal, no -shm made
    assert os.stat(folder / "sessions.db").st_mtime_ns == mtime


def test_a_session_goose_is_writing_is_seen_growing(tmp_path):
    folder, con = database(tmp_path, keep_open=True)
    try:
        assert (folder / "sessions.db-wal").exists()
        store = Store([folder])
        key = f"sessions.db~{make_db.NEW_ID}"
        idx = store.index(key)
        assert identity_matches(idx.files())
        make_db.write_message(con, make_db.NEW_ID, {"role": "assistant", "created": make_db.T + 20, "content": [
            {"type": "toolRequest", "id": "call_live", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "make test"}}}}]}, "2025-11-05 10:00:20")
        assert not identity_matches(idx.files())
        idx, _ = store.refresh(key)
        assert idx.calls.calls["call_live"].status == "pending"
        make_db.write_message(con, make_db.NEW_ID, {"role": "user", "created": make_db.T + 21, "content": [
            {"type": "toolResponse", "id": "call_live", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": "3 passed"}], "isError": False}}}]}, "2025-11-05 10:00:21")
        idx, _ = store.refresh(key)
        assert idx.calls.calls["call_live"].status == "completed"
        store.note_change(str(folder / "sessions.db-wal"), "modified")
        assert store.get(key).mtime == pytest.approx(make_db.T + 21)
    finally:
        con.close()


def test_a_foreign_sessions_db_is_skipped_saying_why_and_a_bad_row_is_an_unparsed_card(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    con = sqlite3.connect(foreign / "sessions.db")
    con.execute("CREATE TABLE sessions (id text, user text)")
    con.commit()
    con.close()
    store = Store([foreign])
    assert store.sessions() == []
    assert "without Goose's messages table" in store.skipped[str(foreign / "sessions.db")]
    folder, con = database(tmp_path / "bad", keep_open=True)
    con.execute("UPDATE messages SET content_json = '[{\"type\": \"text\", \"te' WHERE id = "
                "(SELECT min(id) FROM messages WHERE session_id = ?)", (make_db.NEW_ID,))
    con.close()
    idx = SessionIndex(row(folder, make_db.NEW_ID)).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    assert [e.kind for e in evs][:2] == ["session", "unparsed"]
    assert idx.calls.calls["call_mk1"].status == "completed"  # the rest reads


def test_goose_s_own_token_totals_are_the_session_s_usage_priced_by_the_price_table(tmp_path):
    """A session Goose ran before its usage ledger (schema 15) has no usage per call: its session
    row's `accumulated_*` counts are the session's usage, said to be its totals, priced by the price
    table for the row's model; the sub-agent's session counts in its own thread with its own model."""
    folder, _ = database(tmp_path, ledger=False)
    idx = Store([folder]).index(f"sessions.db~{make_db.NEW_ID}")
    u = idx.summary.usage
    assert u["tokens"] == 5210 + 1320 and u["calls"] == 0 and u["session_totals"] is True
    assert u["models"]["claude-sonnet-4-5"][:4] == [4980, 230, 0, 0]
    assert u["models"]["claude-haiku-4-5"][:4] == [1250, 70, 0, 0]
    # the cost is the price table's, for each model's totals
    created = datetime(2025, 11, 5, 10, tzinfo=timezone.utc).timestamp() // 3600
    main = usage.PRICES.cost("claude-sonnet-4-5", int(created), 1, 4980, 230, 0, 0, -2)
    sub = usage.PRICES.cost("claude-haiku-4-5", int(created), 1, 1250, 70, 0, 0, -2)
    assert main and sub and u["cost"] == pytest.approx(main + sub)
    rep = usage.report(idx)
    assert rep["session_totals"] is True and rep["calls"] == 0
    assert rep["threads"][make_db.SUB_ID]["tokens"] == 1320
    # a legacy file's metadata line: its totals, no model named (so no price)
    legacy = SessionIndex(FIXTURES / "sessions" / f"{OLD}.jsonl").build().summary.usage
    assert legacy["tokens"] == 24510 and legacy["cost"] is None and legacy["unpriced"] == ["unknown model"]


def test_goose_s_own_cost_and_cached_counts_are_read_where_it_kept_them(tmp_path):
    folder, con = database(tmp_path, keep_open=True, ledger=False)
    con.execute("UPDATE sessions SET accumulated_input_tokens = 9000, accumulated_output_tokens = 300, "
                "accumulated_cache_read_tokens = 6000, accumulated_cache_write_tokens = 1000, "
                "accumulated_cost = 0.0123 WHERE id = ?", (make_db.NEW_ID,))
    con.close()
    idx, evs = built(row(folder, make_db.NEW_ID))
    assert "tokens: 5,210 (9,000 in · 300 out · 6,000 cache read · 1,000 cache write)" in \
        [b.text for b in evs[0].blocks if b.kind == "notice"]
    # Goose counts cached input in its input: the uncached part is what is left
    assert idx.summary.usage["models"]["claude-sonnet-4-5"][:4] == [2000, 300, 6000, 1000]
    assert usage.report(idx)["source_cost_usd"] == pytest.approx(0.0123)


def test_a_delegated_sub_agent_s_session_nests_under_its_call_and_names_its_parent(tmp_path):
    """Goose's `delegate` makes a session that names its parent (`parent_session_id`); the call's
    result names the session it made (`_meta.subagent_session_id`): it is read as the call's
    sub-agent thread, and listed on its own as a sub-agent of its parent."""
    folder, _ = database(tmp_path)
    store = Store([folder])
    idx = store.index(f"sessions.db~{make_db.NEW_ID}")
    assert set(idx.threads) == {"main", make_db.SUB_ID}
    assert idx.threads[make_db.SUB_ID].label == f"Delegated task · session {make_db.SUB_ID}"
    call = idx.calls.calls["call_dl1"]
    assert (call.status, call.subthread) == ("completed", make_db.SUB_ID)
    assert idx.calls.calls["call_sub1"].call[0] == make_db.SUB_ID
    sub = store.index(f"sessions.db~{make_db.SUB_ID}")
    assert sub.info["parent_session"] == make_db.NEW_ID and sub.info["thread"] == make_db.SUB_ID
    assert sub.summary.parent == str(row(folder, make_db.NEW_ID))
    assert goose.companions(row(folder, OLD)) == []


def test_without_goose_s_parent_column_a_delegate_call_reads_without_its_sub_agent(tmp_path):
    """Before schema 15 no session names its parent: the call's result names a session no thread
    is, and the call reads as any other."""
    folder, con = database(tmp_path / "old", keep_open=True)
    con.execute("DROP INDEX idx_sessions_parent")
    con.execute("ALTER TABLE sessions DROP COLUMN parent_session_id")
    con.close()
    idx = Store([folder]).index(f"sessions.db~{make_db.NEW_ID}")
    assert set(idx.threads) == {"main"}
    assert idx.calls.calls["call_dl1"].status == "completed"
    assert idx.subthreads(idx.calls.calls["call_dl1"]) == []


def test_current_goose_s_reasoning_and_call_titles_are_read(tmp_path):
    folder, _ = database(tmp_path)
    idx, evs = built(row(folder, make_db.NEW_ID))
    holder = next(e for e in evs if any(b.kind == "tool_use" and b.id == "call_dl1" for b in e.blocks))
    assert [b.kind for b in holder.blocks] == ["thinking", "text", "notice", "notice", "tool_use"]
    assert holder.blocks[0].text == "The other targets may hang the same way: worth a look."
    assert [b.text for b in holder.blocks[2:4]] == [
        "Goose's title for this call: Delegate a Makefile summary",
        "Goose's summary: Asked a sub-agent for the Makefile's targets"]


def test_each_model_call_of_goose_s_usage_ledger_is_counted_with_its_model_tokens_and_cost(tmp_path):
    """Goose (schema 15+) writes a row of `usage_ledger` per model call: each is a call of the
    usage tally (its model, its cached input apart, priced by the price table per call, Goose's
    own cost beside), placed after the reply it paid for, and the session's totals are not counted
    again; the sub-agent's calls count in its thread."""
    folder, _ = database(tmp_path)
    idx = Store([folder]).index(f"sessions.db~{make_db.NEW_ID}")
    u = idx.summary.usage
    assert u["session_totals"] is False and u["calls"] == 3 + 2
    assert u["tokens"] == 5210 + 1320
    # Goose's input counts its cached parts: the uncached input is what is left
    assert u["models"]["claude-sonnet-4-5"][:5] == [4980 - 2700 - 1200, 230, 2700, 1200, 3]
    assert u["models"]["claude-haiku-4-5"][:5] == [1250, 70, 0, 0, 2]
    hour = int(make_db.T // 3600)
    each = [usage.PRICES.cost(model, hour, 1, inp - read - write, out, read, write)
            for rows in make_db.LEDGER.values() for _, model, inp, out, read, write, _ in rows]
    assert all(each) and u["cost"] == pytest.approx(sum(each))
    rep = usage.report(idx)
    assert rep["session_totals"] is False and rep["source_cost_usd"] == pytest.approx(0.0136)
    assert rep["threads"]["main"]["calls"] == 3 and rep["threads"][make_db.SUB_ID]["calls"] == 2
    # each row is the usage of the reply it paid for (the one Goose wrote before it recorded it)
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    paid = [(e.role, e.timestamp.timestamp(), e.model, e.usage["prompt_tokens"]) for e in evs if e.usage
            and e.kind != "session"]
    assert paid == [("assistant", make_db.T + 4, "claude-sonnet-4-5", 1500),
                    ("assistant", make_db.T + 6, "claude-sonnet-4-5", 1620),
                    ("assistant", make_db.T + 9, "claude-sonnet-4-5", 1860)]
    assert not any(e.kind == "usage" for e in evs)  # (nothing added to the conversation)
    # the sub-agent's first call was recorded after its tool had answered, in the same second
    sub = load_events(idx, make_db.SUB_ID, 0, len(idx.threads[make_db.SUB_ID]))
    assert [(e.role, e.usage["prompt_tokens"]) for e in sub if e.usage and e.kind != "session"] == [("assistant", 600), ("assistant", 650)]
    assert not any(e.hidden for e in sub)


def test_a_ledger_row_goose_writes_is_counted_live_and_its_old_forms_are_said(tmp_path):
    folder, con = database(tmp_path, keep_open=True)
    try:
        store = Store([folder])
        key = f"sessions.db~{make_db.NEW_ID}"
        assert store.index(key).summary.usage["calls"] == 5
        # the row for what the session used before the ledger, and a compaction's call
        con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, "
                    "total_tokens, cost_source, is_compaction) VALUES (?, ?, NULL, 9000, 400, 9400, "
                    "'carried_forward', 0)", (make_db.NEW_ID, make_db.T + 10))
        con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, "
                    "total_tokens, cost, cost_source, is_compaction) VALUES (?, ?, 'claude-sonnet-4-5', 5000, "
                    "300, 5300, 0.02, 'provider_reported', 1)", (make_db.NEW_ID, make_db.T + 10))
        idx, _ = store.refresh(key)
        u = idx.summary.usage
        # the compaction is a call; the usage before the ledger is the session's model's tokens,
        # carried totals and not a call: not in the calls per model, no bar, priced as totals
        assert u["calls"] == 6 and u["models"]["claude-sonnet-4-5"][4] == 4
        assert u["carried"] is True and u["tokens"] == 5210 + 1320 + 9400 + 5300
        carried = [b for b in u["buckets"] if b[3] == usage.CARRIED_TIER]
        assert [b[:9] for b in carried] == [["main", "claude-sonnet-4-5", int((make_db.T + 10) // 3600),
                                             usage.CARRIED_TIER, 1, 9000, 400, 0, 0]]
        assert carried[0][9] == pytest.approx(usage.PRICES.cost("claude-sonnet-4-5", carried[0][2], 1, 9000, 400,
                                                                0, 0, usage.CARRIED_TIER))
        bars = [b for r in usage.timeline(idx)["rows"] for b in r["bars"] if b["kind"] == "model"]
        assert len(bars) == 6
        rep = usage.report(idx)
        assert rep["carried"] is True and rep["calls"] == 6 and rep["untied_calls"] == 0
        evs = load_events(idx, "main", 0, len(idx.threads["main"]))
        said = [b.text for e in evs if e.kind == "usage" for b in e.blocks]
        assert all(e.hidden for e in evs if e.kind == "usage")
        assert said == [
            "Goose's usage ledger: usage before Goose kept it call by call (carried totals, not a model "
            "call): 9,000 in · 400 out",
            "Goose's usage ledger: a model call that compacted the conversation (claude-sonnet-4-5): "
            "5,000 in · 300 out · $0.0200 (reported by the provider)"]
    finally:
        con.close()
    # before schema 15 there is no ledger: the session's totals are its usage
    folder, con = database(tmp_path / "old", keep_open=True)
    con.execute("DROP TABLE usage_ledger")
    con.close()
    u = Store([folder]).index(f"sessions.db~{make_db.NEW_ID}").summary.usage
    assert u["session_totals"] is True and u["calls"] == 0 and u["tokens"] == 5210 + 1320


TASK_ID = "20251105_3"


def _goose_1x_subagent(con):
    """Goose 1.x's `subagent` tool (subagent_execution_tool/subagent_tool.rs at block/goose
    203fc20): a `sub_agent` session named "Subagent Task" that names no parent, its id the task's,
    and the call answered with the ExecutionResponse naming it as the task it ran. Written in the
    order Goose writes them: the call, the session it runs (its messages), the call's result."""
    _subagent_call(con)
    _subagent_session(con)
    _subagent_result(con)


def _subagent_call(con):
    make_db.write_message(con, make_db.NEW_ID, {"role": "assistant", "created": make_db.T + 10, "content": [
        {"type": "toolRequest", "id": "call_sa1", "toolCall": {"status": "success", "value": {
            "name": "subagent", "arguments": {"instructions": "List the CI jobs.", "title": "CI jobs"}}}}]},
        "2025-11-05 10:00:10")


def _subagent_session(con, done: bool = True):
    con.execute("INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at) VALUES "
                "(?, 'Subagent Task', 'sub_agent', '/home/dev/api', '2025-11-05 10:00:10', '2025-11-05 10:00:12')",
                (TASK_ID,))
    make_db.write_message(con, TASK_ID, {"role": "user", "created": make_db.T + 10, "content": [
        {"type": "text", "text": "List the CI jobs."}]}, "2025-11-05 10:00:10")
    if done:
        make_db.write_message(con, TASK_ID, {"role": "assistant", "created": make_db.T + 12, "content": [
            {"type": "text", "text": "CI runs build and test."}]}, "2025-11-05 10:00:12")


def _subagent_result(con):
    answer = {"status": "completed", "results": [{"task_id": TASK_ID, "status": "Completed",
                                                  "data": "CI runs build and test."}],
              "stats": {"total_tasks": 1, "completed": 1, "failed": 0, "execution_time_ms": 2100}}
    make_db.write_message(con, make_db.NEW_ID, {"role": "user", "created": make_db.T + 12, "content": [
        {"type": "toolResponse", "id": "call_sa1", "toolResult": {"status": "success", "value": {
            "content": [{"type": "text", "text": json.dumps(answer)}], "isError": False}}}]}, "2025-11-05 10:00:12")


def test_a_goose_1x_subagent_task_s_session_nests_under_the_call_that_ran_it(tmp_path):
    """Before `parent_session_id`, Goose's subagent tools ran each task in a session of its own
    named only by the call's result (its task id): the session nests under that call."""
    folder, con = database(tmp_path, keep_open=True)
    _goose_1x_subagent(con)
    con.close()
    idx = Store([folder]).index(f"sessions.db~{make_db.NEW_ID}")
    assert set(idx.threads) == {"main", make_db.SUB_ID, TASK_ID}
    assert idx.threads[TASK_ID].label == f"Subagent Task · session {TASK_ID}"
    call = idx.calls.calls["call_sa1"]
    assert (call.status, call.subthread) == ("completed", TASK_ID)
    evs = load_events(idx, TASK_ID, 0, len(idx.threads[TASK_ID]))
    assert "CI runs build and test." in [e.text() for e in evs]
    # …and its own session is a sub-agent of that session (listed under it), as delegate's are
    sub = Store([folder]).index(f"sessions.db~{TASK_ID}")
    assert sub.info["parent_session"] == make_db.NEW_ID and sub.info["thread"] == TASK_ID
    assert sub.summary.parent == str(row(folder, make_db.NEW_ID))


def test_a_running_goose_1x_subagent_task_nests_under_its_call_before_the_call_s_result(tmp_path):
    """A `subagent` call makes its task's session at once, and only its result, when the task is
    done, names it: meanwhile the session is its open call's (the earliest such call before it in
    its folder), so it nests under that call and is listed under its parent while it runs — and
    stays there once the result names it."""
    from viewer.formats import goose_db

    folder, con = database(tmp_path, keep_open=True)
    try:
        _subagent_call(con)
        _subagent_session(con, done=False)
        store = Store([folder])
        idx = store.index(f"sessions.db~{make_db.NEW_ID}")
        assert set(idx.threads) == {"main", make_db.SUB_ID, TASK_ID}
        call = idx.calls.calls["call_sa1"]
        assert (call.status, call.subthread) == ("pending", TASK_ID)
        assert store.index(f"sessions.db~{TASK_ID}").info["parent_session"] == make_db.NEW_ID
        # another session's sub-agent at the same time, or a task made long after: not this call's
        assert goose_db.task_parent(str(row(folder, make_db.SUB_ID))) is None
        make_db.write_message(con, TASK_ID, {"role": "assistant", "created": make_db.T + 12, "content": [
            {"type": "text", "text": "CI runs build and test."}]}, "2025-11-05 10:00:12")
        _subagent_result(con)
        idx, change = store.refresh(f"sessions.db~{make_db.NEW_ID}")
        assert not change.reset
        call = idx.calls.calls["call_sa1"]
        assert (call.status, call.subthread) == ("completed", TASK_ID)
        assert "CI runs build and test." in [e.text() for e in load_events(idx, TASK_ID, 0, len(idx.threads[TASK_ID]))]
    finally:
        con.close()


def test_a_task_session_of_no_open_call_of_its_folder_stays_on_its_own(tmp_path):
    """A `sub_agent` session no call can be told for — its folder another, or open `subagent`
    calls in two sessions at once — is not put under any."""
    from viewer.formats import goose_db

    folder, con = database(tmp_path, keep_open=True)
    try:
        _subagent_call(con)
        con.execute("UPDATE sessions SET working_dir = '/elsewhere' WHERE id = ?", (make_db.NEW_ID,))
        _subagent_session(con, done=False)
        assert goose_db.task_parent(str(row(folder, TASK_ID))) is None
        con.execute("UPDATE sessions SET working_dir = '/home/dev/api' WHERE id = ?", (make_db.NEW_ID,))
        goose_db.rowdb.memo.clear()
        assert goose_db.task_parent(str(row(folder, TASK_ID))) == make_db.NEW_ID
        con.execute("UPDATE messages SET session_id = ? WHERE session_id = ? AND content_json LIKE '%call_sa1%'",
                    (make_db.SUB_ID, make_db.NEW_ID))  # (so two sessions have an open call)
        make_db.write_message(con, make_db.NEW_ID, {"role": "assistant", "created": make_db.T + 10, "content": [
            {"type": "toolRequest", "id": "call_sa2", "toolCall": {"status": "success", "value": {
                "name": "subagent", "arguments": {"instructions": "Another."}}}}]}, "2025-11-05 10:00:10")
        con.execute("UPDATE messages SET id = id + 10 WHERE session_id = ?", (TASK_ID,))  # (after both calls)
        goose_db.rowdb.memo.clear()
        assert goose_db.task_parent(str(row(folder, TASK_ID))) is None
    finally:
        con.close()


def test_a_goose_1x_task_s_parent_is_found_from_the_rows_written_since_the_last_look(tmp_path):
    """A task's session names no parent: the parent is the session whose subagent result names the
    task. It is looked up from the message rows written since the last look (a live database
    changes on every write), and a parent whose rows went is not kept."""
    from viewer.formats import goose_db

    folder, con = database(tmp_path, keep_open=True)
    db = str(folder / "sessions.db")
    task = str(row(folder, TASK_ID))
    assert goose_db.task_parent(task) is None  # (not a session yet)
    _goose_1x_subagent(con)
    assert goose_db.task_parent(task) == make_db.NEW_ID
    read = goose_db._owners[db]["last"]
    make_db.write_message(con, make_db.NEW_ID, {"role": "assistant", "created": make_db.T + 20, "content": [
        {"type": "text", "text": "Done."}]}, "2025-11-05 10:00:20")
    goose_db.rowdb.memo.clear()
    assert goose_db.task_parent(task) == make_db.NEW_ID
    assert goose_db._owners[db]["last"] > read  # read on from where it was
    # the parent's conversation gone (deleted with its session): the task has no parent now
    con.execute("DELETE FROM messages WHERE session_id = ?", (make_db.NEW_ID,))
    goose_db.rowdb.memo.clear()
    assert goose_db.task_parent(task) is None
    con.close()


def test_goose_1x_task_tools_say_which_tasks_they_create_and_run():
    from viewer import tools
    create = {"task_parameters": [{"text_instruction": "Get weather for Melbourne."},
                                  {"text_instruction": "Get weather for Perth."}]}
    assert tools.summary("dynamic_task__create_task", create) == "2 tasks: Get weather for Melbourne."
    run = {"task_ids": ["0f1c…", "9a7e…"], "execution_mode": "parallel"}
    assert tools.summary("subagent__execute_task", run) == "runs 2 tasks in sub-agents · parallel"


TIE_ID = "20251106_1"


def _tied_session(con):
    """A session whose ledger rows test each rule that ties a row to the reply it paid for: a row
    recorded before any reply, one in the reply's own second (its tool's result written the same
    second), a second row before the next reply (another call of the same reply), two replies in
    one second, and newer Goose's own record of a call on its reply (`metadata.usage`, the same
    numbers as its row), which ties a row whatever its time says."""
    t = make_db.T + 1000
    con.execute("INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at, provider_name, "
                "model_config_json) VALUES (?, 'Ties', 'user', '/w', '2025-11-05 10:16:40', '2025-11-05 10:17:40', "
                "'anthropic', ?)", (TIE_ID, json.dumps({"model_name": "claude-sonnet-4-5"})))

    def reply(at, text, own=None, call=None):
        content = [{"type": "text", "text": text}]
        if call:
            content.append({"type": "toolRequest", "id": call, "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": "ls"}}}})
        meta = {"userVisible": True, "agentVisible": True}
        if own:
            meta |= {"usage": {"inputTokens": own[0], "outputTokens": own[1], "totalTokens": sum(own),
                               "cost": 0.001, "costSource": "estimated"},
                     "inference": {"provider": "anthropic", "requestedModel": "claude-sonnet-4-5",
                                   "resolvedModel": "claude-sonnet-4-5-20250929"}}
        make_db.write_message(con, TIE_ID, {"role": "assistant", "created": t + at, "content": content,
                                            "metadata": meta}, "2025-11-05 10:17:40")

    def answer(at, call):
        make_db.write_message(con, TIE_ID, {"role": "user", "created": t + at, "content": [
            {"type": "toolResponse", "id": call, "toolResult": {"status": "success", "value": [
                {"type": "text", "text": "a b"}]}}]}, "2025-11-05 10:17:40")

    def row(at, inp, out):
        con.execute("INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, "
                    "total_tokens, cost, cost_source, is_compaction) VALUES (?, ?, 'claude-sonnet-4-5', ?, ?, ?, "
                    "0.001, 'estimated', 0)", (TIE_ID, t + at, inp, out, inp + out))

    make_db.write_message(con, TIE_ID, {"role": "user", "created": t, "content": [
        {"type": "text", "text": "List the files."}]}, "2025-11-05 10:16:40")
    row(0, 100, 1)        # before any reply: tied to none
    reply(1, "Listing.", call="c1")
    answer(1, "c1")
    row(1, 200, 2)        # the reply's own second, after its tool's result
    row(3, 300, 3)        # before the next reply: a further call of the same reply
    reply(5, "Two files.")
    reply(5, "Anything else?")
    row(5, 400, 4)        # two replies in one second: the first…
    row(6, 500, 5)        # …and the second
    reply(10, "Newer Goose.", own=(600, 6))
    reply(12, "Its own record.", own=(700, 7))
    row(13, 600, 6)       # by time both the latest reply's: by their numbers one each
    row(13, 700, 7)
    reply(20, "No row.", own=(800, 8))  # (its row not written: its own record counts)


def test_ledger_rows_are_tied_to_replies_as_exactly_as_goose_s_records_allow(tmp_path):
    folder, con = database(tmp_path, keep_open=True)
    _tied_session(con)
    con.close()
    idx = Store([folder]).index(f"sessions.db~{TIE_ID}")
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    paid = [(e.role if not e.hidden else e.kind, e.text() or None, e.usage["prompt_tokens"])
            for e in evs if e.usage and e.kind != "session"]
    assert paid == [
        ("usage", None, 100),
        ("assistant", "Listing.", 200),
        ("usage", None, 300),
        ("assistant", "Two files.", 400),
        ("assistant", "Anything else?", 500),
        ("assistant", "Newer Goose.", 600),
        ("assistant", "Its own record.", 700),
        ("assistant", "No row.", 800)]
    said = {e.usage["prompt_tokens"]: e.blocks[0].text for e in evs if e.kind == "usage"}
    assert said[100].startswith("Goose's usage ledger: a model call not tied to a reply")
    assert said[300].startswith("Goose's usage ledger: a further model call of the reply above")
    # the reply's own record names the model Goose resolved
    assert [e.model for e in evs if e.text() == "No row."] == ["claude-sonnet-4-5-20250929"]
    u = idx.summary.usage
    assert u["calls"] == 8 and u["untied"] == 1
    rep = usage.report(idx)
    assert rep["calls"] == 8 and rep["untied_calls"] == 1


def test_goose_s_and_studio_s_row_sessions_are_claimed_and_read_by_one_helper(tmp_path):
    """Both formats whose sessions are all rows of one database take their file hooks from
    rowdb.session_hooks: a path below the database is claimed and read as the row's document, a
    session gone from the database reads as no document (reading the path says so), and a
    database that cannot be read now is the format's empty document saying why."""
    from types import SimpleNamespace

    from viewer.formats import agentscope_studio, goose_db, rowdb, studio_db

    def boom(path):
        if path.endswith("gone"):
            raise FileNotFoundError(2, "no longer in the database", path)
        raise OSError("database is locked")

    fake = SimpleNamespace(is_row=lambda p: "/x.db/" in p, document=boom, identity=lambda p: (1, 2, 3))
    claims, document, identity = rowdb.session_hooks(fake, lambda why: {"unreadable": why})
    assert claims(Path("/a/x.db/s1"), b"") and not claims(Path("/a/s1.json"), b"")
    assert document(Path("/a/s1.json")) is None and document(Path("/a/x.db/gone")) is None
    assert document(Path("/a/x.db/s1")) == {"unreadable": "database is locked"}
    assert identity("/a/x.db/s1") == (1, 2, 3)
    # Goose's and Studio's hooks are these, over their own modules
    folder, _ = database(tmp_path)
    assert goose.claims_file(row(folder, make_db.NEW_ID), b"")
    assert goose.folder_document(row(folder, make_db.NEW_ID))["session"]["id"] == make_db.NEW_ID
    assert goose.folder_document(row(folder, "20990101_1")) is None
    assert goose.folder_identity is goose_db.identity
    assert agentscope_studio.folder_identity is studio_db.identity
    assert not agentscope_studio.claims_file(row(folder, make_db.NEW_ID), b"")


def test_a_database_being_written_is_looked_at_again_reading_only_the_sessions_it_changed(
        tmp_path, monkeypatch):
    """While Goose writes, every session's identity is asked for again and again (the list, the
    walker; a database written within the last seconds is looked at every second): each look
    reads again only the sessions whose rows changed since the last — a message appended, a
    session row renamed, a conversation cut, a session deleted — and gives the others as they were, the same
    identities a fresh read gives."""
    from viewer import reader
    from viewer.formats import goose_db, rowdb

    folder, con = database(tmp_path, keep_open=True)
    try:
        for n in range(30):
            con.execute("INSERT INTO sessions (id, name, working_dir) VALUES (?, 'another', '/home/dev')",
                        (f"2025_o{n}",))
            make_db.write_message(con, f"2025_o{n}", {"role": "user", "created": make_db.T, "content": [
                {"type": "text", "text": f"Question {n}"}]}, "2025-11-05 10:00:00")
        paths = [str(r.path) for r in Store([folder]).sessions()]
        assert len(paths) == 34
        monkeypatch.setattr(rowdb, "RECHECK_NS", 0)  # (every ask a new look, as a second later)
        read = []
        session_row = goose_db._session_row
        monkeypatch.setattr(goose_db, "_session_row", lambda r, sid: read.append(sid) or session_row(r, sid))

        def sweep():
            read.clear()
            out = {}
            for p in paths:
                try:
                    out[p] = reader.file_identity(p)
                except FileNotFoundError:
                    out[p] = None
            return out

        first = sweep()
        make_db.write_message(con, make_db.NEW_ID, {"role": "assistant", "created": make_db.T + 50, "content": [
            {"type": "text", "text": "More."}]}, "2025-11-05 10:00:50")
        con.execute("UPDATE sessions SET name = 'a renamed one' WHERE id = '2025_o3'")
        con.execute("DELETE FROM messages WHERE session_id = '2025_o7'")
        con.execute("DELETE FROM sessions WHERE id = '2025_o7'")
        con.execute("DELETE FROM messages WHERE session_id = '2025_o5'")  # (a conversation cut)
        second = sweep()
        assert sorted(set(read)) == sorted([make_db.NEW_ID, "2025_o3", "2025_o5", "2025_o7"])  # (o7: gone)
        changed = {p.rsplit("/", 1)[1] for p in paths if first[p] != second[p]}
        assert changed == {make_db.NEW_ID, "2025_o3", "2025_o5", "2025_o7"}
        assert second[str(row(folder, "2025_o7"))] is None
        third = sweep()
        assert read == [] and third == second  # (nothing written since: nothing read)
        # the same identities as a fresh read of every session (a look once the database is quiet)
        monkeypatch.setattr(rowdb, "SETTLED_NS", 0)
        rowdb.memo.clear()
        rowdb._looks.clear()
        assert sweep() == second and len(set(read)) == 34  # (each once)
        # a page opened on one session in a new process reads that session, not every one
        rowdb.memo.clear()
        rowdb._looks.clear()
        read.clear()
        reader.file_identity(str(row(folder, make_db.NEW_ID)))
        assert read == [make_db.NEW_ID]
    finally:
        con.close()
