"""The "did you mean ...?" of an unknown field or column, for every file format.

A name in the wrong case (`Answer`), a typo (`anwser`), or the name another tool gives the
same thing (Ragas' `user_input`, `retrieved_contexts`, `ground_truth`; Hugging Face sets'
`query`, `passages`; chat logs' `messages`) points at lasagna's field. The hint is only a
fix to read: a file is never read under a guessed name.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

# lasagna's fields a name may mean, in order (the first the file kind knows is named:
# `query` is `question` in a question file, `input` in a judge file) -> the names
_ALIASES: dict[tuple[str, ...], str] = {
    ("question", "input"): "query prompt user_input question_text q instruction",
    ("input",): "question",
    ("answers", "answer", "expected_output"): "ground_truth ground_truths reference gold "
    "gold_answer gold_answers golden_answer target label expected_answer reference_answer",
    ("answers", "answer"): "expected_output",
    ("actual_output",): "response output prediction generated_answer model_answer completion "
    "answer answers",
    ("contexts", "retrieval_context"): "passages documents docs retrieved_contexts paragraph "
    "paragraphs ctxs evidence retrieval_context chunks contexts",
    ("contexts", "context"): "reference_contexts",
    ("expected_docs",): "doc_ids relevant_docs gold_docs relevant_doc_ids positive_ids "
    "supporting_docs corpus_ids",
    ("id",): "_id qid question_id query_id uid uuid",
    ("turns",): "messages conversation dialogue dialog chat",
}
SYNONYMS = {name: fields for fields, names in _ALIASES.items() for name in names.split()}


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """ "did you mean 'answer'? " (with the case note when only the case differs), or ""."""
    lowered = name.strip().lower()
    if lowered in known and lowered != name:
        return f"did you mean '{lowered}'? (names are lower case) "
    for field in SYNONYMS.get(lowered, ()):
        if field in known:
            return f"did you mean '{field}'? "
    close = difflib.get_close_matches(lowered, known, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'? " if close else ""
