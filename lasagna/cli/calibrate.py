"""`lasagna benchmark calibrate`: agreement of a judge with human labels."""

from __future__ import annotations

import argparse


def cmd_calibrate(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lasagna.judges.calibrate import agreement_of, render_agreement
    from lasagna.judges.calibrate_run import (
        judge_now,
        judged_rows_from_run,
        load_labels,
        write_json,
    )
    from lasagna.sweep.judge_plan import judge_systems

    (judge,) = judge_systems([args.judge], args.judge_model, args.judge_backend, args.param)
    cases, labels = load_labels(args.path, args.label_column)
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
    p.add_argument("--label-column", required=True, help="the column holding the human labels")
    p.add_argument(
        "--positive",
        help="label value meaning positive (hallucination: hallucinated; others: acceptable); "
        "default: yes/true/1 for binary labels",
    )
    p.add_argument("--run", help="read this finished run (id, prefix, latest or folder)")
    p.add_argument("--judge-model", metavar="MODEL", help="judge model (default: packaged)")
    p.add_argument("--judge-backend", choices=["vllm", "transformers", "openai", "anthropic"])
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="judge parameter")
    p.add_argument("--output", help="results folder (default: ./results)")
    p.add_argument("--out", help="JSON file (default: calibration-BENCHMARK.json)")
    p.set_defaults(handler=cmd_calibrate)
