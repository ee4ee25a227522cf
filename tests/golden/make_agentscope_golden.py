"""Write AgentScope golden files with the real library: `python tests/golden/make_agentscope_golden.py [OUT]`.

Never touches the project venv: for each AgentScope release below it makes a throwaway venv under the
system temp folder, `pip install agentscope==<version>` into it (plus the pins those releases need
on today's PyPI: `mcp<2`, and greenlet / tqdm that 1.x imports without declaring) and runs a script
there. No model is ever called: every `Msg` and block is built directly with the library's classes,
tool results come from really running small tool functions through the library's own `Toolkit`
(so the error text of a failing tool is the toolkit's), and files are written by the library's own
savers. OUT defaults to test_data/formats/agentscope/.

1.x (1.0.21, the line the corpus files come from, and 1.0.0 for the older memory state), a
two-agent trip-planning exchange inside a real `MsgHub` (the user's request is its announcement;
each reply is broadcast to the other agent the way `AgentBase.__call__` does, thinking stripped):
Planner hands work to Researcher; Researcher thinks, calls `get_weather` (fails: the toolkit's
"Error: ..." text) and `search_trains` (an image in its output), then answers; Planner answers.
  golden-py<ver>/trip-session.json   `JSONSession.save_session_state(planner=..., researcher=...)`
                                     of two `ReActAgent`s with `InMemoryMemory` (1.0.21: `[msg,
                                     marks]` pairs, a hint message marked "hint"; 1.0.0: a bare
                                     list of messages)
  golden-py<ver>/trip.msgs.jsonl     `json.dumps(msg.to_dict())` per line, in the order they happened

2.x (2.0.10 and 2.0.11, pydantic `Msg`): a Coder / Reviewer exchange with `ThinkingBlock`, `ToolCallBlock`
(JSON-string input, call state), `ToolResultBlock` (success, error, still running), `DataBlock`
image, `HintBlock`, `Usage`, a reply that ended in an error (`finished_reason`, `ErrorInfo`).
  golden-py2.0.10/coder.agent_state.json   `AgentState(context=[...]).model_dump_json()`, what the
                                           2.x app storage keeps per agent
  golden-py2.0.10/review.msgs.jsonl        `msg.model_dump_json()` per line
  golden-py2.x/streamed.msgs.jsonl         a reply rebuilt from its events by `Msg.append_event`
                                           (what the app's chat service stores): a tool streams
                                           one PNG in two base64 chunks of one data block — two
                                           DataBlocks of that id in 2.0.10, one merged in 2.0.11
                                           (the other two files are the same in both)
Ids and clocks are pinned (1.x: shortuuid is replaced by a counter and every Msg gets an explicit
timestamp; 2.x: `set_id_factory` / `set_timestamp_factory`) so reruns give the same files.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from throwaway import run_with

ROOT = Path(__file__).resolve().parents[2]
V1 = ["1.0.21", "1.0.0"]
V2 = ["2.0.10", "2.0.11"]
EXTRA = ["mcp<2", "greenlet", "tqdm"]
EXTRA_FOR = {"2.0.11": ["greenlet", "tqdm"]}  # 2.0.11 requires mcp 2

INNER_V1 = r'''
import asyncio, inspect, itertools, json, sys
from pathlib import Path

import shortuuid
_ids = itertools.count(1)
shortuuid.uuid = lambda *a, **k: "msg%019d" % next(_ids)  # 22 chars, like a real shortuuid

import agentscope
from agentscope.agent import ReActAgent
from agentscope.formatter import OpenAIMultiAgentFormatter
from agentscope.memory import InMemoryMemory
from agentscope.message import ImageBlock, Msg, TextBlock, ToolResultBlock, ToolUseBlock
from agentscope.model import OpenAIChatModel
from agentscope.pipeline import MsgHub
from agentscope.session import JSONSession
from agentscope.tool import Toolkit, ToolResponse

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
VERSION = agentscope.__version__
PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
         "rkJggg==")
_clock = itertools.count(0)


def ts():
    s = 5 * next(_clock)
    return "2026-02-03 09:%02d:%02d.%03d" % (s // 60, s % 60, (s * 37) % 1000)


def get_weather(city: str) -> ToolResponse:
    """Get the weather forecast of a city.

    Args:
        city (str): The city name.
    """
    raise ConnectionError(f"weather service unreachable for {city}")


def search_trains(origin: str, destination: str) -> ToolResponse:
    """Search trains between two cities.

    Args:
        origin (str): Where the train leaves.
        destination (str): Where the train arrives.
    """
    return ToolResponse(content=[
        TextBlock(type="text", text=f"Nozomi 7: {origin} 08:00 -> {destination} 10:15, 14,170 JPY\n"
                                    f"Hikari 503: {origin} 08:33 -> {destination} 11:11, 13,850 JPY"),
        ImageBlock(type="image", source={"type": "base64", "media_type": "image/png",
                                         "data": PIXEL}),
    ])


def agent(name, sys_prompt, toolkit=None):
    model = OpenAIChatModel(model_name="gpt-4o-mini", api_key="never-used", stream=False)
    return ReActAgent(name=name, sys_prompt=sys_prompt, model=model,
                      formatter=OpenAIMultiAgentFormatter(), toolkit=toolkit or Toolkit(),
                      memory=InMemoryMemory())


toolkit = Toolkit()
toolkit.register_tool_function(get_weather)
toolkit.register_tool_function(search_trains)
planner = agent("Planner", "You are Planner. Split the user's request into tasks for Researcher, "
                           "then write the final plan.")
researcher = agent("Researcher", "You are Researcher. Answer Planner's questions with your tools.",
                   toolkit)
log = []  # every message in the order it happened


async def own(ag, msg, marks=None):
    """A message the agent itself produced (reasoning, tool results): into its memory only."""
    log.append(msg)
    if marks and "marks" in inspect.signature(ag.memory.add).parameters:
        await ag.memory.add(msg, marks=marks)
    else:
        await ag.memory.add(msg)


async def reply(ag, msg):
    """A reply: into the agent's memory, then to the hub's other participants (what __call__ does)."""
    await own(ag, msg)
    await ag._broadcast_to_subscribers(msg)


async def act(ag, call):
    """What ReActAgent._acting does: run the call through the toolkit, record a system Msg."""
    res = Msg("system", [ToolResultBlock(type="tool_result", id=call["id"], name=call["name"],
                                         output=[])], "system", timestamp=ts())
    async for chunk in await ag.toolkit.call_tool_function(call):
        res.content[0]["output"] = chunk.content
    await own(ag, res)


async def main():
    request = Msg("user", [
        TextBlock(type="text", text="Plan a two-day trip from Tokyo to Kyoto next weekend. "
                                    "Here is the temple I most want to see."),
        ImageBlock(type="image", source={"type": "url",
                                         "url": "https://example.com/kinkaku-ji.jpg"}),
    ], "user", timestamp=ts())
    log.append(request)
    async with MsgHub(participants=[planner, researcher], announcement=request):
        await reply(planner, Msg("Planner", [
            {"type": "thinking", "thinking": "I need the weather and the trains before I can plan."},
            TextBlock(type="text", text="Researcher, please check the Kyoto weather for next weekend "
                                        "and the morning trains from Tokyo."),
        ], "assistant", timestamp=ts()))
        calls = [ToolUseBlock(type="tool_use", id="call_weather_1", name="get_weather",
                              input={"city": "Kyoto"}),
                 ToolUseBlock(type="tool_use", id="call_trains_1", name="search_trains",
                              input={"origin": "Tokyo", "destination": "Kyoto"})]
        if VERSION != "1.0.0":
            calls[1]["raw_input"] = '{"origin": "Tokyo", "destination": "Kyoto"}'
        await own(researcher, Msg("Researcher", [
            {"type": "thinking", "thinking": "Two lookups; they are independent, so both at once."},
            TextBlock(type="text", text="Checking the weather and the trains."),
            *calls,
        ], "assistant", timestamp=ts()))
        for call in calls:
            await act(researcher, call)
        if VERSION != "1.0.0":
            await own(researcher, Msg("user", "<system-hint>Answer Planner now; say what you could "
                                              "not find.</system-hint>", "user", timestamp=ts()),
                      marks=["hint"])
        await reply(researcher, Msg("Researcher", [
            TextBlock(type="text", text="The weather service is down, so no forecast. Trains: "
                                        "**Nozomi 7** leaves Tokyo 08:00 and reaches Kyoto 10:15 "
                                        "(14,170 JPY)."),
        ], "assistant", timestamp=ts()))
        await reply(planner, Msg("Planner", [
            TextBlock(type="text", text="Plan: Saturday take Nozomi 7, see Kinkaku-ji after lunch; "
                                        "Sunday Fushimi Inari early. Pack an umbrella: the forecast "
                                        "is unknown."),
        ], "assistant", timestamp=ts(), metadata={"plan_days": 2}))

    sid = "trip-session"
    params = inspect.signature(JSONSession.__init__).parameters
    if "session_id" in params:  # 1.0.0: JSONSession(session_id, save_dir)
        await JSONSession(session_id=sid, save_dir=str(out)).save_session_state(
            planner=planner, researcher=researcher)
    else:
        await JSONSession(save_dir=str(out)).save_session_state(
            sid, planner=planner, researcher=researcher)
    with open(out / "trip.msgs.jsonl", "w", encoding="utf-8") as f:
        for m in log:
            f.write(json.dumps(m.to_dict(), ensure_ascii=False) + "\n")
    print("wrote", sorted(p.name for p in out.iterdir()))


asyncio.run(main())
'''

INNER_V2 = r'''
import itertools, sys
from datetime import datetime, timedelta
from pathlib import Path

import agentscope
from agentscope._utils._common import _generate_timestamp, set_id_factory, set_timestamp_factory

_ids = itertools.count(1)
set_id_factory(lambda: "%032x" % next(_ids))
_t0 = datetime(2026, 3, 4, 14, 0, 0)
_ticks = itertools.count(0)
set_timestamp_factory(lambda: (_t0 + timedelta(seconds=3 * next(_ticks))).isoformat())

from agentscope.message import (AssistantMsg, Base64Source, DataBlock, HintBlock, Msg, TextBlock,
                                ThinkingBlock, ToolCallBlock, ToolResultBlock, URLSource, UserMsg)
from agentscope.message._base import Usage
from agentscope.state import AgentState
from agentscope.types import ErrorInfo

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
         "rkJggg==")


def done(block):
    """Stamp a finished result the way the TOOL_RESULT_END event does."""
    block.finished_at = _generate_timestamp()
    return block


user = UserMsg("user", [TextBlock(text="Fix the failing date test in utils.py and get it reviewed."),
                        DataBlock(source=URLSource(url="https://example.com/ci-failure.png",
                                                   media_type="image/png"), name="ci-failure.png")])
coder = AssistantMsg("Coder", [
    ThinkingBlock(thinking="The test compares a naive datetime with an aware one."),
    TextBlock(text="Let me look at the test first."),
    ToolCallBlock(id="call_read_1", name="Read", input='{"file_path": "tests/test_utils.py"}',
                  state="finished"),
    done(ToolResultBlock(id="call_read_1", name="Read", state="success",
                    output=[TextBlock(text="def test_parse():\n    assert parse('2026-01-01') == "
                                           "datetime(2026, 1, 1, tzinfo=UTC)")])),
    ToolCallBlock(id="call_bash_1", name="Bash", input='{"command": "pytest -q tests/test_utils.py"',
                  state="finished"),
    done(ToolResultBlock(id="call_bash_1", name="Bash", state="error",
                    output="ERROR: the arguments are not valid JSON")),
    ToolCallBlock(id="call_edit_1", name="Edit", input='{"file_path": "utils.py", "old": "naive", '
                                                       '"new": "aware"}', state="finished"),
    done(ToolResultBlock(id="call_edit_1", name="Edit", state="success",
                    output=[TextBlock(text="The file utils.py has been updated."),
                            DataBlock(source=Base64Source(data=PIXEL, media_type="image/png"))])),
    HintBlock(hint="Reviewer is waiting for your patch.", source="system"),
    TextBlock(text="Fixed: `parse` now returns an aware datetime. Reviewer, please have a look."),
], usage=Usage(input_tokens=1830, output_tokens=212))
reviewer = Msg(name="Reviewer", role="assistant", content=[
    ThinkingBlock(thinking="Run the whole suite, not just the one test."),
    ToolCallBlock(id="call_suite_1", name="Bash", input='{"command": "pytest -q"}',
                  state="submitted"),
    ToolResultBlock(id="call_suite_1", name="Bash", state="running",
                    output=[TextBlock(text="........")]),
], finished_reason="error",
               error=ErrorInfo(type="rate_limit", message="429 from the model API; reply stopped"))
context = [user, coder, reviewer]
(out / "coder.agent_state.json").write_text(
    AgentState(session_id="review-1", summary="Earlier: the user asked for a date-parsing fix.",
               context=context).model_dump_json(indent=2), encoding="utf-8")
with open(out / "review.msgs.jsonl", "w", encoding="utf-8") as f:
    for m in context:
        f.write(m.model_dump_json() + "\n")

# A reply rebuilt from its stream of events, as the app's chat service does before it stores it
# (`reply_msg.append_event(event)` for each event it publishes, then `upsert_message`): a `Chart`
# tool streams one PNG in two base64 chunks of the same data block (ToolResponse.append_chunk's
# way). 2.0.10 appends a DataBlock per chunk; 2.0.11 merges the chunks of one block.
import base64
from agentscope.event import (ReplyEndEvent, ReplyStartEvent, TextBlockDeltaEvent,
                              TextBlockEndEvent, TextBlockStartEvent, ToolCallDeltaEvent,
                              ToolCallEndEvent, ToolCallStartEvent, ToolResultDataDeltaEvent,
                              ToolResultEndEvent, ToolResultStartEvent)

png = base64.b64decode(PIXEL)
cut = len(png) // 3 * 2 // 3 * 3  # chunks of whole 3-byte groups: each is base64 on its own
streamed = AssistantMsg("Coder", [])
R, S = streamed.id, "review-1"
emit = streamed.append_event  # each event made when it happens, as the stream goes
emit(ReplyStartEvent(session_id=S, reply_id=R, name="Coder"))
emit(TextBlockStartEvent(reply_id=R, block_id="txt_1"))
emit(TextBlockDeltaEvent(reply_id=R, block_id="txt_1", delta="Here is the coverage chart."))
emit(TextBlockEndEvent(reply_id=R, block_id="txt_1"))
emit(ToolCallStartEvent(reply_id=R, tool_call_id="call_chart_1", tool_call_name="Chart"))
emit(ToolCallDeltaEvent(reply_id=R, tool_call_id="call_chart_1", delta='{"metric": "coverage"}'))
emit(ToolCallEndEvent(reply_id=R, tool_call_id="call_chart_1"))
emit(ToolResultStartEvent(reply_id=R, tool_call_id="call_chart_1", tool_call_name="Chart"))
for chunk in (png[:cut], png[cut:]):
    emit(ToolResultDataDeltaEvent(reply_id=R, tool_call_id="call_chart_1", block_id="img_1",
                                  media_type="image/png", data=base64.b64encode(chunk).decode()))
emit(ToolResultEndEvent(reply_id=R, tool_call_id="call_chart_1", state="success"))
emit(ReplyEndEvent(session_id=S, reply_id=R))
(out / "streamed.msgs.jsonl").write_text(streamed.model_dump_json() + "\n", encoding="utf-8")
print("wrote", sorted(p.name for p in out.iterdir()))
'''


def run(version: str, inner: str, out: Path) -> None:
    target = out / f"golden-py{version}"
    if target.exists():
        shutil.rmtree(target)
    run_with(sys.executable, [f"agentscope=={version}", *EXTRA_FOR.get(version, EXTRA)], inner,
             str(target))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "test_data" / "formats" / "agentscope"
    out.mkdir(parents=True, exist_ok=True)
    for v in V1:
        run(v, INNER_V1, out)
    for v in V2:
        run(v, INNER_V2, out)


if __name__ == "__main__":
    main()
