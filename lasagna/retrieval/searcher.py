"""Answer questions from a cached index: the one search code path, with or without Ray.

The Ray engine wraps a `Searcher` in an actor; tests and single-process runs call it
directly, so both give the same rankings by construction.
"""

from __future__ import annotations

from pathlib import Path

from lasagna.retrieval.bm25 import BM25Index
from lasagna.retrieval.dense import DenseIndex
from lasagna.retrieval.hybrid import fuse_rrf
from lasagna.retrieval.ranking import Ranking
from lasagna.retrieval.store import hybrid_parts
from lasagna.systems import BM25Retriever, DenseRetriever, HybridRetriever


class Searcher:
    """Loads the index at `index_path` (and the query embedder for dense) once."""

    def __init__(
        self,
        index_path: str | Path,
        cfg: BM25Retriever | DenseRetriever | HybridRetriever,
        *,
        num_threads: int | None = None,
        device: str = "cpu",
    ):
        self.cfg = cfg
        path = Path(index_path)
        if isinstance(cfg, BM25Retriever):
            self._bm25 = BM25Index.load(path, cfg)
        elif isinstance(cfg, DenseRetriever):
            from lasagna.models.embedders import load_embedder

            self._dense = DenseIndex.load(path)
            self._dense.set_search_params(nprobe=cfg.nprobe, ef_search=cfg.ef_search)
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
            self._parts = [
                Searcher(p, sub, num_threads=num_threads, device=device)
                for p, sub in zip(hybrid_parts(path), cfg.retrievers, strict=True)
            ]

    def search(self, questions: list[str]) -> list[Ranking]:
        """cfg.top_k (doc id, score) per question, best first, ties by doc id descending."""
        cfg = self.cfg
        if isinstance(cfg, BM25Retriever):
            return self._bm25.search(questions, cfg.top_k)
        if isinstance(cfg, DenseRetriever):
            from lasagna.models.embedders import encode

            q = encode(self._model, questions, batch_size=cfg.search.batch_size)
            ids, scores = self._dense.search(q, cfg.top_k)
            return [list(zip(i, s, strict=True)) for i, s in zip(ids, scores, strict=True)]
        per_part = [p.search(questions) for p in self._parts]
        return [
            fuse_rrf([part[i] for part in per_part], rrf_k=cfg.rrf_k, top_k=cfg.top_k)
            for i in range(len(questions))
        ]
