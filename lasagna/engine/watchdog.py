"""The stall watchdog: a trial that makes no progress is reported, and ended when it cannot
go on, so no sweep waits forever.

Progress is any stage event of the trial (a stage starting, rows reaching the driver:
`stages.progress`), a change in Ray's cluster (an actor started or ended, a demand
placed), the driver itself computing (half a core or more: building an index), or an
actor computing (a model loading or answering a long batch: lasagna.stages.busy). After
`stall_s` without any, one line says which trial and stage wait, what for
(Ray's pending resource demands, the actors waiting to be created) and what holds the
resources (the live actors). A trial is ended only when
- what it waits for cannot fit (no node's capacity less what live actors hold can place
  it, nor a node the autoscaler can add) for a second period in a row: nothing will free
  it, or
- `quiet_periods` periods in a row passed with no progress at all: never wait forever
  (0: never for this; the rows of evaluate() run the user's code, which may take any time,
  so only a wait that cannot fit ends them).
Ending a trial first asks its loop to stop (lasagna.stages.stop: evaluate()'s rows check
between bounded waits); a loop that does not take the request (Ray Data's executor) gets
`TrialStalled` raised in the thread that runs it (a signal wakes a main thread blocked on
Ray). The trial then fails as any other does: its reason recorded, the trials before it
checkpointed.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from lasagna.engine.cluster_view import ClusterView, counted, read_view, shown
from lasagna.stages import stop
from lasagna.stages.busy import computing, cpu_seconds

STALL_S = 120.0  # the default of --stall-timeout
QUIET_PERIODS = 10  # periods of no progress at all (demand that fits) before a trial ends
BUSY_SHARE = 0.5  # a driver using half a core or more over a period is working, not stalled
WAKE = signal.SIGUSR2  # interrupts a main thread blocked in Ray's waits
TAKEN_S = 3.0  # how long (a period at most) a stop request waits to be taken before a
# thread is woken
RESOURCES_FIX = (  # how a sweep gives the pools that hold the resources less
    "lower num_cpus/num_gpus in the sweep's resources: (e.g. resources: {judge: {num_cpus: "
    "0.5}}) or use fewer actors"
)


def _secs(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


class TrialStalled(RuntimeError):
    """A trial the watchdog ended; `reason` is its one line."""

    def __init__(self, reason: str = "stalled"):
        super().__init__(reason)
        self.reason = reason


class StallWatchdog:
    """`with StallWatchdog("trial 1/2 bm25 on sample", 120, say): run the trial`."""

    def __init__(
        self,
        label: str,
        stall_s: float,
        say: Callable[[str], None],
        quiet_periods: int = QUIET_PERIODS,
        view: Callable[[], ClusterView] = read_view,
        fix: str = RESOURCES_FIX,
        actors_cpu: Callable[[], dict[str, float]] = cpu_seconds,
    ):
        self.label = label
        self.stall_s = stall_s
        self.say = say
        self.quiet_periods = quiet_periods
        self.view = view
        self.fix = fix
        self.actors_cpu = actors_cpu
        self._used: dict[str, float] = {}
        self.stage: str | None = None
        self.last_stage: str | None = None
        self.reason: str | None = None
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._target = threading.get_ident()
        self._previous_handler: object = None
        self._cpu, self._cpu_at = time.process_time(), time.monotonic()

    # ------------------------------------------------------------------ progress
    def heard(self, name: str, done: int, total: int, unit: str, secs: float, ended: bool) -> None:
        """A `stages.progress` listener: every stage event is progress."""
        self.stage = None if ended else name
        self.last_stage = name  # kept after it ends: where an error came from
        self._last = time.monotonic()

    # ------------------------------------------------------------------ the thread
    def __enter__(self) -> StallWatchdog:
        stop.clear()
        if self.stall_s <= 0:
            return self
        if threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(WAKE, self._wake)
        self._thread = threading.Thread(target=self._watch, name="lasagna-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._previous_handler is not None and not (self._thread and self._thread.is_alive()):
            self._restore_handler()
        stop.clear()

    def _restore_handler(self) -> None:
        """Put the previous WAKE handler back, first taking a wake-up sent but not yet
        delivered: under load one can land after the trial ended, and under the default
        handler SIGUSR2 ends the process (a still-running watchdog keeps ours: harmless
        once `_stop` is set)."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {WAKE})
        try:
            signal.sigtimedwait({WAKE}, 0)  # a pending one is taken, not delivered
            signal.signal(WAKE, self._previous_handler)  # type: ignore[arg-type]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _wake(self, signum: int, frame: FrameType | None) -> None:
        if self.reason is not None and not self._stop.is_set():
            raise TrialStalled(self.reason)

    def _watch(self) -> None:
        tick = min(5.0, self.stall_s / 4)
        periods = unfit_periods = 0
        seen = None
        self._used = self.actors_cpu()
        while not self._stop.wait(tick):
            quiet = time.monotonic() - self._last
            if quiet < self.stall_s * (periods + 1):
                if quiet < self.stall_s:
                    periods = unfit_periods = 0
                continue
            cpu, cpu_at, used = time.process_time(), time.monotonic(), self.actors_cpu()
            secs = cpu_at - self._cpu_at
            busy = (cpu - self._cpu) > BUSY_SHARE * secs or computing(self._used, used, secs)
            self._cpu, self._cpu_at, self._used = cpu, cpu_at, used
            if busy:  # the driver (an index) or an actor (a model) computes: not waiting
                self._last = time.monotonic()
                periods = unfit_periods = 0
                continue
            view = self._read()
            if view is not None and seen is not None and view.signature() != seen:
                self._last = time.monotonic()  # the cluster moved: an actor came or went
                periods = unfit_periods = 0
                seen = view.signature()
                continue
            seen = view.signature() if view is not None else None
            periods += 1
            unfit = view.unplaceable() if view is not None else []
            unfit_periods = unfit_periods + 1 if unfit else 0
            if not unfit and not self.quiet_periods:  # quiet is fine: only a deadlock ends it
                continue
            line = self._describe(view, quiet, unfit)
            if unfit_periods >= 2 or (self.quiet_periods and periods >= self.quiet_periods):
                self._end(line, view, quiet, bool(unfit))
                return
            fits_how = (
                "it fits a node the autoscaler can add (nodes take minutes to start)"
                if view is not None and view.for_new_nodes()
                else "it fits (a model may be loading)"
            )
            ends = (
                f"it cannot fit: the trial ends in {_secs(self.stall_s)} unless it moves"
                if unfit
                else f"{fits_how}: the trial ends after "
                f"{_secs(self.quiet_periods * self.stall_s)} without progress"
            )
            self.say(f"stall: {line}; {ends}")

    def _read(self) -> ClusterView | None:
        try:
            return self.view()
        except Exception:  # noqa: BLE001 - the watchdog never breaks a trial by itself
            return None

    def _describe(self, view: ClusterView | None, quiet: float, unfit: list) -> str:
        where = f"in {self.stage}" if self.stage else "before its first stage (models starting)"
        line = f"{self.label}: no progress for {_secs(quiet)} {where}"
        if view is None:
            return line + " (Ray's state could not be read)"
        waits = counted(view.waiting)
        demand = ", ".join(f"{n}x{shown(s)}" for s, n in view.demand)
        if waits or demand:
            line += "; waits for " + "; ".join(
                p for p in (waits, f"Ray demand {demand}" if demand else "") if p
            )
        else:
            line += "; waits for no resources (a model may be loading or a call hangs)"
        if view.holders:
            cap, free = view.totals("capacity"), view.totals("free")
            line += f"; held by {counted(view.holders)} (capacity {shown(cap)}, free {shown(free)})"
        return line

    def _end(self, line: str, view: ClusterView | None, quiet: float, unfit: bool) -> None:
        fix = (
            f"fix: {self.fix}"
            if unfit
            else f"fix: look at the run's log; raise --stall-timeout (now {_secs(self.stall_s)}) "
            "if the stage is only slow"
        )
        self.reason = f"stalled: {line}; {fix}"
        self.say(f"stall: {line}; ending the trial")
        stop.request(self.reason)  # a loop that waits on Ray in bounded waits takes it
        deadline = time.monotonic() + min(TAKEN_S, self.stall_s)
        while not stop.taken() and time.monotonic() < deadline:
            if self._stop.wait(0.1):  # the trial ended meanwhile
                return
        if not stop.taken():  # Ray Data's executor waits: wake its thread
            self._interrupt()

    def _interrupt(self) -> None:
        if self._previous_handler is not None:  # the trial runs in the main thread
            signal.pthread_kill(threading.main_thread().ident or 0, WAKE)  # to it alone
            return
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(self._target), ctypes.py_object(TrialStalled)
        )


@contextmanager
def watching(
    label: str,
    stall_s: float | None,
    say: Callable[[str], None],
    quiet_periods: int = QUIET_PERIODS,
    fix: str = RESOURCES_FIX,
) -> Iterator[StallWatchdog]:
    """Run the body under a watchdog that hears this process's stage events (`stall_s`
    None or 0: it only follows the stages, for the name of the one that fails;
    `quiet_periods` 0: a quiet trial is never ended, one that cannot fit is)."""
    from lasagna.stages.progress import listening

    dog = StallWatchdog(label, stall_s or 0.0, say, quiet_periods, fix=fix)
    try:
        with dog, listening(dog.heard):
            yield dog
    except BaseException as err:  # whatever the wake-up surfaced as inside Ray's code
        if dog.reason is not None:
            raise TrialStalled(dog.reason) from err
        raise
