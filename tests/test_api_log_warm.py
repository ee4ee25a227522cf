"""A log of API calls (a proxy's JSONL `{request, response}` lines: formats/wrapped.py) opened by a
new process whose index is in the cache is drawn from the lines its page shows, not from a reading
of the whole log: the index keeps, for each line, what the whole reading knew before it (its
`plan`: the calls and conversations before it, the one it goes on with and how much of it was
known) and the call ids each conversation renamed, and a window's lines are read alone with it
(`wrapped.replay`). The page must be the one a process that read the whole log draws: the same
cards with the same numbers ("API call 7", "Conversation 2"), the same ids, the same renamed call
ids (`toolu_1~5`), the same "goes on with conversation 1" notes.

Whether the whole log is read is seen by making its reading (`wrapped.Fold.extend`) fail."""

import json
import os
import re

import pytest

from viewer.web import create_app
from viewer.formats import wrapped
from viewer.index import SessionIndex
from viewer.timeline import load_events, raw_record

from conftest import back_and_forth_lines, notices
from test_wrapped_live import cases

ANTHROPIC = "https://api.anthropic.com/v1/messages"


def rich_lines():
    """An Anthropic API log of all a call log's lines can be, twice over (so that its later
    lines' numbers, conversations and renamed ids depend on lines far before them): calls going on
    with a conversation, a probe, a call going back to an earlier conversation, a call id used
    again by a new conversation (`toolu_1~N`), a failed call, a call logged without a response,
    a line that is no JSON."""
    def call(messages, answer, status=200):
        return json.dumps({"request": {"timestamp": 1764050400, "method": "POST", "url": ANTHROPIC,
                                       "body": {"model": "claude-sonnet-4-5", "max_tokens": 1000,
                                                "messages": messages}},
                           "response": {"timestamp": 1764050402, "status_code": status, "body": answer}})

    out = [json.dumps(x) for x in back_and_forth_lines()]
    ask = {"role": "user", "content": "Why?"}
    out.append(call([ask], {"type": "error", "error": {"type": "overloaded_error",
                                                       "message": "Overloaded"}}, 529))
    out.append(json.dumps({"request": {"timestamp": 1764050403, "method": "POST", "url": ANTHROPIC,
                                       "body": {"model": "claude-sonnet-4-5", "messages": [ask]}},
                           "response": None, "note": "ORPHANED_REQUEST"}))
    out.append('{"request": {"timestamp": 17640504')  # a line cut in the middle
    out.append(call([{"role": "user", "content": "Say hi"}], {
        "id": "msg_01hi", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn"}))
    return [(x + "\n").encode() for x in out * 2]


def old_log(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    os.utime(path, (1_700_000_000, 1_700_000_000))  # a finished log: its reading is not kept
    return path


def no_whole_read(monkeypatch):
    def refuse(self, f):
        raise AssertionError("the whole log was read")
    monkeypatch.setattr(wrapped.Fold, "extend", refuse)


@pytest.mark.parametrize("name,lines", cases() + [("rich", rich_lines())],
                         ids=[c[0] for c in cases()] + ["rich"])
def test_an_index_from_the_cache_reads_any_window_from_its_own_lines_as_the_whole_read(
        name, lines, tmp_path, monkeypatch):
    log = old_log(tmp_path / "log.jsonl", lines)
    wrapped._folds.clear()
    idx = SessionIndex(log).build()
    th = idx.threads["main"]
    wrapped.lines_fold(log)  # the whole reading, kept: what a process that read the log draws
    want = load_events(idx, "main", 0, len(th))
    raws = [raw_record(idx, eid) for eid in th.ids]
    if name == "rich":
        said = [n for ev in want for n in notices(ev)]
        assert {"API call 11 goes on with conversation 6 (line 12)",
                "API call 14 goes on with conversation 4 (line 15)",
                "Conversation 8 · API call 13 · line 14"} <= set(said)
        assert "toolu_1~8" in {b.id for ev in want for b in ev.blocks if b.kind == "tool_use"}

    warm = SessionIndex.load(idx.dump())  # a new process: the index from the cache, nothing read
    wrapped._folds.clear()
    no_whole_read(monkeypatch)
    assert load_events(warm, "main", 0, len(th)) == want, name
    for seq in range(len(th)):  # a window from any place: the lines before it are not read
        assert load_events(warm, "main", seq, seq + 3) == want[seq:seq + 3], (name, seq)
    assert [raw_record(warm, eid) for eid in th.ids] == raws
    assert not wrapped._folds


def test_a_log_changed_under_an_index_is_read_whole_again_not_drawn_wrong(tmp_path):
    log = old_log(tmp_path / "log.jsonl", rich_lines())
    wrapped._folds.clear()
    idx = SessionIndex(log).build()
    warm = SessionIndex.load(idx.dump())
    wrapped._folds.clear()
    # the same bytes, but a line of three records now holds one (the index is not refreshed)
    data = log.read_bytes()
    th = warm.threads["main"]
    seq = next(i for i in range(len(th)) if th.offsets[i] and th.ids[i].endswith("~3"))
    start = th.offsets[seq]
    end = data.index(b"\n", start)
    line = json.dumps({"request": {"method": "POST", "url": ANTHROPIC, "body": {"messages": []}},
                       "response": None}).encode()
    log.write_bytes(data[:start] + line.ljust(end - start) + data[end:])
    got = load_events(warm, "main", seq - 2, seq + 1)
    assert [e.id for e in got] == th.ids[seq - 2:seq + 1]
    assert wrapped.kept(log)  # read whole, as before there was a plan


def cards(html: str) -> list[str]:
    """The event cards of a page, as drawn, each with its id."""
    return re.findall(r'<li class="ev [^"]*" id="m-[^"]+".*?</li>\s*(?=<li class="ev |</ol>|$)', html, re.S)


def test_a_new_app_over_the_cache_draws_the_log_page_as_the_whole_read_without_it(tmp_path, monkeypatch):
    root = tmp_path / "logs"
    log = old_log(root / "proxy.jsonl", rich_lines() * 6)
    config = {"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
              "INDEX_ALL": False}
    wrapped._folds.clear()
    first = create_app(config)
    store = first.extensions["viewer"].store
    idx = store.build("proxy").wait(60)
    store.flush()
    th = idx.threads["main"]
    mid = th.ids[len(th) // 2]
    assert "~" in mid or mid.startswith("@")
    urls = ["/s/proxy", f"/s/proxy/m/{mid}", "/s/proxy/m/" + th.ids[5],
            f"/s/proxy/w/main?before={len(th) // 2}", f"/s/proxy/w/main?after={len(th) // 2}",
            "/s/proxy/w/main?before=30",
            # permalinks from before: a response's own id, an older index's record number
            "/s/proxy/m/msg_01hi", "/s/proxy/m/L40"]
    wrapped.lines_fold(log)  # (this process has read the whole log)
    c = first.test_client()
    want = {}
    for url in urls:
        r = c.get(url)
        want[url] = (r.status_code, r.headers.get("Location"), cards(r.get_data(as_text=True)))
    assert all(len(w[2]) > 5 for w in want.values() if w[0] == 200)
    assert want["/s/proxy/m/L40"][:2] == (302, f"/s/proxy/m/{th.ids[39]}")
    hi = next(ev.id for ev in load_events(idx, "main", 0, len(th)) if ev.source_id == "msg_01hi")
    assert want["/s/proxy/m/msg_01hi"][:2] == (302, f"/s/proxy/m/{hi}")
    assert any("goes on with conversation" in card for card in want["/s/proxy"][2])

    wrapped._folds.clear()
    no_whole_read(monkeypatch)
    second = create_app(config)  # a new app over the same cache: what a restarted server is
    c = second.test_client()
    assert c.get("/").status_code == 200
    for url in urls:
        r = c.get(url)
        assert (r.status_code, r.headers.get("Location"), cards(r.get_data(as_text=True))) == want[url], url
    assert not wrapped._folds
