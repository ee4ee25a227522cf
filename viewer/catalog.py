"""The session list as a query: filters, sort, grouping by project and pages, over the sessions a
store discovered and the summaries their indexes keep (never the transcripts themselves).

A query is plain data read from URL arguments, so every view of the list is a link and the `.json`
twin takes the same arguments. Sessions whose summary is not known yet (not indexed) are listed by
what the file system says: they keep their place when the list is in file-time order, and go last
(and are counted apart) when a filter or sort needs what only the index knows.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, Iterable, Mapping

from .compressed import is_compressed
from .model import SessionSummary

PAGE = 100
SORTS = {
    # name: (label, key on (ref, summary), needs the summary, descending by default)
    "updated": ("last written", lambda r, s: r.mtime, False, True),
    "started": ("started", lambda r, s: s.started, True, True),
    "duration": ("duration", lambda r, s: s.duration, True, True),
    "messages": ("messages", lambda r, s: s.messages or s.steps, True, True),  # a trace: its steps
    "tool_calls": ("tool calls", lambda r, s: s.tool_calls, True, True),
    "errors": ("errors", lambda r, s: s.errors, True, True),
    "tokens": ("tokens", lambda r, s: s.tokens, True, True),
    "cost": ("cost", lambda r, s: s.cost, True, True),
    "size": ("size", lambda r, s: r.size, False, True),
    "title": ("title", lambda r, s: (s.title or r.label).casefold(), True, False),
}
DEFAULT_SORT = "updated"


class BadQuery(ValueError):
    """An argument the list cannot use; the message says which and why, for the page."""


TOP_FOLDER = "."  # ?project= for the sessions right in a root (their project is "")


@dataclass(frozen=True)
class ListQuery:
    formats: tuple[str, ...] = ()
    project: str = ""
    model: str = ""
    since: date | None = None
    until: date | None = None
    errors: bool = False
    live: bool = False
    sort: str = DEFAULT_SORT
    desc: bool = True
    group: bool = False
    page: int = 1

    @classmethod
    def from_args(cls, args: Mapping) -> "ListQuery":
        get = args.get
        getlist = args.getlist if hasattr(args, "getlist") else (lambda k: [args[k]] if k in args else [])
        sort = get("sort") or DEFAULT_SORT
        if sort not in SORTS:
            raise BadQuery(f"Cannot sort by “{sort}”: use one of {', '.join(SORTS)}.")
        order = get("order") or ""
        if order not in ("", "asc", "desc"):
            raise BadQuery("“order” is asc or desc.")
        try:
            page = max(1, int(get("page") or 1))
        except ValueError:
            raise BadQuery("“page” must be a number.") from None
        formats = tuple(sorted({f for v in getlist("format") for f in v.split(",") if f}))
        return cls(formats=formats, project=(get("project") or "").strip(),
                   model=(get("model") or "").strip(), since=_date(get("from"), "from"),
                   until=_date(get("to"), "to"), errors=_flag(get("errors")),
                   live=_flag(get("live")), sort=sort,
                   desc=SORTS[sort][3] if not order else order == "desc",
                   group=get("group") == "project", page=page)

    @property
    def filtered(self) -> bool:
        return bool(self.formats or self.project or self.model or self.since or self.until
                    or self.errors or self.live)

    @property
    def default(self) -> bool:
        return self == ListQuery(page=self.page)

    def args(self, **changes: Any) -> dict:
        """URL arguments for this query with some changed (a page link, a sort link): only what
        differs from the defaults, so links stay short."""
        q = replace(self, **changes)
        out: dict[str, Any] = {}
        if q.formats:
            out["format"] = ",".join(q.formats)
        if q.project:
            out["project"] = q.project
        if q.model:
            out["model"] = q.model
        if q.since:
            out["from"] = q.since.isoformat()
        if q.until:
            out["to"] = q.until.isoformat()
        if q.errors:
            out["errors"] = 1
        if q.live:
            out["live"] = 1
        if q.sort != DEFAULT_SORT:
            out["sort"] = q.sort
        if q.desc != SORTS[q.sort][3]:
            out["order"] = "desc" if q.desc else "asc"
        if q.group:
            out["group"] = "project"
        if q.page > 1:
            out["page"] = q.page
        return out

    def sorted_by(self, name: str) -> dict:
        """Arguments of the link on a column head: sort by it, or flip the order if it is the sort."""
        if name == self.sort:
            return self.args(desc=not self.desc, page=1)
        return self.args(sort=name, desc=SORTS[name][3], page=1)


def _flag(v: Any) -> bool:
    return str(v or "").lower() in ("1", "true", "yes", "on")


def _date(v: Any, name: str) -> date | None:
    if not v:
        return None
    try:
        return date.fromisoformat(str(v))
    except ValueError:
        raise BadQuery(f"“{name}” must be a date like 2025-10-21.") from None


def project_of(ref, multi_root: bool = False) -> str:
    """The folder a session sits in under its root (a Claude Code project), "" for the root itself;
    prefixed by the root's name when several roots are served."""
    folder = ref.label.rsplit("/", 1)[0] if "/" in ref.label else ""
    if multi_root:
        root = ref.root.rstrip("/").rsplit("/", 1)[-1]
        return f"{root}/{folder}" if folder else root
    return folder


@dataclass
class Row:
    ref: Any
    summary: SessionSummary | Exception | None  # None: not indexed yet
    project: str = ""
    live: bool = False
    parent: Any = None  # the listed session this one is a sub-agent of (a Wolo sub-agent's session)
    depth: int = 0  # levels of sub-agent below a session shown above it on the list

    @property
    def known(self) -> bool:
        return isinstance(self.summary, SessionSummary)


@dataclass
class Group:
    project: str
    sessions: int = 0
    cost: float | None = None
    tokens: int = 0
    errors: int = 0
    latest: float = 0.0
    rows: list = field(default_factory=list)  # the group's rows on this page
    continued: bool = False  # the group began on an earlier page


@dataclass
class Page:
    query: ListQuery
    rows: list[Row]
    total: int  # sessions matching the filters
    all: int  # sessions discovered
    pending: int  # sessions whose summary is not known yet
    excluded_pending: int  # of those, left out because the filters or the sort need the summary
    pages: int
    groups: list[Group] = field(default_factory=list)
    facets: dict = field(default_factory=dict)

    @property
    def first(self) -> int:
        return (self.query.page - 1) * PAGE + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0


def _day(ts: float | None) -> date | None:
    return None if ts is None else datetime.fromtimestamp(ts).date()


def _matches(row: Row, q: ListQuery) -> bool:
    s = row.summary
    if q.project and row.project != (q.project if q.project != TOP_FOLDER else ""):
        return False
    if q.live and not row.live:
        return False
    if not (q.formats or q.model or q.since or q.until or q.errors):
        return True
    if not row.known:
        return False
    if q.formats and s.format not in q.formats:
        return False
    if q.model:
        want = q.model.casefold()
        if not any(want in m.casefold() for m in s.models):
            return False
    if q.since or q.until:
        day = _day(s.started if s.started is not None else row.ref.mtime)
        if q.since and day < q.since:
            return False
        if q.until and day > q.until:
            return False
    if q.errors and not s.errors:
        return False
    return True


def _needs_summary(q: ListQuery) -> bool:
    return bool(q.formats or q.model or q.since or q.until or q.errors) or SORTS[q.sort][2]


def live_at(ref, now: float, window: float) -> bool:
    """Whether a listed session is being written: its file changed in the last `window` seconds.
    Never a compressed archive (`.jsonl.zst`, `.gz`): nothing appends to one, its time is when it
    was compressed."""
    return ref.mtime > now - window and not is_compressed(ref.path)


def rows_of(refs: Iterable, summaries: Mapping, now: float | None = None,
            live_window: float = 60.0) -> list[Row]:
    refs = list(refs)
    now = time.time() if now is None else now
    multi = len({r.root for r in refs}) > 1
    by_path = {r.path: r for r in refs}
    rows = [Row(r, summaries.get(r.key), project_of(r, multi), live_at(r, now, live_window))
            for r in refs]
    for row in rows:
        s = row.summary
        if isinstance(s, SessionSummary) and s.parent:
            parent = by_path.get(s.parent)
            row.parent = parent if parent is not None and parent.key != row.ref.key else None
    return rows


def nested(rows: list[Row]) -> list[Row]:
    """Rows with each sub-agent's session right below its parent's (and theirs below them), in the
    order given otherwise; `depth` says how far down. A session whose parent is not among `rows`
    (filtered out, absent) stays where it is, as do sessions whose parents name each other in a
    cycle. Nothing is dropped or repeated."""
    keys_ = {r.ref.key for r in rows}
    below: dict[str, list[Row]] = {}
    for r in rows:
        if r.parent is not None and r.parent.key in keys_:
            below.setdefault(r.parent.key, []).append(r)
    out: list[Row] = []
    placed: set[str] = set()

    def place(top: Row) -> None:
        stack = [(top, 0)]
        while stack:
            r, depth = stack.pop()
            if r.ref.key in placed:
                continue
            placed.add(r.ref.key)
            r.depth = depth
            out.append(r)
            stack.extend((c, depth + 1) for c in reversed(below.get(r.ref.key, [])))

    parent_of = {r.ref.key: r.parent.key for r in rows
                 if r.parent is not None and r.parent.key in keys_}
    for r in rows:  # the tops: no listed parent, or parents that lead back to it (a cycle)
        if r.ref.key not in placed and _top(r.ref.key, parent_of):
            place(r)
    return out


def _top(key: str, parent_of: dict) -> bool:
    """Whether the session `key` heads its rows: it has no listed parent, or following parents
    comes back to it (sessions naming each other: the first one in the list's order heads them)."""
    seen, at = set(), key
    while at in parent_of:
        seen.add(at)
        at = parent_of[at]
        if at == key:
            return True
        if at in seen:
            return False  # a cycle above, not through this session: its head places it
    return at == key  # no listed parent at all; else the ancestor at the top places it


def facets(rows: list[Row]) -> dict:
    """What the filter controls offer, with counts: formats, projects, models."""
    fmts: dict[str, int] = {}
    projects: dict[str, int] = {}
    models: dict[str, int] = {}
    for row in rows:
        projects[row.project] = projects.get(row.project, 0) + 1
        if row.known:
            s = row.summary
            fmts[s.format] = fmts.get(s.format, 0) + 1
            for m in s.models:
                models[m] = models.get(m, 0) + 1
    by_count = lambda d: dict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))  # noqa: E731
    return {"formats": by_count(fmts), "projects": dict(sorted(projects.items())),
            "models": by_count(models)}


def matching(rows: list[Row], q: ListQuery) -> list[Row]:
    """The indexed sessions that pass the query's filters (its sort, grouping and page aside)."""
    return [r for r in rows if r.known and _matches(r, q)]


def run(rows: list[Row], q: ListQuery) -> Page:
    """Filter, sort, group and cut one page."""
    label, key, needs, _ = SORTS[q.sort]
    needs_summary = _needs_summary(q)
    kept = [r for r in rows if _matches(r, q)]
    pending = sum(1 for r in rows if not r.known)
    if needs_summary:
        known = [r for r in kept if r.known]
        excluded = sum(1 for r in kept if not r.known)
        kept = known
    else:
        excluded = 0

    def sort_key(r: Row):
        v = key(r.ref, r.summary) if r.known or not needs else None
        missing = v is None or (isinstance(v, float) and math.isnan(v))
        # missing values go last whatever the order
        return (missing, _neg(v) if q.desc and not missing else (v if not missing else 0))

    kept.sort(key=sort_key)
    kept = nested(kept)
    groups: list[Group] = []
    if q.group:
        by: dict[str, Group] = {}
        for r in kept:
            g = by.get(r.project)
            if g is None:
                g = by[r.project] = Group(r.project)
            g.sessions += 1
            g.latest = max(g.latest, r.ref.mtime)
            if r.known:
                s = r.summary
                g.tokens += s.tokens
                g.errors += s.errors
                if s.cost is not None:
                    g.cost = (g.cost or 0.0) + s.cost
        order = list(by.values())  # groups in the order of their first session in the sort
        members: dict[str, list] = {}
        for r in kept:
            members.setdefault(r.project, []).append(r)
        kept = [r for g in order for r in members[g.project]]
        groups = order
    total = len(kept)
    pages = max(1, -(-total // PAGE))
    start = (q.page - 1) * PAGE
    shown = kept[start : start + PAGE]
    page_groups: list[Group] = []
    if q.group:
        first_of = {}
        for i, r in enumerate(kept):
            first_of.setdefault(r.project, i)
        by_name = {g.project: g for g in groups}
        for r in shown:
            if not page_groups or page_groups[-1].project != r.project:
                g = by_name[r.project]
                page_groups.append(replace(g, rows=[], continued=first_of[r.project] < start))
            page_groups[-1].rows.append(r)
    return Page(q, shown, total, len(rows), pending, excluded, pages, page_groups, facets(rows))


class _Neg:
    """Reverses the order of any comparable value (strings too), for descending sorts."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return self.v > other.v

    def __eq__(self, other):
        return self.v == other.v


def _neg(v):
    return -v if isinstance(v, (int, float)) else _Neg(v)
