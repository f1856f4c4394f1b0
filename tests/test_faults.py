"""Faults through the real `lasagna` CLI: an output that cannot be written, a full disk
(simulated), an unreachable Ray head, a model that cannot load. Each ends with a clear error
and nothing half-written; a resumed sweep equals an uninterrupted one. The driver killed
mid-sweep and resumed is tests/test_soak.py (seeded kills, no stray process or run folder).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from model_cache import cache_sharing_models
from ray_procs import cleanup, short_tmpdir

from lasagna.cli import main
from lasagna.results.fs import Store
from lasagna.results.store import MANIFEST

pytestmark = pytest.mark.slow

THREE_BM25 = """\
benchmarks:
  - {name: sample}
retrievers:
  - grid: {kind: bm25, k1: [0.9, 1.2, 1.5], top_k: 10}
"""


def cli_env(ray_tmpdir: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return env | {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_TMPDIR": ray_tmpdir,
        "LASAGNA_CACHE": str(cache_sharing_models(cache)),
    }


def lasagna_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "lasagna.cli", *args]


def run_cli_in_subprocess(
    tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`lasagna ARGS` in a child process with its own Ray temp folder; its result and what
    Ray left in that folder (empty: Ray never started)."""
    ray_tmp = short_tmpdir()
    try:
        proc = subprocess.run(
            lasagna_cmd(*args),
            env=cli_env(ray_tmp, tmp_path / "cache"),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return proc, os.listdir(ray_tmp)
    finally:
        cleanup(ray_tmp)


def sweep_file(folder: Path, text: str = THREE_BM25) -> Path:
    path = folder / "sweep.yaml"
    path.write_text(text)
    return path


def run_folders(out: Path) -> list[Path]:
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))


def temp_leftovers(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if p.name.startswith(".tmp")] if out.exists() else []


def finished_checkpoints(out: Path) -> list[Path]:
    folder = out / ".trials"
    if not folder.is_dir():
        return []
    # a checkpoint is finished once committed under its own name; a hidden `.tmp-*` folder
    # already holds trial.json just before the rename, so it does not count
    return [
        p for p in folder.iterdir() if not p.name.startswith(".") and (p / "trial.json").exists()
    ]


def only_run(out: Path) -> tuple[dict, dict[str, object]]:
    """The manifest and the per-trial row tables of the single run folder under `out`."""
    (folder,) = run_folders(out)
    manifest = json.loads((folder / MANIFEST).read_text())
    tables = {t["key"]: pq.read_table(folder / t["rows_file"]) for t in manifest["trials"]}
    return manifest, tables


# ---------------------------------------------------------------- output not writable
def test_output_under_a_regular_file_is_refused_before_ray(tmp_path):
    blocker = tmp_path / "results"
    blocker.write_text("not a folder\n")
    proc, ray_started = run_cli_in_subprocess(
        tmp_path, "benchmark", "run", str(sweep_file(tmp_path)), "--output", str(blocker / "runs")
    )
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "results could not be written" in err and "a file is in the way" in err
    assert str(blocker) in err and "Fix:" in err and "Traceback" not in err
    assert blocker.read_text() == "not a folder\n"
    assert ray_started == [], "Ray must not start for an output that cannot be written"


def test_plan_refuses_an_output_under_a_regular_file_as_run_does(tmp_path, capsys):
    blocker = tmp_path / "results"
    blocker.write_text("not a folder\n")
    argv = ["benchmark", "plan", str(sweep_file(tmp_path)), "--output", str(blocker)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "a file is in the way" in captured.err and "ignoring unreadable" not in captured.err
    assert blocker.read_text() == "not a folder\n"


def test_a_cache_folder_that_cannot_be_made_is_refused_before_ray(tmp_path):
    """$LASAGNA_CACHE under a regular file: refused with exit 2, naming the variable and the
    fix, before Ray starts; it used to fail inside the trial as an actor that could not
    start, with a --resume hint that cannot help."""
    blocker, out, ray_tmp = tmp_path / "file", tmp_path / "out", short_tmpdir()
    blocker.write_text("not a folder\n")
    env = cli_env(ray_tmp, tmp_path / "cache") | {"LASAGNA_CACHE": str(blocker / "cache")}
    try:
        sweep = str(sweep_file(tmp_path))
        proc = subprocess.run(
            lasagna_cmd("benchmark", "run", sweep, "--output", str(out)),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        ray_started = os.listdir(ray_tmp)
    finally:
        cleanup(ray_tmp)
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert f"LASAGNA_CACHE={blocker / 'cache'} cannot hold the cache" in err, err
    assert "is not a folder" in err and "Fix: set LASAGNA_CACHE" in err
    assert "--resume" not in err and "Traceback" not in err
    assert ray_started == [] and not out.exists()


# ---------------------------------------------------------------- disk full (simulated)
def _enospc_after_some_bytes(original):
    """Store.open_write that writes a few bytes, then fails as a full disk does."""
    from contextlib import contextmanager

    @contextmanager
    def open_write(self, path):
        with original(self, path) as fh:
            fh.write(b"PAR1 partial")
            raise OSError(errno.ENOSPC, "No space left on device", path)
            yield fh  # pragma: no cover

    return open_write


def test_disk_full_while_checkpointing_leaves_nothing(ray_local, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache")))
    monkeypatch.setattr(Store, "open_write", _enospc_after_some_bytes(Store.open_write))
    out = tmp_path / "out"
    code = main(["benchmark", "run", str(sweep_file(tmp_path)), "--output", str(out)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "the disk is full" in err and "nothing was written" in err and "Fix:" in err
    assert run_folders(out) == [] and finished_checkpoints(out) == []
    assert temp_leftovers(out) == []


def test_disk_full_while_writing_the_run_keeps_checkpoints_for_resume(
    ray_local, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache")))
    two = THREE_BM25.replace("[0.9, 1.2, 1.5]", "[0.9, 1.5]")
    sweep = str(sweep_file(tmp_path, two))
    out = tmp_path / "out"
    commit = Store.commit_dir

    def full_at_run_commit(self, tmp, final, marker, *, replace):
        if marker == MANIFEST:
            raise OSError(errno.ENOSPC, "No space left on device", final)
        return commit(self, tmp, final, marker, replace=replace)

    monkeypatch.setattr(Store, "commit_dir", full_at_run_commit)
    assert main(["benchmark", "run", sweep, "--output", str(out)]) == 2
    assert "the disk is full" in " ".join(capsys.readouterr().err.split())
    assert run_folders(out) == [] and temp_leftovers(out) == []
    assert len(finished_checkpoints(out)) == 2  # finished trials are not lost

    monkeypatch.setattr(Store, "commit_dir", commit)  # space freed
    assert main(["benchmark", "run", sweep, "--output", str(out), "--resume"]) == 0
    assert "restored 2 finished trial(s) of 2" in " ".join(capsys.readouterr().err.split())
    manifest, rows = only_run(out)
    assert len(manifest["restored_trials"]) == 2 and len(rows) == 2


# ---------------------------------------------------------------- Ray head unreachable
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_ray_head_fails_fast_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    port = _closed_port()
    proc, ray_started = run_cli_in_subprocess(
        tmp_path,
        "benchmark",
        "run",
        str(sweep_file(tmp_path)),
        "--output",
        str(out),
        "--address",
        f"127.0.0.1:{port}",
    )
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert f"cannot connect to the Ray cluster at '127.0.0.1:{port}'" in err
    assert "--address" in err and "Fix:" in err and "Traceback" not in err
    assert not out.exists() and ray_started == []


# ---------------------------------------------------------------- one trial keeps failing
def test_a_trial_whose_model_cannot_load_fails_alone(ray_local, tmp_path, monkeypatch, capsys):
    """The model folder exists (so planning accepts it) but cannot be loaded by the encoder
    actor: that trial fails with its reason in the manifest, the BM25 trials finish, exit 1,
    and a `--resume` after the fix runs only the failed trial."""
    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache")))
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    text = (
        "benchmarks:\n  - {name: sample}\nretrievers:\n  - {kind: bm25, top_k: 10}\n"
        f"  - {{kind: dense, name: broken, model: {broken}, top_k: 10}}\n"
        "  - {kind: bm25, k1: 0.9, top_k: 10}\n"
    )
    sweep = str(sweep_file(tmp_path, text))
    out = tmp_path / "out"
    assert main(["benchmark", "run", sweep, "--output", str(out)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "1 trial(s) failed" in err and "--resume" in err
    manifest, rows = only_run(out)
    assert len(manifest["trials"]) == 2 and len(rows) == 2
    (failed,) = manifest["failed_trials"]
    assert failed["system"] == "broken", failed
    assert "could not start" in failed["reason"] and "JSON" in failed["reason"], failed
    assert len(finished_checkpoints(out)) == 2
