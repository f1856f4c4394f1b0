"""Each judge benchmark's formula and steps, driven by a scripted judge (unit tests only).

The scripted model answers by prompt: it is a fake of the engine for testing the judge
logic, never what a run uses.
"""

from __future__ import annotations

import json
import math

import pytest

from lasagna.judges import (
    contextual_precision,
    contextual_recall,
    contextual_relevancy,
    conversation_completeness,
    correctness,
    faithfulness,
    hallucination,
    knowledge_retention,
    relevancy,
    role_adherence,
    summarization,
)
from lasagna.judges.base import run_cases
from lasagna.judges.params import JudgeParams, parse_params
from lasagna.judges.registry import BENCHMARKS, identity, refusals
from lasagna.models.base import Completion


class Scripted:
    """Replies by prompt system text: a function of the user message -> reply object."""

    def __init__(self, script, constrained=True, raw=None):
        self.script = script
        self.constrained_decoding = constrained
        self.raw = raw or {}
        self.batches: list[int] = []

    def generate(self, requests):
        self.batches.append(len(requests))
        out = []
        for r in requests:
            system, user = r.messages[0]["content"], r.messages[1]["content"]
            if system in self.raw and len(r.messages) == 2:
                out.append(Completion(text=self.raw[system], prompt_tokens=5))
                continue
            reply = self.script[system](user)
            out.append(Completion(text=json.dumps(reply), prompt_tokens=10, completion_tokens=3))
        return out


def verdict(v, reason="because"):
    return {"verdict": v, "reason": reason}


CASE = {
    "id": "r1",
    "input": "What is the boiling point of water?",
    "actual_output": "Water boils at 100C. It is blue. Ice is cold.",
    "retrieval_context": ["Water boils at 100 degrees Celsius at sea level."],
    "context": ["Water boils at 100 C.", "Water is clear.", "Ice is frozen water."],
    "expected_output": "100 degrees Celsius",
}


def test_faithfulness_counts_and_not_enough_information():
    claims = ["Water boils at 100C.", "It is blue.", "Ice is cold."]
    answers = {"Water boils at 100C.": "yes", "It is blue.": "no", "Ice is cold.": "idk"}
    model = Scripted(
        {
            faithfulness.CLAIMS.system: lambda u: {"claims": claims},
            faithfulness.VERDICT.system: lambda u: verdict(
                answers[u.split("Claim: ")[1].split("\n")[0]]
            ),
        }
    )
    (row,) = run_cases(faithfulness, [CASE], model, JudgeParams())
    assert row.error is None
    m = row.metrics
    assert m["claims_count"] == 3 and m["supported_claims_count"] == 2
    assert m["faithfulness_score"] == pytest.approx(2 / 3)
    assert m["contradicted_claims_count"] == 1 and m["unverified_claims_count"] == 1
    assert model.batches == [1, 3]  # one engine call per step
    (strict,) = run_cases(faithfulness, [CASE], model, JudgeParams(penalize_unverified=True))
    assert strict.metrics["faithfulness_score"] == pytest.approx(1 / 3)
    assert row.prompt_tokens == 40 and row.calls == 4


def test_faithfulness_no_claims_scores_one():
    model = Scripted({faithfulness.CLAIMS.system: lambda u: {"claims": []}})
    (row,) = run_cases(faithfulness, [CASE], model, JudgeParams())
    assert row.metrics["faithfulness_score"] == faithfulness.EMPTY_SCORE == 1.0
    assert row.metrics["claims_count"] == 0
    assert faithfulness.score([]) == (1.0, 0)


def test_block_of_rows_is_one_call_per_step():
    model = Scripted(
        {
            faithfulness.CLAIMS.system: lambda u: {"claims": ["a", "b"]},
            faithfulness.VERDICT.system: lambda u: verdict("yes"),
        }
    )
    cases = [dict(CASE, id=f"r{i}") for i in range(5)]
    rows = run_cases(faithfulness, cases, model, JudgeParams())
    assert [r.metrics["faithfulness_score"] for r in rows] == [1.0] * 5
    assert model.batches == [5, 10]


def test_relevancy_formula():
    model = Scripted(
        {
            relevancy.STATEMENTS.system: lambda u: {"statements": ["x", "y", "z", "w"]},
            relevancy.VERDICT.system: lambda u: verdict(
                {"x": "yes", "y": "no", "z": "idk", "w": "yes"}[u.split("Statement: ")[1][0]]
            ),
        }
    )
    (row,) = run_cases(relevancy, [CASE], model, JudgeParams())
    assert row.metrics["relevancy_score"] == pytest.approx(3 / 4)
    assert relevancy.score([]) == 1.0


def test_hallucination_formula_and_threshold():
    def per_passage(user):
        return verdict("no" if "clear" in user or "frozen" in user else "yes")

    model = Scripted({hallucination.VERDICT.system: per_passage})
    (row,) = run_cases(hallucination, [CASE], model, JudgeParams())
    assert row.metrics["hallucination_score"] == pytest.approx(2 / 3)
    assert row.metrics["hallucination_detected"] is True
    (high,) = run_cases(hallucination, [CASE], model, JudgeParams(threshold=0.7))
    assert high.metrics["hallucination_detected"] is False
    assert hallucination.score([]) == 0.0
    assert hallucination.detected(0.5, 0.5) is False  # exceeds, not equals


def test_correctness_normalises_and_weights_logprobs():
    assert correctness.normalise(1) == 0.0 and correctness.normalise(10) == 1.0
    assert correctness.normalise(5.5) == pytest.approx(0.5)
    tokens = ['{"', "score", '":', " ", "7", ',"', "reason"]
    top = [{}] * 4 + [{"7": math.log(0.5), "8": math.log(0.25), "x": math.log(0.25)}] + [{}] * 2
    assert correctness.score_position(tokens) == 4
    assert correctness.weighted_score(tokens, top) == pytest.approx((7 * 0.5 + 8 * 0.25) / 0.75)
    # "10" written as "1" "0": the mass of "1" is split by p("0") at the next position
    tokens10 = ['{"score":', "1", "0", ","]
    top10 = [{}, {"1": math.log(0.8), "9": math.log(0.2)}, {"0": math.log(0.5)}, {}]
    expected = (1 * 0.4 + 10 * 0.4 + 9 * 0.2) / 1.0
    assert correctness.weighted_score(tokens10, top10) == pytest.approx(expected)
    model = Scripted({correctness.SCORE.system: lambda u: {"score": 8, "reason": "close"}})
    (row,) = run_cases(correctness, [CASE], model, JudgeParams())
    assert row.metrics["correctness_score"] == pytest.approx(7 / 9)  # no logprobs: the integer
    assert row.metrics["correctness_weighted"] is False


def test_summarization_min_of_alignment_and_coverage():
    source_answers = {"Q1": "yes", "Q2": "yes", "Q3": "no"}
    summary_answers = {"Q1": "yes", "Q2": "no", "Q3": "yes"}

    def answer(user):
        q = user.split("Question: ")[1]
        table = source_answers if user.startswith("Text:\nSRC") else summary_answers
        return verdict(table[q])

    model = Scripted(
        {
            faithfulness.CLAIMS.system: lambda u: {"claims": ["c1", "c2"]},
            summarization.QUESTIONS.system: lambda u: {"questions": ["Q1", "Q2", "Q3"]},
            faithfulness.VERDICT.system: lambda u: verdict("yes"),
            summarization.ANSWER.system: answer,
        }
    )
    case = {"id": "s", "input": "SRC text", "actual_output": "summary"}
    (row,) = run_cases(summarization, [case], model, JudgeParams(assessment_questions=3))
    m = row.metrics
    assert m["alignment_score"] == 1.0
    assert m["coverage_score"] == pytest.approx(1 / 2)  # of the two "yes" from the source
    assert m["summarization_score"] == pytest.approx(1 / 2)
    assert model.batches == [2, 8]
    assert summarization.coverage([], []) == 1.0


TURNS = [
    {"role": "user", "content": "My name is Alice."},
    {"role": "assistant", "content": "Nice to meet you, Alice!"},
    {"role": "user", "content": "What is my name?"},
    {"role": "assistant", "content": "I don't know your name."},
]


def test_conversation_completeness_formula():
    model = Scripted(
        {
            conversation_completeness.INTENTIONS.system: lambda u: {
                "intentions": ["greet", "name"]
            },
            conversation_completeness.VERDICT.system: lambda u: verdict(
                "yes" if u.endswith("greet\n\nDid the chatbot satisfy the intention?") else "no"
            ),
        }
    )
    (row,) = run_cases(
        conversation_completeness, [{"id": "c", "turns": TURNS}], model, JudgeParams()
    )
    assert row.metrics["conversation_completeness_score"] == pytest.approx(0.5)
    assert conversation_completeness.score([]) == 1.0


def test_role_adherence_per_assistant_turn_and_role_sources():
    model = Scripted(
        {role_adherence.VERDICT.system: lambda u: verdict("no" if "turn 4" in u else "yes")}
    )
    case = {"id": "c", "turns": TURNS, "chatbot_role": "helpful assistant"}
    (row,) = run_cases(role_adherence, [case], model, JudgeParams())
    assert row.metrics["role_adherence_score"] == pytest.approx(0.5)
    assert row.metrics["assistant_turns_count"] == 2
    (no_role,) = run_cases(role_adherence, [{"id": "c", "turns": TURNS}], model, JudgeParams())
    assert "chatbot_role" in no_role.error
    (by_param,) = run_cases(
        role_adherence, [{"id": "c", "turns": TURNS}], model, JudgeParams(chatbot_role="tutor")
    )
    assert by_param.error is None


def test_knowledge_retention_attrition():
    model = Scripted(
        {
            knowledge_retention.FACTS.system: lambda u: {
                "facts": ["The user is Alice."] if "Alice" in u else []
            },
            knowledge_retention.VERDICT.system: lambda u: {
                "attrition": "yes" if "turn 4" in u else "no",
                "reason": "forgot the name",
            },
        }
    )
    (row,) = run_cases(knowledge_retention, [{"id": "c", "turns": TURNS}], model, JudgeParams())
    m = row.metrics
    assert m["knowledge_retention_score"] == pytest.approx(0.5)
    assert m["attrition_turns_count"] == 1 and m["facts_count"] == 1
    assert knowledge_retention.score([]) == 1.0


def test_unparseable_reply_is_retried_then_recorded():
    good = {faithfulness.CLAIMS.system: lambda u: {"claims": []}}
    bad = Scripted(good, constrained=False, raw={faithfulness.CLAIMS.system: "not json"})
    (row,) = run_cases(faithfulness, [CASE], bad, JudgeParams())
    assert row.error is None and row.invalid_outputs == 1  # the retry parsed
    stuck = Scripted(good, constrained=True, raw={faithfulness.CLAIMS.system: "not json"})
    (row,) = run_cases(faithfulness, [CASE], stuck, JudgeParams())
    assert "invalid judge output" in row.error and row.invalid_outputs == 1
    wrong = Scripted({faithfulness.CLAIMS.system: lambda u: {"claims": "x"}})
    (row,) = run_cases(faithfulness, [CASE], wrong, JudgeParams())
    assert "schema" in row.error


def test_every_score_in_unit_interval_and_ids_match_spec():
    assert list(BENCHMARKS) == [
        "faithfulness",
        "relevancy",
        "hallucination",
        "correctness",
        "summarization",
        "conversation-completeness",
        "role-adherence",
        "knowledge-retention",
        "contextual-precision",
        "contextual-recall",
        "contextual-relevancy",
        "g-eval",
    ]
    for v in ([], ["yes"], ["no", "idk"], ["yes", "no", "idk"]):
        for fn in (
            relevancy.score,
            hallucination.score,
            role_adherence.score,
            contextual_recall.score,
            contextual_relevancy.score,
        ):
            assert 0.0 <= fn(v) <= 1.0
        assert 0.0 <= faithfulness.score(v)[0] <= 1.0


def test_params_are_strict_and_identity_has_prompt_hashes():
    params, problems = parse_params({"threshold": "0.7", "chatbot_role": "tutor"})
    assert not problems and params.threshold == 0.7
    _, problems = parse_params({"treshold": "0.7", "threshold": "2"})
    text = " ".join(p.render() for p in problems)
    assert "did you mean 'threshold'" in text and "between 0 and 1" in text
    ident = identity("faithfulness", params)
    assert set(ident["prompts"]) == {"faithfulness.claims@v1", "faithfulness.verdict@v1"}
    assert all(len(h) == 64 for h in ident["prompts"].values())


def test_role_adherence_refused_without_any_role():
    cases = [{"id": "a", "turns": TURNS}]
    (problem,) = refusals(["role-adherence"], cases, JudgeParams(), "f.jsonl")
    assert "chatbot_role" in problem.message and "--param chatbot_role" in problem.message
    assert refusals(["role-adherence"], cases, JudgeParams(chatbot_role="x"), "f.jsonl") == []
    (problem,) = refusals(["faithfulnes"], cases, JudgeParams(), "f.jsonl")
    assert "did you mean 'faithfulness'" in problem.message


def test_reply_cut_at_max_tokens_is_closed_and_counted():
    from lasagna.judges.prompts import list_schema, verdict_schema
    from lasagna.models.structured import close_json, repair_truncated

    assert json.loads(close_json('{"claims": ["a", "b')) == {"claims": ["a", "b"]}
    cut = '{"verdict": "yes", "reason": "the context says so, exac'  # cut by max_model_len
    assert repair_truncated(cut, verdict_schema(("yes", "no")))["verdict"] == "yes"
    assert repair_truncated('{"claims": ["a", "b", ', list_schema("claims", 8)) == {
        "claims": ["a", "b"]
    }
    with pytest.raises(ValueError, match="not repairable"):
        repair_truncated('{"verdict": "ye', verdict_schema(("yes", "no")))

    class Cut(Scripted):
        def generate(self, requests):
            cut = '{"claims": ["Water boils", "It is'
            whole = json.dumps(verdict("yes"))
            return [
                Completion(text=cut, finish_reason="length")
                if r.messages[0]["content"] == faithfulness.CLAIMS.system
                else Completion(text=whole)
                for r in requests
            ]

    (row,) = run_cases(faithfulness, [dict(CASE, retrieval_context=[])], Cut({}), JudgeParams())
    assert row.truncated_outputs == 1 and row.invalid_outputs == 0 and row.error is None
    assert row.metrics["claims_count"] == 2  # "It is" kept as the cut last claim


RAG_CASE = {
    "id": "q",
    "input": "Where was Marie Curie born, and what did she win?",
    "expected_output": "Marie Curie was born in Warsaw. She won two Nobel Prizes.",
    "actual_output": "Warsaw.",
    "retrieval_context": ["P1 Paris facts.", "P2 born in Warsaw.", "P3 Nobel.", "P4 noise."],
}


def test_contextual_precision_weighted_cumulative_precision():
    useful = {"P1": "no", "P2": "yes", "P3": "yes", "P4": "no"}
    model = Scripted(
        {
            contextual_precision.VERDICT.system: lambda u: verdict(
                useful[u.split("Passage: ")[1][:2]]
            )
        }
    )
    (row,) = run_cases(contextual_precision, [RAG_CASE], model, JudgeParams())
    # useful at ranks 2 and 3: (1/2 + 2/3) / 2, DeepEval's formula by hand
    assert row.metrics["contextual_precision_score"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert row.metrics["useful_contexts_count"] == 2 and model.batches == [4]
    assert [v["rank"] for v in row.metrics["verdicts"]] == [1, 2, 3, 4]
    assert contextual_precision.score([True, True, False]) == 1.0  # useful ones first
    assert contextual_precision.score([False, False, True]) == pytest.approx(1 / 3)
    assert contextual_precision.score([True, False, True]) == pytest.approx((1 + 2 / 3) / 2)
    assert contextual_precision.score([False]) == contextual_precision.score([]) == 0.0


def test_contextual_recall_share_of_expected_sentences_in_the_context():
    assert contextual_recall.sentences(RAG_CASE["expected_output"]) == [
        "Marie Curie was born in Warsaw.",
        "She won two Nobel Prizes.",
    ]
    assert contextual_recall.sentences("It is 3.5 kg. Yes!  (Really.)") == [
        "It is 3.5 kg.",
        "Yes!",
        "(Really.)",
    ]
    model = Scripted(
        {
            contextual_recall.VERDICT.system: lambda u: verdict(
                "yes" if "Warsaw" in u.split("Sentence: ")[1] else "no"
            )
        }
    )
    (row,) = run_cases(contextual_recall, [RAG_CASE], model, JudgeParams())
    assert row.metrics["contextual_recall_score"] == pytest.approx(1 / 2)
    assert row.metrics["sentences_count"] == 2
    assert row.metrics["attributable_sentences_count"] == 1
    assert contextual_recall.score([]) == 0.0


def test_contextual_relevancy_share_of_context_statements_relevant_to_the_input():
    statements = {"P1": ["Paris is big."], "P2": ["Curie was born in Warsaw."], "P3": []}
    statements |= {"P4": ["Paris is big.", "Cats purr."]}  # a repeat counts once
    model = Scripted(
        {
            contextual_relevancy.STATEMENTS.system: lambda u: {
                "statements": statements[u.split("Passage:\n")[1][:2]]
            },
            contextual_relevancy.VERDICT.system: lambda u: verdict(
                "yes" if "Warsaw" in u.split("Statement: ")[1] else "no"
            ),
        }
    )
    (row,) = run_cases(contextual_relevancy, [RAG_CASE], model, JudgeParams())
    assert row.metrics["statements_count"] == 3
    assert row.metrics["contextual_relevancy_score"] == pytest.approx(1 / 3)
    assert model.batches == [4, 3]  # one call per passage, then one per statement
    assert contextual_relevancy.score([]) == 0.0


def test_context_judges_are_refused_without_their_columns():
    cases = [{"id": "a", "input": "q", "actual_output": "x", "retrieval_context": ["p"]}]
    assert refusals(["contextual-relevancy"], cases, JudgeParams(), "f.csv") == []
    for benchmark in ("contextual-precision", "contextual-recall"):
        (problem,) = refusals([benchmark], cases, JudgeParams(), "f.csv")
        assert "expected_output" in problem.message
