"""LLM-as-a-judge evaluators on lasagna's model backends and judge benchmarks.

`LLMJudge("correctness")` scores an output with one of lasagna's judge benchmarks (the same
versioned prompts, JSON schemas and formulas as `benchmark run --judge`). Its calls go to the
run's shared server of the judge model (lasagna.stages.model_hub: one load for every worker,
started when the evaluation starts, concurrent calls batched into one engine call), through
the `lasagna.model(...)` client, so each judge call is an LLM span under the EVALUATOR span
of its trial.

`answer_correctness()` is the ready one: G-Eval correctness of the output against the target
on the packaged SmolLM2 through vLLM (a 135M model: a smoke-level judge on a laptop; pass
`ModelSpec(model=..., backend=...)` for a real one); `g_eval("your criterion")` scores the
output by a criterion of your own (the g-eval judge benchmark).
"""

from __future__ import annotations

from typing import Any

from lasagna.cache import model_calls_location
from lasagna.common import tracing
from lasagna.errors import Problem, UserError
from lasagna.models.client import check_usable
from lasagna.models.spec import ModelSpec
from lasagna.models.structured import check_structured_sampling


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


# what only the datapoint gives: where it comes from, and what to give
UP_FRONT = {
    "input": ("the datapoint's data", "data (the question)"),
    "expected_output": ("the datapoint's target", "a target"),
}


class LLMJudge:
    """An evaluator `(output, target) -> score` backed by a judge benchmark and a model.

    `benchmark`: a single-turn judge benchmark id (correctness, relevancy, faithfulness,
    hallucination, summarization, g-eval with `params={"criteria": ...}`); the case is
    built from the trial: input = the datapoint's data (or its question / input field),
    actual_output = the output (or its answer / output
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
        from lasagna.judges.params import parse_params
        from lasagna.judges.registry import (
            benchmarks,
            get_benchmark,
            parameter_problems,
            required_columns,
        )

        try:
            module = get_benchmark(benchmark)
        except KeyError as err:
            raise UserError(Problem(str(err.args[0]), field="benchmark")) from err
        if "turns" in module.REQUIRED:
            raise UserError(
                Problem(
                    f"{benchmark} judges conversations, not one output",
                    field="benchmark",
                    fix="use a single-turn judge: "
                    + ", ".join(b for b, m in benchmarks().items() if "turns" not in m.REQUIRED),
                )
            )
        parsed, problems = parse_params(dict(params or {}), where="params")
        if not problems:
            problems = parameter_problems(module.ID, parsed)
        if problems:
            raise UserError(problems, title=f"the {module.ID} judge's params:")
        self.benchmark = module.ID
        self.required = required_columns(module.ID, parsed)
        self.fields = self.required + tuple(getattr(module, "OPTIONAL", ()))
        self.metric = metric or module.PRIMARY
        self.model = model or ModelSpec(max_tokens=128)
        check_structured_sampling(self.model)
        check_usable(self.model)  # an uncached id or a missing key: refused here
        self.params = dict(params or {})
        self.cache = model_calls_location(cache)
        self._calls: Any = None  # the model-call cache's settings, set by prepare()

    def identity(self) -> dict[str, Any]:
        """What its scores depend on (part of an evaluation's trial key): the benchmark's
        prompts and parameters, the metric, and the model (not where it runs)."""
        from lasagna.judges.params import parse_params
        from lasagna.judges.registry import identity

        model = self.model.model_dump(
            mode="json", exclude={"resources", *self.model.PLACEMENT_FIELDS}
        )
        found = identity(self.benchmark, parse_params(self.params)[0])
        return found | {"metric": self.metric, "model": model}

    def prepare(self, hub: Any = None) -> None:
        """Before the trials (evaluate() calls it once): hash the model for the call cache,
        and have the run's `hub` load the judge model while nothing waits for it yet."""
        from lasagna.models.call_cache import model_calls
        from lasagna.models.identity import engine_gpu

        if hub is None:
            gpu = engine_gpu(self.model)
        else:  # where the hub's pool places the engine on the connected cluster
            from lasagna.stages.pools import engine_placement

            gpu = engine_placement(self.model)[0] > 0
        self._calls = model_calls(self.cache, self.model, gpu=gpu)  # hashed here, once
        if hub is not None:
            hub.servers.remote(self.model)

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
            raise JudgeError(
                f"{self.benchmark} needs {missing} (put them in the datapoint's metadata, "
                "or have the executor return a dict holding them)"
            )
        return case

    def missing_up_front(self, points: list[Any], ids: list[str]) -> dict[str, list[str]]:
        """Required field -> task ids of the datapoints that cannot give it, for the fields
        the datapoint alone gives (input: its data, expected_output: its target), so they are
        refused before any model loads; the others may come from the output (a dict)."""
        from lasagna.judges.params import parse_params
        from lasagna.judges.registry import missing_by_row

        later = {f: True for f in self.required if f not in UP_FRONT}  # known once it runs
        cases = [
            {"id": tid, "input": _input_of(p.data), "expected_output": _text(p.target)} | later
            for p, tid in zip(points, ids, strict=True)
        ]
        return missing_by_row(self.benchmark, cases, parse_params(self.params)[0])

    def __call__(self, output: Any, target: Any) -> float:
        from lasagna.judges.base import run_cases
        from lasagna.judges.params import parse_params
        from lasagna.judges.registry import get_benchmark
        from lasagna.models.client import ModelClient

        model = ModelClient(self.model, self._calls)
        module = get_benchmark(self.benchmark)
        case = self.case(output, target)
        (result,) = run_cases(module, [case], model, parse_params(self.params)[0])
        self.annotate(result.metrics)
        if result.error:
            raise JudgeError(result.error)
        value = result.metrics.get(self.metric)
        if value is None:
            raise JudgeError(f"the judge gave no {self.metric}: {result.metrics}")
        return float(value)

    def annotate(self, metrics: dict[str, Any]) -> None:
        """The judgement beside the score, on the EVALUATOR span being recorded: which judge,
        its reason and verdicts, and whether the row was judged at all (a faithfulness 1.0
        over no claims is `degenerate`); the trial's warnings are read from here
        (lasagna.stages.sdk_scores.judge_warnings) and SQL finds them in `spans`."""
        from opentelemetry import trace

        from lasagna.judges.degenerate import DEGENERATE, DEGENERATE_REASON

        span = trace.get_current_span()
        if not span.is_recording():
            return
        said = {
            "benchmark": self.benchmark,
            "metric": self.metric,
            "degenerate": bool(metrics.get(DEGENERATE)),
            "degenerate_reason": metrics.get(DEGENERATE_REASON),
            "passed": metrics.get("passed"),
            "reason": metrics.get("reason"),
        }
        rest = {
            k: v
            for k, v in metrics.items()
            if k not in (self.metric, DEGENERATE, DEGENERATE_REASON, "passed", "reason")
        }
        if rest:  # verdicts, counts: as JSON text
            said["details"] = tracing.to_json(rest)
        for key, value in said.items():
            if value is not None:
                span.set_attribute(tracing.JUDGE + key, value)


def answer_correctness(model: ModelSpec | None = None, cache: bool | str = True) -> LLMJudge:
    """The ready judge: correctness of the output against the target (G-Eval, 0..1)."""
    return LLMJudge("correctness", model, cache=cache)


def g_eval(
    criteria: str,
    evaluation_steps: list[str] | None = None,
    fields: list[str] | None = None,
    model: ModelSpec | None = None,
    cache: bool | str = True,
) -> LLMJudge:
    """A judge of your own criterion (G-Eval, 0..1): `g_eval("Is the answer polite?")`.
    `evaluation_steps`: fixed steps (else the judge model writes them from the criterion);
    `fields`: what the judge reads (default input and actual_output; add expected_output,
    the target, or context / retrieval_context from the datapoint's metadata)."""
    params: dict[str, Any] = {"criteria": criteria}
    if evaluation_steps is not None:
        params["evaluation_steps"] = list(evaluation_steps)
    if fields is not None:
        params["fields"] = list(fields)
    return LLMJudge("g-eval", model, params=params, cache=cache)


def check_judged_fields(evaluators: dict[str, Any], dataset: Any, ids: list[str]) -> None:
    """Refuse, before Ray starts, datapoints that lack a field an LLM judge requires and
    only the datapoint can give (a judge would otherwise score an empty field), naming
    their task ids, as `benchmark run --judge` refuses rows without a required column."""
    problems = []
    for name, judge in evaluators.items():
        if not isinstance(judge, LLMJudge):
            continue
        for column, lacking in judge.missing_up_front(list(dataset.points), ids).items():
            shown = ", ".join(lacking[:5]) + (", ..." if len(lacking) > 5 else "")
            drop = " (or leave it out of fields)" if judge.benchmark == "g-eval" else ""
            problems.append(
                Problem(
                    f"the {judge.benchmark} judge reads {column} ({UP_FRONT[column][0]}), which "
                    f"{len(lacking)} of {len(ids)} datapoint(s) lack: task id(s) {shown}",
                    file=dataset.source,
                    field=f"evaluators[{name!r}]",
                    fix=f"give every datapoint {UP_FRONT[column][1]}{drop}, or leave those "
                    "datapoints out",
                )
            )
    if problems:
        raise UserError(problems, title="datapoints lack what a judge reads; nothing ran")
