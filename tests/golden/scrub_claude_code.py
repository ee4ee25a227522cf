"""Make real Claude Code recordings small enough to commit, keeping them real otherwise.

    python tests/golden/scrub_claude_code.py SRC_PROJECT_DIR DST_PROJECT_DIR OLD=NEW...

Copies every file below SRC to DST. In each line, every OLD path becomes NEW (the scratch folders
the recording ran in become /home/user/...); strings longer than 160 characters inside the CLI's
request bookkeeping (the system prompt and tool list it snapshots: api-request-shape,
prompt_snapshot, skill and agent listings) are cut to their first 80 characters with a note. Lines
are otherwise left as the CLI wrote them (only a cut line is re-serialised).
"""
import json
import shutil
import sys
from pathlib import Path

CUT = {"api-request-shape", "api-request-blob", "api-request"}
CUT_ATTACHMENTS = {"prompt_snapshot", "skill_listing", "agent_listing_delta", "deferred_tools_delta",
                   "session_context"}


def cut(value):
    if isinstance(value, str) and len(value) > 160:
        return value[:80] + f"… [cut for the fixture: {len(value) - 80:,} more characters]"
    if isinstance(value, list):
        return [cut(v) for v in value]
    if isinstance(value, dict):
        return {k: cut(v) for k, v in value.items()}
    return value


def scrub_line(line: str, subs) -> str:
    for old, new in subs:
        line = line.replace(old, new)
    try:
        rec = json.loads(line)
    except ValueError:
        return line
    att = rec.get("attachment") if isinstance(rec, dict) else None
    if isinstance(rec, dict) and (rec.get("type") in CUT or (
            isinstance(att, dict) and att.get("type") in CUT_ATTACHMENTS)):
        return json.dumps(cut(rec), ensure_ascii=False, separators=(",", ":"))
    return line


def main(src, dst, *pairs):
    subs = [tuple(p.split("=", 1)) for p in pairs]
    src, dst = Path(src), Path(dst)
    for p in sorted(src.rglob("*")):
        if not p.is_file():
            continue
        rel = str(p.relative_to(src))
        for old, new in subs:
            rel = rel.replace(old.strip("/").replace("/", "-"), new.strip("/").replace("/", "-"))
        out = dst / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix in (".jsonl", ".json", ".js"):
            lines = p.read_text(encoding="utf-8").split("\n")
            out.write_text("\n".join(scrub_line(x, subs) if x else x for x in lines), encoding="utf-8")
        else:
            shutil.copyfile(p, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
