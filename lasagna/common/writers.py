"""Names that say who is writing: a hidden temporary name or a checkpoint version records
its writer's host and pid, so a later run can tell the debris of a killed writer from what
a live run (or one on another host) is still writing."""

from __future__ import annotations

import os
import socket
import uuid

from lasagna.common.processes import alive

TEMP_PREFIX = ".tmp-"


def temp_name(prefix: str) -> str:
    """A hidden, unique sibling name: readers skip names starting with '.'.

    It records the writer (host and pid), so a later run can tell the debris of a killed
    writer from a folder another live run is still writing (`stale_temps`).
    """
    return f"{TEMP_PREFIX}{prefix}@{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:8]}"


VERSION_PREFIX = "v@"


def version_name() -> str:
    """A unique name for one immutable version of a checkpoint, naming its writer like
    `temp_name` does (so a dead writer's uncommitted version can be told apart)."""
    return f"{VERSION_PREFIX}{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:8]}"


def _writer(name: str) -> tuple[str, int] | None:
    """(host, pid) of the process that made a `temp_name` (or its `.old` sibling) or a
    `version_name`."""
    if not name.startswith((TEMP_PREFIX, VERSION_PREFIX)) or "@" not in name:
        return None
    parts = name.removesuffix(".old").rsplit("@", 1)[1].rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1])


def stale_temps(names: list[str]) -> list[str]:
    """The temporary (or version) names whose writer, a process on this host, no longer
    runs. A writer on another host is never judged: its names are left alone."""
    host = socket.gethostname()
    stale = []
    for name in names:
        writer = _writer(name)
        if writer is not None and writer[0] == host and not alive(writer[1]):
            stale.append(name)
    return stale


LEASE_PREFIX = f"{TEMP_PREFIX}lease-"


def lease_name(run_id: str) -> str:
    """The lease object a run write on an object store holds while its files are written."""
    return temp_name(f"lease-{run_id}")


def leased_run(name: str) -> str | None:
    """The run id a lease object names, or None for any other name."""
    if not name.startswith(LEASE_PREFIX) or "@" not in name:
        return None
    return name[len(LEASE_PREFIX) :].rsplit("@", 1)[0] or None
