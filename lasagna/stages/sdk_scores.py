"""What an evaluator's return value means: the score dimensions of one row of an sdk trial.

- a number: one dimension named after the evaluator's key;
- a dict: one dimension per key (`{"precision": 0.9, "recall": 0.8}`), values by these rules;
- a bool: 1.0 / 0.0 (a pass/fail check averages into a pass rate);
- None or NaN: no score for that dimension on this trial (left out of the averages, counted
  as missing, not an error: the evaluator abstained);
- anything else (a string, a list, ...): a `ScoreError` recorded on the trial.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any


class ScoreError(TypeError):
    """An evaluator returned something that is not a score."""


def _number(value: Any, name: str, evaluator: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if hasattr(value, "item") and not isinstance(value, Real):  # numpy / torch scalars
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, Real):
        number = float(value)
        return None if math.isnan(number) else number
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    where = f"evaluator {evaluator!r}" + (f" dimension {name!r}" if name != evaluator else "")
    raise ScoreError(
        f"{where} returned {type(value).__name__} {shown}; return a number, a bool, None, "
        "or a dict of those"
    )


def score_dimensions(evaluator: str, value: Any) -> dict[str, float | None]:
    """The dimensions an evaluator's return value gives (None = no score this trial)."""
    if isinstance(value, dict):
        if not value:
            raise ScoreError(f"evaluator {evaluator!r} returned an empty dict")
        out: dict[str, float | None] = {}
        for key, item in value.items():
            if not isinstance(key, str) or not key:
                raise ScoreError(f"evaluator {evaluator!r} returned a dict key {key!r}")
            out[key] = _number(item, key, evaluator)
        return out
    return {evaluator: _number(value, evaluator, evaluator)}


def averages(scores: list[dict[str, float | None]]) -> dict[str, float]:
    """Per dimension, the mean over the trials that have a score (first-seen order)."""
    sums: dict[str, list[float]] = {}
    for trial in scores:
        for name, value in trial.items():
            bucket = sums.setdefault(name, [])
            if value is not None:
                bucket.append(value)
    return {k: (sum(v) / len(v) if v else math.nan) for k, v in sums.items()}


def judge_warnings(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trial's judge flags (lasagna.judges.degenerate) of every LLM judge among its
    evaluators, read from their EVALUATOR spans (LLMJudge.annotate): rows a judge scored
    without judging anything (no claims found), or all scored alike. Each flag names the
    evaluator (`"faith (faithfulness)"`) and the score dimension it concerns (`metrics`)."""
    from lasagna.common.tracing import OUTPUT
    from lasagna.judges.degenerate import DEGENERATE, DEGENERATE_REASON, trial_warnings
    from lasagna.results.evaluation_views import judgement
    from lasagna.results.evaluations import span_score

    rows: dict[str, list[dict[str, Any]]] = {}
    judges: dict[str, str] = {}
    for s in spans:
        attrs = s.get("attributes") or {}
        said = judgement(attrs) if s.get("span_type") == "EVALUATOR" else None
        if said is None:
            continue
        judges[s["name"]] = said["benchmark"]
        rows.setdefault(s["name"], []).append(
            {
                "error": s.get("status") == "ERROR",
                DEGENERATE: said["degenerate"],
                DEGENERATE_REASON: said["degenerate_reason"],
                "score": span_score("EVALUATOR", attrs.get(OUTPUT)),
            }
        )
    out = []
    for name, benchmark in judges.items():
        label = name if name == benchmark else f"{name} ({benchmark})"
        for warning in trial_warnings(rows[name], label, "score"):
            out.append(warning | {"metrics": [name]})
    return out
