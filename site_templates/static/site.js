/* Progressive enhancement only: every table is complete without this file.
 * Adds sorting to tables with class "sortable" (click a column heading) and a
 * filter box above tables with class "filterable". Cells may carry a
 * data-sort value; empty values always sort last. */
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var raw = cell.getAttribute("data-sort");
    return raw !== null ? raw : cell.textContent.trim();
  }

  function compare(a, b) {
    if (a === "" && b === "") return 0;
    if (a === "") return 1;
    if (b === "") return -1;
    var x = Number(a), y = Number(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }

  function sortBy(table, index, heading) {
    var body = table.tBodies[0];
    if (!body) return;
    var descending = heading.getAttribute("aria-sort") === "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, i) { return { row: row, key: cellValue(row, index), i: i }; });
    keyed.sort(function (p, q) {
      if (p.key === "" || q.key === "") return compare(p.key, q.key) || p.i - q.i;
      var c = compare(p.key, q.key);
      return (descending ? -c : c) || p.i - q.i;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    heading.setAttribute("aria-sort", descending ? "descending" : "ascending");
    keyed.forEach(function (k) { body.appendChild(k.row); });
  }

  function makeSortable(table) {
    if (!table.tHead || !table.tHead.rows.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      // The button fills the cell and the cell listens: a click anywhere in the heading sorts, and the
      // button keeps it reachable by Tab and Enter/Space (a button's key press is a click that bubbles here).
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.classList.add("sorts");
      th.addEventListener("click", function () { sortBy(table, index, th); });
    });
  }

  function makeFilterable(table) {
    var body = table.tBodies[0];
    if (!body || body.rows.length < 2) return;
    var input = document.createElement("input");
    input.type = "search";
    input.className = "filter";
    input.placeholder = "Filter rows…";
    input.setAttribute("aria-label", "Filter the rows of the table below");
    var anchor = table.parentNode.classList.contains("table-wrap") ? table.parentNode : table;
    anchor.parentNode.insertBefore(input, anchor);
    input.addEventListener("input", function () {
      var needle = input.value.trim().toLowerCase();
      Array.prototype.forEach.call(body.rows, function (row) {
        row.hidden = needle !== "" && row.textContent.toLowerCase().indexOf(needle) < 0;
      });
    });
  }

  // An abbreviation's title (est., +dirty) is hover-only on its own: a tap, a click or Enter/Space
  // shows it as text after the abbreviation, and again hides it.
  function makeTappable(abbr) {
    abbr.setAttribute("tabindex", "0");
    abbr.setAttribute("role", "button");
    abbr.setAttribute("aria-expanded", "false");
    function toggle(event) {
      event.preventDefault();
      event.stopPropagation();
      var shown = abbr.nextElementSibling;
      if (shown && shown.classList.contains("abbr-text")) {
        shown.parentNode.removeChild(shown);
        abbr.setAttribute("aria-expanded", "false");
        return;
      }
      var text = document.createElement("span");
      text.className = "abbr-text";
      text.textContent = abbr.getAttribute("title");
      abbr.parentNode.insertBefore(text, abbr.nextSibling);
      abbr.setAttribute("aria-expanded", "true");
    }
    abbr.addEventListener("click", toggle);
    abbr.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") toggle(event);
    });
  }

  // Before each benchmark had its own leaderboard, index.html held every corpus's board, at
  // #corpus-<digest> (and -cutoffs, -latency, …). On the front page such a link goes on to that corpus's
  // board on its benchmark's page; without this script it lands on the corpus's line here.
  function followMovedBoard() {
    var hash = location.hash.slice(1);
    var moved = /^(corpus-[0-9a-f]{10})(-.*)?$/.exec(hash);
    if (!moved || !document.querySelector("table.benchmarks")) return;
    var at = document.getElementById(moved[1]);
    var row = at && at.closest("tr");
    var link = row && row.querySelector("td.bench a");
    if (link) location.replace(link.getAttribute("href") + "#" + hash);
  }

  function init() {
    followMovedBoard();
    // Instructions that only hold with this script (sorting by a heading) are hidden until now.
    Array.prototype.forEach.call(document.querySelectorAll(".js-only"), function (el) { el.hidden = false; });
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
    Array.prototype.forEach.call(document.querySelectorAll("table.filterable"), makeFilterable);
    Array.prototype.forEach.call(document.querySelectorAll("abbr[title]"), makeTappable);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
