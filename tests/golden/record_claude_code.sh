#!/bin/bash
# Record real Claude Code sessions against the scripted fake API (fake_anthropic_api.py), offline.
#   tests/golden/record_claude_code.sh SCRATCH_DIR
# Installs @anthropic-ai/claude-code from npm into SCRATCH_DIR, runs four prompts (a tour of the
# tools with a background sub-agent, its --continue turn, a workflow, a call interrupted with
# SIGINT), an auto-compaction (a reply whose usage fills the context window, then a --continue
# turn the CLI compacts before) and a skill the model loads (~/.claude/skills), and scrubs the result into SCRATCH_DIR/scrubbed/<home>/-home-user-demo.
set -eu
S=$(realpath "$1"); HERE=$(dirname "$(realpath "$0")"); PORT=${PORT:-8765}
mkdir -p "$S" && cd "$S"
[ -x node_modules/@anthropic-ai/claude-code-linux-x64/claude ] || npm i @anthropic-ai/claude-code@2.1.331
CC=$S/node_modules/@anthropic-ai/claude-code-linux-x64/claude
rm -rf home home2 home3 home4 home5 proj scrubbed requests.jsonl; mkdir -p home home2 home3 home4 home5/.claude/skills/release-notes proj/demo
(cd proj/demo && git init -q . && echo "# demo project" > README.md)
FAKE_CWD=$S/proj/demo python3 "$HERE/fake_anthropic_api.py" "$PORT" 2> fakeapi.log & API=$!
trap 'kill $API' EXIT
sleep 1
run() {  # run HOME args... (in a subshell: it becomes the CLI, so a signal reaches it)
  local h=$1; shift
  cd "$S/proj/demo" && HOME=$h ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=fake \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
    exec timeout --foreground 120 "$CC" --model claude-sonnet-4-5 --permission-mode acceptEdits \
    --allowedTools "Bash Read Write Edit Grep Glob Agent Workflow" "$@"
}
(run "$S/home" -p "Give me a tour of your tools: shell, files, search, a sub-agent.")
(run "$S/home" -p "Is the notes file still there?" --continue)
(run "$S/home2" -p "Use a workflow to check this folder with two agents.")
(trap - INT; run "$S/home3" -p "Run the slow job.") & R=$!; sleep 8; kill -INT $R; wait $R || true
# the fake's usage says 188k tokens are cached; with the window said to be 200k the CLI compacts
# before the next turn (without the setting, 2.1.331 did not compact at 199k tokens)
export CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000
(run "$S/home4" -p "Read the big log.")
(run "$S/home4" -p "What was in the log?" --continue)
unset CLAUDE_CODE_AUTO_COMPACT_WINDOW
printf -- '---\nname: release-notes\ndescription: Write release notes for this project in NOTES.md\n---\n\n# Release notes\n\nList every change since the last tag as a bullet in NOTES.md.\n' \
  > home5/.claude/skills/release-notes/SKILL.md
(run "$S/home5" -p "Write the release notes.")
cd "$S"
for h in home home2 home3 home4 home5; do
  python3 "$HERE/scrub_claude_code.py" "$S/$h/.claude/projects" "$S/scrubbed/$h" \
    "$S/proj/demo=/home/user/demo" "$(echo "$S/proj/demo" | tr / -)=-home-user-demo" "$S/$h=/home/user"
done
