"""A big single document's index stays small (issue 13, "memory stays flat"): a dataset of
conversations kept as one JSON array is hundreds of thousands of events, and what the index keeps
of each — its JSON path, its id's place, its role, the heading of each conversation — is kept in
few objects (viewer/packed.py), so that a server indexing a 200 MB one stays within its memory.
A big one-line document (an Agents SDK RunState) is told apart from a JSONL file by one read of
its bytes, not two."""

from __future__ import annotations

import json
import subprocess
import sys

from viewer import files
from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.timeline import load_events

from test_big_document_formats import PAD, run_state


def _dataset_array(path, n: int) -> None:
    rows = []
    for k in range(n):
        rows.append(json.dumps({"messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": f"Question {k}: {PAD}"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
             "function": {"name": "lookup", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": f"found {k}"},
            {"role": "assistant", "content": f"Answer {k}: {PAD}"}]}))
    path.write_text("[\n" + ",\n".join(rows) + "\n]\n")


_MEASURE = """
import sys, tracemalloc
from viewer.index import SessionIndex
SessionIndex(sys.argv[1]).build()  # (imports, caches: not counted)
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
idx = SessionIndex(sys.argv[1]).build()
print(tracemalloc.get_traced_memory()[0] - before)
"""


def test_the_index_of_a_big_dataset_array_takes_few_bytes_per_event(tmp_path):
    """What the index of a 12,000-event dataset holds once built, per event: the same records and
    names as ever, in under 420 bytes each (it took some 560: a str per path, role and id place,
    a dict slot and a 400-byte str per conversation's heading)."""
    path = tmp_path / "train.json"
    _dataset_array(path, 2000)
    # measured in a process of its own: tracemalloc counts every thread's allocations, and in the
    # suite's process servers and indexers left by earlier tests allocate too (635 "per event")
    held = float(subprocess.run([sys.executable, "-c", _MEASURE, str(path)], check=True,
                                capture_output=True, text=True).stdout)
    idx = SessionIndex(str(path)).build()
    th = idx.threads["main"]
    n = len(th)
    assert n == 2000 * 6
    assert held / n < 420, f"{held / n:.0f} bytes per event"
    # and it reads as it did: paths, prompts, ids
    assert th.paths[:3] == ["[0].(section)", "[0].messages[0]", "[0].messages[1]"]
    assert th.prompts[0] == "Conversation 1 · item 1" and th.prompts[2].startswith("Question 0: lorem")
    assert idx.locate(th.ids[7]) == ("main", 7) and idx.ids.get("nowhere") is None
    again = SessionIndex.load(idx.dump())
    at = again.threads["main"]
    assert at.paths == th.paths and at.prompts == th.prompts and dict(at.prompts) == dict(th.prompts)
    assert again.locate(th.ids[-1]) == ("main", n - 1)
    view = [(e.id, e.role, e.blocks) for e in load_events(again, "main", n - 12, n)]
    assert view == [(e.id, e.role, e.blocks) for e in load_events(idx, "main", n - 12, n)]
    assert "Answer 1999" in str(view[-1][2])


def test_a_big_dataset_array_keeps_the_call_ids_its_conversations_renamed_in_few_bytes(tmp_path):
    """A dataset array big enough to be read an element at a time (`wrapped.items_fold`), each of
    its 3,000 conversations calling `call_1`: each conversation after the first renames it
    (`call_1~<n>`), which the index kept as a dict per conversation (374 bytes per event held in
    all); now only which ids each renamed (`wrapped.packed_renames`): under 340. Its cards name
    the calls as before, also from the cache."""
    path = tmp_path / "train.json"
    _dataset_array(path, 3000)
    held = float(subprocess.run([sys.executable, "-c", _MEASURE, str(path)], check=True,
                                capture_output=True, text=True).stdout)
    idx = SessionIndex(str(path)).build()
    th = idx.threads["main"]
    n = len(th)
    assert n == 3000 * 6 and th.carried.get("items")
    assert held / n < 340, f"{held / n:.0f} bytes per event"
    for index in (idx, SessionIndex.load(idx.dump())):
        view = load_events(index, "main", n - 6, n)
        assert view[3].blocks[0].id == "call_1~3000" and view[4].blocks[0].tool_use_id == "call_1~3000"
        assert load_events(index, "main", 0, 6)[3].blocks[0].id == "call_1"
    assert idx.calls.call("call_1~3000").status == "completed"


def test_packed_columns_read_as_the_lists_and_dicts_they_replace():
    from viewer.packed import IdMap, Strings, Texts

    s = Strings()
    for t in ["a", "", "日本 \udc80", "[3].messages[2]"]:
        s.append(t)
    assert list(s) == ["a", "", "日本 \udc80", "[3].messages[2]"] and s == list(s) and s[-1] == "[3].messages[2]"
    assert s[1:3] == ["", "日本 \udc80"] and len(s) == 4 and Strings.load(s.ends.tobytes(), bytes(s.data)) == s
    t = Texts()
    t[2], t[5], t[9] = "two", "fünf", "nine"
    t[5] = "five"  # (set again: repacked)
    t[1] = "one"  # (out of order)
    assert dict(t) == {1: "one", 2: "two", 5: "five", 9: "nine"} and sorted(t) == [1, 2, 5, 9]
    assert 5 in t and 3 not in t and t.get(3) is None and t == {1: "one", 2: "two", 5: "five", 9: "nine"}
    del t[2]
    assert list(t.items()) == [(1, "one"), (5, "five"), (9, "nine")]
    m = IdMap()
    m["u1"], m["agent.L3"] = m.where("main", 0), m.where("agent", 2)
    assert m["u1"] == ("main", 0) and m.get("agent.L3") == ("agent", 2) and "u1" in m
    assert dict(m.items()) == {"u1": ("main", 0), "agent.L3": ("agent", 2)}


def test_a_big_one_line_document_is_detected_with_one_read_of_it(tmp_path, monkeypatch):
    """A RunState of 20 MB on one line: detection looks for a second line once (it was read to
    its end twice, once more to know it is one line), and still tells it a RunState."""
    path = tmp_path / "state.json"
    doc = run_state(2800)
    path.write_text(json.dumps(doc))
    size = path.stat().st_size
    assert size > detect.LONG_HEAD
    read = []
    real = files.open_file

    class Counted:
        def __init__(self, f):
            self.f = f

        def read(self, *a):
            data = self.f.read(*a)
            read.append(len(data))
            return data

        def readinto(self, b):
            n = self.f.readinto(b)
            read.append(n)
            return n

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(files, "open_file", lambda p: Counted(real(p)))
    found = detect.detect_file(path)
    assert (found.format, found.mode) == ("openai-chat", "document")
    assert sum(read) < 1.2 * size, f"read {sum(read) / size:.2f} times its size"
    # what the read found out is what a read for it alone finds: one line, or more
    monkeypatch.undo()
    text = path.read_text()
    shapes = {"one": text, "blank after": text + "\n \n", "two": text + "\n" + json.dumps({"role": "user"}) + "\n",
              "short, then blank": json.dumps(doc)[:1000] + "\n\n", "short two": '{"a": 1}\n{"b": 2}\n' + " " * (300 << 10)}
    for name, body in shapes.items():
        path.write_text(body)
        head = path.read_bytes()[:detect.HEAD_BYTES]
        told: dict = {}
        detect.long_lines(path, 0, head, b"\n", told)
        assert told.get("one", detect._one_line(path)) == detect._one_line(path), name
        assert "one" in told or name == "short two", name
    assert not detect._one_line(path)


_SAVE = """
import sys, tracemalloc
from viewer.cache import IndexCache
from viewer.store import Store
store = Store([sys.argv[1]], IndexCache(sys.argv[2]))
store.cache, cache = None, store.cache  # (built first, saved below: its save alone is measured)
idx = store.index("train")
size = len(idx.dump())
store.cache = cache
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
store._save("train", idx)
store.flush()
print(size, tracemalloc.get_traced_memory()[1] - before)
"""


def test_a_big_index_is_saved_to_the_cache_without_holding_its_dump(tmp_path):
    """The server writes a session's index to its cache once the pass is done: it held every part
    of the dump at once until it was written (85 MB more for a 200 MB dataset, the server's peak at
    the end of its pass). Now a part at a time: what the save holds beside the index is less than
    half the dump (its biggest column), and a new server reads the same index back."""
    root = tmp_path / "root"
    root.mkdir()
    _dataset_array(root / "train.json", 6000)
    cache = tmp_path / "cache"
    out = subprocess.run([sys.executable, "-c", _SAVE, str(root), str(cache)], check=True,
                         capture_output=True, text=True).stdout
    size, held = map(int, out.split())
    assert size > 4 << 20
    assert held < size / 2, f"the save held {held / size:.2f} of the dump's {size >> 20} MB"
    from viewer.cache import IndexCache
    from viewer.store import Store

    again = Store([root], IndexCache(cache)).index("train")
    built = SessionIndex(str(root / "train.json")).build()
    assert _parts(again) == _parts(built)
    th = again.threads["main"]
    assert len(th) == 6000 * 6 and again.locate(th.ids[-1]) == ("main", len(th) - 1)


def _parts(idx: SessionIndex):
    """An index's dump: its header (but for the build's name) and its columns."""
    parts = idx.dump_parts()
    head = json.loads(parts[1])
    del head["build_id"]
    return head, parts[2:]
