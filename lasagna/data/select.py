"""`select_rows`: metadata filters, then a deterministic seeded sample of rows.

The sample ranks rows by sha256(f"{seed}:{row id}") and keeps the n lowest, so the same
seed and data pick the same rows on any machine and numpy version, and adding a row to the
file does not reshuffle the others. Kept rows stay in file order.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from typing import Any

from lasagna.data.capabilities import capabilities_of
from lasagna.data.model import Benchmark, Row
from lasagna.errors import Problem, UserError


def select_rows(
    benchmark: Benchmark,
    *,
    filters: dict[str, Any] | None = None,
    n_samples: int | None = None,
    seed: int = 0,
) -> Benchmark:
    """A new Benchmark of the filtered, sampled rows; qrels follow, the corpus stays whole."""
    rows = benchmark.rows
    if filters:
        rows = filter_rows(rows, filters, benchmark.source)
    if n_samples is not None:
        if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
            raise UserError(
                Problem(
                    f"n_samples must be a positive whole number, got {n_samples!r}",
                    file=benchmark.source,
                    field="n_samples",
                    fix="write n_samples: 50 (or leave it out to use every row)",
                )
            )
        rows = sample_rows(rows, n_samples, seed)
    if not rows and not benchmark.rows:  # a BEIR split whose qrels judge no query
        raise UserError(
            Problem(
                f"{benchmark.name} has no row to evaluate"
                + (f" in split {benchmark.split}" if benchmark.split else ""),
                file=benchmark.source,
                field="split" if benchmark.split else "path",
                fix="judge some queries in the split's qrels file (score > 0), or name "
                "another split",
            )
        )
    if not rows:
        raise UserError(
            Problem(
                f"the filters {filters} keep no row of {benchmark.name}",
                file=benchmark.source,
                field="filters",
                fix="loosen the filters (values must equal the rows' metadata values)",
            )
        )
    kept = {r.id for r in rows}
    qrels = {q: docs for q, docs in benchmark.qrels.items() if q in kept}
    caps = capabilities_of(benchmark.format, rows, qrels, benchmark.corpus_source is not None)
    if benchmark.format != "beir" and caps.corpus_provenance is None and benchmark.corpus:
        caps = replace(caps, corpus_provenance="pooled_gold")
    return replace(benchmark, rows=list(rows), qrels=qrels, capabilities=caps)


_ABSENT = object()
NONE = "(none)"  # how a row without a metadata key is grouped (`--by`, validate-data)


_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_BOOLS = {"true": True, "false": False}


def scalar_of(text: str) -> object:
    """A filter value (or a CSV metadata cell) read as a YAML 1.2 scalar (the core schema,
    as JSON reads one): `2020` an int, `1.5` a float, `true` / `false` a bool, `null` None;
    anything else stays the string typed: a date, and `yes`, `no`, `on`, `off` (YAML 1.1
    made those booleans, so `--filter human=yes` never matched the label "yes")."""
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text.lower() in _BOOLS and text in (text.lower(), text.title(), text.upper()):
        return _BOOLS[text.lower()]
    if text in ("null", "Null", "NULL", "~"):
        return None
    return text


def metadata_value(metadata: dict[str, Any], key: str, default: Any = None) -> Any:
    """metadata[key], or the nested value a dotted key names (`source.site`) when the
    metadata has no key of that name itself; `default` when neither is there. Filters,
    slices (`--by`) and calibration labels read a row's metadata through it."""
    if key in metadata:
        return metadata[key]
    value: Any = metadata
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return default
        value = value[part]
    return value


def values_of(value: Any) -> list[str]:
    """The groups a metadata value puts its row in: a list value in each of its items',
    a missing one in NONE; numbers and booleans spelled as in JSON (`2`, `true`)."""
    if value is None or value == []:
        return [NONE]
    if isinstance(value, list):
        return list(dict.fromkeys(_spelled(v) for v in value))
    return [_spelled(value)]


def _spelled(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def filter_rows(rows: list[Row], filters: dict[str, Any], source: str) -> list[Row]:
    """Keep rows whose metadata[key] equals the value (or one of a list of values); a
    dotted key reads nested objects."""

    def has(row: Row, key: str) -> bool:
        return metadata_value(row.metadata, key, _ABSENT) is not _ABSENT

    unknown = [k for k in filters if not any(has(r, k) for r in rows)]
    if unknown:
        known = sorted({k for r in rows for k in r.metadata})
        raise UserError(
            [
                Problem(
                    f"no row has metadata key '{key}'",
                    file=source,
                    field=f"filters.{key}",
                    fix=f"filter on one of: {', '.join(known)}"
                    if known
                    else "these rows have no metadata to filter on; remove filters",
                )
                for key in unknown
            ]
        )

    def accepts(row: Row) -> bool:
        for key, wanted in filters.items():
            values = wanted if isinstance(wanted, list) else [wanted]
            value = metadata_value(row.metadata, key, _ABSENT)
            if value is _ABSENT or value not in values:
                return False
        return True

    return [r for r in rows if accepts(r)]


def sample_rows(rows: list[Row], n: int, seed: int) -> list[Row]:
    """The n rows with the lowest sha256(seed:id), in their original order."""
    if n >= len(rows):
        return list(rows)
    ranked = sorted(range(len(rows)), key=lambda i: _rank(seed, rows[i].id))
    return [rows[i] for i in sorted(ranked[:n])]


def _rank(seed: int, row_id: str) -> bytes:
    return hashlib.sha256(f"{seed}:{row_id}".encode()).digest()
