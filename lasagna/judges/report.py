"""`validate-data` for judge files: counts, and which judge benchmarks the rows support."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lasagna.common.tables import add_text_row
from lasagna.data.judge_cases import JudgeCases
from lasagna.data.report import metadata_summary
from lasagna.judges.params import JudgeParams
from lasagna.judges.registry import benchmarks, support_reason


def judge_support(cases: JudgeCases, params: JudgeParams) -> list[tuple[str, str | None]]:
    """(benchmark id, None if supported else why not), in the registry's order."""
    return [(b, support_reason(b, cases.cases, params)) for b in benchmarks()]


def print_judge_report(
    cases: JudgeCases, params: JudgeParams | None = None, console: Console | None = None
) -> None:
    console = console or Console()
    params = params or JudgeParams()
    console.print(f"[green]valid[/green]: {escape(cases.source)}", soft_wrap=True, highlight=False)
    console.print(f"[bold]name[/bold]: {escape(cases.name)}", soft_wrap=True, highlight=False)
    console.print(f"[bold]revision[/bold]: {cases.revision}", soft_wrap=True, highlight=False)
    support = judge_support(cases, params)
    table = Table(show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    add_text_row(table, "format", cases.format)
    kind = "conversations" if cases.multi_turn else "test cases"
    add_text_row(table, "rows", f"{len(cases.cases):,} {kind}")
    add_text_row(table, "columns", ", ".join(sorted(cases.columns)))
    if summary := metadata_summary(c.get("metadata") for c in cases.cases):
        add_text_row(table, "metadata", summary)
    add_text_row(table, "tracks", "judge (retrieval and generation need question rows)")
    ok = [b for b, why in support if why is None]
    add_text_row(table, "judge benchmarks", ", ".join(ok) or "none")
    for benchmark, why in support:
        if why is not None:
            add_text_row(table, f"no {benchmark}", why)
    console.print(table)
