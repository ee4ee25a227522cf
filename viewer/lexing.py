"""Pygments' RegexLexer, with each state's rules tried in one regular expression.

A RegexLexer tries the rules of its current state one after the other, a Python call to
`pattern.match` each, until one matches: Pygments' Python lexer makes some forty calls per token,
and that loop was a quarter of exporting a session with its file reads. Python's regex alternation
is ordered (at one position, `a|b` tries `a` first, then `b`), so one pattern `(?:r0)|(?:r1)|…`
per state finds, in C, the same rule the loop finds: the first one that matches where the lexer
stands. The rest is RegexLexer's own loop (actions, state changes, the error and newline
fallbacks), unchanged; the tokens are the same, which tests/test_lexing.py checks against Pygments
on many lexers and texts.

A rule compiled with other flags than the state's first keeps them (`(?i-m:…)`). A state whose rules
cannot be joined (a backreference whose number would shift, a
pattern Python will not compile inside an alternation) is tried rule by rule, as Pygments does.
Lexers that define their own `get_tokens_unprocessed` are left alone.
"""

from __future__ import annotations

import re
import threading
from typing import Iterator

from pygments.lexer import RegexLexer
from pygments.token import Error, Whitespace, _TokenType

_BACKREF = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")  # group references that joining would renumber
_joined: dict[tuple[type, str], tuple | None] = {}
_lock = threading.Lock()


def speed_up(lexer):
    """`lexer` with its tokens found by `tokens` (the same lexer when that does not apply)."""
    if isinstance(lexer, RegexLexer) and \
            type(lexer).get_tokens_unprocessed is RegexLexer.get_tokens_unprocessed:
        lexer.get_tokens_unprocessed = tokens.__get__(lexer)
    return lexer


_SCOPED = re.I | re.M | re.S | re.X  # flags a part of a pattern can set or clear for itself
_LEADING_FLAGS = re.compile(r"\A(?:\(\?[imsxu]+\))+")
_LETTERS = ((re.I, "i"), (re.M, "m"), (re.S, "s"), (re.X, "x"))


def _scoped(p: re.Pattern, base: int) -> str:
    """`p`'s pattern as a part of one compiled with flags `base` (its own flags scoped to it)."""
    on = "".join(c for f, c in _LETTERS if p.flags & f and not base & f)
    off = "".join(c for f, c in _LETTERS if base & f and not p.flags & f)
    text = _LEADING_FLAGS.sub("", p.pattern)  # in p.flags already; only allowed at the start
    return f"(?{on}-{off}:{text})".replace("-:", ":") if on or off else text


def _join(cls: type, state: str, rules: list) -> tuple | None:
    """(`match` of the joined pattern, {group number: rule}) for one state, or None."""
    key = (cls, state)
    if key in _joined:
        return _joined[key]
    got = None
    patterns = [rexmatch.__self__ for rexmatch, _, _ in rules]
    base = patterns[0].flags if patterns else 0
    if len(rules) > 1 and not any(_BACKREF.search(p.pattern) or (p.flags ^ base) & ~_SCOPED
                                  for p in patterns):
        parts, groups, n = [], {}, 0
        for i, p in enumerate(patterns):
            n += 1  # the group wrapping rule i
            groups[n] = rules[i]
            parts.append(f"({_scoped(p, base)})")
            n += p.groups
        try:
            joined = re.compile("|".join(parts), base)
        except (re.error, OverflowError, RecursionError):
            joined = None
        if joined is not None and joined.groups == n:
            got = (joined.match, groups)
    with _lock:
        _joined[key] = got
    return got


def tokens(self, text: str, stack=("root",)) -> Iterator[tuple]:
    """RegexLexer.get_tokens_unprocessed, finding each token's rule with one match per state."""
    pos = 0
    cls = type(self)
    tokendefs = self._tokens
    statestack = list(stack)
    state = statestack[-1]
    joined = _join(cls, state, tokendefs[state])
    statetokens = tokendefs[state]
    while 1:
        if joined is not None:
            found = joined[0](text, pos)
            if found is None:
                rule = None
            else:
                rexmatch, action, new_state = joined[1][found.lastindex]
                if type(action) is _TokenType:
                    m = found  # the wrapping group is the rule's whole match
                    yield pos, action, found.group(found.lastindex)
                    pos = found.end()
                else:
                    m = rexmatch(text, pos)  # the rule's own groups, for its callback
                    if action is not None:
                        yield from action(self, m)
                    pos = m.end()
                rule = True
        else:
            rule = None
            for rexmatch, action, new_state in statetokens:
                m = rexmatch(text, pos)
                if m:
                    if action is not None:
                        if type(action) is _TokenType:
                            yield pos, action, m.group()
                        else:
                            yield from action(self, m)
                    pos = m.end()
                    rule = True
                    break
        if rule:
            if new_state is not None:
                if isinstance(new_state, tuple):
                    for s in new_state:
                        if s == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif s == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(s)
                elif isinstance(new_state, int):
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                else:
                    raise AssertionError(f"wrong state def: {new_state!r}")
                state = statestack[-1]
                statetokens = tokendefs[state]
                joined = _join(cls, state, statetokens)
            continue
        # no rule matched here
        try:
            if text[pos] == "\n":
                statestack = ["root"]
                state = "root"
                statetokens = tokendefs[state]
                joined = _join(cls, state, statetokens)
                yield pos, Whitespace, "\n"
                pos += 1
                continue
            yield pos, Error, text[pos]
            pos += 1
        except IndexError:
            break
