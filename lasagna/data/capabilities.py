"""What the data offers, need by need; the tracks (lasagna.tracks) say which needs they have.

| need      | met when                                            | tracks needing it          |
| judged    | some question has a relevant (score > 0) passage   | retrieval                  |
| answers   | every answerable question has a reference answer   | generation                 |
| contexts  | the rows carry passages (or name a corpus) to search | rag generation            |
| turns     | the rows are conversations                          | conversational judges      |

So the table of docs/data.md follows: a BEIR folder supports retrieval, not generation; rows with
contexts and answers support both; rows with answers and no contexts only closed-book
generation. Each unmet need carries its reason and fix, which a track's refusal quotes.
"""

from __future__ import annotations

from lasagna.data.model import CORPUS_OPTION, Capabilities, Format, Missing, Row

NEEDS = ("judged", "answers", "contexts", "turns")
_SHOW_IDS = 5
_CONVERSATIONS = Missing(
    "the rows are conversations (turns), which are for the judge benchmarks",
    "add rows with a question (and answers/contexts) for this track",
)


def capabilities_of(
    fmt: Format, rows: list[Row], qrels: dict[str, dict[str, int]], corpus: bool = False
) -> Capabilities:
    """Decide which needs the rows and judgments meet (a pure function). `corpus`: the
    question file names a real corpus (lasagna.data.corpus_file)."""
    questions = [r for r in rows if r.question is not None]
    judged = any(grade > 0 for r in questions for grade in qrels.get(r.id, {}).values())
    has_contexts = fmt == "beir" or corpus or any(r.contexts for r in rows)
    missing: dict[str, Missing] = {}
    if not any(r.turns for r in rows):
        missing["turns"] = Missing(
            "no row is a conversation", "give rows with turns: [{role, content}, ...]"
        )
    if not has_contexts:
        missing["contexts"] = Missing(
            "the rows have no contexts",
            f"add contexts (the passages of each question), or give a corpus ({CORPUS_OPTION})",
        )

    if fmt == "beir":
        missing["answers"] = Missing(
            "a BEIR folder has queries and judgments but no reference answers",
            "for generation, write the queries with their answers (and expected_docs from "
            "the qrels) to a JSONL or CSV file and search this folder as its corpus "
            f"({CORPUS_OPTION})",
        )
        if not judged:
            missing["judged"] = Missing(
                "no query of this split has a relevant (score > 0) document",
                "add judgments with a score above 0 to the qrels file",
            )
        return Capabilities("corpus", missing)

    if not questions:
        missing["judged"] = missing["answers"] = _CONVERSATIONS
    elif not judged and corpus:
        missing["judged"] = Missing(
            "no answerable question names a corpus document (expected_docs) or has contexts "
            "that match a corpus passage, so there is nothing to score retrieval against",
            "give the questions expected_docs naming the corpus's document ids",
        )
    elif not judged:
        missing["judged"] = Missing(
            "no answerable row has contexts, so there is nothing to retrieve"
            if not has_contexts
            else "every row with contexts is unanswerable, so no passage is relevant",
            "add contexts (the passages that answer each question) to the rows, give a "
            f"corpus ({CORPUS_OPTION}) and name each question's expected_docs, or use a "
            "BEIR folder",
        )
    answerable = [r for r in questions if not r.unanswerable]
    without = [r.id for r in answerable if not r.answers]
    if questions and not answerable:
        missing["answers"] = Missing(
            "every row is unanswerable, so there is no answer to score", "add rows with an answer"
        )
    elif questions and len(without) == len(answerable):
        missing["answers"] = Missing(
            "no row has an answer", "add an 'answer' (or 'answers') to the rows"
        )
    elif without:
        missing["answers"] = Missing(
            f"{len(without)} answerable row(s) have no answer: {_ids(without)}",
            "add their answers, or mark them unanswerable: metadata.unanswerable: true (in a "
            "CSV, a metadata.unanswerable column holding true)",
        )
    provenance = "corpus" if corpus else "pooled_gold" if has_contexts else None
    return Capabilities(provenance, missing)


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:_SHOW_IDS]) + (", ..." if len(ids) > _SHOW_IDS else "")
