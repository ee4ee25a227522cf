"""Suna / Kortix agentpress: rows of the `messages` table, one row per JSONL line (seed 000).

A row is `{message_id, thread_id, type, is_llm_message, content, metadata, agent_id,
agent_version_id, created_at, updated_at}`. A Supabase export of the table (a JSON array of rows, or
`{"data": [rows]}`) is read as a document through `records(doc)`. `content` and `metadata` are a JSON
string, an object, or (content only) a plain string; both are decoded here, never trusted to be one
shape. `is_llm_message` or `thread_id` next to `type` and `content` is what no other format writes
(sniff 3).

Rows by `type` (as kortix-ai/suna's agentpress response_processor.py, commit 1da6622b, and its
stateless pipeline's message_builder.py, commit 106d6cd9, write them; older rows too):
* `user` / `system` / `assistant`: `content` is an LLM message `{role, content, tool_calls}`, its
  `content` a string or a list of (Anthropic-style) text blocks. Native `tool_calls` carry
  JSON-string `arguments` (parsed for display; kept raw when they do not parse). Assistant text with
  Suna's XML tool calling (`<function_calls><invoke name=…><parameter name=…>`) becomes ToolUse
  blocks. Newer rows list those calls, with the ids their tool rows name
  (`xml_tool_index<N>_<message id or uuid>`), in `metadata.tool_calls` (`source: "xml"`): the
  N-th invoke takes the N-th id. Older rows recorded none, so an id is derived from the row's
  message_id, the function name and its parameters, which the tool row's `parsing_details` (or
  `tool_execution.arguments`) repeat. A non-streamed response (process_non_streaming_response)
  records none either: its calls were parsed before the row existed, given random ids
  (`xml_tool_index<N>_<uuid4>`), and left out of `metadata.tool_calls` for having ids. Its tool
  rows name those ids and the assistant row (`metadata.assistant_message_id`): such a result is
  paired with the N-th call of that row (`ToolResult.alt` / `ToolUse.alt`, the map's aliases).
  `reasoning_content` (in the message, or in the stateless pipeline's
  `metadata.reasoning_content`) → Thinking.
* a message whose content blocks carry `cache_control` is a cached block: earlier history flattened
  to text (`User: … Assistant: … Tool: {…}`). It becomes one collapsed `Cached` block (kind
  `cached`), never read as tool results or as a prompt.
* `metadata.compressed`: the context manager sent the model a shortened text (`compressed_content`).
  A notice says so; the row's own content is shown, and the compressed text sits in a collapsed
  block when it differs (when the row kept only the shortened text, the notice says that instead).
* `tool`: native `{role: tool, tool_call_id, name, content}` (id also in `metadata.tool_call_id`),
  or for an XML call `{role: user, content}` with the id only in `metadata.tool_call_id` →
  ToolResult; `metadata.result {success, output, error}`: `success: false` an error, whose `error`
  text is shown when the content does not hold it (a failed stateless call's content is "");
  `metadata.internal` / `hidden_from_user` (Suna's UI hides those) → hidden. The structured
  `{"tool_execution": {function_name, xml_tag_name, tool_call_id, arguments, result: {success,
  output, error}}}` (the LLM copy, in the message's content string) → ToolResult, `success: false`
  an error; the old `<tool_result><tag> ToolResult(success=…, output=…) </tag></tool_result>` text
  names no call, so it is shown as tool output with its success stated, not as an (orphan) result.
  `ToolResult(success=False` text is an error too, and so, where no `success` is recorded, is a
  result that is an error report (`common.error_content`).
* `status`: `{status_type: thread_run_start | thread_run_end | assistant_response_start | finish |
  tool_started | tool_completed | tool_failed | tool_error | terminating_tool_completed | error,
  …}` → hidden status events with a readable notice (a tool error's `error` / `message` in it);
  `tool_started` with a `tool_call_id` marks that call running, `tool_failed` / `tool_error` marks
  it failed (the native result row before it, `{role: tool, content: str(output)}`, records no
  success in older rows); a `tool_error` row with its reason stays visible (the tool raised and
  no result row follows). `error` (`{status_type, error}`, older `message`) stays visible, its
  text shown.
* `llm_response_start` (one per model call: its id, model, auto-continue count) → hidden.
  `llm_response_end` / `assistant_response_end`: the serialised model response → hidden, with its
  model and usage.
* `image_context`: an image a tool put into the model's context (load_image, a computer
  screenshot): a user message with an image part, or older `{base64, mime_type, file_path}` →
  visible tool output with the image.
* `summary` → a visible system summary; `browser_state`, `cost` and stream chunk rows
  (`metadata.stream_status` chunk / tool_call_chunk / reasoning_chunk, e.g. a `reasoning` row)
  → hidden; a `reasoning` row that is no chunk → Thinking; any other type → a quiet card.

Kept only in the raw view: `metadata.frontend_content`, `parsing_details`, `thread_run_id`,
`linked_tool_result_message_id`, `text_content`, `agent_id` / `agent_version_id`,
`created_by_user_id`, `sequence`, `updated_at` (all in `Event.meta`).
A call still open when its run ends (`thread_run_end`) or the next run starts (`thread_run_start`)
is interrupted: a run saves every call's result before it ends.
Known gaps: XML calls repeated with identical parameters in one older row (no recorded ids) share
one derived id; a non-streamed response runs all its tools before it saves any row of them (then
`tool_started`, the result and `tool_completed` for each, in a burst), so while its tools run its
calls show pending, not executing, and a run killed then (no end row, no next run) leaves them
pending until the thread goes on or the session has ended ("never answered").
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

from ..model import Cached, Data, Event, Notice, Ref, Text, Thinking, ToolResult, ToolUse
from .common import as_text, error_content, generic_event, loads, media_block, \
    openai_tool_calls, result_content, set_time, text_field
from .openai_chat import content_blocks, prompt_title, thinking_blocks

NAME = "agentpress"
MODE = "jsonl"

_MESSAGES = {"user", "assistant", "system"}
_RESPONSE_END = {"llm_response_end", "assistant_response_end"}
_QUIET_TYPES = {"browser_state", "cost"}
_CHUNKS = ("chunk", "tool_call_chunk", "reasoning_chunk")
_STATUS_WORDS = {
    "thread_run_start": "run started",
    "thread_run_end": "run ended",
    "assistant_response_start": "response started",
    "assistant_response_end": "response ended",
}
_FUNCTION_CALLS = re.compile(r"<function_calls>(.*?)(?:</function_calls>|\Z)", re.S)
_INVOKE = re.compile(r"<invoke\s+name=\"([^\"]+)\"\s*>(.*?)(?:</invoke>|\Z)", re.S)
_PARAM = re.compile(r"<parameter\s+name=\"([^\"]+)\"\s*>(.*?)</parameter>", re.S)
_XML_ID = re.compile(r"xml_tool_index(\d+)_(.+)", re.S)
_OLD_RESULT = re.compile(r"^\s*<tool_result>\s*<([\w-]+)>\s*(.*?)\s*</\1>\s*</tool_result>\s*$", re.S)


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict) or not isinstance(rec.get("type"), str) or "content" not in rec:
        return 0
    if "is_llm_message" in rec:
        return 3
    if "thread_id" in rec and ("message_id" in rec or "created_at" in rec):
        return 3
    if text_field(rec, "type") in _RESPONSE_END:
        return 2
    if rec["type"] == "status":
        content = _decode(rec["content"])
        return 2 if isinstance(content, dict) and "status_type" in content else 0
    return 0


def _is_row(r: Any) -> bool:
    return isinstance(r, dict) and isinstance(r.get("type"), str) and "content" in r and (
        "is_llm_message" in r or "thread_id" in r or "message_id" in r)


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """A Supabase export: the rows as a JSON array, or under `data` / `messages` / `rows`."""
    if isinstance(doc, list) and any(_is_row(r) for r in doc[:50]):
        return [(f"[{i}]", r) for i, r in enumerate(doc)]
    if isinstance(doc, dict):
        for key in ("data", "messages", "rows"):
            rows = doc.get(key)
            if isinstance(rows, list) and any(_is_row(r) for r in rows[:50]):
                return [(f"{key}[{i}]", r) for i, r in enumerate(rows)]
    return None


def _decode(value: Any) -> Any:
    """A JSON string holding an object or array, decoded; anything else as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            parsed = loads(value)
        except orjson.JSONDecodeError:
            return value
        if isinstance(parsed, (dict, list)):
            return parsed
    return value


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
        return generic_event(rec, ref, NAME)
    t = rec["type"]
    content = _decode(rec.get("content"))
    md = _decode(rec.get("metadata"))
    md = md if isinstance(md, dict) else {}
    mid = rec.get("message_id") if isinstance(rec.get("message_id"), str) else None
    if md.get("stream_status") in _CHUNKS:
        ev = Event(ref, "assistant" if t == "reasoning" else t, kind="stream", hidden=True,
                   hidden_reason="stream chunk",
                   blocks=[Notice(f"stream {md['stream_status'].replace('_', ' ')}"),
                           Data(content, "content")])
    elif t in _MESSAGES:
        ev = _message(t, content, md, mid, ref)
    elif t == "tool":
        ev = _tool(content, md, ref)
    elif t == "status":
        ev = _status(content, md, ref)
    elif t in _RESPONSE_END:
        ev = _response_end(t, content, ref)
    elif t == "llm_response_start":
        c = content if isinstance(content, dict) else {}
        model = c.get("model") if isinstance(c.get("model"), str) else None
        ev = Event(ref, "status", kind=t, hidden=True, hidden_reason="model response",
                   blocks=[Notice(f"model call started{' · ' + model if model else ''}", content)])
    elif t == "summary":
        msg = content if isinstance(content, dict) else {"content": content}
        ev = Event(ref, "system", kind="summary",
                   blocks=[Notice("summary of the earlier conversation"),
                           *content_blocks(msg.get("content"))])
    elif t == "reasoning":
        c = content if isinstance(content, dict) else {"reasoning_content": content}
        text = c.get("reasoning_content")
        ev = Event(ref, "assistant", kind="thinking",
                   blocks=[Thinking(text if isinstance(text, str) else as_text(text))])
    elif t == "image_context":
        ev = _image_context(content, md, ref)
    elif t in _QUIET_TYPES:
        ev = Event(ref, "system", kind=t, hidden=True, hidden_reason="bookkeeping",
                   blocks=[Notice(t.replace("_", " ")), Data(content, t)])
    else:  # a row type not known here: its content, and its metadata (a newer type's payload
        # may be all there); with neither, the row
        ev = Event(ref, t, kind=t, blocks=[Data(content, t)] if content not in (None, "", {}, []) else [])
        if md:
            ev.blocks.append(Data(md, f"{t} · metadata"))
        if not ev.blocks:
            ev.blocks = [Data(rec, t)]
    ev.format = NAME
    ev.source_id = mid
    set_time(ev, rec.get("created_at"))
    ev.meta = {k: v for k, v in rec.items() if k != "content"}
    if md or "metadata" in rec:
        ev.meta["metadata"] = md or rec.get("metadata")
    return ev


# --- messages ------------------------------------------------------------------------------------


def _message(t: str, content: Any, md: dict, mid: str | None, ref: Ref) -> Event:
    msg = content if isinstance(content, dict) and ("content" in content or "role" in content
                                                     or "tool_calls" in content) else None
    body = msg.get("content") if msg is not None else content
    ev = Event(ref, t)
    if isinstance(body, list) and any(isinstance(b, dict) and b.get("cache_control") for b in body):
        ev.kind = "cached"
        # (a block with no text, of a type not known here, by what it holds)
        ev.blocks = [Cached("\n\n".join(b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str)
                                        else as_text(b.get("content", b) if isinstance(b, dict) else b)
                                        for b in body))]
        return ev
    if msg is None and isinstance(content, (dict, list)) and not isinstance(body, list):
        ev.blocks = [Data(content, "content")]
        return ev
    if t == "assistant" and msg is not None:
        ev.blocks += thinking_blocks(msg)
    if t == "assistant" and isinstance(md.get("reasoning_content"), str) \
            and md["reasoning_content"].strip() and not any(b.kind == "thinking" for b in ev.blocks):
        ev.blocks.append(Thinking(md["reasoning_content"]))  # the stateless pipeline keeps it here
    if t == "assistant" and isinstance(body, str) and "<function_calls>" in body:
        ev.blocks += _xml_calls(body, mid, _xml_ids(md))
    else:
        ev.blocks += content_blocks(body, markdown=t != "system")
    if msg is not None:
        ev.blocks += openai_tool_calls(msg.get("tool_calls"))
    if md.get("compressed"):
        ev.blocks = [*_compression(body, md), *ev.blocks]
    return ev


def _compression(body: Any, md: dict) -> list:
    short = md.get("compressed_content")
    full = body if isinstance(body, str) else as_text(body)
    if not isinstance(short, str):
        return [Notice("compressed for the model (the shortened text was not kept)")]
    if short == full or not full:
        return [Notice("stored compressed: only the shortened text the model saw was kept")]
    return [Notice(f"compressed for the model: it saw {len(short):,} of {len(full):,} characters"),
            Data(short, "what the model saw (compressed_content)")]


def _xml_ids(md: dict) -> list[str]:
    """The ids Suna gave this row's XML calls, in order: newer rows list every call in
    `metadata.tool_calls` (`{tool_call_id, function_name, arguments, source: "xml"}`), and their
    tool rows name those ids (`xml_tool_index<N>_<message id or uuid>`)."""
    calls = md.get("tool_calls") if isinstance(md.get("tool_calls"), list) else []
    return [c["tool_call_id"] for c in calls if isinstance(c, dict) and c.get("source") == "xml"
            and isinstance(c.get("tool_call_id"), str) and c["tool_call_id"]]


def _xml_calls(text: str, mid: str | None, ids: list[str] | None = None) -> list:
    """Assistant text with `<function_calls>` blocks: prose as Text, each `<invoke>` a ToolUse —
    its id the one the row's metadata recorded for it, else one derived from the row."""
    out: list = []
    pos = 0
    n = 0
    for fc in _FUNCTION_CALLS.finditer(text):
        before = text[pos:fc.start()]
        if before.strip():
            out.append(Text(before.strip()))
        for inv in _INVOKE.finditer(fc.group(1)):
            params = {m.group(1): m.group(2).strip() for m in _PARAM.finditer(inv.group(2))}
            if ids and n < len(ids):
                out.append(ToolUse(ids[n], inv.group(1), params))
            else:  # no id kept: its place is what a non-streamed response's results name
                out.append(ToolUse(xml_call_id(mid, inv.group(1), params), inv.group(1), params,
                                   alt=_place(n, mid) if mid else None))
            n += 1
        pos = fc.end()
    if text[pos:].strip():
        out.append(Text(text[pos:].strip()))
    return out


def _place(n: int, mid: str) -> str:
    """The N-th XML call of assistant row `mid`, as the id Suna would give it had it kept one."""
    return f"xml_tool_index{n}_{mid}"


def _alt(call: Any, md: dict) -> str | None:
    """The place of the call an XML tool row answers: a non-streamed response keeps no ids in its
    assistant row, and its calls' ids (`xml_tool_index<N>_<uuid4>`, the N-th call of the row) are
    random; the row names the assistant row (`metadata.assistant_message_id`), so the N-th call of
    that row is its call. Whether that row kept the id is unknown here: the id is tried first."""
    mid = md.get("assistant_message_id")
    if not isinstance(call, str) or not isinstance(mid, str) or not mid:
        return None
    m = _XML_ID.fullmatch(call)
    if m is None or m.group(2) == mid:
        return None  # not an XML call's id, or already the one its place gives
    return _place(int(m.group(1)), mid)


def xml_call_id(mid: str | None, name: str, params: Any) -> str:
    """An id for an XML tool call, which has none: its assistant row, function and parameters."""
    flat = {str(k): v.strip() if isinstance(v, str) else as_text(v).strip()
            for k, v in (params.items() if isinstance(params, dict) else [])}
    digest = hashlib.sha1(orjson.dumps(flat, option=orjson.OPT_SORT_KEYS)).hexdigest()[:10]
    return f"{mid or 'xml'}:{name}:{digest}"


# --- tool results --------------------------------------------------------------------------------


def _tool(content: Any, md: dict, ref: Ref) -> Event:
    ev = Event(ref, "tool", kind="tool_result")
    msg = content if isinstance(content, dict) else {"content": content}
    raw = msg.get("content")
    inner = _decode(raw)
    call = msg.get("tool_call_id") or md.get("tool_call_id")
    if isinstance(inner, dict) and isinstance(inner.get("tool_execution"), dict):
        ev.blocks = [_execution(inner["tool_execution"], md, call)]
        return ev
    if isinstance(inner, str) and (m := _OLD_RESULT.match(inner)) and not call:
        ok = "ToolResult(success=False" not in m.group(2)
        ev.kind = "tool_output"
        ev.blocks = [Notice(f"{m.group(1)} {'succeeded' if ok else 'failed'} (no call id recorded)"),
                     Text(m.group(2), markdown=False)]
        if not ok:
            ev.role = "error"
        return ev
    if not call:
        ev.kind = "tool_output"
        ev.blocks = [Notice("tool output (no call id recorded)"), *result_content(raw)]
        return ev
    error = None
    result = md.get("result") if isinstance(md.get("result"), dict) else {}
    if result.get("success") is False or md.get("success") is False or (
            isinstance(inner, str) and inner.lstrip().startswith("ToolResult(success=False")):
        error = True
    elif "success" not in result and "success" not in md and error_content(raw):
        error = True  # no success recorded: a result that is an error report is one
    blocks = result_content(raw)
    why = result.get("error")
    if why and as_text(why).strip() and as_text(why).strip() not in as_text(raw):
        blocks.append(Text(as_text(why), markdown=False))  # a failure whose output is empty
    ev.blocks = [ToolResult(str(call), blocks, error, alt=_alt(call, md))]
    if md.get("hidden_from_user") or md.get("internal"):
        ev.hidden, ev.hidden_reason = True, "internal tool result"  # Suna's UI hides it too
    return ev


def _execution(te: dict, md: dict, call: Any) -> ToolResult:
    """The structured `tool_execution` result (XML or native call)."""
    name = str(te.get("function_name") or te.get("xml_tag_name") or "?")
    call = te.get("tool_call_id") or call
    if not call:
        pd = md.get("parsing_details") if isinstance(md.get("parsing_details"), dict) else {}
        params = pd.get("raw_parameters") if isinstance(pd.get("raw_parameters"), dict) \
            else te.get("arguments")
        mid = md.get("assistant_message_id")
        call = xml_call_id(mid if isinstance(mid, str) else None, name, params)
    res = te.get("result") if isinstance(te.get("result"), dict) else {}
    output = res.get("output")
    blocks = result_content(output if isinstance(output, (str, list)) or output is None
                            else as_text(output))
    if res.get("error"):
        blocks.append(Text(as_text(res["error"]), markdown=False))
    return ToolResult(str(call), blocks, True if res.get("success") is False else None)


# --- status and bookkeeping ----------------------------------------------------------------------


def _status(content: Any, md: dict, ref: Ref) -> Event:
    c = content if isinstance(content, dict) else {"message": content}
    st = str(c.get("status_type") or c.get("status") or "status")
    tool = c.get("xml_tag_name") or c.get("function_name") or "tool"
    if st in _STATUS_WORDS:
        words = _STATUS_WORDS[st]
    elif st == "finish":
        words = f"finished ({c.get('finish_reason') or 'no reason given'})"
    elif st.startswith("tool_"):
        words = f"{tool} {st[len('tool_'):].replace('_', ' ')}"
        why = c.get("message") or c.get("error")
        if st in ("tool_error", "tool_failed") and why:
            words += f": {as_text(why)}"
    elif st == "terminating_tool_completed":
        words = f"{tool} completed: the agent stops"
    else:
        words = as_text(c.get("message") or c.get("error")) or st.replace("_", " ")
    ev = Event(ref, "status", kind=f"status:{st}", blocks=[Notice(words, c)])
    if st == "error":
        ev.role = "error"
        return ev
    if st in ("thread_run_end", "thread_run_start"):
        # a run writes every call's result before it ends (a non-streamed response runs all its
        # tools first, then saves started / result / completed for each): a call still open when
        # its run ends, or when the next run starts, was cut off and will get none
        ev.states["*"] = "interrupted"
    call = c.get("tool_call_id")
    # a tool that raised leaves no result row: its tool_error row is the only word of why, so it
    # stays on the page (as a status line, not a second error: the call already counts as failed)
    if not (st == "tool_error" and (c.get("error") or c.get("message"))):
        ev.hidden, ev.hidden_reason = True, "status"
    if st == "tool_started" and isinstance(call, str) and call:
        ev.running.append(call)
    elif st in ("tool_failed", "tool_error") and isinstance(call, str) and call:
        ev.states[call] = "failed"  # a native result row has no success flag: this says it
    return ev


def _image_context(content: Any, md: dict, ref: Ref) -> Event:
    """An image a tool put into the model's context (load_image, a computer screenshot): a user
    message with an image part (`_image_context_data.message_content`), or in older rows
    `{base64, mime_type, file_path}`. Shown as the tool output it is."""
    c = content if isinstance(content, dict) else {}
    path = md.get("file_path") or c.get("file_path")
    what = md.get("kind")  # computer_screenshot
    words = "image put into the model's context"
    if isinstance(path, str) and path:
        words += f": {path}"
    elif isinstance(what, str) and what:
        words += f" ({what.replace('_', ' ')})"
    ev = Event(ref, "tool", kind="tool_output", blocks=[Notice(words)])
    if isinstance(c.get("base64"), str):
        ev.blocks.append(media_block({"data": c["base64"], "mime_type": c.get("mime_type"),
                                      "name": path if isinstance(path, str) else None}, "image"))
    elif "content" in c:
        ev.blocks += content_blocks(c.get("content"), markdown=False)
    elif content is not None:
        ev.blocks.append(Data(content, "image_context"))
    return ev


def _response_end(t: str, content: Any, ref: Ref) -> Event:
    c = content if isinstance(content, dict) else {}
    usage = c.get("usage") if isinstance(c.get("usage"), dict) else None
    choices = c.get("choices") if isinstance(c.get("choices"), list) else []
    finish = c.get("finish_reason") or next(
        (ch.get("finish_reason") for ch in choices if isinstance(ch, dict)), None)
    parts = ["model response"]
    if isinstance(c.get("model"), str):
        parts.append(c["model"])
    if usage and isinstance(usage.get("total_tokens"), int):
        parts.append(f"{usage['total_tokens']:,} tokens")
    if finish:
        parts.append(f"finish: {finish}")
    if isinstance(c.get("response_ms"), (int, float)):
        parts.append(f"{c['response_ms'] / 1000:.1f}s")
    ev = Event(ref, "status", kind=t, hidden=True, hidden_reason="model response",
               blocks=[Notice(" · ".join(parts), c or None)])
    if not c and content is not None:
        ev.blocks.append(Data(content, "content"))
    ev.model = c.get("model") if isinstance(c.get("model"), str) else None
    ev.usage = usage
    return ev


def title_of(ev: Event) -> str | None:
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return prompt_title(ev.text())
    return None
