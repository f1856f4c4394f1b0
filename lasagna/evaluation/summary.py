"""The line `evaluate()` prints after its summary table: where the evaluation is stored and
the query that reads it back."""

from __future__ import annotations

import shlex
from typing import Any

from rich.console import Console

SHOWN_ERRORS = 3  # distinct errors printed under the summary


def render_result(
    result: Any, seconds: float, console: Console | None = None, output: Any = None
) -> None:
    """The count, the time and the query, with `--output` the results root `output`
    (absolute), so it works from any folder; then each distinct error of the failed rows
    (the first few), with how many rows it failed."""
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
    by_error: dict[str, list[dict[str, Any]]] = {}
    for row in result.errors:  # one line per distinct error: a model that cannot load
        by_error.setdefault(str(row["error"]), []).append(row)  # fails every trial alike
    for text, rows in list(by_error.items())[:SHOWN_ERRORS]:
        where = f"task {rows[0]['task_id']} trial {rows[0]['trial_index']}"
        said = f"{len(rows)} trials ({where} first)" if len(rows) > 1 else where
        text = text.replace("\n", "\n    ")  # a trial's several errors (two evaluators): indented
        console.print(f"  {said}: {text}", soft_wrap=True, markup=False, highlight=False)
    if len(by_error) > SHOWN_ERRORS:
        console.print(
            f"  and {len(by_error) - SHOWN_ERRORS} other error(s): the query above, with "
            "AND error IS NOT NULL, lists them all",
            soft_wrap=True,
        )
