"""Grid expansion: `{grid: {kind: bm25, k1: [0.9, 1.2], b: [0.4, 0.75]}}` -> four systems.

Every list value inside a grid (at any depth of nested mappings, e.g.
`model: {temperature: [0.0, 0.7]}`) is an axis; the cartesian product is taken in the
order the keys are written, so the expansion (and the trial order) is deterministic.
A field whose value is itself a list (a hybrid's `retrievers`) cannot be a grid axis:
write those systems out as list items instead.
"""

from __future__ import annotations

import itertools
from typing import Any

from lasagna.sweep.yamlsrc import Issue, KeyPath

GRID = "grid"


def expand_systems(value: Any, field: str) -> tuple[Any, list[KeyPath], list[Issue]]:
    """Expand a systems field (a list, a `{grid: ...}`, or a list mixing both).

    Returns the expanded list, the original key path of each expanded item (for error
    lines), and problems with the grids themselves. A value that is neither a list nor a
    grid is returned unchanged for the schema to reject.
    """
    if _is_grid(value):
        items, origins = [value], [(field,)]
    elif isinstance(value, list):
        items, origins = value, [(field, i) for i in range(len(value))]
    else:
        return value, [], []
    out: list[Any] = []
    out_origins: list[KeyPath] = []
    problems: list[Issue] = []
    for item, origin in zip(items, origins, strict=True):
        if not _is_grid(item):
            out.append(item)
            out_origins.append(origin)
            continue
        grid_path = origin + (GRID,)
        extra = sorted(set(item) - {GRID})
        if extra:
            problems.append(
                Issue(
                    origin + (extra[0],),
                    f"a grid item holds only 'grid:', not {extra}",
                    "move the keys inside 'grid:'",
                )
            )
        body = item[GRID]
        if not isinstance(body, dict):
            problems.append(
                Issue(
                    grid_path,
                    "'grid:' must be a mapping of system keys, with lists for the axes",
                    "e.g. grid: {kind: bm25, k1: [0.9, 1.2]}",
                )
            )
            continue
        expanded, errs = expand_grid(body, grid_path)
        problems += errs
        out += expanded
        out_origins += [grid_path] * len(expanded)
    return out, out_origins, problems


def expand_grid(body: dict[str, Any], path: KeyPath = ()) -> tuple[list[dict], list[Issue]]:
    """The cartesian product of the list values of a (nested) mapping."""
    axes = list(_axes(body, ()))
    problems = [
        Issue(
            path + axis,
            "a grid axis is an empty list",
            "give at least one value, or remove the key",
        )
        for axis, values in axes
        if not values
    ]
    if problems:
        return [], problems
    out = []
    for combo in itertools.product(*(values for _, values in axes)):
        system = _copy(body)
        for (axis, _), val in zip(axes, combo, strict=True):
            _set(system, axis, val)
        out.append(system)
    return out, []


def _is_grid(value: Any) -> bool:
    return isinstance(value, dict) and GRID in value


def _axes(node: dict[str, Any], prefix: tuple[str, ...]):
    for key, val in node.items():
        if isinstance(val, list):
            yield prefix + (key,), val
        elif isinstance(val, dict):
            yield from _axes(val, prefix + (key,))


def _copy(node: Any) -> Any:
    return {k: _copy(v) for k, v in node.items()} if isinstance(node, dict) else node


def _set(node: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
