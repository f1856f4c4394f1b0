"""Retrieval on Ray: corpus encoding on the run's pooled embedder, query search on actors.

Ray must already be initialized by the caller. The embedder is loaded once per run into a
pool (lasagna.stages.embedding) that encodes the corpus and, for the Search stage's actors
(which hold the index), the questions. Actors ask for fractional CPUs (the configs'
default 0.5) so read tasks are never starved on a 2-CPU machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from lasagna.data.model import Benchmark
from lasagna.results.schema import columns_of
from lasagna.stages.actors import cluster_cpus, threads_per_actor
from lasagna.stages.busy import publish as publish_cpu_use
from lasagna.stages.index_copies import IndexRef, share_index
from lasagna.stages.stage import Stage, apply_stage
from lasagna.systems import AnyRetriever, DenseRetriever, StageResources

if TYPE_CHECKING:  # the Search actor imports only what its index kind needs (searcher.py)
    from lasagna.retrieval.store import EmbeddedBatch, EncodeCorpus, EncoderFor
    from lasagna.stages.pools import Pools


def ray_encoder_for(
    pools: Pools | None = None, threads: int | None = None, progress: bool = True
) -> EncoderFor:
    """Encoders that stream the corpus through the run's pooled embedder (`pools`; without,
    a pool started for this encoding and closed after it)."""

    def encoder_for(cfg: DenseRetriever) -> EncodeCorpus:
        def encode_corpus(
            ids: list[str], texts: list[str], done: np.ndarray | None = None
        ) -> Iterator[EmbeddedBatch]:
            return stream_corpus_ray(
                ids, texts, cfg, threads=threads, progress=progress, pools=pools, done=done
            )

        return encode_corpus

    return encoder_for


def stream_corpus_ray(
    ids: list[str],
    texts: list[str],
    cfg: DenseRetriever,
    *,
    threads: int | None = None,
    progress: bool = True,
    pools: Pools | None = None,
    done: np.ndarray | None = None,
) -> Iterator[EmbeddedBatch]:
    """(row positions, embeddings) of `texts` per call as the pooled embedder's servers
    finish them (in any order), in the batches of the corpus's encoding plan
    (lasagna.retrieval.batching); the driver never holds more than the calls in flight.
    `done`: rows an interrupted encoding left, not encoded again.
    `retrieval.store.gather_embeddings` turns the stream into one matrix where one is
    wanted (benchmarks, tests)."""
    from lasagna.retrieval.batching import corpus_plan
    from lasagna.stages.embedding import embedder_pool, stream_on_pool
    from lasagna.stages.pools import Pools
    from lasagna.stages.progress import StageProgress

    plan = corpus_plan(cfg, ids, texts).without(done)  # fixed before any server starts
    kept = len(ids) - len(plan.order)
    if not len(plan):
        return
    own = pools is None
    run_pools = Pools() if pools is None else pools
    try:
        pool, _ = embedder_pool(run_pools, cfg, threads)
        total = len(plan.order)
        with StageProgress("encode corpus", total, unit="passages", show=progress) as bar:
            if kept:
                bar.note(f"{kept} of {len(ids)} passages kept from an interrupted encoding")
            for rows, emb in stream_on_pool(pool, texts, plan):
                yield rows, emb
                bar.advance(len(rows))
    finally:
        if own:
            run_pools.close()


def ensure_index(
    benchmark: Benchmark,
    cfg: AnyRetriever,
    *,
    progress: bool = True,
    threads: int | None = None,
    pools: Pools | None = None,
) -> Path:
    """The cached index of `cfg` over the benchmark's corpus; built on a miss.

    Dense corpora are encoded by the run's pooled embedder (`pools`), then the driver builds
    and saves the faiss index; BM25 is built on the driver (it is fast). `threads`: torch
    threads per embedder (default: the cluster's CPUs divided among the encode actors).
    """
    from lasagna.retrieval.local import check_models
    from lasagna.retrieval.store import ensure_retriever

    check_models(cfg)
    docs = list(benchmark.corpus.values())
    encoder_for = ray_encoder_for(pools, threads=threads, progress=progress)
    return ensure_retriever(benchmark.index_revision, docs, cfg, encoder_for)


class Search:
    """Actor: holds a `Searcher` (the index; for dense, the query embedder, or a client of
    the run's pooled one when `embedders` lists its servers per dense part)."""

    def __init__(
        self,
        index: IndexRef,
        cfg: AnyRetriever,
        threads: int,
        device: str = "cpu",
        embedders: list[list[Any]] | None = None,
    ):
        publish_cpu_use()  # the stall watchdog sees it open the index and search
        n = min(threads, os.cpu_count() or 1)
        encoders = None
        if embedders:
            from lasagna.stages.embedding import RemoteEmbedder

            parts = cfg.dense_parts()
            encoders = [
                RemoteEmbedder(servers, d.search.batch_size)
                for servers, d in zip(embedders, parts, strict=True)
            ]
        from lasagna.retrieval.searcher import Searcher

        self.searcher = Searcher(index.open(), cfg, num_threads=n, device=device, encoders=encoders)

    def __call__(self, batch: pa.Table) -> pa.Table:
        questions = [str(q) for q in batch.column("question").to_pylist()]
        rankings = self.searcher.search(questions)
        doc_ids = pa.array([[d for d, _ in r] for r in rankings], type=pa.list_(pa.string()))
        scores = pa.array([[s for _, s in r] for r in rankings], type=pa.list_(pa.float64()))
        return batch.append_column("doc_ids", doc_ids).append_column("scores", scores)


def search_resources(cfg: AnyRetriever) -> StageResources:
    """The search stage's resources: BM25's `retrieve`, dense `search` (a hybrid: its dense
    part's `search`, else its first part's `retrieve`)."""
    return cfg.search_resources()


def embedder_pools(pools: Pools, cfg: AnyRetriever, threads: int | None = None) -> list:
    """The run's embedder pool of each dense part of `cfg` (loaded here on first use)."""
    from lasagna.stages.embedding import embedder_pool

    return [embedder_pool(pools, d, threads)[0] for d in cfg.dense_parts()]


def search_stage(
    cfg: AnyRetriever,
    index_path: Path,
    *,
    threads: int | None = None,
    embedders: list | None = None,
) -> Stage:
    """The Search stage over a built index: {question} -> {doc_ids, scores} (top_k).
    The index reaches actors on other nodes through the object store (`share_index`).

    `embedders`: the run's embedder pools, one per dense part (`embedder_pools`); the
    stage's actors then load no model. Without, each loads its own. `search: {num_gpus}`
    puts a dense index on the actor's GPU either way (faiss flat and IVF).
    """
    res = search_resources(cfg)
    kwargs: dict[str, Any] = {
        "index": share_index(index_path),
        "cfg": cfg,
        "threads": threads_per_actor(cluster_cpus(), res.actors, threads),
        "device": "cuda" if res.num_gpus > 0 else "cpu",
    }
    if embedders:
        kwargs["embedders"] = [p.servers for p in embedders]
    return Stage(
        "search",
        Search,
        inputs=("question",),
        outputs=columns_of("search"),
        constructor_kwargs=kwargs,
        resources=res,
        resources_key="search" if cfg.dense_parts() else "retrieve",
    )


def retrieval_dataset(
    rows,
    benchmark: Benchmark,
    cfg: AnyRetriever,
    *,
    threads: int | None = None,
    progress: bool = True,
    pools: Pools | None = None,
):
    """Lazy dataset: {id, question, ...} batches -> the same plus doc_ids, scores (top_k).

    Ensures the index first (on the driver; encoding on the pooled embedder), then adds one
    stateful Search stage. A hybrid runs both sub-retrievers and fuses them by RRF inside
    that stage. With `pools` (kept open until the dataset is consumed) the questions are
    encoded by the same embedder as the corpus; without, the Search actors load their own.
    """
    path = ensure_index(benchmark, cfg, threads=threads, progress=progress, pools=pools)
    embedders = embedder_pools(pools, cfg, threads) if pools is not None else None
    return apply_stage(rows, search_stage(cfg, path, threads=threads, embedders=embedders))
