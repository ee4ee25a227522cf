"""Benchmarks of the hostile-input paths (issue 14): a huge line that is not JSON, and "show all" /
media of a huge cut string. Run on its own:

    python -m bench --only hardening        (or: python -m bench.hardening [--runs 5] [--sizes 12,25,50])

Prints a Markdown section (medians of --runs, and Python's peak allocations while each ran):
  * skimming one huge non-JSON line of 12 / 25 / 50 MB (the cost once grew with the square of its
    size: 50 MB took 6.4 s) — it must stay flat, one chunk read;
  * every view of a session holding such a line after its index is built (page, permalink, JSON
    twin, 4 views at once) — the line must not be read again;
  * streaming "show all" (?raw=1) and media of a 50 MB cut string — memory must stay flat.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

from viewer import reader
from viewer.web import create_app


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def measured(fn, runs: int) -> tuple[float, float]:
    """(median seconds, peak MB allocated by Python during the slowest kind of run)."""
    times, peak = [], 0
    for _ in range(runs):
        tracemalloc.start()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return median(times), peak / 2**20


def huge_line_session(root: Path, mb: int) -> None:
    folder = root / f"plain-{mb}mb"
    folder.mkdir(parents=True)
    with open(folder / "messages.jsonl", "wb") as f:
        f.write(b'{"type": "user", "content": "before", "timestamp": 1761073190.0, '
                b'"session_id": "s"}\n')
        f.write(b"x" * (mb << 20) + b"\n")
        f.write(b'{"type": "assistant", "content": "after", "timestamp": 1761073191.0, '
                b'"session_id": "s"}\n')


def cut_string_session(root: Path, mb: int) -> None:
    project = root / "p"
    project.mkdir(parents=True)
    payload = base64.b64encode(bytes(range(256)) * ((mb << 20) // 256 * 3 // 4))
    with open(project / "big.jsonl", "wb") as f:
        f.write(b'{"type": "user", "uuid": "u1", "sessionId": "s", "parentUuid": null, '
                b'"timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": ['
                b'{"type": "text", "text": "' + b"word " * ((mb << 20) // 5) + b'"}, '
                b'{"type": "image", "source": {"type": "base64", "media_type": "image/png", '
                b'"data": "' + payload + b'"}}]}}\n')


def drain(c, url: str) -> int:
    r = c.get(url, buffered=False)
    n = sum(len(piece) for piece in r.response)
    r.close()
    return n


def run(runs: int, sizes: list[int]) -> dict:
    """Every figure of the section, as numbers (see the module doc)."""
    result: dict = {"runs": runs, "lines": [], "streams": []}
    with tempfile.TemporaryDirectory(prefix="bench-hardening-") as tmp:
        tmp = Path(tmp)
        for mb in sizes:
            huge_line_session(tmp / "roots", mb)
            path = tmp / "roots" / f"plain-{mb}mb" / "messages.jsonl"
            offset = path.read_bytes().index(b"\n") + 1

            def skim(path=path, offset=offset, mb=mb):
                with open(path, "rb") as f:
                    reader.skim(f, offset, mb << 20)

            t_skim, m_skim = measured(skim, runs)
            app = create_app({"ROOTS": [str(tmp / "roots" / f"plain-{mb}mb")],
                              "CACHE_DIR": str(tmp / f"cache-{mb}"), "WATCH": False,
                              "INDEX_ALL": False})
            c = app.test_client()
            key = f"plain-{mb}mb"
            t = time.perf_counter()
            assert c.get(f"/s/{key}").status_code == 200
            t_index = time.perf_counter() - t
            t_view, _ = measured(lambda: [c.get(u) for u in (f"/s/{key}", f"/s/{key}/m/L2",
                                                             f"/s/{key}.json")], runs)

            def four():
                threads = [threading.Thread(target=c.get, args=(f"/s/{key}",)) for _ in range(4)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()

            t_four, m_four = measured(four, runs)
            result["lines"].append({"mb": mb, "skim": t_skim, "skim_peak_mb": m_skim,
                                    "first_view": t_index, "view": t_view / 3, "four": t_four,
                                    "four_peak_mb": m_four})
        mb = max(sizes)
        cut_string_session(tmp / "cut", mb)
        app = create_app({"ROOTS": [str(tmp / "cut")], "CACHE_DIR": str(tmp / "cache-cut"),
                          "WATCH": False, "INDEX_ALL": False})
        c = app.test_client()
        assert c.get("/s/p~big").status_code == 200
        for label, url in (("show all (?raw=1), text", "/s/p~big/e/u1/full/b0?raw=1"),
                           ("media, decoded from base64", "/s/p~big/e/u1/media/b1")):
            sent = []
            t, m = measured(lambda url=url: sent.append(drain(c, url)), runs)
            result["streams"].append({"what": label, "from_mb": mb, "sent_mb": sent[-1] / 2**20,
                                      "time": t, "peak_mb": m})
    return result


def report(r: dict) -> list[str]:
    sizes = ",".join(str(x["mb"]) for x in r["lines"])
    out = ["## Hostile input (issue 14)", "",
           f"`python -m bench --only hardening` (or `python -m bench.hardening --runs {r['runs']} "
           f"--sizes {sizes}`); medians, and the peak of Python's allocations (tracemalloc) during "
           "the runs. Before the fix one skim cost 0.3 s / 1.75 s / 6.4 s at 12 / 25 / 50 MB, on "
           "every view, and 4 views at once took 22–25 s each and 475 MB.", "",
           "| huge non-JSON line | skim | peak alloc | first view (indexes) | later view | "
           "4 views at once |", "|---|---|---|---|---|---|"]
    for x in r["lines"]:
        out.append(f"| {x['mb']} MB | {x['skim'] * 1000:.1f} ms | {x['skim_peak_mb']:.1f} MB | "
                   f"{x['first_view'] * 1000:.0f} ms | {x['view'] * 1000:.1f} ms | "
                   f"{x['four'] * 1000:.0f} ms ({x['four_peak_mb']:.1f} MB) |")
    out += ["", "| streamed from a cut string | sent | time | peak alloc |", "|---|---|---|---|"]
    for x in r["streams"]:
        out.append(f"| {x['what']} ({x['from_mb']} MB line) | {x['sent_mb']:.0f} MB | "
                   f"{x['time'] * 1000:.0f} ms | {x['peak_mb']:.1f} MB |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.hardening")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="12,25,50", help="sizes of the huge line, in MB")
    args = ap.parse_args(argv)
    print("\n".join(report(run(args.runs, [int(s) for s in args.sizes.split(",")]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
