"""The sweep keys that list systems, derived from the track registry: one per registered
track a sweep can name (`Track.systems_field`, entries of `Track.system_type()`; not one that
reads an evaluate() call's datapoints), in registration order; `grid:` entries expand in
those whose track says `grid`."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from lasagna.tracks import QUESTIONS, TEST_CASES, Track, tracks


def system_fields() -> dict[str, tuple[Any, Any]]:
    """field name -> (annotation, default) of every track's systems list, for create_model."""
    return {
        t.systems_field: (
            list[t.system_type()],  # type: ignore[misc]
            Field(default_factory=list, description=t.description),
        )
        for t in _swept()
    }


def grid_fields() -> tuple[str, ...]:
    """The systems fields whose `grid:` entries expand (lasagna.sweep.grid)."""
    return tuple(t.systems_field for t in _swept() if t.grid)


def _swept() -> list[Track]:
    return [t for t in tracks() if t.reads in (QUESTIONS, TEST_CASES)]
