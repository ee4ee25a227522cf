"""What the viewer knows about particular tools: a one-line summary for the card header, and which
input view fits (a shell command, a file edit as a diff, a todo list, an agent message…).

Tool names differ across frameworks (Claude Code's `Bash`, legion's MCP tools, OpenAI function names),
so unknown tools fall back to pretty JSON of their input; nothing here is required for correctness.
"""

from __future__ import annotations

from typing import Any

from .formats.legion import COMM_TOOLS

_SUMMARY_KEYS = ("command", "cmd", "file_path", "path", "notebook_path", "pattern", "query", "url",
                 "description", "prompt", "name", "code", "text", "content")


def view_of(name: str, inp: Any) -> str:
    """The template branch that renders this tool's input."""
    if not isinstance(inp, dict):
        return "json"
    n = name.rsplit("__", 1)[-1].lower() if name else ""
    if name in COMM_TOOLS or n in ("send_comm", "send_comm_to_channel"):
        return "comm"
    if n in ("bash", "shell", "run_shell_command", "execute_command", "exec", "terminal",
             "run_terminal_cmd", "bashoutput") and isinstance(inp.get("command") or inp.get("cmd"), str):
        return "shell"
    if n in ("edit", "str_replace", "replace") and isinstance(inp.get("old_string"), str):
        return "edit"
    if n == "multiedit" and isinstance(inp.get("edits"), list):
        return "multiedit"
    if n in ("write", "create_file", "write_file") and isinstance(inp.get("content"), str):
        return "write"
    if n == "todowrite" and isinstance(inp.get("todos"), list):
        return "todos"
    if n in ("task", "agent") and isinstance(inp.get("prompt"), str):
        return "agent"
    if 0 < len(inp) <= 5 and all(_short(v) for v in inp.values()):
        return "kv"
    return "json"


def _short(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) <= 200
                                                             and "\n" not in v)


def summary(name: str, inp: Any) -> str:
    """A short description of a call for its header: the command, the file, the pattern…"""
    if isinstance(inp, str):
        return _line(inp)
    if not isinstance(inp, dict):
        return ""
    if name in COMM_TOOLS:
        to = inp.get("to_minion_name") or inp.get("channel_name") or "?"
        kind = inp.get("comm_type")
        return f"→ {to}" + (f" ({kind})" if kind else "") + (
            f": {_line(inp['summary'])}" if isinstance(inp.get("summary"), str) else "")
    for key in _SUMMARY_KEYS:
        v = inp.get(key)
        if isinstance(v, str) and v.strip():
            text = _line(v)
            if key in ("pattern",) and isinstance(inp.get("path"), str):
                text += f"  in {inp['path']}"
            return text
    return ""


def _line(text: str, limit: int = 160) -> str:
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def todo_items(inp: dict) -> list[tuple[str, str]]:
    out = []
    for t in inp.get("todos") or []:
        if isinstance(t, dict):
            out.append((str(t.get("status") or "pending"), str(t.get("content") or t.get("activeForm")
                                                                or "")))
    return out
