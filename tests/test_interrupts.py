"""^C handling without Ray: a KeyboardInterrupt that Python drops in a finalizer
(`Exception ignored in ... KeyboardInterrupt`) still ends the program; a driver process acts
on its first ^C only; a ^C while a child starts waits for it; the `--resume` hint repeats the
command as given. Each case runs in a fresh interpreter (signal handlers are per process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lasagna.cli.interrupted import resume_command

ROOT = Path(__file__).resolve().parents[1]

DROPPED = """
import os, signal, sys, time
from lasagna.common import interrupts

class Finalized:
    def __del__(self):  # a ^C that lands here is printed and dropped by Python
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10000):
            pass

if sys.argv[1] == "lasagna":
    interrupts.install()
try:
    Finalized()
    for _ in range(50):
        time.sleep(0.01)
    print("ran on")
except KeyboardInterrupt:
    print("interrupted")
"""

ONCE = """
import os, signal, time
from lasagna.common import interrupts

interrupts.install(once=True)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
    print("ran on")
except KeyboardInterrupt:
    try:  # the clean-up of a driver process: a second ^C does not cut it short
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        print("cleaned up")
    except KeyboardInterrupt:
        print("cut short")
"""

BLOCKED = """
import os, signal, sys, threading, time
from lasagna.common import interrupts

if sys.argv[1] == "threads":  # the signal may land on another thread (Ray's, say)
    threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
interrupts.install()
try:
    with interrupts.held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        print("held back")
    time.sleep(1)
    print("lost")
except KeyboardInterrupt:
    print("delivered")
"""


# a library's at-fork hook (filelock's, imported with Ray) hit by a ^C in the middle
FORKED = """
import os, signal, subprocess, sys, time
from lasagna.common import interrupts

def library_hook():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(100000):
        pass
    print("hook done", flush=True)

os.register_at_fork(before=library_hook)
interrupts.install()
if sys.argv[1] == "guarded":
    interrupts.guard_forks()
try:
    subprocess.run(["true"], preexec_fn=lambda: None)  # with a preexec_fn the hooks run
    time.sleep(1)
    print("ran on", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


# a driver process's first moments: its interpreter starts with SIGINT blocked
SPAWNED = """
import multiprocessing, subprocess
from lasagna.engine.driver_processes import start_blocked
ctx = multiprocessing.get_context("spawn")
child = ctx.Process(target=subprocess.call, args=(["grep", "SigBlk", "/proc/self/status"],))
start_blocked(child)
child.join()
"""


def _run(code: str, *args: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.stdout.split()


def test_python_drops_a_keyboard_interrupt_raised_in_a_finalizer():
    """The race itself: with Python's own handler the program runs on."""
    assert _run(DROPPED, "python") == ["ran", "on"]


def test_a_dropped_keyboard_interrupt_is_raised_again():
    assert _run(DROPPED, "lasagna") == ["interrupted"]


def test_a_driver_process_acts_on_its_first_interrupt_only():
    assert _run(ONCE) == ["cleaned", "up"]


@pytest.mark.parametrize("threads", ["one-thread", "threads"])
def test_an_interrupt_while_held_is_delivered_after(threads):
    assert _run(BLOCKED, threads) == ["held", "back", "delivered"]


def test_python_cuts_an_at_fork_hook_short():
    """The race itself: the KeyboardInterrupt lands inside the hook, which never ends."""
    assert "hook done" not in " ".join(_run(FORKED, "unguarded"))


def test_an_interrupt_during_a_fork_waits_for_its_hooks():
    assert _run(FORKED, "guarded") == ["hook", "done", "interrupted"]


def test_a_driver_process_starts_with_interrupts_held_back():
    """Even the first spawn, which also starts multiprocessing's resource tracker (that
    start unblocks SIGINT in its caller): a ^C forwarded to a starting driver process waits
    for its handler instead of killing its interpreter's start-up with a traceback."""
    label, mask = _run(SPAWNED)
    assert label == "SigBlk:" and int(mask, 16) & (1 << (2 - 1)), mask  # SIGINT is 2


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["benchmark", "run", "my sweep.yaml", "--output", "out dir"],
            "lasagna benchmark run 'my sweep.yaml' --output 'out dir' --resume",
        ),
        (
            ["benchmark", "run", "s.yaml", "--resume", "--output", "s3://b/r"],
            "lasagna benchmark run s.yaml --resume --output s3://b/r",
        ),
    ],
)
def test_the_resume_command_repeats_the_arguments_given(argv, expected):
    assert resume_command(argv) == expected
