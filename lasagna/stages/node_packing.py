"""Whether a trial's actors fit on the cluster's nodes, not just in its totals.

Ray places each actor on one node: an engine asking 2 GPUs waits forever on a cluster of
two 1-GPU nodes although the cluster has 2 GPUs, and three 1.2-CPU actors do not fit on two
2-CPU nodes although 3.6 < 4. So after the totals (lasagna.stages.placement.shortfall),
the actors are packed first-fit decreasing onto the nodes, as Ray's scheduler places them
one by one: the largest first, each on the first node with room (a GPU share on one GPU of
that node, whole GPUs free on one node). A capacity without nodes is one node. Pure
functions: the unit tests call them without Ray.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

EPS = 1e-9
T = TypeVar("T")


class Capacity(dict):
    """What a trial is checked against: the cluster's totals (a dict, as
    `ray.cluster_resources()` gives them) and each node's own resources (`nodes`): the live
    ones, then those an autoscaler can still add (`addable`, lasagna.stages.autoscaling),
    which the totals include."""

    def __init__(
        self,
        totals: dict[str, float],
        nodes: Sequence[dict[str, float]] = (),
        addable: Sequence[dict[str, float]] = (),
        cluster: bool = False,
    ):
        self.live: tuple[dict[str, float], ...] = tuple(dict(n) for n in nodes) or (dict(totals),)
        self.live_totals = dict(totals)  # the live nodes' sum: what runs now
        self.addable: tuple[dict[str, float], ...] = tuple(dict(n) for n in addable)
        totals = dict(totals)
        for node in self.addable:
            for k, v in node.items():
                totals[k] = totals.get(k, 0.0) + v
        super().__init__(totals)
        self.nodes: tuple[dict[str, float], ...] = self.live + self.addable
        self.cluster = cluster  # a cluster named by its address (not an in-process Ray)


def capacity_of(capacity: dict[str, float]) -> Capacity:
    """`capacity` as a Capacity: a plain dict of totals (unit tests, callers that only
    know the sum) is one live node, with nothing to add."""
    return capacity if isinstance(capacity, Capacity) else Capacity(capacity)


def nodes_of(capacity: dict[str, float]) -> tuple[dict[str, float], ...]:
    """The nodes of `capacity`, live then addable; a plain dict of totals is one node."""
    return capacity_of(capacity).nodes


@dataclass
class _Room:
    """What is left on one node: its resources, and each whole GPU's free fraction."""

    free: dict[str, float]
    gpus: list[float]

    @classmethod
    def of(cls, node: dict[str, float]) -> _Room:
        free = {k: v for k, v in node.items() if k != "GPU"}
        return cls(free, [1.0] * int(math.floor(node.get("GPU", 0.0) + EPS)))

    def take(self, each: dict[str, float]) -> bool:
        """Place one actor asking `each` here if it fits (then its resources are taken)."""
        if any(self.free.get(k, 0.0) + EPS < v for k, v in each.items() if k != "GPU" and v):
            return False
        gpu = each.get("GPU", 0.0)
        if gpu >= 1 - EPS:
            idle = [i for i, left in enumerate(self.gpus) if left >= 1 - EPS]
            if len(idle) < math.ceil(gpu - EPS):
                return False
            for i in idle[: math.ceil(gpu - EPS)]:
                self.gpus[i] = 0.0
        elif gpu > 0:
            fit = next((i for i, left in enumerate(self.gpus) if left + EPS >= gpu), None)
            if fit is None:
                return False
            self.gpus[fit] -= gpu
        for k, v in each.items():
            if k != "GPU" and v:
                self.free[k] -= v
        return True


def unplaced(
    actors: Sequence[tuple[T, dict[str, float]]], nodes: Sequence[dict[str, float]]
) -> T | None:
    """The first of `actors` ((what it is, what it asks)) that finds no node when they are
    placed first fit decreasing on `nodes`; None when every one is placed."""
    rooms = [_Room.of(n) for n in nodes]
    order = sorted(
        actors, key=lambda a: (a[1].get("GPU", 0.0), sum(v for v in a[1].values())), reverse=True
    )
    for name, each in order:
        if not any(room.take(each) for room in rooms):
            return name
    return None


def fits_no_node(each: dict[str, float], nodes: Sequence[dict[str, float]]) -> bool:
    """Whether one actor asking `each` is too big for every node, even an empty one."""
    return unplaced([(True, each)], nodes) is not None


def largest(nodes: Sequence[dict[str, float]], key: str) -> float:
    """The most any one node has of `key`."""
    return max((n.get(key, 0.0) for n in nodes), default=0.0)


def described(nodes: Sequence[dict[str, float]], keys: Sequence[str]) -> str:
    """`2 nodes with 2 CPU, 1 GPU; 1 node with 4 CPU, no GPU`: the nodes by what they have
    of `keys` (the resources asked for), alike nodes counted together."""
    shapes: dict[str, int] = {}
    for node in nodes:
        have = ", ".join(
            f"{num(node.get(k, 0.0))} {k}" if node.get(k, 0.0) else f"no {k}" for k in keys
        )
        shapes[have] = shapes.get(have, 0) + 1
    alike = sorted(shapes.items())  # not in the order Ray lists them: the same every time
    return "; ".join(f"{n} node{'s' if n > 1 else ''} with {have}" for have, n in alike)


def described_capacity(capacity: dict[str, float], keys: Sequence[str]) -> str:
    """`described` for the live nodes, then what the autoscaler can add: `2 nodes with 2
    CPU, 1 GPU; the autoscaler can add 2 nodes with 8 CPU, 1 GPU`."""
    cap = capacity_of(capacity)
    text, add = described(cap.live, keys), cap.addable
    return text + (f"; the autoscaler can add {described(add, keys)}" if add else "")


def num(x: float) -> str:
    """`2`, `0.5`, `0.33`: an amount as messages show it (a sum of fractions that lands a
    hair off a whole number, 1.9999999, is `2`, not `2.`)."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def amounts(values: dict[str, float]) -> str:
    """`2 CPU, 1 GPU`: the non-zero amounts, as messages show them."""
    return ", ".join(f"{num(v)} {k}" for k, v in values.items() if v) or "nothing"
