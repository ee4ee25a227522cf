"""The bench's sections, each saved as soon as it ends, and BENCHMARKS.md assembled from what was saved.

Why it is shaped so: a whole `make bench` takes about half an hour, and the live section runs last.
When the report was written only at the end, one failing section (or a Ctrl-C) lost every figure
measured before it. Now each section's figures are written to `<out>/sections/<name>.json` the
moment it ends, whether it passed or failed, and the report is drawn from those files:

* a failing section is a record with its error (the end of its traceback), the figures of its
  parts that did finish (a section fills the dict it is given as it goes), and the command that
  runs it alone; the report says it failed, and draws every other section;
* `--only SECTION` runs that section again and replaces its record only, so the report keeps the
  others' last figures; every record says from which commit, when, and by which command its
  figures are, and the report's first table shows it.

The report is always drawn from the saved JSON, never from the objects in memory, so what a re-run
draws is what a whole run draws (tuples come back as lists, int keys as strings).

This module knows nothing of what a section measures: `run` runs a function and saves its record,
`assemble` draws records with the drawing blocks it is given. `bench/__main__.py` wires them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import traceback
from pathlib import Path

ERROR_LINES = 30  # of a failure's traceback kept in its record (its end: where it failed)


def commit(root: Path) -> str:
    """The short commit the bench runs at, with "+ changes" when tracked files differ from it
    (BENCHMARKS.md aside: writing the report must not make the next section's figures look dirty)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--", ".",
                                ":(exclude)BENCHMARKS.md"]).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" + changes" if dirty else "")


def _utc(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))


class Store:
    """The records of a bench's sections: one JSON file each in `folder`."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def save(self, record: dict) -> None:
        """Write one section's record at once (a temporary file renamed over the old one: an
        interrupted write never leaves half a record)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{record['section']}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(record, indent=1, default=str))
        os.replace(tmp, path)

    def load(self) -> dict[str, dict]:
        """{section: record} of every saved section; a file that cannot be read is a failed record
        saying so (never a crash of the report)."""
        records = {}
        for path in sorted(self.folder.glob("*.json")):
            try:
                record = json.loads(path.read_text())
                if not isinstance(record, dict) or record.get("section") != path.stem:
                    raise ValueError("not a section's record")
            except (OSError, ValueError) as e:
                record = {"section": path.stem, "status": "failed", "results": {},
                          "error": f"its saved figures ({path.name}) could not be read: {e}"}
            records[path.stem] = record
        return records

    def run(self, name: str, fn, **meta) -> dict:
        """Run `fn(got)` — it puts its figures into the dict `got` as it measures them — and save
        the section's record at once: status "ok", or "failed" with the error and whatever `got`
        holds by then. `meta` (commit, command, rerun, runs, quick) goes into the record. A
        KeyboardInterrupt is saved as a failure too, then raised again."""
        got: dict = {}
        started = time.time()
        record = {"section": name, **meta, "started": started}
        try:
            fn(got)
        except KeyboardInterrupt:
            self.save({**record, "status": "failed", "results": got, "error": "interrupted (Ctrl-C)",
                       "finished": time.time()})
            raise
        except Exception:
            lines = traceback.format_exc().rstrip().splitlines()
            record.update(status="failed", error="\n".join(lines[-ERROR_LINES:]))
        else:
            record.update(status="ok", error=None)
        record.update(results=got, finished=time.time())
        self.save(record)
        return record


def _took(record: dict) -> str:
    try:
        s = record["finished"] - record["started"]
    except (KeyError, TypeError):
        return ""
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min"


def _first_line(error: str) -> str:
    last = (error or "").strip().splitlines()[-1:] or ["(no error text)"]
    text = last[0].replace("|", "\\|").replace("`", "'")
    return text if len(text) <= 120 else text[:117] + "…"


def _fenced(text: str) -> list[str]:
    """`text` in a code fence longer than any run of backticks in it."""
    fence = "```"
    while fence in text:
        fence += "`"
    return [fence, text, fence]


def table(records: dict[str, dict], order: list[str]) -> list[str]:
    """Which section's figures are from which commit, when, and by which command."""
    lines = ["| section | figures | commit | finished | took | run by |", "|---|---|---|---|---|---|"]
    for name in order:
        rec = records.get(name)
        if rec is None:
            continue
        if rec.get("status") == "ok":
            state = "✅ below"
        else:
            state = f"❌ failed: {_first_line(rec.get('error'))}"
        when = _utc(rec["finished"]) if isinstance(rec.get("finished"), (int, float)) else "?"
        cmd = f"`{rec['command']}`" if rec.get("command") else ""
        lines.append(f"| {name} | {state} | {rec.get('commit', '?')} | {when} | {_took(rec)} | {cmd} |")
    return lines + [""]


def failures(records: dict[str, dict], order: list[str]) -> list[str]:
    """A block per failed section: its error and the command that runs it alone."""
    lines = []
    for name in order:
        rec = records.get(name)
        if rec is None or rec.get("status") == "ok":
            continue
        when = _utc(rec["finished"]) if isinstance(rec.get("finished"), (int, float)) else "?"
        got = rec.get("results") or {}
        if len(got) == 1 and isinstance(next(iter(got.values())), dict):
            got = next(iter(got.values()))  # one key (the live section's): name its parts
        parts = [k for k, v in got.items() if v]
        kept = (f" The figures of its parts that finished ({', '.join(parts)}) are drawn below."
                if parts else " It left no figures.")
        lines += [f"## Failed: {name}", "",
                  f"Run at {rec.get('commit', '?')}, {when}, by `{rec.get('command', '?')}`, "
                  f"after {_took(rec) or '?'}.{kept}", "", *_fenced(rec.get("error") or ""), ""]
        if rec.get("rerun"):
            lines += [f"Run it alone again: `{rec['rerun']}` (the other sections' figures are kept).", ""]
    return lines


def assemble(records: dict[str, dict], order: list[str], blocks, head: list[str]) -> str:
    """The report: `head`, the table of where each section's figures come from, the failures,
    then each drawing block. `blocks` is a list of (sections it draws, fn(results) -> lines), where
    results merges every record's figures (a failed section's finished parts among them). A block
    that cannot draw what was saved (a record from an older bench) says so and names the command
    that measures it again; the other blocks are drawn."""
    order = list(order) + sorted(set(records) - set(order))
    results: dict = {}
    for name in order:
        if name in records:
            results.update(records[name].get("results") or {})
    lines = [*head, *table(records, order), *failures(records, order)]
    for names, draw in blocks:
        try:
            lines += draw(results)
        except Exception as e:  # one stale record must not cost the whole report
            reruns = [records[n]["rerun"] for n in names if records.get(n, {}).get("rerun")]
            lines += [f"*The saved figures of {', '.join(names)} could not be drawn "
                      f"({type(e).__name__}: {e}); run {'it' if len(names) == 1 else 'them'} again"
                      + (f": `{reruns[0]}`" if reruns else "") + ".*", ""]
    return "\n".join(lines)
