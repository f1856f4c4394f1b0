"""Engines sharing GPUs: a fractional `num_gpus` is honoured (not rounded up to a whole
GPU), the engine's GPU memory share follows it (or is set per model), the plan packs shares
onto whole GPUs as Ray does (a share never spans two GPUs) and refuses, before anything
loads, what cannot be packed; an actor that reserved no GPU sees none. The plan tests run
on fake GPUs: a capacity here, and a loopback Ray cluster started with `--num-gpus`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lasagna.models.gpus import engine_gpus
from lasagna.models.spec import ModelSpec, StageResources
from lasagna.models.vllm_backend import engine_kwargs, gpu_memory_share
from lasagna.stages.placement import Ask, gpus_packed
from lasagna.stages.trial_placement import place_trial
from lasagna.sweep.plan import build_plan
from lasagna.sweep.schema import load_sweep
from lasagna.tracks.placement import placement_lines

TWO_GPUS = {"CPU": 16.0, "GPU": 2.0}


def _spec(gpus: float, **kw) -> ModelSpec:
    return ModelSpec(resources=StageResources(num_gpus=gpus), **kw)


def test_a_fractional_gpu_is_honoured_and_sets_the_engines_memory_share():
    assert engine_gpus(_spec(0.5), cluster_gpus=1) == 0.5  # not rounded up to 1
    assert engine_gpus(_spec(0.5, tensor_parallel_size=2), 2) == 2  # tp takes whole GPUs
    assert engine_gpus(ModelSpec(), cluster_gpus=1) == 1  # a GPU cluster: one by default
    assert engine_gpus(ModelSpec(), cluster_gpus=0) == 0
    assert engine_gpus(_spec(0), cluster_gpus=1) == 0  # num_gpus: 0 written out: on CPUs
    assert gpu_memory_share(_spec(0.5)) == pytest.approx(0.46)  # half of vLLM's 0.92
    assert gpu_memory_share(_spec(1)) is None  # a whole GPU: vLLM's own default
    assert gpu_memory_share(_spec(0.5, gpu_memory_utilization=0.3)) == 0.3  # set per model
    assert engine_kwargs(_spec(0.25), "/m", gpu=True)["gpu_memory_utilization"] == 0.23
    assert "gpu_memory_utilization" not in engine_kwargs(_spec(0.25), "/m", gpu=False)
    with pytest.raises(ValueError):
        ModelSpec(gpu_memory_utilization=1.5)


def test_shares_pack_onto_whole_gpus_as_ray_places_them():
    def engines(n: int, each: float, key: str = "generate") -> Ask:
        return Ask(f"{key} engine", key, n, {"CPU": 1.0, "GPU": each}, engine=f"{key}:{each}")

    assert gpus_packed([engines(4, 0.5)]) == 2
    assert gpus_packed([engines(3, 0.6)]) == 3  # 1.8 GPUs of shares, but one per GPU
    assert gpus_packed([engines(1, 1.0), engines(2, 0.3, "judge")]) == 2
    assert not place_trial([engines(4, 0.5)], TWO_GPUS).problems
    (problem,) = place_trial([engines(3, 0.6)], TWO_GPUS).problems
    assert "needs 3 CPU, 3 GPU at once (a share of a GPU is never split across two GPUs)" in (
        problem.message
    )
    assert "the cluster has 16 CPU, 2 GPU" in problem.message
    assert "resources: {generate: {num_gpus: 0.5}}" in (problem.fix or "")
    fixed = [engines(3, 0.5)]
    assert not place_trial(fixed, TWO_GPUS).problems  # the fix it names is enough


SHARED = """\
benchmarks: [{{name: sample, n_samples: 2}}]
generators:
  - {{kind: closed_book}}
judges:  # a judge engine of its own (an identical spec would share the generator's)
  - {{benchmark: correctness, model: {{max_model_len: 1024}}}}
resources:
  generate: {{num_gpus: {gen}, actors: {actors}}}
  judge: {{num_gpus: {judge}}}
"""


def _plan(tmp_path: Path, capacity: dict, **shares):
    path = tmp_path / "s.yaml"
    path.write_text(SHARED.format(**shares))
    sweep, base = load_sweep(path)
    plan = build_plan(sweep, base, capacity=capacity)
    return placement_lines(plan.trials, plan.sweep.resources, capacity)


def test_judged_generation_shares_one_gpu_or_runs_in_two_phases(tmp_path):
    one = {"CPU": 16.0, "GPU": 1.0}
    lines = _plan(tmp_path, one, gen=0.5, judge=0.5, actors=1)
    assert "one pipeline" in lines[1] and "1 GPU at once" in lines[1], lines
    lines = _plan(tmp_path, one, gen=0.6, judge=0.6, actors=1)  # 1.2 of one GPU: in turn
    assert "two phases (generate, release, judge)" in lines[1], lines
    lines = _plan(tmp_path, one, gen=1, judge=0, actors=1)  # the judge's engine on CPUs
    assert "one pipeline" in lines[1] and "1 GPU at once" in lines[1], lines


REFUSED = SHARED.format(gen=0.6, judge=0.5, actors=3)


@pytest.fixture(scope="module")
def fake_gpu_cluster():
    """A loopback Ray cluster: a head with 8 CPUs and no GPU, two workers with 2 CPUs and
    one fake GPU each (`ray start --num-gpus 1`): 2 GPUs, never two on one node."""
    from ray_cluster import LocalCluster

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    gpu_node = {"num_cpus": 2, "num_gpus": 1, "resources": {}}
    cluster = LocalCluster(env, {"g1": gpu_node, "g2": dict(gpu_node)}, head_cpus=8)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.mark.slow
def test_a_gpu_sweep_the_cluster_cannot_pack_is_refused_before_any_model_loads(
    tmp_path, fake_gpu_cluster
):
    sweep = tmp_path / "s.yaml"
    sweep.write_text(REFUSED)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.pop("RAY_ADDRESS", None)
    address = ["--address", fake_gpu_cluster.address]

    def lasagna(command: str, path: Path) -> tuple[int, str]:
        proc = subprocess.run(
            [sys.executable, "-m", "lasagna", "benchmark", command, str(path), *address]
            + ["--output", str(tmp_path / "out")],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        return proc.returncode, " ".join((proc.stdout + proc.stderr).split())

    for command in ("plan", "run"):
        code, said = lasagna(command, sweep)
        assert code == 2, said[-3000:]
        assert "cannot be placed on the cluster" in said, said[-3000:]
        assert "3 GPU at once (a share of a GPU is never split across two GPUs)" in said
        assert "the cluster has" in said and "2 GPU" in said
        assert "line 7" in said and "field 'resources.generate'" in said  # the sweep's line
        assert "num_gpus: 0.5" in said and "Traceback" not in said
    # 2 GPUs in all, one per node: an engine asking 2 can never be placed (Ray would
    # wait forever); one GPU each fits, on a node of its own
    whole = tmp_path / "whole.yaml"
    whole.write_text(WHOLE.format(gpus=2))
    for command in ("plan", "run"):
        code, said = lasagna(command, whole)
        assert code == 2, said[-3000:]
        assert "one actor of the generator engine asks" in said and "2 GPU" in said, said
        assert "than any node has (2 nodes with 2 CPU, 1 GPU; 1 node with 8 CPU, no GPU)" in said
        assert "line 4" in said and "field 'resources.generate'" in said, said
        assert "at most 1 GPU (num_gpus in resources.generate" in said, said
    whole.write_text(WHOLE.format(gpus=1))
    code, said = lasagna("plan", whole)
    assert code == 0 and "12 CPU, 2 GPU on 3 nodes" in said and "one pipeline" in said, said
    # no num_gpus: the pools give the engine a GPU of this cluster, and the key (planned
    # on this GPU-less machine for the cluster) is that of the bfloat16 engine it will be
    whole.write_text(WHOLE.format(gpus=0))  # num_gpus: 0 written out: the engine on CPUs
    code, said = lasagna("plan", whole)
    assert code == 0 and "one pipeline" in said and "GPU at once" not in said, said
    whole.write_text(WHOLE.format(gpus=0).split("resources:")[0])
    code, said = lasagna("plan", whole)
    sweep, base = load_sweep(whole)
    assert code == 0, said
    assert build_plan(sweep, base, capacity=TWO_GPUS).trials[0].key[:20] in said, said
    assert not any((tmp_path / "out").glob("2*")), "a refused run writes no run folder"


WHOLE = """\
benchmarks: [{{name: sample, n_samples: 2}}]
generators: [{{kind: closed_book}}]
resources:
  generate: {{num_gpus: {gpus}}}
"""


SEARCHER = """\
benchmarks: [{name: sample, n_samples: 5}]
retrievers: [{kind: bm25, top_k: 10}]
resources:
  retrieve: {num_cpus: 0.5, resources: {searcher: 1}}
"""


@pytest.mark.slow
def test_a_trial_waits_for_the_node_an_autoscaling_cluster_adds(tmp_path, fake_gpu_cluster):
    """No live node has `searcher`: refused, unless --max-nodes says the autoscaler can add
    one; the run then waits for it, said so, and finishes once the node joins (the
    autoscaler's part, adding the node an actor waits for, is played by this test)."""
    sweep = tmp_path / "s.yaml"
    sweep.write_text(SEARCHER)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.pop("RAY_ADDRESS", None)
    grows = ["--max-nodes", "1 x CPU=1,searcher=1"]

    def command(name: str, *extra: str) -> list[str]:
        return [sys.executable, "-m", "lasagna", "benchmark", name, str(sweep)] + [
            "--address",
            fake_gpu_cluster.address,
            "--output",
            str(tmp_path / "out"),
            *extra,
        ]

    # refused without --max-nodes (as above, and tests/test_autoscaling.py says how the
    # refusal names the flag); placed with it, on the node the autoscaler can add
    proc = subprocess.run(
        command("plan", *grows), capture_output=True, text=True, env=env, timeout=300
    )
    said = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 0, said[-3000:]
    assert "12 CPU, 2 GPU on 3 nodes; the autoscaler can add 1 node with 1 CPU, no GPU" in said

    run = subprocess.Popen(
        command("run", *grows, "--stall-timeout", "8"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: list[str] = []
    try:
        assert run.stdout is not None
        for line in run.stdout:  # the trial waits: the watchdog says for what
            lines.append(line)
            if "it fits a node the autoscaler can add" in line:
                break
        assert "waits for" in lines[-1] and "searcher: 1" in lines[-1], "".join(lines)[-3000:]
        fake_gpu_cluster.workers["s1"] = {"num_cpus": 1, "resources": {"searcher": 1}}
        fake_gpu_cluster.add_worker("s1")
        rest, _ = run.communicate(timeout=300)
    finally:
        run.kill()
    said = "".join(lines) + rest
    assert run.returncode == 0, said[-3000:]
    assert "(1 trial(s) run)" in said, said[-3000:]
    assert "stalled" not in said.split("it fits a node")[-1], said[-3000:]


@pytest.mark.slow
def test_an_actor_that_reserved_no_gpu_sees_none(ray_local):
    from lasagna.stages.actors import hide_unreserved_gpus

    before = os.environ.get("CUDA_VISIBLE_DEVICES")
    hide_unreserved_gpus()  # the driver (in-process use): nothing changes
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == before

    @ray_local.remote(num_cpus=0.1)
    class Probe:
        def visible(self):
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)  # as Ray 2.60 leaves a 0-GPU actor
            hide_unreserved_gpus()
            return os.environ.get("CUDA_VISIBLE_DEVICES")

    probe = Probe.remote()
    try:
        assert ray_local.get(probe.visible.remote(), timeout=120) == ""
    finally:
        ray_local.kill(probe)


def test_keys_record_the_dtype_of_the_engine_where_the_pools_place_it(tmp_path):
    """A CPU-only head planning for GPU workers: a local model with no num_gpus gets a GPU
    from the pools there (lasagna.models.gpus), so its key says bfloat16, not the head's
    CPU dtype; the same sweep planned for a cluster without GPUs says the CPU's."""
    from lasagna.models.gpus import planned_gpus
    from lasagna.models.vllm_backend import vllm_dtype

    path = tmp_path / "s.yaml"
    path.write_text(WHOLE.format(gpus=0))
    sweep, base = load_sweep(path)

    def planned(capacity):
        trial = build_plan(sweep, base, capacity=capacity).trials[0]
        return trial.system_config["model_identity"]["dtype"], trial.key

    on_gpus, gpu_key = planned(TWO_GPUS)
    on_cpus, cpu_key = planned({"CPU": 16.0})
    assert on_gpus == "bfloat16"
    assert on_cpus == vllm_dtype("auto", gpu=False)  # float32 here, bfloat16 on AMX CPUs
    assert (gpu_key == cpu_key) == (on_cpus == "bfloat16")  # the key follows the dtype
    assert planned_gpus() is None  # the plan's target does not outlive the plan


def test_the_sdk_judges_call_cache_records_where_its_engine_runs(tmp_path, monkeypatch):
    """evaluate()'s LLM judge hashes its model-call cache with the dtype of the engine the
    pools place: on a GPU machine a judge without num_gpus runs (and is cached) on the GPU,
    one with `num_gpus: 0` written out on CPUs."""
    from lasagna.evaluation.judge import LLMJudge
    from lasagna.models import identity
    from lasagna.models.call_cache import model_calls

    monkeypatch.setattr(identity, "planning_gpu", lambda: True)
    for spec, gpu in (
        (ModelSpec(backend="transformers"), True),
        (_spec(0, backend="transformers"), False),
    ):
        judge = LLMJudge(model=spec, cache=str(tmp_path))
        judge.prepare(None)
        assert judge._calls.engine_sha256 == model_calls(str(tmp_path), spec, gpu).engine_sha256
