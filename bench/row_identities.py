"""What a database being written costs the viewer's looks at its sessions: while a program writes
(a row every 0.3 s to one session), the list and the background walker take every session's
identity (`reader.file_identity`), and a database written within the last few seconds is looked
at again every second (rowdb.remembered). Measured here: one sweep over every session's identity
once a second for `--seconds`, in a Goose `sessions.db` of `--sessions` sessions of `--messages`
messages each and in an AgentScope Studio `database.sqlite` of as many runs, built as the programs
write them (test_data/formats/goose/make_db.py, test_data/formats/agentscope-studio/make_db.py).

    python -m bench.row_identities [--sessions 300] [--messages 100] [--seconds 6]

Prints the median and worst sweep, and the sessions whose rows were read per sweep.
Runs against whichever `viewer` is imported first (PYTHONPATH=<another checkout> compares)."""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def goose(folder: Path, sessions: int, messages: int):
    """A Goose database of `sessions` sessions, the connection kept open, and a function that
    writes one more message to the first of them."""
    make_db = _module("goose_make_db", ROOT / "test_data" / "formats" / "goose" / "make_db.py")
    con = make_db.build(folder / "sessions.db", keep_open=True)
    con.execute("BEGIN")
    ids = [f"2025_s{n}" for n in range(sessions)]
    for sid in ids:
        con.execute("INSERT INTO sessions (id, name, working_dir) VALUES (?, 'a session', '/home/dev')", (sid,))
        for i in range(messages):
            make_db.write_message(con, sid, {"role": "assistant" if i % 2 else "user", "created": make_db.T + i,
                                             "content": [{"type": "text", "text": f"message {i} " * 20}]},
                                  "2025-11-05 11:00:00")
    con.execute("COMMIT")
    n = [0]
    own: dict = {}

    def write():  # (on the writer's thread: a connection of its own, as another process's)
        import sqlite3
        if "con" not in own:
            own["con"] = sqlite3.connect(folder / "sessions.db", isolation_level=None)
        n[0] += 1
        make_db.write_message(own["con"], ids[0], {"role": "assistant", "created": int(time.time()), "content": [
            {"type": "text", "text": f"live {n[0]}"}]}, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()))
    return con, folder / "sessions.db", write


def studio(folder: Path, sessions: int, messages: int):
    """An AgentScope Studio database of `sessions` finished runs (rollback-journal mode, as
    TypeORM keeps it), and a function that pushes one more message to a running run."""
    make_db = _module("studio_make_db", ROOT / "test_data" / "formats" / "agentscope-studio" / "make_db.py")
    con = make_db.build(folder / "database.sqlite", keep_open=True)
    con.execute("BEGIN")
    for n in range(sessions):
        make_db.register_run(con, f"run{n}", "Bench", f"run {n}", "2026-11-19 10:00:00.000", 100 + n, "done")
        for i in range(messages):
            make_db.push(con, f"run{n}", {"id": f"m{n}_{i}", "name": "Friday", "role": "assistant", "metadata": None,
                                          "timestamp": "2026-11-19 10:00:01.000", "content": f"message {i} " * 20},
                         f"r{n}", "Friday", "assistant")
    con.execute("COMMIT")
    n = [0]
    own: dict = {}

    def write():
        import sqlite3
        if "con" not in own:
            own["con"] = sqlite3.connect(folder / "database.sqlite", isolation_level=None)
        n[0] += 1
        make_db.push(own["con"], make_db.OTHER, {"id": f"live{n[0]}", "name": "user", "role": "user", "metadata": None,
                                                 "timestamp": "2026-11-21 09:00:02.000", "content": f"live {n[0]}"},
                     "r_w1", "user", "user")
    return con, folder / "database.sqlite", write


def sweep(paths: list[str]) -> float:
    from viewer import reader

    began = time.perf_counter()
    for p in paths:
        try:
            reader.file_identity(p)
        except OSError:
            pass
    return time.perf_counter() - began


def measure(name: str, db: Path, write, seconds: float, counter) -> None:
    from viewer.formats import rowdb
    from viewer.store import Store

    store = Store([db.parent])
    paths = [str(r.path) for r in store.sessions() if rowdb.split(str(r.path), lambda n: n == db.name)]
    sweep(paths)  # (the first look: every session read once)
    stop = threading.Event()

    def writer():
        while not stop.wait(0.3):
            write()
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    took, reads = [], []
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            time.sleep(1.0)
            before = counter[0]
            took.append(sweep(paths))
            reads.append(counter[0] - before)
    finally:
        stop.set()
        t.join()
    print(f"{name}: {len(paths)} sessions, a row written every 0.3 s, one sweep a second for {seconds:.0f} s: "
          f"median {statistics.median(took) * 1000:.1f} ms, worst {max(took) * 1000:.1f} ms, "
          f"sessions read per sweep median {statistics.median(reads):.0f}")


def _count(module, name: str, counter: list) -> None:
    """Count the calls of `module.name` in counter[0]."""
    fn = getattr(module, name)

    def counted(*a, **k):
        counter[0] += 1
        return fn(*a, **k)
    setattr(module, name, counted)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--messages", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=6.0)
    args = ap.parse_args()
    from viewer.formats import goose_db, studio_db

    counter = [0]
    # (a session's identity read: `_identity_in` now, `_identity` in the code before, for an A/B)
    _count(goose_db, "_identity_in" if hasattr(goose_db, "_identity_in") else "_identity", counter)
    _count(studio_db, "_run_row", counter)  # (read once per run whose identity is taken, before and after)
    for name, folder_name, make in (("Goose sessions.db", "goose", goose),
                                    ("AgentScope Studio database.sqlite", "AgentScope-Studio", studio)):
        counter[0] = 0
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / folder_name
            folder.mkdir()
            con, db, write = make(folder, args.sessions, args.messages)
            try:
                measure(name, db, write, args.seconds, counter)
            finally:
                con.close()


if __name__ == "__main__":
    main()
