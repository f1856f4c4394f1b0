"""How a dense index stores its vectors (`vectors: fp32 | fp16 | bf16`): size, quality, speed.

    HF_HUB_OFFLINE=1 python scripts/bench_vectors.py                  # SciFact test, flat + hnsw
    HF_HUB_OFFLINE=1 python scripts/bench_vectors.py --docs 1000      # a quick subset

The packaged MiniLM encodes the corpus once (in this process, lasagna's encoding plan; the
embeddings are cached under --cache, so a second run starts at once); each index kind is then
built from those embeddings storing fp32, fp16 and bf16 vectors. Per setting: the index's
size on disk (what a Search actor holds in memory), nDCG@10 on the judged test questions
against fp32's (the encoder precision's quality guard, 0.002, as the yardstick), whether the
top 10 of every question is fp32's, and the search time of all questions (best of 3, the
questions' vectors computed once beforehand, so the index alone is timed). Ratios, not
seconds, are the result: the machine's load moves the seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_encoding import subset_beir  # noqa: E402
from bench_retrieval import DATA, judged_rows, ndcg10  # noqa: E402

GUARD = 0.002
SETTINGS = ("fp32", "fp16", "bf16")


def measure(benchmark, kind: str, vectors: str, queries, threads: int) -> dict:
    from lasagna.retrieval.dense import INDEX_FILE, DenseIndex
    from lasagna.retrieval.local import build_index_local
    from lasagna.systems import DenseRetriever

    cfg = DenseRetriever(index=kind, vectors=vectors, top_k=100)
    t = time.perf_counter()
    path = build_index_local(benchmark, cfg, num_threads=threads)
    build_s = time.perf_counter() - t
    index = DenseIndex.load(path)
    index.set_search_params(nprobe=cfg.nprobe, ef_search=cfg.ef_search)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        ids, scores = index.search(queries, cfg.top_k)
        best = min(best, time.perf_counter() - t)
    return {
        "bytes": (path / INDEX_FILE).stat().st_size,
        "build_s": build_s,
        "search_s": best,
        "rankings": [list(zip(i, s, strict=True)) for i, s in zip(ids, scores, strict=True)],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="BEIR SciFact folder")
    parser.add_argument("--docs", type=int, default=0, help="the first N documents only")
    parser.add_argument("--kinds", default="flat,hnsw", help="index kinds (flat, ivf, hnsw)")
    parser.add_argument("--threads", type=int, default=2, help="torch and faiss threads")
    parser.add_argument(
        "--cache", type=Path, default=Path("/tmp/lasagna-bench-vectors"), help="index cache"
    )
    args = parser.parse_args(argv)
    os.environ["LASAGNA_CACHE"] = str(args.cache)
    import faiss

    from lasagna.data import load_benchmark
    from lasagna.models.embedders import encode_queries, load_embedder
    from lasagna.systems import DenseRetriever

    faiss.omp_set_num_threads(args.threads)
    data = subset_beir(args.data, args.docs, args.cache / "subset") if args.docs else args.data
    benchmark = load_benchmark(data, split="test")
    rows = judged_rows(benchmark)
    cfg = DenseRetriever()
    model = load_embedder(
        cfg.model, "cpu", args.threads, precision=cfg.precision, backend=cfg.backend
    )
    queries = encode_queries(model, [r.question for r in rows], 64)
    print(
        f"dense {cfg.model} ({cfg.backend} {cfg.precision}) on {data.name}: "
        f"{len(benchmark.corpus)} documents, {len(rows)} judged questions; {args.threads} threads"
    )
    print(
        "| index | vectors | size | vs fp32 | nDCG@10 | vs fp32 | guard | same top 10 "
        "| search | vs fp32 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        base: dict | None = None
        for vectors in SETTINGS:
            r = measure(benchmark, kind, vectors, queries, args.threads)
            rankings = {row.id: ranked for row, ranked in zip(rows, r["rankings"], strict=True)}
            r["ndcg"] = ndcg10(benchmark, rankings)
            base = base or r
            same = sum(
                [d for d, _ in a[:10]] == [d for d, _ in b[:10]]
                for a, b in zip(r["rankings"], base["rankings"], strict=True)
            )
            delta = r["ndcg"] - base["ndcg"]
            print(
                f"| {kind} | {vectors} | {r['bytes'] / 2**20:.1f} MiB | "
                f"{r['bytes'] / base['bytes']:.2f}x | {r['ndcg']:.5f} | {delta:+.5f} | "
                f"{'ok' if abs(delta) <= GUARD else 'OUT'} | {same}/{len(rows)} | "
                f"{r['search_s']:.3f} s | {r['search_s'] / base['search_s']:.2f}x |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
