"""The run's shared chat-model servers, reachable from any process.

`evaluate()`'s executors and LLM judges run in Ray tasks and actors that come and go; the
models they name are served by one `ModelHub` actor per run, which starts each model's pool
on the first ask (keyed as every pool is: one load of a model serves every worker) and
closes them all with itself. The SDK track registers the hub as one of the run's pools, so
the engine drops it after the last trial that needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from lasagna.stages.model_server import RemoteModel
from lasagna.stages.pools import SAMPLING_FIELDS, Pools, pooled_engine

HUB_CONCURRENCY = 64  # callers asking the hub for servers at once


class ModelHub:
    """The run's shared chat-model servers for callers in any process (a threaded Ray actor):
    one pool per model spec, keyed as every pool is (lasagna.stages.pools.pooled_engine),
    started on the first ask and closed with the hub. An evaluation's executors and LLM
    judges that name one model share one load of it."""

    def __init__(self) -> None:
        self.pools = Pools()
        self._lock = threading.Lock()

    def servers(self, spec: Any) -> list[Any]:
        """The servers of `spec`'s pool ([] for an API model: its client calls the API)."""
        with self._lock:
            pool = pooled_engine(spec, self.pools, shared=True)
        return [] if pool is None else pool.servers

    def loads(self) -> list[dict[str, Any]]:
        return list(self.pools.loads)

    def close(self) -> None:
        self.pools.close()


def start_hub() -> Any:
    """A new hub actor (owned by this process: it ends with it at the latest)."""
    import ray

    remote = ray.remote(ModelHub).options(num_cpus=0, max_concurrency=HUB_CONCURRENCY)
    return remote.remote()


_ROUTERS: dict[str, Callable[[Any], Any]] = {}  # this process's router of each hub it served


def hub_router(hub: Any) -> Callable[[Any], Any]:
    """What `lasagna.model(...)` clients and LLM judges in this process call through while
    they serve the hub's run: each spec's shared servers (an API model: a client here)."""
    name = hub._actor_id.hex()
    if name not in _ROUTERS:
        _ROUTERS.clear()  # a worker serves one run at a time: drop the last run's engines
        _ROUTERS[name] = _router(hub)
    return _ROUTERS[name]


def _router(hub: Any) -> Callable[[Any], Any]:
    engines: dict[str, Any] = {}
    lock = threading.Lock()

    def route(spec: Any) -> Any:
        key = spec.model_dump_json(exclude=set(SAMPLING_FIELDS))
        with lock:
            if key not in engines:
                from lasagna.stages.actors import get_remote

                servers = get_remote(hub.servers.remote(spec))  # a failed load: its error
                if servers:
                    engines[key] = RemoteModel(servers, spec)
                else:
                    from lasagna.models.registry import create_chat_model

                    engines[key] = create_chat_model(spec)
            return engines[key]

    return route
