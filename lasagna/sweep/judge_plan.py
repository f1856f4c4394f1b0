"""The plan of a judge sweep: judge files x `judges:` entries x repeats, keyed like every
other trial (the judge model's identity, its prompt hashes and parameters are in the key).

Every benchmark a judge cannot run on (a missing column; role-adherence with no
chatbot_role anywhere) is refused here, all at once, before any model loads.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.sweep.keys import comparability_key, system_config, trial_key, trial_seed
from lasagna.sweep.schema import Sweep, resolve_output
from lasagna.systems import JudgeSystem

JUDGE = "judge"


def judge_identity(system: JudgeSystem) -> dict[str, Any]:
    """The judge model's identity (files, backend, sampling) + prompts and parameters."""
    return system.model_identity() or {}


def select_cases(cases, entry, seed: int):
    """The entry's filters, then its seeded sample (the same rule as question files)."""
    from lasagna.data.select import filter_rows, sample_rows

    rows = [SimpleNamespace(id=c["id"], metadata=c["metadata"], case=c) for c in cases.cases]
    if entry.filters:
        rows = filter_rows(rows, dict(entry.filters), cases.source)  # type: ignore[arg-type]
    if entry.n_samples is not None:
        rows = sample_rows(rows, entry.n_samples, seed)  # type: ignore[arg-type]
    if not rows:
        raise UserError(
            Problem(
                "the filters keep no row", file=cases.source, field="filters", fix="loosen them"
            )
        )
    return dataclasses.replace(cases, cases=[r.case for r in rows])


def build_judge_plan(sweep: Sweep, base_dir: Path, label_columns: tuple[str, ...] = ()):
    """Every (judge file, judge, repeat) trial, or one UserError listing all refusals.
    `label_columns`: extra columns allowed in the files (human labels, for calibrate)."""
    from lasagna.data.judge_cases import load_judge_cases
    from lasagna.judges.registry import refusals
    from lasagna.metrics import METRIC_DEFINITIONS_VERSION
    from lasagna.sweep.benchmarks import PlannedBenchmark
    from lasagna.sweep.naming import unique_names
    from lasagna.sweep.trial import Plan, Trial

    problems: list[Problem] = []
    planned: list[PlannedBenchmark] = []
    for i, entry in enumerate(sweep.benchmarks):
        path = entry.resolve_path(base_dir)
        try:
            full = load_judge_cases(
                path, name=entry.name if entry.path else None, label_columns=label_columns
            )
            selected = select_cases(full, entry, sweep.seed)
        except UserError as err:
            problems += err.problems
            continue
        planned.append(PlannedBenchmark(i, entry, path, selected, len(full.cases)))  # type: ignore[arg-type]
        for judge in sweep.judges:
            problems += refusals([judge.benchmark], selected.cases, judge.params, str(path))
    if problems:
        raise UserError(problems, title="cannot run these judges (nothing was run):")
    names = unique_names(list(sweep.judges))
    trials = []
    for pb in planned:
        cases = pb.benchmark
        selection = {
            "split": None,
            "n_samples": pb.entry.n_samples,
            "filters": dict(pb.entry.filters),
            "sample_seed": sweep.seed if pb.entry.n_samples is not None else None,
        }
        for index, (judge, name) in enumerate(zip(sweep.judges, names, strict=True)):
            config = system_config(judge, judge_identity(judge))
            group = comparability_key(
                dataset_name=cases.name,
                dataset_revision=cases.revision,
                split=None,
                n_samples=selection["n_samples"],
                filters=selection["filters"],
                sample_seed=selection["sample_seed"],
                corpus_provenance=None,
                track=f"{JUDGE}:{judge.benchmark}",
                metric_definitions_version=METRIC_DEFINITIONS_VERSION,
            )
            for repeat in range(sweep.trials):
                seed = trial_seed(sweep.seed, repeat)
                key = trial_key(
                    dataset_revision=cases.revision,
                    selection=selection,
                    track=JUDGE,
                    system_config=config,
                    seed=seed,
                    metric_definitions_version=METRIC_DEFINITIONS_VERSION,
                )
                trials.append(
                    Trial(
                        key,
                        group,
                        pb.index,
                        cases.name,
                        JUDGE,
                        judge,
                        name,
                        index,
                        seed,
                        repeat,
                        selection,
                        config,
                    )
                )
    output = resolve_output(sweep.output, base_dir)
    return Plan(sweep=sweep, base_dir=base_dir, output=output, benchmarks=planned, trials=trials)


def judge_systems(
    benchmark_ids: list[str],
    model: str | None = None,
    backend: str | None = None,
    params: list[str] | None = None,
) -> list[JudgeSystem]:
    """`--judge ID ... --judge-model M --param K=V`: the judges, or a UserError naming the
    bad option (unknown id with a suggestion, unknown or malformed parameter)."""
    from lasagna.judges.params import parse_params
    from lasagna.judges.registry import BENCHMARKS, get_benchmark, unknown_benchmark
    from lasagna.systems import JUDGE_MODEL

    problems: list[Problem] = []
    raw: dict[str, str] = {}
    for item in params or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            problems.append(
                Problem(
                    f"--param {item!r} is not KEY=VALUE",
                    field="--param",
                    fix="write e.g. --param threshold=0.7",
                )
            )
            continue
        raw[key.strip()] = value
    _, found = parse_params(raw)
    problems += found
    ids = []
    for benchmark_id in benchmark_ids:
        try:
            ids.append(get_benchmark(benchmark_id).ID)
        except KeyError:
            problems.append(
                Problem(
                    unknown_benchmark(benchmark_id),
                    field="--judge",
                    fix=f"use one of: {', '.join(BENCHMARKS)}",
                )
            )
    if problems:
        raise UserError(problems)
    update: dict[str, Any] = {}
    if model:
        update["model"] = model
    if backend:
        update["backend"] = backend
    spec = JUDGE_MODEL.model_copy(update=update)
    return [JudgeSystem(benchmark=b, model=spec, parameters=raw) for b in ids]


# Benchmarks that can score a generator's answers: the generated test case has input (the
# question), actual_output (the answer), retrieval_context (the passages it saw), context
# (the row's gold passages) and expected_output (the reference answer).
GENERATED_COLUMNS = ("input", "actual_output", "retrieval_context", "context", "expected_output")


def judged_generation(sweep: Sweep) -> list[tuple[JudgeSystem, dict[str, Any]]]:
    """(judge, its keyed config) for each judge of a sweep with generators; refusals for
    judges a generated answer cannot feed (multi-turn; faithfulness without a rag generator)."""
    from lasagna.judges.registry import get_benchmark

    problems = []
    if not sweep.generators:
        problems.append(
            Problem(
                "judges: with retrievers only has nothing to judge",
                field="judges",
                fix="add generators: (their answers are judged), or run the judges on a judge file",
            )
        )
    has_closed_book = any(g.kind == "closed_book" for g in sweep.generators)
    for i, judge in enumerate(sweep.judges):
        needs = get_benchmark(judge.benchmark).REQUIRED
        missing = [c for c in needs if c not in GENERATED_COLUMNS]
        if missing:
            problems.append(
                Problem(
                    f"the {judge.benchmark} judge needs {', '.join(missing)}, which a generated "
                    "answer does not have",
                    field=f"judges[{i}].benchmark",
                    fix="judge generators with single-turn benchmarks; run multi-turn ones on "
                    "a conversation file",
                )
            )
        if "retrieval_context" in needs and has_closed_book:
            problems.append(
                Problem(
                    f"the {judge.benchmark} judge needs the retrieved passages, and a "
                    "closed_book generator has none",
                    field=f"judges[{i}].benchmark",
                    fix="judge only rag generators with it (a separate sweep for closed_book)",
                )
            )
    if problems:
        raise UserError(problems, title="cannot judge these generators (nothing was run):")
    return [(j, system_config(j, judge_identity(j))) for j in sweep.judges]
