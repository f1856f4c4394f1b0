"""Keep this thread's alternate signal stack across a library call that replaces it.

OpenVINO's CPU plugin gives the thread that compiles a model an alternate signal stack of
its own, and when the model is destroyed it frees that stack and puts back the one it
found. Two models destroyed in the order they were made leave the thread on a freed stack,
and the next signal handled there (Python runs its handlers on it: ^C, the stall
watchdog's wake-up, SIGTERM) kills the process with SIGSEGV. With the thread's own stack
put back right after each such call, every model saves, and later restores, a stack that
stays valid. Linux only; elsewhere, or if libc refuses, the call runs as is.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SS_DISABLE = 2  # <signal.h>: no alternate stack


class _Stack(ctypes.Structure):  # stack_t
    _fields_ = [
        ("ss_sp", ctypes.c_void_p),
        ("ss_flags", ctypes.c_int),
        ("ss_size", ctypes.c_size_t),
    ]


def _sigaltstack():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).sigaltstack
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.POINTER(_Stack), ctypes.POINTER(_Stack)]
    fn.restype = ctypes.c_int
    return fn


def current_stack() -> tuple[int | None, int, int] | None:
    """(address, flags, size) of this thread's alternate signal stack; None off Linux."""
    fn = _sigaltstack()
    found = _Stack()
    if fn is None or fn(None, ctypes.byref(found)) != 0:
        return None
    return found.ss_sp, found.ss_flags, found.ss_size


@contextmanager
def signal_stack_kept() -> Iterator[None]:
    """Run the block, then give this thread back the alternate signal stack it had."""
    fn = _sigaltstack()
    saved = _Stack()
    if fn is None or fn(None, ctypes.byref(saved)) != 0:
        yield
        return
    try:
        yield
    finally:
        saved.ss_flags &= SS_DISABLE  # SS_ONSTACK only reports; it cannot be set
        fn(ctypes.byref(saved), None)
