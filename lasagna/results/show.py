"""Rich views of the store for `lasagna results list` and `lasagna results show RUN`."""

from __future__ import annotations

import os

from rich import box
from rich.console import Console
from rich.table import Table

from lasagna.metrics import catalog
from lasagna.results.leaderboard import group_title
from lasagna.results.store import Run, RunSummary


def _when(iso: str) -> str:
    """'2026-12-01T21:41:21+00:00' -> '2026-12-01 21:41' (UTC, as stored)."""
    return iso[:16].replace("T", " ") if len(iso) >= 16 else iso


def _table(title: str, caption: str | None = None) -> Table:
    """The look every results table shares: a rule under the header, no side borders, so
    it fits a 100-column terminal."""
    return Table(
        title=title,
        caption=caption,
        title_justify="left",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )


def _what(r: RunSummary) -> str:
    """`speed · retrieval`: the profile (if any) and the tracks a run evaluated."""
    return " · ".join(([r.profile] if r.profile else []) + [", ".join(r.tracks)])


def render_runs(runs: list[RunSummary], console: Console | None = None) -> None:
    """One line per run, most recent first (times in UTC)."""
    console = console or Console()
    if not runs:
        console.print("no runs yet: run `lasagna benchmark run` first")
        return
    table = _table("runs (an id is its creation time, UTC: YYYYmmdd-HHMMSS-<random>)")
    for col in ("run", "profile · track", "trials"):
        table.add_column(col, no_wrap=True, justify="right" if col == "trials" else "left")
    for col in ("benchmarks", "systems"):
        table.add_column(col, overflow="fold")
    for r in runs:
        systems = ", ".join(r.systems[:4]) + (" ..." if len(r.systems) > 4 else "")
        table.add_row(
            r.run_id,
            _what(r),
            str(r.n_trials),
            ", ".join(b.removeprefix("local/") for b in r.benchmarks),
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


SHOW_METRICS = 4  # per table: with rows, seconds and the key they fit 100 columns
KEY_SHOWN = 8


def render_run(run: Run, console: Console | None = None) -> None:
    """The run's header (ids, times, profile) and one line per trial with its main metrics."""
    console = console or Console()
    m = run.manifest
    console.print(f"[bold]run {run.run_id}[/bold]  {os.path.normpath(run.path)}")
    console.print(
        f"created {_when(str(m.get('created_at', '?')))} · finished "
        f"{_when(str(m.get('finished_at', '?')))} UTC"
        + (f" · profile {m['profile']}" if m.get("profile") else ""),
        highlight=False,
    )
    console.print(
        f"lasagna {m.get('lasagna_version', '?')} · schema {m.get('schema_version', '?')}",
        highlight=False,
    )
    if m.get("kind") == "evaluation":
        from lasagna.results.groups import render_evaluation

        render_evaluation(run, console)
        return
    groups = list(dict.fromkeys(t.comparability_key for t in run.trials))
    for ckey in groups:
        trials = [t for t in run.trials if t.comparability_key == ckey]
        names = [m for m in catalog.main_metrics(trials[0].track) if m in trials[0].metrics]
        metrics = (names or main_metrics(run))[:SHOW_METRICS]
        repeats = any(t.repeat for t in trials)
        table = _table(group_title(trials[0].benchmark, trials[0].track), f"group {ckey}")
        table.add_column("system", overflow="fold")
        heads = ("rep", "rows", *metrics, "seconds") if repeats else ("rows", *metrics, "seconds")
        for col in heads:
            table.add_column(col, justify="right", no_wrap=True)
        table.add_column("trial", no_wrap=True)
        for t in trials:
            table.add_row(
                t.system,
                *([str(t.repeat)] if repeats else []),
                str(t.counts.get("rows", "")),
                *(catalog.show(x, t.metrics.get(x)) for x in metrics),
                f"{trial_seconds(t.timings):.1f}",
                t.key[:KEY_SHOWN],
            )
        console.print(table)
    console.print(
        f"trial: its key's first {KEY_SHOWN} characters (for --trial); all metrics: "
        "lasagna results sql",
        highlight=False,
    )
