"""Small commands stay small: `--help`, the `results` commands and a refusal of bad input
import no Ray, torch or model library (checked in a fresh interpreter's sys.modules; no
wall-clock assert, the times are in scripts/bench_small.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = {"ray", "torch", "transformers", "sentence_transformers", "vllm", "faiss", "bm25s"}
# what the manifest-only results commands must not need either
READERS = HEAVY | {"scipy", "duckdb", "pyarrow", "numpy", "pandas", "pytrec_eval"}

PROBE = """
import json, sys
import lasagna.cli as cli
try:
    code = cli.main(json.loads(sys.argv[1]))
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _modules(argv: list[str], cwd: Path) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = proc.stdout.strip().splitlines()
    if not lines:
        pytest.fail(f"{argv}: the child printed nothing (exit {proc.returncode}):\n{proc.stderr}")
    out = json.loads(lines[-1])
    return out["code"], set(out["modules"])


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory) -> Path:
    """A run folder written by the store itself (no Ray), so the readers have work to do."""
    import pyarrow as pa

    from lasagna.results import TrialResult, new_run_id, write_run

    out = tmp_path_factory.mktemp("startup") / "results"
    for repeat in (0, 1):  # two repeats of one system: an interval over the trial means
        trial = TrialResult(
            key=f"k{repeat}" * 10,
            comparability_key="c" * 12,
            track="retrieval",
            system="bm25",
            config={"kind": "bm25"},
            benchmark={"name": "local/x@0123456789ab", "revision": "0" * 64},
            repeat=repeat,
            metrics={"ndcg@10": 0.5 + repeat / 10},
            rows=pa.table({"id": ["q1"], "doc_ids": [["d1"]], "scores": [[1.0]], "ndcg@10": [0.5]}),
        )
        write_run(out, new_run_id(), {}, [trial])
    return out


@pytest.mark.parametrize(
    "argv",
    [
        ["results", "list"],
        ["results", "show", "latest"],
        ["results", "leaderboard", "--no-tests"],
        ["results", "list", "--help"],
    ],
)
def test_manifest_readers_import_nothing_heavy(argv: list[str], results_dir: Path) -> None:
    code, modules = _modules(argv + ["--output", str(results_dir)], results_dir.parent)
    assert code == 0
    assert not modules & READERS, sorted(modules & READERS)


def test_help_imports_nothing_heavy(tmp_path: Path) -> None:
    code, modules = _modules(["--help"], tmp_path)
    assert code == 0
    assert not modules & READERS, sorted(modules & READERS)


def test_refused_run_imports_nothing_heavy(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "anwser": "a"}\n')
    code, modules = _modules(["benchmark", "run", str(bad), "--output", "out"], tmp_path)
    assert code == 2
    assert not modules & READERS, sorted(modules & READERS)
    assert not (tmp_path / "out").exists()


def test_row_readers_import_no_ray_models_or_scipy(results_dir: Path) -> None:
    first, second = sorted(p.name for p in results_dir.iterdir() if not p.name.startswith("."))
    for argv in (
        ["results", "sql", "SELECT count(*) FROM rows"],
        ["results", "export", "latest", "--out", "-"],
        ["results", "compare", first, second],
    ):
        code, modules = _modules(argv + ["--output", str(results_dir)], results_dir.parent)
        assert code == 0
        assert not modules & (HEAVY | {"scipy"}), (argv, sorted(modules & (HEAVY | {"scipy"})))


def test_python_dash_m_lasagna_is_the_console_script(tmp_path: Path) -> None:
    """`python -m lasagna` runs the same `main` as the `lasagna` script: same help, same
    version, same exit code for bad input."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "lasagna", *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    version = run("--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("lasagna "), version.stdout
    helped = run("--help")
    assert helped.returncode == 0 and "usage: lasagna" in helped.stdout, helped.stderr
    assert run("no-such-command").returncode == 2
