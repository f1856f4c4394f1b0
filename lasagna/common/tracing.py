"""Spans with the OpenTelemetry SDK: one provider per process, a collector, W3C context.

Every process that runs trials (the driver, Ray task workers, executor and judge actors)
gets one `TracerProvider` whose `Collector` keeps finished spans as plain records, grouped by
trace. A worker hands the records of its trials back with their results; the driver stores
them as the `spans` table and, when OTEL_EXPORTER_OTLP_ENDPOINT is set, sends them to that
collector (`export_otlp`). The parent context crosses process boundaries as a W3C
`traceparent` carrier inside the Ray task arguments.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

PREFIX = "lasagna.span."
TYPE = PREFIX + "type"
INPUT = PREFIX + "input"
OUTPUT = PREFIX + "output"
JUDGE = PREFIX + "judge."  # an LLM judge's verdict on its EVALUATOR span (evaluation.judge)
MAX_TEXT = 32_768  # characters of an input / output kept on a span

_PROPAGATOR = TraceContextTextMapPropagator()
_LOCK = threading.Lock()
_PROVIDER: TracerProvider | None = None
_COLLECTOR: Collector | None = None


class Collector(SpanProcessor):
    """Keeps every finished span as a record until `take` claims its trace."""

    def __init__(self) -> None:
        self._by_trace: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        record = span_record(span)
        with self._lock:
            self._by_trace.setdefault(record["trace_id"], []).append(record)

    def adopt(self, records: list[dict[str, Any]]) -> None:
        """Keep span records another process made for our traces (a judge actor's)."""
        with self._lock:
            for record in records:
                self._by_trace.setdefault(record["trace_id"], []).append(record)

    def take(self, trace_ids: Sequence[str]) -> list[dict[str, Any]]:
        with self._lock:
            return [r for t in trace_ids for r in self._by_trace.pop(t, [])]

    def take_all(self) -> list[dict[str, Any]]:
        with self._lock:
            out = [r for records in self._by_trace.values() for r in records]
            self._by_trace.clear()
            return out


def _setup() -> tuple[TracerProvider, Collector]:
    global _PROVIDER, _COLLECTOR
    with _LOCK:
        if _PROVIDER is None:
            name = os.environ.get("OTEL_SERVICE_NAME") or "lasagna"
            resource = Resource.create({"service.name": name})
            provider = TracerProvider(resource=resource)
            collector = Collector()
            provider.add_span_processor(collector)
            # Spans the user's own instrumentation makes (global tracer) nest and are kept too.
            if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
                trace.set_tracer_provider(provider)
            _PROVIDER, _COLLECTOR = provider, collector
    assert _PROVIDER is not None and _COLLECTOR is not None
    return _PROVIDER, _COLLECTOR


def tracer() -> trace.Tracer:
    return _setup()[0].get_tracer("lasagna.evaluation")


def collector() -> Collector:
    return _setup()[1]


def inject(context: Context | None = None) -> dict[str, str]:
    """The W3C trace context of `context` (default: the current one) as a dict."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=context)
    return carrier


def extract(carrier: dict[str, str] | None) -> Context:
    return _PROPAGATOR.extract(carrier or {})


def as_text(value: Any, limit: int | None = MAX_TEXT) -> str:
    """A value as text: strings as they are, everything else as JSON (`limit` chars)."""
    text = value if isinstance(value, str) else to_json(value)
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


def to_json(value: Any) -> str:
    try:
        return json.dumps(value, default=_default, allow_nan=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(repr(value))


def _default(value: Any) -> Any:
    if hasattr(value, "item"):
        try:
            return value.item()
        except (TypeError, ValueError):
            pass
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value)


def _attr(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """A finished span as plain, picklable data (what the `spans` table stores)."""
    ctx = span.get_span_context()
    attributes = {k: _attr(v) for k, v in (span.attributes or {}).items()}
    return {
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else None,
        "name": span.name,
        "kind": span.kind.name,
        "span_type": str(attributes.get(TYPE, "DEFAULT")),
        "start_ns": int(span.start_time or 0),
        "end_ns": int(span.end_time or 0),
        "status": span.status.status_code.name,
        "status_message": span.status.description,
        "attributes": attributes,
    }


def export_otlp(records: list[dict[str, Any]]) -> bool:
    """Send stored span records to OTEL_EXPORTER_OTLP_ENDPOINT; False when it is unset.

    The spans are rebuilt as SDK spans (same ids, times, attributes) and sent once, from
    the driver, so a worker that exits early loses nothing.
    """
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or not records:
        return False
    from opentelemetry.sdk.trace import Status, StatusCode
    from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

    if os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").startswith("grpc"):
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider, _ = _setup()
    spans = []
    for r in records:
        ctx = SpanContext(
            int(r["trace_id"], 16), int(r["span_id"], 16), True, TraceFlags(TraceFlags.SAMPLED)
        )
        parent = None
        if r["parent_span_id"]:
            parent = SpanContext(
                int(r["trace_id"], 16), int(r["parent_span_id"], 16), True, TraceFlags(1)
            )
        spans.append(
            ReadableSpan(
                name=r["name"],
                context=ctx,
                parent=parent,
                resource=provider.resource,
                attributes=r["attributes"],
                kind=SpanKind[r["kind"]],
                status=Status(StatusCode[r["status"]], r["status_message"]),
                start_time=r["start_ns"],
                end_time=r["end_ns"],
            )
        )
    exporter = OTLPSpanExporter()
    try:
        exporter.export(spans)
    finally:
        exporter.shutdown()
    return True
