"""A run never hangs quietly and says why it failed, on a real Ray:
- a stage whose actors ask for resources a live actor holds is reported by the stall
  watchdog, then ended as failed with that reason (exit 1, the `--resume` command);
- a stage that raises shows the stage's own error in one line, not Ray Data's wrapper, and
  the run's log keeps the traceback; a long stage in a pipe prints heartbeat lines;
- model-loading progress bars and vLLM's INFO lines stay off the terminal, in the log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from model_cache import cache_sharing_models
from ray_procs import cleanup, short_tmpdir

from lasagna.cli import main
from lasagna.engine.cluster_view import read_view

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------ the watchdog
@contextmanager
def bounded(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in this (main) thread after `seconds`."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    before = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def test_a_stage_waiting_for_held_resources_is_reported_then_ended(
    ray_local, tmp_path, monkeypatch, capsys
):
    """An actor holds both CPUs; the BM25 search actors (half a CPU) can never start. With
    --stall-timeout 2 the trial is reported after 2 s, ended after 4 s, and the run exits 1
    with the reason, what waits, what holds it, and the exact --resume command."""
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "cache"))

    @ray_local.remote(num_cpus=2)
    class CpuHolder:
        def ping(self) -> int:
            return 1

    holder = CpuHolder.remote()
    ray_local.get(holder.ping.remote())
    sweep = tmp_path / "stall.yaml"
    sweep.write_text(
        "benchmarks:\n  - {name: sample, n_samples: 4}\n"
        "retrievers:\n  - {kind: bm25, top_k: 5}\n"
        "resources:\n  retrieve: {num_cpus: 0.5, actors: 1}\n"
    )
    out = tmp_path / "out"
    argv = ["benchmark", "run", str(sweep), "--output", str(out), "--stall-timeout", "2"]
    try:
        with bounded(200):  # never hangs the suite, whatever happens
            code = main(argv)
    finally:
        ray_local.kill(holder)
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1, err
    assert "stall: trial 1/1 bm25" in err and "no progress for" in err, err
    assert "waits for MapWorker(MapBatches(" in err and "{CPU: 0.5}" in err, err
    assert "held by CpuHolder {CPU: 2} (capacity {CPU: 2}, free {CPU: 0})" in err, err
    assert "cannot fit" in err and "_StatsActor" not in err, err
    assert "trial 1 failed" in err and "stalled:" in err and "fix: lower num_cpus" in err, err
    assert f"lasagna benchmark run {sweep} --output {out} --stall-timeout 2 --resume" in err
    (log,) = (out / ".logs").glob("*.log")
    assert "Traceback" in log.read_text() and "TrialStalled" in log.read_text()
    # the ended trial's actors are gone: they take nothing from what runs next
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        view = read_view()
        left = [n for n, _ in view.waiting + view.holders if n.startswith("MapWorker")]
        if not left:
            break
        time.sleep(0.5)
    assert not left, left


# ------------------------------------------------------ a stage's error, the heartbeat
JUDGE = """\"\"\"{doc}\"\"\"
import time

from lasagna.judges.verdicts import judgement

ID = NAME = "{id}"
REQUIRED = ("actual_output",)
OPTIONAL = ()
OUTPUT_METRICS = ("{metric}",)
PRIMARY = "{metric}"
HIGHER_IS_BETTER = True
PROMPTS = ()


def judge(case, params):
{body}
    return steps(case, params)


def steps(case, params):
    yield from ()
    return judgement("{metric}", 1.0, params.threshold, [], "fine")
"""
SLOW = "    time.sleep(1.0)  # a heartbeat is due"
# computes for seconds with no row reaching the driver: a model's long batch
BUSY = """    end = time.process_time() + 2.5
    while time.process_time() < end:
        pass"""
# raised by judge() itself, before its first step: it fails the block, not only the row
STRICT = """    if case["id"] == "bad":
        raise ValueError(f"case {case['id']!r}: the answer has no sentence to check")"""
REGISTRY = """from lasagna.judges.registry import register_benchmark
from watch_plugin import busy_check, slow_check, strict_check

register_benchmark(busy_check)
register_benchmark(slow_check)
register_benchmark(strict_check)
"""


def write_plugin(root: Path) -> None:
    """A judge plugin (three code judges) as an installed package would be on the path."""
    pkg = root / "watch_plugin"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name, body in (("slow_check", SLOW), ("strict_check", STRICT), ("busy_check", BUSY)):
        text = JUDGE.replace("{doc}", name).replace("{id}", name.replace("_", "-"))
        text = text.replace("{metric}", name.replace("_check", "_score"))
        (pkg / f"{name}.py").write_text(text.replace("{body}", body))
    (pkg / "registry.py").write_text(REGISTRY)
    info = root / "watch_plugin-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: watch-plugin\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[lasagna.judges]\nwatch = watch_plugin.registry\n")


def cli_env(tmp_path: Path, *paths: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return env | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), *map(str, paths)]),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "LASAGNA_CACHE": str(cache_sharing_models(tmp_path / "cache")),
    }


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """`lasagna ARGS` in a child process (stderr a pipe) with its own Ray temp folder."""
    ray_tmp = short_tmpdir()
    try:
        return subprocess.run(
            [sys.executable, "-m", "lasagna.cli", *args],
            env=env | {"RAY_TMPDIR": ray_tmp},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=400,
        )
    finally:
        cleanup(ray_tmp)


def test_an_error_in_a_stage_is_shown_as_its_cause_and_a_long_stage_beats(tmp_path):
    write_plugin(tmp_path / "plugin")
    cases = tmp_path / "cases.jsonl"
    rows = [("ok", "It is Paris, in France."), ("bad", "Paris"), ("fine", "Yes it is.")]
    cases.write_text(
        "".join(json.dumps({"id": i, "input": "Q?", "actual_output": a}) + "\n" for i, a in rows)
    )
    sweep = tmp_path / "judges.yaml"
    sweep.write_text(
        "benchmarks:\n  - {path: cases.jsonl}\n"
        "judges:\n  - {benchmark: slow-check}\n  - {benchmark: strict-check}\n"
    )
    env = cli_env(tmp_path, tmp_path / "plugin") | {"LASAGNA_HEARTBEAT_S": "0.5"}
    proc = run_cli(["benchmark", "run", str(sweep), "--output", "out"], env, tmp_path)
    err = proc.stderr
    assert proc.returncode == 1, err[-3000:]
    # the cause, in one line with the trial and the stage; no wrapper, no traceback
    (line,) = [ln for ln in err.splitlines() if "trial 2 failed" in ln]
    assert "failed in judge:" in line, line
    assert "ValueError: case 'bad': the answer has no sentence to check" in line, line
    for wrapper in ("UserCodeException", "UDF failed", "RayTaskError", "Traceback"):
        assert wrapper not in err, err[-3000:]
    assert "lasagna benchmark run" in err and "--resume" in err
    # a heartbeat while the slow judge judges (stderr is a pipe)
    assert any(" after " in ln and "rows" in ln for ln in err.splitlines()), err[-3000:]
    # the failed trial's record and the run's log with the whole traceback
    (run,) = [p for p in (tmp_path / "out").iterdir() if (p / "manifest.json").is_file()]
    manifest = json.loads((run / "manifest.json").read_text())
    (failed,) = manifest["failed_trials"]
    assert failed["system"].startswith("strict-check") and failed["stage"] == "judge"
    assert failed["reason"].startswith("ValueError: case 'bad'"), failed
    log = (run / manifest["log"]).read_text()
    assert "Traceback" in log and "strict_check.py" in log and "ValueError: case 'bad'" in log


def test_a_stage_whose_actor_computes_is_not_ended_however_quiet(tmp_path):
    """A judge that computes for 7.5 s before its block's rows reach the driver, under a
    watchdog that ends a trial after 5 s without progress (10 periods of 0.5 s): its
    actor's CPU use is progress, so the trial finishes and nothing is reported."""
    write_plugin(tmp_path / "plugin")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": "Q?", "actual_output": "A."}) + "\n"
            for i in range(3)
        )
    )
    sweep = tmp_path / "busy.yaml"
    sweep.write_text("benchmarks:\n  - {path: cases.jsonl}\njudges:\n  - {benchmark: busy-check}\n")
    env = cli_env(tmp_path, tmp_path / "plugin")
    args = ["benchmark", "run", str(sweep), "--output", "out", "--stall-timeout", "0.5"]
    proc = run_cli(args, env, tmp_path)
    err = proc.stderr
    assert proc.returncode == 0, err[-3000:]
    assert "ending the trial" not in err and "stalled" not in err, err[-3000:]
    assert "1 trial(s) run" in err, err[-3000:]
