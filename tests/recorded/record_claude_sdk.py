"""Record Claude Agent SDK message streams the way wrappers persist them.

claude-agent-sdk (its bundled `claude` CLI) runs against a local fake Anthropic Messages API
(`fakeapi.py`, scripted replies: thinking, TodoWrite, Bash ok + failing, Write/Read/Grep/Glob/Edit,
a sub-agent, a refused WebFetch, one 529 overloaded error). Every message object the SDK yields is
written two ways:
  legion.messages.jsonl   legion's raw-SDK lines: {"_type": <class>, "timestamp", "session_id",
                          "data": dataclasses.asdict(message)}, plus legion's own client_launched
                          and user records around them
  sdk-flat.jsonl          {"_type": <class>, **dataclasses.asdict(message)} (the flat dump other
                          Agent SDK wrappers write)
Usage: ANTHROPIC_BASE_URL=http://127.0.0.1:PORT python record_claude_sdk.py OUT_DIR WORK_DIR
"""
import asyncio, dataclasses, json, os, sys, time

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, PermissionResultAllow, PermissionResultDeny

OUT, WORK = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
SID = "rec-legion-1"


async def can_use_tool(name, inp, ctx):
    if name == "WebFetch":
        return PermissionResultDeny(message="Fetching web pages is not allowed here.")
    return PermissionResultAllow()


async def main():
    legion = open(f"{OUT}/legion.messages.jsonl", "w")
    flat = open(f"{OUT}/sdk-flat.jsonl", "w")

    def own(rec):
        legion.write(json.dumps({**rec, "session_id": SID, "timestamp": time.time()}) + "\n")

    def sdk(message):
        data = dataclasses.asdict(message)
        name = type(message).__name__
        legion.write(json.dumps({"_type": name, "timestamp": time.time(), "session_id": SID, "data": data},
                                default=str) + "\n")
        flat.write(json.dumps({"_type": name, **data}, default=str) + "\n")

    own({"type": "system", "content": "Claude Code Launched", "metadata": {"subtype": "client_launched"}})
    opts = ClaudeAgentOptions(cwd=WORK, model="claude-sonnet-4-5", can_use_tool=can_use_tool,
                              allowed_tools=["Bash", "Read", "Write", "Edit", "Grep", "Glob", "TodoWrite", "Task", "Agent"],
                              permission_mode="acceptEdits", max_turns=20,
                              env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
                                   "DISABLE_AUTOUPDATER": "1"})
    async with ClaudeSDKClient(options=opts) as client:
        for prompt in ["Give me a tour of your tools, please.", "Is the notes file still there?"]:
            own({"type": "user", "content": prompt})
            await client.query(prompt)
            async for message in client.receive_response():
                sdk(message)
    own({"type": "system", "content": "Session ended", "metadata": {"subtype": "client_stopped"}})
    legion.close()
    flat.close()


asyncio.run(main())
