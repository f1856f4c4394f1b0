"""Give freed memory back to the operating system between trials.

A long sweep's driver frees each trial's rows and pipeline objects, but glibc keeps the
freed pages in its heap arenas, so the process's resident size creeps up trial after trial
even when nothing is kept (see the README's soak figures). `malloc_trim(0)` returns the
free pages at the top and in the middle of every arena; it costs milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from functools import lru_cache


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None  # glibc only (musl has none)


def release_freed_memory() -> None:
    """Collect cycles, then hand glibc's free heap pages back to the OS (Linux only)."""
    gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
