/* lasagna report: draws the plotly figures and runs the per-question drill-down.
   Charts are plotly's own (figures built in Python); this script only wires the page.
   Nothing below the fold costs load time: a chart is drawn when it comes near the
   viewport (IntersectionObserver), and a group's drill-down rows (their own JSON block,
   like the passage texts) are parsed when its drill-down is first shown or used.
   Served by `lasagna view`, a block with a data-src is fetched from the server instead,
   and the page calls window.lasagnaReport() again after it swaps in fresh groups. */
window.lasagnaReport = function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const SERVED = DATA.mode === "server";
  const PAGE = 50;
  const groups = Object.fromEntries(DATA.groups.map((g) => [g.id, g]));
  const parsed = {};
  const DOCS = {}; // passage texts: the docs block, or what each fetched drill-down brings
  const load = (id) => {
    if (!(id in parsed)) {
      const node = document.getElementById(id);
      parsed[id] = node.dataset.src
        ? fetch(node.dataset.src).then((r) =>
            r.json().then((body) => (r.ok ? body : Promise.reject(new Error(body.error))))
          )
        : Promise.resolve(JSON.parse(node.textContent));
    }
    return parsed[id];
  };
  const docs = () => DOCS;
  // Run `show(node)` once `node` is within a screen of the viewport (at once without IO).
  function whenNear(nodes, show) {
    if (!("IntersectionObserver" in window)) {
      nodes.forEach(show);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let first = true;
      const io = new IntersectionObserver(
        (entries) => {
          for (const e of entries) {
            if (!e.isIntersecting) continue;
            io.unobserve(e.target);
            show(e.target);
          }
          if (first) (first = false), resolve(); // the first callback covers every node
        },
        { rootMargin: "400px 0px" }
      );
      nodes.forEach((n) => io.observe(n));
      if (!nodes.length) resolve();
    });
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k.startsWith("data-")) node.setAttribute(k, v);
      else node[k] = v;
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : String(c));
    }
    return node;
  }
  const fmt = (v, metric) => {
    if (v === null || v === undefined) return "-";
    const info = metric && DATA.metrics[metric];
    return Number(v).toFixed(info ? info.digits : 4);
  };

  // ------------------------------------------------------------------ charts
  const drawing = [];
  function drawChart(div) {
    const fig = groups[div.dataset.group].figures[div.dataset.chart];
    if (!fig) return;
    const done = Plotly.newPlot(div, fig.data, fig.layout, {
      displaylogo: false,
      responsive: true,
      modeBarButtonsToRemove: ["sendDataToCloud"],
    }).then(() => {
      div.dataset.drawn = "1"; // tests and scripts/bench_report.py wait for this
    });
    drawing.push(done);
  }

  // ------------------------------------------------------------------ side-by-side
  for (const button of document.querySelectorAll("button.toggle-more")) {
    button.addEventListener("click", () => {
      const table = button.previousElementSibling;
      table.classList.toggle("show-more");
      button.textContent = table.classList.contains("show-more") ? "show fewer" : "show all";
    });
  }

  // ------------------------------------------------------------------ drill-down
  function Drill(root) {
    const g = groups[root.dataset.group];
    let drill = null; // parsed on first use
    const primary = g.leaderboard ? g.leaderboard.metric : null;
    const runSelect = root.querySelector(".drill-run");
    const search = root.querySelector(".drill-search");
    const failedOnly = root.querySelector(".drill-failed");
    const sort = root.querySelector(".drill-sort");
    const table = root.querySelector("table.questions");
    const count = root.querySelector(".drill-count");
    const pageLabel = root.querySelector(".page");
    const open = new Set();
    let page = 0;

    let loading = null;
    const ensure = () => {
      if (loading) return loading;
      loading = Promise.all([load(`drill-${g.id}`), load("docs")])
        .then(([got, docBlock]) => {
          Object.assign(DOCS, docBlock, got.docs || {});
          drill = got.drill || got;
          drill.runs.forEach((r, i) =>
            runSelect.append(el("option", { value: String(i) }, `${r.run} (${r.time})`))
          );
          for (const note of (got.drill ? drill.notes : []))
            root.append(el("p", { class: "note" }, note));
          root.dataset.loaded = "1";
          render();
        })
        .catch((err) => {
          root.dataset.loaded = "error";
          root.append(el("p", { class: "note error" }, `the questions could not be read: ${err.message}`));
        });
      return loading;
    };
    this.ensure = ensure;

    const run = () => drill.runs[Number(runSelect.value || 0)];
    const metricOf = (trial, row) => {
      if (!row) return null;
      const i = trial.metrics.indexOf(primary !== null ? primary : trial.metrics[0]);
      return i < 0 ? null : row.m[i];
    };

    function questionIds(r) {
      const ids = new Set();
      for (const t of r.trials) for (const q of Object.keys(t.rows)) ids.add(q);
      return [...ids];
    }

    function haystack(qid, r) {
      const q = drill.questions[qid] || {};
      const parts = [qid, q.question || "", ...(q.answers || [])];
      for (const [k, v] of Object.entries(q.metadata || {})) parts.push(`${k}: ${v}`, v);
      for (const t of r.trials) {
        const row = t.rows[qid];
        if (row && row.prediction) parts.push(row.prediction);
        if (row && row.error) parts.push(row.error);
      }
      return parts.join(" \u0001 ").toLowerCase();
    }

    function rows() {
      const r = run();
      if (!r) return [];
      const needle = search.value.trim().toLowerCase();
      let ids = questionIds(r);
      if (needle) ids = ids.filter((q) => haystack(q, r).includes(needle));
      if (failedOnly.checked)
        ids = ids.filter((q) => r.trials.some((t) => t.rows[q] && t.rows[q].error));
      const score = (q) => {
        const vals = r.trials.map((t) => metricOf(t, t.rows[q])).filter((v) => v !== null);
        return vals;
      };
      const mean = (v) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : null);
      const lower = primary && DATA.metrics[primary] && DATA.metrics[primary].lower_is_better;
      const good = (q) => {
        const m = mean(score(q));
        return m === null ? null : lower ? -m : m;
      };
      const key = {
        id: (q) => q,
        worst: (q) => good(q),
        best: (q) => (good(q) === null ? null : -good(q)),
        spread: (q) => {
          const v = score(q);
          return v.length ? -(Math.max(...v) - Math.min(...v)) : 0;
        },
      }[sort.value];
      const byId = (a, b) => a.localeCompare(b, undefined, { numeric: true }); // q2 before q10
      ids.sort((a, b) => {
        if (sort.value === "id") return byId(a, b);
        const ka = key(a), kb = key(b);
        if (ka === kb) return byId(a, b);
        if (ka === null) return 1;
        if (kb === null) return -1;
        return ka < kb ? -1 : 1;
      });
      return ids;
    }

    function docLine(docId, score, gold) {
      const d = docs()[docId];
      const grade = gold ? gold.get(docId) : undefined;
      const mark = grade === undefined ? (gold ? "·" : "") : grade > 0 ? `✓${grade}` : `✗${grade}`;
      return el(
        "li",
        { class: grade > 0 ? "rel" : "" },
        el("span", { class: "mark", title: gold ? "relevance grade from the judgments" : "" }, mark),
        " ",
        el("code", {}, docId),
        score !== null && score !== undefined ? el("span", { class: "score" }, ` ${Number(score).toFixed(3)}`) : null,
        d ? el("span", { class: "doc" }, " ", d.title ? el("b", {}, d.title + " ") : null, d.text) : null
      );
    }

    function details(qid, r) {
      const q = drill.questions[qid] || {};
      const gold = q.gold ? new Map(q.gold) : null;
      const box = el("div", { class: "details", "data-qid": qid });
      const words = Object.assign({ question: "question", answers: "references", prediction: "prediction" }, drill.words || {});
      box.append(el("p", { class: "question-text" }, el("b", {}, words.question + " "), q.question || ""));
      if (SERVED)
        box.append(el("p", { class: "meta" }, el("a", { class: "question-link", href: `/question/${encodeURIComponent(g.key)}/${encodeURIComponent(qid)}` }, "this question in every run and system, side by side")));
      if (q.answers && q.answers.length)
        box.append(el("p", { class: "answers" }, el("b", {}, words.answers + " "), q.answers.join(" | ")));
      if (q.unanswerable) box.append(el("p", { class: "note" }, "marked unanswerable"));
      if (q.gold && q.gold.length) {
        const ul = el("ul", { class: "gold" });
        q.gold.forEach(([d, grade]) => ul.append(docLine(d, null, new Map([[d, grade]]))));
        box.append(el("p", {}, el("b", {}, "relevant documents")), ul);
      }
      if (q.metadata)
        box.append(el("p", { class: "meta" }, Object.entries(q.metadata).map(([k, v]) => `${k}: ${v}`).join(" · ")));
      for (const t of r.trials) {
        const row = t.rows[qid];
        const part = el("div", { class: "trial", "data-system": t.system });
        part.append(el("h5", {}, `${t.system} · repeat ${t.repeat}`));
        if (!row) {
          part.append(el("p", { class: "empty" }, "not in this trial"));
          box.append(part);
          continue;
        }
        if (row.error) part.append(el("p", { class: "error" }, el("b", {}, "error "), row.error));
        if (row.prediction !== undefined)
          part.append(el("p", { class: "prediction" }, el("b", {}, words.prediction + " "), row.prediction || "(empty)"));
        const level = (m) => (DATA.metrics[m] ? DATA.metrics[m].level : "main");
        const shown = t.metrics.some((m) => level(m) !== "detail")
          ? t.metrics.filter((m) => level(m) !== "detail")
          : t.metrics;
        const ms = shown.map((m) => `${m} ${fmt(row.m[t.metrics.indexOf(m)], m)}`).join(" · ");
        if (ms) part.append(el("p", { class: "metrics" }, ms));
        if (row.fields) {
          const line = el("p", { class: "fields" });
          Object.entries(row.fields).forEach(([k, v], i) => {
            if (i) line.append(" · ");
            const trace = SERVED && k === "trace_id";
            line.append(`${k}: `, trace ? el("a", { class: "trace-link", href: `/trace/${encodeURIComponent(v)}` }, String(v)) : String(v));
          });
          part.append(line);
        }
        if (row.json)
          for (const [name, value] of Object.entries(row.json))
            part.append(el("details", { class: "json" }, el("summary", {}, name), el("pre", {}, JSON.stringify(value, null, 2))));
        if (row.docs) {
          const ol = el("ol", { class: "ranked" });
          row.docs.forEach(([d, s]) => ol.append(docLine(d, s, gold)));
          part.append(ol);
        }
        box.append(part);
      }
      return box;
    }

    function render() {
      if (!drill) return;
      const r = run();
      const ids = rows();
      const pages = Math.max(1, Math.ceil(ids.length / PAGE));
      page = Math.min(page, pages - 1);
      count.textContent = `${ids.length} question(s)`;
      pageLabel.textContent = `page ${page + 1} of ${pages}`;
      const thead = table.tHead;
      thead.replaceChildren();
      const head = el("tr", {}, el("th", {}, "id"), el("th", {}, (drill.words || {}).question || "question"));
      if (r) for (const t of r.trials) head.append(el("th", { class: "num" }, `${t.system}${r.trials.some((o) => o !== t && o.system === t.system) ? " #" + t.repeat : ""}`));
      thead.append(head);
      const body = table.tBodies[0];
      body.replaceChildren();
      for (const qid of ids.slice(page * PAGE, (page + 1) * PAGE)) {
        const q = drill.questions[qid] || {};
        const tr = el("tr", { class: "q", "data-qid": qid }, el("td", {}, el("a", { href: "#" }, qid)), el("td", {}, q.question || ""));
        for (const t of r.trials) {
          const row = t.rows[qid];
          const cell = el("td", { class: "num" }, row && row.error ? "failed" : fmt(metricOf(t, row), primary));
          if (row && row.error) cell.classList.add("error");
          tr.append(cell);
        }
        tr.addEventListener("click", (ev) => {
          ev.preventDefault();
          open.has(qid) ? open.delete(qid) : open.add(qid);
          render();
        });
        body.append(tr);
        if (open.has(qid)) body.append(el("tr", { class: "open" }, Object.assign(el("td", {}, details(qid, r)), { colSpan: 2 + r.trials.length })));
      }
      const metricNote = primary ? `metric: ${primary}` : "";
      table.tHead.rows[0].title = metricNote;
    }

    this.show = (qid) => {
      search.value = qid;
      open.add(qid);
      page = 0;
      ensure().then(render);
      root.scrollIntoView();
    };
    for (const c of [runSelect, failedOnly, sort, search]) c.addEventListener("focus", ensure);
    for (const c of [runSelect, failedOnly, sort]) c.addEventListener("change", () => { ensure(); page = 0; render(); });
    search.addEventListener("input", () => { ensure(); page = 0; render(); });
    root.querySelector(".prev").addEventListener("click", () => { ensure(); page = Math.max(0, page - 1); render(); });
    root.querySelector(".next").addEventListener("click", () => { ensure(); page += 1; render(); });
  }

  const drills = {};
  for (const root of document.querySelectorAll("div.drill")) drills[root.dataset.group] = new Drill(root);
  for (const a of document.querySelectorAll("a.goto-question")) {
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      drills[a.dataset.group].show(a.dataset.qid);
    });
  }
  // ready: the charts in (or near) the first screen are drawn; the others wait for a scroll.
  // Drill-downs are watched only then, so their rows never hold up the first charts.
  whenNear([...document.querySelectorAll("div.chart[data-chart]")], drawChart)
    .then(() => Promise.all(drawing))
    .then(() => {
      document.body.dataset.ready = "1";
      document.body.dataset.readyMs = String(Math.round(performance.now())); // for scripts/bench_report.py
      whenNear([...document.querySelectorAll("div.drill")], (root) => drills[root.dataset.group].ensure());
    });
};
window.lasagnaReport();
