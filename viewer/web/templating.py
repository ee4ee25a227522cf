"""Filters and helpers the templates use: thin names over `viewer.render` and friends."""

from __future__ import annotations

import hashlib
import logging
import re
import time

from flask import Flask, current_app, g, has_app_context
from markupsafe import Markup

from .. import catalog, render, timestamps, tools, usage
from ..index import epoch
from ..model import ROLES
from ..marks import mark_html
from ..reader import CutStr
from ..timeline import lane_of

log = logging.getLogger(__name__)
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp", "image/bmp"}
INLINE_MEDIA = 2 << 20  # base64 chars inlined as data: URIs; larger media load from /media


def dom_id(prefix: str, value: str) -> str:
    """An element id from untrusted text: kept when plain, hashed otherwise."""
    value = str(value)
    if _SAFE_ID.fullmatch(value):
        return prefix + value
    return prefix + "x" + hashlib.sha1(value.encode("utf-8", "replace")).hexdigest()[:16]


_BASE64 = re.compile(r"[A-Za-z0-9+/\s]*=?=?\s*")


def media_inline(b) -> str | None:
    """A data: URI for a small inline image of a safe type, else None. Only base64 goes in: the
    file's text never becomes part of a URL the browser parses."""
    mt = (b.media_type or "").lower()
    if b.data and mt in _IMAGE_TYPES and not isinstance(b.data, CutStr) \
            and len(b.data) <= INLINE_MEDIA and _BASE64.fullmatch(b.data):
        return f"data:{mt};base64,{b.data}"
    return None


def safe_image(b) -> bool:
    """Whether a media block may be shown in an <img> (SVG and unknown types are only linked)."""
    return (b.media_type or "").lower() in _IMAGE_TYPES


def render_event(v, key: str) -> Markup:
    """One event through `_message.html`. A record whose shape the template cannot draw becomes a
    "could not be displayed" card with its raw link; it never takes the page down with it."""
    env = current_app.jinja_env
    try:
        html = env.get_template("_message.html").render(v=v, key=key)
    except Exception:
        log.exception("cannot render event %s", getattr(v.ev, "id", "?"))
        return Markup(env.get_template("_message_broken.html").render(v=v, key=key))
    marker = _marker()
    if marker is not None and marker.wants_view(v):
        html = mark_html(html, marker.matcher, open_details=marker.shows_target(v),
                         deadline=marker.deadline)[0]
    return Markup(html)


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


# a state → (CSS class, words, what it means). Classes come from this table only: a word from a
# transcript never reaches an attribute.
_BADGES = {
    "pending": ("pending", "pending", ""),
    "executing": ("executing", "executing", ""),
    "completed": ("completed", "completed", ""),
    "error": ("error", "error", ""),
    "awaiting_permission": ("awaiting", "awaiting permission",
                            "the agent asked the user for permission to run this tool"),
    "denied": ("denied", "denied by user", "the user refused this call: the tool did not run"),
    "interrupted": ("interrupted", "interrupted", "stopped before it finished"),
    "cancelled": ("cancelled", "cancelled", "cancelled before it ran"),
}


def state_badge(state: str) -> tuple[str, str, str]:
    """(class, words, title) of the badge for a call's or a reply's state."""
    return _BADGES.get(state, ("other", str(state).replace("_", " "), ""))


# Roles and kinds come from transcripts (a generic card's role is the record's own `type`): only
# these reach a class attribute, anything else is `other`.
_ROLE_CLASSES = frozenset(ROLES) | {"unparsed", "unknown", "exit"}
_KIND_CLASSES = frozenset({
    "message", "tool_result", "tool_output", "tool_state", "comm", "agent_call", "agent_response",
    "unparsed", "unknown", "broken", "system", "status", "result", "error", "permission", "interrupt",
    "progress", "snapshot", "summary", "compact_summary", "command_output", "hint", "control",
    "exit", "session", "branch", "stream", "task", "sdk"})


def role_class(role: str) -> str:
    return role if role in _ROLE_CLASSES else "other"


def kind_class(kind: str) -> str:
    head = str(kind).split(":", 1)[0]
    return head if head in _KIND_CLASSES else "other"


def fresh_for(written: float) -> float:
    """Seconds a session written at `written` still counts as live (being written: the list's
    meaning, a write in the last minute); 0 when it no longer does."""
    from .live import LIVE_WINDOW

    return max(0.0, round(LIVE_WINDOW - (time.time() - written), 1))


_MEDIA_CLASSES = frozenset({"image", "audio", "video", "document"})


def media_class(media: str) -> str:
    return media if media in _MEDIA_CLASSES else "other"


def words(text: str) -> int:
    return len(text.split())


def init_app(app: Flask) -> None:
    env = app.jinja_env
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.filters.update(
        md=render.markdown,
        hl=render.highlight,
        pjson=render.pretty_json,
        json_pretty=render.pretty_json_text,
        first_key=tools.key_of,
        jtext=render.json_text,
        ansi=render.ansi_segments,
        has_ansi=render.has_ansi,
        cut=render.cut,
        size=render.human_size,
        span=timestamps.span,
        iso=timestamps.iso,
        utc=timestamps.human_utc,
        words=words,
        usd=usage.usd,
        count=usage.count,
    )
    env.globals.update(
        dom_id=dom_id,
        render_event=render_event,
        fresh_for=fresh_for,
        diff=render.diff,
        media_inline=media_inline,
        safe_image=safe_image,
        tool_view=tools.view_of,
        tool_summary=tools.summary,
        tool_path=tools.path_of,
        tool_command=tools.command_of,
        tool_content=tools.content_of,
        tool_edits=tools.edits,
        tool_prose=tools.prose_input,
        tool_progress=tools.progress_of,
        tool_side_fields=tools.SIDE_FIELDS,
        todo_items=tools.todo_items,
        result_view=tools.result_view,
        from_epoch=timestamps.from_epoch,
        epoch=epoch,
        lane_of=lane_of,
        state_badge=state_badge,
        role_class=role_class,
        media_class=media_class,
        kind_class=kind_class,
        hit_hidden=hit_hidden,
        query_string=query_string,
        ROLE_WORDS=ROLE_WORDS,
        FIELD_WORDS=FIELD_WORDS,
        search_args=search_args,
        MARKDOWN_CAP=render.MARKDOWN_CAP,
        SORTS=catalog.SORTS,
        TEXT_CAP=render.TEXT_CAP,
    )
