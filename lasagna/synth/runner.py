"""Where the calls run: local models on vLLM in a pool of the chat-model servers every run
uses (lasagna.stages.model_server.ModelServer), API models in-process.

The servers hold one engine each for both phases (writing, then checking), so the model
loads once per server. On a cluster with GPUs the pool has one server per
`tensor_parallel_size` GPUs; on CPUs one server gets every CPU's threads.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager

from lasagna.models.base import ChatRequest, Completion
from lasagna.models.call_cache import model_calls, with_call_cache
from lasagna.models.packaged import API_BACKENDS, resolve_generator_model
from lasagna.models.registry import create_chat_model
from lasagna.synth.generate import Complete
from lasagna.systems import ModelSpec


def _batches(requests: list[ChatRequest], size: int) -> list[list[ChatRequest]]:
    return [requests[i : i + size] for i in range(0, len(requests), size)]


def _progress():
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    return Progress(
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def _pool_size(spec: ModelSpec, cluster_gpus: float) -> int:
    if cluster_gpus >= 1:
        return max(1, int(cluster_gpus // max(1, spec.tensor_parallel_size)))
    return spec.resources.actors


@contextmanager
def ray_complete(
    spec: ModelSpec, address: str | None = None, call_cache: str | None = None
) -> Iterator[Complete]:
    """A `complete` function backed by a pool of model servers, for the life of the block."""
    from lasagna.engine.ray_session import ray_session
    from lasagna.models.gpus import engine_gpus
    from lasagna.stages.model_server import RemoteModel
    from lasagna.stages.pools import Pools, pooled_engine

    resolve_generator_model(spec)  # a bad path fails here; the packaged model is prepared once
    with ray_session(address) as session:
        cluster_gpus = float(session.resources.get("GPU", 0))
        size = _pool_size(spec, cluster_gpus)
        spec = spec.model_copy(
            update={"resources": spec.resources.model_copy(update={"actors": size})}
        )
        calls = model_calls(call_cache, spec, gpu=bool(engine_gpus(spec, cluster_gpus)))
        pools = Pools()
        try:
            pool = pooled_engine(spec, pools)
            assert pool is not None  # a local model always has a pool
            free: queue.Queue = queue.Queue()
            for server in pool.servers:  # one client per server: a batch each at a time
                free.put(with_call_cache(RemoteModel([server], spec), calls, spec))

            def run(batch: list[ChatRequest]) -> list[Completion]:
                client = free.get()
                try:
                    return client.generate(batch)
                finally:
                    free.put(client)

            def complete(requests: list[ChatRequest], label: str) -> list[Completion]:
                batches = _batches(requests, spec.resources.batch_size)
                done: dict[int, list[Completion]] = {}
                with _progress() as bar, ThreadPoolExecutor(len(pool.servers)) as threads:
                    task = bar.add_task(label, total=len(requests))
                    futures = {threads.submit(run, b): i for i, b in enumerate(batches)}
                    for future in as_completed(futures):
                        done[futures[future]] = future.result()
                        bar.advance(task, len(done[futures[future]]))
                return [c for i in range(len(batches)) for c in done[i]]

            yield complete
        finally:
            pools.close()


@contextmanager
def api_complete(spec: ModelSpec, call_cache: str | None = None) -> Iterator[Complete]:
    """A `complete` function over an API client (requests of a batch run concurrently)."""
    model = with_call_cache(create_chat_model(spec), model_calls(call_cache, spec, False), spec)

    def complete(requests: list[ChatRequest], label: str) -> list[Completion]:
        out: list[Completion] = []
        with _progress() as bar:
            task = bar.add_task(label, total=len(requests))
            for batch in _batches(requests, spec.resources.batch_size):
                out.extend(model.generate(batch))
                bar.advance(task, len(batch))
        return out

    yield complete


def model_complete(spec: ModelSpec, address: str | None = None, call_cache: str | None = None):
    """The runner a ModelSpec needs (a context manager yielding `complete`); `call_cache`:
    the model-call cache's location (None: off)."""
    if spec.backend in API_BACKENDS:
        return api_complete(spec, call_cache)
    return ray_complete(spec, address, call_cache)
