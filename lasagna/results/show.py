"""Rich views of the store for `lasagna results list` and `lasagna results show RUN`."""

from __future__ import annotations

import re

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lasagna.common.tables import add_text_row
from lasagna.judges.degenerate import about_metric, flagged, mark, warnings_of
from lasagna.metrics import catalog
from lasagna.results.leaderboard import group_title, labels_by_system
from lasagna.results.model import TrialMeta
from lasagna.results.store import Run, RunSummary
from lasagna.results.table_fit import add_name_column, cells_width, fitting, table_width


def _when(iso: str) -> str:
    """'2026-12-01T21:41:21+00:00' -> '2026-12-01 21:41' (UTC, as stored)."""
    return iso[:16].replace("T", " ") if len(iso) >= 16 else iso


def plain_table(title: str | None, caption: str | None = None) -> Table:
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


def nothing_yet(what: str, where: str | None) -> str:
    """What a reading command says of an empty results root, naming the root it read."""
    if where is None:
        return f"no {what} yet: run `lasagna benchmark run` first"
    return (
        f"no {what} in {where} yet: run `lasagna benchmark run` first, or pass --output "
        "where your runs were written"
    )


def _what(r: RunSummary) -> str:
    """`speed · retrieval`: the profile (if any) and the tracks a run evaluated."""
    return " · ".join(([r.profile] if r.profile else []) + [", ".join(r.tracks)])


def render_runs(
    runs: list[RunSummary], console: Console | None = None, where: str | None = None
) -> None:
    """One line per run, most recent first (times in UTC); `where`: the results root read."""
    console = console or Console()
    if not runs:
        console.print(nothing_yet("runs", where), soft_wrap=True, highlight=False)
        return
    table = plain_table("runs (an id is its creation time, UTC: YYYYmmdd-HHMMSS-<random>)")
    table.add_column("run", no_wrap=True)
    table.add_column("profile · track")  # wraps at its words before a name is cut
    table.add_column("trials", no_wrap=True, justify="right")
    # a benchmark's name (local/ kept: `local/sample` and `sample` are two) and the start of
    # its revision, whole on one line where it fits; the systems fold instead
    names = [[_short_revision(b) for b in r.benchmarks] for r in runs]
    widest = max((len(n) for ns in names for n in ns), default=10)
    table.add_column("benchmarks", overflow="fold", min_width=min(widest, 28))
    table.add_column("systems", overflow="fold", min_width=16)
    for r, benchmarks in zip(runs, names, strict=True):
        systems = ", ".join(r.systems[:4]) + (" ..." if len(r.systems) > 4 else "")
        add_text_row(table, r.run_id, _what(r), str(r.n_trials), ", ".join(benchmarks), systems)
    console.print(table)


def _short_revision(name: str) -> str:
    """`local/sample@8e7c0fba4acb` as `local/sample@8e7c0fba`."""
    return re.sub(r"@([0-9a-f]{8})[0-9a-f]+$", r"@\1", name)


NESTED_TIMINGS = ("engine_load",)  # measured inside another stage (generate_and_score)


def trial_seconds(timings: dict[str, float]) -> float:
    """A trial's wall time: its `total` when recorded, else its stages without the nested
    ones (summing every timing counted the engine load twice)."""
    if "total" in timings:
        return float(timings["total"])
    return float(sum(v for k, v in timings.items() if k not in NESTED_TIMINGS))


SHOW_METRICS = 4  # per table: with rows, seconds and the key they fit 100 columns
JUDGE_SHOWN = 2  # of those, kept for the judge scores of a judged generation trial
KEY_SHOWN = 8


def shown_metrics(trials: list[TrialMeta]) -> tuple[list[str], list[str]]:
    """(the columns, the main metrics left out) of one group's table: the catalog's main
    metrics of the track that the trials have, with room kept for the judge scores of a
    judged generation run (faithfulness_score, ...)."""
    have = list(dict.fromkeys(m for t in trials for m in t.metrics))
    track = trials[0].track
    mains = [m for m in catalog.main_metrics(track) if m in have]
    judged = [m for m in catalog.judge_scores(have) if m not in mains]
    if not mains and not judged:  # metrics the catalog does not know: the first few
        return have[:SHOW_METRICS], []
    keep = SHOW_METRICS - min(len(judged), JUDGE_SHOWN) if mains else 0
    columns = (mains[:keep] + judged)[:SHOW_METRICS]
    return columns, [m for m in mains + judged if m not in columns]


def fit_metrics(
    trials: list[TrialMeta], names: list[str], repeats: bool, width: int
) -> tuple[list[str], list[str]]:
    """(shown, left out): the group's metric columns, the last ones (one stays) left out
    while the system names would get too narrow in a `width`-wide table
    (lasagna.results.table_fit); every column is sized by the cells it will hold."""
    metrics, left_out = shown_metrics(trials)
    fixed = [
        cells_width("rows", [str(t.counts.get("rows", "")) for t in trials]),
        cells_width("seconds", [f"{trial_seconds(t.timings):.1f}" for t in trials]),
        cells_width("trial", [t.key[:KEY_SHOWN] for t in trials]),
    ]
    if repeats:
        fixed.append(cells_width("rep", [str(t.repeat) for t in trials]))
    optional = [
        cells_width(m, [catalog.show(m, t.metrics.get(m)) for t in trials]) for m in metrics
    ]
    keep = max(1, fitting(fixed, optional, names, width))
    return list(metrics[:keep]), [*metrics[keep:], *left_out]


def render_run(run: Run, console: Console | None = None) -> None:
    """The run's header (ids, times, profile) and one line per trial with its main metrics."""
    console = console or Console()
    m = run.manifest
    console.print(f"[bold]run {run.run_id}[/bold]  {escape(str(run.location))}")
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
        repeats = any(t.repeat for t in trials)
        labels = labels_by_system(trials)
        names = [labels[t.system_id] for t in trials]
        width = table_width(console)
        metrics, left_out = fit_metrics(trials, names, repeats, width)
        # title and captions as lines of their own: a narrow table would wrap them
        console.print()
        console.print(group_title(trials[0].benchmark, trials[0].track), highlight=False)
        table = plain_table("")
        add_name_column(table, "system", names)
        heads = ("rep", "rows", *metrics, "seconds") if repeats else ("rows", *metrics, "seconds")
        for col in heads:
            table.add_column(col, justify="right", no_wrap=True)
        table.add_column("trial", no_wrap=True)
        for t, name in zip(trials, names, strict=True):
            add_text_row(
                table,
                name,
                *([str(t.repeat)] if repeats else []),
                str(t.counts.get("rows", "")),
                *(
                    catalog.show(x, t.metrics.get(x))
                    + mark(about_metric(warnings_of(t.extra), x, t.track))
                    for x in metrics
                ),
                f"{trial_seconds(t.timings):.1f}",
                t.key[:KEY_SHOWN],
            )
        console.print(table, width=width)
        from lasagna.systems.labels import shared_line  # (systems: not for `results list`)

        if shared := shared_line([t.config for t in trials]):  # what the labels leave out
            console.print(shared, highlight=False, markup=False, width=width)
        console.print(f"group {ckey}", highlight=False, width=width)
        for line in flagged(zip(names, trials, strict=True)):  # a score a judge did not judge
            console.print(f"warning: {line}", highlight=False, width=width)
        if left_out:
            console.print(f"not shown: {', '.join(left_out)}", highlight=False, width=width)
    console.print(
        f"trial: its key's first {KEY_SHOWN} characters (results export --trial); all metrics: "
        "lasagna results sql",
        highlight=False,
    )
