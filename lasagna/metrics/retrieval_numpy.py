"""A pure-numpy implementation of `lasagna.metrics.retrieval` (same semantics, same output).

Used where pytrec_eval cannot be imported, and as an independent second implementation the
tests hold against pytrec_eval. It measured 1.2-3.7x slower than pytrec_eval on 100-document runs
(scripts/bench_metrics.py), mostly in sorting document ids to break score ties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]

# Queries scored at once: bounds the dense (queries x max k) matrices to a few hundred MB.
_CHUNK = 8192


def score_queries_numpy(qrels: Qrels, run: Run, ks: Sequence[int]) -> dict[str, dict[str, float]]:
    """Per-query metrics for every judged query; `ks` must be sorted, unique and positive."""
    ks = tuple(ks)
    qids = [q for q, judged in qrels.items() if judged]
    names = [f"{m}@{k}" for m in ("ndcg", "recall", "p", "map", "mrr", "success") for k in ks]
    out: dict[str, dict[str, float]] = {}
    for start in range(0, len(qids), _CHUNK):
        chunk = qids[start : start + _CHUNK]
        columns = _score_chunk(chunk, qrels, run, ks)
        values = [columns[name].tolist() for name in names]
        for i, qid in enumerate(chunk):
            out[qid] = {name: col[i] for name, col in zip(names, values, strict=True)}
    return out


def _score_chunk(
    qids: list[str], qrels: Qrels, run: Run, ks: tuple[int, ...]
) -> dict[str, np.ndarray]:
    """Metric columns (one value per query of `qids`) for one chunk of queries."""
    kmax = ks[-1]
    nq = len(qids)
    gains = _ranked_gains(qids, qrels, run, kmax)  # (nq, kmax) grades of the ranked docs
    ideal = _ideal_gains(qids, qrels, kmax)  # (nq, kmax) best possible grades
    num_rel = np.array([sum(1 for g in qrels[q].values() if g > 0) for q in qids], dtype=np.float64)

    rel = gains > 0
    ranks = np.arange(1, kmax + 1, dtype=np.float64)
    cum_rel = np.cumsum(rel, axis=1, dtype=np.float64)
    # Sum of precision at each relevant rank, as map_cut accumulates it.
    cum_prec = np.cumsum(np.where(rel, cum_rel / ranks, 0.0), axis=1)
    discount = np.log2(ranks + 1.0)
    dcg = np.cumsum(np.where(rel, gains, 0) / discount, axis=1)
    idcg = np.cumsum(ideal / discount, axis=1)
    first = np.where(rel.any(axis=1), rel.argmax(axis=1) + 1, 0)  # 1-based, 0 = none

    safe_rel = np.where(num_rel > 0, num_rel, 1.0)
    cols: dict[str, np.ndarray] = {}
    for k in ks:
        i = k - 1
        cols[f"ndcg@{k}"] = np.divide(dcg[:, i], idcg[:, i], out=np.zeros(nq), where=idcg[:, i] > 0)
        cols[f"recall@{k}"] = np.where(num_rel > 0, cum_rel[:, i] / safe_rel, 0.0)
        cols[f"p@{k}"] = cum_rel[:, i] / k
        cols[f"map@{k}"] = np.where(num_rel > 0, cum_prec[:, i] / safe_rel, 0.0)
        hit = (first > 0) & (first <= k)
        cols[f"mrr@{k}"] = np.where(hit, 1.0 / np.where(hit, first, 1), 0.0)
        cols[f"success@{k}"] = (cum_rel[:, i] > 0).astype(np.float64)
    return cols


def _ranked_gains(qids: list[str], qrels: Qrels, run: Run, kmax: int) -> np.ndarray:
    """Grades of each query's top-`kmax` documents in trec_eval order, padded with 0."""
    counts = np.zeros(len(qids), dtype=np.int64)
    docs: list[str] = []
    scores: list[float] = []
    grades: list[int] = []
    for i, qid in enumerate(qids):
        ranking = run.get(qid) or {}
        judged = qrels[qid]
        counts[i] = len(ranking)
        docs.extend(ranking)
        scores.extend(ranking.values())
        grades.extend([judged.get(d, 0) for d in ranking])
    out = np.zeros((len(qids), kmax), dtype=np.float64)
    if not docs:
        return out
    qidx = np.repeat(np.arange(len(qids)), counts)
    neg_score = -np.asarray(scores, dtype=np.float64)
    order = np.lexsort((neg_score, qidx))
    s_q, s_score = qidx[order], neg_score[order]
    if np.any((s_q[1:] == s_q[:-1]) & (s_score[1:] == s_score[:-1])):
        # Ties in score: break them by document id descending, as trec_eval does.
        _, doc_rank = np.unique(np.asarray(docs, dtype=str), return_inverse=True)
        order = np.lexsort((-doc_rank.reshape(-1), neg_score, qidx))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pos = np.arange(len(docs)) - np.repeat(starts, counts)  # rank within query, 0-based
    keep = pos < kmax
    sorted_q = qidx[order]
    out[sorted_q[keep], pos[keep]] = np.asarray(grades, dtype=np.float64)[order][keep]
    return out


def _ideal_gains(qids: list[str], qrels: Qrels, kmax: int) -> np.ndarray:
    """Per query, the positive grades of all judged documents, best first, cut at `kmax`."""
    out = np.zeros((len(qids), kmax), dtype=np.float64)
    for i, qid in enumerate(qids):
        best = sorted((g for g in qrels[qid].values() if g > 0), reverse=True)[:kmax]
        out[i, : len(best)] = best
    return out
