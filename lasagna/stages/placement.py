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

Across trials, lasagna.stages.run_decisions. Pure functions: the unit tests call them
without Ray.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from lasagna.errors import KeyPath, Problem, dotted

EPS = 1e-9
ALWAYS, GENERATE, JUDGE = 0, 1, 2  # the phase of a trial in which a pool lives
LIGHT_CPUS = 0.1  # one light task (read, scoring, case building) at a time must fit


@dataclass(frozen=True)
class Ask:
    """One pool of a trial: `actors` actors each asking `each` ({"CPU": 1, "GPU": 0, ...})."""

    pool: str  # what people call it: "generator engine", "search actors"
    key: str | None  # the `resources:` key sizing it (None: fixed by lasagna)
    actors: int
    each: dict[str, float] = field(default_factory=dict)
    phase: int = ALWAYS  # ALWAYS, or only while generating / judging (judged generation)
    engine: str | None = None  # the run pool's key when it outlives the trial (engines)
    sized_by: str = "sweep"  # "sweep": its `resources.<key>`; "evaluate": evaluate()'s
    # `resources=` and `actors=` arguments (key "executor")
    at: KeyPath = ()  # where its resources sit in the system: ("model", "resources")
    # the sweep's path of those resources when the user wrote them on the system
    # (("generators", 0, "model", "resources")): they win over `resources.<key>`
    own: KeyPath = ()

    def total(self) -> dict[str, float]:
        return {k: v * self.actors for k, v in self.each.items() if v}


@dataclass(frozen=True)
class TrialPlacement:
    """How one trial is placed: in two phases or not, and why it cannot be (problems)."""

    phased: bool = False
    problems: tuple[Problem, ...] = ()
    need: dict[str, float] = field(default_factory=dict)  # the most it holds at once


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


def phase_asks(asks: Sequence[Ask], phase: int) -> list[Ask]:
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
        phases = [phase_asks(asks, GENERATE), phase_asks(asks, JUDGE)]
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
        f"{a.pool}{f' ({_where(a)})' if a.key else ''}: {a.actors} x {amounts(a.each)}"
        for a in asks
        if a.total()
    )
    have = ", ".join(  # "no GPU" rather than nothing where the cluster has none
        f"{_num(capacity.get(k, 0.0))} {k}" if capacity.get(k, 0.0) else f"no {k}"
        for k, v in need.items()
        if v
    )
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


def _where(ask: Ask) -> str:
    """Where the user sizes `ask` (a keyed one): the system's own resources where the user
    wrote them, `resources.<key>`, or evaluate()'s `resources=`."""
    if ask.own:
        return dotted(ask.own)
    return "resources=" if ask.sized_by == "evaluate" else f"resources.{ask.key}"


def _example(ask: Ask, name: str, value: float) -> str:
    """The setting that gives `ask` `name` = `value`, as the user writes it."""
    if ask.sized_by == "evaluate":
        if name == "actors":
            return f"evaluate(..., actors={_num(value)})"
        return f"evaluate(..., resources={{'{name}': {_num(value)}}})"
    if ask.own:
        return f"{name}: {_num(value)} in {dotted(ask.own)}"
    return f"resources: {{{ask.key}: {{{name}: {_num(value)}}}}}"


def _or_fewer(ask: Ask) -> str:
    return "or fewer actors, " if ask.actors > 1 else ""


def _field(asks: Sequence[Ask], over: dict[str, float]) -> str | None:
    big = _largest(asks, over)
    if big is None:
        return None
    return "resources" if big.sized_by == "evaluate" else _where(big)


def _largest(asks: Sequence[Ask], over: dict[str, float]) -> Ask | None:
    """The keyed pool holding most of the first resource short: the one to shrink."""
    res = next(iter(over), "CPU")
    keyed = [a for a in asks if a.key and a.each.get(res, 0.0) > 0]
    return max(keyed, key=lambda a: a.total().get(res, 0.0), default=None)


def _fix(asks: Sequence[Ask], over: dict[str, float], capacity: dict[str, float]) -> str:
    res = next(iter(over), "CPU")
    big = _largest(asks, over)
    more = f"or run on a machine or cluster with {'more' if capacity.get(res) else 'a'} {res}"
    if big is None and any(a.sized_by == "evaluate" for a in asks):
        return f"give the evaluators' models less (ModelSpec(resources=...)), {more}"
    if big is None:
        return f"remove the `resources:` keys that ask for {res}, {more}"
    each = big.each.get(res, 0.0)
    field_name = {"CPU": "num_cpus", "GPU": "num_gpus"}.get(res)
    if not capacity.get(res):  # none at all: only asking for none fits
        where = "evaluate()'s resources=" if big.sized_by == "evaluate" else _where(big)
        name = field_name or f"resources.{res}"
        return f"ask for no {res} (take {name} out of {where}), {more}"
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
                f"give each a share that {per_gpu} fit on one GPU, e.g. "
                f"{_example(big, 'num_gpus', share)}, {_or_fewer(big)}{more}"
            )
    smaller = math.floor((each - over[res] / big.actors) * 10 + EPS) / 10
    fewer = big.actors - math.ceil(over[res] / each - EPS) if each else 0
    # a model engine takes whole GPUs (tensor_parallel_size): fewer actors, not less each
    if fewer >= 1 and res == "GPU":
        return f"use fewer actors, e.g. {_example(big, 'actors', fewer)}, {more}"
    if field_name and smaller >= 0.1:
        return f"ask for less, e.g. {_example(big, field_name, smaller)}, {_or_fewer(big)}{more}"
    if fewer >= 1:
        return f"use fewer actors, e.g. {_example(big, 'actors', fewer)}, {more}"
    name = field_name or f"resources: {{{res}: ...}}"
    if big.sized_by == "evaluate":
        return f"lower {name} in evaluate()'s resources= and the other pools' asks, {more}"
    return f"lower {_where(big)}.{name} and the other pools' asks, {more}"
