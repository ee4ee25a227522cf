"""Search matches marked in a rendered event: `<mark class="hit">` around what the reader sees.

Marking happens on the event's finished HTML, not inside each renderer: Markdown, highlighted code,
ANSI output, diffs, pretty JSON and plain text all end up as text nodes in well-formed markup we
produced ourselves (escaped by Jinja, nh3 or Pygments; never raw transcript HTML). So one pass over
those text nodes marks a match wherever it is shown, even when it spans a Pygments token or a
Markdown emphasis (the text of inline elements is joined; block elements break it). Chrome around
the content (headers, state labels, "show all" links, summaries) is skipped, and so are nested
sub-agent events: they are marked on their own.

Every character of text that is marked is unescaped from the HTML and escaped again, so marking
cannot turn text into markup. For the event a reader jumped to, the `<details>` that hold a match
are opened.
"""

from __future__ import annotations

import html as htmllib
import re
import time

from markupsafe import escape

from .reader import CutStr
from .search import Matcher
from .text import block_pieces, pieces

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>|<!--.*?-->", re.S)
_CLASS = re.compile(r"""\sclass\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "area", "embed",
         "track", "param"}
_BLOCK = {"p", "div", "pre", "li", "ul", "ol", "table", "thead", "tbody", "tr", "td", "th", "br",
          "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "details", "summary", "dl", "dt",
          "dd", "section", "figure", "figcaption", "img", "aside", "nav", "header", "footer"}
_SKIP_TAGS = {"summary", "figcaption", "dt", "button", "time", "script", "style", "textarea",
              "svg", "select", "template"}
_SKIP_CLASSES = {"ev-head", "muted", "show-all", "call-state", "state", "dur", "warn", "result-ref",
                 "raw-slot", "thread-link", "nested", "no", "op", "prompt", "box", "hit-note",
                 "loading", "unparsed-head", "hidden-reason"}
OPEN_MARK = '<mark class="hit">'


MARK_BUDGET = 2.0  # seconds a page may spend marking (a slow regular expression stops marking)


def mark_html(html: str, matcher: Matcher, *, open_details: bool = False,
              deadline: float | None = None) -> tuple[str, int]:
    """The HTML with every match of `matcher` in its visible text marked; and how many."""
    tokens: list[str] = []
    texts: list[int] = []  # token indexes of text nodes, in order
    runs: list[list[int]] = [[]]  # text nodes that read as one string
    holders: dict[int, list[int]] = {}  # text token → indexes of the <details> tags around it
    stack: list[tuple[str, bool, int]] = []  # (tag, skipped, token index)
    skipping = 0
    pos = 0
    for m in _TAG.finditer(html):
        if m.start() > pos:
            i = len(tokens)
            tokens.append(html[pos : m.start()])
            if not skipping:
                runs[-1].append(i)
                texts.append(i)
                holders[i] = [t for name, _, t in stack if name == "details"]
        pos = m.end()
        tokens.append(m.group(0))
        name = (m.group(2) or "").lower()
        if not name:  # a comment
            continue
        if name in _BLOCK and runs[-1]:
            runs.append([])
        if m.group(1):  # a closing tag: pop up to its opening one
            for k in range(len(stack) - 1, -1, -1):
                if stack[k][0] == name:
                    left = sum(skipped for _, skipped, _ in stack[k:])
                    skipping -= left
                    del stack[k:]
                    if left and runs[-1]:
                        runs.append([])
                    break
            continue
        attrs = m.group(3) or ""
        if name in _VOID or attrs.rstrip().endswith("/"):
            continue
        classes = _CLASS.search(attrs)
        names = set((classes.group(1) or classes.group(2) or "").split()) if classes else set()
        skipped = name in _SKIP_TAGS or bool(names & _SKIP_CLASSES)
        if skipped and runs[-1]:
            runs.append([])
        skipping += skipped
        stack.append((name, skipped, len(tokens) - 1))
    if pos < len(html):
        tokens.append(html[pos:])
        if not skipping:
            runs[-1].append(len(tokens) - 1)
            holders[len(tokens) - 1] = [t for name, _, t in stack if name == "details"]
    count = 0
    opened: set[int] = set()
    for run in runs:
        if not run:
            continue
        if deadline is not None and time.monotonic() > deadline:
            break
        plain = [htmllib.unescape(tokens[i]) for i in run]
        joined = "".join(plain)
        spans = matcher.spans(joined, deadline)
        if not spans:
            continue
        count += len(spans)
        start = 0
        k = 0
        for i, text in zip(run, plain):
            end = start + len(text)
            parts = []
            cursor = start
            while k < len(spans) and spans[k][0] < end:
                s, e = spans[k]
                s, e2 = max(s, cursor), min(e, end)
                if s > cursor:
                    parts.append(str(escape(joined[cursor:s])))
                if e2 > s:
                    parts.append(OPEN_MARK + str(escape(joined[s:e2])) + "</mark>")
                cursor = max(cursor, e2)
                if e <= end:
                    k += 1
                else:
                    break
            if cursor == start and not parts:
                start = end
                continue
            parts.append(str(escape(joined[cursor:end])))
            tokens[i] = "".join(parts)
            opened.update(holders.get(i, ()))
            start = end
    if open_details:
        for t in opened:
            tag = tokens[t]
            if not re.search(r"\sopen[\s>=]", tag):
                tokens[t] = tag[:-1] + " open>"
    return "".join(tokens), count


class Marker:
    """The search a page was opened with: which events to mark, and which cut blocks hold a match
    in the part the page leaves out."""

    def __init__(self, matcher: Matcher, target: str | None = None, budget: float = MARK_BUDGET):
        self.matcher = matcher
        self.target = target
        self.deadline = time.monotonic() + budget
        self._wants: dict[str, bool] = {}
        self._cut: dict[str, set[str]] = {}  # event id → paths of cut strings matching past the preview

    def wants(self, ev) -> bool:
        """Whether an event holds a match in what the page has of it."""
        got = self._wants.get(ev.id)
        if got is None:
            got = self._wants[ev.id] = self._search(p.text for p in pieces(ev))
        return got

    def _search(self, texts, pos: int = 0) -> bool:
        for text in texts:
            if time.monotonic() > self.deadline:
                return False
            if self.matcher.spans(text, self.deadline, pos=pos, limit=1):
                return True
        return False

    def wants_view(self, v) -> bool:
        """Whether an event's card shows a match: its own text, or the result of one of its calls
        (drawn inside the call's card, though another event holds it)."""
        if v.target or self.wants(v.ev):
            return True
        for cv in v.calls.values():
            if cv.result is not None and (cv.result_event == self.target or self._search(
                    p.text for p in block_pieces(cv.result, cv.result_path))):
                return True
        return False

    def shows_target(self, v) -> bool:
        """Whether an event's card is where the target is read: the target itself, or the call
        whose card draws the target's result."""
        return v.target or (self.target is not None and any(
            cv.result_event == self.target for cv in v.calls.values()))

    def look_deeper(self, ev, expand) -> None:
        """Read back the strings cut out of a huge line, to know which hold a match past their
        preview (only for the event a reader jumped to: it may read megabytes)."""
        found = set()
        for p in pieces(ev):
            if isinstance(p.text, CutStr) and self._search([expand(p.text)], len(p.text)):
                found.add(p.path)
        self._cut[ev.id] = found
        if found:
            self._wants[ev.id] = True

    def in_hidden_part(self, event_id: str, path: str, text, shown: int) -> bool:
        """Whether a block cut at `shown` characters holds a match in what is not shown."""
        if not isinstance(text, str) or not (self.target == event_id or self._wants.get(event_id)):
            return False
        if path in self._cut.get(event_id, ()):
            return True
        return any(e > shown for _, e in self.matcher.spans(text, self.deadline,
                                                            pos=max(0, shown - 1000)))
