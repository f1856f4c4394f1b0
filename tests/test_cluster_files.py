"""cluster/: the launcher YAML and the KubeRay RayJob parse and have the right structure.

No cluster exists here: these checks catch a broken file, a missing GPU resource or an
entrypoint naming a sweep that does not exist.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from lasagna.sweep.profiles import resolve
from lasagna.sweep.schema import load_sweep

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "cluster"
SWEEP_IN_COMMAND = re.compile(r"configs/sweeps/[\w.-]+\.ya?ml")


def load(name: str) -> dict:
    return yaml.safe_load((CLUSTER / name).read_text(encoding="utf-8"))


def test_launcher_has_head_and_gpu_workers():
    cfg = load("ray-cluster-gpu.yaml")
    for key in ("cluster_name", "provider", "available_node_types", "head_node_type"):
        assert key in cfg, key
    types = cfg["available_node_types"]
    assert cfg["head_node_type"] in types
    gpu_types = [t for t in types.values() if t["resources"].get("GPU", 0) >= 1]
    assert gpu_types, "a worker type must advertise GPU resources"
    assert all(t["max_workers"] >= 1 for t in gpu_types)
    assert cfg["max_workers"] >= max(t["max_workers"] for t in gpu_types)
    assert "InstanceType" in gpu_types[0]["node_config"]


def test_launcher_installs_lasagna_gpu_and_syncs_the_repo():
    cfg = load("ray-cluster-gpu.yaml")
    assert "." in cfg["file_mounts"].values()
    setup = " ".join(cfg["setup_commands"])
    assert "pip install" in setup and "lasagna[gpu]" in setup
    assert "HF_HUB_OFFLINE" in setup
    starts = " ".join(cfg["head_start_ray_commands"] + cfg["worker_start_ray_commands"])
    assert "ray start --head" in starts and "$RAY_HEAD_IP" in starts


def test_rayjob_runs_an_existing_sweep_on_gpu_workers():
    job = load("rayjob-sweep.yaml")
    assert job["apiVersion"] == "ray.io/v1" and job["kind"] == "RayJob"
    spec = job["spec"]
    words = shlex.split(spec["entrypoint"])
    assert "lasagna benchmark run" in " ".join(words)
    sweeps = SWEEP_IN_COMMAND.findall(spec["entrypoint"])
    assert sweeps, "the entrypoint must run a sweep under configs/sweeps/"
    for sweep in sweeps:
        assert (REPO / sweep).is_file(), f"{sweep} does not exist"
        parsed, _ = load_sweep(REPO / sweep)
        resolved = resolve(parsed)
        assert resolved.retrievers or resolved.generators
    cluster = spec["rayClusterSpec"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"]
    groups = cluster["workerGroupSpecs"]
    gpu_groups = [
        g
        for g in groups
        if any(
            "nvidia.com/gpu" in c["resources"]["limits"]
            for c in g["template"]["spec"]["containers"]
        )
    ]
    assert gpu_groups, "a worker group must ask nvidia.com/gpu"
    assert all(g["replicas"] >= 1 and g["maxReplicas"] >= g["replicas"] for g in gpu_groups)


def test_rayjob_mounts_results_and_runs_offline():
    spec = load("rayjob-sweep.yaml")["spec"]
    head_pod = spec["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    mounts = {m["mountPath"] for m in head_pod["containers"][0]["volumeMounts"]}
    volumes = {v["name"] for v in head_pod["volumes"]}
    # the driver writes results on the head: results are a shared volume
    assert "/opt/lasagna/results" in mounts and "results" in volumes
    env = {e["name"]: e["value"] for e in head_pod["containers"][0]["env"]}
    assert env["HF_HUB_OFFLINE"] == "1"
    runtime_env = yaml.safe_load(spec["runtimeEnvYAML"])
    assert runtime_env["env_vars"]["HF_HUB_OFFLINE"] == "1"


def test_readme_and_dockerfile_cover_the_commands():
    readme = (CLUSTER / "README.md").read_text(encoding="utf-8")
    for needle in ("ray job submit", "--working-dir", "s3://", "HF_HUB_OFFLINE", "ray up"):
        assert needle in readme, needle
    for sweep in SWEEP_IN_COMMAND.findall(readme):
        assert (REPO / sweep).is_file(), f"README names a missing sweep {sweep}"
    docker = (CLUSTER / "Dockerfile").read_text(encoding="utf-8")
    assert "lasagna[gpu]" in docker and "/opt/lasagna" in docker
