"""Deterministic benchmark sessions: Claude Code and legion transcripts of a chosen size, in realistic
shapes, and a root of thousands of small sessions.

Shapes follow what real transcripts hold (see ../shared/corpus and the peers' notes): most bytes are
tool output (results of 1–20 KB, a few of 200 KB and more), thinking blocks, base64 screenshots,
many small progress / bookkeeping lines, and a Task call whose sub-agent has its own file. The same
seed always writes the same bytes, so figures are comparable between runs and machines.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

WORDS = ("the session index window tool call result agent thread offset cache render stream "
         "byte line event permalink viewer file format parse read write test bench page list "
         "status error pending completed thinking summary model token user assistant system").split()
CODE = ["def window(events, start, stop):", "    return events[start:stop]", "for line in f:",
        "    if not line.strip():", "        continue", "import orjson", "class Index:",
        "    def __init__(self, path):", "        self.path = path", "return None"]


class Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.n = 0
        self.t = 1761073190.0

    def uid(self) -> str:
        self.n += 1
        return f"{self.r.getrandbits(32):08x}-{self.n:04x}-4000-8000-{self.r.getrandbits(48):012x}"

    def tick(self, lo=0.2, hi=8.0) -> float:
        self.t += self.r.uniform(lo, hi)
        return self.t

    def iso(self) -> str:
        import datetime as dt

        return dt.datetime.fromtimestamp(self.t, dt.timezone.utc).isoformat(timespec="milliseconds") \
            .replace("+00:00", "Z")

    def prose(self, n_words: int) -> str:
        words = [self.r.choice(WORDS) for _ in range(n_words)]
        out, line = [], []
        for i, w in enumerate(words):
            line.append(w)
            if len(line) > 12 and self.r.random() < 0.15:
                out.append(" ".join(line).capitalize() + ".")
                line = []
        out.append(" ".join(line).capitalize() + ".")
        return " ".join(out)

    def output(self, size: int) -> str:
        lines, total = [], 0
        while total < size:
            line = self.r.choice(CODE) if self.r.random() < 0.6 else self.prose(self.r.randint(3, 14))
            lines.append(f"{len(lines) + 1:6d}\t{line}")
            total += len(lines[-1]) + 1
        return "\n".join(lines)

    def result_size(self) -> int:
        x = self.r.random()
        if x < 0.02:
            return self.r.randint(200_000, 600_000)  # the occasional huge output
        return self.r.randint(1_000, 20_000)

    def image(self) -> str:
        size = self.r.randint(60_000, 400_000)
        return base64.b64encode(self.r.randbytes(size)).decode()


# --- Claude Code ---------------------------------------------------------------------------------


def claude_code(folder: Path, target: int, seed: int = 1, name: str | None = None) -> Path:
    """A Claude Code project folder with one session of about `target` bytes (+ a sub-agent)."""
    g = Gen(seed)
    folder.mkdir(parents=True, exist_ok=True)
    sid = name or g.uid()
    path = folder / f"{sid}.jsonl"
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/app", "sessionId": sid,
            "version": "2.1.39", "gitBranch": "main"}
    parent = None
    size = 0
    spawned = False
    with open(path, "w") as f:

        def emit(rec):
            nonlocal size, parent
            line = json.dumps(rec, separators=(",", ":")) + "\n"
            f.write(line)
            size += len(line)
            if "uuid" in rec:
                parent = rec["uuid"]

        def line(kind, **fields):
            u = g.uid()
            emit({**base, "parentUuid": parent, "type": kind, "uuid": u, "timestamp": g.iso(), **fields})
            return u

        emit({"type": "permission-mode", "permissionMode": "default", "sessionId": sid})
        turn = 0
        while size < target:
            turn += 1
            g.tick(20, 120)
            content = g.prose(g.r.randint(15, 120))
            if g.r.random() < 0.04:
                content = [{"type": "text", "text": content},
                           {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                        "data": g.image()}}]
            line("user", message={"role": "user", "content": content})
            emit({"type": "file-history-snapshot", "messageId": parent, "isSnapshotUpdate": False,
                  "snapshot": {"messageId": parent, "trackedFileBackups": {}, "timestamp": g.iso()}})
            for step in range(g.r.randint(2, 9)):
                mid = f"msg_{g.uid()}"
                g.tick(1, 6)
                if g.r.random() < 0.5:
                    line("assistant", requestId=f"req_{turn}_{step}", message={
                        "id": mid, "role": "assistant", "model": "claude-opus-4-6", "content": [
                            {"type": "thinking", "thinking": g.prose(g.r.randint(60, 700)),
                             "signature": "sig" + g.uid()}]})
                if g.r.random() < 0.6:
                    line("assistant", requestId=f"req_{turn}_{step}", message={
                        "id": mid, "role": "assistant", "model": "claude-opus-4-6", "content": [
                            {"type": "text", "text": g.prose(g.r.randint(10, 150))}]})
                call = f"toolu_{g.uid().replace('-', '')[:24]}"
                tool = g.r.choice(["Bash", "Read", "Edit", "Grep", "Read", "Bash"])
                if not spawned and size > target // 3:
                    tool = "Task"
                inp = {"Bash": {"command": "pytest -q tests/ -k window", "description": "Run tests"},
                       "Read": {"file_path": f"/home/dev/app/mod{g.r.randint(1, 40)}.py"},
                       "Grep": {"pattern": "def window", "path": "/home/dev/app"},
                       "Edit": {"file_path": "/home/dev/app/timeline.py", "old_string": "\n".join(CODE[:4]),
                                "new_string": "\n".join(CODE[:4]).replace("stop", "stop + 1")},
                       "Task": {"description": "Explore callers", "subagent_type": "Explore",
                                "prompt": g.prose(60)}}[tool]
                line("assistant", requestId=f"req_{turn}_{step}", message={
                    "id": mid, "role": "assistant", "model": "claude-opus-4-6",
                    "content": [{"type": "tool_use", "id": call, "name": tool, "input": inp}]})
                for _ in range(g.r.randint(0, 3)):
                    line("progress", parentToolUseID=call, toolUseID=f"bash-progress-{g.uid()}",
                         data={"type": "bash_progress" if tool == "Bash" else "hook_progress",
                               "output": g.prose(8), "hookName": f"PostToolUse:{tool}"})
                g.tick(0.2, 20)
                is_error = g.r.random() < 0.03
                extra = {}
                if tool == "Task":
                    agent = f"a{g.r.getrandbits(28):07x}"
                    claude_code_agent(folder / sid / "subagents", agent, sid, g)
                    spawned = True
                    extra = {"toolUseResult": {"status": "completed", "agentId": agent}}
                    result = [{"type": "text", "text": g.prose(120)},
                              {"type": "text", "text": f"agentId: {agent} (for resuming)"}]
                elif g.r.random() < 0.01:
                    result = [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                           "data": g.image()}}]
                else:
                    result = g.output(g.result_size())
                line("user", message={"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": call, "content": result,
                     **({"is_error": True} if is_error else {})}]}, **extra)
            line("system", subtype="turn_duration", durationMs=g.r.randint(10_000, 400_000))
    return path


def claude_code_agent(folder: Path, agent: str, sid: str, g: Gen) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    base = {"isSidechain": True, "userType": "external", "cwd": "/home/dev/app", "sessionId": sid,
            "agentId": agent}
    parent = None
    with open(folder / f"agent-{agent}.jsonl", "w") as f:
        for i in range(30):
            u = g.uid()
            if i % 2 == 0:
                call = f"toolu_{u.replace('-', '')[:24]}"
                rec = {"type": "assistant", "message": {"role": "assistant", "model": "claude-haiku-4-5",
                                                        "content": [{"type": "tool_use", "id": call,
                                                                     "name": "Grep",
                                                                     "input": {"pattern": "window"}}]}}
            else:
                rec = {"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": call, "content": g.output(3000)}]}}
            f.write(json.dumps({**base, "parentUuid": parent, "uuid": u, "timestamp": g.iso(), **rec},
                               separators=(",", ":")) + "\n")
            parent = u
    (folder / f"agent-{agent}.meta.json").write_text(json.dumps({"agentType": "Explore"}))


# --- legion --------------------------------------------------------------------------------------


def legion(folder: Path, target: int, seed: int = 2) -> Path:
    """A legion session folder of about `target` bytes: G1 records mixed with raw SDK records."""
    g = Gen(seed)
    folder.mkdir(parents=True, exist_ok=True)
    sid = g.uid()
    path = folder / "messages.jsonl"
    size = 0
    with open(path, "w") as f:

        def emit(rec):
            nonlocal size
            line = json.dumps(rec, separators=(",", ":")) + "\n"
            f.write(line)
            size += len(line)

        emit({"type": "system", "content": "Claude Code Launched", "timestamp": g.iso(),
              "metadata": {"subtype": "client_launched", "session_id": sid}, "session_id": sid,
              "message_id": g.uid()})
        while size < target:
            g.tick(20, 120)
            emit({"type": "user", "content": g.prose(g.r.randint(15, 100)), "timestamp": g.iso(),
                  "session_id": sid, "message_id": g.uid()})
            emit({"_type": "SystemMessage", "timestamp": g.tick(0.1, 0.3), "session_id": sid,
                  "message_id": g.uid(), "data": {"subtype": "init", "data": {"model": "claude-sonnet-4-5"}}})
            for _ in range(g.r.randint(2, 8)):
                call = f"toolu_{g.uid().replace('-', '')[:24]}"
                if g.r.random() < 0.5:
                    emit({"type": "assistant", "content": g.prose(g.r.randint(10, 120)),
                          "timestamp": g.tick(1, 5), "session_id": sid, "message_id": g.uid(),
                          "metadata": {"model": "claude-sonnet-4-5", "has_thinking": True,
                                       "thinking_blocks": [{"content": g.prose(g.r.randint(50, 500))}],
                                       "tool_uses": [{"id": call, "name": "Bash",
                                                      "input": {"command": "make test"}}]}})
                    emit({"type": "user", "content": "Tool results: 1 results", "timestamp": g.tick(0.2, 20),
                          "session_id": sid, "message_id": g.uid(),
                          "metadata": {"tool_results": [{"tool_use_id": call, "content": g.output(
                              g.result_size()), "is_error": None}]}})
                else:
                    emit({"_type": "AssistantMessage", "timestamp": g.tick(1, 5), "session_id": sid,
                          "message_id": g.uid(), "data": {"content": [
                              {"text": g.prose(g.r.randint(10, 80))},
                              {"id": call, "name": "Read", "input": {"file_path": "/home/dev/app/x.py"}}],
                              "model": "claude-sonnet-4-5"}})
                    emit({"_type": "UserMessage", "timestamp": g.tick(0.2, 10), "session_id": sid,
                          "message_id": g.uid(), "data": {"content": [
                              {"tool_use_id": call, "content": g.output(g.result_size()), "is_error": None}]}})
            emit({"_type": "ResultMessage", "timestamp": g.tick(0.1, 1), "session_id": sid,
                  "message_id": g.uid(), "data": {"subtype": "success", "duration_ms": 30000,
                                                   "is_error": False, "num_turns": 3}})
    (folder / "state.json").write_text(json.dumps({"session_id": sid, "name": "bench", "state": "terminated"}))
    return path


def many(root: Path, count: int = 2000, seed: int = 3) -> Path:
    """A Claude Code projects folder of `count` small sessions spread over 40 projects."""
    g = Gen(seed)
    for i in range(count):
        project = root / f"-work-project-{i % 40:02d}"
        claude_code(project, g.r.randint(4_000, 40_000), seed=seed * 100_000 + i)
    return root


def single_line(path: Path, size: int, seed: int = 4) -> Path:
    """A session whose second line is one huge message (a pasted log or a base64 blob)."""
    g = Gen(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    sid = "huge"
    with open(path, "w") as f:
        f.write(json.dumps({"type": "user", "uuid": "u-1", "sessionId": sid, "timestamp": g.iso(),
                            "message": {"role": "user", "content": "Here is the whole log:"}}) + "\n")
        f.write(json.dumps({"type": "user", "uuid": "u-2", "sessionId": sid, "timestamp": g.iso(),
                            "message": {"role": "user", "content": g.output(size)}}) + "\n")
        f.write(json.dumps({"type": "assistant", "uuid": "a-1", "sessionId": sid, "timestamp": g.iso(),
                            "message": {"role": "assistant", "model": "claude-opus-4-6",
                                        "content": [{"type": "text", "text": "That is a long log."}]}})
                + "\n")
    return path
