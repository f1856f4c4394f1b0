"""Degenerate judgments are flagged: per row (nothing extracted from a non-empty text), per
trial (degenerate rows, identical scores), and shown next to the score in the run summary,
the leaderboard, the report and calibrate. A scripted judge stands in for the engine."""

from __future__ import annotations

import dataclasses
import io
import json

import pyarrow as pa
from rich.console import Console

from lasagna.judges import faithfulness, knowledge_retention
from lasagna.judges.base import run_cases
from lasagna.judges.calibrate import agreement_of, render_agreement
from lasagna.judges.degenerate import DEGENERATE, mark, trial_warnings, warning_text
from lasagna.judges.params import JudgeParams
from lasagna.results import TrialResult, compare, write_run
from lasagna.results.compare_render import render_within
from lasagna.results.leaderboard import build_leaderboard
from lasagna.results.leaderboard_render import render_leaderboard
from lasagna.results.report import build_report
from lasagna.results.report.page import render_page
from lasagna.results.show import render_run
from lasagna.results.store import load_runs
from lasagna.results.within import compare_within
from lasagna.stages.judging import CASE, JudgeStage, judge_metrics, judge_warnings
from lasagna.systems import JUDGE_MODEL
from lasagna.tracks import get_track
from tests.test_judges_formulas import TURNS, Scripted

NO_CLAIMS = Scripted({faithfulness.CLAIMS.system: lambda u: {"claims": []}})
CASES = [
    {
        "id": f"r{i}",
        "input": "q?",
        "actual_output": f"Water boils at {i}C.",
        "retrieval_context": ["p"],
    }
    for i in range(6)
]
TEXT = "faithfulness: 6 of 6 rows: no claims found — the judge model may be too small"


def judged_table(prefix: str = "") -> pa.Table:
    cases = pa.table({"id": [c["id"] for c in CASES], CASE: [json.dumps(c) for c in CASES]})
    return JudgeStage("faithfulness", JUDGE_MODEL, model=NO_CLAIMS, prefix=prefix)(cases)


def test_row_with_nothing_extracted_from_a_non_empty_output_is_degenerate():
    (row, empty) = run_cases(
        faithfulness, [CASES[0], dict(CASES[1], actual_output="  ")], NO_CLAIMS, JudgeParams()
    )
    assert row.metrics["faithfulness_score"] == 1.0  # the formula's empty case, unchanged
    assert row.metrics["judge_degenerate"] is True
    assert row.metrics["judge_degenerate_reason"] == "no claims found"
    assert empty.metrics["judge_degenerate"] is False  # nothing to extract from


def test_trial_flags_degenerate_rows_and_identical_scores():
    table = judged_table()
    assert table.column("judge_degenerate").to_pylist() == [True] * 6
    assert table.schema.field("judge_degenerate_reason").type == pa.string()
    metrics, counts = judge_metrics(table)
    assert counts["degenerate"] == 6 and "judge_degenerate" not in metrics
    flags = judge_warnings(table, "faithfulness")
    assert [w["kind"] for w in flags] == ["degenerate", "identical"]
    assert flags[0]["most"] and flags[0]["rows"] == flags[0]["of"] == 6
    assert warning_text(flags[0]).startswith(TEXT)
    assert "all 6 rows scored 1" in warning_text(flags[1])
    # judged generation: the judge's columns under its prefix, its score under its own name
    # (faithfulness_score, not faithfulness_faithfulness_score): flagged alike (it was not)
    prefixed = judged_table("faithfulness_")
    assert {"faithfulness_score", "faithfulness_judge_degenerate"} <= set(prefixed.column_names)
    assert judge_warnings(prefixed, "faithfulness", "faithfulness_") == flags
    assert mark(flags) == " ⚠ 6/6 degenerate"  # all degenerate: all alike goes unsaid
    some = [{"s": 1.0, "error": None, DEGENERATE: i == 0} for i in range(4)]
    assert mark(trial_warnings(some, "x", "s")) == " ⚠ 1/4 degenerate, identical"
    varied = [{"s": v, "error": None} for v in (0.5, 1.0, 1.0)]
    assert trial_warnings(varied, "x", "s") == []
    assert trial_warnings(varied[1:], "x", "s") == []  # two alike: too few to flag


def test_knowledge_retention_stores_attrition_not_a_yes_verdict():
    model = Scripted(
        {
            knowledge_retention.FACTS.system: lambda u: {"facts": ["The user is Alice."]},
            knowledge_retention.VERDICT.system: lambda u: {
                "attrition": "yes" if "turn 4" in u else "no",
                "reason": "r",
            },
        }
    )
    (row,) = run_cases(knowledge_retention, [{"id": "c", "turns": TURNS}], model, JudgeParams())
    assert [v["attrition"] for v in row.metrics["verdicts"]] == ["no", "yes"]  # turn 4 forgot
    assert all("verdict" not in v for v in row.metrics["verdicts"])
    assert knowledge_retention.VERDICT.schema["required"] == ["attrition", "reason"]
    none = Scripted({knowledge_retention.FACTS.system: lambda u: {"facts": []}})
    (row,) = run_cases(knowledge_retention, [{"id": "c", "turns": TURNS}], none, JudgeParams())
    assert row.metrics["judge_degenerate_reason"] == "no facts found"


def trial(tmp_path) -> TrialResult:
    table = judged_table()
    metrics, counts = judge_metrics(table)
    return TrialResult(
        key="j-0",
        comparability_key="judge-1",
        track="judge",
        system="faithfulness:SmolLM2",
        config={"kind": "judge", "benchmark": "faithfulness"},
        benchmark={"name": "faith@dddddddddddd", "source": str(tmp_path / "gone.csv")},
        metrics=metrics,
        counts=counts,
        extra={"judge_warnings": judge_warnings(table, "faithfulness")},
        rows=table,
    )


def test_summary_leaderboard_report_and_calibrate_show_the_count(tmp_path):
    t = trial(tmp_path)
    track = get_track("judge")
    heads, (cells,) = track.summary_table([t], repeats=False)
    assert cells[heads.index("degenerate")] == "6 of 6"
    assert track.summary_notes([t])[0].startswith(f"faithfulness:SmolLM2: {TEXT}")
    plain = dataclasses.replace(t, system="faithfulness")
    assert track.summary_notes([plain])[0].startswith(TEXT)  # the judge named once
    write_run(tmp_path / "out", "rj", {"created_at": "2026-01-03T00:00:00+00:00"}, [t])
    runs = load_runs(tmp_path / "out")
    out = io.StringIO()
    render_leaderboard(build_leaderboard(runs), Console(file=out, width=200))
    assert "1.0000 ⚠ 6/6 degenerate" in out.getvalue() and TEXT in out.getvalue()
    out = io.StringIO()  # `results show` too: it printed a bare 1.0000
    render_run(runs[0], Console(file=out, width=200))
    assert "1.0000 ⚠ 6/6 degenerate" in out.getvalue()
    assert f"warning: {TEXT}" in out.getvalue()
    # and `results show --by`: a slice of a judge that judged nothing says so too
    from lasagna.results.slice_table import slice_groups

    meta = pa.array(['{"k": "a"}'] * t.rows.num_rows, pa.string())
    sliced = dataclasses.replace(t, rows=t.rows.append_column("metadata", meta))
    write_run(tmp_path / "sl", "rs", {"created_at": "2026-01-03T00:00:00+00:00"}, [sliced])
    (group,) = slice_groups(load_runs(tmp_path / "sl")[0], "k")
    assert group.warnings and TEXT in group.warnings[0]
    # and `results compare` of two judge models, one of which judged nothing
    config = {**t.config, "model": {"model": "other"}}
    other = dataclasses.replace(t, key="j-1", system="faithfulness:Other", config=config, extra={})
    write_run(tmp_path / "two", "r2", {"created_at": "2026-01-04T00:00:00+00:00"}, [t, other])
    out = io.StringIO()
    render_within(compare_within(load_runs(tmp_path / "two")[0]), Console(file=out, width=200))
    said = [line for line in out.getvalue().splitlines() if line.startswith("warning:")]
    assert len(said) == 2 and all("model=none: faithfulness" in x for x in said), said
    # two runs of the same judge: the comparison's notes say it of each run
    comparison = compare(load_runs(tmp_path / "out")[0], load_runs(tmp_path / "two")[0])
    said = warning_text(t.extra["judge_warnings"][0])
    assert [n for n in comparison.notes if TEXT in n] == [
        f"run {rid}: faithfulness model=none: {said}" for rid in ("rj", "r2")
    ]
    (group,) = build_report(runs)["groups"]
    (line,) = group["leaderboard"]["lines"]
    assert line["mark"] == "⚠ 6/6 degenerate"
    # the system's label is its judge's name: the page says it once (it said it twice)
    assert line["system"] == "faithfulness" and line["warnings"][0] == said, line
    page = render_page(build_report(runs))
    assert f">{said}</p>" in page and "faithfulness: faithfulness" not in page
    rows = [{**r, "labels": None} for r in t.rows.to_pylist()]
    result = agreement_of("faithfulness", "human", {r["id"]: "yes" for r in rows}, rows)
    assert result.degenerate_rows == 6 and result.warnings[0].startswith(TEXT)
    printed = io.StringIO()
    render_agreement(result, Console(file=printed, width=200))
    assert TEXT in printed.getvalue()


def test_generation_leaderboard_marks_only_the_judges_metric():
    from lasagna.judges.degenerate import about_metric

    flags = [{"judge": "faithfulness", "kind": "identical", "rows": 3, "value": 1.0}]
    assert about_metric(flags, "f1", "generation") == []
    assert about_metric(flags, "faithfulness_score", "generation") == flags


def test_report_marks_a_judges_score_beside_the_ranked_f1():
    """In judged generation the leaderboard ranks f1 and shows the judge's score beside it:
    the report marks that score, as `results leaderboard` does (it showed a bare 1.0000)."""
    from lasagna.results.leaderboard import Group, LeaderboardLine
    from lasagna.results.leaderboard_data import board_dict

    flags = [{"judge": "faithfulness", "kind": "degenerate", "rows": 4, "of": 4}]
    line = LeaderboardLine("rag", "r1", 0.0, None, None, 1, ["run"], ["k"],
                           also={"faithfulness_score": 1.0}, warnings=flags)  # fmt: skip
    group = Group("g", "generation", {}, "f1", [line], also=["faithfulness_score"])
    (shown,) = board_dict(group)["lines"]
    assert shown["mark"] == ""  # f1 is not the judge's
    assert shown["also_marks"]["faithfulness_score"].startswith("⚠")


def test_rows_from_the_model_call_cache_are_left_out_of_the_judges_speed():
    """A row answered wholly from the cache took no engine time: counted, it made a judge
    read 321 rows/s beside a computed one's 0.04."""
    from lasagna.stages.judging import COST_COLUMNS

    def rows(misses: list[int | None], block_s: float) -> pa.Table:
        n = len(misses)
        costs = {c: pa.array([0] * n, t) for c, t in COST_COLUMNS.items()}
        costs |= {"judge_cache_misses": pa.array(misses, pa.int64()),
                  "block_rows": pa.array([n] * n, pa.int64()),
                  "block_s": pa.array([block_s] * n, pa.float64())}  # fmt: skip
        return pa.table({"id": [str(i) for i in range(n)], "score": [1.0] * n, **costs})

    computed = judge_metrics(rows([2, 3], 40.0))[0]["judgments_per_s"]
    assert computed == 2 / 40.0
    # cached rows in a block that computed others: judged in that engine time
    assert judge_metrics(rows([2, 3, 0, 0], 40.0))[0]["judgments_per_s"] == 4 / 40.0
    assert "judgments_per_s" not in judge_metrics(rows([0, 0], 0.01))[0]  # all cached
    assert judge_metrics(rows([None, None], 40.0))[0]["judgments_per_s"] == 2 / 40.0  # cache off
