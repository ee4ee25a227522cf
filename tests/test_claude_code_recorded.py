"""Sessions the real Claude Code CLI (2.1.331 from npm) wrote, read as a user reads them.

The recordings in test_data/formats/claude-code/2.1.331 (README.md there says how they were
made) exercise its tools, a background sub-agent, a workflow's agents, a permission refusal, an
overloaded API answered by a retry, a resumed session, an interrupted call, an auto-compaction and a skill.
"""

import json
import re
from html import unescape
from pathlib import Path

from viewer.formats import detect
from viewer.index import SessionIndex
from viewer.text import event_text
from viewer.timeline import load_events

from conftest import ROOT

FIXTURES = ROOT / "test_data" / "formats" / "claude-code"
PROJECT = FIXTURES / "2.1.331" / "-home-user-demo"
TOUR = PROJECT / "253a41fe-30bb-43c5-b249-7990744c4070.jsonl"
WORKFLOW = PROJECT / "ab33391c-226f-4b4a-97f0-5a426bf7c8e4.jsonl"
INTERRUPTED = PROJECT / "dea71ba1-2aab-4102-9e87-8ee591c107b9.jsonl"
AUTO_COMPACTED = PROJECT / "38390fa4-f92d-4ab5-b8a8-422140c047ca.jsonl"
SKILL = PROJECT / "b2ddb9c6-cb59-4536-9a96-f6e738b7220e.jsonl"


def lines(path: Path) -> int:
    return sum(1 for x in path.read_text(encoding="utf-8").splitlines() if x.strip())


def visible(idx, thread="main"):
    th = idx.threads[thread]
    return [e for e in load_events(idx, thread, 0, len(th)) if not e.hidden]


def calls_by_input(idx) -> dict:
    """Each call as (name, its main input) → (state, named state, thread of the call)."""
    out = {}
    for c in idx.calls.calls.values():
        thread, seq = c.call
        (ev,) = load_events(idx, thread, seq, seq + 1)
        use = next(b for b in ev.tool_uses() if b.id == c.id)
        first = next(use.input[k] for k in ("command", "file_path", "pattern", "url", "description",
                                            "todos") if k in use.input)
        out[(c.name, str(first))] = (c.status, c.named, thread)
    return out


def test_every_line_of_every_recording_is_read():
    for path in (TOUR, WORKFLOW, INTERRUPTED):
        assert detect.detect_file(path).format == "claude-code"
        idx = SessionIndex(path).build()
        for name, th in idx.threads.items():
            assert len(th) >= lines(Path(th.path)), (path.name, name)
            assert "unparsed" not in th.kinds and "unknown" not in th.kinds, (path.name, name)
        # the CLI's request bookkeeping (api-request*, prompt snapshots, listings, cost-state…) is
        # hidden state, never a visible card
        for name in idx.threads:
            for ev in visible(idx, name):
                assert ev.kind not in ("attachment", "api-request", "api-request-blob",
                                       "api-request-shape", "cost-state", "tools-used"), ev.kind
                assert ev.role in ("user", "assistant", "tool", "system", "error"), ev.role


def test_the_tour_reads_as_it_happened():
    idx = SessionIndex(TOUR).build()
    assert idx.summary.title == "Give me a tour of your tools: shell, files, search, a sub-agent."
    assert idx.summary.models == ["claude-sonnet-4-5"]
    assert idx.summary.usage and idx.summary.usage["cost"] > 0
    calls = calls_by_input(idx)
    assert calls == {
        ("TodoWrite", str([{"content": "Run shell commands", "status": "in_progress",
                            "activeForm": "Running shell commands"},
                           {"content": "Write, read and edit a file", "status": "pending",
                            "activeForm": "Working on a file"},
                           {"content": "Ask a sub-agent", "status": "pending",
                            "activeForm": "Asking a sub-agent"}])): ("error", None, "main"),
        ("Bash", "echo hello from bash && printf 'a\\nb\\n' | wc -l"): ("completed", None, "main"),
        ("Bash", "ls /definitely/not/here"): ("error", None, "main"),
        ("Write", "/home/user/demo/notes.md"): ("completed", None, "main"),
        ("Read", "/home/user/demo/notes.md"): ("completed", None, "main"),
        ("Grep", "TODO"): ("completed", None, "main"),
        ("Glob", "**/*.md"): ("completed", None, "main"),
        ("Edit", "/home/user/demo/notes.md"): ("completed", None, "main"),
        ("Agent", "Check the working directory"): ("completed", None, "main"),
        # -p refuses what --allowedTools does not allow: the call never ran, and nobody was asked
        # (the CLI files it as "user-rejected"): it reads "denied by settings", not by the user
        ("WebFetch", "https://example.com/"): ("error", "denied_by_settings", "main"),
        ("Read", "/home/user/demo/missing.txt"): ("error", None, "main"),
        ("Bash", "pwd"): ("completed", None, "ae4ec7844d73bdd8f"),
    }
    # an error result reads as the CLI's words, without the tags it wraps them in for the model
    todo = next(c for c in idx.calls.calls.values() if c.name == "TodoWrite")
    (ev,) = load_events(idx, *todo.result, todo.result[1] + 1)
    assert event_text(ev) == ("Error: No such tool available: TodoWrite. TodoWrite is disabled for this"
                              " session, in subagents as well as here.")
    # the background sub-agent is nested under the Agent call that started it
    agent = next(c for c in idx.calls.calls.values() if c.name == "Agent")
    assert agent.subthread == "ae4ec7844d73bdd8f"
    assert idx.threads["ae4ec7844d73bdd8f"].label == "general-purpose · Check the working directory"
    sub = [e.text() for e in visible(idx, "ae4ec7844d73bdd8f")]
    assert sub[0] == "Find out which directory you are in and report it in one sentence."
    assert sub[-1] == "The working directory is `/home/user/demo`."

    evs = visible(idx)
    said = [(e.author or e.role, e.text()) for e in evs if e.role != "tool"]
    assert said[0] == ("user", "Give me a tour of your tools: shell, files, search, a sub-agent.")
    assert ("user", "Is the notes file still there?") in said  # the --continue turn
    # the retried 529 says what failed and that it was retried, in one line
    (err,) = [e for e in evs if e.role == "error"]
    assert event_text(err).startswith("API error 529") and "retry 1 of 10" in event_text(err)
    # the background agent's completion is a task notification, not the person speaking
    (note,) = [e for e in evs if e.kind == "task_notification"]
    assert (note.role, note.author) == ("system", None)
    assert event_text(note).startswith('Agent "Check the working directory" finished\n<task-notification>')
    # thinking came through, in the main thread and the sub-agent's
    assert sum(b.kind == "thinking" for e in evs for b in e.blocks) == 3
    # the Agent call's result is one line saying it started in the background, not the CLI's
    # long note to the model
    (res,) = [b for e in evs for b in e.blocks if b.kind == "tool_result" and b.tool_use_id == agent.id]
    assert [b.kind for b in res.content] == ["notice"]
    assert res.content[0].text == ("started in the background · Check the working directory"
                                   " · agent ae4ec7844d73bdd8f")


def page(tmp_path, path) -> str:
    from viewer.web import create_app

    app = create_app({"ROOTS": [str(PROJECT)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    return app.test_client().get("/s/" + path.stem).get_data(as_text=True)


def test_the_tour_page_shows_what_a_user_reads(tmp_path):
    html = page(tmp_path, TOUR)
    text = unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))
    for words in ("Give me a tour of your tools", "hello from bash",
                  "ls: cannot access '/definitely/not/here': No such file or directory",
                  "Fixed: nothing left to do.", "Sub-agent: general-purpose · Check the working directory",
                  "Claude requested permissions to use WebFetch", "API error 529",
                  "started in the background", "Is the notes file still there?",
                  "File does not exist."):
        assert words in text, words
    # the task notification reads as the CLI's, not as the person's
    assert re.search(r'<span class="who role-word">system</span>\s*<span class="kind">task notification</span>', html)
    assert html.count('<span class="who role-word">user</span>') == 2  # the two prompts typed
    assert 'class="state denied"' in html or ">denied<" in html.lower()


def test_an_interrupted_call_reads_as_interrupted_not_refused():
    # SIGINT while the Bash call ran: the CLI files it as "user-rejected" with the refusal's words
    # to the model, but no permission decision is on the line (every refusal has one): interrupted
    idx = SessionIndex(INTERRUPTED).build()
    ((name, state, named),) = [(c.name, c.status, c.named) for c in idx.calls.calls.values()]
    assert (name, state, named) == ("Bash", "error", "interrupted")
    evs = visible(idx)
    assert [e.kind for e in evs][-1] == "interrupt"
    assert event_text(evs[-1]) == "Request interrupted by user for tool use"


def test_sources_say_how_the_recordings_were_made():
    words = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert "2.1.331" in words and "fake_anthropic_api.py" in words
    for path in (TOUR, WORKFLOW, INTERRUPTED):
        assert path.name in words
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[2])
        assert first.get("version") == "2.1.331"


def test_a_workflows_agents_are_nested_under_its_call(tmp_path):
    # 2.1.331 writes the agents of a Workflow run to subagents/workflows/<run id>/ and names the
    # run in the Workflow call's result (toolUseResult.runId): the files say which call ran them
    idx = SessionIndex(WORKFLOW).build()
    (call,) = [c for c in idx.calls.calls.values() if c.name == "Workflow"]
    agents = {"a53cc8ce9bbc87972": "workflow agent · check:files",
              "a1d20c282a9f360fe": "workflow agent · check:date"}
    assert sorted(idx.subthreads(call)) == sorted(agents)
    for name, label in agents.items():
        assert idx.threads[name].label == label
        assert idx.threads[name].meta["parent_call"] == call.id
    said = {name: [event_text(e) for e in visible(idx, name) if e.role == "assistant"] for name in agents}
    assert said == {"a53cc8ce9bbc87972": ["Bash\nls\nList files", "Files: README.md, notes.md."],
                    "a1d20c282a9f360fe": ["It is a fine day."]}
    (res,) = [b for e in visible(idx) for b in e.blocks if b.kind == "tool_result"]
    assert res.content[0].text == "started in the background · two-checks · run wf_0c4c9834-9c0"
    # each agent's task reads as the script's words, under a line saying the script computed it
    (task,) = [e for e in visible(idx, "a1d20c282a9f360fe") if e.role == "user"]
    assert [(b.kind, b.text) for b in task.blocks] == [
        ("notice", "task computed by the workflow script"), ("text", "Say what day it is.")]
    # on the page both agents open inside the Workflow call's card, not as loose threads
    html = page(tmp_path, WORKFLOW)
    thread_div = re.search(r'<div class="call-thread"[^>]*>(.*?)</div>\s*(?:</div>|<)', html, re.S)
    assert thread_div and thread_div.group(1).count('<details class="subthread"') == 2
    assert "Sub-agent: workflow agent · check:files" in html and "Sub-agent: workflow agent · check:date" in html
    # and the Markdown export nests both under the call
    from viewer.export import Export

    md = "".join(Export(idx, "md").chunks())
    assert md.count("**Sub-agent: workflow agent · check:") == 2
    assert md.index("**Tool: Workflow**") < md.index("**Sub-agent: workflow agent")


def test_the_markdown_export_keeps_each_block_apart():
    # a streamed turn is a line per block: the thinking's quote swallowed the text after it, and a
    # call's heading ran on into the text before it
    from markdown_it import MarkdownIt

    from viewer.export import Export

    md = "".join(Export(SessionIndex(TOUR).build(), "md").chunks())
    html = MarkdownIt().render(md)
    quotes = re.findall(r"<blockquote>(.*?)</blockquote>", html, re.S)
    first = next(q for q in quotes if "The user wants a tour" in q)
    assert "write down" not in first and "writing down a plan" not in first
    assert "<p>I'll start by writing down a plan.</p>" in html
    assert "<p><strong>Tool: Bash</strong>" in html


def test_a_workflows_script_reads_as_written(tmp_path):
    # the Workflow call's input is one long script: shown as its lines, not as a JSON string full of
    # \n escapes; in the Markdown export as a fenced block
    html = page(tmp_path, WORKFLOW)
    card = html[html.index('<div class="tool tool-fields"'):]
    field = re.search(r'<div class="field-text"><div class="field-name">script</div>(.*?)</pre>', card, re.S)
    assert field, "the script is a field of its own"
    text = unescape(field.group(1))
    assert "export const meta = {name: 'two-checks'" in text
    assert "\nphase('Check')\nconst [a, b] = await parallel([" in text and "\\n" not in text
    from viewer.export import Export

    md = "".join(Export(SessionIndex(WORKFLOW).build(), "md").chunks())
    assert "script:\n\n```\nexport const meta = {name: 'two-checks'" in md


def _copy_until(src: Path, dst: Path, marker: str) -> list[str]:
    """The session `src` (with its sub-agent folder) written to `dst` up to the first line holding
    `marker`; the lines from there on are returned, to append later as the CLI would."""
    import shutil
    rows = src.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, r in enumerate(rows) if marker in r)
    dst.write_text("".join(rows[:cut]), encoding="utf-8")
    if src.with_suffix("").is_dir():
        shutil.copytree(src.with_suffix(""), dst.with_suffix(""))
    return rows[cut:]


def test_a_background_call_runs_until_its_task_notification(tmp_path):
    # the Agent and the Workflow calls return at once with "async_launched": their work goes on.
    # They read "running in the background" until the task notification (first queued, then sent
    # to the model) says the work ended — in one read and in a live tail alike. (The Agent's
    # sub-agent had ended its turn before: its files say so, and without a notification the call
    # reads finished with none received; test_claude_code_background.py has the agent at work. So
    # did the Workflow's run: its workflows/<run id>.json says completed, and
    # test_claude_code_workflow_background.py has it with no such file yet.)
    for src, name, sub, before in ((TOUR, "Agent", "ae4ec7844d73bdd8f", ("completed", "finished_unreported")),
                                   (WORKFLOW, "Workflow", "wf_0c4c9834-9c0", ("completed", "finished_unreported"))):
        path = tmp_path / src.name
        rest = _copy_until(src, path, "<task-notification>")
        idx = SessionIndex(path).build()
        (call,) = [c for c in idx.calls.calls.values() if c.name == name]
        assert (call.status, call.named, call.state) == (*before, before[1]), name
        assert call.result is not None and call.finished_at is not None
        if sub:
            assert call.subthread == sub  # still nested under its call
        with path.open("a", encoding="utf-8") as f:
            f.writelines(rest)
        idx.refresh()
        call = idx.calls.call(call.id)
        assert (call.status, call.named) == ("completed", None), name
        done = SessionIndex(path).build().calls.call(call.id)
        assert (done.status, done.named, done.finished_at) == ("completed", None, call.finished_at)
        # it ended when the notification came, not when it was launched
        (launched,) = load_events(idx, *call.result, call.result[1] + 1)
        assert call.finished_at > launched.timestamp.timestamp()


def test_an_auto_compaction_reads_as_the_cli_did_it(tmp_path):
    # the context filled up (the reply's usage said 199k tokens): the CLI compacted on its own
    # before the next turn, and that turn was answered from the summary
    idx = SessionIndex(AUTO_COMPACTED).build()
    seen = [(e.kind, event_text(e, False).split("\n")[0]) for e in visible(idx)]
    assert seen == [("message", "Read the big log."),
                    ("message", "I read the whole log: 4,000 lines, the last one says BUILD OK."),
                    ("message", "What was in the log?"),
                    ("compaction", "Conversation compacted (auto, 199,087 → 2,709 tokens)"),
                    ("compact_summary", "Summary of the conversation before compaction"),
                    ("message", "The log ended with BUILD OK.")]
    assert idx.summary.unparsed == 0
    # the prompt that found the context full was kept verbatim: the boundary says so, with a link
    # up to it (it stands above the boundary in the file)
    from viewer.export import Export
    from viewer.timeline import Timeline
    from viewer.web import create_app

    views = Timeline(idx).events("main", 0, len(idx.threads["main"])).events
    (boundary,) = [v for v in views if v.ev.kind == "compaction"]
    (kept,) = [v.ev.id for v in views if v.ev.text() == "What was in the log?" and not v.ev.hidden]
    assert boundary.kept_from == kept
    root = tmp_path / "root"
    root.mkdir()
    (root / "auto.jsonl").write_bytes(AUTO_COMPACTED.read_bytes())
    page = unescape(create_app({"ROOTS": [str(root)], "NO_CACHE": True, "WATCH": False}).test_client()
                    .get("/s/auto").get_data(as_text=True))
    assert "Conversation compacted (auto, 199,087 → 2,709 tokens)" in page
    said = f'↳ kept verbatim from <a href="/s/auto/m/{kept}">this message</a> on; what came before it was summarized'
    assert page.index("Conversation compacted (auto") < page.index(said) < page.index("Summary of the conversation")
    assert f"kept verbatim from [this message](#m-{kept}) on" in "".join(Export(idx, "md").chunks())


def test_a_skills_instructions_show_folded_after_its_call(tmp_path):
    # the CLI's screen says only that the skill loaded; what it told the model steered the rest,
    # so the viewer shows it, folded, right after the Skill call
    idx = SessionIndex(SKILL).build()
    seen = [(e.kind, e.role) for e in visible(idx)]
    assert seen == [("message", "user"), ("message", "assistant"), ("message", "assistant"),
                    ("tool_result", "tool"), ("tool_context", "system"), ("message", "assistant"),
                    ("message", "assistant"), ("tool_result", "tool"), ("message", "assistant")]
    (loaded,) = [e for e in visible(idx) if e.kind == "tool_context"]
    (skill,) = [c for c in idx.calls.calls.values() if c.name == "Skill"]
    assert loaded.parent == skill.id and skill.status == "completed"
    (chip,) = loaded.blocks
    assert chip.kind == "context" and chip.label == "skill release-notes: its instructions, loaded for the model"
    assert "List every change since the last tag" in chip.text
    from viewer.web import create_app

    root = tmp_path / "root"
    root.mkdir()
    (root / "skill.jsonl").write_bytes(SKILL.read_bytes())
    page = unescape(create_app({"ROOTS": [str(root)], "NO_CACHE": True, "WATCH": False})
                    .test_client().get("/s/skill").get_data(as_text=True))
    at = page.index("skill release-notes: its instructions, loaded for the model")
    assert page.index("Launching skill: release-notes") < at < page.index("Following the skill")
    assert "List every change since the last tag" in page[at:]
