"""Record an AgentScope 2.x session: the real `Agent` with its own `OpenAIChatModel`, whose HTTP client
is an httpx.MockTransport playing the chat-completions API (the fake model). The agent's own
reasoning-acting loop, tool execution and permission engine write every message.
Run in a venv with `agentscope==2.0.11`: python record_agentscope2.py OUT_DIR
Writes: <agent>.agent_state.json (`agent.state.model_dump_json()`, what the 2.x app stores per agent)
and <agent>.msgs.jsonl (`msg.model_dump_json()` of every context Msg, one per line).
"""
import asyncio, json, os, sys, itertools

import httpx
from agentscope.agent import Agent
from agentscope.credential import OpenAICredential
from agentscope.event import ConfirmResult, UserConfirmResultEvent
from agentscope.message import UserMsg
from agentscope.model import OpenAIChatModel
from agentscope.tool import Toolkit, FunctionTool, ToolChunk

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
n = itertools.count(1)


def completion(message, finish="stop"):
    return {"id": f"chatcmpl-{next(n)}", "object": "chat.completion", "created": 1764000000 + next(n),
            "model": "gpt-4.1-mini", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 80, "total_tokens": 980}}


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def handler(request: httpx.Request):
    body = json.loads(request.content)
    msgs = body["messages"]
    real = [i for i, m in enumerate(msgs) if m["role"] == "user" and "system-reminder" not in json.dumps(m["content"])]
    last = real[-1]
    tools_done = [m for m in msgs[last:] if m["role"] == "tool"]
    if "second" in json.dumps(msgs[last]["content"]):
        if not tools_done:
            return httpx.Response(200, json=completion({"role": "assistant", "content": "I'll clean the build folder.",
                                                        "tool_calls": [call("call_sh1", "run_shell", '{"command": "rm -rf build/"}')]}, "tool_calls"))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "You declined, so I left `build/` alone."}))
    if not tools_done:
        return httpx.Response(200, json=completion({
            "role": "assistant", "content": None,
            "reasoning_content": "Read setup.cfg and the missing README to answer.",
            "tool_calls": [call("call_r1", "read_file", '{"path": "setup.cfg"}'),
                           call("call_r2", "read_file", '{"path": "README.md"}'),
                           call("call_r3", "read_file", '{"path": ')]}, "tool_calls"))
    return httpx.Response(200, json=completion({
        "role": "assistant", "reasoning_content": "setup.cfg names the package; README is missing.",
        "content": "The package is **demo** version 0.3. There is no README.md.\n\n<img src=x onerror=alert(1)>"}))


async def read_file(path: str) -> ToolChunk:
    """Read a text file.

    Args:
        path (str): the file's path
    """
    if path != "setup.cfg":
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
    return ToolChunk(content=[{"type": "text", "text": "[metadata]\nname = demo\nversion = 0.3\n"}])


async def run_shell(command: str) -> ToolChunk:
    """Run a shell command.

    Args:
        command (str): the command
    """
    return ToolChunk(content=[{"type": "text", "text": "done"}])


async def main():
    model = OpenAIChatModel(
        credential=OpenAICredential(api_key="sk-fake", base_url="http://fake.local/v1"),
        model="gpt-4.1-mini", stream=False,
        client_kwargs={"http_client": httpx.AsyncClient(transport=httpx.MockTransport(handler))})
    toolkit = Toolkit(tools=[FunctionTool(read_file, is_read_only=True), FunctionTool(run_shell)])
    agent = Agent(name="Coder", system_prompt="You are Coder, a careful engineer.", model=model, toolkit=toolkit)
    async def turn(inputs, allow):
        """One user turn: answer every permission request the agent raises (allow or refuse)."""
        while inputs is not None:
            pending = None
            async for ev in agent.reply_stream(inputs):
                if type(ev).__name__ == "RequireUserConfirmEvent":
                    pending = ev
            inputs = None
            if pending is not None:
                print("confirm", [(c.name, allow(c)) for c in pending.tool_calls])
                inputs = UserConfirmResultEvent(reply_id=pending.reply_id, confirm_results=[
                    ConfirmResult(confirmed=allow(c), tool_call=c) for c in pending.tool_calls])

    await turn(UserMsg("alice", "What package is this, and what does the README say?"), lambda c: True)
    await turn(UserMsg("alice", "second: clean the build folder"), lambda c: c.name != "run_shell")
    with open(f"{OUT}/coder.agent_state.json", "w") as f:
        f.write(agent.state.model_dump_json(indent=2))
    with open(f"{OUT}/coder.msgs.jsonl", "w") as f:
        for m in agent.state.context:
            f.write(m.model_dump_json() + "\n")


asyncio.run(main())
