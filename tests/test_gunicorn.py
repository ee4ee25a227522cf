"""The README's team setup: gunicorn with threaded workers. Streams are handed to the pump, so a
pool of 4 threads holds 30 live viewers and still answers pages."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SESSIONS
from test_live_stream import KEY, _open_streams, _read_until, append, msg


@pytest.fixture
def gunicorn(tmp_path):
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS / KEY, root / KEY)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "SESSION_VIEWER_ROOTS": str(root), "SESSION_VIEWER_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")), "-k", "gthread", "--threads", "4",
                             "-w", "1", "-b", f"127.0.0.1:{port}", "viewer.web:create_app()"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    try:
        yield port, root / KEY / "messages.jsonl"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        err = proc.stderr.read().decode()
        proc.stderr.close()
        assert "Traceback" not in err, err[-3000:]


def get(port, path):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, body


def test_thirty_viewers_on_four_threads_and_pages_still_answer(gunicorn):
    port, path = gunicorn
    socks = _open_streams(port, f"/s/{KEY}/events", 30)
    for _ in range(3):
        status, body = get(port, f"/s/{KEY}")
        assert status == 200 and b'id="timeline"' in body
    assert json.loads(get(port, "/sessions.json")[1])["sessions"]
    append(path, msg(1))
    for s in socks:
        assert b'id="m-live-1"' in _read_until(s, b'id="m-live-1"')
        s.close()
