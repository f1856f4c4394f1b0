"""Rows that failed: a trial whose every row failed is a failed trial, and the run summary
says why rows failed.

A stage records a row's failure in the row (`error`: an API that could not be reached, a
prompt longer than the model's context) and goes on, so one bad row never loses a trial.
When *every* row failed, the scores say nothing and the cause is usually one thing (the
endpoint is down, the key is wrong): the trial fails with that cause (`EveryRowFailed`), is
not checkpointed, and `--resume` runs it again once the cause is fixed. A track whose rows
are a user's own calls (evaluate()) keeps them instead (`Track.fails_when_every_row_fails`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

SHOWN_ERRORS = 3  # distinct errors named per trial
ERROR_CHARS = 200  # characters of each error named


class EveryRowFailed(RuntimeError):
    """Every row of a trial failed; the message names the errors, most frequent first."""


def row_errors(table: Any) -> tuple[list[tuple[str, int]], int]:
    """(the distinct errors of a trial's rows with their counts, most frequent first; the
    number of rows); no errors when its rows have no `error` column."""
    if table is None or "error" not in table.column_names:
        return [], 0 if table is None else table.num_rows
    errors = [e for e in table.column("error").to_pylist() if e]
    return Counter(errors).most_common(), table.num_rows


def _said(errors: list[tuple[str, int]]) -> str:
    def one(text: str) -> str:
        line = " ".join(text.split())
        return line if len(line) <= ERROR_CHARS else line[: ERROR_CHARS - 3] + "..."

    shown = "; ".join(f"{one(e)} ({n})" for e, n in errors[:SHOWN_ERRORS])
    more = len(errors) - SHOWN_ERRORS
    return shown + (f"; {more} other error(s)" if more > 0 else "")


def raise_if_every_row_failed(table: Any) -> None:
    """EveryRowFailed when the trial has rows and each of them failed."""
    errors, rows = row_errors(table)
    if rows and sum(n for _, n in errors) == rows:
        raise EveryRowFailed(f"all {rows} rows failed: {_said(errors)}")


def failed_rows_note(system: str, table: Any) -> str | None:
    """`closed_book: 1 of 6 rows failed: ValueError: ... (1)` for the run summary; None when
    no row failed."""
    errors, rows = row_errors(table)
    if not errors:
        return None
    failed = sum(n for _, n in errors)
    return f"{system}: {failed} of {rows} rows failed: {_said(errors)}"
