"""The leaderboard: every trial of every run, grouped by comparability key, one line per system.

Groups never mix: a pooled_gold corpus and a real one, or two revisions of one file, have
different comparability keys. Within a group a system is its resolved config (hashed), so
two configs sharing a display name stay apart. A trial key seen in several runs (restored by
--resume) counts once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from lasagna.errors import Problem, UserError
from lasagna.metrics import catalog
from lasagna.results.model import TrialMeta
from lasagna.results.store import DEFAULT_OUTPUT, Output, Run, load_runs


@dataclass
class LeaderboardLine:
    system: str
    system_id: str
    mean: float
    low: float | None  # 95% CI (t over trial means); None with one trial
    high: float | None
    n_trials: int
    runs: list[str]
    trial_keys: list[str]


@dataclass
class Group:
    comparability_key: str
    track: str
    benchmark: dict[str, Any]
    metric: str
    lines: list[LeaderboardLine] = field(default_factory=list)


def default_metric(track: str, trials: list[TrialMeta]) -> str | None:
    """The metric a group of `track` is ranked and compared by: the first of the catalog's
    primary metrics its trials have."""
    names = {m for t in trials for m in t.metrics}
    for name in catalog.primary_metrics(track):
        if name in names:
            return name
    return sorted(names)[0] if names else None


def build_leaderboard(runs: list[Run], metric: str | None = None) -> list[Group]:
    """Pure: group the trials of `runs` (most recent first) and rank systems by `metric`."""
    from lasagna.metrics.stats import mean_ci

    seen: dict[str, TrialMeta] = {}
    trial_runs: dict[str, list[str]] = {}
    for run in runs:
        for t in run.trials:
            seen.setdefault(t.key, t)
            trial_runs.setdefault(t.key, []).append(run.run_id)
    by_group: dict[str, list[TrialMeta]] = {}
    for t in seen.values():
        by_group.setdefault(t.comparability_key, []).append(t)

    groups = []
    for ckey, trials in by_group.items():
        track = trials[0].track
        name = metric or default_metric(track, trials)
        scored = [t for t in trials if name and _finite(t.metrics.get(name))]
        if not scored:
            continue
        by_system: dict[str, list[TrialMeta]] = {}
        for t in scored:
            by_system.setdefault(t.system_id, []).append(t)
        lines = []
        for sid, ts in by_system.items():
            ci = mean_ci([float(t.metrics[name]) for t in ts])
            runs_of = list(dict.fromkeys(r for t in ts for r in trial_runs[t.key]))
            lines.append(
                LeaderboardLine(
                    ts[0].system, sid, ci.mean, ci.low, ci.high, ci.n, runs_of, [t.key for t in ts]
                )
            )
        lines.sort(key=lambda line: (catalog.sort_key(name, line.mean), line.system))
        groups.append(Group(ckey, track, dict(trials[0].benchmark), name, lines))

    if metric and not groups and seen:
        available = sorted({m for t in seen.values() for m in t.metrics})
        raise UserError(
            Problem(
                f"no trial has the metric {metric!r}",
                field="--metric",
                fix="use one of: " + ", ".join(available),
            )
        )
    groups.sort(key=lambda g: (str(g.benchmark.get("name", "")), g.track, g.comparability_key))
    return groups


def labels_by_system(trials: list[TrialMeta]) -> dict[str, str]:
    """Each system id of `trials` (one group) -> the label tables show."""
    return {t.system_id: t.system for t in trials}


def unranked_groups(runs: list[Run], metric: str) -> list[str]:
    """The groups `--metric` leaves out (no trial has it), as "title (key ...)" lines, so a
    leaderboard never drops a group without a word."""
    out: dict[str, str] = {}
    scored: set[str] = set()
    for run in runs:
        for t in run.trials:
            out.setdefault(
                t.comparability_key,
                f"{group_title(t.benchmark, t.track)} (key {t.comparability_key})",
            )
            if _finite(t.metrics.get(metric)):
                scored.add(t.comparability_key)
    return [line for key, line in out.items() if key not in scored]


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def leaderboard(output_dir: Output = DEFAULT_OUTPUT, metric: str | None = None) -> list[Group]:
    """The leaderboard of every run under `output_dir` (metric None: ndcg@10 / f1 per track)."""
    return build_leaderboard(load_runs(output_dir), metric)


# how a group title says where the searched documents came from (schema: corpus_provenance)
PROVENANCE = {"corpus": "full corpus", "pooled_gold": "pooled gold"}


def group_title(benchmark: dict[str, Any], track: str) -> str:
    parts = [str(benchmark.get("name", "?"))]
    if benchmark.get("split"):
        parts.append(f"split {benchmark['split']}")
    if benchmark.get("n_samples"):
        parts.append(f"n={benchmark['n_samples']}")
    if benchmark.get("filters"):
        parts.append(f"filters {benchmark['filters']}")
    parts.append(track)
    provenance = benchmark.get("corpus_provenance")
    if provenance:
        parts.append(PROVENANCE.get(provenance, f"corpus {provenance}"))
    return " · ".join(parts)


def fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def render_leaderboard(
    groups: list[Group], console: Console | None = None, notes: list[str] | None = None
) -> None:
    """One rich table per comparability group, then the notes (groups left out)."""
    console = console or Console()
    if not groups:
        console.print("no results yet: run `lasagna benchmark run` first")
        return
    _print_groups(groups, console)
    for note in notes or []:
        console.print(f"note: {note}")


def _print_groups(groups: list[Group], console: Console) -> None:
    for g in groups:
        table = Table(title=group_title(g.benchmark, g.track), caption=f"key {g.comparability_key}")
        table.add_column("#", justify="right")
        table.add_column("system")
        table.add_column(g.metric, justify="right")
        table.add_column("95% CI", justify="right")
        table.add_column("trials", justify="right")
        table.add_column("runs")
        for i, line in enumerate(g.lines, 1):
            ci = f"[{fmt(line.low)}, {fmt(line.high)}]" if line.low is not None else "-"
            runs = ", ".join(line.runs[:3]) + (" ..." if len(line.runs) > 3 else "")
            table.add_row(str(i), line.system, fmt(line.mean), ci, str(line.n_trials), runs)
        console.print(table)
