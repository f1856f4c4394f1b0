"""Heavy pools kept for a whole run: a chat model is loaded once and reused by every trial
that runs the same engine, instead of once per trial.

A pool is a list of Ray actors (`ModelServer`, lasagna.stages.model_server: the one
chat-model server), each holding one model (one vLLM engine, loaded on its first call),
keyed by what the engine depends on (`engine_key`: the model, backend, dtype, lengths,
parallelism and the pool's resources; not the sampling, which every request carries
itself). The Generate stage's Ray Data actors are thin: they
build the prompts and call a server. The driver drops a pool as soon as no pending trial
needs it, so two models of one sweep never hold memory at the same time, and closes every
pool at the end.
Embedders are pooled the same way (lasagna.stages.embedding, keys "embed:..."): one load
serves a run's corpus encoding and query search in every trial that uses the embedder.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna.common.digest import json_sha256
from lasagna.models.gpus import engine_gpus
from lasagna.models.registry import is_local
from lasagna.stages.model_server import MAX_CONCURRENT_CALLS, ModelServer, RemoteModel

if TYPE_CHECKING:
    from lasagna.models.base import ChatModel
    from lasagna.models.spec import ModelSpec, StageResources

CLIENT_CPUS = 0.1  # a stage actor that forwards to a pooled engine

SAMPLING_FIELDS = ("temperature", "max_tokens", "stop", "seed")


def engine_key(spec: Any, threads: int | None, shared: bool = False) -> str:
    """What a loaded engine depends on: the spec without its sampling, plus its threads
    (and "shared:" for the servers of many small callers, see ModelServer)."""
    fields = spec.model_dump(mode="json", exclude=set(SAMPLING_FIELDS))
    digest = json_sha256({"spec": fields, "threads": threads})[:16]
    return ("shared:" if shared else "generate:") + digest


@dataclass
class Pool:
    servers: list[Any]
    load_s: float  # the slowest server's load time (0.0: loaded lazily, not yet)


@dataclass
class Pools:
    """The run's pools by key; built on first use, dropped when no pending trial needs them."""

    pools: dict[str, Pool] = field(default_factory=dict)
    built: list[str] = field(default_factory=list)  # keys in the order they were built
    # every load, in order: {"pool": key, "servers": n, "load_s": slowest} (the manifest's)
    loads: list[dict[str, Any]] = field(default_factory=list)
    starting: dict[str, list[Any]] = field(default_factory=dict)  # started, not yet waited on
    failed: dict[str, Exception] = field(default_factory=dict)  # pools whose model cannot load

    def prestart(self, key: str, start: Callable[[], list[Any]]) -> None:
        """Start the servers of `key` without waiting, so they load while other work runs;
        `get` waits for them."""
        if key not in self.pools and key not in self.starting:
            self.starting[key] = start()

    def get(self, key: str, start: Callable[[], list[Any]]) -> tuple[Pool, bool]:
        """The pool of `key` and whether this call built it (`start` makes its servers)."""
        if key in self.pools:
            return self.pools[key], False
        if key in self.failed:  # its load raised: asking again would only fail again, slowly
            raise self.failed[key].with_traceback(None)
        import ray

        servers = self.starting.pop(key, None) or start()
        try:
            load_s = max(ray.get([s.ready.remote() for s in servers]), default=0.0)
        except ray.exceptions.RayTaskError as err:  # the load raised (not a lost actor)
            self.failed[key] = err
            self._close(Pool(servers, 0.0))
            raise
        self.pools[key] = Pool(servers, load_s)
        self.built.append(key)
        # None: its servers load on their first call (chat engines; the trial's engine_load)
        loaded = round(load_s, 3) if load_s else None
        self.loads.append({"pool": key, "servers": len(servers), "load_s": loaded})
        return self.pools[key], True

    def keep_only(self, keys: Iterable[str]) -> None:
        """Close every pool whose key is not in `keys`."""
        wanted = set(keys)
        for key in [k for k in self.pools if k not in wanted]:
            self._close(self.pools.pop(key))
        for key in [k for k in self.starting if k not in wanted]:
            self._close(Pool(self.starting.pop(key), 0.0))

    def drop(self, keys: Iterable[str]) -> None:
        """Close the pools of `keys` (a phase that no longer needs them; later trials that
        do load them again)."""
        gone = set(keys)
        self.keep_only([k for k in [*self.pools, *self.starting] if k not in gone])

    def close(self) -> None:
        self.keep_only(())

    @staticmethod
    def _close(pool: Pool) -> None:
        import ray

        try:
            ray.get([s.close.remote() for s in pool.servers], timeout=60)
        except Exception:  # a dead actor has nothing left to close
            pass
        for server in pool.servers:
            ray.kill(server)


def start_model_servers(
    spec: Any, threads: int | None, num_gpus: float, shared: bool = False
) -> list[Any]:
    """`spec.resources.actors` ModelServer actors, each with the pool's CPUs and GPUs;
    `shared`: threaded servers that batch the concurrent calls of many callers."""
    import ray

    from lasagna.stages.actors import actor_options

    options = actor_options(spec.resources, num_gpus)
    if shared:
        options["max_concurrency"] = MAX_CONCURRENT_CALLS
    remote = ray.remote(ModelServer).options(**options)
    return [remote.remote(spec, threads, shared) for _ in range(spec.resources.actors)]


def _cluster_gpus() -> float:
    from lasagna.stages.actors import cluster_resources

    return float(cluster_resources().get("GPU", 0))


def engine_placement(spec: ModelSpec, threads: int | None = None) -> tuple[float, int | None]:
    """(GPUs per actor, torch threads per actor) of a chat-model pool on this cluster."""
    from lasagna.stages.actors import cluster_cpus, threads_per_actor

    gpus = engine_gpus(spec, _cluster_gpus())
    if threads is None and gpus == 0 and is_local(spec.backend):
        threads = threads_per_actor(cluster_cpus(), spec.resources.actors)
    return gpus, threads


def engine_pool_keys(spec: Any, shared: bool = False) -> list[str]:
    """The pool key of a chat model's engines on this cluster; none for an API model (it
    loads nothing)."""
    if not is_local(spec.backend):
        return []
    return [engine_key(spec, engine_placement(spec)[1], shared)]


def pooled_engine(spec: Any, pools: Pools | None, shared: bool = False) -> Pool | None:
    """The run's pool of `spec`'s engines (its servers start on first use; each loads its
    model on its first call, a `shared` one when it starts); None without pools or for an
    API model."""
    keys = engine_pool_keys(spec, shared)
    if pools is None or not keys:
        return None
    gpus, threads = engine_placement(spec)
    pool, _ = pools.get(keys[0], lambda: start_model_servers(spec, threads, gpus, shared))
    return pool


def stage_engine(
    spec: ModelSpec, pool: Pool | None, call_cache: str | None, threads: int | None = None
) -> tuple[dict[str, Any], StageResources, float]:
    """How a model stage's actors reach `spec`'s engines: (their constructor kwargs, their
    resources, GPUs each). With `pool` they are light clients of its servers, which hold the
    CPUs, GPUs and custom resources; without, each actor loads its own model with `threads`
    torch threads. `calls`: the model-call cache at `call_cache` (None: off)."""
    from lasagna.models.call_cache import model_calls

    res = spec.resources
    if pool is not None:
        client = {"num_cpus": min(res.num_cpus, CLIENT_CPUS), "num_gpus": 0, "resources": {}}
        res = res.model_copy(update=client)
        kwargs: dict[str, Any] = {"servers": pool.servers}
        gpus, on_gpus = 0.0, engine_gpus(spec, _cluster_gpus())
    else:
        gpus, threads = engine_placement(spec, threads)
        kwargs, on_gpus = {"threads": threads}, gpus
    kwargs["calls"] = model_calls(call_cache, spec, gpu=on_gpus > 0)
    return kwargs, res, gpus


def actor_model(
    spec: ModelSpec,
    threads: int | None = None,
    model: ChatModel | None = None,
    servers: list | None = None,
    calls: Any = None,
) -> tuple[ChatModel, float]:
    """A model stage actor's chat model (behind the model-call cache `calls`, when on) and
    the seconds it took to load here: a client of a pool's `servers` (their engines load
    on first call), the `model` handed in (in-process use, tests), or one built here."""
    from lasagna.models.call_cache import with_call_cache

    if servers:
        return with_call_cache(RemoteModel(servers, spec), calls, spec), 0.0
    from lasagna.models.registry import create_chat_model
    from lasagna.stages.actors import start_actor

    start_actor(threads)
    t0 = time.perf_counter()
    built = model if model is not None else create_chat_model(spec)
    return with_call_cache(built, calls, spec), time.perf_counter() - t0
