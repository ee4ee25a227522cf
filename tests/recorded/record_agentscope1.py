"""Record an AgentScope 1.x session: two real ReActAgents in a MsgHub, driven by a fake chat model.

The agents' own reply loop (reasoning → acting → memory) writes every message; JSONSession writes
the file. Run in a venv with `agentscope==1.0.21`: python record_agentscope1.py OUT_DIR
"""
import asyncio, json, os, sys

from agentscope.agent import ReActAgent, UserAgent
from agentscope.formatter import OpenAIMultiAgentFormatter, OpenAIChatFormatter
from agentscope.memory import InMemoryMemory
from agentscope.message import Msg, TextBlock, ThinkingBlock, ToolUseBlock
from agentscope.model import ChatModelBase, ChatResponse
from agentscope.model._model_usage import ChatUsage
from agentscope.pipeline import MsgHub
from agentscope.session import JSONSession
from agentscope.tool import Toolkit, ToolResponse

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)


class FakeModel(ChatModelBase):
    """Answers from a script: one list of turns per agent, each turn picked by how many tool
    results the agent has seen so far."""

    def __init__(self, script):
        super().__init__("fake-qwen-max", stream=False)
        self.script = script
        self.n = 0

    async def __call__(self, messages, tools=None, tool_choice=None, structured_model=None, **kw):
        turn = self.script[min(self.n, len(self.script) - 1)]
        self.n += 1
        return ChatResponse(content=turn, usage=ChatUsage(input_tokens=300 + 40 * self.n,
                                                          output_tokens=60, time=0.5))


def get_weather(city: str) -> ToolResponse:
    """Get the weather of a city.

    Args:
        city (str): the city
    """
    raise ConnectionError(f"weather service unreachable for {city}")


def search_trains(origin: str, destination: str) -> ToolResponse:
    """Search trains.

    Args:
        origin (str): from
        destination (str): to
    """
    return ToolResponse(content=[TextBlock(type="text", text=f"TGV 6201 {origin} 07:04 → {destination} 08:52, 49 €\n"
                                                             "<b>TGV 6203</b> 09:04 → 10:52, 39 €")])


def tool(i, name, inp):
    return ToolUseBlock(type="tool_use", id=f"call_{name}_{i}", name=name, input=inp)


async def main():
    tk = Toolkit()
    tk.register_tool_function(get_weather)
    tk.register_tool_function(search_trains)
    researcher = ReActAgent(
        name="Researcher", sys_prompt="You look things up.", toolkit=tk, memory=InMemoryMemory(),
        formatter=OpenAIMultiAgentFormatter(),
        model=FakeModel([
            [ThinkingBlock(type="thinking", thinking="Planner needs weather and trains for Lyon."),
             tool(1, "get_weather", {"city": "Lyon"}), tool(2, "search_trains", {"origin": "Paris", "destination": "Lyon"})],
            [TextBlock(type="text", text="Weather lookup **failed**; trains: TGV 6201 at 07:04 (49 €) or TGV 6203 at 09:04 (39 €).")],
        ]))
    planner = ReActAgent(
        name="Planner", sys_prompt="You plan trips with the Researcher.", memory=InMemoryMemory(),
        toolkit=Toolkit(), formatter=OpenAIMultiAgentFormatter(),
        model=FakeModel([
            [TextBlock(type="text", text="Researcher, please find the weather in Lyon and trains from Paris.")],
            [ThinkingBlock(type="thinking", thinking="I have the options; recommend the cheaper one."),
             TextBlock(type="text", text="Take **TGV 6203** at 09:04 (39 €). No forecast was available.")],
        ]))
    user = Msg("user", "Plan a day trip from Paris to Lyon tomorrow.", "user")
    async with MsgHub(participants=[planner, researcher], announcement=user):
        await planner()
        await researcher()
        await planner()
    session = JSONSession(save_dir=OUT)
    await session.save_session_state("trip", planner=planner, researcher=researcher)

    # a single agent talking with a real UserAgent whose input is scripted
    friday_tk = Toolkit()
    friday_tk.register_tool_function(search_trains)
    friday = ReActAgent(
        name="Friday", sys_prompt="You are Friday, a helpful assistant.", toolkit=friday_tk,
        memory=InMemoryMemory(), formatter=OpenAIChatFormatter(),
        model=FakeModel([
            [TextBlock(type="text", text="Let me search."), tool(3, "search_trains", {"origin": "Lyon", "destination": "Nice"})],
            [TextBlock(type="text", text="TGV 6201 leaves at 07:04.")],
            [tool(4, "no_such_tool", {"x": 1})],
            [TextBlock(type="text", text="Sorry, that tool does not exist.")],
        ]))
    answers = iter(["Trains from Lyon to Nice?", "Now book it."])

    from agentscope.agent import UserInputBase, UserInputData

    class ScriptedInput(UserInputBase):
        async def __call__(self, agent_id, agent_name, *a, **kw):
            return UserInputData(blocks_input=[TextBlock(type="text", text=next(answers))], structured_input=None)

    alice = UserAgent(name="Alice")
    alice.override_instance_input_method(ScriptedInput())
    msg = None
    for _ in range(2):
        msg = await alice(msg)
        msg = await friday(msg)
    await session.save_session_state("friday", friday=friday)


asyncio.run(main())
