"""The plan of a sweep: every trial (benchmark x system x repeat) with its key, decided
before any model loads.

`build_plan` loads each benchmark once, applies filters then the seeded sample, refuses
every (benchmark, system) pair whose track the data cannot support (all listed in one
error), and derives each trial's seed and keys. The engine runs `plan.trials`; `--resume`
skips those whose `key` is already in the run folder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lasagna.data.model import Benchmark
from lasagna.errors import Problem, UserError
from lasagna.sweep.keys import comparability_key, system_config, trial_key, trial_seed
from lasagna.sweep.profiles import resolve
from lasagna.sweep.schema import BenchmarkEntry, Sweep, resolve_output
from lasagna.sweep.systems import (
    ClosedBookGenerator,
    DenseRetriever,
    HybridRetriever,
    RagGenerator,
    display_name,
)

RETRIEVAL = "retrieval"
GENERATION = "generation"


@dataclass(frozen=True)
class PlannedBenchmark:
    """A benchmark of the sweep after filters and sampling."""

    index: int
    entry: BenchmarkEntry
    path: Path
    benchmark: Benchmark  # the selected rows; corpus and qrels as loaded
    rows_before_selection: int

    @property
    def name(self) -> str:
        return self.benchmark.name


@dataclass(frozen=True)
class Trial:
    """One system on one benchmark, one repeat: the unit the engine runs and resume skips."""

    key: str
    comparability_key: str
    benchmark_index: int
    benchmark_name: str
    track: str  # "retrieval" | "generation"
    system: BaseModel  # a Retriever or Generator config from lasagna.sweep.systems
    system_name: str
    system_index: int  # position in sweep.retrievers / sweep.generators
    seed: int
    repeat: int
    selection: dict[str, Any]  # split, n_samples, filters, sample_seed
    system_config: dict[str, Any]  # what the key hashed (placement-free config + identity)
    judges: tuple[Any, ...] = ()  # JudgeSystems scoring a generator's answers (judged generation)


@dataclass(frozen=True)
class Plan:
    sweep: Sweep  # with its profile applied
    base_dir: Path
    output: str  # a local folder (absolute) or a URI
    benchmarks: list[PlannedBenchmark]
    trials: list[Trial]

    @property
    def keys(self) -> list[str]:
        return [t.key for t in self.trials]

    def pending(self, done_keys: Iterable[str]) -> list[Trial]:
        done = set(done_keys)
        return [t for t in self.trials if t.key not in done]


def build_plan(sweep: Sweep, base_dir: Path) -> Plan:
    """Every trial of the sweep, or one UserError listing everything that is wrong."""
    sweep = resolve(sweep)
    if sweep.judges and not (sweep.retrievers or sweep.generators):
        from lasagna.sweep.judge_plan import build_judge_plan

        return build_judge_plan(sweep, base_dir)
    systems = systems_of(sweep)
    if not systems:
        raise UserError(
            Problem(
                "the sweep names no systems to run",
                field="retrievers / generators",
                fix="add retrievers: or generators:, or a profile: (e.g. profile: speed)",
            )
        )
    benchmarks = _load_benchmarks(sweep, base_dir)
    _refuse_unsupported(benchmarks, systems)
    judged = ()
    if sweep.judges:
        from lasagna.sweep.judge_plan import judged_generation

        judged = judged_generation(sweep)
    from lasagna.metrics import METRIC_DEFINITIONS_VERSION

    identities = [model_identity_of(system) for _, system in systems]
    names = unique_names([system for _, system in systems])
    trials: list[Trial] = []
    for pb in benchmarks:
        selection = selection_of(pb, sweep.seed)
        for (track, system), identity, name in zip(systems, identities, names, strict=True):
            config = system_config(system, identity)
            if judged and track == GENERATION:
                config["judges"] = [j for _, j in judged]
            group = comparability_key(
                dataset_name=pb.benchmark.name,
                dataset_revision=pb.benchmark.revision,
                split=selection["split"],
                n_samples=selection["n_samples"],
                filters=selection["filters"],
                sample_seed=selection["sample_seed"],
                corpus_provenance=pb.benchmark.corpus_provenance,
                track=track,
                metric_definitions_version=METRIC_DEFINITIONS_VERSION,
            )
            for repeat in range(sweep.trials):
                seed = trial_seed(sweep.seed, repeat)
                key = trial_key(
                    dataset_revision=pb.benchmark.revision,
                    selection=selection,
                    track=track,
                    system_config=config,
                    seed=seed,
                    metric_definitions_version=METRIC_DEFINITIONS_VERSION,
                )
                trials.append(
                    Trial(
                        key=key,
                        comparability_key=group,
                        benchmark_index=pb.index,
                        benchmark_name=pb.benchmark.name,
                        track=track,
                        system=system,
                        system_name=name,
                        system_index=_index_in(sweep, track, system),
                        seed=seed,
                        repeat=repeat,
                        selection=selection,
                        system_config=config,
                        judges=tuple(j for j, _ in judged) if track == GENERATION else (),
                    )
                )
    _refuse_duplicates(trials)
    output = resolve_output(sweep.output, base_dir)
    return Plan(sweep=sweep, base_dir=base_dir, output=output, benchmarks=benchmarks, trials=trials)


def systems_of(sweep: Sweep) -> list[tuple[str, BaseModel]]:
    """(track, system) for every retriever, then every generator."""
    return [(RETRIEVAL, r) for r in sweep.retrievers] + [(GENERATION, g) for g in sweep.generators]


def unique_names(systems: list[BaseModel]) -> list[str]:
    """Display names, with the settings that differ appended where names collide
    (grid members): "rag:SmolLM2-135M-Instruct(passages=3)"."""
    base = [display_name(s) for s in systems]
    flat = [_flatten(system_config(s)) for s in systems]
    out = list(base)
    for name in set(base):
        group = [i for i, b in enumerate(base) if b == name]
        if len(group) < 2:
            continue
        keys = sorted({k for i in group for k in flat[i]})
        differ = [k for k in keys if len({repr(flat[i].get(k)) for i in group}) > 1]
        for i in group:
            if differ:
                out[i] = name + "(" + ", ".join(f"{k}={flat[i].get(k)}" for k in differ) + ")"
    return out


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def selection_of(pb: PlannedBenchmark, sweep_seed: int) -> dict[str, Any]:
    """Which rows a trial saw. The sample seed is the sweep's, shared by all systems and
    repeats, so every system of a sweep is scored on the same questions."""
    entry = pb.entry
    return {
        "split": pb.benchmark.split,
        "n_samples": entry.n_samples,
        "filters": dict(entry.filters),
        "sample_seed": sweep_seed if entry.n_samples is not None else None,
    }


def model_identity_of(system: BaseModel) -> dict[str, Any] | None:
    """The identity of the models a system runs, for its trial key: a generator's model
    (files hash, backend, sampling, prompt template hash) and every embedder's files hash;
    None for BM25 (its config is its identity)."""
    from lasagna.models.identity import embedder_identity

    if isinstance(system, RagGenerator | ClosedBookGenerator):
        from lasagna.models.identity import model_identity
        from lasagna.models.prompts import effective_template

        out = model_identity(system.model, effective_template(system.kind, system.prompt))
        if isinstance(system, RagGenerator):
            retriever = model_identity_of(system.retriever)
            if retriever is not None:
                out = {**out, "retriever": retriever}
        return out
    parts = system.retrievers if isinstance(system, HybridRetriever) else (system,)
    dense = [p for p in parts if isinstance(p, DenseRetriever)]
    return {"embedders": [embedder_identity(d.model) for d in dense]} if dense else None


def _load_benchmarks(sweep: Sweep, base_dir: Path) -> list[PlannedBenchmark]:
    """Load each distinct (path, name, split) once; select rows per entry."""
    from lasagna.data import load_benchmark, select_rows

    problems: list[Problem] = []
    loaded: dict[tuple[Path, str | None, str | None], Benchmark] = {}
    planned: list[PlannedBenchmark] = []
    for i, entry in enumerate(sweep.benchmarks):
        path = entry.resolve_path(base_dir)
        where = f"benchmarks[{i}]"
        if not path.exists():
            problems.append(
                Problem(
                    f"no such file or folder: {path}",
                    where=where,
                    field="path" if entry.path else "name",
                    fix="relative paths are read from the sweep file's folder "
                    f"({base_dir}); correct the path or use an absolute one",
                )
            )
            continue
        reg_name = entry.name  # a built-in registers under its name, a path under name:
        cache_key = (path.resolve(), reg_name, entry.split)
        try:
            if cache_key not in loaded:
                loaded[cache_key] = load_benchmark(path, name=reg_name, split=entry.split)
            full = loaded[cache_key]
            selected = select_rows(
                full, filters=dict(entry.filters), n_samples=entry.n_samples, seed=sweep.seed
            )
        except UserError as err:
            problems += err.problems
            continue
        planned.append(PlannedBenchmark(i, entry, path, selected, len(full.rows)))
    if problems:
        raise UserError(problems, title=f"{len(problems)} problem(s) with the sweep's benchmarks")
    return planned


def _refuse_unsupported(
    benchmarks: list[PlannedBenchmark], systems: list[tuple[str, BaseModel]]
) -> None:
    """Every (benchmark, system) pair the data cannot support, in one error."""
    from lasagna.data.capabilities import track_problems

    problems: list[Problem] = []
    for pb in benchmarks:
        for track, system in systems:
            kind = getattr(system, "kind", None) if track == GENERATION else None
            for p in track_problems(pb.benchmark, track, generator_kind=kind):
                label = f"benchmarks[{pb.index}] x {track} system '{display_name(system)}'"
                problems.append(dataclasses.replace(p, message=f"{label}: {p.message}"))
    if problems:
        raise UserError(
            problems,
            title=f"refused before any model loads: {len(problems)} "
            "(benchmark, system) pair(s) the data cannot support",
        )


def _refuse_duplicates(trials: list[Trial]) -> None:
    seen: dict[str, Trial] = {}
    problems = []
    for t in trials:
        if t.key in seen and seen[t.key].system_index != t.system_index:
            first = seen[t.key]
            problems.append(
                Problem(
                    f"{t.track} systems #{first.system_index} and #{t.system_index} "
                    f"('{t.system_name}') are identical on {t.benchmark_name}",
                    field="retrievers" if t.track == RETRIEVAL else "generators",
                    fix="remove one, or change a setting (a different name: counts)",
                )
            )
        seen.setdefault(t.key, t)
    if problems:
        raise UserError(problems)


def _index_in(sweep: Sweep, track: str, system: BaseModel) -> int:
    systems = sweep.retrievers if track == RETRIEVAL else sweep.generators
    return next(i for i, s in enumerate(systems) if s is system)


def render_plan(plan: Plan, done_keys: Iterable[str], console: Any) -> None:
    """Print the trials as a table (benchmark, track, system, repeat, seed, key, status).

    A column whose value is the same for every trial (one benchmark, one track, no
    repeats) is said once above the table instead, so the table fits 100 columns.
    """
    from rich import box
    from rich.table import Table

    done = set(done_keys)
    rows = {pb.index: len(pb.benchmark.rows) for pb in plan.benchmarks}
    bench = {t.benchmark_index: f"{t.benchmark_name} ({rows[t.benchmark_index]} rows)"
             for t in plan.trials}  # fmt: skip
    varies = {
        "benchmark": len(bench) > 1,
        "track": len({t.track for t in plan.trials}) > 1,
        "repeat": any(t.repeat for t in plan.trials),
    }
    console.print(plan.sweep.description or "sweep plan", highlight=False)
    for name, value in (("benchmark", next(iter(bench.values()), "")),
                        ("track", plan.trials[0].track if plan.trials else "")):  # fmt: skip
        if not varies[name] and value:
            console.print(f"{name}: {value}", highlight=False)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    for col in ("benchmark", "track", "system", "repeat", "seed", "trial key", "status"):
        if varies.get(col, True):
            fold = col in ("benchmark", "system")
            right = col in ("repeat", "seed")
            table.add_column(col, overflow="fold" if fold else "ellipsis", no_wrap=not fold,
                             justify="right" if right else "left")  # fmt: skip
    for n, t in enumerate(plan.trials, 1):
        cells = {
            "benchmark": bench[t.benchmark_index],
            "track": t.track,
            "system": t.system_name,
            "repeat": str(t.repeat),
            "seed": str(t.seed),
            "trial key": t.key,
            "status": "[green]done[/green]" if t.key in done else "pending",
        }
        table.add_row(str(n), *(v for k, v in cells.items() if varies.get(k, True)))
    console.print(table)
    n_done = sum(t.key in done for t in plan.trials)
    console.print(
        f"{len(plan.trials)} trial(s): {n_done} done, {len(plan.trials) - n_done} pending. "
        f"Output: {plan.output}"
    )
