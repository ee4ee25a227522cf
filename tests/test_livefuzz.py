"""The live-path fuzzer (tests/livefuzz.py), bounded: a session written a piece at a time must read
as one fresh read of its final files (index, events as drawn, ids, the stream, the full-text rows).

One case per format and mode, of the seed with the most companion files (Claude Code's sub-agents,
legion's state.json, a Wolo folder): some 15 cases, a few seconds. The long run is the script:
    .venv/bin/python tests/livefuzz.py --cases 3 --minutes 10 [--fts]"""

import random

import pytest

from fuzzer import seeds
from livefuzz import run_case


def _chosen(all_seeds):
    """One seed per format and mode, the one with the most companion files (a session's live path
    differs by what it is made of, not by how long it is)."""
    best = {}
    for s in all_seeds:
        if s.row:  # (a database's rows are not written a piece at a time: livefuzz.py leaves them out)
            continue
        k = (s.fmt, s.mode)
        if k not in best or len(s.files) > len(best[k].files):
            best[k] = s
    return list(best.values())


_SEEDS = {s.name: s for s in _chosen(seeds())}


@pytest.mark.parametrize("name", sorted(_SEEDS))
def test_a_session_written_in_pieces_reads_as_one_read_of_it(name, tmp_path):
    seed = _SEEDS[name]
    r = random.Random(f"live:0:{name}")
    case, problems = run_case(seed, 0, tmp_path / "w", r, fts=name.endswith(".jsonl") and r.random() < 0.5)
    assert problems == [], case.describe()
    assert case.checked  # (compared with a fresh read, not left before its first check)
