"""What a finished trial is, on disk and in memory: `TrialMeta` (JSON-able) + named tables.

The same shape is stored twice: as a resume checkpoint (`.trials/<key>/`) and inside a run
folder (`manifest.json` entry + `trials/<key>.parquet`). The blocks, columns and tables are
declared in `lasagna.results.schema`; `SCHEMA_VERSION` is written into both, and readers
refuse a newer one instead of misreading it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where rows are touched, so reading manifests stays fast
    import pyarrow as pa

from lasagna.common.digest import json_sha256, text_sha256
from lasagna.results.schema import (  # noqa: F401 (BENCHMARK_KEYS, SCHEMA_VERSION re-exported)
    BENCHMARK_KEYS,
    SCHEMA_VERSION,
    BenchmarkBlock,
    SystemBlock,
)

TrackName = str  # a registered track (lasagna.tracks): "retrieval", "generation", ...
MDV = "metric_definitions_version"

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def system_id(config: dict[str, Any]) -> str:
    """Identify a system by its resolved config, not its display name (names may collide)."""
    return json_sha256(config)[:12]


def safe_name(key: str) -> str:
    """A file-system-safe name for a trial key: the key itself when safe, else its hash."""
    if _SAFE.match(key):
        return key
    return "k-" + text_sha256(key)[:32]


@dataclass(kw_only=True)
class TrialMeta:
    """Everything about one trial except its per-question rows (what a manifest lists)."""

    key: str  # the trial key (computed by lasagna.sweep, one function)
    comparability_key: str
    track: TrackName
    system: str  # display name
    config: dict[str, Any]  # resolved system config (model_dump(mode="json"))
    benchmark: BenchmarkBlock  # a dict is accepted and converted
    seed: int = 0
    repeat: int = 0
    metrics: dict[str, float] = field(default_factory=dict)  # aggregate
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    counts: dict[str, int] = field(default_factory=dict)  # rows, failed, ...
    started_at: str = ""  # ISO 8601
    finished_at: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # small extras
    metric_definitions_version: str = ""  # lasagna.metrics.METRIC_DEFINITIONS_VERSION

    def __post_init__(self) -> None:
        self.benchmark = BenchmarkBlock.of(self.benchmark)
        if not self.metric_definitions_version and MDV in self.extra:  # schema 1
            self.extra = dict(self.extra)
            self.metric_definitions_version = str(self.extra.pop(MDV))

    @property
    def system_id(self) -> str:
        return system_id(self.config)

    @property
    def system_block(self) -> SystemBlock:
        return SystemBlock(self.system, self.system_id, self.config.get("kind"), self.config)

    @property
    def file_name(self) -> str:
        return safe_name(self.key)

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(TrialMeta)}
        out["benchmark"] = self.benchmark.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrialMeta:
        names = {f.name for f in fields(TrialMeta)}
        return TrialMeta(**{k: v for k, v in data.items() if k in names})


@dataclass(kw_only=True)
class TrialResult(TrialMeta):
    """A finished trial: its metadata, one row per question, and its other named tables.

    `rows` has at least an "id" string column; each stage adds its columns (see
    `lasagna.results.schema.columns()`: retrieval "doc_ids", "scores"; generation
    "prediction", ...) and scoring one column per per-question metric, named as in
    `metrics`. `tables` holds the trial's other tables by name ("spans", "verdicts").
    """

    rows: pa.Table
    tables: dict[str, pa.Table] = field(default_factory=dict)

    @property
    def meta(self) -> TrialMeta:
        return TrialMeta.from_json(self.to_json())

    def all_tables(self) -> dict[str, pa.Table]:
        """Every table of the trial by name, "rows" first."""
        return {"rows": self.rows, **self.tables}

    @classmethod
    def of(
        cls, meta: TrialMeta, rows: pa.Table, tables: dict[str, pa.Table] | None = None
    ) -> TrialResult:
        return cls(**meta.to_json(), rows=rows, tables=dict(tables or {}))


def per_question_metrics(meta: TrialMeta, rows_schema: pa.Schema) -> list[str]:
    """The aggregate metrics that also have a numeric per-question column (for paired tests)."""
    import pyarrow as pa

    out = []
    for name in meta.metrics:
        if name in rows_schema.names:
            typ = rows_schema.field(name).type
            if pa.types.is_floating(typ) or pa.types.is_integer(typ) or pa.types.is_boolean(typ):
                out.append(name)
    return out


def trials_by_system(trials: Iterable[TrialMeta]) -> dict[str, list[TrialMeta]]:
    """system id -> its trials (repeats, runs), in the order first seen."""
    out: dict[str, list[TrialMeta]] = {}
    for t in trials:
        out.setdefault(t.system_id, []).append(t)
    return out


def matching_trials(trials: Iterable[TrialMeta], ref: str) -> list[TrialMeta]:
    """The trials `ref` names: its exact key, else the keys starting with it (the progress
    lines print a key's first 8 characters), else a system's name."""
    trials = list(trials)
    exact = [t for t in trials if t.key == ref]
    return (
        exact
        or [t for t in trials if ref and t.key.startswith(ref)]
        or [t for t in trials if t.system == ref]
    )


def failed_rows(counts: dict[str, Any]) -> int:
    """A trial's rows that failed, from its counts: `failed` (benchmark tracks), or `errors`
    (an evaluation's rows whose executor or an evaluator raised)."""
    return int(counts.get("failed", counts.get("errors", 0)) or 0)
