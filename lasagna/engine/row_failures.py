"""Rows that failed: a trial whose every row failed is a failed trial, and the run summary
says why rows failed.

A stage records a row's failure in the row (`error`: an API that could not be reached, a
prompt longer than the model's context) and goes on, so one bad row never loses a trial.
When *every* row failed, the scores say nothing and the cause is usually one thing (the
endpoint is down, the key is wrong): the trial fails with that cause (`EveryRowFailed`), is
not checkpointed, and `--resume` runs it again once the cause is fixed. A track whose rows
are a user's own calls (evaluate()) keeps them instead (`Track.fails_when_every_row_fails`).
A finished trial keeps what failed in `extra["row_errors"]`, so the run summary names it
without reading the rows back (a driver process's trials are read lazily).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from lasagna.engine.failures import bounded

SHOWN_ERRORS = 3  # distinct errors named per trial
ERROR_CHARS = 200  # characters of each error named


class EveryRowFailed(RuntimeError):
    """Every row of a trial failed; the message names the errors, most frequent first."""


def row_errors(table: Any) -> dict[str, Any] | None:
    """What failed among a trial's rows (its `error` column): the row count, the failed
    count, the most frequent distinct errors (each once, bounded) with their counts and how
    many other distinct errors there were; None when no row failed."""
    if table is None or "error" not in table.column_names:
        return None
    errors = Counter(e for e in table.column("error").to_pylist() if e).most_common()
    if not errors:
        return None
    return {
        "rows": table.num_rows,
        "failed": sum(n for _, n in errors),
        "errors": [[_line(e), n] for e, n in errors[:SHOWN_ERRORS]],
        "other_errors": max(0, len(errors) - SHOWN_ERRORS),
    }


def _line(text: str) -> str:
    return bounded(" ".join(text.split()), ERROR_CHARS)


def _said(found: dict[str, Any]) -> str:
    shown = "; ".join(f"{e} ({n})" for e, n in found["errors"])
    more = found["other_errors"]
    return shown + (f"; {more} other error(s)" if more else "")


def raise_if_every_row_failed(found: dict[str, Any] | None) -> None:
    """EveryRowFailed when the trial has rows and each of them failed (`found`: row_errors)."""
    if found and found["failed"] == found["rows"]:
        raise EveryRowFailed(f"all {found['rows']} rows failed: {_said(found)}")


def failed_rows_note(system: str, found: dict[str, Any] | None) -> str | None:
    """`closed_book: 1 of 6 rows failed: ValueError: ... (1)` for the run summary; None when
    no row failed (`found`: row_errors, as the trial's extra keeps it)."""
    if not found:
        return None
    return f"{system}: {found['failed']} of {found['rows']} rows failed: {_said(found)}"
