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
