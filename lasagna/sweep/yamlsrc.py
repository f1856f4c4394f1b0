"""Safe YAML reading that remembers where every key and item came from.

Errors in a sweep must name a line, and `yaml.safe_load` forgets lines. We compose the
node tree with the safe loader once, build the data from it (same result as safe_load),
and record the line of every mapping key and sequence item by its key path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lasagna.errors import KeyPath, Problem, UserError, dotted

Lines = dict[KeyPath, int]
MAX_DEPTH = 64


def read_yaml(path: Path) -> tuple[Any, Lines]:
    """Read a YAML file safely; return its data and the 1-based line of each key path."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(
            Problem(
                f"cannot read the file: {err.strerror}",
                file=str(path),
                fix="check the path and its permissions",
            )
        ) from err
    return parse_yaml(text, str(path))


def parse_yaml(text: str, file: str) -> tuple[Any, Lines]:
    """Parse YAML text with the safe loader, keeping lines; duplicate keys are errors."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        reason = getattr(err, "problem", None) or str(err)
        raise UserError(
            Problem(
                f"not valid YAML: {reason}",
                file=file,
                where=where,
                fix="fix the YAML syntax (indentation, quotes, a missing ':')",
            )
        ) from err
    lines: Lines = {}
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), lines, problems, file)
    if problems:
        raise UserError(problems, title=f"{file}: {len(problems)} problem(s)")
    return data, lines


def _walk(node: yaml.Node, path: KeyPath, lines: Lines, problems: list[Problem], file: str):
    lines.setdefault(path, node.start_mark.line + 1)
    if len(path) > MAX_DEPTH:  # a recursive alias (&a [*a]) must not recurse forever
        return
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                problems.append(
                    Problem(
                        f"key '{key}' appears twice (first at line {seen[key]})",
                        file=file,
                        where=f"line {line}",
                        field=dotted(path + (key,)),
                        fix="keep one of them",
                    )
                )
            seen[key] = line
            lines[path + (key,)] = line
            _walk(value_node, path + (key,), lines, problems, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _walk(item, path + (i,), lines, problems, file)


def line_of(lines: Lines, path: KeyPath) -> int | None:
    """The line of the longest prefix of `path` that the file spells out."""
    for n in range(len(path), -1, -1):
        if path[:n] in lines:
            return lines[path[:n]]
    return None


@dataclass(frozen=True)
class Issue:
    """A problem at a key path, before it is placed on a line of a file."""

    path: KeyPath
    message: str
    fix: str | None = None


def to_problems(issues: list[Issue], file: str, lines: Lines) -> list[Problem]:
    """Place issues on the lines of `file`, in the order of the file."""
    placed = [(line_of(lines, issue.path), issue) for issue in issues]
    placed.sort(key=lambda pair: pair[0] if pair[0] is not None else 1 << 30)
    out = []
    for line, issue in placed:
        out.append(
            Problem(
                issue.message,
                file=file,
                where=f"line {line}" if line is not None else None,
                field=dotted(issue.path) or None,
                fix=issue.fix,
            )
        )
    return out


@dataclass(frozen=True)
class SweepSource:
    """Where a validated sweep came from: its file, the line of every key path, and the
    grid or item each expanded system came from, so later checks (models, resources) can
    name the line the user wrote."""

    file: str
    lines: Lines
    origins: dict[str, list[KeyPath]]

    def original(self, path: KeyPath) -> KeyPath:
        """An index into an expanded systems list mapped back to the item or grid written."""
        if len(path) >= 2 and path[0] in self.origins and isinstance(path[1], int):
            table = self.origins[str(path[0])]
            if path[1] < len(table):
                return table[path[1]] + path[2:]
        return path

    def locate(self, path: KeyPath, expanded: bool = True) -> tuple[str, str | None]:
        """(the file, "line N" of the longest part of `path` the file spells out); `path`
        indexes the expanded systems lists unless `expanded` is False (as written)."""
        path = self.original(path) if expanded else path
        if path and path[:1] not in self.lines:  # a profile's key: not in this file
            return self.file, None
        line = line_of(self.lines, path)
        return self.file, f"line {line}" if line is not None else None
