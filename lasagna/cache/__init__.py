"""lasagna.cache: every on-disk cache of lasagna, and the one place that decides where each
lives.

    roots    cache_root() ($LASAGNA_CACHE or ~/.cache/lasagna) and the folder of each kind
             of entry: indexes, embeddings, models (converted packaged models), model-calls;
             `model_calls_location`: where a run or a caller caches model calls
    atomic   build_atomically (a folder entry built once, published by one rename) and
             write_file_atomically (one file, written beside its place and renamed)
    index    the keys and folders of retrieval indexes and corpus embeddings
    calls    the entry files of the model-call cache (local folder or fsspec URI)

May import: common only (a cache knows keys and files, not the configs behind them: a
config is passed in and asked for its fields).
"""

from lasagna.cache.atomic import build_atomically, write_file_atomically
from lasagna.cache.roots import (
    CALL_CACHE_FOLDER,
    cache_dir,
    cache_root,
    model_calls_location,
)

__all__ = [
    "CALL_CACHE_FOLDER",
    "build_atomically",
    "cache_dir",
    "cache_root",
    "model_calls_location",
    "write_file_atomically",
]
