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
