"""UTC timestamps, in the one format results are stamped with."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso(timespec: str = "seconds") -> str:
    """The current UTC time as ISO 8601 to the second: "2026-12-01T21:30:00+00:00".

    `timespec="milliseconds"` where records made within one second must still sort in the
    order they were made (evaluations of a group, run back to back)."""
    return datetime.now(UTC).isoformat(timespec=timespec)


def now_stamp() -> str:
    """The current UTC time as "YYYYmmdd-HHMMSS" (sorts by time; safe in file names)."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
