"""The model-call cache: the same rag sweep run twice through the `lasagna` CLI.

The first run computes every generation (and loads the engine); the second, in a new
process with the same output folder, answers every call from `<output>/.model-calls` and
never loads the engine. Prints both wall times, their ratio (goal: second < 20% of first),
the hits and misses from each manifest, and whether the rows are identical (all columns but
the timing ones and `cached`).

    HF_HUB_OFFLINE=1 PYTHONPATH=$PWD python scripts/bench_cache.py --questions 200

Measured, not asserted: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SQUAD = HERE.parents[1] / "shared/data/squad_v2_dev_subset/dev-v2.0.json"
TIMING = {"latency_s", "batch_rows", "batch_started_at", "engine_load_s", "cached"}


def write_sweep(work: Path, args: argparse.Namespace) -> Path:
    sys.path.insert(0, str(HERE))
    from convert_squad_v2 import write_rag_sweep

    return write_rag_sweep(
        args.data, work, args.questions, max_tokens=args.max_tokens, batch_size=args.batch
    )


def run(sweep: Path, output: Path, *extra: str) -> tuple[float, dict, Path]:
    """`lasagna benchmark run SWEEP --output OUTPUT`: wall seconds, manifest, run folder."""
    before = set(output.glob("2*")) if output.exists() else set()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lasagna.cli",
            "benchmark",
            "run",
            str(sweep),
            "--output",
            str(output),
            *extra,
        ],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        raise SystemExit(f"lasagna exited {proc.returncode}")
    (run_dir,) = set(output.glob("2*")) - before
    return wall, json.loads((run_dir / "manifest.json").read_text()), run_dir


def rows(run_dir: Path, manifest: dict):
    import pyarrow.parquet as pq

    (trial,) = manifest["trials"]
    table = pq.read_table(run_dir / trial["rows_file"])
    return table.select([c for c in table.column_names if c not in TIMING]).to_pylist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SQUAD)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--batch", type=int, default=64, help="rows per generation batch")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="lasagna-bench-cache-"))
    sweep = write_sweep(work, args)
    out = work / "results"
    print(
        f"rag sweep: {args.questions} SQuAD v2 questions, BM25 top-1, packaged SmolLM2-135M, "
        f"max_tokens {args.max_tokens}; output {out}"
    )
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    walls, manifests, folders = [], [], []
    for label in ("first (cold cache)", "second (same sweep)"):
        wall, manifest, folder = run(sweep, out)
        calls = manifest["model_call_cache"]
        (trial,) = manifest["trials"]
        print(
            f"  {label:20s} {wall:7.1f} s  cache hits {calls['hits']:4d}  misses "
            f"{calls['misses']:4d}  engine load {trial['timings'].get('engine_load', 0):.1f} s  "
            f"f1 {trial['metrics']['f1']:.4f}"
        )
        walls.append(wall)
        manifests.append(manifest)
        folders.append(folder)
    same = rows(folders[0], manifests[0]) == rows(folders[1], manifests[1])
    print(
        f"second / first wall time: {walls[1] / walls[0]:.3f} (goal < 0.20); rows identical: {same}"
    )


if __name__ == "__main__":
    main()
