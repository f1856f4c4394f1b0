"""Where each cache lives: one function per location, nothing else decides one.

$LASAGNA_CACHE (else ~/.cache/lasagna)/
    indexes/<kind>/<key>/     retrieval indexes (lasagna.cache.index)
    embeddings/<key>/         corpus embeddings (lasagna.cache.index)
    models/<name>-<sha>/      packaged models converted to Hugging Face folders
    models/openvino-<key>/    encoders converted to OpenVINO (lasagna.models.runtimes)
    model-calls/              model calls of callers without a results folder
<output>/.model-calls/        model calls of a run (a sweep's `cache: true`)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from lasagna.common.uri import resolve_location

CacheKind = Literal["indexes", "embeddings", "models", "model-calls"]
CALL_CACHE_FOLDER = ".model-calls"  # hidden like .trials: bookkeeping, not a run


def cache_root() -> Path:
    """`$LASAGNA_CACHE`, else ~/.cache/lasagna."""
    env = os.environ.get("LASAGNA_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lasagna"


def check_writable_cache() -> None:
    """Refuse a cache root that cannot hold indexes, embeddings and converted models before
    Ray starts or a model loads: an actor would fail on it inside the first trial, with a
    `--resume` hint that cannot help. Creates nothing. An existing folder passes even when
    read-only: a prebuilt cache (an image's, a shared volume's) may hold all a run needs."""
    from lasagna.common.folders import unwritable
    from lasagna.errors import Problem, UserError

    root = cache_root().absolute()
    if root.is_dir():
        return
    err = unwritable(root)
    if err is None:
        return
    where = os.environ.get("LASAGNA_CACHE")
    named = f"LASAGNA_CACHE={where}" if where else f"the default cache folder {root}"
    why = "is not a folder" if isinstance(err, NotADirectoryError) else "is not writable"
    raise UserError(
        Problem(
            f"{named} cannot hold the cache (indexes, embeddings, converted models): "
            f"{err.filename} {why}",
            field="LASAGNA_CACHE",
            fix="set LASAGNA_CACHE to a folder you can write (default ~/.cache/lasagna)",
        ),
        title="the cache cannot be used (nothing was run):",
    )


def cache_dir(kind: CacheKind) -> Path:
    """The folder of one kind of cache entry under the cache root."""
    return cache_root() / kind


def model_calls_location(
    cache: bool | str, output: str | None = None, base_dir: Path | None = None
) -> str | None:
    """Where model calls are cached: None when `cache` is False (off); for True, under the
    run's `output` (`<output>/.model-calls`) or, for a caller without one (synthesis, the
    SDK's LLM judges), `$LASAGNA_CACHE/model-calls`; else the folder or URI given, a
    relative folder read from `base_dir` (as a sweep reads `output:`) when there is one."""
    if cache is False:
        return None
    if cache is True:
        if output is None:
            return str(cache_dir("model-calls"))
        return f"{output.rstrip('/')}/{CALL_CACHE_FOLDER}"
    if not cache:
        return None
    return resolve_location(cache, base_dir) if base_dir is not None else cache
