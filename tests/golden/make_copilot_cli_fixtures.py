"""Writes test_data/formats/copilot-cli: GitHub Copilot CLI sessions in the shapes the CLI writes
(github/copilot-sdk `nodejs/src/generated/session-events.ts`, generated from the CLI's
`session-events.schema.json`; see the fixtures' README). Run from the repository root."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

OUT = Path("test_data/formats/copilot-cli/session-state")
SID = "7f3c2a10-5b8e-4c1d-9a2f-0e6d4b8c1a55"
OLD = "1a2b3c4d-0000-4e5f-8a9b-0c1d2e3f4a5b"
NEW = "c0ffee00-1d2e-4f30-8a41-52b6c7d8e9f0"


def lines(sid: str, events: list[tuple[str, dict, dict]]) -> str:
    out, parent = [], None
    for n, (t, data, extra) in enumerate(events):
        eid = f"{sid[:8]}-e{n:03d}"
        rec = {"type": t, "data": data, "id": eid, "timestamp": f"2026-03-02T10:{n // 60:02d}:{n % 60:02d}.000Z",
               "parentId": parent, **extra}
        out.append(json.dumps(rec, ensure_ascii=False))
        parent = eid
    return "\n".join(out) + "\n"


def folder_session() -> str:
    e = []
    add = lambda t, d, **x: e.append((t, d, x))  # noqa: E731
    add("session.start", {"sessionId": SID, "version": 1, "producer": "copilot-agent", "copilotVersion": "0.0.420",
                          "startTime": "2026-03-02T10:00:00.000Z", "selectedModel": "claude-sonnet-4.5",
                          "context": {"cwd": "/home/dev/shop", "gitRoot": "/home/dev/shop", "branch": "main",
                                      "repository": "dev/shop"}})
    add("session.info", {"infoType": "folder_trust", "message": "Folder /home/dev/shop has been added to trusted folders."})
    add("system.message", {"role": "system", "content": "You are the GitHub Copilot CLI, a terminal assistant."})
    add("user.message", {"content": "Why does the cart total ignore the discount? Fix it and run the tests.",
                         "transformedContent": "<current_datetime>2026-03-02T10:00:03Z</current_datetime>\n"
                                               "Why does the cart total ignore the discount? Fix it and run the tests.",
                         "attachments": [{"type": "file", "path": "/home/dev/shop/cart.py", "displayName": "cart.py"}],
                         "agentMode": "interactive"})
    add("assistant.turn_start", {"turnId": "0", "model": "claude-sonnet-4.5"})
    add("assistant.reasoning", {"reasoningId": "r-1", "content": "The total is computed before the discount is applied."})
    add("assistant.message", {"messageId": "m-1", "apiCallId": "call-api-1", "model": "claude-sonnet-4.5",
                              "content": "Let me look at how the total is computed.",
                              "toolRequests": [{"toolCallId": "toolu_view_1", "name": "view", "type": "function",
                                                "arguments": {"path": "/home/dev/shop/cart.py"},
                                                "intentionSummary": "view the file at /home/dev/shop/cart.py."}],
                              "outputTokens": 120, "turnId": "0"})
    add("tool.execution_start", {"toolCallId": "toolu_view_1", "toolName": "view",
                                 "arguments": {"path": "/home/dev/shop/cart.py"}, "turnId": "0"})
    add("tool.execution_complete", {"toolCallId": "toolu_view_1", "success": True, "model": "claude-sonnet-4.5",
                                    "result": {"content": "1. def total(items, discount):\n2.     return sum(i.price for i in items)\n",
                                               "detailedContent": "1. def total(items, discount):\n2.     return sum(i.price for i in items)\n"},
                                    "toolTelemetry": {"properties": {"command": "view"}}, "turnId": "0"})
    add("assistant.message", {"messageId": "m-2", "apiCallId": "call-api-2", "model": "claude-sonnet-4.5", "content": "",
                              "reasoningText": "I will subtract the discount, then run the tests.",
                              "toolRequests": [
                                  {"toolCallId": "toolu_edit_2", "name": "str_replace_editor", "type": "function",
                                   "arguments": json.dumps({"command": "str_replace", "path": "/home/dev/shop/cart.py",
                                                            "old_str": "return sum(i.price for i in items)",
                                                            "new_str": "return sum(i.price for i in items) - discount"})},
                                  {"toolCallId": "toolu_bash_3", "name": "bash", "type": "function",
                                   "arguments": {"command": "pytest -q tests/test_cart.py", "description": "Run the cart tests"}}],
                              "outputTokens": 210, "turnId": "1"})
    add("tool.execution_start", {"toolCallId": "toolu_edit_2", "toolName": "str_replace_editor", "turnId": "1"})
    add("tool.execution_complete", {"toolCallId": "toolu_edit_2", "success": True,
                                    "result": {"content": "File /home/dev/shop/cart.py updated with changes.",
                                               "detailedContent": "diff --git a/cart.py b/cart.py\n-    return sum(i.price for i in items)\n+    return sum(i.price for i in items) - discount\n"},
                                    "turnId": "1"})
    add("permission.requested", {"requestId": "perm-1", "permissionRequest": {
        "kind": "shell", "toolCallId": "toolu_bash_3", "fullCommandText": "pytest -q tests/test_cart.py",
        "intention": "Run the cart tests", "commands": [{"identifier": "pytest", "readOnly": False}],
        "possiblePaths": [], "possibleUrls": [], "hasWriteFileRedirection": False, "canOfferSessionApproval": True}})
    add("permission.completed", {"requestId": "perm-1", "toolCallId": "toolu_bash_3", "result": {"kind": "approved"}})
    add("tool.execution_start", {"toolCallId": "toolu_bash_3", "toolName": "bash",
                                 "arguments": {"command": "pytest -q tests/test_cart.py"}, "turnId": "1"})
    add("tool.execution_complete", {"toolCallId": "toolu_bash_3", "success": False,
                                    "result": {"content": "F.\nFAILED tests/test_cart.py::test_total - assert 90 == 95\n1 failed, 1 passed\n<exited with exit code 1>",
                                               "contents": [{"type": "shell_exit", "exitCode": 1, "shellId": "s1"}]},
                                    "turnId": "1"})
    add("assistant.message", {"messageId": "m-3", "apiCallId": "call-api-3", "model": "claude-sonnet-4.5",
                              "content": "One test still fails: it expects a percentage discount. I'll ask a sub-agent to check the other callers.",
                              "toolRequests": [{"toolCallId": "toolu_task_4", "name": "task", "type": "function",
                                                "arguments": {"description": "Find callers of total()", "agent_type": "explore",
                                                              "prompt": "List every caller of cart.total and how it passes discount."}}],
                              "outputTokens": 95, "turnId": "2"})
    add("tool.execution_start", {"toolCallId": "toolu_task_4", "toolName": "task", "turnId": "2"})
    add("subagent.started", {"toolCallId": "toolu_task_4", "agentName": "explore", "agentDisplayName": "Explore",
                             "agentDescription": "Find callers of total()"})
    add("assistant.message", {"messageId": "m-4", "content": "", "parentToolCallId": "toolu_task_4",
                              "toolRequests": [{"toolCallId": "toolu_grep_5", "name": "grep", "type": "function",
                                                "arguments": {"pattern": "total\\(", "path": "/home/dev/shop"}}]})
    add("tool.execution_complete", {"toolCallId": "toolu_grep_5", "success": True, "parentToolCallId": "toolu_task_4",
                                    "result": {"content": "checkout.py:12: total(items, 0.05)"}})
    add("subagent.completed", {"toolCallId": "toolu_task_4", "agentName": "explore", "agentDisplayName": "Explore",
                               "durationMs": 4200, "totalToolCalls": 1, "totalTokens": 1830})
    add("tool.execution_complete", {"toolCallId": "toolu_task_4", "success": True,
                                    "result": {"content": "One caller: checkout.py:12 passes 0.05, a fraction."}})
    add("assistant.message", {"messageId": "m-5", "content": "Removing the old fixture file.",
                              "toolRequests": [{"toolCallId": "toolu_rm_6", "name": "bash", "type": "function",
                                                "arguments": {"command": "rm -rf tests/fixtures"}}],
                              "outputTokens": 40})
    add("permission.requested", {"requestId": "perm-2", "permissionRequest": {
        "kind": "shell", "toolCallId": "toolu_rm_6", "fullCommandText": "rm -rf tests/fixtures",
        "intention": "Remove the fixtures", "commands": [{"identifier": "rm", "readOnly": False}],
        "possiblePaths": ["tests/fixtures"], "possibleUrls": [], "hasWriteFileRedirection": False,
        "canOfferSessionApproval": True}})
    add("permission.completed", {"requestId": "perm-2", "toolCallId": "toolu_rm_6",
                                 "result": {"kind": "denied-interactively-by-user", "feedback": "keep the fixtures"}})
    add("tool.execution_complete", {"toolCallId": "toolu_rm_6", "success": False,
                                    "error": {"message": "The user denied permission to run this command.", "code": "denied"}})
    add("assistant.message", {"messageId": "m-6", "content": "Running the whole suite now.",
                              "toolRequests": [{"toolCallId": "toolu_bash_7", "name": "bash", "type": "function",
                                                "arguments": {"command": "pytest -q"}}], "outputTokens": 30})
    add("tool.execution_start", {"toolCallId": "toolu_bash_7", "toolName": "bash", "arguments": {"command": "pytest -q"}})
    add("abort", {"reason": "user initiated"})
    add("session.model_change", {"previousModel": "claude-sonnet-4.5", "newModel": "gpt-5.1", "source": "model_command"})
    add("session.future_event", {"whatever": 1})
    add("session.shutdown", {"shutdownType": "routine", "sessionStartTime": 1772445600000, "totalApiDurationMs": 8123,
                             "totalPremiumRequests": 4,
                             "codeChanges": {"linesAdded": 1, "linesRemoved": 1, "filesModified": ["/home/dev/shop/cart.py"]},
                             "modelMetrics": {"claude-sonnet-4.5": {"requests": {"count": 5, "cost": 5},
                                                                    "usage": {"inputTokens": 48210, "outputTokens": 495,
                                                                              "cacheReadTokens": 30100, "cacheWriteTokens": 0}}}})
    return lines(SID, e)


def agents_session() -> str:
    """A newer CLI's (1.0.x) session with two `task` sub-agents run in parallel. Their events say
    whose they are only by the envelope's `agentId` (`data.parentToolCallId` is deprecated), which
    the CLI sets to the id of the `task` call that spawned the sub-agent, on `subagent.started`
    too (measured on CLI 1.0.69: weijen/agent-delivery-harness
    `docs/runtime-adapters/github-copilot.subagent-spike.md`, "events.jsonl inspection")."""
    e = []
    add = lambda t, d, **x: e.append((t, d, x))  # noqa: E731
    a, b = "toolu_01TaskCallers", "toolu_01TaskTests"
    add("session.start", {"sessionId": NEW, "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.69",
                          "startTime": "2026-03-02T10:00:00.000Z", "selectedModel": "claude-sonnet-4.5",
                          "context": {"cwd": "/home/dev/shop", "branch": "main"}})
    add("user.message", {"content": "Find who calls cart.total and run its tests, in parallel.", "attachments": []})
    add("assistant.message", {"messageId": "n-1", "model": "claude-sonnet-4.5", "content": "Starting two helpers.",
                              "toolRequests": [
                                  {"toolCallId": a, "name": "task", "type": "function",
                                   "arguments": {"description": "Find callers", "agent_type": "explore",
                                                 "prompt": "List every caller of cart.total."}},
                                  {"toolCallId": b, "name": "task", "type": "function",
                                   "arguments": {"description": "Run cart tests", "agent_type": "task",
                                                 "prompt": "Run tests/test_cart.py."}}],
                              "outputTokens": 60})
    add("tool.execution_start", {"toolCallId": a, "toolName": "task"})
    add("tool.execution_start", {"toolCallId": b, "toolName": "task"})
    add("subagent.started", {"toolCallId": a, "agentName": "explore", "agentDisplayName": "Explore",
                             "agentDescription": "Find callers"}, agentId=a)
    add("subagent.started", {"toolCallId": b, "agentName": "task", "agentDisplayName": "Task",
                             "agentDescription": "Run cart tests"}, agentId=b)
    add("assistant.message", {"messageId": "n-2", "content": "",
                              "toolRequests": [{"toolCallId": "toolu_01Grep", "name": "grep", "type": "function",
                                                "arguments": {"pattern": "total\\(", "path": "/home/dev/shop"}}]},
        agentId=a)
    add("assistant.message", {"messageId": "n-3", "content": "",
                              "toolRequests": [{"toolCallId": "toolu_01Pytest", "name": "bash", "type": "function",
                                                "arguments": {"command": "pytest -q tests/test_cart.py"}}]},
        agentId=b)
    add("tool.execution_complete", {"toolCallId": "toolu_01Grep", "success": True,
                                    "result": {"content": "checkout.py:12: total(items, 0.05)"}}, agentId=a)
    add("tool.execution_complete", {"toolCallId": "toolu_01Pytest", "success": True,
                                    "result": {"content": "4 passed in 0.31s\n<exited with exit code 0>"}}, agentId=b)
    add("subagent.completed", {"toolCallId": a, "agentName": "explore", "agentDisplayName": "Explore",
                               "durationMs": 3100, "totalToolCalls": 1}, agentId=a)
    add("subagent.completed", {"toolCallId": b, "agentName": "task", "agentDisplayName": "Task",
                               "durationMs": 3900, "totalToolCalls": 1}, agentId=b)
    add("tool.execution_complete", {"toolCallId": a, "success": True,
                                    "result": {"content": "One caller: checkout.py:12."}})
    add("tool.execution_complete", {"toolCallId": b, "success": True, "result": {"content": "All 4 cart tests pass."}})
    add("assistant.message", {"messageId": "n-4", "model": "claude-sonnet-4.5",
                              "content": "checkout.py:12 is the one caller, and the cart tests pass."})
    return lines(NEW, e)


def legacy_session() -> str:
    e = []
    add = lambda t, d, **x: e.append((t, d, x))  # noqa: E731
    add("session.start", {"sessionId": OLD, "version": 1, "producer": "copilot-agent", "copilotVersion": "0.0.330",
                          "startTime": "2025-10-14T08:00:00.000Z"})
    add("session.model_change", {"newModel": "claude-sonnet-4.5"})
    add("user.message", {"content": "List the files here", "attachments": []})
    add("assistant.message", {"messageId": "m-1", "content": "",
                              "toolRequests": [{"toolCallId": "tooluse_ls", "name": "bash",
                                                "arguments": {"command": "ls", "description": "List files"}}]})
    add("tool.execution_start", {"toolCallId": "tooluse_ls", "toolName": "bash", "arguments": {"command": "ls"}})
    add("tool.execution_complete", {"toolCallId": "tooluse_ls", "success": True,
                                    "result": {"content": "README.md\nsrc\n<exited with exit code 0>"}})
    add("assistant.message", {"messageId": "m-2", "content": "There is a README.md and a src folder."})
    return lines(OLD, e)


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    folder = OUT / SID
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "events.jsonl").write_text(folder_session())
    (folder / "workspace.yaml").write_text(
        f"id: {SID}\ncwd: /home/dev/shop\ngit_root: /home/dev/shop\nrepository: dev/shop\nbranch: main\n"
        "summary: Fix cart discount\nsummary_count: 1\ncreated_at: 2026-03-02T10:00:00.000Z\n"
        "updated_at: 2026-03-02T10:00:40.000Z\n")
    (folder / "plan.md").write_text("# Plan\n\n- [x] find the bug\n- [ ] fix the percentage case\n")
    (folder / "checkpoints" / "index.md").write_text("# Checkpoint History\n| # | Title | File |\n|---|---|---|\n")
    # a file the agent kept inside its session folder: part of the session, never listed alone
    (folder / "files").mkdir()
    (folder / "files" / "notes.jsonl").write_text('{"note": "scratch"}\n')
    (OUT / f"{OLD}.jsonl").write_text(legacy_session())
    (OUT / NEW).mkdir()
    (OUT / NEW / "events.jsonl").write_text(agents_session())


if __name__ == "__main__":
    main()
