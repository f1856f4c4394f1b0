"""Rich views of the store for `lasagna results list` and `lasagna results show RUN`."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from lasagna.metrics import catalog
from lasagna.results.leaderboard import group_title
from lasagna.results.store import Run, RunSummary


def render_runs(runs: list[RunSummary], console: Console | None = None) -> None:
    """One line per run, most recent first."""
    console = console or Console()
    if not runs:
        console.print("no runs yet: run `lasagna benchmark run` first")
        return
    table = Table(title="runs")
    for col in ("run", "created", "profile", "trials", "tracks", "benchmarks", "systems"):
        table.add_column(col, overflow="fold")
    for r in runs:
        systems = ", ".join(r.systems[:4]) + (" ..." if len(r.systems) > 4 else "")
        table.add_row(
            r.run_id,
            r.created_at,
            r.profile or "",
            str(r.n_trials),
            ", ".join(r.tracks),
            ", ".join(r.benchmarks),
            systems,
        )
    console.print(table)


def main_metrics(run: Run, limit: int = 6) -> list[str]:
    """The metrics worth a column: the catalog's main metrics of the run's tracks first,
    then others, at most `limit`."""
    names = list(dict.fromkeys(m for t in run.trials for m in t.metrics))
    tracks = list(dict.fromkeys(t.track for t in run.trials))
    usual = [m for track in tracks for m in catalog.main_metrics(track)]
    first = [m for m in usual if m in names]
    return (first + [m for m in names if m not in first])[:limit]


NESTED_TIMINGS = ("engine_load",)  # measured inside another stage (generate_and_score)


def trial_seconds(timings: dict[str, float]) -> float:
    """A trial's wall time: its `total` when recorded, else its stages without the nested
    ones (summing every timing counted the engine load twice)."""
    if "total" in timings:
        return float(timings["total"])
    return float(sum(v for k, v in timings.items() if k not in NESTED_TIMINGS))


def render_run(run: Run, console: Console | None = None) -> None:
    """The run's header (ids, times, profile) and one line per trial with its main metrics."""
    console = console or Console()
    m = run.manifest
    console.print(f"[bold]run {run.run_id}[/bold]  {run.path}")
    console.print(
        f"created {m.get('created_at', '?')} · finished {m.get('finished_at', '?')} · "
        f"lasagna {m.get('lasagna_version', '?')} · schema {m.get('schema_version', '?')}"
        + (f" · profile {m['profile']}" if m.get("profile") else "")
    )
    if m.get("kind") == "evaluation":
        from lasagna.results.groups import render_evaluation

        render_evaluation(run, console)
        return
    metrics = main_metrics(run)
    groups = list(dict.fromkeys(t.comparability_key for t in run.trials))
    for ckey in groups:
        trials = [t for t in run.trials if t.comparability_key == ckey]
        table = Table(
            title=group_title(trials[0].benchmark, trials[0].track), caption=f"key {ckey}"
        )
        for col in ("system", "seed", "repeat", "rows", *metrics, "seconds", "trial key"):
            table.add_column(col, justify="left" if col in ("system", "trial key") else "right")
        for t in trials:
            table.add_row(
                t.system,
                str(t.seed),
                str(t.repeat),
                str(t.counts.get("rows", "")),
                *(catalog.show(x, t.metrics.get(x)) for x in metrics),
                f"{trial_seconds(t.timings):.1f}",
                t.key,
            )
        console.print(table)
