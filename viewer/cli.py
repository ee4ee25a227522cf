"""The `session-viewer` command: `serve` the web app, `check` a session without a server.

Errors a user can cause (a missing path, an unreadable file, an unknown format, a port in use) are
one plain line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import secrets
import signal
import socket
import sys
import webbrowser
from pathlib import Path

import click
import orjson

from . import __version__, files, formats
from .formats.detect import NotTranscript
from .index import SessionIndex
from .store import Store, main_label
from .timeline import load_events


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="session-viewer")
def main() -> None:
    """Open AI-agent session transcripts in a browser."""


@main.command(short_help="Serve folders of sessions in the browser.")
@click.argument("roots", nargs=-1, type=click.Path(path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535),
              help="Port to listen on.")
@click.option("--open", "open_browser", is_flag=True, help="Open the browser at the list page.")
@click.option("--token", envvar="SESSION_VIEWER_TOKEN",
              help="Access token (required, and generated if absent, off loopback).")
@click.option("--allow-remote", is_flag=True,
              help="Needed to listen on a non-loopback interface.")
@click.option("--cache-dir", type=click.Path(path_type=Path), help="Where the index cache lives.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the index cache.")
@click.option("--no-watch", is_flag=True, help="Do not watch files for live updates.")
@click.option("--follow-symlinks", is_flag=True,
              help="Follow symlinks to files outside the ROOTS (by default they are skipped).")
@click.option("--redact", is_flag=True,
              help="Replace secrets (keys, tokens, passwords) in everything served.")
@click.option("-v", "--verbose", is_flag=True, help="Log more (INFO messages, e.g. how files are watched).")
def serve(roots, host, port, open_browser, token, allow_remote, cache_dir, no_cache, no_watch,
          follow_symlinks, redact, verbose) -> None:
    """Serve ROOTS: folders of sessions, session folders or transcript files.

    With no ROOT, serves the sessions bundled with the viewer. A Claude Code projects folder
    (~/.claude/projects) works as a ROOT.
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.INFO)  # the access log (web/security.py)
    for r in roots:
        if not r.expanduser().exists():
            _fail(f"no such file or folder: {r}")
    loopback = _is_loopback(host)
    if not loopback:
        if not allow_remote:
            _fail(f"refusing to listen on {host}: add --allow-remote (a token will be required)")
        token = token or secrets.token_urlsafe(24)
    problem = port_problem(host, port)
    if problem:
        _fail(problem)
    from .web import create_app

    app = create_app({
        "ROOTS": [str(r.expanduser()) for r in roots] or None,
        "CACHE_DIR": str(cache_dir) if cache_dir else None,
        "NO_CACHE": no_cache,
        "TOKEN": token,
        "WATCH": not no_watch,
        "FOLLOW_SYMLINKS": follow_symlinks,
        "REDACT": redact,
    })
    try:
        server = make_server(host, port, app)
    except OSError as e:  # taken between the check and now
        _fail(port_problem(host, port) or f"cannot listen on {host}:{port}: {e.strerror or e}")
    # the address is ours: only now is the URL worth printing
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    click.echo(f"session-viewer serving {', '.join(map(str, app.extensions['viewer'].store.roots))}")
    click.echo(f"  open {url}")
    if redact:
        click.echo("  secrets are redacted in every page, stream, raw view and download")
    if open_browser:
        webbrowser.open(url)
    # a terminated server still finishes its cache writes
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        viewer = app.extensions["viewer"]
        if viewer.pump:
            viewer.pump.stop()  # the open streams end; browsers reconnect to the next server
        if viewer.watcher:
            viewer.watcher.stop()
        viewer.store.indexer.stop(timeout=1.0)  # a pass in progress is simply left unfinished
        viewer.store.flush()


def _cpus() -> int:
    """The processors this process may use (all of the machine's where the system cannot say)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def make_server(host: str, port: int, app):
    """The built-in server: a thread per request at a time (kept for the next one), and a listen
    queue deep enough for a burst of connections — a team's tabs, a dashboard, a load test (see
    web/serving.py)."""
    from .web.security import RequestHandler
    from .web.serving import Server

    return Server(host, port, app, RequestHandler)


def port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port, in words for the command line, or None.
    Binds a socket the way the server will (SO_REUSEADDR, so a closed server's TIME_WAIT does
    not count), and for a port in use names the process holding it when this machine says."""
    err = _bind_error(host, port)
    if err is None:
        return None
    if err.errno != errno.EADDRINUSE:
        return f"cannot listen on {host}:{port}: {err.strerror or err}"
    holder = port_holder(port)
    who = f"by {holder}" if holder else "by another program"
    free = next((p for p in range(port + 1, min(port + 50, 65536)) if _bind_error(host, p) is None),
                None)
    hint = f"--port {free}" if free else "--port"
    return f"port {port} on {host} is already in use {who}; choose another with {hint}"


def _bind_error(host: str, port: int) -> OSError | None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        return OSError(errno.EADDRNOTAVAIL, str(e))
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            return e
    return None


def port_holder(port: int) -> str | None:
    """"pid N (command line)" of the process listening on a TCP port, from Linux's /proc; None
    where that cannot be seen (another user's process, another system)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            # local address "HEXIP:HEXPORT", state 0A = LISTEN, inode in column 10
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{cols[9]}]")
    if not inodes:
        return None
    for pid in filter(str.isdigit, _listdir("/proc")):
        for fd in _listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") not in inodes:
                    continue
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            except OSError:
                continue
            return f"pid {pid}" + (f" ({cmd[:120]})" if cmd else "")
    return None


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"session-viewer: {message}", err=True)
    sys.exit(code)


@main.command(short_help="Write one session to an HTML, Markdown or JSON file.")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="The file to write (default: named after the session, here; '-' for stdout).")
@click.option("-f", "--format", "fmt", type=click.Choice(["html", "md", "json"]),
              help="html (one self-contained file), md (Markdown) or json (the canonical events). "
                   "Default: from the output's extension, else html.")
@click.option("--redact", is_flag=True, help="Replace secrets (keys, tokens, passwords).")
@click.option("--from", "first", metavar="ID", help="Start at this message (its permalink id).")
@click.option("--to", "last", metavar="ID", help="End at this message (included).")
@click.option("--max-media", type=float, default=6.0, show_default=True, metavar="MB",
              help="Images, audio and video larger than this are left out of an HTML export.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), metavar="N",
              help="Processes drawing a long session's HTML (default: one per CPU this process "
                   "may use; a redacted export uses one).")
def export(path: Path, output: Path | None, fmt: str | None, redact: bool, first: str | None,
           last: str | None, max_media: float, jobs: int | None) -> None:
    """Write a session (or a range of it) to one file a colleague can open anywhere."""
    import gc
    import os
    import tempfile
    import time

    from .export import PREFORK_FROM, Export, ExportError, Prefork

    started = time.perf_counter()
    try:
        main_file = _main_file(path, "export")
    except _Unusable as e:
        _fail(str(e), 1)
    if fmt is None:
        ext = output.suffix.lower().lstrip(".") if output and str(output) != "-" else ""
        fmt = {"markdown": "md", "htm": "html"}.get(ext, ext) if ext in (
            "html", "htm", "md", "markdown", "json") else "html"
    media_limit = int(max_media * (1 << 20) * 4 / 3)
    workers = jobs or _cpus()
    prefork = None
    if fmt == "html" and not redact and workers > 1 and _size(main_file) >= PREFORK_FROM:
        # a long session's drawing processes get ready while this one reads it
        prefork = Prefork.start(workers, media_limit)
    try:
        idx = SessionIndex(main_file).build()
    except OSError as e:
        _fail(f"cannot read {main_file}: {e.strerror or e}", 1)
    except NotTranscript as e:
        _fail(str(e), 1)
    if idx.format == "unknown" and idx.summary.events:
        _fail(f"{main_file}: unknown format (no adapter recognises its records)", 1)
    gc.freeze()  # the index lives as long as the export: keep it out of every collection
    redactor = None
    if redact:
        from .redact import Redactor

        redactor = Redactor()
    label = main_label(main_file)
    try:
        x = Export(idx, fmt, first=first, last=last, redactor=redactor, label=label,
                   media_limit=media_limit, workers=workers, prefork=prefork)
    except ExportError as e:
        _fail(f"cannot export: {e}", 1)
    if output is not None and str(output) == "-":
        x.write(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        _export_note(x, None, 0, started)
        return
    target = output or Path(x.filename)
    if target.is_dir():
        target = target / x.filename
    # written beside the target and renamed: a failed export never leaves half a file
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    except OSError as e:  # a folder that is missing or not writable
        _fail(f"cannot write {target}: {e.strerror or e}", 1)
    try:
        with os.fdopen(fd, "wb") as f:
            size = x.write(f)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would keep the colleague out
        os.replace(tmp, target)
    except ExportError as e:
        os.unlink(tmp)
        _fail(f"cannot export: {e}", 1)
    except OSError as e:
        os.unlink(tmp)
        _fail(f"cannot write {target}: {e.strerror or e}", 1)
    _export_note(x, target, size, started)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _export_note(x, target: Path | None, size: int, started: float) -> None:
    import time

    from .render import human_size

    where = f"wrote {target} ({human_size(size)}, " if target else "wrote "
    click.echo(f"{where}{x.events} events, {time.perf_counter() - started:.1f} s)", err=True)
    if x.redactor is not None:
        rows = x.tally.rows()
        if rows:
            click.echo("redacted: " + ", ".join(f"{n} {k}" + (f" ({p} places)" if p != n else "")
                                               for k, n, p in rows), err=True)
        else:
            click.echo("redacted: nothing looked like a secret", err=True)


@main.command(short_help="Report a session's format, events, tool calls and unparsed lines.")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--redact-report", is_flag=True,
              help="List what --redact would replace (kind and place, never the value).")
def check(path: Path, as_json: bool, redact_report: bool) -> None:
    """Read one session without a server and report what the viewer makes of it.

    Exits non-zero when the path cannot be checked (missing, unreadable, not a transcript) or its
    format is unknown; with --json the object then has an "error" key."""
    try:
        report = _report(_main_file(path), path, redact_report)
    except _Unusable as e:
        report = {"path": str(path), "error": str(e)}
    if as_json:
        click.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    elif "format" in report:
        _print_report(report)
    if report.get("error"):
        if not as_json:
            click.echo(f"session-viewer: {report['error']}", err=True)
        sys.exit(1)


class _Unusable(Exception):
    """A path `check` cannot report on: one line says why."""


def _main_file(path: Path, verb: str = "check") -> Path:
    """The transcript to check: the file itself, or the one session the server would find in the
    folder (its messages.jsonl, its one transcript, a Wolo session.json…); a session row of a
    database (`…/opencode.db/<session id>`), or the one session of a database."""
    if files.row_store(path) is not None:
        return path
    if not path.exists():
        raise _Unusable(f"no such file or folder: {path}")
    if not path.is_dir() and formats.row_store_named(path.name) is None:
        return path
    store = Store([path])
    found = store.sessions()
    if len(found) == 1:
        return Path(found[0].path)
    if not found and len(store.skipped) == 1:
        (file, why), = store.skipped.items()
        raise _Unusable(f"{file} is skipped: {why}")
    if not found:
        raise _Unusable(f"{path} holds no transcript (messages.jsonl, *.jsonl, or a known .json "
                        "document)")
    raise _Unusable(f"{path} holds {len(found)} sessions; name the one to {verb}, e.g. "
                    f"{found[0].path}")


def _report(main_file: Path, given: Path, redact_report: bool = False) -> dict:
    report: dict = {"path": str(given), "format": "unknown", "mode": None, "lines": 0, "events": 0,
                    "hidden": 0, "messages": 0, "steps": 0, "tool_calls": {}, "orphans": [],
                    "unanswered": [],
                    "unparsed": [], "threads": {}, "title": ""}
    try:
        idx = SessionIndex(main_file).build()
    except OSError as e:  # nothing was read: a report of zeros would only mislead
        raise _Unusable(f"cannot read {main_file}: {e.strerror or e}") from e
    except NotTranscript as e:
        raise _Unusable(str(e)) from e
    s = idx.summary
    main = idx.threads["main"]
    report.update({
        "format": s.format, "mode": main.mode, "lines": main.line, "events": s.events,
        "hidden": s.hidden, "messages": s.messages, "steps": s.steps,
        "tool_calls": idx.calls.by_state(),
        "orphans": sorted(idx.calls.orphans),
        "unanswered": sorted(c.id for c in idx.calls.calls.values() if idx.unanswered(c)),
        "title": s.title, "models": s.models, "agents": s.agents,
        "started": s.started, "ended": s.ended,
        "threads": {n: {"events": len(th), "lines": th.line, "label": th.label,
                        "parent_call": th.meta.get("parent_call"), "path": th.path}
                    for n, th in idx.threads.items() if n != "main"},
    })
    for name, th in idx.threads.items():
        for seq, kind in enumerate(th.kinds):
            if kind == "unparsed":
                ev = load_events(idx, name, seq, seq + 1)[0]
                b = ev.blocks[0]
                entry = {"line": th.lines[seq], "reason": b.reason}
                if name != "main":
                    entry["thread"] = name
                report["unparsed"].append(entry)
    if redact_report:
        from .redact import Redactor, report as redact_report_of

        report["redactions"] = redact_report_of(idx)
        report["title"] = Redactor().text(report["title"])
    if s.events == 0:
        report["empty"] = True  # a session with no records yet: nothing to recognise
    elif s.format == "unknown":
        report["error"] = f"{main_file}: unknown format (no adapter recognises its records)"
    return report


def _print_report(r: dict) -> None:
    click.echo(f"{r['path']}")
    if r.get("empty"):
        click.echo("  empty session: no records yet")
        return
    click.echo(f"  format      {r['format']}" + (f" ({r['mode']})" if r.get("mode") else ""))
    if r.get("title"):
        title = r["title"] if len(r["title"]) < 90 else r["title"][:89] + "…"
        click.echo(f"  title       {title}")
    click.echo(f"  lines       {r['lines']}")
    steps = f", {r['steps']} agent steps" if r.get("steps") else ""  # a run trace's (MARSYS)
    click.echo(f"  events      {r['events']} ({r['hidden']} hidden, {r['messages']} messages{steps})")
    calls = r["tool_calls"]
    total = sum(calls.values())
    states = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in calls.items() if n)
    click.echo(f"  tool calls  {total}" + (f" ({states})" if states else ""))
    if r["unanswered"]:
        click.echo(f"  unanswered  {len(r['unanswered'])}: {', '.join(r['unanswered'][:5])}")
    click.echo(f"  orphans     {len(r['orphans'])}" + (
        f": {', '.join(r['orphans'][:5])}" if r["orphans"] else ""))
    for name, th in r["threads"].items():
        link = f" ← {th['parent_call']}" if th.get("parent_call") else " (not linked to a call)"
        click.echo(f"  thread      {name}: {th['events']} events{link}")
    click.echo(f"  unparsed    {len(r['unparsed'])}")
    for u in r["unparsed"][:50]:
        where = f"{u['thread']} " if "thread" in u else ""
        click.echo(f"    {where}line {u['line']}: {u['reason']}")
    if len(r["unparsed"]) > 50:
        click.echo(f"    … and {len(r['unparsed']) - 50} more")
    if "redactions" in r:
        _print_redactions(r["redactions"])


def _print_redactions(found: list[dict]) -> None:
    secrets = {(f["kind"], f["number"]) for f in found}
    click.echo(f"  redact      {len(secrets)} secrets in {len(found)} places")
    kinds: dict = {}
    for f in found:
        k = kinds.setdefault(f["kind"], [set(), 0])
        k[0].add(f["number"])
        k[1] += 1
    for kind, (numbers, places) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        click.echo(f"    {kind:22s} {len(numbers):4d} secrets {places:5d} places")
    for f in found[:200]:
        where = f"{f['thread']} " if f.get("thread") else ""
        click.echo(f"    {where}line {f['line']} ({f['event']}, {f['field']}): "
                   f"[redacted: {f['kind']} #{f['number']}]  {f['hint']}")
    if len(found) > 200:
        click.echo(f"    … and {len(found) - 200} more (--json lists them all)")


if __name__ == "__main__":  # pragma: no cover
    main()
