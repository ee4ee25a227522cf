"""In-session search: what it matches (decoded visible text, every thread, cut blocks), what it never
matches (JSON syntax, field names, base64), regular expressions, and the page and JSON routes."""

import base64
import json
import os
import re
import time

import pytest
from hypothesis import given, settings, strategies as st

from viewer import reader
from viewer.index import SessionIndex
from viewer.search import (Matcher, Prefilter, Query, QueryError, Scan, char_forms,
                           required_literals, search)
from viewer.web import create_app

from conftest import SESSIONS
from test_web import elements

CC = "claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"
SUB = "a7c4e2f91b3d5a6c8"


def legion_line(i, content, **extra):
    return {"type": "user" if i % 2 == 0 else "assistant", "content": content,
            "timestamp": 1761073190.0 + i, "session_id": "s", "message_id": f"m{i}", **extra}


def write_session(folder, lines, *, ensure_ascii=True):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "messages.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=ensure_ascii))
                            + "\n" for x in lines), encoding="utf-8")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def hits(path, text, **kw):
    idx = SessionIndex(path).build()
    return [h for h in search(idx, Query(text, **kw))]


def ids(found):
    return [h.id for h in found]


# --- what matches -------------------------------------------------------------------------------


def test_escapes_in_the_file_match_the_decoded_text(tmp_path):
    path = write_session(tmp_path / "s", [
        legion_line(0, 'He said "stop" and left'),
        legion_line(1, "line one\nline two"),
        legion_line(2, "un café noir"),  # \u00e9 in the file (ensure_ascii)
        legion_line(3, "tab\there"),
        r'{"type": "user", "content": "see a\/b and \u003ctag\u003e", "session_id": "s", "message_id": "m4"}',
        legion_line(5, "nothing to see"),
    ])
    assert "\\u00e9" in path.read_text() and '\\"stop\\"' in path.read_text()
    assert ids(hits(path, 'said "stop"')) == ["m0"]
    assert ids(hits(path, "one\nline two")) == ["m1"]
    assert ids(hits(path, "café")) == ["m2"]
    assert ids(hits(path, "CAFÉ")) == ["m2"]  # case-insensitive beyond ASCII
    assert ids(hits(path, "CAFÉ", case=True)) == []
    assert ids(hits(path, "tab\there")) == ["m3"]
    assert ids(hits(path, "a/b")) == ["m4"]
    assert ids(hits(path, "<tag>")) == ["m4"]
    # the escapes themselves are not text
    assert hits(path, "\\u00e9") == [] and hits(path, '\\"') == [] and hits(path, "\\n") == []


def test_raw_utf8_files_match_too(tmp_path):
    path = write_session(tmp_path / "s", [legion_line(0, "日本語のテキスト"), legion_line(1, "café")],
                         ensure_ascii=False)
    assert ids(hits(path, "本語")) == ["m0"]
    assert ids(hits(path, "CAFÉ")) == ["m1"]


def test_json_syntax_field_names_and_base64_never_match(tmp_path):
    payload = base64.b64encode(os.urandom(6000)).decode()
    needle = payload[3000:3012]
    path = write_session(tmp_path / "s", [
        {"type": "assistant", "content": "Reading it", "session_id": "s", "message_id": "m0",
         "metadata": {"tool_uses": [{"id": "t1", "name": "Read", "input": {"file_path": "/a.py"}}]}},
        {"type": "user", "content": [{"type": "text", "text": "a screenshot"}, {
            "type": "image", "source": {"type": "base64", "media_type": "image/png", "data": payload}}],
         "session_id": "s", "message_id": "m1"},
    ])
    assert needle in path.read_text()
    assert hits(path, needle) == []
    assert hits(path, "file_path") == [] and hits(path, "tool_uses") == []
    assert hits(path, '":') == [] and hits(path, "session_id") == []
    assert ids(hits(path, "/a.py")) == ["m0"]  # the value is text
    assert ids(hits(path, "Read")) == ["m0"]  # and so is the tool's name


def test_hits_in_subagent_files_come_where_their_call_sits():
    idx = SessionIndex(SESSIONS / "claude-project" / "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.jsonl").build()
    found = list(search(idx, Query("Grep")))
    threads = [h.thread for h in found]
    assert SUB in threads and "main" in threads
    # reading order: the sub-agent's events follow the event holding the Task call
    task = idx.calls.call(idx.threads[SUB].meta["parent_call"]).call
    main_after = [h for h in found if h.thread == "main" and h.seq > task[1]]
    subs = [i for i, h in enumerate(found) if h.thread == SUB]
    if main_after:
        assert max(subs) < found.index(main_after[0])
    assert all(found[i].thread == SUB for i in range(subs[0], subs[-1] + 1))


def test_hidden_events_match_and_say_so():
    idx = SessionIndex(SESSIONS / "legion-feature-tour" / "messages.jsonl").build()
    (hit,) = search(idx, Query("Claude Code Launched"))
    assert hit.hidden and hit.id == "L1"


def test_a_match_deep_inside_a_huge_line_is_found(tmp_path):
    body = "".join(f"{i:08d} log line\n" for i in range(400_000)) + "the needle at the end"
    path = write_session(tmp_path / "huge", [legion_line(0, "the log:"), legion_line(1, body),
                                             legion_line(2, "done")])
    idx = SessionIndex(path).build()
    assert idx.threads["main"].lengths[1] > reader.HUGE_LINE
    (hit,) = search(idx, Query("NEEDLE at the end"))
    assert hit.id == "m1" and "needle at the end" in hit.snippet
    assert hit.snippet[hit.mark[0]:hit.mark[1]] == "needle at the end"


def test_matches_are_counted_and_the_snippet_marks_the_first(tmp_path):
    path = write_session(tmp_path / "s", [legion_line(0, "alpha beta alpha gamma Alpha")])
    (hit,) = hits(path, "alpha")
    assert hit.matches == 3 and hit.snippet[hit.mark[0]:hit.mark[1]] == "alpha"
    (hit,) = hits(path, "alpha", case=True)
    assert hit.matches == 2


# --- regular expressions ---------------------------------------------------------------------------


def test_regular_expressions_match_decoded_text(tmp_path):
    path = write_session(tmp_path / "s", [legion_line(0, "exit code 127 here"),
                                          legion_line(1, "exit code none"),
                                          legion_line(2, 'quote "x" end')])
    assert ids(hits(path, r"exit code \d+", regex=True)) == ["m0"]
    assert ids(hits(path, r"EXIT code (\d+|none)", regex=True)) == ["m0", "m1"]
    assert ids(hits(path, r'"x"', regex=True)) == ["m2"]
    assert ids(hits(path, r"^exit", regex=True)) == ["m0", "m1"]
    assert ids(hits(path, r"\d{3}\s", regex=True)) == ["m0"]  # nothing literal to look for: every line


def test_a_bad_regular_expression_says_what_is_wrong():
    with pytest.raises(QueryError, match=r"Not a valid regular expression: missing \) at position 3"):
        Matcher(Query("(ab", regex=True))
    with pytest.raises(QueryError, match="matches empty text"):
        Matcher(Query("x*", regex=True))
    with pytest.raises(QueryError, match="too long"):
        Matcher(Query("x" * 5000))


def test_a_pathological_regular_expression_is_bounded(tmp_path):
    # (a|aa)+$ backtracks exponentially on a long run of a's that does not end the text: without a
    # bound this one search would run for hours
    path = write_session(tmp_path / "s", [legion_line(i, "a" * 80 + "b") for i in range(4)]
                         + [legion_line(4, "aaa")])
    idx = SessionIndex(path).build()
    matcher = Matcher(Query("(a|aa)+$", regex=True))
    t = time.monotonic()
    found = list(Scan(idx, matcher, budget=30.0))
    assert time.monotonic() - t < 60  # bounded: a few piece budgets, not hours
    assert matcher.timeouts >= 1
    assert ids(found) == ["m4"]  # the text it could finish on still matches


def test_a_pathological_regular_expression_cannot_hold_a_page(tmp_path):
    root = tmp_path / "sessions"
    write_session(root / "slow", [legion_line(i, "a" * 80 + "b") for i in range(30)])
    c = app_for(root, tmp_path)
    t = time.monotonic()
    html = c.get("/s/slow?q=(a|aa)%2B$&regex=1").get_data(as_text=True)
    assert time.monotonic() - t < 60  # the page's search and its marking have budgets
    assert "The pattern took too long on" in html and 'id="timeline"' in html


def test_required_literals_are_conservative():
    assert required_literals(r"permission (denied|refused)") == ([["permission "]], False)
    assert required_literals(r"foo\.bar+baz?|qux") == ([["foo.bar", "qux"]], False)
    assert required_literals(r"ab*c") == ([["a"], ["c"]], False)
    assert required_literals(r"(?i)Hello") == ([["Hello"]], True)
    assert required_literals(r"(?x) a b") is None  # verbose mode changes what a literal is
    assert required_literals(r"[[:alpha:]]x{2}") == ([], False)
    assert required_literals(r"\d{5}\s") == ([], False)
    assert required_literals(r"a|\w+") == ([], False)  # a branch with no literal: nothing required
    assert required_literals(r"\x41BC") == ([["BC"]], False)


# the invariant the prefilter rests on: a line whose decoded text holds the needle holds one of
# the needle's byte forms, however the line was written
text_chars = st.characters(codec="utf-8", exclude_categories=("Cs",))


@settings(max_examples=300, deadline=None)
@given(st.text(text_chars, min_size=1, max_size=12), st.text(text_chars, max_size=20),
       st.text(text_chars, max_size=20), st.booleans(), st.booleans(), st.booleans())
def test_the_prefilter_never_drops_a_matching_line(needle, before, after, ascii_only, slashes, fold):
    value = before + needle + after
    line = json.dumps({"content": value}, ensure_ascii=ascii_only).encode()
    if slashes:
        line = line.replace(b"/", b"\\/")
    pre = Prefilter.of(Query(needle, case=not fold))
    hay = line.lower() if pre.lower else line
    assert pre.find(hay, 0) >= 0, (needle, line)
    if fold:
        shouted = json.dumps({"content": before + needle.upper() + after}, ensure_ascii=ascii_only)
        if len(needle.upper()) == len(needle):
            shouted = shouted.encode()
            assert pre.find(shouted.lower() if pre.lower else shouted, 0) >= 0


def test_char_forms_cover_json_escapes():
    assert char_forms('"', False) == {b'\\"'}
    assert char_forms("/", False) == {b"/", b"\\/"}
    assert b"\\u00e9" in char_forms("é", False) and "é".encode() in char_forms("é", False)
    assert b"\\u00c9".lower() in char_forms("é", True)


# --- the scan: limits, budgets, resuming --------------------------------------------------------


def test_a_scan_stopped_by_its_limit_resumes_exactly(tmp_path):
    path = write_session(tmp_path / "s", [legion_line(i, f"item {i} needle") for i in range(50)])
    idx = SessionIndex(path).build()
    every = ids(search(idx, Query("needle")))
    got, cursor = [], None
    while True:
        scan = search(idx, Query("needle"), limit=7, cursor=cursor)
        got += ids(scan)
        if scan.complete:
            break
        assert scan.stopped == "limit" and scan.next
        cursor = scan.next
    assert got == every and len(every) == 50


# --- the web: page, JSON twin, marking ----------------------------------------------------------


def app_for(root, tmp_path):
    return create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                       "TESTING": True}).test_client()


def test_json_twin_has_the_promised_shape(client):
    data = client.get("/s/legion-feature-tour/search.json?q=timeline").get_json()
    assert {"query", "total", "complete", "hits"} <= set(data)
    assert data["query"] == "timeline" and data["complete"] is True
    assert data["total"] == len(data["hits"]) > 1
    for h in data["hits"]:
        assert {"id", "thread", "role", "snippet"} <= set(h)
        assert "timeline" in h["snippet"][h["mark"][0]:h["mark"][1]].lower()
    ranks = [data["hits"].index(h) for h in data["hits"]]
    assert ranks == sorted(ranks)


def test_json_twin_reports_bad_regex_and_limits(client):
    r = client.get("/s/legion-feature-tour/search.json?q=(ab&regex=1")
    assert r.status_code == 400 and "missing )" in r.get_json()["error"]
    r = client.get("/s/legion-feature-tour/search.json?q=e&limit=2")
    data = r.get_json()
    assert data["total"] == 2 and data["complete"] is False and data["next"]


def test_the_search_and_its_stream_say_the_same_about_a_bad_or_missing_query(client):
    for path in ("search.json", "search"):
        r = client.get(f"/s/legion-feature-tour/{path}?q=(ab&regex=1")
        assert r.status_code == 400
        assert r.get_json()["query"] == "(ab" and "missing )" in r.get_json()["error"]
        r = client.get(f"/s/legion-feature-tour/{path}")
        assert r.status_code == 400 and r.get_json()["error"] == "Give a search: ?q=…"


def test_the_search_page_works_without_javascript(client):
    html = client.get("/s/legion-feature-tour?q=AssertionError").get_data(as_text=True)
    assert 'class="find-results"' in html and 'value="AssertionError"' in html
    links = re.findall(r'<a class="hit-link" href="([^"]+)"', html)
    assert links == ["/s/legion-feature-tour/m/tour-bash-result?q=AssertionError"]
    assert "<strong>1</strong> match in <strong>1</strong> message" in html
    page = client.get(links[0]).get_data(as_text=True)
    # the result is drawn in its call's card: marked there, the card opened
    assert re.search(r'data-result-event="tour-bash-result">.*?<mark class="hit">AssertionError</mark>',
                     page, re.S)


def test_a_regex_error_is_shown_in_the_page(client):
    r = client.get("/s/legion-feature-tour?q=(ab&regex=1")
    html = r.get_data(as_text=True)
    assert 'class="find-error"' in html and "missing )" in html
    assert 'id="timeline"' in html  # the session is still there


def test_hostile_query_strings_are_escaped(client):
    for q in ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "'};alert(1);//"]:
        html = client.get("/s/legion-hostile-content", query_string={"q": q}).get_data(as_text=True)
        tags = elements(html)
        assert not [(t, k) for t, a in tags for k in a if k.startswith("on")]
        assert all(a.get("src", "").startswith("/static/") for t, a in tags if t == "script")
        assert not [a for t, a in tags if t == "img" and a.get("src") == "x"]
        assert "<script>alert(1)" not in html
        regex = client.get("/s/legion-hostile-content", query_string={"q": q + "(", "regex": 1})
        assert "<script>alert(1)" not in regex.get_data(as_text=True)
        data = client.get("/s/legion-hostile-content/search.json", query_string={"q": q}).get_json()
        assert data["query"] == q


def test_matches_are_marked_in_the_hit_and_cut_blocks_say_so(tmp_path):
    body = "lorem ipsum dolor\n" * 2000 + "the needle is here\n" + "tail\n" * 10
    root = tmp_path / "sessions"
    write_session(root / "cut", [legion_line(0, "intro"), legion_line(1, body)])
    c = app_for(root, tmp_path)
    page = c.get("/s/cut/m/m1?q=needle").get_data(as_text=True)
    assert "The search matches in the part not shown." in page
    full = re.search(r'hx-get="(/s/cut/e/m1/full/b0\?[^"]+)"', page).group(1)
    assert "q=needle" in full
    frag = c.get(full.replace("&amp;", "&"), headers={"HX-Request": "true"}).get_data(as_text=True)
    assert '<mark class="hit">needle</mark>' in frag


def test_the_stream_sends_hits_then_how_it_ended(client):
    r = client.get("/s/legion-feature-tour/search?q=timeline")
    assert r.mimetype == "application/x-ndjson"
    lines = [json.loads(x) for x in r.get_data(as_text=True).splitlines()]
    hits = [x for x in lines[:-1] if "hit" in x]
    assert len(hits) > 1 and all(x["html"].startswith("<li") for x in hits)
    assert all("progress" in x for x in lines[:-1] if "hit" not in x)  # how far a long scan got
    assert lines[-1]["done"]["complete"] is True and "find-status" in lines[-1]["html"]


def test_a_result_read_in_its_call_card_is_redrawn_as_that_card(tmp_path):
    root = tmp_path / "sessions"
    write_session(root / "fold", [
        legion_line(0, "run it"),
        legion_line(1, "running", metadata={"tool_uses": [
            {"id": "t1", "name": "Bash", "input": {"command": "make"}}]}),
        {"type": "user", "content": "Tool results: 1", "session_id": "s", "message_id": "r1",
         "timestamp": 1761073195.0, "metadata": {"tool_results": [
             {"tool_use_id": "t1", "content": "the build broke"}]}}])
    c = app_for(root, tmp_path)
    frag = c.get("/s/fold/m/r1?q=broke&part=event").get_data(as_text=True)
    assert 'id="m-m1"' in frag  # the card of the call…
    result = re.search(r'<div class="tool-result[^"]*"[^>]*data-result-event="r1"', frag).group(0)
    assert " target" in result  # …its result the target, the match marked in it
    assert '<mark class="hit">broke</mark>' in frag


def test_a_permalink_into_a_thread_no_call_links_to_shows_that_thread(tmp_path):
    folder = tmp_path / "sessions" / "proj"
    sub = folder / "c0ffee" / "subagents"
    sub.mkdir(parents=True)

    def rec(i, kind, text, agent=None):
        return {"type": kind, "uuid": f"00000000-0000-4000-8000-{i:012d}", "sessionId": "c0ffee",
                "timestamp": f"2026-04-18T13:00:{i % 60:02d}.000Z", "isSidechain": bool(agent),
                "message": {"role": kind, "content": text}, **({"agentId": agent} if agent else {})}

    (folder / "c0ffee.jsonl").write_text(
        "".join(json.dumps(rec(i, "user", f"main {i}")) + "\n" for i in range(1, 5)))
    (sub / "agent-acompact-9a.jsonl").write_text(
        "".join(json.dumps(rec(100 + i, "user", f"summary {i} walrus", "acompact-9a")) + "\n"
                for i in range(5)))
    c = app_for(tmp_path / "sessions", tmp_path)
    target = "00000000-0000-4000-8000-000000000102"
    page = c.get(f"/s/proj~c0ffee/m/{target}?q=walrus").get_data(as_text=True)
    assert f'id="m-{target}"' in page and 'id="thread-apart"' in page
    assert "main 1" not in page.split('id="timeline"')[1].split("</ol>")[0]
    assert 'id="live"' not in page  # the main thread's stream would append to another thread
    frag = c.get(f"/s/proj~c0ffee/m/{target}?q=walrus&part=window").get_data(as_text=True)
    assert 'id="thread-apart"' in frag and '<mark class="hit">walrus</mark>' in frag
