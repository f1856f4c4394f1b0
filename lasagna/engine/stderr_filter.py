"""Keep the driver's terminal readable while Ray runs in this process.

Ray's C++ core worker in the driver writes its log lines straight to file descriptor 2,
where no Python logging setting reaches them; one is printed for every actor stage of a
run ("has constructor arguments in the object store and max_restarts > 0", Ray issue
#57733: Ray Data always passes an actor's map function through the object store), and one
a second while it retries a head that refuses it. While
Ray runs, fd 2 is a pipe read by a thread that drops those known-harmless lines and, when
the real stderr is not a terminal, strips ANSI colour codes; everything else goes through.
Python's own `sys.stderr` (lasagna's messages, rich progress bars, tracebacks) is pointed
at the real stream meanwhile, so it is not delayed and a terminal stays a terminal.
"""

from __future__ import annotations

import io
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

NOISE = (
    b"has constructor arguments in the object store and max_restarts > 0",
    # a core worker retrying a head that refuses it (a token it lacks), once a second for
    # ~20 s: the error that ends the wait says why (engine.ray_session.connect_error)
    b"Failed to get cluster ID from GCS server",
)
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _real_stderr_fd() -> int | None:
    """2 when sys.stderr writes to fd 2 (a CLI); None when it is redirected (pytest, IDEs)."""
    try:
        return 2 if sys.stderr.fileno() == 2 else None
    except (AttributeError, OSError, ValueError):
        return None


def clean_line(line: bytes, noise: tuple[bytes, ...], strip_ansi: bool) -> bytes | None:
    """The line as it should reach the user, or None to drop it."""
    if any(pattern in line for pattern in noise):
        return None
    return ANSI.sub(b"", line) if strip_ansi else line


@contextmanager
def filtered_stderr(noise: tuple[bytes, ...] = NOISE) -> Iterator[None]:
    """Filter what is written to fd 2 (by C++ code, child processes) inside the block."""
    if _real_stderr_fd() is None:
        yield
        return
    sys.stderr.flush()
    real = os.dup(2)
    strip = not os.isatty(real)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    python_stderr = sys.stderr
    sys.stderr = io.TextIOWrapper(
        io.FileIO(os.dup(real), "w"), encoding="utf-8", errors="replace", line_buffering=True
    )
    out = os.dup(real)

    def pump() -> None:
        pending = b""
        with io.FileIO(read_end, "r") as source:
            while chunk := source.read(65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    kept = clean_line(line + b"\n", noise, strip)
                    if kept:
                        os.write(out, kept)
        if pending and (kept := clean_line(pending, noise, strip)):
            os.write(out, kept)
        os.close(out)

    thread = threading.Thread(target=pump, name="lasagna-stderr", daemon=True)
    thread.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        sys.stderr.close()
        sys.stderr = python_stderr
        os.dup2(real, 2)  # closes our write end of the pipe: the reader sees its end
        os.close(real)
        thread.join(timeout=2.0)
