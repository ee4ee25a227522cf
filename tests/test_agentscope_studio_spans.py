"""AgentScope Studio: a tool call's card is timed by its traced run and shows that run's failure.

The database is Studio's own tables (test_data/formats/agentscope-studio/make_db.py); a span's
`status` (OpenTelemetry SpanStatus `{code, message}`, 2 = ERROR) and `events` (`[{name, time,
attributes}]`) columns are as agentscope-ai/agentscope-studio packages/server/src/models/Trace.ts
(SpanTable) declares them and dao/Trace.ts `saveSpans` fills them; AgentScope's tracing sets ERROR
with the exception's words and records an `exception` event (exception.type / .message) when a
traced call raises."""

import json
import sqlite3

from viewer.timeline import Timeline
from viewer.web import create_app

from conftest import built, result_of, studio_make_db

make_db = studio_make_db()


def database(tmp_path, fail=False, drop_events=False):
    folder = tmp_path / "AgentScope-Studio"
    folder.mkdir(parents=True)
    db = folder / "database.sqlite"
    make_db.build(db)
    if fail:
        con = sqlite3.connect(db, isolation_level=None)
        events = [{"name": "exception", "time": "1795701783050000000",
                   "attributes": {"exception.type": "PermissionError",
                                  "exception.message": "[Errno 13] Permission denied: 'notes.txt'",
                                  "exception.stacktrace": "Traceback (most recent call last): …"}}]
        con.execute('UPDATE span_table SET status = ?, statusCode = 2, events = ? WHERE spanId = ?',
                    (json.dumps({"code": 2, "message": "[Errno 13] Permission denied: 'notes.txt'"}),
                     None if drop_events else json.dumps(events), "s_tool"))
        con.close()
    return folder / "database.sqlite" / make_db.RUN


def test_the_call_lasts_as_long_as_its_traced_run_not_as_the_messages_are_apart(tmp_path):
    idx, evs = built(database(tmp_path))
    call = idx.calls.calls["call_view1"]
    # the messages are a second apart (m_think at :02, m_result at :03); the span ran 0.1 s
    assert call.duration is not None and abs(call.duration - 0.1) < 1e-6
    assert Timeline(idx).call_view("call_view1").duration == "100ms"


def test_a_failed_run_marks_the_call_an_error_and_says_why_on_its_card(tmp_path):
    idx, evs = built(database(tmp_path, fail=True))
    call = idx.calls.calls["call_view1"]
    assert call.status == "error"
    res = result_of(evs, "call_view1")
    assert res.is_error
    assert res.content[0].text == ("the trace says it failed: PermissionError: "
                                   "[Errno 13] Permission denied: 'notes.txt'")
    holder = next(e for e in evs if any(b.kind == "tool_use" for b in e.blocks))
    assert "traced: tool view_text_file ran in 0.1 s (call call_view1) — failed: PermissionError: " \
           "[Errno 13] Permission denied: 'notes.txt'" in [b.text for b in holder.blocks if b.kind == "notice"]


def test_a_status_error_without_an_exception_event_is_shown_too(tmp_path):
    idx, evs = built(database(tmp_path, fail=True, drop_events=True))
    assert idx.calls.calls["call_view1"].status == "error"
    assert result_of(evs, "call_view1").content[0].text == \
        "the trace says it failed: [Errno 13] Permission denied: 'notes.txt'"


def test_the_page_s_tool_card_shows_the_run_s_time_and_failure(tmp_path):
    path = database(tmp_path, fail=True)
    app = create_app({"ROOTS": [str(path.parent.parent)], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "TESTING": True})
    html = app.test_client().get(f"/s/database.sqlite~{make_db.RUN}").get_data(as_text=True)
    card = html[html.index('id="tc-call_view1"'):]
    card = card[:card.index('class="call-thread"')]  # the call's head and its result
    assert '<span class="state error">error</span><span class="dur" title="from the call to its result">100ms</span>' in card
    assert "the trace says it failed: PermissionError: [Errno 13] Permission denied: &#39;notes.txt&#39;" in card


def test_a_failed_model_call_with_no_message_is_an_error_in_sight(tmp_path):
    """A `chat` span that raised (the model API refused: AgentScope's tracing sets the span's
    status ERROR and records the exception, tracing/_trace.py) leaves no message of its agent: its
    card was a hidden "model call with no message" and the failure was said nowhere. Now it is an
    error card in sight, counted with the run's errors (Studio's SpanTable status / events columns:
    agentscope-ai/agentscope-studio packages/server/src/models/Trace.ts)."""
    path = database(tmp_path)
    db = tmp_path / "AgentScope-Studio" / "database.sqlite"
    con = sqlite3.connect(db, isolation_level=None)
    make_db.trace(con, make_db.RUN, "s_c4", "s_cri", "chat", "chat qwen-turbo", "qwen-turbo", 310, 0, None, 6)
    events = [{"name": "exception", "time": "1795701786050000000",
               "attributes": {"exception.type": "RateLimitError", "exception.message": "429 Too Many Requests"}}]
    con.execute('UPDATE span_table SET status = ?, statusCode = 2, events = ? WHERE spanId = ?',
                (json.dumps({"code": 2, "message": "429 Too Many Requests"}), json.dumps(events), "s_c4"))
    con.close()
    idx, evs = built(path)
    failed = [e for e in evs if e.role == "error"]
    assert len(failed) == 1 and not failed[0].hidden
    assert "RateLimitError: 429 Too Many Requests" in failed[0].blocks[0].text
    assert "model call of Critic" in failed[0].blocks[0].text
    assert idx.summary.errors >= 1
