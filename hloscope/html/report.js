// hloscope report: sortable tables, finding filters, details opened for print. No library.
(function () {
  "use strict";
  function cellValue(row, k) {
    var cell = row.cells[k];
    if (!cell) return "";
    var v = cell.getAttribute("data-sort");
    if (v !== null && v !== "" && !isNaN(Number(v))) return Number(v);
    return cell.textContent.trim().toLowerCase();
  }
  function sortBy(table, k, th) {
    var body = table.tBodies[0];
    var asc = th.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, k), y = cellValue(b, k);
      var c = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, k) {
      var button = th.querySelector("button");
      if (button) button.addEventListener("click", function () { sortBy(table, k, th); });
    });
  });
  function applyFilters(id) {
    var table = document.getElementById(id);
    var text = document.querySelector('.f-text[data-table="' + id + '"]').value.trim().toLowerCase();
    var sev = document.querySelector('.f-sev[data-table="' + id + '"]').value;
    var code = document.querySelector('.f-code[data-table="' + id + '"]').value;
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (r) {
      var ok = (!sev || r.getAttribute("data-severity") === sev) &&
               (!code || r.getAttribute("data-code") === code) &&
               (!text || r.textContent.toLowerCase().indexOf(text) >= 0);
      r.hidden = !ok;
      if (ok) shown++;
    });
    var count = document.querySelector('[data-count="' + id + '"]');
    if (count) count.textContent = shown + " of " + rows.length + " groups shown";
  }
  document.querySelectorAll(".f-text, .f-sev, .f-code").forEach(function (el) {
    el.addEventListener(el.tagName === "INPUT" ? "input" : "change", function () {
      applyFilters(el.getAttribute("data-table"));
    });
  });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
})();
