"""The judge track: a judge model scores test cases with one of the judge benchmarks.

test cases (id, case) -> Judge (actor pool: clients of the run's pooled judge engines; one
batched engine call per step of the benchmark's metric) -> the benchmark's formulas (pure)

Its trials read judge test-case files (`reads = TEST_CASES`, loaded by
lasagna.sweep.judge_plan), and each refusal names the column a benchmark needs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna.tracks.base import TEST_CASES, Aggregate, Prepared, Track, TrialSetup, refusal

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.data.model import Benchmark
    from lasagna.errors import Problem
    from lasagna.stages.stage import Stage

NOT_QUESTIONS = (
    "the judge benchmarks read test cases (input, actual_output, retrieval_context, context, "
    "expected_output) or conversations (turns), not questions"
)


@dataclass
class JudgePrepared(Prepared):
    """The run's pool of the judge model's engines, and what the judge's results depend on."""

    pool: Any = None  # lasagna.stages.pools.Pool; None: each judge actor loads its own model
    identity: dict[str, Any] = field(default_factory=dict)  # benchmark, prompts, parameters


class JudgeTrack(Track):
    name = "judge"
    systems_field = "judges"
    grid = False
    description = "a judge model scores test cases (faithfulness, relevancy, ...)"
    kinds = ("judge",)
    kind_label = "judge kind"
    run_timing = "judge"
    reads = TEST_CASES
    engine_field = "model"
    run_totals = ("judge_invalid_outputs",)

    def system_type(self) -> Any:
        from lasagna.systems import JudgeSystem

        return JudgeSystem

    def refusals(
        self, benchmark: Benchmark, kind: str | None = None, system: Any = None
    ) -> list[Problem]:
        """Question data: refused. Test cases: each column the judge's benchmark needs."""
        cases = getattr(benchmark, "cases", None)
        if cases is None:
            fix = "give a judge test-case file (see lasagna.data.judge_cases) to a judges: sweep"
            return [refusal(benchmark, "the judge track", NOT_QUESTIONS, fix)]
        if system is None:
            return []
        from lasagna.judges.registry import refusals

        return refusals([system.benchmark], cases, system.params, benchmark.source)

    def pool_keys(self, system: Any, trial: Any = None, resources: Any = None) -> list[str]:
        return super().pool_keys(system) if system.uses_model else []  # a code judge: none

    def asks(self, system: Any, trial: Any = None, resources: Any = None, gpus: float = 0):
        from lasagna.stages.asks import judge_asks

        return judge_asks(system, gpus, at=())

    def group_track(self, system: Any) -> str:
        from lasagna.judges.registry import group_name

        return f"{self.name}:{group_name(system.benchmark, system.params)}"  # judge:faithfulness

    def input_columns(self, benchmark: Any, system: Any, prepared: Prepared) -> dict[str, list]:
        from lasagna.stages.judging import CASE

        cases = benchmark.cases
        return {
            "id": [c["id"] for c in cases],
            CASE: [json.dumps(c, sort_keys=True) for c in cases],
        }

    def block_rows(self, benchmark: Any, system: Any) -> int:
        return max(1, system.model.resources.batch_size)

    def prepare(self, setup: TrialSetup) -> JudgePrepared:
        from lasagna.judges.registry import identity

        system = setup.system
        return JudgePrepared(
            setup.call_cache,
            # the run's engines (loaded on their first call); a code judge has none
            pool=self.pooled_engine(system, setup.pools) if system.uses_model else None,
            identity=identity(system.benchmark, system.params),
        )

    def stages(self, benchmark: Any, system: Any, prepared: JudgePrepared) -> list[Stage]:
        from lasagna.stages.judging import judge_stage

        return [judge_stage(system, pool=prepared.pool, call_cache=prepared.call_cache)]

    def aggregate(self, rows: pa.Table, benchmark: Any, prepared: JudgePrepared) -> Aggregate:
        from lasagna.stages.judging import judge_metrics, judge_warnings

        metrics, counts = judge_metrics(rows)
        loads = [x for x in rows.column("engine_load_s").to_pylist() if x is not None]
        timings = {"engine_load": max(loads, default=0.0)}
        identity = prepared.identity
        extra = {"judge": identity, "judge_warnings": judge_warnings(rows, identity["benchmark"])}
        return Aggregate(metrics, counts, timings, extra=extra)

    def summary_trials(self, trials: list[Any]) -> list[Any]:
        """Judge trials, and generation trials that judges scored (judged generation)."""
        return [t for t in trials if t.track == self.name or t.config.get("judges")]

    def summary_table(
        self, trials: list[Any], repeats: bool = True
    ) -> tuple[list[str], list[list[str]]]:
        """One line per judge: its benchmark's primary score, the rows judged degenerate
        (lasagna.judges.degenerate), pass rate and the costs."""
        from lasagna.metrics import catalog
        from lasagna.stages.judging import judge_column

        rep = ["rep"] if repeats else []
        heads = ["system", *rep, "score", "degenerate", "pass", "rows", "failed", "invalid"]
        heads.append("rows/s")
        rows = []
        for t in trials:
            for label, p, primary in _judge_lines(t):
                metric = judge_column(p, primary)
                judged = t.counts.get(p + "judged", t.counts.get("judged", 0))
                failed = t.counts.get(p + "failed", 0)
                degenerate = t.counts.get(p + "degenerate", 0)
                rows.append(
                    [
                        label,
                        *([str(t.repeat)] if repeats else []),
                        catalog.show(metric, t.metrics.get(metric)),
                        f"{degenerate} of {judged}" if degenerate else "0",
                        catalog.show("pass_rate", t.metrics.get(p + "pass_rate")),
                        str(judged + failed),
                        str(failed),
                        str(t.counts.get("judge_invalid_outputs", 0)),
                        catalog.show("judgments_per_s", t.metrics.get(p + "judgments_per_s")),
                    ]
                )
        return heads, rows

    def summary_notes(self, trials: list[Any]) -> list[str]:
        """A line per degenerate-judgment flag of these trials, naming the system."""
        from lasagna.judges.degenerate import flagged

        return flagged((t.system, t) for t in trials)


def _judge_lines(t: Any) -> list[tuple[str, str, str]]:
    """(label, column prefix) per judge of a trial: a judge trial is one line; a judged
    generation trial has one per judge, its columns prefixed by the benchmark (and for
    g-eval its criterion)."""
    from lasagna.judges.params import parse_params
    from lasagna.judges.registry import get_benchmark
    from lasagna.stages.judging import judge_prefix

    if t.track == "judge":
        return [(t.system, "", get_benchmark(t.config["benchmark"]).PRIMARY)]
    out = []
    for judge in t.config.get("judges") or []:
        params = parse_params(judge.get("parameters") or {})[0]
        prefix = judge_prefix(judge["benchmark"], params)
        label = f"{t.system} → {prefix[:-1].replace('_', '-')}"
        out.append((label, prefix, get_benchmark(judge["benchmark"]).PRIMARY))
    return out
