"""`lasagna benchmark ...`: validate-data, run, plan (calibrate and synthesize have their
own modules)."""

from __future__ import annotations

import argparse
import sys

from lasagna.cli import calibrate, synthesize
from lasagna.cli.parsers import command_group
from lasagna.cli.plan_args import cluster_with_max_nodes, non_negative, plan_from_args, positive_int
from lasagna.engine.driver_processes import TRIALS_PER_DRIVER, DriverProcessError
from lasagna.engine.watchdog import QUIET_PERIODS, STALL_S
from lasagna.errors import Problem, UserError

CORPUS_HELP = (
    "search this corpus instead of the rows' pooled contexts: a corpus.jsonl or .parquet of "
    "{_id, title, text}, a BEIR folder, or a folder of md/txt/PDF/DOCX/HTML documents"
)


def cmd_validate_data(args: argparse.Namespace) -> int:
    from lasagna.data import load_benchmark
    from lasagna.data.judge_cases import is_judge_file
    from lasagna.data.report import print_report

    if str(args.path).lower().endswith((".yaml", ".yml")):
        raise UserError(
            Problem(
                "a sweep file, not a data file",
                file=str(args.path),
                fix=f"lasagna benchmark plan {args.path} checks a sweep and every data file "
                "it names; validate-data reads one data file (.jsonl, .json, .csv, .parquet or "
                "a BEIR folder)",
            )
        )
    if args.split is None and args.corpus is None and is_judge_file(args.path):
        from lasagna.data.judge_cases import load_judge_cases
        from lasagna.judges.report import print_judge_report

        print_judge_report(load_judge_cases(args.path, name=args.name))
        return 0
    benchmark = load_benchmark(args.path, name=args.name, split=args.split, corpus=args.corpus)
    print_report(benchmark)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from lasagna.engine.ray_session import cluster_capacity
    from lasagna.stages.capacity import local_capacity

    # bad input is refused before Ray or a model is imported; on a cluster, the placement
    # is checked against ray.cluster_resources() read by a short connection first, so a
    # refusal names the sweep's line and nothing (not even the run's status) is written
    address = cluster_with_max_nodes(args)
    capacity = cluster_capacity(address) if address else local_capacity()
    plan = plan_from_args(args, capacity)
    from rich.console import Console
    from rich.markup import escape

    from lasagna.engine.driver import run_plan
    from lasagna.engine.summary import render_summary

    console = Console(stderr=True)
    if not console.is_terminal:
        console.width = 100  # files and pipes: lines as a 100-column terminal shows them
    from lasagna.models.install import startup_problems

    for line in startup_problems():
        console.print(f"[yellow]warning:[/] {escape(line)}", soft_wrap=True)
    try:
        outcome = run_plan(
            plan,
            resume=args.resume,
            address=args.address,
            console=console,
            profile=args.profile,
            source=args.target,
            trials_per_driver=args.trials_per_driver,
            stall_s=args.stall_timeout,
        )
    except DriverProcessError as err:  # killed, out of memory: its finished trials are kept
        console.print(f"[red]error:[/] {escape(str(err))}", soft_wrap=True)
        return 1
    except KeyboardInterrupt:  # ^C: finished trials are checkpointed, nothing else written
        from lasagna.cli import INTERRUPTED
        from lasagna.cli.interrupted import interrupted_message
        from lasagna.common import interrupts

        interrupts.acknowledge()
        argv = getattr(args, "argv", None) or sys.argv[1:]
        console.print(interrupted_message(plan, argv), soft_wrap=True, highlight=False)
        return INTERRUPTED
    if outcome.trials:
        render_summary(outcome, Console())
    if outcome.failed:
        for f in outcome.failed:  # the reason as written: no markup, one line
            said = f"[red]failed:[/] {escape(f['system'] + ' on ' + f['benchmark'])}: "
            console.print(said + escape(f["reason"]), soft_wrap=True, highlight=False)
        console.print(
            f"{len(outcome.failed)} trial(s) failed. Fix: remove the cause and run the same "
            "command with --resume: finished trials are restored, only the failed ones run:\n"
            f"  {escape(resume_command(getattr(args, 'argv', None)))}",
            soft_wrap=True,
            highlight=False,
        )
        return 1
    return 0


def resume_command(argv: list[str] | None = None) -> str:
    """The command that was run (this process's, unless `argv`), with `--resume`."""
    from lasagna.cli.interrupted import resume_command as with_resume

    return with_resume(sys.argv[1:] if argv is None else argv)


def cmd_plan(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lasagna.engine.driver import restore
    from lasagna.engine.preflight import check_writable_output
    from lasagna.engine.ray_session import cluster_capacity
    from lasagna.stages.capacity import local_capacity
    from lasagna.sweep import render_plan
    from lasagna.tracks.placement import placement_lines

    address = cluster_with_max_nodes(args)
    capacity = local_capacity()
    if address:
        try:
            capacity = cluster_capacity(address)
        except UserError as err:  # plan offline: this machine's resources, said so
            print(f"note: {err.problems[0].message}; placing on this machine", file=sys.stderr)
            address = None
    plan = plan_from_args(args, capacity)  # models and placement refused as `run` does
    check_writable_output(plan.output)  # so is an output a file is in the way of
    console = Console()
    render_plan(plan, set(restore(plan)), console)
    for line in placement_lines(plan.trials, plan.sweep.resources, capacity, address):
        console.print(line, highlight=False, markup=False)
    return 0


def register(groups) -> None:
    """Add the `benchmark` group and its commands to the top-level subparsers."""
    bsub = command_group(
        groups,
        "benchmark",
        "validate data, plan and run benchmarks and sweeps",
        "Validate data, plan and run benchmarks and sweeps.",
    )

    p = bsub.add_parser(
        "validate-data",
        help="check a data file or BEIR folder and show what it supports",
        description="Load and validate a JSONL, CSV, JSON or Parquet file or a BEIR folder; "
        "print its registered name, revision, counts and the tracks it supports.",
    )
    p.add_argument("path", help="a .jsonl, .csv, .json or .parquet file, or a BEIR folder")
    p.add_argument("--name", help="register under NAME@<hash> instead of local/<stem>@<hash>")
    p.add_argument("--split", help="BEIR qrels split (qrels/<split>.tsv); default: test")
    p.add_argument("--corpus", metavar="CORPUS", help=CORPUS_HELP)
    p.set_defaults(handler=cmd_validate_data)

    calibrate.register(bsub)

    for name, help_, desc in (
        (
            "run",
            "run a data file with a profile, or a sweep YAML, on Ray",
            "Run DATA (a .jsonl/.csv/.json/.parquet file or a BEIR folder) with --profile, or "
            "a sweep YAML, on an in-process Ray or an existing cluster (--address / RAY_ADDRESS). "
            "Writes a versioned run folder under the output directory.",
        ),
        (
            "plan",
            "print the trials of a run or sweep, their keys and which are done",
            "Expand a sweep (or DATA + --profile) into trials and print each trial's key and "
            "whether a finished checkpoint exists in the output directory.",
        ),
    ):
        p = bsub.add_parser(name, help=help_, description=desc)
        p.add_argument(
            "target", metavar="DATA|SWEEP.yaml", help="a data file, a BEIR folder, or a sweep YAML"
        )
        p.add_argument(
            "--address",
            help="Ray address to join (default: RAY_ADDRESS, else an in-process Ray on "
            "loopback); plan: the stages are placed on that cluster's resources",
        )
        p.add_argument(
            "--max-nodes",
            dest="max_nodes",
            metavar="GROUPS",
            help='an autoscaling cluster\'s worker groups, e.g. "4 x CPU=8,GPU=1" (at most 4 '
            'such nodes; "; " between groups): trials are placed on the nodes it can still '
            "add too (default: LASAGNA_MAX_NODES, else ~/ray_bootstrap_config.yaml on a "
            "launcher's head)",
        )
        p.add_argument(
            "--profile",
            help="profile to start from (default for DATA: speed); see configs/profiles/",
        )
        p.add_argument("--split", help="BEIR qrels split (default: test)")
        p.add_argument("--corpus", metavar="CORPUS", help=CORPUS_HELP)
        p.add_argument(
            "--n-samples",
            type=positive_int("--n-samples"),
            dest="n_samples",
            metavar="N",
            help="score a seeded sample of N questions",
        )
        p.add_argument(
            "--filter",
            action="append",
            metavar="KEY=VALUE",
            help="keep rows whose metadata KEY (a.b: nested) equals VALUE, a JSON scalar "
            "(year=2020 a number, hard=true a boolean; a,b: either; repeatable)",
        )
        p.add_argument("--name", help="register the data as NAME@<hash>")
        p.add_argument(
            "--trials", type=positive_int("--trials"), metavar="N", help="repeats of every system"
        )
        p.add_argument("--seed", type=int, help="sweep seed (sampling and trial seeds)")
        p.add_argument(
            "--output", help="output folder or URI (default: ./results, or the sweep's output:)"
        )
        p.add_argument(
            "--judge",
            action="append",
            metavar="BENCHMARK",
            help="judge benchmark to run on a judge file (repeatable): faithfulness, relevancy, "
            "hallucination, correctness, summarization, conversation-completeness, role-adherence, "
            "knowledge-retention, contextual-precision/-recall/-relevancy, g-eval (your criterion)",
        )
        p.add_argument(
            "--judge-model",
            metavar="MODEL",
            help="judge model: packaged name, local path or model id "
            "(default: the packaged SmolLM2-135M on vLLM)",
        )
        p.add_argument(
            "--judge-backend",
            choices=["vllm", "transformers", "openai", "anthropic"],
            help="backend of the judge model (default: vllm)",
        )
        p.add_argument(
            "--param",
            action="append",
            metavar="KEY=VALUE",
            help="judge parameter (repeatable; JUDGE.KEY=VALUE: one judge's): threshold, "
            "chatbot_role, penalize_unverified, assessment_questions, max_claims; g-eval's "
            "criteria, evaluation_steps (split at |), fields, label",
        )
        if name == "run":
            p.add_argument(
                "--resume",
                action="store_true",
                help="restore finished trials whose key matches; run the rest",
            )
            p.add_argument(
                "--no-cache",
                action="store_true",
                dest="no_cache",
                help="compute every model call again: do not read or write the model-call "
                "cache (default: <output>/.model-calls, or the sweep's cache:)",
            )
            p.add_argument(
                "--trials-per-driver",
                type=non_negative("--trials-per-driver", int, "0: all in one driver"),
                default=TRIALS_PER_DRIVER,
                metavar="N",
                help="a sweep of more trials runs them in fresh driver processes of N trials "
                "each, so the driver's memory stays bounded over a long sweep; 0: all in one "
                f"(default: {TRIALS_PER_DRIVER})",
            )
            p.add_argument(
                "--stall-timeout",
                type=non_negative("--stall-timeout", float, "0: off"),
                default=STALL_S,
                dest="stall_timeout",
                metavar="SECONDS",
                help="report a trial whose stages make no progress for SECONDS (an actor "
                "that computes, e.g. a model answering a long batch, is progress), and end it "
                "when what it waits for cannot fit (after a second period) or after "
                f"{QUIET_PERIODS} quiet periods; 0: off (default: {STALL_S:g})",
            )
            p.set_defaults(handler=cmd_run)
        else:
            p.set_defaults(handler=cmd_plan)

    synthesize.register(bsub)
