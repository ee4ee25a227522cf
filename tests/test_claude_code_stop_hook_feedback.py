"""Claude Code: a Stop hook that keeps the agent going is shown where it did, with its words.

When a Stop (or SubagentStop) hook blocks the agent from finishing (exit code 2, or `decision:
block` with a reason), the CLI sends the model a user line it writes itself: `isMeta`, content
"Stop hook feedback:\\n" + the hook's blocking output (the CLI's formatter for each hook event;
the shape measured on 2.1.197 — "Stop hook feedback:\\nBLOCKED_ONCE\\n" — and 2.1.261 transcripts by
others, anthropics/claude-code hook docs: "Stop … CAN BLOCK (`decision:block` + reason)"). 2.1's
attachments add a `hook_blocking_error` for it. The line was hidden as the CLI's own ("meta"): in a
session without that attachment the agent went on after its last answer for no visible reason.
"""

import json

from viewer.index import SessionIndex
from viewer.text import event_text
from viewer.timeline import load_events

_ENV = {"isSidechain": False, "userType": "external", "cwd": "/home/u/demo", "sessionId": "s40",
        "gitBranch": "main"}
_SAID = "Run the tests before stopping: 2 failed (test_login, test_logout)\n"


def _session(tmp_path, version, attachment=False):
    out, n = [], 0

    def add(rec):
        nonlocal n
        n += 1
        out.append({**_ENV, "version": version, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n > 1 else None,
                    "timestamp": f"2026-03-02T10:00:{n * 2:02d}.000Z", **rec})

    def say(text):
        add({"type": "assistant", "message": {"id": f"m{n}", "type": "message", "role": "assistant",
             "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}]}})

    add({"type": "user", "message": {"role": "user", "content": "fix the login page"}})
    say("Done: the login page is fixed.")
    if attachment:
        add({"type": "attachment", "attachment": {
            "type": "hook_blocking_error", "hookName": "Stop", "hookEvent": "Stop", "toolUseID": "t-stop",
            "blockingError": {"blockingError": _SAID, "command": "./check-tests.sh"}}})
    add({"type": "user", "isMeta": True, "message": {"role": "user", "content": "Stop hook feedback:\n" + _SAID}})
    say("The hook says two tests fail; fixing them.")
    folder = tmp_path / "projects" / "-home-u-demo"
    folder.mkdir(parents=True)
    path = folder / "s40.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


def _shown(path):
    idx = SessionIndex(path).build()
    evs = [e for e in load_events(idx, "main", 0, len(idx.threads["main"])) if not e.hidden]
    return idx, [(e.role, e.kind, event_text(e, False)) for e in evs]


def test_the_stop_hook_s_feedback_shows_between_the_answer_and_what_followed(tmp_path):
    idx, shown = _shown(_session(tmp_path, "2.0.55"))
    assert shown == [
        ("user", "message", "fix the login page"),
        ("assistant", "message", "Done: the login page is fixed."),
        ("system", "hook", "hook Stop kept the agent from stopping and said:\n" + _SAID.strip()),
        ("assistant", "message", "The hook says two tests fail; fixing them."),
    ]
    assert idx.summary.messages == 3  # the hook's words are no message of the person's
    assert idx.summary.title == "fix the login page"


def test_with_2_1_s_attachment_the_feedback_is_shown_once(tmp_path):
    _, shown = _shown(_session(tmp_path, "2.1.197", attachment=True))
    hooks = [s for s in shown if s[1] == "hook"]
    assert hooks == [("system", "hook", "hook Stop kept the agent from stopping and said:\n" + _SAID.strip())]
