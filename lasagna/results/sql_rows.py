"""The `rows` view of `results sql`: each trial's rows under each run that ran it.

A run that ran a trial (not in its manifest's `restored_trials`) holds its own rows: a
trial run again without --resume (a second `evaluate()`, a sweep re-run) has different
rows in each run, and both count. A trial a run restored from a checkpoint repeats rows
another run holds, so it is left out, unless no run holding it ran it (the run that ran it
was stopped before writing its folder): then once, under the oldest run holding it. This
is `trials WHERE in_rows`.

A trial file that is missing or unreadable does not stop every query: with a `warn`, its
rows are left out and said (run folder, file, the fix); without one it is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from lasagna.errors import Problem, UserError
from lasagna.results.model import TrialMeta
from lasagna.results.store import Run

if TYPE_CHECKING:
    import duckdb

EMPTY_ROWS = (
    "CREATE OR REPLACE VIEW rows AS SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS trial_key, "
    "NULL::VARCHAR AS system, NULL::VARCHAR AS id WHERE false"
)


def restored_keys(run: Run) -> set[str]:
    """The trials `run` took from checkpoints (--resume) rather than ran."""
    return set(run.manifest.get("restored_trials") or [])


def row_sources(runs: list[Run]) -> list[tuple[Run, TrialMeta]]:
    """Each (run, trial) whose rows `rows` holds (the module's rule), oldest run first."""
    oldest_first = list(reversed(runs))
    ran = {t.key for r in runs for t in r.trials if t.key not in restored_keys(r)}
    sources, seen = [], set()
    for r in oldest_first:
        restored = restored_keys(r)
        for t in r.trials:
            if t.key not in restored or (t.key not in ran and t.key not in seen):
                sources.append((r, t))
                seen.add(t.key)
    return sources


def _damage(con: duckdb.DuckDBPyConnection, run: Run, key: str, url: str) -> Problem | None:
    """What is wrong with one trial file duckdb cannot read (None: nothing)."""
    import duckdb

    try:
        con.execute(f"DESCRIBE SELECT * FROM read_parquet({_quoted(url)})").fetchall()
    except duckdb.Error as err:
        reason = str(err).splitlines()[0]
        missing = "No files found" in reason
        what = "is missing" if missing else f"cannot be read ({reason})"
        return Problem(
            f"run {run.run_id} is damaged: the rows file of trial {key} {what}",
            file=run.store.shown(run.rows_path(key)),
            fix=f"the run folder {run.store.shown(run.path)} is damaged; re-run it "
            "(or remove that run folder)",
        )
    return None


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def create_rows_view(
    con: duckdb.DuckDBPyConnection, runs: list[Run], warn: Callable[[str], None] | None
) -> set[tuple[str, str]]:
    """The view `rows` over the files of `row_sources`: read lazily by duckdb, each row
    with its run_id, trial_key and system. A damaged file is left out and said to `warn`,
    or refused (UserError) without one. Returns the (run_id, trial_key) pairs it holds."""
    import duckdb

    files = [(r, t, r.store.url(r.rows_path(t.key))) for r, t in row_sources(runs)]
    try:
        _create(con, files)
    except duckdb.Error as err:  # binding reads every file's footer: find which failed
        damaged = [(f, p) for f in files if (p := _damage(con, f[0], f[1].key, f[2]))]
        if not damaged:
            raise
        if warn is None:
            raise UserError([p for _f, p in damaged]) from err
        for _f, problem in damaged:
            told = f"{problem.message}; the rows view leaves that trial out"
            warn(replace(problem, message=told).render())
        gone = {id(f) for f, _p in damaged}
        files = [f for f in files if id(f) not in gone]
        _create(con, files)
    return {(r.run_id, t.key) for r, t, _u in files}


def _create(con: duckdb.DuckDBPyConnection, files: list[tuple[Run, TrialMeta, str]]) -> None:
    import pyarrow as pa

    if not files:
        con.execute(EMPTY_ROWS)
        return
    con.register(
        "_lasagna_files",
        pa.table(
            {
                "run_id": [r.run_id for r, _t, _u in files],
                "trial_key": [t.key for _r, t, _u in files],
                "system": [t.system for _r, t, _u in files],
                "_file": [u for _r, _t, u in files],
            }
        ),
    )
    paths = ", ".join(_quoted(u) for _r, _t, u in files)
    con.execute(
        "CREATE OR REPLACE VIEW rows AS SELECT f.run_id, f.trial_key, f.system, "
        "p.* EXCLUDE (filename) "
        f"FROM read_parquet([{paths}], union_by_name = true, filename = true) p "
        "JOIN _lasagna_files f ON p.filename = f._file"
    )
