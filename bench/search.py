"""Search and filter benchmarks (issue 9), a section of `make bench`; alone: `python -m bench --only search`.

On the 100 MB bench sessions, copied with two rare words planted (one in a prompt near the middle,
one near the end):

* the physical floor: `grep -c -F` (and `-i`) on the same file, and our full scan beside it (ratio);
* the whole session scanned for the word near the end (`/search.json`, complete): cold = a new
  server process with no index cache (the search does not wait for the index: `search.QuickScan`
  reads the files' bytes and only the lines that may match; a search it cannot answer exactly waits
  for the index), warm = the same process once its index is built (index in memory);
* the first hit of each word: over the streamed search (time to the first hit line; the word near
  the end costs a scan of almost the whole file first), and of the middle one on screen in Chromium
  (Enter in the search box → the hit in the results list), then `n` → its message, in a window
  that was not loaded, in view with the match marked;
* the filtered first screens `?only=errors` and `?tool=Bash`, warm (a new process, cache present).
"""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import time
from pathlib import Path

NEEDLES = {"middle": "zanzibar quokka", "end": "xylophone marmot"}
SESSIONS = ("claude-code-100mb", "legion-100mb")


def plant(src_root: Path, dst_root: Path, main_rel: str) -> Path:
    """A copy of a session with each needle put into the text of a user prompt: near the middle
    and near the end of the main file."""
    if dst_root.exists():
        return dst_root / main_rel
    tmp = dst_root.with_name(dst_root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src_root, tmp)
    main = tmp / main_rel
    lines = main.read_bytes().split(b"\n")
    size = sum(len(x) + 1 for x in lines)
    for where, fraction in (("middle", 0.5), ("end", 0.97)):
        at, pos = 0, 0
        for i, line in enumerate(lines):
            pos += len(line) + 1
            if pos >= size * fraction and _is_prompt(line):
                at = i
                break
        rec = json.loads(lines[at])
        if "message" in rec:
            rec["message"]["content"] += " " + NEEDLES[where]
        else:
            rec["content"] += " " + NEEDLES[where]
        lines[at] = json.dumps(rec, separators=(",", ":")).encode()
    main.write_bytes(b"\n".join(lines))
    tmp.rename(dst_root)
    return dst_root / main_rel


def _is_prompt(line: bytes) -> bool:
    if not line.strip():
        return False
    rec = json.loads(line)
    if rec.get("type") != "user":
        return False
    content = rec["message"]["content"] if "message" in rec else rec.get("content")
    return isinstance(content, str) and "Tool results" not in content


def _first_hit(port: int, path: str) -> float:
    """Seconds until the streamed search sent its first hit."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    t = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    while True:
        line = resp.readline()
        if not line or line.startswith(b'{"hit"'):
            break
    dt = time.perf_counter() - t
    conn.close()
    return dt if line else float("nan")


def _grep(args: list[str], path: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(["grep", *args, str(path)], stdout=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t)
    return _median(times)


def _median(xs):
    import statistics

    return statistics.median(xs) if xs else float("nan")


def run(data: dict, runs: int, tmp: Path, out: Path, server_cls) -> list[dict]:
    rows = []
    for name in SESSIONS:
        if name not in data:
            continue
        root, key, main = data[name]
        planted = plant(root, out / f"search-{name}", str(main.relative_to(root)))
        mb = planted.stat().st_size / 2**20
        print(f"  search: {name} …", flush=True)
        q_mid, q_end = (NEEDLES["middle"].replace(" ", "+"), NEEDLES["end"].replace(" ", "+"))
        row = {"name": name, "mb": mb,
               "grep": _grep(["-c", "-F", NEEDLES["end"]], planted, runs),
               "grep_i": _grep(["-c", "-i", "-F", NEEDLES["end"]], planted, runs)}
        sroot = out / f"search-{name}"
        cold, warm, first, first_end = [], [], [], []
        for i in range(runs):
            cache = tmp / f"cache-search-{name}-{i}"
            with server_cls(sroot, cache) as s:
                dt, status, body = s.get(f"/s/{key}/search.json?q={q_end}")
                got = json.loads(body)
                assert status == 200 and got["total"] == 1 and got["complete"], got
                cold.append(dt)
                s.get(f"/s/{key}/outline.json")  # waits for the index the cold search started
                for _ in range(2):
                    dt, status, body = s.get(f"/s/{key}/search.json?q={q_end}")
                    warm.append(dt)
                first.append(_first_hit(s.port, f"/s/{key}/search?q={q_mid}"))
                first_end.append(_first_hit(s.port, f"/s/{key}/search?q={q_end}"))
            shutil.rmtree(cache, ignore_errors=True)
        row.update(cold=_median(cold), warm=_median(warm), first_hit=_median(first),
                   first_hit_end=_median(first_end))
        # the filtered first screens, warm: a new process with the cache of a previous one
        cache = tmp / f"cache-filter-{name}"
        base = sroot
        with server_cls(base, cache) as s:
            s.get(f"/s/{key}")
        errors, bash = [], []
        for _ in range(runs):
            with server_cls(base, cache) as s:
                dt, status, body = s.get(f"/s/{key}?only=errors")
                assert status == 200 and b'class="timeline filtered"' in body
                errors.append(dt)
            with server_cls(base, cache) as s:
                dt, status, body = s.get(f"/s/{key}?tool=Bash")
                assert status == 200 and b'class="timeline filtered"' in body
                bash.append(dt)
        shutil.rmtree(cache, ignore_errors=True)
        row.update(errors_warm=_median(errors), bash_warm=_median(bash))
        rows.append(row)
    return rows


def on_screen(data: dict, runs: int, tmp: Path, out: Path, server_cls, chromium: str) -> dict:
    """Enter in the search box → the first hit in the results list, in Chromium (warm server)."""
    from playwright.sync_api import sync_playwright

    name = SESSIONS[0]
    root, key, main = data[name]
    times, jumps = [], []
    with server_cls(out / f"search-{name}", tmp / "cache-search-screen") as s, sync_playwright() as p:
        s.get(f"/s/{key}")
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        for i in range(runs):
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(f"http://127.0.0.1:{s.port}/s/{key}")
            page.locator("#keys-button").wait_for()
            page.evaluate("""() => { window.__hit = null;
                new MutationObserver(() => { if (!window.__hit && document.querySelector('#hits li.hit'))
                  window.__hit = performance.now(); })
                .observe(document.getElementById('hits'), {childList: true}); }""")
            page.locator("#find-q").fill(NEEDLES["middle"] if i % 2 == 0 else NEEDLES["middle"].upper())
            t0 = page.evaluate("performance.now()")
            page.locator("#find-q").press("Enter")
            page.locator("#hits li.hit").first.wait_for(timeout=60_000)
            times.append((page.evaluate("window.__hit") - t0) / 1000)
            page.keyboard.press("Escape")
            t0 = page.evaluate("performance.now()")
            page.keyboard.press("n")
            page.locator("#timeline li.ev.target mark.hit.current").first.wait_for(timeout=60_000)
            jumps.append((page.evaluate("performance.now()") - t0) / 1000)
            page.close()
        browser.close()
    return {"name": name, "first_hit_on_screen": _median(times), "jump_to_hit": _median(jumps)}


def report(rows: list[dict], screen: dict | None, ms, verdict) -> list[str]:
    lines = ["## Search and filters in a session (100 MB)", "",
             f"Rare words planted in a copy of each session: “{NEEDLES['middle']}” in a prompt near the "
             f"middle, “{NEEDLES['end']}” near the end. Cold = a new server process with no index cache "
             "(the search reads the file's bytes, not waiting for the index); warm = the same process "
             "once its index is built. The grep figures "
             "are the physical floor on the same file (the page cache is warm for both).", "",
             "| session | whole file scanned, cold (≤ 1 s) | warm (≤ 400 ms) | grep -c -F | grep -c -i -F |"
             " warm / grep -i | first hit, streamed: middle (≤ 150 ms) | end |"
             " `?only=errors` warm (≤ 100 ms) | `?tool=Bash` warm (≤ 100 ms) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['name']} ({r['mb']:.0f} MB) | {ms(r['cold'])} {verdict(r['cold'], 1.0)} | "
            f"{ms(r['warm'])} {verdict(r['warm'], 0.4)} | {ms(r['grep'])} | {ms(r['grep_i'])} | "
            f"×{r['warm'] / r['grep_i']:.1f} | {ms(r['first_hit'])} {verdict(r['first_hit'], 0.15)} | "
            f"{ms(r['first_hit_end'])} | "
            f"{ms(r['errors_warm'])} {verdict(r['errors_warm'], 0.1)} | "
            f"{ms(r['bash_warm'])} {verdict(r['bash_warm'], 0.1)} |")
    if screen:
        v = screen["first_hit_on_screen"]
        lines += ["", f"First hit on screen in Chromium ({screen['name']}, warm; Enter in the search box → "
                  f"the hit in the results list, needle near the middle): {ms(v)} {verdict(v, 0.15)}; "
                  f"then `n` → its message (a window not loaded before) in view, the match marked: "
                  f"{ms(screen['jump_to_hit'])}."]
    lines.append("")
    return lines
