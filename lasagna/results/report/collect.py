"""What the report shows, as plain JSON-able data: groups, leaderboards, progression, compare.

Nothing here recomputes a statistic: leaderboards and their 95% intervals come from
`build_leaderboard`, paired tests from `compare_runs` (side_by_side.py) and the within-run
pairs from lasagna.results.pairwise (matrix.py). This module only selects runs and groups
and lays the numbers out for the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from lasagna.metrics import catalog
from lasagna.results.leaderboard import (
    Group,
    benchmark_runs,
    build_leaderboard,
    group_title,
    labels_by_system,
    pick_groups,
)
from lasagna.results.leaderboard_data import board_dict, num
from lasagna.results.model import TrialMeta
from lasagna.results.store import Run


def metric_order(names: list[str], track: str) -> list[str]:
    """Catalog order: the track's main metrics, then summary, then detail ones, each in
    registration order; metrics the catalog does not know come last, as found."""
    known = catalog.metrics_of(track, "detail")
    levels = {"main": 0, "summary": 1, "detail": 2}
    rank = {m.name: (levels[m.level], i) for i, m in enumerate(known)}
    return sorted(names, key=lambda n: rank.get(n, (3, names.index(n))))


def metric_info(names: list[str]) -> dict[str, dict[str, Any]]:
    """For the page: each metric's description, direction and decimals (from the catalog)."""
    out = {}
    for name in names:
        m = catalog.metric_of(name)
        digits = int(m.format[1:-1]) if m.format.startswith(".") and m.format[1:-1].isdigit() else 4
        out[name] = {
            "description": m.description,
            "lower_is_better": m.lower_is_better,
            "level": m.level if catalog.known(name) else "main",  # SDK scores: main
            "digits": digits,
        }
    return out


@dataclass
class GroupView:
    """One comparability group: its leaderboard and the runs (newest first) holding it."""

    key: str
    title: str
    track: str
    benchmark: dict[str, Any]
    leaderboard: Group | None
    runs: list[Run]
    trials: dict[str, list[TrialMeta]] = field(default_factory=dict)  # run id -> its trials

    @cached_property
    def labels(self) -> dict[str, str]:
        """Each system id -> its label, unique among the group's systems of every run."""
        return labels_by_system([t for ts in self.trials.values() for t in ts])

    @property
    def pooled_gold(self) -> bool:
        return self.benchmark.get("corpus_provenance") == "pooled_gold"

    @property
    def metrics(self) -> list[str]:
        names = [m for ts in self.trials.values() for t in ts for m in t.metrics]
        return metric_order(list(dict.fromkeys(names)), self.track)

    @property
    def primary_metric(self) -> str | None:
        if self.leaderboard is not None:
            return self.leaderboard.metric
        return self.metrics[0] if self.metrics else None


def select_groups(runs: list[Run], group: str | None = None) -> list[GroupView]:
    """Every comparability group of `runs` (most recent first), or the ones `group` names:
    a comparability key, a unique prefix of one, or a benchmark name."""
    boards = {g.comparability_key: g for g in build_leaderboard(runs)}
    views: dict[str, GroupView] = {}
    for run in benchmark_runs(runs):  # evaluations: the report's section of their own
        for t in run.trials:
            view = views.get(t.comparability_key)
            if view is None:
                view = GroupView(
                    t.comparability_key,
                    group_title(t.benchmark, t.track),
                    t.track,
                    dict(t.benchmark),
                    boards.get(t.comparability_key),
                    [],
                )
                views[t.comparability_key] = view
            if run.run_id not in view.trials:
                view.runs.append(run)
                view.trials[run.run_id] = []
            view.trials[run.run_id].append(t)
    ordered = sorted(
        views.values(),
        key=lambda v: (str(v.benchmark.get("name", "")), catalog.track_rank(v.track), v.key),
    )
    if group is None:
        return ordered
    return pick_groups(ordered, group, lambda v: v.key, lambda v: str(v.benchmark.get("name", "")))


def leaderboard_data(view: GroupView) -> dict[str, Any] | None:
    return board_dict(view.leaderboard) if view.leaderboard is not None else None


def run_time(run: Run) -> str:
    return str(run.manifest.get("created_at", ""))


def progression_data(view: GroupView) -> dict[str, Any]:
    """Per system and metric: the mean over the system's trials of each run, oldest first."""
    series: dict[str, dict[str, Any]] = {}
    for run in sorted(view.runs, key=lambda r: (run_time(r), r.run_id)):
        by_system: dict[str, list[TrialMeta]] = {}
        for t in view.trials[run.run_id]:
            by_system.setdefault(t.system_id, []).append(t)
        for sid, trials in by_system.items():
            s = series.setdefault(sid, {"system": view.labels[sid], "points": []})
            values: dict[str, float] = {}
            for m in view.metrics:
                got = [num(t.metrics.get(m)) for t in trials]
                got = [v for v in got if v is not None]
                if got:
                    values[m] = sum(got) / len(got)
            s["points"].append(
                {"run": run.run_id, "time": run_time(run), "n": len(trials), "values": values}
            )
    return {
        "metrics": view.metrics,
        "default": view.primary_metric,
        "series": list(series.values()),
    }


def failed_data(view: GroupView) -> list[dict[str, Any]]:
    """Trials with failed rows, or with no score at all (left out of the leaderboard)."""
    out = []
    for run in view.runs:
        for t in view.trials[run.run_id]:
            failed = int(t.counts.get("failed", 0) or 0)
            scored = view.primary_metric is not None and (
                num(t.metrics.get(view.primary_metric)) is not None
            )
            if failed or not scored:
                out.append(
                    {
                        "run": run.run_id,
                        "system": view.labels[t.system_id],
                        "repeat": t.repeat,
                        "key": t.key,
                        "rows": t.counts.get("rows"),
                        "failed": failed,
                        "scored": scored,
                        "error": t.extra.get("error"),
                    }
                )
    return out
