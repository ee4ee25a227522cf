"""session-viewer: open AI-agent session transcripts in a browser.

Layering (see docs and ../shared/DESIGN.md): reader → formats → model events → index / timeline →
render → web. Everything but `viewer.web` and `viewer.cli` is plain Python with no Flask import.
"""

__version__ = "0.1.0"
