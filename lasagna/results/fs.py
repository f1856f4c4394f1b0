"""Where results live: a local folder (fully atomic) or an fsspec URI (s3://, gs://, memory://).

Every writer builds a complete folder under a temporary name and then commits it:
- local (and file://): fsync every file and the folder, then one `os.rename` — a reader
  sees the whole folder or nothing;
- other URIs: object stores have no rename, so the files are moved one by one with the
  commit marker (`manifest.json` / `trial.json`) moved LAST; readers only trust a folder that
  has its marker, so they still never see a half-written result. A crash during the move can
  leave an unmarked folder, which readers ignore and the next write of that key replaces.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from lasagna.common.uri import is_uri, local_path
from lasagna.errors import Problem, UserError


class Store:
    """A folder tree on some file system; paths are plain strings joined with '/'."""

    def __init__(self, output: str | os.PathLike[str]):
        text = str(output)
        self.display = text
        if is_uri(text):
            import fsspec

            self.fs, self.root = fsspec.core.url_to_fs(text)
            self.protocol = text.split("://", 1)[0]
            self.local = False
        else:
            self.fs = None
            self.root = str(Path(local_path(text)).expanduser())
            self.protocol = "file"
            self.local = True

    # ------------------------------------------------------------------ paths
    def path(self, *parts: str) -> str:
        return "/".join([self.root.rstrip("/"), *parts]) if parts else self.root

    def url(self, path: str) -> str:
        """A path other tools (duckdb, users) can open."""
        if self.local:
            return path
        return f"{self.protocol}://{path}"

    # ------------------------------------------------------------------ reading
    def exists(self, path: str) -> bool:
        return os.path.exists(path) if self.local else self.fs.exists(path)

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path) if self.local else self.fs.isdir(path)

    def listdir(self, path: str) -> list[str]:
        """Names (not paths) in a folder; [] when it does not exist."""
        if self.local:
            try:
                return sorted(os.listdir(path))
            except (FileNotFoundError, NotADirectoryError):
                return []
        if not self.fs.isdir(path):
            return []
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in self.fs.ls(path, detail=False))

    def read_bytes(self, path: str) -> bytes:
        if self.local:
            return Path(path).read_bytes()
        return self.fs.cat_file(path)

    @contextmanager
    def open_read(self, path: str) -> Iterator[IO[bytes]]:
        if self.local:
            with open(path, "rb") as fh:
                yield fh
        else:
            with self.fs.open(path, "rb") as fh:
                yield fh

    # ------------------------------------------------------------------ writing
    @contextmanager
    def open_write(self, path: str) -> Iterator[IO[bytes]]:
        """A new file, flushed to stable storage before the context exits (local)."""
        if self.local:
            with open(path, "wb") as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
        else:
            with self.fs.open(path, "wb") as fh:
                yield fh

    def write_bytes(self, path: str, data: bytes) -> None:
        with self.open_write(path) as fh:
            fh.write(data)

    def makedirs(self, path: str) -> None:
        if self.local:
            os.makedirs(path, exist_ok=True)
        else:
            self.fs.makedirs(path, exist_ok=True)

    def rmtree(self, path: str) -> None:
        """Remove a folder if present; never raises (used while cleaning up after errors)."""
        try:
            if self.local:
                shutil.rmtree(path, ignore_errors=True)
            elif self.fs.exists(path):
                self.fs.rm(path, recursive=True)
        except OSError:
            pass

    def commit_dir(self, tmp: str, final: str, marker: str, *, replace: bool) -> None:
        """Make the complete folder `tmp` appear as `final` (see the module docstring)."""
        if self.local:
            _fsync_tree(tmp)
            old = None
            if os.path.exists(final):
                if not replace:
                    raise FileExistsError(errno.EEXIST, "exists already", final)
                old = f"{tmp}.old"
                os.rename(final, old)
            os.rename(tmp, final)
            _fsync_dir(os.path.dirname(final))
            if old:
                shutil.rmtree(old, ignore_errors=True)
            return
        if self.fs.exists(final):
            if not replace:
                raise FileExistsError(errno.EEXIST, "exists already", final)
            self.fs.rm(final, recursive=True)
        files = [p for p in self.fs.find(tmp) if not p.endswith("/")]
        files.sort(key=lambda p: p.rsplit("/", 1)[-1] == marker)  # marker last
        for src in files:
            rel = src[len(tmp.rstrip("/")) + 1 :]
            self.fs.mv(src, f"{final}/{rel}")
        self.rmtree(tmp)


TEMP_PREFIX = ".tmp-"


def temp_name(prefix: str) -> str:
    """A hidden, unique sibling name: readers skip names starting with '.'.

    It records the writer (host and pid), so a later run can tell the debris of a killed
    writer from a folder another live run is still writing (`stale_temps`).
    """
    return f"{TEMP_PREFIX}{prefix}@{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:8]}"


def _writer(name: str) -> tuple[str, int] | None:
    """(host, pid) of the process that made a `temp_name` (or its `.old` sibling)."""
    if not name.startswith(TEMP_PREFIX) or "@" not in name:
        return None
    parts = name.removesuffix(".old").rsplit("@", 1)[1].rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by another user
    return True


def stale_temps(names: list[str]) -> list[str]:
    """The temporary names whose writer, a process on this host, no longer runs."""
    host = socket.gethostname()
    stale = []
    for name in names:
        writer = _writer(name)
        if writer is not None and writer[0] == host and not _alive(writer[1]):
            stale.append(name)
    return stale


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_tree(root: str) -> None:
    for dirpath, _dirs, _files in os.walk(root, topdown=False):
        _fsync_dir(dirpath)


def write_error(err: OSError, target: str, what: str) -> UserError:
    """Turn a failed write into a message for people (disk full, read-only, not a folder)."""
    code = getattr(err, "errno", None)
    if code == errno.ENOSPC or code == errno.EDQUOT:
        msg, fix = "the disk is full", "free space there or pass another --output folder"
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        msg, fix = "it is not writable", "fix its permissions or pass another --output folder"
    elif code in (errno.ENOTDIR, errno.EEXIST) or isinstance(err, NotADirectoryError):
        msg = "a file is in the way (a folder was expected)"
        fix = "remove or rename that file, or pass another --output folder"
    else:
        msg, fix = str(err.strerror or err), "check the output location or pass another --output"
    return UserError(
        Problem(f"cannot write {what}: {msg}; nothing was written", file=target, fix=fix),
        title="results could not be written",
    )


def json_default(value: Any) -> Any:
    """JSON for the few non-JSON values results carry (numpy scalars, paths, tuples)."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
