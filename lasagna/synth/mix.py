"""`--mix`: the share of each question type, parsed and checked, then turned into counts."""

from __future__ import annotations

import math
from collections.abc import Mapping

from lasagna.errors import Problem, UserError

QUESTION_TYPES = ("factoid", "multihop", "unanswerable")
DEFAULT_MIX = "factoid=0.6,multihop=0.3,unanswerable=0.1"
_TOLERANCE = 1e-6


def _problem(message: str, fix: str) -> Problem:
    return Problem(message, field="--mix", fix=fix)


def parse_mix(mix: str | Mapping[str, float]) -> dict[str, float]:
    """'factoid=0.6,multihop=0.3,unanswerable=0.1' -> {type: share}; a UserError if it is bad.

    Known names only, each at most once, non-negative numbers summing to 1. A type left out
    gets share 0. Every problem is reported at once.
    """
    example = f"e.g. --mix {DEFAULT_MIX}"
    problems: list[Problem] = []
    items: list[tuple[str, object]]
    if isinstance(mix, Mapping):
        items = list(mix.items())
    else:
        items = []
        for part in (p.strip() for p in str(mix).split(",")):
            if not part:
                continue
            name, sep, value = part.partition("=")
            if not sep:
                problems.append(_problem(f"'{part}' is not NAME=SHARE", example))
                continue
            items.append((name.strip(), value.strip()))
    shares = dict.fromkeys(QUESTION_TYPES, 0.0)
    seen: set[str] = set()
    for name, value in items:
        if name not in QUESTION_TYPES:
            problems.append(
                _problem(f"unknown question type '{name}'", f"use {', '.join(QUESTION_TYPES)}")
            )
            continue
        if name in seen:
            problems.append(_problem(f"'{name}' is given twice", "give each type once"))
            continue
        seen.add(name)
        try:
            share = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            problems.append(_problem(f"{name}={value!r} is not a number", example))
            continue
        if not math.isfinite(share) or share < 0:
            problems.append(_problem(f"{name}={value} is negative or not finite", example))
            continue
        shares[name] = share
    if not items and not problems:
        problems.append(_problem("the mix is empty", example))
    total = sum(shares.values())
    if not problems and abs(total - 1.0) > _TOLERANCE:
        problems.append(_problem(f"the shares sum to {total:g}, not 1", example))
    if problems:
        raise UserError(problems, title="bad --mix:")
    return shares


def allocate(n: int, shares: Mapping[str, float]) -> dict[str, int]:
    """Counts per type summing to n: floors, then the largest remainders (ties in type order)."""
    raw = {t: n * shares.get(t, 0.0) for t in QUESTION_TYPES}
    counts = {t: math.floor(v + _TOLERANCE) for t, v in raw.items()}
    left = n - sum(counts.values())
    order = sorted(QUESTION_TYPES, key=lambda t: (-(raw[t] - counts[t]), QUESTION_TYPES.index(t)))
    for t in order[: max(0, left)]:
        counts[t] += 1
    return counts


def format_mix(shares: Mapping[str, float]) -> str:
    return ",".join(f"{t}={shares[t]:g}" for t in QUESTION_TYPES)
