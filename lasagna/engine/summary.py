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
    _judge_table(outcome, console)
    console.print(f"run folder: {outcome.run_path}")


def _judge_table(outcome, console: Console) -> None:
    """One line per judge trial: its benchmark's primary score, pass rate and the costs."""
    trials = [t for t in outcome.trials if t.track == "judge"]
    if not trials:
        return
    names = sorted({t.benchmark["name"] for t in trials})
    table = Table(title=f"judge on {', '.join(names)} — run {outcome.run_id}", title_justify="left")
    heads = ("system", "rep", "score", "pass", "rows", "failed", "invalid", "rows/s")
    for head in heads:  # the score is the benchmark's primary metric (the system names it)
        table.add_column(head, justify="left" if head == "system" else "right")
    primaries = catalog.primary_metrics("judge")
    for t in trials:
        metric = next((m for m in primaries if m in t.metrics), "-")
        table.add_row(
            t.system,
            str(t.repeat),
            catalog.show(metric, t.metrics.get(metric)),
            catalog.show("pass_rate", t.metrics.get("pass_rate")),
            str(t.counts.get("rows", "")),
            str(t.counts.get("failed", 0)),
            str(t.counts.get("judge_invalid_outputs", 0)),
            catalog.show("judgments_per_s", t.metrics.get("judgments_per_s")),
        )
    console.print(table)
