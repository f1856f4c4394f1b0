"""Processes by id on Linux (/proc), without psutil: what a process started, and ending
those processes later without hitting an unrelated one that reused an id.

A driver process that starts an in-process Ray is the parent of Ray's daemons (GCS,
raylet, dashboard); killed without warning, it leaves them running for about a minute
before they notice. Its supervisor learns their ids while the driver is alive and ends
them at once when it dies. Elsewhere (no /proc) these find nothing and end nothing. The
other way round, a driver process ends itself when its parent is gone (`interrupt_when_orphaned`).
"""

from __future__ import annotations

import _thread
import os
import signal
import threading
import time
from pathlib import Path

ProcessId = tuple[int, int]  # (pid, start time in clock ticks since boot): one process


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of `pid`, or None when it is gone or unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), int(fields[19])  # ppid (field 4), starttime (field 22)


def alive(pid: int) -> bool:
    """Whether a process with this id runs on this host (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def descendants_of(pid: int) -> list[ProcessId]:
    """The processes `pid` started, and theirs, and so on, each with its start time (Ray's
    raylet starts agents of its own, which outlive it by a minute too)."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    parents: dict[int, list[ProcessId]] = {}
    for other in pids:
        stat = _stat(other)
        if stat is not None:
            parents.setdefault(stat[0], []).append((other, stat[1]))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


def kill_if_same(processes: list[ProcessId]) -> int:
    """SIGKILL each process still alive with the same start time; how many were."""
    killed = 0
    for pid, started in processes:
        stat = _stat(pid)
        if stat is None or stat[1] != started:
            continue  # gone, or its id now belongs to another process
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    return killed


def interrupt_when_orphaned(parent: int, every_s: float = 1.0, grace_s: float = 30.0) -> None:
    """End this process soon after its parent is gone (killed with SIGKILL, say): an
    orphaned driver must not go on running trials. It is interrupted as by Ctrl-C, so its
    pools close and the Ray it started shuts down; after `grace_s`, it just exits."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        _thread.interrupt_main()
        time.sleep(grace_s)
        os._exit(1)

    threading.Thread(target=watch, name="lasagna-parent-watch", daemon=True).start()
