"""Reading a session: what a reader sees of each kind of content, checked on the rendered pages
and on the corpus's real transcripts (issue 10, "Reading")."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from viewer import render

from conftest import CORPUS


class _Nesting(HTMLParser):
    """Records, for every element, the tags it sits inside."""

    VOID = {"br", "hr", "img", "input", "meta", "link"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.seen: list[tuple[str, tuple[str, ...]]] = []

    def handle_starttag(self, tag, attrs):
        self.seen.append((tag, tuple(self.stack)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()


def nesting(html: str) -> list[tuple[str, tuple[str, ...]]]:
    p = _Nesting()
    p.feed(html)
    p.close()
    assert p.stack == [], "every element is closed"
    return p.seen


# --- 3. fenced code in Markdown: one box -----------------------------------------------------------


def test_fenced_code_is_one_box_with_valid_nesting_and_no_empty_last_line():
    for source in ("Run:\n\n```python\nx = 1\ny = 2\n```\n", "```\nplain text\n```\n",
                   "```nosuchlanguage\na < b\n```"):
        html = str(render.markdown(source))
        tags = nesting(html)
        assert [t for t, _ in tags].count("pre") == 1, html
        for tag, inside in tags:
            assert tag != "div" or "pre" not in inside, f"a block inside <pre>: {html}"
            assert tag != "pre" or "pre" not in inside and "code" not in inside, html
        body = re.search(r"<pre[^>]*><code[^>]*>(.*)</code></pre>", html, re.S).group(1)
        assert not body.endswith("\n"), "the block ends with its last line, not an empty one"
    assert "a &lt; b" in str(render.markdown("```nosuchlanguage\na < b\n```"))


def test_highlighted_file_content_is_one_box_too():
    html = str(render.highlight("def f():\n    return 1\n", filename="x.py"))
    tags = [t for t, _ in nesting(html)]
    assert tags.count("pre") == 1 and "div" not in tags
    assert html.startswith('<pre class="hl"') and not html.endswith("\n</code></pre>")
