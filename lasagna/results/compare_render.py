"""`lasagna results compare` as tables: one per shared comparability group, per system
and metric A, B, B - A, the paired questions and the two p-values."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from lasagna.results.compare import Comparison
from lasagna.results.leaderboard import fmt, group_title


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def render_comparison(comparison: Comparison, console: Console | None = None) -> None:
    """One table per shared comparability group (titled with its data and key): per system
    and metric, A, B, B - A, paired questions and p-values."""
    console = console or Console()
    console.print(f"[bold]{comparison.run_a}[/] (A) vs [bold]{comparison.run_b}[/] (B)")
    groups = comparison.groups or {
        comparison.lines[0].comparability_key: (comparison.benchmark, comparison.track)
    }
    for ckey, (benchmark, track) in groups.items():
        lines = [x for x in comparison.lines if x.comparability_key == ckey]
        if not lines:
            continue
        table = Table(
            title=group_title(benchmark, track),
            caption=f"key {ckey}",
            title_justify="left",
            caption_justify="left",
        )
        for col, just in [
            ("system", "left"),
            ("metric", "left"),
            ("A", "right"),
            ("B", "right"),
            ("B - A", "right"),
            ("paired n", "right"),
            ("p (t)", "right"),
            ("p (perm)", "right"),
        ]:
            table.add_column(col, justify=just)
        for line in lines:
            name = (
                line.system_a
                if line.system_a == line.system_b
                else f"{line.system_a} vs {line.system_b}"
            )
            diff = "-" if math.isnan(line.diff) else f"{line.diff:+.4f}"
            table.add_row(
                name,
                line.metric,
                fmt(line.mean_a),
                fmt(line.mean_b),
                diff,
                str(line.n) if line.n else "-",
                _p(line.p_ttest),
                _p(line.p_permutation),
            )
        console.print(table)
    console.print(
        "p: paired t-test / paired randomization test (up to 10,000 sign flips, seed 0; "
        "exact for n <= 13)"
    )
    for note in comparison.notes:
        console.print(f"note: {note}")
