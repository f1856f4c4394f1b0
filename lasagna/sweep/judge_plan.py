"""What planning judges needs beyond the common plan (lasagna.sweep.plan): loading and
selecting judge test-case files, the judges of `--judge ID --param K=V`, and the checks
that a generator's answers can feed the judges of a judged-generation sweep.

A judge trial is keyed like every other trial (the judge model's identity, its prompt
hashes and parameters are in its `identity()`); what each benchmark needs of the test
cases is the judge track's refusal (lasagna.tracks.judge).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lasagna.errors import Problem, UserError, undotted
from lasagna.sweep.benchmarks import PlannedBenchmark
from lasagna.sweep.schema import Sweep
from lasagna.systems import JudgeSystem


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


def load_judge_files(
    sweep: Sweep, base_dir: Path, label_columns: tuple[str, ...] = ()
) -> list[PlannedBenchmark]:
    """Each benchmark of the sweep as a judge file, filtered and sampled, or one UserError
    listing every problem. `label_columns`: extra columns allowed (human labels)."""
    from lasagna.data.judge_cases import load_judge_cases

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
    if problems:
        raise UserError(problems, title=f"{len(problems)} problem(s) with the judge files")
    return planned


def judge_systems(
    benchmark_ids: list[str],
    model: str | None = None,
    backend: str | None = None,
    params: list[str] | None = None,
) -> list[JudgeSystem]:
    """`--judge ID ... --judge-model M --param K=V`: the judges, or a UserError naming the
    bad option (unknown id with a suggestion, unknown or malformed parameter). `--param
    JUDGE.K=V` is that judge's alone, over a plain K=V."""
    from lasagna.judges.params import parse_params
    from lasagna.judges.registry import benchmarks, get_benchmark, unknown_benchmark
    from lasagna.systems import JUDGE_MODEL

    problems: list[Problem] = []
    raw: dict[str, str] = {}
    scoped: dict[str, dict[str, str]] = {}  # `--param JUDGE.KEY=V`: that judge's alone
    for item in params or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            problems.append(
                Problem(
                    f"--param {item!r} is not KEY=VALUE",
                    field="--param",
                    fix="write e.g. --param threshold=0.7 (or faithfulness.threshold=0.7 "
                    "for one judge)",
                )
            )
            continue
        judge, dot, name = key.strip().rpartition(".")
        if dot:
            scoped.setdefault(judge, {})[name] = value
        else:
            raw[name] = value
    for given in (raw, *scoped.values()):
        problems += parse_params(given)[1]
    ids = []
    for benchmark_id in benchmark_ids:
        try:
            ids.append(get_benchmark(benchmark_id).ID)
        except KeyError:
            problems.append(
                Problem(
                    unknown_benchmark(benchmark_id),
                    field="--judge",
                    fix=f"use one of: {', '.join(benchmarks())}",
                )
            )
    problems += _scope_problems(scoped, ids, benchmark_ids)
    if problems:
        raise UserError(problems)
    by_id = {get_benchmark(j).ID: values for j, values in scoped.items()}
    update: dict[str, Any] = {}
    if model:
        update["model"] = model
    if backend:
        update["backend"] = backend
    # validated, so a --judge-model gpt-4o-mini without --judge-backend is the API model
    spec = type(JUDGE_MODEL).model_validate(JUDGE_MODEL.model_dump(exclude={"backend"}) | update)
    return [
        JudgeSystem(benchmark=b, model=spec, parameters=_read_by(b, ids, raw) | by_id.get(b, {}))
        for b in ids
    ]


def _scope_problems(
    scoped: dict[str, dict[str, str]], ids: list[str], given: list[str]
) -> list[Problem]:
    """`--param JUDGE.KEY=V` naming no judge, or a judge not among the --judge ones."""
    from lasagna.judges.registry import get_benchmark, unknown_benchmark

    problems = []
    for judge, values in scoped.items():
        example = f"--param {judge}.{next(iter(values))}=..."
        try:
            known = get_benchmark(judge).ID
        except KeyError:
            problems.append(
                Problem(
                    f"{example}: {unknown_benchmark(judge)}",
                    field="--param",
                    fix=("write JUDGE.KEY=VALUE with a judge of --judge, or KEY=VALUE for all"),
                )
            )
            continue
        if known not in ids:
            problems.append(
                Problem(
                    f"{example} names the {known} judge, which is not judging here "
                    f"(--judge {' --judge '.join(given)})",
                    field="--param",
                    fix=f"add --judge {known}, or drop '{judge}.' to give it to every judge",
                )
            )
    return problems


def _read_by(benchmark_id: str, ids: list[str], raw: dict[str, str]) -> dict[str, str]:
    """The --param values a judge reads: every common one, and of the benchmark-specific
    ones (g-eval's criteria, ...) those it names; one that none of the judges `ids` reads
    stays, to be refused with its fix (lasagna.judges.registry.parameter_problems)."""
    from lasagna.judges.params import OWN
    from lasagna.judges.registry import get_benchmark

    def reads(b: str) -> tuple[str, ...]:
        return tuple(getattr(get_benchmark(b), "PARAMETERS", ()))

    read = {k for b in ids for k in reads(b)}
    mine = reads(benchmark_id)
    return {k: v for k, v in raw.items() if k not in OWN or k in mine or k not in read}


# Benchmarks that can score a generator's answers: the generated test case has input (the
# question), actual_output (the answer), retrieval_context (the passages it saw), context
# (the row's gold passages) and expected_output (the reference answer).
GENERATED_COLUMNS = ("input", "actual_output", "retrieval_context", "context", "expected_output")


def _same_columns(judges: list[JudgeSystem]) -> list[Problem]:
    """Two judges of the generators whose columns would be one (a benchmark twice, or two
    g-eval criteria under one label): the second would overwrite the first's scores."""
    from lasagna.judges.registry import get_benchmark
    from lasagna.stages.judging import judge_prefix

    first: dict[str, int] = {}
    problems = []
    for i, judge in enumerate(judges):
        prefix = judge_prefix(judge.benchmark, judge.params)
        if prefix not in first:
            first[prefix] = i
            continue
        labelled = "label" in getattr(get_benchmark(judge.benchmark), "PARAMETERS", ())
        problems.append(
            Problem(
                f"judges[{first[prefix]}] and judges[{i}] would write the same columns "
                f"({prefix}*): the second would replace the first's scores",
                field=f"judges[{i}]",
                fix="give each criterion its own label (parameters: {label: ...})"
                if labelled
                else f"judge the generators with one {judge.benchmark} judge; compare judge "
                "models on a judge file (lasagna benchmark calibrate)",
            )
        )
    return problems


def judged_generation(sweep: Sweep) -> list[tuple[JudgeSystem, dict[str, Any]]]:
    """(judge, its keyed config) for each judge of a sweep with generators; refusals for
    judges a generated answer cannot feed (multi-turn; faithfulness without a rag generator)."""
    from lasagna.judges.registry import parameter_problems, required_columns

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
    problems += _same_columns(sweep.judges)
    for i, judge in enumerate(sweep.judges):
        for problem in parameter_problems(judge.benchmark, judge.params):
            field = f"judges[{i}].parameters.{problem.field}"
            problems.append(dataclasses.replace(problem, field=field))
        needs = required_columns(judge.benchmark, judge.params)
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
        if sweep.source is not None:  # on the sweep file's lines
            places = [
                sweep.source.locate(undotted(p.field or ""), expanded=False) for p in problems
            ]
            problems = [
                dataclasses.replace(p, file=f, where=w)
                for p, (f, w) in zip(problems, places, strict=True)
            ]
        raise UserError(problems, title="cannot judge these generators (nothing was run):")
    return [(j, j.identity()) for j in sweep.judges]
