"""Plain message lists kept the way the official SDKs hand them back (anthropic 2.13.0 Messages API
and openai 3.57.0 chat completions tool loops against a fake model), and a LangChain history as
langchain-core 1.8.4 converts it to OpenAI messages and as its own serialisations write it
(tests/recorded/README.md)."""

import pytest

import json

from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.timeline import load_events

from conftest import ROOT

REC = ROOT / "tests" / "recorded" / "plain-sdk-lists"


def read(name: str, fmt: str, folder=REC):
    """The recorded list, its index and every event of it, after checking it is read as `fmt`."""
    path = folder / name
    assert detect.detect_file(path).format == fmt
    idx = SessionIndex(path).build()
    return json.loads(path.read_text()), idx, load_events(idx, "main", 0, len(idx.threads["main"]))


def test_anthropic_tool_loop():
    msgs, idx, evs = read("anthropic-messages.json", "anthropic-messages")
    assert "unparsed" not in idx.threads["main"].kinds and not idx.calls.orphans
    results = [b for m in msgs for b in m["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert {r["tool_use_id"]: idx.calls.calls[r["tool_use_id"]].status for r in results} == {
        r["tool_use_id"]: "error" if r["is_error"] else "completed" for r in results}
    thinking = [b for e in evs for b in e.blocks if b.kind == "thinking"]
    assert [t.redacted for t in thinking] == [False, True]
    assert thinking[0].text == msgs[1]["content"][0]["thinking"]
    assert evs[-1].text() == msgs[-1]["content"][-1]["text"]


def test_openai_chat_tool_loop():
    msgs, idx, evs = read("openai-chat-messages.json", "openai-chat")
    assert [e.role for e in evs] == [m["role"] for m in msgs]
    calls = [c["id"] for m in msgs for c in m.get("tool_calls") or []]
    assert sorted(idx.calls.calls) == sorted(calls) and not idx.calls.orphans
    assert all(idx.calls.calls[c].status == "completed" for c in calls)  # chat lists carry no error flag
    assert idx.summary.title == msgs[1]["content"]


def test_langchain_converted_history():
    """`convert_to_openai_messages` keeps LangChain's reasoning block in the assistant's content:
    thinking, not a data card. It drops a ToolMessage's `status`, so a failed tool reads completed."""
    msgs, idx, evs = read("langchain-openai-messages.json", "openai-chat",
                          ROOT / "tests" / "recorded" / "langchain-core-1.8.4")
    assert [e.role for e in evs] == [m["role"] for m in msgs]
    calls = [c["id"] for m in msgs for c in m.get("tool_calls") or []]
    assert sorted(idx.calls.calls) == sorted(calls) and not idx.calls.orphans and len(calls) == 4
    reasoning = [p["reasoning"] for m in msgs if isinstance(m.get("content"), list)
                 for p in m["content"] if p.get("type") == "reasoning"]
    assert reasoning and [b.text for e in evs for b in e.blocks if b.kind == "thinking"] == reasoning
    assert not any(b.kind == "data" for e in evs for b in e.blocks)
    assert evs[2].text() == "Let me look."


@pytest.mark.parametrize("name", ["langchain-messages-to-dict.json", "langchain-dumpd.json"])
def test_langchain_own_serialisations(name):
    """LangChain's `messages_to_dict` and `dumpd` keep each ToolMessage's `status`: the two tools
    that raised (`handle_tool_error`, status "error") read failed, the others completed; roles,
    calls, thinking, model and usage read as in the converted list."""
    folder = ROOT / "tests" / "recorded" / "langchain-core-1.8.4"
    msgs, idx, evs = read(name, "openai-chat", folder)
    fields = [m.get("data") or m.get("kwargs") for m in msgs]
    status = {f["tool_call_id"]: f["status"] for f in fields if f["type"] == "tool"}
    assert sorted(status.values()) == ["error", "error", "success", "success"]
    assert {c: idx.calls.calls[c].status for c in status} == {
        c: "error" if s == "error" else "completed" for c, s in status.items()}
    assert not idx.calls.orphans and "unparsed" not in idx.threads["main"].kinds
    assert [e.role for e in evs] == ["system", "user", "assistant", "tool", "tool", "tool",
                                     "assistant", "tool", "assistant"]
    assert [b.text for e in evs for b in e.blocks if b.kind == "thinking"] == [
        "Weather first, then the files."]
    assert evs[2].text() == "Let me look." and evs[2].model == "gpt-5-mini"
    assert evs[2].usage["input_tokens"] == 800
    assert idx.summary.title == fields[1]["content"]


def test_langchain_anthropic_blocks_in_an_ai_message():
    """langchain-anthropic keeps the API's blocks in the AIMessage's content beside the tool_calls
    it takes from them: the thinking reads as thinking, each call is shown once, the ToolMessage
    of the tool that raised reads failed."""
    folder = ROOT / "tests" / "recorded" / "langchain-core-1.8.4"
    msgs, idx, evs = read("langchain-anthropic-messages-to-dict.json", "openai-chat", folder)
    ai = msgs[1]["data"]
    assert [b["type"] for b in ai["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert [(b.kind, getattr(b, "text", None)) for b in evs[1].blocks] == [
        ("thinking", "Weather first, then the file."), ("text", "Let me look."),
        ("tool_use", None), ("tool_use", None)]
    assert [b.id for b in evs[1].blocks if b.kind == "tool_use"] == [c["id"] for c in ai["tool_calls"]]
    assert {c: idx.calls.calls[c].status for c in idx.calls.calls} == {
        m["data"]["tool_call_id"]: "error" if m["data"]["status"] == "error" else "completed"
        for m in msgs if m["type"] == "tool"}
    assert evs[1].model == "claude-sonnet-4-5"
