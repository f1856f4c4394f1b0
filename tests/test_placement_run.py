"""The judged RAG sweep that hung on 2 CPUs (two 1-CPU model servers held both while the
search actor and the tasks waited) now completes, in two phases: generate, release the
generator's engine, judge. Bounded by a subprocess timeout: a hang fails the test. The same
run shows that model-loading noise (transformers' weight bars, vLLM's INFO lines, as a
cluster's workers log them) stays off the terminal and goes to the run's log."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_cli_run import cli_env

from lasagna.results.store import load_runs

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

NOISE_WORDS = ("Loading weights", "it/s]", "%|", "INFO 1")

SWEEP = """\
benchmarks:
  - {name: sample, n_samples: 4}
generators:
  - kind: rag
    retriever: {kind: bm25, top_k: 3}
    passages: 2
    model: {backend: transformers, max_tokens: 8}
judges:  # one engine call per row; its own engine (vLLM: constrained JSON decoding is fast)
  - benchmark: correctness
    model: {max_tokens: 12, max_model_len: 4096}
resources:
  generate: {num_cpus: 1}
  judge: {num_cpus: 1}
output: out
cache: false
"""

# the command on a Ray of exactly 2 CPUs, whatever this machine has
RUN = """\
import sys, ray
ray.init(address="local", num_cpus=2, include_dashboard=False,
         _node_ip_address="127.0.0.1", logging_level="WARNING")
from lasagna import cli
sys.exit(cli.main(["benchmark", "run", sys.argv[1]]))
"""


def test_overcommitted_judged_generation_completes_in_two_phases(tmp_path):
    from ray_procs import kill_all, short_tmpdir

    (tmp_path / "s.yaml").write_text(SWEEP)
    ray_tmp = short_tmpdir()
    env = cli_env(ray_tmp, tmp_path / "cache")  # the converted models shared
    env["VLLM_LOGGING_LEVEL"] = "INFO"  # as on a cluster's workers
    try:
        proc = subprocess.run(
            [sys.executable, "-c", RUN, str(tmp_path / "s.yaml")],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=420,  # it used to wait forever
        )
    finally:
        kill_all(ray_tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir() and p.name[0] != "."]
    assert "in two phases: generate, release the generator's engine, then judge" in proc.stderr
    manifest = json.loads((run / "manifest.json").read_text())
    loads = [m["pool"] for m in manifest["model_loads"]]
    assert len(loads) == 2 and len(set(loads)) == 2  # the generator's engine, then the judge's
    assert "failed_trials" not in manifest
    ((trial,),) = [r.trials for r in load_runs(str(tmp_path / "out"))]
    assert trial.counts["rows"] == 4 and "f1" in trial.metrics
    assert trial.counts["correctness_judged"] + trial.counts["correctness_failed"] == 4
    for word in NOISE_WORDS:
        assert word not in proc.stderr + proc.stdout, (word, proc.stderr[-3000:])
    log = (run / "run.log").read_text()
    assert any(word in log for word in NOISE_WORDS), log[-2000:]
