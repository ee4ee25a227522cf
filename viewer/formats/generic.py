"""The fallback for a file no adapter recognises: every record becomes a generic JSON card,
so an unknown format is still shown in full (and reported as `unknown`)."""

from __future__ import annotations

from typing import Any

from ..model import Event, Ref
from .common import generic_event

NAME = "unknown"
MODE = "jsonl"


def sniff(rec: Any) -> int:
    return 0


def event(rec: Any, ref: Ref) -> Event:
    return generic_event(rec, ref, NAME)


def title_of(ev: Event) -> str | None:
    return None


def records(doc: Any):
    """A document nobody recognises is shown as one record (or one per list item)."""
    if isinstance(doc, list):
        return [(f"[{i}]", r) for i, r in enumerate(doc)]
    return [("$", doc)]
