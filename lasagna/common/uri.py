"""Where a location lives: a local path (plain, or a `file://` URL) or a remote fsspec URI.

One rule for every reader and writer: `file://` names a local path, anything else with
`scheme://` is remote (s3://, gs://, memory://, ...).
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

FILE_SCHEME = "file://"


def is_uri(location: str | os.PathLike[str]) -> bool:
    """True for a remote fsspec URI (s3://, gs://, memory://); False for a local path or
    a `file://` URL."""
    text = str(location)
    return "://" in text and not text.startswith(FILE_SCHEME)


def local_path(location: str | os.PathLike[str]) -> str:
    """The local path a plain path or `file://` URL names (`file:///a`, `file://localhost/a`
    -> `/a`; `file://rel/x` -> `rel/x`); ValueError for a remote URI."""
    text = str(location)
    if is_uri(text):
        raise ValueError(f"not a local path: {text}")
    if not text.startswith(FILE_SCHEME):
        return text
    parts = urlsplit(text)
    if parts.netloc in ("", "localhost"):
        return unquote(parts.path)
    return unquote(parts.netloc + parts.path)  # file://results/x: a relative path


def resolve_location(location: str, base_dir: os.PathLike[str] | str) -> str:
    """A location as stored: a remote URI as written ($VARS expanded), a local folder (or
    `file://` URL) as an absolute path read from `base_dir` (~ and $VARS expanded)."""
    from pathlib import Path

    if is_uri(location):
        return os.path.expandvars(location)
    p = Path(local_path(os.path.expandvars(location))).expanduser()
    return str(p if p.is_absolute() else (Path(base_dir) / p).resolve())
