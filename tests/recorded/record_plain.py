"""Record plain message lists the way people keep them with the official SDKs: a tool loop with
anthropic (Messages API) and with openai (chat completions), each against an httpx.MockTransport
fake model. The list holds what the SDK returned: `response.content` blocks / `message` objects as
`model_dump()`, and the tool results the loop appended.
Usage: python record_plain.py OUT_DIR
"""
import itertools, json, os, sys

import anthropic
import httpx
import httpx2
import openai

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
n = itertools.count(1)


def tool_run(name, args):
    if name == "read_file" and args["path"].startswith("/etc"):
        return "PermissionError: [Errno 13] Permission denied: '/etc/shadow'", True
    if name == "read_file":
        return "buy milk\n<img src=x onerror=alert(1)>", False
    return json.dumps({"city": args.get("city"), "temp_c": 21}), False


# --- Anthropic -------------------------------------------------------------------------------
def anthropic_handler(request):
    body = json.loads(request.content)
    results = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    if not results:
        content = [{"type": "thinking", "thinking": "Read both files, then answer.", "signature": "EqQBCkYIARgC"},
                   {"type": "text", "text": "Reading the two files."},
                   {"type": "tool_use", "id": f"toolu_{next(n):04d}", "name": "read_file", "input": {"path": "notes.txt"}},
                   {"type": "tool_use", "id": f"toolu_{next(n):04d}", "name": "read_file", "input": {"path": "/etc/shadow"}}]
        stop = "tool_use"
    else:
        content = [{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
                   {"type": "text", "text": "notes.txt says **buy milk**; `/etc/shadow` is not readable."}]
        stop = "end_turn"
    return httpx2.Response(200, json={
        "id": f"msg_{next(n):04d}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 500, "output_tokens": 80, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 120}})


client = anthropic.Anthropic(api_key="sk-ant-fake", base_url="http://fake.local",
                             http_client=httpx2.Client(transport=httpx2.MockTransport(anthropic_handler)))
tools = [{"name": "read_file", "description": "Read a file", "input_schema": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]
messages = [{"role": "user", "content": "What do notes.txt and /etc/shadow say?"}]
while True:
    resp = client.messages.create(model="claude-sonnet-4-5-20250929", max_tokens=1024, tools=tools,
                                  messages=messages, thinking={"type": "enabled", "budget_tokens": 1024})
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in resp.content]})
    if resp.stop_reason != "tool_use":
        break
    out = []
    for b in resp.content:
        if b.type == "tool_use":
            text, err = tool_run(b.name, b.input)
            out.append({"type": "tool_result", "tool_use_id": b.id, "content": text, "is_error": err})
    messages.append({"role": "user", "content": out})
with open(f"{OUT}/anthropic-messages.json", "w") as f:
    json.dump(messages, f, indent=2, ensure_ascii=False)


# --- OpenAI chat completions -----------------------------------------------------------------
def openai_handler(request):
    body = json.loads(request.content)
    done = [m for m in body["messages"] if m["role"] == "tool"]
    if not done:
        msg = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{next(n)}", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": f"call_{next(n)}", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "/etc/shadow"}'}}]}
        fin = "tool_calls"
    else:
        msg = {"role": "assistant", "content": "Paris: 21 °C. `/etc/shadow` could not be read.", "refusal": None,
               "annotations": []}
        fin = "stop"
    return httpx.Response(200, json={"id": f"chatcmpl-{next(n)}", "object": "chat.completion", "created": 1764000000,
                                     "model": "gpt-4.1-mini-2025-04-14", "choices": [{"index": 0, "message": msg, "finish_reason": fin}],
                                     "usage": {"prompt_tokens": 300, "completion_tokens": 30, "total_tokens": 330}})


oc = openai.OpenAI(api_key="sk-fake", base_url="http://fake.local/v1",
                   http_client=httpx.Client(transport=httpx.MockTransport(openai_handler)))
otools = [{"type": "function", "function": {"name": n_, "parameters": {"type": "object", "properties": {}}}}
          for n_ in ("get_weather", "read_file")]
messages = [{"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Weather in Paris, and what is in /etc/shadow?"}]
while True:
    r = oc.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=otools)
    m = r.choices[0].message
    messages.append(m.model_dump(exclude_none=True))
    if not m.tool_calls:
        break
    for tc in m.tool_calls:
        text, err = tool_run(tc.function.name, json.loads(tc.function.arguments))
        messages.append({"role": "tool", "tool_call_id": tc.id, "content": text})
with open(f"{OUT}/openai-chat-messages.json", "w") as f:
    json.dump(messages, f, indent=2, ensure_ascii=False)
