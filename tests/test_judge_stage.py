"""JudgeStage without Ray on a scripted judge (unit test of the stage's columns, skips,
prefixes and aggregation; the real engine is tested in test_judges_vllm.py)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from lasagna.engine.judging import (
    CASE,
    JudgeStage,
    cases_from_generation,
    judge_metrics,
    judge_prefix,
)
from lasagna.judges import faithfulness
from lasagna.sweep.systems import JUDGE_MODEL
from tests.test_judges_formulas import Scripted, verdict


def scripted():
    return Scripted(
        {
            faithfulness.CLAIMS.system: lambda u: {"claims": ["a", "b"]},
            faithfulness.VERDICT.system: lambda u: verdict("no" if "Claim: b" in u else "yes"),
        }
    )


def test_stage_columns_and_trial_aggregates():
    cases = [
        {"id": f"r{i}", "input": "q", "actual_output": "a", "retrieval_context": ["c"]}
        for i in range(3)
    ]
    table = pa.table({"id": [c["id"] for c in cases], CASE: [json.dumps(c) for c in cases]})
    stage = JudgeStage("faithfulness", JUDGE_MODEL, {"threshold": "0.4"}, model=scripted())
    out = stage(table)
    assert out.column("faithfulness_score").to_pylist() == [0.5] * 3
    assert out.column("passed").to_pylist() == [True] * 3
    assert out.column("judge_calls").to_pylist() == [3] * 3
    metrics, counts = judge_metrics(out)
    assert metrics["faithfulness_score"] == 0.5 and metrics["pass_rate"] == 1.0
    assert counts == {
        "judged": 3,
        "failed": 0,
        "judge_invalid_outputs": 0,
        "judge_calls": 9,
        "judge_truncated_outputs": 0,
        "prompt_tokens": 90,
        "completion_tokens": 27,
        "rows": 3,
    }


def test_generated_rows_become_cases_and_failed_ones_are_kept_unjudged():
    batch = pa.table(
        {
            "id": ["q1", "q2", "q3"],
            "question": ["Who?", "What?", "When?"],
            "prediction": ["Bell.", "", "1876."],
            "error": [None, None, "RuntimeError: boom"],
            "passages": [["p1", "p2"], ["p3"], ["p4"]],
            "gold_contexts": [["g1"], [], ["g3"]],
            "answers": [["Bell"], [], ["1876"]],
        }
    )
    with_cases = cases_from_generation(batch)
    case = json.loads(with_cases.column(CASE)[0].as_py())
    assert case["actual_output"] == "Bell." and case["retrieval_context"] == ["p1", "p2"]
    assert case["context"] == ["g1"] and case["expected_output"] == "Bell"
    prefix = judge_prefix("faithfulness")
    stage = JudgeStage("faithfulness", JUDGE_MODEL, model=scripted(), prefix=prefix)
    out = stage(with_cases)
    assert out.column("faithfulness_score").to_pylist() == [0.5, None, None]
    errors = out.column("faithfulness_error").to_pylist()
    assert errors[0] is None and "empty answer" in errors[1] and "generation failed" in errors[2]
    assert out.column("error").to_pylist() == [None, None, "RuntimeError: boom"]  # untouched
    metrics, counts = judge_metrics(out, prefix)
    assert metrics["faithfulness_score"] == pytest.approx(0.5)
    assert counts["faithfulness_judged"] == 1 and counts["faithfulness_failed"] == 2
    assert "faithfulness_claims_count" in out.column_names
