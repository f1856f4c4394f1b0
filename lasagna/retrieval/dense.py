"""Dense retrieval over faiss: exact inner product by default, IVF or HNSW for large corpora.

Scores are inner products of the stored embeddings (cosine when the embedder normalizes).
Results are re-ranked through `ranking.rank_candidates`, so equal scores come out in doc id
descending order; a few extra candidates are fetched so a tie at the cut is seen whole in
practice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import faiss
import numpy as np

from lasagna.retrieval.ranking import Ranking, rank_candidates

IndexKind = Literal["flat", "ivf", "hnsw"]
INDEX_FILE = "index.faiss"
IDS_FILE = "doc_ids.json"
TIE_MARGIN = 16  # extra candidates fetched beyond k to resolve ties at the cut
MAX_NLIST = 65536


def default_nlist(n: int) -> int:
    """IVF list count: ~4*sqrt(n), at least 1, at most n/39 so each list trains on enough
    points (faiss wants ~39 per centroid), capped at MAX_NLIST."""
    return max(1, min(MAX_NLIST, int(4 * math.sqrt(n)), n // 39 or 1))


def _as_matrix(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array, got shape {x.shape}")
    return x


class DenseIndex:
    """A faiss inner-product index plus the doc ids in index order."""

    def __init__(self, index: faiss.Index, doc_ids: list[str]):
        self.index = index
        self.doc_ids = doc_ids

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        embeddings: np.ndarray,
        kind: IndexKind = "flat",
        *,
        nlist: int | None = None,
        hnsw_m: int = 32,
        seed: int = 0,
    ) -> DenseIndex:
        """Index `embeddings` (n x d float32; row i is document ids[i])."""
        x = _as_matrix(embeddings)
        if len(ids) != x.shape[0]:
            raise ValueError(f"{len(ids)} ids for {x.shape[0]} embeddings")
        d = x.shape[1]
        if kind == "flat":
            index: faiss.Index = faiss.IndexFlatIP(d)
        elif kind == "ivf":
            lists = nlist or default_nlist(x.shape[0])
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, lists, faiss.METRIC_INNER_PRODUCT)
            index.cp.seed = seed  # deterministic k-means
            index.train(x)
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        else:
            raise ValueError(f"unknown index kind {kind!r}")
        index.add(x)
        return cls(index, list(ids))

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.index, str(directory / INDEX_FILE))
        (directory / IDS_FILE).write_text(json.dumps(self.doc_ids))

    @classmethod
    def load(cls, directory: str | Path) -> DenseIndex:
        directory = Path(directory)
        index = faiss.read_index(str(directory / INDEX_FILE))
        return cls(index, json.loads((directory / IDS_FILE).read_text()))

    def set_search_params(self, *, nprobe: int | None = None, ef_search: int | None = None):
        """Query-time knobs of the approximate indexes (ignored by flat)."""
        if nprobe is not None and hasattr(self.index, "nprobe"):
            self.index.nprobe = nprobe
        if ef_search is not None and hasattr(self.index, "hnsw"):
            self.index.hnsw.efSearch = ef_search

    def search(
        self, query_embeddings: np.ndarray, k: int
    ) -> tuple[list[list[str]], list[list[float]]]:
        """Per query: doc ids and scores, best first, ties by doc id descending."""
        q = _as_matrix(query_embeddings)
        n = self.index.ntotal
        fetch = min(n, k + TIE_MARGIN)
        if fetch == 0 or q.shape[0] == 0:
            return [[] for _ in range(q.shape[0])], [[] for _ in range(q.shape[0])]
        if hasattr(self.index, "hnsw"):
            self.index.hnsw.efSearch = max(self.index.hnsw.efSearch, fetch)
        scores, idx = self.index.search(q, fetch)
        out_ids: list[list[str]] = []
        out_scores: list[list[float]] = []
        for row_s, row_i in zip(scores, idx, strict=True):
            keep = row_i >= 0  # approximate indexes pad with -1 when they find fewer
            ranked: Ranking = rank_candidates(
                [self.doc_ids[i] for i in row_i[keep]], row_s[keep].tolist(), k
            )
            out_ids.append([d for d, _ in ranked])
            out_scores.append([s for _, s in ranked])
        return out_ids, out_scores
