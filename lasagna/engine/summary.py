"""The table printed at the end of a run: the main metrics of every trial.

One table per track and benchmark, titled with the benchmark's name, so a sweep of several
benchmarks never shows a system twice in one table; each track says its columns
(`Track.summary_table`: its summary metrics from the metric catalog, then the counts it
lists). It fits the terminal (100 columns in files and pipes): system names wrap instead of
being cut, and the last metric columns that do not fit beside them are left out and named
under the table (lasagna.results.table_fit).
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lasagna.common.tables import add_text_row
from lasagna.results.leaderboard import group_title
from lasagna.results.table_fit import add_name_column, cells_width, fitting
from lasagna.systems.labels import shared_line
from lasagna.tracks import tracks

WIDTH = 100  # files and pipes get this width; a terminal keeps its own


def render_summary(outcome, console: Console) -> None:
    if not console.is_terminal:
        console.width = WIDTH
    for track in tracks():
        of_track = track.summary_trials(outcome.trials)
        for group in dict.fromkeys(t.comparability_key for t in of_track):
            trials = [t for t in of_track if t.comparability_key == group]
            # the title as a line of its own, as the leaderboard's (its split, sample size
            # and corpus too): a narrow table wraps it
            title = f"{group_title(trials[0].benchmark, track.name)} — run {outcome.run_id}"
            console.print(title, highlight=False, markup=False)
            table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
            repeats = any(t.repeat for t in trials)  # a `rep` column only when there are
            heads, rows = track.summary_table(trials, repeats)
            shown = _shown(track.name, heads, rows, console.width)
            for i in shown:
                if heads[i] == "system":
                    add_name_column(table, heads[i], [cells[i] for cells in rows])
                else:
                    table.add_column(heads[i], justify="right", no_wrap=True)
            for cells in rows:
                add_text_row(table, *(cells[i] for i in shown))
            console.print(table)
            shared = shared_line([t.config for t in trials])  # what the labels leave out
            if shared:
                console.print(shared, highlight=False, markup=False)
            if len(shown) < len(heads):
                left_out = ", ".join(h for i, h in enumerate(heads) if i not in shown)
                console.print(
                    f"not shown: {left_out} (lasagna results show {outcome.run_id})",
                    highlight=False,
                )
            for note in [*_failed_rows(trials), *track.summary_notes(trials)]:
                warning = f"[yellow]warning:[/] {escape(note)}"
                console.print(warning, highlight=False)  # wrapped at the table width
    console.print(f"run folder: {outcome.run_path}", soft_wrap=True, markup=False)


def _shown(track: str, heads: list[str], rows: list[list[str]], width: int) -> list[int]:
    """The columns shown: all but the last metrics that do not fit beside the names and
    the counts (one metric stays)."""
    from lasagna.metrics import catalog

    metrics = set(catalog.summary_metrics(track))
    widths = [cells_width(h, [cells[i] for cells in rows]) for i, h in enumerate(heads)]
    optional = [i for i, h in enumerate(heads) if h in metrics]
    if not optional or "system" not in heads:
        return list(range(len(heads)))
    always = [w for i, w in enumerate(widths) if heads[i] != "system" and i not in optional]
    names = [cells[heads.index("system")] for cells in rows]
    keep = max(1, fitting(always, [widths[i] for i in optional], names, width))
    return [i for i in range(len(heads)) if i not in optional[keep:]]


def _failed_rows(trials) -> list[str]:
    """Why rows failed, per trial, as the trial keeps it (engine.row_failures; evaluate()
    lists its own failed rows after the table)."""
    from lasagna.engine.row_failures import failed_rows_note

    notes = (failed_rows_note(t.system, (t.extra or {}).get("row_errors")) for t in trials)
    return [n for n in notes if n]
