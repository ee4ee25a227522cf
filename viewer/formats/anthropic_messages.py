"""Anthropic Messages lists: `MessageParam[]`, i.e. `[{role: user|assistant, content}, ...]`.

A generic adapter like openai-chat, and the two look alike (`{role, content}`), so `sniff` tells them
apart by what only Anthropic writes: content block lists with `tool_use` / `tool_result` /
`thinking` / `redacted_thinking` / server-tool blocks score 2, a plain text message 1, and anything
with OpenAI's `tool_calls` / `tool_call_id` / a `tool` role 0. Records carrying fields of a more
specific format (AgentScope's `name` + `metadata`, MARSYS, agentpress rows…) score at most 1.

Shapes read: a bare JSON array, JSONL with one message per line, or `{"messages": [...]}` with an
optional `system` (a string or text blocks) beside it, shown first. `system` beside `messages` is
the Anthropic request shape and worth a detection bonus, so plain messages with it are not read as
openai-chat. Content goes through `common.anthropic_blocks`: text, thinking (with signature),
redacted_thinking, tool_use / tool_result, image / document, server tool blocks (`server_tool_use`,
`*_tool_result`: code execution's stdout / stderr / exit code, its file editor's edits and
creations in words, web search results, fetched and plain-text documents, search_result blocks, all
as text; an MCP connector's call named `mcp__<server>__<tool>`), and an answer cut at its citations
read as one text followed by the sources it cites. A stored reply's refusal says its category and
explanation (`stop_details`).

Conversations kept inside wrappers — Message Batches requests and results, claude-trace logs and
other logged calls to `/v1/messages`, Anthropic fine-tuning lines — are read by `wrapped` (one
section per conversation, an API log's repeated history shown once).

Cline's `api_conversation_history.json` (and its forks') quirks:
* assistant messages carry `modelInfo` (`modelId`, `providerId`, `mode`) and `metrics`
  (`tokens: {prompt, completion, cached}`, `cost`) → model and usage; `ts` when present → time;
* thinking blocks carry `summary` (used when the thinking text itself is empty), text / tool_use
  blocks carry `call_id` and `reasoning_details` (raw view only);
* the results of `tool_use` calls come back as plain text blocks in the next user message, headed
  `[read_file for 'x'] Result:` or `[attempt_completion] Result:` (the body either follows in the
  same block or, in older versions, in the blocks after it). In document mode `records(doc)` pairs
  each header with the preceding message's pending call of that name (of several parallel calls of one tool, the one whose arguments hold the header's `for 'x'`), so the text becomes a
  ToolResult for that call id (a final `attempt_completion` that nothing follows is the task's
  end: completed, a notice says so); Cline's error texts (`The tool execution failed…`, `The user denied
  this operation…`, `{"status": "error"…}`) mark it an error. In JSONL mode, with no neighbours to
  look at, such headers stay plain text;
* a reply Cline stopped ends "[Response interrupted by user]" (or "…by API Error]"): a notice, the
  reply marked interrupted (by the user) and a call it held interrupted; a `[TASK RESUMPTION]` turn
  after a pause interrupts the calls the turn before it left without a result, and the result Cline
  writes for them ("Task was interrupted before this tool call could be completed.") is read so;
* `<environment_details>` blocks → a collapsed `environment details` Data block (sections as lists
  of lines), Cline's injected reminders (`# TODO LIST UPDATE REQUIRED`, `# task_progress
  RECOMMENDED`, `[ERROR] You did not use a tool…`) → collapsed `Cline reminder` Data blocks; the
  first prompt's `<task>…</task>` wrapper is unwrapped. The exact text stays in the raw view;
* the file keeps no timestamps, but each turn Cline sends says when in its environment details
  (`# Current Time`, Cline's local time in the machine's locale with its offset — en-US, and the
  other locales' date orders, 12-hour words and 24-hour forms where they leave no doubt — or Roo
  Code's "Current time in ISO 8601 UTC format: …"): that is the turn's time (the model's replies
  have none).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from ..model import ANSWERED, DENIED, INTERRUPTED, Data, Event, Notice, Ref, Text, ToolResult
from .common import anthropic_blocks, as_text, first_time, generic_event, model_and_usage, set_time, \
    stop_notice, text_field
from . import streamed, wrapped
from .openai_chat import Linked, prompt_title

NAME = "anthropic-messages"
MODE = "document"

_OWN_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
               "mcp_tool_use", "mcp_tool_result", "web_search_tool_result", "web_fetch_tool_result",
               "code_execution_tool_result", "container_upload", "search_result", "document"}
_OPENAI = {"tool_calls", "tool_call_id", "function_call", "reasoning_content"}
_FOREIGN = {"name", "metadata", "message_id", "timestamp", "parts", "thread_id", "is_llm_message",
            "_type", "uuid", "sessionId", "session_id", "finish_reason", "sender"}
_HEADER = re.compile(r"\[(?P<name>[A-Za-z_][\w.:-]*)(?: for '(?P<target>.*?)')?\] Result:", re.S)
_ERRORS = ("The tool execution failed", "The user denied this operation", "Missing value for "
           "required parameter", '{"status":"error"', '{"status": "error"', '{"status":"denied"',
           '{"status": "denied"', "[ERROR]")
_DENIED = ("The user denied this operation", '{"status":"denied"', '{"status": "denied"')
_REMINDERS = ("# TODO LIST UPDATE REQUIRED", "# task_progress RECOMMENDED", "[ERROR] You did not use",
              "[TASK RESUMPTION]")


def sniff(rec: Any) -> int:
    if (w := wrapped.sniff(rec, "anthropic")) is not None:
        return w  # a batch line, a logged API call, a dataset line (`wrapped`)
    if not isinstance(rec, dict) or rec.get("role") not in ("user", "assistant"):
        return 0
    if "content" not in rec or _OPENAI & rec.keys():
        return 0
    content = rec.get("content")
    if isinstance(content, dict):
        content = [content]
    own = isinstance(content, list) and any(
        isinstance(b, dict) and (text_field(b, "type") in _OWN_BLOCKS or (
            b.get("type") == "image" and isinstance(b.get("source"), dict))) for b in content)
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in (
            "image_url", "input_audio", "refusal") for b in content):
        return 0  # OpenAI content parts
    if own and not (_FOREIGN & rec.keys()):
        return 2
    return 1


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """The message list (with a document's `system` first), Cline's text results paired."""
    if (unwrapped := wrapped.records(doc, "anthropic")) is not None:
        return unwrapped
    if isinstance(doc, list):
        key, items = "", doc
    elif isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        key, items = "messages", doc["messages"]
    else:
        return None
    streaming = stream(doc, key)
    if not any(isinstance(r, dict) and "role" in r for r in items) and not streaming.head:
        return None
    return streamed.whole(streaming, key, items)


def stream(shell: Any, key: str) -> streamed.Streaming | None:
    """A big document's records one message at a time (formats/streamed.py): a request's
    `system` first, then its messages, Cline's text results paired with the calls of the answer
    before them (`_Pairing`)."""
    if key not in ("", "messages"):
        return None
    head = [("system", {"role": "system", "content": shell["system"]})] \
        if key and isinstance(shell, dict) and isinstance(shell.get("system"), (str, list)) and shell["system"] else []
    pairing = _Pairing()
    head = [pairing.take(path, rec) for path, rec in head]
    return streamed.Streaming(head, lambda i, rec: pairing.take(streamed.path_of(key, i), rec), pairing.last)


def folds_lines(records: list) -> bool:
    """JSONL whose lines are wrappers is read as one document (`wrapped`; openai_chat reads the
    lines)."""
    return wrapped.folds(records)


def document_bonus(doc: Any) -> int:
    """`system` beside `messages` is the Anthropic request shape (OpenAI puts it in the list)."""
    return 1 if isinstance(doc, dict) and isinstance(doc.get("messages"), list) and isinstance(
        doc.get("system"), (str, list)) else 0


class _Pairing:
    """Cline's text results (a user message's "[tool] Result:" headings) paired with the calls of
    the answer before them, one record at a time: what it keeps is that answer's calls."""

    def __init__(self):
        self.pending: list[tuple[str, str, Any]] = []  # (id, name, targets) of the last answer's calls
        self.prev: tuple | None = None  # the last record taken

    def take(self, path: str, rec: Any) -> tuple[str, Any]:
        self.prev = (path, rec)
        if not isinstance(rec, dict):
            return path, rec
        content = rec.get("content")
        if rec.get("role") == "assistant":
            self.pending = [(str(b.get("id") or ""), str(b.get("name") or ""), _targets(b.get("input")))
                            for b in (content if isinstance(content, list) else [])
                            if isinstance(b, dict) and b.get("type") == "tool_use"]
            return path, rec
        pending = self.pending
        if rec.get("role") != "user" or not isinstance(content, list) or not pending:
            return path, rec
        heads = {j: (m["name"], m["target"]) for j, b in enumerate(content)
                 if (m := _header(b)) is not None}
        pairs: dict = {}
        for j, (name, target) in heads.items():
            # parallel calls of one tool: the header's target ("for 'x'") names which one
            k = next((n for n, (_, pname, targets) in enumerate(pending)
                      if pname == name and target in targets), None) if target else None
            if k is None:
                k = next((n for n, (_, pname, _t) in enumerate(pending) if pname == name), None)
            if k is None and len(heads) == 1 and len(pending) == 1:
                k = 0  # one call, one result: the header names the tool differently
            if k is not None:
                pairs[j] = pending.pop(k)[0]
        if _resumed(content):  # what the reply before the pause asked for and got no answer to
            answered = {b.get("tool_use_id") for b in content if isinstance(b, dict)}
            pairs["interrupted"] = [call for call, _n, _t in pending if call not in answered]
        self.pending = []
        return (path, Linked(rec, pairs)) if pairs else (path, rec)

    def last(self) -> tuple | None:
        """The last record, once it is known to be the last: an answer whose `attempt_completion`
        nothing answered ended the task (`completed`)."""
        done = [call for call, name, _t in self.pending if name == "attempt_completion"]
        if done and self.prev is not None and isinstance(self.prev[1], dict) \
                and self.prev[1].get("role") == "assistant":
            return self.prev[0], Linked(self.prev[1], {"completed": done})
        return None


_NEVER_RAN = "Task was interrupted before this tool call could be completed"
# (no leading \s*: searched from each of a long run of blanks, it cost the run's length squared)
_CUT_OFF = re.compile(r"\[Response interrupted by (?P<why>user|API Error)\]\s*$")

# Cline's task ends with an `attempt_completion` call that nothing answers unless the user writes
# back ("[attempt_completion] Result: The user has provided feedback…"): as the last message it is
# the task's outcome, presented to the user, not a call left waiting.
_TASK_ENDED = "task completed: the result was presented and the conversation ends here"


def _targets(given: Any) -> set:
    """The string arguments of a call, one of which its result header names (`for 'x'`)."""
    return {v for v in given.values() if isinstance(v, str)} if isinstance(given, dict) else set()


def _header(b: Any) -> re.Match | None:
    if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
        return _HEADER.match(b["text"])
    return None


def event(rec: Any, ref: Ref) -> Event:
    if isinstance(rec, wrapped.Wrapped):
        return wrapped.event(rec, ref, event, NAME)
    if not isinstance(rec, dict) or not isinstance(rec.get("role"), str):
        return generic_event(rec, ref, NAME)
    role = rec["role"]
    ev = Event(ref, role, format=NAME)
    content = rec.get("content")
    if role == "user":
        ev.blocks = _user_blocks(content, getattr(rec, "links", None) or {})
        results = [b for b in ev.blocks if b.kind == "tool_result"]
        for r in results:  # what Cline (and Roo) answer for calls a resumed task never ran
            if any(b.kind == "text" and b.text.lstrip().startswith(_NEVER_RAN) for b in r.content[:1]):
                r.is_error, r.state = True, INTERRUPTED
        if results and all(b.kind in ("tool_result", "data") for b in ev.blocks):
            ev.role, ev.kind = "tool", "tool_result"
    else:
        ev.blocks = _blocks(content, markdown=role != "system")
        if role == "system" and rec.get("clear_at") == "next_user_message":
            # a system message among the messages, shown to the model for the turn it follows only
            # (anthropic-sdk-python types/beta/beta_system_message_param.py)
            ev.blocks.append(Notice("shown to the model until the next user message only"))
        for call in (getattr(rec, "links", None) or {}).get("completed", ()):
            ev.blocks.append(ToolResult(call, [Notice(_TASK_ENDED)]))
        if role == "assistant":
            _cut_off(ev)
            # a stored Message (the API's reply)
            if stop := stop_notice(rec.get("stop_reason"), rec.get("stop_details")):
                ev.blocks.append(stop)
            if rec.get("type") == "message":
                # a reply the API returned, kept whole: the request that asked for it had to carry
                # a result for every call before it, so those calls were answered, where the file
                # may not show it (a log of replies keeps no requests)
                ev.states = {**(ev.states or {}), "*": ANSWERED}
    for call in (getattr(rec, "links", None) or {}).get("interrupted", ()):
        ev.states[call] = INTERRUPTED
    _common(ev, rec)
    return ev


def _cut_off(ev: Event) -> None:
    """Cline ends a reply it stopped with "\n\n[Response interrupted by user]" (or "…by API
    Error]"), appended to whatever text had streamed: a notice instead of the words, the reply
    marked interrupted, and a call it was still writing interrupted with it."""
    for n, b in enumerate(ev.blocks):
        if b.kind != "text" or not (m := _CUT_OFF.search(b.text)):
            continue
        rest = b.text[:m.start()].rstrip()
        by_user = m["why"] == "user"
        notice = Notice("response interrupted by the user" if by_user
                        else "response interrupted by an API error")
        ev.blocks[n:n + 1] = ([Text(rest, b.markdown)] if rest else []) + [notice]
        if by_user:
            ev.state = INTERRUPTED
        for use in ev.tool_uses():
            ev.states[use.id] = INTERRUPTED
        return


def _resumed(content: list) -> bool:
    first = next((b for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
    return first is not None and isinstance(first.get("text"), str) \
        and first["text"].lstrip().startswith("[TASK RESUMPTION]")


def _blocks(content: Any, markdown: bool = True) -> list:
    out = anthropic_blocks(content, markdown=markdown)
    if isinstance(content, list):  # Cline: empty thinking with a summary
        raw_thinking = [b for b in content if isinstance(b, dict) and b.get("type") == "thinking"]
        thinking = [b for b in out if b.kind == "thinking" and not b.redacted]
        for raw, b in zip(raw_thinking, thinking):
            summary = raw.get("summary")
            if not b.text.strip() and isinstance(summary, list) and summary:
                # (a part of a kind not known, with no text: what it holds, not nothing)
                b.text = "\n\n".join(as_text(s["text"]) if isinstance(s, dict) and "text" in s
                                     else as_text(s) for s in summary)
    return out


def _user_blocks(content: Any, pairs: dict) -> list:
    if not isinstance(content, list):
        return [_prompt(b) for b in _blocks(content)]
    out = []
    j = 0
    while j < len(content):
        b = content[j]
        if j in pairs:
            call, text = pairs[j], b["text"]
            body = text[_HEADER.match(text).end():].lstrip("\n")
            result = [Text(body, markdown=False)] if body.strip() else []
            j += 1
            if not body.strip():  # older Cline: the result follows in its own blocks
                while j < len(content) and j not in pairs and _header(content[j]) is None \
                        and not _is_quiet(content[j]):
                    result += anthropic_blocks([content[j]], markdown=False)
                    j += 1
            first = next((r.text for r in result if r.kind == "text"), "")
            error = True if first.lstrip().startswith(_ERRORS) else None
            denied = error and first.lstrip().startswith(_DENIED)
            out.append(ToolResult(call, result, error, state=DENIED if denied else None))
            continue
        out += [_prompt(x) for x in _blocks([b])]
        j += 1
    return out


def _is_quiet(b: Any) -> bool:
    if not (isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)):
        return False
    t = b["text"].lstrip()
    return t.startswith("<environment_details>") or t.startswith(_REMINDERS)


def _prompt(b):
    """A user text block: environment details and reminders made quiet, `<task>` unwrapped."""
    if b.kind != "text":
        return b
    t = b.text.strip()
    if t.startswith("<environment_details>"):
        return Data(_sections(t.removeprefix("<environment_details>").removesuffix(
            "</environment_details>")), "environment details")
    if t.startswith(_REMINDERS):
        head = t.splitlines()[0].lstrip("# ").strip()
        return Data([ln.rstrip() for ln in t.splitlines() if ln.strip()], f"Cline reminder: {head}")
    if t.startswith("<task>") and t.endswith("</task>"):
        return Text(t[len("<task>"):-len("</task>")].strip(), b.markdown)
    return b


def _sections(text: str) -> dict:
    """`# Heading` sections of Cline's environment details, each as its lines."""
    out: dict = {}
    head = ""
    for ln in text.strip().splitlines():
        if ln.startswith("# "):
            head = ln[2:].strip()
            out.setdefault(head, [])
        elif ln.strip():
            out.setdefault(head or "details", []).append(ln.rstrip())
    return {k: (v[0] if len(v) == 1 else v) for k, v in out.items()}


def _common(ev: Event, rec: dict) -> None:
    info = rec.get("modelInfo") if isinstance(rec.get("modelInfo"), dict) else {}
    metrics = rec.get("metrics") if isinstance(rec.get("metrics"), dict) else {}
    usage = rec.get("usage") if isinstance(rec.get("usage"), dict) else metrics.get("tokens")
    model_and_usage(ev, rec.get("model") or info.get("modelId"), usage, metrics.get("cost"))
    first_time(ev, rec.get("ts"), rec.get("timestamp"), rec.get("created_at"), metrics.get("ts"))
    if ev.timestamp is None and ev.role in ("user", "tool"):
        _sent_at(ev)
    if isinstance(rec.get("id"), str) and rec["id"]:
        ev.source_id = rec["id"]
    ev.meta = {k: v for k, v in rec.items() if k not in ("content", "role")}


# Cline's environment details say when the turn was sent: `# Current Time` then the local time as
# `new Intl.DateTimeFormat(undefined, {year, month, day, hour, minute, second: "numeric", hour12:
# true})` writes it in the machine's locale, then `(zone, UTC+N:00)` with the zone's offset in hours
# (fractional: "UTC+5.5:00"). en-US gives `1/22/2026, 6:47:34 AM (UTC, UTC+0:00)`; other locales
# order the date otherwise, separate with `.`, `-` or `. `, name the half of the day in their own
# words ("p. m.", "nachm.", "午後", "오후") and may put it first (ko, ja, zh) or the time before the
# date (vi). `_local_time` reads those written in ASCII digits and the Gregorian calendar.
_ROO_TIME = "Current time in ISO 8601 UTC format:"
_ZONE = re.compile(r"\s*\((?P<zone>[^()]*), UTC(?P<off>[+-]?\d+(?:\.\d+)?):00\)$")
# the en-US form exactly: month first (the one common locale whose numeric date does that), never
# zero-padded — it-IT and pt-BR write `22/01/2026, 6:07:04 PM`, day first and padded
_EN_US = re.compile(r"(?:1[0-2]|[1-9])/(?:[12]\d|3[01]|[1-9])/\d{4}, \d{1,2}:\d{2}:\d{2}\s?[AP]M")
_NUMBER = re.compile(r"[0-9]+")
_SEPARATORS = re.compile(r"[\s,./:\-]+")
# what locales write for the two halves of a 12-hour day, once spaces and dots are taken out
# (lower case): en "PM", es / pt / nl / nb / ro "p. m.", de "nachm.", zh "下午", ja "午後", ko "오후",
# tr "ÖS", sv "em", vi "CH", hu "du.", fi "ip.", el "μ.μ.", uk / ru "пп", cs "odp." …
_PM = {"pm", "nachm", "下午", "午後", "오후", "ös", "em", "ch", "du", "ip", "μμ", "пп", "odp"}
_AM = {"am", "vorm", "上午", "午前", "오전", "öö", "fm", "sa", "de", "ap", "πμ", "дп", "dop"}
_CONNECTORS = {"klo", "um", "à", "at", "alle", "às", "om", "kl"}  # "22.1.2026 klo 6.07.04 ip." (fi)


def _local_time(text: str) -> datetime | None:
    """The wall-clock time a `Current Time` line's locale form says, or None when its order or half
    of the day cannot be told: six numbers (ASCII digits), the date the three holding the 4-digit
    year (year first, else day first — month first only in the en-US form, or where the numbers
    leave no doubt), the time the other three; the rest must be a known AM / PM word (12-hour, as
    Cline writes it) or nothing (a 24-hour form)."""
    numbers = list(_NUMBER.finditer(text))
    if len(numbers) != 6:
        return None
    first, second = numbers[:3], numbers[3:]
    if any(len(n[0]) == 4 for n in first):
        date, clock = first, second
    elif any(len(n[0]) == 4 for n in second):
        date, clock = second, first
    else:
        return None
    a, b, c = (int(n[0]) for n in date)
    if len(date[0][0]) == 4:
        y, mo, d = a, b, c
    elif len(date[2][0]) == 4:
        y = c
        if _EN_US.fullmatch(text) or (a <= 12 < b):
            mo, d = a, b
        else:
            d, mo = a, b
    else:
        return None
    rest = text
    for n in reversed(numbers):
        rest = rest[:n.start()] + " " + rest[n.end():]
    words = [w for w in _SEPARATORS.split(rest.lower()) if w and w not in _CONNECTORS]
    half = "".join(words)
    h, mi, sec = (int(n[0]) for n in clock)
    if half in _PM or half in _AM:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if half in _PM else 0)
    elif half:
        return None  # a word we do not know: which half of the day is not known
    if not 1970 <= y <= 2200:
        return None  # (another calendar: the Buddhist year 2569, the Persian 1404)
    try:
        return datetime(y, mo, d, h, mi, sec)
    except ValueError:
        return None


def _sent_at(ev: Event) -> None:
    """A Cline turn's time, from its environment details (the file keeps no other)."""
    for b in ev.blocks:
        lines = b.value.get("Current Time") if b.kind == "data" and b.label == "environment details" \
            and isinstance(b.value, dict) else None
        for line in [lines] if isinstance(lines, str) else lines or ():
            if isinstance(line, str) and line.startswith(_ROO_TIME):  # Roo Code writes ISO 8601
                set_time(ev, line[len(_ROO_TIME):].strip())
                return
            zone = _ZONE.search(line) if isinstance(line, str) and len(line) < 200 else None
            if zone is None:
                continue
            local = _local_time(line[:zone.start()].strip())
            try:
                offset = float(zone["off"])
            except ValueError:
                return
            if local is not None and abs(offset) <= 14:
                ev.timestamp = (local - timedelta(hours=offset)).replace(tzinfo=timezone.utc)
                ev.timestamp_raw = line.strip()
            return


def title_of(ev: Event) -> str | None:
    """The first prompt's own words: the text of a document or search result sent with it (plain
    text, not Markdown) is not the title."""
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return prompt_title("\n".join(b.text for b in ev.blocks if b.kind == "text" and b.markdown))
    return None
