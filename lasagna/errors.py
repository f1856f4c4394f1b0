"""Errors for people: every user error names the file, the line or id, the field and the fix.

A `UserError` carries one or more `Problem`s. The CLI prints them without a traceback and
exits with code 2; nothing is written when one is raised before work starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

MAX_REPORTED = 50  # problems printed per error; the rest are counted

KeyPath = tuple[str | int, ...]  # where a value sits in a file: ("benchmarks", 0, "path")


def dotted(path: KeyPath) -> str:
    """A key path as people write it (a Problem's `field`): benchmarks[0].path."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def undotted(field: str) -> KeyPath:
    """The key path of a field `dotted` wrote."""
    return tuple(int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", field))


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the user's input."""

    message: str
    file: str | None = None
    where: str | None = None  # "line 3", "id q7", "row 4", "key benchmarks[0].pth"
    field: str | None = None
    fix: str | None = None

    def render(self) -> str:
        loc = ":".join(p for p in (self.file, self.where) if p)
        head = f"{loc}: " if loc else ""
        fld = f"field '{self.field}': " if self.field else ""
        stop = "" if self.message.rstrip().endswith((".", "?", "!", ":")) else "."
        tail = f"{stop} Fix: {self.fix}" if self.fix else ""
        return f"{head}{fld}{self.message}{tail}"


_LINE = re.compile(r"(?:line|row|record) (\d+)")


def in_line_order(problems: list[Problem]) -> list[Problem]:
    """One file's problems by line: a file is checked in passes (parsing, then each row's
    fields, then ids across rows), and the first MAX_REPORTED shown must be the first in
    the file. Problems without a line (the whole file, an id) come first, in their order."""

    def line(problem: Problem) -> int:
        found = _LINE.match(problem.where or "")
        return int(found.group(1)) if found else 0

    return sorted(folded(problems), key=line)


FOLD_FROM = 3  # the same problem on this many rows or more is said once


def folded(problems: list[Problem]) -> list[Problem]:
    """The same problem on many rows (a misspelled Parquet or JSONL column) once, on its
    first row, with how many more rows have it; the others as they are."""
    same: dict[tuple[Any, ...], list[Problem]] = {}
    for p in problems:
        same.setdefault((p.file, p.field, p.message, p.fix, p.where is None), []).append(p)
    out = []
    for p in problems:
        group = same[(p.file, p.field, p.message, p.fix, p.where is None)]
        if len(group) < FOLD_FROM or p.where is None:
            out.append(p)
        elif p is group[0]:
            out.append(replace(p, where=f"{p.where} and {len(group) - 1} more"))
    return out


class UserError(Exception):
    """Bad input or a request lasagna cannot serve. Exit code 2."""

    exit_code = 2

    def __init__(self, problems: Problem | str | list[Problem], *, title: str | None = None):
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        self.title = title
        super().__init__(self.render())

    def render(self) -> str:
        lines = [self.title] if self.title else []
        shown = self.problems[:MAX_REPORTED]
        lines += [p.render() for p in shown]
        extra = len(self.problems) - len(shown)
        if extra > 0:
            lines.append(f"... and {extra} more problem(s) not shown")
        return "\n".join(lines)
