"""The server as an attack surface: tokens, the remote setup under another WSGI server, cookies,
logs, Host headers, and the standing checks over every route of the app (traversal, Host spoofing,
methods), enumerated from Flask's url_map so new routes are covered as they are added."""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from viewer.web import create_app

from conftest import ROOT, SESSIONS, LiveServer, bounded

TOUR = "legion-feature-tour"


def app_with(tmp_path, **config):
    return create_app({"ROOTS": [str(SESSIONS)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False,
                       **config})


# --- tokens ---------------------------------------------------------------------------------------


def test_a_non_ascii_token_is_refused_not_a_crash(tmp_path):
    c = app_with(tmp_path, TOKEN="s3cret").test_client()
    assert c.get("/?token=%C3%A9t%C3%A9").status_code == 401
    assert c.get("/", headers={"Authorization": "Bearer été"}).status_code == 401
    assert c.get("/", headers={"Cookie": "session_viewer_token=\u00e9t\u00e9"}).status_code == 401
    assert c.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_a_non_ascii_token_can_be_the_servers_own(tmp_path):
    c = app_with(tmp_path, TOKEN="clé").test_client()
    assert c.get("/?token=cl%C3%A9").status_code == 302
    assert c.get("/").status_code == 200


def test_the_token_cookie_is_lax_and_http_only(tmp_path):
    """A permalink opened from another site (a chat, a ticket) is a top-level navigation: the cookie
    must go with it, so SameSite=Lax; scripts never read it."""
    c = app_with(tmp_path, TOKEN="s3cret").test_client()
    r = c.get(f"/s/{TOUR}/m/tour-bash?token=s3cret")
    assert r.status_code == 302 and r.headers["Location"].endswith(f"/s/{TOUR}/m/tour-bash")
    cookie = r.headers["Set-Cookie"]
    assert "SameSite=Lax" in cookie and "HttpOnly" in cookie and "s3cret" in cookie


def test_the_token_never_reaches_an_access_log_under_another_server(tmp_path):
    """gunicorn logs the request line from the WSGI environ after the response: the app takes the
    token out of it before anything can log it."""
    app = app_with(tmp_path, TOKEN="s3cret")
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "QUERY_STRING": "a=1&token=s3cret",
               "RAW_URI": "/?a=1&token=s3cret", "REQUEST_URI": "/?a=1&token=s3cret",
               "SERVER_PROTOCOL": "HTTP/1.1", "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80",
               "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http",
               "wsgi.input": None, "wsgi.errors": sys.stderr}
    status = []
    b"".join(app(environ, lambda s, h, e=None: status.append(s)))
    assert status[0].startswith("302")
    for name in ("QUERY_STRING", "RAW_URI", "REQUEST_URI"):
        assert "s3cret" not in environ[name], name
    assert environ["QUERY_STRING"] == "a=1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_never_logs_the_token(tmp_path):
    port = free_port()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = subprocess.Popen([sys.executable, "-m", "viewer", "serve", str(SESSIONS), "--port",
                             str(port), "--no-watch", "--token", "s3cret-t0ken"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "serve did not start"
                time.sleep(0.2)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(f"http://127.0.0.1:{port}/?token=s3cret-t0ken", timeout=30) as r:
            assert r.status == 200
        try:
            opener.open(f"http://127.0.0.1:{port}/s/caf%C3%A9%20au%20lait?x=1", timeout=30)
        except urllib.error.HTTPError as e:
            assert e.code == 404
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    log = err.decode()
    assert "GET /?token=" in log  # the request was logged, the token was not
    assert "s3cret-t0ken" not in log
    # each request in a line as Werkzeug words it (its path readable), after the page was answered
    stamp = r"\[\d\d/\w{3}/\d{4} \d\d:\d\d:\d\d\]"
    assert re.search(rf'^127\.0\.0\.1 - - {stamp} "GET /\?token=… HTTP/1\.1" 302 -$', log, re.M)
    assert re.search(rf'^127\.0\.0\.1 - - {stamp} "GET / HTTP/1\.1" 200 -$', log, re.M)
    assert re.search(rf'^127\.0\.0\.1 - - {stamp} "GET /s/café%20au%20lait\?x=1 HTTP/1\.1" 404 -$', log, re.M)
    assert "s3cret-t0ken" in out.decode()  # the URL to open is printed once, for the user


# --- the remote setup -----------------------------------------------------------------------------


@pytest.fixture
def env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("SESSION_VIEWER_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SESSION_VIEWER_ROOTS", str(SESSIONS))
    monkeypatch.setenv("SESSION_VIEWER_CACHE_DIR", str(tmp_path / "c"))
    return monkeypatch


def test_the_factory_refuses_a_remote_setup_without_a_token(env):
    """`gunicorn 'viewer.web:create_app()'` with a public host name and no token would serve every
    session to anyone: the app does not start."""
    env.setenv("SESSION_VIEWER_ALLOWED_HOSTS", "viewer.example.com")
    with pytest.raises(RuntimeError, match="SESSION_VIEWER_TOKEN"):
        create_app()
    env.setenv("SESSION_VIEWER_ALLOW_ANONYMOUS", "1")
    create_app().extensions["viewer"].watcher.stop()
    env.delenv("SESSION_VIEWER_ALLOW_ANONYMOUS")
    env.setenv("SESSION_VIEWER_TOKEN", "s3cret")
    create_app().extensions["viewer"].watcher.stop()


def test_the_factory_refuses_a_remote_bind_without_a_token(env):
    env.setenv("SESSION_VIEWER_BIND", "0.0.0.0:8000")
    with pytest.raises(RuntimeError, match="SESSION_VIEWER_TOKEN"):
        create_app()
    env.setenv("SESSION_VIEWER_BIND", "127.0.0.1:8000")
    create_app().extensions["viewer"].watcher.stop()


def test_without_a_token_only_this_machine_is_answered(tmp_path):
    """However the server was bound, a request from another machine is refused without a token,
    even when it sends `Host: localhost`."""
    c = app_with(tmp_path).test_client()
    remote = {"REMOTE_ADDR": "203.0.113.7"}
    r = c.get("/", headers={"Host": "localhost"}, environ_base=remote)
    assert r.status_code == 403 and "SESSION_VIEWER_TOKEN" in r.get_data(as_text=True)
    assert c.get(f"/s/{TOUR}", headers={"Host": "127.0.0.1"}, environ_base=remote).status_code == 403
    assert c.get("/", headers={"Host": "localhost"}).status_code == 200
    assert c.get("/", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200
    anonymous = app_with(tmp_path, ALLOW_ANONYMOUS=True, ALLOWED_HOSTS=["viewer.example.com"])
    c = anonymous.test_client()
    assert c.get("/", headers={"Host": "viewer.example.com"}, environ_base=remote).status_code == 200
    assert c.get("/", headers={"Host": "evil.example"}, environ_base=remote).status_code == 400
    with_token = app_with(tmp_path, TOKEN="s3cret").test_client()
    assert with_token.get("/?token=s3cret", environ_base=remote).status_code == 302


def test_http_1_1_without_a_host_is_refused(tmp_path):
    with LiveServer(app_with(tmp_path)) as srv:
        def ask(request: bytes) -> bytes:
            with socket.create_connection(("127.0.0.1", srv.server.server_port), timeout=10) as s:
                s.sendall(request)
                return s.recv(200)

        assert bounded(lambda: ask(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")).startswith(
            b"HTTP/1.1 400")
        assert bounded(lambda: ask(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   b"Connection: close\r\n\r\n")).startswith(b"HTTP/1.1 200")


def test_plain_text_names_its_charset_once(tmp_path):
    c = app_with(tmp_path).test_client()
    r = c.get(f"/s/{TOUR}/raw/tour-bash?download=1")
    assert r.headers["Content-Type"] == "text/plain; charset=utf-8"


# --- every route of the app ------------------------------------------------------------------------

VALID = {"key": TOUR, "event_id": "tour-bash", "thread": "main", "path": "b0",
         "filename": "app.css"}
TRAVERSAL = ["..", "../..", "%2e%2e", "%2E%2E%2F%2E%2E", "..%2f..%2f..%2fetc%2fpasswd",
             "%2fetc%2fpasswd", "....%2f%2f", "..%5c..%5cwindows", "%00", "..%00", "~root",
             "%252e%252e", "%c0%ae%c0%ae", "legion-feature-tour%2f..", "%E2%80%A5", ".",
             "legion-feature-tour%00", "*", "%3Cscript%3E"]
SECRET_FILES = ("root:x:0:0", "[boot loader]", "def open_file")


def routes(app):
    """(rule, its argument names) for every GET route of the app, as Flask knows them."""
    return [(r, sorted(r.arguments)) for r in app.url_map.iter_rules() if "GET" in r.methods]


def url_of(rule, **args) -> str:
    url = rule.rule
    for name in rule.arguments:
        url = re.sub(r"<(?:[^:<>]+:)?" + name + ">", args.get(name, VALID.get(name, "x")), url)
    return url


def get(c, url, **kw):
    """A GET that never waits on a stream: the status, then the response is closed."""
    r = c.get(url, buffered=False, **kw)
    body = b"" if r.mimetype == "text/event-stream" else r.get_data()
    r.close()
    return r.status_code, body


def test_routes_are_enumerated_from_the_app(tmp_path):
    found = {r.rule for r, _ in routes(app_with(tmp_path))}
    assert {"/s/<key>", "/s/<key>.json", "/s/<key>/m/<event_id>", "/s/<key>/raw/<event_id>",
            "/s/<key>/e/<event_id>/full/<path>", "/static/<path:filename>"} <= found


def test_traversal_on_every_route_with_a_key_or_an_id(tmp_path):
    c = app_with(tmp_path).test_client()
    checked = 0
    for rule, names in routes(c.application):
        for name in names:
            for bad in TRAVERSAL:
                url = url_of(rule, **{name: bad})
                status, body = bounded(lambda: get(c, url), timeout=30)
                assert status in (400, 404, 308), (url, status)
                assert not any(s.encode() in body for s in SECRET_FILES), url
                checked += 1
    assert checked > 100


def test_a_foreign_host_is_refused_on_every_route(tmp_path):
    c = app_with(tmp_path).test_client()
    for rule, names in routes(c.application):
        url = url_of(rule)
        for host in ("evil.example", "evil.example:5000", "127.0.0.1.evil.example",
                     "localhost.evil.example", "[::1].evil.example", "0x7f000001"):
            status, body = bounded(lambda: get(c, url, headers={"Host": host}), timeout=30)
            assert status == 400 and b"Unexpected Host header" in body, (url, host, status)
        # the same route answers its own host (a 400 there is about its arguments, not the host)
        status, body = bounded(lambda: get(c, url, headers={"Host": "localhost:5000"}), timeout=30)
        assert b"Unexpected Host header" not in body, url


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE",
                                    "PROPFIND"])
def test_every_route_answers_only_get(tmp_path, method):
    c = app_with(tmp_path).test_client()
    for rule, _ in routes(c.application):
        r = bounded(lambda: c.open(url_of(rule), method=method), timeout=30)
        assert r.status_code == 405, (rule.rule, method, r.status_code)
