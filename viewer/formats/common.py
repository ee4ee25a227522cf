"""Pieces several adapters share: Anthropic-style content blocks, OpenAI-style tool calls,
timestamps, and the generic / unparsed events every format falls back to.

Kept here so each format module holds only what is particular to its source.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path
from typing import Any

import orjson

from .. import files, reader, timestamps
from ..model import (
    BLOCKED_BY_HOOK,
    CANCELLED,
    DENIED,
    DENIED_BY_SETTINGS,
    Cached,
    Context,
    Data,
    Event,
    Media,
    Notice,
    Ref,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
    Unparsed,
)


def loads(text: str | bytes) -> Any:
    """JSON held in a record's string (tool arguments, a content string), parsed like a line is:
    nothing nested deeper than reader.MAX_DEPTH. Raises orjson.JSONDecodeError."""
    return reader.shallow(orjson.loads(text), text)


def load_json_file(p: Path) -> Any:
    """One JSON file of a session kept as a folder of files (Wolo, OpenCode), or an unparsed line
    saying why it could not be read: the rest of the session still reads. A UTF-8 byte order mark
    (an editor's, on Windows) is no part of its JSON."""
    try:
        data = files.read_file(p)
    except OSError as e:
        return reader.BadLine(f"{p.name}: cannot read: {e.strerror or e}")
    # as a line is read: bad UTF-8 and a lone surrogate mended
    value = reader.decode(data.removeprefix(b"\xef\xbb\xbf") if isinstance(data, bytes) else data)
    if isinstance(value, reader.BadLine):
        return reader.BadLine(f"{p.name}: {value.reason}", data[:reader.UNPARSED_PREVIEW])
    return value


def set_time(ev: Event, raw: Any) -> Event:
    if raw is None:
        return ev
    st = timestamps.parse(raw)
    ev.timestamp, ev.timestamp_raw, ev.timestamp_assumed_utc = st.utc, raw, st.assumed_utc
    return ev


def first_time(ev: Event, *candidates: Any) -> Event:
    """Set the event's time from the first candidate that is a scalar (sources put it anywhere)."""
    for raw in candidates:
        if raw is not None and not isinstance(raw, (dict, list)):
            return set_time(ev, raw)
    return ev


def prompt_first_line(ev: Event) -> str | None:
    """A shown user prompt's first non-blank line (at most 200 characters), for the formats whose
    prompt starts with its subject (an issue's title, the task's first sentence)."""
    if not (ev.role == "user" and ev.kind == "message" and not ev.hidden):
        return None
    first = next((ln.strip() for ln in ev.text().splitlines() if ln.strip()), "")
    return (first if len(first) <= 200 else first[:199] + "…") or None


def model_and_usage(ev: Event, model: Any, usage: Any, cost: Any = None) -> None:
    """Model name, token usage and cost where a source recorded them."""
    if isinstance(model, str) and model:
        ev.model = model
    if isinstance(usage, dict):
        ev.usage = dict(usage)
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        ev.usage = {**(ev.usage or {}), "cost": cost}


def text_field(rec: dict, key: str) -> str | None:
    """A field that must be a string to mean anything (a type, a subtype): None otherwise."""
    value = rec.get(key)
    return value if isinstance(value, str) else None


def as_text(value: Any) -> str:
    """Any value as display text: strings unchanged, everything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # not JSON, or nested deeper than orjson writes (str() would recurse)
        try:
            return orjson.dumps(reader.cap_depth(value), option=orjson.OPT_INDENT_2,
                                default=str).decode()
        except TypeError:  # an integer past 64 bits (valid JSON; orjson will not write it)
            return json.dumps(reader.cap_depth(value), indent=2, ensure_ascii=False, default=str)


def retry_words(status: Any, what: Any, attempt: Any, most: Any, wait_ms: Any) -> str:
    """A failed API call the Claude Code CLI retries, in one sentence: "API error 529: Overloaded ·
    retry 1 of 10 in 0.5s". Its own `api_error` lines and the Agent SDK's `api_retry` messages
    (legion) carry the same facts under other names."""
    words = "API error"
    if isinstance(status, int) and not isinstance(status, bool):
        words += f" {status}"
    if isinstance(what, str) and what:
        words += f": {what}"
    if isinstance(attempt, int) and isinstance(most, int):
        retry = f"retry {attempt} of {most}"
        if isinstance(wait_ms, (int, float)) and not isinstance(wait_ms, bool):
            retry += f" in {wait_ms / 1000:.1f}s"
        words += " · " + retry
    return words


def parse_arguments(args: Any) -> tuple[Any, str | None]:
    """OpenAI-style `arguments`: a JSON string (parsed for display) or already an object.
    Returns (input, raw) where raw is the original string when it did not parse."""
    if isinstance(args, str):
        if not args.strip():
            return {}, None
        try:
            return loads(args), None
        except orjson.JSONDecodeError:
            return args, args
    return args, None


def error_content(content: Any) -> bool:
    """Whether a tool result's content is itself an error report: an object with a non-empty
    `error` and no `result` — as JSON, or as the str() of a Python dict (what a Python tool
    executor writes when it stringifies `{'error': "…", 'type': 'ConnectionError'}`).

    For OpenAI-shaped formats whose tool messages carry no error flag (OpenAI chat lists, MARSYS,
    agentpress tool rows without a recorded `success`), this is the only sign that a call failed."""
    if isinstance(content, dict):
        return bool(content.get("error")) and "result" not in content
    if not isinstance(content, str) or len(content) > 20_000:
        return False
    text = content.strip()
    if not text.startswith("{") or "error" not in text[:200]:
        return False
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return False
    return isinstance(value, dict) and bool(value.get("error")) and "result" not in value


# what Claude Code (and so the Agent SDK under legion) answers for a call that did not run
_REFUSED = "The user doesn't want to proceed with this tool use."
_SIBLING_FAILED = "<tool_use_error>Sibling tool call errored</tool_use_error>"
_NOT_GRANTED = ("Claude requested permissions to use ", "but you haven't granted it yet.")
# how Claude Code words a PreToolUse hook's refusal in the result of the call it stopped, in every
# version since hooks came (2.0.x to 2.1.331, with or without the 2.1 `toolDenialKind`): a block by
# exit code 2, "PreToolUse:Bash hook error: [<the hook's command>]: <its stderr>"
# (anthropics/claude-code#85490 on 2.1.220, #88292 on 2.1.234), and a JSON `permissionDecision:
# deny` that gave no reason, "Hook PreToolUse:Bash denied this tool" (#59643 on 2.1.143, #82642 on
# 2.1.220). Group 1 or 3 names the hook, 2 its command, the rest is what the hook said
HOOK_BLOCK = re.compile(r"(?:Error: )?(?:(PreToolUse:\S+) hook error: (?:\[(.*?)\]: )?|Hook (PreToolUse:\S+) denied "
                        r"this tool\b)", re.S)


def refused_state(content: Any) -> str | None:
    """The named state of a Claude Code error result that says the call never ran: the user
    (`denied`) or the permission settings (`denied_by_settings`) rejected it, or a parallel call
    failed first and the CLI cancelled the rest."""
    if isinstance(content, list):
        content = next((b.get("text") for b in content if isinstance(b, dict)
                        and b.get("type", "text") == "text"), None)
    if not isinstance(content, str):
        return None
    if content.startswith(_REFUSED) or content.startswith("Error: " + _REFUSED):
        return DENIED
    if content.startswith(_NOT_GRANTED[0]) and _NOT_GRANTED[1] in content[:300]:
        # a non-interactive run (-p, the Agent SDK) refuses what its settings do not allow: nobody
        # was asked
        return DENIED_BY_SETTINGS
    if content.strip() == _SIBLING_FAILED:
        return CANCELLED
    if content.startswith(("PreToolUse:", "Hook PreToolUse:", "Error: PreToolUse:", "Error: Hook PreToolUse:")) \
            and HOOK_BLOCK.match(content[:2000]):
        return BLOCKED_BY_HOOK  # a PreToolUse hook stopped it: the person was not asked
    return None


def media_block(block: dict, media: str) -> Media:
    """Anthropic (`source: {type: base64|url, media_type, data|url}`), OpenAI (`image_url`) and
    AgentScope (`source: "url"` or `{type, url|data}`) media blocks."""
    src = block.get("source")
    media_type = block.get("media_type") or block.get("mimeType") or block.get("mime_type")
    data = url = None
    if isinstance(src, dict):
        media_type = src.get("media_type") or src.get("mediaType") or src.get("mime_type") or media_type
        data = src.get("data") if isinstance(src.get("data"), str) else None
        url = src.get("url") if isinstance(src.get("url"), str) else None
    elif isinstance(src, str):
        url = src
    iu = block.get("image_url")
    if isinstance(iu, dict):
        iu = iu.get("url")
    if isinstance(iu, str):
        url = iu
    if isinstance(block.get("url"), str):
        url = block["url"]
    if isinstance(block.get("data"), str) and data is None:
        data = block["data"]
    if url and url.startswith("data:") and ";base64," in url[:100]:
        head, _, data = url.partition(";base64,")
        media_type = media_type or head[5:]
        url = None
    name = block.get("name") or block.get("title")
    if not name and isinstance(src, dict) and src.get("type") == "file":
        name = src.get("file_id")  # a file sent by its Files API id: the id is all it names
    return Media(media, media_type if isinstance(media_type, str) else None, data,
                 url if isinstance(url, str) else None, name if isinstance(name, str) else None)


_TOOLS_LOADED = "tools loaded: "


def result_content(content: Any) -> list:
    """The content of a tool result: a string, a list of blocks, or anything else."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content, markdown=False)] if content else []
    if isinstance(content, list):
        out = []
        for item in content:
            if isinstance(item, str):
                out.append(Text(item, markdown=False))
            elif isinstance(item, dict):
                t = item.get("type")
                if t == "text" and isinstance(item.get("text"), str):
                    out.append(Text(item["text"], markdown=False))
                elif t == "document":
                    out += document_blocks(item)
                elif t in ("image", "image_url", "audio", "video"):
                    kind = "image" if t == "image_url" else t
                    out.append(media_block(item, kind))
                elif t == "search_result":
                    out += search_result_blocks(item)
                elif t == "web_search_result":
                    out.append(web_search_text([item]))
                elif str(t).endswith("_output") and isinstance(item.get("file_id"), str):
                    out.append(Notice(f"output file {item['file_id']}", item))  # code execution's
                elif t == "tool_reference":  # a tool search's find: the tools it made available
                    name = item.get("tool_name") if isinstance(item.get("tool_name"), str) else "?"
                    last = out[-1] if out else None
                    if isinstance(last, Notice) and last.text.startswith(_TOOLS_LOADED) \
                            and isinstance(last.detail, list):
                        last.text += f", {name}"  # one line for the tools one search loaded
                        last.detail.append(item)
                    else:
                        out.append(Notice(_TOOLS_LOADED + name, [item]))
                else:
                    out.append(Data(item, t))
            else:
                out.append(Data(item))
        return out
    return [Data(content)]


def anthropic_blocks(content: Any, *, markdown: bool = True) -> list:
    """Anthropic Messages content (a string or a list of blocks) → canonical blocks.
    Blocks without a `type` are recognised by their keys (the Agent SDK writes `{"text": ...}`)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content, markdown)] if content.strip() else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [Data(content)]
    out = []
    cited: list = []  # the citations of the message's text, named once after it
    runs: list = []  # [first, last, cited] of each run of text blocks in `out`
    for b in content:
        if isinstance(b, str):
            out.append(Text(b, markdown))
            continue
        if not isinstance(b, dict):
            out.append(Data(b))
            continue
        t = b.get("type")
        if t is None:
            t = _guess_type(b)
        if t == "text":
            text = b.get("text")
            cites = b.get("citations") if isinstance(b.get("citations"), list) else []
            cited += cites
            if runs and runs[-1][1] == len(out) - 1:
                runs[-1][1:] = [len(out), runs[-1][2] or bool(cites)]
            else:
                runs.append([len(out), len(out), bool(cites)])
            out.append(Text(text if isinstance(text, str) else as_text(text), markdown))
            continue
        elif t == "thinking":
            text = b.get("thinking")
            out.append(Thinking(text if isinstance(text, str) else "", False, b.get("signature")))
        elif t == "redacted_thinking":
            out.append(Thinking("", True, b.get("data")))
        elif t in ("tool_use", "server_tool_use", "mcp_tool_use"):
            caller = b.get("caller") if isinstance(b.get("caller"), dict) else {}
            if text_field(caller, "type") not in (None, "direct"):
                # programmatic tool calling (anthropic-sdk-python types/beta beta_tool_use_block.py:
                # `caller` a server tool): the code that ran made the call, not the model
                by = caller.get("tool_id") if isinstance(caller.get("tool_id"), str) else None
                out.append(Notice(("called from code execution" if "code_execution" in caller["type"]
                                   else f"called by {caller['type']}")
                                  + (f" ({by}), not by the model directly" if by else ""), caller))
            name = str(b.get("name") or "?")
            server = b.get("server_name")
            if t == "mcp_tool_use" and isinstance(server, str) and server and "__" not in server:
                # the MCP connector's call names its server apart (anthropic-sdk-python types/beta/
                # beta_mcp_tool_use_block.py): named as Claude Code names an MCP tool, so the card
                # says which server's tool ran (tools.mcp_name)
                name = f"mcp__{server}__{name}"
            out.append(ToolUse(str(b.get("id") or ""), name, b.get("input")))
        elif t == "tool_result" or (isinstance(t, str) and t.endswith("_tool_result")):
            err = b.get("is_error")
            content_ = b.get("content")
            if isinstance(content_, dict):
                blocks, failed = server_result(content_)
                err = True if failed else err
            else:
                blocks = result_content(content_)
            out.append(ToolResult(str(b.get("tool_use_id") or ""), blocks,
                                  None if err is None else bool(err),
                                  state=refused_state(content_) if err else None,
                                  structured=editor_patch(content_)))
        elif t == "document":
            out += document_blocks(b)
        elif t == "search_result":
            out += search_result_blocks(b)
        elif t in ("image", "audio", "video"):
            out.append(media_block(b, t))
        elif t == "cached":
            out.append(Cached(as_text(b.get("text"))))
        elif t == "container_upload" and isinstance(b.get("file_id"), str):
            out.append(Notice(f"file {b['file_id']} uploaded to the code execution container", b))
        elif t == "compaction":  # server-side context compaction (anthropic-sdk-python types/beta
            # beta_compaction_block.py): the summary that stands for the turns before it
            summary = b.get("content")
            if isinstance(summary, str) and summary.strip():
                out += [Notice("context compacted: the conversation before this point is replaced "
                               "by this summary"), Text(summary, markdown)]
            else:  # null content: the compaction produced no valid summary (the API ignores it)
                out.append(Notice("context compaction failed: no summary was produced"))
            changes = b.get("tool_changes") if isinstance(b.get("tool_changes"), list) else []
            if changes:  # the tools the compacted turns added or withdrew, which still hold
                out.append(Notice("in the compacted part: " + "; ".join(tool_change(c) for c in changes),
                                  changes))
        elif t in ("tool_addition", "tool_removal"):  # the tools offered change from here on
            out.append(Notice(tool_change(b), b))
        elif t == "mcp_tool_listing":  # what the server fetched from an MCP server for this reply
            server = b.get("mcp_server_name") if isinstance(b.get("mcp_server_name"), str) else "?"
            listed = b.get("tools") if isinstance(b.get("tools"), list) else []
            n = len(listed)
            out += [Notice(f"MCP server {server} lists {n} tool{'s' if n != 1 else ''}", None),
                    tool_lines(listed)]
        elif t == "fallback":  # the API answered with another model (Claude Code 2.1.170+)
            src, dst = b.get("from"), b.get("to")
            names = [m.get("model") if isinstance(m, dict) else None for m in (src, dst)]
            out.append(Notice(f"model fallback: {names[0] or '?'} → {names[1] or '?'}", b))
        else:
            out.append(Data(b, str(t)))
    if cited:
        # an answer with citations comes as text blocks cut where each citation starts and
        # ends: each such run is one text, read as written
        for first, last, has in reversed(runs):
            if has and last > first:
                out[first:last + 1] = [Text("".join(x.text for x in out[first:last + 1]), markdown)]
        out.append(Notice(citation_words(cited), cited))
    return out


def tool_change(b: Any) -> str:
    """A `tool_addition` / `tool_removal` block in words (anthropic-sdk-python types/beta:
    beta_request_tool_addition_block_param.py, beta_response_tool_change_*.py): the tool named by
    its name, an MCP server's tool by both, a whole MCP toolset by its server, a tool defined there
    by its definition's name."""
    if not isinstance(b, dict):
        return as_text(b)
    tool = b.get("tool") if isinstance(b.get("tool"), dict) else {}
    kind = tool.get("type")
    if kind == "tool_definition" and isinstance(tool.get("definition"), dict):
        tool = tool["definition"]
    name = next((tool[k] for k in ("name", "mcp_server_name") if isinstance(tool.get(k), str)), None)
    server = tool.get("server_name") if isinstance(tool.get("server_name"), str) else None
    if kind == "mcp_toolset_reference" or (tool.get("type") == "mcp_toolset" and name):
        what = f"every tool of MCP server {server or name}"
    elif server:
        what = f"{name or '?'} (MCP server {server})"
    else:
        what = name or as_text(tool)
    return ("tool withdrawn: " if b.get("type") == "tool_removal" else "tool made available: ") + what


def tool_lines(tools: list) -> Text:
    """Tools as their definitions give them, one per line with its description's first line."""
    lines = []
    for tool in tools:
        if isinstance(tool, dict):
            desc = tool.get("description") if isinstance(tool.get("description"), str) else ""
            first = desc.strip().splitlines()[0] if desc.strip() else ""
            lines.append(f"{as_text(tool.get('name'))}" + (f" — {first}" if first else ""))
    return Text("\n".join(lines) or "(no tools)", markdown=False)


# why a reply stopped, when a reader should know (anthropic-sdk-python types/stop_reason.py):
# end_turn, tool_use and stop_sequence are the ordinary ends and say nothing
_STOPS = {"max_tokens": "cut off: the reply reached its max_tokens limit",
          "refusal": "the model refused (stop reason: refusal)",
          "pause_turn": "turn paused: a long-running server tool goes on in the next request",
          "model_context_window_exceeded": "cut off: the context window is full"}


def stop_notice(stop_reason: Any, details: Any = None) -> Notice | None:
    """A stored Anthropic Message's `stop_reason` in words, or None for an ordinary end. A refusal's
    `stop_details` (anthropic-sdk-python types/refusal_stop_details.py: `{type: refusal, category,
    explanation}`) say which policy and why."""
    words = _STOPS.get(stop_reason) if isinstance(stop_reason, str) else None
    if not words:
        return None
    if stop_reason == "refusal" and isinstance(details, dict):
        category = details.get("category")
        if isinstance(category, str) and category:
            words += f" — category: {category.replace('_', ' ')}"
        if isinstance(details.get("explanation"), str) and details["explanation"].strip():
            words += f". {details['explanation'].strip()}"
    return Notice(words, details if isinstance(details, dict) else None)


def citation_words(cites: list) -> str:
    """The sources a message's text cites, each once: a web page's title and address, a
    document's title, a search result's title and source."""
    seen: dict = {}
    for c in cites:
        if not isinstance(c, dict):
            continue
        title = c.get("title") or c.get("document_title")
        where = c.get("url") or c.get("source")
        parts = [str(x) for x in (title, where) if isinstance(x, str) and x]
        if not parts:  # (an untitled document's, or a kind not known: its words, not nothing)
            said = c.get("cited_text") if isinstance(c.get("cited_text"), str) and c["cited_text"] \
                else next((v for k, v in c.items() if k != "type" and isinstance(v, str) and v), None)
            kind = c.get("type") if isinstance(c.get("type"), str) else "citation"
            parts = [f"{kind.replace('_', ' ')}: “{said[:120]}”" if said else kind.replace("_", " ")]
        seen.setdefault(" — ".join(parts), None)
    return ("sources: " + "; ".join(seen)) if seen else f"{len(cites)} citation(s)"


# --- Anthropic server tools, documents and search results -----------------------------------------
# Shapes from anthropics/anthropic-sdk-python src/anthropic/types (beta): *_tool_result blocks whose
# `content` is one object (a result, or `{type: …_error, error_code}`), `document` blocks whose source
# is base64 / url / file (media) or plain text / content blocks (text), `search_result` blocks.


def server_result(content: dict) -> tuple[list, bool]:
    """The object a server tool's result holds (code execution, bash, text editor, web fetch,
    web search errors) as readable blocks, and whether it reports a failure: an `…_error` type, or
    a command that exited non-zero."""
    t = text_field(content, "type") or ""
    if t.endswith("_error"):
        code = content.get("error_code") or content.get("error_message") or t
        words = f"error: {as_text(code)}"
        if content.get("error_code") and isinstance(content.get("error_message"), str) \
                and content["error_message"]:
            words += f" — {content['error_message']}"
        return [Notice(words, content)], True
    if isinstance(content.get("tool_references"), list):  # tool search: the tools it loaded
        names = [str(r["tool_name"]) for r in content["tool_references"]
                 if isinstance(r, dict) and isinstance(r.get("tool_name"), str)]
        return [Text("tools found: " + ", ".join(names) if names else "no tools found",
                     markdown=False)], False
    if t == "advisor_redacted_result":  # the advisor's answer, encrypted for the model
        return [Notice("the advisor's answer is encrypted: only the model can read it")], False
    # the code execution's file editor (anthropic-sdk-python types/text_editor_code_execution_*
    # _result_block.py; the API docs' examples name all three `text_editor_code_execution_result`
    # and write the hunk's fields in camelCase): a create says whether the file was there before,
    # a str_replace gives its hunk, `lines` marked - / +, a view the file (read below)
    if t.startswith("text_editor_code_execution") and isinstance(content.get("is_file_update"), bool):
        return [Notice("file overwritten" if content["is_file_update"] else "file created")], False
    if (hunk := _editor_hunk(content)) is not None:
        # (its lines are the call's own replacement, which the call's card draws as a diff,
        # numbered from here: `editor_patch`)
        return [Notice("file edited" + _hunk_place(hunk))], False
    out: list = []
    if isinstance(content.get("encrypted_stdout"), str) and content["encrypted_stdout"]:
        # code that called a server tool (programmatic tool calling): its output is for the model
        # (types/encrypted_code_execution_result_block.py)
        out.append(Notice("stdout encrypted: only the model can read it"))
    rc = content.get("return_code")
    failed = isinstance(rc, int) and not isinstance(rc, bool) and rc != 0
    out += std_streams(content)
    if isinstance(rc, int) and not isinstance(rc, bool):
        out.append(Notice(f"exit code {rc}"))
    if isinstance(content.get("url"), str) and isinstance(content.get("content"), dict):
        out.append(Notice(f"fetched {content['url']}"))  # web_fetch_result: a document
        out += document_blocks(content["content"])
    elif isinstance(content.get("content"), str):
        out.append(Text(content["content"], markdown=False))  # text editor: a viewed file
    elif isinstance(content.get("text"), str):
        out.append(Text(content["text"]))  # an advisor's answer
    elif isinstance(content.get("content"), list) and content["content"]:
        out += result_content(content["content"])  # files a code execution wrote
    if not out:
        out.append(Data(content, t or None))
    return out, failed


def _editor_hunk(content: Any) -> dict | None:
    """The hunk a code execution's file edit made (`lines` marked - / +), in the camelCase of
    Claude Code's `structuredPatch` hunks; None for any other result."""
    if not (isinstance(content, dict) and str(content.get("type")).startswith("text_editor_code_execution")
            and "lines" in content):
        return None
    return {camel: content.get(k, content.get(camel)) for k, camel in (
        ("old_start", "oldStart"), ("old_lines", "oldLines"), ("new_start", "newStart"),
        ("new_lines", "newLines"), ("lines", "lines"))}


def editor_patch(content: Any) -> dict | None:
    """A code execution's file edit's hunk as Claude Code's `structuredPatch`, so the edit call's
    diff is numbered as the file's lines (tools.edits); None for any other result."""
    hunk = _editor_hunk(content)
    return {"structuredPatch": [hunk]} if hunk is not None and isinstance(hunk["lines"], list) else None


def _hunk_place(h: dict) -> str:
    """Where an edit's hunk sits: " at line 3 (1 line → 2 lines)", or "" when it says nothing."""
    def count(n: Any) -> str:
        return f"{n} line" + ("" if n == 1 else "s")

    start, old, new = h["oldStart"], h["oldLines"], h["newLines"]
    place = f" at line {start}" if isinstance(start, int) and not isinstance(start, bool) else ""
    if all(isinstance(n, int) and not isinstance(n, bool) for n in (old, new)):
        place += f" ({count(old)} → {count(new)})"
    return place


def std_streams(d: dict) -> list:
    """A command's `stdout` and `stderr` (an Anthropic server tool's result, an OpenAI shell
    call's output), each under its name; empty ones left out."""
    return [x for key in ("stdout", "stderr") if isinstance(d.get(key), str) and d[key]
            for x in (Notice(key), Text(d[key], markdown=False))]


def document_blocks(b: dict) -> list:
    """A `document` block: a PDF or file is media; a plain-text or content source is its text."""
    src = b.get("source") if isinstance(b.get("source"), dict) else {}
    kind = text_field(src, "type")
    title = b.get("title") if isinstance(b.get("title"), str) else None
    if kind == "text" and isinstance(src.get("data"), str):
        body = [Text(src["data"], markdown=False)]
    elif kind == "content":
        body = result_content(src.get("content") if isinstance(src.get("content"), list)
                              else [src.get("content")])
    else:
        return [media_block(b, "document")]
    return [Notice(f"document “{title}”" if title else "document"), *body]


def search_result_blocks(b: dict) -> list:
    """A `search_result` block (RAG results a client passed in): its title and source, its text."""
    head = " · ".join(str(b[k]) for k in ("title", "source") if isinstance(b.get(k), str) and b[k])
    content = b.get("content")
    return [Notice(f"search result: {head}" if head else "search result", None),
            *result_content(content if isinstance(content, list) else [content])]


def web_search_text(results: list) -> Text:
    """Web search results as one line each: title, address, age (their encrypted content is for
    the model only)."""
    lines = []
    for r in results:
        if not isinstance(r, dict):
            continue
        line = " — ".join(str(r[k]) for k in ("title", "url") if isinstance(r.get(k), str) and r[k])
        if isinstance(r.get("page_age"), str) and r["page_age"]:
            line += f" ({r['page_age']})"
        lines.append(line or as_text(r))
    return Text("\n".join(lines), markdown=False)


def _guess_type(b: dict) -> str | None:
    if "tool_use_id" in b:
        return "tool_result"
    if "thinking" in b:
        return "thinking"
    if "name" in b and "input" in b and "id" in b:
        return "tool_use"
    if "text" in b:
        return "text"
    if "source" in b:
        return "image"
    return None


def openai_tool_calls(calls: Any) -> list:
    """OpenAI `tool_calls` (and the legacy single `function_call`) → ToolUse blocks. A call of
    `type: custom` (openai-python types/chat/chat_completion_message_custom_tool_call.py) holds
    `custom: {name, input}`, its input a free-form string. A call of a type not known here is read
    as the shape `function` and `custom` set, `{type: T, T: {name, arguments | input}}`; one that
    holds neither a name nor arguments shows the item itself as its input, named by its type."""
    out = []
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list):
        return out
    calls = _joined_chunks(calls)
    for i, c in enumerate(calls):
        if not isinstance(c, dict):
            out.append(Data(c, "tool call"))
            continue
        cid = str(c.get("id") or c.get("call_id") or f"call-{i}")
        custom = c.get("custom")
        if isinstance(custom, dict):  # `type: custom`: free-form text input, never JSON
            out.append(ToolUse(cid, str(custom.get("name") or "?"), custom.get("input")))
            continue
        kind = c.get("type")
        own = c.get(kind) if isinstance(kind, str) and kind != "function" else None
        fn = c.get("function") if isinstance(c.get("function"), dict) else \
            own if isinstance(own, dict) else c
        if not ({"name", "arguments", "input"} & fn.keys()):  # nothing known: the item says
            out.append(ToolUse(cid, kind if isinstance(kind, str) and kind else "?",
                               {k: v for k, v in c.items() if k not in ("id", "call_id")}))
            continue
        args, raw = parse_arguments(fn.get("arguments", fn.get("input")))
        out.append(ToolUse(cid, str(fn.get("name") or "?"), args, raw))
    return out


def _continues(c: Any) -> bool:
    """A streamed tool-call delta saved as it came: no id, no name, only a piece of `arguments`."""
    if not isinstance(c, dict) or c.get("id") or c.get("call_id") or c.get("custom") is not None:
        return False
    fn = c.get("function") if isinstance(c.get("function"), dict) else c
    return not fn.get("name") and isinstance(fn.get("arguments"), str)


def _joined_chunks(calls: list) -> list:
    """A writer that kept a streamed response's `tool_calls` deltas unmerged (early AgentPress
    threads: the first delta has the id and name, each next one `{"id": null, "function": {"name":
    null, "arguments": "<a piece>"}}`) holds one call, not one per delta: the pieces are joined
    onto the call before them, as a streaming client joins them."""
    if not any(_continues(c) for c in calls[1:]):
        return calls
    out: list = []
    last = None  # where in `out` the last call is (an item that is none takes no pieces)
    for c in calls:
        head = out[last] if last is not None else None
        if head is not None and _continues(c):
            fn = head.get("function") if isinstance(head.get("function"), dict) else head
            if isinstance(fn.get("arguments") or "", str):
                piece = (c.get("function") if isinstance(c.get("function"), dict) else c)["arguments"]
                joined = {**fn, "arguments": (fn.get("arguments") or "") + piece}
                out[last] = {**head, "function": joined} if fn is not head else joined
                continue
        if isinstance(c, dict) and (isinstance(c.get("function"), dict) or {"name", "arguments"} & c.keys()):
            last = len(out)
        out.append(c)
    return out


# --- what the index pass keeps of a plain block (see model.Digest) -----------------------------

DIGEST_TEXT, DIGEST_THOUGHT = Text("x"), Thinking("x")  # what the index reads of a block: its kind


def digest_block(b: dict, t: Any) -> Any:
    """An Anthropic-shaped assistant block of type `t` as the index reads it — its kind, or the
    call it makes — or None when only the full Event can say (empty text, another kind)."""
    if t == "text" or t == "thinking":
        text = b.get(t)
        if text.__class__ is not str or not text or text.isspace():  # (blank, not stripping it)
            return None
        return DIGEST_TEXT if t == "text" else DIGEST_THOUGHT
    if t == "tool_use":
        return ToolUse(str(b.get("id") or ""), str(b.get("name") or "?"), None)
    return None


def digest_result(b: dict) -> ToolResult:
    """A tool result that is no error as the index reads it: the call it answers, and whether the
    source said `is_error: false` or nothing at all."""
    return ToolResult(str(b.get("tool_use_id") or ""), (), None if b.get("is_error") is None else False)


def generic_event(rec: Any, ref: Ref, fmt: str, label: str | None = None) -> Event:
    """A record no adapter knows: shown as a quiet card with its JSON, never an error."""
    role = "unknown"
    if isinstance(rec, dict):
        for key in ("role", "type", "kind", "_type"):
            if isinstance(rec.get(key), str):
                role = rec[key]
                break
        ev = Event(ref, role, "unknown", format=fmt, blocks=[Data(rec, label or role)])
        for key in ("timestamp", "created_at", "createdAt", "time", "ts"):
            if key in rec and not isinstance(rec[key], (dict, list)):
                set_time(ev, rec[key])
                break
        for key in ("uuid", "id", "message_id"):
            if isinstance(rec.get(key), (str, int)) and not isinstance(rec.get(key), bool):
                ev.source_id = str(rec[key])
                break
        return ev
    return Event(ref, role, "unknown", format=fmt, blocks=[Data(rec, label)])


def unparsed_event(raw: str, ref: Ref, reason: str, fmt: str = "") -> Event:
    return Event(ref, "unparsed", "unparsed", format=fmt, blocks=[Unparsed(raw, ref.line, reason)])


def compaction_event(ref: Ref, *summaries: Any) -> Event:
    """A source's note that it compacted the context: a notice, and the first of `summaries` that
    is text as the summary the model goes on from."""
    blocks: list = [Notice("context compacted: the conversation so far, summarized")]
    summary = next((s for s in summaries if isinstance(s, str) and s.strip()), None)
    if summary is not None:
        blocks.append(Text(summary))
    return Event(ref, "system", "compact_summary", blocks=blocks)


# --- context a client attaches to a prompt -------------------------------------------------------

# IDE integrations and the CLI wrap what they attach for the model in these tags, before or after
# what the person typed (or after what a tool returned)
CONTEXT_TAGS = ("ide_selection", "ide_opened_file", "ide_diagnostics", "system-reminder")
_CONTEXT_HEAD = re.compile(r"\s*<(%s)>(.*?)</\1>" % "|".join(CONTEXT_TAGS), re.S)
_CONTEXT_TAIL = re.compile(r"<(%s)>((?:(?!<\1>).)*?)</\1>\s*$" % "|".join(CONTEXT_TAGS), re.S)
_SELECTED = re.compile(r"The user selected the lines? (\d+)(?: to (\d+))? from (.+?):\s*\n", re.S)
_OPENED = re.compile(r"The user opened the file (.+?) in the IDE")


def context_blocks(text: str, markdown: bool = True) -> list:
    """A text with the context tags at its start and end turned into `Context` blocks, in order;
    tags in the middle of the text are the author's own words and stay. A text cut out of a huge
    line (a preview) is left whole: its end is not in it."""
    if "<" not in text or isinstance(text, reader.CutStr):
        return [Text(text, markdown)] if text.strip() else []
    head: list = []
    tail: list = []
    while m := _CONTEXT_HEAD.match(text):
        head.append(_context(m.group(1), m.group(2)))
        text = text[m.end():]
    while m := _CONTEXT_TAIL.search(text):
        tail.insert(0, _context(m.group(1), m.group(2)))
        text = text[: m.start()]
    if not head and not tail:
        return [Text(text, markdown)] if text.strip() else []
    body = [Text(text.strip("\n"), markdown)] if text.strip() else []
    return head + body + tail


def with_context(blocks: list) -> list:
    """Blocks with the context tags at the ends of each text made into context chips."""
    return [x for b in blocks for x in (context_blocks(b.text, b.markdown) if b.kind == "text" else [b])]


def _context(tag: str, body: str) -> Context:
    body = body.strip("\n")
    label = {"ide_selection": "IDE selection", "ide_opened_file": "opened in the IDE",
             "ide_diagnostics": "IDE diagnostics", "system-reminder": "system reminder"}[tag]
    if tag == "ide_selection" and (m := _SELECTED.match(body.lstrip())):
        first, last, path = m.group(1), m.group(2) or m.group(1), m.group(3).strip()
        where = f"line {first}" if first == last else f"lines {first}–{last}"
        label = f"selected {where} of {_base(path)}"
        body = body.lstrip()[m.end():]
    elif tag == "ide_opened_file" and (m := _OPENED.search(body)):
        label = f"opened {_base(m.group(1).strip())}"
    return Context(label, body.strip("\n"), tag)


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or path


def events_folder_identity(main: str, events: str, order) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) standing for a session kept as a main file and a folder of event
    files each written once (OpenHands' stores): the main file's size and inode; the newest time of
    the main file and of the last event file (`order` sorts the names as the writer numbers them;
    the folder's own time is not used: a copied folder is new though its events are old), moved on
    by the number of event files, so that a new one reads as a change even within the clock's tick.
    None when the folder cannot be listed."""
    try:
        with os.scandir(events) as it:
            names = [e.name for e in it if e.name.endswith(".json") and not e.name.startswith(".")]
        st = os.stat(main)
        newest = st.st_mtime_ns
        if names:
            newest = max(newest, os.stat(os.path.join(events, max(names, key=order))).st_mtime_ns)
    except (OSError, ValueError):
        return None
    return st.st_size, newest + len(names) % 1_000_000, st.st_ino


def md_escape(text: str) -> str:
    """Untrusted words, on one line, for Markdown that is rendered: nothing in them marks up."""
    return re.sub(r"([\\`*_\[\]<>#!|])", r"\\\1", " ".join(text.split()))


def url_escape(url: str) -> str:
    """An address for a Markdown link's `<…>` destination (no space, no angle bracket in it)."""
    return url.strip().replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
