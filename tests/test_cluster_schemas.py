"""cluster/ files validate against the schemas their tools use: the RayJob against KubeRay's
CRD (vendored in tests/schemas, with its source and commit), the launcher config against the
installed Ray's cluster schema; and they keep what a GPU cluster needs (a shared cache,
/dev/shm, autoscaling with a GPU minimum, a current image)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "cluster"
SCHEMAS = Path(__file__).resolve().parent / "schemas"


def _load(name: str) -> dict:
    return yaml.safe_load((CLUSTER / name).read_text(encoding="utf-8"))


def unknown_fields(doc: Any, schema: dict, path: str = "") -> list[str]:
    """Keys of `doc` that its OpenAPI schema does not declare (Kubernetes would drop them
    silently, or refuse them with strict field validation)."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    out: list[str] = []
    if isinstance(doc, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, value in doc.items():
            if props is not None and key in props:
                out += unknown_fields(value, props[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                out += unknown_fields(value, extra, f"{path}.{key}")
            elif props is not None or extra is False:
                out.append(f"{path}.{key}")
    elif isinstance(doc, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(doc):
            out += unknown_fields(item, schema["items"], f"{path}[{i}]")
    return out


def test_rayjob_validates_against_the_kuberay_crd_with_no_unknown_field() -> None:
    schema = json.loads(
        gzip.decompress((SCHEMAS / "kuberay-rayjob-v1.schema.json.gz").read_bytes())
    )
    job = _load("rayjob-sweep.yaml")
    jsonschema.Draft7Validator(schema).validate(job)
    assert unknown_fields(job, schema) == []
    # the checker sees a typo
    job["spec"]["rayClusterSpec"]["enableInTreeAutoscalng"] = True
    assert unknown_fields(job, schema) == [".spec.rayClusterSpec.enableInTreeAutoscalng"]


def test_launcher_validates_against_rays_cluster_schema() -> None:
    import ray.autoscaler

    schema_file = Path(ray.autoscaler.__file__).parent / "ray-schema.json"
    schema = json.loads(schema_file.read_text())
    cfg = _load("ray-cluster-gpu.yaml")
    jsonschema.Draft7Validator(schema).validate(cfg)
    bad = {**cfg, "min_worker": 1}  # a typo of a top-level key is refused
    assert list(jsonschema.Draft7Validator(schema).iter_errors(bad))


def _pods(job: dict) -> list[dict]:
    cluster = job["spec"]["rayClusterSpec"]
    groups = [cluster["headGroupSpec"], *cluster["workerGroupSpecs"]]
    return [g["template"]["spec"] for g in groups]


def test_rayjob_shares_one_cache_and_memory_backed_shm_on_every_pod() -> None:
    job = _load("rayjob-sweep.yaml")
    assert yaml.safe_load(job["spec"]["runtimeEnvYAML"])["env_vars"]["LASAGNA_CACHE"] == "/cache"
    for pod in _pods(job):
        container = pod["containers"][0]
        env = {e["name"]: e["value"] for e in container["env"]}
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert env["LASAGNA_CACHE"] == "/cache" and mounts["/cache"] == "cache"
        assert volumes["cache"]["persistentVolumeClaim"]["claimName"] == "lasagna-cache"
        assert volumes[mounts["/dev/shm"]]["emptyDir"]["medium"] == "Memory"


def test_rayjob_autoscales_gpu_workers_from_a_minimum_of_one() -> None:
    cluster = _load("rayjob-sweep.yaml")["spec"]["rayClusterSpec"]
    assert cluster["enableInTreeAutoscaling"] is True
    (gpu,) = cluster["workerGroupSpecs"]
    assert 1 <= gpu["minReplicas"] <= gpu["replicas"] < gpu["maxReplicas"]


def test_launcher_runs_a_current_image_with_a_gpu_worker_and_a_shared_cache() -> None:
    cfg = _load("ray-cluster-gpu.yaml")
    assert cfg["docker"]["image"].startswith("rayproject/ray:2.60.0-py311-gpu")
    assert any("--shm-size" in o for o in cfg["docker"]["run_options"])
    types = cfg["available_node_types"]
    gpu = [t for t in types.values() if t["resources"].get("GPU", 0) >= 1]
    assert gpu and all(t["min_workers"] >= 1 for t in gpu)
    for t in types.values():
        assert t["node_config"]["ImageId"] != "latest_dlami"  # resolves to an Ubuntu 18.04 AMI
    starts = " ".join(cfg["head_start_ray_commands"] + cfg["worker_start_ray_commands"])
    assert starts.count("LASAGNA_CACHE=/mnt/lasagna-cache") == 2
    assert any("/mnt/lasagna-cache" in c for c in cfg["initialization_commands"])


def test_dockerignore_keeps_local_state_out_of_the_image() -> None:
    ignored = (REPO / ".dockerignore").read_text().split()
    for entry in (".git", ".venv", "results", "cluster/models"):
        assert entry in ignored, entry


def test_both_files_tell_the_plan_what_their_autoscaler_can_add() -> None:
    """The launcher's head reads its own config (~/ray_bootstrap_config.yaml); the RayJob's
    entrypoint says its GPU group with --max-nodes: both as many nodes as the autoscaler may
    run, with the resources Ray will show for them."""
    from lasagna.stages.autoscaling import NodeGroup, launcher_groups, parse_groups

    assert launcher_groups(_load("ray-cluster-gpu.yaml")) == [
        NodeGroup(4, {"CPU": 8.0, "GPU": 1.0})
    ]
    job = _load("rayjob-sweep.yaml")
    (gpu,) = [
        g for g in job["spec"]["rayClusterSpec"]["workerGroupSpecs"] if g["groupName"] == "gpu"
    ]
    limits = gpu["template"]["spec"]["containers"][0]["resources"]["limits"]
    said = job["spec"]["entrypoint"].split("--max-nodes '")[1].split("'")[0]
    assert parse_groups(said) == [
        NodeGroup(
            gpu["maxReplicas"],
            {"CPU": float(limits["cpu"]), "GPU": float(gpu["rayStartParams"]["num-gpus"])},
        )
    ]
