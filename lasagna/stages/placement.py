"""Resource planning before Ray starts: which actor pools of a trial must coexist, whether
they fit the cluster, and what to release or refuse when they do not.

Ray waits forever for an actor it cannot place: two 1-CPU model servers on a 2-CPU machine
leave nothing for the 0.5-CPU search actors and the 0.1-CPU tasks of the same pipeline,
and the trial hangs without a word. So every trial's pools are summed first (`Ask`: a pool
of actors and what each asks; tracks say which, `Track.asks`), against the capacity
(`local_capacity`: what an in-process Ray gets; on a cluster, `ray.cluster_resources()`):

- everything fits: the trial runs as one pipeline;
- a judged generation trial whose generator and judge engines do not fit together, but
  each phase does: it runs in two phases (generate, release the generator's engine, then
  judge) unless the judge is served by the generator's own engine;
- otherwise the sweep is refused (exit 2) before any model loads, naming each pool, what it
  asks, the capacity and the fix.

Across trials (`run_decisions`), the engines later trials need are kept loaded and the next
trial's embedders start early only where that still fits; else they are released and
loaded again when needed. Pure functions: the unit tests call them without Ray.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from lasagna.errors import Problem

EPS = 1e-9
ALWAYS, GENERATE, JUDGE = 0, 1, 2  # the phase of a trial in which a pool lives
LIGHT_CPUS = 0.1  # one light task (read, scoring, case building) at a time must fit


@dataclass(frozen=True)
class Ask:
    """One pool of a trial: `actors` actors each asking `each` ({"CPU": 1, "GPU": 0, ...})."""

    pool: str  # what people call it: "generator engine", "search actors"
    key: str | None  # the sweep's `resources:` key sizing it (None: fixed by lasagna)
    actors: int
    each: dict[str, float] = field(default_factory=dict)
    phase: int = ALWAYS  # ALWAYS, or only while generating / judging (judged generation)
    engine: str | None = None  # the run pool's key when it outlives the trial (engines)

    def total(self) -> dict[str, float]:
        return {k: v * self.actors for k, v in self.each.items() if v}


@dataclass(frozen=True)
class TrialPlacement:
    """How one trial is placed: in two phases or not, and why it cannot be (problems)."""

    phased: bool = False
    problems: tuple[Problem, ...] = ()
    need: dict[str, float] = field(default_factory=dict)  # the most it holds at once


@dataclass(frozen=True)
class RunDecision:
    """What the driver does around one trial (`run_decisions`)."""

    phased: bool = False
    keep_later: bool = True  # keep engines later trials need loaded during this trial
    prestart_next: bool = True  # start the next trial's embedders while this one runs
    release: tuple[str, ...] = ()  # loaded engines to close first (a phased trial's judges')


def light_ask(phase: int = ALWAYS) -> Ask:
    return Ask("light tasks (reading, scoring)", None, 1, {"CPU": LIGHT_CPUS}, phase)


def _counted(asks: Sequence[Ask]) -> list[Ask]:
    """`asks` with an engine shared by two asks counted once."""
    out, seen = [], set()
    for ask in asks:
        if ask.engine is not None:
            if ask.engine in seen:
                continue
            seen.add(ask.engine)
        out.append(ask)
    return out


def summed(asks: Sequence[Ask]) -> dict[str, float]:
    """The resources `asks` hold together; engines shared by two asks count once."""
    out: dict[str, float] = {}
    for ask in _counted(asks):
        for k, v in ask.total().items():
            out[k] = out.get(k, 0.0) + v
    return out


def gpus_packed(asks: Sequence[Ask]) -> int:
    """Whole GPUs `asks` occupy together: Ray gives an actor's share below one GPU from a
    single GPU, never split across two, so three 0.6-GPU engines need three GPUs although
    their shares add up to 1.8. Whole-GPU asks add up; shares pack first-fit decreasing."""
    whole, shares = 0, []
    for ask in _counted(asks):
        each = ask.each.get("GPU", 0.0)
        if each >= 1 - EPS:
            whole += math.ceil(each - EPS) * ask.actors
        elif each > 0:
            shares += [each] * ask.actors
    room: list[float] = []  # what is left of each GPU holding shares
    for share in sorted(shares, reverse=True):
        fit = next((i for i, left in enumerate(room) if left >= share - EPS), None)
        if fit is None:
            room.append(1.0 - share)
        else:
            room[fit] -= share
    return whole + len(room)


def shortfall(asks: Sequence[Ask], capacity: dict[str, float]) -> dict[str, float]:
    """Each resource `asks` need beyond `capacity` (empty: they fit); GPUs as packed."""
    need = summed(asks)
    over = {k: v - capacity.get(k, 0.0) for k, v in need.items() if v > capacity.get(k, 0.0) + EPS}
    packed = gpus_packed(asks) if need.get("GPU") else 0
    if "GPU" not in over and packed > capacity.get("GPU", 0.0) + EPS:
        over["GPU"] = packed - capacity.get("GPU", 0.0)
    return over


def _phase(asks: Sequence[Ask], phase: int) -> list[Ask]:
    return [a for a in asks if a.phase in (ALWAYS, phase)]


def splittable(asks: Sequence[Ask]) -> bool:
    """Whether the trial can run generate-then-judge: it has both phases and no judge is
    served by the generator's engine (that engine is then needed in both)."""
    gen = {a.engine for a in asks if a.phase == GENERATE and a.engine}
    judge = {a.engine for a in asks if a.phase == JUDGE and a.engine}
    has_both = any(a.phase == GENERATE for a in asks) and any(a.phase == JUDGE for a in asks)
    return has_both and not (gen & judge)


def place_trial(
    asks: Sequence[Ask], capacity: dict[str, float], label: str = "the trial", where: str = ""
) -> TrialPlacement:
    """One pipeline, two phases, or the refusal (`label`: the system, for the message)."""
    if not shortfall(asks, capacity):
        return TrialPlacement(False, (), summed(asks))
    if splittable(asks):
        phases = [_phase(asks, GENERATE), _phase(asks, JUDGE)]
        failing = [p for p in phases if shortfall(p, capacity)]
        if not failing:
            need = {}
            for p in phases:
                for k, v in summed(p).items():
                    need[k] = max(need.get(k, 0.0), v)
            return TrialPlacement(True, (), need)
        return TrialPlacement(True, (refusal(failing[0], capacity, label, where),))
    return TrialPlacement(False, (refusal(asks, capacity, label, where),))


def _num(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.2f}".rstrip("0")


def amounts(values: dict[str, float]) -> str:
    """`2 CPU, 1 GPU`: the non-zero amounts, as messages show them."""
    return ", ".join(f"{_num(v)} {k}" for k, v in values.items() if v) or "nothing"


def refusal(
    asks: Sequence[Ask], capacity: dict[str, float], label: str, where: str = ""
) -> Problem:
    """The problem of a set of pools that cannot coexist: each pool, what it asks, the
    capacity, and the fix (the largest pool asking for less, or fewer actors)."""
    over = shortfall(asks, capacity)
    need = summed(asks)
    pools = "; ".join(
        f"{a.pool}{f' (resources.{a.key})' if a.key else ''}: {a.actors} x {amounts(a.each)}"
        for a in asks
        if a.total()
    )
    have = amounts({k: capacity.get(k, 0.0) for k in need})
    packing = "GPU" in over and need.get("GPU", 0.0) <= capacity.get("GPU", 0.0) + EPS
    if packing:  # the shares add up to what the cluster has, but do not pack onto its GPUs
        need = {**need, "GPU": float(gpus_packed(asks))}
    message = (
        f"{label} needs {amounts(need)} at once{_PACKING if packing else ''}, the cluster "
        f"has {have}, so Ray would wait forever: {pools}"
    )
    return Problem(
        message, file=where or None, field=_field(asks, over), fix=_fix(asks, over, capacity)
    )


_PACKING = " (a share of a GPU is never split across two GPUs)"


def _field(asks: Sequence[Ask], over: dict[str, float]) -> str | None:
    big = _largest(asks, over)
    return f"resources.{big.key}" if big is not None else None


def _largest(asks: Sequence[Ask], over: dict[str, float]) -> Ask | None:
    """The keyed pool holding most of the first resource short: the one to shrink."""
    res = next(iter(over), "CPU")
    keyed = [a for a in asks if a.key and a.each.get(res, 0.0) > 0]
    return max(keyed, key=lambda a: a.total().get(res, 0.0), default=None)


def _fix(asks: Sequence[Ask], over: dict[str, float], capacity: dict[str, float]) -> str:
    res = next(iter(over), "CPU")
    big = _largest(asks, over)
    more = f"or run on a machine or cluster with more {res}"
    if big is None:
        return f"remove the `resources:` keys that ask for {res}, {more}"
    each = big.each.get(res, 0.0)
    if res == "GPU" and 0 < each < 1:  # shares: as many on each GPU as must share one
        counted = _counted(asks)
        whole = sum(math.ceil(a.each["GPU"] - EPS) * a.actors for a in counted
                    if a.each.get("GPU", 0.0) >= 1 - EPS)  # fmt: skip
        free = max(1.0, capacity.get("GPU", 0.0) - whole)
        shares = sum(a.actors for a in counted if 0 < a.each.get("GPU", 0.0) < 1 - EPS)
        per_gpu = math.ceil(shares / free - EPS)
        share = math.floor(100 / per_gpu) / 100
        if per_gpu > 1 and share < each:
            return (
                f"give each a share that {per_gpu} fit on one GPU, e.g. resources: "
                f"{{{big.key}: {{num_gpus: {_num(share)}}}}}, or fewer actors, {more}"
            )
    field_name = {"CPU": "num_cpus", "GPU": "num_gpus"}.get(res)
    smaller = math.floor((each - over[res] / big.actors) * 10 + EPS) / 10
    fewer = big.actors - math.ceil(over[res] / each - EPS) if each else 0
    # a model engine takes whole GPUs (tensor_parallel_size): fewer actors, not less each
    if fewer >= 1 and res == "GPU":
        return f"use fewer actors, e.g. resources: {{{big.key}: {{actors: {fewer}}}}}, {more}"
    if field_name and smaller >= 0.1:
        return (
            f"ask for less, e.g. resources: {{{big.key}: {{{field_name}: {_num(smaller)}}}}}, "
            f"or fewer actors, {more}"
        )
    if fewer >= 1:
        return f"use fewer actors, e.g. resources: {{{big.key}: {{actors: {fewer}}}}}, {more}"
    name = field_name or f"resources: {{{res}: ...}}"
    return f"lower resources.{big.key}.{name} and the other pools' asks, {more}"


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
        keep = not shortfall([*peak, *kept], capacity)
        nxt = trial_asks[i + 1] if i + 1 < len(trial_asks) else []
        early = [a for a in nxt if a.engine and a.engine.startswith("embed:") and a not in asks]
        held = [*peak, *(kept if keep else [])]
        prestart = not early or not shortfall([*held, *early], capacity)
        release: tuple[str, ...] = ()
        if placed.phased:  # its judges' engines, loaded by an earlier trial, wait outside
            first = {a.engine for a in _phase(asks, GENERATE) if a.engine}
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
    phases = [_phase(asks, GENERATE), _phase(asks, JUDGE)]
    return max(phases, key=lambda p: summed(p).get("CPU", 0.0))
