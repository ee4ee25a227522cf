"""The standing suite's hostile sessions, without a browser: every format's records with their
strings swapped for payloads (see hostile.py) render on every page with no failure, and no value
from a file ever reaches a `class` attribute (a role "assistant is-hidden" must not hide a message
while the toggle counts 0 hidden)."""

import logging
import re
from html.parser import HTMLParser

import pytest

from viewer.formats import detect
from viewer.web import create_app

from hostile import write_hostile_sessions
from test_fuzz import Errors, samples


class _Classes(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tokens: set[str] = set()
        self.handlers: list = []
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k == "class" and v:
                self.tokens.update(v.split())
            if k.startswith("on"):
                self.handlers.append((tag, k, v))
            if k in ("src", "href", "action", "data", "poster", "srcset"):
                self.urls.append(v or "")


def parse(html: str) -> _Classes:
    p = _Classes()
    p.feed(html)
    return p


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    keys = write_hostile_sessions(root, samples())
    return root, keys


def test_every_format_is_read_as_itself(hostile):
    root, keys = hostile
    for fmt, key in keys.items():
        path = root / key / "messages.jsonl" if (root / key).is_dir() else root / f"{key}.json"
        assert detect.detect_file(path).format == fmt


def test_hostile_values_never_reach_a_class_attribute_nor_a_page_failure(hostile, tmp_path):
    root, keys = hostile
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    c = app.test_client()
    errors = Errors()
    logging.getLogger().addHandler(errors)
    try:
        pages = {"/": c.get("/")}
        listed = [s["key"] for s in c.get("/sessions.json").get_json()["sessions"]]
        assert set(keys.values()) <= set(listed)
        for key in listed:
            data = c.get(f"/s/{key}.json").get_json()
            total = data["window"]["total"]
            pages[f"/s/{key}"] = c.get(f"/s/{key}?hidden=1")
            for start in range(0, total, 20):  # every event, in windows
                pages[f"/s/{key}/w/main?after={start}"] = c.get(f"/s/{key}/w/main?after={start}")
            for name in data["threads"]:
                pages[f"/s/{key}/t/{name}"] = c.get(f"/s/{key}/t/{name}")
            for ev in data["events"][:10]:
                pages[f"/s/{key}/raw/{ev['id']}"] = c.get(f"/s/{key}/raw/{ev['id']}")
                pages[f"/s/{key}/m/{ev['id']}"] = c.get(f"/s/{key}/m/{ev['id']}")
    finally:
        logging.getLogger().removeHandler(errors)
    for url, r in pages.items():
        assert r.status_code == 200, url
        found = parse(r.get_data(as_text=True))
        echoed = sorted(t for t in found.tokens if "zqx" in t or "pwned" in t)
        assert echoed == [], (url, echoed)
        assert found.handlers == [], (url, found.handlers[:3])
        off_host = [u for u in found.urls if re.match(r"\s*(javascript|vbscript|data:text)", u, re.I)]
        assert off_host == [], (url, off_host[:3])
    assert [e.getMessage() for e in errors.records] == []


# Every expression a template puts into a class attribute, and why it can only be one of a fixed set
# of names. A new one fails here until it maps the source value onto a fixed set the same way.
CLASS_EXPRESSIONS = {
    "role_class(role)": "templating.role_class: a fixed set of roles, else 'other'",
    "role_class(h.role)": "templating.role_class (a search hit's event role)",
    "mk.kind": "outline.marks: one of the kinds it weighs (_WEIGHT), all literals",
    "k": "_filters.html: the keys of filters.STATES, literals",
    "kind_class(ev.kind)": "templating.kind_class: a fixed set of kinds, else 'other'",
    "media_class(b.media)": "templating.media_class: image, audio, video, document, else 'other'",
    "css": "templating.state_badge: the class of a known state, else 'other'",
    "status": "tools.todo_items: one of _TODO_STATES, else 'pending'",
    "view": "tools.view_of: one of the tool views it returns, all literals",
    "cls": "literals passed by the templates themselves (output(cls=…), the list's columns)",
    "s.classes": "render.ansi_segments: a-f<n>, a-b<n>, a-bold… from numbers and flags",
    "v.lane": "timeline.lane_of: an integer",
    "'assumed' if assumed": "_macros.time: a literal",
    "' ' if assumed and split": "_macros.time: a literal",
    "'split' if split": "_macros.time: a literal",
    "lane_of(a, s.agents)": "timeline.lane_of: an integer",
}


def test_class_attributes_take_only_audited_expressions():
    from conftest import ROOT

    found = {}
    for path in sorted((ROOT / "templates").glob("*.html")):
        for attr in re.findall(r'class="([^"]*)"', path.read_text()):
            for expr in re.findall(r"\{\{\s*(.*?)\s*\}\}", attr):
                found.setdefault(expr, path.name)
    unknown = {e: f for e, f in found.items() if e not in CLASS_EXPRESSIONS}
    assert unknown == {}, "map these onto a fixed set of classes (see templating.role_class)"
