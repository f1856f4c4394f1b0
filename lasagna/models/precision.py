"""Precision by hardware: the encoder runtime and precision of dense embedders (what `auto`
means on this hardware, and the guard), and the GPU a chat model's bfloat16 needs.

`backend: auto` and `precision: auto` are resolved once, on the driver, when a retriever
config is validated, so the trial key, the index cache key and the manifest all record the
setting that ran (a bf16 index is not an fp32 index). The hardware is read from
/proc/cpuinfo's flags (or the encode stage asking for GPUs), never from torch, so the driver
stays light.

A setting becomes what `auto` picks only when it was measured on that kind of hardware by
scripts/bench_retrieval.py --runtimes, its SciFact nDCG@10 is within `QUALITY_TOLERANCE` of
the fp32 reference and its vectors are batch-invariant (`guard_allows`); among those, the
fastest whose packages are installed (`resolve_setting`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Precision = Literal["fp32", "fp16", "bf16", "int8"]
PRECISIONS: tuple[str, ...] = ("fp32", "fp16", "bf16", "int8")
BACKENDS: tuple[str, ...] = ("torch", "onnx", "openvino")
Setting = tuple[str, str]  # (backend, precision)

FP32_REFERENCE_NDCG10 = 0.64508  # all-MiniLM-L6-v2 on SciFact test (MTEB), fp32
QUALITY_TOLERANCE = 0.002


@dataclass(frozen=True)
class Measured:
    """One encoder setting on one kind of hardware, from scripts/bench_retrieval.py
    --runtimes: SciFact test nDCG@10 of the packaged MiniLM, corpus encode seconds (2 threads)
    and whether its vectors were the same bytes whatever encoded them (batch-invariant)."""

    ndcg10: float
    encode_s: float
    invariant: bool = True


# Per kind of hardware (`hardware_kind`): what `auto` chooses from. A setting missing here
# has not been measured on that hardware and is never chosen by `auto`.
MEASURED: dict[str, dict[Setting, Measured]] = {
    # AMD EPYC, AVX2 only (no native bf16), 2 cores, one run on a busy machine (2026-12-03)
    "cpu": {
        ("torch", "fp32"): Measured(0.64508, 353.8),
        ("openvino", "fp32"): Measured(0.64508, 310.4),
        ("onnx", "fp32"): Measured(0.64508, 409.4),
        # -0.00514: out of bounds, never a default (its encode time was not recorded)
        ("torch", "int8"): Measured(0.63994, 0.0),
    },
    # Intel Xeon with AMX (2.1 GHz), 2 cores, the encoding plan's batches (2026-12-07)
    "cpu-amx": {
        ("torch", "fp32"): Measured(0.64508, 234.6),
        ("openvino", "fp32"): Measured(0.64508, 222.6),
        ("onnx", "fp32"): Measured(0.64508, 307.4),
        ("torch", "bf16"): Measured(0.64537, 97.7),
        ("openvino", "bf16"): Measured(0.64620, 88.5),
    },
    # AMD EPYC with AVX512_BF16 (no AMX), 2 cores, the encoding plan's batches, quiet
    # machine (2026-12-06)
    "cpu-avx512bf16": {
        ("torch", "fp32"): Measured(0.64508, 197.3),
        ("openvino", "fp32"): Measured(0.64508, 94.4),
        ("onnx", "fp32"): Measured(0.64508, 139.5),
        ("torch", "bf16"): Measured(0.64626, 76.4),
        ("openvino", "bf16"): Measured(0.64568, 51.1),
    },
    # CUDA GPUs: nothing measured yet (scripts/gpu_check.py measures fp32/fp16/bf16)
    "cuda": {},
}
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # native bf16 dot products (Cooper Lake+, SPR+)
BACKEND_PACKAGES = {"onnx": ("onnxruntime", "onnx"), "openvino": ("openvino",)}
BACKEND_EXTRA = {"onnx": "onnx", "openvino": "openvino"}
# what each runtime runs: OpenVINO's bf16 only where the CPU has it (elsewhere it would
# quietly run fp32), ONNX Runtime fp32
BACKEND_PRECISIONS = {"torch": PRECISIONS, "onnx": ("fp32",), "openvino": ("fp32", "bf16")}


def parse_cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The feature flags in /proc/cpuinfo's text (its first `flags` / `Features` line)."""
    for line in cpuinfo.splitlines():
        if line.startswith(("flags", "Features")):  # x86 / arm
            return frozenset(line.partition(":")[2].split())
    return frozenset()


@functools.cache
def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The CPU feature flags of this machine (empty where /proc/cpuinfo is not readable)."""
    try:
        return parse_cpu_flags(Path(cpuinfo).read_text())
    except OSError:
        return frozenset()


def cpu_has_bf16(flags: frozenset[str] | None = None) -> bool:
    """Native bf16 dot products (else torch and vLLM emulate bf16, slower than fp32); used
    by every `auto` precision / dtype (dense encoders here, vLLM's dtype)."""
    flags = cpu_flags() if flags is None else flags
    return any(f in flags for f in CPU_BF16_FLAGS)


def hardware_kind(gpu: bool, flags: frozenset[str] | None = None) -> str:
    """The kind of hardware an encoder runs on, as `MEASURED` is keyed."""
    if gpu:
        return "cuda"
    flags = cpu_flags() if flags is None else flags
    if "amx_bf16" in flags:
        return "cpu-amx"
    return "cpu-avx512bf16" if "avx512_bf16" in flags else "cpu"


def guard_allows(
    measured: Measured | None,
    *,
    reference: float = FP32_REFERENCE_NDCG10,
    tolerance: float = QUALITY_TOLERANCE,
) -> bool:
    """Whether a measured setting may be a default: its nDCG@10 is within `tolerance` of the
    fp32 reference and its vectors are batch-invariant; an unmeasured one may not."""
    return (
        measured is not None
        and measured.invariant
        and abs(measured.ndcg10 - reference) <= tolerance
    )


def backend_installed(backend: str) -> bool:
    """Whether the packages a backend runs on are importable here (no import happens)."""
    import importlib.util

    return all(importlib.util.find_spec(p) is not None for p in BACKEND_PACKAGES.get(backend, ()))


def resolve_setting(
    backend: str,
    precision: str,
    *,
    gpu: bool,
    flags: frozenset[str] | None = None,
    measured: dict[str, dict[Setting, Measured]] | None = None,
    installed: Callable[[str], bool] = backend_installed,
) -> Setting:
    """The (backend, precision) that `backend` / `precision` mean here: an explicit value is
    kept; `auto` is the fastest setting measured on this kind of hardware that passes the
    quality guard and is batch-invariant, among those matching the explicit half and whose
    packages are installed; torch / fp32 where none is."""
    if backend != "auto" and precision != "auto":
        return backend, precision
    table = (MEASURED if measured is None else measured).get(hardware_kind(gpu, flags), {})
    fits = [
        (m.encode_s, b, p)
        for (b, p), m in table.items()
        if backend in ("auto", b)
        and precision in ("auto", p)
        and guard_allows(m)
        and (b == "torch" or installed(b))
    ]
    if fits:
        _, b, p = min(fits)
        return b, p
    return ("torch" if backend == "auto" else backend), (
        "fp32" if precision == "auto" else precision
    )


def check_backend(
    backend: str, precision: str, flags: frozenset[str] | None = None, *, gpu: bool = False
) -> None:
    """Refuse, before any model loads, a backend whose packages are missing or a precision
    lasagna does not run with it (int8 on a GPU: torch's dynamic quantization is CPU-only)."""
    from lasagna.errors import Problem, UserError

    if gpu and (precision == "int8" or backend != "torch"):
        what = "precision 'int8'" if precision == "int8" else f"backend '{backend}'"
        raise UserError(
            Problem(
                f"{what} runs on CPUs only, and this encoder asks for a GPU (encode.num_gpus)",
                field="precision" if precision == "int8" else "backend",
                fix="use precision: fp16 / bf16 / fp32 (or auto) with backend: torch on a "
                "GPU, or encode: {num_gpus: 0} for int8",
            )
        )
    if backend == "torch":
        return
    runs = BACKEND_PRECISIONS[backend]
    if precision not in runs:
        raise UserError(
            Problem(
                f"precision '{precision}' is not available with backend '{backend}'",
                field="precision",
                fix=f"use precision: {' or '.join(runs)} with backend: {backend}, or backend: "
                "torch for bf16 / fp16 / int8 (or auto for both)",
            )
        )
    if backend == "openvino" and precision == "bf16" and not cpu_has_bf16(flags):
        raise UserError(
            Problem(
                "backend 'openvino' runs bf16 only on CPUs with native bf16 (AMX or "
                "AVX512_BF16); this CPU has neither, so it would run fp32 under a bf16 label",
                field="precision",
                fix="use precision: fp32 (or auto) with backend: openvino here",
            )
        )
    if not backend_installed(backend):
        missing = ", ".join(BACKEND_PACKAGES[backend])
        raise UserError(
            Problem(
                f"backend '{backend}' needs {missing}, which is not installed",
                field="backend",
                fix=f"pip install 'lasagna[{BACKEND_EXTRA[backend]}]', or use backend: torch "
                "(or auto: the fastest installed)",
            )
        )


def check_bf16_gpu(capability: tuple[int, int] | None = None) -> None:
    """A chat model's dtype auto is bfloat16 on a GPU (vLLM and transformers alike), which
    needs compute capability 8.0 (Ampere) or newer: refuse an older card (T4, V100) with the
    fix, so the trial key, which says bfloat16, never hides a float16 run."""
    if capability is None:
        import torch

        capability = torch.cuda.get_device_capability()
    if capability[0] < 8:
        from lasagna.errors import Problem, UserError

        raise UserError(
            Problem(
                f"dtype auto is bfloat16 on GPUs, which this GPU (compute capability "
                f"{capability[0]}.{capability[1]}, older than Ampere's 8.0) does not run",
                field="dtype",
                fix="set dtype: float16 for this generator or judge model",
            )
        )
