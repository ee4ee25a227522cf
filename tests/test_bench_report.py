"""`make bench` keeps what it measured when a section fails, and `--only` re-runs one section.

The bench's own sections are replaced by fakes (no server, no data is made): what is tested is the
wiring of `python -m bench` — each section saved as it ends, BENCHMARKS.md assembled from the saved
records, a failure reported with its error and the command that runs it alone, a re-run keeping the
others' figures with their commit and time — and that the real drawing blocks draw saved JSON.
"""

from __future__ import annotations

import json
import re

import pytest

import bench.__main__ as bench
from bench import sections


class Fakes:
    """Two fake sections, alpha and beta, whose figures and failure the test sets."""

    def __init__(self):
        self.alpha = 11.0
        self.beta_fails = True
        self.ran = []

    def alpha_section(self, c, got):
        self.ran.append("alpha")
        got["alpha"] = {"ms": self.alpha}

    def beta_section(self, c, got):
        self.ran.append("beta")
        got["beta"] = {"first part ms": 7.0}  # a part that finished before the failure
        if self.beta_fails:
            raise RuntimeError("the live server did not answer in 120 s")
        got["beta"]["second part ms"] = 9.0


@pytest.fixture
def fake_bench(monkeypatch, tmp_path):
    fakes = Fakes()
    monkeypatch.setattr(bench, "SECTIONS", {"alpha": ("alpha figures", fakes.alpha_section),
                                            "beta": ("beta figures", fakes.beta_section)})
    monkeypatch.setattr(bench, "BLOCKS", [
        (("alpha",), lambda r: [f"## Alpha", f"alpha took {r['alpha']['ms']:.0f} ms", ""]
         if r.get("alpha") else []),
        (("beta",), lambda r: ["## Beta", *(f"{k}: {v:.0f}" for k, v in r["beta"].items()), ""]
         if r.get("beta") else []),
    ])
    monkeypatch.setattr(bench, "prepare", lambda out, sizes, many: {})
    commits = iter(["aaaa111", "bbbb222", "cccc333"])
    monkeypatch.setattr(sections, "commit", lambda root: next(commits))
    fakes.out = tmp_path / "out"
    fakes.report = tmp_path / "BENCHMARKS.md"
    fakes.args = ["--out", str(fakes.out), "--report", str(fakes.report)]
    return fakes


def row(report: str, name: str) -> str:
    """The provenance table's row of section `name`."""
    return next(line for line in report.splitlines() if line.startswith(f"| {name} |"))


def test_a_failing_section_is_reported_as_failed_and_the_others_are_kept(fake_bench):
    rc = bench.main(fake_bench.args)
    assert rc == 1  # the run says something failed
    text = fake_bench.report.read_text()
    # alpha's figures are in the report, beta's failure with its error and the command to re-run it
    assert "alpha took 11 ms" in text
    assert "❌ failed: RuntimeError: the live server did not answer in 120 s" in row(text, "beta")
    assert "✅" in row(text, "alpha") and "aaaa111" in row(text, "alpha")
    assert "## Failed: beta" in text
    assert "raise RuntimeError" in text  # the end of its traceback
    assert (f'make bench ARGS="--only beta --out {fake_bench.out} --report {fake_bench.report}"'
            in text)
    # the part of beta that finished before it failed is drawn, and said to be
    assert "first part ms: 7" in text and "(first part ms) are drawn below" in text
    # each section was saved on its own, as it ended
    saved = {p.stem: json.loads(p.read_text()) for p in (fake_bench.out / "sections").glob("*.json")}
    assert saved["alpha"]["status"] == "ok" and saved["beta"]["status"] == "failed"


def test_a_failure_does_not_stop_the_sections_after_it(fake_bench, monkeypatch):
    monkeypatch.setattr(bench, "SECTIONS", {"beta": ("beta", fake_bench.beta_section),
                                            "alpha": ("alpha", fake_bench.alpha_section)})
    bench.main(fake_bench.args)
    assert fake_bench.ran == ["beta", "alpha"]
    assert "alpha took 11 ms" in fake_bench.report.read_text()


def test_only_reruns_one_section_and_keeps_the_others_figures_with_their_commit(fake_bench):
    bench.main(fake_bench.args)
    first = fake_bench.report.read_text()
    # the failing section is fixed and run alone
    fake_bench.beta_fails = False
    fake_bench.alpha = 99.0  # would show if alpha ran again
    fake_bench.ran.clear()
    assert bench.main([*fake_bench.args, "--only", "beta"]) == 0
    assert fake_bench.ran == ["beta"]
    text = fake_bench.report.read_text()
    assert "first part ms: 7" in text and "second part ms: 9" in text
    assert "## Failed" not in text
    assert "✅" in row(text, "beta") and "bbbb222" in row(text, "beta")
    assert "--only beta" in row(text, "beta")  # by which command
    # alpha: the figures, commit, time and command of its own (first) run
    assert "alpha took 11 ms" in text and "alpha took 99" not in text
    assert row(text, "alpha") == row(first, "alpha")
    assert "aaaa111" in row(text, "alpha")


def test_an_interrupted_run_still_writes_what_ended(fake_bench, monkeypatch):
    def interrupted(c, got):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "SECTIONS", {"alpha": ("alpha", fake_bench.alpha_section),
                                            "beta": ("beta", interrupted)})
    with pytest.raises(KeyboardInterrupt):
        bench.main(fake_bench.args)
    text = fake_bench.report.read_text()
    assert "alpha took 11 ms" in text
    assert "❌ failed: interrupted (Ctrl-C)" in row(text, "beta")


def test_only_refuses_a_section_that_does_not_exist(fake_bench, capsys):
    with pytest.raises(SystemExit):
        bench.main([*fake_bench.args, "--only", "gamma"])
    assert "invalid choice: 'gamma'" in capsys.readouterr().err


def test_a_block_that_cannot_draw_its_saved_figures_says_so_and_the_others_are_drawn(tmp_path):
    store = sections.Store(tmp_path)
    store.run("list", lambda got: got.update(list={"sessions": 5}), commit="old1234",
              command="make bench", rerun='make bench ARGS="--only list"')  # an older shape
    store.run("hardening", lambda got: got.update(hardening={
        "runs": 1, "lines": [{"mb": 12, "skim": 0.001, "skim_peak_mb": 1.0, "first_view": 0.2,
                              "view": 0.01, "four": 0.3, "four_peak_mb": 2.0}],
        "streams": []}), commit="new5678", command="make bench", rerun="")
    (tmp_path / "broken.json").write_text("{not json")
    text = bench.report(store.load())
    assert "The saved figures of list could not be drawn (KeyError: 'cold_first_page')" in text
    assert 'make bench ARGS="--only list"' in text
    assert "| 12 MB | 1.0 ms |" in text  # hardening drawn all the same
    assert re.search(r"\| broken \| ❌ failed: .*could not be read", text)


def test_the_real_blocks_draw_figures_saved_as_json(tmp_path):
    """Saved figures come back with int keys as strings and tuples as lists: the archive's
    session counts and the live tail's stream counts are drawn from them as from a fresh run."""
    store = sections.Store(tmp_path)
    search = {"ms": 40.0, "q": "x", "sessions": 3, "events": 9}
    archive = {"passes": {"sessions": 2000, "mb": 412.0, "index_s": 2.0, "index_mbs": 200.0,
                          "index_fts_s": 3.0, "index_fts_mbs": 130.0, "catch_up_s": 1.0,
                          "catch_up_mbs": 400.0, "db_mb": 90.0},
               "roots": {2000: {"mb": 412.0, "build": {"seconds": 9.0, "peak_rss_mb": 180.0, "complete": True},
                                "warm": {"search": {"a word": search}, "list_ms": 50.0,
                                         "list_json_ms": 40.0, "list_first_ms": 60.0}}}}
    latency = [{"name": "small session", "p50": 15.0, "p95": 26.0, "max": 30.0, "n": 50,
                "others_received": (50, 50)}]
    store.run("archive", lambda got: got.update(archive=archive), commit="c1", command="make bench")
    store.run("live", lambda got: got.update(live={"latency": latency}), commit="c1", command="make bench")
    text = bench.report(store.load())
    assert "could not be drawn" not in text
    assert "### 2,000 sessions (412 MB)" in text
    assert "(the 49 other streams each got all 50 messages)" in text


def test_real_claude_code_lines_are_copied_with_ids_of_their_own(tmp_path):
    """The index pass's row on real lines: two copies of corpus sessions index as twice the events,
    none of the second copy's ids taken for the first's (a repeated id is filed another way)."""
    from bench import generate
    from viewer.index import SessionIndex

    from conftest import CORPUS

    files = sorted((CORPUS / "claude-code").glob("*/messages.jsonl"))[:3]
    one = generate.corpus_copies(files, tmp_path / "one" / "s.jsonl", 1)
    size = one.stat().st_size
    two = generate.corpus_copies(files, tmp_path / "two" / "s.jsonl", size + 1)
    assert two.stat().st_size > size
    a, b = SessionIndex(one).build(), SessionIndex(two).build()
    assert len(b.threads["main"]) == 2 * len(a.threads["main"])

    def own(idx) -> int:  # ids taken from the lines, not given by line number
        return sum(1 for k in idx.ids if not (k[:1] == "L" and k[1:].isdigit()))

    assert own(a) > 100 and own(b) == 2 * own(a)


def test_copies_of_empty_files_say_so_instead_of_writing_forever(tmp_path):
    """Files that hold no line can never reach the target: the bench says so, where it wrote
    nothing, forever."""
    from bench import generate

    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(ValueError, match="no lines"):
        generate.corpus_copies([tmp_path / "empty.jsonl"], tmp_path / "out" / "s.jsonl", 1)


def test_the_first_screen_block_draws_the_real_lines_row():
    from bench import firstscreen

    real = {"name": "claude-code-corpus", "mb": 40.0, "sessions": 7, "lines": 14000,
            "orjson_s": 0.07, "pass_s": 0.175, "ratio": 0.4}
    listing = {"sessions": 2000, "cold_first_page": 0.1, "cold_all_pages": 1.0, "warm_first_page": 0.05}
    text = "\n".join(firstscreen.report({"rows": [], "list": listing, "real": real},
                                        lambda s: f"{s * 1000:.0f} ms", lambda *a: "❌"))
    assert "| index pass vs orjson per line, Claude Code lines of real sessions (40 MB) | ≥ 75 % | 40% | ❌ |" in text
    assert "Claude Code sessions of ../shared/corpus" in text and "14,000 lines" in text
