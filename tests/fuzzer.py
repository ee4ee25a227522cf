"""A seeded, deterministic mutation fuzzer for "nothing is lost, nothing crashes".

Seeds are the sessions of the shared corpus and of test_data (every format, Claude Code sub-agent
folders, Codex sub-agents' rollouts, OpenHands event folders and the files a format reads beside a
session included), and the
sessions of an OpenCode database built from test_data's file storage and of a Goose sessions.db
built from its JSONL sessions (each folder's make_db.py). A case is one seed session
copied with its companion files (a window of each file's records, a run of a folder's files) and
mutated: values swapped for other types at any depth, keys dropped, lines duplicated, swapped or
dropped (a result before its call, a result with no call), ids made to collide, lines cut at a
byte, invalid UTF-8, lone surrogates, BOM, CRLF, NUL, deep nesting, ANSI and HTML, huge strings; a
database's rows alike (a row's JSON mutated as a file is, rows dropped, moved to another message or
session, columns given other types, a page of the file overwritten). Each case is driven through what a user touches, in-process: detection, the
index (as detected and as the seed's format), the line invariant, the live path (a file written
in two parts, the second after the page was drawn, read by the event stream and a refresh), the
first-screen partial reads, every page of the web layer (session page, windows, threads,
permalinks, raw, search, outline, usage, exports with and without redaction, the full-text
search), usage figures, the exports' writer and `check`.

A finding is an exception, a 5xx, a hang (SIGALRM), a message logged at ERROR (the adapters' and
the web layer's safety nets log there: they keep the page alive but are bugs to fix at the root),
or a line of the file that is neither an event, hidden bookkeeping nor an unparsed-line card.

With --newer, a case is also what a newer writer writes: fields added, records and content blocks
of types not known here (each carrying MARK in its text), every shape of timestamp (epoch s / ms /
µs / ns, ISO with and without a zone, Go's zero time, garbage), JSON kept as text mutated inside,
another format's lines mixed in, files emptied; and three more findings are looked for: a file's
hostile markup live on an HTML page (an event handler, a script), an unknown record or block not in
the Markdown export (hidden or dropped: its MARK missing; each file of a case has its own mark, so
that a sub-agent's file is checked on its own, and a database session's rows are looked into as
its module reads them), and a line file whose lines are mostly its seed's own detected as another
format.

The bounded run is tests/test_fuzz.py; the long run is this script:
    .venv/bin/python tests/fuzzer.py --cases 40 --seed 1 [--minutes 30] [--only claude-code]
    .venv/bin/python tests/fuzzer.py --newer --cases 6 --only legion,marsys,wolo,agentscope
    .venv/bin/python tests/fuzzer.py --newer --cases 6 --only claude-code,codex,goose,agentscope-studio
"""

from __future__ import annotations

import copy
import io
import json
import logging
import os
import random
import re
import shutil
import signal
import sqlite3
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
WINDOW = 24  # records of a file a case keeps
MAX_FILES = 6  # files of a session folder a case keeps (its main file and a run of the others)
FOLDER_FILES = 200  # files of a session folder a seed knows, a case's run taken among them
OPENCODE_FILES = 20  # an OpenCode session's: its session file, its first messages and their parts
CASE_SECONDS = 60  # a case that takes longer is a hang

LONG = "long " * 20_000
WEIRD = [None, True, False, 0, -1, 10**30, -(10**40), 1.5e308, -0.0, "", "x", LONG, [], {},
         [None, 1, "a", {}], {"a": [None], "": {}}, "<script>alert(1)</script><b>x",
         "\x1b[31mred\x1b[0m\x1b]8;;http://e/\x07l\x1b]8;;\x07", "\ud800", "a\x00b", "\ufeffbom",
         "2025-13-45T99:99:99Z", "NaN", "tool_use", "tool_result", "user", "assistant", "text",
         "L1", "main", "../../etc/passwd", "toolu_dup", "\u202eevil"]
# texts the readers look into: a command's exit line, diffs, JSON kept as text, context tags, media
TELLING = ["\n<exited with exit code " + "9" * 5000 + ">", "<exited with exit code -1>",
           "<exited with exit code 2>", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,99999999999999999999 @@\n-a\n+b\f+c\n",
           "@@ -0,0 +0,0 @@\n", "--- /dev/null\n+++ b/new\n@@ -0,0 +1 @@\n+x\n",
           "diff --git a/\x1b[1m b/<script>\nrename from a\nrename to b\nBinary files a/x and b/y differ\n",
           "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch", "```diff\n-a\n+b\n```",
           "[" * 5000, '{"a":' * 300 + "1" + "}" * 300, '{"role": "user", "content": [{"type": "tool_use"}]}',
           '[{"type": "function", "function": {"name": 1, "arguments": "{"}}]', "null", "{}",
           "<system-reminder>x", "</system-reminder>", "<command-name>/x</command-name><command-args>",
           "<local-command-stdout>\x1b[31m", "data:image/png;base64,AAAA", "data:;base64,", "\x0c",
           "Traceback (most recent call last):\n", "1e999", "-0", "0x10", "9" * 5000]
ID_KEYS = ("id", "uuid", "parentUuid", "tool_use_id", "tool_call_id", "call_id", "message_id",
           "toolUseID", "agentId", "sourceToolUseID", "leafUuid", "promptId")


@dataclass
class Seed:
    fmt: str
    mode: str
    main: Path
    base: Path  # the folder the session's files are copied from (relative paths kept)
    files: list[Path] = field(default_factory=list)
    window: bool = False  # a case keeps the main file and a run of MAX_FILES - 1 of the others

    @property
    def row(self) -> bool:
        """A session that is rows of a database (OpenCode's opencode.db, AgentScope Studio's
        database.sqlite): files = [the database]."""
        from viewer import files

        return files.row_store(self.main) is not None

    @property
    def name(self) -> str:
        if self.row:  # (every session of a database has the same parent: the database)
            return f"fixture/{self.main.parent.name}/{self.main.name}"
        # (resolved: the store lists real paths, and ../shared may be a link to the corpus; the
        # name seeds each case's mutations, so it must not depend on how the checkout was made)
        for base in (CORPUS.parent.resolve(), ROOT):
            if self.main.is_relative_to(base):
                return str(self.main.relative_to(base))
        return "fixture/" + self.main.parent.name


# records the tests write inline, for shapes no file holds (module, constant, as a document too)
FIXTURES = [("test_format_openai_chat", "RESPONSES", True), ("test_format_claude_code", "LINES_2_1_331", False),
            ("test_format_claude_code", "NEWER_LINES", False), ("test_format_agentpress", "CURRENT_WRITER", False),
            ("test_format_anthropic_messages", "SERVER_TOOLS", True),
            ("test_format_claude_code", "CURRENT_TYPES", False),
            ("test_format_wrapped", "MIXED_PROXY_LOG", False)]


OPENCODE = ROOT / "test_data" / "formats" / "opencode"
GOOSE = ROOT / "test_data" / "formats" / "goose"


def row_seed_names() -> list[str]:
    """The names of the OpenCode and Goose databases' seeds (fixture_files builds them)."""
    goose = _make_db(GOOSE, "sessions")
    return sorted(f"fixture/opencode.db/{p.stem}"
                  for p in (OPENCODE / "data" / "storage" / "session").glob("*/*.json")) + sorted(
        f"fixture/sessions.db/{sid}" for sid in [p.stem for p in goose.LEGACY] + [goose.NEW_ID, goose.SUB_ID])


def _make_db(source: Path, name: str):
    """A test_data folder's make_db.py, loaded from its own file (OpenCode's and Goose's have the
    same name: an import would give the first one's module for both)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"make_db_{name}", source / "make_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixture_files(folder: Path) -> None:
    """The tests' inline records (FIXTURES) written under `folder`, one session each, and an
    OpenCode database built from test_data's file storage and a Goose one from its JSONL sessions
    (each folder's make_db.py), whose sessions are rows."""
    import importlib

    sys.path.insert(0, str(ROOT / "tests"))
    for source, db in ((OPENCODE, folder / "opencode-db" / "opencode.db"),
                       (GOOSE, folder / "goose-db" / "sessions.db")):
        if not db.exists():
            db.parent.mkdir(parents=True, exist_ok=True)
            _make_db(source, db.stem).build(db)
            for suffix in ("-wal", "-shm"):  # (checkpointed on close: the file alone holds it)
                Path(f"{db}{suffix}").unlink(missing_ok=True)
    for module, name, doc in FIXTURES:
        records = getattr(importlib.import_module(module), name)
        (folder / f"{module}-{name}").mkdir(parents=True, exist_ok=True)
        (folder / f"{module}-{name}" / "messages.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records))
        if doc:
            (folder / f"{module}-{name}-doc").mkdir(parents=True, exist_ok=True)
            (folder / f"{module}-{name}-doc" / "conversation.json").write_text(json.dumps(records))


def seeds(fixtures: Path | None = None) -> list[Seed]:
    """Every session of the corpus and of test_data (and of the tests' inline records, written
    under `fixtures`), with the files that belong to it."""
    from viewer import formats
    from viewer.formats import detect, goose_db, opencode, opencode_db, studio_db
    from viewer.store import Store

    out = []
    bases = [CORPUS, ROOT / "test_data"]
    if fixtures is not None:
        fixture_files(fixtures)
        bases.append(fixtures)
    for base in bases:
        for ref in sorted(Store([base]).sessions(), key=lambda r: r.path):
            main = Path(ref.path)
            found = detect.detect_file(main)
            stored = opencode.session_files(main) if found.format == "opencode" else []
            window = False
            if any(m.split(str(main)) is not None for m in (opencode_db, studio_db, goose_db)):
                folder, files = main.parent.parent, [main.parent]  # the database file
            elif stored:
                # an OpenCode session of the file storage: its session file, messages and parts,
                # under the folder holding storage/ (their places tell them apart)
                folder = next(p for p in main.parents if p.name in ("storage", "session")).parent
                files = [main] + stored[:OPENCODE_FILES - 1]
            elif main.name in ("messages.jsonl", "session.json", "base_state.json", "metadata.json"):
                # the session's folder: sub-agents, messages/, sidecars, OpenHands' events/
                folder = main.parent
                files = [main] + sorted(
                    (p for p in folder.rglob("*")
                     if p.is_file() and p != main and p.suffix in (".json", ".jsonl")),
                    key=_natural)[:FOLDER_FILES]
                window = True
            else:
                folder = main.parent
                companions = main.with_suffix("")  # a Claude Code <session>/subagents/ folder
                files = [main] + (sorted((p for p in companions.rglob("*") if p.is_file()),
                                         key=_natural)[:FOLDER_FILES] if companions.is_dir() else [])
                window = True
            adapter = formats.BY_NAME.get(found.format)
            for _, comp, _ in (adapter.companions(main) if hasattr(adapter, "companions") else []):
                # a sub-agent's own file beside its parent's (Codex's rollouts); those elsewhere
                # (Wolo's, OpenCode's sessions) are not copied
                comp = Path(comp)
                if comp.is_file() and comp not in files and comp.is_relative_to(folder):
                    files.append(comp)
            for side in (adapter.sidecars(main) if hasattr(adapter, "sidecars") else []):
                # the files read beside a session (Factory Droid's settings, legion's state.json)
                if side.is_file() and side not in files and side.is_relative_to(folder):
                    files.insert(1, side)
            out.append(Seed(found.format, found.mode, main, folder, files, window))
    if not FOREIGN:  # a few lines of every line-file seed, for files that mix formats
        for seed in out:
            if seed.main.is_file() and seed.main.suffix in (".jsonl", ".ndjson"):
                with open(seed.main, "rb") as f:
                    head = [ln.rstrip(b"\r\n") for ln in f.read(1 << 16).split(b"\n")[:-1]]
                FOREIGN.extend(ln for ln in head[:3] if 0 < len(ln) < 20_000)
    return out


def chosen(seed: Seed, only: str) -> bool:
    """Whether a seed is one of `only`'s (comma-separated parts of its name or its format)."""
    return any(part in seed.name or part == seed.fmt for part in only.split(",")) if only else True


def _natural(path: Path) -> list:
    """A path's sort key with its numbers as numbers: OpenHands' events/2.json before 10.json."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", str(path)) if t]


# --- mutations -----------------------------------------------------------------------------------


def _paths(value, prefix=()):
    """Every (path) to a value inside a record, containers included."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _get(value, path):
    for p in path:
        value = value[p]
    return value


def _set(value, path, new):
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def _deep(n: int):
    out = "leaf"
    for _ in range(n):
        out = [out]
    return out


def _one(r: random.Random, values: list):
    """One of `values`, a copy: a list or dict put into a record is mutated in place later on (a
    field added into it), and a shared one carried those changes into every case after."""
    return copy.deepcopy(r.choice(values))


def mutate_value(rec, r: random.Random, ids: list[str]):
    """One structural mutation of one record (a JSON value); returns the new record and its name."""
    paths = list(_paths(rec))
    path = r.choice(paths)
    op = r.random()
    if op < 0.45:
        new = _one(r, WEIRD)
        return _set(rec, path, new), f"set {path!r} to {type(new).__name__}"
    if op < 0.6:
        dicts = [p for p in paths if isinstance(_get(rec, p), dict) and _get(rec, p)]
        if dicts:
            p = r.choice(dicts)
            k = r.choice(sorted(_get(rec, p), key=str))
            del _get(rec, p)[k]
            return rec, f"drop {p + (k,)!r}"
    if op < 0.75:
        idp = [p for p in paths if p and p[-1] in ID_KEYS]
        if idp and ids:
            p = r.choice(idp)
            return _set(rec, p, r.choice(ids)), f"collide id {p!r}"
    if op < 0.79:  # a string the readers look into, or a value kept as its JSON text
        strs = [p for p in paths if isinstance(_get(rec, p), str)]
        if strs and r.random() < 0.7:
            p = r.choice(strs)
            new = r.choice(TELLING)
            new = r.choice([new, _get(rec, p) + new, new + _get(rec, p), new * (100_000 // len(new))])
            return _set(rec, p, new), f"telling text {new[:40]!r} at {p!r}"
        p = r.choice(paths)
        try:
            return _set(rec, p, json.dumps(_get(rec, p))), f"JSON text of {p!r}"
        except (ValueError, RecursionError):
            pass
    if op < 0.85:
        strs = [p for p in paths if isinstance(_get(rec, p), str)]
        if strs:
            p = r.choice(strs)
            s = _get(rec, p)
            i = r.randrange(len(s) + 1)
            bad = r.choice(["\x1b[1;31m", "<img src=x onerror=alert(1)>", "\ud800", "\udfff", "\x00",
                            "\ufeff", "\r\n", "\u2028", "```", "{{ 7*7 }}", "\\u0000"])
            return _set(rec, p, s[:i] + bad + s[i:]), f"insert {bad!r} into {p!r}"
    if op < 0.9:
        return _set(rec, path, _deep(r.choice([50, 99, 101, 150, 400]))), f"deep nesting at {path!r}"
    if op < 0.96:  # many at once: each value of the record swapped with some chance
        p = r.choice([0.1, 0.3])
        return _spray(rec, r, p), f"spray {p}"
    if isinstance(rec, dict):
        return {r.choice(["type", "role", "content", "_type", "message"]): _one(r, WEIRD)}, "tiny record"
    return _one(r, WEIRD), "record replaced"


def _spray(value, r: random.Random, p: float):
    if r.random() < p:
        return _one(r, WEIRD)
    if isinstance(value, dict):
        return {k: _spray(v, r, p) for k, v in value.items()}
    if isinstance(value, list):
        return [_spray(v, r, p) for v in value]
    return value


def _dumps(rec, r: random.Random) -> bytes:
    try:
        text = json.dumps(rec, ensure_ascii=r.random() < 0.5, allow_nan=True)
    except (ValueError, RecursionError):
        text = json.dumps(str(rec)[:1000])
    return text.encode("utf-8", "surrogatepass")


def mutate_bytes(line: bytes, r: random.Random) -> tuple[bytes, str]:
    op = r.randrange(9)
    if op == 0 and line:
        i = r.randrange(len(line))
        return line[:i], f"cut at byte {i}"
    if op == 1:
        i = r.randrange(len(line) + 1)
        bad = r.choice([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80"])
        return line[:i] + bad + line[i:], f"invalid UTF-8 {bad!r} at {i}"
    if op == 2:
        return b"\xef\xbb\xbf" + line, "BOM"
    if op == 3:
        i = r.randrange(len(line) + 1)
        return line[:i] + b"\x00" + line[i:], f"NUL at {i}"
    if op == 4:
        return r.choice([b"", b"   ", b"null", b"42", b"[]", b"{}", b'"str"', b"garbage {",
                         b"[" * 5000 + b"]" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000,
                         b"NaN", b"Infinity", b'{"type": "user"}{"type": "user"}']), "line replaced"
    if op == 5:
        return line + b"\r", "CR"
    if op == 6:
        return line.replace(b'"', b"'", 1), "quote"
    if op == 7:
        i = r.randrange(len(line) + 1)
        return line[:i] + b"\x1b[2J<script>" + line[i:], f"raw ANSI/HTML at {i}"
    return line + b" " * r.randrange(3) + b"\t", "trailing blanks"


# --- what newer writers write: new fields, record and block types, timestamps of every shape ------
# (the long run's --newer turns these on, and the checks that go with them: hostile text inert,
# every unknown record and block shown, detection kept; the bounded run keeps the classic mix)
NEWER = False
MARK = "FUZZMARK"  # a word every unknown record and block carries: it must reach the export
TIME_KEY = re.compile(r"(?i)time|date|created|updated|^ts$|_at$")
TIMES = [1761073198.2721586, 1761073198, 1761073198272, 1761073198272158, 1761073198272158600,
         "1761073198.27", "1761073198272", "2025-10-21T18:59:02.228585+00:00", "2025-10-21T18:59:02Z",
         "2025-10-21T18:59:02", "2025-10-21 18:59:02.811", "2025-10-21T18:59:02+05:30",
         "2025-10-21T18:59:02.123456789Z", "Tue, 21 Oct 2025 18:59:02 GMT", "2025-10-21", "yesterday",
         "", 0, -1, 1e20, -1e20, 1.5e308, True, None, [1, 2], {"seconds": 1, "nanos": 5},
         "2025-02-30T25:61:61Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00", "0000-00-00", "NaN"]
TYPE_KEYS = ("type", "_type", "role", "kind", "subtype", "object", "status", "from", "source")
NEW_KEYS = ["x_new_field", "annotations", "parent_id", "meta", "usage", "extra", "version",
            "cache_control", "citations", "signature", "metadata", "id", "name", "content"]
FOREIGN: list[bytes] = []  # lines of other seeds' JSONL files (mixed formats in one file)


def _block(r: random.Random) -> dict:
    return r.choice([{"type": "future_block", "future_payload": f"{MARK} <script>alert(1)</script>"},
                     {"type": "future_block", "text": f"{MARK} new block", "data": {"k": [1]}},
                     {"type": "tool_result_v2", "tool_use_id": "toolu_dup", "content": f"{MARK}"},
                     {"kind": "future_part", "value": f"{MARK}", "id": "p1"}])


# where a list of typed items is figures or a copy, not what is read: an item of a type not known
# there need not be shown (a usage's `iterations`, a request's `params`, Claude Code's
# `toolUseResult`, the tool's own copy of the result the message shows)
# or a value put where a time was (`{"nanos": 5, "id": [...]}`); mini-swe-agent's `extra` (the raw
# API response the message was taken from); an Agents SDK RunState's copies of its generated items
# (its current step's interruptions, the session's items, the model's responses); the `tools`
# offered to the model (definitions, not what was said); OpenHands' `tool_call_metadata` (the model
# response the action was taken from)
_METADATA = {"usage", "iterations", "params", "context_management", "cacheControl", "toolUseResult",
             "timestamp", "extra", "current_step", "session_items", "model_responses",
             "last_model_response", "last_processed_response", "tools", "tool_call_metadata"}
_TEXT_KEYS = ("content", "text", "value", "message", "output", "result", "data", "thinking")


def _mark(rec: dict, payload: bool) -> None:
    """MARK put before the texts of a record (or block) whose type is not known: however it is
    shown (its text with its role, or its JSON), the text must be. A record with none gets one
    (`payload`; an item of a list with none — a call of a new type that also holds a `function`
    — may be read as what it holds, its new field not shown: it is left unmarked)."""
    found = False

    def walk(value, depth):
        nonlocal found
        if depth > 7:
            return
        items = value.items() if isinstance(value, dict) else enumerate(value) \
            if isinstance(value, list) else ()
        media = isinstance(value, dict) and ({"media_type", "mime_type", "mimeType"} & value.keys())
        for k, v in list(items):
            if k == "data" and media:  # (a media payload is shown by its size, not its bytes)
                continue
            if isinstance(v, str) and k in _TEXT_KEYS and depth:
                value[k] = f"{MARK} <img src=x onerror=alert(1)> {v}"
                found = True
            elif isinstance(v, (dict, list)):
                walk(v, depth + 1)

    for k in _TEXT_KEYS:
        if isinstance(rec.get(k), str):
            rec[k] = f"{MARK} <img src=x onerror=alert(1)> {rec[k]}"
            found = True
    if not found:
        walk(rec, 1)
    if not found and payload and not any(rec.get(k) for k in ("tool_calls", "function_call", "content",
                                                              "parts", "reasoning_content")):
        # (in the record's payload, when it has one: legion's `data`, the `payload` of Codex's
        # envelope, whose three keys are all a record holds; a message of a new role holding
        # calls or content is read as what it holds, like a call of a new type: left unmarked)
        inner = next((rec[k] for k in (*_TEXT_KEYS, "payload") if isinstance(rec.get(k), dict)), rec)
        inner["future_payload"] = f"{MARK} <img src=x onerror=alert(1)>"


def _history_copy(rec, path) -> bool:
    """Whether `path` is inside a message an API call log's request repeats: each logged call (a
    line with its request's `messages` and its `response`) sends the history again, and only its
    last message is new; the others are copies of what was shown (an earlier answer stands for
    the assistant message), a change to one copy alone no writer's; so is its system prompt."""
    if not isinstance(rec, dict) or not ({"response", "request"} & rec.keys()):
        return False
    if "system" in path:  # (the system prompt each call sends again: shown with the conversation's first)
        return True
    for k in range(len(path) - 1):
        if path[k] == "messages" and isinstance(path[k + 1], int):
            msgs = _get(rec, path[:k + 1])
            return isinstance(msgs, list) and path[k + 1] < len(msgs) - 1
    return False


def mutate_newer(rec, r: random.Random):
    """One mutation of what a newer writer does to a record; returns the record and its name."""
    paths = list(_paths(rec))
    inner = [p for p in paths if isinstance(_get(rec, p), str) and _get(rec, p)[:1] in ("{", "[")]
    if inner and r.random() < 0.3:  # JSON kept as text (agentpress' content, a call's arguments)
        p = r.choice(inner)
        try:
            value = json.loads(_get(rec, p))
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, (dict, list)):
            value, what = mutate_newer(value, r) if r.random() < 0.6 else mutate_value(value, r, [])
            return _set(rec, p, json.dumps(value)), f"in the JSON text at {p!r}: {what}"
    op = r.random()
    if op < 0.3:
        tp = [p for p in paths if p and isinstance(p[-1], str) and TIME_KEY.search(p[-1])]
        p = r.choice(tp) if tp else ("timestamp",) if isinstance(rec, dict) else None
        if p is not None:
            new = _one(r, TIMES)
            return _set(rec, p, new), f"time {new!r} at {p!r}"
    if op < 0.5:
        dicts = [p for p in paths if isinstance(_get(rec, p), dict)]
        if dicts:
            p, key = r.choice(dicts), r.choice(NEW_KEYS)
            new = r.choice([{"nested": {"a": [1, None]}}, "<script>alert(1)</script>", [], None, 3,
                            "x" * 5000, {"type": "x"}, [_block(r)]])
            if isinstance(new, list) and new:  # (a known record's new field need not be shown)
                new = json.loads(json.dumps(new).replace(MARK, "fuzznew"))
            _get(rec, p)[key] = new
            return rec, f"new field {p + (key,)!r}"
    if op < 0.75:
        tps = [p for p in paths if p and p[-1] in TYPE_KEYS and isinstance(_get(rec, p), str)]
        if tps:
            root = [p for p in tps if len(p) == 1]
            p = r.choice(root) if root and r.random() < 0.6 else r.choice(tps)
            new = r.choice(["future_" + _get(rec, p), "brand_new_kind", _get(rec, p).upper()])
            _set(rec, p, new)
            # a record or a block (an item of a list) of a type not known must be shown; a known
            # record's field of a new value (metadata.subtype) need not show the whole record;
            # an upper-case role is how some writers spell a known one
            if new != new.upper() and p[-1] in ("type", "_type", "role", "kind") \
                    and (len(p) == 1 or isinstance(p[-2], int) and not _METADATA.intersection(p)
                         and not _history_copy(rec, p)):
                _mark(_get(rec, p[:-1]), payload=len(p) == 1)
            return rec, f"unknown {p!r} {new!r}"
    # (not into a list a new field brought, "fuzznew" in it: a known record's new field is not read)
    lists = [p for p in paths if isinstance(_get(rec, p), list) and not _METADATA.intersection(p)
             and not _history_copy(rec, p)
             and any(isinstance(x, dict) and ("type" in x or "role" in x) for x in _get(rec, p))
             and "fuzznew" not in json.dumps(_get(rec, p), default=str)]
    if lists:
        p = r.choice(lists)
        at = r.randrange(len(_get(rec, p)) + 1)
        _get(rec, p).insert(at, _block(r))
        return rec, f"unknown block at {p + (at,)!r}"
    if isinstance(rec, dict):
        rec["future_payload"] = "fuzznew added"
        return rec, "new field future_payload"
    return rec, "kept"


def mutate_lines(lines: list[bytes], r: random.Random, n: int) -> tuple[list[bytes], list[str]]:
    """`n` mutations over a JSONL file's lines: structural ones on parsed records, byte ones on the
    serialised line, and line-level ones (duplicate, swap, drop, huge)."""
    done = []
    ids = []
    for line in lines:
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        for p in _paths(rec):
            if p and p[-1] in ID_KEYS and isinstance(_get(rec, p), str):
                ids.append(_get(rec, p))
    for _ in range(n):
        if not lines:
            lines.append(b"{}")
        i = r.randrange(len(lines))
        op = r.random()
        if NEWER and op < 0.4:
            if r.random() < 0.12 and FOREIGN:
                lines.insert(i, r.choice(FOREIGN))
                done.append(f"line {i + 1}: another format's line")
                continue
            try:
                rec = json.loads(lines[i])
                rec, what = mutate_newer(rec, r)
            except (ValueError, RecursionError):
                continue
            if r.random() < 0.3:  # a new record rather than a changed one
                lines.insert(i + 1, _dumps(rec, r))
                what = "added after it: " + what
            else:
                lines[i] = _dumps(rec, r)
            done.append(f"line {i + 1}: {what}")
            continue
        if NEWER:
            op = (op - 0.4) / 0.6
        if op < 0.5:
            try:
                rec = json.loads(lines[i])
            except (ValueError, RecursionError):
                continue
            try:
                rec, what = mutate_value(rec, r, ids)
            except RecursionError:  # nested past what this walk can go (a deep line before)
                continue
            lines[i] = _dumps(rec, r)
        elif op < 0.75:
            lines[i], what = mutate_bytes(lines[i], r)
        elif op < 0.83:
            lines.insert(r.randrange(len(lines) + 1), lines[i])
            what = "duplicate"
        elif op < 0.9:
            j = r.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            what = f"swap with {j + 1}"
        elif op < 0.96:
            del lines[i]
            what = "drop"
        elif op < 0.99:
            what = "long string"
            try:
                rec = json.loads(lines[i])
                strs = [p for p in _paths(rec) if isinstance(_get(rec, p), str)]
                if strs:
                    p = r.choice(strs)
                    t = r.choice(TELLING + ["\n", " \t", "<", "\\", "@@ -1 +1 @@\n", "```\n", "* "])
                    rec = _set(rec, p, r.choice(["A" * 300_000, "QUJD" * 100_000, "é" * 100_000,
                                                 t * (300_000 // len(t))]))  # (a slow pattern's)
                    lines[i] = _dumps(rec, r)
            except (ValueError, RecursionError):
                pass
        else:
            what = "huge line"
            try:
                rec = json.loads(lines[i])
                strs = [p for p in _paths(rec) if isinstance(_get(rec, p), str)]
                if strs:
                    rec = _set(rec, r.choice(strs), r.choice(["x", "\ud83d", "é", "<\x1b"]) * (5 << 20))
                    lines[i] = _dumps(rec, r)
            except (ValueError, RecursionError):
                pass
        done.append(f"line {i + 1}: {what}")
    return lines, done


def _window(items: list, r: random.Random) -> list:
    if len(items) <= WINDOW:
        return list(items)
    start = r.choice([0, 0, r.randrange(len(items) - WINDOW)])
    return items[start:start + WINDOW]


def _trim(value, r: random.Random, depth: int = 0):
    """A document with every long list cut to a window (a case stays small)."""
    if isinstance(value, dict):
        return {k: _trim(v, r, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_trim(v, r, depth + 1) for v in _window(value, r)]
    return value


def mutate_file(data: bytes, jsonl: bool, r: random.Random, n: int) -> tuple[bytes, list[str]]:
    if jsonl:
        lines = _window(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), r)
        lines = [ln.rstrip(b"\r") for ln in lines]
        lines, done = mutate_lines(lines, r, n)
        eol = b"\r\n" if r.random() < 0.1 else b"\n"
        out = eol.join(lines) + (eol if r.random() < 0.9 else b"")  # sometimes a partial last line
    else:
        try:
            doc = _trim(json.loads(data.decode("utf-8-sig")), r)
        except (ValueError, RecursionError):
            return data, ["not JSON: kept"]
        done = []
        ids = [v for p in _paths(doc) if p and p[-1] in ID_KEYS
               for v in [_get(doc, p)] if isinstance(v, str)]
        for _ in range(n):
            if r.random() < 0.85:
                try:
                    doc, what = (mutate_newer(doc, r) if NEWER and r.random() < 0.4
                                 else mutate_value(doc, r, ids))
                except RecursionError:
                    continue
                done.append(what)
        out = _dumps(doc, r)
        if r.random() < 0.3:
            out, what = mutate_bytes(out, r)
            done.append(what)
    if r.random() < 0.05:
        out = b"\xef\xbb\xbf" + out
        done.append("BOM on the file")
    if NEWER and r.random() < 0.02:
        out = r.choice([b"", b"\xef\xbb\xbf", b"\n\n", b"\r\n", b" "])
        done.append(f"emptied to {out!r}")
    return out, done


@dataclass
class Case:
    seed: Seed
    index: int
    folder: Path
    main: Path
    mutations: dict[str, list[str]]
    marks: dict[Path, str] = field(default_factory=dict)  # each file's MARK (`file_mark`)

    def describe(self) -> str:
        return f"{self.seed.name} case {self.index}: " + "; ".join(
            f"{k}: {', '.join(v)}" for k, v in self.mutations.items())[:1500]


def file_mark(n: int) -> str:
    """The MARK of a case's `n`th file: the main file's is MARK, each other's (a Claude Code
    sub-agent's file, a Codex sub-agent's rollout) its own word, none a part of another, so that
    one file's unknown records shown do not stand for another's lost."""
    return MARK_MAIN if n == 0 else f"FUZZSUB{n}Q"


MARK_MAIN = MARK


def make_case(seed: Seed, index: int, folder: Path, r: random.Random) -> Case:
    """The seed's files copied under `folder` (relative paths kept), each mutated (with --newer,
    the unknown records and blocks of each carry its own `file_mark`)."""
    global MARK
    try:
        return _make_case(seed, index, folder, r)
    finally:
        MARK = MARK_MAIN


def _make_case(seed: Seed, index: int, folder: Path, r: random.Random) -> Case:
    global MARK
    muts = {}
    marks = {}
    main = None
    files = seed.files
    if seed.window and len(files) > MAX_FILES:  # the main file and a run of the others
        start = r.choice([1, 1, r.randrange(1, len(files) - MAX_FILES + 2)])
        files = files[:1] + files[start:start + MAX_FILES - 1]
    for n, src in enumerate(files):
        MARK = file_mark(n)  # (files[0] is the main file)
        rel = src.relative_to(seed.base)
        if seed.row:  # the database, its rows mutated; the session is a path below it
            dst = folder / seed.base.name / rel
            mutator = {"agentscope-studio": mutate_studio_db, "goose": mutate_goose_db}.get(seed.fmt, mutate_db)
            muts[str(rel)] = mutator(src, dst, seed.main.name, r)
            main = dst / seed.main.name
            continue
        dst = folder / seed.base.name / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        jsonl = src.suffix == ".jsonl"
        n = r.choice([1, 1, 2, 3, 5, 8, 13]) if src == seed.main or r.random() < 0.5 else 0
        if n:
            data, done = mutate_file(data, jsonl, r, n)
            muts[str(rel)] = done
        elif jsonl:
            data = b"\n".join(_window(data.split(b"\n"), r)) + b"\n"
        dst.write_bytes(data)
        os.utime(dst, (time.time() - 3600,) * 2)  # quiet for an hour: a partial last line is shown
        marks[dst] = MARK
        if src == seed.main:
            main = dst
    return Case(seed, index, folder, main, muts, marks)


def _db_copy(src: Path, dst: Path, wal: bool = True):
    """A connection to a copy of database `src` at `dst`, in WAL mode or not as its program keeps it."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    con = sqlite3.connect(dst, isolation_level=None)
    if wal:
        con.execute("PRAGMA journal_mode = WAL")
    return con


def _mutate_column(con, table: str, col: str, rid, r: random.Random) -> list[str]:
    """A row's JSON column mutated as a file's bytes are (`mutate_file`); what was done."""
    (data,) = con.execute(f"SELECT {col} FROM {table} WHERE id = ?", (rid,)).fetchone()
    data = data if isinstance(data, bytes) else str(data).encode("utf-8", "surrogatepass")
    new, what = mutate_file(data, False, r, r.choice([1, 2, 3]))
    try:
        value = new.decode("utf-8")
    except UnicodeDecodeError:
        value = new  # kept as a BLOB
    con.execute(f"UPDATE {table} SET {col} = ? WHERE id = ?", (value, rid))
    return what


def mutate_db(src: Path, dst: Path, sid: str, r: random.Random) -> list[str]:
    """An OpenCode database copied to `dst` with some of session `sid`'s rows mutated: a row's
    JSON as a document is, rows dropped or duplicated, parts moved to another message, columns
    given values of other types (SQLite keeps what it is given), the session made its own or
    another's child; now and then a page of the file overwritten (a damaged database)."""
    con = _db_copy(src, dst)
    done = []
    others = [i for (i,) in con.execute("SELECT id FROM session WHERE id != ?", (sid,))]
    for _ in range(r.choice([1, 2, 3, 5, 8, 13])):
        msgs = [m for (m,) in con.execute("SELECT id FROM message WHERE session_id = ?", (sid,))]
        parts = [p for (p,) in con.execute("SELECT id FROM part WHERE session_id = ?", (sid,))]
        op = r.random()
        table, ids = ("part", parts) if r.random() < 0.6 and parts else ("message", msgs)
        if op < 0.45 and ids:
            rid = r.choice(ids)
            what = _mutate_column(con, table, "data", rid, r)
            done.append(f"{table} {rid}: {', '.join(what)}")
        elif op < 0.55 and ids:
            rid = r.choice(ids)
            value = r.choice([42, 1.5, b"\xff\xfe", "", "null", "[]", '"text"'])
            con.execute(f"UPDATE {table} SET data = ? WHERE id = ?", (value, rid))
            done.append(f"{table} {rid}: data set to {value!r}")
        elif op < 0.65 and ids:
            rid = r.choice(ids)
            con.execute(f"DELETE FROM {table} WHERE id = ?", (rid,))
            done.append(f"{table} {rid} dropped")
        elif op < 0.72 and parts and msgs:
            rid = r.choice(parts)
            to = r.choice(msgs + ["msg_none", "", rid])
            con.execute("UPDATE part SET message_id = ? WHERE id = ?", (to, rid))
            done.append(f"part {rid} moved to message {to!r}")
        elif op < 0.78 and ids:
            rid = r.choice(ids)
            cols = [c for (_, c, *_rest) in con.execute(f"PRAGMA table_info({table})")]
            new_id = r.choice([rid + "x", "a" + rid, "0"])
            con.execute(f"INSERT OR IGNORE INTO {table} ({', '.join(cols)}) SELECT "
                        + ", ".join("?" if c == "id" else c for c in cols)
                        + f" FROM {table} WHERE id = ?", (new_id, rid))
            done.append(f"{table} {rid} duplicated as {new_id}")
        elif op < 0.86:
            cols = [c for (_, c, *_rest) in con.execute("PRAGMA table_info(session)") if c != "id"]
            col = r.choice(cols)
            value = r.choice([None, 0, -1, 10**18, 1.5e308, "", "x", b"\x00\xff", "{not json",
                              "[1, 2]", '{"a": null}', "<script>alert(1)</script>", "\x1b[31m",
                              sid, *others[:1]])
            try:
                con.execute(f'UPDATE session SET "{col}" = ? WHERE id = ?', (value, sid))
                done.append(f"session {col} set to {value!r}"[:200])
            except sqlite3.IntegrityError:  # (NOT NULL)
                pass
        elif op < 0.92 and ids:
            rid = r.choice(ids)
            col = r.choice(["time_created", "time_updated"])
            value = r.choice([None, -1, 10**18, "yesterday", 1.5, b"\x01"])
            try:
                con.execute(f"UPDATE {table} SET {col} = ? WHERE id = ?", (value, rid))
                done.append(f"{table} {rid}: {col} set to {value!r}")
            except sqlite3.IntegrityError:
                pass
        elif op < 0.96:
            rows = list(con.execute("SELECT rowid FROM todo WHERE session_id = ?", (sid,)))
            if rows:
                value = r.choice([None, 7, "", "<b>x</b>", b"\xff", "\ud800".encode("utf-8", "surrogatepass")])
                col = r.choice(["content", "status", "priority"])
                try:
                    con.execute(f"UPDATE todo SET {col} = ? WHERE rowid = ?", (value, r.choice(rows)[0]))
                    done.append(f"todo {col} set to {value!r}")
                except sqlite3.IntegrityError:
                    pass
        elif ids:
            rid = r.choice(ids)
            con.execute(f"UPDATE {table} SET data = ? WHERE id = ?", ("x" * r.choice([300_000, 3 << 20]), rid))
            done.append(f"{table} {rid}: huge data")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for suffix in ("-wal", "-shm"):  # (no OpenCode has it open: the file alone holds it)
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    return _damaged_and_aged(dst, r, done)


def _damaged_and_aged(dst: Path, r: random.Random, done: list[str]) -> list[str]:
    """A database copy, now and then with a page of it overwritten, given an hour-old time (no
    writer is at work on it): the list of what was done to it."""
    if r.random() < 0.04:
        size = dst.stat().st_size
        at = r.randrange(0, size, 512)
        with open(dst, "r+b") as f:
            f.seek(at)
            f.write(bytes(r.randrange(256) for _ in range(512)))
        done.append(f"512 bytes overwritten at {at}")
    os.utime(dst, (time.time() - 3600,) * 2)
    return done


def mutate_studio_db(src: Path, dst: Path, run_id: str, r: random.Random) -> list[str]:
    """AgentScope Studio's database copied to `dst` (rollback-journal mode, as Studio keeps it) with
    some of run `run_id`'s rows mutated: a message's JSON as a document is, values of other types
    (SQLite keeps what it is given), rows dropped, the run row's columns and its spans' counts
    given odd values; now and then a page of the file overwritten (a damaged database)."""
    con = _db_copy(src, dst, wal=False)
    done = []
    odd = [None, 0, -1, 10**18, 1.5, "", "x", b"\x00\xff", "{not json", "[1, 2]", '{"a": null}', "null",
           '"text"', "<script>alert(1)</script>", "\x1b[31m"]
    for _ in range(r.choice([1, 2, 3, 5, 8])):
        msgs = [m for (m,) in con.execute("SELECT id FROM message_table WHERE run_id = ?", (run_id,))]
        op = r.random()
        if op < 0.5 and msgs:
            mid = r.choice(msgs)
            (data,) = con.execute("SELECT msg FROM message_table WHERE id = ?", (mid,)).fetchone()
            data = data if isinstance(data, bytes) else str(data).encode("utf-8", "surrogatepass")
            new, what = mutate_file(data, False, r, r.choice([1, 2, 3]))
            try:
                value = new.decode("utf-8")
            except UnicodeDecodeError:
                value = new  # kept as a BLOB
            con.execute("UPDATE message_table SET msg = ? WHERE id = ?", (value, mid))
            done.append(f"message {mid}: {', '.join(what)}")
        elif op < 0.62 and msgs:
            mid, value = r.choice(msgs), r.choice(odd[1:])  # (msg is NOT NULL)
            con.execute("UPDATE message_table SET msg = ? WHERE id = ?", (value, mid))
            done.append(f"message {mid}: msg set to {value!r}")
        elif op < 0.72 and msgs:
            mid = r.choice(msgs)
            con.execute("DELETE FROM message_table WHERE id = ?", (mid,))
            done.append(f"message {mid} dropped")
        elif op < 0.86:
            col = r.choice(["project", "name", "timestamp", "run_dir", "pid", "status"])
            value = r.choice(odd)
            try:
                con.execute(f'UPDATE run_table SET "{col}" = ? WHERE id = ?', (value, run_id))
                done.append(f"run {col} set to {value!r}")
            except sqlite3.IntegrityError:  # (NOT NULL, the status CHECK)
                pass
        else:
            col = r.choice(["model", "inputTokens", "outputTokens", "attributes", "parentSpanId",
                            "operationName", "startTimeUnixNano"])
            value = r.choice(odd)
            spans = [i for (i,) in con.execute("SELECT rowid FROM span_table ORDER BY rowid")]
            try:
                if spans:
                    con.execute(f'UPDATE span_table SET "{col}" = ? WHERE rowid = ?', (value, r.choice(spans)))
                    done.append(f"a span's {col} set to {value!r}")
            except sqlite3.IntegrityError:
                pass
    con.close()
    return _damaged_and_aged(dst, r, done)


def mutate_goose_db(src: Path, dst: Path, sid: str, r: random.Random) -> list[str]:
    """Goose's sessions.db copied to `dst` with some of session `sid`'s rows mutated: a message's
    content_json (its content list) and metadata_json as documents are, newer content items among
    them with --newer; roles, times and ids given odd values (SQLite keeps what it is given), rows
    dropped, duplicated or moved to another session; the session row's columns (its JSON ones, its
    parent) and the usage ledger's odd; now and then a page of the file overwritten."""
    con = _db_copy(src, dst)
    done = []
    odd = [None, 0, -1, 10**18, 1.5, 1.5e308, "", "x", b"\x00\xff", "{not json", "[1, 2]", '{"a": null}',
           "null", '"text"', "<script>alert(1)</script>", "\x1b[31m", "2025-13-45T99:99:99Z", sid]
    others = [i for (i,) in con.execute("SELECT id FROM sessions WHERE id != ?", (sid,))]
    for _ in range(r.choice([1, 2, 3, 5, 8, 13])):
        rows = [m for (m,) in con.execute("SELECT id FROM messages WHERE session_id = ?", (sid,))]
        op = r.random()
        if op < 0.45 and rows:
            mid = r.choice(rows)
            col = r.choice(["content_json", "content_json", "content_json", "metadata_json"])
            what = _mutate_column(con, "messages", col, mid, r)
            done.append(f"message {mid} {col}: {', '.join(what)}")
        elif op < 0.57 and rows:
            mid = r.choice(rows)
            col = r.choice(["role", "content_json", "created_timestamp", "metadata_json", "message_id",
                            "tokens", "timestamp"])
            value = r.choice(odd + (["tool", "system", "Assistant", "brand_new_role"] if col == "role" else []))
            try:
                con.execute(f"UPDATE messages SET {col} = ? WHERE id = ?", (value, mid))
                done.append(f"message {mid}: {col} set to {value!r}"[:200])
            except sqlite3.IntegrityError:  # (NOT NULL)
                pass
        elif op < 0.65 and rows:
            mid = r.choice(rows)
            con.execute("DELETE FROM messages WHERE id = ?", (mid,))
            done.append(f"message {mid} dropped")
        elif op < 0.71 and rows:
            mid = r.choice(rows)
            cols = [c for (_, c, *_rest) in con.execute("PRAGMA table_info(messages)") if c != "id"]
            to = r.choice([sid, sid, *others[:2]])
            con.execute(f"INSERT INTO messages ({', '.join(cols)}) SELECT "
                        + ", ".join("?" if c == "session_id" else c for c in cols)
                        + " FROM messages WHERE id = ?", (to, mid))
            done.append(f"message {mid} duplicated into session {to}")
        elif op < 0.76 and rows:
            mid, to = r.choice(rows), r.choice(others + ["no_such_session"])
            con.execute("UPDATE messages SET session_id = ? WHERE id = ?", (to, mid))
            done.append(f"message {mid} moved to session {to}")
        elif op < 0.88:
            cols = [c for (_, c, *_rest) in con.execute("PRAGMA table_info(sessions)") if c != "id"]
            col = r.choice(cols + ["extension_data", "model_config_json", "recipe_json", "parent_session_id",
                                   "name", "session_type"])
            value = r.choice(odd + others[:1])
            try:
                con.execute(f'UPDATE sessions SET "{col}" = ? WHERE id = ?', (value, sid))
                done.append(f"session {col} set to {value!r}"[:200])
            except sqlite3.IntegrityError:  # (NOT NULL)
                pass
        elif op < 0.95:
            ledger = [i for (i,) in con.execute("SELECT id FROM usage_ledger WHERE session_id = ?", (sid,))] \
                if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'usage_ledger'").fetchone() else []
            if ledger:
                col = r.choice(["created_timestamp", "model", "input_tokens", "output_tokens", "total_tokens",
                                "cache_read_tokens", "cost", "cost_source", "is_compaction"])
                value = r.choice(odd)
                try:
                    con.execute(f"UPDATE usage_ledger SET {col} = ? WHERE id = ?", (value, r.choice(ledger)))
                    done.append(f"a ledger row's {col} set to {value!r}")
                except sqlite3.IntegrityError:
                    pass
        elif rows:
            mid = r.choice(rows)
            con.execute("UPDATE messages SET content_json = ? WHERE id = ?",
                        (json.dumps([{"type": "text", "text": "x" * r.choice([300_000, 3 << 20])}]), mid))
            done.append(f"message {mid}: huge content")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for suffix in ("-wal", "-shm"):  # (no Goose has it open: the file alone holds it)
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    return _damaged_and_aged(dst, r, done)


# --- driving -------------------------------------------------------------------------------------


class Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record)


class Warnings(logging.Handler):
    """The warnings logged, counted by message template, with the first one's text."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen: dict[tuple, list] = {}

    def emit(self, record):
        if record.levelno < logging.ERROR:
            key = (record.name, str(record.msg))
            self.seen.setdefault(key, [0, record.getMessage()[:300]])[0] += 1


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: int):
    """A Hang raised after `seconds`; and, for a hang the alarm cannot break (C code that never
    returns to Python: a regular expression backtracking), every thread's stack printed after
    twice that, so that the run says where it is stuck."""
    import faulthandler

    def ring(*_):
        raise Hang(f"no answer in {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    faulthandler.dump_traceback_later(seconds * 2, repeat=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def invariant(idx) -> list[str]:
    """Every non-blank line of a JSONL thread's file (the main one, each sub-agent's) is an event
    of that thread: shown, hidden bookkeeping, or an unparsed-line card."""
    out = []
    for name, th in idx.threads.items():
        if th.paths or th.mode != "jsonl":  # documents index records by JSON path
            continue
        data = Path(th.path).read_bytes()
        lines = data.split(b"\n")
        want = {i for i, ln in enumerate(lines, 1) if ln.strip(b" \t\r\n\x00\xef\xbb\xbf")}
        missing = sorted(want - set(th.lines))
        if missing:
            out.append(f"lines of {name} neither event, hidden nor unparsed: {missing[:10]}")
    return out


def unlisted(case: Case) -> list[str]:
    """A session kept as a folder of files that its format reads as one (`folder_document`) must
    be listed: else its messages are lost with its main file's damage."""
    from viewer import formats

    adapter = formats.BY_NAME.get(case.seed.fmt)
    if case.seed.row or not hasattr(adapter, "folder_document") or not case.main.is_file():
        return []
    if adapter.folder_document(case.main) is None:
        return []
    return [f"not listed, though {case.seed.fmt} reads its folder as a session"]


def _holds_something(data: bytes) -> bool:
    """Whether a document has something to show: not JSON (an unparsed card) or a non-empty value."""
    try:
        value = json.loads(data.decode("utf-8-sig", "replace"))
    except (ValueError, RecursionError):
        return bool(data.removeprefix(b"\xef\xbb\xbf").strip())  # a BOM alone is an empty file
    return value not in (None, [], {}, "")


def _events(c, key: str, r: random.Random) -> list[str]:
    """Ids to open: first, last, some at random, every unparsed card's."""
    data = c.get(f"/s/{key}.json?hidden=1").get_json() or {}
    evs = data.get("events") or []
    ids = [e["id"] for e in evs if e.get("kind") == "unparsed"][:2]
    if evs:
        ids += [evs[-1]["id"], r.choice(evs)["id"]]
    return list(dict.fromkeys(ids)), data


def read_stream(resp, seconds: float = 1.0) -> str:
    out, end = "", time.monotonic() + seconds
    chunks = iter(resp.response)
    try:
        while time.monotonic() < end and "data:" not in out:
            chunk = next(chunks, None)
            if chunk is None:
                break
            out += chunk.decode("utf-8", "replace") if isinstance(chunk, bytes) else chunk
    finally:
        resp.close()
    return out


def _cannot_read(resp) -> bool:
    """A 503 that says the session cannot be read (a damaged database's pages): the file's state,
    said plainly, not a fault of the server."""
    return resp.status_code == 503 and "Cannot read " in resp.get_data(as_text=True)


_HANDLER = re.compile(r"<[a-zA-Z][^<>]*\son[a-z]+\s*=")
_SCRIPT = re.compile(r"<script\b[^>]*>[^<]*alert\(")


class _Markup(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []
        self.script = False

    def handle_starttag(self, tag, attrs):
        self.script = tag == "script"
        self.found += [f"an event handler in the markup: <{tag} {k}={v!r:.80}>" for k, v in attrs
                       if k.startswith("on")]

    def handle_endtag(self, tag):
        self.script = False

    def handle_data(self, data):
        if self.script and "alert(" in data:
            self.found.append(f"a script in the markup: {data[:80]!r}")


def live_markup(html: str) -> list[str]:
    """A file's hostile text that reached an HTML page as markup: an inline event handler (the
    pages have none of their own: a strict CSP) or a script calling alert (the payloads'). (A
    quick look first: a parser over every page would cost more than the case.)"""
    if not (_HANDLER.search(html) or _SCRIPT.search(html)):
        return []
    p = _Markup()
    p.feed(html)
    p.close()
    return p.found


def shown(app, key: str, case: Case, problems: list[str]) -> None:
    """Every unknown record and block the case's files hold (they carry their file's MARK: its
    main file's, a sub-agent's file's, a folder document's parts') is in the session's export, as
    a user reads it: not hidden, not dropped. A row session's mark is looked for in its rows as
    the database module reads them (its `document`)."""
    from viewer import files, formats

    adapter = formats.BY_NAME.get(case.seed.fmt)
    paths = [(case.main, "main")]
    if hasattr(adapter, "folder_document") and case.main.is_file() \
            and adapter.folder_document(case.main) is not None:  # (a Wolo session's messages/)
        paths += [(p, "main") for p in sorted(case.main.parent.rglob("*.json")) if p != case.main]
    try:  # the sub-agents' files the session reads as threads of their own
        idx = app.extensions["viewer"].store.index(key)
        paths += [(Path(th.path), name) for name, th in idx.threads.items()
                  if name != "main" and th.path and Path(th.path).is_file()
                  and Path(th.path).resolve() != case.main.resolve()
                  and Path(th.path).resolve().is_relative_to(case.folder.resolve())]
    except Exception:  # (an index that cannot be made: the pages' own checks say so)
        pass
    marks = {p.resolve(): m for p, m in case.marks.items()}
    export: dict[str, str] = {}
    for path, thread in paths:
        mark = marks.get(path.resolve(), MARK_MAIN)
        store = files.row_store(path) if case.seed.row else None
        try:
            if store is not None:
                data = json.dumps(_read_rows(store.document(str(path))), default=str).encode()
            else:
                data = path.read_bytes()
        except (OSError, ValueError, TypeError):
            continue
        jsonl = store is None and path.suffix in (".jsonl", ".ndjson")
        if mark.encode() not in data or (store is None and not _readable_mark(
                data, jsonl, getattr(adapter, "FOLDS_LINES", False), mark)):
            continue
        if "md" not in export:
            resp = app.test_client().get(f"/s/{key}/export?format=md")
            export["md"] = resp.get_data(as_text=True) if resp.status_code == 200 else ""
        if export["md"] and mark not in export["md"] \
                and not (store is None and _waits_as_unknown(app, key, data, mark, thread)) \
                and not _in_a_hidden_copy(app, key, mark):
            at = data.find(mark.encode())
            line = data.count(b"\n", 0, at) + 1
            problems.append(f"an unknown record or block ({path.name} line {line}: "
                            f"{data[max(0, at - 200):at + 60]!r}) is not in the export")


def _read_rows(value):
    """A row session's document without the rows that do not read (BadLine: an unparsed card,
    which shows the head of its text only)."""
    from viewer import reader

    if isinstance(value, reader.BadLine):
        return None
    if isinstance(value, dict):
        return {k: _read_rows(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_read_rows(v) for v in value]
    return value


def _readable_mark(data: bytes, jsonl: bool, folds: bool, mark: str = MARK) -> bool:
    """Whether a MARK is in JSON that reads: a line (or a document) a byte mutation broke after
    the mark went in is an unparsed card, which shows its head only (the mark may be past it);
    in a file whose lines rewrite earlier records (`folds`: Gemini CLI's recording, where the last
    write of a message id is the message) a line whose id is written again later is not read."""
    from viewer import reader

    chunks = data.split(b"\n") if jsonl else [data]
    values = [reader.decode(c.removeprefix(b"\xef\xbb\xbf")) for c in chunks]
    ids = [v.get("id") if isinstance(v, dict) and isinstance(v.get("id"), str) else None for v in values]
    return any(mark.encode() in chunk and not isinstance(value, reader.BadLine)
               and not (folds and ids[n] is not None and ids[n] in ids[n + 1:])
               for n, (chunk, value) in enumerate(zip(chunks, values)))


def _waits_as_unknown(app, key: str, data: bytes, mark: str = MARK, thread: str = "main") -> bool:
    """Whether every line holding MARK is an event hidden for a reason it states, behind the page's
    toggle (its raw line a click away) and left out of the Markdown export with the other hidden
    events (which says how many): a line type newer than its reader (Claude Code's choice: its CLI
    adds a bookkeeping line type with nearly every release, see `claude_code.event`), or an unknown
    item inside a bookkeeping record (Claude Code's `api-request-blob` copies of the request)."""
    resp = app.test_client().get(f"/s/{key}/export?format=json")
    if resp.status_code != 200:
        return False
    lines = {n for n, line in enumerate(data.split(b"\n"), 1) if mark.encode() in line}
    names = (None, "main") if thread == "main" else (thread,)
    events = [e for e in resp.get_json()["events"] if e["thread"] in names and e["line"] in lines]
    return {e["line"] for e in events} == lines and all(e["hidden"] and e["hidden_reason"] for e in events)


def _in_a_hidden_copy(app, key: str, mark: str = MARK) -> bool:
    """Whether MARK is in a copy of a message hidden as such, the message shown once: AgentScope's
    broadcast message sits in each agent's memory with one id, and a mutation of one copy only is
    no writer's (its copies are the same message)."""
    resp = app.test_client().get(f"/s/{key}/export?format=json")
    if resp.status_code != 200:
        return False
    marked = [e for e in resp.get_json()["events"] if mark in json.dumps(e)]
    return bool(marked) and all(e["hidden"] and "copy" in (e["hidden_reason"] or "") for e in marked)


def same_family(case: Case, found) -> list[str]:
    """A line file still clearly its seed's (most of its lines the seed's own, unchanged) is
    detected as the seed's format."""
    if found is None or found.format == case.seed.fmt or case.seed.row:
        return []
    if case.seed.main.suffix not in (".jsonl", ".ndjson") or not case.main.is_file():
        return []
    if {found.format, case.seed.fmt} == {"openai-chat", "anthropic-messages"} and _both_apis(case.seed.main):
        return []  # (a log of both APIs' calls: each reads its calls as the other's does)
    own = {ln.rstrip(b"\r") for ln in case.seed.main.read_bytes().split(b"\n")}
    lines = [ln.rstrip(b"\r") for ln in case.main.read_bytes().removeprefix(b"\xef\xbb\xbf").split(b"\n")
             if ln.strip()]
    same = sum(ln in own for ln in lines)
    if same >= 2 and same * 10 >= len(lines) * 7:
        return [f"detected as {found.format}, not {case.seed.fmt}, with {same} of {len(lines)} lines "
                f"the seed's own"]
    return []


def _both_apis(path: Path) -> bool:
    """Whether a file is an API call log holding both Anthropic's and OpenAI's calls (a proxy's
    that both go through): read as either API's, each call is read by its own (wrapped.event)."""
    from viewer.formats import wrapped

    flavors = set()
    for line in path.read_bytes().split(b"\n"):
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and wrapped.kind(rec) == "exchange":
            flavors.add(wrapped.flavor(rec))
    return flavors == {"openai", "anthropic"}


def drive_web(app, key: str, case: Case, r: random.Random, problems: list[str]) -> None:
    c = app.test_client()

    def get(url):
        resp = c.get(url)
        if resp.status_code >= 500 and not _cannot_read(resp):
            problems.append(f"{resp.status_code} on {url}")
        resp.get_data()
        if NEWER and resp.mimetype == "text/html":
            problems.extend(f"{what} on {url}" for what in live_markup(resp.get_data(as_text=True)))
        return resp

    get(f"/s/{key}" + r.choice(["", "?hidden=1"]))
    ids, data = _events(c, key, r)
    total = (data.get("window") or {}).get("total") or 0
    for start in range(0, min(total, 120), 40):
        get(f"/s/{key}/w/main?after={start}")
    for name in list(data.get("threads") or [])[:4]:
        get(f"/s/{key}/t/{name}")
    for eid in ids:
        get(f"/s/{key}/m/{eid}")
        get(f"/s/{key}/raw/{eid}")
    words = [w for w in "the error tool user a".split()]
    q = r.choice(words + ["\"", "(", "*", "<script>", "\x00", "é", "ab|cd", "[", "\\"])
    for url in (f"/s/{key}/search?q={q}", f"/s/{key}/search.json?q={q}",
                f"/s/{key}/search.json?q={q}&regex=1", f"/s/{key}/outline", f"/s/{key}/outline.json",
                f"/s/{key}/minimap", f"/s/{key}/filters", f"/s/{key}/usage", f"/s/{key}/charts.json",
                f"/s/{key}/export?format=html", f"/s/{key}/export?format=md",
                f"/s/{key}/export?format=json"):
        get(url)
    if ids:
        get(f"/s/{key}/export?format=md&from={ids[0]}&to={ids[-1]}")
        get(f"/s/{key}/step?from={ids[-1]}&dir=" + r.choice(["prev", "next"]))
    # filtered views: by kind, by a tool / agent / thread named in the file, by state
    tools = [t for t in (data.get("tools") or {})][:1] if isinstance(data.get("tools"), dict) else []
    flt = r.choice(["only=errors", "only=tools,thinking", "only=prompts", "state=error,unanswered",
                    "state=executing"] + [f"tool={t}" for t in tools]
                   + [f"thread={t}" for t in list(data.get("threads") or [])[:2]])
    get(f"/s/{key}?{flt}")
    get(f"/s/{key}/search.json?q={q}&{flt}")
    get(f"/s/{key}/step")


def drive_core(case: Case, r: random.Random, problems: list[str]) -> None:
    from click.testing import CliRunner

    from viewer import files, partial, usage
    from viewer.cli import main as cli
    from viewer.export import Export
    from viewer.formats import detect
    from viewer.index import SessionIndex
    from viewer.redact import Redactor

    path = case.main
    try:
        found = detect.detect_file(path)
    except detect.NotTranscript:  # said plainly by the page and by `check`
        found = None
    except OSError:  # cannot be read (a damaged database): the page says so (_cannot_read)
        if case.seed.row:
            return
        raise
    if NEWER:
        problems.extend(same_family(case, found))
    if found is None or found.format == "unknown":
        fmts = [case.seed.fmt]
    elif found.format == case.seed.fmt:
        fmts = [None]
    else:
        fmts = [None, case.seed.fmt]
    for fmt in fmts:
        try:
            idx = SessionIndex(path, fmt).build()
        except detect.NotTranscript:
            continue
        except OSError:  # a row-session on a damaged page: its page says so (_cannot_read)
            if case.seed.row:
                return
            raise
        if case.seed.mode == "jsonl":
            problems.extend(invariant(idx))
        elif not idx.summary.events and _holds_something(files.read_file(path)):
            problems.append("a document with no event at all")
        usage.report(idx)
        usage.timeline(idx)
        usage.turns(idx)
        # (the web layer exports each format as the server does; here: with redaction)
        Export(idx, r.choice(["html", "md", "json"]), label="fuzz", redactor=Redactor(),
               workers=1).write(io.BytesIO())
        if idx.threads.get("main") is not None and len(idx.threads["main"]):
            th = idx.threads["main"]
            eid = th.ids[r.randrange(len(th.ids))]
            where = idx.locate(eid)
            if where and not th.paths and th.mode == "jsonl":  # a document has no first screen
                partial.around(str(path), th.offsets[where[1]], th.lines[where[1]])
                partial.locate(str(path), eid)
    if found is not None and found.mode == "jsonl":
        partial.head(str(path))
        partial.tail(str(path))
    for args in (r.choice([["check", str(path)], ["check", str(path), "--json", "--redact-report"]]),):
        res = CliRunner().invoke(cli, args)
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            problems.append(f"check {args[2:]}: {''.join(traceback.format_exception(res.exception))}")
        elif re.search(r'Traceback \(most recent call last\):\n  File "[^"]*/viewer/', res.output or ""):
            # (ours, not a transcript's text that `check` prints: a title that is a traceback)
            problems.append(f"check {args[2:]} printed a traceback")


def drive_live(app, key: str, case: Case, full: bytes, r: random.Random, problems: list[str]) -> None:
    """The page drawn on the first part of the file, the rest appended: the stream and a refresh."""
    from viewer.store import Skipped
    from viewer.web.live import cursor_of

    viewer = app.extensions["viewer"]
    c = app.test_client()
    try:
        cursor = cursor_of(viewer.store.index(key))
    except Skipped:  # its first part is not a transcript: its page says so (422), as it should
        cursor = 0
    with open(case.main, "ab") as f:
        f.write(full)
    for url in (f"/s/{key}/events?after={cursor}",):
        resp = c.get(url)
        if resp.status_code >= 500:
            problems.append(f"{resp.status_code} on {url}")
        read_stream(resp)
    c.get(f"/s/{key}").get_data()


class Run:
    """One round: `cases` cases of every seed written under `work`, one app serving them all (an
    app compiles every template when made: one per seed would cost more than the cases)."""

    def __init__(self, seeds: list[Seed], cases: int, rng_seed: int, work: Path, live: bool = True):
        from viewer.web import create_app

        shutil.rmtree(work, ignore_errors=True)
        self.cases: dict[str, list[Case]] = {}
        self.tails: dict[Path, bytes] = {}
        self.rngs = {}
        for n, seed in enumerate(seeds):
            r = self.rngs[seed.name] = random.Random(f"{rng_seed}:{seed.name}")
            made = self.cases[seed.name] = []
            for i in range(cases):
                case = make_case(seed, i, work / "root" / f"s{n}" / f"c{i}", r)
                if live and seed.mode == "jsonl" and i % 2 == 0:
                    data = case.main.read_bytes()
                    cut = r.randrange(len(data) + 1)
                    case.main.write_bytes(data[:cut])  # the rest is written after the first page
                    os.utime(case.main, (time.time() - 3600,) * 2)
                    self.tails[case.main] = data[cut:]
                made.append(case)
        self.errors = Errors()
        logging.getLogger().addHandler(self.errors)
        self.app = create_app({"ROOTS": [str(work / "root")], "CACHE_DIR": str(work / "cache"),
                               "WATCH": False, "INDEX_ALL": False, "HEARTBEAT": 0.2})
        self.viewer = self.app.extensions["viewer"]
        self.keys = {Path(ref.path): ref.key for ref in self.viewer.store.sessions()}

    def drive(self, seed_name: str, log_problem) -> int:
        """Drive the cases of one seed; returns how many ran."""
        r = self.rngs[seed_name]
        ran = 0
        for case in self.cases[seed_name]:
            problems: list[str] = []
            self.errors.records.clear()
            key = self.keys.get(case.main)
            try:
                with deadline(CASE_SECONDS):
                    if key is None:
                        problems.extend(unlisted(case))
                    if key is not None:
                        drive_web(self.app, key, case, r, problems)
                        if case.main in self.tails:
                            drive_live(self.app, key, case, self.tails[case.main], r, problems)
                            # quiet since: a partial last line is then a card, not a write under way
                            os.utime(case.main, (time.time() - 3600,) * 2)
                        if NEWER:
                            shown(self.app, key, case, problems)
                    drive_core(case, r, problems)
            except Exception:
                problems.append(traceback.format_exc())
            ran += 1
            if self.errors.records:  # the traceback logged says more than its 500s
                problems = [p for p in problems if " on /" not in p[:12]]
            problems += [f"logged: {e.getMessage()}\n" + (
                "".join(traceback.format_exception(*e.exc_info)) if e.exc_info else "")
                for e in self.errors.records]
            for p in problems:
                log_problem(case, p)
        return ran

    def archive(self) -> list[str]:
        """The list, the stats and the full-text search over every case at once."""
        self.errors.records.clear()
        problems = []
        c = self.app.test_client()
        fts = getattr(self.viewer, "fts", None)
        if fts is not None:
            fts.wait(60)
        for url in ("/", "/sessions.json", "/search?q=the", "/search.json?q=error*", "/search?q=tool",
                    "/search?q=%22unbalanced", "/search?q=NOT", "/stats", "/stats.json"):
            resp = c.get(url)
            resp.get_data()
            if resp.status_code >= 500:
                problems.append(f"{resp.status_code} on {url}")
        return problems + [f"logged: {e.getMessage()}\n" + (
            "".join(traceback.format_exception(*e.exc_info)) if e.exc_info else "")
            for e in self.errors.records]

    def close(self) -> None:
        logging.getLogger().removeHandler(self.errors)
        self.viewer.store.indexer.stop()
        if getattr(self.viewer, "fts", None) is not None:
            self.viewer.fts.close()


def signature(problem: str) -> str:
    """What tells two problems apart: the exception and the last frame of ours it came from."""
    lines = [ln for ln in problem.strip().splitlines() if ln.strip()]
    if not lines:
        return problem
    frames = [ln.strip() for ln in lines if ln.strip().startswith('File "') and "/viewer/" in ln]
    last = [ln for ln in lines if not ln.strip().startswith(("^", "~"))][-1]
    return (frames[-1] + " " if frames else "") + last[:200]


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=20, help="cases per seed per round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=0, help="go on with the next seeds until then")
    ap.add_argument("--only", default="", help="seeds whose path or format holds one of these "
                    "(comma-separated: legion,marsys,wolo)")
    ap.add_argument("--work", default=None)
    ap.add_argument("--newer", action="store_true",
                    help="what newer writers write too (new fields, record and block types, every "
                    "shape of timestamp, other formats' lines), and the checks that go with it")
    args = ap.parse_args(argv)
    import tempfile

    global NEWER
    NEWER = args.newer
    work = Path(args.work or tempfile.mkdtemp(prefix="fuzz-"))
    all_seeds = [s for s in seeds(work / "fixtures") if chosen(s, args.only)]
    started = time.monotonic()
    total, found = 0, 0
    seen = set()
    warnings = Warnings()  # not findings (a file gone, a price refused), but worth a look
    logging.getLogger().addHandler(warnings)

    def report(case, problem):
        nonlocal found
        found += 1
        sig = signature(problem)
        if sig not in seen:
            seen.add(sig)
            keep = work / "found" / f"{len(seen)}"
            shutil.copytree(case.folder, keep, dirs_exist_ok=True)
            print(f"\n=== [{len(seen)}] {sig}\n{case.describe()}\nkept in {keep}\n{problem}", flush=True)

    rng_seed = args.seed
    per_format: dict[str, int] = {}
    while True:
        t = time.monotonic()
        run = Run(all_seeds, args.cases, rng_seed, work / "w")
        try:
            for seed in all_seeds:
                ran = run.drive(seed.name, report)
                total += ran
                per_format[seed.fmt] = per_format.get(seed.fmt, 0) + ran
            for p in run.archive():
                report(run.cases[all_seeds[0].name][0], p)
        finally:
            run.close()
        print(f"round {rng_seed}: {args.cases} cases of {len(all_seeds)} seeds in "
              f"{time.monotonic() - t:.0f} s (total {total}, problems {found}, distinct {len(seen)}; "
              + ", ".join(f"{k} {v}" for k, v in sorted(per_format.items())) + ")", flush=True)
        rng_seed += 1
        if not args.minutes or time.monotonic() - started > args.minutes * 60:
            break
    shutil.rmtree(work / "w", ignore_errors=True)
    for (name, msg), (n, example) in sorted(warnings.seen.items(), key=lambda kv: -kv[1][0]):
        print(f"warning {n}x from {name}: {example}")
    print(f"{total} cases in {time.monotonic() - started:.0f} s; {found} problems, {len(seen)} distinct")
    return 1 if found else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
