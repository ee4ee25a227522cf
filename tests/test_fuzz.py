"""Hostile shapes: real records of every format with values swapped for the wrong types (lists where
text was, objects where numbers were…). Every page must still render, and no adapter or template may
fail on them — a failure is logged at ERROR, which this test watches for.

And the mutation fuzzer (tests/fuzzer.py) over every seed session, a fixed number of cases each
(FUZZ_CASES, default 1; the script runs it for as long as one likes): no exception, no 5xx, no hang,
nothing logged at ERROR, every line of a JSONL file an event, hidden bookkeeping or an unparsed card."""

import json
import logging
import os
import random
from collections import defaultdict

import pytest

from viewer import formats
from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.store import Store
from viewer.web import create_app

from conftest import CORPUS, ROOT
from fuzzer import FIXTURES, Errors, Run, row_seed_names, seeds

WEIRD = [None, True, 0, -1, 1.5, 10**30, "", "x", "<b>", [], {}, [1, "a"], {"a": [None]}, "\x1b[1m",
         "2025-01-01T00:00:00Z", "text", "tool_use", float("nan")]


def samples() -> dict[str, list]:
    """Records of every format, from the corpus and the fixtures."""
    out = defaultdict(list)
    for base in (CORPUS, ROOT / "test_data"):
        for ref in sorted(Store([base]).sessions(), key=lambda ref: ref.path):  # not by mtime:
            # a checkout's file times differ from clone to clone, and so would the samples
            found = detect.detect_file(ref.path)
            if found.format == "unknown":
                continue
            if found.mode == "jsonl":
                with open(ref.path, encoding="utf-8") as f:
                    for line in f.read().splitlines()[:60]:
                        try:
                            out[found.format].append(json.loads(line))
                        except ValueError:
                            pass  # the deliberately broken lines of the fixtures
            else:
                recs = detect.records_for(formats.get(found.format), detect.read_document(ref.path))
                out[found.format] += [r for _, r in (recs or [])[:60]]
    return out


def mutate_record(rec, r: random.Random, p: float):
    """A record with some values swapped, and always one top-level field turned into a
    container (the class of bug where `value in {…}` meets a list)."""
    if not isinstance(rec, dict) or not rec:
        return mutate(rec, r, p)
    out = {k: mutate(v, r, p) for k, v in rec.items()}
    out[r.choice(sorted(out))] = r.choice([[], {}, [1, "a"], {"a": [None]}])
    return out


def mutate(value, r: random.Random, p: float):
    if r.random() < p:
        return r.choice(WEIRD + ["str" if isinstance(value, (dict, list)) else value])
    if isinstance(value, dict):
        return {k: mutate(v, r, p) for k, v in value.items()}
    if isinstance(value, list):
        return [mutate(v, r, p) for v in value]
    return value


@pytest.fixture(scope="module")
def corpus_records():
    return samples()


@pytest.mark.parametrize("seed", range(12))
def test_wrong_types_everywhere_never_break_a_page(seed, corpus_records, tmp_path):
    r = random.Random(seed)
    errors = Errors()
    logging.getLogger().addHandler(errors)
    try:
        for fmt in sorted(corpus_records):
            recs = r.sample(corpus_records[fmt], min(6, len(corpus_records[fmt])))
            recs = [mutate_record(x, r, r.choice([0.05, 0.2, 0.4])) for x in recs]
            root = tmp_path / fmt
            (root / "s").mkdir(parents=True)
            (root / "s" / "messages.jsonl").write_text(
                "".join(json.dumps(x, default=str) + "\n" for x in recs))
            app = create_app({"ROOTS": [str(root)], "NO_CACHE": True, "WATCH": False})
            store = app.extensions["viewer"].store
            store._memory["s"] = SessionIndex(store.get("s").path, fmt).build()  # as this format
            c = app.test_client()
            for url in ("/s/s", "/s/s.json", "/"):
                assert c.get(url).status_code == 200, (fmt, url)
            first = store._memory["s"].threads["main"].ids[0]
            assert c.get(f"/s/s/m/{first}").status_code == 200
    finally:
        logging.getLogger().removeHandler(errors)
    assert [e.getMessage() for e in errors.records] == []


FUZZ_CASES = int(os.environ.get("FUZZ_CASES", "1"))
_SEED_NAMES = [s.name for s in seeds()] + [f"fixture/{m}-{n}{d}" for m, n, doc in FIXTURES
                                          for d in (("", "-doc") if doc else ("",))] + row_seed_names()


@pytest.fixture(scope="module")
def fuzz_run(tmp_path_factory):
    run = Run(seeds(tmp_path_factory.mktemp("fixtures")), FUZZ_CASES, 0,
              tmp_path_factory.mktemp("fuzz"))
    yield run
    run.close()


@pytest.mark.parametrize("name", _SEED_NAMES)
def test_mutated_sessions_never_crash_nor_lose_a_line(name, fuzz_run):
    found = []
    ran = fuzz_run.drive(name, lambda case, problem: found.append(f"{case.describe()}\n{problem}"))
    assert ran == FUZZ_CASES
    assert found == []


def test_mutated_sessions_together_make_a_list_and_a_search(fuzz_run):
    assert fuzz_run.archive() == []
