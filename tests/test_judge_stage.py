"""JudgeStage without Ray on a scripted judge (unit test of the stage's columns, skips,
prefixes and aggregation; the real engine is tested in test_judges_vllm.py)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from lasagna.judges import faithfulness
from lasagna.stages.judging import (
    CASE,
    JudgeStage,
    cases_from_generation,
    judge_metrics,
    judge_prefix,
)
from lasagna.systems import JUDGE_MODEL
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
        "degenerate": 0,
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


def test_judge_track_is_stages_and_aggregate_like_every_track(tmp_path):
    """The judge track runs through the stage layer: its input columns pass check_pipeline,
    its one stage is the Judge actor pool (light clients of a pooled engine), and its
    aggregate gives the trial metrics; two judges on one model share one engine pool."""
    from lasagna.data.judge_cases import load_judge_cases
    from lasagna.stages.pools import Pool
    from lasagna.stages.stage import check_pipeline
    from lasagna.stages.stopwatch import Stopwatch
    from lasagna.systems import JudgeSystem
    from lasagna.tracks import TrialSetup, get_track, track_problems
    from lasagna.tracks.base import Track
    from lasagna.tracks.judge import JudgePrepared

    path = tmp_path / "faith.jsonl"
    rows = [{"input": "q", "actual_output": "a", "retrieval_context": ["c"]}] * 3
    path.write_text("\n".join(json.dumps(r) for r in rows))
    cases = load_judge_cases(path)
    track = get_track("judge")
    assert "run" not in vars(Track) and "run" not in vars(type(track))  # no own runner
    faith = JudgeSystem(benchmark="faithfulness", parameters={"threshold": "0.4"})
    relevancy = JudgeSystem(benchmark="relevancy")
    assert track.pool_keys(faith) == track.pool_keys(relevancy) != []  # one engine, shared
    assert track_problems(cases, "judge", "judge", faith) == []
    (refused,) = track_problems(cases, "judge", "judge", JudgeSystem(benchmark="correctness"))
    assert "expected_output" in refused.message and refused.file == str(path)

    columns = track.input_columns(cases, faith, JudgePrepared())
    (stage,) = track.stages(cases, faith, JudgePrepared(pool=Pool(servers=["s"], load_s=1.5)))
    check_pipeline([stage], [*columns, "_pos"])
    assert stage.stateful and stage.resources_key == "judge"
    assert stage.constructor_kwargs["servers"] == ["s"] and stage.resources.num_cpus <= 0.1

    judged = JudgeStage("faithfulness", JUDGE_MODEL, {"threshold": "0.4"}, model=scripted())(
        pa.table(columns)
    )
    prepared = track.prepare(TrialSetup(cases, faith, Stopwatch()))
    assert prepared.pool is None  # no run pools: each actor loads its own model
    summary = track.aggregate(judged, cases, prepared)
    assert summary.metrics["faithfulness_score"] == pytest.approx(0.5)
    assert summary.counts["judged"] == 3 and summary.counts["rows"] == 3
    assert summary.extra["judge"]["prompts"]
