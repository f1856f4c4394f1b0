"""A query's answer for people and for programs: a rich table in the terminal, or every row
as CSV or a JSON array (the queries themselves: lasagna.results.sql)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from lasagna.common.tables import add_text_row
from lasagna.results.fs import json_default

if TYPE_CHECKING:
    import pyarrow as pa


def _plain(value: Any) -> Any:
    """JSON-ready: maps (lists of pairs from Arrow) as objects, times as ISO text."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, tuple) and len(v) == 2 for v in value)
    ):
        return {str(k): _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, float) and value != value:
        return None
    return value


def write_table(table: pa.Table, fmt: str, out: Any) -> None:
    """Every row of `table` to a text stream as CSV (header first) or a JSON array."""
    rows = [{k: _plain(v) for k, v in row.items()} for row in table.to_pylist()]
    if fmt == "json":
        json.dump(rows, out, default=json_default, ensure_ascii=False, allow_nan=False)
        out.write("\n")
        return
    import csv

    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in rows:
        writer.writerow(
            "" if v is None else json.dumps(v) if isinstance(v, dict | list) else v
            for v in row.values()
        )


NARROWEST = 10  # a grid column shows at least this many characters of its values, or the
# query's answer is printed one block per row (as psql's expanded mode) rather than squeezed


def render_table(
    table: pa.Table, console: Console | None = None, title: str | None = None, max_rows: int = 50
) -> None:
    """Any Arrow table as a rich table (first `max_rows` rows; long values cut; numbers
    right-aligned so their digits line up); one block per row when the columns cannot fit
    the terminal (`SELECT * FROM trials` has dozens)."""
    import pyarrow.types as types

    console = console or Console()
    rows = [[_cell(v) for v in row.values()] for row in table.slice(0, max_rows).to_pylist()]
    if not rows and not _fits(table.column_names, rows, console.width):
        console.print(f"no rows (columns: {', '.join(table.column_names)})", markup=False)
    elif not _fits(table.column_names, rows, console.width):
        _render_blocks(table, rows, console, title)
    else:
        out = Table(title=title)
        for field in table.schema:
            number = types.is_integer(field.type) or types.is_floating(field.type)
            number = number or types.is_decimal(field.type)
            out.add_column(field.name, overflow="fold", justify="right" if number else "left")
        for row in rows:
            add_text_row(out, *row)
        console.print(out)
    if table.num_rows > max_rows:
        console.print(f"... {table.num_rows - max_rows} more rows")


def _fits(names: list[str], rows: list[list[str]], width: int) -> bool:
    """Whether a grid shows every header whole and NARROWEST characters of each column (a
    column costs its width, two spaces of padding and a border)."""
    need = 1
    for i, name in enumerate(names):
        widest = max((len(row[i]) for row in rows), default=0)
        need += max(len(name), min(widest, NARROWEST)) + 3
    return need <= width


def _render_blocks(table: pa.Table, rows: list[list[str]], console: Console, title: str | None):
    names = table.column_names
    if title:
        console.print(title, markup=False)
    console.print(
        f"[dim]{len(names)} columns are wider than the terminal ({console.width}): one block "
        "per row (--format csv or json gives every value uncut)[/]"
    )
    for n, row in enumerate(rows, start=1):
        console.rule(f"row {n}", align="left", style="dim")
        block = Table(show_header=False, box=None, pad_edge=False)
        block.add_column(style="bold", no_wrap=True)
        block.add_column(overflow="fold")
        for name, value in zip(names, row, strict=True):
            add_text_row(block, name, value)
        console.print(block)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    plain = _plain(value)  # a map as {"accuracy": 0.8}, not [('accuracy', 0.8)]
    text = json.dumps(plain, default=json_default) if isinstance(plain, dict | list) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."
