"""Systems' identities and resources: an edited local embedder is a new system (trial key
and index), and the sweep's stage resources reach every retriever's stage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lasagna.cache.index import embeddings_key, index_key
from lasagna.engine.trials import with_resources
from lasagna.models.embedders import resolve_embedder
from lasagna.stages.retrieval import search_resources
from lasagna.sweep.plan import build_plan
from lasagna.sweep.schema import Resources, Sweep
from lasagna.systems import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    StageResources,
)

SAMPLE = Path(__file__).resolve().parents[1] / "lasagna" / "sample" / "sample.jsonl"


def _local_embedder(tmp_path: Path) -> Path:
    """A local copy of the packaged MiniLM: small files copied, the weights linked."""
    source = resolve_embedder("packaged:all-MiniLM-L6-v2")
    target = tmp_path / "my-embedder"
    for path in source.rglob("*"):
        out = target / path.relative_to(source)
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
        elif path.stat().st_size > 1_000_000:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.symlink_to(path)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, out)
    return target


def _dense_key(model: Path) -> str:
    sweep = Sweep(
        benchmarks=[{"path": str(SAMPLE)}], retrievers=[{"kind": "dense", "model": str(model)}]
    )
    (trial,) = build_plan(sweep, SAMPLE.parent).trials
    return trial.key


def test_an_edited_local_embedder_is_a_new_system(tmp_path: Path) -> None:
    model = _local_embedder(tmp_path)
    cfg = DenseRetriever(model=str(model))
    key, index, emb = _dense_key(model), index_key("rev", cfg), embeddings_key("rev", cfg)
    assert _dense_key(model) == key  # stable while the files are the same
    config = model / "sentence_bert_config.json"
    config.write_text(config.read_text().replace("256", "128"))  # max_seq_length 256 -> 128
    assert _dense_key(model) != key
    assert index_key("rev", cfg) != index
    assert embeddings_key("rev", cfg) != emb  # the old vectors are never reused


def test_bm25_keys_do_not_depend_on_model_files() -> None:
    sweep = Sweep(benchmarks=[{"path": str(SAMPLE)}], retrievers=[{"kind": "bm25"}])
    (trial,) = build_plan(sweep, SAMPLE.parent).trials
    assert "model_identity" not in trial.system_config


@pytest.mark.parametrize("stage", ["retrieve", "search"])
def test_sweep_resources_reach_every_retrievers_search_stage(stage: str) -> None:
    own = StageResources(actors=2, num_cpus=0.25, batch_size=32)
    resources = Resources(**{stage: own})
    bm25 = with_resources(BM25Retriever(), resources)
    dense = with_resources(DenseRetriever(), resources)
    hybrid = with_resources(
        HybridRetriever(retrievers=(BM25Retriever(), BM25Retriever(k1=1.2))), resources
    )
    if stage == "retrieve":  # BM25's search actors
        assert search_resources(bm25) == own
        assert search_resources(hybrid) == own
        assert search_resources(dense) == DenseRetriever().search
    else:  # dense (faiss) search actors
        assert search_resources(dense) == own
        assert search_resources(bm25) == BM25Retriever().retrieve


def test_vector_storage_keys_only_when_set() -> None:
    """`vectors:` came after the first keys: at its default (fp32) it is in neither the
    trial key nor the index key, so they stay what they were; fp16 makes both new."""
    plain, half = DenseRetriever(), DenseRetriever(vectors="fp16")
    assert "vectors" not in plain.identity() and half.identity()["vectors"] == "fp16"
    assert "vectors" not in plain.index_fields()
    assert index_key("rev", plain) != index_key("rev", half)
    assert plain.embedding_fields() == half.embedding_fields()  # one encoding serves both
