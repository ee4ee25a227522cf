"""AgentScope Studio's database in headless Chromium, as a user points the viewer at
`~/AgentScope-Studio`: each run listed by its project and name, a run's agents speaking in their own
lanes, the call paired with its result, the model calls' tokens, and a message a running program
pushes appearing live, while Studio holds the database open (built by
test_data/formats/agentscope-studio/make_db.py)."""

import re

import pytest
from playwright.sync_api import expect

from conftest import indexed_list, studio_make_db

pytestmark = pytest.mark.browser


def test_a_studio_run_reads_with_its_agents_and_call_and_grows_live(serve, watched_page, tmp_path):
    make_db = studio_make_db()
    root = tmp_path / "AgentScope-Studio"
    root.mkdir()
    con = make_db.build(root / "database.sqlite", keep_open=True)  # a running Studio's database
    try:
        page = watched_page
        srv = serve(root)
        indexed_list(page, srv.url + "/")
        rows = page.locator("table.sessions tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.filter(has_text="Weather · forecast")).to_have_count(1)
        rows.filter(has_text="Demo · notes-check").locator("td.title > a").click()
        expect(page).to_have_url(re.compile(rf"/s/database.sqlite~{make_db.RUN}$"))
        timeline = page.locator("#timeline")
        expect(timeline).to_contain_text("AgentScope Studio run “notes-check” of project Demo")
        expect(timeline).to_contain_text("status: done")
        friday, critic = page.locator("#m-m_think"), page.locator("#m-m_critic")
        expect(friday.locator(".ev-head .who")).to_have_text("Friday")
        expect(critic.locator(".ev-head .who")).to_have_text("Critic")
        assert re.findall(r"\blane-\d+\b", friday.get_attribute("class")) != \
            re.findall(r"\blane-\d+\b", critic.get_attribute("class"))
        expect(friday.locator(".thinking")).to_contain_text("Thinking")
        call = page.locator("#tc-call_view1")
        expect(call.locator(".state")).to_have_text("completed")
        expect(call).to_contain_text("notes.txt")
        expect(call).to_contain_text("ship the v2 release")  # its result, in the call's card
        expect(page.locator("#session-facts .zoneless")).to_contain_text("time zone unknown")

        expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
        words = "Both tasks are on today's list."
        make_db.push(con, make_db.RUN, {"id": "m_live", "name": "Critic", "role": "assistant",
                                        "metadata": None, "timestamp": "2026-11-20 14:03:20.000",
                                        "content": [{"type": "text", "text": words}]},
                     "r_live", "Critic", "assistant")
        expect(timeline.get_by_text(words)).to_be_visible(timeout=30_000)
        expect(page.locator("#m-m_live .ev-head .who")).to_have_text("Critic")
        page.goto(f"{srv.url}/s/database.sqlite~{make_db.RUN}/usage")
        expect(page.locator("body")).to_contain_text("qwen-max")
        expect(page.locator("body")).to_contain_text("qwen-turbo")
        assert page.problems == []
    finally:
        con.close()
