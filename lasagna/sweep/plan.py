"""The plan of a sweep: every trial (benchmark x system x repeat) with its key, decided
before any model loads.

`build_plan` loads each benchmark once, applies filters then the seeded sample
(`benchmarks`), refuses every (benchmark, system) pair whose track the data cannot support
(all listed in one error; each track says what it needs), and derives each trial's seed and
keys (`keys`). The engine runs `plan.trials`; `--resume` skips those whose `key` is already
in the run folder. `render` prints it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lasagna.errors import Problem, UserError
from lasagna.sweep.benchmarks import PlannedBenchmark, load_benchmarks, selection_of
from lasagna.sweep.keys import comparability_key, trial_key, trial_seed
from lasagna.sweep.naming import unique_names
from lasagna.sweep.profiles import resolve
from lasagna.sweep.render import render_plan
from lasagna.sweep.schema import Sweep, resolve_output
from lasagna.sweep.trial import Plan, Trial
from lasagna.systems import SystemConfig
from lasagna.tracks import get_track, track_problems, tracks

__all__ = ["Plan", "PlannedBenchmark", "Trial", "build_plan", "render_plan", "systems_of"]


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
                field=" / ".join(t.systems_field for t in tracks() if t.plans_questions),
                fix="add retrievers: or generators:, or a profile: (e.g. profile: speed)",
            )
        )
    benchmarks = load_benchmarks(sweep, base_dir)
    _refuse_unsupported(benchmarks, systems)
    judged = ()
    if sweep.judges:
        from lasagna.sweep.judge_plan import judged_generation

        judged = judged_generation(sweep)
    from lasagna.metrics import METRIC_DEFINITIONS_VERSION

    configs = [system.identity() for _, system in systems]
    names = unique_names([system for _, system in systems])
    trials: list[Trial] = []
    for pb in benchmarks:
        selection = selection_of(pb, sweep.seed)
        for (track, system), config, name in zip(systems, configs, names, strict=True):
            judgeable = bool(judged) and get_track(track).judgeable
            if judgeable:
                config = {**config, "judges": [j for _, j in judged]}
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
                        judges=tuple(j for j, _ in judged) if judgeable else (),
                    )
                )
    _refuse_duplicates(trials)
    output = resolve_output(sweep.output, base_dir)
    return Plan(sweep=sweep, base_dir=base_dir, output=output, benchmarks=benchmarks, trials=trials)


def systems_of(sweep: Sweep) -> list[tuple[str, SystemConfig]]:
    """(track, system) for every system of the sweep, track by track in registry order."""
    return [
        (t.name, s) for t in tracks() if t.plans_questions for s in getattr(sweep, t.systems_field)
    ]


def _refuse_unsupported(
    benchmarks: list[PlannedBenchmark], systems: list[tuple[str, SystemConfig]]
) -> None:
    """Every (benchmark, system) pair the data cannot support, in one error."""
    problems: list[Problem] = []
    for pb in benchmarks:
        for track, system in systems:
            for p in track_problems(pb.benchmark, track, getattr(system, "kind", None)):
                label = f"benchmarks[{pb.index}] x {track} system '{system.display_name()}'"
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
                    field=get_track(t.track).systems_field,
                    fix="remove one, or change a setting (a different name: counts)",
                )
            )
        seen.setdefault(t.key, t)
    if problems:
        raise UserError(problems)


def _index_in(sweep: Sweep, track: str, system: SystemConfig) -> int:
    systems = getattr(sweep, get_track(track).systems_field)
    return next(i for i, s in enumerate(systems) if s is system)
