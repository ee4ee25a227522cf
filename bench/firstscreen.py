"""Any size at once (issue 13), a section of `make bench`; alone: `python -m bench --only firstscreen`.

On Claude Code and legion sessions of 1, 10, 100 and 1,000 MB (the 1 GB ones are generated once into
the bench's data folder, never committed; `--quick` leaves them out):

* cold first screen: a new server process with an empty cache, until `/s/<key>` has fully
  responded — the curve over the sizes must be flat (the page is drawn from the part of the file it
  shows, the index is built in the background);
* cold permalink to the middle event (100 MB and 1 GB): `/s/<key>/m/<id>`, new process, empty cache;
* the index pass itself (`SessionIndex.build()` in this process, no full-text sink) beside plain
  orjson-per-line decoding of the same file, medians of interleaved runs (the ratio matters: the
  machine is shared);
* the background index in the server: from that first request until `/sessions.json` (which
  waits for the rows it lists) has this session's row, as seconds and MB/s — this pass also feeds
  the full-text index, so it builds every event;
* the server's peak RSS (VmHWM) after indexing the 1 GB session in the background while it served
  the first screen, the list, windows and a permalink;
* warm start: a new process with the cache of that run, its first list + session request beside
  its tenth (compiling templates and opening the cache belong to start-up, not to a user's request);
* the cold list of the 2,000-session root (first page, from what the file system says).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import orjson

SIZES = {"1mb": 1 << 20, "10mb": 10 << 20, "100mb": 100 << 20, "1000mb": 1000 << 20}
BIG = ("100mb", "1000mb")  # sizes that also get the permalink, background and warm figures
FORMATS = ("claude-code", "legion")
TARGETS = {"cold_100": 0.15, "cold_1000": 0.3, "perma_1000": 0.3, "warm": 0.05, "list": 0.2,
           "rss": 250.0, "ratio": 0.75}


def orjson_per_line(main: Path) -> float:
    """Seconds to decode every line of a file with orjson, one line at a time (the floor)."""
    t = time.perf_counter()
    with open(main, "rb") as f:
        for line in f:
            if line.strip():
                orjson.loads(line)
    return time.perf_counter() - t


MEASURED_BYTES = 500 << 20  # a small file is read this much in all (at most 100 runs a side)


def index_pass(main: Path, runs: int) -> tuple[float, float]:
    """(median seconds of orjson per line, of the index pass), interleaved in this process, after
    one untimed pass of each (the page cache, the adapters' imports). A small file gets more runs:
    three runs of 10 ms each are a coin toss on a shared machine (a 10 MB row once read 80 % where
    every other size read 54 %: its orjson runs were slow, not the index fast)."""
    from viewer.index import SessionIndex

    orjson_per_line(main)
    SessionIndex(main).build()
    runs = max(runs, min(100, MEASURED_BYTES // max(1, main.stat().st_size)))
    plain, ours = [], []
    for _ in range(runs):
        plain.append(orjson_per_line(main))
        t = time.perf_counter()
        SessionIndex(main).build()
        ours.append(time.perf_counter() - t)
    return sorted(plain)[len(plain) // 2], sorted(ours)[len(ours) // 2]


def run(out: Path, runs: int, tmp: Path, quick: bool = False) -> dict:
    from .__main__ import bench_list, cold_gets, median, middle_id, prepare

    sizes = {k: v for k, v in SIZES.items() if not (quick and k == "1000mb")}
    print("  preparing the sessions (the 1 GB ones once: a few minutes) …", flush=True)
    data = prepare(out, sizes, 2000)
    rows = []
    for label in sizes:
        for fmt in FORMATS:
            name = f"{fmt}-{label}"
            root, key, main = data[name]
            mb = main.stat().st_size / 2**20
            print(f"  {name}: cold first screens …", flush=True)
            cold = cold_gets(root, f"/s/{key}", tmp / f"fs-{name}", runs)
            row = {"name": name, "mb": mb, "cold": median(cold)}
            if label in BIG:
                row.update(_big(root, key, main, runs, tmp, name))
            rows.append(row)
    print("  session list …", flush=True)
    listing = bench_list(data, runs, tmp)
    return {"rows": rows, "list": listing}


def _big(root, key, main, runs, tmp, name) -> dict:
    from .__main__ import Server, cold_gets, median, middle_id, wait_indexed

    mb = main.stat().st_size / 2**20
    print(f"  {name}: the index pass …", flush=True)
    floor_s, pass_s = index_pass(main, runs)
    mid = middle_id(main)
    print(f"  {name}: cold permalinks …", flush=True)
    perma = cold_gets(root, f"/s/{key}/m/{mid}", tmp / f"fs-perma-{name}", runs,
                      f'id="m-{mid}"'.encode())
    print(f"  {name}: background index, RSS, warm start …", flush=True)
    passes, first, tenth, rss = [], [], [], []
    for i in range(1 if mb > 500 else max(1, min(runs, 3))):  # (a 1 GB pass: once)
        cache = tmp / f"fs-bg-{name}-{i}"
        with Server(root, cache) as s:
            t = time.perf_counter()
            s.get(f"/s/{key}")
            s.get("/")  # pages served while the index is built
            s.get(f"/s/{key}/m/{mid}")
            wait_indexed(s)
            passes.append(time.perf_counter() - t)
            s.get(f"/s/{key}")
            for before in (15000, 5000, 100):
                s.get(f"/s/{key}/w/main?before={before}")
            rss.append(s.peak_rss_mb())
        with Server(root, cache) as s:  # warm: a new process, the cache of the run before
            pairs = []
            for _ in range(10):
                a, _, _ = s.get("/")
                b, status, _ = s.get(f"/s/{key}")
                assert status == 200
                pairs.append(a + b)
            first.append(pairs[0])
            tenth.append(pairs[-1])
        shutil.rmtree(cache, ignore_errors=True)
    index_s = median(passes)
    return {"permalink": median(perma), "index_s": index_s, "index_mbs": mb / index_s,
            "pass_s": pass_s, "pass_mbs": mb / pass_s,
            "orjson_s": floor_s, "orjson_mbs": mb / floor_s, "ratio": floor_s / pass_s,
            "rss": max(rss), "warm_first": median(first), "warm_tenth": median(tenth)}


def report(r: dict, ms, verdict) -> list[str]:
    rows = {x["name"]: x for x in r["rows"]}
    out = ["## Any size at once (issue 13)", "",
           "`python -m bench --only firstscreen`. Cold = a new server process with an empty cache, "
           "until the page has fully responded. Index pass = `SessionIndex.build()` in the bench's "
           "process beside orjson-per-line decoding of the same file (interleaved runs). Background "
           "index = in the server, from that first request until `/sessions.json` (which waits for "
           "the rows it lists) has the session's row; that pass also feeds the full-text index (every "
           "event built). Warm = a new process with the cache of that run: its first list + "
           "session request beside its tenth. RSS = the server's peak (VmHWM) after the background "
           "index, with the first screen, the list, a permalink and windows served.", ""]
    out += ["| target | limit | measured | |", "|---|---|---|---|"]
    for fmt in FORMATS:
        for label, key, limit in (("100mb", "cold", TARGETS["cold_100"]),
                                  ("1000mb", "cold", TARGETS["cold_1000"]),
                                  ("1000mb", "permalink", TARGETS["perma_1000"]),
                                  ("100mb", "warm_first", TARGETS["warm"]),
                                  ("1000mb", "warm_first", TARGETS["warm"])):
            x = rows.get(f"{fmt}-{label}")
            if x and key in x:
                what = {"cold": "cold first screen", "permalink": "cold permalink to the middle",
                        "warm_first": "warm first list + session"}[key]
                out.append(f"| {what}, {fmt} {label[:-2]} MB | ≤ {ms(limit)} | {ms(x[key])} | "
                           f"{verdict(x[key], limit)} |")
        x = rows.get(f"{fmt}-1000mb") or rows.get(f"{fmt}-100mb")
        if x and "rss" in x:
            out.append(f"| peak RSS, {fmt} {x['mb']:.0f} MB indexed in the background | "
                       f"≤ {TARGETS['rss']:.0f} MB | {x['rss']:.0f} MB | {verdict(x['rss'], TARGETS['rss'])} |")
        for label in BIG:
            x = rows.get(f"{fmt}-{label}")
            if x and "ratio" in x:
                out.append(f"| index pass vs orjson per line, {fmt} {label[:-2]} MB | ≥ 75 % | "
                           f"{x['ratio']:.0%} | {verdict(x['ratio'], TARGETS['ratio'], False)} |")
    L = r["list"]
    out.append(f"| cold list, {L['sessions']} sessions, first page | ≤ {ms(TARGETS['list'])} | "
               f"{ms(L['cold_first_page'])} | {verdict(L['cold_first_page'], TARGETS['list'])} |")
    out += ["", "| session | size | cold first screen | cold permalink (middle) | index pass |"
            " orjson per line | pass / orjson | background index (server) | warm first (list + session)"
            " | warm tenth | peak RSS |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in r["rows"]:
        big = "index_s" in x
        out.append(
            f"| {x['name']} | {x['mb']:.0f} MB | {ms(x['cold'])} | "
            + (f"{ms(x['permalink'])} | {ms(x['pass_s'])} ({x['pass_mbs']:.0f} MB/s) | "
               f"{ms(x['orjson_s'])} ({x['orjson_mbs']:.0f} MB/s) | {x['ratio']:.0%} | "
               f"{ms(x['index_s'])} ({x['index_mbs']:.0f} MB/s) | "
               f"{ms(x['warm_first'])} | {ms(x['warm_tenth'])} | {x['rss']:.0f} MB |"
               if big else "– | – | – | – | – | – | – | – |"))
    for fmt in FORMATS:
        colds = [x["cold"] for x in r["rows"] if x["name"].startswith(fmt + "-")]
        if len(colds) > 1:
            out.append("")
            out.append(f"Curve of the cold first screen, {fmt}: "
                       + " → ".join(ms(c) for c in colds)
                       + f" (largest / smallest ×{max(colds) / min(colds):.1f} over a "
                       f"×{_span(r['rows'], fmt):.0f} range of sizes).")
    out += ["", f"Cold list of {L['sessions']} sessions: first page {ms(L['cold_first_page'])}, all 20 pages "
            f"{ms(L['cold_all_pages'])}, warm first page {ms(L['warm_first_page'])}.", ""]
    return out


def _span(rows: list, fmt: str) -> float:
    sizes = [x["mb"] for x in rows if x["name"].startswith(fmt + "-")]
    return max(sizes) / min(sizes)
