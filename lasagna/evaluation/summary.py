"""The line `evaluate()` prints after its summary table: where the evaluation is stored and
the query that reads it back."""

from __future__ import annotations

import shlex
from typing import Any

from rich.console import Console


def render_result(
    result: Any, seconds: float, console: Console | None = None, output: Any = None
) -> None:
    """The count, the time and the query, with `--output` the results root `output`
    (absolute), so it works from any folder; then the first failed rows."""
    from lasagna.results.sql_empty import root_shown
    from lasagna.results.store import DEFAULT_OUTPUT

    console = console or Console()
    errors = f", {result.n_errors} failed" if result.n_errors else ""
    query = f"SELECT * FROM evaluation_trials WHERE evaluation_id = '{result.evaluation_id}'"
    root = shlex.quote(root_shown(output or DEFAULT_OUTPUT))
    console.print(
        f"{result.n_trials} trials{errors} in {seconds:.1f} s; stored in {result.run_dir} "
        f'(lasagna results sql "{query}" --output {root})',
        soft_wrap=True,
    )
    for row in result.errors[:3]:
        console.print(f"  task {row['task_id']} trial {row['trial_index']}: {row['error']}")
