"""The Generate stage: in process (transformers) and as a Ray Data actor pool (vLLM, for real)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lasagna.models.base import ChatRequest, Completion
from lasagna.models.gpus import engine_gpus
from lasagna.stages.generation import GenerateStage, generation_dataset
from lasagna.systems import ModelSpec, RagGenerator

PARIS = ["Paris is the capital and largest city of France.", "Berlin is in Germany."]


class _Recorder:
    """Unit-test double for the model: records requests, fails the question 'boom'."""

    def __init__(self):
        self.seen: list[ChatRequest] = []

    def generate(self, requests):
        self.seen += requests
        return [
            Completion("", error="RuntimeError: boom")
            if "boom" in r.messages[0]["content"]
            else Completion("ans", prompt_tokens=5, completion_tokens=1, latency_s=0.5)
            for r in requests
        ]


def test_stage_builds_rag_prompts_and_keeps_failed_rows():
    recorder = _Recorder()
    stage = GenerateStage(ModelSpec(), kind="rag", model=recorder)
    table = pa.table({"id": ["a", "b"], "question": ["q1", "boom"], "passages": [PARIS, []]})
    out = stage(table)
    assert out.column("id").to_pylist() == ["a", "b"]
    assert out.column("prediction").to_pylist() == ["ans", ""]
    assert out.column("error").to_pylist() == [None, "RuntimeError: boom"]
    assert out.column("completion_tokens").to_pylist() == [1, 0]
    assert "[1] Paris is the capital" in recorder.seen[0].messages[0]["content"]


def test_rag_stage_without_passages_is_an_error():
    stage = GenerateStage(ModelSpec(), kind="rag", model=_Recorder())
    with pytest.raises(ValueError, match="passages"):
        stage(pa.table({"id": ["a"], "question": ["q"]}))


def test_gpus_per_actor():
    assert engine_gpus(ModelSpec(), cluster_gpus=0) == 0
    assert engine_gpus(ModelSpec(tensor_parallel_size=2), cluster_gpus=8) == 2
    assert engine_gpus(ModelSpec(model="gpt-4o", backend="openai"), cluster_gpus=8) == 0


@pytest.mark.slow
def test_stage_in_process_with_transformers():
    stage = GenerateStage(ModelSpec(backend="transformers", max_tokens=8), kind="closed_book")
    out = stage({"id": ["x"], "question": ["What is the capital of France?"]})
    assert out.column("error").to_pylist() == [None]
    assert "Paris" in out.column("prediction").to_pylist()[0]
    assert out.column("prompt_tokens").to_pylist()[0] > 10


@pytest.mark.slow
@pytest.mark.vllm
def test_vllm_actor_pool_through_ray_data(ray_local):
    rows = ray_local.data.from_items(
        [
            {"id": "q1", "question": "What is the capital of France?", "passages": PARIS},
            {"id": "q2", "question": "Where is Berlin?", "passages": PARIS},
            {"id": "q3", "question": "Who?", "passages": ["word " * 2500]},  # too long: fails
        ]
    )
    spec = ModelSpec(max_tokens=8, resources={"batch_size": 2})
    ds = generation_dataset(rows, RagGenerator(model=spec))
    out = {r["id"]: r for r in ds.take_all()}
    assert set(out) == {"q1", "q2", "q3"}
    assert out["q1"]["error"] is None and "Paris" in out["q1"]["prediction"]
    assert out["q2"]["completion_tokens"] > 0
    assert "max_model_len" in out["q3"]["error"] and out["q3"]["prediction"] == ""
