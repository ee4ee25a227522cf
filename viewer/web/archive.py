"""Pages about many sessions at once: the list (filters, sorts, groups, pages), the archive's
stats, and a session's usage panel and chart data. A thin adapter over `viewer.catalog` and
`viewer.usage`; every page has a `.json` twin taking the same arguments."""

from __future__ import annotations

import time

from flask import Response, abort, current_app, make_response, render_template, request

from .. import catalog, usage
from ..catalog import BadQuery, ListQuery
from ..formats.detect import NotTranscript
from ..index import summary_dump
from .live import LIVE_WINDOW
from . import urls
from .routes import _json, _json_bytes, _session, bp, htmx, store


def list_query() -> ListQuery:
    try:
        return ListQuery.from_args(request.args)
    except BadQuery as e:
        abort(400, description=str(e))


LIST_INLINE = 256 << 10  # bytes of sessions without a summary a list page indexes before it answers
JSON_WAIT = 30.0  # seconds sessions.json waits at most for the sessions it lists to be indexed


def _rows() -> list[catalog.Row]:
    """Every session with the summary memory or the cache knows (None: not indexed yet; the last
    summary while a changed file is indexed again); files found not to be transcripts are left out
    (the store lists them as skipped)."""
    return _listing()[0]


def _listing() -> tuple[list[catalog.Row], int]:
    """(`_rows()`, the discovery pass they are from: `Store.listing`)."""
    st = store()
    refs, scan = st.listing()
    known = st.summaries(refs, stale=True)
    return [r for r in catalog.rows_of(refs, known, live_window=LIVE_WINDOW)
            if not isinstance(r.summary, NotTranscript)], scan


def _summaries(shown: list) -> tuple[int, dict]:
    """(the indexer's version, summaries of a page of rows). Small sessions without a summary are
    indexed here; the others are handed to the background indexer before any other session, and
    show what the file system says until it reaches them (the list's stream fills them in)."""
    st = store()
    version = st.indexer.version
    summaries = st.summaries(shown, inline=LIST_INLINE, stale=True)
    pending = [r.key for r in shown if summaries.get(r.key) is None]
    if pending:
        st.indexer.want(pending)
    return version, summaries


def indexing(st) -> dict | None:
    """How far the background indexer is, while it works through the served sessions."""
    ix = st.indexer
    if not ix.busy or not ix.total or ix.done >= ix.total:
        return None
    return {"done": ix.done, "total": ix.total}


def search_indexing(st) -> dict | None:
    """How far the full-text index is ({"done", "total", "complete"}), while it is behind."""
    fts = current_app.extensions["viewer"].fts
    if fts is None:
        return None
    # a file that cannot be read never gets rows: waiting for it would keep the note up for good
    refs = [r for r in st.sessions() if not isinstance(st.summary_of(r.key, stale=True), OSError)]
    progress = fts.coverage(refs)
    return None if progress["complete"] else progress


def list_page(q: ListQuery) -> tuple[int, catalog.Page, int]:
    """(the indexer's version, one page of the list, the discovery pass its rows are from: the
    list's stream adds the sessions found after it). A session with no summary yet is listed by
    its file; on a page in file-time order it is indexed before the page answers when small, else
    the background indexer is asked for it first."""
    version = store().indexer.version
    rows, scan = _listing()
    page = catalog.run(rows, q)
    missing = [r.ref for r in page.rows if r.summary is None]
    if missing:
        version, built = _summaries(missing)
        for r in page.rows:
            if r.summary is None:
                r.summary = built.get(r.ref.key)
        page.rows = [r for r in page.rows if not isinstance(r.summary, NotTranscript)]
    return version, page, scan


@bp.get("/")
def sessions():
    """The list. Drawn once for everyone who asks for it while nothing it shows changes (a team's
    tabs and dashboards reload it): its key is what the rows show, see `_list_key`."""
    q = list_query()
    st = store()
    progress = indexing(st), search_indexing(st)

    def draw():
        version, page, scan = list_page(q)
        html = render_template("sessions.html", p=page, q=q, roots=st.roots, now=time.time(),
                               live_window=LIVE_WINDOW, sorts=catalog.SORTS, version=version, scan=scan,
                               indexing=progress[0], search_indexing=progress[1],
                               skipped=sorted(st.skipped.items()))
        if page.pending or any(r.summary is None for r in page.rows):
            # rows the indexer has yet to fill in (and the summaries this page read from the cache
            # on its way, which no version counts): this page is its request's own
            return make_response(html)
        return html

    key = ("list", request.full_path, htmx(), *_list_key(st),
           *(d and tuple(d.items()) for d in progress))
    return current_app.extensions["viewer"].pages.page(key, draw)


def _list_key(st) -> tuple:
    """What the list's rows are drawn from, as a key: the sessions discovered (the scan), each
    one's file time and size (a write changes them in place), and the indexer's version, which
    moves whenever a session's summary becomes known or changes. (The clock — how long ago, live or
    not — is the page cache's second.)"""
    version = st.indexer.version  # first: a page drawn after its key was taken is newer, never older
    refs = st.sessions()
    return version, st.scanned, tuple((r.key, r.mtime, r.size) for r in refs)


@bp.get("/sessions.json")
def sessions_json():
    """The list as data. Unlike the page, it waits (up to `?wait=` seconds, 30 by default) for the
    background indexer to reach the sessions it lists: a script wants whole rows. Drawn once for
    everyone who asks for it while its rows stay the same, as the page is (a list with rows still
    to index is its request's own, and only it waits)."""
    q = list_query()
    try:
        wait = min(max(float(request.args.get("wait", JSON_WAIT)), 0.0), JSON_WAIT)
    except ValueError:
        abort(400, description="“wait” must be a number of seconds.")
    st = store()
    progress = indexing(st), search_indexing(st)

    def draw():
        page = list_page(q)[1]
        if page.pending or any(r.summary is None for r in page.rows):  # (as the page: `sessions`)
            return _Pending(page)  # (not kept: every request asking now gets its own)
        return _json_bytes(_list_dict(q, page, progress))

    key = ("list.json", request.full_path, *_list_key(st), *(d and tuple(d.items()) for d in progress))
    got = current_app.extensions["viewer"].pages.page(key, draw)
    if not isinstance(got, _Pending):
        return Response(got, mimetype="application/json")
    page = got.page
    pending = [r.ref.key for r in page.rows if r.summary is None]
    if pending and wait:
        st.indexer.wait_for(pending, wait)
        page = list_page(q)[1]
    return _json(_list_dict(q, page, (indexing(st), search_indexing(st))))


class _Pending:
    """A list whose rows are not all indexed yet (not shared: see sessions_json)."""

    __slots__ = ("page",)

    def __init__(self, page):
        self.page = page


def _list_dict(q: ListQuery, page: catalog.Page, progress: tuple) -> dict:
    out = []
    for r in page.rows:
        ref, s = r.ref, r.summary
        row = {"key": ref.key, "path": ref.path, "label": ref.label, "project": r.project,
               "mtime": ref.mtime, "size": ref.size, "live": r.live}
        if isinstance(s, Exception):
            row["error"] = str(s)
        elif s is not None:
            row.update(summary_dump(s))
            row["cost_usd"] = s.cost
            row["tokens"] = s.tokens
            row.pop("usage", None)
        else:
            row["pending"] = True  # not indexed yet: the background indexer is on it
        out.append(row)
    body = {"total": page.total, "all": page.all, "page": q.page, "pages": page.pages,
            "per_page": catalog.PAGE, "not_indexed": page.pending,
            "not_indexed_left_out": page.excluded_pending, "query": q.args(page=1),
            "sort": q.sort, "order": "desc" if q.desc else "asc", "indexing": progress[0],
            "search_indexing": progress[1],
            "sessions": out,
            "skipped": [{"path": p, "reason": why} for p, why in sorted(store().skipped.items())]}
    if q.group:
        body["groups"] = [{"project": g.project, "sessions": g.sessions, "cost_usd": g.cost,
                           "tokens": g.tokens, "errors": g.errors, "keys": [r.ref.key for r in g.rows]}
                          for g in page.groups]
    return body


# --- a session's usage ---------------------------------------------------------------------------


@bp.get("/s/<key>/usage", endpoint="usage")
def usage_panel(key: str):
    """The usage and cost panel: loaded into the session page when opened, a page of its own
    without JavaScript."""
    ref, idx = _session(key)
    report = usage.report(idx)
    if htmx():
        return render_template("_usage.html", key=key, report=report, idx=idx)
    return render_template("usage.html", key=key, report=report, idx=idx, ref=ref,
                           title=store().shown_summary(idx).title)


@bp.get("/s/<key>/charts.json")
def charts(key: str):
    """What the session's charts draw: bars on a time axis per thread, tokens per turn."""
    ref, idx = _session(key)
    return _json({"timeline": usage.timeline(idx), "turns": usage.turns(idx)})


# --- the archive's stats -------------------------------------------------------------------------


def _stats(q: ListQuery) -> tuple[dict, catalog.Page]:
    rows = _rows()
    kept = catalog.matching(rows, q)
    page = catalog.Page(q, [], len(kept), len(rows), sum(1 for r in rows if not r.known), 0, 1,
                        facets=catalog.facets(rows))
    # a sub-agent's own session (Wolo) is counted in its parent's figures too (the parent's index
    # reads it as a thread): counted once, with the parent, when the parent is among them
    listed = {r.ref.key for r in kept}
    own = [r for r in kept if r.parent is None or r.parent.key not in listed]
    return usage.archive([(r.ref, r.summary) for r in own]), page


@bp.get("/stats")
def stats():
    q = list_query()
    data, page = _stats(q)
    return render_template("stats.html", q=q, data=data, p=page, roots=store().roots,
                           indexing=indexing(store()))


@bp.get("/stats.json")
def stats_json():
    q = list_query()
    data, page = _stats(q)
    return _json({**data, "query": q.args(page=1), "sessions_matching": page.total,
                  "sessions_all": page.all, "not_indexed": page.pending, "indexing": indexing(store())})


# --- full-text search across every session ------------------------------------------------------

SEARCH_PAGE = 20  # sessions per page of results
SEARCH_ORDERS = ("relevance", "hits", "recent")


def _search(q: ListQuery):
    """(the search, its results or an error message, the page's rows by path, progress)."""
    from ..fts import QueryError

    viewer_ = current_app.extensions["viewer"]
    fts = viewer_.fts
    words = (request.args.get("q") or "").strip()
    order = request.args.get("rank") if request.args.get("rank") in SEARCH_ORDERS else "relevance"
    refs = store().sessions()
    progress = fts.coverage(refs) if fts is not None else None
    if not words:
        return words, order, None, None, {}, progress
    paths = None
    if q.filtered:
        paths = {r.ref.path for r in catalog.matching(_rows(), q)}
    try:
        if fts is None:
            raise QueryError("Full-text search needs the index cache, and this server was started "
                             "without one (--no-cache).")
        found = fts.search(words, paths, page=q.page, per_page=SEARCH_PAGE, order=order)
    except QueryError as e:
        return words, order, None, str(e), {}, progress
    by_path = {r.path: r for r in refs}
    shown = [by_path[r.path] for r in found.sessions if r.path in by_path]
    summaries = store().summaries(shown, stale=True)
    rows = {ref.path: (ref, summaries.get(ref.key)) for ref in shown}
    return words, order, found, None, rows, progress


@bp.get("/search", endpoint="archive_search")
def archive_search():
    q = list_query()
    words, order, found, error, rows, progress = _search(q)
    rows_all = _rows()
    page = catalog.Page(q, [], 0, len(rows_all), 0, 0, 1, facets=catalog.facets(rows_all))
    # a search that cannot run is still a page that answered: the message is in it
    return render_template("search.html", words=words, order=order, found=found, error=error,
                           rows=rows, progress=progress, q=q, p=page, per_page=SEARCH_PAGE,
                           roots=store().roots)


@bp.get("/search.json", endpoint="archive_search_json")
def archive_search_json():
    q = list_query()
    words, order, found, error, rows, progress = _search(q)
    complete = bool(progress and progress["complete"])
    body = {"query": words, "rank": order, "complete": complete, "indexing": progress}
    if error:
        return _json({**body, "error": error, "total": 0, "results": []}), 400
    if found is None:
        return _json({**body, "total": 0, "results": []})
    results = []
    for r in found.sessions:
        ref, s = rows.get(r.path, (None, None))
        if ref is None:
            continue
        title = (s.title if hasattr(s, "title") else "") or ref.label
        results.append({
            "key": ref.key, "title": title, "label": ref.label, "matches": r.hits_total,
            "hits": [{"id": h.id, "snippet": h.plain, "match": h.first_match,
                      "url": urls.Urls.hit(ref.key, h.id, h.first_match)} for h in r.hits]})
    return _json({**body, "query_run": found.query, "literal": found.literal, "total": found.total,
                  "total_exact": found.whole,
                  "events": found.events, "ranked": found.ranked, "page": q.page,
                  "pages": max(1, -(-found.total // SEARCH_PAGE)), "results": results})
