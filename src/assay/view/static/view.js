// assay view: table filters and the compare picker. The pages are complete without this script.
(function () {
  "use strict";
  document.querySelectorAll(".filters").forEach(function (box) {
    var tbl = box.nextElementSibling;
    while (tbl && !(tbl.tagName === "TABLE" && tbl.classList.contains("filterable"))) tbl = tbl.nextElementSibling;
    if (!tbl) return;
    var selects = box.querySelectorAll("select[data-filter]");
    function apply() {
      var shown = 0;
      tbl.querySelectorAll("tbody tr").forEach(function (tr) {
        var ok = true;
        selects.forEach(function (s) {
          if (s.value && tr.getAttribute("data-" + s.getAttribute("data-filter")) !== s.value) ok = false;
        });
        tr.hidden = !ok;
        if (ok) shown++;
      });
      box.setAttribute("data-shown", String(shown));
    }
    if (box.hasAttribute("data-query")) {
      // served: reload with the filter, so it applies to every case of the run, not just this page
      selects.forEach(function (s) {
        s.addEventListener("change", function () {
          var q = new URLSearchParams();
          selects.forEach(function (o) { if (o.value) q.set(o.getAttribute("data-filter"), o.value); });
          location.href = "index.html" + (q.toString() ? "?" + q.toString() : "");
        });
      });
      return;
    }
    selects.forEach(function (s) { s.addEventListener("change", apply); });
    apply();
  });
  var form = document.getElementById("compare-form");
  if (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var enc = function (v) { return encodeURIComponent(v).replace(/%7E/gi, "~"); };
      location.href = "compare/" + enc(form.base.value) + "/" + enc(form.cur.value) + ".html";
    });
  }
  document.documentElement.setAttribute("data-ready", "1");
})();
