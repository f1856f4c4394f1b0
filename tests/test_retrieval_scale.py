"""Big-corpus building blocks without models or Ray: the automatic IVF/HNSW parameters and
memory-mapped corpus embeddings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lasagna.retrieval import ann
from lasagna.retrieval.dense import PARAMS_FILE, DenseIndex


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
