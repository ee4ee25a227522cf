"""OpenAI chat-completions message lists: `[{role, content, tool_calls, tool_call_id, ...}, ...]`.

The most common shape an agent saves its conversation in, so this is a generic adapter: it scores 1
for a plain `{role, content}` message (2 where only OpenAI writes a field: `tool_calls`,
`tool_call_id`, `function_call`, `reasoning_content`) and caps at 1 whenever a record carries fields
of a more specific format (MARSYS, AgentScope, Wolo, agentpress rows), so those win detection.

Shapes read:
* a bare JSON array of messages, JSONL with one message per line, or a document holding the list:
  mini-swe-agent trajectories `{"info", "messages", "trajectory_format", "instance_id"}` and early
  AgentPress thread files `threads/<uuid>.json` = `{"messages": [...]}`. The detected file layout
  decides JSONL vs document mode; `records(doc)` finds the list in a document.
* roles system / developer / user / assistant / tool / function, and any other role kept as written
  (mini-swe-agent ends with `exit`: the submitted patch, or the error that stopped the run).
* `content` as a string or a list of parts: text, image_url, input_audio, file, refusal, and the
  `reasoning` part LangChain's `convert_to_openai_messages` keeps (→ Thinking).
* `tool_calls` (parallel calls; `arguments` a JSON string, parsed for display, kept raw when it is
  not JSON; streamed deltas a writer kept unmerged — `id` and `name` null, a piece of `arguments`
  each, as early AgentPress threads hold them — joined onto the call before them) and the legacy
  single `function_call` (answered by a `function` message; the pair is
  linked by position, since the legacy API has no ids: the answer follows its call).
* `tool_call_id` (+ `name`) on tool messages → a ToolResult. An AgentPress `ToolResult(success=False`
  output and a mini-swe-agent command with a non-zero `returncode` or an `exception_info` are errors;
  so is, the format having no error flag, a result that is itself an error report (`{"error": …}`
  as JSON or a Python dict's str(): `common.error_content`).
* Responses API items mixed with messages (a conversation kept as `input` / `output` items):
  `function_call` / `custom_tool_call` / `shell_call` / … answered by their `…_output` items,
  `reasoning` (its summary) → Thinking, hosted calls (`web_search_call`, `code_interpreter_call`,
  `mcp_call`, …) → a call holding its own outcome (an MCP call named `mcp__<server>__<tool>`), a
  `program` (programmatic tool calling: JavaScript the model wrote) → a call answered by its
  `program_output`, the calls it made saying so (`caller`); `compaction`, `compaction_trigger`,
  `configuration_update` and `additional_tools` (what the client changed between turns) → notices; an
  `mcp_approval_request` is a call awaiting permission until its `mcp_approval_response` answers it
  (approved, or denied with the reason); `mcp_list_tools` lists the server's tools as its result.
  The Agents SDK's own failure outputs ("An error occurred while running the tool…", a timeout, "Tool
  execution was not approved.") are errors (the last one denied); a handoff's output
  `{"assistant": name}` reads "handed off to name", and what the model writes after it is that
  agent's (author `name`, until the next handoff: `_Handoffs` in a document, `follow` in
  JSONL: `to_input_list()` written one item per line, or the SDK's `SQLiteSession.get_items()`).
  Neither `to_input_list()` nor the SDK's session store (openai-agents 0.24.0) names the agent
  that speaks before the first handoff, so there it stays unnamed rather than guessed.
* the Agents SDK's RunState (`result.to_state().to_json()`, kept to resume a run): its
  `original_input`, then each run item's `raw_item` read as above, by the agent the item names
  (the one place the agent before the first handoff is named); a `tool_approval_item` (the run
  stopped for a `needs_approval` tool) leaves its call awaiting permission. Its model responses,
  usage and step bookkeeping stay in the raw document.
* Responses streaming event logs: the `response.*` events one per line (see the section below).
* conversations kept inside wrappers, many to a file: fine-tuning / preference / eval datasets,
  ShareGPT, Batch API input and output, `{request, response}` pairs and LiteLLM payloads — read by
  `wrapped` (one section per conversation, an API log's repeated history shown once).
* LangChain's own message serialisations (see `_langchain`): `messages_to_dict` `{type, data}`,
  `dumpd` `{lc, type: constructor, id, kwargs}` and a message's `model_dump()`, read as the chat
  message each one is; unlike `convert_to_openai_messages` they keep a ToolMessage's `status`, so an
  `"error"` one is a failed call.
* `tool_calls` of `type: custom` (`custom: {name, input}`, the input free-form text).
* `reasoning_content` (DeepSeek, vLLM), `reasoning` / `reasoning_details` (OpenRouter) and LiteLLM
  `thinking_blocks` → Thinking; assistant `audio` → Media plus its transcript; `refusal` → a notice
  and its text; the sources an answer cites (`annotations`) → one notice after it.
* mini-swe-agent's `extra`: the raw completion (`extra.response`: model, usage), `cost` (added to the
  usage), unix `timestamp`; tool messages' `extra.returncode` / `raw_output`. Other `timestamp` /
  `created_at` fields are read too.

mini-swe-agent's text-based agents (every 1.x agent; 2.x with `mini_textbased`) make their calls in
the answer's text, not `tool_calls`: document mode reads them as calls (`_Actions`), found by
the standard fences or by the run's own `action_regex` saved in `info.config`, when that has a
shape that cannot backtrack catastrophically (`_saved_action_regex`).

mini-swe-agent submits by running a command whose output starts with
`COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`: that call gets no tool message, the run ends with the `exit`
message instead. In document mode `records(doc)` links the two, so the exit message answers the call
(an error status answers it as an error) instead of leaving it pending forever. A turn with a
malformed call (arguments not JSON, another tool, no `command`) is not run at all: mini-swe-agent
writes a format-error user turn ("Tool call error: …", `extra.interrupt_type: FormatError`) instead
of tool messages, and that turn answers the turn's calls as errors.

Kept only in the raw view: `provider_specific_fields`, the raw completion beyond model and usage,
`extra.actions`, a trajectory's `info` (config, model stats), and every key no block shows (they stay
in `Event.meta`).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..model import ANSWERED, AWAITING, DENIED, UNAPPROVED, Data, Event, Media, Notice, Ref, Text, Thinking, \
    ToolResult, ToolUse
from . import streamed, wrapped
from .common import as_text, citation_words, error_content, first_time, generic_event, \
    media_block, model_and_usage, openai_tool_calls, parse_arguments, result_content, std_streams, \
    text_field, tool_lines

NAME = "openai-chat"
MODE = "document"

LIST_KEYS = ("messages", "history", "conversation", "chat", "trajectory")
_OPENAI_KEYS = {"tool_calls", "tool_call_id", "function_call", "reasoning_content", "refusal",
                "audio"}
# fields of more specific formats: a record holding any of them is at most "plausible" here
_FOREIGN = {"message_id", "metadata", "timestamp", "parts", "thread_id", "is_llm_message", "_type",
            "uuid", "sessionId", "session_id", "modelInfo", "metrics", "finish_reason", "sender"}
_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                     "document"}
_LIST_ITEM = re.compile(r"^\s*(\d+[.)]|[-*•])\s")
# the words mini-swe-agent's own configs (mini.yaml, mini_textbased.yaml) put before the task
_TASK_LEAD_IN = "Please solve this issue: "
Linked = streamed.Linked  # (kept here too: the formats that mark records import it from here)
_TAG_LINE = re.compile(r"^\s*</?[\w:-]+(\s[^>]*)?>\s*$")


def sniff(rec: Any) -> int:
    if (w := wrapped.sniff(rec, "openai")) is not None:
        return w  # a dataset line, a batch line, a logged API call (`wrapped`)
    if _langchain(rec) is not None:
        return 3
    if isinstance(rec, dict) and rec.get("role") is None and _item_type(rec):
        return 2
    if _stream_type(rec):
        return 3
    if not isinstance(rec, dict) or not isinstance(rec.get("role"), str):
        return 0
    if "content" not in rec and not ({"tool_calls", "function_call"} & rec.keys()):
        return 0
    content = rec.get("content")
    if isinstance(content, list) and any(isinstance(b, dict) and text_field(b, "type") in _ANTHROPIC_BLOCKS
                                         for b in content):
        return 0  # an Anthropic Messages list
    if _FOREIGN & rec.keys() or rec.get("type") not in (None, "message"):
        return 1
    if _OPENAI_KEYS & rec.keys() or rec["role"] in ("tool", "function"):
        return 2
    if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("image_url", "input_audio", "refusal")
            for b in content):
        return 2
    return 1


def records(doc: Any) -> list[tuple[str, Any]] | None:
    """The message list of a bare array or of a document holding one (mini-swe-agent, AgentPress);
    else a Responses request and / or response kept as one document (`input` items, then the
    `output` items the model answered with: a saved `Response` object has only `output`)."""
    found = wrapped.records(doc, "openai")
    if found is not None:
        return found
    if _run_state(doc):
        return streamed.whole(_run_state_stream(doc), "generated_items", doc.get("generated_items") or [])
    if isinstance(doc, list):
        found = [(f"[{i}]", r) for i, r in enumerate(doc)]
    elif isinstance(doc, dict):
        for key in LIST_KEYS:
            if isinstance(doc.get(key), list):
                found = [(f"{key}[{i}]", r) for i, r in enumerate(doc[key])]
                break
        else:
            found = [(f"{key}[{i}]", r) for key in ("input", "output")
                     if isinstance(doc.get(key), list) for i, r in enumerate(doc[key])]
    if not found or not any(isinstance(r, dict) and ("role" in r or _item_type(r)
                                                      or _langchain(r) is not None)
                            for _, r in found):
        return None
    links = _Links(doc)
    return [links.take(path, rec) for path, rec in found]


def stream(shell: Any, key: str) -> streamed.Streaming | None:
    """A big document's records one element of its list `key` at a time (formats/streamed.py): a
    RunState's `generated_items` (its `original_input` first), or a message list, marked as
    `records` marks them (`_Links`). None for anything else — a JSON array of wrappers (a
    dataset's conversations, an array of API calls: `wrapped`) stays read whole: one element makes
    a section and its messages, not one record, and an API call's records are what it adds to the
    conversation of the calls before it (its history, held by the reading), so its records cannot
    be rebuilt from its element alone by `streamed.how`. (The same in JSONL is read a line at a
    time: `wrapped.Fold`, `SessionIndex._read_lean`, `wrapped.replay`.)"""
    if _run_state(shell):
        return _run_state_stream(shell) if key == "generated_items" else None
    if key and not (isinstance(shell, dict) and key in LIST_KEYS and next(
            (k for k in LIST_KEYS if isinstance(shell.get(k), list)), None) == key):
        return None
    links = _Links(shell if key else None)
    return streamed.Streaming(take=lambda i, rec: links.take(streamed.path_of(key, i), rec))


def _mini_swe_agent(doc: Any) -> bool:
    return isinstance(doc, dict) and str(doc.get("trajectory_format", "")).startswith("mini-swe-agent")


def folder_document(path) -> dict | None:
    """A JSONL file of wrappers (dataset, batch or API call log lines) read as one document,
    read on as it grows (`wrapped`)."""
    return wrapped.lines_document(path)


def folds_lines(records: list) -> bool:
    """JSONL whose lines are wrappers is read as one document: one line holds many records."""
    return wrapped.folds(records)


def document_bonus(doc: Any) -> int:
    """mini-swe-agent names its trajectory format; the Agents SDK's RunState its schema."""
    return 3 if _mini_swe_agent(doc) or _run_state(doc) else 0


def _run_state(doc: Any) -> bool:
    """An Agents SDK RunState as `result.to_state().to_json()` / `state.to_string()` writes it (to
    resume a run later, e.g. after a tool approval): `{"$schemaVersion", "current_agent",
    "original_input", "model_responses", …, "generated_items": [RunItem…], "session_items", …}`
    — told by its first members (a big one's items lie past what detection reads of it)."""
    return isinstance(doc, dict) and "$schemaVersion" in doc and "current_agent" in doc \
        and isinstance(doc.get("generated_items", []), list)


def stream_list(doc: Any) -> str | None:
    """The list a big document's records are read from one element at a time, where its
    beginning may not show it: a RunState's `generated_items`, after its `model_responses`."""
    return "generated_items" if _run_state(doc) else None


def _agent_name(value: Any) -> str | None:
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) and name else None


def _run_state_stream(doc: dict) -> streamed.Streaming:
    """A RunState's conversation: its `original_input` (the user's text, or input items), then each
    generated run item's `raw_item` — the same item `to_input_list()` gives — with the name of the
    agent that made it (`agent: {name}`), which only the run's items keep: here the agent that
    speaks before the first handoff has its name too. A handoff item's `target_agent` names the
    agent after it, as its `{"assistant": name}` output does (`_Handoffs`)."""
    given = doc.get("original_input")
    head: list = [("original_input", {"role": "user", "content": given})] if isinstance(given, str) \
        else [(f"original_input[{i}]", r) for i, r in enumerate(given)] if isinstance(given, list) \
        else []
    handoffs = _Handoffs()
    head = [handoffs.take(path, rec) for path, rec in head]
    return streamed.Streaming(head, lambda i, item: handoffs.take(*_run_item(i, item)))


def _run_item(i: int, item: Any) -> tuple[str, Any]:
    """The record of a RunState's generated item i: its raw item, marked with its agent."""
    raw = item.get("raw_item") if isinstance(item, dict) else None
    if not isinstance(raw, dict):
        return f"generated_items[{i}]", item  # kept as it is: a card of its own
    if item.get("type") == "tool_approval_item":
        return f"generated_items[{i}]", item  # not a second call: `_approval`
    agent = _agent_name(item.get("agent"))
    spoken = _spoken(raw)
    beside = _beside(item, raw)
    return (f"generated_items[{i}].raw_item",
            Linked(raw, None, agent if spoken else None, beside=beside) if spoken or beside else raw)


# the run items the Agents SDK writes (agents/items.py, run_state.py), whose fields beside their
# raw item are copies of it or bookkeeping (a call's tool_name and description, a tool output's
# value before it was made text, a handoff's agents)
_RUN_ITEMS = frozenset(("message_output_item", "handoff_call_item", "handoff_output_item",
                        "tool_call_item", "tool_call_output_item", "reasoning_item",
                        "mcp_list_tools_item", "mcp_approval_request_item",
                        "mcp_approval_response_item", "tool_approval_item", "compaction_item"))


def _beside(item: dict, raw: dict) -> dict | None:
    """A RunState item of a type newer than these readers: its own fields (an `output` the item
    keeps beside its raw item) that the raw item does not hold, shown with it, not lost."""
    if isinstance(item.get("type"), str) and item["type"] in _RUN_ITEMS:
        return None
    rest = {k: v for k, v in item.items() if k not in ("raw_item", "agent", "type") and raw.get(k) != v}
    return {"type": item.get("type"), **rest} if rest else None


class _Links:
    """The marks `records` gives a message list's records, one record at a time, in order:
    mini-swe-agent's text-based commands and their observations (`_Actions`, a trajectory's own),
    an `exit` after calls nothing answered (`_Exits`), and the agent a handoff passed the turn to
    (`_Handoffs`). What each keeps of the records before is a few of their ids and names."""

    def __init__(self, doc: Any):
        self.actions = _Actions(_saved_action_regex(doc)) if _mini_swe_agent(doc) else None
        self.exits, self.handoffs = _Exits(), _Handoffs()

    def take(self, path: str, rec: Any) -> tuple[str, Any]:
        if self.actions is not None:
            path, rec = self.actions.take(path, rec)
        return self.handoffs.take(*self.exits.take(path, rec))


class _Exits:
    """An `exit` message right after an assistant turn whose calls got no tool message answers
    them; so does mini-swe-agent's format-error turn (a `user` message with `extra.interrupt_type:
    "FormatError"`, "Tool call error: …"), which it writes instead of running any of the turn's
    calls when one of them is malformed (bad JSON arguments, another tool, no `command`): those
    calls failed, with that message as their result, rather than staying unanswered."""

    def __init__(self):
        self.prev: Any = None
        self.first = True

    def take(self, path: str, rec: Any) -> tuple[str, Any]:
        prev, self.prev = self.prev, rec
        first, self.first = self.first, False
        if not isinstance(rec, dict) or first:
            return path, rec
        extra = rec.get("extra") if isinstance(rec.get("extra"), dict) else {}
        exit_ = rec.get("role") == "exit"
        if not (exit_ or (rec.get("role") == "user" and extra.get("interrupt_type") == "FormatError")):
            return path, rec
        if not (isinstance(prev, dict) and prev.get("role") == "assistant"):
            return path, rec
        calls = [b.id for b in openai_tool_calls(prev.get("tool_calls")) if b.kind == "tool_use"]
        calls += [cid for cid, _ in getattr(prev, "calls", None) or ()]  # (text actions: `_Actions`)
        if not calls:
            return path, rec
        failed = extra.get("exit_status") not in (None, "Submitted") if exit_ else True
        return path, Linked(rec, [(c, failed) for c in calls])


_ACTION = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
# mini-swe-agent's observation template (every version): what a command did, as the model saw it
_OBSERVED = re.compile(r"(?:<exception>(.*?)</exception>\n)?<returncode>(-?\d+)</returncode>\n"
                       r"<output>\n?(.*)</output>\s*", re.DOTALL)
_TIMED_OUT = "The last command <command>"
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")


def _saved_action_regex(doc: dict) -> re.Pattern | None:
    """The `action_regex` a trajectory's run was configured with, when it is not one of the two
    standard fences: `save_traj` keeps the config in `info.config` (1.x: the agent's, `agent.
    action_regex`; 2.x: the text-based model's, `model.action_regex` — 2.x also lists each answer's
    commands in `extra.actions`, read first). The pattern comes from the file, so it is run only
    when it has the shape every mini-swe-agent config gives it (`<bash_code>(.*?)</bash_code>`,
    a fence of another language): one capture group of a single repeated character, the rest
    literals, character classes, alternatives of those and at most two more single-character
    repeats, nothing nested — no pattern that can backtrack catastrophically. One that does not
    compile, or has another shape, is not read (the fences still are)."""
    info = doc.get("info")
    config = info.get("config") if isinstance(info, dict) else None
    if not isinstance(config, dict):
        return None
    for part in ("agent", "model"):
        saved = config.get(part).get("action_regex") if isinstance(config.get(part), dict) else None
        if isinstance(saved, str) and saved not in _STANDARD_REGEXES:
            return _safe_action_regex(saved)
    return None


# the patterns `_ACTION` covers: mini-swe-agent's 1.x and 2.x defaults
_STANDARD_REGEXES = {r"```bash\s*\n(.*?)\n```", r"```mswea_bash_command\s*\n(.*?)\n```",
                     r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```"}
_MAX_SAVED_REGEX = 300  # characters of a saved pattern
_MAX_ACTION_TEXT = 100_000  # characters of an answer a saved pattern is run on


def _safe_action_regex(pattern: str) -> re.Pattern | None:
    from re import _constants as c, _parser as sre  # the stdlib's own parser: the shape it compiles

    if len(pattern) > _MAX_SAVED_REGEX:
        return None
    try:
        parsed = sre.parse(pattern, re.DOTALL)
        compiled = re.compile(pattern, re.DOTALL)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    simple = {c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY}

    def plain(items) -> bool:  # literals, classes and alternatives of them, nothing repeated
        for op, av in items:
            if op in simple or op == c.AT:
                continue
            if op == c.BRANCH and all(plain(alt) for alt in av[1]):
                continue
            if op == c.SUBPATTERN and av[0] is None and plain(av[3]):
                continue
            return False
        return True

    def single_repeat(op, av) -> bool:  # `x*`, a class's `+`, `.*?`, `[^<]{0,9}`: one character
        return op in (c.MAX_REPEAT, c.MIN_REPEAT) and len(av[2]) == 1 and av[2][0][0] in simple

    groups = repeats = 0
    for op, av in parsed:
        if op == c.SUBPATTERN and av[0] is not None:  # the capture: one repeated character
            body = list(av[3])
            if len(body) != 1 or not single_repeat(*body[0]):
                return None
            groups += 1
        elif single_repeat(op, av):
            repeats += 1
        elif not plain([(op, av)]):
            return None
    return compiled if groups == 1 == compiled.groups and repeats <= 2 else None


class _Actions:
    """mini-swe-agent's text-based agents (every 1.x agent; 2.x with `mini_textbased`) make their one
    call per answer as a fenced block in its text (```bash, 2.x ```mswea_bash_command; 2.x also lists
    it in `extra.actions`), and what the command did comes back as the next user message: its
    `<returncode>` and output, a timeout, or (1.x) the submission. The agent pairs them by position;
    so do we: the answer gets the call, the user message becomes its result. A user message that
    answers no call (the task, a format error after an answer with two blocks) stays the user's.
    `saved` is the run's own `action_regex` when it was not a standard fence."""

    def __init__(self, saved: re.Pattern | None = None):
        self.saved = saved
        self.pending: list = []  # the ids of the last answer's calls no observation has taken yet

    def take(self, path: str, rec: Any) -> tuple[str, Any]:
        if self.pending:  # 2.x: one observation per action, in order
            if isinstance(rec, dict) and rec.get("role") == "user" and not _extra(rec).get("interrupt_type"):
                return path, Linked(rec, [(self.pending.pop(0), _failed_action(rec))])
            self.pending = []
        if not (isinstance(rec, dict) and rec.get("role") == "assistant") or rec.get("tool_calls"):
            return path, rec
        commands = _text_actions(rec, self.saved)
        if not commands:
            return path, rec
        calls = [(f"{path}.action{k}" if len(commands) > 1 else f"{path}.action", c)
                 for k, c in enumerate(commands)]
        self.pending = [cid for cid, _ in calls]
        return path, Linked(rec, calls=calls, action=self.saved)


def _text_actions(rec: dict, saved: re.Pattern | None = None) -> list[str]:
    """The commands of a text-based answer: 2.x's `extra.actions`, else the one block the 1.x
    agent runs — found by the run's own `saved` pattern, else by the standard fences — (none when
    there are more: that answer was a format error)."""
    actions = _extra(rec).get("actions")
    if isinstance(actions, list) and actions:
        commands = [a.get("command") if isinstance(a, dict) else None for a in actions]
        return commands if all(isinstance(c, str) for c in commands) else []
    content = rec.get("content")
    if not isinstance(content, str) or (saved is not None and len(content) > _MAX_ACTION_TEXT):
        return []
    blocks = (saved or _ACTION).findall(content)
    return [blocks[0].strip()] if len(blocks) == 1 else []


def _failed_action(rec: dict) -> bool | None:
    """Whether a command's observation says it failed: a non-zero return code, an exception, a
    timeout; None (completed) for its output otherwise, or the 1.x submission."""
    extra = _extra(rec)
    code = extra.get("returncode")
    if extra.get("exception_info") or (isinstance(code, int) and not isinstance(code, bool) and code != 0):
        return True
    content = rec.get("content")
    if isinstance(content, str) and "returncode" not in extra:
        if content.startswith((_TIMED_OUT, "<exception>")):
            return True
        if (m := _RETURNCODE.match(content)) and m[1] != "0":
            return True
    return None


def _observed(content: Any) -> list:
    """A command's result blocks: mini-swe-agent's `<returncode>` / `<output>` wrapper taken off (its
    exit code said first when it is not 0, with the exception when there is one); anything else (a
    long output's head and tail, a timeout) as it is."""
    m = _OBSERVED.fullmatch(content) if isinstance(content, str) else None
    if m is None:
        return result_content(content)
    exception, code, output = m.groups()
    head = "\n".join(x for x in (f"exit code {code}" if code != "0" else "", exception or "") if x)
    return result_content(f"{head}\n{output}" if head else output)


def _extra(rec: dict) -> dict:
    extra = rec.get("extra")
    return extra if isinstance(extra, dict) else {}


class _Handoffs:
    """After an Agents SDK handoff (a `transfer_to_…` call answered `{"assistant": name}`) the
    agent it handed off to speaks: its messages, thoughts and calls, up to the next handoff, are
    marked with its name. `to_input_list()` names no agent anywhere else, so what precedes the
    first handoff stays unnamed. (JSONL is read line by line: `follow` does the same there.)"""

    def __init__(self):
        self.agent: str | None = None

    def take(self, path: str, rec: Any) -> tuple[str, Any]:
        if not isinstance(rec, dict):
            return path, rec
        if rec.get("type") == "function_call_output" and (to := _handed_to(rec.get("output"))):
            self.agent = to
        elif getattr(rec, "agent", None):
            self.agent = rec.agent  # a RunState's item names its agent (and so who speaks next)
        elif self.agent and _spoken(rec):
            return path, Linked(rec, getattr(rec, "links", None), self.agent, getattr(rec, "calls", None),
                                beside=getattr(rec, "beside", None))
        return path, rec


def follow(ev: Event, carried: dict) -> None:
    """JSONL (one item per line: `to_input_list()` written line by line, or `SQLiteSession`'s
    `get_items()`): what `_Handoffs` does for a document, one line at a time as the index
    reads them. A handoff's output names the agent that speaks after it (`carried["agent"]`, kept
    between passes); the model's items that follow, up to the next handoff, are that agent's."""
    if ev.role == "assistant":
        if ev.author is None and carried.get("agent"):
            ev.author = carried["agent"]
    elif ev.role == "tool" and isinstance(meta := ev.meta, dict) \
            and meta.get("type") == "function_call_output" and (to := _handed_to(meta.get("output"))):
        carried["agent"] = to


def event(rec: Any, ref: Ref) -> Event:
    ev = _event(rec, ref)
    if beside := getattr(rec, "beside", None):  # a newer RunState item's own fields (`_beside`)
        ev.blocks.append(Data(beside, f"{as_text(beside.get('type'))} (the run item's own fields)"))
    return ev


def _event(rec: Any, ref: Ref) -> Event:
    if isinstance(rec, wrapped.Wrapped):
        return wrapped.event(rec, ref, event, NAME)
    if (message := _langchain(rec)) is not None:
        return event(message, ref)
    if t := _stream_type(rec):
        return _stream_event(t, rec, ref)
    if isinstance(rec, dict) and (t := _item_type(rec)) and (
            rec.get("role") is None or t == "additional_tools"):  # (the one item with a role)
        ev = _item(t, rec, ref)
        _common(ev, rec)
        return ev
    if isinstance(rec, dict) and rec.get("role") is None and (t := _newer_item(rec)):
        ev = _item(t, rec, ref)
        # (what the item holds beside what was read: a call's other fields are its input,
        # unless it names its arguments or input)
        given = t in _OUTPUTS or "arguments" in rec or "input" in rec
        if given and (rest := {k: v for k, v in rec.items() if k not in _BOOKKEEPING}):
            ev.blocks.append(Data(rest, str(rec["type"])))
        outcome = [rec[k] for k in ("output", "outputs", "results", "result") if rec.get(k)]
        if t not in _OUTPUTS and (outcome or rec.get("error")):  # a call that holds its outcome
            blocks = [b for value in outcome for b in _item_output(value)[0]]
            blocks += _hosted_error(rec["error"]) if rec.get("error") else []
            ev.blocks.append(ToolResult(rec["call_id"], blocks, True if rec.get("error") else None))
        _common(ev, rec)
        return ev
    if not isinstance(rec, dict) or not isinstance(rec.get("role"), str):
        if isinstance(rec, dict) and rec.get("type") == "tool_approval_item" \
                and isinstance(rec.get("raw_item"), dict):
            return _approval(rec, ref)
        return generic_event(rec, ref, NAME)
    role = rec["role"]
    ev = Event(ref, "system" if role == "developer" else role, format=NAME)
    content = rec.get("content")
    if role in ("tool", "function"):
        _tool_result(ev, rec, ref)
    elif role == "user" and getattr(rec, "links", None) and not _extra(rec).get("interrupt_type"):
        (call, failed), = rec.links  # a text-based command's observation (`_Actions`)
        ev.role, ev.kind = "tool", "tool_result"
        ev.blocks = [ToolResult(call, _observed(content), failed)]
    elif role == "user" and _extra(rec).get("interrupt_type") == "FormatError" \
            and not getattr(rec, "links", None) \
            and isinstance(answer := _extra(rec).get("model_response"), str):
        # mini-swe-agent 2.x keeps the answer it would not run only here, beside its reply
        ev.blocks = [Notice("format error: the model's answer, not run"), *content_blocks(answer),
                     Notice("mini-swe-agent's reply"), *content_blocks(content)]
    elif role == "exit":
        _exit(ev, rec)
    elif getattr(rec, "links", None):  # mini-swe-agent's format error answering a turn's calls
        ev.role, ev.kind = "tool", "tool_result"
        text = content_blocks(content, markdown=False)
        ev.blocks = [ToolResult(call, text, True) for call, _ in rec.links]
    else:
        calls = getattr(rec, "calls", None)
        action = getattr(rec, "action", None) or _ACTION
        if calls and isinstance(content, str) and (action is _ACTION or len(content) <= _MAX_ACTION_TEXT) \
                and len(action.findall(content)) == 1:
            content = action.sub("", content).strip()  # (the call's card shows the command)
        ev.blocks = thinking_blocks(rec) + content_blocks(content, markdown=role != "system")
        if sources := _cited(rec.get("annotations"), content):
            ev.blocks.append(Notice(citation_words(sources), sources))
        if isinstance(rec.get("refusal"), str) and rec["refusal"]:
            ev.blocks += [Notice("the model refused"), Text(rec["refusal"])]
        if isinstance(rec.get("audio"), dict):
            ev.blocks += _audio(rec["audio"])
        ev.blocks += openai_tool_calls(rec.get("tool_calls"))
        ev.blocks += [ToolUse(cid, "bash", {"command": command}) for cid, command in calls or ()]
        fc = rec.get("function_call")
        if isinstance(fc, dict) and not rec.get("tool_calls"):
            args, raw = parse_arguments(fc.get("arguments"))
            name = str(fc.get("name") or "?")
            ev.blocks.append(ToolUse(f"{name}@{ref.line}", name, args, raw))
        if isinstance(rec.get("name"), str) and rec["name"] and role in ("user", "assistant"):
            ev.author = rec["name"]
        if not ev.blocks and role not in _ROLES:
            # a role of a newer writer's (a critic's verdict, a judge's score) with nothing the
            # blocks above read: what it holds, not an empty message
            rest = {k: v for k, v in rec.items() if k not in _SAID}
            if rest:
                ev.blocks = [Data(rest, role)]
    _common(ev, rec)
    return ev


_ROLES = frozenset(("system", "developer", "user", "assistant"))  # (and the tool's, read above)
# what a message's card says without a block: its role, author, time, id, model and usage (`_common`)
_SAID = frozenset(("role", "content", "name", "timestamp", "created_at", "created", "id", "message_id",
                   "model", "usage"))


def _approval(rec: dict, ref: Ref) -> Event:
    """A RunState's `tool_approval_item`: the run stopped because a tool `needs_approval`; its call
    (the same `raw_item`, shown by the `tool_call_item` before it) awaits the app's answer, which
    a resumed run's output gives."""
    raw = rec["raw_item"]
    call = str(raw.get("call_id") or raw.get("id") or "")
    name = as_text(raw.get("name") or rec.get("tool_name") or "a tool")
    agent = _agent_name(rec.get("agent"))
    ev = Event(ref, "system", "permission", author=agent, format=NAME,
               blocks=[Notice(f"the run waits for approval to run {name}")])
    if call:
        ev.states[call] = AWAITING
    ev.meta = {k: v for k, v in rec.items() if k != "raw_item"}
    return ev


def content_blocks(content: Any, *, markdown: bool = True) -> list:
    """OpenAI `content`: a string, or a list of parts (text, image_url, input_audio, file, refusal)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content, markdown)] if content.strip() else []
    if not isinstance(content, list):
        return [Data(content, "content")]
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(Text(part, markdown))
            continue
        if not isinstance(part, dict):
            out.append(Data(part))
            continue
        t = part.get("type")
        if t in ("text", "input_text", "output_text") or (t is None and "text" in part):
            text = part.get("text")
            out.append(Text(text if isinstance(text, str) else as_text(text), markdown))
        elif t in ("image_url", "input_image", "image"):
            out.append(media_block(part, "image"))
        elif t == "input_audio":
            audio = part.get("input_audio") if isinstance(part.get("input_audio"), dict) else {}
            fmt = audio.get("format")
            data = audio.get("data") if isinstance(audio.get("data"), str) else None
            out.append(Media("audio", f"audio/{fmt}" if fmt else None, data))
        elif t == "input_file":  # Responses: {file_data | file_url | file_id, filename}
            m = media_block({"image_url": part.get("file_data") or part.get("file_url")}, "document")
            m.name = part.get("filename") or part.get("file_id")
            out.append(m)
        elif t == "file":
            f = part.get("file") if isinstance(part.get("file"), dict) else {}
            data = f.get("file_data") if isinstance(f.get("file_data"), str) else None
            m = media_block({"image_url": data} if data else {}, "document")
            m.name = f.get("filename") or f.get("file_id")
            out.append(m)
        elif t == "refusal":
            out += [Notice("the model refused"), Text(as_text(part.get("refusal")), markdown)]
        elif t == "reasoning" and (thoughts := _reasoning(part)):
            out += thoughts
        else:
            out.append(Data(part, str(t)))
    return out


def _reasoning(rec: dict) -> list:
    """The thoughts of a Responses `reasoning` item — or of LangChain's reasoning content part,
    which `convert_to_openai_messages` keeps in an assistant's content: its own `{type: reasoning,
    reasoning}` or the Responses item as it was. Summary / content texts, or one sealed Thinking
    for an encrypted one; [] when it holds none (a part is then kept as data). An item of a kind
    other than `summary_text` / `reasoning_text` is never dropped: its text as thoughts when it
    carries one, else its data under its type."""
    if isinstance(rec.get("reasoning"), str):
        out = [Thinking(rec["reasoning"])] if rec["reasoning"].strip() else []
    else:
        out = []
        for key in ("summary", "content"):
            for p in rec[key] if isinstance(rec.get(key), list) else ():
                text = p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None
                if isinstance(text, str):
                    if text.strip():
                        out.append(Thinking(text))
                elif p is not None:
                    t = p.get("type") if isinstance(p, dict) else None
                    out.append(Data(p, f"reasoning {key}: {t}" if isinstance(t, str) else f"reasoning {key}"))
    return out or ([Thinking("", True, None)] if rec.get("encrypted_content") else [])


def _cited(annotations: Any, content: Any) -> list:
    """The web pages / files an answer cites: chat `annotations: [{type: url_citation,
    url_citation: {url, title}}]`, or Responses output_text parts' `annotations: [{type:
    url_citation, url, title} | {type: file_citation, filename}]` (openai-python
    types/chat/chat_completion_message.py, types/responses/response_output_text.py)."""
    found = list(annotations) if isinstance(annotations, list) else []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and isinstance(part.get("annotations"), list):
            found += part["annotations"]
    out = []
    for a in found:
        if isinstance(a, dict):
            inner = a.get(a.get("type")) if isinstance(a.get(a.get("type")), dict) else a
            out.append({"title": inner.get("title") or inner.get("filename"), "url": inner.get("url")})
    return out


def thinking_blocks(rec: dict) -> list:
    """`thinking_blocks` (LiteLLM), else `reasoning_content` / `reasoning`, else `reasoning_details`
    (OpenRouter) → Thinking (a thinking block of a type not known here: a card of what it holds)."""
    out = []
    blocks = rec.get("thinking_blocks")
    if isinstance(blocks, list) and blocks:
        for b in blocks:
            if isinstance(b, dict) and b.get("type") == "redacted_thinking":
                out.append(Thinking("", True, b.get("data")))
            elif isinstance(b, dict) and (b.get("type") in (None, "thinking") or "thinking" in b):
                out.append(Thinking(as_text(b.get("thinking")), False, b.get("signature")))
            elif b is not None:  # a block of a type not known here: what it holds
                t = b.get("type") if isinstance(b, dict) else None
                out.append(Data(b, t if isinstance(t, str) and t else "thinking block"))
        return out
    for key in ("reasoning_content", "reasoning"):
        text = rec.get(key)
        if isinstance(text, str) and text.strip():
            return [Thinking(text)]
    # OpenRouter's `reasoning_details`: reasoning.text / reasoning.summary / reasoning.encrypted
    for d in rec.get("reasoning_details") if isinstance(rec.get("reasoning_details"), list) else ():
        if not isinstance(d, dict):
            continue
        text = d.get("text") if isinstance(d.get("text"), str) else d.get("summary")
        if isinstance(text, str) and text.strip():
            out.append(Thinking(text))
        elif d.get("type") == "reasoning.encrypted":
            out.append(Thinking("", True, None))
    return out


def _audio(audio: dict) -> list:
    """An assistant's spoken reply: its sound and transcript, or — as a conversation sent back to
    the API keeps it (openai-python types/chat/chat_completion_assistant_message_param.py
    `Audio: {id}`) — only the id of the audio OpenAI holds."""
    out: list = []
    if isinstance(audio.get("data"), str):
        out.append(Media("audio", "audio/wav", audio["data"]))
    if isinstance(audio.get("transcript"), str) and audio["transcript"]:
        out.append(Text(audio["transcript"]))
    if not out and isinstance(audio.get("id"), str) and audio["id"] and set(audio) <= {"id", "expires_at"}:
        return [Notice(f"spoken reply {audio['id']}: its sound and words are kept by OpenAI, not in this "
                       "file", audio)]
    return out or [Data(audio, "audio")]


def _tool_result(ev: Event, rec: dict, ref: Ref) -> None:
    ev.role, ev.kind = "tool", "tool_result"
    content = rec.get("content")
    if rec["role"] == "function":
        call = f"{rec.get('name') or '?'}@{ref.line - 1}"
    else:
        call = str(rec.get("tool_call_id") or "")
    blocks = _observed(content)
    extra = _extra(rec)
    error = None
    if isinstance(content, str) and content.startswith("ToolResult(success=False"):
        error = True
    if extra.get("exception_info") or (isinstance(extra.get("returncode"), int)
                                       and not isinstance(extra.get("returncode"), bool)
                                       and extra["returncode"] != 0):
        error = True
    status = rec.get("status")  # a LangChain ToolMessage's (`_langchain`): "success" | "error"
    if status == "error":
        error = True
    elif error is None and "returncode" not in extra and status != "success" \
            and error_content(content):
        error = True  # no flag in the format: a result that is an error report is one
    state = _sdk_failure(content)
    ev.blocks = [ToolResult(call, blocks, True if state else error, state=_NAMED.get(state))]


# --- LangChain messages ------------------------------------------------------------------------
# langchain-core's BaseMessage subclasses (langchain_core/messages/), as its own code writes them:
# `messages_to_dict` → `{type, data: model_dump()}`, `dumpd(m)` → `{lc: 1, type: "constructor", id:
# ["langchain", "schema", "messages", "ToolMessage"], kwargs: {the fields set}}` (LangGraph
# checkpoints, LangSmith runs), or `model_dump()` itself: `{content, additional_kwargs,
# response_metadata, type, name, id, …}`. Each is turned into the chat message it stands for.
_LC_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool",
             "function": "function", "chat": None}
_LC_CLASSES = {f"{cls}{chunk}": kind for cls, kind in (
    ("HumanMessage", "human"), ("AIMessage", "ai"), ("SystemMessage", "system"),
    ("ToolMessage", "tool"), ("FunctionMessage", "function"), ("ChatMessage", "chat"))
    for chunk in ("", "Chunk")}


def _langchain(rec: Any) -> dict | None:
    """A LangChain message record as the chat message it is, or None when `rec` is not one."""
    if not isinstance(rec, dict) or "role" in rec:
        return None
    t = rec.get("type")
    if t == "constructor" and rec.get("lc") == 1 and isinstance(rec.get("kwargs"), dict):
        path = rec.get("id")
        name = path[-1] if isinstance(path, list) and path and isinstance(path[-1], str) else None
        kind, fields = _LC_CLASSES.get(name), rec["kwargs"]
    elif not isinstance(t, str):
        return None
    elif isinstance(rec.get("data"), dict) and len(rec) == 2:  # messages_to_dict
        kind, fields = _LC_CLASSES.get(t, t), rec["data"]
    elif "content" in rec and ("additional_kwargs" in rec or "response_metadata" in rec):
        kind, fields = _LC_CLASSES.get(t, t), rec  # model_dump (a chunk's type is its class name)
    else:
        return None
    if kind not in _LC_ROLES or "content" not in fields:
        return None
    extra = fields.get("additional_kwargs") if isinstance(fields.get("additional_kwargs"), dict) else {}
    # older LangChain kept the provider's own fields (tool_calls, function_call, reasoning_content)
    # in additional_kwargs: they are read as the chat message's
    out = {k: v for k, v in extra.items() if k in _OPENAI_KEYS or k in ("reasoning", "thinking_blocks")}
    role = _LC_ROLES[kind] or fields.get("role")
    out["role"] = role if isinstance(role, str) and role else kind
    out["content"] = _langchain_content(fields["content"], fields.get("tool_calls"))
    for key in ("name", "id", "tool_call_id", "status"):
        if fields.get(key) is not None:
            out[key] = fields[key]
    calls = [{"id": c.get("id"), "type": "function",
              "function": {"name": c.get("name"), "arguments": c.get("args")}}
             for key in ("tool_calls", "invalid_tool_calls") if isinstance(fields.get(key), list)
             for c in fields[key] if isinstance(c, dict)]
    if calls:
        out["tool_calls"] = calls
    meta = fields.get("response_metadata") if isinstance(fields.get("response_metadata"), dict) else {}
    if isinstance(meta.get("model_name") or meta.get("model"), str):
        out["model"] = meta.get("model_name") or meta.get("model")
    if isinstance(fields.get("usage_metadata"), dict):
        out["usage"] = fields["usage_metadata"]
    return out


def _langchain_content(content: Any, calls: Any) -> Any:
    """An AIMessage's content as a chat message's: a provider's own blocks kept there (Anthropic's
    thinking / redacted_thinking, as langchain-anthropic's `_format_output` keeps them) read as
    reasoning, and a `tool_use` / v1 `tool_call` block dropped when `tool_calls` holds the same
    call (the call is shown once, from there; the raw view keeps the block)."""
    if not isinstance(content, list):
        return content
    ids = {c.get("id") for c in calls if isinstance(c, dict)} if isinstance(calls, list) else set()
    out = []
    for part in content:
        t = part.get("type") if isinstance(part, dict) else None
        if t == "thinking" and isinstance(part.get("thinking"), str):
            out.append({"type": "reasoning", "reasoning": part["thinking"]})
        elif t == "redacted_thinking":
            out.append({"type": "reasoning", "encrypted_content": part.get("data") or True})
        elif t in ("tool_use", "tool_call") and part.get("id") in ids:
            continue
        else:
            out.append(part)
    return out


# --- Responses API items -------------------------------------------------------------------------
# A Responses conversation (`input` / `output` item lists, the Agents SDK's `to_input_list()`) mixes
# messages `{type: message, role, content}` with items that have no role. Shapes from
# openai/openai-python src/openai/types/responses/ (response_function_tool_call.py,
# response_input_item_param.py FunctionCallOutput, response_custom_tool_call*.py,
# response_reasoning_item.py, response_output_item.py, response_compaction_item.py).

# calls the client runs and answers with a `…_output` item (their `status` is the item's, not
# the run's); a `program` is the JavaScript the model wrote for programmatic tool calling
# (response_output_item.py Program, ProgramOutput: its `result`), the calls it makes naming it
# their `caller`
_CLIENT_CALLS = {"function_call", "custom_tool_call", "computer_call", "local_shell_call",
                 "shell_call", "apply_patch_call", "program"}
# tools the API runs itself: `status` is the run's, and the outcome (if any) sits in the item
_HOSTED_CALLS = {"web_search_call", "file_search_call", "code_interpreter_call",
                 "image_generation_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
                 "tool_search_call"}
_OUTPUTS = {f"{c}_output" for c in _CLIENT_CALLS} | {"tool_search_output"}
# what the client says to the API between turns (response_input_item.py): tools made available
# from here on, settings changed from here on, a compaction asked for
_SETTINGS = {"additional_tools", "configuration_update", "compaction_trigger"}
_ITEMS = _CLIENT_CALLS | _HOSTED_CALLS | _OUTPUTS | _SETTINGS | {
    "reasoning", "compaction", "item_reference", "mcp_approval_response"}
_SPOKEN = _CLIENT_CALLS | _HOSTED_CALLS | {"reasoning"}  # items the model (an agent) writes
_BOOKKEEPING = {"type", "id", "call_id", "status", "name", "arguments", "input", "output",
                "outputs", "results", "result", "error", "tools", "caller", "fingerprint"}
# what the Agents SDK (openai-agents, src/agents/tool.py) answers for a function call that did not
# give a result: the exception (`default_tool_error_function`; before 0.1x followed by "Error: …"),
# a timeout, or the user's refusal (DEFAULT_APPROVAL_REJECTION_MESSAGE)
_SDK_FAILED = re.compile(r"An error occurred while running the tool\.|Tool '[^'\n]*' timed out after ")
_SDK_REFUSED = "Tool execution was not approved."
# the output of a handoff's `transfer_to_<agent>` call (agents/handoffs: `get_transfer_message`)
_SDK_HANDOFF = re.compile(r'\{"assistant": ("(?:[^"\\]|\\.)*")\}')


def _handed_to(output: Any) -> str | None:
    """The agent a handoff's output names (the Agents SDK writes `{"assistant": "<agent>"}`)."""
    if not (isinstance(output, str) and (m := _SDK_HANDOFF.fullmatch(output))):
        return None
    try:
        return str(orjson.loads(m[1])) or None
    except orjson.JSONDecodeError:  # the pattern lets through what JSON does not (a raw tab)
        return None


def _spoken(rec: dict) -> bool:
    """Whether an item is the model's (an agent's) own: an assistant message, a call, reasoning."""
    t = rec.get("type")
    return rec.get("role") == "assistant" or (rec.get("role") is None and isinstance(t, str) and t in _SPOKEN)
_NAMED = {"denied": DENIED}


def _sdk_failure(content: Any) -> str | None:
    """"failed" / "denied" when a call's output is the Agents SDK's own failure text."""
    if not isinstance(content, str):
        return None
    if content.strip() == _SDK_REFUSED:
        return "denied"
    return "failed" if _SDK_FAILED.match(content) else None


def _item_type(rec: dict) -> str | None:
    t = rec.get("type")
    return t if isinstance(t, str) and t in _ITEMS else None


def _newer_item(rec: dict) -> str | None:
    """The item type an item of a type newer than these readers is read as, when its name and its
    `call_id` say what it is (the API adds a `…_call` and its `…_call_output` with each new client
    tool: local shell, custom tool, shell, apply patch): an output is its call's result, paired
    with it, and a call a call card with its other fields as input; else None (a data card)."""
    t = rec.get("type")
    if not isinstance(t, str) or t in _ITEMS or not isinstance(rec.get("call_id"), str) or not rec["call_id"]:
        return None
    if t.endswith("_output"):
        return "function_call_output"
    if t.endswith("_call"):
        return "custom_tool_call" if "input" in rec and "arguments" not in rec else "function_call"
    return None


def _item(t: str, rec: dict, ref: Ref) -> Event:
    if t == "reasoning":
        return Event(ref, "assistant", blocks=_reasoning(rec))
    if t in _OUTPUTS:
        call = str(rec.get("call_id") or rec.get("id") or "")  # local_shell_call_output: `id`
        blocks, failed = _item_output(rec.get("output", rec.get("result")))  # (a program's: `result`)
        if t == "program_output" and rec.get("status") == "incomplete":
            blocks, failed = [Notice("the program did not complete"), *blocks], True
        if to := _handed_to(rec.get("output")):
            blocks = [Notice(f"handed off to {to}")]
        elif t == "tool_search_output" and isinstance(rec.get("tools"), list):
            # the tool definitions the search loaded (openai-python types/responses/
            # response_tool_search_output_item.py): their names, not an empty result
            blocks = [Notice("tools loaded"), tool_lines(rec["tools"])]
        error = True if failed or rec.get("status") == "failed" else None
        if error is None and isinstance(rec.get("output"), str) and error_content(rec["output"]):
            error = True
        state = _sdk_failure(rec.get("output"))
        return Event(ref, "tool", "tool_result", blocks=[
            ToolResult(call, blocks, True if state else error, state=_NAMED.get(state))])
    if t == "mcp_approval_response":  # the app's answer to an `mcp_approval_request`
        call = str(rec.get("approval_request_id") or "")
        reason = [Text(rec["reason"], markdown=False)] if isinstance(rec.get("reason"), str) else []
        result = ToolResult(call, [Notice("approved")] + reason) if rec.get("approve") is True else \
            ToolResult(call, [Notice("not approved")] + reason, True, state=DENIED)
        return Event(ref, "tool", "tool_result", blocks=[result])
    if t in _CLIENT_CALLS or t in _HOSTED_CALLS:
        cid = str(rec.get("call_id") or rec.get("id") or f"{t}@{ref.line}")
        name = str(rec.get("name") or str(rec.get("type") or t).removesuffix("_call"))
        raw = None
        if "arguments" in rec:
            args, raw = parse_arguments(rec["arguments"])
        elif t == "custom_tool_call":
            args = rec.get("input")
        else:  # the action / operation / code / queries the call carries
            args = {k: v for k, v in rec.items() if k not in _BOOKKEEPING}
            if len(args) == 1 and isinstance(next(iter(args.values())), dict):
                args = next(iter(args.values()))  # `{action: {…}}`: the action's own fields
        hosted = t in _HOSTED_CALLS
        server = rec.get("server_label")
        if t in ("mcp_call", "mcp_approval_request") and isinstance(server, str) and server \
                and "__" not in server:
            name = f"mcp__{server}__{name}"  # named as Claude Code names an MCP tool (tools.mcp_name)
        use = ToolUse(cid, name, args, raw, status=rec.get("status") if hosted else None)
        ev = Event(ref, "assistant", blocks=[use])
        caller = rec.get("caller") if isinstance(rec.get("caller"), dict) else {}
        if caller.get("type") == "program":  # made by the code of a `program` item, not the model
            by = caller.get("caller_id")
            named = f" ({by})" if isinstance(by, str) and by else ""
            ev.blocks.insert(0, Notice(f"called by a program{named}, not by the model directly", caller))
        if t == "mcp_approval_request":  # the call waits until an `mcp_approval_response` answers
            ev.states[cid] = "awaiting_permission"
            server = rec.get("server_label")
            ev.blocks.insert(0, Notice(f"asks to run a tool of MCP server {server}" if server
                                       else "asks to run an MCP tool"))
        outcome = [rec[k] for k in ("output", "outputs", "results", "result") if rec.get(k)]
        if hosted and (outcome or rec.get("error") or t == "mcp_list_tools"):
            blocks: list = []
            for value in outcome:
                if t == "image_generation_call" and isinstance(value, str):
                    fmt = rec.get("output_format")  # png (the default), webp, jpeg, gif, svg
                    kind = {"jpg": "jpeg", "svg": "svg+xml"}.get(fmt, fmt) if isinstance(fmt, str) and \
                        fmt.isalnum() else "png"
                    blocks.append(Media("image", f"image/{kind}", value))
                else:
                    blocks += _item_output(value)[0]
            if t == "mcp_list_tools" and isinstance(rec.get("tools"), list):
                blocks.append(tool_lines(rec["tools"]))
            if rec.get("error"):
                blocks += _hosted_error(rec["error"])
            # a hosted call can fail with its outputs kept (a code interpreter's logs) and no error
            failed = bool(rec.get("error")) or rec.get("status") == "failed"
            ev.blocks.append(ToolResult(cid, blocks, True if failed else None))
        return ev
    if t in _SETTINGS:
        return Event(ref, "system", kind=t, blocks=_settings(t, rec))
    label = "context compacted" if t == "compaction" else f"reference to item {rec.get('id')}"
    return Event(ref, "system", kind=t, blocks=[Notice(label, rec)])


def _settings(t: str, rec: dict) -> list:
    """What a client item between turns changes, in words: the tools an `additional_tools` item
    makes available (by name), a `configuration_update`'s reasoning effort and text format."""
    if t == "compaction_trigger":
        return [Notice("compaction asked for: the context is compacted here", rec)]
    if t == "additional_tools":
        tools = rec.get("tools") if isinstance(rec.get("tools"), list) else []
        return [Notice(f"{len(tools)} more tool{'s' if len(tools) != 1 else ''} made available"), tool_lines(tools)]
    said = []
    reasoning = rec.get("reasoning") if isinstance(rec.get("reasoning"), dict) else {}
    if "effort" in reasoning:
        said.append(f"reasoning effort {as_text(reasoning['effort'])}")
    text = rec.get("text") if isinstance(rec.get("text"), dict) else {}
    fmt = text.get("format") if isinstance(text.get("format"), dict) else {}
    if fmt:
        name = fmt.get("name") if isinstance(fmt.get("name"), str) and fmt["name"] else None
        said.append(f"text format {as_text(fmt.get('type'))}" + (f" ({name})" if name else ""))
    return [Notice("settings from here on: " + ("; ".join(said) or "changed"), rec)]


def _hosted_error(error: Any) -> list:
    """A hosted call's error: a string, or (MCP calls) `{type: http_error | mcp_protocol_error,
    code, message}` / `{type: mcp_tool_execution_error, content}`."""
    if isinstance(error, dict) and ("message" in error or "content" in error):
        head = " ".join(str(error[k]) for k in ("type", "code") if error.get(k) not in (None, ""))
        body = result_content(error["content"]) if "content" in error else \
            [Text(as_text(error.get("message")), markdown=False)]
        return ([Notice(head.replace("_", " "))] if head else []) + body
    return [Text(as_text(error), markdown=False)]


def _item_output(output: Any) -> tuple[list, bool]:
    """An item's output: text, content parts (input_text / input_image / input_file), a
    screenshot, shell outputs `{stdout, stderr, outcome}`, or tool outputs (code interpreter
    logs, file search results); and whether it reports a failure (a non-zero exit)."""
    if output is None or isinstance(output, str):
        return result_content(output), False
    items = output if isinstance(output, list) else [output]
    out: list = []
    failed = False
    for item in items:
        if not isinstance(item, dict):
            out += result_content([item])
        elif "stdout" in item or "stderr" in item:
            outcome = item.get("outcome") if isinstance(item.get("outcome"), dict) else {}
            code = outcome.get("exit_code")
            out += std_streams(item)
            if outcome.get("type") == "timeout" or (isinstance(code, int) and code != 0):
                failed = True
                out.append(Notice("timed out" if outcome.get("type") == "timeout"
                                  else f"exit code {code}"))
        elif item.get("type") == "computer_screenshot" or item.get("type") == "image":
            out.append(media_block(item, "image"))
        elif isinstance(item.get("logs"), str):
            out.append(Text(item["logs"], markdown=False))
        elif isinstance(item.get("text"), str) and item.get("type") not in (
                "input_text", "output_text", "text"):
            head = " · ".join(str(item[k]) for k in ("filename", "file_id") if item.get(k))
            out += [Notice(head or "result"), Text(item["text"], markdown=False)]
        else:
            out += content_blocks([item], markdown=False)
    return out, failed


def _exit(ev: Event, rec: dict) -> None:
    extra = rec.get("extra") if isinstance(rec.get("extra"), dict) else {}
    status = extra.get("exit_status")
    ev.kind = "exit"
    ev.blocks = [Notice(f"run ended: {status}" if status else "run ended")]
    text = content_blocks(rec.get("content"), markdown=False)
    answers = getattr(rec, "links", None)
    if answers:
        for call, failed in answers:
            ev.blocks.append(ToolResult(call, text, True if failed else None))
    else:
        ev.blocks += text


def _common(ev: Event, rec: dict) -> None:
    extra = rec.get("extra") if isinstance(rec.get("extra"), dict) else {}
    response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
    usage = rec.get("usage") if isinstance(rec.get("usage"), dict) else response.get("usage")
    model_and_usage(ev, rec.get("model") or response.get("model"), usage, extra.get("cost"))
    first_time(ev, extra.get("timestamp"), rec.get("timestamp"), rec.get("created_at"),
               rec.get("created"))
    for key in ("id", "message_id"):
        if isinstance(rec.get(key), str) and rec[key]:
            ev.source_id = rec[key]
            break
    agent = getattr(rec, "agent", None)
    if agent and ev.author is None and ev.role == "assistant":
        ev.author = agent
    ev.meta = {k: v for k, v in rec.items() if k not in ("content", "tool_calls", "role")}
    if rec.get("role", ev.role) != ev.role:
        ev.meta["role"] = rec["role"]


# --- Responses API streaming event logs --------------------------------------------------------
# The `response.*` server-sent events written one per line (`event.model_dump_json()` of a stream
# from openai-python or the Agents SDK's raw_response_event; openai-python
# src/openai/types/responses/response_stream_event.py). Each finished output item arrives whole in
# `response.output_item.done` and is read like the same item in a saved conversation; the deltas
# before it only spell it out piece by piece, so they are kept hidden (raw view). The client's own
# input and its tool outputs are not part of a stream: a `function_call_output` item written into
# the log beside the events (the Agents SDK's `tool_output` run items) answers its call as anywhere
# else; otherwise the next response's `response.created` says the calls still open were answered,
# since the API takes no request after a function call without its output (toolcalls.ANSWERED). A
# call no later response follows stays open, and reads unanswered once the session has ended.
# An `mcp_approval_request` is answered the same way, by the next request, and the answer is not in
# the log either: an approval shows as the `mcp_call` naming its `approval_request_id`; a request
# the next response completed without acting on was refused (toolcalls.UNAPPROVED).
_STREAM_END = {"response.completed", "response.incomplete", "response.failed"}


def _stream_type(rec: Any) -> str | None:
    if not isinstance(rec, dict) or "role" in rec:
        return None
    t = rec.get("type")
    if not isinstance(t, str):
        return None
    if t.startswith("response.") or (t == "error" and "sequence_number" in rec):
        return t
    return None


def _stream_event(t: str, rec: dict, ref: Ref) -> Event:
    item = rec.get("item")
    if t == "response.output_item.done" and isinstance(item, dict) and not _stream_type(item):
        ev = event(item, ref)
        ev.meta = {"stream_event": t, **ev.meta}
        request = item.get("approval_request_id")
        if item.get("type") == "mcp_call" and isinstance(request, str) and request:
            # the approval itself is the client's input, never streamed: the call it let run says it
            ev.blocks.append(ToolResult(request, [Notice("approved")]))
        return ev
    response = rec.get("response") if isinstance(rec.get("response"), dict) else {}
    ev = Event(ref, "system", kind="progress", hidden=True, hidden_reason="stream event",
               blocks=[Notice(t)], format=NAME)
    if t == "response.created" or t in _STREAM_END:
        ev.kind = "response"
        if t == "response.created":
            ev.states = {"*": ANSWERED}
        elif t == "response.completed":  # approvals it did not act on were refused
            ev.states = {"*": UNAPPROVED}
        model_and_usage(ev, response.get("model"), response.get("usage"))
        first_time(ev, response.get("completed_at") if t in _STREAM_END else None,
                   response.get("created_at"))
    if t in ("response.failed", "response.incomplete", "error"):
        error = response.get("error") if t == "response.failed" else rec
        details = response.get("incomplete_details")
        why = details.get("reason") if isinstance(details, dict) else None
        ev.hidden, ev.hidden_reason, ev.kind = False, None, "error"
        ev.blocks = [Notice(f"response incomplete: {why}" if why else
                            "response incomplete" if t == "response.incomplete" else
                            "response failed" if t == "response.failed" else "stream error")]
        if isinstance(error, dict) and error.get("message"):
            code = f"{error['code']}: " if error.get("code") else ""
            ev.blocks.append(Text(f"{code}{as_text(error['message'])}", markdown=False))
    if isinstance(response.get("id"), str):
        ev.message_id = response["id"]
    ev.meta = rec
    return ev


def title_of(ev: Event) -> str | None:
    """The first real user prompt; a long templated one (mini-swe-agent) gives its first real line."""
    if ev.role == "user" and ev.kind == "message" and not ev.hidden:
        return prompt_title(ev.text())
    return None


def prompt_title(text: str) -> str | None:
    """Leading tag-only lines and "...:" lead-ins dropped, up to the next tag-only line; a long
    prompt gives its first line (or that line's first sentence when the line is long)."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    while len(lines) > 1 and (_TAG_LINE.match(lines[0]) or (
            lines[0].rstrip().endswith(":") and not _LIST_ITEM.match(lines[1]))):
        lines.pop(0)  # (a lead-in to a list is the prompt itself: "Start by:" + "1. …")
    if not lines:
        return None
    if lines[0].startswith(_TASK_LEAD_IN) and len(lines[0]) > len(_TASK_LEAD_IN):
        lines[0] = lines[0][len(_TASK_LEAD_IN):]
    end = next((i for i, ln in enumerate(lines) if i and _TAG_LINE.match(ln)), len(lines))
    lines = lines[:end]  # a templated prompt: only its first tagged section
    rest = "\n".join(lines)
    if len(rest) <= 200:
        return rest
    first = lines[0].strip()
    end = first.find(". ", 40, 200)  # a long first line: its first sentence
    return first[:end + 1] if len(first) > 200 and end > 0 else first
