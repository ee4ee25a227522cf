"""Record a LangChain tool loop run by langchain-anthropic's real `ChatAnthropic` against a fake
Anthropic Messages API (a local HTTP server answering POST /v1/messages with scripted Message JSON:
thinking + text + two parallel tool_use blocks, then a final answer), written with LangChain's own
`messages_to_dict`. ChatAnthropic keeps the API's content blocks (thinking with its signature,
tool_use) in the AIMessage's `content` beside the `tool_calls` it extracts from them.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage, messages_to_dict
from langchain_core.tools import ToolException, tool

OUT = sys.argv[1]
TURNS = [
    {"content": [{"type": "thinking", "thinking": "Weather first, then the file.", "signature": "c2lnbmF0dXJl"},
                 {"type": "text", "text": "Let me look."},
                 {"type": "tool_use", "id": "toolu_w1", "name": "get_weather", "input": {"city": "Paris"}},
                 {"type": "tool_use", "id": "toolu_r1", "name": "read_file", "input": {"path": "/etc/shadow"}}],
     "stop_reason": "tool_use"},
    {"content": [{"type": "text", "text": "Paris: 21 °C. `/etc/shadow` is not readable."}], "stop_reason": "end_turn"},
]


class Fake(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        turn = TURNS[min(sum(1 for m in body["messages"] if m["role"] == "assistant"), len(TURNS) - 1)]
        data = json.dumps({"id": "msg_%d" % len(body["messages"]), "type": "message", "role": "assistant",
                           "model": body["model"], "stop_sequence": None,
                           "usage": {"input_tokens": 900, "output_tokens": 70}, **turn}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
threading.Thread(target=server.serve_forever, daemon=True).start()


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return json.dumps({"city": city, "temp_c": 21})


@tool
def read_file(path: str) -> str:
    """Read a text file."""
    raise ToolException(f"[Errno 13] Permission denied: '{path}'")


for t in (get_weather, read_file):
    t.handle_tool_error = True
TOOLS = {t.name: t for t in (get_weather, read_file)}
model = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-fake", max_retries=0,
                      base_url=f"http://127.0.0.1:{server.server_port}").bind_tools(list(TOOLS.values()))
messages = [HumanMessage("What's the weather in Paris, and what does /etc/shadow say?")]
while True:
    reply = model.invoke(messages)
    messages.append(reply)
    if not reply.tool_calls:
        break
    for call in reply.tool_calls:
        messages.append(TOOLS[call["name"]].invoke(call))
with open(f"{OUT}/langchain-anthropic-messages-to-dict.json", "w") as f:
    json.dump(messages_to_dict(messages), f, indent=2, ensure_ascii=False)
server.shutdown()
