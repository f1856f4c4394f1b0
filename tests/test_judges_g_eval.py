"""The g-eval judge (your own criterion): parameters, steps written once, the fields it
reads, refusals, names of its leaderboard group and columns (a scripted judge: unit tests)."""

from __future__ import annotations

import pytest

from lasagna.errors import UserError
from lasagna.judges import correctness, g_eval
from lasagna.judges.base import run_cases
from lasagna.judges.params import JudgeParams, parse_params
from lasagna.judges.registry import group_name, identity, parameter_problems, refusals
from lasagna.stages.judging import judge_column, judge_prefix
from tests.test_judges_formulas import CASE, Scripted

CRITERIA = "Is the answer polite and free of blame?"


def params(**raw):
    parsed, problems = parse_params({"criteria": CRITERIA, **raw})
    assert not problems, [p.render() for p in problems]
    return parsed


def scripted(seen: list[str], score: int = 8):
    return Scripted(
        {
            g_eval.STEPS.system: lambda u: {"steps": ["Check the tone.", "Check for blame."]},
            g_eval.SCORE.system: lambda u: seen.append(u) or {"score": score, "reason": "ok"},
        }
    )


def test_the_steps_are_written_once_for_a_block_and_every_row_is_scored_by_them():
    seen: list[str] = []
    model = scripted(seen)
    cases = [dict(CASE, id=f"r{i}", actual_output=f"answer {i}") for i in range(3)]
    rows = run_cases(g_eval, cases, model, params())
    assert model.batches == [1, 3]  # one steps call for the block, then one score per row
    assert [r.metrics["g_eval_score"] for r in rows] == [pytest.approx(7 / 9)] * 3
    assert all(r.metrics["passed"] and r.metrics["g_eval_rubric_score"] == 8 for r in rows)
    assert "1. Check the tone.\n2. Check for blame." in seen[0] and CRITERIA in seen[0]
    steps = rows[0].metrics["verdicts"][0]
    assert steps == {"evaluation_steps": ["Check the tone.", "Check for blame."], "generated": True}
    assert [r.calls for r in rows] == [2, 1, 1]  # the shared steps call is counted once


def test_given_steps_skip_the_steps_call_and_fields_choose_what_the_judge_reads():
    seen: list[str] = []
    model = scripted(seen, score=1)
    fixed = params(evaluation_steps="Check the tone.|Check for blame.")
    (row,) = run_cases(g_eval, [CASE], model, fixed)
    assert model.batches == [1] and row.metrics["g_eval_score"] == 0.0
    assert not row.metrics["passed"] and row.metrics["verdicts"][0]["generated"] is False
    assert "Input: What is the boiling point" in seen[0]
    assert "Expected output" not in seen[0] and "Retrieval context" not in seen[0]
    wide = params(fields="input,actual_output,expected_output,retrieval_context")
    run_cases(g_eval, [CASE], scripted(seen), wide)
    assert "Expected output: 100 degrees Celsius" in seen[-1]
    assert "Retrieval context: [1] Water boils at 100 degrees" in seen[-1]


def test_parameters_parse_from_the_command_line_and_from_yaml():
    cli = params(evaluation_steps=" a | b |", fields="actual_output, expected_output")
    yaml = params(evaluation_steps=["a", "b"], fields=["actual_output", "expected_output"])
    assert cli == yaml and cli.evaluation_steps == ("a", "b")
    assert g_eval.required(cli) == ("actual_output", "expected_output")
    cases = [{"id": "a", "actual_output": "x"}]  # no input: fine when fields leave it out
    assert refusals(["g-eval"], cases, params(fields="actual_output"), "f.csv") == []
    (missing,) = refusals(["g-eval"], cases, cli, "f.csv")
    assert "no 'expected_output' column" in missing.message
    for raw, words in [
        ({"fields": "input,answer"}, "unknown column(s) answer"),
        ({"fields": "input"}, "must include actual_output"),
        ({"evaluation_steps": "|".join("s" * 9)}, "at most 8"),
        ({"evaluation_steps": " | "}, "is empty"),
        ({"criteria": "  "}, "non-empty"),
    ]:
        _, problems = parse_params({"criteria": CRITERIA} | raw)
        assert words in problems[0].render(), problems


def test_a_criterion_is_required_and_read_by_g_eval_only():
    (problem,) = parameter_problems("g-eval", JudgeParams())
    assert problem.field == "criteria" and "--param criteria=" in problem.fix
    (problem,) = parameter_problems("faithfulness", params())
    assert "does not read the 'criteria'" in problem.message and "g-eval" in problem.fix
    assert parameter_problems("g-eval", params()) == []
    (refused, _) = refusals(["g-eval"], [{"id": "a"}], JudgeParams(), "f.csv")
    assert refused.field == "criteria"


def test_other_judges_keep_their_keys_and_the_criterion_is_in_g_evals():
    assert set(JudgeParams().as_dict()) == {
        "threshold",
        "chatbot_role",
        "penalize_unverified",
        "assessment_questions",
        "max_claims",
    }
    # correctness's prompt moved its scoring to lasagna.judges.rubric, its hash did not move
    assert correctness.SCORE.sha256 == (
        "587be7efbf9b42e76654cd0b1b52b945a7aaa3333fdaf52157acf6f60e282059"
    )
    one = identity("g-eval", params())
    other = identity("g-eval", params(evaluation_steps=["Check the tone."]))
    assert one["parameters"]["criteria"] == CRITERIA and one != other
    assert other["parameters"]["evaluation_steps"] == ["Check the tone."]


def test_names_say_what_is_judged():
    assert group_name("g-eval", params()) == "g-eval:is-the-answer-polite"
    assert group_name("faithfulness", JudgeParams()) == "faithfulness"
    prefix = judge_prefix("g-eval", params())
    assert prefix == "g_eval_is_the_answer_polite_"
    assert judge_column(prefix, "g_eval_score") == "g_eval_is_the_answer_polite_score"
    assert judge_column(prefix, "passed") == prefix + "passed"
    assert judge_column("faithfulness_", "faithfulness_score") == "faithfulness_score"
    assert judge_column("faithfulness_", "claims_count") == "faithfulness_claims_count"


def test_the_sdk_judge_refuses_a_missing_criterion(monkeypatch):
    from lasagna.evaluation import LLMJudge
    from lasagna.evaluation import g_eval as sdk_g_eval

    with pytest.raises(UserError, match="needs a criterion"):
        LLMJudge("g-eval")
    with pytest.raises(UserError, match="threshold must be between"):
        LLMJudge("correctness", params={"threshold": 3})
    judge = sdk_g_eval(CRITERIA, fields=["actual_output"])
    assert judge.required == ("actual_output",) and judge.metric == "g_eval_score"
    assert judge.identity()["parameters"]["fields"] == ["actual_output"]


def test_a_judge_model_that_writes_no_step_flags_its_rows_degenerate():
    seen: list[str] = []
    model = Scripted(
        {
            g_eval.STEPS.system: lambda u: {"steps": []},
            g_eval.SCORE.system: lambda u: seen.append(u) or {"score": 9, "reason": "ok"},
        }
    )
    (row,) = run_cases(g_eval, [CASE], model, params())
    assert row.metrics["judge_degenerate"] is True
    assert row.metrics["judge_degenerate_reason"] == "no evaluation steps found"
    assert "1. Check how well the test case meets the criterion" in seen[0]
    (fine,) = run_cases(g_eval, [CASE], scripted([]), params())
    assert fine.metrics["judge_degenerate"] is False
