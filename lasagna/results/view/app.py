"""The `lasagna view` web app (Starlette): the report's views of a results root, served
live, plus a run's own page, a trial's rows page by page, one question across runs, SDK
traces, and the live panel of running sweeps.

Routes (every one a link a user can paste):
    /                      live panel, then every group as `lasagna report` shows it
    /run/ID                one run: its facts, then the report's views of that run alone
    /run/ID/trial/KEY      one trial's rows, a page at a time (?page=N)
    /group/KEY             one comparability group (key or its start) or evaluation group
    /compare?a=ID&b=ID     two runs side by side
    /question/KEY/QID      one question of a group in every run and system
    /trace/TRACE_ID        one SDK trial's span tree
    /api/drill, /api/live, /api/runs    the JSON the pages fetch
Read-only: every handler reads the root through `RootIndex` and the run objects; none
writes anywhere. A missing run is a 404 page naming the runs there are; a damaged run
folder is listed as such and its own page says what is wrong.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from importlib import resources
from typing import Any
from urllib.parse import quote

from lasagna.errors import UserError
from lasagna.results.layout import Output
from lasagna.results.model import matching_trials
from lasagna.results.report import build_drill, build_report
from lasagna.results.report.page import environment, render_page
from lasagna.results.view.index import Broken, DamagedRun, NotFound, RootIndex
from lasagna.results.view.live import Live
from lasagna.results.view.question import question_data
from lasagna.results.view.rows import evaluation_page, run_facts, trial_page
from lasagna.results.view.traces import TraceFinder, trace_data

PACKAGE = __package__
REPORT = "lasagna.results.report"
STATIC = {  # name -> (package, media type)
    "report.css": (REPORT, "text/css"),
    "report.js": (REPORT, "text/javascript"),
    "plotly-basic.min.js": (REPORT, "text/javascript"),
    "view.css": (PACKAGE, "text/css"),
    "view.js": (PACKAGE, "text/javascript"),
}


def _asset(name: str) -> bytes:
    package, _ = STATIC[name]
    return resources.files(package).joinpath("templates", name).read_bytes()


class View:
    """The app's state: the root's index, the trace finder and the templates."""

    def __init__(self, output: Output, refresh_s: float = 1.0, poll_ms: int = 1000):
        self.index = RootIndex(output, refresh_s)
        self.watch = Live(self.index.store)
        self.traces = TraceFinder()
        self.poll_ms = poll_ms
        self.env = environment(PACKAGE)

    @cached_property
    def static(self) -> str:
        digest = hashlib.sha256(b"".join(_asset(n) for n in sorted(STATIC))).hexdigest()[:12]
        return f"/static/{digest}"

    def server(self, title: str, **extra: Any) -> dict[str, Any]:
        return {
            "packages": (PACKAGE,),
            "static": self.static,
            "base": "",
            "title": title,
            "root": self.index.display,
            "version": self.index.version,
            "poll_ms": self.poll_ms,
            "top": "",
            "live": False,
        } | extra

    def render(self, template: str, title: str, **context: Any) -> str:
        return self.env.get_template(template).render(server=self.server(title), **context)

    # ------------------------------------------------------------------ pages
    def runs_of(self, scope: str) -> list:
        """The runs a page shows: "all", "run:ID" or "compare:A,B"."""
        kind, _, ids = scope.partition(":")
        if kind == "run":
            return [self.index.find(ids)]
        if kind == "compare":
            return [self.index.find(i) for i in ids.split(",", 1)]
        return self.index.runs()

    def report_page(
        self,
        scope: str,
        title: str,
        top: str = "",
        group: str | None = None,
        pair: tuple[str, str] | None = None,
        live: bool = False,
        by: tuple[str, ...] = (),
    ) -> str:
        """`by`: metadata keys each group's newest run is shown by (`?by=KEY`, repeatable)."""
        runs = self.runs_of(scope)
        key = ("report", scope, group, pair, by)
        data = self.index.cached(
            key, lambda: build_report(runs, group, pair, drill=False, by=list(by))
        )

        def drill_url(g: dict[str, Any]) -> str:
            return f"/api/drill?scope={quote(scope)}&kind={g['kind']}&key={quote(g['key'])}"

        server = self.server(title, top=top, drill=drill_url, live=live, scope=scope)
        return render_page(data, server)

    def live_runs(self) -> list[dict[str, Any]]:
        return self.watch.runs({r.run_id for r in self.index.runs()})

    def home(self, by: tuple[str, ...] = ()) -> str:
        broken, live = self.index.broken(), self.live_runs()
        top = self.render("view_home.html.j2", "results", broken=broken, live=live)
        return self.report_page("all", "results", top=top, live=True, by=by)

    def run_page(self, ref: str, page: int, by: tuple[str, ...] = ()) -> str:
        run = self.index.find(ref)
        evaluation = (
            evaluation_page(run, page) if run.manifest.get("kind") == "evaluation" else None
        )
        top = self.render("view_run.html.j2", run.run_id, facts=run_facts(run), ev=evaluation)
        return self.report_page(f"run:{run.run_id}", f"run {run.run_id}", top=top, by=by)

    def trial_rows(self, ref: str, key: str, page: int) -> str:
        run = self.index.find(ref)
        hits = matching_trials(run.trials, key)
        if len(hits) != 1:
            what = "no trial" if not hits else f"{len(hits)} trials matching"
            listing = ", ".join(f"{t.key[:12]} ({t.system})" for t in (hits or run.trials)[:8])
            raise NotFound(f"run {run.run_id} has {what} {key!r}; its trials: {listing}")
        data = trial_page(run, hits[0].key, page)
        return self.render("view_rows.html.j2", f"{data['system']} · run {run.run_id}", t=data)

    def group_page(self, key: str, by: tuple[str, ...] = ()) -> str:
        try:
            return self.report_page("all", f"group {key}", group=key, by=by)
        except UserError as err:
            raise NotFound(str(err).splitlines()[0]) from err

    def compare_page(self, a: str, b: str) -> str:
        run_a, run_b = self.index.find(a), self.index.find(b)
        pair = (run_a.run_id, run_b.run_id)
        return self.report_page(f"compare:{pair[0]},{pair[1]}", f"{a} vs {b}", pair=pair)

    def question_page(self, key: str, qid: str) -> str:
        runs = self.index.runs()
        data = self.index.cached(("question", key, qid), lambda: question_data(runs, key, qid))
        if data is None:
            raise NotFound(f"no question {qid!r} in a group {key!r}")
        return self.render("view_question.html.j2", f"question {qid}", q=data)

    def trace_page(self, trace_id: str) -> str:
        found = self.traces.find(self.index.runs(), trace_id)
        if found is None:
            raise NotFound(f"no trace {trace_id!r} in any run under {self.index.display}")
        data = trace_data(*found, trace_id)
        return self.render("view_trace.html.j2", f"trace {trace_id[:12]}", tr=data)

    def drill(self, scope: str, kind: str, key: str) -> dict[str, Any] | None:
        runs = self.runs_of(scope)
        return self.index.cached(("drill", scope, kind, key), lambda: build_drill(runs, kind, key))

    def live(self) -> dict[str, Any]:
        """What the pages poll: the live panel's HTML, and the runs' version (a new run:
        the page fetches its groups again)."""
        live = self.live_runs()
        html = self.render("view_live.html.j2", "live", live=live)
        running = sum(1 for r in live if r["state"] == "running")
        return {"version": self.index.version, "html": html, "running": running, "runs": live}

    def error_page(self, status: int, message: str, broken: Broken | None = None) -> str:
        title = "damaged run folder" if broken else "not found"
        return self.render(
            "view_error.html.j2", title, status=status, message=message, broken=broken
        )


__all__ = ["STATIC", "DamagedRun", "NotFound", "View"]
