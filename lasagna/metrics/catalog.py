"""The metric catalog: every metric lasagna reports, with how to sort and show it.

Summaries, `results show`, leaderboards and compare read it instead of keeping their own
lists. Registering a metric is one call (a judge benchmark adds its own next to its formula):

    register("hallucination", "judge", lower_is_better=True,
             description="share of the answer's claims that contradict the contexts")

`level` says where a metric appears: "main" everywhere (show, leaderboards), "summary" also
in the table printed after a run, "detail" only in the result files and SQL. The first
metric of a track registered with `primary=True` is what its leaderboard ranks by.
A metric the catalog does not know (read from an older or newer run) sorts higher-is-better
and prints with 4 decimals.

A metric may carry `compute(rows, benchmark) -> float | None`: the engine then adds it to
every trial of its track (a plugin's metric, lasagna.common.plugins). The catalog also holds
one entry per track (`register_track`, from the track registry): the report's order of
tracks (registration order) and the row export formats of its trials.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from lasagna.common import plugins
from lasagna.metrics.judge_catalog import LABELLED

Level = Literal["main", "summary", "detail"]
_LEVELS: dict[str, int] = {"main": 0, "summary": 1, "detail": 2}


@dataclass(frozen=True)
class Metric:
    name: str
    track: str
    description: str
    lower_is_better: bool = False
    format: str = ".4f"  # a format spec for the value
    level: Level = "detail"
    primary: bool = False
    # (a trial's rows table, its benchmark) -> the value; None: the track computes it
    compute: Callable[[Any, Any], float | None] | None = field(default=None, compare=False)

    @property
    def direction(self) -> str:
        return "lower" if self.lower_is_better else "higher"

    def show(self, value: float | None) -> str:
        """The value as tables print it; "-" for a missing or NaN value."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        return format(value, self.format)


@dataclass(frozen=True)
class TrackEntry:
    """What the readers of results know of a track without importing it."""

    name: str
    description: str = ""
    exports: tuple[str, ...] = ()  # row export formats of its trials ("trec": rankings)
    # the row columns its stages write: (name, Arrow type, stage, meaning)
    columns: tuple[tuple[str, str, str, str], ...] = ()


_CATALOG: dict[str, Metric] = {}
_TRACKS: dict[str, TrackEntry] = {}


def register(
    name: str,
    track: str,
    description: str,
    *,
    lower_is_better: bool = False,
    format: str = ".4f",
    level: Level = "detail",
    primary: bool = False,
    compute: Callable[[Any, Any], float | None] | None = None,
) -> Metric:
    """Add a metric (or replace the one of that name and track, for reloads) and return it;
    PluginError for a bad level or format, or a name another track's metric has."""
    if not name or level not in _LEVELS:
        raise plugins.PluginError(f"metric {name!r}: level must be one of {', '.join(_LEVELS)}")
    try:
        f"{0.5:{format}}"  # noqa: B018 (a spec float values cannot take raises here)
        format_ok = True
    except (ValueError, TypeError):
        format_ok = False
    if not format_ok:
        raise plugins.PluginError(f"metric '{name}': {format!r} is not a format spec (e.g. .4f)")
    if compute is not None and not callable(compute):
        raise plugins.PluginError(f"metric '{name}': compute must be a function (rows, benchmark)")
    before = _CATALOG.get(name)
    if before is not None and before.track != track:
        raise plugins.PluginError(
            f"metric '{name}' is the {before.track} track's already: give it another name"
        )
    metric = Metric(name, track, description, lower_is_better, format, level, primary, compute)
    _CATALOG[name] = metric

    def undo() -> None:
        if before is None:
            _CATALOG.pop(name, None)
        else:
            _CATALOG[name] = before

    plugins.registered(f"metric {name}", undo)
    return metric


def register_track(
    name: str,
    description: str = "",
    exports: tuple[str, ...] = (),
    columns: tuple[tuple[str, str, str, str], ...] = (),
) -> None:
    """The catalog's entry of a track (the track registry adds one per track it registers)."""
    _TRACKS[name] = TrackEntry(name, description, tuple(exports), tuple(columns))
    plugins.registered(f"catalog track {name}", lambda: _TRACKS.pop(name, None), listed=False)


def track_entry(name: str) -> TrackEntry | None:
    return plugins.lookup(lambda: _TRACKS.get(name))


def track_rank(name: str) -> int:
    """Where a track's groups come in a report: registration order; unknown tracks last."""
    if track_entry(name) is None:
        return len(_TRACKS)
    return list(_TRACKS).index(name)


def exports_of(track: str) -> tuple[str, ...]:
    """The row export formats of a track's trials (e.g. ("trec",)); () if unknown."""
    entry = track_entry(track)
    return entry.exports if entry is not None else ()


def track_entries() -> list[TrackEntry]:
    """Every track's entry, plugins' included, in registration order."""
    plugins.load()
    return list(_TRACKS.values())


def computed(track: str) -> list[Metric]:
    """The metrics of `track` the catalog computes itself (a plugin's `compute`)."""
    plugins.load()
    return [m for m in _CATALOG.values() if m.track == track and m.compute is not None]


def unregister(name: str) -> None:
    """Remove a metric (tests that register a temporary one)."""
    _CATALOG.pop(name, None)


def get(name: str) -> Metric | None:
    return plugins.lookup(lambda: _CATALOG.get(name))


def known(name: str) -> Metric | None:
    """The catalog entry of `name`, or of a judged-generation column: a judge's metric under
    its benchmark's prefix (`faithfulness_claims_count`: `claims_count` of faithfulness), or
    under a labelled one (`g_eval_polite_score`: `g_eval_score`, criterion "polite")."""
    entry = get(name)
    if entry is not None:
        return entry
    for judge in [m for m in _CATALOG.values() if m.track == "judge" and m.primary]:
        prefix = judge.name.removesuffix("score")  # faithfulness_score -> faithfulness_
        if not name.startswith(prefix):
            continue
        base = get(name[len(prefix) :])
        if base is not None and base.track == "judge" and not base.primary:
            description = f"{prefix[:-1]}: {base.description}"
            return replace(base, name=name, description=description)
        rest = name[len(prefix) :]  # a labelled judge's column: g_eval_<label>_rubric_score
        for cut in [i for i, ch in enumerate(rest) if ch == "_" and prefix in LABELLED]:
            base = get(prefix + rest[cut + 1 :])
            if base is not None and base.track == "judge":
                description = f"{base.description} ({rest[:cut]})"
                return replace(base, name=name, description=description)
    return None


def metric_of(name: str, track: str = "") -> Metric:
    """The catalog entry, or the default an unknown metric is treated with."""
    return known(name) or Metric(name, track, "")


def metrics_of(track: str, level: Level = "detail") -> list[Metric]:
    """The track's metrics shown at `level` or above, in registration order."""
    plugins.lookup(lambda: next((m for m in _CATALOG.values() if m.track == track), None))
    top = _LEVELS[level]
    return [m for m in _CATALOG.values() if m.track == track and _LEVELS[m.level] <= top]


def main_metrics(track: str) -> list[str]:
    return [m.name for m in metrics_of(track, "main")]


def judge_scores(names: Iterable[str]) -> list[str]:
    """The judges' main scores among `names` (a judged generation trial's metrics): the
    catalog's, then labelled ones (`g_eval_polite_score`), in the order given."""
    have, mains = list(dict.fromkeys(names)), main_metrics("judge")
    entries = {n: known(n) for n in have if n not in mains}
    labelled = [n for n, e in entries.items() if e and e.track == "judge" and e.level == "main"]
    return [m for m in mains if m in have] + labelled


def summary_metrics(track: str) -> list[str]:
    return [m.name for m in metrics_of(track, "summary")]


def primary_metrics(track: str) -> list[str]:
    """What a leaderboard of `track` may rank by, best choice first: primaries, then mains."""
    mains = metrics_of(track, "main")
    return [m.name for m in mains if m.primary] + [m.name for m in mains if not m.primary]


def sort_key(name: str, value: float) -> float:
    """A key that sorts values of `name` best first."""
    return value if metric_of(name).lower_is_better else -value


def best_index(name: str, values: list[float | None]) -> int | None:
    """The position of the best of `values` of metric `name` (None when all are missing)."""
    present = [(sort_key(name, v), i) for i, v in enumerate(values) if v is not None and v == v]
    return min(present)[1] if present else None


def show(name: str, value: float | None) -> str:
    return metric_of(name).show(value)


def _register_builtins() -> None:
    from lasagna.metrics.retrieval_names import DEFAULT_KS, MEASURES

    words = {
        "ndcg": "nDCG (graded gains, trec_eval ndcg_cut)",
        "recall": "share of the relevant documents retrieved",
        "p": "precision: relevant share of the top k",
        "map": "mean average precision (trec_eval map_cut)",
        "mrr": "reciprocal rank of the first relevant document",
        "success": "1 when any relevant document is retrieved",
    }
    shown = {"ndcg@10": "main", "recall@10": "main", "recall@100": "main", "mrr@10": "main"}
    shown |= {"map@10": "summary", "p@10": "summary"}
    for name in ("ndcg@10", "recall@10", "recall@100", "mrr@10", "map@10", "p@10"):
        measure, k = name.split("@")
        register(
            name,
            "retrieval",
            f"{words[measure]} @ {k}",
            level=shown[name],  # type: ignore[arg-type]
            primary=name == "ndcg@10",
        )
    for measure in MEASURES:
        for k in DEFAULT_KS:
            if f"{measure}@{k}" not in _CATALOG:
                register(f"{measure}@{k}", "retrieval", f"{words[measure]} @ {k}")

    qa = "SQuAD v2 rules; an abstention is the empty answer"
    register("em", "generation", f"exact match, {qa}", level="main")
    register("f1", "generation", f"token F1, {qa}", level="main", primary=True)
    register("has_ans_f1", "generation", "token F1 over answerable rows", level="main")
    register("no_ans_em", "generation", "exact match over unanswerable rows", level="main")
    register("has_ans_em", "generation", "exact match over answerable rows")
    read = "the passages a RAG generator read"
    register(
        "passage_recall",
        "generation",
        f"share of the question's relevant documents among {read}",
        level="main",
    )
    register("passage_hit", "generation", f"1 when any of {read} is relevant")
    register("no_ans_f1", "generation", "token F1 over unanswerable rows")
    register(
        "tokens_per_s",
        "generation",
        "completion tokens per second the engine was busy",
        format=".1f",
    )
    register(
        "pipeline_tokens_per_s",
        "generation",
        "completion tokens per second from the first batch's start to the last one's end",
        format=".1f",
    )

    from lasagna.metrics.judge_catalog import register_judge_metrics

    register_judge_metrics(register)


_register_builtins()
