"""UTC timestamps, in the one format results are stamped with."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """The current UTC time as ISO 8601 to the second: "2026-12-01T21:30:00+00:00"."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def now_stamp() -> str:
    """The current UTC time as "YYYYmmdd-HHMMSS" (sorts by time; safe in file names)."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
