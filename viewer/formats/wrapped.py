"""Conversations kept inside wrappers: datasets, batch files and API call logs.

Plain OpenAI / Anthropic messages are often saved not as a bare list but inside a wrapper, many
conversations to a file. `openai_chat` and `anthropic_messages` read these through this module
(each file is read as the format its messages are in); it is not an adapter of its own.

Shapes (one per JSONL line, or a JSON list of them; a request/response pair also alone):
* datasets: OpenAI fine-tuning lines `{"messages", "tools"?, "parallel_tool_calls"?}` (and any
  other keys a dataset adds), preference lines `{"input": {"messages", "tools"},
  "preferred_output", "non_preferred_output"}`, eval lines `{"input": [messages], "ideal"…}`,
  Anthropic (Bedrock) fine-tuning `{"system", "messages"}`; ShareGPT `{"conversations": [{"from":
  human | gpt | system | function_call | observation, "value"}], "system"?, "tools"?}`.
* batch files: OpenAI batch input `{custom_id, method, url, body: {model, messages}}` and output
  `{id, custom_id, response: {status_code, request_id, body: ChatCompletion} | null, error}`;
  Anthropic Message Batches requests `{custom_id, params: {model, messages, system}}` and results
  `{custom_id, result: {type: succeeded | errored | canceled | expired, message | error}}` (a
  result of another type that holds a message: its type said, its message shown).
* API call logs, one call per line with the request's whole history: claude-trace's `RawPair`
  (badlogic/lemmy apps/claude-trace/src/interceptor.ts: `{request: {timestamp (s), method, url,
  headers, body}, response: {timestamp, status_code, headers, body | body_raw (an SSE stream)} |
  null, logged_at}`, `note: "ORPHANED_REQUEST…"` when no response came) and proxies' `{request,
  response}` pairs; LiteLLM's StandardLoggingPayload (docs/my-website/docs/proxy/logging_spec.md:
  `{id, model, messages, response, response_cost, startTime, endTime, status, error_str,
  error_information, prompt_tokens…}`).
* responses kept without their requests, one per line: an OpenAI Responses API `Response`
  (`object: "response"`, `output` items; openai-python types/responses/response.py) or a
  `ChatCompletion` (`object: "chat.completion"`, `choices`), what a program logging each
  `response.model_dump_json()` writes. One section; each response is the model's turn, and says the
  calls of the one before it were answered (their outputs went with the next request, not kept).

How they read. Each conversation opens with a section card (kind `section`: "Conversation 3 ·
line 3", "Request r2", "Result r2") holding what the wrapper says beside the messages (tool
definitions folded, eval keys, the request's settings); a file of many conversations is one
session whose outline and minimap have one section per conversation, each with a stable id (the
`custom_id` when it is unique, else the record's place). Tool call ids a conversation shares with
an earlier one (datasets reuse `call_1`) are told apart as `id~N` (N its section), so every call
pairs with its own result. An API call log shows the conversation once: a call whose messages go
on from a conversation already shown (its first message and last known messages equal, the earlier
answer standing for the assistant message that repeats it) adds only its new messages, then its
response as the assistant turn (model, usage, cost, the call's time and duration); a call that
does not go on from one (another first message: a title or quota probe, a compacted history)
starts a new section. A failed call (a non-2xx status, an `error` object, LiteLLM `status:
failure`, an errored batch result) is an error card with its message; a canceled or expired batch
request, or a request logged without a response, a notice. A streamed response kept as its SSE
text (claude-trace `body_raw`) is put back together from its events (Anthropic `message_start`,
`content_block_*`, `message_delta`; OpenAI `chat.completion.chunk` deltas).

A JSONL file of these is read as one document, once: as it grows by whole lines (an API log a
running agent's proxy writes), only the new lines are read (`Fold`: the conversations shown, the
history each knows, the call ids each section owns carry over, so a new line adds what a whole
read would add, with the same ids, and a call its request answers completes). A file rewritten,
cut or replaced, or a last line taken without its line end that then goes on, is read whole again;
a half-written last line waits. The raw view of a message shows it as the line holds it, of a
response the response.

A log of API calls (`call_log`: exchange or saved-response lines) is not read whole for its first
screen: each line repeats its conversation's history, so the lines a page shows can be read alone
(`region`, viewer/partial.py), the whole log read in the background; its events are named by where
their line begins (`@<offset>`, `~2`… for a line's further records), the same in both readings.
Nor is it read whole again for a page in a process that did not read it (a server restarted over
its cached index): the index keeps the whole reading's `plan` — for each line, the calls and
conversations before it and the conversation it goes on with — and the call ids each conversation
renamed, and a window's lines are read alone with them (`replay`), giving the records the whole
reading gave them (numbers, notes and ids alike).
"""

from __future__ import annotations

import bisect
import itertools
import os
import threading
import time
from array import array
from collections import OrderedDict
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import orjson

from .. import compressed, files, reader
from ..model import ANSWERED, Data, Event, Notice, Ref, Text
from ..timestamps import to_epoch
from ..toolcalls import again
from .common import as_text, first_time, model_and_usage, stop_notice

# the key of a JSONL file of wrappers read as one document (see `lines_document`)
LINES = "\u0000wrapped-lines"
HEAD_BYTES = 256 << 10
# `_last_line`: the line is left for a later read (`Fold.waiting`: the index waits for it as for a
# JSONL file's last line, index.TRUNCATED_GRACE, then it is read, shown cut)
_WAIT = object()
_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                     "document", "image"}
# keys of records of other formats: a record holding one is never a wrapper
_FOREIGN = {"role", "type", "_type", "uuid", "sessionId", "session_id", "thread_id", "message_id",
            "$set", "trajectory_format", "parts", "is_llm_message", "payload", "sender"}
_SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                   "chatgpt": "assistant", "bing": "assistant", "bard": "assistant",
                   "model": "assistant", "system": "system", "tool": "tool", "observation": "tool",
                   "function_call": "assistant", "function": "tool"}
_DATASET_LISTS = ("messages", "input", "prompt", "preferred_output", "non_preferred_output", "chosen",
                  "rejected", "conversations", "conversation")
# the outputs a preference line ranks: OpenAI's preference fine-tuning, LLaMA-Factory's and TRL's
_RANKED = (("preferred_output", "preferred output"), ("non_preferred_output", "non-preferred output"),
           ("chosen", "chosen"), ("rejected", "rejected"))


class Wrapped(dict):
    """A record read out of a wrapper, as the file holds it (what the raw view shows), with what
    only the wrapper around it says: `what` it is (section, message, reply, error, notice) and
    `info` (the section's label, the message to map, the call's times and status…)."""

    what: str
    info: dict

    def __init__(self, rec: Any, what: str, **info):
        super().__init__(rec if isinstance(rec, dict) else {"value": rec})
        self.what, self.info = what, info


# --- recognising a wrapper ---------------------------------------------------------------------

def _messages(value: Any) -> list | None:
    """`value` when it is a non-empty list of messages (dicts with a string `role`)."""
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value[:3]) \
            and isinstance(value[0].get("role"), str):
        return value
    return None


def _decode(text: str) -> Any:
    """JSON kept as text inside a record, read like a line: nothing nested deeper than
    reader.MAX_DEPTH; a BadLine when it is no JSON."""
    return reader.shallow(reader.decode(text), text)


def _request_body(rec: dict) -> dict:
    """The request body of a logged call: `request.body` (claude-trace, proxies; {} when the
    request has none), `request` itself (a request kept as its body), or the record (LiteLLM
    keeps `messages` at the top)."""
    req = rec.get("request")
    if isinstance(req, dict):
        body = req.get("body")
        if isinstance(body, dict):
            return body
        if isinstance(body, str):  # a body a logger could not parse stays text
            parsed = _decode(body)
            return parsed if isinstance(parsed, dict) else {}
        return {} if "url" in req or "method" in req else req
    return rec


def _settle(rec: Any) -> Any:
    """A record whose request body is JSON text, with the body read once and kept in its place
    (every look at the record would read it again, and as new dicts each time)."""
    req = rec.get("request") if isinstance(rec, dict) else None
    if isinstance(req, dict) and isinstance(req.get("body"), str):
        body = _decode(req["body"])
        if isinstance(body, dict):
            req["body"] = body
    return rec


def kind(rec: Any) -> str | None:
    """What wrapper a record is: dataset, sharegpt, batch_request, batch_result, exchange; None
    when it is none (a message, another format's record)."""
    if not isinstance(rec, dict) or _FOREIGN & rec.keys():
        return None
    if isinstance(rec.get("custom_id"), str):
        if isinstance(rec.get("body"), dict) or isinstance(rec.get("params"), dict):
            return "batch_request"
        if ("response" in rec and "error" in rec) or isinstance(rec.get("result"), dict):
            return "batch_result"
        return None
    if "response" in rec and isinstance(rec.get("request"), dict):
        body = _request_body(rec)
        if "messages" in body or "input" in body or "prompt" in body:
            return "exchange"
        return "exchange" if {"method", "url"} <= rec["request"].keys() else None
    if _saved_response(rec):
        return "response"
    if "response" in rec and _messages(rec.get("messages")) and isinstance(rec.get("model"), str) \
            and ({"startTime", "response_cost", "call_type"} & rec.keys()):
        return "exchange"  # LiteLLM's StandardLoggingPayload
    for key in ("conversations", "conversation"):
        conv = rec.get(key)
        if isinstance(conv, list) and conv and isinstance(conv[0], dict) \
                and "from" in conv[0] and "value" in conv[0]:
            return "sharegpt"
    if _messages(rec.get("messages")) or _messages(rec.get("prompt")) \
            or (_messages(rec.get("chosen")) and _messages(rec.get("rejected"))):
        return "dataset"  # (TRL's preference lines: `prompt`, or whole `chosen` / `rejected` talks)
    inp = rec.get("input")
    if isinstance(inp, dict) and _messages(inp.get("messages")):
        return "dataset"  # a preference (DPO) line
    if _messages(inp) and not ({"model", "output"} & rec.keys()):
        return "dataset"  # an eval line
    return None


def _saved_response(rec: dict) -> bool:
    """An OpenAI API response kept on its own, without its request: a Responses API `Response`
    (`object: "response"`, `output` items) or a `ChatCompletion` (`object: "chat.completion"`,
    `choices`) — what a program that logs each `response.model_dump()` writes, one per line."""
    return (rec.get("object") == "response" and isinstance(rec.get("output"), list)) or (
        rec.get("object") == "chat.completion" and isinstance(rec.get("choices"), list))


def flavor(rec: dict, k: str | None = None) -> str:
    """"anthropic" or "openai": whose messages the wrapper holds."""
    k = k or kind(rec)
    if k == "batch_request":
        return "anthropic" if isinstance(rec.get("params"), dict) else "openai"
    if k == "batch_result":
        return "anthropic" if isinstance(rec.get("result"), dict) else "openai"
    if k in ("sharegpt", "response"):
        return "openai"
    if k == "exchange":
        req = rec.get("request") if isinstance(rec.get("request"), dict) else {}
        url = req.get("url")
        if isinstance(url, str) and ("anthropic" in url or "/v1/messages" in url
                                     or "bedrock-runtime" in url):
            return "anthropic"
        resp = rec.get("response") if isinstance(rec.get("response"), dict) else {}
        body = resp.get("body") if isinstance(resp.get("body"), dict) else resp
        if body.get("type") == "message" or "stop_reason" in body:
            return "anthropic"
        raw = resp.get("body_raw")
        if isinstance(raw, str) and "message_start" in raw[:2000]:
            return "anthropic"
        request = _request_body(rec)
        if request.get("system") or _anthropic_messages(request.get("messages")):
            return "anthropic"
        return "openai"
    if rec.get("system") or _anthropic_messages(rec.get("messages")):
        return "anthropic"
    return "openai"


def _anthropic_messages(msgs: Any) -> bool:
    for m in (msgs if isinstance(msgs, list) else [])[:50]:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS
                                             for b in content):
            return True
        if isinstance(m, dict) and ({"tool_calls", "tool_call_id"} & m.keys() or m.get("role") == "tool"):
            return False
    return False


def sniff(rec: Any, own: str) -> int | None:
    """3 for a wrapper of `own`'s messages (2 for a dataset line), 0 for one of the other's, None
    for no wrapper; a record
    `records` read out of one is `own`'s (only `own`'s adapter is asked about it)."""
    if isinstance(rec, Wrapped):
        return 3
    k = kind(rec)
    if k is None:
        return None
    if flavor(rec, k) != own:
        return 0
    # a dataset line is only messages under a key: sure enough for lines, but a one-line JSON
    # document of that shape stays the document it is (detect_file weighs it as a record too)
    return 2 if k == "dataset" else 3


def folds(records: list) -> bool:
    """Whether JSONL lines (their first records, as detection read them) are wrappers: the file is
    then read as one document (`lines_document`), a line holding many records."""
    first = next((r for r in records if isinstance(r, dict)), None)
    return first is not None and kind(first) is not None


def lines_document(path: Path) -> dict | None:
    """A JSONL file of wrappers as one document (`{LINES: its Fold}`), or None when its first
    record is no wrapper (a look at its head: other files cost no more). A last line the writer
    has not finished is left for the next read. The file is read through `lines_fold`: a file that
    only grew is read from where the last read stopped (its reading kept while it is written: a
    finished file's is kept only once a page reads it)."""
    fold = lines_fold(path, keep=None)
    return None if fold is None else {LINES: fold}


def lines_fold(path: str | Path, keep: bool | None = True) -> "Fold | None":
    """The Fold of a JSONL file of wrappers, brought up to the file as it is now: the one kept
    (FOLDS_KEPT files) read on over what the file gained, or a new one read whole when none is
    kept or the file is no longer the one it read (replaced, cut, rewritten). None when the
    file's head holds no wrapper. A new one is kept when `keep`, or (None) when the file was
    written lately (a finished log indexed for the list is not held in memory for nothing)."""
    path = Path(path)
    if _is_json(path):
        return None
    key = str(path)
    with _folds_lock:
        fold = _folds.get(key)
        if fold is not None:
            _folds.move_to_end(key)
    with files.open_file(path) as f:
        if fold is not None:
            with fold.lock:
                if fold.extend(f):
                    return fold
            with _folds_lock:
                if _folds.get(key) is fold:
                    del _folds[key]
        eol = _head_eol(path, f)
        if eol is None:
            return None
        fold = Fold(os.fstat(f.fileno()).st_ino, eol)
        with fold.lock:
            fold.extend(f)
    from .. import index  # (at call time: the index imports the formats)

    if keep is None and time.time() - fold.mtime_ns / 1e9 > index.QUIET_FINISHED:
        return fold
    with _folds_lock:
        _folds[key] = fold
        _folds.move_to_end(key)
        while len(_folds) > FOLDS_KEPT:
            _folds.popitem(last=False)
    return fold


def kept(path: str | Path) -> bool:
    """Whether this process keeps the reading of a JSONL file of wrappers (`lines_fold`)."""
    with _folds_lock:
        return str(Path(path)) in _folds


def _head_eol(path: Path, f) -> bytes | None:
    """The line end of a JSONL file of wrappers, from a look at its head (`f` left past it); None
    when its first records are no wrappers. The lines looked at are those detection reads, as it
    reads them (detect.detect_file: its line end, the first record that is JSON, read on for a
    first line longer than the head: a claude-trace log's first call, its system prompt and
    tools) — the file is read as one document exactly when detection said so (`folds`)."""
    f.seek(0)
    start = reader.skip_bom(f)
    head = f.read(HEAD_BYTES)
    eol = b"\r" if b"\n" not in head and b"\r" in head.strip() else b"\n"
    lines = [ln for ln in head.split(eol) if ln.strip()]
    if len(head) == HEAD_BYTES and eol not in head:
        from . import detect  # (at call time: detect imports the formats)

        lines = detect.long_lines(path, start, head, eol)[0]
    values = [reader.decode(ln) for ln in lines[:50]]
    if not folds(values):
        return None
    return eol


def lean(path: str | Path) -> "Fold | None":
    """A new reading of a JSONL file of wrappers, kept nowhere, for the index to read whole a
    stretch at a time (`Fold.extend`'s drain, `Fold.let_go`): a dataset of 100 MB is never held
    whole (its records took four times its size). None when the file is no file of wrappers."""
    path = Path(path)
    if _is_json(path):
        return None
    with files.open_file(path) as f:
        eol = _head_eol(path, f)
        return None if eol is None else Fold(os.fstat(f.fileno()).st_ino, eol)


def head_fold(path: str | Path, hi: int) -> "Fold":
    """The Fold of the lines of a JSONL file of wrappers that begin before `hi`, read as a
    whole read reads them (the same records, paths and order: a first screen's records are named
    as the full index names them), kept nowhere; `offset` is where the first line not read
    begins. Raises ValueError when the file is no file of wrappers."""
    path = Path(path)
    with files.open_file(path) as f:
        eol = _head_eol(path, f)
        if eol is None:
            raise ValueError("not a JSONL file of wrappers")
        fold = Fold(os.fstat(f.fileno()).st_ino, eol)
        fold.extend(f, stop=hi)
    return fold


ITEMS_ABOVE = reader.HUGE_LINE  # a JSON array of wrappers bigger than this is read an element at a time
ITEMS_HEAD = 50  # elements of its head that must all be wrappers (as `records` asks of a whole one)


def _items_head(f) -> bool:
    """Whether the document open as `f` is a JSON array of wrappers bigger than ITEMS_ABOVE, told
    by its first elements (viewer/docstream.py: read until ITEMS_HEAD of them, within DOC_HEAD
    bytes) as `records` tells a whole one: the first a wrapper, and every one of them that is an
    object."""
    from .. import docstream
    from .detect import DOC_HEAD  # (at call time: detect imports the formats)

    start = reader.skip_bom(f)
    size = f.seek(0, 2)
    if size - start <= ITEMS_ABOVE:
        return False
    f.seek(start)
    if f.read(64).lstrip()[:1] != b"[":
        return False
    try:
        doc, _ = docstream.assemble(docstream.parts(f, start, size), most=ITEMS_HEAD, budget=DOC_HEAD)
    except ValueError:
        return False
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and kind(doc[0]) is not None \
        and all(kind(r) for r in doc[:ITEMS_HEAD] if isinstance(r, dict))


def items_file(path: str | Path) -> bool:
    """Whether a file is a big JSON array of wrappers (a dataset's conversations, a log of API
    calls saved as one `[...]` document), read an element at a time (`items_fold`)."""
    with files.open_file(path) as f:
        return _items_head(f)


def items_fold(path: str | Path, stop: int | None = None) -> "Fold | None":
    """A new reading of a big JSON array of wrappers, kept nowhere, read as a JSONL file of them
    is (`lean`): its elements one at a time, each unwrapped as a whole read of the array unwraps
    it, so the index holds a stretch of records at a time (`Fold.extend`'s drain), never the
    array (decoded whole, a 200 MB dataset took 300 MB). Nothing read yet: `extend` reads it —
    up to the first element that begins at or past `stop` when given (a first screen's, as
    `head_fold`). None when the file is no such array."""
    with files.open_file(path) as f:
        if not _items_head(f):
            return None
        fold = Fold(os.fstat(f.fileno()).st_ino, b"\n", items=True)
        if stop is not None:
            fold.extend(f, stop=stop)
        return fold


def _is_json(path: Path) -> bool:
    """Whether a file is a `.json` document (compressed or not: `x.json.gz`), not JSON lines."""
    return compressed.plain_name(path.name).lower().endswith(".json")


def lines_file(path: str | Path) -> bool:
    """Whether a file is a JSONL file of wrappers, read as one document (a look at its head)."""
    path = Path(path)
    if _is_json(path):
        return False
    with files.open_file(path) as f:
        return _head_eol(path, f) is not None


def call_log(path: str | Path) -> bool:
    """Whether a file is a JSONL log of API calls (`exchange` or saved `response` lines): a file
    whose first screen can be read from the lines it shows (`region`), and whose events are named
    by where their line begins (`@<offset>`, `~N` for a line's further events) — a line says all
    its conversation's history, so a reading may begin at any line."""
    path = Path(path)
    if _is_json(path):
        return False
    with files.open_file(path) as f:
        if _head_eol(path, f) is None:
            return False
        f.seek(0)
        reader.skip_bom(f)
        head = f.read(HEAD_BYTES)
        eol = b"\r" if b"\n" not in head and b"\r" in head.strip() else b"\n"
        first = next((ln for ln in head.split(eol) if ln.strip()), b"")
        if len(head) == HEAD_BYTES and eol not in head:
            from . import detect

            first = (detect.long_lines(path, 0, head, eol)[0] or [b""])[0]
    rec = reader.decode(first)
    return isinstance(rec, dict) and kind(rec) in _LOGGED


_LOGGED = ("exchange", "response")  # the kinds of record an API call log holds, one per line
SEED_LINES = 4  # lines a region reads before its own, unshown, to know the conversations there
SEED_BYTES = 8 << 20  # … but no further back than this


class Region:
    """The records of the lines of a JSONL log of API calls that begin in [lo, hi), read alone
    (`region`): `records[i]` read from the line [starts[i], ends[i]); `offset`, where the first
    line not read begins. The lines just before `lo` are read first and their records dropped:
    a line goes on from the conversation of the calls before it, and what it adds is then what a
    whole read adds for it (its new messages, not again the whole history). What only a whole
    read knows — which call and conversation this is of the file — is not said (`numbered`)."""

    def __init__(self, records: list, starts: array, ends: array, offset: int):
        self.records, self.starts, self.ends, self.offset = records, starts, ends, offset


def region(path: str | Path, lo: int, hi: int) -> Region:
    """The records of the lines beginning in [lo, hi) of a JSONL log of API calls (`lo` begins a
    line); see `Region`."""
    path = Path(path)
    with files.open_file(path) as f:
        eol = _head_eol(path, f)
        if eol is None:
            raise ValueError("not a log of API calls")
        size = f.seek(0, 2)
        seed = lo
        for _ in range(SEED_LINES):
            if seed <= 0 or lo - seed >= SEED_BYTES:
                break
            from ..partial import start_of_line  # (at call time: partial imports the index)

            seed = start_of_line(f, seed - 1, eol)
        unwrap = _Unwrap(numbered=seed == 0)  # (from the file's start: every number known)
        starts, ends = array("q"), array("q")
        scanner = reader.LineScanner(f, seed, 0, eol=eol, views=True)
        offset = size
        for _, rec, start, end, _ in _lines(f, scanner):
            if start >= hi or rec is _WAIT:
                offset = start
                break
            rec = _settle(rec)
            n = len(unwrap.out)
            unwrap.run([(f"[@{start}]", rec, None)])
            if start < lo:
                del unwrap.out[n:]
                continue
            starts.extend([start] * (len(unwrap.out) - n))
            ends.extend([end] * (len(unwrap.out) - n))
        else:
            offset = scanner.offset if scanner.tail is None else size
        return Region(unwrap.out, starts, ends, max(lo, offset))


# told the bytes read (`progress(n)`) while a Fold reads a file's lines: set by the index around its
# pass, so that a dataset read whole moves its page's progress bar as a JSONL session's pass does
PROGRESS: ContextVar = ContextVar("wrapped_progress", default=None)
PROGRESS_STEP = 1 << 20

FOLDS_KEPT = 8  # files whose Fold stays in memory (the pages of a few live logs, as the timeline
# kept a few documents read whole before); a file whose Fold was let go is read whole again
_folds: OrderedDict = OrderedDict()
_folds_lock = threading.Lock()


class Fold:
    """A JSONL file of wrappers as read so far: its records (`records[i]`, read from the line
    that ends at byte `ends[i]`), and what reading on needs — where the next whole line starts and
    the bytes just before it (a file rewritten in place no longer has them), and the unwrapping's
    state (the conversations shown and what each knows, the call ids each section owns, the
    sections opened; its `plan`). A file that only grew by whole
    lines is read on from there: its new lines are unwrapped as a whole read of the file unwraps
    them, so they add the records a whole read adds, in the same places (and two whole reads of
    the same bytes give the same records: the index goes on from another reading of the file
    than the one it read, when that one was let go)."""

    def __init__(self, ino: int, eol: bytes, items: bool = False):
        self.ino, self.eol = ino, eol
        # a JSON array's elements rather than a JSONL file's lines (`items_fold`): element i is
        # "line" i + 1, its bytes those of the element alone; never read on (a document is
        # rewritten whole: a change reads it again)
        self.items = items
        self.unwrap = _Unwrap(items=items)
        self.records: list = self.unwrap.out  # (JSON path, record): what `records` gives
        self.ends = array("q")
        self.starts = array("q")  # where the line of `records[i]` begins
        self.offset = self.line = 0  # where the next whole line starts, and the lines before it
        self.size = self.mtime_ns = 0  # the file as last read
        self.seal = b""  # the bytes before `offset` (reader.seal)
        self.waiting = False  # a last line is left for a later read
        self.closed = False  # a last line was read with no line end after it: the file may not grow
        self.first: Any = None  # the first wrapper record: whose messages the file holds
        self.flavors: set = set()  # whose messages its wrappers hold (a proxy may log both APIs)
        self.lines_read = 0  # lines decoded, all reads together (what a read costs, for tests)
        self.lock = threading.Lock()  # held by whoever reads on (the index's pass, a page)
        # the records let go before `records[0]` (a reading the index drains as it reads: `lean`)
        self.dropped = 0
        # a first screen's reading stopped before the file's end (`extend`'s `stop`), which the
        # next `extend` goes on with ("Load later" next to a dataset's first screen): True for a
        # JSONL file's (its `offset`, `line` and `seal` say where), an array's [its elements'
        # reading (`docstream.parts`, through a `reader.Handle` of the file), the element it
        # stopped at]
        self.going: Any = None

    def let_go(self) -> None:
        """Drop the records read so far (the index holds their events): `dropped` counts them."""
        self.dropped += len(self.records)
        del self.records[:]

    @property
    def logged(self) -> bool:
        """A log of API calls (see `call_log`): its events are named by where their line begins.
        Not a JSON array of them (`items`): its events are named by their number, as a whole read
        of the array names them, its first screen read from its start alone."""
        return not self.items and isinstance(self.first, dict) and kind(self.first) in _LOGGED

    def extend(self, f, stop: int | None = None, drain=None) -> bool:
        """Read the lines the file gained since the last read (`lock` held). False when it is no
        longer the file read: another file, cut short, its bytes before the resume offset changed,
        or a last line read without its line end written on. `drain(fold)` is called after each
        line (the index takes the records read so far, and lets them go: `lean`)."""
        st = os.fstat(f.fileno())
        size, mtime_ns = st.st_size, st.st_mtime_ns
        if st.st_ino != self.ino or size < self.offset:
            return False
        from .. import index  # (at call time: the index imports the formats)

        if (size, mtime_ns) == (self.size, self.mtime_ns) and not self.going and not (
                self.waiting and index._grace_over(mtime_ns)):
            return True
        if self.items:
            same = (size, mtime_ns) == (self.size, self.mtime_ns)
            if (self.size or self.offset) and not (self.going and same):
                return False  # (a document changed: read again whole)
            return self._extend_items(f, size, mtime_ns, stop, drain)
        if self.closed or reader.seal(f, self.offset) != self.seal:
            return False
        scanner = reader.LineScanner(f, self.offset, self.line, eol=self.eol, views=True)
        waiting, tail, unwrap = False, None, self.unwrap
        progress = PROGRESS.get()
        told = self.offset
        mark = told + PROGRESS_STEP if progress else 1 << 62
        for line, rec, start, end, last in _lines(f, scanner):
            if start >= mark:
                progress(start - told)
                told, mark = start, start + PROGRESS_STEP
            if stop is not None and start >= stop:  # (a first screen's: `head_fold`)
                self.offset, self.line, self.size, self.mtime_ns = start, line - 1, size, mtime_ns
                self.seal, self.going = reader.seal(f, start), True
                return True
            self.lines_read += 1
            if rec is _WAIT:
                waiting = True
                continue
            if last:
                tail = (line, end)  # the last line, taken without a line end after it
            rec = _settle(rec)
            n = len(self.records)
            unwrap.take(rec, line, start)
            if unwrap.kind is not None:
                self.first = rec if self.first is None else self.first
                self.flavors.add(unwrap.flavor)
            k = len(self.records) - n
            self.ends.extend([end] * k)
            self.starts.extend([start] * k)
            if drain is not None:
                drain(self)
        self.offset, self.line = (tail[1], tail[0]) if tail else (scanner.offset, scanner.line)
        self.going = None
        self.closed = tail is not None
        self.waiting = waiting
        self.size, self.mtime_ns = size, mtime_ns
        self.seal = reader.seal(f, self.offset)
        return True

    def _extend_items(self, f, size: int, mtime_ns: int, stop: int | None, drain) -> bool:
        """`extend` of a JSON array of wrappers: its elements one at a time (viewer/docstream.py),
        each unwrapped as a whole read of the array unwraps it (`_Unwrap.take`, its row in the
        plan), from the bytes it lies in; what cannot be read (a document cut short) is one
        unparsed record of the rest, after the records before it."""
        from .. import docstream

        if self.going is None:
            handle = reader.Handle(f)
            self.going = [docstream.parts(handle, reader.skip_bom(f), size), handle, None]
        parts, handle, waiting = self.going
        handle.f = f
        progress = PROGRESS.get()
        told = 0
        mark = PROGRESS_STEP if progress else 1 << 62
        unwrap, line = self.unwrap, self.line
        for p in itertools.chain([waiting] if waiting else [], parts):
            if p.offset >= mark:
                progress(p.offset - told)
                told, mark = p.offset, p.offset + PROGRESS_STEP
            if stop is not None and p.offset >= stop and p.path is not None:
                self.offset, self.line, self.size, self.mtime_ns = p.offset, line, size, mtime_ns
                self.going[2] = p
                return True
            if p.path is not None and not (p.item and not p.key):
                break  # (no array: `items_fold` looked at its head; a whole read says what it is)
            line += 1
            self.lines_read += 1
            rec = p.value
            if isinstance(rec, reader.BadLine):
                rec.raw = reader.read_bytes(f, p.offset, p.length, reader.UNPARSED_PREVIEW)
            else:
                rec = _settle(rec)
            n = len(self.records)
            unwrap.take(rec, line, p.offset)
            if unwrap.kind is not None:
                self.first = rec if self.first is None else self.first
                self.flavors.add(unwrap.flavor)
            k = len(self.records) - n
            self.ends.extend([p.offset + p.length] * k)
            self.starts.extend([p.offset] * k)
            if drain is not None:
                drain(self)
        self.offset, self.line, self.size, self.mtime_ns = size, line, size, mtime_ns
        self.closed, self.going = True, None
        self.seal = reader.seal(f, size)
        if progress and size > told:
            progress(size - told)
        return True


def _lines(f, scanner):
    """(line number, value, where the line begins, the byte past it, whether it is the last line
    without a line end) of each line, one at a time (a huge line skimmed), then of the last line
    (`_last_line`: or `_WAIT`). The scanner gives a line's bytes as a view of what it read (`views`:
    orjson reads it without a copy of each line)."""
    loads, JSONError = orjson.loads, orjson.JSONDecodeError
    for line, offset, length, data in scanner.lines():
        if data is None:
            value = reader.skim(f, offset, length)
        else:
            try:
                value = loads(data)
            except JSONError:
                data = bytes(data)
                value = reader.decode(data)  # (its reason, or a lenient retry)
        if isinstance(value, reader.BadLine):  # (its card shows the line: the document has no place)
            value.raw = bytes(data[:reader.UNPARSED_PREVIEW]) if data is not None else \
                reader.read_bytes(f, offset, length, reader.UNPARSED_PREVIEW)
        yield line, value, offset, offset + length, False
    if (last := _last_line(f, scanner)) is not None:
        if isinstance(last, reader.BadLine) and last.raw is None:
            last.raw = reader.read_bytes(f, scanner.tail[0], scanner.tail[1], reader.UNPARSED_PREVIEW)
        yield scanner.line + 1, last, scanner.tail[0], sum(scanner.tail), True


def _last_line(f, scanner) -> Any:
    """A last line with no newline after it: read when it is whole JSON (a file written without a
    final newline; a huge one skimmed), left for a later read (`_WAIT`) while it may still be
    being written, and the unparsed line it is once the file has been quiet as long as the index
    waits for a JSONL file's last line (a writer cut off)."""
    if scanner.tail is None:
        return None
    offset, length = scanner.tail
    if length <= reader.HUGE_LINE:
        data = reader.read_bytes(f, offset, length)
        if not data.strip():
            return None
        value = reader.decode(data)
    elif reader.read_bytes(f, offset + length - 1, 1) in (b"}", b"]"):
        value = reader.skim(f, offset, length)
    else:  # a huge line still being written: not skimmed on every read
        value = reader.BadLine("the line does not end a JSON value")
    from .. import index  # (at call time: the index imports the formats)

    if isinstance(value, reader.BadLine) and not index._grace_over(os.fstat(f.fileno()).st_mtime_ns):
        return _WAIT
    return value


def packed_renames(renames: dict[int, dict]) -> list:
    """A reading's renamed call ids of each section (`_Unwrap.renames`) as the index keeps them
    (`th.carried["renames"]`): [the ids renamed, [section, the id's place among them, …]], or []
    for none. A section's renames are each `again(id, section)` (`_Unwrap._own_ids`), so which ids
    a section renamed is all there is to keep: a dataset of 100,000 conversations that each call
    `call_1` kept a dict and a string per conversation (25 MB of a 200 MB dataset's index)."""
    table: list = []
    codes: dict = {}
    flat: list = []
    for section, ids in renames.items():
        for cid in ids:
            code = codes.get(cid)
            if code is None:
                code = codes[cid] = len(table)
                table.append(cid)
            flat += (section, code)
    return [table, flat] if flat else []


class Renames:
    """The renames `packed_renames` kept, read as `_Unwrap.renames` (section → {id: id~section})
    by a replay: `get` makes a section's dict when asked."""

    def __init__(self, packed: list) -> None:
        table, flat = packed or ([], [])
        self.table = table
        self.sections = array("q", flat[0::2])  # (ascending: sections are opened in order)
        self.codes = array("q", flat[1::2])

    def get(self, section: int, default=None):
        i = bisect.bisect_left(self.sections, section)
        out = {}
        while i < len(self.sections) and self.sections[i] == section:
            cid = self.table[self.codes[i]]
            out[cid] = again(cid, section)
            i += 1
        return out or default

    def setdefault(self, section: int, default=None):
        """(a replay opens its sections: it owns no ids, so nothing is kept)"""
        return self.get(section, default)


def replay(path: str | Path, lines: list[tuple], renames: "Renames | dict[int, dict]",
           items: bool = False) -> list[list]:
    """The records of some lines of a JSONL file of wrappers, each read alone as a whole reading
    of the file read it: `lines` holds, for each, its row of that reading's plan (`_Unwrap.take`)
    and where the line ends; `renames`, that reading's renamed call ids of each section. Returns
    each line's records, (JSON path, record) as `Fold.records` holds them — the same sections,
    numbers, messages, replies and ids — read from these lines' bytes alone. `items`: the "lines"
    are a JSON array's elements (`items_fold`)."""
    unwrap = _Unwrap(renames=renames, items=items)
    out = []
    with files.open_file(path) as f:
        for row, end in lines:
            start = row[0]
            if end - start <= reader.HUGE_LINE:
                data = reader.read_bytes(f, start, end - start)
                rec = reader.decode(data)
                if isinstance(rec, reader.BadLine):
                    rec.raw = bytes(data[:reader.UNPARSED_PREVIEW])
            else:
                rec = reader.skim(f, start, end - start)
                if isinstance(rec, reader.BadLine):
                    rec.raw = reader.read_bytes(f, start, end - start, reader.UNPARSED_PREVIEW)
            n = len(unwrap.out)
            unwrap.replay(_settle(rec), row)
            out.append(unwrap.out[n:])
    return out


# --- unwrapping --------------------------------------------------------------------------------

def records(doc: Any, own: str) -> list[tuple[str, Any]] | None:
    """The records of a document of wrappers whose messages are `own`'s, or None when it is none:
    a JSONL file's lines (its Fold: the records it read, kept and read on as the file grows —
    the list itself, which only grows: a reader takes the first records it knows of), a JSON list
    of wrappers, or one request/response pair."""
    if isinstance(doc, dict) and isinstance(doc.get(LINES), Fold):
        # (a file of both APIs' calls is read whole by the format detection gave it, the one of
        # most of its calls, whichever its first call's is: else it had no reader at all, every
        # call lost to one card of the reading's inner state)
        fold = doc[LINES]
        return fold.records if own in fold.flavors else None
    if isinstance(doc, list) and doc and isinstance(doc[0], dict) and kind(doc[0]) \
            and all(kind(r) for r in doc[:50] if isinstance(r, dict)):
        items = [(f"[{i}]", _settle(rec), None) for i, rec in enumerate(doc)]
    elif isinstance(doc, dict) and kind(doc) == "exchange":
        items = [("", _settle(doc), None)]
    else:
        return None
    first = next((r for _, r, _ in items if isinstance(r, dict) and kind(r)), None)
    if first is None or flavor(first) != own:
        return None
    return _Unwrap().run(items)


PLAN = 7  # numbers of a line's row in `_Unwrap.plan`: see `_Unwrap.take`
NEW, FELL = -1, -2  # a line's decision: a call that opens a conversation; a record read as it is


class _Unwrap:
    """The unwrapping of a file's records, in order: the sections opened, the conversations an API
    call log's calls go on with, the call ids each section owns. A JSONL file's lines are taken one
    at a time (`take`), which notes in `plan`, one row a line, what the reading knew before it and
    what it decided there; a line read again alone with its row (`replay`, a reading made with
    the file's `renames`) gives the records the whole reading gave it, numbers and ids alike — so
    a page of a big log is drawn from its own lines and its index, not from a reading of the whole
    log."""

    def __init__(self, numbered: bool = True, renames: dict | None = None, items: bool = False):
        self.numbered = numbered  # False for a region: which call or conversation of the file is unknown
        # a JSON array's elements, not a JSONL file's lines: sections say "item 3", as a whole
        # read of the array says (`records`), not "line 3"
        self.items = items
        # the renamed ids of each section (section → {id: id~N}); given whole to a replay, which
        # then owns no ids itself
        self.replaying = renames is not None
        self.renames: dict[int, dict] = {} if renames is None else renames
        # a line's row: (where it begins, its line number, calls, sections and the section before
        # it, its decision, the section it went on with)
        self.plan = array("q")
        self.decision, self.target = NEW, 0  # what the line being read decided (see `take`)
        self.forced: tuple | None = None  # a replay's: the decision and section of its row
        self.out: list = []
        self.sections = 0  # how many sections were opened
        self.section = 0  # the one records go into (an API call log may go back to an earlier)
        self.calls = 0
        self.ids: dict[str, int] = {}  # tool call id → the section that used it first
        self.renamed: dict[str, str] = {}  # this section's ids that an earlier section used
        self.conversations: list[dict] = []  # API call logs: each conversation shown so far
        self.instructions: Any = None  # saved responses: the last instructions shown
        self.flavor = "openai"  # whose messages the record being read holds (`flavor`)
        self.kind: str | None = None  # what wrapper it is (`kind`)

    def run(self, items: list) -> list:
        for path, rec, line in items:
            k = self.kind = kind(rec) if isinstance(rec, dict) else None
            if k is None:  # an unparsed line, a record of no known shape: kept as it is
                if isinstance(rec, reader.BadLine) and line:  # (its place here is no file line)
                    rec = reader.BadLine(f"line {line} of the file: {rec.reason}", rec.raw)
                self.out.append((path or "$", rec))
                continue
            mark, state = len(self.out), (self.sections, self.section, self.renamed, len(self.conversations))
            try:
                self.flavor = flavor(rec, k)
                getattr(self, k)(path or "$", rec, line, self.flavor)
            except (TypeError, AttributeError, KeyError, IndexError, ValueError):
                # a wrapper of a shape this reading does not foresee: the record as it is, a card
                # of its own (nothing of it lost), and the records after it read on
                del self.out[mark:]
                self.sections, self.section, self.renamed, n = state
                del self.conversations[n:]
                self.out.append((path or "$", rec))
                self.decision = FELL
        return self.out

    def take(self, rec: Any, line: int, start: int) -> None:
        """Unwrap a JSONL file's line (`line`, beginning at byte `start`: record `rec`), noting its
        row in `plan`."""
        row = (start, line, self.calls, self.sections, self.section)
        self.decision, self.target = NEW, 0
        self.run([(f"[{line - 1}]", rec, None if self.items else line)])
        self.plan.extend((*row, self.decision, self.target))

    def replay(self, rec: Any, row) -> None:
        """Unwrap a line alone as `take` did in the reading whose row for it is `row`."""
        _, line, self.calls, self.sections, self.section, decision, target = row
        self.renamed = self.renames.get(self.section) or {}
        if decision == FELL:  # (the reading took the record as it is)
            self.out.append((f"[{line - 1}]", rec))
            return
        self.forced = (decision, target)
        self.run([(f"[{line - 1}]", rec, None if self.items else line)])

    def nth(self, n: int) -> str:
        """" n" where the place is known (" 3" of "API call 3"), else nothing."""
        return f" {n}" if self.numbered else ""

    # sections
    def open(self, path: str, label: str, shown: dict, *, ident: Any = None,
             line: int | None = None, tools: Any = None) -> None:
        self.sections += 1
        self.section, self.renamed = self.sections, self.renames.setdefault(self.sections, {})
        item = path.strip("[]$")
        where = f"line {line}" if line else (f"item {int(item) + 1}" if item.isdigit() else "")
        heading = f"{label}" + (f" · {where}" if where and where not in label else "")
        self.out.append((f"{path}.(section)",
                         Wrapped(shown, "section", label=heading, ident=ident if isinstance(ident, str) else None, tools=tools)))

    def message(self, path: str, msg: Any, **info) -> None:
        if isinstance(msg, dict):
            self._own_ids(_call_ids(msg))
        info.setdefault("flavor", self.flavor)
        self.out.append((path, Wrapped(msg, "message", renamed=self.renamed, **info)))

    def _own_ids(self, ids: list[str]) -> None:
        """Note the call ids of a message or response; an id an earlier section used is renamed
        here."""
        if self.replaying:
            return  # (its reading's renames are given)
        for cid in ids:
            first = self.ids.setdefault(cid, self.section)
            if first != self.section:
                self.renamed[cid] = again(cid, self.section)

    # datasets
    def dataset(self, path: str, rec: dict, line: int | None, fl: str) -> None:
        inp = rec.get("input")
        shown = {k: v for k, v in rec.items() if k not in _DATASET_LISTS and k != "system"}
        tools = rec.get("tools") or rec.get("functions")
        if isinstance(inp, dict):
            shown.update({f"input.{k}": v for k, v in inp.items() if k != "messages"})
            tools = tools or inp.get("tools")
        ident = rec.get("custom_id") or rec.get("id")
        label = f"Conversation{self.nth(self.sections + 1)}" + (f" · {ident}" if isinstance(ident, str) else "")
        self.open(path, label, shown, ident=ident, line=line, tools=tools)
        if rec.get("system"):
            self.message(f"{path}.system", {"role": "system", "content": rec["system"]})
        # the line's messages: a list of them, else (an item of a type not known here first, a
        # newer writer's) any list under those keys, its items each shown as what it is
        lists = [k for k in ("messages", "prompt") if isinstance(rec.get(k), list) and rec[k]]
        key = next((k for k in lists if _messages(rec[k])), lists[0] if lists else None)
        if isinstance(inp, dict):
            base, msgs = f"{path}.input.messages", inp.get("messages")
        elif key is not None:
            base, msgs = f"{path}.{key}", rec[key]
        else:
            base, msgs = f"{path}.input", inp if isinstance(inp, list) else []
        for i, m in enumerate(msgs or ()):
            self.message(f"{base}[{i}]", m)
        self.ranked(path, rec, fl)

    def ranked(self, path: str, rec: dict, fl: str) -> None:
        """The outputs a preference line ranks, each said to be the preferred or the other."""
        for key, label in _RANKED:
            value = rec.get(key)
            for i, m in enumerate(value if isinstance(value, list) else [value] if isinstance(value, dict) else ()):
                p = f"{path}.{key}[{i}]" if isinstance(value, list) else f"{path}.{key}"
                if isinstance(m, dict) and "from" in m and "role" not in m:  # a ShareGPT turn
                    role = _SHAREGPT_ROLES.get(str(m.get("from")).lower(), "assistant")
                    self.message(p, m, label=label, message={"role": role, "content": m.get("value")})
                else:
                    self.message(p, m, label=label)

    def sharegpt(self, path: str, rec: dict, line: int | None, fl: str) -> None:
        key = "conversations" if isinstance(rec.get("conversations"), list) else "conversation"
        shown = {k: v for k, v in rec.items() if k not in _DATASET_LISTS and k != "system"}
        ident = rec.get("id")
        label = f"Conversation{self.nth(self.sections + 1)}" + (f" · {ident}" if isinstance(ident, str) else "")
        tools = rec.get("tools")
        if isinstance(tools, str):  # LLaMA-Factory keeps them as JSON text
            tools = _decode(tools) if tools.strip()[:1] in ("[", "{") else tools
        self.open(path, label, shown, ident=ident, line=line, tools=tools)
        if isinstance(rec.get("system"), str) and rec["system"]:
            self.message(f"{path}.system", {"role": "system", "content": rec["system"]})
        pending: list[str] = []
        for i, turn in enumerate(rec[key]):
            p = f"{path}.{key}[{i}]"
            if not isinstance(turn, dict):
                self.message(p, turn)
                continue
            who, value = turn.get("from"), turn.get("value")
            role = _SHAREGPT_ROLES.get(who.lower() if isinstance(who, str) else "", who if isinstance(who, str) else "unknown")
            msg: dict = {"role": role, "content": value}
            if who == "function_call":
                call = _decode(value) if isinstance(value, str) else value
                calls = call if isinstance(call, list) else [call]
                tcs = []
                for j, c in enumerate(calls):
                    c = c if isinstance(c, dict) else {}
                    cid = f"call-{self.section}-{i}" + (f"-{j}" if j else "")
                    args = c.get("arguments", c.get("parameters"))
                    tcs.append({"id": cid, "type": "function", "function": {
                        "name": as_text(c.get("name") or "function"),
                        "arguments": args if isinstance(args, str) else as_text(args)}})
                    pending.append(cid)
                msg = {"role": "assistant", "content": None, "tool_calls": tcs}
            elif who in ("observation", "function", "tool"):
                msg = {"role": "tool", "tool_call_id": pending.pop(0) if pending else "", "content": value}
            self.message(p, turn, message=msg)
        self.ranked(path, rec, fl)

    # batch files
    def batch_request(self, path: str, rec: dict, line: int | None, fl: str) -> None:
        body = rec.get("body") if isinstance(rec.get("body"), dict) else rec.get("params")
        body = body if isinstance(body, dict) else {}
        shown = {k: v for k, v in rec.items() if k not in ("body", "params")}
        shown.update({k: v for k, v in body.items() if k not in ("messages", "system", "input")})
        cid = rec["custom_id"]
        self.open(path, f"Request {cid}", shown, ident=cid, line=line, tools=body.get("tools"))
        key = "body" if isinstance(rec.get("body"), dict) else "params"
        if body.get("system"):
            self.message(f"{path}.{key}.system", {"role": "system", "content": body["system"]})
        msgs = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
        if isinstance(msgs, str):
            msgs = [{"role": "user", "content": msgs}]
        name = "messages" if isinstance(body.get("messages"), list) else "input"
        for i, m in enumerate(msgs if isinstance(msgs, list) else ()):
            self.message(f"{path}.{key}.{name}[{i}]", m)

    def batch_result(self, path: str, rec: dict, line: int | None, fl: str) -> None:
        cid = rec["custom_id"]
        shown = {k: v for k, v in rec.items() if k not in ("response", "result")}
        self.open(path, f"Result {cid}", shown, ident=cid, line=line)
        if fl == "anthropic":
            result = rec["result"]
            t = result.get("type")
            if t != "errored" and isinstance(result.get("message"), dict):
                if t != "succeeded":  # a result of a type not known here: said, its message shown
                    self.out.append((f"{path}.result", Wrapped(result, "notice", text=f"request {as_text(t)}")))
                self.reply(f"{path}.result.message", result["message"], fl, body=result["message"])
            elif t == "errored":
                self.error(f"{path}.result", result, "request failed", _error_text(result.get("error")))
            else:
                self.out.append((f"{path}.result", Wrapped(result, "notice", text=f"request {as_text(t)}"
                                 if t else "no result")))
            return
        resp = rec.get("response") if isinstance(rec.get("response"), dict) else None
        status = resp.get("status_code") if resp else None
        body = resp.get("body") if resp and isinstance(resp.get("body"), dict) else None
        if resp is not None and body is None and _ok(status) and not rec.get("error"):
            self.out.append((f"{path}.response", Wrapped(resp, "notice",
                             text="a response of no known shape")))
            return
        if rec.get("error") or resp is None or not _ok(status) or (body and body.get("error")):
            what = rec.get("error") or (body or {}).get("error") or "no response"
            self.error(f"{path}.response" if resp else path, resp or rec,
                       f"request failed ({status})" if status else "request failed", _error_text(what))
            return
        self.reply(f"{path}.response", resp, fl, body=body)

    # API call logs
    def exchange(self, path: str, rec: dict, line: int | None, fl: str) -> None:
        self.calls += 1
        req = rec.get("request") if isinstance(rec.get("request"), dict) else {}
        body = _request_body(rec)
        msgs = body.get("messages") if isinstance(body.get("messages"), list) else None
        if msgs is None and isinstance(body.get("input"), (list, str)):
            msgs = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
        msgs = list(msgs or ())
        if self.forced is None:
            keys = _Call(msgs)
            conv = self._goes_on(keys)
            self.decision = NEW if conv is None else conv["n"]
            self.target = 0 if conv is None else conv["section"]
        else:  # a replay: the conversation its reading found, as it knew it then
            keys, (known, target) = None, self.forced
            conv = None if known < 0 else {"n": known, "section": target,
                                           "renamed": self.renames.get(target) or {}}
        started = req.get("timestamp") if req else None
        started = started if started is not None else rec.get("startTime")
        base = f"{path}.request.body" if isinstance(req.get("body"), dict) else \
            f"{path}.request" if req else path
        if conv is None:
            # (LiteLLM's body is the record: its response is the answer, not a detail)
            shown = {k: v for k, v in body.items() if k not in ("messages", "system", "response")}
            if req:
                shown = {**{f"request.{k}": v for k, v in req.items() if k not in ("body", "headers")},
                         **shown}
            label = f"Conversation{self.nth(self.sections + 1)}"
            self.open(path, f"{label} · API call{self.nth(self.calls)}", shown, line=line,
                      tools=body.get("tools") or body.get("functions"))
            conv = {"n": 0, "at": {}, "section": self.section, "renamed": self.renamed}
            # a call allowed one token (Claude Code's "quota" check) is a probe, not the person's
            probe = body.get("max_tokens") == 1
            if keys is not None:
                self.conversations.append(conv)
            if body.get("system"):
                self.message(f"{base}.system", {"role": "system", "content": body["system"]},
                             time=started)
            new = range(len(msgs))
        else:
            if conv["section"] != self.section:  # back to an earlier conversation: its section
                self.section, self.renamed = conv["section"], conv["renamed"]
                self.section_note(path, conv, line)
            new = range(conv["n"], len(msgs))
            probe = False
        name = "messages" if isinstance(body.get("messages"), list) else "input"
        for i in new:
            self.message(f"{base}.{name}[{i}]" if isinstance(body.get(name), list) else f"{base}.{name}",
                         msgs[i], time=started, probe=probe)
        if keys is not None:
            conv.update(keys.known(False))
        resp = rec.get("response")
        ended = resp.get("timestamp") if isinstance(resp, dict) and "status_code" in resp else None
        ended = ended if ended is not None else rec.get("endTime")
        timing = {"started": started, "ended": ended, "call": self.calls if self.numbered else "",
                  "logged_at": rec.get("logged_at")}
        if resp is None and (rec.get("status") == "failure" or rec.get("error_str")):
            what = rec.get("error_information") or rec.get("error_str")
            self.error(f"{path}.response", rec, f"API call{self.nth(self.calls)} failed", _error_text(what),
                       **timing)
            return
        if resp is None:
            why = rec.get("note") if isinstance(rec.get("note"), str) else "no response was logged"
            self.out.append((f"{path}.response", Wrapped(rec.get("request") or rec, "notice",
                             text=f"API call{self.nth(self.calls)}: {why}", time=started)))
            return
        if isinstance(resp, dict) and "status_code" in resp:
            status, rbody = resp.get("status_code"), resp.get("body")
            if rbody is None and isinstance(resp.get("body_raw"), str):
                rbody = sse_message(resp["body_raw"], fl)
        else:
            status, rbody = None, resp
        failed = not _ok(status) or (isinstance(rbody, dict) and rbody.get("error")) \
            or rec.get("status") == "failure"
        if failed:
            what = rbody.get("error") if isinstance(rbody, dict) and rbody.get("error") else \
                rec.get("error_str") or rec.get("error_information") or rbody
            self.error(f"{path}.response", resp if isinstance(resp, dict) else rec,
                       f"API call{self.nth(self.calls)} failed" + (f" ({status})" if status else ""),
                       _error_text(what), **timing)
            return
        if not isinstance(rbody, dict):
            self.out.append((f"{path}.response", Wrapped(resp, "notice",
                             text=f"API call{self.nth(self.calls)}: a response of no known shape", time=ended)))
            return
        cost = rec.get("response_cost")
        self.reply(f"{path}.response", resp, fl, body=rbody, cost=cost, status=status, **timing)
        if fl == "anthropic" and isinstance(rbody.get("content"), list):
            answer = {"role": "assistant", "content": rbody["content"]}
        elif isinstance(rbody.get("output"), list):
            answer = {}
        else:
            choice = (rbody.get("choices") or [None])[0] if isinstance(rbody.get("choices"), list) else None
            answer = choice.get("message") if isinstance(choice, dict) else None
        if keys is not None and isinstance(answer, dict):
            conv.update(keys.known(True))

    # responses kept without their requests
    def response(self, path: str, rec: dict, line: int | None, fl: str) -> None:
        """One saved response of a log of them: its instructions when they change (a Response
        repeats them each turn), then the answer. The requests are not kept, so what the model was
        sent is not shown; a response after another says the calls before it were answered (the
        API takes no request after a call without its output), their outputs unseen."""
        self.calls += 1
        started = rec.get("created_at", rec.get("created"))
        ended = rec.get("completed_at")
        if not self.sections:  # one conversation: its section says what the file holds
            shown = {k: v for k, v in rec.items() if k in ("model", "tools", "tool_choice", "reasoning",
                                                           "text", "truncation", "store")}
            self.open(path, "API responses, kept without their requests", shown, line=line,
                      tools=rec.get("tools"))
        instructions = rec.get("instructions")
        said = isinstance(instructions, (str, list)) and instructions and instructions != self.instructions
        if self.forced is not None:
            said = self.forced[0] == 1
        self.decision = 1 if said else 0
        if said:
            self.message(f"{path}.instructions", {"role": "system", "content": instructions},
                         time=started)
        self.instructions = instructions if instructions else self.instructions
        timing = {"started": started, "ended": ended, "call": self.calls if self.numbered else "",
                  "noun": "response",
                  "answered": self.calls > 1}
        error = rec.get("error")
        if rec.get("status") == "failed" or (isinstance(error, dict) and error):
            self.error(path, rec, f"response{self.nth(self.calls)} failed", _error_text(error or "no message"),
                       **timing)
            return
        self.reply(path, rec, fl, body=rec, **timing)

    def section_note(self, path: str, conv: dict, line: int | None) -> None:
        self.out.append((f"{path}.(section)", Wrapped({}, "notice", text=(
            f"API call{self.nth(self.calls)} goes on with "
            + (f"conversation {conv['section']}" if self.numbered else "an earlier conversation")
            + (f" (line {line})" if line else "")))))

    def _goes_on(self, call: "_Call") -> dict | None:
        """The conversation a call's messages go on from: its first message and the last two it
        knew are the call's at the same places (an earlier answer stands for any assistant message
        there). The latest such conversation; None when none."""
        if not len(call):
            return None
        for conv in reversed(self.conversations):
            n, known = conv["n"], conv["at"]
            if not n or n > len(call) or not call.same(0, known[0]):
                continue
            if all(call.same(i, known[i]) for i in range(max(1, n - 2), n)):
                return conv
        return None

    # responses
    def reply(self, path: str, shown: Any, fl: str, *, body: dict, **info) -> None:
        self.out.append((path, Wrapped(shown, "reply", flavor=fl, body=body, renamed=self.renamed,
                                       **info)))
        self._own_ids(_response_ids(body, fl))

    def error(self, path: str, shown: Any, head: str, text: str, **info) -> None:
        self.out.append((path, Wrapped(shown, "error", head=head, text=text, **info)))


def _ok(status: Any) -> bool:
    return status is None or (isinstance(status, int) and 200 <= status < 300)


def _error_text(error: Any) -> str:
    """An API error's words: `{error: {type, message}}`, `{code, message}`, text."""
    if isinstance(error, dict):
        inner = error.get("error")
        if isinstance(inner, dict):
            return _error_text(inner)
        msg = error.get("message") or error.get("error_message")
        head = " ".join(as_text(error[k]) for k in ("type", "code", "error_class")
                        if isinstance(error.get(k), (str, int)) and error.get(k) not in ("", "error"))
        if msg:
            return f"{head}: {as_text(msg)}" if head else as_text(msg)
        return as_text(error)
    return as_text(error)


def _key(msg: Any) -> tuple:
    """A message to compare across calls: its role and content, a moving `cache_control` mark
    aside and a string the same as one text block."""
    if not isinstance(msg, dict):
        return ("", orjson.dumps(msg, default=str))
    content = msg.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        content = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
                   for b in content]
    rest = {k: v for k, v in msg.items() if k not in ("content", "cache_control")}
    return (msg.get("role"), orjson.dumps([content, rest], option=orjson.OPT_SORT_KEYS, default=str))


_ANSWER = ("assistant", None)  # a conversation's answer from a response (`_Call.known`)


class _Call:
    """A call's messages as `_Unwrap._goes_on` compares them with what a conversation knows: its
    first message and its last two. Only those are compared — of a long history sent again with
    every call, not every message of every call (the `_key` of each was a fifth of an API log's
    index pass) — and an equal message is the same without its `_key`."""

    __slots__ = ("msgs", "keys")

    def __init__(self, msgs: list):
        self.msgs, self.keys = msgs, {}

    def __len__(self) -> int:
        return len(self.msgs)

    def key(self, i: int) -> tuple:
        got = self.keys.get(i)
        if got is None:
            got = self.keys[i] = _key(self.msgs[i])
        return got

    def same(self, i: int, known: list) -> bool:
        """Whether message i is the one a conversation knew (`known`: [message, its key once
        made]; an answer shown from a response stands for the assistant message that repeats it)."""
        if known[0] is _ANSWER:
            return self.key(i)[0] == "assistant"
        msg = self.msgs[i]
        if msg is known[0] or msg == known[0]:
            return True
        if known[1] is None:
            known[1] = _key(known[0])
        return known[1] == self.key(i)

    def known(self, answered: bool) -> dict:
        """What a conversation keeps of these messages (and of the answer to them, when the
        response gave one): how many, and the ones `same` is asked about — the first, the last two."""
        n = len(self.msgs) + answered
        at = {i: [_ANSWER if i == len(self.msgs) else self.msgs[i], self.keys.get(i)]
              for i in (0, *range(max(1, n - 2), n)) if i < n}
        return {"n": n, "at": at}


def _call_ids(msg: dict) -> list[str]:
    out = []
    for c in msg.get("tool_calls") or () if isinstance(msg.get("tool_calls"), list) else ():
        if isinstance(c, dict) and isinstance(c.get("id"), str):
            out.append(c["id"])
    if isinstance(msg.get("tool_call_id"), str):
        out.append(msg["tool_call_id"])
    content = msg.get("content")
    for b in content if isinstance(content, list) else ():
        if isinstance(b, dict):
            for k in ("id", "tool_use_id"):
                if b.get("type") in ("tool_use", "tool_result", "server_tool_use") and isinstance(b.get(k), str):
                    out.append(b[k])
    return out


def _response_ids(body: Any, fl: str) -> list[str]:
    if not isinstance(body, dict):
        return []
    if fl == "anthropic":
        return _call_ids({"content": body.get("content")})
    out = []
    for choice in body.get("choices") or () if isinstance(body.get("choices"), list) else ():
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            out += _call_ids(choice["message"])
    return out


# --- streamed responses ------------------------------------------------------------------------

def sse_message(raw: str, fl: str) -> dict | None:
    """A response kept as its server-sent events, put back together: the Anthropic message
    (`message_start` … `message_delta`), or an OpenAI chat completion from its chunks; an `error`
    event as `{"error": …}`. None when the text holds no event."""
    events = []
    for line in raw.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data and data != "[DONE]":
                value = _decode(data)
                if isinstance(value, dict):
                    events.append(value)
    if not events:
        return None
    if fl == "anthropic" or any(e.get("type") == "message_start" for e in events[:3]):
        return _anthropic_stream(events)
    return _openai_stream(events)


def _anthropic_stream(events: list) -> dict:
    message: dict = {"role": "assistant", "content": []}
    blocks: dict[int, dict] = {}
    partial: dict[int, str] = {}
    for e in events:
        t = e.get("type")
        if t == "message_start" and isinstance(e.get("message"), dict):
            message = {**e["message"], "content": list(e["message"].get("content") or [])}
        elif t == "content_block_start" and isinstance(e.get("content_block"), dict):
            blocks[e.get("index", len(blocks))] = dict(e["content_block"])
        elif t == "content_block_delta" and isinstance(e.get("delta"), dict):
            b = blocks.setdefault(e.get("index", 0), {"type": "text", "text": ""})
            d = e["delta"]
            dt = d.get("type")
            if dt == "text_delta":
                b["text"] = (b.get("text") or "") + as_text(d.get("text"))
            elif dt == "thinking_delta":
                b["thinking"] = (b.get("thinking") or "") + as_text(d.get("thinking"))
            elif dt == "signature_delta":
                b["signature"] = as_text(d.get("signature"))
            elif dt == "input_json_delta":
                partial[e.get("index", 0)] = partial.get(e.get("index", 0), "") + as_text(d.get("partial_json"))
            elif dt == "citations_delta" and isinstance(d.get("citation"), dict):
                b.setdefault("citations", []).append(d["citation"])
        elif t == "message_delta":
            delta = e.get("delta") if isinstance(e.get("delta"), dict) else {}
            message.update({k: v for k, v in delta.items() if v is not None})
            if isinstance(e.get("usage"), dict):
                message["usage"] = {**(message.get("usage") or {}), **e["usage"]}
        elif t == "error":
            message["error"] = e.get("error") or e
    for i, text in partial.items():
        parsed = _decode(text) if text.strip() else {}
        if i in blocks:
            blocks[i]["input"] = parsed if not isinstance(parsed, reader.BadLine) else text
    message["content"] = message.get("content", []) + [blocks[i] for i in sorted(blocks)]
    return message


def _openai_stream(events: list) -> dict:
    out: dict = {}
    text, reasoning = [], []
    calls: dict[int, dict] = {}
    finish = None
    for e in events:
        if e.get("error"):
            out["error"] = e["error"]
        for k in ("id", "model", "created", "system_fingerprint"):
            if k in e and k not in out:
                out[k] = e[k]
        if isinstance(e.get("usage"), dict):
            out["usage"] = e["usage"]
        for choice in e.get("choices") or () if isinstance(e.get("choices"), list) else ():
            d = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(d, dict):
                continue
            finish = choice.get("finish_reason") or finish
            if isinstance(d.get("content"), str):
                text.append(d["content"])
            if isinstance(d.get("reasoning_content"), str):
                reasoning.append(d["reasoning_content"])
            for tc in d.get("tool_calls") or () if isinstance(d.get("tool_calls"), list) else ():
                if not isinstance(tc, dict):
                    continue
                c = calls.setdefault(tc.get("index", len(calls)), {"id": "", "type": "function",
                                                                    "function": {"name": "", "arguments": ""}})
                if tc.get("id"):
                    c["id"] = tc["id"]
                fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                c["function"]["name"] += as_text(fn.get("name") or "")
                c["function"]["arguments"] += as_text(fn.get("arguments") or "")
    message: dict = {"role": "assistant", "content": "".join(text)}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    out["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    return out


# --- events ------------------------------------------------------------------------------------

def event(rec: Wrapped, ref: Ref, mapper, name: str) -> Event:
    """The Event of a record read out of a wrapper. `mapper(message, ref)` maps one message of the
    format whose adapter reads the file (`name`); a message or reply of the other API's (an API
    call log of a proxy that both Anthropic and OpenAI calls go through) is mapped by that API's
    adapter, so that its calls are call cards paired with their results, not data blocks."""
    w, info = rec.what, rec.info
    if w in ("message", "reply"):
        mapper = _mapper(info.get("flavor"), mapper, name)
    if w == "section":
        ev = Event(ref, "system", "section", format=name, blocks=[Notice(info["label"])])
        tools = info.get("tools")
        if tools:
            n = len(tools) if isinstance(tools, list) else None
            ev.blocks.append(Data(tools, f"tool definitions ({n})" if n else "tool definitions"))
        shown = {k: v for k, v in rec.items() if k not in ("tools", "functions")}
        if shown:
            ev.blocks.append(Data(shown, "details"))
        if info.get("ident"):
            ev.source_id = info["ident"]
        ev.meta = dict(rec)
        _when(ev, rec.get("request.timestamp"), rec.get("created_at"))
        return ev
    if w == "message":
        msg = info.get("message", dict(rec))
        ev = mapper(msg, ref)
        if info.get("label"):
            ev.blocks.insert(0, Notice(info["label"]))
        if info.get("probe") and ev.role == "user":
            ev.kind = "probe"  # not a prompt of the person's: never the title, not a turn
            ev.blocks.insert(0, Notice("a probe call (max_tokens 1)"))
        _when(ev, info.get("time"))
    elif w == "reply":
        ev = _reply(rec, ref, mapper, name)
    elif w == "error":
        ev = Event(ref, "error", "error", format=name,
                   blocks=[Notice(info["head"]), Text(info["text"] or "(no message)", markdown=False)])
        ev.meta = dict(rec)
        _when(ev, info.get("ended"), info.get("started"))
        return ev
    else:
        ev = Event(ref, "system", "notice", format=name, blocks=[Notice(info.get("text") or "")])
        ev.meta = dict(rec)
        _when(ev, info.get("time"))
        return ev
    renamed = info.get("renamed")
    if renamed:
        for b in ev.blocks:
            if b.kind == "tool_use" and b.id in renamed:
                b.id = renamed[b.id]
            elif b.kind == "tool_result" and b.tool_use_id in renamed:
                b.tool_use_id = renamed[b.tool_use_id]
    return ev


def _mapper(fl: str | None, own, name: str):
    """The message mapper of flavor `fl`: the file's own (`own`, of adapter `name`), or the other
    API's adapter's, whose events still say they are of this file's format."""
    if fl is None or fl == ("anthropic" if name == "anthropic-messages" else "openai"):
        return own
    from . import anthropic_messages, openai_chat  # (they import this module)

    other = anthropic_messages.event if fl == "anthropic" else openai_chat.event

    def mapped(msg, ref):
        ev = other(msg, ref)
        ev.format = name
        return ev

    return mapped


def _reply(rec: Wrapped, ref: Ref, mapper, name: str) -> Event:
    info = rec.info
    body = info["body"]
    if info["flavor"] == "anthropic":
        msg = {k: v for k, v in body.items() if k not in ("type",)}
        msg.setdefault("role", "assistant")
        ev = mapper(msg, ref)
        usage = body.get("usage")
        # (the mapper may have said it already)
        stop = stop_notice(body.get("stop_reason"), body.get("stop_details"))
        if stop and not any(b.kind == "notice" and b.text == stop.text for b in ev.blocks):
            ev.blocks.append(stop)
    elif isinstance(body.get("output"), list):  # a Responses API response: its output items
        ev = Event(ref, "assistant", format=name)
        for item in body["output"]:
            ev.blocks += mapper(dict(item) if isinstance(item, dict) else {"value": item}, ref).blocks
        if body.get("status") == "incomplete":  # cut off (max_output_tokens, content_filter)
            details = body.get("incomplete_details")
            why = details.get("reason") if isinstance(details, dict) else None
            ev.blocks.append(Notice(f"response incomplete: {as_text(why)}" if why
                                    else "response incomplete"))
        usage = body.get("usage")
    else:
        choices = body.get("choices") if isinstance(body.get("choices"), list) else []
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        msg = first.get("message") if isinstance(first.get("message"), dict) else \
            {"role": "assistant", "content": first.get("text")}
        ev = mapper(dict(msg), ref)
        for extra in choices[1:]:
            if isinstance(extra, dict) and isinstance(extra.get("message"), dict):
                ev.blocks.append(Notice(f"choice {as_text(extra.get('index'))}"))
                ev.blocks += mapper(dict(extra["message"]), ref).blocks
        reason = first.get("finish_reason")
        if reason not in (None, "stop", "tool_calls", "function_call"):
            ev.blocks.append(Notice(f"finish reason: {as_text(reason)}"))
        usage = body.get("usage")
    model_and_usage(ev, body.get("model"), usage, info.get("cost"))
    if isinstance(body.get("id"), str) and body["id"]:
        ev.source_id = body["id"]
    call, started, ended = info.get("call"), info.get("started"), info.get("ended")
    if call is not None:
        words = [f"{info.get('noun') or 'API call'} {call}".rstrip()]
        if info.get("status") not in (None, 200):
            words.append(f"status {info['status']}")
        a, b = to_epoch(started), to_epoch(ended)
        if a is not None and b is not None and b >= a:
            words.append(f"{b - a:.1f} s")
        ev.blocks.insert(0, Notice(" · ".join(words)))
    if info.get("answered"):
        ev.states = {**(ev.states or {}), "*": ANSWERED}
        # (when the request carrying their outputs was sent: not when this response completed)
        ev.answered_at = to_epoch(started)
    _when(ev, ended, started, info.get("logged_at"))
    ev.meta = {**ev.meta, "response": dict(rec)} if ev.meta is not None else {"response": dict(rec)}
    return ev


def _when(ev: Event, *candidates: Any) -> None:
    """The wrapper's time for an event its message gave none."""
    if ev.timestamp is None:
        first_time(ev, *candidates)
