"""`session-viewer check` and `serve` argument handling, without a browser."""

import json

import pytest
from click.testing import CliRunner

from viewer.cli import main

from conftest import CORPUS, SESSIONS


def check(*args):
    return CliRunner().invoke(main, ["check", *map(str, args)])


def test_check_json_reports_the_session():
    r = check(SESSIONS / "legion-feature-tour", "--json")
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert data["format"] == "legion" and data["lines"] == 19 and data["events"] == 19
    assert data["hidden"] == 2
    # the grep left open when the user interrupted is counted as interrupted, not as an error
    assert data["tool_calls"] == {"pending": 0, "executing": 0, "completed": 2, "error": 1,
                                  "interrupted": 1}
    assert data["orphans"] == ["toolu_ghost_9"]
    assert data["unparsed"] == [{"line": 17, "reason": data["unparsed"][0]["reason"]}]
    assert "malformed JSON" in data["unparsed"][0]["reason"]


def test_check_text_names_format_and_unparsed_lines():
    r = check(SESSIONS / "legion-feature-tour")
    assert r.exit_code == 0
    assert "format      legion" in r.output and "line 17: malformed JSON" in r.output


@pytest.mark.parametrize("fmt", ["legion", "claude-code"])
def test_check_reads_every_corpus_session(fmt):
    for folder in sorted((CORPUS / fmt).iterdir()):
        r = check(folder, "--json")
        assert r.exit_code == 0, r.output
        data = json.loads(r.output)
        assert data["format"] == fmt and data["events"] > 0 and data["unparsed"] == []


def test_missing_path_is_one_line_and_nonzero(tmp_path):
    r = check(tmp_path / "nope")
    assert r.exit_code != 0
    assert r.output.strip().startswith("session-viewer: no such file") and "Traceback" not in r.output


def test_unknown_format_prints_the_object_and_fails(tmp_path):
    p = tmp_path / "mystery.jsonl"
    p.write_text('{"foo": 1}\n{"bar": 2}\n')
    r = CliRunner().invoke(main, ["check", str(p), "--json"])
    assert r.exit_code != 0
    data = json.loads(r.stdout)
    assert data["format"] == "unknown" and data["events"] == 2


def test_unreadable_file_fails_plainly(tmp_path, unreadable):
    p = tmp_path / "messages.jsonl"
    p.write_text('{"type": "user", "content": "hi", "session_id": "s"}\n')
    unreadable(p)
    r = check(p)
    assert r.exit_code != 0
    assert "cannot read" in r.output and "Permission denied" in r.output
    assert "Traceback" not in r.output
    said = r.output.replace(str(p), "PATH")  # (the temp folder's own name may hold any word)
    assert "format" not in said and "events" not in said  # no report of zeros before it
    data = json.loads(check(p, "--json").output)
    assert set(data) == {"path", "error"} and "Permission denied" in data["error"]


def test_export_of_a_folder_of_sessions_asks_which_one_to_export(tmp_path):
    r = CliRunner().invoke(main, ["export", str(SESSIONS), "-o", str(tmp_path / "x.html")])
    assert r.exit_code == 1
    assert "holds 5 sessions; name the one to export, e.g." in r.output
    assert not (tmp_path / "x.html").exists()


def test_help_names_each_command_in_a_whole_sentence_and_explains_port_and_verbose():
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0
    commands = r.output.split("Commands:")[1]
    for name in ("check", "export", "serve"):
        assert name in commands
    assert "..." not in commands  # Click cuts a long first line of a docstring with "..."
    serve = CliRunner().invoke(main, ["serve", "--help"]).output
    assert "Port to listen on." in serve  # every option says what it does
    assert "Log more (INFO messages" in serve


def test_check_names_the_session_in_a_folder_or_asks(tmp_path):
    r = check(SESSIONS / "claude-project")
    assert r.exit_code == 0 and "format      claude-code" in r.output
    r = check(SESSIONS)
    assert r.exit_code != 0 and "holds 5 sessions" in r.output


def test_serve_refuses_remote_interfaces_without_the_flag():
    r = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--no-watch"])
    assert r.exit_code != 0 and "--allow-remote" in r.output


def test_serve_reports_a_missing_root(tmp_path):
    r = CliRunner().invoke(main, ["serve", str(tmp_path / "missing")])
    assert r.exit_code != 0 and "no such file or folder" in r.output


def test_serve_refuses_a_port_that_cannot_exist_before_printing_a_url(monkeypatch):
    from viewer import cli

    def never(*args):  # had the port been taken, the test would serve for ever instead of failing
        raise AssertionError("serve went on to listen")

    monkeypatch.setattr(cli, "make_server", never)
    r = CliRunner().invoke(main, ["serve", "--port", "99999", "--no-watch"])
    assert r.exit_code == 2
    assert "Invalid value for '--port'" in r.output and "99999" in r.output
    assert "open http" not in r.output  # it listened on 34463 (99999 mod 65536) and said 99999


def test_an_exported_file_is_readable_as_any_file_written_here(tmp_path):
    import os

    out = tmp_path / "tour.html"
    r = CliRunner().invoke(main, ["export", str(SESSIONS / "legion-feature-tour"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask  # not the temporary file's 0600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # nothing left beside it
