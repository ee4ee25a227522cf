"""Exporting a session: one self-contained HTML file, Markdown for an issue, or the canonical events
as JSON for other tools — the whole session or a range of it, redacted on request.

* **HTML** is drawn by the same templates and partials as the page (`_message.html`, `_macros.html`,
  `_window.html`…) through a Jinja environment that needs no web request
  (`viewer.templating.environment`): its URL builder turns permalinks into `#m-<id>` anchors, media
  become data: URIs, nothing is cut behind a "show all". The stylesheet and a small script are
  inlined and allowed by their hashes in a Content-Security-Policy `<meta>` (no `unsafe-inline`),
  which also forbids every request: the file opens the same from a laptop or an attachment.
* **Markdown** is written event by event here (headings per turn, fenced inputs and outputs,
  thinking as quotes): it is text for a text box, not HTML, so it has its own small writer.
* **JSON** is the `.json` twin's shape (`event_dict`) with every event of the selection, and the
  media payloads kept.

Memory stays bounded: events are read, rendered and written a window at a time, and a sub-agent's
thread is streamed into the middle of its Task card (the card is split at a marker the template
leaves for it) rather than rendered as one piece. Drawing the events is nearly all of an export's
time, so the command line (`workers`) draws the windows of a long session in forked processes, in
order, and writes them as they come; each window is drawn exactly as the single process draws it
(a redacting export stays in one process: its markers are numbered in reading order). For a long
session the command line forks them before it reads the file (`Prefork`): they compile what
drawing needs while the index is built, and are handed the export once it is.

An export is a snapshot: it covers the events the index held when it started, and tool calls whose
result came later show as still running — a line being written at the end of a live session is
left out, not half included (the index only takes complete lines).
"""

from __future__ import annotations

import base64
import gc
import hashlib
import multiprocessing
import os
import pickle
import re
import signal
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Iterator

import orjson

from . import __version__, lexing, reader, render, timestamps, tools, usage
from .index import SessionIndex, summary_dump
from .model import EXECUTING, PENDING, Event, ToolCall
from .redact import Redactor, Tally
from .templating import call_questions, environment, events_html, resource_dir, state_badge
from .timeline import STREAM_BACK, CallView, EventView, Timeline, load_events

FORMATS = {"html": ("html", "text/html; charset=utf-8"),
           "md": ("md", "text/markdown; charset=utf-8"),
           "json": ("json", "application/json")}
WINDOW = 200  # events read and rendered at a time
PARALLEL_FROM = 2_000  # events of the selected thread from which `workers` processes draw them
# ...and from which processes forked before the file was read (`Prefork`) draw them: they are
# ready, forking and compiling costs nothing more then
PARALLEL_READY_FROM = 400
# bytes of a session's main file from which the command line forks its drawing processes before it
# reads the file (`Prefork`; the events decide whether they draw, PARALLEL_FROM)
PREFORK_FROM = 4 << 20
MEDIA_LIMIT = 8 << 20  # base64 characters of one image / audio / video inlined in an HTML export
# Code blocks up to this many characters are highlighted, longer ones shown plain: Pygments reads
# about 0.2 MB/s, and a session's file reads would otherwise take most of an export's time.
HIGHLIGHT_LIMIT = 4_000
STRING_LIMIT = 64 << 20  # a string cut out of a huge line is read back whole up to this size
_NO_CAP = 1 << 62
_TICKS = re.compile(r"`+")
_THREAD_MARK = re.compile(r"<!--sv-thread ([A-Za-z0-9_-]+)-->")


class ExportError(ValueError):
    """A request the export cannot satisfy (an unknown message id, a range across threads)."""


class Urls:
    """The export's URL builder: permalinks are anchors in the same file; what needs the server
    (raw view, "show all", media routes, thread pages) has no URL here."""

    @staticmethod
    def message(key: str, event_id: str, **where) -> str:
        return f"#m-{event_id}"

    @staticmethod
    def _none(*args, **kwargs) -> None:
        return None

    raw = full = media = thread = window = session = session_json = static = _none


# --- what an export covers -----------------------------------------------------------------------


@dataclass
class Selection:
    thread: str
    start: int  # seq of the first event
    stop: int  # seq past the last event
    whole: bool  # the whole session (every thread, unlinked ones included)


def select(idx: SessionIndex, first: str | None = None, last: str | None = None) -> Selection:
    """The events from message `first` to message `last` (both included) of one thread; the whole
    session when neither is given."""
    if first is None and last is None:
        return Selection("main", 0, len(idx.threads["main"]), True)
    where = {}
    for name, eid in (("from", first), ("to", last)):
        if eid is not None:
            got = idx.locate(eid)
            if got is None:
                raise ExportError(f"no message “{eid}” in this session")
            where[name] = got
    threads = {t for t, _ in where.values()}
    if len(threads) > 1:
        raise ExportError("--from and --to name messages of different threads "
                          "(a sub-agent's messages are exported with the call that spawned it)")
    thread = threads.pop()
    ends = len(idx.threads[thread])
    start = where["from"][1] if "from" in where else 0
    stop = where["to"][1] + 1 if "to" in where else ends
    if stop <= start:
        raise ExportError("the --to message comes before the --from message")
    return Selection(thread, start, stop, False)


# --- the export ----------------------------------------------------------------------------------


class Export:
    """One export of one session. `chunks()` yields the file's text piece by piece."""

    def __init__(self, idx: SessionIndex, fmt: str = "html", *, first: str | None = None,
                 last: str | None = None, redactor: Redactor | None = None, label: str = "",
                 key: str = "", media_limit: int = MEDIA_LIMIT, now: float | None = None,
                 workers: int = 1, prefork: "Prefork | None" = None):
        if fmt not in FORMATS:
            raise ExportError(f"unknown export format “{fmt}” (html, md or json)")
        if redactor is not None and idx.redactor is not None and redactor is not idx.redactor:
            raise ExportError("the index already redacts with another redactor")
        self.idx, self.fmt, self.key = idx, fmt, key
        self.redactor = redactor or idx.redactor
        self.label = label or Path(idx.main).stem
        self.media_limit = media_limit
        self.now = time.time() if now is None else now
        self.sel = select(idx, first, last)
        # the snapshot: what the index holds now is what this export covers
        self.ends = {name: len(th) for name, th in idx.threads.items()}
        self.ends[self.sel.thread] = min(self.ends[self.sel.thread], self.sel.stop)
        self.generation = idx.generation
        self.tally = Tally()
        self.threads = self._included()
        self._marks = {_dom_key(sub): sub for sub in self.threads}  # a sub-agent's mark → thread
        self.events = 0
        # processes drawing an HTML export's windows: only where forking is safe (the command
        # line; a web server's threads may hold locks a child would wait on forever)
        self.workers = workers
        # drawing processes the command line forked before the index was built (`Prefork`): used
        # instead of forking new ones, and ended when the export is drawn in this process
        self.prefork = prefork
        self.parallel = False  # whether this export's events were drawn by `workers` processes

    @property
    def filename(self) -> str:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", self.label).strip("._") or "session"
        return f"{base}.{FORMATS[self.fmt][0]}"

    @property
    def mimetype(self) -> str:
        return FORMATS[self.fmt][1]

    def chunks(self) -> Iterator[str]:
        for piece in self._pieces():
            yield piece if type(piece) is str else piece.decode("utf-8", "surrogatepass")

    def write(self, out) -> int:
        """Write the export to a binary file object; returns the bytes written."""
        n = 0
        for piece in self._pieces():
            data = piece if type(piece) is bytes else piece.encode("utf-8", "surrogatepass")
            out.write(data)
            n += len(data)
        return n

    def _pieces(self) -> Iterator[str | bytes]:
        """The file piece by piece: text, or the bytes forked workers sent (encoded where they
        were drawn: this process only passes them on)."""
        idx = self.idx
        old = idx.redactor
        if self.redactor is not None:
            idx.redactor = self.redactor
        try:
            yield from {"html": self._html, "md": self._markdown, "json": self._json}[self.fmt]()
        finally:
            idx.redactor = old

    # --- shared ------------------------------------------------------------------------------

    def _included(self) -> list[str]:
        """The threads this export holds: the selected one, the sub-agents spawned by its calls (and
        theirs), and in a whole-session export the threads no call links to."""
        idx, sel = self.idx, self.sel
        spawned: dict[str, list[tuple[int, str]]] = {}
        for call in list(idx.calls.calls.values()):
            if call.subthread and call.call:
                for sub in idx.subthreads(call):
                    spawned.setdefault(call.call[0], []).append((call.call[1], sub))
        out, todo = [], [(sel.thread, sel.start, self.ends[sel.thread])]
        while todo:
            name, start, stop = todo.pop()
            if name in out:
                continue
            out.append(name)
            todo.extend((sub, 0, self.ends[sub]) for seq, sub in spawned.get(name, ())
                        if start <= seq < stop)
        if sel.whole:
            out += [n for n in idx.threads if n not in out]
        return out

    def _range(self, name: str) -> tuple[int, int]:
        if name == self.sel.thread:
            return self.sel.start, self.ends[name]
        return 0, self.ends[name]

    def _linked(self, name: str) -> bool:
        parent = self.idx.threads[name].meta.get("parent_call")
        return bool(parent and self.idx.calls.call(parent))

    def _windows(self, name: str, tl: Timeline) -> Iterator[EventView]:
        """The events of one thread in the selection, as views."""
        for views in self._window_lists(name, tl):
            yield from views

    def _window_lists(self, name: str, tl: Timeline) -> Iterator[list]:
        """The events of one thread in the selection, as views, a window at a time."""
        start, stop = self._range(name)
        before = None  # the events just before the window (read back for a range's first one)
        for a in range(start, stop, WINDOW):
            views = self._window(name, tl, a, before)
            yield views
            before = [v.ev for v in views[-STREAM_BACK:]]

    def _window(self, name: str, tl: Timeline, a: int, before: list[Event] | None) -> list:
        """The views of the window of a thread starting at seq `a`, as of the snapshot."""
        if self.idx.generation != self.generation:
            raise ExportError("the session file was replaced while it was being exported")
        views = tl.events(name, a, min(a + WINDOW, self._range(name)[1]), before).events
        for v in views:
            self._as_of_snapshot(v)
            self.events += 1
            if self.redactor is not None:
                self.tally.add_event(v.ev)
        return views

    def _event_lists(self, name: str) -> Iterator[list[Event]]:
        """The events of one thread in the selection, a window at a time, as read: what the JSON
        writes (a card's view — its calls paired, its repeats found — is for drawing it)."""
        start, stop = self._range(name)
        for a in range(start, stop, WINDOW):
            if self.idx.generation != self.generation:
                raise ExportError("the session file was replaced while it was being exported")
            evs = load_events(self.idx, name, a, min(a + WINDOW, stop), expand=STRING_LIMIT)
            self.events += len(evs)
            if self.redactor is not None:
                for ev in evs:
                    self.tally.add_event(ev)
            if evs:
                yield evs

    def _call(self, call: ToolCall) -> ToolCall:
        """A call as it stood when the export started (a later result is not part of it)."""
        if call.result is not None and call.result[1] >= self.ends.get(call.result[0], 0):
            return replace(call, result=None, finished_at=None, is_error=False, named=None,
                           status=EXECUTING if call.status == EXECUTING else PENDING)
        return call

    def _as_of_snapshot(self, v: EventView) -> None:
        for cv in list(v.calls.values()) + list(v.refs.values()):
            call = self._call(cv.call)
            if call is not cv.call:
                cv.call, cv.result, cv.result_event, cv.result_owner = call, None, None, None
            for th in cv.threads:
                th.count = min(th.count, self.ends.get(th.name, 0))

    def _summary(self):
        s = self.idx.summary
        if self.redactor is not None and s.title:
            s = replace(s, title=self.redactor.text(s.title))
        return s

    def _hidden(self) -> int:
        n = 0
        for name in self.threads:
            start, stop = self._range(name)
            n += sum(self.idx.threads[name].hidden[start:stop])
        return n

    # --- HTML --------------------------------------------------------------------------------

    def _html(self) -> Iterator[str | bytes]:
        env = _environment(self.media_limit)
        tl = Timeline(self.idx, expand=STRING_LIMIT)
        # forked workers start on the events while this process draws the head
        drawing = self._html_workers(tl, env)
        try:
            css = _asset("css")
            script = _asset("js")
            csp = "; ".join([
                "default-src 'none'", f"style-src '{_sha256(css)}'",
                f"script-src '{_sha256(script)}'", "img-src data:", "media-src data:",
                "base-uri 'none'", "form-action 'none'"])
            page = env.get_template("export.html")
            ctx = dict(s=self._summary(), idx=self.idx, ref=_Ref(self.label, self.idx),
                       key=self.key, css=css, script=script, csp=csp, sel=self.sel,
                       hidden=self._hidden(), shown_path=Path(self.idx.main).name,
                       exported=timestamps.from_epoch(self.now), version=__version__,
                       redacting=self.redactor is not None, range_ids=self._range_ids())
            yield page.render(part="head", **ctx)
            if drawing is None:
                yield from self._html_thread(self.sel.thread, tl, env)
            else:
                yield from self._html_drawn(drawing)
        finally:
            if drawing is not None:
                drawing.stop()
                _forked(None)
        loose = [n for n in self.threads if n != self.sel.thread and not self._linked(n)]
        if loose:
            yield page.render(part="loose-head", **ctx)
            for name in loose:
                th = self.idx.threads[name]
                yield (f'<li class="loose-thread"><h3>{_esc(th.label or name)} <span class="muted">'
                       f'· {_esc(Path(th.path).name)}</span></h3><ol class="timeline nested">')
                yield from self._html_thread(name, tl, env)
                yield "</ol></li>"
            yield "</ol></section>"
        yield page.render(part="tail", tally=self.tally, events=self.events, loose=bool(loose),
                          **ctx)

    def _html_thread(self, name: str, tl: Timeline, env) -> Iterator[str]:
        for views in self._window_lists(name, tl):
            yield from self._html_events(views, name, tl, env)

    def _html_events(self, views: list, name: str, tl: Timeline, env) -> Iterator[str]:
        """A window's cards (drawn in one template call), with the sub-agent threads their calls
        spawned drawn at their marks."""
        html = events_html(env, views, self.key)
        if not any(_spawns(v) for v in views):
            # (a window's HTML is about 600,000 characters: looking through it for marks that a
            # card without a sub-agent never leaves took a twentieth of a long export's drawing)
            yield html
            return
        pos = 0
        for m in _THREAD_MARK.finditer(html):
            sub = self._marks.get(m.group(1))
            yield html[pos:m.start()]
            pos = m.end()
            if sub is not None and sub != name:
                yield from self._html_thread(sub, tl, env)
        yield html[pos:]

    def _html_workers(self, tl: Timeline, env):
        """`workers` forked processes drawing the selected thread's windows (with their
        sub-agents), started now (`_Drawers`), or None where the events are
        drawn in this process. The workers inherit the index, and the templates and file-name
        patterns this process compiles for them first (each would compile its own); they return
        each window's HTML as the bytes written (sending text would decode and encode it again)."""
        start, stop = self._range(self.sel.thread)
        prefork, self.prefork = self.prefork, None  # (handed over once)
        least = PARALLEL_FROM if prefork is None else min(PARALLEL_FROM, PARALLEL_READY_FROM)
        if self.workers < 2 or self.redactor is not None or stop - start < least \
                or "fork" not in multiprocessing.get_all_start_methods():
            if prefork is not None:
                prefork.stop()
            return None
        self.parallel = True
        if prefork is not None:
            drawing = prefork.drawers(self, range(start, stop, WINDOW))
            if drawing is not None:
                return drawing
        _warm(env)
        _forked((self, tl, env))
        return _Drawers(self.workers, range(start, stop, WINDOW))

    def _html_drawn(self, drawing: "_Drawers") -> Iterator[bytes]:
        for html, events in drawing:
            if self.idx.generation != self.generation:
                raise ExportError("the session file was replaced while it was exported")
            self.events += events
            yield html

    def _html_window(self, a: int, tl: Timeline, env) -> tuple[str, int]:
        """The HTML of the selected thread's window at seq `a` and its number of events (sub-agents
        included), drawn as `_html_thread` draws it: the events just before it are read back."""
        name = self.sel.thread
        back = min(WINDOW, STREAM_BACK)
        before = None if a == self._range(name)[0] else load_events(
            self.idx, name, a - back, a, expand=tl.expand)
        counted = self.events
        html = "".join(self._html_events(self._window(name, tl, a, before), name, tl, env))
        return html, self.events - counted

    def _range_ids(self) -> tuple[str, str] | None:
        if self.sel.whole:
            return None
        th = self.idx.threads[self.sel.thread]
        return th.ids[self.sel.start], th.ids[self.ends[self.sel.thread] - 1]

    # --- JSON --------------------------------------------------------------------------------

    def _json(self) -> Iterator[str]:
        idx = self.idx
        wanted = set(self.threads)
        calls = {}
        for cid, c in list(idx.calls.calls.items()):
            c = self._call(c)
            if c.call is None or c.call[0] not in wanted or c.call[1] >= self.ends[c.call[0]]:
                continue
            if c.call[0] == self.sel.thread and not (self.sel.start <= c.call[1]):
                continue
            calls[cid] = call_dict(idx, c)
        head = {
            "key": self.key, "path": Path(idx.main).name,
            "summary": summary_dump(self._summary()),
            "threads": {n: {"label": th.label, "events": self.ends[n], "path": Path(th.path).name,
                            "format": th.format, "parent_call": th.meta.get("parent_call")}
                        for n, th in idx.threads.items() if n in wanted},
            "usage": usage.report(idx),
            "tool_calls": calls,
            "orphans": sorted(list(idx.calls.orphans)),
            "window": {"thread": self.sel.thread, "start": self.sel.start,
                       "stop": self.ends[self.sel.thread], "total": len(idx.threads[self.sel.thread])},
            "exported": {"by": f"session-viewer {__version__}",
                         "at": timestamps.iso(timestamps.from_epoch(self.now)),
                         "redacted": self.redactor is not None},
        }
        yield _dumps(head)[:-1] + ',"events":['
        first = True
        for name in self.threads:
            for evs in self._event_lists(name):
                yield ("" if first else ",\n") + ",\n".join(
                    _dumps(event_dict(ev, full=True)) for ev in evs)
                first = False
        report = None if self.redactor is None else [
            {"kind": k, "secrets": n, "places": p} for k, n, p in self.tally.rows()]
        yield '],"redactions":' + orjson.dumps(report).decode() + "}\n"

    # --- Markdown ----------------------------------------------------------------------------

    def _markdown(self) -> Iterator[str]:
        md = _Markdown(self)
        yield from md.document()


_FORKED = None  # (export, timeline, environment) that forked workers draw windows of


def _forked(what) -> None:
    global _FORKED
    _FORKED = what


class _Drawers:
    """Forked processes drawing an export's windows: window i by process i % n, each sending its
    windows' HTML in order through a pipe of its own (it waits while the pipe is full, so what is
    drawn ahead stays small), read back in order. `stop()` kills them: they share no lock with
    this process that a killed one could leave held (multiprocessing.Pool's terminate waited for
    ever on its task queue's lock when an idle worker held it)."""

    def __init__(self, n: int, starts: range):
        ctx = multiprocessing.get_context("fork")
        self.total = len(starts)
        self.finished = False
        self.conns, self.procs = [], []
        for k in range(n):
            recv, send = ctx.Pipe(duplex=False)
            _widen(recv)
            proc = ctx.Process(target=_draw_windows, args=(send, starts[k::n]), daemon=True)
            proc.start()
            send.close()
            self.conns.append(recv)
            self.procs.append(proc)

    @classmethod
    def of(cls, conns: list, total: int, stop) -> "_Drawers":
        """Processes started elsewhere (`Prefork`), read from `conns`, ended by `stop`."""
        self = cls.__new__(cls)
        self.conns, self.procs, self.total, self.finished = conns, [], total, False
        self.stop = stop
        return self

    def __iter__(self) -> Iterator[tuple[bytes, int]]:
        for i in range(self.total):
            try:
                html, events = self.conns[i % len(self.conns)].recv()
            except EOFError:
                raise ExportError("a process drawing the export ended before its part was drawn")
            if html is None:
                raise ExportError(f"drawing the export failed: {events}")
            yield html, events
        self.finished = True

    def stop(self) -> None:
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        for proc in self.procs:
            proc.join()
        for conn in self.conns:
            conn.close()


class Prefork:
    """The drawing processes of a long HTML export, forked by the command line before it reads the
    session (`start`): while this process builds the index — half a second for a 100 MB session,
    with the machine's other cores idle — the first compiles the templates, Pygments' file-name
    patterns and the Python lexer's joined patterns, then forks the others, which inherit them
    (each would compile its own). `drawers` hands them the export once the index is built (pickled:
    3 MB and a fiftieth of a second for a 100 MB session) with the windows to draw; they draw as
    `_Drawers`' processes do. `stop` ends them when the export is drawn in this process (a short
    session) or stops.

    Processes are forked with `os.fork` (a multiprocessing process may not fork its own), and end
    with `os._exit` (never running this process's exit handlers or flushing its output twice).
    A drawing process also ends when this one closes its ends of their pipes, or dies."""

    def __init__(self, n: int, media_limit: int):
        self.n = n
        self.media_limit = media_limit
        self.tasks: list = []  # this process's ends: the export sent to each, the HTML read back
        self.outs: list = []
        self.pid: int | None = None  # the first drawing process (it forks the others) until ended
        self.first: int | None = None  # (its id, kept)
        self.pids: list[int] = []  # the others, as the first one said
        self.drawing: _Drawers | None = None

    @classmethod
    def start(cls, n: int, media_limit: int) -> "Prefork | None":
        """`n` drawing processes, or None where processes cannot be forked."""
        if n < 2 or not hasattr(os, "fork") or "fork" not in multiprocessing.get_all_start_methods():
            return None
        self = cls(n, media_limit)
        ends = []  # each process's ends: (read its task, write its HTML)
        for _ in range(n):
            task_r, task_w = os.pipe()
            out_r, out_w = os.pipe()
            self.tasks.append(Connection(task_w, readable=False))
            out = Connection(out_r, writable=False)
            _widen(out)
            self.outs.append(out)
            ends.append((task_r, out_w))
        ours = [c.fileno() for c in self.tasks + self.outs]
        pid = os.fork()
        if pid == 0:  # the first drawing process
            code = 1
            try:
                for fd in ours:
                    os.close(fd)
                _prefork_first(ends, media_limit)
                code = 0
            finally:
                os._exit(code)
        self.pid = self.first = pid
        for task_r, out_w in ends:
            os.close(task_r)
            os.close(out_w)
        return self

    def drawers(self, export: "Export", starts: range) -> "_Drawers | None":
        """Hand the processes `export`, each to draw its share of `starts` (window k by process
        k % n); None (and the processes ended) when the export cannot be sent to them (a format
        whose reading state holds a lock: processes forked from this one draw it)."""
        try:
            task = pickle.dumps((export, starts, len(self.tasks)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            self.stop()
            return None
        try:
            kind, pids = self.outs[0].recv()  # the first process names the ones it forked
            if kind != "pids":
                raise ExportError(f"drawing the export failed: {pids}")
            self.pids = pids
            for conn in self.tasks:
                conn.send_bytes(task)
        except (EOFError, OSError):
            self.stop()
            raise ExportError("a process drawing the export ended before its part was drawn")
        except BaseException:
            self.stop()
            raise
        self.drawing = _Drawers.of(self.outs, len(starts), self.stop)
        return self.drawing

    def stop(self) -> None:
        """End the processes (drawn or not) and close this process's ends of their pipes."""
        for conn in self.tasks + self.outs:
            conn.close()
        self.tasks, self.outs = [], []
        # every window read: they are ending (the first reaps the others); else they are ended
        done = self.drawing is not None and self.drawing.finished
        for pid in self.pids if not done else ():
            _kill(pid)  # (a grandchild: the first process reaps it, or init does)
        if self.pid is not None:
            if not done:
                _kill(self.pid)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _prefork_first(ends: list, media_limit: int) -> None:
    """The first drawing process of a `Prefork`: compile what drawing uses, fork the others, say
    who they are, then draw its own share (and reap the others)."""
    env = _environment(media_limit)
    _warm(env)
    lexing.WARM = 0  # (see _draw_windows)
    _warm_lexers()
    gc.freeze()  # what is compiled stays: the forked processes share its pages
    pids = []
    for k in range(1, len(ends)):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                for j, (task_r, out_w) in enumerate(ends):
                    if j != k:
                        os.close(task_r)
                        os.close(out_w)
                _prefork_draw(k, *ends[k], env, media_limit)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    for task_r, out_w in ends[1:]:
        os.close(task_r)
        os.close(out_w)
    out = Connection(ends[0][1], readable=False)
    try:
        out.send(("pids", pids))
    except OSError:
        pass
    try:
        _prefork_draw(0, ends[0][0], out, env, media_limit)
    finally:
        for pid in pids:  # done drawing, or this process stops: the others are reaped here
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _prefork_draw(k: int, task_r: int, out, env, media_limit: int) -> None:
    """Process `k` of a `Prefork`: wait for the export, draw windows k, k + n, … of it."""
    task = Connection(task_r, writable=False)
    if type(out) is int:
        out = Connection(out, readable=False)
    try:
        got = task.recv_bytes()
    except (EOFError, OSError):
        return  # not needed (a short session), or the export stopped
    finally:
        task.close()
    x, starts, n = pickle.loads(got)
    del got
    gc.freeze()  # the index lives as long as the export: out of every collection
    tl = Timeline(x.idx, expand=STRING_LIMIT)
    if x.media_limit != media_limit:
        env = _environment(x.media_limit)
    _draw_in(out, x, tl, env, starts[k::n])


def _warm_lexers() -> None:
    """Compile the Python lexer's joined patterns (what highlighting needs first in most coding
    sessions: a fifth of a second per process) by highlighting a piece of Python."""
    try:
        sample = Path(render.__file__).read_text(encoding="utf-8")[:HIGHLIGHT_LIMIT]
    except (OSError, UnicodeDecodeError):  # (an installation without sources: compiled on use)
        sample = "def f(x: int) -> str:\n    return f'{x}'  # a comment\n"
    render.highlight(sample, filename="sample.py", cap=HIGHLIGHT_LIMIT)
    render.pretty_json({"warm": [1, "text", True, None]}, cap=HIGHLIGHT_LIMIT)
    lexing.fill()  # (and in the states the sample reached, what it did not meet)


def _widen(conn) -> None:
    """A pipe of 1 MB rather than 64 KB where the system allows it: a window's HTML (about a
    megabyte) then goes through in a few writes, and the exporting process reads it in a few
    wake-ups instead of a hundred (half its reading time)."""
    try:
        import fcntl

        fcntl.fcntl(conn.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass  # (not Linux, or a lower limit: the default size works, a little slower)


def _draw_windows(conn, starts: range) -> None:
    """A forked process's part of an export: (HTML bytes, events) of each window it was given, or
    (None, why) when drawing failed."""
    x, tl, env = _FORKED
    # a worker draws hundreds of windows: its lexers take their joined patterns at once (reading
    # the first 50,000 characters of each the plain way spares a server's first page, not this)
    lexing.WARM = 0
    _draw_in(conn, x, tl, env, starts)


def _draw_in(conn, x: "Export", tl: Timeline, env, starts) -> None:
    # a drawing process makes a few hundred thousand short-lived containers (events, views, a
    # card's pieces) and keeps nothing: collected every 700 of them (Python's default), they cost
    # a twentieth of its time in collections that found next to nothing; every 10,000 they cost
    # a third of that, and a few megabytes
    gc.set_threshold(10_000, 20, 100)
    try:
        for a in starts:
            html, events = x._html_window(a, tl, env)
            conn.send((html.encode("utf-8", "surrogatepass"), events))
    except Exception as e:  # said to the exporting process, which stops with it
        conn.send((None, f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


# what drawing a window compiles on first use (the templates of an event, Pygments' file-name
# patterns): a fifth of a second per process
_PARTIALS = ("_message.html", "_macros.html", "_result_ref.html",
             "_message_broken.html")


def _warm(env) -> None:
    for name in _PARTIALS:
        env.get_template(name)
    render.warm_file_names()


# --- JSON shape (shared with the web app's .json twin) --------------------------------------------


def call_dict(idx: SessionIndex, c: ToolCall) -> dict:
    """A tool call of the state map as plain JSON."""
    return {"name": c.name, "status": c.status, "state": c.state, "is_error": c.is_error,
            "duration": c.duration, "subthread": c.subthread, "unanswered": idx.unanswered(c),
            "call_event": idx.threads[c.call[0]].ids[c.call[1]] if c.call else None,
            "result_event": idx.threads[c.result[0]].ids[c.result[1]] if c.result else None}


def event_dict(ev: Event, full: bool = False) -> dict:
    """An event as plain JSON. Without `full`, inline media payloads are summarised by size."""
    return {
        "id": ev.id, "line": ev.line, "thread": ev.thread, "role": ev.role, "kind": ev.kind,
        "author": ev.author, "recipient": ev.recipient,
        "timestamp": ev.timestamp.isoformat() if ev.timestamp else None,
        "timestamp_raw": ev.timestamp_raw if isinstance(ev.timestamp_raw, (str, int, float)) else None,
        "hidden": ev.hidden, "hidden_reason": ev.hidden_reason, "model": ev.model,
        "parent": ev.parent,
        "blocks": [_block_dict(b, full) for b in ev.blocks],
    }


def _block_dict(b, full: bool = False) -> dict:
    d = {"kind": b.kind}
    for f in b.__slots__:
        v = getattr(b, f)
        if f == "content" and isinstance(v, list):
            v = [_block_dict(x, full) if hasattr(x, "kind") else x for x in v]
        elif f == "data" and isinstance(v, str) and len(v) > 200 and not full:
            v = f"<{len(v)} base64 chars>"
        d[f] = v
    return d


# --- helpers -------------------------------------------------------------------------------------


class _Ref:
    """What the page's header partial reads from a session reference."""

    def __init__(self, label: str, idx: SessionIndex):
        self.label = label
        self.path = idx.main


@lru_cache(maxsize=4)
def _environment(media_limit: int):
    """The export's template environment, kept: compiling the templates takes longer than
    exporting a small session."""
    return environment(Urls, caps=(_NO_CAP, _NO_CAP), media_limit=media_limit, exporting=True,
                       highlight_cap=HIGHLIGHT_LIMIT)


def _asset(kind: str) -> str:
    """The stylesheet (Pygments' styles, the app's, the export's additions) or the script, as text
    to inline. Read once per process."""
    got = _ASSETS.get(kind)
    if got is None:
        static = resource_dir("static")
        if kind == "css":
            got = "\n".join((static / n).read_text() for n in ("pygments.css", "app.css"))
        else:
            got = (static / "export.js").read_text()
        if "</" in got:
            raise ValueError(f"static {kind} must not contain '</' (it is inlined in the export)")
        _ASSETS[kind] = got
    return got


_ASSETS: dict[str, str] = {}


def _dumps(value) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
    except TypeError:  # nested deeper than orjson writes: cut, with a note where (reader.DEEP)
        return orjson.dumps(reader.cap_depth(value, 2 * reader.MAX_DEPTH),
                            option=orjson.OPT_NON_STR_KEYS, default=str).decode()


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _esc(text: str) -> str:
    from markupsafe import escape

    return str(escape(text))


def _spawns(v: EventView) -> bool:
    """Whether drawing this view may leave a sub-agent's mark: a call it draws (or the event its
    result is in draws) spawned a thread."""
    for cv in (*v.calls.values(), *v.refs.values(), *v.again.values()):
        if cv.threads:
            return True
        owner = cv.result_owner
        if owner is not None and owner is not v and any(c.threads for c in owner.calls.values()):
            return True
    return False


def _dom_key(name: str) -> str:
    from .templating import dom_id

    return dom_id("", name)


# --- Markdown ------------------------------------------------------------------------------------


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that no run of backticks inside the text can close."""
    # (most outputs hold no backtick: a look for one is a hundred times faster than the pattern)
    longest = max((len(m) for m in _TICKS.findall(text)), default=0) if "`" in text else 0
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}\n"


def _quote(text: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in text.rstrip("\n").split("\n")) + "\n"


def _media_head(b) -> str:
    """"image", or "document “report.pdf”" when the source names the file (the page says so too):
    a file sent by its id or name holds no bytes, and its name is all there is to tell it by."""
    return f"{b.media} “{_inline(b.name)}”" if b.name else b.media


def _inline(text: str) -> str:
    """One line of untrusted text for a heading or a list item."""
    one = " ".join(str(text).split())
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", one)


class _Markdown:
    """Markdown for pasting into an issue: a heading per turn (a user prompt and what follows), a
    smaller one per message, tool calls with their input and result fenced, thinking quoted,
    sub-agents quoted under their call. Hidden events (progress lines, snapshots) are left out."""

    def __init__(self, export: Export):
        self.x = export
        self.turn = 0

    def document(self) -> Iterator[str]:
        x = self.x
        s = x._summary()
        out = [f"# {_inline(s.title or x.label)}\n"]
        facts = [("format", s.format)]
        if s.started:
            shown = timestamps.as_written if s.zoneless == "all" else timestamps.human_utc
            facts.append(("started", shown(timestamps.from_epoch(s.started))))
        if s.zoneless == "all":  # as the page's header says it, once
            facts.append(("times", "as written in the file, time zone unknown"))
        if s.duration is not None:
            facts.append(("duration", timestamps.span(s.duration)))
        facts += [("agent steps", s.steps) if s.steps and not s.messages
                  else ("messages", s.messages), ("tool calls", s.tool_calls)]
        if s.errors:
            facts.append(("errors", s.errors))
        if s.models:
            facts.append(("models", ", ".join(s.models)))
        facts.append(("file", Path(x.idx.main).name))
        ids = x._range_ids()
        if ids:
            facts.append(("range", f"messages {ids[0]} to {ids[1]}"))
        out.append("\n".join(f"- **{k}**: {_inline(v)}" for k, v in facts) + "\n")
        hidden = x._hidden()
        out.append(f"\n*Exported by session-viewer {__version__} on "
                   f"{timestamps.human_utc(timestamps.from_epoch(x.now))}"
                   + (f"; {hidden} hidden event{'' if hidden == 1 else 's'} (progress, snapshots…) left out" if hidden else "")
                   + (". Secrets are redacted." if x.redactor else ".") + "*\n")
        yield "\n".join(out)
        tl = Timeline(x.idx, expand=STRING_LIMIT)
        yield from self._thread(x.sel.thread, tl, 0)
        for name in x.threads:
            if name != x.sel.thread and not x._linked(name):
                th = x.idx.threads[name]
                yield f"\n## Thread {_inline(th.label or name)} (not linked to a call)\n\n"
                yield from self._thread(name, tl, 1)
        if x.redactor is not None:
            yield self._report()

    def _report(self) -> str:
        rows = self.x.tally.rows()
        if not rows:
            return "\n---\n\n**Redacted:** nothing was found to redact.\n"
        lines = ["\n---\n", "## Redacted\n", "| kind | secrets | places |", "|---|---:|---:|"]
        lines += [f"| {k} | {n} | {p} |" for k, n, p in rows]
        return "\n".join(lines) + "\n"

    def _thread(self, name: str, tl: Timeline, depth: int) -> Iterator[str]:
        for v in self.x._windows(name, tl):
            text = self._event(v, depth, tl)
            if text:  # a blank line after each: the next (a streamed turn's next block) must not
                # run on into this one's quote or paragraph
                yield _quote(text) + ">\n" if depth else text + "\n"

    def _event(self, v: EventView, depth: int, tl: Timeline) -> str:
        ev = v.ev
        if ev.hidden:
            return ""
        parts = []
        anchor = f'<a id="m-{_esc(ev.id)}"></a>'
        when = timestamps.human_utc(ev.timestamp)
        if ev.timestamp_assumed_utc:  # no zone in the file: as written (a lone one says so)
            when = timestamps.as_written(ev.timestamp) + (
                "" if self.x.idx.summary.zoneless == "all" else ", no zone")
        who = ev.author or ("tool result" if ev.role == "tool" else ev.role)
        if ev.recipient:
            who = f"{who} → {ev.recipient}"
        prompt = ev.role == "user" and ev.kind == "message" and any(
            b.kind in ("text", "media") for b in ev.blocks)
        if prompt and depth == 0:
            self.turn += 1
            parts.append(f"\n## Turn {self.turn} · {_inline(who.capitalize())}"
                         + (f" · {when}" if when else "") + f"\n{anchor}\n")
        elif not v.continued and not (v.refs and len(v.refs) == len(ev.blocks)):
            level = "###" if depth == 0 else "####"
            extra = " · ".join(x for x in (ev.model, when) if x)
            # as the page's chip says it: spaced from the name, words for underscores, and not
            # when it only repeats the role (_inline trims, so the space is added after it)
            kind = "" if ev.kind in ("message", "tool_result", "comm", ev.role) else \
                f" ({_inline(ev.kind.replace('_', ' '))})"
            parts.append(f"\n{level} {_inline(who.capitalize())}{kind}"
                         + (f" · {_inline(extra)}" if extra else "") + f"\n{anchor}\n")
        if v.dropped:
            parts.append(f"*dropped by a rewind — the conversation went on from [this prompt](#m-{v.dropped})*\n")
        if v.rewound:
            first, n = v.rewound
            parts.append(f"*↩ rewound: sent after going back to before [this message](#m-{first}); the {n} "
                         f"message{'s' if n != 1 else ''} from there on {'were' if n != 1 else 'was'} "
                         "dropped from the conversation*\n")
        for b in ev.blocks:
            got = self._block(b, v, depth, tl)
            if got:
                parts.append(got)
        if v.summarized:
            first, n = v.summarized
            parts.append(f"*↳ summarized: the {n} message{'s' if n != 1 else ''} from [this message](#m-{first}) on; "
                         "kept verbatim: what came before it"
                         + (f", from [this message](#m-{v.kept_from}) on*\n" if v.kept_from else "*\n"))
        elif v.kept_from:
            parts.append(f"*↳ kept verbatim from [this message](#m-{v.kept_from}) on; what came before "
                         "it was summarized*\n")
        return "\n".join(parts)

    def _block(self, b, v: EventView, depth: int, tl: Timeline) -> str:
        kind = b.kind
        if kind == "text":
            return b.text.strip() + "\n" if b.markdown else fence(b.text)
        if kind == "thinking":
            if b.redacted or not b.text.strip():
                return "> *Thinking not recorded.*\n"
            return _quote("**Thinking**\n\n" + b.text.strip())
        if kind == "tool_use":
            cv = v.calls.get(b.id)
            return self._call(cv, b, depth, tl) if cv else ""
        if kind == "tool_result":
            rc = v.again.get(b.tool_use_id)
            if rc is not None:
                mcp = tools.mcp_name(rc.call.name, rc.fmt)
                name = f"[{_inline(mcp.tool if mcp else rc.call.name or 'a call')}](#m-{rc.call_event})"
                if b.tool_use_id in v.same:
                    return f"*The result of {name} written again, the same as the one its call shows.*\n"
                near = v.near.get(b.tool_use_id)
                if near is not None:  # what changed from the first, as the page shows it
                    return f"**Another result** of {name}, what changed from the first (its call " \
                           f"shows it){' · error' if b.is_error else ''}\n\n" + fence(
                               "\n".join(_diff_line(d) for d in render.diff(near.old, near.new)), "diff") \
                        + "\n*The whole output:*\n\n" + self._content(b.content)
                return f"**Another result** of {name} (its call shows the first)" \
                       f"{' · error' if b.is_error else ''}\n\n" + self._content(b.content)
            if b.tool_use_id in v.refs or b.tool_use_id in v.calls:
                return ""  # shown with its call
            return "**Orphan result** (no call with this id)\n\n" + self._content(b.content)
        if kind == "media":
            return f"*[{_media_head(b)}: {b.media_type or 'unknown type'}, {render.human_size(b.size)}" \
                   f"{' ' + b.url if b.url and not b.data else ''}]*\n"
        if kind == "cached":
            return "*Cached history:*\n\n" + fence(b.text)
        if kind == "unparsed":
            return f"**Unparsed line {b.line}**: {_inline(b.reason)}\n\n" + fence(b.raw)
        if kind == "notice":
            detail = "" if b.detail is None or isinstance(b.detail, str) else "\n" + fence(
                reader.json_text(b.detail), "json")
            return f"*{_inline(b.text)}*\n{detail}"
        if kind == "data":
            label = "the record as written" if b.label == "unknown" else b.label  # as the page says
            return (f"*{_inline(label)}*\n\n" if label else "") + fence(
                reader.json_text(b.value), "json")
        return ""

    def _call(self, cv: CallView, use, depth: int, tl: Timeline) -> str:
        call = cv.call
        state = "never answered" if call.state == PENDING and cv.unanswered else \
            state_badge(call.state)[1]
        mcp = tools.mcp_name(call.name, cv.fmt)
        head = (f"**Tool: {_inline(mcp.tool)}** ({mcp.kind} {_inline(mcp.server)}) · {state}" if mcp
                else f"**Tool: {_inline(call.name or 'tool')}** · {state}")
        if cv.duration:
            head += f" · {cv.duration}"
        summary = tools.summary(call.name, use.input)
        out = [head + (f" — `{summary.replace('`', '')}`" if summary else "") + "\n"]
        inp, view = use.input, tools.view_of(call.name, use.input)
        if use.input_raw:
            out.append(fence(use.input_raw))
        elif view == "shell":
            out.append(fence("$ " + tools.command_of(inp), "sh"))
        elif view == "edit":
            for e in tools.edits(inp):
                head = f"`{e.path or tools.path_of(inp) or ''}`" + (f" ({e.action})" if e.action else "")
                out.append(f"{head}\n\n" + fence(
                    "\n".join(_diff_line(d) for d in render.diff(e.old, e.new)), "diff"))
        elif view == "write":
            # the fields the page reads (tools.py): a writer may call them `path`, `text`…
            out.append(f"`{tools.path_of(inp) or ''}`\n\n" + fence(tools.content_of(inp)))
        elif view == "agent":
            out.append(_quote(str(inp.get("prompt"))))
        elif view == "questions":  # each question, its options, [x] where the person picked
            for i, q in enumerate(call_questions(inp, cv.result), 1):
                out.append(f"{i}. " + (f"**{_inline(q.header)}** " if q.header else "") + _inline(q.question)
                           + (" *(several answers allowed)*" if q.multi else ""))
                out += [f"   - [{'x' if o.chosen else ' '}] {_inline(o.label)}"
                        + (f" — {_inline(o.description)}" if o.description else "") for o in q.options]
                if q.own:
                    out.append(f"   - [x] {_inline(q.own)} *(their own answer)*")
                if q.notes:
                    out.append(f"   - notes: {_inline(q.notes)}")
            out.append("")
        elif view == "tasks":  # each task: its title, what its sub-agent is told, its settings
            for i, t in enumerate(tools.new_tasks(call.name, inp) or (), 1):
                out.append(f"{i}. " + (f"**{_inline(t.title)}**" if t.title else "task")
                           + (f" — {_inline(t.description)}" if t.description else ""))
                out += [f"   - {_inline(k.replace('_', ' '))}: {_inline(text)}" for k, text in t.said]
                out += [f"   - {_inline(k)}: {_inline(line)}" for k, line in t.fields]
            out.append("")
        elif view == "undo":
            pass  # the summary says it: the file whose last edit is undone
        elif view == "kv" and len(inp) == 1 and summary:
            pass  # the one value is the summary already
        elif view == "fields":
            out += [f"- {_inline(k)}: {_inline(v if isinstance(v, str) else reader.json_text(v))}"
                    for k, v in inp.items() if tools.is_short(v) and k not in tools.SIDE_FIELDS]
            out += [f"\n{_inline(k)}:\n\n" + fence(v) for k, v in inp.items()
                    if not tools.is_short(v) and k not in tools.SIDE_FIELDS]
        elif inp not in (None, {}):
            out.append(fence(reader.json_text(inp), "json"))
        if cv.result is not None:
            label = "Error" if call.is_error else "Result"
            out.append(f"{label}:\n\n" + self._content(cv.result.content))
        elif call.named:
            out.append(f"*No result: {state_badge(call.state)[1]}.*\n")
        elif call.result is not None:  # answered out of sight (a Responses stream log)
            out.append("*Answered: the output is not in this file.*\n")
        elif cv.unanswered:
            out.append("*No result: the session moved on or ended without one.*\n")
        for th in cv.threads:
            if th.name in self.x.threads:
                out.append(f"**Sub-agent: {_inline(th.label)}** ({th.count} events)\n")
                out.append("".join(self._thread(th.name, tl, depth + 1)))
        return "\n".join(out)

    def _content(self, blocks) -> str:
        parts = []
        for c in blocks or ():
            if getattr(c, "kind", "") == "text":
                parts.append(fence(render.strip_ansi(c.text)) if c.text.strip() else "")
            elif getattr(c, "kind", "") == "media":
                parts.append(f"*[{_media_head(c)}: {c.media_type or 'unknown type'}, "
                             f"{render.human_size(c.size)}]*\n")
            elif hasattr(c, "kind"):
                parts.append(self._block(c, None, 0, None) or "")
        return "\n".join(p for p in parts if p) or "*(empty result)*\n"


def _diff_line(d) -> str:
    text = "".join(t for t, _ in d.parts)
    return "…" if d.op == "…" else f"{d.op if d.op in '+-' else ' '}{text}"
