// session-viewer: the live tail of a session page — new events from the session's stream, put in
// the page a batch at a time, follow, the "N new messages" pill, and the stream's state.
//
// The stream's messages are not swapped one by one by htmx: each is queued, and once per animation
// frame everything queued goes in with one insertion, its times formatted before it is in the page,
// followed by one scroll when following. (Swapping a 10,000-line burst message by message, with a
// scroll per message and the times of the whole timeline looked at on every insertion, took minutes;
// profiling showed the scroll and the time lookups were most of it.)
//
// A reader who is not following the end gets at most a screenful of new events below them; beyond
// that the burst collapses into a "N new messages" marker at the end of the timeline, which loads
// the next window of events when they scroll to it, and the pill jumps to the latest window with
// the events in between loadable above it. Events that arrive while a gap is open only count; the
// windows bring them, from the index, when the reader asks.
(function () {
  "use strict";

  // a page drawn before its index whose calls the index names otherwise is drawn again from it
  // (web/early.py); the live tail's own stream says so as a reset
  var early = document.getElementById("early-stream");
  if (early) {
    early.addEventListener("reset", function () { location.reload(); });
    early.addEventListener("htmx:sse:before:message", function (e) {
      var m = e.detail.message;
      if (!m.event && m.data) renamesInText(m.data);
    });
  }
  completeEarly();

  // Cards the index draws as the page has them but for attributes and short texts (their ids,
  // numbers, links, an API call's number: web/cardpatch.py) are not sent again. The message
  // lists them with what changes: text to replace in every attribute value (`subs`, the ids
  // renamed: `@8373534` → `L21953`) and, for each card, values that take another ([value, new]
  // or [name, value, new]) and texts that do ([text, new]). Not in an event shown inside a card
  // (a sub-agent's thread opened in it) nor in a raw view loaded into it. They are made before
  // the message's other updates go in (some name the cards by their new ids), where its text is
  // parsed: the live tail's batches, the early stream's message, a window's completion; the
  // holder the message would put in the timeline is taken out.
  function renamesIn(root) {
    var holders = root.querySelectorAll("li.early-renames");
    for (var i = 0; i < holders.length; i++) renames(holders[i]);
  }

  function renamesInText(text) {
    if (text.indexOf("early-renames") < 0) return;
    var tpl = document.createElement("template");
    tpl.innerHTML = text;
    renamesIn(tpl.content);
  }

  function renames(holder) {
    var all = JSON.parse(holder.getAttribute("data-renames") || "{}");
    holder.remove();
    var cards = all.cards || [];
    for (var i = 0; i < cards.length; i++) {
      var card = document.getElementById(cards[i][0]);
      if (card) patch(card, all.subs || [], cards[i][1], cards[i][2] || []);
    }
  }

  function mine(card, node) {  // a node of the card's own, not of an event or raw view in it
    var el = node.nodeType === 1 ? node : node.parentElement;
    return el === card || (el.closest("li.ev") === card && !(el === node ? el.parentElement : el).closest(".raw-slot"));
  }

  function patch(card, subs, changes, texts) {
    var byValue = new Map(), byName = new Map();
    for (var i = 0; i < changes.length; i++) {
      var c = changes[i];
      if (c.length === 2) byValue.set(c[0], c[1]);
      else byName.set(c[0] + "\u0000" + c[1], c[2]);
    }
    var els = [card].concat(Array.prototype.slice.call(card.querySelectorAll("*")));
    for (var j = 0; j < els.length; j++) {
      var el = els[j];
      if (!mine(card, el)) continue;
      var attrs = Array.prototype.slice.call(el.attributes);
      for (var k = 0; k < attrs.length; k++) {
        var name = attrs[k].name, was = attrs[k].value, now = byName.get(name + "\u0000" + was);
        if (now === undefined) now = byValue.get(was);
        if (now === undefined) {
          now = was;
          for (var s = 0; s < subs.length; s++) now = now.split(subs[s][0]).join(subs[s][1]);
        }
        if (now !== was) el.setAttribute(name, now);
      }
    }
    if (!texts.length) return;
    var to = new Map(texts), walk = document.createTreeWalker(card, NodeFilter.SHOW_TEXT), t;
    while ((t = walk.nextNode())) {
      if (to.has(t.data) && mine(card, t)) t.data = to.get(t.data);
    }
  }

  // A page drawn before its index (web/early.py). Its own cards are completed by its stream; a
  // window loaded meanwhile ("Load earlier / later", read from the lines next to the page's:
  // routes._provisional_window) holds an `early-window` marker, and its cards are completed by
  // asking for the marker's updates once the index is done — when the progress line hides, or at
  // once for a window that comes in after that. A card drawn again keeps the details the reader
  // had opened in it.
  function completeEarly() {
    var tl = document.getElementById("timeline");
    var head = document.querySelector(".session-head");
    if (!tl || !head || !document.getElementById("index-progress")) return;

    function done() {
      var p = document.getElementById("index-progress");
      return p && p.hidden;
    }

    function apply(text) {
      renamesInText(text);
      return htmx.swap({sourceElement: tl, target: tl, swap: "none", text: text});
    }

    function complete() {
      if (!done()) return;
      var marks = tl.querySelectorAll("li.early-window[data-resolve]");
      for (var i = 0; i < marks.length; i++) {
        var url = marks[i].getAttribute("data-resolve");
        marks[i].remove();
        pending++;
        fetch(url, {credentials: "same-origin"}).then(function (r) {
          if (r.status === 205) { location.reload(); return null; }
          return r.ok ? r.text() : null;
        }).then(function (text) { return text ? apply(text) : null; })
          .catch(function () {}).then(function () { pending--; });
      }
    }

    // the details in a card, each with its key: its kind and rank among its kind (a card drawn
    // again, its ids and numbers completed, is the same card, its details in the same order)
    function eachDetails(card, fn) {
      var rank = {}, all = card.querySelectorAll("details");
      for (var i = 0; i < all.length; i++) {
        var c = all[i].className;
        fn(all[i], c + "#" + (rank[c] = (rank[c] || 0) + 1));
      }
    }

    function openedIn(card) {
      var out = [];
      eachDetails(card, function (d, k) { if (d.open) out.push(k); });
      return out;
    }

    function reopen(card, keys) {
      eachDetails(card, function (d, k) { if (keys.indexOf(k) >= 0) d.open = true; });
    }

    // The card the reader reads and where it is in the page, noted at every scroll (and when a
    // details opens or the window changes): cards drawn again above it and the progress line
    // going away must not move it. (The card at the window's top, under the page's bar.) Kept as
    // where it is in the page, not in the window: a change that comes between a scroll and its
    // scroll event (a progress line's update, a window swapped in, on a loaded machine) found the
    // card moved by the reader's own scroll and scrolled them back to where they were.
    var place = null;
    function note() {
      var box = tl.getBoundingClientRect();
      var x = box.left + Math.min(40, box.width / 2);
      place = null;
      for (var y = 90; y < window.innerHeight; y += 60) {
        var at = document.elementFromPoint(x, y);
        var card = at && at.closest("#timeline > li.ev");
        if (card) { place = {el: card, at: card.getBoundingClientRect().top + window.scrollY}; return; }
      }
    }
    var pending = 0;  // windows' completions asked for, not yet in the page
    var wasDone = done();

    // (a card drawn again comes in just before the one it replaces, which then goes: the index
    // may name it otherwise — `L12` for the region's `@5120` — so it is known by its place)
    function changed(records) {
      var replaced = new Map();
      for (var i = 0; i < records.length; i++) {
        var r = records[i];
        if (r.target !== tl) continue;
        for (var a = 0; a < r.addedNodes.length; a++) {
          var added = r.addedNodes[a];
          // (made already, where the message was parsed)
          if (added.nodeType === 1 && added.classList.contains("early-renames")) added.remove();
        }
        for (var j = 0; j < r.removedNodes.length; j++) {
          var n = r.removedNodes[j];
          if (n.nodeType !== 1 || !n.classList.contains("ev")) continue;
          var now = document.getElementById(n.id);
          if (!now) {
            now = r.previousSibling;
            while (now && now.nodeType !== 1) now = now.previousSibling;
          }
          if (!now || !now.isConnected || !now.classList.contains("ev")) continue;
          replaced.set(n, now);
          var keys = openedIn(n);
          if (keys.length) reopen(now, keys);
        }
      }
      var isDone = done();
      // (a reader following the end stays there: the live tail scrolls for them, and keeping
      // their card in place would undo that scroll after each new line)
      if (following() && atBottom) toEnd();
      else if (place && (!wasDone || pending)) {
        var el = place.el.isConnected ? place.el : replaced.get(place.el);
        if (el && el.isConnected) {
          var moved = el.getBoundingClientRect().top + window.scrollY - place.at;
          if (Math.abs(moved) >= 1) window.scrollBy(0, moved);
        }
      }
      wasDone = isDone;
      note();
      complete();
    }
    note();
    function renote() { if (!wasDone || pending) note(); }
    window.addEventListener("scroll", renote, {passive: true});
    window.addEventListener("resize", renote);
    tl.addEventListener("toggle", renote, true);
    var watch = new MutationObserver(changed);
    watch.observe(tl, {childList: true});
    watch.observe(head, {childList: true, subtree: true, attributes: true, attributeFilter: ["hidden"]});
  }

  var live = document.getElementById("live");
  var timeline = document.getElementById("timeline");
  if (!live || !timeline) return;
  var windowUrl = live.getAttribute("data-window");  // the main thread's windows
  var pageUrl = live.getAttribute("data-page");  // the session page (a window without scripts)

  var queue = [];  // data of stream messages not yet in the page
  var scheduled = false;
  var atBottom = true;  // where the reader was at their last scroll
  var unseen = 0;  // visible events put in the page below the reader since they last were at the end
  var unseenHeight = 0;  // and how tall they are
  var gap = null;  // {from: seq of the first event not in the page, seqs: visible seqs collapsed, latest}

  // --- batching ----------------------------------------------------------------------------------
  live.addEventListener("htmx:sse:before:message", function (e) {
    var m = e.detail.message;
    if (m.event) return;  // named events (reset, removed, busy) are dispatched by htmx
    e.detail.cancelled = true;
    if (m.data) queue.push(m.data);
    if (!scheduled) {
      scheduled = true;
      var wait = calmUntil - performance.now();
      // a background tab draws no frames (and its stream pauses): do not wait for one
      if (document.hidden) setTimeout(flush, 0);
      else if (wait > 0) setTimeout(function () { requestAnimationFrame(flush); }, wait);
      else requestAnimationFrame(flush);
    }
  });

  // After a large batch the next one waits a little: part of drawing a frame grows with the whole
  // timeline (layout, paint), so a burst goes in as a few large batches, not one per frame. A
  // single new message still goes in on the next frame.
  var BIG = 100, CALM = 150;
  var calmUntil = 0;

  function flush() {
    scheduled = false;
    if (!queue.length) return;
    if (queue.length >= BIG) calmUntil = performance.now() + CALM;
    var tpl = document.createElement("template");
    tpl.innerHTML = queue.join("\n");
    queue = [];
    var frag = tpl.content;
    if (window.sessionViewer) window.sessionViewer.localTimes(frag);
    var events = [];
    for (var n = frag.firstElementChild; n; n = n.nextElementSibling) {
      if (n.tagName === "LI" && n.classList.contains("ev")) events.push(n);
    }
    for (var i = 0; i < events.length; i++) events[i].remove();
    dedupeOutOfBand(frag);
    renamesIn(frag);  // (a first screen's cards the index names otherwise: before what names them so)
    place(events);
    // the rest — card updates, a sub-agent's events, counts — after the events they may target
    if (frag.firstElementChild) {
      var end = following() && atBottom;
      htmx.swap({sourceElement: live, target: timeline, swap: "none", text: tpl.innerHTML});
      // a card above grew (a call's result came in: each line of an API log answers the call of
      // the one before): still at the end, else the scroll this makes reads as the reader leaving
      if (end) toEnd();
    }
  }

  function dedupeOutOfBand(frag) {
    var seen = {};
    var oob = frag.querySelectorAll("[hx-swap-oob][id]");
    for (var i = oob.length - 1; i >= 0; i--) {  // the last state of an element wins
      if (seen[oob[i].id]) oob[i].remove(); else seen[oob[i].id] = true;
    }
    // a sub-agent's event its opened thread holds already: the thread was loaded (when opened)
    // after the event was indexed and before the stream sent it — not put in a second time
    var added = frag.querySelectorAll("hx-partial[hx-swap='beforeend'] > li.ev[id]");
    for (var j = 0; j < added.length; j++) {
      if (document.getElementById(added[j].id)) added[j].remove();
    }
  }

  function seqOf(li) { return parseInt(li.getAttribute("data-seq"), 10); }

  function visible(li) {
    return !li.classList.contains("is-hidden") && !li.classList.contains("folded");
  }

  function place(events) {
    if (!events.length) return;
    syncGap();
    if (gap) return collapse(events);
    if (following() && atBottom) {
      append(events);
      toEnd();
      return;
    }
    // the reader is elsewhere: up to a screenful of new events goes in below them, the rest of a
    // burst waits behind a marker
    var i = 0;
    while (i < events.length && unseenHeight < window.innerHeight) {
      var part = events.slice(i, i + 20);
      var bottom = timeline.getBoundingClientRect().bottom;
      append(part);
      i += part.length;
      count(part);
      unseenHeight += timeline.getBoundingClientRect().bottom - bottom;
    }
    if (i < events.length) openGap(events.slice(i));
  }

  function append(events) {
    var frag = document.createDocumentFragment();
    for (var i = 0; i < events.length; i++) {
      if (!document.getElementById(events[i].id)) frag.appendChild(events[i]);
    }
    var added = Array.prototype.slice.call(frag.children);
    timeline.appendChild(frag);
    // htmx wires each event's links (raw view, show all, threads): the last few now, the rest when
    // the browser is idle, or at once when the reader's pointer or focus gets to one
    var now = added.splice(Math.max(0, added.length - 10));
    for (var j = 0; j < now.length; j++) htmx.process(now[j]);
    if (added.length) {
      for (var k = 0; k < added.length; k++) added[k].setAttribute("data-wire", "");
      unwired.push.apply(unwired, added);
      if (!wiring) wiring = idle(wireSome);
    }
  }

  var unwired = [];
  var wiring = 0;
  var idle = window.requestIdleCallback || function (f) { return setTimeout(f, 50); };

  function wire(li) {
    if (!li.hasAttribute("data-wire")) return;
    li.removeAttribute("data-wire");
    htmx.process(li);
  }

  function wireSome(deadline) {
    // while the browser has time to spare: during a burst that is little, after it the rest
    // (without requestIdleCallback: 10 ms at a time)
    var until = performance.now() + 10;
    var left = deadline ? function () { return deadline.timeRemaining(); }
                        : function () { return until - performance.now(); };
    var n = 0;
    while (unwired.length && (n++ < 20 || left() > 2)) wire(unwired.shift());
    wiring = unwired.length ? idle(wireSome) : 0;
  }

  function wireHere(e) {
    var li = e.target.closest && e.target.closest("li[data-wire]");
    if (li) wire(li);
  }
  timeline.addEventListener("pointerover", wireHere);
  timeline.addEventListener("focusin", wireHere);

  function count(events) {
    var n = 0;
    for (var i = 0; i < events.length; i++) if (visible(events[i])) n++;
    if (n) setUnseen(unseen + n);
  }

  // --- the gap: "N new messages", loaded as windows on demand -------------------------------------
  function openGap(events) {
    gap = {from: seqOf(events[0]), seqs: [], latest: -1};
    marker(gap.from);
    collapse(events);
  }

  // the timeline may have been redrawn meanwhile (find.js jumps to a window mid-session): a window's
  // "later events" link at its end is where the stream's events wait; a gap whose marker went with
  // the old content is what lies after the events now shown
  function syncGap() {
    var last = timeline.lastElementChild;
    if (last && last.matches("li.more.after")) {
      if (!gap) {
        var after = /[?&]after=(\d+)/.exec(last.getAttribute("hx-get") || "");
        gap = {from: after ? parseInt(after[1], 10) : 0, seqs: [], latest: -1};
      }
      last.id = "live-gap";
    } else if (gap && !document.getElementById("live-gap")) {
      var lastSeq = lastEventSeq();
      if (gap.latest > lastSeq) marker(lastSeq + 1); else gap = null;
    }
  }

  function lastEventSeq() {
    var events = timeline.querySelectorAll(":scope > li.ev");
    return events.length ? seqOf(events[events.length - 1]) : -1;
  }

  function marker(from) {
    var li = document.createElement("li");
    li.className = "more after gap";
    li.id = "live-gap";
    li.setAttribute("hx-get", windowUrl + "?after=" + from);
    li.setAttribute("hx-trigger", "revealed");
    li.setAttribute("hx-swap", "outerHTML");
    var a = document.createElement("a");
    a.href = pageUrl + "?after=" + from;
    li.appendChild(a);
    timeline.appendChild(li);
    htmx.process(li);
    return li;
  }

  function collapse(events) {
    for (var i = 0; i < events.length; i++) {
      var seq = seqOf(events[i]);
      if (seq > gap.latest) gap.latest = seq;
      if (visible(events[i])) gap.seqs.push(seq);
    }
    showGap();
  }

  function showGap() {
    var n = gap ? gap.seqs.length : 0;
    var li = document.getElementById("live-gap");
    if (li && li.firstChild) li.firstChild.textContent = n + (n === 1 ? " new message" : " new messages") + " — show";
    setUnseen(unseen);
  }

  // after a window came in at the end: close the gap, or leave a marker for what is still missing
  timeline.addEventListener("htmx:after:swap", function () {
    if (!gap) return;
    var last = timeline.lastElementChild;
    var lastSeq = lastEventSeq();
    gap.seqs = gap.seqs.filter(function (s) { return s > lastSeq; });
    if (last && last.classList.contains("more") && last.classList.contains("after")) {
      if (!last.id) last.id = "live-gap";  // a window's own "later events" link carries the gap on
    } else if (gap.latest > lastSeq) {
      marker(lastSeq + 1);  // events that came in while the window was on its way
    } else {
      gap = null;
    }
    showGap();
    if (pendingJump) {
      pendingJump = false;
      toEnd();
    }
  });

  var pendingJump = false;

  function jumpToLatest() {
    var li = document.getElementById("live-gap");
    if (!gap || !li) return toEnd();
    // the latest window, and above it a link to what lies between it and the page (from `floor`)
    var floor = lastEventSeq() + 1 || gap.from;
    var before = gap.latest >= 0 ? gap.latest + 1 : 1e9;  // 1e9: the end, whatever it is now
    pendingJump = true;
    htmx.ajax("GET", windowUrl + "?before=" + before + "&floor=" + floor,
              {source: timeline, target: li, swap: "outerHTML"});
  }

  // --- follow and the pill -----------------------------------------------------------------------
  function following() {
    var box = document.getElementById("follow");
    return box && box.checked;
  }

  function nearBottom() {
    var doc = document.documentElement;
    return window.innerHeight + window.scrollY >= doc.scrollHeight - 120;
  }

  function toEnd() {
    window.scrollTo(0, document.documentElement.scrollHeight);
    atBottom = true;
    unseenHeight = 0;
    setUnseen(0);
  }

  function setUnseen(n) {
    unseen = n;
    var total = n + (gap ? gap.seqs.length : 0);
    var pill = document.getElementById("new-pill");
    if (!pill) return;
    pill.hidden = total === 0;
    pill.textContent = total + (total === 1 ? " new message ↓" : " new messages ↓");
  }

  window.addEventListener("scroll", function () {
    atBottom = nearBottom();
    if (atBottom) {
      unseenHeight = 0;
      if (unseen) setUnseen(0);
    }
  }, { passive: true });

  document.addEventListener("click", function (e) {
    if (e.target.closest("#new-pill")) jumpToLatest();
  });

  // --- the stream's state --------------------------------------------------------------------------
  function setState(state, text) {
    var el = document.getElementById("live-state");
    if (!el) return;
    el.setAttribute("data-state", state);
    el.textContent = text;
  }

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

  function start() {
    var follow = document.getElementById("follow");
    if (!follow) return;
    follow.addEventListener("change", function () { if (follow.checked) jumpToLatest(); });
    if (follow.checked && !document.body.getAttribute("data-target")) toEnd();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
