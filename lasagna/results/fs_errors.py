"""Storage failures as messages for people: a full or read-only disk, a file in the way, and
an object store that cannot be reached (no credentials, a wrong endpoint or bucket), which
the storage client raises as its own exception types rather than OSError."""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from lasagna.errors import Problem, UserError

F = TypeVar("F", bound=Callable[..., Any])

# where the storage clients' own errors come from (credentials, endpoints, auth)
CLIENT_MODULES = ("botocore", "aiobotocore", "s3fs", "gcsfs", "google", "aiohttp", "adlfs", "azure")


def unusable(location: str, protocol: str, err: BaseException) -> UserError:
    return UserError(
        Problem(
            f"cannot use results there: {type(err).__name__}: {err}",
            file=location,
            fix=f"check the bucket, the credentials and the endpoint for {protocol}:// "
            "(docs/results.md: Results on object storage)",
        ),
        title="results location not usable",
    )


def storage_errors(method: F) -> F:
    """A `Store` method whose object-store client fails for a reason of the setup (no
    credentials, an unreachable endpoint) raises a UserError naming the location."""

    @functools.wraps(method)
    def wrapper(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (OSError, UserError):
            raise
        except Exception as err:
            if self.local or not type(err).__module__.startswith(CLIENT_MODULES):
                raise
            raise unusable(self.display, self.protocol, err) from err

    return wrapper  # type: ignore[return-value]


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
