"""A first screen of a session whose records have no ids of their own, completed without sending its
cards again.

An OpenAI-style JSONL session (one message a line, no ids) read from its end before its index names
its events by where their lines begin (`@<offset>`); the index names them by their lines (`L<n>`).
The message that completes the page used to send every card again (about a page of HTML) for
what is, card by card, a few changed attributes: now it lists the ids renamed and what else changes
(web/cardpatch.py), and the page's own cards take them (live.js) — the same elements, their opened
details kept. A log of API calls read from its middle likewise: "API call" becomes "API call 72".
A permalink copied from the early screen still opens its event after the index is done.

The background build is held by a listener until the test releases it: nothing sleeps."""

import json
import os
import re

import pytest
from playwright.sync_api import expect

from conftest import LiveServer, held_app, held_page, stream_open
from viewer.web import cardpatch

MB = 6 << 20  # past the size indexed in the background


def write_chat(path, size: int) -> None:
    """An OpenAI-style JSONL conversation of about `size` bytes: a question, a tool call, its
    output and an answer with its reasoning, again and again; its times long ago (a finished session)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        n = 0
        while f.tell() < size:
            n += 1
            f.write(json.dumps({"role": "user", "content": f"Question {n}: " + "tell me more " * 60}) + "\n")
            f.write(json.dumps({"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{n}", "type": "function",
                "function": {"name": "run", "arguments": json.dumps({"cmd": f"ls dir{n}"})}}]}) + "\n")
            f.write(json.dumps({"role": "tool", "tool_call_id": f"call_{n}",
                                "content": f"listing {n}\n" + "file.txt\n" * 40}) + "\n")
            f.write(json.dumps({"role": "assistant", "content": f"Answer {n}: **done**.",
                                "reasoning_content": f"The listing of dir{n} says enough."}) + "\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))


@pytest.fixture(scope="module")
def chat(tmp_path_factory):
    root = tmp_path_factory.mktemp("renames") / "sessions"
    write_chat(root / "chat.jsonl", MB)
    return root


@pytest.fixture
def app(chat, tmp_path):
    yield from held_app(chat, tmp_path)


def stream_until_complete(client, page: str) -> str:
    """The page's stream, read until the message that completes it (the header's facts)."""
    url = re.search(r'hx-sse:connect="([^"]+)"', page).group(1).replace("&amp;", "&")
    r = client.get(url, buffered=False)
    out = b""
    for chunk in r.response:
        out += chunk
        if b"session-facts" in chunk or b"event: reset" in out:
            break
    r.close()
    return out.decode()


def cards_of(html: str) -> list[str]:
    return re.findall(r'<li class="ev [^"]*" id="m-([^"]+)"', html)


def test_the_cards_of_a_file_without_ids_are_renamed_not_sent_again(app):
    c = app.test_client()
    page = held_page(c, "/s/chat?at=end")
    ids = cards_of(page)
    assert len(ids) >= 20 and all(i.startswith("@") for i in ids)
    timeline = page[page.index('id="timeline"'):]
    link = re.search(r'class="permalink" href="([^"]+)"', timeline).group(1).replace("&amp;", "&")
    assert "?pos=" in link
    app.hold.release.set()
    done = stream_until_complete(c, page)
    message = done[done.rindex("retry:"):] if "retry:" in done else done
    assert "event: reset" not in message
    assert cards_of(message) == []  # no card drawn again
    renames = json.loads(re.search(r"data-renames='([^']+)'", message).group(1))
    assert [cid for cid, *_ in renames["cards"]] == ["m-" + i for i in ids]
    # a tenth of the cards' HTML or less (they were all sent again: more than the page's timeline)
    assert len(message) < len(timeline) / 5
    # the index names them by their lines, and a permalink copied from the early screen opens its
    # event under that name
    assert all(new.startswith("L") for old, new in renames["subs"] if old.startswith("@"))
    r = c.get(link)
    assert r.status_code == 302
    final = r.headers["Location"]
    assert re.search(r"/s/chat/m/L\d+$", final)
    target = c.get(final).get_data(as_text=True)
    assert re.search(rf'<li class="ev [^"]* target[^"]*" id="m-{final.rsplit("/", 1)[1]}"', target)


ATTRS = """cards => cards.map(c => [c, ...c.querySelectorAll('*')].map(e => e.localName + ' ' +
    [...e.attributes].filter(a => !['data-htmx-powered', 'data-wire', 'open'].includes(a.name))
    .map(a => a.name + '=' + a.value).join(' ')).join('\\n') + '\\n' + c.textContent)"""


def fresh_cards(context, url: str, ids: list[str]) -> list[str]:
    """The cards of these ids as a new page drawn from the index has them."""
    other = context.new_page()
    other.goto(url)
    expect(other.locator("#index-progress")).to_have_count(0)
    got = other.evaluate(f"ids => ({ATTRS})(ids.map(i => document.getElementById(i)))", ids)
    other.close()
    return got


@pytest.mark.browser
@pytest.mark.parametrize("where", ["?at=end", "/m/@{offset}?pos={offset}"])
def test_an_early_page_of_a_file_without_ids_takes_the_index_s_names_in_place(app, watched_page,
                                                                               chat, where):
    """At the end of the session, and at a permalink into its middle copied from an early
    screen: once the index is done the page's cards are the index's — the same elements (a
    details the reader opened stays open), named, numbered and linked as a new page would have
    them."""
    with open(chat / "chat.jsonl", "rb") as f:
        f.seek(MB // 2)
        f.readline()
        offset = f.tell()
    url = "/s/chat" + where.format(offset=offset)
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + url)
        expect(page.locator("#index-progress")).to_be_visible()
        assert app.hold.held.wait(30)
        cards = page.locator("#timeline > li.ev")
        assert all(i.startswith("m-@") for i in cards.evaluate_all("els => els.map(e => e.id)"))
        if "pos=" in where:
            expect(page.locator("#timeline > li.ev.target")).to_have_id(f"m-@{offset}")
        details = page.locator("#timeline > li.ev details.thinking").first
        details.evaluate("d => d.open = true")
        page.evaluate("window.__cards = [...document.querySelectorAll('#timeline > li.ev')]")
        app.hold.release.set()
        expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
        expect(page.locator('#timeline > li.ev[id^="m-@"]')).to_have_count(0)
        assert page.evaluate("""window.__cards.length === document.querySelectorAll('#timeline > li.ev').length
            && window.__cards.every((c, i) => c === document.querySelectorAll('#timeline > li.ev')[i])""")
        assert details.evaluate("d => d.open")
        ids = cards.evaluate_all("els => els.map(e => e.id)")
        assert all(re.fullmatch(r"m-L\d+", i) for i in ids)
        if "pos=" in where:
            target = page.locator("#timeline > li.ev.target")
            expect(target).to_have_count(1)
            link = target.locator("a.permalink").get_attribute("href")
            assert re.fullmatch(r"/s/chat/m/L\d+", link) and link == "/s/chat/m/" + target.get_attribute("id")[2:]
        now = page.evaluate(f"ids => ({ATTRS})(ids.map(i => document.getElementById(i)))", ids)
        assert now == fresh_cards(page.context, srv.url + url, ids)
        assert page.problems == []


def test_an_api_log_read_from_its_middle_has_its_numbers_filled_in_not_its_cards_sent(tmp_path):
    """A log of API calls names its events alike before and after its index, but the early page
    could not number its calls: "API call" becomes "API call 72" in place."""
    from bench.live import ApiLog

    log = ApiLog(tmp_path / "sessions" / "trace" / "log.jsonl", 6)
    os.utime(log.path, (1_700_000_000, 1_700_000_000))
    gen = held_app(tmp_path / "sessions", tmp_path)
    app = next(gen)
    try:
        c = app.test_client()
        page = held_page(c, "/s/trace~log?at=end")
        assert "API call ·" in page and not re.search(r"API call \d", page)
        app.hold.release.set()
        message = stream_until_complete(c, page)
        assert cards_of(message) == []
        renames = json.loads(re.search(r"data-renames='([^']+)'", message).group(1))
        texts = [t for _, _, ts in renames["cards"] for t in ts]
        assert texts and all(re.fullmatch(r"API call \d+ · .*", new) for old, new in texts)
    finally:
        app.hold.release.set()


def test_a_card_that_differs_but_in_attributes_is_drawn_again():
    subs = [["@10", "L2"]]
    a = '<li class="ev" id="m-@10" data-seq="3"><a href="/m/@10">x</a><p>API call</p></li>'
    b = '<li class="ev" id="m-L2" data-seq="9"><a href="/m/L2">x</a><p>API call 2</p></li>'
    assert cardpatch.changes(a, b, subs) == ([["3", "9"]], [["API call", "API call 2"]])
    # another element, another text, a value that changes here and not there: drawn again
    assert cardpatch.changes(a, b.replace("<p>", "<div>").replace("</p>", "</div>"), subs) is None
    assert cardpatch.changes(a, b.replace(">x<", ">y<").replace("API call 2", "API call"), subs) \
        == ([["3", "9"]], [["x", "y"]])
    c = a.replace('<a href', '<a data-n="3" href')
    assert cardpatch.changes(c, b.replace('<a href', '<a data-n="3" href'), subs) == \
        ([["data-seq", "3", "9"]], [["API call", "API call 2"]])
    assert cardpatch.changes(c.replace('<p>', '<p title="3">'),
                             b.replace('<a href', '<a data-n="3" href').replace('<p>', '<p title="4">'),
                             subs) == ([["data-seq", "3", "9"], ["title", "3", "4"]], [["API call", "API call 2"]])
    # the same attribute with the same value, changed in one place and not in another
    assert cardpatch.changes(c.replace('<p>', '<p data-n="3">'),
                             b.replace('<a href', '<a data-n="3" href').replace('<p>', '<p data-n="4">'),
                             subs) is None
    # an event shown inside a card: left alone by the page's script, so not changed in place
    nested = '<li class="ev" id="m-@10"><ul><li class="ev" id="m-@11"></li></ul></li>'
    assert cardpatch.changes(nested, nested.replace("@10", "L2"), subs) is None


@pytest.fixture
def claude(tmp_path):
    """8 MB of Claude Code: every record has an id of its own, which a first screen read from
    the end names as the index does."""
    from conftest import write_claude_session

    root = tmp_path / "sessions"
    write_claude_session(root / "big.jsonl", 8 << 20)
    yield from held_app(root, tmp_path)


@pytest.mark.browser
def test_cards_whose_ids_the_index_keeps_take_its_numbers_and_links(claude, watched_page):
    """A first screen read from the end numbers its cards from the region's start and its links
    carry where their lines are (`?pos=`); its ids are the index's, so nothing was sent for its
    cards once the index was done: they kept the region's numbers (which the live tail loads its
    windows by) and links. Now they take the index's, in place."""
    app = claude
    with LiveServer(app) as srv:
        page = watched_page
        page.goto(srv.url + "/s/big?at=end")
        stream_open(page, "live")
        cards = page.locator("#timeline > li.ev")
        last, first = cards.last, cards.first
        ids = [last.get_attribute("id")[2:], first.get_attribute("id")[2:]]
        seqs = [int(card.get_attribute("data-seq")) for card in (last, first)]
        assert "?pos=" in last.locator("a.permalink").get_attribute("href")
        page.evaluate("window.__kept = document.getElementById('timeline')")
        app.hold.release.set()
        idx = app.extensions["viewer"].store.build("big").wait(60)
        expect(page.locator("#index-progress")).to_be_hidden(timeout=60_000)
        for card, event_id, seq in zip((last, first), ids, seqs):
            assert idx.locate(event_id)[1] > seq + 5000  # (the region's: counted from its start)
            expect(card).to_have_attribute("data-seq", str(idx.locate(event_id)[1]))
            expect(card.locator("a.permalink")).to_have_attribute("href", f"/s/big/m/{event_id}")
            expect(card.locator("button.copy-link")).to_have_attribute("data-href", f"/s/big/m/{event_id}")
        assert page.evaluate("window.__kept === document.getElementById('timeline')")  # no reload
        assert not page.problems
