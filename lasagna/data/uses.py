"""What each track needs of question data, kind by kind: registered by the track registry
(lasagna.tracks), read here to say what a data set can run (`validate-data`, refusals).

A track with kinds (generation: rag, closed_book) needs per kind; one without has one
entry under None. Needs are those of lasagna.data.capabilities.NEEDS; an unmet need is
worded by the track when it says so (`messages`), else by the data (`Capabilities.missing`).
Duck-typed on purpose: this module imports nothing of lasagna.data, so `Capabilities` can
ask it without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lasagna.common import plugins


@dataclass(frozen=True)
class TrackNeeds:
    track: str
    by_kind: dict[str | None, tuple[str, ...]]  # kind (None: the track has none) -> needs
    messages: dict[tuple[str | None, str], Any] = field(default_factory=dict)  # -> Missing


@dataclass(frozen=True)
class Refusal:
    key: str  # the track's name, or the kind that cannot run ("rag")
    label: str  # how a report names it: "generation", "rag generation"
    missing: Any  # lasagna.data.model.Missing: reason, fix


_USES: dict[str, TrackNeeds] = {}


def register_needs(needs: TrackNeeds) -> None:
    _USES[needs.track] = needs
    plugins.registered(f"needs of {needs.track}", lambda: _USES.pop(needs.track, None), False)


def track_needs() -> list[TrackNeeds]:
    """Every question track's needs, in registration order (plugins' included)."""
    plugins.load()
    return list(_USES.values())


def _unmet(caps: Any, needs: TrackNeeds, kind: str | None) -> list[str]:
    return [n for n in needs.by_kind[kind] if not caps.has(n)]


def _message(caps: Any, needs: TrackNeeds, kind: str | None, need: str) -> Any:
    return needs.messages.get((kind, need)) or caps.missing[need]


def supported_kinds(caps: Any, needs: TrackNeeds) -> list[str | None]:
    return [k for k in needs.by_kind if not _unmet(caps, needs, k)]


def refusals(caps: Any) -> list[Refusal]:
    """What the data cannot run: a whole track (no kind can run: the reason of its least
    needy kind) or single kinds of a track that can run others."""
    out = []
    for needs in track_needs():
        ok = supported_kinds(caps, needs)
        if not ok:
            kind = min(needs.by_kind, key=lambda k: len(needs.by_kind[k]))
            missing = _message(caps, needs, kind, _unmet(caps, needs, kind)[0])
            out.append(Refusal(needs.track, needs.track, missing))
            continue
        for kind in needs.by_kind:
            if kind not in ok and kind is not None:
                missing = _message(caps, needs, kind, _unmet(caps, needs, kind)[0])
                out.append(Refusal(kind, f"{kind} {needs.track}", missing))
    return out


def supported_tracks(caps: Any) -> list[str]:
    """Human labels for what the tracks can run, e.g. ["retrieval", "generation
    (closed-book only)"]."""
    out = []
    for needs in track_needs():
        ok = supported_kinds(caps, needs)
        if ok and len(ok) < len(needs.by_kind):
            only = ", ".join(str(k).replace("_", "-") for k in ok)
            out.append(f"{needs.track} ({only} only)")
        elif ok:
            out.append(needs.track)
    return out
