"""Retrieval with the real MiniLM model and a real Ray on loopback: dense ranking sanity,
normalization, and the Ray Data pipelines giving the same rankings as the in-process path."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from model_cache import cache_sharing_models

from lasagna import cache
from lasagna.data import load_benchmark
from lasagna.errors import UserError
from lasagna.models.embedders import encode, has_normalize, load_embedder
from lasagna.retrieval.local import build_index_local, search_local
from lasagna.retrieval.searcher import Searcher
from lasagna.stages.actors import threads_per_actor
from lasagna.stages.retrieval import ensure_index, retrieval_dataset
from lasagna.systems import BM25Retriever, DenseRetriever, HybridRetriever, StageResources

pytestmark = pytest.mark.slow
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROWS = [
    ("q1", "Which animal barks at strangers?", "Dogs are loyal animals that bark at strangers."),
    ("q2", "What is used for scripting?", "Python is a programming language used for scripting."),
    ("q3", "Why did the market fall?", "The stock market fell sharply on Monday after bad news."),
    ("q4", "Where do pythons live?", "A python is a large snake found in Asia and Africa."),
    ("q5", "What does a cat do on a mat?", "The cat sat on the mat and purred all afternoon."),
    ("q6", "How hot is the sun?", "The surface of the sun is about 5,500 degrees Celsius."),
]
QUESTIONS = [q for _, q, _ in ROWS]


def _write(path, rows) -> None:
    lines = [
        json.dumps({"id": i, "question": q, "answers": ["x"], "contexts": [c]}) for i, q, c in rows
    ]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def benchmark(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache")))
    path = tmp_path / "data.jsonl"
    _write(path, ROWS)
    return load_benchmark(path)


def _gold(benchmark) -> dict[str, str]:
    return {qid: next(iter(j)) for qid, j in benchmark.qrels.items()}


# ---------------------------------------------------------------- model, in process
def test_a_question_is_encoded_the_same_alone_or_with_others():
    from lasagna.models.embedders import encode_queries, rows_independent

    for precision in ("fp32", "bf16"):
        model = load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1, precision=precision)
        # torch fp32 with MKL on Intel CPUs gives a row another result in a batch of another
        # size (rows_independent is False there): the questions then go one per pass
        if not rows_independent(model):
            print(f"{precision}: rows depend on the batch's row count here")
        together = encode_queries(model, QUESTIONS, batch_size=4)
        alone = np.concatenate([encode_queries(model, [q], 4) for q in QUESTIONS])
        assert np.array_equal(together, alone), precision


def test_minilm_normalization_follows_model_or_is_forced():
    model = load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1)
    assert has_normalize(model)
    norms = np.linalg.norm(encode(model, ["hello world", "a b c"]), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)
    raw = load_embedder("packaged:all-MiniLM-L6-v2", num_threads=1, normalize=False)
    assert not has_normalize(raw)
    assert not np.allclose(np.linalg.norm(encode(raw, ["hello world"]), axis=1), 1.0)


def test_dense_ranks_each_questions_passage_first(benchmark):
    rankings = search_local(benchmark, DenseRetriever(top_k=3), QUESTIONS, num_threads=1)
    gold = _gold(benchmark)
    assert [r[0][0] for r in rankings] == [gold[i] for i, _, _ in ROWS]
    assert all(len(r) == 3 for r in rankings)


def test_instruction_prefixes_reach_the_encoder_and_only_the_documents_key_the_index(benchmark):
    """e5 / bge-style models are trained with "query: " / "passage: " before the texts."""
    from lasagna.retrieval.store import read_embeddings

    plain = DenseRetriever(top_k=6)
    prefixed = DenseRetriever(top_k=6, document_prefix="passage: ")
    asked = prefixed.model_copy(update={"query_prefix": "query: "})
    built = build_index_local(benchmark, prefixed, num_threads=1)
    assert build_index_local(benchmark, asked, num_threads=1) == built  # same documents
    assert build_index_local(benchmark, plain, num_threads=1) != built
    emb_dir = cache.index.embeddings_dir(benchmark.index_revision, prefixed)
    ids, stored = read_embeddings(emb_dir)
    docs = {d.id: d for d in benchmark.corpus.values()}
    model = load_embedder(
        prefixed.model, "cpu", 1, precision=prefixed.precision, backend=prefixed.backend
    )
    expected = encode(model, ["passage: " + docs[i].indexed_text for i in ids])
    np.testing.assert_allclose(stored, expected, atol=2e-2)  # the prefix was encoded
    unprefixed = encode(model, [docs[i].indexed_text for i in ids])
    assert np.abs(np.asarray(stored) - unprefixed).max() > 0.05
    # the query prefix: the same as writing it into every question
    by_config = search_local(benchmark, asked, QUESTIONS, num_threads=1)
    by_hand = search_local(benchmark, prefixed, ["query: " + q for q in QUESTIONS], num_threads=1)
    assert by_config == by_hand
    assert by_config != search_local(benchmark, prefixed, QUESTIONS, num_threads=1)


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_approximate_indexes_run_on_real_embeddings(benchmark, kind):
    cfg = DenseRetriever(index=kind, nlist=1, top_k=2)
    rankings = search_local(benchmark, cfg, QUESTIONS, num_threads=1)
    gold = _gold(benchmark)
    assert [r[0][0] for r in rankings] == [gold[i] for i, _, _ in ROWS]


def test_index_is_reused_and_an_edited_file_gets_a_new_one(benchmark, tmp_path):
    cfg = BM25Retriever()
    first = build_index_local(benchmark, cfg)
    assert build_index_local(benchmark, BM25Retriever(top_k=3)) == first  # top_k: same index
    assert build_index_local(benchmark, BM25Retriever(k1=2.0)) != first
    edited = tmp_path / "edited.jsonl"
    _write(edited, [*ROWS[:-1], ("q6", "How hot is the sun?", "The sun is very hot indeed.")])
    new = load_benchmark(edited)
    assert new.revision != benchmark.revision
    second = build_index_local(new, cfg)
    assert second != first
    ids = Searcher(second, cfg).search(["sun hot"])[0]
    assert ids[0][0] in new.corpus and ids[0][0] not in benchmark.corpus


def test_missing_model_refused_before_any_index_is_written(benchmark):
    with pytest.raises(UserError, match="does not exist"):
        build_index_local(benchmark, DenseRetriever(model="./no/such/model"))
    assert not (cache.cache_root() / "indexes").exists()
    assert not (cache.cache_root() / "embeddings").exists()


# ---------------------------------------------------------------- Ray pipelines
def test_threads_per_actor_splits_the_cpus():
    assert threads_per_actor(2, 1) == 2
    assert threads_per_actor(2, 2) == 1
    assert threads_per_actor(2, 4) == 1
    assert threads_per_actor(16, 2, override=3) == 3


def _ray_rankings(ray, benchmark, cfg):
    items = [{"id": i, "question": q, "extra": n} for n, (i, q, _) in enumerate(ROWS)]
    out = retrieval_dataset(ray.data.from_items(items), benchmark, cfg).take_all()
    assert sorted(r["id"] for r in out) == sorted(i for i, _, _ in ROWS)
    assert all(r["extra"] == ROWS.index(next(x for x in ROWS if x[0] == r["id"])) for r in out)
    return {r["id"]: list(zip(r["doc_ids"], r["scores"], strict=True)) for r in out}


@pytest.mark.parametrize(
    "cfg",
    [
        BM25Retriever(top_k=4),
        DenseRetriever(top_k=4, precision="bf16", encode=StageResources(actors=2, batch_size=2)),
        HybridRetriever(retrievers=(BM25Retriever(), DenseRetriever()), top_k=4),
    ],
    ids=["bm25", "dense-bf16-2-actors", "hybrid"],
)
def test_ray_pipeline_matches_in_process(ray_local, benchmark, cfg, tmp_path, monkeypatch):
    """The same rows, scores to the last bit, in any precision: the corpus is encoded in the
    batches of its plan by 2 actors on Ray and by one model here, and each question's vector
    and scores do not depend on the questions searched with it."""
    got = _ray_rankings(ray_local, benchmark, cfg)
    ray_index = ensure_index(benchmark, cfg, progress=False)  # now a cache hit
    assert ray_index.is_dir()
    local = cache_sharing_models(tmp_path / "local-cache")  # rebuild in process
    monkeypatch.setenv("LASAGNA_CACHE", str(local))
    expected = search_local(benchmark, cfg, QUESTIONS, num_threads=1)
    for (qid, _, _), want in zip(ROWS, expected, strict=True):
        assert got[qid] == want, qid
    gold = _gold(benchmark)
    if isinstance(cfg, DenseRetriever):  # BM25 needs shared words; dense finds them all
        assert all(got[qid][0][0] == gold[qid] for qid in gold)
