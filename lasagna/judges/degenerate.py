"""Judgments that cannot mislead: flag the rows and trials whose scores say nothing.

A judge that extracts items first (claims, statements, intentions, facts) and finds none
in a non-empty text scores the row by its empty-case rule (faithfulness 1.0, ...): the
formula is right, but the row was not judged. Such a row is *degenerate*
(`judge_degenerate: true`, `judge_degenerate_reason: "no claims found"`). A trial is
flagged when any of its rows is degenerate (most of them: `most`), and when every judged
row has the same score (`IDENTICAL_MIN_ROWS` or more rows): both are what a judge model too
small for its rubric produces. The flags are plain data stored with the trial
(`extra["judge_warnings"]`) and worded once, by `warning_text`, for the run summary, the
leaderboard, the report and `benchmark calibrate`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

DEGENERATE = "judge_degenerate"
DEGENERATE_REASON = "judge_degenerate_reason"
IDENTICAL_MIN_ROWS = 3  # two rows scoring alike is common; three or more all alike is a sign
ADVICE = "the judge model may be too small; see the Judges guide, Degenerate judgments"


def nothing_found(found: list[Any], source: str | list[str], what: str) -> dict[str, Any]:
    """A row's flag: degenerate when the extraction of `what` ("claims") found nothing in a
    non-empty `source` (a text, or texts)."""
    texts = [source] if isinstance(source, str) else list(source)
    empty = not any(t and t.strip() for t in texts)
    reason = None if found or empty else f"no {what} found"
    return {DEGENERATE: reason is not None, DEGENERATE_REASON: reason}


def merge_flags(*flags: dict[str, Any]) -> dict[str, Any]:
    """Several extraction steps' flags as one (summarization: claims and questions)."""
    reasons = [f[DEGENERATE_REASON] for f in flags if f[DEGENERATE]]
    return {DEGENERATE: bool(reasons), DEGENERATE_REASON: "; ".join(reasons) or None}


def trial_warnings(
    rows: list[dict[str, Any]], benchmark: str, primary: str
) -> list[dict[str, Any]]:
    """The trial-level flags of one judge over its rows (plain dicts with the judge's
    unprefixed column names: error, judge_degenerate, ..., its primary score)."""
    judged = [r for r in rows if not r.get("error") and r.get(primary) is not None]
    out: list[dict[str, Any]] = []
    degenerate = [r for r in judged if r.get(DEGENERATE)]
    if degenerate:
        reasons = Counter(str(r.get(DEGENERATE_REASON) or "nothing found") for r in degenerate)
        out.append(
            {
                "judge": benchmark,
                "kind": "degenerate",
                "rows": len(degenerate),
                "of": len(judged),
                "most": 2 * len(degenerate) > len(judged),
                "reasons": dict(reasons.most_common()),
            }
        )
    scores = {float(r[primary]) for r in judged}
    if len(judged) >= IDENTICAL_MIN_ROWS and len(scores) == 1:
        out.append(
            {"judge": benchmark, "kind": "identical", "rows": len(judged), "value": scores.pop()}
        )
    return out


def warning_text(warning: dict[str, Any]) -> str:
    """One line a person reads: "faithfulness: 6 of 6 rows: no claims found — the judge
    model may be too small; see ..."."""
    judge = warning.get("judge", "judge")
    if warning.get("kind") == "identical":
        return (
            f"{judge}: all {warning['rows']} rows scored {warning['value']:g}; identical "
            f"scores do not tell the rows apart — {ADVICE}"
        )
    reasons = warning.get("reasons") or {}
    if len(reasons) == 1:
        said = next(iter(reasons))
    else:
        said = ", ".join(f"{reason} ({n})" for reason, n in reasons.items())
    return f"{judge}: {warning['rows']} of {warning['of']} rows: {said} — {ADVICE}"


def labelled(label: str, warning: dict[str, Any]) -> str:
    """`warning_text` under a system's label, said once where the label is the judge's
    name ("faithfulness: 3 of 3 rows", not "faithfulness: faithfulness: ...")."""
    text = warning_text(warning)
    return text if text.startswith(f"{label}: ") else f"{label}: {text}"


def flagged(trials: Iterable[tuple[str, Any]], metrics: Iterable[str] | None = None) -> list[str]:
    """The warning lines, each once, of these (label, trial) pairs: every flag, or those
    that concern one of `metrics` (see `about_metric`), as a comparison of them prints."""
    wanted = None if metrics is None else list(metrics)
    lines = [
        labelled(label, w)
        for label, t in trials
        for w in warnings_of(t.extra)
        if wanted is None or any(about_metric([w], m, t.track) for m in wanted)
    ]
    return list(dict.fromkeys(lines))


def warnings_of(extra: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The flags a trial stored (none for trials of other tracks or older runs)."""
    return list((extra or {}).get("judge_warnings") or [])


def about_metric(warnings: list[dict[str, Any]], metric: str, track: str) -> list[dict[str, Any]]:
    """The flags that concern `metric`: every flag of a judge trial; those that name their
    metrics (an evaluate() judge's score dimension) when it is one of them; in judged
    generation those of the judge whose columns the metric is (`faithfulness_score`)."""
    if track == "judge":
        return list(warnings)
    return [w for w in warnings if _concerns(w, metric)]


def _concerns(warning: dict[str, Any], metric: str) -> bool:
    if "metrics" in warning:
        return metric in warning["metrics"]
    judge = str(warning.get("judge", "")).replace("-", "_").replace(":", "_")
    return metric.startswith(judge + "_")


def mark(warnings: list[dict[str, Any]]) -> str:
    """What a table shows next to a flagged score: " ⚠ 6/6 degenerate", " ⚠ identical",
    " ⚠ 1/4 degenerate, identical" (every row degenerate implies identical: not said)."""
    count = degenerate_count(warnings)
    identical = any(w.get("kind") == "identical" for w in warnings)
    if count:
        also = ", identical" if identical and count[0] < count[1] else ""
        return f" ⚠ {count[0]}/{count[1]} degenerate{also}"
    return " ⚠ identical" if warnings else ""


def degenerate_count(warnings: list[dict[str, Any]]) -> tuple[int, int] | None:
    """(degenerate rows, judged rows) over the judges of a trial, or None when none is."""
    found = [w for w in warnings if w.get("kind") == "degenerate"]
    if not found:
        return None
    return sum(w["rows"] for w in found), sum(w["of"] for w in found)
