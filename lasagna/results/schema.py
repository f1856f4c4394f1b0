"""The typed result schema: what a trial stores, block by block and column by column.

- `BenchmarkBlock`: which data a trial ran on (name, revision, selection, provenance).
- `SystemBlock`: which system (display name, config hash, kind, resolved config).
- `metric_definitions_version`: a field of every trial (it was an `extra` in schema 1).
- tables: a trial is a set of named tables: "rows" (one per question) now; "spans" (SDK
  traces) and "verdicts" (judge calls) next. `TABLES` lists the names a reader knows.
- `columns()`: every row column a registered track's stages write, with its Arrow type and
  stage (each track declares its own: lasagna.tracks `Track.columns`).

Schema history: 1 = rows only, metric_definitions_version in `extra`; 2 = the above. A
reader opens both (a schema-1 trial reads as schema 2) and refuses a newer one by name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)
TABLES = ("rows", "spans", "verdicts")  # the named tables of a trial; "rows" always exists


@dataclass(frozen=True)
class BenchmarkBlock(Mapping[str, Any]):
    """The data a trial ran on; reads like the dict it is stored as (`block["name"]`)."""

    name: str | None = None
    revision: str | None = None  # full sha256 of the data
    source: str | None = None  # the path the user gave
    format: str | None = None
    split: str | None = None
    n_samples: int | None = None
    filters: dict[str, Any] | None = None
    sample_seed: int | None = None
    corpus_provenance: str | None = None  # "corpus" | "pooled_gold" | None
    more: dict[str, Any] = field(default_factory=dict)  # keys a newer track adds

    @classmethod
    def of(cls, value: Mapping[str, Any] | BenchmarkBlock) -> BenchmarkBlock:
        if isinstance(value, BenchmarkBlock):
            return value
        known = {f.name for f in fields(cls)} - {"more"}
        return cls(
            **{k: v for k, v in value.items() if k in known},
            more={k: v for k, v in value.items() if k not in known},
        )

    def to_json(self) -> dict[str, Any]:
        return dict(self)

    def __getitem__(self, key: str) -> Any:
        if key in BENCHMARK_KEYS:
            return getattr(self, key)
        return self.more[key]

    def __iter__(self) -> Iterator[str]:
        yield from BENCHMARK_KEYS
        yield from self.more

    def __len__(self) -> int:
        return len(BENCHMARK_KEYS) + len(self.more)


BENCHMARK_KEYS = tuple(f.name for f in fields(BenchmarkBlock) if f.name != "more")


@dataclass(frozen=True)
class SystemBlock:
    """The system a trial ran: its display name, config hash (`id`), kind and config."""

    name: str
    id: str
    kind: str | None
    config: dict[str, Any]


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # Arrow type, as pyarrow spells it
    stage: str  # the stage that writes it ("input" = the track's input columns)
    description: str


def columns() -> dict[str, Column]:
    """Every row column the registered tracks declare (`Track.columns`, held by the metric
    catalog's track entries), by name; the first track declaring a name wins."""
    from lasagna.metrics.catalog import track_entries

    out: dict[str, Column] = {}
    for entry in track_entries():
        for name, typ, stage, text in entry.columns:
            out.setdefault(name, Column(name, typ, stage, text))
    return out


def columns_of(stage: str) -> tuple[str, ...]:
    """The row columns a stage writes, in declaration order."""
    return tuple(c.name for c in columns().values() if c.stage == stage)


def check_rows(table: Any) -> list[str]:
    """Columns whose Arrow type differs from the schema (a bug in a stage); [] when fine.
    Columns the schema does not list (metrics, a newer track's) are not checked."""
    known = columns()
    return [
        f"{f.name}: {f.type} (schema: {known[f.name].type})"
        for f in table.schema
        if f.name in known and _spelling(f.type) != known[f.name].type and table.num_rows
    ]


def _spelling(arrow_type: Any) -> str:
    """An Arrow type as the schema spells it: a list's item field may be named "element"
    (Parquet) or "item" (pyarrow); the name is not part of the type."""
    return str(arrow_type).replace("<element: ", "<item: ")
