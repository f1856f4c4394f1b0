"""Retrieval quality (and, later, speed) on BEIR SciFact test: lasagna vs published figures.

Run from the repository root:
    HF_HUB_OFFLINE=1 python scripts/bench_retrieval.py            # BM25 settings + dense
    HF_HUB_OFFLINE=1 python scripts/bench_retrieval.py --skip-dense

Quality targets (nDCG@10): dense all-MiniLM-L6-v2 equals MTEB's 0.64508 within 0.002;
BM25 at least 0.665 (bm25s' MTEB baseline 0.68736, Anserini BM25 flat 0.6789).
Dense encodes 5,183 documents (~220 s on 2 CPUs) through the Ray actor-pool pipeline.
Indexes are built in a fresh temporary cache unless --cache DIR is given.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "beir_scifact"

MTEB_MINILM = 0.64508
MTEB_BM25S = 0.68736
ANSERINI_FLAT = 0.6789
DENSE_TOLERANCE = 0.002
BM25_FLOOR = 0.665


def ndcg10(benchmark, rankings: dict[str, list[tuple[str, float]]]) -> float:
    """Mean nDCG@10 over the judged queries, trec_eval semantics (lasagna.metrics)."""
    from lasagna.metrics.retrieval import mean_metrics, score_queries

    run = {qid: dict(r) for qid, r in rankings.items()}
    return mean_metrics(score_queries(benchmark.qrels, run, ks=(10,)))["ndcg@10"]


def judged_rows(benchmark) -> list:
    return [r for r in benchmark.rows if benchmark.qrels.get(r.id)]


# ---------------------------------------------------------------- BM25 quality
BM25_SETTINGS = {
    "default (lucene k1=1.2 b=0.75, en stopwords, english stemmer)": {},
    "bm25s defaults (k1=1.5)": {"k1": 1.5},
    "Anserini parameters (k1=0.9 b=0.4)": {"k1": 0.9, "b": 0.4},
    "no stemmer": {"stemmer": None},
    "no stopwords": {"stopwords": None},
    "robertson idf": {"method": "robertson"},
}


def section_bm25_quality(benchmark) -> dict[str, float]:
    """nDCG@10 of BM25 under several settings, in-process (BM25 builds in seconds)."""
    from lasagna.retrieval.local import search_local
    from lasagna.sweep.systems import BM25Retriever

    rows = judged_rows(benchmark)
    questions = [r.question for r in rows]
    print(f"\n== BM25 on SciFact test ({len(rows)} judged queries), nDCG@10")
    print(f"   references: bm25s MTEB {MTEB_BM25S:.5f}, Anserini flat {ANSERINI_FLAT:.4f}")
    results: dict[str, float] = {}
    for label, overrides in BM25_SETTINGS.items():
        cfg = BM25Retriever(**overrides)
        t0 = time.perf_counter()
        rankings = search_local(benchmark, cfg, questions)
        score = ndcg10(benchmark, {r.id: k for r, k in zip(rows, rankings, strict=True)})
        results[label] = score
        flag = "ok" if score >= BM25_FLOOR else f"BELOW {BM25_FLOOR}"
        print(f"   {score:.5f}  {flag:>10}  {time.perf_counter() - t0:6.1f} s  {label}")
    return results


# ---------------------------------------------------------------- dense quality
def section_dense_quality(benchmark, *, actors: int, threads: int | None) -> float:
    """nDCG@10 of packaged MiniLM through the Ray pipelines (encode pool + search pool)."""
    import ray
    import ray.data

    from lasagna.engine.retrieval import ensure_index, retrieval_dataset
    from lasagna.sweep.systems import DenseRetriever, StageResources

    rows = judged_rows(benchmark)
    cfg = DenseRetriever(encode=StageResources(actors=actors, batch_size=64))
    print(f"\n== dense all-MiniLM-L6-v2 on SciFact test via Ray ({actors} encode actor(s))")
    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1")
    try:
        t_init = time.perf_counter()
        ensure_index(benchmark, cfg, progress=False, threads=threads)
        t_index = time.perf_counter()
        items = [{"id": r.id, "question": r.question} for r in rows]
        out = retrieval_dataset(ray.data.from_items(items), benchmark, cfg, threads=threads)
        rankings = {
            r["id"]: list(zip(r["doc_ids"], r["scores"], strict=True)) for r in out.take_all()
        }
        t_search = time.perf_counter()
    finally:
        ray.shutdown()
    score = ndcg10(benchmark, rankings)
    ok = abs(score - MTEB_MINILM) <= DENSE_TOLERANCE
    print(
        f"   ray init {t_init - t0:.1f} s, index (encode + faiss) {t_index - t_init:.1f} s, "
        f"search {t_search - t_index:.1f} s"
    )
    print(
        f"   nDCG@10 {score:.5f}  MTEB {MTEB_MINILM:.5f}  diff {score - MTEB_MINILM:+.5f}  "
        f"{'ok' if ok else 'OUT OF TOLERANCE'}"
    )
    return score


# ---------------------------------------------------------------- speed (added later)
# The end-to-end speed comparison against a single-process reference pipeline and the
# 1-vs-2-actor encoding scaling are added here by the lead, as further sections of main().


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="BEIR SciFact folder")
    parser.add_argument("--split", default="test")
    parser.add_argument("--skip-dense", action="store_true", help="BM25 only (seconds)")
    parser.add_argument("--actors", type=int, default=1, help="dense encode actors")
    parser.add_argument("--threads", type=int, default=None, help="torch threads per actor")
    parser.add_argument("--cache", type=Path, default=None, help="index cache (default: fresh)")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"SciFact not found at {args.data}: nothing to measure", file=sys.stderr)
        return 1

    from lasagna.data import load_benchmark

    with tempfile.TemporaryDirectory(prefix="lasagna-bench-") as tmp:
        os.environ["LASAGNA_CACHE"] = str(args.cache or tmp)
        t0 = time.perf_counter()
        benchmark = load_benchmark(args.data, split=args.split)
        print(
            f"loaded {benchmark.name}: {len(benchmark.corpus)} docs, "
            f"{len(judged_rows(benchmark))} judged queries in {time.perf_counter() - t0:.1f} s"
        )

        # section 1: BM25 quality
        section_bm25_quality(benchmark)
        # section 2: dense quality
        if not args.skip_dense:
            section_dense_quality(benchmark, actors=args.actors, threads=args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
