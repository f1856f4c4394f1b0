"""The table printed at the end of a run: the main metrics of every trial."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from lasagna.metrics import catalog


def render_summary(outcome, console: Console) -> None:
    if not console.is_terminal and console.width < 120:
        console.width = 120  # files and pipes: do not squeeze the table into 80 columns
    for track in ("retrieval", "generation"):
        columns = catalog.summary_metrics(track)
        trials = [t for t in outcome.trials if t.track == track]
        if not trials:
            continue
        names = sorted({t.benchmark["name"] for t in trials})
        table = Table(
            title=f"{track} on {', '.join(names)} — run {outcome.run_id}", title_justify="left"
        )
        for head in ("system", "rep", *columns):
            table.add_column(head, justify="left" if head == "system" else "right", no_wrap=True)
        extra = ("rows", "failed", "tok/s") if track == "generation" else ("queries",)
        for head in extra:
            table.add_column(head, justify="right")
        for t in trials:
            cells = [t.system, str(t.repeat)]
            cells += [catalog.show(c, t.metrics.get(c)) for c in columns]
            if track == "generation":
                cells += [
                    str(t.counts.get("rows", "")),
                    str(t.counts.get("failed", 0)),
                    catalog.show("tokens_per_s", t.metrics.get("tokens_per_s")),
                ]
            else:
                cells += [str(t.counts.get("judged", ""))]
            table.add_row(*cells)
        console.print(table)
    console.print(f"run folder: {outcome.run_path}")
