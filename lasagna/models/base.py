"""One small protocol for every chat model: generators now, judges (structured JSON) next.

A backend turns a batch of `ChatRequest`s into one `Completion` per request, in order. A request
that fails yields a `Completion` with `error` set instead of raising for the whole batch, so
the pipeline can record and count the failed rows and keep the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:
    from lasagna.models.spec import ModelSpec


class Message(TypedDict):
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One conversation to complete. None overrides mean "use the ModelSpec's value"."""

    messages: list[Message]
    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    json_schema: dict[str, Any] | None = None  # structured output: the reply must match it
    logprobs: int | None = None  # top-k log-probabilities per generated token (G-Eval)


@dataclass(frozen=True)
class Completion:
    """A model's reply, or the reason there is none (`error`)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # seconds the caller waited for this reply (its batch, locally)
    error: str | None = None
    finish_reason: str | None = None  # "stop", "length", ... as the backend reports it
    tokens: tuple[str, ...] | None = None  # generated tokens, decoded (when logprobs asked)
    # per generated token: its top alternatives {decoded token: log-probability}
    top_logprobs: tuple[dict[str, float], ...] | None = None
    # from the model-call cache: True a hit, False computed and stored, None not cacheable
    cached: bool | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Sampling:
    """The sampling parameters one request runs with, after overrides."""

    temperature: float
    max_tokens: int
    stop: tuple[str, ...] = ()
    seed: int | None = None
    json_schema: dict[str, Any] | None = field(default=None, hash=False)
    logprobs: int | None = None


def resolve_sampling(spec: ModelSpec, request: ChatRequest) -> Sampling:
    """Merge a request's overrides over the spec's defaults (one place for every backend)."""
    return Sampling(
        temperature=spec.temperature if request.temperature is None else request.temperature,
        max_tokens=spec.max_tokens if request.max_tokens is None else request.max_tokens,
        stop=tuple(spec.stop if request.stop is None else request.stop),
        seed=spec.seed if request.seed is None else request.seed,
        json_schema=request.json_schema,
        logprobs=request.logprobs,
    )


def error_completion(exc: BaseException, latency_s: float = 0.0) -> Completion:
    """A failed request, with a one-line reason (type and message) for the results file."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return Completion(text="", latency_s=latency_s, error=f"{type(exc).__name__}: {message}"[:500])


def schema_instruction(schema: dict) -> str:
    """The instruction every backend adds for a JSON schema (vLLM also constrains decoding)."""
    return (
        "Reply with only a JSON object that matches this JSON schema, no other text:\n"
        + json.dumps(schema, sort_keys=True)
    )


def with_schema_instruction(request: ChatRequest) -> list[Message]:
    """The messages a backend sends: the schema instruction appended when one is asked.

    Every backend sends the same text (constrained decoding, where there is some, comes on
    top), so a judge prompt is identical across engines.
    """
    messages = [Message(role=m["role"], content=m["content"]) for m in request.messages]
    if request.json_schema is None:
        return messages
    instruction = schema_instruction(request.json_schema)
    if messages and messages[-1]["role"] == "user":  # some chat templates need alternation
        last = messages[-1]
        messages[-1] = Message(role="user", content=f"{last['content']}\n\n{instruction}")
    else:
        messages.append(Message(role="user", content=instruction))
    return messages


@runtime_checkable
class ChatModel(Protocol):
    """What the generation stage (and the judges) call."""

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        """One Completion per request, in order; failures are Completions with `error`."""
        ...
