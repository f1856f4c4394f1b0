"""^C that is never lost: a SIGINT always ends the run, with exit 130.

Python's own handler raises KeyboardInterrupt in whatever Python code the main thread runs
when the signal arrives. When that is a finalizer (a `__del__` run by the garbage
collector, a weakref callback) or a C callback that cannot raise (Ray's Cython hooks), the
exception is printed as `Exception ignored in: ... KeyboardInterrupt` and dropped: the
sweep then ran on to exit 0. Here the handler also records the ^C; an exception so dropped
is raised again at once (`sys.unraisablehook`), and `check()` raises it at the engine's
safe points (each trial, each batch of rows, before the run folder is written), so a
dropped ^C stops the run all the same.

A ^C that lands while this process forks waits until the fork is done (`guard_forks`):
at-fork hooks cannot raise, and one cut short leaves its library's fork bookkeeping half
done (filelock 4.3, which Ray imports, then prints a KeyError traceback).

A driver process (engine.driver_processes) acts on its first ^C only: the process group's
and the one its parent forwards are the same ^C, and its clean-up (pools, Ray) must not be
cut short; its parent, which the user talks to, ends it hard on a second ^C.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

REISSUE_S = 0.05  # a dropped ^C is raised again this soon
SAME_PRESS_S = 1.0  # SIGINTs this close together are one ^C (the group's and a forwarded one)
# at: when the first ^C came; pending: raised and not yet handled (check() raises it again);
# reraise: a KeyboardInterrupt was dropped in a finalizer (the next SIGINT raises it anew);
# defer: inside held(), how deep; held_hit: a ^C came meanwhile (raised on leaving)
_state: dict[str, Any] = {
    "at": None,
    "once": False,
    "pending": False,
    "reraise": False,
    "defer": 0,
    "held_hit": False,
    "installed": False,
    "fork_guard": False,
}


def install(once: bool = False) -> None:
    """Handle SIGINT here (main thread only; elsewhere a no-op). `once`: after the first,
    further SIGINTs are ignored (a driver process). Also unblocks SIGINT, which a driver
    process inherits blocked from its parent's start-up window."""
    if threading.current_thread() is not threading.main_thread():
        return
    _state.update(at=None, once=once, pending=False, reraise=False, defer=0, held_hit=False)
    _state["installed"] = True
    signal.signal(signal.SIGINT, _on_sigint)
    if sys.unraisablehook is not _on_unraisable:
        _state["previous_hook"] = sys.unraisablehook
        sys.unraisablehook = _on_unraisable
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending ^C lands now


def interrupted() -> bool:
    """A ^C arrived since `install()`."""
    return _state["at"] is not None


def check() -> None:
    """Raise KeyboardInterrupt when a ^C arrived and did not reach the code that handles it
    (dropped on its way, or turned into another error): the engine's safe points call this."""
    if _state["pending"]:
        raise KeyboardInterrupt


def acknowledge() -> None:
    """The ^C reached the code that handles it: `check()` no longer raises it."""
    _state["pending"] = _state["reraise"] = False


@contextmanager
def held() -> Iterator[None]:
    """A ^C meanwhile is raised on leaving, not inside (`ray.shutdown()`, a child's start):
    the body is not cut in half. Without `install()`, Python's handler acts as always. On
    the main thread SIGINT is also blocked, so a child process started inside inherits it
    blocked and a ^C before its own handler exists waits for that handler."""
    main = threading.current_thread() is threading.main_thread()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if main else None
    _state["defer"] += 1
    try:
        yield
    finally:
        _state["defer"] -= 1
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)  # one blocked meanwhile: now
        if _state["held_hit"] and not _state["defer"]:
            _state["held_hit"] = False
            raise KeyboardInterrupt


def guard_forks() -> None:
    """Defer a ^C that lands during a fork of the main thread to just after it. Call it
    after importing the libraries whose at-fork hooks it must cover (Ray's filelock): hooks
    registered later run first before a fork and last after it, so theirs run inside."""
    if _state["fork_guard"] or not hasattr(os, "register_at_fork"):
        return
    _state["fork_guard"] = True
    os.register_at_fork(
        before=_fork_starts, after_in_parent=_fork_ended, after_in_child=_fork_ended_in_child
    )


def _fork_starts() -> None:
    if threading.current_thread() is threading.main_thread():
        _state["defer"] += 1


def _fork_ended_in_child() -> None:
    if threading.current_thread() is threading.main_thread():
        _state["defer"] = max(0, _state["defer"] - 1)


def _fork_ended() -> None:
    """In the parent: a ^C held during the fork is raised now (by a signal to the main
    thread, so it lands after the remaining hooks, in the code that forked), unless an
    enclosing `held()` raises it on leaving."""
    if threading.current_thread() is not threading.main_thread():
        return
    _state["defer"] = max(0, _state["defer"] - 1)
    if _state["held_hit"] and not _state["defer"]:
        _state["held_hit"] = False
        _state["reraise"] = True  # `_on_sigint` raises it, not taking it for the same press
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def _on_sigint(signum: int, frame: Any) -> None:
    if _state["reraise"]:  # the ^C dropped by a finalizer, raised again here
        _state["reraise"] = False
        raise KeyboardInterrupt
    now = time.monotonic()
    first = _state["at"]
    if first is not None and (_state["once"] or now - first < SAME_PRESS_S):
        return  # the same ^C told twice, or a driver process already stopping
    _state["at"] = first if first is not None else now
    _state["pending"] = True  # until the code that handles it says so (acknowledge)
    if _state["defer"]:
        _state["held_hit"] = True
        return
    raise KeyboardInterrupt


def _on_unraisable(info: Any) -> None:
    if isinstance(info.exc_value, KeyboardInterrupt) and _state["installed"]:
        _state["reraise"] = True
        # raised again in the main thread once out of the finalizer: a signal to it (not
        # `interrupt_main`, which would raise inside this hook) also wakes a blocking call
        main = threading.main_thread().ident
        again = threading.Timer(REISSUE_S, signal.pthread_kill, (main, signal.SIGINT))
        again.daemon = True
        again.start()
        return
    (_state.get("previous_hook") or sys.__unraisablehook__)(info)
