"""viewer/lexing.py finds exactly the tokens Pygments' own RegexLexer loop finds: for the lexers a
transcript's code blocks and file reads pick, on real source files, on the hostile strings, and on
random text (unbalanced quotes, stray brackets, mixed scripts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import PythonLexer, get_lexer_by_name

from viewer import lexing, render

ROOT = Path(__file__).resolve().parent.parent
LEXERS = ["python", "javascript", "typescript", "bash", "diff", "rust", "go", "c", "cpp", "java",
          "html", "css", "markdown", "toml", "yaml", "sql", "ruby", "ini", "xml", "php"]
SOURCES = sorted([*ROOT.glob("viewer/*.py"), *ROOT.glob("static/*.js"), *ROOT.glob("static/*.css"),
                  *ROOT.glob("templates/*.html"), ROOT / "README.md", ROOT / "Makefile",
                  ROOT / "pyproject.toml"])[::3]  # a third of them: enough kinds of text, quick
TRICKY = ['f"{x!r:>{width}}" rb\'\\x00\' """unterminated', "<script>alert(1)</script>\n\t\x1b[31m",
          "if (a) { b = `${c}` } else /* open", "def f(:\n  return 'é漢字😀'\r\n", "", "\n\n", "\\"]


@pytest.fixture(autouse=True)
def warm(monkeypatch):
    """The joined patterns from the first character on (a process otherwise first reads
    `lexing.WARM` characters per lexer the plain way)."""
    monkeypatch.setattr(lexing, "WARM", 0)


def pairs(name: str):
    plain = get_lexer_by_name(name, stripnl=False)
    fast = lexing.speed_up(get_lexer_by_name(name, stripnl=False))
    return plain, fast


@pytest.mark.parametrize("name", LEXERS)
def test_the_tokens_are_pygments_own_on_source_files(name):
    plain, fast = pairs(name)
    for path in SOURCES:
        text = path.read_text(errors="replace")
        assert list(fast.get_tokens(text)) == list(plain.get_tokens(text)), (name, path)
    for text in TRICKY:
        assert list(fast.get_tokens(text)) == list(plain.get_tokens(text)), (name, text)


def test_the_lexers_the_export_uses_are_sped_up_and_states_are_joined():
    lexer = lexing.speed_up(PythonLexer(stripnl=False))
    assert lexer.get_tokens_unprocessed.__func__ is lexing.tokens
    list(lexer.get_tokens("x = f'{a}' # c\n"))
    table = lexing._join(PythonLexer, "root", PythonLexer._tokens["root"])
    assert table is not None
    # a letter is not tried against the rules that start with a quote, a digit or a space
    assert len(table["x"][1]) < len(PythonLexer._tokens["root"])
    # the highlighter's lexers go through it (a file read's lexer is picked by its name)
    assert render._lexer(None, "a.py").get_tokens_unprocessed.__func__ is lexing.tokens


def test_a_lexer_with_its_own_loop_is_left_alone():
    json = get_lexer_by_name("json")
    assert type(json).get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed
    assert "get_tokens_unprocessed" not in vars(lexing.speed_up(json))


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1 \t\n\"'`#/*\\{}()[]<>$@%:;=,.-+rfbuSEL\r漢éſ\u212a\u0130\u00a0")),
               max_size=200),
       st.sampled_from(["python", "javascript", "bash", "rust", "markdown", "css", "toml", "sql",
                                "php", "ini"]))
def test_the_tokens_are_pygments_own_on_random_text(text, name):
    plain, fast = pairs(name)
    assert list(fast.get_tokens(text)) == list(plain.get_tokens(text))


def test_a_process_reads_its_first_characters_the_plain_way(monkeypatch):
    """A server's first page does not wait for the joined patterns to compile."""
    monkeypatch.setattr(lexing, "WARM", 1_000)
    monkeypatch.setattr(lexing, "_read", {})
    monkeypatch.setattr(lexing, "_joined", {})
    lexer = lexing.speed_up(PythonLexer(stripnl=False))
    code = "def main(x):\n    return f'{x}'  # done\n"
    plain = list(PythonLexer(stripnl=False).get_tokens(code))
    assert list(lexer.get_tokens(code)) == plain
    assert lexing._joined == {}  # nothing compiled yet
    assert list(lexer.get_tokens(code * 40)) == list(PythonLexer(stripnl=False).get_tokens(code * 40))
    assert list(lexer.get_tokens(code)) == plain
    assert (PythonLexer, "root") in lexing._joined  # warm now: the joined patterns are used


def test_an_exports_drawing_processes_compile_no_pattern_their_texts_meet(monkeypatch):
    """The process that forks an export's drawing processes compiles, in the states its sample
    reached, the patterns of every character (each drawing process compiled those of the
    characters its texts met and the sample did not: a capital letter, `!`, `%`…), and the
    tokens stay Pygments' own."""
    from viewer import export

    monkeypatch.setattr(lexing, "_read", {})
    monkeypatch.setattr(lexing, "_joined", {})
    export._warm_lexers()
    compiled = []
    made = lexing._Table.make
    monkeypatch.setattr(lexing._Table, "make", lambda self, picked: compiled.append(picked)
                        or made(self, picked))
    code = "Q = ~x % 3 ^ y | z  # Why? Because!\nZ = 7 if Q else 9\n"
    lexer = render._lexer(None, "a.py")
    assert list(lexer.get_tokens(code)) == list(PythonLexer(stripnl=False).get_tokens(code))
    assert compiled == []
