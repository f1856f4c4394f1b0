"""The judge track: a judge model scores test cases with one of the judge benchmarks.

Its trials are planned from judge test-case files by `lasagna.sweep.judge_plan` (not from
question data), and run by `lasagna.engine.judging.run_judge_trial` (an actor pool holding
the judge model; one batched engine call per step of the benchmark's metric), so it
overrides `run()` instead of declaring `stages()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lasagna.tracks.base import Track, refusal

if TYPE_CHECKING:
    from lasagna.data.model import Benchmark
    from lasagna.engine.pools import Pools
    from lasagna.errors import Problem

TEST_CASES = (
    "the judge benchmarks read test cases (input, actual_output, retrieval_context, context, "
    "expected_output) or conversations (turns), not questions"
)


class JudgeTrack(Track):
    name = "judge"
    systems_field = "judges"
    description = "a judge model scores test cases (faithfulness, relevancy, ...)"
    kinds = ("judge",)
    kind_label = "judge kind"
    run_timing = "judge"
    plans_questions = False

    def refusals(self, benchmark: Benchmark, kind: str | None = None) -> list[Problem]:
        fix = "give a judge test-case file (see lasagna.data.judge_cases) to a judges: sweep"
        return [refusal(benchmark, "the judge track", TEST_CASES, fix)]

    def run(
        self,
        trial: Any,
        planned: Any,
        resources: Any,
        pools: Pools | None,
        call_cache: str | None = None,
    ) -> Any:
        from lasagna.engine.judging import run_judge_trial

        return run_judge_trial(trial, planned, resources, call_cache)

    def summary_trials(self, trials: list[Any]) -> list[Any]:
        """Judge trials, and generation trials that judges scored (judged generation)."""
        return [t for t in trials if t.track == self.name or t.config.get("judges")]

    def summary_table(
        self, trials: list[Any], repeats: bool = True
    ) -> tuple[list[str], list[list[str]]]:
        """One line per judge: its benchmark's primary score, pass rate and the costs."""
        from lasagna.metrics import catalog

        rep = ["rep"] if repeats else []
        heads = ["system", *rep, "score", "pass", "rows", "failed", "invalid", "rows/s"]
        primaries = catalog.primary_metrics("judge")
        rows = []
        for t in trials:
            for label, p in _judge_lines(t):
                metric = next((m for m in primaries if m in t.metrics and m.startswith(p)), "-")
                judged = t.counts.get(p + "judged", t.counts.get("judged", 0))
                failed = t.counts.get(p + "failed", 0)
                rows.append(
                    [
                        label,
                        *([str(t.repeat)] if repeats else []),
                        catalog.show(metric, t.metrics.get(metric)),
                        catalog.show("pass_rate", t.metrics.get(p + "pass_rate")),
                        str(judged + failed),
                        str(failed),
                        str(t.counts.get("judge_invalid_outputs", 0)),
                        catalog.show("judgments_per_s", t.metrics.get(p + "judgments_per_s")),
                    ]
                )
        return heads, rows


def _judge_lines(t: Any) -> list[tuple[str, str]]:
    """(label, column prefix) per judge of a trial: a judge trial is one line; a judged
    generation trial has one per judge, its columns prefixed by the benchmark."""
    if t.track == "judge":
        return [(t.system, "")]
    judges = [j.get("benchmark") for j in (t.config.get("judges") or [])]
    return [(f"{t.system} → {b}", b.replace("-", "_") + "_") for b in judges]
