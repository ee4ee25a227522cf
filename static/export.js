// session-viewer export: the little an exported file does with script (it reads fine without):
// times in the reader's zone, and a message linked by #m-<id> opened from inside closed sections.
(function () {
  "use strict";
  var fmt = new Intl.DateTimeFormat("en-CA", {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", hourCycle: "h23", timeZoneName: "short"
  });
  var times = document.querySelectorAll("time[datetime]:not([data-local])");  // (a zoneless time stays as written)
  for (var i = 0; i < times.length; i++) {
    var d = new Date(times[i].getAttribute("datetime"));
    if (isNaN(d)) continue;
    var p = {};
    fmt.formatToParts(d).forEach(function (x) { p[x.type] = x.value; });
    times[i].textContent = p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute +
      ":" + p.second + " " + p.timeZoneName;
    times[i].setAttribute("data-local", "1");
  }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    for (var n = el.parentElement; n; n = n.parentElement) {
      if (n.tagName === "DETAILS") n.open = true;
    }
    if (el.classList.contains("is-hidden")) document.getElementById("show-hidden").checked = true;
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", reveal);
  reveal();
})();
