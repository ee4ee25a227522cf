"""Source formats: one module per format, each turning raw records into canonical Events.

An adapter module has:
  NAME               the format's name, as `check --json` reports it
  MODE               "jsonl" (one record per line) or "document" (one JSON value per file)
  sniff(rec) -> int  how sure it is that one record is its own (0 = not mine, 3 = unmistakable)
  event(rec, ref)    the record as an Event; never raises, unknown shapes become generic cards
  title_of(ev)       the session title if this event is the first real user prompt, else None
and may have:
  records(doc)       for document formats: the message records inside a parsed document
  companions(path)   sub-agent / companion files of a session: [(thread id, path, meta)]
  companion_folders(path)  the folders a new companion file would change (their times tell a
                     refresh whether to list them again); without it, they are listed every time
  FOLDS_LINES        True when a JSONL file of the format is read whole as one document (its later
                     lines rewrite earlier records: Gemini CLI's recordings)
  is_companion(path) whether a file (path as a string) belongs to another session and is
                     never listed alone

Adapters are pure: no Flask, no file access beyond their own companions.
"""

from __future__ import annotations

import logging
from types import ModuleType

from . import claude_code, generic, legion
from . import marsys, wolo
from . import agentpress, anthropic_messages, openai_chat
from . import agentscope, codex
from . import gemini, gemini_cli, qwen_code
from . import openhands, swe_agent

# Order breaks ties in detection: specific formats first, generic message lists last.
ADAPTERS: list[ModuleType] = [legion, qwen_code, claude_code, gemini_cli, marsys, wolo, agentpress,
                               agentscope, codex, swe_agent, openhands, openai_chat, anthropic_messages, gemini]
FALLBACK = generic
BY_NAME = {a.NAME: a for a in [*ADAPTERS, FALLBACK]}
log = logging.getLogger(__name__)


def get(name: str) -> ModuleType:
    return BY_NAME.get(name, FALLBACK)


def hook(adapter: ModuleType, name: str, *args, default=None):
    """Call one of an adapter's functions on untrusted data: a bug in an adapter (a record shaped
    like nothing it expected) costs that one answer, never the session."""
    fn = getattr(adapter, name, None)
    if fn is None:
        return default
    try:
        return fn(*args)
    except Exception:
        log.exception("%s.%s failed", adapter.NAME, name)
        return default
