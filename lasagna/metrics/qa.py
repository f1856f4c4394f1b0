"""SQuAD v2 exact match and token F1, as the official evaluate-v2.0.py defines them.

Normalization: lowercase, drop ASCII punctuation (`string.punctuation`), drop the articles
a/an/the as whole words, collapse whitespace. EM compares normalized strings; F1 is the
harmonic mean of token precision and recall over the multiset of shared tokens. When either
side has no tokens, F1 is 1 if both are empty and 0 otherwise. A prediction's score is the
maximum over the gold answers; gold answers that normalize to nothing are dropped, and a row
without gold answers (an unanswerable SQuAD v2 question) has the gold [""], so only an empty
or abstaining prediction scores 1 there.

All values are fractions in [0, 1] like the retrieval metrics (the official script prints
percentages: multiply by 100 to compare).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text: str) -> str:
    """Lowercase, strip punctuation and articles, collapse whitespace (SQuAD's order)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def get_tokens(text: str) -> list[str]:
    """Normalized whitespace tokens; [] for an empty string."""
    return normalize_answer(text).split() if text else []


def compute_exact(gold: str, prediction: str) -> int:
    """1 when the normalized strings are equal."""
    return int(normalize_answer(gold) == normalize_answer(prediction))


def compute_f1(gold: str, prediction: str) -> float:
    """Token F1; with an empty side, 1 only if both are empty."""
    gold_tokens, pred_tokens = get_tokens(gold), get_tokens(prediction)
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)
    shared = sum((Counter(gold_tokens) & Counter(pred_tokens)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(pred_tokens), shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def is_abstention(prediction: str, phrases: Sequence[str]) -> bool:
    """Whether the prediction declines to answer.

    True when the normalized prediction is empty, or its tokens begin with all the tokens of
    a normalized configured phrase (so "Unanswerable." and "unanswerable from the context"
    match the phrase "unanswerable", but "nobody" does not match the phrase "no"). Phrases
    that normalize to nothing are ignored.
    """
    tokens = get_tokens(prediction)
    if not tokens:
        return True
    for phrase in phrases:
        wanted = get_tokens(phrase)
        if wanted and tokens[: len(wanted)] == wanted:
            return True
    return False


def score_answer(
    prediction: str,
    answers: Sequence[str],
    unanswerable: bool,
    abstain_phrases: Sequence[str] = (),
) -> dict[str, float | bool]:
    """EM and F1 of one prediction against all gold answers: {"em", "f1", "abstained"}.

    An abstaining prediction is scored as the empty answer: 1 on an unanswerable row, 0 on
    an answerable one.
    """
    abstained = is_abstention(prediction, abstain_phrases)
    scored = "" if abstained else prediction
    golds = [] if unanswerable else [a for a in answers if normalize_answer(a)]
    golds = golds or [""]
    return {
        "em": float(max(compute_exact(g, scored) for g in golds)),
        "f1": max(compute_f1(g, scored) for g in golds),
        "abstained": abstained,
    }


def aggregate_qa(rows: Iterable[Mapping[str, object]]) -> dict[str, float | int | None]:
    """Means of em/f1 over all rows and over answerable / unanswerable rows, with counts.

    Each row needs "em", "f1" and "unanswerable". A mean over no rows is None.
    """
    groups: dict[str, list[tuple[float, float]]] = {"all": [], "has_ans": [], "no_ans": []}
    for row in rows:
        pair = (float(row["em"]), float(row["f1"]))
        groups["all"].append(pair)
        groups["no_ans" if row["unanswerable"] else "has_ans"].append(pair)

    def mean(values: list[tuple[float, float]], i: int) -> float | None:
        return sum(v[i] for v in values) / len(values) if values else None

    return {
        "em": mean(groups["all"], 0),
        "f1": mean(groups["all"], 1),
        "has_ans_em": mean(groups["has_ans"], 0),
        "has_ans_f1": mean(groups["has_ans"], 1),
        "no_ans_em": mean(groups["no_ans"], 0),
        "no_ans_f1": mean(groups["no_ans"], 1),
        "has_ans_total": len(groups["has_ans"]),
        "no_ans_total": len(groups["no_ans"]),
        "total": len(groups["all"]),
    }
