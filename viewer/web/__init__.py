"""The web layer: a thin Flask adapter over the store, the index and the timeline.

`create_app(config)` builds everything the app needs and hangs it on `app.extensions["viewer"]`;
nothing is created at import time. Routes live in `routes.py`, URL building in `urls.py`, the
security headers and host / token checks in `security.py`, the live streams in `live.py`.
"""

from __future__ import annotations

import gc
import logging
import os
import threading

from flask import Flask, Request
from werkzeug.datastructures import ImmutableMultiDict

from ..cache import IndexCache
from ..store import Store
from ..templating import resource_dir
from .pagecache import PageCache

log = logging.getLogger(__name__)

WARM_LEXERS_AFTER = 5.0  # seconds after start-up (a restarted server's first pages come first)


def default_roots() -> list[str]:
    return [str(resource_dir("test_data") / "sessions")]


class Viewer:
    """What the app holds: the store of sessions, the watcher when live, the feeds the live streams
    read, the pages drawn this second (shared by the requests that ask for them, pagecache.py), and
    a count of the open event streams (at most `max_streams`, when set)."""

    def __init__(self, store: Store, watcher=None, max_streams: int | None = None):
        self.store = store
        self.watcher = watcher
        self.feeds = None
        self.pump = None  # writes the streams the server hands over (pump.py)
        self.max_streams = max_streams
        self.fts = None  # the full-text index (None when the cache is off)
        self.pages = PageCache()
        self.streams = 0
        self._lock = threading.Lock()

    def stream_opened(self) -> bool:
        """Count a new stream in, unless that would pass the limit."""
        with self._lock:
            if self.max_streams is not None and self.streams >= self.max_streams:
                return False
            self.streams += 1
            return True

    def stream_closed(self) -> None:
        with self._lock:
            self.streams -= 1


def config_from_env() -> dict:
    """Settings for servers that build the app themselves (gunicorn): SESSION_VIEWER_ROOTS
    (paths joined by the OS path separator), _TOKEN, _CACHE_DIR, _ALLOWED_HOSTS (commas), _NO_CACHE,
    _FOLLOW_SYMLINKS=1, _BIND (the address the server listens on, as given to it), _ALLOW_ANONYMOUS=1
    (serve other machines without a token: see security.py), _MAX_STREAMS, _STREAM_THREADS=1,
    _REDACT=1 (replace secrets in everything served)."""
    env = os.environ
    config: dict = {}
    if env.get("SESSION_VIEWER_ROOTS"):
        config["ROOTS"] = [os.path.expanduser(p) for p in env["SESSION_VIEWER_ROOTS"].split(os.pathsep) if p]
    if env.get("SESSION_VIEWER_TOKEN"):
        config["TOKEN"] = env["SESSION_VIEWER_TOKEN"]
    if env.get("SESSION_VIEWER_CACHE_DIR"):
        config["CACHE_DIR"] = env["SESSION_VIEWER_CACHE_DIR"]
    if env.get("SESSION_VIEWER_ALLOWED_HOSTS"):
        config["ALLOWED_HOSTS"] = [h.strip() for h in env["SESSION_VIEWER_ALLOWED_HOSTS"].split(",")]
    if env.get("SESSION_VIEWER_NO_CACHE"):
        config["NO_CACHE"] = True
    if env.get("SESSION_VIEWER_FOLLOW_SYMLINKS") == "1":
        config["FOLLOW_SYMLINKS"] = True
    if env.get("SESSION_VIEWER_ALLOW_ANONYMOUS") == "1":
        config["ALLOW_ANONYMOUS"] = True
    if env.get("SESSION_VIEWER_BIND"):
        config["BIND"] = env["SESSION_VIEWER_BIND"]
    if env.get("SESSION_VIEWER_MAX_STREAMS"):
        config["MAX_STREAMS"] = int(env["SESSION_VIEWER_MAX_STREAMS"])
    if env.get("SESSION_VIEWER_STREAM_THREADS") == "1":
        config["STREAM_THREADS"] = True
    if env.get("SESSION_VIEWER_REDACT") == "1":
        config["REDACT"] = True
    return config


class _Args(ImmutableMultiDict):
    """Query arguments whose `get` of an argument not given returns the default without raising
    and catching an exception inside (Werkzeug's does: a page reads a dozen arguments it was not
    given, and each exception built cost more than the rest of the lookup)."""

    def get(self, key, default=None, type=None):
        if key not in self:
            return default
        return super().get(key, default, type)


class _Request(Request):
    parameter_storage_class = _Args


def create_app(config: dict | None = None) -> Flask:
    """The app. With no config (as `gunicorn 'viewer.web:create_app()'` calls it), settings come
    from SESSION_VIEWER_* environment variables."""
    if config is None:
        config = config_from_env()
    app = Flask(
        "viewer",
        template_folder=str(resource_dir("templates")),
        static_folder=str(resource_dir("static")),
    )
    app.request_class = _Request
    app.config.from_mapping(
        ROOTS=None,  # folders / files to serve; None → the bundled test_data/sessions
        CACHE_DIR=None,  # None → the user cache directory
        NO_CACHE=False,
        TOKEN=None,  # required on every request when set (non-loopback serving)
        ALLOWED_HOSTS=[],  # extra Host header values accepted besides loopback names
        ALLOW_ANONYMOUS=False,  # answer other machines without a token (an explicit choice)
        BIND=None,  # the address a WSGI server listens on, when the settings say it
        FOLLOW_SYMLINKS=False,  # follow symlinks to files outside the roots (see files.py)
        WATCH=True,  # start the file watcher for live updates
        REDACT=False,  # replace secrets in everything served (`serve --redact`)
        HEARTBEAT=15.0,  # seconds between SSE heartbeats
        STREAM_LIFETIME=3600.0,  # seconds before a live stream is closed (the browser reconnects)
        MAX_STREAMS=500,  # open live streams allowed at once (beyond: "too many live viewers")
        STREAM_THREADS=False,  # True: every stream on a server thread of its own, never the pump
        INDEX_ALL=True,  # index every session of the roots in the background (list, search)
    )
    app.config.update(config or {})
    from . import archive, routes, security, templating  # noqa: F401 (archive adds routes)

    app.jinja_environment = templating.Environment  # (before anything makes app.jinja_env)

    security.check_exposure(app.config)  # before anything starts: no watcher, no threads
    roots = app.config["ROOTS"] or default_roots()
    cache = None if app.config["NO_CACHE"] else IndexCache(app.config["CACHE_DIR"])
    store = Store(roots, cache, follow_symlinks=app.config["FOLLOW_SYMLINKS"],
                  redact=bool(app.config["REDACT"]))
    watcher = None
    if app.config["WATCH"]:
        from .live import start_watcher

        watcher = start_watcher(store)
    viewer = app.extensions["viewer"] = Viewer(store, watcher, app.config["MAX_STREAMS"])
    from .feed import Feeds

    viewer.feeds = Feeds(app, store)
    store.indexer.listen(viewer.feeds)  # (cards a refresh changed with no event to carry them)
    if not app.config["STREAM_THREADS"]:
        from .pump import Pump

        viewer.pump = Pump(app.config["HEARTBEAT"], app.config["STREAM_LIFETIME"])
        viewer.feeds.on_publish = viewer.pump.wake
    if watcher:
        watcher.hub.listeners.append(viewer.feeds.poke_all)
    if cache is not None:
        from ..fts import FullText

        if store.redact:  # what the full-text index keeps (and its snippets show) is redacted
            from ..redact import Redactor

            viewer.fts = FullText(store, cache.path, transform=Redactor(numbered=False).text,
                                  transform_id="redact-1")
        else:
            viewer.fts = FullText(store, cache.path)
        store.indexer.listen(viewer.fts)  # fed by every index pass, caught up by the walker

    security.init_app(app)
    templating.init_app(app)
    app.register_blueprint(routes.bp)
    from . import find, live

    app.register_blueprint(find.bp)
    app.register_blueprint(live.bp)
    _warm_up(app)
    if app.config["INDEX_ALL"]:
        store.indexer.start()
    warming = threading.Timer(WARM_LEXERS_AFTER, _warm_lexers, args=(store,))
    warming.daemon = True
    warming.start()
    return app


def _warm_lexers(store) -> None:
    """Make the lexers of the files sessions most often show (render.COMMON_FILES), one at a time
    while no page is being answered."""
    from .. import render

    for name in render.COMMON_FILES:
        store.let_pages_first(most=1.0)
        render.warm_lexer(name)


def _warm_up(app: Flask) -> None:
    """Compile every template, load the renderers, open the index cache and read what it holds of
    the sessions now (Store.warm_up), so the first page a user opens does not pay for it
    (compiling the templates alone takes a few hundred milliseconds)."""
    from .. import render, usage

    store = app.extensions["viewer"].store
    if store.cache is not None:
        store.cache.open()
    store.warm_up()

    for name in app.jinja_env.list_templates(extensions=["html"]):
        app.jinja_env.get_template(name)
    render.markdown("*warm* `up`\n\n```python\nx = 1\n```")
    usage.PRICES.model("claude-sonnet-4-5")  # loads the price table (a fifth of a second)
    render.highlight("{}", "json")
    render.highlight("x = 1", filename="warm.py")  # compiles Pygments' table of file names
    render.ansi_segments("\x1b[1mwarm\x1b[0m")
    # what exists now lives as long as the app: keep it out of every later garbage collection
    # (indexing a big session allocates millions of short-lived objects)
    gc.freeze()
