"""LLM-as-a-judge evaluators on lasagna's model backends and judge benchmarks.

`LLMJudge("correctness")` scores an output with one of lasagna's judge benchmarks (the same
versioned prompts, JSON schemas and formulas as `benchmark run --judge`). The judge model
lives in one Ray actor per (benchmark, model), built when the evaluation starts and shared by
every worker; each call carries the trial's W3C trace context, so the judge's LLM span nests
under the EVALUATOR span and is stored with the trial's trace.

`answer_correctness()` is the ready one: G-Eval correctness of the output against the target
on the packaged SmolLM2 through vLLM (a 135M model: a smoke-level judge on a laptop; pass
`ModelSpec(model=..., backend=...)` for a real one).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.evaluation import tracing
from lasagna.sweep.systems import ModelSpec

NAMESPACE = "lasagna"


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
    """Holds one judge model; judges one case per call under the caller's trace context."""

    def __init__(self, benchmark_id: str, spec: ModelSpec, params: dict[str, Any]):
        from lasagna.evaluation.instrument import instrument_models
        from lasagna.judges.params import JudgeParams
        from lasagna.judges.registry import get_benchmark
        from lasagna.models.base import create_chat_model

        instrument_models()
        self.benchmark = get_benchmark(benchmark_id)
        self.params = JudgeParams(**params)
        self.model = create_chat_model(spec)

    def judge(self, case: dict[str, Any], carrier: dict[str, str]):
        from opentelemetry import context, trace

        from lasagna.judges.base import run_cases

        ctx = tracing.extract(carrier)
        token = context.attach(ctx)
        try:
            (result,) = run_cases(self.benchmark, [case], self.model, self.params)
        finally:
            context.detach(token)
        trace_id = format(trace.get_current_span(ctx).get_span_context().trace_id, "032x")
        return result, tracing.collector().take([trace_id])


class LLMJudge:
    """An evaluator `(output, target) -> score` backed by a judge benchmark and a model.

    `benchmark`: a single-turn judge benchmark id (correctness, relevancy, faithfulness,
    hallucination, summarization); the case is built from the trial: input = the datapoint's
    data (or its question / input field), actual_output = the output (or its answer / output
    field), expected_output = the target, and any other field the benchmark needs from the
    datapoint's metadata or the output dict (e.g. retrieval_context).
    Returns the benchmark's main metric (one score dimension named after the evaluator key).
    """

    def __init__(
        self,
        benchmark: str = "correctness",
        model: ModelSpec | None = None,
        params: dict[str, Any] | None = None,
        metric: str | None = None,
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
        ident = json.dumps([self.benchmark, self.model.model_dump(mode="json"), self.params])
        self.actor_name = "lasagna-judge-" + hashlib.sha256(ident.encode()).hexdigest()[:12]
        self._actor: Any = None

    def prepare(self) -> None:
        """Start (or find) the judge actor; evaluate() calls this once before the trials."""
        import ray

        res = self.model.resources
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
            )
            .remote(self.benchmark, self.model, self.params)
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


def answer_correctness(model: ModelSpec | None = None) -> LLMJudge:
    """The ready judge: correctness of the output against the target (G-Eval, 0..1)."""
    return LLMJudge("correctness", model)
