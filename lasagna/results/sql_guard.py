"""`results sql` only reads: each statement of a query is checked before any runs.

A statement's kind (duckdb's parser) must be a read: SELECT (which DESCRIBE, SHOW,
SUMMARIZE, VALUES and FROM-first queries parse as), EXPLAIN, or MULTI (a PIVOT whose
columns come from the data parses as one). The kind alone is not enough: a CTE body may be
a COPY TO or an INSERT/UPDATE/DELETE (`WITH t AS (COPY ... TO 'f') SELECT 1` is a SELECT
that writes a file) and EXPLAIN ANALYZE runs what it explains, so a query naming any of
these keywords outside quotes and comments is refused too (a column named so is quoted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lasagna.errors import Problem, UserError

if TYPE_CHECKING:
    import duckdb

READING = {"SELECT", "EXPLAIN", "MULTI"}  # MULTI: a PIVOT over values read from the data
WRITING_KEYWORDS = {"COPY", "INSERT", "UPDATE", "DELETE", "MERGE"}  # what a CTE body may be
FIX = "results sql only reads; to save a result use --format csv > FILE (or --format json)"


def _refused(what: str, fix: str = FIX) -> UserError:
    return UserError(Problem(f"results sql only reads: the query {what}", field="query", fix=fix))


def check_read_only(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Refuse (UserError) a query with a statement that could write or change anything:
    files (COPY, EXPORT), databases (ATTACH, CREATE, INSERT), settings or extensions (SET,
    INSTALL, LOAD). A syntax error is duckdb's (duckdb.Error), as when it runs."""
    import duckdb

    statements = con.extract_statements(query)
    for n, statement in enumerate(statements, 1):
        kind = statement.type.name
        if kind not in READING:
            where = f" (statement {n})" if len(statements) > 1 else ""
            article = "an" if kind[0] in "AEIOU" else "a"
            raise _refused(f"has {article} {kind.replace('_', ' ')} statement{where}")
    tokens = duckdb.tokenize(query)
    ends = [start for start, _kind in tokens[1:]] + [len(query)]
    for (start, kind), end in zip(tokens, ends, strict=True):
        word = query[start:end].strip().upper()
        if kind == duckdb.token_type.keyword and word in WRITING_KEYWORDS:
            raise _refused(
                f"has {word} inside it (a statement within a query that writes)",
                f'{FIX}; a column named {word.lower()} is quoted: "{word.lower()}"',
            )
