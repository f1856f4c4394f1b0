"""What SQL over spans adds: the `lmnr.span.*` names of the span attributes, and a word
when a query names an attribute key that no span has (a condition that matches nothing).

The spans view names every `lasagna.span.*` attribute `lmnr.span.*` as well, so the
evaluation-concepts query (`attributes['lmnr.span.output'] = '0'`) runs as written.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

# the columns of the spans view: attributes with their lmnr.span.* names added
SPAN_ALIASES = (
    "* REPLACE (map_concat(attributes, map_from_entries([{'key': 'lmnr.span.' || "
    "e.key[14:], 'value': e.value} for e in map_entries(attributes) "
    "if starts_with(e.key, 'lasagna.span.')])) AS attributes)"
)


ATTRIBUTE_KEY = re.compile(r"attributes\s*\[\s*'((?:[^']|'')*)'\s*\]")


def unknown_attributes(con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
    """The span attribute keys `query` names (attributes['...']) that no span has."""
    named = list(dict.fromkeys(k.replace("''", "'") for k in ATTRIBUTE_KEY.findall(query)))
    if not named:
        return []
    rows = con.sql("SELECT DISTINCT unnest(map_keys(attributes)) FROM spans").fetchall()
    known = {r[0] for r in rows}
    return [k for k in named if k not in known]
