"""Build AgentScope Studio's `database.sqlite` as Studio does, for the tests (nothing here is shipped).

The tables are the ones TypeORM makes (`synchronize`) from Studio's entities, written out as its
SQLite driver writes them (agentscope-ai/agentscope-studio packages/server/src/models: Run.ts,
Message.ts with `replyId`, the reply table of migrations/1730000000000-AddMessageReplyForeignKey.ts,
the span table of migrations/1740000000000-MigrateSpanTable.ts with flat `gen_ai.*` attributes as
1750000000000-FlattenSpanAttributes.ts leaves them), in rollback-journal mode (TypeORM's default).
Rows are what `registerRun`, `registerReply` and `pushMessage` (trpc/router.ts) write for an
AgentScope 1.x program: a run, its replies, each message's Msg as `Msg.to_dict()` gives it, and the
OpenTelemetry spans of AgentScope's tracing (invoke_agent → chat / execute_tool).

`build(db)` makes a run of two agents: the user asks, Friday thinks, calls `view_text_file`, reads
its result and answers, Critic confirms; and a second run, still running, in another project.
`push(con, run_id, msg, reply_id, name, role)` adds a message as a running program's does, `trace(con,
run_id, …)` a span as its tracing does.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

RUN = "3tXk9VbQmYp2Lr8sDc4Wn7"
OTHER = "7hGf2KqZ1xVb9NmPs3Lt6R"
T = "2026-11-20 14:03:0{}.120"

CREATE = [
    """CREATE TABLE "run_table" ("id" varchar PRIMARY KEY NOT NULL, "project" varchar NOT NULL,
        "name" varchar NOT NULL, "timestamp" varchar NOT NULL, "run_dir" varchar NOT NULL,
        "pid" integer NOT NULL, "status" varchar CHECK( "status" IN ('running','pending','done','unknown') )
        NOT NULL DEFAULT ('done'))""",
    """CREATE TABLE "reply_table" ("replyId" varchar PRIMARY KEY NOT NULL, "replyRole" varchar NOT NULL,
        "replyName" varchar NOT NULL, "createdAt" varchar NOT NULL, "finishedAt" varchar,
        "run_id" varchar NOT NULL, CONSTRAINT "FK_reply_run" FOREIGN KEY ("run_id") REFERENCES
        "run_table" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)""",
    """CREATE TABLE "message_table" ("id" varchar PRIMARY KEY NOT NULL, "msg" json NOT NULL,
        "speech" json, "run_id" varchar NOT NULL, "replyId" varchar NOT NULL,
        CONSTRAINT "FK_message_run" FOREIGN KEY ("run_id") REFERENCES "run_table" ("id") ON DELETE
        CASCADE ON UPDATE NO ACTION, CONSTRAINT "FK_message_reply" FOREIGN KEY ("replyId") REFERENCES
        "reply_table" ("replyId") ON DELETE CASCADE ON UPDATE NO ACTION)""",
    """CREATE TABLE "span_table" ("id" varchar PRIMARY KEY NOT NULL, "traceId" varchar NOT NULL,
        "spanId" varchar NOT NULL, "traceState" varchar, "parentSpanId" varchar, "flags" integer,
        "name" varchar NOT NULL, "kind" integer NOT NULL, "startTimeUnixNano" varchar NOT NULL,
        "endTimeUnixNano" varchar NOT NULL, "attributes" json NOT NULL, "droppedAttributesCount" integer,
        "events" json, "droppedEventsCount" integer, "links" json, "droppedLinksCount" integer,
        "status" json NOT NULL, "resource" json NOT NULL, "scope" json NOT NULL, "statusCode" integer,
        "serviceName" varchar, "operationName" varchar, "instrumentationName" varchar,
        "instrumentationVersion" varchar, "model" varchar, "inputTokens" integer, "outputTokens" integer,
        "totalTokens" integer, "conversationId" varchar, "latencyNs" float NOT NULL)""",
    'CREATE INDEX "IDX_span_conversationId" ON "span_table" ("conversationId")',
]


def _msg(mid: str, name: str, role: str, content, at: int) -> dict:
    return {"id": mid, "name": name, "role": role, "content": content, "metadata": None,
            "timestamp": T.format(at)}


CONVERSATION = [  # (reply id, reply name, reply role, Msg)
    ("r_user", "user", "user", _msg("m_user", "user", "user",
                                    "What is in notes.txt? Ask Critic to check it.", 1)),
    ("r_friday", "Friday", "assistant", _msg("m_think", "Friday", "assistant", [
        {"type": "thinking", "thinking": "I should read the file before answering."},
        {"type": "text", "text": "Let me read it."},
        {"type": "tool_use", "id": "call_view1", "name": "view_text_file",
         "input": {"file_path": "notes.txt"}}], 2)),
    ("r_friday", "Friday", "assistant", _msg("m_result", "system", "system", [
        {"type": "tool_result", "id": "call_view1", "name": "view_text_file",
         "output": [{"type": "text", "text": "1: buy milk\n2: ship the v2 release"}]}], 3)),
    ("r_friday", "Friday", "assistant", _msg("m_answer", "Friday", "assistant",
                                             "notes.txt lists two tasks: buy milk, and ship the v2 release.", 4)),
    ("r_critic", "Critic", "assistant", _msg("m_critic", "Critic", "assistant",
                                             [{"type": "text", "text": "Checked: the two tasks are right."}], 5)),
]

# (span id, parent, operation, name, model, input tokens, output tokens, agent, start second)
SPANS = [
    ("s_fri", None, "invoke_agent", "invoke_agent Friday", None, None, None, "Friday", 2),
    ("s_c1", "s_fri", "chat", "chat qwen-max", "qwen-max", 812, 64, None, 2),
    ("s_tool", "s_fri", "execute_tool", "execute_tool view_text_file", None, None, None, None, 3),
    ("s_c2", "s_fri", "chat", "chat qwen-max", "qwen-max", 901, 40, None, 3),
    ("s_cri", None, "invoke_agent", "invoke_agent Critic", None, None, None, "Critic", 5),
    ("s_c3", "s_cri", "chat", "chat qwen-turbo", "qwen-turbo", 300, 12, None, 5),
]
# the attributes AgentScope's tracing adds to a tool's run (tracing/_extractor.py:
# _get_tool_request_attributes, _get_tool_response_attributes), by span id
TOOL_ATTRS = {"s_tool": {"gen_ai.tool.call.id": "call_view1", "gen_ai.tool.name": "view_text_file",
                         "gen_ai.tool.call.arguments": '{"file_path": "notes.txt"}',
                         "gen_ai.tool.call.result": '[{"type": "text", "text": "1: buy milk"}]'}}
TOOK = {"s_fri": 2.6, "s_tool": 0.1, "s_cri": 0.8}  # seconds a span ran (else 0.5)
EPOCH = 1_795_701_780  # 2026-11-20 14:03:00 UTC: the spans' clock


def build(db: Path, keep_open: bool = False) -> sqlite3.Connection | None:
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA foreign_keys = ON")
    for sql in CREATE:
        con.execute(sql)
    register_run(con, RUN, "Demo", "notes-check", T.format(0), 4242, "done")
    for reply, name, role, msg in CONVERSATION:
        push(con, RUN, msg, reply, name, role)
    for span in SPANS:
        trace(con, RUN, *span, took=TOOK.get(span[0], 0.5))
    register_run(con, OTHER, "Weather", "forecast", "2026-11-21 09:00:00.000", 5151, "running")
    push(con, OTHER, _msg("m_w1", "user", "user", "Will it rain in Hangzhou tomorrow?", 0)
         | {"timestamp": "2026-11-21 09:00:01.000"}, "r_w1", "user", "user")
    if keep_open:
        return con
    con.close()
    return None


def trace(con, run_id: str, sid: str, parent: str | None, op: str, name: str, model: str | None,
          inp: int | None, out: int | None, agent: str | None, at: int, attrs: dict | None = None,
          took: float = 0.5) -> None:
    """A span as Studio's OTLP endpoint stores it (attributes flat, the run as conversationId),
    once it ended (AgentScope's BatchSpanProcessor exports ended spans only; Studio refuses one
    without an end time: otel/processor.ts), `took` seconds after it started at second `at`."""
    attrs = {"gen_ai.operation.name": op, "gen_ai.conversation.id": run_id, **(attrs or TOOL_ATTRS.get(sid, {}))}
    if agent:
        attrs["gen_ai.agent.name"] = agent
    if model:
        attrs.update({"gen_ai.request.model": model, "gen_ai.usage.input_tokens": inp,
                      "gen_ai.usage.output_tokens": out})
    start = (EPOCH + at) * 10**9
    con.execute(
        'INSERT INTO "span_table" ("id", "traceId", "spanId", "parentSpanId", "name", "kind", '
        '"startTimeUnixNano", "endTimeUnixNano", "attributes", "status", "resource", "scope", '
        '"statusCode", "serviceName", "operationName", "instrumentationName", "model", '
        '"inputTokens", "outputTokens", "totalTokens", "conversationId", "latencyNs") VALUES '
        '(?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        (sid, "t1", sid, parent, name, str(start), str(start + int(took * 10**9)), json.dumps(attrs),
         json.dumps({"code": 1, "message": ""}), json.dumps({"attributes": {"service.name": "Demo"}}),
         json.dumps({"name": "agentscope", "version": "1.0.7"}), "Demo", op, "agentscope", model,
         inp, out, (inp + out) if inp is not None else None, run_id, took * 1e9))


def register_run(con, run_id: str, project: str, name: str, when: str, pid: int, status: str) -> None:
    con.execute('INSERT INTO "run_table" ("id", "project", "name", "timestamp", "run_dir", "pid", "status") '
                "VALUES (?, ?, ?, ?, '', ?, ?)", (run_id, project, name, when, pid, status))


def push(con, run_id: str, msg: dict, reply_id: str, name: str, role: str) -> None:
    """What `pushMessage` writes: the reply row when it is new, then the message (saved again,
    same id, while it streams)."""
    if not con.execute('SELECT 1 FROM "reply_table" WHERE "replyId" = ?', (reply_id,)).fetchone():
        con.execute('INSERT INTO "reply_table" ("replyId", "replyRole", "replyName", "createdAt", "run_id") '
                    "VALUES (?, ?, ?, ?, ?)", (reply_id, role, name, msg["timestamp"], run_id))
    body = json.dumps({k: msg[k] for k in ("name", "role", "content", "metadata", "timestamp")})
    if con.execute('SELECT 1 FROM "message_table" WHERE "id" = ?', (msg["id"],)).fetchone():
        con.execute('UPDATE "message_table" SET "msg" = ? WHERE "id" = ?', (body, msg["id"]))
    else:
        con.execute('INSERT INTO "message_table" ("id", "msg", "run_id", "replyId") VALUES (?, ?, ?, ?)',
                    (msg["id"], body, run_id, reply_id))


if __name__ == "__main__":  # the committed fixture: AgentScope-Studio/database.sqlite
    target = Path(__file__).resolve().parent / "AgentScope-Studio" / "database.sqlite"
    target.unlink(missing_ok=True)
    build(target)
