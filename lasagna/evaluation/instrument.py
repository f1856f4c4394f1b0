"""LLM spans for lasagna's own model clients, made automatically inside a trial.

`instrument_models()` wraps `generate` of the vLLM, transformers and API chat models once per
process (as OpenTelemetry's instrumentation libraries wrap client methods). Outside a trial
(no recording span is current, e.g. in a benchmark pipeline) the wrapper only calls through.
Inside one (or under a trial's context carried into an actor), every request of the batch
gets an LLM span under the current span with the
model, tokens in / out and latency, using the OpenTelemetry GenAI attribute names.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from opentelemetry import trace

from lasagna.evaluation import tracing

_DONE: set[str] = set()


def _wrap(cls: type) -> None:
    original = cls.generate
    if getattr(original, "_lasagna_traced", False):
        return

    @functools.wraps(original)
    def generate(self: Any, requests: list[Any]) -> list[Any]:
        if not trace.get_current_span().get_span_context().is_valid:
            return original(self, requests)
        start_ns = time.time_ns()
        completions = original(self, requests)
        end_ns = time.time_ns()
        record_llm_spans(self.spec, requests, completions, start_ns, end_ns)
        return completions

    generate._lasagna_traced = True  # type: ignore[attr-defined]
    cls.generate = generate


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


def instrument_models() -> None:
    """Wrap every lasagna chat model class (idempotent; cheap after the first call)."""
    if "models" in _DONE:
        return
    from lasagna.models.api_backend import ApiChatModel
    from lasagna.models.hf_backend import HfChatModel
    from lasagna.models.vllm_backend import VllmChatModel

    for cls in (VllmChatModel, HfChatModel, ApiChatModel):
        _wrap(cls)
    _DONE.add("models")
