"""Indexes that reach every node: the driver's cache entry sent through Ray's object store.

The driver builds an index in its own cache (lasagna.retrieval.store). On one machine a
Search actor opens that folder. On a cluster of several nodes, nothing says the other nodes
can read the driver's disk, so the entry's files are put in the object store, one object per
file (the driver holds one file at a time), and each Search actor opens its node's copy
under its own cache root (lasagna.cache.entries), written there on the node's first use.
Where every node mounts one cache at the same path, `LASAGNA_CACHE_SHARED=1` skips the
copies: the actors open the driver's folder.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SHARED_ENV = "LASAGNA_CACHE_SHARED"  # 1: every node mounts the cache at the same path


@dataclass(frozen=True)
class IndexRef:
    """Where a Search actor finds its index: `path` on the driver's machine, and on a
    cluster of several nodes the entries' files by entry name (object references)."""

    path: str
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def open(self) -> Path:
        """The index folder to load on this machine."""
        if not self.entries:
            if not Path(self.path).is_dir():
                raise FileNotFoundError(
                    f"{socket.gethostname()} cannot read the driver's index at {self.path}: "
                    f"unset {SHARED_ENV} unless every node mounts the same cache at the same path"
                )
            return Path(self.path)
        from lasagna.cache.entries import local_copy

        copies = [local_copy(name, _fetch(files)) for name, files in self.entries.items()]
        return copies[0]  # the retriever's own entry; a hybrid's parts lie beside it


def share_index(path: Path) -> IndexRef:
    """The IndexRef of the cache entry at `path` for this run's Search actors: the files
    travel only when the cluster has more than one node and its cache is not said to be
    shared (`LASAGNA_CACHE_SHARED=1`: every node mounts it at the same path)."""
    if _alive_nodes() <= 1 or os.environ.get(SHARED_ENV, "") not in ("", "0"):
        return IndexRef(str(path))
    import numpy as np
    import ray

    from lasagna.cache.entries import entry_files, entry_name
    from lasagna.retrieval.store import entries_of

    entries = {}
    for folder in entries_of(path):
        entries[entry_name(folder)] = {
            rel: ray.put(np.fromfile(folder / rel, dtype=np.uint8)) for rel in entry_files(folder)
        }
    return IndexRef(str(path), entries)


def _fetch(files: dict[str, Any]):
    def produce():
        import ray

        for rel, ref in files.items():
            yield rel, memoryview(ray.get(ref))

    return produce


def _alive_nodes() -> int:
    if "ray" not in sys.modules:  # not connected (a stage built without Ray, in a test)
        return 1
    import ray

    if not ray.is_initialized():
        return 1
    return sum(1 for n in ray.nodes() if n.get("Alive"))
