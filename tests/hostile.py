"""Hostile sessions in every format, for the standing security suite.

Real records of each format (the shared corpus and the fixtures) with their strings swapped for
payloads: markup and script in every shape, links and images pointing off the host, ANSI and
terminal escapes, template syntax, class names. Each payload carries a marker (`zqx…`) so a test can
tell whether a value from the file reached an attribute it must not reach. Every record comes twice:
with its structure kept (types, roles, ids: the format's adapter reads it as usual, so the payloads
land in real messages, tool calls and results) and with every string swapped (what an adapter makes
of records it half-recognises)."""

from __future__ import annotations

import json
import random
from pathlib import Path

EVIL = "evil.example"
PAYLOADS = [
    "zqx1 is-hidden target",
    "<script>alert('zqx2')</script>",
    "<img src=x onerror=alert('zqx3')>",
    "javascript:alert('zqx4')",
    f"![zqx5](http://{EVIL}/zqx5.png)",
    "[click zqx6](javascript:alert('zqx6'))",
    "\"'><svg onload=alert('zqx7')>",
    "</pre></textarea><style>*{display:none}</style>zqx8",
    f"\x1b[31mzqx9\x1b[0m \x1b]8;;http://{EVIL}/\x07link\x1b]8;;\x07",
    "{{ 7*7 }} {% raw %}zqx10",
    f"http://{EVIL}/zqx11.png",
    f"<a href=http://{EVIL}/ onclick=alert('zqx12')>zqx12</a>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgnenF4MTMnKTwvc2NyaXB0Pg==",
    f"<iframe src=http://{EVIL}/zqx14></iframe>",
    f"<link rel=stylesheet href=http://{EVIL}/zqx15.css>",
    "<details open ontoggle=alert('zqx16')>x</details>",
    f"<object data=http://{EVIL}/zqx17></object><embed src=http://{EVIL}/zqx17>",
    "zqx18\" class=\"pwned",
    f"<form action=http://{EVIL}/zqx19><button>go</button></form>",
    f"<meta http-equiv=refresh content='0;url=http://{EVIL}/zqx20'>",
]
# keys whose values say what a record is: kept in the structural variant
STRUCTURE = {"type", "role", "id", "uuid", "parentUuid", "tool_use_id", "tool_call_id", "call_id",
             "sessionId", "session_id", "message_id", "_type", "status", "is_llm_message",
             "media_type", "isSidechain", "agentId", "finish_reason", "subtype",
             "source", "action", "observation",  # (an OpenHands event: who, and which action)
             "kind"}  # (an OpenHands V1 event's class)


def swap(value, counter, keep_structure: bool, key: str | None = None):
    if isinstance(value, str):
        if keep_structure and key in STRUCTURE:
            return value
        counter[0] += 1
        return PAYLOADS[counter[0] % len(PAYLOADS)]
    if isinstance(value, dict):
        return {k: swap(v, counter, keep_structure, k) for k, v in value.items()}
    if isinstance(value, list):
        return [swap(v, counter, keep_structure, key) for v in value]
    return value


def hostile_records(records: list, seed: int = 0, n: int = 12) -> tuple[list, list]:
    """(records with their structure kept, the same with every string swapped)."""
    r = random.Random(seed)
    picked = r.sample(records, min(n, len(records)))
    counter = [seed]
    return [swap(rec, counter, True) for rec in picked], [swap(rec, counter, False) for rec in picked]


DOCUMENT_FORMATS = {"openai-chat", "anthropic-messages"}  # message lists: written as a .json list


def write_hostile_sessions(root: Path, samples: dict[str, list]) -> dict[str, str]:
    """One session per format under root (a folder holding messages.jsonl, or a .json list for the
    formats that are lists of messages); returns format → the session's key."""
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for i, fmt in enumerate(sorted(samples)):
        name = f"hostile-{fmt}"
        kept, swapped = hostile_records(samples[fmt], seed=i)
        if fmt in DOCUMENT_FORMATS:  # a list of messages: the swapped ones make a list of their own
            (root / f"{name}.json").write_text(json.dumps(kept, default=str))
            (root / f"{name}-swapped.json").write_text(json.dumps(swapped, default=str))
        else:
            recs = kept + swapped
            (root / name).mkdir()
            (root / name / "messages.jsonl").write_text(
                "".join(json.dumps(rec, default=str) + "\n" for rec in recs))
        out[fmt] = name
    return out
