"""The web app's Jinja environment: the core template helpers (`viewer.templating`) with the
server's URL builder, and what only a served page has: how long a session still counts as live,
and the search the page was opened with (its matches marked in every event drawn)."""

from __future__ import annotations

import time

from flask import Flask, current_app, g, has_app_context, has_request_context, request
from flask.templating import Environment as FlaskEnvironment
from jinja2 import pass_environment
from markupsafe import Markup

from .. import templating
from ..marks import mark_html
from .cards import Cards
from .urls import Urls


class Environment(templating.FlatGlobals, FlaskEnvironment):
    """Flask's environment with flat globals (`templating.FlatGlobals`): `init_app` and start-up
    set them all before the first template loads."""


def render_event(v, key: str) -> Markup:
    """One event as the app draws it (for Python callers: the live feed)."""
    return _render_event(current_app.jinja_env, v, key)


@pass_environment
def _render_event(env, v, key: str) -> Markup:
    """One event through the shared partial — drawn once while it stays as it is (cards.py), unless
    the page has a search: then its matches are marked in it."""
    marker = _marker()
    if marker is None:
        # (links are built under the app's root: part of what a card depends on)
        root = request.script_root if has_request_context() else None
        return env.cards.card(v, (key, root), lambda: templating.render_event(env, v, key))
    html = templating.render_event(env, v, key)
    if marker.wants_view(v):
        html = Markup(mark_html(str(html), marker.matcher, open_details=marker.shows_target(v),
                                deadline=marker.deadline)[0])
    return html


def _marker():
    """The search the page being drawn was opened with (see `web.find`), if any."""
    return g.get("marker") if has_app_context() else None


def hit_hidden(event_id: str, path: str, text, shown: int) -> bool:
    """Whether a cut block holds a match of the page's search in the part not shown."""
    marker = _marker()
    return marker is not None and marker.in_hidden_part(event_id, path, text, shown)


def search_args() -> dict:
    """The page's search as URL arguments, for links that must keep it ("show all")."""
    marker = _marker()
    return marker.matcher.query.args() if marker is not None else {}


ROLE_WORDS = {"user": "user", "assistant": "assistant", "tool": "tool result", "system": "system",
              "status": "status", "error": "error", "agent_call": "agent call",
              "agent_response": "agent reply", "unparsed": "unparsed line"}
FIELD_WORDS = {"text": "text", "thinking": "thinking", "tool": "tool name", "input": "tool input",
               "output": "tool output", "notice": "notice", "data": "data", "unparsed": "raw line",
               "cached": "cached history", "media": "media"}


def query_string(args: dict) -> str:
    """URL arguments (lists repeat their name) as a query string."""
    from urllib.parse import urlencode

    return urlencode({k: v for k, v in args.items() if v is not None}, doseq=True)


def fresh_for(written: float) -> float:
    """Seconds a session written at `written` still counts as live (being written: the list's
    meaning, a write in the last minute); 0 when it no longer does."""
    from .live import LIVE_WINDOW

    return max(0.0, round(LIVE_WINDOW - (time.time() - written), 1))


def session_at(path: str | None):
    """The discovered session whose main file is `path` (a sub-agent's own session, its parent's),
    or None: pages link other sessions only through the discovered set."""
    if not path or not has_app_context():
        return None
    return current_app.extensions["viewer"].store.at_path(path)


def init_app(app: Flask) -> None:
    templating.configure(app.jinja_env, Urls)
    app.jinja_env.cards = Cards()
    app.jinja_env.globals.update(
        render_event=_render_event,
        fresh_for=fresh_for,
        hit_hidden=hit_hidden,
        search_args=search_args,
        query_string=query_string,
        session_at=session_at,
        ROLE_WORDS=ROLE_WORDS,
        FIELD_WORDS=FIELD_WORDS,
    )
