"""Qwen Code's newer user records and titles, as its own UI shows them.

The records are built from QwenLM/qwen-code packages/core/src/services/chatRecordingService.ts
(at 015346f1d5d7312fddaf84a7ef1f83c7d217d389): `recordUserMessage` (a prompt whose
`systemPayload` is `UserPromptRecordPayload {displayText, hookContext}`, its `message` the
model-bound expansion), `createNotificationRecord` (`type: "user"`, `subtype: "notification" |
"cron"`, `provenance: "system"`, "restored as an info item, not a user turn"),
`recordGoalRuntimeMessage` (`subtype: "goal_runtime"`), `recordMidTurnUserMessage`, and
`titleAnchorRecord` (`system` / `custom_title` `{customTitle, titleSource}`, re-appended unchanged
every 32 KB by `reanchorTitle`, and first written by the auto-title service with `titleSource:
"auto"`)."""

import json
import os

from viewer.index import SessionIndex
from viewer.store import Store
from viewer.timeline import load_events

OLD = 1_700_000_000
BASE = {"sessionId": "5f0c2a1e-4f3d-4e2a-9b8c-7d6e5f4a3b2c", "cwd": "/home/li/calc",
        "version": "0.19.0", "gitBranch": "main"}


def _rec(n, type_, **more):
    return {"uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None, **BASE,
            "timestamp": f"2026-11-20T10:00:{n:02d}.000Z", "type": type_, **more}


def _user(parts):
    return {"role": "user", "parts": parts}


def _title(n, title, source=None):
    payload = {"customTitle": title, **({"titleSource": source} if source else {})}
    return _rec(n, "system", subtype="custom_title", provenance="system", systemPayload=payload)


def _records():
    return [
        _rec(0, "user", provenance="real_user", promptId="p0",
             message=_user([{"text": "Fix the rounding in @src/money.py"},
                            {"text": "\n--- Content from referenced files ---\nContent from @src/money.py:\n"
                                     "def cents(x): return int(x * 100)\n--- End of content ---"}]),
             systemPayload={"displayText": "Fix the rounding in @src/money.py",
                            "hookContext": ""}),
        _rec(1, "assistant", provenance="assistant_output", model="qwen3-coder-plus",
             message={"role": "model", "parts": [{"text": "I'll round before truncating."}]}),
        _title(2, "Rounding in money.py", "auto"),
        _rec(3, "user", subtype="notification", provenance="system",
             message=_user([{"text": "<task-notification>\n<task-id>explore-7f3c</task-id>\n"
                                     "<status>completed</status>\n<result>Found 3 callers of cents()"
                                     "</result>\n</task-notification>"}]),
             systemPayload={"displayText": "Background agent \"Explore\" completed",
                            "backgroundTask": {"taskId": "explore-7f3c", "status": "completed",
                                               "kind": "agent"}}),
        _rec(4, "user", subtype="goal_runtime", provenance="goal_runtime",
             goalContext={"goalId": "g1", "revision": 1, "turnId": "t1"},
             message=_user([{"text": "Goal check: the goal is not yet met; continue."}])),
        _rec(5, "user", subtype="mid_turn_user_message",
             message=_user([{"text": "also keep the old signature"}]),
             systemPayload={"displayText": "also keep the old signature"}),
        _title(6, "Rounding in money.py", "auto"),  # re-anchored: the same title again
        _title(7, "Money rounding fix"),  # /rename (no titleSource: manual)
        _title(8, "Rounding in money.py", "auto"),  # a later generated one does not win
        _title(9, "Money rounding fix"),  # re-anchored
    ]


def _session(tmp_path):
    path = tmp_path / "projects" / "-home-li-calc" / "chats" / f"{BASE['sessionId']}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    os.utime(path, (OLD, OLD))
    return path


def test_prompt_shows_what_the_person_typed_and_notifications_are_no_prompts(tmp_path):
    idx = SessionIndex(_session(tmp_path)).build()
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    prompt = evs[0]
    assert prompt.role == "user"
    assert [b.kind for b in prompt.blocks] == ["text", "context"]
    assert prompt.blocks[0].text == "Fix the rounding in @src/money.py"
    assert "def cents" in prompt.blocks[1].text  # the @-file as the model got it, folded
    note = evs[3]
    assert (note.role, note.kind, note.hidden) == ("system", "notification", False)
    assert note.blocks[0].kind == "notice" and note.blocks[0].text == 'Background agent "Explore" completed'
    assert note.blocks[1].kind == "context" and "<task-notification>" in note.blocks[1].text
    runtime = evs[4]
    assert (runtime.role, runtime.kind) == ("system", "context")
    assert runtime.blocks[0].label == "goal runtime"
    mid = evs[5]
    assert (mid.role, mid.text()) == ("user", "also keep the old signature")
    # the person's prompts are the two they typed: the prompt navigation and the user cards
    assert [e.source_id for e in evs if e.role == "user"] == ["u0", "u5"]
    assert sorted(idx.threads["main"].prompts) == [0, 5]


def test_custom_title_names_the_session_and_its_rewrites_stay_out_of_sight(tmp_path):
    path = _session(tmp_path)
    idx = SessionIndex(path).build()
    assert idx.summary.title == "Money rounding fix"
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    titles = [e for e in evs if e.kind == "system:custom_title"]
    assert len(titles) == 5 and all(e.hidden for e in titles)
    assert titles[0].blocks[0].text == "title generated: Rounding in money.py"
    assert titles[2].blocks[0].text == "title set: Money rounding fix"
    # the list says it too
    st = Store([tmp_path / "projects"])
    (ref,) = st.sessions()
    st.index(ref.key)
    assert st.summary_of(ref.key).title == "Money rounding fix"


def test_an_auto_title_alone_names_the_session(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()[:3]))
    os.utime(path, (OLD, OLD))
    assert SessionIndex(path).build().summary.title == "Rounding in money.py"
