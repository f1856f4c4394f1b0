"""Where the calls run: local models on vLLM in a pool of Ray actors, API models in-process.

The actors hold one engine each for both phases (writing, then checking), so the model
loads once per actor. On a cluster with GPUs the pool has one actor per
`tensor_parallel_size` GPUs; on CPUs one actor gets every CPU's threads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from lasagna.models.base import ChatRequest, Completion
from lasagna.models.call_cache import ModelCalls, model_calls, with_call_cache
from lasagna.models.packaged import API_BACKENDS, resolve_generator_model
from lasagna.models.registry import create_chat_model
from lasagna.synth.generate import Complete
from lasagna.systems import ModelSpec


class ChatActor:
    """A Ray actor holding one chat model (one vLLM engine)."""

    def __init__(self, spec: ModelSpec, threads: int | None, calls: ModelCalls | None = None):
        from lasagna.stages.actors import set_threads

        set_threads(threads)
        self.model = with_call_cache(create_chat_model(spec), calls, spec)

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        return self.model.generate(requests)

    def close(self) -> None:
        close = getattr(self.model, "close", None)
        if close is not None:
            close()


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
    """A `complete` function backed by a pool of Ray actors, for the life of the block."""
    import ray
    from ray.util import ActorPool

    from lasagna.engine.ray_session import ray_session
    from lasagna.stages.actors import threads_per_actor
    from lasagna.stages.pools import generation_gpus

    resolve_generator_model(spec)  # a bad path fails here; the packaged model is prepared once
    with ray_session(address) as session:
        cluster_gpus = float(session.resources.get("GPU", 0))
        size = _pool_size(spec, cluster_gpus)
        gpus = generation_gpus(spec, cluster_gpus)
        threads = None if gpus else threads_per_actor(session.resources.get("CPU", 1), size)
        remote = ray.remote(num_cpus=spec.resources.num_cpus, num_gpus=gpus or None)(ChatActor)
        calls = model_calls(call_cache, spec, gpu=bool(gpus))
        actors = [remote.remote(spec, threads, calls) for _ in range(size)]
        pool = ActorPool(actors)

        def complete(requests: list[ChatRequest], label: str) -> list[Completion]:
            out: list[Completion] = []
            with _progress() as bar:
                task = bar.add_task(label, total=len(requests))
                batches = _batches(requests, spec.resources.batch_size)
                for done in pool.map(lambda a, b: a.generate.remote(b), batches):
                    out.extend(done)
                    bar.advance(task, len(done))
            return out

        try:
            yield complete
        finally:
            for actor in actors:
                try:
                    ray.get(actor.close.remote(), timeout=60)
                except Exception:
                    pass  # the actor is killed next either way
                ray.kill(actor)


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
