"""The Judge stage: rows of test cases -> judged rows -> the trial's judge metrics.

`JudgeStage` is a Ray Data callable class (an actor pool: each actor is a light client of
the run's pooled judge engines, lasagna.stages.pools, or holds its own judge model). It
also runs without Ray (tests, the bench): call it on a pyarrow table. Each call judges its
block with `lasagna.judges.base.run_cases`, one batched engine call per step of the
benchmark; a row that cannot be judged keeps its place with `error` set (never dropped)."""

from __future__ import annotations

import json
import math
import time
from functools import partial
from typing import Any

import pyarrow as pa

from lasagna.judges.base import RowResult, run_cases
from lasagna.judges.degenerate import DEGENERATE, DEGENERATE_REASON, trial_warnings
from lasagna.judges.params import JudgeParams, parse_params
from lasagna.judges.registry import get_benchmark, group_name
from lasagna.models.base import ChatModel
from lasagna.models.call_cache import ModelCalls
from lasagna.stages.busy import publish as publish_cpu_use
from lasagna.stages.pools import Pool, actor_model, stage_engine
from lasagna.stages.stage import Stage
from lasagna.systems import JudgeSystem, ModelSpec

CASE = "case"  # input column: the test case as JSON text
SKIP = "skip"  # a case holding this key is not judged (its generation failed): the reason
COST_COLUMNS = {
    "judge_calls": pa.int64(),
    "judge_prompt_tokens": pa.int64(),
    "judge_completion_tokens": pa.int64(),
    "judge_latency_s": pa.float64(),
    "judge_invalid_outputs": pa.int64(),
    "judge_truncated_outputs": pa.int64(),
    "judge_cache_hits": pa.int64(),
    "judge_cache_misses": pa.int64(),
    "block_rows": pa.int64(),
    "block_s": pa.float64(),
    "block_started_at": pa.float64(),  # epoch seconds: places blocks on a timeline
    "engine_load_s": pa.float64(),
}
NOT_METRICS = ("verdicts", "reason")


def column_type(name: str) -> pa.DataType:
    """Fixed types by name, so blocks (some all-error) always concatenate."""
    if name == "passed" or name.endswith(("_detected", "_weighted", "_degenerate")):
        return pa.bool_()
    if name.endswith("_reason"):
        return pa.string()
    if name.endswith(("_count", "_rubric_score")):
        return pa.int64()
    return pa.float64()


class JudgeStage:
    """Builds the judge model once per actor; judges blocks of rows."""

    def __init__(
        self,
        benchmark: str,
        spec: ModelSpec,
        parameters: dict[str, Any] | None = None,
        threads: int | None = None,
        model: ChatModel | None = None,  # an already built model (in-process use, tests)
        prefix: str = "",  # judged generation: "faithfulness_" keeps judges' columns apart
        servers: list | None = None,  # a pool's ModelServer actors (lasagna.stages.pools)
        calls: ModelCalls | None = None,  # the model-call cache; None: off
    ):
        self.prefix = prefix
        self.module = get_benchmark(benchmark)
        self.params, problems = parse_params(parameters or {})
        if problems:
            raise ValueError("; ".join(p.render() for p in problems))
        self.owns_model = model is None and not servers  # others' models are theirs to close
        if self.module.PROMPTS:
            self.model, self.load_s = actor_model(spec, threads, model, servers, calls)
        else:  # a code judge: nothing to ask, nothing to load
            publish_cpu_use()  # the stall watchdog sees it judge
            self.model, self.load_s, calls = None, 0.0, None
        self.caching = calls is not None

    def __del__(self):
        close = getattr(getattr(self, "model", None), "close", None)
        if close is not None and getattr(self, "owns_model", False):
            close()

    def __call__(self, batch: pa.Table | dict[str, Any]) -> pa.Table:
        table = batch if isinstance(batch, pa.Table) else pa.table(batch)
        cases = [json.loads(text) for text in table.column(CASE).to_pylist()]
        todo = [i for i, c in enumerate(cases) if not c.get(SKIP)]
        self.started_at = time.time()
        t0 = time.perf_counter()
        loaded_before = getattr(self.model, "load_s", 0.0)  # a pooled engine: 0 until loaded
        judged = run_cases(self.module, [cases[i] for i in todo], self.model, self.params)
        # the wait for a pooled engine to load on its first call is not judging time
        waited = max(0.0, getattr(self.model, "load_s", 0.0) - loaded_before)
        self.load_s = max(self.load_s, getattr(self.model, "load_s", 0.0))
        block_s = time.perf_counter() - t0 - waited
        self.started_at += waited
        results = [RowResult(error=f"not judged: {c.get(SKIP)}") for c in cases]
        for i, result in zip(todo, judged, strict=True):
            results[i] = result
        for name, values in self.columns(results, block_s).items():
            name = judge_column(self.prefix, name)
            if name in table.column_names:
                table = table.drop_columns([name])
            table = table.append_column(name, values)
        return table

    def columns(self, results: list[RowResult], block_s: float) -> dict[str, pa.Array]:
        names = list(self.module.OUTPUT_METRICS)
        for r in results:
            names += [k for k in r.metrics if k not in names and k not in NOT_METRICS]
        names += [n for n in (DEGENERATE, DEGENERATE_REASON) if n not in names]
        empty = {DEGENERATE: False}  # a judged row of a judge with nothing to extract
        out = {
            n: pa.array(
                [r.metrics.get(n, empty.get(n)) if r.metrics else None for r in results],
                column_type(n),
            )
            for n in names
        }
        out["reason"] = pa.array([r.metrics.get("reason") for r in results], pa.string())
        out["verdicts"] = pa.array(
            [json.dumps(r.metrics["verdicts"]) if r.metrics else None for r in results],
            pa.string(),
        )
        out["error"] = pa.array([r.error for r in results], pa.string())
        values = {
            "judge_calls": [r.calls for r in results],
            "judge_prompt_tokens": [r.prompt_tokens for r in results],
            "judge_completion_tokens": [r.completion_tokens for r in results],
            "judge_latency_s": [r.latency_s for r in results],
            "judge_invalid_outputs": [r.invalid_outputs for r in results],
            "judge_truncated_outputs": [r.truncated_outputs for r in results],
            # null when the cache is off, so counts say "off" rather than "0 hits"
            "judge_cache_hits": [r.cache_hits if self.caching else None for r in results],
            "judge_cache_misses": [r.cache_misses if self.caching else None for r in results],
            "block_rows": [len(results)] * len(results),
            "block_s": [block_s] * len(results),
            "block_started_at": [getattr(self, "started_at", time.time())] * len(results),
            "engine_load_s": [self.load_s] * len(results),
        }
        out.update({n: pa.array(values[n], typ) for n, typ in COST_COLUMNS.items()})
        return out


def judge_stage(
    system: JudgeSystem, prefix: str = "", pool: Pool | None = None, call_cache: str | None = None
) -> Stage:
    """The Judge stage: rows with a `case` column -> the judge's columns (under `prefix`
    when several judges score one generator's rows). With `pool` (the run's engines of the
    judge model) its actors are light clients; without, each actor loads the model;
    `call_cache`: the model-call cache's location (None: off)."""
    spec = system.model
    if system.uses_model:
        engine, res, gpus = stage_engine(spec, pool, call_cache)
    else:  # a code judge: light CPU actors, no engine
        light = {"num_cpus": min(spec.resources.num_cpus, 0.25), "num_gpus": 0, "resources": {}}
        engine, res, gpus = {}, spec.resources.model_copy(update=light), 0.0
    params = {"parameters": dict(system.parameters), "prefix": prefix}
    kwargs: dict[str, Any] = {"benchmark": system.benchmark, "spec": spec, **params, **engine}
    return Stage(
        f"judge:{system.benchmark}",
        JudgeStage,
        inputs=(CASE,),
        outputs=(),  # the benchmark's metric columns, all under `prefix` (see JudgeStage)
        constructor_kwargs=kwargs,
        resources=res,
        resources_key="judge",
        num_gpus=gpus,
    )


def judge_metrics(table: pa.Table, prefix: str = "") -> tuple[dict[str, float], dict[str, int]]:
    """Means of the per-row metrics over judged rows (booleans as rates), costs and speed:
    judgments_per_s, judged rows per second the engine was busy (each block's wall time
    counted once; a block answered wholly from the call cache took no engine time, as in
    tokens_per_s); `passed` becomes `pass_rate`. With a prefix (judged generation) only
    that judge's columns count, and the names keep the prefix."""
    p = prefix
    costs = {judge_column(p, c) for c in COST_COLUMNS}
    skip = {p + "reason", p + "verdicts", p + "error", p + DEGENERATE, CASE, "id", *costs}
    records = table.to_pylist()
    ok = [r for r in records if not r.get(p + "error")]
    metrics: dict[str, float] = {}
    for name in table.column_names:
        typ = table.schema.field(name).type
        numeric = pa.types.is_floating(typ) or pa.types.is_integer(typ) or pa.types.is_boolean(typ)
        if name in skip or not numeric or not name.startswith(p):
            continue
        values = [float(r[name]) for r in ok if r.get(name) is not None]
        if values:
            out = p + "pass_rate" if name == p + "passed" else name
            metrics[out] = math.fsum(values) / len(values)

    col = partial(judge_column, p)  # one of this judge's columns
    block = col("block_started_at")
    engine = {r.get(block) for r in records if r.get(col("judge_cache_misses")) != 0}
    timed = [r for r in records if r.get(block) in engine]
    busy = sum((r[col("block_s")] or 0.0) / max(1, r[col("block_rows")] or 1) for r in timed)
    if busy > 0:
        metrics[p + "judgments_per_s"] = sum(1 for r in timed if not r.get(p + "error")) / busy
    counts = {
        p + "judged": len(ok),
        p + "failed": len(records) - len(ok),
        p + "degenerate": sum(1 for r in ok if r.get(col(DEGENERATE))),
        "judge_invalid_outputs": sum(r[col("judge_invalid_outputs")] or 0 for r in records),
        p + "judge_calls": sum(r[col("judge_calls")] or 0 for r in records),
        p + "judge_truncated_outputs": sum(r[col("judge_truncated_outputs")] or 0 for r in records),
        p + "prompt_tokens": sum(r[col("judge_prompt_tokens")] or 0 for r in records),
        p + "completion_tokens": sum(r[col("judge_completion_tokens")] or 0 for r in records),
    }
    for name in ("judge_cache_hits", "judge_cache_misses"):
        values = [r.get(col(name)) for r in records]
        if any(v is not None for v in values):  # the model-call cache was on
            counts[p + name] = sum(v or 0 for v in values)
    if not p:
        counts["rows"] = len(records)
    return metrics, counts


def judge_warnings(table: pa.Table, benchmark: str, prefix: str = "") -> list[dict[str, Any]]:
    """One judge's degenerate-judgment flags (lasagna.judges.degenerate), under `prefix`."""
    module = get_benchmark(benchmark)
    names = ("error", DEGENERATE, DEGENERATE_REASON, module.PRIMARY)
    stored = {judge_column(prefix, n): n for n in names}
    present = [c for c in stored if c in table.column_names]
    rows = [{stored[c]: v for c, v in r.items()} for r in table.select(present).to_pylist()]
    label = prefix[:-1].replace("_", "-") if prefix else module.ID  # g-eval-is-the-answer-...
    return trial_warnings(rows, label, module.PRIMARY)


def judge_column(prefix: str, name: str) -> str:
    """A judge's column under `prefix`: `faithfulness_` + `error`; `faithfulness_score` as it
    is (it carries its name); `g_eval_polite_` + `g_eval_score` = `g_eval_polite_score`."""
    cut = [i + 1 for i, ch in enumerate(name) if ch == "_" and prefix.startswith(name[: i + 1])]
    return prefix + name[max(cut) :] if cut else prefix + name


def judge_prefix(benchmark: str, params: JudgeParams | None = None) -> str:
    """Column prefix of a judge in judged generation: faithfulness_, role_adherence_, ...;
    with what a g-eval judge judges: g_eval_is_the_answer_polite_."""
    return group_name(benchmark, params or JudgeParams()).replace("-", "_").replace(":", "_") + "_"


def cases_from_generation(batch: pa.Table) -> pa.Table:
    """Generated rows -> judge test cases: the question, the answer, the passages the
    generator saw, the row's gold passages and its reference answer."""

    def column(name: str) -> list:
        return batch.column(name).to_pylist() if name in batch.column_names else [None] * len(batch)

    cases = []
    for q, pred, err, passages, gold, answers, rid in zip(
        column("question"),
        column("prediction"),
        column("error"),
        column("passages"),
        column("gold_contexts"),
        column("answers"),
        column("id"),
        strict=True,
    ):
        case = {
            "id": rid,
            "input": q or "",
            "actual_output": pred or "",
            "retrieval_context": list(passages or []),
            "context": list(gold or []) or list(passages or []),
            "expected_output": (answers or [None])[0] or "(no answer: unanswerable)",
        }
        if err:
            case[SKIP] = f"generation failed ({err})"
        elif not (pred or "").strip():
            case[SKIP] = "the generator gave an empty answer"
        cases.append(case)
    return batch.append_column(CASE, pa.array([json.dumps(c) for c in cases], pa.string()))


def judged_generation_stages(
    judges: tuple, call_cache: str | None = None, pools: list[Pool | None] | None = None
) -> list[Stage]:
    """After Generate: the case builder, then one Judge actor pool per judge (each judge's
    columns under its own prefix). `judges` have the sweep's resources applied; `pools[i]`:
    the run's engines of judge i (None: its actors load their own model)."""
    cases = Stage(
        "cases", cases_from_generation, inputs=("question", "prediction"), outputs=(CASE,)
    )
    engines = pools or [None] * len(judges)
    judging = [
        judge_stage(j, judge_prefix(j.benchmark, j.params), pool=pool, call_cache=call_cache)
        for j, pool in zip(judges, engines, strict=True)
    ]
    return [cases, *judging]
