"""The Generate stage: an actor pool whose actors each hold one chat model (one vLLM engine).

Rows in: id, question and, for RAG, `passages` (the texts the retriever picked, best first).
Rows out: the same plus prediction, error, latency_s, prompt_tokens, completion_tokens. A row
whose generation fails keeps its place with `error` set and an empty prediction, so the driver
can count and report it instead of silently losing it.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pyarrow as pa

from lasagna.models.base import ChatModel, ChatRequest, create_chat_model
from lasagna.models.prompts import (
    PromptKind,
    build_closed_book_messages,
    build_rag_messages,
    effective_template,
)
from lasagna.sweep.systems import ClosedBookGenerator, ModelSpec, RagGenerator

OUTPUT_COLUMNS = (
    "prediction",
    "error",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "batch_rows",
    "batch_started_at",
    "engine_load_s",
)
LOCAL_BACKENDS = ("vllm", "transformers")


def _set_threads(threads: int | None) -> None:
    """Torch / OpenMP threads of this actor (Ray sets OMP_NUM_THREADS from num_cpus, often 1)."""
    if not threads:
        return
    os.environ["OMP_NUM_THREADS"] = str(threads)  # inherited by vLLM's worker processes
    import torch

    torch.set_num_threads(threads)


class GenerateStage:
    """Ray Data callable class: builds the model once per actor, answers batches of rows."""

    def __init__(
        self,
        spec: ModelSpec,
        kind: PromptKind = "closed_book",
        template: str | None = None,
        threads: int | None = None,
        model: ChatModel | None = None,  # an already built model (in-process use, tests)
    ):
        self.kind = kind
        self.template = effective_template(kind, template)
        _set_threads(threads)
        t0 = time.perf_counter()
        self.model = model if model is not None else create_chat_model(spec)
        self.load_s = time.perf_counter() - t0  # reported so tokens/s can exclude start-up

    def __del__(self):
        close = getattr(getattr(self, "model", None), "close", None)
        if close is not None:  # stop vLLM's worker processes with the actor
            close()

    def requests(self, questions: list[str], passages: list[list[str]] | None) -> list[ChatRequest]:
        if self.kind == "rag":
            if passages is None:
                raise ValueError("a rag generator needs a 'passages' column")
            return [
                ChatRequest(build_rag_messages(q, p, self.template))
                for q, p in zip(questions, passages, strict=True)
            ]
        return [ChatRequest(build_closed_book_messages(q, self.template)) for q in questions]

    def __call__(self, batch: pa.Table | dict[str, Any]) -> pa.Table:
        table = batch if isinstance(batch, pa.Table) else pa.table(batch)
        questions = [str(q) for q in table.column("question").to_pylist()]
        passages = None
        if "passages" in table.column_names:
            passages = [[str(t) for t in (p or [])] for p in table.column("passages").to_pylist()]
        started = time.time()
        completions = self.model.generate(self.requests(questions, passages))
        columns = {
            "prediction": pa.array([c.text for c in completions], pa.string()),
            "error": pa.array([c.error for c in completions], pa.string()),
            "latency_s": pa.array([c.latency_s for c in completions], pa.float64()),
            "prompt_tokens": pa.array([c.prompt_tokens for c in completions], pa.int64()),
            "completion_tokens": pa.array([c.completion_tokens for c in completions], pa.int64()),
            # rows answered together: latency_s is the batch's wall time, so the engine's
            # busy time is the sum of latency_s / batch_rows (steady-state tokens/s)
            "batch_rows": pa.array([len(completions)] * len(completions), pa.int64()),
            # when this actor started the batch (epoch seconds): with latency_s it places each
            # batch on a timeline, so idle gaps between batches are visible in the results
            "batch_started_at": pa.array([started] * len(completions), pa.float64()),
            "engine_load_s": pa.array([self.load_s] * len(completions), pa.float64()),
        }
        for name, values in columns.items():
            if name in table.column_names:
                table = table.drop_columns([name])
            table = table.append_column(name, values)
        return table


def generation_gpus(spec: ModelSpec, cluster_gpus: float) -> float:
    """GPUs per actor: the configured number, at least tensor_parallel_size when on GPUs.

    A local model on a cluster with GPUs gets tensor_parallel_size GPUs even when the config
    says 0, so a plain config runs on the users' GPU clusters; API models never take one.
    """
    res = spec.resources
    if spec.backend not in LOCAL_BACKENDS:
        return 0.0
    if res.num_gpus > 0:
        return float(max(res.num_gpus, spec.tensor_parallel_size))
    return float(spec.tensor_parallel_size) if cluster_gpus > 0 else 0.0


def generation_dataset(
    rows, generator_cfg: RagGenerator | ClosedBookGenerator, *, threads: int | None = None
):
    """Lazy dataset: rows (+ passages for rag) -> the same plus the generation columns.

    Assumes Ray is initialized by the caller. For rag the caller adds `passages` (the top
    `generator_cfg.passages` texts) after retrieval.
    """
    import ray

    from lasagna.engine.actors import actor_pool, threads_per_actor

    spec = generator_cfg.model
    res = spec.resources
    cluster = ray.cluster_resources()
    gpus = generation_gpus(spec, float(cluster.get("GPU", 0)))
    if threads is None and gpus == 0 and spec.backend in LOCAL_BACKENDS:
        threads = threads_per_actor(float(cluster.get("CPU", 1)), res.actors)
    return rows.map_batches(
        GenerateStage,
        fn_constructor_kwargs={
            "spec": spec,
            "kind": generator_cfg.kind,
            "template": generator_cfg.prompt,
            "threads": threads,
        },
        compute=actor_pool(res.actors),
        num_cpus=res.num_cpus,
        num_gpus=gpus or None,
        batch_size=res.batch_size,
        batch_format="pyarrow",
    )
