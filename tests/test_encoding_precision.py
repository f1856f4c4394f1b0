"""Dense encoder runtime and precision: what `auto` resolves to, the quality guard, and that the
resolved setting reaches the index cache key, the trial key and the manifest's config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lasagna.cache.index import embeddings_key, index_key
from lasagna.errors import UserError
from lasagna.models.precision import (
    FP32_REFERENCE_NDCG10,
    MEASURED,
    Measured,
    check_backend,
    cpu_flags,
    cpu_has_bf16,
    guard_allows,
    hardware_kind,
    resolve_setting,
)
from lasagna.sweep.plan import build_plan
from lasagna.sweep.schema import Sweep
from lasagna.systems import DenseRetriever, HybridRetriever, StageResources

SAMPLE = Path(__file__).resolve().parents[1] / "lasagna" / "sample" / "sample.jsonl"
AMX_CPU = frozenset({"avx2", "avx512f", "avx512_bf16", "amx_bf16"})
BF16_CPU = frozenset({"avx2", "avx512f", "avx512_bf16"})
AVX2_CPU = frozenset({"avx", "avx2"})
REF = FP32_REFERENCE_NDCG10


def test_guard_refuses_out_of_bounds_unmeasured_and_batch_dependent_settings() -> None:
    assert guard_allows(Measured(REF - 0.0015, 10.0))
    assert not guard_allows(Measured(REF - 0.0031, 10.0))  # out of the 0.002 bound
    assert not guard_allows(None)  # never measured
    assert not guard_allows(Measured(REF, 10.0, invariant=False))  # vectors depend on layout


def test_hardware_kind_from_the_cpu_flags_or_the_gpu() -> None:
    assert hardware_kind(False, AMX_CPU) == "cpu-amx"
    assert hardware_kind(False, BF16_CPU) == "cpu-avx512bf16"
    assert hardware_kind(False, AVX2_CPU) == "cpu"
    assert hardware_kind(True, AVX2_CPU) == "cuda"


TABLE = {
    "cpu-amx": {
        ("torch", "fp32"): Measured(REF, 170.0),
        ("torch", "bf16"): Measured(REF + 0.0006, 130.0),
        ("openvino", "fp32"): Measured(REF, 120.0),
        ("openvino", "bf16"): Measured(REF + 0.0011, 42.0),
        ("torch", "fp16"): Measured(REF + 0.01, 20.0),  # fastest, out of the guard
    },
    "cpu": {("torch", "fp32"): Measured(REF, 220.0), ("onnx", "fp32"): Measured(REF, 200.0)},
}


def _auto(backend="auto", precision="auto", flags=AMX_CPU, installed=lambda b: True, gpu=False):
    return resolve_setting(
        backend, precision, gpu=gpu, flags=flags, measured=TABLE, installed=installed
    )


def test_auto_is_the_fastest_measured_setting_within_the_guard_that_is_installed() -> None:
    assert _auto() == ("openvino", "bf16")
    assert _auto(installed=lambda b: b != "openvino") == ("torch", "bf16")
    assert _auto(backend="torch") == ("torch", "bf16")  # auto precision for the asked backend
    assert _auto(precision="fp32") == ("openvino", "fp32")  # auto backend for the precision
    assert _auto(flags=AVX2_CPU) == ("onnx", "fp32")
    assert _auto(flags=AVX2_CPU, installed=lambda b: False) == ("torch", "fp32")
    assert _auto(flags=BF16_CPU) == ("torch", "fp32")  # nothing measured there: the fallback
    assert _auto(gpu=True) == ("torch", "fp32")
    assert _auto(backend="onnx", flags=BF16_CPU) == ("onnx", "fp32")
    assert _auto("torch", "int8") == ("torch", "int8")  # an explicit choice is the user's


def test_the_recorded_table_keeps_its_promises() -> None:
    for kind, rows in MEASURED.items():
        for (backend, precision), m in rows.items():
            assert precision in ("fp32", "bf16", "fp16", "int8"), (kind, backend)
            assert m.ndcg10 > 0.6
        if rows:
            assert guard_allows(rows[("torch", "fp32")])  # the reference is always there


def test_cpu_flags_read_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16\n")
    flags = cpu_flags(str(info))
    assert cpu_has_bf16(flags) and "avx2" in flags
    assert cpu_flags(str(tmp_path / "missing")) == frozenset()


def test_config_holds_the_resolved_setting_never_auto() -> None:
    here = resolve_setting("auto", "auto", gpu=False)
    cfg = DenseRetriever()
    assert (cfg.backend, cfg.precision) == here
    cfg = DenseRetriever(precision="auto", backend="auto")
    assert (cfg.backend, cfg.precision) == here
    on_gpu = DenseRetriever(encode=StageResources(num_gpus=1))
    assert (on_gpu.backend, on_gpu.precision) == resolve_setting("auto", "auto", gpu=True)
    assert DenseRetriever(precision="int8").precision == "int8"
    assert DenseRetriever(backend="sentence-transformers").backend == "torch"  # the old name
    hybrid = HybridRetriever(retrievers=({"kind": "bm25"}, {"kind": "dense"}))
    assert hybrid.dense_parts()[0].precision == here[1]


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


def test_trial_key_and_manifest_config_record_the_resolved_setting() -> None:
    backend, precision = resolve_setting("auto", "auto", gpu=False)
    auto, int8 = _plan("auto"), _plan("int8")
    assert auto.trials[0].key != int8.trials[0].key
    # what the manifest writes: the trial's config and the sweep's config
    assert auto.trials[0].system_config["precision"] == precision
    assert auto.trials[0].system_config["backend"] == backend
    assert auto.sweep.model_dump(mode="json")["retrievers"][0]["precision"] == precision
    assert int8.trials[0].system_config["precision"] == "int8"
    same = _plan(precision)
    assert same.trials[0].key == auto.trials[0].key  # auto is exactly what it resolves to


def test_unavailable_backend_or_combination_is_refused_with_the_fix() -> None:
    check_backend("torch", "int8")
    with pytest.raises(UserError, match="precision 'int8' is not available with backend"):
        check_backend("onnx", "int8")
    with pytest.raises(UserError, match="precision 'int8' runs on CPUs only"):
        check_backend("torch", "int8", gpu=True)
    with pytest.raises(UserError, match="backend 'openvino' runs on CPUs only"):
        check_backend("openvino", "fp32", gpu=True)
    check_backend("torch", "bf16", gpu=True)
    with pytest.raises(UserError, match="only on CPUs with native bf16"):
        check_backend("openvino", "bf16", flags=AVX2_CPU)
    try:
        import openvino  # noqa: F401
    except ImportError:
        with pytest.raises(
            UserError, match=r"backend 'openvino' needs openvino.*lasagna\[openvino\]"
        ):
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


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["openvino", "onnx"])
def test_each_runtime_encodes_as_torch_does_and_is_batch_invariant(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """The transformer run by OpenVINO / ONNX Runtime (fp32): torch's vectors to rounding,
    and a batch gives the same bytes alone or among others. OpenVINO's conversion is cached:
    the next load reads it and encodes the same bytes. Converting prints nothing."""
    import logging

    import transformers

    from lasagna.models.embedders import encode_batches, load_embedder, rows_independent
    from lasagna.models.precision import backend_installed

    if not backend_installed(backend):
        pytest.skip(f"lasagna[{backend}] is not installed")
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    texts = ["Vitamin D deficiency is linked to bone loss.", "Aspirin lowers fever.", "x"]
    ref = encode_batches(load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1), [texts])
    capfd.readouterr()
    logging.Logger.warning_once.cache_clear()  # transformers' once-only notes: say them again
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_warning()  # as outside the tests (conftest: errors)
    try:
        model = load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1, backend=backend)
    finally:
        transformers.logging.set_verbosity(verbosity)
    assert "loss_type" not in capfd.readouterr().err  # an encoder has no loss to speak of
    emb = encode_batches(model, [texts, texts[:1]])
    assert emb.dtype == np.float32 and emb.shape == (4, ref.shape[1])
    assert np.allclose(emb[:3], ref, atol=1e-4)
    assert np.array_equal(encode_batches(model, [texts]), emb[:3])  # the same batch, same bytes
    assert rows_independent(model)
    converted = list((tmp_path / "models").glob("openvino-*/model.xml"))
    assert len(converted) == (backend == "openvino")
    if backend == "openvino":
        again = load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1, backend=backend)
        assert np.array_equal(encode_batches(again, [texts, texts[:1]]), emb)
        assert list((tmp_path / "models").glob("openvino-*/model.xml")) == converted


def _half_stored_copy(dest: Path) -> Path:
    """The packaged MiniLM with its weights stored in fp16 (as many published embedders are)."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    from lasagna.models.embedders import resolve_embedder

    shutil.copytree(resolve_embedder("packaged:all-MiniLM-L6-v2"), dest)
    weights = load_file(dest / "model.safetensors")
    half = {k: v.to(torch.float16) if v.is_floating_point() else v for k, v in weights.items()}
    save_file(half, dest / "model.safetensors", metadata={"format": "pt"})
    return dest


def test_a_half_stored_checkpoint_runs_in_the_precision_asked(tmp_path: Path) -> None:
    """transformers loads a checkpoint in the dtype it is stored in; fp32 (the key's and the
    runtimes' base) must still mean fp32, and bf16 bf16."""
    import torch

    from lasagna.models.embedders import encode, load_embedder

    path = str(_half_stored_copy(tmp_path / "minilm-fp16"))
    texts = ["Vitamin D deficiency is linked to bone loss.", "Aspirin lowers fever."]
    fp32 = load_embedder(path, num_threads=1, precision="fp32")
    assert {p.dtype for p in fp32.parameters()} == {torch.float32}
    bf16 = load_embedder(path, num_threads=1, precision="bf16")
    assert {p.dtype for p in bf16.parameters()} == {torch.bfloat16}
    # the fp16 values, computed in fp32: the packaged fp32 model's vectors to fp16 rounding
    ref = encode(load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1), texts)
    assert np.allclose(encode(fp32, texts), ref, atol=2e-3)
