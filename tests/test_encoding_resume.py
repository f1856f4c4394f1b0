"""An interrupted corpus encoding is taken up where it stopped, with the same vectors: the
plan less its finished batches, the checkpoint beside the cache entry, and the packaged
MiniLM interrupted and resumed in this process and on Ray."""

from __future__ import annotations

import numpy as np
import pytest

from lasagna.cache.index import embeddings_dir
from lasagna.data.model import Document
from lasagna.retrieval.batching import plan_encoding
from lasagna.retrieval.checkpoint import EncodingCheckpoint, partial_dir
from lasagna.retrieval.store import ensure_embeddings, read_embeddings
from lasagna.systems import DenseRetriever

REVISION = "e" * 64


def test_a_plan_less_its_done_batches_cuts_into_the_same_batches():
    ids = [f"d{i}" for i in range(23)]
    plan = plan_encoding(ids, [i % 7 for i in range(23)], batch_size=5)
    batches = [b.tolist() for b in plan.batches()]
    done = np.zeros(23, dtype=bool)
    for i in (0, 2, 4):  # the first, a middle one and the last (short) batch
        done[batches[i]] = True
    done[batches[1][0]] = True  # one row of a batch: that batch is encoded again, whole
    left = plan.without(done)
    assert [b.tolist() for b in left.batches()] == [batches[1], batches[3]]
    assert plan.without(None) is plan and plan.without(np.zeros(23, dtype=bool)) is plan
    assert len(plan.without(np.ones(23, dtype=bool))) == 0


def test_one_builder_keeps_a_checkpoint_and_a_changed_corpus_starts_over(tmp_path):
    entry = tmp_path / "entry"
    ids = ["a", "b", "c", "d"]
    with EncodingCheckpoint.open(entry, ids, batch_size=2) as first:
        assert EncodingCheckpoint.open(entry, ids, batch_size=2) is None  # held
        first.write(np.array([0, 1]), np.ones((2, 3), dtype=np.float32))
    with EncodingCheckpoint.open(entry, ids, batch_size=2) as again:
        assert again.kept == 2 and again.done.tolist() == [True, True, False, False]
    with EncodingCheckpoint.open(entry, ids, batch_size=4) as other:  # other batches
        assert other.kept == 0
    with EncodingCheckpoint.open(entry, ["a", "b", "c", "e"], batch_size=4) as edited:
        assert edited.kept == 0
    with EncodingCheckpoint.open(entry, ["x"], batch_size=1):
        pass  # nothing written (the encoder failed at once): nothing left behind
    assert not partial_dir(entry).exists()
    with EncodingCheckpoint.open(entry, ids, batch_size=2) as kept:
        kept.write(np.array([0, 1]), np.ones((2, 3), dtype=np.float32))
    (partial_dir(entry) / "done.npy").write_bytes(b"damaged")
    with EncodingCheckpoint.open(entry, ["a", "b", "c", "e"], batch_size=4) as damaged:
        assert damaged.kept == 0


def test_a_concurrent_builder_encodes_without_a_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    docs = [Document(f"d{i}", f"text {i}") for i in range(4)]
    cfg = DenseRetriever()
    x = np.arange(8, dtype=np.float32).reshape(4, 2)

    def encode(ids, texts, done):
        assert done is None  # nothing to skip without the checkpoint
        yield np.arange(4), x

    entry = embeddings_dir(REVISION, cfg)
    with EncodingCheckpoint.open(entry, [d.id for d in docs], cfg.encode.batch_size):
        path = ensure_embeddings(REVISION, docs, cfg, encode)
    np.testing.assert_array_equal(read_embeddings(path)[1], x)


def _interrupted(encoder_for, chunks: int):
    """The encoder, stopped by Ctrl-C after `chunks` embedded chunks."""

    def encoder(cfg):
        encode = encoder_for(cfg)

        def run(ids, texts, done):
            for i, item in enumerate(encode(ids, texts, done)):
                yield item
                if i + 1 == chunks:
                    raise KeyboardInterrupt

        return run

    return encoder


def _recorded(encoder_for, asked: list):
    def encoder(cfg):
        encode = encoder_for(cfg)

        def run(ids, texts, done):
            asked.append(0 if done is None else int(done.sum()))
            for rows, emb in encode(ids, texts, done):
                asked.append(len(rows))
                yield rows, emb

        return run

    return encoder


def _resume_equals_fresh(tmp_path, monkeypatch, encoder_for) -> list:
    from lasagna.retrieval.store import ensure_retriever

    docs = [
        Document(f"p{i:02d}", f"passage {i} about {'glass ' * (i % 9)}coins") for i in range(40)
    ]
    cfg = DenseRetriever(encode={"batch_size": 4})
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "resumed"))
    with pytest.raises(KeyboardInterrupt):
        ensure_retriever(REVISION, docs, cfg, _interrupted(encoder_for, chunks=2))
    entry = embeddings_dir(REVISION, cfg)
    assert not entry.exists() and partial_dir(entry).is_dir()
    asked: list = []
    ensure_retriever(REVISION, docs, cfg, _recorded(encoder_for, asked))
    resumed = read_embeddings(entry)
    assert not partial_dir(entry).exists()
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "fresh"))
    ensure_retriever(REVISION, docs, cfg, encoder_for)
    fresh = read_embeddings(embeddings_dir(REVISION, cfg))
    assert resumed[0] == fresh[0]
    assert np.asarray(resumed[1]).tobytes() == np.asarray(fresh[1]).tobytes()  # same bytes
    return asked


@pytest.mark.slow
def test_the_packaged_embedder_resumes_in_this_process(tmp_path, monkeypatch):
    from lasagna.retrieval import local

    monkeypatch.setattr(local, "LOCAL_CHUNK", 8)  # two batches of 4 per chunk
    asked = _resume_equals_fresh(tmp_path, monkeypatch, local.local_encoder_for(1))
    assert asked[0] == 16 and sum(asked[1:]) == 24  # 2 chunks of 8 kept, 24 rows encoded


@pytest.mark.slow
def test_the_packaged_embedder_resumes_on_ray(ray_local, tmp_path, monkeypatch, capsys):
    from lasagna.stages import embedding
    from lasagna.stages.retrieval import ray_encoder_for

    monkeypatch.setattr(embedding, "CHUNK_BATCHES", 1)  # one batch of 4 per call
    asked = _resume_equals_fresh(tmp_path, monkeypatch, ray_encoder_for(threads=1))
    assert asked[0] == 8 and sum(asked[1:]) == 32
    assert "8 of 40 passages kept from an interrupted encoding" in capsys.readouterr().err


def test_the_interrupted_line_names_the_encoding_it_keeps(tmp_path, monkeypatch):
    from lasagna.cli.interrupted import interrupted_message
    from lasagna.sample import sample_path
    from lasagna.sweep import build_plan
    from lasagna.sweep.profiles import sweep_for_path

    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "cache"))
    sweep, base = sweep_for_path(sample_path(), "speed", output=str(tmp_path / "out"))
    plan = build_plan(sweep, base)
    argv = ["benchmark", "run", "sample.jsonl"]
    assert "encoded" not in interrupted_message(plan, argv)
    dense = next(t for t in plan.trials if t.system.kind == "dense")
    corpus = plan.benchmarks[0].benchmark
    entry = embeddings_dir(corpus.index_revision, dense.system)
    ids = list(corpus.corpus)
    with EncodingCheckpoint.open(entry, ids, dense.system.encode.batch_size) as kept:
        kept.write(np.arange(5), np.ones((5, 4), dtype=np.float32))
    said = interrupted_message(plan, argv)
    assert f"out, and 5 of {len(ids)} passages encoded for dense:all-MiniLM-L6-v2; to go" in said
