"""The session index: stable ids, extension when a file grows, rebuilds when it is replaced."""

import json
import os
import shutil

from viewer import index as index_mod
from viewer.index import SessionIndex
from viewer.timeline import Timeline, bounds, load_events

from conftest import SESSIONS


def write(path, records, mode="w"):
    with open(path, mode) as f:
        for r in records:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")


def legion(i, **kw):
    return {"type": "user" if i % 2 == 0 else "assistant", "content": f"message {i}",
            "timestamp": 1761073190.0 + i, "session_id": "s", **kw}


def test_ids_are_source_ids_else_line_numbers_and_never_shift(tmp_path):
    p = tmp_path / "messages.jsonl"
    write(p, [legion(0, message_id="a"), legion(1), legion(2, message_id="a"), legion(3, message_id="b")])
    idx = SessionIndex(p).build()
    assert idx.threads["main"].ids == ["a", "L2", "L3", "b"]  # a duplicate id falls back to its line
    write(p, [legion(4), legion(5, message_id="L2")], mode="a")
    assert idx.refresh().new == {"main": 4}
    assert idx.threads["main"].ids == ["a", "L2", "L3", "b", "L5", "L6"]


def test_partial_last_line_waits_for_its_newline(tmp_path):
    p = tmp_path / "messages.jsonl"
    write(p, [legion(0)])
    with open(p, "a") as f:
        f.write('{"type": "assistant", "content": "hal')
    idx = SessionIndex(p).build()
    assert len(idx.threads["main"]) == 1 and idx.summary.unparsed == 0
    with open(p, "a") as f:
        f.write('f done", "timestamp": 1.0}\n')
    idx.refresh()
    assert len(idx.threads["main"]) == 2 and idx.summary.unparsed == 0
    assert load_events(idx, "main", 1, 2)[0].text() == "half done"


def test_a_truncated_line_in_a_quiet_file_becomes_an_unparsed_card(tmp_path, monkeypatch):
    p = tmp_path / "messages.jsonl"
    write(p, [legion(0)])
    with open(p, "a") as f:
        f.write('{"type": "assistant", "content": "cut')
    monkeypatch.setattr(index_mod, "TRUNCATED_GRACE", -1)
    idx = SessionIndex(p).build()
    assert idx.threads["main"].kinds == ["message", "unparsed"]
    ev = load_events(idx, "main", 1, 2)[0]
    assert "truncated" in ev.blocks[0].reason and '"cut' in ev.blocks[0].raw


def test_a_complete_last_record_without_newline_is_read(tmp_path):
    p = tmp_path / "messages.jsonl"
    p.write_text(json.dumps(legion(0)) + "\n" + json.dumps(legion(1)))
    idx = SessionIndex(p).build()
    assert len(idx.threads["main"]) == 2
    with open(p, "a") as f:
        f.write("\n" + json.dumps(legion(2)) + "\n")
    idx.refresh()
    assert [e.text() for e in load_events(idx, "main", 0, 3)] == ["message 0", "message 1", "message 2"]


def test_truncated_or_replaced_file_rebuilds(tmp_path):
    p = tmp_path / "messages.jsonl"
    write(p, [legion(i) for i in range(5)])
    idx = SessionIndex(p).build()
    write(p, [legion(10)])  # truncated and rewritten in place
    change = idx.refresh()
    assert change.reset and len(idx.threads["main"]) == 1
    q = tmp_path / "new.jsonl"
    write(q, [legion(i) for i in range(3)] + [legion(20)])
    os.replace(q, p)  # replaced by another file, longer than before
    change = idx.refresh()
    assert change.reset and len(idx.threads["main"]) == 4


def test_rewritten_in_place_with_more_bytes_is_caught_by_the_seal(tmp_path):
    p = tmp_path / "messages.jsonl"
    write(p, [legion(0), legion(1)])
    idx = SessionIndex(p).build()
    with open(p, "r+") as f:  # same inode, same size or larger, different content before the offset
        f.write(json.dumps(legion(7)).replace("message 7", "MESSAGE 7") + "\n")
        f.write(json.dumps(legion(8)) + "\n" + json.dumps(legion(9)) + "\n")
    assert idx.refresh().reset
    assert load_events(idx, "main", 0, 1)[0].text() == "MESSAGE 7"


def test_deleted_file_is_reported(tmp_path):
    p = tmp_path / "messages.jsonl"
    write(p, [legion(0)])
    idx = SessionIndex(p).build()
    p.unlink()
    assert idx.refresh().removed


def test_windows_cover_every_event_once(tmp_path):
    src = SESSIONS / "legion-feature-tour" / "messages.jsonl"
    idx = SessionIndex(src).build()
    th = idx.threads["main"]
    for size in (1, 2, 3, 7, 100):
        seen, stop = [], 0
        while stop < len(th):
            start, stop = bounds(th, after=stop, size=size)
            seen.extend(range(start, stop))
        assert seen == list(range(len(th)))
        seen, start = [], len(th)
        while start > 0:
            start, stop = bounds(th, before=start, size=size)
            seen[:0] = range(start, stop)
        assert seen == list(range(len(th)))


def test_window_around_a_target_contains_it_and_results_in_other_windows_resolve(tmp_path):
    idx = SessionIndex(SESSIONS / "legion-feature-tour" / "messages.jsonl").build()
    tl = Timeline(idx, target="tour-bash")
    th = idx.threads["main"]
    seq = idx.locate("tour-bash")[1]
    win = tl.window("main", around=seq)
    assert any(v.ev.id == "tour-bash" and v.target for v in win.events)
    # a window holding only the call still shows the result, read from the other window
    start, stop = bounds(th, after=seq, size=1)
    evs = load_events(idx, "main", start, start + 1)
    view = Timeline(idx).event_view(evs[0], start)
    cv = view.calls["toolu_bash_1"]
    assert cv.result is not None and cv.result_event == "tour-bash-result"


def test_corpus_copy_index_survives_append_of_subagent_file(tmp_path):
    dst = tmp_path / "s"
    shutil.copytree(SESSIONS / "claude-project", dst)
    main = next(dst.glob("*.jsonl"))
    sub = next(dst.rglob("agent-*.jsonl"))
    idx = SessionIndex(main).build()
    name = sub.stem[len("agent-"):]
    n = len(idx.threads[name])
    with open(sub, "a") as f:
        f.write(json.dumps({"type": "assistant", "uuid": "late-1", "isSidechain": True,
                            "message": {"role": "assistant", "content": [{"type": "text", "text": "late"}]}})
                + "\n")
    change = idx.refresh()
    assert change.new == {name: n} and idx.locate("late-1") == (name, n)


def test_a_partial_last_line_is_shown_as_truncated_when_its_grace_ends_without_a_write(
        tmp_path, monkeypatch):
    """The writer died mid-line and the file never changes again: the line must not stay hidden."""
    p = tmp_path / "messages.jsonl"
    write(p, [legion(0)])
    with open(p, "a") as f:
        f.write('{"type": "assistant", "content": "cut')
    idx = SessionIndex(p).build()
    assert len(idx.threads["main"]) == 1  # within the grace: the writer may still finish it
    monkeypatch.setattr(index_mod, "TRUNCATED_GRACE", -1)  # …and now the grace is over
    change = idx.refresh()
    assert change.new == {"main": 1} and idx.threads["main"].kinds == ["message", "unparsed"]
    assert "truncated" in load_events(idx, "main", 1, 2)[0].blocks[0].reason
    assert not idx.refresh()  # shown once, not again on every refresh


def test_the_cache_does_not_keep_a_partial_line_hidden_after_its_grace(tmp_path, monkeypatch):
    from viewer.cache import IndexCache
    from viewer.store import Store

    p = tmp_path / "root" / "s" / "messages.jsonl"
    p.parent.mkdir(parents=True)
    write(p, [legion(0)])
    with open(p, "a") as f:
        f.write('{"type": "assistant", "content": "cut')
    store = Store([tmp_path / "root"], IndexCache(tmp_path / "cache"))
    assert store.index("s").summary.events == 1
    store.flush()
    monkeypatch.setattr(index_mod, "TRUNCATED_GRACE", -1)
    restarted = Store([tmp_path / "root"], IndexCache(tmp_path / "cache"))
    refs = restarted.sessions()
    assert restarted.summaries(refs, inline=1 << 20)["s"].unparsed == 1
    assert restarted.index("s").threads["main"].kinds == ["message", "unparsed"]


def test_a_truncated_line_the_writer_finishes_later_is_read_whole(tmp_path, monkeypatch):
    p = tmp_path / "messages.jsonl"
    write(p, [legion(0)])
    with open(p, "a") as f:
        f.write('{"type": "assistant", "content": "hal')
    monkeypatch.setattr(index_mod, "TRUNCATED_GRACE", -1)
    idx = SessionIndex(p).build()
    assert idx.threads["main"].kinds == ["message", "unparsed"]
    with open(p, "a") as f:
        f.write('f done", "timestamp": 1.0}\n')
    idx.refresh()
    assert idx.summary.unparsed == 0
    assert load_events(idx, "main", 1, 2)[0].text() == "half done"


def test_cr_only_line_endings_and_a_byte_order_mark(tmp_path):
    for name, data in [
        ("cr", "\r".join(json.dumps(legion(i)) for i in range(3)) + "\r"),
        ("crlf", "\r\n".join(json.dumps(legion(i)) for i in range(3)) + "\r\n"),
        ("bom", "\ufeff" + "\n".join(json.dumps(legion(i)) for i in range(3)) + "\n"),
        ("bom-cr", "\ufeff" + "\r".join(json.dumps(legion(i)) for i in range(3))),
    ]:
        p = tmp_path / name / "messages.jsonl"
        p.parent.mkdir()
        p.write_bytes(data.encode())
        idx = SessionIndex(p).build()
        assert idx.summary.format == "legion", name
        assert (idx.summary.events, idx.summary.unparsed) == (3, 0), name
        assert [e.text() for e in load_events(idx, "main", 0, 3)] == [
            "message 0", "message 1", "message 2"], name
        eol = "\r" if "cr" == name[-2:] else "\n"
        with open(p, "ab") as f:  # and the live tail goes on reading new lines (a file that
            # does not end its last line gets that line's end first: else the new record would
            # go on the same line, which a fresh read shows as one unparsed line)
            f.write(((eol if data[-1] not in "\r\n" else "") + json.dumps(legion(3)) + eol).encode())
        idx.refresh()
        assert load_events(idx, "main", 3, 4)[0].text() == "message 3", name
        fresh = SessionIndex(p).build().threads["main"]
        assert (idx.threads["main"].ids, list(idx.threads["main"].lines)) == (
            fresh.ids, list(fresh.lines)), name


def test_a_json_document_with_a_byte_order_mark(tmp_path):
    p = tmp_path / "chat.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"role": "user", "content": "hi"},
                                               {"role": "assistant", "content": "hello"}]).encode())
    idx = SessionIndex(p).build()
    assert idx.summary.events == 2 and idx.summary.unparsed == 0


def test_an_index_loaded_from_the_cache_is_unchanged_with_its_state_file(tmp_path):
    """A legion session's state.json is read with the index: loaded from the cache in a new
    process, an index of files nobody touched is current (else every first page refreshes and sums
    up the whole session again: 155 ms for 1 GB), and a state.json written since is seen."""
    src = os.path.join(os.path.dirname(__file__), "..", "test_data", "formats", "legion", "tool-states")
    folder = tmp_path / "s"
    shutil.copytree(src, folder)
    idx = SessionIndex(folder / "messages.jsonl").build()
    loaded = SessionIndex.load(idx.dump())
    assert loaded.unchanged()
    state = folder / "state.json"
    st = state.stat()
    os.utime(state, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert not loaded.unchanged()
    assert loaded.refresh().info
    assert SessionIndex.load(loaded.dump()).unchanged()
