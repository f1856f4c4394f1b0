"""What is done with one trial (`place_trial`): one pipeline when its pools fit the cluster
together (lasagna.stages.placement.fits); two phases when it is a judged generation whose
generator and judge engines fit only one after the other (generate, release the
generator's engine, then judge) and no judge is served by the generator's own engine;
otherwise the refusal (exit 2, before any model loads), naming each pool, what it asks, the
capacity (the totals, or the nodes when the totals fit but the nodes do not) and the fix.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from lasagna.errors import Problem, dotted
from lasagna.stages.node_packing import (
    EPS,
    amounts,
    capacity_of,
    described_capacity,
    fits_no_node,
    largest,
    nodes_of,
)
from lasagna.stages.node_packing import num as _num
from lasagna.stages.placement import (
    GENERATE,
    JUDGE,
    Ask,
    counted,
    fits,
    gpus_packed,
    on_nodes,
    phase_asks,
    shortfall,
    splittable,
    summed,
)


@dataclass(frozen=True)
class TrialPlacement:
    """How one trial is placed: in two phases or not, and why it cannot be (problems)."""

    phased: bool = False
    problems: tuple[Problem, ...] = ()
    need: dict[str, float] = field(default_factory=dict)  # the most it holds at once


def place_trial(
    asks: Sequence[Ask], capacity: dict[str, float], label: str = "the trial", where: str = ""
) -> TrialPlacement:
    """One pipeline, two phases, or the refusal (`label`: the system, for the message)."""
    if fits(asks, capacity):
        return TrialPlacement(False, (), summed(asks))
    if splittable(asks):
        phases = [phase_asks(asks, GENERATE), phase_asks(asks, JUDGE)]
        failing = [p for p in phases if not fits(p, capacity)]
        if not failing:
            need = {}
            for p in phases:
                for k, v in summed(p).items():
                    need[k] = max(need.get(k, 0.0), v)
            return TrialPlacement(True, (), need)
        return TrialPlacement(True, (refusal(failing[0], capacity, label, where),))
    return TrialPlacement(False, (refusal(asks, capacity, label, where),))


def refusal(
    asks: Sequence[Ask], capacity: dict[str, float], label: str, where: str = ""
) -> Problem:
    """The problem of a set of pools that cannot coexist: each pool, what it asks, the
    capacity, and the fix (the largest pool asking for less, or fewer actors)."""
    over = shortfall(asks, capacity)
    if not over:
        return _node_refusal(asks, capacity, label, where)
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
        f"has {have}{_WITH_ADDABLE if capacity_of(capacity).addable else ''}, so Ray "
        f"would wait forever: {pools}"
    )
    fix = _or_grow(_fix(asks, over, capacity), capacity)
    return Problem(message, file=where or None, field=_field(asks, over), fix=fix)


_PACKING = " (a share of a GPU is never split across two GPUs)"
_WITH_ADDABLE = " with the nodes its autoscaler can add"


def _or_grow(fix: str, capacity: dict[str, float]) -> str:
    """A node-adding fix, with how an autoscaling cluster says which nodes it can add."""
    cap = capacity_of(capacity)
    if not cap.cluster or cap.addable:
        return fix
    return fix + " (an autoscaling cluster: name what it can add, --max-nodes)"


def _node_refusal(
    asks: Sequence[Ask], capacity: dict[str, float], label: str, where: str
) -> Problem:
    """Pools within the cluster's totals that do not fit on its nodes: one actor bigger
    than any node, or actors that do not pack onto them (Ray places each on one node)."""
    nodes = nodes_of(capacity)
    ask = on_nodes(asks, capacity)
    assert ask is not None
    keys = [k for k, v in summed(asks).items() if v]
    field = _where(ask) if ask.key else None
    more = ", ".join(f"{_num(v)} {k}" for k, v in ask.each.items() if v)
    if fits_no_node(ask.each, nodes):
        too_big = [k for k, v in ask.each.items() if v > largest(nodes, k) + EPS]
        res = too_big[0] if too_big else ""  # none: each is on some node, never all on one
        most = largest(nodes, res)
        message = (
            f"{label}: one actor of the {ask.pool} asks {amounts(ask.each)}, "
            f"{'more than any node has' if too_big else 'and no node has all of it'} "
            f"({described_capacity(capacity, keys)}), so Ray would wait forever"
        )
        if not too_big:
            fix = f"ask for what one node has, or add a node with {more}"
        elif res == "GPU":
            fix = (
                f"give each actor of the {ask.pool} at most {_num(math.floor(most))} GPU "
                f"(num_gpus in {_where(ask)} and the model's tensor_parallel_size), or add a "
                f"node with {more}"
            )
        elif res == "CPU" and ask.key:
            fix = f"ask for less, e.g. {_example(ask, 'num_cpus', most)}, or add a node with {more}"
        else:
            fix = f"ask each actor for at most {_num(most)} {res}, or add a node with {more}"
        return Problem(message, file=where or None, field=field, fix=_or_grow(fix, capacity))
    message = (
        f"{label} fits the cluster's totals ({amounts(summed(asks))}) but not its nodes "
        f"({described_capacity(capacity, keys)}): placed one by one as Ray places them, "
        f"one actor of the {ask.pool} ({amounts(ask.each)}) finds no node with room, so Ray "
        "would wait forever: "
        + "; ".join(f"{a.pool}: {a.actors} x {amounts(a.each)}" for a in asks if a.total())
    )
    less = ask.each.get("CPU", 0.0) - 0.1
    smaller = _fitting(asks, ask, "CPU", less, capacity) if ask.key and less > 0 else None
    if smaller is not None and not ask.each.get("GPU"):
        example = _example(ask, "num_cpus", smaller)
        fix = f"ask for less, e.g. {example}, {_or_fewer(ask)}or add a node"
    elif ask.key:
        fix = f"ask for less in {_where(ask)} or use fewer actors, or add a node with {more}"
    else:
        fix = "ask the other pools for less, so that they pack onto the nodes, or add a node"
    return Problem(message, file=where or None, field=field, fix=_or_grow(fix, capacity))


def _fitting(
    asks: Sequence[Ask], big: Ask, res: str, start: float, capacity: dict[str, float]
) -> float | None:
    """The most (`start` or less, in tenths) each actor of `big` may ask of `res` for
    `asks` to fit: the totals and the nodes; None when even 0.1 does not."""
    value = math.floor(start * 10 + EPS) / 10
    while value >= 0.1 - EPS:
        each = {**big.each, res: value}
        trial = [
            dataclasses.replace(a, each=each)
            if a is big or (big.engine and a.engine == big.engine)
            else a
            for a in asks
        ]
        if fits(trial, capacity):
            return value
        value = round(value - 0.1, 1)
    return None


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
        pools = counted(asks)
        whole = sum(math.ceil(a.each["GPU"] - EPS) * a.actors for a in pools
                    if a.each.get("GPU", 0.0) >= 1 - EPS)  # fmt: skip
        free = max(1.0, capacity.get("GPU", 0.0) - whole)
        shares = sum(a.actors for a in pools if 0 < a.each.get("GPU", 0.0) < 1 - EPS)
        per_gpu = math.ceil(shares / free - EPS)
        share = math.floor(100 / per_gpu) / 100
        if per_gpu > 1 and share < each:
            return (
                f"give each a share that {per_gpu} fit on one GPU, e.g. "
                f"{_example(big, 'num_gpus', share)}, {_or_fewer(big)}{more}"
            )
    smaller = math.floor((each - over[res] / big.actors) * 10 + EPS) / 10
    if smaller >= 0.1 and field_name:  # that much less may still not pack onto the nodes
        smaller = _fitting(asks, big, res, smaller, capacity) or 0.0
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
