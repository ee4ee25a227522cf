"""Shared fixtures: the bundled sessions, the corpus beside the checkout, an app and a live server.

Browser tests run in Debian's Chromium (`/usr/bin/chromium`) through pytest-playwright; Playwright's
own browser downloads are never used.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from viewer.cli import make_server as serve_app
from viewer.index import SessionIndex
from viewer.timeline import load_events
from viewer.web import create_app

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "test_data" / "sessions"
CORPUS = ROOT.parent / "shared" / "corpus"
CHROMIUM = "/usr/bin/chromium"


@functools.cache
def opencode_make_db():
    """test_data/formats/opencode/make_db.py, which builds OpenCode databases as OpenCode does
    (and adds rows as a running OpenCode writes them)."""
    spec = importlib.util.spec_from_file_location("make_db", ROOT / "test_data" / "formats" / "opencode" / "make_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def goose_make_db():
    """test_data/formats/goose/make_db.py, which builds Goose's sessions.db as Goose does (and adds
    messages as a running Goose writes them)."""
    spec = importlib.util.spec_from_file_location("goose_make_db", ROOT / "test_data" / "formats" / "goose" / "make_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def studio_make_db():
    """test_data/formats/agentscope-studio/make_db.py, which builds AgentScope Studio's
    database.sqlite as Studio does (and pushes messages as a running AgentScope program does)."""
    spec = importlib.util.spec_from_file_location(
        "studio_make_db", ROOT / "test_data" / "formats" / "agentscope-studio" / "make_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def built(path: Path):
    """A session indexed as the page reads it: its index and its main thread's events."""
    idx = SessionIndex(path).build()
    return idx, load_events(idx, "main", 0, len(idx.threads["main"]))


def tool_uses(evs) -> list:
    """Every tool call block of these events, in order."""
    return [b for ev in evs for b in ev.blocks if b.kind == "tool_use"]


def result_of(evs, call_id: str):
    """The result block answering one call."""
    return next(b for ev in evs for b in ev.blocks if b.kind == "tool_result" and b.tool_use_id == call_id)


def notices(ev) -> list[str]:
    """The texts of one event's notices."""
    return [b.text for b in ev.blocks if b.kind == "notice"]


def corpus_sessions(fmt: str) -> list[Path]:
    """Every session folder of one format in the shared corpus."""
    folder = CORPUS / fmt
    assert folder.is_dir(), f"the shared corpus is expected at {CORPUS}"
    return sorted(p for p in folder.iterdir() if p.is_dir())


def quiet_copy(src: Path, dst: Path, ended: bool = True) -> Path:
    """A copy of a session folder whose files were last written long ago (or, `ended` False,
    just now: a session still being written).

    A fresh clone gives every file the clone's time, so a session would look live (still being
    written) for ten minutes; tests of what a finished session shows use this copy instead, and
    tests of a live one do not depend on how old the checkout is."""
    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:
        os.utime(p, (1_700_000_000, 1_700_000_000) if ended else None)
    return dst


def write_claude_session(path: Path, target: int, *, start: int = 0, result_size: int = 3000,
                         old: bool = True) -> list[str]:
    """Append turns to a Claude Code transcript until it holds about `target` bytes; returns the
    call ids written. Every turn: a prompt, a thinking + text line, a tool call, a progress line,
    its result (`result_size` characters). Ids are `u-<n>` / `toolu_<n>` from `start` on. With
    `old`, the file's times are set long ago (a finished session; see quiet_copy)."""
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    filler = ("lorem ipsum dolor sit amet " * (result_size // 27 + 1))[:result_size]
    calls = []
    size = path.stat().st_size if path.exists() else 0
    n = start
    with open(path, "a") as f:
        while size < target:
            n += 1
            t = f"2025-10-21T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}.000Z"
            base = {"sessionId": "big", "isSidechain": False, "timestamp": t}
            call = f"toolu_{n:06d}"
            lines = [
                {**base, "type": "user", "uuid": f"u-{n}-p",
                 "message": {"role": "user", "content": f"Prompt {n}: look at the window code"}},
                {**base, "type": "assistant", "uuid": f"u-{n}-a",
                 "message": {"id": f"msg_{n}", "role": "assistant", "model": "claude-opus-4-6",
                             "content": [{"type": "text", "text": f"Reading file {n}."}]}},
                {**base, "type": "assistant", "uuid": f"u-{n}-c",
                 "message": {"id": f"msg_{n}", "role": "assistant", "model": "claude-opus-4-6",
                             "content": [{"type": "tool_use", "id": call, "name": "Read",
                                          "input": {"file_path": f"/src/mod{n}.py"}}]}},
                {**base, "type": "progress", "uuid": f"u-{n}-g", "parentToolUseID": call,
                 "data": {"type": "hook_progress", "hookName": "PostToolUse:Read"}},
                {**base, "type": "user", "uuid": f"u-{n}-r",
                 "message": {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": call,
                      "content": f"result {n}: {filler}"}]}},
            ]
            text = "".join(json.dumps(x) + "\n" for x in lines)
            f.write(text)
            size += len(text.encode())
            calls.append(call)
    if old:
        os.utime(path, (1_700_000_000, 1_700_000_000))
    return calls


@pytest.fixture
def sessions_copy(tmp_path) -> Path:
    """A writable copy of the bundled sessions (tests that append or break files use this)."""
    dst = tmp_path / "sessions"
    shutil.copytree(SESSIONS, dst)
    return dst


@pytest.fixture
def tour(tmp_path) -> tuple[Path, Path]:
    """A writable copy of the legion feature tour alone: (the root holding it, its messages.jsonl)."""
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / "legion-feature-tour", root / "legion-feature-tour")
    return root, root / "legion-feature-tour" / "messages.jsonl"


@pytest.fixture
def app(tmp_path):
    app = create_app({"ROOTS": [str(SESSIONS)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "TESTING": True})
    yield app


@pytest.fixture
def client(app):
    return app.test_client()


class LiveServer:
    def __init__(self, app):
        self.app = app
        self.server = serve_app("127.0.0.1", 0, app)  # the built-in server, as `serve` runs it
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        viewer = self.app.extensions["viewer"]
        if viewer.pump:
            viewer.pump.stop()
        if viewer.watcher:
            viewer.watcher.stop()


@pytest.fixture
def live_server(tmp_path):
    """A real threaded server over the bundled sessions, with the file watcher on."""
    app = create_app({"ROOTS": [str(SESSIONS)], "CACHE_DIR": str(tmp_path / "cache")})
    with LiveServer(app) as srv:
        yield srv


@pytest.fixture
def serve(tmp_path):
    """Start a live server over given roots: `serve(root, **config)` → LiveServer."""
    started = []

    def start(*roots, **config):
        app = create_app({"ROOTS": [str(r) for r in roots], "CACHE_DIR": str(tmp_path / "cache"),
                          **config})
        srv = LiveServer(app).__enter__()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.__exit__(None, None, None)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM,
            "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run"]}


@pytest.fixture
def watched_page(page):
    """A Playwright page that records console errors, page errors and dialogs."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def on_dialog(d):
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", on_dialog)
    page.problems = problems
    return page


def stream_open(page, element_id: str, timeout: float = 15.0) -> None:
    """Wait until the htmx SSE stream of the element with this id is open. Polled with
    page.evaluate, not page.wait_for_function: under the pages' Content-Security-Policy Playwright
    may be refused when it evaluates a string predicate again (microsoft/playwright#7395)."""
    import time

    deadline = time.monotonic() + timeout
    while not page.evaluate(f"!!document.getElementById({element_id!r})?._htmx?.sse"):
        assert time.monotonic() < deadline, f"the stream of #{element_id} never opened"
        page.wait_for_timeout(50)


@contextlib.contextmanager
def running_goose(tmp_path: Path, serve, page):
    """A running Goose's database (kept open, written as Goose writes it) served, and `page` open
    live on its newest session with the stream open and a marker set that a reload would clear
    (`window.__sameDocument`). Yields (make_db, connection, server)."""
    from playwright.sync_api import expect

    make_db = goose_make_db()
    root = tmp_path / "sessions"
    root.mkdir()
    con = make_db.build(root / "sessions.db", keep_open=True)
    try:
        srv = serve(root)
        page.goto(f"{srv.url}/s/sessions.db~{make_db.NEW_ID}")
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
        stream_open(page, "live")
        page.evaluate("window.__sameDocument = 1")
        yield make_db, con, srv
    finally:
        con.close()


def list_settled(page, timeout: float = 60.0) -> None:
    """Wait until the session list on `page` shows every row indexed (the background indexer fills
    rows in through the list's stream: measured before, a layout is that of rows still saying
    "indexing…", and an element measured may be swapped out between two reads)."""
    from playwright.sync_api import expect

    expect(page.locator("table.sessions td.pending")).to_have_count(0, timeout=timeout * 1000)
    expect(page.locator("#list-indexing")).to_be_hidden(timeout=timeout * 1000)


def indexed_list(page, url: str) -> None:
    """Open the list at `url` and draw it again once every row is indexed: rows the list's stream
    fills in keep their place, a page drawn after indexing groups, nests and names them as the
    index says."""
    page.goto(url)
    list_settled(page)
    page.reload()


def bounded(fn, timeout: float = 15.0):
    """`fn()` run on a daemon thread; the test fails (instead of hanging the suite) when it has not
    returned within `timeout` seconds. Exceptions are re-raised here."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 — handed back to the test
            out["error"] = e

    t = threading.Thread(target=run, daemon=True, name="bounded")
    t.start()
    t.join(timeout)
    if t.is_alive():
        pytest.fail(f"did not return within {timeout:.0f} s (it hangs)")
    if "error" in out:
        raise out["error"]
    return out.get("value")


@pytest.fixture
def unreadable(monkeypatch):
    """`unreadable(path)` makes the viewer's every open of that transcript fail with "Permission
    denied", as chmod 000 would for another user (tests run as root, where it still reads)."""
    from viewer import files

    denied: set[str] = set()
    real_open = files.open_file

    def no_access(path):
        if str(path) in denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path)

    monkeypatch.setattr(files, "open_file", no_access)  # every transcript is opened there
    return lambda path: denied.add(str(path))


@pytest.fixture
def fifo():
    """`fifo(path)` makes a named pipe; at the end every reader still blocked on one is released
    (a writer opens and closes it), so a failing test leaves no thread stuck."""
    made: list[Path] = []

    def make(path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        made.append(path)
        return path

    yield make
    for path in made:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass  # no reader waiting


def back_and_forth_lines():
    """An Anthropic API log whose third call goes back to the first conversation after a probe
    (the conversation a call continues is not the last one), answering its pending call."""
    url = "https://api.anthropic.com/v1/messages"
    ask = {"role": "user", "content": "Run ls"}
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                             "input": {"command": "ls"}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": "a.py b.py"}]}

    def call(messages, answer, max_tokens=1000):
        return {"request": {"method": "POST", "url": url, "body": {
                    "model": "claude-sonnet-4-5", "max_tokens": max_tokens, "messages": messages}},
                "response": {"status_code": 200, "body": {
                    "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": answer, "stop_reason": "end_turn"}}}

    said = [{"type": "text", "text": "Two files."}]
    return [call([ask], use["content"]),
            call([{"role": "user", "content": "quota"}], [{"type": "text", "text": "ok"}], 1),
            call([ask, use, result], said),
            call([ask, use, result, {"role": "assistant", "content": said},
                  {"role": "user", "content": "Thanks"}], [{"type": "text", "text": "You're welcome."}]),
            # a new conversation reusing the call id: told apart as toolu_1~N
            call([{"role": "user", "content": "Run pwd"}], use["content"])]


class Hold:
    """Holds every background build of the index before it reads anything, until released; counts
    the passes (`builds`, by session key) and says when one is held (`held`)."""

    def __init__(self):
        self.held = threading.Event()
        self.release = threading.Event()
        self.builds = []

    def progress(self, key, read, total):
        if read == 0:
            self.builds.append(key)
            self.held.set()
            assert self.release.wait(60)


def sole_page(root, tmp_path) -> str:
    """The page of the one session served under `root`, as a test client reads it."""
    c = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                    "TESTING": True}).test_client()
    key = c.get("/sessions.json").get_json()["sessions"][0]["key"]
    return c.get(f"/s/{key}").get_data(as_text=True)


def held_page(client, url: str) -> str:
    """A page of a `held_app` (200), read whole and closed as a server closes it (its background
    pass starts once the page is sent), once that pass is held: the page was drawn before the
    index."""
    r = client.get(url)
    page = r.get_data(as_text=True)
    r.close()
    assert r.status_code == 200
    assert client.application.hold.held.wait(30)
    return page


def early_target(app, url: str, event_id: str) -> tuple[str, str]:
    """A `held_page` of `held_app` session `big` opened at an event (`url`: a search link, a hit
    link), drawn before the index: (the page, the card of its target event `event_id`)."""
    page = held_page(app.test_client(), url)
    assert not app.extensions["viewer"].store.running("big").done  # drawn before the index
    assert f'data-target-id="{event_id}"' in page
    card = re.search(rf'<li class="ev [^"]*target[^"]*" id="m-{re.escape(event_id)}".*?</li>', page, re.S)
    assert card is not None
    return page, card.group(0)


def held_app(root, tmp_path):
    """An app serving `root` whose background index passes wait for the test (`app.hold.release`),
    with nothing indexed before a page asks; released when the test ends (a generator fixture's)."""
    app = create_app({"ROOTS": [str(root)], "CACHE_DIR": str(tmp_path / "cache"), "WATCH": False,
                      "INDEX_ALL": False})
    app.hold = Hold()
    app.extensions["viewer"].store.indexer.listen(app.hold)
    yield app
    app.hold.release.set()
