"""Every model a sweep names, checked before Ray starts: generators, judges (of judge files
and of judged generation), embedders; each refusal names the sweep file, the line, the
system and the field (the systems say what to check: `SystemConfig.checks_at`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from lasagna.errors import KeyPath, Problem, UserError, dotted
from lasagna.tracks import QUESTIONS, get_track, tracks


def sweep_systems(sweep: Any) -> list[tuple[KeyPath, str, Any]]:
    """(key path in the sweep, label, system) of every system and judge it runs."""
    out: list[tuple[KeyPath, str, Any]] = []
    question_tracks = False
    for track in tracks():
        for i, system in enumerate(getattr(sweep, track.systems_field, None) or []):
            question_tracks |= track.reads == QUESTIONS
            label = f"{track.name} system '{system.display_name()}'"
            out.append(((track.systems_field, i), label, system))
    if question_tracks:  # the judges of judged generation are not a track's systems then
        judge = get_track("judge")
        out = [e for e in out if e[0][0] != judge.systems_field]
        for i, system in enumerate(sweep.judges or []):
            out.append(((judge.systems_field, i), f"judge '{system.display_name()}'", system))
    return out


def model_problems(sweep: Any, prepare: bool = False) -> list[Problem]:
    """Every model of the sweep that cannot be used, once per system that names it. Each
    system is checked as it runs, with the sweep's `resources:` applied (GPU search, int8
    on a GPU); a problem only those defaults cause, about a stage they set, is said of
    that `resources:` key (`resources.search.num_gpus`)."""
    source = getattr(sweep, "source", None)
    resources = getattr(sweep, "resources", None)
    problems: list[Problem] = []
    for path, label, system in sweep_systems(sweep):
        with_defaults = resources is not None and bool(resources.model_fields_set)
        applied = _failing(system.with_resources(resources) if with_defaults else system, prepare)
        # which problems the system has without the defaults: asked only when some fail
        own = _failing(system, prepare) if with_defaults and applied else applied
        for part, p in applied:
            at, stage = (path, part), (p.field or "").split(".")[0]
            if (part, p) not in own and stage in resources.model_fields_set:
                at = (("resources",), ())  # the sweep's default for that stage causes it
            placed = _placed(p, *at, label, source)
            if placed not in problems:
                problems.append(placed)
    return problems


def _failing(system: Any, prepare: bool) -> list[tuple[tuple[str, ...], Problem]]:
    """(the part of `system` it is about, problem) of each of its checks that fails."""
    out = []
    for part, check in system.checks_at(prepare=prepare):
        try:
            check()
        except UserError as err:
            out.extend((part, p) for p in err.problems)
    return out


def _placed(p: Problem, path: KeyPath, part: tuple[str, ...], label: str, source: Any) -> Problem:
    """`p` said of the system at `path`: its label, the field's full key path, its line."""
    rel = tuple((p.field or "").split(".")) if p.field else ()
    if part and rel and rel[0] == part[-1]:  # "model" of the model block: said once
        part = part[:-1]
    full = (*path, *part, *rel)
    file, where = source.locate(full) if source is not None else (p.file, p.where)
    shown = source.original(full) if source is not None else full
    message = f"{label}: {p.message}"
    if p.file and p.file != file:
        message += f" ({p.file})"
    return dataclasses.replace(p, message=message, file=file, where=where, field=dotted(shown))
