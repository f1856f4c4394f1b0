"""A trial that fails: why, in one line a person can act on, for the console and the manifest.

A sweep keeps going when one trial fails (a model that cannot load on some node, a node lost
beyond Ray's restarts): the others finish and are checkpointed, the run's manifest lists the
failed trials with their reasons, and `--resume` runs only what is missing. Errors in the
user's input (`UserError`) still stop the sweep: they are refused before any trial starts.
"""

from __future__ import annotations

import re
from typing import Any

MAX_REASON = 400  # characters of the error kept in the manifest

# Ray's errors for lost infrastructure, by class name (no `import ray` needed to name them)
LOST = {
    "ActorDiedError": "a Ray actor of this trial died and could not be restarted",
    "ActorUnavailableError": "a Ray actor of this trial was unreachable",
    "NodeDiedError": "a Ray node running this trial died",
    "ObjectLostError": "data of this trial was lost with a Ray node",
    "ObjectReconstructionFailedError": "data of this trial was lost with a Ray node",
    "OwnerDiedError": "the Ray worker that owned data of this trial died",
    "WorkerCrashedError": "a Ray worker running this trial crashed",
    "OutOfMemoryError": "Ray killed a worker of this trial for lack of memory",
}


def stops_the_sweep(err: BaseException) -> bool:
    """A `UserError` raised here (bad input found late) stops the sweep as before; one that
    a Ray worker raised (Ray re-raises it as a subclass of both) is about that trial and
    that node only, e.g. a model missing from one node's cache."""
    from lasagna.errors import UserError

    remote = any(c.__name__ == "RayError" for c in type(err).__mro__)
    return isinstance(err, UserError) and not remote


def root_cause(err: BaseException) -> BaseException:
    """The innermost error: Ray wraps a remote error (`RayTaskError.cause`), Ray Data and
    lasagna chain theirs (`raise ... from`)."""
    seen = set()
    while id(err) not in seen:
        seen.add(id(err))
        inner = getattr(err, "cause", None)
        if isinstance(inner, BaseException):
            err = inner
            continue
        if err.__cause__ is not None:
            err = err.__cause__
            continue
        break
    return err


def _chain(err: BaseException) -> list[BaseException]:
    """`err` and every error it wraps (Ray's `cause`, `raise ... from`, the context)."""
    out: list[BaseException] = []
    while err is not None and all(err is not e for e in out):
        out.append(err)
        inner = getattr(err, "cause", None)
        err = inner if isinstance(inner, BaseException) else (err.__cause__ or err.__context__)
    return out


def _lost(chain: list[BaseException]) -> str | None:
    """What Ray lost, if one of the errors is one of Ray's infrastructure errors."""
    for err in chain:
        for cls in type(err).__mro__:
            if cls.__name__ in LOST:
                return LOST[cls.__name__]
    return None


ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit)): (.+)$")


def _last_error_line(text: str) -> str | None:
    """`Type: message` from the last line of a remote traceback Ray put in a message."""
    for line in reversed([ln.strip() for ln in text.splitlines() if ln.strip()]):
        match = ERROR_LINE.match(line)
        if match:
            return f"{match.group(1).rsplit('.', 1)[-1]}: {match.group(2)}"
    return None


ANSI = re.compile(r"\x1b\[[0-9;]*m")
# errors whose message is the whole reason (engine.watchdog, engine.row_failures)
SAYS_IT_ALL = ("TrialStalled", "EveryRowFailed")


def _one_line(err: BaseException) -> str:
    """The error's own first line; for a remote error (Ray's message holds the worker's
    traceback, header stripped) the traceback's last `Type: message` line."""
    text = ANSI.sub("", str(err))
    if "\n" in text.strip() and (line := _last_error_line(text)):
        return line
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__


WRAPPERS = ("UserCodeException", "RayTaskError", "RaySystemError", "TaskCancelledError")
CAUSE_MARK = "The above exception was the direct cause of the following exception"


def _is_wrapper(name: str) -> bool:
    """Ray's and Ray Data's wrappers of a worker's error (`RayTaskError(ValueError)` too)."""
    return name.split("(", 1)[0].rsplit(".", 1)[-1] in WRAPPERS


def _innermost_remote(chain: list[BaseException]) -> str | None:
    """The worker's own error from the traceback text Ray put in a message: Python prints
    a chain innermost first, so the first `Type: message` line that is not one of Ray's
    wrappers is the cause (`ValueError: ...` under Ray Data's `UserCodeException`)."""
    for err in chain:
        text = ANSI.sub("", str(err))
        for line in (ln.strip() for ln in text.splitlines()):
            match = ERROR_LINE.match(line)
            if match and not _is_wrapper(match.group(1)):
                return f"{match.group(1).rsplit('.', 1)[-1]}: {match.group(2)}"
    return None


def bounded(text: str, limit: int = MAX_REASON) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def failure_reason(err: BaseException) -> str:
    """One line: the root cause (`Type: message`), prefixed by what Ray lost, if anything.
    An actor whose constructor raised (a model that cannot load) says the constructor's
    error, not Ray's wrapper."""
    chain = _chain(err)
    said = next((e for e in chain if type(e).__name__ in SAYS_IT_ALL), None)
    if said is not None:  # the watchdog's line, or the rows' errors: no cause beneath
        return bounded(str(said), 2 * MAX_REASON)
    init = next((e for e in chain if getattr(e, "actor_init_failed", False)), None)
    if init is not None:
        return bounded(f"a stage's actor could not start ({_one_line(init)})")
    root = root_cause(err)
    text = _one_line(root)
    if _is_wrapper(type(root).__name__) or _is_wrapper(text.split(":", 1)[0]):
        text = _innermost_remote(chain) or text  # the worker's error, not Ray Data's wrapper
    lost = _lost(chain)
    return bounded(f"{lost} ({text})" if lost else text)


def described(trial: Any) -> dict[str, Any]:
    """A trial as the manifest and the status file name it."""
    return {
        "key": trial.key,
        "system": trial.system_name,
        "benchmark": trial.benchmark_name,
        "track": trial.track,
        "repeat": trial.repeat,
    }


def failed_trial(trial: Any, err: BaseException, stage: str | None = None) -> dict[str, Any]:
    """The manifest's record of a trial that failed (`stage`: the stage it failed in)."""
    record = described(trial) | {"reason": failure_reason(err)}
    if stage:
        record["stage"] = stage
    from lasagna.engine import run_log

    if (log := run_log.shown()) is not None:
        record["log"] = log  # the full traceback
    return record
