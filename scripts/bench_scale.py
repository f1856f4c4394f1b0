"""How lasagna's retrieval cost grows with the corpus: 10k, 100k and 1M documents.

Run from the repository root, alone on a small machine (the 1M point needs ~10 GiB free and
~20 minutes on 2 cores):
    python scripts/bench_scale.py                       # 10k, 100k, 1M
    python scripts/bench_scale.py --sizes 10000,100000  # develop on the small points
    python scripts/bench_scale.py --sizes '' --no-encoder --engine-docs 5000,100000,1000000
                                                        # only lasagna against one process

Data: scripts/scale_data.py, a deterministic synthetic corpus (pseudo-words, Zipf-like
frequencies, topics) with questions (1 per 10 documents, capped at 100k) and clustered
384-d unit vectors standing in for MiniLM embeddings (encoding 1M documents on 2 cores
takes hours; the real encoder is timed on 1k documents and extrapolated).

Every size runs in a fresh process (so its peak memory is its own), through lasagna's own
code: BM25Index.build/search, write_embeddings (streamed, memory-mapped), DenseIndex
flat/ivf/hnsw with the automatic parameters, score_retrieval_batch, RowSpool (the driver's
streamed, memory-mapped rows), save_trial and write_run (checkpoint and run folder). Searches over
every index use the same sample of --search-sample questions (flat is the truth for
recall@100); the full question set goes through IVF search -> scoring -> streamed rows.
The engine part runs `lasagna benchmark run` (BM25, Ray) and a plain one-process script doing
the same retrieval and scoring on the same files (scripts/scale_engine.py) and prints their
peak memory (PSS of the process tree) and its ratio per size.
Memory ("anon"): the step's peak anonymous RSS minus that before it; memory-mapped file
pages (the embeddings, the row spool) are left out, the kernel can drop them. The JSON also
holds the full RSS delta (d_rss).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]
K = 100
BATCH = 1024  # questions per pipeline batch (as the engine's search blocks)


def _status_kib(*keys: str) -> dict[str, int]:
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            name, _, rest = line.partition(":")
            if name in keys:
                out[name] = int(rest.split()[0])
    return out


class Peak:
    """Samples this process's RSS (all, and anonymous only) every 10 ms."""

    def __init__(self):
        self.rss = self.anon = 0
        self._stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def now(self) -> tuple[int, int]:
        s = _status_kib("VmRSS", "RssAnon")
        return s["VmRSS"] * 1024, s["RssAnon"] * 1024

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            rss, anon = self.now()
            self.rss, self.anon = max(self.rss, rss), max(self.anon, anon)

    def reset(self) -> tuple[int, int]:
        self.rss, self.anon = self.now()
        return self.rss, self.anon


def run_point(n_docs: int, n_questions: int, sample: int, work: Path, hnsw_max: int) -> list[dict]:
    """Every step at one size, in this process; returns one record per step."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from scale_data import CHUNK, ScaleData

    from lasagna.data.model import Document
    from lasagna.engine.trials import POSITION, in_row_order
    from lasagna.results import TrialResult, new_run_id, save_trial, write_run
    from lasagna.results.rows_stream import RowSpool
    from lasagna.retrieval.bm25 import BM25Index
    from lasagna.retrieval.dense import DenseIndex
    from lasagna.retrieval.store import read_embeddings, write_embeddings
    from lasagna.stages.scoring import score_retrieval_batch
    from lasagna.systems import BM25Retriever

    data = ScaleData(n_docs, n_questions)
    peak, records = Peak(), []

    @contextmanager
    def step(name: str, per: str, count: int, **extra):
        gc.collect()
        rss0, anon0 = peak.reset()
        t0, c0 = time.perf_counter(), time.process_time()
        rec = {"step": name, "docs": n_docs, "questions": n_questions, "per": per, "n": count}
        yield rec
        rec |= {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, **extra}
        rec |= {"peak_rss": peak.rss, "d_rss": peak.rss - rss0, "d_anon": peak.anon - anon0}
        records.append(rec)
        print(f"  {n_docs:>9,} {name:<22} {rec['seconds']:8.1f} s", file=sys.stderr)

    with step("corpus + questions", "doc", n_docs):
        docs = [
            Document(i, t)
            for ids, texts in data.documents()
            for i, t in zip(ids, texts, strict=True)
        ]
        qids, qtexts, qrel = data.questions()
    with step("bm25 build", "doc", n_docs):
        bm25 = BM25Index.build(docs, BM25Retriever())
        bm25.save(work / "bm25")
    ids = [d.id for d in docs]
    del docs
    qs = np.linspace(0, n_questions - 1, min(sample, n_questions)).astype(int)  # the sample
    with step("bm25 search", "question", len(qs)):
        bm25.search([qtexts[i] for i in qs], K)
    del bm25
    with step("embeddings write", "doc", n_docs):
        starts = range(0, n_docs, CHUNK)
        batches = (
            (np.arange(s, s + len(v)), v) for s, v in zip(starts, data.doc_vectors(), strict=False)
        )
        (work / "emb").mkdir()
        write_embeddings(work / "emb", ids, batches)
    qvec = data.question_vectors()
    _, emb = read_embeddings(work / "emb")
    truth: list[set[str]] = []
    keep = None
    for kind in ("flat", "ivf", "hnsw") if n_docs <= hnsw_max else ("flat", "ivf"):
        with step(f"{kind} build", "doc", n_docs) as rec:
            index = DenseIndex.build(ids, emb, kind)
            index.save(work / kind)
            rec["params"] = index.params.to_json()
        with step(f"{kind} search", "question", len(qs)) as rec:
            got, _ = index.search(qvec[qs], K)
            rec["search_params"] = index.search_params(K)
        if kind == "flat":
            truth = [set(g) for g in got]
        else:
            hits = [len(truth[i] & set(g)) / K for i, g in enumerate(got)]
            records[-1]["recall@100"] = float(np.mean(hits))
        if kind == "ivf":
            keep = index
        del index
    del emb
    with step("ivf search+score", "question", n_questions):  # the engine's Search + score
        spool = RowSpool(str(work))  # what the driver's collect() streams batches into
        for start in range(0, n_questions, BATCH):
            stop = min(n_questions, start + BATCH)
            got, scores = keep.search(qvec[start:stop], K)
            batch = pa.table(
                {
                    "id": qids[start:stop],
                    "doc_ids": pa.array(got, type=pa.list_(pa.string())),
                    "scores": pa.array(scores, type=pa.list_(pa.float64())),
                    "rel_ids": [[r] for r in qrel[start:stop]],
                    "rel_grades": [[1]] * (stop - start),
                    POSITION: np.arange(start, stop),
                }
            )
            spool.write(score_retrieval_batch(batch))
        rows = in_row_order(spool.table()).drop_columns([POSITION, "rel_ids", "rel_grades"])
    del keep, qvec
    with step("checkpoint+run folder", "question", n_questions) as rec:
        trial = TrialResult(
            key="k" * 64,
            comparability_key="c",
            track="retrieval",
            system="ivf",
            config={},
            benchmark={},
            metrics={"ndcg@10": pc.mean(rows.column("ndcg@10")).as_py()},
            rows=rows,
        )
        save_trial(work / "runs", trial)
        run = write_run(work / "runs", new_run_id(), {"profile": "scale"}, [trial])
        rec["parquet_bytes"] = sum(f.stat().st_size for f in Path(run).rglob("*.parquet"))
    return records


def encoder_rate(n: int = 1000) -> dict[str, float]:
    """Wall and CPU seconds per 1k documents, packaged MiniLM (2 torch threads, batch 64)."""
    from scale_data import ScaleData

    from lasagna.models.embedders import PACKAGED_EMBEDDER, encode, load_embedder

    _, texts = next(ScaleData(n, 1).documents())
    model = load_embedder(PACKAGED_EMBEDDER, "cpu", 2)
    encode(model, texts[:64], batch_size=64)  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    encode(model, texts[:n], batch_size=64)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"s_per_1k": wall * 1000 / n, "cpu_s_per_1k": cpu * 1000 / n}


def _child(args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False
    )
    sys.stderr.write(proc.stderr[-4000:] if proc.returncode else proc.stderr)
    if proc.returncode:
        raise SystemExit(f"bench child {args} failed ({proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _engines(doc: dict) -> list[dict]:
    """The engine runs of a saved --json file (older files hold one, as "engine")."""
    return doc.get("engines") or ([doc["engine"]] if doc.get("engine") else [])


def _fmt_n(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k"


def print_table(records: list[dict]) -> None:
    print(
        f"{'step':<22}{'docs':>5}{'items':>7}{'wall s':>7}{'cpu s':>7}{'cpu µs':>7}{'ns/q/d':>7}"
        f"{'anon':>6}{'B/it':>6}  note"
    )
    print(f"{'':<22}{'':>5}{'':>7}{'':>7}{'':>7}{'/item':>7}{'':>7}{'MiB':>6}")
    for name in dict.fromkeys(r["step"] for r in records):
        for r in (r for r in records if r["step"] == name):
            per_item = r["cpu"] * 1e6 / max(1, r["n"])
            ns_qd = f"{per_item * 1e3 / r['docs']:7.1f}" if r["per"] == "question" else " " * 7
            note = []
            if "recall@100" in r:
                note.append(f"R@100 {r['recall@100']:.4f}".replace(" 0.", " ."))
            short = {"nprobe": "nprobe", "ef_search": "efS", "nlist": "nlist", "hnsw_m": "M"}
            short["ef_construction"] = "efC"
            for k, v in {**r.get("params", {}), **r.get("search_params", {})}.items():
                if k in short:
                    note.append(f"{short[k]} {v}")
            print(
                f"{name:<22}{_fmt_n(r['docs']):>5}{r['n']:>7}{r['seconds']:7.1f}{r['cpu']:7.1f}"
                f"{per_item:7.1f}{ns_qd}{r['d_anon'] / 2**20:6.0f}"
                f"{r['d_anon'] / max(1, r['n']):6.0f}  {' '.join(note)}"
            )
        print()


def measure(args) -> tuple[list[dict], dict | None, list[dict]]:
    """Run every size (a fresh process each), the encoder, and the engine against the
    one-process reference at each --engine-docs size."""
    records: list[dict] = []
    for n in (int(s) for s in args.sizes.split(",") if s):
        nq = min(100_000, max(1, n // 10))
        print(f"size {n:,} documents, {nq:,} questions", file=sys.stderr)
        opts = ["--search-sample", str(args.search_sample)]
        opts += ["--hnsw-max-docs", str(args.hnsw_max_docs)]
        records += _child(["--point", str(n), str(nq), *opts])
    enc = _child(["--encoder"]) if not args.no_encoder else None
    engines = []
    for n in (int(s) for s in str(args.engine_docs).split(",") if s and int(s)):
        from scale_engine import engine_run, reference_run

        print(f"lasagna benchmark run and the one-process script, {n:,} documents", file=sys.stderr)
        engines.append({**engine_run(n), "reference": reference_run(n)})
    return records, enc, engines


def memory_table(engines: list[dict]) -> None:
    """lasagna's peak memory against the one-process script's, size by size."""
    print(
        "\nBM25 sweep, peak memory of the process tree (PSS): `lasagna benchmark run` against "
        "one process (bm25s, top-100, pytrec_eval)"
    )
    print(
        f"{'docs':>6}{'questions':>10}{'one process':>13}{'lasagna':>9}{'ratio':>7}"
        f"{'wall ratio':>11}{'nDCG@10 one / lasagna':>24}"
    )
    for e in engines:
        ref = e["reference"]
        print(
            f"{_fmt_n(e['docs']):>6}{e['questions']:>10,}{ref['peak_pss'] / 2**30:>9.2f} GiB"
            f"{e['peak_pss'] / 2**30:>5.2f} GiB{e['peak_pss'] / ref['peak_pss']:>6.2f}x"
            f"{e['wall'] / ref['wall']:>10.2f}x{ref['ndcg@10']:>13.5f} / {e['ndcg@10']:.5f}"
        )
    for e in engines:
        print(f"  lasagna at {_fmt_n(e['docs'])}, at its peak: {e['at_peak']}")


def report(records: list[dict], enc: dict | None, engines: list[dict]) -> None:
    if records:
        print_table(records)
    if enc:
        print(
            f"MiniLM encoder (sentence-transformers, 2 threads, batch 64): {enc['s_per_1k']:.1f} s"
            f" ({enc['cpu_s_per_1k']:.1f} CPU s) per 1k documents -> "
            f"{enc['s_per_1k'] * 1000 / 3600:.1f} h per 1M documents (extrapolated)"
        )
    peaks: dict[int, int] = {}
    for r in records:
        peaks[r["docs"]] = max(peaks.get(r["docs"], 0), r["peak_rss"])
    print(
        "peak RSS per size: "
        + ", ".join(f"{_fmt_n(n)} {p / 2**30:.2f} GiB" for n, p in peaks.items())
    )
    for engine in engines:
        t = engine["timings"]
        print(
            f"lasagna benchmark run, BM25, {_fmt_n(engine['docs'])} docs / "
            f"{engine['questions']:,} questions (Ray, in-process): {engine['wall']:.0f} s wall "
            f"(index {t.get('index', 0):.0f} s, search+score {t.get('search_and_score', 0):.0f} s);"
            f" peak RSS driver {engine['driver_peak'] / 2**30:.2f} GiB, Ray processes together "
            f"{engine['workers_peak'] / 2**30:.2f} GiB, largest one "
            f"{engine['largest_worker_peak'] / 2**30:.2f} GiB"
        )
    if any("reference" in e for e in engines):
        memory_table([e for e in engines if "reference" in e])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument(
        "--search-sample",
        type=int,
        default=1000,
        help="questions searched on every index (flat and BM25 are linear in n)",
    )
    parser.add_argument(
        "--hnsw-max-docs",
        type=int,
        default=100_000,
        help="skip the HNSW build above this size (its build is ~N log N: 1M takes ~15 min here)",
    )
    parser.add_argument(
        "--engine-docs",
        default="5000,100000",
        help="also run `lasagna benchmark run` (BM25, Ray) and the one-process script at these "
        "sizes, comma-separated (0: skip)",
    )
    parser.add_argument("--json", type=Path, help="also write the records here")
    parser.add_argument("--svg", type=Path, help="also draw the cost curve here (SVG)")
    parser.add_argument("--no-encoder", action="store_true", help="skip the MiniLM timing")
    parser.add_argument(
        "--report", type=Path, nargs="+", help="print the table of saved --json files instead"
    )
    parser.add_argument("--point", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--encoder", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.point:
        with tempfile.TemporaryDirectory(prefix="lasagna-scale-") as tmp:
            recs = run_point(*args.point, args.search_sample, Path(tmp), args.hnsw_max_docs)
        print(json.dumps(recs))
        return 0
    if args.encoder:
        print(json.dumps(encoder_rate()))
        return 0
    if args.report:  # print saved runs together (e.g. 10k/100k and, later, 1M)
        docs = [json.loads(p.read_text()) for p in args.report]
        records = [r for d in docs for r in d["records"]]
        enc = next((d["encoder"] for d in reversed(docs) if d.get("encoder")), None)
        engines = [e for d in docs for e in _engines(d)]
    else:
        records, enc, engines = measure(args)
    report(records, enc, engines)
    if args.svg:
        from scale_plot import svg

        args.svg.write_text(svg(records))
    if args.json:
        doc = {"records": records, "encoder": enc, "engines": engines}
        args.json.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
