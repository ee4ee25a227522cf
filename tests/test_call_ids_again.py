"""A tool-call id used again after its result is a new call (`id~2`, `id~3`…).

OpenAI-compatible servers (llama.cpp, vLLM, Ollama, some shims) number each response's calls from
`call_0` again. Each such call is its own card with its own result and state — on the page, in a
window of a big file opened by a permalink, after a cache load, in a live tail, in the filters and
counts and in every export — while an id written again before its result is still the one call.
"""

import json
import re

import pytest
from playwright.sync_api import expect

from viewer.cache import IndexCache
from viewer.export import Export
from viewer.index import SessionIndex
from viewer.store import Store
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import LiveServer, held_app, stream_open


STEPS = [  # (tool, arguments, output, failed)
    ("list_files", {"path": "."}, "README.md\nsrc/\ntests/", False),
    ("read_file", {"path": "README.md"}, "# Demo\nA small demo project.", False),
    ("run", {"cmd": "pytest -q"}, "1 failed, 2 passed in 0.12s", True),
]


def call(name, args, cid="call_0"):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def output(text, failed=False, cid="call_0"):
    msg = {"role": "tool", "tool_call_id": cid, "content": text}
    if failed:
        msg["extra"] = {"returncode": 1}
    return msg


def conversation(steps=STEPS) -> list:
    msgs = [{"role": "system", "content": "You are a helpful agent."},
            {"role": "user", "content": "Look around the repo and run its tests."}]
    for name, args, out, failed in steps:
        msgs += [call(name, args), output(out, failed)]
    msgs.append({"role": "assistant", "content": "A small demo project; one test fails."})
    return msgs


def cards(html: str) -> list[tuple[str, str, str]]:
    """(call id, state shown, result text) of each call card, in page order."""
    out = []
    for m in re.finditer(r'<div class="tool [^"]*" id="[^"]*" data-call="([^"]*)">', html):
        rest = html[m.end():]
        end = min((i for i in (rest.find('<li class="ev'), rest.find('data-call="')) if i >= 0),
                  default=len(rest))
        card = rest[:end]
        state = re.search(r'<span class="state [^"]*">([^<]*)</span>', card)
        result = re.search(r'class="tool-result[ "][^>]*>(.*)', card, re.S)
        text = re.sub(r"<[^>]+>", "", result.group(1)) if result else ""
        out.append((m.group(1), state.group(1) if state else "", text))
    return out


def shows_own(found, steps=STEPS, ids=("call_0", "call_0~2", "call_0~3")):
    assert [c[0] for c in found] == list(ids)
    for (cid, state, text), (name, _, out, failed) in zip(found, steps):
        assert state == ("error" if failed else "completed"), cid
        assert out.splitlines()[-1] in text, cid
        assert all(o.splitlines()[-1] not in text for _, _, o, _ in steps if o != out), cid


@pytest.fixture
def listed(tmp_path):
    """A plain OpenAI JSON message list whose three responses each call `call_0`."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "reuse.json"
    path.write_text(json.dumps(conversation(), indent=1))
    return path


def test_each_call_of_an_id_used_again_has_its_own_result_and_state(listed, tmp_path):
    idx = SessionIndex(listed).build()
    calls = idx.calls.calls
    assert {cid: (c.name, c.status) for cid, c in calls.items()} == {
        "call_0": ("list_files", "completed"), "call_0~2": ("read_file", "completed"),
        "call_0~3": ("run", "error")}
    assert idx.summary.tool_calls == 3 and idx.summary.errors == 1
    assert {t: v[:2] for t, v in idx.summary.tools.items()} == {
        "list_files": [1, 0], "read_file": [1, 0], "run": [1, 1]}
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    # each result event names the call it answers
    assert [b.tool_use_id for e in evs for b in e.tool_results()] == ["call_0", "call_0~2", "call_0~3"]
    assert calls["call_0~2"].result == ("main", 5) and calls["call_0~3"].call == ("main", 6)

    app = create_app({"ROOTS": [str(listed.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    shows_own(cards(client.get("/s/reuse").get_data(as_text=True)))
    # the failed one is what "errors" and `state=error` pick, the others are not
    failed = client.get("/s/reuse?state=error").get_data(as_text=True)
    assert [c[:2] for c in cards(failed)] == [("call_0~3", "error")]
    listed_tool = cards(client.get("/s/reuse?tool=read_file").get_data(as_text=True))
    assert [c[0] for c in listed_tool] == ["call_0~2"] and "small demo project" in listed_tool[0][2]


def test_exports_pair_each_call_with_its_own_result(listed):
    idx = SessionIndex(listed).build()
    shows_own(cards("".join(Export(idx, "html").chunks())))
    md = "".join(Export(idx, "md").chunks())
    parts = md.split("**Tool: ")[1:]
    assert [p.split("**")[0].replace("\\_", "_") for p in parts] == ["list_files", "read_file", "run"]
    for part, (name, _, out, failed) in zip(parts, STEPS):
        assert ("error" if failed else "completed") in part.splitlines()[0]
        assert out.splitlines()[-1] in part
    data = json.loads("".join(Export(idx, "json").chunks()))
    assert {cid: (c["name"], c["state"], c["call_event"], c["result_event"])
            for cid, c in data["tool_calls"].items()} == {
        "call_0": ("list_files", "completed", "L3", "L4"),
        "call_0~2": ("read_file", "completed", "L5", "L6"),
        "call_0~3": ("run", "error", "L7", "L8")}
    events = [e for e in data["events"] if e["kind"] == "tool_result"] if "events" in data else []
    for e in events:
        assert e["blocks"][0]["tool_use_id"] in data["tool_calls"]


def test_an_id_written_again_before_its_result_is_still_one_call(tmp_path):
    """A call record written twice while it waits (a retry, a repeated record) is not a new call."""
    path = tmp_path / "twice.json"
    msgs = conversation()[:2] + [call("run", {"cmd": "make"}), call("run", {"cmd": "make"}),
                                 output("built"), call("run", {"cmd": "make test"}), output("ok")]
    path.write_text(json.dumps(msgs))
    idx = SessionIndex(path).build()
    assert sorted(idx.calls.calls) == ["call_0", "call_0~2"]
    assert idx.calls.calls["call_0"].result == ("main", 4)
    assert idx.calls.calls["call_0~2"].call == ("main", 5)
    assert idx.calls.calls["call_0~2"].result == ("main", 6)


BIG = 300  # responses: several windows of the page


def big_steps(n=BIG):
    return [("run", {"cmd": f"step {i}"}, f"output of step {i:04d}", i % 7 == 3) for i in range(n)]


@pytest.fixture
def big(tmp_path):
    """A JSONL file of messages, one per line, whose every response calls `call_0`."""
    folder = tmp_path / "sessions" / "big"
    folder.mkdir(parents=True)
    path = folder / "trajectory.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in conversation(big_steps())))
    return path


def test_a_permalink_to_a_later_call_of_an_id_used_again_shows_its_own_result(big, tmp_path):
    cache = tmp_path / "cache"
    app = create_app({"ROOTS": [str(big.parent.parent)], "CACHE_DIR": str(cache), "WATCH": False})
    client = app.test_client()
    store = app.extensions["viewer"].store
    idx = store.index("big~trajectory")
    store.flush()
    assert len(idx.threads["main"]) > 10 * 40  # the page reads it in windows
    # response 250 is on lines 503 (call) and 504 (result); call_0~251 is its call
    i = 250
    assert idx.calls.calls[f"call_0~{i + 1}"].call == ("main", 502)

    def check(client):
        html = client.get(f"/s/big~trajectory/m/L{2 * i + 3}").get_data(as_text=True)
        found = {cid: (state, text) for cid, state, text in cards(html)}
        assert f"call_0~{i + 1}" in found and "call_0" not in found  # a window around it
        for j in range(i - 5, i + 6):
            state, text = found[f"call_0~{j + 1}"]
            assert f"output of step {j:04d}" in text and state == ("error" if j % 7 == 3 else "completed")
        # the window after it, read by offset, goes on with the ids the index gave
        more = re.search(r'hx-get="(/s/big~trajectory/w/main\?[^"]*after=[^"]*)"', html)
        later = cards(client.get(more.group(1).replace("&amp;", "&")).get_data(as_text=True))
        assert later and all(f"output of step {int(cid.split('~')[1]) - 1:04d}" in text
                             for cid, _, text in later)

    check(client)
    # a new server loads the index from the cache: the same calls, the same ids
    builds = []
    real = SessionIndex.build
    SessionIndex.build = lambda self: builds.append(1) or real(self)
    try:
        again = Store([big.parent.parent], IndexCache(cache)).index("big~trajectory")
        assert again.threads["main"].renamed == idx.threads["main"].renamed
        assert again.calls.call(f"call_0~{i + 1}") == idx.calls.call(f"call_0~{i + 1}")
        app2 = create_app({"ROOTS": [str(big.parent.parent)], "CACHE_DIR": str(cache), "WATCH": False})
        check(app2.test_client())
        assert builds == []
    finally:
        SessionIndex.build = real


def test_a_grown_file_names_the_new_call_of_an_id_as_a_whole_read_does(big, tmp_path):
    idx = SessionIndex(big).build()
    with open(big, "a") as f:
        f.write(json.dumps(call("run", {"cmd": "again"})) + "\n")
        f.write(json.dumps(output("the last output")) + "\n")
    change = idx.refresh()
    assert not change.reset and change.new == {"main": len(whole_before := idx.threads["main"]) - 2} \
        and whole_before.renamed.get(len(whole_before) - 1) == {"call_0": f"call_0~{BIG + 1}"}
    whole = SessionIndex(big).build()
    assert idx.threads["main"].renamed == whole.threads["main"].renamed
    assert {c: (v.call, v.result, v.status) for c, v in idx.calls.calls.items()} == {
        c: (v.call, v.result, v.status) for c, v in whole.calls.calls.items()}


@pytest.mark.browser
def test_a_live_call_of_an_id_used_again_completes_with_its_own_output(tmp_path, serve, watched_page):
    folder = tmp_path / "sessions" / "live"
    folder.mkdir(parents=True)
    path = folder / "session.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in conversation(STEPS[:1])[:-1]))
    srv = serve(tmp_path / "sessions")
    page = watched_page
    page.goto(f"{srv.url}/s/live~session")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    first = page.locator('.tool[data-call="call_0"]')
    expect(first.locator(".state")).to_have_text("completed")
    expect(first.locator(".tool-result")).to_contain_text("tests/")
    with open(path, "a") as f:
        f.write(json.dumps(call("read_file", {"path": "README.md"})) + "\n")
    second = page.locator('.tool[data-call="call_0~2"]')
    expect(second.locator(".state")).to_have_text("pending")
    expect(second.locator(".tool-result")).to_contain_text("waiting for the result")
    with open(path, "a") as f:
        f.write(json.dumps(output("# Demo\nA small demo project.")) + "\n")
    expect(second.locator(".state")).to_have_text("completed")
    expect(second.locator(".tool-result")).to_contain_text("A small demo project.")
    expect(first.locator(".state")).to_have_text("completed")
    expect(first.locator(".tool-result")).to_contain_text("tests/")
    expect(first.locator(".tool-result")).not_to_contain_text("small demo")
    assert page.locator(".tool[data-call]").count() == 2
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []


def test_an_anthropic_message_list_that_uses_a_call_id_again(tmp_path):
    """The same in every format: here Anthropic messages from a server that numbers its calls."""
    msgs = [{"role": "user", "content": "Look around the repo and run its tests."}]
    for name, args, out, failed in STEPS:
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_0", "name": name,
                                                    "input": args}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0",
                                               "content": out, "is_error": failed}]}]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(msgs))
    idx = SessionIndex(path).build()
    assert idx.summary.format == "anthropic-messages"
    shows_own(cards("".join(Export(idx, "html").chunks())), ids=("toolu_0", "toolu_0~2", "toolu_0~3"))


@pytest.fixture
def unindexed(tmp_path):
    """6 MB of messages whose every response calls `call_0` (more than a first screen reads), the
    last call still waiting, and a server whose index of it waits until the test releases it."""
    root = tmp_path / "sessions"
    root.mkdir()
    path = root / "long.jsonl"
    steps = [("run", {"cmd": f"step {i}"}, f"output of step {i:04d}\n" + "x" * 4000, False)
             for i in range(1500)]
    msgs = conversation(steps)[:-1] + [call("run", {"cmd": "the last step"})]
    path.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    yield from held_app(root, tmp_path)


@pytest.mark.parametrize("url", ["/s/long?at=end", "/s/long/m/L1503"])
def test_a_first_screen_renamed_by_the_index_is_sent_the_cards_it_shows_only(unindexed, url):
    """Every call of the region a first screen read is named otherwise by the index (`call_0~N`):
    the cards drawn again are those the page shows, not every card of the lines it read (1.7 MB
    for a page of 140 KB)."""
    app = unindexed
    c = app.test_client()
    r = c.get(url)
    page = r.get_data(as_text=True)
    r.close()
    stream = re.search(r'id="(?:live|early-stream)" hx-sse:connect="([^"]+)"', page).group(1)
    stream = re.sub(r"after=[^&]*&amp;", "", stream).replace("&amp;", "&")
    app.hold.release.set()
    body = c.get(stream).get_data(as_text=True)
    shown = set(re.findall(r'<li class="ev [^"]*" id="m-([^"]+)"', page))
    redrawn = {t.replace("\\", "") for t in re.findall(r'<hx-partial hx-target="#m-([^"]+)"', body)}
    # (a card whose call ids alone change is changed in place, not sent again: web/cardpatch.py)
    renames = re.search(r"data-renames='([^']+)'", body)
    changed = {cid[2:] for cid, *_ in json.loads(renames.group(1))["cards"]} if renames else set()
    assert redrawn | changed and redrawn | changed <= shown
    assert len(body) < 1.5 * len(page)  # (every card of the page is renamed: about the page)


@pytest.mark.browser
def test_a_first_screen_from_the_end_takes_the_index_s_names_when_it_is_done(unindexed, watched_page):
    """Drawn before the index, the end of the file cannot know the calls before it: the region
    names the ids it reads first as they are. Once the index is done the page shows the index's
    names — each card with its own result, nothing left resolving."""
    app = unindexed
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/long?at=end")
        expect(page.locator("#index-progress")).to_be_visible()
        assert page.locator('.tool[data-call="call_0~1501"]').count() == 0  # (not known yet)
        stream_open(page, "live")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        app.hold.release.set()
        last = page.locator('.tool[data-call="call_0~1501"]')
        expect(last.locator(".tool-input")).to_contain_text("the last step", timeout=60_000)
        expect(page.locator(".state.resolving")).to_have_count(0)
        before = page.locator('.tool[data-call="call_0~1500"]')
        expect(before.locator(".tool-result")).to_contain_text("output of step 1499")
        expect(page.locator("#index-progress")).to_be_hidden()
        # drawn again in place, not reloaded: the scroll and the cards opened stay
        assert page.evaluate("window.__kept === document.getElementById('timeline')")
        assert not page.problems


@pytest.mark.browser
def test_a_cold_permalink_to_a_call_of_an_id_used_again_lands_on_it_once_indexed(unindexed, watched_page):
    """A permalink opened before the index reads the lines around its event; once the index is
    done the page names that call as the index does, the link still landing on it."""
    app = unindexed
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/long/m/L1503")  # response 750's call
        expect(page.locator("#index-progress")).to_be_visible()
        expect(page.locator("#m-L1503")).to_contain_text("step 750")
        stream_open(page, "early-stream")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        app.hold.release.set()
        card = page.locator('#m-L1503 .tool[data-call="call_0~751"]')
        expect(card.locator(".tool-result")).to_contain_text("output of step 0750", timeout=60_000)
        expect(card.locator(".state")).to_have_text("completed")
        expect(page.locator(".state.resolving")).to_have_count(0)
        expect(page.locator("#m-L1503")).to_be_in_viewport()
        expect(page.locator("#m-L1503")).to_have_class(re.compile(r"\btarget\b"))  # (still the link's)
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert not page.problems


# --- one response, two calls of one id ---------------------------------------------------------
# llama.cpp and some OpenAI-compatible streams give every call of a response the id `call_0`:
# one assistant message whose two tool_calls are both `call_0`, then two results both naming it.
# The second call is its own call (`call_0~2`), the results answer them in the order they were made.

PAIR = [("list_files", {"path": "."}, "README.md\nsrc/\ntests/", False),
        ("read_file", {"path": "README.md"}, "# Demo\nA small demo project.", False)]
LATER = ("run", {"cmd": "pytest -q"}, "1 failed, 2 passed in 0.12s", True)


def paired(steps=PAIR, cid="call_0") -> list:
    """One response calling each step with the same id, then each step's result naming it."""
    return [{"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for n, a, _, _ in steps]}] + [output(o, f, cid) for _, _, o, f in steps]


def pair_conversation() -> list:
    return conversation([])[:-1] + paired() + [call(LATER[0], LATER[1]), output(LATER[2], LATER[3]),
                                               {"role": "assistant", "content": "One test fails."}]


@pytest.fixture
def pair(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "pair.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in pair_conversation()))
    return path


def test_one_response_with_two_calls_of_one_id_shows_two_calls_each_with_its_result(pair, tmp_path):
    idx = SessionIndex(pair).build()
    calls = idx.calls.calls
    assert {cid: (c.name, c.status, c.call, c.result) for cid, c in calls.items()} == {
        "call_0": ("list_files", "completed", ("main", 2), ("main", 3)),
        "call_0~2": ("read_file", "completed", ("main", 2), ("main", 4)),
        "call_0~3": ("run", "error", ("main", 5), ("main", 6))}
    assert idx.summary.tool_calls == 3 and idx.summary.errors == 1
    app = create_app({"ROOTS": [str(pair.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    page = client.get("/s/pair").get_data(as_text=True)
    shows_own(cards(page), PAIR + [LATER])
    assert page.count('data-call="call_0"') == 1
    # the tool filter finds the response of the second call (both its calls), each with its output
    found = {c[0]: c[2] for c in cards(client.get("/s/pair?tool=read_file").get_data(as_text=True))}
    assert sorted(found) == ["call_0", "call_0~2"] and "small demo project" in found["call_0~2"]
    assert "small demo" not in found["call_0"]
    # a search hit in the second result leads to the second call's card, showing that result
    hits = [json.loads(x) for x in client.get("/s/pair/search?q=demo").get_data(as_text=True).splitlines()]
    (hit,) = [h["hit"] for h in hits if "hit" in h]
    assert hit["id"] == "L5"
    event = client.get(f"/s/pair/m/{hit['id']}?q=demo&part=event").get_data(as_text=True)
    landed = {cid: text for cid, _, text in cards(event)}
    assert "small demo project" in landed["call_0~2"] and "small demo" not in landed["call_0"]
    # and a new server reads the index from the cache with the same names
    app.extensions["viewer"].store.flush()
    again = create_app({"ROOTS": [str(pair.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    shows_own(cards(again.test_client().get("/s/pair").get_data(as_text=True)), PAIR + [LATER])


def test_exports_pair_each_of_one_response_s_calls_with_its_own_result(pair):
    idx = SessionIndex(pair).build()
    shows_own(cards("".join(Export(idx, "html").chunks())), PAIR + [LATER])
    md = "".join(Export(idx, "md").chunks())
    parts = md.split("**Tool: ")[1:]
    assert [p.split("**")[0].replace("\\_", "_") for p in parts] == ["list_files", "read_file", "run"]
    for part, (name, _, out, failed) in zip(parts, PAIR + [LATER]):
        assert out.splitlines()[-1] in part
        assert all(o.splitlines()[-1] not in part for _, _, o, _ in PAIR + [LATER] if o != out)
    data = json.loads("".join(Export(idx, "json").chunks()))
    assert {cid: (c["name"], c["call_event"], c["result_event"])
            for cid, c in data["tool_calls"].items()} == {
        "call_0": ("list_files", "L3", "L4"), "call_0~2": ("read_file", "L3", "L5"),
        "call_0~3": ("run", "L6", "L7")}
    ids = [[b.get("id") or b.get("tool_use_id") for b in e["blocks"] if b["kind"] in ("tool_use", "tool_result")]
           for e in data["events"]]
    assert [i for i in ids if i] == [["call_0", "call_0~2"], ["call_0"], ["call_0~2"], ["call_0~3"], ["call_0~3"]]


def test_an_anthropic_message_with_two_calls_and_results_of_one_id(tmp_path):
    """Both results in one message, as Anthropic's messages carry them: matched in order."""
    msgs = [{"role": "user", "content": "Look around."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_0", "name": n, "input": a}
                                              for n, a, _, _ in PAIR]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": o}
                                         for _, _, o, _ in PAIR]}]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(msgs))
    idx = SessionIndex(path).build()
    assert idx.summary.format == "anthropic-messages"
    shows_own(cards("".join(Export(idx, "html").chunks())), PAIR, ids=("toolu_0", "toolu_0~2"))


@pytest.fixture
def big_pairs(tmp_path):
    """A JSONL file whose every response makes two calls, both `call_0`."""
    folder = tmp_path / "sessions" / "pairs"
    folder.mkdir(parents=True)
    path = folder / "trajectory.jsonl"
    msgs = conversation([])[:-1]
    for i in range(BIG // 2):
        msgs += paired([("read", {"n": 2 * i}, f"output of step {2 * i:04d}", False),
                        ("read", {"n": 2 * i + 1}, f"output of step {2 * i + 1:04d}", False)])
    path.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    return path


def test_a_permalink_into_a_big_file_of_paired_calls_shows_each_call_s_own_result(big_pairs, tmp_path):
    app = create_app({"ROOTS": [str(big_pairs.parent.parent)], "CACHE_DIR": str(tmp_path / "c"),
                      "WATCH": False})
    client = app.test_client()
    idx = app.extensions["viewer"].store.index("pairs~trajectory")
    assert len(idx.threads["main"]) > 10 * 40
    # response 100 (steps 200 and 201) is on lines 303 (calls), 304 and 305 (results)
    assert idx.calls.calls["call_0~201"].call == ("main", 302) == idx.calls.calls["call_0~202"].call
    html = client.get("/s/pairs~trajectory/m/L305").get_data(as_text=True)
    found = {cid: text for cid, _, text in cards(html)}
    for j in range(196, 206):
        text = found[f"call_0~{j + 1}"]
        assert f"output of step {j:04d}" in text and f"output of step {j + 1:04d}" not in text
    grown = SessionIndex(big_pairs).build()
    with open(big_pairs, "a") as f:
        f.write("".join(json.dumps(m) + "\n" for m in paired(
            [("read", {"n": 900}, "out 900", False), ("read", {"n": 901}, "out 901", False)])))
    change = grown.refresh()
    assert not change.reset
    whole = SessionIndex(big_pairs).build()
    assert grown.threads["main"].renamed == whole.threads["main"].renamed
    assert {c: (v.call, v.result) for c, v in grown.calls.calls.items()} == {
        c: (v.call, v.result) for c, v in whole.calls.calls.items()}
    assert whole.calls.calls[f"call_0~{BIG + 2}"].result == ("main", len(whole.threads["main"]) - 1)


@pytest.mark.browser
def test_a_live_response_with_two_calls_of_one_id_completes_each_with_its_own_output(
        tmp_path, serve, watched_page):
    folder = tmp_path / "sessions" / "live"
    folder.mkdir(parents=True)
    path = folder / "session.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in conversation([])[:-1]))
    srv = serve(tmp_path / "sessions")
    page = watched_page
    page.goto(f"{srv.url}/s/live~session")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__noReload = true")
    msgs = paired()
    with open(path, "a") as f:
        f.write(json.dumps(msgs[0]) + "\n")
    first, second = page.locator('.tool[data-call="call_0"]'), page.locator('.tool[data-call="call_0~2"]')
    expect(second.locator(".tool-name")).to_have_text("read_file")
    expect(first.locator(".tool-name")).to_have_text("list_files")
    expect(second.locator(".state")).to_have_text("pending")
    with open(path, "a") as f:
        f.write(json.dumps(msgs[1]) + "\n")
    expect(first.locator(".state")).to_have_text("completed")
    expect(first.locator(".tool-result")).to_contain_text("tests/")
    expect(second.locator(".state")).to_have_text("pending")
    with open(path, "a") as f:
        f.write(json.dumps(msgs[2]) + "\n")
    expect(second.locator(".state")).to_have_text("completed")
    expect(second.locator(".tool-result")).to_contain_text("A small demo project.")
    expect(first.locator(".tool-result")).not_to_contain_text("small demo")
    assert page.locator(".tool[data-call]").count() == 2
    assert page.evaluate("window.__noReload") is True
    assert page.problems == []
