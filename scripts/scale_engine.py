"""`lasagna benchmark run` on bench_scale's synthetic benchmark: the real engine (Ray, BM25)
as a user runs it, against a plain one-process script doing the same retrieval and scoring
(bm25s with the same tokenization, top-100, pytrec_eval) on the same BEIR folder, each a
fresh process tree measured by its peak PSS (shared pages split between the processes that
map them, so Ray's workers are not counted twice)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_encoding import TreeMemory

ROOT = Path(__file__).resolve().parents[1]


def write_beir(n_docs: int, n_questions: int, folder: Path) -> None:
    """The synthetic benchmark as a BEIR folder (what a user would point lasagna at)."""
    from scale_data import ScaleData

    data = ScaleData(n_docs, n_questions)
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w") as fh:
        for ids, texts in data.documents():
            for i, t in zip(ids, texts, strict=True):
                fh.write(json.dumps({"_id": i, "title": "", "text": t}) + "\n")
    qids, qtexts, rel = data.questions()
    with open(folder / "queries.jsonl", "w") as fh:
        for q, t in zip(qids, qtexts, strict=True):
            fh.write(json.dumps({"_id": q, "text": t}) + "\n")
    lines = [f"{q}\t{d}\t1" for q, d in zip(qids, rel, strict=True)]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(lines))


# The plain script a user would write instead: lasagna's BM25 defaults (k1 1.5, b 0.75,
# lucene, English stopwords and Snowball stemmer), top-100 per question, nDCG@10 by
# pytrec_eval, the per-question scores written out.
REFERENCE = r"""
import json, sys, time
import numpy as np, bm25s, Stemmer, pytrec_eval
folder = sys.argv[1]
ids, texts = [], []
with open(f"{folder}/corpus.jsonl") as fh:
    for line in fh:
        d = json.loads(line)
        ids.append(d["_id"]); texts.append((d["title"] + " " + d["text"]).strip())
queries = [json.loads(line) for line in open(f"{folder}/queries.jsonl")]
qrels = {}
for line in open(f"{folder}/qrels/test.tsv").read().splitlines()[1:]:
    q, d, rel = line.split("\t")
    qrels.setdefault(q, {})[d] = int(rel)
t0 = time.perf_counter()
stem = Stemmer.Stemmer("english")
bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
bm25.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False),
           show_progress=False)
index_s = time.perf_counter() - t0
run = {}
for start in range(0, len(queries), 1024):
    block = queries[start:start + 1024]
    tokens = bm25s.tokenize([q["text"] for q in block], stopwords="en", stemmer=stem,
                            return_ids=False, show_progress=False)
    for q, toks in zip(block, tokens):
        tids = bm25.get_tokens_ids(toks)
        if not tids:
            run[q["_id"]] = {}
            continue
        s = np.asarray(bm25.get_scores_from_ids(tids), dtype=np.float64)
        top = np.argpartition(-s, min(100, len(s) - 1))[:100]
        run[q["_id"]] = {ids[i]: float(s[i]) for i in top if s[i] > 0}
per_q = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
with open(sys.argv[2], "w") as out:
    for q, v in per_q.items():
        out.write(json.dumps({"id": q, "ndcg@10": v["ndcg_cut_10"]}) + "\n")
ndcg = sum(v["ndcg_cut_10"] for v in per_q.values()) / len(per_q)
print(json.dumps({"index_s": index_s, "ndcg@10": ndcg}))
"""


def _measured(argv: list[str], env: dict[str, str]) -> tuple[float, str, TreeMemory]:
    """Run argv to its end, sampling its process tree's memory; (wall, output, memory)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    with TreeMemory(proc.pid, interval=0.2) as mem:
        out = proc.stdout.read().decode(errors="replace")
        proc.wait()
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{argv[1:3]} failed ({proc.returncode}):\n{out[-3000:]}")
    return wall, out, mem


def reference_run(n_docs: int) -> dict:
    """The plain one-process script on the same synthetic BEIR folder: wall, nDCG@10, peak
    PSS and RSS."""
    n_q = min(100_000, max(1, n_docs // 10))
    with tempfile.TemporaryDirectory(prefix="lasagna-scale-ref-") as tmp:
        work = Path(tmp)
        write_beir(n_docs, n_q, work / "data")
        env = dict(os.environ, HF_HUB_OFFLINE="1")
        argv = [sys.executable, "-c", REFERENCE, str(work / "data"), str(work / "scores.jsonl")]
        wall, out, mem = _measured(argv, env)
    result = json.loads(out.strip().splitlines()[-1])
    return {
        "docs": n_docs,
        "questions": n_q,
        "wall": wall,
        "ndcg@10": result["ndcg@10"],
        "peak_pss": mem.peak_pss,
        "peak_rss": mem.peak_rss,
    }


def engine_run(n_docs: int) -> dict:
    """`lasagna benchmark run` (BM25, in-process Ray) on the synthetic BEIR folder: wall,
    nDCG@10, the peak PSS and RSS of its process tree (with where the PSS is at the peak),
    and the peak RSS of the driver and of the rest of the tree (Ray's workers)."""
    import psutil

    n_q = min(100_000, max(1, n_docs // 10))
    with tempfile.TemporaryDirectory(prefix="lasagna-scale-run-") as tmp:
        work = Path(tmp)
        write_beir(n_docs, n_q, work / "data")
        sweep = work / "bm25.yaml"
        sweep.write_text(
            f"benchmarks:\n  - {{path: {work / 'data'}}}\nretrievers:\n  - {{kind: bm25}}\n"
            f"output: {work / 'results'}\n"
        )
        env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
        env["LASAGNA_CACHE"] = str(work / "cache")
        argv = [sys.executable, "-m", "lasagna.cli", "benchmark", "run", str(sweep)]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        driver = others = biggest = 0
        root = psutil.Process(proc.pid)
        with TreeMemory(proc.pid, interval=0.5) as mem:
            while proc.poll() is None:
                try:
                    driver = max(driver, root.memory_info().rss)
                    rss = [c.memory_info().rss for c in root.children(recursive=True)]
                    others, biggest = max(others, sum(rss)), max([biggest, *rss])
                except psutil.Error:
                    pass
                time.sleep(0.2)
        wall = time.perf_counter() - t0
        out = proc.stdout.read().decode(errors="replace")
        if proc.returncode:
            raise SystemExit(f"benchmark run failed ({proc.returncode}):\n{out[-3000:]}")
        manifest = json.loads(next((work / "results").glob("2*/manifest.json")).read_text())
    trial = manifest["trials"][0]
    return {
        "docs": n_docs,
        "questions": n_q,
        "wall": wall,
        "timings": trial["timings"],
        "ndcg@10": trial["metrics"]["ndcg@10"],
        "peak_pss": mem.peak_pss,
        "peak_rss": mem.peak_rss,
        "at_peak": mem.breakdown(),
        "driver_peak": driver,
        "workers_peak": others,
        "largest_worker_peak": biggest,
    }
