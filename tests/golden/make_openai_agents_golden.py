"""Write openai-agents golden files with the real SDK: `python tests/golden/make_openai_agents_golden.py [OUT]`.

Installs openai-agents <VERSION> into a throwaway venv (throwaway.run_with) and runs a two-agent
conversation with the SDK's own Runner: Triage says a word and hands off to Refunds
(`transfer_to_refunds`), Refunds calls its `lookup_order` function tool (run by the SDK) and answers.
No model is called: each agent's model is a `Model` subclass returning canned `ModelResponse`s
(ids pinned; the items carry no times). OUT defaults to
test_data/formats/openai-chat/agents-sdk-<VERSION>-handoff/.

Written as a user of the SDK saves a run:
  to_input_list.json    `result.to_input_list()`, json.dump
  to_input_list.jsonl   the same items one per line
  session_items.jsonl   the run kept in the SDK's `SQLiteSession`, exported with
                        `await session.get_items()` one item per line (the same items: checked)
  run_state.json        `result.to_state().to_json()`, json.dump: the RunState an app keeps to
                        resume a run (after a tool approval, say); its items name their agents
  run_state_awaiting_approval.json
                        the same for a run stopped by a `needs_approval` tool (Desk hands off
                        to Cashier, whose `issue_refund` waits for the app's approval)
The first three name no agent but the handoff's target (`{"assistant": "Refunds"}`): only the
run's items (`new_items`, kept in the RunState) say that Triage spoke before it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from throwaway import run_with

VERSION = "0.24.0"
ROOT = Path(__file__).resolve().parents[2]

INNER = r'''
import asyncio, json, sys, sqlite3
from pathlib import Path
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from agents import Agent, Runner, function_tool, SQLiteSession, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage

set_tracing_disabled(True)
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def say(mid, text):
    return ResponseOutputMessage(id=mid, type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def call(fid, cid, name, args):
    return ResponseFunctionToolCall(id=fid, call_id=cid, type="function_call", name=name,
                                    arguments=json.dumps(args), status="completed")


class Scripted(Model):
    """The model's answers, in order: a canned ModelResponse per turn (no API is called)."""
    def __init__(self, turns):
        self.turns = list(turns)

    async def get_response(self, *a, **k):
        n = len(self.turns)
        output, (i, o) = self.turns.pop(0)
        return ModelResponse(output=output, usage=Usage(requests=1, input_tokens=i, output_tokens=o,
                                                        total_tokens=i + o), response_id=f"resp_{n:03d}")

    def stream_response(self, *a, **k):
        raise NotImplementedError


@function_tool
def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return json.dumps({"order_id": order_id, "item": "kettle", "status": "delivered", "paid": 39.9})


refunds = Agent(name="Refunds", instructions="You handle refunds.", tools=[lookup_order],
                model=Scripted([
                    ([call("fc_0003", "call_0003", "lookup_order", {"order_id": "A17"})], (210, 18)),
                    ([say("msg_0004", "Order A17 (a kettle, 39.90) was delivered; I have filed a full "
                                      "refund. You will see it in 3–5 days.")], (260, 31)),
                ]))
triage = Agent(name="Triage", instructions="Route the customer.", handoffs=[refunds],
               model=Scripted([
                   ([say("msg_0001", "Sorry to hear that — I'll pass you to our refunds team."),
                     call("fc_0002", "call_0002", "transfer_to_refunds", {})], (120, 22)),
               ]))


async def main():
    session = SQLiteSession("cust-42", str(out / "agents.sqlite"))
    result = await Runner.run(triage, "My kettle (order A17) arrived broken. Can I get a refund?",
                              session=session)
    items = result.to_input_list()
    (out / "to_input_list.json").write_text(json.dumps(items, indent=2, ensure_ascii=False))
    with open(out / "to_input_list.jsonl", "w") as f:
        for item in items:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    # the run's state, as an app keeps it to resume the run later (RunState.to_json): the one
    # saved form whose items name their agents
    state = result.to_state().to_json()
    (out / "run_state.json").write_text(json.dumps(state, indent=2, ensure_ascii=False))
    stored = await session.get_items()  # the SDK's session store, exported as a user would
    with open(out / "session_items.jsonl", "w") as f:
        for item in stored:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    session.close()
    (out / "agents.sqlite").unlink()
    # what names the agents: only the run's items (`new_items[i].agent`), which neither
    # `to_input_list()` nor the session keeps
    assert [getattr(i, "agent").name for i in result.new_items] == [
        "Triage", "Triage", "Triage", "Refunds", "Refunds", "Refunds"], result.new_items
    assert stored == items, "the session holds what to_input_list() gives"



@function_tool(needs_approval=True)
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (the app approves each refund)."""
    return f"refunded {amount} for {order_id}"


cashier = Agent(name="Cashier", instructions="You pay refunds.", tools=[issue_refund],
                model=Scripted([
                    ([call("fc_0012", "call_0012", "issue_refund", {"order_id": "A17", "amount": 39.9})],
                     (150, 20)),
                ]))
desk = Agent(name="Desk", instructions="Route the customer.", handoffs=[cashier],
             model=Scripted([([call("fc_0011", "call_0011", "transfer_to_cashier", {})], (90, 12))]))


async def interrupted():
    """A run stopped by a tool that needs approval, kept to resume once the app has decided."""
    result = await Runner.run(desk, "Please refund order A17.")
    assert [i.raw_item.call_id for i in result.interruptions] == ["call_0012"]
    state = result.to_state().to_json()
    (out / "run_state_awaiting_approval.json").write_text(json.dumps(state, indent=2, ensure_ascii=False))


asyncio.run(main())
asyncio.run(interrupted())
'''

if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        ROOT / "test_data" / "formats" / "openai-chat" / f"agents-sdk-{VERSION}-handoff"
    run_with(sys.executable, [f"openai-agents=={VERSION}"], INNER, str(out.resolve()))
