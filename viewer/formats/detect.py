"""Which format a transcript file is, decided from its content and the folder around it.

File names are never trusted on their own (every legion and corpus session is `messages.jsonl`). The
first records are read and every adapter scores them; the folder layout (a `subagents/` folder,
a legion `state.json`) only breaks ties. A file may be JSONL (one record per line) or one JSON
document (a list of messages, or an object holding one); both are recognised here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .. import reader
from . import ADAPTERS, FALLBACK, hook

HEAD_BYTES = 256 << 10
HEAD_RECORDS = 50
DOCUMENT_KEYS = ("messages", "history", "conversation", "trajectory", "memory", "content", "data",
                 "items", "events")


@dataclass(slots=True)
class Detected:
    format: str
    mode: str  # "jsonl" | "document"
    reason: str = ""


def detect_records(records: list, folder: Path | None = None) -> tuple[str, int]:
    """The best-scoring adapter for a list of records (and its score)."""
    best, best_score = FALLBACK.NAME, 0
    for adapter in ADAPTERS:
        score = sum(hook(adapter, "sniff", r, default=0) or 0 for r in records)
        if folder is not None and score:
            score += _layout_bonus(adapter.NAME, folder)
        if score > best_score:
            best, best_score = adapter.NAME, score
    return best, best_score


def _layout_bonus(name: str, folder: Path) -> int:
    if name == "claude-code" and (folder / "subagents").is_dir():
        return 1
    if name == "legion" and (folder / "state.json").is_file():
        return 1
    return 0


def document_records(doc: Any) -> list[tuple[str, Any]]:
    """The message records inside a document that no adapter claims specially."""
    if isinstance(doc, list):
        return [(f"[{i}]", r) for i, r in enumerate(doc)]
    if isinstance(doc, dict):
        for key in DOCUMENT_KEYS:
            if isinstance(doc.get(key), list):
                return [(f"{key}[{i}]", r) for i, r in enumerate(doc[key])]
    return []


def records_for(adapter, doc: Any) -> list[tuple[str, Any]] | None:
    """The records an adapter reads from a document: its own `records` if it has one."""
    if hasattr(adapter, "records"):
        return hook(adapter, "records", doc)
    return document_records(doc) or None


def detect_document(doc: Any, folder: Path | None = None) -> str:
    best, best_score = FALLBACK.NAME, 0
    for adapter in ADAPTERS:
        recs = records_for(adapter, doc)
        if not recs:
            continue
        score = sum(hook(adapter, "sniff", r, default=0) or 0 for _, r in recs[:HEAD_RECORDS])
        score += hook(adapter, "document_bonus", doc, default=0) or 0
        if folder is not None and score:
            score += _layout_bonus(adapter.NAME, folder)
        if score > best_score:
            best, best_score = adapter.NAME, score
    return best


def detect_file(path: str | Path) -> Detected:
    """Detect the format of one file. Raises OSError when it cannot be read."""
    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
        size = f.seek(0, 2)
    if not head.strip():
        return Detected(FALLBACK.NAME, "jsonl", "empty file")
    whole = size <= HEAD_BYTES
    lines = [ln for ln in head.split(b"\n") if ln.strip()]
    if not whole:
        lines = lines[:-1]  # the head may cut the last line
    first = reader.decode(lines[0]) if lines else reader.BadLine("first line longer than the head")
    single = whole and len(lines) == 1
    if head.lstrip()[:1] in (b"{", b"[") and (isinstance(first, (reader.BadLine, list)) or single):
        # a pretty-printed or one-line document rather than one record per line
        doc = read_document(path)
        if not isinstance(doc, reader.BadLine):
            name = detect_document(doc, path.parent)
            if not single or isinstance(doc, list) or name != FALLBACK.NAME:
                return Detected(name, "document")
    records = [r for r in (reader.decode(ln) for ln in lines[:HEAD_RECORDS])
               if not isinstance(r, reader.BadLine)]
    name, _ = detect_records(records, path.parent)
    return Detected(name, "jsonl")


def read_document(path: str | Path) -> Any:
    """A whole-file JSON document; huge ones are skimmed (long strings cut) rather than loaded.

    A format that keeps one session in a folder of files (Wolo: `session.json` + `messages/*.json`)
    offers `folder_document(path)`: the folder read as one document, or None when `path` is not
    such a session's main file. Discovery, the index and the timeline all read documents here."""
    for adapter in ADAPTERS:
        doc = hook(adapter, "folder_document", Path(path))
        if doc is not None:
            return doc
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size > reader.HUGE_LINE:
            return reader.skim(f, 0, size)
        f.seek(0)
        data = f.read()
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        return reader.BadLine(f"malformed JSON document: {e}")
