"""Retrieval as Ray Data pipelines: corpus encoding and query search on actor pools.

Ray must already be initialized by the caller. Stateful stages are actor pools
(`lasagna.engine.actors`) whose actors hold a model or an index. Actors ask for fractional
CPUs (the configs' default 0.5) so read tasks are never starved on a 2-CPU machine.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa

from lasagna.data.model import Benchmark
from lasagna.engine.actors import actor_options, actor_pool, cluster_cpus, threads_per_actor
from lasagna.engine.stage import Stage, apply_stage, map_batches
from lasagna.results.schema import columns_of
from lasagna.retrieval.local import check_models
from lasagna.retrieval.searcher import Searcher
from lasagna.retrieval.store import (
    EmbeddedBatch,
    EncodeCorpus,
    EncoderFor,
    ensure_retriever,
    gather_embeddings,
)
from lasagna.systems import AnyRetriever, DenseRetriever, StageResources

BLOCK_BATCHES = 4  # batches per input block: enough blocks to spread over the actors


@contextmanager
def _progress_bars(enabled: bool):
    from ray.data import DataContext

    ctx = DataContext.get_current()
    before = ctx.enable_progress_bars
    ctx.enable_progress_bars = enabled
    try:
        yield
    finally:
        ctx.enable_progress_bars = before


class EncodeDocs:
    """Actor: holds the embedder; maps {doc_id, text} batches to {doc_id, embedding}."""

    def __init__(self, cfg: DenseRetriever, threads: int):
        from lasagna.models.embedders import load_embedder

        self.cfg = cfg
        self.model = load_embedder(
            cfg.model,
            "cuda" if cfg.encode.num_gpus > 0 else "cpu",
            min(threads, os.cpu_count() or threads),
            normalize=cfg.normalize,
            max_seq_length=cfg.max_seq_length,
            precision=cfg.precision,
            backend=cfg.backend,
        )

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from lasagna.models.embedders import encode

        texts = [str(t) for t in batch["text"]]
        emb = encode(self.model, texts, batch_size=self.cfg.encode.batch_size)
        return {"doc_id": batch["doc_id"], "embedding": emb}


def ray_encoder_for(threads: int | None = None, progress: bool = True) -> EncoderFor:
    """Encoders that run the corpus through an `EncodeDocs` actor pool, streaming batches."""

    def encoder_for(cfg: DenseRetriever) -> EncodeCorpus:
        def encode_corpus(ids: list[str], texts: list[str]) -> Iterator[EmbeddedBatch]:
            return stream_corpus_ray(ids, texts, cfg, threads=threads, progress=progress)

        return encode_corpus

    return encoder_for


def stream_corpus_ray(
    ids: list[str],
    texts: list[str],
    cfg: DenseRetriever,
    *,
    threads: int | None = None,
    progress: bool = True,
) -> Iterator[EmbeddedBatch]:
    """(row positions, embeddings) of `texts` per batch, as a Ray Data actor pool encodes
    them (in any order); the driver never holds more than a few batches."""
    import ray.data

    res: StageResources = cfg.encode
    n_threads = threads_per_actor(cluster_cpus(), res.actors, threads)
    # enough blocks for every actor to get work, each a few batches long
    rows_per_block = max(1, min(res.batch_size * BLOCK_BATCHES, math.ceil(len(ids) / res.actors)))
    blocks = [
        pa.table({"doc_id": ids[i : i + rows_per_block], "text": texts[i : i + rows_per_block]})
        for i in range(0, len(ids), rows_per_block)
    ]
    ds = map_batches(
        ray.data.from_arrow(blocks),
        EncodeDocs,
        fn_constructor_kwargs={"cfg": cfg, "threads": n_threads},
        compute=actor_pool(res.actors),
        batch_size=res.batch_size,
        batch_format="numpy",
        **actor_options(res),
    )
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    from lasagna.engine.progress import StageProgress

    with _progress_bars(False), StageProgress("encode corpus", len(ids), unit="passages") as bar:
        for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
            rows = np.array([position[str(d)] for d in batch["doc_id"]], dtype=np.int64)
            yield rows, np.asarray(batch["embedding"], dtype=np.float32)
            bar.advance(len(rows))


def encode_corpus_ray(
    ids: list[str],
    texts: list[str],
    cfg: DenseRetriever,
    *,
    threads: int | None = None,
    progress: bool = True,
) -> np.ndarray:
    """Embeddings of `texts` (row i for ids[i]) as one in-memory matrix (benchmarks, tests;
    the index build streams them to disk instead)."""
    batches = stream_corpus_ray(ids, texts, cfg, threads=threads, progress=progress)
    return gather_embeddings(len(ids), batches)


def ensure_index(
    benchmark: Benchmark,
    cfg: AnyRetriever,
    *,
    progress: bool = True,
    threads: int | None = None,
) -> Path:
    """The cached index of `cfg` over the benchmark's corpus; built on a miss.

    Dense corpora are encoded on a Ray actor pool, then the driver builds and saves the
    faiss index; BM25 is built on the driver (it is fast). `threads`: torch threads per
    encoding actor (default: the cluster's CPUs divided among the actors).
    """
    check_models(cfg)
    docs = list(benchmark.corpus.values())
    return ensure_retriever(
        benchmark.revision, docs, cfg, ray_encoder_for(threads=threads, progress=progress)
    )


class Search:
    """Actor: holds a `Searcher` (index, and the query embedder for dense)."""

    def __init__(self, index_path: str, cfg: AnyRetriever, threads: int, device: str = "cpu"):
        n = min(threads, os.cpu_count() or 1)
        self.searcher = Searcher(index_path, cfg, num_threads=n, device=device)

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


def search_stage(cfg: AnyRetriever, index_path: Path, *, threads: int | None = None) -> Stage:
    """The Search stage over a built index: {question} -> {doc_ids, scores} (top_k)."""
    res = search_resources(cfg)
    return Stage(
        "search",
        Search,
        inputs=("question",),
        outputs=columns_of("search"),
        constructor_kwargs={
            "index_path": str(index_path),
            "cfg": cfg,
            "threads": threads_per_actor(cluster_cpus(), res.actors, threads),
            "device": "cuda" if res.num_gpus > 0 else "cpu",
        },
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
):
    """Lazy dataset: {id, question, ...} batches -> the same plus doc_ids, scores (top_k).

    Ensures the index first (on the driver; encoding on Ray), then adds one stateful Search
    stage. A hybrid runs both sub-retrievers and fuses them by RRF inside that stage.
    """
    path = ensure_index(benchmark, cfg, threads=threads, progress=progress)
    return apply_stage(rows, search_stage(cfg, path, threads=threads))
