"""A card the index draws as a page drew it but for a few attributes and short texts: the changes.

A first screen read from the middle of a file names an event without an id of its own by where its
line begins (`@<offset>`: viewer/partial.py), numbers it in the region (`data-seq`), does not know
its line, and its links carry the offset (`?pos=`). Once the index is done the same card is named
`L<line>`, numbered in the session, its links plain — and nothing else about it changes (a log of
API calls read from its middle: also "API call" becomes "API call 53"). Sending such cards again
was about a page of HTML for a page of them (an OpenAI-style JSONL session's every card), and it
replaced the page's elements, their opened details and loaded raw views with them.

The message that completes a page instead lists them with what changes (web/early.py `_renames`):
the ids it renames, once, as text to replace in every attribute value of the cards it lists
(`substitute`: `@8373534` → `L21953`, and the form the id takes in an element id; `?pos=…` gone),
and for each card what those do not make right (`changes`): attribute values that take another
(its number, the line its raw view's title names) and texts that do. `changes` gives None unless
the two drawings have the same elements, attribute names and other texts in the same order, and a
value or text says the same change wherever it occurs in the card — the card is then drawn again
whole. live.js makes exactly the changes checked here, in every element and text of a listed card
but those of an event shown inside it and of a raw view loaded into it.
"""

from __future__ import annotations

from html.parser import HTMLParser


class _Tokens(HTMLParser):
    """A drawing's shape (tags, attribute names, text) apart from its attribute values."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.shape: list = []
        self.values: list[list[tuple[str, str]]] = []
        self.texts: list[str] = []
        self.cards = 0  # event cards (li.ev): one, or events shown inside the card

    def handle_starttag(self, tag, attrs):
        self.shape.append(("<", tag, tuple(n for n, _ in attrs)))
        self.values.append([(n, v or "") for n, v in attrs])  # (a bare attribute's value is "")
        if tag == "li" and "ev" in (dict(attrs).get("class") or "").split():
            self.cards += 1

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self.shape.append((">", tag))

    def handle_data(self, data):
        self.shape.append(("",))
        self.texts.append(data)

    def handle_comment(self, data):
        self.shape.append(("!", data))


def _tokens(html: str) -> _Tokens:
    t = _Tokens()
    t.feed(html)
    t.close()
    return t


def substitute(value: str, subs: list) -> str:
    """`value` with each [old, new] of `subs` replaced in turn (as live.js does)."""
    for old, new in subs:
        value = value.replace(old, new)
    return value


TEXT_MOST = 2000  # characters of a text changed in place (a browser splits a long text in nodes)


def changes(old: str, new: str, subs: list) -> tuple[list, list] | None:
    """What makes the card drawn as `old` the one drawn as `new`: (attribute changes, text
    changes), or None when the drawings differ otherwise (the card is drawn again whole). `subs`:
    [old, new] text replaced in every attribute value of the card (the message's renamed ids); what
    they do not make right is listed: [value, new value] for every attribute with that value, or —
    when a value changes in one attribute and not in another — [name, value, new value]. A text
    that changes (a log of API calls' "API call" → "API call 53") is [text, new text], for every
    text of the card that is that text."""
    a, b = _tokens(old), _tokens(new)
    if a.shape != b.shape or a.cards != 1:
        return None  # (events shown inside it: live.js leaves those alone)
    texts = {}
    for was, now in zip(a.texts, b.texts):
        if was != now and (len(was) > TEXT_MOST or texts.setdefault(was, now) != now):
            return None
    if any(texts.get(was, was) != now for was, now in zip(a.texts, b.texts)):
        return None  # a text changed here, kept there
    texts = [[was, now] for was, now in texts.items()]
    pairs = [(n, x, y) for xs, ys in zip(a.values, b.values) for (n, x), (_, y) in zip(xs, ys)]
    need = {}
    for name, was, now in pairs:
        if substitute(was, subs) != now and need.setdefault((name, was), now) != now:
            return None  # one value, two changes
    by_value = {}
    for (_, was), now in need.items():
        by_value.setdefault(was, now)
    if all(by_value.get(was, None) == now if was in by_value else substitute(was, subs) == now
           for _, was, now in pairs):
        return [[was, now] for was, now in by_value.items()], texts
    if all(need.get((name, was), None) == now if (name, was) in need
           else substitute(was, subs) == now for name, was, now in pairs):
        return [[name, was, now] for (name, was), now in need.items()], texts
    return None
