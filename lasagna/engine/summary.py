"""The table printed at the end of a run: the main metrics of every trial."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

RETRIEVAL_COLUMNS = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "map@10", "p@10")
GENERATION_COLUMNS = ("em", "f1", "has_ans_f1", "no_ans_em")


def render_summary(outcome, console: Console) -> None:
    if not console.is_terminal and console.width < 120:
        console.width = 120  # files and pipes: do not squeeze the table into 80 columns
    for track, columns in (("retrieval", RETRIEVAL_COLUMNS), ("generation", GENERATION_COLUMNS)):
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
            cells += [_fmt(t.metrics.get(c)) for c in columns]
            if track == "generation":
                cells += [
                    str(t.counts.get("rows", "")),
                    str(t.counts.get("failed", 0)),
                    _fmt(t.metrics.get("tokens_per_s"), 1),
                ]
            else:
                cells += [str(t.counts.get("judged", ""))]
            table.add_row(*cells)
        console.print(table)
    console.print(f"run folder: {outcome.run_path}")


def _fmt(value, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
