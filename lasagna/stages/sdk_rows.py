"""One row of an sdk trial: run the executor on a datapoint, score the output with every
evaluator, trace it all. A row is one datapoint x trial index: what the evaluation-concepts
spec calls a *trial* (its `trial_index`, its `evaluation_trials` row); the engine's trial
is the whole evaluate() call (executor x data), whose rows these are.

The span tree of a row: EVALUATION (root) -> EXECUTOR (the executor's input and output,
with any LLM spans it causes nested under it) and one EVALUATOR per evaluator (the input it
scored and its score). A failure is recorded on its span and on the row, never raised. The
row's record comes from `lasagna.results.evaluations.row_record`, the one builder.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context

from lasagna.common import tracing
from lasagna.models.draws import set_draw
from lasagna.results.evaluations import row_record
from lasagna.stages.sdk_scores import ScoreError, score_dimensions
from lasagna.systems.executor import is_async

_CURRENT: contextvars.ContextVar[RowSpec | None] = contextvars.ContextVar(
    "lasagna_trial", default=None
)


def current_datapoint() -> RowSpec | None:
    """The datapoint being scored, for evaluators that need more than (output, target): an
    LLM judge reads the datapoint's input and metadata here."""
    return _CURRENT.get()


@dataclass(frozen=True)
class RowSpec:
    """One row to run: a datapoint and its trial index (the spec's trial); `order` is its
    place in the evaluation."""

    order: int
    task_id: str
    trial_index: int
    data: Any
    target: Any
    metadata: dict[str, Any] | None


class ExecutorTimeout(TimeoutError):
    """An executor call that gave no output within evaluate()'s `timeout`."""

    def __init__(self, timeout: float, ended: str = "abandoned"):
        super().__init__(
            f"no output within {timeout:g} s (evaluate(timeout={timeout:g})); the call was {ended}"
        )


def call_with_timeout(fn: Any, arg: Any, timeout: float | None) -> Any:
    """`fn(arg)`, waited for at most `timeout` seconds (None: as long as it takes).

    The call runs in a thread of its own with this thread's context (the trace span, the
    datapoint); past the limit it raises ExecutorTimeout here and the thread is left to end
    on its own, its result ignored: Python cannot stop a thread.
    """
    if timeout is None:
        return fn(arg)
    out: dict[str, Any] = {}
    context = contextvars.copy_context()

    def call() -> None:
        try:
            out["value"] = context.run(fn, arg)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            out["error"] = exc

    worker = threading.Thread(target=call, name="lasagna-executor-call", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise ExecutorTimeout(timeout)
    if "error" in out:
        raise out["error"]
    return out["value"]


def _error_text(exc: BaseException) -> str:
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}"[:2000] if message else type(exc).__name__


def _fail(span: trace.Span, exc: BaseException) -> None:
    span.record_exception(exc)
    span.set_status(trace.Status(trace.StatusCode.ERROR, _error_text(exc)[:500]))


class _Result:
    """What a `with` body of the recorder produced (the executor's output, a score)."""

    value: Any = None


class _Recorder:
    """The bookkeeping shared by the sync and async bodies of a row."""

    def __init__(self, spec: RowSpec, evaluation_id: str, parent: Context | None):
        self.spec = spec
        self.tracer = tracing.tracer()
        self.started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.t0 = time.perf_counter()
        self.root = self.tracer.start_span(
            "evaluation",
            context=parent,
            attributes={
                tracing.TYPE: "EVALUATION",
                tracing.INPUT: tracing.as_text(spec.data),
                tracing.PREFIX + "evaluation_id": evaluation_id,
                tracing.PREFIX + "task_id": spec.task_id,
                tracing.PREFIX + "trial_index": spec.trial_index,
            },
        )
        self.root_ctx = trace.set_span_in_context(self.root)
        self.output: Any = None
        self.errors: list[tuple[str, str]] = []  # (type, text)
        self.scores: dict[str, float | None] = {}
        self.executor_ok = False

    @contextmanager
    def executing(self) -> Iterator[_Result]:
        """The executor's span around the `with` body, which sets `.value` to its output; a
        failure is recorded on the span and the trial, not raised."""
        span = self.tracer.start_span(
            "executor",
            context=self.root_ctx,
            attributes={tracing.TYPE: "EXECUTOR", tracing.INPUT: tracing.as_text(self.spec.data)},
        )
        result = _Result()
        try:
            with trace.use_span(span, end_on_exit=False):
                yield result
            self.executor_done(span, result.value)
        except Exception as exc:
            self.executor_failed(span, exc)
        finally:
            span.end()

    def executor_done(self, span: trace.Span, output: Any) -> None:
        self.output, self.executor_ok = output, True
        span.set_attribute(tracing.OUTPUT, tracing.as_text(output))

    def executor_failed(self, span: trace.Span, exc: BaseException) -> None:
        _fail(span, exc)
        self.errors.append((type(exc).__name__, "executor: " + _error_text(exc)))

    @contextmanager
    def evaluating(self, name: str) -> Iterator[_Result]:
        """Evaluator `name`'s span around the `with` body, which sets `.value` to its score;
        a failure is recorded on the span and the trial, not raised."""
        scored = {"output": self.output, "target": self.spec.target}
        span = self.tracer.start_span(
            name,
            context=self.root_ctx,
            attributes={tracing.TYPE: "EVALUATOR", tracing.INPUT: tracing.as_text(scored)},
        )
        result = _Result()
        try:
            with trace.use_span(span, end_on_exit=False):
                yield result
            self.evaluator_done(span, name, result.value)
        except Exception as exc:
            self.evaluator_failed(span, name, exc)
        finally:
            span.end()

    def evaluator_done(self, span: trace.Span, name: str, value: Any) -> None:
        span.set_attribute(tracing.OUTPUT, tracing.as_text(value))
        try:
            dims = score_dimensions(name, value)
            clash = sorted(set(dims) & set(self.scores))
            if clash:
                raise ScoreError(
                    f"evaluator {name!r} gives dimension(s) {clash} another evaluator gave "
                    "already; rename a key"
                )
        except ScoreError as exc:
            self.evaluator_failed(span, name, exc)
            return
        span.set_attribute(tracing.PREFIX + "scores", tracing.to_json(dims))
        self.scores.update(dims)

    def evaluator_failed(self, span: trace.Span, name: str, exc: BaseException) -> None:
        _fail(span, exc)
        self.errors.append((type(exc).__name__, f"evaluator {name}: " + _error_text(exc)))

    def finish(self) -> dict[str, Any]:
        root = self.root
        if self.executor_ok:
            root.set_attribute(tracing.OUTPUT, tracing.as_text(self.output))
        if self.errors:
            root.set_status(trace.Status(trace.StatusCode.ERROR, self.errors[0][1][:500]))
        trace_id = format(root.get_span_context().trace_id, "032x")
        root.end()
        return row_record(
            self.spec,
            output=tracing.as_text(self.output, limit=None) if self.executor_ok else None,
            scores=self.scores,
            error="\n".join(text for _, text in self.errors) or None,
            error_type=self.errors[0][0] if self.errors else None,
            trace_id=trace_id,
            started_at=self.started_at,
            duration_s=time.perf_counter() - self.t0,
        )


def run_row(
    spec: RowSpec,
    executor: Any,
    evaluators: dict[str, Any],
    evaluation_id: str,
    parent: Context | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """A row whose executor and evaluators are plain functions (runs in any thread);
    `timeout`: the seconds the executor call may take."""
    _CURRENT.set(spec)
    set_draw(spec.trial_index)  # a sampled lasagna.model() draws anew per trial
    rec = _Recorder(spec, evaluation_id, parent)
    with rec.executing() as result:
        result.value = call_with_timeout(executor, spec.data, timeout)
    if rec.executor_ok:
        for name, fn in evaluators.items():
            with rec.evaluating(name) as result:
                result.value = fn(rec.output, spec.target)
                if asyncio.iscoroutine(result.value):
                    result.value = asyncio.run(result.value)
    return rec.finish()


async def run_row_async(
    spec: RowSpec,
    executor: Any,
    evaluators: dict[str, Any],
    evaluation_id: str,
    parent: Context | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """A row with an async executor; sync evaluators run in a thread, not on the loop. A
    call past `timeout` seconds is cancelled."""
    _CURRENT.set(spec)  # this task's own context (asyncio copies it per task)
    set_draw(spec.trial_index)
    rec = _Recorder(spec, evaluation_id, parent)
    with rec.executing() as result:
        limit = asyncio.timeout(timeout)
        try:
            async with limit:
                result.value = await executor(spec.data)
        except TimeoutError:
            if limit.expired():  # ours, not a TimeoutError of the executor's own
                raise ExecutorTimeout(timeout, "cancelled") from None  # type: ignore[arg-type]
            raise
    if rec.executor_ok:
        for name, fn in evaluators.items():
            with rec.evaluating(name) as result:
                if is_async(fn):
                    result.value = await fn(rec.output, spec.target)
                else:
                    result.value = await asyncio.to_thread(fn, rec.output, spec.target)
    return rec.finish()
