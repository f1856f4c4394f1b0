"""Validate a conversation's `turns`: a non-empty list of {role, content} objects.

Used by every row format; CSV passes the cell after decoding its JSON string.
"""

from __future__ import annotations

import json
from typing import Any

from lasagna.data.model import Turn
from lasagna.errors import Problem

ROLES = ("user", "assistant", "system")
_TURN_FIX = 'write turns as [{"role": "user", "content": "..."}, ...]'


def parse_turns_cell(cell: str, file: str, where: str) -> tuple[list[Turn] | None, list[Problem]]:
    """Decode a CSV `turns` cell (a JSON-encoded list) and validate it."""
    try:
        value = json.loads(cell)
    except json.JSONDecodeError as err:
        return None, [
            Problem(
                f"the turns cell is not valid JSON ({err.msg} at character {err.pos + 1})",
                file=file,
                where=where,
                field="turns",
                fix="write the cell as a JSON array with doubled quotes inside the CSV quotes, "
                'e.g. "[{""role"": ""user"", ""content"": ""Hello""}]" (or use JSONL)',
            )
        ]
    return parse_turns(value, file, where)


def parse_turns(value: Any, file: str, where: str) -> tuple[list[Turn] | None, list[Problem]]:
    """Return the turns, or the problems naming each bad turn and field."""
    if not isinstance(value, list) or not value:
        got = "an empty list" if value == [] else f"{kind_of(value)}"
        return None, [
            Problem(
                f"turns must be a non-empty list of turn objects, got {got}",
                file=file,
                where=where,
                field="turns",
                fix=_TURN_FIX,
            )
        ]
    problems: list[Problem] = []
    turns: list[Turn] = []
    for i, turn in enumerate(value):
        fld = f"turns[{i}]"
        if not isinstance(turn, dict):
            problems.append(
                Problem(
                    f"a turn must be an object, got {kind_of(turn)}",
                    file=file,
                    where=where,
                    field=fld,
                    fix=_TURN_FIX,
                )
            )
            continue
        unknown = sorted(set(turn) - {"role", "content"})
        if unknown:
            problems.append(
                Problem(
                    f"unknown key(s) {', '.join(map(repr, unknown))} in a turn",
                    file=file,
                    where=where,
                    field=fld,
                    fix="a turn holds only 'role' and 'content'",
                )
            )
        role, content = turn.get("role"), turn.get("content")
        if role not in ROLES:
            said = "is missing" if role is None else f"is {role!r}"
            problems.append(
                Problem(
                    f"role {said}; it must be one of {', '.join(ROLES)}",
                    file=file,
                    where=where,
                    field=f"{fld}.role",
                    fix="set role to user, assistant or system",
                )
            )
        if not isinstance(content, str):
            problems.append(
                Problem(
                    f"content must be a string, got {kind_of(content)}",
                    file=file,
                    where=where,
                    field=f"{fld}.content",
                    fix="write the turn's text as a string",
                )
            )
        if role in ROLES and isinstance(content, str):
            turns.append(Turn(role=role, content=content))
    return (None if problems else turns), problems


def kind_of(value: Any) -> str:
    """What a JSON value is, with its article, for messages: "an object", "a list", "null"."""
    if value is None:
        return "null"
    name = {dict: "object", list: "list", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else type(value).__name__
    )
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def kind_of_texts(value: Any) -> str:
    """What a value that should be text or a list of texts is: "a list holding a number"."""
    if isinstance(value, list):
        bad = next((v for v in value if not isinstance(v, str)), None)
        return f"a list holding {kind_of(bad)}" if value and bad is not None else "a list"
    return kind_of(value)
