"""Heavy pools kept for a whole run: a chat model is loaded once and reused by every trial
that runs the same engine, instead of once per trial.

A pool is a list of plain Ray actors (`ModelServer`), each holding one model (one vLLM
engine, loaded on its first call), keyed by what the engine depends on (`engine_key`: the
model, backend, dtype, lengths, parallelism and the pool's resources; not the sampling,
which every request carries itself). The Generate stage's Ray Data actors are thin: they
build the prompts and call a server. The driver drops a pool as soon as no pending trial
needs it, so two models of one sweep never hold memory at the same time, and closes every
pool at the end.
Embedders are pooled the same way (lasagna.engine.embedding, keys "embed:..."): one load
serves a run's corpus encoding and query search in every trial that uses the embedder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from lasagna.common.digest import json_sha256

SAMPLING_FIELDS = ("temperature", "max_tokens", "stop", "seed")


def engine_key(spec: Any, threads: int | None) -> str:
    """What a loaded engine depends on: the spec without its sampling, plus its threads."""
    fields = spec.model_dump(mode="json", exclude=set(SAMPLING_FIELDS))
    return "generate:" + json_sha256({"spec": fields, "threads": threads})[:16]


class ModelServer:
    """A Ray actor holding one chat model; `generate` runs on its main thread.

    The model loads on the first `generate` (not when the actor starts), so a trial whose
    calls all come from the model-call cache never loads an engine.
    """

    def __init__(self, spec: Any, threads: int | None = None):
        from lasagna.engine.actors import set_threads

        set_threads(threads)
        self.spec = spec
        self.model: Any = None
        self.load_s = 0.0

    def _load(self) -> float:
        """Load the model if needed; the seconds this call spent loading it (0 if loaded)."""
        if self.model is not None:
            return 0.0
        from lasagna.models.registry import create_chat_model

        t0 = time.perf_counter()
        self.model = create_chat_model(self.spec)
        self.load_s = time.perf_counter() - t0
        return self.load_s

    def ready(self) -> float:
        """The seconds the model took to load (0.0 while not loaded); returns at once."""
        return self.load_s

    def generate(self, requests: list) -> tuple[list, float]:
        """The completions, and the seconds this call waited for the model to load."""
        waited = self._load()
        return self.model.generate(requests), waited

    def close(self) -> None:
        close = getattr(self.model, "close", None)
        if close is not None:  # stop vLLM's worker processes before the actor goes
            close()


class RemoteModel:
    """A `ChatModel` that forwards to a pool's servers, round robin per batch.

    `load_s`: the engine load this client's calls waited for (0 when the engine was
    loaded already, e.g. by an earlier trial); `last_wait_s`: that of the last call.
    """

    def __init__(self, servers: list[Any]):
        self.servers = servers
        self.load_s = 0.0
        self.last_wait_s = 0.0
        self._next = os.getpid()  # clients in different processes start on different servers

    def generate(self, requests: list) -> list:
        import ray

        server = self.servers[self._next % len(self.servers)]
        self._next += 1
        completions, self.last_wait_s = ray.get(server.generate.remote(requests))
        self.load_s = max(self.load_s, self.last_wait_s)
        return completions


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

    def prestart(self, key: str, start: Callable[[], list[Any]]) -> None:
        """Start the servers of `key` without waiting, so they load while other work runs;
        `get` waits for them."""
        if key not in self.pools and key not in self.starting:
            self.starting[key] = start()

    def get(self, key: str, start: Callable[[], list[Any]]) -> tuple[Pool, bool]:
        """The pool of `key` and whether this call built it (`start` makes its servers)."""
        if key in self.pools:
            return self.pools[key], False
        import ray

        servers = self.starting.pop(key, None) or start()
        load_s = max(ray.get([s.ready.remote() for s in servers]), default=0.0)
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


def start_model_servers(spec: Any, threads: int | None, num_gpus: float) -> list[Any]:
    """`spec.resources.actors` ModelServer actors, each with the pool's CPUs and GPUs."""
    import ray

    from lasagna.engine.actors import actor_options

    remote = ray.remote(ModelServer).options(**actor_options(spec.resources, num_gpus))
    return [remote.remote(spec, threads) for _ in range(spec.resources.actors)]
