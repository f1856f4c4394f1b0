"""How fast `lasagna view` opens the first page of a large run: the 100k-question run
folder of scripts/bench_scale.py (one retrieval trial, top-100 ranked lists, every
retrieval metric per question).

    python scripts/bench_view.py [--questions 100000] [--root DIR] [--repeats 3]

Builds the folder as bench_scale.py's "checkpoint+run folder" step does (the same rows:
ids, top-100 doc ids and scores, lasagna's own score_retrieval_batch columns; `TrialResult`,
`save_trial`, `write_run`), deterministic ranked lists standing in for the IVF search;
--root reuses a folder built before. Then starts the real `lasagna view --port 0` on it
for each repeat (a cold server: nothing cached) and times, over HTTP on loopback:
  run page      GET /run/ID (the run's facts and the report's views of it)
  rows page 1   GET /run/ID/trial/KEY?page=1 (50 rows, read from one Parquet row group)
  rows page 900 the same, 45,000 rows in (another row group)
  drill-down    GET /api/drill?... (the 20,000 question records the page fetches when
                its Questions section comes into view)
each first on the fresh server (cold: imports, the root listed, the manifest read), then
again (what every later visitor gets).
The baseline, timed in the same script: reading the trial's whole rows Parquet with
pyarrow, what any page that needs every row pays first. Ratios < 1 mean the page costs
less than that one read.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
K = 100
BATCH = 4096


def build(root: Path, n: int) -> str:
    """The run folder (its id); bench_scale.py's rows shape on n questions."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from lasagna.results import TrialResult, new_run_id, save_trial, write_run
    from lasagna.stages.scoring import score_retrieval_batch

    n_docs = max(1000, n * 10)
    rng = np.random.default_rng(0)
    parts = []
    for start in range(0, n, BATCH):
        stop = min(n, start + BATCH)
        got = rng.integers(0, n_docs, size=(stop - start, K))
        scores = np.sort(rng.random((stop - start, K)), axis=1)[:, ::-1]
        gold = [f"d{(i * 7) % n_docs}" for i in range(start, stop)]
        batch = pa.table(
            {
                "id": [f"q{i}" for i in range(start, stop)],
                "doc_ids": pa.array([[f"d{d}" for d in row] for row in got], pa.list_(pa.string())),
                "scores": pa.array(scores.tolist(), type=pa.list_(pa.float64())),
                "rel_ids": [[g] for g in gold],
                "rel_grades": [[1]] * (stop - start),
            }
        )
        parts.append(score_retrieval_batch(batch).drop_columns(["rel_ids", "rel_grades"]))
    rows = pa.concat_tables(parts)
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
    save_trial(root, trial)
    run_id = new_run_id()
    write_run(root, run_id, {"profile": "scale"}, [trial])
    return run_id


def get(url: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as r:
        body = r.read()
    return time.perf_counter() - t0, len(body)


def serve_and_time(root: Path, run_id: str) -> dict[str, tuple[float, int]]:
    env = os.environ | {"PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "lasagna.cli", "view", "--output", str(root), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    try:
        base = proc.stdout.readline().rsplit(" at ", 1)[1].strip().rstrip("/")
        key = "k" * 64
        urls = {
            "run page": f"{base}/run/{run_id}",
            "rows page 1": f"{base}/run/{run_id}/trial/{key}?page=1",
            "rows page 900": f"{base}/run/{run_id}/trial/{key}?page=900",
            "drill-down": f"{base}/api/drill?scope=run:{run_id}&kind=benchmark&key=c",
        }
        out = {name: get(url) for name, url in urls.items()}  # cold: the server's first look
        return out | {f"{name} (again)": get(url) for name, url in urls.items()}
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def baseline(root: Path, run_id: str) -> float:
    import pyarrow.parquet as pq

    path = next((root / run_id / "trials").glob("*.parquet"))
    t0 = time.perf_counter()
    pq.read_table(path)
    return time.perf_counter() - t0


def cpu_flags() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "?"
    model = next(
        (ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")),
        "?",
    )
    flags = next((ln for ln in text.splitlines() if ln.startswith("flags")), "").split()
    shown = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    return f"{model}, {os.cpu_count()} cores, {' '.join(shown)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--root", type=Path, help="a results root built before (reused)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lasagna-view-") as tmp:
        root = args.root or Path(tmp) / "results"
        runs = [p.parent.name for p in root.glob("*/manifest.json")]
        if runs:
            run_id = runs[0]
        else:
            t0 = time.perf_counter()
            run_id = build(root, args.questions)
            print(
                f"built {args.questions:,} questions in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
        times: dict[str, list[float]] = {}
        sizes: dict[str, int] = {}
        bases = []
        for _ in range(args.repeats):
            bases.append(baseline(root, run_id))
            for name, (secs, size) in serve_and_time(root, run_id).items():
                times.setdefault(name, []).append(secs)
                sizes[name] = size
        base = statistics.median(bases)
        print(
            f"lasagna view on a {args.questions:,}-question run "
            f"({platform.python_version()}; {cpu_flags()}; {time.strftime('%Y-%m-%d')})"
        )
        print(f"{'request':<22}{'median s':>9}{'max s':>8}{'KiB':>8}{'x baseline':>11}")
        for name, secs in times.items():
            med = statistics.median(secs)
            print(
                f"{name:<22}{med:9.3f}{max(secs):8.3f}{sizes[name] / 1024:8.0f}{med / base:11.2f}"
            )
        print(
            f"{'baseline':<22}{base:9.3f}{max(bases):8.3f}{'':>8}{1:11.2f}  "
            "(pyarrow: the trial's whole rows Parquet)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
