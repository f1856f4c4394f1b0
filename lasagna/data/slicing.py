"""Slices of questions by a metadata key: one slice per value, or numbers cut into bins.

`--by type` makes a slice per value of `type` (a list value puts its question in each of
its items' slices, a missing key in `(none)`). `--by popularity:4` cuts the numbers of
`popularity` into 4 bins of about as many questions each (quantiles over the questions:
long-tail questions at one end, popular ones at the other), each named by the smallest and
largest value it holds (`12..250`); a key with at most 4 distinct numbers keeps one slice
per number. A value that is not a number (text, a boolean) keeps a slice of its own beside
the bins. Bins come in the order of their numbers; plain slices the largest first.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lasagna.data.select import NONE, metadata_value, values_of
from lasagna.errors import Problem, UserError

_BINS = re.compile(r"(?P<key>.+):(?P<bins>[0-9]+)")
MAX_BINS = 100


@dataclass(frozen=True)
class SliceKey:
    """What `--by` names: a metadata key (dotted keys read nested objects), and the number
    of bins its numbers are cut into (None: a slice per value)."""

    key: str
    bins: int | None = None

    @classmethod
    def parse(cls, text: str) -> SliceKey:
        """`type` or `popularity:4` (KEY:N, N from 2 to MAX_BINS)."""
        match = _BINS.fullmatch(text)
        if match is None:
            return cls(text)
        bins = int(match["bins"])
        if not 2 <= bins <= MAX_BINS:
            raise UserError(
                Problem(
                    f"--by {text}: cannot cut the values into {bins} bin(s)",
                    field="--by",
                    fix=f"use from 2 to {MAX_BINS} bins (--by {match['key']}:4 gives quartiles)",
                )
            )
        return cls(match["key"], bins)

    def __str__(self) -> str:
        return self.key if self.bins is None else f"{self.key}:{self.bins}"


def metadata_values(metadata: Mapping[str, Mapping[str, Any]], by: SliceKey) -> dict[str, Any]:
    """question id -> its value of the key (None when it has none)."""
    return {qid: metadata_value(dict(meta), by.key) for qid, meta in metadata.items()}


def slices(values: Mapping[str, Any], by: SliceKey) -> dict[str, set[str]]:
    """slice -> the ids in it, in showing order ((none) last): a slice per value, or the
    numbers cut into `by.bins` bins; refused when bins are asked of a key with no number."""
    if by.bins is None:
        return _ordered(_plain(values.items()))
    numbers = [(qid, x) for qid, v in values.items() for x in _items(v) if is_number(x)]
    if not numbers and any(v is not None for v in values.values()):
        raise UserError(
            Problem(
                f"--by {by}: the values of {by.key!r} are not numbers to cut into bins",
                field="--by",
                fix=f"use --by {by.key} (a slice per value)",
            )
        )
    binned = _binned(numbers, by.bins)
    in_bins = set().union(*binned.values()) if binned else set()
    others = []  # text values beside the bins, and questions with no value
    for qid, value in values.items():
        texts = [x for x in _items(value) if not is_number(x)]
        if texts or qid not in in_bins:
            others.append((qid, texts or None))
    return binned | _ordered(_plain(others))


def _plain(pairs: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for qid, value in pairs:
        for v in values_of(value):
            out.setdefault(v, set()).add(qid)
    return out


def _ordered(groups: dict[str, set[str]]) -> dict[str, set[str]]:
    return dict(sorted(groups.items(), key=lambda kv: (kv[0] == NONE, -len(kv[1]), kv[0])))


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [] if value is None else [value]


def sliceable(value: Any) -> bool:
    """A metadata value rows can be sliced or filtered by: not an object, nor a list of
    objects or lists (BEIR SciFact's evidence, keyed by document id)."""
    if isinstance(value, dict):
        return False
    return not (isinstance(value, list) and any(isinstance(v, dict | list) for v in value))


def is_number(x: Any) -> bool:
    """A value to bin: an int or float, not a boolean, not NaN."""
    return isinstance(x, int | float) and not isinstance(x, bool) and x == x


def _binned(numbers: list[tuple[str, float]], bins: int) -> dict[str, set[str]]:
    """Equal-count bins over the questions' numbers (cut at the k/bins quantiles); each
    named `lo..hi` by the values it holds, in the order of the numbers."""
    ordered = sorted(x for _, x in numbers)
    if len(set(ordered)) <= bins:
        cuts = sorted(set(ordered))[1:]
    else:
        cuts = sorted({ordered[round(k * len(ordered) / bins)] for k in range(1, bins)})
    members: dict[int, list[tuple[str, float]]] = {}
    for qid, x in numbers:
        members.setdefault(bisect.bisect_right(cuts, x), []).append((qid, x))
    out: dict[str, set[str]] = {}
    for b in sorted(members):
        lo, hi = min(x for _, x in members[b]), max(x for _, x in members[b])
        name = number_name(lo) if lo == hi else f"{number_name(lo)}..{number_name(hi)}"
        out.setdefault(name, set()).update(qid for qid, _ in members[b])
    return out


def number_name(x: float) -> str:
    """A number as a bin's name spells it: whole numbers without a point, others to 4
    significant digits."""
    if isinstance(x, int) or float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.4g}" if abs(x) >= 1e-4 else json.dumps(x)
