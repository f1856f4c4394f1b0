"""LLM-as-a-judge evaluators on lasagna's model backends and judge benchmarks.

`LLMJudge("correctness")` scores an output with one of lasagna's judge benchmarks (the same
versioned prompts, JSON schemas and formulas as `benchmark run --judge`). The judge model
lives in one Ray actor per (benchmark, model), built when the evaluation starts and shared by
every worker; concurrent calls are judged as one batch, and each call carries the trial's W3C
trace context, so the judge's LLM span nests under the EVALUATOR span and is stored with the
trial's trace.

`answer_correctness()` is the ready one: G-Eval correctness of the output against the target
on the packaged SmolLM2 through vLLM (a 135M model: a smoke-level judge on a laptop; pass
`ModelSpec(model=..., backend=...)` for a real one).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from typing import Any

from lasagna.cache import model_calls_location
from lasagna.errors import Problem, UserError
from lasagna.evaluation import tracing
from lasagna.models.spec import ModelSpec

NAMESPACE = "lasagna"
BATCH_WINDOW_S = 0.02  # how long a judge call waits for concurrent ones to batch with
MAX_CONCURRENT_CALLS = 256  # judge calls one actor accepts at once (they batch)


class JudgeError(RuntimeError):
    """The judge gave no usable verdict (recorded on the trial)."""


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else tracing.to_json(value)


def _field(value: Any, keys: tuple[str, ...]) -> str:
    """A value's text, or the first of `keys` a dict has (a question, an answer)."""
    if isinstance(value, dict):
        for key in keys:
            if key in value:
                return _text(value[key])
    return _text(value)


def _input_of(data: Any) -> str:
    return _field(data, ("question", "input", "query", "prompt"))


class JudgeActor:
    """Holds one judge model. Concurrent calls (a threaded actor) are gathered for
    `BATCH_WINDOW_S` and judged as one batch (one engine call per judge step), and each case
    gets an LLM span under its own caller's EVALUATOR span (W3C context in the call)."""

    def __init__(
        self, benchmark_id: str, spec: ModelSpec, params: dict[str, Any], calls: Any = None
    ):
        from lasagna.judges.params import JudgeParams
        from lasagna.judges.registry import get_benchmark
        from lasagna.models.call_cache import with_call_cache
        from lasagna.models.registry import create_chat_model

        self.benchmark = get_benchmark(benchmark_id)
        self.params = JudgeParams(**params)
        self.spec = spec
        # `calls`: the model-call cache (lasagna.models.call_cache.ModelCalls; None: off)
        self.model = with_call_cache(create_chat_model(spec), calls, spec)
        self._queue: list[dict[str, Any]] = []
        self._queue_lock = threading.Lock()
        self._leader = threading.Lock()

    def judge(self, case: dict[str, Any], carrier: dict[str, str]):
        item: dict[str, Any] = {"case": case, "carrier": carrier, "done": threading.Event()}
        with self._queue_lock:
            self._queue.append(item)
        while not item["done"].is_set():
            if self._leader.acquire(blocking=False):
                try:
                    time.sleep(BATCH_WINDOW_S)  # let concurrent callers join the batch
                    with self._queue_lock:
                        batch, self._queue = self._queue, []
                    if batch:
                        self._run(batch)
                finally:
                    self._leader.release()
            else:
                item["done"].wait(0.05)
        if "crash" in item:
            raise item["crash"]
        return item["result"], item["spans"]

    def _run(self, batch: list[dict[str, Any]]) -> None:
        from opentelemetry import trace

        from lasagna.judges.base import run_cases

        start_ns = time.time_ns()
        try:
            results = run_cases(self.benchmark, [b["case"] for b in batch], self.model, self.params)
        except Exception as exc:  # the engine itself failed: every caller hears it
            for item in batch:
                item["crash"] = exc
                item["done"].set()
            return
        end_ns = time.time_ns()
        tracer = tracing.tracer()
        for item, result in zip(batch, results, strict=True):
            parent = tracing.extract(item["carrier"])
            span = tracer.start_span(
                f"llm {self.spec.model}",
                context=parent,
                start_time=start_ns,
                kind=trace.SpanKind.CLIENT,
                attributes={
                    tracing.TYPE: "LLM",
                    tracing.INPUT: tracing.as_text(item["case"]),
                    tracing.OUTPUT: tracing.as_text(result.metrics or result.error),
                    tracing.PREFIX + "model": self.spec.model,
                    tracing.PREFIX + "backend": self.spec.backend,
                    tracing.PREFIX + "calls": result.calls,
                    tracing.PREFIX + "batch_size": len(batch),
                    tracing.PREFIX + "latency_s": (end_ns - start_ns) / 1e9,
                    "gen_ai.system": self.spec.backend,
                    "gen_ai.request.model": self.spec.model,
                    "gen_ai.usage.input_tokens": int(result.prompt_tokens),
                    "gen_ai.usage.output_tokens": int(result.completion_tokens),
                },
            )
            if result.error:
                span.set_status(trace.Status(trace.StatusCode.ERROR, result.error[:500]))
            span.end(end_time=end_ns)
            trace_id = format(trace.get_current_span(parent).get_span_context().trace_id, "032x")
            item["result"], item["spans"] = result, tracing.collector().take([trace_id])
            item["done"].set()


class LLMJudge:
    """An evaluator `(output, target) -> score` backed by a judge benchmark and a model.

    `benchmark`: a single-turn judge benchmark id (correctness, relevancy, faithfulness,
    hallucination, summarization); the case is built from the trial: input = the datapoint's
    data (or its question / input field), actual_output = the output (or its answer / output
    field), expected_output = the target, and any other field the benchmark needs from the
    datapoint's metadata or the output dict (e.g. retrieval_context).
    Returns the benchmark's main metric (one score dimension named after the evaluator key).
    `cache`: the model-call cache (True: $LASAGNA_CACHE/model-calls, False: off, or a folder
    / URI), so re-scoring the same outputs computes no judge call twice.
    """

    def __init__(
        self,
        benchmark: str = "correctness",
        model: ModelSpec | None = None,
        params: dict[str, Any] | None = None,
        metric: str | None = None,
        cache: bool | str = True,
    ):
        from lasagna.judges.registry import get_benchmark

        try:
            module = get_benchmark(benchmark)
        except KeyError as err:
            raise UserError(Problem(str(err.args[0]), field="benchmark")) from err
        if "turns" in module.REQUIRED:
            raise UserError(
                Problem(
                    f"{benchmark} judges conversations, not one output",
                    field="benchmark",
                    fix="use correctness, relevancy, faithfulness, hallucination or summarization",
                )
            )
        self.benchmark = module.ID
        self.required = tuple(module.REQUIRED)
        self.fields = self.required + tuple(getattr(module, "OPTIONAL", ()))
        self.metric = metric or module.PRIMARY
        self.model = model or ModelSpec(max_tokens=128)
        self.params = dict(params or {})
        self.cache = model_calls_location(cache)
        ident = json.dumps(
            [self.benchmark, self.model.model_dump(mode="json"), self.params, self.cache]
        )
        self.actor_name = "lasagna-judge-" + hashlib.sha256(ident.encode()).hexdigest()[:12]
        self._actor: Any = None

    def prepare(self) -> None:
        """Start (or find) the judge actor; evaluate() calls this once before the trials."""
        import ray

        from lasagna.models.call_cache import model_calls

        res = self.model.resources
        calls = model_calls(self.cache, self.model, gpu=res.num_gpus > 0)  # hashed here, once
        self._actor = (
            ray.remote(JudgeActor)
            .options(
                name=self.actor_name,
                namespace=NAMESPACE,
                get_if_exists=True,
                num_cpus=res.num_cpus,
                num_gpus=res.num_gpus,
                max_restarts=1,
                max_task_retries=1,
                max_concurrency=MAX_CONCURRENT_CALLS,
            )
            .remote(self.benchmark, self.model, self.params, calls)
        )

    def case(self, output: Any, target: Any) -> dict[str, Any]:
        from lasagna.evaluation.trial import current_datapoint

        point = current_datapoint()
        case: dict[str, Any] = {
            "input": _input_of(point.data) if point else "",
            "actual_output": _field(output, ("answer", "output", "text")),
            "expected_output": _text(target),
        }
        extra = {**(point.metadata or {})} if point else {}
        if isinstance(output, dict):
            extra |= output
        for name in self.fields:
            if name not in case and name in extra:
                case[name] = extra[name]
        missing = [f for f in self.required if f not in case]
        if missing:
            raise JudgeError(f"{self.benchmark} needs {missing} (put them in metadata)")
        return case

    def __call__(self, output: Any, target: Any) -> float:
        import ray

        if self._actor is None:
            self._actor = ray.get_actor(self.actor_name, namespace=NAMESPACE)
        result, spans = ray.get(
            self._actor.judge.remote(self.case(output, target), tracing.inject())
        )
        tracing.collector().adopt(spans)
        if result.error:
            raise JudgeError(result.error)
        value = result.metrics.get(self.metric)
        if value is None:
            raise JudgeError(f"the judge gave no {self.metric}: {result.metrics}")
        return float(value)


def answer_correctness(model: ModelSpec | None = None, cache: bool | str = True) -> LLMJudge:
    """The ready judge: correctness of the output against the target (G-Eval, 0..1)."""
    return LLMJudge("correctness", model, cache=cache)
