"""The report's view of `evaluate()` runs: grouped by group name, as an evaluations
dashboard shows them (the average of each score dimension over time; two runs side by side).

An evaluation run folder has `kind: "evaluation"` in its manifest, its summary under
`evaluation`, and the tables `evaluation_trials` and `spans` (see
`lasagna.results.evaluations`). The page data has the same shape as for benchmark groups,
so the charts and the drill-down work unchanged: a task id is a question, a trial index a
repeat, a score dimension a metric.
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.degenerate import about_metric, mark
from lasagna.results.groups import compare_evaluations, judge_flags, trial_scores
from lasagna.results.report.collect import num
from lasagna.results.report.evaluation_drill import drill, summary
from lasagna.results.runs import EVALUATION as KIND
from lasagna.results.runs import is_evaluation
from lasagna.results.store import Run

TRIALS = "evaluation_trials"


def trials_rows(run: Run) -> list[dict[str, Any]]:
    """The run's evaluation_trials rows (empty when the run has none)."""
    from lasagna.results import evaluation_views

    found = evaluation_views.table(run, TRIALS)
    return [] if found is None else found.to_pylist()


def group_evaluations(runs: list[Run]) -> dict[str, list[Run]]:
    """Evaluation runs by group name (an ungrouped run is its own group, by name), newest
    first within each group."""
    out: dict[str, list[Run]] = {}
    for run in runs:
        if is_evaluation(run):
            out.setdefault(group_name(run), []).append(run)
    return out


def group_name(run: Run) -> str:
    """The evaluation group a run is shown in (`/group/NAME`): its group name, else its own
    name or id."""
    s = summary(run)
    return str(s.get("group_name") or s.get("name") or run.run_id)


def dimensions(runs: list[Run]) -> list[str]:
    names = [k for r in runs for k in (summary(r).get("averages") or {})]
    return list(dict.fromkeys(names))


def evaluation_group(
    index: int, name: str, runs: list[Run], pair: tuple[str, str] | None = None
) -> dict[str, Any]:
    """The page entry of one evaluation group (see the module docstring)."""
    dims = dimensions(runs)
    ordered = sorted(runs, key=lambda r: (str(r.manifest.get("created_at", "")), r.run_id))
    table = []
    points = []  # one line (the group), a point per run; the menu picks the dimension
    for run in reversed(ordered):
        s = summary(run)
        table.append(
            {
                "run": run.run_id,
                "name": s.get("name") or "",
                "time": str(run.manifest.get("created_at", "")),
                "executor": s.get("executor") or "",
                "datapoints": s.get("n_datapoints"),
                "trials": s.get("n_trials"),
                "errors": s.get("n_errors") or 0,
                "averages": {d: num((s.get("averages") or {}).get(d)) for d in dims},
                "marks": {d: mark(about_metric(judge_flags(run), d, "sdk")).strip() for d in dims},
                "warnings": list(s.get("warnings") or []),
            }
        )
    for run in ordered:
        s = summary(run)
        values = {d: v for d in dims if (v := num((s.get("averages") or {}).get(d))) is not None}
        if values:
            points.append(
                {
                    "run": run.run_id,
                    "time": str(run.manifest.get("created_at", "")),
                    "n": s.get("n_trials"),
                    "values": values,
                }
            )
    rows = {r.run_id: trials_rows(r) for r in runs}
    return {
        "id": f"e{index}",
        "kind": KIND,
        "track": KIND,
        "pooled_gold": False,
        "benchmark": {},
        "key": name,
        "title": f"evaluation group {name}",
        "runs": [r.run_id for r in runs],
        "evaluations": table,
        "dimensions": dims,
        "progression": {  # each score dimension on its own axis (the chart's menu)
            "metrics": dims,
            "default": dims[0] if dims else None,
            "series": [{"system": name, "points": points}] if points else [],
        },
        "compare": _compare(_pick(runs, pair), rows, dims),
        "failed": [
            {
                "run": t["run"],
                "system": t["name"],
                "repeat": "",
                "key": t["run"],
                "rows": t["trials"],
                "failed": t["errors"],
                "scored": True,
                "error": None,
            }
            for t in table
            if t["errors"]
        ],
        "drill": drill(runs, rows, dims),
        "leaderboard": None,
        "matrix": None,
    }


def _pick(runs: list[Run], pair: tuple[str, str] | None) -> tuple[Run, Run] | None:
    """(A, B): the runs `pair` names (ids or prefixes), else the newest two (older as A)."""
    if pair is None:
        return (runs[1], runs[0]) if len(runs) >= 2 else None

    def find(ref: str) -> Run | None:
        hits = [r for r in runs if r.run_id == ref] or [r for r in runs if r.run_id.startswith(ref)]
        return hits[0] if len(hits) == 1 else None

    a, b = find(pair[0]), find(pair[1])
    return (a, b) if a is not None and b is not None else None


def _compare(
    picked: tuple[Run, Run] | None, rows: dict[str, list], dims: list[str]
) -> dict[str, Any] | None:
    """`compare_evaluations` on two runs of the group (tasks paired by task id, each the
    mean over its trials), and the trials whose score moved most."""
    if picked is None or summary(picked[0]).get("group_name") is None:
        return None  # side by side is for runs of one named group
    run_a, run_b = picked
    cmp = compare_evaluations(run_a, run_b)
    name_a = summary(run_a).get("name") or run_a.run_id
    name_b = summary(run_b).get("name") or run_b.run_id
    lines = [
        {
            "system_a": name_a,
            "system_b": name_b,
            "metric": dim,
            "mean_a": num(t.mean_a),
            "mean_b": num(t.mean_b),
            "diff": num(t.diff),
            "n": t.n,
            "p_ttest": num(t.p_ttest),
            "p_permutation": num(t.p_permutation),
            "p_ttest_adj": num(t.p_ttest),  # one test per score dimension: not adjusted
            "p_permutation_adj": num(t.p_permutation),
            "significant": t.p_permutation is not None and t.p_permutation < 0.05,
        }
        for dim, t in cmp.tests.items()
    ]
    a, b = trial_scores(run_a), trial_scores(run_b)
    per_q = []
    for key in sorted(a.keys() & b.keys()):
        task, trial = key
        for dim in dims:
            va, vb = num(a[key].get(dim)), num(b[key].get(dim))
            if va is not None and vb is not None:
                label = dim if trial == 0 else f"{dim} · trial {trial}"
                per_q.append({"id": str(task), "system": label, "a": va, "b": vb, "diff": vb - va})
    same = sum(1 for r in per_q if r["diff"] == 0)
    moved = sorted((r for r in per_q if r["diff"] != 0), key=lambda r: (-abs(r["diff"]), r["id"]))
    notes = [f"{cmp.unmatched} task(s) have no partner in the other run"] if cmp.unmatched else []
    return {
        "run_a": run_a.run_id,
        "run_b": run_b.run_id,
        "time_a": str(run_a.manifest.get("created_at", "")),
        "time_b": str(run_b.manifest.get("created_at", "")),
        "lines": lines,
        "correction": "one test per score dimension, not adjusted",
        "notes": notes,
        "questions": {
            "metric": "each score dimension",
            "rows": moved[:200],
            "total": len(moved),
            "same": same,
        },
    }
