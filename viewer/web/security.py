"""The local server as an attack surface: Host checks, the optional token, and response headers.

Without a token the server answers only this machine: the peer must be a loopback address and the
`Host` header a loopback name (or one of ALLOWED_HOSTS), which stops DNS-rebinding pages from reading
transcripts through the user's browser. That holds however the app was started: `session-viewer
serve` binds 127.0.0.1 unless told otherwise, but a WSGI server such as gunicorn gives the factory
no bind address, so the app cannot know it was bound to 0.0.0.0 — it refuses a request from another
machine instead, and `create_app` refuses to start when its settings say it is meant for other
machines (a public ALLOWED_HOSTS name or SESSION_VIEWER_BIND) without a token, unless
SESSION_VIEWER_ALLOW_ANONYMOUS=1 says so on purpose.

With a token, every request must carry it: once as `?token=` (then kept in an HttpOnly,
SameSite=Lax cookie, so a permalink opened from another site works on the first click), or as
`Authorization: Bearer`. Tokens are compared as bytes in constant time. The `?token=` parameter is
taken out of the WSGI environ before the app or any access log sees the request, and out of the
built-in server's log lines.

Every response carries a strict Content-Security-Policy: scripts and styles only from our own
/static, images only from our own routes or data: URIs, no inline handlers, no framing.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import re
import time
from urllib.parse import unquote_plus, unquote_to_bytes

from flask import Flask, Response, abort, redirect, render_template, request
from werkzeug.serving import WSGIRequestHandler
from werkzeug.urls import uri_to_iri

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
COOKIE = "session_viewer_token"
GIVEN = "session_viewer.token"  # environ key: the ?token= value, taken out of the query string

CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "media-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]")[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback(host: str) -> bool:
    """Whether a host name or address (as in a Host header or a bind address) is this machine."""
    name = _host_name(host)
    if name in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


class ExposedWithoutToken(RuntimeError):
    """The settings serve other machines, and no token protects the sessions."""


def check_exposure(config) -> None:
    """Refuse settings that would serve other machines without a token (see the module doc)."""
    if config["TOKEN"] or config["ALLOW_ANONYMOUS"]:
        return
    public = [h for h in config["ALLOWED_HOSTS"] if h and not is_loopback(h)]
    bind = config.get("BIND") or ""
    if bind and not bind.startswith("unix:") and not is_loopback(bind):
        public.append(bind)
    if public:
        raise ExposedWithoutToken(
            f"session-viewer: refusing to serve {', '.join(public)} without an access token: "
            "set SESSION_VIEWER_TOKEN (or SESSION_VIEWER_ALLOW_ANONYMOUS=1 to serve every session "
            "to anyone who can reach this server)")


def _given_bytes(value: str | None) -> bytes | None:
    return None if value is None else value.encode("utf-8", "surrogatepass")


def _same(given: bytes | None, token: bytes) -> bool:
    return given is not None and hmac.compare_digest(given, token)


def init_app(app: Flask) -> None:
    allowed = LOOPBACK | {h.lower() for h in app.config["ALLOWED_HOSTS"]}
    token = app.config["TOKEN"]
    secret = token.encode("utf-8", "surrogatepass") if token else b""
    anonymous = app.config["ALLOW_ANONYMOUS"]
    app.wsgi_app = TokenOutOfQuery(app.wsgi_app)

    @app.before_request
    def check_request():
        if request.method not in ("GET", "HEAD"):  # read-only: nothing to post, put or ask about
            abort(405, valid_methods=["GET", "HEAD"])
        env = request.environ
        if not env.get("HTTP_HOST") and env.get("SERVER_PROTOCOL") == "HTTP/1.1":
            abort(400, description="An HTTP/1.1 request needs a Host header.")
        if token:
            from_query = env.get(GIVEN)
            if not (_same(from_query, secret)
                    or _same(_given_bytes(request.cookies.get(COOKIE)), secret)
                    or _same(_given_bytes(_bearer()), secret)):
                return Response(render_template("error.html", status=401,
                                                message="This server needs its access token: open "
                                                        "the link with ?token=… that "
                                                        "`session-viewer serve` printed."),
                                401)
            if from_query is not None:
                resp = redirect(request.full_path if request.query_string else request.path)
                resp.set_cookie(COOKIE, token, httponly=True, samesite="Lax")
                return resp
            return None
        if not anonymous and not is_loopback(request.remote_addr or ""):
            abort(403, description="This server has no access token, so it answers only on the "
                                   "machine it runs on. To serve others, set SESSION_VIEWER_TOKEN "
                                   "(session-viewer serve --allow-remote makes one).")
        if _host_name(request.host) not in allowed:
            abort(400, description="Unexpected Host header: this server only answers on loopback.")
        return None

    @app.after_request
    def headers(resp: Response):
        resp.headers.setdefault("Content-Security-Policy", CSP)
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "no-referrer"
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["Cross-Origin-Opener-Policy"] = "same-origin"
        resp.headers["Cross-Origin-Resource-Policy"] = "same-origin"
        return resp


def _bearer() -> str | None:
    auth = request.headers.get("Authorization", "")
    return auth[7:] if auth.startswith("Bearer ") else None


class TokenOutOfQuery:
    """WSGI middleware: takes `token=` out of the query string (QUERY_STRING, and RAW_URI /
    REQUEST_URI as gunicorn and others keep them) into environ[GIVEN], as bytes. A server that
    logs the request from the environ after the response (gunicorn's access log) never sees it."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        query = environ.get("QUERY_STRING", "")
        if "=" in query:
            kept, given = _split_token(query)
            if given is not None:
                environ[GIVEN] = given
                environ["QUERY_STRING"] = kept
                for name in ("RAW_URI", "REQUEST_URI"):
                    uri = environ.get(name)
                    if isinstance(uri, str) and "?" in uri:
                        environ[name] = uri.split("?", 1)[0] + ("?" + kept if kept else "")
        return self.wsgi_app(environ, start_response)


def _split_token(query: str) -> tuple[str, bytes | None]:
    """(the query without its token parameters, the last token's bytes or None). WSGI strings
    hold the request's bytes as latin-1."""
    kept, given = [], None
    for part in query.split("&"):
        name, _, value = part.partition("=")
        if unquote_plus(name) == "token":
            given = unquote_to_bytes(value.replace("+", " ").encode("latin-1", "replace"))
        else:
            kept.append(part)
    return "&".join(kept), given


_TOKEN_IN_TEXT = re.compile(r"((?:^|[?&])token=)[^&\s\"]*")


def scrub(text: str) -> str:
    """A log line without the value of any `token=` in it."""
    return _TOKEN_IN_TEXT.sub(r"\1…", text)


_STAMP: list = [0, ""]  # (the second, the access log's time for it)
WRITE_BUFFER = 256 << 10  # bytes a response's head and body are gathered into before sending
ACCESS_LOG = logging.getLogger("werkzeug")  # its level says whether requests are logged


class RequestHandler(WSGIRequestHandler):
    """The built-in server's request handler, with tokens taken out of what it logs.

    Its writes are buffered up to WRITE_BUFFER and sent when Werkzeug flushes, after each piece
    of the body: a response's head and a page then go out in one system call, not one each (a
    call gives the interpreter lock up and waits to take it back: under load, a tenth of a
    request's time)."""

    wbufsize = WRITE_BUFFER

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:  # the client went away with part of the answer still buffered: as before,
            self.rfile.close()  # nothing to say about it (a traceback on the server's terminal)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """The access log's line for a request, as Werkzeug words it, written to stderr in one
        piece by the request's thread. Through the logging module, every request thread took the
        one handler's lock in turn: under 200 concurrent requests the server spent a sixth of its
        time queueing there, and answered in that lock's order."""
        if not ACCESS_LOG.isEnabledFor(logging.INFO):
            return
        try:
            path = self.path
            if "%" in path or not path.startswith("/") or not path.isascii():
                path = uri_to_iri(path)  # (a plain path is its own IRI)
            request = f"{self.command} {path} {self.request_version}"
        except AttributeError:  # a request line that could not be read
            request = self.requestline
        request = request.translate(self._control_char_table)
        if "token=" in request:
            request = scrub(request)
        line = f'{self.address_string()} - - [{self.log_date_time_string()}] "{request}" {code} {size}\n'
        try:
            os.write(2, line.encode("utf-8", "replace"))
        except OSError:  # no stderr to write to: no log
            pass

    def log_date_time_string(self, timestamp: float | None = None) -> str:
        """The time of a log line, formatted once a second (not once a request)."""
        if timestamp is not None:
            return super().log_date_time_string(timestamp)
        now = int(time.time())
        stamp = _STAMP
        if stamp[0] != now:
            stamp[:] = now, super().log_date_time_string()
        return stamp[1]

    def log(self, type: str, message: str, *args) -> None:
        super().log(type, message, *(scrub(a) if isinstance(a, str) else a for a in args))
