"""The report's side by side of two runs of a group: `compare_runs` restricted to the
group, and a per-question table of the primary metric, largest difference first."""

from __future__ import annotations

from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.metrics.corrections import describe
from lasagna.results.compare import Comparison, compare_runs
from lasagna.results.model import TrialMeta
from lasagna.results.pairwise import question_means
from lasagna.results.report.collect import GroupView, num, run_time
from lasagna.results.runs import evaluation_info, is_evaluation
from lasagna.results.store import Run

PER_QUESTION_ROWS = 200  # questions listed, largest difference first


def pick_pair(view: GroupView, pair: tuple[str, str] | None) -> tuple[Run, Run] | None:
    """The runs to put side by side: `pair` (ids or prefixes) or the group's newest two."""
    if pair is None:
        if len(view.runs) < 2:
            return None
        return view.runs[1], view.runs[0]  # A = older, B = newer

    a, b = find_run(view.runs, pair[0]), find_run(view.runs, pair[1])
    return (a, b) if a is not None and b is not None else None


def find_run(runs: list[Run], ref: str) -> Run | None:
    """The one run `ref` names (its id, or a prefix of one id), else None."""
    hits = [r for r in runs if r.run_id == ref] or [r for r in runs if r.run_id.startswith(ref)]
    return hits[0] if len(hits) == 1 else None


def check_pair(runs: list[Run], pair: tuple[str, str]) -> None:
    """Refuse a `--compare` pair that names one run twice (it would compare it with itself)
    or two runs with no group in common (no section of the page could compare them)."""
    a, b = find_run(runs, pair[0]), find_run(runs, pair[1])
    if a is not None and a is b:
        raise UserError(
            Problem(
                f"--compare names run {a.run_id} twice",
                field="--compare",
                fix="name two runs (lasagna results list shows them)"
                + (
                    ""
                    if is_evaluation(a)  # its executor is one system: nothing to compare
                    else f"; the systems of one run are compared with lasagna results "
                    f"compare {a.run_id}"
                ),
            )
        )
    for ref, run in zip(pair, (a, b), strict=True):
        if run is None:
            many = sum(r.run_id.startswith(ref) for r in runs) > 1
            recent = ", ".join(r.run_id for r in runs[:3])
            raise UserError(
                Problem(
                    f"--compare {ref!r} "
                    + ("matches several runs" if many else "names no run of the report"),
                    field="--compare",
                    fix="give more of the run id"
                    if many
                    else f"name two of its runs "
                    f"(the most recent: {recent}; lasagna results list shows them all)",
                )
            )
    assert a is not None and b is not None
    groups_a, groups_b = _groups(a), _groups(b)
    if groups_a and groups_b and not groups_a & groups_b:
        raise UserError(
            Problem(
                f"runs {a.run_id} and {b.run_id} have no group in common (benchmark, "
                "track and corpus): the page has nothing to compare side by side",
                field="--compare",
                fix="name two runs of one benchmark (lasagna results list; a run's groups: "
                "lasagna results show RUN)",
            )
        )


def _groups(run: Run) -> set[Any]:
    """The report's groups a run is in: its trials' comparability keys, or for an
    evaluate() run its group name."""
    if is_evaluation(run):
        return {("evaluation", evaluation_info(run).get("group_name"))}
    return {t.comparability_key for t in run.trials}


def compare_data(view: GroupView, pair: tuple[str, str] | None) -> dict[str, Any] | None:
    """`compare_runs` on the chosen two runs, restricted to this group, plus a per-question
    table of the primary metric sorted by the largest difference."""
    runs = pick_pair(view, pair)
    if runs is None:
        return None
    run_a, run_b = runs
    comparison: Comparison = compare_runs(run_a, run_b, labels=view.labels)
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
            "p_ttest_adj": num(line.p_ttest_adj),
            "p_permutation_adj": num(line.p_permutation_adj),
            "significant": line.significant,
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
        "correction": describe(comparison.correction) + " over each metric's lines",
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
        qa = question_means([(run_a, t) for t in ta], metric)
        qb = question_means([(run_b, t) for t in tb], metric)
        if qa is None or qb is None:
            continue
        a = dict(zip(qa["id"].to_pylist(), qa["v_mean"].to_pylist(), strict=True))
        b = dict(zip(qb["id"].to_pylist(), qb["v_mean"].to_pylist(), strict=True))
        la, lb = view.labels[ta[0].system_id], view.labels[tb[0].system_id]
        system = la if la == lb else f"{la} vs {lb}"
        for qid in a.keys() & b.keys():
            va, vb = num(a[qid]), num(b[qid])
            if va is None or vb is None:
                continue
            rows.append({"id": qid, "system": system, "a": va, "b": vb, "diff": vb - va})
    same = sum(1 for r in rows if r["diff"] == 0)
    rows = [r for r in rows if r["diff"] != 0]
    rows.sort(key=lambda r: (-abs(r["diff"]), r["system"], r["id"]))
    return {"metric": metric, "rows": rows[:PER_QUESTION_ROWS], "total": len(rows), "same": same}
