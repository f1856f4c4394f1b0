"""Retrieval quality and speed on BEIR SciFact test: lasagna vs published figures and a reference.

Run from the repository root:
    HF_HUB_OFFLINE=1 python scripts/bench_retrieval.py            # BM25 settings + dense
    HF_HUB_OFFLINE=1 python scripts/bench_retrieval.py --skip-dense
    HF_HUB_OFFLINE=1 python scripts/bench_retrieval.py --skip-quality --speed --scaling-docs 1000
    HF_HUB_OFFLINE=1 python scripts/bench_retrieval.py --encoding   # the speed goals
    HF_HUB_OFFLINE=1 python scripts/bench_retrieval.py --encoding --docs 500   # a quick subset

--encoding prints, in one run: the CPU flags and what `backend/precision: auto` picks there,
`lasagna benchmark run --profile speed` (fresh cache) against the fp32 one-process reference
(wall time and peak memory, with where the memory goes), and per encoder runtime and
precision (torch, OpenVINO, ONNX Runtime; bf16 where native): nDCG@10 with the quality
guard, batch invariance, and achieved GFLOP/s against the matmul rate at that precision.

Quality targets (nDCG@10): dense all-MiniLM-L6-v2 equals MTEB's 0.64508 within 0.002;
BM25 at least 0.665 (bm25s' MTEB baseline 0.68736, Anserini BM25 flat 0.6789).
Dense encodes 5,183 documents (~220 s on 2 CPUs) through the Ray actor-pool pipeline.
Indexes are built in a fresh temporary cache unless --cache DIR is given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_encoding import (  # noqa: E402
    GIB,
    TreeMemory,
    default_settings,
    print_projection,
    section_runtimes,
    subset_beir,
)

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
    "default (lucene k1=1.5 b=0.75, en stopwords, english stemmer)": {},
    "k1=1.2": {"k1": 1.2},
    "Anserini parameters (k1=0.9 b=0.4)": {"k1": 0.9, "b": 0.4},
    "no stemmer": {"stemmer": None},
    "no stopwords": {"stopwords": None},
    "robertson idf": {"method": "robertson"},
}


def section_bm25_quality(benchmark) -> dict[str, float]:
    """nDCG@10 of BM25 under several settings, in-process (BM25 builds in seconds)."""
    from lasagna.retrieval.local import search_local
    from lasagna.systems import BM25Retriever

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

    from lasagna.stages.retrieval import ensure_index, retrieval_dataset
    from lasagna.systems import DenseRetriever, StageResources

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


# ---------------------------------------------------------------- speed
def section_reference(benchmark, *, threads: int = 2) -> dict[str, float]:
    """The plain single-process pipeline: sentence-transformers encode + faiss flat search +
    pytrec_eval, same model, same threads, nothing cached."""
    import faiss
    import pytrec_eval
    import torch
    from sentence_transformers import SentenceTransformer

    from lasagna.models.embedders import resolve_embedder

    print(
        f"\n== reference: one process, sentence-transformers + faiss flat + pytrec_eval "
        f"({threads} threads)"
    )
    torch.set_num_threads(threads)
    times: dict[str, float] = {}
    with TreeMemory(os.getpid()) as mem:
        t = time.perf_counter()
        model = SentenceTransformer(
            str(resolve_embedder("packaged:all-MiniLM-L6-v2")), device="cpu"
        )
        times["model load"] = time.perf_counter() - t
        docs = list(benchmark.corpus.values())
        t = time.perf_counter()
        emb = model.encode([d.indexed_text for d in docs], batch_size=64, convert_to_numpy=True)
        times["corpus encode"] = time.perf_counter() - t
        t = time.perf_counter()
        rows = judged_rows(benchmark)
        index = faiss.IndexFlatIP(emb.shape[1])
        index.add(emb.astype("float32"))
        q = model.encode([r.question for r in rows], batch_size=64, convert_to_numpy=True)
        scores, idx = index.search(q.astype("float32"), 100)
        times["search"] = time.perf_counter() - t
        t = time.perf_counter()
        run = {
            r.id: {docs[j].id: float(s) for j, s in zip(idx[i], scores[i], strict=True)}
            for i, r in enumerate(rows)
        }
        qrels = {r.id: benchmark.qrels[r.id] for r in rows}
        per_q = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        ndcg = sum(v["ndcg_cut_10"] for v in per_q.values()) / len(per_q)
        times["scoring"] = time.perf_counter() - t
    times["total"] = sum(times.values())
    print("   " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()))
    print(
        f"   nDCG@10 {ndcg:.5f}; peak memory {mem.peak_pss / GIB:.2f} GiB PSS "
        f"({mem.peak_rss / GIB:.2f} GiB RSS)"
    )
    times["ndcg@10"] = ndcg
    times["peak_pss"], times["peak_rss"] = mem.peak_pss, mem.peak_rss
    return times


def section_lasagna_end_to_end(data: Path, split: str, cache: Path) -> dict[str, float]:
    """`lasagna benchmark run` with the speed profile (BM25 + dense MiniLM, fresh cache) as a
    user runs it, with the peak memory of its process tree and where it goes."""
    import subprocess

    print("\n== lasagna benchmark run --profile speed (BM25 + dense MiniLM, fresh index cache)")
    work = Path(tempfile.mkdtemp(prefix="lasagna-bench-run-"))
    env = dict(os.environ, LASAGNA_CACHE=str(cache))
    lasagna = Path(sys.executable).with_name("lasagna")
    cmd = [str(lasagna), "benchmark", "run", str(data), "--split", split, "--profile", "speed"]
    t = time.perf_counter()
    proc = subprocess.Popen(
        [*cmd, "--output", str(work / "results")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    with TreeMemory(proc.pid) as mem:
        out, _ = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        print(out)
        raise SystemExit(f"lasagna exited {proc.returncode}")
    manifest = json.loads(next((work / "results").glob("2*/manifest.json")).read_text())
    print(f"   wall {wall:.1f} s, ray start {manifest['ray'].get('start_s', 0.0):.1f} s")
    dense = {}
    for trial in manifest["trials"]:
        parts = ", ".join(f"{k} {v:.1f} s" for k, v in trial["timings"].items())
        config = trial.get("config", {})
        precision = config.get("precision")
        setting = f"{config.get('backend')} {precision}" if precision else ""
        label = trial["system"] + (f" ({setting})" if setting else "")
        print(f"   {label}: nDCG@10 {trial['metrics']['ndcg@10']:.5f}; {parts}")
        if precision:
            dense = {**trial, "setting": setting}
    print("   (the rest is process start, imports, data load, preflight and writing)")
    print(
        f"   peak memory of the process tree {mem.peak_pss / GIB:.2f} GiB PSS "
        f"({mem.peak_rss / GIB:.2f} GiB RSS); at the peak: {mem.breakdown()}"
    )
    return {
        "total": wall,
        "ray_start": manifest["ray"].get("start_s", 0.0),
        "ndcg@10": dense["metrics"]["ndcg@10"],
        "setting": dense["setting"],
        "peak_pss": mem.peak_pss,
        "peak_rss": mem.peak_rss,
    }


def section_encode_scaling(benchmark, n_docs: int) -> dict[int, float]:
    """Corpus encoding on the Ray actor pool: 1 actor x 2 torch threads against 2 actors x 1
    thread, the same 2 cores split differently, so the ratio is what Ray's fan-out costs."""
    import ray

    from lasagna.retrieval.store import gather_embeddings
    from lasagna.stages.retrieval import stream_corpus_ray
    from lasagna.systems import DenseRetriever, StageResources

    docs = list(benchmark.corpus.values())[:n_docs]
    ids, texts = [d.id for d in docs], [d.indexed_text for d in docs]
    print(
        f"\n== corpus encoding on Ray, {len(docs)} docs: 1 actor x 2 threads vs 2 actors x 1 thread"
    )
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1")
    try:
        rates = {}
        for actors, threads in ((1, 2), (2, 1)):
            cfg = DenseRetriever(encode=StageResources(actors=actors, batch_size=64))
            t = time.perf_counter()
            head = stream_corpus_ray(ids[:64], texts[:64], cfg, threads=threads, progress=False)
            gather_embeddings(len(ids[:64]), head)  # actor start + model load
            warm = time.perf_counter() - t
            t = time.perf_counter()
            gather_embeddings(
                len(ids), stream_corpus_ray(ids, texts, cfg, threads=threads, progress=False)
            )
            rates[actors] = len(ids) / (time.perf_counter() - t)
            if actors == 1:  # a pipeline's fixed cost: actor start + model load
                rates[0] = max(0.0, warm - 64 / rates[1])
            print(
                f"   {actors} actor(s) x {threads} thread(s): {rates[actors]:.1f} docs/s "
                "(actor start and model load included)"
            )
        ratio = rates[2] / rates[1]
        verdict = "within 5%" if abs(ratio - 1) <= 0.05 else "NOT within 5%"
        print(
            f"   2x1 / 1x2: {ratio:.3f} ({verdict}; goal: Ray's fan-out costs nothing measurable)"
        )
    finally:
        ray.shutdown()
    return rates  # {1: docs/s, 2: docs/s, 0: seconds of fixed cost per pipeline}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="BEIR SciFact folder")
    parser.add_argument("--split", default="test")
    parser.add_argument("--skip-dense", action="store_true", help="BM25 only (seconds)")
    parser.add_argument("--actors", type=int, default=1, help="dense encode actors")
    parser.add_argument("--threads", type=int, default=None, help="torch threads per actor")
    parser.add_argument("--cache", type=Path, default=None, help="index cache (default: fresh)")
    parser.add_argument(
        "--speed",
        action="store_true",
        help="also: lasagna end to end vs the single-process reference",
    )
    parser.add_argument(
        "--scaling-docs",
        type=int,
        default=0,
        help="also: encode N docs with 1 vs 2 actors (0: skip)",
    )
    parser.add_argument("--skip-quality", action="store_true", help="speed sections only")
    parser.add_argument(
        "--runtimes",
        default="",
        help="also: nDCG@10, batch invariance and GFLOP/s per encoder setting, e.g. "
        "torch:fp32,openvino:bf16 ('auto': every setting worth measuring on this CPU)",
    )
    parser.add_argument(
        "--encoding",
        action="store_true",
        help="the speed goals in one run: --skip-quality --speed --runtimes auto",
    )
    parser.add_argument("--docs", type=int, default=0, help="use the first N documents only")
    args = parser.parse_args(argv)
    if args.encoding:
        args.skip_quality, args.speed = True, True
        args.runtimes = args.runtimes or "auto"
    if not args.data.is_dir():
        print(f"SciFact not found at {args.data}: nothing to measure", file=sys.stderr)
        return 1

    from lasagna.data import load_benchmark

    with tempfile.TemporaryDirectory(prefix="lasagna-bench-") as tmp:
        os.environ["LASAGNA_CACHE"] = str(args.cache or tmp)
        if args.docs:
            args.data = subset_beir(args.data, args.docs, Path(tmp) / "subset", args.split)
        t0 = time.perf_counter()
        benchmark = load_benchmark(args.data, split=args.split)
        print(
            f"loaded {benchmark.name}: {len(benchmark.corpus)} docs, "
            f"{len(judged_rows(benchmark))} judged queries in {time.perf_counter() - t0:.1f} s"
        )

        if not args.skip_quality:
            section_bm25_quality(benchmark)
            if not args.skip_dense:
                section_dense_quality(benchmark, actors=args.actors, threads=args.threads)
        print_hardware()
        ref: dict = {}
        if args.speed:
            ref = section_reference(benchmark)
            fresh = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
            ours = section_lasagna_end_to_end(args.data, args.split, fresh)
            print_goal(ours, ref)
        if args.scaling_docs:
            rates = section_encode_scaling(benchmark, args.scaling_docs)
            if args.speed:
                per_core = len(benchmark.corpus) / ref["corpus encode"] / 2
                fixed = ours["ray_start"] + rates[0]
                print_projection(per_core, rates[2] / rates[1], fixed)
        if args.runtimes:  # last: the longest section
            settings = (
                default_settings()
                if args.runtimes == "auto"
                else [tuple(x.strip().split(":")) for x in args.runtimes.split(",") if x.strip()]
            )
            section_runtimes(benchmark, settings, threads=2)
    return 0


def print_hardware() -> None:
    """The CPU flags `auto` reads, the kind of hardware they make, and what `auto` picks."""
    from lasagna.models.precision import cpu_flags, hardware_kind, resolve_setting

    flags = cpu_flags()
    shown = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile") if f in flags]
    backend, precision = resolve_setting("auto", "auto", gpu=False)
    print(
        f"CPU: {os.cpu_count()} cores, flags {' '.join(shown) or '(none of avx2/avx512/amx)'}; "
        f"hardware kind '{hardware_kind(gpu=False)}'; backend/precision auto -> "
        f"{backend} {precision}"
    )


def print_goal(ours: dict, ref: dict) -> None:
    """The end-to-end ratios against the one-process fp32 reference, and the goal that applies
    on this CPU (<= 0.5x wall where bf16 is native; elsewhere the ratio with what auto chose)."""
    from lasagna.models.precision import cpu_has_bf16

    wall = ours["total"] / ref["total"]
    goal = "goal <= 0.5 on native bf16" if cpu_has_bf16() else "no native bf16 here: no goal"
    print(
        f"\n== lasagna ({ours['setting']}) / reference (torch fp32, one process): wall "
        f"{wall:.2f}x ({goal}), peak memory {ours['peak_pss'] / ref['peak_pss']:.2f}x PSS, "
        f"{ours['peak_rss'] / ref['peak_rss']:.2f}x RSS; nDCG@10 {ours['ndcg@10']:.5f} vs "
        f"{ref['ndcg@10']:.5f} (diff {ours['ndcg@10'] - ref['ndcg@10']:+.5f}, guard 0.002)"
    )


if __name__ == "__main__":
    sys.exit(main())
