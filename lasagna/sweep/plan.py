"""The plan of a sweep: every trial (benchmark x system x repeat) of every track, with its
key, decided before any model loads.

`build_plan` loads each benchmark once (question data, or judge test-case files for a
judges-only sweep: each track says what it `reads`), applies filters then the seeded sample
(`benchmarks`, `judge_plan`), refuses every (benchmark, system) pair the data cannot
support (all listed in one error; each track says why), and derives each trial's seed and
keys (`keys`) the same way for every track. The engine runs `plan.trials`; `--resume` skips
those whose `key` is already in the run folder. `lasagna.sweep.render` prints it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lasagna.errors import Problem, UserError
from lasagna.sweep.benchmarks import PlannedBenchmark, load_benchmarks, selection_of
from lasagna.sweep.judge_plan import judged_generation, load_judge_files
from lasagna.sweep.keys import comparability_key, trial_key, trial_seed
from lasagna.sweep.profiles import resolve
from lasagna.sweep.schema import Sweep, resolve_output
from lasagna.sweep.trial import Plan, Trial
from lasagna.systems import JudgeSystem, SystemConfig
from lasagna.systems.labels import system_labels
from lasagna.tracks import QUESTIONS, TEST_CASES, Track, get_track, track_problems, tracks

__all__ = ["Plan", "PlannedBenchmark", "Trial", "build_plan", "systems_of"]


def build_plan(
    sweep: Sweep,
    base_dir: Path,
    label_columns: tuple[str, ...] = (),
    *,
    check_models: bool = False,
    capacity: dict[str, float] | None = None,
) -> Plan:
    """Every trial of the sweep, or one UserError listing everything that is wrong: the
    data, the (data, system) pairs, the judges, and with `check_models` every model (looked
    up, not converted), with `capacity` (the cluster's resources) every trial's placement.
    `label_columns`: extra columns a judge file may hold (human labels, for calibrate).
    The keys record where each engine runs as the pools will place it on `capacity`
    (lasagna.models.gpus; without one, on this machine)."""
    from lasagna.models.gpus import planned_on

    with planned_on(capacity):
        return _plan(sweep, base_dir, label_columns, check_models, capacity)


def _plan(
    sweep: Sweep,
    base_dir: Path,
    label_columns: tuple[str, ...],
    check_models: bool,
    capacity: dict[str, float] | None,
) -> Plan:
    from lasagna.metrics import METRIC_DEFINITIONS_VERSION

    sweep = resolve(sweep)
    systems = systems_of(sweep)
    if not systems:
        raise UserError(
            Problem(
                "the sweep names no systems to run",
                field=" / ".join(t.systems_field for t in tracks() if t.reads == QUESTIONS),
                fix="add retrievers: or generators:, or a profile: (e.g. profile: speed)",
            )
        )
    reads = get_track(systems[0][0]).reads
    refused: list[UserError] = []  # every kind of problem, reported together
    benchmarks: list[PlannedBenchmark] = []
    try:
        if reads == QUESTIONS:
            benchmarks = load_benchmarks(sweep, base_dir)
        else:  # a judges: sweep on test-case files
            benchmarks = load_judge_files(sweep, base_dir, label_columns)
        _refuse_unsupported(benchmarks, systems)
    except UserError as err:
        refused.append(err)
    judged: list[tuple[JudgeSystem, dict]] = []
    if sweep.judges and reads == QUESTIONS:  # the judges score the generators' answers
        try:
            judged = judged_generation(sweep)
        except UserError as err:
            refused.append(err)
    if check_models:
        from lasagna.sweep.model_checks import model_problems

        found = model_problems(sweep)
        if found:
            refused.append(UserError(found, title=MODELS_TITLE))
    if capacity is not None:
        found = _placement_problems(sweep, systems, capacity)
        if found:
            refused.append(UserError(found, title=PLACEMENT_TITLE))
    if refused:
        raise _together(refused)
    trials: list[Trial] = []
    for pb in benchmarks:
        selection = selection_of(pb, sweep.seed)
        data = pb.benchmark
        for track_name, system in systems:
            track = get_track(track_name)
            config = system.identity()
            judges = tuple(j for j, _ in judged) if track.judgeable else ()
            if judges:
                config = {**config, "judges": [c for _, c in judged]}
            group = comparability_key(
                dataset_name=data.name,
                dataset_revision=data.revision,
                corpus_provenance=data.corpus_provenance,
                track=track.group_track(system),
                metric_definitions_version=METRIC_DEFINITIONS_VERSION,
                **selection,
            )
            for repeat in range(sweep.trials):
                seed = trial_seed(sweep.seed, repeat)
                key = trial_key(
                    dataset_revision=data.revision,
                    selection=selection,
                    track=track_name,
                    system_config=config,
                    seed=seed,
                    metric_definitions_version=METRIC_DEFINITIONS_VERSION,
                )
                trials.append(
                    Trial(
                        key=key,
                        comparability_key=group,
                        benchmark_index=pb.index,
                        benchmark_name=data.name,
                        track=track_name,
                        system=system,
                        system_name="",  # the group's label, below
                        system_index=_index_in(sweep, track_name, system),
                        seed=seed,
                        repeat=repeat,
                        selection=selection,
                        system_config=config,
                        judges=judges,
                    )
                )
    trials = _labelled(trials)
    _refuse_duplicates(trials)
    output = resolve_output(sweep.output, base_dir)
    return Plan(sweep=sweep, base_dir=base_dir, output=output, benchmarks=benchmarks, trials=trials)


_REFUSED = "refused before any model loads: "
MODELS_TITLE = "these models cannot be used (nothing was run):"
PLACEMENT_TITLE = "these trials cannot be placed on the cluster (nothing was run):"


def _together(refused: list[UserError]) -> UserError:
    """One error of every problem found (one kind: that error as it was)."""
    if len(refused) == 1:
        return refused[0]
    lines = [p for err in refused for p in err.problems]
    kinds = "; ".join(_kind_of(err.title) for err in refused if err.title)
    return UserError(lines, title=f"{_REFUSED}{len(lines)} problem(s) ({kinds}):")


def _kind_of(title: str) -> str:
    """A refusal's title as one kind among several, without the words the joint title
    already says ("refused before any model loads", "nothing was run")."""
    return title.rstrip(":").removeprefix(_REFUSED).removesuffix(" (nothing was run)")


def _placement_problems(
    sweep: Sweep, systems: list[tuple[str, SystemConfig]], capacity: dict[str, float]
) -> list[Problem]:
    """Each system whose pools cannot be placed on `capacity` (lasagna.tracks.placement),
    on the line of its `resources:` key; the judges of judged generation count with it."""
    from types import SimpleNamespace

    from lasagna.tracks.placement import placement_problems

    judges = (
        tuple(sweep.judges) if sweep.judges and get_track(systems[0][0]).reads == QUESTIONS else ()
    )
    entries = [
        SimpleNamespace(
            track=track,
            system=system,
            system_index=_index_in(sweep, track, system),
            system_name=system.display_name(),
            judges=judges if get_track(track).judgeable else (),
        )
        for track, system in systems
    ]
    return placement_problems(entries, sweep.resources, capacity, sweep.source)


def systems_of(sweep: Sweep) -> list[tuple[str, SystemConfig]]:
    """(track, system) for every system of the sweep, track by track in registry order.

    The systems of the question tracks when there are any (a sweep's judges then score the
    generators' answers), else those of the tracks that read other data (judges on
    test-case files)."""
    for reads in (QUESTIONS, TEST_CASES):
        found = [(t.name, s) for t in tracks() if t.reads == reads for s in _systems(sweep, t)]
        if found:
            return found
    return []


def _systems(sweep: Sweep, track: Track) -> list[SystemConfig]:
    return list(getattr(sweep, track.systems_field))


def _refuse_unsupported(
    benchmarks: list[PlannedBenchmark], systems: list[tuple[str, SystemConfig]]
) -> None:
    """Every (benchmark, system) pair the data cannot support, in one error; each system
    named by its place in the sweep and its label (two RAG systems over different retrievers
    differ there, not in their display name)."""
    names: dict[int, str] = {}  # id(system) -> "generators[2] 'rag retriever=dense'"
    for track in {t for t, _ in systems}:
        members = [s for t, s in systems if t == track]
        labels = system_labels([s.identity() for s in members])
        field = get_track(track).systems_field
        for i, (s, label) in enumerate(zip(members, labels, strict=True)):
            names[id(s)] = f"{field}[{i}] '{label}'"
    problems: list[Problem] = []
    for pb in benchmarks:
        for track, system in systems:
            kind = getattr(system, "kind", None)
            for p in track_problems(pb.benchmark, track, kind, system):
                label = f"benchmarks[{pb.index}] x {names[id(system)]}"
                problems.append(dataclasses.replace(p, message=f"{label}: {p.message}"))
    if problems:
        raise UserError(
            problems,
            title=f"{_REFUSED}{len(problems)} (benchmark, system) pair(s) the data cannot support",
        )


def _labelled(trials: list[Trial]) -> list[Trial]:
    """Each trial named by its system's label within its comparability group
    (lasagna.systems.labels: the same function the results tables use)."""
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(trials):
        groups.setdefault(t.comparability_key, []).append(i)
    names = [""] * len(trials)
    for members in groups.values():
        labels = system_labels([trials[i].system_config for i in members])
        for i, label in zip(members, labels, strict=True):
            names[i] = label
    return [dataclasses.replace(t, system_name=n) for t, n in zip(trials, names, strict=True)]


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
    return next(i for i, s in enumerate(_systems(sweep, get_track(track))) if s is system)
