/* The side-by-side view of compare/<A>-vs-<B>.html: each flipped question's evidence turns quoted, and
 * the first k records of both runs next to each other, each marked evidence or not, with answers and the
 * judge's verdicts where the runs have them. Drawn from the data files the page loads before this one
 * (window.evalsRuns: each run's records and verdicts; window.evalsPoints: the corpus's test points, each
 * with its gold answer and evidence turns; window.evalsTurns: the corpus's turns, each's name, date and start); the page's headlines, test, categories and flipped questions
 * are there without it. */
(function () {
  "use strict";

  var VERDICTS = { h: "hit", m: "miss", u: "unanswerable", s: "unscored" };
  var corpusTurns = {};  // conversation -> each turn's [benchmark name, date, start], from the corpus's points.js

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function indexed(run) {
    // conversation -> turn -> [position in the conversation, entry]
    var out = {};
    Object.keys(run.conversations).forEach(function (cid) {
      var at = {};
      run.conversations[cid].points.forEach(function (entry, position) { at[entry[0]] = [position, entry]; });
      out[cid] = at;
    });
    return out;
  }

  function side(letter, run, at, cid, turn, evidence, root) {
    var box = el("div", "side side-" + letter.toLowerCase());
    var found = at[cid] && at[cid][turn];
    if (!run || !found) {
      box.appendChild(el("p", "note", letter + ": this run's data is not on the site."));
      return box;
    }
    var position = found[0], entry = found[1];
    var pages = run.conversations[cid].pages;
    var head = el("h4", null, letter + " ");
    var verdict = VERDICTS[entry[1]] || entry[1];
    head.appendChild(el("span", "badge " + verdict, verdict));
    head.appendChild(document.createTextNode(" "));
    var link = el("a", null, "drill-down");
    link.href = root + pages[Math.min(pages.length - 1, Math.floor(position / run.perPage))] + "#tp-" + turn;
    head.appendChild(link);
    box.appendChild(head);
    var records = entry[2];
    if (records === "all") {
      box.appendChild(el("p", "note", "Every earlier turn, in order (the whole history)."));
    } else if (!records.length) {
      box.appendChild(el("p", "empty", "Nothing was retrieved."));
    } else {
      var list = el("ol", "records pair-records");
      // The turns records are: the corpus's (window.evalsTurns, written once with its test points), else the run's own.
      var turns = corpusTurns[cid] || (run.turns && run.turns[cid]) || {};
      records.forEach(function (ref) {
        var item = el("li");
        if (typeof ref === "number") {
          var row = turns[ref] || ["turn " + ref, "", ""];
          var isEvidence = evidence.indexOf(ref) >= 0;
          item.className = isEvidence ? "evi" : "";
          item.setAttribute("data-evidence", isEvidence ? "yes" : "no");
          item.appendChild(el("b", null, row[0]));
          if (row[1]) item.appendChild(el("small", null, " " + row[1]));
          item.appendChild(el("span", "tag" + (isEvidence ? "" : " plain"), isEvidence ? "evidence" : "not evidence"));
          item.appendChild(el("div", "txt", row[2]));
        } else if (Array.isArray(ref)) {
          // A record holding several turns: [its start (its place in run.texts), the turns it holds as runs [first, last]].
          var spans = ref[1];
          var held = spans.some(function (s) { return evidence.some(function (t) { return t >= s[0] && t <= s[1]; }); });
          item.className = held ? "evi" : "";
          item.setAttribute("data-evidence", held ? "yes" : "no");
          item.appendChild(el("b", null, "holds turns " + spans.map(function (s) {
            return s[0] === s[1] ? String(s[0]) : s[0] + "\u2013" + s[1];
          }).join(", ")));
          item.appendChild(el("span", "tag" + (held ? "" : " plain"), held ? "holds evidence" : "not evidence"));
          item.appendChild(el("div", "txt", typeof ref[0] === "number" ? (run.texts || [])[ref[0]] || "" : ref[0]));
        } else {
          item.setAttribute("data-evidence", "no");
          item.appendChild(el("b", null, "not a turn"));
          item.appendChild(el("div", "txt", ref));
        }
        list.appendChild(item);
      });
      box.appendChild(list);
    }
    if (entry.length > 3) {
      var answer = el("div", "answer");
      var judged = entry[4];
      // As the drill-down badges a verdict (site_templates/_partials.html): an unparsed reply counts as not correct.
      var label = { correct: "correct", wrong: "incorrect", unparsed: "UNPARSED", partial: "partial" }[judged] || "not judged";
      var tone = { correct: "hit", wrong: "miss", unparsed: "miss" }[judged] || "";
      var title = el("h5", null, "Answer ");
      title.appendChild(el("span", "badge " + tone, label));
      answer.appendChild(title);
      answer.appendChild(el("blockquote", "txt", entry[3]));
      box.appendChild(answer);
    }
    return box;
  }

  // The id a compare page gives a test point (evals.site._pairs.flip_anchor), splitting on the same
  // characters (its ID_SPACES: Python's and JavaScript's spaces both, which differ on \x1c-\x1f, \x85, U+FEFF).
  var SPACES = /[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+/;
  function anchor(cid, turn) {
    return "tp-" + cid.split(SPACES).filter(Boolean).join("_") + "-" + turn;
  }

  var PAGE = 25; // flipped questions drawn at once: a phone opens a page of 1,000 flips as one of 25

  // A percent-escaped part of the URL hash, decoded; a malformed escape ("%E0%A4%A", a lone "%") is kept as it
  // is, since the hash is whatever the address bar holds and decodeURIComponent throws on it.
  function decoded(text) {
    try { return decodeURIComponent(text); } catch (e) { return text; }
  }

  // The view the URL asks for: "#category=event_ordering&flip=a" (either part may be absent).
  function wanted() {
    var out = { category: "", flip: "" };
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at < 0) return;
      var key = decoded(part.slice(0, at)), value = decoded(part.slice(at + 1).replace(/\+/g, " "));
      if (key === "category" || key === "flip") out[key] = value;
    });
    return out;
  }

  function hashOf(view) {
    var parts = [];
    if (view.category) parts.push("category=" + encodeURIComponent(view.category));
    if (view.flip) parts.push("flip=" + encodeURIComponent(view.flip));
    return parts.join("&");
  }

  function draw() {
    var box = document.getElementById("pair");
    if (!box) return;
    var runs = window.evalsRuns || {};
    var corpus = (window.evalsPoints || {})[box.getAttribute("data-corpus")] || {};
    corpusTurns = (window.evalsTurns || {})[box.getAttribute("data-corpus")] || {};
    var root = box.getAttribute("data-root") || "";
    var a = runs[box.getAttribute("data-a")], b = runs[box.getAttribute("data-b")];
    var atA = a ? indexed(a) : {}, atB = b ? indexed(b) : {};
    var where = {};
    Object.keys(corpus).forEach(function (cid) {
      Object.keys(corpus[cid]).forEach(function (turn) { where[anchor(cid, turn)] = [cid, Number(turn)]; });
    });
    function fill(section) {
      if (section.getAttribute("data-filled")) return;
      section.setAttribute("data-filled", "yes");
      var found = where[section.id];
      if (!found) return;
      var cid = found[0], turn = found[1];
      var point = corpus[cid][String(turn)];
      var head = el("p", "flip-head", cid + " · turn " + turn + (point[2] !== null && point[2] !== undefined ? " · " + point[2] : ""));
      section.insertBefore(head, section.firstChild);
      var facts = el("dl", "facts");
      facts.appendChild(el("dt", null, "gold answer"));
      facts.appendChild(el("dd", null, point[1]));
      facts.appendChild(el("dt", null, "evidence"));
      var dd = el("dd");
      var list = el("ul", "flip-evidence");
      var evidence = [];
      point[3].forEach(function (row) {
        evidence.push(row[0]);
        var item = el("li");
        item.setAttribute("data-turn", String(row[0]));
        item.appendChild(el("b", null, row[1]));
        if (row[2]) item.appendChild(el("small", null, " " + row[2]));
        item.appendChild(el("div", "txt", row[3]));
        list.appendChild(item);
      });
      if (!point[3].length) list.appendChild(el("li", null, "none labelled"));
      dd.appendChild(list);
      facts.appendChild(dd);
      section.appendChild(facts);
      var sides = el("div", "sides");
      sides.appendChild(side("A", a, atA, cid, turn, evidence, root));
      sides.appendChild(side("B", b, atB, cid, turn, evidence, root));
      section.appendChild(sides);
    }

    // One category and one direction at a time, kept in the URL; PAGE at a time, more on request.
    var sections = Array.prototype.slice.call(box.querySelectorAll("section.flip"));
    var form = document.getElementById("flip-filter");
    var status = document.getElementById("flip-status");
    var more = document.getElementById("flip-more");
    var limit = PAGE;
    function render(fromStart) {
      var view = wanted();
      // A category no flip has, or a direction other than a or b, asks for nothing: every flip is shown.
      if (!sections.some(function (s) { return s.getAttribute("data-category") === view.category; })) view.category = "";
      if (view.flip !== "a" && view.flip !== "b") view.flip = "";
      if (fromStart) limit = PAGE;
      var matching = sections.filter(function (s) {
        return (!view.category || s.getAttribute("data-category") === view.category) && (!view.flip || s.getAttribute("data-flip") === view.flip);
      });
      sections.forEach(function (s) { s.hidden = true; });
      matching.slice(0, limit).forEach(function (s) { s.hidden = false; fill(s); });
      var target = location.hash.length > 1 ? document.getElementById(decoded(location.hash.slice(1))) : null;
      if (target && sections.indexOf(target) >= 0) { target.hidden = false; fill(target); }
      if (form) {
        form.hidden = false;
        form.elements.category.value = view.category;
        form.elements.flip.value = view.flip;
      }
      if (status) {
        var what = (view.category ? " in category " + view.category : "") + (view.flip ? ", hit by " + view.flip.toUpperCase() + " only" : "");
        status.textContent = "Showing " + Math.min(limit, matching.length) + " of " + matching.length + " flipped question" +
          (matching.length === 1 ? "" : "s") + what + (sections.length !== matching.length ? " (" + sections.length + " in all)" : "") + ".";
      }
      if (more) {
        var left = matching.length - limit;
        more.hidden = left <= 0;
        more.textContent = "Show " + Math.min(PAGE, Math.max(left, 0)) + " more (" + Math.max(left, 0) + " not shown)";
      }
    }
    if (form) {
      form.addEventListener("change", function () {
        var next = hashOf({ category: form.elements.category.value, flip: form.elements.flip.value });
        if (history.replaceState) history.replaceState(null, "", next ? "#" + next : location.pathname + location.search);
        else location.hash = next;
        render(true);
      });
      form.addEventListener("submit", function (e) { e.preventDefault(); });
    }
    if (more) more.addEventListener("click", function () { limit += PAGE; render(false); });
    window.addEventListener("hashchange", function () {
      render(true);
      if (form && /category=|flip=/.test(location.hash)) form.scrollIntoView();
    });
    render(true);
    box.setAttribute("data-drawn", "yes");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw);
  else draw();
})();
