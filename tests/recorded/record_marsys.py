"""Record a MARSYS run: two real Agents (Coordinator invokes Researcher, which calls two tools, one
failing) coordinated by MARSYS's own auto_run / Orchestra, the model being a scripted fake
OpenAI-compatible chat-completions server in this process. Files written by MARSYS itself:
Agent.save_state (MemoryManager.save_to_file) for each agent.
Run in a Python 3.12 venv with `marsys==0.2.1`: python record_marsys.py OUT_DIR
"""
import asyncio, itertools, json, os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
ids = itertools.count(1)


def reply(msgs):
    system = " ".join(str(m.get("content")) for m in msgs if m.get("role") == "system")
    after = 0
    for m in msgs:
        after = 0 if m.get("role") == "user" else after + (m.get("role") == "assistant")
    tools_seen = sum(1 for m in msgs if m.get("role") == "tool")
    if "ROLE-RES" in system:
        if tools_seen == 0:
            return {"content": "I'll look up the weather and trains.", "tool_calls": [
                {"id": f"call_w{next(ids)}", "type": "function",
                 "function": {"name": "get_weather", "arguments": json.dumps({"city": "Lyon"})}},
                {"id": f"call_t{next(ids)}", "type": "function",
                 "function": {"name": "search_trains", "arguments": json.dumps({"origin": "Paris", "destination": "Lyon"})}}]}
        return {"content": json.dumps({"next_action": "final_response", "action_input": {
            "response": "Weather lookup failed (service down). Trains: TGV 6203 at 09:04, 39 EUR."}})}
    if after == 0 and "Weather lookup failed" not in json.dumps(msgs):
        return {"content": "```json\n" + json.dumps({"thought": "Ask the Researcher.", "next_action": "invoke_agent",
                                                      "action_input": [{"agent_name": "Researcher",
                                                                        "request": "Find weather in Lyon and trains from Paris."}]}) + "\n```"}
    return {"content": json.dumps({"next_action": "final_response", "action_input": {
        "response": "Take **TGV 6203** at 09:04 (39 EUR). No forecast was available."}})}


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        with open(os.path.join(OUT, "..", "marsys-requests.jsonl"), "a") as f:
            f.write(json.dumps(body) + "\n")
        msg = dict(reply(body.get("messages") or []), role="assistant")
        finish = "tool_calls" if msg.get("tool_calls") else "stop"
        data = json.dumps({"id": f"chatcmpl-{next(ids)}", "object": "chat.completion", "created": 1764000000,
                           "model": body.get("model"), "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                           "usage": {"prompt_tokens": 700, "completion_tokens": 40, "total_tokens": 740}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{server.server_port}/v1"

from marsys.agents import Agent  # noqa: E402
from marsys.models import ModelConfig  # noqa: E402


def get_weather(city: str) -> str:
    """Get the weather of a city.

    Args:
        city: the city
    """
    raise ConnectionError(f"weather service unreachable for {city}")


def search_trains(origin: str, destination: str) -> str:
    """Search trains.

    Args:
        origin: from
        destination: to
    """
    return f"TGV 6201 {origin} 07:04 -> {destination} 08:52, 49 EUR\nTGV 6203 09:04 -> 10:52, 39 EUR"


async def main():
    cfg = ModelConfig(type="api", provider="openrouter", name="gpt-4.1-mini", base_url=BASE, api_key="sk-fake",
                      max_tokens=1000)
    researcher = Agent(model_config=cfg, name="Researcher", goal="Look things up",
                       instruction="ROLE-RES You research with tools.",
                       tools={"get_weather": get_weather, "search_trains": search_trains})
    coord = Agent(model_config=cfg, name="Coordinator", goal="Plan trips",
                  instruction="ROLE-COORD You plan trips and delegate research.", allowed_peers=["Researcher"])
    result = await coord.auto_run("Plan a day trip from Paris to Lyon tomorrow.", max_steps=12, verbosity=0)
    print("RESULT", str(result)[:300])
    coord.save_state(os.path.join(OUT, "coordinator.memory.json"))
    researcher.save_state(os.path.join(OUT, "researcher.memory.json"))


asyncio.run(main())
