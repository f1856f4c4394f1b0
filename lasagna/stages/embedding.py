"""Pooled embedders: one loaded embedder serves the corpus encoding and the query encoding
of every stage and trial of a run that uses it, instead of one load per stage and trial.

An `EmbedderServer` is a plain Ray actor holding one loaded model; a pool of them lives in
the run's `Pools` (lasagna.stages.pools) under `embedder_key`: what the vectors depend on
(`DenseRetriever.embedding_fields()`: the model's identity with its files' hash, and every
encoding option) plus where it runs (threads, CPUs, GPUs, actors). Two dense trials that
differ only in index, top_k or search knobs therefore share one load.

The corpus is encoded by sending chunks straight to the servers (a few calls in flight per
server) rather than through a Ray Data pipeline: the same path for 12 passages and for a
million, without a pipeline start-up per index. The Search stage's actors hold the index
and ask the servers to encode the questions (`RemoteEmbedder`), so they load no model.
A killed server is restarted by Ray and its calls retried (the stage's `max_restarts`).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from lasagna.common.digest import json_sha256
from lasagna.stages.actors import actor_options, cluster_cpus, threads_per_actor

if TYPE_CHECKING:
    from lasagna.stages.pools import Pool, Pools
    from lasagna.systems import DenseRetriever

KEY_PREFIX = "embed:"
CHUNK_BATCHES = 4  # encoding batches per call: long enough to hide the call's overhead
IN_FLIGHT = 2  # calls queued per server: the next chunk is there when one finishes


def embedder_threads(cfg: DenseRetriever, threads: int | None = None) -> int:
    """Torch threads of each of the pool's servers (its share of the cluster's CPUs)."""
    return threads_per_actor(cluster_cpus(), cfg.encode.actors, threads)


def embedder_device(cfg: DenseRetriever) -> str:
    return "cuda" if cfg.encode.num_gpus > 0 else "cpu"


def embedder_key(cfg: DenseRetriever, threads: int) -> str:
    """The pool an embedder loads into: its vectors' identity plus its placement."""
    res = cfg.encode
    placement = {"threads": threads, "cpus": res.num_cpus, "gpus": res.num_gpus}
    placement["resources"] = dict(sorted(res.resources.items()))
    fields = {"embedder": cfg.embedding_fields(), "actors": res.actors, **placement}
    return KEY_PREFIX + json_sha256(fields)[:16]


class EmbedderServer:
    """A Ray actor holding one loaded embedder; `encode` runs on its main thread."""

    def __init__(self, cfg: DenseRetriever, threads: int, device: str = "cpu"):
        from lasagna.models.embedders import load_embedder

        t0 = time.perf_counter()
        self.model = load_embedder(
            cfg.model,
            device,
            min(threads, os.cpu_count() or threads),
            normalize=cfg.normalize,
            max_seq_length=cfg.max_seq_length,
            precision=cfg.precision,
            backend=cfg.backend,
        )
        self.load_s = time.perf_counter() - t0

    def ready(self) -> float:
        """The seconds the model took to load (the call returns once it is loaded)."""
        return self.load_s

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        from lasagna.models.embedders import encode

        return encode(self.model, texts, batch_size=batch_size)

    def close(self) -> None:
        self.model = None


def start_embedder_servers(cfg: DenseRetriever, threads: int) -> list[Any]:
    """`cfg.encode.actors` servers, each with the encode stage's CPUs, GPUs, custom resources
    and restarts (a killed server reloads and its calls are retried)."""
    import ray

    remote = ray.remote(EmbedderServer).options(**actor_options(cfg.encode))
    device = embedder_device(cfg)
    return [remote.remote(cfg, threads, device) for _ in range(cfg.encode.actors)]


def embedder_pool(
    pools: Pools, cfg: DenseRetriever, threads: int | None = None
) -> tuple[Pool, bool]:
    """The run's pool for `cfg`'s embedder and whether this call loaded it."""
    n = embedder_threads(cfg, threads)
    return pools.get(embedder_key(cfg, n), lambda: start_embedder_servers(cfg, n))


class RemoteEmbedder:
    """Query encoding on a pool's servers: texts -> float32 embeddings (round robin)."""

    def __init__(self, servers: list[Any], batch_size: int):
        self.servers = servers
        self.batch_size = batch_size
        self._next = os.getpid()  # clients in different processes start on different servers

    def __call__(self, texts: list[str]) -> np.ndarray:
        import ray

        server = self.servers[self._next % len(self.servers)]
        self._next += 1
        return ray.get(server.encode.remote(list(texts), self.batch_size))


def stream_on_pool(
    pool: Pool, texts: list[str], batch_size: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(row positions, float32 embeddings) of `texts`, a chunk per call to the pool's
    servers, in the order they finish; the driver holds only the chunks in flight.

    Chunks are `CHUNK_BATCHES` batches long, or fewer so every server gets work on a small
    corpus; `IN_FLIGHT` calls are queued per server.
    """
    import ray

    servers = pool.servers
    n = len(texts)
    chunk = max(1, min(batch_size * CHUNK_BATCHES, math.ceil(n / len(servers))))
    todo = list(range(0, n, chunk))[::-1]  # chunk starts, popped in order
    pending: dict[Any, tuple[int, int]] = {}  # call -> (chunk start, server)

    def submit(server: int) -> None:
        if todo:
            start = todo.pop()
            call = servers[server].encode.remote(texts[start : start + chunk], batch_size)
            pending[call] = (start, server)

    for _ in range(IN_FLIGHT):
        for server in range(len(servers)):
            submit(server)
    while pending:
        (ref,), _ = ray.wait(list(pending), num_returns=1)
        start, server = pending.pop(ref)
        submit(server)  # the server that finished gets the next chunk
        emb = np.asarray(ray.get(ref), dtype=np.float32)
        yield np.arange(start, start + len(emb), dtype=np.int64), emb
