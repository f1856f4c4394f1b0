"""The in-process path: build indexes and search in this process, without Ray.

Used by tests as the reference the Ray pipelines must match, and handy for small runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lasagna.data.model import Benchmark
from lasagna.retrieval.batching import corpus_plan
from lasagna.retrieval.ranking import Ranking
from lasagna.retrieval.searcher import Searcher
from lasagna.retrieval.store import EmbeddedBatch, EncodeCorpus, EncoderFor, ensure_retriever
from lasagna.systems import AnyRetriever, DenseRetriever

LOCAL_CHUNK = 4096  # documents encoded per batch written to disk


def dense_parts(cfg: AnyRetriever) -> list[DenseRetriever]:
    """The dense retrievers inside `cfg` (itself, a hybrid's parts, or none)."""
    return cfg.dense_parts()


def check_models(cfg: AnyRetriever) -> None:
    """Resolve every embedder `cfg` names (cheap), so a bad one fails before heavy work."""
    for check in cfg.checks():
        check()


def local_encoder_for(num_threads: int | None = None) -> EncoderFor:
    """Encoders that load the config's model in this process when a corpus must be encoded,
    in the batches of the corpus's encoding plan (the same batches as on Ray, so the same
    vectors); they yield about LOCAL_CHUNK documents at a time, so the embeddings stream to
    disk."""

    def encoder_for(cfg: DenseRetriever) -> EncodeCorpus:
        def encode_corpus(
            ids: list[str], texts: list[str], done: np.ndarray | None = None
        ) -> Iterator[EmbeddedBatch]:
            from lasagna.models.embedders import encode_batches, load_embedder

            plan = corpus_plan(cfg, ids, texts).without(done)
            if not len(plan):
                return
            model = load_embedder(
                cfg.model,
                "cpu",
                num_threads,
                normalize=cfg.normalize,
                max_seq_length=cfg.max_seq_length,
                precision=cfg.precision,
                backend=cfg.backend,
            )
            per_chunk = max(1, LOCAL_CHUNK // plan.batch_size)
            batches = list(plan.batches())
            for start in range(0, len(batches), per_chunk):
                part = batches[start : start + per_chunk]
                emb = encode_batches(model, [[texts[i] for i in rows] for rows in part])
                yield np.concatenate(part), emb

        return encode_corpus

    return encoder_for


def build_index_local(
    benchmark: Benchmark, cfg: AnyRetriever, *, num_threads: int | None = None
) -> Path:
    """The cached index for `cfg` over the benchmark's corpus, encoding in this process."""
    check_models(cfg)
    docs = list(benchmark.corpus.values())
    return ensure_retriever(benchmark.index_revision, docs, cfg, local_encoder_for(num_threads))


def search_local(
    benchmark: Benchmark, cfg: AnyRetriever, questions: list[str], *, num_threads: int | None = None
) -> list[Ranking]:
    """Build (or reuse) the index and search `questions` in this process."""
    path = build_index_local(benchmark, cfg, num_threads=num_threads)
    return Searcher(path, cfg, num_threads=num_threads).search(questions)
