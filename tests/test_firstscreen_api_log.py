"""A big API call log (a JSONL file of `{request, response}` wrappers a proxy writes, read as one
document: formats/wrapped.py) opens at once like a JSONL session: its first screen is read from the
lines it shows (`wrapped.region`), the whole log is read in the background, cards whose other half
was not read say "resolving…" and complete in place, and its events are named by where their line
begins, so a link taken from the first screen opens the same event after the whole read.

The same calls kept as one JSON array open at their first calls, read an element at a time. A big
JSON document a format reads whole (a Gemini API checkpoint whose calls are numbered by their
places) cannot be shown in part: its page says it is reading the file, with its size, and draws
itself again when the pass is done.

The background build is held by a listener until the test releases it: nothing sleeps."""

import json
import os
import re

import pytest
from playwright.sync_api import expect

from viewer import partial
from viewer.formats import wrapped
from viewer.index import SessionIndex
from viewer.templating import dom_id
from viewer.web import early

from conftest import LiveServer, held_app, stream_open

CALLS = 110  # one conversation: each request sends its whole history again (about 25 MB in all)
URL = "https://api.openai.com/v1/chat/completions"


def log_lines(calls=CALLS, output=4000, task="Tidy the repository"):
    """A proxy's log of one OpenAI chat-completions conversation: call i answers call i-1's tool
    call (`call_<i-1>`, its output "output of step i-1 …") and asks for tool call `call_<i>`; the
    last call answers in words."""
    hist = [json.dumps({"role": "system", "content": "You are a coding agent."}),
            json.dumps({"role": "user", "content": task})]
    for i in range(calls):
        last = i == calls - 1
        msg = {"role": "assistant", "content": "All tidy." if last else f"step {i}"}
        if not last:
            msg["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                  "function": {"name": "shell", "arguments": json.dumps({"cmd": f"ls {i}"})}}]
        body = {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 1764050400 + i,
                "model": "gpt-4o", "choices": [{"index": 0, "message": msg,
                                                "finish_reason": "stop" if last else "tool_calls"}],
                "usage": {"prompt_tokens": 10 * len(hist), "completion_tokens": 5, "total_tokens": 10 * len(hist) + 5}}
        yield ('{"request": {"timestamp": %d, "method": "POST", "url": "%s", "headers": {}, "body": '
               '{"model": "gpt-4o", "messages": [%s]}}, "response": {"timestamp": %d.5, '
               '"status_code": 200, "headers": {}, "body": %s}}\n') % (
            1764050400 + i, URL, ",".join(hist), 1764050400 + i, json.dumps(body))
        hist.append(json.dumps(msg))
        hist.append(json.dumps({"role": "tool", "tool_call_id": f"call_{i}",
                                "content": f"output of step {i} " + "x" * output}))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = tmp_path_factory.mktemp("apilog") / "logs"
    root.mkdir()
    path = root / "proxy.jsonl"
    with open(path, "w") as f:
        f.writelines(log_lines())
    assert path.stat().st_size > 24 << 20
    os.utime(path, (1_700_000_000, 1_700_000_000))  # a finished log
    return root, path


@pytest.fixture
def app(big, tmp_path):
    wrapped._folds.clear()  # (no reading of the log kept by an earlier test)
    yield from held_app(big[0], tmp_path)


def get(client, url):
    r = client.get(url)
    r.close()  # (the background build starts once the page is sent)
    return r


def html_of(client, url):
    return get(client, url).get_data(as_text=True)


def index_of(app, key="proxy"):
    return app.extensions["viewer"].store.build(key).wait(120)


def permalinks(html):
    found = re.findall(r'<li class="ev [^"]*" id="m-([^"]+)".*?class="permalink" href="([^"]+)"', html, re.S)
    return {k: v.replace("&amp;", "&") for k, v in found}


def test_the_latest_calls_are_served_before_the_log_is_read(app, big):
    root, path = big
    c = app.test_client()
    html = html_of(c, "/s/proxy?at=end")
    build = app.extensions["viewer"].store.running("proxy")
    assert build is not None and not build.done and app.hold.held.wait(30)  # held, not done
    assert str(path) not in wrapped._folds  # the log was not read whole for it
    assert "All tidy." in html and f"output of step {CALLS - 2}" in html
    assert "Reading the whole session" in html and 'class="counting"' in html
    assert len(html) < 2_000_000
    links = permalinks(html)
    assert len(links) > 20 and all(k.startswith("@") for k in links)
    app.hold.release.set()
    idx = index_of(app)
    th = idx.threads["main"]
    assert idx.summary.tool_calls == CALLS - 1
    for eid in links:  # the first screen named its events as the whole read does
        assert eid in th.ids
    html = html_of(c, "/s/proxy?at=end")
    assert "resolving" not in html and 'class="counting"' not in html


def test_links_from_the_first_screen_open_their_events_before_and_after_the_whole_read(app):
    c = app.test_client()
    links = permalinks(html_of(c, "/s/proxy?at=end"))
    picked = list(links.items())[::7]
    for eid, href in picked:
        page = get(c, href)
        assert page.status_code == 200 and f'data-target-id="{eid}"' in page.get_data(as_text=True)
    assert not app.extensions["viewer"].store.running("proxy").done
    app.hold.release.set()
    index_of(app)
    for eid, href in picked:
        page = get(c, href)
        assert page.status_code == 200, eid  # the same event, no redirect
        html = page.get_data(as_text=True)
        assert f'data-target-id="{eid}"' in html and 'class="counting"' not in html


def test_a_cold_permalink_to_the_middle_opens_around_it_before_the_whole_read(app, big):
    root, path = big
    th = SessionIndex(path).build().threads["main"]
    middle = th.ids[len(th) // 2]
    reply = next(th.ids[i] for i in range(len(th) // 2, len(th)) if th.ids[i].endswith("~2"))
    c = app.test_client()
    for eid in (middle, reply):
        html = html_of(c, f"/s/proxy/m/{eid}")
        assert re.search(rf'<li class="ev [^"]*target[^"]*" id="m-{re.escape(eid)}"', html), eid
    assert app.hold.held.wait(30) and not app.extensions["viewer"].store.running("proxy").done
    assert str(path) not in wrapped._folds


def test_a_region_reads_what_the_whole_read_gives_for_its_lines(big):
    root, path = big
    full = SessionIndex(path).build()
    th = full.threads["main"]
    for part in (partial.tail(str(path)), partial.head(str(path)),
                 partial.around(str(path), th.offsets[len(th) // 2])):
        t = part.threads["main"]
        first = full.seq_at(part.region.lo)
        assert len(t) > 40
        assert t.ids == th.ids[first:first + len(t)]
        assert list(t.offsets) == list(th.offsets[first:first + len(t)])
    # an id of an older index (the record's number) still opens its event
    assert full.at_record("L3") == th.ids[2]


def test_a_log_s_first_screen_from_its_start_is_read_once(big, monkeypatch):
    """A log's lines (a whole request each) are big: its head is read in one region, not grown from
    a dataset's small start (which read the head of the log three times)."""
    root, path = big
    reads = []
    real = partial._read
    monkeypatch.setattr(partial, "_read", lambda *a, **k: reads.append(a[3:5]) or real(*a, **k))
    assert len(partial.head(str(path)).threads["main"]) > 40
    assert len(reads) == 1, reads



def test_the_index_pass_of_a_finished_log_reads_each_line_once(big, monkeypatch):
    """A log not written lately (its reading is not kept in memory) was read whole twice by one
    index pass: once to learn it is a file of wrappers (`detect.stream_plan`), once to index it —
    half the pass (the bench's 100 MB log: 40 % of plain orjson per line)."""
    root, path = big
    wrapped._folds.clear()
    decoded = []
    real = wrapped._lines

    def counted(f, scanner):
        for got in real(f, scanner):
            decoded.append(got[2])
            yield got
    monkeypatch.setattr(wrapped, "_lines", counted)
    SessionIndex(path).build()
    assert len(decoded) == CALLS and len(set(decoded)) == CALLS
    assert not wrapped.kept(path)

def test_a_permalink_kept_from_an_older_index_leads_to_its_event(app, big):
    root, path = big
    c = app.test_client()
    app.hold.release.set()
    th = index_of(app).threads["main"]
    r = get(c, "/s/proxy/m/L5")
    assert r.status_code == 302 and r.headers["Location"].endswith(f"/s/proxy/m/{th.ids[4]}")
    # a response was named by its own id then: chatcmpl-7 is the answer that asks for call_7
    r = get(c, "/s/proxy/m/chatcmpl-7")
    assert r.status_code == 302
    html = html_of(c, r.headers["Location"].split("localhost", 1)[-1])
    target = re.search(r'<li class="ev [^"]*target[^"]*" id="m-[^"]+".*?</li>', html, re.S)
    assert target and "step 7" in target.group(0)
    assert get(c, "/s/proxy/m/chatcmpl-nowhere").status_code == 404


def write_document(path):
    path.write_text("[" + ",\n".join(ln.rstrip("\n") for ln in log_lines(70, 2600)) + "]\n")
    return path


@pytest.fixture
def document(tmp_path):
    """One JSON array of the same calls, above the size a page waits for."""
    root = tmp_path / "docs"
    root.mkdir()
    path = write_document(root / "calls.json")
    assert path.stat().st_size > 5 << 20
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return root, path


def test_a_big_json_array_of_calls_opens_at_its_first_calls_before_its_index(document, tmp_path, monkeypatch):
    """A log of API calls kept as one JSON array is read an element at a time (formats/wrapped.py
    `items_fold`): its first screen is its first calls, read before the index, named as the
    index names them; the index never decodes the array whole."""
    root, path = document
    from viewer.formats import detect

    def whole(*_a, **_k):
        raise AssertionError("the whole array was read")
    monkeypatch.setattr(detect, "read_document", whole)
    for app in held_app(root, tmp_path):
        c = app.test_client()
        html = html_of(c, "/s/calls")
        build = app.extensions["viewer"].store.running("calls")
        assert build is not None and not build.done and app.hold.held.wait(30)  # held, not done
        assert "reading-page" not in html and 'id="index-progress"' in html
        assert "Tidy the repository" in html and "step 0" in html and "API call 1" in html
        assert "output of step 60 " not in html  # (its first calls, not the whole log)
        first = partial.head(str(path)).threads["main"]
        app.hold.release.set()
        idx = index_of(app, "calls")
        th = idx.threads["main"]
        assert 10 < len(first) < len(th) and first.ids == th.ids[:len(first)] and first.paths == th.paths[:len(first)]
        assert idx.calls.get("call_3").status == "completed" and idx.summary.tool_calls == 69
        html = html_of(c, "/s/calls")
        assert "reading-page" not in html and "output of step 3 " in html


def write_checkpoint(path, turns: int = 9000):
    """A Gemini API chat checkpoint whose calls name no id: numbered by their places, which only a
    whole read of the list gives (formats/gemini.py `number_calls`)."""
    turns_ = []
    for i in range(turns):
        turns_ += [{"role": "user", "parts": [{"text": f"list folder {i} " + "y" * 300}]},
                   {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {"dir": f"d{i}"}}}]},
                   {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"out": f"files of {i}"}}}]}]
    path.write_text(json.dumps(turns_, indent=1))
    return path


def test_a_big_json_document_read_whole_shows_that_it_is_read_then_itself(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    path = write_checkpoint(root / "checkpoint.json")
    assert path.stat().st_size > 5 << 20
    os.utime(path, (1_700_000_000, 1_700_000_000))
    for app in held_app(root, tmp_path):
        c = app.test_client()
        html = html_of(c, "/s/checkpoint")
        assert app.hold.held.wait(30)
        mb = early.size_words(path.stat().st_size)
        assert "reading-page" in html and f"Reading {mb}…" in html and f"One JSON document of {mb}" in html
        assert 'early=0-0' in html
        app.hold.release.set()
        index_of(app, "checkpoint")
        html = html_of(c, "/s/checkpoint")
        assert "reading-page" not in html and "list folder 0 " in html


@pytest.fixture
def interleaved(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    path = write_interleaved(root / "proxy.jsonl")
    assert path.stat().st_size > 5 << 20
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return root, path


def write_interleaved(path):
    """A proxy's log of two conversations: the first asks for a tool call (`call_lint`), the second
    (a sub-agent's, through the same proxy) runs 80 calls, then the first goes on with the call's
    output — in the last line of the log."""
    system = {"role": "system", "content": "You are the main agent."}
    ask = {"role": "user", "content": "Lint the project"}
    call = {"role": "assistant", "content": "Linting.", "tool_calls": [{"id": "call_lint", "type": "function",
            "function": {"name": "shell", "arguments": json.dumps({"cmd": "lint"})}}]}

    def exchange(t, messages, answer, rid):
        body = {"id": rid, "object": "chat.completion", "created": t, "model": "gpt-4o",
                "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}]}
        return json.dumps({"request": {"timestamp": t, "method": "POST", "url": URL, "headers": {},
                                       "body": {"model": "gpt-4o", "messages": messages}},
                           "response": {"timestamp": t + 0.5, "status_code": 200, "headers": {}, "body": body}}) + "\n"

    with open(path, "w") as f:
        f.write(exchange(1764050400, [system, ask], call, "chatcmpl-main-1"))
        f.writelines(log_lines(80, 2000))
        f.write(exchange(1764059999, [system, ask, call, {"role": "tool", "tool_call_id": "call_lint",
                                                          "content": "lint: 0 problems"}],
                         {"role": "assistant", "content": "The project is clean."}, "chatcmpl-main-2"))
    return path


@pytest.mark.browser
def test_a_call_whose_result_was_not_read_resolves_in_place(interleaved, tmp_path, watched_page):
    root, path = interleaved
    for app in held_app(root, tmp_path):
        with LiveServer(app) as srv:
            page = watched_page
            page.goto(srv.url + "/s/proxy?from=0")
            expect(page.locator("#tc-call_lint-state")).to_contain_text("resolving")
            expect(page.locator("#tc-call_lint-result")).to_contain_text("Result further down — resolving…")
            expect(page.locator("#index-progress")).to_be_visible()
            stream_open(page, "early-stream")
            page.evaluate("window.__kept = document.getElementById('timeline')")
            app.hold.release.set()
            expect(page.locator("#tc-call_lint-state")).to_contain_text("completed", timeout=60_000)
            expect(page.locator("#tc-call_lint-result")).to_contain_text("lint: 0 problems")
            expect(page.locator("#index-progress")).to_be_hidden()
            assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
            assert not page.problems


def test_a_first_screen_whose_last_line_the_whole_read_reads_otherwise_is_redrawn_in_place(interleaved, tmp_path):
    """The log's last line goes on with a conversation last seen at its start: a first screen of
    its end shows that conversation's history again (a new "Conversation" and its messages),
    which the whole read does not. Once the index is done, that line's cards are taken out and the
    index's put in the place of the first ("API call 82 goes on with conversation 1", the tool's
    output, the answer) — the page is not reloaded (it was: `reset`)."""
    root, path = interleaved
    last = path.read_bytes().rstrip(b"\n").rindex(b"\n") + 1
    for app in held_app(root, tmp_path):
        c = app.test_client()
        html = html_of(c, "/s/proxy?at=end")
        assert "The project is clean." in html
        assert f'id="m-@{last}~6"' in html and "goes on with" not in html
        region = re.search(r"early=(\d+-\d+)", html).group(1)
        app.hold.release.set()
        body = c.get(f"/s/proxy/events?early={region}").get_data(as_text=True)
        assert "event: reset" not in body
        for n in range(2, 7):  # the page's cards of the line are taken out first …
            assert f'<hx-partial hx-target="#m-\\@{last}\\~{n}" hx-swap="delete">' in body
        # … and the index's three put in the place of the first
        swap = body.index(f'<hx-partial hx-target="#m-\\@{last}" hx-swap="outerHTML">')
        cards = re.findall(r'<li class="ev [^"]*" id="m-([^"]+)"', body[swap:body.index("</hx-partial>", swap)])
        assert cards == [f"@{last}", f"@{last}~2", f"@{last}~3"]
        assert "API call 82 goes on with conversation 1 (line 82)" in body
        assert body.index("delete") < swap


@pytest.fixture
def two_conversations(tmp_path):
    """A proxy's log of two conversations, one after the other, whose calls use the same ids
    (`call_0`…: the second's are `call_0~2`… in the whole read)."""
    root = tmp_path / "logs"
    root.mkdir()
    path = root / "proxy.jsonl"
    with open(path, "w") as f:
        f.writelines(log_lines(50, 3000))
        f.writelines(log_lines(70, 3000, task="Tidy the docs"))
    assert path.stat().st_size > 5 << 20
    os.utime(path, (1_700_000_000, 1_700_000_000))
    starts = [0]
    for line in path.read_bytes().splitlines(keepends=True)[:-1]:
        starts.append(starts[-1] + len(line))
    return root, path, starts


def test_a_permalink_s_first_screen_in_the_middle_gets_its_numbers_and_ids_in_place(two_conversations, tmp_path):
    """A permalink to the middle of the second conversation, before the index: its cards cannot
    know which call of the file they are, nor that the first conversation used their call ids.
    Once the index is done, the cards the index draws otherwise are completed in place, with
    "API call 96" and `call_45~2`; the page is not reloaded (it was: `reset`) and its permalink's
    card stays the target."""
    root, path, starts = two_conversations
    at = starts[95]  # call 96 of the file: the second conversation's 46th
    for app in held_app(root, tmp_path):
        c = app.test_client()
        html = html_of(c, f"/s/proxy/m/@{at}~2")
        card = re.search(rf'<li class="ev [^"]*target[^"]*" id="m-@{at}~2".*?</li>', html, re.S).group(0)
        assert "API call · 0.5 s" in card and 'data-call="call_45"' in card
        region = re.search(r"early=(\d+-\d+)", html).group(1)
        assert f"target=%40{at}~2" in html or f"target=@{at}~2" in html
        assert app.hold.held.wait(30) and not app.extensions["viewer"].store.running("proxy").done
        app.hold.release.set()
        body = c.get(f"/s/proxy/events?early={region}&target=@{at}~2").get_data(as_text=True)
        assert "event: reset" not in body
        # (its card differs in its number and call id only: those are changed in the page's card,
        # not sent again: web/cardpatch.py)
        renames = json.loads(re.search(r"data-renames='([^']+)'", body).group(1))
        changes = {cid: (attrs, texts) for cid, attrs, texts in renames["cards"]}
        attrs, texts = changes[f"m-@{at}~2"]
        assert ["API call · 0.5 s", "API call 96 · 0.5 s"] in texts
        assert ["call_45", "call_45~2"] in attrs
        assert not any("class" in a for a in attrs)  # still the target
        # its result, the next line's card (folded into the call's: a link to it), names it alike
        attrs, _ = changes[f"m-@{starts[96]}"]
        assert [dom_id("rr-", "call_45"), dom_id("rr-", "call_45~2")] in attrs


@pytest.mark.browser
def test_a_mid_file_first_screen_is_numbered_in_place_in_the_browser(two_conversations, tmp_path, watched_page):
    root, path, starts = two_conversations
    at = starts[95]
    reply = f'[id="m-@{at}~2"]'
    for app in held_app(root, tmp_path):
        with LiveServer(app) as srv:
            page = watched_page
            page.goto(srv.url + f"/s/proxy/m/@{at}~2")
            expect(page.locator(reply)).to_contain_text("API call · 0.5 s")
            expect(page.locator(f'{reply} [data-call="call_45"]')).to_have_count(1)
            stream_open(page, "early-stream")
            page.evaluate("window.__kept = document.getElementById('timeline')")
            app.hold.release.set()
            expect(page.locator(reply)).to_contain_text("API call 96 · 0.5 s", timeout=60_000)
            expect(page.locator(f'{reply} [data-call="call_45~2"]')).to_have_count(1)
            expect(page.locator(reply)).to_have_class(re.compile(r"\btarget\b"))
            # its result, in the next line's card, completes the renamed call
            expect(page.locator(f'{reply} [data-call="call_45~2"]')).to_contain_text("completed")
            expect(page.locator(f'{reply} [data-call="call_45~2"]')).to_contain_text("output of step 45")
            expect(page.locator("#index-progress")).to_be_hidden()
            assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
            assert page.locator('[id^="m-"]').evaluate_all(
                "els => new Set(els.map(e => e.id)).size === els.length")  # no card twice
            assert not page.problems


@pytest.mark.browser
def test_the_latest_calls_read_otherwise_are_replaced_in_place_in_the_browser(interleaved, tmp_path, watched_page):
    root, path = interleaved
    last = path.read_bytes().rstrip(b"\n").rindex(b"\n") + 1
    for app in held_app(root, tmp_path):
        with LiveServer(app) as srv:
            page = watched_page
            page.goto(srv.url + "/s/proxy?at=end")
            expect(page.locator(f'[id="m-@{last}~6"]')).to_contain_text("The project is clean.")
            stream_open(page, "live")
            page.evaluate("window.__kept = document.getElementById('timeline')")
            app.hold.release.set()
            expect(page.locator(f'[id="m-@{last}"]')).to_contain_text(
                "API call 82 goes on with conversation 1 (line 82)", timeout=60_000)
            expect(page.locator(f'[id="m-@{last}~3"]')).to_contain_text("The project is clean.")
            expect(page.locator(f'[id="m-@{last}~3"]')).to_contain_text("API call 82")
            expect(page.locator(f'[id^="m-@{last}~"]')).to_have_count(2)
            expect(page.locator("#index-progress")).to_be_hidden()
            assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
            assert not page.problems


@pytest.mark.browser
def test_a_big_json_array_of_calls_completes_its_first_screen_in_place(document, tmp_path, watched_page):
    """The first screen of a JSON array of calls, drawn before its index in real Chromium, is
    completed in place once the array is indexed (its counts filled in, no reload)."""
    root, path = document
    for app in held_app(root, tmp_path):
        with LiveServer(app) as srv:
            page = watched_page
            page.goto(srv.url + "/s/calls")
            expect(page.locator(f'[id="{dom_id("tc-", "call_3")}-state"]')).to_contain_text("completed")
            expect(page.locator("#timeline")).to_contain_text("output of step 3 ")
            expect(page.locator("#index-progress")).to_be_visible()
            expect(page.locator("#session-facts .counting").first).to_be_visible()
            stream_open(page, "early-stream")
            page.evaluate("window.__kept = document.getElementById('timeline')")
            app.hold.release.set()
            expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
            expect(page.locator("#session-facts .counting")).to_have_count(0)
            expect(page.locator("#session-facts")).to_contain_text("69")  # tool calls
            assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
            assert not page.problems


@pytest.mark.browser
def test_a_big_json_document_page_shows_itself_once_read(tmp_path, watched_page):
    root = tmp_path / "docs"
    root.mkdir()
    path = write_checkpoint(root / "checkpoint.json")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    for app in held_app(root, tmp_path):
        with LiveServer(app) as srv:
            page = watched_page
            page.goto(srv.url + "/s/checkpoint")
            expect(page.locator("#index-progress")).to_contain_text(
                f"Reading {early.size_words(path.stat().st_size)}")
            stream_open(page, "early-stream")
            app.hold.release.set()
            expect(page.locator(".ev").first).to_be_visible(timeout=60_000)  # drawn again, read
            expect(page.locator("#timeline")).to_contain_text("list folder 3 ")
            assert not page.problems
