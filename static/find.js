// session-viewer: finding things in a session — search as you type with hits streaming in, jumps
// to a hit / error / turn (in place, loading the window around it when it is not on the page),
// filters and outline menus, expand / collapse all, the keys, and where the page opens and stays.
// The server does all matching and marking; this file only asks for fragments and moves the view.
// Everything here has a plain-HTML fallback: the search form, hit links, filter links and the
// outline page work without it.
(function () {
  "use strict";

  var form, input, panel, hitsList, statusEl, timeline;
  var searchAbort = null;
  var active = null;  // the search on screen: URLSearchParams of q / case / regex, or null
  var current = -1;  // index of the current hit in the list
  var typingTimer = null;
  var expandMode = "";  // "", "open" or "closed": applied to windows loaded later too

  function $(id) { return document.getElementById(id); }

  function sessionKey() { return document.body.getAttribute("data-key"); }

  function toast(text) {
    var t = $("find-toast");
    if (!t) {
      t = document.createElement("div");
      t.id = "find-toast";
      t.className = "find-toast";
      t.setAttribute("role", "status");
      t.setAttribute("aria-live", "polite");
      document.body.appendChild(t);
    }
    t.textContent = text;
    t.classList.add("shown");
    clearTimeout(t._timer);
    t._timer = setTimeout(function () { t.classList.remove("shown"); }, 2200);
  }

  function typing(el) {
    if (!el || !el.tagName) return false;
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  // --- search ------------------------------------------------------------------------------------

  function searchParams() {
    var p = new URLSearchParams();
    var q = input.value;
    if (!q.trim()) return null;
    p.set("q", q);
    if (form.elements.case && form.elements.case.checked) p.set("case", "1");
    if (form.elements.regex && form.elements.regex.checked) p.set("regex", "1");
    return p;
  }

  function filterArgs() {
    return new URLSearchParams(timeline ? timeline.getAttribute("data-args") || "" : "");
  }

  function pageUrl(path, extra) {
    var p = filterArgs();
    if (extra) extra.forEach(function (v, k) { p.set(k, v); });
    var s = p.toString();
    return path + (s ? "?" + s : "");
  }

  function openPanel(title) {
    panel.hidden = false;
    document.body.classList.add("find-open");
    var h = $("find-title");
    if (h) {
      h.textContent = "";
      if (title) {
        h.appendChild(document.createTextNode("Matches for "));
        var q = document.createElement("q");
        q.textContent = title;
        h.appendChild(q);
      } else {
        h.textContent = "Search";
      }
    }
  }

  function closePanel() {
    if (searchAbort) searchAbort.abort();
    searchAbort = null;
    searching = false;
    active = null;
    current = -1;
    wanted = -1;
    panel.hidden = true;
    document.body.classList.remove("find-open");
    hitsList.innerHTML = "";
    unmark(document);
    var url = new URL(location.href);
    ["q", "case", "regex", "cont"].forEach(function (k) { url.searchParams.delete(k); });
    history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  }

  function unmark(root) {
    var marks = root.querySelectorAll("mark.hit");
    for (var i = 0; i < marks.length; i++) {
      var m = marks[i];
      m.replaceWith(document.createTextNode(m.textContent));
    }
    var notes = root.querySelectorAll(".hit-note");
    for (var j = 0; j < notes.length; j++) notes[j].remove();
    var cards = root.querySelectorAll("li.ev[data-marked]");
    for (var k = 0; k < cards.length; k++) cards[k].removeAttribute("data-marked");
  }

  function setError(text) {
    var el = $("find-error");
    if (!text) {
      if (el) el.remove();
      return;
    }
    if (!el) {
      el = document.createElement("p");
      el.id = "find-error";
      el.className = "find-error";
      el.setAttribute("role", "alert");
      hitsList.parentNode.insertBefore(el, hitsList);
    }
    el.textContent = text;
  }

  function setStatus(text) {
    statusEl = $("find-status");
    if (statusEl) {
      statusEl.textContent = text;
      statusEl.setAttribute("data-complete", "0");
    }
  }

  var searching = false;  // a stream of hits is coming in

  // run a search: from the start (reset), or on from a cursor the page or a stream stopped at
  // (`told`: the status the page shows says already what the search is doing)
  function runSearch(params, cursor, told) {
    if (searchAbort) searchAbort.abort();
    var controller = new AbortController();
    searchAbort = controller;
    active = params;
    openPanel(params.get("q"));
    setError("");
    if (!cursor) {
      hitsList.innerHTML = "";
      current = -1;
      wanted = -1;
      // (before the index a search the server cannot answer from the files alone waits for it)
      if (!told) setStatus(indexed() ? "Searching…" : "Searching the whole session as it is read…");
      var url = new URL(location.href);
      ["q", "case", "regex", "cont"].forEach(function (k) { url.searchParams.delete(k); });
      params.forEach(function (v, k) { url.searchParams.set(k, v); });
      history.replaceState(history.state, "", url.pathname + url.search + url.hash);
    } else {
      setStatus("Searching on…");
    }
    var query = new URLSearchParams(params);
    if (cursor) query.set("cursor", cursor);
    var count = hitsList.children.length;
    searching = true;
    return fetch(form.getAttribute("data-stream") + "?" + query.toString(), {
      signal: controller.signal, headers: { "Accept": "application/x-ndjson" }
    }).then(function (resp) {
      if (!resp.ok) {
        return resp.json().then(function (body) {
          setError(body.error || "The search failed.");
          setStatus("");
        });
      }
      var reader = resp.body.getReader();
      var decoder = new TextDecoder();
      var buffered = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) return;
          buffered += decoder.decode(chunk.value, { stream: true });
          var lines = buffered.split("\n");
          buffered = lines.pop();
          var html = "";
          for (var i = 0; i < lines.length; i++) {
            if (!lines[i]) continue;
            var msg = JSON.parse(lines[i]);
            if (msg.hit) {
              html += msg.html;
              count++;
            } else if (msg.progress !== undefined && !html) {
              setStatus((count ? count + (count === 1 ? " message" : " messages") + " so far, " : "") +
                "searched " + Math.round(msg.progress * 100) + "% of the session…");
            } else if (msg.done) {
              if (html) hitsList.insertAdjacentHTML("beforeend", html);
              html = "";
              var old = $("find-status");
              if (old) old.outerHTML = msg.html;
              statusEl = $("find-status");
              if (statusEl) statusEl.setAttribute("data-stream", "1");
            }
          }
          if (html) {
            hitsList.insertAdjacentHTML("beforeend", html);
            setStatus(count + (count === 1 ? " message" : " messages") + " so far…");
          }
          arrived();
          return pump();
        });
      }
      return pump();
    }).catch(function (err) {
      if (err.name !== "AbortError") setStatus("The search was interrupted: " + err.message);
    }).then(function () {
      if (searchAbort !== controller) return;
      searching = false;
      if (wanted >= 0) {  // a step waited for a hit this stream ended short of
        wanted = -1;
        toast(searchDone() ? (hitItems().length ? "No more matches: n goes back to the first" : "No matches")
          : "No more matches yet: the search stopped, n searches on");
      }
    });
  }

  function searchNow() {
    var params = searchParams();
    if (!params) {
      closePanel();
      return;
    }
    if (active && active.toString() === params.toString() && hitsList.children.length) return;
    runSearch(params, null);
  }

  // --- jumping to an event ------------------------------------------------------------------------

  function messageUrl(id, part, withSearch) {
    var path = form.getAttribute("data-message").replace("_ID_", encodeURIComponent(id));
    var p = withSearch && active ? new URLSearchParams(active) : new URLSearchParams();
    if (part) p.set("part", part);
    var s = p.toString();
    return path + (s ? "?" + s : "");
  }

  // the address of the page at event `id`: in the filtered view it is read in, if any
  function viewUrl(id, withSearch) {
    var there = new URL(messageUrl(id, null, withSearch), location.href);
    filterArgs().forEach(function (v, k) { there.searchParams.append(k, v); });
    return there.pathname + there.search;
  }

  function swap(url, target, how) {
    return htmx.ajax("GET", url, { target: target, swap: how });
  }

  // where event `id` is read on the page: a result drawn in the card of its call is read there
  function shownResult(id) {
    return document.querySelector('.tool-result[data-result-event="' + CSS.escape(id) + '"]');
  }

  // cards drawn with the search on screen carry its marks: stamped, they need no redraw
  function stamp(root) {
    if (!active) return;
    var s = active.toString();
    var evs = root.matches && root.matches("li.ev") ? [root] : root.querySelectorAll("li.ev");
    for (var i = 0; i < evs.length; i++) evs[i].setAttribute("data-marked", s);
  }

  function stamped(card) { return active && card.getAttribute("data-marked") === active.toString(); }

  // one jump at a time, the latest asked for: keys pressed fast skip the jumps they overtook (two
  // windows loading at once would land wherever the slower one left the page)
  var jumps = 0, jumping = Promise.resolve();

  function jumpTo(id, opts) {
    var mine = ++jumps;
    jumping = jumping.then(function () {
      if (mine === jumps) return jumpNow(id, opts || {}, mine);
    }).catch(function () {});
    return jumping;
  }

  // show event `id`: in place when it is on the page (redrawn with the search marked when it was
  // drawn without), else with the window around it
  function jumpNow(id, opts, mine) {
    var el = $("m-" + id);
    var marked = opts.search && active;
    var elsewhere = el && el.classList.contains("refs-only");
    var shown = elsewhere ? shownResult(id) : null;
    var card = shown ? shown.closest("li.ev") : (elsewhere ? null : el);
    var done;
    // (a card drawn with the search but without a mark holds the match where only the server
    // looks when asked for this event: past the cut of a long block)
    if (card && marked && !(stamped(card) && (shown || el).querySelector("mark.hit"))) {
      // the server draws the card where the event is read: a result's is its call's card
      done = swap(messageUrl(id, "event", true), card, "outerHTML").then(function () {
        var again = shownResult(id);
        var redrawn = elsewhere ? (again && again.closest("li.ev")) : $("m-" + id);
        if (redrawn) stamp(redrawn);
      });
    } else if (card) {
      done = Promise.resolve();
    } else if (filterArgs().toString() || !indexed()) {
      // a filtered view: the page around the event, in this view for a step through the view's
      // own errors, else in the whole session (an outline's prompt, a hit: the view may not hold it);
      // before the index, the page drawn around it at once (the window around it waits for the index)
      location.assign(opts.inView ? viewUrl(id, marked) : messageUrl(id, null, marked));
      return Promise.resolve();
    } else {
      done = swap(messageUrl(id, "window", marked), timeline, "innerHTML").then(function () {
        afterWindowJump();
        if (marked) stamp(timeline);
      });
    }
    return done.then(function () {
      var target = $("m-" + id);
      if (!target || mine !== jumps) return;
      reveal(target, id);
      history.replaceState(history.state, "", viewUrl(id, marked));
    });
  }

  function afterWindowJump() {
    // the live stream appends at the end of the timeline: off while a window mid-session shows
    var follow = $("follow");
    if (follow && timeline.querySelector(":scope > li.more.after")) follow.checked = false;
  }

  function openAround(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
  }

  function reveal(el, id) {
    // a result read in the card of its call is shown there; a message's match may sit in a result
    // its card draws, too
    var results = document.querySelectorAll('.tool-result[data-result-event="' + CSS.escape(id) + '"]');
    var shown = results[0];
    for (var r = 0; r < results.length; r++) {
      if (results[r].querySelector("mark.hit, .hit-note")) {
        shown = results[r];
        break;
      }
    }
    var home = el.classList.contains("refs-only") && shown ? shown : el;
    var spot = home.querySelector("mark.hit");
    if (!spot && shown && home !== shown) {
      home = shown;
      spot = shown.querySelector("mark.hit");
    }
    // a match only in the part of a long block not drawn: its note says so, by "show all"
    spot = spot || home.querySelector(".hit-note") || home;
    openAround(spot === home ? home : spot);
    if (el.classList.contains("is-hidden")) {
      var box = $("show-hidden");
      if (box && !box.checked) box.checked = true;
    }
    var old = document.querySelectorAll(".ev.target, .tool-result.target");
    for (var i = 0; i < old.length; i++) if (old[i] !== el && old[i] !== home) old[i].classList.remove("target");
    el.classList.add("target");
    home.classList.add("target");
    document.body.setAttribute("data-target", home.id || "m-" + id);
    document.body.setAttribute("data-target-id", id);
    var marks = document.querySelectorAll("mark.hit.current");
    for (var j = 0; j < marks.length; j++) marks[j].classList.remove("current");
    if (spot.tagName === "MARK") spot.classList.add("current");
    if (home.closest(".tool-result")) document.body.classList.remove("outputs-folded");
    var card = el.getClientRects().length ? el : home.closest("li.ev");
    if (card && card.getClientRects().length) setCurrentMessage(card, true);
    spot.scrollIntoView({ block: "center" });
    clearOfResults(spot);
    holdInView(spot);
    home.classList.remove("flash");
    void home.offsetWidth;  // restart the animation
    home.classList.add("flash");
  }

  // what loads late above a spot jumped to (lazy images, say) must not push it away: for a few
  // seconds, until the reader scrolls or types, the timeline's growth is scrolled back
  var held = null;

  function holdInView(spot) {
    held = { el: spot, top: spot.getBoundingClientRect().top, until: Date.now() + 5000 };
  }

  function keepHeld() {
    if (!held) return;
    if (Date.now() > held.until || !held.el.isConnected) {
      held = null;
      return;
    }
    var moved = held.el.getBoundingClientRect().top - held.top;
    if (Math.abs(moved) > 1) window.scrollBy(0, moved);
  }

  ["wheel", "touchstart", "keydown", "mousedown"].forEach(function (name) {
    window.addEventListener(name, function () { held = null; }, { passive: true, capture: true });
  });

  // on a narrow screen the results sit over the lower part of the page: the spot goes in the middle
  // of the room above them (centred in the whole window, a match sat against their edge, and a
  // note's "show all" on the line below it went under them)
  function clearOfResults(spot) {
    if (!panel || panel.hidden) return;
    if (spot.classList.contains("hit-note")) {
      var all = spot.parentNode.querySelector("a.show-all");
      if (all) spot = all;
    }
    var p = panel.getBoundingClientRect();
    var r = spot.getBoundingClientRect();
    if (p.left > r.left || p.top <= headerBottom()) return;
    var room = p.top - headerBottom();
    window.scrollBy(0, r.top - headerBottom() - Math.max(8, (room - Math.min(r.height, room)) / 2));
  }

  // --- hits: n / N -----------------------------------------------------------------------------------

  function hitItems() { return hitsList ? hitsList.querySelectorAll("li.hit") : []; }

  // a step past the hits listed while they are still coming in: taken when the hit arrives
  var wanted = -1;

  function arrived() {
    if (wanted >= 0 && hitItems().length > wanted) {
      var i = wanted;
      wanted = -1;
      goToHit(i);
    }
  }

  function stepHit(dir) {
    var items = hitItems();
    if (!items.length) {
      if (!active) {
        input.focus();
        toast("Type what to find, then press Enter");
      } else if (searching) {
        wanted = 0;
        toast("Searching…");
      } else {
        toast("No matches");
      }
      return;
    }
    var next = current + dir;
    if (current < 0 && dir < 0) next = -1;
    if (next >= items.length && !searchDone()) {
      // the list holds the hits found so far: go on searching rather than back to the first
      if (searching) {  // the next one comes with the stream under way
        wanted = next;
        toast("Searching on for match " + (next + 1) + "…");
        return;
      }
      var cursor = statusEl && statusEl.getAttribute("data-next");
      if (!cursor) {
        toast("Match " + items.length + " is the last found so far: search again to go on");
        return;
      }
      toast("Searching on for match " + (next + 1) + "…");
      runSearch(active, cursor);
      wanted = next;  // taken as it arrives (or said missing when the stream ends)
      return;
    }
    if (next < 0 && !searchDone()) {
      // the last matches are not found yet: the last of the list is not the session's last
      toast((current < 0 ? "The last match" : "First match: the last") + " is not found yet (" +
        items.length + " so far)");
      return;
    }
    wanted = -1;
    if (next >= items.length) {
      next = 0;
      toast("Back to the first match");
    } else if (next < 0) {
      next = items.length - 1;
      toast("Back to the last match");
    }
    goToHit(next);
  }

  function goToHit(i) {
    var items = hitItems();
    if (!items[i]) return;
    current = i;
    for (var k = 0; k < items.length; k++) {
      items[k].classList.toggle("current", k === i);
      if (k === i) items[k].setAttribute("aria-current", "true");
      else items[k].removeAttribute("aria-current");
    }
    items[i].scrollIntoView({ block: "nearest" });
    toast("Match " + (i + 1) + " of " + items.length + (searchDone() ? "" : " so far"));
    jumpTo(items[i].getAttribute("data-id"), { search: true });
  }

  // the hits list holds every hit: the scan ended without a limit or a time budget stopping it
  function searchDone() {
    statusEl = $("find-status");
    return !statusEl || statusEl.getAttribute("data-complete") !== "0";
  }

  // --- errors: e / E, start and end: g / G ---------------------------------------------------------

  function currentId() {
    var el = document.querySelector(".ev.current") || document.querySelector(".ev.target");
    if (el && inView(el)) return el.id.slice(2);
    var first = firstInView();
    return first ? first.id.slice(2) : (el ? el.id.slice(2) : "");
  }

  // where "next" counts from: the current message, else the one before the first in view (the
  // first in view is not passed over: an error at the top of the screen is the next one)
  function stepFrom(dir) {
    var el = document.querySelector(".ev.current") || document.querySelector(".ev.target");
    if (dir < 0 || (el && inView(el))) return currentId();
    var first = firstInView();
    if (!first) return currentId();
    var evs = visibleEvents(), i = evs.indexOf(first);
    return i > 0 ? evs[i - 1].id.slice(2) : (timeline.querySelector(":scope > li.more.before") ? first.id.slice(2) : "");
  }

  function stepError(dir) {
    // in a filtered view, the errors of that view
    var p = filterArgs(), where = p.toString() ? " in this view" : "";
    p.set("to", "error");
    p.set("dir", dir > 0 ? "next" : "prev");
    p.set("from", stepFrom(dir));
    fetch(form.getAttribute("data-step") + "?" + p.toString()).then(function (r) { return r.json(); }).then(function (got) {
      if (!got.id) {
        toast(got.total ? (dir > 0 ? "No more errors after this point" : "No errors before this point")
          : (where ? "No errors in this view" : "No errors in this session"));
        return;
      }
      toast("Error " + (got.index + 1) + " of " + got.total + where);
      jumpTo(got.id, { inView: true });
    });
  }

  function toEdge(end) {
    var sentinel = timeline.querySelector(end ? ":scope > li.more.after" : ":scope > li.more.before");
    var done = Promise.resolve();
    if (sentinel) {
      var p = filterArgs();
      p.set("at", end ? "end" : "start");
      done = swap(form.getAttribute("data-window") + "?" + p.toString(), timeline, "innerHTML")
        .then(afterWindowJump);
    }
    done.then(function () {
      if (end) {
        window.scrollTo(0, document.documentElement.scrollHeight);
        var follow = $("follow");
        if (follow && !follow.checked && $("live")) follow.checked = true;
      } else {
        window.scrollTo(0, 0);
      }
      var evs = visibleEvents();
      if (evs.length) setCurrentMessage(evs[end ? evs.length - 1 : 0], true);
    });
  }

  // --- messages: j / k ---------------------------------------------------------------------------

  function visibleEvents() {
    var all = timeline ? timeline.querySelectorAll("li.ev") : [];
    var out = [];
    for (var i = 0; i < all.length; i++) {
      if (all[i].getClientRects().length) out.push(all[i]);
    }
    return out;
  }

  function headerBottom() {
    var h = document.querySelector("header.top");
    return h ? h.getBoundingClientRect().bottom : 0;
  }

  function inView(el) {
    var r = el.getBoundingClientRect();
    return r.bottom > headerBottom() && r.top < window.innerHeight;
  }

  function firstInView() {
    var evs = visibleEvents();
    var top = headerBottom();
    for (var i = 0; i < evs.length; i++) {
      if (evs[i].getBoundingClientRect().bottom > top + 8) return evs[i];
    }
    return null;
  }

  function setCurrentMessage(el, quiet) {
    var old = document.querySelectorAll(".ev.current");
    for (var i = 0; i < old.length; i++) if (old[i] !== el) old[i].classList.remove("current");
    el.classList.add("current");
    if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
    el.focus({ preventScroll: true });
    if (!quiet) el.scrollIntoView({ block: "start" });
  }

  function stepMessage(dir) {
    var evs = visibleEvents();
    if (!evs.length) return;
    // the message chosen last, else the one a link or a jump opened the page at
    var cur = document.querySelector(".ev.current") || document.querySelector(".ev.target");
    var next;
    if (cur && evs.indexOf(cur) >= 0 && inView(cur)) {
      next = evs.indexOf(cur) + dir;
    } else {
      var first = firstInView();
      var at = first ? evs.indexOf(first) : 0;
      next = dir > 0 ? at : at - 1;
    }
    if (next >= evs.length) {
      var later = timeline.querySelector(":scope > li.more.after");
      if (later) {
        htmx.trigger(later, "later");
        toast("Loading later events…");
      } else {
        toast("This is the last message");
      }
      return;
    }
    if (next < 0) {
      var earlier = timeline.querySelector(":scope > li.more.before");
      if (earlier) {
        htmx.trigger(earlier, "earlier");
        toast("Loading earlier events…");
      } else {
        window.scrollTo(0, 0);
        toast("This is the first message");
      }
      return;
    }
    setCurrentMessage(evs[next], false);
  }

  // --- expand / collapse all -----------------------------------------------------------------------

  var FOLDABLE = "details.thinking, details.cached, details.file-content, details.json-input, " +
    "details.agent-prompt, details.data, details.detail";

  function applyExpand(root) {
    if (!expandMode) return;
    var ds = root.querySelectorAll(FOLDABLE);
    for (var i = 0; i < ds.length; i++) ds[i].open = expandMode === "open";
  }

  function setExpand(mode) {
    expandMode = mode;
    document.body.classList.toggle("outputs-folded", mode === "closed");
    applyExpand(timeline);
    toast(mode === "open" ? "Expanded every thinking block and output" : "Collapsed thinking and outputs");
  }

  // --- earlier windows load when the reader goes up to them, never by themselves -------------------

  var lastY = window.scrollY;
  var seen = new Set();
  var watcher = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (en) {
      if (en.isIntersecting) seen.add(en.target); else seen.delete(en.target);
    });
  }) : null;

  function watchSentinels(root) {
    if (!watcher) return;
    var found = (root || document).querySelectorAll("li.more.before");
    for (var i = 0; i < found.length; i++) watcher.observe(found[i]);
  }

  function loadEarlierInView() {
    seen.forEach(function (el) {
      if (!el.isConnected) {
        seen.delete(el);
        return;
      }
      if (el._asked) return;
      el._asked = true;
      htmx.trigger(el, "earlier");
    });
  }

  window.addEventListener("scroll", function () {
    var y = window.scrollY;
    if (y < lastY) loadEarlierInView();
    lastY = y;
  }, { passive: true });
  window.addEventListener("wheel", function (e) { if (e.deltaY < 0) loadEarlierInView(); }, { passive: true });

  // --- wiring ----------------------------------------------------------------------------------------

  document.addEventListener("click", function (e) {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    var more = e.target.closest("li.more > a");
    if (more) {
      e.preventDefault();
      htmx.trigger(more.parentElement, more.parentElement.classList.contains("before") ? "earlier" : "later");
      return;
    }
    var link = e.target.closest("a[data-jump]");
    if (link && form) {
      e.preventDefault();
      var item = link.closest("li.hit");
      if (item) {
        var items = Array.prototype.indexOf.call(hitItems(), item);
        goToHit(items);
        return;
      }
      var menu = link.closest("details.menu");
      if (menu && window.innerWidth < 1100) menu.open = false;
      jumpTo(link.getAttribute("data-jump"), {});
      return;
    }
    if (e.target.closest("#find-close")) {
      e.preventDefault();
      input.value = "";
      closePanel();
      input.focus();  // the button went with the panel: the focus goes back where a search starts
      return;
    }
    if (e.target.closest("#hit-next")) stepHit(1);
    else if (e.target.closest("#hit-prev")) stepHit(-1);
    else if (e.target.closest("#next-error")) stepError(1);
    else if (e.target.closest("#prev-error")) stepError(-1);
    else if (e.target.closest("#expand-all")) setExpand("open");
    else if (e.target.closest("#collapse-all")) setExpand("closed");
    else if (e.target.closest("#keys-button")) openHelp();
    else if (e.target.closest(".find-more") && statusEl && statusEl.getAttribute("data-next")) {
      e.preventDefault();
      runSearch(active || searchParams(), statusEl.getAttribute("data-next"));
    }
  });

  function openHelp() {
    var d = $("keys-help");
    if (d && !d.open) d.showModal();
  }

  // `o` puts the focus on a turn, so that arrows and Enter work at once: the turn the reader is in,
  // else the first. The outline loads when first opened: the focus waits for it (focusing the
  // fallback link it replaces lost the focus to the page)
  var outlineFocus = false;

  function toggleOutline() {
    var d = $("outline-menu");
    if (!d) return;
    if (d.open && d.contains(document.activeElement)) d.querySelector("summary").focus();
    d.open = !d.open;
    outlineFocus = d.open;
    if (d.open) focusTurn(d);
  }

  function focusTurn(d) {
    var turns = d.querySelectorAll("a.turn");
    if (!turns.length) return;
    outlineFocus = false;
    var here = turns[0];
    var seq = currentSeq();
    for (var i = 0; i < turns.length && seq !== null; i++) {
      var at = $("m-" + turns[i].getAttribute("data-jump"));
      if (!at) continue;
      if (Number(at.getAttribute("data-seq")) <= seq) here = turns[i];
      else break;
    }
    here.focus({ preventScroll: true });
    here.scrollIntoView({ block: "nearest" });
  }

  function currentSeq() {
    var id = currentId();
    var el = id && $("m-" + id);
    return el ? Number(el.getAttribute("data-seq")) : null;
  }

  document.addEventListener("htmx:after:swap", function (e) {
    var d = $("outline-menu");
    if (outlineFocus && d && d.open && d.contains(e.target)) focusTurn(d);
  });

  // Up and Down walk a menu's links (the outline's turns, the filters)
  function stepLink(from, dir) {
    var menu = from.closest("details.menu");
    if (!menu) return false;
    var links = Array.prototype.filter.call(menu.querySelectorAll(".menu-body a"),
      function (a) { return a.getClientRects().length; });
    var i = links.indexOf(from);
    if (i < 0 || !links[i + dir]) return i >= 0;
    links[i + dir].focus();
    return true;
  }

  function toggleHidden() {
    var box = $("show-hidden");
    if (!box) return;
    box.checked = !box.checked;
    toast(box.checked ? "Showing hidden events" : "Hiding hidden events");
  }

  document.addEventListener("keydown", function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || !form) return;
    if (e.key === "Escape") {
      if (typing(e.target)) {
        e.preventDefault();  // a search field would clear itself: Escape only leaves it
        e.target.blur();
        return;
      }
      var menus = document.querySelectorAll("details.menu[open]");
      if (menus.length) {
        for (var i = 0; i < menus.length; i++) {
          // the focus was in the menu: it goes back to the menu's button, not to the page
          if (menus[i].contains(document.activeElement)) menus[i].querySelector("summary").focus();
          menus[i].open = false;
        }
        return;
      }
      if (!panel.hidden) closePanel();
      return;
    }
    if (typing(e.target) || (document.querySelector("dialog[open]") && e.key !== "?")) return;
    if ((e.key === "ArrowDown" || e.key === "ArrowUp") && e.target.closest &&
        e.target.closest("details.menu a") && stepLink(e.target, e.key === "ArrowDown" ? 1 : -1)) {
      e.preventDefault();
      return;
    }
    // Down on an open menu's button goes into the menu (its first link)
    if (e.key === "ArrowDown" && e.target.matches && e.target.matches("details.menu[open] > summary")) {
      var inside = e.target.parentNode.querySelector(".menu-body a");
      if (inside) {
        e.preventDefault();
        inside.focus();
        return;
      }
    }
    var handled = true;
    switch (e.key) {
      case "/": input.focus(); input.select(); break;
      case "j": stepMessage(1); break;
      case "k": stepMessage(-1); break;
      case "n": stepHit(1); break;
      case "N": stepHit(-1); break;
      case "e": stepError(1); break;
      case "E": stepError(-1); break;
      case "g": toEdge(false); break;
      case "G": toEdge(true); break;
      case "t": toggleHidden(); break;
      case "o": toggleOutline(); break;
      case "?": openHelp(); break;
      default: handled = false;
    }
    if (handled) e.preventDefault();
  });

  // the page's search keeps marking what loads later: windows, sub-agent threads, "show all"
  document.addEventListener("htmx:config:request", function (e) {
    var ctx = e.detail && e.detail.ctx;
    if (!ctx || !ctx.request || !active) return;
    var url = new URL(ctx.request.action, location.href);
    if (!/\/s\/[^/]+\/(w|t|e)\//.test(url.pathname)) return;
    active.forEach(function (v, k) { url.searchParams.set(k, v); });
    ctx.request.action = url.pathname + url.search;
  });

  // "show all" replaces its block with the whole text. The focus the link had goes to that text
  // (it fell to the page); on a block the search said matches in its part not shown, the match
  // comes into view, marked as the current one, instead of somewhere thousands of lines below
  document.addEventListener("htmx:before:swap", function (e) {
    var link = e.target;
    if (!link.matches || !link.matches("a.show-all")) return;
    var block = link.closest(".cuttable");
    var holder = block && block.parentNode;
    if (!holder) return;
    var focused = document.activeElement === link, hit = link.classList.contains("has-hit");
    var watch = new MutationObserver(function (records) {
      watch.disconnect();
      var whole = null;
      for (var i = 0; i < records.length && !whole; i++) {
        var added = records[i].addedNodes;
        for (var j = 0; j < added.length && !whole; j++) if (added[j].nodeType === 1) whole = added[j];
      }
      if (!whole) return;
      if (focused) {
        whole.setAttribute("tabindex", "-1");
        whole.focus({ preventScroll: true });
      }
      var spot = hit && whole.querySelector("mark.hit");
      if (!spot) return;
      var marks = document.querySelectorAll("mark.hit.current");
      for (var k = 0; k < marks.length; k++) marks[k].classList.remove("current");
      spot.classList.add("current");
      spot.scrollIntoView({ block: "center" });
      clearOfResults(spot);
      holdInView(spot);
    });
    watch.observe(holder, { childList: true });
  });

  // while a window mid-session is shown, new events of a live session wait for the reader to get
  // to the end (its "later" link loads them); updates of cards on screen still apply
  document.addEventListener("htmx:sse:before:message", function (e) {
    var msg = e.detail && e.detail.message;
    if (!msg || msg.event || !timeline || !timeline.querySelector(":scope > li.more.after")) return;
    var t = document.createElement("template");
    t.innerHTML = msg.data;
    var dropped = t.content.querySelectorAll(":scope > li.ev");
    if (!dropped.length) return;
    for (var i = 0; i < dropped.length; i++) dropped[i].remove();
    msg.data = t.innerHTML;
  });

  function start() {
    form = $("find");
    timeline = $("timeline");
    if (!form || !timeline) return;
    input = $("find-q");
    panel = $("find-results");
    hitsList = $("hits");
    statusEl = $("find-status");
    var shown = document.querySelectorAll("#keys-button, .tool-buttons, .find-nav");
    for (var i = 0; i < shown.length; i++) shown[i].hidden = false;
    if (input.value.trim() && panel && !panel.hidden) {
      active = searchParams();
      stamp(timeline);  // the server marked the search in what it drew
      var targetId = document.body.getAttribute("data-target-id");
      var here = targetId && $("m-" + targetId);
      if (here) {
        var items = hitItems();
        for (var k = 0; k < items.length; k++) {
          if (items[k].getAttribute("data-id") === targetId) {
            current = k;
            items[k].classList.add("current");
            items[k].setAttribute("aria-current", "true");
            items[k].scrollIntoView({ block: "nearest" });
          }
        }
        reveal(here, targetId);
      }
      // the page carried the first hits; the rest stream in
      if (statusEl && statusEl.getAttribute("data-complete") === "0" && statusEl.getAttribute("data-next")) {
        runSearch(active, statusEl.getAttribute("data-next"));
      } else if (statusEl && statusEl.getAttribute("data-reading")) {
        // a first screen drawn before the index (around the first hit, found in the file's
        // bytes): the whole session is searched once its index is done — or at once when the
        // page lists none of its hits (a hit link's, a sub-agent's hit's: the server finds them
        // all without the index when it can, search.QuickScan, else its answer waits for it)
        var asked = active.toString(), seek = statusEl.getAttribute("data-seek");
        (hitItems().length ? whenIndexed : function (fn) { fn(); })(function () {
          if (!active || active.toString() !== asked) return;
          // (a hit link's page lists none of its region's hits: the hit it opened at is current)
          var items = hitItems(), at = current >= 0 && items[current] ? items[current].getAttribute("data-id") : targetId;
          runSearch(active, null, !indexed()).then(function () {  // (the hit that was current still is)
            var now = hitItems();
            for (var k = 0; at && current < 0 && k < now.length; k++) {
              if (now[k].getAttribute("data-id") !== at) continue;
              current = k;
              now[k].classList.add("current");
              now[k].setAttribute("aria-current", "true");
            }
            // a page drawn where the session opens, its first hit not known then: gone to now
            // (unless the reader went to one meanwhile)
            if (seek && current < 0 && now.length) goToHit(0);
          });
        });
      }
    }
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      clearTimeout(typingTimer);
      var params = searchParams();
      if (!params) {
        closePanel();
        return;
      }
      runSearch(params, null);
    });
    input.addEventListener("input", function () {
      clearTimeout(typingTimer);
      var q = input.value.trim();
      if (!q) {
        typingTimer = setTimeout(closePanel, 300);
        return;
      }
      if (q.length < 2) return;
      typingTimer = setTimeout(searchNow, 250);
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && hitItems().length && active &&
          active.toString() === (searchParams() || "").toString()) {
        e.preventDefault();
        input.blur();
        stepHit(e.shiftKey ? -1 : 1);
      }
    });
    ["case", "regex"].forEach(function (name) {
      var box = form.elements[name];
      if (box) box.addEventListener("change", function () { if (input.value.trim()) searchNow(); });
    });
    watchSentinels(document);
    if ("ResizeObserver" in window) new ResizeObserver(keepHeld).observe(timeline);
    new MutationObserver(function (records) {
      for (var i = 0; i < records.length; i++) {
        var added = records[i].addedNodes;
        for (var j = 0; j < added.length; j++) {
          var n = added[j];
          if (n.nodeType !== 1) continue;
          if (n.matches && n.matches("li.more.before")) watcher && watcher.observe(n);
          else if (n.querySelectorAll) watchSentinels(n);
          if (expandMode && n.querySelectorAll) applyExpand(n);
        }
      }
    }).observe(timeline, { childList: true, subtree: true });
  }

  // whether the page's index is done: its progress line hidden (web/early.py)
  function indexed() {
    var p = $("index-progress");
    return !p || p.hidden;
  }

  function whenIndexed(fn) {
    if (indexed()) return fn();
    var head = document.querySelector(".session-head") || document.body;
    var watch = new MutationObserver(function () {
      if (!indexed()) return;
      watch.disconnect();
      fn();
    });
    watch.observe(head, {childList: true, subtree: true, attributes: true, attributeFilter: ["hidden"]});
  }

  window.svFind = { jumpTo: jumpTo, toEnd: function () { toEdge(true); } };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
