"""A trial that fails: why, in one line a person can act on, for the console and the manifest.

A sweep keeps going when one trial fails (a model that cannot load on some node, a node lost
beyond Ray's restarts): the others finish and are checkpointed, the run's manifest lists the
failed trials with their reasons, and `--resume` runs only what is missing. Errors in the
user's input (`UserError`) still stop the sweep: they are refused before any trial starts.
"""

from __future__ import annotations

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


def _lost(err: BaseException) -> str | None:
    """What Ray lost, if `err` (or one it wraps) is one of Ray's infrastructure errors."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        for cls in type(err).__mro__:
            if cls.__name__ in LOST:
                return LOST[cls.__name__]
        err = getattr(err, "cause", None) or err.__cause__ or err.__context__
    return None


def failure_reason(err: BaseException) -> str:
    """`Type: message` of the root cause (first line, bounded), prefixed by what Ray lost."""
    cause = root_cause(err)
    lines = [ln.strip() for ln in str(cause).splitlines() if ln.strip()]
    message = lines[0] if lines else ""
    text = f"{type(cause).__name__}: {message}" if message else type(cause).__name__
    lost = _lost(err)
    if lost:
        text = f"{lost} ({text})"
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def failed_trial(trial: Any, err: BaseException) -> dict[str, Any]:
    """The manifest's record of a trial that failed."""
    return {
        "key": trial.key,
        "system": trial.system_name,
        "benchmark": trial.benchmark_name,
        "track": trial.track,
        "repeat": trial.repeat,
        "reason": failure_reason(err),
    }
