"""Writes the hand-made OpenHands V1 conversation in test_data/formats/openhands_v1/ (run from the
repo root: `python tests/golden/make_openhands_v1_fixtures.py`). The software-agent-sdk needs
Python 3.12, so its classes are not run here; each file is shaped as they serialize
(`model_dump_json(exclude_none=True)`, `kind` the class name), from OpenHands/software-agent-sdk:

* the folder: `conversation/persistence_const.py` (BASE_STATE "base_state.json", EVENTS_DIR
  "events", EVENT_FILE_PATTERN "event-{idx:05d}-{event_id}.json"), `conversation/event_store.py`
  (EventLog.append writes each event once, then the `.eventlog-count-<n>.marker`), the CLI's
  `~/.openhands/conversations/<conversation id hex>/`;
* `base_state.json`: `conversation/state.py` ConversationState {id, agent, workspace,
  persistence_dir, max_iterations, stuck_detection, execution_status, confirmation_policy,
  activated_knowledge_skills, blocked_actions, blocked_messages, stats {usage_to_metrics},
  secret_registry, agent_state}; `llm/utils/metrics.py` Metrics {model_name, accumulated_cost,
  accumulated_token_usage, costs, response_latencies, token_usages};
* events: `event/base.py` (id, timestamp, source), `event/llm_convertible/system.py`
  SystemPromptEvent, `…/message.py` MessageEvent {llm_message (`llm/message.py` Message),
  activated_skills, extended_content}, `…/action.py` ActionEvent {thought, reasoning_content,
  thinking_blocks, action, tool_name, tool_call_id, tool_call (MessageToolCall {id, name,
  arguments, origin}), llm_response_id, security_risk, summary}, `…/observation.py`
  ObservationEvent {tool_name, tool_call_id, observation, action_id}, UserRejectObservation
  {rejection_reason, rejection_source}, AgentErrorEvent {error}, `event/condenser.py`
  Condensation {forgotten_event_ids, summary, llm_response_id}; observations as
  openhands-tools writes them (`tools/terminal/definition.py` TerminalObservation {content,
  is_error, command, exit_code, timeout, metadata}, FinishAction {message}).
"""

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "test_data" / "formats" / "openhands_v1"
CONV_ID = "6b1c0e3f9a2d4c58b7e1f0a4d3c2b1a0"
MODEL = "litellm_proxy/claude-sonnet-4-5-20250929"


def text(t: str) -> dict:
    return {"cache_prompt": False, "type": "text", "text": t}


class Conversation:
    def __init__(self):
        self.events: list[dict] = []
        self.second = 0
        self.n = 0

    def add(self, kind: str, source: str, **fields) -> dict:
        self.second += 3
        self.n += 1
        eid = f"{self.n:08x}-5d1e-4c2a-9f3b-{self.n:012x}"
        ev = {"kind": kind, "id": eid,
              "timestamp": f"2026-05-12T14:{self.second // 60:02d}:{self.second % 60:02d}.{self.n:06d}",
              "source": source, **fields}
        self.events.append(ev)
        return ev

    def action(self, tool: str, call_id: str, response: str, action: dict, args: dict,
               thought: str = "", **more) -> dict:
        more.setdefault("thinking_blocks", [])
        return self.add("ActionEvent", "agent", thought=[text(thought)] if thought else [],
                        action=action, tool_name=tool, tool_call_id=call_id,
                        tool_call={"id": call_id, "name": tool, "arguments": json.dumps(args), "origin": "completion"},
                        llm_response_id=response, security_risk="LOW", **more)

    def terminal_result(self, act: dict, output: str, code: int) -> dict:
        command = act["action"]["command"]
        return self.add("ObservationEvent", "environment", tool_name="terminal", tool_call_id=act["tool_call_id"],
                        observation={"kind": "TerminalObservation", "content": [text(output)], "is_error": False,
                                     "command": command, "exit_code": code, "timeout": False,
                                     "metadata": {"exit_code": code, "pid": -1, "username": "dev",
                                                  "hostname": "laptop", "working_dir": "/home/dev/calc",
                                                  "py_interpreter_path": "/usr/bin/python3",
                                                  "prefix": "", "suffix": ""}},
                        action_id=act["id"])

    def write(self, folder: Path, state: dict) -> None:
        events = folder / "events"
        events.mkdir(parents=True)
        (folder / "base_state.json").write_text(json.dumps(state, separators=(",", ":")))
        for i, ev in enumerate(self.events):
            (events / f"event-{i:05d}-{ev['id']}.json").write_text(json.dumps(ev, separators=(",", ":")))
        (events / f".eventlog-count-{len(self.events)}.marker").write_text("")
        (events / ".eventlog.lock").write_text("")


def terminal(command: str) -> dict:
    return {"kind": "TerminalAction", "command": command, "is_input": False, "reset": False}


def metrics(model: str, usage_id_calls: list[tuple[str, int, int, int, int, float]]) -> dict:
    usages = [{"model": model, "prompt_tokens": p, "completion_tokens": c, "cache_read_tokens": r,
               "cache_write_tokens": w, "reasoning_tokens": 0, "context_window": 200000,
               "per_turn_token": p + c, "response_id": rid} for rid, p, c, r, w, _ in usage_id_calls]
    total = {"model": model, "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
             "completion_tokens": sum(u["completion_tokens"] for u in usages),
             "cache_read_tokens": sum(u["cache_read_tokens"] for u in usages),
             "cache_write_tokens": sum(u["cache_write_tokens"] for u in usages),
             "reasoning_tokens": 0, "context_window": 200000, "per_turn_token": 0, "response_id": ""}
    costs = [x[5] for x in usage_id_calls]
    return {"model_name": model, "accumulated_cost": round(sum(costs), 6), "accumulated_token_usage": total,
            "costs": [{"model": model, "cost": c, "timestamp": 1778594400.0 + i} for i, c in enumerate(costs)],
            "response_latencies": [{"model": model, "latency": 2.5, "response_id": x[0]} for x in usage_id_calls],
            "token_usages": usages}


def calc() -> tuple[Conversation, dict]:
    c = Conversation()
    c.add("SystemPromptEvent", "agent",
          system_prompt=text("You are OpenHands agent, a helpful AI assistant that can interact with a computer "
                             "to solve tasks.\n<ROLE>…</ROLE>"),
          tools=[{"kind": "TerminalTool", "name": "terminal", "description": "Execute a bash command in the terminal.",
                  "annotations": {"title": "terminal", "readOnlyHint": False, "destructiveHint": True,
                                  "idempotentHint": False, "openWorldHint": True}},
                 {"kind": "FileEditorTool", "name": "file_editor", "description": "Custom editing tool.",
                  "annotations": {"title": "file_editor"}},
                 {"kind": "FinishTool", "name": "finish", "description": "Signals the completion of the task."},
                 {"kind": "ThinkTool", "name": "think", "description": "Use the tool to think about something."}])
    c.add("MessageEvent", "user",
          llm_message={"role": "user", "content": [text("Fix the failing test in calc.py and tell me what was wrong.")],
                       "thinking_blocks": []},
          activated_skills=[], extended_content=[])
    view = c.action("file_editor", "toolu_01View", "chatcmpl-1",
                    {"kind": "FileEditorAction", "command": "view", "path": "/home/dev/calc/calc.py"},
                    {"command": "view", "path": "/home/dev/calc/calc.py"},
                    thought="Let me look at the code first.",
                    thinking_blocks=[{"type": "thinking", "thinking": "The test probably divides by zero.",
                                      "signature": "EqQBCkYIBxgCKkA"}])
    c.add("ObservationEvent", "environment", tool_name="file_editor", tool_call_id="toolu_01View",
          observation={"kind": "FileEditorObservation", "content": [text(
              "Here's the result of running `cat -n` on /home/dev/calc/calc.py:\n     1\tdef divide(a, b):\n"
              "     2\t    return a / b\n")], "is_error": False, "command": "view", "path": "/home/dev/calc/calc.py",
              "prev_exist": True}, action_id=view["id"])
    run = c.action("terminal", "toolu_02Test", "chatcmpl-2", terminal("python -m pytest -q"),
                   {"command": "python -m pytest -q", "security_risk": "LOW"},
                   summary="running the tests to see the failure")
    c.terminal_result(run, "F.\nFAILED test_calc.py::test_divide_by_zero - ZeroDivisionError\n1 failed, 1 passed", 1)
    think = c.action("think", "toolu_03Think", "chatcmpl-3",
                     {"kind": "ThinkAction", "thought": "divide() must return None when b is 0."},
                     {"thought": "divide() must return None when b is 0."})
    c.add("ObservationEvent", "environment", tool_name="think", tool_call_id="toolu_03Think",
          observation={"kind": "ThinkObservation", "content": [text("Your thought has been logged.")],
                       "is_error": False}, action_id=think["id"])
    edit_args = {"command": "str_replace", "path": "/home/dev/calc/calc.py", "old_str": "    return a / b",
                 "new_str": "    return a / b if b else None"}
    edit = c.action("file_editor", "toolu_04Edit", "chatcmpl-4", {"kind": "FileEditorAction", **edit_args}, edit_args)
    c.add("ObservationEvent", "environment", tool_name="file_editor", tool_call_id="toolu_04Edit",
          observation={"kind": "FileEditorObservation", "content": [text(
              "The file /home/dev/calc/calc.py has been edited. Here's the result of running `cat -n` on a snippet "
              "of /home/dev/calc/calc.py:\n     1\tdef divide(a, b):\n     2\t    return a / b if b else None\n")],
              "is_error": False, "command": "str_replace", "path": "/home/dev/calc/calc.py", "prev_exist": True,
              "old_content": "def divide(a, b):\n    return a / b\n",
              "new_content": "def divide(a, b):\n    return a / b if b else None\n"}, action_id=edit["id"])
    rm = c.action("terminal", "toolu_05Rm", "chatcmpl-5", terminal("rm -rf .pytest_cache build"),
                  {"command": "rm -rf .pytest_cache build", "security_risk": "HIGH"},
                  thought="Let me clean the caches before running again.")
    c.add("UserRejectObservation", "environment", tool_name="terminal", tool_call_id="toolu_05Rm",
          rejection_reason="Don't delete anything, just run the tests.", rejection_source="user",
          action_id=rm["id"])
    c.add("MessageEvent", "user",
          llm_message={"role": "user", "content": [text("Don't delete anything, just run the tests.")],
                       "thinking_blocks": []}, activated_skills=[], extended_content=[])
    bad = c.action("terminal", "toolu_06Bad", "chatcmpl-6", None, {"comand": "pytest"})
    del bad["action"]  # the model misspelt an argument: no action could be made (None, not written)
    c.add("AgentErrorEvent", "agent", tool_name="terminal", tool_call_id="toolu_06Bad",
          error="Error validating args {\"comand\": \"pytest\"} for tool 'terminal': 1 validation error for "
                "TerminalAction\ncommand\n  Field required")
    rerun = c.action("terminal", "toolu_07Test", "chatcmpl-7", terminal("python -m pytest -q"),
                     {"command": "python -m pytest -q"})
    c.terminal_result(rerun, "..\n2 passed in 0.02s", 0)
    c.add("Condensation", "environment",
          forgotten_event_ids=[c.events[i]["id"] for i in (2, 3, 4, 5)],
          summary="The user asked to fix calc.py; the agent viewed it and ran the tests (one failed).",
          summary_offset=1, llm_response_id="chatcmpl-8")
    done = "Fixed: `divide` now returns None when b is 0; both tests pass."
    fin = c.action("finish", "toolu_09Fin", "chatcmpl-9", {"kind": "FinishAction", "message": done}, {"message": done})
    c.add("ObservationEvent", "environment", tool_name="finish", tool_call_id="toolu_09Fin",
          observation={"kind": "FinishObservation", "content": [text(
              "Fixed: `divide` now returns None when b is 0; both tests pass.")], "is_error": False},
          action_id=fin["id"])
    agent_calls = [(f"chatcmpl-{i}", 5200 + 400 * i, 120, 4800 + 350 * i, 200 if i == 1 else 0, 0.0061)
                   for i in (1, 2, 3, 4, 5, 6, 7, 9)]
    state = {
        "id": "6b1c0e3f-9a2d-4c58-b7e1-f0a4d3c2b1a0",
        "agent": {"kind": "Agent", "llm": {"model": MODEL, "api_key": "**********",
                                           "base_url": "https://llm-proxy.app.all-hands.dev/", "usage_id": "agent",
                                           "temperature": 0.0, "max_output_tokens": 64000},
                  "tools": [{"name": "terminal", "params": {}}, {"name": "file_editor", "params": {}},
                            {"name": "task_tracker", "params": {}}],
                  "condenser": {"kind": "LLMSummarizingCondenser", "llm": {"model": MODEL, "usage_id": "condenser"},
                                "max_size": 80, "keep_first": 4}},
        "workspace": {"kind": "LocalWorkspace", "working_dir": "/home/dev/calc"},
        "persistence_dir": f"/home/dev/.openhands/conversations/{CONV_ID}",
        "max_iterations": 500, "stuck_detection": True, "execution_status": "finished",
        "confirmation_policy": {"kind": "AlwaysConfirm"}, "activated_knowledge_skills": [],
        "blocked_actions": {}, "blocked_messages": {},
        "stats": {"usage_to_metrics": {
            "agent": metrics(MODEL, agent_calls),
            "condenser": metrics(MODEL, [("chatcmpl-8", 9100, 310, 0, 0, 0.0320)])}},
        "secret_registry": {"secret_sources": {}}, "agent_state": {}}
    return c, state


def main() -> None:
    if ROOT.exists():
        for p in ROOT.iterdir():
            if p.is_dir():
                shutil.rmtree(p)
    c, state = calc()
    c.write(ROOT / "cli-calc" / CONV_ID, state)


if __name__ == "__main__":
    main()
