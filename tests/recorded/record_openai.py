"""Record OpenAI Responses API transcripts with openai-agents + openai against a fake model.

The fake model is an httpx.MockTransport answering POST /v1/responses: it looks at the request's
`input` and answers with Response JSON (or, when `stream` is set, the SSE `response.*` events).
Everything written to disk is written by the SDKs' own objects (`to_input_list()`,
`event.data.model_dump_json()`).
"""
import asyncio, json, sys, time, itertools, os
import httpx
from openai import AsyncOpenAI
from agents import Agent, Runner, function_tool, HostedMCPTool, set_default_openai_client, \
    set_tracing_disabled, set_default_openai_api

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
ids = itertools.count(1)


def nid(p):
    return f"{p}_{next(ids):04d}abcdef"


def usage(i, o):
    return {"input_tokens": i, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": o, "output_tokens_details": {"reasoning_tokens": 12},
            "total_tokens": i + o}


def msg(text):
    return {"type": "message", "id": nid("msg"), "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}


def reasoning(text):
    return {"type": "reasoning", "id": nid("rs"), "summary": [{"type": "summary_text", "text": text}]}


def fcall(name, args):
    return {"type": "function_call", "id": nid("fc"), "call_id": nid("call"), "name": name,
            "arguments": json.dumps(args), "status": "completed"}


def decide(body):
    """The fake model's next output items, from the conversation so far."""
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    outs = [i for i in items if i.get("type") == "function_call_output"]
    appr = [i for i in items if i.get("type") == "mcp_approval_response"]
    user = [i for i in items if i.get("role") == "user"]
    last_user = user[-1]["content"] if user else ""
    if isinstance(last_user, list):
        last_user = " ".join(p.get("text", "") for p in last_user)
    has_mcp = any(t.get("type") == "mcp" for t in body.get("tools") or [])
    if has_mcp:
        if not appr:
            return [
                {"type": "mcp_list_tools", "id": nid("mcpl"), "server_label": "deepwiki",
                 "tools": [{"name": "ask_question", "input_schema": {"type": "object", "properties": {
                     "repoName": {"type": "string"}, "question": {"type": "string"}}},
                     "description": "Ask a question about a GitHub repository",
                     "annotations": {"read_only": True}},
                     {"name": "delete_wiki", "input_schema": {"type": "object"}, "description": "Delete"}]},
                reasoning("The user wants to know about the repo; I need to ask deepwiki. Needs approval."),
                {"type": "mcp_approval_request", "id": nid("mcpr"), "server_label": "deepwiki",
                 "name": "ask_question",
                 "arguments": json.dumps({"repoName": "pallets/flask", "question": "How are blueprints registered?"})},
                {"type": "mcp_approval_request", "id": nid("mcpr"), "server_label": "deepwiki",
                 "name": "delete_wiki", "arguments": json.dumps({"repoName": "pallets/flask"})},
            ]
        ok = [a for a in appr if a.get("approve")]
        req = {i["id"]: i for i in items if i.get("type") == "mcp_approval_request"}
        out = []
        for a in ok:
            r = req.get(a["approval_request_id"], {})
            out.append({"type": "mcp_call", "id": nid("mcp"), "server_label": "deepwiki",
                        "name": r.get("name", "ask_question"), "arguments": r.get("arguments", "{}"),
                        "approval_request_id": a["approval_request_id"], "status": "completed",
                        "output": "Blueprints are registered with `app.register_blueprint(bp, url_prefix=...)`; "
                                  "Flask records deferred functions and runs them on registration.",
                        "error": None})
        out.append({"type": "mcp_call", "id": nid("mcp"), "server_label": "deepwiki", "name": "ask_question",
                    "arguments": json.dumps({"repoName": "pallets/nope", "question": "?"}),
                    "status": "failed", "output": None,
                    "error": {"type": "http_error", "code": 404, "message": "Repository pallets/nope not found"}})
        out.append(msg("Flask registers a blueprint with `app.register_blueprint()`. I did **not** delete the wiki: "
                       "that call was rejected."))
        return out
    if "Triage" in (body.get("instructions") or ""):  # the handoff run's first agent
        return [fcall("transfer_to_janitor", {})]
    if "Janitor" in (body.get("instructions") or ""):
        if not outs or outs[-1]["call_id"] == next((i["call_id"] for i in items if i.get("type") ==
                                                     "function_call" and i["name"].startswith("transfer")), None):
            return [fcall("delete_file", {"path": "notes.txt"}), fcall("delete_file", {"path": "/etc/hosts"})]
        return [msg("I deleted notes.txt; deleting /etc/hosts was not approved.")]
    if not outs:
        return [reasoning("I should look up the weather and read the file <b>first</b>."),
                fcall("get_weather", {"city": "Paris"}),
                fcall("read_file", {"path": "/etc/shadow"}),
                fcall("read_file", {"path": "notes.txt"})]
    if len(outs) == 3 and "again" not in last_user:
        return [msg("It is 21 °C and sunny in Paris. I could not read `/etc/shadow` (permission denied); "
                    "notes.txt says: *buy milk*.")]
    if "again" in last_user and len(outs) == 3:
        return [fcall("get_weather", {"city": "Atlantis"})]
    return [msg("Atlantis is not a real city, so there is no weather for it.")]


def response(body, output, status="completed"):
    return {"id": nid("resp"), "object": "response", "created_at": 1764000000 + next(ids),
            "status": status, "model": body.get("model", "gpt-5-mini"), "output": output,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": body.get("tools") or [],
            "text": {"format": {"type": "text"}}, "usage": usage(800 + 50 * len(body.get("input") or []), 120),
            "error": None, "incomplete_details": None, "instructions": body.get("instructions"),
            "metadata": {}, "temperature": 1.0, "top_p": 1.0, "reasoning": {"effort": "low", "summary": "auto"},
            "store": True, "truncation": "disabled"}


def sse(resp):
    """The event stream the Responses API sends for `resp` (shapes: openai/types/responses/*_event.py)."""
    seq = itertools.count(0)
    ev = []

    def e(t, **kw):
        ev.append({"type": t, "sequence_number": next(seq), **kw})
    shell = dict(resp, status="in_progress", output=[], usage=None)
    e("response.created", response=shell)
    e("response.in_progress", response=shell)
    for oi, item in enumerate(resp["output"]):
        t = item["type"]
        if t == "message":
            e("response.output_item.added", output_index=oi, item=dict(item, status="in_progress", content=[]))
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            e("response.content_part.added", output_index=oi, item_id=item["id"], content_index=0, part=part)
            text = item["content"][0]["text"]
            for k in range(0, len(text), 17):
                e("response.output_text.delta", output_index=oi, item_id=item["id"], content_index=0,
                  delta=text[k:k + 17], logprobs=[])
            e("response.output_text.done", output_index=oi, item_id=item["id"], content_index=0, text=text,
              logprobs=[])
            e("response.content_part.done", output_index=oi, item_id=item["id"], content_index=0,
              part=dict(part, text=text))
        elif t == "reasoning":
            e("response.output_item.added", output_index=oi, item=dict(item, summary=[]))
            text = item["summary"][0]["text"]
            e("response.reasoning_summary_part.added", output_index=oi, item_id=item["id"], summary_index=0,
              part={"type": "summary_text", "text": ""})
            for k in range(0, len(text), 20):
                e("response.reasoning_summary_text.delta", output_index=oi, item_id=item["id"],
                  summary_index=0, delta=text[k:k + 20])
            e("response.reasoning_summary_text.done", output_index=oi, item_id=item["id"], summary_index=0,
              text=text)
            e("response.reasoning_summary_part.done", output_index=oi, item_id=item["id"], summary_index=0,
              part={"type": "summary_text", "text": text})
        elif t == "function_call":
            e("response.output_item.added", output_index=oi, item=dict(item, status="in_progress", arguments=""))
            a = item["arguments"]
            for k in range(0, len(a), 9):
                e("response.function_call_arguments.delta", output_index=oi, item_id=item["id"], delta=a[k:k + 9])
            e("response.function_call_arguments.done", output_index=oi, item_id=item["id"], arguments=a,
              name=item["name"])
        elif t == "mcp_call":
            e("response.output_item.added", output_index=oi,
              item=dict(item, status="in_progress", output=None, error=None, arguments=""))
            e("response.mcp_call_arguments.delta", output_index=oi, item_id=item["id"], delta=item["arguments"])
            e("response.mcp_call_arguments.done", output_index=oi, item_id=item["id"], arguments=item["arguments"])
            e("response.mcp_call.in_progress", output_index=oi, item_id=item["id"])
            e("response.mcp_call.failed" if item["status"] == "failed" else "response.mcp_call.completed",
              output_index=oi, item_id=item["id"])
        elif t == "mcp_list_tools":
            e("response.output_item.added", output_index=oi, item=dict(item, tools=[]))
            e("response.mcp_list_tools.in_progress", output_index=oi, item_id=item["id"])
            e("response.mcp_list_tools.completed", output_index=oi, item_id=item["id"])
        else:
            e("response.output_item.added", output_index=oi, item=item)
        e("response.output_item.done", output_index=oi, item=item)
    e("response.completed", response=resp)
    return "".join(f"event: {x['type']}\ndata: {json.dumps(x)}\n\n" for x in ev)


def handler(request: httpx.Request):
    body = json.loads(request.content)
    resp = response(body, decide(body))
    if body.get("stream"):
        return httpx.Response(200, text=sse(resp), headers={"content-type": "text/event-stream"})
    return httpx.Response(200, json=resp)


client = AsyncOpenAI(api_key="sk-fake", base_url="http://fake.local/v1",
                     http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
set_default_openai_client(client, use_for_tracing=False)
set_default_openai_api("responses")
set_tracing_disabled(True)


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    if city == "Atlantis":
        raise ValueError(f"unknown city {city!r}")
    return json.dumps({"city": city, "temp_c": 21, "sky": "sunny"})


@function_tool
def read_file(path: str) -> str:
    """Read a text file."""
    if path.startswith("/etc"):
        raise PermissionError(f"[Errno 13] Permission denied: '{path}'")
    return "buy milk\n<script>alert(1)</script>\n"


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file (asks the user first)."""
    return f"deleted {path}"


def approve(req):
    ok = req.data.name == "ask_question"
    return {"approve": ok, **({} if ok else {"reason": "deleting is not allowed"})}


async def main():
    agent = Agent(name="Assistant", instructions="You are a helpful assistant. Use tools.",
                  model="gpt-5-mini", tools=[get_weather, read_file])
    r = await Runner.run(agent, "What's the weather in Paris, and what do /etc/shadow and notes.txt say?")
    items = r.to_input_list()
    r2 = await Runner.run(agent, items + [{"role": "user", "content": "And again for Atlantis?"}])
    with open(f"{OUT}/agents-function-tools.json", "w") as f:
        json.dump(r2.to_input_list(), f, indent=2, ensure_ascii=False)

    mcp_agent = Agent(name="Researcher", instructions="Answer with deepwiki.", model="gpt-5-mini",
                      tools=[HostedMCPTool(tool_config={"type": "mcp", "server_label": "deepwiki",
                                                        "server_url": "https://mcp.deepwiki.com/mcp",
                                                        "require_approval": "always"},
                                           on_approval_request=approve)])
    r3 = await Runner.run(mcp_agent, "How does Flask register blueprints? Also delete the wiki.")
    with open(f"{OUT}/agents-mcp-approval.json", "w") as f:
        json.dump(r3.to_input_list(), f, indent=2, ensure_ascii=False)

    # streaming: the raw `response.*` events, one per line, as people dump them
    with open(f"{OUT}/stream-events.jsonl", "w") as f:
        s = Runner.run_streamed(agent, "What's the weather in Paris, and what do /etc/shadow and notes.txt say?")
        async for ev in s.stream_events():
            if ev.type == "raw_response_event":
                f.write(ev.data.model_dump_json() + "\n")
    with open(f"{OUT}/stream-events-mcp.jsonl", "w") as f:
        s = Runner.run_streamed(mcp_agent, "How does Flask register blueprints? Also delete the wiki.")
        async for ev in s.stream_events():
            if ev.type == "raw_response_event":
                f.write(ev.data.model_dump_json() + "\n")

    # the raw events plus the tool outputs the raw stream lacks (the run's `tool_output` items, as
    # the model gets them: `to_input_item()`)
    with open(f"{OUT}/stream-events-items.jsonl", "w") as f:
        s = Runner.run_streamed(agent, "What's the weather in Paris, and what do /etc/shadow and notes.txt say?")
        async for ev in s.stream_events():
            if ev.type == "raw_response_event":
                f.write(ev.data.model_dump_json() + "\n")
            elif ev.type == "run_item_stream_event" and ev.name == "tool_output":
                f.write(json.dumps(ev.item.to_input_item(), ensure_ascii=False) + "\n")
    # a handoff, then a tool that needs approval: the run stops with interruptions, the app approves
    # one call and rejects the other (the SDK's default rejection text), and the run resumes
    janitor = Agent(name="Janitor", instructions="You are the Janitor. Delete what is asked.",
                    model="gpt-5-mini", tools=[delete_file])
    triage = Agent(name="Triage", instructions="You are Triage. Hand off file work.", model="gpt-5-mini",
                   handoffs=[janitor])
    r4 = await Runner.run(triage, "Please delete notes.txt and /etc/hosts.")
    state = r4.to_state()
    for item in r4.interruptions:
        if "/etc" in item.arguments:
            state.reject(item)
        else:
            state.approve(item)
    r5 = await Runner.run(triage if r4.last_agent is None else r4.last_agent, state)
    with open(f"{OUT}/agents-handoff-approval.json", "w") as f:
        json.dump(r5.to_input_list(), f, indent=2, ensure_ascii=False)
    # a run stopped by max_turns after the model asked for tools: the model never gets their outputs
    with open(f"{OUT}/stream-events-max-turns.jsonl", "w") as f:
        s = Runner.run_streamed(agent, "What's the weather in Paris, and what do /etc/shadow and notes.txt say?",
                                max_turns=1)
        try:
            async for ev in s.stream_events():
                if ev.type == "raw_response_event":
                    f.write(ev.data.model_dump_json() + "\n")
        except Exception as e:  # MaxTurnsExceeded
            print("run stopped:", type(e).__name__, e)


asyncio.run(main())
