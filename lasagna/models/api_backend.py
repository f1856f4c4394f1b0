"""API chat models: OpenAI-compatible endpoints and Anthropic, used only when a key is set.

Keys are read from the environment when the client is built and kept only inside the client:
they never enter a ModelSpec, a model identity, a result file, a manifest or a log line.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lasagna.errors import Problem, UserError
from lasagna.models.base import (
    ChatRequest,
    Completion,
    Sampling,
    error_completion,
    resolve_sampling,
    with_schema_instruction,
)

if TYPE_CHECKING:
    from lasagna.models.spec import ModelSpec

# Variables read, per backend (the error for a missing key lists all of them).
KEY_VARIABLES = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
}

# Models that reject a temperature parameter: OpenAI reasoning models (o1, o3, o4-mini, ...)
# and the gpt-5 family. For these no temperature is sent; their output is not deterministic.
NO_TEMPERATURE = re.compile(r"^(?:.*/)?(?:o\d(?:-[\w.-]+)?|gpt-5(?:[\w.-]*)?)$", re.IGNORECASE)

MAX_PARALLEL = 8  # concurrent requests per batch
MAX_TOP_LOGPROBS = 20  # the most alternatives per token the OpenAI API returns


def takes_temperature(model: str) -> bool:
    return NO_TEMPERATURE.match(model) is None


def api_key(backend: str) -> str:
    """The key from the environment, or a UserError naming every variable read."""
    key_var, url_var = KEY_VARIABLES[backend]
    key = os.environ.get(key_var, "").strip()
    if not key:
        raise UserError(
            Problem(
                f"the {backend} backend needs an API key; variables read: {key_var}, {url_var}"
                + (" (and model.base_url)" if backend == "openai" else ""),
                field="model.backend",
                fix=f"export {key_var}=... (and {url_var} for another endpoint), or use a "
                "local backend: vllm or transformers",
            )
        )
    return key


def openai_payload(model: str, request: ChatRequest, sampling: Sampling) -> dict[str, Any]:
    """Arguments of `client.chat.completions.create` (pure: unit-tested without network)."""
    payload: dict[str, Any] = {
        "model": model,
        "messages": with_schema_instruction(request),
        "max_completion_tokens": sampling.max_tokens,
    }
    if takes_temperature(model):
        payload["temperature"] = sampling.temperature
        payload["seed"] = sampling.seed
        if sampling.logprobs:  # G-Eval's weighted score (reasoning models return none)
            payload["logprobs"] = True
            payload["top_logprobs"] = min(sampling.logprobs, MAX_TOP_LOGPROBS)
    if sampling.stop:
        payload["stop"] = list(sampling.stop)
    if sampling.json_schema is not None:
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": sampling.json_schema},
        }
    return payload


def anthropic_payload(model: str, request: ChatRequest, sampling: Sampling) -> dict[str, Any]:
    """Arguments of `client.messages.create`; system messages go to the `system` field."""
    messages = with_schema_instruction(request)
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    payload: dict[str, Any] = {
        "model": model,
        "messages": [m for m in messages if m["role"] != "system"],
        "max_tokens": sampling.max_tokens,
        "temperature": sampling.temperature,
    }
    if system:
        payload["system"] = system
    if sampling.stop:
        payload["stop_sequences"] = list(sampling.stop)
    return payload


def _openai_call(client: Any, payload: dict[str, Any]) -> Completion:
    resp = client.chat.completions.create(**payload)
    choice = resp.choices[0]
    usage = resp.usage
    return Completion(
        text=(choice.message.content or "").strip(),
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        finish_reason=choice.finish_reason,
        **_openai_logprobs(choice),
    )


def _openai_logprobs(choice: Any) -> dict[str, Any]:
    """The generated tokens and each one's top alternatives {token: log-probability}, as the
    vLLM backend gives them, when the endpoint returned log-probabilities."""
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return {}
    tokens = tuple(t.token for t in content)
    top = tuple({alt.token: alt.logprob for alt in (t.top_logprobs or [])} for t in content)
    return {"tokens": tokens, "top_logprobs": top}


def _anthropic_call(client: Any, payload: dict[str, Any]) -> Completion:
    resp = client.messages.create(**payload)
    text = "".join(getattr(block, "text", "") for block in resp.content)
    return Completion(
        text=text.strip(),
        prompt_tokens=resp.usage.input_tokens,
        completion_tokens=resp.usage.output_tokens,
        finish_reason=resp.stop_reason,
    )


class ApiChatModel:
    """A ChatModel over an API client; requests of a batch run concurrently."""

    def __init__(
        self,
        spec: ModelSpec,
        client: Any,
        build: Callable[[str, ChatRequest, Sampling], dict[str, Any]],
        call: Callable[[Any, dict[str, Any]], Completion],
    ):
        self.spec, self.client, self._build, self._call = spec, client, build, call

    def _one(self, request: ChatRequest) -> Completion:
        start = time.perf_counter()
        try:
            payload = self._build(self.spec.model, request, resolve_sampling(self.spec, request))
            done = self._call(self.client, payload)
        except Exception as exc:  # recorded per row, never the key (not in exception text)
            return error_completion(exc, time.perf_counter() - start)
        return replace(done, latency_s=time.perf_counter() - start)

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, max(1, len(requests)))) as pool:
            return list(pool.map(self._one, requests))


def create_api_model(spec: ModelSpec) -> ApiChatModel:
    """An OpenAI-compatible or Anthropic model; a UserError when its key variable is unset.
    Its client retries a rate-limited or failed request `max_retries` times with backoff
    and gives each `request_timeout` seconds (with the SDKs' defaults, 2 and 600, a sweep
    at its rate limit loses rows, and a dropped connection waits 10 min)."""
    key = api_key(spec.backend)
    limits = {"timeout": spec.request_timeout, "max_retries": spec.max_retries}
    if spec.backend == "openai":
        from openai import OpenAI

        base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or None
        client = OpenAI(api_key=key, base_url=base_url, **limits)
        return ApiChatModel(spec, client, openai_payload, _openai_call)
    from anthropic import Anthropic

    base_url = spec.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
    client = Anthropic(api_key=key, base_url=base_url, **limits)
    return ApiChatModel(spec, client, anthropic_payload, _anthropic_call)
