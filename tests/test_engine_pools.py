"""Heavy pools: one engine per key for the whole run, closed once no trial needs it."""

from __future__ import annotations

import time

import pytest

from lasagna.stages.pools import Pools, engine_key
from lasagna.systems import ModelSpec


def test_engine_key_ignores_sampling_but_not_the_engine() -> None:
    base = engine_key(ModelSpec(), threads=2)
    assert engine_key(ModelSpec(temperature=0.7, max_tokens=9, seed=3), threads=2) == base
    assert engine_key(ModelSpec(max_model_len=4096), threads=2) != base
    assert engine_key(ModelSpec(resources={"actors": 2}), threads=2) != base
    assert engine_key(ModelSpec(), threads=1) != base


@pytest.mark.slow
def test_pools_build_once_and_close_what_no_trial_needs(ray_local) -> None:
    ray = ray_local

    class Server:  # local, so Ray ships it by value (the tests folder is not on its path)
        """The smallest actor with a pool server's two calls (no model: the bookkeeping)."""

        def ready(self) -> float:
            return 0.25

        def close(self) -> None:
            return None

    made = []

    def start():
        made.append(ray.remote(Server).options(num_cpus=0.01).remote())
        return [made[-1]]

    pools = Pools()
    first, built = pools.get("a", start)
    again, built_again = pools.get("a", start)
    assert built and not built_again and again is first and len(made) == 1
    assert first.load_s == 0.25
    pools.get("b", start)
    pools.keep_only(["b"])
    assert list(pools.pools) == ["b"]
    deadline = time.monotonic() + 60  # ray.kill is asynchronous: the server dies soon after
    while time.monotonic() < deadline:
        try:
            ray.get(made[0].ready.remote(), timeout=10)
        except ray.exceptions.RayActorError:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the dropped pool's server is still alive")
    pools.close()
    assert not pools.pools


def test_embedder_key_is_the_vectors_identity_and_placement_not_the_index() -> None:
    """Two dense retrievers that differ only in index, top_k or search knobs share one
    loaded embedder; anything that changes the vectors or where they run does not."""
    from lasagna.stages.embedding import embedder_key
    from lasagna.systems import DenseRetriever, StageResources

    base = embedder_key(DenseRetriever(), threads=2)
    same = DenseRetriever(index="hnsw", top_k=5, nprobe=4, search=StageResources(actors=3))
    assert embedder_key(same, threads=2) == base
    assert embedder_key(DenseRetriever(normalize=False), threads=2) != base
    assert embedder_key(DenseRetriever(max_seq_length=128), threads=2) != base
    assert embedder_key(DenseRetriever(encode=StageResources(actors=2)), threads=2) != base
    assert embedder_key(DenseRetriever(), threads=1) != base


@pytest.mark.slow
def test_a_model_that_cannot_load_fails_once_in_one_line(ray_local, tmp_path) -> None:
    """A folder that is not a model (it exists, so no check before the load can tell): the
    shared server keeps its load error and stays alive (Ray neither restarts it nor prints
    its creation's traceback), callers receive the error itself, and the pool is not
    started again for the next caller."""
    from lasagna.stages.actors import get_remote
    from lasagna.stages.model_server import ModelLoadError
    from lasagna.stages.pools import start_model_servers

    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    spec = ModelSpec(model=str(folder), backend="transformers").model_copy(
        update={"resources": ModelSpec().resources.model_copy(update={"num_cpus": 0.1})}
    )
    made: list = []

    def start():
        made.extend(start_model_servers(spec, 1, 0.0, shared=True))
        return made[-1:]

    pools = Pools()
    with pytest.raises(ray_local.exceptions.RayTaskError) as first:
        pools.get("m", start)
    assert "ModelLoadError: model" in str(first.value) and str(folder) in str(first.value)
    with pytest.raises(ray_local.exceptions.RayTaskError):
        pools.get("m", start)
    assert len(made) == 1  # asked twice, started once
    server = start_model_servers(spec, 1, 0.0, shared=True)[0]
    for _ in range(2):  # the same error each time, from a live actor
        with pytest.raises(ModelLoadError, match="failed to load: ValueError: "):
            get_remote(server.ready.remote())
    ray_local.kill(server)
    pools.close()
