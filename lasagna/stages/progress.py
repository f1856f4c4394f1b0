"""Progress of one stage of a trial (encode the corpus, search + score, generate + score).

On a terminal: a rich bar with rows done / total, rate and time left, kept on screen when
the stage ends. Anywhere else (a file, a pipe, CI): one line at the end,
`  search+score   26/26 rows in 5.7 s (4.6/s)`, so logs stay short and free of control
codes, and a heartbeat line every `HEARTBEAT_S` while the stage runs longer
(`  search+score   12/26 rows after 30 s, 0.4/s, about 35 s left`), so slow is told from
hung. Counts are rows the driver has received, so they never run ahead.
`show=False` prints nothing at all (benchmarks and tests that time the stage themselves).
Whoever listens (`listening`: the driver's status file, which `lasagna view` shows) hears of
every stage as it starts, advances and ends, shown on a terminal or not.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

# (name, done, total, unit, seconds, ended) of a stage, to each listener
Listener = Callable[[str, int, int, str, float, bool], None]
_LISTENERS: list[Listener] = []
HEARTBEAT_ENV = "LASAGNA_HEARTBEAT_S"
HEARTBEAT_S = 30.0  # off a terminal, a running stage says how far it is at least this often


def heartbeat_s() -> float:
    """The heartbeat period: `LASAGNA_HEARTBEAT_S` seconds, else `HEARTBEAT_S`."""
    try:
        value = float(os.environ.get(HEARTBEAT_ENV, HEARTBEAT_S))
    except ValueError:
        return HEARTBEAT_S
    return value if value > 0 else HEARTBEAT_S


def _duration(secs: float) -> str:
    secs = max(0.0, secs)
    return f"{secs:.0f} s" if secs < 60 else f"{int(secs // 60)} min {int(secs % 60)} s"


def per_second(done: int, secs: float) -> str:
    """`5.4/s`; under 1/s two significant digits (`0.025/s`), so 4 rows in 158 s do not read
    as `0.0/s`, a rate of nothing."""
    rate = done / secs if secs > 0 else 0.0
    return f"{rate:.1f}/s" if rate >= 1 or rate == 0 else f"{rate:.2g}/s"


def heartbeat_line(name: str, done: int, total: int, unit: str, secs: float) -> str:
    """`  encode corpus  640/5183 passages after 1 min 0 s, 10.7/s, about 7 min 5 s left`."""
    rate = done / secs if secs > 0 else 0.0
    line = f"  {name:<14} {done}/{total} {unit} after {_duration(secs)}"
    if done and rate > 0:
        left = (total - done) / rate
        return f"{line}, {per_second(done, secs)}, about {_duration(left)} left"
    return f"{line}, none done yet"


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Tell `listener` of every stage run in this process while the body runs."""
    _LISTENERS.append(listener)
    try:
        yield
    finally:
        _LISTENERS.remove(listener)


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
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

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
        elif self.show:
            self._beat = threading.Thread(target=self._heartbeat, name="lasagna-heartbeat")
            self._beat.daemon = True
            self._beat.start()
        self._tell(ended=False)
        return self

    def _heartbeat(self) -> None:
        """Off a terminal: a line every heartbeat period until the stage ends."""
        period = heartbeat_s()
        while not self._stop.wait(period):
            secs = time.perf_counter() - self._t0
            line = heartbeat_line(self.name, self.done, self.total, self.unit, secs)
            try:
                self.console.print(line, highlight=False, soft_wrap=True)
            except Exception:  # noqa: BLE001 - a closed stream never breaks the stage
                return

    def _tell(self, ended: bool) -> None:
        secs = time.perf_counter() - self._t0
        for listener in list(_LISTENERS):
            try:
                listener(self.name, self.done, self.total, self.unit, secs, ended)
            except Exception:  # noqa: BLE001 - a listener never breaks the stage
                pass

    def note(self, text: str) -> None:
        """One line under the stage's name (`  encode corpus  2816 of 5183 passages kept ...`)."""
        if self.show:
            self.console.print(f"  {self.name:<14} {text}", highlight=False, markup=False)

    def advance(self, rows: int) -> None:
        self.done += rows
        self._tell(ended=False)
        if self._bar is not None:
            secs = time.perf_counter() - self._t0
            rate = per_second(self.done, secs) if secs > 0 else ""
            self._bar.update(self._task, completed=self.done, rate=rate)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
        self._tell(ended=True)
        if self._bar is not None:
            self._bar.stop()
            return
        if exc_type is not None or not self.show:
            return
        secs = time.perf_counter() - self._t0
        rate = f" ({per_second(self.done, secs)})" if secs > 0 else ""
        self.console.print(
            f"  {self.name:<14} {self.done}/{self.total} {self.unit} in {secs:.1f} s{rate}",
            highlight=False,
        )
