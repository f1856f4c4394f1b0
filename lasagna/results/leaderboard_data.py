"""The leaderboard as data: what the report page embeds and `results leaderboard --format
json|csv` prints (the groups: lasagna.results.leaderboard; as terminal tables:
lasagna.results.leaderboard_render). Values are plain JSON: NaN is null."""

from __future__ import annotations

import csv
import json
import math
from typing import Any, TextIO

from lasagna.judges.degenerate import about_metric, labelled, mark
from lasagna.results.leaderboard import Group, group_title
from lasagna.results.leaderboard_render import interval_caption, ties_caption


def num(value: Any) -> float | None:
    """A finite float, or None (JSON has no NaN)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def board_dict(board: Group) -> dict[str, Any]:
    """One group's ranked lines with their intervals, tests, marks and captions."""
    return {
        "metric": board.metric,
        "also": board.also,
        "tested": board.tested,
        "ties_caption": ties_caption(board) if board.tested else None,
        "interval_caption": interval_caption(board),
        "lines": [
            {
                "rank": i,
                "system": line.system,
                "system_id": line.system_id,
                "mean": num(line.mean),
                "low": num(line.low),
                "high": num(line.high),
                "interval": line.interval,
                "n_trials": line.n_trials,
                "runs": line.runs,
                "mark": mark(about_metric(line.warnings, board.metric, board.track)).strip(),
                "warnings": [labelled(line.system, w) for w in line.warnings],
                "also": {m: num(v) for m, v in line.also.items()},
                "also_marks": {  # a judge's score beside the ranked one is flagged too
                    m: mark(about_metric(line.warnings, m, board.track)).strip() for m in board.also
                },
                "p_vs_best": num(line.p_vs_best),
                "tie_with_best": line.tie_with_best,
                "differs_from_best": line.differs_from_best,
            }
            for i, line in enumerate(board.lines, 1)
        ],
    }


def write_leaderboard(groups: list[Group], fmt: str, out: TextIO) -> None:
    """Every group as JSON (an array: the group's key, title, track, benchmark, correction,
    then `board_dict`), or as CSV (a row per system and group; the metrics shown beside the
    ranked one as columns of their own, empty in groups without them)."""
    if fmt == "json":
        data = [
            {
                "comparability_key": g.comparability_key,
                "title": group_title(g.benchmark, g.track),
                "track": g.track,
                "benchmark": g.benchmark,
                "correction": g.correction,
                **board_dict(g),
            }
            for g in groups
        ]
        json.dump(data, out, ensure_ascii=False, allow_nan=False, default=str)
        out.write("\n")
        return
    also = list(dict.fromkeys(m for g in groups for m in g.also))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["benchmark", "track", "comparability_key", "metric", "rank", "system", "system_id",
         "mean", "ci_low", "ci_high", "ci_over", "trials", "p_vs_best", "tie_with_best",
         *also, "runs"]
    )  # fmt: skip
    for g in groups:
        for line in board_dict(g)["lines"]:
            writer.writerow(
                [g.benchmark.get("name", ""), g.track, g.comparability_key, g.metric,
                 line["rank"], line["system"], line["system_id"], _cell(line["mean"]),
                 _cell(line["low"]), _cell(line["high"]), line["interval"] if
                 line["low"] is not None else "", line["n_trials"], _cell(line["p_vs_best"]),
                 line["tie_with_best"], *(_cell(line["also"].get(m)) for m in also),
                 " ".join(line["runs"])]
            )  # fmt: skip


def _cell(value: float | None) -> str:
    return "" if value is None else repr(value)
