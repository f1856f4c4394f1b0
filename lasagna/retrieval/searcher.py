"""Answer questions from a cached index: the one search code path, with or without Ray.

The Ray engine wraps a `Searcher` in an actor; tests and single-process runs call it
directly, so both give the same rankings by construction. Each index kind's library is
imported only by the searchers that use it (bm25s pulls in numba and SciPy: seconds in
every fresh dense Search actor otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from lasagna.retrieval.hybrid import fuse_rrf
from lasagna.retrieval.ranking import Ranking
from lasagna.systems import BM25Retriever, DenseRetriever, HybridRetriever

# questions -> float32 embeddings (e.g. a run's pooled embedder, lasagna.stages.embedding)
QueryEncoder = Callable[[list[str]], np.ndarray]


class Searcher:
    """Loads the index at `index_path` once, and the query embedder for dense unless
    `encoders` gives one per dense part (`cfg.dense_parts()`, in order)."""

    def __init__(
        self,
        index_path: str | Path,
        cfg: BM25Retriever | DenseRetriever | HybridRetriever,
        *,
        num_threads: int | None = None,
        device: str = "cpu",
        encoders: Sequence[QueryEncoder] | None = None,
    ):
        self.cfg = cfg
        self._encoder: QueryEncoder | None = None
        path = Path(index_path)
        if isinstance(cfg, BM25Retriever):
            from lasagna.retrieval.bm25 import BM25Index

            self._bm25 = BM25Index.load(path, cfg)
        elif isinstance(cfg, DenseRetriever):
            from lasagna.models.embedders import load_embedder
            from lasagna.retrieval.dense import DenseIndex

            self._dense = DenseIndex.load(path, device=device)
            self._dense.set_search_params(nprobe=cfg.nprobe, ef_search=cfg.ef_search)
            if encoders:
                self._encoder = encoders[0]
            else:
                self._model = load_embedder(
                    cfg.model,
                    device,
                    num_threads,
                    normalize=cfg.normalize,
                    max_seq_length=cfg.max_seq_length,
                    precision=cfg.precision,
                    backend=cfg.backend,
                )
        else:
            from lasagna.retrieval.store import hybrid_parts

            left = list(encoders or [])
            self._parts = []
            for p, sub in zip(hybrid_parts(path), cfg.retrievers, strict=True):
                mine = [left.pop(0)] if left and isinstance(sub, DenseRetriever) else None
                self._parts.append(
                    Searcher(p, sub, num_threads=num_threads, device=device, encoders=mine)
                )

    def search(self, questions: list[str]) -> list[Ranking]:
        """cfg.top_k (doc id, score) per question, best first, ties by doc id descending."""
        cfg = self.cfg
        if isinstance(cfg, BM25Retriever):
            return self._bm25.search(questions, cfg.top_k)
        if isinstance(cfg, DenseRetriever):
            if cfg.query_prefix:
                questions = [cfg.query_prefix + q for q in questions]
            if self._encoder is not None:
                q = self._encoder(questions)
            else:
                from lasagna.models.embedders import encode_queries

                q = encode_queries(self._model, questions, cfg.search.batch_size)
            ids, scores = self._dense.search(q, cfg.top_k)
            return [list(zip(i, s, strict=True)) for i, s in zip(ids, scores, strict=True)]
        per_part = [p.search(questions) for p in self._parts]
        return [
            fuse_rrf([part[i] for part in per_part], rrf_k=cfg.rrf_k, top_k=cfg.top_k)
            for i in range(len(questions))
        ]
