"""Archive benchmarks (issue 11), a section of `make bench`; alone: `python -m bench --only archive`.

On the bench's root of 2,000 small Claude Code sessions (`generate.many`) and a copy of it at
10,000 sessions (hard links, five times over):

* the full-text index's build throughput next to the index pass on the same files, in one process:
  the index pass alone; the index pass feeding the full-text index (its sink, then the writer
  thread); the full-text index catching up from the files through warm indexes (a restart);
* a server started on the root with an empty cache until its search index is complete: the time
  it took and the server's peak memory (VmHWM) meanwhile;
* a new server on the same cache (warm): search queries from `/search.json` (a word in every event,
  a rarer one, a phrase, a prefix, two words) and the list's first page sorted by cost (`/` and
  `/sessions.json`), medians of --runs.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import time
from pathlib import Path
from urllib.parse import quote

QUERIES = {"a word in every event": "window", "a rarer word": "mod17", "a phrase": '"import orjson"',
           "a prefix": "perma*", "two words": "cache offset"}
COPIES = 5  # the 10,000-session root holds the 2,000 five times over


def ten_thousand(root: Path, out: Path) -> Path:
    """The 2,000-session root five times over, hard-linked (a copy where links are refused)."""
    dst = out / f"{root.name}-x{COPIES}"
    marker = dst / ".complete"
    if marker.exists() and marker.read_text() == (root / ".complete").read_text():
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    for i in range(COPIES):
        for src in root.rglob("*"):
            rel = src.relative_to(root)
            if rel.name == ".complete":
                continue
            target = dst / f"copy-{i}" / rel
            if src.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, target)
            except OSError:
                shutil.copy2(src, target)
    marker.write_text((root / ".complete").read_text())
    return dst


def _bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.jsonl"))


def passes(root: Path, tmp: Path) -> dict:
    """Seconds for the index pass alone, the pass feeding the full-text index, and the full-text
    index catching up from the files (one run each: minutes on 2,000 sessions)."""
    from viewer.cache import IndexCache
    from viewer.fts import FullText
    from viewer.index import SessionIndex
    from viewer.store import Store

    st = Store([root])
    refs = st.sessions()
    t = time.perf_counter()
    for ref in refs:
        SessionIndex(ref.path).build()
    alone = time.perf_counter() - t

    cache = tmp / "cache-passes"
    shutil.rmtree(cache, ignore_errors=True)
    st = Store([root], IndexCache(cache))
    fts = FullText(st, st.cache.path)
    st.indexer.listen(fts)
    t = time.perf_counter()
    for ref in refs:
        st.index(ref.key)
    fts.wait(3600)
    fed = time.perf_counter() - t
    st.flush()
    fts.close()

    db = sqlite3.connect(st.cache.path)  # the full-text tables go, the index cache stays
    for name in ("fts", "fts_text", "fts_sessions", "fts_meta"):
        db.execute(f"DROP TABLE IF EXISTS {name}")
    db.execute("DROP VIEW IF EXISTS fts_content")
    db.commit()
    db.close()
    st = Store([root], IndexCache(cache))
    fts = FullText(st, st.cache.path)
    t = time.perf_counter()
    for ref in refs:
        fts.catch_up(ref.key)
    caught = time.perf_counter() - t
    size = os.path.getsize(st.cache.path)
    fts.close()
    shutil.rmtree(cache, ignore_errors=True)
    mb = _bytes(root) / 2**20
    return {"sessions": len(refs), "mb": mb, "index_s": alone, "index_fts_s": fed,
            "catch_up_s": caught, "index_mbs": mb / alone, "index_fts_mbs": mb / fed,
            "catch_up_mbs": mb / caught, "db_mb": size / 2**20}


def _search(server, q: str) -> tuple[float, dict]:
    dt, status, body = server.get("/search.json?q=" + quote(q))
    assert status == 200, body[:300]
    return dt, json.loads(body)


def cold_build(root: Path, cache: Path, Server) -> dict:
    """A server on an empty cache until its search index is complete: time and peak memory."""
    shutil.rmtree(cache, ignore_errors=True)
    with Server(root, cache) as s:
        t = time.perf_counter()
        deadline = t + 3600
        while time.perf_counter() < deadline:
            _, body = _search(s, "window")
            if body.get("complete"):
                break
            time.sleep(0.5)
        took = time.perf_counter() - t
        peak = s.peak_rss_mb()
        complete = bool(body.get("complete"))
    return {"seconds": took, "peak_rss_mb": peak, "complete": complete}


def warm(root: Path, cache: Path, runs: int, Server) -> dict:
    """A new server on a complete cache: search queries and the list sorted by cost."""
    out: dict = {"search": {}}
    with Server(root, cache) as s:
        first, status, _ = s.get("/?sort=cost")
        assert status == 200
        for label, q in QUERIES.items():
            times, body = [], {}
            for _ in range(runs):
                dt, body = _search(s, q)
                times.append(dt)
            out["search"][label] = {"q": q, "ms": statistics.median(times) * 1000,
                                    "sessions": body.get("total"), "events": body.get("events")}
        page, js = [], []
        for _ in range(runs):
            dt, status, body = s.get("/?sort=cost")
            assert status == 200 and body.count(b'<tr id="row-') == 100, body[:300]
            page.append(dt)
            js.append(s.get("/sessions.json?sort=cost")[0])
        out["list_first_ms"] = first * 1000
        out["list_ms"] = statistics.median(page) * 1000
        out["list_json_ms"] = statistics.median(js) * 1000
        out["peak_rss_mb"] = s.peak_rss_mb()
    return out


def run(data: dict, runs: int, tmp: Path, out: Path, Server, sizes=(2000, 10000)) -> dict:
    root = data["many"][0]
    n = int(root.name.split("-")[1])  # many-<sessions>
    roots = {n: root}
    if n * COPIES in sizes:
        roots[n * COPIES] = ten_thousand(root, out)
    results: dict = {"passes": passes(root, tmp), "roots": {}}
    for n, r in roots.items():
        if n not in sizes:
            continue
        print(f"  archive: {n} sessions, cold build …", flush=True)
        cache = tmp / f"cache-archive-{n}"
        built = cold_build(r, cache, Server)
        print(f"  archive: {n} sessions, warm …", flush=True)
        results["roots"][n] = {"build": built, "warm": warm(r, cache, runs, Server),
                               "mb": _bytes(r) / 2**20}
        shutil.rmtree(cache, ignore_errors=True)
    return results


def report(r: dict, ms, verdict) -> list[str]:
    p = r["passes"]
    lines = ["## Across sessions: full-text search, the list by cost (issue 11)", "",
             f"On the root of {p['sessions']:,} generated Claude Code sessions ({p['mb']:.0f} MB of "
             f"transcripts, each with a sub-agent) and the same {COPIES} times over (hard links). "
             "`python -m bench --only archive`.", "",
             f"| pass over the {p['sessions']:,} sessions | time | throughput |", "|---|---|---|",
             f"| index pass alone | {ms(p['index_s'])} | {p['index_mbs']:.1f} MB/s |",
             f"| index pass feeding the full-text index (sink + writer) | {ms(p['index_fts_s'])} | "
             f"{p['index_fts_mbs']:.1f} MB/s |",
             f"| full-text index caught up from the files (warm index cache: a restart) | "
             f"{ms(p['catch_up_s'])} | {p['catch_up_mbs']:.1f} MB/s |", "",
             f"Cache database with the full-text index: {p['db_mb']:.0f} MB for {p['mb']:.0f} MB of "
             "transcripts (texts stored compressed; base64 is never indexed).", ""]
    for n, x in r["roots"].items():
        n = int(n)  # a string once saved as JSON
        b, w = x["build"], x["warm"]
        lines += [f"### {n:,} sessions ({x['mb']:.0f} MB)", "", "| what | target | measured | |",
                  "|---|---|---|---|",
                  f"| server on an empty cache until search is complete | — | {ms(b['seconds'])}"
                  f"{'' if b['complete'] else ' (not complete)'} | |",
                  f"| server peak memory meanwhile | ≤ 250 MB | {b['peak_rss_mb']:.0f} MB | "
                  f"{verdict(b['peak_rss_mb'], 250)} |"]
        worst = max(s["ms"] for s in w["search"].values())
        for label, s in w["search"].items():
            lines.append(f"| search, warm: {label} (`{s['q']}`, {s['sessions']:,} sessions, "
                         f"{s['events']:,} events) | ≤ 100 ms | {s['ms']:.0f} ms | "
                         f"{verdict(s['ms'], 100)} |")
        lines += [f"| list sorted by cost, first page, warm | ≤ 200 ms | {w['list_ms']:.0f} ms "
                  f"(`.json` {w['list_json_ms']:.0f} ms; the new process's first {w['list_first_ms']:.0f}"
                  f" ms) | {verdict(w['list_ms'], 200)} |", "",
                  f"Slowest warm query: {worst:.0f} ms.", ""]
    return lines


def main(argv=None) -> int:
    import argparse
    import tempfile

    from . import __main__ as bench

    ap = argparse.ArgumentParser(prog="python -m bench.archive")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="2000,10000")
    ap.add_argument("--out", type=Path, default=bench.ROOT / "bench" / "out")
    args = ap.parse_args(argv)
    data = bench.prepare(args.out, {}, 2000)
    with tempfile.TemporaryDirectory(prefix="sv-bench-archive-") as t:
        r = run(data, args.runs, Path(t), args.out, bench.Server,
                tuple(int(x) for x in args.sizes.split(",")))
    print("\n".join(report(r, bench.ms, bench.verdict)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
