"""Record INTERACTIVE Claude Code sessions: the real `claude` CLI driven through a pseudo-terminal.

    python3 tests/golden/record_claude_code_interactive.py SCRATCH_DIR [ONLY...]

The `-p` recordings (record_claude_code.sh) never show what people meet at the keyboard: permission
dialogs, /compact, hooks, plan mode, Esc, a rewind (Esc Esc), the rewind dialog's "Summarize from
here" and "Summarize up to here". This script types into the TUI as a person would (pexpect
from PyPI), against the scripted fake Messages API (fake_anthropic_api.py), offline, each scenario
in a fresh HOME whose ~/.claude.json skips onboarding and the trust dialog. It waits for words on
the screen (ANSI stripped), so a changed TUI stops it with a timeout and the screen it last saw,
never with a wrong recording. SCRATCH_DIR must hold node_modules/@anthropic-ai/claude-code (the
.sh installs it). The transcripts are scrubbed into SCRATCH_DIR/scrubbed/<scenario>/.
"""
import json
import os
import re
import subprocess
import sys
import time

import pexpect

HERE = os.path.dirname(os.path.realpath(__file__))
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[a-zA-Z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>()][0-9A-B]?|\x1b")
PORT = int(os.environ.get("PORT", "8766"))
ENTER, ESC, DOWN, UP, TAB, CTRL_U = "\r", "\x1b", "\x1b[B", "\x1b[A", "\t", "\x15"


class Tui:
    """One CLI in a pty; `wait` reads until a pattern shows in the screen text since the last mark."""

    def __init__(self, cc, home, cwd, args):
        env = dict(os.environ, HOME=home, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{PORT}",
                   ANTHROPIC_API_KEY="fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1", TERM="xterm-256color")
        self.p = pexpect.spawn(cc, ["--model", "claude-sonnet-4-5", *args], cwd=cwd, env=env,
                               dimensions=(50, 140), encoding="utf-8", timeout=5)
        self.seen = ""

    def wait(self, pattern, timeout=60):
        end = time.time() + timeout
        rx = re.compile(pattern)
        while time.time() < end:
            try:
                self.seen += ANSI.sub("", self.p.read_nonblocking(100000, timeout=0.3))
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                break
            # the TUI draws words with cursor moves instead of spaces, and wraps: match without any
            flat = re.sub(r"\s+", "", self.seen)
            m = rx.search(flat)
            if m:
                self.seen = flat[m.end():]
                return m.group(0)
        raise SystemExit(f"timed out waiting for {pattern!r}; screen tail:\n{self.seen[-3000:]}")

    def type(self, text, pause=0.4):
        for ch in text:  # a paste arrives as one chunk and may be taken for a bracketed paste
            self.p.send(ch)
            time.sleep(0.01)
        time.sleep(pause)

    def key(self, k, pause=0.6):
        self.p.send(k)
        time.sleep(pause)

    def prompt(self, text):
        self.type(text)
        self.key(ENTER)

    def quit(self):
        time.sleep(1.5)  # (the prompt is back; what it shows under it varies)
        self.type("/exit", 0.8)
        self.key(ENTER, 1)
        try:
            self.p.expect(pexpect.EOF, timeout=15)
        except pexpect.TIMEOUT:
            self.p.terminate(force=True)


def choose(t, n):
    """Pick the n-th option of the dialog on screen (arrows, then Enter: digits are not read
    while the dialog settles)."""
    time.sleep(1)
    for _ in range(n):
        t.key(DOWN)
    t.key(ENTER)


def perm(t):
    """Permission dialogs: allow once, allow always (a rule), deny with feedback, and a
    `permissions.deny` rule from settings refusing a call without asking; then /compact and a
    prompt after it."""
    t.wait(r"forshortcuts")
    t.prompt("Walk me through the permission dialogs.")
    t.wait(r"Doyouwanttoproceed\?")
    choose(t, 0)  # Yes
    t.wait(r"Doyouwanttoproceed\?")
    choose(t, 1)  # Yes, and don't ask again
    t.wait(r"Doyouwanttocreatetodo\.txt\?")
    time.sleep(1)
    t.key(DOWN); t.key(DOWN)  # No …
    t.key(TAB)  # … and tell Claude what to do differently
    t.type("Put it under docs/ instead.")
    t.key(ENTER)
    t.wait(r"deniedbyarule", 90)
    t.wait(r"forshortcuts")
    t.type("/compact", 0.8)
    t.key(ENTER)
    t.wait(r"Compacted|compacted", 90)
    time.sleep(2)
    t.prompt("What number did I ask you to remember?")
    t.wait(r"Youaskedmetoremember42")
    t.quit()


def hooks(t):
    """Hooks from ~/.claude/settings.json: UserPromptSubmit adds context, PreToolUse blocks a
    network call (exit 2), PostToolUse adds context after a call, Stop runs at the end."""
    t.wait(r"forshortcuts")
    t.prompt("Show me the hooks at work.")
    t.wait(r"Bothhookshadtheirsay", 90)  # (the curl never reaches a dialog: the hook blocks it)
    time.sleep(3)  # the Stop hook
    t.quit()


def plan(t):
    """Plan mode: the model reads, proposes a plan with ExitPlanMode, the person approves it."""
    t.wait(r"forshortcuts|planmode")
    t.prompt("Plan a change to the README.")
    t.wait(r"Exitplanmode\?|Wouldyouliketoproceed\?", 90)
    choose(t, 0)  # Yes (2.1.331: "and switch to default (ask each time)")
    if t.wait(r"Doyouwanttomakethisedit|Usagesectionnow", 90) != "Usagesectionnow":
        choose(t, 0)
        t.wait(r"Usagesectionnow", 90)
    t.quit()


def esc(t):
    """Esc while a slow Bash call runs; then the session is left and resumed with --continue."""
    t.wait(r"forshortcuts")
    t.prompt("Run the slow job.")
    t.wait(r"Doyouwanttoproceed\?")
    choose(t, 0)
    time.sleep(5)
    t.key(ESC, 2)
    t.wait(r"Interrupted|interrupted", 30)
    time.sleep(1)
    t.quit()


def resumed(t):
    """The session left by `esc`, continued with --continue: one more prompt."""
    t.wait(r"forshortcuts")
    t.prompt("Is the notes file still there?")
    if t.wait(r"Doyouwanttoproceed\?|Anythingelse\?", 60) != "Anythingelse?":
        choose(t, 0)
        t.wait(r"Anythingelse\?", 60)
    t.quit()


def rewind(t):
    """Two prompts, then Esc Esc: the rewind dialog, back to before the second prompt ("Restore
    conversation"), and a new prompt in its place."""
    t.wait(r"forshortcuts")
    t.prompt("Name a colour.")
    t.wait(r"Blue\.")
    time.sleep(1.5)
    t.prompt("Name another colour.")
    t.wait(r"Green\.")
    time.sleep(1.5)
    t.key(ESC, 0.3)
    t.key(ESC, 2)
    t.wait(r"Restorethecodeand/orconversation")
    t.key(UP)  # from "(current)" to the second prompt
    t.key(ENTER, 2)
    t.wait(r"Restoreconversation")
    time.sleep(1)
    t.key(ENTER, 2)  # 1. Restore conversation
    t.key(CTRL_U)  # the rewind puts the second prompt back in the box
    t.prompt("Name a fruit instead.")
    t.wait(r"Apple\.")
    t.quit()


def summarize(option):
    """Three prompts, then Esc Esc: the rewind dialog, the second prompt picked, and the dialog's
    `option` ("Summarize from here" or "Summarize up to here"); then one more prompt."""
    def drive(t):
        t.wait(r"forshortcuts")
        for said, answer in (("Name a colour.", r"Blue\."), ("Name another colour.", r"Green\."),
                             ("Name a third colour.", r"Red\.")):
            t.prompt(said)
            t.wait(answer)
            time.sleep(1.5)
        t.key(ESC, 0.3)
        t.key(ESC, 2)
        t.wait(r"Restorethecodeand/orconversation")
        t.key(UP)  # from "(current)" to the third prompt
        t.key(UP)  # to the second
        t.key(ENTER, 2)
        t.wait(r"Restoreconversation")
        time.sleep(1)
        t.wait(r"Summarizeuptohere")  # 1. Restore conversation 2. Summarize from here 3. … up to here
        choose(t, {"from": 1, "upto": 2}[option])
        t.wait(r"Summarized|summarized|Compacted|compacted|forshortcuts", 90)
        time.sleep(3)
        t.key(CTRL_U)
        t.prompt("Which colours did I ask for?")
        t.wait(r"Youaskedforcolours\.", 90)
        t.quit()
    drive.__name__ = f"summarize_{option}"
    return drive


HOOKS = {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'Hook context: the build is green.'"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                    "grep -q curl && { echo 'Network calls are blocked by policy.' >&2; exit 2; } || exit 0"}]}],
    "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                     "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", "
                     "\"additionalContext\": \"Post hook: the call was logged.\"}}'"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "echo 'stop hook ran'"}]}],
}
# scenario → (its driver(s) in order, each with the CLI's extra arguments; its settings.json)
SCENARIOS = {
    "perm": ([(perm, ["--permission-mode", "default"])], {"permissions": {"deny": ["Bash(rm:*)"]}}),
    "hooks": ([(hooks, ["--permission-mode", "default"])], {"hooks": HOOKS}),
    "plan": ([(plan, ["--permission-mode", "plan"])], {}),
    "esc": ([(esc, ["--permission-mode", "default"]), (resumed, ["--permission-mode", "default", "--continue"])], {}),
    "rewind": ([(rewind, ["--permission-mode", "default"])], {}),
    "sumfrom": ([(summarize("from"), ["--permission-mode", "default"])], {}),
    "sumupto": ([(summarize("upto"), ["--permission-mode", "default"])], {}),
}


def main():
    scratch = os.path.realpath(sys.argv[1])
    only = sys.argv[2:] or list(SCENARIOS)
    cc = os.path.join(scratch, "node_modules/@anthropic-ai/claude-code-linux-x64/claude")
    proj = os.path.join(scratch, "iproj", "demo")
    subprocess.run(["rm", "-rf", os.path.join(scratch, "iproj")], check=True)
    os.makedirs(proj)
    subprocess.run(["git", "init", "-q", "."], cwd=proj, check=True)
    with open(os.path.join(proj, "README.md"), "w") as f:
        f.write("# demo project\n")
    api = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_anthropic_api.py"), str(PORT)],
                           cwd=scratch, env=dict(os.environ, FAKE_CWD=proj),
                           stderr=open(os.path.join(scratch, "fakeapi-i.log"), "w"))
    try:
        time.sleep(1)
        for name in only:
            drivers, settings = SCENARIOS[name]
            home = os.path.join(scratch, "ihome", name)
            subprocess.run(["rm", "-rf", home], check=True)
            os.makedirs(os.path.join(home, ".claude"))
            with open(os.path.join(home, ".claude.json"), "w") as f:
                json.dump({"hasCompletedOnboarding": True, "theme": "dark", "lastOnboardingVersion": "2.1.331",
                           "customApiKeyResponses": {"approved": ["fake"], "rejected": []},
                           "projects": {proj: {"hasTrustDialogAccepted": True,
                                               "hasCompletedProjectOnboarding": True}}}, f)
            with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
                json.dump(settings, f)
            for drive, args in drivers:
                t = Tui(cc, home, proj, args)
                try:
                    drive(t)
                finally:
                    if t.p.isalive():
                        t.p.terminate(force=True)
            out = os.path.join(scratch, "scrubbed", name)
            subprocess.run(["rm", "-rf", out], check=True)
            subprocess.run([sys.executable, os.path.join(HERE, "scrub_claude_code.py"),
                            os.path.join(home, ".claude", "projects"), out,
                            f"{proj}=/home/user/demo", proj.replace("/", "-") + "=-home-user-demo",
                            f"{home}=/home/user"], check=True)
            print("recorded", name, "->", out)
    finally:
        api.terminate()
        api.wait()


if __name__ == "__main__":
    main()
