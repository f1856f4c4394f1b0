"""Long sweeps in consecutive driver processes, so a driver's memory is bounded by its part.

Ray Data 2.60 leaves about 0.1 MiB in the driver for every trial's pipeline (actor classes
and metric series made per execution, thread arenas: docs/benchmarks.md, driver memory), and
nothing lasagna can call gives it back. So, like Ray's own `max_calls` for tasks, a sweep
with more pending trials than `trials_per_driver` runs them in fresh child processes of at
most that many trials each, one after another. Each child connects to Ray (the in-process
default: it starts its own), runs its part with `sweep_part.run_on_ray`, the code a short sweep
runs, and checkpoints every trial as always; the parent never imports Ray and reads the
finished trials back from the checkpoints. A model pool lives in one driver, so each part
loads its models once.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from multiprocessing import resource_tracker
from typing import TYPE_CHECKING, Any

from rich.console import Console

from lasagna.common import interrupts
from lasagna.common.processes import (
    ProcessId,
    descendants_of,
    interrupt_when_orphaned,
    kill_if_same,
)
from lasagna.errors import UserError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from lasagna.engine.ray_session import RaySession
    from lasagna.results import TrialResult
    from lasagna.results.status import RunStatus
    from lasagna.sweep.plan import Plan, Trial

STOP_GRACE_S = 60.0  # a driver process stopping after ^C: its pools close, its Ray shuts down
TRIALS_PER_DRIVER = 100  # the default: a driver grows ~10 MiB over its part (docs/benchmarks.md)


class DriverProcessError(RuntimeError):
    """A driver process ended without a report (killed, out of memory, crashed)."""


def run_in_driver_processes(
    plan: Plan,
    pending: list[Trial],
    per_driver: int,
    address: str | None,
    console: Console,
    results: dict[str, TrialResult],
    failed: list[dict[str, Any]] | None,
    status: RunStatus | None = None,
    stall_s: float | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run `pending` in parts of `per_driver` trials, each in a new process; the same
    (Ray facts, model loads) as `sweep_part.run_on_ray`, and `results`/`failed` filled alike.
    A part that raises stops the sweep with its error, as in one process; what finished is
    checkpointed, so `--resume` goes on from there."""
    from lasagna.results import load_trial

    parts = [pending[i : i + per_driver] for i in range(0, len(pending), per_driver)]
    console.print(
        f"{len(pending)} trials run in {len(parts)} driver processes of at most {per_driver} "
        "trials each, so the driver's memory does not grow with the sweep "
        "(--trials-per-driver)",
        soft_wrap=True,
    )
    address = address or _joined_cluster()
    ray_info: dict[str, Any] = {}
    loads: list[dict[str, Any]] = []
    finished: list[str] = []
    for n, part in enumerate(parts):
        first = n * per_driver
        report = _run_part(
            plan, part, address, console, failed is not None, first, len(pending), status, stall_s
        )
        if status is not None:
            status.reload()  # what the part's driver process wrote
        ray_info = ray_info or report["ray"]
        loads += report["model_loads"]
        if failed is not None:
            failed += report["failed"]
        finished += report["finished"]
    # read back after the last part, not between parts: this process then never holds the
    # rows (and pyarrow) while a driver process runs beside it
    for key in finished:
        result = load_trial(plan.output, key, hold_tables=False)
        if result is None:
            raise DriverProcessError(f"trial {key[:8]} finished but its checkpoint is gone")
        results[key] = result
    return ray_info | {"driver_processes": len(parts)}, loads


def _joined_cluster() -> str | None:
    """The address of a Ray this process already joined (a notebook, a test): the parts
    join it too. None (each part starts its own in-process Ray) when Ray is not running
    here; Ray is not imported for the question."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    return ray.get_runtime_context().gcs_address


def _run_part(
    plan: Plan,
    part: list[Trial],
    address: str | None,
    console: Console,
    keep_going: bool,
    first: int,
    total: int,
    status: RunStatus | None = None,
    stall_s: float | None = None,
) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")  # a clean interpreter: nothing of this one
    receive, send = ctx.Pipe(duplex=False)
    width = None if console.is_terminal else console.width
    child = ctx.Process(
        target=_part_main,
        args=(
            plan,
            part,
            address,
            keep_going,
            first,
            total,
            width,
            os.getpid(),
            send,
            status,
            stall_s,
        ),
        name=f"lasagna-driver-{first + 1}",
    )
    ray_daemons: list[ProcessId] = []  # what the child's in-process Ray runs on
    try:
        start_blocked(child)
        send.close()  # the child holds the only writing end: EOF when it dies
        message = _report_of(receive, ray_daemons)
        child.join()
    except BaseException:  # ^C here (or a bug): the child must not run on without us
        _stop(child, ray_daemons)
        raise
    finally:
        send.close()
        receive.close()
    if message is None:
        kill_if_same(ray_daemons)  # left alone they run on for about a minute
        which = f"trials {first + 1}-{first + len(part)}" if len(part) > 1 else f"trial {first + 1}"
        raise DriverProcessError(
            f"the driver process of {which} ended without a report (exit code "
            f"{child.exitcode}: killed, out of memory or crashed); finished trials are "
            "checkpointed: run the same command with --resume"
        )
    kind, body = message
    if kind == "error":
        raise body
    return body


def start_blocked(child: multiprocessing.process.BaseProcess) -> None:
    """Start `child` with SIGINT blocked, so a ^C waits for its handler (`_part_main`). The
    resource tracker first: its start (on a first spawn) unblocks SIGINT in this thread."""
    resource_tracker.ensure_running()
    with interrupts.held():
        child.start()


def _report_of(receive: Connection, ray_daemons: list[ProcessId]) -> tuple[str, Any] | None:
    """The child's report (or error), None when it died without one; `ray_daemons` kept up
    to date meanwhile. Wakes twice a second, so a ^C dropped on its way is seen."""
    try:
        while True:
            if not receive.poll(0.5):
                interrupts.check()
                continue
            kind, body = receive.recv()
            if kind != "ray":
                return kind, body
            ray_daemons[:] = body
    except EOFError:
        return None


def _stop(child: multiprocessing.process.BaseProcess, ray_daemons: list[ProcessId]) -> None:
    """Stop a driver process as ^C does: SIGINT (sent on, since a ^C sent to this process
    alone never reaches it), so it ends its trial, closes its pools and shuts down its Ray;
    after STOP_GRACE_S, or at a second ^C, SIGKILL for it and its Ray's processes."""
    if child.pid is None:  # it never started
        return
    try:
        if child.exitcode is None:
            os.kill(child.pid, signal.SIGINT)
            child.join(STOP_GRACE_S)
    finally:
        if child.exitcode is None:
            child.kill()
            child.join(5)
            kill_if_same(ray_daemons)


def _part_main(
    plan: Plan,
    part: list[Trial],
    address: str | None,
    keep_going: bool,
    first: int,
    total: int,
    width: int | None,
    parent: int,
    send: Connection,
    status: RunStatus | None = None,
    stall_s: float | None = None,
) -> None:
    """A driver process: run its part of the trials and send the parent one report."""
    from lasagna.engine.sweep_part import run_on_ray

    console = Console(stderr=True)
    if width:
        console.width = width
    results: dict[str, TrialResult] = {}
    failed: list[dict[str, Any]] | None = [] if keep_going else None
    lock = threading.Lock()  # the watcher below and the report share the pipe

    def tell_daemons(session: RaySession) -> None:
        if session.started_here:  # its Ray's daemons and workers: what to end if we die
            threading.Thread(target=_tell, args=(send, lock), daemon=True).start()

    try:
        # SIGINT came blocked from the parent (interrupts.held): a ^C of the start-up
        # window lands here, inside this try, and the first one is the only one acted on
        interrupts.install(once=True)
        interrupt_when_orphaned(parent)
        ray_info, loads = run_on_ray(
            plan,
            part,
            address,
            console,
            results,
            failed,
            first,
            total,
            tell_daemons,
            status,
            stall_s,
        )
    except BaseException as err:  # noqa: BLE001 - every error goes back to the parent
        if not isinstance(err, (UserError, KeyboardInterrupt)):
            traceback.print_exc()  # a bug's traceback does not survive the trip: show it here
        _send(send, lock, ("error", _sendable(err)))
        sys.exit(1)
    report = {"ray": ray_info, "model_loads": loads, "failed": failed or []}
    _send(send, lock, ("report", report | {"finished": list(results)}))


def _send(send: Connection, lock: threading.Lock, message: tuple[str, Any]) -> None:
    """One message to the parent; none when it is gone (this process then just ends)."""
    with lock:
        try:
            send.send(message)
        except OSError:  # BrokenPipeError: the parent died first
            pass


def _tell(send: Connection, lock: threading.Lock, every_s: float = 1.0) -> None:
    """Keep the parent told of the processes this one's Ray runs (workers come and go)."""
    told: list[ProcessId] = []
    while True:
        now = descendants_of(os.getpid())
        if now != told:
            _send(send, lock, ("ray", now))
            told = now
        time.sleep(every_s)


def _sendable(err: BaseException) -> BaseException:
    """`err` if it survives pickling, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:
        return RuntimeError(f"{type(err).__name__}: {err}")
