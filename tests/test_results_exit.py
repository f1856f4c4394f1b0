"""A script that reads a run's rows exits 0: Arrow's thread pool, torn down at interpreter
exit while a threaded read from a Python file object still holds it, aborted the process
with "terminate called without an active exception" (exit 134) after its last line, on
most runs on some CPUs (lasagna.results.layout.parquet_source)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from lasagna.results import write_run
from lasagna.results.model import TrialResult

SCRIPT = """
import sys
from lasagna.results.store import open_run
if sys.argv[2].startswith("memory://"):  # a remote store: its files through fsspec
    import os, fsspec
    fs = fsspec.filesystem("memory")
    for root, _, files in os.walk(sys.argv[1]):
        for f in files:
            p = os.path.join(root, f)
            fs.pipe("/runs/" + os.path.relpath(p, sys.argv[1]), open(p, "rb").read())
run = open_run("R1", sys.argv[2])
read = {
    "rows": lambda key: run.rows(key),
    "page": lambda key: run.rows_page(key, 0, 10),
    "ids": lambda key: run.rows_with_ids(key, ["q1"]),
}[sys.argv[3]]
for t in run.trials:
    read(t.key)  # the read is the script's last line: the abort came as it exited
"""


def _trial(key: str) -> TrialResult:
    n = 100  # a retrieval trial's rows: ranked lists and a metric per column
    columns = {
        "id": [f"q{i}" for i in range(n)],
        "question": [f"question {i}" for i in range(n)],
        "doc_ids": [[f"d{i}-{r}" for r in range(100)] for i in range(n)],
        "scores": [[1.0 / (r + 1) for r in range(100)] for _ in range(n)],
    }
    columns |= {f"m{j}": pa.array([i / n for i in range(n)], pa.float64()) for j in range(30)}
    return TrialResult(
        key=key,
        comparability_key="g",
        track="retrieval",
        system="bm25",
        config={"kind": "bm25", "k": key},
        benchmark={"name": "b", "revision": "r", "split": None, "n_samples": None},
        seed=0,
        repeat=0,
        metrics={"m0": 0.5},
        timings={},
        counts={"rows": n, "failed": 0},
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        rows=pa.table(columns),
    )


@pytest.mark.parametrize("where", ["local", "memory"])
def test_a_script_that_reads_rows_exits_cleanly(tmp_path: Path, where: str) -> None:
    trials = [_trial("k1"), _trial("k2")]
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, trials)
    output = str(tmp_path) if where == "local" else "memory://runs"
    for how in ("rows", "page", "ids", "rows"):  # the abort came on most runs, not all
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(tmp_path), output, how],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{how}: exit {done.returncode}\n{done.stderr[-2000:]}"
