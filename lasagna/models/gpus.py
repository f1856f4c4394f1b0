"""How many GPUs a chat model's engine takes: one rule for the pools that place the engines
(lasagna.stages.pools) and for the trial keys, which record the dtype the engine runs in
(lasagna.models.identity: `dtype: auto` is bfloat16 on a GPU, float32 on most CPUs). Two
rules would let a key say float32 for an engine that runs bfloat16 on a GPU.

The rule depends on the cluster's GPUs (a local model whose resources leave `num_gpus` out
takes one on a cluster that has them; `num_gpus: 0` written out keeps it on CPUs). At run
time that is the connected cluster; when a plan is built, the capacity it is checked
against (`planned_on`: the cluster read by a short connection for `--address` /
RAY_ADDRESS, or this machine), which build_plan sets while it derives the keys; without
one, this machine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from lasagna.models.registry import is_local

if TYPE_CHECKING:
    from lasagna.models.spec import ModelSpec

_PLANNED: ContextVar[float | None] = ContextVar("lasagna_planned_gpus", default=None)


def engine_gpus(spec: ModelSpec, cluster_gpus: float) -> float:
    """GPUs per engine actor: the configured number (a fraction below 1 shares a GPU between
    engines), at least tensor_parallel_size when on GPUs and not a fraction.

    A local model on a cluster with GPUs gets tensor_parallel_size GPUs when its resources
    leave num_gpus out, so a plain config runs on the users' GPU clusters; `num_gpus: 0`
    written out (in the model's resources or the sweep's stage default) keeps the engine on
    CPUs, e.g. a small judge that leaves the GPU to the generator. API models never take one.
    """
    res = spec.resources
    if not is_local(spec.backend):
        return 0.0
    if 0 < res.num_gpus < 1 and spec.tensor_parallel_size == 1:
        return float(res.num_gpus)
    if res.num_gpus > 0:
        return float(max(res.num_gpus, spec.tensor_parallel_size))
    if "num_gpus" in res.model_fields_set:  # 0 written out: on CPUs, whatever the cluster has
        return 0.0
    return float(spec.tensor_parallel_size) if cluster_gpus > 0 else 0.0


@contextmanager
def planned_on(capacity: Mapping[str, float] | None) -> Iterator[None]:
    """While a plan is built: the GPUs of the capacity it targets (None: unknown, then this
    machine's count), for `planned_gpus`."""
    token = _PLANNED.set(None if capacity is None else float(capacity.get("GPU", 0.0)))
    try:
        yield
    finally:
        _PLANNED.reset(token)


def planned_gpus() -> float | None:
    """The GPUs of the cluster the plan being built targets; None outside `planned_on`."""
    return _PLANNED.get()
