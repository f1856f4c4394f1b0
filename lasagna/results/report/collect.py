"""What the report shows, as plain JSON-able data: groups, leaderboards, progression, compare.

Nothing here recomputes a statistic: leaderboards and their 95% intervals come from
`build_leaderboard`, paired tests from `compare_runs`. This module only selects runs and
groups and lays the numbers out for the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.judges.degenerate import mark, warning_text
from lasagna.metrics import catalog
from lasagna.results.compare import Comparison, _per_question, compare_runs
from lasagna.results.leaderboard import Group, build_leaderboard, group_title
from lasagna.results.model import TrialMeta
from lasagna.results.store import Run

TRACK_ORDER = {"retrieval": 0, "generation": 1, "judge": 2}  # groups of one benchmark
PER_QUESTION_ROWS = 200  # side-by-side: questions listed, largest difference first


def num(value: Any) -> float | None:
    """A finite float, or None (JSON has no NaN)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


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
            "level": m.level if catalog.get(name) else "main",
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
    for run in runs:
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
        key=lambda v: (str(v.benchmark.get("name", "")), TRACK_ORDER.get(v.track, 9), v.key),
    )
    if group is None:
        return ordered
    exact = [v for v in ordered if group == v.key]
    picked = exact or [v for v in ordered if v.key.startswith(group)]
    picked = picked or [v for v in ordered if str(v.benchmark.get("name", "")) == group]
    picked = picked or [v for v in ordered if str(v.benchmark.get("name", "")).startswith(group)]
    if not picked:
        raise UserError(
            Problem(
                f"no comparability group matches {group!r}",
                field="--group",
                fix="give a comparability key (or its start) or a benchmark name; groups: "
                + ", ".join(v.key for v in ordered[:8]),
            )
        )
    return picked


def leaderboard_data(view: GroupView) -> dict[str, Any] | None:
    board = view.leaderboard
    if board is None:
        return None
    return {
        "metric": board.metric,
        "lines": [
            {
                "rank": i,
                "system": line.system,
                "system_id": line.system_id,
                "mean": num(line.mean),
                "low": num(line.low),
                "high": num(line.high),
                "n_trials": line.n_trials,
                "runs": line.runs,
                "mark": mark(line.warnings).strip(),
                "warnings": [warning_text(w) for w in line.warnings],
            }
            for i, line in enumerate(board.lines, 1)
        ],
    }


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
            s = series.setdefault(sid, {"system": trials[0].system, "points": []})
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


def pick_pair(view: GroupView, pair: tuple[str, str] | None) -> tuple[Run, Run] | None:
    """The runs to put side by side: `pair` (ids or prefixes) or the group's newest two."""
    if pair is None:
        if len(view.runs) < 2:
            return None
        return view.runs[1], view.runs[0]  # A = older, B = newer

    def find(ref: str) -> Run | None:
        hits = [r for r in view.runs if r.run_id == ref] or [
            r for r in view.runs if r.run_id.startswith(ref)
        ]
        return hits[0] if len(hits) == 1 else None

    a, b = find(pair[0]), find(pair[1])
    return (a, b) if a is not None and b is not None else None


def compare_data(view: GroupView, pair: tuple[str, str] | None) -> dict[str, Any] | None:
    """`compare_runs` on the chosen two runs, restricted to this group, plus a per-question
    table of the primary metric sorted by the largest difference."""
    runs = pick_pair(view, pair)
    if runs is None:
        return None
    run_a, run_b = runs
    comparison: Comparison = compare_runs(run_a, run_b)
    lines = [line for line in comparison.lines if line.comparability_key == view.key]
    if not lines:
        return None
    order = {m: i for i, m in enumerate(view.metrics)}
    lines.sort(key=lambda line: (order.get(line.metric, 10**6), line.system_a, line.system_b))
    out_lines = [
        {
            "system_a": line.system_a,
            "system_b": line.system_b,
            "metric": line.metric,
            "mean_a": num(line.mean_a),
            "mean_b": num(line.mean_b),
            "diff": num(line.diff),
            "n": line.n,
            "p_ttest": num(line.p_ttest),
            "p_permutation": num(line.p_permutation),
            "trials_a": line.trials_a,
            "trials_b": line.trials_b,
        }
        for line in lines
    ]
    return {
        "run_a": run_a.run_id,
        "run_b": run_b.run_id,
        "time_a": run_time(run_a),
        "time_b": run_time(run_b),
        "lines": out_lines,
        "notes": [n for n in comparison.notes if view.key in n or "system" in n],
        "questions": per_question_diffs(view, run_a, run_b),
    }


def _pairs(view: GroupView, run_a: Run, run_b: Run) -> list[tuple[list[TrialMeta], ...]]:
    """The trials compared, as `compare_runs` pairs them (one trial each, or by system)."""
    ta, tb = view.trials[run_a.run_id], view.trials[run_b.run_id]
    if len(run_a.trials) == 1 and len(run_b.trials) == 1:
        return [(ta, tb)]
    out = []
    for sid in dict.fromkeys(t.system_id for t in ta):
        sa = [t for t in ta if t.system_id == sid]
        sb = [t for t in tb if t.system_id == sid]
        if sb:
            out.append((sa, sb))
    return out


def per_question_diffs(view: GroupView, run_a: Run, run_b: Run) -> dict[str, Any]:
    metric = view.primary_metric
    rows: list[dict[str, Any]] = []
    if metric is None:
        return {"metric": None, "rows": rows, "total": 0}
    for ta, tb in _pairs(view, run_a, run_b):
        qa = _per_question(run_a, ta, metric)
        qb = _per_question(run_b, tb, metric)
        if qa is None or qb is None:
            continue
        a = dict(zip(qa["id"].to_pylist(), qa["v_mean"].to_pylist(), strict=True))
        b = dict(zip(qb["id"].to_pylist(), qb["v_mean"].to_pylist(), strict=True))
        system = (
            ta[0].system if ta[0].system == tb[0].system else f"{ta[0].system} vs {tb[0].system}"
        )
        for qid in a.keys() & b.keys():
            va, vb = num(a[qid]), num(b[qid])
            if va is None or vb is None:
                continue
            rows.append({"id": qid, "system": system, "a": va, "b": vb, "diff": vb - va})
    same = sum(1 for r in rows if r["diff"] == 0)
    rows = [r for r in rows if r["diff"] != 0]
    rows.sort(key=lambda r: (-abs(r["diff"]), r["system"], r["id"]))
    return {"metric": metric, "rows": rows[:PER_QUESTION_ROWS], "total": len(rows), "same": same}


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
                        "system": t.system,
                        "repeat": t.repeat,
                        "key": t.key,
                        "rows": t.counts.get("rows"),
                        "failed": failed,
                        "scored": scored,
                        "error": t.extra.get("error"),
                    }
                )
    return out
