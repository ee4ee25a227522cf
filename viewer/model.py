"""The canonical model every source format is mapped onto.

One model for all formats, so the timeline, the tool-call state map, the index and the templates
never look at a source format again. Adapters in `viewer.formats` build these objects record by
record; nothing from the file is dropped: what no block captures stays in `Event.meta`, and the raw
view always shows the source record itself.

Blocks are small slotted dataclasses with a class-level `kind` that templates dispatch on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, ClassVar

# Roles an event may carry. Sources with other roles keep theirs (shown as-is); these are the ones
# the templates style specially.
ROLES = ("user", "assistant", "system", "tool", "status", "error", "agent_call", "agent_response")

# Tool-call states, as seed 004 defines them.
PENDING, EXECUTING, COMPLETED, ERROR = "pending", "executing", "completed", "error"
STATES = (PENDING, EXECUTING, COMPLETED, ERROR)
# States a source names beyond those four, shown on top of them (each with its own badge) and
# counted under their own names, never as errors: a call awaiting the user's permission is pending;
# a call the user denied, a call (or reply) the user interrupted and a call cancelled before it ran
# have ended without a result of their own (their state is error, as their source's flag says).
AWAITING, DENIED, INTERRUPTED, CANCELLED = "awaiting_permission", "denied", "interrupted", "cancelled"
# who refused a call that never ran, where the source says it was not the person: a permission rule
# or mode in the settings, a PreToolUse hook, an automatic classifier (Claude Code's auto mode)
DENIED_BY_SETTINGS, BLOCKED_BY_HOOK, DENIED_BY_AUTO = "denied_by_settings", "blocked_by_hook", "denied_by_auto_mode"
# a call whose result only says it started work in the background (Claude Code's background Agent
# or Workflow): it is executing until the source reports the work ended
BACKGROUND = "background"
# a background call whose work evidently ended (its sub-agent's own transcript says it finished) though
# no notification of it reached the session (the session ended, or was killed, before one came): it
# is completed, and shown so with that said; a notification that comes later names its real end
UNREPORTED = "finished_unreported"
# the same for work whose own files say it failed (a Workflow run's file says "failed"): an error,
# shown so with no notification said, and counted among the session's errors
FAILED_UNREPORTED = "failed_unreported"
# ...or say it was stopped (a Workflow run's file says "killed"): it did not fail, someone ended it
# (its state is error, as an interrupted call's; not counted as a failure)
STOPPED_UNREPORTED = "stopped_unreported"
# the named states of a call whose result only said its work started: the source's later word on
# that work (a task notification) names its end
RUNNING_ON = (BACKGROUND, UNREPORTED, FAILED_UNREPORTED, STOPPED_UNREPORTED)
REFUSED = (DENIED, DENIED_BY_SETTINGS, BLOCKED_BY_HOOK, DENIED_BY_AUTO)
NAMED_STATES = (AWAITING, *REFUSED, INTERRUPTED, CANCELLED, BACKGROUND, UNREPORTED, FAILED_UNREPORTED,
                STOPPED_UNREPORTED)
ENDED = (*REFUSED, INTERRUPTED, CANCELLED)  # the named states in which a call is over
# `Event.states["*"] = ANSWERED`: every open call of the event's thread got its result where the
# file does not show it (toolcalls.ToolCallMap._answered)
ANSWERED = "answered"
# `Event.states["*"] = UNAPPROVED`: a response has ended; the approvals asked for before it began
# that it did not act on were refused (toolcalls.ToolCallMap._unapproved)
UNAPPROVED = "unapproved"
# `ToolResult.state = USER_WORDS`: an error result that may be only the person's words turning the
# call down (Claude Code before 2.0.57 writes "No, and tell Claude…" as the bare comment, `is_error`,
# nothing else on the line). Only the call's name can tell it from a tool's own failure: the state map names
# it denied where the call is one whose failures never read as free words (the format says which:
# its `refused_in_words` hook, asked by toolcalls.ToolCallMap.observe)
USER_WORDS = "user_words"
# `ToolResult.state = HOOK_WORDS`: the same words-only error where the person's words cannot be (Claude
# Code 2.0.57 and 2.1 put them after "the user said:"): a PreToolUse hook's reason, which a hook that denies in
# JSON has the CLI send as the whole result, with no toolDenialKind before 2.1.2xx. The state map names
# it blocked by hook where the call's own failures never read as free words, as for USER_WORDS
HOOK_WORDS = "hook_words"


@dataclass(slots=True)
class Text:
    kind: ClassVar[str] = "text"
    text: str
    markdown: bool = True  # prose goes through Markdown; tool output and commands do not


@dataclass(slots=True)
class Thinking:
    kind: ClassVar[str] = "thinking"
    text: str
    redacted: bool = False  # the source says the content was withheld (redacted_thinking, data only)
    signature: str | None = None


@dataclass(slots=True)
class ToolUse:
    kind: ClassVar[str] = "tool_use"
    id: str
    name: str
    input: Any
    input_raw: str | None = None  # arguments given as a JSON string that did not parse
    status: str | None = None  # only where the source itself states it (Wolo's ToolPart)
    started: Any = None  # raw timestamps where the source puts them on the call
    ended: Any = None
    # the call's place where its record keeps no id its results name (agentpress's non-streamed
    # XML calls: the N-th call of an assistant row): a result naming an unknown id and this `alt`
    # is this call's (toolcalls.ToolCallMap.aliases)
    alt: str | None = None


@dataclass(slots=True)
class ToolResult:
    kind: ClassVar[str] = "tool_result"
    tool_use_id: str
    content: list  # blocks
    is_error: bool | None = None  # None counts as success
    structured: Any = None  # a source's machine-readable result (Claude Code's toolUseResult)
    state: str | None = None  # a named outcome (NAMED_STATES) where the source states one
    alt: str | None = None  # its call's place, where its id may be one no call kept (ToolUse.alt)
    # when the call ended, where the source times it apart from the record holding the result (a
    # trace's span): it wins over that record's time
    ended: Any = None


@dataclass(slots=True)
class Media:
    kind: ClassVar[str] = "media"
    media: str  # image | audio | video | document
    media_type: str | None = None
    data: str | None = None  # base64 payload when inline
    url: str | None = None
    name: str | None = None

    @property
    def size(self) -> int:
        """Bytes of the decoded payload (base64 is 4 chars for 3 bytes)."""
        if self.data is None:
            return 0
        from .reader import CutStr

        n = self.data.raw_length if isinstance(self.data, CutStr) else len(self.data)
        return n * 3 // 4


@dataclass(slots=True)
class Cached:
    """Flattened earlier history a source re-sent as one cached block (agentpress)."""

    kind: ClassVar[str] = "cached"
    text: str


@dataclass(slots=True)
class Unparsed:
    kind: ClassVar[str] = "unparsed"
    raw: str
    line: int
    reason: str


@dataclass(slots=True)
class Data:
    """A value no other block captures, shown as pretty JSON (unknown record types land here)."""

    kind: ClassVar[str] = "data"
    value: Any
    label: str | None = None


@dataclass(slots=True)
class Notice:
    """A one-line statement about the session: compaction, a mode change, a hook summary."""

    kind: ClassVar[str] = "notice"
    text: str
    detail: Any = None


@dataclass(slots=True)
class Context:
    """Text a client attached to a message for the model, not written by its author: the IDE's
    selection or opened file, a system reminder. Shown as a quiet chip; its text on demand."""

    kind: ClassVar[str] = "context"
    label: str  # what it is, in a few words ("selected line 508 of extract.py")
    text: str  # the attached text as written
    source: str = ""  # the tag it came in (ide_selection, ide_opened_file, system-reminder…)


Block = Text | Thinking | ToolUse | ToolResult | Media | Cached | Unparsed | Data | Notice | Context


@dataclass(slots=True)
class Ref:
    """Where a record sits in its source: enough to read it again and to name it stably."""

    thread: str  # "main" or a sub-agent / companion file's thread id
    line: int  # 1-based line in a JSONL file; 1-based position in a document's message list
    offset: int  # byte offset of the line (the document's start for single-document formats)
    length: int  # bytes of the line, without its newline
    path: str | None = None  # JSON path of the record inside a single-document file


@dataclass(slots=True)
class Event:
    """One record of a transcript, in the canonical shape."""

    ref: Ref
    role: str
    kind: str = "message"  # message, tool_result, system, progress, snapshot, summary, unknown, ...
    source_id: str | None = None  # the source's own uuid / id, if it has one
    id: str = ""  # the stable id assigned by the index (source id when unique, else L<line>)
    author: str | None = None  # agent or tool name
    recipient: str | None = None  # for agent → agent messages
    timestamp: datetime | None = None
    timestamp_raw: Any = None
    timestamp_assumed_utc: bool = False
    blocks: list = field(default_factory=list)
    parent: str | None = None  # the tool call this event hangs under
    # the id of the record this one was written to follow, where the source keeps a tree (Claude
    # Code's parentUuid): a prompt that follows an earlier record than the last one was sent after
    # the conversation was rewound (timeline.rewound)
    follows: str | None = None
    # a compaction that kept the latest messages verbatim: the id of the first one kept (what came
    # before it was summarized; Claude Code's preservedSegment)
    kept_from: str | None = None
    # a compaction that kept the earlier messages verbatim and summarized the later ones (Claude
    # Code's "Summarize from here"): the id of the last record kept; what follows it was summarized
    summarized_after: str | None = None
    hidden: bool = False
    hidden_reason: str | None = None
    model: str | None = None
    usage: dict | None = None
    message_id: str | None = None  # groups lines of one streamed message
    meta: dict = field(default_factory=dict)  # the source record's other fields (may be the record)
    format: str = ""
    # what the record says about tool calls besides holding them: ids of calls the source reports
    # as running, and call id → thread id of a sub-agent the call spawned
    running: list = field(default_factory=list)
    spawns: dict = field(default_factory=dict)
    # call id → the source's word for a state it reports without a result (awaiting_permission,
    # denied, interrupted…); "*" stands for every call still open (a restart interrupts them)
    states: dict = field(default_factory=dict)
    # a permission request or answer that names no call id: {"tool", "input", "request",
    # "decision" (None for a request, else "allow" / "deny")}; the map finds the call it is about
    permission: dict | None = None
    state: str | None = None  # the event's own named state (NAMED_STATES): an interrupted reply
    # when the calls `states["*"] = ANSWERED` answers got their results, where that is not the
    # event's own time: a saved response is timed when it completed, and the request that carried
    # the outputs of the calls before it was sent when it was created
    answered_at: float | None = None

    @property
    def thread(self) -> str:
        return self.ref.thread

    @property
    def line(self) -> int:
        return self.ref.line

    def tool_uses(self):
        return [b for b in self.blocks if b.kind == "tool_use"]

    def tool_results(self):
        return [b for b in self.blocks if b.kind == "tool_result"]

    def text(self) -> str:
        """The prose of the event, for titles and search."""
        return "\n".join(b.text for b in self.blocks if b.kind == "text").strip()


@dataclass(slots=True)
class ToolCall:
    """One entry of the tool-call state map, keyed by call id."""

    id: str
    name: str = ""
    status: str = "pending"
    call: tuple[str, int] | None = None  # (thread, seq) of the event holding the call
    result: tuple[str, int] | None = None  # (thread, seq) of the event holding the result
    is_error: bool = False
    called_at: float | None = None
    finished_at: float | None = None
    subthread: str | None = None  # the sub-agent thread this call spawned
    named: str | None = None  # the source's name for its state, when it has one (NAMED_STATES)

    @property
    def state(self) -> str:
        """What the call is shown and counted as: the source's named state, else its status."""
        return self.named or self.status

    @property
    def duration(self) -> float | None:
        if self.called_at is None or self.finished_at is None:
            return None
        return max(0.0, self.finished_at - self.called_at)

    @property
    def orphan(self) -> bool:
        return self.call is None


@dataclass(slots=True)
class SessionSummary:
    """What the session list shows, kept in the cache so listing never re-reads transcripts."""

    format: str = "unknown"
    title: str = ""
    # where the title comes from: 0 the first prompt, else the rank of a title the session was
    # given (a format's `named_title`: Claude Code's /rename over the CLI's own)
    title_rank: int = 0
    # times the file wrote with no zone (read as UTC, shown as written): "all" of the session's
    # times (its header says once that the zone is unknown, whatever the format), "some" (each
    # such card says it), or ""
    zoneless: str = ""
    started: float | None = None
    ended: float | None = None
    events: int = 0
    messages: int = 0
    # agent steps of a run trace (MARSYS: each agent's request and the action it chose, kind
    # "step", failed ones too); a trace holds no messages, so the list and the header show these
    steps: int = 0
    tool_calls: int = 0
    errors: int = 0
    hidden: int = 0
    unparsed: int = 0
    orphans: int = 0
    models: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    finished: bool = False
    # tokens and estimated cost (`usage.Tally.summary()`), per-tool [count, errors, seconds], and
    # the seconds spent in tools: what the list sorts by and the archive's stats add up
    usage: dict = field(default_factory=dict)
    tools: dict = field(default_factory=dict)
    tool_time: float = 0.0
    # the main file of the session this one is a sub-agent of (a Wolo sub-agent's session), whether
    # or not that session is there; "" for a session of its own
    parent: str = ""
    # the source's own word for how the session stands, where it keeps one (AgentScope Studio's
    # run status: running, pending, done, unknown…); "" for the rest, told live or not by their files
    status: str = ""

    @property
    def cost(self) -> float | None:
        return self.usage.get("cost")

    @property
    def tokens(self) -> int:
        return self.usage.get("tokens", 0)

    @property
    def duration(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return max(0.0, self.ended - self.started)


_EMPTY = MappingProxyType({})


class Digest:
    """What the index pass keeps of one record, told by a format without building its Event.

    Building a whole Event (every block, every display rule) is most of an index pass's work, and
    the index keeps none of it. A format may offer `digest(rec) -> Digest | None` for its common,
    plain shapes (anything else: None, and the record takes the Event path). A Digest reads like an
    Event wherever the index looks — role, kind, ids, time, hidden, model and usage, the blocks'
    kinds, tool uses and results, running calls, spawned threads — so one code path indexes both;
    `tests/test_digest.py` checks, record by record over every corpus file, fixture and mutation,
    that a digest says exactly what the Event says.
    """

    # What a plain record leaves at its default: class attributes, shared, never changed in place
    # (a format sets its own on the instance). No __slots__ on purpose: an instance that stores
    # only what differs is made several times faster, and one is made per line of a pass.
    author = hidden_reason = permission = parent = follows = None
    model = usage = message_id = answered_at = None
    hidden = False
    blocks: tuple | list = ()
    running: tuple | list = ()
    spawns = states = meta = _EMPTY

    def __init__(self, role: str, kind: str, source_id: str | None, ts: float | None,
                 hidden: bool = False, blocks: list = (), model: str | None = None,
                 usage: dict | None = None, message_id: str | None = None):
        self.role = role
        self.kind = kind
        self.source_id = source_id
        self.ts = ts
        if hidden:
            self.hidden = True
        if blocks:
            self.blocks = blocks
        if model is not None:
            self.model = model
        if usage is not None:
            self.usage = usage
        if message_id is not None:
            self.message_id = message_id

    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks if b.kind == "text").strip()

