"""The entry files of the model-call cache: one small JSON file per call, by its key.

Entries live under `<root>/<key[:2]>/<key>.json`, so concurrent writers on any node never
conflict: a local writer writes a temporary file beside the entry and renames it (atomic;
two writers of one key write the same bytes, either wins); an object store (s3://, gs://)
writes each entry in one PUT, which readers see whole or not at all. No single-file
database, so it is safe across nodes. What a key hashes, and what is cacheable, is
lasagna.models.call_cache's business; where the root is, lasagna.cache.roots'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lasagna.cache.atomic import write_file_atomically
from lasagna.common.uri import is_uri, local_path


class CallStore:
    """The entry files under one root (local folder or fsspec URI)."""

    def __init__(self, root: str):
        self.remote = is_uri(root)
        if self.remote:
            import fsspec

            self.fs, self.root = fsspec.core.url_to_fs(root)
        else:
            self.fs, self.root = None, str(Path(local_path(root)).expanduser())

    def path(self, key: str) -> str:
        return f"{self.root.rstrip('/')}/{key[:2]}/{key}.json"

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The entries found, by key (missing or unreadable entries are misses)."""
        if not keys:
            return {}
        paths = {self.path(k): k for k in keys}
        if self.remote:
            raw = self.fs.cat(list(paths), on_error="omit")  # concurrent on s3fs/gcsfs
        else:
            raw = {}
            for p in paths:
                try:
                    raw[p] = Path(p).read_bytes()
                except OSError:
                    pass
        found = {}
        for p, data in raw.items():
            try:
                entry = json.loads(data)
            except ValueError:
                continue  # damaged by something else: recomputed and rewritten
            if entry.get("key") == paths[p]:
                found[paths[p]] = entry
        return found

    def put_many(self, entries: dict[str, dict[str, Any]]) -> None:
        if not entries:
            return
        # plain json.dumps: a log-probability may be -inf, which canonical JSON refuses
        blobs = {self.path(k): json.dumps(v, sort_keys=True).encode() for k, v in entries.items()}
        if self.remote:
            self.fs.pipe(blobs)  # one PUT per entry: whole or absent
            return
        for path, data in blobs.items():
            write_file_atomically(path, data)  # a concurrent writer of the key wrote the same
