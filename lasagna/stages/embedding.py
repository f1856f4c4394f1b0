"""Pooled embedders: one loaded embedder serves the corpus encoding and the query encoding
of every stage and trial of a run that uses it, instead of one load per stage and trial.

An `EmbedderServer` is a plain Ray actor holding one loaded model; a pool of them lives in
the run's `Pools` (lasagna.stages.pools) under `embedder_key`: what the vectors depend on
(`DenseRetriever.embedding_fields()`: the model's identity with its files' hash, and every
encoding option) plus where it runs (threads, CPUs, GPUs, actors). Two dense trials that
differ only in index, top_k or search knobs therefore share one load.

The corpus is encoded in the batches of its encoding plan (lasagna.retrieval.batching: cut
once on the driver, so a document's vector does not depend on the layout), a few batches per
call sent straight to the servers (a few calls in flight per server), rather than through a
Ray Data pipeline: the same path for 12 passages and for a
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
from lasagna.stages.busy import publish as publish_cpu_use

if TYPE_CHECKING:
    from lasagna.retrieval.batching import EncodingPlan
    from lasagna.retrieval.store import EmbeddedBatch
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

        publish_cpu_use()  # the stall watchdog sees it load and encode
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
        """Questions: each one's vector independent of the others (`encode_queries`)."""
        from lasagna.models.embedders import encode_queries

        return encode_queries(self.model, texts, batch_size)

    def encode_batches(self, batches: list[list[str]]) -> np.ndarray:
        """Corpus batches of an encoding plan, one forward pass each, rows in order."""
        from lasagna.models.embedders import encode_batches

        return encode_batches(self.model, batches)

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


def stream_on_pool(pool: Pool, texts: list[str], plan: EncodingPlan) -> Iterator[EmbeddedBatch]:
    """(row positions, float32 embeddings) of `texts`, a few of the plan's batches per call to
    the pool's servers, in the order they finish; the driver holds only the calls in flight.

    A call carries `CHUNK_BATCHES` whole batches, or fewer so every server gets work on a
    small corpus; `IN_FLIGHT` calls are queued per server. Each batch is encoded as the plan
    cut it, so which server gets which call changes no vector.
    """
    import ray

    servers = pool.servers
    batches = list(plan.batches())
    per_call = max(1, min(CHUNK_BATCHES, math.ceil(len(batches) / len(servers))))
    todo = [batches[i : i + per_call] for i in range(0, len(batches), per_call)][::-1]
    pending: dict[Any, tuple[np.ndarray, int]] = {}  # call -> (its rows, server)

    def submit(server: int) -> None:
        if todo:
            call_batches = todo.pop()
            parts = [[texts[i] for i in rows] for rows in call_batches]
            call = servers[server].encode_batches.remote(parts)
            pending[call] = (np.concatenate(call_batches), server)

    for _ in range(IN_FLIGHT):
        for server in range(len(servers)):
            submit(server)
    while pending:
        (ref,), _ = ray.wait(list(pending), num_returns=1)
        rows, server = pending.pop(ref)
        submit(server)  # the server that finished gets the next call
        yield rows, np.asarray(ray.get(ref), dtype=np.float32)
