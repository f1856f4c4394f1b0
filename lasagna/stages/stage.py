"""The stage layer: a stage is data, a track's pipeline is a list of stages run by Ray Data.

A `Stage` names its callable (a class: an actor pool whose actors hold a model or an index;
a function: stateless Ray tasks), the constructor kwargs, the sweep resources key its pool
is sized by, the columns it needs and the columns it adds. `check_pipeline` refuses a
pipeline whose stage would read a column nobody made or overwrite one another stage made,
before Ray runs anything; `apply_stages` turns the list into one lazy Ray Data dataset.
This is the shape of Ray Data LLM's Processor (preprocess -> stateful stages -> postprocess).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lasagna.models.spec import StageResources

LIGHT_TASK_CPUS = 0.1  # stateless stages (scoring): cheap tasks that never starve actors


@dataclass(frozen=True)
class Stage:
    """One step of a track's pipeline over batches of rows (pyarrow tables)."""

    name: str
    fn: type | Callable[..., Any]  # a class -> actor pool; a function -> Ray tasks
    inputs: tuple[str, ...]  # columns it reads
    outputs: tuple[str, ...]  # columns it adds (never one an earlier stage made)
    constructor_kwargs: Mapping[str, Any] = field(default_factory=dict)
    fn_kwargs: Mapping[str, Any] = field(default_factory=dict)
    resources: StageResources | None = None  # None: a light stateless task
    resources_key: str | None = None  # the sweep `resources:` key that sized it
    num_gpus: float | None = None  # overrides resources.num_gpus (e.g. tensor parallel)
    drops: tuple[str, ...] = ()  # columns it removes (inputs only it needed)
    whole_blocks: bool = False  # one call per input block instead of resources.batch_size

    @property
    def stateful(self) -> bool:
        return isinstance(self.fn, type)


class PipelineError(ValueError):
    """A pipeline whose stages do not fit together (a bug in a track, not in user data)."""


def check_pipeline(stages: Sequence[Stage], columns: Sequence[str]) -> list[str]:
    """The columns after every stage; PipelineError when a stage reads a missing column or
    adds one that already exists (two stages never overwrite each other's columns)."""
    have = list(columns)
    for stage in stages:
        missing = [c for c in stage.inputs if c not in have]
        if missing:
            raise PipelineError(f"stage '{stage.name}' needs column(s) {missing}; have {have}")
        clash = [c for c in stage.outputs if c in have]
        if clash:
            raise PipelineError(f"stage '{stage.name}' would overwrite column(s) {clash}")
        have = [c for c in have if c not in stage.drops] + list(stage.outputs)
    return have


def spread_over_actors(stages: Sequence[Stage], rows: int) -> tuple[int, list[Stage]]:
    """(the most rows an input block may hold, the stages with batches no larger), so that
    every actor of the largest pool gets work. Ray Data hands each block to one actor and
    bundles blocks up to a stage's batch_size first: 5 rows in batches of 64 reached a RAG
    pool of 2 model servers as one input, and one server stayed idle. Large inputs are
    untouched (each actor already gets batch_size rows or more)."""
    actors = max((s.resources.actors for s in stages if s.stateful and s.resources), default=1)
    cap = max(1, -(-rows // actors))

    def capped(stage: Stage) -> Stage:
        res = stage.resources
        if not stage.stateful or res is None or res.batch_size <= cap:
            return stage
        return replace(stage, resources=res.model_copy(update={"batch_size": cap}))

    return cap, [capped(s) for s in stages]


def map_kwargs(stage: Stage) -> dict[str, Any]:
    """The `Dataset.map_batches` arguments of a stage."""
    kwargs: dict[str, Any] = {"batch_format": "pyarrow"}
    if stage.fn_kwargs:
        kwargs["fn_kwargs"] = dict(stage.fn_kwargs)
    if stage.stateful:
        from lasagna.stages.actors import actor_options, actor_pool

        res = stage.resources or StageResources()
        kwargs |= actor_options(res, stage.num_gpus) | {
            "fn_constructor_kwargs": dict(stage.constructor_kwargs),
            "compute": actor_pool(res.actors),
            "batch_size": None if stage.whole_blocks else res.batch_size,
        }
    else:
        from lasagna.stages.actors import TASK_RETRIES

        kwargs |= {"num_cpus": LIGHT_TASK_CPUS, "batch_size": None, "max_retries": TASK_RETRIES}
    return kwargs


def map_batches(ds: Any, fn: Any, **kwargs: Any) -> Any:
    """`ds.map_batches`, without Ray 2.60's deprecation warning for the restart settings:
    `max_restarts`, `max_task_retries` and `max_retries` have no named parameter yet."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        return ds.map_batches(fn, **kwargs)


def apply_stage(ds: Any, stage: Stage) -> Any:
    return map_batches(ds, stage.fn, **map_kwargs(stage))


def apply_stages(ds: Any, stages: Sequence[Stage]) -> Any:
    """The lazy dataset of `ds` through every stage, in order."""
    for stage in stages:
        ds = apply_stage(ds, stage)
    return ds
