"""mini-swe-agent's text-based trajectories: the command in an answer's fenced block is a call, the
user message after it its result (written by the real mini-swe-agent 1.17.5 and 2.4.6:
tests/golden/make_mini_swe_agent_golden.py)."""

import json
import re
from pathlib import Path

import pytest

from viewer.index import SessionIndex
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import ROOT, bounded

FIXTURES = ROOT / "test_data" / "formats" / "openai-chat"
V1 = FIXTURES / "mini-swe-agent-1.17.5-textbased" / "calc-divide.traj.json"
V2 = FIXTURES / "mini-swe-agent-2.4.6-textbased" / "calc-divide.traj.json"
# what the agent ran, in order, and whether it failed (the run's script: see the golden script)
RAN = [("ls -1", False), ("cat calc.py", False), ("grep -n divide missing_file.py", True),
       ("sed -i 's/return a \\/ b/return a \\/ b if b else 0/' calc.py && cat calc.py", False),
       ("sleep 5", True), ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff", False)]


def events(path: Path) -> tuple:
    idx = SessionIndex(path).build()
    return idx, load_events(idx, "main", 0, len(idx.threads["main"]))


@pytest.mark.parametrize("path", [V1, V2], ids=["1.17.5", "2.4.6"])
def test_every_command_is_a_call_paired_with_what_it_did(path):
    idx, evs = events(path)
    uses = [b for ev in evs for b in ev.blocks if b.kind == "tool_use"]
    assert [(u.name, u.input["command"]) for u in uses] == [("bash", c) for c, _ in RAN]
    states = [idx.calls.get(u.id).status for u in uses]
    assert states == ["error" if failed else "completed" for _, failed in RAN]
    assert idx.calls.orphans == {} and idx.summary.tool_calls == len(RAN)
    # the answer's text keeps the thought, not the block its card shows
    first = next(ev for ev in evs if any(b.kind == "tool_use" for b in ev.blocks))
    assert first.role == "assistant" and first.text().strip() == "THOUGHT: First I look at what the folder holds."


@pytest.mark.parametrize("path", [V1, V2], ids=["1.17.5", "2.4.6"])
def test_results_read_as_output_and_exit_code(path):
    _, evs = events(path)
    results = {b.tool_use_id: b for ev in evs for b in ev.blocks if b.kind == "tool_result"}
    texts = [" ".join(t.text for t in r.content) for r in results.values()]
    assert texts[0] == "calc.py\n"  # the <returncode> / <output> wrapper is taken off
    assert texts[2].startswith("exit code 2\ngrep: missing_file.py: No such file or directory")
    assert not any("<returncode>" in t for t in texts)
    assert "return a / b if b else 0" in texts[-1]  # the submission answers the last call


@pytest.mark.parametrize("path", [V1, V2], ids=["1.17.5", "2.4.6"])
def test_a_format_error_stays_the_users_and_its_answer_makes_no_call(path):
    _, evs = events(path)
    i = next(i for i, ev in enumerate(evs) if ev.role == "user" and "found 2" in ev.text())
    # 1.x: the answer is a message of its own; 2.x keeps it only beside the reply, shown there
    answer = evs[i - 1] if path == V1 else evs[i]
    assert answer.role == "assistant" if path == V1 else evs[i - 1].role == "tool"
    assert not any(b.kind == "tool_use" for b in answer.blocks)
    assert answer.text().count("import calc") == 1  # both blocks still shown, as written


def test_only_a_mini_swe_agent_trajectory_reads_fenced_blocks_as_calls(tmp_path):
    doc = json.loads(V1.read_text())
    del doc["trajectory_format"]
    plain = tmp_path / "chat.json"
    plain.write_text(json.dumps(doc["messages"]))
    idx, evs = events(plain)
    assert idx.summary.tool_calls == 0
    assert any("```bash" in ev.text() or "ls -1" in ev.text() for ev in evs if ev.role == "assistant")


def test_page_shows_the_commands_as_cards_with_their_state(tmp_path):
    app = create_app({"ROOTS": [str(V1.parent)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    client = app.test_client()
    home = client.get("/").get_data(as_text=True)
    (link,) = set(re.findall(r'href="(/s/[^"]+)"', home))
    html = client.get(link).get_data(as_text=True)
    assert html.count('class="tool ') == len(RAN)
    assert html.count('<span class="state error">error</span><span class="dur"') == 2  # (on a card)
    assert "grep: missing_file.py: No such file or directory" in html
    assert "&lt;returncode&gt;" not in html


def xml_run(tmp_path, regex: str) -> Path:
    """The real 1.17.5 run as a `<bash_code>` config (mini-swe-agent's `swebench_xml.yaml`) writes
    it: the saved `action_regex` and every answer's block in that form."""
    doc = json.loads(V1.read_text())
    doc["info"]["config"]["agent"]["action_regex"] = regex
    for m in doc["messages"]:
        if m["role"] == "assistant":
            m["content"] = re.sub(r"```bash\s*\n(.*?)\n```", r"<bash_code>\1</bash_code>", m["content"],
                                  flags=re.DOTALL)
    path = tmp_path / "xml" / "calc-divide.traj.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    return path


def test_a_custom_action_regex_saved_with_the_run_pairs_its_calls(tmp_path):
    idx, evs = events(xml_run(tmp_path, "<bash_code>(.*?)</bash_code>"))
    uses = [b for ev in evs for b in ev.blocks if b.kind == "tool_use"]
    assert [u.input["command"] for u in uses] == [c for c, _ in RAN]
    assert [idx.calls.get(u.id).status for u in uses] == ["error" if f else "completed" for _, f in RAN]
    assert idx.calls.orphans == {}
    # the answer's text keeps the thought; its card shows the command (not twice)
    first = next(ev for ev in evs if any(b.kind == "tool_use" for b in ev.blocks))
    assert first.text().strip() == "THOUGHT: First I look at what the folder holds."
    # the format error (two blocks) is still no call, in the run's own form too
    i = next(i for i, ev in enumerate(evs) if ev.role == "user" and "found 2" in ev.text())
    assert not any(b.kind == "tool_use" for b in evs[i - 1].blocks)


@pytest.mark.parametrize("regex", [r"(<bash_code>)+(.*?)</bash_code>", r"<bash_code>((?:.|\s)*)*</bash_code>",
                                   r"<bash_code>(.*?)\1", "<bash_code>(.*?", "x" * 400 + "(.*)"])
def test_a_saved_regex_that_could_hang_or_does_not_compile_is_not_run(tmp_path, regex):
    path = xml_run(tmp_path, regex)
    idx, evs = bounded(lambda: events(path), timeout=30)
    assert idx.summary.tool_calls == 0  # not paired, nothing lost: the answers show as written
    assert any("<bash_code>ls -1</bash_code>" in ev.text() for ev in evs if ev.role == "assistant")


def test_a_saved_regex_is_not_run_on_a_huge_answer(tmp_path):
    path = xml_run(tmp_path, "<bash_code>(.*?)</bash_code>")
    doc = json.loads(path.read_text())
    first = next(m for m in doc["messages"] if m["role"] == "assistant")
    first["content"] += "\n" + "<bash_code>" * 20_000  # 220,000 characters: the pattern's worst case
    path.write_text(json.dumps(doc))
    idx, evs = bounded(lambda: events(path), timeout=30)
    assert idx.summary.tool_calls == len(RAN) - 1  # every other answer is still paired
