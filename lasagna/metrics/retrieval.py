"""Retrieval metrics with trec_eval semantics: nDCG, recall, P, MAP, MRR and success at k.

Every number here equals what trec_eval (and pytrec_eval) prints for the same qrels and run;
the tests prove it on trec_eval's own test files, on ir_measures' cases and on random runs
against pytrec_eval. The rules, as trec_eval applies them:

- A run is ranked by score descending; equal scores are ordered by document id descending
  (byte order). The rank numbers a user writes are ignored, as trec_eval ignores them.
- Only queries with at least one judgment in `qrels` are scored. A judged query that is
  absent from the run, or has an empty ranking, scores 0 on every metric (trec_eval's `-c`
  flag), so a system that returns nothing is not averaged away.
- Binary measures count a document relevant when its grade is > 0; unjudged documents and
  negative grades are non-relevant.
- nDCG uses the grade itself as the gain (linear gains, negative grades count 0) and the
  discount 1/log2(rank + 1). The ideal ranking is all judged documents with grade > 0,
  sorted by grade, cut at the same k.
- `metric@k` is the measure on the ranking cut at k: `ndcg_cut_k`, `recall_k`, `P_k`,
  `map_cut_k`, `success_k`, and `mrr@k` is `recip_rank` on the run cut at k. P@k divides by
  k even when fewer than k documents were retrieved; recall and MAP divide by the number of
  relevant documents judged for the query (0 when there are none).

Values are fractions in [0, 1]. Scores may be Python floats, ints or numpy floats (float32
scores from faiss are widened exactly, so their ties stay ties).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lasagna.metrics.retrieval_names import (  # noqa: F401 (re-exported)
    DEFAULT_KS,
    MEASURES,
    METRIC_NAMES,
    check_ks,
    metric_names,
)

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def score_queries(
    qrels: Qrels, run: Run, ks: Sequence[int] = DEFAULT_KS
) -> dict[str, dict[str, float]]:
    """Per-query metrics (qid -> metric name -> value) for every query judged in `qrels`.

    Queries of `run` without judgments are ignored; judged queries missing from `run` score 0.
    Computed by pytrec_eval (trec_eval's C code; 1.2-3.7x faster than numpy here, see
    scripts/bench_metrics.py); the numpy implementation stands in where it is not installed.
    """
    ks = check_ks(ks)
    judged = {str(q): {str(d): int(g) for d, g in j.items()} for q, j in qrels.items() if j}
    try:
        import pytrec_eval
    except ImportError:  # pragma: no cover - pytrec_eval is a dependency
        from lasagna.metrics.retrieval_numpy import score_queries_numpy

        return score_queries_numpy(judged, run, ks)
    cut = ",".join(map(str, ks))
    measures = {f"ndcg_cut.{cut}", f"recall.{cut}", f"P.{cut}", f"map_cut.{cut}"}
    measures |= {f"success.{cut}", "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, measures)
    try:
        scored = evaluator.evaluate(run)
    except TypeError:  # numpy float32 scores (faiss) or ints from a user: pass Python floats
        scored = evaluator.evaluate(
            {q: {str(d): float(s) for d, s in r.items()} for q, r in run.items() if q in judged}
        )
    return {qid: _rename(scored.get(qid), ks) for qid in judged}


def _rename(te: dict[str, float] | None, ks: tuple[int, ...]) -> dict[str, float]:
    """pytrec_eval's measures for one query under lasagna's names; None (no ranking) -> 0."""
    if te is None:
        return dict.fromkeys(metric_names(ks), 0.0)
    # recip_rank is 1/rank of the first relevant document in the whole run; mrr@k keeps it
    # only when that rank is within k, which is recip_rank on the run cut at k.
    first = round(1.0 / te["recip_rank"]) if te["recip_rank"] > 0 else 0
    row: dict[str, float] = {}
    row |= {f"ndcg@{k}": te[f"ndcg_cut_{k}"] for k in ks}
    row |= {f"recall@{k}": te[f"recall_{k}"] for k in ks}
    row |= {f"p@{k}": te[f"P_{k}"] for k in ks}
    row |= {f"map@{k}": te[f"map_cut_{k}"] for k in ks}
    row |= {f"mrr@{k}": te["recip_rank"] if 0 < first <= k else 0.0 for k in ks}
    row |= {f"success@{k}": te[f"success_{k}"] for k in ks}
    return row


def passage_scores(read: Sequence[str], judged: Mapping[str, int]) -> tuple[float, float] | None:
    """(recall, hit) of the passages a RAG generator read, by the question's judgments:
    the share of its relevant documents (grade > 0) among them, and 1.0 when any is. None
    for a question without judgments. On a ranking without tied scores these are
    trec_eval's recall@k and success@k at k = the passages read; here they are of the
    passages actually put in the prompt, whatever their scores."""
    if not judged:
        return None
    relevant = {d for d, g in judged.items() if g > 0}
    found = len(relevant & set(read))
    return (found / len(relevant) if relevant else 0.0), float(found > 0)


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Arithmetic mean of each metric over the queries (trec_eval's 'all' line); {} if none."""
    if not per_query:
        return {}
    rows = list(per_query.values())
    names = list(rows[0])
    table = np.array([[row[n] for n in names] for row in rows], dtype=np.float64)
    return dict(zip(names, table.mean(axis=0).tolist(), strict=True))
