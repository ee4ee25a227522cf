"""A seeded property fuzzer for the live path: "live equals batch".

tests/fuzzer.py mutates whole files; a running agent writes its files a piece at a time, and what
the viewer shows while it does comes from another code path: `SessionIndex.refresh` extending the
index from its last offset (a last line without its newline waiting for the writer, a file cut or
rewritten detected and read again, companion files — Claude Code's sub-agents, legion's threads —
appearing), the store keeping and caching that index, the live feed rendering what is new for the
streams, and the full-text index fed event by event. None of that runs when a finished file is read.

A case takes one seed session of tests/fuzzer.py (every format, companion files included; its files
mutated lightly half of the time) and writes it into a fresh folder in random pieces: cut mid-line,
mid-UTF-8 sequence, right after a newline or several lines at once, companion files created late, a
writer pausing mid-line past the grace period (the cut line shown as truncated, then finished), the
file occasionally cut back and written again or an earlier line rewritten (then put back). Between
pieces the store refreshes the index (through the live feed, as the pump does), a stream drains its
messages, pages and windows are drawn, and sometimes the index goes through the cache and back.

Properties, after the final piece and a refresh:
- the incremental index equals a fresh build of the final files: every column of every thread
  (ids, offsets, lines, kinds, roles, authors, hidden, prompts…), the tool calls with their states,
  the summary counts and the usage totals;
- the events of every thread and their rendered HTML are the same;
- an event id given to a complete line stays that line's id for as long as the file holds the same
  bytes up to it (permalinks made while a session is live stay valid);
- one stream that stayed open throughout received every event once, in order: nothing twice, no gap
  (a `reset` message — the file was cut or rewritten — reloads the page, as the browser does);
- the full-text index fed by the passes equals one fed by a single build.

Time is the test's: file times are set by a clock the case advances, and the grace a partial last
line gets (index._grace_over) reads that clock — nothing sleeps.

The bounded run is tests/test_livefuzz.py; the long run is this script:
    .venv/bin/python tests/livefuzz.py --cases 5 --seed 1 [--minutes 10] [--only claude]
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
import os
import random
import re
import shutil
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fuzzer import MAX_FILES, WINDOW, Errors, Seed, chosen, mutate_file, seeds  # noqa: E402


# --- the writer's plan ----------------------------------------------------------------------------


def final_files(seed: Seed, r: random.Random) -> dict[str, bytes]:
    """The files a case ends with, by path relative to the case's folder: a window of each seed
    file's lines (all of a small one), lightly mutated half of the time."""
    out = {}
    mutate = r.random() < 0.5
    for src in seed.files[:MAX_FILES]:  # (the main file and the first of the others)
        rel = str(Path(seed.base.name) / src.relative_to(seed.base))
        data = src.read_bytes()
        jsonl = src.suffix == ".jsonl"
        if jsonl:
            lines = data.split(b"\n")
            if len(lines) > WINDOW + 1:
                start = r.choice([0, r.randrange(len(lines) - WINDOW)])
                data = b"\n".join(lines[start:start + WINDOW]) + b"\n"
        if mutate and (src == seed.main or r.random() < 0.3):
            data, _ = mutate_file(data, jsonl, r, r.choice([1, 1, 2, 3]))
        out[rel] = data
    return out


class Clock:
    """The case's time: file times are set from it and the grace of a partial line reads it."""

    def __init__(self):
        # a day behind the real clock: folder times (set from this clock) are then long past when
        # the index lists them, so that it trusts a listing while they do not change (see
        # index._companions_settled) — the path a session older than a few seconds takes
        self.now = time.time() - 86400

    def tick(self, r: random.Random) -> int:
        self.now += r.choice([0.001, 0.01, 0.2, 1.5])
        return int(self.now * 1e9)


@contextmanager
def case_clock(clock: Clock):
    from viewer import index

    real = index._grace_over
    index._grace_over = lambda mtime_ns: clock.now - mtime_ns / 1e9 > index.TRUNCATED_GRACE
    try:
        yield
    finally:
        index._grace_over = real


def _cut(data: bytes, pos: int, r: random.Random) -> int:
    """Where the next piece of a file written up to `pos` ends."""
    rest = len(data) - pos
    if rest <= 0:
        return pos
    how = r.random()
    if how < 0.3:  # right after a newline (one line or a few)
        end = pos
        for _ in range(r.choice([1, 1, 2, 5])):
            nl = data.find(b"\n", end)
            end = len(data) if nl < 0 else nl + 1
        return end
    if how < 0.45:  # inside a multi-byte UTF-8 sequence, when there is one
        multi = [i for i in range(pos + 1, min(len(data), pos + 4096)) if 0x80 <= data[i] < 0xC0]
        if multi:
            return r.choice(multi)
    if how < 0.55:  # just before a newline (the line whole but not yet ended)
        nl = data.find(b"\n", pos)
        if nl > pos:
            return nl
    if how < 0.6:
        return len(data)  # everything left at once
    return pos + 1 + r.randrange(min(rest, r.choice([16, 200, 4000])))


@dataclass
class Writer:
    """Writes a case's files toward their final bytes, a piece at a time, with disturbances."""

    folder: Path
    final: dict[str, bytes]
    main: str
    r: random.Random
    clock: Clock
    pos: dict = field(default_factory=dict)  # rel → bytes of the final file written so far
    starts: dict = field(default_factory=dict)  # rel → the step it may be created at
    log: list = field(default_factory=list)
    steps: int = 0
    broken: str | None = None  # a file whose bytes differ from the final ones (to be put back)

    def __post_init__(self):
        for rel in self.final:
            self.pos[rel] = 0
            self.starts[rel] = 0 if rel == self.main else self.r.choice([0, 1, 3, 6, 12])

    def path(self, rel: str) -> Path:
        return self.folder / rel

    def done(self) -> bool:
        return self.broken is None and all(self.pos[k] >= len(v) for k, v in self.final.items())

    def _write(self, rel: str, data: bytes, at: int | None) -> None:
        p = self.path(rel)
        created = not p.exists()
        p.parent.mkdir(parents=True, exist_ok=True)
        if at is None:  # the whole file again (same inode: opened for writing, truncated)
            with open(p, "r+b" if p.exists() else "wb") as f:
                f.truncate(0)
                f.write(data)
        else:
            with open(p, "r+b" if p.exists() else "wb") as f:
                f.seek(at)
                f.write(data)
        t = self.clock.tick(self.r)
        os.utime(p, ns=(t, t))
        if created:  # the folders it (and its own folders) appeared in changed, at this time
            for d in [self.folder, *(q for q in self.folder.rglob("*") if q.is_dir())]:
                os.utime(d, ns=(t, t))
        if rel != self.main and self.main.endswith("session.json") and self.path(self.main).exists():
            # Wolo saves session.json after each message it writes (see formats/wolo.py): that
            # is how a reader learns that the folder changed
            t = self.clock.tick(self.r)
            os.utime(self.path(self.main), ns=(t, t))

    def step(self) -> str:
        """One write; returns what it did."""
        r = self.r
        self.steps += 1
        if self.broken is not None:
            # at once: a rewrite of bytes the index read long ago that keeps the file's size is
            # not seen (only the bytes before the resume offset are checked: see index._sealed)
            rel, self.broken = self.broken, None
            self._write(rel, self.final[rel][: self.pos[rel]], None)
            return self._did(f"{rel}: put back as written")
        ready = [k for k in self.final if self.pos[k] < len(self.final[k])
                 and self.starts[k] <= self.steps and (k == self.main or self.pos[self.main] > 0
                                                       or self.starts[k] == 0)]
        if not ready:
            return "nothing left"
        rel = r.choice(ready)
        data, pos = self.final[rel], self.pos[rel]
        odd = r.random()
        if odd < 0.04 and pos > 0 and self.broken is None:
            cut = r.randrange(pos)
            self._write(rel, b"", cut)
            with open(self.path(rel), "r+b") as f:
                f.truncate(cut)
            self.pos[rel] = cut
            return self._did(f"{rel}: cut back to {cut} of {pos}")
        if odd < 0.08 and self.broken is None and data[:pos].count(b"\n") >= 2:
            lines = data[:pos].split(b"\n")
            i = r.randrange(len(lines) - 1)
            old = lines[i]
            lines[i] = old[: len(old) // 2] + b'"rewritten":1,' + old[len(old) // 2:]
            self._write(rel, b"\n".join(lines), None)
            self.broken = rel
            return self._did(f"{rel}: line {i + 1} rewritten in place")
        if odd < 0.1 and self.broken is None and pos > 2 and data[pos - 1:pos] == b"\n":
            # the last line rewritten in place, as long: one byte of its end changed and put back
            i = pos - 2 - r.randrange(min(40, pos - 1))
            if data[i:i + 1] not in (b"\n", b"\r") and i >= 0:
                self._write(rel, bytes([data[i] ^ 1 if data[i] ^ 1 not in (10, 13) else 32]), i)
                self.broken = rel
                return self._did(f"{rel}: byte {i} of the last line changed in place")
        end = _cut(data, pos, r)
        self._write(rel, data[pos:end], pos)
        self.pos[rel] = end
        return self._did(f"{rel}: {pos}..{end}")

    def _did(self, what: str) -> str:
        self.log.append(what)
        return what

    def finish(self) -> None:
        """Every file as it ends (missing pieces written in one go), quiet past the grace."""
        for rel, data in self.final.items():
            p = self.path(rel)
            if not p.exists() or p.read_bytes() != data:
                self._write(rel, data, None)
                self.pos[rel] = len(data)
        self.broken = None
        self.clock.now += 3600  # the writer stopped: a partial last line is now truncated


# --- what is compared -----------------------------------------------------------------------------


def _nan(x):
    return None if isinstance(x, float) and math.isnan(x) else x


def _fields(obj) -> dict:
    return {f.name: _nan(getattr(obj, f.name)) for f in dataclasses.fields(obj)}


def snapshot(idx) -> dict:
    """Everything an index holds that a reader sees, as plain comparable data."""
    from viewer.index import summary_dump

    threads = {}
    for name, th in idx.threads.items():
        threads[name] = {
            "path": th.path, "format": th.format, "mode": th.mode, "label": th.label,
            "meta": th.meta, "offset": th.offset, "line": th.line, "pending": th.pending,
            "cut_tail": th.cut_tail, "eol": th.eol, "ids": list(th.ids),
            "offsets": list(th.offsets), "lengths": list(th.lengths), "lines": list(th.lines),
            "roles": list(th.roles), "kinds": list(th.kinds), "authors": list(th.authors),
            "content": bytes(th.content), "ts": [_nan(t) for t in th.ts],
            "hidden": bytes(th.hidden), "prompts": dict(th.prompts), "bad": dict(th.bad),
            "paths": list(th.paths), "last_boundary": th.last_boundary}
    calls = {cid: _fields(c) for cid, c in idx.calls.calls.items()}
    orphans = {cid: _fields(c) for cid, c in idx.calls.orphans.items()}
    summary = summary_dump(idx.summary)
    summary.pop("finished", None)
    # (models are listed in the order they are first met: a sub-agent written early comes first)
    summary["models"] = sorted(summary["models"])
    # (usage buckets are listed in the order their threads were found: a sub-agent file written
    # early comes first while live, in the folder's order when read afresh)
    summary["usage"] = dict(summary["usage"] or {}, buckets=sorted(
        map(str, (summary["usage"] or {}).get("buckets") or [])))
    return {"threads": threads, "calls": calls, "orphans": orphans, "permits": idx.calls.permits,
            "summary": summary, "info": idx.info}


def differences(a, b, path="", out=None, limit=12) -> list[str]:
    """Where two snapshots differ, as short readable lines."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(dict.fromkeys([*a, *b])):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'live' if k in a else 'fresh'}")
            else:
                differences(a[k], b[k], f"{path}/{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        out.append(f"{path}: live {str(a)[:300]!r} != fresh {str(b)[:300]!r}")
    return out


def rendered(app, idx, key: str) -> dict[str, list[str]]:
    """Every event of every thread as the page draws it."""
    from viewer.timeline import Timeline, load_events
    from viewer.web.templating import render_event

    out = {}
    with app.test_request_context("/"):
        tl = Timeline(idx)
        for name, th in idx.threads.items():
            views = tl.views(load_events(idx, name, 0, len(th)), 0, [])
            out[name] = [str(render_event(v, key)) for v in views]
    return out


class Consumer:
    """One stream kept open for a whole case, as a browser tab holds it: what it has is the page it
    drew, then what the stream sent; a `reset` reloads the page. A sub-agent thread that appears
    comes as its card, whose events load when it is opened: those before the card's cursor."""

    def __init__(self, viewer, key: str, idx):
        from viewer.web.feed import positions

        self.viewer, self.key = viewer, key
        self.sub = None
        self.has: dict[str, list[str]] = {}
        self.problems: list[str] = []
        self._open(idx, positions(idx))

    def _open(self, idx, cursor):
        if self.sub is not None:
            self.sub.close()
        self.has = {name: list(th.ids) for name, th in idx.threads.items()}
        self.seen = {eid for ids in self.has.values() for eid in ids}
        self.sub = self.viewer.feeds.subscribe(self.key, idx, dict(cursor), {
            "SERVER_NAME": "localhost", "SERVER_PORT": "80", "wsgi.url_scheme": "http"})

    def drain(self) -> None:
        sub = self.sub
        sub.feed.poke()
        for _ in range(1000):
            more = sub.work()
            got = False
            before = dict(sub.cursor)
            while (msg := sub.next_message()):
                got = True
                self._take(msg.decode("utf-8", "replace"), before)
                sub = self.sub
                before = dict(sub.cursor)
            if not more and not got:
                return
        self.problems.append("the stream never ran dry")

    def _take(self, msg: str, before: dict) -> None:
        from viewer.web.feed import first_seq, parse_cursor

        idx = self.sub.feed.idx
        if msg.startswith("event: reset"):
            self._open(idx, self.sub.cursor)
            return
        if msg.startswith("event: removed"):
            return
        m = re.search(r"^id: (.*)$", msg, re.M)
        after = parse_cursor(m.group(1)) if m else {}
        for name in after or {}:
            if name not in before and name in idx.threads and name not in ("@", "!"):
                th = idx.threads[name]  # a card: its events so far load when it is opened
                if 'id="unlinked-threads"' not in msg and '-thread"' not in msg:
                    self.problems.append(f"thread {name} appeared and the page was sent nothing")
                shown = [e for e in th.ids[:first_seq(th, after[name])] if e not in self.seen]
                # (the events sent with the card in this very message come after it)
                sent = set(_EVENT_IDS.findall(msg))
                shown = [e for e in shown if e not in sent]
                self.has.setdefault(name, []).extend(shown)
                self.seen.update(shown)
        for eid in _EVENT_IDS.findall(msg):
            where = idx.ids.get(eid)
            if eid in self.seen:
                self.problems.append(f"the stream sent {eid} twice")
            self.seen.add(eid)
            self.has.setdefault(where[0] if where else "?", []).append(eid)

    def close(self):
        if self.sub is not None:
            self.sub.close()


_EVENT_IDS = re.compile(r'<li class="ev[^"]*" id="m-([^"]+)" data-seq="\d+"')


def stream_problems(consumer: Consumer, idx) -> list[str]:
    """The consumer's events against the final index: per thread, the same ids in the same order."""
    out = list(consumer.problems)
    for name in dict.fromkeys([*idx.threads, *consumer.has]):
        got = consumer.has.get(name, [])
        want = list(idx.threads[name].ids) if name in idx.threads else []
        if got != want:
            missing = [e for e in want if e not in set(got)]
            extra = [e for e in got if e not in set(want)]
            out.append(f"stream of {name}: {len(got)} events, want {len(want)}; missing "
                       f"{missing[:5]}, not in the file {extra[:5]}"
                       + ("" if missing or extra else ", out of order"))
    return out


def fts_rows(fts, path: str) -> list:
    """The full-text rows of one session: (event id, text)."""
    from viewer import fts as ftsmod

    fts.wait(30)
    db = fts._reader()
    try:
        sid = db.execute(fts._sql("SELECT sid FROM {sessions} WHERE path = ?"), (path,)).fetchone()
        if sid is None:
            return []
        lo = sid[0] << ftsmod.SHIFT
        rows = db.execute(fts._sql("SELECT eid, z FROM {text} WHERE id >= ? AND id < ? ORDER BY id"),
                          (lo, lo + (1 << ftsmod.SHIFT))).fetchall()
    finally:
        fts._give_back(db)
    # (in no particular order: the rows of a live session's threads interleave as they were
    # written, and a search ranks and shows each event alone)
    return sorted((eid, ftsmod._unz(z)) for eid, z in rows)


# --- a case ---------------------------------------------------------------------------------------


@dataclass
class LiveCase:
    seed: Seed
    index: int
    log: list
    checked: bool = False  # compared with a fresh read (a first piece that is no transcript yet
    # gives no session to tail)

    def describe(self) -> str:
        return f"{self.seed.name} live case {self.index}: " + "; ".join(self.log)[-2500:]


def run_case(seed: Seed, index: int, work: Path, r: random.Random, fts: bool = False) -> tuple[
        LiveCase, list[str]]:
    """One case: the seed written piece by piece under `work`, checked against a fresh read."""
    from viewer.index import SessionIndex
    from viewer.web import create_app

    shutil.rmtree(work, ignore_errors=True)
    final = final_files(seed, r)
    main = str(Path(seed.base.name) / seed.main.relative_to(seed.base))
    clock = Clock()
    live_root = work / "live"
    writer = Writer(live_root, final, main, r, clock)
    case = LiveCase(seed, index, writer.log)
    problems: list[str] = []
    errors = Errors()
    logging.getLogger().addHandler(errors)
    apps = []
    consumer = None
    marks: dict = {}  # (thread, offset, length) → (id, sha of the file up to the line's end)
    try:
        with case_clock(clock):
            while writer.pos[main] == 0 and not writer.done():
                writer.step()
            app = create_app({"ROOTS": [str(live_root)], "CACHE_DIR": str(work / "cache"),
                              "NO_CACHE": not fts, "WATCH": False, "INDEX_ALL": False})
            apps.append(app)
            viewer = app.extensions["viewer"]
            store = viewer.store
            c = app.test_client()
            idx = None
            while idx is None:  # written on until the first piece reads as a session
                store.invalidate()
                key = next((ref.key for ref in store.sessions()
                            if Path(ref.path) == live_root / main), None)
                try:
                    idx = store.index(key) if key is not None else None
                except Exception as e:  # a head that does not read as a transcript yet
                    if type(e).__name__ not in ("NotTranscript", "Skipped", "NotFound"):
                        raise
                if idx is None:
                    if writer.done():
                        return case, []
                    writer.step()
            consumer = Consumer(viewer, key, idx)
            for _ in range(400):
                if writer.done():
                    break
                writer.step()
                if r.random() < 0.1:  # the writer paused mid-line past the grace
                    clock.now += 40
                    writer.log.append("(pause)")
                consumer.drain()
                idx = store._memory.get(key) or idx
                _mark(idx, marks)
                if r.random() < 0.15:
                    _pages(c, key, idx, r, problems)
                if r.random() < 0.05:  # through the cache and back, as after a restart
                    with store._session_lock(key):
                        store._memory[key] = SessionIndex.load(idx.dump())
                    writer.log.append("(cache)")
            writer.finish()
            case.checked = True
            consumer.drain()
            live = store.refresh(key)[0]
            # what a reader of the final files is shown
            fresh = SessionIndex(live.main).build()
            a, b = snapshot(live), snapshot(fresh)
            problems += [f"index {d}" for d in differences(a, b)]
            if not problems:
                ra, rb = rendered(app, live, key), rendered(app, fresh, key)
                for name in rb:
                    for i, (x, y) in enumerate(zip(ra.get(name, []), rb[name])):
                        if x != y:
                            problems.append(f"event {name}[{i}] renders differently:\n{x[:600]}\n"
                                            f"{y[:600]}")
                            break
                problems += _stable_ids(marks, live)
                problems += stream_problems(consumer, live)
            if fts and viewer.fts is not None:
                problems += _fts_problems(app, key, work, live_root)
    except Exception:
        problems.append(traceback.format_exc())
    finally:
        if consumer is not None:
            consumer.close()
        logging.getLogger().removeHandler(errors)
        for app in apps:
            v = app.extensions["viewer"]
            v.store.indexer.stop()
            if v.fts is not None:
                v.fts.close()
    problems += [f"logged: {e.getMessage()}\n" + (
        "".join(traceback.format_exception(*e.exc_info)) if e.exc_info else "")
        for e in errors.records]
    return case, problems


def _mark(idx, marks: dict) -> None:
    """Remember the ids of complete lines (not a truncated last line) with the bytes before them."""
    for name, th in idx.threads.items():
        if th.mode != "jsonl":
            continue
        try:
            data = Path(th.path).read_bytes()
        except OSError:
            continue
        n = len(th) - (1 if th.cut_tail else 0)
        for seq in range(n):
            off, length = th.offsets[seq], th.lengths[seq]
            end = off + length
            if data[end:end + 1] not in (b"\n", b"\r"):
                continue  # a whole last line not yet ended: it may still grow
            marks[(name, off, length)] = (th.ids[seq], hashlib.sha1(data[:end + 1]).digest())


def _stable_ids(marks: dict, idx) -> list[str]:
    out = []
    data = {name: Path(th.path).read_bytes() for name, th in idx.threads.items()
            if th.mode == "jsonl"}
    where = {(name, th.offsets[s]): th.ids[s] for name, th in idx.threads.items()
             if th.mode == "jsonl" for s in range(len(th))}
    for (name, off, length), (eid, sha) in marks.items():
        d = data.get(name)
        if d is None or hashlib.sha1(d[:off + length + 1]).digest() != sha:
            continue  # the file no longer holds the same bytes up to this line
        now = where.get((name, off))
        if now != eid:
            out.append(f"the line at {name}:{off} was {eid} while live, is {now} now")
            if len(out) > 5:
                break
    return out


def _pages(c, key: str, idx, r: random.Random, problems: list[str]) -> None:
    """Pages a reader opens while the session grows: they must answer, never fail."""
    th = idx.threads.get("main")
    urls = [f"/s/{key}", f"/s/{key}.json"]
    if th is not None and len(th):
        urls.append(f"/s/{key}/w/main?after={r.randrange(len(th))}")
        urls.append(f"/s/{key}/m/{th.ids[r.randrange(len(th))]}")
    for name in list(idx.threads)[1:3]:
        urls.append(f"/s/{key}/t/{name}")
    for url in urls:
        resp = c.get(url)
        resp.get_data()
        if resp.status_code >= 500:
            problems.append(f"{resp.status_code} on {url}")


def _fts_problems(app, key: str, work: Path, live_root: Path) -> list[str]:
    """The full-text rows fed while the session grew against those of one build of the files."""
    from viewer.web import create_app

    fresh_root = work / "fresh"
    shutil.copytree(live_root, fresh_root)
    other = create_app({"ROOTS": [str(fresh_root)], "CACHE_DIR": str(work / "cache2"),
                        "WATCH": False, "INDEX_ALL": False})
    try:
        fresh = other.extensions["viewer"].store.index(key)
        a = fts_rows(app.extensions["viewer"].fts, app.extensions["viewer"].store.index(key).main)
        b = fts_rows(other.extensions["viewer"].fts, fresh.main)
    finally:
        other.extensions["viewer"].store.indexer.stop()
        other.extensions["viewer"].fts.close()
    if a != b:
        return [f"full-text rows differ: live {len(a)} rows, fresh {len(b)}; first difference: "
                + next((f"{x!r} != {y!r}" for x, y in zip(a, b) if x != y), "(lengths)")[:600]]
    return []


def main(argv=None) -> int:
    import argparse
    import tempfile

    from fuzzer import signature

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=3, help="cases per seed per round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=0, help="go on with the next rounds until then")
    ap.add_argument("--only", default="", help="seeds whose path holds this")
    ap.add_argument("--fts", action="store_true", help="compare the full-text rows too (slower)")
    ap.add_argument("--work", default=None)
    args = ap.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="livefuzz-"))
    # (not a database's sessions: their live path is rows written, which this writer does not model)
    all_seeds = [s for s in seeds(work / "fixtures") if chosen(s, args.only) and not s.row]
    started = time.monotonic()
    total = found = checked = 0
    seen: set = set()
    rng_seed = args.seed
    while True:
        for seed in all_seeds:
            r = random.Random(f"live:{rng_seed}:{seed.name}")
            for i in range(args.cases):
                case, problems = run_case(seed, i, work / "w", r, fts=args.fts)
                total += 1
                checked += case.checked
                found += bool(problems)
                for p in problems[:3]:
                    sig = signature(p) if "Traceback" in p else re.sub(r"\d+", "#", p[:60])
                    if sig not in seen:
                        seen.add(sig)
                        print(f"\n=== [{len(seen)}] round {rng_seed} {case.describe()}\n{p}",
                              flush=True)
        print(f"round {rng_seed}: {total} cases so far ({checked} checked), {found} problems, "
              f"{len(seen)} distinct, {time.monotonic() - started:.0f} s", flush=True)
        rng_seed += 1
        if not args.minutes or time.monotonic() - started > args.minutes * 60:
            break
    shutil.rmtree(work / "w", ignore_errors=True)
    print(f"{total} cases ({checked} checked) in {time.monotonic() - started:.0f} s; "
          f"{found} problems, {len(seen)} distinct")
    return 1 if found else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
