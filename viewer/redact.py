"""Secrets out of everything a reader sees: every text, tool input, tool output and raw view.

Agent transcripts are full of credentials: environment dumps, `.env` reads, curl commands with
`Authorization:` headers, keys pasted into prompts. With `export --redact` or `serve --redact`, each
secret becomes `[redacted: <kind> #<n>]`; the same secret gets the same number everywhere in a
session, so a reader can still follow "the key set here is the one used there".

Where it applies: `Redactor.event(ev)` on canonical events right after the format adapter (the
timeline's event loading calls it when the index carries a redactor, so pages, windows, the live
stream, JSON twins, in-session search, first screens and exports all see the same redacted events),
`Redactor.raw()` on a source record for the raw view, `Redactor.stream()` on "show all" text read
back in pieces, `Redactor.text()` on any other string (titles; the full-text index takes an
unnumbered one as its `transform`, so what it stores and its snippets show are redacted).

What finds secrets:
* The detectors of `detect-secrets` (Yelp), used for their patterns: AWS, Azure storage, basic-auth
  URLs, GitHub, GitLab, JWT (with its validity check), OpenAI, private keys, Slack, Stripe,
  SendGrid, Twilio, Discord, Telegram, npm, PyPI, Mailchimp, Square; its keyword list names the
  assignments worth a look and its Shannon entropy tells a random value from a word.
* Our patterns for what agent transcripts carry and the library does not know: Anthropic and
  current OpenAI keys, GitHub fine-grained tokens, Google API keys and OAuth secrets, Hugging Face
  tokens, `Authorization:` / `X-Api-Key:` headers, `curl -u user:password`, whole private-key
  blocks (the library flags only their first line), `KEY=value` lines of environment dumps and
  secrets assigned to names like `api_key`, `password`, `client_secret`.
* Never flagged on its own: git SHAs, UUIDs, ids, hashes and other hex or base64 runs that are not
  assigned to a secret's name (the tests say so).

Why not the library's scanner itself: `detect_secrets.core.scan.scan_line` reads 0.15 MB/s on the
bench session (its keyword detector alone 0.6 MB/s), about eleven minutes for a 100 MB export.
Here every rule carries a *trigger*, a cheap RE2 pattern that matches wherever the rule can; all
triggers run at once as one RE2 set (google-re2, a linear-time automaton: ~240 MB/s on the bench
session's text, against 7 MB/s for the same alternation in Python's `re`). A string no trigger
matches — nearly all of them — is returned untouched; the others run only the rules whose trigger
fired. Base64 payloads (images, files) are not scanned: they are data, not text anyone reads.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import orjson

from . import reader
from . import text as textmod
from .model import Event

MARKER = re.compile(r"\[redacted: ([a-z0-9-]+)(?: #(\d+))?\]")
_PLACEHOLDER = re.compile(
    r"(?i)(?:[<{\[(].*[>}\])]|\$\{?\w+\}?|%\w+%|[x*•.#_-]{3,}|\[redacted.*|null|none|nil|true|false|"
    r"undefined|changeme|change[_-]me|your[_-].*|<.*|example.*|placeholder.*|xxx.*|\*+.*)")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][A-Za-z_$]*)*(?:\(\))?")
_HEX_OR_UUID = re.compile(r"[0-9a-fA-F]{7,64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                          r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


@dataclass(frozen=True, slots=True)
class Finding:
    start: int
    end: int
    kind: str
    secret: str


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    regex: re.Pattern
    trigger: str  # RE2 syntax: matches wherever `regex` can (a superset, cheap to run)
    group: int | str = 0  # the part of a match that is the secret
    check: Callable[[re.Match, str], bool] | None = None  # a last word (validity, entropy…)


# --- the rules -----------------------------------------------------------------------------------


def _entropy(value: str) -> float:
    """Shannon entropy over the base64 alphabet, as detect-secrets computes it."""
    return _plugins()["entropy"].calculate_shannon_entropy(value)


_PLUGINS: dict | None = None


def _plugins() -> dict:
    """The detect-secrets detectors, imported once (the package pulls in `requests`: ~150 ms)."""
    global _PLUGINS
    if _PLUGINS is None:
        from detect_secrets.plugins import (aws, azure_storage_key, basic_auth, discord,
                                            github_token, gitlab_token, jwt, keyword, mailchimp,
                                            npm, openai, private_key, pypi_token, sendgrid, slack,
                                            square_oauth, stripe, telegram_token, twilio)
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        _PLUGINS = {
            "aws": aws.AWSKeyDetector, "azure": azure_storage_key.AzureStorageKeyDetector,
            "basic": basic_auth.BasicAuthDetector, "discord": discord.DiscordBotTokenDetector,
            "github": github_token.GitHubTokenDetector, "gitlab": gitlab_token.GitLabTokenDetector,
            "jwt": jwt.JwtTokenDetector, "mailchimp": mailchimp.MailchimpDetector,
            "npm": npm.NpmDetector, "openai": openai.OpenAIDetector,
            "private": private_key.PrivateKeyDetector, "pypi": pypi_token.PypiTokenDetector,
            "sendgrid": sendgrid.SendGridDetector, "slack": slack.SlackDetector,
            "square": square_oauth.SquareOAuthDetector, "stripe": stripe.StripeDetector,
            "telegram": telegram_token.TelegramBotTokenDetector, "twilio": twilio.TwilioKeyDetector,
            "keywords": keyword.DENYLIST, "entropy": Base64HighEntropyString(),
        }
    return _PLUGINS


def _not_an_id(value: str) -> bool:
    return not _HEX_OR_UUID.fullmatch(value)


def _env_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (`OPENAI_API_KEY`, `DB_PASS`,
    `GITHUB_TOKEN`), not merely contains such letters (`XAUTHORITY`, `KEYTIMEOUT`)."""
    for part in name.upper().split("_"):
        if part in _ENV_PARTS or part.endswith(("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY")):
            return True
    return False


_ENV_PARTS = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "PASSPHRASE",
              "CREDENTIAL", "CREDENTIALS", "AUTH", "APIKEY", "PRIVATE", "COOKIE", "DSN"}


def _secret_value(value: str, quoted: bool = True) -> bool:
    """Whether a value assigned to a secret's name is a secret rather than a placeholder, a
    variable, a number or code (`api_key = settings.API_KEY`, `password: str`, `token=${TOKEN}`)."""
    v = value.strip().strip("\"'`")
    if len(v) < (4 if quoted else 6) or _PLACEHOLDER.fullmatch(v) or v.isdigit():
        return False
    if v[0] in "/~." or v.startswith(("http://", "https://", "file:")) and "@" not in v:
        return False  # a path or a plain URL (a URL with a password is basic-auth's business)
    if _IDENTIFIER.fullmatch(v) and not quoted:
        return False
    return _entropy(v) >= 2.5


def _env_value(value: str) -> bool:
    return _secret_value(value, quoted=value[:1] in "\"'")


def _assigned(value: str) -> bool:
    quoted = value[:1] in "\"'`"
    v = value.strip("\"'`")
    if not quoted and _IDENTIFIER.fullmatch(v):
        return False
    return len(v) >= 8 and _secret_value(v, quoted) and _entropy(v) >= 3.0


def _rules() -> list[Rule]:
    p = _plugins()
    lib = lambda name, i=0: p[name].denylist[i]  # noqa: E731
    keywords = "|".join(p["keywords"]) + "|token|credentials?|auth|access_?key|secret_?key|" \
                                         "passphrase|signing_?key|master_?key|encryption_?key"
    headers = [r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----", r"PuTTY-User-Key-File-\d"]
    rules = [
        # providers, most specific first (an overlap keeps the earlier rule)
        Rule("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}"), r"sk-ant-"),
        Rule("openai-key", re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"
                                      r"|sk-[A-Za-z0-9]{48}(?![A-Za-z0-9])"), r"sk-"),
        Rule("openai-key", lib("openai"), r"T3BlbkFJ"),
        Rule("private-key", re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,20000}?"
            r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
            r"|PuTTY-User-Key-File-\d[\s\S]{0,20000}?(?:Private-MAC: [0-9a-fA-F]+|\Z)"),
            "|".join(headers)),
        Rule("aws-access-key", lib("aws", 0), r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"),
        Rule("aws-secret-key", lib("aws", 1), r"(?i)aws", group=1),
        Rule("azure-storage-key", lib("azure"), r"AccountKey="),
        Rule("github-token", lib("github"), r"gh[pousr]_"),
        Rule("github-token", re.compile(r"github_pat_[A-Za-z0-9_]{60,}"), r"github_pat_"),
        *(Rule("gitlab-token", rx, r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941")
          for rx in p["gitlab"].denylist),
        Rule("slack-token", lib("slack", 0), r"(?i)xox[aboprs]-"),
        Rule("slack-webhook", lib("slack", 1), r"(?i)hooks\.slack\.com"),
        Rule("stripe-key", re.compile(r"(?:r|s)k_(?:live|test)_[0-9a-zA-Z]{24,}"), r"k_(?:live|test)_"),
        Rule("stripe-key", lib("stripe"), r"k_live_"),
        Rule("google-api-key", re.compile(r"AIza[0-9A-Za-z_-]{35}"), r"AIza"),
        Rule("google-oauth-secret", re.compile(r"GOCSPX-[A-Za-z0-9_-]{28}"), r"GOCSPX-"),
        Rule("google-oauth-token", re.compile(r"ya29\.[0-9A-Za-z_-]{20,}"), r"ya29\."),
        Rule("huggingface-token", re.compile(r"hf_[A-Za-z0-9]{34,}"), r"hf_"),
        Rule("sendgrid-key", lib("sendgrid"), r"SG\."),
        Rule("twilio-key", lib("twilio", 0), r"AC[a-z0-9]{32}"),
        Rule("twilio-key", lib("twilio", 1), r"SK[a-z0-9]{32}"),
        Rule("discord-token", lib("discord"),
             r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}"),
        Rule("telegram-token", lib("telegram"), r"\d{8,10}:[0-9A-Za-z_-]{35}",
             check=lambda m, s: _not_an_id(s.split(":", 1)[1].replace("-", ""))),
        Rule("npm-token", lib("npm"), r"_authToken=", group=1),
        Rule("npm-token", re.compile(r"npm_[A-Za-z0-9]{36}"), r"npm_"),
        Rule("pypi-token", lib("pypi", 0), r"pypi-AgE"),
        Rule("pypi-token", lib("pypi", 1), r"pypi-AgE"),
        Rule("mailchimp-key", lib("mailchimp"), r"[0-9a-z]{32}-us[0-9]"),
        Rule("square-secret", lib("square"), r"sq0csp-"),
        # the library's pattern stops short of the signature (a lazy tail): the whole token, then
        # the library's own check that its parts decode
        Rule("jwt", re.compile(r"eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_.+/=-]*"),
             r"eyJ[A-Za-z0-9_=-]+\.", check=lambda m, s: p["jwt"].is_formally_valid(s)),
        # what agent transcripts carry: headers, curl, URLs with passwords, env dumps, assignments
        Rule("authorization-header", re.compile(
            r"(?i)(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
            r"(?:(?:bearer|basic|token|bot|digest|negotiate|apikey|sso-key)\s+)?"
            r"(?P<secret>[A-Za-z0-9._~+/=:-]{8,})"), r"(?i)authorization", group="secret",
            check=lambda m, s: _secret_value(s)),
        Rule("api-key-header", re.compile(
            r"(?i)(?:x-api-key|api-key|x-auth-token|x-goog-api-key|x-access-token|"
            r"anthropic-api-key|openai-api-key|private-token)[\"']?\s*:\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})"), r"(?i)(?:api-key|auth-token|access-token|private-token)",
            group="secret", check=lambda m, s: _secret_value(s)),
        Rule("basic-auth-password", lib("basic"), r"://[^\s]+@", group=1,
             check=lambda m, s: not _PLACEHOLDER.fullmatch(s)),
        Rule("basic-auth-password", re.compile(
            r"(?:^|\s)(?:-u|--user)\s+[\"']?[^\s:\"']+:(?P<secret>[^\s\"']{3,})"),
             r"(?:-u|--user)\s", group="secret", check=lambda m, s: not _PLACEHOLDER.fullmatch(s)),
        Rule("env-secret", re.compile(
            r"(?m)^[ \t]*(?:export[ \t]+|set[ \t]+)?(?P<name>[A-Z][A-Z0-9_]*)=(?P<secret>\S.*?)[ \t\r]*$"),
             r"(?m)^[ \t]*(?:export[ \t]+|set[ \t]+)?[A-Z][A-Z0-9_]*"
             r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|PASSPHRASE|CREDENTIALS?|AUTH|PRIVATE|COOKIE|DSN)"
             r"[A-Z0-9_]*=", group="secret", check=lambda m, s: _env_name(m["name"]) and _env_value(s)),
        Rule("assigned-secret", re.compile(
            rf"(?i)(?:{keywords})[\"'\]]{{0,2}}[ \t]*(?::=|=>|==?|:)[ \t]*"
            r"(?P<secret>\"[^\"\s]{4,}\"|'[^'\s]{4,}'|`[^`\s]{4,}`|[^\s\"'`,;(){}\[\]<>]{8,})"),
             r"(?i)(?:key|pass(?:word|wd|phrase)?|pwd|secret|token|credentials?|auth)[\"'\]]{0,2}[ \t]*[:=]",
             group="secret", check=lambda m, s: _assigned(s)),
    ]
    return rules


# --- the redactor --------------------------------------------------------------------------------


class Detector:
    """The rules and their compiled trigger set. Built once per process and shared: compiling
    takes a few milliseconds, and every session's redactor uses the same rules."""

    def __init__(self) -> None:
        import re2

        self.rules = _rules()
        self._set = re2.Set.SearchSet()
        for rule in self.rules:
            self._set.Add(rule.trigger)
        self._set.Compile()

    def findings(self, text: str) -> list[Finding]:
        """The secrets in a text, in order, never overlapping."""
        if not text or not isinstance(text, str):
            return []
        fired = self._set.Match(text)
        if not fired:
            return []
        found: list[tuple[int, Finding]] = []
        for i in sorted(set(fired)):
            rule = self.rules[i]
            for m in rule.regex.finditer(text):
                start, end = m.span(rule.group)
                if start < 0 or end <= start:
                    continue
                secret = text[start:end]
                if MARKER.fullmatch(secret) or (rule.check and not rule.check(m, secret)):
                    continue
                if rule.group == "secret" and secret[:1] in "\"'`" and secret[-1:] == secret[:1]:
                    start, end, secret = start + 1, end - 1, secret[1:-1]
                found.append((i, Finding(start, end, rule.kind, secret)))
        if not found:
            return []
        # the earlier (more specific) rule wins an overlap, then the longer match
        found.sort(key=lambda x: (x[0], x[1].start - x[1].end))
        kept: list[Finding] = []
        for _, f in found:
            if all(f.end <= k.start or f.start >= k.end for k in kept):
                kept.append(f)
        return sorted(kept, key=lambda f: f.start)


_DETECTOR: Detector | None = None
_DETECTOR_LOCK = threading.Lock()


def detector() -> Detector:
    global _DETECTOR
    with _DETECTOR_LOCK:
        if _DETECTOR is None:
            _DETECTOR = Detector()
        return _DETECTOR


class Redactor:
    """Replaces secrets with numbered markers. One per session (or per export): it remembers which
    number each secret got. Safe to share between threads."""

    def __init__(self, numbered: bool = True) -> None:
        self.numbered = numbered  # False: `[redacted: kind]`, for text kept apart from a session
        self.detector = detector()
        self.findings = self.detector.findings
        self._numbers: dict[tuple[str, str], int] = {}
        self._next: Counter = Counter()
        self._lock = threading.Lock()

    def number(self, kind: str, secret: str) -> int:
        """The marker number of a secret: the same secret, the same number, for this redactor."""
        key = (kind, secret)
        with self._lock:
            n = self._numbers.get(key)
            if n is None:
                self._next[kind] += 1
                n = self._numbers[key] = self._next[kind]
            return n

    def marker(self, f: Finding) -> str:
        if not self.numbered:
            return f"[redacted: {f.kind}]"
        return f"[redacted: {f.kind} #{self.number(f.kind, f.secret)}]"

    # --- replacing -----------------------------------------------------------------------------

    def text(self, text: str) -> str:
        """A string with its secrets replaced (the same object when it holds none)."""
        found = self.findings(text)
        if not found:
            return text
        out, pos = [], 0
        for f in found:
            out.append(text[pos:f.start])
            out.append(self.marker(f))
            pos = f.end
        out.append(text[pos:])
        return "".join(out)

    def stream(self, pieces, keep: int = 1 << 16):
        """Redact text that comes in pieces (a huge string read back from the file): held back
        `keep` characters at a time so a secret is never cut between two pieces; cuts fall on line
        breaks, and never inside a private-key block that has begun."""
        buf = ""
        for piece in pieces:
            buf += piece
            if len(buf) < 2 * keep:
                continue
            cut = buf.rfind("\n", 0, len(buf) - keep) + 1 or len(buf) - keep
            begun = buf.rfind("-----BEGIN", max(0, cut - 30_000), cut)
            if begun >= 0 and "-----END" not in buf[begun:cut]:
                cut = begun
            if cut > 0:
                yield self.text(buf[:cut])
                buf = buf[cut:]
        if buf:
            yield self.text(buf)

    def value(self, value: Any, _seen: dict | None = None) -> Any:
        """A JSON-like value with every string redacted; containers are copied only where something
        changed (the originals may be shared with a cache)."""
        if isinstance(value, str):
            if _seen is not None:
                got = _seen.get(id(value))
                if got is not None:
                    return got[1]
            out = value if textmod.looks_like_base64(value) else self.text(value)
            if out is not value and isinstance(value, reader.CutStr):
                out = reader.CutStr(out, value.offset, value.raw_length)  # "show all" still works
            if _seen is not None:
                _seen[id(value)] = (value, out)  # keep `value` alive so its id stays unique
            return out
        if isinstance(value, dict):
            new = None
            for k, v in value.items():
                r = self.value(v, _seen)
                if r is not v:
                    if new is None:
                        new = dict(value)
                    new[k] = r
            return value if new is None else new
        if isinstance(value, (list, tuple)):
            items = [self.value(v, _seen) for v in value]
            if any(a is not b for a, b in zip(items, value)):
                return type(value)(items) if isinstance(value, list) else tuple(items)
            return value
        return value

    def event(self, ev: Event) -> Event:
        """Redact an event in place: its blocks, names and kept source fields. Strings shared
        between blocks and `meta` (adapters keep the record there) are scanned once."""
        seen: dict = {}
        ev.blocks = [self._block(b, seen) for b in ev.blocks]
        if ev.meta:
            ev.meta = self.value(ev.meta, seen)
        for name in ("author", "recipient"):
            v = getattr(ev, name)
            if isinstance(v, str):
                setattr(ev, name, self.value(v, seen))
        return ev

    def _block(self, b, seen: dict):
        changes = {}
        for f in dataclasses.fields(b):
            if f.name in ("data", "signature", "id", "tool_use_id", "media", "media_type", "line",
                          "markdown", "redacted", "is_error", "alt"):
                continue  # payloads, ids and flags: nothing a reader reads as text
            v = getattr(b, f.name)
            if f.name == "content" and isinstance(v, list):
                r = [self._block(c, seen) if dataclasses.is_dataclass(c) else self.value(c, seen)
                     for c in v]
                if any(x is not y for x, y in zip(r, v)):
                    changes[f.name] = r
                continue
            r = self.value(v, seen)
            if r is not v:
                changes[f.name] = r
        return dataclasses.replace(b, **changes) if changes else b

    def raw(self, data: bytes) -> bytes:
        """A source record with its secrets replaced: JSON is decoded, redacted string by string and
        written back (escapes such as `\\n` inside a key then read as they should); anything else
        (a bad line, the head of a huge one) is redacted as text."""
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            text = data.decode("utf-8", "replace")
            return self.text(text).encode()
        out = self.value(value)
        return data if out is value else orjson.dumps(out, option=orjson.OPT_NON_STR_KEYS)


# --- reports -------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What an export redacted: markers counted as they are written (kind → secrets, places)."""

    places: Counter = dataclasses.field(default_factory=Counter)
    secrets: dict = dataclasses.field(default_factory=dict)

    def add_text(self, text: str) -> None:
        for m in MARKER.finditer(text):
            self.places[m.group(1)] += 1
            self.secrets.setdefault(m.group(1), set()).add(m.group(2))

    def add_event(self, ev: Event) -> None:
        for piece in textmod.pieces(ev):
            if "[redacted: " in piece.text:
                self.add_text(piece.text)

    def rows(self) -> list[tuple[str, int, int]]:
        """(kind, distinct secrets, places), most frequent first."""
        return sorted(((k, len(self.secrets[k]), n) for k, n in self.places.items()),
                      key=lambda r: (-r[2], r[0]))

    @property
    def total(self) -> int:
        return sum(len(s) for s in self.secrets.values())


def hint(secret: str) -> str:
    """Enough to recognise a finding, never enough to use it: the first characters of a long
    secret (key prefixes say what it is) and its length."""
    n = len(secret)
    return f"{secret[:4]}… ({n} chars)" if n >= 16 else f"({n} chars)"


def report(idx, window: int = 200) -> list[dict]:
    """What redaction would replace in a session, place by place, in file order: for `check
    --redact-report`. Visible text first; secrets found only in a record's other fields (what the
    raw view shows) are listed as `raw`."""
    from .timeline import load_events, raw_record

    red = Redactor()
    saved, idx.redactor = idx.redactor, None
    out: list[dict] = []
    try:
        for name, th in idx.threads.items():
            for a in range(0, len(th), window):
                for ev in load_events(idx, name, a, min(a + window, len(th)), expand=64 << 20):
                    seen = set()
                    for piece in textmod.pieces(ev):
                        for f in red.findings(piece.text):
                            seen.add((f.kind, f.secret))
                            out.append(_entry(red, ev, name, f"{piece.field} {piece.path}", f))
                    got = raw_record(idx, ev.id)
                    if got is None:
                        continue
                    for s in _strings(_loads(got[0])):
                        for f in red.findings(s):
                            if (f.kind, f.secret) not in seen:
                                seen.add((f.kind, f.secret))
                                out.append(_entry(red, ev, name, "raw", f))
    finally:
        idx.redactor = saved
    return out


def _entry(red: Redactor, ev: Event, thread: str, field: str, f: Finding) -> dict:
    return {"thread": None if thread == "main" else thread, "line": ev.line, "event": ev.id,
            "field": field, "kind": f.kind, "number": red.number(f.kind, f.secret),
            "hint": hint(f.secret)}


def _loads(data: bytes):
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return data.decode("utf-8", "replace")


def _strings(value):
    if isinstance(value, str):
        if not textmod.looks_like_base64(value):
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
