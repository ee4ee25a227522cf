"""Writes the hand-made OpenHands fixtures in test_data/formats/openhands/ (run from the repo root:
`python tests/golden/make_openhands_fixtures.py`). Each event is shaped as OpenHands' own
`event_to_trajectory` writes it (openhands/events/serialization/event.py; actions' `args` from
openhands/events/action/*.py, observations' `extras` from openhands/events/observation/*.py, the
`tool_call_metadata` a function-calling agent attaches: function name, tool call id and the whole
model response); the export wraps the list as `{"trajectory": [...]}` as
openhands/server/routes/trajectory.py answers it. See README.md."""

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "test_data" / "formats" / "openhands"
MODEL = "claude-sonnet-4-20250514"


class Stream:
    def __init__(self):
        self.events, self.next_id, self.second = [], 0, 0

    def add(self, source: str, **fields) -> dict:
        self.second += 1
        ev = {"id": self.next_id, "timestamp": f"2025-06-02T10:{self.second // 60:02d}:{self.second % 60:02d}.123456",
              "source": source, **fields}
        self.events.append(ev)
        self.next_id += 1
        return ev


def response(rid: str, calls: list, content: str | None = None, prompt: int = 5000, completion: int = 120) -> dict:
    return {"id": rid, "created": 1748858400, "model": MODEL, "object": "chat.completion",
            "choices": [{"finish_reason": "tool_calls", "index": 0,
                         "message": {"content": content, "role": "assistant",
                                     "tool_calls": [{"index": i, "function": {"arguments": json.dumps(args), "name": name},
                                                     "id": cid, "type": "function"} for i, (cid, name, args) in enumerate(calls)],
                                     "function_call": None}}],
            "usage": {"completion_tokens": completion, "prompt_tokens": prompt, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": prompt - 400}}}


def meta(name: str, cid: str, resp: dict) -> dict:
    return {"function_name": name, "tool_call_id": cid, "model_response": resp,
            "total_calls_in_response": len(resp["choices"][0]["message"]["tool_calls"])}


def metrics(costs: list[float]) -> dict:
    return {"accumulated_cost": sum(costs), "accumulated_token_usage": {"model": MODEL, "prompt_tokens": 0},
            "costs": [{"model": MODEL, "cost": c, "timestamp": 1748858400.0 + i} for i, c in enumerate(costs)],
            "response_latencies": [], "token_usages": []}


def run_obs(s: Stream, cause: int, cid: str, resp: dict, command: str, out: str, code: int) -> None:
    s.add("agent", message=f"Command `{command}` executed with exit code {code}.", cause=cause, observation="run",
          tool_call_metadata=meta("execute_bash", cid, resp), content=out,
          extras={"command": command, "metadata": {"exit_code": code, "pid": -1, "username": "openhands",
                                                   "hostname": "sandbox", "working_dir": "/workspace",
                                                   "py_interpreter_path": "/usr/bin/python", "prefix": "", "suffix":
                                                   "\n[The command completed with exit code %d.]" % code},
                  "hidden": False}, success=code == 0)


def session() -> list:
    s = Stream()
    s.add("agent", message="You are OpenHands agent, a helpful AI assistant…", action="system",
          args={"content": "You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.\n<ROLE>…</ROLE>",
                "tools": [{"type": "function", "function": {"name": n}} for n in
                          ("execute_bash", "think", "finish", "browser", "str_replace_editor")],
                "openhands_version": "0.40.0", "agent_class": "CodeActAgent"})
    s.add("user", message="Fix the failing test in calc.py", action="message",
          args={"content": "Fix the failing test in calc.py\nThe divide test fails on zero.", "image_urls": None,
                "file_urls": None, "wait_for_response": False})
    recall = s.add("user", message="Retrieving content for: Fix the failing test", action="recall",
                   args={"recall_type": "workspace_context", "query": "Fix the failing test in calc.py", "thought": ""})
    s.add("environment", message="Added workspace context", cause=recall["id"], observation="recall",
          content="Added workspace context",
          extras={"recall_type": "workspace_context", "repo_name": "", "repo_directory": "",
                  "repo_instructions": "Run tests with pytest -q.", "runtime_hosts": {"http://localhost:50123": 50123},
                  "additional_agent_instructions": "", "date": "2025-06-02", "microagent_knowledge": [
                      {"name": "python", "trigger": "pytest", "content": "Use pytest's -x to stop early."}]})
    s.add("environment", message="", observation="agent_state_changed", content="",
          extras={"agent_state": "running", "reason": ""})
    # one response, two calls: a read (str_replace_editor view) and a command
    r1 = response("chatcmpl-1", [("toolu_01", "str_replace_editor", {"command": "view", "path": "/workspace/calc.py"}),
                                 ("toolu_02", "execute_bash", {"command": "python -m pytest -q"})],
                  "Let me look at the code and run the tests.")
    a1 = s.add("agent", message="Reading file: /workspace/calc.py", action="read",
               tool_call_metadata=meta("str_replace_editor", "toolu_01", r1), llm_metrics=metrics([0.0123]),
               args={"path": "/workspace/calc.py", "start": 0, "end": -1,
                     "thought": "Let me look at the code and run the tests.", "security_risk": None,
                     "impl_source": "oh_aci", "view_range": None})
    a2 = s.add("agent", message="Running command: python -m pytest -q", action="run",
               tool_call_metadata=meta("execute_bash", "toolu_02", r1), llm_metrics=metrics([0.0123]),
               args={"command": "python -m pytest -q", "is_input": False, "thought": "", "blocking": False,
                     "is_static": False, "cwd": None, "hidden": False, "confirmation_state": "confirmed"})
    s.add("agent", message="I read the file /workspace/calc.py.", cause=a1["id"], observation="read",
          tool_call_metadata=meta("str_replace_editor", "toolu_01", r1),
          content="Here's the result of running `cat -n` on /workspace/calc.py:\n     1\tdef divide(a, b):\n     2\t    return a / b\n",
          extras={"path": "/workspace/calc.py", "impl_source": "oh_aci"})
    run_obs(s, a2["id"], "toolu_02", r1, "python -m pytest -q",
            "F.\nFAILED test_calc.py::test_divide_by_zero - ZeroDivisionError\n1 failed, 1 passed in 0.02s", 1)
    r2 = response("chatcmpl-2", [("toolu_03", "think", {"thought": "Return None when b is zero."})], prompt=5600)
    a3 = s.add("agent", message="Return None when b is zero.", action="think",
               tool_call_metadata=meta("think", "toolu_03", r2), llm_metrics=metrics([0.0123, 0.0101]),
               args={"thought": "Return None when b is zero."})
    s.add("agent", message="Your thought has been logged.", cause=a3["id"], observation="think",
          tool_call_metadata=meta("think", "toolu_03", r2), content="Your thought has been logged.", extras={})
    edit = {"command": "str_replace", "path": "/workspace/calc.py", "old_str": "    return a / b",
            "new_str": "    return a / b if b else None"}
    r3 = response("chatcmpl-3", [("toolu_04", "str_replace_editor", edit)], prompt=5900)
    a4 = s.add("agent", message="", action="edit", tool_call_metadata=meta("str_replace_editor", "toolu_04", r3),
               llm_metrics=metrics([0.0123, 0.0101, 0.0098]),
               args={"path": "/workspace/calc.py", "command": "str_replace", "file_text": None,
                     "old_str": edit["old_str"], "new_str": edit["new_str"], "insert_line": None, "content": "",
                     "start": 1, "end": -1, "thought": "", "security_risk": None, "impl_source": "oh_aci"})
    s.add("agent", message="I edited the file /workspace/calc.py.", cause=a4["id"], observation="edit",
          tool_call_metadata=meta("str_replace_editor", "toolu_04", r3),
          content="--- /workspace/calc.py\n+++ /workspace/calc.py\n@@ -1,2 +1,2 @@\n def divide(a, b):\n-    return a / b\n+    return a / b if b else None\n",
          extras={"path": "/workspace/calc.py", "prev_exist": True, "old_content": "def divide(a, b):\n    return a / b\n",
                  "new_content": "def divide(a, b):\n    return a / b if b else None\n", "impl_source": "oh_aci",
                  "diff": "--- /workspace/calc.py\n+++ /workspace/calc.py\n@@ -1,2 +1,2 @@\n def divide(a, b):\n-    return a / b\n+    return a / b if b else None\n"})
    r4 = response("chatcmpl-4", [("toolu_05", "execute_bash", {"command": "rm -rf /workspace/.git"})], prompt=6100)
    a5 = s.add("agent", message="Running command: rm -rf /workspace/.git", action="run",
               tool_call_metadata=meta("execute_bash", "toolu_05", r4),
               args={"command": "rm -rf /workspace/.git", "is_input": False, "thought": "Clean up the repository.",
                     "blocking": False, "confirmation_state": "awaiting_confirmation", "security_risk": 2})
    s.add("environment", message="", observation="agent_state_changed", content="",
          extras={"agent_state": "awaiting_user_confirmation", "reason": ""})
    s.add("user", message="Action has been rejected by the user! Waiting for further user input.",
          cause=a5["id"], observation="user_rejected", tool_call_metadata=meta("execute_bash", "toolu_05", r4),
          content="Action has been rejected by the user! Waiting for further user input.", extras={})
    # a delegate: the browsing agent's events come between the action and its observation
    r5 = response("chatcmpl-5", [("toolu_06", "delegate_to_browsing_agent", {"task": "Find pytest's -x flag docs"})],
                  prompt=6300)
    a6 = s.add("agent", message="I'm asking BrowsingAgent for help with this task.", action="delegate",
               tool_call_metadata=meta("delegate_to_browsing_agent", "toolu_06", r5),
               args={"agent": "BrowsingAgent", "inputs": {"task": "Find pytest's -x flag docs"}, "thought": ""})
    b1 = s.add("agent", message="Browsing https://docs.pytest.org", action="browse",
               args={"url": "https://docs.pytest.org/en/stable/how-to/failures.html", "thought": "Open the docs."})
    s.add("agent", message="Visited https://docs.pytest.org", cause=b1["id"], observation="browse",
          content="Stopping after the first failure: pytest -x", extras={"url": "https://docs.pytest.org/en/stable/how-to/failures.html",
                                                                       "trigger_by_action": "browse", "error": False})
    s.add("agent", message="BrowsingAgent finishes task with content: -x stops at the first failure", cause=a6["id"],
          observation="delegate", tool_call_metadata=meta("delegate_to_browsing_agent", "toolu_06", r5),
          content="BrowsingAgent finishes task with content: -x stops at the first failure",
          extras={"outputs": {"content": "-x stops at the first failure"}})
    r6 = response("chatcmpl-6", [("toolu_07", "execute_bash", {"command": "python -m pytest -q -x"})], prompt=6500)
    a7 = s.add("agent", message="Running command: python -m pytest -q -x", action="run",
               tool_call_metadata=meta("execute_bash", "toolu_07", r6),
               args={"command": "python -m pytest -q -x", "is_input": False, "thought": "", "blocking": False})
    run_obs(s, a7["id"], "toolu_07", r6, "python -m pytest -q -x", "..\n2 passed in 0.01s", 0)
    s.add("agent", message="Summary: events 5 to 12 were condensed", action="condensation",
          args={"forgotten_event_ids": None, "forgotten_events_start_id": 5, "forgotten_events_end_id": 12,
                "summary": "The agent read calc.py, saw the zero-division failure and fixed divide().",
                "summary_offset": 1})
    r7 = response("chatcmpl-7", [("toolu_08", "execute_bash", {"command": "cat missing.txt"})], prompt=2100)
    a8 = s.add("agent", message="Running command: cat missing.txt", action="run",
               tool_call_metadata=meta("execute_bash", "toolu_08", r7),
               args={"command": "cat missing.txt", "thought": ""})
    s.add("agent", message="", cause=a8["id"], observation="error",
          tool_call_metadata=meta("execute_bash", "toolu_08", r7),
          content="Runtime error: the sandbox did not answer in time", extras={"error_id": "AGENT_ERROR$TIMEOUT"})
    r8 = response("chatcmpl-8", [("toolu_09", "finish", {"message": "Fixed divide() and the tests pass."})], prompt=2300)
    s.add("agent", message="Fixed divide() and the tests pass.", action="finish",
          tool_call_metadata=meta("finish", "toolu_09", r8),
          args={"final_thought": "Fixed divide() and the tests pass.", "task_completed": "true", "outputs": {},
                "thought": ""})
    s.add("environment", message="", observation="agent_state_changed", content="",
          extras={"agent_state": "finished", "reason": ""})
    return s.events


def hostile() -> list:
    x = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    return [
        {"id": 0, "timestamp": "2025-06-02T10:00:00", "source": "user", "message": x, "action": "message",
         "args": {"content": x, "image_urls": [f"javascript:alert(3)"]}},
        {"id": 1, "timestamp": "2025-06-02T10:00:01", "source": "agent", "message": x, "action": "run",
         "args": {"command": x, "thought": x}},
        {"id": 2, "timestamp": "2025-06-02T10:00:02", "source": "agent", "message": x, "cause": 1,
         "observation": "run", "content": x, "extras": {"command": x, "metadata": {"exit_code": 3}}},
        {"id": 3, "timestamp": "2025-06-02T10:00:03", "source": "environment", "message": x,
         "observation": "agent_state_changed", "content": x, "extras": {"agent_state": x, "reason": x}},
    ]


def store(folder: Path, events: list, metadata: dict | None) -> None:
    """A conversation as OpenHands' session store keeps it (openhands/storage/locations.py:
    `sessions/<sid>/events/<id>.json` written once per event by the event stream,
    `event_cache/<start>-<end>.json` pages of 25, `metadata.json` by FileConversationStore —
    the CLI writes none)."""
    (folder / "events").mkdir(parents=True, exist_ok=True)
    for ev in events:
        (folder / "events" / f"{ev['id']}.json").write_text(json.dumps(ev))
    if len(events) >= 25:
        (folder / "event_cache").mkdir(exist_ok=True)
        (folder / "event_cache" / "0-25.json").write_text(json.dumps(events[:25]))
    if metadata is not None:
        (folder / "metadata.json").write_text(json.dumps(metadata))


if __name__ == "__main__":
    events = session()
    store(OUT / "store-calc" / "sessions" / "3f2a9c1e7b5d4e08a6c2f1b0d9e8c7a6", events, {
        "conversation_id": "3f2a9c1e7b5d4e08a6c2f1b0d9e8c7a6", "github_user_id": None,
        "selected_repository": "dev/calc", "user_id": None, "selected_branch": "main",
        "title": "Fix divide by zero in calc", "last_updated_at": "2025-06-02T10:01:10.000000Z",
        "trigger": "gui", "created_at": "2025-06-02T10:00:00.000000Z", "llm_model": MODEL,
        "accumulated_cost": 0.0412, "prompt_tokens": 41200, "completion_tokens": 960, "total_tokens": 42160})
    store(OUT / "store-cli" / "sessions" / "9d8c7b6a5f4e4d3c2b1a0f9e8d7c6b5a", events[:8], None)
    (OUT / "export-calc").mkdir(parents=True, exist_ok=True)
    (OUT / "export-calc" / "trajectory-calc.json").write_text(json.dumps({"trajectory": session()}, indent=2))
    (OUT / "hostile").mkdir(parents=True, exist_ok=True)
    (OUT / "hostile" / "hostile-openhands.json").write_text(json.dumps(hostile(), indent=2))
