"""`lasagna benchmark calibrate`: agreement of a judge with human labels; its plumbing reads
the labels from the file and the judge rows from a run (a finished one, or a judge run made
now into the normal run folders)."""

from __future__ import annotations

import argparse
import difflib
import json
from pathlib import Path
from typing import Any

from lasagna.errors import Problem, UserError


def cmd_calibrate(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lasagna.judges.calibrate import agreement_of, label_kind, render_agreement
    from lasagna.sweep.judge_plan import judge_systems

    (judge,) = judge_systems([args.judge], args.judge_model, args.judge_backend, args.param)
    cases, labels = load_labels(args.path, args.label_column)
    check_positive(args.positive, labels, args.label_column)
    label_kind(list(labels.values()), args.positive)  # labels it cannot read: before judging
    output = args.output or "results"
    if args.run:
        rows = judged_rows_from_run(args.run, output, judge.benchmark, cases.revision)
    else:
        rows, _ = judge_now(args.path, [judge], args.label_column, output, Console(stderr=True))
    result = agreement_of(judge.benchmark, args.label_column, labels, rows, args.positive)
    render_agreement(result, Console())
    out = args.out or f"calibration-{judge.benchmark}.json"
    print(f"wrote {write_json(result, out)}")
    return 0


def register(bsub) -> None:
    p = bsub.add_parser(
        "calibrate",
        help="agreement of a judge with human labels (accuracy, kappa, Spearman, ...)",
        description="Judge FILE (or read --run) and compare the judge with the human labels in "
        "--label-column: accuracy, balanced accuracy, Cohen's kappa and the confusion matrix for "
        "binary labels, Spearman and Kendall for graded ones, each with a 95% bootstrap "
        "interval. Also written as JSON.",
    )
    p.add_argument("path", help="a judge file with a column of human labels")
    p.add_argument("--judge", required=True, metavar="BENCHMARK", help="judge benchmark id")
    p.add_argument(
        "--label-column",
        required=True,
        help="the column holding the human labels, or a metadata key (a file that runs with "
        "`benchmark run` too)",
    )
    p.add_argument(
        "--positive",
        help="label value meaning positive (hallucination: hallucinated; others: acceptable); "
        "default: yes/true/1 for binary labels",
    )
    p.add_argument("--run", help="read this finished run (id, prefix, latest or folder)")
    p.add_argument("--judge-model", metavar="MODEL", help="judge model (default: packaged)")
    p.add_argument("--judge-backend", choices=["vllm", "transformers", "openai", "anthropic"])
    p.add_argument(
        "--param", action="append", metavar="KEY=VALUE", help="judge parameter (see run --help)"
    )
    p.add_argument("--output", help="results folder (default: ./results)")
    p.add_argument("--out", help="JSON file (default: calibration-BENCHMARK.json)")
    p.set_defaults(handler=cmd_calibrate)


def check_positive(positive: str | None, labels: dict[str, Any], column: str) -> None:
    """A --positive value no label has would make every row negative: agreement 1.0 with a
    judge that never flags, which says nothing."""
    if positive is None:
        return
    values = sorted({str(v).strip().lower() for v in labels.values()})
    if positive.strip().lower() not in values:
        raise UserError(
            Problem(
                f"no row's '{column}' label is {positive!r}",
                field="--positive",
                fix=f"name one of the labels: {', '.join(values[:10])}",
            )
        )


def load_labels(path: str, label_column: str) -> tuple[Any, dict[str, Any]]:
    """The cases (label column allowed) and id -> label: the column's, else the row's
    metadata key of that name (`metadata.` before it optional), so a file whose labels sit
    in its metadata runs with `benchmark run` too; rows without a label are refused."""
    from lasagna.data.judge_cases import load_judge_cases
    from lasagna.data.select import metadata_value

    cases = load_judge_cases(path, label_columns=(label_column,))
    key = label_column.removeprefix("metadata.")
    labels = {
        c["id"]: c["labels"].get(label_column, metadata_value(c.get("metadata") or {}, key))
        for c in cases.cases
    }
    missing = [i for i, v in labels.items() if v is None or str(v).strip() == ""]
    if len(missing) == len(labels):
        named = {k for c in cases.cases for k in (*c["labels"], *(c.get("metadata") or {}))}
        close = difflib.get_close_matches(key, sorted(named), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise UserError(
            Problem(
                f"no row has the label column '{label_column}'",
                file=path,
                field=label_column,
                fix=f"{hint}name the column (or metadata key) that holds the human labels "
                "with --label-column",
            )
        )
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise UserError(
            Problem(
                f"{len(missing)} row(s) have no '{label_column}' label: {shown}",
                file=path,
                field=label_column,
                fix="label every row, or drop the unlabelled ones",
            )
        )
    return cases, labels


def judged_rows_from_run(run_ref: str, output: str, benchmark: str, revision: str) -> list[dict]:
    """The per-row results of the run's judge trial for this benchmark on this file."""
    from lasagna.results.store import open_run

    run = open_run(run_ref, output)
    for trial in run.trials:
        if (
            trial.track == "judge"
            and trial.config.get("benchmark") == benchmark
            and trial.benchmark.get("revision") == revision
        ):
            return run.rows(trial.key).to_pylist()
    raise UserError(
        Problem(
            f"run {run.run_id} has no {benchmark} judge trial on this file's revision "
            f"({revision[:12]})",
            field="--run",
            fix="leave --run out to judge now, or name the run calibrate made before",
        )
    )


def judge_now(
    path: str, judges: list, label_column: str, output: str | None, console
) -> tuple[list[dict], str]:
    """Run the judge on the file (a normal run folder) and return its per-row results."""
    from lasagna.engine.driver import run_plan
    from lasagna.sweep import build_plan, sweep_for_path

    sweep, base = sweep_for_path(path, None, output=output)
    plan = build_plan(sweep.model_copy(update={"judges": judges}), base, (label_column,))
    outcome = run_plan(plan, resume=True, console=console, source=path, keep_going=False)
    return outcome.trials[0].rows.to_pylist(), outcome.run_id


def write_json(result: Any, out: str) -> str:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
    return str(path)
