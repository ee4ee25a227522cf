"""Filters, the reading order, the outline and the minimap: answered from the index's columns, the
same whether the index was just built or loaded from the cache."""

import pytest

from viewer import filters, outline
from viewer.filters import Filter, FilterError
from viewer.index import PROMPT, THINKING, SessionIndex
from viewer.order import reading_order
from viewer.web import create_app

from conftest import CORPUS, SESSIONS

TOUR = SESSIONS / "legion-feature-tour" / "messages.jsonl"
CC = SESSIONS / "claude-project" / "3b1f0c2e-5d6a-4e7f-9a8b-0c1d2e3f4a5b.jsonl"
STATES = SESSIONS.parent / "formats" / "legion" / "tool-states" / "messages.jsonl"
SUB = "a7c4e2f91b3d5a6c8"


def built_and_cached(path):
    """The same index twice: as built, and as the cache gives it back (packed calls)."""
    idx = SessionIndex(path).build()
    return idx, SessionIndex.load(idx.dump())


def ids(idx, picked):
    return [idx.threads[t].ids[s] for t, s in picked]


def test_reading_order_puts_a_subagent_after_its_call():
    idx = SessionIndex(CC).build()
    order = reading_order(idx)
    assert len(order) == sum(len(th) for th in idx.threads.values())
    call = idx.calls.call(idx.threads[SUB].meta["parent_call"]).call
    assert order.rank(SUB, 0) == order.rank(*call) + 1
    seen = list(order)
    assert len(seen) == len(set(seen)) == len(order)  # every event once
    assert [order.rank(*w) for w in seen] == list(range(len(order)))


def test_the_index_keeps_what_filters_need_through_the_cache():
    idx, cached = built_and_cached(TOUR)
    th, ct = idx.threads["main"], cached.threads["main"]
    assert th.content == ct.content and th.authors == ct.authors and th.prompts == ct.prompts
    prompts = [s for s in range(len(th)) if th.content[s] & PROMPT]
    assert [th.ids[s] for s in prompts] == ["tour-prompt-1", "tour-prompt-2", "tour-prompt-3"]
    assert th.prompts[prompts[0]].startswith("Refactor `timeline.py`")
    assert any(b & THINKING for b in th.content)
    assert list(idx.calls.rows()) == list(cached.calls.rows())


@pytest.mark.parametrize("which", [0, 1], ids=["built", "cached"])
def test_filters_pick_by_kind_tool_and_state(which):
    idx = built_and_cached(TOUR)[which]
    pick = lambda **kw: ids(idx, filters.select(idx, Filter(**kw)))  # noqa: E731
    assert pick(only=("errors",)) == ["tour-bash"]
    assert len(pick(only=("errors",))) == idx.summary.errors  # the header's count links here
    assert pick(only=("prompts",)) == ["tour-prompt-1", "tour-prompt-2", "tour-prompt-3"]
    assert pick(tool=("Bash",)) == ["tour-bash"]
    assert pick(state=("interrupted",)) == [idx.threads["main"].ids[idx.calls.call(
        "toolu_grep_never").call[1]]]  # the next prompt interrupted it
    assert pick(state=("orphan",)) == [idx.threads["main"].ids[idx.calls.orphans[
        "toolu_ghost_9"].result[1]]]
    assert pick(only=("unparsed",)) and pick(only=("thinking",))
    # groups combine with AND, values of a group with OR
    assert pick(tool=("Bash", "Read")) == pick(tool=("Read", "Bash"))
    assert set(pick(tool=("Bash", "Read"))) == set(pick(tool=("Bash",)) + pick(tool=("Read",)))
    assert pick(tool=("Bash",), state=("completed",)) == []
    counts = filters.counts(idx)
    assert counts.kinds["errors"] == 1 and counts.tools == {"Bash": 1, "Edit": 1, "Grep": 1, "Read": 1}
    assert counts.states["orphan"] == 1 and counts.states["interrupted"] == 1


def test_named_states_are_filters_of_their_own():
    for idx in built_and_cached(STATES):
        c = filters.counts(idx)
        assert c.states["denied"] == 1 and c.states["interrupted"] == 1
        assert c.kinds["errors"] == idx.summary.errors
        denied = filters.select(idx, Filter(state=("denied",)))
        assert [idx.calls.call(cid).name for cid in idx.calls.calls
                if idx.calls.call(cid).call in denied] == ["Bash"]


def test_filters_reach_into_subagent_threads_and_agents():
    idx = SessionIndex(CC).build()
    grep = filters.select(idx, Filter(tool=("Grep",)))
    assert grep and {t for t, _ in grep} == {SUB}
    whole = filters.select(idx, Filter(thread=(SUB,)))
    assert [s for _, s in whole] == list(range(len(idx.threads[SUB])))
    comms = SessionIndex(SESSIONS / "legion-multi-agent-comms" / "messages.jsonl").build()
    c = filters.counts(comms)
    assert c.agents, "multi-agent sessions can be filtered by agent"
    name = next(iter(c.agents))
    picked = filters.select(comms, Filter(agent=(name,)))
    assert len(picked) == c.agents[name]


def test_bad_filter_values_say_what_is_allowed():
    from werkzeug.datastructures import MultiDict

    with pytest.raises(FilterError, match="use one of prompts"):
        Filter.from_args(MultiDict({"only": "nonsense"}))
    f = Filter.from_args(MultiDict([("only", "errors,tools"), ("tool", "Bash"), ("tool", "Read")]))
    assert f.only == ("errors", "tools") and f.tool == ("Bash", "Read")
    assert f.toggled("tool", "Bash").tool == ("Read",) and f.toggled("tool", "Edit").tool[-1] == "Edit"


def test_outline_turns_and_minimap_marks():
    idx = SessionIndex(TOUR).build()
    turns = outline.turns(idx)
    assert [t.id for t in turns] == ["tour-prompt-1", "tour-prompt-2", "tour-prompt-3"]
    first = turns[0]
    assert first.tool_calls == 3 and first.errors == 1 and first.duration == pytest.approx(18.2, 0.1)
    assert sum(t.events for t in turns) + 1 == len(reading_order(idx))  # + the launch line before
    marks = outline.marks(idx)
    assert [m.kind for m in marks if m.kind == "error"] == ["error"]
    assert all(0 <= m.position < 1 for m in marks)
    cc = outline.turns(SessionIndex(CC).build())
    assert any(t.subagents for t in cc)


def test_a_filtered_view_is_windowed_and_addressable(tmp_path):
    corpus = CORPUS / "claude-code"
    app = create_app({"ROOTS": [str(corpus)], "CACHE_DIR": str(tmp_path / "c"), "WATCH": False})
    c = app.test_client()
    key = next(s["key"] for s in c.get("/sessions.json").get_json()["sessions"]
               if s.get("tool_calls", 0) > 80)
    page = c.get(f"/s/{key}?only=tools").get_data(as_text=True)
    assert 'class="timeline filtered"' in page and "later matching events" in page
    assert page.count('class="ev ') == 40
    more = c.get(f"/s/{key}/w/main?only=tools&after=40").get_data(as_text=True)
    assert more.count('class="ev ') >= 1 and "only=tools" in more
    assert c.get(f"/s/{key}?only=bogus").status_code == 200  # the page says so, the session shows
