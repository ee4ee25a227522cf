"""What one row written to a running Goose's database costs the viewer: a 3,000-message session in
Goose's `sessions.db` (built as Goose writes it: test_data/formats/goose/make_db.py), indexed with
its full-text index, then one message appended at a time, and for each:

* `refresh`: the session's index brought up to the database (what a live page's stream does on
  every write), the full-text index's writer done with it;
* `task refresh`: the same for a Goose 1.x sub-agent's session at work (a task's, named only by
  its parent's subagent result), one row appended to it: finding its parent is part of reading it.

    python -m bench.goose_rows [--messages 3000] [--others 0] [--runs 20]

(`--others N`: N other sessions as long in the database, as a Goose used for months holds.)

Runs against whichever `viewer` is imported first (PYTHONPATH=<another checkout> compares)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _make_db():
    spec = importlib.util.spec_from_file_location("goose_make_db", ROOT / "test_data" / "formats" / "goose"
                                                  / "make_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(folder: Path, messages: int, others: int = 0):
    """A Goose database with one session of `messages` messages (calls and their results, a Goose
    1.x sub-agent task among them), the connection kept open as a running Goose keeps it."""
    make_db = _make_db()
    con = make_db.build(folder / "sessions.db", keep_open=True)
    t = make_db.T + 100
    con.execute("BEGIN")
    for n in range(others):
        con.execute("INSERT INTO sessions (id, name, working_dir) VALUES (?, 'other', '/home/dev')",
                    (f"2025_other_{n}",))
    for sid, i in [(make_db.NEW_ID, i) for i in range(messages // 2)] + [
            (f"2025_other_{n}", i) for n in range(others) for i in range(messages // 2)]:
        make_db.write_message(con, sid, {"role": "assistant", "created": t + i, "content": [
            {"type": "text", "text": f"Step {i}: looking at the module number {i}."},
            {"type": "toolRequest", "id": f"call_b{i}", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": f"cat mod{i}.py"}}}}]}, "2025-11-05 11:00:00")
        make_db.write_message(con, sid, {"role": "user", "created": t + i, "content": [
            {"type": "toolResponse", "id": f"call_b{i}", "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": f"def f{i}():\n    return {i}\n" * 5}], "isError": False}}}]},
            "2025-11-05 11:00:00")
    task = "20251105_9"
    con.execute("INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at) VALUES "
                "(?, 'Subagent Task', 'sub_agent', '/home/dev/api', '2025-11-05 11:00:00', '2025-11-05 11:00:01')",
                (task,))
    make_db.write_message(con, task, {"role": "user", "created": t, "content": [
        {"type": "text", "text": "List the CI jobs."}]}, "2025-11-05 11:00:00")
    answer = {"status": "completed", "results": [{"task_id": task, "status": "Completed", "data": "ok"}]}
    make_db.write_message(con, make_db.NEW_ID, {"role": "user", "created": t + messages, "content": [
        {"type": "toolResponse", "id": "call_sa", "toolResult": {"status": "success", "value": {
            "content": [{"type": "text", "text": json.dumps(answer)}], "isError": False}}}]}, "2025-11-05 11:00:00")
    con.execute("COMMIT")
    return make_db, con, task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=3000)
    ap.add_argument("--others", type=int, default=0)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    from viewer.cache import IndexCache
    from viewer.fts import FullText
    from viewer.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "sessions"
        folder.mkdir()
        make_db, con, task = build(folder, args.messages, args.others)
        store = Store([folder], IndexCache(Path(tmp) / "cache"))
        fts = FullText(store, store.cache.path)
        store.indexer.listen(fts)
        key, task_key = f"sessions.db~{make_db.NEW_ID}", f"sessions.db~{task}"
        idx = store.index(key)
        store.index(task_key)
        fts.wait(120)
        events = len(idx.threads["main"])
        took, took_task = [], []
        for i in range(args.runs):
            time.sleep(0.15)  # (past the racy window rowdb.remembered leaves a fresh write in)
            make_db.write_message(con, make_db.NEW_ID, {"role": "assistant", "created": make_db.T + 10**5 + i,
                                                        "content": [{"type": "text", "text": f"live {i}"}]},
                                  "2025-11-05 12:00:00")
            time.sleep(0.15)
            began = time.perf_counter()
            store.refresh(key)
            fts.wait(60)
            took.append(time.perf_counter() - began)
            make_db.write_message(con, task, {"role": "assistant", "created": make_db.T + 10**5 + i,
                                              "content": [{"type": "text", "text": f"task {i}"}]},
                                  "2025-11-05 12:00:00")
            time.sleep(0.15)
            began = time.perf_counter()
            store.refresh(task_key)
            took_task.append(time.perf_counter() - began)
        store.indexer.stop()
        fts.close()
        con.close()
    print(f"a {events}-event Goose session ({args.others} others beside it), one row appended, {args.runs} runs: "
          f"refresh (index + full-text) median {statistics.median(took) * 1000:.1f} ms "
          f"(max {max(took) * 1000:.1f}); a Goose 1.x task's session refreshed "
          f"median {statistics.median(took_task) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
