"""Attachments Claude Code 2.1 writes that its TUI shows under the prompt or the call, read as it
shows them where they were raw "attachment: …" cards behind the toggle.

Where each shape comes from:
- the CLI's attachment renderer (`AttachmentMessage`, as ported line for line to opentui/solid in a
  public fork: "Loaded <displayPath>", "Plan file referenced (<path>)", "Skills restored (<names>)",
  "<hookName> hook warning", "Allowed by <hookEvent> hook") and its attachment types
  (`nested_memory {path, displayPath, content: {path, type, content}}`, `plan_file_reference
  {planFilePath, planContent}`, `invoked_skills {skills: [{name, path, content}]}`,
  `hook_error_during_execution {content, hookName, toolUseID, hookEvent}`,
  `hook_permission_decision {decision, toolUseID, hookEvent}`);
- a 2.1.208 transcript line quoted in another reader's tests: a `nested_memory` attachment of
  `.claude/rules/typescript.md` with `globs` and `contentDiffersFromDisk`.
"""

from test_claude_code_questions import ENV, Lines, page_of, visible_text

from viewer.formats import claude_code
from viewer.model import Ref


def read(att):
    return claude_code.event({**ENV, "type": "attachment", "uuid": "a1", "parentUuid": "p1",
                              "timestamp": "2026-11-24T10:00:00.000Z", "attachment": att}, Ref("main", 1, 0, 1))


RULE = {"type": "nested_memory", "path": "/home/u/p/.claude/rules/typescript.md",
        "displayPath": ".claude/rules/typescript.md",
        "content": {"path": "/home/u/p/.claude/rules/typescript.md", "type": "Project",
                    "content": "Use strict TypeScript.\n", "globs": ["src/**/*.ts"],
                    "contentDiffersFromDisk": True,
                    "rawContent": '---\npaths:\n  - "src/**/*.ts"\n---\nUse strict TypeScript.\n'}}


def test_memory_files_plans_and_skills_the_cli_loaded_say_what_they_are():
    memory = read(RULE)
    assert not memory.hidden
    (chip,) = memory.blocks
    assert chip.kind == "context" and chip.label == ".claude/rules/typescript.md loaded for the model (memory file)"
    assert chip.text == "Use strict TypeScript.\n"
    plan = read({"type": "plan_file_reference", "planFilePath": "/home/u/.claude/plans/humble-wolf.md",
                 "planContent": "# Plan\n1. Add the port"})
    assert not plan.hidden and plan.blocks[0].label == "plan file /home/u/.claude/plans/humble-wolf.md referenced"
    assert plan.blocks[0].text == "# Plan\n1. Add the port"
    skills = read({"type": "invoked_skills", "skills": [{"name": "pdf", "path": "/s/pdf", "content": "…"},
                                                         {"name": "release-notes", "path": "/s/r", "content": "…"}]})
    assert not skills.hidden and skills.blocks[0].text == "skills restored: pdf, release-notes"


def test_a_hook_that_failed_while_running_is_in_sight_and_a_hooks_permission_decision_is_named():
    failed = read({"type": "hook_error_during_execution", "content": "spawn /bin/sh ENOENT",
                   "hookName": "PostToolUse:Bash", "toolUseID": "toolu_1", "hookEvent": "PostToolUse"})
    assert not failed.hidden and failed.kind == "hook"
    assert [b.text for b in failed.blocks] == [
        "hook PostToolUse:Bash failed while running (nothing was blocked)", "spawn /bin/sh ENOENT"]
    allowed = read({"type": "hook_permission_decision", "decision": "allow", "toolUseID": "toolu_1",
                    "hookEvent": "PreToolUse"})
    assert allowed.hidden and allowed.hidden_reason == "hook decision"
    assert allowed.blocks[0].text == "hook PreToolUse allowed the call"


def test_the_loaded_memory_file_shows_on_the_page(tmp_path):
    s = Lines()
    s.prompt("Fix the parser")
    s.add(type="attachment", attachment=RULE)
    s.add(type="attachment", attachment={"type": "hook_error_during_execution", "content": "spawn ENOENT",
                                         "hookName": "PostToolUse:Read", "toolUseID": "t", "hookEvent": "PostToolUse"})
    s.write(tmp_path)
    text = visible_text(page_of(tmp_path))
    assert ".claude/rules/typescript.md loaded for the model (memory file)" in text
    assert "hook PostToolUse:Read failed while running" in text
    assert "attachment: nested_memory" not in text


def test_calls_about_a_background_shell_or_task_name_it_in_their_header(tmp_path):
    """BashOutput {bash_id} and TaskOutput {task_id, block, timeout} as the corpus's sessions have
    them (coderabbit-thinking / spotter-progress-compact: `{"bash_id":"7d95c5"}`, `{"task_id":
    "b7636e2","block":true,"timeout":180000}`), KillShell {shell_id} (2.0's tool schema), TaskStop
    {task_id}, and the MCP resource tools (ReadMcpResourceTool {server, uri}): their headers were
    empty, the id only in the input's fields."""
    s = Lines()
    s.prompt("Watch the build")
    calls = [("t1", "BashOutput", {"bash_id": "7d95c5"}),
             ("t2", "TaskOutput", {"task_id": "b7636e2", "block": True, "timeout": 180000}),
             ("t3", "KillShell", {"shell_id": "7d95c5"}),
             ("t4", "TaskStop", {"task_id": "b7636e2"}),
             ("t5", "ReadMcpResourceTool", {"server": "github", "uri": "repo://acme/api/readme"})]
    for tid, name, inp in calls:
        s.call(tid, name, inp)
        s.result(tid, "ok")
    s.write(tmp_path)
    text = visible_text(page_of(tmp_path))
    for header in ("output of shell 7d95c5", "output of task b7636e2 · waits up to 180s", "stop shell 7d95c5",
                   "stop task b7636e2", "ReadMcpResourceTool repo://acme/api/readme from github"):  # (the page folds spaces)
        assert header in text


def test_a_plan_shows_the_permissions_it_asks_for_and_its_file(tmp_path):
    """ExitPlanMode as 2.1 writes it: the model sends `{allowedPrompts: [{tool, prompt}]}` and the
    CLI adds the plan and the file it saved it to before writing the line (`{allowedPrompts, plan,
    planFilePath}`, as recorded between the model and a client by another project's tests, and in
    exported transcripts quoting `ExitPlanMode: {"allowedPrompts":[{"tool":"Bash","prompt":"run
    vitest tests"}],"plan":…}`). The person approves the permissions with the plan; only the plan
    was shown."""
    s = Lines()
    s.prompt("Plan the footer fix")
    s.call("t1", "ExitPlanMode", {"allowedPrompts": [{"tool": "Bash", "prompt": "run vitest tests"},
                                                    {"tool": "Bash", "prompt": "<b>install</b> dependencies"}],
                                  "plan": "# Fix the footer\n\n1. Split it in two rows",
                                  "planFilePath": "/home/u/.claude/plans/humble-wolf.md"})
    s.result("t1", "User has approved your plan. You can now start coding.")
    s.write(tmp_path)
    page = page_of(tmp_path)
    text = visible_text(page)
    assert "Fix the footer" in text
    assert "with it, permission to: Bash: run vitest tests Bash: <b>install</b> dependencies" in text
    assert "<b>install</b>" not in page  # (escaped: the model's words)
    assert "plan file /home/u/.claude/plans/humble-wolf.md" in text
