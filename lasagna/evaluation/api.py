"""`evaluate(data, executor, evaluators, ...)`: run every datapoint `trials` times on Ray,
score and trace each trial, and store the run under the results root.

Everything the user passed is checked before Ray starts (signatures, empty data, duplicate
task ids); a failing executor or evaluator is recorded on its trial, never raised. The run
folder (evaluations, evaluation_trials, spans) is written atomically by the result store,
and the averages are printed like the CLI's tables.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.evaluation.checkpoint import Checkpoint, resumed
from lasagna.evaluation.checks import check_evaluators, check_executor, check_picklable
from lasagna.evaluation.datapoint import Dataset, task_ids
from lasagna.evaluation.scores import averages
from lasagna.evaluation.trial import TrialSpec

DEFAULT_CONCURRENCY = 16


@dataclass
class EvaluationResult:
    """What `evaluate()` returns: ids, per-dimension averages, counts and the run folder."""

    evaluation_id: str
    name: str
    group_name: str | None
    averages: dict[str, float]
    n_trials: int
    n_errors: int
    run_dir: str
    trials: list[dict[str, Any]] = field(repr=False, default_factory=list)

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [t for t in self.trials if t["error"]]


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(
            Problem(f"must be a positive integer, not {value!r}", field=name, fix=f"{name}=1")
        )
    return value


def _executor_name(executor: Any) -> str:
    return getattr(executor, "__qualname__", None) or type(executor).__name__


def _specs(dataset: Dataset, ids: list[str], trials: int) -> list[TrialSpec]:
    out = []
    for i, (point, tid) in enumerate(zip(dataset.points, ids, strict=True)):
        for k in range(trials):
            out.append(TrialSpec(i * trials + k, tid, k, point.data, point.target, point.metadata))
    return out


def evaluate(
    data: Any,
    executor: Any,
    evaluators: Any,
    group_name: str | None = None,
    trials: int = 1,
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    resources: dict[str, float] | None = None,
    actors: int = 1,
    output: str | os.PathLike[str] | None = None,
    address: str | None = None,
    resume: str | None = None,
    quiet: bool = False,
) -> EvaluationResult:
    """Run `executor(data)` on every datapoint `trials` times, score the output with each
    evaluator `(output, target)`, and store the evaluation (docs/sdk.md describes
    every argument at length).

    `executor` is a function (run as Ray tasks, batched) or a class whose instances are
    called (built once per actor of a pool of `actors`: hold a model there). `concurrency`
    bounds the trials in flight; `resources` (`num_cpus`, `num_gpus`) is what each task or
    actor asks Ray for. `output` is the results root (default ./results); `address` (or
    RAY_ADDRESS) joins a Ray cluster instead of starting an in-process one. Finished
    batches are checkpointed; `resume=ID` finishes an evaluation that stopped (a crash, ^C),
    running only the trials it lacks.
    """
    from lasagna.common.clock import now_iso
    from lasagna.evaluation.files import group_override, note_run
    from lasagna.results.store import DEFAULT_OUTPUT, new_run_id

    group_name = group_override() or group_name
    check_executor(executor)
    evaluators = check_evaluators(evaluators)
    trials = _positive_int(trials, "trials")
    concurrency = _positive_int(concurrency, "concurrency")
    actors = _positive_int(actors, "actors")
    if group_name is not None and not isinstance(group_name, str):
        raise UserError(Problem(f"must be a string, not {group_name!r}", field="group_name"))
    if metadata is not None and not isinstance(metadata, dict):
        raise UserError(Problem("must be a dict", field="metadata", fix="metadata={'k': 'v'}"))
    dataset = Dataset.of(data)
    if not len(dataset):
        raise UserError(
            Problem(
                "there is no datapoint to evaluate",
                file=dataset.source,
                field="data",
                fix="pass at least one Datapoint (check take()/select() and the file)",
            )
        )
    ids = task_ids(dataset)
    specs = _specs(dataset, ids, trials)
    from lasagna.evaluation.clients import register_client_pickling

    register_client_pickling()
    check_picklable(executor, evaluators, [(p.data, p.target, p.metadata) for p in dataset])
    output = output or DEFAULT_OUTPUT
    from lasagna.engine.job_dir import check_output_outside_job_copy

    check_output_outside_job_copy(str(output), "output=")  # a `ray job submit` copy
    done: dict[tuple[str, int], dict[str, Any]] = {}
    done_spans: list[dict[str, Any]] = []
    if resume:
        run_id = str(resume)
        ckpt, done, done_spans = resumed(
            output, run_id, {(s.task_id, s.trial_index) for s in specs}
        )
    else:
        run_id = new_run_id()
        ckpt = Checkpoint(output, run_id)
    name = name or (f"{group_name}-{run_id}" if group_name else run_id)
    started_at = now_iso("milliseconds")  # back-to-back runs keep their order
    t0 = time.perf_counter()
    todo = [s for s in specs if (s.task_id, s.trial_index) not in done]
    if not quiet:
        kept = f", {len(done)} kept from its checkpoint" if resume else ""
        print(
            f"evaluation {run_id}: {len(todo)} trials to run{kept} (if it stops, "
            f"evaluate(..., resume={run_id!r}) runs only the rest)",
            file=sys.stderr,
        )
    from lasagna.results.status import RunStatus

    status = RunStatus(output, run_id, "evaluation", len(specs), restored=len(done))
    status.doc |= {"name": name, "group": group_name, "executor": _executor_name(executor)}

    def save(trials: list[dict[str, Any]], batch_spans: list[dict[str, Any]]) -> None:
        ckpt.save(trials, batch_spans)
        status.advance(len(trials), failed=sum(1 for t in trials if t["error"]))

    results, spans = [], []
    if todo:
        from lasagna.engine.run_log import run_log

        with status.start().running(), run_log(output, run_id):
            results, spans = _run_on_ray(
                todo,
                executor,
                evaluators,
                run_id,
                concurrency,
                resources or {},
                actors,
                address,
                quiet,
                save,
            )
    order = {(s.task_id, s.trial_index): s.order for s in specs}
    results = sorted(
        [*done.values(), *results], key=lambda t: order[(t["task_id"], t["trial_index"])]
    )
    for t in results:
        t["order"] = order[(t["task_id"], t["trial_index"])]
    spans = [*done_spans, *spans]
    record = {
        "evaluation_id": run_id,
        "name": name,
        "group_name": group_name,
        "metadata": metadata or {},
        "created_at": started_at,
        "finished_at": now_iso(),
        "executor": _executor_name(executor),
        "n_datapoints": len(dataset),
        "n_trials": len(results),
        "n_errors": sum(1 for t in results if t["error"]),
        "averages": averages([t["scores"] for t in results]),
    }
    with status.running():
        run_dir = _store(output, run_id, record, results, spans)
    status.finish(run_id)
    ckpt.remove()
    note_run(run_id)
    from lasagna.common.tracing import export_otlp

    export_otlp(spans)
    result = EvaluationResult(
        evaluation_id=run_id,
        name=name,
        group_name=group_name,
        averages=record["averages"],
        n_trials=len(results),
        n_errors=record["n_errors"],
        run_dir=run_dir,
        trials=results,
    )
    if not quiet:
        from lasagna.evaluation.summary import render_result

        render_result(result, time.perf_counter() - t0, output=output)
    return result


def _run_on_ray(
    specs, executor, evaluators, run_id, concurrency, resources, actors, address, quiet, save
):
    from lasagna.engine.ray_session import prefer_loopback, ray_session
    from lasagna.evaluation.progress import progress_bar
    from lasagna.evaluation.runner import dispatch

    if not (address or os.environ.get("RAY_ADDRESS")):
        prefer_loopback()
    from lasagna.stages.model_hub import start_hub

    with ray_session(address) as _session:
        hub = start_hub()
        try:
            for evaluator in evaluators.values():
                prepare = getattr(evaluator, "prepare", None)
                if callable(prepare):
                    prepare(hub)
            with progress_bar(len(specs), "trials", quiet) as advance:
                return dispatch(
                    specs,
                    executor,
                    evaluators,
                    run_id,
                    concurrency=concurrency,
                    resources=resources,
                    actors=actors,
                    on_batch=advance,
                    on_result=save,
                    hub=hub,
                )
        finally:
            import ray

            try:
                ray.get(hub.close.remote(), timeout=60)
            except Exception:
                pass
            ray.kill(hub)


def _store(output, run_id, record, results, spans) -> str:
    from lasagna.results import evaluations as ev
    from lasagna.results.fs import Store
    from lasagna.results.store import write_run

    for trial in results:  # NaN averages become missing in JSON-minded tools
        trial["scores"] = {
            k: (None if v is not None and math.isnan(v) else v) for k, v in trial["scores"].items()
        }
    manifest = {
        "kind": ev.KIND,
        "created_at": record["created_at"],
        "evaluation": {k: v for k, v in record.items() if k != "averages"}
        | {"averages": {k: (None if math.isnan(v) else v) for k, v in record["averages"].items()}},
    }
    tables = {
        ev.EVALUATIONS: ev.evaluations_table(record | {"path": Store(output).path(run_id)}),
        ev.TRIALS: ev.trials_table(run_id, results, spans),
        ev.SPANS: ev.spans_table(run_id, spans),
    }
    from lasagna.engine.run_log import IN_RUN, discard, run_files

    files = run_files(output, run_id)  # the workers' lines kept off the terminal
    if files:
        manifest["log"] = IN_RUN
    path = write_run(output, run_id, manifest, [], tables=tables, files=files)
    discard(output, run_id)
    return path
