"""Atomic writes of cache entries: a crash never leaves a half-written entry that a later
run would load, and concurrent writers cannot corrupt one.

A folder entry is built once in a temporary folder beside its place and renamed into it;
a file entry is written to a temporary file beside it and renamed (two writers of one key
write the same bytes, so either wins). Temporary names record their writer
(`lasagna.common.writers.temp_name`): the folder a killed build left (an index's vectors,
large) is removed by the next build of that entry on the same host.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from lasagna.common.writers import TEMP_PREFIX, stale_temps, temp_name


def build_atomically(final: Path, build: Callable[[Path], None]) -> Path:
    """Return `final`, building it first with `build(tmp_dir)` when it does not exist.

    `build` writes into a fresh temporary folder on the same file system, which is then
    renamed to `final` in one step. If another process finished first, its entry wins and
    ours is discarded; if `build` fails, nothing is left behind.
    """
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    _remove_killed_builds(final)
    tmp = final.parent / temp_name(final.name)
    tmp.mkdir()
    try:
        build(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():  # not a lost race: a real failure
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def write_file_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` through a temporary file beside it and one rename."""
    folder = os.path.dirname(os.fspath(path))
    os.makedirs(folder or ".", exist_ok=True)
    tmp = os.path.join(folder, temp_name(os.path.basename(os.fspath(path))))
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _remove_killed_builds(final: Path) -> None:
    """Remove the temporary folders of `final` whose builder, a process on this host, is
    gone (killed mid-build); a live builder's, or another host's, are left alone."""
    mine = f"{TEMP_PREFIX}{final.name}@"
    names = [p.name for p in final.parent.iterdir() if p.name.startswith(mine)]
    for name in stale_temps(names):
        shutil.rmtree(final.parent / name, ignore_errors=True)
