"""Deterministic top-k: score descending, ties broken by doc id descending (trec_eval's order).

Retrievers return their candidates through here so the same scores always give the same
ranking, whatever order the library produced them in.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Ranking = list[tuple[str, float]]


def rank_candidates(ids: Sequence[str], scores: Sequence[float], k: int) -> Ranking:
    """Sort (id, score) pairs best first, ties by id descending, and keep the first k."""
    pairs = sorted(zip(ids, (float(s) for s in scores), strict=True), reverse=True)  # id desc
    pairs.sort(key=lambda p: -p[1])  # stable: equal scores keep id-descending order
    return pairs[:k]


def top_k(
    scores: np.ndarray, ids: Sequence[str], k: int, *, min_score: float | None = None
) -> Ranking:
    """Top k of a full score vector over `ids`, ties broken by id descending.

    Every document tied with the k-th score is considered before cutting, so the cut is
    deterministic. `min_score`: drop documents scoring at or below it (BM25 non-matches).
    """
    if scores.shape[0] == 0 or k <= 0:
        return []
    # BM25 scores most documents 0: keep the scoring ones first, then select among them
    cand = np.flatnonzero(scores > min_score) if min_score is not None else None
    kept = scores if cand is None else scores[cand]
    n = kept.shape[0]
    if k < n:
        kth = np.partition(kept, n - k)[n - k]  # the k-th largest score
        top = np.flatnonzero(kept >= kth)
        cand = top if cand is None else cand[top]
    elif cand is None:
        cand = np.arange(n)
    return rank_candidates([ids[i] for i in cand], scores[cand].tolist(), k)
