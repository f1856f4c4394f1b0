"""What each pool of a trial asks of the cluster (`placement.Ask`), built from the systems'
resources the same way the stages build their actors (lasagna.stages.pools, embedding,
retrieval, judging), so the plan and the run agree. The tracks combine these
(`Track.asks`)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from lasagna.errors import KeyPath
from lasagna.stages.placement import ALWAYS, GENERATE, JUDGE, Ask, light_ask


def _each(res: Any, cpus: float | None = None, gpus: float = 0.0, custom: bool = True):
    out = {"CPU": res.num_cpus if cpus is None else cpus, "GPU": gpus}
    if custom:
        out.update({k: float(v) for k, v in res.resources.items()})
    return out


def actor_asks(pool: str, key: str, res: Any, phase: int = ALWAYS) -> list[Ask]:
    """One actor pool sized by the sweep's `resources.<key>` (`res`: its StageResources, the
    sweep's defaults applied) beside the light read and scoring tasks: what a track whose
    trial is a single actor stage asks (a plugin's too)."""
    return [Ask(pool, key, res.actors, _each(res, gpus=res.num_gpus), phase), light_ask()]


def model_asks(
    spec: Any,
    role: str,
    key: str,
    cluster_gpus: float,
    phase: int = ALWAYS,
    at: KeyPath | None = None,
):
    """A chat model's pools: a local model's engine servers (its CPUs, GPUs, custom
    resources) plus the stage's light clients; an API model's stage actors hold its CPUs.
    `at`: where the spec sits in the system (None: not in it)."""
    from lasagna.models.gpus import engine_gpus
    from lasagna.models.registry import is_local
    from lasagna.stages.pools import CLIENT_CPUS, engine_pool_keys

    res, at = spec.resources, (*at, "resources") if at is not None else ()
    if not is_local(spec.backend):
        return [Ask(f"{role} actors (API model)", key, res.actors, _each(res), phase, at=at)]
    gpus = engine_gpus(spec, cluster_gpus)
    engine = engine_pool_keys(spec)[0]
    clients = _each(res, min(res.num_cpus, CLIENT_CPUS), custom=False)
    each = _each(res, gpus=gpus)
    return [
        Ask(f"{role} engine", key, res.actors, each, phase, engine=engine, at=at),
        Ask(f"{role} stage clients", key, res.actors, clients, phase, at=at),
    ]


def judge_asks(judge: Any, cluster_gpus: float, phase: int = ALWAYS, at: KeyPath | None = None):
    """A judge's pools: a code judge asks only light CPU actors and no engine. `at`: where
    the judge sits in the system (None for the judges of judged generation: not in it)."""
    model_at = (*at, "model") if at is not None else None
    if judge.uses_model:
        role = f"{judge.benchmark} judge"
        return model_asks(judge.model, role, "judge", cluster_gpus, phase, model_at)
    res = judge.model.resources
    light = _each(res, min(res.num_cpus, 0.25), custom=False)
    pool = f"{judge.benchmark} judge actors (no model)"
    where = (*model_at, "resources") if model_at is not None else ()
    return [Ask(pool, "judge", res.actors, light, phase, at=where)]


def retriever_asks(retriever: Any, phase: int = ALWAYS, at: KeyPath = ()) -> list[Ask]:
    """The pooled embedders of its dense parts and the Search actors (their GPUs hold a
    dense index: faiss on GPU). `at`: where the retriever sits in the system (() when it
    is the system)."""
    parts = retriever.parts()
    dense = [(d, (*at, *p)) for d, p in parts if d.kind == "dense"]
    asks = [
        Ask(
            "embedder",
            "encode",
            d.encode.actors,
            _each(d.encode, gpus=d.encode.num_gpus),
            phase,
            engine=_embedder(d),
            at=(*p, "encode"),
        )
        for d, p in dense
    ]
    res = retriever.search_resources()
    key = "search" if dense else "retrieve"
    where = (*dense[0][1], "search") if dense else (*at, *parts[0][1], "retrieve")
    each = _each(res, gpus=res.num_gpus)
    asks.append(Ask("search actors", key, res.actors, each, phase, at=where))
    return asks


def _embedder(cfg: Any) -> str:
    """What tells two embedder pools apart here (the pool's own key, embedding.embedder_key,
    hashes the model's files: not needed to count a shared pool once)."""
    res = cfg.encode
    return "embed:" + repr((cfg.model, cfg.backend, cfg.precision, cfg.normalize,
                            cfg.max_seq_length, res))  # fmt: skip


def generation_asks(system: Any, judges: tuple, cluster_gpus: float) -> list[Ask]:
    """A generation trial's pools: a RAG generator's retrieval, the generator's engine and,
    for judged generation, the judges' (a later phase the engine may run after the first)."""
    phase = GENERATE if judges else ALWAYS
    asks = []
    if system.kind == "rag":
        asks += retriever_asks(system.retriever, phase, at=("retriever",))
        asks.append(Ask("attach actor", None, 1, {"CPU": 0.1}, phase))
    asks += model_asks(system.model, "generator", "generate", cluster_gpus, phase, ("model",))
    for judge in judges:
        asks += judge_asks(judge, cluster_gpus, JUDGE)
    return [*asks, light_ask()]


def executor_asks(system: Any, cluster_gpus: float) -> list[Ask]:
    """evaluate()'s pools (lasagna.systems.executor.ExecutorSystem): a class executor's
    actors, or one task of a function executor (Ray queues the rest, so one must fit), each
    asking `resources=`, and the engine of each local model an evaluator names (an LLM
    judge: the run's hub loads it before the rows start). Models an executor asks for with
    `lasagna.model()` are known only once it runs."""
    from lasagna.models.registry import is_local
    from lasagna.models.spec import ModelSpec
    from lasagna.stages.sdk_executor import task_options

    options = task_options(system.resources)
    each = {"CPU": options["num_cpus"], "GPU": options["num_gpus"]}
    if inspect.isclass(system.executor):
        pool, actors = "executor actors", system.actors
    else:
        pool, actors = "executor tasks", 1
    asks = [Ask(pool, "executor", actors, each, sized_by="evaluate")]
    for name, evaluator in system.evaluators.items():
        spec = getattr(evaluator, "model", None)
        if isinstance(spec, ModelSpec) and is_local(spec.backend):
            pools = model_asks(spec, f"evaluator {name!r}", "", cluster_gpus)
            engine = next(a for a in pools if a.engine)  # its clients are the executor's
            asks.append(dataclasses.replace(engine, key=None, sized_by="evaluate"))
    return asks  # no Ray Data pipeline: the rows go out from the driver
