"""Actor pools for the stateful stages (embedders, indexes, chat models) and their threads.

Ray Data runs a callable class's `__call__` in a side thread by default, so that batching
can overlap the UDF. vLLM's CPU engine ran 15-20% slower from that side thread than from
the actor's main thread, where it was built (per-batch tokens/s in one actor; docs/benchmarks.md,
generation). Our stages batch inside the UDF anyway, so the pools below run each call
on the actor's main thread, one at a time.

Ray's CPU accounting does not limit threads: an actor's torch threads are set separately,
from its share of the cluster's CPUs (`threads_per_actor`).
"""

from __future__ import annotations

import math
import os
from typing import Any

from lasagna.models.spec import StageResources
from lasagna.stages.busy import publish as publish_cpu_use
from lasagna.stages.capacity import connected, ray_capacity

TASK_RETRIES = 3  # stateless stage tasks (scoring) rerun this often when their worker dies


def actor_pool(size: int):
    """A fixed pool of `size` actors whose calls run one at a time on the main thread."""
    import ray.data

    return ray.data.ActorPoolStrategy(
        size=size, enable_true_multi_threading=True, max_concurrent_calls_per_actor=1
    )


def actor_options(res: StageResources, num_gpus: float | None = None) -> dict[str, Any]:
    """The Ray options of a pool's actors: what each needs (CPUs, GPUs, custom resources)
    and how Ray recovers it when its worker or node dies.

    `max_restarts` restarts the actor (on any node that has its resources) and
    `max_task_retries` resubmits the calls it was running, so a lost node costs time, not
    results: every stage is a pure function of its inputs. The retries are unbounded (-1)
    whenever the actor may restart: the restart budget is what bounds them. A fixed count
    was spent in seconds on a killed node (each call fails at once as unreachable until
    Ray declares the node dead, which takes longer), failing a trial Ray was about to
    recover. Application errors are never retried (a model that cannot load fails the same
    way again); Ray Data adds only `RaySystemError` to an actor call's `retry_exceptions`.
    """
    gpus = res.num_gpus if num_gpus is None else num_gpus
    options: dict[str, Any] = {
        "num_cpus": res.num_cpus,
        "max_restarts": res.max_restarts,
        "max_task_retries": -1 if res.max_restarts else 0,
    }
    if gpus:
        options["num_gpus"] = gpus
    if res.resources:
        options["resources"] = dict(res.resources)
    return options


def get_remote(refs: Any, timeout: float | None = None) -> Any:
    """`ray.get`, raising an error the remote code raised as itself (its type and message:
    a trial records "UserError: model ... is not in the cache", not Ray's wrapper with the
    remote traceback, which stays its `__cause__`). Ray's own failures (an actor that died)
    are raised as they are."""
    import ray

    try:
        return ray.get(refs, timeout=timeout)
    except ray.exceptions.RayTaskError as err:
        cause = err.cause
        while isinstance(cause, ray.exceptions.RayTaskError):
            cause = cause.cause
        if isinstance(cause, Exception) and not isinstance(cause, ray.exceptions.RayError):
            raise cause from err
        raise


def start_actor(threads: int | None) -> None:
    """What a model-holding actor does first: its torch threads, no GPU it did not
    reserve, and its CPU use published (the stall watchdog sees it compute)."""
    set_threads(threads)
    hide_unreserved_gpus()
    publish_cpu_use()


def hide_unreserved_gpus() -> None:
    """In a Ray actor that reserved no GPU, hide the node's GPUs from torch and vLLM: Ray
    2.60 leaves CUDA_VISIBLE_DEVICES unset for zero-GPU workers, so an engine there would
    take a GPU the cluster has given to another actor. Outside an actor (in-process use)
    nothing changes."""
    import ray

    if not ray.is_initialized() or ray.get_runtime_context().get_actor_id() is None:
        return
    if not ray.get_gpu_ids():
        os.environ["CUDA_VISIBLE_DEVICES"] = ""


def set_threads(threads: int | None) -> None:
    """Torch / OpenMP threads of this actor (Ray sets OMP_NUM_THREADS from num_cpus, often 1)."""
    if not threads:
        return
    os.environ["OMP_NUM_THREADS"] = str(threads)  # inherited by vLLM's worker processes
    import torch

    torch.set_num_threads(threads)


def threads_per_actor(cluster_cpus: float, actors: int, override: int | None = None) -> int:
    """Torch threads for each of `actors` actors sharing `cluster_cpus` CPUs.

    1 actor on 2 CPUs -> 2 threads; 2 actors -> 1 each. `override` wins when given.
    """
    if override is not None:
        return max(1, int(override))
    return max(1, math.floor(cluster_cpus / max(1, actors)))


def cluster_resources() -> dict[str, float]:
    """Resources of the Ray cluster this process is connected to, with the nodes its
    autoscaler can add, as the plan counts them ({} when not connected: stages can then be
    built, e.g. in unit tests, with this machine's CPUs)."""
    return dict(ray_capacity()) if connected() else {}


def cluster_cpus() -> float:
    """CPUs of the Ray cluster this process is connected to (this machine's, if none)."""
    return float(cluster_resources().get("CPU", os.cpu_count() or 1))
