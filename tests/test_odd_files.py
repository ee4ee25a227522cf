"""Odd files under a root: FIFOs, devices, symlinks out of the roots or in loops, folders named like
transcripts, unreadable files, bad bytes. None may hang the server, answer 500 or stop the other
sessions; the list says why a path was skipped. Every call that could hang is bounded."""

import json
import os
import re
import threading

import pytest
from click.testing import CliRunner

from viewer.cli import main
from viewer.formats import detect
from viewer.store import Store
from viewer.web import create_app

from conftest import bounded


def legion(i, **kw):
    return {"type": "user" if i % 2 == 0 else "assistant", "content": f"message {i}",
            "timestamp": 1761073190.0 + i, "session_id": "s", **kw}


def write_session(path, n=3):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(legion(i)) + "\n" for i in range(n)))
    return path


def app_for(root, tmp_path, **config):
    return create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                       **config})


def test_fifos_and_devices_under_a_root_are_skipped_with_a_reason(tmp_path, fifo):
    root = tmp_path / "root"
    write_session(root / "good" / "messages.jsonl")
    fifo(root / "pipe.json")  # discovery used to open .json files to detect them
    fifo(root / "pipe.jsonl")
    fifo(root / "fifo-session" / "messages.jsonl")
    (root / "zero.jsonl").symlink_to("/dev/zero")
    c = app_for(root, tmp_path).test_client()
    r = bounded(lambda: c.get("/"))
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert 'data-key="good"' in html
    for name in ("pipe.json", "pipe.jsonl", "fifo-session/messages.jsonl", "zero.jsonl"):
        assert name in html
    assert html.count("FIFO (named pipe)") == 3 and "character device" in html
    data = bounded(lambda: c.get("/sessions.json")).get_json()
    assert [s["key"] for s in data["sessions"]] == ["good"]
    assert {s["path"]: s["reason"] for s in data["skipped"]} == {
        str(root / "pipe.json"): "a FIFO (named pipe), not a regular file",
        str(root / "pipe.jsonl"): "a FIFO (named pipe), not a regular file",
        str(root / "fifo-session" / "messages.jsonl"): "a FIFO (named pipe), not a regular file",
        str(root / "zero.jsonl"): "a character device, not a regular file",
    }
    assert bounded(lambda: c.get("/s/good")).status_code == 200


def test_a_fifo_beside_a_session_does_not_hang_its_page(tmp_path, fifo):
    """Companion files are opened too: a legion state.json, Claude Code sub-agent files and their
    .meta.json."""
    root = tmp_path / "root"
    write_session(root / "minion" / "messages.jsonl")
    fifo(root / "minion" / "state.json")
    project = root / "project"
    (project).mkdir()
    (project / "s1.jsonl").write_text(json.dumps({
        "type": "user", "uuid": "u1", "sessionId": "s1", "parentUuid": None,
        "timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": "hi"}}) + "\n")
    fifo(project / "agent-old.jsonl")
    fifo(project / "s1" / "subagents" / "agent-new.jsonl")
    write_session(project / "s1" / "subagents" / "agent-meta.jsonl")
    fifo(project / "s1" / "subagents" / "agent-meta.meta.json")
    c = app_for(root, tmp_path).test_client()
    for url in ("/", "/s/minion", "/s/project~s1", "/s/project~s1.json"):
        assert bounded(lambda: c.get(url)).status_code == 200, url


def test_open_file_refuses_what_is_not_a_regular_file(tmp_path, fifo):
    from viewer import files

    with pytest.raises(files.Refused, match="FIFO"):
        bounded(lambda: files.open_file(fifo(tmp_path / "p")))
    with pytest.raises(files.Refused, match="character device"):
        bounded(lambda: files.open_file("/dev/zero"))
    with pytest.raises(files.Refused, match="folder"):
        files.open_file(tmp_path)
    with pytest.raises(OSError):
        bounded(lambda: detect.detect_file(tmp_path / "p"))


def test_check_does_not_hang_on_a_fifo_or_a_device(tmp_path, fifo):
    root = tmp_path / "root"
    write_session(root / "good" / "messages.jsonl")
    pipe = fifo(root / "pipe.jsonl")
    (root / "zero.jsonl").symlink_to("/dev/zero")
    r = bounded(lambda: CliRunner().invoke(main, ["check", str(pipe)]))
    assert r.exit_code != 0 and "FIFO" in r.output and "Traceback" not in r.output
    r = bounded(lambda: CliRunner().invoke(main, ["check", str(root / "zero.jsonl")]))
    assert r.exit_code != 0 and "character device" in r.output
    r = bounded(lambda: CliRunner().invoke(main, ["check", str(root)]))
    assert r.exit_code == 0 and "format      legion" in r.output


def test_discovery_reads_files_outside_the_store_lock(tmp_path, monkeypatch):
    """While one request's rescan waits on a slow file, other requests are answered from the last
    scan instead of queueing behind it."""
    root = tmp_path / "root"
    write_session(root / "good" / "messages.jsonl")
    store = Store([root])
    assert [r.key for r in store.sessions()] == ["good"]
    (root / "slow.json").write_text(json.dumps([{"role": "user", "content": "hi"}]))
    store.invalidate()
    entered, release = threading.Event(), threading.Event()
    real = detect.detect_file

    def slow(path):
        if str(path).endswith("slow.json"):
            entered.set()
            release.wait(30)
        return real(path)

    monkeypatch.setattr(detect, "detect_file", slow)
    scanner = threading.Thread(target=store.sessions, daemon=True)
    scanner.start()
    try:
        assert entered.wait(10)
        assert bounded(lambda: store.get("good"), timeout=5).key == "good"
        assert [r.key for r in bounded(store.sessions, timeout=5)] == ["good"]
        assert bounded(lambda: store.index("good"), timeout=5).summary.events == 3
    finally:
        release.set()
        scanner.join(10)
    assert sorted(r.key for r in store.sessions()) == ["good", "slow"]


def claude_line(uuid, text, session="s1", **kw):
    return json.dumps({"type": "user", "uuid": uuid, "sessionId": session, "parentUuid": None,
                       "timestamp": "2025-01-01T00:00:00Z",
                       "message": {"role": "user", "content": text}, **kw}) + "\n"


@pytest.fixture
def linked_out(tmp_path):
    """A root whose files link to transcripts outside it (each holding SECRET), and a link that
    stays inside."""
    outside = tmp_path / "outside"
    secret = write_session(outside / "secret.jsonl")
    secret.write_text(secret.read_text().replace("message 0", "SECRET"))
    (outside / "doc.json").write_text(json.dumps([{"role": "user", "content": "SECRET doc"}]))
    (outside / "agent.jsonl").write_text(claude_line("x1", "SECRET agent", isSidechain=True))
    (outside / "meta.json").write_text(json.dumps({"description": "SECRET meta"}))
    (outside / "state.json").write_text(json.dumps({"name": "SECRET state"}))
    root = tmp_path / "root"
    write_session(root / "good" / "messages.jsonl")
    (root / "passwd.jsonl").symlink_to(secret)
    (root / "doc.json").symlink_to(outside / "doc.json")
    (root / "good" / "state.json").symlink_to(outside / "state.json")
    project = root / "project"
    project.mkdir()
    (project / "s1.jsonl").write_text(claude_line("u1", "hello"))
    (project / "agent-out.jsonl").symlink_to(outside / "agent.jsonl")
    sub = project / "s1" / "subagents"
    write_session(sub / "agent-in.jsonl")
    (sub / "agent-in.meta.json").symlink_to(outside / "meta.json")
    (root / "inside.jsonl").symlink_to(root / "good" / "messages.jsonl")
    (root / "loop.jsonl").symlink_to(root / "loop2.jsonl")
    (root / "loop2.jsonl").symlink_to(root / "loop.jsonl")
    (root / "broken.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    return root


def every_page(c, key):
    """The text of every page of a session a user can reach: page, JSON twin, raw views."""
    data = c.get(f"/s/{key}.json").get_json()
    out = [c.get(f"/s/{key}").get_data(as_text=True), json.dumps(data)]
    for name in data["threads"]:
        out.append(c.get(f"/s/{key}/t/{name}").get_data(as_text=True))
    for ev in data["events"]:
        out.append(c.get(f"/s/{key}/raw/{ev['id']}").get_data(as_text=True))
    return "\n".join(out)


def test_symlinks_out_of_the_roots_are_not_followed(tmp_path, linked_out):
    c = app_for(linked_out, tmp_path).test_client()
    data = bounded(lambda: c.get("/sessions.json")).get_json()
    assert sorted(s["key"] for s in data["sessions"]) == ["good", "inside", "project~s1"]
    skipped = {os.path.basename(s["path"]): s["reason"] for s in data["skipped"]}
    assert skipped == {
        "passwd.jsonl": "a symlink to a file outside the served folders "
                        "(serve --follow-symlinks follows it)",
        "doc.json": "a symlink to a file outside the served folders "
                    "(serve --follow-symlinks follows it)",
        "loop.jsonl": "a symlink loop", "loop2.jsonl": "a symlink loop",
        "broken.jsonl": "a broken symlink"}
    html = c.get("/").get_data(as_text=True)
    assert "passwd.jsonl" in html and "outside the served folders" in html
    r = c.get("/s/passwd")
    assert r.status_code == 422 and "outside the served folders" in r.get_data(as_text=True)
    pages = "\n".join(every_page(c, k) for k in ("good", "inside", "project~s1"))
    assert "SECRET" not in pages
    threads = c.get("/s/project~s1.json").get_json()["threads"]
    assert sorted(threads) == ["in", "main"]  # the sub-agent linked out is not read
    assert threads["in"]["label"] == "agent in"  # nor the .meta.json linked out


def test_follow_symlinks_serves_what_they_point_to(tmp_path, linked_out):
    c = app_for(linked_out, tmp_path, FOLLOW_SYMLINKS=True).test_client()
    keys = sorted(s["key"] for s in c.get("/sessions.json").get_json()["sessions"])
    assert keys == ["doc", "good", "inside", "passwd", "project~s1"]
    assert "SECRET" in c.get("/s/passwd").get_data(as_text=True)
    assert sorted(c.get("/s/project~s1.json").get_json()["threads"]) == ["in", "main", "out"]


def test_a_file_swapped_for_a_link_out_after_discovery_is_not_read(tmp_path, linked_out):
    c = app_for(linked_out, tmp_path).test_client()
    assert c.get("/s/good").status_code == 200
    main = linked_out / "good" / "messages.jsonl"
    main.unlink()
    main.symlink_to(tmp_path / "outside" / "secret.jsonl")
    r = c.get("/s/good")
    assert r.status_code == 404 and "SECRET" not in r.get_data(as_text=True)
    assert "outside the served folders" in r.get_data(as_text=True)


def test_a_folder_swapped_for_a_link_out_while_its_real_path_is_remembered_is_not_read(tmp_path,
                                                                                       linked_out):
    """Discovery remembers folders' real paths for a moment (files.real_path): a folder replaced
    by a symlink out of the roots within that moment is still refused, at open."""
    c = app_for(linked_out, tmp_path).test_client()
    assert c.get("/s/good").status_code == 200  # its folder's real path is now remembered
    good = linked_out / "good"
    good.rename(tmp_path / "good-away")
    (tmp_path / "outside" / "messages.jsonl").write_bytes(
        (tmp_path / "outside" / "secret.jsonl").read_bytes())
    good.symlink_to(tmp_path / "outside")
    r = c.get("/s/good")
    assert r.status_code == 404 and "SECRET" not in r.get_data(as_text=True)
    assert "outside the served folders" in r.get_data(as_text=True)


def test_real_path_is_realpath(tmp_path, linked_out):
    from viewer.files import real_path

    paths = [linked_out / "good" / "messages.jsonl", linked_out / "inside.jsonl",
             linked_out / "passwd.jsonl", linked_out / "good" / ".." / "inside.jsonl",
             linked_out / "good" / ".", linked_out / "nowhere.jsonl"]
    os.symlink(linked_out / "good", tmp_path / "good-link")
    paths.append(tmp_path / "good-link" / "messages.jsonl")
    for p in paths * 2:  # (the second time from what is remembered)
        assert real_path(p) == os.path.realpath(p) and real_path(str(p)) == os.path.realpath(p)
    old = os.getcwd()
    os.chdir(linked_out)
    try:
        assert real_path("good/messages.jsonl") == os.path.realpath("good/messages.jsonl")
    finally:
        os.chdir(old)


def test_a_huge_unparsable_line_is_read_once_per_file_version(tmp_path, monkeypatch):
    """Finding out that a line of many megabytes is not JSON costs a pass over it: the index does it
    once, and no page, permalink, JSON twin or restart does it again."""
    from viewer import reader

    monkeypatch.setattr(reader, "HUGE_LINE", 1000)  # a "huge" line of a few kilobytes suffices
    calls = []
    real = reader.skim

    def counting(f, offset, length):
        calls.append(offset)
        return real(f, offset, length)

    monkeypatch.setattr(reader, "skim", counting)
    p = tmp_path / "root" / "big" / "messages.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(legion(0)) + "\n" + '{"content": "' + "y" * 5000 + "\n"
                 + json.dumps(legion(2)) + "\n")
    c = app_for(tmp_path / "root", tmp_path).test_client()
    for url in ("/s/big", "/s/big.json", "/s/big/m/L2", "/s/big/raw/L2", "/s/big"):
        r = c.get(url)
        assert r.status_code == 200, url
    assert "Unparsed line 2" in r.get_data(as_text=True)
    assert len(calls) <= 1  # by the index pass, if it did not hold the line whole already
    seen = len(calls)
    c.application.extensions["viewer"].store.flush()
    again = app_for(tmp_path / "root", tmp_path).test_client()  # a restart, from the cache
    assert "Unparsed line 2" in again.get("/s/big").get_data(as_text=True)
    assert len(calls) == seen


def nest(n, leaf="bottom"):
    value = leaf
    for i in range(n):
        value = {"k": value} if i % 2 else [value]
    return value


def deep_line(n) -> str:
    """A legion assistant line whose tool call input is nested n levels deep (written by hand:
    json.dumps itself recurses)."""
    head = ('{"type": "assistant", "content": "", "timestamp": 1761073190.0, "session_id": "s", '
            '"metadata": {"tool_uses": [{"id": "t1", "name": "Thing", "input": {"x": ')
    opens = "".join('{"k": ' if i % 2 else "[" for i in reversed(range(n)))
    closes = "".join("}" if i % 2 else "]" for i in range(n))
    return head + opens + '"bottom"' + closes + "}}]}}"


@pytest.mark.parametrize("depth", [300, 1000, 1030])
def test_deep_nesting_is_cut_and_said_never_a_500(tmp_path, depth):
    """orjson writes at most 255 levels and Python's repr recurses ~1,000: a record nested deeper is
    cut at a fixed depth where it is read, with a note saying so; the raw view shows it as written."""
    root = tmp_path / "root"
    p = root / "deep" / "messages.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(legion(0)) + "\n" + deep_line(depth) + "\n" + json.dumps(legion(2))
                 + "\n")
    c = app_for(root, tmp_path).test_client()
    pages = {url: c.get(url) for url in ("/s/deep", "/s/deep.json", "/s/deep/m/L2",
                                         "/s/deep/raw/L2", "/s/deep/raw/L2?download=1")}
    for url, r in pages.items():
        assert r.status_code == 200, url
    page = pages["/s/deep"].get_data(as_text=True)
    assert "message 2" in page and "could not be displayed" not in page
    if depth <= 1024:  # orjson reads up to 1,024 levels: the record is shown, cut
        assert "nested deeper than" in page
        show_all = re.search(r'class="show-all" href="([^"]+)"', page).group(1)
        whole = c.get(show_all.replace("&amp;", "&"))  # the whole input, as its card shows it
        assert whole.status_code == 200 and "nested deeper than" in whole.get_data(as_text=True)
        assert "nested deeper than" in json.dumps(pages["/s/deep.json"].get_json())
        raw = pages["/s/deep/raw/L2"].get_data(as_text=True)
        assert "shown as written" in raw and "bottom" in raw
    else:  # deeper than any JSON reader here goes: an unparsed line, with its reason
        assert "Unparsed line 2" in page
    assert pages["/s/deep/raw/L2?download=1"].data.decode() == deep_line(depth)


def test_a_deep_json_document_is_cut_and_said(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    doc = ('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok", "x": '
           + "[" * 400 + '"bottom"' + "]" * 400 + "}]")
    (root / "chat.json").write_text(doc)
    c = app_for(root, tmp_path).test_client()
    ids = [e["id"] for e in c.get("/s/chat.json").get_json()["events"]]
    assert len(ids) == 2
    for url in ["/s/chat"] + [f"/s/chat/raw/{i}" for i in ids] + [f"/s/chat/m/{i}" for i in ids]:
        assert c.get(url).status_code == 200, url
    assert "nested deeper than" in c.get(f"/s/chat/raw/{ids[1]}").get_data(as_text=True)


@pytest.fixture
def small_huge(monkeypatch):
    """Lines above 2 KB are "huge" (skimmed, long strings cut), so a test needs no megabytes."""
    from viewer import reader

    monkeypatch.setattr(reader, "HUGE_LINE", 2000)
    monkeypatch.setattr(reader, "STRING_CAP", 300)
    monkeypatch.setattr(reader, "PREVIEW", 100)
    monkeypatch.setattr(reader, "CHUNK", 512)  # and read in small pieces, so streams have several
    return reader


def cut_session(root):
    import base64

    payload = bytes(range(256)) * 40
    project = root / "p"
    project.mkdir(parents=True)
    text = b"caf\xc3\xa9 " * 300 + b"\xff\xfe broken bytes \xc3 " + b"tail" * 200
    line = (b'{"type": "user", "uuid": "u1", "sessionId": "s", "parentUuid": null, '
            b'"timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": ['
            b'{"type": "text", "text": "' + text + b'"}, {"type": "image", "source": {"type": '
            b'"base64", "media_type": "image/png", "data": "'
            + base64.b64encode(payload) + b'"}}]}}\n')
    (project / "s.jsonl").write_bytes(line)
    return payload


def test_show_all_and_media_of_a_cut_string_with_invalid_utf8(tmp_path, small_huge):
    payload = cut_session(tmp_path / "root")
    c = app_for(tmp_path / "root", tmp_path).test_client()
    page = c.get("/s/p~s").get_data(as_text=True)
    assert "/s/p~s/e/u1/full/b0" in page and "/s/p~s/e/u1/media/b1" in page
    r = c.get("/s/p~s/e/u1/full/b0", headers={"HX-Request": "true"})
    assert r.status_code == 200 and "broken bytes" in r.get_data(as_text=True)
    r = c.get("/s/p~s/e/u1/full/b0?raw=1")
    text = r.get_data(as_text=True)
    assert r.status_code == 200 and text.startswith("café café") and text.endswith("tail")
    assert "\ufffd\ufffd broken bytes \ufffd tail" in text
    r = c.get("/s/p~s/e/u1/media/b1")
    assert r.status_code == 200 and r.data == payload and r.mimetype == "image/png"


def test_show_all_and_media_are_streamed_not_loaded_whole(tmp_path, small_huge):
    payload = cut_session(tmp_path / "root")
    c = app_for(tmp_path / "root", tmp_path).test_client()
    for url, whole in (("/s/p~s/e/u1/full/b0?raw=1", None), ("/s/p~s/e/u1/media/b1", payload)):
        r = c.get(url, buffered=False)
        assert r.status_code == 200 and r.is_streamed, url
        pieces = list(r.response)
        assert len(pieces) > 3 and max(map(len, pieces)) <= 2 * small_huge.CHUNK, url
        if whole is not None:
            assert b"".join(pieces) == whole
        r.close()


def test_block_addresses_are_only_those_the_page_links_to(tmp_path, small_huge):
    cut_session(tmp_path / "root")
    c = app_for(tmp_path / "root", tmp_path).test_client()
    assert c.get("/s/p~s/e/u1/full/b0?raw=1").status_code == 200
    for path in ("b-1", "b%D9%A0", "b01", "b+0", "b%200", "b0.c-1", "b1.", "x0", "b0.i:", "b",
                 "b99999999999999999999", "b0..c0", "b%EF%BC%90"):
        r = c.get(f"/s/p~s/e/u1/full/{path}?raw=1")
        assert r.status_code == 404, path
        assert c.get(f"/s/p~s/e/u1/media/{path}").status_code == 404, path


def test_a_root_full_of_odd_files_never_hangs_never_fails_and_never_stops_the_others(
        tmp_path, fifo, unreadable):
    """The standing suite's odd files, all in one root beside an ordinary session: every listed
    session answers every page without a 500, every skipped path says why, the ordinary one works."""

    root = tmp_path / "root"
    write_session(root / "good" / "messages.jsonl", 5)
    lines = [json.dumps(legion(i)) for i in range(3)]
    odd = {
        "invalid-utf8": ("\n".join(lines) + "\n").encode() + b'{"type": "user", "content": "caf\xe9'
                        b' \xff\xfe", "timestamp": 1761073195.0, "session_id": "s"}\n',
        "nul": ("\n".join(lines) + "\n").encode() + b'{"type": "user", "content": "a\x00b"}\n'
               + b'{"type": "user", "content": "esc \\u0000 aped", "session_id": "s"}\n',
        "bom": b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode(),
        "cr-only": "\r".join(lines).encode() + b"\r",
        "crlf": "\r\n".join(lines).encode() + b"\r\n",
        "inf": ("\n".join(lines) + "\n").encode() + b'{"type": "user", "content": 1e999}\n'
               + b'{"type": "user", "content": "x", "n": -1e999, "session_id": "s"}\n',
        "deep": ("\n".join(lines) + "\n" + deep_line(600) + "\n").encode(),
        "truncated": ("\n".join(lines) + "\n").encode() + b'{"type": "user", "cont',
        "unreadable": ("\n".join(lines) + "\n").encode(),
    }
    for name, data in odd.items():
        (root / name).mkdir()
        (root / name / "messages.jsonl").write_bytes(data)
    fifo(root / "pipe" / "messages.jsonl")
    (root / "device.jsonl").symlink_to("/dev/zero")
    (root / "loop.jsonl").symlink_to(root / "loop.jsonl")
    (tmp_path / "outside.jsonl").write_text("\n".join(lines) + "\n")
    (root / "out.jsonl").symlink_to(tmp_path / "outside.jsonl")
    (root / "folder" / "messages.jsonl").mkdir(parents=True)
    unreadable(root / "unreadable" / "messages.jsonl")
    c = app_for(root, tmp_path).test_client()
    listing = bounded(lambda: c.get("/sessions.json")).get_json()
    keys = {s["key"] for s in listing["sessions"]}
    assert keys >= {"good", *odd} - {"unreadable"}
    skipped = {os.path.relpath(s["path"], root): s["reason"] for s in listing["skipped"]}
    assert set(skipped) >= {"pipe/messages.jsonl", "device.jsonl", "loop.jsonl", "out.jsonl",
                            "folder/messages.jsonl"}
    assert bounded(lambda: c.get("/")).status_code == 200
    for key in sorted(keys):
        for url in (f"/s/{key}", f"/s/{key}.json", f"/s/{key}/m/L1", f"/s/{key}/raw/L1"):
            status = bounded(lambda: c.get(url)).status_code
            assert status != 500 and status < 500, (url, status)
            if key not in ("unreadable",) and not url.endswith("/L1"):
                assert status == 200, (url, status)
    assert c.get("/s/unreadable").status_code in (403, 422)
    for key in ("cr-only", "crlf", "bom"):
        data = c.get(f"/s/{key}.json").get_json()
        assert (data["summary"]["events"], data["summary"]["unparsed"]) == (3, 0), key
    assert c.get("/s/inf.json").get_json()["summary"]["unparsed"] == 2
    assert "nested deeper than" in c.get("/s/deep").get_data(as_text=True)
    assert "message 4" in c.get("/s/good").get_data(as_text=True)
