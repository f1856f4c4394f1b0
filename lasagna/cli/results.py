"""`lasagna results ...`: list, show, leaderboard, progression, compare, export, sql.

These read run folders only: they import no Ray, torch or model code."""

from __future__ import annotations

import argparse
import sys

from lasagna.cli.parsers import command_group


def cmd_results_list(args: argparse.Namespace) -> int:
    from lasagna.results import list_runs, render_runs

    render_runs(list_runs(args.output))
    return 0


def cmd_results_show(args: argparse.Namespace) -> int:
    from lasagna.results import open_run, render_run

    render_run(open_run(args.run, args.output))
    return 0


def cmd_results_leaderboard(args: argparse.Namespace) -> int:
    from lasagna.results.leaderboard import build_leaderboard, render_leaderboard, unranked_groups
    from lasagna.results.store import load_runs

    runs = load_runs(args.output)
    groups = build_leaderboard(runs, args.metric)
    left_out = unranked_groups(runs, args.metric) if args.metric else []
    notes = [f"no trial has {args.metric!r}, so this group is not shown: {g}" for g in left_out]
    render_leaderboard(groups, notes=notes)
    return 0


def cmd_results_compare(args: argparse.Namespace) -> int:
    from lasagna.results import compare, open_run, render_comparison
    from lasagna.results.groups import compare_evaluations, is_evaluation, render_eval_comparison

    run_a, run_b = open_run(args.run_a, args.output), open_run(args.run_b, args.output)
    if is_evaluation(run_a) or is_evaluation(run_b):
        render_eval_comparison(compare_evaluations(run_a, run_b))
        return 0
    render_comparison(compare(run_a, run_b, args.output, args.metric, args.all_metrics))
    return 0


def cmd_results_progression(args: argparse.Namespace) -> int:
    from lasagna.results.groups import progression, render_progression

    render_progression(progression(args.group, args.output))
    return 0


def cmd_results_export(args: argparse.Namespace) -> int:
    from lasagna.results import export_trec

    target = sys.stdout if args.out == "-" else args.out
    export_trec(
        args.run,
        target,
        tag=args.tag,
        trial=args.trial,
        output_dir=args.output,
        qrels=not args.no_qrels,
        say=lambda line: print(line, file=sys.stderr),
    )
    return 0


def cmd_results_sql(args: argparse.Namespace) -> int:
    from lasagna.results import render_table, sql

    table = sql(args.output, args.query)
    if args.format == "table":
        render_table(table, max_rows=args.max_rows)
    else:
        from lasagna.results.sql import write_table

        write_table(table, args.format, sys.stdout)
    return 0


def register(groups) -> None:
    rsub = command_group(
        groups,
        "results",
        "list, show, rank, compare, export and query runs",
        "Read the run folders under an output directory.",
    )

    def results_parser(name: str, help_: str):
        rp = rsub.add_parser(name, help=help_, description=help_[0].upper() + help_[1:] + ".")
        rp.add_argument(
            "--output",
            default="results",
            help="output folder or URI holding the runs (default: ./results)",
        )
        return rp

    rp = results_parser("list", "list the runs, most recent first")
    rp.set_defaults(handler=cmd_results_list)
    rp = results_parser("show", "show one run: its trials and metrics")
    rp.add_argument("run", help="a run id (or unique prefix, or 'latest') or a run folder")
    rp.set_defaults(handler=cmd_results_show)
    rp = results_parser("leaderboard", "rank systems within each comparability group")
    rp.add_argument("--metric", help="metric to rank by (default: ndcg@10 / f1)")
    rp.set_defaults(handler=cmd_results_leaderboard)
    rp = results_parser("progression", "averages of each score per evaluation of a group")
    rp.add_argument("group", help="the group_name given to evaluate()")
    rp.set_defaults(handler=cmd_results_progression)
    rp = results_parser("compare", "compare two runs of one group, with paired tests")
    rp.add_argument("run_a")
    rp.add_argument("run_b")
    metric = rp.add_mutually_exclusive_group()
    metric.add_argument("--metric", help="only this metric")
    metric.add_argument(
        "--all-metrics",
        action="store_true",
        help="every shared metric (default: the main ones: nDCG@10, recall@10/100, MRR@10; "
        "EM, F1, HasAns F1, NoAns EM)",
    )
    rp.set_defaults(handler=cmd_results_compare)
    rp = results_parser("export", "export a run's ranked lists as TREC run files, with their qrels")
    rp.add_argument("run", help="a run id or a run folder")
    rp.add_argument("--format", choices=["trec"], default="trec")
    rp.add_argument(
        "--out",
        default="-",
        help="a file (one trial; its qrels go beside it as .qrels), a folder (several trials: "
        "<benchmark>__<system>.trec and <benchmark>.qrels), or - for stdout (default)",
    )
    rp.add_argument("--no-qrels", action="store_true", help="write the run files only")
    rp.add_argument("--trial", help="one trial: key, key prefix or system name")
    rp.add_argument("--tag", help="run tag column (default: the system name)")
    rp.set_defaults(handler=cmd_results_export)
    rp = results_parser("sql", "query runs, trials and rows with SQL (duckdb)")
    rp.add_argument("query", help='e.g. SELECT system, "ndcg@10" FROM trials')
    rp.add_argument("--max-rows", type=int, default=50, help="rows shown by --format table")
    rp.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="table (default), csv, or json (an array of row objects; every row)",
    )
    rp.set_defaults(handler=cmd_results_sql)
