"""The parts of a tool call's card that are also sent alone (the live stream's and an early page's
out-of-band updates: `_call_state.html`, `_call_result.html`, `_call_thread.html`) are the same HTML
as in the card (templating.tool_call_html) that htmx swaps them into."""

from __future__ import annotations

import re

import pytest

from viewer.export import _environment, MEDIA_LIMIT, STRING_LIMIT
from viewer.index import SessionIndex
from viewer.templating import events_html, tool_call_html
from viewer.timeline import Timeline

from conftest import SESSIONS

SESSIONS_WITH_CALLS = [SESSIONS / "legion-feature-tour" / "messages.jsonl",
                       SESSIONS / "claude-project" / "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.jsonl"]


@pytest.mark.parametrize("path", SESSIONS_WITH_CALLS, ids=lambda p: p.parent.name)
def test_a_call_cards_parts_drawn_alone_are_the_cards_own(path):
    idx = SessionIndex(path).build()
    env = _environment(MEDIA_LIMIT)
    views = Timeline(idx, expand=STRING_LIMIT).events("main", 0, len(idx.threads["main"])).events
    seen = 0
    for v in views:
        card = events_html(env, [v], "k")
        for i, b in enumerate(v.ev.blocks):
            cv = v.calls.get(getattr(b, "id", None)) if b.kind == "tool_use" else None
            if cv is None:
                continue
            seen += 1
            whole = tool_call_html(env, cv, v, "k", f"b{i}")
            assert whole.startswith('<div class="tool') and whole in card
            for part in ("_call_state.html", "_call_result.html", "_call_thread.html"):
                alone = env.get_template(part).render(cv=cv, key="k")
                assert alone in whole, part
                # out of band: the same element, marked to be swapped in by its id
                oob = env.get_template(part).render(cv=cv, key="k", oob=True)
                assert 'hx-swap-oob="true"' in oob
                assert re.sub(r' hx-swap-oob="true"', "", oob, count=1) == alone
    assert seen
