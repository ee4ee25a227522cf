"""mini-swe-agent's text-based trajectories in headless Chromium: each command of an answer's block
is a bash card showing the command and what it printed, a failed one reads as an error, the run's
own `action_regex` (a `<bash_code>` config) pairs as the standard fences do. Fixtures written by the
real mini-swe-agent 1.17.5 and 2.4.6 (tests/golden/make_mini_swe_agent_golden.py)."""

import json
import re
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT

pytestmark = pytest.mark.browser

FIXTURES = ROOT / "test_data" / "formats" / "openai-chat"
RUNS = {"1.17.5": FIXTURES / "mini-swe-agent-1.17.5-textbased" / "calc-divide.traj.json",
        "2.4.6": FIXTURES / "mini-swe-agent-2.4.6-textbased" / "calc-divide.traj.json"}
COMMANDS = ["ls -1", "cat calc.py", "grep -n divide missing_file.py",
            "sed -i 's/return a \\/ b/return a \\/ b if b else 0/' calc.py && cat calc.py", "sleep 5",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"]
STATES = ["completed", "completed", "error", "completed", "error", "completed"]


def xml_config(src, dst):
    """The 1.17.5 run as mini-swe-agent's `swebench_xml.yaml` config writes it."""
    doc = json.loads(src.read_text())
    doc["info"]["config"]["agent"]["action_regex"] = "<bash_code>(.*?)</bash_code>"
    for m in doc["messages"]:
        if m["role"] == "assistant":
            m["content"] = re.sub(r"```bash\s*\n(.*?)\n```", r"<bash_code>\1</bash_code>", m["content"],
                                  flags=re.DOTALL)
    dst.write_text(json.dumps(doc))


@pytest.mark.parametrize("run", ["1.17.5", "2.4.6", "1.17.5 <bash_code>"])
def test_bash_cards_show_command_output_and_a_failed_exit(serve, watched_page, tmp_path, run):
    root = tmp_path / "runs"
    root.mkdir()
    if run.endswith("<bash_code>"):
        xml_config(RUNS["1.17.5"], root / "calc-divide.traj.json")
    else:
        shutil.copy(RUNS[run], root)
    srv = serve(root, WATCH=False)
    page = watched_page
    page.goto(srv.url + "/")
    page.locator("table.sessions td.title > a").first.click()
    expect(page).to_have_url(re.compile(r"/s/calc-divide\.traj$"))
    cards = page.locator(".tool.tool-shell")
    expect(cards).to_have_count(len(COMMANDS))
    expect(cards.locator(".tool-name")).to_have_text(["bash"] * len(COMMANDS))
    expect(cards.locator(".tool-input pre.cmd")).to_have_text([f"$ {c}" for c in COMMANDS])
    expect(cards.locator(".call-state .state")).to_have_text(STATES)
    expect(cards.nth(0).locator(".tool-result")).to_have_text(re.compile(r"^\s*calc\.py\s*$"))
    failed = cards.nth(2).locator(".tool-result")
    expect(failed).to_have_class(re.compile(r"\bis-error\b"))
    expect(failed).to_contain_text("exit code 2")
    expect(failed).to_contain_text("grep: missing_file.py: No such file or directory")
    expect(cards.nth(4).locator(".tool-result")).to_have_class(re.compile(r"\bis-error\b"))  # timed out
    expect(page.get_by_text("<returncode>")).to_have_count(0)
    expect(page.get_by_text("orphan result")).to_have_count(0)
    # the answer keeps its thought; the observation is folded into its call
    expect(page.get_by_text("THOUGHT: First I look at what the folder holds.")).to_be_visible()
    expect(page.locator("#rr-" + cards.nth(0).get_attribute("id")[3:])).to_contain_text("shown with the call")
    assert page.problems == []
