"""The live benchmarks: append → visible, bursts, and many viewers with pages under load.

    python -m bench --only live [--appends N] [--servers serve,gunicorn]

  * append → visible in Chromium (p50 / p95 over N appends) on a small session, on a 100 MB
    session, with 50 other streams open on the same session, and on a ~40 MB claude-trace API call
    log (`ApiLog`: each line a call sending the whole history again; read on, not again whole);
  * bursts: 1,000 and 10,000 lines appended at once, timed until all are in the DOM of a page that
    follows the session; 2,000 lines while the reader is scrolled up, until the "N new" pill and the
    gap marker say so; server and browser CPU beside the wall time (the machine is shared);
  * load: 100 open streams + 200 concurrent page / list / JSON / permalink / window requests + 10
    appended lines a second, on the built-in server and under gunicorn (gthread, the README's team
    setup): page latency p50 / p95, append → visible on a watching browser, whether every stream got
    every line once and in order, and the server's threads and RSS idle, with the streams open, and
    after they closed. The same requests without streams, and one at a time, give the baselines.

The load generator is asyncio in this process (the streams and page clients are sockets, not
threads) and shares the machine's cores with the server: compare figures of one run.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .__main__ import CHROMIUM, ROOT, Server, free_port

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
TOUR = ROOT / "test_data" / "sessions" / "legion-feature-tour"


def pct(xs: list, q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def record(fmt: str, eid: str, i: int, text: str = "live append") -> str:
    if fmt == "legion":
        return json.dumps({"type": "assistant", "content": f"{text} {i} with some **markdown**",
                           "message_id": eid, "timestamp": time.time(), "session_id": "bench"})
    return json.dumps({"type": "assistant", "uuid": eid, "sessionId": "session", "parentUuid": None,
                       "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                       "message": {"role": "assistant", "model": "claude-opus-4-6",
                                   "content": [{"type": "text", "text": f"{text} {i}"}]}})


def proc_stat(pid: int) -> dict:
    """Threads, RSS (MB) and CPU seconds of a process (and its children, for gunicorn)."""
    out = {"threads": 0, "rss_mb": 0.0, "cpu_s": 0.0}
    pids = [pid]
    try:
        kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        pids += [int(k) for k in kids]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("Threads:"):
                        out["threads"] += int(line.split()[1])
                    elif line.startswith("VmRSS:"):
                        out["rss_mb"] += int(line.split()[1]) / 1024
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
                out["cpu_s"] += (int(fields[11]) + int(fields[12])) / 100
        except OSError:
            pass
    return out


class Gunicorn(Server):
    """The README's team setup: gunicorn, gthread workers, settings from the environment."""

    def __init__(self, root: Path, cache: Path, threads: int = 32, extra_env: dict | None = None):
        import os

        self.port = free_port()
        env = {**os.environ, "SESSION_VIEWER_ROOTS": str(root), "SESSION_VIEWER_CACHE_DIR": str(cache),
               **(extra_env or {})}
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([str(gunicorn), "-k", "gthread", "--threads", str(threads), "-w", "1",
                                      "-b", f"127.0.0.1:{self.port}", "viewer.web:create_app()"],
                                     cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.get("/static/favicon.svg")
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("gunicorn did not start: " + self.tail())


def start_server(kind: str, root: Path, cache: Path) -> Server:
    if kind == "gunicorn":
        return Gunicorn(root, cache)
    return Server(root, cache, watch=True)


def launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)


WATCH_ARRIVALS = """() => { window.__arrivals = {}; window.__count = 0; window.__prefix = null;
    new MutationObserver(rs => { const now = performance.timeOrigin + performance.now();
      for (const r of rs) for (const n of r.addedNodes) if (n.id) {
        window.__arrivals[n.id] = now;
        if (window.__prefix && n.id.startsWith(window.__prefix)) window.__count++; } })
    .observe(document.getElementById('timeline'), {childList: true}); }"""


def open_page(browser, url: str, follow: bool = True):
    context = browser.new_context(bypass_csp=True, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    # at its end, following: a copied session keeps its files' old times, and a session not written
    # lately opens at its start (a first screen there has no live tail)
    page.goto(url + ("&" if "?" in url else "?") + "at=end")
    page.wait_for_function("document.getElementById('live-state').dataset.state == 'live'")
    page.evaluate(f"document.getElementById('follow').checked = {'true' if follow else 'false'}")
    page.evaluate(WATCH_ARRIVALS)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    return context, page, cdp


def browser_busy(cdp) -> float:
    """Seconds the page's main thread has worked so far."""
    return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
                if m["name"] == "TaskDuration")


# --- append → visible ----------------------------------------------------------------------------


class SSEClient(threading.Thread):
    """A bare stream reader, standing in for another open tab: counts the events it is sent."""

    def __init__(self, port: int, path: str):
        super().__init__(daemon=True)
        self.port, self.path, self.events = port, path, 0
        self.stop = threading.Event()

    def run(self):
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("GET", self.path, headers={"Accept": "text/event-stream"})
        resp = conn.getresponse()
        while not self.stop.is_set():
            line = resp.readline()
            if not line:
                break
            self.events += line.count(b'<li class="ev ')
        conn.close()


def _cards(dom_id: str, line: bool = False) -> str:
    """A script's expression: the ids of the arrived cards of an event (`line`: of every event of
    the line whose first event is `dom_id`)."""
    more = f" || k.startsWith('{dom_id}~')" if line else ""
    return f"Object.keys(window.__arrivals).filter(k => k === '{dom_id}'{more})"


def bench_latency(data: dict, appends: int, tmp: Path, only: list[str] | None = None) -> list[dict]:
    """Append → visible on each scenario (`only`: those whose name starts with one of these)."""
    from playwright.sync_api import sync_playwright

    small_root = tmp / "live-small"
    shutil.copytree(TOUR, small_root / "tour")
    small = small_root / "tour" / "messages.jsonl"
    scenarios = [("small session", small_root, "tour", small, 0, lambda eid, i: record("legion", eid, i))]
    if "claude-code-100mb" in data:
        big_root = tmp / "live-big"
        root, key, main = data["claude-code-100mb"]
        shutil.copytree(root, big_root)
        scenarios.append(("100 MB session", big_root, key, big_root / "session.jsonl", 0,
                          lambda eid, i: record("claude-code", eid, i)))
    scenarios.append(("50 streams on one session", small_root, "tour", small, 49,
                      lambda eid, i: record("legion", eid, i)))
    api = ApiLog(tmp / "live-api" / "trace" / "log.jsonl", API_LOG_MB)
    # (a log of API calls names its events by where their line begins: `@<offset>`, `~2`…)
    scenarios.append((f"API call log (claude-trace, {api.mb:.0f} MB): a call's answer", tmp / "live-api",
                      "trace~log", api.path, 0, api.line, True))
    scenarios = [x for x in scenarios if not only or any(x[0].startswith(o) for o in only)]
    rows = []
    with sync_playwright() as p:
        browser = launch(p)
        for n, (label, root, key, path, extra, write, *by_place) in enumerate(scenarios):
            print(f"  live: {label} …", flush=True)
            with Server(root, tmp / f"cache-live-{n}", watch=True) as s:
                context, page, _ = open_page(browser, f"{s.url}/s/{key}")
                others = [SSEClient(s.port, f"/s/{key}/events") for _ in range(extra)]
                for c in others:
                    c.start()
                time.sleep(1.0 if extra else 0.2)  # let the other streams connect
                lat = []
                for i in range(appends):
                    eid = f"bench-live-{n}-{i}"
                    line = write(eid, i)
                    cards = _cards(f"m-{eid}") if not by_place else _cards(f"m-@{path.stat().st_size}", True)
                    t0 = time.time() * 1000
                    with open(path, "a") as f:
                        f.write(line + "\n")
                    page.wait_for_function(f"{cards}.length", timeout=30_000)
                    lat.append(page.evaluate(f"Math.max(...{cards}.map(k => window.__arrivals[k]))") - t0)
                    time.sleep(0.05)
                deadline = time.monotonic() + 5  # let the other streams take the last message
                while any(c.events < appends for c in others) and time.monotonic() < deadline:
                    time.sleep(0.05)
                for c in others:
                    c.stop.set()
                received = [c.events for c in others]
                context.close()
            rows.append({"name": label, "p50": pct(lat, .5), "p95": pct(lat, .95), "max": max(lat),
                         "n": len(lat), "others_received": (min(received), max(received)) if received else None})
        browser.close()
    return rows


API_LOG_MB = 40


class ApiLog:
    """A claude-trace log (`RawPair` lines: formats/wrapped.py) of one agent's conversation, each
    call sending the whole history again and answered with a Bash call, written to about `mb` MB;
    `line(eid, i)` is the next call, whose answer has the id `eid` (the page's `m-<eid>`)."""

    def __init__(self, path: Path, mb: float):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.calls = path, 0
        self.history: list = [{"role": "user", "content": "Tidy the repository, step by step."}]
        with open(path, "w") as f:
            while f.tell() < mb * 2**20:
                f.write(self.line(f"msg_{self.calls:06d}", self.calls) + "\n")
        self.mb = path.stat().st_size / 2**20

    def line(self, eid: str, i: int) -> str:
        n = self.calls
        self.calls += 1
        answer = [{"type": "text", "text": f"Step {n}: looking at the next file. " + "lorem ipsum " * 80},
                  {"type": "tool_use", "id": f"toolu_{n:06d}", "name": "Bash",
                   "input": {"command": f"sed -n 1,40p src/module_{n}.py"}}]
        t = 1764050400 + 3 * n
        pair = {"request": {"timestamp": t, "method": "POST", "url": "https://api.anthropic.com/v1/messages",
                            "headers": {"content-type": "application/json"},
                            "body": {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32000,
                                     "system": [{"type": "text", "text": "You are Claude Code."}],
                                     "messages": self.history}},
                "response": {"timestamp": t + 2.5, "status_code": 200, "headers": {},
                             "body": {"id": eid, "type": "message", "role": "assistant",
                                      "model": "claude-sonnet-4-5-20250929", "content": answer,
                                      "stop_reason": "tool_use",
                                      "usage": {"input_tokens": 1200 + n, "output_tokens": 180}}},
                "logged_at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t + 3))}
        text = json.dumps(pair)
        self.history = self.history + [
            {"role": "assistant", "content": answer},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n:06d}",
                                          "content": "\n".join(f"{k}: x = compute({k})" for k in range(40))}]}]
        return text


# --- bursts --------------------------------------------------------------------------------------


def bench_bursts(tmp: Path, sizes=(1_000, 10_000)) -> list[dict]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = launch(p)
        for n in sizes:
            print(f"  burst of {n:,} lines, following …", flush=True)
            root = tmp / f"burst-{n}"
            shutil.copytree(TOUR, root / "tour")
            path = root / "tour" / "messages.jsonl"
            with Server(root, tmp / f"cache-burst-{n}", watch=True) as s:
                context, page, cdp = open_page(browser, f"{s.url}/s/tour")
                page.evaluate(f"window.__prefix = 'm-burst-{n}-'")
                lines = "".join(record("legion", f"burst-{n}-{i}", i, "burst line") + "\n" for i in range(n))
                server0, browser0 = proc_stat(s.proc.pid)["cpu_s"], browser_busy(cdp)
                t0 = time.time()
                with open(path, "a") as f:
                    f.write(lines)
                page.wait_for_function(f"window.__count >= {n}", timeout=600_000, polling=100)
                wall = time.time() - t0
                in_dom = page.evaluate(f"document.querySelectorAll('#timeline > li.ev[id^=\"m-burst-{n}-\"]').length")
                at_end = page.evaluate("innerHeight + scrollY >= document.documentElement.scrollHeight - 150")
                rows.append({"name": f"{n:,} lines, following", "n": n, "wall": wall, "in_dom": in_dom,
                             "at_end": at_end, "server_cpu": proc_stat(s.proc.pid)["cpu_s"] - server0,
                             "browser": browser_busy(cdp) - browser0})
                context.close()
        print("  burst of 2,000 lines, scrolled up …", flush=True)
        root = tmp / "burst-up"
        shutil.copytree(TOUR, root / "tour")
        path = root / "tour" / "messages.jsonl"
        with Server(root, tmp / "cache-burst-up", watch=True) as s:
            context, page, cdp = open_page(browser, f"{s.url}/s/tour", follow=False)
            page.evaluate("window.scrollTo(0, 0)")
            n = 2_000
            lines = "".join(record("legion", f"up-{i}", i, "burst line") + "\n" for i in range(n))
            server0, browser0 = proc_stat(s.proc.pid)["cpu_s"], browser_busy(cdp)
            t0 = time.time()
            with open(path, "a") as f:
                f.write(lines)
            page.wait_for_function(f"document.getElementById('new-pill').textContent.startsWith('{n} ')",
                                   timeout=600_000, polling=100)
            wall = time.time() - t0
            in_dom = page.evaluate("document.querySelectorAll('#timeline > li.ev[id^=\"m-up-\"]').length")
            rows.append({"name": f"{n:,} lines, reader scrolled up (until the pill says {n:,})", "n": n,
                         "wall": wall, "in_dom": in_dom, "at_end": None,
                         "server_cpu": proc_stat(s.proc.pid)["cpu_s"] - server0,
                         "browser": browser_busy(cdp) - browser0})
            context.close()
        browser.close()
    return rows


# --- many viewers, pages under load --------------------------------------------------------------


class Load:
    """Streams and page clients on asyncio, in a thread of their own."""

    def __init__(self, port: int):
        self.port = port
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout=None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def get(self, path: str, timeout: float = 60.0) -> tuple[int, float]:
        """(status, seconds); status 0 when no answer came within `timeout`."""
        t = time.perf_counter()
        r, w = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 22)
        w.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nConnection: close\r\n\r\n".encode())
        try:
            data = await asyncio.wait_for(r.read(), timeout)
        except asyncio.TimeoutError:
            data = b""
        w.close()
        return int(data[9:12] or 0), time.perf_counter() - t

    async def stream(self, path: str, got: list, ready: asyncio.Event):
        """A stream reader: the ids of the events it is sent, in order, into `got` ("BUSY" when
        refused). It reads in large chunks (a `readline` per SSE line made this load generator,
        not the server, the bottleneck: 100 streams × every line of every event); cancel it to
        stop."""
        r, w = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 24)
        w.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAccept: text/event-stream\r\n\r\n".encode())
        pattern = re.compile(rb'<li class="ev [^"]*" id="m-(load-\d+)"')
        buf = b""
        try:
            while True:
                chunk = await r.read(1 << 16)
                if not chunk:
                    break
                buf += chunk
                if not ready.is_set() and (b"retry:" in buf or b"event: busy" in buf):
                    if b"event: busy" in buf:
                        got.append("BUSY")
                    ready.set()
                end = buf.rfind(b"\n\n")  # complete messages only: an id may be cut in two
                if end >= 0:
                    got.extend(m.decode() for m in pattern.findall(buf, 0, end))
                    buf = buf[end + 2:]
        except asyncio.CancelledError:
            pass
        finally:
            w.close()


def _paths(key: str, ids: list[str], others: list[str]) -> list[tuple[str, str]]:
    mid = ids[len(ids) // 2]
    return [("session page", f"/s/{key}"), ("session list", "/"), ("list JSON", "/sessions.json"),
            ("session JSON", f"/s/{key}.json"), ("permalink", f"/s/{key}/m/{mid}"),
            ("earlier window", f"/s/{key}/w/main?before={len(ids) // 2}"),
            *[("other session", f"/s/{o}") for o in others]]


def bench_load(server: str, tmp: Path, streams: int = 100, clients: int = 200, rate: float = 10.0,
               seconds: float = 20.0) -> dict:
    """100 streams + 200 concurrent page requests + `rate` appends a second, on one server."""
    from playwright.sync_api import sync_playwright

    print(f"  load on {server}: {streams} streams, {clients} concurrent requests, {rate:g} appends/s …",
          flush=True)
    root = tmp / f"load-{server}"
    shutil.copytree(TOUR, root / "tour")
    for src in sorted((ROOT / "test_data" / "sessions").iterdir())[:4]:  # other sessions
        if src.name != TOUR.name:
            shutil.copytree(src, root / src.name) if src.is_dir() else shutil.copy(src, root)
    path = root / "tour" / "messages.jsonl"
    with open(path, "a") as f:  # a session with a few hundred events, as real ones are
        for i in range(300):
            f.write(record("legion", f"pre-{i}", i, "earlier line") + "\n")
    out: dict = {"server": server, "streams": streams, "clients": clients, "rate": rate, "seconds": seconds}
    with start_server(server, root, tmp / f"cache-load-{server}") as s, sync_playwright() as p:
        load = Load(s.port)
        _, body = s.get("/sessions.json")[1:]
        keys = [x["key"] for x in json.loads(body)["sessions"]]
        key = "tour"
        _, _, raw = s.get(f"/s/{key}.json")
        ids = [e["id"] for e in json.loads(raw)["events"]]
        paths = _paths(key, ids, [k for k in keys if k != key])
        for _, u in paths:  # warm: every page rendered once, indexes built
            s.get(u)
        time.sleep(1.0)
        out["idle"] = proc_stat(s.proc.pid)

        async def one_by_one():
            lat = []
            for _ in range(3):
                for _, u in paths:
                    lat.append((await load.get(u))[1])
            return lat

        lat = load.run(one_by_one())
        out["alone_p50"] = pct(lat, .5)

        async def pages(duration: float):
            lat: list[float] = []
            by_kind: dict[str, list] = {}
            errors = 0
            end = time.monotonic() + duration

            async def worker(i: int):
                nonlocal errors
                j = i
                while time.monotonic() < end:
                    kind, u = paths[j % len(paths)]
                    j += 1
                    try:
                        status, dt = await load.get(u)
                    except OSError:
                        errors += 1
                        continue
                    if status != 200:
                        errors += 1
                    lat.append(dt)
                    by_kind.setdefault(kind, []).append(dt)

            await asyncio.gather(*(worker(i) for i in range(clients)))
            return lat, by_kind, errors

        lat, _, errors = load.run(pages(seconds / 2))
        out["pages_only"] = {"p50": pct(lat, .5), "p95": pct(lat, .95), "n": len(lat), "errors": errors}

        # the streams, and a browser watching the session
        browser = launch(p)
        context, page, _ = open_page(browser, f"{s.url}/s/{key}")
        got = [[] for _ in range(streams)]
        cursor = page.evaluate("document.getElementById('live').getAttribute('hx-sse:connect')")

        async def open_streams():
            readies = [asyncio.Event() for _ in got]
            tasks = [asyncio.ensure_future(load.stream(cursor, g, r)) for g, r in zip(got, readies)]
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
            return tasks

        tasks = load.run(open_streams())
        time.sleep(1.0)
        out["streams_open"] = proc_stat(s.proc.pid)
        out["busy"] = sum(1 for g in got if "BUSY" in g)

        written: dict[str, float] = {}
        writing = threading.Event()

        def writer():
            i = 0
            t = time.monotonic()
            while not writing.is_set():
                eid = f"load-{i}"
                written[eid] = time.time() * 1000
                with open(path, "a") as f:
                    f.write(record("legion", eid, i) + "\n")
                i += 1
                t += 1.0 / rate
                time.sleep(max(0.0, t - time.monotonic()))

        cpu0, own0 = proc_stat(s.proc.pid)["cpu_s"], time.process_time()
        w = threading.Thread(target=writer, daemon=True)
        w.start()
        lat, by_kind, errors = load.run(pages(seconds))
        writing.set()
        w.join()
        out["cpu_s"] = proc_stat(s.proc.pid)["cpu_s"] - cpu0
        out["generator_cpu_s"] = time.process_time() - own0
        out["peak"] = proc_stat(s.proc.pid)
        out["pages"] = {"p50": pct(lat, .5), "p95": pct(lat, .95), "max": max(lat) if lat else float("nan"),
                        "n": len(lat), "errors": errors,
                        "kinds": {k: (pct(v, .5), pct(v, .95), len(v)) for k, v in by_kind.items()}}
        expected = sorted(written, key=lambda e: int(e.split("-")[1]))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(
                g[-1:] == expected[-1:] for g in got if "BUSY" not in g):
            time.sleep(0.1)
        page.wait_for_function(f"window.__arrivals['m-{expected[-1]}']", timeout=30_000)
        arrivals = page.evaluate("window.__arrivals")
        visible = [arrivals[f"m-{e}"] - written[e] for e in expected if f"m-{e}" in arrivals]
        out["visible"] = {"p50": pct(visible, .5), "p95": pct(visible, .95), "n": len(visible),
                          "of": len(expected)}
        exact = sum(1 for g in got if g == expected)
        out["streams_exact"] = exact
        out["streams_detail"] = sorted({(len(g), len(set(g))) for g in got if g != expected})[:5]
        out["appended"] = len(expected)
        context.close()
        browser.close()
        load.run(_stop(tasks))
        time.sleep(5.0)  # the server notices the streams are gone
        out["after"] = proc_stat(s.proc.pid)
        load.close()
    return out


async def _stop(tasks):
    for t in tasks:
        t.cancel()
    await asyncio.wait(tasks, timeout=10)


# --- the section ---------------------------------------------------------------------------------


def run(data: dict, tmp: Path, appends: int, servers: list[str], parts: list[str],
        results: dict | None = None) -> dict:
    """The section's figures, put into `results` part by part: when a later part fails, the bench
    saves and reports the parts that finished (bench/sections.py)."""
    results = {} if results is None else results
    if "latency" in parts:
        print("live: append → visible …", flush=True)
        results["latency"] = bench_latency(data, appends, tmp)
    if "bursts" in parts:
        print("live: bursts …", flush=True)
        results["bursts"] = bench_bursts(tmp)
    if "load" in parts:
        print("live: load …", flush=True)
        results["load"] = []
        for server in servers:
            results["load"].append(bench_load(server, tmp))
    return results


def report(r: dict) -> list[str]:
    from .__main__ import verdict

    lines = []
    if r.get("latency"):
        lines += ["## Live tail: append → visible in Chromium", "",
                  "A line is appended to the transcript; the time is taken until the new message is in the "
                  "page's DOM (a MutationObserver stamps it), over "
                  f"{r['latency'][0]['n']} appends. Target: p50 < 150 ms, p95 < 500 ms.", "",
                  "| scenario | p50 | p95 | max | |", "|---|---|---|---|---|"]
        for x in r["latency"]:
            got = x["others_received"]  # (fewest, most), a list once saved as JSON
            extra = "" if not got else (
                f" (the 49 other streams each got all {x['n']} messages)" if tuple(got) == (x["n"], x["n"])
                else f" (the 49 other streams got {got[0]}–{got[1]} of {x['n']} messages)")
            ok = verdict(x["p50"], 150) if x["p95"] < 500 else "❌"
            lines.append(f"| {x['name']}{extra} | {x['p50']:.0f} ms | {x['p95']:.0f} ms | {x['max']:.0f} ms | {ok} |")
        lines.append("")
    if r.get("bursts"):
        lines += ["## Live tail: bursts", "",
                  "Lines appended in one write to a session a Chromium page has open; timed until all of "
                  "them are in the page's DOM (following), or until the pill counts them (scrolled up: "
                  "beyond a screenful they wait behind a \"N new messages\" marker and load as windows on "
                  "demand). CPU: the server process, and the page's main thread (Chromium's "
                  "TaskDuration). Targets: 10,000 lines ≤ 5 s, 1,000 ≤ 1 s.", "",
                  "| burst | wall | in the DOM | server CPU | browser main thread | |", "|---|---|---|---|---|---|"]
        for x in r["bursts"]:
            target = 5.0 if x["n"] >= 10_000 else 1.0 if x["n"] <= 1_000 else None
            ok = verdict(x["wall"], target) if target else ""
            lines.append(f"| {x['name']} | {x['wall']:.2f} s | {x['in_dom']:,} | {x['server_cpu']:.2f} s | "
                         f"{x['browser']:.2f} s | {ok} |")
        lines.append("")
    for x in r.get("load", []):
        pg, only = x["pages"], x["pages_only"]
        lines += [f"## Many viewers, pages under load — {x['server']}", "",
                  f"{x['streams']} open streams on one session, {x['clients']} page requests in flight at "
                  f"all times (session page, list, list JSON, session JSON, permalink, an earlier window, "
                  f"other sessions), {x['rate']:g} lines appended a second; a Chromium page follows the "
                  "session. Targets: page p50 ≤ 300 ms, p95 ≤ 1 s; append → visible p50 ≤ 150 ms; every "
                  "stream gets every line once.", "",
                  "| | p50 | p95 | requests | |", "|---|---|---|---|---|",
                  f"| pages, one at a time, idle | {x['alone_p50'] * 1000:.0f} ms | | | |",
                  f"| pages, {x['clients']} concurrent, no streams | {only['p50'] * 1000:.0f} ms | "
                  f"{only['p95'] * 1000:.0f} ms | {only['n']:,} ({only['errors']} errors) | |",
                  f"| pages, {x['clients']} concurrent + {x['streams']} streams + appends | "
                  f"{pg['p50'] * 1000:.0f} ms | {pg['p95'] * 1000:.0f} ms | {pg['n']:,} ({pg['errors']} errors) | "
                  f"{verdict(pg['p50'], 0.3) if pg['p95'] <= 1.0 else '❌'} |"]
        for kind, (p50, p95, n) in sorted(pg["kinds"].items()):
            lines.append(f"| · {kind} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms | {n:,} | |")
        v = x["visible"]
        lines.append(f"| append → visible on the watching page | {v['p50']:.0f} ms | {v['p95']:.0f} ms | "
                     f"{v['n']} of {v['of']} | {verdict(v['p50'], 150)} |")
        ok = x["streams_exact"] == x["streams"]
        others = "" if ok else " (the others, as (lines received, distinct): %s)" % (x["streams_detail"],)
        busy = "; %d were refused as busy" % x["busy"] if x["busy"] else ""
        lines += ["", f"Streams: {x['streams_exact']} of {x['streams']} got all {x['appended']} lines, each "
                  f"once and in order{others}{busy} {'✅' if ok else '❌'}.",
                  "", "| server | threads | RSS |", "|---|---|---|"]
        for label, k in (("idle (warm)", "idle"), (f"{x['streams']} streams open", "streams_open"),
                         ("under the load", "peak"), ("5 s after the streams closed", "after")):
            lines.append(f"| {label} | {x[k]['threads']} | {x[k]['rss_mb']:.0f} MB |")
        lines += ["", f"CPU during the {x['seconds']:g} s of load: the server {x['cpu_s']:.1f} s, the load "
                  f"generator (streams, page clients, writer) {x.get('generator_cpu_s', float('nan')):.1f} s — "
                  "on the same 2 cores.", ""]
    return lines
