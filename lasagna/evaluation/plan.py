"""An `evaluate()` call as a plan of trials, run by the same engine as a sweep.

The plan has one trial of the `sdk` track: the executor (with its evaluators) on the
data, repeat 0. Its rows are the datapoints x `trials` (the spec's trials). Its key hashes,
through the sweep's one key function, the data's revision (every datapoint's task id,
data, target and metadata), `trials`, the track, and the executor's and evaluators'
identities (qualified name + source hash, lasagna.systems.executor): an edited executor or
datapoint is a different trial, so `resume=` never restores rows computed for another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lasagna.common import tracing
from lasagna.common.clock import now_iso
from lasagna.common.digest import json_sha256
from lasagna.evaluation.datapoint import Dataset
from lasagna.judges.degenerate import warning_text, warnings_of
from lasagna.metrics import METRIC_DEFINITIONS_VERSION
from lasagna.stages.sdk_rows import RowSpec
from lasagna.sweep.benchmarks import PlannedBenchmark
from lasagna.sweep.keys import comparability_key, trial_key
from lasagna.sweep.trial import Trial
from lasagna.systems import Resources
from lasagna.systems.executor import ExecutorSystem
from lasagna.tracks.sdk import DatapointSet

TRACK = "sdk"


def data_revision(dataset: Dataset, ids: list[str]) -> str:
    """The full sha256 of the datapoints as the rows see them (task ids in order)."""
    return json_sha256(
        [
            [tid, tracing.to_json(p.data), tracing.to_json(p.target), tracing.to_json(p.metadata)]
            for tid, p in zip(ids, dataset.points, strict=True)
        ]
    )


def row_specs(dataset: Dataset, ids: list[str], trials: int) -> list[RowSpec]:
    out = []
    for i, (point, tid) in enumerate(zip(dataset.points, ids, strict=True)):
        for k in range(trials):
            out.append(RowSpec(i * trials + k, tid, k, point.data, point.target, point.metadata))
    return out


@dataclass
class EvaluateSettings:
    """What the engine reads of a plan's settings (`plan.sweep` of a sweep's plan)."""

    config: dict[str, Any]
    resources: Any = field(default_factory=Resources)
    profile: str | None = None
    cache: Any = None

    def model_dump(self, mode: str = "json") -> dict[str, Any]:
        return {"evaluate": self.config}


@dataclass
class EvaluationPlan:
    """The plan of one evaluate() call: the engine's `Plan` interface (trials, benchmarks,
    output, settings) plus what its manifest says of the evaluation."""

    sweep: EvaluateSettings
    output: str
    benchmarks: list[PlannedBenchmark]
    trials: list[Trial]
    run_id: str
    name: str
    group_name: str | None
    metadata: dict[str, Any]
    executor_name: str
    created_at: str = field(default_factory=lambda: now_iso("milliseconds"))
    call_cache: str | None = None  # LLM judges keep their own cache (lasagna.cache)

    @property
    def keys(self) -> list[str]:
        return [t.key for t in self.trials]

    def pending(self, done_keys: Any) -> list[Trial]:
        done = set(done_keys)
        return [t for t in self.trials if t.key not in done]

    def status_facts(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group_name, "executor": self.executor_name}

    def run_fields(self, trials: list[Any]) -> dict[str, Any]:
        """`kind: evaluation` and the evaluation's summary (what `evaluations` lists)."""
        return {"kind": "evaluation", "evaluation": self.record(trials)}

    def record(self, trials: list[Any]) -> dict[str, Any]:
        """The evaluation's row of the `evaluations` view, from its trial."""
        (t,) = trials
        dims = t.extra.get("dimensions", [])
        averages = {d: t.metrics.get(d) for d in dims}
        return {
            "evaluation_id": self.run_id,
            "name": self.name,
            "group_name": self.group_name,
            "metadata": self.metadata,
            "created_at": self.created_at,
            "finished_at": now_iso(),
            "executor": self.executor_name,
            "n_datapoints": int(t.counts.get("datapoints", 0)),
            "n_trials": int(t.counts.get("rows", 0)),
            "n_errors": int(t.counts.get("errors", 0)),
            "averages": {
                k: (None if v is None or math.isnan(v) else v) for k, v in averages.items()
            },
            "trial_key": t.key,
            # an LLM judge's rows scored without being judged (lasagna.judges.degenerate)
            "warnings": [warning_text(w) for w in warnings_of(t.extra)],
        }


def build_plan(
    dataset: Dataset,
    ids: list[str],
    system: ExecutorSystem,
    trials: int,
    output: str,
    run_id: str,
    name: str,
    group_name: str | None,
    metadata: dict[str, Any] | None,
) -> EvaluationPlan:
    """The plan of one evaluate() call: one sdk trial whose rows are `row_specs`."""
    revision = data_revision(dataset, ids)
    source = dataset.source
    data_name = (f"local/{Path(source).stem}" if source else "datapoints") + f"@{revision[:12]}"
    rows = row_specs(dataset, ids, trials)
    data = DatapointSet(data_name, revision, source, rows, len(dataset))
    selection = {"trials": trials}
    config = system.identity()
    key = trial_key(
        dataset_revision=revision,
        selection=selection,
        track=TRACK,
        system_config=config,
        seed=0,
        metric_definitions_version=METRIC_DEFINITIONS_VERSION,
    )
    ckey = comparability_key(
        dataset_name=data_name,
        dataset_revision=revision,
        split=None,
        n_samples=None,
        filters={},
        sample_seed=None,
        corpus_provenance=None,
        track=TRACK,
        metric_definitions_version=METRIC_DEFINITIONS_VERSION,
    )
    trial = Trial(
        key=key,
        comparability_key=ckey,
        benchmark_index=0,
        benchmark_name=data_name,
        track=TRACK,
        system=system,  # type: ignore[arg-type]  (a Python callable, not a YAML config)
        system_name=system.name,
        system_index=0,
        seed=0,
        repeat=0,
        selection=selection,
        system_config=system.config(),
    )
    planned = PlannedBenchmark(0, None, Path(source or "."), data, len(dataset))  # type: ignore[arg-type]
    settings = EvaluateSettings(
        {
            "trials": trials,
            "concurrency": system.concurrency,
            "actors": system.actors,
            "resources": dict(system.resources),
        }
    )
    return EvaluationPlan(
        sweep=settings,
        output=output,
        benchmarks=[planned],
        trials=[trial],
        run_id=run_id,
        name=name,
        group_name=group_name,
        metadata=metadata or {},
        executor_name=system.name,
    )
