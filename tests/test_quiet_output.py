"""Quiet output: the driver's fd-2 filter (Ray's C++ noise, ANSI codes off a terminal) and
the per-stage progress line. Real file descriptors in a child process; no Ray needed."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from lasagna.engine.stderr_filter import NOISE, clean_line
from lasagna.stages.progress import StageProgress

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import os, sys
from lasagna.engine.stderr_filter import filtered_stderr
with filtered_stderr():
    os.write(2, b"[2026-12-01 21:41:23,562 E 24644 24644] core_worker.cc:2465: Actor with "
                b"class name: 'MapWorker(MapBatches(Search))' has constructor arguments in the "
                b"object store and max_restarts > 0. If the arguments ...\n")
    os.write(2, b"\x1b[36m(MapWorker pid=1)\x1b[0m a real warning\n")
    print("lasagna's own line", file=sys.stderr)
    os.write(2, b"no newline at the end")
print(" / after", file=sys.stderr)
"""


def test_driver_stderr_drops_ray_noise_and_colour_when_not_a_terminal() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
    )
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "constructor arguments" not in err and "\x1b[" not in err
    assert "(MapWorker pid=1) a real warning" in err and "lasagna's own line" in err
    assert err.rstrip().endswith("no newline at the end / after")


def test_clean_line_keeps_colour_on_a_terminal() -> None:
    line = b"\x1b[36m(pid=1)\x1b[0m hi\n"
    assert clean_line(line, (b"noise",), strip_ansi=False) == line
    assert clean_line(b"some noise here\n", (b"noise",), strip_ansi=False) is None
    refused = (
        b"[2026-12-07 10:18:01,134 W 28103 28103] gcs_client.cc:210: Failed to get cluster ID "
        b"from GCS server: Unauthenticated: RPC error: InvalidAuthToken\n"
    )
    assert clean_line(refused, NOISE, strip_ansi=True) is None  # the error after says why


def test_stage_progress_is_one_line_off_a_terminal() -> None:
    out = io.StringIO()
    with StageProgress("search+score", 26, Console(file=out, width=100)) as bar:
        bar.advance(20)
        bar.advance(6)
    (line,) = out.getvalue().splitlines()
    assert line.startswith("  search+score") and "26/26 rows in" in line and "/s)" in line
    assert "\x1b[" not in out.getvalue()


def test_stage_progress_draws_a_bar_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True)
    with StageProgress("encode corpus", 10, console) as bar:
        bar.advance(10)
    text = out.getvalue()
    assert "encode corpus" in text and "10/10" in text and "━" in text


def test_stage_progress_show_false_prints_nothing_on_or_off_a_terminal() -> None:
    for terminal in (False, True):
        out = io.StringIO()
        console = Console(file=out, width=100, force_terminal=terminal)
        with StageProgress("encode corpus", 10, console, show=False) as bar:
            bar.advance(10)
        assert out.getvalue() == "" and bar.done == 10
