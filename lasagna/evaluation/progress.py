"""Progress of an evaluation's trials on stderr: the engine's stage progress (a bar on a
terminal; off one, a heartbeat line while it runs and one line at the end); nothing when
quiet."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(total: int, unit: str, quiet: bool = False) -> Iterator[Callable[[int], None]]:
    if quiet:
        yield lambda n: None
        return
    from lasagna.stages.progress import StageProgress

    with StageProgress("evaluate", total, unit=unit) as bar:
        yield bar.advance
