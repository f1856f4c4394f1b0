"""Hybrid retrieval by reciprocal rank fusion (Cormack et al., 2009).

score(d) = sum over rankings that contain d of 1 / (rrf_k + rank(d)), rank starting at 1.
Only ranks matter, so retrievers with incomparable score scales fuse fairly.
"""

from __future__ import annotations

from collections.abc import Sequence

from lasagna.retrieval.ranking import Ranking, rank_candidates


def fuse_rrf(rankings: Sequence[Ranking], rrf_k: int = 60, top_k: int = 100) -> Ranking:
    """Fuse best-first rankings of (doc id, score); returns (doc id, fused score), best first,
    ties by doc id descending."""
    if rrf_k < 0:
        raise ValueError(f"rrf_k must be >= 0, got {rrf_k}")
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, (doc_id, _score) in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (rrf_k + rank)
    return rank_candidates(list(fused), list(fused.values()), top_k)
