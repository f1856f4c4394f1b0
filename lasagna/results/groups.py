"""Groups of SDK evaluations: the progression of a group over time, and side-by-side
comparison of two evaluations of one group (tasks paired by task id, each task's score the
mean over its trials)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

from lasagna.common.tables import add_text_row
from lasagna.errors import Problem, UserError
from lasagna.judges.degenerate import about_metric, mark, warnings_of
from lasagna.metrics.stats import PairedTest, paired
from lasagna.results import evaluations as ev
from lasagna.results.runs import evaluation_info, is_evaluation
from lasagna.results.store import DEFAULT_OUTPUT, Output, Run, load_runs, open_run
from lasagna.results.table_fit import cells_width, fitting, table_width


@dataclass(frozen=True)
class Progression:
    group: str
    dimensions: list[str]
    rows: list[dict[str, Any]]  # evaluation_id, name, created_at, n_trials, n_errors, averages


def progression(group: str, output_dir: Output = DEFAULT_OUTPUT) -> Progression:
    """Every evaluation of `group`, oldest first, with the average of each score dimension."""
    runs = [r for r in load_runs(output_dir) if is_evaluation(r)]
    mine = [r for r in runs if evaluation_info(r).get("group_name") == group]
    if not mine:
        known = sorted({g for r in runs if (g := evaluation_info(r).get("group_name"))})
        raise UserError(
            Problem(
                f"no evaluation in group {group!r}",
                file=str(output_dir),
                fix=("groups here: " + ", ".join(known))
                if known
                else "run evaluate(..., group_name=...) first, or pass --output",
            )
        )
    mine.sort(key=lambda r: (str(evaluation_info(r).get("created_at", "")), r.run_id))
    rows = [
        {
            "evaluation_id": r.run_id,
            "name": evaluation_info(r).get("name"),
            "created_at": evaluation_info(r).get("created_at"),
            "n_trials": evaluation_info(r).get("n_trials"),
            "n_errors": evaluation_info(r).get("n_errors"),
            "averages": evaluation_info(r).get("averages") or {},
        }
        for r in mine
    ]
    dims = list(dict.fromkeys(d for row in rows for d in row["averages"]))
    return Progression(group, dims, rows)


def _avg(value: Any) -> str:
    return (
        "-"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else (f"{value:.4f}")
    )


def render_progression(prog: Progression, console: Console | None = None) -> None:
    """One line per evaluation, oldest first; names shown only where they say more than
    the default `<group>-<id>`. It fits the terminal (lasagna.results.table_fit): numbers
    never wrap, and the score columns that do not fit are named below the table instead."""
    console = console or Console()
    width = table_width(console)
    named = any(r["name"] != f"{prog.group}-{r['evaluation_id']}" for r in prog.rows)
    ids = [r["evaluation_id"] for r in prog.rows]
    fixed = [19, 6, 6]  # created (UTC), trials, errors; the ids are the name column

    def fitted(always: list[int]) -> list[str]:
        scores = [cells_width(d) for d in prog.dimensions]  # numbers never wrap: left out
        return prog.dimensions[: fitting(always, scores, ids, width, "evaluation")]

    dims = fitted(fixed)
    if named and fitted([*fixed, 12]) != dims:
        named = False  # the scores first: names are in `lasagna results list`
    dims = dims or prog.dimensions[:1]
    console.print(f"group {prog.group}: average of each score, oldest first", highlight=False)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("evaluation", no_wrap=True)
    if named:
        table.add_column("name", overflow="fold", max_width=24)
    table.add_column("created (UTC)", no_wrap=True)
    table.add_column("trials", justify="right", no_wrap=True)
    table.add_column("errors", justify="right", no_wrap=True)
    for dim in dims:
        table.add_column(dim, justify="right", no_wrap=True)
    for row in prog.rows:
        add_text_row(
            table,
            row["evaluation_id"],
            *([str(row["name"] or "")] if named else []),
            str(row["created_at"] or "")[:19].replace("T", " "),
            str(row["n_trials"]),
            str(row["n_errors"]),
            *(_avg(row["averages"].get(d)) for d in dims),
        )
    console.print(table, width=width)
    left_out = [d for d in prog.dimensions if d not in dims]
    if left_out:
        console.print(
            f"not shown (no room): {', '.join(left_out)}; all of them: lasagna results sql "
            f'"SELECT evaluation_id, averages FROM evaluations WHERE group_name = '
            f"'{prog.group}' ORDER BY created_at\"",
            highlight=False,
            width=width,
        )


def judge_flags(run: Run) -> list[dict[str, Any]]:
    """The judge flags of an evaluation's trial: an LLM judge whose rows were not judged."""
    return [w for t in run.trials for w in warnings_of(t.extra)]


def render_evaluation(run: Run, console: Console | None = None) -> None:
    """`lasagna results show` of an evaluate() run: its group, counts and averages."""
    console = console or Console()
    info = evaluation_info(run)
    console.print(
        f"evaluation {info.get('name')} · group {info.get('group_name') or '-'} · executor "
        f"{info.get('executor')} · {info.get('n_datapoints')} datapoints, "
        f"{info.get('n_trials')} trials, {info.get('n_errors')} failed"
    )
    table = Table()
    table.add_column("score")
    table.add_column("average", justify="right")
    flags = judge_flags(run)
    for dim, value in (info.get("averages") or {}).items():
        add_text_row(table, dim, _avg(value) + mark(about_metric(flags, dim, "sdk")))
    console.print(table)
    for line in info.get("warnings") or []:  # an LLM judge that did not judge its rows
        console.print(f"warning: {line}", highlight=False, markup=False)
    console.print(
        'trials: lasagna results sql "SELECT * FROM evaluation_trials WHERE evaluation_id = '
        f"'{run.run_id}'\"",
        soft_wrap=True,
    )


@dataclass(frozen=True)
class EvalComparison:
    group: str
    evaluation_a: str
    evaluation_b: str
    tests: dict[str, PairedTest]  # dimension -> paired test over matched trials
    unmatched: int  # tasks of one side with no partner
    warnings: tuple[str, ...] = ()  # "A: <judge flag>": a side whose LLM judge did not judge


def trial_scores(run: Run) -> dict[tuple[str, int], dict[str, float | None]]:
    """(task id, trial index) -> the trial's scores."""
    from lasagna.results import evaluation_views

    found = evaluation_views.table(run, ev.TRIALS)
    if found is None:
        raise UserError(Problem("the run has no evaluation_trials table", file=run.path))
    rows = found.select(["task_id", "trial_index", "scores"])
    return {(r["task_id"], r["trial_index"]): dict(r["scores"] or []) for r in rows.to_pylist()}


def _task_means(run: Run) -> dict[str, dict[str, float | None]]:
    """task id -> each score dimension's mean over the task's trials (None: no trial
    scored it). A task is the unit compared: its repeats are one mean, not n pairs."""
    values: dict[str, dict[str, list[float]]] = {}
    for (task, _), scores in trial_scores(run).items():
        for dim, v in scores.items():
            kept = values.setdefault(task, {}).setdefault(dim, [])
            if v is not None and not math.isnan(v):
                kept.append(v)
    return {
        t: {d: (sum(v) / len(v) if v else None) for d, v in dims.items()}
        for t, dims in values.items()
    }


def _benchmark_kind(run: Run) -> str:
    tracks = sorted({t.track for t in run.trials})
    return f"a benchmark ({', '.join(tracks)}) run" if tracks else "a benchmark run"


def _not_comparable(run_a: Run, run_b: Run) -> Problem | None:
    """Why two runs are not two evaluate() runs of one group (each case its own fix), or
    None when they are."""
    lists_runs = "lasagna results progression {} lists its runs"
    for run, other in ((run_a, run_b), (run_b, run_a)):
        if not is_evaluation(run):
            group = evaluation_info(other).get("group_name")
            runs_of = lists_runs.format(repr(group)) if group else f"{other.run_id} has none"
            return Problem(
                f"{run.run_id} is {_benchmark_kind(run)}; an evaluate() run compares only "
                f"with another evaluate() run of its group ({runs_of})",
                field="RUN_B" if run is run_b else "RUN",
                fix=f"compare {other.run_id} with another evaluation of its group, and "
                f"{run.run_id} with a benchmark run (lasagna results leaderboard lists them)",
            )
    ga, gb = evaluation_info(run_a).get("group_name"), evaluation_info(run_b).get("group_name")
    if ga is not None and ga == gb:
        return None
    name_it = "give the evaluate() calls the same group_name (evaluate(..., group_name='NAME'), "
    name_it += "or lasagna eval FILE.py --group NAME) and run them again"
    if ga is None and gb is None:
        return Problem(
            f"evaluations {run_a.run_id} and {run_b.run_id} have no group_name; side-by-side "
            "comparison pairs the trials of two evaluations of one group",
            field="group_name",
            fix=name_it,
        )
    if ga is None or gb is None:
        named, group, bare = (run_b, gb, run_a) if ga is None else (run_a, ga, run_b)
        return Problem(
            f"evaluation {bare.run_id} has no group_name and {named.run_id} is in group "
            f"{group!r}; side-by-side comparison is only for evaluations of one group",
            field="group_name",
            fix=f"compare {named.run_id} with another run of its group ("
            + lists_runs.format(repr(group))
            + f"), or run {bare.run_id}'s evaluate() call again with group_name={group!r}",
        )
    return Problem(
        f"evaluation {run_a.run_id} is in group {ga!r} and {run_b.run_id} in group {gb!r}; "
        "side-by-side comparison is only for evaluations of one group",
        field="group_name",
        fix="compare two runs of the same group (lasagna results progression GROUP lists "
        "them), or give both evaluate() calls the same group_name",
    )


def compare_evaluations(run_a: Run, run_b: Run) -> EvalComparison:
    """Refuse runs that are not two evaluations of one group; else paired tests per score
    dimension."""
    problem = _not_comparable(run_a, run_b)
    if problem is not None:
        raise UserError(problem, title="not comparable")
    ga = evaluation_info(run_a).get("group_name")
    a, b = _task_means(run_a), _task_means(run_b)
    keys = sorted(set(a) & set(b))
    dims = list(dict.fromkeys(d for k in keys for d in (*a[k], *b[k])))
    tests = {}
    for dim in dims:

        def col(side: dict, d: str = dim) -> np.ndarray:
            return np.array([np.nan if side[k].get(d) is None else side[k][d] for k in keys], float)

        tests[dim] = paired(col(a), col(b))
    unmatched = len(set(a) ^ set(b))
    said = tuple(
        f"{side}: {line}"
        for side, run in (("A", run_a), ("B", run_b))
        for line in evaluation_info(run).get("warnings") or []
    )
    return EvalComparison(ga, run_a.run_id, run_b.run_id, tests, unmatched, said)


def compare_refs(ref_a: str, ref_b: str, output_dir: Output = DEFAULT_OUTPUT) -> EvalComparison:
    return compare_evaluations(open_run(ref_a, output_dir), open_run(ref_b, output_dir))


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def render_eval_comparison(cmp: EvalComparison, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(
        title=f"{cmp.evaluation_a} (A) vs {cmp.evaluation_b} (B) · group {cmp.group}",
        caption="tasks paired by task id (a task's score: the mean over its trials); p: "
        "paired t-test / paired randomization test",
    )
    for col in ("score", "A", "B", "B - A", "paired n", "p (t)", "p (perm)"):
        table.add_column(col, justify="left" if col == "score" else "right")
    for dim, t in cmp.tests.items():
        diff = "-" if math.isnan(t.diff) else f"{t.diff:+.4f}"
        add_text_row(
            table,
            dim,
            _avg(t.mean_a),
            _avg(t.mean_b),
            diff,
            str(t.n),
            _p(t.p_ttest),
            _p(t.p_permutation),
        )
    console.print(table)
    if cmp.unmatched:
        console.print(f"note: {cmp.unmatched} task(s) have no partner in the other run")
    for line in cmp.warnings:
        console.print(f"warning: {line}", highlight=False, markup=False)
