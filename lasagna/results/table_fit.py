"""Tables that fit the terminal they are printed on.

A results table is never wider than `WIDTH` or the terminal. Its system column keeps at
least `SYSTEM_MIN` columns (or its longest name): rich would otherwise shrink the one column
that may wrap, down to nothing, and print scores without the names they belong to. What
does not fit beside it are the optional columns (the last metrics first), which the table
leaves out and says so under it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

WIDTH = 100  # a table never gets wider, even on a wider terminal (long names fold)
SYSTEM_MIN = 24  # columns a system name keeps before optional columns are left out
NAME_LEAST = 8  # the least a name column gets on a terminal too narrow for the rest
GAP = 3  # what rich adds to each column of a SIMPLE_HEAD table (padding and rule)
METRIC_CELL = "0.0000"  # the cells of a metric column, as wide as shown


def table_width(console: Console) -> int:
    return min(console.width, WIDTH)


def cells_width(header: str, cells: Sequence[str] = (METRIC_CELL,)) -> int:
    """The width of a column: its header or its widest cell (by default a metric's)."""
    return max([len(header), *map(len, cells)])


def fitting(
    always: Sequence[int],
    optional: Sequence[int],
    names: Sequence[str],
    width: int,
    header: str = "system",
) -> int:
    """How many of the `optional` columns (their widths, most wanted first) fit beside the
    `always` ones while the name column keeps min(SYSTEM_MIN, its widest) columns. A table
    of n columns is their widths + GAP * n - 1 wide (rich: padding, rules and edges)."""
    need = min(SYSTEM_MIN, max([len(header), *map(len, names)])) + GAP - 1
    keep = len(optional)
    while keep and width - sum(w + GAP for w in [*always, *optional[:keep]]) < need:
        keep -= 1
    return keep


def name_room(
    shown: Sequence[int], names: Sequence[str], width: int, header: str = "system"
) -> int:
    """The name column's least width beside the `shown` columns (their widths): its
    min(SYSTEM_MIN, widest), less where a narrow terminal leaves less room (then names
    fold rather than rich cutting a column that must be read whole), never below NAME_LEAST."""
    longest = max([len(header), *map(len, names)])
    room = width - sum(w + GAP for w in shown) - (GAP - 1)
    return max(NAME_LEAST, min(SYSTEM_MIN, longest, room))


def add_name_column(
    table: Table, header: str, names: Sequence[str], least: int | None = None
) -> None:
    """The system column: folds long names, never narrower than SYSTEM_MIN (or its names),
    or `least` (`name_room`) where given."""
    longest = max([len(header), *map(len, names)])
    table.add_column(
        header, overflow="fold", min_width=least if least else min(SYSTEM_MIN, longest)
    )


def column_chunks(widths: Sequence[int], fixed: int, width: int) -> list[range]:
    """The columns (their widths, in order) split into tables that each fit `width` beside
    `fixed` columns every table repeats (a name, a mean); each table holds one at least."""
    chunks, start = [], 0
    while start < len(widths):
        end, used = start, fixed
        while end < len(widths) and (end == start or used + widths[end] + GAP <= width):
            used += widths[end] + GAP
            end += 1
        chunks.append(range(start, end))
        start = end
    return chunks
