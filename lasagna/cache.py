"""The on-disk cache shared by indexes, corpus embeddings and prepared models.

Every entry is a folder built once and published atomically, so a crash never leaves a
half-written entry that a later run would load, and concurrent builders cannot corrupt it.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path


def cache_root() -> Path:
    """`$LASAGNA_CACHE`, else ~/.cache/lasagna."""
    env = os.environ.get("LASAGNA_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lasagna"


def model_calls_root(cache: bool | str) -> str | None:
    """Where callers without a results folder (synthesis, the SDK's LLM judges) cache model
    calls: True: $LASAGNA_CACHE/model-calls; False: off; else a folder or URI."""
    if cache is True:
        return str(cache_root() / "model-calls")
    return cache or None


def build_atomically(final: Path, build: Callable[[Path], None]) -> Path:
    """Return `final`, building it first with `build(tmp_dir)` when it does not exist.

    `build` writes into a fresh temporary folder on the same file system, which is then
    renamed to `final` in one step. If another process finished first, its entry wins and
    ours is discarded; if `build` fails, nothing is left behind.
    """
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".tmp-{final.name}-{uuid.uuid4().hex}"
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
