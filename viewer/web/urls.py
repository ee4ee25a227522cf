"""Every URL the app links to, built in one place (templates call these through `u`)."""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote, urlencode

from flask import request, url_for


class Urls:
    @staticmethod
    def sessions(**args) -> str:
        """The list; `args` are a list query's arguments (`ListQuery.args()`)."""
        return _url("pages.sessions", **_given(args))

    @staticmethod
    def sessions_json(**args) -> str:
        return _url("pages.sessions_json", **_given(args))

    @staticmethod
    def archive_search(q: str | None = None, **args) -> str:
        """Full-text search across every session; `args` narrow it like the list's filters."""
        return _url("pages.archive_search", q=q, **_given(args))

    @staticmethod
    def archive_search_json(q: str | None = None, **args) -> str:
        return _url("pages.archive_search_json", q=q, **_given(args))

    @staticmethod
    def hit(key: str, event_id: str, q: str | None = None) -> str:
        """A search hit: the session opened at the event, the words searched for marked."""
        return _url("pages.message", key=key, event_id=event_id, **_given({"q": q}))

    @staticmethod
    def stats(**args) -> str:
        return _url("pages.stats", **_given(args))

    @staticmethod
    def usage(key: str) -> str:
        return _url("pages.usage", key=key)

    @staticmethod
    def charts(key: str) -> str:
        return _url("pages.charts", key=key)

    @staticmethod
    def session(key: str, **args) -> str:
        return _url("pages.session", key=key, **_given(args))

    @staticmethod
    def session_json(key: str) -> str:
        return _url("pages.session_json", key=key)

    @staticmethod
    def message(key: str, event_id: str, **args) -> str:
        if args:
            return _url("pages.message", key=key, event_id=event_id, **_given(args))
        return _per_event("pages.message", key, event_id)

    @staticmethod
    def message_prefix(key: str) -> str:
        """A permalink without its event id (scripts append one)."""
        return _url("pages.message", key=key, event_id="x")[:-1]

    @staticmethod
    def window(key: str, thread: str = "main", /, **args) -> str:
        # `thread` is the path's; a filtered window's own `thread` filter (?thread=…) comes in
        # `args` (the template passes win.args) and goes in the query
        args = _given(args)
        if "thread" not in args:
            return _url("pages.window", key=key, thread=thread, **args)
        return _url("pages.window", key=key, thread=thread) + "?" + urlencode(args, doseq=True)

    @staticmethod
    def thread(key: str, thread: str) -> str:
        return _url("pages.thread", key=key, thread=thread)

    @staticmethod
    def spawned_by(key: str, thread: str) -> str:
        """The call of session `key` that spawned its thread `thread` (a redirect to its event)."""
        return _url("pages.spawned_by", key=key, thread=thread)

    @staticmethod
    def raw(key: str, event_id: str, download: bool = False) -> str:
        if download:
            return _url("pages.raw", key=key, event_id=event_id, download=1)
        return _per_event("pages.raw", key, event_id)

    @staticmethod
    def full(key: str, event_id: str, path: str, raw: bool = False, **args) -> str:
        return _url("pages.full", key=key, event_id=event_id, path=path, raw=1 if raw else None,
                       **_given(args))

    @staticmethod
    def media(key: str, event_id: str, path: str) -> str:
        return _url("pages.media", key=key, event_id=event_id, path=path)

    @staticmethod
    def export(key: str, fmt: str | None = None, **args) -> str:
        return _url("pages.export", key=key, format=fmt,
                       **{k: v for k, v in args.items() if v is not None})

    @staticmethod
    def events(key: str, after: str | None = None, early: str | None = None,
               target: str | None = None, shows: str | None = None,
               search: dict | None = None) -> str:
        """A session's stream; a first screen's (`early`) with the lines it shows, its target and
        its search (`search`: the query's arguments, so the cards its completion draws again carry
        their matches marked)."""
        return _url("live.session_events", key=key, after=after, early=early,
                    target=target if early else None, shows=shows if early else None,
                    **(_given(search or {}) if early else {}))

    @staticmethod
    def early_window(key: str, early: str, shows: str | None, search: dict | None = None) -> str:
        """The updates that complete a window drawn before the index (web/early.py)."""
        return _url("live.early_window", key=key, early=early, shows=shows, **_given(search or {}))

    @staticmethod
    def list_events(**args) -> str:
        """The list's stream: a list query's arguments (`ListQuery.args()`), `v`, the indexer's
        version the page was drawn at, and `scan`, the discovery pass its rows are from."""
        return _url("live.list_events", **_given(args))

    # --- finding: search, steps, outline, minimap, filters ---

    @staticmethod
    def search_json(key: str, **args) -> str:
        return _url("find.search_json", key=key, **_given(args))

    @staticmethod
    def search_stream(key: str) -> str:
        return _url("find.search_stream", key=key)

    @staticmethod
    def step(key: str) -> str:
        return _url("find.step", key=key)

    @staticmethod
    def outline(key: str) -> str:
        return _url("find.outline_view", key=key)

    @staticmethod
    def minimap(key: str) -> str:
        return _url("find.minimap", key=key)

    @staticmethod
    def filters(key: str, **args) -> str:
        return _url("find.filter_menu", key=key, **_given(args))

    @staticmethod
    def static(name: str) -> str:
        return _url("static", filename=name)


_MARK = "\x00"  # in no event id: where the id goes in a URL built once per session
_SEGMENT_SAFE = "!$&'()*+,/:;=@"  # what Werkzeug's path converters leave unquoted (to_url)


def _per_event(endpoint: str, key: str, event_id: str) -> str:
    """A URL with an event id in its path: every event of every page has a few, and building each
    through url_for costs more than rendering the rest of the event. The URL is built once per
    session with a mark where the id goes; the id is quoted as Werkzeug quotes it (tested)."""
    head, tail = _around(endpoint, key, request.script_root)
    return head + quote(event_id, safe=_SEGMENT_SAFE) + tail


@lru_cache(maxsize=512)
def _around(endpoint: str, key: str, root: str) -> tuple[str, str]:
    head, _, tail = url_for(endpoint, key=key, event_id=_MARK).partition(quote(_MARK))
    return head, tail


def _url(endpoint: str, **args) -> str:
    """url_for, remembered: a page links to the same few dozen URLs every time it is drawn (its
    session's, the static files'), and Werkzeug's building of each cost a tenth of drawing a page
    again. A URL depends only on its endpoint, its arguments and where the app is mounted."""
    try:  # (each value's type too: 1 and True are equal keys, and differ in a URL)
        return _built(endpoint, tuple((k, type(v), v) for k, v in args.items()), request.script_root)
    except TypeError:  # an argument that is a list (several formats): built each time
        return url_for(endpoint, **args)


@lru_cache(maxsize=4096)
def _built(endpoint: str, args: tuple, root: str) -> str:
    return url_for(endpoint, **{k: v for k, _, v in args})


def _given(args: dict) -> dict:
    """URL arguments without the unset ones (None, empty strings, empty lists)."""
    return {k: v for k, v in args.items() if v is not None and v != "" and v != []}
