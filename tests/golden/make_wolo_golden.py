"""Write Wolo golden files with the real library: `python tests/golden/make_wolo_golden.py [OUT]`.

Wolo (lzjever/wolo) is published on PyPI as `mbos-wolo` (the `wolo` name there is an unrelated
2016 project). This never touches the project venv: it makes a throwaway venv (under the system
temp folder) with the running Python (3.11+), `pip install mbos-wolo==<VERSION>` into it and builds
a session there with Wolo's own classes (`wolo.session`: Message, TextPart, ToolPart,
SessionStorage). OUT defaults to test_data/formats/wolo/golden-mbos-wolo-<VERSION>/.

Written exactly as Wolo persists or serialises it:
  sessions/<session_id>/session.json, messages/<msg_id>.json, todos.json
                        SessionStorage (create_session, save_message, save_todos) with
                        base_dir=sessions/: the real on-disk layout of ~/.wolo/sessions
  calc-session.jsonl    wolo.session._serialize_message, one message per line
  calc-session.json     the same, as one JSON list (Wolo itself writes neither)
The session: a user request; an assistant turn with reasoning and a completed `write`; a turn whose
`shell` fails (status "error") beside a completed `read`; the last turn, still streaming, with a
completed `edit`, a `shell` still running and a `read` still pending. The clock is pinned
(time.time is replaced by a counter) and ids are given, so the files are reproducible.
"""

from __future__ import annotations

import sys
from pathlib import Path

from throwaway import run_with

VERSION = "0.13.3"
ROOT = Path(__file__).resolve().parents[2]

INNER = r'''
import json, sys, time
from pathlib import Path

START = 1772445600.0  # 2026-03-02T10:00:00Z
_now = [START]
time.time = lambda: _now[0]


def tick(seconds):
    _now[0] += seconds
    return _now[0]


from wolo.session import Message, SessionStorage, TextPart, ToolPart, _serialize_message

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
storage = SessionStorage(base_dir=out / "sessions")  # as ~/.wolo/sessions
SID = "Nova_260302_100000"
storage.create_session(session_id=SID, workdir="/home/dev/calc")
storage.update_session_metadata(SID, agent_display_name="Nova", title="calculator module")
saved = []


def save(msg):
    storage.save_message(SID, msg)
    saved.append(msg)


def tool(id, name, args, status, output="", ran=None):
    part = ToolPart(id=id, tool=name, input=args, output=output, status=status)
    if ran is not None:
        part.start_time = tick(0.1)
        part.end_time = tick(ran) if ran else 0.0
    return part


user = Message(id="msg_001", role="user",
               parts=[TextPart(id="text_001", text="Create calc.py with add() and divide(), then "
                                                  "run the tests in test_calc.py.")])
user.finished = True
save(user)

tick(2.0)
first = Message(id="msg_002", role="assistant")
first.reasoning_content = ("The user wants a small module. divide() must reject a zero divisor; "
                           "I'll write the file, then run pytest.")
first.parts.append(TextPart(id="text_002", text="I'll create `calc.py` first."))
first.parts.append(tool("call_write_1", "write",
                        {"file_path": "calc.py",
                         "content": "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n"
                                    "    return a / b\n"},
                        "completed", "Wrote 6 lines to calc.py", ran=0.35))
first.finished, first.finish_reason = True, "tool_calls"
save(first)

tick(3.0)
second = Message(id="msg_003", role="assistant")
second.parts.append(TextPart(id="text_003", text="Now the tests."))
second.parts.append(tool("call_shell_2", "shell", {"command": "python -m pytest -q test_calc.py"},
                         "error",
                         "F.\nFAILED test_calc.py::test_divide_by_zero - ZeroDivisionError: "
                         "division by zero\n1 failed, 1 passed in 0.04s\n[exit code: 1]",
                         ran=1.8))
second.parts.append(tool("call_read_3", "read", {"file_path": "test_calc.py"}, "completed",
                         "1\timport pytest\n2\tfrom calc import add, divide\n3\t\n4\tdef "
                         "test_divide_by_zero():\n5\t    with pytest.raises(ValueError):\n6\t"
                         "        divide(1, 0)", ran=0.02))
second.finished, second.finish_reason = True, "tool_calls"
save(second)

tick(2.5)
third = Message(id="msg_004", role="assistant")
third.reasoning_content = "The test expects ValueError, not ZeroDivisionError."
third.parts.append(TextPart(id="text_004", text="divide() must raise ValueError; fixing it."))
third.parts.append(tool("call_edit_4", "edit",
                        {"file_path": "calc.py", "old_text": "    return a / b",
                         "new_text": "    if b == 0:\n"
                                     "        raise ValueError(\"b must not be 0\")\n"
                                     "    return a / b"},
                        "completed", "Edited calc.py (+2 -0)", ran=0.05))
third.parts.append(tool("call_shell_5", "shell", {"command": "python -m pytest -q test_calc.py"},
                        "running", ran=0))
third.parts.append(tool("call_read_6", "read", {"file_path": "calc.py"}, "pending"))
save(third)  # still streaming: finished stays False

storage.save_todos(SID, [
    {"id": "1", "content": "Write calc.py", "status": "completed"},
    {"id": "2", "content": "Make test_calc.py pass", "status": "in_progress"}])
storage.update_session_metadata(SID, pid=424242, pid_updated_at=START)  # the run is still going

with open(out / "calc-session.jsonl", "w") as f:
    for msg in saved:
        f.write(json.dumps(_serialize_message(msg), ensure_ascii=False) + "\n")
with open(out / "calc-session.json", "w") as f:
    json.dump([_serialize_message(m) for m in saved], f, indent=2, ensure_ascii=False)

# --- a session that spawns sub-agents, through Wolo's own `task` tool ----------------------------
# The parent's assistant turn is saved with its `task` part pending (as agent_loop saves a turn when
# the model's stream ends), then Wolo's executor runs the part: `tools_pkg.task.task_execute`
# creates the sub-agent's session (`create_subsession`: a sibling folder under sessions/ whose
# session.json names parent_session_id and agent_type), writes the task message as its first user
# message and runs `wolo.agent.agent_loop` in it. agent_loop is the one thing replaced (it would
# call a model): it writes the sub-agent's turn with Wolo's own add_assistant_message /
# update_message. The first sub-agent answers; the second raises, which Wolo reports as
# "Subagent error: …" in the parent's part. Session and message ids come from uuid4, seeded here.
import asyncio, os, random, uuid

import wolo.agent
from wolo import session as wolo_session
from wolo.session import add_assistant_message, update_message
from wolo.tools_pkg.executor import execute_tool

_rng = random.Random(20260302)
uuid.uuid4 = lambda: uuid.UUID(int=_rng.getrandbits(128), version=4)
wolo_session.set_storage(storage)
os.getcwd = lambda: "/home/dev/calc"  # a sub-agent's session takes the process's folder as workdir
PARENT = "Orion_260302_110000"
_now[0] = START + 3600.0
storage.create_session(session_id=PARENT, workdir="/home/dev/calc")
storage.update_session_metadata(PARENT, agent_display_name="Orion", title="audit calc")


async def fake_agent_loop(config, session_id, agent_config, *args, **kwargs):
    tick(1.5)
    reply = add_assistant_message(session_id)
    if agent_config.name == "general":
        raise RuntimeError("model endpoint unreachable")
    reply.reasoning_content = "Find every divide() call and check the zero case."
    reply.parts.append(TextPart(id="text_s1", text="Looking for callers of divide()."))
    reply.parts.append(tool("call_grep_s1", "grep", {"pattern": "divide\\(", "path": "."},
                            "completed", "calc.py:5:def divide(a, b):\ntest_calc.py:6:        divide(1, 0)",
                            ran=0.04))
    reply.finished, reply.finish_reason = True, "tool_calls"
    update_message(session_id, reply)
    tick(1.0)
    answer = add_assistant_message(session_id)
    answer.parts.append(TextPart(id="text_s2", text="divide() is called once, by the zero-divisor "
                                                    "test; nothing else calls it."))
    answer.finished, answer.finish_reason = True, "stop"
    update_message(session_id, answer)
    return answer


wolo.agent.agent_loop = fake_agent_loop


class Config:  # what execute_tool reads of a config for a task: nothing but its presence
    path_safety = None


ask = Message(id="msg_101", role="user",
              parts=[TextPart(id="text_101", text="Audit calc.py: who calls divide()?")])
ask.finished = True
storage.save_message(PARENT, ask)
tick(2.0)
turn = Message(id="msg_102", role="assistant")
turn.parts.append(TextPart(id="text_102", text="I'll ask an explore agent, and a general one."))
spawn = ToolPart(id="call_task_1", tool="task",
                 input={"agent": "explore", "description": "find divide() callers",
                        "message": "List every caller of divide() in this repository."})
failing = ToolPart(id="call_task_2", tool="task",
                   input={"agent": "general", "description": "double-check",
                          "message": "Double-check the callers of divide()."})
turn.parts += [spawn, failing]
turn.finished, turn.finish_reason = True, "tool_calls"
storage.save_message(PARENT, turn)  # saved with both parts pending, as the stream ended
for part in (spawn, failing):
    tick(0.5)
    asyncio.run(execute_tool(part, None, PARENT, Config()))
    storage.save_message(PARENT, turn)  # agent_loop saves the turn after each tool
tick(1.0)
done = Message(id="msg_103", role="assistant")
done.parts.append(TextPart(id="text_103", text="Only the test calls divide()."))
done.finished, done.finish_reason = True, "stop"
storage.save_message(PARENT, done)
print("wrote", sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()))
'''


def main() -> None:
    default = ROOT / "test_data" / "formats" / "wolo" / f"golden-mbos-wolo-{VERSION}"
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    if sys.version_info < (3, 11):
        sys.exit("mbos-wolo needs Python 3.11+")
    run_with(sys.executable, [f"mbos-wolo=={VERSION}"], INNER, str(out))


if __name__ == "__main__":
    main()
