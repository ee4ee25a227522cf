"""What the viewer knows about particular tools: a one-line summary for the card header, which input
view fits (a shell command, a file edit as a diff, a todo list, an agent prompt…), and how a result
reads (prose, a file, JSON or terminal output).

Tool names and field names differ across frameworks, so knowledge is kept as two tables: `FAMILIES`
groups the names each framework gives the same kind of tool (Claude Code's `Read`, Cline's
`read_file`, AgentScope's `view_text_file`, Wolo's `read`…), and `PATH_FIELDS` lists every field a
format puts a file's path in (`file_path`, `filePath`, `absolutePath`, `absolute_path`,
`notebook_path`, `target_file`, `path`…). An unknown tool falls back to its input's fields in
`_SUMMARY_KEYS` order and to pretty JSON; nothing here is required for correctness.

How a result is shown — the rule, by tool first and by content second (`result_view`):

* **prose** (Markdown): results written for a reader — a sub-agent's report (Task / Agent), a web
  fetch's summary (WebFetch), web search results (their `Links: [...]` line made a list of links),
  a plan's approval or rejection. Unless the text is JSON or terminal output (ANSI), which keep
  their own views, or the call failed: an error message is shown as written.
* **file**: what a read tool returns is the file's content: highlighted by the path's extension,
  with the line numbers the tool printed (Claude Code's `   42→`) as a gutter instead of text. The
  same for the `cat -n` snippet an edit or write result shows after its first line.
* **diff**: a unified diff (what `git diff` prints, a patch SWE-agent submitted): a diff per file
  and hunk, drawn as an edit call's diff is.
* **output**: commands, searches, edits, listings, and everything else of a known tool: kept as
  written, ANSI colours rendered. Never Markdown: a `#` in shell output is a comment, not a heading.
* An **unknown** tool decides by content: a JSON object or array is highlighted JSON; text with
  Markdown structure (a heading, or two kinds of list / emphasis / link / fence) is prose; anything
  else is output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import orjson

from .formats.common import md_escape, url_escape
from .formats.legion import COMM_TOOLS

FAMILIES: dict[str, set[str]] = {
    "shell": {"bash", "shell", "run_shell_command", "execute_command", "execute_shell_command",
              "exec", "exec_command", "terminal", "run_terminal_cmd", "run_command", "local_shell",
              "bashoutput", "killshell", "python", "execute_python_code", "run_python", "execute_bash",
              "execute_ipython_cell", "execute", "powershell", "bash_code_execution"},
    "read": {"read", "read_file", "readfile", "read_text_file", "view_text_file", "view", "cat",
             "notebookread", "open_file"},
    "write": {"write", "write_file", "write_to_file", "create_file", "writefile", "new_file", "create"},
    "edit": {"edit", "str_replace", "str_replace_editor", "replace", "edit_file", "multiedit",
             "replace_in_file", "notebookedit", "file_editor", "insert_text", "search_replace", "apply_patch",
             "patch", "applypatch"},
    "search": {"grep", "glob", "ls", "list_files", "list_dir", "list_directory", "search_files",
               "file_search", "grep_search", "codebase_search", "find", "find_files",
               "list_code_definition_names", "toolsearch"},
    "fetch": {"webfetch", "web_fetch", "fetch", "fetch_page", "fetch_url", "browse", "read_url",
              "fetchurl"},
    "websearch": {"websearch", "web_search", "google_search", "search_web", "tavily_search"},
    "agent": {"task", "agent"},
    # what the agent puts to the person in prose: a plan, its final answer, and Claude Code's
    # SendUserMessage (alias Brief), the agent's visible reply in brief mode (`message`, Markdown)
    "plan": {"exitplanmode", "plan_mode_respond", "attempt_completion", "sendusermessage", "brief"},
    "todos": {"todowrite", "todo_write", "update_todo_list", "update_plan", "write_todos"},
    "questions": {"askuserquestion"},
}
_FAMILY = {name: fam for fam, names in FAMILIES.items() for name in names}
PROSE_FAMILIES = {"agent", "fetch", "websearch", "plan"}

PATH_FIELDS = ("file_path", "filePath", "absolutePath", "absolute_path", "notebook_path",
               "notebookPath", "target_file", "targetFile", "path", "file", "filename", "file_name",
               "dir_path", "directory")
_CONTENT_FIELDS = ("content", "contents", "file_text", "text", "new_source")
_COMMAND_FIELDS = ("command", "cmd", "script", "code")
_PROSE_INPUT = ("plan", "result", "response", "message")  # what a plan / completion tool says, in Markdown
_SUMMARISED_READ = {*PATH_FIELDS, "offset", "limit"}
_EDITOR_READ = {"command", "view_range"}  # (a file editor's view: family_of says it is one)
_TASK_WORDS = ("title", "text_instruction", "instructions", "prompt")  # (a Goose 1.x task's)
_SUMMARY_KEYS = ("command", "cmd", *PATH_FIELDS, "pattern", "regex", "query", "url", "subject",
                 "title", "description", "name", "skill", "prompt", "message", "question", "code",
                 "text", "content")


def family(name: str | None) -> str | None:
    """The kind of tool a name stands for, MCP prefixes (`mcp__server__tool`) ignored."""
    if not isinstance(name, str) or not name:
        return None
    return _FAMILY.get(name.rsplit("__", 1)[-1].lower())


# one tool that views, writes and edits files by its `command`: Anthropic's text editor tool
# (`str_replace_based_edit_tool`, earlier `str_replace_editor`, as SWE-agent and OpenHands name it
# too) and Goose's developer extension's `text_editor` (`developer__text_editor`: view, write,
# str_replace, insert, undo_edit), and the Messages API's code execution editing files in its
# container (server tool `text_editor_code_execution`: view, create, str_replace). The command
# decides the call's kind, where the arguments have that command's shape; any other call of such a
# tool reads as its name alone says.
EDITORS = {"text_editor", "str_replace_based_edit_tool", "str_replace_editor", "text_editor_code_execution"}


def is_editor(name: Any) -> bool:
    """Whether a tool (an extension's or an MCP server's too) is such a file editor."""
    return isinstance(name, str) and name.rsplit("__", 1)[-1].lower() in EDITORS
_EDITOR_KINDS = {"str_replace": "edit", "insert": "edit", "create": "write", "write": "write", "view": "read"}


def family_of(name: str | None, inp: Any) -> str | None:
    """The kind of one call: its tool's family, or for a file editor taking a `command`, what
    that command does to the file — an `str_replace` with `old_str` and `new_str` is an edit, a
    `create` / `write` with `file_text` a write, a `view` a read (each naming its `path`)."""
    fam = family(name)
    if not isinstance(inp, dict) or not is_editor(name) or not isinstance(inp.get("path"), str):
        return fam
    kind = _EDITOR_KINDS.get(inp.get("command")) if isinstance(inp.get("command"), str) else None
    if kind == "edit" and isinstance(inp.get("old_str"), str) and isinstance(inp.get("new_str"), str):
        return "edit"
    if kind == "edit" and _insert(inp) is not None:
        return "edit"
    if kind == "write" and isinstance(inp.get("file_text"), str):
        return "write"
    if kind == "read" and set(inp) <= {"command", "path", "view_range"}:
        return "read"
    return fam


@dataclass(frozen=True, slots=True)
class McpName:
    """An MCP tool's name said apart: the server that offers it and the tool's own name."""
    server: str
    tool: str
    full: str  # as the transcript writes it (`mcp__github__create_issue`)
    tag: str = "MCP"  # what the program calls the server: an MCP server, a Goose extension
    kind: str = "MCP server"


# formats whose every tool name is `<server>__<tool>`: Goose names each tool of an extension (an
# MCP server, or one built in) `<extension>__<tool>` (crates/goose/src/agents/extension_manager.rs
# prefixes every tool with its extension's key: `developer__shell`, `platform__manage_extensions`)
_PREFIXED = {"goose": ("ext", "Goose extension")}


def mcp_name(name: str | None, fmt: str | None = None) -> McpName | None:
    """`mcp__<server>__<tool>` (Claude Code's, and the Agent SDK's, name for an MCP server's tool)
    said apart, as Claude Code splits it: the server is the part after `mcp__`, the tool everything
    after the next `__`. A plugin's server (`plugin_<plugin>_<server>`) drops the `plugin_`, and its
    name once when plugin and server are named alike (`plugin_playwright_playwright`: playwright).
    In a format that names every tool `<server>__<tool>` (`_PREFIXED`: Goose's extensions) the
    server is what comes before the first `__`; a name with `__` in any other format is a plain
    name. None for any other name, or when either part is missing."""
    if not isinstance(name, str):
        return None
    if fmt in _PREFIXED and not name.startswith("mcp__"):
        server, sep, tool = name.partition("__")
        if not (server and sep and tool):
            return None
        tag, kind = _PREFIXED[fmt]
        return McpName(server, tool, name, tag, kind)
    if not name.startswith("mcp__"):
        return None
    server, sep, tool = name[5:].partition("__")
    if not (server and sep and tool):
        return None
    if server.startswith("plugin_") and len(server) > 7:
        server = server[7:]
        n = len(server) // 2
        if server[n:n + 1] == "_" and server[:n] == server[n + 1:]:
            server = server[:n]
    return McpName(server, tool, name)


def prefixed(fmt: str | None) -> bool:
    """Whether a format names every tool `<server>__<tool>` (see `mcp_name`)."""
    return fmt in _PREFIXED


def short_label(name, width: int = 28, fmt: str | None = None) -> str:
    """A tool's name for a chart's axis, where a line has room for about `width` characters: an
    MCP tool's own name first and its server after it ("create_issue (github)"), cut at the end.
    `name` may be a row of the archive's tool table (`{"name", "fmt"}`)."""
    if isinstance(name, dict):
        name, fmt = name.get("name"), name.get("fmt")
    mcp = mcp_name(name, fmt)
    text = f"{mcp.tool} ({mcp.server})" if mcp else (name or "tool")
    return text if len(text) <= width else text[:width - 1] + "…"


def path_of(inp: Any) -> str | None:
    """The file (or folder) a call works on, under whichever field name its format uses."""
    if isinstance(inp, dict):
        for key in PATH_FIELDS:
            v = inp.get(key)
            if isinstance(v, str) and v.strip():
                return v
    return None


def command_of(inp: Any) -> str | None:
    """A shell call's command line; an argv list (Codex's `shell`) is joined."""
    if not isinstance(inp, dict):
        return None
    for key in _COMMAND_FIELDS:
        v = inp.get(key)
        if isinstance(v, str) and v.strip():
            return v
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            return " ".join(v)
    return None


def key_of(inp: dict, value: Any) -> str:
    """The field of `inp` holding `value` (for the block address a "show all" link needs)."""
    return next((k for k, v in inp.items() if v is value), "")


def content_of(inp: Any) -> str | None:
    if isinstance(inp, dict):
        for key in _CONTENT_FIELDS:
            v = inp.get(key)
            if isinstance(v, str):
                return v
    return None


@dataclass(slots=True)
class EditPart:
    old: str
    new: str
    replace_all: bool = False
    path: str | None = None  # the file, where one call edits several (a patch); else the call's
    action: str | None = None  # what a patch does to the file besides editing it: added, deleted…
    old_start: int = 1  # the file's line number of `old`'s first line, where the source says it
    new_start: int = 1


_SEARCH_REPLACE = re.compile(
    r"^-{3,} SEARCH\n(?P<old>.*?)^={3,}\n(?P<new>.*?)^\+{3,} REPLACE$", re.S | re.M)
_OLD_NEW = (("old_string", "new_string"), ("oldString", "newString"), ("old_text", "new_text"),
            ("old_str", "new_str"), ("search", "replace"))


def edits(inp: Any, structured: Any = None) -> list[EditPart]:
    """The replacements an edit call makes: one `old_string`/`new_string` pair (or `old_text` /
    `old_str`, SWE-agent's `search` / `replace`), a MultiEdit's list, Cline's SEARCH / REPLACE
    blocks in `diff`, a Codex patch (`apply_patch`'s input, as text or in `input` / `patch`;
    OpenCode's `patch` / `apply_patch`: `patchText`), or a unified diff (`git diff`) given the same
    ways. `structured` is the call's machine-readable result: where it holds the hunks the edit
    made (Claude Code's `structuredPatch`), each replacement is placed at its lines in the file."""
    parts = _edits(inp)
    hunks = structured.get("structuredPatch") if isinstance(structured, dict) else None
    if isinstance(hunks, list):
        for part in parts:
            _place(part, hunks)
    return parts


def _place(part: EditPart, hunks: list) -> None:
    """Number a replacement's lines as its file's, from the hunks the edit made. A hunk holds
    every changed line but only three lines of context, and an `old_string` may begin or end
    mid-line: so the replacement is found by its first changed (non-blank) line, then checked
    line by line wherever it overlaps the hunk."""
    want = part.old.split("\n")
    have = part.new.split("\n")
    changed = next((i for i, (x, y) in enumerate(zip(want, have)) if x != y), min(len(want), len(have)))
    pivot = next((i for i in range(min(changed, len(want) - 1), len(want)) if want[i].strip()), None)
    if pivot is None:
        return
    for h in hunks:
        olds = _old_side(h)
        texts = [t for t, _, _ in olds]
        for k, text in enumerate(texts):
            first = k - pivot  # where want[0] sits among the hunk's old lines (< 0: before it)
            if want[pivot] in text and all(_same_line(want, j, texts[first + j])
                                           for j in range(len(want)) if 0 <= first + j < len(texts)):
                part.old_start = olds[k][1] - pivot
                part.new_start = olds[first][2] if first >= 0 else olds[k][2] - pivot
                return


def _old_side(hunk: Any) -> list[tuple[str, int, int]]:
    """A `structuredPatch` hunk's old-side lines: text, its line number, and the new side's
    line number at that point."""
    if not (isinstance(hunk, dict) and isinstance(hunk.get("lines"), list)
            and isinstance(hunk.get("oldStart"), int) and isinstance(hunk.get("newStart"), int)):
        return []
    out = []
    o, n = hunk["oldStart"], hunk["newStart"]
    for line in hunk["lines"]:
        op = line[:1] if isinstance(line, str) else ""
        if op in (" ", "-"):
            out.append((line[1:], o, n))
            o += 1
        if op in (" ", "+"):
            n += 1
    return out


def _same_line(want: list[str], j: int, line: str) -> bool:
    """Whether line `j` of a replacement's old text is this file line (its first line may start
    mid-line, its last end mid-line)."""
    if len(want) == 1:
        return want[0] in line
    if j == 0:
        return line.endswith(want[0])
    if j == len(want) - 1:
        return line.startswith(want[j])
    return line == want[j]


def _insert(inp: dict) -> EditPart | None:
    """A file editor's `insert` (Goose's text editor, Anthropic's): `new_str` (or `insert_text`)
    put after line `insert_line` of `path` (0: before the first line), drawn as lines added there."""
    if inp.get("command") != "insert":
        return None
    at = inp.get("insert_line")
    text = next((inp[k] for k in ("new_str", "insert_text") if isinstance(inp.get(k), str)), None)
    if type(at) is not int or at < 0 or text is None:
        return None
    where = f"inserted after line {at:,}" if at else "inserted before line 1"
    return EditPart("", text, action=where, old_start=at + 1, new_start=at + 1)


def undone(name: Any, inp: Any) -> str | None:
    """The file a file editor's `undo_edit` puts back as it was before its last edit, or None."""
    if is_editor(name) and isinstance(inp, dict) and inp.get("command") == "undo_edit" \
            and isinstance(inp.get("path"), str) and set(inp) <= {"command", "path"}:
        return inp["path"]
    return None


def _edits(inp: Any) -> list[EditPart]:
    if isinstance(inp, dict) and (one := _insert(inp)):
        return [one]
    if isinstance(inp, dict):
        inp_patch = next((inp[k] for k in ("input", "patch", "patchText", "diff")
                          if isinstance(inp.get(k), str)), None)
        if inp_patch is not None and inp_patch.lstrip().startswith(PATCH_BEGIN):
            return patch_edits(inp_patch)
        if inp_patch is not None and is_unified_diff(inp_patch):
            return unified_edits(inp_patch)
    elif isinstance(inp, str) and inp.lstrip().startswith(PATCH_BEGIN):
        return patch_edits(inp)
    elif isinstance(inp, str) and is_unified_diff(inp):
        return unified_edits(inp)
    if not isinstance(inp, dict):
        return []
    if one := _edit_pair(inp):
        return [one]
    if isinstance(inp.get("edits"), list):
        return [one for e in inp["edits"] if (one := _edit_pair(e))]
    if isinstance(inp.get("diff"), str):
        return [EditPart(m["old"], m["new"]) for m in _SEARCH_REPLACE.finditer(inp["diff"])]
    return []


PATCH_BEGIN = "*** Begin Patch"
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$")
_PATCH_ACTIONS = {"Add": "added", "Delete": "deleted"}


def patch_edits(patch: str) -> list[EditPart]:
    """A Codex patch (codex-rs `apply-patch`'s grammar: `*** Begin Patch`, then per file `*** Add
    File: p` with `+` lines, `*** Delete File: p`, or `*** Update File: p` with an optional `***
    Move to: q` and hunks opened by `@@`, their lines ` ` / `-` / `+`) as one replacement per hunk."""
    out: list[EditPart] = []
    old: list[str] = []
    new: list[str] = []
    part: EditPart | None = None

    def close() -> None:
        if part is not None and (old or new or part.action):
            out.append(EditPart("\n".join(old), "\n".join(new), False, part.path, part.action))
        old.clear()
        new.clear()

    for line in _lines(patch):
        if m := _PATCH_FILE.match(line):
            close()
            part = EditPart("", "", False, m[2].strip(), _PATCH_ACTIONS.get(m[1]))
        elif part is None or line.startswith("*** End"):
            continue
        elif line.startswith("*** Move to: "):
            part.action = f"moved to {line[13:].strip()}"
        elif line.startswith("@@") and (old or new):
            close()
            part = EditPart("", "", False, part.path)  # a later hunk of the same file
        elif line.startswith("@@"):
            continue  # the file's first hunk: its lines go with the file's header
        elif line[:1] in ("-", "+", " ") or not line:
            if line[:1] != "+":
                old.append(line[1:])
            if line[:1] != "-":
                new.append(line[1:])
    close()
    return out


_GIT_FILE = re.compile(r"^diff --git a/(.+?) b/(.+?)\r?$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
UNIFIED_CAP = 2_000_000  # characters of a text looked at as a unified diff


def _lines(text: str) -> list[str]:
    """A patch's lines: split at line ends only (`splitlines` also splits at a form feed or U+2028
    inside a line, which would end a hunk early and lose its changes)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the end of the last line, not a line
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


_last_diff: tuple[str, list] = ("", [])  # the last text `diff_of` read, and what it found


def diff_of(text: str) -> list[EditPart]:
    """A text's replacements when it is a unified diff holding any (else none). A card asks it
    twice of the same text (whether to draw a diff, then to draw it): the last answer is kept."""
    global _last_diff
    seen, parts = _last_diff
    if text is seen or text == seen:
        return parts
    parts = unified_edits(text) if is_unified_diff(text) else []
    _last_diff = (text, parts)
    return parts


def is_unified_diff(text: str) -> bool:
    """Whether a text is a unified diff (what `git diff` prints, what SWE-agent submits): a
    `diff --git` header, or `---` / `+++` file lines, before a first `@@` hunk."""
    head = text[:4096].lstrip("\r\n")
    if not (head.startswith("diff --git ") or head.startswith("--- ")):
        return False
    return "\n+++ " in head and text.find("\n@@ -", 0, UNIFIED_CAP) >= 0


def unified_edits(patch: str) -> list[EditPart]:
    """A unified diff as one replacement per hunk, each with its file (`diff --git a/x b/y`, else
    the `+++ b/y` line), a new or deleted file said. A hunk ends where its header's line counts
    say, so a removed line that starts with `-- ` is not read as a file header."""
    out: list[EditPart] = []
    path: str | None = None
    action: str | None = None
    old: list[str] = []
    new: list[str] = []
    left = right = 0  # lines of the open hunk still to come (old side, new side)
    starts = (1, 1)  # the open hunk's first line numbers (old side, new side)
    files_done: set[str] = set()

    def close() -> None:
        if path is not None and (old or new):
            out.append(EditPart("\n".join(old), "\n".join(new), False, path, action, *starts))
            files_done.add(path)
        old.clear()
        new.clear()

    def close_file() -> None:
        # a file the diff names without a hunk (deleted, renamed, binary, its mode changed) is
        # still one the call changed: said, with nothing to draw
        if path is not None and path not in files_done and (action or binary):
            out.append(EditPart("", "", False, path, action or "binary file changed"))

    binary = False
    for line in _lines(patch[:UNIFIED_CAP]):
        if left > 0 or right > 0:
            op, text = line[:1], line[1:]
            if op == "\\":
                continue  # "\ No newline at end of file"
            if op == "-" or op == " " or not line:
                old.append(text)
                left -= 1
            if op == "+" or op == " " or not line:
                new.append(text)
                right -= 1
            if op not in ("-", "+", " ", ""):
                left = right = 0  # not a hunk line after all: the hunk is over
            else:
                continue
        if m := _GIT_FILE.match(line):
            close()
            close_file()
            path, action, binary = m[2].strip(), None, False
        elif m := _HUNK.match(line):
            close()
            left = int(m[2]) if m[2] is not None else 1
            right = int(m[4]) if m[4] is not None else 1
            # "-0,0" is an empty side (a new file): its first line, when it has one, is line 1
            starts = (max(int(m[1]), 1), max(int(m[3]), 1))
        elif line.startswith(("Binary files ", "GIT binary patch")):
            binary = True
        elif line.startswith("new mode "):
            action = action or "mode changed"
        elif line.startswith("new file mode"):
            action = "added"
        elif line.startswith("deleted file mode"):
            action = "deleted"
        elif line.startswith("rename from "):
            action = f"moved from {line[12:].strip()}"
        elif line.startswith("+++ ") and line[4:].strip() != "/dev/null":
            name = line[4:].split("\t", 1)[0].strip()
            path = name[2:] if name.startswith("b/") else name
        elif line.startswith("--- ") and path is None:
            name = line[4:].split("\t", 1)[0].strip()
            path = name[2:] if name.startswith("a/") else name
    close()
    close_file()
    return out


def _edit_pair(d: Any) -> EditPart | None:
    if isinstance(d, dict):
        for old, new in _OLD_NEW:
            if isinstance(d.get(old), str) and isinstance(d.get(new), str):
                return EditPart(d[old], d[new], bool(d.get("replace_all")))
    return None


# Fields some formats add to every call beside its arguments, shown apart (Cline's checklist)
SIDE_FIELDS = ("task_progress",)


def progress_of(inp: Any) -> str | None:
    """The agent's running checklist a call carries (Cline's `task_progress`, Markdown)."""
    if isinstance(inp, dict) and isinstance(inp.get("task_progress"), str) and \
            inp["task_progress"].strip():
        return inp["task_progress"]
    return None


def view_of(name: str, inp: Any) -> str:
    """The template branch that renders this tool's input (one of a fixed set of words)."""
    if isinstance(inp, str) and family(name) == "edit" and edits(inp):
        return "edit"  # a patch given as text (Codex's apply_patch)
    if not isinstance(inp, dict):
        return "json"
    if progress_of(inp):
        inp = {k: v for k, v in inp.items() if k not in SIDE_FIELDS}
    fam = family_of(name, inp)
    if name in COMM_TOOLS or (name or "").rsplit("__", 1)[-1].lower() in (
            "send_comm", "send_comm_to_channel"):
        return "comm"
    if fam == "shell" and command_of(inp):
        return "shell"
    if new_tasks(name, inp):
        return "tasks"
    if fam == "edit" and edits(inp):
        return "edit"
    if fam == "write" and isinstance(content_of(inp), str):
        return "write"
    if fam == "todos" and _todo_list(inp) is not None:
        return "todos"
    if fam == "agent" and isinstance(inp.get("prompt"), str):
        return "agent"
    if fam == "questions" and _question_list(inp):
        return "questions"
    if fam == "plan" and prose_input(inp):
        return "plan"
    if fam == "read" and path_of(inp) and set(inp) <= _SUMMARISED_READ | _EDITOR_READ:
        return "read"  # the header's summary says it all: the file and the lines
    if undone(name, inp):
        return "undo"  # …and here: the file whose last edit is undone
    if 0 < len(inp) <= 5 and all(is_short(v) for v in inp.values()):
        return "kv"
    if 0 < len(inp) <= 8 and all(is_short(v) or isinstance(v, str) for v in inp.values()):
        return "fields"  # a script, code, a query or a long text among short values
    return "json"


def prose_input(inp: Any) -> str | None:
    if isinstance(inp, dict):
        for key in _PROSE_INPUT:
            if isinstance(inp.get(key), str) and inp[key].strip():
                return inp[key]
    return None


def plan_asks(inp: Any) -> tuple[list[str], str | None]:
    """What a Claude Code plan (ExitPlanMode, 2.1) comes with besides its text, which the person
    approves with it: the permissions it asks for, one line each ("Bash: run tests", its input's
    `allowedPrompts: [{tool, prompt}]`), and the file the CLI saved it to (`planFilePath`)."""
    if not isinstance(inp, dict):
        return [], None
    asks = [f"{a['tool']}: {a['prompt']}" if isinstance(a.get("tool"), str) else a["prompt"]
            for a in inp.get("allowedPrompts") or () if isinstance(a, dict) and isinstance(a.get("prompt"), str)]
    path = inp.get("planFilePath")
    return asks, path if isinstance(path, str) and path else None


def is_short(v: Any) -> bool:
    """A value shown on one line beside its name (the `kv` and `fields` views)."""
    return v is None or isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) <= 200
                                                             and "\n" not in v)


def summary(name: str, inp: Any) -> str:
    """A short description of a call for its header: the command, the file, the pattern…"""
    if family(name) == "edit" and (patched := [e.path for e in edits(inp) if e.path]):
        return _line(", ".join(dict.fromkeys(patched)))  # the files a patch touches
    if isinstance(inp, str):
        return _line(inp)
    if not isinstance(inp, dict):
        return ""
    if name in COMM_TOOLS:
        to = inp.get("to_minion_name") or inp.get("channel_name") or "?"
        kind = inp.get("comm_type")
        return f"→ {to}" + (f" ({kind})" if kind else "") + (
            f": {_line(inp['summary'])}" if isinstance(inp.get("summary"), str) else "")
    fam = family_of(name, inp)
    path = path_of(inp)
    if fam == "shell" and (command := command_of(inp)):
        return _line(command)
    if fam in ("read", "write", "edit") and path:
        return _line(path) + _line_range(inp)
    if (back := undone(name, inp)) is not None:
        return "undo the last edit of " + _line(back)
    if is_editor(name) and path and isinstance(inp.get("command"), str):
        return _line(f"{inp['command']}  {path}")  # a file editor's other command (undo_edit…)
    if fam == "search":
        what = next((inp[k] for k in ("pattern", "regex", "query", "file_pattern", "glob")
                     if isinstance(inp.get(k), str) and inp[k]), None)
        if what:
            return _line(what) + (f"  in {_line(path)}" if path else "")
    if fam == "agent" and (label := agent_label(inp)):
        return _line(label)
    if fam == "questions" and (qs := _question_list(inp)):
        if len(qs) == 1:
            return _line(str(qs[0].get("question") or qs[0].get("header") or "1 question"))
        heads = [str(q["header"]) for q in qs if isinstance(q.get("header"), str) and q["header"].strip()]
        return _line(f"{len(qs)} questions" + (": " + ", ".join(heads) if heads else ""))
    if name in ("SendUserMessage", "Brief") and isinstance(inp.get("message"), str):
        # (the message is the card's body) who it is for, whether unasked, what went with it
        files = inp.get("attachments") if isinstance(inp.get("attachments"), list) else []
        return "to the user" + (" · unasked" if inp.get("status") == "proactive" else "") + (
            f" · {len(files)} attachment{'s' if len(files) != 1 else ''}" if files else "")
    if name in _BACKGROUND_CALLS and (bid := next((inp[k] for k in ("bash_id", "shell_id", "task_id")
                                                   if isinstance(inp.get(k), str) and inp[k]), None)):
        words = f"{_BACKGROUND_CALLS[name]} {bid}"
        if isinstance(inp.get("filter"), str) and inp["filter"]:
            words += f" · lines matching {inp['filter']}"
        if inp.get("block") is True:
            wait = inp.get("timeout")
            words += f" · waits up to {wait // 1000}s" if isinstance(wait, int) and wait >= 1000 else " · waits for it"
        return _line(words)
    if name in _MCP_RESOURCES:
        server = inp.get("server") if isinstance(inp.get("server"), str) and inp["server"] else None
        uri = inp.get("uri") if isinstance(inp.get("uri"), str) and inp["uri"] else None
        if uri:
            return _line(uri + (f"  from {server}" if server else ""))
        return _line(f"resources of {server}" if server else "resources of every MCP server")
    if name in _TASK_TOOLS and isinstance(inp.get("taskId"), (str, int)) and not isinstance(inp["taskId"], bool):
        status = inp.get("status")
        return _line(f"#{inp['taskId']}" + (f" → {status}" if isinstance(status, str) and status else ""))
    if name == "dynamic_task__create_task" and isinstance(inp.get("task_parameters"), list):
        # Goose 1.x: the tasks a later subagent__execute_task runs, each an instruction
        tasks = inp["task_parameters"]
        first = next((t[k] for t in tasks if isinstance(t, dict) for k in _TASK_WORDS
                      if isinstance(t.get(k), str) and t[k].strip()), None)
        return _line(f"{len(tasks)} task{'s' * (len(tasks) != 1)}" + (f": {first.strip()}" if first else ""))
    if name == "subagent__execute_task" and isinstance(inp.get("task_ids"), list):
        n, mode = len(inp["task_ids"]), inp.get("execution_mode")
        return f"runs {n} task{'s' * (n != 1)} in sub-agents" + (f" · {mode}" if isinstance(mode, str) and mode else "")
    if fam == "todos" and _todo_list(inp) is not None:
        items = todo_items(inp)
        done = sum(1 for status, _ in items if status == "completed")
        return f"{len(items)} items, {done} done"
    for key in _SUMMARY_KEYS:
        v = inp.get(key)
        if isinstance(v, str) and v.strip():
            return _line(v)
    return ""


@dataclass(slots=True)
class NewTask:
    """One task a Goose `dynamic_task__create_task` call makes (its `task_parameters` item, read as
    recipe_tools/dynamic_task_tools.rs reads it): a title and description where the model gave them,
    what the sub-agent is told (`instructions`, `prompt`, or 1.x's `text_instruction`), and its other
    fields, each a name and a line (lists of names joined, objects as compact JSON)."""
    title: str | None
    description: str | None
    said: list[tuple[str, str]]  # (field, text): the instructions and the prompt
    fields: list[tuple[str, str]]


_TASK_TEXTS = ("instructions", "prompt", "text_instruction")
DYNAMIC_TASKS = "dynamic_task__create_task"


def new_tasks(name: Any, inp: Any) -> list[NewTask] | None:
    """The tasks a `dynamic_task__create_task` call makes, or None when its input is not a list of
    them (shown as JSON then)."""
    tasks = inp.get("task_parameters") if name == DYNAMIC_TASKS and isinstance(inp, dict) else None
    if not isinstance(tasks, list) or not tasks or not all(isinstance(t, dict) for t in tasks):
        return None
    out = []
    for t in tasks:
        def text(k: str) -> str | None:
            v = t.get(k)
            return v.strip() if isinstance(v, str) and v.strip() else None

        fields = []
        for k, v in t.items():
            if k in _TASK_TEXTS and isinstance(v, str) or k in ("title", "description") and text(k):
                continue
            if isinstance(v, list) and all(isinstance(x, str) for x in v):
                line = ", ".join(v)  # extensions' short names, context, activities
            elif isinstance(v, list) and all(isinstance(x, dict) and isinstance(x.get("name"), str) for x in v):
                line = ", ".join(x["name"] for x in v)  # extension configs
            else:
                line = v if isinstance(v, str) else reader_json(v)
            fields.append((k, line))
        out.append(NewTask(text("title"), text("description"),
                           [(k, t[k]) for k in _TASK_TEXTS if isinstance(t.get(k), str) and t[k].strip()], fields))
    return out


def reader_json(v: Any) -> str:
    """A value as one line of JSON."""
    return orjson.dumps(v, default=str).decode()


def agent_label(inp: Any) -> str | None:
    """A sub-agent named by the call that spawned it: "Explore · Find window() callers"."""
    if not isinstance(inp, dict):
        return None
    # Claude Code's Task / Agent: subagent_type; Wolo's task: agent
    kind = next((inp[k].strip() for k in ("subagent_type", "agent")
                 if isinstance(inp.get(k), str) and inp[k].strip()), None)
    desc = inp.get("description").strip() if isinstance(inp.get("description"), str) else ""
    words = [w for w in (kind, desc) if w]
    return " · ".join(words) or None


def _line_range(inp: dict) -> str:
    view = inp.get("view_range")  # a file editor's [first, last] (-1: to the end)
    if isinstance(view, list) and len(view) == 2 and all(type(x) is int for x in view) and view[0] >= 1:
        return f"  lines {view[0]}–{view[1]}" if view[1] >= view[0] else f"  from line {view[0]}"
    start, limit = inp.get("offset"), inp.get("limit")
    if isinstance(start, int) and isinstance(limit, int) and limit > 0:
        return f"  lines {start}–{start + limit - 1}"
    if isinstance(start, int) and start > 1:
        return f"  from line {start}"
    return ""


def _line(text: str, limit: int = 160) -> str:
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


# the only words that reach a class (Gemini CLI's write_todos also cancels an item), and each one's
# box, in a checklist (_macros.html) and where a list is written as text
TODO_BOX = {"pending": "☐", "in_progress": "◐", "completed": "☑", "cancelled": "☒"}
_TODO_STATES = tuple(TODO_BOX)


def _todo_list(inp: dict) -> list | None:
    """A todo tool's list: `todos` (Claude Code, Cline…) or `plan` (Codex's update_plan)."""
    for key in ("todos", "plan"):
        if isinstance(inp.get(key), list):
            return inp[key]
    return None


def todo_items(inp: dict) -> list[tuple[str, str]]:
    out = []
    for t in _todo_list(inp) or []:
        if isinstance(t, dict):
            status = t.get("status") if t.get("status") in _TODO_STATES else "pending"
            out.append((status, str(t.get("content") or t.get("activeForm") or t.get("step")
                                    or t.get("description") or "")))
    return out


# Claude Code's calls about a background shell or task, which name it by its id alone (2.0's
# BashOutput {bash_id, filter} and KillShell {shell_id}; 2.1's TaskOutput {task_id, block, timeout}
# and TaskStop {task_id, or the older shell_id}): what the call does to which one
_BACKGROUND_CALLS = {"BashOutput": "output of shell", "KillShell": "stop shell", "KillBash": "stop shell",
                     "TaskOutput": "output of task", "TaskStop": "stop task"}
# its MCP resource tools: ReadMcpResourceTool {server, uri}, ListMcpResourcesTool {server?}
_MCP_RESOURCES = ("ReadMcpResourceTool", "ListMcpResourcesTool")
# Claude Code's task list tools that name a task by its id (`TaskUpdate` also sets its status)
_TASK_TOOLS = ("TaskUpdate", "TaskGet", "TaskStop", "TaskOutput")


@dataclass(slots=True)
class Option:
    label: str
    description: str = ""
    preview: str = ""  # what the option would look like (Markdown or an HTML fragment), as written
    chosen: bool = False


@dataclass(slots=True)
class Question:
    """One question of an AskUserQuestion call, with the answer the person gave when it is known."""

    question: str
    header: str = ""
    multi: bool = False
    options: list = None  # Options
    own: str = ""  # what the person typed instead of picking an option ("Other", a text question)
    notes: str = ""  # the notes they added to their choice
    answered: bool = False


def _question_list(inp: Any) -> list:
    """The questions of an AskUserQuestion call (Claude Code: `questions`, each `{question, header,
    options: [{label, description, preview?}], multiSelect}`; newer CLIs add `kind` text / number
    questions without options)."""
    qs = inp.get("questions") if isinstance(inp, dict) else None
    if not isinstance(qs, list) or not qs or not all(
            isinstance(q, dict) and isinstance(q.get("question"), str) for q in qs):
        return []
    return qs


# the answers as the CLI words them for the model: `"question"="answer"`, joined by ", " (2.1.x:
# "Your questions have been answered: …"; before it "User has answered your questions: …")
_ANSWER = re.compile(r'"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"')


def questions(inp: Any, structured: Any = None, said: str = "") -> list[Question]:
    """An AskUserQuestion call's questions, each option marked chosen where the person picked it.
    The answers come from the call's `toolUseResult` (`answers`: question → the label picked, the
    labels of a multiple choice joined by ", ", or the person's own words; `annotations`: question →
    `{notes}`), else from the result's text (`said`), which words them the same way."""
    answers: dict = {}
    notes: dict = {}
    if isinstance(structured, dict):
        if isinstance(structured.get("answers"), dict):
            answers = structured["answers"]
        if isinstance(structured.get("annotations"), dict):
            notes = structured["annotations"]
    elif said and "=" in said:
        answers = {q: a for q, a in _ANSWER.findall(said[:20_000])}
    out = []
    for q in _question_list(inp):
        text = q["question"]
        opts = [Option(str(o.get("label") or ""), str(o.get("description") or ""),
                       str(o.get("preview") or "")) for o in q.get("options") if isinstance(o, dict)] \
            if isinstance(q.get("options"), list) else []
        multi = q.get("multiSelect") is True
        item = Question(text, str(q.get("header") or ""), multi, opts)
        given = answers.get(text)
        if isinstance(given, (int, float)) and not isinstance(given, bool):
            given = str(given)
        picked = [str(x) for x in given] if isinstance(given, list) else \
            [given] if isinstance(given, str) and given.strip() else []
        labels = {o.label: o for o in opts}
        for answer in picked:
            if answer in labels:
                labels[answer].chosen = True
            elif multi and all(part in labels for part in answer.split(", ")):
                for part in answer.split(", "):
                    labels[part].chosen = True
            else:
                item.own = f"{item.own}, {answer}" if item.own else answer
        item.answered = bool(picked)
        note = notes.get(text)
        if isinstance(note, dict) and isinstance(note.get("notes"), str):
            item.notes = note["notes"]
        out.append(item)
    return out


# --- results -------------------------------------------------------------------------------------


@dataclass(slots=True)
class ResultView:
    """How one text of a result is shown. `kind` is a fixed word the templates branch on."""

    kind: str  # prose | file | json | diff | output
    filename: str | None = None  # picks the highlighter of a file
    code: str = ""  # file: the file's lines without their printed numbers; prose: the Markdown
    numbers: list | None = None  # file: the number of each line, when the tool printed them
    before: str = ""  # file: what the tool said before the lines ("The file … has been updated…")
    after: str = ""  # file: what it said after them
    edits: list | None = None  # diff: its replacements (EditParts), one per hunk


# `   42→text` (Claude Code's Read, cat -n with an arrow) or `    42\ttext` (cat -n)
_NUMBERED_LINE = re.compile(r"^ *(\d+)(?:→|\t)(.*)$", re.M)
_NUMBERED_RUN = re.compile(r"(?:^ *\d+(?:→|\t).*(?:\n|\Z))+", re.M)
_NUMBERED_AFTER_NL = re.compile(r"\n *(\d+)(?:→|\t)([^\n]*)")  # a line of it, with the newline before
_first, _second = itemgetter(0), itemgetter(1)
_HEADING = re.compile(r"^#{1,6} \S", re.M)
_MD_SIGNS = (re.compile(r"^\s*(?:[-*+]|\d+\.) \S", re.M), re.compile(r"\*\*\S.*?\S\*\*"),
             re.compile(r"\[[^\]\n]+\]\([^)\s]+\)"), re.compile(r"^```", re.M),
             re.compile(r"^\|.*\|\s*$", re.M))


def result_view(name: str | None, inp: Any, text: str, error: bool = False) -> ResultView:
    """The way to show one text block of a tool result (see the module docstring for the rule)."""
    fam = family_of(name, inp)
    if "\x1b" in text:
        return ResultView("output")
    if _is_json(text):
        return ResultView("json")
    if error:
        return ResultView("output")  # an error message reads as written, whatever the tool
    if parts := diff_of(text):
        return ResultView("diff", edits=parts)  # `git diff`, a submitted patch: a diff per file
    if fam in PROSE_FAMILIES:
        return ResultView("prose", code=_search_links(text) if fam == "websearch" else text)
    if fam in ("read", "write", "edit"):
        found = numbered(text, path_of(inp))
        if found is not None:
            return found
        if fam == "read" and path_of(inp):
            return ResultView("file", path_of(inp), text)
        return ResultView("output")
    if fam is None and looks_like_markdown(text):
        return ResultView("prose", code=text)
    return ResultView("output")


_LINKS = re.compile(r"^Links: (\[.*\])$", re.M)


def _search_links(text: str) -> str:
    """A web search's `Links: [{"title": …, "url": …}, …]` line (Claude Code's WebSearch) as a
    Markdown list of links; the rest of the text as written."""

    def links(m: re.Match) -> str:
        try:
            found = orjson.loads(m.group(1))
        except orjson.JSONDecodeError:
            return m.group(0)
        if not isinstance(found, list) or not all(
                isinstance(x, dict) and isinstance(x.get("url"), str) for x in found):
            return m.group(0)
        return "\n".join(f"- [{md_escape(str(x.get('title') or x['url']))}]"
                         f"(<{url_escape(x['url'])}>)" for x in found) + "\n"

    return _LINKS.sub(links, text)


def numbered(text: str, filename: str | None) -> ResultView | None:
    """A run of numbered lines (`   42→…`, counting up by one) with what comes before and after it,
    or None when the text holds no such run."""
    # A Read result is thousands of such lines: the run is found, and its lines split into numbers
    # and code, by the regex engine in one pass each, not line by line in Python.
    first = _NUMBERED_LINE.search(text)
    if first is None:
        return None
    at = first.start()
    # Nearly always every line from the first numbered one on is numbered, counting up by one:
    # one pass of a pattern that starts at a newline (the engine jumps from one to the next, where
    # a `^` is tried at every character) splits them, and a count of the newlines says that none
    # was skipped (each newline starts at most one match)
    # (split: [before, number, code, between, number, code, between…, after], where every line is
    # numbered when nothing is between them and only the last line's end after them)
    parts = _NUMBERED_AFTER_NL.split(text[at - 1:] if at else "\n" + text)
    if parts[-1] == ("\n" if text.endswith("\n") else "") and not any(parts[3:-1:3]):
        found = parts[1::3]
        start = int(found[0])
        if found == plain_numbers(start, len(found)):  # (counting up by one, written plainly)
            return ResultView("file", filename, "\n".join(parts[2::3]),
                              list(range(start, start + len(found))), text[:at].strip(), "")
        numbers = list(map(int, found))
        if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            return ResultView("file", filename, "\n".join(parts[2::3]), numbers,
                              text[:at].strip(), "")
    block = _NUMBERED_RUN.match(text, at).group()
    pairs = _NUMBERED_LINE.findall(block)
    numbers = list(map(int, (n for n, _ in pairs)))
    k = len(numbers)
    if numbers != list(range(numbers[0], numbers[0] + k)):
        k = next(i for i in range(1, k) if numbers[i] != numbers[i - 1] + 1)
        del numbers[k:]
        rest = block.split("\n", k)[k] + text[at + len(block):]
    else:
        rest = text[at + len(block):]
    return ResultView("file", filename, "\n".join(c for _, c in pairs[:k]), numbers,
                      text[:at].strip(), rest.strip())


class NumberStrings:
    """A string made of each line number (`fmt(n)`), kept for the numbers up to `most`: files are
    read from line 1 on, again and again, thousands of lines each. The list kept is replaced whole,
    never changed, so threads read it at once."""

    def __init__(self, fmt, most: int = 1 << 16) -> None:
        self.fmt, self.most, self.kept = fmt, most, []

    def take(self, start: int, count: int) -> list[str]:
        """The strings of the numbers from `start` on, `count` of them."""
        stop = start + count
        kept = self.kept
        if stop > len(kept):
            if stop > self.most:
                return list(map(self.fmt, range(start, stop)))
            kept = self.kept = list(map(self.fmt, range(min(self.most, max(stop, 2 * len(kept))))))
        return kept[start:stop]


plain_numbers = NumberStrings(str).take  # `str(n)` for n from `start` on, `count` of them


def _is_json(text: str) -> bool:
    t = text.strip()
    if not (t[:1] in "{[" and t[-1:] in "}]") or len(t) < 2:
        return False
    try:
        return isinstance(orjson.loads(t), (dict, list))
    except orjson.JSONDecodeError:
        return False


def looks_like_markdown(text: str) -> bool:
    """Whether a text is written as Markdown: a heading, or two different kinds of Markdown mark."""
    head = text[:20_000]
    if _HEADING.search(head):
        return True
    return sum(1 for sign in _MD_SIGNS if sign.search(head)) >= 2
