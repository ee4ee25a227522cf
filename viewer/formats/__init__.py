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
                     (a meta's `toolUseId` names the call that spawned it; its `spawned_as`, the
                     name that call's `Event.spawns` gives it when the call's output has no id of it)
  companion_folders(path)  the folders a new companion file would change (their times tell a
                     refresh whether to list them again); without it, they are listed every time
  FOLDS_LINES        True when a JSONL file of the format is read whole as one document (its later
                     lines rewrite earlier records: Gemini CLI's recordings)
  is_companion(path) whether a file (path as a string) belongs to another session and is
                     never listed alone
  claims_file(path, head)  whether a `.json` file is the format's, told from where it sits and its
                     first bytes (a session kept as a folder of files: detection need not read it all)
  skip_folders(names)  of a folder's entry names, the folders discovery must not walk into (a
                     session's own message and part folders)
  EVENTS_FILE        the name of the JSONL file that holds a session kept as a folder (Copilot
                     CLI's `events.jsonl`): listed under its folder's name
  session_info(main)  what the files beside a session say of it: {"agent", "finished", "model",
                     "parent_path", …} (legion's state.json, Factory Droid's settings)
  sidecars(main)     the files session_info reads: a change to one refreshes the index
  ROW_STORE          a module for sessions that are rows of a database file (OpenCode's
                     `opencode_db`, Goose's `goose_db`, AgentScope Studio's `studio_db`; all read
                     through `rowdb`): is_store(name),
                     list_sessions(db) for discovery, store_of(path) for the watcher, is_row(path) /
                     row_bytes(path) for `files.open_file`, shadowed(paths) for the files it was
                     imported from
  folder_identity(path)  (size, mtime_ns, inode) standing for a session kept in a folder of files,
                     when `path` is one's main file: what tells the index and the live tail it changed

Adapters are pure: no Flask, no file access beyond their own companions.
"""

from __future__ import annotations

import logging
from types import ModuleType

from .. import compressed, files, reader

from . import claude_code, generic, legion
from . import marsys, wolo
from . import agentpress, anthropic_messages, openai_chat
from . import agentscope, agentscope_studio, codex, copilot_cli, factory_droid
from . import gemini, gemini_cli, goose, qwen_code
from . import openhands, openhands_v1, swe_agent
from . import opencode

# Order breaks ties in detection: specific formats first, generic message lists last.
ADAPTERS: list[ModuleType] = [legion, qwen_code, claude_code, gemini_cli, marsys, opencode, wolo,
                               agentpress, agentscope_studio, agentscope, codex, copilot_cli, factory_droid,
                               goose, swe_agent,
                               openhands_v1, openhands, openai_chat,
                               anthropic_messages, gemini]
FALLBACK = generic
BY_NAME = {a.NAME: a for a in [*ADAPTERS, FALLBACK]}
log = logging.getLogger(__name__)
CLAIMING = [a for a in ADAPTERS if hasattr(a, "claims_file")]
SKIPPING = [a.skip_folders for a in ADAPTERS if hasattr(a, "skip_folders")]
# JSONL file names that stand for the folder they are in (a session kept as a folder of files, its
# events in this one): listed under the folder's name
FOLDER_FILES = frozenset(a.EVENTS_FILE for a in ADAPTERS if hasattr(a, "EVENTS_FILE"))
# databases whose rows are sessions: discovery lists them, `files.open_file` reads a row's path
ROW_STORES = [a.ROW_STORE for a in ADAPTERS if hasattr(a, "ROW_STORE")]
files.ROW_STORES[:] = ROW_STORES
reader.FOLDER_IDENTITIES[:] = [compressed.identity] + [
    a.folder_identity for a in ADAPTERS if hasattr(a, "folder_identity")]


def row_store_named(name: str) -> ModuleType | None:
    """The ROW_STORE whose database a file of this name is (its rows are sessions), else None."""
    return next((rows for rows in ROW_STORES if rows.is_store(name)), None)


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
