"""The placement of a plan's trials on the cluster, before any model loads: the problems
(`placement_problems`: pools that can never coexist, refused with exit 2 by `plan` and
`run`), the lines `benchmark plan` prints (`placement_lines`), and what the driver does
around each trial (`run_decisions`). The arithmetic is in lasagna.stages.placement and
lasagna.stages.run_decisions; the tracks say which pools a trial holds (`Track.asks`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from lasagna.errors import Problem, UserError, undotted
from lasagna.stages.node_packing import amounts, capacity_of, described
from lasagna.stages.placement import Ask
from lasagna.stages.run_decisions import RunDecision
from lasagna.stages.run_decisions import run_decisions as decide
from lasagna.stages.trial_placement import TrialPlacement, place_trial

Trial = Any  # a plan's Trial (lasagna.sweep.trial), or anything with its track, system,
# system_index, system_name and judges: the plan refuses before its trials exist too

TITLE = "these trials cannot be placed on the cluster (nothing was run):"


def trial_asks(
    trial: Trial, resources: Any, capacity: dict[str, float], source: Any = None
) -> list[Ask]:
    """The pools `trial` holds, with the sweep's stage defaults applied."""
    from lasagna.tracks import get_track

    track = get_track(trial.track)
    system = trial.system.with_resources(resources)
    asks = track.asks(system, trial, resources, capacity.get("GPU", 0.0))
    return [_on_system(ask, trial, track.systems_field, source) for ask in asks]


def _on_system(ask: Ask, trial: Trial, systems_field: str, source: Any) -> Ask:
    """`ask` pointing at the system's own resources when the user wrote them there: they
    win over the sweep's `resources.<key>`, so that is what a refusal must name (as the
    sweep file spells it when `source` knows: a grid's item)."""
    if not ask.at or ask.sized_by != "sweep":
        return ask
    owner = trial.system
    for part in ask.at[:-1]:
        owner = owner[part] if isinstance(part, int) else getattr(owner, part, None)
    if ask.at[-1] not in getattr(owner, "model_fields_set", ()):
        return ask
    own = (systems_field, trial.system_index, *ask.at)
    return dataclasses.replace(ask, own=source.original(own) if source is not None else own)


def _label(trial: Trial) -> str:
    judges = f" judged by {', '.join(j.benchmark for j in trial.judges)}" if trial.judges else ""
    return f"{trial.track} system '{trial.system_name}'{judges}"


def placements(
    trials: Sequence[Trial], resources: Any, capacity: dict[str, float], source: Any = None
) -> list[tuple[Trial, TrialPlacement]]:
    """Each distinct system's placement (repeats and benchmarks place alike)."""
    out, seen = [], set()
    for trial in trials:
        marker = (trial.track, trial.system_index, trial.system_name)
        if marker in seen:
            continue
        seen.add(marker)
        asks = trial_asks(trial, resources, capacity, source)
        if asks:
            out.append((trial, place_trial(asks, capacity, _label(trial))))
    return out


def placement_problems(
    trials: Sequence[Trial], resources: Any, capacity: dict[str, float], source: Any = None
) -> list[Problem]:
    """Every system whose pools cannot be placed even one phase at a time, each placed on
    the line that sized the pool (the sweep's `resources:` or the system's own) when
    `source` (lasagna.sweep.yamlsrc.SweepSource) has it."""
    problems = []
    for _, placed in placements(trials, resources, capacity, source):
        for p in placed.problems:
            if source is not None and p.field:
                file, where = source.locate(undotted(p.field), expanded=False)
                p = dataclasses.replace(p, file=file, where=where)
            if p not in problems:  # a grid's systems share the line that sized them
                problems.append(p)
    return problems


def check_placement(
    trials: Sequence[Trial], resources: Any, capacity: dict[str, float], source: Any = None
) -> None:
    problems = placement_problems(trials, resources, capacity, source)
    if problems:
        raise UserError(problems, title=TITLE)


def placement_lines(
    trials: Sequence[Trial], resources: Any, capacity: dict[str, float], address: Any = None
) -> list[str]:
    """What `benchmark plan` prints: the capacity, then each system's peak and phases."""
    cap = capacity_of(capacity)
    shown = amounts({k: cap.live_totals[k] for k in ("CPU", "GPU") if k in cap.live_totals})
    if len(cap.live) > 1:
        shown += f" on {len(cap.live)} nodes"
    if cap.addable:
        shown += f"; the autoscaler can add {described(cap.addable, ('CPU', 'GPU'))}"
    where = f"the cluster at {address}" if address else "an in-process Ray on this machine"
    lines = [f"placement on {where} ({shown}):"]
    systems_by_how: dict[str, list[str]] = {}  # a grid's systems placed alike: one line
    for trial, placed in placements(trials, resources, capacity):
        if placed.problems:
            how = "cannot be placed (refused, see below)"
        elif placed.phased:
            how = f"two phases (generate, release, judge), {amounts(placed.need)} at most"
        else:
            how = f"one pipeline, {amounts(placed.need)} at once"
        judged = f" + {', '.join(j.benchmark for j in trial.judges)}" if trial.judges else ""
        systems = systems_by_how.setdefault(how, [])
        if f"{trial.system_name}{judged}" not in systems:  # repeats: once
            systems.append(f"{trial.system_name}{judged}")
    for how, systems in systems_by_how.items():
        named = (
            ", ".join(systems) if len(systems) <= 2 else f"{systems[0]} and {len(systems) - 1} more"
        )
        lines.append(f"  {named}: {how}")
    return lines


def run_decisions(
    trials: Sequence[Trial], resources: Any, capacity: dict[str, float]
) -> list[RunDecision]:
    """What the driver does around each trial, in run order; UserError (before any model
    loads) when a trial cannot be placed on this cluster at all."""
    check_placement(trials, resources, capacity)
    asks = [trial_asks(t, resources, capacity) for t in trials]
    return decide(asks, capacity)
