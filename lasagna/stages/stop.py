"""A request that the work of this process's trial stop, for the loops that wait on Ray
themselves (evaluate()'s rows: lasagna.stages.sdk_executor.dispatch).

The stall watchdog (lasagna.engine.watchdog) ends a trial that can never go on. Where the
trial's loop waits on Ray in bounded waits, it checks this request between them and stops
with the watchdog's reason, so nothing has to be interrupted inside Ray's own code; the
watchdog wakes a thread only when no loop took the request (Ray Data's executor).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass
class _Request:
    reason: str | None = None  # why the trial should stop (None: it should not)
    taken: bool = False  # a loop has taken it


_LOCK = threading.Lock()
_NOW = _Request()


class StopRequested(RuntimeError):
    """The trial was asked to stop; `reason` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def request(reason: str) -> None:
    with _LOCK:
        _NOW.reason, _NOW.taken = reason, False


def clear() -> None:
    with _LOCK:
        _NOW.reason, _NOW.taken = None, False


def check() -> None:
    """Raise StopRequested when a stop was asked for (and note that a loop took it)."""
    with _LOCK:
        reason = _NOW.reason
        if reason is None:
            return
        _NOW.taken = True
    raise StopRequested(reason)


def taken() -> bool:
    with _LOCK:
        return _NOW.taken
