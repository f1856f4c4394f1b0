"""Time the numpy retrieval metrics against the pytrec_eval-backed ones on one synthetic run.

`score_queries` uses pytrec_eval because this measured it faster. Both produce the same
per-query dict (qid -> "ndcg@10" -> value). The run has `--docs` documents per query with
scores rounded to 2 decimals (many ties); each query has 1-5 graded judgments. Times are
for `--queries` queries and extrapolated linearly to 1M.

    python scripts/bench_metrics.py --queries 20000 --docs 100
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lasagna.metrics.retrieval import DEFAULT_KS, score_queries
from lasagna.metrics.retrieval_numpy import score_queries_numpy


def synthetic(n_queries: int, n_docs: int, seed: int = 0) -> tuple[dict, dict]:
    """A BEIR-like batch: ~1-5 graded judgments per query, `n_docs` ranked docs per query."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    pool = [f"doc{i}" for i in range(50_000)]
    for q in range(n_queries):
        qid = f"q{q}"
        judged = rng.integers(0, len(pool), size=int(rng.integers(1, 6)))
        grades = rng.integers(0, 4, len(judged))
        qrels[qid] = {pool[d]: int(g) for d, g in zip(judged, grades, strict=True)}
        ranked = rng.integers(0, len(pool), size=n_docs)
        scores = np.round(rng.random(n_docs), 2).tolist()
        run[qid] = dict(zip((pool[d] for d in ranked), scores, strict=True))
        for d in judged[: int(rng.integers(0, len(judged) + 1))]:
            run[qid][pool[d]] = float(np.round(rng.random(), 2))
    return qrels, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--docs", type=int, default=100)
    args = parser.parse_args()

    qrels, run = synthetic(args.queries, args.docs)
    timings = {}
    results = {}
    for name, fn in (("numpy", score_queries_numpy), ("pytrec_eval", score_queries)):
        start = time.perf_counter()
        results[name] = fn(qrels, run, DEFAULT_KS)
        timings[name] = time.perf_counter() - start
    worst = max(
        abs(results["numpy"][q][m] - results["pytrec_eval"][q][m])
        for q in results["numpy"]
        for m in results["numpy"][q]
    )
    scale = 1_000_000 / args.queries
    for name, secs in timings.items():
        print(
            f"{name:12s} {args.queries} queries x {args.docs} docs: {secs:.2f} s "
            f"({args.queries / secs:,.0f} queries/s; ~{secs * scale:.0f} s per 1M queries)"
        )
    print(f"ratio pytrec_eval / numpy time: {timings['pytrec_eval'] / timings['numpy']:.2f}")
    print(f"largest difference between the two: {worst:.3g}")


if __name__ == "__main__":
    main()
