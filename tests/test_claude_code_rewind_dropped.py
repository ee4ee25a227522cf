"""The messages a Claude Code rewind dropped say so themselves: each carries "dropped by a rewind —
the conversation went on from this prompt", linking to the prompt written after the rewind, on the
page and in both exports; several rewinds, a rewind inside a sub-agent and a rewind back past a
compaction read right (a warm first screen finds them without the session's id map:
test_claude_code_interactive)."""

import json
import re
import shutil
from html import unescape

from conftest import ROOT

from viewer.export import Export
from viewer.index import SessionIndex
from viewer.timeline import Timeline

REWIND = (ROOT / "test_data" / "formats" / "claude-code" / "2.1.331-tty" / "-home-user-demo"
          / "4d437b15-d9f5-4d73-a016-749930ca89fa.jsonl")
MARK = "dropped by a rewind — the conversation went on from this prompt"


def _shown(idx, thread="main"):
    return [(v.ev.text().split("\n")[0], v.dropped) for v in
            Timeline(idx).events(thread, 0, len(idx.threads[thread])).events if not v.ev.hidden]


def _ids(idx, thread="main"):
    th = idx.threads[thread]
    return {v.ev.text(): v.ev.id for v in Timeline(idx).events(thread, 0, len(th)).events}


class Chat:
    """A Claude Code transcript written by hand: each record under the one it names."""

    def __init__(self, sidechain=False, agent=None):
        self.lines, self.sidechain, self.agent, self.n = [], sidechain, agent, 0

    def _rec(self, parent, **rec):
        self.n += 1
        uid = f"{self.agent or 'm'}-{self.n:03d}"
        rec = {"parentUuid": parent, "uuid": uid, "sessionId": "s1", "isSidechain": self.sidechain,
               "timestamp": f"2026-11-24T10:00:{self.n:02d}.000Z", **rec}
        if self.agent:
            rec["agentId"] = self.agent
        self.lines.append(json.dumps(rec))
        return uid

    def user(self, parent, text):
        return self._rec(parent, type="user", message={"role": "user", "content": text})

    def assistant(self, parent, text):
        return self._rec(parent, type="assistant", message={
            "id": f"msg_{self.n}", "role": "assistant", "model": "claude-opus-4-5", "type": "message",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})

    def compaction(self, logical):
        boundary = self._rec(None, type="system", subtype="compact_boundary", logicalParentUuid=logical,
                             content="Conversation compacted", level="info",
                             compactMetadata={"trigger": "manual", "preTokens": 1200})
        return self._rec(boundary, type="user", isCompactSummary=True, message={
            "role": "user", "content": "This session is being continued. Summary: colours named."})

    def write(self, path):
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        return path


def _two_rewinds(c):
    """P1 A1 P2 A2, back to after A1: P3 A3, back to after A1 again: P4 A4."""
    a1 = c.assistant(c.user(None, "P1"), "A1")
    c.assistant(c.user(a1, "P2"), "A2")
    c.assistant(c.user(a1, "P3"), "A3")
    c.assistant(c.user(a1, "P4"), "A4")


def test_each_message_the_recorded_rewind_dropped_says_so(tmp_path):
    idx = SessionIndex(REWIND).build()
    prompt = _ids(idx)["Name a fruit instead."]
    assert _shown(idx) == [("Name a colour.", None), ("Blue.", None), ("Name another colour.", prompt),
                           ("Green.", prompt), ("Name a fruit instead.", None), ("Apple.", None)]
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(REWIND, root / "rewind.jsonl")
    from viewer.web import create_app

    page = unescape(create_app({"ROOTS": [str(root)], "NO_CACHE": True, "WATCH": False})
                    .test_client().get("/s/rewind").get_data(as_text=True))
    marks = re.findall(r'<div class="dropped">(.*?)</div>', page)
    assert [re.sub(r"<[^>]+>", "", m) for m in marks] == [MARK, MARK]
    assert all(f'href="/s/rewind/m/{prompt}"' in m for m in marks)
    # each mark sits in its own card, the two cards between the first answer and the new prompt
    cards = re.findall(r'<li class="ev [^"]*" id="m-([^"]+)".*?</li>', page, re.S)
    marked = [c for c in re.findall(r'(<li class="ev .*?</li>)', page, re.S) if 'class="dropped"' in c]
    assert len(cards) >= 6 and ["Name another colour." in marked[0], "Green." in marked[1]] == [True, True]
    assert page.index("Blue.") < page.index('class="dropped"') < page.index("Name a fruit instead.")
    for fmt, link in (("html", f'href="#m-{prompt}">this prompt</a>'), ("md", f"[this prompt](#m-{prompt})")):
        text = "".join(Export(idx, fmt).chunks())
        assert text.count("dropped by a rewind — the conversation went on from") == 2, fmt
        assert text.count(link) == 2, fmt
        assert text.index("Blue.") < text.index("dropped by a rewind") < text.index("Green.") \
            < text.index("Name a fruit instead."), fmt


def test_two_rewinds_each_name_the_prompt_that_went_on(tmp_path):
    c = Chat()
    _two_rewinds(c)
    idx = SessionIndex(c.write(tmp_path / "s.jsonl")).build()
    ids = _ids(idx)
    # P2 and A2 were dropped by the first rewind (the conversation went on from P3), which the
    # second dropped in turn (it went on from P4)
    assert _shown(idx) == [("P1", None), ("A1", None), ("P2", ids["P3"]), ("A2", ids["P3"]),
                           ("P3", ids["P4"]), ("A3", ids["P4"]), ("P4", None), ("A4", None)]
    rewound = {v.ev.text(): v.rewound for v in Timeline(idx).window("main").events if v.rewound}
    assert rewound == {"P3": (ids["P2"], 2), "P4": (ids["P2"], 4)}


def test_a_later_rewind_further_back_drops_what_came_before_the_earlier_one(tmp_path):
    # P1 A1 P2 A2, back to after A1 (P3 A3), then back to after P1 (P4 under P1): A1 too was
    # dropped, by the second rewind only
    c = Chat()
    p1 = c.user(None, "P1")
    a1 = c.assistant(p1, "A1")
    c.assistant(c.user(a1, "P2"), "A2")
    c.assistant(c.user(a1, "P3"), "A3")
    c.assistant(c.user(p1, "P4"), "A4")
    idx = SessionIndex(c.write(tmp_path / "s.jsonl")).build()
    ids = _ids(idx)
    assert _shown(idx) == [("P1", None), ("A1", ids["P4"]), ("P2", ids["P3"]), ("A2", ids["P3"]),
                           ("P3", ids["P4"]), ("A3", ids["P4"]), ("P4", None), ("A4", None)]


def test_a_rewind_inside_a_sub_agent_marks_its_own_messages(tmp_path):
    main = Chat()
    p = main.user(None, "Ask the helper.")
    main.assistant(p, "Asked.")
    path = main.write(tmp_path / "s.jsonl")
    agent = Chat(sidechain=True, agent="a1b2c3")
    _two_rewinds(agent)
    (tmp_path / "s" / "subagents").mkdir(parents=True)
    agent.write(tmp_path / "s" / "subagents" / "agent-a1b2c3.jsonl")
    idx = SessionIndex(path).build()
    thread = next(name for name in idx.threads if name != "main")
    ids = _ids(idx, thread)
    assert _shown(idx, thread)[2:6] == [("P2", ids["P3"]), ("A2", ids["P3"]), ("P3", ids["P4"]), ("A3", ids["P4"])]
    assert [d for _, d in _shown(idx)] == [None, None]  # the main thread lost nothing


def test_a_rewind_back_past_a_compaction_drops_the_compaction_too(tmp_path):
    c = Chat()
    a1 = c.assistant(c.user(None, "Name a colour."), "Blue.")
    summary = c.compaction(a1)
    c.assistant(c.user(summary, "Name another colour."), "Green.")
    c.assistant(c.user(a1, "Name a fruit instead."), "Apple.")
    idx = SessionIndex(c.write(tmp_path / "s.jsonl")).build()
    fruit = _ids(idx)["Name a fruit instead."]
    shown = _shown(idx)
    views = [v for v in Timeline(idx).window("main").events if not v.ev.hidden]
    assert [(v.ev.kind, v.ev.text()[:20]) for v in views if v.dropped == fruit] == [
        ("compaction", ""), ("compact_summary", "This session is bein"),
        ("message", "Name another colour."), ("message", "Green.")]
    assert [d for t, d in shown if t in ("Name a colour.", "Blue.", "Name a fruit instead.", "Apple.")] == [None] * 4
    notice = next(v.rewound for v in Timeline(idx).window("main").events if v.rewound)
    assert notice == (_ids(idx)["Name another colour."], 2)  # (messages: not the boundary or its summary)


def test_a_prompt_after_bookkeeping_drops_nothing(tmp_path):
    # a prompt written under the last message, with only bookkeeping after it, is no rewind
    c = Chat()
    a1 = c.assistant(c.user(None, "P1"), "A1")
    c.lines.append(json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}))
    c._rec(a1, type="system", subtype="turn_duration", durationMs=5)
    c.assistant(c.user(a1, "P2"), "A2")
    idx = SessionIndex(c.write(tmp_path / "s.jsonl")).build()
    assert idx.threads["main"].rewinds == []
    assert [d for _, d in _shown(idx)] == [None] * 4
