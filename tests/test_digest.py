"""A format's digest (model.Digest: what the index pass keeps of a plain record, told without
building its Event) must say exactly what the Event says — record by record over the corpus, the
fixtures, generated sessions and mutated records, and as whole indexes built both ways.

If this fails after a change to an adapter, the adapter's `digest` did not follow the change: make it
(or make it return None for the shape that changed)."""

import json
import math
import random

import pytest

from viewer import formats
from viewer.formats import detect
from viewer.index import SessionIndex, ThreadIndex, _content, digested, epoch, safe_event
from viewer.model import Digest, Ref
from viewer.store import Store

from conftest import CORPUS, ROOT, write_claude_session
from test_fuzz import mutate_record, samples

DIGESTING = [a for a in formats.ADAPTERS if hasattr(a, "digest")]


def facts(adapter, ev, ts):
    """Everything the index pass reads of an event (or a digest)."""
    th = ThreadIndex("main", "x", adapter.NAME, "jsonl")
    uses = [(b.id, b.name, b.status, b.started, b.ended) for b in ev.blocks if b.kind == "tool_use"]
    results = [(b.tool_use_id, bool(b.is_error), b.state) for b in ev.blocks
               if b.kind == "tool_result"]
    return {
        "role": ev.role, "kind": ev.kind, "source_id": ev.source_id, "hidden": bool(ev.hidden),
        "ts": None if ts is None or (isinstance(ts, float) and math.isnan(ts)) else ts,
        "author": ev.author, "model": ev.model, "usage": ev.usage, "message_id": ev.message_id,
        "content": _content(adapter, th, 0, ev), "prompts": dict(th.prompts),
        "title": formats.hook(adapter, "title_of", ev), "uses": uses, "results": results,
        "running": list(ev.running), "spawns": dict(ev.spawns), "states": dict(ev.states),
        "permission": ev.permission,
    }


def check(adapter, rec) -> bool:
    """Whether the adapter digested `rec`; fails if the digest and the Event disagree."""
    d = digested(adapter.digest, rec)
    if d is None:
        return False
    assert isinstance(d, Digest)
    ev = safe_event(adapter, rec, Ref("main", 1, 0, 10))
    assert facts(adapter, d, d.ts) == facts(adapter, ev, epoch(ev.timestamp)), rec
    return True


def records():
    """(adapter, record) of every digesting format: the corpus and fixtures' lines, every line of
    a generated Claude Code session, and mutations of them all."""
    by_format = samples()
    r = random.Random(13)
    for adapter in DIGESTING:
        recs = by_format.get(adapter.NAME, [])
        for rec in recs:
            yield adapter, rec
        for rec in recs * 6:
            yield adapter, mutate_record(rec, r, 0.15)


def test_digests_say_what_events_say():
    digested = {a.NAME: 0 for a in DIGESTING}
    for adapter, rec in records():
        digested[adapter.NAME] += check(adapter, rec)
    assert all(n > 20 for n in digested.values()), digested  # the plain shapes are digested


def test_generated_sessions_are_mostly_digested(tmp_path):
    path = tmp_path / "s.jsonl"
    write_claude_session(path, 300_000)
    adapter = formats.get("claude-code")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert sum(check(adapter, rec) for rec in lines) >= 0.9 * len(lines)


def index_both_ways(path, monkeypatch):
    with_digest = SessionIndex(path).build()
    with monkeypatch.context() as m:
        for adapter in DIGESTING:
            m.delattr(adapter, "digest")
        without = SessionIndex(path).build()
    return with_digest, without


def columns(idx):
    out = {}
    for name, th in idx.threads.items():
        out[name] = (th.ids, list(th.offsets), list(th.lines), th.roles, th.kinds, th.authors,
                     bytes(th.content), th.ts.tobytes(), bytes(th.hidden), th.prompts, th.last_boundary)
    return out


@pytest.mark.parametrize("fmt", [a.NAME for a in DIGESTING])
def test_indexes_built_with_and_without_digests_are_the_same(fmt, tmp_path, monkeypatch):
    paths = []
    for base in (CORPUS, ROOT / "test_data"):
        for ref in Store([base]).sessions():
            found = detect.detect_file(ref.path)
            if found.format == fmt and found.mode == "jsonl":
                paths.append(ref.path)
    if fmt == "claude-code":
        write_claude_session(tmp_path / "gen.jsonl", 200_000)
        paths.append(tmp_path / "gen.jsonl")
    assert paths
    for path in paths:
        a, b = index_both_ways(path, monkeypatch)
        assert columns(a) == columns(b), path
        assert a.calls.calls == b.calls.calls and a.calls.orphans == b.calls.orphans, path
        assert a.summary == b.summary, path
        assert a.usage.summary() == b.usage.summary(), path


def test_a_sink_gets_events_not_digests(tmp_path):
    path = tmp_path / "s.jsonl"
    write_claude_session(path, 50_000)
    idx = SessionIndex(path)
    got = []
    idx.sink = lambda thread, seq, ev: got.append(ev)
    idx.build()
    assert got and not any(isinstance(ev, Digest) for ev in got)
    assert [ev.id for ev in got] == idx.threads["main"].ids
