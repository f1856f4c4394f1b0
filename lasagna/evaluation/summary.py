"""The table `evaluate()` prints: one line per score dimension, like the CLI's tables."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table


def render_result(
    result: Any, seconds: float, console: Console | None = None, output: Any = None
) -> None:
    """The averages, then where the evaluation is stored and the query that reads it back:
    with `--output` the results root `output` (absolute), so it works from any folder."""
    import shlex

    from lasagna.results.sql_empty import root_shown
    from lasagna.results.store import DEFAULT_OUTPUT

    console = console or Console()
    table = Table(title=result.name)
    table.add_column("score", overflow="fold")
    table.add_column("average", justify="right")
    table.add_column("scored", justify="right")
    for dim, value in result.averages.items():
        scored = sum(1 for t in result.trials if t["scores"].get(dim) is not None)
        shown = "n/a" if value is None or math.isnan(value) else f"{value:.4f}"
        table.add_row(dim, shown, f"{scored}/{result.n_trials}")
    console.print(table)
    errors = f", {result.n_errors} failed" if result.n_errors else ""
    query = f"SELECT * FROM evaluation_trials WHERE evaluation_id = '{result.evaluation_id}'"
    root = shlex.quote(root_shown(output or DEFAULT_OUTPUT))
    console.print(
        f"{result.n_trials} trials{errors} in {seconds:.1f} s; stored in {result.run_dir} "
        f'(lasagna results sql "{query}" --output {root})',
        soft_wrap=True,
    )
    for trial in result.errors[:3]:
        console.print(f"  task {trial['task_id']} trial {trial['trial_index']}: {trial['error']}")
