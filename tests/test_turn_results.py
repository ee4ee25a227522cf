"""A turn result (the Agent SDK's ResultMessage) repeats the turn's last assistant text under its
stats line: the page shows the stats and links to that text, unless the two differ."""

import json

from viewer.index import SessionIndex
from viewer.timeline import Timeline
from viewer.web import create_app

from conftest import ROOT, quiet_copy

TOOL_STATES = ROOT / "test_data" / "formats" / "legion" / "tool-states"
FINAL = "I left `build/` alone as you asked"


def test_the_result_links_to_the_text_it_repeats(tmp_path):
    root = quiet_copy(TOOL_STATES, tmp_path / "sessions" / "tool-states").parent
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    html = app.test_client().get("/s/tool-states").get_data(as_text=True)
    assert html.count(FINAL) == 1  # once, in the message; not again under the stats
    turn = html[html.index('id="m-ts-turn"'):]
    turn = turn[:turn.index("</li>")]
    assert "turn success · 5 turns · 48.6s · $0.0387" in turn
    assert '<a href="/s/tool-states/m/ts-final">the turn\'s last message</a>' in turn


def test_the_text_it_repeats_may_be_in_an_earlier_window():
    idx = SessionIndex(TOOL_STATES / "messages.jsonl").build()
    seq = idx.locate("ts-turn")[1]
    win = Timeline(idx).window("main", after=seq)  # the result is the first event shown
    assert win.events[0].ev.id == "ts-turn" and win.events[0].repeats == "ts-final"
    ev = win.events[0].ev
    assert Timeline(idx).event_view(ev, seq).repeats == "ts-final"  # the live stream's view


def write(tmp_path, result_text, between=()):
    recs = [
        {"type": "user", "content": "Say hi", "session_id": "s", "message_id": "p"},
        {"_type": "AssistantMessage", "session_id": "s", "message_id": "a",
         "data": {"content": [{"text": "Hi there!\n"}]}},
        *between,
        {"_type": "ResultMessage", "session_id": "s", "message_id": "r",
         "data": {"subtype": "success", "num_turns": 1, "duration_ms": 1200, "is_error": False,
                  "total_cost_usd": 0.001, "result": result_text}},
    ]
    p = tmp_path / "messages.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    idx = SessionIndex(p).build()
    return {v.ev.id: v for v in Timeline(idx).window("main").events}


def test_a_result_that_says_something_else_keeps_its_text(tmp_path):
    assert write(tmp_path, "Hi there!")["r"].repeats == "a"  # whitespace aside, the same
    assert write(tmp_path, "Goodbye.")["r"].repeats is None
    # the turn's text came before its prompt: the result repeats nothing of this turn
    views = write(tmp_path, "Hi there!", between=[
        {"type": "user", "content": "And now?", "session_id": "s", "message_id": "p2"}])
    assert views["r"].repeats is None
