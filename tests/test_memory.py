"""release_freed_memory hands freed heap pages back: without it glibc keeps them while one
live block sits above them (what a long sweep's driver looks like), and RSS only grows."""

from __future__ import annotations

import gc
import sys

import psutil
import pytest

from lasagna.common.memory import release_freed_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_heap_pages_go_back_to_the_os() -> None:
    me = psutil.Process()
    blocks = [bytes(4000) + bytes([i % 256]) for i in range(50_000)]  # ~200 MiB via malloc
    last = blocks[-1]  # alive at the top of the heap: free() alone cannot shrink it
    del blocks
    gc.collect()
    held = me.memory_info().rss
    release_freed_memory()
    assert me.memory_info().rss < held - 100 * 2**20
    assert last
