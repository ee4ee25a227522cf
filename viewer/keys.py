"""URL keys of sessions and of their threads: readable, unambiguous, URL-safe and stable.

A key is what a link names a session (`/s/<key>`) or a sub-agent thread (`/s/<key>/t/<thread>`) by.
It is made from names on disk only, so it survives restarts; it must be one URL path segment that
no route reads differently (`/s/<key>.json` is the JSON twin, `.` and `..` are dot segments a browser
removes); and it must not depend on scan order or on which other sessions exist, or removing one
session could move another's key and break its permalinks.

Ordinary names keep their plain, readable form: the parts of the path under the root joined with
`~` (`legion-feature-tour`, `claude-project~3b1f…`). A part is ordinary when it is only ASCII
letters, digits, `-`, `_` and `.`, and starts and ends with a letter, a digit or `-`. Any other
name — spaces, `%`, `#`, `?`, non-ASCII, `.` / `..`, a name that ends like a route (`x.json`) — is
written readably (runs of other characters become `_`) and marked with `~~` and a hash of its exact
name. A plain key never holds `~~` (its parts are never empty), so a marked key never equals a plain
one, and two marked keys differ by their hashes: keys are unambiguous without looking at any other.
"""

from __future__ import annotations

import hashlib
import re

# /s/<key>.json is the session's JSON twin: a route of the form /s/<key>.<ext> adds its ext here
RESERVED_SUFFIXES = (".json",)
MARK = "~~"

_PLAIN = re.compile(r"[A-Za-z0-9-](?:[A-Za-z0-9._-]*[A-Za-z0-9-])?")
_OTHER = re.compile(r"[^A-Za-z0-9._-]+")


def plain(name: str) -> bool:
    """Whether a name can be a key part as it is."""
    return bool(_PLAIN.fullmatch(name)) and not name.endswith(RESERVED_SUFFIXES)


def readable(name: str) -> str:
    """A key part that looks like the name (lossy: only for the readable half of a marked key)."""
    return _OTHER.sub("_", name).strip("_.") or "_"


def marked(text: str, identity: str) -> str:
    """`text` made unambiguous by a hash of `identity` (the exact name it stands for)."""
    digest = hashlib.sha1(identity.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{text}{MARK}{digest}"


def session_key(parts: list[str], identity: str, *, plain_ok: bool = True) -> str:
    """The key of a session from the parts of its path under the root (the transcript's extension
    dropped). `identity` names the session exactly (its main file's path under the root);
    `plain_ok=False` marks even an ordinary name (a `.json` document beside a transcript of the
    same name gives way to it)."""
    parts = [p for p in parts if p] or ["session"]
    text = "~".join(readable(p) for p in parts)
    if plain_ok and all(plain(p) for p in parts):
        return text
    return marked(text, identity)


def root_prefixes(names: list[str], identities: list[str]) -> list[str]:
    """The key prefix of each served root (several roots: `<root name>~`). An ordinary name is
    kept by the first root that has it; a later root of the same name, or an odd name, is marked
    with a hash of the root's full path."""
    out, seen = [], set()
    for name, identity in zip(names, identities):
        text = name if plain(name) and name not in seen else marked(readable(name), identity)
        seen.add(name)
        out.append(text + "~")
    return out


def thread_key(name: str) -> str:
    """The key of a sub-agent thread from the id its file gives it (`agent-<id>.jsonl`)."""
    if name != "main" and plain(name):
        return name
    return marked(readable(name), name)
