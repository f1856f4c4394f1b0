"""Draws of a sampled model (lasagna.models.draws): each repeat samples with its own seed,
repeat 0 with the model's own, and only sampled generators' keys record it."""

from __future__ import annotations

import asyncio
import contextvars

from lasagna.models.base import ChatRequest
from lasagna.models.client import ModelClient
from lasagna.models.draws import current_draw, draw_seed, for_draw, set_draw
from lasagna.models.identity import model_identity
from lasagna.stages.sdk_rows import RowSpec, run_row, run_row_async
from lasagna.systems import BM25Retriever, ModelSpec, RagGenerator


def test_draw_seeds_are_the_models_first_then_distinct_and_stable():
    assert draw_seed(7, 0) == 7  # a single run samples as it did
    seeds = [draw_seed(7, d) for d in range(1, 200)]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2**31 for s in seeds)
    assert seeds == [draw_seed(7, d) for d in range(1, 200)]  # the same in any process
    assert draw_seed(8, 1) != draw_seed(7, 1)  # another model seed, another set of draws


def test_for_draw_sets_every_model_seed_in_a_system_and_nothing_else():
    rag = RagGenerator(retriever=BM25Retriever(top_k=3), model=ModelSpec(temperature=0.7, seed=3))
    assert for_draw(rag, 0) is rag
    drawn = for_draw(rag, 2)
    assert drawn.model.seed == draw_seed(3, 2)
    assert drawn.model.model_copy(update={"seed": 3}) == rag.model
    assert drawn.retriever is rag.retriever and drawn.passages == rag.passages


def test_a_clients_request_without_a_seed_takes_the_rows_draw():
    client = ModelClient(ModelSpec(temperature=0.9, seed=5))

    def sampled(draw: int, seed: int | None = None) -> int | None:
        set_draw(draw)
        return client._sampled(ChatRequest(messages=[], seed=seed)).seed

    run = contextvars.copy_context().run
    assert run(sampled, 0) == 5
    assert run(sampled, 3) == draw_seed(5, 3)
    assert run(sampled, 3, 11) == 11  # a seed the caller names is kept


def test_only_sampled_models_record_per_repeat_draws_in_their_key():
    greedy = model_identity(ModelSpec(), "t")["sampling"]
    assert "draw_seeds" not in greedy  # greedy keys are unchanged
    sampled = model_identity(ModelSpec(temperature=0.5), "t")["sampling"]
    assert sampled["draw_seeds"] == "per repeat"


def test_an_evaluate_row_runs_under_its_trial_index_as_the_draw():
    def spec(index: int) -> RowSpec:
        return RowSpec(0, "t", index, {}, None, None)

    async def draw_async(data):
        return current_draw()

    run = contextvars.copy_context().run
    for index in (0, 2):
        row = run(run_row, spec(index), lambda data: current_draw(), {}, "e")
        assert row["output"] == str(index), row
        row = asyncio.run(run_row_async(spec(index), draw_async, {}, "e"))
        assert row["output"] == str(index), row
