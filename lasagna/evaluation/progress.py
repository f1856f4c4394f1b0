"""A progress bar on stderr for long evaluations (nothing when quiet or not a terminal)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(total: int, unit: str, quiet: bool = False) -> Iterator[Callable[[int], None]]:
    if quiet:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda n: None
        return
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(unit, total=total)
        yield lambda n: bar.advance(task, n)
