"""The sdk track: what an `evaluate()` call runs, as one trial of the engine.

    datapoints x trial index (rows) -> Executor stage (Ray tasks, or an actor pool for a
    callable class; lasagna.stages.sdk_executor) -> Evaluator calls -> rows + spans

A trial is one executor on one data set (one repeat); its *rows* are the datapoints x
`trials` (the spec's trials: `task_id`, `trial_index`), one record each
(lasagna.results.evaluations.row_record), and its `spans` table the traces. Each batch of
rows is checkpointed as it returns (`TrialSetup.parts`), so `resume=` runs only the rows
a stopped evaluation lacks. A sweep cannot name it (it reads DATAPOINTS): its systems are
Python callables (lasagna.systems.executor.ExecutorSystem).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna.tracks.base import DATAPOINTS, Aggregate, Prepared, Track, TrialSetup

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.stages.sdk_rows import RowSpec

# the row columns (lasagna.results.evaluations.ROW_SCHEMA, spelled out so registering the
# track imports no pyarrow; a test holds the two equal)
COLUMNS = (
    ("id", "string", "the row: task id # trial index"),
    ("task_id", "string", "the datapoint's task id (explicit, the file row's id, or position)"),
    ("trial_index", "int64", "which of the datapoint's `trials` repeats (the spec's trial)"),
    ("data", "string", "what the executor received (JSON text)"),
    ("target", "string", "the reference the evaluators compared against (JSON text)"),
    ("metadata", "string", "the datapoint's metadata (JSON text)"),
    ("output", "string", "the executor's output (JSON text); null when it failed"),
    ("evaluator_scores", "map<string, double>", "score dimension -> value (null: abstained)"),
    ("error", "string", "what failed (executor or evaluator), null when nothing did"),
    ("error_type", "string", "the exception's type"),
    ("trace_id", "string", "the row's trace in the trial's spans table"),
    ("started_at", "string", "when the row started (ISO 8601)"),
    ("duration_s", "double", "the row's wall time"),
    ("tokens_in", "int64", "prompt tokens of the LLM spans under it"),
    ("tokens_out", "int64", "completion tokens of the LLM spans under it"),
    ("cost", "double", "its cost (null: local models)"),
)


@dataclass
class DatapointSet:
    """The data of an sdk trial: its rows to run, with the name and revision that key it."""

    name: str
    revision: str
    source: str | None
    rows: list[RowSpec]
    n_datapoints: int
    format: str = "datapoints"
    corpus_provenance: str | None = None


@dataclass
class SdkPrepared(Prepared):
    hub: Any = None  # the run's model servers (lasagna.stages.model_hub), for lasagna.model()
    spans: list[dict[str, Any]] = field(default_factory=list)
    evaluation_id: str = ""


class SdkTrack(Track):
    name = "sdk"
    systems_field = "executors"
    reads = DATAPOINTS
    grid = False
    description = "evaluate(): an executor on datapoints, scored by its evaluators"
    columns = tuple((name, typ, "execute", text) for name, typ, text in COLUMNS)
    run_timing = "execute_and_evaluate"
    summary_columns = (("rows", "counts.rows"), ("failed", "counts.errors"))
    stall_quiet_periods = 0  # an executor may take any time per row
    fails_when_every_row_fails = False  # the rows are the user's calls: evaluate() lists them
    resources_fix = (
        "give evaluate()'s executor less (resources={'num_cpus': 0.5}) or fewer actors=, so "
        "the engines of the models it asks for with lasagna.model() fit beside it"
    )

    def asks(self, system: Any, trial: Any = None, resources: Any = None, gpus: float = 0):
        from lasagna.stages.asks import executor_asks

        return executor_asks(system, gpus)

    def prepare(self, setup: TrialSetup) -> SdkPrepared:
        """Start the run's model hub (one server per model for every worker) and let each
        evaluator that can (an LLM judge) load its model there before the rows start."""
        from lasagna.stages.model_hub import start_hub

        hub = start_hub()
        for evaluator in setup.system.evaluators.values():
            prepare = getattr(evaluator, "prepare", None)
            if callable(prepare):
                prepare(hub)
        return SdkPrepared(call_cache=setup.call_cache, hub=hub)

    def run_rows(self, setup: TrialSetup, prepared: Prepared) -> pa.Table:
        from lasagna.results import evaluations as ev
        from lasagna.stages.progress import StageProgress
        from lasagna.stages.sdk_executor import dispatch

        assert isinstance(prepared, SdkPrepared)
        system, points = setup.system, setup.benchmark.rows
        done, done_spans = restored_rows(setup.parts, points)
        todo = [s for s in points if (s.task_id, s.trial_index) not in done]
        save = setup.parts.save if setup.parts is not None else (lambda r, s: None)
        label = self.run_timing.replace("_and_", "+")
        try:
            with StageProgress(label, len(points), show=not system.quiet) as bar:
                bar.advance(len(done))
                new, spans = [], []
                if todo:
                    new, spans = dispatch(
                        todo,
                        system.executor,
                        system.evaluators,
                        system.evaluation_id,
                        concurrency=system.concurrency,
                        resources=system.resources,
                        actors=system.actors,
                        on_batch=bar.advance,
                        on_result=save,
                        hub=prepared.hub,
                        timeout=system.timeout,
                    )
        finally:
            _close(prepared.hub)
        order = {(s.task_id, s.trial_index): s.order for s in points}
        records = sorted(
            [*done.values(), *new], key=lambda r: order[(r["task_id"], r["trial_index"])]
        )
        prepared.spans = [*done_spans, *spans]
        prepared.evaluation_id = system.evaluation_id
        from lasagna.common.tracing import export_otlp

        export_otlp(prepared.spans)  # to a collector, when OTEL_EXPORTER_OTLP_ENDPOINT is set
        return ev.rows_table(ev.with_tokens(records, prepared.spans))

    def aggregate(self, rows: pa.Table, benchmark: Any, prepared: Prepared) -> Aggregate:
        """Per score dimension, the mean over the rows that have a score; the trial's spans
        table beside its rows."""
        from lasagna.results import evaluations as ev
        from lasagna.stages.sdk_scores import averages, judge_warnings

        records = ev.records_of(rows)
        means = averages([r["scores"] for r in records])
        ours = isinstance(prepared, SdkPrepared)
        spans, eid = (prepared.spans, prepared.evaluation_id) if ours else ([], "")
        errors = sum(1 for r in records if r["error"])
        return Aggregate(
            metrics={k: v for k, v in means.items() if not math.isnan(v)},
            counts={"rows": rows.num_rows, "errors": errors, "datapoints": benchmark.n_datapoints},
            extra={"dimensions": list(means), "judge_warnings": judge_warnings(spans)},
            tables={ev.SPANS: ev.spans_table(eid, spans)},
        )

    def summary_table(
        self, trials: list[Any], repeats: bool = True
    ) -> tuple[list[str], list[list[str]]]:
        """One column per score dimension (its average, marked where an LLM judge did not
        judge its rows; n/a when nothing scored it)."""
        from lasagna.judges.degenerate import about_metric, mark, warnings_of

        dims = list(dict.fromkeys(d for t in trials for d in t.extra.get("dimensions", [])))
        heads = ["system", *dims, *(head for head, _ in self.summary_columns)]
        rows = []
        for t in trials:
            cells = [t.system]
            for d in dims:
                value = t.metrics.get(d)
                flags = mark(about_metric(warnings_of(t.extra), d, self.name))
                cells.append("n/a" if value is None else f"{value:.4f}{flags}")
            cells += [
                str(t.counts.get(source.split(".", 1)[1], "")) for _, source in self.summary_columns
            ]
            rows.append(cells)
        return heads, rows

    def summary_notes(self, trials: list[Any]) -> list[str]:
        """A line per flag of an LLM judge among the evaluators (its rows not judged)."""
        from lasagna.judges.degenerate import flagged

        return flagged((t.system, t) for t in trials)

    def main_metrics(self) -> list[str]:
        return []


def restored_rows(
    parts: Any, points: list[RowSpec]
) -> tuple[dict[tuple[str, int], dict[str, Any]], list[dict[str, Any]]]:
    """The finished rows a trial's checkpoint parts hold that are still wanted (rows of a
    lost worker run again), and their spans."""
    if parts is None:
        return {}, []
    records, spans, _ = parts.load()
    wanted = {(s.task_id, s.trial_index): s for s in points}
    done: dict[tuple[str, int], dict[str, Any]] = {}
    for r in records:
        key = (r["task_id"], int(r["trial_index"]))
        if key in wanted and r.get("trace_id") is not None:
            done.setdefault(key, r | {"order": wanted[key].order})
    traces = {r["trace_id"] for r in done.values()}
    return done, [s for s in spans if s["trace_id"] in traces]


def _close(hub: Any) -> None:
    if hub is None:
        return
    import ray

    try:
        ray.get(hub.close.remote(), timeout=60)
    except Exception:  # noqa: BLE001 - closing never fails the trial
        pass
    ray.kill(hub)
