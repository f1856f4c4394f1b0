"""Draws of a sampled model: each repeat samples with its own seed.

Repeat r of a sweep's trial (`trials: N`) and trial index r of an `evaluate()` datapoint
(`trials=N`) are draw r. A model sampling at temperature > 0 samples draw r with
`draw_seed(model.seed, r)`: draw 0 with the model's own seed (a single run is what it
was), every other draw with a seed derived from both. With one seed for every repeat the
draws were the same draw N times (vLLM's per-request seed makes a draw reproducible, and
the model-call cache then served repeats 1..N-1 from repeat 0), and the variance repeats
exist to measure read as zero. Greedy calls (temperature 0) ignore the seed.

Sweeps apply the draw to the trial's system (`for_draw`, every ModelSpec in it) before
its stages are built; `evaluate()` sets the row's draw (`set_draw`) where it sets the
current datapoint, and `lasagna.model` clients read it for requests that name no seed.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, TypeVar

from lasagna.common.digest import json_sha256

T = TypeVar("T")

_DRAW: ContextVar[int] = ContextVar("lasagna_draw", default=0)


def draw_seed(seed: int, draw: int) -> int:
    """The sampling seed of draw `draw` of a model whose seed is `seed` (a 31-bit int)."""
    if draw == 0:
        return seed
    return int(json_sha256({"format": "draw/1", "seed": seed, "draw": draw})[:8], 16) >> 1


def for_draw(value: T, draw: int) -> T:
    """`value` (a system config, or any pydantic model, list or tuple holding ModelSpecs)
    with every ModelSpec's seed set for draw `draw`; the same object for draw 0."""
    from pydantic import BaseModel

    from lasagna.models.spec import ModelSpec

    if draw == 0:
        return value
    if isinstance(value, ModelSpec):
        return value.model_copy(update={"seed": draw_seed(value.seed, draw)})  # type: ignore[return-value]
    if isinstance(value, BaseModel):
        update: dict[str, Any] = {}
        for name in type(value).model_fields:
            old = getattr(value, name)
            new = for_draw(old, draw)
            if new is not old:
                update[name] = new
        return value.model_copy(update=update) if update else value  # type: ignore[return-value]
    if isinstance(value, list | tuple):
        items = [for_draw(item, draw) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return type(value)(items) if changed else value  # type: ignore[return-value]
    return value


def set_draw(draw: int) -> None:
    """The draw of what runs next in this context (evaluate() sets a row's trial index)."""
    _DRAW.set(draw)


def current_draw() -> int:
    """The draw set in this context (0 outside evaluate() rows)."""
    return _DRAW.get()
