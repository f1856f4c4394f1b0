"""What `results sql` says when the results root it read cannot answer: an empty table and
exit 0 looked like "no matches" when the runs were written somewhere else."""

from __future__ import annotations

import os
import re

from lasagna.errors import Problem, UserError
from lasagna.results import evaluations as ev
from lasagna.results.fs import Store
from lasagna.results.runs import Run, is_evaluation
from lasagna.results.store import Output

EVALUATION_TABLES = (*ev.SCHEMAS, *ev.ALIASES)  # filled by evaluate() runs only


def root_shown(output: Output) -> str:
    """The results root as read: a local folder as an absolute path, a URI as given."""
    store = Store(output)
    return os.path.abspath(store.root) if store.local else store.display


def no_runs_error(output: Output) -> UserError:
    """The root holds no run at all (or does not exist): nothing to query."""
    store = Store(output)
    where = root_shown(output)
    what = "does not exist" if store.local and not os.path.exists(store.root) else "holds no runs"
    return UserError(
        Problem(
            f"the results root {where} {what}: every table is empty",
            field="--output",
            fix="pass --output with the folder or URI the runs were written to (the "
            "`--output` of `lasagna benchmark run`, the `output=` of evaluate(); both "
            "default to ./results of the folder they ran in)",
        )
    )


def evaluation_tables_named(query: str) -> list[str]:
    """The evaluate() tables a query reads, by name (a word of the query)."""
    words = set(re.findall(r"[a-z_]+", query.lower()))
    return [name for name in EVALUATION_TABLES if name in words]


def no_evaluations_note(output: Output, runs: list[Run], query: str) -> str | None:
    """A note when the query reads evaluate() tables and no run under the root has one."""
    named = evaluation_tables_named(query)
    if not named or any(is_evaluation(r) or r.table_path(ev.EVALUATIONS) for r in runs):
        return None
    return (
        f"the results root {root_shown(output)} holds {len(runs)} run(s) and no evaluate() "
        f"run, so {', '.join(named)} is empty; evaluate() writes to its output= (default "
        "./results of the folder it ran in): pass that as --output"
    )
