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

from lasagna.common.clock import now_iso
from lasagna.engine.driver_processes import TRIALS_PER_DRIVER
from lasagna.engine.preflight import check_writable_output
from lasagna.engine.ray_session import forget_finished_actor_classes, ray_session
from lasagna.models.precision import cpu_has_bf16
from lasagna.results import (
    TrialResult,
    load_trial,
    new_run_id,
    remove_stale_temps,
    save_trial,
    write_run,
)
from lasagna.results.fs import Store
from lasagna.results.store import run_holding

if TYPE_CHECKING:  # the engine runs a plan; it never imports the sweep package
    from lasagna.engine.pools import Pools
    from lasagna.sweep.plan import Plan, Trial


@dataclass
class RunOutcome:
    run_id: str
    run_path: str
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
    }


def restore(plan: Plan) -> dict[str, TrialResult]:
    """Finished trials of this plan found in the output's checkpoints, by key."""
    found = {}
    for trial in plan.trials:
        result = load_trial(plan.output, trial.key)
        if result is not None:
            found[trial.key] = result
    return found


def pool_keys_of(trial: Trial, system: Any, resources: Any) -> list[str]:
    """The run's heavy pools a trial uses: its system's, then its judges' engines (judged
    generation), so a judge on the generator's model shares its engines."""
    from lasagna.engine.pools import engine_pool_keys
    from lasagna.tracks import get_track

    judges = [j.with_resources(resources) for j in trial.judges]
    return [
        *get_track(trial.track).pool_keys(system),
        *(k for j in judges for k in engine_pool_keys(j.model)),
    ]


def _run_pending(
    plan: Plan,
    pending: list[Trial],
    pools: Pools,
    results: dict[str, TrialResult],
    console: Console,
    failed: list[dict[str, Any]] | None = None,
    first: int = 0,
    total: int | None = None,
) -> None:
    """Run and checkpoint each pending trial; drop each heavy pool after its last trial.

    With `failed` (a list), a trial that raises is recorded there and the next one runs
    (its pools are rebuilt: a failure may have left them broken); without, it raises."""
    from lasagna.common.memory import release_freed_memory
    from lasagna.engine.failures import failed_trial, stops_the_sweep
    from lasagna.engine.trials import run_trial
    from lasagna.tracks import get_track

    resources = plan.sweep.resources
    systems = [t.system.with_resources(resources) for t in pending]
    needs = [pool_keys_of(t, s, resources) for t, s in zip(pending, systems, strict=True)]
    for i, trial in enumerate(pending):
        pools.keep_only(k for keys in needs[i:] for k in keys)
        if i + 1 < len(pending):  # the next trial's embedders load while this one runs
            get_track(pending[i + 1].track).prestart(systems[i + 1], pools)
        planned = plan.benchmarks[trial.benchmark_index]
        console.print(
            f"[bold]trial {first + i + 1}/{total or len(pending)}[/] {trial.system_name} on "
            f"{trial.benchmark_name} ({trial.track}, repeat {trial.repeat}, "
            f"key {trial.key[:8]})",
            soft_wrap=True,
        )
        t_trial = time.perf_counter()
        try:
            result = run_trial(trial, planned, plan.sweep.resources, pools, plan.call_cache)
        except Exception as err:
            if failed is None or stops_the_sweep(err):
                raise
            failed.append(failed_trial(trial, err))
            reason = failed[-1]["reason"]
            console.print(f"[red]trial {first + i + 1} failed:[/] {reason}", soft_wrap=True)
            pools.close()
            continue
        # the trial's wall time: its stage timings overlap, so their sum is not it
        result.timings["total"] = time.perf_counter() - t_trial
        save_trial(plan.output, result)
        results[trial.key] = result
        forget_finished_actor_classes()  # a long sweep's driver must not creep up per trial
        release_freed_memory()


def run_on_ray(
    plan: Plan,
    pending: list[Trial],
    address: str | None,
    console: Console,
    results: dict[str, TrialResult],
    failed: list[dict[str, Any]] | None,
    first: int = 0,
    total: int | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Connect to Ray, run and checkpoint `pending` in this process with the run's pools;
    (the Ray session's facts, the pools' model loads). `first`, `total`: how the trials
    are numbered on the console when this is one part of a longer list."""
    from lasagna.engine.pools import Pools

    with ray_session(address) as session:
        ray_info = {
            "address": session.address,
            "start_s": round(session.start_s, 3),
            "resources": session.resources,
        }
        pools = Pools()
        try:
            _run_pending(plan, pending, pools, results, console, failed, first, total)
        finally:
            pools.close()
    return ray_info, pools.loads


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
) -> RunOutcome:
    """Run every pending trial of `plan` and write the run folder.

    `keep_going`: a trial that fails is listed in the manifest (`failed_trials`) and the
    others still run; False: the first failure raises (callers that need every trial).
    `trials_per_driver`: more pending trials than this run in fresh driver processes of at
    most this many trials each (engine.driver_processes); None or 0: all in this one."""
    console = console or Console(stderr=True)
    run_id = new_run_id()
    created = time.time()
    created_iso = now_iso()  # the run's own time, not that of a trial it restored
    try:  # debris of killed runs; never a reason to fail this one
        removed = remove_stale_temps(plan.output)
    except Exception:
        removed = 0
    if removed:
        console.print(f"removed {removed} temporary folder(s) left by interrupted runs")
    done = restore(plan) if resume else {}
    if done:
        console.print(
            f"[green]resume:[/] restored {len(done)} finished trial(s) of "
            f"{len(plan.trials)} from checkpoints"
        )
    pending = plan.pending(done)
    results: dict[str, TrialResult] = dict(done)
    ray_info: dict[str, Any] = {}
    failed: list[dict[str, Any]] | None = [] if keep_going else None
    model_loads: list[dict[str, Any]] = []
    if pending:
        from lasagna.engine.driver_processes import run_in_driver_processes
        from lasagna.engine.preflight import preflight

        preflight(pending)
        check_writable_output(plan.output)
        if trials_per_driver and len(pending) > trials_per_driver:
            ray_info, model_loads = run_in_driver_processes(
                plan, pending, trials_per_driver, address, console, results, failed
            )
        else:
            ray_info, model_loads = run_on_ray(plan, pending, address, console, results, failed)
    failed = failed or []
    ordered = [results[t.key] for t in plan.trials if t.key in results]
    if not ordered:  # nothing to write: every trial failed
        console.print(f"[red]all {len(failed)} trial(s) failed[/]; no run was written")
        return RunOutcome("", "", [], sorted(done), failed)
    if not pending:
        holder = run_holding(plan.output, [t.key for t in plan.trials])
        if holder is not None:  # nothing ran: point at the run that has it all, copy nothing
            console.print(
                f"all {len(ordered)} trial(s) were done already; run {holder.run_id} holds "
                f"them, so no new run is written ({_elapsed(created)})"
            )
            return RunOutcome(holder.run_id, holder.path, ordered, sorted(done))
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
    if any("judge_invalid_outputs" in t.counts for t in ordered):  # replies that did not parse
        manifest["judge_invalid_outputs"] = sum(
            t.counts.get("judge_invalid_outputs", 0) for t in ordered
        )
    path = write_run(plan.output, run_id, manifest, ordered)
    calls = manifest["model_call_cache"]
    if calls.get("hits") or calls.get("misses"):
        console.print(
            f"model-call cache: {calls['hits']} call(s) reused, {calls['misses']} computed "
            "(--no-cache turns it off)"
        )
    ran = f"{len(pending) - len(failed)} trial(s) run" + (f", {len(done)} restored" if done else "")
    ran += f", {len(failed)} failed" if failed else ""
    console.print(
        f"wrote run {run_id} ({ran}) in {_elapsed(created)} -> {Store(plan.output).shown(path)}",
        soft_wrap=True,  # a path is never broken across lines
    )
    return RunOutcome(run_id, path, ordered, sorted(done), failed)


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


def _elapsed(since_epoch: float) -> str:
    """The run's wall time so far: "51.2 s" or "3 min 32 s"."""
    secs = time.time() - since_epoch
    return f"{secs:.1f} s" if secs < 60 else f"{int(secs // 60)} min {int(secs % 60)} s"
