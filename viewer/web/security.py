"""The local server as an attack surface: Host checks, the optional token, and response headers.

Served on loopback (the default), only loopback Host names are accepted, which stops DNS-rebinding
pages from reading transcripts through the user's browser. Served on another interface, a token is
required: given once as `?token=`, it is kept in a SameSite=Strict, HttpOnly cookie. Every response
carries a strict Content-Security-Policy: scripts and styles only from our own /static, images only
from our own routes or data: URIs, no inline handlers, no framing.
"""

from __future__ import annotations

import hmac

from flask import Flask, Response, abort, redirect, render_template, request

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
COOKIE = "session_viewer_token"

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


def init_app(app: Flask) -> None:
    allowed = LOOPBACK | {h.lower() for h in app.config["ALLOWED_HOSTS"]}
    token = app.config["TOKEN"]

    @app.before_request
    def check_request():
        if token:
            given = request.args.get("token") or request.cookies.get(COOKIE) or _bearer()
            if not given or not hmac.compare_digest(given, token):
                return Response(render_template("error.html", status=401,
                                                message="This server needs its access token: open "
                                                        "the link with ?token=… that "
                                                        "`session-viewer serve` printed."),
                                401)
            if request.args.get("token"):
                args = request.args.to_dict(flat=False)
                args.pop("token", None)
                target = request.path + _query(args)
                resp = redirect(target)
                resp.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
                return resp
        elif _host_name(request.host) not in allowed:
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


def _query(args: dict) -> str:
    from urllib.parse import urlencode

    return "?" + urlencode(args, doseq=True) if args else ""
