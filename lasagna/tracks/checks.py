"""What registering a track checks, and what it tells the layers below it.

A track is refused (PluginError: one line naming the track, the field and the fix) when it
lacks a name, a systems field or its pipeline methods, or when its name, systems field or
columns clash with what another track registered. A registered track then declares, to the
registries of the layers that read them without importing tracks: its catalog entry
(lasagna.metrics.catalog: report order, export formats, and the row columns the result
schema lists) and, for question data, its needs kind by kind (lasagna.data.uses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lasagna.common.plugins import PluginError
from lasagna.tracks.base import DATAPOINTS, QUESTIONS, TEST_CASES, Track

if TYPE_CHECKING:
    from collections.abc import Iterable

# the sweep's own keys: a track's systems field may not take one
SWEEP_KEYS = (
    "description",
    "trials",
    "seed",
    "resources",
    "profile",
    "benchmarks",
    "output",
    "cache",
)
PIPELINE = ("input_columns", "stages", "aggregate")
SWEPT = (QUESTIONS, TEST_CASES)  # what a sweep's benchmarks are: its tracks have a sweep key


def check_track(track: Track, others: Iterable[Track]) -> None:
    """Refuse a track that cannot run or that clashes with a registered one."""
    cls = type(track)
    name = getattr(track, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginError(f"{cls.__name__}: a track needs a name (class attribute `name`)")
    what = f"track '{name}'"
    field = getattr(track, "systems_field", None)
    if not isinstance(field, str) or not field.isidentifier():
        raise PluginError(f"{what}: `systems_field` must be the sweep key of its systems")
    if field in SWEEP_KEYS:
        raise PluginError(f"{what}: systems_field '{field}' is a sweep key: pick another")
    if track.reads not in (*SWEPT, DATAPOINTS):
        raise PluginError(f"{what}: reads must be {QUESTIONS!r} or {TEST_CASES!r}")
    pipeline = ("aggregate",) if track.runs_own_rows else PIPELINE
    pipeline += ("system_type",) if track.reads in SWEPT else ()
    missing = [m for m in pipeline if getattr(cls, m) is getattr(Track, m)]
    if missing:
        raise PluginError(f"{what}: define {', '.join(missing)} (see lasagna.tracks.base.Track)")
    for column in track.columns:
        if len(column) != 4 or not all(isinstance(c, str) for c in column):
            raise PluginError(f"{what}: a column is (name, arrow type, stage, meaning): {column}")
    for other in others:
        theirs = {c[0]: c[1] for c in other.columns}
        for column, typ, *_ in track.columns:
            if other.name != name and theirs.get(column, typ) != typ:
                raise PluginError(
                    f"{what}: row column '{column}' is {theirs[column]} in the {other.name} "
                    f"track, not {typ}: give the column another name"
                )
        if other.name == name and type(other) is not cls:
            raise PluginError(f"{what} is registered already ({type(other).__module__})")
        if other.name != name and other.systems_field == field:
            raise PluginError(f"{what}: systems_field '{field}' is the {other.name} track's")
    from lasagna.data.capabilities import NEEDS

    for kind in track.kinds or (None,):
        unknown = [n for n in track.needs(kind) if n not in NEEDS]
        if unknown:
            raise PluginError(
                f"{what}: unknown data need(s) {', '.join(unknown)} (needs: {', '.join(NEEDS)})"
            )


def declare_below(track: Track) -> None:
    """Tell the lower layers' registries what they need to know of `track`."""
    from lasagna.data.uses import TrackNeeds, register_needs
    from lasagna.metrics import catalog

    catalog.register_track(track.name, track.description, track.exports, track.columns)
    if track.reads == QUESTIONS:
        kinds = track.kinds or (None,)
        by_kind = {k: tuple(track.needs(k)) for k in kinds}
        messages = {}
        for kind, needs in by_kind.items():
            for need in needs:
                worded = track.need_message(need, kind)
                if worded is not None:
                    messages[(kind, need)] = worded
        register_needs(TrackNeeds(track.name, by_kind, messages))
