"""Corpus encoding on a run's embedder pool: every row comes back in its place, every server
works, and the index build streams from the pool (servers that compute a known function of
the text stand in for the model: this tests the dispatch, not MiniLM)."""

from __future__ import annotations

import numpy as np
import pytest
from model_cache import cache_sharing_models

from lasagna.retrieval.batching import plan_encoding
from lasagna.retrieval.store import gather_embeddings
from lasagna.stages.embedding import embedder_key, embedder_threads, stream_on_pool
from lasagna.stages.pools import Pool, Pools
from lasagna.systems import DenseRetriever, StageResources

pytestmark = pytest.mark.slow


def _servers(ray, n: int) -> list:
    """`n` actors that embed the text "17" as [17, server id] and count their calls."""

    class NumberServer:  # local, so Ray ships it by value (the tests folder is not on its path)
        def __init__(self, server_id: int):
            self.server_id = server_id
            self.calls = 0

        def encode_batches(self, batches: list[list[str]]) -> np.ndarray:
            """[value, server, sum of the batch's values]: the last says who its neighbours
            were."""
            self.calls += 1
            return np.array(
                [[float(t), self.server_id, sum(map(float, b))] for b in batches for t in b],
                dtype=np.float32,
            )

        def count(self) -> int:
            return self.calls

    remote = ray.remote(NumberServer).options(num_cpus=0.01)
    return [remote.remote(i) for i in range(n)]


def _plan(texts: list[str], batch_size: int):
    return plan_encoding(texts, [len(t) for t in texts], batch_size)


def test_every_row_comes_back_in_its_place_from_every_server(ray_local) -> None:
    servers = _servers(ray_local, 2)
    texts = [str(i) for i in range(203)]  # not a multiple of the batch
    plan = _plan(texts, 8)
    out = gather_embeddings(len(texts), stream_on_pool(Pool(servers, 0.0), texts, plan))
    assert out[:, 0].tolist() == list(range(203))
    calls = ray_local.get([s.count.remote() for s in servers])
    assert all(c > 0 for c in calls) and sum(calls) == -(-203 // 32)  # 4 batches per call
    assert set(out[:, 1].tolist()) == {0.0, 1.0}
    # every document had the plan's neighbours, whichever server encoded it
    one = gather_embeddings(len(texts), stream_on_pool(Pool(servers[:1], 0.0), texts, plan))
    assert out[:, 2].tolist() == one[:, 2].tolist()
    sums = {i: sum(float(texts[j]) for j in b) for b in plan.batches() for i in b}
    assert out[:, 2].tolist() == [sums[i] for i in range(203)]


def test_a_small_corpus_is_split_so_each_server_gets_work(ray_local) -> None:
    servers = _servers(ray_local, 3)
    texts = list("01234")
    out = gather_embeddings(5, stream_on_pool(Pool(servers, 0.0), texts, _plan(texts, 2)))
    assert out[:, 0].tolist() == [0, 1, 2, 3, 4]
    assert sorted(ray_local.get([s.count.remote() for s in servers])) == [1, 1, 1]


def test_the_index_build_streams_from_the_runs_pool(ray_local, tmp_path, monkeypatch) -> None:
    """ensure_index with the run's pools encodes on the pooled servers (no model loads)."""
    from lasagna.data import load_benchmark
    from lasagna.retrieval.store import read_embeddings
    from lasagna.stages.retrieval import ensure_index

    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache")))
    data = tmp_path / "numbers.jsonl"
    data.write_text(
        "".join(f'{{"id": "q{i}", "question": "q", "contexts": ["{i}"]}}\n' for i in range(40))
    )
    bench = load_benchmark(data)
    cfg = DenseRetriever(index="flat", encode=StageResources(batch_size=4, actors=2))
    pools = Pools()
    pools.pools[embedder_key(cfg, embedder_threads(cfg))] = Pool(_servers(ray_local, 2), 0.0)
    path = ensure_index(bench, cfg, progress=False, pools=pools)
    assert path.is_dir()
    emb_dirs = list((tmp_path / "cache" / "embeddings").iterdir())
    ids, emb = read_embeddings(emb_dirs[0])
    docs = {d.id: d.text for d in bench.corpus.values()}
    assert [float(docs[i]) for i in ids] == emb[:, 0].tolist()
    assert pools.built == []  # nothing was loaded: the run's pool served it
