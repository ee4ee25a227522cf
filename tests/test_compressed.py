"""Compressed transcripts (Codex CLI's older rollouts `rollout-….jsonl.zst`, any `*.jsonl.zst` or
`*.jsonl.gz`): listed, read, linked and checked as plain ones, through a decompressed copy in the
cache folder — never anything written beside the transcript."""

import gzip
import os
import re
import shutil
from pathlib import Path

import orjson
import pytest
import zstandard
from click.testing import CliRunner

from viewer.cli import main
from viewer.web import create_app

from conftest import ROOT

CODEX = ROOT / "test_data" / "formats" / "codex" / "sessions"
CURRENT = next(CODEX.glob("2025/10/29/rollout-*.jsonl"))
TOUR = ROOT / "test_data" / "sessions" / "legion-feature-tour" / "messages.jsonl"
TITLE = "The cart total ignores discounts. Fix it and run the tests."


def zst(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


def codex_root(tmp_path: Path, plain_too: bool = False) -> tuple[Path, Path]:
    """A Codex sessions folder holding CURRENT compressed as Codex does (and the plain one)."""
    day = tmp_path / "sessions" / "2025" / "10" / "29"
    day.mkdir(parents=True)
    packed = day / (CURRENT.name + ".zst")
    packed.write_bytes(zst(CURRENT.read_bytes()))
    if plain_too:
        shutil.copy(CURRENT, day / CURRENT.name)
    return tmp_path / "sessions", packed


def client(tmp_path: Path, root: Path):
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    return app.test_client()


def listed(c) -> list[dict]:
    return c.get("/sessions.json").get_json()["sessions"]


def snapshot(folder: Path) -> dict:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_a_codex_rollout_compressed_by_codex_is_listed_with_its_title_and_format(tmp_path):
    root, packed = codex_root(tmp_path)
    (s,) = listed(client(tmp_path, root))
    assert s["path"] == str(packed)
    assert s["format"] == "codex" and s["title"] == TITLE
    assert s["label"] == "2025/10/29/" + CURRENT.name[:-len(".jsonl")]  # no .jsonl.zst
    assert s["size"] == packed.stat().st_size  # the row is the file's
    assert s["messages"] == 12 and s["tool_calls"] == 6


def test_its_page_shows_the_events_and_a_permalink_opens_one(tmp_path):
    root, _ = codex_root(tmp_path)
    c = client(tmp_path, root)
    (s,) = listed(c)
    r = c.get(f"/s/{s['key']}")
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert TITLE in html and "gpt-5-codex" in html
    ids = re.findall(r'<li class="ev [^"]*" id="m-([^"]+)"', html)
    assert len(ids) > 10
    target = ids[len(ids) // 2]
    p = c.get(f"/s/{s['key']}/m/{target}")
    assert p.status_code == 200
    assert f'id="m-{target}"' in p.get_data(as_text=True)


def test_a_gzipped_transcript_of_any_format_is_read_too(tmp_path):
    root = tmp_path / "kept"
    (root / "tour").mkdir(parents=True)
    (root / "tour" / "messages.jsonl.gz").write_bytes(gzip.compress(TOUR.read_bytes()))
    (root / "old-run.jsonl.gz").write_bytes(gzip.compress(TOUR.read_bytes()))
    c = client(tmp_path, root)
    found = {s["label"]: s for s in listed(c)}
    assert set(found) == {"tour", "old-run"}
    plain = client(tmp_path / "p", TOUR.parent)
    (want,) = listed(plain)
    for s in found.values():
        assert (s["format"], s["title"], s["events"]) == (want["format"], want["title"], want["events"])
        assert c.get(f"/s/{s['key']}").status_code == 200


def test_a_plain_rollout_beside_its_zst_is_the_one_listed(tmp_path):
    """As Codex reads them: the plain `.jsonl` hides its `.jsonl.zst`; a `.zst` alone is listed."""
    root, packed = codex_root(tmp_path, plain_too=True)
    other = packed.parent / CURRENT.name.replace("T09-00-00", "T11-30-00").replace("cd5.", "cd6.")
    other = other.with_name(other.name + ".zst")
    other.write_bytes(packed.read_bytes())
    sessions = listed(client(tmp_path, root))
    assert sorted(s["path"] for s in sessions) == sorted([str(packed)[:-len(".zst")], str(other)])


def test_the_transcript_folder_is_left_as_it_was(tmp_path):
    root, _ = codex_root(tmp_path)
    (root / "x.jsonl.gz").write_bytes(gzip.compress(TOUR.read_bytes()))
    before = snapshot(root)
    c = client(tmp_path, root)
    for s in listed(c):
        assert c.get(f"/s/{s['key']}").status_code == 200
        assert c.get(f"/s/{s['key']}.json").status_code == 200
    assert snapshot(root) == before
    assert any((tmp_path / "cache").rglob("*.jsonl"))  # the copies are in the cache


def test_check_reports_a_compressed_rollout(tmp_path):
    _, packed = codex_root(tmp_path)
    r = CliRunner(env={"XDG_CACHE_HOME": str(tmp_path / "xdg")}).invoke(
        main, ["check", str(packed), "--json"])
    assert r.exit_code == 0, r.output
    report = orjson.loads(r.output)
    assert (report["format"], report["title"], report["events"]) == ("codex", TITLE, 45)


@pytest.mark.parametrize("damage", ["cut", "garbage", "gzip-cut"])
def test_a_damaged_archive_says_so_on_its_page_and_in_check(tmp_path, damage):
    root = tmp_path / "sessions"
    root.mkdir()
    data = CURRENT.read_bytes() * 40
    if damage == "gzip-cut":
        packed = root / "run.jsonl.gz"
        whole = gzip.compress(data)
    else:
        packed = root / "run.jsonl.zst"
        whole = zst(data)
    packed.write_bytes(b"\x28\xb5\x2f\xfd not really zstd at all" if damage == "garbage"
                       else whole[: len(whole) // 2])
    c = client(tmp_path, root)
    (s,) = listed(c)  # listed: its page says what is wrong
    r = c.get(f"/s/{s['key']}")
    assert r.status_code == 503  # "Could not show this", the reason in words
    assert "the compressed file is damaged or cut short" in r.get_data(as_text=True)
    assert "Traceback" not in r.get_data(as_text=True)
    out = CliRunner(env={"XDG_CACHE_HOME": str(tmp_path / "xdg")}).invoke(main, ["check", str(packed)])
    assert out.exit_code == 1 and isinstance(out.exception, SystemExit)  # one line, no traceback
    assert "damaged or cut short" in out.output


def test_a_decompression_bomb_stops_at_the_limit_and_says_so(tmp_path, monkeypatch):
    from viewer import compressed

    monkeypatch.setattr(compressed, "MAX_BYTES", 1 << 20)
    root = tmp_path / "sessions"
    root.mkdir()
    line = CURRENT.read_bytes().splitlines(keepends=True)[0]
    (root / "bomb.jsonl.zst").write_bytes(zst(line * ((4 << 20) // len(line))))
    c = client(tmp_path, root)
    (s,) = listed(c)
    r = c.get(f"/s/{s['key']}")
    assert r.status_code == 503  # "Could not show this", the reason in words
    assert "decompresses to more than 1 MB" in r.get_data(as_text=True)
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.stat().st_size > 1 << 20]


def test_a_changed_archive_is_read_again_and_old_copies_go(tmp_path):
    root = tmp_path / "sessions"
    root.mkdir()
    packed = root / "run.jsonl.gz"
    lines = TOUR.read_bytes().splitlines(keepends=True)
    packed.write_bytes(gzip.compress(b"".join(lines[:5])))
    c = client(tmp_path, root)
    (s,) = listed(c)
    first = s["events"]
    assert c.get(f"/s/{s['key']}").status_code == 200
    packed.write_bytes(gzip.compress(b"".join(lines)))
    os.utime(packed, ns=(packed.stat().st_atime_ns, packed.stat().st_mtime_ns + 10**9))
    assert c.get(f"/s/{s['key']}").status_code == 200
    (s,) = listed(c)
    assert s["events"] > first
    copies = list((tmp_path / "cache" / "decompressed").glob("*.jsonl"))
    assert len(copies) == 1  # the first copy went
    packed.unlink()
    client(tmp_path, root)  # a new server sweeps the copies of files gone
    assert not list((tmp_path / "cache" / "decompressed").glob("*.jsonl"))


def test_a_spawned_thread_and_its_parent_both_compressed_still_nest(tmp_path):
    """Codex compresses a parent and the threads it spawned alike: the parent's page still nests
    the thread under its call, and the thread still names its parent."""
    from viewer.formats import codex
    from viewer.index import SessionIndex

    day = tmp_path / "2026" / "02" / "10"
    day.mkdir(parents=True)
    parent_src = next(CODEX.glob("2026/02/10/rollout-*-019c4a10-*.jsonl"))
    child_src = next(CODEX.glob("2026/02/10/rollout-*-019c4a11-*.jsonl"))
    parent, child = day / (parent_src.name + ".zst"), day / (child_src.name + ".zst")
    for src, dst in ((parent_src, parent), (child_src, child)):
        dst.write_bytes(zst(src.read_bytes()))
        os.utime(dst, ns=(src.stat().st_atime_ns, src.stat().st_mtime_ns))
    idx = SessionIndex(parent).build()
    assert list(idx.threads) == ["main", "019c4a11-2222-7333-8444-555566667777"]
    assert codex.session_info(child)["parent_path"] == str(parent)


def test_copies_past_the_budget_go_and_are_made_again_when_read(tmp_path, monkeypatch):
    """Codex compresses to save the disk: the cache keeps at most BUDGET bytes of copies, and a
    session whose copy went still opens (its index kept: the copy comes back the same)."""
    from viewer import compressed

    monkeypatch.setattr(compressed, "BUDGET", TOUR.stat().st_size + 10)
    root = tmp_path / "sessions"
    root.mkdir()
    for name in ("a", "b"):
        (root / f"{name}.jsonl.gz").write_bytes(gzip.compress(TOUR.read_bytes()))
    c = client(tmp_path, root)
    sessions = listed(c)
    for s in sessions + sessions:
        r = c.get(f"/s/{s['key']}")
        assert r.status_code == 200 and s["title"] in r.get_data(as_text=True)
    assert len(list((tmp_path / "cache" / "decompressed").glob("*.jsonl"))) == 1


def test_an_archive_compressed_a_moment_ago_is_never_live(tmp_path):
    """A compressed transcript is an archive: nothing appends to it, its time is when it was
    compressed — neither its list row nor its page says "live", as they do for a plain transcript
    written as recently."""
    root = tmp_path / "kept"
    root.mkdir()
    (root / "packed.jsonl.gz").write_bytes(gzip.compress(TOUR.read_bytes()))
    shutil.copy(TOUR, root / "plain.jsonl")  # (both written just now)
    c = client(tmp_path, root)
    rows = {s["label"]: s for s in listed(c)}
    listing = c.get("/").get_data(as_text=True)

    def row(key):
        at = listing.index(f'data-key="{key}"')
        return listing[at:listing.index("</tr>", at)]
    assert "live-badge" in row(rows["plain"]["key"]) and "live-badge" not in row(rows["packed"]["key"])
    for label, live in (("plain", True), ("packed", False)):
        html = c.get(f"/s/{rows[label]['key']}").get_data(as_text=True)
        badge = re.search(r'<span class="live-badge" id="session-live"[^>]*>', html).group()
        assert ("hidden" not in badge) is live, (label, badge)


def far_archive(root: Path) -> Path:
    """A big compressed Claude Code transcript (> EARLY_ABOVE compressed: random text): a call,
    1,400 notes, and the call's result last."""
    import base64
    import json

    def line(**rec):
        return json.dumps({"sessionId": "packed", "timestamp": "2025-10-21T09:00:00.000Z", **rec}) + "\n"

    root.mkdir()
    rng = __import__("random").Random(7)
    lines = [line(type="user", uuid="p-1", message={"role": "user", "content": "Check the far host"}),
             line(type="assistant", uuid="p-2", message={"id": "msg_p", "role": "assistant", "model": "claude-opus-4-6",
                  "content": [{"type": "tool_use", "id": "toolu_far", "name": "Bash", "input": {"command": "ping far"}}]})]
    for n in range(1400):  # (random text: the archive stays big, > EARLY_ABOVE)
        noise = base64.b64encode(rng.randbytes(6000)).decode()
        lines.append(line(type="user", uuid=f"n-{n}", message={"role": "user", "content": f"note {n} {noise}"}))
    lines.append(line(type="user", uuid="p-3", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_far", "content": "far host answered"}]}))
    packed = root / "far.jsonl.zst"
    packed.write_bytes(zst("".join(lines).encode()))
    assert packed.stat().st_size > 4 << 20
    os.utime(packed, (1_700_000_000, 1_700_000_000))
    return packed


def test_a_big_archive_opens_at_its_start_before_its_copy_is_made(tmp_path):
    """The first screen of a big compressed transcript is read from the head of its stream
    (`compressed.prefix_only`): no decompressed copy is made before the page is sent (a 200 MB
    archive waited 4.5 s for its copy); a call whose result lies past that head is "resolving",
    and completes once the background index (which makes the copy) is done."""
    from conftest import held_app

    root = tmp_path / "kept"
    far_archive(root)
    copies = tmp_path / "cache" / "decompressed"
    for app in held_app(root, tmp_path):
        c = app.test_client()
        r = c.get("/s/far")
        made = list(copies.glob("*.jsonl")) if copies.exists() else []
        r.close()  # (the background build starts once the page is sent)
        html = r.get_data(as_text=True)
        assert made == []  # (read from the head of the stream)
        assert "Check the far host" in html and "note 3 " in html and 'id="index-progress"' in html
        card = html[html.index('id="tc-toolu_far"'):]
        assert "resolving…" in card[:3000]
        app.hold.release.set()
        app.extensions["viewer"].store.build("far").wait(120)
        html = c.get("/s/far").get_data(as_text=True)
        assert "far host answered" in html and "resolving" not in html
        assert list(copies.glob("*.jsonl"))  # (the index made the copy)


MARSYS = next((ROOT / "test_data" / "formats" / "marsys" / "trace-ndjson").glob("*.ndjson"))
CONVERSATION = ROOT / "test_data" / "formats" / "openai-chat" / "content-parts-legacy-function-call" / "conversation.json"
RUN_STATE = ROOT / "test_data" / "formats" / "openai-chat" / "agents-sdk-0.24.0-handoff" / "run_state.json"


@pytest.mark.parametrize("packer", ["zst", "gz"])
def test_compressed_ndjson_and_json_documents_are_read_as_their_plain_twins(tmp_path, packer):
    """`.ndjson.zst` / `.ndjson.gz` (a MARSYS trace) and `.json.gz` / `.json.zst` (a message list, an
    Agents SDK RunState) are listed, titled, counted and shown as the plain files are — they were
    not listed at all."""
    pack = zst if packer == "zst" else gzip.compress
    plain_root, root = tmp_path / "plain", tmp_path / "kept"
    for folder in (plain_root, root):
        folder.mkdir()
    for src, name in ((MARSYS, "trace.ndjson"), (CONVERSATION, "conversation.json"), (RUN_STATE, "handoff.json")):
        shutil.copy(src, plain_root / name)
        (root / f"{name}.{packer}").write_bytes(pack(src.read_bytes()))
    want = {s["label"]: s for s in listed(client(tmp_path / "p", plain_root))}
    before = snapshot(root)
    c = client(tmp_path, root)
    found = {s["label"]: s for s in listed(c)}
    assert set(found) == set(want) == {"trace", "conversation", "handoff"}
    for label, s in found.items():
        w = want[label]
        assert s["path"].endswith(f".{packer}")
        assert (s["format"], s["title"], s["events"], s["tool_calls"]) == \
            (w["format"], w["title"], w["events"], w["tool_calls"]), label
        assert c.get(f"/s/{s['key']}").status_code == 200, label
    assert "Who is in this photo?" in c.get(f"/s/{found['conversation']['key']}").get_data(as_text=True)
    assert snapshot(root) == before  # (nothing written beside them)


def test_the_end_of_a_big_archive_not_yet_decompressed_says_so_at_once(tmp_path):
    """`?at=end` of a big archive with no copy: its end lies past its whole stream (zstd and gzip
    cannot be read from their middle), so the page comes at once and says it decompresses it,
    with the link to its start (which opens at once) — the request waited seconds for the copy,
    with nothing on the screen. Once the background pass is done, the end is there."""
    from conftest import held_app

    root = tmp_path / "kept"
    far_archive(root)
    copies = tmp_path / "cache" / "decompressed"
    for app in held_app(root, tmp_path):
        c = app.test_client()
        r = c.get("/s/far?at=end")
        made = list(copies.glob("*.jsonl")) if copies.exists() else []
        r.close()
        html = r.get_data(as_text=True)
        assert made == []  # (nothing decompressed by the request)
        assert "reading-page" in html and "A compressed archive of" in html and 'id="index-progress"' in html
        assert 'href="/s/far?at=start"' in html
        assert app.hold.held.wait(30)
        app.hold.release.set()
        app.extensions["viewer"].store.build("far").wait(120)
        html = c.get("/s/far?at=end").get_data(as_text=True)
        assert "reading-page" not in html and "note 1399 " in html
