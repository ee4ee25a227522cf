"""Record a LangChain tool loop as the plain OpenAI chat list LangChain itself converts it to.

langchain-core's own objects only: a scripted `FakeMessagesListChatModel` (no model API) answers with
AIMessages holding reasoning and text content blocks and parallel `tool_calls`; the real `@tool`
functions run them (`handle_tool_error = True`: a tool raising `ToolException` gives LangChain's error ToolMessage,
`status="error"`); the history is written with `convert_to_openai_messages(messages)` + `json.dump`,
the documented way to hand a LangChain conversation to anything that reads OpenAI messages. The
same history is also written in LangChain's own serialisations, which keep each ToolMessage's
`status`: `messages_to_dict(messages)` ({type, data}) and `[dumpd(m) for m in messages]` (the
`{lc, type: constructor, id, kwargs}` form LangGraph checkpoints and LangSmith runs hold).
"""
import json
import sys

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, convert_to_openai_messages, \
    messages_to_dict
from langchain_core.tools import ToolException, tool

OUT = sys.argv[1]


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    if city == "Atlantis":
        raise ToolException(f"unknown city {city!r}")
    return json.dumps({"city": city, "temp_c": 21, "sky": "sunny"})


@tool
def read_file(path: str) -> str:
    """Read a text file."""
    if path.startswith("/etc"):
        raise ToolException(f"[Errno 13] Permission denied: '{path}'")
    return "buy milk\n<script>alert(1)</script>\n"


for t in (get_weather, read_file):
    t.handle_tool_error = True
TOOLS = {t.name: t for t in (get_weather, read_file)}
model = FakeMessagesListChatModel(responses=[
    AIMessage(content=[{"type": "reasoning", "reasoning": "Weather first, then the files."},
                       {"type": "text", "text": "Let me look."}],
              tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_w1"},
                          {"name": "read_file", "args": {"path": "/etc/shadow"}, "id": "call_r1"},
                          {"name": "read_file", "args": {"path": "notes.txt"}, "id": "call_r2"}],
              response_metadata={"model_name": "gpt-5-mini"},
              usage_metadata={"input_tokens": 800, "output_tokens": 60, "total_tokens": 860}),
    AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_w2"}]),
    AIMessage(content="Paris: 21 °C and sunny. `/etc/shadow` is not readable; notes.txt says *buy milk*. "
                      "Atlantis has no weather."),
])

messages = [SystemMessage("You are a helpful assistant. Use tools."),
            HumanMessage("What's the weather in Paris and Atlantis, and what do /etc/shadow and notes.txt say?")]
while True:
    reply = model.invoke(messages)
    messages.append(reply)
    if not reply.tool_calls:
        break
    for call in reply.tool_calls:
        messages.append(TOOLS[call["name"]].invoke(call))

with open(f"{OUT}/langchain-openai-messages.json", "w") as f:
    json.dump(convert_to_openai_messages(messages), f, indent=2, ensure_ascii=False)
with open(f"{OUT}/langchain-messages-to-dict.json", "w") as f:
    json.dump(messages_to_dict(messages), f, indent=2, ensure_ascii=False)
with open(f"{OUT}/langchain-dumpd.json", "w") as f:
    json.dump([dumpd(m) for m in messages], f, indent=2, ensure_ascii=False)
print([(type(m).__name__, getattr(m, "status", None)) for m in messages])
