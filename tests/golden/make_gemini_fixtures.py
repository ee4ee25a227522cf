"""Writes test_data/formats/{gemini-cli,gemini-api,qwen-code}: hand-made sessions in the shapes the
writers' code writes (each folder's README names the code). Deterministic: run again, nothing changes.

    python tests/golden/make_gemini_fixtures.py test_data/formats
"""

import base64
import json
import os
import struct
import sys
import zlib

root = sys.argv[1]


def w(path, text):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def png(wd, ht):
    """A small checkered PNG (an image a tool read, a prompt's attachment)."""
    raw = b"".join(b"\x00" + b"".join((b"\xd0\x40\x30" if (x // 4 + y // 4) % 2 else b"\x30\x60\xd0")
                                      for x in range(wd)) for y in range(ht))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)

    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", wd, ht, 8, 2, 0, 0, 0))
                            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")).decode()


IMG = png(24, 16)

def call(cid, name, args, status, ts, output=None, error=None, display="", disp_name=None, desc="", md=False, extra_parts=()):
    tc = {"id": cid, "name": name, "args": args}
    if output is not None or error is not None:
        resp = {"output": output} if output is not None else {"error": error}
        tc["result"] = [{"functionResponse": {"id": cid, "name": name, "response": resp}}, *extra_parts]
    else:
        tc["result"] = None
    tc.update({"status": status, "timestamp": ts, "displayName": disp_name or name, "description": desc,
               "resultDisplay": display, "renderOutputAsMarkdown": md})
    return tc

S = "f86f5318-f47b-4433-85f8-ec9d9a417f8e"
legacy = {
 "sessionId": S,
 "projectHash": "79b6fa86e3c0d31765c7e3c6de511a7b96342a2e947135d5db396e49e27020cd",
 "startTime": "2025-10-18T14:57:20.001Z",
 "lastUpdated": "2025-10-18T14:59:41.512Z",
 "messages": [
  {"id": "5d1c2a9e-0b8f-4f0e-9a57-0c1e6f3b1a01", "timestamp": "2025-10-18T14:57:20.001Z", "type": "info",
   "content": "Loaded cached credentials."},
  {"id": "91ff4a35-0f7b-492d-8a04-ee206be11ec6", "timestamp": "2025-10-18T14:57:28.974Z", "type": "user",
   "content": [{"text": "Fix the off-by-one in @src/pager.py and show me the logo"},
               {"text": "\n--- Content from referenced files ---"},
               {"text": "\nContent from @src/pager.py:\n"},
               {"text": "def page(items, n):\n    return items[n * 10:(n + 1) * 10 + 1]\n"},
               {"text": "\n--- End of content ---"}],
   "displayContent": [{"text": "Fix the off-by-one in @src/pager.py and show me the logo"}]},
  {"id": "0c7e2f4a-6d0b-4b6e-8a3c-2d5f1e9b7c02", "timestamp": "2025-10-18T14:57:35.410Z", "type": "gemini",
   "content": "The slice takes one item too many. I'll fix it and open the logo.",
   "thoughts": [
     {"subject": "Spotting the bug", "description": "The end index adds 1, so each page holds 11 items.", "timestamp": "2025-10-18T14:57:31.020Z"},
     {"subject": "Planning the edit", "description": "Replace the slice and read the image file.", "timestamp": "2025-10-18T14:57:33.118Z"}],
   "tokens": {"input": 8123, "output": 212, "cached": 6000, "thoughts": 88, "tool": 0, "total": 8423},
   "model": "gemini-2.5-pro",
   "toolCalls": [
     call("replace-1760799455410-2b173df6d077b", "replace",
          {"file_path": "/home/ana/shop/src/pager.py", "old_string": "(n + 1) * 10 + 1]", "new_string": "(n + 1) * 10]"},
          "success", "2025-10-18T14:57:39.201Z", output="Successfully modified file: /home/ana/shop/src/pager.py (1 replacements).",
          display={"fileDiff": "--- pager.py\n+++ pager.py\n@@ -1,2 +1,2 @@\n def page(items, n):\n-    return items[n * 10:(n + 1) * 10 + 1]\n+    return items[n * 10:(n + 1) * 10]\n", "fileName": "pager.py", "originalContent": "def page(items, n):\n    return items[n * 10:(n + 1) * 10 + 1]\n", "newContent": "def page(items, n):\n    return items[n * 10:(n + 1) * 10]\n"},
          disp_name="Edit", desc="Replaces text within a file."),
     call("read_file-1760799455411-9e0f1a2b3c4d5", "read_file", {"absolute_path": "/home/ana/shop/logo.png"},
          "success", "2025-10-18T14:57:39.350Z", output="Binary content of type image/png was processed.",
          display="Read image file: logo.png", disp_name="ReadFile", desc="Reads a file.",
          extra_parts=({"inlineData": {"mimeType": "image/png", "data": IMG}},))]},
  {"id": "3b9d6c1e-7a2f-4e8b-9c0d-4e6f8a1b2c03", "timestamp": "2025-10-18T14:58:02.772Z", "type": "gemini",
   "content": [{"text": "Now running the tests."}],
   "thoughts": [], "tokens": {"input": 9402, "output": 57, "cached": 8000, "thoughts": 0, "tool": 0, "total": 9459},
   "model": "gemini-2.5-pro",
   "toolCalls": [
     call("run_shell_command-1760799482772-1a2b3c4d5e6f7", "run_shell_command", {"command": "pytest -q tests/test_pager.py", "description": "Run the pager tests"},
          "error", "2025-10-18T14:58:09.004Z", error="Command exited with code 1: 1 failed, 3 passed",
          display="1 failed, 3 passed", disp_name="Shell", desc="Runs a shell command."),
     call("write_file-1760799482773-7f6e5d4c3b2a1", "write_file", {"file_path": "/home/ana/shop/NOTES.md", "content": "pager fixed\n"},
          "cancelled", "2025-10-18T14:58:15.640Z", error="[Operation Cancelled] Reason: User did not allow tool call",
          display="User did not allow tool call", disp_name="WriteFile", desc="Writes a file.")]},
  {"id": "8e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a04", "timestamp": "2025-10-18T14:58:16.002Z", "type": "warning",
   "content": "Tool call cancelled by the user."},
  {"id": "c4d5e6f7-0812-4a3b-9c4d-5e6f7a8b9c05", "timestamp": "2025-10-18T14:58:40.118Z", "type": "user",
   "content": [{"text": "why did the test fail?"}]},
  {"id": "d5e6f7a8-1923-4b4c-8d5e-6f7a8b9c0d06", "timestamp": "2025-10-18T14:58:41.990Z", "type": "error",
   "content": "[API Error: got status: 429 Too Many Requests. Quota exceeded for gemini-2.5-pro]"},
  {"id": "e6f7a8b9-2a34-4c5d-9e6f-7a8b9c0d1e07", "timestamp": "2025-10-18T14:59:41.512Z", "type": "gemini",
   "content": "The remaining failure is in `test_last_page`: it expects the old, wrong length.",
   "thoughts": [{"subject": "Reading the failure", "description": "test_last_page asserts 11 items.", "timestamp": "2025-10-18T14:59:38.001Z"}],
   "tokens": {"input": 9777, "output": 40, "cached": 9000, "thoughts": 31, "tool": 0, "total": 9848},
   "model": "gemini-2.5-flash"},
  {"id": "f7a8b9c0-3b45-4d6e-8f7a-8b9c0d1e2f08", "timestamp": "2025-10-18T14:59:42.000Z", "type": "compression",
   "content": "a record type no version writes"}
 ]}
w("gemini-cli/legacy-json/session-2025-10-18T14-57-f86f5318.json", json.dumps(legacy, indent=2, ensure_ascii=False))

# --- the JSONL recording (0.1x+ since chatRecordingService's appendRecord) ---
J = "0f0e0d0c-1111-4222-8333-444455556666"
lines = []
def L(r): lines.append(json.dumps(r, separators=(",", ":"), ensure_ascii=False))
L({"sessionId": J, "projectHash": "4ea86ddd5c2a35fd5a1b1e6f4b8c0a9d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", "startTime": "2026-10-05T21:32:45.890Z", "lastUpdated": "2026-10-05T21:32:45.890Z", "kind": "main"})
u1 = {"id": "53b3cda7-7f0e-4d6b-8a2c-1e0f9d8c7b01", "timestamp": "2026-10-05T21:32:46.379Z", "type": "user", "content": [{"text": "List the tables in app.db"}]}
L(u1); L({"$set": {"lastUpdated": "2026-10-05T21:32:46.379Z"}})
g1 = {"id": "6a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c02", "timestamp": "2026-10-05T21:32:49.120Z", "type": "gemini", "content": [{"text": "I'll ask sqlite."}], "thoughts": [{"subject": "Choosing a tool", "description": "The shell can run sqlite3 directly.", "timestamp": "2026-10-05T21:32:48.001Z"}], "tokens": None, "model": "gemini-3-pro-preview"}
L(g1); L({"$set": {"lastUpdated": "2026-10-05T21:32:49.120Z"}})
c1 = call("run_shell_command-1791322369120-aa11bb22cc33d", "run_shell_command", {"command": "sqlite3 app.db .tables"}, "executing", "2026-10-05T21:32:49.300Z", disp_name="Shell")
g1b = dict(g1, toolCalls=[c1]); L(g1b)
c1done = call("run_shell_command-1791322369120-aa11bb22cc33d", "run_shell_command", {"command": "sqlite3 app.db .tables"}, "success", "2026-10-05T21:32:50.010Z", output="orders  users  sessions", display="orders  users  sessions", disp_name="Shell")
g1c = dict(g1, toolCalls=[c1done], tokens={"input": 5210, "output": 61, "cached": 0, "thoughts": 24, "tool": 0, "total": 5295}); L(g1c)
L({"$set": {"lastUpdated": "2026-10-05T21:32:50.010Z"}})
g2 = {"id": "7b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d03", "timestamp": "2026-10-05T21:32:52.400Z", "type": "gemini", "content": [{"text": "There are three tables: `orders`, `users` and `sessions`."}], "thoughts": [], "tokens": {"input": 5330, "output": 22, "cached": 5000, "thoughts": 0, "tool": 0, "total": 5352}, "model": "gemini-3-pro-preview"}
L(g2)
u2 = {"id": "8c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e04", "timestamp": "2026-10-05T21:33:10.000Z", "type": "user", "content": [{"text": "drop the sessions table"}]}
L(u2)
g3 = {"id": "9d4e5f6a-7b8c-4d9e-8f0a-2b3c4d5e6f05", "timestamp": "2026-10-05T21:33:12.500Z", "type": "gemini", "content": "", "thoughts": [], "tokens": None, "model": "gemini-3-pro-preview",
      "toolCalls": [call("run_shell_command-1791322392500-dd44ee55ff66a", "run_shell_command", {"command": "sqlite3 app.db 'DROP TABLE sessions'"}, "awaiting_approval", "2026-10-05T21:33:12.600Z", disp_name="Shell")]}
L(g3)
L({"$rewindTo": "8c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e04"})
u3 = {"id": "ae5f6a7b-8c9d-4e0f-9a1b-3c4d5e6f7a06", "timestamp": "2026-10-05T21:33:40.000Z", "type": "user", "content": [{"text": "how many rows does users have?"}]}
L(u3)
g4 = {"id": "bf6a7b8c-9d0e-4f1a-8b2c-4d5e6f7a8b07", "timestamp": "2026-10-05T21:33:42.000Z", "type": "gemini", "content": [{"text": "Counting."}], "thoughts": [], "tokens": None, "model": "gemini-3-pro-preview",
      "toolCalls": [call("run_shell_command-1791322422000-0a1b2c3d4e5f6", "run_shell_command", {"command": "sqlite3 app.db 'select count(*) from users'"}, "executing", "2026-10-05T21:33:42.100Z", disp_name="Shell")]}
L(g4)
L({"$set": {"summary": "List and count the tables of app.db", "lastUpdated": "2026-10-05T21:33:42.100Z"}})
w("gemini-cli/jsonl-recording/chats/session-2026-10-05T21-32-0f0e0d0c.jsonl", "\n".join(lines) + "\n")

# --- /chat save checkpoints ---
cp = [
 {"role": "user", "parts": [{"text": "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Monday, October 20, 2025.\nMy operating system is: linux"}]},
 {"role": "model", "parts": [{"text": "Got it. Thanks for the context!"}]},
 {"role": "user", "parts": [{"text": "What is in the docs folder? Also describe this diagram."}, {"inlineData": {"mimeType": "image/png", "data": IMG}}]},
 {"role": "model", "parts": [{"text": "**Looking at the folder**\nI should list docs first.", "thought": True},
                             {"text": "Let me look."},
                             {"functionCall": {"name": "list_directory", "args": {"path": "/home/ana/shop/docs"}}},
                             {"functionCall": {"name": "read_file", "args": {"absolute_path": "/home/ana/shop/docs/missing.md"}}}],},
 {"role": "user", "parts": [{"functionResponse": {"name": "list_directory", "response": {"output": "Directory listing for /home/ana/shop/docs:\narchitecture.md\nsetup.md"}}},
                            {"functionResponse": {"name": "read_file", "response": {"error": "File not found: /home/ana/shop/docs/missing.md"}}}]},
 {"role": "model", "parts": [{"text": "The docs folder holds `architecture.md` and `setup.md`; the diagram shows two services.", "thoughtSignature": "CiQBVKhc7m..."}]},
]
w("gemini-api/chat-save-checkpoint/checkpoint-docs.json", json.dumps(cp, indent=2))
cp2 = {"history": [
 {"role": "user", "parts": [{"text": "Summarise README.md"}]},
 {"role": "model", "parts": [{"functionCall": {"id": "read_file-1791000000000-1f2e3d4c5b6a7", "name": "read_file", "args": {"absolute_path": "/home/ana/shop/README.md"}}}]},
 {"role": "user", "parts": [{"functionResponse": {"id": "read_file-1791000000000-1f2e3d4c5b6a7", "name": "read_file", "response": {"output": "# Shop\nA small web shop."}}}]},
 {"role": "model", "parts": [{"text": "README.md says the project is a small web shop."}]}],
 "authType": "oauth-personal"}
w("gemini-api/chat-save-checkpoint-history/checkpoint-readme.json", json.dumps(cp2, indent=2))

# --- Qwen Code ---
Q = "2c9b7a1e-4f3d-4e2a-9b8c-7d6e5f4a3b2c"
base = {"sessionId": Q, "cwd": "/home/li/calc", "version": "0.2.1", "gitBranch": "main"}
qlines = []
def Qr(uuid, parent, ts, typ, **kw):
    r = {"uuid": uuid, "parentUuid": parent, "sessionId": Q, "timestamp": ts, "type": typ, "cwd": base["cwd"], "version": base["version"], "gitBranch": "main"}
    r.update(kw); qlines.append(json.dumps(r, separators=(",", ":"), ensure_ascii=False))
Qr("q1", None, "2026-03-02T08:00:00.000Z", "system", subtype="ui_telemetry", systemPayload={"uiEvent": {"event.name": "qwen-code.api_response", "duration_ms": 1200}})
Qr("q2", "q1", "2026-03-02T08:00:01.000Z", "user", message={"role": "user", "parts": [{"text": "Why does add(2, 2) return 5?"}]})
Qr("q3", "q2", "2026-03-02T08:00:04.000Z", "assistant", model="qwen3-coder-plus",
   message={"role": "model", "parts": [{"text": "The user reports a wrong sum; read calc.py first.", "thought": True}, {"text": "Let me read calc.py."},
                                        {"functionCall": {"id": "call_7f1c2d", "name": "read_file", "args": {"absolute_path": "/home/li/calc/calc.py"}}}]},
   usageMetadata={"promptTokenCount": 4120, "candidatesTokenCount": 48, "cachedContentTokenCount": 0, "totalTokenCount": 4168})
Qr("q4", "q3", "2026-03-02T08:00:04.500Z", "tool_result",
   message={"role": "user", "parts": [{"functionResponse": {"id": "call_7f1c2d", "name": "read_file", "response": {"output": "def add(a, b):\n    return a + b + 1\n"}}}]},
   toolCallResult={"callId": "call_7f1c2d", "status": "success", "resultDisplay": "", "error": None, "errorType": None})
Qr("q5", "q4", "2026-03-02T08:00:07.000Z", "assistant", model="qwen3-coder-plus",
   message={"role": "model", "parts": [{"text": "`add` adds an extra 1. Fixing it."},
                                        {"functionCall": {"id": "call_8a2b3c", "name": "edit", "args": {"file_path": "/home/li/calc/calc.py", "old_string": "a + b + 1", "new_string": "a + b"}}},
                                        {"functionCall": {"id": "call_9d4e5f", "name": "run_shell_command", "args": {"command": "python -m pytest -q"}}}]},
   usageMetadata={"promptTokenCount": 4300, "candidatesTokenCount": 90, "cachedContentTokenCount": 4096, "totalTokenCount": 4390})
Qr("q6", "q5", "2026-03-02T08:00:08.000Z", "tool_result",
   message={"role": "user", "parts": [{"functionResponse": {"id": "call_8a2b3c", "name": "edit", "response": {"output": "Successfully modified file: /home/li/calc/calc.py (1 replacements)."}}}]},
   toolCallResult={"callId": "call_8a2b3c", "status": "success", "resultDisplay": {"fileDiff": "-    return a + b + 1\n+    return a + b\n", "fileName": "calc.py"}})
Qr("q7", "q6", "2026-03-02T08:00:12.000Z", "tool_result",
   message={"role": "user", "parts": [{"functionResponse": {"id": "call_9d4e5f", "name": "run_shell_command", "response": {"error": "Command exited with code 2: no tests ran"}}}]},
   toolCallResult={"callId": "call_9d4e5f", "status": "error", "resultDisplay": "no tests ran", "error": {"message": "Command exited with code 2"}})
Qr("q8", "q7", "2026-03-02T08:00:13.000Z", "system", subtype="chat_compression",
   systemPayload={"info": {"originalTokenCount": 52000, "newTokenCount": 9100, "compressionStatus": 1}, "compressedHistory": []})
Qr("q9", "q8", "2026-03-02T08:00:20.000Z", "user", message={"role": "user", "parts": [{"text": "run it with unittest instead"}]})
Qr("q10", "q9", "2026-03-02T08:00:22.000Z", "assistant", model="qwen3-coder-plus",
   message={"role": "model", "parts": [{"functionCall": {"id": "call_a1b2c3", "name": "run_shell_command", "args": {"command": "python -m unittest"}}}]},
   usageMetadata={"promptTokenCount": 9300, "candidatesTokenCount": 20, "totalTokenCount": 9320})
Qr("q11", "q10", "2026-03-02T08:00:30.000Z", "tool_result",
   message={"role": "user", "parts": [{"functionResponse": {"id": "call_a1b2c3", "name": "run_shell_command", "response": {"error": "[Operation Cancelled] Reason: User cancelled the operation."}}}]},
   toolCallResult={"callId": "call_a1b2c3", "status": "cancelled", "resultDisplay": "User cancelled the operation."})
Qr("q12", "q11", "2026-03-02T08:00:31.000Z", "system", subtype="slash_command", systemPayload={"phase": "invocation", "rawCommand": "/stats"})
Qr("q13", "q12", "2026-03-02T08:00:32.000Z", "system", subtype="some_future_subtype", systemPayload={"x": 1})
w("qwen-code/chats/" + Q + ".jsonl", "\n".join(qlines) + "\n")

# --- a fork's recording (IBM Bob: model messages typed "bob-shell", a thought per streamed chunk) ---
fork = {"sessionId": "a0b1c2d3-0000-4000-8000-000000000001", "projectHash": "1f" * 32,
        "startTime": "2026-05-17T14:10:27.558Z", "lastUpdated": "2026-05-17T14:10:40.000Z",
        "messages": [
  {"id": "b0000000-0000-4000-8000-000000000001", "timestamp": "2026-05-17T14:10:27.558Z", "type": "user",
   "content": "Review the API routes in src/app/api/"},
  {"id": "b0000000-0000-4000-8000-000000000002", "timestamp": "2026-05-17T14:10:31.443Z", "type": "bob-shell",
   "content": "I'll start by listing the API directory.\n\n[using tool list_files: src/app/api]",
   "thoughts": [{"subject": "", "description": d, "timestamp": "2026-05-17T14:10:29.9%02dZ" % i}
                for i, d in enumerate(["", "The", "The user", "The user wants", "The user wants a review", "The user wants a review of the routes."])],
   "tokens": {"input": 1200, "output": 80, "cached": 0, "thoughts": 20, "tool": 0, "total": 1300},
   "model": "ibm/granite-4-h-small",
   "toolCalls": [call("tool-1", "list_files", {"path": "src/app/api"}, "success", "2026-05-17T14:10:31.464Z",
                      output="Directory listing for src/app/api:\n[DIR] chat\nroute.ts", display="Listed 2 item(s).", disp_name="ReadFolder")]}]}
w("gemini-cli/ibm-bob-fork/session-2026-05-17T14-10-a0b1c2d3.json", json.dumps(fork, indent=2))
