"""`lasagna results export` and `lasagna results sql`: a run's ranked lists as TREC files,
and any table of the results root through SQL (the parsers: lasagna.cli.results)."""

from __future__ import annotations

import argparse
import sys


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
    from lasagna.results.sql_empty import no_evaluations_note, no_runs_error
    from lasagna.results.store import load_runs

    runs = load_runs(args.output)
    if not runs:  # a wrong --output, most often: an empty table would look like no match
        raise no_runs_error(args.output)

    def note(line: str) -> None:
        print(f"note: {line}", file=sys.stderr)

    table = sql(args.output, args.query, warn=note, runs=runs)
    empty = no_evaluations_note(args.output, runs, args.query) if not table.num_rows else None
    if empty:
        note(empty)
    if args.format == "table":
        render_table(table, max_rows=args.max_rows)
    else:
        from lasagna.results.sql_output import write_table

        write_table(table, args.format, sys.stdout)
    return 0
