"""SIGINT at several points of a real sweep (three BM25 trials on the packaged sample), sent
to the `lasagna` process alone or to its whole process group: during Ray's start, in the
hand-over to a driver process, during a trial (in one driver, and in driver processes).
Every time the command ends with exit 130 and says how many trials are checkpointed and
the exact `--resume` command; finished trials are checkpointed, no run folder or temporary
file is left, and no process of its Ray runs on. The printed command then completes the
sweep.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from ray_procs import cleanup, describe, short_tmpdir, wait_gone
from test_faults import (
    cli_env,
    finished_checkpoints,
    lasagna_cmd,
    run_folders,
    sweep_file,
    temp_leftovers,
)

pytestmark = pytest.mark.slow

BOUND_S = 120  # the command must have ended this long after the signal


class Sweep:
    """`lasagna benchmark run sweep.yaml --output out ...` in its own process group, its
    output lines timestamped as they come."""

    def __init__(self, tmp_path: Path, *extra: str):
        sweep_file(tmp_path)
        self.argv = ["benchmark", "run", "sweep.yaml", "--output", "out", *extra]
        self.ray_tmp = short_tmpdir()
        self.out = tmp_path / "out"
        self.lines: list[tuple[float, str]] = []
        self.proc = subprocess.Popen(
            lasagna_cmd(*self.argv),
            env=cli_env(self.ray_tmp, tmp_path / "cache"),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own group: killpg reaches it and its children only
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip()))

    def wait_for(self, pattern: str, bound_s: float = 180) -> None:
        deadline = time.monotonic() + bound_s
        while not any(re.search(pattern, line) for _, line in self.lines):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"never saw {pattern!r}:\n{self.text()}")
            time.sleep(0.02)

    def wait_for_ray_start(self, bound_s: float = 180) -> None:
        """Until the in-process Ray has begun to start (its session folder exists)."""
        deadline = time.monotonic() + bound_s
        while not glob.glob(f"{self.ray_tmp}/ray/session_*"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Ray never started:\n{self.text()}")
            time.sleep(0.01)

    def interrupt(self, whom: str) -> float:
        if whom == "group":
            os.killpg(self.proc.pid, signal.SIGINT)  # ^C at a terminal
        else:
            os.kill(self.proc.pid, signal.SIGINT)  # `kill -INT <pid>`
        return time.monotonic()

    def finish(self) -> int:
        try:
            return self.proc.wait(BOUND_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
            pytest.fail(f"still running {BOUND_S} s after SIGINT:\n{self.text()}")

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def lines_after(self, t: float, pattern: str) -> list[str]:
        return [line for at, line in self.lines if at > t and re.search(pattern, line)]

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        cleanup(self.ray_tmp)


def _check_interrupted(sweep: Sweep, code: int, sent: float) -> int:
    """What every interrupted sweep must show; returns the trials said to be checkpointed."""
    text = sweep.text()
    said = " ".join(text.split())
    assert code == 130, f"exit {code}:\n{text}"
    assert "Traceback" not in text and "Exception ignored" not in text, text
    found = re.search(r"interrupted: (\d+) of 3 trial\(s\) are checkpointed in \S*/out;", said)
    assert found, text
    resume = "lasagna " + shlex.join([*sweep.argv, "--resume"])
    assert resume in said, said[-500:]
    kept = int(found.group(1))
    assert len(finished_checkpoints(sweep.out)) == kept, "the count said is the count on disk"
    assert not run_folders(sweep.out), "an interrupted sweep writes no run folder"
    assert not temp_leftovers(sweep.out), temp_leftovers(sweep.out)
    left = wait_gone(sweep.ray_tmp, bound_s=30)
    assert not left, f"Ray runs on after the interrupted sweep: {describe(left)}"
    assert not sweep.lines_after(sent + 3, r"^wrote run"), text
    return kept


@pytest.mark.parametrize("whom", ["process", "group"])
def test_sigint_during_ray_start(tmp_path, whom):
    sweep = Sweep(tmp_path, "--trials-per-driver", "0")
    try:
        sweep.wait_for_ray_start()
        sent = sweep.interrupt(whom)
        assert _check_interrupted(sweep, sweep.finish(), sent) == 0
        assert not sweep.lines_after(sent, r"^trial \d/3"), sweep.text()
    finally:
        sweep.close()


@pytest.mark.parametrize("whom", ["process", "group"])
def test_sigint_in_the_hand_over_to_a_driver_process(tmp_path, whom):
    """Right after the command says it starts driver processes: the first is starting."""
    sweep = Sweep(tmp_path, "--trials-per-driver", "1")
    try:
        sweep.wait_for(r"driver processes of at most 1")
        sent = sweep.interrupt(whom)
        assert _check_interrupted(sweep, sweep.finish(), sent) == 0
        assert not sweep.lines_after(sent, r"^trial \d/3"), sweep.text()  # it did not run on
    finally:
        sweep.close()


@pytest.mark.parametrize("whom", ["process", "group"])
def test_sigint_during_a_trial_of_a_driver_process(tmp_path, whom):
    """Sent to the command alone, the ^C must reach the driver process running the trials:
    it stops there instead of running its part (trials 1 and 2) to the end."""
    sweep = Sweep(tmp_path, "--trials-per-driver", "2")
    try:
        sweep.wait_for(r"^trial 1/3")
        sent = sweep.interrupt(whom)
        assert _check_interrupted(sweep, sweep.finish(), sent) <= 1
        assert not sweep.lines_after(sent, r"^trial [23]/3"), sweep.text()
    finally:
        sweep.close()


@pytest.mark.parametrize("whom", ["process", "group"])
def test_sigint_during_a_trial_keeps_the_finished_one_and_resume_completes(tmp_path, whom):
    sweep = Sweep(tmp_path, "--trials-per-driver", "0")
    try:
        sweep.wait_for(r"^trial 2/3")
        sent = sweep.interrupt(whom)
        assert _check_interrupted(sweep, sweep.finish(), sent) >= 1
        assert not sweep.lines_after(sent, r"^trial 3/3"), sweep.text()
    finally:
        sweep.close()
    if whom == "group":
        return  # the printed command, once, is enough
    printed = " ".join(sweep.text().split()).rsplit(": ", 1)[1]
    argv = shlex.split(printed)
    assert argv[0] == "lasagna"
    ray_tmp = short_tmpdir()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "lasagna", *argv[1:]],
            env=cli_env(ray_tmp, tmp_path / "cache"),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        cleanup(ray_tmp)
    said = " ".join(done.stderr.split())
    assert done.returncode == 0, said[-2000:]
    assert re.search(r"restored [12] finished trial\(s\) of 3 from checkpoints", said), said
    assert len(run_folders(sweep.out)) == 1
