"""The track registry: every kind of evaluation lasagna runs, by name.

Adding a track is a module with a `Track` subclass plus one `register(...)` line: below for
an in-tree track, in its registry module for a plugin's (lasagna.common.plugins finds it
through the `lasagna.tracks` entry point group). `register` checks the track and declares
it to the layers below (lasagna.tracks.checks).
"""

from __future__ import annotations

from typing import Any

from lasagna.common import plugins
from lasagna.data.model import Benchmark
from lasagna.errors import Problem, UserError
from lasagna.tracks.base import Track, refusal
from lasagna.tracks.checks import check_track, declare_below
from lasagna.tracks.generation import GenerationTrack
from lasagna.tracks.judge import JudgeTrack
from lasagna.tracks.retrieval import RetrievalTrack
from lasagna.tracks.sdk import SdkTrack

_TRACKS: dict[str, Track] = {}


def register(track: Track) -> Track:
    """Add a track (PluginError when it cannot run or clashes with one registered)."""
    check_track(track, _TRACKS.values())
    if track.name in _TRACKS:
        return _TRACKS[track.name]  # its module imported again
    _TRACKS[track.name] = track
    plugins.registered(f"track {track.name}", lambda: _TRACKS.pop(track.name, None))
    declare_below(track)
    return track


register(RetrievalTrack())
register(GenerationTrack())
register(JudgeTrack())
register(SdkTrack())


def tracks() -> list[Track]:
    """Every registered track, plugins' included, in registration order (the order a
    sweep's trials run in)."""
    plugins.load()
    return list(_TRACKS.values())


def track_names() -> tuple[str, ...]:
    return tuple(t.name for t in tracks())


def get_track(name: str) -> Track:
    found = plugins.lookup(lambda: _TRACKS.get(name))
    if found is None:
        raise KeyError(f"unknown track '{name}' (tracks: {', '.join(_TRACKS)})")
    return found


def track_problems(
    benchmark: Benchmark, track: str, kind: str | None = None, system: Any = None
) -> list[Problem]:
    """The refusals for running `track` (a system of `kind`, or `system`) on this data; []
    when fine."""
    if plugins.lookup(lambda: _TRACKS.get(track)) is None:
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
