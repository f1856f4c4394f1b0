"""Retrieval building blocks without models or Ray: ranking order, BM25, faiss indexes,
RRF, the index cache, and embedder name resolution."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from lasagna import cache
from lasagna.cache import index as index_cache
from lasagna.data.model import Document
from lasagna.errors import UserError
from lasagna.models.embedders import resolve_embedder
from lasagna.retrieval.bm25 import BM25Index
from lasagna.retrieval.dense import DenseIndex, default_nlist
from lasagna.retrieval.hybrid import fuse_rrf
from lasagna.retrieval.ranking import rank_candidates, top_k
from lasagna.systems import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    StageResources,
)

DOCS = [
    Document("d1", "The cat sat on the mat and purred.", title="Cats"),
    Document("d2", "Dogs are loyal animals that bark at strangers.", title="Dogs"),
    Document("d3", "The stock market fell sharply on Monday.", title="Markets"),
    Document("d4", "Python is a programming language used for scripting."),
    Document("d5", "A python is a large snake found in Asia and Africa."),
]


# ---------------------------------------------------------------- ranking
def test_rank_candidates_breaks_ties_by_doc_id_descending():
    ranked = rank_candidates(["a", "c", "b", "d"], [1.0, 2.0, 2.0, 0.5], k=3)
    assert ranked == [("c", 2.0), ("b", 2.0), ("a", 1.0)]


def test_top_k_sees_every_tie_at_the_cut():
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1])
    ids = ["a", "b", "c", "d", "e"]
    # three docs tie at 0.5 for the last two places: the largest ids win
    assert top_k(scores, ids, 3) == [("b", 0.9), ("d", 0.5), ("c", 0.5)]
    assert top_k(scores, ids, 10, min_score=0.3) == [
        ("b", 0.9),
        ("d", 0.5),
        ("c", 0.5),
        ("a", 0.5),
    ]


@pytest.mark.parametrize("min_score", [None, 0.0, 0.5])
def test_top_k_equals_sorting_everything(min_score):
    """Mostly zeros and many ties, as BM25 scores are: the same as a full sort."""
    rng = np.random.default_rng(3)
    for n, k in [(1, 1), (50, 10), (400, 100), (400, 500), (1000, 7)]:
        scores = rng.choice([0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0], size=n) * rng.choice(
            [1.0, 1.0, 2.0], size=n
        )
        ids = [f"d{i:04d}" for i in range(n)]
        kept = [(i, s) for i, s in zip(ids, scores.tolist(), strict=True)]
        if min_score is not None:
            kept = [p for p in kept if p[1] > min_score]
        want = sorted(kept, key=lambda p: (-p[1], tuple(-ord(c) for c in p[0])))[:k]
        assert top_k(scores, ids, k, min_score=min_score) == want


# ---------------------------------------------------------------- BM25
def test_bm25_ranks_the_matching_document_first_and_skips_non_matches(tmp_path):
    index = BM25Index.build(DOCS, BM25Retriever())
    ranked = index.search(["barking dog", "programming language", "zebra"], k=5)
    assert ranked[0][0][0] == "d2"  # stemming: barking -> bark, dog(s) -> dog
    assert [d for d, _ in ranked[0]] == ["d2"]  # nothing else matches
    assert ranked[1][0][0] == "d4"
    assert ranked[2] == []  # no query term in the corpus
    scores = [s for _, s in ranked[1]]
    assert scores == sorted(scores, reverse=True)


def test_bm25_title_is_indexed_and_save_load_round_trips(tmp_path):
    cfg = BM25Retriever()
    index = BM25Index.build(DOCS, cfg)
    assert index.search(["markets"], k=1)[0][0][0] == "d3"  # only in d3's title
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25", cfg)
    queries = ["python snake", "cat mat"]
    assert loaded.search(queries, k=3) == index.search(queries, k=3)


def test_bm25_ties_come_out_by_doc_id_descending():
    docs = [Document(i, "same words here") for i in ("x1", "x3", "x2")]
    ranked = BM25Index.build(docs, BM25Retriever(stopwords=None)).search(["words"], k=3)
    assert [d for d, _ in ranked[0]] == ["x3", "x2", "x1"]


def test_bm25_stemmer_and_stopwords_change_matching():
    plain = BM25Index.build(DOCS, BM25Retriever(stemmer=None))
    assert plain.search(["barking"], k=5) == [[]]  # no stemming: 'barking' != 'bark'
    no_stop = BM25Index.build(DOCS, BM25Retriever(stopwords=None, stemmer=None))
    assert {d for d, _ in no_stop.search(["the"], k=5)[0]} == {"d1", "d3"}
    assert BM25Index.build(DOCS, BM25Retriever()).search(["the"], k=5) == [[]]


def test_bm25_unknown_stemmer_is_a_user_error():
    with pytest.raises(ValueError, match="unknown stemmer language 'klingon'"):
        BM25Retriever(stemmer="klingon")  # refused when the sweep is read
    with pytest.raises(UserError, match="stemmer"):  # a config built around validation
        BM25Index.build(DOCS, BM25Retriever.model_construct(stemmer="klingon"))


# ---------------------------------------------------------------- dense index
def _unit_vectors(n: int, d: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("vectors", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_dense_index_finds_each_vector_itself(kind, vectors, tmp_path):
    x = _unit_vectors(600, 16)
    ids = [f"d{i:04d}" for i in range(600)]
    index = DenseIndex.build(ids, x, kind, vectors=vectors)
    index.set_search_params(nprobe=default_nlist(600))  # IVF: probe every list -> exact
    index.save(tmp_path / kind)
    loaded = DenseIndex.load(tmp_path / kind)
    loaded.set_search_params(nprobe=default_nlist(600))
    got_ids, got_scores = loaded.search(x[:20], k=5)
    assert [r[0] for r in got_ids] == ids[:20]
    exact = x[:20] @ x.T
    tolerance = {"fp32": 1e-5, "fp16": 1e-3, "bf16": 1e-2}[vectors]  # 11 / 8 mantissa bits
    for q in range(20):
        assert got_scores[q] == sorted(got_scores[q], reverse=True)
        best = np.sort(exact[q])[::-1][:5]
        assert np.allclose(got_scores[q], best, atol=tolerance)


def test_half_precision_vectors_halve_the_index(tmp_path):
    x = _unit_vectors(2000, 64)
    ids = [f"d{i:04d}" for i in range(2000)]
    size = {}
    for vectors in ("fp32", "fp16", "bf16"):
        DenseIndex.build(ids, x, vectors=vectors).save(tmp_path / vectors)
        size[vectors] = (tmp_path / vectors / "index.faiss").stat().st_size
    assert size["fp16"] == size["bf16"] and abs(size["fp16"] / size["fp32"] - 0.5) < 0.01
    with pytest.raises(ValueError, match="unknown vector storage"):
        DenseIndex.build(ids, x, vectors="int4")


def test_dense_ties_by_doc_id_descending_and_k_beyond_corpus():
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    index = DenseIndex.build(["a", "c", "b"], x)
    ids, scores = index.search(np.array([[1.0, 0.0]], dtype=np.float32), k=10)
    assert ids == [["c", "a", "b"]]
    assert scores[0][:2] == [1.0, 1.0]


def test_default_nlist_stays_trainable():
    assert default_nlist(10) == 1
    assert default_nlist(5183) == 132  # min(4*sqrt(n)=287, n/39=132)
    assert default_nlist(10_000_000) == 12649


def test_a_tiny_ivf_corpus_builds_quietly_and_the_same(capfd):
    """Below 39 documents the rule gives 1 list, and faiss printed `WARNING clustering 12
    points to 1 centroids` into the run's output; the index is what it was."""
    import faiss

    x = np.random.RandomState(0).randn(12, 8).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids = [f"d{i}" for i in range(12)]
    index = DenseIndex.build(ids, x, kind="ivf")
    assert "WARNING clustering" not in capfd.readouterr().err
    plain = faiss.IndexIVFFlat(faiss.IndexFlatIP(8), 8, 1, faiss.METRIC_INNER_PRODUCT)
    plain.cp.seed = 0
    plain.train(x)
    plain.add(x)
    assert "WARNING clustering" in capfd.readouterr().err  # faiss's own default
    plain.nprobe = 1
    _, want = plain.search(x[:3], 5)
    got, _ = index.search(x[:3], k=5)
    assert got == [[ids[j] for j in row] for row in want]
    DenseIndex.build(ids, x, kind="ivf", nlist=4)  # asked for: faiss's warning is kept
    assert "WARNING clustering 12 points to 4 centroids" in capfd.readouterr().err


# ---------------------------------------------------------------- RRF
def test_fuse_rrf_sums_reciprocal_ranks():
    a = [("d1", 9.0), ("d2", 8.0), ("d3", 7.0)]
    b = [("d3", 0.9), ("d1", 0.8)]
    fused = fuse_rrf([a, b], rrf_k=60, top_k=10)
    expected = {
        "d1": 1 / 61 + 1 / 62,
        "d3": 1 / 63 + 1 / 61,
        "d2": 1 / 62,
    }
    assert [d for d, _ in fused] == ["d1", "d3", "d2"]
    for doc, score in fused:
        assert score == pytest.approx(expected[doc], rel=1e-12)


def test_fuse_rrf_ties_and_top_k():
    fused = fuse_rrf([[("a", 1.0)], [("b", 1.0)]], rrf_k=0, top_k=1)
    assert fused == [("b", 1.0)]  # equal fused scores: doc id descending
    assert fuse_rrf([], top_k=5) == []


# ---------------------------------------------------------------- cache keys
REV = "a" * 64


def test_index_key_ignores_what_does_not_change_the_index():
    base = DenseRetriever()
    same = [
        DenseRetriever(top_k=10),
        DenseRetriever(name="mine"),
        DenseRetriever(nprobe=4),
        DenseRetriever(encode=StageResources(actors=2, batch_size=8)),
        DenseRetriever(search=StageResources(num_cpus=1.0)),
    ]
    for cfg in same:
        assert index_cache.index_key(REV, cfg) == index_cache.index_key(REV, base)
    assert index_cache.index_key(REV, BM25Retriever(top_k=5)) == index_cache.index_key(
        REV, BM25Retriever()
    )


def test_index_key_changes_with_revision_and_index_config():
    assert index_cache.index_key(REV, BM25Retriever()) != index_cache.index_key(
        "b" * 64, BM25Retriever()
    )
    for cfg in [BM25Retriever(k1=1.2), BM25Retriever(stemmer=None), BM25Retriever(b=0.4)]:
        assert index_cache.index_key(REV, cfg) != index_cache.index_key(REV, BM25Retriever())
    for cfg in [DenseRetriever(index="hnsw"), DenseRetriever(normalize=False)]:
        assert index_cache.index_key(REV, cfg) != index_cache.index_key(REV, DenseRetriever())
    hyb = HybridRetriever(retrievers=(BM25Retriever(), DenseRetriever()))
    hyb2 = HybridRetriever(retrievers=(BM25Retriever(k1=2.0), DenseRetriever()))
    assert index_cache.index_key(REV, hyb) != index_cache.index_key(REV, hyb2)
    # flat and HNSW share corpus embeddings; a new model does not
    assert index_cache.embeddings_key(
        REV, DenseRetriever(index="hnsw")
    ) == index_cache.embeddings_key(REV, DenseRetriever())
    assert index_cache.embeddings_key(
        REV, DenseRetriever(model="/m")
    ) != index_cache.embeddings_key(REV, DenseRetriever())


def test_cache_root_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    assert cache.cache_root() == tmp_path
    assert index_cache.index_dir(REV, BM25Retriever()).is_relative_to(tmp_path)
    monkeypatch.delenv("LASAGNA_CACHE")
    assert cache.cache_root() == Path.home() / ".cache" / "lasagna"


# ---------------------------------------------------------------- atomic writes
def test_build_atomically_builds_once_then_hits(tmp_path):
    calls = []

    def build(tmp: Path) -> None:
        calls.append(tmp)
        (tmp / "data.txt").write_text("ok")

    final = tmp_path / "entry"
    assert cache.build_atomically(final, build) == final
    assert cache.build_atomically(final, build) == final
    assert len(calls) == 1
    assert (final / "data.txt").read_text() == "ok"
    assert [p.name for p in tmp_path.iterdir()] == ["entry"]


def test_build_atomically_failure_leaves_nothing(tmp_path):
    def build(tmp: Path) -> None:
        (tmp / "half.bin").write_bytes(b"x")
        raise RuntimeError("crash mid-build")

    with pytest.raises(RuntimeError, match="crash"):
        cache.build_atomically(tmp_path / "entry", build)
    assert list(tmp_path.iterdir()) == []


def test_build_atomically_concurrent_builders_leave_one_whole_entry(tmp_path):
    final = tmp_path / "entry"
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def build(tmp: Path) -> None:
        barrier.wait()  # everyone is mid-build before anyone renames
        (tmp / "a.txt").write_text(tmp.name)
        (tmp / "b.txt").write_text(tmp.name)

    def worker() -> None:
        try:
            cache.build_atomically(final, build)
        except BaseException as err:  # noqa: BLE001 - collected for the assertion
            errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert (final / "a.txt").read_text() == (final / "b.txt").read_text()  # one builder's
    assert [p.name for p in tmp_path.iterdir()] == ["entry"]


# ---------------------------------------------------------------- embedder names
def test_packaged_embedder_resolves_to_its_folder():
    path = resolve_embedder("packaged:all-MiniLM-L6-v2")
    assert (path / "config.json").is_file()


@pytest.mark.parametrize("name", ["./no/such/model", "/no/such/model", "~/no-such-model-xyz"])
def test_missing_model_path_is_a_user_error(name):
    with pytest.raises(UserError) as err:
        resolve_embedder(name)
    problem = err.value.problems[0]
    assert name in problem.message and problem.field == "model" and problem.fix


def test_uncached_hub_id_offline_is_a_user_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError) as err:
        resolve_embedder("BAAI/bge-small-en-v1.5")
    problem = err.value.problems[0]
    assert "BAAI/bge-small-en-v1.5" in problem.message and "HF_HUB_OFFLINE" in problem.message
    assert "packaged:all-MiniLM-L6-v2" in problem.fix


def test_unknown_packaged_embedder_is_a_user_error():
    with pytest.raises(UserError, match="packaged"):
        resolve_embedder("packaged:nope")
