"""The table printed at the end of a run: the main metrics of every trial.

One table per track and benchmark, titled with the benchmark's name, so a sweep of several
benchmarks never shows a system twice in one table; each track says its columns
(`Track.summary_table`: its summary metrics from the metric catalog, then the counts it
lists). It fits a 100-column terminal: system names wrap instead of being cut.
"""

from __future__ import annotations

import os

from rich import box
from rich.console import Console
from rich.table import Table

from lasagna.tracks import tracks

WIDTH = 100  # files and pipes get this width; a terminal keeps its own


def render_summary(outcome, console: Console) -> None:
    if not console.is_terminal:
        console.width = WIDTH
    for track in tracks():
        of_track = track.summary_trials(outcome.trials)
        for name in dict.fromkeys(t.benchmark["name"] for t in of_track):
            trials = [t for t in of_track if t.benchmark["name"] == name]
            table = Table(
                title=f"{track.name} on {name} — run {outcome.run_id}",
                title_justify="left",
                box=box.SIMPLE_HEAD,
                pad_edge=False,
            )
            repeats = any(t.repeat for t in trials)  # a `rep` column only when there are
            heads, rows = track.summary_table(trials, repeats)
            for head in heads:
                if head == "system":
                    table.add_column(head, overflow="fold")
                else:
                    table.add_column(head, justify="right", no_wrap=True)
            for cells in rows:
                table.add_row(*cells)
            console.print(table)
            for note in track.summary_notes(trials):
                console.print(f"[yellow]warning:[/] {note}", soft_wrap=True, highlight=False)
    console.print(f"run folder: {os.path.normpath(outcome.run_path)}", soft_wrap=True)
