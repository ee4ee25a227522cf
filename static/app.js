// session-viewer: the little the pages need beyond htmx. Everything works without it except local
// times, copying links, scrolling to a permalink, and following a live session (live.js).
(function () {
  "use strict";

  // --- times: shown in the reader's zone; the UTC value stays in the title --------------------
  var fmt = new Intl.DateTimeFormat("en-CA", {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", hourCycle: "h23", timeZoneName: "short"
  });

  var zones = {};  // the zone's short name by UTC offset: Intl is slow, a page can hold 10,000 times

  function zoneName(d) {
    var offset = d.getTimezoneOffset();
    if (!(offset in zones)) {
      var parts = fmt.formatToParts(d);
      for (var i = 0; i < parts.length; i++) {
        if (parts[i].type === "timeZoneName") zones[offset] = parts[i].value;
      }
    }
    return zones[offset];
  }

  function two(n) { return n < 10 ? "0" + n : "" + n; }

  function formatLocal(d) {  // 2025-10-21 20:59:02 CEST: sortable, unambiguous, the reader's zone
    var y = d.getFullYear();
    if (y < 1000 || y > 9999) {  // what the fast path does not write as Intl does
      var p = {};
      fmt.formatToParts(d).forEach(function (x) { p[x.type] = x.value; });
      return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second +
        " " + p.timeZoneName;
    }
    return y + "-" + two(d.getMonth() + 1) + "-" + two(d.getDate()) + " " + two(d.getHours()) + ":" +
      two(d.getMinutes()) + ":" + two(d.getSeconds()) + " " + zoneName(d);
  }

  function localTime(t) {
    var d = new Date(t.getAttribute("datetime"));
    if (!isNaN(d)) {
      var text = formatLocal(d);
      if (t.classList.contains("split")) {  // the seconds and the zone apart: a narrow list hides them
        t.textContent = text.slice(0, 16);
        var rest = document.createElement("span");
        rest.className = "t-rest";
        rest.textContent = text.slice(16);
        t.appendChild(rest);
      } else {
        t.textContent = text;
      }
      t.setAttribute("data-local", "1");
    }
  }

  function localTimes(root) {
    var times = (root || document).querySelectorAll("time[datetime]:not([data-local])");
    for (var i = 0; i < times.length; i++) localTime(times[i]);
  }

  // live.js formats the times of what the stream brings before it is in the page
  window.sessionViewer = { localTimes: localTimes };

  // --- links: copy, permalink target, raw view close -------------------------------------------
  function copyText(text, button) {
    var done = function () {
      var old = button.textContent;
      button.textContent = "copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = old; button.classList.remove("copied"); }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text); done(); });
    } else {
      fallbackCopy(text);
      done();
    }
  }

  function fallbackCopy(text) {
    var input = document.createElement("textarea");
    input.value = text;
    input.setAttribute("readonly", "");
    input.className = "offscreen";
    document.body.appendChild(input);
    input.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    document.body.removeChild(input);
  }

  var touchOnly = window.matchMedia("(hover: none)");

  document.addEventListener("click", function (e) {
    var copy = e.target.closest(".copy-link");
    if (copy) {
      copyText(new URL(copy.getAttribute("data-href"), location.href).href, copy);
      return;
    }
    var close = e.target.closest(".raw-close");
    if (close) {
      var slot = close.closest(".raw-slot");
      if (slot) slot.innerHTML = "";
      return;
    }
    // a tap on a continued block (a touch screen's hover) brings up its head: time and links
    var block = e.target.closest("li.ev.continued");
    if (block && touchOnly.matches && !e.target.closest("a, button, summary, input, label") &&
        !String(window.getSelection())) {
      var shown = document.querySelectorAll("li.ev.head-shown");
      for (var i = 0; i < shown.length; i++) if (shown[i] !== block) shown[i].classList.remove("head-shown");
      block.classList.toggle("head-shown");
    }
    var pick = e.target.closest(".range-pick");
    if (pick) {
      var input = document.getElementById("export-" + pick.getAttribute("data-end"));
      if (input) {
        input.value = pick.getAttribute("data-id");
        input.classList.add("picked");
        pick.classList.add("picked");
        setTimeout(function () { input.classList.remove("picked"); pick.classList.remove("picked"); }, 1200);
      }
      return;
    }
  });

  // --- open menus, said on <body> as a class (`outline-menu-open`, `export-menu-open`) for the
  // rules that make room for them. A `body:has(#menu[open])` rule did it without script, but made
  // every insertion anywhere in the page restyle all of it: a live burst spent most of its time
  // there.
  var MENUS = ["outline-menu", "export-menu"];

  function menuState(el) {
    if (el && MENUS.indexOf(el.id) >= 0) document.body.classList.toggle(el.id + "-open", el.open);
  }
  document.addEventListener("toggle", function (e) { menuState(e.target); }, true);
  MENUS.forEach(function (id) { menuState(document.getElementById(id)); });

  function showTarget() {
    var id = document.body.getAttribute("data-target");
    if (!id) return;
    var el = document.getElementById(id);
    if (!el) return;
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
    // in the middle of the window; a message taller than the window opens at its head (centred,
    // its first lines, who wrote it and when, were above the window, under the sticky bar)
    var bar = document.querySelector("header.top");
    var room = window.innerHeight - (bar ? bar.getBoundingClientRect().bottom : 0);
    el.scrollIntoView({ block: el.getBoundingClientRect().height > room - 32 ? "start" : "center" });
    el.classList.add("flash");
  }

  // --- windows: loading earlier events above the reader must not move what they look at ----------
  // (and at the very top of the page, where browsers do not anchor the scroll, the next "load
  // earlier" would be revealed at once and cascade through the whole session)
  document.addEventListener("htmx:before:swap", function (e) {
    var sentinel = e.target;
    if (!sentinel.classList || !sentinel.classList.contains("before")) return;
    var anchor = sentinel.nextElementSibling;
    var list = sentinel.parentNode;
    if (!anchor || !list) return;
    var top = anchor.getBoundingClientRect().top;
    var watch = new MutationObserver(function () {
      watch.disconnect();
      if (!anchor.isConnected) return;
      var moved = anchor.getBoundingClientRect().top - top;
      if (moved) window.scrollBy(0, moved);
    });
    watch.observe(list, { childList: true });
  });

  // --- a session page's "live": gone when the minute since the last write has passed -------------
  // (the server says how long it stays fresh, so the reader's clock does not matter; a write that
  // comes through the stream swaps in a fresh badge)
  var liveBadge = null;
  var liveUntil = 0;

  function expireLive() {
    var badge = document.getElementById("session-live");
    if (!badge) return;
    if (badge !== liveBadge) {
      liveBadge = badge;
      liveUntil = Date.now() + 1000 * (parseFloat(badge.getAttribute("data-fresh-for")) || 0);
    }
    badge.hidden = Date.now() >= liveUntil;
  }

  // --- the session list: "live" badges expire after a minute ------------------------------------
  function expireBadges() {
    var now = Date.now() / 1000;
    var rows = document.querySelectorAll("tr.live[data-mtime]");
    for (var i = 0; i < rows.length; i++) {
      if (parseFloat(rows[i].getAttribute("data-mtime")) < now - 60) {
        rows[i].classList.remove("live");
        var badge = rows[i].querySelector(".live-badge");
        if (badge) badge.remove();
      }
    }
  }

  // --- wiring ------------------------------------------------------------------------------------
  function start() {
    localTimes(document);
    showTarget();
    // times in whatever comes in later (windows, threads, raw views): only in what was added
    new MutationObserver(function (records) {
      for (var i = 0; i < records.length; i++) {
        var added = records[i].addedNodes;
        for (var j = 0; j < added.length; j++) {
          var n = added[j];
          if (n.nodeType !== 1) continue;
          if (n.matches("time[datetime]:not([data-local])")) localTime(n);
          else if (n.firstElementChild) localTimes(n);
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
    if (document.querySelector("tr[data-mtime]")) setInterval(expireBadges, 10000);
    if (document.getElementById("session-live")) {
      expireLive();
      setInterval(expireLive, 1000);
    }
    searchPage();
  }

  // --- "/" on the list, the search and the stats pages goes to the box that searches them all, as
  // it goes to the session's own search on a session page (find.js) ----------------------------
  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    var box = document.getElementById("search-q");
    var el = e.target;
    if (!box || (el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)))) return;
    e.preventDefault();
    box.focus();
    box.select();
  });

  // --- the search page (/search): the focus stays in its box when the results come, as in a
  // session's own search; Enter on the same words and Down go through the matches, Up from the
  // first and Escape come back to the box, n / N step from anywhere -----------------------------
  function searchItems() {  // each result's matches (its snippets), or its title when it has none
    var out = [];
    var results = document.querySelectorAll("#search-results > li.result");
    for (var i = 0; i < results.length; i++) {
      var links = results[i].querySelectorAll("a.snippet");
      if (!links.length) links = results[i].querySelectorAll("a.result-title");
      for (var j = 0; j < links.length; j++) out.push(links[j]);
    }
    return out;
  }

  function stepResult(from, dir) {
    var items = searchItems();
    if (!items.length) return false;
    var i = items.indexOf(from);
    var next = i < 0 ? (dir > 0 ? 0 : items.length - 1) : i + dir;
    var box = document.getElementById("search-q");
    if (next < 0 && box) {
      box.focus();
    } else if (items[next]) {
      items[next].focus();
    }
    return true;
  }

  function searchPage() {
    var box = document.getElementById("search-q");
    if (!box || !document.body.classList.contains("search-page")) return;
    // (not on a touch screen: its keyboard would come up over the results)
    if (!location.hash && document.activeElement === document.body && !touchOnly.matches) {
      box.focus({ preventScroll: true });
      box.setSelectionRange(box.value.length, box.value.length);
    }
    var asked = new URLSearchParams(location.search).get("q") || "";
    box.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      var same = box.value.trim() === asked.trim() && asked.trim();
      if ((e.key === "Enter" && same) || (e.key === "ArrowDown" && !e.shiftKey)) {
        if (stepResult(null, e.key === "Enter" && e.shiftKey ? -1 : 1)) e.preventDefault();
      }
    });
    document.addEventListener("keydown", function (e) {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      var el = e.target;
      if (el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName))) return;
      var item = el && el.closest && el.closest("#search-results a");
      var dir = { ArrowDown: 1, ArrowUp: -1, n: 1, N: -1 }[e.key];
      if (dir && (item || e.key === "n" || e.key === "N")) {
        if (stepResult(item, dir)) e.preventDefault();
      } else if (e.key === "Escape" && item) {
        e.preventDefault();
        box.focus();
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
