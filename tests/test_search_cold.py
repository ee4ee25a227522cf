"""A search before the session's index exists (`search.QuickScan`): the byte prefilter over the file
itself and the few lines it keeps read alone. Whatever it answers must be exactly what the indexed
scan answers — same hits, same ids (`L<line>` ones included), same order — and where it cannot be
sure it must decline, never guess."""

import json
import random
import re

from viewer import search as search_mod
from viewer.index import SessionIndex
from viewer.search import Matcher, Query, QuickScan, raw_candidates, search

from conftest import CORPUS, SESSIONS, held_app
from test_search import legion_line, write_session


def indexed(path, query):
    return [h.as_dict() for h in search(SessionIndex(path).build(), query)]


def quick(path, query):
    return QuickScan(str(path), Matcher(query)).run()


def same(path, text, **kw):
    """The quick scan's answer, checked against the indexed scan's; None when it declined."""
    q = Query(text, **kw)
    scan = quick(path, q)
    if not scan.ok:
        return None
    got = [h.as_dict() for h in scan]
    assert got == indexed(path, q), (path, text)
    assert scan.complete and scan.hits == len(got)
    return got


def test_escapes_and_case_are_found_as_the_indexed_scan_finds_them(tmp_path):
    path = write_session(tmp_path / "s", [
        legion_line(0, 'He said "stop" and left'),
        legion_line(1, "line one\nline two"),
        legion_line(2, "un café noir"),  # \u00e9 in the file
        legion_line(3, "tab\there"),
        r'{"type": "user", "content": "see a\/b and \u003ctag\u003e and \u00C9T\u00c9", "session_id": "s"}',
        legion_line(5, "nothing to see"),
    ])
    text = path.read_text()
    assert "\\u00e9" in text and '\\"stop\\"' in text and "\\n" in text
    for needle, expect in [('said "stop"', ["m0"]), ("one\nline two", ["m1"]), ("café", ["m2"]),
                           ("CAFÉ", ["m2"]), ("tab\there", ["m3"]), ("A/B", ["L5"]),
                           ("<TAG>", ["L5"]), ("été", ["L5"]), ("nothing", ["m5"])]:
        got = same(path, needle)
        assert got is not None and [h["id"] for h in got] == expect, needle
    assert same(path, "CAFÉ", case=True) == []
    assert same(path, "\\u00e9") == [] and same(path, "\\n") == []  # escapes are not text
    assert same(path, "session_id") == []  # nor are field names


def test_lines_are_counted_across_chunks_and_crlf(tmp_path, monkeypatch):
    monkeypatch.setattr(search_mod, "CHUNK", 256)  # many chunk boundaries, matches across them
    lines = [legion_line(i, f"filler {i} " + "x" * (i * 7 % 300)) for i in range(60)]
    for i in (0, 7, 31, 59):
        lines[i] = {k: v for k, v in legion_line(i, f"the needle sits at {i} " + "y" * 400).items()
                    if k != "message_id"}  # no source id: the event is named by its line
    path = write_session(tmp_path / "s", lines)
    got = same(path, "NEEDLE SITS")
    assert [h["id"] for h in got] == ["L1", "L8", "L32", "L60"]
    crlf = tmp_path / "crlf" / "messages.jsonl"
    crlf.parent.mkdir()
    crlf.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    got = same(crlf, "needle sits")
    assert [h["id"] for h in got] == ["L1", "L8", "L32", "L60"]


def test_raw_candidates_keep_every_matching_line_once(tmp_path, monkeypatch):
    monkeypatch.setattr(search_mod, "CHUNK", 64)
    body = b"".join(b'{"a": "%s"}\n' % (b"needle " * (i % 3) + b"z" * i) for i in range(40))
    path = tmp_path / "f.jsonl"
    path.write_bytes(body)
    pre = Matcher(Query("needle")).prefilter
    with open(path, "rb") as f:
        got = raw_candidates(f, pre, b"\n", 100)
    lines = body.split(b"\n")
    expect = [(sum(len(x) + 1 for x in lines[:i]), i) for i in range(40) if b"needle" in lines[i]]
    assert got == expect
    with open(path, "rb") as f:
        assert raw_candidates(f, pre, b"\n", 5) is None  # too many: the caller waits for the index


def test_it_declines_what_only_the_index_can_answer(tmp_path):
    # a source id seen earlier in the file: the index may name the event otherwise
    path = write_session(tmp_path / "dup", [legion_line(0, "first"), legion_line(1, "mentions m3"),
                                            legion_line(3, "the needle")])
    assert same(path, "needle") is None
    # a last line with no end
    tail = tmp_path / "tail" / "messages.jsonl"
    tail.parent.mkdir()
    tail.write_text(json.dumps(legion_line(0, "a")) + "\n" + json.dumps(legion_line(1, "needle")))
    assert not quick(tail, Query("needle")).ok
    # a regular expression with no literal to look for
    ok = write_session(tmp_path / "ok", [legion_line(0, "abc")])
    assert not quick(ok, Query(r"\w+", regex=True)).ok


CC = SESSIONS / "claude-project" / "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.jsonl"


def test_a_sub_agent_s_hits_are_found_where_the_index_reads_them():
    """A sub-agent's file holding the search is read whole, its hits placed right after the call
    that spawned it, under the ids the index gives (it declined: a search typed on a big session
    not indexed yet waited for the whole pass)."""
    threads = set()
    for needle in ("Grep", "agent", "the", "e"):
        got = same(CC, needle)
        assert got is not None, needle
        threads |= {h["thread"] for h in got}
    assert threads == {"main", "a7c4e2f91b3d5a6c8"}


def test_a_sub_agent_s_hits_are_declined_where_only_the_index_can_place_or_name_them(tmp_path):
    from test_firstscreen_search import prompt
    from test_firstscreen_subagent_hits import WORD, spawn, sub_agent

    def session(name, meta=True, named=True, uuid=None):
        root = tmp_path / name
        root.mkdir()
        path = root / "big.jsonl"
        path.write_text(prompt("hello", "Hello") if uuid is None else prompt(uuid, "Hello"))
        spawn(path, "a1", named)
        sub_agent(root, "a1", meta)
        return path

    assert [h["id"] for h in same(session("told"), WORD)] == ["sub-12"]
    # the call that spawned it not named (no metadata, nothing in its result): only the index links them
    assert same(session("unnamed", meta=False, named=False), WORD) is None
    # the sub-agent's event's uuid taken by an event of the main file: the index names it otherwise
    assert same(session("taken", uuid="sub-12"), WORD) is None
    assert [h["id"] for h in indexed(session("taken2", uuid="sub-12"), Query(WORD))] != ["sub-12"]


def test_regular_expressions_with_literals(tmp_path):
    path = write_session(tmp_path / "s", [legion_line(i, f"error code {i * 37}") for i in range(20)])
    got = same(path, r"code 3\d+", regex=True)
    assert got is not None and [h["snippet"] for h in got] == ["error code 37", "error code 333", "error code 370"]


def _words(path, n, rng):
    text = path.read_text(encoding="utf-8", errors="replace")
    words = [w for w in re.findall(r"[A-Za-zÀ-ÿ][\w'’é-]{4,}", text) if len(w) < 30]
    return rng.sample(words, min(n, len(words)))


def test_the_corpus_gives_the_same_hits_as_the_indexed_scan():
    """Every main file of the corpus and of test_data, searched for words of its own (upper-cased
    too): each answer given without the index is the indexed scan's answer."""
    rng = random.Random(9)
    answered = 0
    files = [p for p in sorted(CORPUS.rglob("*.jsonl")) if "subagents" not in p.parts
             and not p.name.startswith("agent-")]
    files += [p for p in sorted(SESSIONS.rglob("*.jsonl")) if "subagents" not in p.parts
              and not p.name.startswith("agent-")]
    assert len(files) > 10
    for path in files:
        try:
            SessionIndex(path).build()
        except Exception:
            continue
        for w in _words(path, 4, rng):
            for needle in (w, w.upper()):
                if same(path, needle) is not None:
                    answered += 1
    assert answered > 20  # most answers come without the index


def test_a_cold_search_answers_before_the_index_and_the_same_afterwards(tmp_path, monkeypatch):
    from viewer import store as store_mod

    monkeypatch.setattr(store_mod, "EARLY_ABOVE", 0)  # every session is "big": indexed in the background
    answered = []
    run = QuickScan.run

    def spy(self):
        out = run(self)
        answered.append(out.ok)
        return out

    monkeypatch.setattr(QuickScan, "run", spy)
    path = write_session(tmp_path / "root" / "big", [legion_line(i, f"line {i} " + "w " * 50)
                                                     for i in range(400)] + [legion_line(400, "the needle")])
    for app in held_app(tmp_path / "root", tmp_path):  # the index is not built until released
        c = app.test_client()
        before = c.get("/s/big/search.json?q=NEEDLE").get_json()
        assert answered == [True]
        assert before["complete"] and [h["id"] for h in before["hits"]] == ["m400"]
        app.hold.release.set()
        idx = SessionIndex(path).build()
        assert [h.as_dict() for h in search(idx, Query("NEEDLE"))] == before["hits"]
        lines = c.get("/s/big/search?q=needle").data.decode().splitlines()
        assert json.loads(lines[0])["hit"]["id"] == "m400" and '"done"' in lines[-1]
        # a search it cannot answer waits for the index, and is answered all the same
        assert c.get("/s/big/search.json?q=line+\\d%2B&regex=1&limit=3").get_json()["total"] == 3
