"""What the driver does around each trial of a run, in run order (`run_decisions`): the
engines later trials need are kept loaded and the next trial's embedders start early only
where that still fits beside the trial's own pools (lasagna.stages.placement: the asks and
their arithmetic); else they are released and loaded again when needed. Pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lasagna.stages.placement import (
    GENERATE,
    JUDGE,
    Ask,
    fits,
    phase_asks,
    summed,
)
from lasagna.stages.trial_placement import place_trial


@dataclass(frozen=True)
class RunDecision:
    """What the driver does around one trial (`run_decisions`)."""

    phased: bool = False
    keep_later: bool = True  # keep engines later trials need loaded during this trial
    prestart_next: bool = True  # start the next trial's embedders while this one runs
    release: tuple[str, ...] = ()  # loaded engines to close first (a phased trial's judges')


def run_decisions(
    trial_asks: Sequence[Sequence[Ask]], capacity: dict[str, float]
) -> list[RunDecision]:
    """For each trial in run order: phased or not, whether the engines later trials need
    stay loaded during it, and whether the next trial's embedders may start early."""
    decisions = []
    loaded: dict[str, Ask] = {}  # engines loaded by earlier trials (and kept)
    for i, asks in enumerate(trial_asks):
        placed = place_trial(asks, capacity)
        own = {a.engine for a in asks if a.engine}
        later = {a.engine for rest in trial_asks[i + 1 :] for a in rest if a.engine}
        kept = [a for k, a in loaded.items() if k in later and k not in own]
        peak = _peak(asks, placed.phased)
        keep = fits([*peak, *kept], capacity)
        nxt = trial_asks[i + 1] if i + 1 < len(trial_asks) else []
        early = [a for a in nxt if a.engine and a.engine.startswith("embed:") and a not in asks]
        held = [*peak, *(kept if keep else [])]
        prestart = not early or fits([*held, *early], capacity)
        release: tuple[str, ...] = ()
        if placed.phased:  # its judges' engines, loaded by an earlier trial, wait outside
            first = {a.engine for a in phase_asks(asks, GENERATE) if a.engine}
            release = tuple(k for k in loaded if k in own and k not in first)
        decisions.append(RunDecision(placed.phased, keep, prestart, release))
        if not keep:
            loaded = {}
        for k in release:
            loaded.pop(k, None)
        for a in asks:
            if a.engine:
                loaded[a.engine] = a
        if placed.phased:  # the generator's engine was released before judging
            for a in asks:
                if a.engine and a.phase == GENERATE:
                    loaded.pop(a.engine, None)
    return decisions


def _peak(asks: Sequence[Ask], phased: bool) -> list[Ask]:
    """The pools of the trial's most demanding moment (its larger phase when phased)."""
    if not phased:
        return list(asks)
    phases = [phase_asks(asks, GENERATE), phase_asks(asks, JUDGE)]
    return max(phases, key=lambda p: summed(p).get("CPU", 0.0))
