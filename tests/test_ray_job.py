"""`ray job submit` against a real local head on loopback: a sweep runs as a job and writes
its run folder; a failing sweep makes the job (and `ray job submit`) fail.

The head is this test's own (`ray start --head` in a new session, with a private RAY_TMPDIR)
and is ended by its process group and folder, never by `ray stop`, which would end every
Ray on the machine.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from model_cache import cache_sharing_models
from ray_procs import cleanup, kill_all, ray_processes, short_tmpdir, wait_gone

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RAY = BIN / "ray"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dashboard_up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/version", timeout=5) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _logs_tail(ray_tmp: str, name: str = "dashboard.log", n: int = 3000) -> str:
    logs = sorted(Path(ray_tmp).glob(f"ray/session_*/logs/{name}"))
    return logs[-1].read_text(errors="replace")[-n:] if logs else f"(no {name})"


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """A head on 127.0.0.1 with the job server; yields (dashboard URL, env for submitting)."""
    if not RAY.exists():
        pytest.skip(reason=f"no `ray` executable next to {sys.executable}")
    ray_tmp = short_tmpdir()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",  # `lasagna` resolves in jobs
        "RAY_TMPDIR": ray_tmp,
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "disabled",  # loopback only; no token to hand around
        "RAY_USAGE_STATS_ENABLED": "0",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LASAGNA_CACHE": str(cache_sharing_models(tmp_path_factory.mktemp("cache"))),
    }
    # every Ray node's agent listens on 52365 by default, and any other Ray on this machine
    # (the session fixture's, another test run's) holds it: then jobs find "No available agent"
    port, dash_port, agent_port = _free_port(), _free_port(), _free_port()
    start = subprocess.Popen(
        [
            str(RAY),
            "start",
            "--head",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            "--dashboard-host=127.0.0.1",
            f"--dashboard-port={dash_port}",
            f"--dashboard-agent-listen-port={agent_port}",
            "--num-cpus=2",
            "--disable-usage-stats",
        ],
        env=env,
        start_new_session=True,  # the head's daemons keep this process group
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{dash_port}"
    try:
        started, _ = start.communicate(timeout=180)
        assert start.returncode == 0, f"ray start failed:\n{started[-3000:]}"
        deadline = time.monotonic() + 180
        while not _dashboard_up(url):
            assert time.monotonic() < deadline, (
                f"the job server at {url} never answered:\n{_logs_tail(ray_tmp)}"
            )
            time.sleep(1)
        yield url, env
    finally:  # what `ray stop --force` does, for this head only: SIGKILL its processes
        ours = ray_processes(ray_tmp)  # workers included: they leave the process group
        try:
            os.killpg(start.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        kill_all(ray_tmp, ours)
        wait_gone(ray_tmp, ours, bound_s=20)
        cleanup(ray_tmp, ours)


def _submit(url: str, env: dict[str, str], working_dir: Path, *entrypoint: str):
    """`ray job submit`, retried while the head's job agent is still starting (the dashboard
    answers before the node's agent has registered: "No available agent ... try again")."""
    cmd = [str(RAY), "job", "submit", "--address", url, "--working-dir", str(working_dir)]
    deadline = time.monotonic() + 120
    while True:
        job = subprocess.run(
            [*cmd, "--", *entrypoint], env=env, capture_output=True, text=True, timeout=540
        )
        if "No available agent" not in job.stdout + job.stderr or time.monotonic() > deadline:
            return job
        time.sleep(2)


def test_sweep_runs_as_a_ray_job_and_writes_a_run_folder(ray_head, tmp_path):
    url, env = ray_head
    out = tmp_path / "results"
    job = _submit(
        url,
        env,
        REPO,
        "lasagna",
        "benchmark",
        "run",
        "configs/sweeps/sample_speed.yaml",
        "--output",
        str(out),
    )
    log = job.stdout + job.stderr
    assert job.returncode == 0, log[-4000:]
    assert "succeeded" in log and "ndcg@10" in log
    (folder,) = [p for p in out.iterdir() if not p.name.startswith(".")]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [t["track"] for t in manifest["trials"]] == ["retrieval", "retrieval"]
    assert manifest["ray"]["address"] != "local"  # joined the head instead of starting a Ray
    assert manifest["ray"]["resources"]["CPU"] == 2.0
    assert all(t["metrics"]["ndcg@10"] > 0.9 for t in manifest["trials"])


def test_failing_sweep_fails_the_job(ray_head, tmp_path):
    url, env = ray_head
    work = tmp_path / "job"
    work.mkdir()
    (work / "bad.yaml").write_text(
        "benchmarks:\n  - {path: data/missing.jsonl}\nretrievers:\n  - {kind: bm25}\n"
    )
    out = tmp_path / "results"
    job = _submit(
        url,
        env,
        work,
        "python",
        "-m",
        "lasagna.cli",
        "benchmark",
        "run",
        "bad.yaml",
        "--output",
        str(out),
    )
    log = job.stdout + job.stderr
    assert job.returncode != 0, log[-4000:]
    assert "failed" in log and "exit code 2" in log
    assert "data/missing.jsonl" in log and "no such file or folder" in log
    assert not out.exists()


def test_a_relative_output_in_a_job_is_refused_naming_the_copy(ray_head, tmp_path):
    """`output: results` under `--working-dir` would land in Ray's copy of the folder, which
    Ray deletes: the job fails at once (exit 2) naming the path and the fix."""
    url, env = ray_head
    work = tmp_path / "job"
    work.mkdir()
    (work / "sweep.yaml").write_text(
        "benchmarks:\n  - {name: sample}\nretrievers:\n  - {kind: bm25}\noutput: results\n"
    )
    job = _submit(url, env, work, "python", "-m", "lasagna", "benchmark", "run", "sweep.yaml")
    log = " ".join((job.stdout + job.stderr).split())
    assert job.returncode != 0, log[-4000:]
    assert "exit code 2" in log, log[-4000:]
    assert "runtime_resources/working_dir_files/_ray_pkg_" in log and "/results, inside" in log
    assert "Ray deletes that copy" in log and "s3://bucket/results" in log
    assert "trial 1/1" not in log  # refused before anything ran
    assert not (work / "results").exists()


SDK_EVAL = """
from lasagna import Datapoint, evaluate

def capital_of_country(data: dict) -> str:
    return {"France": "Paris", "Japan": "Tokyo"}[data["country"]]

def accuracy(output: str, target: str) -> int:
    return 1 if target.lower() in output.lower() else 0

result = evaluate(
    data=[
        Datapoint(data={"country": "France"}, target="Paris", task_id="france"),
        Datapoint(data={"country": "Japan"}, target="Tokyo", task_id="japan"),
    ],
    executor=capital_of_country,
    evaluators={"accuracy": accuracy},
    group_name="capitals",
    trials=3,
    output=OUTPUT,
)
import ray
print("joined", ray.get_runtime_context().gcs_address)
"""


def test_sdk_evaluation_runs_as_a_ray_job(ray_head, tmp_path):
    """`ray job submit -- python my_eval.py`: evaluate() joins the head (RAY_ADDRESS)."""
    url, env = ray_head
    work = tmp_path / "job"
    work.mkdir()
    out = tmp_path / "results"
    (work / "my_eval.py").write_text(f"OUTPUT = {str(out)!r}\n" + SDK_EVAL)
    job = _submit(url, env, work, "python", "my_eval.py")
    log = job.stdout + job.stderr
    assert job.returncode == 0, log[-4000:]
    assert "succeeded" in log and "accuracy" in log and "joined 127.0.0.1:" in log
    (folder,) = [p for p in out.iterdir() if not p.name.startswith(".")]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == "evaluation"
    assert manifest["evaluation"]["n_trials"] == 6
    assert manifest["evaluation"]["averages"] == {"accuracy": 1.0}
