"""Actor pools for the stateful stages (embedders, indexes, chat models) and their threads.

Ray Data runs a callable class's `__call__` in a helper thread by default, so that batching
can overlap the UDF. vLLM's CPU engine ran 15-20% slower from that helper thread than from
the actor's main thread, where it was built (per-batch tokens/s in one actor; see the README's
generation figures). Our stages batch inside the UDF anyway, so the pools below run each call
on the actor's main thread, one at a time.

Ray's CPU accounting does not limit threads: an actor's torch threads are set separately,
from its share of the cluster's CPUs (`threads_per_actor`).
"""

from __future__ import annotations

import math
import os


def actor_pool(size: int):
    """A fixed pool of `size` actors whose calls run one at a time on the main thread."""
    import ray.data

    return ray.data.ActorPoolStrategy(
        size=size, enable_true_multi_threading=True, max_concurrent_calls_per_actor=1
    )


def threads_per_actor(cluster_cpus: float, actors: int, override: int | None = None) -> int:
    """Torch threads for each of `actors` actors sharing `cluster_cpus` CPUs.

    1 actor on 2 CPUs -> 2 threads; 2 actors -> 1 each. `override` wins when given.
    """
    if override is not None:
        return max(1, int(override))
    return max(1, math.floor(cluster_cpus / max(1, actors)))


def cluster_cpus() -> float:
    """CPUs of the Ray cluster this process is connected to."""
    import ray

    return float(ray.cluster_resources().get("CPU", os.cpu_count() or 1))
