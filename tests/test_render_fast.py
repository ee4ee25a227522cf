"""The shortcuts viewer/render.py takes draw exactly what the full path draws: plain prose is the
`<p>` markdown-it and nh3 make of it, on hand-picked and on random texts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from viewer import render


def full(text: str) -> str:
    return render.nh3.clean(render._markdown().render(text), tags=render._ALLOWED_TAGS,
                            attributes=render._ALLOWED_ATTRS,
                            url_schemes={"http", "https", "mailto"},
                            link_rel="noopener noreferrer nofollow")


def test_plain_prose_is_drawn_as_markdown_draws_it():
    for text in ["Let me read the tests first.", "He said \"hi\" and it's (fine).\nSecond line!",
                 "Émile a dit: ça va? 漢字 ok", "Done", "a\nb\nc", "I) one", "x²³ ٣ (y)"]:
        assert "_" not in text and render._PLAIN_PROSE.fullmatch(text), text
        assert str(render._markdown_html(text)) == full(text)


def test_text_with_markdown_or_markup_takes_the_full_path():
    for text in ["1. first", "**bold**", "a <b>x</b>", "a & b", "x\n\ny", "x  \ny",
                 "a_b", "see [x](y)", "`code`", "# head", "a\n===", "line \nnext", " lead",
                 "tab\there", "back\\slash", "a\n- b", "", "\n", "x\r\ny"]:
        assert "_" in text or not render._PLAIN_PROSE.fullmatch(text), text
        assert str(render._markdown_html(text)) == full(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZé漢1²٣ \n,.;:?!'\"()_*<&#-=`\\\t>|~[]\u00a0\x00")),
               max_size=40))
def test_any_text_is_drawn_as_markdown_draws_it(text):
    assert str(render._markdown_html(text)) == full(text)
