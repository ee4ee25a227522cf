"""Detection over everything we have: every corpus session and every fixture is named as its folder's
format, from content alone, and `check` reads each without a crash."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import BY_NAME, detect
from viewer.store import Store

from conftest import CORPUS, ROOT, SESSIONS

FIXTURES = ROOT / "test_data" / "formats"


def sessions_under(folder: Path) -> list[str]:
    """Main transcript files, found the way the server finds them."""
    return [r.path for r in Store([folder]).sessions()]


def cases():
    out = []
    for base in (CORPUS, FIXTURES):
        for fmt_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            for path in sessions_under(fmt_dir):
                out.append(pytest.param(fmt_dir.name, path,
                                        id=f"{base.name}/{Path(path).relative_to(fmt_dir.resolve())}"))
    return out


CASES = cases()


def test_every_format_is_covered():
    formats = {c.values[0] for c in CASES}
    assert formats == set(BY_NAME) - {"unknown"}


@pytest.mark.parametrize("fmt,path", CASES)
def test_detected_as_its_folders_format(fmt, path):
    assert detect.detect_file(path).format == fmt


@pytest.mark.parametrize("fmt,path", CASES)
def test_check_reads_it_whole(fmt, path):
    r = CliRunner().invoke(main, ["check", path, "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["format"] == fmt and data["events"] > 0
    assert data["unparsed"] == []


def test_names_do_not_decide(tmp_path):
    """The same records under misleading names are still recognised by their content."""
    src = CORPUS / "legion" / "synthetic-fixture-tool_use" / "messages.jsonl"
    fake = tmp_path / "claude-session.jsonl"
    fake.write_bytes(src.read_bytes())
    assert detect.detect_file(fake).format == "legion"
    cc = next((SESSIONS / "claude-project").glob("*.jsonl"))
    renamed = tmp_path / "messages.jsonl"
    renamed.write_bytes(cc.read_bytes())
    assert detect.detect_file(renamed).format == "claude-code"


def test_a_one_line_transcript_is_scored_as_a_record(tmp_path):
    """A Claude Code session whose only line is a user message with two screenshots and an IDE
    selection: bigger than the head detection reads, and still one record of its format."""
    png = "iVBORw0KGgo" + "A" * 300_000  # two base64 images make the line ~600 KB
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    record = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/src/app",
              "sessionId": "0d3a8e6f", "version": "2.0.14", "type": "user", "uuid": "u-1",
              "timestamp": "2026-03-02T10:00:00.000Z",
              "message": {"role": "user", "content": [
                  {"type": "text", "text": "<ide_selection>The user selected lines 1 to 2 from "
                                           "/src/app/main.py:\nimport os\n</ide_selection>"},
                  image, image, {"type": "text", "text": "Why do these two screens differ?"}]}}
    p = tmp_path / "0d3a8e6f.jsonl"
    p.write_text(json.dumps(record) + "\n")
    assert p.stat().st_size > detect.HEAD_BYTES
    found = detect.detect_file(p)
    assert (found.format, found.mode) == ("claude-code", "jsonl")
    data = json.loads(CliRunner().invoke(main, ["check", str(p), "--json"]).stdout)
    assert data["format"] == "claude-code" and data["messages"] == 1 and data["unparsed"] == []
    # still a document when the one object is a document, on one line or pretty-printed
    doc = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    for text in (json.dumps(doc), json.dumps(doc, indent=2)):
        p.write_text(text + "\n")
        assert detect.detect_file(p).mode == "document"


def test_claude_code_system_lines_without_their_envelope_are_not_read_as_qwen_code(tmp_path):
    """Claude Code's system lines copied without `userType` (a test fixture, a trimmed file) still
    read as Claude Code's: Qwen Code's look-alike system records always hold a `systemPayload`."""
    lines = [{"type": "system", "subtype": "local_command", "uuid": f"s{i}", "parentUuid": f"s{i - 1}" if i else None,
              "sessionId": "5e1", "timestamp": f"2026-03-02T10:00:0{i}.000Z", "isMeta": False,
              "level": "info", "content": f"<command-name>/cmd{i}</command-name>"} for i in range(4)]
    lines.append({"type": "user", "uuid": "u1", "parentUuid": "s3", "sessionId": "5e1",
                  "timestamp": "2026-03-02T10:00:05.000Z", "message": {"role": "user", "content": "hi"}})
    p = tmp_path / "5e1.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert detect.detect_file(p).format == "claude-code"
    qwen = next((ROOT / "test_data" / "formats" / "qwen-code").rglob("*.jsonl"))
    assert detect.detect_file(qwen).format == "qwen-code"


def test_unknown_records_are_still_shown(tmp_path):
    p = tmp_path / "mystery.jsonl"
    p.write_text('{"kind": "ping", "at": 1761073190}\n{"kind": "pong"}\nnot json at all\n')
    assert detect.detect_file(p).format == "unknown"
    r = CliRunner().invoke(main, ["check", str(p), "--json"])
    data = json.loads(r.stdout)
    assert r.exit_code != 0 and data["events"] == 3 and data["unparsed"][0]["line"] == 3


def test_a_prompt_then_a_message_longer_than_the_head_is_judged_by_the_lines_after_it(tmp_path):
    # an Anthropic messages file whose second line holds a pasted screenshot (longer than the
    # head detection reads): the prompt alone reads as any chat format's, so it was taken for an
    # OpenAI list and its tool_use blocks shown as data; the lines after the long one decide
    shot = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD" * 80_000}}
    lines = [{"role": "user", "content": "Why does the page look broken?"},
             {"role": "user", "content": [shot, {"type": "text", "text": "this one"}]},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                                                "input": {"file_path": "app.css"}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "body {}"}]}]
    path = tmp_path / "messages.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert path.stat().st_size > detect.HEAD_BYTES
    assert detect.detect_file(path).format == "anthropic-messages"
