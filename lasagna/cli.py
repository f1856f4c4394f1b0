"""The `lasagna` command. Thin: parses arguments and calls into the packages.

Each handler imports what it needs lazily so `lasagna --help` stays instant.
User errors (`UserError`) print without a traceback and exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from lasagna.errors import Problem, UserError

Handler = Callable[[argparse.Namespace], int]


# ---------------------------------------------------------------- benchmark validate-data
def cmd_validate_data(args: argparse.Namespace) -> int:
    from lasagna.data import load_benchmark
    from lasagna.data.judge_cases import is_judge_file
    from lasagna.data.report import print_report

    if args.split is None and is_judge_file(args.path):
        from lasagna.data.judge_cases import load_judge_cases
        from lasagna.judges.report import print_judge_report

        print_judge_report(load_judge_cases(args.path, name=args.name))
        return 0
    benchmark = load_benchmark(args.path, name=args.name, split=args.split)
    print_report(benchmark)
    return 0


# ---------------------------------------------------------------- benchmark run / plan
def _is_sweep(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


def _yaml_scalar(text: str) -> object:
    """A filter value read as the sweep YAML reads it: `2020` an int, `true` a bool, `1.5` a
    float, `null` None; anything else (a date, a list, a mapping) stays the string typed."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, str | int | float | bool) or value is None else text


def _parse_filters(items: list[str] | None) -> dict[str, object] | None:
    """`--filter key=value` (repeatable; `key=a,b` accepts either). Values are YAML scalars,
    as in a sweep's `filters:`, so `--filter year=2020` matches the number 2020."""
    if not items:
        return None
    filters: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(
                Problem(
                    f"--filter {item!r} is not KEY=VALUE",
                    field="--filter",
                    fix="write e.g. --filter question_type=multihop",
                )
            )
        parts = [_yaml_scalar(v.strip()) for v in value.split(",")]
        filters[key] = parts if len(parts) > 1 else parts[0]
    return filters


def _positive_int(flag: str) -> Callable[[str], int]:
    """An argparse type: a whole number >= 1, refused naming the flag (exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a positive whole number (write e.g. {flag} 50, or leave it out)"
            )
        return value

    return parse


def _plan_from_args(args: argparse.Namespace):
    from lasagna.sweep import build_plan, load_sweep, sweep_for_path

    if getattr(args, "judge", None):
        return _judge_plan_from_args(args)
    if _is_sweep(args.target):
        for opt in ("split", "n_samples", "name", "filter"):
            if getattr(args, opt, None):
                raise UserError(
                    Problem(
                        f"--{opt.replace('_', '-')} applies to a data file, not to a sweep",
                        file=args.target,
                        fix="set it on the benchmark entry in the sweep YAML",
                    )
                )
        sweep, base = load_sweep(args.target)
        updates = {
            k: v
            for k, v in (("profile", args.profile), ("trials", args.trials), ("seed", args.seed))
            if v is not None
        }
        if updates:
            sweep = sweep.model_copy(update=updates)
    else:
        if not os.path.exists(args.target):
            raise UserError(
                Problem(
                    "no such file or folder",
                    file=args.target,
                    fix=f"check the path; a relative path is read from the current folder "
                    f"({os.getcwd()})",
                )
            )
        sweep, base = sweep_for_path(
            args.target,
            args.profile or "speed",
            split=args.split,
            n_samples=args.n_samples,
            name=args.name,
            filters=_parse_filters(args.filter),
            seed=args.seed,
            trials=args.trials,
        )
    if args.output:  # a relative --output is read from the current folder, like DATA
        out = args.output if "://" in args.output else os.path.abspath(args.output)
        sweep = sweep.model_copy(update={"output": out})
    try:
        plan = build_plan(sweep, base)
    except UserError as err:
        if _is_sweep(args.target):
            raise
        raise _for_one_file(err, args.target) from err
    from lasagna.sweep.notes import selection_notes

    for note in selection_notes(plan, single_file=not _is_sweep(args.target)):
        print(f"note: {note}", file=sys.stderr)
    return plan


_FLAGS = {"n_samples": "--n-samples", "split": "--split", "filters": "--filter"}


def _for_one_file(err: UserError, target: str) -> UserError:
    """The plan speaks of a sweep's `benchmarks[0]`; a single data file has no sweep, so
    say the same thing about the file the user named."""
    import dataclasses

    problems = [
        dataclasses.replace(
            p,
            where=None if p.where == "benchmarks[0]" else p.where,
            message=p.message.removeprefix("benchmarks[0] x "),
            field=_FLAGS.get(p.field or "", p.field)
            if not (p.field or "").startswith("filters.")
            else f"--filter {p.field.removeprefix('filters.')}",
        )
        for p in err.problems
    ]
    title = err.title
    if title and "the sweep's benchmarks" in title:
        title = f"{len(problems)} problem(s) with {target}"
    return UserError(problems, title=title)


def _judge_plan_from_args(args: argparse.Namespace):
    """`run FILE --judge ID ...`: one judge file, the judges asked for, no profile."""
    from lasagna.sweep import build_plan, sweep_for_path
    from lasagna.sweep.judge_plan import judge_systems

    if _is_sweep(args.target) or args.profile or args.split:
        raise UserError(
            Problem(
                "--judge runs a judge file; --profile, --split and sweep files do not apply",
                field="--judge",
                fix="in a sweep, list the judges under judges: instead",
            )
        )
    judges = judge_systems(args.judge, args.judge_model, args.judge_backend, args.param)
    sweep, base = sweep_for_path(
        args.target,
        None,
        n_samples=args.n_samples,
        name=args.name,
        filters=_parse_filters(args.filter),
        seed=args.seed,
        trials=args.trials,
    )
    update: dict = {"judges": judges}
    if args.output:
        update["output"] = str(args.output)
    return build_plan(sweep.model_copy(update=update), base)


def cmd_run(args: argparse.Namespace) -> int:
    plan = _plan_from_args(args)  # bad input is refused before Ray or a model is imported
    from rich.console import Console

    from lasagna.engine.driver import run_plan
    from lasagna.engine.summary import render_summary

    console = Console(stderr=True)
    if not console.is_terminal:
        console.width = 100  # files and pipes: lines as a 100-column terminal shows them
    outcome = run_plan(
        plan,
        resume=args.resume,
        address=args.address,
        console=console,
        profile=args.profile,
        source=args.target,
    )
    render_summary(outcome, Console())
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lasagna.engine.driver import restore
    from lasagna.engine.preflight import preflight
    from lasagna.sweep import render_plan

    plan = _plan_from_args(args)
    preflight(plan.trials, prepare=False)  # an unknown model: refused as `run` does
    render_plan(plan, set(restore(plan)), Console())
    return 0


# ---------------------------------------------------------------- benchmark synthesize
def cmd_synthesize(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lasagna.knowledge_evaluation_sdk.synthesize import plan_synthesis, synthesize, write_jsonl
    from lasagna.synth.output import refuse_existing
    from lasagna.synth.report import render_plan, render_summary

    if args.dry_run:
        render_plan(plan_synthesis(args.folder, args.n, args.mix, args.seed), Console())
        print("dry run: no model loaded, no LLM called, nothing written")
        return 0
    if not args.out:
        raise UserError(
            Problem(
                "--out is required", field="--out", fix="add --out my_bench.jsonl, or --dry-run"
            )
        )
    refuse_existing(args.out, args.force)
    result = synthesize(args.folder, args.n, args.mix, args.seed, args.model, address=args.address)
    render_plan(result.plan, Console(stderr=True))
    render_summary(result, Console())
    if not result:
        print("error: no question passed the check; nothing written", file=sys.stderr)
        return 1
    write_jsonl(result, args.out, overwrite=args.force)
    print(f"wrote {len(result)} rows to {args.out}")
    return 0


# ---------------------------------------------------------------- results
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


# ---------------------------------------------------------------- report
def cmd_report(args: argparse.Namespace) -> int:
    from lasagna.results.report import write_report

    summary = write_report(
        args.out,
        args.runs or None,
        output_dir=args.output,
        group=args.group,
        compare=tuple(args.compare) if args.compare else None,
    )
    for note in summary.notes:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"wrote {summary.path} ({summary.bytes / 1e6:.1f} MB: {summary.runs} run(s), "
        f"{summary.groups} group(s)); open it in a browser, it needs no network"
    )
    return 0


# ---------------------------------------------------------------- benchmark calibrate
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


# ---------------------------------------------------------------- eval
def cmd_eval(args: argparse.Namespace) -> int:
    from lasagna.evaluation.files import find_files, run_file

    failed = 0
    for path in find_files(args.files):
        print(f"== {path}", file=sys.stderr)
        outcome = run_file(path, args.group)
        if outcome.error:
            failed += 1
            print(f"error: {path}: {outcome.error.rstrip()}", file=sys.stderr)
    return 1 if failed else 0


# ---------------------------------------------------------------- models
def cmd_models_prepare(args: argparse.Namespace) -> int:
    from lasagna.models.packaged import prepare_packaged_generator

    print(prepare_packaged_generator())
    return 0


# ---------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lasagna",
        description="Distributed batch evaluator for RAG and LLM systems, on Ray.",
    )
    parser.add_argument("--version", action="version", version=_version())
    groups = parser.add_subparsers(dest="group", metavar="COMMAND", required=True)

    bench = groups.add_parser(
        "benchmark",
        help="validate data, plan and run benchmarks and sweeps",
        description="Validate data, plan and run benchmarks and sweeps.",
    )
    bsub = bench.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = bsub.add_parser(
        "validate-data",
        help="check a data file or BEIR folder and show what it supports",
        description="Load and validate a JSONL, CSV or JSON file or a BEIR folder; print its "
        "registered name, revision, counts and the tracks it supports.",
    )
    p.add_argument("path", help="a .jsonl, .csv or .json file, or a BEIR folder")
    p.add_argument("--name", help="register under NAME@<hash> instead of local/<stem>@<hash>")
    p.add_argument("--split", help="BEIR qrels split (qrels/<split>.tsv); default: test")
    p.set_defaults(handler=cmd_validate_data)

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

    for name, help_, desc in (
        (
            "run",
            "run a data file with a profile, or a sweep YAML, on Ray",
            "Run DATA (a .jsonl/.csv/.json file or a BEIR folder) with --profile, or a sweep "
            "YAML, on an in-process Ray or an existing cluster (--address / RAY_ADDRESS). "
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
            "--profile",
            help="profile to start from (default for DATA: speed); see configs/profiles/",
        )
        p.add_argument("--split", help="BEIR qrels split (default: test)")
        p.add_argument(
            "--n-samples",
            type=_positive_int("--n-samples"),
            dest="n_samples",
            metavar="N",
            help="score a seeded sample of N questions",
        )
        p.add_argument(
            "--filter",
            action="append",
            metavar="KEY=VALUE",
            help="keep rows whose metadata KEY equals VALUE, read as a YAML scalar like a sweep's "
            "filters: (year=2020 is a number, hard=true a boolean; a,b: either; repeatable)",
        )
        p.add_argument("--name", help="register the data as NAME@<hash>")
        p.add_argument(
            "--trials", type=_positive_int("--trials"), metavar="N", help="repeats of every system"
        )
        p.add_argument("--seed", type=int, help="sweep seed (sampling and trial seeds)")
        p.add_argument(
            "--output", help="output folder or URI (default: ./results, or the sweep's output:)"
        )
        p.add_argument(
            "--judge",
            action="append",
            metavar="BENCHMARK",
            help="run a judge benchmark on a judge file (repeatable): faithfulness, relevancy, "
            "hallucination, correctness, summarization, conversation-completeness, "
            "role-adherence, knowledge-retention",
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
            help="judge parameter (repeatable): threshold, chatbot_role, penalize_unverified, "
            "assessment_questions, max_claims",
        )
        if name == "run":
            p.add_argument(
                "--resume",
                action="store_true",
                help="restore finished trials whose key matches; run the rest",
            )
            p.add_argument(
                "--address",
                help="Ray address to join (default: RAY_ADDRESS, "
                "else an in-process Ray on loopback)",
            )
            p.set_defaults(handler=cmd_run)
        else:
            p.set_defaults(handler=cmd_plan)

    p = bsub.add_parser(
        "synthesize",
        help="write a development set of questions from your documents with an LLM",
        description="Read every .md, .txt, PDF, DOCX and HTML file under FOLDER, cut it into "
        "200-word passages, have an LLM write factoid, multihop and unanswerable questions, "
        "check each with a second call, and write the kept rows as JSONL. Local models run "
        "keyless on vLLM in Ray actors; API models need their key. Synthetic sets are for "
        "development, not for claims (see the README).",
    )
    p.add_argument("folder", help="the folder holding your documents (read recursively)")
    p.add_argument("--n", type=int, default=200, help="questions to ask for (default: 200)")
    p.add_argument("--out", help="the JSONL file to write (required unless --dry-run)")
    p.add_argument(
        "--mix",
        default="factoid=0.6,multihop=0.3,unanswerable=0.1",
        help="share of each question type, summing to 1 (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the passage choice (default: 0)")
    p.add_argument(
        "--model",
        help="packaged:SmolLM2-135M-Instruct, a model folder, a cached Hugging Face id, or "
        "an API model (gpt-..., claude-..., openai:NAME); default: $MODEL_NAME",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan and a token estimate; load no model, write nothing",
    )
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument(
        "--address",
        help="Ray address to join (default: RAY_ADDRESS, else an in-process Ray on loopback)",
    )
    p.set_defaults(handler=cmd_synthesize)

    res = groups.add_parser(
        "results",
        help="list, show, rank, compare, export and query runs",
        description="Read the run folders under an output directory.",
    )
    rsub = res.add_subparsers(dest="command", metavar="COMMAND", required=True)

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

    rep = groups.add_parser(
        "report",
        help="write one self-contained HTML page: leaderboards, progression, compare, questions",
        description="Write ONE HTML file (plotly, styles and data inline; no network, no "
        "server) with, per comparability group: the leaderboard with 95% intervals, the "
        "progression of every metric over run time, two runs side by side with paired "
        "tests, failed trials and rows, and a filterable per-question drill-down.",
    )
    rep.add_argument(
        "runs", nargs="*", metavar="RUN", help="run ids, prefixes or folders (default: every run)"
    )
    rep.add_argument("--group", help="only this group: comparability key (or start) or benchmark")
    rep.add_argument(
        "--compare",
        nargs=2,
        metavar=("RUN_A", "RUN_B"),
        help="the runs put side by side (default: each group's newest two)",
    )
    rep.add_argument(
        "--output", default="results", help="results root holding the runs (default: ./results)"
    )
    rep.add_argument("--out", default="report.html", help="the HTML file to write")
    rep.set_defaults(handler=cmd_report)

    ev = groups.add_parser(
        "eval",
        help="run the evaluate() calls in Python files (default: evals/eval_*.py)",
        description="Run each FILE.py (every evals/eval_*.py when none is given) and the "
        "evaluate() calls in it; their runs land in the results root they name (default "
        "./results). Exits 1 when a file fails to import, raises, or runs no evaluate().",
    )
    ev.add_argument("files", nargs="*", metavar="FILE.py", help="files to run")
    ev.add_argument("--group", help="put every evaluation of these files in group G")
    ev.set_defaults(handler=cmd_eval)

    models = groups.add_parser(
        "models", help="prepare packaged models", description="Manage the models lasagna runs."
    )
    msub = models.add_subparsers(dest="command", metavar="COMMAND", required=True)
    mp = msub.add_parser(
        "prepare",
        help="convert the packaged SmolLM2 GGUF into a cached "
        "Hugging Face folder vLLM loads (idempotent)",
        description="Convert the packaged SmolLM2 GGUF once into a cached "
        "Hugging Face folder keyed by the file's hash.",
    )
    mp.set_defaults(handler=cmd_models_prepare)

    return parser


def _version() -> str:
    from lasagna.common.version import lasagna_version

    return f"lasagna {lasagna_version()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    if not sys.stdout.isatty():
        os.environ.setdefault("COLUMNS", "100")  # pipes and files: what a terminal shows
    if not getattr(args, "address", None) and not os.environ.get("RAY_ADDRESS"):
        from lasagna.engine.ray_session import prefer_loopback

        prefer_loopback()  # before anything imports ray
    try:
        return handler(args)
    except UserError as err:
        print(f"error: {err.render()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
