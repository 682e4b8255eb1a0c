// gpudash's server-rendered live pages (a node's page, a large site's paged overview), kept
// live without the browser bundle: this asks for the page again every 3 s while the tab is
// visible and, when the cluster's revision moved, swaps the page's body ([data-revision]), the
// status line and the title in place (no reload, scroll kept; a chart whose address did not
// change keeps its image). A kiosk's paged overview also turns to its next page
// (data-next) every data-rotate seconds.
(function () {
  "use strict";
  var busy = false;
  function body(doc) { return doc.querySelector("[data-revision]"); }
  function rev(doc) { var n = body(doc); return n ? n.getAttribute("data-revision") + "|" + location.href : null; }
  var seen = rev(document);
  function swap(sel, from) {
    var a = document.querySelector(sel), b = from.querySelector(sel);
    if (!a || !b) { return; }
    // Keep images whose address is the same (charts are drawn on request).
    b.querySelectorAll("img[src]").forEach(function (img) {
      var old = a.querySelector('img[src="' + img.getAttribute("src").replace(/"/g, '\\"') + '"]');
      if (old) { img.replaceWith(old); }
    });
    a.replaceWith(b);
  }
  function load(url, force) {
    if (busy || document.hidden) { return; }
    busy = true;
    fetch(url, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) {
        if (!t) { return; }
        var d = new DOMParser().parseFromString(t, "text/html");
        if (url !== location.href) { history.replaceState(null, "", url); }
        var r = rev(d);
        if (r === null || (r === seen && !force)) { return; }
        seen = r;
        swap("[data-revision]", d);
        swap("div.status", d);
        swap("h1.page-title", d);
      })
      .catch(function () {})
      .then(function () { busy = false; });
  }
  setInterval(function () { load(location.href, false); }, 3000);
  var b = body(document), every = b ? parseInt(b.getAttribute("data-rotate") || "0", 10) : 0;
  if (every > 0) {
    setInterval(function () {
      var n = body(document), next = n && n.getAttribute("data-next");
      if (next) { load(new URL(next, location.href).href, true); }
    }, every * 1000);
  }
})();
