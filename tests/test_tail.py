"""Tail reading of a growing file, as the live view sees it: partial writes, bursts, rewrites."""

import json
import os

from viewer.index import SessionIndex
from viewer.timeline import load_events


def rec(i, text=None):
    return json.dumps({"type": "assistant", "content": text or f"line {i}", "timestamp": 1761073190 + i,
                       "session_id": "s", "message_id": f"m{i}"}, ensure_ascii=False)


def texts(idx):
    th = idx.threads["main"]
    return [e.text() for e in load_events(idx, "main", 0, len(th))]


def test_append_split_mid_line_and_mid_utf8_character(tmp_path):
    p = tmp_path / "messages.jsonl"
    p.write_text(rec(0) + "\n")
    idx = SessionIndex(p).build()
    line = (rec(1, "naïve café → 日本") + "\n").encode("utf-8")
    cut = line.index("日".encode()) + 1  # in the middle of a three-byte character
    for i, piece in enumerate((line[:10], line[10:cut], line[cut:])):
        with open(p, "ab") as f:
            f.write(piece)
        idx.refresh()
        if i < 2:  # the line is not complete yet: nothing shown, nothing "malformed"
            assert len(idx.threads["main"]) == 1 and idx.summary.unparsed == 0
    assert texts(idx) == ["line 0", "naïve café → 日本"]


def test_many_lines_in_one_write(tmp_path):
    p = tmp_path / "messages.jsonl"
    p.write_text(rec(0) + "\n")
    idx = SessionIndex(p).build()
    with open(p, "a") as f:
        f.write("".join(rec(i) + "\n" for i in range(1, 201)))
    change = idx.refresh()
    assert change.new == {"main": 1} and len(idx.threads["main"]) == 201
    assert texts(idx)[-1] == "line 200" and idx.threads["main"].ids[-1] == "m200"


def test_truncation_resets(tmp_path):
    p = tmp_path / "messages.jsonl"
    p.write_text("".join(rec(i) + "\n" for i in range(3)))
    idx = SessionIndex(p).build()
    with open(p, "r+") as f:
        f.truncate(0)
    assert idx.refresh().reset and len(idx.threads["main"]) == 0
    p.write_text(rec(9) + "\n")
    idx.refresh()
    assert texts(idx) == ["line 9"]


def test_replacement_resets(tmp_path):
    p = tmp_path / "messages.jsonl"
    p.write_text("".join(rec(i) + "\n" for i in range(3)))
    idx = SessionIndex(p).build()
    tmp = tmp_path / "rotated"
    tmp.write_text("".join(rec(i) + "\n" for i in range(10, 15)))
    os.replace(tmp, p)
    assert idx.refresh().reset
    assert texts(idx) == [f"line {i}" for i in range(10, 15)]


def test_deletion_is_reported_not_raised(tmp_path):
    p = tmp_path / "messages.jsonl"
    p.write_text(rec(0) + "\n")
    idx = SessionIndex(p).build()
    p.unlink()
    change = idx.refresh()
    assert change.removed and not change.reset
