"""Find and end the processes of one Ray instance, told apart from every other Ray on the
machine by its private RAY_TMPDIR (other test runs and the session fixture run their own).

`ray stop --force` is not used: it ends every Ray process on the machine, not just ours.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import psutil


def dead_pid() -> int:
    """The id of a process that has ended (what a killed writer's names record)."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    return dead.pid


def short_tmpdir(prefix: str = "lr") -> str:
    """A short RAY_TMPDIR: Ray's unix socket paths under it must stay below ~107 bytes."""
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


def ray_processes(ray_tmpdir: str, extra: list[psutil.Process] = ()) -> list[psutil.Process]:
    """Live (non-zombie) processes of the Ray whose files live under `ray_tmpdir`.

    Ray's daemons name the folder on their command line; workers rename themselves
    (`ray::IDLE`) but stay children of the raylet, so descendants are included. `extra`
    adds processes seen earlier (workers call setsid and can outlive their parents).
    """
    roots = []
    for proc in psutil.process_iter(["cmdline"]):
        if ray_tmpdir in " ".join(proc.info["cmdline"] or []):
            roots.append(proc)
    found: dict[int, psutil.Process] = {}
    for proc in [*roots, *extra]:
        try:
            family = [proc, *proc.children(recursive=True)]
        except psutil.Error:
            continue
        for p in family:
            found.setdefault(p.pid, p)
    alive = []
    for p in found.values():
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE and p.pid != os.getpid():
                alive.append(p)
        except psutil.Error:
            continue
    return alive


def wait_gone(
    ray_tmpdir: str, extra: list[psutil.Process] = (), bound_s: float = 90.0
) -> list[psutil.Process]:
    """Poll until no process of that Ray is left (bounded); returns the survivors."""
    deadline = time.monotonic() + bound_s
    while True:
        left = ray_processes(ray_tmpdir, extra)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def kill_all(ray_tmpdir: str, extra: list[psutil.Process] = ()) -> None:
    """SIGKILL whatever is left of that Ray (test clean-up)."""
    for proc in ray_processes(ray_tmpdir, extra):
        try:
            proc.kill()
        except psutil.Error:
            pass


def describe(procs: list[psutil.Process]) -> str:
    out = []
    for p in procs:
        try:
            out.append(f"{p.pid} {p.name()} {' '.join(p.cmdline())[:120]}")
        except psutil.Error:
            out.append(f"{p.pid} (gone)")
    return "; ".join(out)


def cleanup(ray_tmpdir: str, extra: list[psutil.Process] = ()) -> None:
    """End that Ray's leftovers and remove its folder."""
    kill_all(ray_tmpdir, extra)
    shutil.rmtree(ray_tmpdir, ignore_errors=True)
