// session-viewer charts: draws every <canvas data-chart="…"> with Chart.js (vendored). The numbers
// are also in tables beside each chart, so the pages read without JavaScript; this only draws.
// Data comes from the canvas's data-values (JSON) or data-src (a URL returning JSON).
(function () {
  "use strict";
  if (!window.Chart) return;

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function palette() {
    return {
      ink: css("--ink"), muted: css("--muted"), line: css("--line"), accent: css("--accent"),
      tool: css("--tool"), error: css("--error"), ok: css("--ok"), system: css("--system"),
      warn: css("--warn"), lane5: css("--lane-5"), lane4: css("--lane-4")
    };
  }

  function span(s) {  // seconds as 850ms, 4.2s, 3m05s, 2h04m (as the pages write durations)
    if (s < 1) return Math.round(s * 1000) + "ms";
    if (s < 10) return s.toFixed(1) + "s";
    s = Math.round(s);
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60), r = s % 60;
    if (m < 60) return m + "m" + (r < 10 ? "0" : "") + r + "s";
    var h = Math.floor(m / 60), mm = m % 60;
    return h + "h" + (mm < 10 ? "0" : "") + mm + "m";
  }

  function count(n) {
    var a = Math.abs(n);
    if (a >= 1e9) return (n / 1e9).toFixed(1) + "B";
    if (a >= 1e6) return (n / 1e6).toFixed(1) + "M";
    if (a >= 1e3) return (n / 1e3).toFixed(1) + "k";
    return String(Math.round(n));
  }

  function usd(v) {
    if (v === 0) return "$0";
    if (v < 0.001) return "<$0.001";
    if (v < 1) return "$" + v.toFixed(3);
    return "$" + v.toFixed(2);
  }

  // an axis's tick: as usd, but a tick below a cent keeps two figures, so that a day's tenths
  // of a cent do not all read "$0.001" / "<$0.001"
  function usdTick(v) {
    return v === 0 || v >= 0.01 ? usd(v) : "$" + parseFloat(v.toPrecision(2));
  }

  function base(p) {
    Chart.defaults.color = p.muted;
    Chart.defaults.borderColor = p.line;
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    Chart.defaults.font.size = 12;
    Chart.defaults.animation = false;
    Chart.defaults.maintainAspectRatio = false;
  }

  // --- jumping to an event: scroll to it when it is on the page, else open its permalink ----------
  function jump(canvas, eventId) {
    if (!eventId) return;
    var el = document.getElementById("m-" + eventId);
    if (el) {
      for (var p = el.parentElement; p; p = p.parentElement) {
        if (p.tagName === "DETAILS") p.open = true;
      }
      el.scrollIntoView({ block: "center" });
      el.classList.remove("flash");
      void el.offsetWidth;
      el.classList.add("flash");
      return;
    }
    var url = canvas.getAttribute("data-message-url");
    if (url) location.href = url + encodeURIComponent(eventId);
  }

  function clip(text, max) {
    return text.length > max ? text.slice(0, max - 1) + "…" : text;
  }

  // --- the session timeline: one row per thread, model and tool calls as bars --------------------
  function timeline(canvas, data, p) {
    var tl = data.timeline;
    if (!tl || !tl.rows.length) return null;
    var t0 = tl.start || 0;
    var labels = tl.rows.map(function (r) { return r.label; });
    var sets = { model: [], tool: [], error: [] };
    tl.rows.forEach(function (r) {
      r.bars.forEach(function (b) {
        var kind = b.error ? "error" : b.kind;
        // a bar of no length (a call with no result, or events with one time) still shows
        var end = Math.max(b.end - t0, b.start - t0 + 0.25);
        sets[kind].push({ x: [b.start - t0, end], y: r.label, bar: b });
      });
    });
    var box = canvas.parentElement;
    // the rows, and below them the axis, its title and the legend (about 100 px whatever the rows)
    box.style.height = Math.max(150, 100 + labels.length * 32) + "px";
    // model calls full height underneath, tool calls thinner on top of them, errors on top of all
    var ds = function (label, rows, color, thick, order) {
      return { label: label, data: rows, backgroundColor: color, borderColor: color, borderWidth: 0,
               borderSkipped: false, grouped: false, barPercentage: thick, categoryPercentage: 0.9,
               minBarLength: 3, order: order };
    };
    return new Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: [ds("model calls", sets.model, p.accent, 0.9, 3),
                                        ds("tool calls", sets.tool, p.tool, 0.5, 2),
                                        ds("errors", sets.error, p.error, 0.5, 1)] },
      options: {
        indexAxis: "y",
        interaction: { mode: "nearest", intersect: true, axis: "xy" },
        scales: {
          x: { type: "linear", min: 0, title: { display: true, text: "time since the session started" },
               ticks: { callback: function (v) { return span(v); } } },
          // a thread's name is cut at its end to leave the bars most of a narrow screen
          y: { ticks: { autoSkip: false, callback: function (v) {
            return clip(this.getLabelForValue(v), Math.max(12, Math.floor(canvas.clientWidth / 26)));
          } } }
        },
        plugins: {
          legend: { position: "bottom" },
          tooltip: { callbacks: {
            title: function (items) { return items[0].raw.bar.label; },
            label: function (item) {
              var b = item.raw.bar, parts = [span(b.end - b.start)];
              if (b.tokens) parts.push(count(b.tokens) + " tokens");
              if (b.status && b.kind === "tool") parts.push(b.status);
              parts.push("at +" + span(b.start - t0));
              return parts.join(" · ");
            },
            footer: function () { return "click to open"; }
          } }
        },
        onClick: function (evt, elements, chart) {
          if (!elements.length) return;
          var el = elements[0];
          jump(canvas, chart.data.datasets[el.datasetIndex].data[el.index].bar.event);
        },
        onHover: function (evt, elements) {
          evt.native.target.style.cursor = elements.length ? "pointer" : "default";
        }
      }
    });
  }

  // --- tokens per turn: stacked bars --------------------------------------------------------------
  function turns(canvas, data, p) {
    var ts = data.turns;
    if (!ts || !ts.length) return null;
    var labels = ts.map(function (t, i) { return String(i + 1); });
    var pick = function (f) { return ts.map(function (t) { return t[f]; }); };
    var ds = function (label, f, color) {
      return { label: label, data: pick(f), backgroundColor: color, stack: "t", maxBarThickness: 48 };
    };
    return new Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: [ds("input", "input", p.accent), ds("cache write", "cache_write", p.warn),
                                        ds("cache read", "cache_read", p.lane5), ds("output", "output", p.ok)] },
      options: {
        scales: { x: { stacked: true, title: { display: true, text: "turn" } },
                  y: { stacked: true, ticks: { callback: function (v) { return count(v); } } } },
        plugins: { legend: { position: "bottom" },
                   tooltip: { callbacks: {
                     title: function (items) { var t = ts[items[0].dataIndex];
                       return "turn " + (items[0].dataIndex + 1) + " · " + t.calls + " model call" + (t.calls === 1 ? "" : "s"); },
                     label: function (item) { return item.dataset.label + ": " + count(item.raw); } } } },
        onClick: function (evt, elements) {
          if (elements.length) jump(canvas, ts[elements[0].index].event);
        },
        onHover: function (evt, elements) {
          evt.native.target.style.cursor = elements.length ? "pointer" : "default";
        }
      }
    });
  }

  // --- the archive: per day, top tools --------------------------------------------------------------
  function days(canvas, data, p) {
    var field = canvas.getAttribute("data-field");
    var fmt = field === "cost" ? usd : count;
    var color = { sessions: p.accent, tokens: p.lane5, cost: p.ok }[field] || p.accent;
    return new Chart(canvas, {
      type: "bar",
      data: { labels: data.map(function (d) { return d.day; }),
              datasets: [{ label: canvas.getAttribute("aria-label"), data: data.map(function (d) { return d[field]; }),
                           backgroundColor: color }] },
      options: {
        // whole numbers of sessions and tokens: no tick between two of them
        scales: { y: { beginAtZero: true, ticks: { precision: field === "cost" ? undefined : 0,
                                                   callback: function (v) { return (field === "cost" ? usdTick : fmt)(v); } } },
                  x: { ticks: { maxRotation: 0, autoSkip: true } } },
        plugins: { legend: { display: false },
                   tooltip: { callbacks: { label: function (item) { return fmt(item.raw); } } } }
      }
    });
  }

  function tools(canvas, data, p) {
    var field = canvas.getAttribute("data-field");
    var fmt = field === "total_s" ? span : field === "error_rate" ?
      function (v) { return Math.round(v * 100) + "%"; } : count;
    var color = field === "error_rate" ? p.error : field === "total_s" ? p.system : p.tool;
    canvas.parentElement.style.height = Math.max(120, 40 + data.length * 22) + "px";
    // the axis's labels come short from the server (an MCP tool's own name first, long ones cut at
    // the end: the axis cut them at the start); the whole name is the tooltip's title
    var labels = JSON.parse(canvas.getAttribute("data-labels") || "null") ||
      data.map(function (t) { return t.name; });
    return new Chart(canvas, {
      type: "bar",
      data: { labels: labels,
              datasets: [{ data: data.map(function (t) { return t[field]; }), backgroundColor: color }] },
      options: {
        indexAxis: "y",
        // calls are whole numbers: no tick between two of them (it read "0 0 0 1 1 1")
        scales: { x: { beginAtZero: true, ticks: { precision: field === "count" ? 0 : undefined,
                                                   callback: function (v) { return fmt(v); } } },
                  y: { ticks: { autoSkip: false } } },
        plugins: { legend: { display: false },
                   tooltip: { callbacks: { title: function (items) { return data[items[0].dataIndex].name; },
                                           label: function (item) { return fmt(item.raw); } } } }
      }
    });
  }

  var kinds = { timeline: timeline, turns: turns, days: days, tools: tools };
  var drawn = [];

  function draw(canvas, data) {
    var p = palette();
    base(p);
    var make = kinds[canvas.getAttribute("data-chart")];
    if (!make) return;
    var chart = make(canvas, data, p);
    if (chart) {
      canvas.setAttribute("data-drawn", "1");
      drawn.push({ canvas: canvas, data: data, chart: chart });
    } else {  // nothing to draw: the figure goes, its caption too (a heading over nothing)
      (canvas.closest("figure") || canvas.parentElement).hidden = true;
    }
  }

  var fetched = {};

  function scan(root) {
    var canvases = (root || document).querySelectorAll("canvas[data-chart]:not([data-drawn])");
    Array.prototype.forEach.call(canvases, function (canvas) {
      canvas.setAttribute("data-drawn", "0");
      var values = canvas.getAttribute("data-values");
      if (values) {
        draw(canvas, JSON.parse(values));
        return;
      }
      var src = canvas.getAttribute("data-src");
      if (!src) return;
      if (!fetched[src]) {
        fetched[src] = fetch(src, { credentials: "same-origin" }).then(function (r) {
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.json();
        });
      }
      fetched[src].then(function (data) { draw(canvas, data); }, function () {
        canvas.parentElement.classList.add("chart-failed");
      });
    });
  }

  // redraw in the other palette when the reader's colour scheme changes
  if (window.matchMedia) {
    var mq = window.matchMedia("(prefers-color-scheme: dark)");
    var redraw = function () {
      var old = drawn;
      drawn = [];
      old.forEach(function (d) { d.chart.destroy(); d.canvas.removeAttribute("data-drawn"); draw(d.canvas, d.data); });
    };
    if (mq.addEventListener) mq.addEventListener("change", redraw);
  }

  function start() {
    scan(document);
    new MutationObserver(function (records) {
      for (var i = 0; i < records.length; i++) {
        if (records[i].addedNodes.length) { scan(document); return; }
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
