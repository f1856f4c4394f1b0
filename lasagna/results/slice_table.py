"""`lasagna results show RUN --by KEY`: each system's score on each slice of the questions.

One table per comparability group and metric: a line per slice (`all` first, then the
largest slice first, a slice without a scored question last), a column per system
(leaderboard order, best first on all the questions), the best score of each line in bold.
Which differences are real is `lasagna results compare RUN --by KEY` (paired tests within
each slice).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.text import Text

from lasagna.common.tables import add_text_row
from lasagna.errors import Problem, UserError
from lasagna.judges.degenerate import flagged
from lasagna.metrics import catalog
from lasagna.results.leaderboard import default_metric, group_title, labels_by_system
from lasagna.results.model import TrialMeta, trials_by_system
from lasagna.results.pairwise import SystemScores, system_scores
from lasagna.results.runs import Run
from lasagna.results.show import plain_table
from lasagna.results.slices import (
    ALL,
    group_slices,
    restricted,
    unknown_key,
)
from lasagna.results.table_fit import GAP, cells_width, column_chunks, table_width

MAX_SLICES = 40  # lines of one table; the slices after them are counted under it


@dataclass
class SliceLine:
    value: str  # the slice (ALL: every question)
    questions: int  # questions of the slice that have a score
    means: list[float]  # one per system, in the group's system order


@dataclass
class SliceGroup:
    benchmark: dict[str, Any]
    track: str
    comparability_key: str
    metric: str
    by: str
    systems: list[str]  # labels, best first on all the questions
    lines: list[SliceLine] = field(default_factory=list)
    left_out: int = 0  # slices after the first MAX_SLICES, not shown
    warnings: list[str] = field(default_factory=list)  # scores a judge did not judge

    @property
    def title(self) -> str:
        return f"{group_title(self.benchmark, self.track)} · {self.metric} by {self.by}"


def slice_groups(run: Run, by: str, metrics: list[str] | None = None) -> list[SliceGroup]:
    """The run's groups by slice of `by` (see the module docstring); a metric no trial of a
    group has is left out there; a key no question has is refused."""
    out: list[SliceGroup] = []
    keyed = False
    for ckey in dict.fromkeys(t.comparability_key for t in run.trials):
        trials = [t for t in run.trials if t.comparability_key == ckey]
        slices = group_slices(run, trials, by)
        if slices is None:
            continue
        keyed = True
        for metric in metrics or _shown(trials):
            group = slice_group(run, trials, by, metric, slices)
            if group is not None:
                out.append(group)
    if not keyed:
        raise unknown_key(by, run)
    if metrics and not out:
        raise UserError(
            Problem(
                f"no group of run {run.run_id} has the metric(s) {', '.join(metrics)}",
                field="--metric",
                fix="use one of: " + ", ".join(sorted({m for t in run.trials for m in t.metrics})),
            )
        )
    return out


def _shown(trials: list[TrialMeta]) -> list[str]:
    """The group's main metric; an evaluate() run (no main metric): every score dimension."""
    if not catalog.primary_metrics(trials[0].track):
        return list(dict.fromkeys(m for t in trials for m in t.metrics))
    main = default_metric(trials[0].track, trials)
    return [main] if main else []


def slice_group(
    run: Run, trials: list[TrialMeta], by: str, metric: str, slices: dict[str, set[str]]
) -> SliceGroup | None:
    """One group's table of `metric` by slice; None when a trial lacks the metric."""
    if not all(metric in t.metrics for t in trials):
        return None
    labels = labels_by_system(trials)
    scored = [
        system_scores(labels[sid], [(run, t) for t in ts], metric)
        for sid, ts in trials_by_system(trials).items()
    ]
    scored.sort(key=lambda s: (catalog.sort_key(metric, s.mean), s.label))
    first = trials[0]
    group = SliceGroup(
        dict(first.benchmark),
        first.track,
        first.comparability_key,
        metric,
        by,
        [s.label for s in scored],
    )
    group.lines.append(SliceLine(ALL, _scored(scored, None), [s.mean for s in scored]))
    counts = {value: _scored(scored, ids) for value, ids in slices.items()}
    # a slice no question of which has a score (unanswerable questions in retrieval) last
    shown = sorted(slices.items(), key=lambda item: counts[item[0]] == 0)[:MAX_SLICES]
    for value, ids in shown:
        group.lines.append(SliceLine(value, counts[value], _means(scored, ids)))
    group.left_out = max(0, len(slices) - MAX_SLICES)
    group.warnings = flagged(((labels[t.system_id], t) for t in trials), [metric])
    return group


def _means(scored: list[SystemScores], ids: set[str]) -> list[float]:
    return [restricted(s, ids).mean for s in scored]


def _scored(scored: list[SystemScores], ids: set[str] | None) -> int:
    """Questions of the slice (None: all) that some system has a score for."""
    have = set().union(*[(s.questions or {}).keys() for s in scored])
    return len(have if ids is None else have & ids)


def render_slices(groups: list[SliceGroup], console: Console | None = None) -> None:
    """The groups as tables that fit the terminal: the systems that do not fit beside the
    slice column go to a second table (and so on)."""
    console = console or Console()
    width = table_width(console)
    for g in groups:
        cells = [[catalog.show(g.metric, m) for m in ln.means] for ln in g.lines]
        widths = [cells_width(name, [c[j] for c in cells]) for j, name in enumerate(g.systems)]
        values = [ln.value for ln in g.lines]
        fixed = min(24, max(map(len, [g.by, *values]))) + GAP + cells_width("n", ["00000"]) + GAP
        chunks = column_chunks(widths, fixed, width)
        console.print()
        console.print(g.title, highlight=False, width=width)
        for cols in chunks:
            table = plain_table(None)
            table.add_column(Text(g.by), overflow="fold", min_width=min(24, max(map(len, values))))
            table.add_column("n", justify="right", no_wrap=True)
            for j in cols:
                table.add_column(Text(g.systems[j]), justify="right", no_wrap=True)
            for ln, row in zip(g.lines, cells, strict=True):
                best = catalog.best_index(g.metric, [ln.means[j] for j in cols])
                add_text_row(
                    table,
                    ln.value,
                    str(ln.questions),
                    *(Text(row[j], "bold") if k == best else row[j] for k, j in enumerate(cols)),
                )
            console.print(table, width=width)
        console.print(f"group {g.comparability_key}", highlight=False, width=width)
        for line in g.warnings:
            console.print(f"warning: {line}", highlight=False, width=width)
        if g.left_out:
            console.print(
                f"{g.left_out} more slice(s) not shown: lasagna results sql "
                f'"SELECT system, metadata->>\'{g.by}\' AS slice, avg(\\"{g.metric}\\") ... '
                'FROM rows GROUP BY ALL"',
                highlight=False,
                width=width,
            )
    tests = any(len(g.systems) > 1 for g in groups)
    unit = "trial" if groups and all(g.track == "sdk" for g in groups) else "question"
    console.print(  # an evaluate() run's unit: a trial (a datapoint x its `trials` repeats)
        f"a slice's score: the mean of the per-{unit} scores over its {unit}s (n: those "
        "with a score); bold: the best of each line"
        + ("; paired tests per slice: lasagna results compare RUN --by KEY" if tests else ""),
        highlight=False,
        width=width,
    )


def slice_records(groups: list[SliceGroup]) -> list[dict[str, Any]]:
    """A record per group, metric, slice and system (`results show RUN --by KEY --format
    csv|json`): flat, so CSV and JSON carry the same fields; NaN is null."""
    from lasagna.results.leaderboard_data import num

    return [
        {
            "benchmark": g.benchmark.get("name"),
            "track": g.track,
            "comparability_key": g.comparability_key,
            "metric": g.metric,
            "by": g.by,
            "slice": ln.value,
            "questions": ln.questions,
            "system": system,
            "mean": num(mean),
        }
        for g in groups
        for ln in g.lines
        for system, mean in zip(g.systems, ln.means, strict=True)
    ]
