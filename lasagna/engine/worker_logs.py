"""Keep model-loading noise from Ray's workers off the user's terminal, in the run's log.

Ray forwards every line a worker prints to the driver (`log_to_driver`), which prints it on
its own stdout/stderr: in a terminal, and in `ray job logs` when the driver is a job. A
model load prints progress bars there (GGUF conversion, "Loading weights", Hugging Face's
tqdm bars) and vLLM prints dozens of INFO lines per engine. While a run runs, the driver's
handler of those lines is wrapped (`diverted`): such lines go to the run's log file
(`engine.run_log`) and the rest (warnings, errors, a user's own prints) reach the user as
before. Ray Data's own INFO and ERROR lines (a failed block's abbreviated traceback) go to
the log too: lasagna prints the failed trial's cause in one line. Ray's handler is
restored afterwards, so a notebook's Ray is left as it was.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lasagna.engine import run_log

RAY_HANDLER = "ray_print_logs"  # the name Ray 2.60 gives its log_to_driver handler

NOISE = re.compile(
    r"\d+%\|"  # a tqdm bar: " 45%|████▌     | 9/20 [00:01<00:01, 8.1it/s]"
    r"|\|\s*\d+/\d+ \[\d"  # a tqdm bar without a percentage
    r"|\b\d+(?:\.\d+)?(?:it|s)/(?:s|it)\]"  # the tail of a tqdm bar
    r"|^\s*(?:Loading weights|Loading checkpoint shards|Loading safetensors|Converting"
    r"|Processed prompts|Adding requests)\b"
    # vLLM's log format: "INFO 12-04 19:55:01 [core.py:61] ..." (DEBUG alike), also from
    # its engine process: "(EngineCore_DP0 pid=812) INFO 12-04 ..."
    r"|^\s*(?:\([^)]*\)\s*)?(?:INFO|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\["
)


def is_noise(line: str) -> bool:
    """A line of model-loading progress or vLLM INFO chatter (not a warning or an error)."""
    return bool(NOISE.search(line.rsplit("\r", 1)[-1] if "\r" in line.strip() else line))


def split_batch(data: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """(the batch with the noise removed, or None when nothing is left; the noise lines)."""
    lines = list(data.get("lines") or [])
    noise = [ln for ln in lines if is_noise(ln)]
    if not noise:
        return data, []
    kept = [ln for ln in lines if not is_noise(ln)]
    return (data | {"lines": kept}) if kept else None, noise


def _who(data: dict[str, Any]) -> str:
    name = data.get("actor_name") or data.get("task_name") or ""
    return f"({name} pid={data.get('pid')})".replace("( ", "(")


def _wrap(handler: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def filtered(data: dict[str, Any]) -> None:
        kept, noise = split_batch(data)
        if noise:
            who = _who(data)
            run_log.write("".join(f"{who} {ln.rstrip()}\n" for ln in noise))
        if kept is not None:
            handler(kept)

    return filtered


class _ToRunLog(logging.Filter):
    """On Ray Data's console handler: its INFO and ERROR records (a failed block's three
    lines before lasagna's own one-line reason) go to the run's log; warnings stay."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING or record.levelno > logging.ERROR:
            return True
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + "".join(traceback.format_exception(*record.exc_info))
        run_log.write(f"(ray.data {record.levelname}) {text}")
        return False


@contextmanager
def _ray_data_console() -> Iterator[None]:
    handlers = [
        h
        for h in logging.getLogger("ray.data").handlers
        if not isinstance(h, logging.FileHandler) and "File" not in type(h).__name__
    ]
    keep = _ToRunLog()
    for h in handlers:
        h.addFilter(keep)
    try:
        yield
    finally:
        for h in handlers:
            h.removeFilter(keep)


@contextmanager
def diverted() -> Iterator[None]:
    """Inside the block, workers' noise lines go to the run's log, not the terminal."""
    with _ray_data_console(), _worker_lines():
        yield


@contextmanager
def _worker_lines() -> Iterator[None]:
    try:
        from ray._private.ray_logging import global_worker_stdstream_dispatcher as dispatch
    except ImportError:  # another Ray: its lines go through unchanged
        yield
        return
    originals: dict[int, Callable[[dict[str, Any]], None]] = {}
    with dispatch._lock:
        handlers = []
        for name, handler in dispatch.handlers:
            if name == RAY_HANDLER:
                wrapped = _wrap(handler)
                originals[id(wrapped)] = handler
                handler = wrapped
            handlers.append((name, handler))
        dispatch.handlers = handlers
    try:
        yield
    finally:  # Ray's own handler back, unless Ray shut down meanwhile and dropped it
        with dispatch._lock:
            dispatch.handlers = [(n, originals.get(id(h), h)) for n, h in dispatch.handlers]
