"""`benchmark calibrate`: how well a judge agrees with human labels on the same rows.

Binary labels (`--positive VALUE`, or yes/no, true/false, 1/0): the human says positive when
the label equals VALUE; the judge says positive when it flags the row (hallucination:
`hallucination_detected`; every other benchmark: `passed`, score >= threshold). Reported:
accuracy, balanced accuracy, Cohen's kappa, the confusion matrix. Graded labels (numbers):
Spearman and Kendall tau-b between the label and the judge's score. Every statistic comes
with a seeded 95% percentile bootstrap interval. Rows the judge could not score are left
out and counted; degenerate judgments (lasagna.judges.degenerate: nothing extracted, every
score the same) are reported with the figures, since agreement on them means little.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.judges.degenerate import trial_warnings, warning_text
from lasagna.judges.registry import get_benchmark
from lasagna.metrics import agreement

BOOTSTRAP_RESAMPLES = 1000
_TRUE = ("yes", "true", "1", "y", "t")
_FALSE = ("no", "false", "0", "n", "f")


@dataclass
class Agreement:
    benchmark: str
    label_column: str
    kind: str  # "binary" | "graded"
    rows: int  # rows with both a label and a judge score
    unscored: int  # rows the judge could not score (errors)
    positive: str | None = None
    statistics: dict[str, dict[str, float]] = field(
        default_factory=dict
    )  # name -> value, low, high
    confusion: dict[str, Any] | None = None
    degenerate_rows: int = 0  # scored rows whose extraction found nothing
    warnings: list[str] = field(default_factory=list)  # degenerate-judgment flags, worded

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def judge_flag(benchmark: str, row: dict[str, Any]) -> bool | None:
    """The judge's binary verdict for a row: what --positive is compared with."""
    key = "hallucination_detected" if benchmark == "hallucination" else "passed"
    value = row.get(key)
    return None if value is None else bool(value)


def human_positive(label: Any, positive: str | None) -> bool:
    text = str(label).strip().lower()
    if positive is not None:
        return text == positive.strip().lower()
    return text in _TRUE


def label_kind(labels: list[Any], positive: str | None) -> str:
    """binary with --positive or yes/no-like labels; graded when every label is a number."""
    if positive is not None:
        return "binary"
    texts = {str(v).strip().lower() for v in labels}
    if texts <= set(_TRUE + _FALSE):
        return "binary"
    try:
        [float(v) for v in labels]
    except (TypeError, ValueError):
        raise UserError(
            Problem(
                f"the labels are neither yes/no nor numbers (e.g. {sorted(texts)[:3]})",
                field="--label-column",
                fix="name the label value that means positive with --positive VALUE",
            )
        ) from None
    return "graded"


def agreement_of(
    benchmark: str,
    label_column: str,
    labels: dict[str, Any],
    judged: list[dict[str, Any]],
    positive: str | None = None,
    seed: int = 0,
) -> Agreement:
    """Pure: human labels by row id + the judge's result rows -> the agreement figures."""
    module = get_benchmark(benchmark)
    scored = [r for r in judged if not r.get("error") and r.get(module.PRIMARY) is not None]
    scored = [r for r in scored if r["id"] in labels]
    if not scored:
        raise UserError(
            Problem(
                "no row has both a label and a judge score",
                field="--label-column",
                fix="check the run and the label column",
            )
        )
    kind = label_kind([labels[r["id"]] for r in scored], positive)
    out = Agreement(module.ID, label_column, kind, len(scored), len(judged) - len(scored), positive)
    flags = trial_warnings(scored, module.ID, module.PRIMARY)
    out.degenerate_rows = sum(w["rows"] for w in flags if w["kind"] == "degenerate")
    out.warnings = [warning_text(w) for w in flags]
    if kind == "binary":
        truth = [human_positive(labels[r["id"]], positive) for r in scored]
        pred = [bool(judge_flag(module.ID, r)) for r in scored]
        for name, fn in (
            ("accuracy", agreement.accuracy),
            ("balanced_accuracy", agreement.balanced_accuracy),
            ("cohen_kappa", agreement.cohen_kappa),
        ):
            out.statistics[name] = _with_ci(fn, truth, pred, seed)
        classes, counts = agreement.confusion_matrix(truth, pred, classes=[True, False])
        out.confusion = {
            "rows": "human",
            "columns": "judge",
            "classes": ["positive", "negative"],
            "counts": counts,
        }
    else:
        truth_f = [float(labels[r["id"]]) for r in scored]
        score = [float(r[module.PRIMARY]) for r in scored]
        for name, fn in (
            ("spearman", agreement.spearman),
            ("kendall_tau_b", agreement.kendall_tau_b),
        ):
            out.statistics[name] = _with_ci(fn, truth_f, score, seed)
    identical = any(w["kind"] == "identical" for w in flags)  # said already
    if kind == "binary":
        out.warnings += _constant(truth, [] if identical else pred, "verdict", "kappa is 0")
    else:
        why = "the rank correlations are undefined (nan)"
        out.warnings += _constant(truth_f, [] if identical else score, "score", why)
        if identical:
            out.warnings.append(f"so {why}")
    return out


def _constant(truth: list, judged: list, what: str, why: str) -> list[str]:
    """Why a statistic says nothing (a rank correlation is nan, kappa 0 or 1): one side
    gave every row the same value. `judged`: [] when its warning is said already."""
    out = []
    if len(set(judged)) == 1:
        out.append(f"the judge gave every row the same {what} ({judged[0]}), so {why}")
    if len(set(truth)) == 1:
        out.append(
            f"every row has the same human label ({truth[0]}): agreement beyond chance "
            "cannot be measured; calibrate on rows with more than one label"
        )
    return out


def _with_ci(fn, truth: list, pred: list, seed: int) -> dict[str, float]:
    value = fn(truth, pred)
    low, high = agreement.bootstrap_ci(fn, truth, pred, n_resamples=BOOTSTRAP_RESAMPLES, seed=seed)
    return {"value": value, "low": low, "high": high}


def render_agreement(result: Agreement, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    title = (
        f"{result.benchmark} vs human '{result.label_column}' ({result.kind}, "
        f"{result.rows} rows" + (f", {result.unscored} unscored" if result.unscored else "") + ")"
    )
    table = Table(title=title, title_justify="left")
    for head in ("statistic", "value", "95% CI (bootstrap)"):
        table.add_column(head, justify="left" if head == "statistic" else "right")
    for name, s in result.statistics.items():
        ci = "-" if math.isnan(s["low"]) else f"[{s['low']:.3f}, {s['high']:.3f}]"
        table.add_row(name, "nan" if math.isnan(s["value"]) else f"{s['value']:.3f}", ci)
    console.print(table)
    if result.confusion:
        (tp, fn), (fp, tn) = result.confusion["counts"]
        grid = Table(title="confusion (rows: human, columns: judge)", title_justify="left")
        for head in ("", "judge positive", "judge negative"):
            grid.add_column(head, justify="right")
        grid.add_row("human positive", str(tp), str(fn))
        grid.add_row("human negative", str(fp), str(tn))
        console.print(grid)
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True, highlight=False)
