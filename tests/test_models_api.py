"""API backends: key refusal, request building (no network), per-request failures."""

from __future__ import annotations

import pytest

from lasagna.errors import UserError
from lasagna.models.api_backend import (
    ApiChatModel,
    anthropic_payload,
    create_api_model,
    openai_payload,
    takes_temperature,
)
from lasagna.models.base import ChatRequest, Completion, resolve_sampling
from lasagna.sample import sample_path
from lasagna.systems import ModelSpec

SAMPLE = sample_path()

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("backend", "variables"),
    [("openai", ("OPENAI_API_KEY", "OPENAI_BASE_URL")), ("anthropic", ("ANTHROPIC_API_KEY",))],
)
def test_missing_key_lists_every_variable(monkeypatch, backend, variables):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(UserError) as err:
        create_api_model(ModelSpec(model="m", backend=backend))
    for var in variables:
        assert var in str(err.value)


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        ("gpt-4o-mini", True),
        ("o1", False),
        ("o3-mini", False),
        ("gpt-5", False),
        ("gpt-5-mini", False),
        ("openai/o4-mini", False),
        ("llama-3.1-8b", True),
    ],
)
def test_temperature_list(model, takes):
    assert takes_temperature(model) is takes


def test_openai_payload_temperature_zero_and_schema():
    spec = ModelSpec(model="gpt-4o-mini", backend="openai", stop=("\n",))
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    req = ChatRequest(MSGS, json_schema=schema)
    payload = openai_payload(spec.model, req, resolve_sampling(spec, req))
    assert payload["temperature"] == 0.0
    assert payload["stop"] == ["\n"]
    assert payload["max_completion_tokens"] == 64
    assert payload["response_format"]["json_schema"]["schema"] == schema
    assert "JSON schema" in payload["messages"][-1]["content"]


def test_openai_payload_sends_no_temperature_to_reasoning_models():
    spec = ModelSpec(model="o3-mini", backend="openai")
    req = ChatRequest(MSGS)
    assert "temperature" not in openai_payload(spec.model, req, resolve_sampling(spec, req))


def test_anthropic_payload_moves_system_message():
    spec = ModelSpec(model="claude-x", backend="anthropic", max_tokens=10)
    req = ChatRequest(MSGS, temperature=0.0)
    payload = anthropic_payload(spec.model, req, resolve_sampling(spec, req))
    assert payload["system"] == "be brief"
    assert payload["messages"] == [{"role": "user", "content": "hi"}]
    assert payload["max_tokens"] == 10 and payload["temperature"] == 0.0


def test_a_failing_request_fails_only_its_row():
    """A fake client (unit test of the batch loop only): the second request raises."""

    def call(client, payload):
        if payload["messages"][-1]["content"] == "boom":
            raise RuntimeError("server said no")
        return Completion("ok", prompt_tokens=3, completion_tokens=1, finish_reason="stop")

    model = ApiChatModel(ModelSpec(model="m", backend="openai"), None, openai_payload, call)
    out = model.generate([ChatRequest([{"role": "user", "content": c}]) for c in ("a", "boom")])
    assert out[0].text == "ok" and out[0].error is None and out[0].completion_tokens == 1
    assert out[1].text == "" and "server said no" in out[1].error


def test_an_api_model_name_without_a_backend_is_that_api(tmp_path, monkeypatch, capsys):
    """`model: gpt-4o-mini` in a sweep (or `--judge-model claude-...`) means the API model,
    as `lasagna.model("gpt-4o-mini")` does, not a Hugging Face id on vLLM."""
    from lasagna.sweep.judge_plan import judge_systems

    assert ModelSpec(model="gpt-4o-mini").backend == "openai"
    assert ModelSpec(model="claude-sonnet-4-5").backend == "anthropic"
    named = ModelSpec(model="openai:my-served-model", base_url="http://localhost:8000/v1")
    assert (named.backend, named.model) == ("openai", "my-served-model")
    both = ModelSpec(model="openai:gpt-4o", backend="openai")
    assert both.model == "gpt-4o"
    assert ModelSpec(model="Qwen/Qwen2.5-0.5B-Instruct").backend == "vllm"
    assert ModelSpec(model="gpt2", backend="transformers").backend == "transformers"
    explicit = ModelSpec(model="gpt-4o-mini", backend="vllm")  # said: a local copy of that name
    assert explicit.backend == "vllm"
    (judge,) = judge_systems(["correctness"], model="claude-haiku-4-5")
    assert (judge.model.backend, judge.model.model) == ("anthropic", "claude-haiku-4-5")
    (default,) = judge_systems(["correctness"])
    assert default.model.backend == "vllm"
    # the refusal names the key, not a Hugging Face download
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        f"benchmarks:\n  - {{path: {SAMPLE}}}\n"
        "generators:\n  - kind: closed_book\n    model: {model: gpt-4o-mini}\n"
    )
    from lasagna.cli import main

    assert main(["benchmark", "plan", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "huggingface-cli" not in err


def test_a_client_of_a_model_that_cannot_be_used_is_refused_when_made(tmp_path, monkeypatch):
    """`lasagna.model(...)` checks what a sweep's preflight checks, at once: the mistake is
    named in the user's script, not on the first call inside a trial."""
    import lasagna
    from lasagna.errors import UserError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="'smollm2' is not in the Hugging Face cache"):
        lasagna.model("smollm2")
    with pytest.raises(UserError, match="does not exist"):
        lasagna.model(str(tmp_path / "no-such-model"))
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        lasagna.model("gpt-4o-mini")
    from lasagna.evaluation.judge import LLMJudge

    with pytest.raises(UserError, match="'nonexistent/model' is not in the Hugging Face cache"):
        LLMJudge("correctness", model=ModelSpec(model="nonexistent/model"))
    llm = lasagna.model("packaged:SmolLM2-135M-Instruct", max_tokens=8)  # looked up only
    with pytest.raises(TypeError, match=r"not a str; for one prompt use chat\(text\)"):
        llm.generate("What is the capital of France?")
    with pytest.raises(TypeError, match="a list of ChatRequest"):
        llm.generate(["What is the capital of France?"])


def test_a_failed_load_is_one_line_that_travels():
    """vLLM refuses a folder with a pydantic error that does not pickle; the server keeps
    one line of it in an error every caller can receive."""
    import pickle

    from pydantic import BaseModel, ValidationError, field_validator

    from lasagna.errors import Problem, UserError
    from lasagna.stages.model_server import ModelLoadError, load_failure

    class Config(BaseModel):
        model: str

        @field_validator("model")
        @classmethod
        def known(cls, value: str) -> str:
            raise ValueError(f"Unrecognized model in {value}")

    with pytest.raises(ValidationError) as caught:
        Config(model="/m")
    spec = ModelSpec(model="/m")
    err = load_failure(spec, caught.value)
    assert isinstance(err, ModelLoadError) and "\n" not in str(err)
    assert str(err) == (
        "model '/m' (vllm) failed to load: ValidationError: Value error, Unrecognized model in /m"
    )
    assert str(pickle.loads(pickle.dumps(err))) == str(err)
    refused = UserError(Problem("no key", field="model"))
    assert load_failure(spec, refused) is refused  # it names the fix already
    assert "OSError: disk gone more" in str(load_failure(spec, OSError("disk gone\nmore")))


def _rate_limited_server(limited: int):
    """An endpoint that answers 429 (Retry-After 10 ms) to its first `limited` requests,
    then a completion; returns (server, requests counter)."""
    from fake_openai import chat_completion, serve

    seen = {"n": 0}

    def answer(asked):
        seen["n"] += 1
        if seen["n"] <= limited:
            limit = {"error": {"message": "Rate limit reached", "type": "requests"}}
            return 429, limit, {"retry-after-ms": "10"}
        return 200, chat_completion("Paris"), {}

    return serve(answer), seen


@pytest.mark.parametrize(("limited", "retries", "answered"), [(4, None, True), (4, 2, False)])
def test_a_rate_limited_api_request_is_retried(monkeypatch, limited, retries, answered):
    """With the OpenAI SDK's default of 2 retries a sweep at its rate limit loses rows to
    429s: lasagna's clients retry 8 times (with the SDK's backoff), settable per model."""
    pytest.importorskip("openai", reason="the openai SDK is not installed")
    from lasagna.models.api_backend import create_api_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server, seen = _rate_limited_server(limited)
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        extra = {} if retries is None else {"max_retries": retries}
        spec = ModelSpec(model="m", backend="openai", base_url=url, **extra)
        (out,) = create_api_model(spec).generate([ChatRequest([{"role": "user", "content": "q"}])])
    finally:
        server.shutdown()
    if answered:
        assert out.error is None and out.text == "Paris" and seen["n"] == limited + 1
    else:
        assert "RateLimitError" in out.error and seen["n"] == 3  # the first try and 2 retries
    assert ModelSpec(model="m", backend="openai", max_retries=0).request_timeout == 120.0


def test_a_g_eval_judge_on_an_openai_endpoint_gets_its_weighted_score(monkeypatch):
    """G-Eval weights the score by the score token's probabilities: an OpenAI-compatible
    endpoint is asked for the top log-probabilities (20 at most, the API's limit) and the
    judge reads them as it reads vLLM's."""
    import math

    pytest.importorskip("openai", reason="the openai SDK is not installed")
    from fake_openai import chat_completion, serve

    from lasagna.judges import correctness
    from lasagna.judges.base import run_cases
    from lasagna.judges.params import JudgeParams

    reply = '{"score": 8, "reason": "close"}'
    pieces = ['{"score": ', "8", ', "reason": "close"}']
    asked: list[dict] = []

    def answer(request):
        asked.append(request)
        body = chat_completion(reply)
        top = [{"8": math.log(0.5), "9": math.log(0.25), "x": math.log(0.25)}]
        body["choices"][0]["logprobs"] = {
            "content": [
                {
                    "token": t,
                    "logprob": -0.1,
                    "bytes": list(t.encode()),
                    "top_logprobs": [
                        {"token": k, "logprob": v, "bytes": list(k.encode())}
                        for k, v in (top[0] if t == "8" else {t: -0.1}).items()
                    ],
                }
                for t in pieces
            ]
        }
        return 200, body, {}

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = serve(answer)
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        model = create_api_model(ModelSpec(model="judge", backend="openai", base_url=url))
        case = {"input": "q", "actual_output": "a", "expected_output": "b"}
        (row,) = run_cases(correctness, [case], model, JudgeParams())
    finally:
        server.shutdown()
    assert asked[0]["logprobs"] is True and asked[0]["top_logprobs"] == 20
    assert asked[0]["response_format"]["json_schema"]["schema"] == correctness.SCORE.schema
    assert row.error is None and row.metrics["correctness_weighted"] is True
    weighted = (8 * 0.5 + 9 * 0.25) / 0.75
    assert row.metrics["correctness_score"] == pytest.approx((weighted - 1) / 9)
    no_logprobs = openai_payload(
        "o3-mini",
        ChatRequest(MSGS, logprobs=20),
        resolve_sampling(
            ModelSpec(model="o3-mini", backend="openai"), ChatRequest(MSGS, logprobs=20)
        ),
    )
    assert "logprobs" not in no_logprobs  # reasoning models return none
