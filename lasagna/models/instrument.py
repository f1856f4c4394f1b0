"""LLM spans for lasagna's own model clients, made automatically inside a trial.

`instrument_models()` wraps `generate` of the vLLM, transformers and API chat models once per
process (as OpenTelemetry's instrumentation libraries wrap client methods), and the sync
`create` of the OpenAI chat-completions and Anthropic messages clients (not streaming) once
the user's code has imported them (importing them here would cost seconds per worker).
Outside a trial
(no recording span is current, e.g. in a benchmark pipeline) the wrapper only calls through.
Inside one (or under a trial's context carried into an actor), every request of the batch
gets an LLM span under the current span with the
model, tokens in / out and latency, using the OpenTelemetry GenAI attribute names.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import sys
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import trace

from lasagna.common import tracing

_DONE: set[str] = set()
_IN_MODEL = contextvars.ContextVar("lasagna_in_model_call", default=False)


def _wrap(cls: type) -> None:
    original = cls.generate
    if getattr(original, "_lasagna_traced", False):
        return

    @functools.wraps(original)
    def generate(self: Any, requests: list[Any]) -> list[Any]:
        return traced_generate(functools.partial(original, self), self.spec, requests)

    generate._lasagna_traced = True  # type: ignore[attr-defined]
    cls.generate = generate


def traced_generate(model: Any, spec: Any, requests: list[Any]) -> list[Any]:
    """`model.generate(requests)` (or `model(requests)`), with one LLM span per request
    when a span is current and no traced call encloses this one."""
    call = getattr(model, "generate", model)
    if _IN_MODEL.get() or not trace.get_current_span().get_span_context().is_valid:
        return call(requests)
    start_ns = time.time_ns()
    token = _IN_MODEL.set(True)  # the calls it makes (an SDK client, a wrapped backend) are this
    try:
        completions = call(requests)
    finally:
        _IN_MODEL.reset(token)
    record_llm_spans(spec, requests, completions, start_ns, time.time_ns())
    return completions


def record_llm_spans(
    spec: Any, requests: list[Any], completions: list[Any], start_ns: int, end_ns: int
) -> None:
    """One LLM span per request (children of the current span); a failed request is an
    error span."""
    tracer = tracing.tracer()
    for request, done in zip(requests, completions, strict=False):
        span = tracer.start_span(
            f"llm {spec.model}",
            start_time=start_ns,
            kind=trace.SpanKind.CLIENT,
            attributes={
                tracing.TYPE: "LLM",
                tracing.INPUT: tracing.as_text(list(request.messages)),
                tracing.OUTPUT: tracing.as_text(done.text),
                tracing.PREFIX + "model": spec.model,
                tracing.PREFIX + "backend": spec.backend,
                tracing.PREFIX + "latency_s": float(done.latency_s),
                "gen_ai.system": spec.backend,
                "gen_ai.request.model": spec.model,
                "gen_ai.usage.input_tokens": int(done.prompt_tokens),
                "gen_ai.usage.output_tokens": int(done.completion_tokens),
            },
        )
        if done.error:
            span.set_status(trace.Status(trace.StatusCode.ERROR, done.error))
        span.end(end_time=end_ns)


def _read_openai(response: Any) -> tuple[str, int, int]:
    choice = response.choices[0] if getattr(response, "choices", None) else None
    text = (choice.message.content or "") if choice is not None else ""
    usage = getattr(response, "usage", None)
    return (
        text,
        getattr(usage, "prompt_tokens", 0) or 0,
        getattr(usage, "completion_tokens", 0) or 0,
    )


def _read_anthropic(response: Any) -> tuple[str, int, int]:
    blocks = getattr(response, "content", None) or []
    text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
    usage = getattr(response, "usage", None)
    return text, getattr(usage, "input_tokens", 0) or 0, getattr(usage, "output_tokens", 0) or 0


def _wrap_sdk(cls: type, system: str, read: Callable[[Any], tuple[str, int, int]]) -> None:
    """An LLM span around a sync SDK `create` call made inside a trial (not streaming)."""
    original = cls.create
    if getattr(original, "_lasagna_traced", False):
        return

    @functools.wraps(original)
    def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        inside = trace.get_current_span().get_span_context().is_valid
        if not inside or _IN_MODEL.get() or kwargs.get("stream"):
            return original(self, *args, **kwargs)
        model = str(kwargs.get("model", "?"))
        attributes = {
            tracing.TYPE: "LLM",
            tracing.INPUT: tracing.as_text(kwargs.get("messages")),
            tracing.PREFIX + "model": model,
            tracing.PREFIX + "backend": system,
            "gen_ai.system": system,
            "gen_ai.request.model": model,
        }
        with tracing.tracer().start_as_current_span(
            f"llm {model}", kind=trace.SpanKind.CLIENT, attributes=attributes
        ) as span:
            start = time.perf_counter()
            response = original(self, *args, **kwargs)
            text, tokens_in, tokens_out = read(response)
            span.set_attribute(tracing.OUTPUT, tracing.as_text(text))
            span.set_attribute(tracing.PREFIX + "latency_s", time.perf_counter() - start)
            span.set_attribute("gen_ai.usage.input_tokens", int(tokens_in))
            span.set_attribute("gen_ai.usage.output_tokens", int(tokens_out))
            return response

    create._lasagna_traced = True  # type: ignore[attr-defined]
    cls.create = create


SDKS = (
    ("openai.resources.chat.completions", "Completions", "openai", _read_openai),
    ("anthropic.resources.messages", "Messages", "anthropic", _read_anthropic),
)


def instrument_models() -> None:
    """Wrap every lasagna chat model class, and the OpenAI / Anthropic SDK clients the
    process has imported (idempotent and cheap: called before every batch)."""
    if "models" not in _DONE:
        from lasagna.models.api_backend import ApiChatModel
        from lasagna.models.hf_backend import HfChatModel
        from lasagna.models.vllm_backend import VllmChatModel

        for cls in (VllmChatModel, HfChatModel, ApiChatModel):
            _wrap(cls)
        _DONE.add("models")
    for module, name, system, read in SDKS:
        if module in _DONE or module.split(".")[0] not in sys.modules:
            continue
        try:
            _wrap_sdk(getattr(importlib.import_module(module), name), system, read)
        except (ImportError, AttributeError):
            pass  # another layout of the SDK: nothing to wrap
        _DONE.add(module)
