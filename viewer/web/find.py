"""Finding things in a session, on the web: search (page, stream, JSON), filtered windows, next /
previous error, the outline, the minimap and the filter menu — a thin adapter over `viewer.search`,
`viewer.filters`, `viewer.order` and `viewer.outline`.

The search a page was opened with (`?q=`) lives on `flask.g` as a `Marker` while the page renders,
so every event drawn (page, window fragment, "show all") gets its matches marked the same way.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field

import orjson
from flask import Blueprint, Response, abort, g, render_template, request, stream_with_context

from .. import files, filters, outline
from ..filters import Filter, FilterError
from ..index import SessionIndex
from ..marks import Marker, mark_html
from ..order import reading_order
from ..search import Matcher, Query, QueryError, QuickScan, Scan
from ..text import expander
from ..timeline import WINDOW, Timeline, WindowView, load_event
from .urls import Urls

bp = Blueprint("find", __name__)

PAGE_BUDGET, PAGE_HITS = 0.5, 100  # the hits a page carries itself (JavaScript streams the rest)
STREAM_BUDGET, STREAM_HITS = 30.0, 2000  # one streamed search
JSON_BUDGET, JSON_HITS, JSON_MAX_HITS = 10.0, 1000, 10_000


@dataclass
class Find:
    """What a session page was asked to find and show: a search, a filter, and their errors."""

    query: Query | None = None
    matcher: Matcher | None = None
    error: str = ""
    filter: Filter = field(default_factory=Filter)
    filter_error: str = ""
    cursor: str | None = None
    scan: Scan | None = None
    reading: bool = False  # a first screen's search: what it shows is not all (routes._early_search)
    listed: bool = True  # … whose region's hits are listed (they are the session's first ones)
    seek: bool = False  # … drawn where the session opens: the first hit is gone to once found

    @property
    def args(self) -> dict:
        """The search as URL arguments (for links that must keep it)."""
        return self.query.args() if self.query else {}

    def hits(self, idx: SessionIndex):
        """The hits the page itself shows (a short scan; the page's script streams the rest)."""
        if self.matcher is None:
            return iter(())
        self.scan = Scan(idx, self.matcher, cursor=self.cursor, budget=PAGE_BUDGET, limit=PAGE_HITS)
        return self._so_far(self.scan, self.listed) if self.reading else iter(self.scan)

    @staticmethod
    def _so_far(scan: Scan, listed: bool):
        """The hits of a first screen's region: the first of the session's, not all of them (the
        page's script searches the whole session again once its index is done); none when the
        region is not where the first ones are."""
        if listed:
            yield from scan
        scan.complete, scan.next, scan.stopped = False, None, "reading"


def find_context(idx: SessionIndex, target: str | None = None) -> Find:
    """Read the search and filter of this request; a search marks what the page draws."""
    f = Find(cursor=request.args.get("cont"))
    try:
        f.filter = Filter.from_args(request.args)
    except FilterError as e:
        f.filter_error = str(e)
    f.query = Query.from_args(request.args)
    if f.query is not None:
        try:
            f.matcher = Matcher(f.query)
        except QueryError as e:
            f.error = str(e)
        else:
            g.marker = Marker(f.matcher, target)
    return f


def window(idx: SessionIndex, flt: Filter, where: dict, target: str | None = None,
           thread: str = "main", timeline: Timeline | None = None) -> WindowView:
    """The window a page or fragment shows: of the whole thread, or of a filtered view."""
    tl = timeline or Timeline(idx, target=target)
    target = tl.target
    if not flt or thread != "main":
        return tl.window(thread, **where)
    picked = filters.select(idx, flt)
    if target is not None and "around" not in where and (at := idx.locate(target)) in picked:
        where = {"around": picked.index(at)}
    start, stop = filters.bounds(len(picked), size=WINDOW, **where)
    return WindowView("main", start, stop, len(picked), tl.picked(picked[start:stop]),
                      args=flt.args())


def look_deeper(idx: SessionIndex, event_id: str) -> None:
    """Let the marker know which cut strings of the target event hold a match past their preview."""
    marker = g.get("marker")
    where = idx.locate(event_id)
    if marker is None or where is None:
        return
    ev = load_event(idx, event_id)
    if ev is not None:
        with files.confined(idx.confinement), files.open_file(idx.threads[where[0]].path) as f:
            marker.look_deeper(ev, expander(f))


def _session(key: str):
    from .routes import _session

    return _session(key)


def _ref(key: str):
    from .routes import _ref

    return _ref(key)


def _scan(ref, matcher: Matcher, limit: int, budget: float):
    """(index, scan) for a search request. A session with no index yet (a cold start of a
    big one) is searched without waiting for its index when `QuickScan` can answer exactly — its
    background build starts all the same; otherwise the request waits for the index."""
    from .routes import _index, store

    cursor = request.args.get("cursor")
    idx = _index(ref, wait=False)
    if idx is None and not cursor and not store().redact:
        store().page_begins()  # a background pass under way steps aside meanwhile
        try:
            quick = QuickScan(ref.path, matcher, confinement=store().confinement, limit=limit).run()
        finally:
            store().page_ends()
        if quick.ok:
            store().build(ref.key)
            return quick.idx, quick
    if idx is None:
        idx = _index(ref)
    return idx, Scan(idx, matcher, cursor=cursor, budget=budget, limit=limit)


def _json(obj, status: int = 200) -> Response:
    return Response(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS, default=str), status=status,
                    mimetype="application/json")


def _query_or_error() -> tuple[Query, Matcher] | Response:
    """The request's search, or the JSON 400 that says what is wrong with it."""
    query = Query.from_args(request.args)
    if query is None:
        return _json({"error": "Give a search: ?q=…"}, 400)
    try:
        return query, Matcher(query)
    except QueryError as e:
        return _json({"query": query.text, "error": str(e)}, 400)


def _budget(name: str, default: float, most: float) -> float:
    try:
        return min(most, max(0.05, float(request.args.get(name, default))))
    except ValueError:
        return default


# --- search --------------------------------------------------------------------------------------


@bp.get("/s/<key>/search.json")
def search_json(key: str):
    """Every hit in file (reading) order: {query, total, complete, hits: [{id, thread, role,
    snippet, …}]}; `complete` is false when the hit limit or the time budget stopped the scan,
    and `next` then resumes it (`&cursor=`)."""
    ref = _ref(key)
    asked = _query_or_error()
    if isinstance(asked, Response):
        return asked
    query, matcher = asked
    try:
        limit = min(JSON_MAX_HITS, max(1, int(request.args.get("limit", JSON_HITS))))
    except ValueError:
        limit = JSON_HITS
    idx, scan = _scan(ref, matcher, limit, _budget("budget", JSON_BUDGET, 60.0))
    hits = [h.as_dict() for h in scan]
    return _json({"query": query.text, "regex": query.regex, "case": query.case,
                  "total": len(hits), "matches": scan.matches, "complete": scan.complete,
                  "next": scan.next, "stopped": scan.stopped, "timeouts": matcher.timeouts,
                  "hits": hits})


@bp.get("/s/<key>/search")
def search_stream(key: str):
    """The hits as they are found, for the page's script: one JSON object per line, each hit with
    its rendered list item, and a last line saying how the scan ended."""
    ref = _ref(key)
    asked = _query_or_error()
    if isinstance(asked, Response):
        return asked
    query, matcher = asked
    idx, scan = _scan(ref, matcher, STREAM_HITS, STREAM_BUDGET)
    args = query.args()

    def lines():
        sent, told = 0.0, time.monotonic()  # the first hit goes out at once, later ones every 50 ms
        batch = []
        # until the first hit is on its way the reader waits for it, as for a page: background
        # passes (an index being built, the full-text index catching up) step aside meanwhile
        from .routes import store

        answering = store()
        answering.page_begins()
        waiting = True

        def first_sent():
            nonlocal waiting
            if waiting:
                waiting = False
                answering.page_ends()

        try:
            for step in scan.steps():
                if step is not None:
                    html = render_template("_hit.html", h=step, key=key, idx=idx, qargs=args)
                    batch.append(orjson.dumps({"hit": step.as_dict(), "html": html}))
                now = time.monotonic()
                if batch and (now - sent > 0.05 or len(batch) >= 200):
                    first_sent()
                    yield b"\n".join(batch) + b"\n"
                    batch, sent = [], now
                elif step is None and now - told > 0.25:  # a long scan says how far it got
                    yield orjson.dumps({"progress": round(scan.progress, 3)}) + b"\n"
                    told = now
        finally:
            first_sent()
        if batch:
            yield b"\n".join(batch) + b"\n"
        # where the list stopped, said with a link that searches on (the page's script takes it;
        # without one, the only way on was pressing n past the last match)
        more = Urls.session(key, cont=scan.next, **args) if scan.next and not scan.complete else None
        status = render_template("_find_status.html", scan=scan, matcher=matcher, key=key,
                                 qargs=args, more_url=more)
        yield orjson.dumps({"done": {"hits": scan.hits, "matches": scan.matches,
                                     "complete": scan.complete, "next": scan.next,
                                     "stopped": scan.stopped, "timeouts": matcher.timeouts},
                            "html": status}) + b"\n"

    return Response(stream_with_context(lines()), mimetype="application/x-ndjson",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


# --- stepping: next / previous error, turn -------------------------------------------------------


@bp.get("/s/<key>/step")
def step(key: str):
    """The next (or previous) error after event `from`, in reading order:
    {"id", "url", "index", "total"}, or {"id": null} past the last one. With a filter's arguments
    (`?tool=Bash`), the errors of that filtered view only: its reader steps through the failed
    Bash calls, not out of the view to a failed Grep."""
    ref, idx = _session(key)
    if request.args.get("to", "error") != "error":
        abort(400, description="“to” must be error.")
    items = filters.select(idx, Filter(only=("errors",)))
    try:
        view = Filter.from_args(request.args)
    except FilterError as e:
        abort(400, description=str(e))
    if view:
        shown = set(filters.select(idx, view))
        items = [w for w in items if w in shown]
    back = request.args.get("dir") == "prev"
    order = reading_order(idx)
    ranks = [order.rank(*w) for w in items]
    here = idx.locate(request.args.get("from") or "")
    if here is None:
        i = len(items) - 1 if back else 0
    else:
        r = order.rank(*here)
        i = bisect.bisect_left(ranks, r) - 1 if back else bisect.bisect_right(ranks, r)
    if not 0 <= i < len(items):
        return _json({"id": None, "total": len(items)})
    thread, seq = items[i]
    eid = idx.threads[thread].ids[seq]
    return _json({"id": eid, "url": Urls.message(key, eid), "index": i, "total": len(items),
                  "thread": thread})


# --- the outline, the minimap, the filter menu -----------------------------------------------------


@bp.get("/s/<key>/outline")
def outline_view(key: str):
    ref, idx = _session(key)
    turns = outline.turns(idx)
    if request.headers.get("HX-Request") == "true":
        return render_template("_outline.html", turns=turns, key=key, idx=idx)
    return render_template("outline.html", turns=turns, key=key, idx=idx, ref=ref)


@bp.get("/s/<key>/outline.json")
def outline_json(key: str):
    ref, idx = _session(key)
    return _json({"key": key, "turns": [
        {"number": t.number, "id": t.id, "prompt": t.text, "started": t.started,
         "duration": t.duration, "events": t.events, "tool_calls": t.tool_calls,
         "errors": t.errors, "subagents": t.subagents} for t in outline.turns(idx)]})


@bp.get("/s/<key>/minimap")
def minimap(key: str):
    ref, idx = _session(key)
    return render_template("_minimap.html", marks=outline.marks(idx), key=key)


@bp.get("/s/<key>/filters")
def filter_menu(key: str):
    ref, idx = _session(key)
    try:
        flt = Filter.from_args(request.args)
    except FilterError as e:
        abort(400, description=str(e))
    ctx = dict(counts=filters.counts(idx), flt=flt, key=key, idx=idx, kinds=filters.KINDS,
               states=filters.STATES)
    if request.headers.get("HX-Request") == "true":
        return render_template("_filters.html", **ctx)
    return render_template("filters.html", ref=ref, **ctx)


def mark_fragment(html: str) -> str:
    """A fragment ("show all") with the page's search marked in it."""
    marker = g.get("marker")
    return mark_html(html, marker.matcher, deadline=marker.deadline)[0] if marker else html
