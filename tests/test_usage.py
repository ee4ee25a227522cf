"""Usage and cost: totals checked against sums computed straight from the corpus files, one model
call per API response, prices from the price table (and none for a model it does not know)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price

from viewer import usage
from viewer.index import SessionIndex, summary_dump, summary_load
from viewer.store import Store
from conftest import CORPUS, corpus_sessions


def _session(path: Path) -> SessionIndex:
    st = Store([path])
    (ref,) = st.sessions()
    return st.index(ref.key)


def _claude_code_sums(folder: Path) -> dict[str, list[int]]:
    """model → [input, output, cache_read, cache_write, calls], read straight from every file of a
    Claude Code session: one call per message id per file, holding its last line's usage."""
    per_message: dict[tuple, tuple] = {}
    for f in sorted(folder.rglob("*.jsonl")):
        for n, line in enumerate(f.read_text().splitlines()):
            rec = json.loads(line)
            msg = rec.get("message")
            if rec.get("type") != "assistant" or not isinstance(msg, dict) or not msg.get("usage"):
                continue
            u = msg["usage"]
            counts = (u.get("input_tokens", 0), u.get("output_tokens", 0),
                      u.get("cache_read_input_tokens", 0), u.get("cache_creation_input_tokens", 0))
            if not any(counts) or msg.get("model") == "<synthetic>":
                continue
            per_message[(f.name, msg.get("id") or n)] = (msg["model"], counts)
    out: dict[str, list[int]] = {}
    for model, counts in per_message.values():
        m = out.setdefault(model, [0, 0, 0, 0, 0])
        for i, v in enumerate(counts):
            m[i] += v
        m[4] += 1
    return out


@pytest.mark.parametrize("folder", corpus_sessions("claude-code"), ids=lambda p: p.name)
def test_claude_code_usage_matches_the_files(folder):
    idx = _session(folder)
    report = usage.report(idx)
    want = _claude_code_sums(folder)
    got = {m: [v["input"], v["output"], v["cache_read"], v["cache_write"], v["calls"]]
           for m, v in report["models"].items()}
    assert got == want
    assert report["calls"] == sum(v[4] for v in want.values())
    # every model here is in the price table: each has a cost, and the session's is their sum
    assert all(v["cost_usd"] and v["cost_usd"] > 0 for v in report["models"].values())
    assert report["cost_usd"] == pytest.approx(sum(v["cost_usd"] for v in report["models"].values()), abs=1e-5)
    assert report["unpriced"] == []


def test_subagents_are_counted_apart_and_in_the_total():
    idx = _session(CORPUS / "claude-code" / "worktrees-subagents")
    report = usage.report(idx)
    threads = report["threads"]
    assert len(threads) == 7  # main + 6 sub-agents
    assert sum(t["calls"] for t in threads.values()) == report["calls"]
    assert sum(t["cost_usd"] for t in threads.values()) == pytest.approx(report["cost_usd"], abs=1e-5)
    assert all(t["calls"] for name, t in threads.items() if name != "main")


def test_repeated_usage_lines_of_one_message_are_one_call(tmp_path):
    """Claude Code writes a line per content block, each repeating the message's usage (output
    growing as it streamed): one call, counted with its final output."""
    lines = []
    for i, (block, out) in enumerate([({"type": "thinking", "thinking": "hm", "signature": "s"}, 3),
                                      ({"type": "text", "text": "Let me look."}, 40),
                                      ({"type": "tool_use", "id": "t1", "name": "Bash",
                                        "input": {"command": "ls"}}, 95)]):
        lines.append({"type": "assistant", "uuid": f"a{i}", "sessionId": "s",
                      "timestamp": f"2026-01-05T10:00:0{i}Z",
                      "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                                  "content": [block],
                                  "usage": {"input_tokens": 10, "output_tokens": out,
                                            "cache_read_input_tokens": 1000,
                                            "cache_creation_input_tokens": 200}}})
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = usage.report(_session(f))
    m = report["models"]["claude-sonnet-4-5"]
    assert (m["input"], m["output"], m["cache_read"], m["cache_write"], m["calls"]) == (10, 95, 1000, 200, 1)
    when = datetime(2026, 1, 5, 10, 30, tzinfo=timezone.utc)
    want = calc_price(Usage(input_tokens=1210, output_tokens=95, cache_read_tokens=1000,
                            cache_write_tokens=200), "claude-sonnet-4-5",
                      genai_request_timestamp=when).total_price
    assert m["cost_usd"] == pytest.approx(float(want), abs=1e-6)


def test_long_context_calls_are_priced_at_their_own_tier(tmp_path):
    """A call above the model's long-context threshold costs more per token: the session's cost is
    the sum of each call's price, not the price of the summed tokens."""
    sizes = [50_000, 260_000, 120_000]
    lines = [{"type": "assistant", "uuid": f"a{i}", "sessionId": "s",
              "timestamp": f"2026-01-05T10:00:0{i}Z",
              "message": {"id": f"msg_{i}", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "text", "text": "ok"}],
                          "usage": {"input_tokens": n, "output_tokens": 1000}}}
             for i, n in enumerate(sizes)]
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert usage.PRICES.tiers("claude-sonnet-4-5"), "the price table has a long-context tier"
    when = datetime(2026, 1, 5, 10, 30, tzinfo=timezone.utc)
    want = sum(float(calc_price(Usage(input_tokens=n, output_tokens=1000), "claude-sonnet-4-5",
                                genai_request_timestamp=when).total_price) for n in sizes)
    flat = float(calc_price(Usage(input_tokens=sum(sizes) / 3, output_tokens=1000),
                            "claude-sonnet-4-5", genai_request_timestamp=when).total_price) * 3
    got = usage.report(_session(f))["cost_usd"]
    assert got == pytest.approx(want, abs=1e-6)
    assert got != pytest.approx(flat, abs=1e-6)


def test_unknown_models_have_no_price(tmp_path):
    lines = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": "hello", "model": "acme-frontier-9000",
              "usage": {"prompt_tokens": 120, "completion_tokens": 30}},
             {"role": "assistant", "content": "again", "model": "gpt-4o",
              "usage": {"prompt_tokens": 200, "completion_tokens": 50,
                        "prompt_tokens_details": {"cached_tokens": 100}}}]
    f = tmp_path / "messages.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = _session(f)
    report = usage.report(idx)
    assert report["models"]["acme-frontier-9000"]["cost_usd"] is None
    assert report["models"]["acme-frontier-9000"]["input"] == 120
    gpt = report["models"]["gpt-4o"]
    assert (gpt["input"], gpt["cache_read"], gpt["output"]) == (100, 100, 50)
    assert gpt["cost_usd"] > 0
    assert report["unpriced"] == ["acme-frontier-9000"]
    assert report["cost_usd"] == pytest.approx(gpt["cost_usd"])  # the known part, flagged partial
    assert idx.summary.usage["unpriced"] == ["acme-frontier-9000"]


@pytest.mark.parametrize("folder", corpus_sessions("openai-chat"), ids=lambda p: p.name)
def test_openai_usage_matches_the_files(folder):
    (doc,) = [p for p in folder.iterdir() if p.suffix == ".json"]
    data = json.loads(doc.read_text())
    msgs = data.get("messages", []) if isinstance(data, dict) else data
    sums = [0, 0, 0, 0]
    paid = 0.0
    for m in msgs:
        extra = m.get("extra") or {}
        u = m.get("usage") or (extra.get("response") or {}).get("usage")
        if not u:
            continue
        cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        sums[0] += u["prompt_tokens"] - cached
        sums[1] += u["completion_tokens"]
        sums[2] += cached
        sums[3] += 1
        paid += extra.get("cost") or 0
    report = usage.report(_session(doc))
    got = [sum(v[k] for v in report["models"].values()) for k in ("input", "output", "cache_read", "calls")]
    assert got == sums
    stats = (data.get("info") or {}).get("model_stats") if isinstance(data, dict) else None
    if stats:  # mini-swe-agent's own count of API calls and their cost
        assert report["calls"] == stats["api_calls"]
        assert report["source_cost_usd"] == pytest.approx(stats["instance_cost"], abs=1e-6)
    else:
        assert report["calls"] == 0 and report["cost_usd"] is None


@pytest.mark.parametrize("folder", corpus_sessions("legion"), ids=lambda p: p.name)
def test_legion_turn_results_are_summed(folder):
    """The Agent SDK's ResultMessage carries a turn's totals: the cost the source recorded is
    their sum (these hand-written fixtures give each turn's own, equal figures; a real recording's
    running total is read as what each turn added: test_format_legion); tokens come from them
    only when the calls recorded none."""
    paid = 0.0
    for line in (folder / "messages.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("_type") == "ResultMessage":
            paid += rec["data"].get("total_cost_usd") or 0
    report = usage.report(_session(folder / "messages.jsonl"))
    assert paid > 0
    assert report["source_cost_usd"] == pytest.approx(paid)
    assert report["calls"] == 0  # no call recorded usage of its own


def test_legion_turn_tokens_are_counted_when_calls_have_none(tmp_path):
    recs = [{"type": "user", "content": "go", "timestamp": "2026-01-05T10:00:00Z", "session_id": "s"},
            {"_type": "AssistantMessage", "timestamp": 1767607201.0, "session_id": "s",
             "data": {"content": [{"text": "done"}], "model": "claude-sonnet-4-5"}},
            {"_type": "ResultMessage", "timestamp": 1767607202.0, "session_id": "s",
             "data": {"subtype": "success", "num_turns": 2, "total_cost_usd": 0.5,
                      "usage": {"input_tokens": 30, "output_tokens": 700,
                                "cache_read_input_tokens": 9000, "cache_creation_input_tokens": 400}}},
            {"_type": "ResultMessage", "timestamp": 1767607302.0, "session_id": "s",
             "data": {"subtype": "success", "num_turns": 1, "total_cost_usd": 0.25,
                      "usage": {"input_tokens": 10, "output_tokens": 100}}}]
    f = tmp_path / "messages.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in recs))
    report = usage.report(_session(f))
    m = report["models"]["claude-sonnet-4-5"]
    assert (m["input"], m["output"], m["cache_read"], m["cache_write"]) == (40, 800, 9000, 400)
    assert report["turns_without_calls"] == 2 and report["calls"] == 0
    assert report["source_cost_usd"] == pytest.approx(0.75)
    assert report["cost_usd"] > 0


def test_tool_time_per_tool():
    idx = _session(CORPUS / "claude-code" / "me-next-image-errors")
    report = usage.report(idx)
    calls = list(idx.calls.calls.values())
    for name, t in report["tools"].items():
        mine = [c for c in calls if c.name == name]
        ds = sorted(c.duration for c in mine if c.duration is not None)
        assert t["count"] == len(mine)
        assert t["errors"] == sum(1 for c in mine if c.status == "error")
        assert t["total_s"] == pytest.approx(sum(ds), abs=1e-3)
        if ds:
            assert t["max_s"] == pytest.approx(ds[-1], abs=1e-3)
            assert ds[0] - 1e-3 <= t["p50_s"] <= ds[-1] + 1e-3
    assert report["tool_time_s"] == pytest.approx(sum(t["total_s"] for t in report["tools"].values()))
    assert sum(t["errors"] for t in report["tools"].values()) == 10


def test_the_session_json_has_the_usage_shape(client):
    body = client.get("/s/claude-project~3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.json").get_json()
    u = body["usage"]
    assert {"models", "cost_usd", "tool_time_s", "tools"} <= set(u)
    for m in u["models"].values():
        assert set(m) == {"input", "output", "cache_read", "cache_write", "calls", "cost_usd"}
    for t in u["tools"].values():
        assert {"count", "errors", "total_s"} <= set(t)


def test_a_summary_priced_with_another_table_is_priced_again():
    idx = _session(CORPUS / "claude-code" / "claude-p-subagent")
    d = summary_dump(idx.summary)
    d["usage"] = {**d["usage"], "prices": "0.0.1", "cost": 123.0}
    again = summary_load(d)
    assert again.usage["prices"] == usage.PRICES.version
    assert again.cost == pytest.approx(idx.summary.cost)


def test_usage_survives_the_cache(tmp_path):
    from viewer.cache import IndexCache

    folder = CORPUS / "claude-code" / "coderabbit-thinking"
    first = Store([folder], IndexCache(tmp_path / "c"))
    (ref,) = first.sessions()
    idx = first.index(ref.key)
    first.flush()
    second = Store([folder], IndexCache(tmp_path / "c"))
    again = second.index(ref.key)
    assert usage.report(again) == usage.report(idx)
    assert usage.timeline(again) == usage.timeline(idx)
    assert usage.turns(again) == usage.turns(idx)


def test_usage_follows_appends(tmp_path):
    f = tmp_path / "s.jsonl"

    def line(i, out):
        return json.dumps({"type": "assistant", "uuid": f"a{i}", "sessionId": "s",
                           "timestamp": f"2026-01-05T10:00:{i:02d}Z",
                           "message": {"id": "msg_same" if i < 2 else f"msg_{i}", "role": "assistant",
                                       "model": "claude-haiku-4-5", "content": [{"type": "text", "text": "x"}],
                                       "usage": {"input_tokens": 5, "output_tokens": out}}}) + "\n"

    f.write_text(line(0, 10))
    idx = SessionIndex(f).build()
    assert idx.summary.usage["calls"] == 1
    with open(f, "a") as fh:
        fh.write(line(1, 50))  # the same message, streamed further: still one call
    idx.refresh()
    assert idx.summary.usage["calls"] == 1
    assert idx.summary.usage["models"]["claude-haiku-4-5"][1] == 50
    with open(f, "a") as fh:
        fh.write(line(2, 7))
    idx.refresh()
    assert idx.summary.usage["calls"] == 2
    assert idx.summary.usage["tokens"] == 5 + 50 + 5 + 7


def test_token_shapes_of_every_source():
    t = usage.tokens_of
    assert t({"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 5,
              "cache_creation_input_tokens": 6}) == (3, 4, 5, 6)
    assert t({"input_tokens": 3, "output_tokens": 4,
              "cache_creation": {"ephemeral_5m_input_tokens": 2, "ephemeral_1h_input_tokens": 1}}) == (3, 4, 0, 3)
    assert t({"prompt_tokens": 100, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 60}}) == (40, 9, 60, 0)
    assert t({"input_tokens": 100, "output_tokens": 9, "input_tokens_details": {"cached_tokens": 60}}) == (40, 9, 60, 0)
    assert t({"promptTokenCount": 50, "candidatesTokenCount": 7, "cachedContentTokenCount": 20,
              "thoughtsTokenCount": 3}) == (30, 10, 20, 0)
    assert t({"prompt": 10, "completion": 595, "cached": 9573}) == (10, 595, 9573, 0)
    assert t({"total_tokens": 12}) is None
    assert t({"input_tokens": "lots", "output_tokens": -4, "cache_read_input_tokens": 1e300}) == (0, 0, 0, 0)
    assert t("nope") is None
    # Anthropic's shape is read without the general path when every count is a plain int: the
    # edges still take it (no cache write, a bool, a negative or huge count, OpenAI's details)
    assert t({"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 5,
              "cache_creation_input_tokens": 0, "cache_creation": {"e": 2}}) == (3, 4, 5, 2)
    assert t({"input_tokens": True, "output_tokens": 4, "cache_read_input_tokens": 5,
              "cache_creation_input_tokens": 6}) == (0, 4, 5, 6)
    assert t({"input_tokens": 3, "output_tokens": -4, "cache_read_input_tokens": 1 << 60,
              "cache_creation_input_tokens": 6}) == (3, 0, 0, 6)
    assert t({"input_tokens": 100, "output_tokens": 9, "cache_read_input_tokens": 5,
              "cache_creation_input_tokens": 6, "input_tokens_details": {"cached_tokens": 60}}) == (40, 9, 60, 0)


def test_a_refresh_prices_only_the_buckets_its_lines_changed(tmp_path, monkeypatch):
    """A live session of many hours: each line written is priced on its own, not the whole session
    again (the price table takes a fraction of a millisecond per bucket, a 1 GB session has
    hundreds of buckets); a session loaded from the cache prices nothing it had priced before.
    The costs stay those a new build of the grown file finds."""
    from viewer.cache import IndexCache

    f = tmp_path / "s.jsonl"

    def line(hour, out):
        return json.dumps({"type": "assistant", "uuid": f"a{hour}-{out}", "sessionId": "s",
                           "timestamp": f"2026-01-0{1 + hour // 24}T{hour % 24:02d}:00:00Z",
                           "message": {"id": f"msg_{hour}", "role": "assistant",
                                       "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "x"}],
                                       "usage": {"input_tokens": 100 + hour, "output_tokens": out}}}) + "\n"

    f.write_text("".join(line(h, 10) for h in range(40)))
    folder = tmp_path
    first = Store([folder], IndexCache(tmp_path / "c"))
    (ref,) = first.sessions()
    idx = first.index(ref.key)
    assert len(idx.summary.usage["buckets"]) == 40
    first.flush()
    priced = []
    real = usage.PRICES.cost
    monkeypatch.setattr(usage.PRICES, "cost", lambda *a: priced.append(a) or real(*a))

    with open(f, "a") as fh:
        fh.write(line(40, 10))  # a new call in a new hour: one new bucket
    idx.refresh()
    assert len(priced) == 1
    with open(f, "a") as fh:
        fh.write(line(40, 90))  # the same message streamed further: its bucket changed
    idx.refresh()
    assert len(priced) == 2
    fresh = SessionIndex(f).build()
    assert idx.summary.usage == fresh.summary.usage
    assert idx.summary.cost > 0

    del priced[:]
    again = Store([folder], IndexCache(tmp_path / "c")).index(ref.key)  # from the cache, then grown
    assert again.summary.usage["calls"] == 41
    assert again.summary.usage == fresh.summary.usage
    assert len(priced) <= 1  # (the bucket the cache did not have yet, at most)
