"""Write real mini-swe-agent trajectories of its text-based agents (one fenced command per answer).

Run in a throwaway venv with the real package, never in the project's:

    python3 -m venv /tmp/msw1 && /tmp/msw1/bin/pip install mini-swe-agent==1.17.5 pyyaml
    /tmp/msw1/bin/python tests/golden/make_mini_swe_agent_golden.py OUT_DIR
    python3 -m venv /tmp/msw2 && /tmp/msw2/bin/pip install mini-swe-agent==2.4.6
    LITELLM_LOCAL_MODEL_COST_MAP=True /tmp/msw2/bin/python tests/golden/make_mini_swe_agent_golden.py OUT_DIR

1.x: mini-swe-agent's own `DefaultAgent` with the templates of its `config/extra/swebench.yaml` (the
SWE-bench setup most published 1.x trajectories come from), its `LocalEnvironment` running the
commands for real in a scratch folder, and its `DeterministicModel` (the package's test model) giving
the answers, so every message, observation, timeout and format error is what the package writes;
`save_traj` writes the file as the `mini-extra swebench` runner does.
2.x: the same agent with `config/mini_textbased.yaml` and its `LitellmTextbasedModel` (```mswea_bash_command
blocks, `extra.actions`), litellm's `completion` answering from the list below (its `ModelResponse`,
priced by litellm's own table), so `extra.response`, the cost and the `exit` message are real too.
The run, in both: a command that succeeds, one that fails (exit 2), an answer with two blocks (the
format error), a command that outlives the environment's timeout, then the submission.
"""

import sys
import tempfile
from pathlib import Path

import yaml
from minisweagent import __version__
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import builtin_config_dir
from minisweagent.environments.local import LocalEnvironment

TASK = "calc.divide raises ZeroDivisionError when b is 0; return 0 instead."

OUTPUTS = [
    "THOUGHT: First I look at what the folder holds.\n\n```bash\nls -1\n```",
    "THOUGHT: Let me read the module.\n\n```bash\ncat calc.py\n```",
    "THOUGHT: The tests may tell more.\n\n```bash\ngrep -n divide missing_file.py\n```",
    "THOUGHT: I will fix it and run the tests.\n\n```bash\nsed -i 's/a \\/ b/a \\/ b if b else 0/' calc.py\n```\n\n```bash\npython3 -c 'import calc'\n```",
    "THOUGHT: One command then.\n\n```bash\nsed -i 's/return a \\/ b/return a \\/ b if b else 0/' calc.py && cat calc.py\n```",
    "THOUGHT: Check that nothing hangs.\n\n```bash\nsleep 5\n```",
    "THOUGHT: Done; submitting.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```",
]


def scratch(work: str) -> None:
    (Path(work) / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    env = LocalEnvironment(cwd=work)
    init = "git init -q && git add . && git -c user.email=a@b -c user.name=a commit -qm init"
    env.execute(init) if __version__.startswith("1.") else env.execute({"command": init})


def v1(out: Path) -> Path:
    from minisweagent.models.test_models import DeterministicModel
    from minisweagent.run.utils.save import save_traj

    config = yaml.safe_load((builtin_config_dir / "extra" / "swebench.yaml").read_text())
    with tempfile.TemporaryDirectory() as work:
        scratch(work)
        model = DeterministicModel(outputs=OUTPUTS, model_name="deterministic", cost_per_call=0.01)
        agent = DefaultAgent(model, LocalEnvironment(cwd=work, timeout=1), **config["agent"])
        status, result = agent.run(TASK)
        path = out / "v1" / "calc-divide.traj.json"
        save_traj(agent, path, exit_status=status, result=result, instance_id="calc-divide",
                  print_fct=lambda *a: None)
    return path


def v2(out: Path) -> Path:
    import litellm
    from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

    answers = iter(OUTPUTS)

    def completion(model, messages, **kwargs):
        text = next(answers).replace("```bash", "```mswea_bash_command")
        return litellm.ModelResponse(
            model=model, choices=[{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": text}}],
            usage={"prompt_tokens": 900 + 100 * len(messages), "completion_tokens": 40,
                   "total_tokens": 940 + 100 * len(messages)})

    litellm.completion = completion
    config = yaml.safe_load((builtin_config_dir / "mini_textbased.yaml").read_text())
    config["agent"].pop("mode", None)  # (the interactive agent's setting)
    with tempfile.TemporaryDirectory() as work:
        scratch(work)
        model = LitellmTextbasedModel(model_name="anthropic/claude-sonnet-4-5-20250929",
                                      **config.get("model", {}))
        path = out / "v2-textbased" / "calc-divide.traj.json"
        agent = DefaultAgent(model, LocalEnvironment(cwd=work, timeout=1), **config["agent"],
                             output_path=path)
        agent.run(TASK)
    return path


if __name__ == "__main__":
    written = (v1 if __version__.startswith("1.") else v2)(Path(sys.argv[1]))
    print(f"mini-swe-agent {__version__}: {written}")
