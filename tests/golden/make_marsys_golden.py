"""MARSYS golden files from the real library: `python tests/golden/make_marsys_golden.py [OUT]`.

MARSYS needs Python >= 3.12 and pulls heavy dependencies, so this never touches the project venv:
it makes a throwaway venv (under the system temp folder), `pip install marsys==<VERSION>` into it
and runs the exchange below there. Set MARSYS_PYTHON to a Python 3.12+ interpreter if none is found
on PATH or under ~/.pyenv. OUT defaults to test_data/formats/marsys/golden-marsys-<VERSION>/.

The exchange, built from MARSYS's own classes (Message, ToolCallMsg, AgentCallMsg, MemoryManager,
BranchExecutionContext, BranchResult, StateManager): the user asks Coordinator; Coordinator invokes
Researcher (its action JSON, an `agent_call` message); Researcher calls two tools (one fails), hits
a model error, answers; `agent_response` back to Coordinator, which gives the final answer.

Written exactly as MARSYS persists or serialises it:
  coordinator.memory.json / researcher.memory.json   MemoryManager.save_to_file (what
                                                     Agent.save_state writes)
  session_golden-run-1.json                          StateManager.save_session through
                                                     FileStorageBackend (branch memories filled the
                                                     way BranchExecutor does after every step)
  messages.asdict.jsonl                              dataclasses.asdict(Message), one per line, in
                                                     conversation order (MARSYS has no JSONL writer;
                                                     this is its dataclass's own field set)
  coordinator.messages.jsonl / researcher.messages.jsonl
                                                     a second run's two memories, Message.to_llm_dict()
                                                     per line (what the model sees, what save_state
                                                     keeps): hand-offs as the model writes them
                                                     (fenced JSON) and as BranchExecutor passes them
                                                     on ("[Request from <caller>]"), a tool failure
                                                     as StepExecutor stores it (the str() of
                                                     ToolExecutor's error dict), a model error as
                                                     Agent records it (role "error", JSON)
The clock is pinned (time.time is replaced by a counter) so the files are reproducible.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from throwaway import run_with

VERSION = "0.2.1"
ROOT = Path(__file__).resolve().parents[2]

INNER = r'''
import asyncio, dataclasses, json, shutil, sys, tempfile, time
from pathlib import Path

START = 1772445600.0  # 2026-03-02T10:00:00Z
_now = [START]


def clock():
    return _now[0]


def tick(seconds):
    _now[0] += seconds


time.time = clock  # every module's time.time() reads the pinned clock

from marsys.agents.memory import AgentCallMsg, MemoryManager, Message, ToolCallMsg
from marsys.coordination.branches.types import (BranchResult, BranchState, BranchStatus,
                                                BranchTopology, BranchType, ExecutionBranch,
                                                StepResult)
from marsys.coordination.execution.branch_executor import BranchExecutionContext
from marsys.coordination.state.state_manager import FileStorageBackend, StateManager

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
REQUEST = ("Find out when Python 3.13 was released and list its three headline features, "
           "with sources.")
RESEARCH = "Research the Python 3.13 release: the release date and the three headline features."
WHATSNEW = "https://docs.python.org/3/whatsnew/3.13.html"
BAD_URL = "https://peps.python.org/pep-0719/x"
SEARCH_ARGS = '{"query": "Python 3.13 release date"}'
FETCH_ARGS = json.dumps({"url": BAD_URL})

coordinator = MemoryManager(memory_type="conversation_history")
researcher = MemoryManager(memory_type="conversation_history")
ctx = BranchExecutionContext(branch_id="main", session_id="golden-run-1", initial_request=REQUEST)
conversation = []  # every Message in the order it happened, for the asdict JSONL
trace = []


def add(memory, msg, seconds=1.0):
    tick(seconds)
    memory.add(message=msg)
    conversation.append(msg)


def step(agent, memory, action):
    """What BranchExecutor does after an agent step: the agent's whole memory, timestamped."""
    for update in memory.get_messages():
        if "timestamp" not in update:
            update["timestamp"] = time.time()
        ctx.add_memory(agent, update)
    trace.append(StepResult(agent_name=agent, success=True, action_type=action))


add(coordinator, Message(role="system", message_id="m-c-sys",
                         content="You are Coordinator. Delegate research to Researcher and answer "
                                 "the user with a short, sourced summary."), 0)
add(researcher, Message(role="system", message_id="m-r-sys",
                        content="You are Researcher. Use web_search and fetch_page; answer with "
                                "facts and URLs."), 0)
add(coordinator, Message(role="user", message_id="m-c-user", content=REQUEST))
add(coordinator, Message(role="assistant", name="Coordinator", message_id="m-c-plan",
                         content=json.dumps({
                             "thought": "I need facts with sources; Researcher has the web tools.",
                             "next_action": "invoke_agent",
                             "action_input": [{"agent_name": "Researcher", "request": RESEARCH}]})),
    2.5)
add(coordinator, Message(role="agent_call", name="Researcher", message_id="m-c-call",
                         content=RESEARCH,
                         agent_calls=[AgentCallMsg(agent_name="Researcher", request=RESEARCH)]))
step("Coordinator", coordinator, "invoke_agent")

add(researcher, Message(role="user", message_id="m-r-req", content=RESEARCH))
add(researcher, Message(role="assistant", name="Researcher", message_id="m-r-search", content=None,
                        tool_calls=[ToolCallMsg(id="call_search_1", call_id="call_search_1",
                                                type="function", name="web_search",
                                                arguments=SEARCH_ARGS)]),
    3.0)
add(researcher, Message(role="tool", name="web_search", tool_call_id="call_search_1",
                        message_id="m-r-search-result",
                        content=json.dumps({"results": [
                            {"title": "What's New In Python 3.13",
                             "url": "https://docs.python.org/3/whatsnew/3.13.html"},
                            {"title": "Python 3.13.0 release",
                             "url": "https://www.python.org/downloads/release/python-3130/"}]})),
    1.5)
add(researcher, Message(role="assistant", name="Researcher", message_id="m-r-fetch", content=None,
                        tool_calls=[ToolCallMsg(id="call_fetch_2", call_id="call_fetch_2",
                                                type="function", name="fetch_page",
                                                arguments=FETCH_ARGS)]),
    2.0)
add(researcher, Message(role="tool", name="fetch_page", tool_call_id="call_fetch_2",
                        message_id="m-r-fetch-result",
                        content=str({"error": f"HTTP 404 Not Found for {BAD_URL}"})),
    0.8)
step("Researcher", researcher, "call_tool")
add(researcher, Message(role="error", name="Researcher", message_id="m-r-error",
                        content=json.dumps({"error": "LLM call failed: 429 Too Many Requests",
                                            "error_code": "MODEL_ERROR",
                                            "error_type": "ModelAPIError",
                                            "is_retryable": True, "retry_after": 2})), 4.0)
add(researcher, Message(role="assistant", name="Researcher", message_id="m-r-final",
                        content=json.dumps({
                            "thought": "The docs page has the date and the feature list.",
                            "next_action": "final_response",
                            "action_input": {"response": (
                                "Python 3.13 was released on 7 October 2024. Headline features: "
                                "a new interactive REPL, an experimental free-threaded build "
                                "(PEP 703) and an experimental JIT compiler (PEP 744). Source: "
                                "https://docs.python.org/3/whatsnew/3.13.html")}})), 6.0)
step("Researcher", researcher, "final_response")

add(coordinator, Message(role="agent_response", name="Researcher", message_id="m-c-response",
                         content="Python 3.13 was released on 7 October 2024: new REPL, "
                                 "free-threaded build (PEP 703), experimental JIT (PEP 744).",
                         structured_data={"release_date": "2024-10-07", "sources": [WHATSNEW]}),
    0.5)
add(coordinator, Message(role="assistant", name="Coordinator", message_id="m-c-final",
                         content=json.dumps({
                             "thought": "Researcher's answer is sourced; summarise it.",
                             "next_action": "final_response",
                             "action_input": {"response": (
                                 "Python 3.13 came out on 7 October 2024. Its headline features "
                                 "are the new interactive REPL, the experimental free-threaded "
                                 "build and an experimental JIT compiler.")}})), 3.0)
step("Coordinator", coordinator, "final_response")

# 1. what Agent.save_state / save_memory write: MemoryManager.save_to_file
tick(0.2)
coordinator.save_to_file(str(out / "coordinator.memory.json"), {"tools_version": 1})
researcher.save_to_file(str(out / "researcher.memory.json"), {"tools_version": 3})

# 2. what Orchestra's StateManager writes: sessions/session_<id>.json
branch = ExecutionBranch(
    id="main", name="main", type=BranchType.SIMPLE,
    topology=BranchTopology(agents=["Coordinator", "Researcher"], entry_agent="Coordinator",
                            current_agent="Coordinator",
                            allowed_transitions={"Coordinator": ["Researcher"],
                                                 "Researcher": ["Coordinator"]}),
    state=BranchState(status=BranchStatus.COMPLETED, current_step=5, total_steps=5,
                      start_time=START, end_time=time.time(),
                      completed_agents={"Coordinator", "Researcher"}))
result = BranchResult(branch_id="main", success=True,
                      final_response="Python 3.13 came out on 7 October 2024.", total_steps=5,
                      execution_trace=trace, branch_memory=dict(ctx.branch_memory))
store = Path(tempfile.mkdtemp())
manager = StateManager(FileStorageBackend(store))
asyncio.run(manager.save_session("golden-run-1", {
    "branches": {"main": branch}, "active_branches": [], "completed_branches": ["main"],
    "branch_results": {"main": result},
    "metadata": {"current_time": time.time(), "total_steps": 5, "status": "completed"}}))
shutil.copy(store / "sessions" / "session_golden-run-1.json", out / "session_golden-run-1.json")
shutil.rmtree(store)

# 3. the dataclass itself, one message per line
with open(out / "messages.asdict.jsonl", "w") as f:
    for msg in conversation:
        f.write(json.dumps(dataclasses.asdict(msg), ensure_ascii=False) + "\n")

# 4. two agents' memories as a running Orchestra fills them, each written as the library hands it
#    to the model and to save_state: Message.to_llm_dict() per line. The library's own code makes
#    each shape: BranchExecutor prepends "[Request from <caller>]" to what one agent passes the
#    next, the model answers with its action as fenced JSON (kept as written), StepExecutor stores
#    a tool's result as str(result), so a failure is the repr of ToolExecutor's error dict, and
#    Agent turns a failed model call into an `error` message holding JSON.
from types import SimpleNamespace

from marsys.agents.agents import Agent
from marsys.agents.exceptions import ModelAPIError
from marsys.coordination.execution.branch_executor import BranchExecutor
from marsys.coordination.execution.tool_executor import RealToolExecutor


def handed_over(request, caller):
    return BranchExecutor._prepend_caller_name(None, request, caller)


def fenced(action):
    return "```json\n" + json.dumps(action, indent=2) + "\n```"


def web_search(query):
    return {"results": [{"title": "What's New In Python 3.13", "url": WHATSNEW}]}


def fetch_page(url):
    raise ConnectionError("Cannot connect to host peps.python.org:443 ssl:default "
                          "[Connection reset by peer]")


def run_tool(func, args):
    result = asyncio.run(RealToolExecutor()._execute_single_tool(func, args, func.__name__))
    return str(result)  # what StepExecutor puts in the tool message


ANSWER = ("Python 3.13 was released on 7 October 2024. Headline features: a new interactive REPL, "
          "an experimental free-threaded build (PEP 703) and an experimental JIT (PEP 744). "
          "Source: " + WHATSNEW)
lead = MemoryManager(memory_type="conversation_history")
worker = MemoryManager(memory_type="conversation_history")
lead.add(role="system", content="You are Coordinator. Delegate research to Researcher.")
lead.add(role="user", content=REQUEST)
lead.add(message=Message(role="assistant", name="Coordinator", content=fenced({
    "thought": "Researcher has the web tools.", "next_action": "invoke_agent",
    "action_input": [{"agent_name": "Researcher", "request": RESEARCH}]})))
worker.add(role="system", content="You are Researcher. Use web_search and fetch_page.")
worker.add(role="user", content=handed_over(RESEARCH, "Coordinator"))
worker.add(message=Message(role="assistant", name="Researcher", content=None, tool_calls=[
    ToolCallMsg(id="call_search_1", call_id="call_search_1", type="function", name="web_search",
                arguments=SEARCH_ARGS)]))
worker.add(role="tool", name="web_search", tool_call_id="call_search_1",
           content=run_tool(web_search, {"query": "Python 3.13 release date"}))
worker.add(message=Message(role="assistant", name="Researcher", content=None, tool_calls=[
    ToolCallMsg(id="call_fetch_2", call_id="call_fetch_2", type="function", name="fetch_page",
                arguments=FETCH_ARGS)]))
worker.add(role="tool", name="fetch_page", tool_call_id="call_fetch_2",
           content=run_tool(fetch_page, {"url": BAD_URL}))
worker.add(message=Agent._make_error_message_from_exception(
    SimpleNamespace(name="Researcher"),
    ModelAPIError("429 Too Many Requests", provider="openrouter", classification="rate_limit",
                  is_retryable=True, retry_after=2)))
worker.add(message=Message(role="assistant", name="Researcher", content=fenced({
    "thought": "The docs page has the date and the features.", "next_action": "final_response",
    "action_input": {"response": ANSWER}})))
lead.add(role="user", content=handed_over(ANSWER, "Researcher"))
lead.add(message=Message(role="assistant", name="Coordinator", content=fenced({
    "thought": "Sourced; summarise it.", "next_action": "final_response",
    "action_input": {"response": "Python 3.13 came out on 7 October 2024, with a new REPL, a "
                                 "free-threaded build and an experimental JIT."}})))
for name, memory in (("coordinator", lead), ("researcher", worker)):
    with open(out / f"{name}.messages.jsonl", "w") as f:
        for m in memory.get_messages():
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
print("wrote", ", ".join(sorted(p.name for p in out.iterdir())))
'''


def find_python() -> str:
    """A Python >= 3.12: MARSYS_PYTHON, then python3.1x on PATH, then ~/.pyenv versions."""
    candidates = [os.environ.get("MARSYS_PYTHON")]
    candidates += [shutil.which(f"python3.{m}") for m in (12, 13, 14)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")))
    for c in candidates:
        if not c:
            continue
        try:
            out = subprocess.run([c, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                                 capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if out.stdout.strip() == "True":
            return c
    sys.exit("no Python >= 3.12 found (marsys needs it); set MARSYS_PYTHON")


def main() -> None:
    default = ROOT / "test_data" / "formats" / "marsys" / f"golden-marsys-{VERSION}"
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    run_with(find_python(), [f"marsys=={VERSION}"], INNER, str(out))


if __name__ == "__main__":
    main()
