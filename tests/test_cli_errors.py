"""What `check` and `serve` say when they are given something they cannot use: a file that is not a
transcript, an empty one, a missing path, a port in use. One plain line (or one JSON object with an
"error" key), never a report of garbage or a traceback."""

import json
import os
import shutil
import socket

from click.testing import CliRunner

from viewer.cli import main

from conftest import SESSIONS

BINARY = "/bin/ls"


def run(*args):
    return CliRunner().invoke(main, [*map(str, args)])


def test_a_binary_file_is_not_a_transcript_in_one_line(tmp_path):
    p = tmp_path / "messages.jsonl"
    shutil.copyfile(BINARY, p)  # named like a session: the content decides
    r = run("check", p)
    assert r.exit_code != 0
    assert r.stdout == ""  # no report, no unparsed lines
    assert r.stderr.strip() == f"session-viewer: {p} is not a transcript (a binary file)"
    r = run("check", p, "--json")
    assert r.exit_code != 0
    assert json.loads(r.stdout) == {"path": str(p),
                                    "error": f"{p} is not a transcript (a binary file)"}


def test_text_that_is_not_json_is_not_a_transcript(tmp_path):
    p = tmp_path / "notes.jsonl"
    p.write_text("Meeting notes\n- ship it\n- test it\n")
    r = run("check", p)
    assert r.exit_code != 0 and r.stdout == ""
    assert "not a transcript (its first lines are not JSON records)" in r.stderr
    # a stray line before real records does not disqualify a transcript
    p.write_text('starting agent…\n{"type": "user", "content": "hi", "session_id": "s"}\n')
    r = run("check", p, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["format"] == "legion"


def test_a_folder_holding_only_a_binary_file_says_so(tmp_path):
    shutil.copyfile(BINARY, tmp_path / "messages.jsonl")
    r = run("check", tmp_path)
    assert r.exit_code != 0 and r.stdout == ""
    assert "is skipped: not a transcript (a binary file)" in r.stderr


def test_an_empty_file_is_an_empty_session(tmp_path):
    p = tmp_path / "messages.jsonl"
    p.write_bytes(b"")
    r = run("check", p)
    assert r.exit_code == 0
    assert "empty session" in r.stdout and "unknown format" not in r.output
    data = json.loads(run("check", p, "--json").stdout)
    assert data["empty"] is True and data["events"] == 0 and "error" not in data
    p.write_bytes(b"\n  \n")  # blank lines hold no record either
    assert "empty session" in run("check", p).stdout


def test_json_on_a_missing_path_prints_the_object(tmp_path):
    missing = tmp_path / "nope"
    r = run("check", missing, "--json")
    assert r.exit_code != 0
    assert json.loads(r.stdout) == {"path": str(missing),
                                    "error": f"no such file or folder: {missing}"}
    r = run("check", SESSIONS, "--json")  # several sessions: which one?
    assert r.exit_code != 0 and "holds 5 sessions" in json.loads(r.stdout)["error"]


def test_serve_on_a_port_in_use_names_the_holder_before_any_url(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = run("serve", SESSIONS, "--port", port, "--no-watch", "--no-cache")
    assert r.exit_code != 0
    assert "open http" not in r.output  # no URL that leads nowhere
    line = r.stderr.strip()
    assert line.startswith(f"session-viewer: port {port} on 127.0.0.1 is already in use by pid "
                           f"{os.getpid()} (")  # this test process holds it
    assert "choose another with --port " in line and "Traceback" not in r.output
