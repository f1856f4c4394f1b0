"""The track registry: every kind of evaluation lasagna runs, by name.

Adding a track is a module with a `Track` subclass plus one `register(...)` line below.
"""

from __future__ import annotations

from typing import Any

from lasagna.data.model import Benchmark
from lasagna.errors import Problem, UserError
from lasagna.tracks.base import Track, refusal
from lasagna.tracks.generation import GenerationTrack
from lasagna.tracks.judge import JudgeTrack
from lasagna.tracks.retrieval import RetrievalTrack

_TRACKS: dict[str, Track] = {}


def register(track: Track) -> Track:
    if track.name in _TRACKS and type(_TRACKS[track.name]) is not type(track):
        raise ValueError(f"track '{track.name}' is already registered")
    _TRACKS[track.name] = track
    return track


register(RetrievalTrack())
register(GenerationTrack())
register(JudgeTrack())


def tracks() -> list[Track]:
    """Every registered track, in registration order (the order a sweep's trials run in)."""
    return list(_TRACKS.values())


def track_names() -> tuple[str, ...]:
    return tuple(_TRACKS)


def get_track(name: str) -> Track:
    if name not in _TRACKS:
        raise KeyError(f"unknown track '{name}' (tracks: {', '.join(_TRACKS)})")
    return _TRACKS[name]


def track_problems(
    benchmark: Benchmark, track: str, kind: str | None = None, system: Any = None
) -> list[Problem]:
    """The refusals for running `track` (a system of `kind`, or `system`) on this data; []
    when fine."""
    if track not in _TRACKS:
        return [
            refusal(
                benchmark,
                "this request",
                f"unknown track '{track}'",
                "use one of: " + ", ".join(_TRACKS),
            )
        ]
    return _TRACKS[track].refusals(benchmark, kind, system)


def require_track(benchmark: Benchmark, track: str, kind: str | None = None) -> None:
    """Refuse, before anything loads, a track the data cannot support."""
    problems = track_problems(benchmark, track, kind)
    if problems:
        raise UserError(problems)
