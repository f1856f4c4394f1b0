"""JSON text as the data readers parse it: an object that names a key twice is found, not
collapsed to the key's last value as Python's `json` does (a row holding two `question`s,
or `metadata` twice, would lose one without a word)."""

from __future__ import annotations

import json
from typing import Any

from lasagna.errors import Problem


class _Twice(dict):
    """A parsed object that named keys twice (`twice`); the data readers refuse it."""

    twice: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    seen: set[str] = set()
    twice = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
    out = _Twice(found)
    out.twice = tuple(dict.fromkeys(twice))
    return out


def loads(text: str) -> Any:
    """`json.loads`, with each object that named a key twice marked for `keys_twice`."""
    return json.loads(text, object_pairs_hook=_object)


def keys_twice(value: Any, path: str = "") -> list[str]:
    """The keys (dotted from the row: `metadata.source`) named twice in one object, anywhere
    in `value`."""
    out: list[str] = []
    if isinstance(value, dict):
        out += [path + k for k in getattr(value, "twice", ())]
        for key, item in value.items():
            out += keys_twice(item, f"{path}{key}.")
    elif isinstance(value, list):
        for item in value:
            out += keys_twice(item, path)
    return out


def twice_problem(keys: list[str], file: str, where: str) -> Problem:
    """The refusal of a row whose object names `keys` twice."""
    named = ", ".join(f"'{k}'" for k in keys)
    return Problem(
        f"the object names {named} twice (JSON would keep only the last value)",
        file=file,
        where=where,
        field=keys[0],
        fix="keep one of each (merge the values, or rename one)",
    )
