/* lasagna view: keeps a served report page current without a reload. Every poll_ms it asks
   /api/live for the live panel and the version of the root's set of runs; the panel is
   replaced when it changed, and when a run has landed (a new version) the page's groups,
   header and data blocks are fetched again and swapped in, and the report's script wires
   them up anew (window.lasagnaReport). */
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  if (!DATA.poll) return;
  let version = DATA.version;
  const live = document.getElementById("live");
  const every = Number((live && live.dataset.pollMs) || DATA.poll_ms || 1000);
  let busy = false;

  async function refreshGroups() {
    const r = await fetch(location.href, { headers: { Accept: "text/html" } });
    if (!r.ok) return false;
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    for (const sel of ["header", "main"]) {
      const fresh = doc.querySelector(sel);
      if (fresh) document.querySelector(sel).replaceWith(document.adoptNode(fresh));
    }
    for (const old of document.querySelectorAll('script[type="application/json"]')) old.remove();
    const anchor = document.querySelector("script[src]");
    for (const block of doc.querySelectorAll('script[type="application/json"]'))
      anchor.before(document.adoptNode(block));
    const fresh = doc.getElementById("live");
    if (live && fresh) live.querySelector(".live-body").replaceWith(fresh.querySelector(".live-body"));
    window.lasagnaReport();
    return true;
  }

  async function poll() {
    if (busy) return;
    busy = true;
    try {
      const r = await fetch("/api/live", { cache: "no-store" });
      if (!r.ok) return;
      const state = await r.json();
      if (live && typeof state.html === "string") {
        const body = live.querySelector(".live-body");
        if (body.dataset.html !== state.html) {
          body.innerHTML = state.html;
          body.dataset.html = state.html;
        }
        live.dataset.running = String(state.running || 0);
      }
      if (state.version && state.version !== version) {
        if (await refreshGroups()) {
          version = state.version;
          document.body.dataset.version = version; // tests wait for this
        }
      }
    } catch (err) {
      if (live) live.dataset.error = String(err);
    } finally {
      busy = false;
    }
  }
  document.body.dataset.version = version;
  setInterval(poll, every);
  poll();
})();
