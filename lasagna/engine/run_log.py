"""The run's log file: what the user's terminal is spared but may need later.

    <output>/.logs/<run id>.log     while the run runs (a local output; else a temp folder)
    <output>/<run id>/run.log       a copy in the run folder, once it is written

It holds the full traceback of every failed trial and the worker lines kept off the
terminal (model-loading progress bars, vLLM's INFO lines: `engine.worker_logs`). The
path travels to a long sweep's driver processes in `LASAGNA_RUN_LOG`, so every part of a
run appends to the same file. Writing to it never fails a run.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lasagna.results.fs import Store
from lasagna.results.layout import Output

ENV = "LASAGNA_RUN_LOG"
LOGS = ".logs"
IN_RUN = "run.log"  # its name inside the run folder
_lock = threading.Lock()


def log_path(output: Output, run_id: str) -> Path:
    """Where run `run_id` logs: under the output when it is a local folder."""
    store = Store(output)
    if store.local:
        return Path(store.path(LOGS, f"{run_id}.log"))
    return Path(tempfile.gettempdir()) / "lasagna-logs" / f"{run_id}.log"


@contextmanager
def run_log(output: Output, run_id: str) -> Iterator[Path]:
    """Make `run_id`'s log the current one (this process and its driver processes)."""
    path = log_path(output, run_id)
    before = os.environ.get(ENV)
    os.environ[ENV] = str(path)
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def current() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value else None


def write(text: str) -> None:
    """Append `text` (a line or a block) to the current log; nothing without one."""
    path = current()
    if path is None:
        return
    try:
        with _lock:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8", errors="replace") as f:
                f.write(text if text.endswith("\n") else text + "\n")
    except OSError:
        pass


def write_traceback(header: str, err: BaseException) -> None:
    """`header` and the error's whole traceback, the chained and remote ones included."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    body = "".join(traceback.format_exception(err))
    write(f"[{stamp} UTC] {header}\n{body}")


def shown() -> str | None:
    """The current log's path as the user is told it."""
    path = current()
    return str(path) if path is not None else None


def contents(path: Path | None) -> bytes | None:
    try:
        return path.read_bytes() if path is not None and path.is_file() else None
    except OSError:
        return None


def run_files(output: Output, run_id: str) -> dict[str, bytes] | None:
    """The run folder's copy of the log (`write_run(files=...)`), or None without one."""
    data = contents(log_path(output, run_id))
    return {IN_RUN: data} if data else None


def discard(output: Output, run_id: str) -> None:
    """The live log, once the run folder holds its copy."""
    path = log_path(output, run_id)
    try:
        path.unlink(missing_ok=True)
        path.parent.rmdir()  # only when no other run logs there
    except OSError:
        pass
