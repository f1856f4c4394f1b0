"""The capacity the resource plan (lasagna.stages.placement) is checked against: what an
in-process Ray gets on this machine, found without importing Ray (or torch), when no
cluster is named (`local_capacity`); the connected cluster's totals and each live node's
resources otherwise, with the nodes its autoscaler can add (`ray_capacity`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lasagna.stages.autoscaling import addable, declared_groups
from lasagna.stages.node_packing import Capacity


def local_capacity() -> Capacity:
    """What an in-process Ray gets on this machine (one node): its CPUs (a cgroup quota
    counts, as Ray counts it) and the GPUs it sees, without importing Ray."""
    cpus = float(os.cpu_count() or 1)
    quota = _cgroup_cpus()
    if quota is not None:
        cpus = min(cpus, quota)
    return Capacity({"CPU": cpus, "GPU": float(_visible_gpus())})


def ray_capacity(cluster: bool = False) -> Capacity:
    """The connected Ray cluster's totals and each live node's resources (Ray places an
    actor on one node, so a plan must fit the nodes, not only the sum), with the nodes its
    autoscaler can still add (lasagna.stages.autoscaling)."""
    import ray

    nodes = [dict(n.get("Resources") or {}) for n in ray.nodes() if n.get("Alive")]
    totals = dict(ray.cluster_resources())
    return Capacity(totals, nodes, addable(nodes, declared_groups()), cluster)


def connected() -> bool:
    """Whether this process is connected to a Ray (in-process or a cluster)."""
    if "ray" not in sys.modules:  # never imported: not connected (and a plan stays light)
        return False
    import ray

    return ray.is_initialized()


def current_capacity() -> Capacity:
    """The connected cluster's capacity (`ray_capacity`), else this machine's."""
    return ray_capacity() if connected() else local_capacity()


def _cgroup_cpus() -> float | None:
    try:
        text = Path("/sys/fs/cgroup/cpu.max").read_text().split()
    except OSError:
        return None
    if len(text) == 2 and text[0] != "max":
        return max(1.0, float(int(text[0]) // int(text[1])))
    return None


def _visible_gpus() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    return len([p for p in Path("/dev").glob("nvidia[0-9]*")])
