"""The visible text of an event: what search, the full-text index and export all read."""

import base64
import io
import json
import os

from viewer import reader
from viewer.formats import claude_code
from viewer.model import Data, Event, Media, Ref, Text, Thinking, ToolResult, ToolUse
from viewer.text import event_text, expander, looks_like_base64, pieces


def cc_event(record: dict) -> Event:
    """A Claude Code record as its line holds it, decoded the way the index reads it."""
    line = json.dumps(record).encode()
    return claude_code.event(reader.decode(line), Ref("main", 1, 0, len(line)))


def test_escapes_in_the_file_are_decoded_text():
    ev = cc_event({"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [
        {"type": "text", "text": 'He said "stop"\nthen left, caf\u00e9'}]}})
    assert '"stop"\nthen' in event_text(ev)
    assert "café" in event_text(ev)


def test_tool_names_inputs_and_results_are_seen_but_not_field_names():
    ev = cc_event({"type": "assistant", "uuid": "a2", "message": {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "check the disk", "signature": "sig"},
        {"type": "tool_use", "id": "t1", "name": "Bash",
         "input": {"command": "df -h", "timeout": 120, "nested": {"deep": ["x y"]}}}]}})
    got = [(p.path, p.field, p.text) for p in pieces(ev)]
    assert ("b0", "thinking", "check the disk") in got
    assert ("b1", "tool", "Bash") in got
    assert ("b1.i:command", "input", "df -h") in got
    assert ("b1.i:timeout", "input", "120") in got
    assert ("b1.i:nested", "input", "x y") in got
    text = event_text(ev)
    assert "command" not in text and "{" not in text and "sig" not in text

    res = cc_event({"type": "user", "uuid": "u2", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
         "content": [{"type": "text", "text": "permission denied"}]}]}})
    assert [(p.path, p.field) for p in pieces(res)] == [("b0.c0", "output")]


def test_base64_payloads_are_never_text():
    payload = base64.b64encode(os.urandom(4000)).decode()
    ev = Event(Ref("main", 1, 0, 0), "user", blocks=[
        Media("image", "image/png", data=payload, name="shot.png"),
        ToolUse("t", "Write", {"content": payload, "file_path": "a.bin"}),
        ToolResult("t", [Text(base64.encodebytes(os.urandom(3000)).decode(), markdown=False)]),
        Text("data:image/png;base64," + payload)])
    text = event_text(ev)
    assert payload[:40] not in text
    assert "shot.png" in text and "a.bin" in text


def test_base64_lookalikes_that_people_read_are_kept():
    listing = "\n".join(f"src/module_{i}.py" for i in range(40))
    assert not looks_like_base64(listing)
    assert not looks_like_base64("word " * 100)
    assert not looks_like_base64("a" * 10_000 + "!")


def test_unknown_records_show_values_without_json_syntax():
    ev = Event(Ref("main", 1, 0, 0), "system", blocks=[
        Data({"kind": "hook", "out": ["rm -rf build", {"code": 3}]}), Thinking("", redacted=True)])
    assert event_text(ev).split("\n") == ["hook", "rm -rf build", "3"]


def test_cut_strings_expand_to_their_whole_text_when_the_file_is_at_hand():
    body = "lorem ipsum " * (reader.STRING_CAP // 6) + "needle at the very end"
    line = json.dumps({"type": "user", "uuid": "u", "message": {"role": "user", "content": body}})
    f = io.BytesIO(line.encode())
    rec = reader.skim(f, 0, len(line))
    ev = claude_code.event(rec, Ref("main", 1, 0, len(line)))
    assert "needle" not in event_text(ev)  # only the preview without the file
    assert event_text(ev, expander(f)).endswith("needle at the very end")


def test_a_tool_input_nested_a_thousand_levels_deep_is_read_without_recursing_to_death():
    """The index pass does not cut deep records (the pages do): what feeds search from it must
    not recurse past Python's limit either."""
    deep = "needle-at-the-bottom"
    for i in range(1000):
        deep = {"k": deep} if i % 2 else [deep]
    ev = Event(Ref("main", 1, 0, 10), "assistant",
               blocks=[ToolUse("t1", "Thing", {"command": "top-level", "x": deep})])
    text = event_text(ev)
    assert "top-level" in text and "needle-at-the-bottom" not in text  # cut, like the page
    from viewer.formats.common import as_text

    assert reader.DEEP in as_text(deep)
