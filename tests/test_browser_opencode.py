"""OpenCode sessions in headless Chromium: the list shows a stored session under its own title with
its sub-agent's session right below it; the session reads as OpenCode wrote it (thinking, every call
with its state, the edit as a diff, the todo list, the task's sub-agent conversation in place); and
a session followed live while OpenCode writes its part files again in place (a running command's
part rewritten as completed updates its card; a new part appears; a sub-agent's session written
beside it shows up under its task call); a session of OpenCode 1.2+'s database (opencode.db), opened
from the list while OpenCode writes to it, shows a new message live. Fixtures:
test_data/formats/opencode (make_fixtures.py, make_db.py)."""

import json
import re
import shutil

import pytest
from playwright.sync_api import expect

from conftest import ROOT, indexed_list, opencode_make_db, quiet_copy

pytestmark = pytest.mark.browser

DATA = ROOT / "test_data" / "formats" / "opencode" / "data"
PROJECT = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"
PARENT, CHILD = "ses_53a1c2d3e001aAbBcCdDeEfFgG", "ses_53a1c2d3e00bhHiIjJkKlLmM"
KEY = f"storage~session~{PROJECT}~{PARENT}"
TESTS_RUN = "msg_a1c2d3e00103CCCCCCCCCCCCCC"


def test_a_stored_session_from_the_list_to_its_sub_agent(serve, watched_page, tmp_path):
    root = quiet_copy(DATA, tmp_path / "opencode")
    page = watched_page
    indexed_list(page, serve(root, WATCH=False).url + "/")
    rows = page.locator("table.sessions tbody tr")
    expect(rows).to_have_count(3)
    parent = rows.filter(has_text="Fix divide-by-zero in calc.py")
    expect(parent.locator("span.format")).to_have_text("opencode")
    child = rows.filter(has_text="Find divide() callers (@explore subagent)")
    expect(child).to_have_class(re.compile(r"\bsubagent\b"))
    expect(child.locator(".spawned-by a")).to_have_text(re.compile(PARENT))
    parent.locator("td.title > a").click()
    expect(page).to_have_url(re.compile(rf"/s/{KEY}$"))
    expect(page.locator("#session-title")).to_contain_text("Fix divide-by-zero in calc.py")
    timeline = page.locator("#timeline")
    expect(timeline.get_by_text("<script>alert('x')</script>", exact=False)).to_be_visible()
    expect(page.locator("#tc-toolu_bash_1 .state")).to_have_text("denied by user")
    expect(page.locator("#tc-toolu_fetch_1 .state")).to_have_text("interrupted")
    edit = page.locator("#tc-toolu_edit_1")
    expect(edit.locator("tr.add").first).to_contain_text("if b == 0:")
    expect(page.locator("#tc-toolu_todo_1")).to_contain_text("Add a test for divide(1, 0)")
    card = page.locator("#tc-toolu_task_1")
    thread = card.locator("details.subthread")
    expect(thread.locator("summary")).to_contain_text("Sub-agent: explore · Find divide() callers")
    thread.locator("summary").click()  # the sub-agent's conversation, loaded in place
    expect(card.get_by_text("divide() is called from main.py:12 only.").first).to_be_visible()
    expect(card.locator("#tc-toolu_grep_s1 .state")).to_have_text("completed")
    failed = page.locator("li.ev", has_text="retry 1 after APIError")  # the reply that failed
    expect(failed.locator(".notice")).to_contain_text(["retry 1 after APIError: Overloaded",
                                                       "APIError: Overloaded"])
    assert page.problems == []


def _rewrite(path, value) -> None:
    """As OpenCode's Storage.write does (Bun.write): the same file written again in place."""
    with open(path, "r+") as f:
        f.truncate(0)
        f.write(json.dumps(value, indent=2))


def test_a_session_followed_live_as_its_parts_are_written_again(serve, watched_page, tmp_path):
    root = tmp_path / "opencode"
    shutil.copytree(DATA, root)
    storage = root / "storage"
    for message in sorted((storage / "message" / PARENT).iterdir()):
        if message.stem > TESTS_RUN:  # the session as it was while the tests ran: nothing after
            message.unlink()
            shutil.rmtree(storage / "part" / message.stem)
    child = root / "storage" / "session" / PROJECT / f"{CHILD}.json"
    child_info = child.read_text()
    child.unlink()  # the sub-agent's session is written later, below
    parts = storage / "part" / TESTS_RUN
    files = sorted(parts.iterdir())
    bash = next(p for p in files if '"toolu_bash_2"' in p.read_text())
    done = json.loads(bash.read_text())
    later = [p for p in files if p.name > bash.name]  # the reply's text and its step's end
    held = {p: p.read_text() for p in later}
    for p in later:
        p.unlink()
    running = dict(done, state={"status": "running", "input": done["state"]["input"], "title": "Run tests",
                                "metadata": {"output": "collecting 3 items"},
                                "time": {"start": done["state"]["time"]["start"]}})
    _rewrite(bash, running)
    page = watched_page
    page.goto(f"{serve(root).url}/s/{KEY}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
    state = page.locator("#tc-toolu_bash_2 .state").first
    expect(state).to_have_text("executing")
    expect(page.locator("li.ev", has_text="python -m pytest -q").get_by_text("output so far")).to_be_visible()
    _rewrite(bash, done)  # the command returned: its part written again, nothing else changed
    expect(state).to_have_text("completed", timeout=30_000)
    expect(page.locator("#tc-toolu_bash_2").get_by_text("3 passed in 0.02s")).to_be_visible()
    for p, text in held.items():  # the reply's closing words stream in as a new part
        p.write_text(text)
    expect(page.get_by_text("divide() now raises")).to_be_visible(timeout=30_000)
    expect(page.locator("li.ev", has_text="python -m pytest -q")).to_have_count(1)  # one card, updated
    task = page.locator("#tc-toolu_task_1")
    expect(task.locator("details.subthread")).to_have_count(0)
    child.write_text(child_info)  # the task's sub-agent session appears beside its parent's
    expect(task.locator("details.subthread summary")).to_contain_text("Sub-agent: explore", timeout=60_000)
    assert page.problems == []


def test_a_session_of_opencode_s_database_followed_live(serve, watched_page, tmp_path):
    """OpenCode 1.2+ keeps sessions as rows of opencode.db: a session is listed under its title,
    opens, and a message OpenCode writes while the page is open appears in it."""
    make_db = opencode_make_db()
    root = tmp_path / "opencode"
    root.mkdir()
    con = make_db.build(root / "opencode.db", keep_open=True)  # a running OpenCode's database
    try:
        page = watched_page
        srv = serve(root)
        indexed_list(page, srv.url + "/")
        rows = page.locator("table.sessions tbody tr")
        expect(rows).to_have_count(3)
        child = rows.filter(has_text="Find divide() callers (@explore subagent)")
        expect(child).to_have_class(re.compile(r"\bsubagent\b"))
        rows.filter(has_text="Fix divide-by-zero in calc.py").locator("td.title > a").click()
        expect(page).to_have_url(re.compile(rf"/s/opencode.db~{PARENT}$"))
        expect(page.locator("#tc-toolu_bash_1 .state")).to_have_text("denied by user")
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=30_000)
        msg = "msg_a1c2d3e00108ZZZZZZZZZZZZZZ"
        make_db.write_message(con, PARENT, {"role": "user", "time": {"created": 1764064990000},
                                            "agent": "build"}, msg, now=1764064990000)
        words = "Now check modulo by zero too."
        make_db.write_part(con, PARENT, msg, {"type": "text", "text": words},
                           "prt_a1c2d3e0010801ZZZZZZZZZZZZ", now=1764064990000)
        expect(page.locator("#timeline").get_by_text(words)).to_be_visible(timeout=30_000)
        assert page.problems == []
    finally:
        con.close()


def test_an_opencode_2x_database_s_session_from_the_list(serve, watched_page, tmp_path):
    """OpenCode 2.x keeps its sessions in `session_v2` / `session_message` (the rows of
    test_opencode_v2_store.py): the list shows the session under its title, and its page reads as
    OpenCode wrote it — the prompt, the thinking, each call with the state OpenCode gave it and its
    output, the agent switch as a notice."""
    from test_opencode_v2_store import SID, _v2_database

    folder = _v2_database(tmp_path)
    page = watched_page
    indexed_list(page, serve(folder, WATCH=False).url + "/")
    row = page.locator("table.sessions tbody tr").filter(has_text="Refunds counted twice")
    expect(row.locator("span.format")).to_have_text("opencode")
    row.locator("td.title > a").click()
    expect(page).to_have_url(re.compile(rf"/s/opencode.db~{SID}$"))
    expect(page.locator("#session-title")).to_contain_text("Refunds counted twice")
    timeline = page.locator("#timeline")
    expect(timeline).to_contain_text("Why does total() double count refunds?")
    expect(timeline.locator(".notice", has_text="agent: build").first).to_be_visible()
    expect(page.locator("#tc-call_grep_3 .state")).to_have_text("completed")
    expect(page.locator("#tc-call_grep_3")).to_contain_text("cart.py:12: refund")
    read = page.locator("#tc-call_read_2")
    expect(read.locator(".state")).to_have_text("error")
    expect(read).to_contain_text("File not found: /srv/shop/nope.py")
    expect(page.locator("#tc-call_bash_1 .state")).to_have_text("error")  # (exit code 1)
    assert page.problems == []
