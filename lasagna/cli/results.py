"""`lasagna results ...`: list, show, leaderboard, progression, compare, export, sql.

These read run folders only: they import no Ray, torch or model code."""

from __future__ import annotations

import argparse
import sys

from lasagna.cli.compare import cmd_results_compare
from lasagna.cli.parsers import command_group
from lasagna.cli.plan_args import positive_int
from lasagna.cli.query import cmd_results_export, cmd_results_sql
from lasagna.metrics.corrections import CORRECTIONS, DEFAULT_CORRECTION


def cmd_results_list(args: argparse.Namespace) -> int:
    from lasagna.results import list_runs, render_runs
    from lasagna.results.status import unfinished_lines

    render_runs(list_runs(args.output), where=str(args.output))
    for line in unfinished_lines(args.output):  # runs that wrote no run folder (yet)
        print(line)
    return 0


def cmd_results_show(args: argparse.Namespace) -> int:
    from lasagna.errors import Problem, UserError
    from lasagna.results import open_run, render_run

    run = open_run(args.run, args.output)
    if args.by:
        from lasagna.results.slice_table import render_slices, slice_groups, slice_records

        groups = slice_groups(run, args.by, args.metric)
        if args.format == "table":
            render_slices(groups)
        elif args.format == "markdown":
            from lasagna.results.markdown import slices_markdown

            sys.stdout.write(slices_markdown(groups))
        else:
            from lasagna.results.compare_data import write_records

            write_records(slice_records(groups), args.format, sys.stdout)
        return 0
    if args.metric or args.format != "table":
        raise UserError(
            Problem(
                "--metric and --format go with --by",
                field="--metric / --format",
                fix="add --by KEY, or drop them (lasagna results sql writes any table as "
                "csv or json)",
            )
        )
    render_run(run)
    return 0


def cmd_results_leaderboard(args: argparse.Namespace) -> int:
    from lasagna.errors import UserError
    from lasagna.results.leaderboard import (
        build_leaderboard,
        group_keys,
        pick_groups,
        unranked_groups,
    )
    from lasagna.results.leaderboard_render import (
        evaluation_group_refusal,
        evaluations_hint,
        render_leaderboard,
    )
    from lasagna.results.store import load_runs

    runs = load_runs(args.output)
    only = None
    if args.group:
        try:
            keys = pick_groups(group_keys(runs), args.group, lambda g: g[0], lambda g: g[1])
        except UserError as err:
            raise evaluation_group_refusal(runs, args.group) or err from None
        only = {key for key, _ in keys}
    if args.across:  # the groups' means side by side: no paired tests needed
        from lasagna.results.across import across, render_across, write_across

        tables = across(build_leaderboard(runs, args.metric, False, args.correction, only), runs)
        if args.format == "markdown":
            from lasagna.results.markdown import across_markdown

            sys.stdout.write(across_markdown(tables) if tables else "")
        elif args.format != "table":
            write_across(tables, args.format, sys.stdout)
        elif tables:
            render_across(tables)
        else:
            print(
                "no track has two benchmark groups to put side by side: `lasagna results "
                "leaderboard` ranks each group"
            )
        return 0
    groups = build_leaderboard(runs, args.metric, not args.no_tests, args.correction, only)
    if args.format == "markdown":
        from lasagna.results.markdown import leaderboard_markdown

        sys.stdout.write(leaderboard_markdown(groups) if groups else "")
        return 0
    if args.format != "table":
        from lasagna.results.leaderboard_data import write_leaderboard

        write_leaderboard(groups, args.format, sys.stdout)
        return 0
    left_out = unranked_groups(runs, args.metric, only) if args.metric else []
    notes = [f"no trial has {args.metric!r}, so this group is not shown: {g}" for g in left_out]
    left = None if args.group or not groups else evaluations_hint(runs, str(args.output), True)
    notes += [left] if left else []
    empty = None if groups else evaluations_hint(runs, str(args.output))
    render_leaderboard(groups, notes=notes, where=str(args.output), empty=empty)
    return 0


def cmd_results_progression(args: argparse.Namespace) -> int:
    from lasagna.results.groups import progression, render_progression

    render_progression(progression(args.group, args.output))
    return 0


def add_format(parser: argparse.ArgumentParser, others: str, markdown: bool = False) -> None:
    """`--format table|csv|json`: the table for people (the default), `others` for programs;
    `markdown`: also the tables as Markdown (lasagna.results.markdown)."""
    parser.add_argument(
        "--format",
        choices=["table", "csv", "json", *(["markdown"] if markdown else [])],
        default="table",
        help=f"table (default), {others}",
    )


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
    rp.add_argument(
        "--by",
        metavar="KEY",
        help="each system's score on each slice of the questions by this metadata key "
        "(e.g. type; a.b reads nested objects; KEY:N cuts its numbers into N bins)",
    )
    rp.add_argument(
        "--metric",
        action="append",
        help="with --by: a metric to show (repeatable; default: the group's main one)",
    )
    add_format(
        rp,
        "with --by: csv or json, a record per group, metric, slice and system, or markdown "
        "(the tables, for a pull request or a README)",
        markdown=True,
    )
    rp.set_defaults(handler=cmd_results_show)
    rp = results_parser("leaderboard", "rank systems within each comparability group")
    rp.add_argument("--metric", help="metric to rank by (default: ndcg@10 / f1)")
    rp.add_argument(
        "--group",
        help="only this group: a comparability key (or its start) or a benchmark name",
    )
    rp.add_argument(
        "--across",
        action="store_true",
        help="one table per track: a column per benchmark group, a line per system, and "
        "the mean over the benchmarks (each counted once)",
    )
    rp.add_argument(
        "--no-tests",
        action="store_true",
        help="read the manifests only: no paired tests of the best system against the "
        "others (the ≈ marks), and 95%% intervals over trials, not over questions",
    )
    rp.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default=DEFAULT_CORRECTION,
        help="multiple-comparison correction of the tests against the best (default: holm)",
    )
    add_format(
        rp,
        "csv (a row per system and group), json (the groups with their lines, "
        "intervals, tests and captions), or markdown (the tables, for a pull request or a "
        "README)",
        markdown=True,
    )
    rp.set_defaults(handler=cmd_results_leaderboard)
    rp = results_parser("progression", "averages of each score per evaluation of a group")
    rp.add_argument("group", help="the group_name given to evaluate()")
    rp.set_defaults(handler=cmd_results_progression)
    rp = results_parser(
        "compare",
        "compare the systems of one run pairwise, or two runs of one group, with paired tests",
    )
    rp.add_argument("run_a", metavar="RUN", help="a run id (or unique prefix, or 'latest')")
    rp.add_argument(
        "run_b",
        metavar="RUN_B",
        nargs="?",
        help="a second run: the same systems compared across the two runs",
    )
    metric = rp.add_mutually_exclusive_group()
    metric.add_argument(
        "--metric",
        action="append",
        help="a metric to compare on (repeatable; default: the group's main metric, e.g. "
        "ndcg@10 or f1; across two runs: the main ones)",
    )
    metric.add_argument("--all-metrics", action="store_true", help="every shared metric")
    rp.add_argument(
        "--systems",
        nargs="+",
        metavar="SYSTEM",
        help="one run: only these systems (label, or the start of the system id)",
    )
    rp.add_argument("--baseline", metavar="SYSTEM", help="one run: each system against this one")
    rp.add_argument(
        "--by",
        metavar="KEY",
        help="compare within each slice of the questions by this metadata key (e.g. type; "
        "a.b reads nested objects; KEY:N: N bins of its numbers), every slice's tests "
        "corrected together",
    )
    rp.add_argument(
        "--questions",
        type=int,
        default=0,
        metavar="N",
        help="also: per pair, the questions B scores higher, lower and the same as A, and "
        "the N it gains and loses most on, with their text (json: in each record)",
    )
    rp.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default=DEFAULT_CORRECTION,
        help="multiple-comparison correction of the p-values of each group and metric "
        "(default: holm)",
    )
    add_format(
        rp,
        "csv or json: a record per pair and metric (means, B - A, d, paired n, "
        "raw and adjusted p-values)",
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
    rp.add_argument("--tag", help="run tag column (default: the system name; whitespace becomes _)")
    rp.set_defaults(handler=cmd_results_export)
    rp = results_parser("sql", "query runs, trials and rows with SQL (duckdb)")
    rp.add_argument("query", help='e.g. SELECT system, "ndcg@10" FROM trials')
    rp.add_argument(
        "--max-rows",
        type=positive_int("--max-rows"),
        default=50,
        help="rows shown by --format table",
    )
    add_format(rp, "csv, or json (an array of row objects; every row)")
    rp.set_defaults(handler=cmd_results_sql)
