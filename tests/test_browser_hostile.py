"""Hostile sessions in every format in real Chromium: no dialog, no CSP violation, no request to
another host — counted on every session page with everything opened (hidden events shown, every
<details> open, "show all" followed)."""

import pytest
from playwright.sync_api import expect

from hostile import write_hostile_sessions
from test_fuzz import samples

pytestmark = pytest.mark.browser

CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
    e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def test_hostile_sessions_in_every_format_run_nothing_and_fetch_nothing(tmp_path, serve,
                                                                        watched_page):
    keys = write_hostile_sessions(tmp_path / "root", samples())
    srv = serve(tmp_path / "root", WATCH=False)
    page = watched_page
    page.add_init_script(CSP_LISTENER)
    off_host, violations = [], []
    page.on("request", lambda r: off_host.append(r.url)
            if not r.url.startswith((srv.url, "data:", "blob:")) else None)
    page.goto(srv.url + "/")
    listed = page.evaluate("[...document.querySelectorAll('tr[data-key]')].map(r => r.dataset.key)")
    assert set(keys.values()) <= set(listed)
    for key in listed:
        page.goto(f"{srv.url}/s/{key}?hidden=1")
        page.wait_for_load_state("load")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        links = page.locator("a.show-all")
        for _ in range(5):  # (each one followed is swapped for the full text: the next is first)
            n = links.count()
            if not n:
                break
            links.first.click()
            expect(links).to_have_count(n - 1)
        # whatever hovering a message triggers: the mouse is moved onto the first message where
        # it is now (a locator's hover scrolls first and fails if what was opened moves it away)
        box = page.evaluate("""() => { const ev = document.querySelector('.ev');
            ev.scrollIntoView({block: 'center'}); const r = ev.getBoundingClientRect();
            return [r.left + Math.min(r.width, 40) / 2, r.top + Math.min(r.height, 20) / 2]; }""")
        page.mouse.move(*box)
        page.wait_for_timeout(300)  # what the opened parts load (the page's live stream never idles)
        violations += [f"{key}: {v}" for v in page.evaluate("window.__csp")]
        assert page.evaluate("typeof window.alert") == "function"
    assert off_host == []
    assert violations == []
    assert page.problems == []  # no dialog, no console error or warning, no page error
