"""Whether a folder can be made and written, asked before any work that would write there
(an output folder, the cache root): nothing is created to find out."""

from __future__ import annotations

import errno
import os
from pathlib import Path


def nearest_existing(path: Path) -> Path:
    """`path`, or its nearest ancestor that exists (what decides whether it can be made)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def unwritable(path: Path) -> OSError | None:
    """Why a folder cannot be made or written at `path` (a file in the way, no permission),
    its `filename` the existing folder or file that decides it; None when it can."""
    at = nearest_existing(path)
    if not at.is_dir():
        return NotADirectoryError(errno.ENOTDIR, "not a directory", str(at))
    if not os.access(at, os.W_OK | os.X_OK):
        return PermissionError(errno.EACCES, "permission denied", str(at))
    return None
