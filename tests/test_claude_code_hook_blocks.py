"""Claude Code: a call a PreToolUse hook stopped reads "blocked by hook", with the hook's own words.

What the CLI writes for such a call, by version (the line of the call's result):
- exit code 2, every version: the result "PreToolUse:Bash hook error: [<the hook's command>]:
  <its stderr>", `is_error`, `toolUseResult` "Error: " + it (anthropics/claude-code#85490 on
  2.1.220, #88292 on 2.1.234; the recording in test_data/formats/claude-code/2.1.331-tty);
  before 2.1.2xx nothing else on the line, after it `toolDenialKind` "permission-rule", and in
  2.1.331 `permissionDecision` {decision: reject, source: hook, reasonType: hook};
- a JSON `permissionDecision: deny`: its `permissionDecisionReason` as the whole result (the
  corpus's spotter-progress-compact, 2.1.39: "Pre-commit validation failed: …", three Bash
  calls), or "Hook PreToolUse:Agent denied this tool" when it gave none (#59643 on 2.1.143,
  #82642 on 2.1.220, with `toolDenialKind` "permission-rule"). 2.0 writes the reason so too; from
  2.0.57 on, whose bundle sends a person's comment after "To tell you how to proceed, the user
  said:\n", a bare reason can only be a hook's (before it, 2.0.5 sent the comment bare: the person's).
Before, 2.0's exit-code block and 2.1's bare reason read as plain errors, and 2.1.331's JSON
deny with its reason as "denied by settings".
"""

import json

from viewer.index import SessionIndex
from viewer.timeline import load_events
from viewer.web import create_app

from conftest import CORPUS

_ENV = {"isSidechain": False, "userType": "external", "cwd": "/home/u/demo", "sessionId": "s30",
        "gitBranch": "main"}
_EXIT2 = ("PreToolUse:Bash hook error: [grep -q curl && { echo 'Network calls are blocked by policy.' >&2; "
          "exit 2; } || exit 0]: Network calls are blocked by policy.\n")
_HOOK_DECISION = {"decision": "reject", "source": "hook", "reasonType": "hook"}


def _session(tmp_path, calls):
    out, n = [], 0

    def add(version, rec):
        nonlocal n
        n += 1
        out.append({**_ENV, "version": version, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n > 1 else None,
                    "timestamp": f"2026-02-12T20:{n // 12:02d}:{n % 12 * 5:02d}.000Z", **rec})

    add("2.1.39", {"type": "user", "message": {"role": "user", "content": "commit it"}})
    for cid, version, name, text, extra in calls:
        add(version, {"type": "assistant", "message": {"id": f"m{cid}", "type": "message", "role": "assistant",
            "model": "claude-opus-4-6", "content": [{"type": "tool_use", "id": cid, "name": name,
                                                     "input": {"command": "git commit -m x"}}]}})
        add(version, {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": text, "is_error": True, "tool_use_id": cid}]},
            "toolUseResult": "Error: " + text, **extra})
    folder = tmp_path / "projects" / "-home-u-demo"
    folder.mkdir(parents=True)
    path = folder / "s30.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


CALLS = [
    # 2.0.55: an exit-code block, nothing on the line says a hook refused it but its words
    ("h1", "2.0.55", "Bash", _EXIT2, {}),
    # 2.1.39: a JSON deny's reason as the whole result (spotter-progress-compact's shape)
    ("h2", "2.1.39", "Bash", "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.", {}),
    # 2.1.220: a JSON deny with no reason
    ("h3", "2.1.220", "Bash", "Hook PreToolUse:Bash denied this tool", {"toolDenialKind": "permission-rule"}),
    # 2.1.331: a JSON deny with its reason, the line names the hook as the decision's source
    ("h4", "2.1.331", "Write", "Write the file under docs/ instead.",
     {"toolDenialKind": "permission-rule", "permissionDecision": _HOOK_DECISION}),
    # 2.0.76: a JSON deny's reason, bare, where the person's comment would follow "the user said:"
    ("h7", "2.0.76", "Bash", "Use make release instead of committing by hand.", {}),
    # 2.0.5: the same bare words are the person's comment typed in the permission dialog
    ("h8", "2.0.5", "Bash", "please add transformer.js too first", {}),
    # an MCP tool's failure may be any words: it stays an error
    ("h5", "2.1.39", "mcp__github__create_issue", "repository not found", {}),
    # a settings rule's refusal stays the rule's
    ("h6", "2.1.331", "Bash", "Permission to use Bash with command rm -rf build has been denied.",
     {"toolDenialKind": "permission-rule",
      "permissionDecision": {"decision": "reject", "source": "config", "reasonType": "rule"}}),
]


def test_each_version_s_hook_block_reads_blocked_by_hook(tmp_path):
    idx = SessionIndex(_session(tmp_path, CALLS)).build()
    assert {c.id: c.state for c in idx.calls.calls.values()} == {
        "h1": "blocked_by_hook", "h2": "blocked_by_hook", "h3": "blocked_by_hook", "h4": "blocked_by_hook",
        "h5": "error", "h6": "denied_by_settings", "h7": "blocked_by_hook", "h8": "denied"}
    assert idx.calls.errors() == 1  # a refused call is no failure of the agent's
    evs = load_events(idx, "main", 0, len(idx.threads["main"]))
    results = {b.tool_use_id: b for e in evs for b in e.tool_results()}
    # the hook's words, under a line naming the hook; its command is kept in that line's detail
    h1 = results["h1"].content
    assert [(b.kind, b.text) for b in h1] == [
        ("notice", "hook PreToolUse:Bash blocked the call and said:"), ("text", "Network calls are blocked by policy.")]
    assert h1[0].detail["command"].startswith("grep -q curl")
    assert [(b.kind, b.text) for b in results["h3"].content] == [
        ("notice", "hook PreToolUse:Bash blocked the call and gave no reason")]
    assert [b.text for b in results["h2"].content] == ["Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted."]
    assert [(b.kind, b.text) for b in results["h4"].content] == [
        ("notice", "a PreToolUse hook blocked the call and said:"), ("text", "Write the file under docs/ instead.")]
    assert [b.text for b in results["h7"].content] == ["Use make release instead of committing by hand."]


def test_a_version_whose_patch_is_no_number_reads_as_the_person_s_words(tmp_path):
    """A line's `version` whose patch is not decimal digits (a superscript digit passes
    str.isdigit and not int) is no release the cut at 2.0.57 can place: the bare words stay the
    person's, as for 2.0.5, where reading the line raised."""
    idx = SessionIndex(_session(tmp_path, [("h9", "2.0.\u00b2", "Bash", "please add transformer.js too first", {})])).build()
    assert {c.id: c.state for c in idx.calls.calls.values()} == {"h9": "denied"}


def test_the_page_says_blocked_by_hook_and_shows_what_the_hook_said(tmp_path):
    _session(tmp_path, CALLS)
    app = create_app({"ROOTS": [str(tmp_path / "projects")], "CACHE_DIR": str(tmp_path / "cache"),
                      "WATCH": False, "TESTING": True})
    html = app.test_client().get("/s/-home-u-demo~s30").get_data(as_text=True)

    def card(cid):
        start = html.index(f'id="tc-{cid}"')
        return html[start:html.index(f'id="tc-{cid}-result"', start) + 600]

    for cid in ("h1", "h2", "h3", "h4", "h7"):
        assert "blocked by hook" in card(cid) and "denied by user" not in card(cid), cid
    assert "hook PreToolUse:Bash blocked the call and said:" in card("h1")
    assert "Network calls are blocked by policy." in card("h1")
    assert "a PreToolUse hook blocked the call and said:" in card("h2")
    assert "a PreToolUse hook blocked the call and said:" in card("h4")
    assert "Write the file under docs/ instead." in card("h4")
    assert "a PreToolUse hook blocked the call and said:" in card("h7")
    assert "Use make release instead of committing by hand." in card("h7")
    assert "denied by user" in card("h8") and "blocked by hook" not in card("h8")
    assert "blocked by hook" not in card("h5") and "blocked by hook" not in card("h6")


def test_the_corpus_s_pre_commit_hook_blocks_read_blocked_by_hook():
    """spotter-progress-compact (2.1.39): three `git commit` calls its pre-commit PreToolUse hook
    refused (`hook_progress` PreToolUse:Bash right before each result)."""
    path = CORPUS / "claude-code" / "spotter-progress-compact" / "messages.jsonl"
    idx = SessionIndex(path).build()
    blocked = [c for c in idx.calls.calls.values() if c.state == "blocked_by_hook"]
    assert len(blocked) == 3 and {c.name for c in blocked} == {"Bash"}
