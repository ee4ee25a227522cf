"""Export benchmark (issue 12), a section of `make bench`; alone: `python -m bench --only export`.

On the 100 MB Claude Code bench session (10 MB with --quick), each run in its own process as a user
runs it, in this one invocation:

* ours: `session-viewer export FILE -o out.html` (also `--redact`, `.md` and `.json`);
* claude-code-log (`claude-code-log FILE -o out.html --no-cache`) and claude-code-transcripts
  (`claude-code-transcripts json FILE -o dir`) making their HTML from the same file.

Wall time, CPU time (user + system: steadier than wall time on a shared machine) and peak RSS of
each, medians of the runs; the targets are read as ratios against claude-code-log measured beside
ours: ≥ 5× faster, ≤ 1/5 of its memory, and ≤ 250 MB RSS for the 100 MB session.
"""

from __future__ import annotations

import shutil
import statistics
import sys
from pathlib import Path

OURS = (("html", []), ("html --redact", ["--redact"]), ("md", []), ("json", []))


def run(data: dict, runs: int, tmp: Path, out: Path, measure, peers_venv) -> dict | None:
    name = next((n for n in ("claude-code-100mb", "claude-code-10mb") if n in data), None)
    if name is None:
        return None
    _, _, main = data[name]
    venv = peers_venv(out)
    cmds = {f"ours: {label}": [sys.executable, "-m", "viewer", "export", str(main), "-o",
                               f"out.{label.split()[0]}", *extra] for label, extra in OURS}
    cmds["claude-code-log"] = [str(venv / "bin" / "claude-code-log"), str(main), "-o", "ccl.html",
                               "--no-cache"]
    cmds["claude-code-transcripts"] = [str(venv / "bin" / "claude-code-transcripts"), "json",
                                       str(main), "-o", "cct"]
    got: dict[str, list] = {k: [] for k in cmds}
    sizes: dict[str, int] = {}
    for i in range(runs):
        for label, cmd in cmds.items():  # interleaved: a burst of load hits every tool alike
            work = tmp / f"export-{i}"
            work.mkdir(parents=True, exist_ok=True)
            got[label].append(measure(cmd, work))
            sizes[label] = sum(f.stat().st_size for f in work.rglob("*") if f.is_file())
            shutil.rmtree(work, ignore_errors=True)
    rows = {label: {"wall": statistics.median(x[0] for x in xs),
                    "rss": statistics.median(x[1] for x in xs),
                    "cpu": statistics.median(x[2] for x in xs), "bytes": sizes[label]}
            for label, xs in got.items()}
    return {"session": name, "mb": main.stat().st_size / 2**20, "runs": runs, "rows": rows}


def report(r: dict, ms, verdict) -> list[str]:
    rows = r["rows"]
    ours, ccl = rows["ours: html"], rows["claude-code-log"]
    speed, cpu = ccl["wall"] / ours["wall"], ccl["cpu"] / ours["cpu"]
    memory = ours["rss"] / ccl["rss"]
    lines = [f"## Export ({r['session']}, {r['mb']:.0f} MB, medians of {r['runs']} runs)", "",
             "| what | target | measured | |", "|---|---|---|---|",
             f"| HTML export vs claude-code-log, wall time | ≥ 5× faster | ×{speed:.1f} "
             f"(CPU ×{cpu:.1f}) | {verdict(speed, 5, False)} |",
             f"| HTML export peak RSS vs claude-code-log | ≤ 1/5 | {memory:.2f} "
             f"({ours['rss']:.0f} vs {ccl['rss']:.0f} MB) | {verdict(memory, 0.2)} |"]
    if r["mb"] > 50:
        lines.append(f"| HTML export peak RSS | ≤ 250 MB | {ours['rss']:.0f} MB | "
                     f"{verdict(ours['rss'], 250)} |")
    lines += ["", "| tool | wall time | CPU time | peak RSS | output |", "|---|---|---|---|---|"]
    for label, x in rows.items():
        lines.append(f"| {label} | {ms(x['wall'])} | {ms(x['cpu'])} | {x['rss']:.0f} MB | "
                     f"{x['bytes'] / 2**20:.0f} MB |")
    lines += ["", "Each command is a new process, as a user runs it (`session-viewer export FILE -o "
              "out.html`, `claude-code-log FILE -o out.html --no-cache`, `claude-code-transcripts json "
              "FILE -o dir`); CPU time is user + system. Our HTML highlights code blocks up to "
              "4,000 characters (longer ones are shown plain).", ""]
    return lines
