"""Writes the bundled demo sessions under test_data/sessions/ (run: python test_data/make_sessions.py).

Hand-written, each session named for what it shows. Tests assert against these files, so change
them here and regenerate rather than editing the output by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent / "sessions"


def jsonl(path: Path, records: list, raw_lines: dict[int, str] | None = None) -> None:
    """Write records one per line; raw_lines puts verbatim (possibly broken) text at given indexes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    for i, text in sorted((raw_lines or {}).items()):
        lines.insert(i, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def state(path: Path, **fields) -> None:
    path.write_text(json.dumps(fields, indent=2) + "\n", encoding="utf-8")


SID = "7f3c2a10-0000-4000-8000-00000000a001"
T0 = 1761073190.0  # 2025-10-21T18:59:50Z


def feature_tour() -> None:
    """Every feature of the legion format in one session."""
    d = HERE / "legion-feature-tour"
    md = {"session_id": SID}
    recs = [
        {"type": "system", "content": "Claude Code Launched", "timestamp": "2025-10-21T18:59:48.000000+00:00",
         "metadata": {"subtype": "client_launched", "session_id": SID, "has_tool_uses": False}, "session_id": SID},
        {"type": "user", "content": "Refactor `timeline.py`: split the window logic out, and show me the diff.",
         "session_id": SID, "timestamp": "2025-10-21T18:59:50.000000+00:00", "message_id": "tour-prompt-1"},
        {"_type": "SystemMessage", "timestamp": T0 + 0.4, "session_id": SID,
         "data": {"subtype": "init", "data": {"type": "system", "subtype": "init", "tools": ["Read", "Edit", "Bash"],
                                              "model": "claude-sonnet-4-5-20250929"}}},
        {"type": "assistant", "content": "I'll start by reading the file.", "timestamp": T0 + 3.25,
         "message_id": "tour-read",
         "metadata": {**md, "model": "claude-sonnet-4-5-20250929",
                      "thinking_blocks": [{"content": "The user wants a refactor. First I need to **see** the current "
                                                      "structure of `timeline.py` before proposing anything.",
                                           "timestamp": T0 + 2.0}],
                      "has_thinking": True, "has_tool_uses": True,
                      "tool_uses": [{"id": "toolu_read_1", "name": "Read",
                                     "input": {"file_path": "/home/dev/app/timeline.py"}, "timestamp": T0 + 3.25}]}},
        {"type": "user", "content": "Tool results: 1 results", "timestamp": T0 + 3.9, "message_id": "tour-read-result",
         "metadata": {**md, "has_tool_results": True, "tool_results": [
             {"tool_use_id": "toolu_read_1", "is_error": None, "timestamp": T0 + 3.9,
              "content": "def window(events, start, stop):\n    return events[start:stop]\n\n"
                         "def render(events):\n    return [e.html for e in events]\n"}]}},
        {"type": "assistant", "content": "Let me run the tests first to see where we stand.", "timestamp": T0 + 6.0,
         "message_id": "tour-bash",
         "metadata": {**md, "model": "claude-sonnet-4-5-20250929", "has_tool_uses": True,
                      "tool_uses": [{"id": "toolu_bash_1", "name": "Bash",
                                     "input": {"command": "pytest -q tests/test_timeline.py",
                                               "description": "Run the timeline tests"}, "timestamp": T0 + 6.0}]}},
        {"type": "user", "content": "Tool results: 1 results", "timestamp": T0 + 8.7, "message_id": "tour-bash-result",
         "metadata": {**md, "has_tool_results": True, "tool_results": [
             {"tool_use_id": "toolu_bash_1", "is_error": True, "timestamp": T0 + 8.7,
              "content": "\u001b[31mFAILED\u001b[0m tests/test_timeline.py::test_window - AssertionError\n"
                         "\u001b[1m1 failed\u001b[22m, \u001b[32m4 passed\u001b[0m in 0.12s"}]}},
        {"_type": "AssistantMessage", "timestamp": T0 + 12.0, "session_id": SID, "message_id": "tour-edit",
         "data": {"content": [{"text": "One test fails already. I'll split `window` out and fix the off-by-one:"},
                              {"id": "toolu_edit_1", "name": "Edit",
                               "input": {"file_path": "/home/dev/app/timeline.py",
                                         "old_string": "def window(events, start, stop):\n    return events[start:stop]",
                                         "new_string": "def window(events, start, stop):\n    \"\"\"Events [start, stop].\"\"\"\n    return events[start:stop + 1]"}}],
                  "model": "claude-sonnet-4-5-20250929", "message_id": "msg_tour_edit"}},
        {"type": "permission_request", "timestamp": T0 + 12.2, "session_id": SID, "message_id": "tour-perm-req",
         "metadata": {"has_permission_requests": True, "tool_name": "Edit", "request_id": "perm-1",
                      "input_params": {"file_path": "/home/dev/app/timeline.py"}}},
        {"type": "permission_response", "timestamp": T0 + 15.0, "session_id": SID, "message_id": "tour-perm-res",
         "metadata": {"has_permission_responses": True, "behavior": "allow", "request_id": "perm-1"}},
        {"_type": "UserMessage", "timestamp": T0 + 15.4, "session_id": SID, "message_id": "tour-edit-result",
         "data": {"content": [{"tool_use_id": "toolu_edit_1", "content": "The file /home/dev/app/timeline.py has been updated.",
                               "is_error": None}]}},
        {"_type": "AssistantMessage", "timestamp": T0 + 18.0, "session_id": SID, "message_id": "tour-summary",
         "data": {"content": [{"thinking": "", "signature": "EqQBCkYIBxgCKkA"},
                              {"text": "Done. Summary of the change:\n\n| function | before | after |\n|---|---|---|\n"
                                       "| `window` | `[start, stop)` | `[start, stop]` |\n\n```python\nwindow(evs, 0, 9)  # ten events\n```"}],
                  "model": "claude-sonnet-4-5-20250929"}},
        {"_type": "ResultMessage", "timestamp": T0 + 18.2, "session_id": SID,
         "data": {"subtype": "success", "duration_ms": 28200, "is_error": False, "num_turns": 4, "total_cost_usd": 0.0421}},
        {"type": "user", "content": "Also check the other callers, please.", "session_id": SID,
         "timestamp": "2025-10-21T19:01:10Z", "message_id": "tour-prompt-2"},
        {"type": "assistant", "content": "Searching for callers.", "timestamp": T0 + 82.0, "message_id": "tour-grep",
         "metadata": {**md, "model": "claude-sonnet-4-5-20250929", "has_tool_uses": True,
                      "tool_uses": [{"id": "toolu_grep_never", "name": "Grep",
                                     "input": {"pattern": "window\\(", "path": "/home/dev/app"}, "timestamp": T0 + 82.0}]}},
        {"type": "user", "content": "Tool results: 1 results", "timestamp": T0 + 84.0, "message_id": "tour-orphan",
         "metadata": {**md, "has_tool_results": True, "tool_results": [
             {"tool_use_id": "toolu_ghost_9", "is_error": False, "timestamp": T0 + 84.0,
              "content": "a result whose call is nowhere in this file"}]}},
        {"type": "system", "content": "User Interrupted Processing", "timestamp": T0 + 90.0, "message_id": "tour-interrupt",
         "metadata": {"subtype": "interrupt", "session_id": SID}},
        {"type": "user", "content": "Never mind, that's enough for today.", "session_id": SID,
         "timestamp": "2025-10-21 19:01:45", "message_id": "tour-prompt-3"},
    ]
    jsonl(d / "messages.jsonl", recs,
          raw_lines={16: '{"type": "assistant", "content": "this line was cut off by a crash", "timest'})
    state(d / "state.json", session_id=SID, name="tour", state="terminated", is_processing=False,
          model="claude-sonnet-4-5-20250929")


def timestamps() -> None:
    """One message per timestamp shape the viewer reads (and one it cannot)."""
    d = HERE / "legion-mixed-timestamps"
    shapes = [
        ("ISO with Z", "2025-10-21T18:59:02Z"),
        ("ISO with offset", "2025-10-21T20:59:03.5+02:00"),
        ("ISO with microseconds", "2025-10-21T18:59:04.228585+00:00"),
        ("ISO with nanoseconds", "2025-10-21T18:59:05.123456789Z"),
        ("ISO without zone (read as UTC)", "2025-10-21T18:59:06"),
        ("unix seconds (float)", 1761073147.25),
        ("unix seconds (int)", 1761073148),
        ("unix milliseconds", 1761073149000),
        ("unix microseconds", 1761073150000000),
        ("numeric string", "1761073151.5"),
        ("an unreadable value", "yesterday at noon"),
        ("clock went backwards (shown, not reordered)", "2025-10-21T18:58:00Z"),
    ]
    recs = [{"type": "system", "content": "Claude Code Launched", "timestamp": "2025-10-21T18:59:00Z",
             "metadata": {"subtype": "client_launched"}, "session_id": "ts"}]
    for i, (label, ts) in enumerate(shapes):
        role = "user" if i % 2 == 0 else "assistant"
        recs.append({"type": role, "content": f"Timestamp written as {label}: `{ts}`", "timestamp": ts,
                     "session_id": "ts", "message_id": f"ts-{i}", "metadata": {"model": "claude-sonnet-4-5"}
                     if role == "assistant" else {}})
    jsonl(d / "messages.jsonl", recs)
    state(d / "state.json", session_id="ts", name="timestamps", state="terminated", is_processing=False)


def comms() -> None:
    """Two minions talking: outbound send_comm calls and inbound comms, old and new style."""
    d = HERE / "legion-multi-agent-comms"
    sid = "comms-alice"
    recs = [
        {"type": "system", "content": "Claude Code Launched", "timestamp": T0, "session_id": sid,
         "metadata": {"subtype": "client_launched"}, "message_id": "c-launch"},
        {"type": "user", "content": "Play 21 questions with fred. Ask him one question at a time.",
         "timestamp": T0 + 1, "session_id": sid, "message_id": "c-prompt"},
        {"type": "assistant", "content": "Assistant response", "timestamp": T0 + 4, "session_id": sid,
         "message_id": "c-ask-1", "metadata": {"model": "claude-sonnet-4-5-20250929", "has_tool_uses": True, "tool_uses": [
             {"id": "toolu_comm_1", "name": "mcp__legion__send_comm", "timestamp": T0 + 4,
              "input": {"to_minion_name": "fred", "summary": "Q1: Is it an appliance?",
                        "content": "**Question 1:** Is it an electrical appliance?\n\n**My guess:** Toaster",
                        "comm_type": "question"}}]}},
        {"type": "user", "content": "Tool results: 1 results", "timestamp": T0 + 4.2, "session_id": sid,
         "message_id": "c-ask-1-result", "metadata": {"has_tool_results": True, "tool_results": [
             {"tool_use_id": "toolu_comm_1", "content": "Message sent to fred", "is_error": None, "timestamp": T0 + 4.2}]}},
        {"type": "user", "timestamp": T0 + 20, "session_id": sid, "message_id": "c-reply-1",
         "content": "**📊 Report from Minion #fred:** No, not an appliance.\n\nNo — it is not electrical at all.\n\n---\n"
                    "Always send messages to Minion #fred using the `send_comm` tool.",
         "metadata": {"comm": {"from_name": "fred", "from_display_name": "fred", "comm_type": "report"}}},
        {"_type": "AssistantMessage", "timestamp": T0 + 23, "session_id": sid, "message_id": "c-ask-2",
         "data": {"content": [{"id": "toolu_comm_2", "name": "mcp__legion__send_comm",
                               "input": {"to_minion_name": "fred", "summary": "Q2: Is it in the kitchen?",
                                         "content": "Is it usually found in the kitchen?", "comm_type": "question"}}],
                  "model": "claude-sonnet-4-5-20250929", "message_id": "msg_c2"}},
        {"_type": "ToolCallUpdate", "timestamp": T0 + 23.1, "session_id": sid, "message_id": "c-ask-2-running",
         "data": {"tool_use_id": "toolu_comm_2", "name": "mcp__legion__send_comm", "status": "running"}},
        {"_type": "UserMessage", "timestamp": T0 + 23.4, "session_id": sid, "message_id": "c-ask-2-result",
         "data": {"content": [{"tool_use_id": "toolu_comm_2", "content": "Message sent to fred", "is_error": None}]}},
        {"type": "user", "timestamp": T0 + 41, "session_id": sid, "message_id": "c-reply-2",
         "content": "**❓ Question from Minion #fred:** Can I have a hint?\n\nCan I have a hint? I'm stuck."},
        {"_type": "AssistantMessage", "timestamp": T0 + 44, "session_id": sid, "message_id": "c-spawn",
         "data": {"content": [{"text": "I'll ask a helper to think of a good hint while I wait."},
                              {"id": "toolu_task_1", "name": "Task",
                               "input": {"description": "Find a hint", "subagent_type": "general-purpose",
                                         "prompt": "Suggest one hint for 'spoon' that does not give it away."}}],
                  "model": "claude-sonnet-4-5-20250929"}},
        {"_type": "TaskStartedMessage", "timestamp": T0 + 44.2, "session_id": sid, "message_id": "c-task-start",
         "data": {"task_id": "a0f5", "description": "Find a hint", "tool_use_id": "toolu_task_1",
                  "task_type": "local_agent"}},
        {"_type": "AssistantMessage", "timestamp": T0 + 47, "session_id": sid, "message_id": "c-sub-1",
         "data": {"content": [{"text": "Hint: you use it every morning with cereal."}],
                  "model": "claude-haiku-4-5-20251001", "parent_tool_use_id": "toolu_task_1"}},
        {"_type": "UserMessage", "timestamp": T0 + 48, "session_id": sid, "message_id": "c-task-result",
         "data": {"content": [{"tool_use_id": "toolu_task_1", "content": "Hint: you use it every morning with cereal.",
                               "is_error": None}]}},
        {"type": "assistant", "content": "Assistant response", "timestamp": T0 + 50, "session_id": sid,
         "message_id": "c-hint", "metadata": {"model": "claude-sonnet-4-5-20250929", "tool_uses": [
             {"id": "toolu_comm_3", "name": "mcp__legion__send_comm", "timestamp": T0 + 50,
              "input": {"to_minion_name": "fred", "summary": "Hint", "comm_type": "info",
                        "content": "Hint: you use it every morning with cereal."}}]}},
        {"type": "user", "content": "Tool results: 1 results", "timestamp": T0 + 50.3, "session_id": sid,
         "message_id": "c-hint-result", "metadata": {"tool_results": [
             {"tool_use_id": "toolu_comm_3", "content": "Message sent to fred", "is_error": None}]}},
    ]
    jsonl(d / "messages.jsonl", recs)
    state(d / "state.json", session_id=sid, name="alice", state="active", is_processing=False)


def hostile() -> None:
    """Untrusted content: every string here tries to become live markup, a script or a fetch."""
    d = HERE / "legion-hostile-content"
    sid = "hostile"
    tiny_png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
    svg = "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0iYWxlcnQoMSkiLz4="
    recs = [
        {"type": "system", "content": "Claude Code Launched", "timestamp": T0, "session_id": sid,
         "metadata": {"subtype": "client_launched"}},
        {"type": "user", "timestamp": T0 + 1, "session_id": sid, "message_id": "h-prompt",
         "content": "Summarise this page: <script>alert('xss-script')</script> <img src=x onerror=alert('xss-img')> "
                    "[click me](javascript:alert('xss-link')) ![tracker](http://example.com/pixel.png) "
                    "<iframe src=\"http://example.com\"></iframe> <a href=\"#\" onclick=\"alert(1)\">x</a>"},
        {"type": "assistant", "timestamp": T0 + 3, "session_id": sid, "message_id": "h-answer",
         "content": "The page contains:\n\n<script>alert('xss-md')</script>\n\n<img src=x onerror=alert('xss-md-img')>\n\n"
                    "```html\n<script>alert('in a code block is fine')</script>\n```\n\n"
                    "<style>body{display:none}</style> <form action=\"http://example.com\"><input name=q></form>",
         "metadata": {"model": "claude-sonnet-4-5-20250929", "has_tool_uses": True, "tool_uses": [
             {"id": "toolu_h_bash", "name": "Bash", "timestamp": T0 + 3,
              "input": {"command": "curl -s http://example.com/<script>alert(1)</script>",
                        "description": "<b onmouseover=alert(1)>fetch</b>"}},
             {"id": "toolu_h_<img src=x onerror=alert(2)>", "name": "<svg onload=alert(3)>",
              "input": {"\"><script>alert(4)</script>": "value"}}]}},
        {"type": "user", "content": "Tool results: 2 results", "timestamp": T0 + 4, "session_id": sid,
         "message_id": "h-results", "metadata": {"tool_results": [
             {"tool_use_id": "toolu_h_bash", "is_error": False,
              "content": "<html><body onload=alert('xss-out')><script>alert('xss-out-2')</script>"
                         "\u001b]8;;javascript:alert(1)\u001b\\link\u001b]8;;\u001b\\ \u001b[31mred\u001b[0m\u0007\u0000</body></html>"},
             {"tool_use_id": "toolu_h_<img src=x onerror=alert(2)>", "is_error": True,
              "content": [{"type": "text", "text": "</pre><script>alert('xss-pre')</script>"},
                          {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml", "data": svg}},
                          {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": tiny_png}},
                          {"type": "image", "source": {"type": "url", "url": "http://example.com/remote.png"}}]}]}},
        {"type": "assistant", "timestamp": T0 + 6, "session_id": sid, "message_id": "h-big",
         "content": "Here is a very long output (cut, with a *show all*):\n\n" + ("0123456789abcdef" * 8000),
         "metadata": {"model": "claude-sonnet-4-5-20250929"}},
        {"type": "user", "timestamp": T0 + 7, "session_id": sid, "message_id": "h-zero-width",
         "content": "Zero-width and bidi tricks: pay\u200b pal \u202eevil\u202c and a NUL \u0000 byte."},
    ]
    jsonl(d / "messages.jsonl", recs)
    state(d / "state.json", session_id=sid, name="hostile", state="terminated", is_processing=False)


def claude_project() -> None:
    """A Claude Code project folder: one session whose Task call spawned a sub-agent (new layout)."""
    proj = HERE / "claude-project"
    sess = "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b"
    agent = "a7c4e2f91b3d5a6c8"
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/app", "sessionId": sess,
            "version": "2.1.114", "gitBranch": "main"}
    u = lambda n: f"00000000-0000-4000-8000-{n:012d}"  # noqa: E731
    main = [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": sess},
        {**base, "parentUuid": None, "type": "user", "uuid": u(1), "timestamp": "2026-04-18T13:10:51.000Z",
         "message": {"role": "user", "content": "Find out how the window function is used across the repo."}},
        {**base, "parentUuid": u(1), "type": "assistant", "uuid": u(2), "timestamp": "2026-04-18T13:10:54.000Z",
         "requestId": "req_1", "message": {"id": "msg_01", "role": "assistant", "model": "claude-opus-4-7",
                                           "content": [{"type": "thinking", "thinking": "An Explore agent can grep "
                                                        "the repo faster than I can read file by file.",
                                                        "signature": "sig"}]}},
        {**base, "parentUuid": u(2), "type": "assistant", "uuid": u(3), "timestamp": "2026-04-18T13:10:55.000Z",
         "requestId": "req_1", "message": {"id": "msg_01", "role": "assistant", "model": "claude-opus-4-7",
                                           "content": [{"type": "tool_use", "id": "toolu_task_explore", "name": "Task",
                                                        "input": {"description": "Find window() callers",
                                                                  "subagent_type": "Explore",
                                                                  "prompt": "List every caller of window() in /home/dev/app."}}]}},
        {**base, "parentUuid": u(3), "type": "progress", "uuid": u(4), "timestamp": "2026-04-18T13:10:56.000Z",
         "parentToolUseID": "toolu_task_explore", "toolUseID": "agent_msg_1",
         "data": {"type": "agent_progress", "agentId": agent, "prompt": "List every caller of window() in /home/dev/app."}},
        {**base, "parentUuid": u(4), "type": "user", "uuid": u(5), "timestamp": "2026-04-18T13:11:20.000Z",
         "toolUseResult": {"status": "completed", "agentId": agent, "totalDurationMs": 24000, "totalToolUseCount": 2},
         "message": {"role": "user", "content": [{"tool_use_id": "toolu_task_explore", "type": "tool_result", "content": [
             {"type": "text", "text": "Two callers: `render.py:12` and `live.py:40`."},
             {"type": "text", "text": f"agentId: {agent} (use SendMessage with to: '{agent}' to continue this agent)"}]}]}},
        {**base, "parentUuid": u(5), "type": "assistant", "uuid": u(6), "timestamp": "2026-04-18T13:11:25.000Z",
         "requestId": "req_2", "message": {"id": "msg_02", "role": "assistant", "model": "claude-opus-4-7",
                                           "content": [{"type": "text", "text": "`window()` has two callers: "
                                                        "**render.py** and **live.py**. Both pass a half-open range."}]}},
        {"type": "last-prompt", "lastPrompt": "Find out how the window function is used across the repo.",
         "sessionId": sess},
    ]
    side = {"isSidechain": True, "userType": "external", "cwd": "/home/dev/app", "sessionId": sess, "version": "2.1.114",
            "agentId": agent}
    sub = [
        {**side, "parentUuid": None, "type": "user", "uuid": u(101), "timestamp": "2026-04-18T13:10:56.100Z",
         "message": {"role": "user", "content": "List every caller of window() in /home/dev/app."}},
        {**side, "parentUuid": u(101), "type": "assistant", "uuid": u(102), "timestamp": "2026-04-18T13:10:58.000Z",
         "message": {"id": "msg_s1", "role": "assistant", "model": "claude-haiku-4-5-20251001", "content": [
             {"type": "tool_use", "id": "toolu_sub_grep", "name": "Grep",
              "input": {"pattern": "window\\(", "path": "/home/dev/app", "output_mode": "content"}}]}},
        {**side, "parentUuid": u(102), "type": "user", "uuid": u(103), "timestamp": "2026-04-18T13:11:01.000Z",
         "message": {"role": "user", "content": [{"tool_use_id": "toolu_sub_grep", "type": "tool_result",
                                                  "content": "render.py:12:    rows = window(evs, a, b)\n"
                                                             "live.py:40:    new = window(evs, cur, end)"}]}},
        {**side, "parentUuid": u(103), "type": "assistant", "uuid": u(104), "timestamp": "2026-04-18T13:11:19.000Z",
         "message": {"id": "msg_s2", "role": "assistant", "model": "claude-haiku-4-5-20251001", "content": [
             {"type": "text", "text": "Two callers: `render.py:12` and `live.py:40`."}]}},
    ]
    jsonl(proj / f"{sess}.jsonl", main)
    jsonl(proj / sess / "subagents" / f"agent-{agent}.jsonl", sub)
    (proj / sess / "subagents" / f"agent-{agent}.meta.json").write_text(
        json.dumps({"agentType": "Explore", "description": "Find window() callers",
                    "toolUseId": "toolu_task_explore"}) + "\n", encoding="utf-8")


def main() -> None:
    if HERE.exists():
        shutil.rmtree(HERE)
    feature_tour()
    timestamps()
    comms()
    hostile()
    claude_project()
    print(f"wrote {sum(1 for _ in HERE.rglob('*') if _.is_file())} files under {HERE}")


if __name__ == "__main__":
    main()
