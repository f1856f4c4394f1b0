"""`lasagna benchmark run` on bench_scale's synthetic benchmark: the real engine (Ray, BM25)
as a user runs it, with the driver's and Ray's processes' peak memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def engine_run(n_docs: int) -> dict:
    """`lasagna benchmark run` (BM25, in-process Ray) on the synthetic BEIR folder: wall,
    and the peak RSS of the driver and of the rest of its process tree (Ray's workers)."""
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
        "driver_peak": driver,
        "workers_peak": others,
        "largest_worker_peak": biggest,
    }
