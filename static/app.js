// session-viewer: the little the pages need beyond htmx. Everything works without it except local
// times, copying links, scrolling to a permalink, and following a live session.
(function () {
  "use strict";

  // --- times: shown in the reader's zone; the UTC value stays in the title --------------------
  var fmt = new Intl.DateTimeFormat("en-CA", {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", hourCycle: "h23", timeZoneName: "short"
  });

  function formatLocal(d) {  // 2025-10-21 20:59:02 CEST: sortable, unambiguous, the reader's zone
    var p = {};
    fmt.formatToParts(d).forEach(function (x) { p[x.type] = x.value; });
    return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second +
      " " + p.timeZoneName;
  }

  function localTimes(root) {
    var times = (root || document).querySelectorAll("time[datetime]:not([data-local])");
    for (var i = 0; i < times.length; i++) {
      var t = times[i];
      var d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d)) {
        t.textContent = formatLocal(d);
        t.setAttribute("data-local", "1");
      }
    }
  }

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
    var pill = e.target.closest("#new-pill");
    if (pill) {
      toBottom();
    }
  });

  function showTarget() {
    var id = document.body.getAttribute("data-target");
    if (!id) return;
    var el = document.getElementById(id);
    if (!el) return;
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
    el.scrollIntoView({ block: "center" });
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

  // --- live: follow, "N new" pill, stream state --------------------------------------------------
  var atBottom = true;
  var unseen = 0;

  function nearBottom() {
    var doc = document.documentElement;
    return window.innerHeight + window.scrollY >= doc.scrollHeight - 120;
  }

  function following() {
    var box = document.getElementById("follow");
    return box && box.checked;
  }

  function toBottom() {
    var timeline = document.getElementById("timeline");
    if (window.svFind && timeline && timeline.querySelector(":scope > li.more.after")) {
      window.svFind.toEnd();  // a window mid-session is shown (find.js jumped): load the end first
      setUnseen(0);
      return;
    }
    window.scrollTo(0, document.documentElement.scrollHeight);
    atBottom = true;
    setUnseen(0);
  }

  function setUnseen(n) {
    unseen = n;
    var pill = document.getElementById("new-pill");
    if (!pill) return;
    pill.hidden = n === 0;
    pill.textContent = n + (n === 1 ? " new message ↓" : " new messages ↓");
  }

  window.addEventListener("scroll", function () {
    atBottom = nearBottom();
    if (atBottom && unseen) setUnseen(0);
  }, { passive: true });

  function onAppended(nodes) {
    var visible = 0;
    for (var i = 0; i < nodes.length; i++) {
      var n = nodes[i];
      if (n.nodeType === 1 && n.classList.contains("ev") && !n.classList.contains("is-hidden") &&
          !n.classList.contains("folded")) visible++;
    }
    if (!visible) return;
    if (following() && atBottom) {
      toBottom();
    } else {
      setUnseen(unseen + visible);
    }
  }

  function setState(state, text) {
    var el = document.getElementById("live-state");
    if (!el) return;
    el.setAttribute("data-state", state);
    el.textContent = text;
  }

  function wireLive() {
    var live = document.getElementById("live");
    if (!live) return;
    // the stream's state, said quietly: "live" is what the session is (being written), not the page
    live.addEventListener("htmx:sse:after:connection", function () { setState("live", "connected"); });
    live.addEventListener("htmx:sse:error", function () { setState("reconnecting", "reconnecting…"); });
    live.addEventListener("htmx:sse:close", function (e) {
      var reason = e.detail && e.detail.reason;
      if (reason === "message") return;  // closed by a message that said why (busy)
      setState("ended", reason === "removed" ? "stopped" : "ended");
    });
    live.addEventListener("busy", function (e) {
      setState("busy", (e.detail && e.detail.data) || "too many live viewers — reload to retry");
    });
    live.addEventListener("reset", function () {
      setState("reconnecting", "file replaced: reloading…");
      location.reload();
    });
    live.addEventListener("removed", function () { setState("ended", "session file removed"); });
    var follow = document.getElementById("follow");
    if (follow) {
      follow.addEventListener("change", function () { if (follow.checked) toBottom(); });
      if (follow.checked && !document.body.getAttribute("data-target")) toBottom();
    }
  }

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
    wireLive();
    var timeline = document.getElementById("timeline");
    new MutationObserver(function (records) {
      for (var i = 0; i < records.length; i++) {
        var added = records[i].addedNodes;
        for (var j = 0; j < added.length; j++) {
          if (added[j].nodeType === 1) localTimes(added[j].parentNode || added[j]);
        }
        if (records[i].target === timeline && added.length) {
          // appended at the end by the live stream (windows loaded above come with a sentinel)
          var last = timeline.lastElementChild;
          if (last && Array.prototype.indexOf.call(added, last) >= 0) onAppended(added);
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
    if (document.querySelector("tr[data-mtime]")) setInterval(expireBadges, 10000);
    if (document.getElementById("session-live")) {
      expireLive();
      setInterval(expireLive, 1000);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
