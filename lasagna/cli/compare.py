"""`lasagna results compare`: the systems of one run pairwise, or two runs of one group,
as tables (lasagna.results.compare_render) or records (lasagna.results.compare_data)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lasagna.results.runs import Run


def cmd_results_compare(args: argparse.Namespace) -> int:
    from lasagna.errors import Problem, UserError
    from lasagna.results import compare, open_run, render_comparison
    from lasagna.results.groups import compare_evaluations, render_eval_comparison
    from lasagna.results.runs import is_evaluation

    if args.questions < 0:
        raise UserError(
            Problem(
                f"--questions {args.questions}: a number of questions is 0 or more",
                field="--questions",
                fix="--questions 5 lists the 5 largest gains and losses of each pair",
            )
        )
    run_a = open_run(args.run_a, args.output)
    if args.run_b is None:
        from lasagna.results.compare_render import render_within
        from lasagna.results.within import compare_within

        if is_evaluation(run_a):
            raise UserError(
                Problem(
                    f"run {run_a.run_id} is an evaluate() run: it compares with another "
                    "evaluation of its group",
                    field="RUN_B",
                    fix="lasagna results compare RUN_A RUN_B (lasagna results progression "
                    "GROUP lists the group's runs)",
                )
            )
        within = compare_within(
            run_a,
            args.metric,
            args.all_metrics,
            args.systems,
            args.baseline,
            args.correction,
            args.by,
            args.questions,
        )
        if args.format != "table":
            from lasagna.results.compare_data import within_records, write_records

            write_records(within_records(within), args.format, sys.stdout)
            return 0
        render_within(within)
        return 0
    if args.systems or args.baseline:
        raise UserError(
            Problem(
                "--systems and --baseline pick systems of one run",
                field="--systems / --baseline",
                fix="give one run (lasagna results compare RUN --systems A B), or drop them",
            )
        )
    run_b = open_run(args.run_b, args.output)
    if run_b.run_id == run_a.run_id:
        raise UserError(
            Problem(f"RUN and RUN_B are both run {run_a.run_id}", field="RUN_B", fix=_same(run_a))
        )
    if is_evaluation(run_a) or is_evaluation(run_b):
        if args.by:
            raise UserError(
                Problem(
                    "--by slices benchmark runs; two evaluate() runs compare over every trial",
                    field="--by",
                    fix=f"lasagna results show {run_a.run_id} --by {args.by} (each run by "
                    "slice), or drop --by",
                )
            )
        if args.questions:
            raise UserError(
                Problem(
                    "--questions lists the questions of benchmark runs; evaluate() runs "
                    "keep a trace per trial instead",
                    field="--questions",
                    fix="drop --questions, and read the traces with lasagna results sql or "
                    "lasagna view",
                )
            )
        if args.format != "table":
            raise UserError(
                Problem(
                    "--format csv / json compares benchmark runs; evaluate() runs are read "
                    "with SQL",
                    field="--format",
                    fix='lasagna results sql --format csv "SELECT * FROM evaluation_trials '
                    "WHERE evaluation_id IN ('RUN_A', 'RUN_B')\"",
                )
            )
        render_eval_comparison(compare_evaluations(run_a, run_b))
        return 0
    if args.metric and len(args.metric) > 1:
        raise UserError(
            Problem(
                "two runs are compared on one --metric (or the main ones, or --all-metrics)",
                field="--metric",
                fix="give --metric once",
            )
        )
    metric = args.metric[0] if args.metric else None
    comparison = compare(
        run_a,
        run_b,
        args.output,
        metric,
        args.all_metrics,
        args.correction,
        by=args.by,
        questions=args.questions,
    )
    if args.format != "table":
        from lasagna.results.compare_data import runs_records, write_records

        write_records(runs_records(comparison), args.format, sys.stdout)
        return 0
    render_comparison(comparison)
    return 0


def _same(run: Run) -> str:
    """The fix for a run named twice: a command that works for its kind of run."""
    from lasagna.results.runs import evaluation_info, is_evaluation

    if not is_evaluation(run):
        return (
            "name two runs, or one run to compare its systems (lasagna results compare "
            f"{run.run_id})"
        )
    group = evaluation_info(run).get("group_name")
    if group is None:
        return (
            f"name two evaluations of one group; {run.run_id} has no group_name "
            "(evaluate(..., group_name='NAME') gives one)"
        )
    return (
        f"name another evaluation of group {group!r} (lasagna results progression "
        f"{group!r} lists them): lasagna results compare {run.run_id} OTHER_ID"
    )
