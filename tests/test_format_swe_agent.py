"""swe-agent adapter: SWE-agent `.traj` trajectories (0.x and 1.x), read through the index as the page
reads them. The 1.x fixture is a real trajectory from SWE-agent's own test data (MIT; see
test_data/formats/swe-agent/README.md); the others are made by tests/golden/make_swe_agent_fixtures.py
from SWE-agent's writer."""

import json
import re
import shutil

import pytest

from viewer import tools
from viewer.formats import detect
from viewer.store import Store
from viewer.web import create_app

from conftest import ROOT, built, notices, result_of, tool_uses

FIXTURES = ROOT / "test_data" / "formats" / "swe-agent"
REAL = FIXTURES / "real-1.x-test-repo" / "SWE-agent__test-repo-i1.traj"
V0 = FIXTURES / "0.x-pydicom-trimmed" / "pydicom__pydicom-1458.traj"
COST = FIXTURES / "1.x-cost-limit" / "calc__divide-1.traj"
RETRY = FIXTURES / "1.x-retry-agent" / "calc__divide-2.traj"
HOSTILE = FIXTURES / "hostile" / "hostile.traj"


def visible(evs):
    return [ev for ev in evs if not ev.hidden]


@pytest.mark.parametrize("path", [REAL, V0, COST, RETRY, HOSTILE], ids=lambda p: p.parent.name)
def test_every_trajectory_is_detected_as_swe_agent(path):
    assert detect.detect_file(path).format == "swe-agent"
    idx, _ = built(path)
    assert idx.calls.orphans == {} and idx.summary.unparsed == 0


def test_each_step_is_its_thought_its_command_and_what_it_printed():
    idx, evs = built(REAL)
    steps = [ev for ev in visible(evs) if ev.tool_uses()]
    assert len(steps) == 5
    # a function-calling run lends each step its call's own name and arguments
    assert [(u.name, u.input) for u in tool_uses(evs)] == [
        ("find_file", {"file_name": "missing_colon.py"}),
        ("open", {"path": "/SWE-agent__test-repo/tests/missing_colon.py"}),
        ("edit", {"search": "def division(a: float, b: float) -> float",
                  "replace": "def division(a: float, b: float) -> float:", "replace-all": False}),
        ("bash", {"command": "python3 /SWE-agent__test-repo/tests/missing_colon.py"}),
        ("bash", {"command": "submit"})]
    assert [idx.calls.get(u.id).status for u in tool_uses(evs)] == ["completed"] * 5
    first = steps[0]
    assert first.role == "assistant" and first.text().startswith("To start addressing this issue")
    assert result_of(evs, "step-1").content[0].text.endswith("/SWE-agent__test-repo/tests/missing_colon.py")
    # its execution time and the state after it, on a quiet line of the step
    assert notices(first) == ["step 1 · ran 0.28 s · in /SWE-agent__test-repo"]
    assert notices(steps[1])[0].endswith("open file /SWE-agent__test-repo/tests/missing_colon.py")
    # SWE-agent's edit (search / replace) reads as a diff
    assert [(e.old, e.new) for e in tools.edits(tool_uses(evs)[2].input)] == [
        ("def division(a: float, b: float) -> float", "def division(a: float, b: float) -> float:")]
    assert tools.view_of("edit", tool_uses(evs)[2].input) == "edit"


def test_the_system_prompt_and_the_template_fold_and_the_issue_is_the_prompt():
    idx, evs = built(REAL)
    system, task = visible(evs)[:2]
    assert system.role == "system" and [b.kind for b in system.blocks] == ["context"]
    assert system.blocks[0].label == "system prompt · 1,658 characters"
    assert system.blocks[0].text.startswith("SETTING: You are an autonomous programmer")
    assert task.role == "user" and [b.kind for b in task.blocks] == ["context", "text", "context"]
    assert task.text().startswith("SyntaxError: invalid syntax\nI'm running `missing_colon.py`")
    assert task.blocks[2].label == "instructions" and "INSTRUCTIONS:" in task.blocks[2].text
    assert idx.summary.title == "SyntaxError: invalid syntax"


def test_an_issue_with_long_runs_of_blank_lines_is_still_the_prompt(tmp_path):
    """Blank lines in the issue (and several before INSTRUCTIONS) are searched in linear time: the
    old `\\n\\s*\\n` rescanned each run of them from every line of it."""
    doc = json.loads(REAL.read_text())
    prompt = doc["history"][1]["content"]
    head, _, rest = prompt.partition("ISSUE:\n")
    issue, _, instructions = rest.partition("INSTRUCTIONS:")
    doc["history"][1]["content"] = (head + "ISSUE:\nA title\n" + "\n" * 5000 + "  \n\t\nthe body\n\r\n\n\n"
                                    + "INSTRUCTIONS:" + instructions)
    path = tmp_path / "blank.traj"
    path.write_text(json.dumps(doc))
    idx, evs = built(path)
    task = visible(evs)[1]
    assert [b.kind for b in task.blocks] == ["context", "text", "context"]
    assert task.blocks[1].text.startswith("A title\n\n") and task.blocks[1].text.endswith("\nthe body")
    assert task.blocks[2].text.startswith("INSTRUCTIONS:")
    assert idx.summary.title == "A title"


def test_the_history_copies_of_the_steps_are_hidden_not_lost():
    idx, evs = built(REAL)
    copies = [ev for ev in evs if ev.hidden]
    assert len(copies) == 8 and {ev.hidden_reason for ev in copies} == {"the model's copy of a step above"}
    assert not tool_uses(copies) and any("(Open file: n/a)" in ev.blocks[0].text for ev in copies)
    assert idx.summary.tool_calls == 5  # the copies make no second call


def test_the_run_ends_with_its_exit_status_the_patch_and_its_cost():
    idx, evs = built(REAL)
    end = evs[-1]
    assert end.role == "system" and end.kind == "result"
    assert notices(end) == [
        "Run ended · exit status: submitted · 5 API calls · 7,141 tokens sent, 243 received · $0.0195",
        "submitted the patch shown above (1 file: tests/missing_colon.py)",
        "final state: in /SWE-agent__test-repo · open file /SWE-agent__test-repo/tests/missing_colon.py"]
    assert end.usage == {"prompt_tokens": 7141, "completion_tokens": 243, "cost": 0.019520000000000006}
    assert end.model == "gpt-4o" and idx.summary.models == ["gpt-4o"]
    assert idx.summary.usage["source_cost"] == pytest.approx(0.01952)
    assert idx.summary.usage["tokens"] == 7141 + 243
    # the submit step's output is the patch: a diff of the file, as edits are drawn
    patch = result_of(evs, "step-5").content[0].text
    assert tools.result_view("bash", {"command": "submit"}, patch).kind == "diff"
    (edit,) = tools.unified_edits(patch)
    assert edit.path == "tests/missing_colon.py"
    assert "-> float:" in edit.new and "-> float:" not in edit.old


def test_0x_reads_the_action_as_a_shell_command_and_its_state_string():
    idx, evs = built(V0)
    assert [u.input["command"] for u in tool_uses(evs)] == [
        "create reproduce_bug.py", "python reproduce_bug.py",
        "edit 287:295\n        'BitsAllocated', 'Rows', 'Columns', 'SamplesPerPixel', 'PhotometricInterpretation'\n"
        "    ]\nend_of_edit", "rm reproduce_bug.py", "submit"]
    assert {u.name for u in tool_uses(evs)} == {"bash"}
    steps = [ev for ev in evs if ev.tool_uses()]
    assert notices(steps[0]) == ["step 1 · in /pydicom__pydicom · open file /pydicom__pydicom/reproduce_bug.py"]
    assert steps[0].text() == "First, I'll create a new Python script to reproduce the bug as described in the issue."
    # the demonstration is a folded chip; the issue's first line is the title
    demo = next(ev for ev in evs if ev.kind == "demonstration")
    assert [b.kind for b in demo.blocks] == ["context"] and "--- DEMONSTRATION ---" in demo.blocks[0].text
    assert idx.summary.title == "Pixel Representation attribute should be optional for pixel data handler"
    assert evs[-1].usage["cost"] == 1.26719 and evs[-1].model is None
    assert [e.path for e in tools.unified_edits(result_of(evs, "step-5").content[0].text)] == [
        "pydicom/pixel_data_handlers/numpy_handler.py"]


def test_a_step_swe_agent_did_not_run_and_an_exit_on_the_cost_limit():
    idx, evs = built(COST)
    steps = [ev for ev in visible(evs) if ev.role == "assistant"]
    assert notices(steps[1]) == ["no command in this answer: SWE-agent asked the model again"]
    assert not steps[1].tool_uses() and steps[1].text() == "I will now fix it, in two calls at once."
    # the step after it still gets its own call's name and arguments (an edit, drawn as a diff)
    edit = steps[2].tool_uses()[0]
    assert edit.name == "str_replace_editor" and edit.input["old_str"] == "    return a / b"
    assert [b.kind for b in steps[2].blocks][:2] == ["thinking", "text"]
    assert notices(steps[4]) == ["Exited (autosubmitted)"] and not steps[4].tool_uses()
    end = evs[-1]
    assert end.role == "system"  # it submitted: no error, though the limit stopped it
    assert notices(end)[:2] == [
        "Run ended · exit status: submitted (exit_cost) (submitted automatically: the cost limit was "
        "reached) · 4 API calls · 612,044 tokens sent, 4,311 received · $2.0183",
        "submitted a patch (1 file: calc.py)"]
    patch = next(b for b in end.blocks if b.kind == "text")
    assert tools.is_unified_diff(patch.text) and not patch.markdown
    assert end.model == "claude-sonnet-4-20250514"  # from the replay config's JSON string
    assert idx.summary.tool_calls == 3 and idx.summary.errors == 0


def test_a_command_recorded_but_not_run_is_an_error(tmp_path):
    doc = json.loads(COST.read_text())
    doc["trajectory"][1]["action"] = "vim calc.py"  # a blocked command: recorded, never run
    path = tmp_path / "blocked.traj"
    path.write_text(json.dumps(doc))
    idx, evs = built(path)
    call = idx.calls.get("step-2")
    assert call.status == "error"
    assert result_of(evs, "step-2").content[0].text.startswith("not run: SWE-agent could not use this answer")
    assert idx.calls.get("step-3").name == "str_replace_editor"  # the pairing goes on after it


def test_a_retry_agent_run_reads_its_chosen_attempt_and_a_failed_exit_is_an_error():
    idx, evs = built(RETRY)
    assert notices(evs[0]) == ["attempt 2 of 2 (chosen): SWE-agent's RetryAgent ran 2 attempts; the "
                               "others are in the raw view"]
    assert [u.input for u in tool_uses(evs)] == [{"command": "ls"}]
    end = evs[-1]
    assert end.role == "error" and notices(end)[:2] == [
        "Run ended · exit status: exit_format (repeated format, blocklist or syntax errors) · 2 API calls"
        " · 9,000 tokens sent, 100 received · $0.4000",
        "nothing submitted"]
    assert idx.summary.errors == 1


@pytest.mark.parametrize("src", [REAL, V0], ids=["1.x tool_call_ids", "0.x action"])
def test_a_history_without_steps_pairs_each_answer_with_its_observation(tmp_path, src):
    """A demonstration (`trajectories/demonstrations/*.traj`) holds only a history."""
    doc = json.loads(src.read_text())
    path = tmp_path / "demo.traj"
    path.write_text(json.dumps({"history": doc["history"]}))
    assert detect.detect_file(path).format == "swe-agent"
    idx, evs = built(path)
    uses = tool_uses(evs)
    assert len(uses) == (4 if src == REAL else 5)
    states = [idx.calls.get(u.id).status for u in uses]
    assert idx.calls.orphans == {}
    if src == REAL:  # the tool message's `tool_call_ids` (plural) answers its call
        assert uses[0].id == "call_fJuazlMUN5fQDQ73G6XSpYpx" and uses[0].name == "find_file"
        assert states == ["completed"] * 4
        assert result_of(evs, uses[0].id).content[0].text.startswith('Found 1 matches for "missing_colon.py"')
    else:  # 0.x: the message after an answer answers its action; the submit got no answer
        assert uses[0].input == {"command": "create reproduce_bug.py"}
        assert states == ["completed"] * 4 + ["pending"]
        assert result_of(evs, uses[1].id).content[0].text.startswith("Traceback (most recent call last)")


def test_other_formats_keep_their_files(tmp_path):
    """mini-swe-agent trajectories and plain message lists under `history` are not SWE-agent's."""
    mini = ROOT / "test_data" / "formats" / "openai-chat" / "mini-swe-agent-1.17.5-textbased" / "calc-divide.traj.json"
    assert detect.detect_file(mini).format == "openai-chat"
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"history": [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": "hello"}]}))
    assert detect.detect_file(plain).format == "openai-chat"


def test_a_folder_of_runs_lists_each_traj_file(tmp_path):
    root = tmp_path / "trajectories"
    run = root / "me" / "default__gpt-4o__t-0.00" / "SWE-agent__test-repo-i1"
    run.mkdir(parents=True)
    shutil.copy(REAL, run)
    (run / "SWE-agent__test-repo-i1.config.yaml").write_text("agent: {}\n")
    (run / "SWE-agent__test-repo-i1.pred").write_text('{"model_patch": ""}')
    (root / "me" / "default__gpt-4o__t-0.00" / "notes.traj").write_text("not json at all\n")
    found = Store([root]).sessions()
    assert [r.path for r in found] == [str(run / "SWE-agent__test-repo-i1.traj")]
    assert found[0].key == "me~default__gpt-4o__t-0.00~SWE-agent__test-repo-i1~SWE-agent__test-repo-i1"


def test_unified_diffs_read_per_file_and_hunk():
    patch = ("diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x\n"
             "--- old dashes\n+++ new dashes\n y\n@@ -10 +10 @@\n-p\n+q\n\\ No newline at end of file\n"
             "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n"
             "+hello\ndiff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
             "@@ -1 +0,0 @@\n-bye\n")
    assert tools.is_unified_diff(patch)
    got = [(e.path, e.action, e.old, e.new) for e in tools.unified_edits(patch)]
    assert got == [("a.py", None, "x\n-- old dashes\ny", "x\n++ new dashes\ny"), ("a.py", None, "p", "q"),
                   ("new.txt", "added", "", "hello"), ("gone.txt", "deleted", "bye", "")]
    assert tools.view_of("apply_patch", {"patch": patch}) == "edit"
    assert not tools.is_unified_diff("--- a heading in Markdown\nnot a diff")
    assert tools.result_view("bash", {"command": "git diff"}, patch, error=True).kind == "output"


def test_hostile_content_stays_text(tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copy(HOSTILE, root)
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    html = app.test_client().get("/s/hostile").get_data(as_text=True)
    assert "Run ended · exit status: &lt;img src=x onerror=" in html
    assert not re.search(r"<img[^>]*onerror|<script>alert", html)
