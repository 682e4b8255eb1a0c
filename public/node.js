// gpudash's node page, live without the browser bundle: the page is server-rendered; this
// asks for it again every 3 s while the tab is visible and, when the cluster's revision moved,
// swaps the node's panels and the status line in place (no reload, scroll kept; a chart whose
// address did not change keeps its image). The overview's cards are the bundle's live view.
(function () {
  "use strict";
  var busy = false;
  function rev(doc) {
    var n = doc.querySelector(".node-page[data-revision]");
    return n ? n.getAttribute("data-revision") : null;
  }
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
  function tick() {
    if (busy || document.hidden) { return; }
    busy = true;
    fetch(location.href, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) {
        if (!t) { return; }
        var d = new DOMParser().parseFromString(t, "text/html");
        var r = rev(d);
        if (r === null || r === seen) { return; }
        seen = r;
        swap(".node-page", d);
        swap("div.status", d);
        swap("h1.page-title", d);
      })
      .catch(function () {})
      .then(function () { busy = false; });
  }
  setInterval(tick, 3000);
})();
