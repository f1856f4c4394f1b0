"""`results compare --format json|csv`: the compared pairs as records for programs (the
tables for people: lasagna.results.compare_render). A record per pair and metric, flat, so
CSV and JSON carry the same fields; NaN is null (an empty CSV cell)."""

from __future__ import annotations

import csv
import json
from typing import Any, TextIO

from lasagna.results.compare import Comparison
from lasagna.results.leaderboard_data import num
from lasagna.results.within import WithinRun

TESTS = ("n", "p_ttest", "p_permutation", "p_ttest_adj", "p_permutation_adj")


def within_records(within: WithinRun) -> list[dict[str, Any]]:
    """`results compare RUN`: each pair of the run's systems (A the better, or the baseline)."""
    return [
        {
            "run": within.run_id,
            "benchmark": g.benchmark.get("name"),
            "track": g.track,
            "comparability_key": g.comparability_key,
            "metric": g.metric,
            **({"by": g.by, "slice": g.value, "slice_questions": g.questions} if g.by else {}),
            "a": p.a,
            "b": p.b,
            "mean_a": num(p.mean_a),
            "mean_b": num(p.mean_b),
            "diff": num(p.diff),
            "diff_low": num(p.diff_low),
            "diff_high": num(p.diff_high),
            "effect": num(p.effect),
            **{k: _value(getattr(p, k)) for k in TESTS},
            "significant": p.significant,
            "correction": within.correction,
            **(d.record() if d is not None else {}),
        }
        for g in within.groups
        for p, d in zip(g.pairs, g.differences or [None] * len(g.pairs), strict=True)
    ]


def runs_records(comparison: Comparison) -> list[dict[str, Any]]:
    """`results compare A B`: each system of both runs on each metric (B - A)."""
    names = {key: bench.get("name") for key, (bench, _) in comparison.groups.items()}
    tracks = {key: track for key, (_, track) in comparison.groups.items()}
    return [
        {
            "run_a": comparison.run_a,
            "run_b": comparison.run_b,
            "benchmark": names.get(x.comparability_key, comparison.benchmark.get("name")),
            "track": tracks.get(x.comparability_key, comparison.track),
            "comparability_key": x.comparability_key,
            "metric": x.metric,
            "system_a": x.system_a,
            "system_b": x.system_b,
            "mean_a": num(x.mean_a),
            "mean_b": num(x.mean_b),
            "diff": num(x.diff),
            "diff_low": num(x.diff_low),
            "diff_high": num(x.diff_high),
            "effect": num(x.effect),
            **{k: _value(getattr(x, k)) for k in TESTS},
            "significant": x.significant,
            **(
                {"by": comparison.by, "slice": x.slice, "slice_questions": x.questions}
                if comparison.by
                else {}
            ),
            "trials_a": x.trials_a,
            "trials_b": x.trials_b,
            "correction": comparison.correction,
            **(x.differences.record() if x.differences is not None else {}),
        }
        for x in comparison.lines
    ]


def write_records(records: list[dict[str, Any]], fmt: str, out: TextIO) -> None:
    """A JSON array of the records, or CSV with a header (no records: the header alone is
    not known, so an empty array or nothing); CSV leaves out list fields (`--questions`'
    gains and losses: JSON carries them)."""
    if fmt == "json":
        json.dump(records, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
        return
    if not records:
        return
    records = [{k: v for k, v in r.items() if not isinstance(v, list)} for r in records]
    fields = list(dict.fromkeys(k for r in records for k in r))  # some records have more
    writer = csv.DictWriter(out, fieldnames=fields, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in records)


def _value(value: Any) -> Any:
    return value if isinstance(value, int) and not isinstance(value, bool) else num(value)
