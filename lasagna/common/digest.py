"""Canonical JSON and sha256 digests: one recipe for trial keys, cache keys, system ids and
model-file identities, so two places can never hash the same value differently."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no whitespace and unescaped Unicode: one text per value.

    NaN and infinities are refused (they have no JSON spelling, so no stable digest).
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def json_sha256(value: Any) -> str:
    """sha256 hex of a value's canonical JSON."""
    return text_sha256(canonical_json(value))


def text_sha256(text: str) -> str:
    """sha256 hex of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bytes_sha256(data: bytes) -> str:
    """sha256 hex of bytes already in memory (what `sha256sum` prints for a file of them)."""
    return hashlib.sha256(data).hexdigest()


def feed_file(digest: Any, path: Path) -> None:
    """Stream a file's bytes into a hashlib object, 1 MiB at a time."""
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)


@lru_cache(maxsize=256)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    feed_file(digest, Path(path))
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 hex of a file, memoized per (path, size, mtime) so repeated calls are cheap."""
    path = Path(path)
    st = path.stat()
    return _file_sha256(str(path.resolve()), st.st_size, st.st_mtime_ns)


def folder_sha256(folder: str | Path) -> str:
    """One digest over every file of a folder: relative path + file sha256, sorted.

    Dot-entries (.cache, .git and similar bookkeeping) are left out, at any depth.
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        digest.update(f"{rel}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def path_sha256(path: str | Path) -> str:
    """sha256 of a model's files: the file itself, or every file of a folder."""
    path = Path(path)
    return folder_sha256(path) if path.is_dir() else file_sha256(path)
