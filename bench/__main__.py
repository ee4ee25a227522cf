"""`make bench`: speed and memory of session-viewer on big sessions, side by side with its peers.

Writes BENCHMARKS.md. Every figure is a median of several runs made in one section's run (the
machines here are shared and noisy: compare ratios measured together, not figures across runs).

    python -m bench [--runs N] [--quick] [--skip-peers] [--skip-live] [--only SECTION]… [--out bench/out]

Sections: index, screens, rss, list, search, hardening, archive, firstscreen, peers, export, live (in
the order a whole run measures them). Each section's figures are saved the moment it ends, passed or
failed, in <out>/sections/<name>.json, and BENCHMARKS.md is drawn from those files (bench/sections.py):
a failing section is reported as failed, with its error and the command that runs it alone, and
the others are drawn; `--only SECTION` runs the named ones again and keeps the others' last figures,
each said to be from its commit and time. `--quick` keeps its figures apart (<out>/sections-quick,
reported to <out>/BENCHMARKS-quick.md).

Measured:
  * index throughput next to plain orjson-per-line decoding of the same file (the ratio matters);
  * cold first screen (new server process, empty cache: until /s/<key> has fully responded), warm
    first screen (new server process, cache present), permalink to the middle event (cold);
  * peak RSS of the server while it serves the 100 MB session;
  * the session list of a 2,000-session root, cold and warm;
  * claude-code-log and claude-code-transcripts (installed into a throwaway venv) rendering the same
    Claude Code files, against our first screen and our fully indexed session;
  * live tail (bench/live.py): append → visible in real Chromium on a small and a 100 MB session,
    with 50 streams open, and on a ~40 MB claude-trace API call log; bursts of 1,000 and 10,000 lines until they are in a following page's DOM;
    100 streams + 200 concurrent page requests + 10 appends a second on the built-in server and
    under gunicorn, with threads and RSS (`--servers`, `--live-parts` pick among them);
  * search and filters in a 100 MB session (bench/search.py): full scan cold / warm beside grep,
    first hit streamed and on screen, filtered first screens;
  * across sessions (bench/archive.py): full-text index build throughput beside the index pass,
    memory while it builds, warm search queries and the list sorted by cost, on 2,000 and 10,000
    sessions;
  * export of the 100 MB session to HTML (and Markdown, JSON, redacted HTML) beside claude-code-log
    and claude-code-transcripts making their HTML from the same file (bench/export.py);
  * any size at once (bench/firstscreen.py): the cold first screen over 1 / 10 / 100 / 1,000 MB, cold
    permalinks, the background index beside orjson-per-line, peak RSS while a 1 GB session is
    indexed and pages are served, a warm process's first request beside its tenth, the cold list.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from . import generate
from . import export as export_bench
from . import hardening as hardening_bench
from . import archive as archive_bench
from . import search as search_bench
from . import sections as saved

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"1mb": 1 << 20, "10mb": 10 << 20, "100mb": 100 << 20}
CHROMIUM = "/usr/bin/chromium"
OUT = ROOT / "bench" / "out"
SERVERS = "serve,gunicorn"  # the live section's defaults (said in a re-run's command when not these)
LIVE_PARTS = "latency,bursts,load"


# --- data ----------------------------------------------------------------------------------------


def prepare(out: Path, sizes: dict, many: int) -> dict:
    """Generate (once) the benchmark sessions; returns {name: (root, key, main file)}."""
    data = {}
    for label, size in sizes.items():
        root = out / f"claude-code-{label}"
        main = root / "session.jsonl"
        made = root / f".generated-v{generate.VERSION}"
        if not made.exists():
            shutil.rmtree(root, ignore_errors=True)
            generate.claude_code(root, size, seed=1, name="session")
            made.write_text("ok")
        data[f"claude-code-{label}"] = (root, "session", main)
        root = out / f"legion-{label}"
        main = root / "session" / "messages.jsonl"
        if not main.exists():
            shutil.rmtree(root, ignore_errors=True)
            generate.legion(root / "session", size, seed=2)
        data[f"legion-{label}"] = (root, "session", main)
    if not many:
        return data
    root = out / f"many-{many}"
    marker = root / ".complete"
    if not marker.exists() or marker.read_text() != f"v{generate.VERSION}":
        shutil.rmtree(root, ignore_errors=True)
        generate.many(root, many)
        marker.write_text(f"v{generate.VERSION}")
    data["many"] = (root, None, None)
    return data


# --- a server process ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`session-viewer serve` in its own process, as a user runs it."""

    def __init__(self, root: Path, cache: Path, watch: bool = False):
        self.port = free_port()
        cmd = [sys.executable, "-m", "viewer", "serve", str(root), "--port", str(self.port),
               "--cache-dir", str(cache)]
        if not watch:
            cmd.append("--no-watch")
        # the server's log goes to a file: a pipe nobody reads fills up under load and blocks
        # every request thread on its next log line
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.get("/static/favicon.svg")
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not start: " + self.tail())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> tuple[float, int, bytes]:
        """(seconds until the whole response was read, status, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        t = time.perf_counter()
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        dt = time.perf_counter() - t
        conn.close()
        return dt, resp.status, body

    def peak_rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def tail(self) -> str:
        """The end of the server's log."""
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wait_indexed(s: Server) -> None:
    """Until the server's background index of every session it lists is done: /sessions.json
    waits (30 s at most) for the rows it lists."""
    while True:
        _, status, body = s.get("/sessions.json?wait=30")
        assert status == 200, body[:300]
        if not any(r.get("pending") for r in orjson.loads(body)["sessions"]):
            return


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def ms(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


# --- measurements --------------------------------------------------------------------------------


def bench_index(data: dict, runs: int) -> list[dict]:
    from .firstscreen import index_pass

    rows = []
    for name, (root, key, main) in data.items():
        if main is None:
            continue
        size = main.stat().st_size
        p, o = index_pass(main, runs)
        rows.append({"name": name, "mb": size / 2**20, "orjson_s": p, "index_s": o,
                     "orjson_mbs": size / 2**20 / p, "index_mbs": size / 2**20 / o, "ratio": p / o})
    return rows


def middle_id(main: Path) -> str:
    from viewer.index import SessionIndex

    th = SessionIndex(main).build().threads["main"]
    return th.ids[len(th) // 2]


def cold_gets(root: Path, url: str, caches: str, runs: int, must: bytes = b"") -> list[float]:
    """The times of `url` (a 200 holding `must`), each from a new server on an empty cache
    (`caches`-0, -1…, removed after)."""
    times = []
    for i in range(runs):
        cache = Path(f"{caches}-{i}")
        with Server(root, cache) as s:
            dt, status, body = s.get(url)
            assert status == 200 and must in body, body[:300]
            times.append(dt)
        shutil.rmtree(cache, ignore_errors=True)
    return times


def bench_screens(data: dict, runs: int, tmp: Path) -> list[dict]:
    rows = []
    for name, (root, key, main) in data.items():
        if main is None:
            continue
        mid = middle_id(main)
        cold, warm = [], []
        for i in range(runs):
            cache = tmp / f"cache-{name}-{i}"
            with Server(root, cache) as s:
                dt, status, body = s.get(f"/s/{key}")
                assert status == 200, body[:500]
                cold.append(dt)
                wait_indexed(s)  # the cold page is drawn before the index, which is built after it
            with Server(root, cache) as s:
                dt, status, _ = s.get(f"/s/{key}")
                warm.append(dt)
            shutil.rmtree(cache, ignore_errors=True)
        perma = cold_gets(root, f"/s/{key}/m/{mid}", tmp / f"cache-perma-{name}", runs,
                          f'id="m-{mid}"'.encode())
        rows.append({"name": name, "mb": main.stat().st_size / 2**20, "cold": median(cold),
                     "warm": median(warm), "permalink": median(perma)})
    return rows


def bench_rss(data: dict, tmp: Path) -> dict:
    root, key, main = data["claude-code-100mb"]
    mid = middle_id(main)
    with Server(root, tmp / "cache-rss") as s:
        s.get(f"/s/{key}")
        s.get(f"/s/{key}/m/{mid}")
        s.get(f"/s/{key}.json")
        for before in (15000, 10000, 5000, 100):
            s.get(f"/s/{key}/w/main?before={before}")
        s.get("/")
        peak = s.peak_rss_mb()
    shutil.rmtree(tmp / "cache-rss", ignore_errors=True)
    return {"name": "claude-code-100mb", "peak_rss_mb": peak}


def bench_list(data: dict, runs: int, tmp: Path) -> dict:
    root = data["many"][0]
    cold, warm, all_pages = [], [], []
    for i in range(runs):
        cache = tmp / f"cache-list-{i}"
        with Server(root, cache) as s:
            dt, status, body = s.get("/")
            assert status == 200 and body.count(b"<tr id=") == 100, (status, body.count(b"<tr id="))
            cold.append(dt)
            t = time.perf_counter()
            for page in range(2, 21):
                s.get(f"/?page={page}")
            all_pages.append(dt + time.perf_counter() - t)
            wait_indexed(s)  # the rows pages did not index are indexed in the background
        with Server(root, cache) as s:
            dt, status, _ = s.get("/")
            warm.append(dt)
        shutil.rmtree(cache, ignore_errors=True)
    return {"sessions": sum(1 for _ in root.rglob("*.jsonl") if "subagents" not in _.parts),
            "cold_first_page": median(cold), "cold_all_pages": median(all_pages),
            "warm_first_page": median(warm)}


def peers_venv(out: Path) -> Path:
    venv = out / "peers-venv"
    py = venv / "bin" / "python"
    if not (venv / "bin" / "claude-code-log").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", "claude-code-log",
                        "claude-code-transcripts"], check=True)
    return venv


# A forked child starts with its parent's peak RSS (Linux copies the high-water mark at fork), so a
# child of this process, grown to hundreds of MB by earlier sections, would report at least that much.
# A small interpreter starts the command and reads its rusage: the floor is that interpreter's ~10 MB.
_MEASURE = ("import os, sys\n"
            "devnull = os.open(os.devnull, os.O_WRONLY)\n"
            "pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ,\n"
            "                      file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])\n"
            "_, status, u = os.wait4(pid, 0)\n"
            "print(os.waitstatus_to_exitcode(status), u.ru_maxrss, u.ru_utime + u.ru_stime)\n")


def run_measured(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """(seconds, peak RSS MB, CPU seconds) of one child process."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-I", "-S", "-c", _MEASURE, *cmd], cwd=cwd,
                         capture_output=True, text=True, check=True).stdout
    dt = time.perf_counter() - t
    status, maxrss, cpu = out.split()
    if status != "0":
        raise RuntimeError(f"{cmd[0]} failed with status {status}")
    return dt, int(maxrss) / 1024, float(cpu)


def bench_peers(data: dict, screens: list, index_rows: list, runs: int, out: Path, tmp: Path) -> list:
    venv = peers_venv(out)
    version = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                             capture_output=True, text=True, check=True).stdout
    versions = {p["name"]: p["version"] for p in json.loads(version)
                if p["name"] in ("claude-code-log", "claude-code-transcripts")}
    rows = []
    for label in SIZES:
        name = f"claude-code-{label}"
        if name not in data:
            continue
        root, key, main = data[name]
        ccl, cct = [], []
        for i in range(runs):
            work = tmp / f"peer-{label}-{i}"
            work.mkdir(parents=True, exist_ok=True)
            ccl.append(run_measured([str(venv / "bin" / "claude-code-log"), str(main), "-o",
                                     str(work / "ccl.html"), "--no-cache"], work))
            cct.append(run_measured([str(venv / "bin" / "claude-code-transcripts"), "json",
                                     str(main), "-o", str(work / "cct")], work))
            shutil.rmtree(work, ignore_errors=True)
        ours = next(r for r in screens if r["name"] == name)
        idx = next(r for r in index_rows if r["name"] == name)
        rows.append({"name": name, "mb": main.stat().st_size / 2**20,
                     "ccl_s": median([x[0] for x in ccl]), "ccl_rss": median([x[1] for x in ccl]),
                     "cct_s": median([x[0] for x in cct]), "cct_rss": median([x[1] for x in cct]),
                     "our_first": ours["cold"], "our_index": idx["index_s"]})
    return rows, versions


# --- report --------------------------------------------------------------------------------------


def verdict(value: float, target: float, lower_is_better: bool = True) -> str:
    ok = value <= target if lower_is_better else value >= target
    return "✅" if ok else "❌"


def _targets(r: dict) -> list[str]:
    idx = {x["name"]: x for x in r.get("index", [])}
    scr = {x["name"]: x for x in r.get("screens", [])}
    if not ("claude-code-100mb" in scr and "claude-code-100mb" in idx):
        return []
    lines = ["## Targets (100 MB session)", "", "| what | target | measured | |", "|---|---|---|---|"]
    for label, key, target in (("cold first screen", "cold", 0.5), ("warm first screen", "warm", 0.05),
                               ("permalink to the middle, cold", "permalink", 0.5)):
        for fmt in ("claude-code-100mb", "legion-100mb"):
            v = scr[fmt][key]
            lines.append(f"| {label} ({fmt.split('-1')[0]}) | ≤ {ms(target)} | {ms(v)} | {verdict(v, target)} |")
    for fmt in ("claude-code-100mb", "legion-100mb"):
        v = idx[fmt]["ratio"]
        lines.append(f"| index throughput vs orjson per line ({fmt.split('-1')[0]}) | ≥ 50 % | "
                     f"{v:.0%} ({idx[fmt]['index_mbs']:.0f} vs {idx[fmt]['orjson_mbs']:.0f} MB/s)"
                     f" | {verdict(v, 0.5, False)} |")
    if r.get("rss"):
        v = r["rss"]["peak_rss_mb"]
        lines.append(f"| server peak RSS serving it | ≤ 250 MB | {v:.0f} MB | {verdict(v, 250)} |")
    if r.get("list"):
        v = r["list"]["warm_first_page"]
        lines.append(f"| session list, {r['list']['sessions']} sessions, warm | ≤ 200 ms | {ms(v)} |"
                     f" {verdict(v, 0.2)} |")
    return lines + [""]


def _every_size(r: dict) -> list[str]:
    idx = {x["name"]: x for x in r.get("index", [])}
    scr = {x["name"]: x for x in r.get("screens", [])}
    if not (scr or idx):
        return []
    lines = ["## First screen and index, every size", "",
             "| session | size | cold first screen | warm first screen | permalink (cold) |"
             " index | orjson per line | index / orjson |", "|---|---|---|---|---|---|---|---|"]
    for name in {**scr, **idx}:  # either section alone draws its columns, the other's are "–"
        s, i = scr.get(name), idx.get(name)
        mb = (s or i)["mb"]
        lines.append(f"| {name} | {mb:.1f} MB | "
                     + (f"{ms(s['cold'])} | {ms(s['warm'])} | {ms(s['permalink'])} | " if s else "– | – | – | ")
                     + (f"{ms(i['index_s'])} ({i['index_mbs']:.0f} MB/s) | "
                        f"{ms(i['orjson_s'])} ({i['orjson_mbs']:.0f} MB/s) | {i['ratio']:.0%} |"
                        if i else "– | – | – |"))
    return lines + ["", "Cold = a new server process with an empty cache, timed until `/s/<key>` has fully "
                    "responded (a big session's page is drawn from the part of the file it shows, its index "
                    "built after it). Warm = a new server process with the cache that run left once its "
                    "index was complete. Permalink = `/s/<key>/m/<middle event id>`, cold.", ""]


def _list(r: dict) -> list[str]:
    if not r.get("list"):
        return []
    L = r["list"]
    return ["## Session list", "", f"A Claude Code projects folder of {L['sessions']} sessions "
            "(40 projects, 4–40 KB each).", "",
            "| | time |", "|---|---|",
            f"| first page (100 rows), cold | {ms(L['cold_first_page'])} |",
            f"| all 20 pages, cold | {ms(L['cold_all_pages'])} |",
            f"| first page, warm (new process, cache present) | {ms(L['warm_first_page'])} |", ""]


def _peers(r: dict) -> list[str]:
    if not r.get("peers"):
        return []
    rows, versions = r["peers"]
    lines = ["## Side by side with the peers (same Claude Code files)", "",
             "Peers installed into a throwaway venv: " + ", ".join(f"{k} {v}" for k, v in versions.items())
             + ". Their time is the whole HTML conversion (what they need before anything can be"
             " read); ours is the cold first screen and the full index build.", "",
             "| file | claude-code-log | claude-code-transcripts | ours: first screen | ours: full index |"
             " ccl / our first screen | cct / our first screen |", "|---|---|---|---|---|---|---|"]
    for x in rows:
        lines.append(f"| {x['name']} ({x['mb']:.0f} MB) | {ms(x['ccl_s'])}, {x['ccl_rss']:.0f} MB RSS | "
                     f"{ms(x['cct_s'])}, {x['cct_rss']:.0f} MB RSS | {ms(x['our_first'])} | "
                     f"{ms(x['our_index'])} | ×{x['ccl_s'] / x['our_first']:.0f} | "
                     f"×{x['cct_s'] / x['our_first']:.0f} |")
    return lines + [""]


def _firstscreen(r: dict) -> list[str]:
    from . import firstscreen

    return firstscreen.report(r["firstscreen"], ms, verdict) if r.get("firstscreen") else []


def _live(r: dict) -> list[str]:
    from . import live

    return live.report(r["live"]) if r.get("live") else []


# What the report draws, in its order: (the sections whose figures a block draws, the block).
BLOCKS = [
    (("index", "screens", "rss", "list"), _targets),
    (("search",), lambda r: search_bench.report(r["search"], r.get("search_screen"), ms, verdict)
     if r.get("search") else []),
    (("hardening",), lambda r: [*hardening_bench.report(r["hardening"]), ""] if r.get("hardening") else []),
    (("export",), lambda r: export_bench.report(r["export"], ms, verdict) if r.get("export") else []),
    (("index", "screens"), _every_size),
    (("archive",), lambda r: archive_bench.report(r["archive"], ms, verdict) if r.get("archive") else []),
    (("list",), _list),
    (("peers",), _peers),
    (("firstscreen",), _firstscreen),
    (("live",), _live),
]


def report(records: dict) -> str:
    """BENCHMARKS.md from the sections' saved records (bench/sections.py)."""
    head = ["# Benchmarks", "",
            f"Assembled by `make bench` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from the "
            "last run of each section: the table says from which commit, when and by which command each "
            "section's figures are. A section that fails is reported as failed with its error, the others "
            "are kept; `make bench ARGS=\"--only SECTION\"` runs one again.",
            f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()},"
            f" {platform.system()} {platform.release()}. Figures are medians of the runs made in their "
            "section's run (5 unless its command says `--runs`); the machine is shared and noisy, so "
            "read the ratios first.",
            "Data: deterministic sessions from `bench/generate.py` (tool results of 1–20 KB with ~2 %"
            " of 200–600 KB, thinking, progress lines, base64 screenshots, a Task with a sub-agent file).",
            ""]
    return saved.assemble(records, list(SECTIONS), BLOCKS, head)


# --- the sections --------------------------------------------------------------------------------
# Each puts its figures into `got` as it measures them: what it measured before a failure is kept.


def _sec_index(c, got):
    got["index"] = bench_index(c.data, c.args.runs)


def _sec_screens(c, got):
    got["screens"] = bench_screens(c.data, c.args.runs, c.tmp)


def _sec_rss(c, got):
    got["rss"] = bench_rss(c.data, c.tmp)


def _sec_list(c, got):
    got["list"] = bench_list(c.data, c.args.runs, c.tmp)


def _sec_search(c, got):
    got["search"] = search_bench.run(c.data, c.args.runs, c.tmp, c.args.out, Server)
    got["search_screen"] = search_bench.on_screen(c.data, c.args.runs, c.tmp, c.args.out, Server, CHROMIUM)


def _sec_hardening(c, got):
    got["hardening"] = hardening_bench.run(c.args.runs, [12, 25, 50])


def _sec_archive(c, got):
    got["archive"] = archive_bench.run(c.data, c.args.runs, c.tmp, c.args.out, Server,
                                       (500,) if c.args.quick else (2000, 10000))


def _sec_firstscreen(c, got):
    from . import firstscreen

    got["firstscreen"] = firstscreen.run(c.args.out, c.args.runs, c.tmp, c.args.quick)


def _sec_peers(c, got):
    missing = [k for k in ("screens", "index") if k not in c.results]
    if missing:
        raise RuntimeError(f"the peers are compared with this run's {' and '.join(missing)} figures, "
                           "and that section failed in this run")
    got["peers"] = bench_peers(c.data, c.results["screens"], c.results["index"],
                               max(1, min(c.args.runs, 3)), c.args.out, c.tmp)


def _sec_export(c, got):
    got["export"] = export_bench.run(c.data, max(1, min(c.args.runs, 3)), c.tmp, c.args.out,
                                     run_measured, peers_venv)


def _sec_live(c, got):
    from . import live

    live.run(c.data, c.tmp, c.args.appends, c.args.servers.split(","), c.args.live_parts.split(","),
             results=got.setdefault("live", {}))


# The sections, in the order a whole run measures them: name → (what it prints, the section).
SECTIONS = {
    "index": ("index throughput", _sec_index),
    "screens": ("first screens", _sec_screens),
    "rss": ("peak RSS", _sec_rss),
    "list": ("session list", _sec_list),
    "search": ("search and filters", _sec_search),
    "hardening": ("hostile input", _sec_hardening),
    "archive": ("across sessions: full-text search, list by cost", _sec_archive),
    "firstscreen": ("any size at once", _sec_firstscreen),
    "peers": ("peers", _sec_peers),
    "export": ("export", _sec_export),
    "live": ("live tail", _sec_live),
}


def wanted(name: str, c) -> bool:
    """Whether this invocation runs section `name`."""
    a = c.args
    if a.only and name not in a.only and not (name in ("index", "screens") and "peers" in a.only):
        return False  # the peers are compared with the index and screens of the same run
    if (name in ("peers", "export") and a.skip_peers) or (name == "live" and a.skip_live):
        return False
    if name in ("rss", "search") and "claude-code-100mb" not in c.data:
        return False  # --quick: no 100 MB session
    if name == "archive" and "many" not in c.data:
        return False
    return True


def rerun(name: str, args) -> str:
    """The command that runs section `name` alone, as this invocation ran it."""
    parts = ["--only", name]
    if args.runs != 5:
        parts += ["--runs", str(args.runs)]
    if args.quick:
        parts.append("--quick")
    if name == "live":
        for flag, value, default in (("--appends", args.appends, 50), ("--servers", args.servers, SERVERS),
                                     ("--live-parts", args.live_parts, LIVE_PARTS)):
            if value != default:
                parts += [flag, str(value)]
    if args.out != OUT:
        parts += ["--out", str(args.out)]
    if args.report_given:
        parts += ["--report", str(args.report)]
    return f'make bench ARGS="{shlex.join(parts)}"'


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog="python -m bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="1 and 10 MB only, 3 runs, 500 sessions; saved apart (<out>/sections-quick) "
                         "and reported to <out>/BENCHMARKS-quick.md unless --report says")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--skip-live", action="store_true")
    ap.add_argument("--appends", type=int, default=50)
    ap.add_argument("--only", action="append", default=[], metavar="SECTION", choices=list(SECTIONS),
                    help="run only these sections (repeatable): " + ", ".join(SECTIONS)
                         + "; the report keeps the other sections' last figures")
    ap.add_argument("--servers", default=SERVERS,
                    help="servers for the live load section (serve, gunicorn)")
    ap.add_argument("--live-parts", default=LIVE_PARTS,
                    help="parts of the live section to run (latency, bursts, load)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--report", type=Path, default=None,
                    help="where the report goes (BENCHMARKS.md; <out>/BENCHMARKS-quick.md with --quick)")
    args = ap.parse_args(argv)
    sizes = dict(SIZES)
    many = 2000
    if args.quick:
        sizes.pop("100mb")
        args.runs = min(args.runs, 3)
        many = 500
    args.report_given = args.report is not None
    if args.report is None:
        args.report = args.out / "BENCHMARKS-quick.md" if args.quick else ROOT / "BENCHMARKS.md"
    args.out.mkdir(parents=True, exist_ok=True)
    store = saved.Store(args.out / ("sections-quick" if args.quick else "sections"))

    if args.only and not (set(args.only) - {"search", "rss", "live", "export"}):
        sizes = {k: v for k, v in sizes.items() if k == "100mb"}  # these use the 100 MB sessions only
    if args.only and not (set(args.only) - {"archive"}):
        sizes = {}  # the archive section uses the many-session root only
    if args.only and not (set(args.only) & {"list", "archive", "firstscreen"}):
        many = 0
    if args.only and not (set(args.only) - {"hardening", "firstscreen"}):
        sizes, many = {}, 0  # make their own files
    print("preparing data …", flush=True)
    data = prepare(args.out, sizes, many)
    meta = {"commit": saved.commit(ROOT), "runs": args.runs, "quick": args.quick,
            "command": "make bench" + (f' ARGS="{shlex.join(argv)}"' if argv else "")}
    failed = []
    try:
        with tempfile.TemporaryDirectory(prefix="sv-bench-") as t:
            c = argparse.Namespace(data=data, args=args, tmp=Path(t), results={})
            for name, (label, section) in SECTIONS.items():
                if not wanted(name, c):
                    continue
                print(f"{label} …", flush=True)
                record = store.run(name, lambda got, section=section: section(c, got),
                                   rerun=rerun(name, args), **meta)
                if record["status"] == "ok":
                    c.results.update(record["results"])
                else:
                    failed.append(name)
                    print(f"{name} FAILED (saved; the next sections run):\n{record['error']}", flush=True)
    finally:  # a Ctrl-C too: the sections that ended are in the report
        records = store.load()
        text = report(records)
        args.report.write_text(text + "\n")
        (args.out / ("results-quick.json" if args.quick else "results.json")).write_text(
            json.dumps({n: r.get("results") for n, r in records.items()}, indent=2, default=str))
    print(text)
    if failed:
        print(f"\nfailed: {', '.join(failed)} (in {args.report.name}, with the commands that run them alone)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
