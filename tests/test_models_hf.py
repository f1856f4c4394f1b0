"""The transformers backend, for real, on the packaged model (CPU, tiny max_tokens)."""

from __future__ import annotations

import pytest

from lasagna.models.base import ChatRequest
from lasagna.models.prompts import build_closed_book_messages, build_rag_messages
from lasagna.systems import ModelSpec

pytestmark = pytest.mark.slow

PARIS = ["Paris is the capital and largest city of France.", "Berlin is in Germany."]


@pytest.fixture(scope="module")
def model():
    from lasagna.models.hf_backend import HfChatModel

    return HfChatModel(ModelSpec(backend="transformers", max_tokens=8))


def test_batched_greedy_answers_with_counts(model):
    requests = [
        ChatRequest(build_rag_messages("What is the capital of France?", PARIS)),
        ChatRequest(build_closed_book_messages("Who wrote Hamlet?")),
    ]
    first = model.generate(requests)
    assert [c.error for c in first] == [None, None]
    assert "Paris" in first[0].text
    assert all(c.prompt_tokens > 20 and 0 < c.completion_tokens <= 8 for c in first)
    # greedy at temperature 0: the same batch gives the same answers; alone, too
    assert [c.text for c in model.generate(requests)] == [c.text for c in first]
    assert model.generate(requests[:1])[0].text == first[0].text


def test_overrides_stop_and_max_tokens(model):
    req = ChatRequest(build_closed_book_messages("Count from 1 to 20."), max_tokens=3)
    out = model.generate([req])[0]
    assert out.completion_tokens <= 3 and out.finish_reason in ("length", "stop")
    stopped = model.generate(
        [ChatRequest(build_rag_messages("Capital of France?", PARIS), stop=("Paris",))]
    )[0]
    assert "Paris" not in stopped.text


def test_a_tokenizer_that_makes_token_type_ids_still_generates(tmp_path) -> None:
    """Some tokenizers return token_type_ids, which a decoder model's generate refuses
    ("model_kwargs are not used"): the backend never passes them. On the GPU check's tiny
    model with its tokenizer told to make them."""
    import json
    import shutil
    import sys
    from pathlib import Path

    from lasagna.models.hf_backend import HfChatModel

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from gpu_check_chat import pack_chat, unpacked

    pack_chat(tmp_path / "carried")
    folder = unpacked(tmp_path / "carried")
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text())
        config["model_input_names"] = ["input_ids", "token_type_ids", "attention_mask"]
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
        model = HfChatModel(ModelSpec(model=str(folder), backend="transformers", max_tokens=4))
        assert "token_type_ids" in model.tokenizer(["hi"])  # as configured
        out = model.generate([ChatRequest(build_closed_book_messages("Who wrote Hamlet?"))])
        assert out[0].error is None and out[0].completion_tokens > 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_log_probabilities_of_each_generated_token(model):
    """G-Eval's weighted score on transformers: each generated token with its top-k
    alternatives, the greedy choice first, the tokens adding up to the reply (the judge
    reads them as vLLM's: test_models_api's G-Eval test)."""
    import math

    req = ChatRequest(build_closed_book_messages("Who wrote Hamlet?"), logprobs=5)
    (out,) = model.generate([req])
    assert out.tokens and len(out.tokens) == len(out.top_logprobs)
    assert "".join(out.tokens).strip() == out.text
    for token, top in zip(out.tokens, out.top_logprobs, strict=True):
        assert len(top) <= 5 and max(top, key=top.get) == token  # greedy: the most likely
        assert all(v <= 0 for v in top.values()) and sum(map(math.exp, top.values())) <= 1.0001
    assert model.generate([ChatRequest(req.messages)])[0].tokens is None  # not asked: none
