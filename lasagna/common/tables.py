"""Table rows whose text is shown as written.

rich reads `[...]` in a str cell as markup: a system named `rag[v2]` printed as `rag`, and
two systems `rag[v1]` and `rag[v2]` as two `rag` rows. Every table of names, labels,
paths or values from the user's files adds its rows through `add_text_row`.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text


def add_text_row(table: Table, *cells: Any, **kwargs: Any) -> None:
    """`table.add_row` with each str cell as plain text (other renderables as they are)."""
    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells), **kwargs)
