"""`evaluate(data, executor, evaluators, ...)`: run every datapoint `trials` times on Ray,
score and trace each row, and store the run under the results root.

An evaluation is a plan of one trial of the `sdk` track (lasagna.evaluation.plan) run by the
engine that runs sweeps (lasagna.engine.driver.run_plan): the same trial keys, checkpoints
(`.trials/`), `resume=`, progress lines, run folder and summary. The trial's rows are the
spec's trials (datapoint x trial index). Everything the user passed is checked before Ray
starts (signatures, empty data, duplicate task ids), every wrong argument in one error; a
failing executor or evaluator is recorded on its row, never raised.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from lasagna.engine.watchdog import STALL_S
from lasagna.errors import Problem, UserError
from lasagna.evaluation import arguments as arg
from lasagna.evaluation.arguments import refused_together
from lasagna.evaluation.checks import check_evaluators, check_executor, check_picklable
from lasagna.evaluation.datapoint import Dataset, task_ids
from lasagna.evaluation.result import EvaluationResult

DEFAULT_CONCURRENCY = 16


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
    stall_timeout: float | None = STALL_S,
    timeout: float | None = None,
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
    running only the trials it lacks. After `stall_timeout` seconds without a finished batch
    the watchdog reads what the rows wait for: an engine that cannot be placed beside the
    executor's actors (a model asked for with `lasagna.model()`) ends the evaluation with
    what holds what and the fix after two such periods; slow rows are never ended (None: off).
    `timeout`: the seconds one executor call may take; a call that takes longer is a failed
    trial (TimeoutError) and the evaluation goes on (None: no limit).
    """
    from lasagna.evaluation.files import group_override, note_run
    from lasagna.results.store import DEFAULT_OUTPUT, new_run_id

    group_name = group_override() or group_name
    checked = refused_together(
        {
            "executor": lambda: check_executor(executor),
            "evaluators": lambda: check_evaluators(evaluators),
            "trials": lambda: arg.positive_int(trials, "trials"),
            "concurrency": lambda: arg.positive_int(concurrency, "concurrency"),
            "actors": lambda: arg.positive_int(actors, "actors"),
            "resources": lambda: arg.resources(resources),
            "stall_timeout": lambda: arg.seconds(stall_timeout, "stall_timeout", zero=True),
            "timeout": lambda: arg.seconds(timeout, "timeout", zero=False),
            "group_name": lambda: arg.group_name_of(group_name),
            "metadata": lambda: arg.metadata_of(metadata),
            "data": lambda: _datapoints(data),
        }
    )
    evaluators, resources = checked["evaluators"], checked["resources"]
    dataset, ids = checked["data"]
    from lasagna.evaluation.judge import check_judged_fields

    check_judged_fields(evaluators, dataset, ids)  # an empty target judged: refused here
    from lasagna.evaluation.clients import register_client_pickling

    register_client_pickling()
    check_picklable(executor, evaluators, [(p.data, p.target, p.metadata) for p in dataset])
    output = str(output or DEFAULT_OUTPUT)
    from lasagna.engine.job_dir import check_output_outside_job_copy

    check_output_outside_job_copy(output, "output=")  # a `ray job submit` copy
    run_id = str(resume) if resume else new_run_id()
    name = name or (f"{group_name}-{run_id}" if group_name else run_id)
    from lasagna.evaluation.plan import build_plan
    from lasagna.systems.executor import ExecutorSystem

    system = ExecutorSystem(
        executor, evaluators, concurrency, actors, resources, run_id, quiet, timeout=timeout
    )
    plan = build_plan(dataset, ids, system, trials, output, run_id, name, group_name, metadata)
    _check_placement(plan, address)
    kept = check_resume(plan) if resume else 0
    n_rows = len(dataset) * trials
    if not quiet:
        also = f", {kept} kept from its checkpoint" if resume else ""
        if kept < n_rows:  # all kept: nothing runs, so nothing to resume
            also += f" (if it stops, evaluate(..., resume={run_id!r}) runs only the rest)"
        print(f"evaluation {run_id}: {n_rows - kept} trials to run{also}", file=sys.stderr)
    t0 = time.perf_counter()
    outcome = _run(plan, bool(resume), address, quiet, stall_timeout)
    (trial,) = outcome.trials
    from lasagna.results import evaluations as ev

    record = plan.record(outcome.trials)
    if outcome.run_id and outcome.run_id != run_id:  # no new run: the one holding the rows
        record |= _held(output, outcome.run_id)
    note_run(record["evaluation_id"])
    result = EvaluationResult(
        evaluation_id=record["evaluation_id"],
        name=record["name"],
        group_name=record["group_name"],
        averages={k: (float("nan") if v is None else v) for k, v in record["averages"].items()},
        n_trials=record["n_trials"],
        n_errors=record["n_errors"],
        run_dir=outcome.run_path,
        trials=_with_judgements(ev.records_of(trial.rows), record["evaluation_id"], output),
        warnings=list(record.get("warnings") or []),
    )
    if not quiet:
        from rich.console import Console

        from lasagna.engine.summary import render_summary
        from lasagna.evaluation.summary import render_result

        render_summary(outcome, Console())
        render_result(result, time.perf_counter() - t0, Console(), output=output)
    return result


def _with_judgements(records: list[dict], run_id: str, output: str) -> list[dict]:
    """Each trial with what each LLM judge said of it (`judgements`: evaluator -> reason,
    passed, degenerate, ...; empty when no evaluator is an LLM judge), read back from the
    run's spans, where they are stored."""
    from lasagna.results.evaluation_views import judgements
    from lasagna.results.runs import open_run

    said = judgements(open_run(run_id, output))
    return [r | {"judgements": said.get(r.get("trace_id") or "", {})} for r in records]


def _held(output: str, run_id: str) -> dict[str, Any]:
    """The ids of run `run_id`, which holds every trial of a `resume=` that had nothing left
    to run (no new run is written), so the result and its query name a run that exists."""
    from lasagna.results.runs import open_run

    found = open_run(run_id, output).manifest.get("evaluation") or {}
    keys = ("name", "group_name", "created_at", "finished_at")
    return {"evaluation_id": run_id} | {k: found[k] for k in keys if k in found}


def _datapoints(data: Any) -> tuple[Dataset, list[str]]:
    """The datapoints and their task ids; refuses no datapoint at all."""
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
    return dataset, task_ids(dataset)


def check_resume(plan: Any) -> int:
    """Refuse `resume=ID` of a finished evaluation, or of one with nothing checkpointed
    for this trial; else the number of rows its checkpoint holds."""
    from lasagna.results.checkpoints import load_trial
    from lasagna.results.fs import Store
    from lasagna.results.partial import TrialParts
    from lasagna.tracks.sdk import restored_rows

    store = Store(plan.output)
    run_id = plan.run_id
    if store.exists(store.path(run_id, "manifest.json")):
        raise UserError(
            Problem(
                f"evaluation {run_id} finished already; nothing to resume",
                file=store.path(run_id),
                fix="run a new evaluation (leave resume= out)",
            )
        )
    (trial,) = plan.trials
    if load_trial(plan.output, trial.key, hold_tables=False) is not None:
        return plan.benchmarks[0].benchmark.rows.__len__()
    parts = TrialParts(plan.output, trial.key)
    _, _, runs = parts.load()
    if run_id in runs:
        done, _ = restored_rows(parts, plan.benchmarks[0].benchmark.rows)
        return len(done)
    old = store.exists(store.path(".evaluations", run_id))
    raise UserError(
        Problem(
            f"no unfinished evaluation {run_id!r} of this executor and data here"
            + (" (its checkpoint was written by an older lasagna)" if old else ""),
            file=store.path(".trials"),
            fix="run it again without resume="
            if old
            else "give the id evaluate() printed "
            "when it started, the same output=, and the same executor, evaluators and data",
        )
    )


def _check_placement(plan: Any, address: str | None) -> None:
    """Refuse, before Ray starts, a call whose actors cannot all be placed on the in-process
    Ray it would start (lasagna.tracks.placement). On a cluster, or a Ray the caller
    started, the engine checks against that Ray's resources once connected."""
    import ray

    if address or os.environ.get("RAY_ADDRESS") or ray.is_initialized():
        return
    from lasagna.stages.capacity import local_capacity
    from lasagna.tracks.placement import check_placement

    check_placement(plan.trials, plan.sweep.resources, local_capacity())


def _run(plan: Any, resume: bool, address: str | None, quiet: bool, stall_s: float | None) -> Any:
    """The plan on the engine (in-process Ray on loopback unless a cluster is named)."""
    import io

    from rich.console import Console

    from lasagna.engine.driver import run_plan
    from lasagna.engine.ray_session import prefer_loopback

    if not (address or os.environ.get("RAY_ADDRESS")):
        prefer_loopback()
    console = Console(file=io.StringIO()) if quiet else Console(stderr=True)
    return run_plan(
        plan,
        resume=resume,
        address=address,
        console=console,
        keep_going=False,
        trials_per_driver=None,
        stall_s=stall_s,  # ends only a wait that cannot fit (SdkTrack.stall_quiet_periods)
        run_id=plan.run_id,
        kind="evaluation",
    )
