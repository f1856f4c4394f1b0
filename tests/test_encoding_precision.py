"""Dense encoding precision: what `auto` resolves to, the quality guard, and that the resolved
precision reaches the index cache key, the trial key and the manifest's config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lasagna.cache.index import embeddings_key, index_key
from lasagna.errors import UserError
from lasagna.models.precision import (
    FP32_REFERENCE_NDCG10,
    check_backend,
    cpu_flags,
    cpu_has_bf16,
    guard_allows,
    resolve_precision,
)
from lasagna.sweep.plan import build_plan
from lasagna.sweep.schema import Sweep
from lasagna.systems import DenseRetriever, HybridRetriever, StageResources

SAMPLE = Path(__file__).resolve().parents[1] / "lasagna" / "sample" / "sample.jsonl"
BF16_CPU = frozenset({"avx2", "avx512f", "avx512_bf16"})
AVX2_CPU = frozenset({"avx", "avx2"})


def test_guard_refuses_a_setting_out_of_bounds_and_an_unmeasured_one() -> None:
    close = {"bf16": FP32_REFERENCE_NDCG10 - 0.0015, "int8": FP32_REFERENCE_NDCG10 - 0.0031}
    assert guard_allows("bf16", close)
    assert not guard_allows("int8", close)  # 0.0031 below: out of the 0.002 bound
    assert not guard_allows("fp16", close)  # never measured
    assert guard_allows("fp32", {})  # the reference itself


def test_auto_is_bf16_only_where_the_hardware_has_it_and_the_guard_allows() -> None:
    good = {"bf16": FP32_REFERENCE_NDCG10 + 0.0004}
    bad = {"bf16": FP32_REFERENCE_NDCG10 - 0.01}
    assert resolve_precision("auto", gpu=False, flags=BF16_CPU, measured=good) == "bf16"
    assert resolve_precision("auto", gpu=False, flags=BF16_CPU, measured=bad) == "fp32"
    assert resolve_precision("auto", gpu=False, flags=AVX2_CPU, measured=good) == "fp32"
    assert resolve_precision("auto", gpu=True, flags=AVX2_CPU, measured=good) == "bf16"
    fp16 = {"fp16": FP32_REFERENCE_NDCG10}
    assert resolve_precision("auto", gpu=True, flags=AVX2_CPU, measured=fp16) == "fp16"
    assert resolve_precision("auto", gpu=True, backend="onnx", measured=good) == "fp32"
    # an explicit choice is the user's, guard or not
    assert resolve_precision("int8", gpu=False, flags=AVX2_CPU, measured={}) == "int8"


def test_cpu_flags_read_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16\n")
    flags = cpu_flags(str(info))
    assert cpu_has_bf16(flags) and "avx2" in flags
    assert cpu_flags(str(tmp_path / "missing")) == frozenset()


def test_config_holds_the_resolved_precision_never_auto() -> None:
    here = resolve_precision("auto", gpu=False)
    assert DenseRetriever().precision == here
    assert DenseRetriever(precision="auto").precision == here
    on_gpu = DenseRetriever(encode=StageResources(num_gpus=1)).precision
    assert on_gpu == resolve_precision("auto", gpu=True)
    assert DenseRetriever(precision="int8").precision == "int8"
    assert DenseRetriever(backend="sentence-transformers").backend == "torch"  # the old name
    hybrid = HybridRetriever(retrievers=({"kind": "bm25"}, {"kind": "dense"}))
    assert hybrid.dense_parts()[0].precision == here


def test_index_and_embedding_cache_keys_differ_by_precision() -> None:
    fp32, bf16, int8 = (DenseRetriever(precision=p) for p in ("fp32", "bf16", "int8"))
    assert len({index_key("rev", c) for c in (fp32, bf16, int8)}) == 3
    assert len({embeddings_key("rev", c) for c in (fp32, bf16, int8)}) == 3
    assert index_key("rev", fp32) == index_key("rev", DenseRetriever(precision="fp32"))


def _plan(precision: str):
    sweep = Sweep(
        benchmarks=[{"path": str(SAMPLE)}],
        retrievers=[{"kind": "dense", "precision": precision}],
    )
    return build_plan(sweep, SAMPLE.parent)


def test_trial_key_and_manifest_config_record_the_resolved_precision() -> None:
    here = resolve_precision("auto", gpu=False)
    auto, int8 = _plan("auto"), _plan("int8")
    assert auto.trials[0].key != int8.trials[0].key
    # what the manifest writes: the trial's config and the sweep's config
    assert auto.trials[0].system_config["precision"] == here
    assert auto.sweep.model_dump(mode="json")["retrievers"][0]["precision"] == here
    assert int8.trials[0].system_config["precision"] == "int8"
    same = _plan(here)
    assert same.trials[0].key == auto.trials[0].key  # auto is exactly what it resolves to


def test_unavailable_backend_or_combination_is_refused_with_the_fix() -> None:
    check_backend("torch", "int8")
    with pytest.raises(UserError, match="precision 'int8' is not available with backend"):
        check_backend("onnx", "int8")
    try:
        import optimum  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match="backend 'openvino' needs"):
            check_backend("openvino", "fp32")


@pytest.mark.slow
def test_each_precision_encodes_close_to_fp32() -> None:
    """Real MiniLM in bf16 and int8: float32 output, near fp32's direction (int8 is
    lossy: its retrieval quality is the bench's figure, not this test's)."""
    from lasagna.models.embedders import encode, load_embedder

    texts = ["Vitamin D deficiency is linked to bone loss.", "Aspirin lowers fever.", "x"]
    ref = encode(load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1), texts)
    for precision, floor in (("bf16", 0.99), ("int8", 0.85)):
        model = load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1, precision=precision)
        emb = encode(model, texts)
        assert emb.dtype == np.float32 and emb.shape == ref.shape
        cos = (emb * ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
        assert cos.min() > floor, (precision, cos)
        assert not np.allclose(emb, ref, atol=1e-6)  # it did run in another precision
