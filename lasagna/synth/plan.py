"""The plan: which passages each question is asked from, chosen by the seed, before any LLM.

The same folder, n, mix and seed give the same plan (and so the same prompts). Each type
draws its passages from its own seeded shuffle, without repeats within the type (at
temperature 0 a repeated passage would give the same question twice); when a type asks for
more questions than it has eligible passages, it asks one per passage and the plan says so.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lasagna.data.chunk import (
    Passage,
    chunk_documents,
    multihop_partner,
    unanswerable_neighbours,
)
from lasagna.data.extract import Extraction, extract_folder
from lasagna.errors import Problem, UserError
from lasagna.models.base import ChatRequest, with_schema_instruction
from lasagna.synth.mix import QUESTION_TYPES, allocate, parse_mix
from lasagna.synth.prompts import (
    GENERATION_PROMPTS,
    VERIFY_ANSWER,
    VERIFY_UNANSWERABLE,
    numbered_passages,
)

CHARS_PER_TOKEN = 4  # the token estimate: prompt characters / 4 (English text, BPE tokenizers)
DRAFT_PLACEHOLDER = "x" * 160  # a typical question + answer, for estimating verify prompts


@dataclass(frozen=True)
class PlannedQuestion:
    slot: int  # 1-based; the row id is synth-<slot>
    qtype: str
    sources: tuple[int, ...]  # passage indices: one, or two for multihop
    neighbours: tuple[int, ...] = ()  # unanswerable: the 3 passages sharing the most words

    @property
    def row_id(self) -> str:
        return f"synth-{self.slot:04d}"


@dataclass
class SynthPlan:
    folder: str
    n: int
    mix: dict[str, float]
    seed: int
    extraction: Extraction
    passages: list[Passage]
    questions: list[PlannedQuestion]
    requested: dict[str, int]  # from n and the mix
    notes: list[str] = field(default_factory=list)

    def asked(self, qtype: str) -> int:
        return sum(q.qtype == qtype for q in self.questions)

    def generation_request(self, q: PlannedQuestion) -> ChatRequest:
        texts = [self.passages[i].text for i in q.sources]
        prompt = GENERATION_PROMPTS[q.qtype]
        if q.qtype == "multihop":
            return prompt.request({"passage_a": texts[0], "passage_b": texts[1]})
        return prompt.request({"passage": texts[0]})

    def check_texts(self, q: PlannedQuestion) -> list[str]:
        """The passages the second call reads: the sources, plus neighbours if unanswerable."""
        return [self.passages[i].text for i in q.sources + q.neighbours]

    def verification_request(self, q: PlannedQuestion, question: str, answer: str) -> ChatRequest:
        passages = numbered_passages(self.check_texts(q))
        if q.qtype == "unanswerable":
            return VERIFY_UNANSWERABLE.request({"passages": passages, "question": question})
        return VERIFY_ANSWER.request({"passages": passages, "question": question, "answer": answer})

    def estimate_tokens(self) -> tuple[int, int]:
        """(prompt tokens, output tokens at most) over both calls of every question."""
        prompt_chars = out = 0
        for q in self.questions:
            for request in (
                self.generation_request(q),
                self.verification_request(q, DRAFT_PLACEHOLDER, DRAFT_PLACEHOLDER),
            ):
                prompt_chars += _chars(request)
                out += request.max_tokens or 0
        return prompt_chars // CHARS_PER_TOKEN, out


def _chars(request: ChatRequest) -> int:
    return sum(len(m["content"]) for m in with_schema_instruction(request))


def _eligible(passages: list[Passage], qtype: str) -> list[int]:
    if qtype == "multihop":
        return [i for i in range(len(passages)) if multihop_partner(passages, i) is not None]
    return list(range(len(passages)))


def plan_questions(
    passages: list[Passage], counts: Mapping[str, int], seed: int
) -> tuple[list[PlannedQuestion], list[str]]:
    """Seeded passages for each type's questions; notes say where a type asks fewer."""
    questions: list[PlannedQuestion] = []
    notes: list[str] = []
    for qtype in QUESTION_TYPES:
        want = counts.get(qtype, 0)
        if want == 0:
            continue
        order = _eligible(passages, qtype)
        random.Random(f"{seed}:{qtype}").shuffle(order)
        if want > len(order):
            why = (
                "passages with a word-sharing passage in another document"
                if qtype == "multihop"
                else "passages"
            )
            notes.append(
                f"{qtype}: {want} requested but only {len(order)} {why}; asking {len(order)}"
            )
        for i in order[:want]:
            slot = len(questions) + 1
            if qtype == "multihop":
                partner = multihop_partner(passages, i)
                questions.append(PlannedQuestion(slot, qtype, (i, partner)))  # type: ignore[arg-type]
            elif qtype == "unanswerable":
                near = tuple(unanswerable_neighbours(passages, i))
                questions.append(PlannedQuestion(slot, qtype, (i,), near))
            else:
                questions.append(PlannedQuestion(slot, qtype, (i,)))
    return questions, notes


def build_plan(folder: str | Path, n: int, mix: str | Mapping[str, float], seed: int) -> SynthPlan:
    """Read the folder, chunk it and plan n questions; refused (UserError) before any model."""
    shares = parse_mix(mix)
    if n < 1:
        raise UserError(Problem(f"--n is {n}", field="--n", fix="ask for at least 1 question"))
    root = Path(folder)
    if not root.is_dir():
        what = "not a folder" if root.exists() else "no such folder"
        raise UserError(Problem(what, file=str(root), fix="give the folder holding your documents"))
    extraction = extract_folder(root)
    passages = chunk_documents(extraction.documents)
    if not passages:
        raise UserError(
            Problem(
                f"no readable document ({len(extraction.skipped)} file(s) skipped as "
                f"unsupported, {len(extraction.failed)} unreadable)",
                file=str(root),
                fix="add .md, .txt, .pdf, .docx or .html files with text",
            )
        )
    counts = allocate(n, shares)
    questions, notes = plan_questions(passages, counts, seed)
    if not questions:
        raise UserError(
            Problem(
                "no question can be planned: " + "; ".join(notes),
                file=str(root),
                field="--mix",
                fix="multihop needs two documents that share words; give factoid a share",
            )
        )
    return SynthPlan(str(root), n, shares, seed, extraction, passages, questions, counts, notes)
