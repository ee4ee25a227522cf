"""The templates' environment, without Flask: the filters and helpers every page, fragment, live
message and exported file render with.

One set of templates and partials (`_message.html`, `_macros.html`, `_window.html`…) draws an
event wherever it appears. The web app configures Flask's own Jinja environment with `configure()`;
the exporter builds a plain one with `environment()`. What differs between the two is passed in, not
branched on inside Python: the URL builder `u` (server routes, or `#m-<id>` anchors in an exported
file), how much text is shown before a "show all" (`caps`), how large an image may be inlined, and
`exporting`, which the templates read to leave out what needs the server (raw view, copy buttons).
"""

from __future__ import annotations

import hashlib
import logging
import re
from functools import partial
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, pass_environment, select_autoescape
from markupsafe import Markup, escape

from . import catalog, render, timestamps, tools, usage
from .model import ROLES
from .reader import CutStr, json_text
from .timeline import lane_of

log = logging.getLogger(__name__)
_HERE = Path(__file__).resolve().parent  # the viewer package
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp", "image/bmp"}
_PLAYABLE = {"audio/mpeg", "audio/wav", "audio/ogg", "audio/webm", "audio/mp4", "video/mp4",
             "video/webm", "video/ogg"}
INLINE_MEDIA = 2 << 20  # base64 chars inlined as data: URIs on a page; larger media load from /media
_BASE64 = re.compile(r"[A-Za-z0-9+/\s]*=?=?\s*")
_MEDIA_CLASSES = frozenset({"image", "audio", "video", "document"})


def resource_dir(name: str) -> Path:
    """templates/, static/ and test_data/sessions: inside the package in a wheel, at the top of the
    source tree otherwise (editable installs import from the checkout)."""
    inside = _HERE / name
    return inside if inside.is_dir() else _HERE.parent / name


def dom_id(prefix: str, value: str) -> str:
    """An element id from untrusted text: kept when plain, hashed otherwise."""
    value = str(value)
    if _SAFE_ID.fullmatch(value):
        return prefix + value
    return prefix + "x" + hashlib.sha1(value.encode("utf-8", "replace")).hexdigest()[:16]


def css_id(value: str) -> str:
    """An element id as a CSS selector's `#…` part: anything but letters, digits, `_` and `-`
    escaped (an event id may hold `.`, `:` and `~`)."""
    return re.sub(r"[^A-Za-z0-9_-]", lambda m: "\\" + m.group(), str(value))


def inline_media(limit: int, playable: bool = False):
    """A `media_inline(block)` for templates: a data: URI for an inline payload of a safe type up to
    `limit` base64 characters, else None. Pages inline small images only (the rest load from a
    route); an exported file has no route, so it inlines audio and video too. Only base64 goes in:
    the file's text never becomes part of a URL the browser parses."""
    types = _IMAGE_TYPES | _PLAYABLE if playable else _IMAGE_TYPES

    def media_inline(b) -> str | None:
        mt = (b.media_type or "").lower()
        if b.data and mt in types and not isinstance(b.data, CutStr) and len(b.data) <= limit \
                and _BASE64.fullmatch(b.data):
            return f"data:{mt};base64,{b.data}"
        return None

    return media_inline


def media_class(media: str) -> str:
    return media if media in _MEDIA_CLASSES else "other"


def safe_image(b) -> bool:
    """Whether a media block may be shown in an <img> (SVG and unknown types are only linked)."""
    return (b.media_type or "").lower() in _IMAGE_TYPES


@pass_environment
def render_event(env: Environment, v, key: str) -> Markup:
    """One event through `_message.html`. A record whose shape the template cannot draw becomes a
    "could not be displayed" card with its raw link; it never takes the page down with it."""
    try:
        return Markup(env.get_template("_message.html").render(v=v, key=key))
    except Exception:
        log.exception("cannot render event %s", getattr(v.ev, "id", "?"))
        return Markup(env.get_template("_message_broken.html").render(v=v, key=key))


def events_html(env: Environment, views, key: str) -> str:
    """A window of events, their cards joined once (the same HTML as each through `render_event`,
    which draws them again one by one if one of them cannot be drawn). Plain text, as an export
    writes it: a window's megabytes wrapped in Markup and taken out again were copied twice."""
    try:
        m = env.get_template("_macros.html").module
        out: list = []
        for v in views:
            _event(env, v, key, m, out)
        return "".join(out)
    except Exception:
        return "".join(render_event(env, v, key) for v in views)


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
    "denied_by_settings": ("denied", "denied by settings", "a permission rule or the permission mode in "
                           "the settings refused this call; nobody was asked: the tool did not run"),
    "blocked_by_hook": ("denied", "blocked by hook", "a PreToolUse hook refused this call: the tool did not run"),
    "denied_by_auto_mode": ("denied", "denied by auto mode",
                            "auto mode's safety check refused this call: the tool did not run"),
    "background": ("executing", "running in background",
                   "started work in the background that has not reported back yet"),
    "finished_unreported": ("completed", "finished · no notification",
                            "its sub-agent's own transcript says it finished, but no notification of "
                            "its end reached this session (the session ended or was stopped first)"),
    "failed_unreported": ("error", "failed · no notification",
                          "its workflow run's own file says it failed, but no "
                          "notification of its end reached this session (the session ended or was "
                          "stopped first)"),
    "stopped_unreported": ("interrupted", "stopped · no notification",
                           "its workflow run's own file says it was stopped before it finished, but "
                           "no notification of its end reached this session (the session ended or "
                           "was stopped first)"),
    "interrupted": ("interrupted", "interrupted", "stopped before it finished"),
    "cancelled": ("cancelled", "cancelled", "cancelled before it ran"),
}


def state_badge(state: str) -> tuple[str, str, str]:
    """(class, words, title) of the badge for a call's or a reply's state."""
    return _BADGES.get(state, ("other", str(state).replace("_", " "), ""))


def state_html(state: str) -> Markup:
    """The badge for a call's or a reply's state (`state_badge`): a card's head, a call's, a line
    standing for a result shown with its call."""
    css, said, meaning = state_badge(state)
    title = f' title="{escape(meaning)}"' if meaning else ""
    return Markup(f'<span class="state {escape(css)}"{title}>{escape(said)}</span>')


# Roles and kinds come from transcripts (a generic card's role is the record's own `type`): only
# these reach a class attribute, anything else is `other`.
_ROLE_CLASSES = frozenset(ROLES) | {"unparsed", "unknown", "exit"}
_KIND_CLASSES = frozenset({
    "message", "tool_result", "tool_output", "tool_state", "comm", "agent_call", "agent_response",
    "unparsed", "unknown", "broken", "system", "status", "result", "error", "permission", "interrupt",
    "progress", "snapshot", "summary", "compact_summary", "command_output", "hint", "control",
    "exit", "session", "branch", "stream", "task", "sdk", "compaction", "tool_context", "section"})


def role_class(role: str) -> str:
    return role if role in _ROLE_CLASSES else "other"


def kind_class(kind: str) -> str:
    head = str(kind).split(":", 1)[0]
    return head if head in _KIND_CLASSES else "other"


def words(text: str) -> int:
    return len(text.split())


FOLD_LINES = 25  # an exported result longer than this (or FOLD_CHARS) is folded behind its size
FOLD_CHARS = 2_500


def plural(n: int, word: str, many: str | None = None) -> str:
    """"1 line", "12 lines", "1,204 lines": a count and its noun agreeing with it."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def result_fold(content) -> str | None:
    """What the fold of a long tool result says (`212 lines, 9.8 KB`), or None for a short one:
    an exported file shows every result whole, so long ones are folded for the reader to open."""
    texts = [b.text for b in content or () if getattr(b, "kind", "") == "text"]
    chars = sum(map(len, texts))
    lines = sum(map(_lines, texts))
    if lines <= FOLD_LINES and chars <= FOLD_CHARS:
        return None
    return f"{lines:,} line{'s' if lines != 1 else ''}, {render.human_size(chars)}"


def _lines(text: str) -> int:
    """The lines of a text, its newlines at the end not starting any (as `rstrip` would count
    them, without copying the text)."""
    if not text:
        return 0
    end = len(text)
    while end and text[end - 1] == "\n":
        end -= 1
    return text.count("\n", 0, end) + 1


# --- pieces every card draws, in Python ----------------------------------------------------------
# A Jinja macro call costs about as much as the little HTML these make: an export draws them for
# each of tens of thousands of events (the macros of the same names in _macros.html call these).


def time_html(dt, raw=None, assumed: bool = False, since: str = "", split: bool = False) -> Markup:
    """A time as the `time` macro of _macros.html draws it (see there)."""
    if dt:
        # (what a datetime's isoformat writes — digits, `-`, `:`, `.`, `T`, `Z`, "UTC" — needs no
        # escaping: every card has a time, and escaping was a tenth of drawing its head)
        shown = timestamps.human_utc(dt)
        if assumed:
            shown = shown[:19]
        out = f'<time datetime="{timestamps.iso(dt)}" title="{shown}'
        if assumed:
            out += ', as written in the file, which names no time zone" data-local="as written"'
        else:
            out += '"'
        if assumed or split:
            out += ' class="assumed split"' if assumed and split else \
                (' class="assumed"' if assumed else ' class="split"')
        if split:
            out += f'>{shown[:16]}<span class="t-rest">{shown[16:]}</span></time>'
        else:
            out += f">{shown}</time>"
        if since:
            out += f' <span class="since" title="since the session started">{escape(since)}</span>'
        return Markup(out)
    if raw is not None:
        return Markup(f'<span class="ts-raw" title="a timestamp this viewer cannot read">{escape(raw)}</span>')
    return Markup("")


def tool_label_html(name, fmt=None) -> Markup:
    """A tool's name as the `tool_label` macro of _macros.html draws it (see there)."""
    mcp = tools.mcp_name(name, fmt)
    if mcp:
        return Markup('<span class="mcp-name" title="{0}, a tool of the {1} {2} ({3})"><span '
                      'class="mcp-server"><span class="mcp-tag">{4}</span> {2}</span> <span '
                      'class="mcp-tool">{0}</span></span>').format(
            mcp.tool, mcp.kind, mcp.server, mcp.full, mcp.tag)
    return escape(name or "tool")


_NO_KIND = frozenset({"message", "tool_result", "comm", "unparsed"})  # kinds a card's chip leaves unsaid


@pass_environment
def event_html(env: Environment, v, key: str, m) -> Markup:
    """One event's card (`_message.html`); `m` is the `_macros.html` module."""
    out: list = []
    _event(env, v, key, m, out)
    return Markup("".join(out))


def _event(env: Environment, v, key: str, m, out: list) -> None:
    """The pieces of one event's card, added to `out`: its head and the frame around its blocks,
    drawn here rather than by a Jinja macro (an export draws tens of thousands of cards, and the
    macro cost more than its HTML), its blocks by `block_html`."""
    u, exporting = env.globals["u"], env.globals["exporting"]
    ev = v.ev
    role = ev.role
    eid = escape(ev.id)
    link = escape(u.message(key, ev.id, pos=v.at))
    out.append(f'<li class="ev role-{role_class(role)} kind-{kind_class(ev.kind)}')
    if ev.hidden:
        out.append(" is-hidden")
    if v.target:
        out.append(" target")
    if v.refs_only:
        out.append(" refs-only")
    if v.folded:
        out.append(" folded")
    if v.continued:
        out.append(" continued")
    if v.lane:
        out.append(f" lane-{escape(v.lane)}")
    if ev.parent:
        out.append(" sub")
    out.append(f'" id="m-{eid}" data-seq="{v.seq:d}">\n  <div class="ev-head">\n')
    if v.refs_only:
        for rc in v.refs.values():
            out.append(f'<span class="result-ref" id="{escape(dom_id("rr-", rc.call.id))}">'
                       f'{_result_ref_line(env, rc, key)}</span>')
    elif ev.kind == "comm":
        out.append(f'<span class="who">{escape(ev.author or "another agent")} → '
                   f'{escape(ev.recipient or v.agent or "this agent")}</span>\n')
    elif ev.recipient:
        out.append(f'<span class="who">{escape(ev.author or v.agent or role)} → '
                   f'{escape(ev.recipient)}</span>\n')
    elif ev.author:
        out.append(f'<span class="who">{escape(ev.author)}</span>\n')
    else:
        out.append(f'<span class="who role-word">{escape("tool result" if role == "tool" else role)}</span>')
    if v.thread_label:
        out.append(f'<span class="in-thread" title="an event of this sub-agent thread">'
                   f'{escape(v.thread_label)}</span>')
    if ev.hidden:
        out.append(f'<span class="hidden-reason">{escape(ev.hidden_reason or "hidden")}</span>')
    # the kind, unless it only repeats the role ("System system", "Unknown unknown")
    if not ev.hidden and ev.kind not in _NO_KIND and ev.kind != role:
        out.append(f'<span class="kind">{escape(ev.kind.replace("_", " "))}</span>')
    if ev.state:
        out.append(state_html(ev.state))
    if v.thought:
        out.append('<span class="kind thought" title="the model thought here; the provider kept only '
                   'a signature, not the text">thinking not recorded</span>')
    if ev.model:
        out.append(f'<span class="model">{escape(ev.model)}</span>')
    out.append(f'    <span class="when">'
               f'{time_html(ev.timestamp, ev.timestamp_raw, ev.timestamp_assumed_utc, v.since_start)}'
               f'</span>\n    <span class="actions">\n      <a class="permalink" href="{link}" '
               f'title="Link to this message">#</a>\n')
    if not exporting:
        raw, slot = escape(u.raw(key, ev.id)), escape(dom_id("raw-", ev.id))
        line = f" (line {escape(ev.line)})" if ev.line else ""
        out.append(
            f'      <button type="button" class="copy-link" data-href="{link}" title="Copy a link to '
            f'this message">copy link</button>\n'
            f'      <button type="button" class="range-pick" data-end="from" data-id="{eid}" '
            f'title="Start the export here">from here</button>\n'
            f'      <button type="button" class="range-pick" data-end="to" data-id="{eid}" '
            f'title="End the export here">to here</button>\n'
            f'      <a class="raw-link" href="{raw}" hx-get="{raw}" hx-target="#'
            f'{slot}" hx-swap="innerHTML" title="The source record of this '
            f'message{line}">raw</a>\n')
    out.append("    </span>\n  </div>\n")
    if not v.refs_only:
        out.append('  <div class="ev-body">\n')
        if v.dropped:
            out.append(m.dropped_mark(key, v.dropped))
        if v.rewound:
            first, n = v.rewound
            out.append(f'<div class="rewound">↩ rewound: sent after going back to before <a href="'
                       f'{escape(u.message(key, first))}">this message</a>; the {escape(n)} message'
                       f'{"s" if n != 1 else ""} from there on {"were" if n != 1 else "was"} dropped '
                       f'from the conversation</div>')
        skip_text = bool(v.repeats)
        for i, b in enumerate(ev.blocks):
            if not (skip_text and b.kind == "text"):
                out.append(block_html(env, b, v, key, f"b{i}"))
        if v.summarized:
            first, n = v.summarized
            out.append(f'<div class="repeat-ref">↳ summarized: the {escape(n)} message'
                       f'{"s" if n != 1 else ""} from <a href="{escape(u.message(key, first))}">this '
                       f'message</a> on; kept verbatim: what came before it')
            if v.kept_from:
                out.append(f', from <a href="{escape(u.message(key, v.kept_from))}">this message</a> on')
            out.append("</div>\n")
        elif v.kept_from:
            out.append(f'<div class="repeat-ref">↳ kept verbatim from <a href="'
                       f'{escape(u.message(key, v.kept_from))}">this message</a> on; what came before '
                       f'it was summarized</div>')
        if v.repeats:
            out.append(f'<div class="repeat-ref">↳ result text: the same as <a href="'
                       f'{escape(u.message(key, v.repeats))}">the turn\'s last message</a></div>')
        out.append("  </div>\n")
    if not exporting:
        out.append(f'<div class="raw-slot" id="{slot}"></div>')
    out.append("</li>")


# --- a card's blocks, in Python ------------------------------------------------------------------
# The text, thinking, tool-use and notice blocks every card holds, the cut boxes (output, prose, a
# tool result's text) and a tool call's card (its head, input, state and result), drawn here for
# the page, the live stream and the export alike (the templates call them by these names), where
# macros of _macros.html drew them; its `other_block` still draws the rarer blocks (results shown
# again, orphans, media, data), `tool_input` a call's rarer input views and `call_thread` the
# sub-agents a call spawned. Every transcript string goes through `escape`; Markdown through
# render.markdown (markdown-it without raw HTML, then nh3).


def _macros(env: Environment):
    return env.get_template("_macros.html").module


@pass_environment
def show_all_html(env: Environment, key: str, event_id: str, path: str, c, text=None) -> Markup:
    """What a cut box says about its hidden part: in an export, that it is left out; on a page, a
    "Show all" link (saying when the page's search matches in that part)."""
    if not c.hidden:
        return Markup("")
    if env.globals["exporting"]:
        return Markup(f'<span class="warn cut-note">{c.hidden} more characters '
                      f'({escape(render.human_size(c.total))} in all) are not included in this '
                      f'export.</span>\n')
    u = env.globals["u"]
    deep = env.globals["hit_hidden"](event_id, path, text, len(c.text))
    size = f", {escape(render.human_size(c.total))}" if c.total > 1000000 else ""
    return Markup(
        ('<span class="hit-note">The search matches in the part not shown.</span> ' if deep else "")
        + f'<a class="show-all{" has-hit" if deep else ""}" href="{escape(u.full(key, event_id, path, raw=True))}"'
        f' hx-get="{escape(u.full(key, event_id, path, **env.globals["search_args"]()))}" '
        f'hx-target="closest .cuttable" hx-swap="outerHTML">Show all ({c.hidden} more characters{size})</a>')


@pass_environment
def output_html(env: Environment, text, key: str, event_id: str, path: str, lang=None,
                filename=None, cls: str = "", cap: int | None = None) -> Markup:
    """Tool output, command output, anything that is not prose: escaped, ANSI-coloured, cut."""
    c = render.cut(text, env.globals["TEXT_CAP"] if cap is None else cap)
    if render.has_ansi(c.text):
        body = render.ansi_html(c.text)
    elif lang or filename:
        body = env.filters["hl"](c.text, lang, filename)
    else:
        body = f"<pre>{escape(c.text)}</pre>"
    return Markup(f'<div class="cuttable out {escape(cls)}">\n{body}\n'
                  f'{show_all_html(env, key, event_id, path, c, text)}\n</div>')


@pass_environment
def prose_html(env: Environment, text, key: str, event_id: str, path: str,
               cap: int | None = None) -> Markup:
    """Markdown prose, sanitised (render.markdown), cut."""
    c = render.cut(text, env.globals["MARKDOWN_CAP"] if cap is None else cap)
    return Markup(f'<div class="cuttable md">{render.markdown(c.text)}'
                  f'{show_all_html(env, key, event_id, path, c, text)}</div>')


@pass_environment
def result_text_html(env: Environment, text, name, inp, key: str, event_id: str, path: str,
                     cap: int | None = None, error: bool = False, now: bool = False) -> Markup:
    """One text of a tool result, shown the way tools.result_view decides: prose, a file, JSON, a
    diff, output. A long file is sent plain and highlighted once it is in view (its card again, as
    a fragment: Pygments would take most of a first screen's time); `now` highlights it at once."""
    cap = env.globals["TEXT_CAP"] if cap is None else cap
    c = render.cut(text, cap)
    rv = tools.result_view(name, inp, c.text, error)
    if rv.kind == "prose":
        code = (tools.result_view(name, inp, text, error) if c.hidden else rv).code
        return Markup(f"{prose_html(env, code, key, event_id, path, cap)}\n")
    if rv.kind == "json" and not c.hidden:
        return Markup(f'<div class="cuttable out">{env.filters["json_pretty"](c.text)}</div>\n')
    if rv.kind == "diff" and not c.hidden:  # a diff per file
        return Markup(f'<div class="result-diff">{"".join(diff_html(e, inp) for e in rv.edits)}</div>\n')
    if rv.kind != "file":
        return Markup(f"{output_html(env, text, key, event_id, path, cap=cap)}\n")
    hl = env.filters["hl"]
    out = ['<div class="cuttable out file">\n']
    if rv.before:
        out.append(f'<div class="result-note">{escape(rv.before)}</div>')
    if now or env.globals["exporting"] or not render.highlights_later(rv.code, None, rv.filename):
        out.append(f"{hl(rv.code, None, rv.filename, rv.numbers)}\n")
    else:
        u = env.globals["u"]
        later = escape(u.full(key, event_id, path, cap=cap, **env.globals["search_args"]()))
        out.append(f'<div class="hl-later" hx-get="{later}" hx-trigger="intersect once" '
                   f'hx-target="closest .cuttable" hx-swap="outerHTML">'
                   f'{hl(rv.code, None, rv.filename, rv.numbers, cap=0)}</div>\n')
    if rv.after:
        out.append(f'<pre class="result-note">{escape(rv.after)}</pre>')
    out.append(f"{show_all_html(env, key, event_id, path, c, text)}\n</div>\n")
    return Markup("".join(out))


@pass_environment
def block_html(env: Environment, b, v, key: str, path: str, ev_id=None) -> Markup:
    """One canonical block. `v` is the EventView that holds it, `path` its address for "show all"."""
    eid = ev_id or v.ev.id
    kind = b.kind
    if kind == "text":
        if not b.text.strip():
            return Markup("")  # whitespace: nothing to read
        if b.markdown:
            return Markup(f"{prose_html(env, b.text, key, eid, path)}\n")
        if tools.diff_of(b.text):  # a patch: a diff per file
            return result_text_html(env, b.text, None, None, key, eid, path)
        return output_html(env, b.text, key, eid, path)
    if kind == "thinking":
        if b.redacted:
            kept = " (signature kept)" if b.signature else ""
            return Markup(f'<div class="thinking redacted">Thinking redacted by the provider{kept}</div>\n')
        if not b.text.strip():
            return Markup("")  # said once in the card's head: "thinking not recorded"
        return Markup(f'<details class="thinking"{" open" if v.target else ""}><summary>Thinking '
                      f'<span class="muted">· {words(b.text)} words</span></summary>'
                      f'{prose_html(env, b.text, key, eid, path)}</details>\n')
    if kind == "tool_use":
        cv = v.calls.get(b.id)
        return tool_call_html(env, cv, v, key, path) if cv else Markup("")
    if kind == "notice":  # (a hook's output, a system line: thousands in a long session)
        detail = "" if b.detail is None or isinstance(b.detail, str) else \
            f' <details class="detail"><summary>details</summary>{env.filters["pjson"](b.detail)}</details>'
        return Markup(f'  <div class="notice">{escape(b.text)}{detail}</div>\n')
    if kind == "tool_result" and b.tool_use_id not in v.again:
        # most results: shown with their call, here or in another card
        if b.tool_use_id in v.refs:
            return result_ref_html(env, v.refs[b.tool_use_id], key)
        if b.tool_use_id in v.calls:
            return Markup("")
    return _macros(env).other_block(b, v, key, path, ev_id)


@pass_environment
def result_ref_html(env: Environment, rc, key: str, oob: bool = False) -> Markup:
    """A result shown with its call elsewhere: one line that links to the call. On a first screen
    whose call is not read yet it says "resolving…"; when the index is done the page's stream
    replaces its content (`oob`, innerHTML: _result_ref.html; the element may be a span in a
    card's head, `_event`)."""
    swap = ' hx-swap-oob="innerHTML"' if oob else ""
    return Markup(f'<div class="result-ref" id="{escape(dom_id("rr-", rc.call.id))}"{swap}>'
                  f'{_result_ref_line(env, rc, key)}</div>')


def _result_ref_line(env: Environment, rc, key: str) -> Markup:
    if rc.resolving:
        return Markup('↳ result of a call further up <span class="state resolving" title="the call is '
                      'in the part of the file still being read">resolving…</span>')
    name = tool_label_html(rc.call.name, rc.fmt) if rc.call.name else "a call"
    return Markup(f'↳ result of <a href="{escape(env.globals["u"].message(key, rc.call_event))}">'
                  f'{name}</a> {state_html(rc.call.state)} <span class="muted">shown with the call</span>')


# the input views of a tool call's card the `tool_input` macro of _macros.html draws (rarer ones)
_MACRO_INPUTS = frozenset({"tasks", "questions", "comm"})


def tool_call_html(env: Environment, cv, v, key: str, path: str) -> Markup:
    """One tool call's card: its head (name, summary, state), its input as its view draws it, its
    result and the sub-agent threads it spawned. `v` / `path`: the event that holds it and the
    block's address in it, for "show all" links. The views a long session draws by the thousand (a
    command, a file read, an edit, a few fields) are drawn here, the rarer ones by the `tool_input`
    macro of _macros.html."""
    call, use = cv.call, cv.use
    inp = use.input if use else None
    view = tools.view_of(call.name, inp)
    out = [f'<div class="tool tool-{escape(view)}" id="{escape(dom_id("tc-", call.id))}" '
           f'data-call="{escape(call.id)}">\n  <div class="tool-head">\n    <span class="tool-name">'
           f'{tool_label_html(call.name, cv.fmt)}</span>\n    <span class="tool-summary">'
           f'{escape(tools.summary(call.name, inp))}</span>\n    <span class="spacer"></span>\n'
           f'{call_state_html(env, cv)}  </div>\n']
    progress = tools.progress_of(inp)
    raw = use.input_raw if use else None
    # no input box for a call without arguments (`{}`: a handoff, a tool taking none)
    if (view not in ("read", "undo") and inp is not None and inp != {} and inp != "") or progress \
            or raw:
        if view in _MACRO_INPUTS and not raw:
            out.append(_macros(env).tool_input(cv, v, key, path, inp, view, progress))
        else:
            out.append('  <div class="tool-input">\n')
            _tool_input(env, out, cv, v, key, path, inp, view, raw)
            if progress:
                out.append(f'<details class="task-progress"><summary>task progress</summary>'
                           f'{prose_html(env, progress, key, v.ev.id, path + ".i:task_progress")}'
                           f'</details>')
            out.append("  </div>\n")
    out.append(call_result_html(env, cv, key))
    out.append(call_thread_html(env, cv, key))
    out.append("</div>")
    return Markup("".join(out))


def _tool_input(env: Environment, out: list, cv, v, key: str, path: str, inp, view: str,
                raw) -> None:
    """The input of a tool call as its view draws it (`tool_call_html`), added to `out`."""
    eid = v.ev.id
    if raw:
        out.append(f'    <div class="warn">arguments are not valid JSON; shown as written</div>'
                   f'{output_html(env, raw, key, eid, path + ".i:raw")}\n')
    elif view == "shell":
        out.append(f'    <pre class="cmd"><span class="prompt">$ </span>{escape(tools.command_of(inp))}'
                   f'</pre>\n')
        if isinstance(inp.get("description"), str):
            out.append(f'<div class="cmd-desc">{escape(inp["description"])}</div>')
    elif view == "edit":
        out += [diff_html(e, inp) for e in tools.edits(inp, cv.result.structured if cv.result else None)]
    elif view == "write":
        content, file = tools.content_of(inp), tools.path_of(inp)
        out.append(f'    <details class="file-content"{" open" if len(content) < 1500 else ""}><summary>'
                   f'<code>{escape(file or "file")}</code> <span class="muted">· '
                   f'{escape(plural(len(content.splitlines()), "line"))}</span></summary>'
                   f'{output_html(env, content, key, eid, f"{path}.i:{tools.key_of(inp, content)}", filename=file)}'
                   f'</details>\n')
    elif view == "todos":
        box = tools.TODO_BOX
        out.append('    <ul class="todos">')
        out += [f'<li class="todo {escape(status)}"><span class="box">{escape(box[status])}</span> '
                f'{escape(text)}</li>' for status, text in tools.todo_items(inp)]
        out.append("</ul>\n")
    elif view == "agent":
        said = f": {escape(inp['description'])}" if inp.get("description") else ""
        out.append(f'    <details class="agent-prompt"><summary>{escape(inp.get("subagent_type") or "agent")}'
                   f'{said} <span class="muted">· prompt</span></summary>'
                   f'{prose_html(env, inp["prompt"], key, eid, path + ".i:prompt")}</details>\n')
    elif view == "plan":
        plan = tools.prose_input(inp)
        out.append(f'    <div class="plan">'
                   f'{prose_html(env, plan, key, eid, f"{path}.i:{tools.key_of(inp, plan)}")}</div>\n')
        asks, plan_file = tools.plan_asks(inp)
        if asks:
            out.append('    <div class="plan-asks"><span class="muted">with it, permission to:</span><ul>'
                       + "".join(f"<li>{escape(a)}</li>" for a in asks) + "</ul></div>\n")
        if plan_file:
            out.append(f'    <div class="muted">plan file {escape(plan_file)}</div>\n')
    elif view in ("read", "undo"):
        pass  # the header's summary names the file (and the lines)
    elif view in ("kv", "fields"):
        side = tools.SIDE_FIELDS
        out.append('    <dl class="kv">')
        out += [f"<div><dt>{escape(k)}</dt><dd>{escape(val if isinstance(val, str) else json_text(val))}"
                f"</dd></div>" for k, val in inp.items()
                if k not in side and (view == "kv" or tools.is_short(val))]
        out.append("</dl>\n")
        if view == "fields":  # a script or a long text as written
            out += [f'<div class="field-text"><div class="field-name">{escape(k)}</div>'
                    f'{output_html(env, val, key, eid, f"{path}.i:{k}")}</div>'
                    for k, val in inp.items() if k not in side and not tools.is_short(val)]
    elif isinstance(inp, str):  # free-form input (an OpenAI custom tool's): the text as written
        out.append(f"    {output_html(env, inp, key, eid, path)}\n")
    elif inp is not None and inp != {}:
        j = json_text(inp)
        if len(j) > 600:
            out.append(f'<details class="json-input"><summary>input <span class="muted">· {len(j)} '
                       f'characters</span></summary>')
        out.append(output_html(env, j, key, eid, path) if len(j) > env.globals["TEXT_CAP"]
                   else env.filters["pjson"](inp))
        if len(j) > 600:
            out.append("</details>")


def call_thread_html(env: Environment, cv, key: str) -> Markup:
    """The sub-agent threads a tool call spawned, in its card (the `call_thread` macro of
    _macros.html, which draws them; here only the empty box of a call that spawned none)."""
    if cv.threads:
        return _macros(env).call_thread(cv, key)
    return Markup(f'<div class="call-thread" id="{escape(dom_id("tc-", cv.call.id))}-thread">\n</div>')


_DIFF_ROW = {"-": "d del", "+": "d add", "…": "d skip"}  # a diff line's op → its row's class


def diff_html(e, inp, against_first: bool = False) -> Markup:
    """One replacement of an edit call (a tools.EditPart) as a line diff, its file named above it
    (the call's input `inp` names it when the part does not); `against_first`: a result written
    again, against the first, which names no file."""
    out = ['<div class="diff">']
    if not against_first:
        out.append(f'<div class="diff-file"><code>{escape(e.path or tools.path_of(inp) or "")}</code>')
        if e.action:
            out.append(f' <span class="muted">({escape(e.action)})</span>')
        if e.replace_all:
            out.append(' <span class="muted">(all occurrences)</span>')
        out.append("</div>")
    if e.old or e.new or not e.action:
        out.append('<table class="diff-lines">\n')
        rows = render.diff(e.old, e.new, e.old_start, e.new_start)
        for d in rows:
            code = "".join(f"<mark>{escape(text)}</mark>" if changed else escape(text)
                           for text, changed in d.parts)
            out.append(f'<tr class="{_DIFF_ROW.get(d.op, "d")}"><td class="no">{d.old_no or ""}</td>'
                       f'<td class="no">{d.new_no or ""}</td><td class="op">{escape(d.op)}</td>'
                       f'<td class="code">{code}</td></tr>\n')
        if not rows:
            out.append('<tr><td colspan="4" class="muted">no change</td></tr>\n')
        out.append("</table>")
    out.append("</div>")
    return Markup("".join(out))


_OOB = ' hx-swap-oob="true"'


@pass_environment
def call_state_html(env: Environment, cv, oob: bool = False) -> Markup:
    """The state badge and duration in a tool call's head (alone, out of band: _call_state.html)."""
    call = cv.call
    out = [f'<span class="call-state" id="{escape(dom_id("tc-", call.id))}-state"'
           f'{_OOB if oob else ""}>\n']
    if call.orphan:
        out.append('<span class="state orphan">result only</span>\n')
    elif cv.resolving and call.state == "pending":
        out.append('<span class="state resolving" title="its result is in the part of the file still '
                   'being indexed">resolving…</span>\n')
    elif call.state == "pending" and cv.unanswered:
        out.append('<span class="state unanswered" title="no result was ever recorded for this call">'
                   'never answered</span>\n')
    elif call.state == "executing" and cv.unanswered and not call.named:
        out.append('<span class="state unanswered" title="it was running when the session ended (or '
                   'went on without it): the tool never returned, no result was ever recorded">never '
                   'answered</span>\n')
    else:
        out.append(state_html(call.state))
    if cv.duration:
        out.append(f'<span class="dur" title="from the call to its result">{escape(cv.duration)}</span>')
    out.append("</span>")
    return Markup("".join(out))


_ENDED_QUIETLY = frozenset({"background", "finished_unreported", "failed_unreported", "stopped_unreported"})
# what a call's result box says when it holds no result, by the call's named state
_NO_RESULT = {"denied": "Denied by the user: the tool did not run.",
              "interrupted": "Interrupted before it returned a result.",
              "cancelled": "Cancelled before it ran."}


@pass_environment
def call_result_html(env: Environment, cv, key: str, oob: bool = False) -> Markup:
    """A tool call's result, in its card (alone, out of band: _call_result.html). An exported file
    has no "show all": a long result is whole there, folded behind its size."""
    call = cv.call
    css = " is-error" if call.state == "error" else \
        (" ended" if call.named and call.named not in _ENDED_QUIETLY else "")
    out = [f'<div class="tool-result{css}{" target" if cv.target else ""}" '
           f'id="{escape(dom_id("tc-", call.id))}-result"{_OOB if oob else ""}'
           + (f' data-result-event="{escape(cv.result_event)}"' if cv.result_event else "") + ">\n"]
    r = cv.result
    if r:
        if r.content:
            fold = env.globals["exporting"] and result_fold(r.content)
            if r.state == "user_words" and call.named == "denied":
                out.append('<div class="notice">the user refused it and said:</div>\n')
            elif r.state == "hook_words" and call.named == "blocked_by_hook":
                out.append('<div class="notice">a PreToolUse hook blocked the call and said:</div>')
            if fold:
                out.append(f'<details class="result-fold"><summary>'
                           f'{"Error output" if call.is_error else "Output"} · {escape(fold)}</summary>')
            inp = cv.use.input if cv.use else None
            for i, c in enumerate(r.content):
                cpath = f"{cv.result_path}.c{i}"
                if c.kind != "text":
                    out.append(block_html(env, c, cv.result_owner, key, cpath, cv.result_event))
                elif c.text.strip():
                    out.append(result_text_html(env, c.text, call.name, inp, key, cv.result_event,
                                                cpath, error=call.is_error))
            if fold:
                out.append("</details>")
        else:
            out.append('<div class="muted">(empty result)</div>')
    elif call.named in _NO_RESULT:
        out.append(f'<div class="muted">{_NO_RESULT[call.named]}</div>\n')
    elif call.named == "awaiting_permission":
        out.append('<div class="muted">No answer recorded: the session moved on or ended while this '
                   "call waited for the user's permission.</div>\n" if cv.unanswered else
                   '<div class="muted waiting">waiting for the user\'s permission…</div>\n')
    elif cv.resolving:
        out.append('<div class="muted waiting">Result further down — resolving…</div>\n')
    elif call.status == "error":
        out.append('<div class="muted">failed without output</div>\n')
    elif call.status == "completed":
        out.append('<div class="muted">Answered, but its output is not in this file: it went to the '
                   'model with the next request.</div>\n' if call.result else
                   '<div class="muted">completed without output</div>\n')
    elif cv.unanswered:
        still = " (it was still running)" if call.status == "executing" else ""
        out.append(f'<div class="muted">No result: the session moved on or ended without one{still}.</div>\n')
    else:
        out.append('<div class="muted waiting">'
                   f'{"running…" if call.status == "executing" else "waiting for the result…"}</div>\n')
    out.append("</div>")
    return Markup("".join(out))


def call_questions(inp, result) -> list:
    """An AskUserQuestion call's questions with the answers its result holds (tools.questions)."""
    if result is None:
        return tools.questions(inp)
    said = next((b.text for b in result.content if getattr(b, "kind", "") == "text"), "")
    return tools.questions(inp, result.structured, said)


def configure(env: Environment, urls, *, caps: tuple[int, int] | None = None,
              media_limit: int = INLINE_MEDIA, exporting: bool = False,
              highlight_cap: int = render.HIGHLIGHT_CAP) -> Environment:
    """Give `env` the filters and globals the templates use. `caps` = (Markdown, plain text)
    characters shown before "show all"; `urls` is the URL builder templates reach as `u`;
    code longer than `highlight_cap` is shown plain."""
    markdown_cap, text_cap = caps or (render.MARKDOWN_CAP, render.TEXT_CAP)
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.filters.update(
        md=render.markdown,
        hl=partial(render.highlight, cap=highlight_cap),
        pjson=partial(render.pretty_json, cap=highlight_cap),
        json_pretty=partial(render.pretty_json_text, cap=highlight_cap),
        first_key=tools.key_of,
        jtext=json_text,
        ansi=render.ansi_html,
        has_ansi=render.has_ansi,
        cut=render.cut,
        size=render.human_size,
        span=timestamps.span,
        plural=plural,
        tool_axis=tools.short_label,
        usd=usage.usd,
        count=usage.count,
    )
    env.globals.update(
        u=urls,
        exporting=exporting,
        dom_id=dom_id,
        render_event=render_event,
        diff=render.diff,
        media_inline=inline_media(media_limit, playable=exporting),
        media_limit=media_limit,
        safe_image=safe_image,
        media_class=media_class,
        tool_view=tools.view_of,
        tool_short=tools.is_short,
        tool_summary=tools.summary,
        tool_path=tools.path_of,
        tool_command=tools.command_of,
        tool_content=tools.content_of,
        tool_edits=tools.edits,
        tool_prose=tools.prose_input,
        tool_progress=tools.progress_of,
        tool_side_fields=tools.SIDE_FIELDS,
        todo_items=tools.todo_items,
        todo_box=tools.TODO_BOX,
        tool_tasks=tools.new_tasks,
        call_questions=call_questions,
        from_epoch=timestamps.from_epoch,
        lane_of=lane_of,
        state_html=state_html,
        time_html=time_html,
        tool_label_html=tool_label_html,
        event_html=event_html,
        output_html=output_html,
        prose_html=prose_html,
        result_text_html=result_text_html,
        block_html=block_html,
        diff_html=diff_html,
        call_state_html=call_state_html,
        call_result_html=call_result_html,
        result_ref_html=result_ref_html,
        role_class=role_class,
        MARKDOWN_CAP=markdown_cap,
        SORTS=catalog.SORTS,
        TEXT_CAP=text_cap,
    )
    return env


def environment(urls, **options) -> Environment:
    """A Jinja environment over the templates folder, for rendering outside a web request."""
    env = _Fixed(loader=FileSystemLoader(str(resource_dir("templates"))),
                 autoescape=select_autoescape(["html", "xml"], default=True),
                 auto_reload=False)
    return configure(env, urls, **options)


class FlatGlobals:
    """For an environment whose globals are all set before its first template loads (`configure`).

    Jinja gives each template a ChainMap over the environment's globals, and every render of
    `_message.html` copies it into the new context key by key and compares its keys with the
    imported `_macros.html` module's: about a tenth of exporting a session's events, or of drawing
    a live event. A plain dict holding the same names is copied and compared in C."""

    def make_globals(self, d):
        return {**self.globals, **(d or {})}


class _Fixed(FlatGlobals, Environment):
    pass
