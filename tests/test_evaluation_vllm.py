"""An executor calling the packaged SmolLM2 through `lasagna.model(...)`, scored by the ready
LLM judge on the same model: one vLLM engine (the run's shared server) serves both, and the
trial's trace holds both LLM spans, nested under EXECUTOR and EVALUATOR."""

from __future__ import annotations

import sys

import pytest
from ray import cloudpickle

import lasagna
from lasagna import Datapoint, evaluate
from lasagna.evaluation import answer_correctness
from lasagna.results import sql

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

pytestmark = [pytest.mark.slow, pytest.mark.vllm]


# a module-level client, as a user writes one: it travels to the workers as its spec
LLM = lasagna.model("packaged:SmolLM2-135M-Instruct", max_tokens=24)


def capital_of_country(data: dict) -> str:
    return LLM.chat(f"What is the capital of {data['country']}? Answer in one word.")


def test_vllm_executor_with_llm_judge(ray_local, tmp_path):
    result = evaluate(
        [
            Datapoint({"country": "France"}, "Paris", task_id="france"),
            Datapoint({"country": "Japan"}, "Tokyo", task_id="japan"),
        ],
        capital_of_country,
        {"correctness": answer_correctness(cache=str(tmp_path / "calls"))},
        group_name="capitals-vllm",
        output=tmp_path,
        resources={"num_cpus": 0.5},
        quiet=True,
    )
    assert result.n_errors == 0, result.errors
    assert all(0.0 <= t["scores"]["correctness"] <= 1.0 for t in result.trials)
    # every judge call went through the model-call cache: a re-score computes none again
    assert len(list((tmp_path / "calls").rglob("*.json"))) >= 2
    spans = sql(
        tmp_path,
        "SELECT s.trace_id, s.span_type, p.span_type AS parent_type, "
        "s.attributes['gen_ai.usage.input_tokens'] AS tokens_in "
        "FROM spans s JOIN spans p ON s.parent_span_id = p.span_id WHERE s.span_type = 'LLM'",
    ).to_pylist()
    for trial in result.trials:
        mine = [s for s in spans if s["trace_id"] == trial["trace_id"]]
        assert sorted(s["parent_type"] for s in mine) == ["EVALUATOR", "EXECUTOR"]
        assert all(int(s["tokens_in"]) > 0 for s in mine)
    tokens = sql(tmp_path, "SELECT min(tokens_in) t FROM evaluation_trials").to_pylist()
    assert tokens[0]["t"] > 0
