"""Pygments' RegexLexer, finding each token's rule with one regular expression match.

A RegexLexer tries the rules of its current state one after the other, a Python call to
`pattern.match` each, until one matches: Pygments' Python lexer makes some forty calls per token,
and that loop was a quarter of exporting a session with its file reads. Here each state's rules are
joined into one pattern `(r0)|(r1)|…`: Python's alternation is ordered (at one position, `a|b`
tries `a` first, then `b`), so it finds in C the rule the loop finds, the first one that matches
where the lexer stands. And a rule that cannot start with the character there is left out of the
pattern tried (each state has one joined pattern per ASCII character, one for the end of the text
and one for anything else, compiled when first needed; what a rule can start with is read from its
parsed pattern, and where in doubt it is kept). A process reads its first `WARM` characters per
lexer the plain way: compiling costs more than a few short blocks gain. The rest is RegexLexer's
own loop (actions, state changes, the error and newline fallbacks), unchanged; the tokens are the
same, which tests/test_lexing.py checks against Pygments on many lexers and texts.

A rule compiled with other flags than the state's first keeps them (`(?i-m:…)`). A state whose
rules cannot be joined (a backreference whose number would shift, a pattern Python will not
compile inside an alternation) is tried rule by rule, as Pygments does. Lexers that define their
own `get_tokens_unprocessed` are left alone.
"""

from __future__ import annotations

import re
import re._constants as sre
import re._parser as sre_parse
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


def _join(cls: type, state: str, rules: list) -> _Table | None:
    """For one state, the joined patterns by the character where the lexer stands (`_Table`), or
    None when the state's rules cannot be joined."""
    key = (cls, state)
    if key in _joined:
        return _joined[key]
    got = None
    patterns = [rexmatch.__self__ for rexmatch, _, _ in rules]
    base = patterns[0].flags if patterns else 0
    if len(rules) > 1 and not any(_BACKREF.search(p.pattern) or (p.flags ^ base) & ~_SCOPED
                                  for p in patterns):
        got = _Table(rules, patterns, base)
    with _lock:
        _joined[key] = got
    return got


class _Table(dict):
    """One state's joined patterns: {character: (`match` of the pattern joining the rules that can
    start with it, {group number: rule}), or (None, those rules) when Python will not compile it,
    or None when there are none}, "" standing for the end of the text and `_OTHER` for any
    character beyond ASCII. Each is compiled when the lexer first meets its character in this state
    (compiling them all at once took a second for Pygments' Python lexer)."""

    def __init__(self, rules: list, patterns: list, base: int):
        super().__init__()
        self.rules, self.patterns, self.base = rules, patterns, base
        self.parts = [_scoped(p, base) for p in patterns]
        self.starts = [_first(p) for p in patterns]
        self.made: dict[tuple, tuple | None] = {}

    def __missing__(self, c: str):
        picked = tuple(i for i, (chars, other, empty) in enumerate(self.starts)
                       if empty or (other if c == _OTHER else c in chars))
        got = self[c] = self.make(picked)
        return got

    def make(self, picked: tuple):
        """The joined pattern of the rules `picked` (see the class)."""
        if picked in self.made:
            return self.made[picked]
        got, groups, n = None, {}, 0
        if picked:
            for i in picked:
                n += 1  # the group wrapping rule i
                groups[n] = self.rules[i]
                n += self.patterns[i].groups
            try:
                joined = re.compile("|".join(f"({self.parts[i]})" for i in picked), self.base)
                got = (joined.match, groups) if joined.groups == n else None
            except (re.error, OverflowError, RecursionError):
                got = None
            if got is None:  # tried one by one
                got = (None, [self.rules[i] for i in picked])
        self.made[picked] = got
        return got


# --- which characters a pattern can start with ----------------------------------------------------

_ASCII = tuple(chr(i) for i in range(128))
_OTHER = "\x80"  # stands for every character beyond ASCII
_ANY = (frozenset(_ASCII), True, True)  # (ASCII first characters, others too, may match empty)
_CATEGORIES = {sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s",
               sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_WORD: r"\w",
               sre.CATEGORY_NOT_WORD: r"\W"}


def _first(p: re.Pattern) -> tuple:
    """What `p` can match first: (the ASCII characters, whether any other, whether nothing) — a
    superset: where in doubt, everything."""
    try:
        return _seq(sre_parse.parse(p.pattern, p.flags & ~re.U), bool(p.flags & re.I))
    except Exception:  # a construct this reading does not know
        return _ANY


def _seq(items, icase: bool) -> tuple:
    chars, other = set(), False
    for op, av in items:
        one = _one(op, av, icase)
        if one is not None:  # consumes one character
            return frozenset(chars | one[0]), other or one[1], False
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue  # zero width: what follows decides (lookarounds only narrow it)
        if op is sre.SUBPATTERN:
            _, add, drop, sub = av
            got = _seq(sub, (icase or bool(add & re.I)) and not drop & re.I)
        elif op is sre.ATOMIC_GROUP:
            got = _seq(av, icase)
        elif op is sre.BRANCH:
            alts = [_seq(b, icase) for b in av[1]]
            got = (frozenset().union(*(a[0] for a in alts)), any(a[1] for a in alts),
                   any(a[2] for a in alts))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            got = _seq(av[2], icase)
            got = (got[0], got[1], got[2] or av[0] == 0)
        else:
            return _ANY
        chars |= got[0]
        other = other or got[1]
        if not got[2]:
            return frozenset(chars), other, False
    return frozenset(chars), other, True


def _one(op, av, icase: bool) -> tuple | None:
    """(ASCII characters, any other) that an op consuming one character matches; None for an op
    that does not consume exactly one."""
    if op is sre.LITERAL:
        if av >= 128:
            return _ANY[:2] if icase else (frozenset(), True)  # 'ſ' matches 's' ignoring case
        c = chr(av)
        return (frozenset({c, c.lower(), c.upper()}), True) if icase else (frozenset({c}), False)
    if op in (sre.NOT_LITERAL, sre.ANY):
        return _ANY[:2]
    if op is not sre.IN:
        return None
    chars, other = set(), icase  # ignoring case, 'k' also matches the Kelvin sign
    for iop, iav in av:
        if iop is sre.LITERAL and iav < 128:
            chars.add(chr(iav))
        elif iop is sre.LITERAL and not icase:
            other = True
        elif iop is sre.RANGE and not (icase and iav[1] >= 128):
            chars.update(map(chr, range(iav[0], min(iav[1], 127) + 1)))
            other = other or iav[1] >= 128
        elif iop is sre.CATEGORY and iav in _CATEGORIES:
            rx = re.compile(_CATEGORIES[iav])
            chars.update(c for c in _ASCII if rx.match(c))
            other = True
        else:  # a negated set, a category of lines, beyond ASCII ignoring case
            return _ANY[:2]
    if icase:
        chars |= {c.swapcase() for c in chars}
    return frozenset(chars), other


def fill() -> None:
    """Compile, in every state a lexer has been in in this process, the joined patterns of every
    printable ASCII character, of the end of the text and of any other character: a process about
    to fork processes that highlight does it once for them all (each compiled those its texts
    met and a sample did not, a twentieth of an export's drawing)."""
    for table in list(_joined.values()):
        if table is not None:
            for c in _FILLED:
                table[c]


_FILLED = (*(chr(i) for i in range(32, 127)), "\t", "\n", "\r", "\x0b", "\x0c", "", _OTHER)

WARM = 50_000  # characters a lexer first reads the plain way in a process (see `tokens`)
_read: dict[type, int] = {}


def tokens(self, text: str, stack=("root",)) -> Iterator[tuple]:
    """RegexLexer.get_tokens_unprocessed, finding each token's rule with one match per state.

    The joined patterns take a while to compile (a quarter of a second for the Python lexer's
    usual ones): a process uses them for a lexer once it has read `WARM` characters with it the
    plain way, so a server's first page does not wait for them and an export soon has them."""
    cls = type(self)
    if _read.get(cls, 0) < WARM:
        _read[cls] = _read.get(cls, 0) + len(text)
        yield from RegexLexer.get_tokens_unprocessed(self, text, stack)
        return
    pos = 0
    tokendefs = self._tokens
    statestack = list(stack)
    state = statestack[-1]
    joined = _join(cls, state, tokendefs[state])
    statetokens = tokendefs[state]
    while 1:
        if joined is not None:
            c = text[pos:pos + 1]
            pick = joined[c if c < _OTHER else _OTHER]
            found = pick[0](text, pos) if pick is not None and pick[0] is not None else None
            if found is None:
                rule = None
                candidates = pick[1] if pick is not None and pick[0] is None else ()
            else:
                rexmatch, action, new_state = pick[1][found.lastindex]
                if type(action) is _TokenType:  # the wrapping group is the rule's whole match
                    yield pos, action, found.group(found.lastindex)
                    pos = found.end()
                else:
                    m = rexmatch(text, pos)  # the rule's own groups, for its callback
                    if action is not None:
                        yield from action(self, m)
                    pos = m.end()
                rule = True
        else:
            rule, candidates = None, statetokens
        if rule is None:
            for rexmatch, action, new_state in candidates:
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
