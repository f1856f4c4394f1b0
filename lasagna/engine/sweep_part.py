"""Run a list of trials in this process, on Ray, with the run's model pools.

This is what one driver does: connect to Ray, run each pending trial (its next trial's
embedders loading meanwhile), checkpoint it at once, and drop each pooled model after the
last trial that needs it. `driver.run_plan` calls it for a whole sweep, and each driver
process of a long sweep (`engine.driver_processes`) for its part.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from lasagna.engine.ray_session import (
    RaySession,
    forget_finished_actor_classes,
    ray_session,
)
from lasagna.results import TrialResult, save_trial
from lasagna.stages.capacity import current_capacity

if TYPE_CHECKING:  # the engine runs a plan; it never imports the sweep package
    from lasagna.results.status import RunStatus
    from lasagna.stages.pools import Pools
    from lasagna.sweep.plan import Plan, Trial


def pool_keys_of(trial: Trial, system: Any, resources: Any) -> list[str]:
    """The run's heavy pools a trial uses (its track says which)."""
    from lasagna.tracks import get_track

    return get_track(trial.track).pool_keys(system, trial, resources)


def run_pending(
    plan: Plan,
    pending: list[Trial],
    pools: Pools,
    results: dict[str, TrialResult],
    console: Console,
    failed: list[dict[str, Any]] | None = None,
    first: int = 0,
    total: int | None = None,
    status: RunStatus | None = None,
    stall_s: float | None = None,
) -> None:
    """Run and checkpoint each pending trial; drop each heavy pool after its last trial.

    With `failed` (a list), a trial that raises is recorded there and the next one runs
    (its pools are rebuilt: a failure may have left them broken); without, it raises.
    `status` (the run's status file) hears of each trial; `stall_s`: the stall watchdog's
    period (engine.watchdog; None or 0: off)."""
    from lasagna.common import interrupts
    from lasagna.common.memory import release_freed_memory
    from lasagna.engine import run_log
    from lasagna.engine.failures import described, failed_trial, stops_the_sweep
    from lasagna.engine.trials import run_trial
    from lasagna.engine.watchdog import watching
    from lasagna.results.partial import TrialParts
    from lasagna.tracks import get_track
    from lasagna.tracks.placement import run_decisions

    resources = plan.sweep.resources
    systems = [t.system.with_resources(resources) for t in pending]
    needs = [pool_keys_of(t, s, resources) for t, s in zip(pending, systems, strict=True)]
    # what fits together on this cluster (refused here, before any model loads, if a trial
    # cannot be placed at all): engines kept for later trials, early embedders, two phases
    decisions = run_decisions(pending, resources, current_capacity())
    for i, trial in enumerate(pending):
        interrupts.check()  # a ^C dropped on its way (lasagna.common.interrupts) stops here
        decision = decisions[i]
        kept = needs[i:] if decision.keep_later else needs[i : i + 1]
        pools.keep_only(k for keys in kept for k in keys)
        pools.drop(decision.release)  # a phased trial's judges load after its generation
        if i + 1 < len(pending) and decision.prestart_next:  # next trial's embedders load now
            get_track(pending[i + 1].track).prestart(systems[i + 1], pools)
        planned = plan.benchmarks[trial.benchmark_index]
        number = f"trial {first + i + 1}/{total or len(pending)}"
        console.print(
            f"[bold]{number}[/] {escape(trial.system_name)} on "
            f"{escape(trial.benchmark_name)} ({trial.track}, repeat {trial.repeat}, "
            f"key {trial.key[:8]})",
            soft_wrap=True,
        )
        if decision.phased:
            console.print(
                "  in two phases: generate, release the generator's engine, then judge (both "
                "engines do not fit at once; `benchmark plan` shows the placement)",
                soft_wrap=True,
            )
        t_trial = time.perf_counter()
        if status is not None:
            status.trial_started(first + i, **described(trial))
        label = f"{number} {trial.system_name} on {trial.benchmark_name}"

        def say(line: str) -> None:
            console.print(f"[yellow]{escape(line)}[/]", soft_wrap=True, highlight=False)
            run_log.write(line)

        own_rows = get_track(trial.track).runs_own_rows  # it saves its rows as they finish
        parts = (
            TrialParts(plan.output, trial.key, getattr(plan, "run_id", "")) if own_rows else None
        )
        try:
            with watching(label, stall_s, say, **stall_options(trial.track)) as dog:
                result = run_trial(
                    trial,
                    planned,
                    resources,
                    pools,
                    plan.call_cache,
                    parts,
                    phased=decision.phased,
                )
        except Exception as err:
            interrupts.check()  # a ^C that surfaced as a worker's error is still a ^C
            if failed is None or stops_the_sweep(err):
                raise
            failed.append(failed_trial(trial, err, stage=dog.last_stage))
            reason = failed[-1]["reason"]
            where = f" in {dog.last_stage}" if dog.last_stage else ""
            run_log.write_traceback(f"{label} failed{where}: {reason}", err)
            console.print(
                f"[red]trial {first + i + 1} failed{escape(where)}:[/] {escape(reason)}",
                soft_wrap=True,
                highlight=False,
            )
            if status is not None:
                status.trial_failed(trial.key, trial.system_name, reason)
            pools.close()
            continue
        # the trial's wall time: its stage timings overlap, so their sum is not it
        result.timings["total"] = time.perf_counter() - t_trial
        save_trial(plan.output, result)
        if parts is not None:
            parts.remove()  # the checkpoint holds every row now
        results[trial.key] = result
        if status is not None:
            status.trial_finished(trial.key, result.timings["total"])
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
    on_connect: Callable[[RaySession], None] | None = None,
    status: RunStatus | None = None,
    stall_s: float | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Connect to Ray, run and checkpoint `pending` in this process with the run's pools;
    (the Ray session's facts, the pools' model loads). `first`, `total`: how the trials
    are numbered on the console when this is one part of a longer list; `on_connect` hears
    of the session before the first trial."""
    from lasagna.stages.pools import Pools
    from lasagna.stages.progress import listening

    with ray_session(address) as session:
        if on_connect is not None:
            on_connect(session)
        ray_info = {
            "address": session.address,
            "start_s": round(session.start_s, 3),
            "resources": session.resources,
        }
        pools = Pools()
        try:
            with listening(status.stage) if status is not None else nullcontext():
                run_pending(
                    plan, pending, pools, results, console, failed, first, total, status, stall_s
                )
        finally:
            pools.close()
    return ray_info, pools.loads


def stall_options(track: str) -> dict[str, Any]:
    """The track's own stall watchdog settings (Track.stall_quiet_periods, resources_fix)."""
    from lasagna.tracks import get_track

    t = get_track(track)
    options = {"quiet_periods": t.stall_quiet_periods, "fix": t.resources_fix}
    return {k: v for k, v in options.items() if v is not None}
