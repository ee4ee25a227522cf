"""Pages drawn before their session's index exists, and the stream message that completes them.

A session with no usable index is indexed in the background (`Store.build`, one pass however many
pages ask); meanwhile its page shows a region of the file read by `viewer.partial`: the end for the
latest events, the start for the first ones, the surroundings of a permalink's event. The background
build starts once the page has been sent, so the first screen never competes with it.

The page's event stream (the live tail's; or one of its own, `early` only, when the page is not at
the end of the session) waits for the build and sends its progress. When the index is done it sends
one message of out-of-band updates — the partials the live tail uses when a call changes state: the
cards whose result was not read yet, the results whose call was not, the header's facts and counts,
the hidden count — and then goes on as a live tail from the region's end. Only the cards the page
holds: a region reads more than a page shows (1 MB and more for 40 cards), and the stream is told
which lines the page shows (`shows`, [a, b) of the region: `shows_arg`).

A window loaded next to such a page before its index is done ("Load earlier", "Load later") is
read the same way from the lines next to the page's — a JSON document's from its start through
them, read on from the region read for the window before (`window_screen`,
routes._provisional_window) —
at once rather than after the whole pass; it holds a marker with the address of its own
completion (`completion`, the route `live.early_window`), which the page asks for once its
progress line says the index is done (live.js).

A region cannot know everything the whole read knows. In a JSONL file, a call id used again after
its result is a new call, `id~N` (toolcalls, "An id used again"): a region further on that did not
read the id's first call names a later one by the bare id. A log of API calls read from its middle
cannot know which call and conversation of the file each line is ("API call", not "API call 53"),
the call ids an earlier conversation used (renamed `id~N` too), nor, for a line going on with a
conversation last seen before the lines it read, that it goes on with one (it shows that history
again). A format that reads a record by the ones before it (`follow`) cannot tell, from the middle,
legion's first turn's own cost (the SDK writes a running total) nor the agent a handoff before
it named; nor can any region tell that a rewind written after it dropped the messages it shows.
Such cards are drawn again in place by the same message (`_redrawn`, the live tail's
"changed" partial): each card the index draws otherwise replaces the page's, and a line the index
reads as other records (other ids) has its cards replaced by the index's — the page is not
reloaded, its scroll and open cards stay. A card the index draws otherwise only in attributes and
short texts is not sent again (`_renames`, cardpatch.py): a region whose lines were not counted
named an event without an id of its own by its offset (`@5120`), the index names it by its line
(`L12`): the message lists the ids renamed and what else changes (a number, a link, "API call" →
"API call 53"), and live.js makes those changes in the page's cards — an OpenAI-style JSONL page's
completion was every card again, about a page of HTML. Cards the index names as the page did take
its numbers and links the same way (`_place`): a region numbers its events from its own start and
its links carry their lines' offsets (`?pos=`), and the page's script orders and loads windows by
those numbers (the live tail's "N new messages").

A big session that cannot be shown in part (a JSON document its format reads whole) gets a page that says it is reading
the file, with its size (reading.html, routes._reading_page); its stream (region `WHOLE`) sends the
pass's progress and then the reset that draws the page again, from the index.
"""

from __future__ import annotations

from itertools import groupby

from flask import g, render_template

from .. import files, formats, partial
from ..formats import detect
from ..index import SessionIndex, folded
from ..marks import Marker
from ..store import Store, SessionRef
from ..templating import css_id, dom_id
from ..timeline import Timeline, load_events
from . import cardpatch
from .templating import render_event
from .feed import _url_environ, encode_cursor, position_after, sse, sse_data
from .urls import Urls

PROGRESS_EVERY = 0.5  # seconds between two progress messages while a page waits for its index


WHOLE = (0, 0, False)  # the region of a page that showed none of the file: a document read whole


def size_words(size: int) -> str:
    """A file's size as the reading page says it ("212 MB")."""
    return f"{size / 2**20:.0f} MB" if size >= 1 << 20 else f"{size / 1024:.0f} KB"


def region_arg(idx: SessionIndex) -> str:
    """The region a first screen showed, as its stream's `early` argument: `lo-hi`, and `-n` when
    its lines were numbered (its cards named `L<line>`, not `@<offset>`: see read_region)."""
    r = idx.region
    return f"{r.lo}-{r.hi}" + ("-n" if r.counted and r.lo else "")


def shows_arg(win) -> str | None:
    """The lines a first screen's window shows, as its stream's `shows` argument: `a-b`, the
    offsets of its first event's line and of the line after its last (a region reads more than a
    page shows: its completion is only for what the page holds)."""
    return f"{win.offsets[0]}-{win.offsets[1]}" if win.region is not None and win.offsets else None


def parse_shows(text: str | None, region: tuple[int, int, bool]) -> tuple[int, int]:
    """(a, b) from `shows_arg`'s text, within the region; the whole region when not given."""
    lo, hi = region[:2]
    a, _, b = (text or "").partition("-")
    try:
        a, b = int(a), int(b)
    except ValueError:
        return lo, hi
    return max(lo, min(a, hi)), max(lo, min(b, hi))


def parse_region(text: str | None) -> tuple[int, int, bool] | None:
    """(lo, hi, numbered) from `region_arg`'s text."""
    lo, _, rest = (text or "").partition("-")
    hi, _, numbered = rest.partition("-")
    try:
        lo, hi = int(lo), int(hi)
    except ValueError:
        return None
    return (lo, hi, numbered == "n") if 0 <= lo <= hi and numbered in ("", "n") else None


def first_screen(store: Store, ref: SessionRef, *, start: bool = False,
                 around: tuple[int, int] | None = None) -> SessionIndex | None:
    """A region index for the page of a session whose index is not ready, or None when this
    session cannot be shown in part (a JSON document read whole; any document but from its start).
    `around`: (offset, line) of a
    permalink's event; `start`: the first events rather than the latest. Also None when the file
    cannot be read or is not a transcript (any more): the page then waits for the index, whose
    pass says so plainly."""
    try:
        if around is not None:
            idx = partial.around(ref.path, around[0], around[1], store.confinement)
        elif start:
            idx = partial.head(ref.path, store.confinement)
        else:
            idx = partial.tail(ref.path, store.confinement)
    except (ValueError, OSError, detect.NotTranscript):
        return None
    return store.redacting(idx)


def sub_agent_screen(store: Store, ref: SessionRef, event_id: str,
                     checked: bool = False) -> SessionIndex | None:
    """A region index for the page of a permalink to a sub-agent's event (`partial.locate_sub`:
    around the call that spawned it, its thread read whole; `checked`: no event of the main file
    has that id, `partial.locate` found), or None when only the index can say where that event is
    read."""
    try:
        found = partial.locate_sub(ref.path, event_id, store.confinement, checked)
    except (ValueError, OSError, detect.NotTranscript):
        return None
    return store.redacting(found) if found else None


def window_screen(store: Store, ref: SessionRef, where: dict) -> SessionIndex | None:
    """A region index for a window loaded next to a first screen while its index is not done
    ("Load earlier" / "Load later": `where` is {"before": offset} or {"after": offset}, the line
    its links name, or {"record": seq}, a document's record its links name by number), read as
    a first screen is (its cards resolving what it did not read, then
    completed in place: `completion`, asked for by the page once the index is done); a JSON
    document's (a dataset's lines) from its start through the window (partial._document_window:
    its records are named by their number). None when the session cannot be read so (a document
    its format reads whole: the window waits for the index)."""
    try:
        if "before" in where:
            idx = partial.before(ref.path, where["before"], store.confinement)
        elif "record" in where:
            idx = partial.after_record(ref.path, where["record"], store.confinement)
        else:
            idx = partial.after(ref.path, where["after"], store.confinement)
    except (ValueError, OSError, detect.NotTranscript):
        return None
    return store.redacting(idx)


def progress(store: Store, key: str) -> float | None:
    """How far the background build of a session is (0–1), or None if none runs."""
    b = store.running(key)
    return None if b is None else b.fraction


def resolve(app, store: Store, key: str, region: tuple[int, int, bool], cursor: dict, environ: dict,
            target: str | None = None, shows: tuple[int, int] | None = None, matcher=None):
    """SSE messages: the build's progress while it runs, then the updates that complete a page
    drawn from `region` (lo, hi of the main file, numbered: `parse_region`) that shows the lines
    [a, b) of it (`shows`: the whole region when None); `cursor` is brought to where the page is
    then.
    Returns the index, or None when the session could not be indexed (the page is told why). A
    page that showed none of the file (`WHOLE`: reading.html) is told to draw itself again.
    `target`: the event the page is a permalink of (a card drawn again stays its target);
    `matcher`: the search the page was opened with (a card drawn again has its matches marked, as
    the page drew it: without, a search link's hit lost its marks when its card was drawn again)."""
    whole = region == WHOLE
    mb = size_words(store.get(key).size) if whole else None
    with app.request_context(_url_environ(environ)):
        while True:
            try:
                idx = store.usable(key)
                if idx is None:
                    idx = store.build(key).wait(PROGRESS_EVERY)
            except OSError as e:
                yield sse(sse_data(render_template("_index_progress.html", oob=True,
                                                   failed=e.strerror or str(e))))
                return None
            if idx is not None:
                break
            yield sse(sse_data(render_template("_index_progress.html", oob=True, mb=mb,
                                               fraction=progress(store, key) or 0.0)))
        if matcher is not None:
            g.marker = Marker(matcher, target)
        html = None if whole else completion(store, idx, key, region, shows, target)
        if html is None:
            # the page's cards are named otherwise than the index names them: drawn again from it
            yield sse("reset", event="reset")
            return None
        for name, th in idx.threads.items():  # sub-agents are part of what the page now knows
            if name != "main":
                cursor[name] = position_after(th, len(th))
        cursor.setdefault("main", region[1])
        if idx.threads["main"].mode == "document":
            # a log of API calls (positions count its records): the page showed those of the
            # lines before the region's end
            cursor["main"] = idx.seq_at(region[1])
        cursor["@"] = idx.build_id
        # (a browser that reconnects from this id resumes as a plain live tail: it has "@")
    yield sse(sse_data(html), id=encode_cursor(cursor))
    return idx


def completion(store: Store, idx: SessionIndex, key: str, region: tuple[int, int, bool],
               shows: tuple[int, int] | None = None, target: str | None = None,
               page: bool = True) -> str | None:
    """The out-of-band updates (`_early_resolved.html`) that complete the cards of the lines
    [a, b) (`shows`) a page drew from `region`, once the index is done: only what the page holds,
    however much more the region read (a permalink's region into 6 MB of calls of one reused id
    sent 1.7 MB of cards for a page of 140 KB). `page`: with the header's facts and counts and the
    progress line (a window loaded later completes its cards only). None when the page cannot be
    completed in place (it reloads). Call from a request context."""
    shows = shows or region[:2]
    drawn = _redrawn(store, idx, key, region, target, shows)
    if drawn is None:
        return None
    redrawn, renames = drawn
    calls, refs = _completed(idx, region, shows, target)
    return render_template("_early_resolved.html", idx=idx, s=idx.summary, key=key,
                           calls=calls, refs=refs, ref=store.get(key), oob=True,
                           redrawn=redrawn, page=page, renames=renames)


def _redrawn(store: Store, idx: SessionIndex, key: str, region: tuple[int, int, bool],
             target: str | None, shows: tuple[int, int]) -> tuple[list, list] | None:
    """The cards a page drawn from `region` holds otherwise than the index draws them, to draw
    again in place: ([(ids of the page's cards to take out, the id of the card the new ones
    replace, the views of those)], the cards renamed in place: `_renames`); None when the page
    cannot be completed in place (it reloads).
    Only the cards of the lines the page shows (`shows`: [a, b), offsets of line starts).

    A log of API calls read from its middle, a JSONL page whose region named a call otherwise
    (`_named_otherwise`; see the module's docstring), or a big document some of whose records the
    records after them marked (a Gemini CLI rewind drops the messages before it: `amended`, the
    page read them unmarked): its region is read again (as the page read it: what it drew) and
    compared with the index line by line. A line whose records the index
    names alike has each card whose content differs drawn again (its numbers, its renamed call
    ids); a line whose records differ (it goes on with a conversation the region did not read) has
    its cards replaced by the index's. A file whose lines are no longer those the page read
    reloads."""
    lo, hi, numbered = region
    a, b = shows
    th = idx.threads["main"]
    start, stop = idx.seq_at(a), idx.seq_at(b)
    # (a permalink's event the page named by its offset: the index's name of it, its target)
    named = partial._OFFSET_ID.fullmatch(target or "")
    final = (idx.at_offset(int(named.group(1))) if named and "~" not in target else None) or target
    views = Timeline(idx, target=final).views(load_events(idx, "main", start, stop), start)
    amended = th.carried.get("amended")  # (a Gemini CLI rewind marked records read before it)
    # (a page whose lines were not counted named an event without an id of its own `@<offset>`,
    # which the index names `L<line>`: renamed in place)
    renamed = lo and not numbered and any(_by_line_number(v.ev.id) for v in views)
    if not (lo and (folded(th) or _named_otherwise(idx, region, shows) or _follows(th))
            or amended or renamed or any(_linked(v) for v in views)):
        # (read alike, line by line: the page's n-th card of its region is the index's seq_at(lo)
        # + n-th; only where the page said it is, and how, differs)
        base, at = idx.seq_at(lo), lo and not numbered
        places = [_place(key, v.seq - base, v.ev.ref.offset if at else None, v) for v in views]
        places = [c for c in places if c is not None]
        return [], {"subs": [], "cards": places} if places else None
    try:
        # (read as the page read it: numbered from the line before lo, or named by offsets)
        part = SessionIndex(idx.main, confinement=idx.confinement).read_region(
            lo, hi, _lines_before(idx, lo) if numbered else 0)
        part = store.redacting(part)
    except (OSError, ValueError, detect.NotTranscript):
        return None
    pt = part.threads["main"]
    first, last = part.seq_at(a), part.seq_at(b)
    drawn = _by_line(pt.offsets[first:last],
                     Timeline(part, target=target).views(load_events(part, "main", first, last), first))
    now = _by_line(th.offsets[start:stop], views)
    if [at for at, _ in drawn] != [at for at, _ in now]:
        return None  # (not the lines the page read: the file changed)
    out, changed = [], []
    for (_, page), (_, views) in zip(drawn, now):
        if [p.ev.id for p in page] != [v.ev.id for v in views]:
            if len(page) == len(views):
                changed.append((page, views))  # (named otherwise: renamed in place if it can be)
                continue
            # (the page's cards first taken out: the index's may use their ids for other records)
            out.append(([p.ev.id for p in page[1:]], page[0].ev.id, views))
            continue
        changed += [([p], [v]) for p, v in zip(page, views) if _shown(p) != _shown(v)]
    renames = _renames(changed, key, out)
    # (the cards the index draws alike but for where they are: their number in the session, the
    # offset their links carried — made right too, in place)
    done = {c[0] for c in renames["cards"]} if renames else set()
    done.update("m-" + x for gone, at, _ in out for x in (*gone, at))
    places = [c for (_, page), (_, line) in zip(drawn, now) if [p.ev.id for p in page] == [v.ev.id for v in line]
              for p, v in zip(page, line) if "m-" + p.ev.id not in done
              and (c := _place(key, p.seq, p.at, v)) is not None]
    if places:
        renames = renames or {"subs": [], "cards": []}
        renames["cards"] += places
    return ([(["#" + css_id("m-" + x) for x in gone], "#" + css_id("m-" + at), views)
             for gone, at, views in out], renames)


def _place(key: str, seq: int, at: int | None, v) -> list | None:
    """A card whose id the index keeps made the index's where it says where it is (cardpatch's
    [card id, attribute changes, text changes]): its number (`data-seq`, which the page's script
    orders and loads windows by: a region numbers its events from its own start) and its links,
    which carried its line's offset (`?pos=`: no longer needed). None when neither differs."""
    changes = [] if seq == v.seq else [["data-seq", str(seq), str(v.seq)]]
    if at is not None and at != v.at:
        was, now = Urls.message(key, v.ev.id, pos=at), Urls.message(key, v.ev.id, pos=v.at)
        changes += [["href", was, now], ["data-href", was, now]]
    return ["m-" + v.ev.id, changes, []] if changes else None


def _by_line_number(event_id: str) -> bool:
    """Whether the index names an event by its line (`L12`, `L12~2`): one a page whose lines were
    not counted named by its offset."""
    return partial._LINE_ID.fullmatch(event_id.partition("~")[0]) is not None


def _renames(lines: list, key: str, out: list) -> dict | None:
    """Cards of a page the index names or draws otherwise (`lines`: [(the page's views of a line,
    or of a card, the index's)]) made the index's in place (cardpatch.py): {"subs": the ids
    renamed, as text to replace in attribute values, "cards": [[a page's card id, attribute
    changes, text changes]]}, or None when no card changes. A line a card of which differs
    otherwise is drawn again (added to `out`, as `_redrawn` lists them)."""
    subs, ids = [], []
    for page, views in lines:
        for p, v in zip(page, views):
            if p.at is not None and v.at is None:
                subs.append([f"?pos={p.at}", ""])  # (a link that carried where the line is)
            if p.ev.id != v.ev.id:
                subs.append([dom_id("raw-", p.ev.id), dom_id("raw-", v.ev.id)])
                ids.append([p.ev.id, v.ev.id])
    # (the longest first: `@51200` is not renamed inside `@512000`, nor `?pos=5120` in `?pos=51200`)
    subs = sorted(subs, key=lambda s: -len(s[0])) + sorted(ids, key=lambda s: -len(s[0]))
    cards = []
    for page, views in lines:
        line = []
        for p, v in zip(page, views):
            was, now = render_event(p, key), render_event(v, key)
            change = ([], []) if was == now else cardpatch.changes(was, now, subs)
            if change is None:
                out.append(([p.ev.id for p in page[1:]], page[0].ev.id, views))
                break
            if was != now:
                line.append(["m-" + p.ev.id, *change])
        else:
            cards += line
    return {"subs": list(dict.fromkeys(map(tuple, subs))), "cards": cards} if cards else None


def _lines_before(idx: SessionIndex, lo: int) -> int:
    """The number of lines of the main file before offset `lo` (a line's start), from the index:
    the line of its first event, less the blank lines between."""
    th = idx.threads["main"]
    seq = idx.seq_at(lo)
    if seq >= len(th):
        return th.line
    with files.confined(idx.confinement), files.open_file(idx.main) as f:
        return partial.lines_before(f, lo, th.offsets[seq], th.lines[seq], th.eol.encode())


def _by_line(offsets, items: list) -> list[tuple[int, list]]:
    """Consecutive items grouped by the line they were read from: [(its offset, its items)]."""
    return [(at, [x for _, x in group]) for at, group in groupby(zip(offsets, items), key=lambda p: p[0])]


def _shown(v) -> tuple:
    """What a card shows of an event (its view) that a region and the whole read may give
    otherwise: its content, who wrote it (an agent named by a handoff before the region), what
    it cost (legion's turn: a running total less the one before), what a rewind after it did, the
    links to what a compaction kept or summed up."""
    ev = v.ev
    return (ev.id, ev.role, ev.kind, ev.blocks, ev.hidden, ev.states, ev.source_id, ev.state,
            ev.author, ev.usage) + _links(v)


def _links(v) -> tuple:
    return v.dropped, v.rewound, v.kept_from, v.summarized


def _linked(v) -> bool:
    """Whether the whole read gives a card what a region may not know: a rewind after it dropped
    it, or it is a rewind, a compaction's kept-from link, its summary's range."""
    return any(x is not None and x is not False for x in _links(v))


def _follows(th) -> bool:
    """Whether a thread's format reads a record by what came before it (`follow`: legion's turn
    cost, an agent named by a handoff): a region from the middle may read its first ones
    otherwise than the whole read."""
    return getattr(formats.get(th.format), "follow", None) is not None


def _named_otherwise(idx: SessionIndex, region: tuple[int, int, bool],
                     shows: tuple[int, int] | None = None) -> bool:
    """Whether a JSONL page drawn from `region` named a call otherwise than the index does: a
    call id used again after its result is a new call, `id~N` (toolcalls, "An id used again"), and
    a region further on that did not read the id's first call took a later one for it. Its cards'
    ids, and the updates that complete them, would then not meet: such cards are drawn again."""
    lo, hi = region[:2]
    th = idx.threads["main"]
    if lo == 0 or not th.renamed:
        return False
    start, stop = idx.seq_at(lo), idx.seq_at(hi)
    if shows is not None:  # (named otherwise before what the page shows: not on the page)
        stop = idx.seq_at(shows[1])
    for _, raw in th.renamed.between(start, stop):
        first = idx.calls.call(raw)
        if first is None or first.call is None or first.call[0] != "main" or first.call[1] < start:
            return True
    return False


def _completed(idx: SessionIndex, region: tuple[int, int, bool], shows: tuple[int, int],
               target: str | None = None) -> tuple[list, list]:
    """(call cards of the lines the page shows (`shows`) whose result lies outside the region it
    read or that spawned a thread, results shown whose call lies outside it), as the full index
    resolves them; a sub-agent's thread the page is a permalink into (`target`) open at it, as
    the page drew it."""
    lo, hi = region[:2]
    inside = range(idx.seq_at(lo), idx.seq_at(hi))
    tl = Timeline(idx, target=target)
    calls, refs = [], []
    for ev in load_events(idx, "main", idx.seq_at(shows[0]), idx.seq_at(shows[1])):
        for b in ev.blocks:
            if b.kind == "tool_use" and b.id:
                call = idx.calls.call(b.id)
                if call is None or call.call is None or call.call[0] != "main":
                    continue
                if call.subthread or call.result is None or call.result[0] != "main" \
                        or call.result[1] not in inside:
                    cv = tl.call_view(b.id)
                    if cv is not None:
                        calls.append(cv)
            elif b.kind == "tool_result":
                call = idx.calls.get(b.tool_use_id)
                if call is not None and call.call is not None and not (
                        call.call[0] == "main" and call.call[1] in inside):
                    refs.append(tl.result_ref(call))
    return calls, refs
