"""Turn pydantic validation errors into problems people can act on.

Each error is placed on its YAML line, unknown keys get a "did you mean", and grid items
point back at the grid they came from. All errors of a file are reported together.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from lasagna.errors import UserError
from lasagna.sweep.fields import grid_fields
from lasagna.sweep.grid import expand_systems
from lasagna.sweep.yamlsrc import Issue, KeyPath, Lines, SweepSource, to_problems

M = TypeVar("M", bound=BaseModel)


def validate_document(model: type[M], data: Any, file: str, lines: Lines) -> M:
    """Validate YAML data against `model`; raise one UserError listing every problem."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(
            to_problems(
                [Issue((), "the file must be a mapping of keys", _keys_fix(model))], file, lines
            )
        )
    data = dict(data)
    origins: dict[str, list[KeyPath]] = {}
    issues: list[Issue] = []
    for field in grid_fields():
        if field in data and field in model.model_fields:
            data[field], origins[field], errs = expand_systems(data[field], field)
            issues += errs
    if not issues:
        try:
            validated = model.model_validate(data)
        except ValidationError as err:
            issues = issues_from(err, model, data, origins)
        else:
            if "_source" in getattr(model, "__private_attributes__", {}):
                validated._source = SweepSource(file, lines, origins)  # type: ignore[attr-defined]
            return validated
    raise UserError(to_problems(issues, file, lines), title=f"{file}: {len(issues)} problem(s)")


def issues_from(
    err: ValidationError,
    model: type[BaseModel],
    data: Any,
    origins: dict[str, list[KeyPath]] | None = None,
) -> list[Issue]:
    """One Issue per pydantic error, with the path as the user wrote it."""
    out: list[Issue] = []
    seen: set[tuple[KeyPath, str]] = set()
    for e in err.errors():
        path = data_path(data, e["loc"], e["type"])
        message, fix = _explain(e, model, data, path)
        shown = _original_path(path, origins or {})
        if (shown, message) not in seen:
            seen.add((shown, message))
            out.append(Issue(shown, message, fix))
    return out


def data_path(data: Any, loc: tuple[Any, ...], err_type: str = "") -> KeyPath:
    """The path of `loc` in the data, dropping pydantic's union tags ('bm25', ...)."""
    path: list[str | int] = []
    cursor = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(cursor, dict) and part in cursor:
            path.append(part)
            cursor = cursor[part]
        elif isinstance(cursor, list | tuple) and isinstance(part, int) and part < len(cursor):
            path.append(part)
            cursor = cursor[part]
        elif last and err_type == "missing":
            path.append(part)
        # anything else is a tag pydantic adds for a union member: not in the user's file
    return tuple(path)


def model_at(model: type[BaseModel], data: Any, path: KeyPath) -> type[BaseModel] | None:
    """The pydantic model that validates the mapping at `path` (None if not a model)."""
    candidates: list[type[BaseModel]] = [model]
    cursor = data
    for part in path:
        candidates = _narrow(candidates, cursor)
        if isinstance(part, int):
            cursor = cursor[part] if isinstance(cursor, list | tuple) else None
            continue
        nxt: list[type[BaseModel]] = []
        for cls in candidates:
            if part in cls.model_fields:
                nxt += _models_in(cls.model_fields[part].annotation)
        candidates = nxt
        cursor = cursor.get(part) if isinstance(cursor, dict) else None
    candidates = _narrow(candidates, cursor)
    return candidates[0] if candidates else None


def _narrow(candidates: list[type[BaseModel]], cursor: Any) -> list[type[BaseModel]]:
    """Keep the union member whose `kind` matches the data's `kind:`."""
    if not isinstance(cursor, dict) or "kind" not in cursor or len(candidates) < 2:
        return candidates
    same = [
        c
        for c in candidates
        if "kind" in c.model_fields and c.model_fields["kind"].default == cursor["kind"]
    ]
    return same or candidates


def _models_in(tp: Any) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(tp)[0])
    out: list[type[BaseModel]] = []
    if origin in (typing.Union, types.UnionType, list, tuple, dict):
        for arg in typing.get_args(tp):
            for m in _models_in(arg):
                if m not in out:
                    out.append(m)
    return out


def _explain(
    e: dict[str, Any], model: type[BaseModel], data: Any, path: KeyPath
) -> tuple[str, str | None]:
    kind = e["type"]
    ctx = e.get("ctx") or {}
    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        owner = model_at(model, data, path[:-1])
        allowed = sorted(owner.model_fields) if owner else []
        return f"unknown key '{key}'", _did_you_mean(key, allowed)
    if kind == "missing" and len(path) >= 2 and isinstance(path[-1], int):
        return _too_short(model, data, path)
    if kind == "missing":
        return f"required key '{path[-1] if path else '?'}' is missing", "add it"
    if kind == "union_tag_invalid":
        tags = [t.strip().strip("'") for t in str(ctx.get("expected_tags", "")).split(",")]
        tag = str(ctx.get("tag", ""))
        return f"unknown kind '{tag}'", _did_you_mean(tag, tags, what="kinds")
    if kind == "union_tag_not_found":
        return "the item has no 'kind:'", f"add kind: ({ctx.get('discriminator', 'kind')})"
    msg = e["msg"]
    if kind == "value_error":  # a validator's "message\nFix: fix" (lasagna.sweep.schema)
        msg, _, fix = msg.removeprefix("Value error, ").partition("\nFix: ")
        return msg, fix or None
    return f"{msg} (got {e.get('input')!r})", "correct the value"


def _too_short(model: type[BaseModel], data: Any, path: KeyPath) -> tuple[str, str]:
    """A fixed-length list with too few items (a hybrid's two `retrievers`)."""
    owner = model_at(model, data, path[:-2])
    field = owner.model_fields.get(str(path[-2])) if owner else None
    args = typing.get_args(field.annotation) if field else ()
    need = len(args) if args and Ellipsis not in args else None
    wanted = f"{need} items" if need else "more items"
    return f"'{path[-2]}' needs {wanted}, it has {path[-1]}", f"give it {wanted}"


def _did_you_mean(word: str, allowed: list[str], what: str = "keys") -> str:
    close = difflib.get_close_matches(word, allowed, n=1, cutoff=0.5)
    listing = f"allowed {what}: {', '.join(allowed)}" if allowed else ""
    if close:
        return f"did you mean '{close[0]}'? ({listing})"
    return f"use one of the {listing}" if listing else "remove it"


def _original_path(path: KeyPath, origins: dict[str, list[KeyPath]]) -> KeyPath:
    """Map an index into an expanded systems list back to the item or grid written."""
    if len(path) >= 2 and path[0] in origins and isinstance(path[1], int):
        table = origins[path[0]]
        if path[1] < len(table):
            return table[path[1]] + path[2:]
    return path


def _keys_fix(model: type[BaseModel]) -> str:
    return "write keys such as " + ", ".join(sorted(model.model_fields))
