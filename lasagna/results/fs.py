"""Where results live: a local folder or an fsspec URI (s3://, gs://, memory://), and the
few write primitives the result store commits with.

- `commit_dir` (a folder under a temporary name made to appear whole): local disks fsync
  every file and the folder, then one `os.rename`; elsewhere the files are moved one by one
  with the commit marker moved LAST (object stores have no rename).
- `write_atomic` (replace one file): a temporary sibling + `os.replace` on a local disk; one
  PUT on an object store (a PUT is atomic: readers get the old object or the new one).
- `write_new` (create one file, never replace): `O_EXCL` locally, a conditional PUT
  (`If-None-Match: *`) on S3.
Readers trust only what a marker or pointer names (see `lasagna.results.store`).
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from lasagna.common.uri import is_uri, local_path
from lasagna.common.writers import temp_name
from lasagna.errors import Problem, UserError
from lasagna.results.fs_errors import storage_errors, unusable, write_error  # noqa: F401

BUCKETED = ("s3", "s3a", "gs", "gcs")  # object stores whose root's first part is a bucket


class Store:
    """A folder tree on some file system; paths are plain strings joined with '/'."""

    def __init__(self, output: str | os.PathLike[str]):
        text = str(output)
        self.display = text
        if is_uri(text):
            self.protocol = text.split("://", 1)[0]
            self.fs, self.root = _remote_fs(text, self.protocol)
            # other drivers write here too: never answer from an old cached listing
            self.fs.invalidate_cache()
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

    def shown(self, path: str) -> str:
        """A path as people are shown it: normalized locally, with its scheme elsewhere
        (`s3://bucket/results/<run>`, not the bare `bucket/results/<run>`)."""
        return os.path.normpath(path) if self.local else self.url(path)

    # ------------------------------------------------------------------ reading
    @storage_errors
    def exists(self, path: str) -> bool:
        return os.path.exists(path) if self.local else self.fs.exists(path)

    @storage_errors
    def isdir(self, path: str) -> bool:
        return os.path.isdir(path) if self.local else self.fs.isdir(path)

    @storage_errors
    def listdir(self, path: str) -> list[str]:
        """Names (not paths) in a folder; [] when it does not exist."""
        if self.local:
            try:
                return sorted(os.listdir(path))
            except (FileNotFoundError, NotADirectoryError):
                return []
        if not self.fs.isdir(path):
            if path == self.root:
                self._check_bucket()  # a mistyped bucket is not "no runs yet"
            return []
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in self.fs.ls(path, detail=False))

    def _check_bucket(self) -> None:
        bucket = self.root.split("/", 1)[0]
        if self.protocol in BUCKETED and bucket and not self.fs.exists(bucket):
            err = FileNotFoundError(
                f"the bucket '{bucket}' does not exist (or these credentials cannot see it)"
            )
            raise unusable(self.display, self.protocol, err)

    @storage_errors
    def find(self, path: str) -> list[str]:
        """Every file under a folder, as paths relative to it; [] when it does not exist."""
        base = path.rstrip("/")
        if self.local:
            out = []
            for dirpath, _dirs, files in os.walk(base):
                rel = os.path.relpath(dirpath, base)
                out += [name if rel == "." else f"{rel}/{name}" for name in files]
            return sorted(out)
        if not self.fs.isdir(base):
            return []
        return sorted(p[len(base) + 1 :] for p in self.fs.find(base) if p.startswith(base + "/"))

    @storage_errors
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

    @storage_errors
    def write_atomic(self, path: str, data: bytes) -> None:
        """Create or replace one file so that a reader sees the old bytes or the new, never
        a mix (a temporary sibling + `os.replace` locally, one PUT on an object store)."""
        if not self.local:
            self.fs.pipe_file(path, data)
            return
        folder, name = os.path.split(path)
        tmp = os.path.join(folder, temp_name(name))
        try:
            self.write_bytes(tmp, data)
            os.replace(tmp, path)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_dir(folder)

    @storage_errors
    def write_new(self, path: str, data: bytes) -> None:
        """Create one file; FileExistsError when it exists already (checked atomically:
        `O_EXCL` locally, a conditional PUT on S3; a look first elsewhere)."""
        if self.local:
            with open(path, "xb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            return
        try:
            self.fs.pipe_file(path, data, mode="create")
        except TypeError:  # a file system without the `mode` argument
            if self.fs.exists(path):
                raise FileExistsError(errno.EEXIST, "exists already", path) from None
            self.fs.pipe_file(path, data)

    def remove(self, path: str) -> None:
        """Remove one file if present; never raises."""
        try:
            if self.local:
                os.unlink(path)
            else:
                self.fs.rm_file(path)
        except OSError:
            pass

    @storage_errors
    def check_writable(self) -> None:
        """Write and remove a small probe object, so a wrong bucket, endpoint or credential
        is a UserError before any work starts (object stores only; local disks are checked
        by the driver without writing)."""
        if self.local:
            return
        probe = self.path(temp_name("probe"))
        try:
            self.fs.pipe_file(probe, b"")
            self.fs.rm_file(probe)
        except OSError as err:  # no such bucket, access denied
            raise unusable(self.display, self.protocol, err) from err

    def rmdir_if_empty(self, path: str) -> None:
        """Remove an empty local folder (object stores have no empty folders); never raises."""
        if self.local:
            with suppress(OSError):
                os.rmdir(path)

    @storage_errors
    def makedirs(self, path: str) -> None:
        if self.local:
            os.makedirs(path, exist_ok=True)
        elif self.protocol not in OBJECT_STORES:  # an object store has no folders to make
            self.fs.makedirs(path, exist_ok=True)

    def rmtree(self, path: str) -> None:
        """Remove a folder (or a file) if present; never raises (used while cleaning up)."""
        try:
            if self.local:
                if os.path.isfile(path):
                    os.unlink(path)
                shutil.rmtree(path, ignore_errors=True)
            else:
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


OBJECT_STORES = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "oss", "r2"}


def _remote_fs(uri: str, protocol: str) -> tuple[Any, str]:
    """The fsspec file system and root path of a URI; a missing or unknown driver is a
    UserError saying what to install (s3fs for s3://, gcsfs for gs://)."""
    import fsspec

    try:
        return fsspec.core.url_to_fs(uri)
    except (ImportError, ValueError) as err:
        package = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs"}.get(protocol)
        fix = (
            f"pip install {package} (for s3://: pip install 'lasagna[s3]')"
            if package
            else "use a local folder or a URI fsspec knows (s3://, gs://, memory://)"
        )
        raise UserError(
            Problem(f"cannot open {protocol}:// results: {err}", file=uri, fix=fix),
            title="results location not usable",
        ) from err


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


def json_default(value: Any) -> Any:
    """JSON for the few non-JSON values results carry (numpy scalars, paths, tuples)."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
