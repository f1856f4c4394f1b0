"""A cache entry named relative to its cache root, so that another machine can hold a copy.

A cluster's nodes need not share a file system. The driver builds an index in its own cache
root; a node that runs a Search actor writes the entry's files under its own root (they
reach it through Ray's object store: lasagna.stages.index_copies), once and atomically, and
opens that copy. The name is the same on every node, so the node's later trials read it.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable
from pathlib import Path

from lasagna.cache.atomic import build_atomically
from lasagna.cache.roots import cache_root

# (file name inside the entry, its bytes), produced on demand
EntryFiles = Callable[[], Iterable[tuple[str, bytes | memoryview]]]


def entry_name(folder: Path) -> str:
    """`folder`'s name under this process's cache root (e.g. `indexes/dense/<key>`)."""
    return Path(folder).resolve().relative_to(cache_root().resolve()).as_posix()


def entry_files(folder: Path) -> list[str]:
    """The files of a folder entry, relative to it, in a fixed order."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def local_copy(name: str, files: EntryFiles) -> Path:
    """This machine's copy of the entry `name`: read as it is when present, else written
    first from `files()` (called only then). A node that cannot write its cache root says
    which root, on which machine, and what to set."""
    final = cache_root() / name

    def build(tmp: Path) -> None:
        for rel, data in files():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(data)

    if not final.is_dir():
        _check_writable(final.parent, name)
    return build_atomically(final, build)


def _check_writable(folder: Path, name: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        problem = None if os.access(folder, os.W_OK | os.X_OK) else "not writable"
    except OSError as err:
        problem = err.strerror or str(err)
    if problem:
        raise OSError(
            f"{socket.gethostname()} cannot write its copy of the cache entry {name} under "
            f"{cache_root()} ({problem}): set LASAGNA_CACHE to a writable folder on every "
            f"node (it need not be shared)"
        )
