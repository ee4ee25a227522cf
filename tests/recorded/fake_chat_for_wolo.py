"""A scripted OpenAI chat-completions server (stream and non-stream) for driving agent CLIs.

POST */chat/completions: the reply is picked by how many assistant turns follow the last user
message. Script (Wolo): reasoning + write, then shell ok + shell failing + read of a missing file,
then edit, then a final answer. Usage: python fake_chat.py PORT WORKDIR [SCRIPT]; SCRIPT `risky`:
a high-risk shell command (Wolo's own guard refuses it when stdin is not a terminal) beside a
harmless one, then a final answer.
"""
import itertools, json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, WORK = int(sys.argv[1]), sys.argv[2]
SCRIPT = sys.argv[3] if len(sys.argv) > 3 else "tools"
ids = itertools.count(1)


def call(name, args):
    return {"id": f"call_{name}_{next(ids)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def script(step):
    if SCRIPT == "risky":
        steps = [
            {"content": "Resetting the repository, then listing it.",
             "tool_calls": [call("shell", {"command": "git reset --hard", "description": "reset"}),
                            call("shell", {"command": "echo listed", "description": "list"})]},
            {"content": "The reset was refused; the listing ran."},
        ]
        return steps[min(step, len(steps) - 1)]
    steps = [
        {"reasoning_content": "First write the file the user asked for.",
         "content": "I'll create `hello.py`.",
         "tool_calls": [call("write", {"file_path": f"{WORK}/hello.py", "content": "print('hello')\n"})]},
        {"reasoning_content": "Run it, run something that fails, and read a missing file.",
         "content": "",
         "tool_calls": [call("shell", {"command": "python3 hello.py", "description": "run it"}),
                        call("shell", {"command": "ls /nope/missing", "description": "list a missing folder"}),
                        call("read", {"file_path": f"{WORK}/missing.txt"})]},
        {"content": "Now a small edit.",
         "tool_calls": [call("edit", {"file_path": f"{WORK}/hello.py", "old_string": "hello",
                                      "new_string": "hello, world"})]},
        {"reasoning_content": "All done.",
         "content": "Done: `hello.py` prints **hello, world**; `ls` of a missing folder failed and "
                    "`missing.txt` does not exist.\n\n<script>alert(1)</script>"},
    ]
    return steps[min(step, len(steps) - 1)]


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        self._json({"object": "list", "data": [{"id": "fake-glm", "object": "model"}]})

    def _json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        msgs = body.get("messages") or []
        last_user = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=0)
        step = sum(1 for m in msgs[last_user:] if m.get("role") == "assistant")
        msg = dict(script(step), role="assistant")
        usage = {"prompt_tokens": 1000 + 100 * step, "completion_tokens": 50, "total_tokens": 1050 + 100 * step}
        finish = "tool_calls" if msg.get("tool_calls") else "stop"
        cid = f"chatcmpl-{next(ids)}"
        if not body.get("stream"):
            return self._json({"id": cid, "object": "chat.completion", "created": 1764000000, "model": body.get("model"),
                               "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": usage})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()

        def chunk(delta, fin=None, **extra):
            c = {"id": cid, "object": "chat.completion.chunk", "created": 1764000000, "model": body.get("model"),
                 "choices": [{"index": 0, "delta": delta, "finish_reason": fin}], **extra}
            self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
        chunk({"role": "assistant", "content": ""})
        if msg.get("reasoning_content"):
            chunk({"reasoning_content": msg["reasoning_content"]})
        text = msg.get("content") or ""
        for k in range(0, len(text), 20):
            chunk({"content": text[k:k + 20]})
        for i, tc in enumerate(msg.get("tool_calls") or []):
            # one chunk per call: lexilux (Wolo's client) only completes a call whose first chunk
            # already holds its whole JSON arguments
            chunk({"tool_calls": [{"index": i, "id": tc["id"], "type": "function", "function": tc["function"]}]})
        chunk({}, finish)
        self.wfile.write(f"data: {json.dumps({'id': cid, 'object': 'chat.completion.chunk', 'choices': [], 'usage': usage})}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


ThreadingHTTPServer(("127.0.0.1", PORT), H).serve_forever()
