"""Claude Code 2.0's refusals with the person's comment: denied by the user, their words shown.

2.0.5 writes a call turned down with "No, and tell Claude what to do differently" as the bare
comment (`is_error`, `toolUseResult` "Error: <comment>", nothing else on the line): the shape of a
tool's own thrown failure. A Bash call's own failures open with its exit code; an MCP tool's may be
any words, so only a call of the tools whose failures never read as words is named denied. 2.0.37
puts the comment after "The user provided the following reason for the rejection:". The lines are
the corpus's (me-next-image-errors, coderabbit-thinking), cut down.
"""

import json

from viewer.index import SessionIndex
from viewer.timeline import load_events
from viewer.web import create_app

_ENV = {"isSidechain": False, "userType": "external", "cwd": "/home/u/demo", "sessionId": "s20",
        "gitBranch": "main"}
_REFUSED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
            "file edit, the new_string was NOT written to the file). ")


def _lines(version="2.0.5"):
    out, n = [], 0

    def add(rec):
        nonlocal n
        n += 1
        out.append({**_ENV, "version": version, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n > 1 else None,
                    "timestamp": f"2025-10-04T00:0{n // 10}:{n % 10}0.000Z", **rec})

    def call(cid, name, inp, text, **extra):
        add({"type": "assistant", "message": {"id": f"m{cid}", "type": "message", "role": "assistant",
             "model": "claude-sonnet-4-5-20250929", "content": [
                 {"type": "tool_use", "id": cid, "name": name, "input": inp}]}})
        add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": text, "is_error": True, "tool_use_id": cid}]},
             "toolUseResult": "Error: " + text, **extra})

    add({"type": "user", "message": {"role": "user", "content": "commit the tokenizer"}})
    call("t1", "Bash", {"command": "git commit -m tokenizer"}, "please add transformer.js too first")
    call("t2", "Bash", {"command": "pytest"}, "Exit code 1\nFAILED test_x.py")
    call("t3", "mcp__github__create_issue", {"title": "x"}, "repository not found")
    call("t4", "Write", {"file_path": "/home/u/demo/a.txt", "content": "a"},
         "EACCES: permission denied, open '/home/u/demo/a.txt'")
    call("t5", "ExitPlanMode", {"plan": "rename"}, _REFUSED + "The user provided the following reason for the "
         "rejection:  Let's keep the name of the py file")
    return out


def _session(tmp_path, version="2.0.5"):
    folder = tmp_path / "projects" / "-home-u-demo"
    folder.mkdir(parents=True)
    path = folder / "s20.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _lines(version)))
    return path


def test_a_bash_call_turned_down_with_a_comment_is_denied_by_the_user(tmp_path):
    idx = SessionIndex(_session(tmp_path)).build()
    named = {c.id: (c.status, c.named) for c in idx.calls.calls.values()}
    assert named == {
        "t1": ("error", "denied"),  # the person's words, not a failure
        "t2": ("error", None),  # the command failed
        "t3": ("error", None),  # an MCP tool's failure may be any words: it stays an error
        "t4": ("error", None),  # an errno: the file system refused, not the person
        "t5": ("error", "denied"),  # 2.0.37's refusal with its reason
    }
    assert idx.calls.errors() == 3  # the two refusals are not counted as errors
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    results = {b.tool_use_id: b for e in evs for b in e.tool_results()}
    assert [(b.kind, b.text) for b in results["t1"].content] == [("text", "please add transformer.js too first")]
    # 2.0.37's long text folds into one line, the person's reason stays as the result's text
    assert [(b.kind, b.text) for b in results["t5"].content] == [
        ("notice", "the user refused it and said:"), ("text", "Let's keep the name of the py file")]


def test_the_page_names_the_refusal_and_shows_the_comment(tmp_path):
    path = _session(tmp_path)
    app = create_app({"ROOTS": [str(tmp_path / "projects")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "TESTING": True})
    html = app.test_client().get("/s/-home-u-demo~s20").get_data(as_text=True)
    assert path.exists() and "please add transformer.js too first" in html

    def card(cid):
        start = html.index(f'id="tc-{cid}"')
        return html[start:html.index(f'id="tc-{cid}-result"', start) + 400]

    assert "denied by user" in card("t1") and "the user refused it and said:" in card("t1")
    assert "please add transformer.js too first" in card("t1")
    assert "denied by user" not in card("t2") and "the user refused" not in card("t2")
    assert "denied by user" not in card("t3")


def test_which_calls_words_can_refuse_is_the_format_s_to_say():
    """The shared call map knows no tool names: it asks the format (`refused_in_words`). A format
    without the hook leaves a words-only error result a plain error; Claude Code names its Bash
    and file edits, not an MCP tool."""
    from viewer.formats import claude_code
    from viewer.model import USER_WORDS, Event, Ref, ToolResult, ToolUse, Text
    from viewer.toolcalls import ToolCallMap

    def states(refused_in_words):
        calls = ToolCallMap()
        for i, name in enumerate(("Bash", "Edit", "mcp__github__create_issue")):
            use = Event(Ref("main", 2 * i + 1, 0, 0), "assistant", blocks=[ToolUse(f"t{i}", name, {})])
            said = Event(Ref("main", 2 * i + 2, 0, 0), "user", blocks=[ToolResult(
                f"t{i}", [Text("not this way, use the helper")], True, state=USER_WORDS)])
            calls.observe(use, 2 * i, None, "main", refused_in_words)
            calls.observe(said, 2 * i + 1, None, "main", refused_in_words)
        return {c.name: c.state for c in calls.calls.values()}

    assert states(claude_code.refused_in_words) == {
        "Bash": "denied", "Edit": "denied", "mcp__github__create_issue": "error"}
    assert states(None) == {"Bash": "error", "Edit": "error", "mcp__github__create_issue": "error"}


def test_a_failure_the_cli_wrapped_in_tool_use_error_is_an_error_not_a_refusal(tmp_path):
    """The CLI's own failures of an edit reach the model wrapped in `<tool_use_error>` with
    `toolUseResult` "Error: " + the inner words ("File has not been read yet…", "String to replace
    not found in file…": the corpus's me-next-image-errors, seven such Edit calls). The tags were
    taken off before the words were asked whether they are only the person's, so these read as
    "denied by user"; a wrapped failure is the CLI's, an error."""
    lines = _lines()[:1]
    n = len(lines)
    for cid, inner in (("w1", "File has not been read yet. Read it first before writing to it."),
                       ("w2", "String to replace not found in file.\nString:     \"buildCommand\": \"git\"")):
        n += 2
        lines.append({**_ENV, "version": "2.0.5", "uuid": f"u{n - 1}", "parentUuid": f"u{n - 2}",
                      "timestamp": f"2025-10-04T00:01:{n:02d}.000Z", "type": "assistant", "message": {
                          "id": f"m{cid}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                          "content": [{"type": "tool_use", "id": cid, "name": "Edit",
                                       "input": {"file_path": "/home/u/demo/a.py", "old_string": "a", "new_string": "b"}}]}})
        lines.append({**_ENV, "version": "2.0.5", "uuid": f"u{n}", "parentUuid": f"u{n - 1}",
                      "timestamp": f"2025-10-04T00:01:{n:02d}.500Z", "type": "user", "message": {"role": "user", "content": [
                          {"type": "tool_result", "content": f"<tool_use_error>{inner}</tool_use_error>",
                           "is_error": True, "tool_use_id": cid}]}, "toolUseResult": "Error: " + inner})
    folder = tmp_path / "projects" / "-home-u-demo"
    folder.mkdir(parents=True)
    (folder / "s21.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    idx = SessionIndex(folder / "s21.jsonl").build()
    named = {c.id: (c.status, c.named) for c in idx.calls.calls.values()}
    assert named == {"w1": ("error", None), "w2": ("error", None)}
    assert idx.calls.errors() == 2
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    results = {b.tool_use_id: b for e in evs for b in e.tool_results()}
    assert results["w1"].content[0].text == "File has not been read yet. Read it first before writing to it."


def test_a_bare_error_of_a_2_1_cli_is_not_taken_for_the_person_s_comment(tmp_path):
    """Only 2.0 wrote a refusal's comment bare; 2.1 puts it after "the user said:". A 2.1 Bash
    call blocked by a PreToolUse hook has the hook's output as its whole error result, with
    `toolUseResult` "Error: " + it (the corpus's spotter-progress-compact, 2.1.39: "Pre-commit
    validation failed: …", three calls, each right after its PreToolUse hooks' `hook_progress`): it
    read as "denied by user"; it is the hook's block (tests/test_claude_code_hook_blocks.py)."""
    path = _session(tmp_path, "2.1.39")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines = lines[:1] + [x for x in lines if x.get("uuid") in ("u2", "u3")]
    lines[2]["message"]["content"][0]["content"] = "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted."
    lines[2]["toolUseResult"] = "Error: " + lines[2]["message"]["content"][0]["content"]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    idx = SessionIndex(path).build()
    assert {c.id: (c.status, c.named) for c in idx.calls.calls.values()} == {"t1": ("error", "blocked_by_hook")}
