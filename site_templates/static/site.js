/* Progressive enhancement only: every table is complete without this file.
 * Adds sorting to tables with class "sortable" (click a column heading) and a
 * filter box above tables with class "filterable". Cells may carry a
 * data-sort value; empty values always sort last. A leaderboard whose rows
 * declare facts (data-tuned, data-llm) gets two checkboxes that hide them. */
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

  // The bodies sorted: the first, or each group of memories (a leaderboard's rows at one k); ceilings and
  // published figures keep their place. A group's heading row stays on top.
  function sortBy(table, index, heading) {
    var groups = table.querySelectorAll("tbody.k-group");
    var bodies = groups.length ? Array.prototype.slice.call(groups) : (table.tBodies[0] ? [table.tBodies[0]] : []);
    if (!bodies.length) return;
    var descending = heading.getAttribute("aria-sort") === "ascending";
    bodies.forEach(function (body) {
      var rows = Array.prototype.filter.call(body.rows, function (row) { return !row.classList.contains("group"); });
      var keyed = rows.map(function (row, i) { return { row: row, key: cellValue(row, index), i: i }; });
      keyed.sort(function (p, q) {
        if (p.key === "" || q.key === "") return compare(p.key, q.key) || p.i - q.i;
        var c = compare(p.key, q.key);
        return (descending ? -c : c) || p.i - q.i;
      });
      keyed.forEach(function (k) { body.appendChild(k.row); });
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    heading.setAttribute("aria-sort", descending ? "descending" : "ascending");
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
    var groups = table.querySelectorAll("tbody.k-group");
    var bodies = groups.length ? Array.prototype.slice.call(groups) : (table.tBodies[0] ? [table.tBodies[0]] : []);
    var rows = [];
    bodies.forEach(function (b) { rows = rows.concat(Array.prototype.filter.call(b.rows, function (r) { return !r.classList.contains("group"); })); });
    if (rows.length < 2) return;
    var input = document.createElement("input");
    input.type = "search";
    input.className = "filter";
    input.placeholder = "Filter rows…";
    input.setAttribute("aria-label", "Filter the rows of the table below");
    var anchor = table.parentNode.classList.contains("table-wrap") ? table.parentNode : table;
    anchor.parentNode.insertBefore(input, anchor);
    input.addEventListener("input", function () {
      var needle = input.value.trim().toLowerCase();
      rows.forEach(function (row) {
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

  // Two rows ticked on a leaderboard: a link to their comparison, compare/<A>-vs-<B>.html, A the row
  // ranked above (the pages exist in that order only). Both come from one corpus's board: a tick on
  // another board, or a third tick, unticks the oldest.
  function makePickable() {
    var boxes = Array.prototype.slice.call(document.querySelectorAll("input.pick"));
    var link = document.querySelector(".pick-bar a.pick-go");
    var ticked = [];
    boxes.forEach(function (box) {
      box.addEventListener("change", function () {
        var board = box.closest("section.corpus");
        ticked = ticked.filter(function (b) { return b !== box && b.checked && b.closest("section.corpus") === board; });
        if (box.checked) ticked.push(box);
        while (ticked.length > 2) ticked.shift();
        boxes.forEach(function (other) { other.checked = ticked.indexOf(other) >= 0; });
        if (!link) return;
        if (ticked.length === 2) {
          var pair = ticked.slice().sort(function (p, q) { return Number(p.getAttribute("data-order")) - Number(q.getAttribute("data-order")); });
          link.href = "compare/" + pair[0].value + "-vs-" + pair[1].value + ".html";
          link.hidden = false;
        } else {
          link.hidden = true;
        }
      });
    });
  }

  // A table of questions (class "by-category", rows with data-category): a choice of one category, kept
  // in the URL as the compare pages keep theirs (#category=event_ordering), showing only its rows.
  function makeCategoryFilter(table) {
    var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr[data-category]"));
    var names = [];
    rows.forEach(function (row) { var c = row.getAttribute("data-category"); if (c && names.indexOf(c) < 0) names.push(c); });
    if (names.length < 2) return;
    names.sort(function (p, q) { return p.localeCompare(q, undefined, { numeric: true }); });
    var label = document.createElement("label");
    label.className = "category-filter";
    label.appendChild(document.createTextNode("category "));
    var select = document.createElement("select");
    [""].concat(names).forEach(function (name) {
      var option = document.createElement("option");
      option.value = name;
      option.textContent = name ? name + " (" + rows.filter(function (r) { return r.getAttribute("data-category") === name; }).length + ")" : "every category";
      select.appendChild(option);
    });
    label.appendChild(select);
    var anchor = table.parentNode.classList.contains("table-wrap") ? table.parentNode : table;
    anchor.parentNode.insertBefore(label, anchor);
    function wanted() {
      var found = /(?:^#|&)category=([^&]*)/.exec(location.hash);
      if (!found) return "";
      // A malformed percent-escape (#category=%E0%A4%A) names no category: decodeURIComponent throws on it.
      try { return decodeURIComponent(found[1].replace(/\+/g, " ")); } catch (e) { return ""; }
    }
    function apply() {
      var name = wanted();
      select.value = names.indexOf(name) >= 0 ? name : "";
      rows.forEach(function (row) { row.hidden = select.value !== "" && row.getAttribute("data-category") !== select.value; });
    }
    select.addEventListener("change", function () {
      var next = select.value ? "#category=" + encodeURIComponent(select.value) : location.pathname + location.search;
      if (history.replaceState) history.replaceState(null, "", next);
      apply();
    });
    window.addEventListener("hashchange", function () { apply(); if (wanted()) label.scrollIntoView(); });
    apply();
    if (wanted()) label.scrollIntoView();
  }

  // A drill-down's records that are one turn are written as a few attributes (docs/site.md, "Keeping the site small"):
  // <li value="rank" data-t="turn" data-id="D1:3" data-d="date index" data-h="link" data-n="characters">N tokens</li>.
  // Each is drawn as the template once wrote it: the turn linked to its line in the transcript (#turn-ids' data-href,
  // or data-h), the benchmark's name and date, its tokens, "evidence turn" (class evi), and a slot for its text
  // (folded when data-n says it is long) that fillTurns fills in.
  function drawRecords() {
    var ids = document.getElementById("turn-ids");
    var items = document.querySelectorAll("ol.records li[data-t]");
    if (!ids || !items.length) return;
    var base = ids.getAttribute("data-href") || "";
    var dates = [];
    try { dates = JSON.parse(ids.getAttribute("data-dates") || "[]"); } catch (e) { dates = []; }
    Array.prototype.forEach.call(items, function (li) {
      var turn = li.getAttribute("data-t");
      var label = li.getAttribute("data-id") || "";
      var d = li.getAttribute("data-d");
      var date = d !== null && dates[Number(d)] ? String(dates[Number(d)]) : "";
      var link = document.createElement("a");
      link.setAttribute("href", li.getAttribute("data-h") || base + "#t-" + turn);
      link.textContent = "turn " + turn;
      var head = [link];
      if (label || date) {
        var tid = document.createElement("span");
        tid.className = "tid";
        tid.textContent = "(" + label + (label && date ? ", " : "") + date + ")";
        head.push(document.createTextNode(" "), tid);
      }
      head.push(document.createTextNode(" \u00b7 "));
      head.reverse().forEach(function (node) { li.insertBefore(node, li.firstChild); });
      if (li.classList.contains("evi")) {
        var strong = document.createElement("strong");
        strong.textContent = "evidence turn";
        li.appendChild(document.createTextNode(" \u00b7 "));
        li.appendChild(strong);
      }
      var slot = document.createElement("div");
      slot.className = "txt";
      slot.setAttribute("data-fill", "");
      var length = li.getAttribute("data-n");
      if (length !== null) {
        var fold = document.createElement("details");
        var summary = document.createElement("summary");
        summary.textContent = Number(length).toLocaleString("en-US") + " characters";
        fold.appendChild(summary);
        fold.appendChild(slot);
        li.appendChild(fold);
      } else {
        li.appendChild(slot);
      }
      li.removeAttribute("data-t");  // drawn: site.css's stand-in for the link and name goes
    });
  }

  // A drill-down's list of the turns its test points touched: each line whose turn is the transcript's own line links
  // it there ("turn N in the transcript"), drawn here from #turn-ids' data-href; a passage's line carries its link.
  function linkTouched() {
    var ids = document.getElementById("turn-ids");
    if (!ids) return;
    var base = ids.getAttribute("data-href") || "";
    Array.prototype.forEach.call(document.querySelectorAll("ol.transcript > li[value]"), function (li) {
      if (li.querySelector("a.more")) return;
      var link = document.createElement("a");
      link.className = "more";
      link.setAttribute("href", base + "#t-" + li.getAttribute("value"));
      link.textContent = "turn " + li.getAttribute("value") + " in the transcript";
      li.appendChild(document.createTextNode(" "));
      li.appendChild(link);
    });
  }

  // A drill-down's records that are turns carry no text (it is written once, in the corpus's transcript): each
  // (data-fill) is filled in from the line its record's first link names, each page fetched once.
  function fillTurns() {
    var slots = document.querySelectorAll("div.txt[data-fill]");
    if (!slots.length || !window.fetch || !window.DOMParser) return;
    var pages = {};
    Array.prototype.forEach.call(slots, function (slot) {
      var item = slot.closest ? slot.closest("li") : null;  // a long record's slot sits in its <details>
      var link = item ? item.querySelector("a[href]") : null;
      var href = link ? link.getAttribute("href") : "";
      var hash = href.indexOf("#");
      if (hash < 0) return;
      var page = href.slice(0, hash);
      (pages[page] = pages[page] || []).push([slot, decodeURIComponent(href.slice(hash + 1))]);
    });
    Object.keys(pages).forEach(function (page) {
      fetch(page).then(function (response) {
        if (!response.ok) throw new Error(page);
        return response.text();
      }).then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        pages[page].forEach(function (pair) {
          var line = doc.getElementById(pair[1]);
          var text = line && line.querySelector(".txt");
          if (text) pair[0].textContent = text.textContent;
        });
      }).catch(function () {});
    });
  }

  // Declared facts: a leaderboard's rows that declare benchmarks their settings were tuned on (data-tuned) or a
  // memory that writes with an LLM (data-llm) can be hidden with two checkboxes beside the board's tools. Without
  // this script there are no checkboxes and every row shows.
  function makeDeclaredFilter() {
    var tools = document.querySelector("p.board-tools");
    if (!tools) return;
    function box(kind, text, rows) {
      if (!rows.length) return;
      var label = document.createElement("label");
      label.className = "declared-filter " + kind;
      var input = document.createElement("input");
      input.type = "checkbox";
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + text + " (" + rows.length + ")"));
      tools.appendChild(label);
      input.addEventListener("change", function () {
        Array.prototype.forEach.call(rows, function (row) { row.classList.toggle("hidden-" + kind, input.checked); });
      });
    }
    box("tuned", "hide systems tuned on a benchmark", document.querySelectorAll("table.leaderboard tr[data-tuned]"));
    box("llm", "hide memories that write with an LLM", document.querySelectorAll("table.leaderboard tr[data-llm]"));
  }

  function init() {
    followMovedBoard();
    drawRecords();
    linkTouched();
    fillTurns();
    // Instructions that only hold with this script (sorting by a heading) are hidden until now.
    Array.prototype.forEach.call(document.querySelectorAll(".js-only"), function (el) { el.hidden = false; });
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
    Array.prototype.forEach.call(document.querySelectorAll("table.filterable"), makeFilterable);
    Array.prototype.forEach.call(document.querySelectorAll("table.by-category"), makeCategoryFilter);
    Array.prototype.forEach.call(document.querySelectorAll("abbr[title]"), makeTappable);
    makePickable();
    makeDeclaredFilter();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
