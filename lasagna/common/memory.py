"""Keep a long sweep's driver from creeping up trial after trial (docs/benchmarks.md).

Two glibc behaviours make a driver's resident size grow while it keeps nothing:
- freed pages stay in the heap arenas: `malloc_trim(0)` returns the free pages at the top
  and in the middle of every arena; it costs milliseconds;
- every Ray Data execution starts new threads, and glibc gives threads new arenas (up to 8
  per core), each fragmented in its own way: capping the arenas (`limit_malloc_arenas`,
  before Ray starts its threads) makes the threads share a few, whose free space is reused.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
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


M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
DRIVER_ARENAS = 2  # the driver's threads mostly wait on Ray; they need little concurrency


def limit_malloc_arenas(arenas: int = DRIVER_ARENAS) -> bool:
    """Cap glibc's heap arenas for this process (as MALLOC_ARENA_MAX would at start-up);
    threads that allocate after this share them. False where it cannot (not glibc), or
    when the user set MALLOC_ARENA_MAX themselves (theirs is kept)."""
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))


def release_freed_memory() -> None:
    """Collect cycles, then hand glibc's free heap pages back to the OS (Linux only)."""
    gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
