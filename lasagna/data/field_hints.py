"""The "did you mean ...?" of an unknown field or column, for every file format.

A name in the wrong case (`Answer`), a typo (`anwser`), or the name another tool gives the
same thing (Ragas' `user_input`, `retrieved_contexts`, `ground_truth`; Hugging Face sets'
`query`, `passages`; chat logs' `messages`) points at lasagna's field. The hint is only a
fix to read: a file is never read under a guessed name.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

# another tool's name -> lasagna's fields it may mean, in order (the first the file kind
# knows is named: `query` is `question` in a question file, `input` in a judge file)
SYNONYMS: dict[str, tuple[str, ...]] = {}
for _names, _fields in (
    (
        ("query", "prompt", "user_input", "question_text", "q", "instruction"),
        ("question", "input"),
    ),
    (("question",), ("input",)),
    (
        (
            "ground_truth",
            "ground_truths",
            "reference",
            "gold",
            "gold_answer",
            "gold_answers",
            "target",
            "label",
            "expected_answer",
            "reference_answer",
            "golden_answer",
        ),
        ("answers", "answer", "expected_output"),
    ),  # fmt: skip
    (("expected_output",), ("answers", "answer")),
    (
        ("response", "output", "prediction", "generated_answer", "model_answer", "completion"),
        ("actual_output",),
    ),
    (("answer", "answers"), ("actual_output",)),
    (
        (
            "passages",
            "documents",
            "docs",
            "retrieved_contexts",
            "paragraph",
            "paragraphs",
            "ctxs",
            "evidence",
            "retrieval_context",
            "chunks",
            "contexts",
        ),
        ("contexts", "retrieval_context"),
    ),  # fmt: skip
    (("reference_contexts",), ("contexts", "context")),
    (
        (
            "doc_ids",
            "relevant_docs",
            "gold_docs",
            "relevant_doc_ids",
            "positive_ids",
            "supporting_docs",
            "corpus_ids",
        ),
        ("expected_docs",),
    ),  # fmt: skip
    (("_id", "qid", "question_id", "query_id", "uid", "uuid"), ("id",)),
    (("messages", "conversation", "dialogue", "dialog", "chat"), ("turns",)),
):
    for _name in _names:
        SYNONYMS[_name] = _fields


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
