"""Writes this folder's OpenCode fixtures: hand-made from OpenCode's own schemas (no real session
with a licence is public), each field as the source names it (see README.md for the files cited).

    python test_data/formats/opencode/make_fixtures.py

Writes `data/` (an OpenCode data folder, ~/.local/share/opencode: the file storage), `export/`
(the same parent session as `opencode export` writes it), `legacy/` (the 0.1 layout, parts
inline) and `run/` (the parent's replies as `opencode run --format json` prints them). Deterministic: fixed ids and times.
"""

import json
import shutil
from pathlib import Path

HERE = Path(__file__).parent
PROJECT = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"  # a git root commit, as project ids are
T0 = 1764064800000  # 2025-11-25T10:00:00Z, in ms as OpenCode writes times
CWD = "/home/dev/calc"
PARENT, CHILD, UNDONE = "ses_53a1c2d3e001aAbBcCdDeEfFgG", "ses_53a1c2d3e00bhHiIjJkKlLmM", "ses_53a1c2d3e020nNoOpPqQrRsS"


def tokens(i, o, r=0, read=0, write=0):
    return {"input": i, "output": o, "reasoning": r, "cache": {"read": read, "write": write}}


def session(sid, title, t, parent=None, **more):
    info = {"id": sid, "slug": "brave-otter", "version": "1.0.85", "projectID": PROJECT, "directory": CWD,
            "title": title, "time": {"created": t, "updated": t + 60000}}
    if parent:
        info["parentID"] = parent
    info.update(more)
    return info


def user(sid, mid, t, *parts):
    return {"id": mid, "sessionID": sid, "role": "user", "time": {"created": t}, "agent": "build",
            "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}}, list(parts)


def assistant(sid, mid, t, end, parent, cost, toks, *parts, agent="build", **more):
    info = {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": t},
            "parentID": parent, "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "mode": agent,
            "agent": agent, "path": {"cwd": CWD, "root": CWD}, "cost": cost, "tokens": toks,
            "finish": "stop"}
    if end:
        info["time"]["completed"] = end
    info.update(more)
    return info, list(parts)


def text(t, s, **more):
    return {"type": "text", "text": s, "time": {"start": t, "end": t + 300}, **more}


def tool(call, name, status, inp, t, **state):
    st = {"status": status, "input": inp, **state}
    if status != "pending":
        st.setdefault("time", {"start": t})
        if status in ("completed", "error"):
            st["time"]["end"] = t + 1200
    if status == "pending":
        st["raw"] = json.dumps(inp)
    return {"type": "tool", "callID": call, "tool": name, "state": st}


def step_finish(cost, toks, reason="tool-calls"):
    return {"type": "step-finish", "reason": reason, "snapshot": "9f1c2e7", "cost": cost, "tokens": toks}


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

PARENT_MESSAGES = [
    user(PARENT, "msg_a1c2d3e00101AAAAAAAAAAAAAA", T0,
         text(T0, "Fix the divide-by-zero in calc.py and add a test. <script>alert('x')</script>"),
         {"type": "file", "mime": "image/png", "filename": "traceback.png", "url": "data:image/png;base64," + PNG},
         {"type": "file", "mime": "text/plain", "filename": "calc.py", "url": "file:///home/dev/calc/calc.py",
          "source": {"type": "file", "path": "calc.py", "text": {"value": "@calc.py", "start": 0, "end": 8}}},
         text(T0, "Called the Read tool with the following input: {\"filePath\":\"/home/dev/calc/calc.py\"}",
              synthetic=True)),
    assistant(PARENT, "msg_a1c2d3e00102BBBBBBBBBBBBBB", T0 + 1000, T0 + 20000, "msg_a1c2d3e00101AAAAAAAAAAAAAA",
              0.0421, tokens(900, 410, 120, 12000, 3000),
              {"type": "step-start", "snapshot": "4d5e6f7"},
              {"type": "reasoning", "text": "divide() has no zero check; read it first.",
               "time": {"start": T0 + 1100, "end": T0 + 1500}},
              text(T0 + 1600, "Let me look at **calc.py** first."),
              tool("toolu_read_1", "read", "completed", {"filePath": "/home/dev/calc/calc.py"}, T0 + 2000,
                   output="<file>\n00001| def divide(a, b):\n00002|     return a / b\n</file>",
                   title="calc.py", metadata={"preview": "def divide(a, b):"}),
              tool("toolu_task_1", "task", "completed",
                   {"description": "Find divide() callers", "prompt": "List every caller of divide() in the repo.",
                    "subagent_type": "explore"}, T0 + 3000,
                   output=f"task_id: {CHILD} (for resuming to continue this task if needed)\n\n<task_result>\n"
                          "divide() is called from main.py:12 only.\n</task_result>",
                   title="Find divide() callers",
                   metadata={"sessionId": CHILD, "model": {"modelID": "claude-haiku-4-5", "providerID": "anthropic"}}),
              step_finish(0.0213, tokens(500, 200, 120, 6000, 3000)),
              {"type": "step-start", "snapshot": "5e6f708"},
              tool("toolu_edit_1", "edit", "completed",
                   {"filePath": "/home/dev/calc/calc.py", "oldString": "    return a / b",
                    "newString": "    if b == 0:\n        raise ZeroDivisionError(\"b must not be 0\")\n    return a / b"},
                   T0 + 9000, output="Edit applied successfully.", title="calc.py",
                   metadata={"diagnostics": {}, "filediff": {"file": "calc.py", "additions": 2, "deletions": 0}}),
              tool("toolu_todo_1", "todowrite", "completed",
                   {"todos": [{"id": "1", "content": "Guard divide() against 0", "status": "completed", "priority": "high"},
                              {"id": "2", "content": "Add a test for divide(1, 0)", "status": "in_progress", "priority": "medium"}]},
                   T0 + 10000, output="[]", title="1 todos", metadata={"todos": []}),
              tool("toolu_bash_1", "bash", "error", {"command": "rm -rf build", "description": "Clean build"},
                   T0 + 11000, error="The user rejected permission to use this specific tool call."),
              tool("toolu_fetch_1", "webfetch", "error", {"url": "https://docs.python.org/3/", "format": "markdown"},
                   T0 + 12000, error="Tool execution aborted"),
              step_finish(0.0208, tokens(400, 210, 0, 6000, 0)),
              {"type": "patch", "hash": "5e6f708", "files": ["/home/dev/calc/calc.py"]}),
    assistant(PARENT, "msg_a1c2d3e00103CCCCCCCCCCCCCC", T0 + 21000, T0 + 24000, "msg_a1c2d3e00101AAAAAAAAAAAAAA",
              0.0051, tokens(60, 80, 0, 15000, 0),
              {"type": "step-start"},
              tool("toolu_bash_2", "bash", "completed", {"command": "python -m pytest -q", "description": "Run tests"},
                   T0 + 21500, output="3 passed in 0.02s\n", title="Run tests",
                   metadata={"output": "3 passed in 0.02s\n", "exit": 0, "description": "Run tests"}),
              text(T0 + 23000, "divide() now raises `ZeroDivisionError` for b == 0, and the tests pass."),
              step_finish(0.0051, tokens(60, 80, 0, 15000, 0), "stop")),
    user(PARENT, "msg_a1c2d3e00104DDDDDDDDDDDDDD", T0 + 30000, {"type": "compaction", "auto": True}),
    assistant(PARENT, "msg_a1c2d3e00105EEEEEEEEEEEEEE", T0 + 30500, T0 + 33000, "msg_a1c2d3e00104DDDDDDDDDDDDDD",
              0.0032, tokens(2000, 150), text(T0 + 31000, "We guarded divide() against zero and added a test."),
              step_finish(0.0032, tokens(2000, 150), "stop"), summary=True, agent="compaction"),
    user(PARENT, "msg_a1c2d3e00106FFFFFFFFFFFFFF", T0 + 40000, text(T0 + 40000, "Now handle modulo too.")),
    assistant(PARENT, "msg_a1c2d3e00107GGGGGGGGGGGGGG", T0 + 40500, T0 + 47000, "msg_a1c2d3e00106FFFFFFFFFFFFFF",
              0, tokens(0, 0),
              {"type": "retry", "attempt": 1, "time": {"created": T0 + 41000},
               "error": {"name": "APIError", "data": {"message": "Overloaded", "statusCode": 529, "isRetryable": True}}},
              error={"name": "APIError", "data": {"message": "Overloaded", "statusCode": 529, "isRetryable": False}}),
]

CHILD_MESSAGES = [
    user(CHILD, "msg_a1c2d3e00110HHHHHHHHHHHHHH", T0 + 3100, text(T0 + 3100, "List every caller of divide() in the repo.")),
    assistant(CHILD, "msg_a1c2d3e00111IIIIIIIIIIIIII", T0 + 3200, T0 + 8000, "msg_a1c2d3e00110HHHHHHHHHHHHHH",
              0.0011, tokens(300, 60), {"type": "step-start"},
              tool("toolu_grep_s1", "grep", "completed", {"pattern": "divide\\(", "path": CWD}, T0 + 3300,
                   output="Found 2 matches\n/home/dev/calc/calc.py:\n  Line 1: def divide(a, b):\n"
                          "/home/dev/calc/main.py:\n  Line 12: print(divide(x, y))", title="divide\\("),
              text(T0 + 7000, "divide() is called from main.py:12 only."),
              step_finish(0.0011, tokens(300, 60), "stop"), agent="explore"),
]

UNDONE_MESSAGES = [
    user(UNDONE, "msg_a1c2d3e00201JJJJJJJJJJJJJJ", T0 + 60000, text(T0 + 60000, "Rename calc.py to mathx.py")),
    assistant(UNDONE, "msg_a1c2d3e00202KKKKKKKKKKKKKK", T0 + 61000, T0 + 62000, "msg_a1c2d3e00201JJJJJJJJJJJJJJ",
              0.001, tokens(100, 20), text(T0 + 61500, "Renamed."), step_finish(0.001, tokens(100, 20), "stop")),
    user(UNDONE, "msg_a1c2d3e00203LLLLLLLLLLLLLL", T0 + 63000, text(T0 + 63000, "Also delete the tests")),
    assistant(UNDONE, "msg_a1c2d3e00204MMMMMMMMMMMMMM", T0 + 64000, T0 + 65000, "msg_a1c2d3e00203LLLLLLLLLLLLLL",
              0.001, tokens(100, 20), text(T0 + 64500, "Deleted tests/."), step_finish(0.001, tokens(100, 20), "stop")),
]

SESSIONS = {
    PARENT: (session(PARENT, "Fix divide-by-zero in calc.py", T0,
                     summary={"additions": 2, "deletions": 0, "files": 1},
                     share={"url": "https://opncd.ai/s/Xy12AbCd"}), PARENT_MESSAGES),
    CHILD: (session(CHILD, "Find divide() callers (@explore subagent)", T0 + 3050, parent=PARENT), CHILD_MESSAGES),
    UNDONE: (session(UNDONE, "Rename calc.py", T0 + 60000,
                     revert={"messageID": "msg_a1c2d3e00203LLLLLLLLLLLLLL", "snapshot": "7a8b9c0"}), UNDONE_MESSAGES),
}
TODOS = [{"id": "1", "content": "Guard divide() against 0", "status": "completed", "priority": "high"},
         {"id": "2", "content": "Add a test for divide(1, 0)", "status": "in_progress", "priority": "medium"}]


def part_ids(mid, parts):
    out = []
    for i, p in enumerate(parts, 1):
        out.append({"id": f"prt_{mid[4:16]}{i:02d}{mid[18:]}", "sessionID": None, "messageID": mid, **p})
    return out


def dump(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n")  # Storage.write's indent


def write_storage(root: Path) -> None:
    storage = root / "storage"
    dump(storage / "project" / f"{PROJECT}.json",
         {"id": PROJECT, "worktree": CWD, "vcs": "git", "time": {"created": T0, "initialized": T0}})
    for sid, (info, messages) in SESSIONS.items():
        dump(storage / "session" / PROJECT / f"{sid}.json", info)
        for minfo, parts in messages:
            dump(storage / "message" / sid / f"{minfo['id']}.json", minfo)
            for p in part_ids(minfo["id"], parts):
                p["sessionID"] = sid
                dump(storage / "part" / minfo["id"] / f"{p['id']}.json", p)
    dump(storage / "todo" / f"{PARENT}.json", TODOS)
    dump(storage / "session_diff" / f"{PARENT}.json",
         [{"file": "calc.py", "before": "", "after": "", "additions": 2, "deletions": 0}])
    (root / "snapshot" / PROJECT / "objects").mkdir(parents=True, exist_ok=True)
    (root / "log").mkdir(exist_ok=True)
    (root / "log" / "2025-11-25T100000.log").write_text("INFO  service=default version=1.0.85 opencode\n")


def export_of(sid):
    info, messages = SESSIONS[sid]
    out = []
    for minfo, parts in messages:
        ps = part_ids(minfo["id"], parts)
        for p in ps:
            p["sessionID"] = sid
        out.append({"info": minfo, "parts": ps})
    return {"info": info, "messages": out, "todos": TODOS if sid == PARENT else []}


LEGACY = "ses_7f3e2d1c0ffeAbCdEfGhIjKlMn"


def write_legacy(root: Path) -> None:
    """OpenCode 0.1's layout (storage.ts's first migration reads it): per project, parts inline."""
    base = root / "project" / "home-dev-calc" / "storage" / "session"
    dump(base / "info" / f"{LEGACY}.json",
         {"id": LEGACY, "version": "0.1.140", "title": "Explain calc.py",
          "time": {"created": T0 - 86400000, "updated": T0 - 86300000}})
    sid = LEGACY
    t = T0 - 86400000
    dump(base / "message" / sid / "msg_7f3e2d1c1001aaaaaaaaaaaaaa.json",
         {"id": "msg_7f3e2d1c1001aaaaaaaaaaaaaa", "role": "user",
          "parts": [{"type": "text", "text": "What does calc.py do?"}],
          "metadata": {"time": {"created": t}, "sessionID": sid, "tool": {}}})
    dump(base / "message" / sid / "msg_7f3e2d1c1002bbbbbbbbbbbbbb.json",
         {"id": "msg_7f3e2d1c1002bbbbbbbbbbbbbb", "role": "assistant",
          "parts": [{"type": "step-start"},
                    {"type": "tool-invocation", "toolInvocation": {
                        "state": "result", "step": 0, "toolCallId": "toolu_old_1", "toolName": "read",
                        "args": {"filePath": "/home/dev/calc/calc.py"},
                        "result": "<file>\n00001| def divide(a, b):\n</file>"}},
                    {"type": "text", "text": "It defines `divide(a, b)`."}],
          "metadata": {"time": {"created": t + 1000, "completed": t + 5000}, "sessionID": sid,
                       "tool": {"toolu_old_1": {"title": "calc.py", "time": {"start": t + 1500, "end": t + 1700}}},
                       "assistant": {"system": ["You are opencode"], "modelID": "claude-sonnet-4-20250514",
                                     "providerID": "anthropic", "path": {"cwd": CWD, "root": CWD}, "cost": 0.0042,
                                     "tokens": tokens(1200, 40, 0, 0, 1100)}}})


RUN_TYPES = {"step-start": "step_start", "step-finish": "step_finish", "text": "text",
             "reasoning": "reasoning", "tool": "tool_use"}


def run_log(sid):
    """The parent's replies as `opencode run --format json --thinking` prints them (cli/cmd/run.ts:
    a line per part as it ended, `{type, timestamp, sessionID, part}`; a session error's line)."""
    lines = []
    info, messages = SESSIONS[sid]
    for minfo, parts in messages:
        if minfo["role"] != "assistant":
            continue
        t = minfo["time"]["created"]
        for i, p in enumerate(part_ids(minfo["id"], parts)):
            p["sessionID"] = sid
            kind = RUN_TYPES.get(p["type"])
            if kind is None or (kind == "tool_use" and p["state"]["status"] not in ("completed", "error")):
                continue
            lines.append({"type": kind, "timestamp": t + 100 * (i + 1), "sessionID": sid, "part": p})
        if minfo.get("error"):
            lines.append({"type": "error", "timestamp": minfo["time"]["completed"], "sessionID": sid,
                          "error": minfo["error"]})
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


if __name__ == "__main__":
    for name in ("data", "export", "legacy", "run"):
        shutil.rmtree(HERE / name, ignore_errors=True)
    write_storage(HERE / "data")
    dump(HERE / "export" / f"{PARENT}.json", export_of(PARENT))
    write_legacy(HERE / "legacy")
    (HERE / "run").mkdir()
    (HERE / "run" / "opencode-run.jsonl").write_text(run_log(PARENT))
