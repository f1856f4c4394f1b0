"""The driver: runs a plan's trials on Ray, checkpoints each finished trial, and merges
them into one run folder.

Every finished trial is saved at once as a checkpoint (atomic), so a crash loses no
finished work; `--resume` restores exactly the checkpoints whose trial key matches. The run
folder is written once, atomically, after the last trial.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console

from lasagna.cache.roots import check_writable_cache
from lasagna.common import interrupts
from lasagna.common.clock import now_iso
from lasagna.engine.driver_processes import TRIALS_PER_DRIVER, run_in_driver_processes
from lasagna.engine.job_dir import check_output_outside_job_copy
from lasagna.engine.preflight import check_writable_output
from lasagna.engine.ray_session import check_reachable
from lasagna.engine.run_log import IN_RUN, discard, log_path, run_files, run_log
from lasagna.engine.sweep_part import run_on_ray
from lasagna.engine.trials import trial_fields
from lasagna.engine.watchdog import STALL_S
from lasagna.models.precision import cpu_has_bf16, hardware_kind
from lasagna.results import (
    TrialResult,
    load_trial,
    new_run_id,
    remove_stale_temps,
    write_run,
)
from lasagna.results.fs import Store
from lasagna.results.schema import BenchmarkBlock
from lasagna.results.status import RunStatus
from lasagna.results.store import run_holding

if TYPE_CHECKING:  # the engine runs a plan; it never imports the sweep package
    from lasagna.sweep.plan import Plan


@dataclass
class RunOutcome:
    run_id: str
    run_path: str  # as people open it: a normalized local path, or the URI (s3://...)
    trials: list[TrialResult]
    restored: list[str]  # keys restored from checkpoints
    failed: list[dict[str, Any]] = field(default_factory=list)  # see engine.failures


def machine_info() -> dict[str, Any]:
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        mem = None
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "memory_bytes": mem,
        "cpu_bf16": cpu_has_bf16(),  # what `precision: auto` of dense retrievers looked at
        "encoder_hardware": hardware_kind(gpu=False),  # the CPU row `backend: auto` read
    }


def restore(plan: Plan) -> dict[str, TrialResult]:
    """Finished trials of this plan in the output's checkpoints, by key, under this plan's
    names (a label, `bm25 k1=1.5` once a grid is beside it; the benchmark's name)."""
    found = {}
    for trial in plan.trials:
        result = load_trial(plan.output, trial.key, hold_tables=False)
        if result is not None:
            names = trial_fields(trial, plan.benchmarks[trial.benchmark_index])
            result.system = names["system"]
            result.comparability_key = names["comparability_key"]
            result.benchmark = BenchmarkBlock.of(names["benchmark"])
            found[trial.key] = result
    return found


def run_plan(
    plan: Plan,
    *,
    resume: bool = False,
    address: str | None = None,
    console: Console | None = None,
    profile: str | None = None,
    source: str | None = None,
    keep_going: bool = True,
    trials_per_driver: int | None = TRIALS_PER_DRIVER,
    stall_s: float | None = STALL_S,
    run_id: str | None = None,
    kind: str = "sweep",
) -> RunOutcome:
    """Run every pending trial of `plan` and write the run folder.

    `run_id`: the run's id, when the caller chose it (evaluate() prints it first, and its
    `resume=` names it); else a new one. `kind`: what the run's status file calls it. The
    plan adds its own manifest fields (`plan.run_fields(trials)`: an evaluation's summary)
    and status facts (`plan.status_facts()`).

    `keep_going`: a trial that fails is listed in the manifest (`failed_trials`) and the
    others still run; False: the first failure raises (callers that need every trial).
    `trials_per_driver`: more pending trials than this run in fresh driver processes of at
    most this many trials each (engine.driver_processes); None or 0: all in this one.
    `stall_s`: the stall watchdog's period (engine.watchdog); None or 0: off. The run's log
    (engine.run_log) holds every failed trial's traceback and the workers' model-loading
    noise; it is copied into the run folder as `run.log`."""
    console = console or Console(stderr=True)
    check_output_outside_job_copy(plan.output)  # a `ray job submit` copy: results vanish
    run_id = run_id or new_run_id()
    created = time.time()
    created_iso = now_iso()  # the run's own time, not that of a trial it restored
    try:  # debris of killed runs; never a reason to fail this one
        removed = remove_stale_temps(plan.output)
    except Exception:
        removed = 0
    if removed:
        console.print(f"removed {removed} temporary file(s) left by interrupted runs")
    done = restore(plan) if resume else {}
    if done:
        console.print(
            f"[green]resume:[/] restored {len(done)} finished trial(s) of "
            f"{len(plan.trials)} from checkpoints"
        )
    pending = plan.pending(done)
    if not resume:  # rows a stopped run checkpointed are kept only for --resume
        clear_parts(plan.output, pending)
    if pending:  # a cluster that does not answer: before the status file or anything else
        check_reachable(address)
    status = RunStatus(  # what `lasagna view` shows while the run runs
        plan.output,
        run_id,
        kind,
        len(plan.trials),
        restored=len(done),
        command=_command_line(),
        profile=profile or plan.sweep.profile,
        **plan.status_facts(),
    )
    results: dict[str, TrialResult] = dict(done)
    ray_info: dict[str, Any] = {}
    failed: list[dict[str, Any]] | None = [] if keep_going else None
    model_loads: list[dict[str, Any]] = []
    log = log_path(plan.output, run_id)
    if pending:
        from lasagna.engine.preflight import preflight

        with status.running(), run_log(plan.output, run_id):
            preflight(pending, resources=plan.sweep.resources)
            check_writable_output(plan.output)
            check_writable_cache()
            status.start()
            if trials_per_driver and len(pending) > trials_per_driver:
                ray_info, model_loads = run_in_driver_processes(
                    plan,
                    pending,
                    trials_per_driver,
                    address,
                    console,
                    results,
                    failed,
                    status,
                    stall_s,
                )
            else:
                ray_info, model_loads = run_on_ray(
                    plan,
                    pending,
                    address,
                    console,
                    results,
                    failed,
                    status=status,
                    stall_s=stall_s,
                )
    interrupts.check()  # a ^C dropped on its way: the run folder is not written
    failed = failed or []
    ordered = [results[t.key] for t in plan.trials if t.key in results]
    if not ordered:  # nothing to write: every trial failed
        kept = f" (tracebacks: {log})" if log.is_file() else ""
        console.print(
            f"[red]all {len(failed)} trial(s) failed[/]; no run was written{kept}", soft_wrap=True
        )
        status.finish(None, "failed", f"all {len(failed)} trial(s) failed")
        return RunOutcome("", "", [], sorted(done), failed)
    if not pending:
        holder = run_holding(plan.output, [t.key for t in plan.trials])
        if holder is not None:  # nothing ran: point at the run that has it all, copy nothing
            console.print(
                f"all {len(ordered)} trial(s) were done already; run {holder.run_id} holds "
                f"them, so no new run is written ({_elapsed(created)})"
            )
            status.finish(holder.run_id)
            return RunOutcome(
                holder.run_id, Store(plan.output).shown(holder.path), ordered, sorted(done)
            )
    manifest = {
        "created_at": created_iso,
        "created_at_epoch": created,
        "command": " ".join(sys.argv),
        "source": source,
        "profile": profile or plan.sweep.profile,
        "config": plan.sweep.model_dump(mode="json"),
        "machine": machine_info(),
        "ray": ray_info,
        "restored_trials": sorted(done),
        # each pooled model loaded by this run (chat engines, embedders), once per pool
        "model_loads": model_loads,
    }
    ran_now = [results[t.key] for t in pending if t.key in results]  # restored: counted before
    manifest["model_call_cache"] = cache_summary(plan.call_cache, ran_now)
    if failed:  # the run holds the others; `--resume` runs only these again
        manifest["failed_trials"] = failed
    manifest.update(run_totals(ordered))
    manifest.update(plan.run_fields(ordered))
    logged = run_files(plan.output, run_id)
    if logged:
        manifest["log"] = IN_RUN
        for f in failed:  # their tracebacks: in the run folder's copy
            f["log"] = IN_RUN
    with status.running():
        path = write_run(plan.output, run_id, manifest, ordered, files=logged)
    discard(plan.output, run_id)  # the run folder holds it now
    status.finish(run_id)
    calls = manifest["model_call_cache"]
    if calls.get("hits") or calls.get("misses"):
        console.print(
            f"model-call cache: {calls['hits']} call(s) reused, {calls['misses']} computed "
            "(--no-cache turns it off)"
        )
    ran = f"{len(pending) - len(failed)} trial(s) run" + (f", {len(done)} restored" if done else "")
    ran += f", {len(failed)} failed" if failed else ""
    shown = Store(plan.output).shown(path)
    console.print(
        f"wrote run {run_id} ({ran}) in {_elapsed(created)} -> {shown}",
        soft_wrap=True,  # a path is never broken across lines
    )
    return RunOutcome(run_id, shown, ordered, sorted(done), failed)


def clear_parts(output: str, trials: list[Any]) -> None:
    """Remove the row checkpoints (lasagna.results.partial) of these trials, for the tracks
    that write them (those that run their rows themselves)."""
    from lasagna.results.partial import TrialParts
    from lasagna.tracks import get_track

    for t in trials:
        if get_track(t.track).runs_own_rows:
            TrialParts(output, t.key).remove()


def run_totals(trials: list[TrialResult]) -> dict[str, int]:
    """The counts the trials' tracks total over a run (`Track.run_totals`: e.g. judge replies
    that did not parse), for each count some trial has."""
    from lasagna.tracks import get_track

    totals: dict[str, int] = {}
    for t in trials:
        for name in get_track(t.track).run_totals:
            if name in t.counts:
                totals[name] = totals.get(name, 0) + int(t.counts[name])
    return totals


def cache_summary(location: str | None, trials: list[TrialResult]) -> dict[str, Any]:
    """The run's model-call cache: where, and the calls it answered (hits) or stored
    (misses), generation and judge calls together; per trial they are in its counts."""
    if location is None:
        return {"enabled": False}
    hits = misses = 0
    for t in trials:
        for name, value in t.counts.items():
            hits += value if name.endswith("cache_hits") else 0
            misses += value if name.endswith("cache_misses") else 0
    return {"enabled": True, "location": location, "hits": hits, "misses": misses}


def _command_line() -> str:
    """The command as typed: `lasagna ...` also when run as `python -m lasagna.cli`."""
    first = sys.argv[0] if sys.argv else ""
    ends = ("/lasagna", "lasagna/cli/__main__.py", "lasagna/__main__.py")
    cli = first.endswith(ends) or first == "lasagna"
    return " ".join(["lasagna" if cli else first, *sys.argv[1:]])


def _elapsed(since_epoch: float) -> str:
    """The run's wall time so far: "51.2 s" or "3 min 32 s"."""
    secs = time.time() - since_epoch
    return f"{secs:.1f} s" if secs < 60 else f"{int(secs // 60)} min {int(secs % 60)} s"
