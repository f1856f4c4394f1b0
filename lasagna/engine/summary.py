"""The table printed at the end of a run: the main metrics of every trial.

One table per track and benchmark, titled with the benchmark's name, so a sweep of several
benchmarks never shows a system twice in one table. It fits a 100-column terminal: system
names wrap instead of being cut.
"""

from __future__ import annotations

import os

from rich import box
from rich.console import Console
from rich.table import Table

from lasagna.metrics import catalog

WIDTH = 100  # files and pipes get this width; a terminal keeps its own


def render_summary(outcome, console: Console) -> None:
    if not console.is_terminal:
        console.width = WIDTH
    for track in ("retrieval", "generation"):
        columns = catalog.summary_metrics(track)
        of_track = [t for t in outcome.trials if t.track == track]
        for name in dict.fromkeys(t.benchmark["name"] for t in of_track):
            trials = [t for t in of_track if t.benchmark["name"] == name]
            table = Table(
                title=f"{track} on {name} — run {outcome.run_id}",
                title_justify="left",
                box=box.SIMPLE_HEAD,
                pad_edge=False,
            )
            repeats = any(t.repeat for t in trials)  # a `rep` column only when there are
            table.add_column("system", overflow="fold")
            for head in ("rep", *columns) if repeats else columns:
                table.add_column(head, justify="right", no_wrap=True)
            extra = ("rows", "failed", "tok/s") if track == "generation" else ("queries",)
            for head in extra:
                table.add_column(head, justify="right", no_wrap=True)
            for t in trials:
                cells = [t.system, *([str(t.repeat)] if repeats else [])]
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
    console.print(f"run folder: {os.path.normpath(outcome.run_path)}", soft_wrap=True)


def _judge_lines(t) -> list[tuple[str, str, dict, dict]]:
    """(label, prefix, metrics, counts) per judge of a trial: a judge trial is one line; a
    judged generation trial has one per judge, its columns prefixed by the benchmark."""
    if t.track == "judge":
        return [(t.system, "", t.metrics, t.counts)]
    judges = [j.get("benchmark") for j in (t.config.get("judges") or [])]
    return [(f"{t.system} → {b}", b.replace("-", "_") + "_", t.metrics, t.counts) for b in judges]


def _judge_table(outcome, console: Console) -> None:
    """One line per judge: its benchmark's primary score, pass rate and the costs."""
    lines = [(t, line) for t in outcome.trials for line in _judge_lines(t)]
    if not lines:
        return
    names = sorted({t.benchmark["name"] for t, _ in lines})
    table = Table(
        title=f"judge on {', '.join(names)} — run {outcome.run_id}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    heads = ("system", "rep", "score", "pass", "rows", "failed", "invalid", "rows/s")
    for head in heads:  # the score is the benchmark's primary metric (the system names it)
        if head == "system":
            table.add_column(head, overflow="fold")
        else:
            table.add_column(head, justify="right", no_wrap=True)
    primaries = catalog.primary_metrics("judge")
    for t, (label, p, metrics, counts) in lines:
        metric = next((m for m in primaries if m in metrics and m.startswith(p)), "-")
        judged = counts.get(p + "judged", counts.get("judged", 0))
        failed = counts.get(p + "failed", 0)
        table.add_row(
            label,
            str(t.repeat),
            catalog.show(metric, metrics.get(metric)),
            catalog.show("pass_rate", metrics.get(p + "pass_rate")),
            str(judged + failed),
            str(failed),
            str(counts.get("judge_invalid_outputs", 0)),
            catalog.show("judgments_per_s", metrics.get(p + "judgments_per_s")),
        )
    console.print(table)
