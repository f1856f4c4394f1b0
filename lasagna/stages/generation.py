"""The Generate stage: an actor pool whose actors each hold one chat model (one vLLM engine).

Rows in: id, question and, for RAG, `passages` (the texts the retriever picked, best first).
Rows out: the same plus prediction, error, latency_s, prompt_tokens, completion_tokens. A row
whose generation fails keeps its place with `error` set and an empty prediction, so the driver
can count and report it instead of silently losing it.
"""

from __future__ import annotations

import time
from typing import Any

import pyarrow as pa

from lasagna.models.base import ChatModel, ChatRequest
from lasagna.models.call_cache import ModelCalls
from lasagna.models.prompts import (
    PromptKind,
    build_closed_book_messages,
    build_rag_messages,
    effective_template,
)
from lasagna.results.schema import columns_of
from lasagna.stages.actors import set_threads
from lasagna.stages.pools import actor_model, stage_engine
from lasagna.stages.stage import Stage, apply_stage
from lasagna.systems import ClosedBookGenerator, ModelSpec, RagGenerator, StageResources

OUTPUT_COLUMNS = columns_of("generate")  # declared in the result schema


_set_threads = set_threads  # the name lasagna.synth imports


class GenerateStage:
    """Ray Data callable class: answers batches of rows with one chat model.

    The model is the run's pooled engine (`servers`: ModelServer actors, see
    lasagna.stages.pools), an already built one (`model`: in-process use, tests), or else
    built here, once per actor. Every request carries the spec's sampling, so a pooled
    engine serves trials that sample differently.
    """

    def __init__(
        self,
        spec: ModelSpec,
        kind: PromptKind = "closed_book",
        template: str | None = None,
        threads: int | None = None,
        model: ChatModel | None = None,  # an already built model (in-process use, tests)
        servers: list | None = None,  # a pool's ModelServer actors (loaded on first call)
        calls: ModelCalls | None = None,  # the model-call cache; None: off
    ):
        self.kind = kind
        self.spec = spec
        self.template = effective_template(kind, template)
        # load_s is reported so tokens/s can exclude start-up
        self.model, self.load_s = actor_model(spec, threads, model, servers, calls)

    def __del__(self):
        close = getattr(getattr(self, "model", None), "close", None)
        if close is not None:  # stop vLLM's worker processes with the actor
            close()

    def requests(self, questions: list[str], passages: list[list[str]] | None) -> list[ChatRequest]:
        spec = self.spec
        sampling = {
            "max_tokens": spec.max_tokens,
            "temperature": spec.temperature,
            "stop": tuple(spec.stop),
            "seed": spec.seed,
        }
        if self.kind == "rag":
            if passages is None:
                raise ValueError("a rag generator needs a 'passages' column")
            return [
                ChatRequest(build_rag_messages(q, p, self.template), **sampling)
                for q, p in zip(questions, passages, strict=True)
            ]
        return [
            ChatRequest(build_closed_book_messages(q, self.template), **sampling) for q in questions
        ]

    def __call__(self, batch: pa.Table | dict[str, Any]) -> pa.Table:
        table = batch if isinstance(batch, pa.Table) else pa.table(batch)
        questions = [str(q) for q in table.column("question").to_pylist()]
        passages = None
        if "passages" in table.column_names:
            passages = [[str(t) for t in (p or [])] for p in table.column("passages").to_pylist()]
        started = time.time()
        loaded = getattr(self.model, "load_s", 0.0)
        completions = self.model.generate(self.requests(questions, passages))
        # a pooled engine loads on its first call: the batch starts once it is loaded
        waited = getattr(self.model, "load_s", 0.0) - loaded
        if waited > 0:
            started += waited
            self.load_s = max(self.load_s, waited)
        columns = {
            "prediction": pa.array([c.text for c in completions], pa.string()),
            "error": pa.array([c.error for c in completions], pa.string()),
            "latency_s": pa.array([c.latency_s for c in completions], pa.float64()),
            "prompt_tokens": pa.array([c.prompt_tokens for c in completions], pa.int64()),
            "completion_tokens": pa.array([c.completion_tokens for c in completions], pa.int64()),
            # rows answered together: latency_s is the batch's wall time, so the engine's
            # busy time is the sum of latency_s / batch_rows (steady-state tokens/s)
            "batch_rows": pa.array(batch_rows(completions), pa.int64()),
            # when this actor started the batch (epoch seconds): with latency_s it places each
            # batch on a timeline, so idle gaps between batches are visible in the results
            "batch_started_at": pa.array([started] * len(completions), pa.float64()),
            "engine_load_s": pa.array([self.load_s] * len(completions), pa.float64()),
            "cached": pa.array([c.cached for c in completions], pa.bool_()),
        }
        for name, values in columns.items():
            if name in table.column_names:
                table = table.drop_columns([name])
            table = table.append_column(name, values)
        return table


def batch_rows(completions: list) -> list[int]:
    """Rows answered together: a cache hit with the batch's other hits, a computed row with
    the rows the engine ran together (so busy time per row stays right in a mixed batch)."""
    hits = sum(1 for c in completions if c.cached)
    return [hits if c.cached else len(completions) - hits for c in completions]


class AttachPassages:
    """Actor: holds the corpus texts; turns the top doc ids into prompt passages."""

    def __init__(self, texts_ref, passages: int):
        import ray

        self.texts: dict[str, str] = ray.get(texts_ref[0])
        self.passages = passages

    def __call__(self, batch: pa.Table) -> pa.Table:
        from lasagna.metrics.retrieval import passage_scores

        top = [ids[: self.passages] for ids in batch.column("doc_ids").to_pylist()]
        texts = [[self.texts[d] for d in ids] for ids in top]
        judged = zip(
            batch.column("rel_ids").to_pylist(), batch.column("rel_grades").to_pylist(), strict=True
        )
        scores = [
            passage_scores(ids, dict(zip(r, g, strict=True)))
            for ids, (r, g) in zip(top, judged, strict=True)
        ]
        return (
            batch.append_column("passages", pa.array(texts, type=pa.list_(pa.string())))
            .append_column("passage_recall", pa.array([s and s[0] for s in scores], pa.float64()))
            .append_column("passage_hit", pa.array([s and s[1] for s in scores], pa.float64()))
        )


def attach_stage(texts_ref: Any, passages: int) -> Stage:
    """{doc_ids, judgments} -> {passages, passage_recall, passage_hit}: the texts of the top
    `passages` documents (one light actor holding the corpus texts, put in the object store
    once), and how many of the question's relevant documents they are."""
    return Stage(
        "attach",
        AttachPassages,
        inputs=("doc_ids", "rel_ids", "rel_grades"),
        outputs=columns_of("attach"),
        constructor_kwargs={"texts_ref": [texts_ref], "passages": passages},
        resources=StageResources(num_cpus=0.1, actors=1),
        whole_blocks=True,
    )


def generate_stage(
    generator_cfg: RagGenerator | ClosedBookGenerator,
    *,
    threads: int | None = None,
    pool: Any = None,
    call_cache: str | None = None,
) -> Stage:
    """The Generate stage: rows (+ passages for rag) -> the generation columns.

    With `pool` (a lasagna.stages.pools.Pool holding the loaded engines) the stage's actors
    are light clients of it; without, each actor loads the model. Assumes Ray is initialized
    (GPUs and threads are read from the cluster). `call_cache`: the model-call cache's
    location (None: off).
    """
    spec = generator_cfg.model
    engine, res, gpus = stage_engine(spec, pool, call_cache, threads)
    kwargs: dict[str, Any] = {
        "spec": spec,
        "kind": generator_cfg.kind,
        "template": generator_cfg.prompt,
        **engine,
    }
    inputs = ("question", "passages") if generator_cfg.kind == "rag" else ("question",)
    return Stage(
        "generate",
        GenerateStage,
        inputs=inputs,
        outputs=OUTPUT_COLUMNS,
        constructor_kwargs=kwargs,
        resources=res,
        resources_key="generate",
        num_gpus=gpus,
    )


def generation_dataset(
    rows,
    generator_cfg: RagGenerator | ClosedBookGenerator,
    *,
    threads: int | None = None,
):
    """Lazy dataset: rows (+ passages for rag) -> the same plus the generation columns.

    Assumes Ray is initialized by the caller. For rag the caller adds `passages` (the top
    `generator_cfg.passages` texts) after retrieval.
    """
    return apply_stage(rows, generate_stage(generator_cfg, threads=threads))
