"""Writes the hand-made SWE-agent fixtures in test_data/formats/swe-agent/ (run from the repo root:
`python tests/golden/make_swe_agent_fixtures.py`). Shapes from SWE-agent's own writer: sweagent/
agent/agents.py (`get_trajectory_data`, `add_step_to_trajectory`, `add_step_to_history`,
`handle_error_with_retry`, `attempt_autosubmission_after_error`, RetryAgent's `attempts`) and
sweagent/types.py; the 0.x file is the real princeton-nlp/SWE-agent test trajectory
tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/
pydicom__pydicom-1458.traj (commit f146cee0, MIT licence) with its long texts shortened and its
steps cut to five (see README.md)."""

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "test_data" / "formats" / "swe-agent"


def write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))  # as SWE-agent's save_trajectory writes it


def state(open_file: str) -> str:  # 0.x: the state command's JSON output, kept as a string
    return json.dumps({"open_file": open_file, "working_dir": "/pydicom__pydicom"}) + "\n"


SYSTEM_0X = ("SETTING: You are an autonomous programmer, and you're working directly in the command line "
             "with a special interface.\n\nThe special interface consists of a file editor that shows you "
             "100 lines of a file at a time.\n[... the command docs, shortened for this fixture ...]")
DEMO_0X = ("Here is a demonstration of how to correctly accomplish this task.\nIt is included to show you "
           "how to correctly use the interface.\nYou do not need to follow exactly what is done in the "
           "demonstration.\n--- DEMONSTRATION ---\n[... a marshmallow fix, shortened for this fixture ...]\n"
           "```\nsubmit\n```\n--- END OF DEMONSTRATION ---\n")
TASK_0X = ("We're currently solving the following issue within our repository. Here's the issue text:\n"
           "ISSUE:\nPixel Representation attribute should be optional for pixel data handler\n"
           "**Describe the bug**\r\nThe NumPy pixel data handler currently requires the Pixel "
           "Representation attribute.\r\n\n\nINSTRUCTIONS:\nNow, you're going to solve this issue on your "
           "own. [... shortened ...]\n\n(Open file: n/a)\n(Current directory: /pydicom__pydicom)\nbash-$")
PATCH_0X = ("\ndiff --git a/pydicom/pixel_data_handlers/numpy_handler.py b/pydicom/pixel_data_handlers/numpy_handler.py\n"
            "index 8e8d319ae..6a1221b72 100644\n--- a/pydicom/pixel_data_handlers/numpy_handler.py\n"
            "+++ b/pydicom/pixel_data_handlers/numpy_handler.py\n"
            "@@ -285,9 +285,10 @@ def get_pixeldata(ds: \"Dataset\", read_only: bool = False) -> \"np.ndarray\":\n"
            "         )\n \n     required_elements = [\n"
            "-        'BitsAllocated', 'Rows', 'Columns', 'PixelRepresentation',\n"
            "-        'SamplesPerPixel', 'PhotometricInterpretation'\n"
            "+        'BitsAllocated', 'Rows', 'Columns', 'SamplesPerPixel', 'PhotometricInterpretation'\n"
            "     ]\n+    if 'PixelData' in ds:\n+        required_elements.append('PixelRepresentation')\n"
            "     missing = [elem for elem in required_elements if elem not in ds]\n     if missing:\n"
            "         raise AttributeError(\n")
STEPS_0X = [
    ("First, I'll create a new Python script to reproduce the bug as described in the issue.\n\n",
     "create reproduce_bug.py\n",
     "[File: /pydicom__pydicom/reproduce_bug.py (1 lines total)]\n1:\n", "/pydicom__pydicom/reproduce_bug.py"),
    ("The `reproduce_bug.py` script has been updated with the code provided in the issue. Now, let's run "
     "the script to see if we can reproduce the bug.\n\n",
     "python reproduce_bug.py\n",
     "Traceback (most recent call last):\n  File \"/pydicom__pydicom/reproduce_bug.py\", line 17, in <module>\n"
     "    result = np.array_equal(ds.pixel_array, pixel_array)\nAttributeError: Unable to convert the pixel "
     "data as the following required elements are missing from the dataset: PixelRepresentation\n",
     "/pydicom__pydicom/reproduce_bug.py"),
    ("Let's make the edit.\n\n",
     "edit 287:295\n        'BitsAllocated', 'Rows', 'Columns', 'SamplesPerPixel', 'PhotometricInterpretation'\n    ]\nend_of_edit\n",
     "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit "
     "commmand.\n\nERRORS:\n- E999 SyntaxError: unmatched ']'\n[...]\nYour changes have NOT been applied.\n",
     "/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py"),
    ("The output indicates that the script completed successfully.\n\n",
     "rm reproduce_bug.py\n", "", "/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py"),
    ("With the bug fixed and the cleanup complete, we can now submit the changes to the code base.\n\n",
     "submit\n", PATCH_0X, "/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py"),
]


def v0x() -> dict:
    trajectory, history = [], [
        {"role": "system", "content": SYSTEM_0X, "agent": "primary"},
        {"agent": "primary", "content": DEMO_0X, "is_demo": True, "role": "user"},
        {"role": "user", "content": TASK_0X, "agent": "primary"},
    ]
    for thought, action, observation, open_file in STEPS_0X:
        response = f"{thought}```\n{action}```"
        trajectory.append({"action": action, "observation": observation, "response": response,
                           "state": state(open_file), "thought": thought})
        history.append({"role": "assistant", "content": response, "thought": thought, "action": action,
                        "agent": "primary"})
        if action != "submit\n":  # 0.x: the last observation (the patch) never reaches the history
            shown = observation or "Your command ran successfully and did not produce any output."
            history.append({"role": "user", "content": f"{shown}\n(Open file: {open_file})\n"
                            "(Current directory: /pydicom__pydicom)\nbash-$", "agent": "primary"})
    return {"environment": "swe_main", "trajectory": trajectory, "history": history,
            "info": {"exit_status": "submitted", "submission": PATCH_0X,
                     "model_stats": {"total_cost": 1.26719, "instance_cost": 1.26719,
                                     "tokens_sent": 122612, "tokens_received": 1369, "api_calls": 12}}}


def step(thought: str, action: str, observation: str, t: float, tool: tuple | None = None,
         **extra) -> tuple[dict, list]:
    """A 1.x step and the history it adds (`add_step_to_history`): the answer with its one tool call,
    then the observation as a tool message naming the call."""
    call_id = f"call_{abs(hash(action)) % 10**8:08d}"
    name, args = tool or ("bash", {"command": action})
    s = {"action": action, "observation": observation, "response": thought, "thought": thought,
         "execution_time": t, "state": {"working_dir": "/testbed", "open_file": "n/a"} if t else {},
         "query": [{"role": "system", "content": "(the messages sent for this step)"}], "extra_info": {}}
    s.update(extra)
    h = [{"role": "assistant", "content": thought, "thought": thought, "action": action, "agent": "main",
          "tool_calls": [{"id": call_id, "type": "function",
                          "function": {"name": name, "arguments": json.dumps(args)}}],
          "message_type": "action", "thinking_blocks": []},
         {"role": "tool", "content": f"OBSERVATION:\n{observation}", "agent": "main",
          "message_type": "observation", "tool_call_ids": [call_id]}]
    return s, h


def v1x_cost_limit() -> dict:
    """A 1.x function-calling run that hits a format error (the step is recorded, not run, and the
    model asked again), edits a file with str_replace_editor, and stops on its cost limit: SWE-agent
    then submits what the tree holds (`attempt_autosubmission_after_error`)."""
    history = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer to solve tasks.",
         "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": "<uploaded_files>\n/testbed\n</uploaded_files>\nI've uploaded a python code "
         "repository in the directory /testbed. Consider the following PR description:\n\n<pr_description>\n"
         "calc.divide crashes on zero\nDividing by zero should return None.\n</pr_description>\n\nCan you help "
         "me implement the necessary changes to the repository so that the requirements specified in the "
         "<pr_description> are met?", "agent": "main", "message_type": "observation"},
    ]
    trajectory = []
    s, h = step("Let me look at the file.", "str_replace_editor view /testbed/calc.py",
                "Here's the result of running `cat -n` on /testbed/calc.py:\n     1\tdef divide(a, b):\n     2\t    return a / b\n",
                0.41, ("str_replace_editor", {"command": "view", "path": "/testbed/calc.py"}))
    trajectory.append(s)
    history += h
    # a format error: recorded in the trajectory only (handle_error_with_retry), never run
    trajectory.append({"action": "", "observation": "", "response": "I will now fix it, in two calls at once.",
                       "thought": "I will now fix it, in two calls at once.", "execution_time": 0.0, "state": {},
                       "query": [], "extra_info": {}})
    s, h = step("I'll guard the division.",
                "str_replace_editor str_replace /testbed/calc.py --old_str '    return a / b' --new_str '    return a / b if b else None'",
                "The file /testbed/calc.py has been edited. Here's the result of running `cat -n` on a snippet of /testbed/calc.py:\n     1\tdef divide(a, b):\n     2\t    return a / b if b else None\nReview the changes and make sure they are as expected.",
                0.52, ("str_replace_editor", {"command": "str_replace", "path": "/testbed/calc.py",
                                              "old_str": "    return a / b", "new_str": "    return a / b if b else None"}),
                reasoning_content="The fix is a conditional expression.")
    trajectory.append(s)
    history += h
    s, h = step("Run the tests.", "python -m pytest -q", "F.\n1 failed, 1 passed in 0.03s", 2.75)
    trajectory.append(s)
    history += h
    patch = ("diff --git a/calc.py b/calc.py\nindex 1c2a3b4..5d6e7f8 100644\n--- a/calc.py\n+++ b/calc.py\n"
             "@@ -1,2 +1,2 @@\n def divide(a, b):\n-    return a / b\n+    return a / b if b else None\n")
    trajectory.append({"action": "", "observation": "Exited (autosubmitted)", "response": "Exit due to cost limit",
                       "thought": "Exit due to cost limit", "execution_time": 0.0, "state": {}, "query": [],
                       "extra_info": {}})
    history.append({"role": "assistant", "content": "Exit due to cost limit", "thought": "Exit due to cost limit",
                    "action": "", "agent": "main", "tool_calls": None, "message_type": "action",
                    "thinking_blocks": []})
    history.append({"role": "user", "content": "Exited (autosubmitted)", "agent": "main", "message_type": "observation"})
    info = {"swe_agent_hash": "unavailable", "swe_agent_version": "1.1.0", "swe_rex_version": "1.2.1",
            "swe_rex_hash": "unavailable", "submission": patch, "exit_status": "submitted (exit_cost)",
            "edited_files30": "[File: calc.py]\n     1: def divide(a, b):\n     2:     return a / b if b else None",
            "model_stats": {"instance_cost": 2.0183, "tokens_sent": 612044, "tokens_received": 4311, "api_calls": 4}}
    return {"trajectory": trajectory, "history": history, "info": info,
            "replay_config": json.dumps({"agent": {"model": {"name": "claude-sonnet-4-20250514"}}}),
            "environment": "main"}


def v1x_retry() -> dict:
    """RetryAgent: two attempts, the second chosen; it ends with no submission (exit_format)."""
    first = v1x_cost_limit()
    second = {"trajectory": [{"action": "ls", "observation": "calc.py\ntests", "response": "List files.",
                              "thought": "List files.", "execution_time": 0.12,
                              "state": {"working_dir": "/testbed"}, "query": [], "extra_info": {}}],
              "history": first["history"][:2], "environment": "main", "replay_config": None,
              "info": {"exit_status": "exit_format", "submission": None,
                       "model_stats": {"instance_cost": 0.4, "tokens_sent": 9000, "tokens_received": 100,
                                       "api_calls": 2}}}
    chosen = json.loads(json.dumps(second))
    chosen["info"]["best_attempt_idx"] = 1
    return {"attempts": [first, second], **chosen}


def hostile() -> dict:
    """Markup and scripts in every field a card shows: they must stay text."""
    x = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    return {"environment": "main",
            "trajectory": [{"action": f"echo '{x}'", "observation": x, "response": x, "thought": x,
                            "execution_time": 0.1, "state": {"working_dir": x, "open_file": x}}],
            "history": [{"role": "system", "content": x, "agent": "main", "message_type": "system_prompt"},
                        {"role": "user", "content": f"<pr_description>\n{x}\n</pr_description>", "agent": "main",
                         "message_type": "observation"}],
            "info": {"exit_status": x, "submission": f"diff --git a/{x} b/{x}\n--- a/{x}\n+++ b/{x}\n@@ -1 +1 @@\n-{x}\n+{x}```\n",
                     "model_stats": {"instance_cost": 0.1, "tokens_sent": 10, "tokens_received": 1, "api_calls": 1}}}


if __name__ == "__main__":
    write(OUT / "0.x-pydicom-trimmed" / "pydicom__pydicom-1458.traj", v0x())
    write(OUT / "1.x-cost-limit" / "calc__divide-1.traj", v1x_cost_limit())
    write(OUT / "1.x-retry-agent" / "calc__divide-2.traj", v1x_retry())
    write(OUT / "hostile" / "hostile.traj", hostile())
