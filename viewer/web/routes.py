"""Pages and fragments. Each view asks the store for an index, the timeline for a window, and hands
both to a template; one partial (`_message.html`) renders an event everywhere it appears."""

from __future__ import annotations

import binascii
import functools
import logging
import re
import time
from contextlib import nullcontext
from typing import Iterator

import orjson
from flask import (Blueprint, Response, abort, current_app, make_response, redirect,
                   render_template, request, stream_template, stream_with_context, url_for)

from .. import compressed, files, partial, reader, usage
from ..export import Export, ExportError, call_dict, event_dict
from ..formats import wrapped
from ..formats.detect import NotTranscript
from ..index import SessionIndex, summary_dump
from ..model import Event
from ..search import first_hit, sub_agent_hit
from ..store import EARLY_ABOVE, NotFound, SessionRef, Skipped, Store
from ..templating import dom_id
from ..timeline import Timeline, load_event, load_events, raw_record
from . import early
from .urls import Urls
from .find import Find, find_context, look_deeper, mark_fragment, window as find_window
from .live import LIVE_WINDOW, cursor_of, page_state

log = logging.getLogger(__name__)
bp = Blueprint("pages", __name__)

FULL_CAP = 2_000_000  # characters a "show all" puts in the page; the rest is a plain-text link
_MEDIA_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "audio/mpeg",
                "audio/wav", "audio/ogg", "audio/webm", "audio/mp4", "video/mp4", "video/webm",
                "video/ogg"}
_TEXT_TYPES = {"application/json", "application/xml", "application/x-yaml", "application/yaml",
               "application/javascript", "application/x-sh"}


def store() -> Store:
    return current_app.extensions["viewer"].store


def screen(view):
    """A view drawing what a user waits to see (a session's page, a permalink, a window): while it
    runs, background index passes step aside (`Store.let_pages_first`), so a cold first screen
    does not share the processor with the pass the walker began when the server started. A view
    that waits for an index stops counting while it waits (`Store._wait`)."""

    @functools.wraps(view)
    def answering(*args, **kwargs):
        s = store()
        s.page_begins()
        try:
            return view(*args, **kwargs)
        finally:
            s.page_ends()

    return answering


def htmx() -> bool:
    return request.environ.get("HTTP_HX_REQUEST") == "true"  # (headers.get raises inside when absent)


def _session(key: str) -> tuple[SessionRef, SessionIndex]:
    ref = _ref(key)
    return ref, _index(ref)


def _ref(key: str) -> SessionRef:
    try:
        ref = store().get(key)
    except Skipped as e:
        _not_a_transcript(e.path, e.reason)
    except NotFound:
        abort(404, description=f"No session “{key}” under the served folders.")
    if ref.key != key:  # an older key of this session (see Store.get): the page lives at its key
        args = {**request.view_args, "key": ref.key, **request.args.to_dict(flat=False)}
        abort(redirect(url_for(request.endpoint, **args), 308))
    return ref


def _index(ref: SessionRef, wait: bool = True) -> SessionIndex | None:
    """The session's index; without `wait`, None when it needs a background build."""
    try:
        return store().index(ref.key) if wait else store().usable(ref.key)
    except OSError as e:
        abort(_status_of(e), description=f"Cannot read {ref.path}: {e.strerror or e}")
    except NotTranscript as e:
        _not_a_transcript(e.path, f"not a transcript ({e.reason})")
    except Skipped as e:  # found not to be a transcript by another pass meanwhile
        _not_a_transcript(e.path, e.reason)
    except NotFound:  # gone meanwhile
        abort(404, description=f"No session “{ref.key}” under the served folders.")


def _status_of(e: OSError) -> int:
    """A file that cannot be read is the file's state, not a server fault: never a 500."""
    if isinstance(e, (FileNotFoundError, files.Refused)):
        return 404
    if isinstance(e, PermissionError):
        return 403
    return 503


def _not_a_transcript(path: str, reason: str):
    hint = (" session-viewer reads transcripts: JSON records one per line (JSONL) or a JSON "
            "document in a known format.") if reason.startswith("not a transcript") else ""
    abort(422, description=f"{path} is skipped: {reason}.{hint}")


def _int(name: str) -> int | None:
    v = request.args.get(name)
    if v is None:
        return None
    try:
        return max(0, int(v))
    except ValueError:
        abort(400, description=f"“{name}” must be a number.")


def _where(idx: SessionIndex | None = None, thread: str = "main") -> dict:
    """The window asked for: before / after a seq, or (links of a first screen, main thread only)
    before / after the event at a byte offset, `@<offset>`."""
    for name in ("before", "after"):
        v = request.args.get(name)
        if v is not None and v.startswith("@") and thread == "main" and idx is not None:
            try:
                return {name: idx.seq_at(int(v[1:]))}
            except ValueError:
                abort(400, description=f"“{name}” must be a number or @offset.")
        v = _int(name)
        if v is not None:
            return {name: v}
    return {}


# --- a session -----------------------------------------------------------------------------------


@bp.get("/s/<key>")
@screen
def session(key: str):
    ref = _ref(key)
    idx = _index(ref, wait=False)
    if idx is None and set(request.args) <= _PLAIN:  # no index yet: the part the page shows
        opening = _opening(ref)
        if opening == {} and _archive_unread(ref):
            return _reading_page(ref, key, archive=True)
        if opening in ({}, {"after": 0}):
            # (an archive's start is read from the head of its stream, not its whole copy)
            with compressed.prefix_only() if opening else nullcontext():
                part = early.first_screen(store(), ref, start=bool(opening))
                if part is not None:
                    return _early_page(ref, part, key, opening)
        if _big(ref):
            return _reading_page(ref, key, start=opening == {} and _start_only(ref))
    if idx is None and request.args.get("q") and set(request.args) <= _SEARCH:
        page = _early_search(ref, key)  # a search link: the first screen around its first hit
        if page is not None:
            return page
    idx = idx or _index(ref)
    find = find_context(idx)

    def draw():
        win = find_window(idx, find.filter, _opening(ref, idx))
        return _session_page(ref, idx, win, key, find=find)

    return _shared(ref, idx, draw, find)


_PLAIN = {"from", "at", "hidden"}  # a page with no search, filter or window of its own
_SEARCH = {"q", "regex", "case", "hidden"}  # a search link's page


def _early_search(ref, key: str):
    """The page of a search link (`?q=`) on a session whose index is not built: drawn at once
    around the first hit, found in the bytes — the main file's (`search.first_hit`), or a
    sub-agent's read before it (`search.sub_agent_hit`: the page around the call that spawned it,
    its thread open at the hit) —, the hit its target, the matches marked and the region's hits
    listed as the first ones (unless a sub-agent's file holds the search: its hit may come first)
    — the page searches the whole session again once its index is done (find.js). When the bytes
    cannot tell where the first hit is soon, the page opens where the session opens and says it
    is finding it, then goes there once the index is done. None when the session is redacted (a
    search of its raw bytes would tell what was redacted): the page then waits for the index."""
    find = find_context(None)
    if find.matcher is None or store().redact or compressed.is_compressed(ref.path):
        return None
    store().page_begins()  # (a background pass under way steps aside meanwhile)
    try:
        hit = first_hit(ref.path, find.matcher, store().confinement)
        sub = None if hit is None else sub_agent_hit(
            ref.path, find.matcher, hit[0] if hit else None, store().confinement)
    finally:
        store().page_ends()
    if sub and sub[0] is not None:
        part, target = store().redacting(sub[0]), sub[1]
    else:
        part = early.first_screen(store(), ref, around=hit[:2]) if hit else None
        target = hit[2] if part is not None else None
    if part is not None and part.locate(target) is not None:
        find = find_context(part, target=target)
        find.reading = True
        # (a sub-agent's hit may come first in reading order: the region's are not the first)
        find.listed = sub is None
        return _early_page(ref, part, key, target=target, find=find)
    # (no hit the bytes tell of soon: the page where the session opens, its matches marked, the
    # first hit gone to once the session is read)
    opening = _opening(ref)
    part = early.first_screen(store(), ref, start=bool(opening))
    if part is None:
        return None
    find = find_context(part)
    find.reading, find.listed, find.seek = True, False, True
    return _early_page(ref, part, key, opening, find=find)


def _early_hit(part: SessionIndex, target: str) -> Find:
    """The search of a hit link (`/m/<id>?q=`) drawn before the index: its matches marked in what
    the region shows, the hit's own past the cut of a long block too; no hits listed (the region's
    are not the session's first ones) until the page searches the whole session, once its index
    is done (find.js), the hit it opened at its current one."""
    find = find_context(part, target=target)
    if find.matcher is not None:
        look_deeper(part, target)
        find.reading, find.listed = True, False
    return find


def _early_page(ref, part: SessionIndex, key: str, where: dict | None = None,
                target: str | None = None, find: Find | None = None):
    """A page drawn from a region of the file while the index is built in the background (which
    starts once the page is sent: the first screen does not share the processor with it)."""
    build = store().build(key, start=False)
    tl = Timeline(part, target=target)
    win = tl.window("main", **(where or {}))
    hidden = bool(target) and _hidden(part, target)
    response = make_response(_session_page(
        ref, part, win, key, target=target, show_hidden=hidden, find=find or Find(),
        lands=_lands(tl, target), early=early.region_arg(part), shows=early.shows_arg(win),
        fraction=build.fraction))
    response.call_on_close(build.start)
    return response


def _hidden(idx: SessionIndex, event_id: str) -> bool:
    thread, seq = idx.locate(event_id)
    return bool(idx.threads[thread].hidden[seq])


def _big(ref: SessionRef) -> bool:
    """Whether a session with no index that cannot be shown in part is a JSON document (one whose
    format reads it whole: viewer/partial.py) or a dataset opened at its end, whose pass
    is long enough that its page should not wait for it (a whole page, not an htmx fragment). A
    file that cannot be read or is no transcript is not: the page waits for the pass that says so."""
    if ref.size <= EARLY_ABOVE or htmx() or request.args.get("part") is not None:
        return False
    if compressed.plain_name(ref.path).endswith((".json", ".traj")):
        return True  # (listed: its content was found to be a transcript's; not looked at again)
    try:  # a JSONL file of wrappers that is no log of API calls (a dataset): a look at its head
        with files.confined(store().confinement):
            return wrapped.lines_file(ref.path)
    except OSError:
        return False


def _archive_unread(ref: SessionRef) -> bool:
    """Whether a session is a big compressed archive with no decompressed copy yet: its end (a
    page opened `?at=end`) lies past the whole stream — zstd and gzip cannot be read from their
    middle — so the page says so while the background pass decompresses and indexes it, rather
    than the request waiting seconds for the copy with nothing on the screen."""
    if ref.size <= EARLY_ABOVE or htmx() or not compressed.is_compressed(ref.path):
        return False
    try:
        return not compressed.has_copy(ref.path)
    except OSError:
        return False  # (the page waits for the pass that says why it cannot be read)


def _start_only(ref: SessionRef) -> bool:
    """Whether a big document opened at its end can be shown from its start at once
    (`partial.start_only`)."""
    try:
        return partial.start_only(ref.path, store().confinement)
    except (OSError, ValueError, NotTranscript):
        return False


def _reading_page(ref: SessionRef, key: str, archive: bool = False, start: bool = False):
    """The page of a big session that cannot be shown in part (one JSON document; the end of a
    compressed archive not decompressed yet; `start`: the end of a document whose start can be
    shown, which the page links): "reading 212 MB…" while the background pass reads it, drawn
    again when it is done (reading.html)."""
    build = store().build(key, start=False)
    response = make_response(render_template(
        "reading.html", ref=ref, key=key, mb=early.size_words(ref.size), fraction=build.fraction,
        early="%d-%d" % early.WHOLE[:2], archive=archive, start=start))
    response.call_on_close(build.start)
    return response


def _lands(tl: Timeline, target: str | None) -> str | None:
    """Where a permalink lands: its event, or the call card a result folded into."""
    if not target:
        return None
    folded = tl.target_view.fold_into if tl.target_view and tl.target_view.folded else []
    for cv in folded:  # a result folded into its call's card: the link lands on that card
        cv.target = True
    return dom_id("tc-", folded[0].call.id) + "-result" if folded else f"m-{target}"


def _live(ref: SessionRef) -> bool:
    return ref.live_at(time.time(), LIVE_WINDOW)


def _opening(ref: SessionRef | None, idx: SessionIndex | None = None) -> dict:
    """The window a page asked for; with no ask, where the session opens: a live session at its
    end (following it), a finished one at its start, header in view."""
    where = _where(idx)
    if request.args.get("from") is not None:
        where = {"after": _int("from") or 0}
    if where:
        return where
    at = request.args.get("at")
    if at == "end" or (at != "start" and ref is not None and _live(ref)):
        return {}
    return {"after": 0}


def _session_page(ref, idx, win, key, target=None, show_hidden=False, thread=None, find=None,
                  lands=None, **extra):
    ctx = dict(ref=ref, idx=idx, win=win, key=key, target=target, lands=lands,
               show_hidden=show_hidden or bool(request.args.get("hidden")), thread=thread,
               follow=_live(ref) and not target and not win.has_after,
               # (a filtered window counts picked events, of any thread: not main-thread events)
               cursor=cursor_of(idx, main=None if thread or win.thread != "main" or win.filtered
                                else win.stop),
               find=find, summary=store().shown_summary(idx), redacting=store().redact, **extra)
    if find is not None and find.matcher is not None:
        # the hits come in while the page streams: the first ones show before the scan is done
        return Response(_buffered(stream_template("session.html", **ctx)),
                        content_type="text/html; charset=utf-8")
    return render_template("session.html", **ctx)


def _shared(ref, idx, draw, find=None):
    """A page drawn once for everyone who asks for it while the session and the second stay the
    same (web/pagecache.py). A search's page is drawn for its own request: its marks run under a
    time budget, and it streams."""
    if find is not None and find.matcher is not None:
        return draw()
    key = (request.full_path, htmx(), *page_state(idx), ref.mtime, ref.size)
    return current_app.extensions["viewer"].pages.page(key, draw)


def _buffered(chunks, size: int = 32 << 10, every: float = 0.05):
    """Template output in a few large writes, yet never held back long (a hit shows at once)."""
    buf, held, last = [], 0, time.monotonic()
    for chunk in chunks:
        buf.append(chunk)
        held += len(chunk)
        if held >= size or time.monotonic() - last > every:
            yield "".join(buf)
            buf, held, last = [], 0, time.monotonic()
    if buf:
        yield "".join(buf)


@bp.get("/s/<key>/m/<event_id>")
@screen
def message(key: str, event_id: str):
    """A permalink: the session opened at one event, highlighted, what hides it opened; with a
    search (`?q=`), its matches marked. As a fragment (`?part=window` or `?part=event`) it gives
    the page's script the window around the event, or the event alone.

    Before the session's index exists, the event's line is found in the file (viewer/partial.py)
    and the page drawn around it. Links of such a page name events by where they are
    (`@<offset>`, `?pos=`): the index maps them to the events' final ids (a redirect)."""
    ref = _ref(key)
    at = _int("pos")
    idx = _index(ref, wait=False)
    # (a search's hit link, `?q=`: as a permalink, its matches marked — not on a redacting server,
    # whose marks a region's cut strings would tell of in what it redacts)
    searching = bool(request.args.get("q")) and not store().redact
    if idx is None and set(request.args) <= _PLAIN | {"pos"} | (_SEARCH if searching else set()):
        try:
            found = partial.locate(ref.path, event_id, at, store().confinement)
        except (OSError, NotTranscript):
            found = False
        part = early.first_screen(store(), ref, around=found) if found else None
        if not found:  # (a sub-agent's event: the page around the call that spawned it)
            part = early.sub_agent_screen(store(), ref, event_id, checked=found is None)
        # (an event the region names as the index does — a log of API calls' — is itself)
        if part is not None and (target := event_id if part.locate(event_id) is not None
                                 else part.at_offset(found[0])):
            return _early_page(ref, part, key, target=target,
                               find=_early_hit(part, target) if searching else None)
        if part is None and _big(ref):
            return _reading_page(ref, key)
    idx = idx or _index(ref)
    offset = at if at is not None else (int(event_id[1:]) if event_id[:1] == "@"
                                        and event_id[1:].isdigit() else None)
    # (a log of API calls names an event alike before and after its index: itself; a JSONL
    # session's first screen may have named it by a source id the index gives an earlier event)
    known = idx.threads["main"].carried.get("at") and idx.locate(event_id) is not None
    final = idx.at_offset(offset) if offset is not None and not known else None
    final = final or (None if known else idx.at_record(event_id)
                      or partial.by_source_id(idx, event_id, store().confinement))
    if final is not None and final != event_id:
        args = {k: v for k, v in request.args.items() if k != "pos"}
        return redirect(url_for("pages.message", key=key, event_id=final, **args), 302)
    where = idx.locate(event_id)
    if where is None:
        abort(404, description=f"No message “{event_id}” in this session.")
    thread, seq = where
    find = find_context(idx, target=event_id)
    if find.matcher is not None:
        look_deeper(idx, event_id)
    part = request.args.get("part")

    def draw():
        if part == "event":
            tl = Timeline(idx, target=event_id)
            return render_template("_event.html", v=_card_of(idx, tl, event_id, seq), key=key)
        flt = find.filter
        if flt:
            from ..filters import select

            if where not in select(idx, flt):
                flt = type(flt)()  # the event is not in the filtered view: show it in the whole one
        tl = Timeline(idx, target=event_id)
        # a thread no call links to (a compaction agent's, say) is read on its own, in the page
        root = next(reversed(tl.anchors), "main")
        apart = tl.thread_view(root) if root != "main" else None
        win = find_window(idx, flt, {}, timeline=tl, thread=root)
        lands = _lands(tl, event_id)
        if part == "window":
            return render_template("_window.html", win=win, key=key, idx=idx, direction=None,
                                   apart=apart)
        hidden = idx.threads[thread].hidden[seq]
        find.filter = flt
        return _session_page(ref, idx, win, key, target=event_id, show_hidden=hidden, find=find,
                             lands=lands, apart=apart)

    return _shared(ref, idx, draw, find)


def _card_of(idx: SessionIndex, tl: Timeline, event_id: str, seq: int):
    """The card where an event is read: its own, or — an event holding only results, each drawn
    in the card of its call — the card of its first call, that result marked as the target (the
    page's script redraws a search hit there)."""
    v = tl.event_view(load_event(idx, event_id), seq)
    if not v.refs_only:
        return v
    rc = next(iter(v.refs.values()))
    thread, call_seq = rc.call.call
    evs = load_events(idx, thread, call_seq, call_seq + 1)
    host = tl.event_view(evs[0], call_seq) if evs else None
    cv = host.calls.get(rc.call.id) if host else None
    if cv is None or cv.result_event != event_id:
        return v
    cv.target = True
    return host


@bp.get("/s/<key>.json")
def session_json(key: str):
    ref, idx = _session(key)
    where = _where()
    return Response(_shared(ref, idx, lambda: _json_bytes(_session_dict(ref, idx, key, where))),
                    mimetype="application/json")


def _session_dict(ref, idx: SessionIndex, key: str, where: dict) -> dict:
    win = Timeline(idx).window("main", **where)
    calls = {cid: call_dict(idx, c) for cid, c in idx.calls.calls.items()}
    return {
        "key": key, "path": ref.path, "summary": summary_dump(store().shown_summary(idx)),
        "usage": usage.report(idx),
        "threads": {n: {"label": th.label, "events": len(th), "path": th.path, "format": th.format,
                        "parent_call": th.meta.get("parent_call")} for n, th in idx.threads.items()},
        "tool_calls": calls,
        "orphans": sorted(idx.calls.orphans),
        "window": {"start": win.start, "stop": win.stop, "total": win.total},
        "events": [event_dict(v.ev) for v in win.events],
    }


def _json(obj) -> Response:
    return Response(_json_bytes(obj), mimetype="application/json")


def _json_bytes(obj) -> bytes:
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS, default=str)
    except TypeError:  # nested deeper than orjson writes: cut, with a note where (reader.DEEP)
        return orjson.dumps(reader.cap_depth(obj, 2 * reader.MAX_DEPTH),
                            option=orjson.OPT_NON_STR_KEYS, default=str)


@bp.get("/s/<key>/w/<thread>")
@screen
def window(key: str, thread: str):
    """The window before / after one already on the page (htmx loads it on reveal), of the whole
    thread or of a filtered view; `?at=start|end` gives a whole window with links both ways (the
    page's script jumps with it).

    A first screen's links (`@<offset>`) asked for while its index is being built get a window
    read from the lines next to the page's (viewer/partial.py), at once, not after the whole pass:
    its cards say "resolving" where the index will tell, and the page asks for their completion
    once the index is done (`early.completion`, through the window's `early-window` marker)."""
    ref = _ref(key)
    provisional = _provisional_window(ref, key, thread)
    if provisional is not None:
        return provisional
    idx = _index(ref)
    if thread not in idx.threads:
        abort(404, description=f"No thread “{thread}” in this session.")
    find = find_context(idx)
    where = _where(idx, thread)
    at = request.args.get("at")
    if not where:
        where = {} if at == "end" else {"after": 0}
    direction = None if at else next(iter(where))
    if "before" in where and _int("floor"):
        # the live page's events end there: the latest window comes in below a gap, and the
        # events between load above it, never reaching back into the page
        where["floor"] = _int("floor")
    return _shared(ref, idx, lambda: render_template(
        "_window.html", win=find_window(idx, find.filter, where, thread=thread), key=key, idx=idx,
        direction=direction), find)


def _provisional_window(ref: SessionRef, key: str, thread: str):
    """A first screen's window before or after its own, drawn from the file while the index is
    not done (see `window`); None when the index is there, or the window must wait for it."""
    where = {}
    for name in ("before", "after"):
        v = request.args.get(name)
        if v is not None and v.startswith("@") and v[1:].isdigit():
            where[name] = int(v[1:])
        elif name == "after" and v is not None and v.isdigit():
            where["record"] = int(v)  # (a document's, read from its start: by seq, see Timeline.window)
    # (a search's page asks for its windows with its search, to mark them: find.js)
    searching = request.args.get("q") and not store().redact
    asked = {"after" if name == "record" else name for name in where}
    if thread != "main" or len(where) != 1 or not asked <= set(request.args) <= asked | (
            _SEARCH if searching else set()):
        return None
    if _index(ref, wait=False) is not None:
        return None
    part = early.window_screen(store(), ref, where)
    if part is None:
        return None
    find = find_context(part) if searching else None
    # (the window begins, or ends, at the line asked for: a document's region is read from its
    # start, the others' from, or up to, that line)
    name, offset = next(iter(where.items()))
    win = Timeline(part).window("main", **({"after": offset} if name == "record" else
                                           {name: part.seq_at(offset)}))
    resolve = Urls.early_window(key, early.region_arg(part), early.shows_arg(win),
                                find.args if find and find.matcher else None)
    return render_template("_window.html", win=win, key=key, idx=part,
                           direction="after" if name == "record" else name, resolve=resolve)


@bp.get("/s/<key>/t/<thread>")
@screen
def thread(key: str, thread: str):
    """A sub-agent thread: inline under its Task card (htmx), or as a page of its own."""
    ref, idx = _session(key)
    if thread not in idx.threads:
        abort(404, description=f"No thread “{thread}” in this session.")
    tl = Timeline(idx)
    win = tl.window(thread, **(_where() or {"after": 0}))
    if htmx():
        return render_template("_window.html", win=win, key=key, idx=idx)
    return _session_page(ref, idx, win, key, thread=tl.thread_view(thread))


@bp.get("/s/<key>/t/<thread>/call")
def spawned_by(key: str, thread: str):
    """The call that spawned a sub-agent thread, as a permalink to the event holding it (a Wolo
    sub-agent's own session page links its parent this way: which call spawned it is known only
    once the parent is indexed). A thread no call is known to have spawned: the session's page."""
    ref, idx = _session(key)
    th = idx.threads.get(thread)
    if th is None or thread == "main":
        abort(404, description=f"No sub-agent thread “{thread}” in this session.")
    cid = th.meta.get("parent_call") if isinstance(th.meta, dict) else None
    call = idx.calls.call(cid) if isinstance(cid, str) else None
    if call is None or call.call is None or call.call[0] not in idx.threads:
        return redirect(Urls.session(ref.key))
    where, seq = call.call
    return redirect(Urls.message(ref.key, idx.threads[where].ids[seq]))


@bp.get("/s/<key>/raw/<event_id>")
def raw(key: str, event_id: str):
    ref, idx = _session(key)
    got = raw_record(idx, event_id)
    if got is None:
        abort(404, description=f"No message “{event_id}” in this session.")
    data, cut = got
    if request.args.get("download"):
        return Response(data, content_type="text/plain; charset=utf-8")
    text, deep = None, False
    if not cut:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:  # a record too deep to indent is shown as written (the page shows it cut)
            deep = reader.too_deep(value)
            text = None if deep else reader.json_text(value)
    if text is None:
        text = data.decode("utf-8", "replace")
    where = idx.locate(event_id)
    th = idx.threads[where[0]]
    ctx = dict(text=text, cut=cut, deep=deep, key=key, event_id=event_id, line=th.lines[where[1]],
               path=th.path, length=th.lengths[where[1]], max_depth=reader.MAX_DEPTH)
    if htmx():
        return render_template("_raw.html", **ctx)
    return render_template("raw.html", ref=ref, **ctx)


def _block(idx: SessionIndex, event_id: str, path: str):
    ev, node, _ = _block_in(idx, event_id, path)
    return ev, node


# the addresses the page links to: b<n>, then .c<n> into a result's content, or .i:<field> of an
# input; numbers as the page writes them (ASCII, no sign, no leading zero)
_BLOCK_PATH = re.compile(r"b(?:0|[1-9][0-9]{0,5})(?:\.c(?:0|[1-9][0-9]{0,5}))*(?:\.i:[^.]{1,200})?")


def _block_in(idx: SessionIndex, event_id: str, path: str):
    """The event, the block at `path` inside it, and the block that holds that one."""
    ev = load_event(idx, event_id)
    if ev is None:
        abort(404, description=f"No message “{event_id}” in this session.")
    node = parent = ev
    try:
        if not _BLOCK_PATH.fullmatch(path):
            raise ValueError(path)
        for part in path.split("."):
            parent = node
            if part.startswith("b"):
                node = node.blocks[int(part[1:])]
            elif part.startswith("c"):
                node = node.content[int(part[1:])]
            elif part == "i:raw" and getattr(node, "input_raw", None):
                node = node.input_raw  # arguments that are not JSON, shown as written
            else:
                node = node.input[part[2:]]
    except (ValueError, IndexError, KeyError, TypeError, AttributeError):
        abort(404, description=f"No block “{path}” in message “{event_id}”.")
    return ev, node, parent


def _result_call(idx: SessionIndex, parent) -> tuple[str, object, bool] | None:
    """(tool name, input, failed) of the call whose result holds a block, so "show all" of a
    result's text shows it the way its card does."""
    if getattr(parent, "kind", "") != "tool_result":
        return None
    call = idx.calls.get(parent.tool_use_id)
    if call is None:
        return None
    inp = None
    if call.call is not None:
        thread, seq = call.call
        for ev in load_events(idx, thread, seq, seq + 1):
            inp = next((b.input for b in ev.blocks if b.kind == "tool_use" and b.id == call.id), None)
    return call.name, inp, call.is_error


def _text_of(idx: SessionIndex, ev: Event, node) -> Iterator[str]:
    """The whole text of a block, in pieces of at most a chunk: a cut string or an unparsed line is
    read back from the file as the pieces are taken (opened now, so a refusal is a status, not a
    broken stream), never held whole."""
    if isinstance(node, str):
        text = node
    elif node.kind in ("text", "thinking", "cached", "context"):
        text = node.text
    elif node.kind == "unparsed":
        f = _open_thread(idx, ev.thread)
        return _closing(f, reader.iter_text(f, ev.ref.offset, ev.ref.length))
    elif node.kind == "media":
        text = node.data or ""
    elif node.kind == "data":
        return iter([reader.json_text(node.value)])
    elif node.kind == "tool_use":  # a long input shown as JSON: its "show all"
        return iter([reader.json_text(node.input)])
    else:
        abort(404, description="This block has no text.")
    if isinstance(text, reader.CutStr):
        f = _open_thread(idx, ev.thread)
        return _closing(f, reader.iter_cut(f, text))
    return iter([text] if isinstance(text, str) else [])


def _open_thread(idx: SessionIndex, thread: str):
    try:
        with files.confined(idx.confinement):
            return files.open_file(idx.threads[thread].path)
    except OSError as e:
        abort(_status_of(e), description=f"Cannot read {idx.threads[thread].path}: "
                                         f"{e.strerror or e}")


def _closing(f, pieces: Iterator) -> Iterator:
    try:
        yield from pieces
    finally:
        f.close()


def _utf8(pieces: Iterator[str]) -> Iterator[bytes]:
    for text in pieces:
        yield text.encode("utf-8", "replace")  # a lone surrogate from an escape: U+FFFD's "?"


@bp.get("/s/<key>/e/<event_id>/full/<path>")
@screen
def full(key: str, event_id: str, path: str):
    """"Show all" of a cut block: the whole text, rendered (htmx) or as plain text (?raw=1), which
    streams however big the block is. With `?cap=N`, a tool result's text as its card shows it
    (the first N characters and its "show all"), highlighted: what a page sends plain until the
    reader reaches it."""
    ref, idx = _session(key)
    ev, node, parent = _block_in(idx, event_id, path)
    cap = _int("cap")
    result_of = _result_call(idx, parent) if getattr(node, "kind", "") == "text" else None
    if cap and result_of and htmx():  # the text the card had (loaded and redacted as for the page)
        find_context(idx, target=event_id)
        return mark_fragment(render_template("_full.html", text=node.text, cap=cap,
                                             result_of=result_of, key=key, event_id=event_id,
                                             path=path, rest=0))
    pieces = _text_of(idx, ev, node)
    if idx.redactor is not None:
        pieces = idx.redactor.stream(pieces)
    if request.args.get("raw") or not htmx():
        return Response(_utf8(pieces), content_type="text/plain; charset=utf-8")
    # beyond a few megabytes a browser tab struggles: show the head, link the whole as plain text
    head, total = [], 0
    for text in pieces:
        if total < FULL_CAP:
            head.append(text[: FULL_CAP - total])
        total += len(text)
    shown = "".join(head)
    markdown = getattr(node, "markdown", False) and getattr(node, "kind", "") == "text"
    find_context(idx, target=event_id)  # a search the page was opened with is marked here too
    return mark_fragment(render_template(
        "_full.html", text=shown, markdown=markdown and len(shown) == total, result_of=result_of,
        key=key, event_id=event_id, path=path, rest=total - len(shown), total=total,
        raw_url=url_for("pages.full", key=key, event_id=event_id, path=path, raw=1)))


@bp.get("/s/<key>/e/<event_id>/media/<path>")
def media(key: str, event_id: str, path: str):
    """Inline media, decoded from its base64 as it is sent (a 50 MB video is never in memory)."""
    ref, idx = _session(key)
    ev, node = _block(idx, event_id, path)
    if getattr(node, "kind", "") != "media" or not node.data:
        abort(404, description="No inline media here.")
    mt = (node.media_type or "").lower()
    body = _base64_decoded(_text_of(idx, ev, node))
    if idx.redactor is not None and (mt.startswith("text/") or mt in _TEXT_TYPES):
        body = [idx.redactor.text(b"".join(body).decode("utf-8", "replace")).encode()]
    resp = Response(body, mimetype=mt if mt in _MEDIA_TYPES else "application/octet-stream")
    if mt not in _MEDIA_TYPES:
        resp.headers["Content-Disposition"] = "attachment"
    resp.headers["Cache-Control"] = "private, max-age=3600"
    return resp


_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _base64_decoded(pieces: Iterator[str]) -> Iterator[bytes]:
    """Bytes of base64 text given in pieces: what is not base64 (line breaks, padding, a `data:`
    URL's head) is skipped, as b64decode(validate=False) does."""
    rest, first = b"", True
    for text in pieces:
        if first and text.startswith("data:"):
            text = text.partition(",")[2]
        first = False
        raw = text.encode("ascii", "ignore")
        junk = raw.translate(None, _BASE64)
        if junk:
            raw = raw.translate(None, bytes(set(junk)))
        raw = rest + raw
        whole = len(raw) - len(raw) % 4
        rest = raw[whole:]
        if whole:
            yield binascii.a2b_base64(raw[:whole])
    if len(rest) > 1:  # an unpadded tail
        yield binascii.a2b_base64(rest + b"=" * (-len(rest) % 4))


@bp.get("/s/<key>/export")
def export(key: str):
    """The session (or a range of it) as a downloaded file: HTML, Markdown or JSON, streamed as it
    is written; redacted on a redacting server."""
    ref, idx = _session(key)
    fmt = request.args.get("format") or "html"
    try:
        x = Export(idx, fmt, first=request.args.get("from") or None,
                   last=request.args.get("to") or None, label=ref.label, key=key)
    except ExportError as e:
        abort(400, description=f"Cannot export: {e}.")
    return Response(stream_with_context(x.chunks()), content_type=x.mimetype, headers={
        "Content-Disposition": f'attachment; filename="{x.filename}"',
        "Cache-Control": "no-store"})


# --- errors --------------------------------------------------------------------------------------


@bp.app_errorhandler(400)
@bp.app_errorhandler(403)
@bp.app_errorhandler(404)
@bp.app_errorhandler(422)
@bp.app_errorhandler(500)
@bp.app_errorhandler(503)
def error(e):
    status = getattr(e, "code", 500) or 500
    message = getattr(e, "description", None) or "Something went wrong."
    if status == 500 and not getattr(e, "description", None):
        message = "Something went wrong while reading this session. The server log has details."
    if htmx():
        return render_template("_error.html", status=status, message=message), status
    return render_template("error.html", status=status, message=message), status


@bp.app_errorhandler(Exception)
def crash(e):
    from werkzeug.exceptions import HTTPException

    if isinstance(e, HTTPException):
        return error(e)
    log.exception("error serving %s", request.path)
    message = "Something went wrong while reading this session. The server log has details."
    return render_template("error.html", status=500, message=message), 500
