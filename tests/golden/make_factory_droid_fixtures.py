"""Writes test_data/formats/factory-droid: Factory Droid sessions in the shapes Droid writes to
`~/.factory/sessions/<project>/<id>.jsonl` and `<id>.settings.json` (see the fixtures' README).
Run from the repository root."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

OUT = Path("test_data/formats/factory-droid/sessions")
PROJECT = OUT / "-home-dev-shop"
SID = "5b1f0c2e-7d43-4a9e-b0c1-2f6e8d9a4c37"
SUB = "9e8d7c6b-1a2b-4c3d-8e9f-0a1b2c3d4e5f"


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def ts(n: int) -> str:
    return f"2026-09-29T20:{14 + n // 60:02d}:{n % 60:02d}.000Z"


def main_session() -> list[dict]:
    m = lambda i, parent, role, content, **x: {  # noqa: E731
        "type": "message", "id": f"m{i}", **({"parentId": parent} if parent else {}), "timestamp": ts(i * 3),
        "message": {"role": role, "content": content, **x}}
    return [
        {"type": "session_start", "id": SID, "title": "Fix the login redirect", "sessionTitle": "Fix the login redirect",
         "owner": "dev", "version": 2, "cwd": "/home/dev/shop"},
        m(1, None, "user", [{"type": "text", "text": "<system-reminder>The user's OS is Linux.</system-reminder>"},
                            {"type": "text", "text": "After login the user lands on /home instead of the page they came from. Fix it."}]),
        m(2, "m1", "assistant", [
            {"type": "thinking", "thinking": "The redirect target is probably dropped in the login handler.",
             "signature": "sig-1"},
            {"type": "text", "text": "Let me look at the login handler and run the tests."},
            {"type": "tool_use", "id": "toolu_read_1", "name": "Read", "input": {"file_path": "/home/dev/shop/auth.py"}},
            {"type": "tool_use", "id": "toolu_exec_2", "name": "Execute",
             "input": {"command": "pytest -q tests/test_auth.py", "riskLevel": {"value": "low", "reason": "runs tests"}}}],
          model="claude-sonnet-4-5-20250929"),
        m(3, "m2", "user", [
            {"type": "tool_result", "tool_use_id": "toolu_read_1",
             "content": "def login(request):\n    return redirect('/home')\n"},
            {"type": "tool_result", "tool_use_id": "toolu_exec_2", "is_error": True,
             "content": "F\nFAILED tests/test_auth.py::test_next - assert '/home' == '/cart'\n1 failed"}]),
        {"type": "todo_state", "id": "t1", "timestamp": ts(10), "messageIndex": 3,
         "todos": [{"content": "Keep the `next` parameter through login", "status": "in_progress"},
                   {"content": "Run the auth tests", "status": "pending"}]},
        m(4, "m3", "assistant", [
            {"type": "tool_use", "id": "toolu_edit_3", "name": "Edit",
             "input": {"file_path": "/home/dev/shop/auth.py", "old_str": "return redirect('/home')",
                       "new_str": "return redirect(request.args.get('next', '/home'))"}},
            {"type": "tool_use", "id": "toolu_task_4", "name": "Task",
             "input": {"subagent_type": "code-reviewer", "description": "Review the redirect fix",
                       "prompt": "Check the change for open redirects."}}],
          model="claude-sonnet-4-5-20250929"),
        m(5, "m4", "user", [
            {"type": "tool_result", "tool_use_id": "toolu_edit_3", "content": "File edited successfully."},
            {"type": "tool_result", "tool_use_id": "toolu_task_4",
             "content": [{"type": "text", "text": "Open redirect: `next` must be a relative path."}]}]),
        {"type": "compaction_state", "id": "c1", "timestamp": ts(20),
         "summaryText": "The user asked to keep the redirect target through login; auth.py now honours `next`."},
        {"type": "todo_state", "id": "t2", "timestamp": ts(21), "todos": {"todos": "1. [completed] Keep next\n2. [completed] Run tests"}},
        m(7, "m5", "assistant", "Done: login now returns to the page the user came from (relative paths only).",
          model="claude-sonnet-4-5-20250929"),
        {"type": "session_end_marker", "id": "x1", "timestamp": ts(25), "reason": "a record type no version writes"},
    ]


def sub_session() -> list[dict]:
    task = ("# Task Tool Invocation\n\nSubagent type: code-reviewer\n\nTask: Review the redirect fix\n\n"
            "Check the change for open redirects.")
    return [
        {"type": "session_start", "id": SUB, "title": task, "owner": "dev", "version": 2, "cwd": "/home/dev/shop"},
        {"type": "message", "id": "s1", "timestamp": ts(13), "message": {"role": "user", "content": [
            {"type": "text", "text": task}]}},
        {"type": "message", "id": "s2", "parentId": "s1", "timestamp": ts(15), "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Open redirect: `next` must be a relative path."}]}},
    ]


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    PROJECT.mkdir(parents=True)
    write(PROJECT / f"{SID}.jsonl", main_session())
    (PROJECT / f"{SID}.settings.json").write_text(json.dumps({
        "assistantActiveTimeMs": 61234, "model": "claude-sonnet-4-5-20250929", "reasoningEffort": "medium",
        "autonomyMode": "auto-low", "providerLock": "anthropic", "providerLockTimestamp": ts(0),
        "tokenUsage": {"inputTokens": 18200, "outputTokens": 2310, "cacheCreationTokens": 4100,
                       "cacheReadTokens": 52000, "thinkingTokens": 120}}, indent=2) + "\n")
    write(PROJECT / f"{SUB}.jsonl", sub_session())
    (PROJECT / f"{SUB}.settings.json").write_text(json.dumps({"model": "claude-sonnet-4-5-20250929"}) + "\n")


if __name__ == "__main__":
    main()
