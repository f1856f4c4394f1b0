"""Progress of one stage of a trial (encode the corpus, search + score, generate + score).

On a terminal: a rich bar with rows done / total, rate and time left, kept on screen when
the stage ends. Anywhere else (a file, a pipe, CI): nothing while it runs and one line at
the end, `  search+score   26/26 rows in 5.7 s (4.6/s)`, so logs stay short and free of
control codes. Counts are rows the driver has received, so they never run ahead.
`show=False` prints nothing at all (benchmarks and tests that time the stage themselves).
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def _console() -> Console:
    return Console(stderr=True)  # resolves sys.stderr when it prints


class StageProgress:
    """`with StageProgress("search+score", n) as bar: ... bar.advance(rows)`."""

    def __init__(
        self,
        name: str,
        total: int,
        console: Console | None = None,
        unit: str = "rows",
        show: bool = True,
    ):
        self.name = name
        self.show = show
        self.unit = unit
        self.total = total
        self.done = 0
        self.console = console or _console()
        self._bar: Progress | None = None
        self._t0 = 0.0

    def __enter__(self) -> StageProgress:
        self._t0 = time.perf_counter()
        if self.show and self.console.is_terminal:
            self._bar = Progress(
                TextColumn(f"  {self.name:<14}"),
                BarColumn(bar_width=30),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TextColumn(self.unit),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self._task = self._bar.add_task(self.name, total=self.total, rate="")
            self._bar.start()
        return self

    def advance(self, rows: int) -> None:
        self.done += rows
        if self._bar is not None:
            secs = time.perf_counter() - self._t0
            rate = f"{self.done / secs:.1f}/s" if secs > 0 else ""
            self._bar.update(self._task, completed=self.done, rate=rate)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            return
        if exc_type is not None or not self.show:
            return
        secs = time.perf_counter() - self._t0
        rate = f" ({self.done / secs:.1f}/s)" if secs > 0 else ""
        self.console.print(
            f"  {self.name:<14} {self.done}/{self.total} {self.unit} in {secs:.1f} s{rate}",
            highlight=False,
        )
