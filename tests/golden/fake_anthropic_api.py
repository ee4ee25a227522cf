"""A scripted stand-in for the Anthropic Messages API, enough for the real `claude` CLI.

Speaks POST /v1/messages (stream=true: SSE message_start, content_block_start/delta/stop for
thinking, text and tool_use, message_delta with usage and stop_reason, message_stop; and the
non-streaming JSON form), POST /v1/messages/count_tokens, and answers any other path with {}.

The reply is chosen by the last known prompt (PHRASES) in the request's user messages and the
number of assistant messages after it (the step). Requests without one (the CLI's side queries)
get a short plain text; a task notification gets a short acknowledgement. Every request is
appended to requests.jsonl in the current folder. FAKE_CWD is the project folder the CLI works in
(the scripted tool inputs name files there). Used by record_claude_code.sh.
"""
import itertools
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = "requests.jsonl"
_ids = itertools.count(1)
_lock = threading.Lock()
_failed_once = set()


def _texts(content):
    if isinstance(content, str):
        yield content
        return
    for b in content or []:
        if b.get("type") == "text":
            yield b.get("text", "")
        elif b.get("type") == "tool_result":
            c = b.get("content")
            if isinstance(c, str):
                yield "\x00" + c  # results never carry a marker for us
            # lists: ignore


# the prompts the recordings send, and the script each starts
PHRASES = {"Give me a tour of your tools": "main", "Find out which directory you are in": "sub",
           "Is the notes file still there": "turn2", "Use a workflow to check this folder": "wf",
           "List the files here": "wfa", "Say what day it is": "wfb", "Run the slow job": "slow",
           # the interactive recordings (record_claude_code_interactive.py)
           "Walk me through the permission dialogs": "perm", "Show me the hooks at work": "hooks",
           "Plan a change to the README": "plan", "What number did I ask you to remember": "recall",
           # auto-compaction: a reply whose usage says the context is nearly full, then a turn
           "Read the big log": "fill", "What was in the log": "afterfill",
           "Write the release notes": "skill",
           # /rewind: two prompts, a rewind to before the second, another prompt
           "Name a colour": "colour", "Name another colour": "colour2", "Name a fruit instead": "fruit",
           # the rewind dialog's "Summarize from here" / "Summarize up to here": three prompts, a
           # summary of part of them, one more prompt
           "Name a third colour": "colour3", "Which colours did I ask for": "which"}
# replies whose usage says the context window (200k) is this full: the CLI compacts on its own
FULL = {"fill": 188_000}
# the CLI's /compact request ends with this instruction; it gets a summary whatever the scenario
COMPACT = "Your task is to create a detailed summary"


def scenario(messages):
    """(name, step) of the last known prompt in a user text, or (None, 0)."""
    name, at = None, -1
    for i, m in enumerate(messages):
        if m.get("role") != "user":
            continue
        for t in _texts(m.get("content")):
            if t.startswith("\x00") or "<task-notification>" in t:
                continue
            for phrase, scen in PHRASES.items():
                if phrase in t:
                    name, at = scen, i
    if name is None:
        return None, 0
    step = sum(1 for m in messages[at + 1:] if m.get("role") == "assistant")
    return name, step


_RUN = os.urandom(4).hex()


def tool_id():
    return "toolu_01%s%012d" % (_RUN, next(_ids))


def think(t):
    return {"type": "thinking", "thinking": t}


def text(t):
    return {"type": "text", "text": t}


def use(name, **inp):
    return {"type": "tool_use", "id": tool_id(), "name": name, "input": inp}


def pick(tools, *names):
    for n in names:
        if n in tools:
            return n
    return names[0]


def script(name, step, tools, cwd):
    """The content blocks of the reply, or ("error", status, body) for a failure."""
    agent = pick(tools, "Agent", "Task")
    if name == "main":
        steps = [
            lambda: [think("The user wants a tour of the tools. I will plan with a todo list first."),
                     text("I'll start by writing down a plan."),
                     use("TodoWrite", todos=[
                         {"content": "Run shell commands", "status": "in_progress", "activeForm": "Running shell commands"},
                         {"content": "Write, read and edit a file", "status": "pending", "activeForm": "Working on a file"},
                         {"content": "Ask a sub-agent", "status": "pending", "activeForm": "Asking a sub-agent"}])],
            lambda: [text("Now two shell commands: one that works and one that fails."),
                     use("Bash", command="echo hello from bash && printf 'a\\nb\\n' | wc -l", description="Print a greeting and count lines"),
                     use("Bash", command="ls /definitely/not/here", description="List a missing folder")],
            lambda: [use("Write", file_path=os.path.join(cwd, "notes.md"),
                         content="# Notes\n\nThe first line.\nA TODO to fix later.\n")],
            lambda: [text("Reading it back and searching the folder."),
                     use("Read", file_path=os.path.join(cwd, "notes.md")),
                     use("Grep", pattern="TODO", path=cwd, output_mode="content", **{"-n": True}),
                     use("Glob", pattern="**/*.md", path=cwd)],
            lambda: [use("Edit", file_path=os.path.join(cwd, "notes.md"),
                         old_string="A TODO to fix later.", new_string="Fixed: nothing left to do.")],
            lambda: [think("A sub-agent can check the working directory independently."),
                     use(agent, description="Check the working directory",
                         prompt="Find out which directory you are in and report it in one sentence.",
                         subagent_type="general-purpose")],
            lambda: [text("Let me fetch a web page too."),
                     use("WebFetch", url="https://example.com/", prompt="Summarise the page")],
            lambda: ("error", 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            lambda: [think("Everything is done; the fetch was refused, which is fine."),
                     text("## Done\n\n- `echo` worked, `ls` of a missing folder **failed** (exit 2).\n"
                          "- `notes.md` was written, read, found by Grep and Glob, then edited.\n"
                          "- The sub-agent reported the working directory.\n"
                          "- WebFetch was not allowed in this permission mode.\n")],
        ]
    elif name == "sub":
        steps = [
            lambda: [think("I should run pwd."), use("Bash", command="pwd", description="Print working directory")],
            lambda: [text("The working directory is `%s`." % cwd)],
        ]
    elif name == "turn2":
        steps = [
            lambda: [text("Reading a file that is not there."),
                     use("Read", file_path=os.path.join(cwd, "missing.txt"))],
            lambda: [text("That file does not exist; the notes file is still there. Anything else?")],
        ]
    elif name == "wf":
        script_js = ("export const meta = {name: 'two-checks', description: 'Two agents check the folder', "
                     "phases: [{title: 'Check'}]}\n"
                     "phase('Check')\n"
                     "const [a, b] = await parallel([\n"
                     "  () => agent('List the files here.', {label: 'check:files', phase: 'Check'}),\n"
                     "  () => agent('Say what day it is.', {label: 'check:date', phase: 'Check'}),\n"
                     "])\n"
                     "return {a, b}\n")
        steps = [
            lambda: [text("Running a workflow with two agents."), use("Workflow", script=script_js)],
            lambda: [text("The workflow is running in the background.")],
        ]
    elif name == "wfa":
        steps = [lambda: [use("Bash", command="ls", description="List files")],
                 lambda: [text("Files: README.md, notes.md.")]]
    elif name == "wfb":
        steps = [lambda: [text("It is a fine day.")]]
    elif name == "perm":
        steps = [
            lambda: [text("First a small program: allow it once."),
                     use("Bash", command="python3 -c 'print(6 * 7)'", description="Multiply two numbers")],
            lambda: [text("Another one: you may allow python3 always."),
                     use("Bash", command="python3 -c 'print(1 + 1)'", description="Add two numbers")],
            lambda: [text("Again, now without asking."),
                     use("Bash", command="python3 -c 'print(2 + 2)'", description="Add two numbers again")],
            lambda: [text("Writing a file at the top of the project."),
                     use("Write", file_path=os.path.join(cwd, "todo.txt"), content="buy milk\n")],
            lambda: [text("Cleaning the build folder."),
                     use("Bash", command="rm -rf build", description="Remove the build folder")],
            lambda: [text("Remember the number 42. One command was allowed once, python3 always, "
                          "the file write was refused with your advice, and `rm` is denied by a rule.")],
        ]
    elif name in ("colour", "colour2", "fruit", "colour3", "which"):
        steps = [lambda: [text({"colour": "Blue.", "colour2": "Green.", "fruit": "Apple.", "colour3": "Red.",
                                "which": "You asked for colours."}[name])]]
    elif name == "skill":
        steps = [lambda: [text("There is a skill for that."), use("Skill", skill="release-notes")],
                 lambda: [text("Following the skill: the notes list one change."),
                          use("Write", file_path=os.path.join(cwd, "NOTES.md"), content="# Notes\n\n- One change.\n")],
                 lambda: [text("The release notes are in NOTES.md.")]]
    elif name == "fill":
        steps = [lambda: [text("I read the whole log: 4,000 lines, the last one says BUILD OK.")]]
    elif name == "afterfill":
        steps = [lambda: [text("The log ended with BUILD OK.")]]
    elif name == "recall":
        steps = [lambda: [text("You asked me to remember 42.")]]
    elif name == "hooks":
        steps = [
            lambda: [text("Trying a network call first."),
                     use("Bash", command="curl -s https://example.com/", description="Fetch a page")],
            lambda: [text("The hook blocked it. A local command instead."),
                     use("Bash", command="echo checked by hooks", description="Print a word")],
            lambda: [text("Both hooks had their say: the network call was blocked, the echo ran.")],
        ]
    elif name == "plan":
        steps = [
            lambda: [think("In plan mode I read first and propose a plan."),
                     use("Read", file_path=os.path.join(cwd, "README.md"))],
            lambda: [use("ExitPlanMode", plan="## Plan\n\n1. Add a *Usage* section to README.md.\n2. Nothing else.")],
            lambda: [use("Edit", file_path=os.path.join(cwd, "README.md"),
                         old_string="# demo project", new_string="# demo project\n\n## Usage\n\nRun it.")],
            lambda: [text("The README has a Usage section now.")],
        ]
    elif name == "slow":
        steps = [lambda: [text("This will take a while."), use("Bash", command="python3 -c 'import time; time.sleep(40)'", description="Wait")],
                 lambda: [text("Done waiting.")]]
    else:
        return [text("I do not know scenario %r." % name)]
    if step >= len(steps):
        return [text("(script finished)")]
    out = steps[step]()
    if isinstance(out, tuple):
        key = (name, step)
        with _lock:
            if key in _failed_once:
                return steps[step + 1]()
            _failed_once.add(key)
        return out
    return out


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, self.path))

    def _json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_01%s%08d" % (_RUN, next(_ids)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with open(LOG, "a") as f:
            f.write(json.dumps({"method": "GET", "path": self.path}) + "\n")
        self._json(200, {})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with open(LOG, "a") as f:
            f.write(json.dumps({"method": "POST", "path": self.path, "body": body}) + "\n")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self._json(200, {"input_tokens": 1234})
        if not path.endswith("/v1/messages"):
            return self._json(200, {})
        messages = body.get("messages") or []
        tools = [t.get("name") for t in body.get("tools") or []]
        name, step = scenario(messages)
        cwd = os.environ.get("FAKE_CWD", os.getcwd())
        last = messages[-1] if messages else {}
        if any(COMPACT in t for t in _texts(last.get("content"))) and name in ("colour", "colour2", "colour3"):
            blocks = [text("<analysis>Colours.</analysis>\n<summary>1. The user asked me to name colours, "
                           "one per prompt, and I did.\n2. Pending: nothing.</summary>")]
        elif any(COMPACT in t for t in _texts(last.get("content"))):
            blocks = [text("<analysis>Short session.</analysis>\n<summary>1. The user walked through the "
                           "permission dialogs and asked me to remember the number 42.\n2. Pending: nothing."
                           "</summary>")]
        elif name is None:
            blocks = [text("OK")]
        elif last.get("role") == "user" and any("<task-notification>" in t for t in _texts(last.get("content"))):
            blocks = [text("The background task has finished; its result is in.")]
        else:
            blocks = script(name, step, tools, cwd)
        if isinstance(blocks, tuple):
            _, status, err = blocks
            return self._json(status, err)
        model = body.get("model") or "claude-sonnet-4-5-20250929"
        if body.get("stream"):
            self._stream(model, blocks, len(raw), FULL.get(name, 0))
        else:
            self._json(200, self._message(model, blocks, len(raw), FULL.get(name, 0)))

    def _message(self, model, blocks, size, full=0):
        content = []
        for b in blocks:
            b = dict(b)
            if b["type"] == "thinking":
                b["signature"] = "sig-fake"
            content.append(b)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return {"id": "msg_01%s%08d" % (_RUN, next(_ids)), "type": "message", "role": "assistant",
                "model": model, "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 40 * len(blocks) + 5,
                          "cache_creation_input_tokens": size // 8, "cache_read_input_tokens": full}}

    def _stream(self, model, blocks, size, full=0):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.send_header("request-id", "req_01%s%08d" % (_RUN, next(_ids)))
        self.end_headers()

        def ev(kind, data):
            data["type"] = kind
            self.wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())
            self.wfile.flush()

        msg = self._message(model, blocks, size, full)
        start = dict(msg, content=[], stop_reason=None)
        start["usage"] = dict(msg["usage"], output_tokens=1)
        ev("message_start", {"message": start})
        for i, b in enumerate(blocks):
            if b["type"] == "thinking":
                ev("content_block_start", {"index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
                ev("content_block_delta", {"index": i, "delta": {"type": "thinking_delta", "thinking": b["thinking"]}})
                ev("content_block_delta", {"index": i, "delta": {"type": "signature_delta", "signature": "sig-fake"}})
            elif b["type"] == "text":
                ev("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
                t = b["text"]
                for k in range(0, len(t), 40):
                    ev("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": t[k:k + 40]}})
            else:
                ev("content_block_start", {"index": i, "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                js = json.dumps(b["input"])
                for k in range(0, len(js), 30):
                    ev("content_block_delta", {"index": i, "delta": {"type": "input_json_delta", "partial_json": js[k:k + 30]}})
            ev("content_block_stop", {"index": i})
        ev("message_delta", {"delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                             "usage": {"output_tokens": msg["usage"]["output_tokens"]}})
        ev("message_stop", {})
        self.close_connection = True


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
