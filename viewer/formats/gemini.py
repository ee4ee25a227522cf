"""Gemini API message lists: `Content[]`, i.e. `[{role: user|model, parts: [Part, ...]}, ...]`.

The Google sibling of the OpenAI and Anthropic message lists, and the part mapping the Gemini CLI
family shares (`gemini_cli`, `qwen_code` read their messages' parts here). Shapes from
`@google/genai` (`Content`, `Part`) as Gemini CLI saves them:

* Gemini CLI's `/chat save <tag>` checkpoints (`~/.gemini/tmp/<project>/checkpoint-<tag>.json`,
  packages/core/src/core/logger.ts `saveCheckpoint`): the chat history as a bare `Content[]`
  (older versions) or `{history: Content[], authType}`;
* any other file holding such a list (JSONL with one Content per line too).

The CLI's first user turn states the date, OS and folders for the model ("This is the Gemini
CLI. We are setting up the context…", later `<session_context>…`): a quiet context block, never
the session's title.

A Part is one of: `text` (prose; with `thought: true` it is the model's thought summary, its
`thoughtSignature` kept), `functionCall {id?, name, args}` (a call), `functionResponse {id?, name,
response}` (its result: `response.output`, or `response.error` for a failure, anything else as
data), `inlineData {mimeType, data}` / `fileData {mimeType, fileUri}` (media, shown inline),
`executableCode` / `codeExecutionResult` (Gemini's code execution, as text); an unknown part is a
data block. Content may also be a bare string or a single Part (`PartListUnion`).

The Gemini API gives calls an `id` only sometimes (Vertex and the CLI's own history often have
none): `records` numbers a model turn's calls without one (`<tool>#<record>.<n>`) and gives each
`functionResponse` without one the id of the earliest unanswered call of its name in the turn
before it, as the API pairs them (by name, in order).

`sniff`: a `{role: user|model, parts}` record with nothing else (OpenAI and Anthropic never say
`model` nor `parts`; Wolo's parts carry a `type`) scores 2 when its parts hold a call, a response,
a thought or media, else 1.
"""

from __future__ import annotations

from typing import Any

from ..model import Context, Data, Event, Media, Ref, Text, Thinking, ToolResult, ToolUse
from .common import as_text, generic_event, text_field
from .openai_chat import Linked, prompt_title

NAME = "gemini-api"
MODE = "document"

ROLES = {"user": "user", "model": "assistant", "function": "tool", "tool": "tool", "system": "system"}
_OWN_PARTS = ("functionCall", "functionResponse", "inlineData", "fileData", "executableCode",
              "codeExecutionResult")
_MEDIA = ("image", "audio", "video")
# what Gemini CLI sends as the chat's first user turn (its date, OS, folders): not the person's words
_SETUP = ("This is the Gemini CLI. We are setting up the context for our chat.", "<session_context>")


# --- parts ---------------------------------------------------------------------------------------


def part_list(content: Any) -> list:
    """A `PartListUnion` (a string, one Part, or a list of strings and Parts) as a list."""
    if content is None:
        return []
    if isinstance(content, list):
        return content
    return [content]


def parts_blocks(content: Any, *, markdown: bool = True, ids: dict | None = None) -> list:
    """Gemini Parts → canonical blocks. `ids` gives the call id of a part (by its position) whose
    `functionCall` / `functionResponse` names none."""
    out: list = []
    for n, part in enumerate(part_list(content)):
        if isinstance(part, str):
            if part.strip():
                out.append(Text(part, markdown))
        elif isinstance(part, dict):
            out.append(part_block(part, markdown, (ids or {}).get(n)))
        else:
            out.append(Data(part))
    return [b for b in out if b is not None]


def part_block(part: dict, markdown: bool = True, given_id: str | None = None) -> Any:
    """One Part as a block (None for an empty text part)."""
    if isinstance(part.get("text"), str):
        text = part["text"]
        if part.get("thought") is True:
            sig = part.get("thoughtSignature")
            return Thinking(text, False, sig if isinstance(sig, str) else None)
        return Text(text, markdown) if text.strip() else None
    if isinstance(part.get("functionCall"), dict):
        fc = part["functionCall"]
        return ToolUse(call_id(fc, given_id), str(fc.get("name") or "?"), fc.get("args"))
    if isinstance(part.get("functionResponse"), dict):
        fr = part["functionResponse"]
        blocks, failed = response_blocks(fr.get("response"))
        blocks += parts_blocks(fr.get("parts"), markdown=False)  # multimodal results (images)
        return ToolResult(call_id(fr, given_id), blocks, True if failed else None)
    for key in ("inlineData", "fileData"):
        if isinstance(part.get(key), dict):
            return media(part[key])
    if isinstance(part.get("executableCode"), dict):
        code = part["executableCode"]
        return Text(as_text(code.get("code")), markdown=False)
    if isinstance(part.get("codeExecutionResult"), dict):
        res = part["codeExecutionResult"]
        return Text(as_text(res.get("output")), markdown=False)
    if part.get("thought") is True:  # a thought with only its signature kept
        return Thinking("", False, part.get("thoughtSignature"))
    return Data(part, next(iter(part), None))


def setup_context(blocks: list) -> list:
    """A user turn's texts that are Gemini CLI's session set-up, as a quiet context block."""
    return [Context("session context from Gemini CLI", b.text, "session_context")
            if b.kind == "text" and b.text.lstrip().startswith(_SETUP) else b for b in blocks]


def call_id(fc: dict, given: str | None = None) -> str:
    """The call id a functionCall / functionResponse names, else the one its place gives it."""
    cid = fc.get("id")
    if isinstance(cid, str) and cid:
        return cid
    return given or str(fc.get("name") or "?")


def response_blocks(response: Any) -> tuple[list, bool]:
    """A functionResponse's `response` as blocks, and whether it reports a failure: Gemini CLI
    answers `{output}` or `{error}`; anything else is the tool's own object, shown as data."""
    if response is None:
        return [], False
    if isinstance(response, str):
        return ([Text(response, markdown=False)] if response else []), False
    if not isinstance(response, dict):
        return [Data(response)], False
    failed = bool(response.get("error")) and "output" not in response
    out: list = []
    for key in ("output", "error", "content"):
        value = response.get(key)
        if isinstance(value, str):
            if value:
                out.append(Text(value, markdown=False))
        elif value is not None:
            out.append(Data(value, key))
    rest = {k: v for k, v in response.items() if k not in ("output", "error", "content")}
    if rest:
        out.append(Data(rest))
    return out, failed


def media(d: dict) -> Media:
    """An `inlineData` (base64) or `fileData` (a URI) part."""
    mime = d.get("mimeType") if isinstance(d.get("mimeType"), str) else None
    kind = (mime or "").split("/", 1)[0]
    data = d.get("data") if isinstance(d.get("data"), str) else None
    url = d.get("fileUri") if isinstance(d.get("fileUri"), str) else None
    name = d.get("displayName") if isinstance(d.get("displayName"), str) else None
    return Media(kind if kind in _MEDIA else "document", mime, data, url, name)


def gemini_usage(tokens: Any) -> dict | None:
    """Gemini CLI's per-message `tokens` ({input, output, cached, thoughts, tool, total}, from the
    API's usageMetadata: `input` includes `cached`) under the API's own names, which the usage
    module reads."""
    if not isinstance(tokens, dict):
        return None
    names = {"input": "promptTokenCount", "output": "candidatesTokenCount",
             "cached": "cachedContentTokenCount", "thoughts": "thoughtsTokenCount",
             "tool": "toolUsePromptTokenCount", "total": "totalTokenCount"}
    out = {names[k]: v for k, v in tokens.items() if k in names}
    return out or None


# --- the adapter ---------------------------------------------------------------------------------


def sniff(rec: Any) -> int:
    if not isinstance(rec, dict) or rec.get("role") not in ("user", "model") \
            or not isinstance(rec.get("parts"), list) or not rec.keys() <= {"role", "parts"}:
        return 0
    parts = rec["parts"]
    if any(isinstance(p, dict) and "type" in p for p in parts):
        return 0  # Wolo's and others' typed parts
    own = rec["role"] == "model" or any(
        isinstance(p, dict) and (p.get("thought") is True or any(k in p for k in _OWN_PARTS))
        for p in parts)
    return 2 if own else 1


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """The Content list of a checkpoint (bare, or under `history`), calls without ids numbered."""
    if isinstance(doc, list):
        found = [(f"[{i}]", r) for i, r in enumerate(doc)]
    elif isinstance(doc, dict) and isinstance(doc.get("history"), list):
        found = [(f"history[{i}]", r) for i, r in enumerate(doc["history"])]
    else:
        return None
    if not any(isinstance(r, dict) and isinstance(r.get("parts"), list) for _, r in found):
        return None
    return number_calls(found)


def number_calls(found: list) -> list:
    """Calls and responses that name no id get the ids their places give them (see the module
    docstring); records holding none are passed on as they are."""
    out = list(found)
    open_calls: list[tuple[str, str]] = []  # (name, id) of the last model turn's unanswered calls
    for i, (path, rec) in enumerate(found):
        parts = rec.get("parts") if isinstance(rec, dict) else None
        if not isinstance(parts, list):
            continue
        ids: dict = {}
        placed = False  # a call or response here names no id of its own
        if rec.get("role") == "model":
            open_calls = []
            for n, p in enumerate(parts):
                fc = p.get("functionCall") if isinstance(p, dict) else None
                if isinstance(fc, dict):
                    placed = placed or not fc.get("id")
                    cid = call_id(fc, f"{fc.get('name') or '?'}#{i + 1}.{n + 1}")
                    ids[n] = cid
                    open_calls.append((str(fc.get("name") or "?"), cid))
        else:
            for n, p in enumerate(parts):
                fr = p.get("functionResponse") if isinstance(p, dict) else None
                if not isinstance(fr, dict):
                    continue
                name = str(fr.get("name") or "?")
                placed = placed or not fr.get("id")
                k = next((j for j, (cname, _) in enumerate(open_calls) if cname == name), None)
                if k is not None:
                    ids[n] = open_calls.pop(k)[1]
        if placed:
            out[i] = (path, Linked(rec, ids))
    return out


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, dict) or not isinstance(rec.get("parts"), list):
        return generic_event(rec, ref, NAME)
    role = text_field(rec, "role") or "user"
    ev = Event(ref, ROLES.get(role, role), format=NAME)
    ev.blocks = parts_blocks(rec["parts"], ids=getattr(rec, "links", None))
    if ev.role == "user":
        ev.blocks = setup_context(ev.blocks)
    if ev.blocks and all(b.kind in ("tool_result", "data") for b in ev.blocks) and ev.tool_results():
        ev.role, ev.kind = "tool", "tool_result"
    ev.meta = {k: v for k, v in rec.items() if k not in ("parts", "role")}
    return ev


def title_of(ev: Event) -> str | None:
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return prompt_title(ev.text())
    return None
