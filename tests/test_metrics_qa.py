"""SQuAD v2 EM / F1 on real dev questions, against numbers worked out by hand from the official
definitions (normalize, token multiset overlap, max over gold answers, [""] for no answer)."""

from __future__ import annotations

import json

import pytest
from reference_data import SQUAD, missing

from lasagna.metrics.qa import (
    aggregate_qa,
    compute_exact,
    compute_f1,
    get_tokens,
    is_abstention,
    normalize_answer,
    score_answer,
)


@pytest.fixture(scope="module")
def questions() -> dict[str, dict]:
    if not SQUAD.is_file():
        pytest.skip(reason=missing(SQUAD))
    data = json.loads(SQUAD.read_text())["data"]
    return {
        qa["question"]: qa
        for article in data
        for para in article["paragraphs"]
        for qa in para["qas"]
    }


def golds(qa: dict) -> list[str]:
    return [a["text"] for a in qa["answers"]]


# (question, prediction, expected em, expected f1), each worked out by hand.
CASES = [
    # gold: "10th and 11th centuries", "in the 10th and 11th centuries" (x1), ...
    ("When were the Normans in Normandy?", "in the 10th and 11th centuries", 1, 1.0),
    ("When were the Normans in Normandy?", "The 10th and 11th centuries.", 1, 1.0),
    # [10th, century] vs [10th, and, 11th, centuries]: P 1/2, R 1/4 -> 1/3 (best of the golds)
    ("When were the Normans in Normandy?", "the 10th century", 0, 1 / 3),
    # gold: "10th century", "the first half of the 10th century", "10th", "10th"
    (
        "What century did the Normans first gain their separate identity?",
        "First half of the 10th century!",
        1,
        1.0,
    ),
    # [in, 10th, century, ad] vs [10th, century]: P 2/4, R 1 -> 2/3
    (
        "What century did the Normans first gain their separate identity?",
        "in the 10th century AD",
        0,
        2 / 3,
    ),
    # [norway] vs [denmark, iceland, and, norway]: P 1, R 1/4 -> 0.4
    ("From which countries did the Norse originate?", "Norway", 0, 0.4),
    ("From which countries did the Norse originate?", "Sweden", 0, 0.0),
    # "&" is dropped, "and" is not: [denmark, iceland, norway] vs 4 tokens, P 1, R 3/4 -> 6/7
    ("From which countries did the Norse originate?", "denmark iceland & norway", 0, 6 / 7),
    ("From which countries did the Norse originate?", "Denmark; Iceland, and Norway", 1, 1.0),
    ("In what country is Normandy located?", "a France", 1, 1.0),
    ("In what country is Normandy located?", "«France»", 0, 0.0),  # not ASCII punctuation
    ("In what country is Normandy located?", "", 0, 0.0),  # abstaining on an answerable row
]


@pytest.mark.parametrize(("question", "prediction", "em", "f1"), CASES)
def test_answerable_real_questions(questions, question, prediction, em, f1):
    qa = questions[question]
    assert not qa["is_impossible"]
    got = score_answer(prediction, golds(qa), unanswerable=False)
    assert got["em"] == em
    assert got["f1"] == pytest.approx(f1, abs=1e-12)
    assert got["abstained"] == (prediction == "")


def test_unanswerable_real_question(questions):
    qa = questions["What is France a region of?"]
    assert qa["is_impossible"] and qa["answers"] == []
    phrases = ["unanswerable", "no answer"]
    # The plausible (wrong) answer scores 0; an empty or abstaining answer scores 1.
    assert score_answer("Normandy", [], True, phrases) == {"em": 0.0, "f1": 0.0, "abstained": False}
    for said in ("", "  ...  ", "Unanswerable.", "No answer: the text does not say"):
        assert score_answer(said, [], True, phrases) == {"em": 1.0, "f1": 1.0, "abstained": True}
    # Gold answers given with an unanswerable flag are ignored: the gold is [""].
    assert score_answer("Normandy", ["Normandy"], True)["em"] == 0.0


def test_normalization_rules():
    assert normalize_answer("The  U.S.-based, AN apple; a theater") == "usbased apple theater"
    assert normalize_answer("Theatre and anarchy") == "theatre and anarchy"  # whole words only
    assert get_tokens("") == [] and get_tokens(" the ") == []
    assert compute_exact("The Cat", "cat.") == 1
    assert compute_f1("", "") == 1.0 and compute_f1("a", "") == 1.0  # both empty after norm.
    assert compute_f1("cat", "") == 0.0 and compute_f1("", "cat") == 0.0
    # Multiset overlap: "cat cat dog" vs "cat dog dog" share cat x1, dog x1 -> P=R=2/3.
    assert compute_f1("cat cat dog", "cat dog dog") == pytest.approx(2 / 3)


def test_gold_answers_that_normalize_to_nothing_are_dropped():
    # Only "Paris" remains, so "the" (normalizes to "") cannot match an empty gold.
    assert score_answer("Paris", ["The", "Paris"], False)["em"] == 1.0
    assert score_answer("nothing", ["the", "."], False) == {
        "em": 0.0,
        "f1": 0.0,
        "abstained": False,
    }


def test_abstention_rule():
    phrases = ["no answer", "I cannot answer that"]
    assert is_abstention("", phrases) and is_abstention("The.", phrases)
    assert is_abstention("No answer.", phrases)
    assert is_abstention("no answer is given in the passage", phrases)
    assert not is_abstention("nobody", ["no"])  # whole words, not characters
    assert not is_abstention("I cannot answer", phrases)  # shorter than the phrase
    assert not is_abstention("The answer is no answer", phrases)  # must start with it
    assert not is_abstention("Paris", ["", "  the "])  # empty phrases ignored


def test_aggregate_in_fractions():
    rows = [
        {"em": 1.0, "f1": 1.0, "unanswerable": False},
        {"em": 0.0, "f1": 0.4, "unanswerable": False},
        {"em": 1.0, "f1": 1.0, "unanswerable": True},
        {"em": 0.0, "f1": 0.0, "unanswerable": True},
    ]
    got = aggregate_qa(rows)
    assert got == pytest.approx(
        {
            "em": 0.5,
            "f1": 2.4 / 4,
            "has_ans_em": 0.5,
            "has_ans_f1": 0.7,
            "no_ans_em": 0.5,
            "no_ans_f1": 0.5,
            "has_ans_total": 2,
            "no_ans_total": 2,
            "total": 4,
        }
    )
    only_answerable = aggregate_qa(rows[:2])
    assert only_answerable["no_ans_em"] is None and only_answerable["no_ans_total"] == 0
    assert aggregate_qa([])["em"] is None and aggregate_qa([])["total"] == 0
