"""Sessions the real Claude Code CLI (2.1.331) wrote while a person typed into its terminal.

The recordings in test_data/formats/claude-code/2.1.331-tty (README.md there says how they were
made: tests/golden/record_claude_code_interactive.py) hold what only interactive use writes:
permission dialogs answered three ways, a settings rule refusing a call, /compact, hooks, plan mode,
Esc and a resumed session, a rewind, the rewind dialog's "Summarize from here" and "Summarize up to
here". Each test reads one as a user would and checks who did what.
"""

import re

from viewer.index import SessionIndex
from viewer.text import event_text
from viewer.timeline import load_events

from conftest import ROOT

TTY = ROOT / "test_data" / "formats" / "claude-code" / "2.1.331-tty" / "-home-user-demo"
PERM = TTY / "a1070809-5c22-4604-b6bd-f6ce24c70267.jsonl"
HOOKS = TTY / "1364bfc0-13b2-48c3-86ae-a9e147a319bf.jsonl"
ESC = TTY / "26d8d51d-3b9d-4fd8-811c-08ba3e3638c1.jsonl"
PLAN = TTY / "40e8f085-ebf6-4d96-94f3-d4a4e72210c5.jsonl"
REWIND = TTY / "4d437b15-d9f5-4d73-a016-749930ca89fa.jsonl"
SUM_FROM = TTY / "6bd9f5b0-d480-48fc-8144-b39c6c23b04f.jsonl"
SUM_UPTO = TTY / "018a787c-a226-4610-85f8-dc6caf5af452.jsonl"


def visible(idx, thread="main"):
    th = idx.threads[thread]
    return [e for e in load_events(idx, thread, 0, len(th)) if not e.hidden]


def states(idx) -> list[tuple[str, str, str | None]]:
    """Each call as (name, its command or file, state shown) in the order the agent made them."""
    out = []
    for c in sorted(idx.calls.calls.values(), key=lambda c: c.call):
        (ev,) = load_events(idx, c.call[0], c.call[1], c.call[1] + 1)
        use = next(b for b in ev.tool_uses() if b.id == c.id)
        out.append((c.name, use.input.get("command") or use.input.get("file_path") or "", c.state))
    return out


def test_each_refusal_says_who_refused():
    # allowed once, allowed always (a rule), run by that rule, refused by the person with advice,
    # refused by a `permissions.deny` rule in settings.json without a dialog
    idx = SessionIndex(PERM).build()
    assert states(idx) == [
        ("Bash", "python3 -c 'print(6 * 7)'", "completed"),
        ("Bash", "python3 -c 'print(1 + 1)'", "completed"),
        ("Bash", "python3 -c 'print(2 + 2)'", "completed"),
        ("Write", "/home/user/demo/todo.txt", "denied"),  # by the person: "denied by user"
        ("Bash", "rm -rf build", "denied_by_settings"),  # by the rule: nobody was asked
    ]
    # the person's advice reads as theirs; the CLI's words to the model fold behind one line
    (refusal,) = [b for e in visible(idx) for b in e.tool_results() if b.state == "denied"]
    assert [(b.kind, b.text) for b in refusal.content] == [
        ("notice", "the user refused it and said:"), ("text", "Put it under docs/ instead.")]
    # a refused call is no failure of the agent's
    assert idx.calls.errors() == 0


def test_a_pretooluse_hook_block_reads_blocked_by_hook():
    idx = SessionIndex(HOOKS).build()
    assert states(idx) == [("Bash", "curl -s https://example.com/", "blocked_by_hook"),
                           ("Bash", "echo checked by hooks", "completed")]
    # what the hooks added for the model is shown where it was added
    said = [(e.kind, event_text(e, False)) for e in visible(idx) if e.kind == "hook"]
    assert said == [("hook", "hook UserPromptSubmit added context\nHook context: the build is green."),
                    ("hook", "hook PostToolUse:Bash added context\nPost hook: the call was logged.")]


def test_compact_reads_as_a_boundary_a_summary_and_the_command():
    idx = SessionIndex(PERM).build()
    seen = [(e.kind, event_text(e, False).split("\n")[0]) for e in visible(idx)]
    at = seen.index(("compaction", "Conversation compacted (manual, 12,016 → 2,999 tokens)"))
    assert seen[at + 1] == ("compact_summary", "Summary of the conversation before compaction")
    assert seen[at + 2] == ("command", "command /compact")
    assert seen[-2:] == [("message", "What number did I ask you to remember?"),
                         ("message", "You asked me to remember 42.")]
    (summary,) = [e for e in visible(idx) if e.kind == "compact_summary"]
    # the CLI's reminder between the opening sentence and the summary is a context chip, not prose
    assert [b.kind for b in summary.blocks] == ["notice", "text", "context", "text"]
    assert all("<system-reminder>" not in b.text for b in summary.blocks if b.kind == "text")


def test_plan_mode_reads_as_plan_approval_then_work():
    idx = SessionIndex(PLAN).build()
    assert [(n, s) for n, _, s in states(idx)] == [("Read", "completed"), ("ExitPlanMode", "completed"),
                                                    ("Edit", "completed")]
    kinds = [(e.kind, event_text(e, False).split("\n")[0]) for e in visible(idx)]
    assert ("mode", "left plan mode") in kinds
    assert kinds.index(("mode", "left plan mode")) < [k for k, _ in kinds].index("message", 5)


def test_refusal_badges_name_the_refuser_on_the_page(tmp_path):
    from viewer.web import create_app

    app = create_app({"ROOTS": [str(TTY)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    for path, words in ((PERM, ("denied by user", "denied by settings")), (HOOKS, ("blocked by hook",))):
        html = app.test_client().get("/s/" + path.stem).get_data(as_text=True)
        badges = re.findall(r'class="state denied"[^>]*>([^<]+)<', html)
        assert sorted(set(badges)) == sorted(words), badges
    # Esc on a running call: "interrupted", never "denied by user"
    html = app.test_client().get("/s/" + ESC.stem).get_data(as_text=True)
    assert ("interrupted", "interrupted") in re.findall(r'class="state (\w+)"[^>]*>([^<]+)<', html)
    assert "denied by user" not in html


def test_esc_then_continue_reads_in_one_session():
    # Esc while an approved Bash call ran: 2.1.331 files it as the person's refusal ("User rejected
    # tool use") and adds "[Request interrupted by user for tool use]"; its line holds no
    # permission decision (a refusal in the dialog has one: test_each_refusal_says_who_refused):
    # it reads interrupted. `claude --continue` then appends the next prompt to the same file
    idx = SessionIndex(ESC).build()
    assert [(n, s) for n, _, s in states(idx)] == [("Bash", "interrupted"), ("Read", "error")]
    seen = [(e.kind, event_text(e, False).split("\n")[0]) for e in visible(idx)]
    assert seen[3:6] == [("tool_result", seen[3][1]), ("interrupt", "Request interrupted by user for tool use"),
                         ("message", "Is the notes file still there?")]


def test_a_prompt_sent_after_a_rewind_says_what_it_dropped(tmp_path):
    # Esc Esc, "Restore conversation" to before the second prompt, a new prompt: the file keeps the
    # dropped prompt and its answer, and writes the new prompt under the record before them
    from html import unescape

    from viewer.timeline import Timeline
    from viewer.web import create_app

    idx = SessionIndex(REWIND).build()
    shown = [(v.ev.text(), v.rewound) for v in Timeline(idx).window("main").events if not v.ev.hidden]
    dropped = next(v.ev.id for v in Timeline(idx).window("main").events
                   if v.ev.text() == "Name another colour.")
    assert shown == [("Name a colour.", None), ("Blue.", None), ("Name another colour.", None),
                     ("Green.", None), ("Name a fruit instead.", (dropped, 2)), ("Apple.", None)]
    root = tmp_path / "root"
    root.mkdir()
    (root / "rewind.jsonl").write_bytes(REWIND.read_bytes())
    page = unescape(create_app({"ROOTS": [str(root)], "NO_CACHE": True, "WATCH": False})
                    .test_client().get("/s/rewind").get_data(as_text=True))
    notice = re.search(r'<div class="rewound">(.*?)</div>', page).group(1)
    assert f'href="/s/rewind/m/{dropped}"' in notice
    assert re.sub(r"<[^>]+>", "", notice) == ("↩ rewound: sent after going back to before this message; "
                                              "the 2 messages from there on were dropped from the conversation")
    assert page.index("Green.") < page.index('<div class="rewound">') < page.index("Name a fruit instead.")
    # the exports say it too, their link an anchor in the same file
    from viewer.export import Export

    for fmt, link in (("html", f'href="#m-{dropped}"'), ("md", f"](#m-{dropped})")):
        text = "".join(Export(idx, fmt).chunks())
        assert "↩ rewound: sent after going back to before" in text and link in text, fmt


def test_no_other_recorded_or_real_session_reads_as_rewound():
    # local commands (/doctor, /status…) are written beside the conversation's chain, not on it:
    # a prompt after them is no rewind (the corpus's log sample has three in a row)
    from viewer.timeline import Timeline

    corpus = ROOT.parent / "shared" / "corpus" / "claude-code"
    paths = [p for p in (*ROOT.glob("test_data/**/*.jsonl"), *corpus.glob("**/*.jsonl"))
             if "subagents" not in p.parts and p != REWIND]
    prompts = 0
    for path in paths:
        idx = SessionIndex(path).build()
        if idx.threads["main"].format != "claude-code":
            continue
        for v in Timeline(idx).events("main", 0, len(idx.threads["main"])).events:
            assert v.rewound is None, (path, v.ev.id)
            prompts += v.ev.follows is not None and v.ev.kind == "message" and v.ev.role == "user"
    assert prompts >= 30  # (the check ran on real prompts)


def test_a_warm_first_screen_finds_a_rewind_and_what_it_dropped_without_the_id_map(tmp_path):
    # the id map of a big session takes tens of ms to build from the cache, and a warm first
    # screen never needed it: a prompt's rewind check looks back a few records first
    import shutil

    from viewer.cache import IndexCache
    from viewer.store import Store
    from viewer.timeline import Timeline

    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(REWIND, root / "rewind.jsonl")
    store = Store([root], IndexCache(tmp_path / "cache"))
    store.index("rewind")
    store.flush()
    idx = Store([root], IndexCache(tmp_path / "cache")).index("rewind")
    assert idx._ids is None  # (loaded from the cache)
    views = Timeline(idx).window("main").events
    shown = [v.rewound for v in views if v.rewound]
    assert len(shown) == 1 and shown[0][1] == 2
    # and the messages it dropped say so themselves
    assert [v.ev.text() for v in views if v.dropped] == ["Name another colour.", "Green."]
    assert idx._ids is None


def _summarized_reading(path, tmp_path):
    """The session's shown events as (kind, first words), the ids of its messages by text, the
    boundary's view, and its page text with the boundary's card's links."""
    from html import unescape

    from viewer.timeline import Timeline
    from viewer.web import create_app

    idx = SessionIndex(path).build()
    views = [v for v in Timeline(idx).window("main").events if not v.ev.hidden]
    ids = {v.ev.text(): v.ev.id for v in views}
    boundary = next(v for v in views if v.ev.kind == "compaction")
    root = tmp_path / "root"
    root.mkdir()
    (root / "s.jsonl").write_bytes(path.read_bytes())
    page = unescape(create_app({"ROOTS": [str(root)], "NO_CACHE": True, "WATCH": False})
                    .test_client().get("/s/s").get_data(as_text=True))
    card = re.search(r'<li class="ev [^"]*kind-compaction.*?</li>', page, re.S).group(0)
    line = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", re.search(r'<div class="repeat-ref">(.*?)</div>', card).group(1)))
    return idx, views, ids, boundary, card, line


def test_summarize_from_here_says_what_it_summarized_and_what_it_kept(tmp_path):
    # three prompts, Esc Esc, the second picked and "Summarize from here": the CLI keeps the first
    # prompt and its answer verbatim (the preserved segment ends before the boundary, anchored on
    # it) and summarizes the second and third; the prompt after it reads the summary
    idx, views, ids, boundary, card, line = _summarized_reading(SUM_FROM, tmp_path)
    assert boundary.ev.blocks[0].text == "Conversation partly summarized — “Summarize from here” (manual, 11,693 → 3,157 tokens)"
    assert boundary.summarized == (ids["Name another colour."], 4)
    assert boundary.kept_from == ids["Name a colour."]
    assert line == "↳ summarized: the 4 messages from this message on; kept verbatim: what came before it, from this message on"
    assert re.findall(r'href="/s/s/m/([^"]+)"', card)[-2:] == [ids["Name another colour."], ids["Name a colour."]]
    summary = next(v for v in views if v.ev.kind == "compact_summary")
    assert summary.ev.blocks[0].text == "Summary of the conversation from the picked message on (“Summarize from here”)"
    assert [v.rewound for v in views] == [None] * len(views)  # (a summary is no rewind)
    assert [v.dropped for v in views] == [None] * len(views)
    from viewer.export import Export

    md = "".join(Export(idx, "md").chunks())
    assert (f"*↳ summarized: the 4 messages from [this message](#m-{ids['Name another colour.']}) on; kept verbatim: "
            f"what came before it, from [this message](#m-{ids['Name a colour.']}) on*") in md
    html = "".join(Export(idx, "html").chunks())
    assert f'summarized: the 4 messages from <a href="#m-{ids["Name another colour."]}">this message</a> on' in html


def test_summarize_up_to_here_keeps_the_picked_message_on(tmp_path):
    # "Summarize up to here" on the second prompt: it and what followed are kept verbatim, the
    # first prompt and its answer summarized — what a compaction's notice says already
    idx, views, ids, boundary, card, line = _summarized_reading(SUM_UPTO, tmp_path)
    assert boundary.ev.blocks[0].text == "Conversation partly summarized — “Summarize up to here” (manual, 11,693 → 2,885 tokens)"
    assert boundary.summarized is None
    assert boundary.kept_from == ids["Name another colour."]
    assert line == "↳ kept verbatim from this message on; what came before it was summarized"
    summary = next(v for v in views if v.ev.kind == "compact_summary")
    assert summary.ev.blocks[0].text == "Summary of the conversation up to the picked message (“Summarize up to here”)"
    assert [v.rewound for v in views] == [None] * len(views)


def test_a_compaction_still_reads_as_one():
    # /compact and an auto-compaction say nothing of messagesSummarized: their words are as before
    from viewer.timeline import Timeline

    auto = ROOT / "test_data" / "formats" / "claude-code" / "2.1.331" / "-home-user-demo" / \
        "38390fa4-f92d-4ab5-b8a8-422140c047ca.jsonl"
    for path, words in ((PERM, "Conversation compacted (manual, 12,016 → 2,999 tokens)"),
                        (auto, "Conversation compacted (auto, 199,087 → 2,709 tokens)")):
        views = Timeline(SessionIndex(path).build()).window("main").events
        boundary = next(v for v in views if v.ev.kind == "compaction")
        assert boundary.ev.blocks[0].text == words and boundary.summarized is None and boundary.kept_from
        summary = next(v for v in views if v.ev.kind == "compact_summary")
        assert summary.ev.blocks[0].text == "Summary of the conversation before compaction"
