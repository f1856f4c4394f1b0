"""What an in-process Ray gets on this machine, found without importing Ray (or torch): the
capacity the resource plan (lasagna.stages.placement) is checked against when no cluster is
named."""

from __future__ import annotations

import os
from pathlib import Path


def local_capacity() -> dict[str, float]:
    """What an in-process Ray gets on this machine: its CPUs (a cgroup quota counts, as Ray
    counts it) and the GPUs it sees, without importing Ray."""
    cpus = float(os.cpu_count() or 1)
    quota = _cgroup_cpus()
    if quota is not None:
        cpus = min(cpus, quota)
    return {"CPU": cpus, "GPU": float(_visible_gpus())}


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
