"""The tool-call state map, fed event by event as the index and the live tail do."""

from viewer.model import Event, Ref, Text, ToolResult, ToolUse
from viewer.toolcalls import ToolCallMap


def ev(*blocks, thread="main", running=(), spawns=None):
    e = Event(Ref(thread, 1, 0, 1), "assistant", blocks=list(blocks))
    e.running = list(running)
    e.spawns = dict(spawns or {})
    return e


def test_lifecycle_pending_executing_completed():
    m = ToolCallMap()
    assert m.observe(ev(ToolUse("t1", "Bash", {})), 0, 10.0) == {"t1"}
    assert m.calls["t1"].status == "pending"
    m.observe(ev(running=["t1"]), 1, 11.0)
    assert m.calls["t1"].status == "executing"
    m.observe(ev(ToolResult("t1", [Text("ok")], None)), 2, 12.5)
    c = m.calls["t1"]
    assert (c.status, c.is_error, c.duration, c.call, c.result) == ("completed", False, 2.5,
                                                                     ("main", 0), ("main", 2))


def test_is_error_null_is_success_and_true_is_error():
    m = ToolCallMap()
    m.observe(ev(ToolUse("a", "X", {}), ToolUse("b", "Y", {})), 0, None)
    m.observe(ev(ToolResult("a", [], None), ToolResult("b", [], True)), 1, None)
    assert m.calls["a"].status == "completed" and m.calls["b"].status == "error"
    assert m.by_state() == {"pending": 0, "executing": 0, "completed": 1, "error": 1}


def test_orphan_result_and_late_call():
    m = ToolCallMap()
    m.observe(ev(ToolResult("ghost", [], False)), 0, None)
    assert "ghost" in m.orphans and m.get("ghost").orphan
    m.observe(ev(ToolResult("late", [], False)), 1, None)
    m.observe(ev(ToolUse("late", "Read", {})), 2, None)  # the call shows up after its result
    assert "late" not in m.orphans and m.calls["late"].status == "completed"
    assert list(m.orphans) == ["ghost"]


def test_running_never_downgrades_a_finished_call():
    m = ToolCallMap()
    m.observe(ev(ToolUse("t", "X", {})), 0, None)
    m.observe(ev(ToolResult("t", [], False)), 1, None)
    m.observe(ev(running=["t"]), 2, None)
    assert m.calls["t"].status == "completed"


def test_source_status_on_the_call():
    m = ToolCallMap()
    m.observe(ev(ToolUse("w", "bash", {}, status="running")), 0, None)
    assert m.calls["w"].status == "executing"
    m.observe(ev(ToolUse("f", "bash", {}, status="failed")), 1, None)
    assert m.calls["f"].status == "error"


def test_spawned_thread_and_round_trip():
    m = ToolCallMap()
    m.observe(ev(ToolUse("task", "Task", {})), 0, 1.0)
    m.observe(ev(ToolResult("task", [], None), spawns={"task": "a1"}), 1, 2.0)
    m.observe(ev(ToolResult("zzz", [], None)), 2, 3.0)
    blobs = []
    head = m.dump(blobs)
    again = ToolCallMap.load(head, iter(blobs))
    assert again.calls["task"] == m.calls["task"] and again.calls["task"].subthread == "a1"
    assert list(again.orphans) == ["zzz"]


def feed(m, e, seq):
    """As the index feeds the map: the event's ids used again renamed first (`again`)."""
    from viewer.toolcalls import rename

    renames = m.again(e, ("main", seq))
    if renames:
        rename(e, renames)
    m.observe(e, seq, None)
    return renames


def test_an_id_used_again_after_its_result_is_a_new_call_and_what_follows_is_its():
    m = ToolCallMap()
    assert feed(m, ev(ToolUse("call_0", "ls", {})), 0) is None
    feed(m, ev(ToolResult("call_0", [Text("a b")], None)), 1)
    assert feed(m, ev(ToolUse("call_0", "cat", {})), 2) == {"call_0": "call_0~2"}
    # running words and results that name the id are the latest call's
    assert feed(m, ev(running=["call_0"]), 3) == {"call_0": "call_0~2"}
    assert m.calls["call_0~2"].status == "executing" and m.calls["call_0"].status == "completed"
    assert feed(m, ev(ToolResult("call_0", [], True)), 4) == {"call_0": "call_0~2"}
    assert (m.calls["call_0~2"].status, m.calls["call_0~2"].result) == ("error", ("main", 4))
    assert m.calls["call_0"].result == ("main", 1)
    assert feed(m, ev(ToolUse("call_0", "rm", {})), 5) == {"call_0": "call_0~3"}
    # written again while it waits: the same call, not a fourth
    assert feed(m, ev(ToolUse("call_0", "rm", {})), 6) == {"call_0": "call_0~3"}
    assert sorted(m.calls) == ["call_0", "call_0~2", "call_0~3"]


def test_a_hidden_copy_of_an_answered_call_starts_no_call():
    m = ToolCallMap()
    feed(m, ev(ToolUse("t", "ls", {})), 0)
    feed(m, ev(ToolResult("t", [], None)), 1)
    copy = ev(ToolUse("t", "ls", {}))
    copy.hidden = True
    assert feed(m, copy, 2) is None and sorted(m.calls) == ["t"]


def test_the_renames_of_a_thread_are_kept_as_columns_and_read_back_by_seq():
    from viewer.toolcalls import Renamed

    r = Renamed()
    r.add(3, {"call_0": "call_0~2"})
    r.add(7, {"call_0": "call_0~3", "call_1": "call_1~2"})
    blobs = []
    head = r.dump(blobs)
    back = Renamed.load(head, iter(blobs))
    assert back == r and back.get(7) == {"call_0": "call_0~3", "call_1": "call_1~2"}
    assert back.get(3) == {"call_0": "call_0~2"} and back.get(4) is None and back.get(99) is None
    assert list(back.between(4, 8)) == [(7, "call_0"), (7, "call_1")]
