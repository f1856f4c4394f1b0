"""Resource planning before Ray starts: the pools a trial holds (`Ask`) and whether they
fit the cluster together (`fits`).

Ray waits forever for an actor it cannot place: two 1-CPU model servers on a 2-CPU machine
leave nothing for the 0.5-CPU search actors and the 0.1-CPU tasks of the same pipeline,
and the trial hangs without a word. So every trial's pools are summed first (`Ask`: a pool
of actors and what each asks; tracks say which, `Track.asks`), against the capacity
(`local_capacity`: what an in-process Ray gets; on a cluster, `ray.cluster_resources()` and
each node's own: lasagna.stages.node_packing). What is then done with a trial (one
pipeline, two phases, or refused) is lasagna.stages.trial_placement; across trials,
lasagna.stages.run_decisions. Pure functions: the unit tests call them without Ray.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from lasagna.errors import KeyPath
from lasagna.stages.node_packing import (
    EPS,
    nodes_of,
    unplaced,
)

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


def light_ask(phase: int = ALWAYS) -> Ask:
    return Ask("light tasks (reading, scoring)", None, 1, {"CPU": LIGHT_CPUS}, phase)


def counted(asks: Sequence[Ask]) -> list[Ask]:
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
    for ask in counted(asks):
        for k, v in ask.total().items():
            out[k] = out.get(k, 0.0) + v
    return out


def gpus_packed(asks: Sequence[Ask]) -> int:
    """Whole GPUs `asks` occupy together: Ray gives an actor's share below one GPU from a
    single GPU, never split across two, so three 0.6-GPU engines need three GPUs although
    their shares add up to 1.8. Whole-GPU asks add up; shares pack first-fit decreasing."""
    whole, shares = 0, []
    for ask in counted(asks):
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


def on_nodes(asks: Sequence[Ask], capacity: dict[str, float]) -> Ask | None:
    """The pool of the first actor that finds no node when the trial's actors are placed
    on the cluster's nodes one by one (lasagna.stages.node_packing); None: all are placed."""
    actors = [(a, a.each) for a in counted(asks) if a.total() for _ in range(a.actors)]
    return unplaced(actors, nodes_of(capacity))


def fits(asks: Sequence[Ask], capacity: dict[str, float]) -> bool:
    """Whether `asks` can be held at once: within the totals and packed onto the nodes."""
    return not shortfall(asks, capacity) and on_nodes(asks, capacity) is None


def phase_asks(asks: Sequence[Ask], phase: int) -> list[Ask]:
    return [a for a in asks if a.phase in (ALWAYS, phase)]


def splittable(asks: Sequence[Ask]) -> bool:
    """Whether the trial can run generate-then-judge: it has both phases and no judge is
    served by the generator's engine (that engine is then needed in both)."""
    gen = {a.engine for a in asks if a.phase == GENERATE and a.engine}
    judge = {a.engine for a in asks if a.phase == JUDGE and a.engine}
    has_both = any(a.phase == GENERATE for a in asks) and any(a.phase == JUDGE for a in asks)
    return has_both and not (gen & judge)
