"""Big-corpus building blocks without models or Ray: the automatic IVF/HNSW parameters and
memory-mapped corpus embeddings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lasagna.cache.index import embeddings_dir
from lasagna.data.model import Document
from lasagna.retrieval import ann, dense
from lasagna.retrieval.checkpoint import partial_dir
from lasagna.retrieval.dense import PARAMS_FILE, DenseIndex
from lasagna.retrieval.store import (
    ensure_embeddings,
    gather_embeddings,
    read_embeddings,
    write_embeddings,
)
from lasagna.systems import DenseRetriever


def _unit_vectors(n: int, d: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# ---------------------------------------------------------------- automatic parameters
@pytest.mark.parametrize(
    ("n", "nlist", "nprobe"),
    [
        (10, 1, 1),  # tiny: one list, probed whole
        (5_183, 132, 23),  # SciFact: n/39 caps 4*sqrt(n)=287; 2*sqrt(132)=22.98 -> 23
        (10_000, 256, 32),
        (100_000, 1_264, 72),
        (1_000_000, 4_000, 127),
        (10**10, 65_536, 512),
    ],
)
def test_ivf_rule_follows_corpus_size(n, nlist, nprobe):
    params = ann.build_params("ivf", n)
    assert params.nlist == nlist == ann.default_nlist(n)
    assert params.train_points == min(n, 64 * nlist)
    assert ann.default_nprobe(nlist) == nprobe


def test_hnsw_rule_and_explicit_values_win():
    auto = ann.build_params("hnsw", 1_000_000)
    assert (auto.hnsw_m, auto.ef_construction) == (32, 80)
    mine = ann.build_params("hnsw", 1_000_000, hnsw_m=8, ef_construction=200)
    assert (mine.hnsw_m, mine.ef_construction) == (8, 200)
    assert ann.build_params("ivf", 1_000_000, nlist=50).nlist == 50
    assert ann.default_ef_search(116) == 232 and ann.default_ef_search(5) == 64
    assert ann.build_params("flat", 7).to_json() == {"kind": "flat", "n": 7}


def test_built_index_uses_and_records_the_rule(tmp_path):
    x = _unit_vectors(2_000, 16)
    ids = [f"d{i}" for i in range(2_000)]
    ivf = DenseIndex.build(ids, x, "ivf")
    assert ivf.index.nlist == ann.default_nlist(2_000) == 51
    assert ivf.search_params(10) == {"nprobe": ann.default_nprobe(51)}  # not faiss' 1
    ivf.set_search_params(nprobe=3)  # explicit wins
    assert ivf.search_params(10) == {"nprobe": 3}
    ivf.save(tmp_path / "ivf")
    recorded = json.loads((tmp_path / "ivf" / PARAMS_FILE).read_text())
    assert recorded == {"kind": "ivf", "n": 2_000, "nlist": 51, "train_points": 2_000}
    assert DenseIndex.load(tmp_path / "ivf").search_params(10) == {"nprobe": 16}

    hnsw = DenseIndex.build(ids, x, "hnsw")
    assert hnsw.index.hnsw.efConstruction == 80
    assert hnsw.search_params(100) == {"ef_search": 232}  # 2 * (100 + 16)
    hnsw.set_search_params(ef_search=500)
    assert hnsw.search_params(100) == {"ef_search": 500}
    hnsw.set_search_params(ef_search=10)  # never below what the search must fetch
    assert hnsw.search_params(100) == {"ef_search": 116}


# ---------------------------------------------------------------- streamed embeddings
def _shuffled_batches(x: np.ndarray, size: int, seed: int = 1):
    """x's rows in batches of `size`, batches in a random order (as Ray delivers them)."""
    starts = list(range(0, len(x), size))
    np.random.default_rng(seed).shuffle(starts)
    for s in starts:
        rows = np.arange(s, min(len(x), s + size))
        yield rows, x[rows]


def test_streamed_embeddings_are_memory_mapped_and_equal(tmp_path):
    x = _unit_vectors(1_000, 8)
    ids = [f"d{i}" for i in range(1_000)]
    write_embeddings(tmp_path, ids, _shuffled_batches(x, 64))
    got_ids, got = read_embeddings(tmp_path)
    assert isinstance(got, np.memmap) and not got.flags.writeable
    assert got_ids == ids
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(gather_embeddings(1_000, _shuffled_batches(x, 64)), x)


@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_index_from_memmap_equals_index_from_memory(kind, tmp_path, monkeypatch):
    monkeypatch.setattr(dense, "ADD_ROWS", 300)  # several slices, the last one partial
    x = _unit_vectors(1_000, 8)
    ids = [f"d{i}" for i in range(1_000)]
    write_embeddings(tmp_path, ids, _shuffled_batches(x, 64))
    _, mapped = read_embeddings(tmp_path)
    q = _unit_vectors(50, 8, seed=2)
    from_disk = DenseIndex.build(ids, mapped, kind).search(q, 10)
    from_memory = DenseIndex.build(ids, x.copy(), kind).search(q, 10)
    assert from_disk == from_memory


def test_a_missing_batch_leaves_no_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    docs = [Document(f"d{i}", f"text {i}") for i in range(10)]
    x = _unit_vectors(10, 4)

    def lossy(ids, texts, done):  # drops the last batch
        yield np.arange(0, 5), x[:5]

    with pytest.raises(RuntimeError, match="5 of 10 documents"):
        ensure_embeddings("r" * 64, docs, DenseRetriever(), lossy)
    entry = embeddings_dir("r" * 64, DenseRetriever())
    assert not entry.exists()  # no entry; the 5 rows that came are kept for the next build
    assert np.load(partial_dir(entry) / "done.npy").sum() == 5
    asked = []

    def whole(ids, texts, done):
        asked.append(done)
        yield from _shuffled_batches(x, 3)

    path = ensure_embeddings("r" * 64, docs, DenseRetriever(), whole)
    np.testing.assert_array_equal(read_embeddings(path)[1], x)
    assert asked[0].tolist() == [True] * 5 + [False] * 5
    assert not partial_dir(entry).exists() and path == entry
