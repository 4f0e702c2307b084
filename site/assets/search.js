// Offline search over the prebuilt index (assets/search-index.js): BM25 over weighted terms,
// tokenised and stemmed exactly as `triage search` does (analyzer/kb/search.py), plus
//  - exact error strings: a pasted log line finds the pattern whose fixture holds it;
//  - term expansions (assets/search-terms.js): each word's nearest catalogue words by the
//    embedding model, computed at build time, added as weaker query terms (paraphrases);
//  - the precomputed links: a pattern that matches lends part of its score to the
//    postmortems it is linked with, and the other way round.
// Nothing is fetched: the data arrive as scripts, so the page works from file:// too.
(function () {
  "use strict";

  var INDEX = window.TRIAGE_INDEX;
  var TERMS = (window.TRIAGE_TERMS && window.TRIAGE_TERMS.terms) || {};
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var status = document.getElementById("search-status");
  var browse = document.getElementById("browse");
  if (!INDEX || !input || !list) return;

  var K1 = 1.2, B = 0.75;
  var EXPANSION = 0.45;   // weight of an expanded term, times its similarity squared
  var KNOWN = 0.35;       // ... times this when the query word itself is in the catalogue
  var PREFIX = 0.5;       // weight of a completion of the word being typed
  var LINK_SHARE = 0.3;   // share of a document's score lent to its explicitly linked documents
  var EXACT = 0.6;        // bonus, relative to the best score, for an exact error-string match
  var LIMIT = 20;

  var CATALOGUE = 0.7;     // a catalogue entry (one Xid, one cudaError) ranks a little below a pattern
  var docs = INDEX.docs;
  var byId = {};
  var df = {};
  var totalLen = 0;
  var counted = 0;         // documents in the word statistics: catalogue entries stay out, or their
  docs.forEach(function (d) {  // hundreds of alike pages would make "gpu" or "cuda" worthless words
    byId[d.id] = d;
    var len = 0;
    Object.keys(d.w).forEach(function (t) {
      if (!d.c) df[t] = (df[t] || 0) + 1;
      len += d.w[t];
    });
    d.len = len;
    d.errorsLower = d.e.map(function (e) { return e.toLowerCase(); });
    if (!d.c) { totalLen += len; counted += 1; }
  });
  docs.forEach(function (d) {  // a word only catalogue entries use still counts as known
    if (d.c) Object.keys(d.w).forEach(function (t) { if (!df[t]) df[t] = 1; });
  });
  var avgLen = totalLen / Math.max(counted, 1);
  var vocab = Object.keys(df).sort();
  var kind = "";

  var WORD = /[a-z0-9_][a-z0-9_.+-]*/g;
  function stem(w) {
    return w.length > 4 && /^[a-z]+$/.test(w) ? w.replace(/(?:ing|ed|es|s)$/, "") : w;
  }
  function tokens(text) {
    var out = [];
    (text.toLowerCase().match(WORD) || []).forEach(function (t) {
      t = t.replace(/^[.+-]+|[.+-]+$/g, "");
      if (t.length > 1) out.push(stem(t));
    });
    return out;
  }
  function idf(t) {
    var n = df[t] || 0;
    return Math.log(1 + (counted - n + 0.5) / (n + 0.5));
  }

  // query → {term: {weight, via}}: exact terms, completions of the last word, expansions
  function queryTerms(query) {
    var terms = {};
    function add(term, weight, via) {
      if (!df[term]) return;
      if (!terms[term] || terms[term].weight < weight) terms[term] = { weight: weight, via: via };
    }
    var toks = tokens(query);
    toks.forEach(function (t) { add(t, 1, null); });
    var typing = /[a-z0-9]$/i.test(query) && toks.length ? toks[toks.length - 1] : "";
    if (typing.length >= 3) {
      vocab.filter(function (v) { return v.length > typing.length && v.indexOf(typing) === 0; })
        .slice(0, 40).forEach(function (v) { add(v, PREFIX, typing + "…"); });
    }
    (query.toLowerCase().match(/[a-z]{3,24}/g) || []).forEach(function (word) {
      var damp = df[stem(word)] ? KNOWN : 1;  // expansions matter most for words the catalogue lacks
      (TERMS[word] || []).forEach(function (pair) {
        add(pair[0], EXPANSION * damp * pair[1] * pair[1], word);
      });
    });
    return terms;
  }

  function search(query) {
    var terms = queryTerms(query);
    var names = Object.keys(terms);
    var scores = {};
    var matched = {};
    docs.forEach(function (d) {
      var s = 0;
      names.forEach(function (t) {
        var tf = d.w[t];
        if (!tf) return;
        s += terms[t].weight * idf(t) * tf * (K1 + 1) / (tf + K1 * (1 - B + B * d.len / avgLen));
        (matched[d.id] = matched[d.id] || []).push(t);
      });
      if (s > 0) scores[d.id] = d.c ? s * CATALOGUE : s;
    });
    var best = Math.max.apply(null, [0].concat(Object.keys(scores).map(function (k) { return scores[k]; })));
    var q = query.trim().toLowerCase().replace(/\s+/g, " ");
    var exact = {};
    if (q.length >= 10) {
      docs.forEach(function (d) {
        var hit = d.errorsLower.some(function (e) {
          return e.indexOf(q) >= 0 || (e.length >= 16 && q.indexOf(e) >= 0);
        });
        if (hit) {
          exact[d.id] = true;
          scores[d.id] = (scores[d.id] || 0) + EXACT * Math.max(best, 1);
        }
      });
    }
    var lent = {};
    Object.keys(scores).forEach(function (id) {
      byId[id].r.forEach(function (rel) {
        if (rel[2] && byId[rel[0]]) lent[rel[0]] = (lent[rel[0]] || 0) + LINK_SHARE * scores[id];
      });
    });
    Object.keys(lent).forEach(function (id) { scores[id] = (scores[id] || 0) + lent[id]; });
    var ranked = Object.keys(scores).map(function (id) { return { doc: byId[id], score: scores[id] }; })
      .filter(function (h) { return !kind || h.doc.k === kind; })
      .sort(function (a, b) { return b.score - a.score || (a.doc.id < b.doc.id ? -1 : 1); });
    var top = ranked.length ? ranked[0].score : 0;
    return {
      hits: ranked.filter(function (h) { return h.score >= 0.12 * top; }).slice(0, LIMIT),
      terms: terms, matched: matched, exact: exact
    };
  }

  // DOM helpers: text only, never HTML from data
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function highlighted(text, stems) {
    var frag = document.createDocumentFragment();
    var parts = text.split(/([A-Za-z0-9_][A-Za-z0-9_.+-]*)/);
    parts.forEach(function (part, i) {
      var t = part.toLowerCase().replace(/^[.+-]+|[.+-]+$/g, "");
      if (i % 2 === 1 && t.length > 1 && stems[stem(t)]) frag.appendChild(el("mark", "", part));
      else frag.appendChild(document.createTextNode(part));
    });
    return frag;
  }

  function renderHit(hit, result) {
    var d = hit.doc;
    var li = el("li", "result sev-" + d.s);
    var head = el("div", "r-head");
    head.appendChild(el("span", "kind kind-" + d.k, d.k));
    var sev = el("span", "chip sev sev-" + d.s, d.s);
    head.appendChild(sev);
    var a = el("a", "r-title", d.t);
    a.href = d.u;
    head.appendChild(a);
    li.appendChild(head);
    var meta = el("div", "r-meta muted small mono", d.id + " · " + d.m);
    li.appendChild(meta);
    var stems = {};
    (result.matched[d.id] || []).forEach(function (t) { stems[t] = true; });
    var p = el("p", "r-text");
    p.appendChild(highlighted(d.x, stems));
    li.appendChild(p);
    var err = null;
    for (var i = 0; i < d.e.length && !err; i++) {
      if (result.exact[d.id] || tokens(d.e[i]).some(function (t) { return stems[t]; })) err = d.e[i];
    }
    if (err) {
      var pre = el("pre", "r-err");
      var code = el("code");
      code.appendChild(highlighted(err.length > 220 ? err.slice(0, 220) + "…" : err, stems));
      pre.appendChild(code);
      li.appendChild(pre);
    }
    var why = [];
    if (result.exact[d.id]) why.push("exact error string");
    var via = (result.matched[d.id] || []).filter(function (t) { return result.terms[t].via; })
      .map(function (t) { return result.terms[t].via + " → " + t; });
    if (via.length) why.push("related words: " + via.slice(0, 4).join(", "));
    if (!(result.matched[d.id] || []).length && !result.exact[d.id]) why.push("linked to a match");
    if (why.length) li.appendChild(el("div", "r-why muted small", why.join(" · ")));
    var rel = d.r.filter(function (r) { return byId[r[0]]; }).slice(0, 3);
    if (rel.length) {
      var line = el("div", "r-rel small");
      line.appendChild(el("span", "muted", d.k === "pattern" ? "Postmortems: " : "Related: "));
      rel.forEach(function (r, n) {
        if (n) line.appendChild(document.createTextNode(" · "));
        var link = el("a", "", byId[r[0]].t.length > 70 ? byId[r[0]].t.slice(0, 70) + "…" : byId[r[0]].t);
        link.href = byId[r[0]].u;
        line.appendChild(link);
      });
      li.appendChild(line);
    }
    return li;
  }

  function remember(query) {
    try {
      var url = query ? "?q=" + encodeURIComponent(query) : location.pathname.split("/").pop() || "index.html";
      history.replaceState(null, "", url);
    } catch (e) { /* file:// in some browsers: the address is not worth an error */ }
  }

  function run() {
    var query = input.value;
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!query.trim()) {
      list.hidden = true;
      if (browse) browse.hidden = false;
      status.textContent = "";
      remember("");
      return;
    }
    var result = search(query);
    list.setAttribute("data-query", query);
    result.hits.forEach(function (h) { list.appendChild(renderHit(h, result)); });
    list.hidden = result.hits.length === 0;
    if (browse) browse.hidden = true;
    var nPat = result.hits.filter(function (h) { return h.doc.k === "pattern"; }).length;
    status.textContent = result.hits.length
      ? result.hits.length + " result" + (result.hits.length === 1 ? "" : "s") + " (" + nPat + " patterns, " +
        (result.hits.length - nPat) + " postmortems)"
      : "Nothing matches. Try the error's distinctive words, or fewer of them.";
    remember(query);
  }

  var timer = 0;
  input.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(run, 60);
  });
  var form = input.form;
  if (form) form.addEventListener("submit", function (event) { event.preventDefault(); run(); });
  Array.prototype.forEach.call(document.querySelectorAll("button.filter"), function (button) {
    button.addEventListener("click", function () {
      kind = button.getAttribute("data-kind") || "";
      Array.prototype.forEach.call(document.querySelectorAll("button.filter"), function (b) {
        b.classList.toggle("on", b === button);
        b.setAttribute("aria-pressed", b === button ? "true" : "false");
      });
      run();
    });
  });
  var initial = new URLSearchParams(location.search).get("q");
  if (initial) input.value = initial;
  if (input.value) run();
  window.triageSearch = function (query) {  // for tests and the console: ids, best first
    return search(query).hits.map(function (h) { return h.doc.id; });
  };
})();
