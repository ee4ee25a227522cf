"""SWE-agent trajectories: the `<instance_id>.traj` JSON document a run writes (SWE-agent 0.x and 1.x).

What SWE-agent writes (`sweagent/agent/agents.py` `get_trajectory_data` / `save_trajectory`,
`sweagent/types.py`), read here as one document:

* `trajectory`: one `TrajectoryStep` per model answer — `response` (what the model wrote), `thought`
  and `action` (the command SWE-agent parsed out of it), `observation` (what running it printed),
  `execution_time` (seconds), `state` (the environment after it: `open_file`, `working_dir`, a
  `diff`…; 0.x writes it as a JSON string), and in 1.x `query` (every message sent for that step)
  and `extra_info`; newer 1.x keep a reasoning model's `reasoning_content`. Each step is one card:
  the thought, the command as a call, its observation as the call's result, and a quiet line with
  its execution time and state. A step SWE-agent did not run (it could not parse a command from
  the answer, the command was blocked, or had a shell syntax error: `handle_error_with_retry`
  records the step and asks the model again) says so, its command an error.
* `history`: the conversation as the model saw it (`HistoryItem`: role, content, `agent`,
  `message_type` system_prompt / demonstration / observation / action, `thought`, `action`,
  `tool_calls` and the tool message's `tool_call_ids` (plural), `is_demo`, `cache_control`,
  `thinking_blocks`). What comes before the first answer is shown: the system prompt and the
  demonstrations as folded chips, the instance prompt as the person's prompt (the issue text taken
  out of SWE-agent's templates, the instructions around it folded). The rest repeats the steps
  (observations wrapped in the next-step template) and is kept hidden; 1.x function-calling runs
  lend each step its call's own name and arguments from it (`str_replace_editor` edits read as
  diffs). A file with a history and no steps (a demonstration, `trajectories/demonstrations/*.traj`)
  is read from the history: a 1.x tool message answers the calls its `tool_call_ids` name, a 0.x
  answer's `action` is answered by the message after it.
* `info`: `exit_status`, `submission` (the patch), `model_stats` (`instance_cost`, `tokens_sent`,
  `tokens_received`, `api_calls`), `edited_files30/50/70`, versions, a review → one closing card:
  how the run ended (an exit status that is no submission is an error), the submitted patch (a
  diff; when the last step's output already shows it, a line saying so), the final state, and the
  run's tokens and cost as the session's usage (model from `replay_config`).
* 1.x's RetryAgent writes `attempts` (each an attempt's trajectory, history and info) and, once it
  has chosen, the chosen attempt's at the top: that one is read (the others stay in the raw view),
  with a note saying which attempt of how many it is.

`environment`, `replay_config`, each step's `query` and `extra_info`, and the history copies of the
steps stay in the raw view (the copies also as hidden cards).

Detection: a document holding `trajectory` steps (`action` + `observation` + `response` or
`thought`) or a `history` of SWE-agent items (`message_type`, `agent`) with an `info` or
`environment` beside it. mini-swe-agent's trajectories (`messages`, `trajectory_format`) are
`openai-chat`'s.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from .. import tools
from ..model import Context, Event, Notice, Ref, Text, Thinking, ToolResult, ToolUse
from . import openai_chat
from .common import as_text, generic_event, parse_arguments, prompt_first_line, result_content, text_field

NAME = "swe-agent"
MODE = "document"

_STEP_KEYS = frozenset({"action", "observation"})
_HISTORY_TYPES = frozenset({"system_prompt", "demonstration", "observation", "action", "thought",
                            "user", "assistant"})
# the places SWE-agent's instance templates put the problem statement (0.x / 1.x defaults, SWE-bench
# configs): the issue is the prompt, the template around it folded instructions. (One blank line
# before INSTRUCTIONS: `\n\s*\n` there rescans a run of blank lines from each of them, quadratic.)
_STATEMENT = (re.compile(r"ISSUE:\n(.*?)\n[ \t\r]*\nINSTRUCTIONS:", re.S),
              re.compile(r"<pr_description>\n?(.*?)\n?</pr_description>", re.S),
              re.compile(r"<issue_description>\n?(.*?)\n?</issue_description>", re.S),
              re.compile(r"<issue>\n?(.*?)\n?</issue>", re.S))
_MAX_TEMPLATE_SCAN = 200_000  # characters of a prompt searched for its issue text
_NOT_RUN = ("not run: SWE-agent could not use this answer (no command it could parse, a blocked "
            "command or a shell syntax error) and asked the model again")


class Part(dict):
    """A record of the document with what only its place in the run says (never serialised)."""

    part: str  # system | demo | task | step | copy | turn | end | attempts
    extra: dict

    def __init__(self, rec: dict, part: str, **extra: Any):
        super().__init__(rec)
        self.part, self.extra = part, extra


def _run(doc: Any) -> dict | None:
    """The run a document holds: itself, or a RetryAgent's chosen (else last) attempt."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("trajectory"), list) or isinstance(doc.get("history"), list):
        return doc
    attempts = doc.get("attempts")
    if isinstance(attempts, list) and attempts and isinstance(attempts[-1], dict):
        return attempts[-1]
    return None


def _is_step(rec: Any) -> bool:
    return isinstance(rec, dict) and _STEP_KEYS <= rec.keys() and ("response" in rec or "thought" in rec)


def _is_history_item(rec: Any) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get("role"), str) and (
        text_field(rec, "message_type") in _HISTORY_TYPES or "agent" in rec or "is_demo" in rec)


def _looks_like_traj(doc: Any) -> bool:
    run = _run(doc)
    if run is None:
        return False
    steps = run.get("trajectory")
    if isinstance(steps, list) and any(_is_step(s) for s in steps[:5]):
        return True
    history = run.get("history")
    return isinstance(history, list) and any(_is_history_item(h) for h in history[:5]) and (
        isinstance(run.get("info"), dict) or "environment" in run or "attempts" in doc
        or any(isinstance(h, dict) and (h.get("message_type") or (
            h.get("role") == "assistant" and "thought" in h and "action" in h)) for h in history[:50]))


def document_bonus(doc: Any) -> int:
    return 3 if _looks_like_traj(doc) else 0


def sniff(rec: Any) -> int:
    """A record of a trajectory read on its own (its document's records, or such records one per
    line): a step, an `info`, or a history item with SWE-agent's own fields."""
    if isinstance(rec, Part) or _is_step(rec) or _is_info(rec):
        return 3
    if isinstance(rec, dict) and isinstance(rec.get("role"), str) and (
            text_field(rec, "message_type") in _HISTORY_TYPES or rec.get("is_demo") is True
            or (rec.get("role") == "assistant" and "thought" in rec and "action" in rec)):
        return 3
    return 0


def _is_info(rec: Any) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get("model_stats"), dict) and "exit_status" in rec


def records(doc: Any) -> list[tuple[str, Any]] | None:
    if not _looks_like_traj(doc):
        return None
    run = _run(doc)
    at = "" if run is doc else f"attempts[{len(doc['attempts']) - 1}]."
    history = run.get("history") if isinstance(run.get("history"), list) else []
    steps = run.get("trajectory") if isinstance(run.get("trajectory"), list) else []
    out: list[tuple[str, Any]] = []
    attempts = doc.get("attempts") if isinstance(doc.get("attempts"), list) else None
    if attempts and len(attempts) > 1:
        info = run.get("info") if isinstance(run.get("info"), dict) else {}
        best = info.get("best_attempt_idx")
        which = best + 1 if isinstance(best, int) and not isinstance(best, bool) and 0 <= best < len(
            attempts) else len(attempts)
        chosen = " (chosen)" if run is doc and isinstance(best, int) else ""
        out.append(("attempts", Part({}, "attempts", count=len(attempts), which=which, chosen=chosen)))
    first = next((i for i, h in enumerate(history) if isinstance(h, dict) and h.get("role") == "assistant"
                  and not h.get("is_demo")), len(history))
    task_seen = False
    for i, h in enumerate(history[:first]):
        path = f"{at}history[{i}]"
        if not isinstance(h, dict):
            out.append((path, h))
        elif h.get("is_demo") or h.get("message_type") == "demonstration":
            out.append((path, Part(h, "demo")))
        elif h.get("role") == "system":
            out.append((path, Part(h, "system")))
        elif h.get("role") == "user" and not task_seen:
            task_seen = True
            out.append((path, Part(h, "task")))
        else:
            out.append((path, Part(h, "turn")))
    rest = list(enumerate(history))[first:]
    if steps:
        calls = _history_calls([h for _, h in rest])
        last_state: Any = None
        for n, step in enumerate(steps):
            path = f"{at}trajectory[{n}]"
            if not isinstance(step, dict):
                out.append((path, step))
                continue
            not_run = n < len(steps) - 1 and _not_run(step)
            call = None if not_run else _take(calls, step.get("action"))
            out.append((path, Part(step, "step", n=n + 1, call=call, not_run=not_run)))
            if not not_run:
                last_state = step.get("state")
        for i, h in rest:
            out.append((f"{at}history[{i}]", Part(h, "copy") if isinstance(h, dict) else h))
    else:
        last_state = None
        answering: list[str] = []
        for i, h in rest:
            path = f"{at}history[{i}]"
            if not isinstance(h, dict):
                out.append((path, h))
                continue
            if h.get("role") == "assistant":
                ids = _turn_calls(h, path)
                answering = [cid for cid, _, _ in ids]
                out.append((path, Part(h, "turn", calls=ids)))
            elif h.get("role") == "tool" and isinstance(h.get("tool_call_ids"), list):
                out.append((path, Part(h, "turn", answers=[str(c) for c in h["tool_call_ids"]])))
                answering = []
            elif h.get("role") == "user" and answering and not h.get("is_demo"):
                out.append((path, Part(h, "turn", answers=answering)))
                answering = []
            else:
                out.append((path, Part(h, "turn")))
                answering = []
    info = run.get("info")
    if isinstance(info, dict):
        shown = any(isinstance(s, dict) and isinstance(info.get("submission"), str)
                    and info["submission"].strip() and s.get("observation") == info["submission"]
                    for s in steps[-3:])
        out.append((f"{at}info", Part(info, "end", state=last_state, shown=shown,
                                      model=_model(doc))))
    return out


def _not_run(step: dict) -> bool:
    """A step SWE-agent recorded without running it (`handle_error_with_retry`): no output, no
    time, no state (a step it ran has the state read after it)."""
    return not step.get("observation") and not step.get("execution_time") and not step.get("state")


def _history_calls(items: list) -> list:
    """(action, name, arguments, id) of each answer in a 1.x function-calling history, in order."""
    out = []
    for h in items:
        if not (isinstance(h, dict) and h.get("role") == "assistant"):
            continue
        calls = h.get("tool_calls")
        fn = calls[0].get("function") if isinstance(calls, list) and len(calls) == 1 \
            and isinstance(calls[0], dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]:
            args, raw = parse_arguments(fn.get("arguments"))
            out.append((h.get("action"), fn["name"], args, raw))
        else:
            out.append((h.get("action"), None, None, None))
    return out


def _take(calls: list, action: Any) -> tuple | None:
    """The history answer that made a step's action: the next one with the same action (a step
    SWE-agent did not run has none, and takes nothing)."""
    if not isinstance(action, str) or not action.strip():
        return None
    for k, (act, name, args, raw) in enumerate(calls):
        if isinstance(act, str) and act.strip() == action.strip():
            del calls[:k + 1]
            return (name, args, raw) if name else None
    return None


def _turn_calls(h: dict, path: str) -> list:
    """The calls of a history answer read on its own (no steps): its `tool_calls`, else the 0.x
    `action` run as a shell command."""
    out = []
    calls = h.get("tool_calls")
    if isinstance(calls, list) and calls:
        for k, c in enumerate(calls):
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(fn, dict):
                continue
            args, raw = parse_arguments(fn.get("arguments"))
            cid = c.get("id") if isinstance(c.get("id"), str) and c["id"] else f"{path}.call{k}"
            out.append((cid, as_text(fn.get("name") or "tool"), (args, raw)))
    elif isinstance(h.get("action"), str) and h["action"].strip():
        out.append((f"{path}.action", "bash", ({"command": h["action"].strip()}, None)))
    return out


def _model(doc: dict) -> str | None:
    """The model a 1.x run used, from its `replay_config` (an object, or its JSON string)."""
    config = doc.get("replay_config")
    if isinstance(config, str) and len(config) < 4 << 20:
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return None
    agent = config.get("agent") if isinstance(config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    if isinstance(model, dict) and isinstance(model.get("name"), str) and model["name"]:
        return model["name"]
    configs = agent.get("agent_configs") if isinstance(agent, dict) else None  # RetryAgent
    if isinstance(configs, list) and configs and isinstance(configs[0], dict):
        model = configs[0].get("model")
        if isinstance(model, dict) and isinstance(model.get("name"), str) and model["name"]:
            return model["name"]
    return None


# --- events --------------------------------------------------------------------------------------


def event(rec: Any, ref: Ref) -> Event:
    if not isinstance(rec, Part):  # a record read without its document (one per line)
        if _is_step(rec):
            return _step(Part(rec, "step", n=ref.line, call=None, not_run=False), ref)
        if _is_info(rec):
            return _end(Part(rec, "end", state=None, shown=False, model=None), ref)
        if sniff(rec):
            calls = _turn_calls(rec, f"L{ref.line}") if rec.get("role") == "assistant" else None
            answers = [str(c) for c in rec["tool_call_ids"]] if rec.get("role") == "tool" \
                and isinstance(rec.get("tool_call_ids"), list) else None
            return _turn(Part(rec, "turn", calls=calls, answers=answers), ref)
        return generic_event(rec, ref, NAME)
    read = _BY_PART.get(rec.part)
    return read(rec, ref) if read else generic_event(dict(rec), ref, NAME)


def _meta(rec: dict, *drop: str) -> dict:
    return {k: v for k, v in rec.items() if k not in drop}


def _system(rec: Part, ref: Ref) -> Event:
    text = as_text(rec.get("content"))
    return Event(ref, "system", "system_prompt", format=NAME,
                 blocks=[Context(f"system prompt · {len(text):,} characters", text, "system")],
                 meta=_meta(rec, "content"))


def _demo(rec: Part, ref: Ref) -> Event:
    text = as_text(rec.get("content"))
    who = rec.get("role") if isinstance(rec.get("role"), str) else "?"
    return Event(ref, "user", "demonstration", format=NAME,
                 blocks=[Context(f"demonstration ({who}) · {len(text):,} characters", text, "demonstration")],
                 meta=_meta(rec, "content"))


def _task(rec: Part, ref: Ref) -> Event:
    """The instance prompt: the issue as the prompt, the template around it folded."""
    content = rec.get("content")
    ev = Event(ref, "user", format=NAME, meta=_meta(rec, "content"))
    if isinstance(content, str):
        m = next((m for p in _STATEMENT if (m := p.search(content, 0, _MAX_TEMPLATE_SCAN))), None)
        if m is not None and m.group(1).strip():
            before, after = content[:m.start(1)].strip(), content[m.end(1):].strip()
            if before:
                ev.blocks.append(Context("SWE-agent's instance template", before, "template"))
            ev.blocks.append(Text(m.group(1).strip()))
            if after:
                ev.blocks.append(Context("instructions", after, "template"))
            return ev
    ev.blocks = openai_chat.content_blocks(content)
    return ev


def _state(state: Any) -> dict:
    """A step's `state`: an object (1.x) or its JSON string (0.x)."""
    if isinstance(state, str) and state.strip()[:1] == "{":
        try:
            state = orjson.loads(state)
        except orjson.JSONDecodeError:
            return {}
    return state if isinstance(state, dict) else {}


def _state_words(state: dict) -> list[str]:
    words = []
    for key, label in (("working_dir", "in"), ("open_file", "open file")):
        v = state.get(key)
        if isinstance(v, str) and v.strip() and v.strip() != "n/a":
            words.append(f"{label} {v.strip()}")
    return words


def _step(rec: Part, ref: Ref) -> Event:
    n = rec.extra.get("n")
    ev = Event(ref, "assistant", format=NAME, source_id=None, meta=_meta(
        rec, "response", "thought", "action", "observation", "query", "reasoning_content"))
    reasoning = rec.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        ev.blocks.append(Thinking(reasoning))
    thought = rec.get("thought")
    if not (isinstance(thought, str) and thought.strip()):
        thought = rec.get("response") if not as_text(rec.get("action")).strip() else ""
    if isinstance(thought, str) and thought.strip():
        ev.blocks.append(Text(thought.strip()))
    action = rec.get("action")
    observation = rec.get("observation")
    if isinstance(action, str) and action.strip():
        cid = f"step-{n}"
        found = rec.extra.get("call")
        if found:
            name, args, raw = found
        else:
            name, args, raw = "bash", {"command": action.strip()}, None
        ev.blocks.append(ToolUse(cid, name, args, raw))
        if rec.extra.get("not_run"):
            ev.blocks.append(ToolResult(cid, [Text(_NOT_RUN, False)], True))
        else:
            ev.blocks.append(ToolResult(cid, result_content(observation if observation is not None else "")))
    elif rec.extra.get("not_run"):
        ev.blocks.append(Notice("no command in this answer: SWE-agent asked the model again"))
    elif isinstance(observation, str) and observation.strip():
        ev.blocks.append(Notice(observation.strip()))
    facts = []
    t = rec.get("execution_time")
    if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0:
        facts.append(f"ran {t:.2f} s" if t < 100 else f"ran {t:,.0f} s")
    facts += _state_words(_state(rec.get("state")))
    if facts:
        ev.blocks.append(Notice(f"step {n} · " + " · ".join(facts)))
    return ev


def _copy(rec: Part, ref: Ref) -> Event:
    """A history message that repeats a step: what the model saw, hidden."""
    role = rec.get("role") if isinstance(rec.get("role"), str) else "user"
    ev = Event(ref, role if role in ("user", "assistant", "system", "tool") else "user", "history",
               format=NAME, hidden=True,
               hidden_reason="the model's copy of a step above", meta=_meta(rec, "content"))
    ev.blocks = openai_chat.content_blocks(rec.get("content"), markdown=False)
    return ev


def _turn(rec: Part, ref: Ref) -> Event:
    """A history message read on its own (a file with no steps): an answer with its calls, the
    observation that answers them, or any other message."""
    role = rec.get("role") if isinstance(rec.get("role"), str) else "user"
    ev = Event(ref, "system" if role == "system" else role, format=NAME,
               meta=_meta(rec, "content", "tool_calls"))
    content = rec.get("content")
    answers = rec.extra.get("answers")
    if answers:
        ev.role, ev.kind = "tool", "tool_result"
        ev.blocks = [ToolResult(cid, result_content(content)) for cid in answers]
        return ev
    calls = rec.extra.get("calls")
    if role == "assistant":
        ev.blocks = openai_chat.thinking_blocks(rec)
        thought = rec.get("thought")
        said = thought if isinstance(thought, str) and thought.strip() and calls else content
        ev.blocks += openai_chat.content_blocks(said)
        ev.blocks += [ToolUse(cid, name, args, raw) for cid, name, (args, raw) in calls or ()]
        return ev
    ev.blocks = openai_chat.content_blocks(content, markdown=role != "system")
    return ev


def _attempts(rec: Part, ref: Ref) -> Event:
    x = rec.extra
    return Event(ref, "system", "attempts", format=NAME, blocks=[Notice(
        f"attempt {x['which']} of {x['count']}{x['chosen']}: SWE-agent's RetryAgent ran {x['count']} "
        "attempts; the others are in the raw view")])


def _end(rec: Part, ref: Ref) -> Event:
    """`info`: how the run ended, what it submitted, what it cost."""
    x = rec.extra
    status = rec.get("exit_status")
    words = as_text(status) if status is not None else "not recorded"
    submitted = isinstance(status, str) and status.startswith("submitted")
    ev = Event(ref, "system" if submitted or status is None else "error", "result", format=NAME,
               meta=_meta(rec, "submission", "edited_files30", "edited_files50", "edited_files70"))
    line = f"Run ended · exit status: {words}"
    why = _EXITS.get(_exit_code(status))
    if why:
        line += f" ({'submitted automatically: ' if submitted else ''}{why})"
    stats = rec.get("model_stats") if isinstance(rec.get("model_stats"), dict) else {}
    calls = stats.get("api_calls")
    if isinstance(calls, int) and not isinstance(calls, bool):
        line += f" · {calls:,} API call{'s' if calls != 1 else ''}"
    sent, got = stats.get("tokens_sent"), stats.get("tokens_received")
    if isinstance(sent, int) and isinstance(got, int) and not isinstance(sent, bool) and not isinstance(got, bool):
        line += f" · {sent:,} tokens sent, {got:,} received"
    usage: dict = {}
    for key, to in (("tokens_sent", "prompt_tokens"), ("tokens_received", "completion_tokens")):
        v = stats.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            usage[to] = v
    cost = stats.get("instance_cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
        usage["cost"] = cost
        line += f" · ${cost:,.4f}"
    ev.blocks.append(Notice(line))
    submission = rec.get("submission")
    if isinstance(submission, str) and submission.strip():
        files = _patched_files(submission)
        what = f"{len(files)} file{'s' if len(files) != 1 else ''}: {', '.join(files)}" if files else "a patch"
        if x.get("shown"):
            ev.blocks.append(Notice(f"submitted the patch shown above ({what})"))
        else:
            ev.blocks += [Notice(f"submitted a patch ({what})"), Text(submission, False)]
    elif "submission" in rec:
        ev.blocks.append(Notice("nothing submitted"))
    state = _state_words(_state(x.get("state")))
    if state:
        ev.blocks.append(Notice("final state: " + " · ".join(state)))
    if usage:
        ev.usage = usage
    if x.get("model"):
        ev.model = x["model"]
    return ev


# SWE-agent's exit statuses (agents.py `forward_with_handling`, `handle_action`), in words
_EXITS = {"exit_cost": "the cost limit was reached", "exit_context": "the context window was full",
          "exit_format": "repeated format, blocklist or syntax errors",
          "exit_command_timeout": "commands timed out repeatedly",
          "exit_total_execution_time": "the total execution time ran out",
          "exit_api": "the model's API kept failing", "exit_environment_error": "the environment failed",
          "exit_error": "an error stopped the run", "exit_forfeit": "the model gave up",
          "exit_command": "the model ran exit", "early_exit": "the run stopped early"}


def _exit_code(status: Any) -> str:
    """`submitted (exit_cost)` → `exit_cost`; `exit_cost` as it is."""
    if not isinstance(status, str):
        return ""
    m = re.fullmatch(r"submitted \((.+)\)", status.strip())
    return m[1] if m else status.strip()


def _patched_files(patch: str) -> list[str]:
    return list(dict.fromkeys(e.path for e in tools.unified_edits(patch) if e.path))


_BY_PART = {"system": _system, "demo": _demo, "task": _task, "step": _step, "copy": _copy,
            "turn": _turn, "end": _end, "attempts": _attempts}


def title_of(ev: Event) -> str | None:
    """The instance prompt: the issue's first line where SWE-agent's template held the issue (a
    GitHub or SWE-bench problem statement starts with the issue's title), else the prompt's."""
    if not (ev.role == "user" and ev.kind == "message" and not ev.hidden):
        return None
    if any(b.kind == "context" and b.source == "template" for b in ev.blocks):
        return prompt_first_line(ev)
    return openai_chat.prompt_title(ev.text())
